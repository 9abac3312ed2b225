/* Render benchmark, in process: for each run, parse the transcript bytes
 * (quire_transcript_parse, borrowing the bytes) and render the request for a
 * provider (quire_render). Prints the median as one JSON line.
 * usage: bench_render FILE PROVIDER [RUNS] */
#include "bench/bench_common.h"
#include "quire.h"

#include <string.h>


int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s FILE PROVIDER [RUNS]\n", argv[0]); return 2; }
    int runs = bench_runs(argc, argv, 3, 50);
    size_t flen = 0;
    char *buf = bench_slurp(argv[1], &flen);
    long sz = (long)flen;
    double *tm = malloc(sizeof(double) * (size_t)runs);
    size_t outlen = 0;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = argv[2];
    for (int r = -3; r < runs; r++) {
        quire_error e;
        quire_transcript *t = NULL;
        quire_render_result res;
        double t0 = bench_now();
        if (quire_transcript_parse(buf, (size_t)sz, &o, &t, &e) != QUIRE_OK ||
            quire_render(t, NULL, &ro, &o, &res, &e) != QUIRE_OK) {
            fprintf(stderr, "%s:%u:%u: %s: %s\n", argv[1], e.line, e.column, e.pointer, e.message);
            return 1;
        }
        double t1 = bench_now();
        outlen = res.request.len;
        quire_render_result_free(&res);
        quire_transcript_free(t);
        if (r >= 0) tm[r] = t1 - t0;
    }
    bench_median(tm, runs);
    double med = tm[runs / 2];
    printf("{\"bench\":\"render\",\"provider\":\"%s\",\"bytes\":%ld,\"body_bytes\":%zu,\"runs\":%d,"
           "\"median_ms\":%.3f,\"min_ms\":%.3f,\"median_us\":%.1f,\"mb_per_s\":%.1f}\n",
           argv[2], sz, outlen, runs, med * 1e3, tm[0] * 1e3, med * 1e6, (double)sz / med / 1e6);
    free(tm);
    free(buf);
    return 0;
}
