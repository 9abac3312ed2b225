/* SWE-agent trajectory (.traj) -> quire.session/1 (docs/replay.md,
 * "Importers").
 *
 * A .traj file is one JSON object: `trajectory` (one step per model call:
 * thought, action, observation, the query sent), `history` (the agent's
 * message list in OpenAI chat shape), `info` and `replay_config` (the run's
 * configuration, often as a JSON string). The history is what the model saw:
 * each entry has `role`, `content` (a string or a list of text / image_url
 * parts), `agent`, `message_type`; assistant entries carry `thought` and
 * `action` (the parsed halves of the content) and, with function calling,
 * `tool_calls`; tool entries carry `tool_call_ids`. Agents that parse actions
 * out of text write no tool_calls: observations then come back as user text.
 *
 *   system (first, before any message) -> the session's system prompt
 *   system, user                       -> a message of that role
 *   assistant                          -> a render (unless a demonstration,
 *                                         is_demo), then an assistant message:
 *                                         text, then one toolCall per tool call
 *   tool                               -> a tool message, its result paired by
 *                                         tool_call_ids[0] (what SWE-agent sends)
 * Repeated call ids are renamed (import.h, qcalls) and the rename is recorded
 * in the message's meta.renamedToolCallIds.
 */
#include "session/import.h"

#include <stdio.h>

#define WHAT "SWE-agent trajectory"

typedef struct sw {
    qimport_ctx *c;
    qj_doc d;
    qj_doc cfg; /* replay_config when it is JSON text */
    bool have_cfg;
    int mode;       /* which parts content_blocks takes: P_ALL, P_MODEL, P_NO_IMAGES, P_IMAGES */
    qarena ar;
    qlinecur lc;
    qcalls calls;
    qbuf body;
    int32_t *pend;
    uint32_t npend, cappend;
    uint32_t messages, renders, demos, calls_n, results, dropped, skipped, other_agent, thinking;
    quire_status st;
} sw;

static uint32_t line_of(sw *s, uint32_t node) { return qlinecur_at(&s->lc, qj_offset(&s->d, node)); }

static bool is_true(const qj_doc *d, uint32_t obj, const char *key) {
    uint32_t v = qj_get(d, obj, key);
    return v != QJ_NONE && qj_type_of(d, v) == QJ_TRUE;
}

static void w_text(qw *w, const qj_doc *d, uint32_t tx) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text"); qw_node(w, d, tx);
    qw_obj_end(w);
}

static void w_json_text(sw *s, qw *w, const qj_doc *d, uint32_t node) {
    if (!q_import_w_json_text(w, d, node, s->c->a)) s->st = q_oom(s->c->err);
}

/* image_url {url}: a data: URL -> mediaType + data, else url. */
static void w_image(sw *s, qw *w, uint32_t part) {
    const qj_doc *d = &s->d;
    uint32_t iu = qj_get(d, part, "image_url");
    uint32_t u = qj_type_of(d, iu) == QJ_STRING ? iu : q_import_str(d, iu, "url");
    size_t n = 0;
    const char *url = qj_str_decode(d, u, &s->ar, &n);
    if (!url) { s->st = q_oom(s->c->err); return; }
    const char *b64 = n > 5 && memcmp(url, "data:", 5) == 0 ? strstr(url, ";base64,") : NULL;
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "image");
    if (b64 && b64 > url + 5) {
        qw_key(w, "mediaType"); qw_str(w, url + 5, (size_t)(b64 - url - 5));
        qw_key(w, "data"); qw_str(w, b64 + 8, n - (size_t)(b64 + 8 - url));
    } else {
        qw_key(w, "url"); qw_node(w, d, u);
    }
    qw_obj_end(w);
}

static bool image_ok(const qj_doc *d, uint32_t part) {
    uint32_t ty = q_import_str(d, part, "type");
    if (ty == QJ_NONE || !qj_str_eq(d, ty, "image_url")) return false;
    uint32_t iu = qj_get(d, part, "image_url");
    if (iu == QJ_NONE) return false;
    uint32_t u = qj_type_of(d, iu) == QJ_STRING ? iu : q_import_str(d, iu, "url");
    return u != QJ_NONE && qj_at(d, u)->len;
}

/* The parts content_blocks takes (s->mode): all of them; an assistant
 * message's (images there become their JSON text: no chat API takes an image
 * from the assistant); a tool result's (images go to a user message after it:
 * OpenAI chat takes no image in a tool message); only the images. */
enum { P_ALL, P_MODEL, P_NO_IMAGES, P_IMAGES };

/* The blocks of a content value; written when w is not NULL. */
static uint32_t content_blocks(sw *s, qw *w, uint32_t ct) {
    const qj_doc *d = &s->d;
    if (ct == QJ_NONE) return 0;
    if (qj_type_of(d, ct) == QJ_STRING) {
        if (!qj_at(d, ct)->len || s->mode == P_IMAGES) return 0;
        if (w) w_text(w, d, ct);
        return 1;
    }
    if (qj_type_of(d, ct) != QJ_ARRAY) return 0;
    uint32_t n = 0, p = ct + 1;
    for (uint32_t k = 0; k < qj_at(d, ct)->n; k++, p = qj_next(d, p)) {
        uint32_t tx = q_import_str(d, p, "text");
        if (qj_type_of(d, p) == QJ_STRING) tx = p;
        bool img = tx == QJ_NONE && image_ok(d, p);
        if (s->mode == P_IMAGES ? !img : (img && s->mode == P_NO_IMAGES)) continue;
        if (tx != QJ_NONE) {
            if (!qj_at(d, tx)->len) continue;
            if (w) w_text(w, d, tx);
        } else if (img && s->mode != P_MODEL) {
            if (w) w_image(s, w, p);
        } else {
            if (w) w_json_text(s, w, d, p);
        }
        n++;
    }
    return n;
}

static void answer_pending(sw *s, uint32_t lineno) {
    uint32_t n = qcalls_answer_pending(&s->calls, s->pend, &s->npend, &s->body, lineno);
    if (!n) return;
    s->messages++;
    q_import_report(s->c, lineno, "note: answered %u tool call(s) that had no tool message with an error result", n);
}

/* function.arguments: JSON text inside a string -> the value (byte for byte
 * when it fits on one line); a string that is not JSON stays a string. */
static void w_arguments(sw *s, qw *w, uint32_t args) {
    const qj_doc *d = &s->d;
    if (args == QJ_NONE || qj_type_of(d, args) == QJ_NULL) { qw_obj_begin(w); qw_obj_end(w); return; }
    if (qj_type_of(d, args) != QJ_STRING) { qw_node(w, d, args); return; }
    size_t n;
    const char *txt = qj_str_decode(d, args, &s->ar, &n);
    if (!txt) { s->st = q_oom(s->c->err); qw_node(w, d, args); return; }
    qj_doc ad;
    quire_error pe;
    quire_limits lim = q_limits(s->c->opts);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_status ps = n ? qj_parse(&ad, txt, n, &jo, s->c->a, &pe) : QUIRE_E_JSON;
    if (ps == QUIRE_OK) {
        if (memchr(txt, '\n', n) || memchr(txt, '\r', n)) qw_node(w, &ad, 0);
        else qw_raw_value(w, txt, n);
        qj_doc_free(&ad);
    } else {
        if (ps == QUIRE_E_NOMEM) s->st = q_oom(s->c->err); /* not a reason to keep the text */
        qw_node(w, d, args);
    }
}

static bool push_pend(sw *s, int32_t ix) {
    if (s->npend == s->cappend) {
        uint32_t nc = s->cappend ? s->cappend * 2 : 8;
        int32_t *np = q_realloc(s->c->a, s->pend, (size_t)s->cappend * sizeof *np, (size_t)nc * sizeof *np);
        if (!np) return false;
        s->pend = np;
        s->cappend = nc;
    }
    s->pend[s->npend++] = ix;
    return true;
}

static uint32_t call_name(const qj_doc *d, uint32_t tc) {
    uint32_t fn = q_import_get(d, tc, "function", QJ_OBJECT);
    uint32_t nm = q_import_str(d, fn, "name");
    return nm != QJ_NONE && qj_at(d, nm)->len ? nm : QJ_NONE;
}

static void assistant(sw *s, uint32_t e, uint32_t i) {
    const qj_doc *d = &s->d;
    uint32_t ln = line_of(s, e);
    uint32_t ct = qj_get(d, e, "content");
    uint32_t tcs = qj_get(d, e, "tool_calls");
    if (tcs != QJ_NONE && qj_type_of(d, tcs) != QJ_ARRAY) tcs = QJ_NONE;
    uint32_t ncalls = 0;
    if (tcs != QJ_NONE) {
        uint32_t p = tcs + 1;
        for (uint32_t k = 0; k < qj_at(d, tcs)->n; k++, p = qj_next(d, p)) {
            if (call_name(d, p) != QJ_NONE) { ncalls++; continue; }
            q_import_report(s->c, line_of(s, p), "note: dropped /history/%u/tool_calls/%u: a tool call without a function name", i, k);
            s->dropped++;
        }
    }
    if (qj_get(d, e, "thinking_blocks") != QJ_NONE) s->thinking++;
    answer_pending(s, ln);
    s->mode = P_MODEL;
    uint32_t ntext = content_blocks(s, NULL, ct);
    s->mode = P_ALL;
    if (!ntext && !ncalls) {
        q_import_report(s->c, ln, "note: skipped /history/%u: an assistant message with no content and no tool call", i);
        s->skipped++;
        return;
    }
    bool demo = is_true(d, e, "is_demo");
    qw w;
    if (demo) {
        s->demos++;
    } else if (s->messages) {
        q_log_line_begin(&w, &s->body, "render");
        q_w_meta_line(&w, ln);
        q_log_line_end(&w, &s->body);
        s->renders++;
    } else {
        q_import_report(s->c, ln, "note: /history/%u: a model response before any message is kept as history, without a model call", i);
    }
    q_log_message_begin(&w, &s->body, "assistant");
    qw_key(&w, "content");
    qw_arr_begin(&w);
    s->mode = P_MODEL;
    content_blocks(s, &w, ct);
    s->mode = P_ALL;
    uint32_t first = s->npend;
    if (tcs != QJ_NONE) {
        uint32_t p = tcs + 1;
        for (uint32_t k = 0; k < qj_at(d, tcs)->n; k++, p = qj_next(d, p)) {
            uint32_t nm = call_name(d, p);
            if (nm == QJ_NONE) continue;
            uint32_t id = q_import_str(d, p, "id");
            int32_t ix = qcalls_add(&s->calls, id != QJ_NONE ? qj_at(d, id)->p : NULL, id != QJ_NONE ? qj_at(d, id)->len : 0,
                                    id == QJ_NONE);
            if (ix < 0 || !push_pend(s, ix)) { s->st = q_oom(s->c->err); qw_dispose(&w); return; }
            s->calls_n++;
            const qcall *kc = &s->calls.v[ix];
            qw_obj_begin(&w);
            qw_key(&w, "type"); qw_strz(&w, "toolCall");
            qw_key(&w, "id"); qw_str_esc(&w, kc->id, kc->idn);
            qw_key(&w, "name"); qw_node(&w, d, nm);
            qw_key(&w, "input"); w_arguments(s, &w, qj_get(d, q_import_get(d, p, "function", QJ_OBJECT), "arguments"));
            qw_obj_end(&w);
        }
    }
    qw_arr_end(&w);
    qcalls_w_meta(&s->calls, &w, s->pend + first, s->npend - first);
    qw_obj_end(&w);
    q_w_meta_line(&w, ln);
    q_log_line_end(&w, &s->body);
    s->messages++;
}

static void tool(sw *s, uint32_t e, uint32_t i) {
    const qj_doc *d = &s->d;
    uint32_t ln = line_of(s, e);
    uint32_t ids = qj_get(d, e, "tool_call_ids");
    uint32_t id = QJ_NONE;
    if (ids != QJ_NONE && qj_type_of(d, ids) == QJ_ARRAY && qj_at(d, ids)->n && qj_type_of(d, ids + 1) == QJ_STRING) {
        id = ids + 1;
        if (qj_at(d, ids)->n > 1)
            q_import_report(s->c, ln, "note: /history/%u: %u tool_call_ids, paired by the first (as SWE-agent sends it)", i,
                   qj_at(d, ids)->n);
    } else {
        id = q_import_str(d, e, "tool_call_id");
    }
    int32_t ix = id != QJ_NONE ? qcalls_answer(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len) : -1;
    if (ix < 0) {
        q_import_report(s->c, ln, "note: dropped /history/%u: a tool message for a tool call not in the conversation", i);
        s->dropped++;
        return;
    }
    s->results++;
    const qcall *kc = &s->calls.v[ix];
    uint32_t ct = qj_get(d, e, "content");
    qw w;
    q_log_message_begin(&w, &s->body, "tool");
    qw_key(&w, "content");
    qw_arr_begin(&w);
    qw_obj_begin(&w);
    qw_key(&w, "type"); qw_strz(&w, "toolResult");
    qw_key(&w, "toolCallId"); qw_str_esc(&w, kc->id, kc->idn);
    qw_key(&w, "content");
    if (ct != QJ_NONE && qj_type_of(d, ct) == QJ_STRING) {
        qw_node(&w, d, ct);
    } else {
        s->mode = P_NO_IMAGES;
        if (ct != QJ_NONE && qj_type_of(d, ct) == QJ_ARRAY && content_blocks(s, NULL, ct)) {
            qw_arr_begin(&w);
            content_blocks(s, &w, ct);
            qw_arr_end(&w);
        } else {
            qw_str(&w, "", 0);
        }
        s->mode = P_ALL;
    }
    qw_obj_end(&w);
    qw_arr_end(&w);
    qcalls_w_meta(&s->calls, &w, &ix, 1);
    qw_obj_end(&w);
    q_w_meta_line(&w, ln);
    q_log_line_end(&w, &s->body);
    s->messages++;
    /* its images: a user message right after it */
    s->mode = P_IMAGES;
    uint32_t nimg = ct != QJ_NONE && qj_type_of(d, ct) == QJ_ARRAY ? content_blocks(s, NULL, ct) : 0;
    if (nimg) {
        q_log_message_begin(&w, &s->body, "user");
        qw_key(&w, "content");
        qw_arr_begin(&w);
        content_blocks(s, &w, ct);
        qw_arr_end(&w);
        qw_obj_end(&w);
        q_w_meta_line(&w, ln);
        q_log_line_end(&w, &s->body);
        s->messages++;
        q_import_report(s->c, ln, "note: /history/%u: %u image(s) of a tool message moved to a user message after it", i, nimg);
    }
    s->mode = P_ALL;
}

static void input(sw *s, uint32_t e, uint32_t i, const char *role) {
    const qj_doc *d = &s->d;
    uint32_t ln = line_of(s, e);
    uint32_t ct = qj_get(d, e, "content");
    answer_pending(s, ln);
    if (!content_blocks(s, NULL, ct)) {
        q_import_report(s->c, ln, "note: skipped /history/%u: a %s message with no content", i, role);
        s->skipped++;
        return;
    }
    qw w;
    q_log_message_begin(&w, &s->body, role);
    qw_key(&w, "content");
    if (qj_type_of(d, ct) == QJ_STRING) {
        qw_node(&w, d, ct);
    } else {
        qw_arr_begin(&w);
        content_blocks(s, &w, ct);
        qw_arr_end(&w);
    }
    qw_obj_end(&w);
    q_w_meta_line(&w, ln);
    q_log_line_end(&w, &s->body);
    s->messages++;
}

/* replay_config.agent.model.name (replay_config is an object or JSON text). */
static void find_model(sw *s, const qj_doc **md, uint32_t *model) {
    const qj_doc *d = &s->d;
    *md = d;
    *model = QJ_NONE;
    uint32_t rc = qj_get(d, 0, "replay_config");
    if (rc == QJ_NONE) return;
    uint32_t root = rc;
    if (qj_type_of(d, rc) == QJ_STRING) {
        size_t n;
        const char *txt = qj_str_decode(d, rc, &s->ar, &n);
        quire_error pe;
        quire_limits lim = q_limits(s->c->opts);
        qj_opts jo = {lim.max_depth, lim.max_string_bytes};
        if (!txt) { s->st = q_oom(s->c->err); return; }
        quire_status ps = qj_parse(&s->cfg, txt, n, &jo, s->c->a, &pe);
        if (ps == QUIRE_E_NOMEM) s->st = q_oom(s->c->err);
        if (ps != QUIRE_OK) return;
        s->have_cfg = true;
        *md = &s->cfg;
        root = 0;
    }
    uint32_t mm = q_import_get(*md, q_import_get(*md, root, "agent", QJ_OBJECT), "model", QJ_OBJECT);
    uint32_t nm = q_import_str(*md, mm, "name");
    if (nm == QJ_NONE) nm = q_import_str(*md, mm, "model_name"); /* SWE-agent 0.x */
    if (nm != QJ_NONE && qj_at(*md, nm)->len) *model = nm;
}

quire_status q_import_swe_agent(qimport_ctx *c, const char *src, size_t len) {
    sw s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.lc.src = src;
    s.lc.len = len;
    quire_status st = q_import_parse_doc(c, &s.d, WHAT, src, len);
    if (st) return st;
    const qj_doc *d = &s.d;
    uint32_t hist = qj_type_of(d, 0) == QJ_OBJECT ? qj_get(d, 0, "history") : QJ_NONE;
    if (hist == QJ_NONE || qj_type_of(d, hist) != QJ_ARRAY) {
        if (qj_type_of(d, 0) != QJ_OBJECT)
            st = q_import_err(c, QUIRE_E_INVALID, d, 0, "", "not a " WHAT ": expected a JSON object, got %s",
                              qj_type_name(qj_type_of(d, 0)));
        else
            st = q_import_err(c, QUIRE_E_INVALID, d, hist == QJ_NONE ? 0 : hist, hist == QJ_NONE ? "" : "/history",
                              "not a " WHAT ": %s", hist == QJ_NONE ? "no \"history\" array" : "\"history\" is not an array");
        qj_doc_free(&s.d);
        return st;
    }
    /* the shape first */
    uint32_t e = hist + 1;
    for (uint32_t i = 0; i < qj_at(d, hist)->n; i++, e = qj_next(d, e)) {
        char ptr[64];
        const char *why = NULL;
        uint32_t at = e;
        if (qj_type_of(d, e) != QJ_OBJECT) {
            why = "expected an object";
            snprintf(ptr, sizeof ptr, "/history/%u", i);
        } else {
            uint32_t r = qj_get(d, e, "role"), ct = qj_get(d, e, "content");
            if (r == QJ_NONE || qj_type_of(d, r) != QJ_STRING) {
                why = r == QJ_NONE ? "no \"role\"" : "\"role\" is not a string";
                snprintf(ptr, sizeof ptr, r == QJ_NONE ? "/history/%u" : "/history/%u/role", i);
                if (r != QJ_NONE) at = r;
            } else if (ct != QJ_NONE && qj_type_of(d, ct) != QJ_STRING && qj_type_of(d, ct) != QJ_ARRAY &&
                       qj_type_of(d, ct) != QJ_NULL) {
                why = "\"content\" must be a string or a list of parts";
                snprintf(ptr, sizeof ptr, "/history/%u/content", i);
                at = ct;
            }
        }
        if (why) {
            st = q_import_err(c, QUIRE_E_INVALID, d, at, ptr, "not a " WHAT " history entry: %s", why);
            qj_doc_free(&s.d);
            return st;
        }
    }
    qarena_init(&s.ar, c->a);
    qcalls_init(&s.calls, c->a, &s.ar);
    qbuf_init(&s.body, c->a);
    const qj_doc *md;
    uint32_t model;
    find_model(&s, &md, &model);
    uint32_t sys = QJ_NONE, agent = QJ_NONE;
    e = hist + 1;
    for (uint32_t i = 0; i < qj_at(d, hist)->n && s.st == QUIRE_OK; i++, e = qj_next(d, e)) {
        uint32_t r = qj_get(d, e, "role");
        uint32_t ag = q_import_str(d, e, "agent");
        if (ag != QJ_NONE) {
            if (agent == QJ_NONE) {
                agent = ag;
            } else if (qj_at(d, ag)->len != qj_at(d, agent)->len ||
                       memcmp(qj_at(d, ag)->p, qj_at(d, agent)->p, qj_at(d, ag)->len) != 0) {
                s.other_agent++;
                q_import_report(s.c, line_of(&s, e), "note: skipped /history/%u: an entry of another agent (\"%.*s\")", i,
                       (int)(qj_at(d, ag)->len > 40 ? 40 : qj_at(d, ag)->len), qj_at(d, ag)->p);
                continue;
            }
        }
        if (qj_str_eq(d, r, "system")) {
            uint32_t ct = qj_get(d, e, "content");
            if (s.messages == 0 && sys == QJ_NONE && ct != QJ_NONE && qj_type_of(d, ct) == QJ_STRING && qj_at(d, ct)->len) {
                sys = ct;
                continue;
            }
            input(&s, e, i, "system");
        } else if (qj_str_eq(d, r, "user")) {
            input(&s, e, i, "user");
        } else if (qj_str_eq(d, r, "assistant")) {
            assistant(&s, e, i);
        } else if (qj_str_eq(d, r, "tool")) {
            tool(&s, e, i);
        } else {
            s.skipped++;
            q_import_report(s.c, line_of(&s, e), "note: skipped /history/%u: unknown role \"%.*s\"", i,
                   (int)(qj_at(d, r)->len > 40 ? 40 : qj_at(d, r)->len), qj_at(d, r)->p);
        }
    }
    if (s.st == QUIRE_OK) {
        qw w;
        q_log_line_begin(&w, c->out, "session");
        qw_key(&w, "target");
        qw_obj_begin(&w);
        qw_key(&w, "provider"); qw_strz(&w, c->provider);
        if (model != QJ_NONE) { qw_key(&w, "model"); qw_node(&w, md, model); }
        qw_obj_end(&w);
        if (sys != QJ_NONE) { qw_key(&w, "system"); qw_node(&w, d, sys); }
        qw_key(&w, "_meta");
        qw_obj_begin(&w);
        qw_key(&w, "importedFrom"); qw_strz(&w, "swe-agent");
        qw_obj_end(&w);
        q_log_line_end(&w, c->out);
        qbuf_put(c->out, s.body.data, s.body.len);
        if (s.calls.renamed) q_import_report(s.c, 0, "note: renamed %u repeated tool call ids (see renamedToolCallIds)", s.calls.renamed);
        if (s.thinking) q_import_report(s.c, 0, "note: dropped the thinking_blocks of %u assistant messages", s.thinking);
        qbuf_printf(c->report,
                    "summary: %u history entries, %u messages, %u renders, %u demonstrations, %u tool calls, "
                    "%u tool results, %u dropped, %u empty skipped, %u of other agents\n",
                    qj_at(d, hist)->n, s.messages, s.renders, s.demos, s.calls_n, s.results, s.dropped, s.skipped,
                    s.other_agent);
        if (s.body.oom) s.st = q_oom(c->err);
    }
    q_free(c->a, s.pend, (size_t)s.cappend * sizeof *s.pend);
    qcalls_free(&s.calls);
    qbuf_free(&s.body);
    qarena_free(&s.ar);
    if (s.have_cfg) qj_doc_free(&s.cfg);
    qj_doc_free(&s.d);
    return s.st;
}
