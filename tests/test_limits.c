/* Limits (docs/limits.md): every limit of quire_options.limits is enforced by
 * every entry point that reads input, with QUIRE_E_LIMIT and a message that
 * names the limit and its value; one past the limit fails, the limit itself
 * passes; defaults are the documented ones. The reminder limits
 * (quire_reminder_limits: live reminders per origin, body bytes per turn, one
 * body's cap) drop or cut with events instead of failing.
 *
 * Every reader is a row of k_readers: a JSON template with @V@ where any JSON
 * value may sit. Readers whose module has not landed are skipped (weak
 * references), so adding one is one line. */
#include "quire.h"
#include "unit.h"

#include <stdbool.h>
#include <stdlib.h>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls"
#define Q_WEAK(fn) extern __typeof__(fn) fn __attribute__((weak))
Q_WEAK(quire_state_new);
Q_WEAK(quire_state_parse);
Q_WEAK(quire_state_write);
Q_WEAK(quire_state_free);
Q_WEAK(quire_state_inject);
Q_WEAK(quire_state_apply_lines);
Q_WEAK(quire_state_ingest_mcp);
Q_WEAK(quire_state_ingest_acp);
Q_WEAK(quire_state_set_limits);
Q_WEAK(quire_state_limits);
Q_WEAK(quire_state_reminder_count);
Q_WEAK(quire_replay_run);
Q_WEAK(quire_import);
Q_WEAK(quire_caps_parse);
Q_WEAK(quire_caps_free);
Q_WEAK(quire_validate);
Q_WEAK(quire_transcript_parse_dialect);
Q_WEAK(quire_compact_policy_parse);
Q_WEAK(quire_render_policy_apply);
#pragma GCC diagnostic pop
#define HAVE(fn) ((fn) != NULL)
#else
#define HAVE(fn) 1
#endif

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- readers: bytes + options -> status (outputs freed) ---- */
typedef quire_status (*reader_fn)(const char *p, size_t n, const quire_options *o, quire_error *e);

static quire_status rd_json(const char *p, size_t n, const quire_options *o, quire_error *e) {
    return quire_json_check(p, n, o, e);
}
static quire_status rd_json_format(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_bytes b = {0};
    quire_status st = quire_json_format(p, n, 1, o, &b, e);
    quire_bytes_free(&b);
    return st;
}
static quire_status rd_transcript(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_transcript *t = NULL;
    quire_status st = quire_transcript_parse(p, n, o, &t, e);
    quire_transcript_free(t);
    return st;
}
static quire_status rd_state(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_state *s = NULL;
    quire_status st = quire_state_parse(p, n, o, &s, e);
    quire_state_free(s);
    return st;
}
static quire_state *fresh_state(void) {
    static const char k[] = "{\"turn\":0,\"seq\":0,\"servers\":{\"fs\":{\"reminders\":{\"emit\":true}}},\"reminders\":[]}";
    quire_state *s = NULL;
    quire_error e;
    if (quire_state_parse(k, sizeof k - 1, NULL, &s, &e) != QUIRE_OK) return NULL;
    return s;
}
static quire_status rd_inject(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_state *s = fresh_state(), *nx = NULL;
    quire_status st = quire_state_inject(s, p, n, o, &nx, NULL, NULL, e);
    quire_state_free(nx);
    quire_state_free(s);
    return st;
}
static quire_status rd_lines(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_state *s = fresh_state(), *nx = NULL;
    quire_status st = quire_state_apply_lines(s, p, n, o, &nx, NULL, NULL, e);
    quire_state_free(nx);
    quire_state_free(s);
    return st;
}
static quire_status rd_mcp(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_state *s = fresh_state(), *nx = NULL;
    quire_bytes ev = {0};
    quire_status st = quire_state_ingest_mcp(s, "fs", p, n, o, &nx, &ev, e);
    /* a peer's oversized message is dropped with an event, or rejected: both say "limit" */
    if (st == QUIRE_OK && ev.data && strstr(ev.data, "\"reminder_dropped\"") && strstr(ev.data, "limit")) {
        st = QUIRE_E_LIMIT;
        snprintf(e->message, sizeof e->message, "%s", ev.data);
    }
    quire_bytes_free(&ev);
    quire_state_free(nx);
    quire_state_free(s);
    return st;
}
static quire_status rd_acp(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_state *s = fresh_state(), *nx = NULL;
    quire_bytes resp = {0};
    quire_status st = quire_state_ingest_acp(s, p, n, o, &nx, NULL, &resp, e);
    if (st == QUIRE_OK && resp.data && strstr(resp.data, "\"error\"") && strstr(resp.data, "limit")) {
        st = QUIRE_E_LIMIT;
        snprintf(e->message, sizeof e->message, "%s", resp.data);
    }
    quire_bytes_free(&resp);
    quire_state_free(nx);
    quire_state_free(s);
    return st;
}
static quire_status rd_replay(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    quire_bytes b = {0};
    quire_status st = quire_replay_run(p, n, &ro, o, &b, e);
    quire_bytes_free(&b);
    return st;
}
static quire_status rd_import_cc(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = "claude-code";
    quire_bytes b = {0}, r = {0};
    quire_status st = quire_import(p, n, &io, o, &b, &r, e);
    quire_bytes_free(&b);
    quire_bytes_free(&r);
    return st;
}
static quire_status rd_import_codex(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = "codex";
    quire_bytes b = {0}, r = {0};
    quire_status st = quire_import(p, n, &io, o, &b, &r, e);
    quire_bytes_free(&b);
    quire_bytes_free(&r);
    return st;
}
static quire_status rd_import_as(const char *fmt, const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = fmt;
    quire_bytes b = {0}, r = {0};
    quire_status st = quire_import(p, n, &io, o, &b, &r, e);
    quire_bytes_free(&b);
    quire_bytes_free(&r);
    return st;
}
static quire_status rd_import_gemini_cli(const char *p, size_t n, const quire_options *o, quire_error *e) {
    return rd_import_as("gemini-cli", p, n, o, e);
}
static quire_status rd_import_cline(const char *p, size_t n, const quire_options *o, quire_error *e) {
    return rd_import_as("cline", p, n, o, e);
}
static quire_status rd_import_swe_agent(const char *p, size_t n, const quire_options *o, quire_error *e) {
    return rd_import_as("swe-agent", p, n, o, e);
}
static quire_status rd_caps(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_caps *c = NULL;
    quire_status st = quire_caps_parse(p, n, o, &c, e);
    quire_caps_free(c);
    return st;
}
static quire_status rd_validate(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_bytes rep = {0};
    quire_status st = quire_validate(p, n, &ro, o, &rep, e);
    quire_bytes_free(&rep);
    return st == QUIRE_E_VALIDATE ? QUIRE_OK : st; /* a verdict on the request: the input was read */
}
static quire_status rd_dialect(const char *p, size_t n, const quire_options *o, quire_error *e) {
    quire_transcript *t = NULL;
    quire_status st = quire_transcript_parse_dialect("anthropic", p, n, o, &t, e);
    quire_transcript_free(t);
    return st;
}

typedef struct reader {
    const char *name;
    reader_fn fn;
    bool available;
    const char *tmpl;  /* @V@ = any JSON value */
    int strings_only;  /* 1: @V@ must be a string (the under-limit nesting check is skipped) */
} reader;

#define SESSION_HEAD "{\"type\":\"session\",\"sessionId\":\"s\",\"target\":{\"provider\":\"anthropic\"}}\n"

static const char *msg_template(const char *name) {
    if (!strcmp(name, "transcript")) return "{\"messages\":[@M@]}";
    if (!strcmp(name, "replay")) return SESSION_HEAD "@L@{\"type\":\"render\"}\n";
    if (!strcmp(name, "dialect")) return "{\"model\":\"m\",\"max_tokens\":1,\"messages\":[@A@]}";
    return NULL;
}

/* ---- helpers ---- */
typedef struct sb { char *p; size_t n, cap; } sb;
static void sb_add(sb *b, const char *s, size_t n) {
    if (n > ((size_t)1 << 40) || b->n > ((size_t)1 << 40)) abort(); /* (also tells -O3 the sizes are sane) */
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}
static void sb_adds(sb *b, const char *s) { sb_add(b, s, strlen(s)); }

/* template with @V@ replaced by v */
static char *fill(const char *tmpl, const char *v, size_t *len) {
    sb b = {0};
    const char *at = strstr(tmpl, "@V@");
    sb_add(&b, tmpl, (size_t)(at - tmpl));
    sb_adds(&b, v);
    sb_adds(&b, at + 3);
    *len = b.n;
    return b.p;
}
static char *nested(unsigned depth) {
    sb b = {0};
    for (unsigned i = 0; i < depth; i++) sb_adds(&b, "[");
    for (unsigned i = 0; i < depth; i++) sb_adds(&b, "]");
    if (!depth) sb_adds(&b, "0");
    return b.p;
}
static char *string_of(size_t n) {
    char *s = malloc(n + 3);
    s[0] = '"';
    memset(s + 1, 'a', n);
    s[n + 1] = '"';
    s[n + 2] = '\0';
    return s;
}

static bool says_limit(const quire_error *e) { return strstr(e->message, "limit") != NULL; }

/* depth of @V@ inside the template: count of unclosed brackets before it */
static unsigned depth_at(const char *tmpl) {
    const char *at = strstr(tmpl, "@V@");
    unsigned d = 0;
    bool in_str = false;
    for (const char *p = tmpl; p < at; p++) {
        if (in_str) { if (*p == '\\') p++; else if (*p == '"') in_str = false; continue; }
        if (*p == '"') in_str = true;
        else if (*p == '[' || *p == '{') d++;
        else if (*p == ']' || *p == '}') d--;
        else if (*p == '\n') d = 0; /* JSONL: each line is its own document */
    }
    return d;
}

static void check_reader(const reader *r) {
    quire_options o = QUIRE_OPTIONS_INIT;
    quire_error e;
    size_t len;
    char *doc, *v;
    quire_status st;

    /* the template with a plain value is accepted with the default limits */
    doc = fill(r->tmpl, r->strings_only ? "\"zz-*\"" : "0", &len);
    memset(&e, 0, sizeof e);
    st = r->fn(doc, len, &o, &e);
    CHECK_MSG(st == QUIRE_OK, "%s: template rejected: %s: %s", r->name, e.pointer, e.message);

    /* max_input_bytes: len passes, len - 1 fails */
    o.limits.max_input_bytes = len;
    st = r->fn(doc, len, &o, &e);
    CHECK_MSG(st == QUIRE_OK, "%s: input of exactly max_input_bytes rejected: %s", r->name, e.message);
    o.limits.max_input_bytes = len - 1;
    st = r->fn(doc, len, &o, &e);
    CHECK_MSG(st == QUIRE_E_LIMIT && says_limit(&e), "%s: max_input_bytes %zu on %zu bytes: got %s: %s", r->name,
              len - 1, len, quire_status_name(st), e.message);
    o.limits.max_input_bytes = 0;
    free(doc);

    /* max_depth: the value at depth base + k; limit 32 */
    unsigned base = depth_at(r->tmpl);
    o.limits.max_depth = 32;
    v = nested(32 - base);
    doc = fill(r->tmpl, v, &len);
    st = r->fn(doc, len, &o, &e);
    if (!r->strings_only)
        CHECK_MSG(st == QUIRE_OK, "%s: nesting of exactly max_depth 32 rejected: %s: %s", r->name,
                  quire_status_name(st), e.message);
    free(doc);
    free(v);
    v = nested(33 - base);
    doc = fill(r->tmpl, v, &len);
    st = r->fn(doc, len, &o, &e);
    CHECK_MSG(st == QUIRE_E_LIMIT && says_limit(&e) && strstr(e.message, "32"),
              "%s: nesting 33 with max_depth 32: got %s: %s", r->name, quire_status_name(st), e.message);
    free(doc);
    free(v);
    /* 100,000 deep with the default limit: an error, no stack overflow */
    o.limits.max_depth = 0;
    v = nested(100000);
    doc = fill(r->tmpl, v, &len);
    st = r->fn(doc, len, &o, &e);
    CHECK_MSG(st == QUIRE_E_LIMIT && strstr(e.message, "1024"), "%s: 100,000 deep: got %s: %s", r->name,
              quire_status_name(st), e.message);
    free(doc);
    free(v);

    /* max_string_bytes: 100 passes, 101 fails */
    o.limits.max_string_bytes = 100;
    v = string_of(100);
    doc = fill(r->tmpl, v, &len);
    st = r->fn(doc, len, &o, &e);
    CHECK_MSG(st == QUIRE_OK, "%s: string of exactly max_string_bytes rejected: %s", r->name, e.message);
    free(doc);
    free(v);
    v = string_of(101);
    doc = fill(r->tmpl, v, &len);
    st = r->fn(doc, len, &o, &e);
    CHECK_MSG(st == QUIRE_E_LIMIT && says_limit(&e) && strstr(e.message, "100"),
              "%s: string of 101 bytes with max_string_bytes 100: got %s: %s", r->name, quire_status_name(st),
              e.message);
    free(doc);
    free(v);
    o.limits.max_string_bytes = 0;

    /* max_messages: where the format holds messages */
    const char *mt = msg_template(r->name);
    if (mt) {
        for (unsigned n = 4; n <= 5; n++) {
            sb b = {0};
            const char *at = strchr(mt, '@');
            sb_add(&b, mt, (size_t)(at - mt));
            for (unsigned i = 0; i < n; i++) {
                if (at[1] == 'M') sb_adds(&b, i ? ",{\"role\":\"user\",\"content\":\"x\"}" : "{\"role\":\"user\",\"content\":\"x\"}");
                else if (at[1] == 'A')
                    sb_adds(&b, i ? ",{\"role\":\"user\",\"content\":\"x\"}" : "{\"role\":\"user\",\"content\":\"x\"}");
                else sb_adds(&b, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n");
            }
            sb_adds(&b, at + 3);
            o.limits.max_messages = 4;
            st = r->fn(b.p, b.n, &o, &e);
            if (n == 4) CHECK_MSG(st == QUIRE_OK, "%s: 4 messages with max_messages 4: %s", r->name, e.message);
            else
                CHECK_MSG(st == QUIRE_E_LIMIT && says_limit(&e) && strstr(e.message, "4"),
                          "%s: 5 messages with max_messages 4: got %s: %s", r->name, quire_status_name(st), e.message);
            free(b.p);
        }
        o.limits.max_messages = 0;
    }
    printf("ok   %s\n", r->name);
}

/* ---- reminder limits ---- */
static void check_reminder_limits(void) {
    if (!HAVE(quire_state_new) || !HAVE(quire_state_inject) || !HAVE(quire_state_set_limits) ||
        !HAVE(quire_state_limits) || !HAVE(quire_state_reminder_count) || !HAVE(quire_state_write)) {
        printf("SKIP reminder limits: API not linked yet\n");
        return;
    }
    quire_error e;
    quire_state *s = NULL;
    CHECK(quire_state_new("s", NULL, &s, &e) == QUIRE_OK);
    if (!s) return;
    quire_reminder_limits l;
    quire_state_limits(s, &l);
    CHECK_INT(l.max_live_per_origin, 32);
    CHECK_INT(l.turn_budget_bytes, 16384);
    CHECK_INT(l.body_cap_bytes, 8192);

    /* per origin: the third reminder of one origin drops the oldest, with an event */
    quire_reminder_limits small = {2, 0, 64, 0, 0};
    quire_state_set_limits(s, &small);
    char body[512];
    for (int i = 0; i < 3; i++) {
        char rem[700];
        snprintf(rem, sizeof rem, "{\"body\":\"reminder %d\"}", i);
        quire_state *n = NULL;
        quire_bytes ev = {0};
        quire_status st = quire_state_inject(s, rem, strlen(rem), NULL, &n, &ev, NULL, &e);
        CHECK_MSG(st == QUIRE_OK, "inject %d: %s", i, e.message);
        if (st) break;
        if (i == 2)
            CHECK_MSG(ev.data && strstr(ev.data, "\"reminder_dropped\"") && strstr(ev.data, "\"budget\""),
                      "the third reminder of one origin must drop the oldest with reminder_dropped(budget): %s",
                      ev.data ? ev.data : "(no events)");
        quire_bytes_free(&ev);
        quire_state_free(s);
        s = n;
    }
    CHECK_INT(quire_state_reminder_count(s), 2);

    /* body cap: a 300-byte body is cut to at most 64 bytes plus the visible marker */
    memset(body, 'b', 300);
    body[300] = '\0';
    char rem[700];
    snprintf(rem, sizeof rem, "{\"body\":\"%s\",\"id\":\"long\"}", body);
    quire_state *n = NULL;
    quire_status st = quire_state_inject(s, rem, strlen(rem), NULL, &n, NULL, NULL, &e);
    CHECK_MSG(st == QUIRE_OK, "inject long body: %s", e.message);
    if (n) {
        quire_bytes w = {0};
        CHECK(quire_state_write(n, 0, &w, &e) == QUIRE_OK);
        const char *p = w.data ? strstr(w.data, "\"bbbb") : NULL;
        size_t run = 0;
        while (p && p[1 + run] == 'b') run++;
        CHECK_MSG(p && run <= 64 && run >= 32, "a body over body_cap_bytes 64 is cut (kept %zu of 300 bytes)", run);
        quire_bytes_free(&w);
        quire_state_free(n);
    }
    quire_state_free(s);
    printf("ok   reminder limits\n");
}

/* ---- error texts: fixed buffers, cut on UTF-8 character boundaries ---- */
static bool valid_utf8(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        if (!n) return false;
        for (size_t i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80) return false;
        p += n;
    }
    return true;
}

static void check_error_text_cut(void) {
    /* keys of 2-, 3- and 4-byte characters, raw and escaped, longer than the
     * 512-byte pointer: the error's pointer and message stay valid UTF-8 */
    static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    for (size_t c = 0; c < COUNT(chars); c++) {
        for (int esc = 0; esc < 2; esc++) {
            for (size_t shift = 0; shift < 4; shift++) {
                sb b = {0};
                sb_adds(&b, "{\"a\":{\"");
                for (size_t i = 0; i < shift; i++) sb_adds(&b, "x");
                if (esc) sb_adds(&b, "\\n");
                for (int i = 0; i < 300; i++) sb_adds(&b, chars[c]);
                sb_adds(&b, "\":x}}");
                quire_error e;
                quire_status st = quire_json_check(b.p, b.n, NULL, &e);
                CHECK(st == QUIRE_E_JSON);
                CHECK_MSG(valid_utf8(e.pointer), "pointer cut inside a character (char %zu, esc %d, shift %zu)", c,
                          esc, shift);
                CHECK_MSG(valid_utf8(e.message), "message cut inside a character");
                free(b.p);
            }
        }
    }
    printf("ok   error texts cut on character boundaries\n");
}

int main(void) {
    check_error_text_cut();
    /* documented defaults */
    quire_options o = QUIRE_OPTIONS_INIT;
    CHECK_INT(o.limits.max_depth, 0);
    const reader k_readers[] = {
        {"json", rd_json, true, "[@V@]", 0},
        {"json_format", rd_json_format, true, "{\"a\":[@V@]}", 0},
        {"transcript", rd_transcript, true,
         "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
         "\"toolCall\",\"id\":\"t\",\"name\":\"f\",\"input\":@V@}]}]}", 0},
        {"state", rd_state, HAVE(quire_state_parse),
         "{\"turn\":1,\"seq\":0,\"reminders\":[{\"id\":\"r\",\"body\":\"b\",\"_meta\":{\"k\":@V@}}]}", 0},
        {"inject", rd_inject, HAVE(quire_state_inject) && HAVE(quire_state_parse), "{\"body\":\"b\",\"_meta\":{\"k\":@V@}}", 0},
        {"apply_lines", rd_lines, HAVE(quire_state_apply_lines) && HAVE(quire_state_parse),
         "{\"type\":\"reminder\",\"reminder\":{\"body\":\"b\",\"_meta\":{\"k\":@V@}}}\n", 0},
        {"ingest_mcp", rd_mcp, HAVE(quire_state_ingest_mcp) && HAVE(quire_state_parse),
         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/reminder\",\"params\":{\"reminder\":{\"body\":\"b\","
         "\"_meta\":{\"k\":@V@}}}}", 0},
        {"ingest_acp", rd_acp, HAVE(quire_state_ingest_acp) && HAVE(quire_state_parse),
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/inject_reminder\",\"params\":{\"sessionId\":\"s\","
         "\"body\":\"b\",\"_meta\":{\"k\":@V@}}}", 0},
        {"replay", rd_replay, HAVE(quire_replay_run),
         SESSION_HEAD "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"meta\":@V@}}\n"
         "{\"type\":\"render\"}\n", 0},
        {"import_claude_code", rd_import_cc, HAVE(quire_import),
         "{\"type\":\"user\",\"uuid\":\"u\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"x\"},"
         "\"toolUseResult\":@V@}\n", 0},
        {"import_codex", rd_import_codex, HAVE(quire_import),
         "{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"f\","
         "\"arguments\":\"{}\",\"call_id\":\"c\",\"extra\":@V@}}\n", 0},
        {"import_gemini_cli", rd_import_gemini_cli, HAVE(quire_import),
         "{\"sessionId\":\"s\",\"messages\":[{\"type\":\"user\",\"content\":\"x\"},{\"type\":\"gemini\","
         "\"content\":\"y\",\"toolCalls\":[{\"id\":\"t\",\"name\":\"f\",\"args\":{\"k\":@V@}}]}]}", 0},
        {"import_cline", rd_import_cline, HAVE(quire_import),
         "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
         "\"id\":\"t\",\"name\":\"f\",\"input\":{\"k\":@V@}}]}]", 0},
        {"import_swe_agent", rd_import_swe_agent, HAVE(quire_import),
         "{\"history\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":\"y\","
         "\"extra\":@V@}]}", 0},
        {"caps", rd_caps, HAVE(quire_caps_parse), "{\"rows\":[{\"provider\":\"openai\",\"model\":@V@}]}", 1},
        {"validate", rd_validate, HAVE(quire_validate),
         "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1,\"metadata\":{\"k\":@V@},\"messages\":[{\"role\":\"user\","
         "\"content\":\"x\"}]}", 0},
        {"dialect", rd_dialect, HAVE(quire_transcript_parse_dialect),
         "{\"model\":\"m\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\","
         "\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"k\":@V@}}]}]}", 0},
    };
    for (size_t i = 0; i < COUNT(k_readers); i++) {
        if (!k_readers[i].available) { printf("SKIP %s: API not linked yet\n", k_readers[i].name); continue; }
        check_reader(&k_readers[i]);
    }
    check_reminder_limits();
    TEST_MAIN_END();
}
