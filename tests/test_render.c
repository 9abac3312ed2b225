#define _POSIX_C_SOURCE 200809L
/* Rendering: slots, placement, cache breakpoints, per-dialect structure,
 * cache stability across turns, losslessness and determinism. */
#include "reminders/state.h"
#include "providers/caps.h"
#include "quire.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>

/* ---- helpers ---- */

static quire_transcript *tr(const char *json) {
    quire_transcript *t = NULL;
    quire_error e;
    if (quire_transcript_parse(json, strlen(json), NULL, &t, &e)) {
        fprintf(stderr, "transcript: %s %s\n", e.pointer, e.message);
        return NULL;
    }
    return t;
}

typedef struct rem_spec {
    const char *body;
    qrole_hint hint;
} rem_spec;

static quire_state *state_with(const rem_spec *r, size_t n) {
    quire_state *s = qs_new(NULL, "sess");
    for (size_t i = 0; i < n; i++) {
        qreminder q;
        memset(&q, 0, sizeof q);
        q.body = r[i].body;
        q.body_len = strlen(r[i].body);
        q.role_hint = r[i].hint;
        q.mode = QM_FINISH_STEP;
        q.propagate = QP_SESSION;
        q.source = QS_HOST;
        q.origin = "host";
        q.anchor_msg = UINT32_MAX;
        quire_error e;
        if (qs_inject(s, &q, NULL, NULL, NULL, &e)) fprintf(stderr, "inject: %s\n", e.message);
    }
    return s;
}

typedef struct out {
    quire_status st;
    char *req, *ev;
    quire_state *next;
    quire_error err;
} out;

static out render_opts(const quire_transcript *t, const quire_state *s, const quire_render_options *ro) {
    out o;
    memset(&o, 0, sizeof o);
    quire_render_result res;
    o.st = quire_render(t, s, ro, NULL, &res, &o.err);
    if (o.st) return o;
    o.req = strdup(res.request.data);
    o.ev = strdup(res.events.data ? res.events.data : "");
    o.next = res.state;
    res.state = NULL;
    quire_render_result_free(&res);
    return o;
}

static out render(const quire_transcript *t, const quire_state *s, const char *provider, const char *model) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    return render_opts(t, s, &ro);
}

static void out_free(out *o) {
    free(o->req);
    free(o->ev);
    quire_state_free(o->next);
    memset(o, 0, sizeof *o);
}

static bool has(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }
static size_t count(const char *hay, const char *needle) {
    size_t n = 0, l = strlen(needle);
    for (const char *p = hay; p && (p = strstr(p, needle)); p += l) n++;
    return n;
}

static const char *shown(const char *s) { return s ? s : "(null)"; }
#define CHECK_HAS(h, n) CHECK_MSG(has(h, n), "missing %s in %s", n, shown(h))
#define CHECK_NOT(h, n) CHECK_MSG(!has(h, n), "unexpected %s in %s", n, shown(h))

static const char *k_tool_tail =
    "{\"system\":\"You are a coding agent.\",\"tools\":[{\"name\":\"read\",\"description\":\"Read a file\","
    "\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
    "{\"role\":\"user\",\"content\":\"List src/\"},"
    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Looking.\"},"
    "{\"type\":\"toolCall\",\"id\":\"t1\",\"name\":\"read\",\"input\":{\"path\":\"src\",\"n\":1.50e3}}]},"
    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"a.c\\nb.c\"}]}]}";

static const char *k_user_tail =
    "{\"system\":\"You are a coding agent.\",\"messages\":["
    "{\"role\":\"user\",\"content\":\"List src/\"},"
    "{\"role\":\"assistant\",\"content\":\"Sure.\"},"
    "{\"role\":\"user\",\"content\":\"Now fix b.c\"}]}";

/* ---- Anthropic: the tail user block and the events ---- */
static void test_anthropic_tail(void) {
    quire_transcript *t = tr(k_tool_tail);
    rem_spec rs[] = {{"File a.c changed.", QRH_USER_BLOCK}, {"Tests are failing.", QRH_USER_BLOCK}};
    quire_state *s = state_with(rs, 2);
    out o = render(t, s, "anthropic", NULL);
    CHECK_INT(o.st, QUIRE_OK);
    /* one block, injection order, blank line between, after the tool result */
    CHECK_HAS(o.req, "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"a.c\\nb.c\","
                     "\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":\"<system-reminder>\\n"
                     "File a.c changed.\\n\\nTests are failing.\\n</system-reminder>\"}]}]}");
    CHECK_INT(count(o.ev, "\"sessionUpdate\":\"reminder_emitted\""), 2);
    CHECK_HAS(o.ev, "\"slot\":\"user_block\",\"requestedSlot\":\"user_block\",\"reason\":\"requested\"");
    /* the system prompt is byte-identical with and without reminders */
    out o0 = render(t, NULL, "anthropic", NULL);
    const char *msgs = strstr(o.req, "\"messages\"");
    const char *msgs0 = strstr(o0.req, "\"messages\"");
    CHECK(msgs && msgs0 && msgs - o.req == msgs0 - o0.req && memcmp(o.req, o0.req, (size_t)(msgs - o.req)) == 0);
    out_free(&o);
    out_free(&o0);
    quire_state_free(s);
    quire_transcript_free(t);
}

static void test_anthropic_slots(void) {
    quire_transcript *t = tr(k_user_tail);
    rem_spec rs[] = {{"sys", QRH_SYSTEM}, {"dev", QRH_DEVELOPER}, {"eph", QRH_EPHEMERAL_CACHE}, {"ub", QRH_USER_BLOCK}};
    quire_state *s = state_with(rs, 4);
    out o = render(t, s, "anthropic", "claude-sonnet-4-5");
    CHECK_INT(o.st, QUIRE_OK);
    /* system demoted (no developer slot on this model) -> user_block */
    CHECK_HAS(o.ev, "\"slot\":\"user_block\",\"requestedSlot\":\"system\",\"reason\":\"system_demoted_for_cache\"");
    CHECK_HAS(o.ev, "\"slot\":\"user_block\",\"requestedSlot\":\"developer\",\"reason\":\"no_developer_slot\"");
    CHECK_HAS(o.ev, "\"slot\":\"ephemeral_cache\",\"requestedSlot\":\"ephemeral_cache\",\"reason\":\"requested\"");
    /* user_block group (sys, dev, ub in injection order), then the ephemeral group;
     * the breakpoint sits on the last stable block, never on a reminder */
    CHECK_HAS(o.req, "{\"type\":\"text\",\"text\":\"Now fix b.c\",\"cache_control\":{\"type\":\"ephemeral\"}},"
                     "{\"type\":\"text\",\"text\":\"<system-reminder>\\nsys\\n\\ndev\\n\\nub\\n</system-reminder>\"},"
                     "{\"type\":\"text\",\"text\":\"<system-reminder>\\neph\\n</system-reminder>\"}]}]}");
    CHECK_INT(count(o.req, "cache_control"), 2); /* system + last stable block (no tools) */
    out_free(&o);
    /* a model with mid-conversation system messages: developer slot */
    o = render(t, s, "anthropic", "claude-opus-5-5");
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"slot\":\"developer\",\"requestedSlot\":\"system\",\"reason\":\"system_demoted_for_cache\"");
    CHECK_HAS(o.req, "</system-reminder>\"}]},{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"sys\\n\\ndev\"}]}]}");
    out_free(&o);
    /* policy allows the system slot */
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    ro.allow_system_slot = 1;
    o = render_opts(t, s, &ro);
    CHECK_HAS(o.ev, "\"slot\":\"system\",\"requestedSlot\":\"system\",\"reason\":\"policy_allows_system\"");
    CHECK_HAS(o.req, "\"system\":[{\"type\":\"text\",\"text\":\"You are a coding agent.\",\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":\"sys\"}]");
    out_free(&o);
    quire_state_free(s);
    quire_transcript_free(t);
}


/* ---- every dialect x slot x tail kind: renders, validates, reports ---- */
static const char *k_targets[][2] = {
    {"anthropic", "claude-sonnet-4-5"}, {"anthropic", "claude-opus-5-5"}, {"openai", "gpt-4o"},
    {"openai", "o3"}, {"openai", "o1-mini"}, {"openai", "gpt-5.6"}, {"openai_responses", "gpt-5"},
    {"openai_responses", "gpt-4.1"}, {"gemini", "gemini-2.5-pro"}, {"gemini", "gemma-3-27b-it"},
    {"bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}, {"bedrock", "amazon.titan-text"},
    {"mistral", "mistral-large-latest"}, {"ollama", "llama3.2"}, {"ollama", "mistral-nemo"},
    {"ollama", "gemma3"}, {"deepseek", "deepseek-chat"}, {"openai_compatible", "Qwen/Qwen3-8B"},
    {"openai_compatible", "mistralai/Mistral-7B-Instruct"},
};

static bool valid(const char *req, const char *provider, const char *model, char **report) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    quire_bytes rep;
    quire_error e;
    quire_status st = quire_validate(req, strlen(req), &ro, NULL, &rep, &e);
    if (report) *report = st == QUIRE_E_VALIDATE ? strdup(rep.data) : NULL;
    if (st == QUIRE_E_VALIDATE) quire_bytes_free(&rep);
    return st == QUIRE_OK;
}

static void test_matrix(void) {
    const char *tails[] = {k_tool_tail, k_user_tail};
    qrole_hint hints[] = {QRH_SYSTEM, QRH_DEVELOPER, QRH_USER_BLOCK, QRH_EPHEMERAL_CACHE};
    for (size_t ti = 0; ti < Q_COUNTOF(k_targets); ti++) {
        for (size_t k = 0; k < 2; k++) {
            quire_transcript *t = tr(tails[k]);
            for (size_t h = 0; h < 4; h++) {
                rem_spec rs[] = {{"Reminder one.", hints[h]}, {"Reminder two.", hints[h]}};
                quire_state *s = state_with(rs, 2);
                out o = render(t, s, k_targets[ti][0], k_targets[ti][1]);
                CHECK_MSG(o.st == QUIRE_OK, "%s %s: %s", k_targets[ti][0], k_targets[ti][1], o.err.message);
                if (o.st == QUIRE_OK) {
                    char *rep = NULL;
                    CHECK_MSG(valid(o.req, k_targets[ti][0], k_targets[ti][1], &rep), "%s %s %s: %s\n%s",
                              k_targets[ti][0], k_targets[ti][1], qrole_hint_name(hints[h]), rep, o.req);
                    free(rep);
                    /* both reminders rendered, each with one event, in one block */
                    CHECK_INT(count(o.ev, "\"sessionUpdate\":\"reminder_emitted\""), 2);
                    /* grouped: joined by a blank line (quoted in the plain wrapper) */
                    CHECK_MSG(has(o.req, "Reminder one.\\n\\nReminder two.") ||
                                  has(o.req, "System reminder:\\n> Reminder one.\\n>\\n> Reminder two.\\n"
                                             "End of system reminder."),
                              "%s %s: not grouped: %s", k_targets[ti][0], qrole_hint_name(hints[h]), o.req);
                    CHECK_HAS(o.ev, "\"requestedSlot\":\"");
                    /* the tool result is never separated from its call: the result's text follows the call */
                    const char *call = strstr(o.req, "call_1");
                    CHECK_MSG(k == 1 || !call || strstr(call, "a.c\\nb.c") != NULL, "%s %s", k_targets[ti][0], o.req);
                    /* deterministic */
                    out o2 = render(t, s, k_targets[ti][0], k_targets[ti][1]);
                    CHECK(o2.req && strcmp(o.req, o2.req) == 0);
                    out_free(&o2);
                }
                out_free(&o);
                quire_state_free(s);
            }
            quire_transcript_free(t);
        }
    }
}

/* ---- cache stability: turn T+1 repeats turn T up to T's last stable block ---- */
static size_t common_prefix(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    return i;
}

static void test_cache_stability(void) {
    static const char *turn_t[2] = {
        "{\"system\":\"S\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
        "{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\","
        "\"name\":\"read\",\"input\":{\"p\":1}}]},{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":"
        "\"c1\",\"content\":\"STABLE-END\"}]}]}",
        "{\"system\":\"S\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
        "{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":\"ok\"},"
        "{\"role\":\"user\",\"content\":\"STABLE-END\"}]}",
    };
    static const char *turn_t1[2] = {
        "{\"system\":\"S\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
        "{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\","
        "\"name\":\"read\",\"input\":{\"p\":1}}]},{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":"
        "\"c1\",\"content\":\"STABLE-END\"}]},{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c2\","
        "\"name\":\"read\",\"input\":{\"p\":2}}]},{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":"
        "\"c2\",\"content\":\"more\"}]}]}",
        "{\"system\":\"S\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
        "{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":\"ok\"},"
        "{\"role\":\"user\",\"content\":\"STABLE-END\"},{\"role\":\"assistant\",\"content\":\"done\"},"
        "{\"role\":\"user\",\"content\":\"next\"}]}",
    };
    rem_spec r1[] = {{"first sys", QRH_SYSTEM}, {"first dev", QRH_DEVELOPER}, {"first ub", QRH_USER_BLOCK},
                     {"first eph", QRH_EPHEMERAL_CACHE}};
    rem_spec r2[] = {{"second sys", QRH_SYSTEM}, {"second dev", QRH_DEVELOPER}, {"second ub", QRH_USER_BLOCK},
                     {"second eph", QRH_EPHEMERAL_CACHE}, {"third ub", QRH_USER_BLOCK}};
    quire_state *s1 = state_with(r1, 4), *s2 = state_with(r2, 5);
    for (size_t ti = 0; ti < Q_COUNTOF(k_targets); ti++) {
        for (size_t k = 0; k < 2; k++) {
            quire_transcript *a = tr(turn_t[k]), *b = tr(turn_t1[k]);
            out o1 = render(a, s1, k_targets[ti][0], k_targets[ti][1]);
            out o2 = render(b, s2, k_targets[ti][0], k_targets[ti][1]);
            CHECK(o1.st == QUIRE_OK && o2.st == QUIRE_OK);
            qcaps row;
            qcaps_resolve(NULL, k_targets[ti][0], k_targets[ti][1], &row, NULL, NULL);
            if (row.cache == QCACHE_NONE) {
                /* no prompt cache: the system slot is allowed (DESIGN 5.2), and said so */
                CHECK_HAS(o1.ev, "\"slot\":\"system\",\"requestedSlot\":\"system\",\"reason\":\"no_prompt_cache\"");
            } else if (o1.req && o2.req) {
                const char *end = strstr(o1.req, "STABLE-END");
                size_t need = end ? (size_t)(end - o1.req) + strlen("STABLE-END") : SIZE_MAX;
                size_t got = common_prefix(o1.req, o2.req);
                CHECK_MSG(got >= need, "%s %s (%s tail): turn T+1 diverges at byte %zu, before T's last stable "
                          "block ends (%zu)\n T:   %s\n T+1: %s", k_targets[ti][0], k_targets[ti][1],
                          k ? "user" : "tool", got, need, o1.req, o2.req);
            }
            out_free(&o1);
            out_free(&o2);
            quire_transcript_free(a);
            quire_transcript_free(b);
        }
    }
    quire_state_free(s1);
    quire_state_free(s2);
}

/* ---- cache breakpoints: limits, input markers, TTL order ---- */
static void test_cache_limits(void) {
    /* six input markers plus three managed sites: never more than 4 */
    const char *j =
        "{\"system\":[{\"type\":\"text\",\"text\":\"S1\",\"cacheControl\":{\"type\":\"ephemeral\"}},{\"type\":\"text\","
        "\"text\":\"S2\"}],\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"},\"cacheControl\":{\"type\":"
        "\"ephemeral\"}}],\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\",\"cacheControl\":"
        "{\"type\":\"ephemeral\"}}]},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"b\",\"cacheControl\":"
        "{\"type\":\"ephemeral\"}}]},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"c\",\"cacheControl\":"
        "{\"type\":\"ephemeral\"}}]},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"d\",\"cacheControl\":"
        "{\"type\":\"ephemeral\"}}]},{\"role\":\"user\",\"content\":\"e\"}]}";
    quire_transcript *t = tr(j);
    rem_spec rs[] = {{"eph", QRH_EPHEMERAL_CACHE}};
    quire_state *s = state_with(rs, 1);
    out o = render(t, s, "anthropic", NULL);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_INT(count(o.req, "cache_control"), 4);
    /* managed: last tool, last system block, last stable block; one input marker (the newest) fills the room */
    CHECK_HAS(o.req, "{\"type\":\"text\",\"text\":\"S2\",\"cache_control\":{\"type\":\"ephemeral\"}}");
    CHECK_HAS(o.req, "{\"type\":\"text\",\"text\":\"e\",\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":\"<system-reminder>\\neph\\n</system-reminder>\"}");
    CHECK_HAS(o.req, "\"text\":\"d\",\"cache_control\"");
    CHECK_NOT(o.req, "\"text\":\"a\",\"cache_control\"");
    CHECK_INT(count(o.ev, "\"sessionUpdate\":\"cache_marker_dropped\""), 4); /* S1, a, b, c: oldest first */
    CHECK(valid(o.req, "anthropic", NULL, NULL));
    out_free(&o);
    /* Bedrock: at most 4 cachePoint blocks */
    o = render(t, s, "bedrock", NULL);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_INT(count(o.req, "cachePoint"), 4);
    CHECK(valid(o.req, "bedrock", NULL, NULL));
    out_free(&o);
    /* OpenAI gpt-5.6: explicit breakpoints, at most 3, never on the reminder */
    o = render(t, s, "openai", "gpt-5.6");
    CHECK_INT(o.st, QUIRE_OK);
    CHECK(count(o.req, "prompt_cache_breakpoint") <= 3);
    CHECK_HAS(o.req, "{\"type\":\"text\",\"text\":\"e\",\"prompt_cache_breakpoint\":{\"mode\":\"explicit\"}}");
    CHECK_NOT(o.req, "</system-reminder>\",\"prompt_cache_breakpoint\"");
    CHECK(valid(o.req, "openai", "gpt-5.6", NULL));
    out_free(&o);
    /* policy "input": only the input's markers (plus the one an ephemeral reminder needs) */
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    ro.cache_breakpoints = QUIRE_CACHE_INPUT_ONLY;
    o = render_opts(t, s, &ro);
    CHECK_INT(count(o.req, "cache_control"), 4); /* e (the ephemeral reminder's), then the newest: d, c, b */
    CHECK_HAS(o.req, "\"text\":\"b\",\"cache_control\"");
    CHECK_NOT(o.req, "\"text\":\"S2\",\"cache_control\"");
    out_free(&o);
    quire_state_free(s);
    quire_transcript_free(t);

    /* TTL order: a managed marker before a 1h marker takes the 1h TTL */
    t = tr("{\"system\":\"S\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\","
           "\"cacheControl\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"}}]},{\"role\":\"assistant\",\"content\":\"b\"},"
           "{\"role\":\"user\",\"content\":\"c\"}]}");
    o = render(t, NULL, "anthropic", NULL);
    CHECK_HAS(o.req, "\"text\":\"S\",\"cache_control\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"}");
    CHECK_HAS(o.req, "\"text\":\"a\",\"cache_control\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"}");
    CHECK_HAS(o.req, "\"text\":\"c\",\"cache_control\":{\"type\":\"ephemeral\"}}");
    CHECK(valid(o.req, "anthropic", NULL, NULL));
    out_free(&o);
    quire_transcript_free(t);
}

/* ---- inexpressible content: an error naming the block, or an event with lossy ---- */
static void test_lossy(void) {
    const char *j =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\","
        "\"id\":\"c\",\"name\":\"shot\",\"input\":{}}]},{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":"
        "\"c\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":\"AAAA\"}]}]}]}";
    quire_transcript *t = tr(j);
    out o = render(t, NULL, "openai", "gpt-4o");
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/messages/2/content/0/content/1");
    CHECK_MSG(has(o.err.message, "an image inside a tool result"), "%s", o.err.message);
    out_free(&o);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "openai";
    ro.lossy = 1;
    o = render_opts(t, NULL, &ro);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"sessionUpdate\":\"content_dropped\",\"messageIndex\":2,\"blockIndex\":0,\"partIndex\":1,\"reason\":\"not_expressible\"");
    CHECK_HAS(o.req, "{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":[{\"type\":\"text\",\"text\":\"see\"}]}");
    out_free(&o);
    /* Anthropic and Responses carry it */
    o = render(t, NULL, "anthropic", NULL);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"AAAA\"}}");
    out_free(&o);
    o = render(t, NULL, "openai_responses", NULL);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,AAAA\",\"detail\":\"auto\"}");
    out_free(&o);
    quire_transcript_free(t);
}

/* ---- lossless: thinking signatures, opaque items, numbers ---- */
static void test_lossless(void) {
    const char *j =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":["
        "{\"type\":\"thinking\",\"text\":\"t\\u00e9\",\"signature\":\"EqQBCkYIARgCIkB\\/+9=\"},"
        "{\"type\":\"redactedThinking\",\"data\":\"RED\\/ACTED==\"},"
        "{\"type\":\"opaque\",\"provider\":\"openai_responses\",\"item\":{\"type\":\"reasoning\",\"id\":\"rs_1\","
        "\"summary\":[],\"encrypted_content\":\"gAAAA\\/x==\",\"n\":1.000}},"
        "{\"type\":\"toolCall\",\"id\":\"c\",\"name\":\"f\",\"input\":{\"big\":123456789012345678901234567890,\"e\":-0.0e+00,\"s\":\"\\u2028\"}}]},"
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c\",\"content\":\"ok\"}]}]}";
    quire_transcript *t = tr(j);
    out o = render(t, NULL, "anthropic", NULL);
    CHECK_HAS(o.req, "{\"type\":\"thinking\",\"thinking\":\"t\\u00e9\",\"signature\":\"EqQBCkYIARgCIkB\\/+9=\"}");
    CHECK_HAS(o.req, "{\"type\":\"redacted_thinking\",\"data\":\"RED\\/ACTED==\"}");
    CHECK_HAS(o.req, "\"input\":{\"big\":123456789012345678901234567890,\"e\":-0.0e+00,\"s\":\"\\u2028\"}");
    CHECK_HAS(o.ev, "\"reason\":\"not_renderable\",\"detail\":\"opaque item of another provider\"");
    out_free(&o);
    o = render(t, NULL, "openai_responses", NULL);
    CHECK_HAS(o.req, "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],\"encrypted_content\":\"gAAAA\\/x==\",\"n\":1.000}");
    CHECK_HAS(o.req, "\"arguments\":\"{\\\"big\\\":123456789012345678901234567890,\\\"e\\\":-0.0e+00,\\\"s\\\":\\\"\\\\u2028\\\"}\"");
    out_free(&o);
    o = render(t, NULL, "bedrock", NULL);
    CHECK_HAS(o.req, "{\"reasoningContent\":{\"reasoningText\":{\"text\":\"t\\u00e9\",\"signature\":\"EqQBCkYIARgCIkB\\/+9=\"}}}");
    out_free(&o);
    /* a signed thinking text without a recorded provider has a Claude signature's shape: not sent to Gemini */
    o = render(t, NULL, "gemini", NULL);
    CHECK_NOT(o.req, "EqQBCkYIARgCIkB");
    CHECK_HAS(o.ev, "\"reason\":\"foreign_signature\"");
    out_free(&o);
    quire_transcript_free(t);
}

/* ---- structural fixes ---- */
static void test_structure(void) {
    /* Gemma and o1-mini: no system; the system prompt opens the first user turn */
    quire_transcript *t = tr(k_user_tail);
    out o = render(t, NULL, "gemini", "gemma-3-27b-it");
    CHECK_NOT(o.req, "systemInstruction");
    CHECK_HAS(o.req, "\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"You are a coding agent.\"},{\"text\":\"List src/\"}]}");
    out_free(&o);
    o = render(t, NULL, "openai", "o1-preview");
    CHECK_NOT(o.req, "\"role\":\"system\"");
    CHECK_NOT(o.req, "\"role\":\"developer\"");
    out_free(&o);
    o = render(t, NULL, "openai", "o3");
    CHECK_HAS(o.req, "{\"role\":\"developer\",\"content\":\"You are a coding agent.\"}");
    out_free(&o);
    quire_transcript_free(t);
    /* consecutive user messages merge for Anthropic; a first assistant message gets a user turn before it */
    t = tr("{\"messages\":[{\"role\":\"assistant\",\"content\":\"hi\"},{\"role\":\"user\",\"content\":\"a\"},"
           "{\"role\":\"user\",\"content\":\"b\"},{\"role\":\"developer\",\"content\":\"be brief\"}]}");
    o = render(t, NULL, "anthropic", NULL);
    CHECK_HAS(o.req, "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"(continued)\"}]},"
                     "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},{\"role\":\"user\",\"content\":"
                     "[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\",\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":"
                     "\"<system-reminder>\\nbe brief\\n</system-reminder>\"");
    CHECK_HAS(o.ev, "\"change\":\"inserted_user_turn\"");
    CHECK(valid(o.req, "anthropic", NULL, NULL));
    out_free(&o);
    o = render(t, NULL, "anthropic", "claude-opus-5-5");
    CHECK_HAS(o.req, "{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"be brief\"}]}]}");
    CHECK(valid(o.req, "anthropic", "claude-opus-5-5", NULL));
    out_free(&o);
    o = render(t, NULL, "openai", "gpt-5");
    CHECK_HAS(o.req, "{\"role\":\"developer\",\"content\":\"be brief\"}");
    out_free(&o);
    quire_transcript_free(t);
}

/* ---- the validator rejects what breaks the rules ---- */
static void expect_invalid(const char *req, const char *provider, const char *model, const char *line) {
    char *rep = NULL;
    CHECK_MSG(!valid(req, provider, model, &rep), "%s accepted: %s", provider, req);
    CHECK_MSG(rep && strstr(rep, line), "%s: want \"%s\" in:\n%s", provider, line, rep ? rep : "(none)");
    free(rep);
}

static void test_validator(void) {
    expect_invalid("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}]}",
                   "anthropic", NULL, "/messages/1/role: roles must alternate");
    expect_invalid("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"assistant\",\"content\":\"a\"}]}",
                   "anthropic", NULL, "/messages/0/role: the first message must be a user message");
    expect_invalid("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\","
                   "\"content\":[{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"f\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"y\","
                   "\"name\":\"f\",\"input\":{}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"y\"},"
                   "{\"type\":\"tool_result\",\"tool_use_id\":\"y\"}]}]}",
                   "anthropic", NULL, "/messages/2/content/1/tool_use_id: tool_result \"y\" answers a tool call that already has a result");
    expect_invalid("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\","
                   "\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":\"b\",\"cache_control\":{\"type\":\"ephemeral\"}},"
                   "{\"type\":\"text\",\"text\":\"c\",\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":\"d\","
                   "\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":\"e\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]}",
                   "anthropic", NULL, "/messages/0/content/4/cache_control: more than 4 cache_control markers");
    expect_invalid("{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"system\",\"content\":\"b\"}]}",
                   "anthropic", "claude-sonnet-4-5", "/messages/1/role: mid-conversation system messages are not supported");
    expect_invalid("{\"model\":\"o1-mini\",\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"a\"}]}",
                   "openai", NULL, "/messages/0/role: this model takes neither system nor developer messages");
    expect_invalid("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null,"
                   "\"tool_calls\":[{\"id\":\"x\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
                   "{\"role\":\"user\",\"content\":\"b\"}]}",
                   "openai", NULL, "/messages/2: tool call \"x\" has no result right after its turn");
    expect_invalid("{\"model\":\"mistral-large-latest\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\","
                   "\"tool_calls\":[{\"id\":\"x\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
                   "{\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"r\"},{\"role\":\"user\",\"content\":\"b\"}]}",
                   "mistral", NULL, "/messages/3/role: a user message may not follow a tool message");
    expect_invalid("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]},{\"role\":\"model\",\"parts\":[{\"functionCall\":"
                   "{\"name\":\"f\",\"args\":{}}}]},{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"f\",\"response\":{}}},"
                   "{\"text\":\"and\"}]}]}",
                   "gemini", NULL, "/contents/2/parts: function responses are not mixed with text parts");
    expect_invalid("{\"systemInstruction\":{\"parts\":[{\"text\":\"s\"}]},\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]}]}",
                   "gemini", "gemma-3-27b-it", "/systemInstruction: this model takes no system instruction");
    expect_invalid("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"txt\":\"a\"}]}]}", "gemini", NULL,
                   "/contents/0/parts/0/txt: unknown field \"txt\"");
    expect_invalid("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"a\"}]},{\"role\":\"user\",\"content\":[{\"text\":\"b\"}]}]}",
                   "bedrock", NULL, "/messages/1/role: roles must alternate");
    expect_invalid("{\"model\":\"gpt-5\",\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"z\",\"output\":\"r\"}]}",
                   "openai_responses", NULL, "/input/0/call_id: function_call_output \"z\" answers no pending tool call");
}

/* ---- capability table ---- */
static void test_caps(void) {
    qcaps c;
    CHECK(qcaps_glob("o[0-9]*", "o3-mini"));
    CHECK(!qcaps_glob("o[0-9]*", "omni"));
    CHECK(qcaps_glob("*anthropic.claude*", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"));
    CHECK(qcaps_resolve(NULL, "openai", "o1-mini-2024-09-12", &c, NULL, NULL) && c.system == QSYS_FIRST_USER);
    CHECK(qcaps_resolve(NULL, "openai", "o4-mini", &c, NULL, NULL) && c.developer == QDEV_DEVELOPER_ROLE);
    CHECK(qcaps_resolve(NULL, "openai", "gpt-4o", &c, NULL, NULL) && c.developer == QDEV_SYSTEM_ROLE);
    CHECK(qcaps_resolve(NULL, "gemini", "gemma-2-9b", &c, NULL, NULL) && c.system == QSYS_FIRST_USER);
    CHECK(qcaps_resolve(NULL, "anthropic", "claude-opus-5-5", &c, NULL, NULL) && c.developer == QDEV_SYSTEM_ROLE);
    CHECK(qcaps_resolve(NULL, "anthropic", "claude-haiku-4-5", &c, NULL, NULL) && c.developer == QDEV_NONE);
    CHECK(!qcaps_resolve(NULL, "nope", "x", &c, NULL, NULL));
    /* overrides: consulted first, patch the built-in row they shadow */
    const char *ov = "{\"rows\":[{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5*\",\"developer\":\"system_role\"},"
                     "{\"provider\":\"myllm\",\"model\":\"*\",\"dialect\":\"openai_chat\",\"cache\":\"none\"}]}";
    quire_caps *cs = NULL;
    quire_error e;
    CHECK_INT(quire_caps_parse(ov, strlen(ov), NULL, &cs, &e), QUIRE_OK);
    CHECK(qcaps_resolve(cs, "anthropic", "claude-sonnet-4-5", &c, NULL, NULL) && c.developer == QDEV_SYSTEM_ROLE &&
          c.cache == QCACHE_BLOCK_MARKERS && c.cache_limit == 4);
    CHECK(qcaps_resolve(cs, "myllm", "m1", &c, NULL, NULL) && c.dialect == QD_OPENAI_CHAT);
    quire_bytes b;
    CHECK_INT(quire_caps_resolve(cs, "myllm", "m1", 0, &b, &e), QUIRE_OK);
    CHECK_HAS(b.data, "\"override\":1");
    quire_bytes_free(&b);
    quire_caps_free(cs);
    const char *bad[] = {"{\"rows\":[{\"provider\":\"x\",\"model\":\"*\"}]}",
                         "{\"rows\":[{\"provider\":\"openai\",\"model\":\"*\",\"tailBlock\":\"middle\"}]}",
                         "{\"rows\":[{\"provider\":\"openai\",\"model\":\"*\",\"colour\":1}]}", "{\"row\":[]}"};
    const char *why[] = {"needs a \"dialect\"", "expected \"last_user_message\"", "unknown field \"colour\"", "unknown field"};
    for (size_t i = 0; i < Q_COUNTOF(bad); i++) {
        cs = NULL;
        CHECK_INT(quire_caps_parse(bad[i], strlen(bad[i]), NULL, &cs, &e), QUIRE_E_SCHEMA);
        CHECK_MSG(has(e.message, why[i]), "%s: %s", bad[i], e.message);
        quire_caps_free(cs);
    }
    /* policy files */
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    const char *pol = "{\"systemSlot\":\"allow\",\"placement\":\"append_only\",\"cacheBreakpoints\":\"input\",\"lossy\":true}";
    CHECK_INT(quire_render_policy_apply(pol, strlen(pol), &ro, &e), QUIRE_OK);
    CHECK(ro.allow_system_slot && ro.placement == QUIRE_PLACEMENT_APPEND_ONLY && ro.cache_breakpoints == 1 && ro.lossy);
    const char *bad_pol = "{\"systemSlot\":\"maybe\"}";
    CHECK_INT(quire_render_policy_apply(bad_pol, strlen(bad_pol), &ro, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/systemSlot");
}

/* ---- append_only: a reminder stays where it first fired ---- */
static void test_append_only(void) {
    quire_transcript *a = tr(k_user_tail);
    const char *j2 =
        "{\"system\":\"You are a coding agent.\",\"messages\":[{\"role\":\"user\",\"content\":\"List src/\"},"
        "{\"role\":\"assistant\",\"content\":\"Sure.\"},{\"role\":\"user\",\"content\":\"Now fix b.c\"},"
        "{\"role\":\"assistant\",\"content\":\"Done.\"},{\"role\":\"user\",\"content\":\"Thanks\"}]}";
    quire_transcript *b = tr(j2);
    rem_spec rs[] = {{"Watch out.", QRH_USER_BLOCK}};
    quire_state *s = state_with(rs, 1);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "openai";
    ro.placement = QUIRE_PLACEMENT_APPEND_ONLY;
    out o1 = render_opts(a, s, &ro);
    CHECK_INT(o1.st, QUIRE_OK);
    CHECK(o1.next && o1.next->nrems == 1 && o1.next->rems[0].anchor_msg == 2);
    out o2 = render_opts(b, o1.next, &ro);
    CHECK_INT(o2.st, QUIRE_OK);
    /* turn T+1 repeats every byte of turn T's messages, reminder included */
    const char *end1 = strstr(o1.req, "],\"tools\"");
    if (!end1) end1 = o1.req + strlen(o1.req) - 2;
    size_t need = (size_t)(end1 - o1.req);
    CHECK_MSG(common_prefix(o1.req, o2.req) >= need, "\n T:   %s\n T+1: %s", o1.req, o2.req);
    CHECK_INT(count(o2.req, "Watch out."), 1);
    out_free(&o1);
    out_free(&o2);
    quire_state_free(s);
    quire_transcript_free(a);
    quire_transcript_free(b);
}

/* ---- append_only: an expired reminder stays in history until compaction ---- */
static void test_append_only_expiry(void) {
    quire_transcript *a = tr(k_user_tail);
    const char *j2 =
        "{\"system\":\"You are a coding agent.\",\"messages\":[{\"role\":\"user\",\"content\":\"List src/\"},"
        "{\"role\":\"assistant\",\"content\":\"Sure.\"},{\"role\":\"user\",\"content\":\"Now fix b.c\"},"
        "{\"role\":\"assistant\",\"content\":\"Done.\"},{\"role\":\"user\",\"content\":\"Thanks\"}]}";
    quire_transcript *b = tr(j2);
    quire_state *s = qs_new(NULL, "sess");
    qreminder q;
    memset(&q, 0, sizeof q);
    q.body = "Seen once.";
    q.body_len = strlen(q.body);
    q.role_hint = QRH_USER_BLOCK;
    q.ttl_turns = q.ttl_remaining = 1;
    q.anchor_msg = UINT32_MAX;
    q.origin = "host";
    quire_error e;
    CHECK_INT(qs_inject(s, &q, NULL, NULL, NULL, &e), QUIRE_OK);
    for (int mode = 0; mode < 2; mode++) {
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = "anthropic";
        ro.placement = mode ? QUIRE_PLACEMENT_APPEND_ONLY : QUIRE_PLACEMENT_TAIL;
        ro.cache_breakpoints = QUIRE_CACHE_INPUT_ONLY; /* managed markers move forward each turn */
        out o1 = render_opts(a, s, &ro);
        CHECK_INT(o1.st, QUIRE_OK);
        CHECK_INT(count(o1.req, "Seen once."), 1);
        CHECK_MSG(count(o1.ev, "\"phase\":\"ttl_expired\"") == 1, "%s", o1.ev);
        /* the state file keeps the retired reminder, and only under append_only */
        quire_bytes sb = {0};
        CHECK_INT(quire_state_write(o1.next, 0, &sb, &e), QUIRE_OK);
        CHECK_INT(count(sb.data, "\"retiredAtTurn\":1"), mode ? 1 : 0);
        quire_state *s2 = NULL;
        CHECK_INT(quire_state_parse(sb.data, sb.len, NULL, &s2, &e), QUIRE_OK);
        quire_bytes_free(&sb);
        out o2 = render_opts(b, s2, &ro);
        CHECK_INT(o2.st, QUIRE_OK);
        /* append_only: turn T's bytes, reminder included, are a prefix of turn T+1's
         * (up to T's last block); tail: an expired reminder is gone */
        CHECK_INT(count(o2.req, "Seen once."), mode ? 1 : 0);
        CHECK_INT(count(o2.ev, "reminder_emitted"), 0);
        if (mode) {
            const char *cut = strstr(o1.req, "Seen once.");
            CHECK_MSG(cut && common_prefix(o1.req, o2.req) > (size_t)(cut - o1.req) + 10, "\n T:   %s\n T+1: %s",
                      o1.req, o2.req);
            /* a third turn keeps it at the same place; compaction finally drops it */
            out o3 = render_opts(b, o2.next, &ro);
            CHECK_INT(count(o3.req, "Seen once."), 1);
            uint32_t kept = 9, removed = 9;
            qs_after_compact(o3.next, NULL, &kept, &removed);
            CHECK_INT(o3.next->nrems, 0);
            CHECK_INT(kept, 0);
            out o4 = render_opts(b, o3.next, &ro);
            CHECK_INT(count(o4.req, "Seen once."), 0);
            out_free(&o3);
            out_free(&o4);
        }
        quire_state_free(s2);
        out_free(&o1);
        out_free(&o2);
    }
    quire_state_free(s);
    quire_transcript_free(a);
    quire_transcript_free(b);
}

/* ---- input dialects: render X, read back from X, render X: same bytes ---- */
static void test_from_roundtrip(void) {
    const char *j =
        "{\"system\":[{\"type\":\"text\",\"text\":\"A\"},{\"type\":\"text\",\"text\":\"B\"}],\"tools\":[{\"name\":\"read\","
        "\"inputSchema\":{\"type\":\"object\"}}],\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
        "\"x\\u00e9\"},{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":\"iVBO\"}]},{\"role\":\"assistant\",\"content\":"
        "[{\"type\":\"text\",\"text\":\"r\"},{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"read\",\"input\":{\"n\":1.50e3}},"
        "{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"read\",\"input\":{\"q\":\"a\\tb\"}}]},{\"role\":\"tool\",\"content\":"
        "[{\"type\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":\"one\"},{\"type\":\"toolResult\",\"toolCallId\":\"c2\","
        "\"content\":\"two\",\"isError\":true}]},{\"role\":\"user\",\"content\":\"go on\"}]}";
    quire_transcript *t = tr(j);
    const char *pairs[][2] = {{"anthropic", "anthropic"}, {"openai", "openai_chat"},
                              {"openai_responses", "openai_responses"}, {"gemini", "gemini"}};
    for (size_t i = 0; i < Q_COUNTOF(pairs); i++) {
        out o1 = render(t, NULL, pairs[i][0], NULL);
        quire_transcript *t2 = NULL;
        quire_error e;
        CHECK_INT(quire_transcript_parse_dialect(pairs[i][1], o1.req, strlen(o1.req), NULL, &t2, &e), QUIRE_OK);
        if (t2) {
            out o2 = render(t2, NULL, pairs[i][0], NULL);
            CHECK_MSG(o2.req && strcmp(o1.req, o2.req) == 0, "%s:\n %s\n %s", pairs[i][0], o1.req, o2.req);
            /* and to every other provider: valid */
            for (size_t k = 0; k < Q_COUNTOF(k_targets); k++) {
                quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
                ro.provider = k_targets[k][0];
                ro.model = k_targets[k][1];
                ro.lossy = 1;
                out o3 = render_opts(t2, NULL, &ro);
                char *rep = NULL;
                CHECK_MSG(o3.st == QUIRE_OK && valid(o3.req, k_targets[k][0], k_targets[k][1], &rep), "%s -> %s %s: %s %s",
                          pairs[i][1], k_targets[k][0], k_targets[k][1], o3.err.message, rep ? rep : "");
                free(rep);
                out_free(&o3);
            }
            out_free(&o2);
        }
        quire_transcript_free(t2);
        out_free(&o1);
    }
    quire_transcript_free(t);
    /* a Gemini signed function call keeps its signature through the transcript */
    const char *g = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]},{\"role\":\"model\",\"parts\":[{\"functionCall\":"
                    "{\"id\":\"f1\",\"name\":\"f\",\"args\":{\"x\":1}},\"thoughtSignature\":\"U0lH\"}]},{\"role\":\"user\",\"parts\":"
                    "[{\"functionResponse\":{\"id\":\"f1\",\"name\":\"f\",\"response\":{\"output\":\"ok\"}}}]}]}";
    quire_transcript *tg = NULL;
    quire_error e;
    CHECK_INT(quire_transcript_parse_dialect("gemini", g, strlen(g), NULL, &tg, &e), QUIRE_OK);
    out og = render(tg, NULL, "gemini", NULL);
    CHECK_HAS(og.req, "{\"functionCall\":{\"id\":\"f1\",\"name\":\"f\",\"args\":{\"x\":1}},\"thoughtSignature\":\"U0lH\"}");
    out_free(&og);
    quire_transcript_free(tg);
    CHECK_INT(quire_transcript_parse_dialect("cohere", "{}", 2, NULL, &tg, &e), QUIRE_E_INVALID);
}

/* ---- transcript checks: pairing errors name the block; results keep their order ---- */
static void test_pairing(void) {
    const char *j =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":["
        "{\"type\":\"toolCall\",\"id\":\"a\",\"name\":\"f\",\"input\":{}},{\"type\":\"toolCall\",\"id\":\"b\",\"name\":\"g\",\"input\":{}}]},"
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"b\",\"content\":\"B\"}]},"
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"a\",\"content\":\"A\"}]}]}";
    quire_transcript *t = tr(j);
    for (size_t k = 0; k < Q_COUNTOF(k_targets); k++) {
        out o = render(t, NULL, k_targets[k][0], k_targets[k][1]);
        CHECK_MSG(o.st == QUIRE_OK, "%s: %s", k_targets[k][0], o.err.message);
        if (o.req) {
            /* the order the tools finished in, as logged requests have it */
            const char *a = strstr(o.req, "\"A\""), *b = strstr(o.req, "\"B\"");
            CHECK_MSG(a && b && b < a, "%s: results reordered: %s", k_targets[k][0], o.req);
            char *rep = NULL;
            CHECK_MSG(valid(o.req, k_targets[k][0], k_targets[k][1], &rep), "%s: %s", k_targets[k][0], rep);
            free(rep);
        }
        out_free(&o);
    }
    quire_transcript_free(t);
    struct { const char *json, *ptr, *msg; } bad[] = {
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\","
         "\"toolCallId\":\"t1\",\"content\":\"r\"}]}]}", "/messages/1/content/0/toolCallId", "answers no toolCall"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\","
         "\"id\":\"t1\",\"name\":\"f\",\"input\":{}}]},{\"role\":\"user\",\"content\":\"y\"}]}",
         "/messages/1/content/0/id", "has no toolResult before the next message"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[]}]}", "/messages/0/content", "at least one content block"},
    };
    for (size_t i = 0; i < Q_COUNTOF(bad); i++) {
        t = tr(bad[i].json);
        out o = render(t, NULL, "openai", NULL);
        CHECK_INT(o.st, QUIRE_E_SCHEMA);
        CHECK_STR(o.err.pointer, bad[i].ptr);
        CHECK_MSG(has(o.err.message, bad[i].msg), "%s", o.err.message);
        out_free(&o);
        quire_transcript_free(t);
    }
    /* no request ends with an unanswered call or an empty message, in any dialect */
    static const char *const tails[] = {
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\","
        "\"id\":\"t1\",\"name\":\"f\",\"input\":{}}]}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[]}]}",
    };
    static const char *const provs[] = {"anthropic", "openai", "openai_responses", "gemini", "bedrock", "mistral", "ollama"};
    for (size_t i = 0; i < Q_COUNTOF(tails); i++) {
        t = tr(tails[i]);
        for (size_t p = 0; p < Q_COUNTOF(provs); p++) {
            out o = render(t, NULL, provs[p], NULL);
            CHECK_MSG(o.st == QUIRE_E_SCHEMA, "%s: %s", provs[p], tails[i]);
            CHECK_MSG(has(o.err.message, i ? "at least one content block" : "cannot end with an unanswered call"),
                      "%s: %s", provs[p], o.err.message);
            out_free(&o);
        }
        quire_transcript_free(t);
    }
}
/* ---- quire_render_options.into: the body in the caller's buffer ---- */
static void test_into(void) {
    quire_transcript *t = tr(k_tool_tail);
    const char *provs[] = {"anthropic", "openai", "gemini", "bedrock"};
    for (size_t pi = 0; pi < sizeof provs / sizeof provs[0]; pi++) {
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = provs[pi];
        out ref = render_opts(t, NULL, &ro);
        CHECK(ref.st == QUIRE_OK);
        if (ref.st) continue;
        size_t n = strlen(ref.req);
        /* room to spare, room for the body and its NUL exactly, one byte
         * short, far too small: the same bytes each time; in the caller's
         * buffer only when they fit */
        size_t caps[] = {n + 4096, n + 1, n, 16};
        for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
            char *buf = malloc(caps[ci]);
            ro.into = buf;
            ro.into_cap = caps[ci];
            quire_render_result res;
            quire_error e;
            CHECK(quire_render(t, NULL, &ro, NULL, &res, &e) == QUIRE_OK);
            bool fits = n < caps[ci];
            CHECK_MSG((res.request.data == buf) == fits, "%s cap %zu: body %s the caller's buffer", provs[pi],
                      caps[ci], res.request.data == buf ? "in" : "not in");
            CHECK(res.request.len == n && memcmp(res.request.data, ref.req, n) == 0);
            CHECK(res.request.data[n] == '\0');
            quire_render_result_free(&res); /* leaves buf alone (ASan sees a wrong free) */
            CHECK(res.request.data == NULL);
            if (fits) CHECK(memcmp(buf, ref.req, n) == 0);
            free(buf);
        }
        /* provider options merge into a new body: still the same bytes */
        ro.params = "{\"providerOptions\":{\"anthropic\":{\"top_k\":5}}}";
        ro.params_len = strlen(ro.params);
        ro.into = NULL;
        ro.into_cap = 0;
        out po = render_opts(t, NULL, &ro);
        char *buf = malloc(strlen(ref.req) + 4096);
        ro.into = buf;
        ro.into_cap = strlen(ref.req) + 4096;
        out po2 = render_opts(t, NULL, &ro);
        CHECK(po.st == po2.st);
        if (po.st == QUIRE_OK && po2.st == QUIRE_OK) CHECK_STR(po2.req, po.req);
        out_free(&po);
        out_free(&po2);
        free(buf);
        out_free(&ref);
    }
    quire_transcript_free(t);
}

/* ---- opaque items and provider tools are written as given: render checks
 * the body with the validator before returning it ---- */
static void verbatim_case(const char *provider, const char *json, bool ok) {
    quire_transcript *t = tr(json);
    CHECK(t != NULL);
    if (!t) return;
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    quire_render_result res;
    quire_error e;
    memset(&e, 0, sizeof e);
    quire_status st = quire_render(t, NULL, &ro, NULL, &res, &e);
    if (ok) {
        CHECK_MSG(st == QUIRE_OK, "%s: %s", provider, e.message);
        if (st == QUIRE_OK) {
            quire_bytes rep = {0};
            quire_error ve;
            CHECK_MSG(quire_validate(res.request.data, res.request.len, &ro, NULL, &rep, &ve) == QUIRE_OK, "%s: %s",
                      provider, rep.data ? rep.data : ve.message);
            quire_bytes_free(&rep);
            quire_render_result_free(&res);
        }
    } else {
        CHECK_MSG(st == QUIRE_E_UNSUPPORTED && strstr(e.message, "as given is invalid"), "%s: status %d: %s", provider,
                  (int)st, e.message);
        if (st == QUIRE_OK) quire_render_result_free(&res);
    }
    quire_transcript_free(t);
}

static void test_verbatim(void) {
#define OPQ(prov, item)                                                                                                \
    "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"opaque\","    \
    "\"provider\":\"" prov "\",\"item\":" item "},{\"type\":\"text\",\"text\":\"y\"}]},{\"role\":\"user\",\"content\":\"z\"}]}"
    /* items the provider would reject: no type, a call without its fields, an unknown part field */
    verbatim_case("openai_responses", OPQ("openai_responses", "{\"type)\":\"reasoning\",\"summary\":[]}"), false);
    verbatim_case("openai_responses", OPQ("openai_responses", "{\"type\":\"function_call\",\"id\":\"x\"}"), false);
    verbatim_case("gemini", OPQ("gemini", "{\"foo\":1}"), false);
    verbatim_case("anthropic", OPQ("anthropic", "{\"foo\":1}"), false);
    verbatim_case("bedrock", OPQ("bedrock_converse", "{\"foo\":1}"), false);
    /* items as the providers send them */
    verbatim_case("openai_responses",
                  OPQ("openai_responses", "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],"
                                          "\"encrypted_content\":\"gAAAA==\"}"), true);
    verbatim_case("gemini", OPQ("gemini", "{\"text\":\"t\",\"thoughtSignature\":\"c2ln\"}"), true);
    /* another provider's opaque item is dropped with an event, never written */
    verbatim_case("anthropic", OPQ("gemini", "{\"foo\":1}"), true);
#undef OPQ
    /* a provider tool, byte-exact: checked the same way */
    verbatim_case("anthropic",
                  "{\"tools\":[{\"kind\":\"provider\",\"provider\":\"anthropic\",\"item\":{\"bogus\":true}}],"
                  "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", false);
    verbatim_case("anthropic",
                  "{\"tools\":[{\"kind\":\"provider\",\"provider\":\"anthropic\",\"item\":{\"type\":"
                  "\"web_search_20250305\",\"name\":\"web_search\"}}],\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                  true);
}

int main(void) {
    test_verbatim();
    test_into();
    test_anthropic_tail();
    test_anthropic_slots();
    test_matrix();
    test_cache_stability();
    test_cache_limits();
    test_lossy();
    test_lossless();
    test_structure();
    test_validator();
    test_caps();
    test_append_only();
    test_append_only_expiry();
    test_from_roundtrip();
    test_pairing();
    TEST_MAIN_END();
}
