/* Hostile inputs: time for n and 10n of each input an outsider can
 * grow, so the growth is visible (linear: ~10x; quadratic: ~100x).
 *
 *   bench_hostile [RUNS [CASE]]      (CASE: render, ingest, state, keys)
 *
 * Each row: medians of RUNS runs at n and at 10n, as wall time and as the
 * process's CPU time (user + system), with the growth 10n / n of each. Every
 * run is measured in a fresh child process (see measure()).
 *
 *   render   n live reminders from n distinct ACP sessions, one render
 *   ingest   n MCP servers (initialize + one reminder each), one apply_lines
 *   state    a state file with n servers and n reminders, parse
 *   keys     an ACP inject with n unknown keys (-32602), plus a reminder whose
 *            _meta has n distinct keys (duplicate check)
 *   answer   provider answers with n tool calls: a Gemini body (ids generated)
 *            and a Chat stream (one new index per event, each looked up)
 */
#include "bench_common.h"

#include "quire.h"

#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) abort();
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}
static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) sb_put(b, tmp, (size_t)n);
}

/* CPU time of the process (user + system): on a machine shared with other
 * jobs, wall time of a long run includes the time others held the cores,
 * which a short run often escapes; CPU time does not. */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double last_cpu; /* CPU seconds of the last timed section */
static double t0_wall, t0_cpu;
static void tic(void) { t0_cpu = cpu_now(); t0_wall = bench_now(); }
static double toc(void) {
    double w = bench_now() - t0_wall;
    last_cpu = cpu_now() - t0_cpu;
    return w;
}

static void die(const char *what, const quire_error *e) {
    fprintf(stderr, "bench_hostile: %s: %s\n", what, e->message);
    exit(1);
}

static quire_state *wide_state(uint32_t origins) {
    quire_state *s = NULL;
    quire_error e;
    if (quire_state_new(NULL, NULL, &s, &e)) die("state", &e);
    quire_reminder_limits l = {0, 0, 0, origins, 0};
    quire_state_set_limits(s, &l);
    return s;
}

static double run_render(int n) {
    quire_state *s = wide_state((uint32_t)n + 1);
    sbuf in = {0};
    for (int i = 0; i < n; i++)
        sb_printf(&in,
                  "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"session/inject_reminder\","
                  "\"params\":{\"sessionId\":\"sess-%07d\",\"body\":\"note %07d padding padding padding padding "
                  "padding padding padding padding padding\"}}}\n",
                  i, i);
    quire_state *next = NULL;
    quire_error e;
    if (quire_state_apply_lines(s, in.p, in.n, NULL, &next, NULL, NULL, &e)) die("ingest", &e);
    quire_transcript *t = NULL;
    const char *tj = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    if (quire_transcript_parse(tj, strlen(tj), NULL, &t, &e)) die("transcript", &e);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_render_result r;
    tic();
    if (quire_render(t, next, &ro, NULL, &r, &e)) die("render", &e);
    double dt = toc();
    quire_render_result_free(&r);
    quire_transcript_free(t);
    quire_state_free(next);
    quire_state_free(s);
    free(in.p);
    return dt;
}

static double run_ingest(int n) {
    quire_state *s = wide_state((uint32_t)n + 1);
    sbuf in = {0};
    for (int i = 0; i < n; i++) {
        sb_printf(&in,
                  "{\"type\":\"mcp\",\"server\":\"srv-%07d\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
                  "{\"capabilities\":{\"reminders\":{\"emit\":true}}}}}\n",
                  i);
        sb_printf(&in,
                  "{\"type\":\"mcp\",\"server\":\"srv-%07d\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
                  "\"notifications/reminder\",\"params\":{\"reminder\":{\"body\":\"server %d\",\"dedupeKey\":\"k\"}}}}\n",
                  i, i);
    }
    quire_state *next = NULL;
    quire_error e;
    tic();
    if (quire_state_apply_lines(s, in.p, in.n, NULL, &next, NULL, NULL, &e)) die("ingest", &e);
    double dt = toc();
    quire_state_free(next);
    quire_state_free(s);
    free(in.p);
    return dt;
}

static double run_state(int n) {
    sbuf in = {0};
    sb_printf(&in, "{\"turn\":1,\"seq\":0,\"limits\":{\"maxLivePerOrigin\":32,\"turnBudgetBytes\":16384,"
                   "\"bodyCapBytes\":8192,\"maxOrigins\":%d},\"servers\":{", n + 1);
    for (int i = 0; i < n; i++) sb_printf(&in, "%s\"srv-%07d\":{\"reminders\":{\"emit\":true}}", i ? "," : "", i);
    sb_puts(&in, "},\"reminders\":[");
    for (int i = 0; i < n; i++)
        sb_printf(&in,
                  "%s{\"id\":\"r-%07d\",\"body\":\"reminder body of some length, %d\",\"tags\":[\"t\"],"
                  "\"dedupeKey\":\"k\",\"source\":\"bridge\",\"origin\":\"mcp:srv-%07d\",\"firedAtTurn\":null}",
                  i ? "," : "", i, i, i);
    sb_puts(&in, "]}");
    quire_state *s = NULL;
    quire_error e;
    tic();
    if (quire_state_parse(in.p, in.n, NULL, &s, &e)) die("state", &e);
    double dt = toc();
    quire_state_free(s);
    free(in.p);
    return dt;
}

static double run_keys(int n) {
    sbuf in = {0}, m = {0};
    sb_puts(&in, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/inject_reminder\",\"params\":{\"sessionId\":\"s\","
                 "\"body\":\"x\"");
    for (int i = 0; i < n; i++) sb_printf(&in, ",\"k%07d\":1", i);
    sb_puts(&in, "}}");
    sb_puts(&m, "{\"body\":\"x\",\"_meta\":{");
    for (int i = 0; i < n; i++) sb_printf(&m, "%s\"m%07d\":1", i ? "," : "", i);
    sb_puts(&m, "},\"mode\":\"finish_step\",\"mode\":\"audit_only\"}");
    quire_state *next = NULL;
    quire_bytes resp = {0};
    quire_error e;
    tic();
    if (quire_state_ingest_acp(NULL, in.p, in.n, NULL, &next, NULL, &resp, &e)) die("acp", &e);
    quire_state_free(next);
    if (quire_state_inject(NULL, m.p, m.n, NULL, &next, NULL, NULL, &e) != QUIRE_E_SCHEMA) {
        fprintf(stderr, "bench_hostile: the duplicate key was not found\n");
        exit(1);
    }
    double dt = toc();
    quire_bytes_free(&resp);
    free(in.p);
    free(m.p);
    return dt;
}

static double run_answer(int n) {
    sbuf g = {0}, c = {0};
    sb_puts(&g, "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[");
    for (int i = 0; i < n; i++) sb_printf(&g, "%s{\"functionCall\":{\"name\":\"f\",\"args\":{}}}", i ? "," : "");
    sb_puts(&g, "]},\"finishReason\":\"STOP\"}]}");
    for (int i = 0; i < n; i++)
        sb_printf(&c, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":\"c%d\","
                      "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n", i, i);
    sb_puts(&c, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
    quire_response r;
    quire_error e;
    quire_stream *st = NULL;
    tic();
    if (quire_response_decode("gemini", NULL, g.p, g.n, NULL, NULL, &r, &e)) die("gemini answer", &e);
    quire_response_free(&r);
    if (quire_stream_new("openai", NULL, NULL, NULL, &st, &e) || quire_stream_feed(st, c.p, c.n, NULL, &e) ||
        quire_stream_finish(st, &r, NULL, &e))
        die("chat stream", &e);
    double dt = toc();
    quire_response_free(&r);
    quire_stream_free(st);
    free(g.p);
    free(c.p);
    return dt;
}

/* One measurement in a fresh child process: each size starts from the same
 * empty heap, as one CLI invocation does (in one process the allocator keeps
 * the heap an earlier, larger case grew, and a later small case runs without
 * the page faults its first run in a process pays). */
static void measure(double (*fn)(int), int n, double *wall, double *cpu) {
    int fd[2];
    if (pipe(fd) != 0) { perror("bench_hostile: pipe"); exit(1); }
    pid_t pid = fork();
    if (pid < 0) { perror("bench_hostile: fork"); exit(1); }
    if (pid == 0) {
        close(fd[0]);
        double v[2];
        v[0] = fn(n);
        v[1] = last_cpu;
        ssize_t w = write(fd[1], v, sizeof v);
        _exit(w == (ssize_t)sizeof v ? 0 : 1);
    }
    close(fd[1]);
    double v[2];
    ssize_t r = read(fd[0], v, sizeof v);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (r != (ssize_t)sizeof v || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_hostile: the measuring child failed\n");
        exit(1);
    }
    *wall = v[0];
    *cpu = v[1];
}

int main(int argc, char **argv) {
    int runs = bench_runs(argc, argv, 1, 3);
    static const struct {
        const char *key; /* the CASE argument */
        const char *name;
        double (*fn)(int);
        int n;
    } cases[] = {
        {"render", "render (live reminders, distinct origins)", run_render, 4000},
        {"ingest", "ingest (MCP servers, one reminder each)", run_ingest, 20000},
        {"state", "state load (servers + reminders)", run_state, 20000},
        {"keys", "unknown/duplicate keys (one record)", run_keys, 16000},
        {"answer", "provider answers (n tool calls)", run_answer, 8000},
    };
    printf("%-44s %8s %10s %10s %7s %10s %10s %7s\n", "input", "n", "wall n", "wall 10n", "growth", "cpu n",
           "cpu 10n", "growth");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (argc > 2 && strcmp(cases[c].key, argv[2]) != 0) continue;
        double t[2], u[2];
        for (int k = 0; k < 2; k++) {
            int n = cases[c].n * (k ? 10 : 1);
            double r[16], q[16];
            int rr = runs > 16 ? 16 : runs;
            for (int i = 0; i < rr; i++) measure(cases[c].fn, n, &r[i], &q[i]);
            t[k] = bench_median(r, rr);
            u[k] = bench_median(q, rr);
        }
        printf("%-44s %8d %9.4fs %9.4fs %6.1fx %9.4fs %9.4fs %6.1fx\n", cases[c].name, cases[c].n, t[0], t[1],
               t[1] / t[0], u[0], u[1], u[1] / u[0]);
        fflush(stdout);
    }
    return 0;
}
