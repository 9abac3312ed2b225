/* Session logs and replay (session/replay.c): digest vectors, every event type,
 * exact errors for malformed logs, determinism, the step API. */
#include "session/import.h"
#include "quire.h"
#include "unit.h"

#include <stdlib.h>

static const char k_log[] =
    "{\"type\":\"session\",\"sessionId\":\"s1\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
    "\"system\":\"You are a coding agent.\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}]}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"List src/\"}}\n"
    "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"capabilities\":"
    "{\"reminders\":{\"emit\":true}}}}}\n"
    "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"notifications/reminder\","
    "\"params\":{\"reminder\":{\"body\":\"b.c changed\",\"tags\":[\"file_changed\"],\"ttlTurns\":5}}}}\n"
    "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/inject_reminder\","
    "\"params\":{\"sessionId\":\"s1\",\"body\":\"Be brief.\",\"preserveOnCompact\":true}}}\n"
    "\n"
    "{\"type\":\"render\"}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t1\","
    "\"name\":\"read\",\"input\":{\"path\":\"src\"}}]}}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\","
    "\"content\":\"a.c\"}]}}\n"
    "{\"type\":\"clear\",\"selector\":{\"tag\":\"file_changed\"}}\n"
    "{\"type\":\"reminder\",\"reminder\":{\"body\":\"CI is red.\",\"ttlTurns\":1,\"roleHint\":\"user_block\"}}\n"
    "{\"type\":\"render\",\"target\":{\"model\":\"claude-opus-4-1\"}}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"Done.\"}}\n"
    "{\"type\":\"compact\",\"policy\":{\"keepFirstTurns\":0,\"keepLastTurns\":0},\"summary\":\"Listed src.\"}\n"
    "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"Thanks\"}}\n"
    "{\"type\":\"compact\",\"messages\":[{\"role\":\"user\",\"content\":\"replaced\"}]}\n"
    "{\"type\":\"render\"}\n";

static void test_digest(void) {
    char hex[33];
    quire_digest128("", 0, hex);
    CHECK_STR(hex, "6c62272e07bb014262b821756295c58d");
    quire_digest128("a", 1, hex);
    CHECK_STR(hex, "d228cb696f1a8caf78912b704e4a8964");
    quire_digest128("foobar", 6, hex);
    CHECK_STR(hex, "343e1662793c64bf6f0d3597ba446f18");
}

typedef struct lifted {
    char bodies[4][128];
    int n;
} lifted;

static void on_lift(void *ud, const char *b, size_t n) {
    lifted *l = ud;
    if (l->n < 4 && n < 128) { memcpy(l->bodies[l->n], b, n); l->bodies[l->n][n] = '\0'; }
    l->n++;
}

static void test_lift(void) {
    const char *s = "file\n\n<system-reminder>\nBe careful.\n</system-reminder>\n";
    qbuf rest;
    qbuf_init(&rest, NULL);
    lifted l = {{{0}}, 0};
    CHECK_INT(q_lift_reminders(s, strlen(s), &rest, on_lift, &l), 1);
    qbuf_putc(&rest, '\0');
    CHECK_STR(rest.data, "file");
    CHECK_STR(l.bodies[0], "Be careful.");
    qbuf_free(&rest);

    s = "<system-reminder>\nA\n</system-reminder>\nText <system-reminder>B</system-reminder> end <system-reminder>open";
    qbuf_init(&rest, NULL);
    memset(&l, 0, sizeof l);
    CHECK_INT(q_lift_reminders(s, strlen(s), &rest, on_lift, &l), 2);
    qbuf_putc(&rest, '\0');
    CHECK_STR(rest.data, "Text end <system-reminder>open");
    CHECK_STR(l.bodies[0], "A");
    CHECK_STR(l.bodies[1], "B");
    qbuf_free(&rest);
}

static int count(const char *hay, size_t n, const char *needle) {
    int c = 0;
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0) c++;
    return c;
}

static void test_steps(void) {
    quire_replay *r = NULL;
    quire_error e;
    CHECK_INT(quire_replay_open(k_log, strlen(k_log), NULL, NULL, &r, &e), QUIRE_OK);
    const char *types[20];
    uint32_t lines[20];
    int n = 0, renders = 0, compactions = 0, responses = 0;
    int64_t turns[4] = {0};
    uint32_t rems[4] = {0};
    for (;;) {
        quire_replay_step s;
        int done = 0;
        quire_status st = quire_replay_next(r, &s, &done, &e);
        CHECK_MSG(st == QUIRE_OK, "%s", e.message);
        if (st || done) break;
        if (n < 20) { types[n] = s.type; lines[n] = s.line; }
        n++;
        if (s.turn) {
            CHECK(s.request && s.request_len > 0);
            CHECK(s.output_len > 0 && memcmp(s.output, "{\"type\":\"request\"", 17) == 0);
            if (renders < 4) { turns[renders] = s.turn; rems[renders] = s.reminders; }
            renders++;
        }
        compactions += (int)s.compactions;
        responses += count(s.output, s.output_len, "{\"type\":\"response\"");
    }
    quire_replay_free(r);
    CHECK_INT(n, 16); /* the blank line is skipped */
    CHECK_STR(types[0], "session");
    CHECK_STR(types[2], "mcp");
    CHECK_STR(types[4], "acp");
    CHECK_STR(types[5], "render");
    CHECK_INT(lines[5], 7);
    CHECK_STR(types[8], "clear");
    CHECK_STR(types[9], "reminder");
    CHECK_STR(types[12], "compact");
    CHECK_INT(renders, 3);
    CHECK_INT(turns[0], 1);
    CHECK_INT(turns[1], 2);
    CHECK_INT(turns[2], 3);
    CHECK_INT(rems[0], 2); /* the MCP and the ACP reminder */
    CHECK_INT(rems[1], 2); /* file_changed cleared; CI is red + be brief */
    CHECK_INT(rems[2], 1); /* only the preserveOnCompact one survived */
    CHECK_INT(compactions, 2);
    CHECK_INT(responses, 1);
}

static void test_run_deterministic(void) {
    quire_bytes a = {0}, b = {0};
    quire_error e;
    CHECK_INT(quire_replay_run(k_log, strlen(k_log), NULL, NULL, &a, &e), QUIRE_OK);
    CHECK_INT(quire_replay_run(k_log, strlen(k_log), NULL, NULL, &b, &e), QUIRE_OK);
    CHECK(a.len == b.len && a.len > 0 && memcmp(a.data, b.data, a.len) == 0);
    CHECK_INT(count(a.data, a.len, "{\"type\":\"request\""), 3);
    CHECK_INT(count(a.data, a.len, "{\"type\":\"compacted\""), 2);
    CHECK_INT(count(a.data, a.len, "\"sessionUpdate\":\"reminder_expired\""), 2); /* cleared, ttl */
    CHECK_INT(count(a.data, a.len, "\"phase\":\"cleared\""), 1);
    CHECK_INT(count(a.data, a.len, "\"phase\":\"compacted_out\""), 0); /* CI is red had expired by then */
    CHECK_INT(count(a.data, a.len, "replaced"), 1);
    /* digest mode: same structure, no bodies */
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.flags = QUIRE_REPLAY_DIGEST;
    quire_bytes d = {0};
    CHECK_INT(quire_replay_run(k_log, strlen(k_log), &ro, NULL, &d, &e), QUIRE_OK);
    CHECK_INT(count(d.data, d.len, "\"digest\":\""), 3);
    CHECK_INT(count(d.data, d.len, "\"body\":{"), 0);
    /* provider override: every request for the override */
    ro.flags = 0;
    ro.provider = "anthropic";
    ro.model = "claude-haiku-4-5";
    quire_bytes o = {0};
    CHECK_INT(quire_replay_run(k_log, strlen(k_log), &ro, NULL, &o, &e), QUIRE_OK);
    CHECK_INT(count(o.data, o.len, "\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-haiku-4-5\"}"), 3);
    quire_bytes_free(&a);
    quire_bytes_free(&b);
    quire_bytes_free(&d);
    quire_bytes_free(&o);
}

/* Replays log and expects failure with the given line, column, pointer and message. */
static void expect_err(const char *log, quire_status code, uint32_t line, uint32_t col, const char *ptr,
                       const char *msg) {
    quire_bytes out = {0};
    quire_error e;
    memset(&e, 0, sizeof e);
    quire_status st = quire_replay_run(log, strlen(log), NULL, NULL, &out, &e);
    CHECK_INT(st, code);
    CHECK_INT(e.line, line);
    CHECK_INT(e.column, col);
    CHECK_STR(e.pointer, ptr);
    CHECK_STR(e.message, msg);
    CHECK(out.data == NULL);
}

#define HEAD "{\"type\":\"session\",\"sessionId\":\"s\",\"target\":{\"provider\":\"anthropic\"}}\n"

static void test_errors(void) {
    expect_err(HEAD "{\"type\":\"render\",}\n", QUIRE_E_JSON, 2, 18, "/type", "unexpected '}', expected a string key");
    expect_err(HEAD "{\"type\":\"rendr\"}\n", QUIRE_E_SESSION, 2, 9, "/type",
               "unknown event type \"rendr\" (expected session, message, mcp, acp, reminder, clear, render or compact)");
    expect_err(HEAD "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"toolResult\","
                    "\"toolCallId\":\"t9\",\"content\":\"?\"}]}}\n",
               QUIRE_E_SESSION, 2, 89, "/message/content/0/toolCallId",
               "tool result for \"t9\", which no earlier toolCall in the log has");
    /* a decoded id with a line break or a control byte stays on one line (found by fuzz_session) */
    expect_err(HEAD "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"toolResult\","
                    "\"toolCallId\":\"a\\nb\\u0001c\",\"content\":\"?\"}]}}\n",
               QUIRE_E_SESSION, 2, 89, "/message/content/0/toolCallId",
               "tool result for \"a\\nb\\x01c\", which no earlier toolCall in the log has");
    expect_err(HEAD "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"txt\"}]}}\n",
               QUIRE_E_SCHEMA, 2, 63, "/message/content/0/type", "unknown block type \"txt\"");
    expect_err(HEAD HEAD, QUIRE_E_SESSION, 2, 1, "", "a second session event; a log holds one, first");
    expect_err("{\"type\":\"session\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n"
               "{\"type\":\"render\"}\n",
               QUIRE_E_SESSION, 3, 1, "", "no target provider: give one in the session event, the render event or --provider");
    expect_err(HEAD "{\"type\":\"render\",\"model\":\"x\"}\n", QUIRE_E_SESSION, 2, 18, "/model",
               "unknown field \"model\" in render event");
    expect_err(HEAD "[1]\n", QUIRE_E_SESSION, 2, 1, "", "expected an object (a session-log event), got array");
    expect_err(HEAD "{\"type\":\"message\"}\n", QUIRE_E_SESSION, 2, 1, "",
               "missing required field \"message\" in message event");
    expect_err(HEAD "{\"type\":\"compact\",\"summary\":3}\n", QUIRE_E_SESSION, 2, 29, "/summary", "expected string, got number");
    /* the step API refuses to go on after a failure */
    quire_replay *r = NULL;
    quire_error e;
    const char *bad = HEAD "{\"type\":\"x\"}\n{\"type\":\"render\"}\n";
    CHECK_INT(quire_replay_open(bad, strlen(bad), NULL, NULL, &r, &e), QUIRE_OK);
    quire_replay_step s;
    int done = 0;
    CHECK_INT(quire_replay_next(r, &s, &done, &e), QUIRE_OK);
    CHECK_INT(quire_replay_next(r, &s, &done, &e), QUIRE_E_SESSION);
    CHECK_INT(quire_replay_next(r, &s, &done, &e), QUIRE_E_INVALID);
    quire_replay_free(r);
}

static void test_limits(void) {
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_messages = 2;
    quire_bytes out = {0};
    quire_error e;
    const char *log = HEAD "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n"
                           "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"b\"}}\n"
                           "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"c\"}}\n";
    CHECK_INT(quire_replay_run(log, strlen(log), NULL, &o, &out, &e), QUIRE_E_LIMIT);
    CHECK_INT(e.line, 4);
    CHECK_STR(e.message, "the transcript would hold 3 messages, more than the limit of 2");
}

static void test_crlf_and_offsets(void) {
    const char *log = HEAD "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\r\n{\"type\":\"bad\"}\r\n";
    quire_bytes out = {0};
    quire_error e;
    CHECK_INT(quire_replay_run(log, strlen(log), NULL, NULL, &out, &e), QUIRE_E_SESSION);
    CHECK_INT(e.line, 3);
    CHECK_INT(e.column, 9);
    /* offset is into the whole log */
    CHECK(e.offset < strlen(log) && log[e.offset] == '"' && memcmp(log + e.offset, "\"bad\"", 5) == 0);
}

int main(void) {
    test_digest();
    test_lift();
    test_steps();
    test_run_deterministic();
    test_errors();
    test_crlf_and_offsets();
    test_limits();
    TEST_MAIN_END();
}
