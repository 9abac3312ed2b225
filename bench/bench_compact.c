/* Compaction benchmark, in process: parse the transcript and compact it to a
 * token budget (quire_transcript_parse + quire_compact + writing the result).
 * usage: bench_compact FILE BUDGET [RUNS] [COUNTER]
 * COUNTER: "estimator" (default, quire's token estimator) or "bytes4" (each
 * text counts ceil(bytes / 4) tokens, the counter `quire compact
 * --bytes-per-token 4` uses: the same rough count as a length/4 counter). */
#include "bench/bench_common.h"
#include "quire.h"

#include <string.h>

static size_t count_bytes4(const char *text, size_t len, void *ud) {
    (void)text;
    (void)ud;
    return (len + 3) / 4;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s FILE BUDGET [RUNS]\n", argv[0]); return 2; }
    int runs = bench_runs(argc, argv, 3, 30);
    size_t flen = 0;
    char *buf = bench_slurp(argv[1], &flen);
    long sz = (long)flen;
    double *tm = malloc(sizeof(double) * (size_t)runs);
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.budget_tokens = (uint64_t)strtoull(argv[2], NULL, 10);
    const char *counter = argc > 4 ? argv[4] : "estimator";
    if (!strcmp(counter, "bytes4")) p.count_tokens = count_bytes4;
    else if (strcmp(counter, "estimator")) { fprintf(stderr, "unknown counter %s\n", counter); return 2; }
    size_t outlen = 0;
    for (int r = -2; r < runs; r++) {
        quire_error e;
        quire_transcript *t = NULL;
        quire_compact_result res;
        quire_bytes out = {0};
        double t0 = bench_now();
        if (quire_transcript_parse(buf, (size_t)sz, &o, &t, &e) != QUIRE_OK ||
            quire_compact(t, NULL, &p, NULL, 0, &o, &res, &e) != QUIRE_OK ||
            quire_transcript_write(res.transcript ? res.transcript : t, 0, &out, &e) != QUIRE_OK) {
            fprintf(stderr, "%s: %s: %s\n", argv[1], e.pointer, e.message);
            return 1;
        }
        double t1 = bench_now();
        outlen = out.len;
        quire_bytes_free(&out);
        quire_compact_result_free(&res);
        quire_transcript_free(t);
        if (r >= 0) tm[r] = t1 - t0;
    }
    bench_median(tm, runs);
    printf("{\"bench\":\"compact\",\"bytes\":%ld,\"budget\":%s,\"counter\":\"%s\",\"out_bytes\":%zu,\"runs\":%d,"
           "\"median_ms\":%.3f,\"min_ms\":%.3f}\n", sz, argv[2], counter, outlen, runs, tm[runs / 2] * 1e3, tm[0] * 1e3);
    free(tm);
    free(buf);
    return 0;
}
