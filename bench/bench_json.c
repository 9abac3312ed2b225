/* JSON codec benchmark: parse (tape build + full validation) and re-serialise
 * a file many times; prints the median MB/s (MB = 10^6 bytes) as one JSON line.
 * usage: bench_json FILE [RUNS] */
#include "bench/bench_common.h"
#include "core/json.h"



int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [RUNS]\n", argv[0]); return 2; }
    int runs = bench_runs(argc, argv, 2, 50);
    size_t flen = 0;
    char *buf = bench_slurp(argv[1], &flen);
    long sz = (long)flen;
    double *tp = malloc(sizeof(double) * (size_t)runs), *tw = malloc(sizeof(double) * (size_t)runs);
    size_t nodes = 0, outlen = 0;
    for (int r = -3; r < runs; r++) {
        qj_doc d;
        quire_error e;
        double t0 = bench_now();
        if (qj_parse(&d, buf, (size_t)sz, NULL, NULL, &e) != QUIRE_OK) {
            fprintf(stderr, "%s:%u:%u: %s\n", argv[1], e.line, e.column, e.message);
            return 1;
        }
        double t1 = bench_now();
        qbuf b;
        qbuf_init(&b, NULL);
        qw w;
        qw_init(&w, &b, false);
        qw_node(&w, &d, 0);
        qw_dispose(&w);
        double t2 = bench_now();
        nodes = d.count;
        outlen = b.len;
        qbuf_free(&b);
        qj_doc_free(&d);
        if (r >= 0) { tp[r] = t1 - t0; tw[r] = t2 - t1; }
    }
    double mp = bench_median(tp, runs), mw = bench_median(tw, runs);
    printf("{\"bench\":\"json\",\"bytes\":%ld,\"nodes\":%zu,\"runs\":%d,\"parse_ms\":%.3f,\"parse_mb_s\":%.1f,"
           "\"write_ms\":%.3f,\"write_mb_s\":%.1f}\n",
           sz, nodes, runs, mp * 1e3, (double)sz / mp / 1e6, mw * 1e3, (double)outlen / mw / 1e6);
    free(tp); free(tw); free(buf);
    return 0;
}
