/* Anthropic Messages responses: the JSON body and the SSE events
 * (message_start, content_block_start/delta/stop, message_delta, message_stop,
 * ping, error). Content blocks: text (with citations), thinking, redacted
 * thinking, tool_use, server tool use and results (server_tool_use ->
 * serverToolCall, <name>_tool_result -> serverToolResult with that name;
 * mcp_tool_use and mcp_tool_result, which carry more fields, stay opaque
 * items), anything else kept as an opaque item.
 * Sources: docs.anthropic.com "Messages" and "Streaming Messages". */
#include "respond/respond.h"

#include <stdio.h>

static bool type_is(const qj_doc *d, uint32_t t, const char *s) { return t != QJ_NONE && qj_str_eq(d, t, s); }

static bool ends_with_tool_result(const qj_doc *d, uint32_t t) {
    const qj_node *n = qj_at(d, t);
    static const char suf[] = "_tool_result";
    size_t k = sizeof suf - 1;
    return n->len > k && memcmp(n->p + n->len - k, suf, k) == 0;
}

static void add_citations(rblock *b, const qj_doc *d, uint32_t arr) {
    if (arr == QJ_NONE) return;
    for (uint32_t e = arr + 1; e < qj_next(d, arr); e = qj_next(d, e)) {
        if (b->raw.len) qbuf_putc(&b->raw, ',');
        rb_put_raw(&b->raw, d, e);
    }
}

/* One content block object (a body's block, or the block of content_block_start). */
static quire_status block(racc *acc, const qj_doc *d, uint32_t v, bool stream, rblock **out, const char *ptr,
                          quire_error *err) {
    uint32_t t = rj_str(d, v, "type");
    if (qj_type_of(d, v) != QJ_OBJECT || t == QJ_NONE)
        return rerr_at(err, d, v, ptr, "expected a content block object with a \"type\"");
    rblock *b;
    if (type_is(d, t, "text")) {
        if (!(b = racc_push(acc, RK_TEXT))) return q_oom(err);
        uint32_t x = rj_str(d, v, "text");
        if (x != QJ_NONE) rb_put_str(&b->text, d, x);
        add_citations(b, d, rj_arr(d, v, "citations"));
    } else if (type_is(d, t, "thinking")) {
        if (!(b = racc_push(acc, RK_THINKING))) return q_oom(err);
        uint32_t x = rj_str(d, v, "thinking"), s = rj_str(d, v, "signature");
        if (x != QJ_NONE) rb_put_str(&b->text, d, x);
        if (s != QJ_NONE) rb_put_str(&b->sig, d, s);
    } else if (type_is(d, t, "redacted_thinking")) {
        uint32_t x = rj_str(d, v, "data");
        if (x == QJ_NONE) return rerr_at(err, d, v, ptr, "redacted_thinking block without \"data\"");
        if (!(b = racc_push(acc, RK_REDACTED))) return q_oom(err);
        rb_put_str(&b->text, d, x);
    } else if (type_is(d, t, "tool_use") || type_is(d, t, "server_tool_use") || type_is(d, t, "mcp_tool_use")) {
        uint32_t id = rj_str(d, v, "id"), name = rj_str(d, v, "name");
        uint32_t in = qj_get(d, v, "input");
        if (id == QJ_NONE || name == QJ_NONE)
            return rerr_at(err, d, v, ptr, "%s block needs string \"id\" and \"name\"",
                           type_is(d, t, "tool_use") ? "tool_use" : "server tool");
        if (!(b = racc_push(acc, type_is(d, t, "tool_use") ? RK_TOOL_CALL : RK_SERVER_CALL))) return q_oom(err);
        rb_put_str(&b->id, d, id);
        rb_put_str(&b->name, d, name);
        /* streamed inputs arrive as input_json_delta; the start block's input is a placeholder */
        if (!stream && in != QJ_NONE) rb_put_raw(&b->args, d, in);
        if (b->kind == RK_SERVER_CALL) rb_put_raw(&b->raw, d, v);
        b->as_opaque = type_is(d, t, "mcp_tool_use"); /* server_name and more: kept as the item */
    } else if (!type_is(d, t, "tool_result") && !type_is(d, t, "mcp_tool_result") && ends_with_tool_result(d, t) &&
               rj_str(d, v, "tool_use_id") != QJ_NONE && qj_get(d, v, "content") != QJ_NONE) {
        /* <name>_tool_result: serverToolResult {toolCallId, name, content} */
        if (!(b = racc_push(acc, RK_SERVER_RESULT))) return q_oom(err);
        rb_put_str(&b->id, d, rj_str(d, v, "tool_use_id"));
        const qj_node *tn = qj_at(d, t);
        qbuf_put(&b->name, tn->p, tn->len - (sizeof "_tool_result" - 1));
        rb_put_raw(&b->args, d, qj_get(d, v, "content"));
        rb_put_raw(&b->raw, d, v);
    } else {
        if (!(b = racc_push(acc, RK_OPAQUE))) return q_oom(err);
        rb_put_raw(&b->raw, d, v);
    }
    *out = b;
    return QUIRE_OK;
}

/* The item of a server call: its start block with the assembled input. */
static quire_status server_item(racc *acc, rblock *b, quire_error *err) {
    qj_doc d;
    quire_error e;
    if (qj_parse(&d, b->raw.data, b->raw.len, NULL, acc->a, &e) != QUIRE_OK) return q_oom(err);
    qbuf nb;
    qbuf_init(&nb, acc->a);
    qbuf_putc(&nb, '{');
    bool first = true, had_input = false;
    for (uint32_t k = 1; k < qj_next(&d, 0); k = qj_next(&d, k + 1)) {
        if (!first) qbuf_putc(&nb, ',');
        first = false;
        qbuf_putc(&nb, '"'); qbuf_put(&nb, qj_at(&d, k)->p, qj_at(&d, k)->len); qbuf_puts(&nb, "\":");
        if (qj_str_eq(&d, k, "input")) {
            had_input = true;
            if (b->args.len) qbuf_put(&nb, b->args.data, b->args.len); else qbuf_puts(&nb, "{}");
        } else {
            rb_put_raw(&nb, &d, k + 1);
        }
    }
    if (!had_input) {
        if (!first) qbuf_putc(&nb, ',');
        qbuf_puts(&nb, "\"input\":");
        if (b->args.len) qbuf_put(&nb, b->args.data, b->args.len); else qbuf_puts(&nb, "{}");
    }
    qbuf_putc(&nb, '}');
    qj_doc_free(&d);
    if (nb.oom) { qbuf_free(&nb); return q_oom(err); }
    qbuf_free(&b->raw);
    b->raw = nb;
    return QUIRE_OK;
}

static quire_status error_body(const qj_doc *d, uint32_t root, quire_error *err) {
    uint32_t eo = rj_obj(d, root, "error");
    return rerr_provider(err, d, rj_str(d, eo, "type"), rj_str(d, eo, "message"), qj_offset(d, root));
}

static quire_status an_json(racc *acc, const qj_doc *d, quire_error *err) {
    if (qj_type_of(d, 0) != QJ_OBJECT) return rerr_at(err, d, 0, "", "expected a Messages response object");
    uint32_t t = rj_str(d, 0, "type");
    if ((t != QJ_NONE && qj_str_eq(d, t, "error")) || (t == QJ_NONE && rj_obj(d, 0, "error") != QJ_NONE))
        return error_body(d, 0, err);
    uint32_t content = rj_arr(d, 0, "content");
    if (content == QJ_NONE) return rerr_at(err, d, 0, "/content", "missing array \"content\" in Messages response");
    racc_meta(acc, d, rj_str(d, 0, "id"), rj_str(d, 0, "model"));
    uint32_t i = 0;
    for (uint32_t e = content + 1; e < qj_next(d, content); e = qj_next(d, e), i++) {
        char ptr[48];
        snprintf(ptr, sizeof ptr, "/content/%u", i);
        rblock *b;
        quire_status st = block(acc, d, e, false, &b, ptr, err);
        if (st) return st;
        (void)b;
    }
    racc_stop(acc, d, rj_str(d, 0, "stop_reason"));
    racc_usage(acc, d, rj_obj(d, 0, "usage"));
    return QUIRE_OK;
}

/* ---- streams ---- */

#define PH_STARTED 0x1u
#define PH_STOPPED 0x2u

static quire_status an_handle(rstream *s, const char *name, const qj_doc *d) {
    (void)name;

    racc *acc = &s->acc;
    uint32_t t = rj_str(d, 0, "type");
    char ev[48] = "";
    if (t != QJ_NONE) {
        size_t n = qj_at(d, t)->len < sizeof ev - 1 ? qj_at(d, t)->len : sizeof ev - 1;
        memcpy(ev, qj_at(d, t)->p, n);
        ev[n] = '\0';
    } else {
        snprintf(ev, sizeof ev, "%s", *name ? name : "(untyped)");
    }
    if (t == QJ_NONE) { return rs_err(s, ev, "data has no \"type\""); }
    if (strcmp(ev, "ping") == 0) return QUIRE_OK;
    if (strcmp(ev, "error") == 0) {
        quire_status st = error_body(d, 0, s->err);
        if (s->err) s->err->offset = (size_t)s->ev_off, s->err->line = (uint32_t)s->ev_line, s->err->column = 1;
        return st;
    }
    if (strcmp(ev, "message_start") == 0) {
        if (s->phase & PH_STARTED) { return rs_err(s, ev, "a second message_start"); }
        s->phase |= PH_STARTED;
        uint32_t m = rj_obj(d, 0, "message");
        if (m == QJ_NONE) { return rs_err(s, ev, "no \"message\" object"); }
        racc_meta(acc, d, rj_str(d, m, "id"), rj_str(d, m, "model"));
        racc_usage(acc, d, rj_obj(d, m, "usage"));
        racc_stop(acc, d, rj_str(d, m, "stop_reason"));
        return QUIRE_OK;
    }
    if (!(s->phase & PH_STARTED)) { return rs_err(s, ev, "before message_start"); }
    if (s->phase & PH_STOPPED) { return rs_err(s, ev, "after message_stop"); }
    if (strcmp(ev, "content_block_start") == 0 || strcmp(ev, "content_block_delta") == 0 ||
        strcmp(ev, "content_block_stop") == 0) {
        int64_t index;
        uint32_t ix = qj_get(d, 0, "index");
        if (ix == QJ_NONE || qj_type_of(d, ix) != QJ_NUMBER || !qj_int64(d, ix, &index) || index < 0) {
            return rs_err(s, ev, "no integer \"index\"");
        }
        rblock *b = racc_find(acc, index);
        if (strcmp(ev, "content_block_start") == 0) {
            if (b) { return rs_err(s, ev, "block %lld was already started", (long long)index); }
            uint32_t cb = rj_obj(d, 0, "content_block");
            if (cb == QJ_NONE) { return rs_err(s, ev, "no \"content_block\" object"); }
            quire_error e;
            quire_status st = block(acc, d, cb, true, &b, "", &e);
            if (st == QUIRE_E_NOMEM) return q_oom(s->err);
            if (st) return rs_err(s, ev, "%s", e.message);
            if (!racc_key(acc, b, index)) return q_oom(s->err);
            b->open = true;
            if (b->kind == RK_TOOL_CALL) racc_ev_call(acc, acc->n - 1, b);
            return QUIRE_OK;
        }
        if (!b || !b->open) {
            return rs_err(s, ev, "no open content block at index %lld", (long long)index);
        }
        uint32_t bi = (uint32_t)(b - acc->b);
        if (strcmp(ev, "content_block_stop") == 0) {
            b->open = false;
            return b->kind == RK_SERVER_CALL ? server_item(acc, b, s->err) : QUIRE_OK;
        }
        uint32_t delta = rj_obj(d, 0, "delta");
        uint32_t dt = rj_str(d, delta, "type");
        if (dt == QJ_NONE) { return rs_err(s, ev, "no \"delta\" with a \"type\""); }
        uint32_t x;
        if (type_is(d, dt, "text_delta") && b->kind == RK_TEXT && (x = rj_str(d, delta, "text")) != QJ_NONE) {
            rb_put_str(&b->text, d, x);
            racc_ev_text(acc, bi, false, d, x);
        } else if (type_is(d, dt, "thinking_delta") && b->kind == RK_THINKING &&
                   (x = rj_str(d, delta, "thinking")) != QJ_NONE) {
            rb_put_str(&b->text, d, x);
            racc_ev_text(acc, bi, true, d, x);
        } else if (type_is(d, dt, "signature_delta") && b->kind == RK_THINKING &&
                   (x = rj_str(d, delta, "signature")) != QJ_NONE) {
            rb_put_str(&b->sig, d, x);
        } else if (type_is(d, dt, "input_json_delta") && (b->kind == RK_TOOL_CALL || b->kind == RK_SERVER_CALL) &&
                   (x = rj_str(d, delta, "partial_json")) != QJ_NONE) {
            rb_put_str(&b->args, d, x);
            rb_source(b, s->ev_off, s->ev_line, "");
            if (b->kind == RK_TOOL_CALL) racc_ev_args(acc, bi, b, d, x);
        } else if (type_is(d, dt, "citations_delta") && b->kind == RK_TEXT &&
                   (x = qj_get(d, delta, "citation")) != QJ_NONE) {
            if (b->raw.len) qbuf_putc(&b->raw, ',');
            rb_put_raw(&b->raw, d, x);
        } else {
            char dn[48];
            q_quote_text(dn, sizeof dn, qj_at(d, dt)->p, qj_at(d, dt)->len);
            static const char *const kinds[] = {"text", "thinking", "redacted_thinking", "tool_use",
                                                "custom tool", "server_tool_use", "server tool result",
                                                "opaque"};
            return rs_err(s, ev, "delta %s does not fit the %s block at index %lld (or lacks its field)", dn,
                        kinds[b->kind], (long long)index);
        }
        return QUIRE_OK;
    }
    if (strcmp(ev, "message_delta") == 0) {
        uint32_t delta = rj_obj(d, 0, "delta");
        racc_stop(acc, d, rj_str(d, delta, "stop_reason"));
        racc_usage(acc, d, rj_obj(d, 0, "usage"));
        return QUIRE_OK;
    }
    if (strcmp(ev, "message_stop") == 0) {
        for (uint32_t i = 0; i < acc->n; i++)
            if (acc->b[i].open) {
                return rs_err(s, ev, "content block %lld was never stopped", (long long)acc->b[i].key);
            }
        s->phase |= PH_STOPPED;
        return QUIRE_OK;
    }
    /* other event types are ignored: the API may add new ones (Anthropic's versioning policy) */
    return QUIRE_OK;
}

static quire_status an_event(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen) {
    (void)nlen;
    qj_doc doc;
    quire_status st = rs_parse(s, data, dlen, &doc);
    if (st) return st;
    st = an_handle(s, name, &doc);
    qj_doc_free(&doc);
    return st;
}

static quire_status an_end(rstream *s) {
    if (!(s->phase & PH_STARTED)) return rs_err(s, "(end of stream)", "the stream ended before message_start");
    if (!(s->phase & PH_STOPPED)) return rs_err(s, "(end of stream)", "the stream ended before message_stop");
    return QUIRE_OK;
}

static const char *an_stop(const racc *acc) {
    const char *r = acc->stop_raw.data;
    if (!acc->has_stop || !r) return rb_has_calls(acc) ? "tool_use" : "end_turn";
    static const struct { const char *raw, *norm; } map[] = {
        {"end_turn", "end_turn"}, {"tool_use", "tool_use"}, {"max_tokens", "max_tokens"},
        {"stop_sequence", "stop_sequence"}, {"refusal", "refusal"}, {"pause_turn", "pause"},
        {"model_context_window_exceeded", "max_tokens"},
    };
    for (size_t i = 0; i < Q_COUNTOF(map); i++)
        if (strcmp(r, map[i].raw) == 0) return map[i].norm;
    return rb_has_calls(acc) ? "tool_use" : "end_turn";
}

static void an_usage(const qj_doc *d, uint32_t u, int64_t out[RU_COUNT]) {
    static const char *const in[] = {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"};
    out[RU_INPUT] = rj_sum(d, u, in, Q_COUNTOF(in));
    out[RU_OUTPUT] = rj_int(d, u, "output_tokens");
    out[RU_CACHE_READ] = rj_int(d, u, "cache_read_input_tokens");
    out[RU_CACHE_WRITE] = rj_int(d, u, "cache_creation_input_tokens");
}

/* The name a tool is sent under (render/: qr_write_tool_name). */
static size_t an_tool_name(const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    return rdec_sent_name(QD_ANTHROPIC_MESSAGES, s, n, out);
}

const rdec q_dec_anthropic = {an_json, true, an_event, an_end, an_stop, an_usage, NULL, NULL, an_tool_name};
