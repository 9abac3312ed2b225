/* Gemini CLI chat recording -> quire.session/1 (docs/replay.md, "Importers").
 *
 * Gemini CLI records each chat as one JSON file
 * (~/.gemini/tmp/<project hash>/chats/session-*.json, written by its
 * ChatRecordingService): {sessionId, projectHash, startTime, lastUpdated,
 * messages: [...]}. Each message has an id, a timestamp, a type and a content
 * (a string, or Gemini parts). Type `user` is what the user sent; type
 * `gemini` is one model response, with optional `toolCalls` (id, name, args,
 * status and the `result` parts Gemini CLI sent back, functionResponse parts
 * first), `thoughts` (summaries shown in the UI), `tokens` and `model`; types
 * `info`, `error` and `warning` are UI notices.
 *
 *   user                 -> a user message
 *   gemini               -> a render, then an assistant message (text, then one
 *                           toolCall per toolCalls entry), then a tool message
 *                           with each call's result
 *   info, error, warning -> skipped, with a note
 * thoughts and tokens are dropped (the summary counts them).
 */
#include "session/import.h"

#include <stdio.h>

#define WHAT "Gemini CLI chat recording"

typedef struct gx {
    qimport_ctx *c;
    qj_doc d;
    qarena ar;
    qlinecur lc;
    qcalls calls;
    qbuf body;
    uint32_t session_model;
    bool model_turn; /* writing a model turn: media parts have no place there */
    uint32_t messages, renders, calls_n, thoughts, notices, skipped, unknown, parts_opaque, parts_json;
    quire_status st;
} gx;

static uint32_t line_of(gx *s, uint32_t node) { return qlinecur_at(&s->lc, qj_offset(&s->d, node)); }

/* What a Gemini part becomes: 1 text, 2 media, 3 an opaque Gemini part (code
 * execution parts, which have no quire form), 0 a text block holding the
 * part's JSON (anything else); -1 skipped (a thought part, empty text). */
static int part_kind(const qj_doc *d, uint32_t p) {
    if (qj_type_of(d, p) != QJ_OBJECT) return 0;
    uint32_t th = qj_get(d, p, "thought");
    if (th != QJ_NONE && qj_type_of(d, th) == QJ_TRUE) return -1;
    uint32_t tx = q_import_str(d, p, "text");
    if (tx != QJ_NONE) return qj_at(d, tx)->len ? 1 : -1;
    uint32_t id = q_import_get(d, p, "inlineData", QJ_OBJECT);
    if (id != QJ_NONE && q_import_str(d, id, "mimeType") != QJ_NONE && q_import_str(d, id, "data") != QJ_NONE) return 2;
    uint32_t fd = q_import_get(d, p, "fileData", QJ_OBJECT);
    if (fd != QJ_NONE && q_import_str(d, fd, "fileUri") != QJ_NONE) return 2;
    if (qj_at(d, p)->n == 1 && q_import_str(d, q_import_get(d, p, "executableCode", QJ_OBJECT), "code") != QJ_NONE) return 3;
    if (qj_at(d, p)->n == 1 && q_import_str(d, q_import_get(d, p, "codeExecutionResult", QJ_OBJECT), "outcome") != QJ_NONE) return 3;
    return 0;
}

static bool is_image(const qj_doc *d, uint32_t mt) {
    return qj_at(d, mt)->len >= 6 && memcmp(qj_at(d, mt)->p, "image/", 6) == 0;
}

static void w_text(qw *w, const qj_doc *d, uint32_t tx) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text"); qw_node(w, d, tx);
    qw_obj_end(w);
}

/* Writes part p (part_kind k >= 0) as a transcript block. */
static void w_part(gx *s, qw *w, uint32_t p, int k) {
    const qj_doc *d = &s->d;
    if (k == 1) { w_text(w, d, q_import_str(d, p, "text")); return; }
    if (k == 2) {
        uint32_t id = q_import_get(d, p, "inlineData", QJ_OBJECT);
        uint32_t src = id != QJ_NONE ? id : q_import_get(d, p, "fileData", QJ_OBJECT);
        uint32_t mt = q_import_str(d, src, "mimeType");
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, mt != QJ_NONE && !is_image(d, mt) ? "document" : "image");
        if (mt != QJ_NONE) { qw_key(w, "mediaType"); qw_node(w, d, mt); }
        if (id != QJ_NONE) { qw_key(w, "data"); qw_node(w, d, q_import_str(d, id, "data")); }
        else { qw_key(w, "url"); qw_node(w, d, q_import_str(d, src, "fileUri")); }
        qw_obj_end(w);
        return;
    }
    if (k == 0) { /* no quire or Gemini form: its JSON as text */
        s->parts_json++;
        if (!q_import_w_json_text(w, d, p, s->c->a)) s->st = q_oom(s->c->err);
        return;
    }
    s->parts_opaque++;
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "opaque");
    qw_key(w, "provider"); qw_strz(w, "gemini");
    qw_key(w, "item"); qw_node(w, d, p);
    qw_obj_end(w);
}

/* The blocks a content value (string, one part or a part list) gives; writes
 * them when w is not NULL. Returns how many. */
static uint32_t content_blocks(gx *s, qw *w, uint32_t ct) {
    const qj_doc *d = &s->d;
    if (ct == QJ_NONE) return 0;
    if (qj_type_of(d, ct) == QJ_STRING) {
        if (!qj_at(d, ct)->len) return 0;
        if (w) w_text(w, d, ct);
        return 1;
    }
    if (qj_type_of(d, ct) == QJ_OBJECT) {
        int k = part_kind(d, ct);
        if (k == 2 && s->model_turn) k = 0;
        if (k < 0) return 0;
        if (w) w_part(s, w, ct, k);
        return 1;
    }
    if (qj_type_of(d, ct) != QJ_ARRAY) return 0;
    uint32_t n = 0, p = ct + 1;
    for (uint32_t i = 0; i < qj_at(d, ct)->n; i++, p = qj_next(d, p)) {
        if (qj_type_of(d, p) == QJ_STRING) { /* PartListUnion allows bare strings */
            if (!qj_at(d, p)->len) continue;
            if (w) w_text(w, d, p);
            n++;
            continue;
        }
        int k = part_kind(d, p);
        if (k < 0) continue;
        if (k == 2 && s->model_turn) k = 0;
        if (w) w_part(s, w, p, k);
        n++;
    }
    return n;
}

static void begin_message(gx *s, qw *w, const char *role, uint32_t msg) {
    q_log_message_begin(w, &s->body, role);
    qw_key(w, "content");
    qw_arr_begin(w);
    (void)msg;
}

static void end_message(gx *s, qw *w, uint32_t msg, const char *id_suffix, const int32_t *idx, uint32_t nidx) {
    const qj_doc *d = &s->d;
    qw_arr_end(w);
    uint32_t id = q_import_str(d, msg, "id");
    if (id != QJ_NONE && qj_at(d, id)->len) {
        qw_key(w, "id");
        if (!id_suffix) {
            qw_node(w, d, id);
        } else {
            qbuf t;
            qbuf_init(&t, s->c->a);
            qbuf_put(&t, qj_at(d, id)->p, qj_at(d, id)->len);
            qbuf_put(&t, id_suffix, strlen(id_suffix));
            qw_str_esc(w, t.data ? t.data : "", t.len);
            if (t.oom) s->st = q_oom(s->c->err);
            qbuf_free(&t);
        }
    }
    if (idx && nidx) qcalls_w_meta(&s->calls, w, idx, nidx);
    qw_obj_end(w);
    q_w_meta_line(w, line_of(s, msg));
    q_log_line_end(w, &s->body);
    s->messages++;
}

/* The content of one call's result: the functionResponse's response.output
 * (or .error, then isError) as a string when it is the only part; else an
 * array of text and image blocks; other response shapes as their JSON text. */
static void w_result(gx *s, qw *w, uint32_t call, const qcall *kc) {
    const qj_doc *d = &s->d;
    uint32_t res = qj_get(d, call, "result");
    uint32_t status = q_import_str(d, call, "status");
    bool is_err = status != QJ_NONE && (qj_str_eq(d, status, "error") || qj_str_eq(d, status, "cancelled"));
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "toolResult");
    qw_key(w, "toolCallId"); qw_str_esc(w, kc->id, kc->idn);
    qw_key(w, "content");
    /* the parts, as a list */
    uint32_t first = QJ_NONE, n = 0;
    if (res != QJ_NONE && qj_type_of(d, res) == QJ_ARRAY) { first = res + 1; n = qj_at(d, res)->n; }
    else if (res != QJ_NONE && (qj_type_of(d, res) == QJ_OBJECT || qj_type_of(d, res) == QJ_STRING)) { first = res; n = 1; }
    uint32_t one = n == 1 ? q_import_get(d, first, "functionResponse", QJ_OBJECT) : QJ_NONE;
    uint32_t obj = q_import_get(d, one, "response", QJ_OBJECT);
    if (obj != QJ_NONE && q_import_str(d, obj, "output") == QJ_NONE && q_import_str(d, obj, "error") == QJ_NONE) {
        /* a response object of the tool's own (an MCP tool's {"content": ...}):
         * a structured result, so Gemini gets the object it got, byte-exact */
        qw_node(w, d, obj);
    } else if (n == 0) {
        uint32_t rd = q_import_str(d, call, "resultDisplay");
        if (rd != QJ_NONE && qj_at(d, rd)->len) qw_node(w, d, rd);
        else qw_strz(w, "[no output was recorded for this call]");
        is_err = is_err || rd == QJ_NONE || !qj_at(d, rd)->len;
    } else {
        /* one text-like value per part */
        bool arr = n > 1;
        if (arr) qw_arr_begin(w);
        uint32_t p = first;
        for (uint32_t i = 0; i < n; i++, p = qj_next(d, p)) {
            uint32_t fr = q_import_get(d, p, "functionResponse", QJ_OBJECT);
            uint32_t txt = QJ_NONE, json = QJ_NONE;
            if (fr != QJ_NONE) {
                uint32_t rsp = q_import_get(d, fr, "response", QJ_OBJECT);
                txt = q_import_str(d, rsp, "output");
                if (txt == QJ_NONE && (txt = q_import_str(d, rsp, "error")) != QJ_NONE) is_err = true;
                if (txt == QJ_NONE) json = rsp != QJ_NONE ? rsp : fr;
            } else if (qj_type_of(d, p) == QJ_STRING) {
                txt = p;
            } else if (part_kind(d, p) == 1) {
                txt = q_import_str(d, p, "text");
            } else if (arr && part_kind(d, p) == 2 && q_import_get(d, p, "inlineData", QJ_OBJECT) != QJ_NONE &&
                       is_image(d, q_import_str(d, q_import_get(d, p, "inlineData", QJ_OBJECT), "mimeType"))) {
                w_part(s, w, p, 2);
                continue;
            } else {
                json = p; /* no form in a tool result (a PDF's inlineData, ...): its JSON as text */
                s->parts_json++;
            }
            if (arr) { qw_obj_begin(w); qw_key(w, "type"); qw_strz(w, "text"); qw_key(w, "text"); }
            if (txt != QJ_NONE) {
                if (qj_at(d, txt)->len || !arr) qw_node(w, d, txt);
                else qw_strz(w, "(empty)");
            } else if (!q_import_w_json_string(w, d, json, s->c->a)) {
                s->st = q_oom(s->c->err);
            }
            if (arr) qw_obj_end(w);
        }
        if (arr) qw_arr_end(w);
    }
    if (is_err) { qw_key(w, "isError"); qw_bool(w, true); }
    qw_obj_end(w);
}

static bool same_str(const qj_doc *d, uint32_t x, uint32_t y) {
    if (x == QJ_NONE || y == QJ_NONE) return x == y;
    return qj_at(d, x)->len == qj_at(d, y)->len && memcmp(qj_at(d, x)->p, qj_at(d, y)->p, qj_at(d, x)->len) == 0;
}

/* A toolCalls entry that can be a call: a name, and args absent, null or an object. */
static bool call_ok(const qj_doc *d, uint32_t p) {
    uint32_t nm = q_import_str(d, p, "name");
    if (nm == QJ_NONE || !qj_at(d, nm)->len) return false;
    uint32_t args = qj_get(d, p, "args");
    return args == QJ_NONE || qj_type_of(d, args) == QJ_NULL || qj_type_of(d, args) == QJ_OBJECT;
}

static void gemini_message(gx *s, uint32_t m, uint32_t i) {
    const qj_doc *d = &s->d;
    uint32_t ln = line_of(s, m);
    uint32_t ct = qj_get(d, m, "content");
    uint32_t tc = q_import_get(d, m, "toolCalls", QJ_ARRAY);
    uint32_t th = q_import_get(d, m, "thoughts", QJ_ARRAY);
    if (th != QJ_NONE) s->thoughts += qj_at(d, th)->n;
    uint32_t ncalls = 0;
    if (tc != QJ_NONE) {
        uint32_t p = tc + 1;
        for (uint32_t k = 0; k < qj_at(d, tc)->n; k++, p = qj_next(d, p))
            if (call_ok(d, p)) ncalls++;
            else q_import_report(s->c, line_of(s, p), "note: dropped /messages/%u/toolCalls/%u: a tool call without a name or with "
                                          "args that are not an object (Gemini takes no other)", i, k);
    }
    s->model_turn = true;
    uint32_t ntext = content_blocks(s, NULL, ct);
    s->model_turn = false;
    if (!ntext && !ncalls) {
        q_import_report(s->c, ln, "note: skipped /messages/%u: a gemini message with no text and no tool call", i);
        s->skipped++;
        return;
    }
    qw w;
    if (s->messages) {
        q_log_line_begin(&w, &s->body, "render");
        uint32_t model = q_import_str(d, m, "model");
        if (model != QJ_NONE && !same_str(d, model, s->session_model)) {
            qw_key(&w, "target");
            qw_obj_begin(&w);
            qw_key(&w, "provider"); qw_strz(&w, s->c->provider);
            qw_key(&w, "model"); qw_node(&w, d, model);
            qw_obj_end(&w);
        }
        q_w_meta_line(&w, ln);
        q_log_line_end(&w, &s->body);
        s->renders++;
    } else {
        q_import_report(s->c, ln, "note: /messages/%u: a model response before any user message is kept as history, "
                      "without a model call", i);
    }
    int32_t stackidx[16];
    int32_t *idx = ncalls <= 16 ? stackidx : qarena_alloc(&s->ar, (size_t)ncalls * sizeof *idx);
    if (!idx) { s->st = q_oom(s->c->err); return; }
    begin_message(s, &w, "assistant", m);
    s->model_turn = true;
    content_blocks(s, &w, ct);
    s->model_turn = false;
    uint32_t nk = 0;
    if (tc != QJ_NONE) {
        uint32_t p = tc + 1;
        for (uint32_t k = 0; k < qj_at(d, tc)->n; k++, p = qj_next(d, p)) {
            uint32_t nm = q_import_str(d, p, "name");
            if (!call_ok(d, p)) continue;
            uint32_t id = q_import_str(d, p, "id");
            int32_t ix = qcalls_add(&s->calls, id != QJ_NONE ? qj_at(d, id)->p : NULL, id != QJ_NONE ? qj_at(d, id)->len : 0,
                                    id == QJ_NONE);
            if (ix < 0) { s->st = q_oom(s->c->err); qw_dispose(&w); return; }
            s->calls.v[ix].answered = true; /* its result is in the same record */
            idx[nk++] = ix;
            const qcall *kc = &s->calls.v[ix];
            qw_obj_begin(&w);
            qw_key(&w, "type"); qw_strz(&w, "toolCall");
            qw_key(&w, "id"); qw_str_esc(&w, kc->id, kc->idn);
            qw_key(&w, "name"); qw_node(&w, d, nm);
            qw_key(&w, "input");
            uint32_t args = qj_get(d, p, "args");
            if (args == QJ_NONE || qj_type_of(d, args) == QJ_NULL) { qw_obj_begin(&w); qw_obj_end(&w); }
            else qw_node(&w, d, args);
            qw_obj_end(&w);
            s->calls_n++;
        }
    }
    end_message(s, &w, m, NULL, idx, nk);
    if (!nk) return;
    begin_message(s, &w, "tool", m);
    uint32_t p = tc + 1;
    for (uint32_t k = 0, j = 0; k < qj_at(d, tc)->n; k++, p = qj_next(d, p)) {
        if (!call_ok(d, p)) continue;
        w_result(s, &w, p, &s->calls.v[idx[j++]]);
    }
    end_message(s, &w, m, "/results", idx, nk);
}

static void user_message(gx *s, uint32_t m, uint32_t i) {
    uint32_t ct = qj_get(&s->d, m, "content");
    if (!content_blocks(s, NULL, ct)) {
        q_import_report(s->c, line_of(s, m), "note: skipped /messages/%u: a user message without content", i);
        s->skipped++;
        return;
    }
    qw w;
    begin_message(s, &w, "user", m);
    content_blocks(s, &w, ct);
    end_message(s, &w, m, NULL, NULL, 0);
}

quire_status q_import_gemini_cli(qimport_ctx *c, const char *src, size_t len) {
    gx s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.session_model = QJ_NONE;
    s.lc.src = src;
    s.lc.len = len;
    quire_status st = q_import_parse_doc(c, &s.d, WHAT, src, len);
    if (st) return st;
    const qj_doc *d = &s.d;
    if (qj_type_of(d, 0) != QJ_OBJECT) {
        st = q_import_err(c, QUIRE_E_INVALID, d, 0, "", "not a " WHAT ": expected a JSON object, got %s",
                          qj_type_name(qj_type_of(d, 0)));
        qj_doc_free(&s.d);
        return st;
    }
    uint32_t msgs = qj_get(d, 0, "messages");
    if (msgs == QJ_NONE || qj_type_of(d, msgs) != QJ_ARRAY) {
        st = q_import_err(c, QUIRE_E_INVALID, d, msgs == QJ_NONE ? 0 : msgs, msgs == QJ_NONE ? "" : "/messages",
                          "not a " WHAT ": %s", msgs == QJ_NONE ? "no \"messages\" array" : "\"messages\" is not an array");
        qj_doc_free(&s.d);
        return st;
    }
    qarena_init(&s.ar, c->a);
    qcalls_init(&s.calls, c->a, &s.ar);
    qbuf_init(&s.body, c->a);
    /* check the shape first: an entry that is not a message is an error */
    uint32_t m = msgs + 1;
    for (uint32_t i = 0; i < qj_at(d, msgs)->n && s.st == QUIRE_OK; i++, m = qj_next(d, m)) {
        char ptr[64];
        if (qj_type_of(d, m) != QJ_OBJECT) {
            snprintf(ptr, sizeof ptr, "/messages/%u", i);
            s.st = q_import_err(c, QUIRE_E_INVALID, d, m, ptr, "not a " WHAT " message: expected an object, got %s",
                                qj_type_name(qj_type_of(d, m)));
            break;
        }
        uint32_t ty = qj_get(d, m, "type");
        if (ty == QJ_NONE || qj_type_of(d, ty) != QJ_STRING) {
            snprintf(ptr, sizeof ptr, ty == QJ_NONE ? "/messages/%u" : "/messages/%u/type", i);
            s.st = q_import_err(c, QUIRE_E_INVALID, d, ty == QJ_NONE ? m : ty, ptr,
                                "not a " WHAT " message: %s", ty == QJ_NONE ? "no \"type\"" : "\"type\" is not a string");
            break;
        }
        if (s.session_model == QJ_NONE && qj_str_eq(d, ty, "gemini")) s.session_model = q_import_str(d, m, "model");
    }
    m = msgs + 1;
    for (uint32_t i = 0; i < qj_at(d, msgs)->n && s.st == QUIRE_OK; i++, m = qj_next(d, m)) {
        uint32_t ty = qj_get(d, m, "type");
        if (qj_str_eq(d, ty, "user")) {
            user_message(&s, m, i);
        } else if (qj_str_eq(d, ty, "gemini")) {
            gemini_message(&s, m, i);
        } else if (qj_str_eq(d, ty, "info") || qj_str_eq(d, ty, "error") || qj_str_eq(d, ty, "warning")) {
            s.notices++;
            q_import_report(s.c, line_of(&s, m), "note: skipped /messages/%u: a Gemini CLI %.*s notice (shown to the user, never "
                                       "sent to the model)", i, (int)qj_at(d, ty)->len, qj_at(d, ty)->p);
        } else {
            s.unknown++;
            q_import_report(s.c, line_of(&s, m), "note: skipped /messages/%u: unknown message type \"%.*s\"", i,
                   (int)(qj_at(d, ty)->len > 40 ? 40 : qj_at(d, ty)->len), qj_at(d, ty)->p);
        }
    }
    if (s.st == QUIRE_OK) {
        qw w;
        q_log_line_begin(&w, c->out, "session");
        uint32_t sid = q_import_str(d, 0, "sessionId");
        if (sid != QJ_NONE) { qw_key(&w, "sessionId"); qw_node(&w, d, sid); }
        qw_key(&w, "target");
        qw_obj_begin(&w);
        qw_key(&w, "provider"); qw_strz(&w, c->provider);
        if (s.session_model != QJ_NONE) { qw_key(&w, "model"); qw_node(&w, d, s.session_model); }
        qw_obj_end(&w);
        qw_key(&w, "_meta");
        qw_obj_begin(&w);
        qw_key(&w, "importedFrom"); qw_strz(&w, "gemini-cli");
        qw_obj_end(&w);
        q_log_line_end(&w, c->out);
        qbuf_put(c->out, s.body.data, s.body.len);
        if (s.thoughts)
            q_import_report(s.c, 0, "note: dropped %u thought summaries (Gemini CLI shows them; it does not send them back)",
                   s.thoughts);
        if (s.calls.renamed) q_import_report(s.c, 0, "note: renamed %u repeated tool call ids (see renamedToolCallIds)", s.calls.renamed);
        if (s.parts_json)
            q_import_report(s.c, 0, "note: %u part(s) with no transcript form in their place (media other than an image "
                            "in a tool result, unknown parts) are sent as their JSON text", s.parts_json);
        qbuf_printf(c->report,
                    "summary: %u messages in the recording, %u messages, %u renders, %u tool calls, %u thoughts dropped, "
                    "%u notices skipped, %u empty skipped, %u unknown skipped, %u opaque parts, %u parts as JSON text\n",
                    qj_at(d, msgs)->n, s.messages, s.renders, s.calls_n, s.thoughts, s.notices, s.skipped, s.unknown,
                    s.parts_opaque, s.parts_json);
        if (s.body.oom) s.st = q_oom(c->err);
    }
    qcalls_free(&s.calls);
    qbuf_free(&s.body);
    qarena_free(&s.ar);
    qj_doc_free(&s.d);
    return s.st;
}
