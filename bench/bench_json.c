/* JSON codec benchmark: parse (tape build + full validation) and re-serialise
 * a file many times; prints the median MB/s (MB = 10^6 bytes) as one JSON line.
 * usage: bench_json FILE [RUNS] */
#define _POSIX_C_SOURCE 200809L
#include "core/json.h"

#include <stdio.h>
#include <stdlib.h>
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
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [RUNS]\n", argv[0]); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 50;
    if (runs < 1 || runs > 100000) runs = 50;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)sz + 1);
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) { fclose(f); return 1; }
    fclose(f);
    double *tp = malloc(sizeof(double) * (size_t)runs), *tw = malloc(sizeof(double) * (size_t)runs);
    size_t nodes = 0, outlen = 0;
    for (int r = -3; r < runs; r++) {
        qj_doc d;
        quire_error e;
        double t0 = now();
        if (qj_parse(&d, buf, (size_t)sz, NULL, NULL, &e) != QUIRE_OK) {
            fprintf(stderr, "%s:%u:%u: %s\n", argv[1], e.line, e.column, e.message);
            return 1;
        }
        double t1 = now();
        qbuf b;
        qbuf_init(&b, NULL);
        qw w;
        qw_init(&w, &b, false);
        qw_node(&w, &d, 0);
        qw_dispose(&w);
        double t2 = now();
        nodes = d.count;
        outlen = b.len;
        qbuf_free(&b);
        qj_doc_free(&d);
        if (r >= 0) { tp[r] = t1 - t0; tw[r] = t2 - t1; }
    }
    qsort(tp, (size_t)runs, sizeof(double), cmpd);
    qsort(tw, (size_t)runs, sizeof(double), cmpd);
    double mp = tp[runs / 2], mw = tw[runs / 2];
    printf("{\"bench\":\"json\",\"bytes\":%ld,\"nodes\":%zu,\"runs\":%d,\"parse_ms\":%.3f,\"parse_mb_s\":%.1f,"
           "\"write_ms\":%.3f,\"write_mb_s\":%.1f}\n",
           sz, nodes, runs, mp * 1e3, (double)sz / mp / 1e6, mw * 1e3, (double)outlen / mw / 1e6);
    free(tp); free(tw); free(buf);
    return 0;
}
