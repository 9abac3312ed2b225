/* The live session API (session/session.c, DESIGN 11): open/append/apply/
 * render/accept, pending turns, tool outcomes, compaction, restore, errors
 * located on the caller's JSON, and the property that the log a session
 * records replays to every accepted request byte for byte over random call
 * sequences (appends, applies, renders, failed turns, accepts, compactions,
 * target switches, restores, tool outcomes). */
#include "quire.h"
#include "unit.h"

#include <stdbool.h>
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

/* ---- property: log -> replay == every accepted request; render == stateless render ---- */

static uint64_t g_rng;
static uint32_t rnd(uint32_t n) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((g_rng >> 33) % n);
}

static const char *const k_targets[] = {
    "{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"}", "{\"provider\":\"openai\",\"model\":\"gpt-4o\"}",
    "{\"provider\":\"openai\",\"model\":\"gpt-5\"}",                "{\"provider\":\"openai_responses\"}",
    "{\"provider\":\"gemini\"}",                                    "{\"provider\":\"bedrock\"}",
    "{\"provider\":\"mistral\"}",                                   "{\"provider\":\"ollama\"}",
};
static const char *const k_prov[] = {"anthropic", "openai", "openai", "openai_responses", "gemini", "bedrock", "mistral", "ollama"};
static const char *const k_model[] = {"claude-sonnet-4-5", "gpt-4o", "gpt-5", NULL, NULL, NULL, NULL, NULL};

typedef struct bodies {
    char **b;
    size_t *n;
    size_t count, cap;
} bodies;

static void bodies_push(bodies *bs, const char *p, size_t n) {
    if (bs->count == bs->cap) {
        bs->cap = bs->cap ? bs->cap * 2 : 16;
        bs->b = realloc(bs->b, bs->cap * sizeof *bs->b);
        bs->n = realloc(bs->n, bs->cap * sizeof *bs->n);
    }
    bs->b[bs->count] = malloc(n + 1);
    memcpy(bs->b[bs->count], p, n);
    bs->n[bs->count++] = n;
}

static int g_stateless_checked, g_replayed, g_compactions, g_restores, g_failed_turns, g_switches;
/* long sessions (the memo paths): renders whose first segment is the previous
 * render's (the stored head), renders whose body was also asked contiguous */
static int g_long_renders, g_head_kept, g_contiguous;
static int g_not_subscribed, g_queue_full, g_reconnected, g_bridged, g_interrupts;

/* The stateless render of the session's transcript and state for target ti. */
static void check_stateless(quire_session *s, int ti, int placement, int allow_sys, const char *body, size_t len,
                            const char *events, size_t events_len, int seed) {
    quire_bytes tj, sj;
    quire_error err;
    if (quire_session_transcript(s, 0, &tj, &err) || quire_session_state(s, 0, &sj, &err)) {
        CHECK_MSG(0, "values: %s", err.message);
        return;
    }
    quire_transcript *t = NULL;
    quire_state *st = NULL;
    CHECK_INT(quire_transcript_parse(tj.data, tj.len, NULL, &t, &err), QUIRE_OK);
    CHECK_INT(quire_state_parse(sj.data, sj.len, NULL, &st, &err), QUIRE_OK);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = k_prov[ti];
    ro.model = k_model[ti];
    ro.placement = placement;
    ro.allow_system_slot = allow_sys;
    quire_render_result res;
    if (t && st && quire_render(t, st, &ro, NULL, &res, &err) == QUIRE_OK) {
        CHECK_MSG(res.request.len == len && memcmp(res.request.data, body, len) == 0,
                  "seed %d: session render differs from the stateless render for %s", seed, k_targets[ti]);
        CHECK_MSG(res.events.len == events_len && memcmp(res.events.data, events, events_len) == 0,
                  "seed %d: session events differ from the stateless render's", seed);
        g_stateless_checked++;
        quire_render_result_free(&res);
    } else {
        CHECK_MSG(0, "seed %d: stateless render failed: %s", seed, err.message);
    }
    quire_transcript_free(t);
    quire_state_free(st);
    quire_bytes_free(&tj);
    quire_bytes_free(&sj);
}

/* A random session. steps: its length. long_mode: the incremental paths —
 * no restores (a restored session starts with an empty memo), switches mostly
 * between the dialects with a memo (anthropic, openai chat) and back, the
 * body asked contiguous at random, and the stored head must be reused. */
static void random_session_n(int seed, int steps, bool long_mode) {
    g_rng = (uint64_t)(unsigned)seed * 0x9E3779B97F4A7C15ull + 1u;
    const char *prev_seg0 = NULL;
    int prev_target = -1;
    bool settled = false; /* no switch, compaction or reminder change since the last render */
    bool compacted = false;
    char cfg[512];
    int placement = (int)rnd(2), allow_sys = (int)rnd(2);
    snprintf(cfg, sizeof cfg,
             "{\"sessionId\":\"p%d\",\"target\":%s,\"system\":\"You are agent %d.\","
             "\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],"
             "\"renderPolicy\":{\"placement\":\"%s\",\"systemSlot\":\"%s\"},"
             "\"bridges\":{\"fs\":[\"resources\",\"tools\"]},\"limits\":{\"maxPendingPerServer\":2}}",
             seed, k_targets[0], seed, placement ? "append_only" : "tail", allow_sys ? "allow" : "demote");
    quire_session *s = NULL;
    quire_error err;
    if (quire_session_open(cfg, strlen(cfg), NULL, NULL, &s, &err) != QUIRE_OK) {
        CHECK_MSG(0, "open: %s", err.message);
        return;
    }
    bodies bs = {0};
    char open_ids[4][16];
    int nopen = 0, ncalls = 0, nmsgs = 0, cur_target = 0;
    char answered_ids[64][16];
    int nanswered = 0;
    int last_listen = -1;
    char buf[1024];
    for (int step = 0; step < steps; step++) {
        uint32_t op = rnd(100);
        if (long_mode && op >= 92 && op < 96) op = 60; /* a render instead of a restore */
        if (long_mode && op >= 88 && op < 92 && rnd(4)) op = 60; /* fewer compactions: longer stretches */
        if (nopen) {
            /* answer the open calls: a tool message or an outcome */
            if (rnd(2)) {
                int answered = 0;
                CHECK_INT(quire_session_tool_outcome(s, open_ids[nopen - 1], (quire_tool_outcome)rnd(4),
                                                     rnd(2) ? "\"out\"" : NULL, 5, &answered, NULL, &err),
                          QUIRE_OK);
                CHECK_INT(answered, 1);
            } else {
                snprintf(buf, sizeof buf,
                         "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"%s\",\"content\":\"r%d\"}]}",
                         open_ids[nopen - 1], step);
                CHECK_INT(quire_session_append(s, buf, strlen(buf), &err), QUIRE_OK);
            }
            if (nanswered < 64) strcpy(answered_ids[nanswered++], open_ids[nopen - 1]);
            nopen--;
            nmsgs++;
            continue;
        }
        if (op < 25 || nmsgs == 0) {
            /* a marker of the input (the limit drops the oldest, with events
             * that name messages by their index in the input: before any
             * compaction, which keeps the pre-compaction indices) */
            if (long_mode && !compacted && rnd(5) == 0)
                snprintf(buf, sizeof buf,
                         "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"step %d\","
                         "\"cacheControl\":{\"type\":\"ephemeral\"%s}}]}",
                         step, rnd(3) ? "" : ",\"ttl\":\"1h\"");
            else
                snprintf(buf, sizeof buf, "{\"role\":\"user\",\"content\":\"step %d: do thing %u\"}", step, rnd(1000));
            CHECK_INT(quire_session_append(s, buf, strlen(buf), &err), QUIRE_OK);
            nmsgs++;
        } else if (op < 45 && rnd(3)) {
            /* MCP push: the host's subscriptions, server pushes, reconnects */
            switch (rnd(9)) {
            case 0:
                snprintf(buf, sizeof buf,
                         "{\"type\":\"mcp\",\"server\":\"%s\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":"
                         "{\"capabilities\":{\"reminders\":{\"emit\":%s}}}}}",
                         rnd(2) ? "fs" : "ci", rnd(4) ? "true" : "false");
                break;
            case 1:
            case 2:
            case 7:
                snprintf(buf, sizeof buf,
                         "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\","
                         "\"id\":%d,\"method\":\"resources/%s\",\"params\":{\"uri\":\"file:///u%u\"}}}",
                         step, rnd(3) ? "subscribe" : "unsubscribe", rnd(3));
                break;
            case 3:
                snprintf(buf, sizeof buf,
                         "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
                         "\"notifications/resources/updated\",\"params\":{\"uri\":\"file:///u%u\"}}}",
                         rnd(3));
                break;
            case 4:
                snprintf(buf, sizeof buf, "{\"type\":\"mcp\",\"server\":\"%s\",\"event\":\"reconnected\"}",
                         rnd(2) ? "fs" : "ci");
                break;
            case 5: {
                /* a burst of one to four pushes from one server */
                const char *srv = rnd(2) ? "fs" : "ci";
                size_t n = 0;
                if (rnd(4))
                    n += (size_t)snprintf(buf, sizeof buf,
                                          "{\"type\":\"mcp\",\"server\":\"%s\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":0,"
                                          "\"result\":{\"capabilities\":{\"reminders\":{\"emit\":true}}}}}\n",
                                          srv);
                for (uint32_t k = 0, nk = 1 + rnd(4); k < nk; k++)
                    n += (size_t)snprintf(buf + n, sizeof buf - n,
                                          "{\"type\":\"mcp\",\"server\":\"%s\",\"message\":{\"jsonrpc\":\"2.0\","
                                          "\"method\":\"notifications/reminder\",\"params\":{\"reminder\":{\"body\":"
                                          "\"push %d.%u\"%s}}}}\n",
                                          srv, step, k, rnd(3) ? "" : ",\"mode\":\"interrupt_immediate\"");
                break;
            }
            case 8:
                /* MCP 2026-07-28: a listen stream opened, or the last one cancelled */
                if (last_listen < 0 || rnd(2)) {
                    last_listen = step;
                    snprintf(buf, sizeof buf,
                             "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\","
                             "\"id\":%d,\"method\":\"subscriptions/listen\",\"params\":{\"_meta\":{},\"notifications\":"
                             "{\"resourceSubscriptions\":[\"file:///u%u\"]}}}}",
                             step, rnd(3));
                } else {
                    snprintf(buf, sizeof buf,
                             "{\"type\":\"mcp\",\"server\":\"fs\",\"direction\":\"out\",\"message\":{\"jsonrpc\":\"2.0\","
                             "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%d}}}",
                             last_listen);
                }
                break;
            default:
                snprintf(buf, sizeof buf,
                         "{\"type\":\"mcp\",\"server\":\"fs\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":"
                         "\"notifications/tools/list_changed\"}}");
                break;
            }
            quire_bytes ev;
            CHECK_INT(quire_session_apply(s, buf, strlen(buf), &ev, NULL, &err), QUIRE_OK);
            if (ev.data) {
                g_not_subscribed += strstr(ev.data, "\"not_subscribed\"") != NULL;
                g_queue_full += strstr(ev.data, "\"queue_full\"") != NULL;
                g_reconnected += strstr(ev.data, "\"mcp_reconnected\"") != NULL;
            }
            if (strstr(buf, "resources/updated") && (!ev.data || !strstr(ev.data, "reminder_dropped"))) g_bridged++;
            quire_bytes_free(&ev);
        } else if (op < 45) {
            static const char *const hints[] = {"system", "developer", "user_block", "ephemeral_cache"};
            static const char *const modes[] = {"finish_step", "finish_step", "interrupt_immediate", "audit_only"};
            char ttl[32] = "";
            if (rnd(3)) snprintf(ttl, sizeof ttl, ",\"ttlTurns\":%u", 1 + rnd(3));
            char key[32] = "";
            if (rnd(2)) snprintf(key, sizeof key, ",\"dedupeKey\":\"k%u\"", rnd(3));
            snprintf(buf, sizeof buf,
                     "{\"type\":\"reminder\",\"reminder\":{\"body\":\"note %d\",\"tags\":[\"t%u\"],\"roleHint\":\"%s\","
                     "\"mode\":\"%s\",\"preserveOnCompact\":%s%s%s}}",
                     step, rnd(2), hints[rnd(4)], modes[rnd(4)], rnd(2) ? "true" : "false", ttl, key);
            quire_bytes ev;
            CHECK_INT(quire_session_apply(s, buf, strlen(buf), &ev, NULL, &err), QUIRE_OK);
            quire_bytes_free(&ev);
            settled = false;
        } else if (op < 50) {
            snprintf(buf, sizeof buf, "{\"type\":\"clear\",\"selector\":{\"tag\":\"t%u\"}}", rnd(2));
            quire_bytes ev;
            CHECK_INT(quire_session_apply(s, buf, strlen(buf), &ev, NULL, &err), QUIRE_OK);
            quire_bytes_free(&ev);
        } else if (op < 88) {
            int ti = cur_target;
            const char *target = NULL;
            if (rnd(10) < (long_mode ? 1u : 3u)) {
                g_switches++;
                ti = long_mode && rnd(4) ? (int)rnd(3) : (int)rnd((uint32_t)(sizeof k_targets / sizeof *k_targets));
                target = k_targets[ti];
            }
            uint32_t flags = long_mode && rnd(2) ? QUIRE_SESSION_CONTIGUOUS : 0u;
            quire_session_turn t;
            quire_status st = quire_session_render(s, target, target ? strlen(target) : 0, NULL, 0, flags, &t, &err);
            CHECK_MSG(st == QUIRE_OK, "seed %d step %d: render %s: %s (%s)", seed, step, k_targets[ti], err.message, err.pointer);
            if (st) break;
            char *b = body_of(&t);
            if (flags) {
                CHECK_MSG(t.body && memcmp(t.body, b, t.body_len) == 0, "seed %d: contiguous body differs from its segments",
                          seed);
                g_contiguous++;
            } else {
                CHECK(t.body == NULL);
            }
            if (long_mode) {
                g_long_renders++;
                /* anthropic: the same head (model, system, tools) as the render
                 * before is the stored copy, not new bytes */
                if (ti == 0 && prev_target == 0 && settled && t.nsegments > 1 && t.segments[0].data == prev_seg0)
                    g_head_kept++;
                prev_seg0 = t.nsegments ? t.segments[0].data : NULL;
                prev_target = ti;
                settled = true;
            }
            g_interrupts += t.interrupt_pending != 0;
            check_stateless(s, ti, placement, allow_sys, b, t.body_len, t.events, t.events_len, seed);
            if (rnd(4) == 0) { free(b); g_failed_turns++; continue; } /* a failed model call */
            /* the answer */
            int k = (int)rnd(3);
            int n = snprintf(buf, sizeof buf, "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok %d\"}", step);
            for (int i = 0; i < k; i++) {
                snprintf(open_ids[nopen], sizeof open_ids[0], "c%d", ncalls++);
                n += snprintf(buf + n, sizeof buf - (size_t)n,
                              ",{\"type\":\"toolCall\",\"id\":\"%s\",\"name\":\"read\",\"input\":{\"path\":\"f%d\"}}",
                              open_ids[nopen], i);
                nopen++;
            }
            snprintf(buf + n, sizeof buf - (size_t)n, "]}");
            CHECK_INT(quire_session_accept_message(s, buf, strlen(buf), &err), QUIRE_OK);
            bodies_push(&bs, b, t.body_len);
            free(b);
            nmsgs++;
        } else if (op < 92) {
            quire_bytes rep, ev;
            char sum[32];
            snprintf(sum, sizeof sum, "Summary %d.", step);
            if (quire_session_compact(s, S("{\"keepFirstTurns\":0,\"keepLastTurns\":1}"), sum, strlen(sum), &rep, &ev,
                                      &err) == QUIRE_OK) {
                quire_bytes_free(&rep);
                quire_bytes_free(&ev);
                g_compactions++;
                settled = false;
                compacted = true;
            }
        } else if (op < 96) {
            quire_bytes log;
            CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
            quire_session *s2 = NULL;
            CHECK_INT(quire_session_restore(log.data, log.len, NULL, NULL, &s2, &err), QUIRE_OK);
            quire_bytes_free(&log);
            if (s2) { quire_session_free(s); s = s2; g_restores++; }
        } else if (nanswered) {
            /* a late outcome of an answered call: a reminder */
            int answered = -1;
            quire_bytes ev;
            CHECK_INT(quire_session_tool_outcome(s, answered_ids[rnd((uint32_t)nanswered)], QUIRE_TOOL_CANCELLED, NULL, 0,
                                                 &answered, &ev, &err),
                      QUIRE_OK);
            CHECK_INT(answered, 0);
            quire_bytes_free(&ev);
        }
        (void)cur_target;
    }
    /* the log replays to exactly the accepted requests */
    quire_bytes log;
    CHECK_INT(quire_session_log(s, &log, &err), QUIRE_OK);
    quire_replay *r = NULL;
    CHECK_INT(quire_replay_open(log.data, log.len, NULL, NULL, &r, &err), QUIRE_OK);
    size_t i = 0;
    for (; r;) {
        quire_replay_step step;
        int done = 0;
        if (quire_replay_next(r, &step, &done, &err) != QUIRE_OK) {
            CHECK_MSG(0, "seed %d: replay line %u: %s", seed, err.line, err.message);
            break;
        }
        if (done) break;
        if (!step.request) continue;
        CHECK_MSG(i < bs.count && step.request_len == bs.n[i] && memcmp(step.request, bs.b[i], bs.n[i]) == 0,
                  "seed %d: replayed request %zu differs", seed, i);
        i++;
        g_replayed++;
    }
    CHECK_MSG(i == bs.count, "seed %d: %zu requests replayed, %zu accepted", seed, i, bs.count);
    quire_replay_free(r);
    quire_bytes_free(&log);
    for (size_t k = 0; k < bs.count; k++) free(bs.b[k]);
    free(bs.b);
    free(bs.n);
    quire_session_free(s);
}

static void random_session(int seed) { random_session_n(seed, 60, false); }

int main(void) {
    test_basic_turns();
    test_errors();
    for (int seed = 1; seed <= 150; seed++) random_session(seed);
    /* long sessions: hundreds of turns, compactions mid-way, target switches */
    int compactions0 = g_compactions, switches0 = g_switches;
    for (int seed = 1001; seed <= 1012; seed++) random_session_n(seed, 600, true);
    printf("long sessions: %d renders (%d contiguous), %d kept their head, %d compactions, %d switches\n",
           g_long_renders, g_contiguous, g_head_kept, g_compactions - compactions0, g_switches - switches0);
    CHECK(g_long_renders > 2000 && g_contiguous > 500);
    CHECK(g_compactions - compactions0 > 10 && g_switches - switches0 > 100);
    CHECK(g_head_kept > 300);
    CHECK(g_stateless_checked > 1000);
    CHECK(g_replayed > 1000);
    CHECK(g_compactions > 50 && g_restores > 50 && g_failed_turns > 100 && g_switches > 100);
    CHECK_MSG(g_not_subscribed > 20 && g_queue_full > 5 && g_reconnected > 20 && g_bridged > 20 && g_interrupts > 20,
              "%d not_subscribed, %d queue_full, %d reconnected, %d bridged, %d interrupts", g_not_subscribed, g_queue_full,
              g_reconnected, g_bridged, g_interrupts);
    printf("property: %d compactions, %d restores, %d failed turns, %d target switches\n", g_compactions, g_restores,
           g_failed_turns, g_switches);
    printf("property: %d not_subscribed, %d queue_full, %d reconnected, %d bridged, %d interrupting turns\n",
           g_not_subscribed, g_queue_full, g_reconnected, g_bridged, g_interrupts);
    printf("property: %d renders checked against the stateless render, %d requests replayed\n", g_stateless_checked,
           g_replayed);
    TEST_MAIN_END();
}
