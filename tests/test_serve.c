/* quire serve as a library (session/serve.c, docs/serve.md): every op through
 * quire_server_handle, error replies located on the request line (offset,
 * line:col, JSON Pointer, through string escapes too), unknown and misplaced
 * fields, the id echoed byte for byte, blank lines, the over-long-line reply,
 * sessions isolated from each other and many sessions opened and closed. */
#include "quire.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

static quire_server *g_sv;

/* The reply to one request line (malloc'd; "" for no reply). */
static char *ask(const char *line) {
    quire_bytes b;
    quire_error e;
    quire_status st = quire_server_handle(g_sv, line, strlen(line), &b, &e);
    CHECK_INT(st, QUIRE_OK);
    char *r = malloc(b.len + 1);
    if (b.len) memcpy(r, b.data, b.len);
    r[b.len] = '\0';
    CHECK(strchr(r, '\n') == NULL);
    quire_bytes_free(&b);
    return r;
}

/* The reply must equal want exactly. */
#define ASK_EQ(line, want) do { char *r_ = ask(line); CHECK_STR(r_, want); free(r_); } while (0)
/* The reply must contain every given fragment. */
static void ask_has(int ln, const char *line, const char *a, const char *b, const char *c) {
    char *r = ask(line);
    const char *w[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (w[i]) CHECK_MSG(strstr(r, w[i]) != NULL, "line %d: reply %s lacks %s", ln, r, w[i]);
    free(r);
}
#define ASK_HAS(line, a, b, c) ask_has(__LINE__, line, a, b, c)

/* An error reply located at the first occurrence of `at` in line (offset,
 * line 1, column = offset + 1) with the given code and pointer. */
static void ask_err_at(int ln, const char *line, const char *code, const char *pointer, const char *at) {
    char *r = ask(line);
    const char *p = strstr(line, at);
    CHECK_MSG(p != NULL, "line %d: %s not in the request", ln, at);
    size_t off = p ? (size_t)(p - line) : 0;
    char want[600];
    snprintf(want, sizeof want, "\"code\":\"%s\"", code);
    CHECK_MSG(strstr(r, want) != NULL, "line %d: %s lacks %s", ln, r, want);
    snprintf(want, sizeof want, "\"offset\":%zu,\"line\":1,\"column\":%zu,\"pointer\":\"%s\"}}", off, off + 1, pointer);
    CHECK_MSG(strstr(r, want) != NULL, "line %d: %s lacks %s", ln, r, want);
    free(r);
}
#define ASK_ERR_AT(line, code, pointer, at) ask_err_at(__LINE__, line, code, pointer, at)

static const char k_open[] =
    "{\"id\":1,\"op\":\"open\",\"session\":\"s1\",\"config\":{\"sessionId\":\"s1\",\"target\":{\"provider\":\"anthropic\","
    "\"model\":\"claude-sonnet-4-5\"},\"system\":\"You are a coding agent.\",\"tools\":[{\"name\":\"read\","
    "\"inputSchema\":{\"type\":\"object\"}}]}}";

static void test_loop(void) {
    ASK_EQ(k_open, "{\"id\":1,\"ok\":true}");
    CHECK_INT(quire_server_session_count(g_sv), 1);
    ASK_EQ("{\"op\":\"append\",\"session\":\"s1\",\"message\":{\"role\":\"user\",\"content\":\"List src/\"}}",
           "{\"id\":null,\"ok\":true}");
    /* apply: events and ACP responses as arrays */
    ASK_HAS("{\"id\":2,\"op\":\"apply\",\"session\":\"s1\",\"line\":[{\"type\":\"reminder\",\"reminder\":{\"body\":"
            "\"CI is red.\",\"ttlTurns\":1}},{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
            "\"session/inject_reminder\",\"params\":{\"sessionId\":\"s1\",\"body\":\"Be brief.\"}}}]}",
            "{\"id\":2,\"ok\":true,\"events\":[", "\"responses\":[{\"jsonrpc\":\"2.0\",\"id\":7,", "\"reminderId\"");
    /* render: the fields in order, the body inline last */
    char *r1 = ask("{\"id\":3,\"op\":\"render\",\"session\":\"s1\"}");
    static const char k_r1[] =
        "{\"id\":3,\"ok\":true,\"turn\":1,\"method\":\"POST\",\"path\":\"/v1/messages\",\"headers\":{\"content-type\":"
        "\"application/json\",\"anthropic-version\":\"2023-06-01\"},"
        "\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"interruptPending\":false,"
        "\"events\":[{\"sessionUpdate\":\"reminder_emitted\"";
    CHECK_MSG(strncmp(r1, k_r1, sizeof k_r1 - 1) == 0, "%s", r1);
    const char *body = strstr(r1, ",\"body\":{\"model\":\"claude-sonnet-4-5\"");
    CHECK(body != NULL && strstr(body, "CI is red.") && r1[strlen(r1) - 1] == '}');
    /* rendering again (a failed model call) gives the same reply */
    char *r2 = ask("{\"id\":3,\"op\":\"render\",\"session\":\"s1\"}");
    CHECK_STR(r2, r1);
    free(r2);
    /* the same body as the session API gives */
    ASK_HAS("{\"id\":4,\"op\":\"estimate\",\"session\":\"s1\"}", "{\"id\":4,\"ok\":true,\"tokens\":", NULL, NULL);
    /* accept a raw provider response: decoded with the pending turn's target */
    ASK_HAS("{\"id\":5,\"op\":\"accept\",\"session\":\"s1\",\"response\":{\"id\":\"msg_1\",\"type\":\"message\","
            "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\","
            "\"name\":\"read\",\"input\":{\"path\":\"src\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":9,"
            "\"output_tokens\":3}}}",
            "{\"id\":5,\"ok\":true,\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t1\"",
            "\"info\":{", "\"stopReason\":\"tool_use\"");
    /* accept again: no pending turn */
    ASK_ERR_AT("{\"id\":6,\"op\":\"accept\",\"session\":\"s1\",\"message\":{\"role\":\"assistant\",\"content\":\"x\"}}",
               "QUIRE_E_INVALID", "/op", "\"accept\"");
    /* the ttl-1 reminder is gone after the accepted turn */
    ASK_HAS("{\"id\":7,\"op\":\"state\",\"session\":\"s1\"}", "{\"id\":7,\"ok\":true,\"state\":{", "\"turn\":1,", "\"body\":\"Be brief.\""); /* CI is red. expired */
    /* a bad content of an open call: located in the request's content, nothing appended */
    ASK_ERR_AT("{\"op\":\"tool_outcome\",\"session\":\"s1\",\"callId\":\"t1\",\"outcome\":\"completed\",\"content\":"
               "[{\"type\":\"text\",\"text\":\"ok\"},{\"type\": \"bogus\"}]}",
               "QUIRE_E_SCHEMA", "/content/1/type", "\"bogus\"");
    ASK_ERR_AT("{\"op\":\"tool_outcome\",\"session\":\"s1\",\"callId\":\"t1\",\"outcome\":\"completed\",\"content\":"
               "{\"a\":1}}",
               "QUIRE_E_SCHEMA", "/content", "{\"a\"");
    /* tool outcome answers the open call; a second outcome becomes a reminder */
    ASK_EQ("{\"id\":8,\"op\":\"tool_outcome\",\"session\":\"s1\",\"callId\":\"t1\",\"outcome\":\"completed\",\"content\":"
           "\"a.c\\nb.c\"}",
           "{\"id\":8,\"ok\":true,\"answered\":true,\"events\":[]}");
    ASK_HAS("{\"id\":9,\"op\":\"tool_outcome\",\"session\":\"s1\",\"callId\":\"t1\",\"outcome\":\"timeout\"}",
            "{\"id\":9,\"ok\":true,\"answered\":false,\"events\":[]}", NULL, NULL);
    ASK_HAS("{\"id\":10,\"op\":\"render\",\"session\":\"s1\",\"target\":{\"provider\":\"openai\",\"model\":\"gpt-4.1\"}}",
            "\"turn\":2,", "\"provider\":\"openai\",\"model\":\"gpt-4.1\"", "tool_outcome");
    ASK_EQ("{\"id\":11,\"op\":\"accept\",\"session\":\"s1\",\"message\":{\"role\":\"assistant\",\"content\":\"a.c, b.c\"}}",
           "{\"id\":11,\"ok\":true}");
    ASK_HAS("{\"id\":12,\"op\":\"transcript\",\"session\":\"s1\"}",
            "{\"id\":12,\"ok\":true,\"transcript\":{", "\"content\":\"a.c, b.c\"", NULL);
    ASK_HAS("{\"id\":13,\"op\":\"plan\",\"session\":\"s1\",\"policy\":{\"keepLastTurns\":1,\"keepFirstTurns\":0}}",
            "{\"id\":13,\"ok\":true,\"plan\":{", "\"span\":", NULL);
    ASK_HAS("{\"id\":14,\"op\":\"compact\",\"session\":\"s1\",\"policy\":{\"keepLastTurns\":1,\"keepFirstTurns\":0,"
            "\"keepLastSteps\":0},\"summary\":\"The user asked for a listing of src/.\"}",
            "{\"id\":14,\"ok\":true,\"report\":{", "\"events\":[{\"sessionUpdate\":\"transcript_compacted\"", NULL);
    /* the log: one JSON string that restores to the same session */
    char *lg = ask("{\"id\":15,\"op\":\"log\",\"session\":\"s1\"}");
    CHECK(strncmp(lg, "{\"id\":15,\"ok\":true,\"log\":\"{\\\"type\\\":\\\"session\\\"", 40) == 0);
    CHECK(strstr(lg, "{\\\"type\\\":\\\"compact\\\"") != NULL);
    const char *lv = strstr(lg, "\"log\":");
    char *rq = malloc(strlen(lg) + 100);
    snprintf(rq, strlen(lg) + 100, "{\"id\":16,\"op\":\"restore\",\"session\":\"s2\",%.*s}", (int)(strlen(lv) - 1), lv);
    ASK_EQ(rq, "{\"id\":16,\"ok\":true}");
    char *t1 = ask("{\"op\":\"transcript\",\"session\":\"s1\"}");
    char *t2 = ask("{\"op\":\"transcript\",\"session\":\"s2\"}");
    CHECK_STR(t2, t1);
    free(t1);
    free(t2);
    /* the restored log is the log */
    char *lg2 = ask("{\"id\":15,\"op\":\"log\",\"session\":\"s2\"}");
    CHECK_STR(lg2, lg);
    free(lg2);
    free(lg);
    free(rq);
    free(r1);
    ASK_EQ("{\"id\":17,\"op\":\"close\",\"session\":\"s1\"}", "{\"id\":17,\"ok\":true}");
    ASK_EQ("{\"id\":18,\"op\":\"close\",\"session\":\"s2\"}", "{\"id\":18,\"ok\":true}");
    CHECK_INT(quire_server_session_count(g_sv), 0);
}

static void test_errors(void) {
    ASK_EQ(k_open, "{\"id\":1,\"ok\":true}");
    /* not JSON, not an object: id null */
    ASK_EQ("not json", "{\"id\":null,\"error\":{\"code\":\"QUIRE_E_JSON\",\"message\":\"invalid literal (expected null)\","
                       "\"offset\":0,\"line\":1,\"column\":1,\"pointer\":\"\"}}");
    ASK_HAS("[1,2]", "{\"id\":null,\"error\":{\"code\":\"QUIRE_E_SCHEMA\"", NULL, NULL);
    ASK_HAS("{\"id\":5,\"op\":\"log\",\"session\":\"s1\"", "{\"id\":null,\"error\":{\"code\":\"QUIRE_E_JSON\"",
            "\"offset\":33,", NULL);
    /* a request error inside the message: positions on the request line */
    ASK_ERR_AT("{\"id\": 3, \"op\": \"append\", \"session\": \"s1\", \"message\": {\"role\": \"usr\", \"content\": \"x\"}}",
               "QUIRE_E_SCHEMA", "/message/role", "\"usr\"");
    /* inside an array of messages */
    ASK_ERR_AT("{\"op\":\"append\",\"session\":\"s1\",\"message\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\","
               "\"content\":7}]}",
               "QUIRE_E_SCHEMA", "/message/1/content", "7}");
    /* the failed append left nothing behind (all or nothing) */
    ASK_EQ("{\"op\":\"transcript\",\"session\":\"s1\"}", "{\"id\":null,\"ok\":true,\"transcript\":{\"system\":"
           "\"You are a coding agent.\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":[]}}");
    /* unknown field, field of another op, missing field, duplicate field */
    ASK_ERR_AT("{\"id\":7,\"op\":\"log\",\"session\":\"s1\",\"extra\":1}", "QUIRE_E_SCHEMA", "/extra", "\"extra\"");
    ASK_HAS("{\"op\":\"log\",\"session\":\"s1\",\"zzz\":1,\"id\":\"late\"}", "{\"id\":\"late\",\"error\":", NULL, NULL);
    ASK_ERR_AT("{\"id\":8,\"op\":\"log\",\"session\":\"s1\",\"message\":{}}", "QUIRE_E_SCHEMA", "/message", "\"message\"");
    ASK_ERR_AT("{\"id\":9,\"op\":\"append\",\"session\":\"s1\"}", "QUIRE_E_SCHEMA", "/op", "\"append\"");
    ASK_ERR_AT("{\"id\":10,\"op\":\"log\",\"op\":\"log\",\"session\":\"s1\"}", "QUIRE_E_SCHEMA", "/op", "\"op\":\"log\",\"s");
    ASK_HAS("{\"id\":1,\"id\":2,\"op\":\"log\",\"session\":\"s1\"}", "{\"id\":null,\"error\":", "given twice", NULL);
    /* op and session */
    ASK_ERR_AT("{\"id\":11,\"op\":\"frobnicate\",\"session\":\"s1\"}", "QUIRE_E_SCHEMA", "/op", "\"frob");
    ASK_HAS("{\"id\":12,\"session\":\"s1\"}", "{\"id\":12,\"error\":", "no op", NULL);
    ASK_ERR_AT("{\"id\":13,\"op\":\"log\",\"session\":\"nope\"}", "QUIRE_E_INVALID", "/session", "\"nope\"");
    ASK_ERR_AT("{\"id\":14,\"op\":\"log\",\"session\":3}", "QUIRE_E_SCHEMA", "/session", "3}");
    ASK_ERR_AT("{\"id\":15,\"op\":\"open\",\"session\":\"s1\",\"config\":{}}", "QUIRE_E_INVALID", "/session", "\"s1\"");
    ASK_HAS("{\"id\":16,\"op\":\"log\"}", "{\"id\":16,\"error\":", "no session", NULL);
    /* open: a bad configuration, located on the line through its pointer */
    ASK_ERR_AT("{\"op\":\"open\",\"session\":\"s9\",\"config\":{\"target\":{\"provider\":7}}}", "QUIRE_E_SESSION",
               "/config/target/provider", "7}");
    CHECK_INT(quire_server_session_count(g_sv), 1);
    /* restore: a bad log line; the position goes through the string's escapes */
    const char *rs = "{\"op\":\"restore\",\"session\":\"s3\",\"log\":\"{\\\"type\\\":\\\"session\\\",\\\"target\\\":"
                     "{\\\"provider\\\":\\\"anthropic\\\"}}\\n{\\\"type\\\":\\\"message\\\",\\\"message\\\":{\\\"role\\\":"
                     "\\\"usr\\\",\\\"content\\\":\\\"x\\\"}}\\n\"}";
    ASK_ERR_AT(rs, "QUIRE_E_SCHEMA", "/log", "\\\"usr");
    ASK_HAS(rs, "\"message\":\"2:37: /message/role: unknown role", NULL, NULL);
    /* render target, apply line, tool outcome, compact policy, accept */
    ASK_ERR_AT("{\"op\":\"render\",\"session\":\"s1\",\"target\":{\"provider\":\"nosuch\"}}", "QUIRE_E_INVALID",
               "/target", "{\"provider\"");
    ASK_ERR_AT("{\"op\":\"apply\",\"session\":\"s1\",\"line\":{\"type\":\"reminder\",\"reminder\":{\"body\":\"x\","
               "\"ttlTurns\":0}}}",
               "QUIRE_E_REMINDER_TTL", "/line/reminder/ttlTurns", "0}");
    ASK_ERR_AT("{\"op\":\"apply\",\"session\":\"s1\",\"line\":{\"type\":\"render\"}}", "QUIRE_E_INVALID", "/line/type",
               "\"render\"");
    ASK_ERR_AT("{\"op\":\"tool_outcome\",\"session\":\"s1\",\"callId\":\"t1\",\"outcome\":\"exploded\"}", "QUIRE_E_SCHEMA",
               "/outcome", "\"exploded\"");
    ASK_ERR_AT("{\"op\":\"tool_outcome\",\"session\":\"s1\",\"callId\":\"nope\",\"outcome\":\"failed\"}", "QUIRE_E_INVALID",
               "/callId", "\"nope\"");
    ASK_ERR_AT("{\"op\":\"tool_outcome\",\"session\":\"s1\",\"callId\":5,\"outcome\":\"failed\"}", "QUIRE_E_SCHEMA",
               "/callId", "5,");
    ASK_ERR_AT("{\"op\":\"compact\",\"session\":\"s1\",\"policy\":{\"keepLastTurnz\":1}}", "QUIRE_E_INVALID",
               "/policy/keepLastTurnz", "\"keepLastTurnz\"");
    ASK_ERR_AT("{\"op\":\"plan\",\"session\":\"s1\",\"policy\":{\"budgetTokens\":\"x\"}}", "QUIRE_E_INVALID",
               "/policy/budgetTokens", "\"x\"");
    /* an error about the call, not a value of it: the op */
    ASK_EQ("{\"op\":\"open\",\"session\":\"s5\",\"config\":{\"target\":{\"provider\":\"anthropic\"},\"compactPolicy\":"
           "{\"budgetTokens\":1,\"keepLastTurns\":1}}}", "{\"id\":null,\"ok\":true}");
    ASK_EQ("{\"op\":\"append\",\"session\":\"s5\",\"message\":[{\"role\":\"user\",\"content\":\"a long enough first "
           "request\"},{\"role\":\"assistant\",\"content\":\"ok\"},{\"role\":\"user\",\"content\":\"b\"}]}",
           "{\"id\":null,\"ok\":true}");
    ASK_ERR_AT("{\"op\":\"compact\",\"session\":\"s5\"}", "QUIRE_E_BUDGET", "/op", "\"compact\"");
    /* a render error about the transcript: the op, with the transcript's pointer and the session's
     * own advice in the message (not a line of the internal log, not a place under /target) */
    ASK_HAS("{\"op\":\"append\",\"session\":\"s5\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"audio\","
            "\"mediaType\":\"audio/wav\",\"data\":\"UklGRg==\"}]}}", "\"ok\":true", NULL, NULL);
    const char *bad_render[] = {"{\"op\":\"render\",\"session\":\"s5\"}",
                                "{\"op\":\"render\",\"session\":\"s5\",\"target\":{\"provider\":\"bedrock\"}}"};
    for (int i = 0; i < 2; i++) {
        ASK_ERR_AT(bad_render[i], "QUIRE_E_UNSUPPORTED", "/op", "\"render\"");
        ASK_HAS(bad_render[i], "\"message\":\"the session's transcript at /messages/3/content/0: an audio block cannot be "
                "expressed", "(a session whose renderPolicy has \\\"lossy\\\": true would drop it with an event)", NULL);
    }
    /* a peer's invalid text inside an apply's line: that message's reminder is dropped with an
     * event and the ACP request gets -32602 (the whole request was refused, with id null) */
    ASK_HAS("{\"id\":31,\"op\":\"apply\",\"session\":\"s5\",\"line\":{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\","
            "\"id\":14,\"method\":\"session/inject_reminder\",\"params\":{\"body\":\"bad \\ud800 text\"}}}}",
            "{\"id\":31,\"ok\":true,\"events\":[{\"sessionUpdate\":\"reminder_dropped\",\"reason\":\"invalid\"",
            "\"id\":14,\"error\":{\"code\":-32602", NULL);
    ASK_ERR_AT("{\"id\":32,\"op\":\"apply\",\"session\":\"s5\",\"line\":{\"type\":\"acp\\ud800\",\"message\":{}}}",
               "QUIRE_E_JSON", "/line/type", "\\ud800");
    ASK_EQ("{\"op\":\"close\",\"session\":\"s5\"}", "{\"id\":null,\"ok\":true}");
    ASK_ERR_AT("{\"op\":\"compact\",\"session\":\"s1\",\"summary\":7}", "QUIRE_E_SCHEMA", "/summary", "7}");
    ASK_ERR_AT("{\"op\":\"accept\",\"session\":\"s1\"}", "QUIRE_E_SCHEMA", "/op", "\"accept\"");
    ASK_ERR_AT("{\"op\":\"accept\",\"session\":\"s1\",\"message\":{},\"response\":{}}", "QUIRE_E_SCHEMA", "/response",
               "{}}");
    ASK_ERR_AT("{\"op\":\"accept\",\"session\":\"s1\",\"message\":{},\"stream\":true}", "QUIRE_E_SCHEMA", "/stream",
               "true");
    /* a provider's error body, accepted: QUIRE_E_PROVIDER, the turn stays pending */
    ASK_HAS("{\"op\":\"append\",\"session\":\"s1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}", "\"ok\":true", NULL,
            NULL);
    ASK_HAS("{\"op\":\"render\",\"session\":\"s1\"}", "\"ok\":true", NULL, NULL);
    ASK_ERR_AT("{\"op\":\"accept\",\"session\":\"s1\",\"response\":{\"type\":\"error\",\"error\":{\"type\":"
               "\"overloaded_error\",\"message\":\"Overloaded\"}}}",
               "QUIRE_E_PROVIDER", "/response", "{\"type\":\"error\"");
    ASK_ERR_AT("{\"op\":\"accept\",\"session\":\"s1\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}", "QUIRE_E_INVALID",
               "/message/role", "\"user\"");
    /* a streamed response as a string: the SSE text */
    ASK_HAS("{\"op\":\"accept\",\"session\":\"s1\",\"stream\":true,\"response\":\"event: message_start\\ndata: "
            "{\\\"type\\\":\\\"message_start\\\",\\\"message\\\":{\\\"id\\\":\\\"m\\\",\\\"type\\\":\\\"message\\\","
            "\\\"role\\\":\\\"assistant\\\",\\\"model\\\":\\\"claude-sonnet-4-5\\\",\\\"content\\\":[],\\\"usage\\\":"
            "{\\\"input_tokens\\\":1,\\\"output_tokens\\\":1}}}\\n\\nevent: content_block_start\\ndata: {\\\"type\\\":"
            "\\\"content_block_start\\\",\\\"index\\\":0,\\\"content_block\\\":{\\\"type\\\":\\\"text\\\",\\\"text\\\":"
            "\\\"\\\"}}\\n\\nevent: content_block_delta\\ndata: {\\\"type\\\":\\\"content_block_delta\\\",\\\"index\\\":0,"
            "\\\"delta\\\":{\\\"type\\\":\\\"text_delta\\\",\\\"text\\\":\\\"Hello\\\"}}\\n\\nevent: content_block_stop\\n"
            "data: {\\\"type\\\":\\\"content_block_stop\\\",\\\"index\\\":0}\\n\\nevent: message_delta\\ndata: "
            "{\\\"type\\\":\\\"message_delta\\\",\\\"delta\\\":{\\\"stop_reason\\\":\\\"end_turn\\\"},\\\"usage\\\":"
            "{\\\"output_tokens\\\":2}}\\n\\nevent: message_stop\\ndata: {\\\"type\\\":\\\"message_stop\\\"}\\n\\n\"}",
            "\"ok\":true,\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Hello\"}]}", NULL,
            NULL);
    ASK_EQ("{\"id\":99,\"op\":\"close\",\"session\":\"s1\"}", "{\"id\":99,\"ok\":true}");
}

static void test_ids_and_lines(void) {
    /* the id is echoed byte for byte, whatever JSON value it is */
    ASK_EQ(k_open, "{\"id\":1,\"ok\":true}");
    ASK_EQ("{\"id\":1.50e+3,\"op\":\"estimate\",\"session\":\"s1\"}", "{\"id\":1.50e+3,\"ok\":true,\"tokens\":27}");
    ASK_EQ("{\"id\":\"\\u00e9t\\u00E9\\n\",\"op\":\"log\",\"session\":\"zz\"}",
           "{\"id\":\"\\u00e9t\\u00E9\\n\",\"error\":{\"code\":\"QUIRE_E_INVALID\",\"message\":\"no session of this name is open\","
           "\"offset\":45,\"line\":1,\"column\":46,\"pointer\":\"/session\"}}");
    ASK_EQ("{\"id\":{\"a\": [1, {\"b\":null}]},\"op\":\"estimate\",\"session\":\"s1\"}",
           "{\"id\":{\"a\": [1, {\"b\":null}]},\"ok\":true,\"tokens\":27}");
    ASK_EQ("{\"id\":null,\"op\":\"estimate\",\"session\":\"s1\"}", "{\"id\":null,\"ok\":true,\"tokens\":27}");
    ASK_EQ("{\"id\":false,\"op\":\"estimate\",\"session\":\"s1\"}", "{\"id\":false,\"ok\":true,\"tokens\":27}");
    ASK_EQ("  {\"op\":\"estimate\",\"session\":\"s1\",\"id\":-0}  ", "{\"id\":-0,\"ok\":true,\"tokens\":27}");
    /* a request with line breaks (an embedding host): the reply is still one line */
    ASK_EQ("{\"id\":[1,\r\n 2],\n\"op\":\"estimate\",\"session\":\"s1\"}", "{\"id\":[1,   2],\"ok\":true,\"tokens\":27}");
    /* blank lines: no reply */
    ASK_EQ("", "");
    ASK_EQ("   \t\r", "");
    /* the over-long line reply */
    quire_bytes b;
    quire_error e;
    CHECK_INT(quire_server_overlong(g_sv, 100, &b, &e), QUIRE_OK);
    CHECK(b.data && strncmp(b.data, "{\"id\":null,\"error\":{\"code\":\"QUIRE_E_LIMIT\"", 42) == 0);
    CHECK(b.data && strstr(b.data, "\"offset\":100,\"line\":1,\"column\":101,\"pointer\":\"\"}}"));
    quire_bytes_free(&b);
    /* NULL arguments */
    CHECK_INT(quire_server_handle(NULL, "{}", 2, &b, &e), QUIRE_E_INVALID);
    ASK_EQ("{\"op\":\"close\",\"session\":\"s1\"}", "{\"id\":null,\"ok\":true}");
}

static void test_isolation(void) {
    /* two sessions with the same content in different states */
    ASK_EQ(k_open, "{\"id\":1,\"ok\":true}");
    ASK_EQ("{\"op\":\"open\",\"session\":\"s\\u0031b\",\"config\":{\"target\":{\"provider\":\"openai\"}}}",
           "{\"id\":null,\"ok\":true}");
    ASK_EQ("{\"op\":\"append\",\"session\":\"s1\",\"message\":{\"role\":\"user\",\"content\":\"one\"}}", "{\"id\":null,\"ok\":true}");
    ASK_EQ("{\"op\":\"append\",\"session\":\"s1b\",\"message\":{\"role\":\"user\",\"content\":\"two\"}}",
           "{\"id\":null,\"ok\":true}");
    ASK_HAS("{\"op\":\"apply\",\"session\":\"s1\",\"line\":{\"type\":\"reminder\",\"reminder\":{\"body\":\"only s1\"}}}",
            "\"ok\":true", NULL, NULL);
    char *a = ask("{\"op\":\"render\",\"session\":\"s1\"}");
    char *b = ask("{\"op\":\"render\",\"session\":\"s1b\"}");
    CHECK(strstr(a, "\"one\"") && !strstr(a, "\"two\"") && strstr(a, "only s1") && strstr(a, "\"provider\":\"anthropic\""));
    CHECK(strstr(b, "\"two\"") && !strstr(b, "\"one\"") && !strstr(b, "only s1") && strstr(b, "\"provider\":\"openai\""));
    free(a);
    free(b);
    /* accepting in one session leaves the other's turn pending */
    ASK_EQ("{\"op\":\"accept\",\"session\":\"s1\",\"message\":{\"role\":\"assistant\",\"content\":\"A\"}}", "{\"id\":null,\"ok\":true}");
    ASK_HAS("{\"op\":\"state\",\"session\":\"s1\"}", "\"turn\":1,", NULL, NULL);
    ASK_HAS("{\"op\":\"state\",\"session\":\"s1b\"}", "\"turn\":0,", NULL, NULL);
    ASK_EQ("{\"op\":\"accept\",\"session\":\"s1b\",\"message\":{\"role\":\"assistant\",\"content\":\"B\"}}",
           "{\"id\":null,\"ok\":true}");
    /* closing one leaves the other */
    ASK_EQ("{\"op\":\"close\",\"session\":\"s1\"}", "{\"id\":null,\"ok\":true}");
    ASK_HAS("{\"op\":\"transcript\",\"session\":\"s1b\"}", "\"content\":\"B\"", NULL, NULL);
    ASK_EQ("{\"op\":\"close\",\"session\":\"s1b\"}", "{\"id\":null,\"ok\":true}");
}

/* Many sessions, closed in an interleaved order: the table finds every one
 * that is open and none that is closed (deletion keeps probe runs whole). */
static void test_many(void) {
    char line[200];
    const int N = 600;
    for (int i = 0; i < N; i++) {
        snprintf(line, sizeof line, "{\"op\":\"open\",\"session\":\"n%d\",\"config\":{\"target\":{\"provider\":\"anthropic\"}}}", i);
        char *r = ask(line);
        CHECK_STR(r, "{\"id\":null,\"ok\":true}");
        free(r);
    }
    CHECK_INT(quire_server_session_count(g_sv), N);
    for (int i = 0; i < N; i += 3) {
        snprintf(line, sizeof line, "{\"op\":\"close\",\"session\":\"n%d\"}", i);
        char *r = ask(line);
        CHECK_STR(r, "{\"id\":null,\"ok\":true}");
        free(r);
    }
    int found = 0, missing = 0;
    for (int i = 0; i < N; i++) {
        snprintf(line, sizeof line, "{\"op\":\"estimate\",\"session\":\"n%d\"}", i);
        char *r = ask(line);
        if (strstr(r, "\"ok\":true")) found += i % 3 != 0; else missing += i % 3 == 0;
        free(r);
    }
    CHECK_INT(found, N - (N + 2) / 3);
    CHECK_INT(missing, (N + 2) / 3);
    CHECK_INT(quire_server_session_count(g_sv), N - (N + 2) / 3);
    /* the rest are freed with the server */
}

int main(void) {
    quire_error e;
    CHECK_INT(quire_server_new(NULL, NULL, &g_sv, &e), QUIRE_OK);
    test_loop();
    test_errors();
    test_ids_and_lines();
    test_isolation();
    test_many();
    quire_server_free(g_sv);
    TEST_MAIN_END();
}
