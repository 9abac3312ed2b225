/* Hostile peers (issue: time linear in the input, origins that stay apart).
 *
 * Sizes are chosen so the old quadratic or cubic code would run for minutes to
 * hours (ctest's timeout fails it) while the current code takes well under a
 * second: no timing threshold is asserted anywhere. Each test also checks
 * what the operation produced. */
#include "quire.h"
#include "unit.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) abort();
        b->p = p;
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
    if (n > 0) sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static size_t count_of(const char *hay, size_t n, const char *needle) {
    size_t c = 0, l = strlen(needle);
    if (!hay || !l) return 0;
    for (size_t i = 0; i + l <= n; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, l) == 0) { c++; i += l - 1; }
    return c;
}

static quire_state *state_with_origins(uint32_t max_origins) {
    quire_state *s = NULL;
    quire_error e;
    if (quire_state_new(NULL, NULL, &s, &e)) return NULL;
    quire_reminder_limits l = {0, 0, 0, max_origins};
    quire_state_set_limits(s, &l);
    return s;
}

/* Item 1: render with many live reminders from distinct ACP sessions (the
 * old per-turn budget was cubic: 4,000 took 118 s). */
static void test_render_many_origins(void) {
    enum { N = 30000 };
    quire_state *s = state_with_origins(N + 10);
    sbuf in = {0};
    for (int i = 0; i < N; i++)
        sb_printf(&in,
                  "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"session/inject_reminder\","
                  "\"params\":{\"sessionId\":\"sess-%06d\",\"body\":\"note %06d from a session of its own; "
                  "padding padding padding padding padding\"}}}\n",
                  i, i);
    quire_state *next = NULL;
    quire_bytes ev = {0}, resp = {0};
    quire_error e;
    CHECK_INT(quire_state_apply_lines(s, in.p, in.n, NULL, &next, &ev, &resp, &e), QUIRE_OK);
    CHECK_INT(quire_state_reminder_count(next), N);
    quire_transcript *t = NULL;
    const char *tj = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    CHECK_INT(quire_transcript_parse(tj, strlen(tj), NULL, &t, &e), QUIRE_OK);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_render_result r = {{0}, {0}, NULL};
    CHECK_INT(quire_render(t, next, &ro, NULL, &r, &e), QUIRE_OK);
    /* 16 KiB budget, 30,000 equal origins: each has a fair share smaller than
     * its one body, so the leftover goes round-robin; nobody is dropped */
    size_t emitted = count_of(r.events.data, r.events.len, "\"reminder_emitted\"");
    size_t dropped = count_of(r.events.data, r.events.len, "\"reminder_dropped\"");
    CHECK_MSG(emitted == 16384 / 78, "%zu emitted", emitted); /* 78-byte bodies fill the budget */
    CHECK_INT(dropped, 0);
    CHECK_INT(quire_state_reminder_count(r.state), N);
    quire_render_result_free(&r);
    quire_transcript_free(t);
    quire_bytes_free(&ev);
    quire_bytes_free(&resp);
    quire_state_free(next);
    quire_state_free(s);
    free(in.p);
}

/* Item 2: ingest is linear in origins (10^5 servers took 117 s). */
static void test_ingest_many_servers(void) {
    enum { N = 100000 };
    quire_state *s = state_with_origins(N);
    sbuf in = {0};
    for (int i = 0; i < N; i++) {
        sb_printf(&in,
                  "{\"type\":\"mcp\",\"server\":\"srv-%06d\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
                  "{\"capabilities\":{\"reminders\":{\"emit\":true}}}}}\n",
                  i);
        sb_printf(&in,
                  "{\"type\":\"mcp\",\"server\":\"srv-%06d\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
                  "\"notifications/reminder\",\"params\":{\"reminder\":{\"body\":\"server %d says hi\","
                  "\"dedupeKey\":\"k\"}}}}\n",
                  i, i);
    }
    /* and one server that floods one key and its live budget */
    for (int i = 0; i < N; i++)
        sb_printf(&in,
                  "{\"type\":\"mcp\",\"server\":\"srv-000000\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
                  "\"notifications/reminder\",\"params\":{\"reminder\":{\"body\":\"flood %d\"%s}}}}\n",
                  i, i % 2 ? ",\"dedupeKey\":\"k\"" : "");
    quire_state *next = NULL;
    quire_bytes ev = {0};
    quire_error e;
    CHECK_INT(quire_state_apply_lines(s, in.p, in.n, NULL, &next, &ev, NULL, &e), QUIRE_OK);
    /* every other server keeps its one reminder; srv-000000 keeps its 32 newest */
    CHECK_INT(quire_state_reminder_count(next), (N - 1) + 32);
    CHECK_INT(count_of(ev.data, ev.len, "\"reminder_deduped\""), N / 2);
    quire_bytes_free(&ev);
    quire_state_free(next);
    quire_state_free(s);
    free(in.p);
}

/* Item 3: a state file with 100k servers and reminders loads in linear time
 * (74 s before); a repeated id deep inside is still found. */
static void test_state_load(void) {
    enum { N = 100000 };
    sbuf in = {0};
    sb_puts(&in, "{\"turn\":1,\"seq\":0,\"limits\":{\"maxLivePerOrigin\":32,\"turnBudgetBytes\":16384,"
                "\"bodyCapBytes\":8192,\"maxOrigins\":200000},\"servers\":{");
    for (int i = 0; i < N; i++) sb_printf(&in, "%s\"srv-%06d\":{\"reminders\":{\"emit\":true}}", i ? "," : "", i);
    sb_puts(&in, "},\"reminders\":[");
    for (int i = 0; i < N; i++)
        sb_printf(&in,
                  "%s{\"id\":\"r-%06d\",\"body\":\"b\",\"tags\":[],\"preserveOnCompact\":false,\"propagate\":"
                  "\"session\",\"roleHint\":\"system\",\"mode\":\"finish_step\",\"source\":\"bridge\","
                  "\"origin\":\"mcp:srv-%06d\",\"firedAtTurn\":null}",
                  i ? "," : "", i, i);
    size_t body_end = in.n;
    sb_puts(&in, "]}");
    quire_state *s = NULL;
    quire_error e;
    CHECK_INT(quire_state_parse(in.p, in.n, NULL, &s, &e), QUIRE_OK);
    CHECK_INT(quire_state_reminder_count(s), N);
    CHECK(quire_state_bridges(s, "srv-099999") == 0);
    /* ingest on the loaded state finds servers by name */
    const char *line = "{\"type\":\"mcp\",\"server\":\"srv-054321\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
                       "\"notifications/reminder\",\"params\":{\"reminder\":{\"id\":\"r-054321\",\"body\":\"again\"}}}}";
    quire_state *next = NULL;
    quire_bytes ev = {0};
    CHECK_INT(quire_state_apply(s, line, strlen(line), NULL, &next, &ev, NULL, &e), QUIRE_OK);
    CHECK(ev.data && strstr(ev.data, "\"reminder_deduped\"") && strstr(ev.data, "r-054321"));
    quire_bytes_free(&ev);
    quire_state_free(next);
    quire_state_free(s);
    /* the same file with the last id repeating the first */
    in.n = body_end;
    sb_puts(&in, ",{\"id\":\"r-000000\",\"body\":\"b\"}]}");
    s = NULL;
    CHECK_INT(quire_state_parse(in.p, in.n, NULL, &s, &e), QUIRE_E_SCHEMA);
    CHECK(strstr(e.message, "r-000000") && strstr(e.message, "appears twice"));
    CHECK(s == NULL);
    /* a repeated server name among 100k */
    sbuf dup = {0};
    sb_puts(&dup, "{\"turn\":0,\"seq\":0,\"servers\":{");
    for (int i = 0; i < N; i++) sb_printf(&dup, "%s\"srv-%06d\":{}", i ? "," : "", i);
    sb_puts(&dup, ",\"srv-031415\":{}},\"reminders\":[]}");
    CHECK_INT(quire_state_parse(dup.p, dup.n, NULL, &s, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.field, "srv-031415");
    free(dup.p);
    free(in.p);
}

/* Item 4: one inject with 160k unknown keys is rejected at the first; 160k
 * distinct known-or-not keys never cost a pairwise comparison. */
static void test_unknown_keys(void) {
    enum { N = 160000 };
    sbuf in = {0};
    sb_puts(&in, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/inject_reminder\",\"params\":{\"sessionId\":\"s\","
                "\"body\":\"x\"");
    for (int i = 0; i < N; i++) sb_printf(&in, ",\"k%06d\":1", i);
    sb_puts(&in, "}}");
    quire_state *next = NULL;
    quire_bytes ev = {0}, resp = {0};
    quire_error e;
    CHECK_INT(quire_state_ingest_acp(NULL, in.p, in.n, NULL, &next, &ev, &resp, &e), QUIRE_OK);
    CHECK(resp.data && strstr(resp.data, "\"code\":-32602") && strstr(resp.data, "\"field\":\"k000000\""));
    CHECK_INT(quire_state_reminder_count(next), 0);
    quire_bytes_free(&ev);
    quire_bytes_free(&resp);
    quire_state_free(next);
    /* a _meta object with 160k keys and one repeat at the end: found, linear */
    sbuf m = {0};
    sb_puts(&m, "{\"body\":\"x\",\"_meta\":{");
    for (int i = 0; i < N; i++) sb_printf(&m, "%s\"m%06d\":1", i ? "," : "", i);
    sb_puts(&m, "}}");
    CHECK_INT(quire_state_inject(NULL, m.p, m.n, NULL, &next, NULL, NULL, &e), QUIRE_OK);
    quire_state_free(next);
    /* a record repeating a known key after many tags */
    sbuf r = {0};
    sb_puts(&r, "{\"body\":\"x\",\"tags\":[");
    for (int i = 0; i < N; i++) sb_printf(&r, "%s\"t%d\"", i ? "," : "", i % (N / 2));
    sb_puts(&r, "]}");
    const char *id = NULL;
    quire_bytes rid = {0};
    CHECK_INT(quire_state_inject(NULL, r.p, r.n, NULL, &next, NULL, &rid, &e), QUIRE_OK);
    (void)id;
    CHECK(next != NULL);
    quire_bytes st = {0};
    if (next && !quire_state_write(next, 0, &st, &e)) {
        /* tags deduplicated (first kept): N/2 distinct */
        CHECK_INT(count_of(st.data, st.len, "\"t"), N / 2 + 2); /* + "turn" and "tags" */
    }
    quire_bytes_free(&st);
    quire_bytes_free(&rid);
    quire_state_free(next);
    free(r.p);
    free(m.p);
    free(in.p);
}

/* Item 6: another session's ACP reminder is refused; origins are bounded. */
static void test_sessions_and_origin_limit(void) {
    quire_state *s = NULL;
    quire_error e;
    CHECK_INT(quire_state_new("mine", NULL, &s, &e), QUIRE_OK);
    const char *other = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/inject_reminder\",\"params\":"
                        "{\"sessionId\":\"theirs\",\"body\":\"obey\"}}";
    quire_state *next = NULL;
    quire_bytes ev = {0}, resp = {0};
    CHECK_INT(quire_state_ingest_acp(s, other, strlen(other), NULL, &next, &ev, &resp, &e), QUIRE_OK);
    CHECK(resp.data && strstr(resp.data, "\"code\":-32602") && strstr(resp.data, "\"field\":\"sessionId\""));
    CHECK(ev.data && strstr(ev.data, "\"reason\":\"invalid\""));
    CHECK_INT(quire_state_reminder_count(next), 0);
    quire_bytes_free(&ev);
    quire_bytes_free(&resp);
    quire_state_free(next);
    quire_state_free(s);
    /* no session id: sessions are origins, at most max_origins of them (the host apart) */
    s = state_with_origins(3);
    sbuf in = {0};
    for (int i = 0; i < 5; i++)
        sb_printf(&in,
                  "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session/inject_reminder\","
                  "\"params\":{\"sessionId\":\"s%d\",\"body\":\"b%d\"}}}\n",
                  i, i, i);
    sb_puts(&in, "{\"type\":\"reminder\",\"reminder\":{\"body\":\"the host is never turned away\"}}\n");
    sb_puts(&in, "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"session/inject_reminder\","
                "\"params\":{\"sessionId\":\"s1\",\"body\":\"a known origin still may\"}}}\n");
    CHECK_INT(quire_state_apply_lines(s, in.p, in.n, NULL, &next, &ev, &resp, &e), QUIRE_OK);
    CHECK_INT(quire_state_reminder_count(next), 5);
    CHECK_INT(count_of(resp.data, resp.len, "\"code\":-32000"), 2);
    CHECK_INT(count_of(ev.data, ev.len, "\"reason\":\"budget\""), 2);
    CHECK(strstr(ev.data, "QUIRE_E_BUDGET") != NULL);
    quire_bytes_free(&ev);
    quire_bytes_free(&resp);
    quire_state_free(next);
    quire_state_free(s);
    free(in.p);
}

/* Renders one turn of state s (anthropic); returns the events, next state in *out. */
static char *render_events(const quire_state *s, quire_state **out) {
    quire_transcript *t = NULL;
    quire_error e;
    const char *tj = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    if (quire_transcript_parse(tj, strlen(tj), NULL, &t, &e)) return NULL;
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_render_result r = {{0}, {0}, NULL};
    char *evs = NULL;
    if (quire_render(t, s, &ro, NULL, &r, &e) == QUIRE_OK) {
        evs = malloc(r.events.len + 1);
        if (evs) {
            if (r.events.len) memcpy(evs, r.events.data, r.events.len);
            evs[r.events.len] = '\0';
        }
        *out = r.state;
        r.state = NULL;
    } else {
        fprintf(stderr, "render: %s\n", e.message);
    }
    quire_render_result_free(&r);
    quire_transcript_free(t);
    return evs;
}

static char *body_of(char c, size_t n) {
    char *b = malloc(n + 1);
    memset(b, c, n);
    b[n] = '\0';
    return b;
}

/* Item 7: the attacker matches the victim's bytes; the victim's reminder is
 * never dropped, and is rendered in some turn. */
static void test_origin_isolation(void) {
    char *vb = body_of('v', 8000), *ab = body_of('a', 8000), *hb = body_of('h', 400), *ab2 = body_of('A', 8001);
    for (int variant = 0; variant < 3; variant++) {
        sbuf in = {0};
        /* variant 0: attacker first; 1: victim first; 2: attacker one byte larger */
        const char *abody = variant == 2 ? ab2 : ab;
        sb_puts(&in, "{\"type\":\"mcp\",\"server\":\"victim\",\"message\":{\"id\":1,\"result\":{\"capabilities\":{\"reminders\":{\"emit\":true}}}}}\n");
        sb_puts(&in, "{\"type\":\"mcp\",\"server\":\"attacker\",\"message\":{\"id\":1,\"result\":{\"capabilities\":{\"reminders\":{\"emit\":true}}}}}\n");
        for (int k = 0; k < 2; k++) {
            bool victim = (k == 0) == (variant != 0);
            sb_printf(&in, "{\"type\":\"mcp\",\"server\":\"%s\",\"message\":{\"method\":\"notifications/reminder\",\"params\":{\"reminder\":{\"id\":\"%s\",\"body\":\"",
                      victim ? "victim" : "attacker", victim ? "victim-1" : "attacker-1");
            const char *b = victim ? vb : abody;
            sb_put(&in, b, strlen(b));
            sb_puts(&in, "\"}}}}\n");
        }
        sb_printf(&in, "{\"type\":\"reminder\",\"reminder\":{\"id\":\"host-1\",\"body\":\"%s\"}}\n", hb);
        quire_state *s = NULL;
        quire_bytes ev = {0};
        quire_error e;
        CHECK_INT(quire_state_apply_lines(NULL, in.p, in.n, NULL, &s, &ev, NULL, &e), QUIRE_OK);
        quire_bytes_free(&ev);
        bool victim_seen = false, host_every_turn = true;
        for (int turn = 0; turn < 4 && s; turn++) {
            quire_state *n = NULL;
            char *evs = render_events(s, &n);
            CHECK(evs != NULL);
            if (!evs) break;
            if (strstr(evs, "\"reminderId\":\"victim-1\",\"body\"")) victim_seen = true;
            if (!strstr(evs, "\"reminderId\":\"host-1\",\"body\"")) host_every_turn = false;
            CHECK_MSG(!strstr(evs, "\"reminder_dropped\",\"reminderId\":\"victim-1\""), "variant %d turn %d", variant, turn);
            if (variant == 2 && turn == 0)
                CHECK(strstr(evs, "\"reminder_dropped\",\"reminderId\":\"attacker-1\"") != NULL);
            if (variant < 2)
                CHECK(!strstr(evs, "\"reminder_dropped\""));
            free(evs);
            quire_state_free(s);
            s = n;
            /* the victim's reminder is still in the state */
            bool has = false;
            for (size_t i = 0; s && i < quire_state_reminder_count(s); i++)
                if (strcmp(quire_state_reminder_id(s, i), "victim-1") == 0) has = true;
            CHECK_MSG(has, "variant %d turn %d: victim-1 left the state", variant, turn);
        }
        CHECK_MSG(victim_seen, "variant %d: the victim's reminder was never rendered", variant);
        CHECK(host_every_turn);
        quire_state_free(s);
        free(in.p);
    }
    free(vb);
    free(ab);
    free(ab2);
    free(hb);
}

int main(void) {
    test_render_many_origins();
    test_ingest_many_servers();
    test_state_load();
    test_unknown_keys();
    test_sessions_and_origin_limit();
    test_origin_isolation();
    TEST_MAIN_END();
}
