/* Cline task history -> quire.session/1 (docs/replay.md, "Importers").
 *
 * Cline keeps, per task, api_conversation_history.json: a JSON array of the
 * Anthropic Messages it sent and received ({role, content}, content a string
 * or Anthropic blocks). Older Cline versions write tool use as XML-like text
 * inside assistant text ("<read_file><path>x</path></read_file>") and send
 * results back as user text blocks ("[read_file for 'x'] Result:" then the
 * output); newer versions use native tool_use / tool_result blocks. Both are
 * imported as what was sent: text stays text, native blocks map to toolCall
 * and toolResult.
 *
 *   user      -> a user message (text, image, document, toolResult blocks)
 *   assistant -> a render, then an assistant message (text, thinking,
 *                redactedThinking, toolCall; other blocks opaque anthropic)
 * Extra per-message fields (timestamps, model info, metrics) are dropped.
 */
#include "session/import.h"

#include <stdio.h>

#define WHAT "Cline api_conversation_history.json"

typedef struct cl {
    qimport_ctx *c;
    qj_doc d;
    qarena ar;
    qlinecur lc;
    qcalls calls;
    qbuf body;
    int32_t *pend;  /* call indices of the last assistant message */
    uint32_t npend, cappend;
    uint32_t messages, renders, calls_n, results, text_results, dropped, skipped, opaque;
    quire_status st;
} cl;

static uint32_t line_of(cl *s, uint32_t node) { return qlinecur_at(&s->lc, qj_offset(&s->d, node)); }

static void w_copy(qw *w, const qj_doc *d, uint32_t obj, const char *from, const char *to) {
    qw_key(w, to);
    qw_node(w, d, qj_get(d, obj, from));
}

static bool source_ok(const qj_doc *d, uint32_t blk) {
    uint32_t src = qj_get(d, blk, "source");
    if (src == QJ_NONE || qj_type_of(d, src) != QJ_OBJECT) return false;
    uint32_t ty = q_import_str(d, src, "type");
    if (ty == QJ_NONE) return false;
    if (qj_str_eq(d, ty, "base64")) return q_import_str(d, src, "data") != QJ_NONE && q_import_str(d, src, "media_type") != QJ_NONE;
    if (qj_str_eq(d, ty, "url")) return q_import_str(d, src, "url") != QJ_NONE;
    return false;
}

static void w_media(qw *w, const qj_doc *d, uint32_t b, const char *type) {
    uint32_t src = qj_get(d, b, "source");
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, type);
    if (qj_str_eq(d, q_import_str(d, src, "type"), "base64")) {
        w_copy(w, d, src, "media_type", "mediaType");
        w_copy(w, d, src, "data", "data");
    } else {
        w_copy(w, d, src, "url", "url");
    }
    if (strcmp(type, "document") == 0 && q_import_str(d, b, "title") != QJ_NONE) w_copy(w, d, b, "title", "title");
    qw_obj_end(w);
}

static void w_text(qw *w, const qj_doc *d, uint32_t tx) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text"); qw_node(w, d, tx);
    qw_obj_end(w);
}

static void w_json_text(cl *s, qw *w, uint32_t node) {
    if (!q_import_w_json_text(w, &s->d, node, s->c->a)) s->st = q_oom(s->c->err);
}

/* What a block becomes: 0 dropped, 1 written as-is kind, 2 toolCall, 3 toolResult. */
enum { B_DROP, B_KEEP, B_CALL, B_RESULT };

static int block_kind(const qj_doc *d, uint32_t b, bool assistant) {
    uint32_t ty = q_import_str(d, b, "type");
    if (ty == QJ_NONE || !qj_at(d, ty)->len) return B_DROP; /* no Anthropic block has no type */
    if (qj_str_eq(d, ty, "text")) {
        uint32_t tx = q_import_str(d, b, "text");
        return tx != QJ_NONE && qj_at(d, tx)->len ? B_KEEP : B_DROP;
    }
    if (qj_str_eq(d, ty, "tool_use")) { /* a name, and an object input (Anthropic takes no other) */
        uint32_t in = qj_get(d, b, "input");
        if (in != QJ_NONE && qj_type_of(d, in) != QJ_OBJECT) return B_DROP;
        return assistant && q_import_str(d, b, "name") != QJ_NONE && qj_at(d, q_import_str(d, b, "name"))->len ? B_CALL : B_DROP;
    }
    if (qj_str_eq(d, ty, "tool_result")) return !assistant && q_import_str(d, b, "tool_use_id") != QJ_NONE ? B_RESULT : B_DROP;
    if (qj_str_eq(d, ty, "thinking"))
        return assistant && q_import_str(d, b, "thinking") != QJ_NONE ? B_KEEP : B_DROP;
    if (qj_str_eq(d, ty, "redacted_thinking")) return assistant && q_import_str(d, b, "data") != QJ_NONE ? B_KEEP : B_DROP;
    if (qj_str_eq(d, ty, "image") || qj_str_eq(d, ty, "document")) return !assistant && source_ok(d, b) ? B_KEEP : B_DROP;
    return B_KEEP; /* other Anthropic blocks: opaque */
}

static void w_block(cl *s, qw *w, uint32_t b) {
    const qj_doc *d = &s->d;
    uint32_t ty = q_import_str(d, b, "type");
    if (ty != QJ_NONE && qj_str_eq(d, ty, "text")) {
        w_text(w, d, q_import_str(d, b, "text"));
    } else if (ty != QJ_NONE && qj_str_eq(d, ty, "thinking") && q_import_str(d, b, "thinking") != QJ_NONE) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "thinking");
        w_copy(w, d, b, "thinking", "text");
        if (q_import_str(d, b, "signature") != QJ_NONE) w_copy(w, d, b, "signature", "signature");
        qw_obj_end(w);
    } else if (ty != QJ_NONE && qj_str_eq(d, ty, "redacted_thinking") && q_import_str(d, b, "data") != QJ_NONE) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "redactedThinking");
        w_copy(w, d, b, "data", "data");
        qw_obj_end(w);
    } else if (ty != QJ_NONE && (qj_str_eq(d, ty, "image") || qj_str_eq(d, ty, "document")) && source_ok(d, b)) {
        w_media(w, d, b, qj_str_eq(d, ty, "image") ? "image" : "document");
    } else {
        s->opaque++;
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "opaque");
        qw_key(w, "provider"); qw_strz(w, "anthropic");
        qw_key(w, "item"); qw_node(w, d, b);
        qw_obj_end(w);
    }
}

static void w_result(cl *s, qw *w, uint32_t b, const qcall *kc) {
    const qj_doc *d = &s->d;
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "toolResult");
    qw_key(w, "toolCallId"); qw_str_esc(w, kc->id, kc->idn);
    qw_key(w, "content");
    uint32_t cv = qj_get(d, b, "content");
    if (cv != QJ_NONE && qj_type_of(d, cv) == QJ_STRING) {
        qw_node(w, d, cv);
    } else if (cv != QJ_NONE && qj_type_of(d, cv) == QJ_ARRAY && qj_at(d, cv)->n) {
        qw_arr_begin(w);
        uint32_t p = cv + 1;
        for (uint32_t k = 0; k < qj_at(d, cv)->n; k++, p = qj_next(d, p)) {
            uint32_t pt = q_import_str(d, p, "type");
            if (pt != QJ_NONE && qj_str_eq(d, pt, "text") && q_import_str(d, p, "text") != QJ_NONE) w_text(w, d, q_import_str(d, p, "text"));
            else if (pt != QJ_NONE && qj_str_eq(d, pt, "image") && source_ok(d, p)) w_media(w, d, p, "image");
            else w_json_text(s, w, p); /* no quire form inside a tool result: its JSON as text */
        }
        qw_arr_end(w);
    } else {
        qw_str(w, "", 0);
    }
    uint32_t ie = qj_get(d, b, "is_error");
    if (ie != QJ_NONE && (qj_type_of(d, ie) == QJ_TRUE || qj_type_of(d, ie) == QJ_FALSE)) {
        qw_key(w, "isError");
        qw_bool(w, qj_type_of(d, ie) == QJ_TRUE);
    }
    qw_obj_end(w);
}

/* Calls of the last assistant message that the conversation left without a
 * result: answered by a tool message of error results. */
static void answer_pending(cl *s, uint32_t lineno) {
    uint32_t n = qcalls_answer_pending(&s->calls, s->pend, &s->npend, &s->body, lineno);
    if (!n) return;
    s->messages++;
    q_import_report(s->c, lineno, "note: answered %u tool call(s) that had no result with an error result", n);
}

static bool looks_like_text_result(const qj_doc *d, uint32_t tx) {
    const qj_node *n = qj_at(d, tx);
    if (n->len < 10 || n->p[0] != '[') return false;
    const char *nl = memchr(n->p, '\n', n->len);
    size_t lim = nl ? (size_t)(nl - n->p) : n->len;
    for (size_t i = 0; i + 9 <= lim; i++)
        if (memcmp(n->p + i, "] Result:", 9) == 0) return true;
    return false;
}

static void message(cl *s, uint32_t m, uint32_t i, bool assistant) {
    const qj_doc *d = &s->d;
    uint32_t ln = line_of(s, m);
    uint32_t ct = qj_get(d, m, "content");
    bool is_str = qj_type_of(d, ct) == QJ_STRING;
    uint32_t n = is_str ? 0 : qj_at(d, ct)->n;
    int32_t *bidx = n ? qarena_alloc(&s->ar, (size_t)n * sizeof *bidx) : NULL; /* call index per block, -1 none */
    if (n && !bidx) { s->st = q_oom(s->c->err); return; }
    uint32_t kept = is_str && qj_at(d, ct)->len ? 1 : 0, ncalls = 0;
    uint32_t p = ct + 1;
    for (uint32_t k = 0; k < n; k++, p = qj_next(d, p)) {
        bidx[k] = -1;
        int kind = qj_type_of(d, p) == QJ_OBJECT ? block_kind(d, p, assistant) : B_DROP;
        if (kind == B_DROP) {
            if (qj_type_of(d, p) != QJ_OBJECT || q_import_str(d, p, "type") == QJ_NONE ||
                !qj_str_eq(d, q_import_str(d, p, "type"), "text")) {
                q_import_report(s->c, line_of(s, p), "note: dropped /%u/content/%u: a block that cannot stand in a%s message", i, k,
                       assistant ? "n assistant" : " user");
                s->dropped++;
            }
            continue;
        }
        if (kind == B_RESULT) {
            uint32_t id = q_import_str(d, p, "tool_use_id");
            int32_t ix = qcalls_answer(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len);
            if (ix < 0) {
                q_import_report(s->c, line_of(s, p), "note: dropped /%u/content/%u: a tool_result for a tool_use not in the conversation", i, k);
                s->dropped++;
                continue;
            }
            bidx[k] = ix;
            s->results++;
        } else if (kind == B_KEEP && !assistant && q_import_str(d, p, "text") != QJ_NONE &&
                   looks_like_text_result(d, q_import_str(d, p, "text"))) {
            s->text_results++;
        }
        kept++;
    }
    if (!assistant) answer_pending(s, ln);
    if (!kept) {
        q_import_report(s->c, ln, "note: skipped /%u: a%s message with no content", i, assistant ? "n assistant" : " user");
        s->skipped++;
        return;
    }
    qw w;
    if (assistant) {
        answer_pending(s, ln);
        if (s->messages) {
            q_log_line_begin(&w, &s->body, "render");
            q_w_meta_line(&w, ln);
            q_log_line_end(&w, &s->body);
            s->renders++;
        } else {
            q_import_report(s->c, ln, "note: /%u: a model response before any user message is kept as history, without a model call", i);
        }
    }
    q_log_message_begin(&w, &s->body, assistant ? "assistant" : "user");
    qw_key(&w, "content");
    if (is_str) {
        qw_node(&w, d, ct);
    } else {
        qw_arr_begin(&w);
        p = ct + 1;
        for (uint32_t k = 0; k < n; k++, p = qj_next(d, p)) {
            int kind = qj_type_of(d, p) == QJ_OBJECT ? block_kind(d, p, assistant) : B_DROP;
            if (kind == B_DROP) continue;
            if (kind == B_RESULT) {
                if (bidx[k] >= 0) w_result(s, &w, p, &s->calls.v[bidx[k]]);
                continue;
            }
            if (kind == B_CALL) {
                uint32_t id = q_import_str(d, p, "id");
                int32_t ix = qcalls_add(&s->calls, id != QJ_NONE ? qj_at(d, id)->p : NULL,
                                        id != QJ_NONE ? qj_at(d, id)->len : 0, id == QJ_NONE);
                if (ix < 0) { s->st = q_oom(s->c->err); qw_dispose(&w); return; }
                if (s->npend == s->cappend) {
                    uint32_t nc = s->cappend ? s->cappend * 2 : 8;
                    int32_t *np = q_realloc(s->c->a, s->pend, (size_t)s->cappend * sizeof *np, (size_t)nc * sizeof *np);
                    if (!np) { s->st = q_oom(s->c->err); qw_dispose(&w); return; }
                    s->pend = np;
                    s->cappend = nc;
                }
                s->pend[s->npend++] = ix;
                bidx[k] = ix;
                ncalls++;
                s->calls_n++;
                const qcall *kc = &s->calls.v[ix];
                qw_obj_begin(&w);
                qw_key(&w, "type"); qw_strz(&w, "toolCall");
                qw_key(&w, "id"); qw_str_esc(&w, kc->id, kc->idn);
                w_copy(&w, d, p, "name", "name");
                qw_key(&w, "input");
                uint32_t in = qj_get(d, p, "input");
                if (in == QJ_NONE) { qw_obj_begin(&w); qw_obj_end(&w); }
                else qw_node(&w, d, in);
                qw_obj_end(&w);
                continue;
            }
            w_block(s, &w, p);
        }
        qw_arr_end(&w);
    }
    /* renamed ids of the calls made or answered here */
    uint32_t nr = 0;
    for (uint32_t k = 0; k < n; k++)
        if (bidx[k] >= 0) bidx[nr++] = bidx[k];
    qcalls_w_meta(&s->calls, &w, bidx, nr);
    qw_obj_end(&w);
    q_w_meta_line(&w, ln);
    q_log_line_end(&w, &s->body);
    s->messages++;
    (void)ncalls;
}

quire_status q_import_cline(qimport_ctx *c, const char *src, size_t len) {
    cl s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.lc.src = src;
    s.lc.len = len;
    quire_status st = q_import_parse_doc(c, &s.d, WHAT, src, len);
    if (st) return st;
    const qj_doc *d = &s.d;
    if (qj_type_of(d, 0) != QJ_ARRAY) {
        st = q_import_err(c, QUIRE_E_INVALID, d, 0, "", "not a " WHAT ": expected a JSON array of messages, got %s",
                          qj_type_name(qj_type_of(d, 0)));
        qj_doc_free(&s.d);
        return st;
    }
    /* the shape first: every entry a {role, content} message */
    uint32_t m = 1;
    for (uint32_t i = 0; i < qj_at(d, 0)->n; i++, m = qj_next(d, m)) {
        char ptr[64];
        const char *why = NULL;
        uint32_t at = m;
        if (qj_type_of(d, m) != QJ_OBJECT) {
            why = "expected an object";
            snprintf(ptr, sizeof ptr, "/%u", i);
        } else {
            uint32_t r = qj_get(d, m, "role"), ct = qj_get(d, m, "content");
            if (r == QJ_NONE || qj_type_of(d, r) != QJ_STRING || !(qj_str_eq(d, r, "user") || qj_str_eq(d, r, "assistant"))) {
                why = "\"role\" must be \"user\" or \"assistant\"";
                snprintf(ptr, sizeof ptr, r == QJ_NONE ? "/%u" : "/%u/role", i);
                if (r != QJ_NONE) at = r;
            } else if (ct == QJ_NONE || (qj_type_of(d, ct) != QJ_STRING && qj_type_of(d, ct) != QJ_ARRAY)) {
                why = "\"content\" must be a string or an array of blocks";
                snprintf(ptr, sizeof ptr, ct == QJ_NONE ? "/%u" : "/%u/content", i);
                if (ct != QJ_NONE) at = ct;
            }
        }
        if (why) {
            st = q_import_err(c, QUIRE_E_INVALID, d, at, ptr, "not a " WHAT " message: %s", why);
            qj_doc_free(&s.d);
            return st;
        }
    }
    qarena_init(&s.ar, c->a);
    qcalls_init(&s.calls, c->a, &s.ar);
    qbuf_init(&s.body, c->a);
    m = 1;
    for (uint32_t i = 0; i < qj_at(d, 0)->n && s.st == QUIRE_OK; i++, m = qj_next(d, m))
        message(&s, m, i, qj_str_eq(d, qj_get(d, m, "role"), "assistant"));
    if (s.st == QUIRE_OK) {
        /* task_metadata.json: the model the task started with */
        qj_doc md;
        bool have_md = false;
        uint32_t model = QJ_NONE;
        if (c->metadata) {
            quire_limits lim = q_limits(c->opts);
            qj_opts jo = {lim.max_depth, lim.max_string_bytes};
            quire_error pe;
            quire_status ps = qj_parse(&md, c->metadata, c->metadata_len, &jo, c->a, &pe);
            if (ps == QUIRE_E_NOMEM) s.st = q_oom(c->err);
            if (ps == QUIRE_OK) {
                have_md = true;
                uint32_t mu = qj_type_of(&md, 0) == QJ_OBJECT ? qj_get(&md, 0, "model_usage") : QJ_NONE;
                uint32_t nmodels = 0;
                if (mu != QJ_NONE && qj_type_of(&md, mu) == QJ_ARRAY) {
                    uint32_t p = mu + 1;
                    for (uint32_t k = 0; k < qj_at(&md, mu)->n; k++, p = qj_next(&md, p)) {
                        uint32_t id = q_import_str(&md, p, "model_id");
                        if (id == QJ_NONE || !qj_at(&md, id)->len) continue;
                        if (model == QJ_NONE) { model = id; nmodels = 1; }
                        else if (qj_at(&md, id)->len != qj_at(&md, model)->len ||
                                 memcmp(qj_at(&md, id)->p, qj_at(&md, model)->p, qj_at(&md, id)->len) != 0) nmodels++;
                    }
                }
                if (model == QJ_NONE) q_import_report(s.c, 0, "note: task_metadata.json names no model (no model_usage entry)");
                else if (nmodels > 1)
                    q_import_report(s.c, 0, "note: task_metadata.json: the task used more than one model; the log names the first "
                                  "(the history does not say which message each answered)");
            } else {
                q_import_report(s.c, 0, "note: task_metadata.json ignored: %s", pe.message);
            }
        }
        qw w;
        q_log_line_begin(&w, c->out, "session");
        qw_key(&w, "target");
        qw_obj_begin(&w);
        qw_key(&w, "provider"); qw_strz(&w, c->provider);
        if (model != QJ_NONE) { qw_key(&w, "model"); qw_node(&w, &md, model); }
        qw_obj_end(&w);
        if (have_md) qj_doc_free(&md);
        qw_key(&w, "_meta");
        qw_obj_begin(&w);
        qw_key(&w, "importedFrom"); qw_strz(&w, "cline");
        qw_obj_end(&w);
        q_log_line_end(&w, c->out);
        qbuf_put(c->out, s.body.data, s.body.len);
        if (s.calls.renamed) q_import_report(s.c, 0, "note: renamed %u repeated tool call ids (see renamedToolCallIds)", s.calls.renamed);
        qbuf_printf(c->report,
                    "summary: %u messages in the history, %u messages, %u renders, %u tool calls, %u tool results, "
                    "%u text tool results, %u blocks dropped, %u empty skipped, %u opaque blocks\n",
                    qj_at(d, 0)->n, s.messages, s.renders, s.calls_n, s.results, s.text_results, s.dropped, s.skipped,
                    s.opaque);
        if (s.body.oom) s.st = q_oom(c->err);
    }
    q_free(c->a, s.pend, (size_t)s.cappend * sizeof *s.pend);
    qcalls_free(&s.calls);
    qbuf_free(&s.body);
    qarena_free(&s.ar);
    qj_doc_free(&s.d);
    return s.st;
}
