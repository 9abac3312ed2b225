/* Request estimates (session/estimate.c, docs/compaction.md "Request estimates"):
 * quire_estimate_request's breakdown and JSON, the session's estimate of its next
 * request (reminders included, target override), and the errors. The family rules
 * themselves are checked number by number in tests/py_estimate_rules.py. */
#include "quire.h"
#include "unit.h"

#include <stdlib.h>

#define S(lit) lit, sizeof(lit) - 1

static const char k_t[] =
    "{\"system\":\"You are a coding agent.\",\"tools\":[{\"name\":\"read\",\"description\":\"Read a file\","
    "\"inputSchema\":{\"type\":\"object\"}}],\"messages\":[{\"role\":\"user\",\"content\":\"List src/\"},"
    "{\"role\":\"assistant\",\"content\":\"src/ has a.c\"},{\"role\":\"user\",\"content\":["
    "{\"type\":\"text\",\"text\":\"and this\"},{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":"
    /* a PNG header for 1000 x 500 */
    "\"iVBORw0KGgoAAAANSUhEUgAAA+gAAAH0CAYAAAAAAAAA\"}]}]}";

static size_t by4(const char *s, size_t n, void *ud) {
    (void)s;
    (*(int *)ud)++;
    return (n + 3) / 4;
}

static void test_request(void) {
    quire_transcript *t = NULL;
    quire_error err;
    CHECK_INT(quire_transcript_parse(S(k_t), NULL, &t, &err), QUIRE_OK);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "openai";
    quire_estimate_options eo = QUIRE_ESTIMATE_OPTIONS_INIT;
    eo.render = &ro;
    int calls = 0;
    eo.count_tokens = by4;
    eo.count_tokens_ud = &calls;
    quire_estimate e;
    quire_bytes js;
    CHECK_INT(quire_estimate_request(t, NULL, &eo, NULL, &e, &js, &err), QUIRE_OK);
    CHECK(calls > 0);
    CHECK_STR(e.family, "openai");
    /* 1000 x 500: one row of two 512-px tiles */
    CHECK_INT(e.media, 85 + 2 * 170);
    CHECK_INT(e.images, 1);
    CHECK_INT(e.system, 4 + 3 + 6);               /* framing, block, 23 bytes / 4 */
    CHECK_INT(e.tools, 8 + 1 + 3 + 5);            /* read, Read a file, {"type":"object"} */
    CHECK_INT(e.messages, 3 + 3 * 4 + 3 + 3 + 3 + 3 + 3 + 2 + 3); /* request, 3 messages, blocks + texts */
    CHECK_INT(e.reminders, 0);
    CHECK_INT(e.total, e.system + e.tools + e.messages + e.reminders + e.media);
    CHECK(js.data && strstr(js.data, "\"family\":\"openai\"") && strstr(js.data, "\"media\":425") &&
          strncmp(js.data, "{\"total\":", 9) == 0);
    quire_bytes_free(&js);
    /* the same on anthropic: tool-use preamble, pixel area / 750 */
    ro.provider = "anthropic";
    CHECK_INT(quire_estimate_request(t, NULL, &eo, NULL, &e, NULL, &err), QUIRE_OK);
    CHECK_STR(e.family, "anthropic");
    CHECK_INT(e.media, (1000 * 500 + 749) / 750);
    CHECK_INT(e.tools, 346 + 8 + 1 + 3 + 5);
    /* quire's own estimator: a positive count, no counter calls */
    eo.count_tokens = NULL;
    calls = 0;
    CHECK_INT(quire_estimate_request(t, NULL, &eo, NULL, &e, NULL, &err), QUIRE_OK);
    CHECK(calls == 0 && e.messages > 10 && e.total > e.media);
    /* errors */
    ro.provider = "nope";
    CHECK_INT(quire_estimate_request(t, NULL, &eo, NULL, &e, NULL, &err), QUIRE_E_INVALID);
    CHECK(strstr(err.message, "unknown provider") != NULL);
    CHECK_INT(quire_estimate_request(NULL, NULL, &eo, NULL, &e, NULL, &err), QUIRE_E_INVALID);
    CHECK_INT(quire_estimate_request(t, NULL, NULL, NULL, &e, NULL, &err), QUIRE_E_INVALID);
    quire_transcript_free(t);
}

static void test_session(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S("{\"sessionId\":\"s1\",\"target\":{\"provider\":\"anthropic\"},"
                                   "\"system\":\"You are a coding agent.\"}"), NULL, NULL, &s, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"List src/\"}"), &err), QUIRE_OK);
    quire_estimate e0, e1, eg;
    CHECK_INT(quire_session_estimate_request(s, NULL, 0, &e0, &err), QUIRE_OK);
    CHECK_STR(e0.family, "anthropic");
    /* the session's estimate stays the transcript's (what compaction budgets measure) */
    uint64_t te = quire_session_estimate(s);
    CHECK(te > 0 && te < e0.total);
    CHECK_INT(e0.reminders, 0);
    CHECK_INT(quire_session_apply(s, S("{\"type\":\"reminder\",\"reminder\":{\"body\":\"CI is red on main; "
                                       "look at the failing test first.\",\"ttlTurns\":1}}"), NULL, NULL, &err),
              QUIRE_OK);
    CHECK_INT(quire_session_estimate_request(s, NULL, 0, &e1, &err), QUIRE_OK);
    CHECK_INT(e1.nreminders, 1);
    CHECK(e1.reminders > 10 && e1.total == e0.total + e1.reminders);
    CHECK_INT(quire_session_estimate(s), te);
    /* another target for this estimate only */
    CHECK_INT(quire_session_estimate_request(s, S("{\"provider\":\"gemini\"}"), &eg, &err), QUIRE_OK);
    CHECK_STR(eg.family, "gemini");
    CHECK(eg.total < e1.total); /* no tool-use preamble, no text factor */
    CHECK_INT(quire_session_estimate_request(s, S("[1]"), &eg, &err), QUIRE_E_SCHEMA);
    CHECK_INT(quire_session_estimate_request(s, S("{\"provider\":5}"), &eg, &err), QUIRE_E_SCHEMA);
    CHECK_STR(err.pointer, "/provider");
    CHECK_INT(quire_session_estimate_request(s, S("{\"provider\":\"nope\"}"), &eg, &err), QUIRE_E_INVALID);
    quire_session_free(s);
    /* no target: the transcript's estimate */
    CHECK_INT(quire_session_open(S("{\"sessionId\":\"s2\"}"), NULL, NULL, &s, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"List src/\"}"), &err), QUIRE_OK);
    CHECK(quire_session_estimate(s) > 0);
    CHECK_INT(quire_session_estimate_request(s, NULL, 0, &eg, &err), QUIRE_E_INVALID);
    quire_session_free(s);
}


/* budgetScope "request": a session compaction whose budget counts the whole
 * request meets it; a budget below what compaction cannot remove is a clear
 * budget error; stateless compaction refuses the scope. */
static void test_request_budget(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S("{\"sessionId\":\"b1\",\"target\":{\"provider\":\"anthropic\"},"
                                   "\"system\":\"You are a coding agent.\"}"), NULL, NULL, &s, &err), QUIRE_OK);
    char m[600];
    for (int i = 0; i < 24; i++) {
        snprintf(m, sizeof m, "{\"role\":\"user\",\"content\":\"Step %d: read the file src/mod%d.c and list every "
                              "function it defines, with its arguments and what it returns.\"}", i, i);
        CHECK_INT(quire_session_append(s, m, strlen(m), &err), QUIRE_OK);
        snprintf(m, sizeof m, "{\"role\":\"assistant\",\"content\":\"src/mod%d.c defines parse_%d(const char *s, "
                              "size_t n) returning an int status, and free_%d(void *p) returning nothing.\"}", i, i, i);
        CHECK_INT(quire_session_append(s, m, strlen(m), &err), QUIRE_OK);
    }
    quire_estimate e0, e1;
    CHECK_INT(quire_session_estimate_request(s, NULL, 0, &e0, &err), QUIRE_OK);
    uint64_t tr = quire_session_estimate(s);
    CHECK(e0.total > tr); /* the request adds overheads and Claude's tokenizer */
    /* below what compaction cannot remove */
    snprintf(m, sizeof m, "{\"budgetTokens\":%llu,\"budgetScope\":\"request\"}", (unsigned long long)(e0.total - tr) / 2);
    CHECK_INT(quire_session_compact(s, m, strlen(m), NULL, 0, NULL, NULL, &err), QUIRE_E_BUDGET);
    CHECK_MSG(strstr(err.message, "for the whole request") != NULL, "%s", err.message);
    /* reachable: after compaction the whole request is within the budget */
    uint64_t budget = e0.total * 2 / 3;
    snprintf(m, sizeof m, "{\"budgetTokens\":%llu,\"budgetScope\":\"request\",\"keepLastTurns\":2}",
             (unsigned long long)budget);
    quire_bytes rep = {0};
    CHECK_INT(quire_session_compact(s, m, strlen(m), NULL, 0, &rep, NULL, &err), QUIRE_OK);
    quire_bytes_free(&rep);
    CHECK_INT(quire_session_estimate_request(s, NULL, 0, &e1, &err), QUIRE_OK);
    CHECK_MSG(e1.total <= budget && e1.total < e0.total, "request %llu after, budget %llu",
              (unsigned long long)e1.total, (unsigned long long)budget);
    /* the log replays (the scope is recorded and applied the same way) */
    quire_bytes log = {0};
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    quire_bytes out = {0};
    CHECK_INT(quire_replay_run(log.data, log.len, NULL, NULL, &out, &err), QUIRE_OK);
    quire_bytes_free(&out);
    quire_bytes_free(&log);
    quire_session_free(s);
    /* stateless compaction has no target: the scope is refused */
    quire_transcript *t = NULL;
    CHECK_INT(quire_transcript_parse(S("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"), NULL, &t, &err), QUIRE_OK);
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    CHECK_INT(quire_compact_policy_parse(S("{\"budgetTokens\":10,\"budgetScope\":\"request\"}"), &p, &err), QUIRE_OK);
    CHECK_INT(p.budget_scope, QUIRE_BUDGET_REQUEST);
    quire_compact_result r;
    CHECK_INT(quire_compact(t, NULL, &p, NULL, 0, NULL, &r, &err), QUIRE_E_INVALID);
    CHECK_INT(quire_compact_policy_parse(S("{\"budgetScope\":\"tokens\"}"), &p, &err), QUIRE_E_INVALID);
    CHECK_STR(err.pointer, "/budgetScope");
    quire_transcript_free(t);
}

int main(void) {
    test_request();
    test_session();
    test_request_budget();
    TEST_MAIN_END();
}
