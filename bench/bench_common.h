/* Helpers shared by the benchmark programs (not part of the library). */
#ifndef QUIRE_BENCH_COMMON_H
#define QUIRE_BENCH_COMMON_H
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of n timings (sorts them). */
static inline double bench_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof(double), bench_cmpd);
    return t[n / 2];
}

/* Reads a whole file; exits with a message on failure. */
static inline char *bench_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = sz >= 0 ? malloc((size_t)sz + 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) { fprintf(stderr, "%s: read failed\n", path); exit(1); }
    fclose(f);
    buf[sz] = '\0';
    *len = (size_t)sz;
    return buf;
}

/* RUNS argument with a default and sane bounds. */
static inline int bench_runs(int argc, char **argv, int i, int dflt) {
    int r = argc > i ? atoi(argv[i]) : dflt;
    return r < 1 || r > 100000 ? dflt : r;
}
#endif
