/* Live session benchmark: drives a quire_session with a session log's lines
 * (session -> open, message -> append or accept, reminder/mcp/acp/clear ->
 * apply, compact -> compact, render -> render) and times every render.
 * Prints one JSON line:
 *   render_us_at_<N>     per-turn render time (segments, no copy) at turns
 *                        10, 100, 1000: median of turns N-5..N+5 (N-10..N at
 *                        the end of the log), with the body bytes
 *   stateless_us_last    quire_render of the same transcript + state at the
 *                        last turn (what each turn cost before the memo)
 *   contiguous_us_last   render again at the last turn with
 *                        QUIRE_SESSION_CONTIGUOUS, beside memcpy_us_last, a
 *                        memcpy of that body (the one copy it costs)
 *   replay_digest_ms     quire_replay_run with QUIRE_REPLAY_DIGEST of each log
 *                        given (CPU time of the process, the best of three
 *                        runs), and their ratio to the first
 * usage: bench_session LOG [LONGER_LOG [LONGEST_LOG]] */
#include "bench/bench_common.h"
#include "quire.h"

#include <stdbool.h>
#include <string.h>

static void die(const char *what, const quire_error *e) {
    fprintf(stderr, "bench_session: %s: %s (%s)\n", what, e->message, e->pointer);
    exit(1);
}

/* The raw value after "key": in a compact line (objects only: brace matching). */
static const char *obj_after(const char *line, size_t n, const char *key, size_t *len) {
    const char *k = strstr(line, key);
    if (!k || k >= line + n) return NULL;
    const char *p = k + strlen(key);
    if (*p != '{') return NULL;
    int depth = 0;
    bool in_str = false;
    for (const char *q = p; q < line + n; q++) {
        if (in_str) {
            if (*q == '\\') q++;
            else if (*q == '"') in_str = false;
            continue;
        }
        if (*q == '"') in_str = true;
        else if (*q == '{') depth++;
        else if (*q == '}' && --depth == 0) { *len = (size_t)(q - p + 1); return p; }
    }
    return NULL;
}

static double median_range(const double *t, long from, long to) {
    double w[64];
    int n = 0;
    for (long i = from; i <= to && n < 64; i++)
        if (t[i] > 0) w[n++] = t[i];
    return n ? bench_median(w, n) : 0;
}

/* The fastest of three runs: the machine may be shared with other jobs. */
static double replay_digest_ms(const char *path) {
    size_t len;
    char *log = bench_slurp(path, &len);
    double best = 0;
    for (int run = 0; run < 3; run++) {
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.flags = QUIRE_REPLAY_DIGEST;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_bytes out;
    quire_error e;
    /* CPU time of this process: the machine may be shared with other jobs */
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    if (quire_replay_run(log, len, &ro, &o, &out, &e) != QUIRE_OK) die("replay", &e);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    quire_bytes_free(&out);
    if (run == 0 || t < best) best = t;
    }
    free(log);
    return best * 1e3;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s LOG [LONGER_LOG [LONGEST_LOG]]\n", argv[0]); return 2; }
    size_t flen;
    char *buf = bench_slurp(argv[1], &flen);
    enum { MAXT = 100000 };
    double *tt = calloc(MAXT, sizeof(double));
    size_t *tb = calloc(MAXT, sizeof(size_t));
    quire_session *s = NULL;
    quire_error e;
    bool pending = false;
    long turns = 0;
    char *p = buf, *end = buf + flen;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = p;
        p = nl ? nl + 1 : end;
        if (n == 0) continue;
        line[n] = '\0';
        if (strncmp(line, "{\"type\":\"session\"", 17) == 0) {
            if (quire_session_open(line, n, NULL, NULL, &s, &e)) die("open", &e);
        } else if (strncmp(line, "{\"type\":\"message\",\"message\":", 28) == 0) {
            const char *m = line + 28;
            size_t mn = n - 29;
            quire_status st = pending && strncmp(m, "{\"role\":\"assistant\"", 19) == 0
                                  ? quire_session_accept_message(s, m, mn, &e)
                                  : quire_session_append(s, m, mn, &e);
            if (st) die("message", &e);
            pending = false;
        } else if (strncmp(line, "{\"type\":\"render\"", 16) == 0) {
            size_t tn = 0;
            const char *target = obj_after(line, n, "\"target\":", &tn);
            quire_session_turn t;
            double a = bench_now();
            if (quire_session_render(s, target, tn, NULL, 0, 0, &t, &e)) die("render", &e);
            double b = bench_now();
            if (t.turn > 0 && t.turn < MAXT) {
                tt[t.turn] = b - a;
                tb[t.turn] = t.body_len;
                if (t.turn > turns) turns = (long)t.turn;
            }
            pending = true;
        } else if (strncmp(line, "{\"type\":\"compact\"", 17) == 0) {
            size_t pn = 0;
            const char *pol = obj_after(line, n, "\"policy\":", &pn);
            if (quire_session_compact(s, pol, pn, NULL, 0, NULL, NULL, &e)) die("compact", &e);
            pending = false;
        } else {
            if (quire_session_apply(s, line, n, NULL, NULL, &e)) die("apply", &e);
            pending = false;
        }
    }
    if (!s || !turns) { fprintf(stderr, "bench_session: no turns\n"); return 1; }
    printf("{\"bench\":\"session\",\"turns\":%ld", turns);
    const long at[] = {10, 100, 1000};
    for (size_t k = 0; k < 3; k++) {
        long c = at[k];
        if (c > turns) continue;
        long lo = c + 5 <= turns ? c - 5 : c - 10, hi = c + 5 <= turns ? c + 5 : c;
        if (lo < 1) lo = 1;
        printf(",\"render_us_at_%ld\":%.1f,\"body_bytes_at_%ld\":%zu", c, median_range(tt, lo, hi) * 1e6, c, tb[c]);
    }
    /* the last turn again: segments, contiguous, a memcpy of the body, and the
     * stateless render of the same transcript and state */
    enum { REPS = 21 };
    double seg[REPS], con[REPS], cpy[REPS], full[REPS];
    quire_session_turn t;
    size_t body_len = 0, nseg = 0;
    char *copy = NULL;
    quire_bytes tj, sj;
    if (quire_session_transcript(s, 0, &tj, &e) || quire_session_state(s, 0, &sj, &e)) die("values", &e);
    quire_transcript *tr = NULL;
    quire_state *stt = NULL;
    if (quire_transcript_parse(tj.data, tj.len, NULL, &tr, &e) || quire_state_parse(sj.data, sj.len, NULL, &stt, &e))
        die("parse", &e);
    for (int r = 0; r < REPS; r++) {
        double a = bench_now();
        if (quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &e)) die("render", &e);
        double b = bench_now();
        if (quire_session_render(s, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &t, &e)) die("render", &e);
        double c = bench_now();
        body_len = t.body_len;
        nseg = t.nsegments;
        if (!copy) copy = malloc(body_len);
        double d = bench_now();
        memcpy(copy, t.body, body_len);
        double f = bench_now();
        seg[r] = b - a;
        con[r] = c - b;
        cpy[r] = f - d;
        /* the session's render policy is the log's; the bench log uses the defaults */
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = t.provider;
        ro.model = t.model;
        quire_render_result res;
        double g = bench_now();
        if (quire_render(tr, stt, &ro, NULL, &res, &e)) die("stateless render", &e);
        double h = bench_now();
        if (res.request.len != body_len || memcmp(res.request.data, copy, body_len) != 0) {
            fprintf(stderr, "bench_session: the session body differs from the stateless render\n");
            return 1;
        }
        quire_render_result_free(&res);
        full[r] = h - g;
    }
    printf(",\"last_segments\":%zu,\"last_body_bytes\":%zu,\"segments_us_last\":%.1f,\"contiguous_us_last\":%.1f,\"memcpy_us_last\":%.1f,"
           "\"stateless_us_last\":%.1f",
           nseg, body_len, bench_median(seg, REPS) * 1e6, bench_median(con, REPS) * 1e6, bench_median(cpy, REPS) * 1e6,
           bench_median(full, REPS) * 1e6);
    quire_transcript_free(tr);
    quire_state_free(stt);
    quire_bytes_free(&tj);
    quire_bytes_free(&sj);
    free(copy);
    quire_session_free(s);
    double r1 = replay_digest_ms(argv[1]);
    printf(",\"replay_digest_ms\":%.1f", r1);
    if (argc > 2) {
        double r2 = replay_digest_ms(argv[2]);
        printf(",\"replay_digest_ms_longer\":%.1f,\"replay_ratio\":%.2f", r2, r1 > 0 ? r2 / r1 : 0);
    }
    if (argc > 3) {
        double r3 = replay_digest_ms(argv[3]);
        printf(",\"replay_digest_ms_longest\":%.1f,\"replay_ratio_longest\":%.2f", r3, r1 > 0 ? r3 / r1 : 0);
    }
    printf("}\n");
    free(tt);
    free(tb);
    free(buf);
    return 0;
}
