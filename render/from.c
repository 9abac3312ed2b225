/* Input dialects (quire render --from): a request body in a provider's shape
 * decoded into a quire.transcript/1 transcript, so a conversation can be
 * converted from one provider to another. Strings stay escaped slices of the
 * input; tool inputs stay byte-exact (OpenAI's JSON-string arguments are
 * parsed from their decoded text, whose number text is kept). What the
 * transcript has no block for becomes an opaque block of the source dialect
 * (re-emitted unchanged to the same dialect, dropped with an event for
 * others). The body's request parameters (temperature, ...) are not part of
 * a transcript: quire_params_from_dialect (the end of this file) reads them
 * into a params object. */
#include "render/render.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct fctx {
    quire_transcript *t;
    const qj_doc *d;
    const quire_options *opts;
    quire_error *err;
    const char *provider; /* opaque blocks' provider */
} fctx;

static quire_status Q_PRINTF(4, 5) ferr(fctx *f, uint32_t node, const char *ptr, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_err_at(f->err, QUIRE_E_SCHEMA, node == QJ_NONE ? 0 : qj_offset(f->d, node), ptr, "%s", msg);
    q_err_locate(f->err, f->d->src, f->d->len);
    return QUIRE_E_SCHEMA;
}

static uint32_t get(const fctx *f, uint32_t obj, const char *k) {
    if (obj == QJ_NONE || qj_type_of(f->d, obj) != QJ_OBJECT) return QJ_NONE;
    return qj_get(f->d, obj, k);
}
static bool is(const fctx *f, uint32_t n, qj_type t) { return n != QJ_NONE && qj_type_of(f->d, n) == t; }
static bool str_is(const fctx *f, uint32_t n, const char *s) { return is(f, n, QJ_STRING) && qj_str_eq(f->d, n, s); }
static uint32_t len_of(const fctx *f, uint32_t arr) { return is(f, arr, QJ_ARRAY) ? qj_at(f->d, arr)->n : 0; }
static qstr S(const fctx *f, uint32_t n) { return is(f, n, QJ_STRING) ? qstr_node(f->d, n) : (qstr){0}; }

static void ptr_idx(char *out, size_t cap, const char *base, uint32_t i, const char *tail) {
    snprintf(out, cap, "%s/%u%s", base, i, tail ? tail : "");
}

static qblock *blocks_new(fctx *f, uint32_t n) {
    qblock *b = qarena_calloc(&f->t->ar, n ? n : 1, sizeof(qblock));
    if (b) for (uint32_t i = 0; i < (n ? n : 1); i++) b[i].is_error = -1;
    return b;
}

static qmsg *push(fctx *f, qrole role, qblock *blocks, uint32_t n, uint32_t src) {
    qmsg *m = qtr_push_msg(f->t);
    if (!m) return NULL;
    m->role = role;
    m->blocks = blocks;
    m->nblocks = n;
    m->src_index = src;
    return m;
}

static qblock opaque(fctx *f, uint32_t node) {
    qblock b;
    memset(&b, 0, sizeof b);
    b.is_error = -1;
    b.type = QB_OPAQUE;
    b.provider = qstr_lit(f->provider);
    b.item = qval_of(f->d, node);
    return b;
}

/* A data: URL string node -> mediaType + data slices (escaped, unchanged). */
static bool data_url(const fctx *f, uint32_t n, qblock *b) {
    if (!is(f, n, QJ_STRING)) return false;
    const qj_node *x = qj_at(f->d, n);
    if (x->len < 5 || memcmp(x->p, "data:", 5) != 0) {
        b->url = qstr_node(f->d, n);
        return true;
    }
    const char *semi = memchr(x->p, ';', x->len);
    const char *comma = memchr(x->p, ',', x->len);
    if (!semi || !comma || comma < semi || (size_t)(comma - semi) != 7 || memcmp(semi, ";base64", 7) != 0) {
        b->url = qstr_node(f->d, n); /* a non-base64 data URL: kept as a URL */
        return true;
    }
    uint8_t esc = (x->flags & QJ_F_ESC) ? 1 : 0;
    b->media_type = (qstr){x->p + 5, (uint32_t)(semi - x->p - 5), esc, 0};
    b->data = (qstr){comma + 1, (uint32_t)(x->p + x->len - comma - 1), esc, 0};
    return true;
}

/* A tool input given as a JSON string (OpenAI arguments): parsed from its
 * decoded text; the text's numbers and escapes are kept. */
static quire_status parse_arguments(fctx *f, uint32_t n, const char *ptr, qval *out) {
    if (is(f, n, QJ_OBJECT)) { *out = qval_of(f->d, n); return QUIRE_OK; }
    if (!is(f, n, QJ_STRING)) return ferr(f, n, ptr, "expected a JSON string of the arguments");
    size_t len = 0;
    const char *txt = qj_str_decode(f->d, n, &f->t->ar, &len);
    if (!txt) return q_oom(f->err);
    if (len == 0) txt = "{}", len = 2;
    quire_error e2;
    qj_doc *ad = qtr_parse_doc(f->t, txt, len, true, f->opts, &e2);
    if (!ad) {
        if (e2.code == QUIRE_E_NOMEM) return q_oom(f->err);
        return ferr(f, n, ptr, "arguments are not valid JSON: %s", e2.message);
    }
    *out = qval_of(ad, 0);
    return QUIRE_OK;
}

/* A JSON literal of quire's own, parsed into the transcript's arena; an
 * absent value on OOM. */
static qval literal(fctx *f, const char *json, size_t len) {
    quire_error e2;
    qj_doc *ad = qtr_parse_doc(f->t, json, len, true, f->opts, &e2);
    return ad ? qval_of(ad, 0) : (qval){0};
}

/* A function tool's parameters as the transcript's inputSchema, a JSON
 * Schema of type "object" (docs/transcript.md): parameters left out or
 * given as {} are a function without parameters (the OpenAI and Gemini
 * documents read them so), written {"type":"object","properties":{}}; any
 * other schema must say "type": "object" itself. ptr: the schema's pointer. */
static quire_status fn_schema(fctx *f, uint32_t ps, const char *ptr, qval *out) {
    if (ps == QJ_NONE || (is(f, ps, QJ_OBJECT) && qj_at(f->d, ps)->n == 0)) {
        static const char k_none[] = "{\"type\":\"object\",\"properties\":{}}";
        *out = literal(f, k_none, sizeof k_none - 1);
        return qval_present(*out) ? QUIRE_OK : q_oom(f->err);
    }
    if (!is(f, ps, QJ_OBJECT)) return ferr(f, ps, ptr, "a tool's parameters must be a JSON Schema object");
    uint32_t ty = get(f, ps, "type");
    if (!str_is(f, ty, "object")) {
        char p2[200];
        snprintf(p2, sizeof p2, "%s/type", ptr);
        return ferr(f, ty == QJ_NONE ? ps : ty, ty == QJ_NONE ? ptr : p2,
                    "only parameters of JSON Schema type \"object\" convert (the providers take no other)");
    }
    *out = qval_of(f->d, ps);
    return QUIRE_OK;
}

/* ======================================================================== */
/* Anthropic Messages                                                        */
/* ======================================================================== */

static quire_status a_block(fctx *f, uint32_t n, qblock *b, const char *ptr, bool in_result) {
    uint32_t ty = get(f, n, "type");
    memset(b, 0, sizeof *b);
    b->is_error = -1;
    b->cache_control = qval_of(f->d, QJ_NONE);
    uint32_t cc = get(f, n, "cache_control");
    b->cache_control = cc != QJ_NONE ? qval_of(f->d, cc) : (qval){0};
    if (str_is(f, ty, "text")) {
        b->type = QB_TEXT;
        b->text = S(f, get(f, n, "text"));
        if (!b->text.p) return ferr(f, n, ptr, "text block without \"text\"");
        uint32_t cit = get(f, n, "citations");
        if (cit != QJ_NONE && !is(f, cit, QJ_NULL)) b->citations = qval_of(f->d, cit);
        return QUIRE_OK;
    }
    if (str_is(f, ty, "image") || str_is(f, ty, "document")) {
        b->type = str_is(f, ty, "image") ? QB_IMAGE : QB_DOCUMENT;
        uint32_t src = get(f, n, "source"), st = get(f, src, "type");
        if (str_is(f, st, "base64") || str_is(f, st, "text")) {
            b->media_type = S(f, get(f, src, "media_type"));
            b->data = S(f, get(f, src, "data"));
        } else if (str_is(f, st, "url")) {
            b->url = S(f, get(f, src, "url"));
        } else if (str_is(f, st, "file") && get(f, src, "file_id") != QJ_NONE) {
            b->file_id = S(f, get(f, src, "file_id"));
            b->provider = qstr_lit(f->provider);
        } else {
            *b = opaque(f, n);
            return QUIRE_OK;
        }
        /* fields the transcript's media blocks do not hold (context, citations config): kept whole */
        if (get(f, n, "context") != QJ_NONE || get(f, n, "citations") != QJ_NONE) { *b = opaque(f, n); return QUIRE_OK; }
        if (!b->data.p && !b->url.p && !b->file_id.p) return ferr(f, n, ptr, "image/document source without data, url or file_id");
        if (b->type == QB_DOCUMENT) b->title = S(f, get(f, n, "title"));
        return QUIRE_OK;
    }
    if (in_result) { *b = opaque(f, n); return QUIRE_OK; }
    if (str_is(f, ty, "tool_use")) {
        b->type = QB_TOOL_CALL;
        b->id = S(f, get(f, n, "id"));
        b->name = S(f, get(f, n, "name"));
        uint32_t in = get(f, n, "input");
        if (!b->id.p || !b->name.p || in == QJ_NONE) return ferr(f, n, ptr, "tool_use needs id, name and input");
        b->input = qval_of(f->d, in);
        return QUIRE_OK;
    }
    if (str_is(f, ty, "thinking")) {
        b->type = QB_THINKING;
        b->text = S(f, get(f, n, "thinking"));
        b->signature = S(f, get(f, n, "signature"));
        if (b->signature.p) b->provider = qstr_lit("anthropic"); /* the signature is Anthropic's */
        if (!b->text.p) return ferr(f, n, ptr, "thinking block without \"thinking\"");
        return QUIRE_OK;
    }
    if (str_is(f, ty, "redacted_thinking")) {
        b->type = QB_REDACTED_THINKING;
        b->data = S(f, get(f, n, "data"));
        b->provider = qstr_lit("anthropic");
        return QUIRE_OK;
    }
    if (str_is(f, ty, "server_tool_use") && S(f, get(f, n, "id")).p && S(f, get(f, n, "name")).p &&
        get(f, n, "input") != QJ_NONE && qj_at(f->d, n)->n == 4 + (cc != QJ_NONE)) {
        b->type = QB_SERVER_TOOL_CALL;
        b->provider = qstr_lit(f->provider);
        b->id = S(f, get(f, n, "id"));
        b->name = S(f, get(f, n, "name"));
        b->input = qval_of(f->d, get(f, n, "input"));
        return QUIRE_OK;
    }
    /* <name>_tool_result with exactly type, tool_use_id, content (and a marker) */
    if (is(f, ty, QJ_STRING) && qj_at(f->d, ty)->len > 12 && !str_is(f, ty, "mcp_tool_result") &&
        memcmp(qj_at(f->d, ty)->p + qj_at(f->d, ty)->len - 12, "_tool_result", 12) == 0 &&
        S(f, get(f, n, "tool_use_id")).p && get(f, n, "content") != QJ_NONE && qj_at(f->d, n)->n == 3 + (cc != QJ_NONE)) {
        b->type = QB_SERVER_TOOL_RESULT;
        b->provider = qstr_lit(f->provider);
        b->tool_call_id = S(f, get(f, n, "tool_use_id"));
        b->name = qstr_node(f->d, ty);
        b->name.len -= 12;
        b->result = qval_of(f->d, get(f, n, "content"));
        return QUIRE_OK;
    }
    *b = opaque(f, n);
    return QUIRE_OK;
}

static quire_status a_result(fctx *f, uint32_t n, qblock *b, const char *ptr) {
    memset(b, 0, sizeof *b);
    b->type = QB_TOOL_RESULT;
    b->is_error = -1;
    b->tool_call_id = S(f, get(f, n, "tool_use_id"));
    if (!b->tool_call_id.p) return ferr(f, n, ptr, "tool_result without \"tool_use_id\"");
    uint32_t ie = get(f, n, "is_error");
    if (is(f, ie, QJ_TRUE)) b->is_error = 1;
    else if (is(f, ie, QJ_FALSE)) b->is_error = 0;
    uint32_t cc = get(f, n, "cache_control");
    if (cc != QJ_NONE) b->cache_control = qval_of(f->d, cc);
    uint32_t ct = get(f, n, "content");
    if (ct == QJ_NONE) { b->content_is_string = true; b->content_text = qstr_lit(""); return QUIRE_OK; }
    if (is(f, ct, QJ_STRING)) { b->content_is_string = true; b->content_text = qstr_node(f->d, ct); return QUIRE_OK; }
    uint32_t k = len_of(f, ct);
    b->parts = blocks_new(f, k);
    if (!b->parts) return q_oom(f->err);
    b->nparts = k;
    uint32_t e = ct + 1;
    for (uint32_t i = 0; i < k; i++, e = qj_next(f->d, e)) {
        char p[300];
        ptr_idx(p, sizeof p, ptr, i, NULL);
        quire_status st = a_block(f, e, &b->parts[i], p, true);
        if (st) return st;
        if (b->parts[i].type != QB_TEXT && b->parts[i].type != QB_IMAGE)
            return ferr(f, e, p, "a tool result holds only text and image blocks");
    }
    return QUIRE_OK;
}

static quire_status from_anthropic(fctx *f) {
    const qj_doc *d = f->d;
    quire_transcript *t = f->t;
    if (!is(f, 0, QJ_OBJECT)) return ferr(f, 0, "", "expected an Anthropic Messages request object");
    uint32_t sys = get(f, 0, "system");
    if (is(f, sys, QJ_STRING)) {
        quire_status st = qtr_decode_system(t, d, sys, "/system", f->err);
        if (st) return st;
    } else if (is(f, sys, QJ_ARRAY)) {
        uint32_t k = len_of(f, sys);
        t->has_system = true;
        t->system = blocks_new(f, k);
        if (!t->system) return q_oom(f->err);
        t->nsystem = k;
        uint32_t e = sys + 1;
        for (uint32_t i = 0; i < k; i++, e = qj_next(d, e)) {
            char p[64];
            ptr_idx(p, sizeof p, "/system", i, NULL);
            quire_status st = a_block(f, e, &t->system[i], p, false);
            if (st) return st;
            if (t->system[i].type != QB_TEXT) return ferr(f, e, p, "the system prompt holds only text blocks");
        }
    }
    uint32_t tools = get(f, 0, "tools");
    if (is(f, tools, QJ_ARRAY)) {
        uint32_t k = len_of(f, tools);
        t->has_tools = true;
        t->tools = qarena_calloc(&t->ar, k ? k : 1, sizeof(qtool));
        if (!t->tools) return q_oom(f->err);
        uint32_t e = tools + 1;
        for (uint32_t i = 0; i < k; i++, e = qj_next(d, e)) {
            char p[64];
            ptr_idx(p, sizeof p, "/tools", i, NULL);
            uint32_t schema = get(f, e, "input_schema");
            if (!is(f, schema, QJ_OBJECT) && is(f, get(f, e, "type"), QJ_STRING) && !str_is(f, get(f, e, "type"), "custom")) {
                /* a built-in tool (web_search_20250305, bash_20250124, ...): a provider tool, byte-exact */
                qtool *pt = &t->tools[t->ntools++];
                pt->kind = QTK_PROVIDER;
                pt->kind_given = true;
                pt->provider = qstr_lit(f->provider);
                pt->item = qval_of(d, e);
                pt->name = S(f, get(f, e, "name"));
                uint32_t pcc = get(f, e, "cache_control");
                if (pcc != QJ_NONE) pt->cache_control = qval_of(d, pcc); /* counted against the marker limit */
                continue;
            }
            if (!is(f, schema, QJ_OBJECT)) return ferr(f, e, p, "only custom tools with an input_schema convert");
            qtool *tl = &t->tools[t->ntools++];
            tl->name = S(f, get(f, e, "name"));
            tl->description = S(f, get(f, e, "description"));
            if (!str_is(f, get(f, schema, "type"), "object")) { /* the Messages API requires it */
                char ps[96];
                snprintf(ps, sizeof ps, "%s/input_schema", p);
                return ferr(f, schema, ps, "an input_schema is a JSON Schema of \"type\": \"object\"");
            }
            tl->input_schema = qval_of(d, schema);
            uint32_t cc = get(f, e, "cache_control");
            if (cc != QJ_NONE) tl->cache_control = qval_of(d, cc);
        }
    }
    uint32_t msgs = get(f, 0, "messages");
    if (!is(f, msgs, QJ_ARRAY)) return ferr(f, msgs == QJ_NONE ? 0 : msgs, "/messages", "expected an array of messages");
    uint32_t e = msgs + 1;
    for (uint32_t i = 0; i < len_of(f, msgs); i++, e = qj_next(d, e)) {
        char p[64];
        ptr_idx(p, sizeof p, "/messages", i, NULL);
        uint32_t role = get(f, e, "role"), ct = get(f, e, "content");
        qrole r = str_is(f, role, "assistant") ? QR_ASSISTANT : str_is(f, role, "system") ? QR_SYSTEM : QR_USER;
        if (!str_is(f, role, "user") && !str_is(f, role, "assistant") && !str_is(f, role, "system"))
            return ferr(f, role == QJ_NONE ? e : role, strcat(p, "/role"), "role must be user, assistant or system");
        if (is(f, ct, QJ_STRING)) {
            qblock *b = blocks_new(f, 1);
            if (!b) return q_oom(f->err);
            b->type = QB_TEXT;
            b->text = qstr_node(d, ct);
            qmsg *m = push(f, r, b, 1, i);
            if (!m) return q_oom(f->err);
            m->content_is_string = true;
            continue;
        }
        if (!is(f, ct, QJ_ARRAY)) return ferr(f, ct == QJ_NONE ? e : ct, p, "expected content string or array");
        uint32_t k = len_of(f, ct), nres = 0;
        qblock *res = blocks_new(f, k), *rest = blocks_new(f, k);
        if (!res || !rest) return q_oom(f->err);
        uint32_t nrest = 0, b = ct + 1;
        for (uint32_t j = 0; j < k; j++, b = qj_next(d, b)) {
            char pb[96];
            snprintf(pb, sizeof pb, "%s/content/%u", p, j);
            quire_status st = r != QR_ASSISTANT && str_is(f, get(f, b, "type"), "tool_result")
                                  ? a_result(f, b, &res[nres++], pb)
                                  : a_block(f, b, &rest[nrest++], pb, false);
            if (st) return st;
        }
        if (nres && !push(f, QR_TOOL, res, nres, i)) return q_oom(f->err);
        if ((nrest || !nres) && !push(f, r, rest, nrest, i)) return q_oom(f->err);
    }
    return QUIRE_OK;
}

/* ======================================================================== */
/* OpenAI Chat Completions                                                   */
/* ======================================================================== */

/* An image's detail level (Chat image_url.detail, Responses input_image.detail). */
static quire_status image_detail(fctx *f, uint32_t n, qblock *b, const char *ptr) {
    if (n == QJ_NONE || is(f, n, QJ_NULL)) return QUIRE_OK;
    if (!str_is(f, n, "auto") && !str_is(f, n, "low") && !str_is(f, n, "high") && !str_is(f, n, "original")) {
        char p[128];
        snprintf(p, sizeof p, "%s/detail", ptr);
        return ferr(f, n, p, "an image's detail is \"auto\", \"low\", \"high\" or \"original\"");
    }
    b->detail = qstr_node(f->d, n);
    return QUIRE_OK;
}

/* {"openai_responses": {"<field>": <value>}}: a Responses item field the
 * transcript has no place for (message phase, function_call namespace),
 * carried on the block and written back into the item by the Responses
 * encoder. */
static quire_status item_option(fctx *f, uint32_t val, const char *field, qval *out) {
    qbuf jb;
    qbuf_init(&jb, f->t->a);
    qw w;
    qw_init(&w, &jb, false);
    qw_obj_begin(&w);
    qw_key(&w, "openai_responses");
    qw_obj_begin(&w);
    qw_key(&w, field);
    qw_node(&w, f->d, val);
    qw_obj_end(&w);
    qw_obj_end(&w);
    qw_dispose(&w);
    char *txt = jb.oom ? NULL : qarena_strndup(&f->t->ar, jb.data, jb.len);
    size_t n = jb.len;
    qbuf_free(&jb);
    if (!txt) return q_oom(f->err);
    quire_error e2;
    qj_doc *od = qtr_parse_doc(f->t, txt, n, true, f->opts, &e2);
    if (!od) return e2.code == QUIRE_E_NOMEM ? q_oom(f->err) : ferr(f, val, "", "%s", e2.message);
    *out = qval_of(od, 0);
    return QUIRE_OK;
}

static quire_status c_part(fctx *f, uint32_t n, qblock *b, const char *ptr) {
    memset(b, 0, sizeof *b);
    b->is_error = -1;
    uint32_t ty = get(f, n, "type");
    if (str_is(f, ty, "text") || str_is(f, ty, "input_text") || str_is(f, ty, "output_text")) {
        b->type = QB_TEXT;
        b->text = S(f, get(f, n, "text"));
        if (!b->text.p) return ferr(f, n, ptr, "text part without \"text\"");
        return QUIRE_OK;
    }
    if (str_is(f, ty, "image_url")) {
        b->type = QB_IMAGE;
        uint32_t iu = get(f, n, "image_url");
        uint32_t url = is(f, iu, QJ_OBJECT) ? get(f, iu, "url") : iu;
        if (!data_url(f, url, b)) return ferr(f, n, ptr, "image_url without a url");
        return image_detail(f, get(f, iu, "detail"), b, ptr);
    }
    if (str_is(f, ty, "input_image")) {
        b->type = QB_IMAGE;
        if (!data_url(f, get(f, n, "image_url"), b)) { *b = opaque(f, n); return QUIRE_OK; }
        return image_detail(f, get(f, n, "detail"), b, ptr);
    }
    if (str_is(f, ty, "input_audio")) {
        /* Chat input_audio {data, format}: base64 WAV or MP3 */
        uint32_t ia = get(f, n, "input_audio"), fm = get(f, ia, "format");
        b->data = S(f, get(f, ia, "data"));
        if (!b->data.p || !(str_is(f, fm, "wav") || str_is(f, fm, "mp3"))) { *b = opaque(f, n); return QUIRE_OK; }
        b->type = QB_AUDIO;
        b->media_type = qstr_lit(str_is(f, fm, "wav") ? "audio/wav" : "audio/mpeg");
        return QUIRE_OK;
    }
    if (str_is(f, ty, "file") || str_is(f, ty, "input_file")) {
        b->type = QB_DOCUMENT;
        uint32_t fo = str_is(f, ty, "file") ? get(f, n, "file") : n;
        uint32_t fd = get(f, fo, "file_data"), fu = get(f, fo, "file_url");
        if (fd != QJ_NONE) {
            if (!data_url(f, fd, b) || qstr_present(b->url)) {
                /* bare base64 without a data: prefix: the media type is unknown */
                if (!is(f, fd, QJ_STRING)) return ferr(f, n, ptr, "file_data must be a string");
                memset(b, 0, sizeof *b);
                b->is_error = -1;
                b->type = QB_DOCUMENT;
                b->media_type = qstr_lit("application/pdf");
                b->data = qstr_node(f->d, fd);
            }
        } else if (fu != QJ_NONE) {
            b->url = S(f, fu);
        } else {
            *b = opaque(f, n); /* file_id references */
            return QUIRE_OK;
        }
        b->title = S(f, get(f, fo, "filename"));
        return QUIRE_OK;
    }
    *b = opaque(f, n);
    return QUIRE_OK;
}

static quire_status c_content(fctx *f, uint32_t ct, const char *ptr, qblock **out, uint32_t *nout, bool *is_string) {
    *is_string = false;
    if (is(f, ct, QJ_STRING)) {
        qblock *b = blocks_new(f, 1);
        if (!b) return q_oom(f->err);
        b->type = QB_TEXT;
        b->text = qstr_node(f->d, ct);
        *out = b;
        *nout = 1;
        *is_string = true;
        return QUIRE_OK;
    }
    if (ct == QJ_NONE || is(f, ct, QJ_NULL)) { *out = blocks_new(f, 1); *nout = 0; return *out ? QUIRE_OK : q_oom(f->err); }
    if (!is(f, ct, QJ_ARRAY)) return ferr(f, ct, ptr, "expected content string or array of parts");
    uint32_t k = len_of(f, ct);
    qblock *b = blocks_new(f, k);
    if (!b) return q_oom(f->err);
    uint32_t e = ct + 1;
    for (uint32_t j = 0; j < k; j++, e = qj_next(f->d, e)) {
        char pb[96];
        ptr_idx(pb, sizeof pb, ptr, j, NULL);
        quire_status st = c_part(f, e, &b[j], pb);
        if (st) return st;
    }
    *out = b;
    *nout = k;
    return QUIRE_OK;
}

static quire_status add_system(fctx *f, qblock *b, uint32_t n, bool is_string) {
    quire_transcript *t = f->t;
    qblock *all = blocks_new(f, t->nsystem + n);
    if (!all) return q_oom(f->err);
    if (t->nsystem) memcpy(all, t->system, (size_t)t->nsystem * sizeof(qblock));
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].type != QB_TEXT) continue;
        all[t->nsystem++] = b[i];
    }
    t->system = all;
    t->system_is_string = !t->has_system && is_string && t->nsystem == 1;
    if (t->has_system) t->system_is_string = false;
    t->has_system = true;
    return QUIRE_OK;
}

static quire_status function_tools(fctx *f, uint32_t tools, bool nested) {
    quire_transcript *t = f->t;
    uint32_t k = len_of(f, tools);
    if (!k) return QUIRE_OK;
    t->has_tools = true;
    t->tools = qarena_calloc(&t->ar, k, sizeof(qtool));
    if (!t->tools) return q_oom(f->err);
    uint32_t e = tools + 1;
    for (uint32_t i = 0; i < k; i++, e = qj_next(f->d, e)) {
        char p[64];
        ptr_idx(p, sizeof p, "/tools", i, NULL);
        uint32_t ty = get(f, e, "type");
        if (str_is(f, ty, "custom")) {
            /* a freeform tool: Responses {type, name, description?, format?}, Chat nests it in "custom" */
            uint32_t cu = nested ? get(f, e, "custom") : e;
            qtool *ct = &t->tools[t->ntools++];
            ct->kind = QTK_CUSTOM;
            ct->kind_given = true;
            ct->name = S(f, get(f, cu, "name"));
            if (!ct->name.p) return ferr(f, e, p, "custom tool without a name");
            ct->description = S(f, get(f, cu, "description"));
            uint32_t fm = get(f, cu, "format");
            if (fm != QJ_NONE) {
                if (nested && str_is(f, get(f, fm, "type"), "grammar"))
                    return ferr(f, fm, p, "a Chat custom tool with a grammar format does not convert (give it in the Responses form)");
                if (!is(f, fm, QJ_OBJECT)) return ferr(f, fm, p, "custom tool format must be an object");
                ct->format = qval_of(f->d, fm);
            }
            continue;
        }
        if (!nested && is(f, ty, QJ_STRING) && !str_is(f, ty, "function")) {
            /* a built-in Responses tool (web_search, file_search, ...): a provider tool, byte-exact */
            qtool *pt = &t->tools[t->ntools++];
            pt->kind = QTK_PROVIDER;
            pt->kind_given = true;
            pt->provider = qstr_lit(f->provider);
            pt->item = qval_of(f->d, e);
            continue;
        }
        if (!str_is(f, ty, "function")) return ferr(f, e, p, "only function, custom and built-in tools convert");
        uint32_t fn = nested ? get(f, e, "function") : e;
        qtool *tl = &t->tools[t->ntools++];
        tl->name = S(f, get(f, fn, "name"));
        if (!tl->name.p) return ferr(f, e, p, "function tool without a name");
        tl->description = S(f, get(f, fn, "description"));
        uint32_t params = get(f, fn, "parameters");
        char pp[96];
        snprintf(pp, sizeof pp, "%s%s/parameters", p, nested ? "/function" : "");
        quire_status fs = fn_schema(f, params, pp, &tl->input_schema);
        if (fs) return fs;
    }
    return QUIRE_OK;
}

static quire_status only_keys(fctx *f, uint32_t obj, const char *const *names, size_t nn, const char *ptr,
                              const char *what);

static quire_status from_openai_chat(fctx *f) {
    const qj_doc *d = f->d;
    if (!is(f, 0, QJ_OBJECT)) return ferr(f, 0, "", "expected a Chat Completions request object");
    quire_status st = function_tools(f, get(f, 0, "tools"), true);
    if (st) return st;
    uint32_t msgs = get(f, 0, "messages");
    if (!is(f, msgs, QJ_ARRAY)) return ferr(f, msgs == QJ_NONE ? 0 : msgs, "/messages", "expected an array of messages");
    bool started = false;
    uint32_t e = msgs + 1;
    for (uint32_t i = 0; i < len_of(f, msgs); i++, e = qj_next(d, e)) {
        char p[64], pc[80];
        ptr_idx(p, sizeof p, "/messages", i, NULL);
        ptr_idx(pc, sizeof pc, "/messages", i, "/content");
        uint32_t role = get(f, e, "role");
        /* name, refusal, audio and the legacy function_call have no
         * transcript form: refused by name rather than lost */
        static const char *const k_msg[] = {"role", "content", "tool_calls", "tool_call_id"};
        if ((st = only_keys(f, e, k_msg, sizeof k_msg / sizeof k_msg[0], p, "a Chat message"))) return st;
        qblock *b;
        uint32_t n;
        bool is_string;
        if ((st = c_content(f, get(f, e, "content"), pc, &b, &n, &is_string))) return st;
        if (str_is(f, role, "system") || str_is(f, role, "developer")) {
            if (!started) { if ((st = add_system(f, b, n, is_string))) return st; continue; }
            qmsg *m = push(f, str_is(f, role, "system") ? QR_SYSTEM : QR_DEVELOPER, b, n, i);
            if (!m) return q_oom(f->err);
            m->content_is_string = is_string;
            continue;
        }
        started = true;
        if (str_is(f, role, "user")) {
            qmsg *m = push(f, QR_USER, b, n, i);
            if (!m) return q_oom(f->err);
            m->content_is_string = is_string;
        } else if (str_is(f, role, "assistant")) {
            uint32_t tc = get(f, e, "tool_calls");
            uint32_t nc = len_of(f, tc);
            qblock *all = blocks_new(f, n + nc);
            if (!all) return q_oom(f->err);
            if (n) memcpy(all, b, (size_t)n * sizeof(qblock));
            uint32_t c = tc + 1;
            for (uint32_t j = 0; j < nc; j++, c = qj_next(d, c)) {
                char pt[96];
                snprintf(pt, sizeof pt, "%s/tool_calls/%u", p, j);
                qblock *x = &all[n + j];
                uint32_t fn = get(f, c, "function");
                x->type = QB_TOOL_CALL;
                x->id = S(f, get(f, c, "id"));
                x->name = S(f, get(f, fn, "name"));
                if (!x->id.p || !x->name.p) return ferr(f, c, pt, "tool call needs id and function.name");
                char pa[128];
                snprintf(pa, sizeof pa, "%s/function/arguments", pt);
                if ((st = parse_arguments(f, get(f, fn, "arguments"), pa, &x->input))) return st;
            }
            qmsg *m = push(f, QR_ASSISTANT, all, n + nc, i);
            if (!m) return q_oom(f->err);
            m->content_is_string = is_string && nc == 0;
        } else if (str_is(f, role, "tool")) {
            qblock *r = blocks_new(f, 1);
            if (!r) return q_oom(f->err);
            r->type = QB_TOOL_RESULT;
            r->tool_call_id = S(f, get(f, e, "tool_call_id"));
            if (!r->tool_call_id.p) return ferr(f, e, p, "tool message without tool_call_id");
            if (is_string) { r->content_is_string = true; r->content_text = b[0].text; }
            else { r->parts = b; r->nparts = n; }
            if (!push(f, QR_TOOL, r, 1, i)) return q_oom(f->err);
        } else {
            return ferr(f, role == QJ_NONE ? e : role, strcat(p, "/role"), "role must be system, developer, user, assistant or tool");
        }
    }
    return QUIRE_OK;
}

/* ======================================================================== */
/* OpenAI Responses                                                          */
/* ======================================================================== */

static quire_status from_openai_responses(fctx *f) {
    const qj_doc *d = f->d;
    quire_status st;
    if (!is(f, 0, QJ_OBJECT)) return ferr(f, 0, "", "expected a Responses request object");
    if ((st = function_tools(f, get(f, 0, "tools"), false))) return st;
    uint32_t ins = get(f, 0, "instructions");
    if (is(f, ins, QJ_STRING) && (st = qtr_decode_system(f->t, d, ins, "/instructions", f->err))) return st;
    uint32_t in = get(f, 0, "input");
    if (is(f, in, QJ_STRING)) {
        qblock *b = blocks_new(f, 1);
        if (!b) return q_oom(f->err);
        b->type = QB_TEXT;
        b->text = qstr_node(d, in);
        qmsg *m = push(f, QR_USER, b, 1, 0);
        if (!m) return q_oom(f->err);
        m->content_is_string = true;
        return QUIRE_OK;
    }
    if (!is(f, in, QJ_ARRAY)) return ferr(f, in == QJ_NONE ? 0 : in, "/input", "expected a string or an array of input items");
    bool started = false;
    qmsg *asst = NULL; /* the assistant message being built from consecutive output items */
    uint32_t n = len_of(f, in), e = in + 1;
    for (uint32_t i = 0; i < n; i++, e = qj_next(d, e)) {
        char p[64], pc[80];
        ptr_idx(p, sizeof p, "/input", i, NULL);
        ptr_idx(pc, sizeof pc, "/input", i, "/content");
        uint32_t ty = get(f, e, "type"), role = get(f, e, "role");
        bool message = (ty == QJ_NONE && role != QJ_NONE) || str_is(f, ty, "message");
        qblock one;
        memset(&one, 0, sizeof one);
        one.is_error = -1;
        if (message && !str_is(f, role, "assistant")) {
            asst = NULL;
            if (get(f, e, "phase") != QJ_NONE) {
                char pp2[80];
                ptr_idx(pp2, sizeof pp2, "/input", i, "/phase");
                return ferr(f, get(f, e, "phase"), pp2, "phase labels assistant messages only");
            }
            qblock *b;
            uint32_t nb;
            bool is_string;
            if ((st = c_content(f, get(f, e, "content"), pc, &b, &nb, &is_string))) return st;
            if (str_is(f, role, "system") || str_is(f, role, "developer")) {
                if (!started) { if ((st = add_system(f, b, nb, is_string))) return st; continue; }
                qmsg *m = push(f, str_is(f, role, "system") ? QR_SYSTEM : QR_DEVELOPER, b, nb, i);
                if (!m) return q_oom(f->err);
                m->content_is_string = is_string;
                continue;
            }
            if (!str_is(f, role, "user"))
                return ferr(f, role == QJ_NONE ? e : role, strcat(p, "/role"), "role must be user, assistant, system or developer");
            started = true;
            qmsg *m = push(f, QR_USER, b, nb, i);
            if (!m) return q_oom(f->err);
            m->content_is_string = is_string;
            continue;
        }
        started = true;
        if (str_is(f, ty, "function_call_output")) {
            asst = NULL;
            qblock *r = blocks_new(f, 1);
            if (!r) return q_oom(f->err);
            r->type = QB_TOOL_RESULT;
            r->tool_call_id = S(f, get(f, e, "call_id"));
            if (!r->tool_call_id.p) return ferr(f, e, p, "function_call_output without call_id");
            uint32_t out = get(f, e, "output");
            if (is(f, out, QJ_STRING)) { r->content_is_string = true; r->content_text = qstr_node(d, out); }
            else {
                qblock *b;
                uint32_t nb;
                bool is_string;
                char po[80];
                ptr_idx(po, sizeof po, "/input", i, "/output");
                if ((st = c_content(f, out, po, &b, &nb, &is_string))) return st;
                r->parts = b;
                r->nparts = nb;
            }
            /* consecutive outputs share one tool message */
            if (f->t->nmsgs && f->t->msgs[f->t->nmsgs - 1].role == QR_TOOL) {
                qmsg *tm = &f->t->msgs[f->t->nmsgs - 1];
                qblock *all = blocks_new(f, tm->nblocks + 1);
                if (!all) return q_oom(f->err);
                memcpy(all, tm->blocks, (size_t)tm->nblocks * sizeof(qblock));
                all[tm->nblocks] = *r;
                tm->blocks = all;
                tm->nblocks++;
            } else if (!push(f, QR_TOOL, r, 1, i)) {
                return q_oom(f->err);
            }
            continue;
        }
        /* assistant output: message text, function_call, reasoning and others */
        qblock *add = NULL;
        uint32_t nadd = 0;
        if (message) {
            bool is_string;
            if ((st = c_content(f, get(f, e, "content"), pc, &add, &nadd, &is_string))) return st;
            uint32_t ph = get(f, e, "phase");
            if (ph != QJ_NONE) {
                qval po;
                if ((st = item_option(f, ph, "phase", &po))) return st;
                for (uint32_t j = 0; j < nadd; j++) {
                    if (add[j].type != QB_TEXT) {
                        char pj[96];
                        ptr_idx(pj, sizeof pj, pc, j, NULL);
                        return ferr(f, e, pj, "an assistant message with a phase converts when it holds only text");
                    }
                    add[j].provider_options = po;
                }
            }
        } else if (str_is(f, ty, "function_call")) {
            one.type = QB_TOOL_CALL;
            one.id = S(f, get(f, e, "call_id"));
            one.name = S(f, get(f, e, "name"));
            if (!one.id.p || !one.name.p) return ferr(f, e, p, "function_call needs call_id and name");
            char pa[96];
            ptr_idx(pa, sizeof pa, "/input", i, "/arguments");
            if ((st = parse_arguments(f, get(f, e, "arguments"), pa, &one.input))) return st;
            uint32_t ns = get(f, e, "namespace");
            if (ns != QJ_NONE && (st = item_option(f, ns, "namespace", &one.provider_options))) return st;
            add = &one;
            nadd = 1;
        } else {
            one = opaque(f, e);
            add = &one;
            nadd = 1;
        }
        if (!asst) {
            asst = push(f, QR_ASSISTANT, blocks_new(f, 1), 0, i);
            if (!asst || !asst->blocks) return q_oom(f->err);
        }
        qblock *all = blocks_new(f, asst->nblocks + nadd);
        if (!all) return q_oom(f->err);
        if (asst->nblocks) memcpy(all, asst->blocks, (size_t)asst->nblocks * sizeof(qblock));
        memcpy(all + asst->nblocks, add, (size_t)nadd * sizeof(qblock));
        asst->blocks = all;
        asst->nblocks += nadd;
    }
    return QUIRE_OK;
}

/* ======================================================================== */
/* Gemini                                                                    */
/* ======================================================================== */

/* A field of obj outside names (the ones the reader maps): an error naming it,
 * so that nothing is dropped without a word. */
static quire_status only_keys(fctx *f, uint32_t obj, const char *const *names, size_t nn, const char *ptr,
                              const char *what) {
    if (!is(f, obj, QJ_OBJECT)) return QUIRE_OK;
    uint32_t k = obj + 1;
    for (uint32_t i = 0; i < qj_at(f->d, obj)->n; i++, k = qj_next(f->d, k + 1)) {
        bool ok = false;
        for (size_t j = 0; j < nn && !ok; j++) ok = qj_str_eq(f->d, k, names[j]);
        /* null or [] carries nothing (an answer message copied back as sent
         * by the API holds "refusal": null, "annotations": []) */
        if (ok || is(f, k + 1, QJ_NULL) || (is(f, k + 1, QJ_ARRAY) && len_of(f, k + 1) == 0)) continue;
        const qj_node *kn = qj_at(f->d, k);
        char p[200];
        snprintf(p, sizeof p, "%s/%.*s", ptr, (int)(kn->len < 60 ? kn->len : 60), kn->p);
        return ferr(f, k, p, "%s field \"%.*s\" has no transcript form and does not convert", what,
                    (int)(kn->len < 60 ? kn->len : 60), kn->p);
    }
    return QUIRE_OK;
}

/* functionResponse.response (a JSON object) and parts back into a toolResult:
 * {"output": text} is a text result, {"error": text} an error text result,
 * {"output": [texts]} (with parts) text blocks; {"error": object} an error
 * with that object as content; any other object is the result as a JSON
 * object. Images in parts (inlineData) follow the text. Anything
 * else in parts is refused: a tool result holds only text and images. */
static quire_status g_response(fctx *f, uint32_t v, qblock *b, const char *pp) {
    const qj_doc *d = f->d;
    char pr[128];
    snprintf(pr, sizeof pr, "%s/functionResponse/response", pp);
    static const char *const k_fr[] = {"id", "name", "response", "parts"};
    char pf[128];
    snprintf(pf, sizeof pf, "%s/functionResponse", pp);
    quire_status st = only_keys(f, v, k_fr, sizeof k_fr / sizeof k_fr[0], pf, "a functionResponse");
    if (st) return st;
    uint32_t r = get(f, v, "response");
    if (!is(f, r, QJ_OBJECT))
        return ferr(f, r == QJ_NONE ? v : r, pr, "functionResponse.response must be a JSON object");
    uint32_t one = qj_at(d, r)->n == 1 ? r + 2 : QJ_NONE; /* the value of a single-key object */
    bool is_out = one != QJ_NONE && qj_str_eq(d, r + 1, "output");
    bool is_err = one != QJ_NONE && qj_str_eq(d, r + 1, "error");
    uint32_t parts = get(f, v, "parts");
    uint32_t np = len_of(f, parts);
    if (parts != QJ_NONE && !is(f, parts, QJ_ARRAY))
        return ferr(f, parts, pr, "functionResponse.parts must be an array");
    uint32_t ntext = 0;
    bool texts = (is_out || is_err) && is(f, one, QJ_STRING);
    if ((is_out || is_err) && is(f, one, QJ_ARRAY)) {
        texts = true;
        uint32_t e = one + 1;
        for (uint32_t i = 0; i < len_of(f, one); i++, e = qj_next(d, e))
            if (!is(f, e, QJ_STRING)) texts = false;
        if (texts) ntext = len_of(f, one);
        if (texts && ntext == 1 && !np) texts = false; /* quire writes one text as a string: keep it exact */
        if (texts && ntext == 0 && !np) texts = false;
    } else if (texts) {
        ntext = 1;
    }
    if (is_err) b->is_error = 1;
    if (!texts) {
        /* a JSON object result ({"error": object}: an error with that object) */
        uint32_t obj = is_err && is(f, one, QJ_OBJECT) ? one : r;
        if (obj == r) b->is_error = -1;
        b->content_json = qval_of(d, obj);
        b->content_is_string = true;
        if (!qtr_json_text(f->t, b->content_json, &b->content_text)) return q_oom(f->err);
        if (np) {
            snprintf(pr, sizeof pr, "%s/functionResponse/parts", pp);
            return ferr(f, parts, pr, "images beside a JSON object response do not convert (a tool result with "
                                      "images holds text, given as {\"output\": ...})");
        }
        return QUIRE_OK;
    }
    if (!np && is(f, one, QJ_STRING)) {
        b->content_is_string = true;
        b->content_text = qstr_node(d, one);
        return QUIRE_OK;
    }
    b->parts = blocks_new(f, ntext + np);
    if (!b->parts) return q_oom(f->err);
    if (is(f, one, QJ_STRING)) {
        b->parts[b->nparts].type = QB_TEXT;
        b->parts[b->nparts++].text = qstr_node(d, one);
    } else {
        uint32_t e = one + 1;
        for (uint32_t i = 0; i < ntext; i++, e = qj_next(d, e)) {
            b->parts[b->nparts].type = QB_TEXT;
            b->parts[b->nparts++].text = qstr_node(d, e);
        }
    }
    uint32_t x = parts + 1;
    for (uint32_t i = 0; i < np; i++, x = qj_next(d, x)) {
        char pq[160];
        snprintf(pq, sizeof pq, "%s/functionResponse/parts/%u", pp, i);
        uint32_t m = get(f, x, "inlineData");
        qblock *im = &b->parts[b->nparts];
        im->media_type = S(f, get(f, m, "mimeType"));
        if (!is(f, m, QJ_OBJECT) || qj_at(d, x)->n != 1 || !im->media_type.p || im->media_type.len < 6 ||
            memcmp(im->media_type.p, "image/", 6) != 0)
            return ferr(f, x, pq, "a functionResponse part converts only as an image (inlineData with an image/* "
                                  "mimeType): a tool result holds only text and images");
        im->type = QB_IMAGE;
        im->data = S(f, get(f, m, "data"));
        if (!im->data.p) return ferr(f, m, pq, "inlineData without data");
        if (qj_at(d, m)->n != 2) return ferr(f, m, pq, "an image part takes only mimeType and data");
        b->nparts++;
    }
    return QUIRE_OK;
}

/* functionResponse v's response is {"output": []}: text-less, so images may follow. */
static bool empty_output(const fctx *f, uint32_t v) {
    uint32_t r = get(f, v, "response");
    return is(f, r, QJ_OBJECT) && qj_at(f->d, r)->n == 1 && qj_str_eq(f->d, r + 1, "output") && is(f, r + 2, QJ_ARRAY) &&
           qj_at(f->d, r + 2)->n == 0;
}

static quire_status from_gemini(fctx *f) {
    const qj_doc *d = f->d;
    quire_transcript *t = f->t;
    if (!is(f, 0, QJ_OBJECT)) return ferr(f, 0, "", "expected a generateContent request object");
    uint32_t si = get(f, 0, "systemInstruction");
    if (si == QJ_NONE) si = get(f, 0, "system_instruction");
    uint32_t sparts = get(f, si, "parts");
    if (is(f, sparts, QJ_ARRAY)) {
        uint32_t k = len_of(f, sparts);
        t->has_system = true;
        t->system = blocks_new(f, k);
        if (!t->system) return q_oom(f->err);
        uint32_t e = sparts + 1;
        for (uint32_t i = 0; i < k; i++, e = qj_next(d, e)) {
            qstr tx = S(f, get(f, e, "text"));
            if (!tx.p) return ferr(f, e, "/systemInstruction/parts", "system instruction parts must be text");
            t->system[t->nsystem].type = QB_TEXT;
            t->system[t->nsystem++].text = tx;
        }
    }
    uint32_t tools = get(f, 0, "tools");
    uint32_t ntools = 0, e = tools + 1;
    for (uint32_t i = 0; i < len_of(f, tools); i++, e = qj_next(d, e)) ntools += len_of(f, get(f, e, "functionDeclarations"));
    if (ntools) {
        t->has_tools = true;
        t->tools = qarena_calloc(&t->ar, ntools, sizeof(qtool));
        if (!t->tools) return q_oom(f->err);
        e = tools + 1;
        for (uint32_t i = 0; i < len_of(f, tools); i++, e = qj_next(d, e)) {
            uint32_t fd = get(f, e, "functionDeclarations"), x = fd + 1;
            for (uint32_t j = 0; j < len_of(f, fd); j++, x = qj_next(d, x)) {
                qtool *tl = &t->tools[t->ntools++];
                tl->name = S(f, get(f, x, "name"));
                tl->description = S(f, get(f, x, "description"));
                uint32_t ps = get(f, x, "parametersJsonSchema");
                const char *pn = "parametersJsonSchema";
                if (ps == QJ_NONE) { ps = get(f, x, "parameters"); pn = "parameters"; }
                char pp[128];
                snprintf(pp, sizeof pp, "/tools/%u/functionDeclarations/%u/%s", i, j, pn);
                quire_status fs = fn_schema(f, ps, pp, &tl->input_schema);
                if (fs) return fs;
            }
        }
    }
    uint32_t cs = get(f, 0, "contents");
    if (!is(f, cs, QJ_ARRAY)) return ferr(f, cs == QJ_NONE ? 0 : cs, "/contents", "expected an array of contents");
    /* pending calls of the last model content, for responses without ids */
    qstr pend_name[64], pend_id[64];
    bool pend_used[64];
    uint32_t npend = 0;
    e = cs + 1;
    for (uint32_t i = 0; i < len_of(f, cs); i++, e = qj_next(d, e)) {
        char p[64];
        ptr_idx(p, sizeof p, "/contents", i, NULL);
        bool model = str_is(f, get(f, e, "role"), "model");
        uint32_t parts = get(f, e, "parts");
        uint32_t k = len_of(f, parts);
        qblock *res = blocks_new(f, k), *rest = blocks_new(f, 2 * k); /* + one signature block per part */
        if (!res || !rest) return q_oom(f->err);
        uint32_t nres = 0, nrest = 0, x = parts + 1;
        if (model) npend = 0;
        int32_t att = -1; /* the result (in res) an image part right after it joins */
        for (uint32_t j = 0; j < k; j++, x = qj_next(d, x)) {
            char pp[96];
            snprintf(pp, sizeof pp, "%s/parts/%u", p, j);
            uint32_t v;
            qblock b;
            memset(&b, 0, sizeof b);
            b.is_error = -1;
            if ((v = get(f, x, "text")) != QJ_NONE) {
                if (is(f, get(f, x, "thought"), QJ_TRUE)) {
                    b.type = QB_THINKING;
                    b.text = S(f, v);
                    b.signature = S(f, get(f, x, "thoughtSignature"));
                    if (b.signature.p) b.provider = qstr_lit("gemini");
                } else {
                    b.type = QB_TEXT;
                    b.text = S(f, v);
                }
            } else if ((v = get(f, x, "inlineData")) != QJ_NONE || (v = get(f, x, "fileData")) != QJ_NONE) {
                b.media_type = S(f, get(f, v, "mimeType"));
                b.data = S(f, get(f, v, "data"));
                b.url = S(f, get(f, v, "fileUri"));
                b.type = qstr_present(b.media_type) && b.media_type.len >= 6 && memcmp(b.media_type.p, "image/", 6) == 0
                             ? QB_IMAGE : QB_DOCUMENT;
                if (model) b = opaque(f, x);
            } else if ((v = get(f, x, "functionCall")) != QJ_NONE && model) {
                static const char *const k_fc[] = {"id", "name", "args"};
                char pf[128];
                snprintf(pf, sizeof pf, "%s/functionCall", pp);
                quire_status fs = only_keys(f, v, k_fc, sizeof k_fc / sizeof k_fc[0], pf, "a functionCall");
                if (fs) return fs;
                b.type = QB_TOOL_CALL;
                b.name = S(f, get(f, v, "name"));
                b.id = S(f, get(f, v, "id"));
                if (!b.id.p) {
                    char *id = qarena_alloc(&t->ar, 32);
                    if (!id) return q_oom(f->err);
                    int l = snprintf(id, 32, "call_%u_%u", i, j);
                    b.id = qstr_plain(id, (size_t)l);
                }
                uint32_t args = get(f, v, "args");
                b.input = is(f, args, QJ_OBJECT) ? qval_of(d, args) : literal(f, "{}", 2);
                if (npend < 64) { pend_name[npend] = b.name; pend_id[npend] = b.id; pend_used[npend] = false; npend++; }
            } else if ((v = get(f, x, "functionResponse")) != QJ_NONE && !model) {
                b.type = QB_TOOL_RESULT;
                b.tool_call_id = S(f, get(f, v, "id"));
                qstr name = S(f, get(f, v, "name"));
                if (!b.tool_call_id.p) {
                    size_t nl = 0;
                    const char *nm = qstr_plain_bytes(name, &t->ar, &nl);
                    for (uint32_t q = 0; q < npend && nm; q++) {
                        size_t pl = 0;
                        const char *pn = qstr_plain_bytes(pend_name[q], &t->ar, &pl);
                        if (!pend_used[q] && pn && pl == nl && memcmp(pn, nm, nl) == 0) {
                            b.tool_call_id = pend_id[q];
                            pend_used[q] = true;
                            break;
                        }
                    }
                    if (!b.tool_call_id.p) return ferr(f, v, pp, "functionResponse answers no call of the previous model content");
                }
                quire_status rs = g_response(f, v, &b, pp);
                if (rs) return rs;
            } else {
                b = opaque(f, x);
            }
            if (model && b.type != QB_THINKING && b.type != QB_OPAQUE && get(f, x, "thoughtSignature") != QJ_NONE) {
                /* a signed text or call: the signature rides on an empty thinking block before it */
                qblock th;
                memset(&th, 0, sizeof th);
                th.is_error = -1;
                th.type = QB_THINKING;
                th.text = qstr_lit("");
                th.signature = S(f, get(f, x, "thoughtSignature"));
                th.provider = qstr_lit("gemini");
                rest[nrest++] = th;
            }
            if (b.type == QB_IMAGE && !model && att >= 0 && qstr_present(b.data) && qj_at(d, x)->n == 1) {
                /* an image right after a functionResponse (or after such an
                 * image): what the tool returned, as Gemini 2.x requests carry
                 * it (Gemini CLI's read_file of an image); it joins that result */
                qblock *r = &res[att];
                bool none = qval_present(r->content_json); /* {"output": []}: no text */
                uint32_t keep = none ? 0u : r->content_is_string ? 1u : r->nparts;
                qblock *np = blocks_new(f, keep + 1);
                if (!np) return q_oom(f->err);
                if (none) {
                    r->content_json = (qval){0};
                    r->is_error = -1;
                } else if (r->content_is_string) {
                    np[0].type = QB_TEXT;
                    np[0].text = r->content_text;
                } else {
                    for (uint32_t q = 0; q < r->nparts; q++) np[q] = r->parts[q];
                }
                np[keep] = b;
                r->parts = np;
                r->nparts = keep + 1;
                r->content_is_string = false;
                r->content_text = (qstr){0};
                continue;
            }
            att = b.type == QB_TOOL_RESULT && (!qval_present(b.content_json) || empty_output(f, v)) ? (int32_t)nres : -1;
            if (b.type == QB_TOOL_RESULT) res[nres++] = b;
            else rest[nrest++] = b;
        }
        if (nres && !push(f, QR_TOOL, res, nres, i)) return q_oom(f->err);
        if ((nrest || !nres) && !push(f, model ? QR_ASSISTANT : QR_USER, rest, nrest, i)) return q_oom(f->err);
    }
    return QUIRE_OK;
}

/* ======================================================================== */

quire_status quire_transcript_parse_dialect(const char *dialect, const char *json, size_t len,
                                            const quire_options *opts, quire_transcript **out, quire_error *err) {
    *out = NULL;
    if (!dialect) return q_err(err, QUIRE_E_INVALID, "no input dialect given");
    quire_status (*fn)(fctx *) = NULL;
    const char *prov = NULL;
    if (strcmp(dialect, "anthropic") == 0 || strcmp(dialect, "anthropic_messages") == 0) { fn = from_anthropic; prov = "anthropic"; }
    else if (strcmp(dialect, "openai_chat") == 0 || strcmp(dialect, "openai") == 0) { fn = from_openai_chat; prov = "openai"; }
    else if (strcmp(dialect, "openai_responses") == 0) { fn = from_openai_responses; prov = "openai_responses"; }
    else if (strcmp(dialect, "gemini") == 0) { fn = from_gemini; prov = "gemini"; }
    else if (strcmp(dialect, "quire") == 0) return quire_transcript_parse(json, len, opts, out, err);
    else return q_err(err, QUIRE_E_INVALID,
                      "unknown input dialect \"%s\" (expected anthropic, openai_chat, openai_responses or gemini)", dialect);
    quire_transcript *t = qtr_new(q_alloc_of(opts));
    if (!t) return q_oom(err);
    bool borrow = opts && (opts->flags & QUIRE_PARSE_BORROW);
    qj_doc *d = qtr_parse_doc(t, json, len, borrow, opts, err);
    if (!d) { quire_transcript_free(t); return err ? err->code : QUIRE_E_JSON; }
    fctx f = {t, d, opts, err, prov};
    quire_status st = fn(&f);
    if (!st) {
        quire_limits l = q_limits(opts);
        if (t->nmsgs > l.max_messages)
            st = q_err_at(err, QUIRE_E_LIMIT, 0, "", "%u messages exceed the limit of %u", t->nmsgs, l.max_messages);
    }
    if (st) { quire_transcript_free(t); return st; }
    *out = t;
    return QUIRE_OK;
}

/* ======================================================================== */
/* Request parameters of an input dialect (quire_params_from_dialect)       */
/* ======================================================================== */

/* What a request body holds besides the conversation becomes quire's
 * provider-neutral parameters (docs/params.md) where one says the same
 * thing, and otherwise a field of providerOptions for the target when it
 * renders the source's dialect. Values are copied byte for byte. */
typedef struct pctx {
    const qj_doc *d;
    qw *w;                  /* the params object being written */
    uint32_t extra[64];     /* top-level members with no neutral form (key nodes) */
    uint32_t nextra;
    uint32_t gextra[32];    /* Gemini: generationConfig members with no neutral form */
    uint32_t ngextra;
    uint32_t gconf;         /* Gemini: the generationConfig object */
    bool overflow;
    bool tools;             /* the body has tools: a tool choice needs them */
    uint32_t member;        /* the body member being read (key node) */
    bool in_gconf;          /* ... inside generationConfig */
    struct psrc {           /* each neutral parameter written: the member it came from */
        const char *name;
        uint32_t key;
        bool in_gconf, verbatim;
    } src[16];
    uint32_t nsrc;
} pctx;

#define K_toolChoice k_neutral[6]
#define K_parallelToolCalls k_neutral[7]
#define K_responseFormat k_neutral[8]
#define K_reasoning k_neutral[9]
static const char *const k_neutral[] = {"maxTokens", "temperature", "topP", "topK", "stop", "seed", "toolChoice",
                                        "parallelToolCalls", "responseFormat", "reasoning", "stream", "user"};

static bool pkey_is(const qj_doc *d, uint32_t key, const char *s) {
    size_t n = strlen(s);
    const qj_node *k = qj_at(d, key);
    return !(k->flags & QJ_F_ESC) && k->len == n && memcmp(k->p, s, n) == 0;
}
static void p_extra(pctx *p, uint32_t key) {
    if (p->nextra < sizeof p->extra / sizeof p->extra[0]) p->extra[p->nextra++] = key;
    else p->overflow = true;
}
/* A key of the params object; a top-level one records where it came from. */
static void p_key(pctx *p, const char *name, bool verbatim) {
    for (size_t i = 0; i < sizeof k_neutral / sizeof k_neutral[0]; i++)
        if (strcmp(name, k_neutral[i]) == 0 && p->nsrc < sizeof p->src / sizeof p->src[0])
            p->src[p->nsrc++] = (struct psrc){name, p->member, p->in_gconf, verbatim};
    qw_key(p->w, name);
}
static void p_copy(pctx *p, const char *name, uint32_t v) {
    p_key(p, name, true);
    qw_node(p->w, p->d, v);
}
/* Nested members of a converted parameter. */
static void p_sub(pctx *p, const char *name, uint32_t v) {
    qw_key(p->w, name);
    qw_node(p->w, p->d, v);
}
/* An object whose members are exactly those named (each present). */
static bool only_members(const qj_doc *d, uint32_t obj, const char *const *names, size_t n) {
    if (qj_type_of(d, obj) != QJ_OBJECT || qj_at(d, obj)->n != n || qj_find_dup_key(d, obj) != QJ_NONE) return false;
    for (size_t i = 0; i < n; i++)
        if (qj_get(d, obj, names[i]) == QJ_NONE) return false;
    return true;
}
static bool str_eq(const qj_doc *d, uint32_t n, const char *s) {
    return n != QJ_NONE && qj_type_of(d, n) == QJ_STRING && qj_str_eq(d, n, s);
}
static void tool_name_choice(pctx *p, uint32_t name) {
    p_key(p, K_toolChoice, false);
    qw_obj_begin(p->w);
    p_sub(p, "tool", name);
    qw_obj_end(p->w);
}

/* One top-level member (key node k, value v) of an Anthropic Messages body. */
static void pm_anthropic(pctx *p, uint32_t k, uint32_t v) {
    const qj_doc *d = p->d;
    static const char *const n_think[] = {"type", "budget_tokens"}, *const n_user[] = {"user_id"};
    if (pkey_is(d, k, "max_tokens")) p_copy(p, "maxTokens", v);
    else if (pkey_is(d, k, "temperature")) p_copy(p, "temperature", v);
    else if (pkey_is(d, k, "top_p")) p_copy(p, "topP", v);
    else if (pkey_is(d, k, "top_k")) p_copy(p, "topK", v);
    else if (pkey_is(d, k, "stop_sequences")) p_copy(p, "stop", v);
    else if (pkey_is(d, k, "stream")) p_copy(p, "stream", v);
    else if (pkey_is(d, k, "metadata") && only_members(d, v, n_user, 1)) {
        p_key(p, "user", false);
        qw_node(p->w, d, qj_get(d, v, "user_id"));
    }
    else if (pkey_is(d, k, "thinking") && only_members(d, v, n_think, 2) && str_eq(d, qj_get(d, v, "type"), "enabled")) {
        p_key(p, K_reasoning, false);
        qw_obj_begin(p->w);
        p_sub(p, "budgetTokens", qj_get(d, v, "budget_tokens"));
        qw_obj_end(p->w);
    } else if (pkey_is(d, k, "tool_choice") && qj_type_of(d, v) == QJ_OBJECT && p->tools) {
        /* {type, name?, disable_parallel_tool_use?} */
        uint32_t ty = qj_get(d, v, "type"), dp = qj_get(d, v, "disable_parallel_tool_use");
        uint32_t nm = qj_get(d, v, "name");
        uint32_t want = 1u + (nm != QJ_NONE ? 1u : 0u) + (dp != QJ_NONE ? 1u : 0u);
        bool simple = qj_at(d, v)->n == want && qj_find_dup_key(d, v) == QJ_NONE &&
                      (dp == QJ_NONE || qj_type_of(d, dp) == QJ_TRUE || qj_type_of(d, dp) == QJ_FALSE);
        if (simple && nm == QJ_NONE && str_eq(d, ty, "auto")) { p_key(p, K_toolChoice, false); qw_str(p->w, "auto", 4); }
        else if (simple && nm == QJ_NONE && str_eq(d, ty, "any")) { p_key(p, K_toolChoice, false); qw_str(p->w, "required", 8); }
        else if (simple && nm == QJ_NONE && str_eq(d, ty, "none")) { p_key(p, K_toolChoice, false); qw_str(p->w, "none", 4); }
        else if (simple && nm != QJ_NONE && str_eq(d, ty, "tool")) tool_name_choice(p, nm);
        else { p_extra(p, k); return; }
        if (dp != QJ_NONE) {
            p_key(p, K_parallelToolCalls, false);
            qw_bool(p->w, qj_type_of(d, dp) == QJ_FALSE);
        }
    } else p_extra(p, k);
}

/* Chat and Responses text formats: {"type": "text"|"json_object"} or a JSON
 * schema ({name, schema, strict?} in sch). */
static bool p_format(pctx *p, uint32_t fmt, uint32_t sch) {
    const qj_doc *d = p->d;
    uint32_t ty = qj_get(d, fmt, "type");
    if (qj_at(d, fmt)->n == 1 && str_eq(d, ty, "text")) { p_key(p, K_responseFormat, false); qw_str(p->w, "text", 4); return true; }
    if (qj_at(d, fmt)->n == 1 && str_eq(d, ty, "json_object")) { p_key(p, K_responseFormat, false); qw_str(p->w, "json", 4); return true; }
    if (!str_eq(d, ty, "json_schema") || sch == QJ_NONE || qj_type_of(d, sch) != QJ_OBJECT) return false;
    static const char *const n2[] = {"name", "schema"}, *const n3[] = {"name", "schema", "strict"};
    bool strict = qj_get(d, sch, "strict") != QJ_NONE;
    uint32_t skip = sch == fmt ? 1 : 0; /* Responses: "type" sits beside them */
    if (qj_at(d, sch)->n != (strict ? 3u : 2u) + skip || qj_find_dup_key(d, sch) != QJ_NONE) return false;
    for (size_t i = 0; i < (strict ? 3u : 2u); i++)
        if (qj_get(d, sch, strict ? n3[i] : n2[i]) == QJ_NONE) return false;
    p_key(p, K_responseFormat, false);
    qw_obj_begin(p->w);
    qw_key(p->w, "type");
    qw_str(p->w, "jsonSchema", 10);
    p_sub(p, "name", qj_get(d, sch, "name"));
    p_sub(p, "schema", qj_get(d, sch, "schema"));
    if (strict) p_sub(p, "strict", qj_get(d, sch, "strict"));
    qw_obj_end(p->w);
    return true;
}

static bool p_choice_string(pctx *p, uint32_t v) {
    const qj_doc *d = p->d;
    if (str_eq(d, v, "auto") || str_eq(d, v, "none") || str_eq(d, v, "required")) { p_copy(p, "toolChoice", v); return true; }
    return false;
}

static void pm_openai_chat(pctx *p, uint32_t k, uint32_t v, bool have_mct) {
    const qj_doc *d = p->d;
    static const char *const n_fn[] = {"type", "function"}, *const n_name[] = {"name"}, *const n_rf[] = {"type", "json_schema"};
    if (pkey_is(d, k, "max_completion_tokens")) p_copy(p, "maxTokens", v);
    else if (pkey_is(d, k, "max_tokens") && !have_mct) p_copy(p, "maxTokens", v);
    else if (pkey_is(d, k, "temperature")) p_copy(p, "temperature", v);
    else if (pkey_is(d, k, "top_p")) p_copy(p, "topP", v);
    else if (pkey_is(d, k, "stop")) p_copy(p, "stop", v);
    else if (pkey_is(d, k, "seed")) p_copy(p, "seed", v);
    else if (pkey_is(d, k, "stream")) p_copy(p, "stream", v);
    else if (pkey_is(d, k, "user")) p_copy(p, "user", v);
    else if (pkey_is(d, k, "parallel_tool_calls") && p->tools) p_copy(p, "parallelToolCalls", v);
    else if (pkey_is(d, k, "reasoning_effort")) {
        p_key(p, K_reasoning, false);
        qw_obj_begin(p->w);
        p_sub(p, "effort", v);
        qw_obj_end(p->w);
    } else if (pkey_is(d, k, "tool_choice") && p->tools) {
        if (p_choice_string(p, v)) return;
        uint32_t fn = qj_type_of(d, v) == QJ_OBJECT ? qj_get(d, v, "function") : QJ_NONE;
        if (only_members(d, v, n_fn, 2) && str_eq(d, qj_get(d, v, "type"), "function") && only_members(d, fn, n_name, 1))
            tool_name_choice(p, qj_get(d, fn, "name"));
        else p_extra(p, k);
    } else if (pkey_is(d, k, "response_format")) {
        bool ok = qj_type_of(d, v) == QJ_OBJECT && qj_find_dup_key(d, v) == QJ_NONE &&
                  (qj_at(d, v)->n == 1 || only_members(d, v, n_rf, 2)) &&
                  p_format(p, v, qj_type_of(d, v) == QJ_OBJECT ? qj_get(d, v, "json_schema") : QJ_NONE);
        if (!ok) p_extra(p, k);
    } else p_extra(p, k);
}

static void pm_openai_responses(pctx *p, uint32_t k, uint32_t v) {
    const qj_doc *d = p->d;
    static const char *const n_fn[] = {"type", "name"}, *const n_eff[] = {"effort"}, *const n_fmt[] = {"format"};
    if (pkey_is(d, k, "max_output_tokens")) p_copy(p, "maxTokens", v);
    else if (pkey_is(d, k, "temperature")) p_copy(p, "temperature", v);
    else if (pkey_is(d, k, "top_p")) p_copy(p, "topP", v);
    else if (pkey_is(d, k, "stream")) p_copy(p, "stream", v);
    else if (pkey_is(d, k, "user")) p_copy(p, "user", v);
    else if (pkey_is(d, k, "parallel_tool_calls") && p->tools) p_copy(p, "parallelToolCalls", v);
    else if (pkey_is(d, k, "reasoning") && only_members(d, v, n_eff, 1)) {
        p_key(p, K_reasoning, false);
        qw_obj_begin(p->w);
        p_sub(p, "effort", qj_get(d, v, "effort"));
        qw_obj_end(p->w);
    } else if (pkey_is(d, k, "tool_choice") && p->tools) {
        if (p_choice_string(p, v)) return;
        if (only_members(d, v, n_fn, 2) && str_eq(d, qj_get(d, v, "type"), "function")) tool_name_choice(p, qj_get(d, v, "name"));
        else p_extra(p, k);
    } else if (pkey_is(d, k, "text")) {
        uint32_t f = only_members(d, v, n_fmt, 1) ? qj_get(d, v, "format") : QJ_NONE;
        if (!(f != QJ_NONE && qj_type_of(d, f) == QJ_OBJECT && qj_find_dup_key(d, f) == QJ_NONE && p_format(p, f, f)))
            p_extra(p, k);
    } else p_extra(p, k);
}

static bool positive_int(const qj_doc *d, uint32_t n) {
    if (n == QJ_NONE || qj_type_of(d, n) != QJ_NUMBER) return false;
    const qj_node *x = qj_at(d, n);
    for (uint32_t i = 0; i < x->len; i++)
        if (x->p[i] < '0' || x->p[i] > '9') return false;
    return x->len > 0 && x->p[0] != '0';
}

static void pm_gemini_config(pctx *p, uint32_t g) {
    const qj_doc *d = p->d;
    static const char *const n_budget[] = {"thinkingBudget"};
    bool schema = qj_get(d, g, "responseSchema") != QJ_NONE || qj_get(d, g, "responseJsonSchema") != QJ_NONE;
    uint32_t k = g + 1;
    for (uint32_t m = 0; m < qj_at(d, g)->n; m++, k = qj_next(d, k + 1)) {
        uint32_t v = k + 1;
        p->member = k;
        p->in_gconf = true;
        if (pkey_is(d, k, "maxOutputTokens")) p_copy(p, "maxTokens", v);
        else if (pkey_is(d, k, "temperature")) p_copy(p, "temperature", v);
        else if (pkey_is(d, k, "topP")) p_copy(p, "topP", v);
        else if (pkey_is(d, k, "topK")) p_copy(p, "topK", v);
        else if (pkey_is(d, k, "stopSequences")) p_copy(p, "stop", v);
        else if (pkey_is(d, k, "seed")) p_copy(p, "seed", v);
        else if (pkey_is(d, k, "responseMimeType") && !schema &&
                 (str_eq(d, v, "application/json") || str_eq(d, v, "text/plain"))) {
            p_key(p, "responseFormat", false);
            if (str_eq(d, v, "text/plain")) qw_str(p->w, "text", 4);
            else qw_str(p->w, "json", 4);
        } else if (pkey_is(d, k, "thinkingConfig") && only_members(d, v, n_budget, 1) &&
                 positive_int(d, qj_get(d, v, "thinkingBudget"))) {
            /* 0 (thinking off) and -1 (dynamic) have no neutral form: kept as given */
            p_key(p, K_reasoning, false);
            qw_obj_begin(p->w);
            p_sub(p, "budgetTokens", qj_get(d, v, "thinkingBudget"));
            qw_obj_end(p->w);
        } else if (p->ngextra < sizeof p->gextra / sizeof p->gextra[0]) p->gextra[p->ngextra++] = k;
        else p->overflow = true;
    }
}

static void pm_gemini(pctx *p, uint32_t k, uint32_t v) {
    const qj_doc *d = p->d;
    static const char *const n_fcc[] = {"functionCallingConfig"}, *const n_mode[] = {"mode"},
                             *const n_any[] = {"mode", "allowedFunctionNames"};
    if (pkey_is(d, k, "generationConfig") && qj_type_of(d, v) == QJ_OBJECT && qj_find_dup_key(d, v) == QJ_NONE) {
        p->gconf = v;
        pm_gemini_config(p, v);
        p->member = k;
        p->in_gconf = false;
    } else if (pkey_is(d, k, "toolConfig") && only_members(d, v, n_fcc, 1) && p->tools) {
        uint32_t f = qj_get(d, v, "functionCallingConfig"), mode = qj_get(d, f, "mode");
        uint32_t names = qj_type_of(d, f) == QJ_OBJECT ? qj_get(d, f, "allowedFunctionNames") : QJ_NONE;
        if (only_members(d, f, n_mode, 1) && str_eq(d, mode, "AUTO")) { p_key(p, K_toolChoice, false); qw_str(p->w, "auto", 4); }
        else if (only_members(d, f, n_mode, 1) && str_eq(d, mode, "ANY")) { p_key(p, K_toolChoice, false); qw_str(p->w, "required", 8); }
        else if (only_members(d, f, n_mode, 1) && str_eq(d, mode, "NONE")) { p_key(p, K_toolChoice, false); qw_str(p->w, "none", 4); }
        else if (only_members(d, f, n_any, 2) && str_eq(d, mode, "ANY") && qj_type_of(d, names) == QJ_ARRAY &&
                 qj_at(d, names)->n == 1 && qj_type_of(d, names + 1) == QJ_STRING)
            tool_name_choice(p, names + 1);
        else p_extra(p, k);
    } else p_extra(p, k);
}

/* The conversation's own members of each input dialect, and the model. */
static bool conversation_member(qdialect src, const qj_doc *d, uint32_t k) {
    if (pkey_is(d, k, "model")) return true;
    if (pkey_is(d, k, "tools")) return true;
    if (src == QD_ANTHROPIC_MESSAGES) return pkey_is(d, k, "messages") || pkey_is(d, k, "system");
    if (src == QD_OPENAI_CHAT) return pkey_is(d, k, "messages");
    if (src == QD_OPENAI_RESPONSES) return pkey_is(d, k, "input") || pkey_is(d, k, "instructions");
    return pkey_is(d, k, "contents") || pkey_is(d, k, "systemInstruction"); /* QD_GEMINI */
}

quire_status quire_params_from_dialect(const char *dialect, const char *json, size_t len,
                                       const quire_render_options *ro, const quire_options *opts,
                                       quire_bytes *params, quire_bytes *events, quire_error *err) {
    memset(params, 0, sizeof *params);
    if (events) memset(events, 0, sizeof *events);
    if (!dialect) return q_err(err, QUIRE_E_INVALID, "no input dialect given");
    qdialect src;
    if (strcmp(dialect, "anthropic") == 0 || strcmp(dialect, "anthropic_messages") == 0) src = QD_ANTHROPIC_MESSAGES;
    else if (strcmp(dialect, "openai_chat") == 0 || strcmp(dialect, "openai") == 0) src = QD_OPENAI_CHAT;
    else if (strcmp(dialect, "openai_responses") == 0) src = QD_OPENAI_RESPONSES;
    else if (strcmp(dialect, "gemini") == 0) src = QD_GEMINI;
    else if (strcmp(dialect, "quire") == 0) return QUIRE_OK; /* a transcript carries no parameters */
    else return q_err(err, QUIRE_E_INVALID,
                      "unknown input dialect \"%s\" (expected anthropic, openai_chat, openai_responses or gemini)", dialect);
    if (!ro || !ro->provider) return q_err(err, QUIRE_E_INVALID, "no target provider given");
    qcaps caps;
    const char *model = NULL;
    quire_status st = qcaps_target(ro->caps, ro->provider, ro->model, &model, &caps, NULL, NULL, err);
    if (st) return st;
    /* Chat-shaped targets (Mistral, Ollama) read the Chat fields only where
     * their own dialect names them the same: same dialect only */
    bool same = caps.dialect == src;
    const quire_allocator *a = q_alloc_of(opts);
    quire_limits lim = q_limits(opts);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    qj_doc d;
    st = qj_parse(&d, json, len, &jo, a, err);
    if (st) return st;
    qbuf out, ev;
    qbuf_init(&out, a);
    qbuf_init(&ev, a);
    qw w;
    qw_init(&w, &out, false);
    pctx p;
    memset(&p, 0, sizeof p);
    p.d = &d;
    p.w = &w;
    p.gconf = QJ_NONE;
    do {
    if (qj_type_of(&d, 0) != QJ_OBJECT) break; /* the transcript reader reports it */
    qw_obj_begin(&w);
    bool have_mct = qj_get(&d, 0, "max_completion_tokens") != QJ_NONE;
    uint32_t tl = qj_get(&d, 0, "tools");
    p.tools = tl != QJ_NONE && qj_type_of(&d, tl) == QJ_ARRAY && qj_at(&d, tl)->n > 0;
    uint32_t k = 1;
    for (uint32_t m = 0; m < qj_at(&d, 0)->n; m++, k = qj_next(&d, k + 1)) {
        if (conversation_member(src, &d, k)) continue;
        p.member = k;
        if (src == QD_ANTHROPIC_MESSAGES) pm_anthropic(&p, k, k + 1);
        else if (src == QD_OPENAI_CHAT) pm_openai_chat(&p, k, k + 1, have_mct);
        else if (src == QD_OPENAI_RESPONSES) pm_openai_responses(&p, k, k + 1);
        else pm_gemini(&p, k, k + 1);
    }
    if (p.overflow) {
        st = q_err_at(err, QUIRE_E_LIMIT, 0, "", "more request fields than quire carries (64 top-level, 32 in generationConfig)");
        break;
    }
    if (p.nextra || p.ngextra) {
        if (!same) {
            /* the first field no target but the source's dialect reads */
            uint32_t key = p.nextra ? p.extra[0] : p.gextra[0];
            if (p.nextra && p.ngextra && p.gextra[0] < key) key = p.gextra[0];
            char ptr[160] = "";
            if (p.ngextra && key == p.gextra[0]) q_ptr_push_key(ptr, sizeof ptr, "generationConfig", 16);
            q_ptr_push_key(ptr, sizeof ptr, qj_at(&d, key)->p, qj_at(&d, key)->len);
            if (!ro->lossy) {
                st = q_err_at(err, QUIRE_E_UNSUPPORTED, qj_offset(&d, key), ptr,
                              "a request field with no provider-neutral parameter is carried only to its own dialect, "
                              "not to %s (%s) (use --lossy to drop it with an event)",
                              qdialect_name(caps.dialect), model ? model : ro->provider);
                q_err_locate(err, json, len);
                break;
            }
            /* --lossy: each one dropped with an event */
            uint32_t all[96], n = 0;
            for (uint32_t i = 0; i < p.nextra; i++) all[n++] = p.extra[i];
            for (uint32_t i = 0; i < p.ngextra; i++) all[n++] = p.gextra[i];
            for (uint32_t i = 0; i < n; i++) {
                char one[160] = "";
                if (i >= p.nextra) q_ptr_push_key(one, sizeof one, "generationConfig", 16);
                q_ptr_push_key(one, sizeof one, qj_at(&d, all[i])->p, qj_at(&d, all[i])->len);
                qw ew;
                qw_init(&ew, &ev, false);
                qw_obj_begin(&ew);
                qw_key(&ew, "sessionUpdate");
                qw_str(&ew, "request_adjusted", 16);
                qw_key(&ew, "change");
                qw_str(&ew, "parameter_dropped", 17);
                qw_key(&ew, "parameter");
                qw_str(&ew, one, strlen(one));
                char detail[320];
                snprintf(detail, sizeof detail,
                         "request field %s has no provider-neutral parameter and is not carried to %s (%s)", one,
                         qdialect_name(caps.dialect), model ? model : ro->provider);
                qw_key(&ew, "detail");
                qw_str(&ew, detail, strlen(detail));
                qw_obj_end(&ew);
                qw_dispose(&ew);
                qbuf_putc(&ev, '\n');
            }
        } else {
            qw_key(&w, "providerOptions");
            qw_obj_begin(&w);
            qw_keyn(&w, ro->provider, strlen(ro->provider));
            qw_obj_begin(&w);
            for (uint32_t i = 0; i < p.nextra; i++) {
                qw_key_esc(&w, qj_at(&d, p.extra[i])->p, qj_at(&d, p.extra[i])->len);
                qw_node(&w, &d, p.extra[i] + 1);
            }
            if (p.ngextra) {
                qw_key(&w, "generationConfig");
                qw_obj_begin(&w);
                for (uint32_t i = 0; i < p.ngextra; i++) {
                    qw_key_esc(&w, qj_at(&d, p.gextra[i])->p, qj_at(&d, p.gextra[i])->len);
                    qw_node(&w, &d, p.gextra[i] + 1);
                }
                qw_obj_end(&w);
            }
            qw_obj_end(&w);
            qw_obj_end(&w);
        }
    }
    qw_obj_end(&w);
    if (!out.oom && out.len > 2) {
        /* the same checks as a --params object, reported at the body's field */
        quire_error pe;
        if (quire_params_check(out.data, out.len, &pe) != QUIRE_OK) {
            const char *rest = pe.pointer[0] == '/' ? strchr(pe.pointer + 1, '/') : NULL;
            size_t first = rest ? (size_t)(rest - pe.pointer - 1) : strlen(pe.pointer) - (pe.pointer[0] == '/');
            const struct psrc *ps = NULL;
            for (uint32_t i = 0; i < p.nsrc && !ps; i++)
                if (strlen(p.src[i].name) == first && memcmp(p.src[i].name, pe.pointer + 1, first) == 0) ps = &p.src[i];
            char ptr[256] = "";
            size_t off = 0;
            if (ps) {
                if (ps->in_gconf) q_ptr_push_key(ptr, sizeof ptr, "generationConfig", 16);
                q_ptr_push_key(ptr, sizeof ptr, qj_at(&d, ps->key)->p, qj_at(&d, ps->key)->len);
                if (ps->verbatim && rest && strlen(ptr) + strlen(rest) < sizeof ptr) strcat(ptr, rest);
                off = qj_offset(&d, ps->key + 1);
            }
            st = q_err_at(err, QUIRE_E_SCHEMA, off, ptr, "as a request parameter: %s", pe.message);
            if (ps) q_err_locate(err, json, len);
        }
    }
    } while (0);
    qw_dispose(&w);
    qj_doc_free(&d);
    if (!st && (out.oom || ev.oom)) st = q_oom(err);
    if (!st && out.len > 2 && !qbuf_take(&out, params)) st = q_oom(err);
    if (!st && events && ev.len && !qbuf_take(&ev, events)) st = q_oom(err);
    qbuf_free(&out);
    qbuf_free(&ev);
    if (st) { quire_bytes_free(params); if (events) quire_bytes_free(events); }
    return st;
}
