/* quire_server_handle in process: the server's own cost per request, without
 * the pipe, beside the session call it wraps.
 * Usage: bench_serve_handle CONFIG.json MESSAGES.json N
 * Opens session "s" with CONFIG (a session configuration object) and appends
 * MESSAGES (an array of transcript messages) through the server, then handles
 * {"op":"render","session":"s"} and {"op":"estimate","session":"s"} N times
 * each; the same session opened directly is rendered N times with
 * quire_session_render. Prints the medians in microseconds. */
#include "bench_common.h"
#include "quire.h"

#include <string.h>

static char *cat3(const char *a, const char *b, size_t bn, const char *c, size_t *n) {
    size_t an = strlen(a), cn = strlen(c);
    char *p = malloc(an + bn + cn + 1);
    if (!p) exit(1);
    memcpy(p, a, an);
    memcpy(p + an, b, bn);
    memcpy(p + an + bn, c, cn + 1);
    *n = an + bn + cn;
    return p;
}

static void handle_ok(quire_server *sv, const char *line, size_t n) {
    quire_bytes r;
    quire_error e;
    if (quire_server_handle(sv, line, n, &r, &e) || !r.data || !strstr(r.data, "\"ok\":true")) {
        fprintf(stderr, "setup failed: %s\n", r.data ? r.data : e.message);
        exit(1);
    }
    quire_bytes_free(&r);
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: bench_serve_handle CONFIG.json MESSAGES.json N\n"); return 2; }
    size_t cl, ml, n1, n2;
    char *config = bench_slurp(argv[1], &cl), *msgs = bench_slurp(argv[2], &ml);
    int n = atoi(argv[3]);
    if (n < 1) n = 1;
    quire_server *sv = NULL;
    quire_error e;
    if (quire_server_new(NULL, NULL, &sv, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
    char *open = cat3("{\"op\":\"open\",\"session\":\"s\",\"config\":", config, cl, "}", &n1);
    char *append = cat3("{\"op\":\"append\",\"session\":\"s\",\"message\":", msgs, ml, "}", &n2);
    handle_ok(sv, open, n1);
    handle_ok(sv, append, n2);
    quire_session *s = NULL;
    if (quire_session_open(config, cl, NULL, NULL, &s, &e) || quire_session_append(s, msgs, ml, &e)) {
        fprintf(stderr, "session: %s\n", e.message);
        return 1;
    }
    static const char render[] = "{\"id\":1,\"op\":\"render\",\"session\":\"s\"}";
    static const char estimate[] = "{\"id\":2,\"op\":\"estimate\",\"session\":\"s\"}";
    double *tr = malloc((size_t)n * sizeof *tr), *te = malloc((size_t)n * sizeof *te), *ts = malloc((size_t)n * sizeof *ts);
    if (!tr || !te || !ts) return 1;
    size_t reply_len = 0, body_len = 0;
    for (int i = -200; i < n; i++) {
        quire_bytes r;
        double t0 = bench_now();
        quire_server_handle(sv, render, sizeof render - 1, &r, &e);
        double t1 = bench_now();
        reply_len = r.len;
        quire_bytes_free(&r);
        double t2 = bench_now();
        quire_server_handle(sv, estimate, sizeof estimate - 1, &r, &e);
        double t3 = bench_now();
        quire_bytes_free(&r);
        quire_session_turn t;
        double t4 = bench_now();
        quire_session_render(s, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &t, &e);
        double t5 = bench_now();
        body_len = t.body_len;
        if (i >= 0) { tr[i] = t1 - t0; te[i] = t3 - t2; ts[i] = t5 - t4; }
    }
    printf("quire_server_handle in process: render %.1f us (%zu-byte reply), estimate %.2f us; "
           "quire_session_render alone: %.1f us (%zu-byte body) (medians of %d)\n",
           bench_median(tr, n) * 1e6, reply_len, bench_median(te, n) * 1e6, bench_median(ts, n) * 1e6, body_len, n);
    free(tr);
    free(te);
    free(ts);
    free(open);
    free(append);
    free(config);
    free(msgs);
    quire_session_free(s);
    quire_server_free(sv);
    return 0;
}
