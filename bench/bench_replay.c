/* Replay benchmark: replays a session log through the public step API and
 * times every render step. Prints the total and the time of the steps that
 * render turns 100, 500 and 1000 (median of their neighbourhood +-5 turns,
 * with the request bytes, so cost per byte can be compared across N).
 * usage: bench_replay LOG */
#include "bench/bench_common.h"
#include "quire.h"

#include <string.h>


int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s LOG\n", argv[0]); return 2; }
    size_t flen = 0;
    char *buf = bench_slurp(argv[1], &flen);
    long sz = (long)flen;
    enum { MAXT = 100000 };
    double *tt = calloc(MAXT, sizeof(double));
    size_t *tb = calloc(MAXT, sizeof(size_t));
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    quire_replay *rp = NULL;
    quire_error e;
    double t0 = bench_now();
    if (quire_replay_open(buf, (size_t)sz, &ro, &o, &rp, &e) != QUIRE_OK) {
        fprintf(stderr, "%s:%u:%u: %s\n", argv[1], e.line, e.column, e.message);
        return 1;
    }
    long turns = 0;
    size_t total_bytes = 0;
    for (;;) {
        quire_replay_step s;
        int done = 0;
        double a = bench_now();
        if (quire_replay_next(rp, &s, &done, &e) != QUIRE_OK) {
            fprintf(stderr, "%s:%u:%u: %s\n", argv[1], e.line, e.column, e.message);
            return 1;
        }
        double b = bench_now();
        if (done) break;
        if (s.turn > 0 && s.turn < MAXT) {
            tt[s.turn] = b - a;
            tb[s.turn] = s.request_len;
            total_bytes += s.request_len;
            if (s.turn > turns) turns = (long)s.turn;
        }
    }
    double total = bench_now() - t0;
    quire_replay_free(rp);
    printf("{\"bench\":\"replay\",\"log_bytes\":%ld,\"turns\":%ld,\"request_bytes\":%zu,\"total_ms\":%.1f", sz, turns,
           total_bytes, total * 1e3);
    const long at[] = {100, 500, 1000};
    for (size_t k = 0; k < 3; k++) {
        long c = at[k];
        if (c > turns) continue;
        double w[11];
        int n = 0;
        size_t bytes = 0;
        for (long i = c - 5; i <= c + 5; i++)
            if (i >= 1 && i <= turns) { w[n++] = tt[i]; bytes += tb[i]; }
        double med = bench_median(w, n);
        size_t avg = bytes / (size_t)n;
        printf(",\"turn_%ld_us\":%.1f,\"turn_%ld_bytes\":%zu,\"turn_%ld_ns_per_byte\":%.3f", c, med * 1e6, c, avg, c,
               med * 1e9 / (double)(avg ? avg : 1));
    }
    printf("}\n");
    free(tt);
    free(tb);
    free(buf);
    return 0;
}
