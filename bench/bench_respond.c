/* Decode throughput: a provider's response body (quire_response_decode) or
 * stream (quire_stream_new/feed/finish, fed in CHUNK-byte pieces) into the
 * assistant message, in process.
 *
 *   bench_respond PROVIDER MODEL FILE [CHUNK] [RUNS]
 *
 * CHUNK 0 (the default) decodes FILE as one JSON body; CHUNK > 0 feeds it as a
 * stream in pieces of CHUNK bytes. Prints one JSON line: the median time of
 * RUNS decodes and the throughput over FILE's bytes. */
#include "bench_common.h"
#include "quire.h"

#include <string.h>

static int decode_once(const char *prov, const char *model, const char *buf, size_t len, size_t chunk) {
    quire_response r;
    quire_error e;
    if (!chunk) {
        if (quire_response_decode(prov, model, buf, len, NULL, NULL, &r, &e) != QUIRE_OK) {
            fprintf(stderr, "bench_respond: %s\n", e.message);
            return -1;
        }
        quire_response_free(&r);
        return 0;
    }
    quire_stream *s;
    if (quire_stream_new(prov, model, NULL, NULL, &s, &e) != QUIRE_OK) {
        fprintf(stderr, "bench_respond: %s\n", e.message);
        return -1;
    }
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        if (quire_stream_feed(s, buf + off, n, NULL, &e) != QUIRE_OK) {
            fprintf(stderr, "bench_respond: %s\n", e.message);
            quire_stream_free(s);
            return -1;
        }
    }
    if (quire_stream_finish(s, &r, NULL, &e) != QUIRE_OK) {
        fprintf(stderr, "bench_respond: %s\n", e.message);
        quire_stream_free(s);
        return -1;
    }
    quire_response_free(&r);
    quire_stream_free(s);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_respond PROVIDER MODEL FILE [CHUNK] [RUNS]\n");
        return 2;
    }
    size_t len;
    char *buf = bench_slurp(argv[3], &len);
    size_t chunk = argc > 4 ? (size_t)strtoull(argv[4], NULL, 10) : 0;
    int runs = bench_runs(argc, argv, 5, 200);
    for (int i = 0; i < 5; i++)
        if (decode_once(argv[1], argv[2], buf, len, chunk)) return 1;
    double *t = malloc((size_t)runs * sizeof(double));
    if (!t) return 1;
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now();
        if (decode_once(argv[1], argv[2], buf, len, chunk)) return 1;
        t[i] = bench_now() - t0;
    }
    double med = bench_median(t, runs);
    printf("{\"bytes\":%zu,\"chunk\":%zu,\"runs\":%d,\"median_ms\":%.4f,\"mb_per_s\":%.1f}\n", len, chunk, runs,
           med * 1e3, (double)len / med / 1e6);
    free(t);
    free(buf);
    return 0;
}
