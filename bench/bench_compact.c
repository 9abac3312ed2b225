/* Compaction benchmark, in process: parse the transcript and compact it to a
 * token budget (quire_transcript_parse + quire_compact + writing the result).
 * usage: bench_compact FILE BUDGET [RUNS] */
#define _POSIX_C_SOURCE 200809L
#include "quire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s FILE BUDGET [RUNS]\n", argv[0]); return 2; }
    int runs = argc > 3 ? atoi(argv[3]) : 30;
    if (runs < 1 || runs > 100000) runs = 30;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)sz + 1);
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) { fclose(f); return 1; }
    fclose(f);
    double *tm = malloc(sizeof(double) * (size_t)runs);
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.budget_tokens = (uint64_t)strtoull(argv[2], NULL, 10);
    size_t outlen = 0;
    for (int r = -2; r < runs; r++) {
        quire_error e;
        quire_transcript *t = NULL;
        quire_compact_result res;
        quire_bytes out = {0};
        double t0 = now();
        if (quire_transcript_parse(buf, (size_t)sz, &o, &t, &e) != QUIRE_OK ||
            quire_compact(t, NULL, &p, NULL, 0, &o, &res, &e) != QUIRE_OK ||
            quire_transcript_write(res.transcript ? res.transcript : t, 0, &out, &e) != QUIRE_OK) {
            fprintf(stderr, "%s: %s: %s\n", argv[1], e.pointer, e.message);
            return 1;
        }
        double t1 = now();
        outlen = out.len;
        quire_bytes_free(&out);
        quire_compact_result_free(&res);
        quire_transcript_free(t);
        if (r >= 0) tm[r] = t1 - t0;
    }
    qsort(tm, (size_t)runs, sizeof(double), cmpd);
    printf("{\"bench\":\"compact\",\"bytes\":%ld,\"budget\":%s,\"out_bytes\":%zu,\"runs\":%d,\"median_ms\":%.3f,"
           "\"min_ms\":%.3f}\n", sz, argv[2], outlen, runs, tm[runs / 2] * 1e3, tm[0] * 1e3);
    free(tm);
    free(buf);
    return 0;
}
