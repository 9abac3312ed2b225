/* Ingest: MCP/ACP messages and session-log lines into the reminder state. */
#include "reminders/ingest.h"

#include "reminders/events.h"
#include "reminders/reminder.h"
#include "core/text.h"

#include <stdio.h>

/* Per-call context: a scratch arena for decoded strings, and the JSON error
 * of a message whose text had to be repaired to parse (see parse_lenient). */
typedef struct ictx {
    qarena ar;
    const quire_error *taint;
} ictx;

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static quire_status sess_fail(quire_error *err, const qj_doc *d, uint32_t node, const char *ptr, const char *msg) {
    return q_err_at(err, QUIRE_E_SESSION, node == QJ_NONE ? SIZE_MAX : qj_offset(d, node), ptr, "%s", msg);
}

static void ptr_join(char *out, size_t cap, const char *base, const char *tail) {
    snprintf(out, cap, "%s%s", base ? base : "", tail);
}

/* "<pointer>: <message>" of an error, for event details. */
static void err_detail(const quire_error *e, char *out, size_t cap) {
    if (e->pointer[0]) snprintf(out, cap, "%s: %s", e->pointer, e->message);
    else snprintf(out, cap, "%s", e->message);
}

/* Drops an invalid reminder with an event carrying the error. */
static void drop_invalid(qbuf *events, const char *id, const char *origin, const quire_error *e) {
    char detail[1100];
    err_detail(e, detail, sizeof detail);
    qev_reminder_dropped(events, id, "invalid", detail, origin, quire_status_name(e->code), e->field);
}

/* The string value of obj[key] decoded into ar, or NULL. Out of memory marks
 * events (sticky flag: the caller's check turns it into QUIRE_E_NOMEM). */
static const char *get_str_ev(const qj_doc *d, uint32_t obj, const char *key, qarena *ar, qbuf *events) {
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return NULL;
    uint32_t v = qj_get(d, obj, key);
    if (v == QJ_NONE || qj_type_of(d, v) != QJ_STRING) return NULL;
    const char *r = qj_str_decode(d, v, ar, NULL);
    if (!r && events) events->oom = true;
    return r;
}
#define get_str(d, obj, key, ar) get_str_ev(d, obj, key, ar, events)

static uint32_t get_obj(const qj_doc *d, uint32_t obj, const char *key) {
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return QJ_NONE;
    uint32_t v = qj_get(d, obj, key);
    return v != QJ_NONE && qj_type_of(d, v) == QJ_OBJECT ? v : QJ_NONE;
}

/* True when the text that had to be repaired lies at or below pointer prefix. */
static bool taint_in(const ictx *cx, const char *prefix) {
    if (!cx->taint) return false;
    size_t n = strlen(prefix);
    const char *p = cx->taint->pointer;
    return strncmp(p, prefix, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* The repaired text's JSON error as a reminder rule violation: a body that
 * is not valid text is QUIRE_E_REMINDER_BODY, anything else keeps QUIRE_E_JSON. */
static void taint_error(const ictx *cx, quire_error *e) {
    *e = *cx->taint;
    char field[64] = "";
    const char *end = e->pointer + strlen(e->pointer);
    for (;;) { /* the last token that is not an array index */
        const char *slash = end;
        while (slash > e->pointer && slash[-1] != '/') slash--;
        if (slash <= e->pointer) break;
        bool digits = slash < end;
        for (const char *c = slash; c < end; c++) digits = digits && *c >= '0' && *c <= '9';
        if (!digits) { snprintf(field, sizeof field, "%.*s", (int)(end - slash), slash); break; }
        end = slash - 1;
    }
    bool body = strcmp(field, "body") == 0;
    e->code = body ? QUIRE_E_REMINDER_BODY : QUIRE_E_JSON;
    snprintf(e->message, sizeof e->message, "%s: %.400s (%s)", body ? "body is not valid text" : "invalid text",
             cx->taint->message, quire_status_name(e->code));
    snprintf(e->field, sizeof e->field, "%s", field);
}

/* A key given twice in the JSON-RPC envelope of a peer's message (the message,
 * its params (with params: MCP's; ACP's are the reminder record, checked as
 * one) or result, the result's capabilities and their reminders): JSON
 * readers disagree on which copy counts (first or last), so the host and quire
 * could read two different messages. Such a message is malformed: e is the
 * error, naming the key. */
static bool envelope_dup(const qj_doc *d, uint32_t msg, bool params, const char *ptr, quire_error *e) {
    uint32_t res = get_obj(d, msg, "result"), caps = get_obj(d, res, "capabilities");
    const struct { uint32_t obj; const char *at; } objs[] = {
        {msg, ""}, {params ? get_obj(d, msg, "params") : QJ_NONE, "/params"}, {res, "/result"}, {caps, "/result/capabilities"},
        {get_obj(d, caps, "reminders"), "/result/capabilities/reminders"}};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
        if (objs[i].obj == QJ_NONE || qj_type_of(d, objs[i].obj) != QJ_OBJECT) continue;
        uint32_t dup = qj_find_dup_key(d, objs[i].obj);
        if (dup == QJ_NONE) continue;
        const qj_node *k = qj_at(d, dup);
        char field[64], p[600];
        q_quote_text(field, sizeof field, k->p, k->len);
        snprintf(p, sizeof p, "%s%s", ptr, objs[i].at);
        qrem_fail(e, QUIRE_E_SCHEMA, field, qj_offset(d, dup), p,
                  "duplicate key \"%s\" in a peer's message (readers disagree on which copy counts)", field);
        return true;
    }
    return false;
}

/* ------------------------------------------------------------------------ */
/* MCP                                                                       */
/* ------------------------------------------------------------------------ */

/* Validates and injects the reminder object at node rem from an MCP server. */
static quire_status mcp_reminder(quire_state *s, const qserver *sv, const char *origin, const qj_doc *d, uint32_t rem,
                                 const char *rptr, qbuf *events, ictx *cx, quire_error *err) {
    if (!sv || !sv->emit) {
        char detail[300];
        if (sv)
            snprintf(detail, sizeof detail,
                     "MCP server \"%.100s\" did not declare capabilities.reminders.emit: true at initialize", origin + 4);
        else
            snprintf(detail, sizeof detail,
                     "no initialize result from MCP server \"%.100s\" declared capabilities.reminders.emit: true",
                     origin + 4);
        qev_reminder_dropped(events, get_str(d, rem, "id", &cx->ar), "capability_not_declared", detail, origin, NULL,
                             NULL);
        return QUIRE_OK;
    }
    quire_error e;
    if (taint_in(cx, rptr)) {
        taint_error(cx, &e);
        drop_invalid(events, NULL, origin, &e);
        return QUIRE_OK;
    }
    qreminder r;
    quire_reminder_limits lim = qs_limits(s);
    quire_status st = qrem_decode(d, rem, QSURF_MCP, lim.body_cap_bytes, rptr, &cx->ar, &r, &e);
    if (st == QUIRE_E_NOMEM) return q_oom(err);
    if (st) {
        drop_invalid(events, get_str(d, rem, "id", &cx->ar), origin, &e);
        return QUIRE_OK;
    }
    r.source = QS_BRIDGE;
    r.origin = origin;
    r.fired_at_turn = 0;
    r.anchor_msg = UINT32_MAX;
    st = qs_inject(s, &r, events, NULL, NULL, &e);
    if (st == QUIRE_E_NOMEM) return q_oom(err);
    /* an id of another origin's: not repeated; past the origin limit: already reported */
    if (st && st != QUIRE_E_BUDGET) drop_invalid(events, NULL, origin, &e);
    return QUIRE_OK;
}

/* notifications/reminder params: {reminder: {...}, _meta?}. */
static quire_status mcp_notification_reminder(quire_state *s, const qserver *sv, const char *origin, const qj_doc *d,
                                              uint32_t msg, const char *ptr, qbuf *events, ictx *cx,
                                              quire_error *err) {
    char p[512] = "";
    uint32_t params = qj_get(d, msg, "params");
    quire_error e;
    if (!sv || !sv->emit) return mcp_reminder(s, sv, origin, d, get_obj(d, params, "reminder"), p, events, cx, err);
    ptr_join(p, sizeof p, ptr, "/params");
    if (taint_in(cx, p)) {
        taint_error(cx, &e);
        drop_invalid(events, NULL, origin, &e);
        return QUIRE_OK;
    }
    if (params == QJ_NONE || qj_type_of(d, params) != QJ_OBJECT) {
        qrem_fail(&e, QUIRE_E_REMINDER_TYPE, "params", params == QJ_NONE ? qj_offset(d, msg) : qj_offset(d, params),
                  p, "params must be an object holding a reminder, got %s",
                  params == QJ_NONE ? "nothing" : qj_type_name(qj_type_of(d, params)));
        drop_invalid(events, NULL, origin, &e);
        return QUIRE_OK;
    }
    for (uint32_t k = params + 1; k < qj_at(d, params)->end; k = qj_next(d, k + 1)) {
        if (qj_str_eq(d, k, "reminder") || qj_str_eq(d, k, "_meta")) continue;
        const qj_node *kn = qj_at(d, k);
        char field[64];
        snprintf(field, sizeof field, "%.*s", kn->len > 63 ? 63 : (int)kn->len, kn->p);
        char kp[600];
        snprintf(kp, sizeof kp, "%s/%s", p, field);
        qrem_fail(&e, QUIRE_E_REMINDER_UNKNOWN_FIELD, field, qj_offset(d, k), kp,
                  "unknown field \"%s\" in notifications/reminder params", field);
        drop_invalid(events, get_str(d, get_obj(d, params, "reminder"), "id", &cx->ar), origin, &e);
        return QUIRE_OK;
    }
    uint32_t rem = qj_get(d, params, "reminder");
    ptr_join(p, sizeof p, ptr, "/params/reminder");
    if (rem == QJ_NONE) {
        qrem_fail(&e, QUIRE_E_REMINDER_BODY, "reminder", qj_offset(d, params), p, "params.reminder is required");
        drop_invalid(events, NULL, origin, &e);
        return QUIRE_OK;
    }
    return mcp_reminder(s, sv, origin, d, rem, p, events, cx, err);
}

/* A bridge reminder: body built from trusted text and the server's values. */
static quire_status mcp_bridge(quire_state *s, const char *origin, const char *body, const char *key, const char *tag,
                               qbuf *events, ictx *cx, quire_error *err) {
    qreminder r;
    qrem_defaults(&r);
    quire_error e;
    quire_reminder_limits lim = qs_limits(s);
    quire_status st = qrem_set_body(&r, body, strlen(body), lim.body_cap_bytes, &cx->ar, &e);
    if (st == QUIRE_E_NOMEM) return q_oom(err);
    if (st) { drop_invalid(events, NULL, origin, &e); return QUIRE_OK; }
    const char *tags[1] = {tag};
    r.tags = tags;
    r.ntags = 1;
    r.dedupe_key = key;
    r.ttl_turns = r.ttl_remaining = 1;
    r.source = QS_BRIDGE;
    r.origin = origin;
    st = qs_inject(s, &r, events, NULL, NULL, &e);
    if (st == QUIRE_E_NOMEM) return q_oom(err);
    if (st && st != QUIRE_E_BUDGET) drop_invalid(events, NULL, origin, &e);
    return QUIRE_OK;
}

static quire_status mcp_msg(quire_state *s, const char *server, size_t server_len, const qj_doc *d, uint32_t msg,
                           const char *ptr, qbuf *events, ictx *cx, quire_error *err) {
    if (qj_type_of(d, msg) != QJ_OBJECT)
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, msg), ptr, "an MCP message must be a JSON-RPC object, got %s",
                        qj_type_name(qj_type_of(d, msg)));
    char *origin = qarena_alloc(&cx->ar, server_len + 5);
    if (!origin) return q_oom(err);
    memcpy(origin, "mcp:", 4);
    memcpy(origin + 4, server, server_len);
    origin[server_len + 4] = '\0';
    quire_error de;
    if (envelope_dup(d, msg, true, ptr, &de)) {
        drop_invalid(events, NULL, origin, &de);
        return QUIRE_OK;
    }
    uint32_t method = qj_get(d, msg, "method");
    if (method == QJ_NONE) {
        /* the answer to a subscriptions/listen request ends that stream (MCP
         * 2026-07-28: the server tore it down): its subscriptions end */
        uint32_t rid = qj_get(d, msg, "id");
        qserver *lsv = rid == QJ_NONE ? NULL : qs_server(s, server, server_len, false);
        if (lsv && lsv->nsubs && (qj_type_of(d, rid) == QJ_STRING || qj_type_of(d, rid) == QJ_NUMBER)) {
            bool any = false;
            for (uint32_t i = 0; i < lsv->nsubs && !any; i++) any = lsv->sub_listen[i] != NULL;
            const char *key = any ? qs_listen_key(&cx->ar, s->a, d, rid) : NULL;
            if (any && !key) return q_oom(err);
            if (key) qs_sub_end_listen(lsv, key);
        }
        /* a response: initialize (or server/discover) results declare capabilities */
        uint32_t caps = get_obj(d, get_obj(d, msg, "result"), "capabilities");
        if (caps == QJ_NONE) return QUIRE_OK;
        qserver *sv = qs_server(s, server, server_len, true);
        if (!sv) return q_oom(err);
        uint32_t rem = get_obj(d, caps, "reminders");
        uint32_t emit = rem == QJ_NONE ? QJ_NONE : qj_get(d, rem, "emit");
        sv->emit = emit != QJ_NONE && qj_type_of(d, emit) == QJ_TRUE;
        return QUIRE_OK;
    }
    char p[512];
    ptr_join(p, sizeof p, ptr, "/method");
    if (qj_type_of(d, method) != QJ_STRING)
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, method), p, "method must be a string, got %s",
                        qj_type_name(qj_type_of(d, method)));
    qserver *sv = qs_server(s, server, server_len, false);
    if (qj_str_eq(d, method, "notifications/reminder"))
        return mcp_notification_reminder(s, sv, origin, d, msg, ptr, events, cx, err);
    uint32_t params = qj_get(d, msg, "params");
    if (qj_str_eq(d, method, "notifications/message")) {
        uint32_t harn = get_obj(d, get_obj(d, params, "_meta"), "harn");
        uint32_t rem = harn == QJ_NONE ? QJ_NONE : qj_get(d, harn, "reminder");
        if (rem == QJ_NONE) return QUIRE_OK; /* an ordinary log message */
        ptr_join(p, sizeof p, ptr, "/params/_meta/harn/reminder");
        return mcp_reminder(s, sv, origin, d, rem, p, events, cx, err);
    }
    char body[2200];
    if (qj_str_eq(d, method, "notifications/resources/updated")) {
        if (!sv || !sv->bridge_resources) return QUIRE_OK;
        ptr_join(p, sizeof p, ptr, "/params");
        if (taint_in(cx, p)) {
            quire_error e;
            taint_error(cx, &e);
            drop_invalid(events, NULL, origin, &e);
            return QUIRE_OK;
        }
        const char *uri = get_str(d, params, "uri", &cx->ar);
        if (!uri || !*uri) {
            quire_error e;
            ptr_join(p, sizeof p, ptr, "/params/uri");
            qrem_fail(&e, QUIRE_E_REMINDER_TYPE, "uri", qj_offset(d, params == QJ_NONE ? msg : params), p,
                      "notifications/resources/updated needs params.uri, a non-empty string");
            drop_invalid(events, NULL, origin, &e);
            return QUIRE_OK;
        }
        if (strlen(uri) > 2048) {
            quire_error e;
            ptr_join(p, sizeof p, ptr, "/params/uri");
            qrem_fail(&e, QUIRE_E_REMINDER_BODY, "uri", qj_offset(d, qj_get(d, params, "uri")), p,
                      "params.uri is longer than 2048 bytes");
            drop_invalid(events, NULL, origin, &e);
            return QUIRE_OK;
        }
        if (!qs_sub_has(sv, uri, strlen(uri))) {
            /* push routing (DESIGN 11): only what the host subscribed to reaches the model */
            char detail[400];
            snprintf(detail, sizeof detail,
                     "MCP server %.100s sent resources/updated for %.200s, which the host has not subscribed to",
                     sv->name, uri);
            q_utf8_mend(detail);
            qev_reminder_dropped(events, NULL, "not_subscribed", detail, origin, NULL, "uri");
            return QUIRE_OK;
        }
        snprintf(body, sizeof body, QIN_RESOURCE_BODY_FMT, uri);
        size_t kl = strlen(uri) + 18;
        char *key = qarena_alloc(&cx->ar, kl);
        if (!key) return q_oom(err);
        snprintf(key, kl, "resource_updated:%s", uri);
        return mcp_bridge(s, origin, body, key, "resource_updated", events, cx, err);
    }
    if (qj_str_eq(d, method, "notifications/tools/list_changed")) {
        if (!sv || !sv->bridge_tools) return QUIRE_OK;
        snprintf(body, sizeof body, "The tools of MCP server %.*s changed; list them again before relying on them.",
                 (int)q_utf8_prefix(sv->name, strlen(sv->name), 200), sv->name);
        return mcp_bridge(s, origin, body, "tools_list_changed", "tools_list_changed", events, cx, err);
    }
    if (qj_str_eq(d, method, "notifications/prompts/list_changed")) {
        if (!sv || !sv->bridge_prompts) return QUIRE_OK;
        snprintf(body, sizeof body,
                 "The prompts of MCP server %.*s changed; list them again before relying on them.",
                 (int)q_utf8_prefix(sv->name, strlen(sv->name), 200), sv->name);
        return mcp_bridge(s, origin, body, "prompts_list_changed", "prompts_list_changed", events, cx, err);
    }
    return QUIRE_OK; /* any other request, notification or response: ignored */
}

/* subscriptions/listen (MCP 2026-07-28, which replaces resources/subscribe):
 * every URI of params.notifications.resourceSubscriptions is subscribed for as
 * long as this listen stream lives (until the host cancels it or the server
 * answers the request). A request without an id, or a URI list that is not
 * an array of non-empty strings, is bad input. */
static quire_status mcp_out_listen(quire_state *s, const char *server, size_t server_len, const qj_doc *d, uint32_t msg,
                                   const char *ptr, ictx *cx, quire_error *err) {
    char p[600];
    uint32_t id = qj_get(d, msg, "id");
    if (id == QJ_NONE || (qj_type_of(d, id) != QJ_STRING && qj_type_of(d, id) != QJ_NUMBER)) {
        ptr_join(p, sizeof p, ptr, id == QJ_NONE ? "" : "/id");
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, id == QJ_NONE ? msg : id), p,
                        "subscriptions/listen needs an id, a string or a number (it names the stream)");
    }
    uint32_t params = qj_get(d, msg, "params");
    uint32_t notes = get_obj(d, params, "notifications");
    uint32_t uris = notes == QJ_NONE ? QJ_NONE : qj_get(d, notes, "resourceSubscriptions");
    if (uris == QJ_NONE) return QUIRE_OK; /* a stream for other notifications */
    ptr_join(p, sizeof p, ptr, "/params/notifications/resourceSubscriptions");
    if (qj_type_of(d, uris) != QJ_ARRAY)
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, uris), p, "resourceSubscriptions must be an array of URIs");
    size_t base = strlen(p);
    uint32_t i = 0;
    for (uint32_t e = uris + 1; e < qj_at(d, uris)->end; e = qj_next(d, e), i++) {
        if (qj_type_of(d, e) == QJ_STRING && qj_at(d, e)->len > 0) continue;
        p[base] = '\0';
        q_ptr_push_index(p, sizeof p, i);
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, e), p, "a resource subscription must be a non-empty string");
    }
    qserver *sv = qs_server(s, server, server_len, true);
    if (!sv) return q_oom(err);
    const char *key = qs_listen_key(&cx->ar, s->a, d, id);
    if (!key) return q_oom(err);
    i = 0;
    for (uint32_t e = uris + 1; e < qj_at(d, uris)->end; e = qj_next(d, e), i++) {
        size_t n = 0;
        char *u = qj_str_decode(d, e, &cx->ar, &n);
        if (!u) return q_oom(err);
        if (!qt_utf8_valid(u, n, NULL) || memchr(u, '\0', n)) {
            p[base] = '\0';
            q_ptr_push_index(p, sizeof p, i);
            return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, e), p, "a resource subscription must be text without NUL");
        }
        if (!qs_sub_add(s, sv, u, n, key)) return q_oom(err);
    }
    return QUIRE_OK;
}

/* A JSON-RPC message the host sent to MCP server `server` (direction out):
 * resources/subscribe and resources/unsubscribe are recorded per server
 * (push routing, DESIGN 11); every other message is ignored. A subscribe
 * whose params.uri is not a non-empty string is bad input. */
static quire_status mcp_out(quire_state *s, const char *server, size_t server_len, const qj_doc *d, uint32_t msg,
                            const char *ptr, ictx *cx, quire_error *err) {
    if (qj_type_of(d, msg) != QJ_OBJECT)
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, msg), ptr, "an MCP message must be a JSON-RPC object, got %s",
                        qj_type_name(qj_type_of(d, msg)));
    uint32_t method = qj_get(d, msg, "method");
    if (method == QJ_NONE || qj_type_of(d, method) != QJ_STRING) return QUIRE_OK;
    if (qj_str_eq(d, method, "subscriptions/listen")) return mcp_out_listen(s, server, server_len, d, msg, ptr, cx, err);
    if (qj_str_eq(d, method, "notifications/cancelled")) {
        /* the host closed a request; when it was a listen stream, its subscriptions end */
        uint32_t params = qj_get(d, msg, "params");
        uint32_t rid = params != QJ_NONE && qj_type_of(d, params) == QJ_OBJECT ? qj_get(d, params, "requestId") : QJ_NONE;
        qserver *sv = qs_server(s, server, server_len, false);
        if (rid == QJ_NONE || !sv || !sv->nsubs) return QUIRE_OK;
        qj_type rt = qj_type_of(d, rid);
        if (rt != QJ_STRING && rt != QJ_NUMBER) return QUIRE_OK;
        const char *key = qs_listen_key(&cx->ar, s->a, d, rid);
        if (!key) return q_oom(err);
        qs_sub_end_listen(sv, key);
        return QUIRE_OK;
    }
    bool sub = qj_str_eq(d, method, "resources/subscribe");
    if (!sub && !qj_str_eq(d, method, "resources/unsubscribe")) return QUIRE_OK;
    uint32_t params = qj_get(d, msg, "params");
    uint32_t uri = params != QJ_NONE && qj_type_of(d, params) == QJ_OBJECT ? qj_get(d, params, "uri") : QJ_NONE;
    char p[600];
    if (uri == QJ_NONE || qj_type_of(d, uri) != QJ_STRING || qj_at(d, uri)->len == 0) {
        ptr_join(p, sizeof p, ptr, uri == QJ_NONE ? (params == QJ_NONE ? "" : "/params") : "/params/uri");
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, uri != QJ_NONE ? uri : params != QJ_NONE ? params : msg), p,
                        "%s needs params.uri, a non-empty string", sub ? "resources/subscribe" : "resources/unsubscribe");
    }
    size_t n = 0;
    char *u = qj_str_decode(d, uri, &cx->ar, &n);
    if (!u) return q_oom(err);
    if (!qt_utf8_valid(u, n, NULL) || memchr(u, '\0', n)) {
        ptr_join(p, sizeof p, ptr, "/params/uri");
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, uri), p, "params.uri must be text without NUL");
    }
    qserver *sv = qs_server(s, server, server_len, sub);
    if (!sv) return sub ? q_oom(err) : QUIRE_OK;
    if (!sub) { qs_sub_remove(sv, u, n); return QUIRE_OK; }
    return qs_sub_add(s, sv, u, n, NULL) ? QUIRE_OK : q_oom(err);
}

/* {"type":"mcp","server":S,"event":"reconnected"}: the host's connection to S
 * was re-established. The state keeps S's subscriptions (the host re-sends
 * them: quire_state_subscriptions) and an mcp_reconnected event lists them. */
static void mcp_reconnected(quire_state *s, const char *server, size_t server_len, qbuf *events) {
    if (!events) return;
    qserver *sv = qs_server(s, server, server_len, false);
    qw w;
    qw_init(&w, events, false);
    qw_obj_begin(&w);
    qw_key(&w, "sessionUpdate"); qw_strz(&w, "mcp_reconnected");
    qw_key(&w, "server"); qw_str(&w, server, server_len);
    qw_key(&w, "subscriptions");
    qs_sub_write_uris(&w, sv);
    qw_obj_end(&w);
    qw_dispose(&w);
    qbuf_putc(events, '\n');
}

/* ------------------------------------------------------------------------ */
/* ACP                                                                       */
/* ------------------------------------------------------------------------ */

static void rpc_begin(qw *w, qbuf *b, const qj_doc *d, uint32_t id) {
    qw_init(w, b, false);
    qw_obj_begin(w);
    qw_key(w, "jsonrpc"); qw_strz(w, "2.0");
    qw_key(w, "id"); qw_node(w, d, id);
}

/* A JSON-RPC error response (none for a notification). null_id: the request's
 * id could not be used (JSON-RPC: answer with id null). */
static void rpc_error(qbuf *responses, const qj_doc *d, uint32_t id, bool null_id, int code, const quire_error *e) {
    if (!responses || id == QJ_NONE) return;
    qw w;
    if (null_id) {
        qw_init(&w, responses, false);
        qw_obj_begin(&w);
        qw_key(&w, "jsonrpc"); qw_strz(&w, "2.0");
        qw_key(&w, "id"); qw_null(&w);
    } else {
        rpc_begin(&w, responses, d, id);
    }
    qw_key(&w, "error");
    qw_obj_begin(&w);
    qw_key(&w, "code"); qw_int(&w, code);
    char msg[sizeof e->message], field[sizeof e->field];
    snprintf(msg, sizeof msg, "%s", e->message);
    snprintf(field, sizeof field, "%s", e->field);
    q_utf8_mend(msg); /* emitted text is valid UTF-8, cut on character boundaries */
    q_utf8_mend(field);
    qw_key(&w, "message"); qw_strz(&w, msg);
    qw_key(&w, "data");
    qw_obj_begin(&w);
    qw_key(&w, "code"); qw_strz(&w, quire_status_name(e->code));
    qw_key(&w, "field"); qw_strz(&w, field);
    qw_obj_end(&w);
    qw_obj_end(&w);
    qw_obj_end(&w);
    qw_dispose(&w);
    qbuf_putc(responses, '\n');
}

static quire_status acp_msg(quire_state *s, const qj_doc *d, uint32_t msg, const char *ptr, qbuf *events,
                           qbuf *responses, ictx *cx, quire_error *err) {
    if (qj_type_of(d, msg) != QJ_OBJECT)
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, msg), ptr, "an ACP message must be a JSON-RPC object, got %s",
                        qj_type_name(qj_type_of(d, msg)));
    quire_error de;
    if (envelope_dup(d, msg, false, ptr, &de)) {
        /* JSON-RPC: not a well-formed request (-32600), answered with id null */
        drop_invalid(events, NULL, NULL, &de);
        if (qj_get(d, msg, "id") != QJ_NONE) rpc_error(responses, d, qj_get(d, msg, "id"), true, -32600, &de);
        return QUIRE_OK;
    }
    uint32_t method = qj_get(d, msg, "method");
    if (method == QJ_NONE) return QUIRE_OK;
    char p[512];
    ptr_join(p, sizeof p, ptr, "/method");
    if (qj_type_of(d, method) != QJ_STRING)
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, method), p, "method must be a string, got %s",
                        qj_type_name(qj_type_of(d, method)));
    if (!qj_str_eq(d, method, "session/inject_reminder") && !qj_str_eq(d, method, "session/remind")) return QUIRE_OK;
    uint32_t id = qj_get(d, msg, "id");
    uint32_t params = qj_get(d, msg, "params");
    quire_error e;
    char idp[520];
    snprintf(idp, sizeof idp, "%s/id", ptr);
    if (id != QJ_NONE && (taint_in(cx, idp) || (qj_type_of(d, id) != QJ_STRING && qj_type_of(d, id) != QJ_NUMBER &&
                                                 qj_type_of(d, id) != QJ_NULL))) {
        /* JSON-RPC: an unusable id makes the request invalid (-32600), answered with id null */
        qrem_fail(&e, QUIRE_E_INVALID, "id", qj_offset(d, id), idp, "%s",
                  "invalid request: id must be a string, a number or null");
        drop_invalid(events, NULL, NULL, &e);
        rpc_error(responses, d, id, true, -32600, &e);
        return QUIRE_OK;
    }
    if (taint_in(cx, ptr)) {
        taint_error(cx, &e);
        drop_invalid(events, NULL, NULL, &e);
        rpc_error(responses, d, id, false, -32602, &e);
        return QUIRE_OK;
    }
    ptr_join(p, sizeof p, ptr, "/params");
    if (params == QJ_NONE || qj_type_of(d, params) != QJ_OBJECT) {
        qrem_fail(&e, QUIRE_E_REMINDER_TYPE, "params", qj_offset(d, params == QJ_NONE ? msg : params), p,
                  "params must be an object, got %s", params == QJ_NONE ? "nothing" : qj_type_name(qj_type_of(d, params)));
        drop_invalid(events, NULL, NULL, &e);
        rpc_error(responses, d, id, false, -32602, &e);
        return QUIRE_OK;
    }
    uint32_t sid = qj_get(d, params, "sessionId");
    const char *sess = sid != QJ_NONE && qj_type_of(d, sid) == QJ_STRING ? qj_str_decode(d, sid, &cx->ar, NULL) : NULL;
    if (sid != QJ_NONE && qj_type_of(d, sid) == QJ_STRING && !sess) return q_oom(err);
    if (!sess || !*sess) {
        char sp[600];
        snprintf(sp, sizeof sp, "%s/sessionId", p);
        qrem_fail(&e, QUIRE_E_REMINDER_TYPE, "sessionId", qj_offset(d, sid == QJ_NONE ? params : sid),
                  sid == QJ_NONE ? p : sp, "sessionId must be a non-empty string, got %s",
                  sid == QJ_NONE ? "nothing" : sess ? "an empty string" : qj_type_name(qj_type_of(d, sid)));
        drop_invalid(events, get_str(d, params, "id", &cx->ar), NULL, &e);
        rpc_error(responses, d, id, false, -32602, &e);
        return QUIRE_OK;
    }
    if (s->session_id && *s->session_id && strcmp(sess, s->session_id) != 0) {
        /* a state belongs to one session: another session's reminder is not ours */
        char sp[600];
        snprintf(sp, sizeof sp, "%s/sessionId", p);
        qrem_fail(&e, QUIRE_E_REMINDER_TYPE, "sessionId", qj_offset(d, sid), sp,
                  "sessionId \"%.100s\" is not this state's session (\"%.100s\")", sess, s->session_id);
        drop_invalid(events, get_str(d, params, "id", &cx->ar), NULL, &e);
        rpc_error(responses, d, id, false, -32602, &e);
        return QUIRE_OK;
    }
    size_t sl = strlen(sess);
    char *origin = qarena_alloc(&cx->ar, sl + 5);
    if (!origin) return q_oom(err);
    memcpy(origin, "acp:", 4);
    memcpy(origin + 4, sess, sl + 1);
    qreminder r;
    quire_reminder_limits lim = qs_limits(s);
    quire_status st = qrem_decode(d, params, QSURF_ACP, lim.body_cap_bytes, p, &cx->ar, &r, &e);
    if (st == QUIRE_E_NOMEM) return q_oom(err);
    uint32_t deduped = 0;
    const char *rid = NULL;
    if (st == QUIRE_OK) {
        r.source = QS_HOST;
        r.origin = origin;
        r.fired_at_turn = 0;
        r.anchor_msg = UINT32_MAX;
        st = qs_inject(s, &r, events, &deduped, &rid, &e);
        if (st == QUIRE_E_NOMEM) return q_oom(err);
    }
    if (st == QUIRE_E_BUDGET) {
        /* past the origin limit: reminder_dropped(budget) is written; the
         * request gets a server error (-32000, JSON-RPC's implementation range) */
        rpc_error(responses, d, id, false, -32000, &e);
        return QUIRE_OK;
    }
    if (st) {
        /* an id taken by another origin is not repeated in the event */
        drop_invalid(events, e.code == QUIRE_E_INVALID ? NULL : get_str(d, params, "id", &cx->ar), origin, &e);
        rpc_error(responses, d, id, false, -32602, &e);
        return QUIRE_OK;
    }
    if (responses && id != QJ_NONE) {
        qw w;
        rpc_begin(&w, responses, d, id);
        qw_key(&w, "result");
        qw_obj_begin(&w);
        qw_key(&w, "reminderId"); qw_strz(&w, rid);
        qw_key(&w, "dedupedCount"); qw_int(&w, deduped);
        qw_obj_end(&w);
        qw_obj_end(&w);
        qw_dispose(&w);
        qbuf_putc(responses, '\n');
    }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Session-log lines                                                         */
/* ------------------------------------------------------------------------ */

static quire_status clear_line(quire_state *s, const qj_doc *d, uint32_t sel, const char *ptr, qbuf *events,
                               ictx *cx, quire_error *err) {
    char p[512];
    ptr_join(p, sizeof p, ptr, "/selector");
    if (sel == QJ_NONE) return sess_fail(err, d, QJ_NONE, ptr, "a clear line needs a selector object");
    if (qj_type_of(d, sel) != QJ_OBJECT)
        return qrem_fail(err, QUIRE_E_REMINDER_TYPE, "selector", qj_offset(d, sel), p,
                         "selector must be an object, got %s", qj_type_name(qj_type_of(d, sel)));
    qs_selector q = {NULL, NULL, NULL, NULL};
    static const char *const keys[] = {"id", "tag", "dedupeKey", "origin"};
    for (uint32_t k = sel + 1; k < qj_at(d, sel)->end; k = qj_next(d, k + 1)) {
        uint32_t v = k + 1;
        int which = -1;
        for (int i = 0; i < 4 && which < 0; i++)
            if (qj_str_eq(d, k, keys[i])) which = i;
        const qj_node *kn = qj_at(d, k);
        char field[64], kp[600];
        snprintf(field, sizeof field, "%.*s", kn->len > 63 ? 63 : (int)kn->len, kn->p);
        snprintf(kp, sizeof kp, "%s/%s", p, field);
        if (which < 0)
            return qrem_fail(err, QUIRE_E_REMINDER_UNKNOWN_FIELD, field, qj_offset(d, k), kp,
                             "unknown field \"%s\" in a clear selector (id, tag, dedupeKey, origin)", field);
        size_t n = 0;
        const char *val = qj_type_of(d, v) == QJ_STRING ? qj_str_decode(d, v, &cx->ar, &n) : NULL;
        if (qj_type_of(d, v) == QJ_STRING && !val) return q_oom(err);
        if (!val || !n)
            return qrem_fail(err, QUIRE_E_REMINDER_TYPE, field, qj_offset(d, v), kp,
                             "selector %s must be a non-empty string", field);
        if (which == 0) q.id = val;
        else if (which == 1) q.tag = val;
        else if (which == 2) q.dedupe_key = val;
        else q.origin = val;
    }
    uint32_t dup = qj_find_dup_key(d, sel);
    if (dup != QJ_NONE) return q_err_at(err, QUIRE_E_SCHEMA, qj_offset(d, dup), p, "duplicate key in selector");
    if (!q.id && !q.tag && !q.dedupe_key && !q.origin)
        return sess_fail(err, d, sel, p, "a clear selector needs at least one of id, tag, dedupeKey, origin");
    qs_clear(s, &q, events);
    return QUIRE_OK;
}

static quire_status apply_line(quire_state *s, const qj_doc *d, uint32_t node, const char *ptr, qbuf *events,
                                qbuf *responses, ictx *cx, quire_error *err) {
    if (!ptr) ptr = "";
    if (qj_type_of(d, node) != QJ_OBJECT)
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, node), ptr, "expected a session-log line object, got %s",
                        qj_type_name(qj_type_of(d, node)));
    uint32_t type = qj_get(d, node, "type");
    char p[512];
    ptr_join(p, sizeof p, ptr, "/type");
    if (type == QJ_NONE || qj_type_of(d, type) != QJ_STRING)
        return sess_fail(err, d, type == QJ_NONE ? node : type, type == QJ_NONE ? ptr : p,
                         "a session-log line needs \"type\": \"mcp\", \"acp\", \"reminder\" or \"clear\"");
    static const char *const types[] = {"mcp", "acp", "reminder", "clear"};
    /* allowed keys per type (besides type and _meta) */
    static const char *const allowed[4][4] = {{"server", "message", "direction", "event"}, {"message", NULL},
                                               {"reminder", NULL}, {"selector", NULL}};
    int t = -1;
    for (int i = 0; i < 4 && t < 0; i++)
        if (qj_str_eq(d, type, types[i])) t = i;
    if (t < 0) {
        const qj_node *tn = qj_at(d, type);
        char tv[64];
        snprintf(tv, sizeof tv, "%.*s", tn->len > 60 ? 60 : (int)tn->len, tn->p);
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, type), p,
                        "line type \"%s\" is not accepted here (mcp, acp, reminder, clear)", tv);
    }
    for (uint32_t k = node + 1; k < qj_at(d, node)->end; k = qj_next(d, k + 1)) {
        if (qj_str_eq(d, k, "type") || qj_str_eq(d, k, "_meta")) continue;
        bool ok = false;
        for (int i = 0; i < 4 && !ok; i++) ok = allowed[t][i] && qj_str_eq(d, k, allowed[t][i]);
        if (ok) continue;
        const qj_node *kn = qj_at(d, k);
        char field[64], kp[600];
        snprintf(field, sizeof field, "%.*s", kn->len > 60 ? 60 : (int)kn->len, kn->p);
        snprintf(kp, sizeof kp, "%s/%s", ptr, field);
        return q_err_at(err, QUIRE_E_SESSION, qj_offset(d, k), kp, "unknown field \"%s\" in a %s line", field, types[t]);
    }
    /* duplicates after unknown keys: every key is known, so a long line is one pass */
    uint32_t dup = qj_find_dup_key(d, node);
    if (dup != QJ_NONE) return sess_fail(err, d, dup, ptr, "duplicate key in a session-log line");
    if (cx->taint) {
        /* repaired text is tolerated inside a peer's message only (its reminder is
         * dropped as invalid); anywhere else the line is bad input */
        char mp[520];
        snprintf(mp, sizeof mp, "%s/message", ptr);
        if (t > 1 || !taint_in(cx, mp)) {
            if (err) *err = *cx->taint;
            return cx->taint->code;
        }
    }
    switch (t) {
    case 0: {
        uint32_t server = qj_get(d, node, "server");
        ptr_join(p, sizeof p, ptr, "/server");
        if (server == QJ_NONE || qj_type_of(d, server) != QJ_STRING || qj_at(d, server)->len == 0)
            return sess_fail(err, d, server == QJ_NONE ? node : server, server == QJ_NONE ? ptr : p,
                             "an mcp line needs \"server\", a non-empty string");
        uint32_t msg = qj_get(d, node, "message");
        uint32_t event = qj_get(d, node, "event");
        uint32_t dir = qj_get(d, node, "direction");
        bool out = false;
        if (dir != QJ_NONE) {
            ptr_join(p, sizeof p, ptr, "/direction");
            if (qj_type_of(d, dir) != QJ_STRING || !(qj_str_eq(d, dir, "in") || qj_str_eq(d, dir, "out")))
                return sess_fail(err, d, dir, p, "direction must be \"in\" (from the server) or \"out\" (from the host)");
            out = qj_str_eq(d, dir, "out");
        }
        size_t n = 0;
        char *name = qj_str_decode(d, server, &cx->ar, &n);
        if (!name) return q_oom(err);
        if (event != QJ_NONE) {
            ptr_join(p, sizeof p, ptr, "/event");
            if (msg != QJ_NONE || dir != QJ_NONE)
                return sess_fail(err, d, event, p, "an mcp line holds either \"event\" or \"message\" (with \"direction\")");
            if (qj_type_of(d, event) != QJ_STRING || !qj_str_eq(d, event, "reconnected"))
                return sess_fail(err, d, event, p, "the only mcp event is \"reconnected\"");
            mcp_reconnected(s, name, n, events);
            return QUIRE_OK;
        }
        if (msg == QJ_NONE) return sess_fail(err, d, node, ptr, "an mcp line needs \"message\" or \"event\"");
        ptr_join(p, sizeof p, ptr, "/message");
        if (out) {
            if (cx->taint) {
                if (err) *err = *cx->taint;
                return cx->taint->code;
            }
            return mcp_out(s, name, n, d, msg, p, cx, err);
        }
        return mcp_msg(s, name, n, d, msg, p, events, cx, err);
    }
    case 1: {
        uint32_t msg = qj_get(d, node, "message");
        if (msg == QJ_NONE) return sess_fail(err, d, node, ptr, "an acp line needs \"message\"");
        ptr_join(p, sizeof p, ptr, "/message");
        return acp_msg(s, d, msg, p, events, responses, cx, err);
    }
    case 2: {
        uint32_t rem = qj_get(d, node, "reminder");
        if (rem == QJ_NONE) return sess_fail(err, d, node, ptr, "a reminder line needs \"reminder\"");
        ptr_join(p, sizeof p, ptr, "/reminder");
        qreminder r;
        quire_reminder_limits lim = qs_limits(s);
        quire_status st = qrem_decode(d, rem, QSURF_DIRECT, lim.body_cap_bytes, p, &cx->ar, &r, err);
        if (st) return st;
        st = qs_inject(s, &r, events, NULL, NULL, err);
        if (st == QUIRE_E_BUDGET) return QUIRE_OK; /* reminder_dropped(budget) written */
        if (st && st != QUIRE_E_NOMEM && err) {
            uint32_t idn = qj_get(d, rem, "id");
            err->offset = qj_offset(d, idn == QJ_NONE ? rem : idn);
            snprintf(err->pointer, sizeof err->pointer, "%s", p);
            q_ptr_push_key(err->pointer, sizeof err->pointer, "id", 2);
        }
        return st;
    }
    default:
        return clear_line(s, d, qj_get(d, node, "selector"), ptr, events, cx, err);
    }
}

/* The exported entry points decode into a scratch arena: the state's arena
 * only receives what is kept (qs_inject copies), so applying many lines in
 * place does not accumulate garbage. */
quire_status qin_mcp(quire_state *s, const char *server, size_t server_len, const qj_doc *d, uint32_t msg,
                     const char *ptr, qbuf *events, quire_error *err) {
    ictx cx = {{0}, NULL};
    qarena_init(&cx.ar, s->a);
    quire_status st = mcp_msg(s, server, server_len, d, msg, ptr, events, &cx, err);
    qarena_free(&cx.ar);
    qs_settle(s);
    return st;
}

quire_status qin_acp(quire_state *s, const qj_doc *d, uint32_t msg, const char *ptr, qbuf *events, qbuf *responses,
                     quire_error *err) {
    ictx cx = {{0}, NULL};
    qarena_init(&cx.ar, s->a);
    quire_status st = acp_msg(s, d, msg, ptr, events, responses, &cx, err);
    qarena_free(&cx.ar);
    qs_settle(s);
    return st;
}

quire_status qs_apply_line(quire_state *s, const qj_doc *d, uint32_t node, const char *ptr, qbuf *events,
                           qbuf *responses, quire_error *err) {
    return qs_apply_line_repaired(s, d, node, ptr, events, responses, NULL, err);
}

quire_status qs_apply_line_repaired(quire_state *s, const qj_doc *d, uint32_t node, const char *ptr, qbuf *events,
                                    qbuf *responses, const quire_error *taint, quire_error *err) {
    ictx cx = {{0}, NULL};
    if (taint) {
        size_t lo = qj_offset(d, node), hi = lo + qj_at(d, node)->len;
        if (taint->offset >= lo && taint->offset < hi) cx.taint = taint;
    }
    qarena_init(&cx.ar, s->a);
    quire_status st = apply_line(s, d, node, ptr, events, responses, &cx, err);
    qarena_free(&cx.ar);
    qs_settle(s);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

typedef struct apply_ctx {
    quire_state *next;
    qbuf events, responses;
    const quire_allocator *a;
} apply_ctx;

static quire_status ctx_begin(apply_ctx *c, const quire_state *s, const quire_options *opts, quire_state **next,
                              quire_bytes *events, quire_bytes *response, quire_error *err) {
    *next = NULL;
    if (events) memset(events, 0, sizeof *events);
    if (response) memset(response, 0, sizeof *response);
    c->a = s ? s->a : q_alloc_of(opts);
    c->next = s ? qs_clone(s) : qs_new(c->a, NULL);
    qbuf_init(&c->events, c->a);
    qbuf_init(&c->responses, c->a);
    return c->next ? QUIRE_OK : q_oom(err);
}

static quire_status ctx_end(apply_ctx *c, quire_status st, quire_state **next, quire_bytes *events,
                            quire_bytes *response, quire_error *err) {
    if (c->next) qs_settle(c->next);
    if (st == QUIRE_OK && (c->events.oom || c->responses.oom)) st = q_oom(err);
    if (st == QUIRE_OK && events && !qbuf_take(&c->events, events)) st = q_oom(err);
    if (st == QUIRE_OK && response && !qbuf_take(&c->responses, response)) {
        if (events) quire_bytes_free(events);
        st = q_oom(err);
    }
    qbuf_free(&c->events);
    qbuf_free(&c->responses);
    if (st) {
        quire_state_free(c->next);
        return st;
    }
    *next = c->next;
    return QUIRE_OK;
}

static quire_status parse_doc(qj_doc *d, const char *json, size_t len, const quire_options *opts,
                              const quire_allocator *a, quire_error *err) {
    quire_limits l = q_limits(opts);
    if ((uint64_t)len > l.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)l.max_input_bytes);
    qj_opts jo = {l.max_depth, l.max_string_bytes};
    return qj_parse(d, json, len, &jo, a, err);
}

/* Peer messages are JSON produced by other programs: a lone surrogate escape,
 * an ill-formed UTF-8 byte or a raw control character inside a string makes
 * the text invalid JSON for quire's strict codec, yet the message is otherwise
 * well formed. repair_strings() patches such strings in a copy without
 * changing any length or offset (a bad \uXXXX -> \ufffd, a bad byte -> '?'),
 * so the line can be read; the original error travels as the "taint" and the
 * reminder it touches is dropped as invalid (never accepted with altered text).
 * Outside a peer's message the original error stands. */
static int hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static bool repair_strings(const char *src, size_t len, char *out) {
    memcpy(out, src, len);
    bool in = false, changed = false;
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)src[i];
        if (!in) { in = c == '"'; i++; continue; }
        if (c == '"') { in = false; i++; continue; }
        if (c == '\\') {
            if (i + 5 < len && src[i + 1] == 'u') {
                int cp = hex4(src + i + 2);
                bool hi = cp >= 0xD800 && cp <= 0xDBFF, lo = cp >= 0xDC00 && cp <= 0xDFFF;
                if (hi && i + 11 < len && src[i + 6] == '\\' && src[i + 7] == 'u') {
                    int cp2 = hex4(src + i + 8);
                    if (cp2 >= 0xDC00 && cp2 <= 0xDFFF) { i += 12; continue; }
                }
                if (hi || lo) { memcpy(out + i, "\\ufffd", 6); changed = true; }
                i += 6;
                continue;
            }
            i += 2;
            continue;
        }
        if (c < 0x20) { out[i++] = '?'; changed = true; continue; }
        if (c < 0x80) { i++; continue; }
        size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (n && i + n <= len && qt_utf8_valid(src + i, n, NULL)) { i += n; continue; }
        out[i++] = '?';
        changed = true;
    }
    return changed;
}

quire_status qs_parse_repaired(qj_doc *d, const char *json, size_t len, char *copy, const qj_opts *jo,
                               const quire_allocator *a) {
    if (!copy) return QUIRE_E_NOMEM;
    if (!len || !repair_strings(json, len, copy)) return QUIRE_E_JSON;
    quire_error e;
    quire_status st = qj_parse(d, copy, len, jo, a, &e);
    return st == QUIRE_OK || st == QUIRE_E_NOMEM ? st : QUIRE_E_JSON;
}

bool qs_peer_text_at(const qj_doc *d, uint32_t line, size_t off) {
    if (line == QJ_NONE || qj_type_of(d, line) != QJ_OBJECT) return false;
    uint32_t ty = qj_get(d, line, "type"), m = qj_get(d, line, "message");
    return ty != QJ_NONE && (qj_str_eq(d, ty, "mcp") || qj_str_eq(d, ty, "acp")) && m != QJ_NONE &&
           off >= qj_offset(d, m) && off < qj_offset(d, m) + qj_at(d, m)->len;
}

typedef struct pdoc {
    qj_doc d;
    char *repaired; /* the repaired copy d points into, or NULL */
    size_t len;
    const quire_allocator *a;
    quire_error taint; /* the original JSON error, when repaired */
    bool tainted;
} pdoc;

static quire_status pdoc_parse(pdoc *p, const char *json, size_t len, const quire_options *opts,
                               const quire_allocator *a, quire_error *err) {
    memset(p, 0, sizeof *p);
    p->a = a;
    p->len = len;
    quire_error e0;
    quire_status st = parse_doc(&p->d, json, len, opts, a, &e0);
    if (st == QUIRE_OK) return QUIRE_OK;
    if (st == QUIRE_E_JSON && len) {
        char *copy = q_malloc(a, len);
        quire_limits l = q_limits(opts);
        qj_opts jo = {l.max_depth, l.max_string_bytes};
        quire_status st1 = qs_parse_repaired(&p->d, json, len, copy, &jo, a);
        if (st1 == QUIRE_OK) {
            p->repaired = copy;
            p->taint = e0;
            p->tainted = true;
            return QUIRE_OK;
        }
        if (copy) q_free(a, copy, len);
        if (st1 == QUIRE_E_NOMEM) return q_oom(err);
    }
    if (err) *err = e0;
    return st;
}

static void pdoc_free(pdoc *p) {
    qj_doc_free(&p->d);
    if (p->repaired) q_free(p->a, p->repaired, p->len);
    p->repaired = NULL;
}

/* Runs one line (or message, by kind) with the taint when it lies in [lo, hi). */
enum { RUN_LINE, RUN_MCP, RUN_ACP };
static quire_status run(int kind, quire_state *s, const pdoc *p, uint32_t node, const char *ptr, const char *server,
                        apply_ctx *c, quire_error *err) {
    ictx cx = {{0}, NULL};
    if (p->tainted) {
        size_t lo = qj_offset(&p->d, node), hi = lo + qj_at(&p->d, node)->len;
        if (p->taint.offset >= lo && p->taint.offset < hi) cx.taint = &p->taint;
    }
    qarena_init(&cx.ar, s->a);
    quire_status st;
    if (kind == RUN_MCP) st = mcp_msg(s, server, strlen(server), &p->d, node, ptr, &c->events, &cx, err);
    else if (kind == RUN_ACP) st = acp_msg(s, &p->d, node, ptr, &c->events, &c->responses, &cx, err);
    else st = apply_line(s, &p->d, node, ptr, &c->events, &c->responses, &cx, err);
    qarena_free(&cx.ar);
    return st;
}

/* One JSON text applied as one message of the given kind: the shared body of
 * quire_state_apply, _ingest_mcp and _ingest_acp. */
static quire_status apply_one(int kind, const char *server, const quire_state *s, const char *json, size_t len,
                              const quire_options *opts, quire_state **next, quire_bytes *events,
                              quire_bytes *response, quire_error *err) {
    apply_ctx c;
    quire_status st = ctx_begin(&c, s, opts, next, events, response, err);
    if (st) return st;
    pdoc p;
    st = pdoc_parse(&p, json, len, opts, c.a, err);
    if (st == QUIRE_OK) {
        st = run(kind, c.next, &p, 0, "", server, &c, err);
        if (st) q_err_locate(err, json, len);
    }
    pdoc_free(&p);
    return ctx_end(&c, st, next, events, response, err);
}

quire_status quire_state_apply(const quire_state *s, const char *json, size_t len, const quire_options *opts,
                               quire_state **next, quire_bytes *events, quire_bytes *response, quire_error *err) {
    return apply_one(RUN_LINE, NULL, s, json, len, opts, next, events, response, err);
}

quire_status quire_state_apply_lines(const quire_state *s, const char *json, size_t len, const quire_options *opts,
                                     quire_state **next, quire_bytes *events, quire_bytes *response,
                                     quire_error *err) {
    quire_limits lim = q_limits(opts);
    if ((uint64_t)len > lim.max_input_bytes) { /* the whole input, not each line */
        *next = NULL;
        if (events) memset(events, 0, sizeof *events);
        if (response) memset(response, 0, sizeof *response);
        q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                 (unsigned long long)lim.max_input_bytes);
        q_err_locate(err, json, len);
        return QUIRE_E_LIMIT;
    }
    apply_ctx c;
    quire_status st = ctx_begin(&c, s, opts, next, events, response, err);
    if (st) return st;
    size_t i = 0;
    while (i < len && (json[i] == ' ' || json[i] == '\t' || json[i] == '\r' || json[i] == '\n')) i++;
    pdoc p;
    if (i < len && json[i] == '[') {
        /* one JSON array of line objects */
        st = pdoc_parse(&p, json, len, opts, c.a, err);
        if (st == QUIRE_OK) {
            uint32_t idx = 0;
            for (uint32_t e = 1; e < qj_at(&p.d, 0)->end && st == QUIRE_OK; e = qj_next(&p.d, e), idx++) {
                char ptr[32];
                snprintf(ptr, sizeof ptr, "/%u", idx);
                st = run(RUN_LINE, c.next, &p, e, ptr, NULL, &c, err);
            }
            if (st) q_err_locate(err, json, len);
        }
        pdoc_free(&p);
        return ctx_end(&c, st, next, events, response, err);
    }
    /* JSONL: one line object per non-blank line */
    size_t start = 0;
    while (start < len && st == QUIRE_OK) {
        const char *nl = memchr(json + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - json) : len;
        size_t a = start, b = end;
        while (a < b && (json[a] == ' ' || json[a] == '\t' || json[a] == '\r')) a++;
        if (a < b) {
            st = pdoc_parse(&p, json + start, end - start, opts, c.a, err);
            if (st == QUIRE_OK) st = run(RUN_LINE, c.next, &p, 0, "", NULL, &c, err);
            pdoc_free(&p);
            if (st && err && err->offset != SIZE_MAX) {
                err->offset += start;
                q_err_locate(err, json, len);
            }
        }
        start = end + 1;
    }
    return ctx_end(&c, st, next, events, response, err);
}

quire_status quire_state_ingest_mcp(const quire_state *s, const char *server, const char *json, size_t len,
                                    const quire_options *opts, quire_state **next, quire_bytes *events,
                                    quire_error *err) {
    if (!server || !*server) {
        *next = NULL;
        return q_err(err, QUIRE_E_INVALID, "quire_state_ingest_mcp: a server name is required");
    }
    return apply_one(RUN_MCP, server, s, json, len, opts, next, events, NULL, err);
}

quire_status quire_state_ingest_acp(const quire_state *s, const char *json, size_t len, const quire_options *opts,
                                    quire_state **next, quire_bytes *events, quire_bytes *response,
                                    quire_error *err) {
    return apply_one(RUN_ACP, NULL, s, json, len, opts, next, events, response, err);
}

quire_status quire_state_inject(const quire_state *s, const char *reminder_json, size_t len,
                                const quire_options *opts, quire_state **next, quire_bytes *events,
                                quire_bytes *reminder_id, quire_error *err) {
    if (reminder_id) memset(reminder_id, 0, sizeof *reminder_id);
    apply_ctx c;
    quire_status st = ctx_begin(&c, s, opts, next, events, NULL, err);
    if (st) return st;
    qj_doc d;
    st = parse_doc(&d, reminder_json, len, opts, c.a, err);
    if (st == QUIRE_OK) {
        qreminder r;
        quire_reminder_limits lim = qs_limits(c.next);
        const char *rid = NULL;
        st = qrem_decode(&d, 0, QSURF_DIRECT, lim.body_cap_bytes, "", &c.next->ar, &r, err);
        if (st == QUIRE_OK) st = qs_inject(c.next, &r, &c.events, NULL, &rid, err);
        if (st) q_err_locate(err, reminder_json, len);
        qj_doc_free(&d);
        if (st == QUIRE_OK && reminder_id) {
            qbuf b;
            qbuf_init(&b, c.a);
            qbuf_puts(&b, rid);
            if (b.oom || !qbuf_take(&b, reminder_id)) { qbuf_free(&b); st = q_oom(err); }
        }
    }
    st = ctx_end(&c, st, next, events, NULL, err);
    if (st && reminder_id) quire_bytes_free(reminder_id);
    return st;
}

quire_status quire_state_clear(const quire_state *s, const quire_reminder_selector *sel, const quire_options *opts,
                               quire_state **next, quire_bytes *events, quire_error *err) {
    *next = NULL;
    if (!sel || (!sel->id && !sel->tag && !sel->dedupe_key && !sel->origin))
        return q_err(err, QUIRE_E_INVALID, "a clear selector needs at least one of id, tag, dedupeKey, origin");
    apply_ctx c;
    quire_status st = ctx_begin(&c, s, opts, next, events, NULL, err);
    if (st) return st;
    qs_selector q = {sel->id, sel->tag, sel->dedupe_key, sel->origin};
    qs_clear(c.next, &q, &c.events);
    return ctx_end(&c, QUIRE_OK, next, events, NULL, err);
}

quire_status quire_state_propagate(const quire_state *parent, const char *agent_id, const char *child_session_id,
                                   const quire_options *opts, quire_state **child, quire_error *err) {
    *child = NULL;
    if (!agent_id || !*agent_id) return q_err(err, QUIRE_E_INVALID, "propagation needs the parent agent's id");
    quire_state *tmp = NULL;
    if (!parent) {
        tmp = qs_new(q_alloc_of(opts), NULL);
        if (!tmp) return q_oom(err);
        parent = tmp;
    }
    *child = qs_propagate(parent, agent_id, child_session_id);
    quire_state_free(tmp);
    return *child ? QUIRE_OK : q_oom(err);
}
