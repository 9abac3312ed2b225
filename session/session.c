/* The live session (DESIGN 11): quire inside the agent loop.
 *
 * A session is the live form of a quire.session/1 log. Every call that
 * changes it is turned into the log line that records it (append -> message
 * lines, apply -> mcp/acp/reminder/clear lines, render + accept -> a render
 * line and a message line, compact -> a compact line) and applied by the
 * session engine (session/engine.h) that `quire replay` runs too. So the log
 * is exactly what the session was given, and replaying it reproduces every
 * accepted request byte for byte: one implementation, not two kept in step.
 *
 * Line bytes live in the session's arena for its whole life (the transcript
 * points into message lines); the log is the list of committed lines.
 */
#include "session/engine.h"

#include "compact/compact.h"
#include "render/memo.h"
#include "render/params.h"
#include "respond/respond.h"
#include "reminders/state.h"

#include <stdio.h>

typedef struct qline {
    const char *p;
    size_t n;
} qline;

struct quire_session {
    const quire_allocator *a;
    quire_options opts;
    quire_replay *r;          /* the engine, in session mode */
    qarena lines;             /* bytes of every line applied */
    qline *log;               /* committed lines, in order */
    size_t nlog, caplog;
    qline render_line;        /* the pending turn's render line */
    bool pending;
    qbuf work;                /* line under construction */
};

/* ------------------------------------------------------------------------ */
/* Lines                                                                     */
/* ------------------------------------------------------------------------ */

static bool log_push(quire_session *s, qline l) {
    if (s->nlog == s->caplog) {
        size_t ncap = s->caplog ? s->caplog * 2 : 64;
        qline *nl = q_realloc(s->a, s->log, s->caplog * sizeof *nl, ncap * sizeof *nl);
        if (!nl) return false;
        s->log = nl;
        s->caplog = ncap;
    }
    s->log[s->nlog++] = l;
    return true;
}

static void drop_pending(quire_session *s) {
    quire_state_free(s->r->pending);
    s->r->pending = NULL;
    s->pending = false;
}

static void reset_sinks(quire_session *s) {
    s->r->sev.len = 0;
    s->r->sresp.len = 0;
    s->r->sreport.len = 0;
    s->r->out.len = 0;
}

/* Copies a line into the arena and applies it. *out receives the stable copy. */
static quire_status apply_text(quire_session *s, const char *line, size_t n, quire_replay_step *step, qline *out,
                               quire_error *err) {
    char *copy = qarena_strndup(&s->lines, line, n);
    if (!copy) return q_oom(err);
    /* a line of the log is one line: line breaks of pretty-printed input can
     * only be white space between tokens (JSON strings cannot hold them raw),
     * so they become spaces and every offset stays where it was */
    for (size_t i = 0; i < n; i++)
        if (copy[i] == '\n' || copy[i] == '\r') copy[i] = ' ';
    quire_replay_step tmp;
    quire_status st = qrp_apply(s->r, copy, n, (uint32_t)(s->nlog + 1), 0, step ? step : &tmp, err);
    if (out) { out->p = copy; out->n = n; }
    return st;
}

/* Errors of a line built around a caller's value: the part of the pointer
 * before the value is replaced by prefix, and the offset is moved onto the
 * caller's bytes (value_off in the line = elem_off in src). */
static void err_onto_input(quire_error *err, const char *strip, const char *prefix, size_t value_off, size_t elem_off,
                           const char *src, size_t len) {
    if (!err) return;
    size_t k = strlen(strip);
    if (strncmp(err->pointer, strip, k) == 0 && (err->pointer[k] == '\0' || err->pointer[k] == '/')) {
        char tmp[sizeof err->pointer];
        snprintf(tmp, sizeof tmp, "%s%s", prefix, err->pointer + k);
        memcpy(err->pointer, tmp, sizeof tmp);
    }
    if (err->offset != SIZE_MAX && err->offset >= value_off) err->offset = err->offset - value_off + elem_off;
    else err->offset = elem_off;
    q_err_locate(err, src, len);
}

static quire_status parse_input(quire_session *s, qj_doc *d, const char *json, size_t len, quire_error *err) {
    quire_limits lim = q_limits(&s->opts);
    if ((uint64_t)len > lim.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)lim.max_input_bytes);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    return qj_parse(d, json ? json : "", json ? len : 0, &jo, s->a, err);
}

/* parse_input for apply: invalid text inside the message of an mcp or acp
 * line is a peer's, so the line is read from a repaired copy (*copy, the
 * caller frees it; NULL when none was needed) and applied as sent, which
 * drops that message's reminder with an event (docs/reminders.md, "Peers'
 * invalid text"). Anywhere else the JSON error stands. */
static quire_status parse_peer(quire_session *s, qj_doc *d, const char *json, size_t len, char **copy,
                               quire_error *err) {
    *copy = NULL;
    quire_error e0;
    quire_status st = parse_input(s, d, json, len, &e0);
    if (st == QUIRE_E_JSON && len) {
        quire_limits lim = q_limits(&s->opts);
        qj_opts jo = {lim.max_depth, lim.max_string_bytes};
        char *c = q_malloc(s->a, len);
        quire_status rs = qs_parse_repaired(d, json, len, c, &jo, s->a);
        if (rs == QUIRE_E_NOMEM) {
            if (c) q_free(s->a, c, len);
            return q_oom(err);
        }
        if (rs == QUIRE_OK) {
            /* the bad text must lie in the message of an mcp or acp line */
            bool peer = false;
            uint32_t n = qj_type_of(d, 0) == QJ_ARRAY ? qj_at(d, 0)->n : 1, v = qj_type_of(d, 0) == QJ_ARRAY ? 1 : 0;
            for (uint32_t i = 0; i < n && !peer; i++, v = qj_next(d, v)) peer = qs_peer_text_at(d, v, e0.offset);
            if (peer) { *copy = c; return QUIRE_OK; }
            qj_doc_free(d);
        }
        if (c) q_free(s->a, c, len);
    }
    if (err && st) *err = e0;
    return st;
}

/* The raw bytes of a container node. */
static qline raw_of(const qj_doc *d, uint32_t v) {
    const qj_node *n = qj_at(d, v);
    if (n->type == QJ_STRING) {
        qline l = {n->p - 1, (size_t)n->len + 2};
        return l;
    }
    qline l = {n->p, n->len};
    return l;
}

/* ------------------------------------------------------------------------ */
/* Open, restore, free                                                       */
/* ------------------------------------------------------------------------ */

static quire_status new_session(const quire_caps *caps, const quire_options *opts, quire_session **out,
                                quire_error *err) {
    *out = NULL;
    const quire_allocator *a = q_alloc_of(opts);
    quire_session *s = q_malloc(a, sizeof *s);
    if (!s) return q_oom(err);
    memset(s, 0, sizeof *s);
    s->a = a;
    quire_options o = QUIRE_OPTIONS_INIT;
    if (opts) {
        size_t n = opts->size < sizeof o ? opts->size : sizeof o;
        memcpy(&o, opts, n);
        o.size = sizeof o;
    }
    o.flags |= QUIRE_PARSE_BORROW;
    s->opts = o;
    qarena_init(&s->lines, a);
    qbuf_init(&s->work, a);
    quire_status st = quire_replay_open("", 0, NULL, &s->opts, &s->r, err);
    if (st) { q_free(a, s, sizeof *s); return st; }
    s->r->caps = caps;
    s->r->live = true;
    *out = s;
    return QUIRE_OK;
}

void quire_session_free(quire_session *s) {
    if (!s) return;
    quire_replay_free(s->r);
    qarena_free(&s->lines);
    qbuf_free(&s->work);
    q_free(s->a, s->log, s->caplog * sizeof *s->log);
    q_free(s->a, s, sizeof *s);
}

quire_status quire_session_open(const char *config, size_t len, const quire_caps *caps, const quire_options *opts,
                                quire_session **out, quire_error *err) {
    quire_session *s;
    quire_status st = new_session(caps, opts, &s, err);
    if (st) return st;
    qj_doc d;
    if ((st = parse_input(s, &d, config, len, err))) { quire_session_free(s); return st; }
    if (qj_type_of(&d, 0) != QJ_OBJECT) {
        st = q_err_at(err, QUIRE_E_SCHEMA, 0, "", "expected an object (the session configuration), got %s",
                      qj_type_name(qj_type_of(&d, 0)));
        q_err_locate(err, config, len);
        qj_doc_free(&d);
        quire_session_free(s);
        return st;
    }
    /* the session line: "type":"session" then the configuration's members */
    qw w;
    qw_init(&w, &s->work, false);
    qw_obj_begin(&w);
    qw_key(&w, "type"); qw_strz(&w, "session");
    for (uint32_t k = 1; k < qj_at(&d, 0)->end; k = qj_next(&d, k + 1)) {
        if (qj_str_eq(&d, k, "type")) {
            if (qj_type_of(&d, k + 1) != QJ_STRING || !qj_str_eq(&d, k + 1, "session")) {
                st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, k + 1), "/type", "expected \"session\" or no type");
                q_err_locate(err, config, len);
                break;
            }
            continue;
        }
        qw_key_esc(&w, qj_at(&d, k)->p, qj_at(&d, k)->len);
        qw_node(&w, &d, k + 1);
    }
    qw_obj_end(&w);
    qw_dispose(&w);
    qj_doc_free(&d);
    if (!st && s->work.oom) st = q_oom(err);
    qline l = {0};
    if (!st && (st = apply_text(s, s->work.data, s->work.len, NULL, &l, err)) && err) {
        /* the line is the configuration rewritten: keep the pointer, locate nothing */
        err->offset = SIZE_MAX;
        err->line = 0;
        err->column = 0;
    }
    if (!st && !log_push(s, l)) st = q_oom(err);
    if (st) { quire_session_free(s); return st; }
    *out = s;
    return QUIRE_OK;
}

quire_status quire_session_restore(const char *log, size_t len, const quire_caps *caps, const quire_options *opts,
                                   quire_session **out, quire_error *err) {
    quire_session *s;
    quire_status st = new_session(caps, opts, &s, err);
    if (st) return st;
    quire_limits lim = q_limits(&s->opts);
    if ((uint64_t)len > lim.max_input_bytes) {
        st = q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                      (unsigned long long)lim.max_input_bytes);
        quire_session_free(s);
        return st;
    }
    char *src = qarena_alloc(&s->lines, len ? len : 1);
    if (!src) { quire_session_free(s); return q_oom(err); }
    if (len) memcpy(src, log, len);
    s->r->live = false; /* render lines commit their turn, as in replay */
    s->r->restoring = true;
    qline_iter it = {src, len, 0, 0};
    const char *line;
    size_t n, off;
    while (!st && q_next_line(&it, &line, &n, &off)) {
        if (q_line_blank(line, n)) continue;
        quire_replay_step step;
        s->r->out.len = 0;
        st = qrp_apply(s->r, line, n, it.lineno, off, &step, err);
        qline l = {line, n};
        if (!st && !log_push(s, l)) st = q_oom(err);
    }
    s->r->live = true;
    s->r->restoring = false;
    s->r->out.len = 0;
    if (!st && !s->r->seen_session)
        st = q_err_at(err, QUIRE_E_SESSION, 0, "", "the log has no session line");
    if (st) { quire_session_free(s); return st; }
    *out = s;
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Append, apply                                                             */
/* ------------------------------------------------------------------------ */

#define MSG_PREFIX "{\"type\":\"message\",\"message\":"

/* Applies one message (raw bytes of a JSON object) as a message line; on
 * success the line joins the log. */
static quire_status append_one(quire_session *s, qline raw, const char *prefix, size_t elem_off, const char *src,
                               size_t srclen, quire_error *err) {
    s->work.len = 0;
    qbuf_puts(&s->work, MSG_PREFIX);
    qbuf_put(&s->work, raw.p, raw.n);
    qbuf_putc(&s->work, '}');
    if (s->work.oom) return q_oom(err);
    qline l = {0};
    quire_status st = apply_text(s, s->work.data, s->work.len, NULL, &l, err);
    if (st) {
        err_onto_input(err, "/message", prefix, sizeof MSG_PREFIX - 1, elem_off, src, srclen);
        return st;
    }
    return log_push(s, l) ? QUIRE_OK : q_oom(err);
}

/* Messages of json (an object or an array of objects), all or nothing.
 * want_assistant: exactly one object whose role is "assistant". */
static quire_status append_messages(quire_session *s, const char *json, size_t len, bool want_assistant,
                                    quire_error *err) {
    qj_doc d;
    quire_status st = parse_input(s, &d, json, len, err);
    if (st) return st;
    qj_type ty = qj_type_of(&d, 0);
    if (ty != QJ_OBJECT && (want_assistant || ty != QJ_ARRAY)) {
        st = q_err_at(err, QUIRE_E_SCHEMA, 0, "", "expected %s, got %s",
                      want_assistant ? "an object (the assistant message)" : "an object or an array of messages",
                      qj_type_name(ty));
        q_err_locate(err, json, len);
        qj_doc_free(&d);
        return st;
    }
    if (want_assistant) {
        uint32_t role = qj_get(&d, 0, "role");
        if (role == QJ_NONE || qj_type_of(&d, role) != QJ_STRING || !qj_str_eq(&d, role, "assistant")) {
            st = q_err_at(err, QUIRE_E_INVALID, role == QJ_NONE ? 0 : qj_offset(&d, role), "/role",
                          "the accepted message must have role \"assistant\"");
            q_err_locate(err, json, len);
            qj_doc_free(&d);
            return st;
        }
    }
    quire_transcript *t = s->r->t;
    uint32_t saved_msgs = t->nmsgs;
    size_t saved_log = s->nlog;
    if (ty == QJ_OBJECT) {
        st = append_one(s, raw_of(&d, 0), "", 0, json, len, err);
    } else {
        uint32_t e = 1;
        for (uint32_t i = 0; !st && i < qj_at(&d, 0)->n; i++, e = qj_next(&d, e)) {
            char prefix[24];
            snprintf(prefix, sizeof prefix, "/%u", i);
            if (qj_type_of(&d, e) != QJ_OBJECT) {
                st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, e), prefix, "expected an object (a message), got %s",
                              qj_type_name(qj_type_of(&d, e)));
                q_err_locate(err, json, len);
                break;
            }
            st = append_one(s, raw_of(&d, e), prefix, qj_offset(&d, e), json, len, err);
        }
    }
    if (!st && s->r->t == t) {
        /* the conversation must stay renderable: the new messages (with the
         * assistant turn their results answer) pass the transcript checks
         * every render makes, calls still open allowed; a message that would
         * make every later render fail is refused here instead */
        uint32_t from = saved_msgs;
        while (from > 0 && from <= t->nmsgs && t->msgs[from - 1].role == QR_TOOL) from--;
        if (from > 0 && from <= t->nmsgs && t->msgs[from - 1].role == QR_ASSISTANT && from < t->nmsgs &&
            t->msgs[from].role == QR_TOOL)
            from--;
        qarena ar;
        qarena_init(&ar, s->a);
        quire_error ce;
        memset(&ce, 0, sizeof ce);
        quire_status cs = qtr_check_from(t, from, false, true, NULL, NULL, &ar, &ce);
        qarena_free(&ar);
        if (cs == QUIRE_E_NOMEM) {
            st = q_oom(err);
        } else if (cs) {
            /* name the message of the input: "/messages/N..." of the
             * conversation becomes "(/i)..." of what was appended */
            unsigned long n = 0;
            int used = 0;
            char where[sizeof ce.pointer] = "";
            if (sscanf(ce.pointer, "/messages/%lu%n", &n, &used) == 1 && n >= saved_msgs) {
                if (ty == QJ_ARRAY) snprintf(where, sizeof where, "/%lu%s", n - saved_msgs, ce.pointer + used);
                else snprintf(where, sizeof where, "%s", ce.pointer + used);
            } else {
                snprintf(where, sizeof where, "%s", ce.pointer);
            }
            st = q_err_at(err, cs, 0, where, "the conversation could not be rendered after it: %s", ce.message);
            if (err) { err->line = err->column = 0; err->offset = SIZE_MAX; }
        }
    }
    qj_doc_free(&d);
    if (st) {
        /* all or nothing: the messages appended before the failing one go */
        if (s->r->t == t) t->nmsgs = saved_msgs;
        s->nlog = saved_log;
    }
    return st;
}

quire_status quire_session_append(quire_session *s, const char *json, size_t len, quire_error *err) {
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_append: no session");
    drop_pending(s);
    reset_sinks(s);
    return append_messages(s, json, len, false, err);
}

static bool give(qbuf *b, quire_bytes *out) {
    if (!out) return true;
    memset(out, 0, sizeof *out);
    qbuf tmp;
    qbuf_init(&tmp, b->a);
    qbuf_put(&tmp, b->data ? b->data : "", b->len);
    if (tmp.oom || !qbuf_take(&tmp, out)) { qbuf_free(&tmp); return false; }
    return true;
}

static const char *const k_apply_types[] = {"mcp", "acp", "reminder", "clear"};

/* One line of apply: checks its type, applies it. */
static quire_status apply_one(quire_session *s, const qj_doc *d, const char *doc_src, const char *sent, uint32_t v,
                              const char *prefix, size_t elem_off, uint32_t lineno, const char *src, size_t srclen,
                              quire_error *err) {
    char ptr[40];
    if (qj_type_of(d, v) != QJ_OBJECT) {
        quire_status st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(d, v), prefix,
                                   "expected an object (a session-log line), got %s", qj_type_name(qj_type_of(d, v)));
        q_err_locate(err, src, srclen);
        return st;
    }
    uint32_t ty = qj_get(d, v, "type");
    bool ok = false;
    for (size_t i = 0; ty != QJ_NONE && qj_type_of(d, ty) == QJ_STRING && i < Q_COUNTOF(k_apply_types); i++)
        ok = ok || qj_str_eq(d, ty, k_apply_types[i]);
    if (!ok) {
        snprintf(ptr, sizeof ptr, "%s/type", prefix);
        quire_status st = q_err_at(err, QUIRE_E_INVALID, ty == QJ_NONE ? qj_offset(d, v) : qj_offset(d, ty), ptr,
                                   "apply takes lines of type mcp, acp, reminder or clear");
        q_err_locate(err, src, srclen);
        return st;
    }
    qline raw = raw_of(d, v);
    raw.p = sent + (raw.p - doc_src); /* the line as sent (d may read a repaired copy: parse_peer) */
    qline l = {0};
    quire_status st = apply_text(s, raw.p, raw.n, NULL, &l, err);
    (void)lineno;
    if (st) {
        err_onto_input(err, "", prefix, 0, elem_off, src, srclen);
        return st;
    }
    return log_push(s, l) ? QUIRE_OK : q_oom(err);
}

quire_status quire_session_apply(quire_session *s, const char *json, size_t len, quire_bytes *events,
                                 quire_bytes *responses, quire_error *err) {
    if (events) memset(events, 0, sizeof *events);
    if (responses) memset(responses, 0, sizeof *responses);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_apply: no session");
    drop_pending(s);
    reset_sinks(s);
    quire_replay *r = s->r;
    quire_state *saved = qs_clone(r->state);
    if (!saved) return q_oom(err);
    size_t saved_log = s->nlog;
    qj_doc d;
    char *copy = NULL;
    quire_status st = parse_peer(s, &d, json, len, &copy, NULL);
    if (st == QUIRE_OK) {
        /* one JSON value: an object (one line) or an array of lines */
        const char *ds = copy ? copy : json;
        if (qj_type_of(&d, 0) == QJ_ARRAY) {
            uint32_t e = 1;
            for (uint32_t i = 0; !st && i < qj_at(&d, 0)->n; i++, e = qj_next(&d, e)) {
                char prefix[24];
                snprintf(prefix, sizeof prefix, "/%u", i);
                st = apply_one(s, &d, ds, json, e, prefix, qj_offset(&d, e), 1, json, len, err);
            }
        } else {
            st = apply_one(s, &d, ds, json, 0, "", 0, 1, json, len, err);
        }
        qj_doc_free(&d);
        if (copy) q_free(s->a, copy, len);
    } else {
        /* JSONL: one line object a line */
        st = QUIRE_OK;
        qline_iter it = {json, len, 0, 0};
        const char *line;
        size_t n, off;
        while (!st && q_next_line(&it, &line, &n, &off)) {
            if (q_line_blank(line, n)) continue;
            qj_doc ld;
            quire_error lerr;
            quire_error *pe = err ? err : &lerr;
            char *lcopy = NULL;
            st = parse_peer(s, &ld, line, n, &lcopy, pe);
            if (st) {
                if (pe->offset != SIZE_MAX) pe->offset += off;
                q_err_locate(pe, json, len);
                break;
            }
            st = apply_one(s, &ld, lcopy ? lcopy : line, line, 0, "", off, it.lineno, json, len, err);
            qj_doc_free(&ld);
            if (lcopy) q_free(s->a, lcopy, n);
        }
    }
    if (st) {
        quire_state_free(r->state);
        r->state = saved;
        s->nlog = saved_log;
        return st;
    }
    quire_state_free(saved);
    if (!give(&r->sev, events) || !give(&r->sresp, responses)) {
        quire_bytes_free(events);
        quire_bytes_free(responses);
        return q_oom(err);
    }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Render and accept                                                         */
/* ------------------------------------------------------------------------ */

quire_status quire_session_render(quire_session *s, const char *target, size_t target_len, const char *params,
                                  size_t params_len, uint32_t flags, quire_session_turn *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_render: no session");
    drop_pending(s);
    reset_sinks(s);
    s->work.len = 0;
    qbuf_puts(&s->work, "{\"type\":\"render\"");
    if (params) {
        /* request parameters (DESIGN 13): checked here, carried by the render line */
        quire_status pst = quire_params_check(params, params_len, err);
        if (pst) return pst;
        qj_doc d;
        pst = parse_input(s, &d, params, params_len, err);
        if (pst) return pst;
        qbuf_puts(&s->work, ",\"params\":");
        qw w;
        qw_init(&w, &s->work, false);
        qw_node(&w, &d, 0);
        qw_dispose(&w);
        qj_doc_free(&d);
    }
    if (target) {
        qj_doc d;
        quire_status st = parse_input(s, &d, target, target_len, err);
        if (st) return st;
        if (qj_type_of(&d, 0) != QJ_OBJECT) {
            st = q_err_at(err, QUIRE_E_SCHEMA, 0, "", "expected an object {\"provider\", \"model\"}, got %s",
                          qj_type_name(qj_type_of(&d, 0)));
            q_err_locate(err, target, target_len);
            qj_doc_free(&d);
            return st;
        }
        qbuf_puts(&s->work, ",\"target\":");
        qw w;
        qw_init(&w, &s->work, false);
        qw_node(&w, &d, 0);
        qw_dispose(&w);
        qj_doc_free(&d);
    }
    qbuf_putc(&s->work, '}');
    if (s->work.oom) return q_oom(err);
    quire_replay_step step;
    qline l = {0};
    quire_status st = apply_text(s, s->work.data, s->work.len, &step, &l, err);
    if (st) {
        if (err && strncmp(err->pointer, "/target", 7) == 0) {
            memmove(err->pointer, err->pointer + 7, strlen(err->pointer + 7) + 1);
            err->offset = SIZE_MAX;
            err->line = err->column = 0;
        } else if (err && params && qr_is_param_pointer(err->pointer)) {
            /* a parameter the target cannot carry: the pointer names it in params */
            err->offset = SIZE_MAX;
            err->line = err->column = 0;
        }
        drop_pending(s);
        return st;
    }
    quire_replay *r = s->r;
    s->render_line = l;
    s->pending = true;
    /* the body as the memo's pieces (stored encodings of unchanged messages,
     * the bytes written this turn), borrowed; one copy only on request */
    size_t np = 0, blen = 0, nseg = 0;
    qr_memo_pieces(r->memo, &np, &blen);
    const quire_segment *segs = qr_memo_segments(r->memo, &nseg);
    if (!segs && np) { drop_pending(s); return q_oom(err); }
    out->segments = segs;
    out->nsegments = nseg;
    out->body_len = blen;
    if (flags & QUIRE_SESSION_CONTIGUOUS) {
        if (!qrp_flatten(r)) { drop_pending(s); return q_oom(err); }
        out->body = r->req.data;
    }
    out->method = "POST";
    out->path = r->env_path.data ? r->env_path.data : "";
    out->headers = r->env_headers.data ? r->env_headers.data : "{}";
    out->headers_len = r->env_headers.data ? r->env_headers.len : 2;
    out->events = r->sev.data ? r->sev.data : "";
    out->events_len = r->sev.len;
    out->turn = r->pending_turn;
    out->interrupt_pending = r->interrupt_pending;
    out->provider = step.provider;
    out->model = step.model;
    return QUIRE_OK;
}

quire_status quire_session_accept_message(quire_session *s, const char *json, size_t len, quire_error *err) {
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_accept_message: no session");
    if (!s->pending || !s->r->pending)
        return q_err(err, QUIRE_E_INVALID, "no pending turn: render the request before accepting its answer");
    reset_sinks(s);
    size_t saved_log = s->nlog;
    if (!log_push(s, s->render_line)) return q_oom(err);
    quire_status st = append_messages(s, json, len, true, err);
    if (st) {
        s->nlog = saved_log;
        return st; /* the turn stays pending */
    }
    quire_replay *r = s->r;
    quire_state_free(r->state);
    r->state = r->pending;
    r->pending = NULL;
    s->pending = false;
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Tool outcomes                                                             */
/* ------------------------------------------------------------------------ */

static bool id_matches(qstr id, const char *z, size_t n) {
    if (!id.esc) return id.len == n && memcmp(id.p, z, n) == 0;
    char tmp[512];
    if (id.len >= sizeof tmp) return false;
    size_t m = qj_unescape(id.p, id.len, tmp);
    return m == n && memcmp(tmp, z, n) == 0;
}

/* True when call_id is a toolCall of the last assistant message that no
 * tool message after it answers yet. */
static bool call_open(const quire_transcript *t, const char *id, size_t n) {
    uint32_t k = t->nmsgs;
    while (k > 0 && t->msgs[k - 1].role == QR_TOOL) k--;
    if (k == 0 || t->msgs[k - 1].role != QR_ASSISTANT) return false;
    const qmsg *m = &t->msgs[k - 1];
    bool found = false;
    for (uint32_t b = 0; b < m->nblocks && !found; b++)
        found = m->blocks[b].type == QB_TOOL_CALL && id_matches(m->blocks[b].id, id, n);
    if (!found) return false;
    for (uint32_t q = k; q < t->nmsgs; q++)
        for (uint32_t b = 0; b < t->msgs[q].nblocks; b++)
            if (id_matches(t->msgs[q].blocks[b].tool_call_id, id, n)) return false;
    return true;
}

static const char *const k_outcomes[] = {"completed", "failed", "timeout", "cancelled"};

quire_status quire_session_tool_outcome(quire_session *s, const char *call_id, quire_tool_outcome outcome,
                                        const char *content, size_t content_len, int *answered, quire_bytes *events,
                                        quire_error *err) {
    if (answered) *answered = 0;
    if (events) memset(events, 0, sizeof *events);
    if (!s || !call_id || !*call_id) return q_err(err, QUIRE_E_INVALID, "quire_session_tool_outcome: a call id is required");
    if ((unsigned)outcome > QUIRE_TOOL_CANCELLED) return q_err(err, QUIRE_E_INVALID, "unknown tool outcome %d", (int)outcome);
    size_t idn = strlen(call_id);
    if (!qrp_call_seen(s->r, call_id, idn)) {
        char q[80];
        q_quote_text(q, sizeof q, call_id, idn);
        return q_err(err, QUIRE_E_INVALID, "no toolCall with id \"%s\" in this session", q);
    }
    const char *name = k_outcomes[outcome];
    qj_doc d;
    bool have = content != NULL;
    quire_status st = QUIRE_OK;
    if (have) {
        if ((st = parse_input(s, &d, content, content_len, err))) return st;
        qj_type ty = qj_type_of(&d, 0);
        if (ty != QJ_STRING && ty != QJ_ARRAY) {
            st = q_err_at(err, QUIRE_E_SCHEMA, 0, "", "expected string or array of text/image blocks, got %s",
                          qj_type_name(ty));
            q_err_locate(err, content, content_len);
            qj_doc_free(&d);
            return st;
        }
    }
    qbuf b;
    qbuf_init(&b, s->a);
    qw w;
    qw_init(&w, &b, false);
    bool open = call_open(s->r->t, call_id, idn);
    if (open) {
        qw_obj_begin(&w);
        qw_key(&w, "role"); qw_strz(&w, "tool");
        qw_key(&w, "content");
        qw_arr_begin(&w);
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "toolResult");
        qw_key(&w, "toolCallId"); qw_str(&w, call_id, idn);
        qw_key(&w, "content");
        if (have) qw_node(&w, &d, 0);
        else { char t[64]; snprintf(t, sizeof t, "(tool call %s)", name); qw_strz(&w, t); }
        qw_key(&w, "isError"); qw_bool(&w, outcome != QUIRE_TOOL_COMPLETED);
        qw_obj_end(&w);
        qw_arr_end(&w);
        qw_obj_end(&w);
    } else {
        /* the call was answered (or its turn moved on): a reminder */
        qbuf body;
        qbuf_init(&body, s->a);
        qbuf_printf(&body, "The tool call %s finished after its turn: %s.", call_id, name);
        if (have && qj_type_of(&d, 0) == QJ_STRING) {
            qbuf_puts(&body, "\n");
            size_t n;
            char *txt = qj_str_decode(&d, 0, &s->lines, &n);
            if (txt) qbuf_put(&body, txt, n); else body.oom = true;
        } else if (have) {
            for (uint32_t e = 1; e < qj_at(&d, 0)->end; e = qj_next(&d, e)) {
                uint32_t tx = qj_type_of(&d, e) == QJ_OBJECT ? qj_get(&d, e, "text") : QJ_NONE;
                if (tx == QJ_NONE || qj_type_of(&d, tx) != QJ_STRING) continue;
                size_t n;
                char *txt = qj_str_decode(&d, tx, &s->lines, &n);
                qbuf_puts(&body, "\n");
                if (txt) qbuf_put(&body, txt, n); else body.oom = true;
            }
        }
        char key[600];
        snprintf(key, sizeof key, "tool_outcome:%s", call_id);
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "reminder");
        qw_key(&w, "reminder");
        qw_obj_begin(&w);
        qw_key(&w, "body"); qw_str(&w, body.data ? body.data : "", body.len);
        qw_key(&w, "tags"); qw_arr_begin(&w); qw_strz(&w, "tool_outcome"); qw_arr_end(&w);
        qw_key(&w, "dedupeKey"); qw_strz(&w, key);
        qw_key(&w, "ttlTurns"); qw_int(&w, 1);
        qw_obj_end(&w);
        qw_obj_end(&w);
        if (body.oom) b.oom = true;
        qbuf_free(&body);
    }
    qw_dispose(&w);
    if (have) qj_doc_free(&d);
    if (b.oom) { qbuf_free(&b); return q_oom(err); }
    if (open) {
        st = quire_session_append(s, b.data, b.len, err);
        if (!st && answered) *answered = 1;
    } else {
        st = quire_session_apply(s, b.data, b.len, events, NULL, err);
    }
    qbuf_free(&b);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Compaction and estimates                                                  */
/* ------------------------------------------------------------------------ */

quire_status quire_session_compact(quire_session *s, const char *policy, size_t policy_len, const char *summary,
                                   size_t summary_len, quire_bytes *report, quire_bytes *events, quire_error *err) {
    return quire_session_compact_span(s, policy, policy_len, summary, summary_len, NULL, report, events, err);
}

quire_status quire_session_compact_span(quire_session *s, const char *policy, size_t policy_len, const char *summary,
                                        size_t summary_len, const char *span_id, quire_bytes *report,
                                        quire_bytes *events, quire_error *err) {
    if (report) memset(report, 0, sizeof *report);
    if (events) memset(events, 0, sizeof *events);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_compact: no session");
    if (span_id && !summary) return q_err(err, QUIRE_E_INVALID, "a span id goes with a summary of that span");
    drop_pending(s);
    reset_sinks(s);
    quire_replay *r = s->r;
    s->work.len = 0;
    qbuf_puts(&s->work, "{\"type\":\"compact\"");
    quire_status st;
    if (policy) {
        qj_doc d;
        if ((st = parse_input(s, &d, policy, policy_len, err))) return st;
        qc_policy p = QUIRE_COMPACT_POLICY_INIT;
        st = qc_policy_parse(&d, 0, &p, err);
        if (st) { q_err_locate(err, policy, policy_len); qj_doc_free(&d); return st; }
        qbuf_puts(&s->work, ",\"policy\":");
        qw w;
        qw_init(&w, &s->work, false);
        qw_node(&w, &d, 0);
        qw_dispose(&w);
        qj_doc_free(&d);
    } else if (r->compact_policy) {
        qbuf_puts(&s->work, ",\"policy\":");
        qbuf_put(&s->work, r->compact_policy, r->compact_policy_len);
    }
    if (summary) {
        qbuf_puts(&s->work, ",\"summary\":");
        qw w;
        qw_init(&w, &s->work, false);
        qw_str(&w, summary, summary_len);
        qw_dispose(&w);
        if (span_id) {
            qbuf_puts(&s->work, ",\"span\":");
            qw_init(&w, &s->work, false);
            qw_str(&w, span_id, strlen(span_id));
            qw_dispose(&w);
        }
    }
    qbuf_putc(&s->work, '}');
    if (s->work.oom) return q_oom(err);
    qline l = {0};
    if ((st = apply_text(s, s->work.data, s->work.len, NULL, &l, err))) {
        if (err) { err->offset = SIZE_MAX; err->line = err->column = 0; }
        return st;
    }
    if (!log_push(s, l)) return q_oom(err);
    if (!give(&r->sreport, report) || !give(&r->sev, events)) {
        quire_bytes_free(report);
        quire_bytes_free(events);
        return q_oom(err);
    }
    return QUIRE_OK;
}

static quire_status session_policy(const quire_session *s, const char *policy, size_t len, qc_policy *p,
                                   quire_error *err) {
    qc_policy d0 = QUIRE_COMPACT_POLICY_INIT;
    d0.keep_last_steps = 0; /* as the replay of the logged compact line reads it (session/replay.c) */
    *p = d0;
    quire_status st;
    if (s->r->compact_policy &&
        (st = quire_compact_policy_parse(s->r->compact_policy, s->r->compact_policy_len, p, err)))
        return st;
    if (policy && (st = quire_compact_policy_parse(policy, len, p, err))) return st;
    return QUIRE_OK;
}

quire_status quire_session_plan(quire_session *s, const char *policy, size_t policy_len, int pretty, quire_bytes *out,
                                quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_plan: no session");
    qc_policy p;
    quire_status st = session_policy(s, policy, policy_len, &p, err);
    if (!st) st = qrp_request_budget(s->r, &p, err);
    if (st) return st;
    return quire_compact_plan(s->r->t, &p, pretty, &s->opts, out, err);
}

/* A plain (unescaped) string member of the target object into buf; "" when absent. */
static quire_status target_field(const qj_doc *d, const char *key, char *buf, size_t cap, quire_error *err) {
    buf[0] = 0;
    uint32_t v = qj_get(d, 0, key);
    if (v == QJ_NONE || qj_type_of(d, v) == QJ_NULL) return QUIRE_OK;
    const qj_node *n = qj_at(d, v);
    if (n->type != QJ_STRING || n->len >= cap || memchr(n->p, '\\', n->len))
        return q_err_at(err, QUIRE_E_SCHEMA, qj_offset(d, v), key[0] == 'p' ? "/provider" : "/model",
                        "expected a plain string of at most %zu bytes", cap - 1);
    memcpy(buf, n->p, n->len);
    buf[n->len] = 0;
    return QUIRE_OK;
}

quire_status quire_session_estimate_request(const quire_session *s, const char *target, size_t target_len,
                                            quire_estimate *out, quire_error *err) {
    if (out) memset(out, 0, sizeof *out);
    if (!s || !out) return q_err(err, QUIRE_E_INVALID, "quire_session_estimate_request: no session or result");
    const quire_replay *r = s->r;
    char prov[128], model[256];
    const char *p = r->provider, *m = r->model;
    if (target) {
        qj_doc d;
        quire_limits lim = q_limits(&s->opts);
        qj_opts jo = {lim.max_depth, lim.max_string_bytes};
        quire_status st = qj_parse(&d, target, target_len, &jo, s->a, err);
        if (st) return st;
        if (qj_type_of(&d, 0) != QJ_OBJECT) {
            qj_doc_free(&d);
            return q_err_at(err, QUIRE_E_SCHEMA, 0, "", "expected an object {\"provider\", \"model\"}");
        }
        bool had_model = qj_get(&d, 0, "model") != QJ_NONE;
        st = target_field(&d, "provider", prov, sizeof prov, err);
        if (!st) st = target_field(&d, "model", model, sizeof model, err);
        qj_doc_free(&d);
        if (st) { q_err_locate(err, target, target_len); return st; }
        if (prov[0]) { p = prov; if (!had_model) m = NULL; }
        if (had_model) m = model[0] ? model : NULL;
    }
    if (!p) return q_err(err, QUIRE_E_INVALID, "the session has no target provider: give one");
    return qrp_estimate(r, p, m, NULL, &s->opts, out, err);
}

uint64_t quire_session_estimate(const quire_session *s) {
    if (!s) return 0;
    qc_policy p;
    if (session_policy(s, NULL, 0, &p, NULL)) {
        qc_policy d0 = QUIRE_COMPACT_POLICY_INIT;
        p = d0;
    }
    return quire_compact_estimate(s->r->t, &p);
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

quire_status quire_session_transcript(const quire_session *s, int pretty, quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_transcript: no session");
    return quire_transcript_write(s->r->t, pretty, out, err);
}

quire_status quire_session_state(const quire_session *s, int pretty, quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_state: no session");
    return quire_state_write(s->r->state, pretty, out, err);
}

quire_status quire_session_log(const quire_session *s, quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_log: no session");
    qbuf b;
    qbuf_init(&b, s->a);
    size_t total = 0;
    for (size_t i = 0; i < s->nlog; i++) total += s->log[i].n + 1;
    qbuf_grow(&b, total);
    for (size_t i = 0; i < s->nlog; i++) {
        qbuf_put(&b, s->log[i].p, s->log[i].n);
        qbuf_putc(&b, '\n');
    }
    if (b.oom || !qbuf_take(&b, out)) { qbuf_free(&b); return q_oom(err); }
    return QUIRE_OK;
}

int64_t quire_session_turn_count(const quire_session *s) { return s ? s->r->state->turn : 0; }

size_t quire_session_message_count(const quire_session *s) { return s ? s->r->t->nmsgs : 0; }

/* ------------------------------------------------------------------------ */
/* Push routing, responses in (DESIGN 11, 12)                                */
/* ------------------------------------------------------------------------ */

quire_status quire_session_subscriptions(const quire_session *s, const char *server, quire_bytes *out,
                                         quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_subscriptions: no session");
    return quire_state_subscriptions(s->r->state, server, out, err);
}

/* The session's tool names (plain bytes in ar), for mapping an answer's
 * calls back to them (docs/providers.md, "Provider rules"). */
static quire_status session_tool_names(const quire_session *s, qarena *ar, rnames *names, quire_error *err) {
    const quire_transcript *t = s->r->t;
    memset(names, 0, sizeof *names);
    if (!t || !t->has_tools || !t->ntools) return QUIRE_OK;
    names->p = qarena_alloc(ar, (size_t)t->ntools * sizeof *names->p);
    names->len = qarena_alloc(ar, (size_t)t->ntools * sizeof *names->len);
    if (!names->p || !names->len) return q_oom(err);
    for (uint32_t i = 0; i < t->ntools; i++) {
        if (!qstr_present(t->tools[i].name)) continue;
        size_t n = 0;
        const char *p = qstr_plain_bytes(t->tools[i].name, ar, &n);
        if (!p) return q_oom(err);
        names->p[names->n] = p;
        names->len[names->n] = n;
        names->n++;
    }
    return QUIRE_OK;
}

quire_status quire_session_accept_response(quire_session *s, const quire_response *r, quire_error *err) {
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_accept_response: no session");
    if (!r || !r->message.data) return q_err(err, QUIRE_E_INVALID, "quire_session_accept_response: no decoded response");
    /* a call naming one of the session's tools by the name the pending turn's
     * dialect sent it under gets the tool's own name back (a stream decoded
     * without ro.tools) */
    quire_bytes mapped = {0};
    quire_status st = QUIRE_OK;
    if (s->pending && s->r->pending) {
        qarena nar;
        qarena_init(&nar, s->a);
        rnames names;
        st = session_tool_names(s, &nar, &names, err);
        if (!st && names.n)
            st = qresp_map_message(s->r->target_provider, s->r->target_model[0] ? s->r->target_model : NULL, s->r->caps,
                                   r->message.data, r->message.len, &names, s->a, &mapped, err);
        qarena_free(&nar);
        if (st) return st;
    }
    const quire_bytes *msg = mapped.data ? &mapped : &r->message;
    /* the log line must be one line: the message is written compact */
    quire_bytes compact = {0};
    st = quire_json_format(msg->data, msg->len, 0, &s->opts, &compact, err);
    quire_bytes_free(&mapped);
    if (st) return st;
    st = quire_session_accept_message(s, compact.data, compact.len, err);
    quire_bytes_free(&compact);
    return st;
}

quire_status quire_session_accept(quire_session *s, const char *bytes, size_t len, const quire_response_options *ro,
                                  quire_bytes *info, quire_error *err) {
    if (info) memset(info, 0, sizeof *info);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_session_accept: no session");
    if (!s->pending || !s->r->pending)
        return q_err(err, QUIRE_E_INVALID, "no pending turn: render the request before accepting its answer");
    quire_response_options o = QUIRE_RESPONSE_OPTIONS_INIT;
    if (ro) {
        size_t n = ro->size < sizeof o ? ro->size : sizeof o;
        memcpy(&o, ro, n);
        o.size = sizeof o;
    }
    if (!o.caps) o.caps = s->r->caps;
    o.pretty = 0;
    /* ids the decoder makes up are unique in the session: the turn is part of them */
    char prefix[40];
    if (!o.call_id_prefix) {
        snprintf(prefix, sizeof prefix, "call_%lld_", (long long)quire_session_turn_count(s) + 1);
        o.call_id_prefix = prefix;
    }
    quire_options jo = s->opts;
    jo.flags &= ~QUIRE_PARSE_BORROW;
    const char *model = s->r->target_model[0] ? s->r->target_model : NULL;
    quire_response res;
    memset(&res, 0, sizeof res);
    /* the session's tools: a call naming one by the name the dialect sent it
     * under (Bedrock) gets its own name back, unless ro gives the tools */
    qarena nar;
    qarena_init(&nar, s->a);
    rnames names = {NULL, NULL, 0};
    quire_status st = o.tools ? QUIRE_OK : session_tool_names(s, &nar, &names, err);
    if (!st)
        st = qresp_decode_named(s->r->target_provider, model, bytes ? bytes : "", bytes ? len : 0, &o, &jo,
                                o.tools ? NULL : &names, &res, err);
    qarena_free(&nar);
    if (st) return st; /* the turn stays pending */
    st = quire_session_accept_message(s, res.message.data, res.message.len, err);
    if (st == QUIRE_OK && info) {
        *info = res.info;
        memset(&res.info, 0, sizeof res.info);
    }
    quire_response_free(&res);
    return st;
}
