/* Amazon Bedrock Converse: the Converse response body and the ConverseStream
 * events given as JSON lines, one event object per line
 * ({"messageStart":{...}}, {"contentBlockStart":{...}},
 * {"contentBlockDelta":{...}}, {"contentBlockStop":{...}},
 * {"messageStop":{...}}, {"metadata":{...}}, or an exception such as
 * {"throttlingException":{"message":...}}); the AWS SDKs and the CLI print
 * the event stream in this form. Content: text, toolUse, reasoningContent
 * (reasoningText with signature, redactedContent); anything else is kept as
 * an opaque item. Sources: docs.aws.amazon.com Bedrock API reference
 * "Converse", "ConverseStream", ContentBlock, ContentBlockDelta, StopReason
 * and TokenUsage. */
#include "respond/respond.h"

#include <stdio.h>

static quire_status block(racc *acc, const qj_doc *d, uint32_t v, const char *ptr, quire_error *err) {
    if (qj_type_of(d, v) != QJ_OBJECT) return rerr_at(err, d, v, ptr, "expected a content block object");
    uint32_t x;
    rblock *b;
    if ((x = rj_str(d, v, "text")) != QJ_NONE) {
        if (!(b = racc_push(acc, RK_TEXT))) return q_oom(err);
        rb_put_str(&b->text, d, x);
        return QUIRE_OK;
    }
    uint32_t tu = rj_obj(d, v, "toolUse");
    if (tu != QJ_NONE) {
        uint32_t id = rj_str(d, tu, "toolUseId"), name = rj_str(d, tu, "name"), in = qj_get(d, tu, "input");
        if (id == QJ_NONE || name == QJ_NONE)
            return rerr_at(err, d, tu, ptr, "toolUse needs string \"toolUseId\" and \"name\"");
        if (!(b = racc_push(acc, RK_TOOL_CALL))) return q_oom(err);
        rb_put_str(&b->id, d, id);
        rb_put_str(&b->name, d, name);
        if (in != QJ_NONE) rb_put_raw(&b->args, d, in);
        return QUIRE_OK;
    }
    uint32_t rc = rj_obj(d, v, "reasoningContent");
    if (rc != QJ_NONE) {
        uint32_t rt = rj_obj(d, rc, "reasoningText"), red = rj_str(d, rc, "redactedContent");
        if (red != QJ_NONE) {
            if (!(b = racc_push(acc, RK_REDACTED))) return q_oom(err);
            rb_put_str(&b->text, d, red);
            return QUIRE_OK;
        }
        if (rt != QJ_NONE) {
            if (!(b = racc_push(acc, RK_THINKING))) return q_oom(err);
            if ((x = rj_str(d, rt, "text")) != QJ_NONE) rb_put_str(&b->text, d, x);
            if ((x = rj_str(d, rt, "signature")) != QJ_NONE) rb_put_str(&b->sig, d, x);
            return QUIRE_OK;
        }
    }
    if (!(b = racc_push(acc, RK_OPAQUE))) return q_oom(err);
    rb_put_raw(&b->raw, d, v);
    return QUIRE_OK;
}

/* An error body: {"message": ...} with the type in "__type" (or "code"). */
static bool is_error(const qj_doc *d) {
    return qj_type_of(d, 0) == QJ_OBJECT && rj_obj(d, 0, "output") == QJ_NONE && rj_str(d, 0, "message") != QJ_NONE;
}

static quire_status be_json(racc *acc, const qj_doc *d, quire_error *err) {
    if (qj_type_of(d, 0) != QJ_OBJECT) return rerr_at(err, d, 0, "", "expected a Converse response object");
    if (is_error(d)) {
        uint32_t t = rj_str(d, 0, "__type");
        if (t == QJ_NONE) t = rj_str(d, 0, "code");
        return rerr_provider(err, d, t, rj_str(d, 0, "message"), 0);
    }
    uint32_t m = rj_obj(d, rj_obj(d, 0, "output"), "message");
    uint32_t content = rj_arr(d, m, "content");
    if (content == QJ_NONE)
        return rerr_at(err, d, 0, "/output/message/content", "missing array \"output.message.content\"");
    uint32_t i = 0;
    for (uint32_t e = content + 1; e < qj_next(d, content); e = qj_next(d, e), i++) {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/output/message/content/%u", i);
        quire_status st = block(acc, d, e, ptr, err);
        if (st) return st;
    }
    racc_stop(acc, d, rj_str(d, 0, "stopReason"));
    racc_usage(acc, d, rj_obj(d, 0, "usage"));
    return QUIRE_OK;
}

#define PH_STARTED 0x1u
#define PH_STOPPED 0x2u
#define PH_META 0x4u

static quire_status be_handle(rstream *s, const char *name, const qj_doc *d) {
    (void)name;

    racc *acc = &s->acc;
    char ev[64] = "(event)";
    if (qj_type_of(d, 0) != QJ_OBJECT || qj_at(d, 0)->n != 1) {
        return rs_err(s, ev, "expected an object with one member, the event");
    }
    const qj_node *k = qj_at(d, 1);
    size_t kl = k->len < sizeof ev - 1 ? k->len : sizeof ev - 1;
    memcpy(ev, k->p, kl);
    ev[kl] = '\0';
    uint32_t body = 2;
    if (qj_type_of(d, body) != QJ_OBJECT) { return rs_err(s, ev, "the event is not an object"); }
    if (strlen(ev) > 9 && strcmp(ev + strlen(ev) - 9, "Exception") == 0) {
        uint32_t t = 1;
        quire_status st = rerr_provider(s->err, d, t, rj_str(d, body, "message"), (size_t)s->ev_off);
        if (s->err) s->err->line = (uint32_t)s->ev_line, s->err->column = 1;
        return st;
    }
    if (strcmp(ev, "messageStart") == 0) {
        if (s->phase & PH_STARTED) { return rs_err(s, ev, "a second messageStart"); }
        s->phase |= PH_STARTED;
        return QUIRE_OK;
    }
    if (!(s->phase & PH_STARTED)) { return rs_err(s, ev, "before messageStart"); }
    if (strcmp(ev, "metadata") == 0) {
        racc_usage(acc, d, rj_obj(d, body, "usage"));
        s->phase |= PH_META;
        return QUIRE_OK;
    }
    if (s->phase & PH_STOPPED) { return rs_err(s, ev, "after messageStop"); }
    if (strcmp(ev, "messageStop") == 0) {
        for (uint32_t i = 0; i < acc->n; i++)
            if (acc->b[i].open && acc->b[i].kind == RK_TOOL_CALL) {
                return rs_err(s, ev, "content block %lld was never stopped", (long long)acc->b[i].key);
            }
        racc_stop(acc, d, rj_str(d, body, "stopReason"));
        s->phase |= PH_STOPPED;
        return QUIRE_OK;
    }
    int64_t index;
    uint32_t ix = qj_get(d, body, "contentBlockIndex");
    if (ix == QJ_NONE || !qj_int64(d, ix, &index) || index < 0) {
        if (strncmp(ev, "contentBlock", 12) == 0) return rs_err(s, ev, "no integer \"contentBlockIndex\"");
        return QUIRE_OK; /* other events are ignored */
    }
    rblock *b = racc_find(acc, index);
    if (strcmp(ev, "contentBlockStart") == 0) {
        if (b) { return rs_err(s, ev, "block %lld was already started", (long long)index); }
        uint32_t start = rj_obj(d, body, "start");
        uint32_t tu = rj_obj(d, start, "toolUse");
        if (tu == QJ_NONE) {
            if (!(b = racc_push(acc, RK_OPAQUE))) { return q_oom(s->err); }
            rb_put_raw(&b->raw, d, start == QJ_NONE ? body : start);
        } else {
            uint32_t id = rj_str(d, tu, "toolUseId"), nm = rj_str(d, tu, "name");
            if (id == QJ_NONE || nm == QJ_NONE) { return rs_err(s, ev, "toolUse needs \"toolUseId\" and \"name\""); }
            if (!(b = racc_push(acc, RK_TOOL_CALL))) { return q_oom(s->err); }
            rb_put_str(&b->id, d, id);
            rb_put_str(&b->name, d, nm);
            racc_ev_call(acc, acc->n - 1, b);
        }
        if (!racc_key(acc, b, index)) return q_oom(s->err);
        b->open = true;
        return QUIRE_OK;
    }
    if (strcmp(ev, "contentBlockDelta") == 0) {
        uint32_t delta = rj_obj(d, body, "delta");
        uint32_t x, rc = rj_obj(d, delta, "reasoningContent"), tu = rj_obj(d, delta, "toolUse");
        /* a citation of the text block (CitationsDelta, streamed when a
         * document's citations are enabled): kept with the block's citations */
        uint32_t cit = rj_obj(d, delta, "citation");
        if (b && !b->open) { return rs_err(s, ev, "block %lld was already stopped", (long long)index); }
        rkind want = (x = rj_str(d, delta, "text")) != QJ_NONE || cit != QJ_NONE ? RK_TEXT
                     : tu != QJ_NONE                          ? RK_TOOL_CALL
                     : rc != QJ_NONE && rj_str(d, rc, "redactedContent") != QJ_NONE ? RK_REDACTED
                     : rc != QJ_NONE                          ? RK_THINKING
                                                              : RK_OPAQUE;
        if (want == RK_OPAQUE) { return rs_err(s, ev, "unknown delta"); }
        if (!b) { /* text and reasoning blocks start with their first delta */
            if (want == RK_TOOL_CALL) { return rs_err(s, ev, "toolUse delta for block %lld before its start", (long long)index); }
            if (!(b = racc_push(acc, want))) { return q_oom(s->err); }
            if (!racc_key(acc, b, index)) return q_oom(s->err);
            b->open = true;
        } else if (b->kind != want) {
            return rs_err(s, ev, "the delta does not fit block %lld", (long long)index);
        }
        uint32_t bi = (uint32_t)(b - acc->b);
        if (want == RK_TEXT && cit != QJ_NONE && x == QJ_NONE) {
            if (b->raw.len) qbuf_putc(&b->raw, ',');
            rb_put_raw(&b->raw, d, cit);
        } else if (want == RK_TEXT) {
            rb_put_str(&b->text, d, x);
            racc_ev_text(acc, bi, false, d, x);
        } else if (want == RK_TOOL_CALL) {
            if ((x = rj_str(d, tu, "input")) != QJ_NONE) {
                rb_put_str(&b->args, d, x);
                rb_source(b, s->ev_off, s->ev_line, "");
                racc_ev_args(acc, bi, b, d, x);
            }
        } else if (want == RK_REDACTED) {
            rb_put_str(&b->text, d, rj_str(d, rc, "redactedContent"));
        } else {
            if ((x = rj_str(d, rc, "text")) != QJ_NONE) { rb_put_str(&b->text, d, x); racc_ev_text(acc, bi, true, d, x); }
            if ((x = rj_str(d, rc, "signature")) != QJ_NONE) rb_put_str(&b->sig, d, x);
        }
        return QUIRE_OK;
    }
    if (strcmp(ev, "contentBlockStop") == 0) {
        if (!b || !b->open) { return rs_err(s, ev, "no open content block at index %lld", (long long)index); }
        b->open = false;
    }
    return QUIRE_OK;
}

static quire_status be_event(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen) {
    (void)nlen;
    qj_doc doc;
    quire_status st = rs_parse(s, data, dlen, &doc);
    if (st) return st;
    st = be_handle(s, name, &doc);
    qj_doc_free(&doc);
    return st;
}

static quire_status be_end(rstream *s) {
    if (!(s->phase & PH_STARTED)) return rs_err(s, "(end of stream)", "the stream ended before messageStart");
    if (!(s->phase & PH_STOPPED)) return rs_err(s, "(end of stream)", "the stream ended before messageStop");
    return QUIRE_OK;
}

static const char *be_stop(const racc *acc) {
    const char *r = acc->has_stop ? acc->stop_raw.data : NULL;
    static const struct { const char *raw, *norm; } map[] = {
        {"end_turn", "end_turn"}, {"tool_use", "tool_use"}, {"max_tokens", "max_tokens"},
        {"stop_sequence", "stop_sequence"}, {"guardrail_intervened", "refusal"}, {"content_filtered", "refusal"},
        {"model_context_window_exceeded", "max_tokens"},
        /* the model wrote a call or an answer Bedrock could not parse (AWS
         * Bedrock API reference, ConverseStream MessageStopEvent.stopReason) */
        {"malformed_model_output", "error"}, {"malformed_tool_use", "error"},
    };
    for (size_t i = 0; r && i < Q_COUNTOF(map); i++)
        if (strcmp(r, map[i].raw) == 0) return map[i].norm;
    return rb_has_calls(acc) ? "tool_use" : "end_turn";
}

static void be_usage(const qj_doc *d, uint32_t u, int64_t out[RU_COUNT]) {
    static const char *const in[] = {"inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"};
    out[RU_INPUT] = rj_sum(d, u, in, Q_COUNTOF(in));
    out[RU_OUTPUT] = rj_int(d, u, "outputTokens");
    out[RU_CACHE_READ] = rj_int(d, u, "cacheReadInputTokens");
    out[RU_CACHE_WRITE] = rj_int(d, u, "cacheWriteInputTokens");
}

/* The Converse name of a tool (render/enc_bedrock.c sends names outside
 * [a-zA-Z0-9_-]{1,64} mapped); 0 when it is sent as it is. */
static size_t be_tool_name(const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    return rdec_sent_name(QD_BEDROCK_CONVERSE, s, n, out);
}

const rdec q_dec_bedrock = {be_json, false, be_event, be_end, be_stop, be_usage, NULL, NULL, be_tool_name};
