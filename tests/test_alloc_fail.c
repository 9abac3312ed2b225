/* ARGS: @SRC@ @DATA@ */
/* Allocation failure: for every scenario (a render, a compaction, a replay,
 * ...) a reference run counts the allocator calls C; then for N = 1..C the
 * N-th call fails (and, in a second pass, every call from the N-th on). Each
 * run must return QUIRE_E_NOMEM with a message (or QUIRE_OK with exactly the
 * reference output, when a fallback path absorbed the failure), free every
 * block it allocated (live count back to zero, checked without ASan), hand
 * free_fn/realloc_fn the size that was allocated, and not crash.
 *
 * Scenarios that use an API not linked yet (weak references) or not
 * implemented yet (reference run returns QUIRE_E_UNSUPPORTED) print SKIP.
 * Adding a scenario: one function + one line in k_scenarios. */
#include "quire.h"
#include "failalloc.h"
#include "unit.h"

#include <stdarg.h>
#include <stdbool.h>

/* APIs owned by modules that may not have landed: weak, so this test links
 * (and skips those scenarios) until they do. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls"
#define Q_WEAK(fn) extern __typeof__(fn) fn __attribute__((weak))
Q_WEAK(quire_state_parse);
Q_WEAK(quire_state_write);
Q_WEAK(quire_state_apply_lines);
Q_WEAK(quire_state_ingest_mcp);
Q_WEAK(quire_state_ingest_acp);
Q_WEAK(quire_state_free);
Q_WEAK(quire_compact);
Q_WEAK(quire_compact_result_free);
Q_WEAK(quire_compact_plan);
Q_WEAK(quire_compact_policy_parse);
Q_WEAK(quire_replay_run);
Q_WEAK(quire_replay_open);
Q_WEAK(quire_replay_next);
Q_WEAK(quire_replay_free);
Q_WEAK(quire_import);
Q_WEAK(quire_caps_parse);
Q_WEAK(quire_caps_resolve);
Q_WEAK(quire_caps_free);
Q_WEAK(quire_validate);
Q_WEAK(quire_transcript_parse_dialect);
Q_WEAK(quire_params_from_dialect);
Q_WEAK(quire_state_propagate);
Q_WEAK(quire_state_clear);
Q_WEAK(quire_state_inject);
Q_WEAK(quire_state_set_bridges);
Q_WEAK(quire_render_policy_apply);
#pragma GCC diagnostic pop
#define HAVE(fn) ((fn) != NULL)
#else
#define HAVE(fn) 1
#endif

#define Q_COUNTOF_(a) (sizeof(a) / sizeof((a)[0]))

/* ---- inputs ---- */
static char *g_transcript; /* examples/transcript.json */
static size_t g_transcript_len;
static char *g_claude;     /* a prefix of a Claude Code log from tests/data */
static size_t g_claude_len;
static char *g_codex;      /* a prefix of a Codex rollout from tests/data */
static char *g_foreign[3]; /* the Gemini CLI, Cline and SWE-agent examples (whole files) */
static size_t g_foreign_len[3];
static size_t g_codex_len;

static const char k_state[] =
    "{\"turn\":2,\"seq\":3,\"servers\":{\"fs\":{\"reminders\":{\"emit\":true}}},\"reminders\":["
    "{\"id\":\"r1\",\"body\":\"File a.c changed on disk.\",\"tags\":[\"file_changed\"],\"dedupeKey\":\"a.c\","
    "\"ttlRemaining\":2,\"ttlTurns\":3,\"preserveOnCompact\":true,\"source\":\"bridge\",\"origin\":\"mcp:fs\","
    "\"firedAtTurn\":2},"
    "{\"id\":\"r2\",\"body\":\"Run the tests before finishing.\",\"roleHint\":\"developer\",\"source\":\"host\","
    "\"origin\":\"host\"}]}";

static const char k_lines[] =
    "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":"
    "\"2025-06-18\",\"capabilities\":{\"reminders\":{\"emit\":true}},\"serverInfo\":{\"name\":\"fs\",\"version\":\"1\"}}}}\n"
    "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"notifications/reminder\","
    "\"params\":{\"reminder\":{\"body\":\"b.c changed\",\"dedupeKey\":\"b.c\",\"ttlTurns\":1,\"tags\":[\"x\",\"x\"]}}}}\n"
    "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/inject_reminder\",\"params\":"
    "{\"sessionId\":\"s1\",\"body\":\"The user is away.\",\"roleHint\":\"user_block\",\"_meta\":{\"k\":[1,2]}}}}\n"
    "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"session/inject_reminder\",\"params\":"
    "{\"sessionId\":\"s1\",\"body\":\"\",\"ttlTurns\":0}}}\n"
    "{\"type\":\"reminder\",\"reminder\":{\"body\":\"direct \\u202e one\",\"mode\":\"audit_only\"}}\n"
    "{\"type\":\"clear\",\"selector\":{\"tag\":\"file_changed\"}}\n";

static const char k_session[] =
    "{\"type\":\"session\",\"sessionId\":\"s1\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
    "\"system\":\"You are terse.\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}]}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"List src/\"}}\n"
    "{\"type\":\"reminder\",\"reminder\":{\"body\":\"Be brief.\",\"ttlTurns\":1}}\n"
    "{\"type\":\"render\"}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t1\","
    "\"name\":\"read\",\"input\":{\"path\":\"src\"}}]}}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\","
    "\"content\":\"a.c\\nb.c\"}]}}\n"
    "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/inject_reminder\",\"params\":"
    "{\"sessionId\":\"s1\",\"body\":\"Tests are red.\"}}}\n"
    "{\"type\":\"render\",\"target\":{\"provider\":\"openai\",\"model\":\"gpt-4o\"}}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"Done.\"}}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"Thanks\"}}\n"
    "{\"type\":\"compact\",\"policy\":{\"keepFirstTurns\":0,\"keepLastTurns\":1},\"summary\":\"Listed src.\"}\n"
    "{\"type\":\"render\"}\n";

/* ---- output accumulation (plain malloc: not the allocator under test) ---- */
typedef struct sout {
    char *p;
    size_t len, cap;
} sout;

static void sout_add(sout *s, const char *p, size_t n) {
    if (s->len + n + 2 > s->cap) {
        size_t nc = (s->cap ? s->cap * 2 : 1024) + n;
        char *np = realloc(s->p, nc);
        if (!np) abort();
        s->p = np;
        s->cap = nc;
    }
    if (n) memcpy(s->p + s->len, p, n);
    s->len += n;
    s->p[s->len++] = '\x1e'; /* separator */
    s->p[s->len] = '\0';
}
static void sout_bytes(sout *s, quire_bytes *b) {
    sout_add(s, b->data ? b->data : "", b->len);
    quire_bytes_free(b);
}

typedef quire_status (*scenario_fn)(const quire_options *o, sout *out, quire_error *e);

/* ---- scenarios ---- */
static quire_status sc_json_format(const quire_options *o, sout *out, quire_error *e) {
    for (int pretty = 0; pretty < 2; pretty++) {
        quire_bytes b = {0};
        quire_status st = quire_json_format(g_transcript, g_transcript_len, pretty, o, &b, e);
        if (st) return st;
        sout_bytes(out, &b);
    }
    return quire_json_check(g_transcript, g_transcript_len, o, e);
}

static quire_status sc_transcript(const quire_options *o0, sout *out, quire_error *e) {
    for (int borrow = 0; borrow < 2; borrow++) {
        quire_options o = *o0;
        o.flags = borrow ? QUIRE_PARSE_BORROW : 0;
        quire_transcript *t = NULL;
        quire_status st = quire_transcript_parse(g_transcript, g_transcript_len, &o, &t, e);
        if (st) { CHECK(t == NULL); return st; }
        quire_bytes b = {0};
        st = quire_transcript_write(t, borrow, &b, e);
        quire_transcript_free(t);
        if (st) { CHECK(b.data == NULL); return st; }
        sout_bytes(out, &b);
    }
    return QUIRE_OK;
}

static quire_status parse_state(const quire_options *o, quire_state **s, quire_error *e) {
    return quire_state_parse(k_state, sizeof k_state - 1, o, s, e);
}

static const char *g_params; /* request parameters of the next render_one (NULL = none) */

static quire_status render_one(const quire_options *o, const char *provider, const char *model, bool with_state,
                               sout *out, quire_error *e) {
    quire_transcript *t = NULL;
    quire_state *s = NULL;
    quire_status st = quire_transcript_parse(g_transcript, g_transcript_len, o, &t, e);
    if (st) return st;
    if (with_state && (st = parse_state(o, &s, e))) { quire_transcript_free(t); return st; }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    if (g_params) { ro.params = g_params; ro.params_len = strlen(g_params); }
    quire_render_result r;
    memset(&r, 0, sizeof r);
    st = quire_render(t, s, &ro, o, &r, e);
    quire_transcript_free(t);
    if (s) quire_state_free(s);
    if (st) {
        CHECK(r.request.data == NULL && r.events.data == NULL && r.state == NULL);
        return st;
    }
    sout_bytes(out, &r.request);
    sout_bytes(out, &r.events);
    sout_bytes(out, &r.envelope);
    if (r.state && HAVE(quire_state_write)) {
        quire_bytes b = {0};
        st = quire_state_write(r.state, 0, &b, e);
        if (!st) sout_bytes(out, &b);
    }
    quire_render_result_free(&r);
    return st;
}

static quire_status sc_render_anthropic(const quire_options *o, sout *out, quire_error *e) {
    return render_one(o, "anthropic", "claude-sonnet-4-5", false, out, e);
}

/* Every provider, with reminders: one render per target. */
static const char *const k_targets[][2] = {
    {"anthropic", "claude-sonnet-4-5"}, {"openai", "gpt-4o"}, {"openai", "o3"},
    {"openai_responses", "gpt-5"}, {"gemini", "gemini-2.5-pro"}, {"gemini", "gemma-3-27b-it"},
    {"bedrock", "anthropic.claude-sonnet-4-5"}, {"mistral", "mistral-large-latest"},
    {"ollama", "llama3.1"}, {"deepseek", "deepseek-chat"}, {"openai_compatible", "qwen3"},
};
static size_t g_target; /* which target the current run renders */
static quire_status sc_render_target(const quire_options *o, sout *out, quire_error *e) {
    return render_one(o, k_targets[g_target][0], k_targets[g_target][1], HAVE(quire_state_parse), out, e);
}

/* Request parameters (DESIGN 13) with provider options merged into the body. */
static quire_status sc_render_params(const quire_options *o, sout *out, quire_error *e) {
    g_params = "{\"maxTokens\":1000,\"temperature\":0.5,\"topP\":0.9,\"stream\":true,\"providerOptions\":{"
               "\"anthropic\":{\"service_tier\":\"auto\"},\"openai\":{\"store\":false},\"openai_responses\":{\"store\":false},"
               "\"gemini\":{\"generationConfig\":{\"candidateCount\":1}},\"bedrock\":{\"additionalModelRequestFields\":{\"x\":1}},"
               "\"mistral\":{\"safe_prompt\":true},\"ollama\":{\"keep_alive\":\"5m\"}}}";
    quire_status st = render_one(o, k_targets[g_target][0], k_targets[g_target][1], false, out, e);
    g_params = NULL;
    return st;
}

static quire_status sc_state(const quire_options *o, sout *out, quire_error *e) {
    quire_state *s = NULL, *n = NULL;
    quire_status st = parse_state(o, &s, e);
    if (st) return st;
    quire_bytes ev = {0}, resp = {0};
    st = quire_state_apply_lines(s, k_lines, sizeof k_lines - 1, o, &n, &ev, &resp, e);
    quire_state_free(s);
    if (st) { CHECK(n == NULL && ev.data == NULL && resp.data == NULL); return st; }
    sout_bytes(out, &ev);
    sout_bytes(out, &resp);
    quire_bytes b = {0};
    st = quire_state_write(n, 1, &b, e);
    if (!st) sout_bytes(out, &b);
    quire_state_free(n);
    return st;
}

static quire_status sc_ingest(const quire_options *o, sout *out, quire_error *e) {
    static const char mcp[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/reminder\",\"params\":{\"reminder\":"
                              "{\"body\":\"x changed\",\"dedupeKey\":\"a.c\"},\"_meta\":{\"m\":1}}}";
    static const char acp[] = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/remind\",\"params\":"
                              "{\"sessionId\":\"s9\",\"body\":\"hello\",\"tags\":[\"a\",\"\"]}}";
    quire_state *s = NULL, *n1 = NULL, *n2 = NULL;
    quire_status st = parse_state(o, &s, e);
    if (st) return st;
    quire_bytes ev = {0}, resp = {0};
    st = quire_state_ingest_mcp(s, "fs", mcp, sizeof mcp - 1, o, &n1, &ev, e);
    quire_state_free(s);
    if (st) { CHECK(n1 == NULL); return st; }
    sout_bytes(out, &ev);
    st = quire_state_ingest_acp(n1, acp, sizeof acp - 1, o, &n2, &ev, &resp, e);
    quire_state_free(n1);
    if (st) { CHECK(n2 == NULL); return st; }
    sout_bytes(out, &ev);
    sout_bytes(out, &resp);
    quire_state_free(n2);
    return QUIRE_OK;
}

/* A transcript with long tool outputs, so every compaction stage has work. */
static char *g_long;
static size_t g_long_len;
static void make_long_transcript(void) {
    sout b = {0};
    const char *head = "{\"system\":\"You are a coding agent.\",\"messages\":[";
    sout_add(&b, head, strlen(head));
    b.len--; /* drop the separator */
    for (int turn = 0; turn < 6; turn++) {
        char m[512];
        int n = snprintf(m, sizeof m,
                         "%s{\"role\":\"user\",\"id\":\"u%d\",\"content\":\"Step %d: read file %d and explain it.\"},"
                         "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Reading.\"},"
                         "{\"type\":\"toolCall\",\"id\":\"t%d\",\"name\":\"read\",\"input\":{\"n\":%d}}]},"
                         "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t%d\",\"content\":\"",
                         turn ? "," : "", turn, turn, turn, turn, turn, turn);
        sout_add(&b, m, (size_t)n);
        b.len--;
        for (int k = 0; k < 120; k++) {
            n = snprintf(m, sizeof m, "line %d of file %d: some text to read \\u00e9\\n", k, turn);
            sout_add(&b, m, (size_t)n);
            b.len--;
        }
        sout_add(&b, "\"}]}", 4);
        b.len--;
    }
    sout_add(&b, "]}", 2);
    b.len--;
    b.p[b.len] = '\0';
    g_long = b.p;
    g_long_len = b.len;
}

static quire_status sc_compact(const quire_options *o, sout *out, quire_error *e) {
    static const char pol[] = "{\"budgetTokens\":1500,\"keepLastTurns\":1,\"keepFirstTurns\":1,\"keepLastSteps\":2,"
                              "\"toolOutputExcerptBytes\":64}";
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    quire_status st = quire_compact_policy_parse(pol, sizeof pol - 1, &p, e);
    if (st) return st;
    quire_transcript *t = NULL;
    quire_state *s = NULL;
    if ((st = quire_transcript_parse(g_long, g_long_len, o, &t, e))) return st;
    if (HAVE(quire_state_parse) && (st = parse_state(o, &s, e))) { quire_transcript_free(t); return st; }
    for (int own = 0; own < 2 && !st; own++) {
        for (int with_summary = 0; with_summary < 2 && !st; with_summary++) {
            p.flags = own ? QUIRE_COMPACT_OWN : 0;
            quire_compact_result r;
            memset(&r, 0, sizeof r);
            st = quire_compact(t, s, &p, with_summary ? "They listed src." : NULL, with_summary ? 16 : 0, o, &r, e);
            if (st == QUIRE_E_BUDGET) st = QUIRE_OK; /* a legitimate outcome for this budget */
            if (st) { CHECK(r.transcript == NULL && r.state == NULL && r.events.data == NULL); break; }
            if (r.transcript) {
                quire_bytes b = {0};
                st = quire_transcript_write(r.transcript, 0, &b, e);
                if (!st) sout_bytes(out, &b);
            }
            sout_bytes(out, &r.events);
            sout_bytes(out, &r.report);
            quire_compact_result_free(&r);
        }
    }
    for (uint64_t budget = 400; budget >= 50 && !st; budget /= 8) { /* stages 2 and 3, then an impossible budget */
        p.budget_tokens = budget;
        p.flags = 0;
        quire_compact_result r;
        memset(&r, 0, sizeof r);
        st = quire_compact(t, s, &p, NULL, 0, o, &r, e);
        if (st == QUIRE_E_BUDGET) { st = QUIRE_OK; sout_add(out, e->message, strlen(e->message)); continue; }
        if (st) break;
        sout_bytes(out, &r.report);
        quire_compact_result_free(&r);
    }
    if (!st && HAVE(quire_compact_plan)) {
        quire_bytes b = {0};
        st = quire_compact_plan(t, &p, 0, o, &b, e);
        if (!st) sout_bytes(out, &b);
    }
    quire_transcript_free(t);
    if (s) quire_state_free(s);
    return st;
}

static quire_status sc_replay_run(const quire_options *o, sout *out, quire_error *e) {
    for (int digest = 0; digest < 2; digest++) {
        quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
        ro.flags = digest ? QUIRE_REPLAY_DIGEST : 0;
        quire_bytes b = {0};
        quire_status st = quire_replay_run(k_session, sizeof k_session - 1, &ro, o, &b, e);
        if (st) { CHECK(b.data == NULL); return st; }
        sout_bytes(out, &b);
    }
    return QUIRE_OK;
}

static quire_status sc_replay_steps(const quire_options *o, sout *out, quire_error *e) {
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.provider = "gemini";
    quire_replay *r = NULL;
    quire_status st = quire_replay_open(k_session, sizeof k_session - 1, &ro, o, &r, e);
    if (st) { CHECK(r == NULL); return st; }
    for (;;) {
        quire_replay_step step;
        int done = 0;
        st = quire_replay_next(r, &step, &done, e);
        if (st || done) break;
        sout_add(out, step.output ? step.output : "", step.output_len);
    }
    quire_replay_free(r);
    return st;
}

static quire_status import_one(const quire_options *o, const char *fmt, const char *src, size_t len, sout *out,
                               quire_error *e) {
    if (!src) return QUIRE_E_UNSUPPORTED;
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = fmt;
    io.flags = QUIRE_IMPORT_LIFT_REMINDERS | QUIRE_IMPORT_SKIP_INVALID;
    quire_bytes log = {0}, rep = {0};
    quire_status st = quire_import(src, len, &io, o, &log, &rep, e);
    if (st) { CHECK(log.data == NULL && rep.data == NULL); return st; }
    sout_bytes(out, &log);
    sout_bytes(out, &rep);
    return QUIRE_OK;
}
static quire_status sc_import_claude(const quire_options *o, sout *out, quire_error *e) {
    return import_one(o, "claude-code", g_claude, g_claude_len, out, e);
}
static quire_status sc_import_codex(const quire_options *o, sout *out, quire_error *e) {
    return import_one(o, "codex", g_codex, g_codex_len, out, e);
}

static quire_status sc_import_gemini_cli(const quire_options *o, sout *out, quire_error *e) {
    return import_one(o, "gemini-cli", g_foreign[0], g_foreign_len[0], out, e);
}
static quire_status sc_import_cline(const quire_options *o, sout *out, quire_error *e) {
    return import_one(o, "cline", g_foreign[1], g_foreign_len[1], out, e);
}
static quire_status sc_import_swe_agent(const quire_options *o, sout *out, quire_error *e) {
    return import_one(o, "swe-agent", g_foreign[2], g_foreign_len[2], out, e);
}

static quire_status sc_caps(const quire_options *o, sout *out, quire_error *e) {
    static const char caps[] = "{\"rows\":[{\"provider\":\"openai\",\"model\":\"my-*\",\"developer\":\"none\"}]}";
    quire_caps *c = NULL;
    quire_status st = quire_caps_parse(caps, sizeof caps - 1, o, &c, e);
    if (st) { CHECK(c == NULL); return st; }
    quire_bytes b = {0};
    st = quire_caps_resolve(c, "openai", "my-model", 0, &b, e);
    quire_caps_free(c);
    if (st) return st;
    sout_bytes(out, &b);
    return QUIRE_OK;
}

static quire_status sc_validate(const quire_options *o, sout *out, quire_error *e) {
    static const char body[] = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":10,\"messages\":["
                               "{\"role\":\"assistant\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[]}]}";
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_bytes rep = {0};
    quire_status st = quire_validate(body, sizeof body - 1, &ro, o, &rep, e);
    if (st == QUIRE_E_VALIDATE) st = QUIRE_OK; /* the expected verdict */
    if (st) return st;
    sout_bytes(out, &rep);
    return QUIRE_OK;
}


static quire_status sc_body_params(const quire_options *o, sout *out, quire_error *e) {
    static const char body[] = "{\"model\":\"m\",\"messages\":[],\"max_tokens\":9,\"temperature\":0.5,"
                               "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}],"
                               "\"tool_choice\":{\"type\":\"tool\",\"name\":\"f\"},\"service_tier\":\"auto\"}";
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_bytes p = {0}, ev = {0};
    quire_status st = quire_params_from_dialect("anthropic", body, sizeof body - 1, &ro, o, &p, &ev, e);
    if (st) { CHECK(p.data == NULL && ev.data == NULL); return st; }
    CHECK(p.data != NULL);
    sout_bytes(out, &p);
    quire_bytes_free(&ev);
    /* another dialect, --lossy: the field is dropped with an event */
    ro.provider = "gemini";
    ro.lossy = 1;
    st = quire_params_from_dialect("anthropic", body, sizeof body - 1, &ro, o, &p, &ev, e);
    if (st) { CHECK(p.data == NULL && ev.data == NULL); return st; }
    sout_bytes(out, &p);
    sout_bytes(out, &ev);
    return QUIRE_OK;
}

static quire_status sc_dialect(const quire_options *o, sout *out, quire_error *e) {
    static const char body[] = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"system\",\"content\":\"s\"},"
                               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},"
                               "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                               "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
                               "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"}]}";
    quire_transcript *t = NULL;
    quire_status st = quire_transcript_parse_dialect("openai_chat", body, sizeof body - 1, o, &t, e);
    if (st) { CHECK(t == NULL); return st; }
    quire_bytes b = {0};
    st = quire_transcript_write(t, 0, &b, e);
    quire_transcript_free(t);
    if (st) return st;
    sout_bytes(out, &b);
    return QUIRE_OK;
}

/* inject, clear, propagate; bridged MCP notifications */
static quire_status sc_lifecycle(const quire_options *o, sout *out, quire_error *e) {
    static const char rem[] = "{\"body\":\"Remember the tests.\",\"tags\":[\"t\"],\"dedupeKey\":\"k\","
                              "\"propagate\":\"all\",\"_meta\":{\"a\":[1,{\"b\":null}]}}";
    static const char upd[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\","
                              "\"params\":{\"uri\":\"file:///a.c\"}}";
    quire_state *s = NULL, *a = NULL, *b = NULL, *c = NULL, *child = NULL;
    quire_bytes ev = {0}, id = {0}, w = {0};
    quire_reminder_selector sel;
    memset(&sel, 0, sizeof sel);
    sel.tag = "file_changed";
    quire_status st = parse_state(o, &s, e);
    if (st) return st;
    if ((st = quire_state_set_bridges(s, "fs", QUIRE_BRIDGE_RESOURCES, e))) goto done;
    if ((st = quire_state_inject(s, rem, sizeof rem - 1, o, &a, &ev, &id, e))) goto done;
    sout_bytes(out, &ev);
    sout_bytes(out, &id);
    if ((st = quire_state_ingest_mcp(a, "fs", upd, sizeof upd - 1, o, &b, &ev, e))) goto done;
    sout_bytes(out, &ev);
    if ((st = quire_state_clear(b, &sel, o, &c, &ev, e))) goto done;
    sout_bytes(out, &ev);
    if ((st = quire_state_propagate(c, "agent-2", "child-session", o, &child, e))) goto done;
    if (!(st = quire_state_write(child, 1, &w, e))) sout_bytes(out, &w);
done:
    quire_state_free(s);
    quire_state_free(a);
    quire_state_free(b);
    quire_state_free(c);
    quire_state_free(child);
    quire_bytes_free(&ev);
    quire_bytes_free(&id);
    return st;
}

/* render options that take other paths: policy file, append_only, input-only markers, lossy */
static quire_status sc_render_policies(const quire_options *o, sout *out, quire_error *e) {
    static const char pol[] = "{\"systemSlot\":\"allow\",\"placement\":\"append_only\","
                              "\"cacheBreakpoints\":\"input\",\"lossy\":true}";
    quire_transcript *t = NULL;
    quire_state *s = NULL;
    quire_status st = quire_transcript_parse(g_transcript, g_transcript_len, o, &t, e);
    if (st) return st;
    if ((st = parse_state(o, &s, e))) { quire_transcript_free(t); return st; }
    static const char *const provs[] = {"anthropic", "openai_responses", "bedrock", "mistral"};
    for (size_t i = 0; i < Q_COUNTOF_(provs) && !st; i++) {
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = provs[i];
        ro.pretty = 1;
        if ((st = quire_render_policy_apply(pol, sizeof pol - 1, &ro, e))) break;
        quire_render_result r;
        memset(&r, 0, sizeof r);
        if ((st = quire_render(t, s, &ro, o, &r, e))) break;
        sout_bytes(out, &r.request);
        sout_bytes(out, &r.events);
        quire_render_result_free(&r);
    }
    quire_transcript_free(t);
    quire_state_free(s);
    return st;
}

/* push routing: subscriptions (resources/subscribe, subscriptions/listen),
 * updates routed by them, a reconnect, the pending queue; the state written,
 * parsed back and asked for its subscriptions */
static quire_status sc_push(const quire_options *o, sout *out, quire_error *e) {
    static const char lines[] =
        "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"id\":0,\"result\":{\"capabilities\":{\"reminders\":{\"emit\":true}}}}}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"id\":1,\"method\":\"resources/subscribe\","
        "\"params\":{\"uri\":\"file:///a\"}}}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"id\":\"l1\",\"method\":"
        "\"subscriptions/listen\",\"params\":{\"notifications\":{\"resourceSubscriptions\":[\"file:///b\",\"file:///c\"]}}}}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"file:///b\"}}}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"file:///z\"}}}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"method\":\"notifications/reminder\",\"params\":{\"reminder\":{\"body\":\"p1\"}}}}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"method\":\"notifications/reminder\",\"params\":{\"reminder\":{\"body\":\"p2\"}}}}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"event\":\"reconnected\"}\n"
        "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":\"l1\"}}}\n";
    quire_state *s = NULL, *n = NULL, *p = NULL;
    quire_bytes ev = {0}, w = {0}, subs = {0};
    quire_status st = quire_state_new("s", o, &s, e);
    if (st) return st;
    quire_reminder_limits lim = {0, 0, 0, 0, 2};
    quire_state_set_limits(s, &lim);
    if ((st = quire_state_set_bridges(s, "fs", QUIRE_BRIDGE_RESOURCES, e))) goto done;
    if ((st = quire_state_apply_lines(s, lines, sizeof lines - 1, o, &n, &ev, NULL, e))) goto done;
    sout_bytes(out, &ev);
    if ((st = quire_state_write(n, 0, &w, e))) goto done;
    st = quire_state_parse(w.data, w.len, o, &p, e);
    sout_bytes(out, &w);
    if (st) goto done;
    if ((st = quire_state_subscriptions(p, NULL, &subs, e))) goto done;
    sout_bytes(out, &subs);
done:
    quire_state_free(s);
    quire_state_free(n);
    quire_state_free(p);
    return st;
}

typedef struct scenario {
    const char *name;
    scenario_fn fn;
    bool available;
    size_t targets; /* > 0: run once per k_targets entry */
} scenario;

/* ---- the driver ---- */
static int g_skipped;

static bool run_once(const scenario *sc, failalloc *fa, sout *out, quire_status *st, quire_error *e) {
    quire_allocator a = fa_allocator(fa);
    quire_options o = QUIRE_OPTIONS_INIT;
    o.allocator = &a;
    memset(e, 0, sizeof *e);
    *st = sc->fn(&o, out, e);
    return true;
}

static void check_clean(const char *name, const failalloc *fa, long n) {
    CHECK_MSG(fa->live == 0, "%s: fail at #%ld: %ld blocks (%zu bytes) not freed", name, n, fa->live,
              fa->live_bytes);
    CHECK_MSG(fa->bad_ptr == 0, "%s: fail at #%ld: %ld frees of foreign or freed blocks", name, n, fa->bad_ptr);
    CHECK_MSG(fa->bad_size == 0, "%s: fail at #%ld: %ld frees/reallocs with the wrong size (first: given %zu, "
              "allocated %zu)", name, n, fa->bad_size, fa->first_bad_given, fa->first_bad_actual);
}

static void run_scenario(const scenario *sc, const char *label) {
    failalloc fa;
    quire_error e;
    quire_status st;
    sout ref = {0};
    fa_reset(&fa, 0);
    run_once(sc, &fa, &ref, &st, &e);
    if (st == QUIRE_E_UNSUPPORTED) {
        printf("SKIP %s: not implemented yet (%s)\n", label, e.message);
        g_skipped++;
        free(ref.p);
        return;
    }
    CHECK_MSG(st == QUIRE_OK, "%s: reference run failed: %s: %s %s", label, quire_status_name(st), e.pointer,
              e.message);
    check_clean(label, &fa, 0);
    if (st != QUIRE_OK) { free(ref.p); return; }
    long total = fa.calls;
    long absorbed = 0, bad = 0;
    for (int mode = 0; mode < 2; mode++) {
        for (long n = 1; n <= total; n++) {
            sout got = {0};
            fa_reset(&fa, n);
            fa.fail_all_after = mode;
            run_once(sc, &fa, &got, &st, &e);
            CHECK_MSG(fa.failed, "%s: the allocation count changed between runs (%ld < %ld)", label, fa.calls, n);
            if (st == QUIRE_OK) {
                absorbed++;
                bool same = got.len == ref.len && memcmp(got.p, ref.p, ref.len) == 0;
                if (!same) {
                    size_t k = 0;
                    while (k < got.len && k < ref.len && got.p[k] == ref.p[k]) k++;
                    size_t from = k > 60 ? k - 60 : 0;
                    for (size_t j = from; j < ref.len && j < from + 120; j++) if (ref.p[j] == '\n') ref.p[j] = ' ';
                    for (size_t j = from; j < got.len && j < from + 120; j++) if (got.p[j] == '\n') got.p[j] = ' ';
                    CHECK_MSG(same, "%s: fail at #%ld (%s): returned QUIRE_OK with different output at byte %zu:\n"
                              "    want: %.120s\n    got:  %.120s", label, n, mode ? "and after" : "once", k,
                              ref.p + from, got.p + from);
                }
            } else {
                bool ok = st == QUIRE_E_NOMEM && e.code == QUIRE_E_NOMEM && e.message[0];
                if (!ok && bad++ < 5)
                    CHECK_MSG(ok, "%s: fail at #%ld (%s): got %s (err.code %s): %s %s", label, n,
                              mode ? "and after" : "once", quire_status_name(st), quire_status_name(e.code),
                              e.pointer, e.message);
            }
            check_clean(label, &fa, n);
            free(got.p);
        }
    }
    printf("ok   %s: %ld allocations, each failed once and from there on (%ld absorbed by fallbacks)\n", label,
           total, absorbed);
    free(ref.p);
}

static char *read_all(const char *path, size_t *len, size_t max) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *p = malloc(max + 1);
    size_t n = p ? fread(p, 1, max, f) : 0;
    fclose(f);
    if (!p) return NULL;
    /* whole lines only */
    if (n == max) while (n && p[n - 1] != '\n') n--;
    p[n] = '\0';
    *len = n;
    return p;
}

int main(int argc, char **argv) {
    const char *src = argc > 1 ? argv[1] : ".";
    const char *shared = argc > 2 ? argv[2] : "tests/data";
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/transcript.json", src);
    g_transcript = read_all(path, &g_transcript_len, 1 << 20);
    if (!g_transcript) { fprintf(stderr, "cannot read %s\n", path); return 2; }
    snprintf(path, sizeof path, "%s/corpus/sessions/claude-code/spotter__short.jsonl", shared);
    g_claude = read_all(path, &g_claude_len, 12000);
    snprintf(path, sizeof path, "%s/corpus/sessions/codex/codemie__turn-2.jsonl", shared);
    g_codex = read_all(path, &g_codex_len, 8300);
    static const char *const k_foreign[3] = {"gemini-cli-session.json", "cline-native-tools.json",
                                             "swe-agent-function-calling.traj"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/import_foreign/%s", shared, k_foreign[i]);
        g_foreign[i] = read_all(path, &g_foreign_len[i], 1 << 20);
    }
    make_long_transcript();

    const scenario k_scenarios[] = {
        {"json_format", sc_json_format, true, 0},
        {"transcript_parse_write", sc_transcript, true, 0},
        {"render_anthropic", sc_render_anthropic, true, 0},
        {"render_with_state", sc_render_target, true, Q_COUNTOF_(k_targets)},
        {"render_params", sc_render_params, true, Q_COUNTOF_(k_targets)},
        {"state_apply_lines", sc_state, HAVE(quire_state_parse) && HAVE(quire_state_apply_lines), 0},
        {"ingest_mcp_acp", sc_ingest, HAVE(quire_state_parse) && HAVE(quire_state_ingest_mcp) &&
                                          HAVE(quire_state_ingest_acp), 0},
        {"lifecycle_inject_clear_propagate", sc_lifecycle,
         HAVE(quire_state_parse) && HAVE(quire_state_inject) && HAVE(quire_state_clear) &&
             HAVE(quire_state_propagate) && HAVE(quire_state_set_bridges) && HAVE(quire_state_ingest_mcp), 0},
        {"push_routing", sc_push, HAVE(quire_state_parse) && HAVE(quire_state_apply_lines), 0},
        {"render_policies", sc_render_policies, HAVE(quire_state_parse) && HAVE(quire_render_policy_apply), 0},
        {"compact", sc_compact, HAVE(quire_compact) && HAVE(quire_compact_policy_parse), 0},
        {"replay_run", sc_replay_run, HAVE(quire_replay_run), 0},
        {"replay_steps", sc_replay_steps, HAVE(quire_replay_open), 0},
        {"import_claude_code", sc_import_claude, HAVE(quire_import), 0},
        {"import_codex", sc_import_codex, HAVE(quire_import), 0},
        {"import_gemini_cli", sc_import_gemini_cli, HAVE(quire_import), 0},
        {"import_cline", sc_import_cline, HAVE(quire_import), 0},
        {"import_swe_agent", sc_import_swe_agent, HAVE(quire_import), 0},
        {"caps", sc_caps, HAVE(quire_caps_parse), 0},
        {"validate", sc_validate, HAVE(quire_validate), 0},
        {"parse_dialect", sc_dialect, HAVE(quire_transcript_parse_dialect), 0},
        {"params_from_dialect", sc_body_params, HAVE(quire_params_from_dialect), 0},
    };
    const char *only = getenv("QUIRE_ALLOC_ONLY"); /* run scenarios whose name contains this */
    for (size_t i = 0; i < Q_COUNTOF_(k_scenarios); i++) {
        const scenario *sc = &k_scenarios[i];
        if (only && !strstr(sc->name, only)) continue;
        if (!sc->available) { printf("SKIP %s: API not linked yet\n", sc->name); g_skipped++; continue; }
        if (!sc->targets) { run_scenario(sc, sc->name); continue; }
        for (g_target = 0; g_target < sc->targets; g_target++) {
            char label[128];
            snprintf(label, sizeof label, "%s/%s/%s", sc->name, k_targets[g_target][0], k_targets[g_target][1]);
            run_scenario(sc, label);
        }
    }
    printf("%d skipped\n", g_skipped);
    free(g_transcript);
    free(g_claude);
    free(g_codex);
    for (int i = 0; i < 3; i++) free(g_foreign[i]);
    free(g_long);
    TEST_MAIN_END();
}
