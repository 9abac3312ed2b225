/* Responses in (DESIGN 12): the accumulator, the message writer, stream
 * framing (SSE and JSON lines) and the public API. See respond/respond.h and
 * docs/responses.md. */
#include "respond/respond.h"
#include "core/transcript.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Accumulator                                                              */
/* ------------------------------------------------------------------------ */

void racc_init(racc *acc, const quire_allocator *a, const char *provider) {
    memset(acc, 0, sizeof *acc);
    acc->a = a;
    acc->provider = provider;
    acc->call_prefix = "call_";
    qarena_init(&acc->ar, a);
    qbuf_init(&acc->stop_raw, a);
    qbuf_init(&acc->id, a);
    qbuf_init(&acc->model, a);
}

static void rb_free(rblock *b) {
    qbuf_free(&b->text); qbuf_free(&b->sig); qbuf_free(&b->id); qbuf_free(&b->name);
    qbuf_free(&b->args); qbuf_free(&b->raw); qbuf_free(&b->po);
}

void racc_free(racc *acc) {
    for (uint32_t i = 0; i < acc->n; i++) rb_free(&acc->b[i]);
    if (acc->b) q_free(acc->a, acc->b, acc->cap * sizeof *acc->b);
    if (acc->usage) q_free(acc->a, acc->usage, acc->capusage * sizeof *acc->usage);
    qbuf_free(&acc->stop_raw); qbuf_free(&acc->id); qbuf_free(&acc->model);
    if (acc->kslots) q_free(acc->a, acc->kslots, (size_t)acc->kcap * sizeof *acc->kslots);
    qarena_free(&acc->ar);
    memset(acc, 0, sizeof *acc);
}

rblock *racc_push(racc *acc, rkind kind) {
    if (acc->n == acc->cap) {
        uint32_t nc = acc->cap ? acc->cap * 2 : 8;
        rblock *nb = q_realloc(acc->a, acc->b, acc->cap * sizeof *nb, nc * sizeof *nb);
        if (!nb) { acc->oom = true; return NULL; }
        acc->b = nb;
        acc->cap = nc;
    }
    rblock *b = &acc->b[acc->n++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    acc->ntool += kind == RK_TOOL_CALL;
    b->key = -1;
    qbuf_init(&b->text, acc->a); qbuf_init(&b->sig, acc->a); qbuf_init(&b->id, acc->a);
    qbuf_init(&b->name, acc->a); qbuf_init(&b->args, acc->a); qbuf_init(&b->raw, acc->a);
    qbuf_init(&b->po, acc->a);
    return b;
}

static uint32_t kslot(const racc *acc, int64_t key) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & (acc->kcap - 1);
    while (acc->kslots[i].used && acc->kslots[i].key != key) i = (i + 1) & (acc->kcap - 1);
    return i;
}

rblock *racc_find(racc *acc, int64_t key) {
    if (!acc->kn) return NULL;
    const struct rkslot *k = &acc->kslots[kslot(acc, key)];
    if (!k->used) return NULL;
    if (k->at < acc->n && acc->b[k->at].key == key) return &acc->b[k->at];
    /* a block moved (a dialect inserted one before it): look it up */
    for (uint32_t i = acc->n; i-- > 0;)
        if (acc->b[i].key == key) return &acc->b[i];
    return NULL;
}

bool racc_key(racc *acc, rblock *b, int64_t key) {
    b->key = key;
    if ((acc->kn + 1) * 2 > acc->kcap) {
        uint32_t nc = acc->kcap ? acc->kcap * 2 : 16;
        struct rkslot *ns = q_malloc(acc->a, (size_t)nc * sizeof *ns);
        if (!ns) { acc->oom = true; return false; }
        memset(ns, 0, (size_t)nc * sizeof *ns);
        struct rkslot *os = acc->kslots;
        uint32_t oc = acc->kcap;
        acc->kslots = ns;
        acc->kcap = nc;
        for (uint32_t i = 0; i < oc; i++)
            if (os[i].used) acc->kslots[kslot(acc, os[i].key)] = os[i];
        if (os) q_free(acc->a, os, (size_t)oc * sizeof *os);
    }
    struct rkslot *k = &acc->kslots[kslot(acc, key)];
    if (!k->used) acc->kn++;
    k->used = true;
    k->key = key;
    k->at = (uint32_t)(b - acc->b);
    return true;
}

void rb_put_str(qbuf *b, const qj_doc *d, uint32_t i) {
    const qj_node *n = qj_at(d, i);
    if (!(n->flags & QJ_F_ESC)) { qbuf_put(b, n->p, n->len); return; }
    if (b->cap - b->len <= n->len && !qbuf_grow(b, n->len)) return;
    b->len += qj_unescape(n->p, n->len, b->data + b->len);
}

void rb_put_raw(qbuf *b, const qj_doc *d, uint32_t i) {
    const qj_node *n = qj_at(d, i);
    switch ((qj_type)n->type) {
    case QJ_STRING: qbuf_putc(b, '"'); qbuf_put(b, n->p, n->len); qbuf_putc(b, '"'); return;
    case QJ_OBJECT: case QJ_ARRAY:
        if (n->flags & QJ_F_COMPACT) { qbuf_put(b, n->p, n->len); return; }
        {
            qw w;
            qw_init(&w, b, false);
            qw_node(&w, d, i);
            qw_dispose(&w);
        }
        return;
    case QJ_NULL: case QJ_FALSE: case QJ_TRUE: case QJ_NUMBER: qbuf_put(b, n->p, n->len); return;
    }
}

/* The raw stop reason is compared as a C string: keep it NUL-terminated. */
static void stop_term(racc *acc) {
    if (acc->stop_raw.oom || !acc->stop_raw.data) { acc->oom = acc->stop_raw.oom; return; }
    acc->stop_raw.data[acc->stop_raw.len] = '\0';
    acc->has_stop = true;
}

void racc_stop(racc *acc, const qj_doc *d, uint32_t i) {
    if (i == QJ_NONE || qj_type_of(d, i) != QJ_STRING) return;
    acc->stop_raw.len = 0;
    rb_put_str(&acc->stop_raw, d, i);
    stop_term(acc);
}

void racc_stopz(racc *acc, const char *s) {
    acc->stop_raw.len = 0;
    qbuf_puts(&acc->stop_raw, s);
    stop_term(acc);
}

void racc_usage_clear(racc *acc) {
    acc->nusage = 0;
    acc->has_usage = false;
}

void racc_usage(racc *acc, const qj_doc *d, uint32_t obj) { racc_usage_keys(acc, d, obj, NULL, 0); }

void racc_usage_keys(racc *acc, const qj_doc *d, uint32_t obj, const char *const *keys, size_t nkeys) {
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return;
    for (uint32_t k = obj + 1; k < qj_next(d, obj); k = qj_next(d, k + 1)) {
        const qj_node *kn = qj_at(d, k);
        if (keys) {
            bool want = false;
            for (size_t i = 0; i < nkeys && !want; i++) want = qj_str_eq(d, k, keys[i]);
            if (!want) continue;
        }
        acc->has_usage = true;
        qbuf vb;
        qbuf_init(&vb, acc->a);
        rb_put_raw(&vb, d, k + 1);
        if (vb.oom) { acc->oom = true; qbuf_free(&vb); return; }
        char *v = qarena_strndup(&acc->ar, vb.data ? vb.data : "", vb.len);
        size_t vn = vb.len;
        qbuf_free(&vb);
        if (!v) { acc->oom = true; return; }
        rkv *e = NULL;
        for (uint32_t j = 0; j < acc->nusage; j++)
            if (acc->usage[j].kn == kn->len && memcmp(acc->usage[j].k, kn->p, kn->len) == 0) { e = &acc->usage[j]; break; }
        if (!e) {
            if (acc->nusage >= RUSAGE_MAX) { acc->usage_limit = true; return; }
            if (acc->nusage == acc->capusage) {
                uint32_t nc = acc->capusage ? acc->capusage * 2 : 8;
                rkv *nu = q_realloc(acc->a, acc->usage, acc->capusage * sizeof *nu, nc * sizeof *nu);
                if (!nu) { acc->oom = true; return; }
                acc->usage = nu;
                acc->capusage = nc;
            }
            e = &acc->usage[acc->nusage++];
            e->k = qarena_strndup(&acc->ar, kn->p, kn->len);
            e->kn = kn->len;
            if (!e->k) { acc->oom = true; acc->nusage--; return; }
        }
        e->v = v;
        e->vn = vn;
    }
}

void racc_meta(racc *acc, const qj_doc *d, uint32_t id, uint32_t model) {
    if (id != QJ_NONE && qj_type_of(d, id) == QJ_STRING) { acc->id.len = 0; rb_put_str(&acc->id, d, id); }
    if (model != QJ_NONE && qj_type_of(d, model) == QJ_STRING) { acc->model.len = 0; rb_put_str(&acc->model, d, model); }
}

bool rb_has_calls(const racc *acc) {
    for (uint32_t i = 0; i < acc->n; i++)
        if (acc->b[i].kind == RK_TOOL_CALL || acc->b[i].kind == RK_CUSTOM_CALL) return true;
    return false;
}

/* ---- delta events: ACP SessionUpdate-shaped lines ---- */

static void ev_begin(qw *w, racc *acc, const char *update, uint32_t block) {
    qw_init(w, acc->events, false);
    qw_obj_begin(w);
    qw_key(w, "sessionUpdate"); qw_strz(w, update);
    qw_key(w, "block"); qw_int(w, block);
}

static void ev_end(qw *w, racc *acc) {
    qw_obj_end(w);
    qw_dispose(w);
    qbuf_putc(acc->events, '\n');
}

void racc_ev_text(racc *acc, uint32_t block, bool thinking, const qj_doc *d, uint32_t str) {
    if (!acc->events || qj_at(d, str)->len == 0) return;
    qw w;
    ev_begin(&w, acc, thinking ? "agent_thought_chunk" : "agent_message_chunk", block);
    qw_key(&w, "content");
    qw_obj_begin(&w);
    qw_key(&w, "type"); qw_strz(&w, "text");
    qw_key(&w, "text"); qw_str_esc(&w, qj_at(d, str)->p, qj_at(d, str)->len);
    qw_obj_end(&w);
    ev_end(&w, acc);
}

void racc_ev_call(racc *acc, uint32_t block, const rblock *b) {
    if (!acc->events) return;
    qw w;
    ev_begin(&w, acc, "tool_call", block);
    qw_key(&w, "toolCallId"); qw_str(&w, b->id.data ? b->id.data : "", b->id.len);
    qw_key(&w, "title"); qw_str(&w, b->name.data ? b->name.data : "", b->name.len);
    qw_key(&w, "status"); qw_strz(&w, "pending");
    ev_end(&w, acc);
}

void racc_ev_args(racc *acc, uint32_t block, const rblock *b, const qj_doc *d, uint32_t str) {
    if (!acc->events || qj_at(d, str)->len == 0) return;
    qw w;
    ev_begin(&w, acc, "tool_call_update", block);
    qw_key(&w, "toolCallId"); qw_str(&w, b->id.data ? b->id.data : "", b->id.len);
    qw_key(&w, "inputDelta"); qw_str_esc(&w, qj_at(d, str)->p, qj_at(d, str)->len);
    ev_end(&w, acc);
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */
/* ------------------------------------------------------------------------ */

static void wbuf(qw *w, const qbuf *b) { qw_str(w, b->data ? b->data : "", b->len); }

static const char *const k_usage_keys[RU_COUNT] = {"inputTokens", "outputTokens", "cacheReadTokens",
                                                   "cacheWriteTokens", "reasoningTokens"};

void rb_source(rblock *b, uint64_t off, uint64_t line, const char *ptr) {
    if (b->has_src) return; /* the first fragment names it */
    b->has_src = true;
    b->src_off = off;
    b->src_line = line;
    snprintf(b->src_ptr, sizeof b->src_ptr, "%s", ptr ? ptr : "");
}

/* An error about b's input, placed where the input came from when known. */
static quire_status input_err(const rblock *b, const char *out_ptr, quire_error *err, const char *fmt, ...)
    Q_PRINTF(4, 5);
static quire_status input_err(const rblock *b, const char *out_ptr, quire_error *err, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!b->has_src) return q_err_at(err, QUIRE_E_SCHEMA, SIZE_MAX, out_ptr, "%s", msg);
    quire_status st = q_err_at(err, QUIRE_E_SCHEMA, (size_t)b->src_off, b->src_ptr, "%s", msg);
    if (err && b->src_line) { err->line = (uint32_t)b->src_line; err->column = 1; }
    return st;
}

static quire_status check_input(racc *acc, const rdec *dec, uint32_t bi, rblock *b, quire_error *err) {
    if (b->args.len == 0) { qbuf_puts(&b->args, "{}"); return QUIRE_OK; }
    qj_doc d;
    quire_error e;
    quire_status st = qj_parse(&d, b->args.data, b->args.len, NULL, acc->a, &e);
    qj_doc_free(&d);
    if (st == QUIRE_E_NOMEM) return q_oom(err);
    if (st) {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/content/%u/input", bi);
        char name[96];
        q_quote_text(name, sizeof name, b->name.data ? b->name.data : "", b->name.len);
        if (strcmp(dec->stop(acc), "max_tokens") == 0) /* the answer broke off inside the call */
            return input_err(b, ptr, err,
                             "the answer was cut off at its output limit (max tokens) inside tool call \"%s\", whose "
                             "input is incomplete (%zu bytes, %s): ask again with a larger max tokens",
                             name, b->args.len, e.message);
        return input_err(b, ptr, err, "the input of tool call \"%s\" is not JSON (at byte %zu of it: %s)", name,
                         e.offset, e.message);
    }
    return QUIRE_OK;
}

static bool call_kind(rkind k) { return k == RK_TOOL_CALL || k == RK_CUSTOM_CALL || k == RK_SERVER_CALL; }

/* Every call of the answer has its own id: a result names its call by id, and
 * every provider refuses a request that names one twice. Hash set over the
 * ids (linear in the calls). */
static quire_status unique_call_ids(racc *acc, quire_error *err) {
    uint32_t ncall = 0;
    for (uint32_t i = 0; i < acc->n; i++) ncall += call_kind(acc->b[i].kind);
    if (ncall < 2) return QUIRE_OK;
    uint32_t cap = 16;
    while (cap < ncall * 2) cap *= 2;
    uint32_t *slot = q_malloc(acc->a, (size_t)cap * sizeof *slot); /* block index + 1, 0 = empty */
    if (!slot) return q_oom(err);
    memset(slot, 0, (size_t)cap * sizeof *slot);
    quire_status st = QUIRE_OK;
    for (uint32_t i = 0; i < acc->n && !st; i++) {
        const rblock *b = &acc->b[i];
        if (!call_kind(b->kind)) continue;
        qstr id = qstr_plain(b->id.data ? b->id.data : "", b->id.len); /* the transcript's id hash and equality */
        uint32_t j = (uint32_t)qtr_id_hash(id) & (cap - 1);
        for (; slot[j]; j = (j + 1) & (cap - 1)) {
            const rblock *o = &acc->b[slot[j] - 1];
            if (qtr_ids_eq(qstr_plain(o->id.data ? o->id.data : "", o->id.len), id)) {
                char ptr[48];
                snprintf(ptr, sizeof ptr, "/content/%u/id", i);
                char q[96];
                q_quote_text(q, sizeof q, b->id.data ? b->id.data : "", b->id.len);
                st = q_err_at(err, QUIRE_E_SCHEMA, SIZE_MAX, ptr,
                              "the answer names tool call id \"%s\" twice (blocks %u and %u): a result could not tell "
                              "them apart",
                              q, slot[j] - 1, i);
                break;
            }
        }
        if (!st) slot[j] = i + 1;
    }
    q_free(acc->a, slot, (size_t)cap * sizeof *slot);
    return st;
}

quire_status racc_write(racc *acc, const rdec *dec, bool pretty, quire_bytes *message, quire_bytes *info,
                        quire_error *err) {
    quire_status st;
    if ((st = unique_call_ids(acc, err))) return st;
    for (uint32_t i = 0; i < acc->n; i++)
        if ((acc->b[i].kind == RK_TOOL_CALL || acc->b[i].kind == RK_SERVER_CALL) &&
            (st = check_input(acc, dec, i, &acc->b[i], err)))
            return st;
    if (acc->oom) return q_oom(err);
    if (acc->usage_limit) return q_err(err, QUIRE_E_LIMIT, "a usage object names more than %d members", RUSAGE_MAX);
    qbuf out;
    qbuf_init(&out, acc->a);
    qw w;
    qw_init(&w, &out, pretty);
    qw_obj_begin(&w);
    qw_key(&w, "role"); qw_strz(&w, "assistant");
    qw_key(&w, "content");
    qw_arr_begin(&w);
    if (acc->n == 0) {
        /* an answer with no content (a refusal or blocked prompt with nothing
         * said, an empty end_turn): the message says so with one empty text
         * block, which every encoder carries or leaves out with an event
         * (blank_text), so the conversation stays renderable */
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "text");
        qw_key(&w, "text"); qw_str(&w, "", 0);
        qw_obj_end(&w);
    }
    for (uint32_t i = 0; i < acc->n; i++) {
        const rblock *b = &acc->b[i];
        qw_obj_begin(&w);
        switch (b->kind) {
        case RK_TEXT:
            qw_key(&w, "type"); qw_strz(&w, "text");
            qw_key(&w, "text"); wbuf(&w, &b->text);
            if (b->raw.len) {
                qw_key(&w, "citations");
                qw_arr_begin(&w);
                qw_raw_value(&w, b->raw.data, b->raw.len); /* already comma-joined values */
                qw_arr_end(&w);
            }
            break;
        case RK_THINKING:
            qw_key(&w, "type"); qw_strz(&w, "thinking");
            qw_key(&w, "text"); wbuf(&w, &b->text);
            if (b->sig.len) {
                qw_key(&w, "signature"); wbuf(&w, &b->sig);
                qw_key(&w, "provider"); qw_strz(&w, acc->provider);
            }
            break;
        case RK_REDACTED:
            qw_key(&w, "type"); qw_strz(&w, "redactedThinking");
            qw_key(&w, "data"); wbuf(&w, &b->text);
            qw_key(&w, "provider"); qw_strz(&w, acc->provider);
            break;
        case RK_TOOL_CALL:
            qw_key(&w, "type"); qw_strz(&w, "toolCall");
            qw_key(&w, "id"); wbuf(&w, &b->id);
            qw_key(&w, "name"); wbuf(&w, &b->name);
            qw_key(&w, "input"); qw_raw_value(&w, b->args.data, b->args.len);
            break;
        case RK_CUSTOM_CALL:
            qw_key(&w, "type"); qw_strz(&w, "toolCall");
            qw_key(&w, "kind"); qw_strz(&w, "custom");
            qw_key(&w, "id"); wbuf(&w, &b->id);
            qw_key(&w, "name"); wbuf(&w, &b->name);
            qw_key(&w, "input"); wbuf(&w, &b->text);
            break;
        case RK_SERVER_CALL:
            if (b->as_opaque) {
                qw_key(&w, "type"); qw_strz(&w, "opaque");
                qw_key(&w, "provider"); qw_strz(&w, acc->provider);
                qw_key(&w, "item"); qw_raw_value(&w, b->raw.data, b->raw.len);
                break;
            }
            qw_key(&w, "type"); qw_strz(&w, "serverToolCall");
            qw_key(&w, "provider"); qw_strz(&w, acc->provider);
            qw_key(&w, "id"); wbuf(&w, &b->id);
            qw_key(&w, "name"); wbuf(&w, &b->name);
            qw_key(&w, "input");
            if (b->args.len) qw_raw_value(&w, b->args.data, b->args.len); else qw_raw_value(&w, "{}", 2);
            break;
        case RK_SERVER_RESULT:
            qw_key(&w, "type"); qw_strz(&w, "serverToolResult");
            qw_key(&w, "provider"); qw_strz(&w, acc->provider);
            qw_key(&w, "toolCallId"); wbuf(&w, &b->id);
            qw_key(&w, "name"); wbuf(&w, &b->name);
            qw_key(&w, "content"); qw_raw_value(&w, b->args.data, b->args.len);
            break;
        case RK_OPAQUE:
            qw_key(&w, "type"); qw_strz(&w, "opaque");
            qw_key(&w, "provider"); qw_strz(&w, acc->provider);
            qw_key(&w, "item"); qw_raw_value(&w, b->raw.data, b->raw.len);
            break;
        }
        if (b->po.len) { qw_key(&w, "providerOptions"); qw_raw_value(&w, b->po.data, b->po.len); }
        qw_obj_end(&w);
    }
    qw_arr_end(&w);
    qw_obj_end(&w);
    qw_dispose(&w);

    /* response info */
    qbuf ib;
    qbuf_init(&ib, acc->a);
    qw_init(&w, &ib, pretty);
    qw_obj_begin(&w);
    qw_key(&w, "provider"); qw_strz(&w, acc->provider);
    if (acc->model.len) { qw_key(&w, "model"); wbuf(&w, &acc->model); }
    if (acc->id.len) { qw_key(&w, "id"); wbuf(&w, &acc->id); }
    qw_key(&w, "stopReason"); qw_strz(&w, dec->stop(acc));
    qw_key(&w, "providerStopReason");
    if (acc->has_stop) wbuf(&w, &acc->stop_raw); else qw_null(&w);
    qbuf ub;
    qbuf_init(&ub, acc->a);
    qbuf_putc(&ub, '{');
    for (uint32_t i = 0; i < acc->nusage; i++) {
        if (i) qbuf_putc(&ub, ',');
        qbuf_putc(&ub, '"'); qbuf_put(&ub, acc->usage[i].k, acc->usage[i].kn); qbuf_puts(&ub, "\":");
        qbuf_put(&ub, acc->usage[i].v, acc->usage[i].vn);
    }
    qbuf_putc(&ub, '}');
    int64_t u[RU_COUNT];
    for (int i = 0; i < RU_COUNT; i++) u[i] = -1;
    if (acc->has_usage && !ub.oom) {
        qj_doc d;
        quire_error e;
        if (qj_parse(&d, ub.data, ub.len, NULL, acc->a, &e) == QUIRE_OK) dec->usage(&d, 0, u);
        else if (e.code == QUIRE_E_NOMEM) ub.oom = true;
        qj_doc_free(&d);
    }
    qw_key(&w, "usage");
    qw_obj_begin(&w);
    for (int i = 0; i < RU_COUNT; i++)
        if (u[i] >= 0) { qw_key(&w, k_usage_keys[i]); qw_int(&w, u[i]); }
    qw_obj_end(&w);
    qw_key(&w, "providerUsage");
    if (acc->has_usage) qw_raw_value(&w, ub.data, ub.len); else qw_null(&w);
    qw_obj_end(&w);
    qw_dispose(&w);
    bool oom = ub.oom;
    qbuf_free(&ub);
    if (oom || out.oom || ib.oom || !qbuf_take(&out, message)) { qbuf_free(&out); qbuf_free(&ib); return q_oom(err); }
    if (!qbuf_take(&ib, info)) { quire_bytes_free(message); qbuf_free(&ib); return q_oom(err); }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Helpers for decoders                                                      */
/* ------------------------------------------------------------------------ */

uint32_t rj_str(const qj_doc *d, uint32_t obj, const char *key) {
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return QJ_NONE;
    uint32_t v = qj_get(d, obj, key);
    return v != QJ_NONE && qj_type_of(d, v) == QJ_STRING ? v : QJ_NONE;
}

uint32_t rj_obj(const qj_doc *d, uint32_t obj, const char *key) {
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return QJ_NONE;
    uint32_t v = qj_get(d, obj, key);
    return v != QJ_NONE && qj_type_of(d, v) == QJ_OBJECT ? v : QJ_NONE;
}

uint32_t rj_arr(const qj_doc *d, uint32_t obj, const char *key) {
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return QJ_NONE;
    uint32_t v = qj_get(d, obj, key);
    return v != QJ_NONE && qj_type_of(d, v) == QJ_ARRAY ? v : QJ_NONE;
}

int64_t rj_int(const qj_doc *d, uint32_t obj, const char *path) {
    const char *dot = strchr(path, '.');
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return -1;
    uint32_t v = qj_getn(d, obj, path, dot ? (size_t)(dot - path) : strlen(path));
    if (v == QJ_NONE) return -1;
    if (dot) return rj_int(d, v, dot + 1);
    int64_t x;
    return qj_type_of(d, v) == QJ_NUMBER && qj_int64(d, v, &x) && x >= 0 ? x : -1;
}

int64_t rj_sum(const qj_doc *d, uint32_t obj, const char *const *paths, size_t n) {
    int64_t s = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t x = rj_int(d, obj, paths[i]);
        if (x >= 0) s = (s < 0 ? 0 : s) + x;
    }
    return s;
}

uint32_t rj_elem(const qj_doc *d, uint32_t arr, uint32_t i) {
    uint32_t e = arr + 1;
    for (uint32_t k = 0; k < i; k++) e = qj_next(d, e);
    return e;
}

static void quote_node(char *out, size_t cap, const qj_doc *d, uint32_t i) {
    if (i == QJ_NONE) { snprintf(out, cap, "unknown"); return; }
    const qj_node *n = qj_at(d, i);
    if (n->type == QJ_STRING) {
        qarena ar;
        qarena_init(&ar, d->a);
        size_t len = 0;
        char *s = qj_str_decode(d, i, &ar, &len);
        if (s) q_quote_text(out, cap, s, len); else snprintf(out, cap, "?");
        qarena_free(&ar);
    } else {
        q_quote_text(out, cap, n->p, n->len);
    }
}

quire_status rerr_provider(quire_error *err, const qj_doc *d, uint32_t type, uint32_t msg, size_t off) {
    char t[64] = "", m[400];
    if (type != QJ_NONE) quote_node(t, sizeof t, d, type);
    if (msg == QJ_NONE) snprintf(m, sizeof m, "(no message)");
    else quote_node(m, sizeof m, d, msg);
    quire_status st = q_err_at(err, QUIRE_E_PROVIDER, off, "", "provider error%s%s: %s", *t ? " " : "", t, m);
    if (err) snprintf(err->field, sizeof err->field, "%s", t);
    return st;
}

quire_status rerr_at(quire_error *err, const qj_doc *d, uint32_t i, const char *ptr, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_utf8_trim(msg);
    return q_err_at(err, QUIRE_E_SCHEMA, i == QJ_NONE ? 0 : qj_offset(d, i), ptr, "%s", msg);
}

quire_status rs_err(rstream *s, const char *event, const char *fmt, ...) {
    char msg[360];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_utf8_trim(msg);
    char ev[80];
    q_quote_text(ev, sizeof ev, event, strlen(event));
    q_err_at(s->err, QUIRE_E_SCHEMA, (size_t)s->ev_off, "", "event %s at byte %llu: %s", ev,
             (unsigned long long)s->ev_off, msg);
    if (s->err) { s->err->line = (uint32_t)s->ev_line; s->err->column = 1; }
    s->failed = true;
    return QUIRE_E_SCHEMA;
}

quire_status rs_parse(rstream *s, const char *data, size_t dlen, qj_doc *doc) {
    quire_error e;
    quire_status st = qj_parse(doc, data, dlen, &s->jo, s->acc.a, &e);
    if (st == QUIRE_OK) return QUIRE_OK;
    if (st == QUIRE_E_NOMEM) return q_oom(s->err);
    char name[80];
    q_quote_text(name, sizeof name, s->ev, s->evn);
    q_err_at(s->err, st, (size_t)s->ev_off, "", "event%s%s at byte %llu: data is not JSON: %s", s->evn ? " " : "",
             s->evn ? name : "", (unsigned long long)s->ev_off, e.message);
    if (s->err) { s->err->line = (uint32_t)s->ev_line; s->err->column = 1; }
    s->failed = true;
    return st;
}

/* ------------------------------------------------------------------------ */
/* Stream framing                                                            */
/* ------------------------------------------------------------------------ */

static quire_status dispatch(rstream *s, const char *data, size_t dlen) {
    s->nevents++;
    quire_status st = s->dec->event(s, s->ev, s->evn, data, dlen);
    if (st == QUIRE_OK && s->acc.oom) st = q_oom(s->err);
    if (st == QUIRE_OK && s->acc.usage_limit)
        st = q_err(s->err, QUIRE_E_LIMIT, "a usage object names more than %d members", RUSAGE_MAX);
    if (st) s->failed = true;
    return st;
}

/* One complete line (without its end of line) starting at stream offset off. */
static quire_status on_line(rstream *s, const char *p, size_t n, uint64_t off, uint64_t line_no) {
    if (!s->dec->sse) {
        size_t i = 0;
        while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
        if (i == n) return QUIRE_OK;
        s->ev_off = off;
        s->ev_line = line_no;
        s->evn = 0;
        return dispatch(s, p, n);
    }
    if (n == 0) { /* blank line: dispatch */
        quire_status st = QUIRE_OK;
        if (s->has_data) st = dispatch(s, s->data.data ? s->data.data : "", s->data.len);
        s->data.len = 0;
        s->evn = 0;
        s->has_data = false;
        s->ev_off = UINT64_MAX;
        return st;
    }
    if (p[0] == ':') return QUIRE_OK; /* comment */
    if (s->ev_off == UINT64_MAX) { s->ev_off = off; s->ev_line = line_no; }
    const char *colon = memchr(p, ':', n);
    size_t fn = colon ? (size_t)(colon - p) : n;
    const char *v = colon ? colon + 1 : p + n;
    size_t vn = colon ? n - fn - 1 : 0;
    if (vn && *v == ' ') { v++; vn--; }
    if (fn == 4 && memcmp(p, "data", 4) == 0) {
        if (s->has_data) qbuf_putc(&s->data, '\n');
        qbuf_put(&s->data, v, vn);
        s->has_data = true;
    } else if (fn == 5 && memcmp(p, "event", 5) == 0) {
        s->evn = vn < sizeof s->ev - 1 ? vn : sizeof s->ev - 1;
        memcpy(s->ev, v, s->evn);
        s->ev[s->evn] = '\0';
    } /* id, retry and unknown fields are ignored (SSE) */
    if (s->data.oom) return q_oom(s->err);
    return QUIRE_OK;
}

static quire_status feed(rstream *s, const char *p, size_t n) {
    size_t i = 0;
    if (s->skip_lf && n) {
        s->skip_lf = false;
        if (p[0] == '\n') { i = 1; s->pos++; }
    }
    while (i < n) {
        const char *q = p + i;
        size_t rest = n - i;
        const char *nl = memchr(q, '\n', rest);
        const char *cr = memchr(q, '\r', nl ? (size_t)(nl - q) : rest);
        const char *eol = cr ? cr : nl;
        if (!eol) { /* partial line: keep it */
            if (s->line.len == 0) s->line_start = s->pos;
            qbuf_put(&s->line, q, rest);
            if (s->line.oom) return q_oom(s->err);
            s->pos += rest;
            return QUIRE_OK;
        }
        size_t ln = (size_t)(eol - q);
        quire_status st;
        uint64_t line_no = s->line_no;
        if (s->line.len) {
            qbuf_put(&s->line, q, ln);
            if (s->line.oom) return q_oom(s->err);
            st = on_line(s, s->line.data, s->line.len, s->line_start, line_no);
            s->line.len = 0;
        } else {
            st = on_line(s, q, ln, s->pos, line_no);
        }
        if (st) return st;
        s->line_no++;
        size_t adv = ln + 1;
        if (*eol == '\r') {
            if (ln + 1 < rest) { if (q[ln + 1] == '\n') adv++; }
            else s->skip_lf = true;
        }
        s->pos += adv;
        i += adv;
    }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

static const rdec *const k_decoders[QD_COUNT_] = {
    [QD_ANTHROPIC_MESSAGES] = &q_dec_anthropic,
    [QD_OPENAI_CHAT] = &q_dec_openai_chat,
    [QD_OPENAI_RESPONSES] = &q_dec_openai_responses,
    [QD_GEMINI] = &q_dec_gemini,
    [QD_BEDROCK_CONVERSE] = &q_dec_bedrock,
    [QD_MISTRAL] = &q_dec_mistral,
    [QD_OLLAMA] = &q_dec_ollama,
};

/* The options' call id prefix (NULL: the default), for callers built before the field. */
static const char *call_prefix_of(const quire_response_options *ro) {
    if (!ro || ro->size < offsetof(quire_response_options, call_id_prefix) + sizeof ro->call_id_prefix) return NULL;
    return ro->call_id_prefix;
}

static quire_status pick(const char *provider, const char *model, const quire_response_options *ro,
                         const rdec **dec, quire_error *err) {
    const quire_caps *caps = ro ? ro->caps : NULL;
    if (!provider || !*provider) return q_err(err, QUIRE_E_INVALID, "no provider given");
    if (!qcaps_known_provider(caps, provider))
        return q_err(err, QUIRE_E_INVALID,
                     "unknown provider \"%s\" (expected anthropic, openai, openai_responses, gemini, bedrock, "
                     "mistral, ollama, deepseek or openai_compatible)", provider);
    if (!model || !*model) model = qcaps_default_model(provider);
    if (!model) model = "";
    qcaps c;
    int bi, oi;
    if (!qcaps_resolve(caps, provider, model, &c, &bi, &oi))
        return q_err(err, QUIRE_E_INVALID, "no capability row for provider \"%s\" and model \"%s\"", provider, model);
    *dec = k_decoders[c.dialect];
    const char *pre = call_prefix_of(ro);
    size_t pn = pre ? strlen(pre) : 0;
    bool ok = pn <= 64;
    for (size_t i = 0; ok && i < pn; i++) {
        char ch = pre[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    }
    if (!ok) {
        quire_status st = q_err(err, QUIRE_E_INVALID, "call_id_prefix must be at most 64 bytes of [A-Za-z0-9_-]");
        if (err) snprintf(err->field, sizeof err->field, "call_id_prefix");
        return st;
    }
    return QUIRE_OK;
}

static void usage_fill(quire_response *out, const char *info, size_t len, const quire_allocator *a) {
    int64_t *f[RU_COUNT] = {&out->usage.input_tokens, &out->usage.output_tokens, &out->usage.cache_read_tokens,
                            &out->usage.cache_write_tokens, &out->usage.reasoning_tokens};
    for (int i = 0; i < RU_COUNT; i++) *f[i] = -1;
    qj_doc d;
    quire_error e;
    if (qj_parse(&d, info, len, NULL, a, &e) != QUIRE_OK) return;
    uint32_t u = rj_obj(&d, 0, "usage");
    for (int i = 0; i < RU_COUNT; i++) *f[i] = rj_int(&d, u, k_usage_keys[i]);
    qj_doc_free(&d);
}

static const char *const k_stops[] = {"end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause",
                                      "error"};

/* ---- tool names mapped back (docs/providers.md, "Provider rules") ---- */
size_t rdec_sent_name(qdialect d, const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    qname_rule r = qcaps_name_rule(d);
    return qcaps_name_ok(r, s, n) ? 0 : qcaps_map_name(r, s, n, out);
}

typedef struct rpair {
    char mapped[QCAPS_NAME_MAX + 1];
    size_t mlen;
    const char *name;
    size_t len;
} rpair;

static int pair_cmp(const void *a, const void *b) {
    const rpair *x = a, *y = b;
    size_t n = x->mlen < y->mlen ? x->mlen : y->mlen;
    int c = memcmp(x->mapped, y->mapped, n);
    return c ? c : (x->mlen > y->mlen) - (x->mlen < y->mlen);
}

/* The (mapped, own) name pairs of the tools the dialect renames, sorted by
 * mapped name; NULL with *np 0 when none (or on OOM: *oom). */
static rpair *pairs_build(qarena *ar, const rdec *dec, const rnames *names, uint32_t *np, bool *oom) {
    *np = 0;
    if (!dec->tool_name || !names || !names->n) return NULL;
    rpair *pairs = qarena_alloc(ar, (size_t)names->n * sizeof *pairs);
    if (!pairs) { *oom = true; return NULL; }
    uint32_t n = 0;
    for (uint32_t i = 0; i < names->n; i++) {
        rpair *q = &pairs[n];
        q->mlen = dec->tool_name(names->p[i], names->len[i], q->mapped);
        if (!q->mlen) continue;
        q->name = names->p[i];
        q->len = names->len[i];
        n++;
    }
    if (n) qsort(pairs, n, sizeof *pairs, pair_cmp);
    *np = n;
    return n ? pairs : NULL;
}

static const rpair *pair_find(const rpair *pairs, uint32_t np, const char *name, size_t len) {
    if (!np || len > QCAPS_NAME_MAX) return NULL;
    rpair key;
    memcpy(key.mapped, name, len);
    key.mlen = len;
    return bsearch(&key, pairs, np, sizeof *pairs, pair_cmp);
}

quire_status racc_map_names(racc *acc, const rdec *dec, const rnames *names) {
    if (!dec->tool_name || !names || !names->n) return QUIRE_OK;
    uint32_t ncalls = 0;
    for (uint32_t i = 0; i < acc->n; i++) ncalls += acc->b[i].kind == RK_TOOL_CALL || acc->b[i].kind == RK_CUSTOM_CALL;
    if (!ncalls) return QUIRE_OK;
    uint32_t np = 0;
    rpair *pairs = pairs_build(&acc->ar, dec, names, &np, &acc->oom);
    if (!np) return QUIRE_OK;
    for (uint32_t i = 0; i < acc->n; i++) {
        rblock *b = &acc->b[i];
        if (b->kind != RK_TOOL_CALL && b->kind != RK_CUSTOM_CALL) continue;
        const rpair *hit = pair_find(pairs, np, b->name.data ? b->name.data : "", b->name.len);
        if (!hit) continue;
        b->name.len = 0;
        qbuf_put(&b->name, hit->name, hit->len);
        if (b->name.oom) acc->oom = true;
    }
    return QUIRE_OK;
}

/* The tool names of ro->tools: an array of tools or an object with "tools". */
static quire_status names_of(const quire_response_options *ro, const qj_opts *jo, const quire_allocator *a, qj_doc *d,
                             bool *parsed, qarena *ar, rnames *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    *parsed = false;
    if (!ro || ro->size < sizeof *ro || !ro->tools) return QUIRE_OK;
    quire_status st = qj_parse(d, ro->tools, ro->tools_len, jo, a, err);
    if (st) {
        q_err_locate(err, ro->tools, ro->tools_len);
        if (err) snprintf(err->field, sizeof err->field, "tools"); /* the error is in ro->tools */
        return st;
    }
    *parsed = true;
    uint32_t arr = 0;
    if (qj_type_of(d, 0) == QJ_OBJECT) arr = qj_get(d, 0, "tools");
    if (arr == QJ_NONE) return QUIRE_OK; /* a transcript without tools */
    if (qj_type_of(d, arr) != QJ_ARRAY) {
        q_err_at(err, QUIRE_E_SCHEMA, qj_offset(d, arr), arr ? "/tools" : "",
                 "expected an array of tools (or an object with \"tools\")");
        q_err_locate(err, ro->tools, ro->tools_len);
        if (err) snprintf(err->field, sizeof err->field, "tools");
        return QUIRE_E_SCHEMA;
    }
    uint32_t n = qj_at(d, arr)->n;
    out->p = qarena_alloc(ar, ((size_t)n + 1) * sizeof *out->p);
    out->len = qarena_alloc(ar, ((size_t)n + 1) * sizeof *out->len);
    if (!out->p || !out->len) return q_oom(err);
    uint32_t e = arr + 1;
    for (uint32_t i = 0; i < n; i++, e = qj_next(d, e)) {
        uint32_t nm = qj_type_of(d, e) == QJ_OBJECT ? qj_get(d, e, "name") : QJ_NONE;
        if (nm == QJ_NONE || qj_type_of(d, nm) != QJ_STRING) continue;
        size_t len = 0;
        char *s = qj_str_decode(d, nm, ar, &len);
        if (!s) return q_oom(err);
        out->p[out->n] = s;
        out->len[out->n] = len;
        out->n++;
    }
    return QUIRE_OK;
}

quire_status qresp_map_message(const char *provider, const char *model, const quire_caps *caps, const char *msg,
                               size_t len, const rnames *names, const quire_allocator *a, quire_bytes *out,
                               quire_error *err) {
    memset(out, 0, sizeof *out);
    quire_response_options ro = QUIRE_RESPONSE_OPTIONS_INIT;
    ro.caps = caps;
    const rdec *dec = NULL;
    quire_status st = pick(provider, model, &ro, &dec, err);
    if (st || !dec || !dec->tool_name || !names || !names->n) return st;
    qarena ar;
    qarena_init(&ar, a);
    bool oom = false;
    uint32_t np = 0;
    rpair *pairs = pairs_build(&ar, dec, names, &np, &oom);
    if (oom) { qarena_free(&ar); return q_oom(err); }
    if (!np) { qarena_free(&ar); return QUIRE_OK; }
    qj_doc d;
    if ((st = qj_parse(&d, msg, len, NULL, a, err))) { qarena_free(&ar); return st; }
    qbuf b;
    qbuf_init(&b, a);
    size_t from = 0;
    uint32_t ct = qj_type_of(&d, 0) == QJ_OBJECT ? qj_get(&d, 0, "content") : QJ_NONE;
    if (ct != QJ_NONE && qj_type_of(&d, ct) == QJ_ARRAY) {
        uint32_t e = ct + 1;
        for (uint32_t i = 0; i < qj_at(&d, ct)->n; i++, e = qj_next(&d, e)) {
            if (qj_type_of(&d, e) != QJ_OBJECT) continue;
            uint32_t ty = qj_get(&d, e, "type"), nm = qj_get(&d, e, "name");
            if (ty == QJ_NONE || !qj_str_eq(&d, ty, "toolCall") || nm == QJ_NONE || qj_type_of(&d, nm) != QJ_STRING) continue;
            size_t n = 0;
            char *name = qj_str_decode(&d, nm, &ar, &n);
            if (!name) { oom = true; break; }
            const rpair *hit = pair_find(pairs, np, name, n);
            if (!hit) continue;
            /* the string token, quotes included, becomes the tool's own name */
            const qj_node *x = qj_at(&d, nm);
            size_t at = (size_t)(x->p - msg) - 1, end = (size_t)(x->p - msg) + x->len + 1;
            qbuf_put(&b, msg + from, at - from);
            qw w;
            qw_init(&w, &b, false);
            qw_str(&w, hit->name, hit->len);
            qw_dispose(&w);
            from = end;
        }
    }
    if (from && !oom) qbuf_put(&b, msg + from, len - from);
    qj_doc_free(&d);
    qarena_free(&ar);
    if (oom || b.oom || (from && !qbuf_take(&b, out))) { qbuf_free(&b); return q_oom(err); }
    qbuf_free(&b);
    return QUIRE_OK;
}

static quire_status finish_out(racc *acc, const rdec *dec, const quire_response_options *ro, quire_response *out,
                               quire_error *err) {
    quire_status st = racc_write(acc, dec, ro && ro->pretty, &out->message, &out->info, err);
    if (st) return st;
    const char *stop = dec->stop(acc);
    out->stop_reason = "end_turn";
    for (size_t i = 0; i < Q_COUNTOF(k_stops); i++)
        if (strcmp(k_stops[i], stop) == 0) out->stop_reason = k_stops[i];
    usage_fill(out, out->info.data, out->info.len, acc->a);
    return QUIRE_OK;
}

quire_status quire_response_decode(const char *provider, const char *model, const char *bytes, size_t len,
                                   const quire_response_options *ro, const quire_options *opts,
                                   quire_response *out, quire_error *err) {
    return qresp_decode_named(provider, model, bytes, len, ro, opts, NULL, out, err);
}

quire_status qresp_decode_named(const char *provider, const char *model, const char *bytes, size_t len,
                                const quire_response_options *ro, const quire_options *opts, const rnames *names,
                                quire_response *out, quire_error *err) {
    if (!out) return q_err(err, QUIRE_E_INVALID, "no result given");
    memset(out, 0, sizeof *out);
    const rdec *dec;
    quire_status st = pick(provider, model, ro, &dec, err);
    if (st) return st;
    quire_limits l = q_limits(opts);
    if ((uint64_t)len > l.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)l.max_input_bytes);
    const quire_allocator *a = q_alloc_of(opts);
    qj_opts jo = {l.max_depth, l.max_string_bytes};
    qj_doc d;
    if ((st = qj_parse(&d, bytes, len, &jo, a, err))) { q_err_locate(err, bytes, len); return st; }
    racc acc;
    racc_init(&acc, a, provider);
    if (call_prefix_of(ro)) acc.call_prefix = call_prefix_of(ro);
    st = dec->json(&acc, &d, err);
    if (st == QUIRE_OK && acc.oom) st = q_oom(err);
    if (st != QUIRE_OK && err && err->offset != SIZE_MAX) q_err_locate(err, bytes, len);
    qj_doc td;
    bool tparsed = false;
    rnames given;
    if (st == QUIRE_OK && !names) {
        st = names_of(ro, &jo, a, &td, &tparsed, &acc.ar, &given, err);
        names = &given;
    }
    if (st == QUIRE_OK) st = racc_map_names(&acc, dec, names);
    if (st == QUIRE_OK) {
        st = finish_out(&acc, dec, ro, out, err);
        if (st && err && err->offset != SIZE_MAX && err->line == 0) q_err_locate(err, bytes, len);
    }
    if (tparsed) qj_doc_free(&td);
    racc_free(&acc);
    qj_doc_free(&d);
    if (st) { quire_response_free(out); memset(out, 0, sizeof *out); }
    return st;
}

void quire_response_free(quire_response *r) {
    if (!r) return;
    quire_bytes_free(&r->message);
    quire_bytes_free(&r->info);
    r->stop_reason = NULL;
}

struct quire_stream {
    rstream s;
    const quire_allocator *a;
    quire_response_options ro;
    quire_error err;
    char provider[64];
    char call_prefix[65];
};

quire_status quire_stream_new(const char *provider, const char *model, const quire_response_options *ro,
                              const quire_options *opts, quire_stream **out, quire_error *err) {
    if (!out) return q_err(err, QUIRE_E_INVALID, "no result given");
    *out = NULL;
    const rdec *dec;
    quire_status st = pick(provider, model, ro, &dec, err);
    if (st) return st;
    if (strlen(provider) >= 64) return q_err(err, QUIRE_E_INVALID, "provider name too long");
    const quire_allocator *a = q_alloc_of(opts);
    quire_stream *qs = q_malloc(a, sizeof *qs);
    if (!qs) return q_oom(err);
    memset(qs, 0, sizeof *qs);
    qs->a = a;
    if (ro) { memcpy(&qs->ro, ro, ro->size < sizeof qs->ro ? ro->size : sizeof qs->ro); }
    qs->ro.size = sizeof qs->ro;
    memcpy(qs->provider, provider, strlen(provider) + 1);
    rstream *s = &qs->s;
    racc_init(&s->acc, a, qs->provider);
    const char *pre = call_prefix_of(ro);
    if (pre) {
        memcpy(qs->call_prefix, pre, strlen(pre) + 1); /* checked by pick: <= 64 bytes */
        s->acc.call_prefix = qs->call_prefix;
    }
    s->dec = dec;
    quire_limits l = q_limits(opts);
    s->jo.max_depth = l.max_depth;
    s->jo.max_string_bytes = l.max_string_bytes;
    s->max_bytes = l.max_input_bytes;
    s->line_no = 1;
    s->ev_off = UINT64_MAX;
    s->cur = -1;
    qbuf_init(&s->line, a);
    qbuf_init(&s->data, a);
    if (dec->state_new && !(s->ext = dec->state_new(a))) { quire_stream_free(qs); return q_oom(err); }
    *out = qs;
    return QUIRE_OK;
}

quire_status quire_stream_feed(quire_stream *qs, const char *bytes, size_t len, quire_bytes *events,
                               quire_error *err) {
    if (events) memset(events, 0, sizeof *events);
    if (!qs) return q_err(err, QUIRE_E_INVALID, "no stream given");
    rstream *s = &qs->s;
    if (s->failed) {
        if (err) *err = qs->err;
        return qs->err.code ? qs->err.code : QUIRE_E_INVALID;
    }
    qbuf ev;
    qbuf_init(&ev, qs->a);
    s->acc.events = events ? &ev : NULL;
    s->err = &qs->err;
    memset(&qs->err, 0, sizeof qs->err);
    /* the stream as a whole is one input: the same limit as a body */
    quire_status st = (uint64_t)len > s->max_bytes || s->fed > s->max_bytes - (uint64_t)len
                          ? q_err_at(&qs->err, QUIRE_E_LIMIT, SIZE_MAX, "",
                                     "the stream exceeds the input limit of %llu bytes",
                                     (unsigned long long)s->max_bytes)
                          : feed(s, bytes, len);
    s->fed += len;
    s->acc.events = NULL;
    if (st == QUIRE_OK && ev.oom) st = q_oom(&qs->err);
    if (st) {
        s->failed = true;
        qbuf_free(&ev);
        if (err) *err = qs->err;
        return st;
    }
    if (events && !qbuf_take(&ev, events)) { qbuf_free(&ev); return q_oom(err); }
    return QUIRE_OK;
}

quire_status quire_stream_finish(quire_stream *qs, quire_response *out, quire_bytes *events, quire_error *err) {
    if (events) memset(events, 0, sizeof *events);
    if (!out) return q_err(err, QUIRE_E_INVALID, "no result given");
    memset(out, 0, sizeof *out);
    if (!qs) return q_err(err, QUIRE_E_INVALID, "no stream given");
    rstream *s = &qs->s;
    if (s->failed) {
        if (err) *err = qs->err;
        return qs->err.code ? qs->err.code : QUIRE_E_INVALID;
    }
    qbuf ev;
    qbuf_init(&ev, qs->a);
    s->acc.events = events ? &ev : NULL;
    s->err = &qs->err;
    memset(&qs->err, 0, sizeof qs->err);
    quire_status st = QUIRE_OK;
    /* a last line without its end of line, then a pending SSE event */
    if (s->line.len) {
        st = on_line(s, s->line.data, s->line.len, s->line_start, s->line_no);
        s->line.len = 0;
    }
    if (st == QUIRE_OK && s->dec->sse && s->has_data) st = on_line(s, "", 0, s->pos, s->line_no);
    if (st == QUIRE_OK) {
        s->ev_off = s->pos;
        s->ev_line = s->line_no;
        s->evn = 0;
        st = s->dec->end(s);
    }
    s->acc.events = NULL;
    qj_doc td;
    bool tparsed = false;
    rnames names;
    if (st == QUIRE_OK) st = names_of(&qs->ro, &s->jo, qs->a, &td, &tparsed, &s->acc.ar, &names, &qs->err);
    if (st == QUIRE_OK) st = racc_map_names(&s->acc, s->dec, &names);
    if (tparsed) qj_doc_free(&td);
    if (st == QUIRE_OK) st = finish_out(&s->acc, s->dec, &qs->ro, out, &qs->err);
    if (st == QUIRE_OK && ev.oom) { quire_response_free(out); st = q_oom(&qs->err); }
    if (st) {
        s->failed = true;
        qbuf_free(&ev);
        if (err) *err = qs->err;
        return st;
    }
    if (events && !qbuf_take(&ev, events)) { qbuf_free(&ev); quire_response_free(out); return q_oom(err); }
    s->failed = true; /* finished: further feeds are refused */
    qs->err.code = QUIRE_E_INVALID;
    snprintf(qs->err.message, sizeof qs->err.message, "the stream is already finished");
    return QUIRE_OK;
}

void quire_stream_free(quire_stream *qs) {
    if (!qs) return;
    if (qs->s.ext && qs->s.dec->state_free) qs->s.dec->state_free(qs->s.ext, qs->a);
    racc_free(&qs->s.acc);
    qbuf_free(&qs->s.line);
    qbuf_free(&qs->s.data);
    q_free(qs->a, qs, sizeof *qs);
}
