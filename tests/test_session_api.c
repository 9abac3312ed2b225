/* The live session API (session/session.c, DESIGN 11): open/append/apply/
 * render/accept, pending turns, tool outcomes, compaction, restore, errors
 * located on the caller's JSON, and the property that the log a session
 * records replays to every accepted request byte for byte over random call
 * sequences (appends, applies, renders, failed turns, accepts, compactions,
 * target switches, restores, tool outcomes). */
#include "quire.h"
#include "unit.h"

#include <stdlib.h>

#define S(lit) lit, sizeof(lit) - 1

static const char k_config[] =
    "{\"sessionId\":\"s1\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
    "\"system\":\"You are a coding agent.\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}]}";

static char *body_of(const quire_session_turn *t) {
    size_t n = 0;
    for (size_t i = 0; i < t->nsegments; i++) n += t->segments[i].len;
    char *b = malloc(n + 1), *p = b;
    for (size_t i = 0; i < t->nsegments; i++) {
        memcpy(p, t->segments[i].data, t->segments[i].len);
        p += t->segments[i].len;
    }
    *p = '\0';
    return b;
}

static void test_basic_turns(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S(k_config), NULL, NULL, &s, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"List src/\"}"), &err), QUIRE_OK);
    quire_bytes ev, resp;
    CHECK_INT(quire_session_apply(s,
                                  S("{\"type\":\"reminder\",\"reminder\":{\"body\":\"CI is red.\",\"ttlTurns\":1}}\n"
                                    "{\"type\":\"acp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
                                    "\"session/inject_reminder\",\"params\":{\"sessionId\":\"s1\",\"body\":\"Be brief.\"}}}"),
                                  &ev, &resp, &err),
              QUIRE_OK);
    CHECK(resp.data && strstr(resp.data, "\"reminderId\""));
    quire_bytes_free(&ev);
    quire_bytes_free(&resp);
    quire_session_turn t1, t2;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t1, &err), QUIRE_OK);
    CHECK_INT(t1.turn, 1);
    CHECK(t1.body == NULL);
    CHECK_STR(t1.method, "POST");
    char *b1 = body_of(&t1);
    CHECK(strstr(b1, "CI is red.") != NULL);
    CHECK(t1.events && strstr(t1.events, "reminder_emitted"));
    /* a failed model call: render again, same turn, same bytes */
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &t2, &err), QUIRE_OK);
    CHECK_INT(t2.turn, 1);
    CHECK(t2.body && t2.body_len == strlen(b1) && memcmp(t2.body, b1, t2.body_len) == 0);
    CHECK_INT(quire_session_turn_count(s), 0);
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t1\","
                                                "\"name\":\"read\",\"input\":{\"path\":\"src\"}}]}"), &err),
              QUIRE_OK);
    CHECK_INT(quire_session_turn_count(s), 1);
    /* accept without a pending turn */
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":\"x\"}"), &err), QUIRE_E_INVALID);
    /* the ttl-1 reminder is gone after the accepted turn */
    quire_bytes st;
    CHECK_INT(quire_session_state(s, 0, &st, &err), QUIRE_OK);
    CHECK(st.data && !strstr(st.data, "CI is red.") && strstr(st.data, "\"turn\":1"));
    quire_bytes_free(&st);
    /* tool outcome answers the open call */
    int answered = -1;
    CHECK_INT(quire_session_tool_outcome(s, "t1", QUIRE_TOOL_COMPLETED, S("\"a.c\\nb.c\""), &answered, NULL, &err),
              QUIRE_OK);
    CHECK_INT(answered, 1);
    CHECK_INT(quire_session_message_count(s), 3);
    /* a second outcome of the same call: a reminder keyed tool_outcome:t1, deduped */
    CHECK_INT(quire_session_tool_outcome(s, "t1", QUIRE_TOOL_TIMEOUT, NULL, 0, &answered, &ev, &err), QUIRE_OK);
    CHECK_INT(answered, 0);
    quire_bytes_free(&ev);
    CHECK_INT(quire_session_tool_outcome(s, "t1", QUIRE_TOOL_FAILED, S("\"disk full\""), &answered, &ev, &err), QUIRE_OK);
    CHECK(ev.data && strstr(ev.data, "reminder_deduped"));
    quire_bytes_free(&ev);
    CHECK_INT(quire_session_tool_outcome(s, "nope", QUIRE_TOOL_FAILED, NULL, 0, &answered, NULL, &err), QUIRE_E_INVALID);
    quire_session_turn t3;
    CHECK_INT(quire_session_render(s, S("{\"provider\":\"openai\",\"model\":\"gpt-4o\"}"), NULL, 0, 0, &t3, &err), QUIRE_OK);
    char *b3 = body_of(&t3);
    CHECK(strstr(b3, "tool_outcome") == NULL && strstr(b3, "disk full") != NULL);
    CHECK(strstr(b3, "\"model\":\"gpt-4o\"") != NULL);
    CHECK_STR(t3.provider, "openai");
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":\"Done.\"}"), &err), QUIRE_OK);
    /* the log replays to the two accepted requests */
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    quire_replay *r;
    CHECK_INT(quire_replay_open(log.data, log.len, NULL, NULL, &r, &err), QUIRE_OK);
    int n = 0;
    for (;;) {
        quire_replay_step step;
        int done = 0;
        if (quire_replay_next(r, &step, &done, &err) != QUIRE_OK) { CHECK_MSG(0, "%s", err.message); break; }
        if (done) break;
        if (!step.request) continue;
        const char *want = n == 0 ? b1 : b3;
        CHECK(step.request_len == strlen(want) && memcmp(step.request, want, step.request_len) == 0);
        n++;
    }
    CHECK_INT(n, 2);
    quire_replay_free(r);
    /* restore gives the same session */
    quire_session *s2;
    CHECK_INT(quire_session_restore(log.data, log.len, NULL, NULL, &s2, &err), QUIRE_OK);
    quire_bytes a, b;
    CHECK_INT(quire_session_state(s, 0, &a, &err), QUIRE_OK);
    CHECK_INT(quire_session_state(s2, 0, &b, &err), QUIRE_OK);
    CHECK_STR(a.data, b.data);
    quire_bytes_free(&a);
    quire_bytes_free(&b);
    CHECK_INT(quire_session_transcript(s, 0, &a, &err), QUIRE_OK);
    CHECK_INT(quire_session_transcript(s2, 0, &b, &err), QUIRE_OK);
    CHECK_STR(a.data, b.data);
    quire_bytes_free(&a);
    quire_bytes_free(&b);
    quire_session_free(s2);
    quire_bytes_free(&log);
    free(b1);
    free(b3);
    quire_session_free(s);
}

static void test_errors(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S("{\"target\":{\"provider\":\"anthropic\"},\"bogus\":1}"), NULL, NULL, &s, &err),
              QUIRE_E_SESSION);
    CHECK_STR(err.pointer, "/bogus");
    CHECK(s == NULL);
    CHECK_INT(quire_session_open(S("{\"target\":{\"provider\":\"anthropic\"}}"), NULL, NULL, &s, &err), QUIRE_OK);
    /* an array of messages is all or nothing; the error names the element */
    CHECK_INT(quire_session_append(s, S("[{\"role\":\"user\",\"content\":\"hi\"},\n {\"role\":\"user\",\"content\":[{\"type\":\"bogus\"}]}]"),
                                   &err),
              QUIRE_E_SCHEMA);
    CHECK_STR(err.pointer, "/1/content/0/type");
    CHECK_INT(err.line, 2);
    CHECK_INT(quire_session_message_count(s), 0);
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    CHECK(strstr(log.data, "\"message\"") == NULL);
    quire_bytes_free(&log);
    /* a result that answers nothing */
    CHECK_INT(quire_session_append(s, S("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"zz\",\"content\":\"x\"}]}"),
                                   &err),
              QUIRE_E_SESSION);
    CHECK_STR(err.pointer, "/content/0/toolCallId");
    /* apply takes only reminder lines; all or nothing */
    quire_bytes ev;
    CHECK_INT(quire_session_apply(s, S("[{\"type\":\"reminder\",\"reminder\":{\"body\":\"a\"}},{\"type\":\"render\"}]"), &ev, NULL, &err),
              QUIRE_E_INVALID);
    CHECK_STR(err.pointer, "/1/type");
    quire_bytes st;
    CHECK_INT(quire_session_state(s, 0, &st, &err), QUIRE_OK);
    CHECK(strstr(st.data, "\"body\"") == NULL);
    quire_bytes_free(&st);
    CHECK_INT(quire_session_apply(s, S("{\"type\":\"reminder\",\"reminder\":{\"body\":\"a\",\"ttlTurns\":0}}"), &ev, NULL, &err),
              QUIRE_E_REMINDER_TTL);
    CHECK_STR(err.pointer, "/reminder/ttlTurns");
    /* accept needs an assistant message */
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"hi\"}"), &err), QUIRE_OK);
    quire_session_turn t;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"user\",\"content\":\"x\"}"), &err), QUIRE_E_INVALID);
    CHECK_STR(err.pointer, "/role");
    /* the turn is still pending */
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":\"ok\"}"), &err), QUIRE_OK);
    /* a change drops the pending turn */
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"more\"}"), &err), QUIRE_OK);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"and more\"}"), &err), QUIRE_OK);
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":\"ok\"}"), &err), QUIRE_E_INVALID);
    quire_session_free(s);
}

int main(void) {
    test_basic_turns();
    test_errors();
    TEST_MAIN_END();
}
