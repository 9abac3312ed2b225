/* Request parameters and the envelope (DESIGN 13, docs/params.md): parsing
 * and its errors, the mapping of every dialect, what a target cannot carry
 * (error, or an event with lossy), providerOptions merging and collisions,
 * the validator on parameter fields, and sessions carrying params into their
 * log and their turn's path and headers. */
#include "quire.h"
#include "unit.h"

#include <stdlib.h>

#define S(lit) lit, sizeof(lit) - 1

static const char k_tr[] =
    "{\"system\":\"Be terse.\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],"
    "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
static const char k_tr_notools[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

typedef struct out {
    quire_status st;
    char body[4096];
    char env[512];
    char events[1024];
    quire_error err;
} out;

static out render(const char *tr, const char *provider, const char *model, const char *params, const char *over,
                  int lossy) {
    out o;
    memset(&o, 0, sizeof o);
    quire_transcript *t = NULL;
    if (quire_transcript_parse(tr, strlen(tr), NULL, &t, &o.err)) { o.st = QUIRE_E_JSON; return o; }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    ro.lossy = lossy;
    if (params) { ro.params = params; ro.params_len = strlen(params); }
    if (over) { ro.params_override = over; ro.params_override_len = strlen(over); }
    quire_render_result r;
    o.st = quire_render(t, NULL, &ro, NULL, &r, &o.err);
    if (!o.st) {
        snprintf(o.body, sizeof o.body, "%.*s", (int)r.request.len, r.request.data);
        snprintf(o.env, sizeof o.env, "%.*s", (int)r.envelope.len, r.envelope.data);
        snprintf(o.events, sizeof o.events, "%.*s", (int)r.events.len, r.events.data ? r.events.data : "");
        quire_render_result_free(&r);
    }
    quire_transcript_free(t);
    return o;
}

#define HAS(s, sub) CHECK_MSG(strstr((s), (sub)) != NULL, "missing %s in %s", (sub), (s))
#define HASNT(s, sub) CHECK_MSG(strstr((s), (sub)) == NULL, "unexpected %s in %s", (sub), (s))

static void test_parse_errors(void) {
    quire_error e;
    CHECK_INT(quire_params_check(S("{\"temperature\":0.2,\"stop\":[\"a\"],\"toolChoice\":{\"tool\":\"x\"}}"), &e), QUIRE_OK);
    CHECK_INT(quire_params_check(S("{\"temprature\":1}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/temprature");
    CHECK(strstr(e.message, "unknown parameter") != NULL);
    CHECK_INT(quire_params_check(S("{\"topP\":1.5}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/topP");
    CHECK_INT(quire_params_check(S("{\"topK\":2.5}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/topK");
    CHECK_INT(quire_params_check(S("{\"stop\":[\"a\",\"\"]}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/stop/1");
    CHECK_INT(quire_params_check(S("{\"toolChoice\":\"any\"}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/toolChoice");
    CHECK_INT(quire_params_check(S("{\"toolChoice\":{\"tool\":\"\"}}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/toolChoice/tool");
    CHECK_INT(quire_params_check(S("{\"responseFormat\":{\"type\":\"jsonSchema\",\"name\":\"a b\",\"schema\":{}}}"), &e),
              QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/responseFormat/name");
    CHECK_INT(quire_params_check(S("{\"responseFormat\":{\"type\":\"jsonSchema\",\"name\":\"r\"}}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/responseFormat");
    CHECK_INT(quire_params_check(S("{\"reasoning\":{\"effort\":\"huge\"}}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/reasoning/effort");
    CHECK_INT(quire_params_check(S("{\"reasoning\":{\"effort\":\"low\",\"budgetTokens\":5}}"), &e), QUIRE_E_SCHEMA);
    CHECK_INT(quire_params_check(S("{\"maxTokens\":0}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/maxTokens");
    CHECK_INT(quire_params_check(S("{\"providerOptions\":{\"openai\":3}}"), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/providerOptions/openai");
    CHECK_INT(quire_params_check(S("{\"stream\":1}"), &e), QUIRE_E_SCHEMA);
    CHECK_INT(e.line, 1);
    CHECK_INT(e.column, 11);
    CHECK_INT(quire_params_check(S("[1]"), &e), QUIRE_E_SCHEMA);
    CHECK_INT(quire_params_check(S("{\"seed\":1,\"seed\":2}"), &e), QUIRE_E_SCHEMA);
}

static void test_mapping(void) {
    const char *p = "{\"maxTokens\":2000,\"temperature\":0.25,\"topP\":0.9,\"stop\":\"END\",\"toolChoice\":\"required\","
                    "\"stream\":true}";
    out o = render(k_tr, "anthropic", NULL, p, NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"max_tokens\":2000");
    HAS(o.body, "\"stop_sequences\":[\"END\"],\"temperature\":0.25,\"top_p\":0.9,\"tool_choice\":{\"type\":\"any\"}");
    HAS(o.body, "\"stream\":true");
    CHECK_STR(o.env, "{\"method\":\"POST\",\"path\":\"/v1/messages\",\"headers\":{\"content-type\":\"application/json\","
                     "\"anthropic-version\":\"2023-06-01\"}}");
    o = render(k_tr, "openai", "gpt-4o", p, NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"max_completion_tokens\":2000,\"temperature\":0.25,\"top_p\":0.9,\"stop\":[\"END\"],\"tool_choice\":\"required\"");
    o = render(k_tr, "mistral", NULL, p, NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"tool_choice\":\"any\"");
    o = render(k_tr, "gemini", NULL, p, NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"toolConfig\":{\"functionCallingConfig\":{\"mode\":\"ANY\"}}");
    HAS(o.body, "\"generationConfig\":{\"stopSequences\":[\"END\"],\"maxOutputTokens\":2000,\"temperature\":0.25,\"topP\":0.9}");
    HASNT(o.body, "stream");
    HAS(o.env, "\"path\":\"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse\"");
    o = render(k_tr, "bedrock", NULL, p, NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"toolChoice\":{\"any\":{}}");
    HAS(o.body, "\"inferenceConfig\":{\"maxTokens\":2000,\"stopSequences\":[\"END\"],\"temperature\":0.25,\"topP\":0.9}");
    HAS(o.env, "\"path\":\"/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream\"");
    o = render(k_tr, "openai_responses", NULL,
               "{\"reasoning\":{\"effort\":\"low\"},\"responseFormat\":{\"type\":\"jsonSchema\",\"name\":\"r\","
               "\"schema\":{\"type\":\"object\"},\"strict\":true},\"toolChoice\":{\"tool\":\"read\"}}",
               NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"tool_choice\":{\"type\":\"function\",\"name\":\"read\"},\"text\":{\"format\":{\"type\":\"json_schema\","
                "\"name\":\"r\",\"schema\":{\"type\":\"object\"},\"strict\":true}},\"reasoning\":{\"effort\":\"low\"}");
    HAS(o.env, "\"path\":\"/v1/responses\"");
    o = render(k_tr, "ollama", NULL, "{\"temperature\":0.1,\"topK\":40,\"seed\":7,\"responseFormat\":\"json\",\"stream\":true}",
               NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"format\":\"json\",\"stream\":true,\"options\":{\"temperature\":0.1,\"top_k\":40,\"seed\":7}");
    CHECK_STR(o.env, "{\"method\":\"POST\",\"path\":\"/api/chat\",\"headers\":{\"content-type\":\"application/json\"}}");
    /* numbers pass byte-exact */
    o = render(k_tr, "openai", NULL, "{\"temperature\":1.0e0,\"seed\":-00}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_JSON); /* -00 is not JSON */
    o = render(k_tr, "openai", NULL, "{\"temperature\":1.0e0}", NULL, 0);
    HAS(o.body, "\"temperature\":1.0e0");
    /* the override object replaces members of the base */
    o = render(k_tr, "openai", NULL, "{\"temperature\":0.5,\"topP\":0.5}", "{\"temperature\":0.7}", 0);
    HAS(o.body, "\"temperature\":0.7,\"top_p\":0.5");
    /* without params nothing changes: no parameter fields, plain envelope */
    o = render(k_tr, "ollama", NULL, NULL, NULL, 0);
    HAS(o.body, "\"stream\":false");
    HASNT(o.body, "options");
}

static void test_unsupported(void) {
    out o = render(k_tr, "openai_responses", NULL, "{\"stop\":[\"x\"]}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/stop");
    CHECK(strstr(o.err.message, "parameter stop cannot be expressed for openai_responses") != NULL);
    o = render(k_tr, "openai_responses", NULL, "{\"stop\":[\"x\"],\"temperature\":0.5}", NULL, 1);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.events, "\"sessionUpdate\":\"request_adjusted\",\"change\":\"parameter_dropped\",\"parameter\":\"stop\"");
    HASNT(o.body, "stop");
    HAS(o.body, "\"temperature\":0.5");
    o = render(k_tr, "anthropic", NULL, "{\"seed\":3}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/seed");
    o = render(k_tr, "anthropic", NULL, "{\"temperature\":1.5}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/temperature");
    o = render(k_tr, "gemini", NULL, "{\"reasoning\":{\"effort\":\"high\"}}", NULL, 0);
    CHECK_STR(o.err.pointer, "/reasoning/effort");
    /* OpenAI's models without reasoning refuse an effort (400 "Unsupported parameter"); reasoning
     * models and names quire does not know take it */
    static const char *const no_effort[][2] = {{"openai", "gpt-4o"}, {"openai", "gpt-4.1-mini"}, {"openai", "o1-mini"},
                                               {"openai", "ft:gpt-4o-2024-08-06:acme::x"}, {"openai_responses", "gpt-4o"},
                                               {"openai", "gpt-5-chat-latest"}};
    for (size_t i = 0; i < sizeof no_effort / sizeof no_effort[0]; i++) {
        o = render(k_tr, no_effort[i][0], no_effort[i][1], "{\"reasoning\":{\"effort\":\"low\"}}", NULL, 0);
        CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
        CHECK_STR(o.err.pointer, "/reasoning/effort");
        o = render(k_tr, no_effort[i][0], no_effort[i][1], "{\"reasoning\":{\"effort\":\"low\"}}", NULL, 1);
        CHECK_INT(o.st, QUIRE_OK);
        HASNT(o.body, "effort");
    }
    static const char *const effort[][2] = {{"openai", "gpt-5"}, {"openai", "o3"}, {"openai", "ft:o4-mini-2025-04-16:acme::y"},
                                            {"openai", "my-deployment"}, {"deepseek", "deepseek-reasoner"}};
    for (size_t i = 0; i < sizeof effort / sizeof effort[0]; i++) {
        o = render(k_tr, effort[i][0], effort[i][1], "{\"reasoning\":{\"effort\":\"low\"}}", NULL, 0);
        CHECK_INT(o.st, QUIRE_OK);
        HAS(o.body, "\"reasoning_effort\":\"low\"");
    }
    o = render(k_tr, "bedrock", "us.amazon.nova-pro-v1:0", "{\"topK\":5}", NULL, 0);
    CHECK_STR(o.err.pointer, "/topK");
    o = render(k_tr, "bedrock", NULL, "{\"topK\":5,\"reasoning\":{\"budgetTokens\":2048}}", NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"additionalModelRequestFields\":{\"top_k\":5,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048}}");
    o = render(k_tr, "anthropic", NULL, "{\"reasoning\":{\"budgetTokens\":512}}", NULL, 0);
    CHECK_STR(o.err.pointer, "/reasoning/budgetTokens");
    o = render(k_tr, "anthropic", NULL, "{\"maxTokens\":8000,\"reasoning\":{\"budgetTokens\":4000}}", NULL, 0);
    HAS(o.body, "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":4000}");
    o = render(k_tr, "anthropic", NULL, "{\"reasoning\":{\"budgetTokens\":2000},\"toolChoice\":\"required\"}", NULL, 0);
    CHECK_STR(o.err.pointer, "/toolChoice");
    o = render(k_tr_notools, "openai", NULL, "{\"toolChoice\":\"auto\"}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/toolChoice");
    o = render(k_tr, "openai", NULL, "{\"toolChoice\":{\"tool\":\"write\"}}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_SCHEMA);
    CHECK_STR(o.err.pointer, "/toolChoice/tool");
    o = render(k_tr, "openai", NULL, "{\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", NULL, 0);
    CHECK_STR(o.err.pointer, "/stop");
}

static void test_provider_options(void) {
    out o = render(k_tr, "gemini", NULL,
                   "{\"maxTokens\":100,\"providerOptions\":{\"gemini\":{\"generationConfig\":{\"candidateCount\":1},"
                   "\"safetySettings\":[]},\"openai\":{\"store\":false}}}",
                   NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"generationConfig\":{\"maxOutputTokens\":100,\"candidateCount\":1},\"safetySettings\":[]}");
    HASNT(o.body, "store");
    o = render(k_tr, "openai", NULL, "{\"providerOptions\":{\"openai\":{\"store\":false,\"service_tier\":\"flex\"}}}", NULL, 0);
    HAS(o.body, "\"store\":false,\"service_tier\":\"flex\"}");
    /* a collision with what quire wrote */
    o = render(k_tr, "openai", NULL, "{\"providerOptions\":{\"openai\":{\"model\":\"gpt-x\"}}}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/providerOptions/openai/model");
    o = render(k_tr, "gemini", NULL, "{\"maxTokens\":5,\"providerOptions\":{\"gemini\":{\"generationConfig\":{\"maxOutputTokens\":9}}}}",
               NULL, 0);
    CHECK_STR(o.err.pointer, "/providerOptions/gemini/generationConfig/maxOutputTokens");
    /* a provider option of the wrong shape: the validator rejects the request */
    o = render(k_tr, "anthropic", NULL, "{\"providerOptions\":{\"anthropic\":{\"top_k\":\"many\"}}}", NULL, 0);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK(strstr(o.err.message, "/top_k: expected an integer") != NULL);
}

static int violations(const char *provider, const char *body, char *rep, size_t cap) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    quire_bytes r;
    quire_error e;
    quire_status st = quire_validate(body, strlen(body), &ro, NULL, &r, &e);
    rep[0] = '\0';
    if (st == QUIRE_E_VALIDATE) { snprintf(rep, cap, "%.*s", (int)r.len, r.data); quire_bytes_free(&r); return 1; }
    return st == QUIRE_OK ? 0 : -1;
}

static void test_validator(void) {
    char rep[1024];
    const char *msgs = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";
    char b[512];
    snprintf(b, sizeof b, "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":100,%s,\"temperature\":1.5}", msgs);
    CHECK_INT(violations("anthropic", b, rep, sizeof rep), 1);
    HAS(rep, "/temperature: temperature must be between 0 and 1");
    snprintf(b, sizeof b, "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":100,%s,\"tool_choice\":{\"type\":\"required\"}}", msgs);
    CHECK_INT(violations("anthropic", b, rep, sizeof rep), 1);
    HAS(rep, "/tool_choice/type: unexpected value \"required\"");
    snprintf(b, sizeof b, "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":2000,%s,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":3000}}", msgs);
    CHECK_INT(violations("anthropic", b, rep, sizeof rep), 1);
    HAS(rep, "/thinking/budget_tokens: a thinking budget must be less than max_tokens");
    snprintf(b, sizeof b, "{\"model\":\"gpt-4o\",%s,\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"tool_choice\":\"any\"}", msgs);
    CHECK_INT(violations("openai", b, rep, sizeof rep), 1);
    HAS(rep, "/stop: at most 4 sequences");
    HAS(rep, "/tool_choice: unexpected value \"any\"");
    snprintf(b, sizeof b, "{\"model\":\"gpt-4o\",%s,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"r\"}}}", msgs);
    CHECK_INT(violations("openai", b, rep, sizeof rep), 1);
    HAS(rep, "/response_format/json_schema/schema: missing");
    CHECK_INT(violations("gemini",
                         "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}],\"toolConfig\":{\"functionCallingConfig\":"
                         "{\"mode\":\"AUTO\",\"allowedFunctionNames\":[\"read\"]}},\"generationConfig\":{\"topP\":2}}",
                         rep, sizeof rep),
              1);
    HAS(rep, "allowedFunctionNames: allowed function names need mode ANY");
    HAS(rep, "/generationConfig/topP: topP must be between 0 and 1");
    CHECK_INT(violations("bedrock",
                         "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"Hi\"}]}],\"toolConfig\":{\"tools\":[],"
                         "\"toolChoice\":{\"auto\":{},\"any\":{}}},\"inferenceConfig\":{\"maxTokens\":0}}",
                         rep, sizeof rep),
              1);
    HAS(rep, "/toolConfig/toolChoice: a tool choice holds exactly one of auto, any, tool");
    HAS(rep, "/inferenceConfig/maxTokens: maxTokens must be at least 1");
    CHECK_INT(violations("openai_responses",
                         "{\"model\":\"gpt-5\",\"input\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"reasoning\":{\"effort\":\"max2\"}}",
                         rep, sizeof rep),
              1);
    HAS(rep, "/reasoning/effort: unexpected value \"max2\"");
    CHECK_INT(violations("ollama", "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"think\":\"max\"}",
                         rep, sizeof rep),
              1);
    HAS(rep, "/think: unexpected value \"max\"");
}

static const char k_config[] =
    "{\"sessionId\":\"s1\",\"target\":{\"provider\":\"gemini\"},\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}]}";

static void test_session(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S(k_config), NULL, NULL, &s, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"Hi\"}"), &err), QUIRE_OK);
    quire_session_turn t;
    CHECK_INT(quire_session_render(s, NULL, 0, S("{\"stream\":true,\"temperature\":0.3}"), QUIRE_SESSION_CONTIGUOUS, &t, &err),
              QUIRE_OK);
    CHECK_STR(t.method, "POST");
    CHECK_STR(t.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    CHECK(t.headers && t.headers_len == strlen(t.headers));
    CHECK_STR(t.headers, "{\"content-type\":\"application/json\"}");
    CHECK(t.body && strstr(t.body, "\"generationConfig\":{\"temperature\":0.3}") != NULL);
    char *first = malloc(t.body_len + 1);
    memcpy(first, t.body, t.body_len);
    first[t.body_len] = '\0';
    /* bad params: an error naming the parameter, no turn */
    CHECK_INT(quire_session_render(s, NULL, 0, S("{\"temperature\":\"hot\"}"), 0, &t, &err), QUIRE_E_SCHEMA);
    CHECK_STR(err.pointer, "/temperature");
    CHECK_INT(quire_session_render(s, NULL, 0, S("{\"stream\":true,\"temperature\":0.3}"), QUIRE_SESSION_CONTIGUOUS, &t, &err),
              QUIRE_OK);
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":\"Hello\"}"), &err), QUIRE_OK);
    /* a target switch to anthropic: its own path and headers */
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"More\"}"), &err), QUIRE_OK);
    CHECK_INT(quire_session_render(s, S("{\"provider\":\"anthropic\"}"), NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_STR(t.path, "/v1/messages");
    CHECK(strstr(t.headers, "\"anthropic-version\":\"2023-06-01\"") != NULL);
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":\"Ok\"}"), &err), QUIRE_OK);
    /* the log carries the params: its replay gives the same first request */
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    CHECK(strstr(log.data, "\"params\":{\"stream\":true,\"temperature\":0.3}") != NULL);
    quire_replay *r = NULL;
    CHECK_INT(quire_replay_open(log.data, log.len, NULL, NULL, &r, &err), QUIRE_OK);
    int seen = 0;
    for (;;) {
        quire_replay_step step;
        int done = 0;
        if (quire_replay_next(r, &step, &done, &err) != QUIRE_OK) { CHECK_MSG(0, "replay: %s", err.message); break; }
        if (done) break;
        if (!step.request) continue;
        if (seen++ == 0) CHECK(step.request_len == strlen(first) && memcmp(step.request, first, step.request_len) == 0);
    }
    CHECK_INT(seen, 2);
    quire_replay_free(r);
    quire_bytes_free(&log);
    free(first);
    quire_session_free(s);
}

static void test_beta_header(void) {
    const char *tr = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"system\",\"content\":\"Be brief.\"}]}";
    out o = render(tr, "anthropic", "claude-opus-4-8", NULL, NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"role\":\"system\"");
    HAS(o.env, "\"anthropic-beta\":\"mid-conversation-system-2026-04-07\"");
    o = render(tr, "anthropic", "claude-sonnet-4-5", NULL, NULL, 0);
    HASNT(o.env, "anthropic-beta");
    /* a one-hour cache marker of the input: the extended TTL beta */
    const char *tr1h = "{\"system\":[{\"type\":\"text\",\"text\":\"Stable.\",\"cacheControl\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"}}],"
                       "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"system\",\"content\":\"Be brief.\"}]}";
    o = render(tr1h, "anthropic", "claude-opus-4-8", NULL, NULL, 0);
    CHECK_INT(o.st, QUIRE_OK);
    HAS(o.body, "\"ttl\":\"1h\"");
    HAS(o.env, "\"anthropic-beta\":\"extended-cache-ttl-2025-04-11,mid-conversation-system-2026-04-07\"");
}

static char *serve(quire_server *sv, const char *line) {
    quire_bytes b;
    quire_error e;
    CHECK_INT(quire_server_handle(sv, line, strlen(line), &b, &e), QUIRE_OK);
    char *r = malloc(b.len + 1);
    if (b.len) memcpy(r, b.data, b.len);
    r[b.len] = '\0';
    quire_bytes_free(&b);
    return r;
}

static void test_serve(void) {
    quire_server *sv = NULL;
    quire_error err;
    CHECK_INT(quire_server_new(NULL, NULL, &sv, &err), QUIRE_OK);
    char *r = serve(sv, "{\"id\":1,\"op\":\"open\",\"session\":\"s\",\"config\":{\"target\":{\"provider\":\"bedrock\"}}}");
    free(r);
    r = serve(sv, "{\"id\":2,\"op\":\"append\",\"session\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"Hi\"}}");
    free(r);
    r = serve(sv, "{\"id\":3,\"op\":\"render\",\"session\":\"s\",\"params\":{\"stream\":true,\"stop\":\"END\"}}");
    HAS(r, "\"path\":\"/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream\"");
    HAS(r, "\"inferenceConfig\":{\"stopSequences\":[\"END\"]}");
    free(r);
    /* an error about a parameter points into params, on the request line */
    r = serve(sv, "{\"id\":4,\"op\":\"render\",\"session\":\"s\",\"params\":{\"seed\":1}}");
    HAS(r, "\"code\":\"QUIRE_E_UNSUPPORTED\"");
    HAS(r, "\"column\":54,\"pointer\":\"/params/seed\"");
    free(r);
    quire_server_free(sv);
}

int main(void) {
    test_serve();
    test_parse_errors();
    test_mapping();
    test_unsupported();
    test_provider_options();
    test_validator();
    test_session();
    test_beta_header();
    TEST_MAIN_END();
}
