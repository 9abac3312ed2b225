/* Push routing, interrupts and responses into a live session (DESIGN 11, 12):
 * resources/subscribe and unsubscribe recorded per server (direction out
 * lines), resources/updated for a URI nobody subscribed dropped
 * (not_subscribed), subscriptions kept by the state file and by restore, the
 * reconnected event line (mcp_reconnected), the per-server pending queue
 * (maxPendingPerServer, queue_full), interruptPending for
 * interrupt_immediate reminders, and quire_session_accept /
 * quire_session_accept_response with a raw body and a finished stream. Every
 * session's log replays to its accepted requests byte for byte. */
#define _POSIX_C_SOURCE 200809L
#include "quire.h"
#include "unit.h"

#include <stdlib.h>

#define S(lit) lit, sizeof(lit) - 1

static const char k_config[] =
    "{\"sessionId\":\"p1\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
    "\"system\":\"You are a coding agent.\",\"bridges\":{\"fs\":[\"resources\"]}}";

#define SUB(uri) "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1," \
                 "\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"" uri "\"}}}"
#define UNSUB(uri) "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":2," \
                   "\"method\":\"resources/unsubscribe\",\"params\":{\"uri\":\"" uri "\"}}}"
#define UPD(uri) "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":" \
                 "\"notifications/resources/updated\",\"params\":{\"uri\":\"" uri "\"}}}"
#define ANSWER "{\"role\":\"assistant\",\"content\":\"ok\"}"

static int count_sub(const char *h, const char *n) {
    int c = 0;
    for (const char *p = h ? strstr(h, n) : NULL; p; p = strstr(p + 1, n)) c++;
    return c;
}

static char *body_of(const quire_session_turn *t) {
    char *b = malloc(t->body_len + 1), *p = b;
    for (size_t i = 0; i < t->nsegments; i++) {
        memcpy(p, t->segments[i].data, t->segments[i].len);
        p += t->segments[i].len;
    }
    *p = '\0';
    return b;
}

/* apply one line, return its events (caller frees) */
static char *apply(quire_session *s, const char *line, quire_status want) {
    quire_bytes ev = {0};
    quire_error err;
    quire_status st = quire_session_apply(s, line, strlen(line), &ev, NULL, &err);
    CHECK_MSG(st == want, "apply %s: %s (%s)", line, quire_status_name(st), st ? err.message : "");
    char *r = strdup(ev.data ? ev.data : "");
    quire_bytes_free(&ev);
    return r;
}

static char *subs(const quire_session *s, const char *server) {
    quire_bytes out;
    quire_error err;
    CHECK_INT(quire_session_subscriptions(s, server, &out, &err), QUIRE_OK);
    char *r = strdup(out.data ? out.data : "");
    quire_bytes_free(&out);
    return r;
}

/* Replays the session's log and checks the requests against the given bodies. */
static void check_replay(const quire_session *s, char **bodies, size_t n, const char *want_event) {
    quire_bytes log;
    quire_error err;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    quire_replay *r = NULL;
    CHECK_INT(quire_replay_open(log.data, log.len, NULL, NULL, &r, &err), QUIRE_OK);
    size_t i = 0;
    int saw_event = want_event == NULL;
    for (; r;) {
        quire_replay_step step;
        int done = 0;
        if (quire_replay_next(r, &step, &done, &err) != QUIRE_OK) {
            CHECK_MSG(0, "replay line %u: %s", err.line, err.message);
            break;
        }
        if (done) break;
        if (want_event && step.output) { /* output is not NUL-terminated */
            size_t k = strlen(want_event);
            for (size_t o = 0; o + k <= step.output_len && !saw_event; o++)
                saw_event = memcmp(step.output + o, want_event, k) == 0;
        }
        if (!step.request) continue;
        CHECK_MSG(i < n && step.request_len == strlen(bodies[i]) && memcmp(step.request, bodies[i], step.request_len) == 0,
                  "replayed request %zu differs", i);
        i++;
    }
    CHECK_INT(i, n);
    CHECK_MSG(saw_event, "the replay writes %s", want_event);
    quire_replay_free(r);
    quire_bytes_free(&log);
}

static void test_subscriptions(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S(k_config), NULL, NULL, &s, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"Watch the files.\"}"), &err), QUIRE_OK);
    /* nobody subscribed: dropped with not_subscribed, nothing injected */
    char *ev = apply(s, UPD("file:///a.c"), QUIRE_OK);
    CHECK(strstr(ev, "{\"sessionUpdate\":\"reminder_dropped\",\"reason\":\"not_subscribed\"") == ev);
    CHECK(strstr(ev, "\"origin\":\"mcp:fs\"") && strstr(ev, "file:///a.c"));
    free(ev);
    char *j = subs(s, "fs");
    CHECK_STR(j, "[]");
    free(j);
    /* subscribe two URIs (a repeat is a no-op), then the update is bridged */
    free(apply(s, SUB("file:///a.c") "\n" SUB("file:///b.c") "\n" SUB("file:///a.c"), QUIRE_OK));
    j = subs(s, "fs");
    CHECK_STR(j, "[\"file:///a.c\",\"file:///b.c\"]");
    free(j);
    j = subs(s, NULL);
    CHECK_STR(j, "{\"fs\":[\"file:///a.c\",\"file:///b.c\"]}");
    free(j);
    j = subs(s, "nobody");
    CHECK_STR(j, "[]");
    free(j);
    ev = apply(s, UPD("file:///a.c"), QUIRE_OK);
    CHECK(count_sub(ev, "reminder_dropped") == 0);
    free(ev);
    quire_session_turn t;
    char *bodies[4];
    size_t nb = 0;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    bodies[nb] = body_of(&t);
    CHECK(strstr(bodies[nb], "Resource file:///a.c changed") != NULL);
    CHECK_INT(t.interrupt_pending, 0);
    nb++;
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    /* the state file keeps them; restore keeps them */
    quire_bytes st;
    CHECK_INT(quire_session_state(s, 0, &st, &err), QUIRE_OK);
    CHECK(strstr(st.data, "\"bridges\":[\"resources\"],\"subscriptions\":[\"file:///a.c\",\"file:///b.c\"]") != NULL);
    quire_state *ps = NULL;
    CHECK_INT(quire_state_parse(st.data, st.len, NULL, &ps, &err), QUIRE_OK);
    quire_bytes st2;
    CHECK_INT(quire_state_write(ps, 0, &st2, &err), QUIRE_OK);
    CHECK_STR(st2.data, st.data);
    quire_bytes_free(&st2);
    quire_bytes sj;
    CHECK_INT(quire_state_subscriptions(ps, "fs", &sj, &err), QUIRE_OK);
    CHECK_STR(sj.data, "[\"file:///a.c\",\"file:///b.c\"]");
    quire_bytes_free(&sj);
    quire_state_free(ps);
    quire_bytes_free(&st);
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    CHECK(strstr(log.data, "\"direction\":\"out\"") != NULL);
    quire_session *s2 = NULL;
    CHECK_INT(quire_session_restore(log.data, log.len, NULL, NULL, &s2, &err), QUIRE_OK);
    quire_bytes_free(&log);
    j = subs(s2, "fs");
    CHECK_STR(j, "[\"file:///a.c\",\"file:///b.c\"]");
    free(j);
    quire_session_free(s2);
    /* unsubscribe: dropped again; unsubscribing what is not subscribed is a no-op */
    free(apply(s, UNSUB("file:///a.c") "\n" UNSUB("file:///zzz"), QUIRE_OK));
    j = subs(s, "fs");
    CHECK_STR(j, "[\"file:///b.c\"]");
    free(j);
    ev = apply(s, UPD("file:///a.c"), QUIRE_OK);
    CHECK(strstr(ev, "\"reason\":\"not_subscribed\"") != NULL);
    free(ev);
    /* a server without the bridge stays silent whatever the subscriptions */
    ev = apply(s, "{\"type\":\"mcp\",\"server\":\"db\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":9,"
                  "\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"db://t\"}}}\n"
                  "{\"type\":\"mcp\",\"server\":\"db\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
                  "\"notifications/resources/updated\",\"params\":{\"uri\":\"db://t\"}}}",
               QUIRE_OK);
    CHECK_STR(ev, "");
    free(ev);
    j = subs(s, NULL);
    CHECK_STR(j, "{\"fs\":[\"file:///b.c\"],\"db\":[\"db://t\"]}");
    free(j);
    /* other outgoing requests are recorded in the log and change nothing */
    free(apply(s, "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":3,"
                  "\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///c.c\"}}}",
               QUIRE_OK));
    /* reconnect: mcp_reconnected lists what to re-send; the subscriptions stay */
    ev = apply(s, "{\"type\":\"mcp\",\"server\":\"fs\",\"event\":\"reconnected\"}", QUIRE_OK);
    CHECK_STR(ev, "{\"sessionUpdate\":\"mcp_reconnected\",\"server\":\"fs\",\"subscriptions\":[\"file:///b.c\"]}\n");
    free(ev);
    ev = apply(s, UPD("file:///b.c"), QUIRE_OK);
    CHECK(count_sub(ev, "reminder_dropped") == 0);
    free(ev);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    bodies[nb] = body_of(&t);
    CHECK(strstr(bodies[nb], "Resource file:///b.c changed") != NULL);
    nb++;
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    check_replay(s, bodies, nb, "\"mcp_reconnected\"");
    for (size_t i = 0; i < nb; i++) free(bodies[i]);
    quire_session_free(s);
}

static void test_line_errors(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S(k_config), NULL, NULL, &s, &err), QUIRE_OK);
    static const struct {
        const char *line, *pointer;
    } bad[] = {
        {"{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"sideways\",\"message\":{}}", "/direction"},
        {"{\"type\":\"mcp\",\"server\":\"fs\",\"event\":\"exploded\"}", "/event"},
        {"{\"type\":\"mcp\",\"server\":\"fs\",\"event\":\"reconnected\",\"message\":{}}", "/event"},
        {"{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,"
         "\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"\"}}}",
         "/message/params/uri"},
        {"{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,"
         "\"method\":\"resources/unsubscribe\",\"params\":{}}}",
         "/message/params"},
        {"{\"type\":\"mcp\",\"server\":\"fs\"}", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        quire_bytes ev;
        quire_status st = quire_session_apply(s, bad[i].line, strlen(bad[i].line), &ev, NULL, &err);
        CHECK_MSG(st == QUIRE_E_SESSION, "case %zu: %s", i, quire_status_name(st));
        if (st) CHECK_STR(err.pointer, bad[i].pointer);
        CHECK(err.line == 1 && err.column >= 1);
    }
    /* nothing of it reached the log */
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    CHECK_INT(count_sub(log.data, "\n"), 1);
    quire_bytes_free(&log);
    /* a bad bridges configuration */
    quire_session *s2 = NULL;
    CHECK_INT(quire_session_open(S("{\"target\":{\"provider\":\"anthropic\"},\"bridges\":{\"fs\":[\"files\"]}}"), NULL, NULL,
                                 &s2, &err),
              QUIRE_E_SESSION);
    CHECK_STR(err.pointer, "/bridges/fs/0");
    CHECK(s2 == NULL);
    quire_session_free(s);
}

static void test_pending_queue(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S("{\"sessionId\":\"q\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
                                   "\"limits\":{\"maxPendingPerServer\":2}}"),
                                 NULL, NULL, &s, &err),
              QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"go\"}"), &err), QUIRE_OK);
    free(apply(s, "{\"type\":\"mcp\",\"server\":\"ci\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":"
                  "{\"reminders\":{\"emit\":true}}}}}",
               QUIRE_OK));
#define PUSH(id) "{\"type\":\"mcp\",\"server\":\"ci\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"notifications/reminder\"," \
                 "\"params\":{\"reminder\":{\"id\":\"" id "\",\"body\":\"build " id "\"}}}}"
    char *ev = apply(s, PUSH("r1") "\n" PUSH("r2"), QUIRE_OK);
    CHECK(count_sub(ev, "reminder_dropped") == 0);
    free(ev);
    ev = apply(s, PUSH("r3"), QUIRE_OK);
    CHECK(strstr(ev, "{\"sessionUpdate\":\"reminder_dropped\",\"reminderId\":\"r1\",\"reason\":\"queue_full\"") == ev);
    CHECK(strstr(ev, "\"origin\":\"mcp:ci\"") != NULL);
    free(ev);
    /* the host is not a server: its reminders never count */
    ev = apply(s, "{\"type\":\"reminder\",\"reminder\":{\"id\":\"h1\",\"body\":\"host note\"}}", QUIRE_OK);
    CHECK(count_sub(ev, "queue_full") == 0);
    free(ev);
    quire_session_turn t;
    char *bodies[2];
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    bodies[0] = body_of(&t);
    CHECK(strstr(bodies[0], "build r2") && strstr(bodies[0], "build r3") && !strstr(bodies[0], "build r1"));
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    /* rendered reminders left the queue: two more fit */
    ev = apply(s, PUSH("r4") "\n" PUSH("r5"), QUIRE_OK);
    CHECK(count_sub(ev, "reminder_dropped") == 0);
    free(ev);
    quire_bytes st;
    CHECK_INT(quire_session_state(s, 0, &st, &err), QUIRE_OK);
    CHECK(strstr(st.data, "\"maxPendingPerServer\":2") != NULL);
    quire_state *ps = NULL;
    CHECK_INT(quire_state_parse(st.data, st.len, NULL, &ps, &err), QUIRE_OK);
    quire_reminder_limits lim;
    quire_state_limits(ps, &lim);
    CHECK_INT(lim.max_pending_per_server, 2);
    quire_state_free(ps);
    quire_bytes_free(&st);
    /* defaults */
    quire_state_limits(NULL, &lim);
    CHECK_INT(lim.max_pending_per_server, 32);
    ev = apply(s, PUSH("r6"), QUIRE_OK);
    CHECK(strstr(ev, "\"reminderId\":\"r4\",\"reason\":\"queue_full\"") != NULL);
    free(ev);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    bodies[1] = body_of(&t);
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    check_replay(s, bodies, 2, "\"queue_full\"");
    free(bodies[0]);
    free(bodies[1]);
    quire_session_free(s);
#undef PUSH
}

static void test_interrupt(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S(k_config), NULL, NULL, &s, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"run the tests\"}"), &err), QUIRE_OK);
    quire_session_turn t;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_INT(t.interrupt_pending, 0);
    CHECK_INT(quire_session_accept_message(s, S("{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\","
                                                "\"name\":\"bash\",\"input\":{\"cmd\":\"make\"}}]}"),
                                          &err),
              QUIRE_OK);
    /* while the tool batch runs, the host is told to stop */
    free(apply(s, "{\"type\":\"reminder\",\"reminder\":{\"body\":\"Stop: the user cancelled the build.\","
                  "\"mode\":\"interrupt_immediate\",\"ttlTurns\":2}}\n"
                  "{\"type\":\"reminder\",\"reminder\":{\"body\":\"later\",\"mode\":\"finish_step\"}}",
               QUIRE_OK));
    CHECK_INT(quire_session_tool_outcome(s, "c1", QUIRE_TOOL_CANCELLED, NULL, 0, NULL, NULL, &err), QUIRE_OK);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_INT(t.interrupt_pending, 1);
    CHECK(strstr(t.events, "\"mode\":\"interrupt_immediate\"") != NULL);
    /* a failed call renders the same turn: still pending */
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_INT(t.interrupt_pending, 1);
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    /* fired once: the next turn carries it again (ttl 2) but interrupts nothing */
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"ok\"}"), &err), QUIRE_OK);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_INT(t.interrupt_pending, 0);
    char *b = body_of(&t);
    CHECK(strstr(b, "Stop: the user cancelled the build.") != NULL);
    free(b);
    /* an audit_only interrupt is never rendered and interrupts nothing */
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    free(apply(s, "{\"type\":\"reminder\",\"reminder\":{\"body\":\"audit\",\"mode\":\"audit_only\"}}", QUIRE_OK));
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK_INT(t.interrupt_pending, 0);
    quire_session_free(s);
    /* an interrupt the per-turn budget kept out was not rendered: no interrupt */
    CHECK_INT(quire_session_open(S("{\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
                                   "\"limits\":{\"turnBudgetBytes\":10}}"),
                                 NULL, NULL, &s, &err),
              QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"x\"}"), &err), QUIRE_OK);
    free(apply(s, "{\"type\":\"reminder\",\"reminder\":{\"id\":\"old\",\"body\":\"0123456789\",\"mode\":\"interrupt_immediate\"}}\n"
                  "{\"type\":\"reminder\",\"reminder\":{\"id\":\"new\",\"body\":\"abcdefghij\"}}",
               QUIRE_OK));
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    CHECK(strstr(t.events, "\"reminderId\":\"old\",\"reason\":\"budget\"") != NULL);
    CHECK_INT(t.interrupt_pending, 0);
    quire_session_free(s);
}

static const char k_body[] =
    "{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":["
    "{\"type\":\"text\",\"text\":\"Reading it.\"},{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\","
    "\"input\":{\"path\": \"a.c\"}}],\"stop_reason\":\"tool_use\",\"stop_sequence\":null,"
    "\"usage\":{\"input_tokens\":20,\"output_tokens\":7}}";

static const char k_sse[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\",\"type\":\"message\",\"role\":\"assistant\","
    "\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,"
    "\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a.c holds \"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"main().\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

static void test_accept(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S("{\"sessionId\":\"a\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
                                   "\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}]}"),
                                 NULL, NULL, &s, &err),
              QUIRE_OK);
    /* nothing pending */
    CHECK_INT(quire_session_accept(s, S(k_body), NULL, NULL, &err), QUIRE_E_INVALID);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"What is in a.c?\"}"), &err), QUIRE_OK);
    quire_session_turn t;
    char *bodies[3];
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    bodies[0] = body_of(&t);
    /* a provider error body: a clear error, the turn stays pending */
    CHECK_INT(quire_session_accept(s, S("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"),
                                   NULL, NULL, &err),
              QUIRE_E_PROVIDER);
    CHECK_STR(err.field, "overloaded_error");
    CHECK_INT(quire_session_turn_count(s), 0);
    quire_bytes info;
    CHECK_INT(quire_session_accept(s, S(k_body), NULL, &info, &err), QUIRE_OK);
    CHECK(info.data && strstr(info.data, "\"stopReason\":\"tool_use\""));
    quire_bytes_free(&info);
    CHECK_INT(quire_session_turn_count(s), 1);
    CHECK_INT(quire_session_message_count(s), 2);
    quire_bytes tr;
    CHECK_INT(quire_session_transcript(s, 0, &tr, &err), QUIRE_OK);
    CHECK(strstr(tr.data, "\"toolCall\"") && strstr(tr.data, "\"toolu_1\"") && strstr(tr.data, "Reading it."));
    quire_bytes_free(&tr);
    /* the decoded call is open: its outcome answers it */
    int answered = 0;
    CHECK_INT(quire_session_tool_outcome(s, "toolu_1", QUIRE_TOOL_COMPLETED, S("\"int main(void) {}\""), &answered, NULL,
                                         &err),
              QUIRE_OK);
    CHECK_INT(answered, 1);
    /* a stream, fed a byte at a time, accepted once finished */
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    bodies[1] = body_of(&t);
    CHECK(strstr(bodies[1], "\"toolu_1\"") != NULL);
    quire_stream *st = NULL;
    CHECK_INT(quire_stream_new("anthropic", "claude-sonnet-4-5", NULL, NULL, &st, &err), QUIRE_OK);
    for (size_t i = 0; i + 1 < sizeof k_sse; i++) CHECK_INT(quire_stream_feed(st, k_sse + i, 1, NULL, &err), QUIRE_OK);
    quire_response res;
    CHECK_INT(quire_stream_finish(st, &res, NULL, &err), QUIRE_OK);
    quire_stream_free(st);
    CHECK_INT(quire_session_accept_response(s, &res, &err), QUIRE_OK);
    quire_response_free(&res);
    CHECK_INT(quire_session_turn_count(s), 2);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"Thanks.\"}"), &err), QUIRE_OK);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    bodies[2] = body_of(&t);
    CHECK(strstr(bodies[2], "a.c holds main().") != NULL);
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    /* the log holds the decoded messages, one line each, and replays */
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    CHECK(strstr(log.data, "{\"type\":\"message\",\"message\":{\"role\":\"assistant\"") != NULL);
    CHECK(strstr(log.data, "msg_01") == NULL || strstr(log.data, "\"type\":\"error\"") == NULL);
    quire_bytes_free(&log);
    check_replay(s, bodies, 3, NULL);
    for (int i = 0; i < 3; i++) free(bodies[i]);
    quire_session_free(s);
}

/* pretty-printed input still makes one log line per call, and the log replays */
static void test_pretty_input(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S("{\n  \"target\": {\"provider\": \"anthropic\", \"model\": \"claude-sonnet-4-5\"}\n}"),
                                 NULL, NULL, &s, &err),
              QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\r\n  \"role\": \"user\",\r\n  \"content\": \"hi\"\r\n}"), &err), QUIRE_OK);
    CHECK_INT(quire_session_apply(s, S("[\n {\"type\": \"reminder\",\n  \"reminder\": {\"body\": \"note\"}}\n]"), NULL, NULL,
                                  &err),
              QUIRE_OK);
    quire_session_turn t;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    char *b = body_of(&t);
    CHECK_INT(quire_session_accept_message(s, S("{\n \"role\": \"assistant\",\n \"content\": \"hello\"\n}"), &err), QUIRE_OK);
    /* an error in pretty input is still located on it */
    CHECK_INT(quire_session_append(s, S("{\n  \"role\": \"usr\",\n  \"content\": \"x\"\n}"), &err), QUIRE_E_SCHEMA);
    CHECK_STR(err.pointer, "/role");
    CHECK_INT(err.line, 2);
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    CHECK_INT(count_sub(log.data, "\n"), 5); /* session, message, reminder, render, message */
    quire_bytes_free(&log);
    check_replay(s, &b, 1, NULL);
    free(b);
    quire_session_free(s);
}

/* MCP 2026-07-28: subscriptions/listen replaces resources/subscribe */
static void test_listen(void) {
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(S(k_config), NULL, NULL, &s, &err), QUIRE_OK);
    CHECK_INT(quire_session_append(s, S("{\"role\":\"user\",\"content\":\"watch\"}"), &err), QUIRE_OK);
    free(apply(s, "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\","
                  "\"id\":\"listen-1\",\"method\":\"subscriptions/listen\",\"params\":{\"_meta\":{},\"notifications\":"
                  "{\"toolsListChanged\":true,\"resourceSubscriptions\":[\"file:///a.c\",\"file:///b.c\"]}}}}\n"
                  SUB("file:///a.c") "\n"
                  "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\","
                  "\"id\":7,\"method\":\"subscriptions/listen\",\"params\":{\"_meta\":{},\"notifications\":"
                  "{\"resourceSubscriptions\":[\"file:///c.c\"]}}}}",
               QUIRE_OK));
    char *j = subs(s, "fs");
    CHECK_STR(j, "[\"file:///a.c\",\"file:///b.c\",\"file:///c.c\"]");
    free(j);
    quire_bytes st;
    CHECK_INT(quire_session_state(s, 0, &st, &err), QUIRE_OK);
    CHECK(strstr(st.data, "\"subscriptions\":[{\"uri\":\"file:///a.c\",\"listen\":\"listen-1\"},{\"uri\":\"file:///b.c\","
                          "\"listen\":\"listen-1\"},\"file:///a.c\",{\"uri\":\"file:///c.c\",\"listen\":7}]") != NULL);
    quire_state *ps = NULL;
    CHECK_INT(quire_state_parse(st.data, st.len, NULL, &ps, &err), QUIRE_OK);
    quire_bytes st2;
    CHECK_INT(quire_state_write(ps, 0, &st2, &err), QUIRE_OK);
    CHECK_STR(st2.data, st.data);
    quire_bytes_free(&st2);
    quire_state_free(ps);
    quire_bytes_free(&st);
    char *ev = apply(s, UPD("file:///b.c"), QUIRE_OK);
    CHECK(count_sub(ev, "reminder_dropped") == 0);
    free(ev);
    /* the host cancels listen-1 (the id spelled with an escape): b.c ends, a.c stays (also subscribed) */
    free(apply(s, "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\","
                  "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"listen\\u002d1\"}}}",
               QUIRE_OK));
    j = subs(s, "fs");
    CHECK_STR(j, "[\"file:///a.c\",\"file:///c.c\"]");
    free(j);
    ev = apply(s, UPD("file:///b.c"), QUIRE_OK);
    CHECK(strstr(ev, "\"not_subscribed\"") != NULL);
    free(ev);
    /* the server ends stream 7 by answering it */
    free(apply(s, "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":"
                  "{\"resultType\":\"complete\",\"_meta\":{}}}}",
               QUIRE_OK));
    j = subs(s, "fs");
    CHECK_STR(j, "[\"file:///a.c\"]");
    free(j);
    /* bad listen requests are the host's errors */
    static const struct {
        const char *line, *pointer;
    } bad[] = {
        {"{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
         "\"subscriptions/listen\",\"params\":{\"notifications\":{\"resourceSubscriptions\":[\"x\"]}}}}",
         "/message"},
        {"{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
         "\"subscriptions/listen\",\"params\":{\"notifications\":{\"resourceSubscriptions\":[\"x\",1]}}}}",
         "/message/params/notifications/resourceSubscriptions/1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        quire_status stt = quire_session_apply(s, bad[i].line, strlen(bad[i].line), NULL, NULL, &err);
        CHECK_INT(stt, QUIRE_E_SESSION);
        if (stt) CHECK_STR(err.pointer, bad[i].pointer);
    }
    quire_session_turn t;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
    char *b = body_of(&t);
    CHECK_INT(quire_session_accept_message(s, S(ANSWER), &err), QUIRE_OK);
    check_replay(s, &b, 1, NULL);
    free(b);
    quire_session_free(s);
}

int main(void) {
    test_pretty_input();
    test_listen();
    test_subscriptions();
    test_line_errors();
    test_pending_queue();
    test_interrupt();
    test_accept();
    TEST_MAIN_END();
}
