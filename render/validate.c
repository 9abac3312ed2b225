/* quire validate: a request body against its dialect's structural rules and
 * the capability row (DESIGN 5, principle 4). Every violation is one line
 * "/json/pointer: message"; the checks are the rules the encoders meet by
 * construction, so every rendered request passes. */
#include "render/render.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct vctx {
    const qj_doc *d;
    qcaps caps;
    qbuf *out;
    uint32_t n;
    uint32_t marks;     /* cache markers seen */
    bool seen_5m;       /* a marker with the default/5m TTL was seen */
    const char *model;  /* the model the request is for */
    bool ttl_reported;
} vctx;

/* One report line, "pointer: message": a control byte that reached either
 * from a decoded key or value is written as an escape, so a line is always
 * one violation. */
static void Q_PRINTF(3, 4) viol(vctx *v, const char *ptr, const char *fmt, ...) {
    if (v->n >= 200) { v->n++; return; }
    char msg[400], q[1100];
    ptr = ptr && *ptr ? ptr : "/";
    q_quote_text(q, sizeof q, ptr, strlen(ptr));
    qbuf_puts(v->out, q);
    qbuf_puts(v->out, ": ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_quote_text(q, sizeof q, msg, strlen(msg));
    qbuf_puts(v->out, q);
    qbuf_putc(v->out, '\n');
    v->n++;
}

/* ---- helpers ---- */
/* A JSON Pointer being built, as a chain of steps that is written out only
 * for a violation (a valid body, which a session validates every turn, writes
 * none): a base pointer (up NULL, k the pointer), a key (k) or an index (k
 * NULL) under up. PK and PI take an lvalue (a variable or another P, PK or
 * PI) and point at it: a step lives as long as the block it was made in. */
typedef struct vp {
    const struct vp *up;
    const char *k;
    uint32_t i;
} vp;
#define P(base) ((vp){NULL, (base), 0})
#define PK(p, key) ((vp){&(p), (key), 0})
#define PI(p, idx) ((vp){&(p), NULL, (uint32_t)(idx)})

static void vp_write(const vp *p, char *out, size_t cap) {
    if (!p->up) { snprintf(out, cap, "%s", p->k); return; }
    vp_write(p->up, out, cap);
    if (p->k) q_ptr_push_key(out, cap, p->k, strlen(p->k));
    else q_ptr_push_index(out, cap, p->i);
}

/* viol() at the pointer p. */
static void Q_PRINTF(3, 4) violp(vctx *v, vp p, const char *fmt, ...) {
    if (v->n >= 200) { v->n++; return; }
    char ptr[512], msg[400];
    vp_write(&p, ptr, sizeof ptr);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    viol(v, ptr, "%s", msg);
}

static uint32_t get(const vctx *v, uint32_t obj, const char *k) {
    if (obj == QJ_NONE || qj_type_of(v->d, obj) != QJ_OBJECT) return QJ_NONE;
    return qj_get(v->d, obj, k);
}
static bool is(const vctx *v, uint32_t n, qj_type t) { return n != QJ_NONE && qj_type_of(v->d, n) == t; }
static bool str_is(const vctx *v, uint32_t n, const char *s) { return is(v, n, QJ_STRING) && qj_str_eq(v->d, n, s); }
static uint32_t count_of(const vctx *v, uint32_t arr) { return is(v, arr, QJ_ARRAY) ? qj_at(v->d, arr)->n : 0; }
/* i-th element: iterate with first/next instead where hot. */
static uint32_t first(uint32_t arr) { return arr + 1; }
static uint32_t next(const vctx *v, uint32_t e) { return qj_next(v->d, e); }

static bool need_type_failed(vctx *v, uint32_t n, qj_type t, vp p, const char *what) {
    if (n == QJ_NONE) { violp(v, p, "missing %s", what); return false; }
    violp(v, p, "expected %s, got %s", qj_type_name(t), qj_type_name(qj_type_of(v->d, n)));
    return false;
}
/* Whether node n is there with type t, else a violation at pointer p. The
 * pointer (PK/PI calls: a copy and an append) is built only for the
 * violation: a session validates every turn, and a valid body builds none.
 * n and p must be free of side effects (n is evaluated twice on failure). */
#define need_type(v, n, t, p, what) (is((v), (n), (t)) ? true : need_type_failed((v), (n), (t), (p), (what)))

/* Short decoded copy of a string node (ids, names). */
static void sval(const vctx *v, uint32_t n, char *out, size_t cap) {
    out[0] = '\0';
    if (!is(v, n, QJ_STRING)) return;
    const qj_node *x = qj_at(v->d, n);
    if (x->len >= cap) { memcpy(out, x->p, cap - 1); out[cap - 1] = '\0'; return; }
    size_t k = qj_unescape(x->p, x->len, out);
    out[k] = '\0';
}

/* A string node with no visible character (JSON escapes \n \t \r count as whitespace). */
static bool blank_node(const vctx *v, uint32_t n) {
    const qj_node *x = qj_at(v->d, n);
    for (uint32_t i = 0; i < x->len; i++) {
        char ch = x->p[i];
        if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') continue;
        if (ch == '\\' && i + 1 < x->len && (x->p[i + 1] == 'n' || x->p[i + 1] == 't' || x->p[i + 1] == 'r')) { i++; continue; }
        return false;
    }
    return true;
}
/* A string node that ends with whitespace (decoded). */
static bool trailing_ws_node(const vctx *v, uint32_t n) {
    const qj_node *x = qj_at(v->d, n);
    if (x->len == 0) return false;
    char ch = x->p[x->len - 1];
    if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') return true;
    if (x->len >= 2 && x->p[x->len - 2] == '\\' && (ch == 'n' || ch == 't' || ch == 'r')) {
        /* an escape only when the backslash itself is not escaped */
        uint32_t k = 0;
        while (k < x->len - 1 && x->p[x->len - 2 - k] == '\\') k++;
        return (k & 1) == 1;
    }
    return false;
}
/* A tool name by the dialect's rule (providers/caps.h, qcaps_name_rule):
 * a violation at p when it breaks it (a JSON escape never matches a rule). */
static bool tool_name_ok(const vctx *v, uint32_t n) {
    if (!is(v, n, QJ_STRING)) return true; /* reported as a type error */
    const qj_node *x = qj_at(v->d, n);
    return qcaps_name_ok(qcaps_name_rule(v->caps.dialect), x->p, x->len);
}
static void tool_name_bad(vctx *v, vp p) {
    violp(v, p, "a tool name matches %s", qcaps_name_rule_text(qcaps_name_rule(v->caps.dialect)));
}
#define tool_name_rule(v, n, p) do { if (!tool_name_ok((v), (n))) tool_name_bad((v), (p)); } while (0)


/* A tool call id: on a row that restricts them (toolCallIds "alnum9":
 * exactly 9 characters [a-zA-Z0-9], Mistral models), else by the dialect's
 * rule (providers/caps.h, qcaps_id_rule). The pointer is built only for a
 * violation. */
static bool id_form_ok(const vctx *v, uint32_t n) {
    if (!is(v, n, QJ_STRING)) return true;
    const qj_node *x = qj_at(v->d, n);
    if (v->caps.tool_ids != QIDS_ALNUM9) return qcaps_name_ok(qcaps_id_rule(v->caps.dialect), x->p, x->len);
    bool ok = x->len == 9;
    for (uint32_t i = 0; ok && i < x->len; i++) {
        char ch = x->p[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    }
    return ok;
}
static void id_form_bad(vctx *v, vp p) {
    if (v->caps.tool_ids == QIDS_ALNUM9) violp(v, p, "a tool call id of this model is 9 letters or digits ([a-zA-Z0-9]{9})");
    else violp(v, p, "a tool call id of this dialect is %s", qcaps_name_rule_text(qcaps_id_rule(v->caps.dialect)));
}
#define id_form(v, n, p) do { if (!id_form_ok((v), (n))) id_form_bad((v), (p)); } while (0)

/* The pending tool call ids of one assistant turn; results answer them in any
 * order (providers accept any order, and logged requests carry the order the
 * tools finished in), each exactly once, before the next turn. */
typedef struct idlist {
    char ids[64][96];
    bool done[64];
    uint32_t n, next; /* next = how many answered */
} idlist;

static void ids_add(idlist *l, const vctx *v, uint32_t n) {
    if (l->n < 64) { sval(v, n, l->ids[l->n], sizeof l->ids[0]); l->done[l->n] = false; l->n++; }
}
static void ids_answer(idlist *l, vctx *v, uint32_t n, vp p, const char *what) {
    char id[96];
    sval(v, n, id, sizeof id);
    for (uint32_t i = 0; i < l->n; i++) {
        if (strcmp(l->ids[i], id) != 0) continue;
        if (l->done[i]) { violp(v, p, "%s \"%s\" answers a tool call that already has a result", what, id); return; }
        l->done[i] = true;
        l->next++;
        return;
    }
    violp(v, p, "%s \"%s\" answers no pending tool call of the preceding assistant turn", what, id);
}
static void ids_close(idlist *l, vctx *v, vp p) {
    for (uint32_t i = 0; i < l->n; i++)
        if (!l->done[i]) { violp(v, p, "tool call \"%s\" has no result right after its turn", l->ids[i]); break; }
    l->n = l->next = 0;
}

/* ---- Anthropic Messages ---- */
static void unknown_keys(vctx *v, uint32_t obj, const char *const *names, size_t nn, vp p);

/* A function's parameters: a JSON Schema of "type": "object" (the Messages
 * API, Converse and OpenAI refuse any other top-level type). */
static void object_schema(vctx *v, uint32_t schema, vp p) {
    if (!str_is(v, get(v, schema, "type"), "object"))
        violp(v, PK(p, "type"), "a tool's input schema must be of type \"object\"");
}

static void a_cache(vctx *v, uint32_t obj, vp p) {
    uint32_t cc = get(v, obj, "cache_control");
    if (cc == QJ_NONE) return;
    vp q = PK(p, "cache_control");
    if (!is(v, cc, QJ_OBJECT)) { violp(v, q, "expected object"); return; }
    if (v->caps.cache != QCACHE_BLOCK_MARKERS) violp(v, q, "cache_control on a row without block markers");
    v->marks++;
    if (v->marks == v->caps.cache_limit + 1)
        violp(v, q, "more than %u cache_control markers in the request", v->caps.cache_limit);
    static const char *const k_cc[] = {"type", "ttl"};
    unknown_keys(v, cc, k_cc, Q_COUNTOF(k_cc), q);
    if (!str_is(v, get(v, cc, "type"), "ephemeral")) violp(v, PK(q, "type"), "cache_control type must be \"ephemeral\"");
    uint32_t ttl = get(v, cc, "ttl");
    if (ttl != QJ_NONE && !str_is(v, ttl, "5m") && !str_is(v, ttl, "1h"))
        violp(v, PK(q, "ttl"), "cache_control ttl must be \"5m\" or \"1h\"");
    bool h1 = str_is(v, ttl, "1h");
    if (h1 && v->seen_5m && !v->ttl_reported) {
        violp(v, q, "a 1h cache_control after a shorter one (longer TTLs must come first)");
        v->ttl_reported = true;
    }
    if (!h1) v->seen_5m = true;
}

static void a_block(vctx *v, uint32_t b, vp p, bool assistant, bool in_result) {
    if (!is(v, b, QJ_OBJECT)) { violp(v, p, "expected object (a content block)"); return; }
    uint32_t ty = get(v, b, "type");
    if (!need_type(v, ty, QJ_STRING, PK(p, "type"), "\"type\"")) return;
    if (str_is(v, ty, "text")) {
        uint32_t tx = get(v, b, "text");
        if (need_type(v, tx, QJ_STRING, PK(p, "text"), "\"text\"")) {
            if (qj_at(v->d, tx)->len == 0) violp(v, PK(p, "text"), "text content blocks must be non-empty");
            else if (blank_node(v, tx)) violp(v, PK(p, "text"), "text content blocks must contain non-whitespace text");
        }
        uint32_t ci = get(v, b, "citations");
        if (ci != QJ_NONE && !is(v, ci, QJ_NULL)) {
            /* the Messages API's citation kinds (providers/caps.c, qcaps_messages_citation) */
            if (!is(v, ci, QJ_ARRAY)) {
                violp(v, PK(p, "citations"), "expected an array of citations");
            } else {
                uint32_t e = ci + 1;
                for (uint32_t k = 0; k < count_of(v, ci); k++, e = next(v, e)) {
                    if (!qcaps_messages_citation(v->d, e))
                        violp(v, PI(PK(p, "citations"), k), "a citation is an object whose type is char_location, "
                             "page_location, content_block_location, web_search_result_location or search_result_location");
                }
            }
        }
        a_cache(v, b, p);
    } else if (str_is(v, ty, "image") || str_is(v, ty, "document")) {
        bool doc = str_is(v, ty, "document");
        if (assistant) violp(v, PK(p, "type"), "%s blocks belong in user messages", doc ? "document" : "image");
        if (doc && !v->caps.documents) violp(v, PK(p, "type"), "document blocks are not supported by this model row");
        if (in_result && !doc && !v->caps.tool_result_images) violp(v, PK(p, "type"), "images inside tool results are not supported by this model row");
        uint32_t src = get(v, b, "source");
        if (need_type(v, src, QJ_OBJECT, PK(p, "source"), "\"source\"")) {
            uint32_t st = get(v, src, "type");
            if (!is(v, st, QJ_STRING)) violp(v, PK(PK(p, "source"), "type"), "missing source type");
            else if (str_is(v, st, "base64") || str_is(v, st, "text")) {
                uint32_t mt = get(v, src, "media_type");
                need_type(v, mt, QJ_STRING, PK(PK(p, "source"), "media_type"), "\"media_type\"");
                if (doc && str_is(v, st, "base64") && is(v, mt, QJ_STRING) && !str_is(v, mt, "application/pdf"))
                    violp(v, PK(PK(p, "source"), "media_type"), "a base64 document source is application/pdf");
                char mb[64] = "";
                if (!doc && str_is(v, st, "base64") && is(v, mt, QJ_STRING)) sval(v, mt, mb, sizeof mb);
                if (!doc && str_is(v, st, "base64") && is(v, mt, QJ_STRING) && !qcaps_messages_image_type(mb, strlen(mb)))
                    violp(v, PK(PK(p, "source"), "media_type"),
                         "a base64 image is image/jpeg, image/png, image/gif or image/webp");
                if (doc && str_is(v, st, "text") && is(v, mt, QJ_STRING) && !str_is(v, mt, "text/plain"))
                    violp(v, PK(PK(p, "source"), "media_type"), "a text document source is text/plain");
                need_type(v, get(v, src, "data"), QJ_STRING, PK(PK(p, "source"), "data"), "\"data\"");
            } else if (str_is(v, st, "url")) {
                need_type(v, get(v, src, "url"), QJ_STRING, PK(PK(p, "source"), "url"), "\"url\"");
            } else if (str_is(v, st, "file")) {
                need_type(v, get(v, src, "file_id"), QJ_STRING, PK(PK(p, "source"), "file_id"), "\"file_id\"");
            } else {
                violp(v, PK(PK(p, "source"), "type"), "source type must be base64, text, url or file");
            }
        }
        a_cache(v, b, p);
    } else if (str_is(v, ty, "tool_use")) {
        if (!assistant) violp(v, PK(p, "type"), "tool_use blocks belong in assistant messages");
        need_type(v, get(v, b, "id"), QJ_STRING, PK(p, "id"), "\"id\"");
        id_form(v, get(v, b, "id"), PK(p, "id"));
        need_type(v, get(v, b, "name"), QJ_STRING, PK(p, "name"), "\"name\"");
        tool_name_rule(v, get(v, b, "name"), PK(p, "name"));
        need_type(v, get(v, b, "input"), QJ_OBJECT, PK(p, "input"), "\"input\"");
        a_cache(v, b, p);
    } else if (str_is(v, ty, "tool_result")) {
        if (assistant) violp(v, PK(p, "type"), "tool_result blocks belong in user messages");
        need_type(v, get(v, b, "tool_use_id"), QJ_STRING, PK(p, "tool_use_id"), "\"tool_use_id\"");
        id_form(v, get(v, b, "tool_use_id"), PK(p, "tool_use_id"));
        uint32_t ct = get(v, b, "content");
        if (is(v, ct, QJ_ARRAY)) {
            uint32_t e = first(ct);
            for (uint32_t i = 0; i < count_of(v, ct); i++, e = next(v, e)) a_block(v, e, PI(PK(p, "content"), i), false, true);
        } else if (ct != QJ_NONE && !is(v, ct, QJ_STRING)) {
            violp(v, PK(p, "content"), "expected string or array");
        }
        /* an error result must say something: the API answers 400 "content
         * cannot be empty if is_error is true" (docs/providers.md) */
        uint32_t ie = get(v, b, "is_error");
        if (is(v, ie, QJ_TRUE) && (ct == QJ_NONE || (is(v, ct, QJ_ARRAY) && count_of(v, ct) == 0) ||
                                   (is(v, ct, QJ_STRING) && qj_at(v->d, ct)->len == 0)))
            violp(v, (ct == QJ_NONE ? p : PK(p, "content")), "a tool_result with is_error true needs a non-empty content");
        a_cache(v, b, p);
    } else if (str_is(v, ty, "thinking") || str_is(v, ty, "redacted_thinking")) {
        if (!assistant) violp(v, PK(p, "type"), "thinking blocks belong in assistant messages");
        if (get(v, b, "cache_control") != QJ_NONE) violp(v, PK(p, "cache_control"), "thinking blocks cannot carry cache_control");
        if (str_is(v, ty, "thinking")) {
            need_type(v, get(v, b, "thinking"), QJ_STRING, PK(p, "thinking"), "\"thinking\"");
            need_type(v, get(v, b, "signature"), QJ_STRING, PK(p, "signature"), "\"signature\" (a thinking block goes back with its signature)");
        }
        else need_type(v, get(v, b, "data"), QJ_STRING, PK(p, "data"), "\"data\"");
    } else if (str_is(v, ty, "server_tool_use")) {
        if (!assistant) violp(v, PK(p, "type"), "server_tool_use blocks belong in assistant messages");
        need_type(v, get(v, b, "id"), QJ_STRING, PK(p, "id"), "\"id\"");
        need_type(v, get(v, b, "name"), QJ_STRING, PK(p, "name"), "\"name\"");
        need_type(v, get(v, b, "input"), QJ_OBJECT, PK(p, "input"), "\"input\"");
        a_cache(v, b, p);
    } else {
        a_cache(v, b, p); /* other block types (server tool results, search results): carried as given */
    }
}

/* The final assistant message (a prefill) may not end with whitespace
 * (Anthropic; Claude on Bedrock): its string content or last text block. */
static void final_assistant_ws(vctx *v, uint32_t msgs, uint32_t n) {
    if (n == 0) return;
    uint32_t last = first(msgs);
    for (uint32_t i = 0; i + 1 < n; i++) last = next(v, last);
    if (!str_is(v, get(v, last, "role"), "assistant")) return;
    uint32_t ct = get(v, last, "content");
    char pp[96];
    if (is(v, ct, QJ_STRING)) {
        snprintf(pp, sizeof pp, "/messages/%u/content", n - 1);
        if (trailing_ws_node(v, ct)) viol(v, pp, "the final assistant content may not end with trailing whitespace");
        return;
    }
    uint32_t nb = count_of(v, ct);
    if (nb == 0) return;
    uint32_t b = first(ct);
    for (uint32_t j = 0; j + 1 < nb; j++) b = next(v, b);
    uint32_t tx = get(v, b, "text");
    if (is(v, tx, QJ_STRING) && trailing_ws_node(v, tx)) {
        snprintf(pp, sizeof pp, "/messages/%u/content/%u/text", n - 1, nb - 1);
        viol(v, pp, "the final assistant content may not end with trailing whitespace");
    }
}

/* A message of the Messages API and of Converse holds these two fields and
 * no other (the API answers "Extra inputs are not permitted"). */
static const char *const k_role_content[] = {"role", "content"};

/* Claude's thinking rules, Messages API and Converse (docs/providers.md,
 * "Thinking"): an assistant message that holds thinking starts with it; with
 * thinking disabled the final message, if an assistant's, holds none; with
 * thinking enabled, the assistant message whose calls the final user message
 * answers starts with thinking. thinking_block tells a block of the dialect
 * apart, result_block a tool result. */
typedef bool (*blk_pred)(const vctx *v, uint32_t b);
static bool a_thinking(const vctx *v, uint32_t b) {
    uint32_t ty = get(v, b, "type");
    return str_is(v, ty, "thinking") || str_is(v, ty, "redacted_thinking");
}
static bool a_result(const vctx *v, uint32_t b) { return str_is(v, get(v, b, "type"), "tool_result"); }
static bool b_thinking(const vctx *v, uint32_t b) { return get(v, b, "reasoningContent") != QJ_NONE; }
static bool b_result(const vctx *v, uint32_t b) { return get(v, b, "toolResult") != QJ_NONE; }
static bool thinking_enabled(const vctx *v, uint32_t th) {
    return is(v, th, QJ_OBJECT) && !str_is(v, get(v, th, "type"), "disabled");
}
static void thinking_rules(vctx *v, uint32_t msgs, bool enabled, blk_pred thinking_block, blk_pred result_block) {
    uint32_t n = count_of(v, msgs), e = first(msgs), prev = QJ_NONE;
    char pp[96];
    for (uint32_t i = 0; i < n; i++, prev = e, e = next(v, e)) {
        uint32_t ct = get(v, e, "content");
        bool assistant = str_is(v, get(v, e, "role"), "assistant");
        uint32_t nb = count_of(v, ct), b = first(ct);
        if (assistant && nb) {
            bool lead = thinking_block(v, b);
            for (uint32_t j = 0; j < nb; j++, b = next(v, b)) {
                if (!thinking_block(v, b)) continue;
                if (!lead) {
                    snprintf(pp, sizeof pp, "/messages/%u/content/%u", i, j);
                    viol(v, pp, "an assistant message that holds thinking must start with a thinking block");
                    break;
                }
                if (!enabled && i + 1 == n) {
                    snprintf(pp, sizeof pp, "/messages/%u/content/%u", i, j);
                    viol(v, pp, "with thinking disabled, the final assistant message may not hold thinking");
                    break;
                }
            }
        }
        if (!enabled || assistant || i + 1 != n || i == 0 || !str_is(v, get(v, prev, "role"), "assistant")) continue;
        bool answers = false;
        b = first(ct);
        for (uint32_t j = 0; j < nb && !answers; j++, b = next(v, b)) answers = result_block(v, b);
        uint32_t pc = get(v, prev, "content");
        if (answers && !(count_of(v, pc) && thinking_block(v, first(pc)))) {
            snprintf(pp, sizeof pp, "/messages/%u/content/0", i - 1);
            viol(v, pp, "with thinking enabled, the assistant message whose calls the last message answers must "
                        "start with a thinking block");
        }
    }
}

static void v_anthropic(vctx *v, uint32_t root) {
    vp r = P("");
    uint32_t model = get(v, root, "model"), mt = get(v, root, "max_tokens"), msgs = get(v, root, "messages");
    need_type(v, model, QJ_STRING, PK(r, "model"), "\"model\"");
    int64_t x;
    if (need_type(v, mt, QJ_NUMBER, PK(r, "max_tokens"), "\"max_tokens\"") && (!qj_int64(v->d, mt, &x) || x < 1))
        viol(v, "/max_tokens", "expected an integer >= 1");
    uint32_t tools = get(v, root, "tools");
    if (tools != QJ_NONE && need_type(v, tools, QJ_ARRAY, PK(r, "tools"), "\"tools\"")) {
        uint32_t e = first(tools);
        for (uint32_t i = 0; i < count_of(v, tools); i++, e = next(v, e)) {
            vp p = PI(PK(r, "tools"), i);
            need_type(v, get(v, e, "name"), QJ_STRING, PK(p, "name"), "\"name\"");
            if (get(v, e, "type") == QJ_NONE) tool_name_rule(v, get(v, e, "name"), PK(p, "name"));
            if (get(v, e, "type") == QJ_NONE &&
                need_type(v, get(v, e, "input_schema"), QJ_OBJECT, PK(p, "input_schema"), "\"input_schema\""))
                object_schema(v, get(v, e, "input_schema"), PK(p, "input_schema"));
            a_cache(v, e, p);
        }
    }
    uint32_t sys = get(v, root, "system");
    if (sys != QJ_NONE) {
        if (is(v, sys, QJ_ARRAY)) {
            uint32_t e = first(sys);
            for (uint32_t i = 0; i < count_of(v, sys); i++, e = next(v, e)) {
                vp p = PI(PK(r, "system"), i);
                if (!str_is(v, get(v, e, "type"), "text")) violp(v, PK(p, "type"), "the system prompt holds only text blocks");
                else a_block(v, e, p, false, false);
            }
        } else if (!is(v, sys, QJ_STRING)) {
            viol(v, "/system", "expected string or array of text blocks");
        } else if (qj_at(v->d, sys)->len > 0 && blank_node(v, sys)) {
            viol(v, "/system", "text content blocks must contain non-whitespace text");
        }
    }
    if (!need_type(v, msgs, QJ_ARRAY, PK(r, "messages"), "\"messages\"")) return;
    uint32_t n = count_of(v, msgs);
    if (n == 0) viol(v, "/messages", "at least one message is required");
    idlist ids;
    ids.n = ids.next = 0;
    const char *prev = NULL;
    uint32_t e = first(msgs);
    for (uint32_t i = 0; i < n; i++, e = next(v, e)) {
        vp p = PI(PK(r, "messages"), i);
        uint32_t role = get(v, e, "role"), content = get(v, e, "content");
        unknown_keys(v, e, k_role_content, Q_COUNTOF(k_role_content), p);
        if (!need_type(v, role, QJ_STRING, PK(p, "role"), "\"role\"")) continue;
        const char *rn = str_is(v, role, "user") ? "user" : str_is(v, role, "assistant") ? "assistant"
                       : str_is(v, role, "system") ? "system" : NULL;
        if (!rn) { violp(v, PK(p, "role"), "role must be user or assistant"); continue; }
        if (i == 0 && strcmp(rn, "user") != 0) violp(v, PK(p, "role"), "the first message must be a user message");
        if (strcmp(rn, "system") == 0) {
            if (v->caps.developer != QDEV_SYSTEM_ROLE) {
                violp(v, PK(p, "role"), "mid-conversation system messages are not supported by this model row");
            } else {
                /* after a user turn, before an assistant turn or at the end */
                const char *nx = NULL;
                uint32_t f = next(v, e);
                for (uint32_t k = i + 1; k < n; k++, f = next(v, f)) {
                    uint32_t rr = get(v, f, "role");
                    if (str_is(v, rr, "system")) continue;
                    nx = str_is(v, rr, "assistant") ? "assistant" : "user";
                    break;
                }
                if (!prev || strcmp(prev, "user") != 0 || (nx && strcmp(nx, "assistant") != 0))
                    violp(v, PK(p, "role"), "a mid-conversation system message must follow a user turn and precede an assistant turn or end the messages");
            }
            continue;
        }
        if (prev && strcmp(prev, rn) == 0) violp(v, PK(p, "role"), "roles must alternate: two %s messages in a row", rn);
        bool assistant = strcmp(rn, "assistant") == 0;
        if (!assistant) {
            /* tool results first, answering the previous assistant's calls in order */
            bool others = false;
            if (is(v, content, QJ_ARRAY)) {
                uint32_t b = first(content);
                for (uint32_t j = 0; j < count_of(v, content); j++, b = next(v, b)) {
                    vp pb = PI(PK(p, "content"), j);
                    if (str_is(v, get(v, b, "type"), "tool_result")) {
                        if (others) violp(v, pb, "tool_result blocks must come before any other content of the message");
                        ids_answer(&ids, v, get(v, b, "tool_use_id"), PK(pb, "tool_use_id"), "tool_result");
                    } else {
                        others = true;
                    }
                }
            }
            ids_close(&ids, v, PK(p, "content"));
        } else {
            ids_close(&ids, v, p);
        }
        if (is(v, content, QJ_STRING)) {
            if (qj_at(v->d, content)->len == 0 && !(assistant && i + 1 == n))
                violp(v, PK(p, "content"), "content must be non-empty");
        } else if (need_type(v, content, QJ_ARRAY, PK(p, "content"), "\"content\"")) {
            if (count_of(v, content) == 0 && !(assistant && i + 1 == n)) violp(v, PK(p, "content"), "content must be non-empty");
            uint32_t b = first(content);
            for (uint32_t j = 0; j < count_of(v, content); j++, b = next(v, b)) {
                vp pb = PI(PK(p, "content"), j);
                a_block(v, b, pb, assistant, false);
                if (assistant && str_is(v, get(v, b, "type"), "tool_use")) ids_add(&ids, v, get(v, b, "id"));
            }
        }
        prev = rn;
    }
    if (ids.n > ids.next && prev && strcmp(prev, "assistant") != 0) ids_close(&ids, v, P("/messages"));
    final_assistant_ws(v, msgs, n);
    thinking_rules(v, msgs, thinking_enabled(v, get(v, root, "thinking")), a_thinking, a_result);
}

/* ---- Bedrock Converse ---- */
static void b_point(vctx *v, uint32_t blk, vp p) {
    uint32_t cp = get(v, blk, "cachePoint");
    if (cp == QJ_NONE) return;
    uint32_t ttl = get(v, cp, "ttl");
    if (ttl != QJ_NONE && !str_is(v, ttl, "5m") && !str_is(v, ttl, "1h"))
        violp(v, PK(PK(p, "cachePoint"), "ttl"), "expected \"5m\" or \"1h\"");
    if (v->caps.cache != QCACHE_CACHE_POINTS) violp(v, p, "cachePoint on a row without prompt caching");
    v->marks++;
    if (v->marks == v->caps.cache_limit + 1) violp(v, p, "more than %u cachePoint blocks in the request", v->caps.cache_limit);
}

static const char *const k_bedrock_keys[] = {"text", "image", "document", "toolUse", "toolResult", "reasoningContent",
                                             "cachePoint", "guardContent", "video", "citationsContent"};

static void b_block(vctx *v, uint32_t b, vp p, bool assistant) {
    if (!is(v, b, QJ_OBJECT) || qj_at(v->d, b)->n != 1) { violp(v, p, "a content block has exactly one member"); return; }
    bool known = false;
    for (size_t i = 0; i < Q_COUNTOF(k_bedrock_keys); i++) if (get(v, b, k_bedrock_keys[i]) != QJ_NONE) known = true;
    if (!known) { violp(v, p, "unknown content block"); return; }
    b_point(v, b, p);
    uint32_t x;
    if ((x = get(v, b, "text")) != QJ_NONE && need_type(v, x, QJ_STRING, PK(p, "text"), "text") && blank_node(v, x))
        violp(v, PK(p, "text"), "text blocks must contain non-whitespace text");
    if ((x = get(v, b, "toolUse")) != QJ_NONE) {
        if (!assistant) violp(v, PK(p, "toolUse"), "toolUse blocks belong in assistant messages");
        if (need_type(v, get(v, x, "toolUseId"), QJ_STRING, PK(PK(p, "toolUse"), "toolUseId"), "\"toolUseId\""))
            id_form(v, get(v, x, "toolUseId"), PK(PK(p, "toolUse"), "toolUseId"));
        need_type(v, get(v, x, "name"), QJ_STRING, PK(PK(p, "toolUse"), "name"), "\"name\"");
        tool_name_rule(v, get(v, x, "name"), PK(PK(p, "toolUse"), "name"));
        need_type(v, get(v, x, "input"), QJ_OBJECT, PK(PK(p, "toolUse"), "input"), "\"input\" (an object)");
    }
    if ((x = get(v, b, "toolResult")) != QJ_NONE) {
        if (assistant) violp(v, PK(p, "toolResult"), "toolResult blocks belong in user messages");
        uint32_t ct = get(v, x, "content");
        id_form(v, get(v, x, "toolUseId"), PK(PK(p, "toolResult"), "toolUseId"));
        if (need_type(v, ct, QJ_ARRAY, PK(PK(p, "toolResult"), "content"), "\"content\"")) {
            if (count_of(v, ct) == 0) violp(v, PK(PK(p, "toolResult"), "content"), "a toolResult needs content");
            uint32_t e = first(ct);
            for (uint32_t i = 0; i < count_of(v, ct); i++, e = next(v, e)) {
                if (get(v, e, "image") != QJ_NONE && !v->caps.tool_result_images)
                    violp(v, PI(PK(PK(p, "toolResult"), "content"), i), "images inside tool results are not supported by this model row");
                if (get(v, e, "cachePoint") != QJ_NONE)
                    violp(v, PI(PK(PK(p, "toolResult"), "content"), i), "a cachePoint follows the toolResult block, not inside its content");
                uint32_t tx = get(v, e, "text");
                if (is(v, tx, QJ_STRING) && blank_node(v, tx))
                    violp(v, PK(PI(PK(PK(p, "toolResult"), "content"), i), "text"), "text blocks must contain non-whitespace text");
            }
        }
        uint32_t st = get(v, x, "status");
        if (st != QJ_NONE && !str_is(v, st, "success") && !str_is(v, st, "error"))
            violp(v, PK(PK(p, "toolResult"), "status"), "expected \"success\" or \"error\"");
    }
    if ((x = get(v, b, "image")) != QJ_NONE && assistant) violp(v, PK(p, "image"), "images belong in user messages");
    if (get(v, b, "document") != QJ_NONE && assistant) violp(v, PK(p, "document"), "documents belong in user messages");
    if (get(v, b, "video") != QJ_NONE && assistant) violp(v, PK(p, "video"), "videos belong in user messages");
    if ((x = get(v, b, "document")) != QJ_NONE) {
        if (!v->caps.documents) violp(v, PK(p, "document"), "documents are not supported by this model row");
        uint32_t nm = get(v, x, "name");
        if (need_type(v, nm, QJ_STRING, PK(PK(p, "document"), "name"), "\"name\"")) {
            char s[256];
            sval(v, nm, s, sizeof s);
            size_t n = strlen(s);
            bool ok = n >= 1 && n <= 200;
            for (size_t i = 0; ok && s[i]; i++) {
                unsigned char ch = (unsigned char)s[i];
                ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                     ch == '(' || ch == ')' || ch == '[' || ch == ']' || (ch == ' ' && s[i + 1] != ' ');
            }
            if (!ok)
                violp(v, PK(PK(p, "document"), "name"),
                     "a document name is 1-200 letters, digits, single spaces, hyphens, parentheses or brackets");
        }
    }
    if ((x = get(v, b, "reasoningContent")) != QJ_NONE) {
        if (!assistant) violp(v, PK(p, "reasoningContent"), "reasoning belongs in assistant messages");
        uint32_t rt = get(v, x, "reasoningText");
        if (rt != QJ_NONE && !is(v, get(v, rt, "signature"), QJ_STRING))
            violp(v, PK(PK(PK(p, "reasoningContent"), "reasoningText"), "signature"),
                 "missing \"signature\" (reasoning goes back with its signature)");
    }
}

static void v_bedrock(vctx *v, uint32_t root) {
    vp r = P("");
    uint32_t sys = get(v, root, "system");
    if (sys != QJ_NONE && need_type(v, sys, QJ_ARRAY, PK(r, "system"), "\"system\"")) {
        uint32_t e = first(sys);
        for (uint32_t i = 0; i < count_of(v, sys); i++, e = next(v, e)) {
            vp p = PI(PK(r, "system"), i);
            uint32_t tx = get(v, e, "text");
            if (tx == QJ_NONE && get(v, e, "cachePoint") == QJ_NONE && get(v, e, "guardContent") == QJ_NONE)
                violp(v, p, "a system block is text, cachePoint or guardContent");
            else if (is(v, tx, QJ_STRING) && blank_node(v, tx))
                violp(v, PK(p, "text"), "text blocks must contain non-whitespace text");
            b_point(v, e, p);
        }
    }
    uint32_t tc = get(v, root, "toolConfig");
    if (tc != QJ_NONE) {
        uint32_t tools = get(v, tc, "tools");
        if (need_type(v, tools, QJ_ARRAY, P("/toolConfig/tools"), "\"tools\"")) {
            uint32_t e = first(tools);
            for (uint32_t i = 0; i < count_of(v, tools); i++, e = next(v, e)) {
                vp p = PI(P("/toolConfig/tools"), i);
                uint32_t spec = get(v, e, "toolSpec");
                if (spec != QJ_NONE) {
                    need_type(v, get(v, spec, "name"), QJ_STRING, PK(PK(p, "toolSpec"), "name"), "\"name\"");
                    tool_name_rule(v, get(v, spec, "name"), PK(PK(p, "toolSpec"), "name"));
                    vp pj = PK(PK(PK(p, "toolSpec"), "inputSchema"), "json");
                    uint32_t js = get(v, get(v, spec, "inputSchema"), "json");
                    if (need_type(v, js, QJ_OBJECT, pj, "\"inputSchema.json\"")) object_schema(v, js, pj);
                } else if (get(v, e, "cachePoint") == QJ_NONE) {
                    violp(v, p, "a tool is toolSpec or cachePoint");
                }
                b_point(v, e, p);
            }
        }
    }
    uint32_t msgs = get(v, root, "messages");
    if (!need_type(v, msgs, QJ_ARRAY, PK(r, "messages"), "\"messages\"")) return;
    uint32_t n = count_of(v, msgs);
    if (n == 0) viol(v, "/messages", "at least one message is required");
    idlist ids;
    ids.n = ids.next = 0;
    const char *prev = NULL;
    uint32_t e = first(msgs);
    for (uint32_t i = 0; i < n; i++, e = next(v, e)) {
        vp p = PI(PK(r, "messages"), i);
        uint32_t role = get(v, e, "role"), content = get(v, e, "content");
        unknown_keys(v, e, k_role_content, Q_COUNTOF(k_role_content), p);
        const char *rn = str_is(v, role, "user") ? "user" : str_is(v, role, "assistant") ? "assistant" : NULL;
        if (!rn) { violp(v, PK(p, "role"), "role must be user or assistant"); continue; }
        if (i == 0 && strcmp(rn, "user") != 0) violp(v, PK(p, "role"), "the first message must be a user message");
        if (prev && strcmp(prev, rn) == 0) violp(v, PK(p, "role"), "roles must alternate: two %s messages in a row", rn);
        bool assistant = strcmp(rn, "assistant") == 0;
        if (!need_type(v, content, QJ_ARRAY, PK(p, "content"), "\"content\"")) { prev = rn; continue; }
        if (count_of(v, content) == 0) violp(v, PK(p, "content"), "content must be non-empty");
        uint32_t b = first(content);
        for (uint32_t j = 0; j < count_of(v, content); j++, b = next(v, b)) {
            vp pb = PI(PK(p, "content"), j);
            b_block(v, b, pb, assistant);
            uint32_t x;
            if (!assistant && (x = get(v, b, "toolResult")) != QJ_NONE)
                ids_answer(&ids, v, get(v, x, "toolUseId"), PK(PK(pb, "toolResult"), "toolUseId"), "toolResult");
        }
        ids_close(&ids, v, PK(p, "content"));
        if (assistant) {
            b = first(content);
            for (uint32_t j = 0; j < count_of(v, content); j++, b = next(v, b)) {
                uint32_t x = get(v, b, "toolUse");
                if (x != QJ_NONE) ids_add(&ids, v, get(v, x, "toolUseId"));
            }
        }
        prev = rn;
    }
    final_assistant_ws(v, msgs, n);
    thinking_rules(v, msgs, thinking_enabled(v, get(v, get(v, root, "additionalModelRequestFields"), "thinking")),
                   b_thinking, b_result);
    if (tc == QJ_NONE) {
        /* "The toolConfig field must be defined when using toolUse and toolResult content blocks" */
        e = first(msgs);
        for (uint32_t i = 0; i < n; i++, e = next(v, e)) {
            uint32_t ct = get(v, e, "content"), b = first(ct);
            uint32_t j = 0;
            for (; j < count_of(v, ct); j++, b = next(v, b))
                if (get(v, b, "toolUse") != QJ_NONE || get(v, b, "toolResult") != QJ_NONE) break;
            if (j < count_of(v, ct)) {
                char pp[96];
                snprintf(pp, sizeof pp, "/messages/%u/content/%u", i, j);
                viol(v, pp, "toolUse and toolResult blocks need toolConfig in the request");
                break;
            }
        }
    }
}

/* ---- OpenAI Chat, Mistral, Ollama (the chat family) ---- */
static bool dialect_is_mistral_or_ollama(const vctx *v) {
    return v->caps.dialect == QD_MISTRAL || v->caps.dialect == QD_OLLAMA;
}

/* An image given as a data URL on a row that takes the four common types
 * only (qcaps_image_types_limited): its media type is one of them. A type
 * written with escapes other than \/ is left alone. */
static void data_url_image(vctx *v, uint32_t url, vp p) {
    if (!qcaps_image_types_limited(&v->caps) || !is(v, url, QJ_STRING)) return;
    const qj_node *x = qj_at(v->d, url);
    if (x->len < 5 || memcmp(x->p, "data:", 5) != 0) return;
    char mt[64];
    size_t n = 0;
    for (uint32_t i = 5; i < x->len && x->p[i] != ';' && x->p[i] != ','; i++) {
        char ch = x->p[i];
        if (ch == '\\') {
            if (i + 1 >= x->len || x->p[i + 1] != '/') return;
            ch = '/';
            i++;
        }
        if (n + 1 >= sizeof mt) break;
        mt[n++] = ch;
    }
    if (!qcaps_messages_image_type(mt, n)) violp(v, p, "a base64 image is image/jpeg, image/png, image/gif or image/webp");
}

static void chat_part(vctx *v, uint32_t part, vp p, const char *role) {
    uint32_t ty = get(v, part, "type");
    if (!is(v, ty, QJ_STRING)) { violp(v, PK(p, "type"), "missing content part type"); return; }
    bool text = str_is(v, ty, "text");
    if (strcmp(role, "user") != 0 && !text && !(strcmp(role, "assistant") == 0 && str_is(v, ty, "refusal")) &&
        !(strcmp(role, "assistant") == 0 && str_is(v, ty, "thinking")))
        violp(v, PK(p, "type"), "%s messages take only text parts", role);
    if (strcmp(role, "tool") == 0 && !text && !v->caps.tool_result_images)
        violp(v, PK(p, "type"), "images inside tool results are not supported by this model row");
    if (text) need_type(v, get(v, part, "text"), QJ_STRING, PK(p, "text"), "\"text\"");
    if (str_is(v, ty, "image_url")) {
        uint32_t iu = get(v, part, "image_url");
        if (is(v, iu, QJ_OBJECT)) data_url_image(v, get(v, iu, "url"), PK(PK(p, "image_url"), "url"));
        else data_url_image(v, iu, PK(p, "image_url"));
    }
    if ((str_is(v, ty, "file") || str_is(v, ty, "document_url")) && !v->caps.documents)
        violp(v, PK(p, "type"), "documents are not supported by this model row");
    if (str_is(v, ty, "file")) {
        uint32_t f = get(v, part, "file");
        if (need_type(v, f, QJ_OBJECT, PK(p, "file"), "\"file\"") && get(v, f, "file_id") == QJ_NONE &&
            get(v, f, "file_data") == QJ_NONE)
            violp(v, PK(p, "file"), "a file part needs \"file_id\" or \"file_data\"");
        uint32_t fd = get(v, f, "file_data");
        if (is(v, fd, QJ_STRING)) {
            if (!is(v, get(v, f, "filename"), QJ_STRING))
                violp(v, PK(PK(p, "file"), "filename"), "a file part with file_data needs a filename");
            const qj_node *x = qj_at(v->d, fd);
            static const char pdf[] = "data:application/pdf;";
            if (x->len < sizeof pdf - 1 || memcmp(x->p, pdf, sizeof pdf - 1) != 0)
                violp(v, PK(PK(p, "file"), "file_data"), "file parts carry PDFs (a data:application/pdf URL)");
        }
    }
    if (str_is(v, ty, "input_audio")) {
        uint32_t a = get(v, part, "input_audio");
        if (dialect_is_mistral_or_ollama(v)) violp(v, PK(p, "type"), "audio parts are not supported by this dialect");
        if (need_type(v, a, QJ_OBJECT, PK(p, "input_audio"), "\"input_audio\"")) {
            need_type(v, get(v, a, "data"), QJ_STRING, PK(PK(p, "input_audio"), "data"), "\"data\"");
            uint32_t fm = get(v, a, "format");
            if (!str_is(v, fm, "wav") && !str_is(v, fm, "mp3"))
                violp(v, PK(PK(p, "input_audio"), "format"), "expected \"wav\" or \"mp3\"");
        }
    }
    uint32_t bp = get(v, part, "prompt_cache_breakpoint");
    if (bp != QJ_NONE) {
        if (v->caps.cache != QCACHE_BREAKPOINTS) violp(v, PK(p, "prompt_cache_breakpoint"), "prompt_cache_breakpoint on a row without explicit breakpoints");
        v->marks++;
        if (v->marks == v->caps.cache_limit + 1)
            violp(v, PK(p, "prompt_cache_breakpoint"), "more than %u explicit cache breakpoints in the request", v->caps.cache_limit);
    }
}

/* The function (and custom) tools of the Chat, Responses and Gemini request
 * forms: each name by the dialect's rule, a function's parameters an object
 * schema when given. Built-in tools (other types) are the provider's. */
static void function_tools(vctx *v, uint32_t root) {
    uint32_t tools = get(v, root, "tools");
    if (!is(v, tools, QJ_ARRAY)) return;
    vp r = PK(P(""), "tools");
    qdialect d = v->caps.dialect;
    uint32_t e = first(tools);
    for (uint32_t i = 0; i < count_of(v, tools); i++, e = next(v, e)) {
        vp p = PI(r, i);
        if (d == QD_GEMINI) {
            uint32_t fd = get(v, e, "functionDeclarations");
            if (!is(v, fd, QJ_ARRAY)) continue;
            uint32_t x = first(fd);
            for (uint32_t j = 0; j < count_of(v, fd); j++, x = next(v, x)) {
                vp px = PI(PK(p, "functionDeclarations"), j);
                tool_name_rule(v, get(v, x, "name"), PK(px, "name"));
                uint32_t js = get(v, x, "parametersJsonSchema");
                if (js != QJ_NONE && need_type(v, js, QJ_OBJECT, PK(px, "parametersJsonSchema"), "\"parametersJsonSchema\""))
                    object_schema(v, js, PK(px, "parametersJsonSchema"));
            }
            continue;
        }
        uint32_t ty = get(v, e, "type");
        bool chat = d != QD_OPENAI_RESPONSES;
        if (str_is(v, ty, "function")) {
            uint32_t fn = chat ? get(v, e, "function") : e;
            vp pf = chat ? PK(p, "function") : p;
            if (chat && !need_type(v, fn, QJ_OBJECT, pf, "\"function\"")) continue;
            need_type(v, get(v, fn, "name"), QJ_STRING, PK(pf, "name"), "\"name\"");
            tool_name_rule(v, get(v, fn, "name"), PK(pf, "name"));
            uint32_t ps = get(v, fn, "parameters");
            if (ps != QJ_NONE && need_type(v, ps, QJ_OBJECT, PK(pf, "parameters"), "\"parameters\""))
                object_schema(v, ps, PK(pf, "parameters"));
        } else if (str_is(v, ty, "custom")) {
            uint32_t cu = chat ? get(v, e, "custom") : e;
            vp pc = chat ? PK(p, "custom") : p;
            if (!qcaps_custom_tools(&v->caps)) violp(v, PK(p, "type"), "custom tools are not supported by this provider (function tools only)");
            tool_name_rule(v, get(v, cu, "name"), PK(pc, "name"));
        }
    }
}

static void v_chat(vctx *v, uint32_t root, qdialect dialect) {
    vp r = P("");
    need_type(v, get(v, root, "model"), QJ_STRING, PK(r, "model"), "\"model\"");
    function_tools(v, root);
    uint32_t msgs = get(v, root, "messages");
    if (!need_type(v, msgs, QJ_ARRAY, PK(r, "messages"), "\"messages\"")) return;
    uint32_t n = count_of(v, msgs);
    if (n == 0) viol(v, "/messages", "at least one message is required");
    bool ollama = dialect == QD_OLLAMA, mistral = dialect == QD_MISTRAL;
    idlist ids;
    ids.n = ids.next = 0;
    const char *prev = NULL;
    bool seen_non_system = false;
    uint32_t e = first(msgs);
    for (uint32_t i = 0; i < n; i++, e = next(v, e)) {
        vp p = PI(PK(r, "messages"), i);
        uint32_t role = get(v, e, "role"), content = get(v, e, "content");
        static const char *const roles[] = {"system", "developer", "user", "assistant", "tool"};
        const char *rn = NULL;
        for (size_t k = 0; k < Q_COUNTOF(roles); k++) if (str_is(v, role, roles[k])) rn = roles[k];
        if (!rn || ((ollama || mistral) && strcmp(rn, "developer") == 0)) {
            violp(v, PK(p, "role"), "unknown role for this dialect");
            continue;
        }
        bool instr = strcmp(rn, "system") == 0 || strcmp(rn, "developer") == 0;
        if (instr) {
            if (v->caps.system == QSYS_FIRST_USER)
                violp(v, PK(p, "role"), "this model takes neither system nor developer messages");
            else if (seen_non_system && v->caps.developer == QDEV_NONE)
                violp(v, PK(p, "role"), "mid-conversation %s messages are not supported by this model row", rn);
        } else {
            seen_non_system = true;
        }
        /* tool messages answer the preceding assistant's calls, in order */
        if (strcmp(rn, "tool") == 0) {
            if (ollama) {
                if (ids.next < ids.n) ids.done[ids.next++] = true; /* Ollama pairs by order (no ids) */
                else violp(v, PK(p, "role"), "tool message without a pending tool call");
            } else {
                ids_answer(&ids, v, get(v, e, "tool_call_id"), PK(p, "tool_call_id"), "tool message");
                id_form(v, get(v, e, "tool_call_id"), PK(p, "tool_call_id"));
            }
        } else {
            ids_close(&ids, v, p);
        }
        if (strcmp(rn, "user") == 0 && prev && strcmp(prev, "tool") == 0 && v->caps.tail == QTAIL_LAST_TOOL)
            violp(v, PK(p, "role"), "a user message may not follow a tool message for this model row");
        /* content */
        if (ollama) {
            if (content != QJ_NONE) need_type(v, content, QJ_STRING, PK(p, "content"), "\"content\"");
            uint32_t im = get(v, e, "images");
            if (im != QJ_NONE && strcmp(rn, "user") != 0) violp(v, PK(p, "images"), "images belong in user messages");
        } else if (is(v, content, QJ_ARRAY)) {
            if (count_of(v, content) == 0) violp(v, PK(p, "content"), "content arrays must be non-empty");
            uint32_t b = first(content);
            for (uint32_t j = 0; j < count_of(v, content); j++, b = next(v, b)) chat_part(v, b, PI(PK(p, "content"), j), rn);
        } else if (is(v, content, QJ_NULL) || content == QJ_NONE) {
            if (strcmp(rn, "assistant") != 0 || get(v, e, "tool_calls") == QJ_NONE)
                violp(v, PK(p, "content"), "content is required");
        } else if (!is(v, content, QJ_STRING)) {
            violp(v, PK(p, "content"), "expected string or array of content parts");
        }
        if (strcmp(rn, "assistant") == 0) {
            uint32_t tc = get(v, e, "tool_calls");
            if (tc != QJ_NONE && need_type(v, tc, QJ_ARRAY, PK(p, "tool_calls"), "\"tool_calls\"")) {
                uint32_t c = first(tc);
                for (uint32_t j = 0; j < count_of(v, tc); j++, c = next(v, c)) {
                    vp pc = PI(PK(p, "tool_calls"), j);
                    uint32_t fn = get(v, c, "function");
                    if (!need_type(v, fn, QJ_OBJECT, PK(pc, "function"), "\"function\"")) continue;
                    need_type(v, get(v, fn, "name"), QJ_STRING, PK(PK(pc, "function"), "name"), "\"name\"");
                    tool_name_rule(v, get(v, fn, "name"), PK(PK(pc, "function"), "name"));
                    uint32_t args = get(v, fn, "arguments");
                    if (ollama) need_type(v, args, QJ_OBJECT, PK(PK(pc, "function"), "arguments"), "\"arguments\"");
                    else if (!is(v, args, QJ_STRING) && !(mistral && is(v, args, QJ_OBJECT)))
                        violp(v, PK(PK(pc, "function"), "arguments"), "expected a JSON string of the arguments");
                    if (ollama) { if (ids.n < 64) { ids.ids[ids.n][0] = '\0'; ids.done[ids.n++] = false; } }
                    else {
                        ids_add(&ids, v, get(v, c, "id"));
                        id_form(v, get(v, c, "id"), PK(pc, "id"));
                    }
                }
            }
            if (mistral && get(v, e, "prefix") != QJ_NONE && i + 1 != n)
                violp(v, PK(p, "prefix"), "only the last assistant message may be a prefix");
        } else if (strcmp(rn, "tool") == 0 && !ollama) {
            need_type(v, get(v, e, "tool_call_id"), QJ_STRING, PK(p, "tool_call_id"), "\"tool_call_id\"");
        }
        prev = rn;
    }
    for (uint32_t i = 0; i < ids.n; i++) {
        if (ids.done[i]) continue;
        char pp[64];
        snprintf(pp, sizeof pp, "/messages/%u", n ? n - 1 : 0);
        viol(v, pp, "tool call \"%s\" has no result", ollama ? "?" : ids.ids[i]);
        break;
    }
    if (mistral && prev && strcmp(prev, "assistant") == 0) {
        uint32_t last = first(msgs);
        for (uint32_t i = 0; i + 1 < n; i++) last = next(v, last);
        if (!is(v, get(v, last, "prefix"), QJ_TRUE))
            viol(v, "/messages", "the last message must be user or tool (or an assistant prefix)");
    }
}

/* ---- OpenAI Responses ---- */
static void v_responses(vctx *v, uint32_t root) {
    vp r = P("");
    need_type(v, get(v, root, "model"), QJ_STRING, PK(r, "model"), "\"model\"");
    function_tools(v, root);
    uint32_t in = get(v, root, "input");
    if (is(v, in, QJ_STRING)) return;
    if (!need_type(v, in, QJ_ARRAY, PK(r, "input"), "\"input\"")) return;
    idlist ids;
    ids.n = ids.next = 0;
    bool seen_non_system = false;
    uint32_t n = count_of(v, in), e = first(in);
    for (uint32_t i = 0; i < n; i++, e = next(v, e)) {
        vp p = PI(PK(r, "input"), i);
        uint32_t ty = get(v, e, "type"), role = get(v, e, "role");
        bool message = (ty == QJ_NONE && role != QJ_NONE) || str_is(v, ty, "message");
        if (message) {
            bool instr = str_is(v, role, "system") || str_is(v, role, "developer");
            if (!str_is(v, role, "user") && !str_is(v, role, "assistant") && !instr) violp(v, PK(p, "role"), "unknown role");
            if (instr) {
                if (v->caps.system == QSYS_FIRST_USER) violp(v, PK(p, "role"), "this model takes neither system nor developer messages");
                else if (seen_non_system && v->caps.developer == QDEV_NONE)
                    violp(v, PK(p, "role"), "mid-conversation instructions are not supported by this model row");
            } else {
                seen_non_system = true;
            }
            /* OpenAI pairs calls and outputs by call_id: an assistant message
             * between the calls of one turn (call, text, call) is accepted;
             * a user or instruction message closes the turn */
            if (!str_is(v, role, "assistant")) ids_close(&ids, v, p);
            uint32_t ct = get(v, e, "content");
            if (is(v, ct, QJ_ARRAY) && count_of(v, ct) == 0)
                violp(v, PK(p, "content"), "content arrays must be non-empty (a message with nothing in it)");
            if (is(v, ct, QJ_ARRAY)) {
                uint32_t b = first(ct);
                for (uint32_t j = 0; j < count_of(v, ct); j++, b = next(v, b)) {
                    vp pb = PI(PK(p, "content"), j);
                    uint32_t bt = get(v, b, "type");
                    if (str_is(v, role, "assistant") ? !(str_is(v, bt, "output_text") || str_is(v, bt, "refusal"))
                                                     : !(str_is(v, bt, "input_text") || str_is(v, bt, "input_image") ||
                                                         str_is(v, bt, "input_file") || str_is(v, bt, "input_audio")))
                        violp(v, PK(pb, "type"), "content part type not allowed for this role");
                    if (str_is(v, bt, "input_image") && get(v, b, "image_url") == QJ_NONE && get(v, b, "file_id") == QJ_NONE)
                        violp(v, pb, "an input_image needs \"image_url\" or \"file_id\"");
                    if (str_is(v, bt, "input_image")) data_url_image(v, get(v, b, "image_url"), PK(pb, "image_url"));
                    if (str_is(v, bt, "input_file") && get(v, b, "file_id") == QJ_NONE &&
                        get(v, b, "file_data") == QJ_NONE && get(v, b, "file_url") == QJ_NONE)
                        violp(v, pb, "an input_file needs \"file_id\", \"file_data\" or \"file_url\"");
                    if (get(v, b, "prompt_cache_breakpoint") != QJ_NONE) {
                        if (v->caps.cache != QCACHE_BREAKPOINTS) violp(v, pb, "prompt_cache_breakpoint on a row without explicit breakpoints");
                        if (++v->marks == v->caps.cache_limit + 1)
                            violp(v, pb, "more than %u explicit cache breakpoints in the request", v->caps.cache_limit);
                    }
                }
            } else if (!is(v, ct, QJ_STRING)) {
                violp(v, PK(p, "content"), "expected string or array of content parts");
            }
        } else if (str_is(v, ty, "function_call") || str_is(v, ty, "custom_tool_call")) {
            if (ids.next > 0 && ids.next == ids.n) ids.n = ids.next = 0; /* a new turn of calls */
            need_type(v, get(v, e, "call_id"), QJ_STRING, PK(p, "call_id"), "\"call_id\"");
            need_type(v, get(v, e, "name"), QJ_STRING, PK(p, "name"), "\"name\"");
            tool_name_rule(v, get(v, e, "name"), PK(p, "name"));
            if (str_is(v, ty, "custom_tool_call"))
                need_type(v, get(v, e, "input"), QJ_STRING, PK(p, "input"), "\"input\" (a string)");
            else
                need_type(v, get(v, e, "arguments"), QJ_STRING, PK(p, "arguments"), "\"arguments\" (a JSON string)");
            if (is(v, get(v, e, "call_id"), QJ_STRING)) id_form(v, get(v, e, "call_id"), PK(p, "call_id"));
            ids_add(&ids, v, get(v, e, "call_id"));
            seen_non_system = true;
        } else if (str_is(v, ty, "local_shell_call")) {
            /* the local_shell tool's call (codex-mini): answered by a
             * function_call_output or local_shell_call_output with its call_id */
            if (ids.next > 0 && ids.next == ids.n) ids.n = ids.next = 0;
            need_type(v, get(v, e, "call_id"), QJ_STRING, PK(p, "call_id"), "\"call_id\"");
            ids_add(&ids, v, get(v, e, "call_id"));
            seen_non_system = true;
        } else if (str_is(v, ty, "function_call_output") || str_is(v, ty, "custom_tool_call_output") ||
                   str_is(v, ty, "local_shell_call_output")) {
            if (is(v, get(v, e, "call_id"), QJ_STRING)) id_form(v, get(v, e, "call_id"), PK(p, "call_id"));
            ids_answer(&ids, v, get(v, e, "call_id"), PK(p, "call_id"),
                       str_is(v, ty, "function_call_output")     ? "function_call_output"
                       : str_is(v, ty, "custom_tool_call_output") ? "custom_tool_call_output"
                                                                  : "local_shell_call_output");
            uint32_t out = get(v, e, "output");
            if (!is(v, out, QJ_STRING) && !is(v, out, QJ_ARRAY)) violp(v, PK(p, "output"), "expected string or array");
        } else if (!is(v, ty, QJ_STRING)) {
            violp(v, PK(p, "type"), "missing item type");
        } else {
            seen_non_system = true; /* reasoning and other items: carried as given */
        }
    }
    ids_close(&ids, v, PK(r, "input"));
}

/* ---- Gemini ---- */
static const char *const k_gemini_data[] = {"text", "inlineData", "fileData", "functionCall", "functionResponse",
                                            "executableCode", "codeExecutionResult"};
static const char *const k_gemini_part_keys[] = {"text", "inlineData", "fileData", "functionCall", "functionResponse",
                                                 "executableCode", "codeExecutionResult", "thought",
                                                 "thoughtSignature", "partMetadata", "videoMetadata"};
static const char *const k_gemini_top[] = {"model", "contents", "tools", "toolConfig", "safetySettings",
                                           "systemInstruction", "generationConfig", "cachedContent"};

static void unknown_keys(vctx *v, uint32_t obj, const char *const *names, size_t nn, vp p) {
    if (!is(v, obj, QJ_OBJECT)) return;
    uint32_t k = obj + 1;
    for (uint32_t m = 0; m < qj_at(v->d, obj)->n; m++, k = qj_next(v->d, k + 1)) {
        bool ok = false;
        for (size_t i = 0; i < nn; i++) if (qj_str_eq(v->d, k, names[i])) ok = true;
        if (!ok) {
            char key[64];
            sval(v, k, key, sizeof key);
            violp(v, PK(p, key), "unknown field \"%s\"", key);
        }
    }
}

static void v_gemini(vctx *v, uint32_t root) {
    vp r = P("");
    unknown_keys(v, root, k_gemini_top, Q_COUNTOF(k_gemini_top), r);
    function_tools(v, root);
    uint32_t si = get(v, root, "systemInstruction");
    if (si != QJ_NONE && v->caps.system == QSYS_FIRST_USER)
        viol(v, "/systemInstruction", "this model takes no system instruction");
    uint32_t sp = si != QJ_NONE ? get(v, si, "parts") : QJ_NONE;
    if (is(v, sp, QJ_ARRAY)) {
        /* a Part holds one data field: an empty text part has none */
        uint32_t e = sp + 1;
        for (uint32_t k = 0; k < count_of(v, sp); k++, e = next(v, e)) {
            uint32_t tx = is(v, e, QJ_OBJECT) ? get(v, e, "text") : QJ_NONE;
            if (is(v, tx, QJ_STRING) && qj_at(v->d, tx)->len == 0)
                violp(v, PK(PI(PK(PK(P(""), "systemInstruction"), "parts"), k), "text"), "an empty text part is rejected");
        }
    }
    uint32_t cs = get(v, root, "contents");
    if (!need_type(v, cs, QJ_ARRAY, PK(r, "contents"), "\"contents\"")) return;
    uint32_t n = count_of(v, cs);
    if (n == 0) viol(v, "/contents", "at least one content is required");
    char pending[64][96];
    bool used[64];
    uint32_t npend = 0;
    bool prev_calls = false;
    /* the current turn: the contents after the last user content that is not
     * only function responses */
    bool signs = qr_gemini_signs_calls(v->model);
    uint32_t turn_start = 0;
    if (signs) {
        uint32_t e0 = first(cs);
        for (uint32_t i = 0; i < n; i++, e0 = next(v, e0)) {
            uint32_t ps = get(v, e0, "parts");
            if (!str_is(v, get(v, e0, "role"), "user") || !is(v, ps, QJ_ARRAY)) continue;
            bool other = false;
            uint32_t b0 = first(ps);
            for (uint32_t j = 0; j < count_of(v, ps); j++, b0 = next(v, b0))
                if (get(v, b0, "functionResponse") == QJ_NONE) other = true;
            if (other) turn_start = i + 1;
        }
    }
    uint32_t e = first(cs);
    for (uint32_t i = 0; i < n; i++, e = next(v, e)) {
        vp p = PI(PK(r, "contents"), i);
        uint32_t role = get(v, e, "role"), parts = get(v, e, "parts");
        bool model = str_is(v, role, "model");
        if (!model && !str_is(v, role, "user")) violp(v, PK(p, "role"), "role must be user or model");
        if (i == 0 && model) violp(v, PK(p, "role"), "the first content must be a user content");
        if (!need_type(v, parts, QJ_ARRAY, PK(p, "parts"), "\"parts\"")) continue;
        if (count_of(v, parts) == 0) violp(v, PK(p, "parts"), "parts must be non-empty");
        uint32_t nresp = 0, nother = 0, ncalls = 0;
        uint32_t b = first(parts);
        for (uint32_t j = 0; j < count_of(v, parts); j++, b = next(v, b)) {
            vp pb = PI(PK(p, "parts"), j);
            unknown_keys(v, b, k_gemini_part_keys, Q_COUNTOF(k_gemini_part_keys), pb);
            uint32_t nd = 0;
            for (size_t k = 0; k < Q_COUNTOF(k_gemini_data); k++) if (get(v, b, k_gemini_data[k]) != QJ_NONE) nd++;
            if (nd != 1) violp(v, pb, "a part holds exactly one of text, inlineData, fileData, functionCall, functionResponse");
            uint32_t tx = get(v, b, "text");
            if (is(v, tx, QJ_STRING) && qj_at(v->d, tx)->len == 0 && get(v, b, "thoughtSignature") == QJ_NONE)
                violp(v, PK(pb, "text"), "an empty text part is rejected (unless it carries a thoughtSignature)");
            uint32_t fc = get(v, b, "functionCall"), fr = get(v, b, "functionResponse");
            if (fc != QJ_NONE) {
                if (!model) violp(v, PK(pb, "functionCall"), "functionCall parts belong in model contents");
                need_type(v, get(v, fc, "name"), QJ_STRING, PK(PK(pb, "functionCall"), "name"), "\"name\"");
                tool_name_rule(v, get(v, fc, "name"), PK(PK(pb, "functionCall"), "name"));
                uint32_t args = get(v, fc, "args");
                if (args != QJ_NONE) need_type(v, args, QJ_OBJECT, PK(PK(pb, "functionCall"), "args"), "\"args\"");
                if (npend < 64) { used[npend] = false; sval(v, get(v, fc, "name"), pending[npend++], sizeof pending[0]); }
                if (signs && model && i >= turn_start && ncalls == 0 && get(v, b, "thoughtSignature") == QJ_NONE)
                    violp(v, PK(pb, "functionCall"),
                         "the first functionCall of a model content in the current turn needs a thoughtSignature "
                         "on this model (Gemini 3 and later)");
                ncalls++;
            } else if (fr != QJ_NONE) {
                if (model) violp(v, PK(pb, "functionResponse"), "functionResponse parts belong in user contents");
                need_type(v, get(v, fr, "response"), QJ_OBJECT, PK(PK(pb, "functionResponse"), "response"), "\"response\"");
                uint32_t frp = get(v, fr, "parts");
                vp pp = PK(PK(pb, "functionResponse"), "parts");
                if (frp != QJ_NONE && need_type(v, frp, QJ_ARRAY, pp, "\"parts\"")) {
                    if (count_of(v, frp) == 0) violp(v, pp, "functionResponse parts must be non-empty when given");
                    else if (!v->caps.tool_result_images)
                        violp(v, pp, "media inside a function response is not supported by this model row (Gemini 3 and later take it)");
                    uint32_t q = first(frp);
                    for (uint32_t k = 0; k < count_of(v, frp); k++, q = next(v, q))
                        if (!is(v, q, QJ_OBJECT) || get(v, q, "inlineData") == QJ_NONE || qj_at(v->d, q)->n != 1)
                            violp(v, PI(pp, k), "a function response part holds inlineData (FunctionResponsePart)");
                }
                char nm[96];
                sval(v, get(v, fr, "name"), nm, sizeof nm);
                if (!prev_calls) {
                    violp(v, PK(pb, "functionResponse"), "a functionResponse must directly follow the model content with the calls");
                } else {
                    /* answers one pending call of that name (any order), once */
                    bool hit = false;
                    for (uint32_t q = 0; q < npend && !hit; q++)
                        if (!used[q] && strcmp(pending[q], nm) == 0) used[q] = hit = true;
                    if (!hit) violp(v, PK(PK(pb, "functionResponse"), "name"), "functionResponse \"%s\" answers no pending call", nm);
                }
                nresp++;
            } else if (get(v, b, "inlineData") == QJ_NONE && get(v, b, "fileData") == QJ_NONE) {
                /* media after the responses are what a tool returned (Gemini
                 * CLI's read_file of an image): only text is kept apart */
                nother++;
            }
            if (get(v, b, "inlineData") != QJ_NONE && model) violp(v, PK(pb, "inlineData"), "media belongs in user contents");
        }
        if (nresp && nother) violp(v, PK(p, "parts"), "function responses are not mixed with text parts");
        if (prev_calls && nresp != npend) violp(v, PK(p, "parts"), "expected %u functionResponse parts answering the previous model content, got %u", npend, nresp);
        if (!model && nresp == 0 && prev_calls) { /* reported above */ }
        prev_calls = model && ncalls > 0;
        if (model) { if (!ncalls) npend = 0; }
        else npend = 0;
        if (model && ncalls) { /* keep pending for the next content */ }
    }
    if (prev_calls) viol(v, "/contents", "the last model content has calls without responses");
}

/* ---- request parameters (DESIGN 13, docs/params.md) ----
 * The generation fields each dialect defines, checked for shape and range
 * where present (the encoders write them from the params object; a provider
 * option may add them too). */
static double num_of(const vctx *v, uint32_t n) {
    const qj_node *x = qj_at(v->d, n);
    char tmp[64];
    size_t k = x->len < sizeof tmp - 1 ? x->len : sizeof tmp - 1;
    memcpy(tmp, x->p, k);
    tmp[k] = '\0';
    return strtod(tmp, NULL);
}
static void p_num(vctx *v, uint32_t obj, const char *key, vp base, double lo, double hi) {
    uint32_t n = get(v, obj, key);
    if (n == QJ_NONE) return;
    vp p = PK(base, key);
    if (!is(v, n, QJ_NUMBER)) { violp(v, p, "expected a number, got %s", qj_type_name(qj_type_of(v->d, n))); return; }
    double x = num_of(v, n);
    if (x < lo || x > hi) violp(v, p, "%s must be between %g and %g", key, lo, hi);
}
static void p_int(vctx *v, uint32_t obj, const char *key, vp base, int64_t lo) {
    uint32_t n = get(v, obj, key);
    if (n == QJ_NONE) return;
    int64_t x = 0;
    if (!is(v, n, QJ_NUMBER) || !qj_int64(v->d, n, &x)) { violp(v, PK(base, key), "expected an integer"); return; }
    if (x < lo) violp(v, PK(base, key), "%s must be at least %lld", key, (long long)lo);
}
static void p_bool(vctx *v, uint32_t obj, const char *key, vp base) {
    uint32_t n = get(v, obj, key);
    if (n != QJ_NONE && !is(v, n, QJ_TRUE) && !is(v, n, QJ_FALSE)) violp(v, PK(base, key), "expected a boolean");
}
static void p_str(vctx *v, uint32_t obj, const char *key, vp base) {
    uint32_t n = get(v, obj, key);
    if (n != QJ_NONE) need_type(v, n, QJ_STRING, PK(base, key), key);
}
/* An array of non-empty strings, at most max (0 = any); a single string when
 * one_ok. */
static void p_strings(vctx *v, uint32_t obj, const char *key, vp base, uint32_t max, bool one_ok) {
    uint32_t n = get(v, obj, key);
    if (n == QJ_NONE) return;
    vp p = PK(base, key);
    if (one_ok && is(v, n, QJ_STRING)) return;
    if (!is(v, n, QJ_ARRAY)) { violp(v, p, "expected an array of strings"); return; }
    if (max && count_of(v, n) > max) violp(v, p, "at most %u sequences", max);
    uint32_t e = first(n);
    for (uint32_t i = 0; i < count_of(v, n); i++, e = next(v, e))
        if (!is(v, e, QJ_STRING) || qj_at(v->d, e)->len == 0) violp(v, PI(p, i), "expected a non-empty string");
}
static bool p_enum(vctx *v, uint32_t n, vp p, const char *const *vals, size_t nv) {
    for (size_t i = 0; i < nv; i++) if (str_is(v, n, vals[i])) return true;
    char key[48];
    sval(v, n, key, sizeof key);
    violp(v, p, "unexpected value \"%s\"", key);
    return false;
}
static const char *const k_efforts[] = {"none", "minimal", "low", "medium", "high", "xhigh"};

/* json_schema formats: {name, schema, strict?} at obj. */
static void p_schema_format(vctx *v, uint32_t obj, vp p) {
    uint32_t nm = get(v, obj, "name");
    if (need_type(v, nm, QJ_STRING, PK(p, "name"), "\"name\"") && qj_at(v->d, nm)->len == 0)
        violp(v, PK(p, "name"), "must be non-empty");
    need_type(v, get(v, obj, "schema"), QJ_OBJECT, PK(p, "schema"), "\"schema\"");
    p_bool(v, obj, "strict", p);
}

static void params_anthropic(vctx *v, uint32_t root) {
    vp r = P("");
    p_num(v, root, "temperature", r, 0, 1);
    p_num(v, root, "top_p", r, 0, 1);
    p_int(v, root, "top_k", r, 1);
    p_strings(v, root, "stop_sequences", r, 0, false);
    p_bool(v, root, "stream", r);
    uint32_t tc = get(v, root, "tool_choice");
    if (tc != QJ_NONE && need_type(v, tc, QJ_OBJECT, PK(r, "tool_choice"), "\"tool_choice\"")) {
        static const char *const types[] = {"auto", "any", "tool", "none"};
        vp p = PK(r, "tool_choice");
        uint32_t ty = get(v, tc, "type");
        if (need_type(v, ty, QJ_STRING, PK(p, "type"), "\"type\"") && p_enum(v, ty, PK(p, "type"), types, 4)) {
            bool tool = str_is(v, ty, "tool");
            if (tool) need_type(v, get(v, tc, "name"), QJ_STRING, PK(p, "name"), "\"name\" (the tool to call)");
            else if (get(v, tc, "name") != QJ_NONE) violp(v, PK(p, "name"), "only a tool choice of type tool names a tool");
            if (str_is(v, ty, "none") && get(v, tc, "disable_parallel_tool_use") != QJ_NONE)
                violp(v, PK(p, "disable_parallel_tool_use"), "not allowed with type none");
        }
        p_bool(v, tc, "disable_parallel_tool_use", p);
    }
    uint32_t th = get(v, root, "thinking");
    if (th != QJ_NONE && need_type(v, th, QJ_OBJECT, PK(r, "thinking"), "\"thinking\"")) {
        vp p = PK(r, "thinking");
        uint32_t ty = get(v, th, "type");
        if (str_is(v, ty, "enabled")) {
            uint32_t bt = get(v, th, "budget_tokens"), mt = get(v, root, "max_tokens");
            int64_t b = 0, m = 0;
            if (!is(v, bt, QJ_NUMBER) || !qj_int64(v->d, bt, &b)) violp(v, PK(p, "budget_tokens"), "expected an integer");
            else if (b < 1024) violp(v, PK(p, "budget_tokens"), "a thinking budget is at least 1024 tokens");
            else if (is(v, mt, QJ_NUMBER) && qj_int64(v->d, mt, &m) && b >= m)
                violp(v, PK(p, "budget_tokens"), "a thinking budget must be less than max_tokens (%lld)", (long long)m);
        } else if (!str_is(v, ty, "disabled")) {
            violp(v, PK(p, "type"), "expected \"enabled\" or \"disabled\"");
        }
    }
    uint32_t md = get(v, root, "metadata");
    if (md != QJ_NONE && need_type(v, md, QJ_OBJECT, PK(r, "metadata"), "\"metadata\"")) p_str(v, md, "user_id", PK(r, "metadata"));
    uint32_t oc = get(v, root, "output_config");
    if (oc != QJ_NONE && need_type(v, oc, QJ_OBJECT, PK(r, "output_config"), "\"output_config\"")) {
        uint32_t f = get(v, oc, "format");
        vp p = PK(PK(r, "output_config"), "format");
        if (f != QJ_NONE && need_type(v, f, QJ_OBJECT, p, "\"format\"")) {
            if (!str_is(v, get(v, f, "type"), "json_schema")) violp(v, PK(p, "type"), "expected \"json_schema\"");
            need_type(v, get(v, f, "schema"), QJ_OBJECT, PK(p, "schema"), "\"schema\"");
        }
    }
}

static void params_chat(vctx *v, uint32_t root, qdialect dialect) {
    vp r = P("");
    if (dialect == QD_OLLAMA) {
        p_bool(v, root, "stream", r);
        uint32_t o = get(v, root, "options");
        if (o != QJ_NONE && need_type(v, o, QJ_OBJECT, PK(r, "options"), "\"options\"")) {
            vp p = PK(r, "options");
            p_int(v, o, "num_predict", p, -2);
            p_num(v, o, "temperature", p, 0, 1e9);
            p_num(v, o, "top_p", p, 0, 1);
            p_int(v, o, "top_k", p, 1);
            p_int(v, o, "seed", p, INT64_MIN);
            p_strings(v, o, "stop", p, 0, false);
        }
        uint32_t f = get(v, root, "format");
        if (f != QJ_NONE && !str_is(v, f, "json") && !is(v, f, QJ_OBJECT))
            viol(v, "/format", "expected \"json\" or a JSON Schema object");
        uint32_t th = get(v, root, "think");
        static const char *const levels[] = {"low", "medium", "high"};
        if (th != QJ_NONE && !is(v, th, QJ_TRUE) && !is(v, th, QJ_FALSE)) {
            if (is(v, th, QJ_STRING)) p_enum(v, th, PK(r, "think"), levels, 3);
            else viol(v, "/think", "expected a boolean or low, medium, high");
        }
        return;
    }
    bool mistral = dialect == QD_MISTRAL;
    p_num(v, root, "temperature", r, 0, mistral ? 1e9 : 2);
    p_num(v, root, "top_p", r, 0, 1);
    p_strings(v, root, "stop", r, mistral ? 0 : 4, true);
    p_int(v, root, mistral ? "random_seed" : "seed", r, INT64_MIN);
    p_bool(v, root, "parallel_tool_calls", r);
    p_bool(v, root, "stream", r);
    p_str(v, root, "user", r);
    uint32_t tc = get(v, root, "tool_choice");
    if (tc != QJ_NONE) {
        static const char *const chat_modes[] = {"auto", "none", "required"};
        static const char *const mistral_modes[] = {"auto", "none", "any", "required"};
        vp p = PK(r, "tool_choice");
        if (is(v, tc, QJ_STRING)) p_enum(v, tc, p, mistral ? mistral_modes : chat_modes, mistral ? 4 : 3);
        else if (is(v, tc, QJ_OBJECT)) {
            if (!str_is(v, get(v, tc, "type"), "function")) violp(v, PK(p, "type"), "expected \"function\"");
            uint32_t fn = get(v, tc, "function");
            if (need_type(v, fn, QJ_OBJECT, PK(p, "function"), "\"function\""))
                need_type(v, get(v, fn, "name"), QJ_STRING, PK(PK(p, "function"), "name"), "\"name\"");
        } else violp(v, p, "expected a string or an object");
    }
    uint32_t rf = get(v, root, "response_format");
    if (rf != QJ_NONE && need_type(v, rf, QJ_OBJECT, PK(r, "response_format"), "\"response_format\"")) {
        static const char *const types[] = {"text", "json_object", "json_schema"};
        vp p = PK(r, "response_format");
        uint32_t ty = get(v, rf, "type");
        if (need_type(v, ty, QJ_STRING, PK(p, "type"), "\"type\"") && p_enum(v, ty, PK(p, "type"), types, 3) &&
            str_is(v, ty, "json_schema")) {
            uint32_t js = get(v, rf, "json_schema");
            if (need_type(v, js, QJ_OBJECT, PK(p, "json_schema"), "\"json_schema\"")) p_schema_format(v, js, PK(p, "json_schema"));
        }
    }
    uint32_t re = get(v, root, "reasoning_effort");
    if (re != QJ_NONE) p_enum(v, re, PK(r, "reasoning_effort"), k_efforts, Q_COUNTOF(k_efforts));
}

static void params_responses(vctx *v, uint32_t root) {
    vp r = P("");
    p_num(v, root, "temperature", r, 0, 2);
    p_num(v, root, "top_p", r, 0, 1);
    p_bool(v, root, "parallel_tool_calls", r);
    p_bool(v, root, "stream", r);
    p_str(v, root, "user", r);
    uint32_t tc = get(v, root, "tool_choice");
    if (tc != QJ_NONE) {
        static const char *const modes[] = {"auto", "none", "required"};
        vp p = PK(r, "tool_choice");
        if (is(v, tc, QJ_STRING)) p_enum(v, tc, p, modes, 3);
        else if (is(v, tc, QJ_OBJECT)) {
            if (str_is(v, get(v, tc, "type"), "function"))
                need_type(v, get(v, tc, "name"), QJ_STRING, PK(p, "name"), "\"name\"");
        } else violp(v, p, "expected a string or an object");
    }
    uint32_t tx = get(v, root, "text");
    if (tx != QJ_NONE && need_type(v, tx, QJ_OBJECT, PK(r, "text"), "\"text\"")) {
        uint32_t f = get(v, tx, "format");
        vp p = PK(PK(r, "text"), "format");
        if (f != QJ_NONE && need_type(v, f, QJ_OBJECT, p, "\"format\"")) {
            static const char *const types[] = {"text", "json_object", "json_schema"};
            uint32_t ty = get(v, f, "type");
            if (need_type(v, ty, QJ_STRING, PK(p, "type"), "\"type\"") && p_enum(v, ty, PK(p, "type"), types, 3) &&
                str_is(v, ty, "json_schema"))
                p_schema_format(v, f, p);
        }
    }
    uint32_t rs = get(v, root, "reasoning");
    if (rs != QJ_NONE && need_type(v, rs, QJ_OBJECT, PK(r, "reasoning"), "\"reasoning\"")) {
        uint32_t ef = get(v, rs, "effort");
        if (ef != QJ_NONE) p_enum(v, ef, PK(PK(r, "reasoning"), "effort"), k_efforts, Q_COUNTOF(k_efforts));
    }
}

static void params_gemini(vctx *v, uint32_t root) {
    vp r = P("");
    uint32_t gc = get(v, root, "generationConfig");
    if (gc != QJ_NONE && need_type(v, gc, QJ_OBJECT, PK(r, "generationConfig"), "\"generationConfig\"")) {
        vp p = PK(r, "generationConfig");
        p_strings(v, gc, "stopSequences", p, 5, false);
        p_int(v, gc, "maxOutputTokens", p, 1);
        p_num(v, gc, "temperature", p, 0, 2);
        p_num(v, gc, "topP", p, 0, 1);
        p_int(v, gc, "topK", p, 1);
        p_int(v, gc, "seed", p, INT64_MIN);
        p_str(v, gc, "responseMimeType", p);
        uint32_t js = get(v, gc, "responseJsonSchema");
        if (js != QJ_NONE) {
            need_type(v, js, QJ_OBJECT, PK(p, "responseJsonSchema"), "\"responseJsonSchema\"");
            if (get(v, gc, "responseSchema") != QJ_NONE) violp(v, PK(p, "responseSchema"), "give responseSchema or responseJsonSchema, not both");
            if (!str_is(v, get(v, gc, "responseMimeType"), "application/json"))
                violp(v, PK(p, "responseMimeType"), "a response schema needs responseMimeType application/json");
        }
        uint32_t tc = get(v, gc, "thinkingConfig");
        if (tc != QJ_NONE && need_type(v, tc, QJ_OBJECT, PK(p, "thinkingConfig"), "\"thinkingConfig\"")) {
            p_int(v, tc, "thinkingBudget", PK(p, "thinkingConfig"), -1);
            p_bool(v, tc, "includeThoughts", PK(p, "thinkingConfig"));
        }
    }
    uint32_t tcf = get(v, root, "toolConfig");
    if (tcf != QJ_NONE && need_type(v, tcf, QJ_OBJECT, PK(r, "toolConfig"), "\"toolConfig\"")) {
        vp p = PK(PK(r, "toolConfig"), "functionCallingConfig");
        uint32_t fc = get(v, tcf, "functionCallingConfig");
        if (fc != QJ_NONE && need_type(v, fc, QJ_OBJECT, p, "\"functionCallingConfig\"")) {
            static const char *const modes[] = {"AUTO", "ANY", "NONE", "VALIDATED"};
            uint32_t mode = get(v, fc, "mode");
            if (mode != QJ_NONE) p_enum(v, mode, PK(p, "mode"), modes, 4);
            p_strings(v, fc, "allowedFunctionNames", p, 0, false);
            if (get(v, fc, "allowedFunctionNames") != QJ_NONE && !str_is(v, mode, "ANY") && !str_is(v, mode, "VALIDATED"))
                violp(v, PK(p, "allowedFunctionNames"), "allowed function names need mode ANY or VALIDATED");
        }
    }
}

static void params_bedrock(vctx *v, uint32_t root) {
    vp r = P("");
    uint32_t ic = get(v, root, "inferenceConfig");
    if (ic != QJ_NONE && need_type(v, ic, QJ_OBJECT, PK(r, "inferenceConfig"), "\"inferenceConfig\"")) {
        vp p = PK(r, "inferenceConfig");
        p_int(v, ic, "maxTokens", p, 1);
        p_strings(v, ic, "stopSequences", p, 4, false);
        p_num(v, ic, "temperature", p, 0, 1);
        p_num(v, ic, "topP", p, 0, 1);
    }
    uint32_t tcf = get(v, root, "toolConfig");
    uint32_t ch = get(v, tcf, "toolChoice");
    if (ch != QJ_NONE && need_type(v, ch, QJ_OBJECT, PK(PK(r, "toolConfig"), "toolChoice"), "\"toolChoice\"")) {
        vp p = PK(PK(r, "toolConfig"), "toolChoice");
        uint32_t a = get(v, ch, "auto"), y = get(v, ch, "any"), t = get(v, ch, "tool");
        if ((a != QJ_NONE) + (y != QJ_NONE) + (t != QJ_NONE) != 1 || qj_at(v->d, ch)->n != 1)
            violp(v, p, "a tool choice holds exactly one of auto, any, tool");
        if (t != QJ_NONE && need_type(v, t, QJ_OBJECT, PK(p, "tool"), "\"tool\""))
            need_type(v, get(v, t, "name"), QJ_STRING, PK(PK(p, "tool"), "name"), "\"name\"");
    }
    uint32_t am = get(v, root, "additionalModelRequestFields");
    if (am != QJ_NONE) need_type(v, am, QJ_OBJECT, PK(r, "additionalModelRequestFields"), "\"additionalModelRequestFields\"");
}

/* ---- entry ---- */
quire_status quire_validate(const char *json, size_t len, const quire_render_options *ro, const quire_options *opts,
                            quire_bytes *report, quire_error *err) {
    memset(report, 0, sizeof *report);
    if (!ro || !ro->provider || !*ro->provider) return q_err(err, QUIRE_E_INVALID, "no provider given");
    if (!qcaps_known_provider(ro->caps, ro->provider))
        return q_err(err, QUIRE_E_INVALID, "unknown provider \"%s\"", ro->provider);
    const quire_allocator *a = q_alloc_of(opts);
    qj_doc d;
    quire_limits lim = q_limits(opts);
    if ((uint64_t)len > lim.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)lim.max_input_bytes);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_status st = qj_parse(&d, json, len, &jo, a, err);
    if (st) return st;
    vctx v;
    memset(&v, 0, sizeof v);
    v.d = &d;
    qbuf out;
    qbuf_init(&out, a);
    v.out = &out;
    const char *model = ro->model && *ro->model ? ro->model : NULL;
    uint32_t mnode = get(&v, 0, "model");
    char mbuf[128];
    if (!model && is(&v, mnode, QJ_STRING)) { sval(&v, mnode, mbuf, sizeof mbuf); model = mbuf; }
    if (!model) model = qcaps_default_model(ro->provider);
    if (!model || !qcaps_resolve(ro->caps, ro->provider, model, &v.caps, NULL, NULL)) {
        qj_doc_free(&d);
        qbuf_free(&out);
        return q_err(err, QUIRE_E_INVALID, "no capability row for provider \"%s\"%s%s", ro->provider,
                     model ? " model " : "", model ? model : "");
    }
    if (!v.caps.cache_limit) v.caps.cache_limit = 4;
    v.model = model;
    if (qj_type_of(&d, 0) != QJ_OBJECT) {
        viol(&v, "", "expected a JSON object (a request body)");
    } else {
        switch (v.caps.dialect) {
        case QD_ANTHROPIC_MESSAGES: v_anthropic(&v, 0); params_anthropic(&v, 0); break;
        case QD_BEDROCK_CONVERSE: v_bedrock(&v, 0); params_bedrock(&v, 0); break;
        case QD_OPENAI_CHAT: case QD_MISTRAL: case QD_OLLAMA:
            v_chat(&v, 0, v.caps.dialect);
            params_chat(&v, 0, v.caps.dialect);
            break;
        case QD_OPENAI_RESPONSES: v_responses(&v, 0); params_responses(&v, 0); break;
        case QD_GEMINI: v_gemini(&v, 0); params_gemini(&v, 0); break;
        case QD_COUNT_: break;
        }
    }
    if (v.n > 200) {
        char more[64];
        snprintf(more, sizeof more, "/: and %u more violations\n", v.n - 200);
        qbuf_puts(&out, more);
    }
    qj_doc_free(&d);
    if (out.oom) { qbuf_free(&out); return q_oom(err); }
    if (v.n == 0) { qbuf_free(&out); return QUIRE_OK; }
    if (!qbuf_take(&out, report)) { qbuf_free(&out); return q_oom(err); }
    return q_err(err, QUIRE_E_VALIDATE, "%u violation%s of the %s rules", v.n, v.n == 1 ? "" : "s",
                 qdialect_name(v.caps.dialect));
}
