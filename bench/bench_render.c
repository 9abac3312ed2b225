/* Render benchmark, in process: for each run, parse the transcript bytes
 * (quire_transcript_parse, borrowing the bytes) and render the request for a
 * provider (quire_render). Prints the median as one JSON line.
 * usage: bench_render FILE PROVIDER [RUNS] */
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
    if (argc < 3) { fprintf(stderr, "usage: %s FILE PROVIDER [RUNS]\n", argv[0]); return 2; }
    int runs = argc > 3 ? atoi(argv[3]) : 50;
    if (runs < 1 || runs > 100000) runs = 50;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)sz + 1);
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) { fclose(f); return 1; }
    fclose(f);
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
        double t0 = now();
        if (quire_transcript_parse(buf, (size_t)sz, &o, &t, &e) != QUIRE_OK ||
            quire_render(t, NULL, &ro, &o, &res, &e) != QUIRE_OK) {
            fprintf(stderr, "%s:%u:%u: %s: %s\n", argv[1], e.line, e.column, e.pointer, e.message);
            return 1;
        }
        double t1 = now();
        outlen = res.request.len;
        quire_render_result_free(&res);
        quire_transcript_free(t);
        if (r >= 0) tm[r] = t1 - t0;
    }
    qsort(tm, (size_t)runs, sizeof(double), cmpd);
    double med = tm[runs / 2];
    printf("{\"bench\":\"render\",\"provider\":\"%s\",\"bytes\":%ld,\"body_bytes\":%zu,\"runs\":%d,"
           "\"median_ms\":%.3f,\"min_ms\":%.3f,\"mb_per_s\":%.1f}\n",
           argv[2], sz, outlen, runs, med * 1e3, tm[0] * 1e3, (double)sz / med / 1e6);
    free(tm);
    free(buf);
    return 0;
}
