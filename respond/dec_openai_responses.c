/* OpenAI Responses API: the response object and its SSE events
 * (response.created, response.output_item.added/done, response.output_text.delta,
 * response.function_call_arguments.delta, response.custom_tool_call_input.delta,
 * response.reasoning_summary_text.delta, response.completed, response.incomplete,
 * response.failed, error). Output items: message (output_text with
 * annotations, refusal), function_call, custom_tool_call; every other item
 * (reasoning with encrypted_content, web_search_call, ...) is kept whole as an
 * opaque item for this provider. A streamed item is taken from its
 * response.output_item.done event, which carries it complete; the deltas
 * before it become delta events. Sources: platform.openai.com "Responses"
 * API reference and "Streaming API responses". */
#include "respond/respond.h"

#include <stdio.h>

/* {"openai_responses": {field: value}}: a field of the item the transcript
 * keeps on the block (a message's phase, a call's namespace), written back on
 * the item by the Responses encoder (docs/transcript.md, providerOptions). */
static void item_option(qbuf *po, const qj_doc *d, const char *field, uint32_t v) {
    qbuf_puts(po, "{\"openai_responses\":{\"");
    qbuf_puts(po, field);
    qbuf_puts(po, "\":");
    rb_put_raw(po, d, v);
    qbuf_puts(po, "}}");
}

static quire_status item(racc *acc, const qj_doc *d, uint32_t it, const char *ptr, quire_error *err) {
    uint32_t t = rj_str(d, it, "type");
    if (t == QJ_NONE) return rerr_at(err, d, it, ptr, "expected an output item with a \"type\"");
    rblock *b;
    if (qj_str_eq(d, t, "message")) {
        uint32_t parts = rj_arr(d, it, "content");
        if (parts == QJ_NONE) return rerr_at(err, d, it, ptr, "message item without a \"content\" array");
        uint32_t phase = rj_str(d, it, "phase");
        for (uint32_t p = parts + 1; p < qj_next(d, parts); p = qj_next(d, p)) {
            uint32_t pt = rj_str(d, p, "type");
            uint32_t x;
            if (pt != QJ_NONE && qj_str_eq(d, pt, "output_text") && (x = rj_str(d, p, "text")) != QJ_NONE) {
                if (!(b = racc_push(acc, RK_TEXT))) return q_oom(err);
                rb_put_str(&b->text, d, x);
                if (phase != QJ_NONE) item_option(&b->po, d, "phase", phase);
                uint32_t an = rj_arr(d, p, "annotations");
                if (an != QJ_NONE)
                    for (uint32_t e = an + 1; e < qj_next(d, an); e = qj_next(d, e)) {
                        if (b->raw.len) qbuf_putc(&b->raw, ',');
                        rb_put_raw(&b->raw, d, e);
                    }
            } else if (pt != QJ_NONE && qj_str_eq(d, pt, "refusal") && (x = rj_str(d, p, "refusal")) != QJ_NONE) {
                if (!(b = racc_push(acc, RK_TEXT))) return q_oom(err);
                rb_put_str(&b->text, d, x);
                if (phase != QJ_NONE) item_option(&b->po, d, "phase", phase);
                acc->refusal = true;
            } else {
                if (!(b = racc_push(acc, RK_OPAQUE))) return q_oom(err);
                rb_put_raw(&b->raw, d, p);
            }
        }
        return QUIRE_OK;
    }
    bool fc = qj_str_eq(d, t, "function_call"), cc = qj_str_eq(d, t, "custom_tool_call");
    if (fc || cc) {
        uint32_t id = rj_str(d, it, "call_id"), name = rj_str(d, it, "name");
        uint32_t in = rj_str(d, it, fc ? "arguments" : "input");
        if (id == QJ_NONE || name == QJ_NONE || in == QJ_NONE)
            return rerr_at(err, d, it, ptr, "%s item needs string \"call_id\", \"name\" and \"%s\"",
                           fc ? "function_call" : "custom_tool_call", fc ? "arguments" : "input");
        if (!(b = racc_push(acc, fc ? RK_TOOL_CALL : RK_CUSTOM_CALL))) return q_oom(err);
        rb_put_str(&b->id, d, id);
        rb_put_str(&b->name, d, name);
        rb_put_str(fc ? &b->args : &b->text, d, in);
        if (fc) {
            char ap[96];
            snprintf(ap, sizeof ap, "%s/arguments", ptr);
            rb_source(b, qj_offset(d, in), 0, ap);
        }
        uint32_t ns = rj_str(d, it, "namespace");
        if (ns != QJ_NONE) item_option(&b->po, d, "namespace", ns);
        return QUIRE_OK;
    }
    if (!(b = racc_push(acc, RK_OPAQUE))) return q_oom(err);
    rb_put_raw(&b->raw, d, it);
    return QUIRE_OK;
}

/* Status, incomplete reason, usage and meta of a response object. */
static quire_status response_tail(racc *acc, const qj_doc *d, uint32_t r, quire_error *err, size_t off) {
    uint32_t status = rj_str(d, r, "status");
    if (status != QJ_NONE && qj_str_eq(d, status, "failed")) {
        uint32_t eo = rj_obj(d, r, "error");
        return rerr_provider(err, d, rj_str(d, eo, "code"), rj_str(d, eo, "message"), off);
    }
    racc_meta(acc, d, rj_str(d, r, "id"), rj_str(d, r, "model"));
    uint32_t reason = rj_str(d, rj_obj(d, r, "incomplete_details"), "reason");
    racc_stop(acc, d, reason != QJ_NONE ? reason : status);
    racc_usage_clear(acc);
    racc_usage(acc, d, rj_obj(d, r, "usage"));
    return QUIRE_OK;
}

static quire_status output(racc *acc, const qj_doc *d, uint32_t r, quire_error *err) {
    uint32_t out = rj_arr(d, r, "output");
    if (out == QJ_NONE) return rerr_at(err, d, r, "/output", "missing array \"output\" in the response");
    uint32_t i = 0;
    for (uint32_t e = out + 1; e < qj_next(d, out); e = qj_next(d, e), i++) {
        char ptr[48];
        snprintf(ptr, sizeof ptr, "/output/%u", i);
        quire_status st = item(acc, d, e, ptr, err);
        if (st) return st;
    }
    return QUIRE_OK;
}

static quire_status re_json(racc *acc, const qj_doc *d, quire_error *err) {
    if (qj_type_of(d, 0) != QJ_OBJECT) return rerr_at(err, d, 0, "", "expected a response object");
    uint32_t eo = rj_obj(d, 0, "error");
    if (eo != QJ_NONE && rj_arr(d, 0, "output") == QJ_NONE) {
        uint32_t t = rj_str(d, eo, "type");
        if (t == QJ_NONE) t = rj_str(d, eo, "code");
        return rerr_provider(err, d, t, rj_str(d, eo, "message"), 0);
    }
    quire_status st = response_tail(acc, d, 0, err, 0);
    if (st) return st;
    return output(acc, d, 0, err);
}

/* ---- streams ---- */

#define PH_CREATED 0x1u
#define PH_COMPLETED 0x2u
#define PH_ITEMS 0x4u

/* Per output_index: 1 = added, 2 = done; call id for delta events. */
typedef struct slot {
    uint8_t state;
    char *call_id;
    size_t call_len;
} slot;

static quire_status ev_name(rstream *s, const qj_doc *d, char *ev, size_t cap) {
    uint32_t t = rj_str(d, 0, "type");
    if (t == QJ_NONE) { snprintf(ev, cap, "%.*s", (int)s->evn, s->ev); return rs_err(s, ev, "data has no \"type\""); }
    size_t n = qj_at(d, t)->len < cap - 1 ? qj_at(d, t)->len : cap - 1;
    memcpy(ev, qj_at(d, t)->p, n);
    ev[n] = '\0';
    return QUIRE_OK;
}

typedef struct re_state {
    slot *slots;
    uint32_t nslots, cap;
} re_state;

static bool ends(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static quire_status re_handle(rstream *s, const char *name, const qj_doc *d) {
    (void)name;

    racc *acc = &s->acc;
    re_state *rs = (re_state *)s->ext;
    char ev[96];
    quire_status st = ev_name(s, d, ev, sizeof ev);
    if (st) return st;
    if (strcmp(ev, "error") == 0) {
        uint32_t eo = rj_obj(d, 0, "error");
        uint32_t c = eo != QJ_NONE ? rj_str(d, eo, "code") : rj_str(d, 0, "code");
        uint32_t m = eo != QJ_NONE ? rj_str(d, eo, "message") : rj_str(d, 0, "message");
        st = rerr_provider(s->err, d, c, m, (size_t)s->ev_off);
        if (s->err) s->err->line = (uint32_t)s->ev_line, s->err->column = 1;
        return st;
    }
    if (strncmp(ev, "response.", 9) != 0) return QUIRE_OK; /* unknown event families are ignored */
    if (s->phase & PH_COMPLETED) { return rs_err(s, ev, "after the response was completed"); }
    const char *sub = ev + 9;
    if (strcmp(sub, "created") == 0 || strcmp(sub, "in_progress") == 0 || strcmp(sub, "queued") == 0) {
        s->phase |= PH_CREATED;
        uint32_t r = rj_obj(d, 0, "response");
        racc_meta(acc, d, rj_str(d, r, "id"), rj_str(d, r, "model"));
        return QUIRE_OK;
    }
    if (!(s->phase & PH_CREATED)) { return rs_err(s, ev, "before response.created"); }
    if (strcmp(sub, "failed") == 0) {
        uint32_t r = rj_obj(d, 0, "response");
        uint32_t eo = rj_obj(d, r, "error");
        st = rerr_provider(s->err, d, rj_str(d, eo, "code"), rj_str(d, eo, "message"), (size_t)s->ev_off);
        if (s->err) s->err->line = (uint32_t)s->ev_line, s->err->column = 1;
        return st;
    }
    if (strcmp(sub, "completed") == 0 || strcmp(sub, "incomplete") == 0) {
        uint32_t r = rj_obj(d, 0, "response");
        if (r == QJ_NONE) { return rs_err(s, ev, "no \"response\" object"); }
        for (uint32_t i = 0; i < rs->nslots; i++)
            if (rs->slots[i].state == 1) { return rs_err(s, ev, "output item %u was never done", i); }
        quire_error e;
        if ((st = response_tail(acc, d, r, &e, 0))) return st == QUIRE_E_NOMEM ? q_oom(s->err) : rs_err(s, ev, "%s", e.message);
        if (!(s->phase & PH_ITEMS) && (st = output(acc, d, r, &e)))
            return st == QUIRE_E_NOMEM ? q_oom(s->err) : rs_err(s, ev, "%s", e.message);
        s->phase |= PH_COMPLETED;
        return QUIRE_OK;
    }
    uint32_t oix = qj_get(d, 0, "output_index");
    int64_t idx = -1;
    if (oix != QJ_NONE && (!qj_int64(d, oix, &idx) || idx < 0 || idx > 1000000)) {
        return rs_err(s, ev, "bad \"output_index\"");
    }
    if (strcmp(sub, "output_item.added") == 0) {
        if (idx < 0) { return rs_err(s, ev, "no \"output_index\""); }
        while (rs->nslots <= (uint32_t)idx) {
            if (rs->nslots == rs->cap) {
                uint32_t nc = rs->cap ? rs->cap * 2 : 8;
                slot *ns = q_realloc(acc->a, rs->slots, rs->cap * sizeof *ns, nc * sizeof *ns);
                if (!ns) { return q_oom(s->err); }
                rs->slots = ns;
                rs->cap = nc;
            }
            memset(&rs->slots[rs->nslots++], 0, sizeof(slot));
        }
        slot *sl = &rs->slots[idx];
        if (sl->state) { return rs_err(s, ev, "output item %lld was already added", (long long)idx); }
        sl->state = 1;
        s->phase |= PH_ITEMS;
        uint32_t it = rj_obj(d, 0, "item");
        uint32_t t = rj_str(d, it, "type"), cid = rj_str(d, it, "call_id"), nm = rj_str(d, it, "name");
        if (t != QJ_NONE && (qj_str_eq(d, t, "function_call") || qj_str_eq(d, t, "custom_tool_call")) &&
            cid != QJ_NONE) {
            size_t n = 0;
            sl->call_id = qj_str_decode(d, cid, &acc->ar, &n);
            sl->call_len = n;
            if (acc->events && nm != QJ_NONE) {
                rblock tmp;
                memset(&tmp, 0, sizeof tmp);
                qbuf_init(&tmp.id, acc->a);
                qbuf_init(&tmp.name, acc->a);
                rb_put_str(&tmp.id, d, cid);
                rb_put_str(&tmp.name, d, nm);
                racc_ev_call(acc, (uint32_t)idx, &tmp);
                qbuf_free(&tmp.id);
                qbuf_free(&tmp.name);
            }
        }
        return QUIRE_OK;
    }
    bool delta = ends(sub, ".delta"), is_done = strcmp(sub, "output_item.done") == 0;
    if (!delta && !is_done) return QUIRE_OK; /* part and *.done events repeat what the item's done event carries */
    if (idx < 0) { return rs_err(s, ev, "no \"output_index\""); }
    if ((uint32_t)idx >= rs->nslots || rs->slots[idx].state != 1) {
        return rs_err(s, ev, "output item %lld is not open", (long long)idx);
    }
    slot *sl = &rs->slots[idx];
    if (is_done) {
        uint32_t it = rj_obj(d, 0, "item");
        if (it == QJ_NONE) { return rs_err(s, ev, "no \"item\" object"); }
        quire_error e;
        if ((st = item(acc, d, it, "", &e))) return st == QUIRE_E_NOMEM ? q_oom(s->err) : rs_err(s, ev, "%s", e.message);
        sl->state = 2;
        return QUIRE_OK;
    }
    uint32_t x = rj_str(d, 0, "delta");
    if (x == QJ_NONE) { return rs_err(s, ev, "no string \"delta\""); }
    if (strcmp(sub, "output_text.delta") == 0 || strcmp(sub, "refusal.delta") == 0) {
        racc_ev_text(acc, (uint32_t)idx, false, d, x);
    } else if (strncmp(sub, "reasoning", 9) == 0) {
        racc_ev_text(acc, (uint32_t)idx, true, d, x);
    } else if (strcmp(sub, "function_call_arguments.delta") == 0 || strcmp(sub, "custom_tool_call_input.delta") == 0) {
        if (acc->events) {
            rblock tmp;
            memset(&tmp, 0, sizeof tmp);
            qbuf_init(&tmp.id, acc->a);
            if (sl->call_id) qbuf_put(&tmp.id, sl->call_id, sl->call_len);
            racc_ev_args(acc, (uint32_t)idx, &tmp, d, x);
            qbuf_free(&tmp.id);
        }
    }
    return QUIRE_OK;
}

static quire_status re_event(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen) {
    (void)nlen;
    qj_doc doc;
    quire_status st = rs_parse(s, data, dlen, &doc);
    if (st) return st;
    st = re_handle(s, name, &doc);
    qj_doc_free(&doc);
    return st;
}

static quire_status re_end(rstream *s) {
    if (!(s->phase & PH_COMPLETED))
        return rs_err(s, "(end of stream)", "the stream ended before response.completed");
    return QUIRE_OK;
}

static const char *re_stop(const racc *acc) {
    if (acc->refusal) return "refusal";
    const char *r = acc->has_stop ? acc->stop_raw.data : NULL;
    if (r && strcmp(r, "max_output_tokens") == 0) return "max_tokens";
    if (r && strcmp(r, "content_filter") == 0) return "refusal";
    return rb_has_calls(acc) ? "tool_use" : "end_turn";
}

static void re_usage(const qj_doc *d, uint32_t u, int64_t out[RU_COUNT]) {
    out[RU_INPUT] = rj_int(d, u, "input_tokens");
    out[RU_OUTPUT] = rj_int(d, u, "output_tokens");
    out[RU_CACHE_READ] = rj_int(d, u, "input_tokens_details.cached_tokens");
    out[RU_REASONING] = rj_int(d, u, "output_tokens_details.reasoning_tokens");
}

static void *re_new(const quire_allocator *a) {
    re_state *r = q_malloc(a, sizeof *r);
    if (r) memset(r, 0, sizeof *r);
    return r;
}

static void re_free(void *p, const quire_allocator *a) {
    re_state *r = p;
    if (!r) return;
    if (r->slots) q_free(a, r->slots, r->cap * sizeof *r->slots);
    q_free(a, r, sizeof *r);
}

/* The name a tool is sent under (render/: qr_write_tool_name). */
static size_t re_tool_name(const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    return rdec_sent_name(QD_OPENAI_RESPONSES, s, n, out);
}

const rdec q_dec_openai_responses = {re_json, true, re_event, re_end, re_stop, re_usage, re_new, re_free, re_tool_name};
