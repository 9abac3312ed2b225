/* Token estimator benchmark, in process: the estimate of every block of a
 * parsed transcript (quire_compact_estimate, the parse not timed) and of the
 * file's raw bytes as one text (qc_estimate_tokens).
 * usage: bench_estimate FILE [RUNS] */
#include "bench/bench_common.h"
#include "compact/estimate.h"
#include "quire.h"

#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [RUNS]\n", argv[0]); return 2; }
    int runs = bench_runs(argc, argv, 2, 30);
    size_t flen = 0;
    char *buf = bench_slurp(argv[1], &flen);
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_error e;
    quire_transcript *t = NULL;
    if (quire_transcript_parse(buf, flen, &o, &t, &e) != QUIRE_OK) {
        fprintf(stderr, "%s: %s: %s\n", argv[1], e.pointer, e.message);
        return 1;
    }
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    double *tt = malloc(sizeof(double) * (size_t)runs);
    double *tr = malloc(sizeof(double) * (size_t)runs);
    uint64_t tok_t = 0;
    size_t tok_r = 0;
    for (int r = -1; r < runs; r++) {
        double t0 = bench_now();
        tok_t = quire_compact_estimate(t, &p);
        double t1 = bench_now();
        tok_r = qc_estimate_tokens(buf, flen);
        double t2 = bench_now();
        if (r >= 0) { tt[r] = t1 - t0; tr[r] = t2 - t1; }
    }
    bench_median(tt, runs);
    bench_median(tr, runs);
    printf("{\"bench\":\"estimate\",\"bytes\":%zu,\"runs\":%d,\"transcript_tokens\":%llu,\"transcript_median_ms\":%.3f,"
           "\"transcript_min_ms\":%.3f,\"raw_tokens\":%zu,\"raw_median_ms\":%.3f,\"raw_min_ms\":%.3f,\"raw_mb_s\":%.0f}\n",
           flen, runs, (unsigned long long)tok_t, tt[runs / 2] * 1e3, tt[0] * 1e3, tok_r, tr[runs / 2] * 1e3,
           tr[0] * 1e3, (double)flen / tr[0] / 1e6);
    quire_transcript_free(t);
    free(tt);
    free(tr);
    free(buf);
    return 0;
}
