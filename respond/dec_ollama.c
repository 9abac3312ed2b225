/* Ollama /api/chat: the JSON body ("stream": false) and the NDJSON stream,
 * one chat object per line, the last with "done": true and the counts.
 * message.content and message.thinking arrive as deltas, tool calls whole
 * (function.arguments is an object). Tool calls without an id get
 * "call_<n>" (n counts the calls of the message). Raw usage: the count and
 * duration fields of the final object. Source: github.com/ollama/ollama
 * docs/api.md, "Generate a chat completion". */
#include "respond/respond.h"

#include <stdio.h>

#define K_TEXT (-2)
#define K_THINK (-3)
#define PH_DONE 0x1u

static const char *const k_usage[] = {"total_duration", "load_duration", "prompt_eval_count",
                                      "prompt_eval_duration", "eval_count", "eval_duration"};

static rblock *keyed(racc *acc, int64_t key, rkind kind) {
    rblock *b = racc_find(acc, key);
    if (b) return b;
    b = racc_push(acc, kind);
    if (b && !racc_key(acc, b, key)) return NULL;
    return b;
}

static quire_status chunk(racc *acc, const qj_doc *d, bool stream, uint32_t *phase, quire_error *err) {
    if (qj_type_of(d, 0) != QJ_OBJECT) return rerr_at(err, d, 0, "", "expected a chat response object");
    uint32_t e = qj_get(d, 0, "error");
    if (e != QJ_NONE) return rerr_provider(err, d, QJ_NONE, e, 0);
    if (*phase & PH_DONE) return rerr_at(err, d, 0, "", "an object after the one with \"done\": true");
    racc_meta(acc, d, QJ_NONE, rj_str(d, 0, "model"));
    uint32_t m = rj_obj(d, 0, "message");
    if (m == QJ_NONE) return rerr_at(err, d, 0, "/message", "missing object \"message\"");
    uint32_t x;
    if ((x = rj_str(d, m, "thinking")) != QJ_NONE && (qj_at(d, x)->len || racc_find(acc, K_THINK))) {
        rblock *b = keyed(acc, K_THINK, RK_THINKING);
        if (!b) return q_oom(err);
        rb_put_str(&b->text, d, x);
        if (stream) racc_ev_text(acc, (uint32_t)(b - acc->b), true, d, x);
    }
    if ((x = rj_str(d, m, "content")) != QJ_NONE && (qj_at(d, x)->len || racc_find(acc, K_TEXT))) {
        rblock *b = keyed(acc, K_TEXT, RK_TEXT);
        if (!b) return q_oom(err);
        rb_put_str(&b->text, d, x);
        if (stream) racc_ev_text(acc, (uint32_t)(b - acc->b), false, d, x);
    }
    uint32_t calls = rj_arr(d, m, "tool_calls");
    if (calls != QJ_NONE)
        for (uint32_t c = calls + 1; c < qj_next(d, calls); c = qj_next(d, c)) {
            uint32_t f = rj_obj(d, c, "function"), name = rj_str(d, f, "name"), id = rj_str(d, c, "id");
            uint32_t args = qj_get(d, f, "arguments");
            if (name == QJ_NONE) return rerr_at(err, d, c, "/message/tool_calls", "tool call without \"function.name\"");
            uint32_t k = acc->ntool;
            rblock *b = racc_push(acc, RK_TOOL_CALL);
            if (!b) return q_oom(err);
            if (id != QJ_NONE) rb_put_str(&b->id, d, id); else qbuf_printf(&b->id, "%s%u", acc->call_prefix, k);
            rb_put_str(&b->name, d, name);
            if (args != QJ_NONE && qj_type_of(d, args) == QJ_STRING) rb_put_str(&b->args, d, args);
            else if (args != QJ_NONE) rb_put_raw(&b->args, d, args);
            if (stream) racc_ev_call(acc, acc->n - 1, b);
        }
    uint32_t done = qj_get(d, 0, "done");
    if (done != QJ_NONE && qj_type_of(d, done) == QJ_TRUE) {
        *phase |= PH_DONE;
        uint32_t r = rj_str(d, 0, "done_reason");
        if (r != QJ_NONE) racc_stop(acc, d, r);
        racc_usage_keys(acc, d, 0, k_usage, Q_COUNTOF(k_usage));
    }
    return QUIRE_OK;
}

static quire_status ol_json(racc *acc, const qj_doc *d, quire_error *err) {
    uint32_t phase = 0;
    return chunk(acc, d, false, &phase, err);
}

static quire_status ol_event(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen) {
    (void)name; (void)nlen;
    qj_doc doc;
    quire_status st = rs_parse(s, data, dlen, &doc);
    if (st) return st;
    quire_error e;
    st = chunk(&s->acc, &doc, true, &s->phase, &e);
    if (st == QUIRE_E_PROVIDER) {
        if (s->err) { *s->err = e; s->err->offset = (size_t)s->ev_off; s->err->line = (uint32_t)s->ev_line; s->err->column = 1; }
    } else if (st == QUIRE_E_NOMEM) {
        q_oom(s->err);
    } else if (st) {
        st = rs_err(s, "chat chunk", "%s", e.message);
    }
    qj_doc_free(&doc);
    return st;
}

static quire_status ol_end(rstream *s) {
    if (!(s->phase & PH_DONE)) return rs_err(s, "(end of stream)", "the stream ended before the object with \"done\": true");
    return QUIRE_OK;
}

static const char *ol_stop(const racc *acc) {
    const char *r = acc->has_stop ? acc->stop_raw.data : NULL;
    if (r && strcmp(r, "length") == 0) return "max_tokens";
    return rb_has_calls(acc) ? "tool_use" : "end_turn";
}

static void ol_usage(const qj_doc *d, uint32_t u, int64_t out[RU_COUNT]) {
    out[RU_INPUT] = rj_int(d, u, "prompt_eval_count");
    out[RU_OUTPUT] = rj_int(d, u, "eval_count");
}

const rdec q_dec_ollama = {ol_json, false, ol_event, ol_end, ol_stop, ol_usage, NULL, NULL, NULL};
