/* The render driver: resolve the capability row, plan slots and cache
 * breakpoints, call the dialect encoder. */
#include "render/wire.h"
#include "render/memo.h"

#include <stdio.h>

/* ---- events ---- */

static void ev_begin(qr_ctx *c, qw *w, const char *kind) {
    qw_init(w, c->events, false);
    qw_obj_begin(w);
    qw_key(w, "sessionUpdate"); qw_strz(w, kind);
}
static void ev_end(qr_ctx *c, qw *w) {
    qw_obj_end(w);
    qw_dispose(w);
    qbuf_putc(c->events, '\n');
}

static void ev_content_dropped(qr_ctx *c, uint32_t msg, int32_t block, int32_t part, const char *reason,
                               const char *detail) {
    if (!c->events) return;
    qw w;
    ev_begin(c, &w, "content_dropped");
    qw_key(&w, "messageIndex"); qw_int(&w, msg < c->t->nmsgs ? c->t->msgs[msg].src_index : msg);
    if (block >= 0) { qw_key(&w, "blockIndex"); qw_int(&w, block); }
    if (part >= 0) { qw_key(&w, "partIndex"); qw_int(&w, part); }
    qw_key(&w, "reason"); qw_strz(&w, reason);
    qw_key(&w, "detail"); qw_strz(&w, detail);
    ev_end(c, &w);
}

static bool unsupported_at(qr_ctx *c, uint32_t msg, int32_t block, int32_t part, const char *what);
bool qr_unsupported(qr_ctx *c, uint32_t msg, int32_t block, const char *what) {
    return unsupported_at(c, msg, block, -1, what);
}
bool qr_unsupported_part(qr_ctx *c, uint32_t msg, uint32_t block, uint32_t part, const char *what) {
    return unsupported_at(c, msg, (int32_t)block, (int32_t)part, what);
}
static bool unsupported_at(qr_ctx *c, uint32_t msg, int32_t block, int32_t part, const char *what) {
    char detail[256];
    snprintf(detail, sizeof detail, "%s cannot be expressed for %s (%s)", what, qdialect_name(c->caps.dialect),
             c->model);
    if (c->ro->lossy) {
        ev_content_dropped(c, msg, block, part, "not_expressible", detail);
        return true;
    }
    if (!c->st) {
        char ptr[96];
        uint32_t src = msg < c->t->nmsgs ? c->t->msgs[msg].src_index : msg;
        if (block >= 0 && part >= 0) snprintf(ptr, sizeof ptr, "/messages/%u/content/%d/content/%d", src, block, part);
        else if (block >= 0) snprintf(ptr, sizeof ptr, "/messages/%u/content/%d", src, block);
        else snprintf(ptr, sizeof ptr, "/messages/%u", src);
        c->st = q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr, "%s (use --lossy to drop it with an event)",
                         detail);
    }
    return true;
}

void qr_drop_artefact(qr_ctx *c, uint32_t msg, uint32_t block, const char *detail) {
    ev_content_dropped(c, msg, (int32_t)block, -1, "not_renderable", detail);
}

bool qr_is_provider(const qr_ctx *c, qstr p) {
    return c->ro && c->ro->provider && qstr_eq(p, c->ro->provider);
}

void qr_tool_unsupported(qr_ctx *c, uint32_t tool, const char *what) {
    char detail[256];
    snprintf(detail, sizeof detail, "%s cannot be expressed for %s (%s)", what, qdialect_name(c->caps.dialect),
             c->model);
    if (c->ro->lossy) {
        if (!c->events) return;
        qw w;
        ev_begin(c, &w, "content_dropped");
        qw_key(&w, "toolIndex"); qw_int(&w, tool);
        qw_key(&w, "reason"); qw_strz(&w, "not_expressible");
        qw_key(&w, "detail"); qw_strz(&w, detail);
        ev_end(c, &w);
        return;
    }
    if (!c->st) {
        char ptr[48];
        snprintf(ptr, sizeof ptr, "/tools/%u", tool);
        c->st = q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr, "%s (use --lossy to drop it with an event)",
                         detail);
    }
}

void qr_drop_citations(qr_ctx *c, uint32_t msg, uint32_t block) {
    ev_content_dropped(c, msg, (int32_t)block, -1, "not_renderable",
                       "citations of a text block: no form in this dialect (the text is kept)");
}

/* An image's detail level is read by OpenAI Responses and Chat (which has no
 * "original"); every other dialect renders the image without it and reports
 * the loss (as with citations, with or without --lossy). */
static bool detail_lost(const qr_ctx *c, const qblock *b) {
    if (b->type != QB_IMAGE || !qstr_present(b->detail) || c->caps.dialect == QD_OPENAI_RESPONSES) return false;
    /* Chat's image_url.detail takes auto, low and high */
    return c->caps.dialect != QD_OPENAI_CHAT || qstr_eq(b->detail, "original");
}
static void note_image_detail(qr_ctx *c) {
    static const char what[] = "the detail level of an image: no form in this dialect (the image is kept)";
    const quire_transcript *t = c->t;
    /* with a memo: the messages it has scanned are reported from its list
     * (memo.h) and only the new ones are scanned */
    qr_details *d = c->memo ? qr_memo_details(c->memo) : NULL;
    uint32_t from = 0;
    if (d) {
        if (qr_scan_holds(d->t, d->n, d->last, t)) {
            from = d->n;
        } else {
            d->t = t;
            d->n = d->cnt = 0;
        }
        for (uint32_t q = 0; q < d->cnt; q++) ev_content_dropped(c, d->v[q].k, (int32_t)d->v[q].b, d->v[q].part, "not_renderable", what);
    }
    for (uint32_t k = from; k < t->nmsgs; k++) {
        const qmsg *m = &t->msgs[k];
        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *bl = &m->blocks[b];
            if (detail_lost(c, bl)) {
                ev_content_dropped(c, k, (int32_t)b, -1, "not_renderable", what);
                if (d && !qr_details_push(c->memo, k, b, -1)) d->t = NULL;
            }
            for (uint32_t i = 0; bl->type == QB_TOOL_RESULT && i < bl->nparts; i++)
                if (detail_lost(c, &bl->parts[i])) {
                    ev_content_dropped(c, k, (int32_t)b, (int32_t)i, "not_renderable", what);
                    if (d && !qr_details_push(c->memo, k, b, (int32_t)i)) d->t = NULL;
                }
        }
    }
    if (d && d->t == t && t->nmsgs) {
        d->n = t->nmsgs;
        d->last = t->msgs[t->nmsgs - 1].blocks;
    }
}

bool qr_media_ok(qr_ctx *c, const qblock *b, uint32_t msg, uint32_t block) {
    if (qstr_present(b->file_id) && !qr_is_provider(c, b->provider)) {
        qr_unsupported(c, msg, (int32_t)block, "a file id of another provider");
        return false;
    }
    return true;
}

void qr_event_adjusted(qr_ctx *c, const char *change, uint32_t msg, const char *detail) {
    if (!c->events) return;
    qw w;
    ev_begin(c, &w, "request_adjusted");
    qw_key(&w, "change"); qw_strz(&w, change);
    if (msg != UINT32_MAX) { qw_key(&w, "messageIndex"); qw_int(&w, msg < c->t->nmsgs ? c->t->msgs[msg].src_index : msg); }
    qw_key(&w, "detail"); qw_strz(&w, detail);
    ev_end(c, &w);
}

/* ---- request parameters ---- */

void qr_param_unsupported(qr_ctx *c, const char *name, const char *why) {
    char detail[300];
    snprintf(detail, sizeof detail, "parameter %s cannot be expressed for %s (%s): %s", name,
             qdialect_name(c->caps.dialect), c->model, why);
    if (c->ro->lossy) {
        if (!c->events) return;
        qw w;
        ev_begin(c, &w, "request_adjusted");
        qw_key(&w, "change"); qw_strz(&w, "parameter_dropped");
        qw_key(&w, "parameter"); qw_strz(&w, name);
        qw_key(&w, "detail"); qw_strz(&w, detail);
        ev_end(c, &w);
        return;
    }
    if (!c->st) {
        char ptr[64] = "/";
        for (size_t i = 1; *name && i < sizeof ptr - 1; name++) ptr[i++] = *name == '.' ? '/' : *name, ptr[i] = '\0';
        c->st = q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr, "%s (use --lossy to drop it with an event)", detail);
    }
}

bool qr_image_type_ok(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi) {
    if (!qstr_present(b->data) || !qcaps_image_types_limited(&c->caps)) return true;
    qstr mt = qr_plain(c, b->media_type);
    if (qcaps_messages_image_type(mt.p ? mt.p : "", mt.len)) return true;
    qr_unsupported(c, mi, (int32_t)bi, "an image that is not jpeg, png, gif or webp");
    return false;
}

bool qr_thinking_budget(qr_ctx *c) {
    if (!qval_present(c->params->budget_tokens)) return false;
    const quire_transcript *t = c->t;
    /* the messages after the last assistant one (one wire user message) */
    uint32_t k = t->nmsgs;
    bool results = false;
    while (k > 0 && t->msgs[k - 1].role != QR_ASSISTANT) {
        k--;
        for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) results |= t->msgs[k].blocks[b].type == QB_TOOL_RESULT;
    }
    if (k == 0 || k == t->nmsgs) return true;
    const qmsg *a = &t->msgs[k - 1];
    if (!results || (a->nblocks && (a->blocks[0].type == QB_THINKING || a->blocks[0].type == QB_REDACTED_THINKING)))
        return true;
    char why[160];
    snprintf(why, sizeof why, "with thinking enabled, the assistant message whose calls the last message answers "
             "(message %u) must start with a thinking block", a->src_index);
    qr_param_unsupported(c, "reasoning.budgetTokens", why);
    return false;
}

bool qr_param_above(qr_ctx *c, const char *name, qval v, double max) {
    if (!qval_present(v) || qp_number(v) <= max) return false;
    if (!c->st) {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/%s", name);
        c->st = q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr, "%s is at most %g for %s", name, max,
                         qdialect_name(c->caps.dialect));
    }
    return true;
}

void qr_write_stop(qr_ctx *c) {
    qval v = c->params->stop;
    if (qj_type_of(v.doc, v.idx) == QJ_ARRAY) { qw_qval(c->w, v); return; }
    qw_arr_begin(c->w);
    qw_qval(c->w, v);
    qw_arr_end(c->w);
}

static const char *const k_betas[] = {"extended-cache-ttl-2025-04-11", "mid-conversation-system-2026-04-07"};

const char *qr_beta_name(uint8_t id) { return id < Q_COUNTOF(k_betas) ? k_betas[id] : NULL; }

void qr_need_beta(qr_ctx *c, const char *beta) {
    /* what the memo unit being encoded needs (memo.h): a stored unit names it again when reused */
    uint8_t id = 0;
    while (id < Q_COUNTOF(k_betas) && strcmp(k_betas[id], beta) != 0) id++;
    bool seen = false;
    for (uint32_t i = 0; i < c->nunit_betas && !seen; i++) seen = c->unit_betas[i] == id + 1;
    if (!seen && c->nunit_betas < Q_COUNTOF(c->unit_betas)) c->unit_betas[c->nunit_betas++] = (uint8_t)(id + 1);
    for (uint32_t i = 0; i < c->nbetas; i++) if (strcmp(c->betas[i], beta) == 0) return;
    if (c->nbetas < Q_COUNTOF(c->betas)) c->betas[c->nbetas++] = beta;
}

/* OpenAI and DeepSeek take at most 128 tools in a request (the 400 "Invalid
 * 'tools': array too long. Expected an array with maximum length 128"; the
 * DeepSeek API documents the same limit). Counted: the tools this target
 * is sent (function and custom tools, and provider tools of its provider). */
static quire_status check_tool_count(qr_ctx *c) {
    const quire_transcript *t = c->t;
    uint32_t max = qcaps_max_tools(c->ro->provider);
    if (!t->has_tools || !max || t->ntools <= max) return QUIRE_OK;
    uint32_t n = 0, at = 0;
    for (uint32_t i = 0; i < t->ntools; i++) {
        const qtool *tl = &t->tools[i];
        if (tl->kind == QTK_PROVIDER && !qr_is_provider(c, tl->provider)) continue;
        if (++n == max + 1) at = i;
    }
    if (n <= max) return QUIRE_OK;
    char ptr[32];
    snprintf(ptr, sizeof ptr, "/tools/%u", at);
    return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr,
                    "%s takes at most %u tools in a request; this one would send %u (give the model fewer tools)",
                    c->ro->provider, max, n);
}

/* Checks shared by every dialect: a tool choice names a tool of the
 * transcript, and tool parameters need tools. */
static quire_status check_params(qr_ctx *c) {
    const qparams *p = c->params;
    bool tools = c->t->has_tools && c->t->ntools;
    if ((p->tool_choice != QP_TC_UNSET || p->parallel_tool_calls >= 0) && !tools)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, p->tool_choice != QP_TC_UNSET ? "/toolChoice" : "/parallelToolCalls",
                        "%s needs tools: the transcript has none", p->tool_choice != QP_TC_UNSET ? "toolChoice" : "parallelToolCalls");
    if (p->tool_choice == QP_TC_TOOL) {
        const qj_node *n = qj_at(p->tool_name.doc, p->tool_name.idx);
        qstr want = {n->p, n->len, (uint8_t)((n->flags & QJ_F_ESC) != 0), 0};
        bool found = false;
        for (uint32_t i = 0; i < c->t->ntools && !found; i++) {
            qstr have = c->t->tools[i].name;
            size_t na = 0, nb = 0;
            const char *a = qstr_plain_bytes(have, &c->scratch, &na), *b = qstr_plain_bytes(want, &c->scratch, &nb);
            found = a && b && na == nb && memcmp(a, b, na) == 0;
        }
        if (!found)
            return q_err_at(c->err, QUIRE_E_SCHEMA, SIZE_MAX, "/toolChoice/tool",
                            "toolChoice names a tool the transcript does not define");
    }
    return QUIRE_OK;
}

/* providerOptions of the target provider, merged into the body: objects merge
 * member by member; any other value the body already holds is a collision. */
static quire_status merge_into(qr_ctx *c, qw *w, const qj_doc *bd, uint32_t bn, const qj_doc *od, uint32_t on, char *ptr,
                               size_t cap) {
    qw_obj_begin(w);
    size_t plen = strlen(ptr);
    uint32_t k = bn + 1;
    for (uint32_t m = 0; m < qj_at(bd, bn)->n; m++, k = qj_next(bd, k + 1)) {
        const qj_node *key = qj_at(bd, k);
        qw_key_esc(w, key->p, key->len);
        uint32_t o = qj_getn(od, on, key->p, key->len);
        if (key->flags & QJ_F_ESC) o = QJ_NONE; /* quire writes plain keys */
        if (o == QJ_NONE) { qw_node(w, bd, k + 1); continue; }
        q_ptr_push_key(ptr, cap, key->p, key->len);
        if (qj_type_of(bd, k + 1) != QJ_OBJECT || qj_type_of(od, o) != QJ_OBJECT) {
            char where[320] = "/providerOptions";
            q_ptr_push_key(where, sizeof where, c->ro->provider, strlen(c->ro->provider));
            snprintf(where + strlen(where), sizeof where - strlen(where), "%s", ptr);
            return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, where,
                            "provider option %s collides with the request field quire wrote there", ptr);
        }
        quire_status st = merge_into(c, w, bd, k + 1, od, o, ptr, cap);
        if (st) return st;
        ptr[plen] = '\0';
    }
    k = on + 1;
    for (uint32_t m = 0; m < qj_at(od, on)->n; m++, k = qj_next(od, k + 1)) {
        const qj_node *key = qj_at(od, k);
        size_t kn = 0;
        const char *kp = qj_str_decode(od, k, &c->scratch, &kn);
        if (!kp) return q_oom(c->err);
        if (qj_getn(bd, bn, kp, kn) != QJ_NONE) continue; /* merged above */
        qw_key_esc(w, key->p, key->len);
        qw_node(w, od, k + 1);
    }
    qw_obj_end(w);
    return QUIRE_OK;
}

static quire_status merge_provider_options(qr_ctx *c, const quire_allocator *a, qbuf *out, bool *merged) {
    qval po = c->params->provider_options;
    if (!qval_present(po)) return QUIRE_OK;
    uint32_t mine = qj_get(po.doc, po.idx, c->ro->provider);
    if (mine == QJ_NONE || qj_at(po.doc, mine)->n == 0) return QUIRE_OK;
    qj_doc bd;
    quire_status st = qj_parse(&bd, out->data, out->len, NULL, a, c->err);
    if (st) return st;
    qbuf nb;
    qbuf_init(&nb, a);
    qw w;
    qw_init(&w, &nb, c->ro->pretty != 0);
    char ptr[256] = "";
    st = merge_into(c, &w, &bd, 0, po.doc, mine, ptr, sizeof ptr);
    qw_dispose(&w);
    qj_doc_free(&bd);
    if (!st && nb.oom) st = q_oom(c->err);
    if (st) { qbuf_free(&nb); return st; }
    qbuf_free(out);
    *out = nb;
    *merged = true;
    return QUIRE_OK;
}

/* ---- the envelope (DESIGN 13): data per dialect ---- */
typedef struct qr_route {
    const char *path, *stream_path; /* "{model}" is replaced by the percent-encoded model */
    bool anthropic_headers;
} qr_route;
static const qr_route k_routes[QD_COUNT_] = {
    [QD_ANTHROPIC_MESSAGES] = {"/v1/messages", "/v1/messages", true},
    [QD_OPENAI_CHAT] = {"/v1/chat/completions", "/v1/chat/completions", false},
    [QD_OPENAI_RESPONSES] = {"/v1/responses", "/v1/responses", false},
    [QD_GEMINI] = {"/v1beta/models/{model}:generateContent", "/v1beta/models/{model}:streamGenerateContent?alt=sse", false},
    [QD_BEDROCK_CONVERSE] = {"/model/{model}/converse", "/model/{model}/converse-stream", false},
    [QD_MISTRAL] = {"/v1/chat/completions", "/v1/chat/completions", false},
    [QD_OLLAMA] = {"/api/chat", "/api/chat", false},
};

static void write_envelope(qr_ctx *c, qbuf *b) {
    const qr_route *r = &k_routes[c->caps.dialect];
    const char *tpl = c->params->stream == 1 ? r->stream_path : r->path;
    qbuf path;
    qbuf_init(&path, b->a);
    for (const char *s = tpl; *s; s++) {
        if (strncmp(s, "{model}", 7) == 0) {
            static const char hex[] = "0123456789ABCDEF";
            for (const char *m = c->model; *m; m++) {
                unsigned char ch = (unsigned char)*m;
                bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                             ch == '-' || ch == '.' || ch == '_' || ch == '~';
                if (plain) qbuf_putc(&path, (char)ch);
                else { qbuf_putc(&path, '%'); qbuf_putc(&path, hex[ch >> 4]); qbuf_putc(&path, hex[ch & 15]); }
            }
            s += 6;
        } else {
            qbuf_putc(&path, *s);
        }
    }
    qw w;
    qw_init(&w, b, false);
    qw_obj_begin(&w);
    qw_key(&w, "method"); qw_strz(&w, "POST");
    qw_key(&w, "path"); qw_str(&w, path.data ? path.data : "", path.len);
    qw_key(&w, "headers");
    qw_obj_begin(&w);
    qw_key(&w, "content-type"); qw_strz(&w, "application/json");
    if (r->anthropic_headers) {
        qw_key(&w, "anthropic-version"); qw_strz(&w, "2023-06-01");
        if (c->nbetas) {
            qbuf betas;
            qbuf_init(&betas, b->a);
            for (uint32_t i = 0; i < c->nbetas; i++) {
                if (i) qbuf_putc(&betas, ',');
                qbuf_puts(&betas, c->betas[i]);
            }
            qw_key(&w, "anthropic-beta"); qw_str(&w, betas.data ? betas.data : "", betas.len);
            if (betas.oom) b->oom = true;
            qbuf_free(&betas);
        }
    }
    qw_obj_end(&w);
    qw_obj_end(&w);
    qw_dispose(&w);
    if (path.oom) b->oom = true;
    qbuf_free(&path);
}

/* ---- string helpers ---- */

qstr qr_plain(qr_ctx *c, qstr s) {
    if (!s.esc || !s.p) return s;
    size_t n = 0;
    const char *p = qstr_plain_bytes(s, &c->scratch, &n);
    if (!p) { c->w->b->oom = true; return qstr_lit(""); }
    return qstr_plain(p, n);
}

qstr qr_system_joined(qr_ctx *c) {
    const quire_transcript *t = c->t;
    uint32_t n = t->has_system ? t->nsystem : 0;
    if (n == 1 && !qstr_present(c->sys_extra)) return t->system[0].text;
    if (n == 0 && qstr_present(c->sys_extra)) return c->sys_extra;
    qbuf b;
    qbuf_init(&b, c->scratch.a);
    for (uint32_t i = 0; i < n; i++) {
        if (i) qbuf_puts(&b, "\n\n");
        qbuf_put_qstr(&b, t->system[i].text);
    }
    if (qstr_present(c->sys_extra)) {
        if (n) qbuf_puts(&b, "\n\n");
        qbuf_put(&b, c->sys_extra.p, c->sys_extra.len);
    }
    qstr r = qstr_lit("");
    char *m = b.oom ? NULL : qarena_alloc(&c->scratch, b.len + 1);
    if (m) {
        if (b.len) memcpy(m, b.data, b.len);
        m[b.len] = '\0';
        r = qstr_plain(m, b.len);
    } else {
        c->w->b->oom = true;
    }
    qbuf_free(&b);
    return r;
}

void qr_write_data_url(qr_ctx *c, qstr media_type, qstr data) {
    qbuf *b = c->w->b;
    /* a JSON string: "data:" media ";base64," data, both copied escaped */
    qw_str_esc(c->w, "", 0);
    b->len--; /* reopen the string: drop the closing quote */
    qbuf_puts(b, "data:");
    if (media_type.esc) qbuf_put(b, media_type.p, media_type.len);
    else qj_escape(b, media_type.p ? media_type.p : "", media_type.len);
    qbuf_puts(b, ";base64,");
    if (data.esc) qbuf_put(b, data.p, data.len);
    else qj_escape(b, data.p ? data.p : "", data.len);
    qbuf_putc(b, '"');
}

void qr_write_value_as_string(qr_ctx *c, qval v) {
    /* the value's exact bytes (compact when the input was compact; numbers and
     * escapes untouched), as the content of a JSON string */
    qbuf tmp;
    qbuf_init(&tmp, c->scratch.a);
    qw w2;
    qw_init(&w2, &tmp, false);
    qw_qval(&w2, v);
    qw_dispose(&w2);
    if (tmp.oom) { c->w->b->oom = true; qbuf_free(&tmp); return; }
    qw_str(c->w, tmp.data ? tmp.data : "", tmp.len);
    qbuf_free(&tmp);
}

bool qr_tool_input_ok(qr_ctx *c, uint32_t mi, uint32_t bi, const qblock *b) {
    if (b->custom || qj_type_of(b->input.doc, b->input.idx) == QJ_OBJECT) return true;
    qr_unsupported(c, mi, (int32_t)bi, "a toolCall whose input is not a JSON object (this dialect takes an object)");
    return false;
}

void qr_write_tool_input(qr_ctx *c, const qblock *b) {
    qw *w = c->w;
    if (!b->custom) { qw_qval(w, b->input); return; }
    qw_obj_begin(w);
    qw_key(w, "input"); qw_qval(w, b->input);
    qw_obj_end(w);
}

void qr_write_tool_input_string(qr_ctx *c, const qblock *b) {
    if (!b->custom) { qr_write_value_as_string(c, b->input); return; }
    qbuf tmp;
    qbuf_init(&tmp, c->scratch.a);
    qw w2;
    qw_init(&w2, &tmp, false);
    qw_obj_begin(&w2);
    qw_key(&w2, "input"); qw_qval(&w2, b->input);
    qw_obj_end(&w2);
    qw_dispose(&w2);
    if (tmp.oom) { c->w->b->oom = true; qbuf_free(&tmp); return; }
    qw_str(c->w, tmp.data ? tmp.data : "", tmp.len);
    qbuf_free(&tmp);
}

const qblock *qr_call_for(const qr_ctx *c, uint32_t before_msg, qstr call_id) {
    const quire_transcript *t = c->t;
    size_t idn = 0;
    const char *idp = call_id.p;
    char tmp[512];
    if (call_id.esc) {
        if (call_id.len >= sizeof tmp) return NULL;
        idn = qj_unescape(call_id.p, call_id.len, tmp);
        idp = tmp;
    } else {
        idn = call_id.len;
    }
    for (uint32_t k = before_msg; k-- > 0;) {
        const qmsg *m = &t->msgs[k];
        if (m->role != QR_ASSISTANT) continue;
        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *bl = &m->blocks[b];
            if (bl->type != QB_TOOL_CALL) continue;
            char t2[512];
            const char *p2 = bl->id.p;
            size_t n2 = bl->id.len;
            if (bl->id.esc) {
                if (n2 >= sizeof t2) continue;
                n2 = qj_unescape(bl->id.p, bl->id.len, t2);
                p2 = t2;
            }
            if (n2 == idn && memcmp(p2, idp, idn) == 0) return bl;
        }
    }
    return NULL;
}

qstr qr_tool_name_for(const qr_ctx *c, uint32_t before_msg, qstr call_id) {
    const qblock *b = qr_call_for(c, before_msg, call_id);
    return b ? b->name : qstr_lit("");
}

/* Writes s as it is when rule takes it, else its mapped form into m (*mn
 * bytes, also written); *plain gets the decoded text. Returns whether it
 * mapped. An escaped string never matches a rule as read: an escape is
 * outside every rule's set, so it is decoded and checked again. */
static bool write_by_rule(qr_ctx *c, qstr s, qname_rule rule, qstr *plain, char m[QCAPS_NAME_MAX + 1], size_t *mn) {
    if (!s.esc && qcaps_name_ok(rule, s.p ? s.p : "", s.len)) { qw_qstr(c->w, s); return false; }
    *plain = qr_plain(c, s);
    if (qcaps_name_ok(rule, plain->p ? plain->p : "", plain->len)) { qw_qstr(c->w, s); return false; }
    *mn = qcaps_map_name(rule, plain->p ? plain->p : "", plain->len, m);
    qw_str(c->w, m, *mn);
    return true;
}

void qr_write_call_id(qr_ctx *c, qstr id, uint32_t msg, bool call) {
    if (c->caps.tool_ids == QIDS_ALNUM9) { qw_qstr(c->w, id); return; }
    qname_rule rule = qcaps_id_rule(c->caps.dialect);
    qstr p;
    char m[QCAPS_NAME_MAX + 1];
    size_t mn;
    if (!write_by_rule(c, id, rule, &p, m, &mn) || !call) return;
    char q[140], detail[400];
    q_quote_text(q, sizeof q, p.p ? p.p : "", p.len);
    snprintf(detail, sizeof detail, "tool call id \"%s\" is sent as \"%.*s\" (this dialect takes ids of %s)", q, (int)mn, m,
             qcaps_name_rule_text(rule));
    qr_event_adjusted(c, "tool_call_id_mapped", msg, detail);
}

void qr_write_tool_name(qr_ctx *c, qstr name, uint32_t at) {
    qname_rule rule = qcaps_name_rule(c->caps.dialect);
    qstr p;
    char m[QCAPS_NAME_MAX + 1];
    size_t mn;
    if (!write_by_rule(c, name, rule, &p, m, &mn) || at == QR_NAME_CHOICE) return;
    if (at != QR_NAME_TOOLS) /* a call: reported here only when the tool list does not name it */
        for (uint32_t i = 0; c->t->has_tools && i < c->t->ntools; i++) {
            qstr tn = qr_plain(c, c->t->tools[i].name);
            if (tn.len == p.len && (p.len == 0 || memcmp(tn.p, p.p, p.len) == 0)) return;
        }
    char q[140], detail[400];
    q_quote_text(q, sizeof q, p.p ? p.p : "", p.len);
    static const char *const label[QD_COUNT_] = {[QD_ANTHROPIC_MESSAGES] = "Messages API", [QD_OPENAI_CHAT] = "OpenAI Chat",
                                                 [QD_OPENAI_RESPONSES] = "OpenAI Responses", [QD_GEMINI] = "Gemini",
                                                 [QD_BEDROCK_CONVERSE] = "Converse", [QD_MISTRAL] = "Mistral",
                                                 [QD_OLLAMA] = "Ollama"};
    snprintf(detail, sizeof detail, "tool \"%s\" is sent as \"%.*s\" (%s tool names match %s)", q, (int)mn, m,
             label[c->caps.dialect], qcaps_name_rule_text(rule));
    qr_event_adjusted(c, "tool_name_mapped", at == QR_NAME_TOOLS ? UINT32_MAX : at, detail);
}

/* ---- result ---- */

void quire_render_result_free(quire_render_result *r) {
    if (!r) return;
    quire_bytes_free(&r->request);
    quire_bytes_free(&r->events);
    quire_bytes_free(&r->envelope);
    quire_state_free(r->state);
    r->state = NULL;
}

/* ---- transcript checks every dialect needs (DESIGN principle 4): the
 * pairing and id rules are qtr_check_from (core/transcript.c, shared with
 * compact); a session renders with the messages it checked on earlier turns
 * skipped and their toolCall ids kept in the memo (below). */

/* The id set of the checked prefix (memo.h): inserts the calls of the
 * assistant messages in [i, j). */
static void checked_insert(qr_checked *ck, const quire_transcript *t, uint32_t i, uint32_t j) {
    for (uint32_t k = i; k < j; k++) {
        if (t->msgs[k].role != QR_ASSISTANT) continue;
        for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) {
            const qblock *bl = &t->msgs[k].blocks[b];
            if (bl->type != QB_TOOL_CALL) continue;
            uint32_t h = (uint32_t)qtr_id_hash(bl->id) & (ck->capids - 1);
            while (ck->ids[h].used) h = (h + 1) & (ck->capids - 1);
            ck->ids[h].used = true;
            ck->ids[h].id = bl->id;
            ck->ids[h].msg = k;
            ck->nids++;
        }
    }
}

static const qr_idslot *checked_find(const qr_checked *ck, qstr id) {
    if (!ck || !ck->capids) return NULL;
    uint32_t h = (uint32_t)qtr_id_hash(id) & (ck->capids - 1);
    while (ck->ids[h].used) {
        if (qtr_ids_eq(ck->ids[h].id, id)) return &ck->ids[h];
        h = (h + 1) & (ck->capids - 1);
    }
    return NULL;
}

static bool checked_seen(const void *ud, qstr id) { return checked_find(ud, id) != NULL; }

static uint32_t calls_in(const quire_transcript *t, uint32_t i, uint32_t j) {
    uint32_t n = 0;
    for (uint32_t k = i; k < j; k++)
        if (t->msgs[k].role == QR_ASSISTANT)
            for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) n += t->msgs[k].blocks[b].type == QB_TOOL_CALL;
    return n;
}

/* memo (may be NULL): the messages it has checked for this transcript are
 * not checked again; their errors were none, so the first error of the
 * whole transcript is the first one after them. */
static quire_status check_transcript(qr_ctx *c, qr_memo *memo) {
    const quire_transcript *t = c->t;
    /* ids must be unique in one assistant turn everywhere; across the whole
     * request for the dialects that match results by id request-wide */
    bool global = c->caps.dialect == QD_ANTHROPIC_MESSAGES || c->caps.dialect == QD_BEDROCK_CONVERSE;
    qr_checked *ck = memo ? qr_memo_checked(memo) : NULL;
    uint32_t from = 0;
    if (ck) {
        if (ck->global == global && qr_scan_holds(ck->t, ck->n, ck->last, t))
            from = ck->n;
        else {
            qr_checked_reset(memo);
            ck->t = t;
            ck->global = global;
        }
    }
    quire_status st = qtr_check_from(t, from, global, false, checked_seen, ck, &c->scratch, c->err);
    if (st || !ck) return st;
    /* what is final: everything before the last assistant message (its
     * results may still grow); all of it when none follows the checked part */
    uint32_t upto = t->nmsgs;
    for (uint32_t k = t->nmsgs; k-- > from;)
        if (t->msgs[k].role == QR_ASSISTANT) { upto = k; break; }
    if (upto > from) {
        if (global) {
            uint32_t more = calls_in(t, from, upto);
            if (more && (uint64_t)(ck->nids + more) * 2 > ck->capids) {
                if (!qr_checked_grow(memo, ck->nids + more)) { qr_checked_reset(memo); return QUIRE_OK; }
                checked_insert(ck, t, 0, from);
            }
            if (more) checked_insert(ck, t, from, upto);
        }
        ck->n = upto;
        ck->last = t->msgs[upto - 1].blocks;
    }
    return QUIRE_OK;
}


/* ---- provider content rules applied before encoding (docs/providers.md,
 * "Provider rules") ----
 * Rules the dialect encoders would otherwise break in the body:
 *   - blank text (empty or whitespace only) on Anthropic and Bedrock, empty
 *     text (not carrying a signature) on Gemini: the block is dropped
 *     (content_dropped, reason blank_text);
 *   - a thinking / redactedThinking block signed by another provider (its
 *     `provider` differs from the target's): dropped (reason foreign_signature),
 *     every dialect; an unsigned thinking block on Anthropic and Bedrock
 *     (reason unsigned_thinking); thinking on a row without thinking there
 *     (reason not_renderable, as the encoders report it elsewhere);
 *   - the final assistant message on Anthropic and Bedrock may not end with
 *     whitespace: its last text block is trimmed (request_adjusted,
 *     trimmed_trailing_whitespace);
 *   - a message left with no block: an assistant message is dropped
 *     (request_adjusted, dropped_empty_message; the user turns around it
 *     merge); any other message is an error (with --lossy, dropped with the
 *     same event).
 * The encoders then see a view of the transcript: same message indices,
 * changed messages hold their kept blocks (block indices of a changed
 * message count kept blocks). */

static bool is_blank(qstr s) {
    /* JSON-escaped input: \n \t \r escapes are whitespace too */
    for (uint32_t i = 0; i < s.len; i++) {
        char ch = s.p[i];
        if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') continue;
        if (s.esc && ch == '\\' && i + 1 < s.len && (s.p[i + 1] == 'n' || s.p[i + 1] == 't' || s.p[i + 1] == 'r')) {
            i++;
            continue;
        }
        return false;
    }
    return true;
}

static void ev_drop(qr_ctx *c, uint32_t msg, uint32_t block, const char *reason, const char *detail) {
    ev_content_dropped(c, msg, (int32_t)block, -1, reason, detail);
}

/* Whether the target's encoder re-emits an opaque or server tool block (the
 * encoders' own rule, mirrored so that a message left with nothing is left out
 * or refused here, never written as an empty content): opaque items go back to
 * the dialect that owns them (the request's provider name, or the dialect's
 * name), never to Chat, Mistral or Ollama, which have no item form; server
 * tool blocks only to Anthropic. */
static bool artefact_carried(const qr_ctx *c, const qblock *b) {
    qdialect d = c->caps.dialect;
    bool own = qr_is_provider(c, b->provider);
    if (b->type == QB_SERVER_TOOL_CALL || b->type == QB_SERVER_TOOL_RESULT) return d == QD_ANTHROPIC_MESSAGES && own;
    if (d == QD_OPENAI_CHAT || d == QD_MISTRAL || d == QD_OLLAMA) return false;
    return own || (d != QD_ANTHROPIC_MESSAGES && qstr_eq(b->provider, qdialect_name(d)));
}
static bool artefact_dropped(const qr_ctx *c, const qblock *b) {
    return (b->type == QB_OPAQUE || b->type == QB_SERVER_TOOL_CALL || b->type == QB_SERVER_TOOL_RESULT) &&
           !artefact_carried(c, b);
}

/* content_dropped for a block of the system prompt (systemIndex). */
static void ev_drop_system(qr_ctx *c, uint32_t i, const char *reason, const char *detail) {
    if (!c->events) return;
    qw w;
    ev_begin(c, &w, "content_dropped");
    qw_key(&w, "systemIndex"); qw_int(&w, i);
    qw_key(&w, "reason"); qw_strz(&w, reason);
    qw_key(&w, "detail"); qw_strz(&w, detail);
    ev_end(c, &w);
}

/* The view of the transcript the encoders see (made on the first change). */
static quire_status view_of(qr_ctx *c, quire_transcript **viewp) {
    if (*viewp) return QUIRE_OK;
    if (c->memo_view) { /* the memo's, in line with the transcript already (memo.h) */
        *viewp = c->memo_view;
        return QUIRE_OK;
    }
    const quire_transcript *t = c->t;
    quire_transcript *view = qarena_alloc(&c->scratch, sizeof *view);
    qmsg *msgs = qarena_alloc(&c->scratch, (size_t)(t->nmsgs ? t->nmsgs : 1) * sizeof(qmsg));
    if (!view || !msgs) return q_oom(c->err);
    *view = *t;
    memcpy(msgs, t->msgs, (size_t)t->nmsgs * sizeof(qmsg));
    view->msgs = msgs;
    *viewp = view;
    return QUIRE_OK;
}

/* Blank system blocks (Anthropic, Bedrock; empty ones only for Gemini's
 * systemInstruction, whose parts may be whitespace but not empty): dropped
 * with an event; a system prompt left with no block is not written. */
static quire_status rules_system(qr_ctx *c, quire_transcript **viewp, bool empty_only) {
    const quire_transcript *t = c->t;
    if (!t->has_system || t->nsystem == 0) return QUIRE_OK;
    uint32_t blank = 0;
    for (uint32_t i = 0; i < t->nsystem; i++)
        blank += empty_only ? t->system[i].text.len == 0 : is_blank(t->system[i].text);
    if (!blank) return QUIRE_OK;
    qblock *kept = qarena_alloc(&c->scratch, (size_t)t->nsystem * sizeof(qblock));
    if (!kept) return q_oom(c->err);
    uint32_t nk = 0;
    for (uint32_t i = 0; i < t->nsystem; i++) {
        if (empty_only ? t->system[i].text.len == 0 : is_blank(t->system[i].text))
            ev_drop_system(c, i, "blank_text",
                           empty_only ? "an empty system text part is rejected by this provider"
                                      : "a system text block with no visible character is rejected by this provider");
        else kept[nk++] = t->system[i];
    }
    quire_status st = view_of(c, viewp);
    if (st) return st;
    (*viewp)->system = kept;
    (*viewp)->nsystem = nk;
    (*viewp)->system_is_string = (*viewp)->system_is_string && nk == 1;
    return QUIRE_OK;
}

/* Gemini rows without a system instruction take the system prompt as a text
 * part of the first user content: an empty prompt would be an empty part,
 * which Gemini rejects; it is dropped with an event instead (a prompt of
 * several blocks is joined with blank lines, never empty). */
static quire_status rules_system_folded(qr_ctx *c, quire_transcript **viewp) {
    const quire_transcript *t = c->t;
    if (!t->has_system || t->nsystem != 1 || t->system[0].text.len != 0 || qstr_present(c->sys_extra))
        return QUIRE_OK;
    ev_drop_system(c, 0, "blank_text",
                   "an empty system prompt would be an empty text part of the first user content, which this "
                   "provider rejects");
    quire_status st = view_of(c, viewp);
    if (st) return st;
    (*viewp)->nsystem = 0;
    return QUIRE_OK;
}

/* The text a tool result whose content is empty carries where the provider
 * needs one: any result on Bedrock (a toolResult needs content), an error
 * result on Anthropic ("content cannot be empty if is_error is true");
 * docs/providers.md, "Provider rules". */
#define QR_EMPTY_RESULT_TEXT "(no output)"

/* The block as changed: bl copied into *nb at the first change (*copied);
 * most tool results need none, and a block is a few hundred bytes. */
static qblock *nb_take(const qblock *bl, qblock *nb, bool *copied) {
    if (!*copied) {
        *nb = *bl;
        *copied = true;
    }
    return nb;
}

/* A tool result's blank text (Anthropic, Bedrock): blank text parts are
 * dropped (content_dropped blank_text, partIndex), and on Bedrock a blank
 * string content too; a result left with no content is sent with an empty
 * content on Anthropic when it is not an error, and with the placeholder
 * text on Bedrock and for an Anthropic error result (request_adjusted
 * empty_tool_result_placeholder). Returns whether *nb changed. */
static bool rules_tool_result(qr_ctx *c, const qblock *bl, qblock *nb, bool *copied, uint32_t k, uint32_t b, bool *oom) {
    bool changed = false;
    if (bl->content_is_string) {
        /* Anthropic takes a string content as it is (Claude Code sends "" for
         * a silent tool); Converse makes a text block of it */
        if (c->caps.dialect == QD_ANTHROPIC_MESSAGES && bl->is_error == 1 && bl->content_text.len == 0) {
            nb_take(bl, nb, copied)->content_text = qstr_lit(QR_EMPTY_RESULT_TEXT);
            qr_event_adjusted(c, "empty_tool_result_placeholder", k,
                              "an error tool result with no content carries the text \"" QR_EMPTY_RESULT_TEXT
                              "\" (this provider needs content when is_error is true)");
            return true;
        }
        if (c->caps.dialect != QD_BEDROCK_CONVERSE || !is_blank(bl->content_text)) return false;
        if (bl->content_text.len)
            ev_content_dropped(c, k, (int32_t)b, 0, "blank_text", "a tool result text with no visible character is rejected by this provider");
        qblock *o = nb_take(bl, nb, copied);
        o->content_is_string = false;
        o->content_text = (qstr){0};
        o->parts = NULL;
        o->nparts = 0;
        changed = true;
    } else {
        uint32_t blank = 0;
        for (uint32_t i = 0; i < bl->nparts; i++) blank += bl->parts[i].type == QB_TEXT && is_blank(bl->parts[i].text);
        if (blank) {
            qblock *parts = qarena_alloc(&c->scratch, (size_t)bl->nparts * sizeof(qblock));
            if (!parts) { *oom = true; return false; }
            uint32_t np = 0;
            for (uint32_t i = 0; i < bl->nparts; i++) {
                if (bl->parts[i].type == QB_TEXT && is_blank(bl->parts[i].text))
                    ev_content_dropped(c, k, (int32_t)b, (int32_t)i, "blank_text",
                                       "a tool result text with no visible character is rejected by this provider");
                else parts[np++] = bl->parts[i];
            }
            qblock *o = nb_take(bl, nb, copied);
            o->parts = parts;
            o->nparts = np;
            changed = true;
        }
    }
    const qblock *cur = *copied ? nb : bl;
    if (cur->nparts == 0 && !cur->content_is_string && c->caps.dialect == QD_BEDROCK_CONVERSE) {
        qblock *o = nb_take(bl, nb, copied);
        o->content_is_string = true;
        o->content_text = qstr_lit(QR_EMPTY_RESULT_TEXT);
        qr_event_adjusted(c, "empty_tool_result_placeholder", k,
                          "a tool result with no content carries the text \"" QR_EMPTY_RESULT_TEXT "\" (Converse needs content)");
        changed = true;
    } else if (cur->nparts == 0 && !cur->content_is_string && c->caps.dialect == QD_ANTHROPIC_MESSAGES && bl->is_error == 1) {
        qblock *o = nb_take(bl, nb, copied);
        o->content_is_string = true;
        o->content_text = qstr_lit(QR_EMPTY_RESULT_TEXT);
        qr_event_adjusted(c, "empty_tool_result_placeholder", k,
                          "an error tool result with no content carries the text \"" QR_EMPTY_RESULT_TEXT
                          "\" (this provider needs content when is_error is true)");
        changed = true;
    }
    return changed;
}

/* A thinking block that does not say who signed it (older transcripts): its
 * signature goes only to the dialects of its shape. quire holds a Gemini
 * thoughtSignature on an empty thinking block, a Claude signature on the
 * thinking text: an empty signed block goes to Gemini only, a signed block
 * with text to Anthropic and Bedrock only; the other dialects that write
 * signatures drop it (foreign_signature). Dialects that never send a
 * signature are not concerned. */
static bool unrecorded_foreign(const qr_ctx *c, const qblock *bl) {
    if (qstr_present(bl->provider)) return false;
    qdialect d = c->caps.dialect;
    bool claude = d == QD_ANTHROPIC_MESSAGES || d == QD_BEDROCK_CONVERSE;
    if (bl->type == QB_REDACTED_THINKING) return d == QD_GEMINI; /* Claude's encrypted form */
    if (bl->type != QB_THINKING || !qstr_present(bl->signature)) return false;
    bool gemini_shape = bl->text.len == 0;
    if (gemini_shape) return claude;
    return d == QD_GEMINI;
}

/* Tool call ids a row restricts (toolCallIds "alnum9": exactly 9 characters
 * [a-zA-Z0-9], Mistral): an id of that form is kept; any other id is sent as
 * 9 base-62 digits of the FNV-1a 64 of its bytes (plus a counter on a clash
 * with an id already taken in this request, earlier ids first), the same in
 * the call and in its result; request_adjusted tool_call_id_mapped names each
 * pair. */
typedef struct qr_idmap {
    qstr from;      /* plain bytes */
    char to[10];
    bool used;
} qr_idmap;
typedef struct qr_ids {
    qr_idmap *slots;
    uint32_t cap;
    qr_idmap **taken; /* open addressing on the mapped ids */
} qr_ids;

static bool alnum9(const char *p, size_t n) {
    if (n != 9) return false;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))) return false;
    }
    return true;
}
static uint64_t fnv64(const char *p, size_t n, uint32_t salt) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ull; }
    for (uint32_t s = salt; s; s >>= 8) { h ^= (unsigned char)(s & 0xff); h *= 1099511628211ull; }
    return h;
}
static uint32_t str_hash(const char *p, size_t n) { return (uint32_t)(fnv64(p, n, 0) >> 32); }

static qr_idmap *ids_find(qr_ids *m, const char *p, size_t n) {
    uint32_t h = str_hash(p, n) & (m->cap - 1);
    while (m->slots[h].used) {
        if (m->slots[h].from.len == n && memcmp(m->slots[h].from.p, p, n) == 0) return &m->slots[h];
        h = (h + 1) & (m->cap - 1);
    }
    return &m->slots[h];
}
static bool ids_taken(qr_ids *m, const char *to) {
    uint32_t h = str_hash(to, 9) & (m->cap - 1);
    while (m->taken[h]) {
        if (memcmp(m->taken[h]->to, to, 9) == 0) return true;
        h = (h + 1) & (m->cap - 1);
    }
    return false;
}
static void ids_take(qr_ids *m, qr_idmap *e) {
    uint32_t h = str_hash(e->to, 9) & (m->cap - 1);
    while (m->taken[h]) h = (h + 1) & (m->cap - 1);
    m->taken[h] = e;
}

/* The mapped id of a call id (plain bytes; NULL when it is kept or on OOM). */
static const char *ids_map(qr_ctx *c, qr_ids *m, qstr id, bool *oom) {
    qstr p = qr_plain(c, id);
    if (!p.p && id.len) { *oom = true; return NULL; }
    qr_idmap *e = ids_find(m, p.p ? p.p : "", p.len);
    if (!e->used) {
        e->used = true;
        e->from = p;
        if (alnum9(p.p, p.len) && !ids_taken(m, p.p)) {
            memcpy(e->to, p.p, 9);
        } else {
            static const char k_b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
            for (uint32_t salt = 0;; salt++) {
                uint64_t h = fnv64(p.p ? p.p : "", p.len, salt);
                for (int i = 0; i < 9; i++) { e->to[i] = k_b62[h % 62]; h /= 62; }
                if (!ids_taken(m, e->to)) break;
            }
            char q[96], detail[200];
            q_quote_text(q, sizeof q, p.p ? p.p : "", p.len);
            snprintf(detail, sizeof detail, "tool call id \"%s\" is sent as \"%.9s\" (this model takes ids of 9 letters and digits)", q, e->to);
            /* no message index: the id names the pair (as tool_name_mapped does) */
            qr_event_adjusted(c, "tool_call_id_mapped", UINT32_MAX, detail);
        }
        e->to[9] = '\0';
        ids_take(m, e);
    }
    if (e->from.len == 9 && memcmp(e->to, e->from.p, 9) == 0) return NULL;
    return e->to;
}

static quire_status ids_init(qr_ctx *c, qr_ids *m) {
    const quire_transcript *t = c->t;
    uint32_t n = 0;
    for (uint32_t k = 0; k < t->nmsgs; k++)
        for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) n += t->msgs[k].blocks[b].type == QB_TOOL_CALL;
    m->cap = 16;
    while (m->cap < 2 * (uint64_t)n + 2) m->cap *= 2;
    m->slots = qarena_alloc(&c->scratch, (size_t)m->cap * sizeof *m->slots);
    m->taken = qarena_alloc(&c->scratch, (size_t)m->cap * sizeof *m->taken);
    if (!m->slots || !m->taken) return q_oom(c->err);
    memset(m->slots, 0, (size_t)m->cap * sizeof *m->slots);
    memset(m->taken, 0, (size_t)m->cap * sizeof *m->taken);
    return QUIRE_OK;
}

/* The rules for message k (one step of a full pass); *chg: it changed (the
 * view *viewp holds it). */
static quire_status rules_msg(qr_ctx *c, uint32_t k, quire_transcript **viewp, bool claude_rules, uint32_t last,
                              bool final_assistant, bool map_ids, qr_ids *ids, bool *chg) {
    const quire_transcript *t = c->t;
    *chg = false;
    const qmsg *m = &t->msgs[k];
    qblock *kept = NULL;
    uint32_t nk = 0;
    bool changed = false, pure = true; /* pure: the same kept blocks every turn (no trim, no id map) */
    /* Claude: the thinking of an assistant message comes first or not at all;
     * the final assistant message holds none unless thinking is enabled */
    bool claude_assistant = claude_rules && m->role == QR_ASSISTANT;
    bool thinking_off = claude_assistant && k == last && final_assistant && !qval_present(c->params->budget_tokens);
    int first_kept = -1; /* 1: the first block kept is thinking, 0: another block */
    for (uint32_t b = 0; b < m->nblocks; b++) {
        const qblock *bl = &m->blocks[b];
        const char *reason = NULL, *detail = NULL;
        bool think = bl->type == QB_THINKING || bl->type == QB_REDACTED_THINKING;
        if (claude_rules && bl->type == QB_TEXT && !qr_is_instruction(m) && is_blank(bl->text)) {
            reason = "blank_text";
            detail = "a text block with no visible character is rejected by this provider";
        } else if (c->caps.dialect == QD_GEMINI && bl->type == QB_TEXT && bl->text.len == 0 && !qr_is_instruction(m) &&
                   !(b > 0 && m->blocks[b - 1].type == QB_THINKING && m->blocks[b - 1].text.len == 0 &&
                     qstr_present(m->blocks[b - 1].signature))) {
            /* Gemini: an empty text part is rejected unless it carries a thoughtSignature */
            reason = "blank_text";
            detail = "an empty text part is rejected by this provider";
        } else if ((bl->type == QB_THINKING || bl->type == QB_REDACTED_THINKING) && qstr_present(bl->provider) &&
                   !qstr_eq(bl->provider, c->ro->provider)) {
            reason = "foreign_signature";
            detail = "thinking signed by another provider is only sent back to that provider";
        } else if (unrecorded_foreign(c, bl)) {
            reason = "foreign_signature";
            detail = "thinking without a recorded provider: its signature has the form of another provider's";
        } else if (claude_rules && (bl->type == QB_THINKING || bl->type == QB_REDACTED_THINKING) && !c->caps.thinking) {
            reason = "not_renderable";
            detail = "thinking block: the row has no thinking";
        } else if (claude_rules && bl->type == QB_THINKING && !qstr_present(bl->signature)) {
            reason = "unsigned_thinking";
            detail = "a thinking block without its signature is rejected by this provider";
        } else if (think && thinking_off) {
            reason = "thinking_disabled";
            detail = "the final assistant message may hold thinking only when the request enables thinking";
        } else if (think && claude_assistant && first_kept == 0) {
            reason = "misplaced_thinking";
            detail = "an assistant message that holds thinking must start with it: thinking after another block is rejected";
        }
        if (!reason && first_kept < 0) first_kept = think;
        qblock nb; /* the block as changed: copied only when a rule may change it */
        bool mod = false, oom = false, copied = false;
        if (!reason && claude_rules && bl->type == QB_TOOL_RESULT) mod = rules_tool_result(c, bl, &nb, &copied, k, b, &oom);
        if (!reason && map_ids && (bl->type == QB_TOOL_CALL || bl->type == QB_TOOL_RESULT)) {
            const char *to = ids_map(c, ids, bl->type == QB_TOOL_CALL ? bl->id : bl->tool_call_id, &oom);
            if (to) {
                if (!copied) nb = *bl;
                copied = true;
                if (bl->type == QB_TOOL_CALL) nb.id = qstr_plain(to, 9);
                else nb.tool_call_id = qstr_plain(to, 9);
                mod = true;
            }
        }
        if (oom) return q_oom(c->err);
        if (mod && !reason && map_ids) pure = false;
        if (reason) ev_drop(c, k, b, reason, detail);
        if ((reason || mod) && !changed) {
            changed = true;
            kept = qarena_alloc(&c->scratch, (size_t)(m->nblocks ? m->nblocks : 1) * sizeof(qblock));
            if (!kept) return q_oom(c->err);
            if (b) memcpy(kept, m->blocks, (size_t)b * sizeof(qblock));
            nk = b;
        }
        if (reason) continue;
        if (changed) kept[nk++] = copied ? nb : *bl;
    }
    /* what is left only the encoder would drop (opaque and server tool blocks
     * of another provider, which no rule above touches): dropped here, so
     * that the message is left out or refused, never written empty */
    uint32_t nart = 0;
    for (uint32_t b = 0; b < m->nblocks; b++) nart += artefact_dropped(c, &m->blocks[b]);
    bool artefacts_only = nart && nart == (changed ? nk : m->nblocks);
    if (artefacts_only) {
        for (uint32_t b = 0; b < m->nblocks; b++)
            if (artefact_dropped(c, &m->blocks[b]))
                ev_drop(c, k, b, "not_renderable",
                        m->blocks[b].type == QB_OPAQUE ? "opaque item of another provider"
                                                       : "server tool block of another provider: no form in this dialect");
        if (!changed) {
            kept = qarena_alloc(&c->scratch, sizeof(qblock));
            if (!kept) return q_oom(c->err);
        }
        changed = true;
        nk = 0;
    }
    const qblock *blocks = changed ? kept : m->blocks;
    uint32_t nb = changed ? nk : m->nblocks;
    if (k == last && final_assistant && nb && blocks[nb - 1].type == QB_TEXT) {
        qstr p = qr_plain(c, blocks[nb - 1].text);
        uint32_t n = p.len;
        while (n && (p.p[n - 1] == ' ' || p.p[n - 1] == '\n' || p.p[n - 1] == '\t' || p.p[n - 1] == '\r')) n--;
        if (n != p.len) {
            if (!changed) {
                changed = true;
                kept = qarena_alloc(&c->scratch, (size_t)m->nblocks * sizeof(qblock));
                if (!kept) return q_oom(c->err);
                memcpy(kept, m->blocks, (size_t)m->nblocks * sizeof(qblock));
                nk = m->nblocks;
            }
            kept[nk - 1].text = qstr_plain(p.p, n);
            pure = false;
            qr_event_adjusted(c, "trimmed_trailing_whitespace", k,
                              "the final assistant message may not end with whitespace: its last text block is trimmed");
        }
    }
    if (!changed) return QUIRE_OK;
    *chg = true;
    quire_status vst = view_of(c, viewp);
    if (vst) return vst;
    if (c->memo_view) {
        if (!qr_rules_view_set(c->memo, k, kept, nk, pure)) return q_oom(c->err);
    } else {
        qmsg *vm = &(*viewp)->msgs[k];
        vm->blocks = kept;
        vm->nblocks = nk;
        vm->content_is_string = vm->content_is_string && nk == 1;
    }
    if (nk == 0) {
        /* provider artefacts go with an event whatever --lossy says, and so does
         * a message they alone made up */
        if (m->role != QR_ASSISTANT && !c->ro->lossy && !artefacts_only) {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/messages/%u/content", m->src_index);
            return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr,
                            "no block of this %s message can be carried to %s (%s): nothing would be left "
                            "(use --lossy to drop the message with an event)",
                            qrole_name(m->role), qdialect_name(c->caps.dialect), c->model);
        }
        qr_event_adjusted(c, "dropped_empty_message", k,
                          "no block of this message can be carried: the message is left out");
    }
    return QUIRE_OK;
}

static quire_status apply_rules_from(qr_ctx *c, quire_transcript **viewp, qr_rules *ru) {
    const quire_transcript *t = c->t;
    bool claude_rules = c->caps.dialect == QD_ANTHROPIC_MESSAGES || c->caps.dialect == QD_BEDROCK_CONVERSE;
    *viewp = NULL;
    quire_status st = claude_rules ? rules_system(c, viewp, false)
                      : c->caps.dialect == QD_GEMINI && c->caps.system == QSYS_FIRST_USER ? rules_system_folded(c, viewp)
                      : c->caps.dialect == QD_GEMINI                                     ? rules_system(c, viewp, true)
                                                                                        : QUIRE_OK;
    if (st) return st;
    qr_ids ids = {0};
    bool map_ids = c->caps.tool_ids == QIDS_ALNUM9;
    if (map_ids && (st = ids_init(c, &ids))) return st;
    uint32_t last = t->nmsgs ? t->nmsgs - 1 : 0;
    uint32_t gf;
    bool final_assistant = claude_rules && t->nmsgs && t->msgs[last].role == QR_ASSISTANT &&
                           qr_groups_at(c, last, &gf) == 0 && qr_groups_at(c, QR_TAIL, &gf) == 0;
    /* with a memo: the messages it has seen are final but the last one, and
     * only those the rules changed are visited again (in order, so events
     * keep the order of a full pass) */
    uint32_t from = 0;
    bool chg;
    if (ru) {
        for (uint32_t q = 0; q < ru->nchg; q++) {
            if ((st = rules_msg(c, ru->chg[q], viewp, claude_rules, last, final_assistant, map_ids, &ids, &chg))) return st;
            if (chg && ru->chg[q] < c->changed_from) c->changed_from = ru->chg[q];
        }
        from = ru->n;
    }
    for (uint32_t k = from; k < t->nmsgs; k++) {
        if ((st = rules_msg(c, k, viewp, claude_rules, last, final_assistant, map_ids, &ids, &chg))) return st;
        if (!chg) continue;
        if (k < c->changed_from) c->changed_from = k;
        if (ru && k < last && !qr_rules_push(c->memo, k)) return q_oom(c->err);
    }
    if (ru && t->nmsgs > 1) {
        ru->n = last;
        ru->last = t->msgs[last - 1].blocks;
    }
    return QUIRE_OK;
}

static quire_status apply_rules(qr_ctx *c, quire_transcript **viewp) {
    const quire_transcript *t = c->t;
    c->changed_from = UINT32_MAX;
    /* the memo's record of the rules (memo.h); not for rows that map tool
     * call ids (the map is built over the whole transcript, in order) */
    qr_rules *ru = c->memo && c->caps.tool_ids != QIDS_ALNUM9 ? qr_memo_rules(c->memo) : NULL;
    if (ru) {
        bool thinking = c->caps.thinking != 0;
        if (!(qr_scan_holds(ru->t, ru->n, ru->last, t) &&
              ru->dialect == (int)c->caps.dialect && ru->thinking == thinking && strcmp(ru->provider, c->ro->provider) == 0)) {
            ru->t = NULL;
            ru->n = ru->nchg = 0;
            /* other rules: other kept blocks (the old copies stay allocated) */
            if (ru->capv) memset(ru->kblk, 0, (size_t)ru->capv * sizeof *ru->kblk);
            if (strlen(c->ro->provider) < sizeof ru->provider) {
                ru->t = t;
                ru->dialect = (int)c->caps.dialect;
                ru->thinking = thinking;
                snprintf(ru->provider, sizeof ru->provider, "%s", c->ro->provider);
            }
        }
        if (!ru->t) ru = NULL;
    }
    /* the memo's view: the messages changed last time are restored first;
     * the first message whose blocks differ from last time's view is where
     * the memo's reused prefix ends (qr_memo_prefix) */
    uint32_t *old = NULL, nold = 0;
    qblock **oldb = NULL;
    c->memo_view = NULL;
    if (ru) {
        if (!qr_rules_view_sync(c->memo, t, &c->scratch, &old, &oldb, &nold)) {
            ru->t = NULL;
            return q_oom(c->err);
        }
        c->memo_view = &ru->vt;
    }
    quire_status st = apply_rules_from(c, viewp, ru);
    c->memo_view = NULL;
    if (st && ru) ru->t = NULL; /* forget: the next render applies them to every message */
    if (st || !ru) return st;
    c->changed_from = UINT32_MAX;
    uint32_t q = 0;
    for (uint32_t p = 0; p < ru->nvchg; p++) {
        uint32_t k = ru->vchg[p];
        while (q < nold && old[q] < k) { /* changed then, not now */
            if (old[q] < c->changed_from) c->changed_from = old[q];
            q++;
        }
        bool same = q < nold && old[q] == k && oldb[q] == ru->vmsgs[k].blocks && ru->kblk[k] == ru->vmsgs[k].blocks;
        if (q < nold && old[q] == k) q++;
        if (!same && k < c->changed_from) c->changed_from = k;
    }
    if (q < nold && old[q] < c->changed_from) c->changed_from = old[q];
    return QUIRE_OK;
}

typedef quire_status (*qr_encoder)(qr_ctx *c);
static const qr_encoder k_encoders[QD_COUNT_] = {
    [QD_ANTHROPIC_MESSAGES] = qr_encode_anthropic,
    [QD_OPENAI_CHAT] = qr_encode_openai_chat,
    [QD_OPENAI_RESPONSES] = qr_encode_openai_responses,
    [QD_GEMINI] = qr_encode_gemini,
    [QD_BEDROCK_CONVERSE] = qr_encode_bedrock,
    [QD_MISTRAL] = qr_encode_mistral,
    [QD_OLLAMA] = qr_encode_ollama,
};

void qr_memo_prepare(qr_memo *m, qr_ctx *c, bool use);
bool qr_memo_finish(qr_memo *m, qr_ctx *c, qbuf *out);

/* The body written into the caller's buffer (quire_render_options.into):
 * the body's qbuf allocates through this allocator, which hands out the
 * caller's buffer while it is big enough and moves the body to the real
 * allocator's memory when it outgrows it. */
typedef struct into_alloc {
    quire_allocator self;
    const quire_allocator *real;
    char *buf;
    size_t cap;
} into_alloc;

static void *into_malloc(size_t n, void *ud) {
    into_alloc *ia = ud;
    return q_malloc(ia->real, n);
}

static void *into_realloc(void *p, size_t old_n, size_t new_n, void *ud) {
    into_alloc *ia = ud;
    if (p != ia->buf) return q_realloc(ia->real, p, old_n, new_n);
    if (new_n <= ia->cap) return p;
    char *d = q_malloc(ia->real, new_n);
    if (d) memcpy(d, p, old_n < new_n ? old_n : new_n);
    return d;
}

static void into_free(void *p, size_t n, void *ud) {
    into_alloc *ia = ud;
    if (p != ia->buf) q_free(ia->real, p, n);
}

static void keep_free(void *p, size_t n, void *ud) {
    (void)p;
    (void)n;
    (void)ud;
}

/* What a body left in the caller's buffer is freed with: nothing. */
static const quire_allocator k_keep_alloc = {NULL, NULL, keep_free, NULL};

static quire_status render_impl(const quire_transcript *t, const quire_state *state, const quire_render_options *ro,
                                const quire_options *opts, qr_memo *memo, quire_render_result *res,
                                quire_error *err);

quire_status quire_render(const quire_transcript *t, const quire_state *state, const quire_render_options *ro,
                          const quire_options *opts, quire_render_result *res, quire_error *err) {
    return render_impl(t, state, ro, opts, NULL, res, err);
}

quire_status qr_render_memo(const quire_transcript *t, const quire_state *state, const quire_render_options *ro,
                            const quire_options *opts, qr_memo *m, quire_render_result *res, quire_error *err) {
    return render_impl(t, state, ro, opts, m, res, err);
}

/* Sizes the body buffer once from the JSON the transcript was read from: a
 * compact body carries about the same bytes (the text is copied through),
 * so one allocation replaces a chain of growing reallocations and their
 * copies. Pages never written are never touched, so a generous guess costs
 * address space, not memory. Without the memory, the buffer grows as usual. */
static void reserve_body(qbuf *out, const quire_transcript *t, bool pretty) {
    size_t src = 0;
    for (uint32_t i = 0; i < t->ndocs; i++) src += t->docs[i]->len;
    if (src < 4096) return;
    size_t want = src + src / 8 + 4096;
    if (pretty) want += src / 2;
    char *d = q_malloc(out->a, want);
    if (!d) return;
    out->data = d;
    out->cap = want;
}

static quire_status render_impl(const quire_transcript *t, const quire_state *state, const quire_render_options *ro,
                                const quire_options *opts, qr_memo *memo, quire_render_result *res,
                                quire_error *err) {
    memset(res, 0, sizeof *res);
    if (!t || !ro) return q_err(err, QUIRE_E_INVALID, "quire_render: transcript and options are required");
    qr_ctx c;
    memset(&c, 0, sizeof c);
    const char *model;
    quire_status st0 = qcaps_target(ro->caps, ro->provider, ro->model, &model, &c.caps, NULL, NULL, err);
    if (st0) return st0;
    const quire_allocator *a = q_alloc_of(opts);
    /* request parameters (DESIGN 13) */
    qparams params;
    bool has_base = ro->size >= offsetof(quire_render_options, params_base_len) + sizeof ro->params_base_len &&
                    ro->params_base;
    bool has_params = ro->size >= offsetof(quire_render_options, params_override_len) + sizeof ro->params_override_len &&
                      (ro->params || ro->params_override || has_base);
    if (has_params) {
        quire_status pst = qp_parse(&params, has_base ? ro->params_base : NULL, has_base ? ro->params_base_len : 0,
                                    ro->params, ro->params_len, ro->params_override, ro->params_override_len, a, err);
        if (pst) return pst;
    } else {
        memset(&params, 0, sizeof params);
        params.parallel_tool_calls = params.stream = params.format_strict = -1;
    }
    qbuf out;
    qbuf_init(&out, a);
    into_alloc ia;
    bool into = !memo && ro->size >= offsetof(quire_render_options, into_cap) + sizeof ro->into_cap && ro->into &&
                ro->into_cap > 0;
    if (into) {
        ia.self.malloc_fn = into_malloc;
        ia.self.realloc_fn = into_realloc;
        ia.self.free_fn = into_free;
        ia.self.ud = &ia;
        ia.real = a;
        ia.buf = ro->into;
        ia.cap = ro->into_cap;
        out.a = &ia.self;
        out.data = ro->into;
        out.cap = ro->into_cap;
    } else if (!memo) {
        reserve_body(&out, t, ro->pretty != 0);
    }
    qw w;
    qw_init(&w, &out, ro->pretty != 0);
    c.t = t; c.ro = ro; c.w = &w; c.err = err; c.model = model;
    c.params = &params;
    c.max_tokens = params.has_max_tokens ? params.max_tokens : ro->max_tokens ? ro->max_tokens : c.caps.default_max_tokens;
    qarena_init(&c.scratch, a);
    qbuf events;
    qbuf_init(&events, a);
    c.events = &events;
    quire_status st = QUIRE_OK;
    /* the next state starts as a copy of the given one */
    c.next = state ? qs_clone(state) : qs_new(a, NULL);
    if (!c.next) { qarena_free(&c.scratch); qbuf_free(&events); qbuf_free(&out); qp_free(&params); return q_oom(err); }
    c.turn = c.next->turn + 1;
    c.rems = qs_live_for_turn(c.next, &c.scratch, &c.nrems);
    if (!c.rems) st = q_oom(err);
    if (!st && ro->placement == QUIRE_PLACEMENT_APPEND_ONLY) {
        c.retired = qs_retired_anchored(c.next, &c.scratch, &c.nretired);
        if (!c.retired) st = q_oom(err);
    }
    if (!st && memo) {
        /* the dialects with a memo path; lossy renders and provider options
         * (merged into the whole body, then validated) work on the body as
         * one buffer, and rows that map tool call ids rewrite ids across
         * messages, so they render in full */
        bool use = !ro->lossy && !qval_present(params.provider_options) && c.caps.tool_ids != QIDS_ALNUM9 &&
                   (c.caps.dialect == QD_ANTHROPIC_MESSAGES || c.caps.dialect == QD_OPENAI_CHAT);
        qr_memo_prepare(memo, &c, use);
    }
    if (!st) st = check_transcript(&c, memo);
    if (!st) st = check_tool_count(&c);
    if (!st && params.any) st = check_params(&c);
    if (!st) st = qr_plan_slots(&c);
    if (!st) note_image_detail(&c);
    quire_transcript *view = NULL;
    if (!st) st = apply_rules(&c, &view);
    if (!st && view) c.t = view;
    if (!st) st = qr_plan_cache(&c);
    if (!st) {
        st = k_encoders[c.caps.dialect](&c);
        if (!st && c.st) st = c.st;
    }
    qw_dispose(&w);
    /* provider options can add any field: the merged body is checked with the
     * validator (the encoders write parameter fields valid by construction) */
    bool merged = false;
    if (!st && !out.oom) st = merge_provider_options(&c, a, &out, &merged);
    if (!st && (ro->lossy || merged || (c.verbatim && !memo)) && !out.oom) {
        /* what --lossy dropped may leave a request its provider rejects (an
         * emptied message), and opaque items and provider tools are written
         * as the transcript gave them: check our own output, never emit it
         * invalid (a session checks its bodies in session/replay.c) */
        quire_render_options vro = *ro;
        vro.model = model;
        quire_bytes rep;
        quire_error verr;
        quire_options vo = QUIRE_OPTIONS_INIT;
        vo.allocator = a;
        quire_status vs = quire_validate(out.data ? out.data : "", out.len, &vro, &vo, &rep, &verr);
        if (vs == QUIRE_E_VALIDATE) {
            size_t n = 0;
            while (n < rep.len && rep.data[n] != '\n') n++;
            st = q_err(err, QUIRE_E_UNSUPPORTED,
                       ro->lossy  ? "after dropping what %s cannot express, the request is invalid: %.*s"
                       : merged   ? "the %s request with these parameters is invalid: %.*s"
                                  : "the %s request with the opaque items and provider tools as given is invalid: %.*s",
                       qdialect_name(c.caps.dialect), (int)(n < 300 ? n : 300), rep.data);
            quire_bytes_free(&rep);
        } else if (vs == QUIRE_E_NOMEM) {
            st = q_oom(err);
        } else if (vs != QUIRE_OK) {
            /* never a body that does not even parse */
            st = q_err(err, QUIRE_E_VALIDATE, "the %s request written is not well-formed (%s at %s): please report this",
                       qdialect_name(c.caps.dialect), verr.message, verr.pointer);
        }
    }
    if (st == QUIRE_OK) qs_after_render(c.next, &events);
    qbuf env;
    qbuf_init(&env, a);
    if (st == QUIRE_OK) write_envelope(&c, &env);
    /* the memo reads the transcript (a view in scratch) to seal its prefix */
    if (st == QUIRE_OK && memo && !qr_memo_finish(memo, &c, &out)) st = q_oom(err);
    qarena_free(&c.scratch);
    qp_free(&params);
    if (st == QUIRE_OK && (out.oom || events.oom || env.oom || (!memo && !qbuf_take(&out, &res->request)) ||
                           !qbuf_take(&events, &res->events) || !qbuf_take(&env, &res->envelope)))
        st = q_oom(err);
    if (st) {
        qbuf_free(&out);
        qbuf_free(&events);
        qbuf_free(&env);
        quire_bytes_free(&res->envelope);
        quire_bytes_free(&res->request);
        quire_bytes_free(&res->events);
        quire_state_free(c.next);
        return st;
    }
    if (memo) qbuf_free(&out); /* the previous body's buffer */
    if (into) /* the body is in the caller's buffer, or was moved to the real allocator's */
        res->request.alloc_ = res->request.data == ro->into ? &k_keep_alloc : a;
    res->state = c.next;
    return QUIRE_OK;
}

/* ---- wire segmentation ---- */
#include "render/wire.h"

void qr_write_system_parts(qr_ctx *c, const char *part_type) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    qw_arr_begin(w);
    for (uint32_t i = 0; t->has_system && i < t->nsystem; i++) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, part_type);
        qw_key(w, "text"); qw_qstr(w, t->system[i].text);
        const qr_mark *mk = qr_mark_at(c, QRS_SYSTEM, i, 0);
        if (mk) { qw_key(w, "prompt_cache_breakpoint"); qr_write_cache_control(c, mk); }
        qw_obj_end(w);
    }
    if (qstr_present(c->sys_extra)) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, part_type);
        qw_key(w, "text"); qw_qstr(w, c->sys_extra);
        qw_obj_end(w);
    }
    qw_arr_end(w);
}

/* A custom tool's format (transcript form = Responses form: {"type":"text"} or
 * {"type":"grammar","syntax","definition"}) in the Chat form, which nests the
 * grammar: {"type":"grammar","grammar":{"definition","syntax"}}. */
static void chat_format(qw *w, qval f) {
    const qj_doc *d = f.doc;
    uint32_t ty = qj_get(d, f.idx, "type");
    if (ty == QJ_NONE || !qj_str_eq(d, ty, "grammar")) { qw_qval(w, f); return; }
    uint32_t def = qj_get(d, f.idx, "definition"), syn = qj_get(d, f.idx, "syntax");
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "grammar");
    qw_key(w, "grammar");
    qw_obj_begin(w);
    if (def != QJ_NONE) { qw_key(w, "definition"); qw_node(w, d, def); }
    if (syn != QJ_NONE) { qw_key(w, "syntax"); qw_node(w, d, syn); }
    qw_obj_end(w);
    qw_obj_end(w);
}

void qr_write_function_tools(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    if (!t->has_tools || !t->ntools) return;
    qw_key(w, "tools");
    qw_arr_begin(w);
    for (uint32_t i = 0; i < t->ntools; i++) {
        const qtool *tl = &t->tools[i];
        if (tl->kind == QTK_PROVIDER) {
            if (qr_is_provider(c, tl->provider)) qr_write_as_given(c, tl->item);
            else qr_tool_unsupported(c, i, "a provider tool of another provider");
            continue;
        }
        if (tl->kind == QTK_CUSTOM) {
            /* OpenAI Chat: {"type":"custom","custom":{name, description?, format?}} */
            if (!qcaps_custom_tools(&c->caps)) { qr_tool_unsupported(c, i, "a custom (freeform) tool"); continue; }
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "custom");
            qw_key(w, "custom");
            qw_obj_begin(w);
            qw_key(w, "name"); qr_write_tool_name(c, tl->name, QR_NAME_TOOLS);
            if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
            if (qval_present(tl->format)) { qw_key(w, "format"); chat_format(w, tl->format); }
            qw_obj_end(w);
            qw_obj_end(w);
            continue;
        }
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "function");
        qw_key(w, "function");
        qw_obj_begin(w);
        qw_key(w, "name"); qr_write_tool_name(c, tl->name, QR_NAME_TOOLS);
        if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
        qw_key(w, "parameters"); qw_qval(w, tl->input_schema);
        qw_obj_end(w);
        qw_obj_end(w);
    }
    qw_arr_end(w);
}

qstr qr_wrap_instruction(qr_ctx *c, const qblock *b) {
    qbuf tmp;
    qbuf_init(&tmp, c->scratch.a);
    qbuf_puts(&tmp, c->caps.xml ? "<system-reminder>\n" : "System reminder:\n");
    qbuf_put_qstr(&tmp, b->text);
    if (c->caps.xml) qbuf_puts(&tmp, "\n</system-reminder>");
    qstr r = qstr_lit("");
    char *m = tmp.oom ? NULL : qarena_alloc(&c->scratch, tmp.len + 1);
    if (m) {
        memcpy(m, tmp.data, tmp.len);
        m[tmp.len] = '\0';
        r = qstr_plain(m, tmp.len);
    } else {
        c->w->b->oom = true;
    }
    qbuf_free(&tmp);
    return r;
}

static qwrole base_role(const qmsg *m) {
    switch (m->role) {
    case QR_ASSISTANT: return QW_ASSISTANT;
    case QR_TOOL: return QW_TOOL;
    case QR_SYSTEM: case QR_DEVELOPER: return QW_SYSTEM;
    case QR_USER: return QW_USER;
    }
    return QW_USER;
}

qr_run *qr_segment(qr_ctx *c, const qr_seg_opts *o, uint32_t *nruns) {
    return qr_segment_after(c, o, 0, NULL, NULL, nruns);
}

qr_run *qr_segment_after(qr_ctx *c, const qr_seg_opts *o, uint32_t k0, const qr_run *first, const qr_run *lastr,
                         uint32_t *nruns) {
    const quire_transcript *t = c->t;
    qr_run *r = qarena_alloc(&c->scratch, (size_t)(t->nmsgs ? t->nmsgs : 1) * sizeof(qr_run));
    *nruns = 0;
    if (!r) { c->w->b->oom = true; return NULL; }
    uint32_t n = 0, from = 0;
    if (k0) {
        r[0] = *first;
        r[k0 - 1] = *lastr;
        n = k0;
        from = lastr->j;
    }
    for (uint32_t k = from; k < t->nmsgs; k++) {
        if (t->msgs[k].nblocks == 0) { /* left out by the provider rules: no wire message */
            if (n > 0) r[n - 1].j = k + 1;
            continue;
        }
        qwrole role = base_role(&t->msgs[k]);
        if (role == QW_SYSTEM) {
            bool ok = o->mid_system;
            if (ok && o->anthropic_rule) {
                /* after a user turn, and before an assistant turn or at the end */
                uint32_t p = k, q = k + 1;
                while (p > 0 && qr_is_instruction(&t->msgs[p - 1])) p--;
                while (q < t->nmsgs && qr_is_instruction(&t->msgs[q])) q++;
                ok = p > 0 && (t->msgs[p - 1].role == QR_USER || t->msgs[p - 1].role == QR_TOOL) &&
                     (q == t->nmsgs || t->msgs[q].role == QR_ASSISTANT);
            } else if (ok) {
                ok = k > 0 || !o->merge_user; /* never the first message where a user turn must open */
            }
            if (!ok) role = QW_USER;
        }
        if (role == QW_TOOL && o->merge_user) role = QW_USER;
        bool merge = n > 0 && r[n - 1].role == role && role != QW_SYSTEM &&
                     (role == QW_USER ? (o->merge_user || o->merge_same) : role == QW_ASSISTANT ? o->merge_same : false);
        if (merge) { r[n - 1].j = k + 1; continue; }
        r[n].role = role;
        r[n].i = k;
        r[n].j = k + 1;
        n++;
    }
    *nruns = n;
    return r;
}
