/* OpenAI Chat Completions responses: the chat.completion body and the
 * chat.completion.chunk SSE stream (content and refusal deltas, tool-call
 * fragments joined by `index`, usage in the last chunk with
 * stream_options.include_usage, the closing `data: [DONE]`). The same shapes
 * serve Mistral (dec_mistral.c): content may also be an array of chunks
 * ({"type":"text"} | {"type":"thinking","thinking":[...]}), arguments an object.
 * Sources: platform.openai.com "Chat Completions" API reference and
 * "Streaming"; docs.mistral.ai "Chat Completion". */
#include "respond/respond.h"

#include <stdio.h>

/* Block keys for the single text, thinking and refusal blocks of a choice
 * (tool calls use their index, >= 0). */
#define K_TEXT (-2)
#define K_THINK (-3)
#define K_REFUSAL (-4)

static rblock *keyed(racc *acc, int64_t key, rkind kind) {
    rblock *b = racc_find(acc, key);
    if (b) return b;
    b = racc_push(acc, kind);
    if (b && !racc_key(acc, b, key)) return NULL;
    return b;
}

/* Mistral's content arrays keep their order: a text (or thinking) chunk
 * joins the block of its kind only when that block is the last one; after
 * another chunk (a reference, ...) it opens a new block. */
static rblock *keyed_tail(racc *acc, int64_t key, rkind kind) {
    rblock *b = acc->n ? &acc->b[acc->n - 1] : NULL;
    if (b && b->key == key) return b;
    b = racc_push(acc, kind);
    if (b && !racc_key(acc, b, key)) return NULL;
    return b;
}

/* A content value: a string, or (Mistral) an array of text/thinking chunks. */
static void content(racc *acc, const qj_doc *d, uint32_t v, bool events) {
    if (v == QJ_NONE) return;
    if (qj_type_of(d, v) == QJ_STRING) {
        if (qj_at(d, v)->len == 0 && racc_find(acc, K_TEXT) == NULL) return;
        rblock *b = keyed(acc, K_TEXT, RK_TEXT);
        if (!b) return;
        rb_put_str(&b->text, d, v);
        if (events) racc_ev_text(acc, (uint32_t)(b - acc->b), false, d, v);
        return;
    }
    if (qj_type_of(d, v) != QJ_ARRAY) return;
    for (uint32_t e = v + 1; e < qj_next(d, v); e = qj_next(d, e)) {
        uint32_t t = rj_str(d, e, "type");
        if (t != QJ_NONE && qj_str_eq(d, t, "text")) {
            uint32_t x = rj_str(d, e, "text");
            if (x == QJ_NONE || (qj_at(d, x)->len == 0 && racc_find(acc, K_TEXT) == NULL)) continue;
            rblock *b = keyed_tail(acc, K_TEXT, RK_TEXT);
            if (!b) continue;
            rb_put_str(&b->text, d, x);
            if (events) racc_ev_text(acc, (uint32_t)(b - acc->b), false, d, x);
        } else if (t != QJ_NONE && qj_str_eq(d, t, "thinking")) {
            uint32_t parts = rj_arr(d, e, "thinking");
            rblock *b = keyed_tail(acc, K_THINK, RK_THINKING);
            if (!b || parts == QJ_NONE) continue;
            for (uint32_t p = parts + 1; p < qj_next(d, parts); p = qj_next(d, p)) {
                uint32_t x = rj_str(d, p, "text");
                if (x == QJ_NONE) continue;
                rb_put_str(&b->text, d, x);
                if (events) racc_ev_text(acc, (uint32_t)(b - acc->b), true, d, x);
            }
        } else {
            rblock *b = racc_push(acc, RK_OPAQUE);
            if (b) rb_put_raw(&b->raw, d, e);
        }
    }
}

static void reasoning(racc *acc, const qj_doc *d, uint32_t obj, bool events) {
    /* DeepSeek and several compatible servers: reasoning_content (or reasoning) beside content */
    uint32_t x = rj_str(d, obj, "reasoning_content");
    if (x == QJ_NONE) x = rj_str(d, obj, "reasoning");
    if (x == QJ_NONE || (qj_at(d, x)->len == 0 && !racc_find(acc, K_THINK))) return;
    rblock *b = keyed(acc, K_THINK, RK_THINKING);
    if (!b) return;
    rb_put_str(&b->text, d, x);
    if (events) racc_ev_text(acc, (uint32_t)(b - acc->b), true, d, x);
}

static void refusal(racc *acc, const qj_doc *d, uint32_t obj) {
    uint32_t x = rj_str(d, obj, "refusal");
    if (x == QJ_NONE) return;
    rblock *b = keyed(acc, K_REFUSAL, RK_TEXT);
    if (!b) return;
    rb_put_str(&b->text, d, x);
    acc->refusal = true;
}

static void annotations(racc *acc, const qj_doc *d, uint32_t obj) {
    uint32_t arr = rj_arr(d, obj, "annotations");
    if (arr == QJ_NONE || qj_at(d, arr)->n == 0) return;
    rblock *b = keyed(acc, K_TEXT, RK_TEXT);
    if (!b) return;
    for (uint32_t e = arr + 1; e < qj_next(d, arr); e = qj_next(d, e)) {
        if (b->raw.len) qbuf_putc(&b->raw, ',');
        rb_put_raw(&b->raw, d, e);
    }
}

static void args_of(qbuf *b, const qj_doc *d, uint32_t a) {
    if (a == QJ_NONE) return;
    if (qj_type_of(d, a) == QJ_STRING) rb_put_str(b, d, a);
    else if (qj_type_of(d, a) == QJ_OBJECT) rb_put_raw(b, d, a); /* Mistral */
}

static quire_status error_body(const qj_doc *d, quire_error *err) {
    uint32_t eo = rj_obj(d, 0, "error");
    if (eo != QJ_NONE) {
        uint32_t t = rj_str(d, eo, "type");
        if (t == QJ_NONE || qj_at(d, t)->len == 0) t = qj_get(d, eo, "code");
        return rerr_provider(err, d, t, rj_str(d, eo, "message"), 0);
    }
    uint32_t t = rj_str(d, 0, "type");
    if (t == QJ_NONE) t = qj_get(d, 0, "code");
    uint32_t m = rj_str(d, 0, "message");
    if (m == QJ_NONE) m = qj_get(d, 0, "detail");
    return rerr_provider(err, d, t, m, 0);
}

static bool is_error(const qj_doc *d) {
    uint32_t o = rj_str(d, 0, "object");
    return rj_obj(d, 0, "error") != QJ_NONE || (o != QJ_NONE && qj_str_eq(d, o, "error")) ||
           (qj_get(d, 0, "detail") != QJ_NONE && qj_get(d, 0, "choices") == QJ_NONE);
}

quire_status q_chat_json(racc *acc, const qj_doc *d, quire_error *err) {
    if (qj_type_of(d, 0) != QJ_OBJECT) return rerr_at(err, d, 0, "", "expected a chat completion object");
    if (is_error(d)) return error_body(d, err);
    uint32_t choices = rj_arr(d, 0, "choices");
    if (choices == QJ_NONE || qj_at(d, choices)->n == 0)
        return rerr_at(err, d, choices == QJ_NONE ? 0 : choices, "/choices", "expected a non-empty array \"choices\"");
    if (qj_at(d, choices)->n > 1)
        return rerr_at(err, d, qj_next(d, choices + 1), "/choices/1",
                       "the answer has %u choices (a request with n > 1); an assistant message holds one: ask for n = 1",
                       qj_at(d, choices)->n);
    racc_meta(acc, d, rj_str(d, 0, "id"), rj_str(d, 0, "model"));
    uint32_t c0 = choices + 1;
    uint32_t m = rj_obj(d, c0, "message");
    if (m == QJ_NONE) return rerr_at(err, d, c0, "/choices/0/message", "missing object \"message\"");
    reasoning(acc, d, m, false);
    content(acc, d, qj_get(d, m, "content"), false);
    annotations(acc, d, m);
    refusal(acc, d, m);
    uint32_t calls = rj_arr(d, m, "tool_calls");
    uint32_t i = 0;
    if (calls != QJ_NONE)
        for (uint32_t e = calls + 1; e < qj_next(d, calls); e = qj_next(d, e), i++) {
            uint32_t f = rj_obj(d, e, "function"), id = rj_str(d, e, "id"), name = rj_str(d, f, "name");
            /* a custom (freeform) tool's call: {"type":"custom","custom":{"name","input"}} */
            uint32_t cu = rj_obj(d, e, "custom");
            bool custom = cu != QJ_NONE && f == QJ_NONE;
            if (custom) name = rj_str(d, cu, "name");
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/choices/0/message/tool_calls/%u", i);
            /* a function call without an id (some OpenAI-compatible servers)
             * gets one made up, as Gemini's and Ollama's calls do */
            bool made = !custom && name != QJ_NONE && (id == QJ_NONE || qj_at(d, id)->len == 0);
            if ((id == QJ_NONE && !made) || name == QJ_NONE)
                return rerr_at(err, d, e, ptr, custom ? "custom tool call needs string \"id\" and \"custom.name\""
                                                      : "tool call needs string \"function.name\"");
            uint32_t k = acc->ntool;
            rblock *b = racc_push(acc, custom ? RK_CUSTOM_CALL : RK_TOOL_CALL);
            if (!b) return q_oom(err);
            if (made) qbuf_printf(&b->id, "%s%u", acc->call_prefix, k);
            else rb_put_str(&b->id, d, id);
            rb_put_str(&b->name, d, name);
            if (custom) {
                uint32_t in = rj_str(d, cu, "input");
                if (in != QJ_NONE) rb_put_str(&b->text, d, in);
            } else {
                uint32_t a = qj_get(d, f, "arguments");
                args_of(&b->args, d, a);
                if (a != QJ_NONE) {
                    char ap[96];
                    snprintf(ap, sizeof ap, "%s/function/arguments", ptr);
                    rb_source(b, qj_offset(d, a), 0, ap);
                }
            }
        }
    racc_stop(acc, d, rj_str(d, c0, "finish_reason"));
    racc_usage(acc, d, rj_obj(d, 0, "usage"));
    return QUIRE_OK;
}

#define PH_DONE 0x1u
#define PH_FINISHED 0x2u

static quire_status q_chat_handle(rstream *s, const char *name, const qj_doc *d) {
    (void)name;
    const char *ev = "chat.completion.chunk";
    racc *acc = &s->acc;
    if (qj_type_of(d, 0) != QJ_OBJECT) { return rs_err(s, ev, "data is not an object"); }
    if (is_error(d)) {
        quire_status st = error_body(d, s->err);
        if (s->err) s->err->offset = (size_t)s->ev_off, s->err->line = (uint32_t)s->ev_line, s->err->column = 1;
        return st;
    }
    racc_meta(acc, d, rj_str(d, 0, "id"), rj_str(d, 0, "model"));
    racc_usage(acc, d, rj_obj(d, 0, "usage"));
    uint32_t choices = rj_arr(d, 0, "choices");
    if (choices == QJ_NONE) {
        if (rj_obj(d, 0, "usage") == QJ_NONE) return rs_err(s, ev, "neither \"choices\" nor \"usage\"");
        return QUIRE_OK;
    }
    for (uint32_t c = choices + 1; c < qj_next(d, choices); c = qj_next(d, c)) {
        int64_t ci = 0;
        uint32_t cix = qj_get(d, c, "index");
        if (cix != QJ_NONE && (!qj_int64(d, cix, &ci) || ci < 0)) { return rs_err(s, ev, "bad choice \"index\""); }
        if (ci != 0) /* an assistant message holds one choice */
            return rs_err(s, ev, "a delta of choice %lld (a request with n > 1); an assistant message holds one: ask for n = 1",
                          (long long)ci);
        uint32_t delta = rj_obj(d, c, "delta");
        if (delta != QJ_NONE) {
            if (s->phase & PH_FINISHED) { return rs_err(s, ev, "a delta after the choice's finish_reason"); }
            reasoning(acc, d, delta, true);
            content(acc, d, qj_get(d, delta, "content"), true);
            annotations(acc, d, delta);
            refusal(acc, d, delta);
            uint32_t calls = rj_arr(d, delta, "tool_calls");
            if (calls != QJ_NONE)
                for (uint32_t e = calls + 1; e < qj_next(d, calls); e = qj_next(d, e)) {
                    int64_t idx;
                    uint32_t ix = qj_get(d, e, "index");
                    if (ix == QJ_NONE || !qj_int64(d, ix, &idx) || idx < 0) {
                        return rs_err(s, ev, "tool call fragment without an integer \"index\"");
                    }
                    uint32_t f = rj_obj(d, e, "function"), id = rj_str(d, e, "id"), nm = rj_str(d, f, "name");
                    uint32_t cu = rj_obj(d, e, "custom"); /* a custom tool's call: custom.name, custom.input */
                    if (cu != QJ_NONE && f == QJ_NONE) nm = rj_str(d, cu, "name");
                    rblock *b = racc_find(acc, idx);
                    bool fresh = !b;
                    if (fresh) {
                        bool custom = cu != QJ_NONE && f == QJ_NONE;
                        bool made = !custom && nm != QJ_NONE && (id == QJ_NONE || qj_at(d, id)->len == 0);
                        if ((id == QJ_NONE && !made) || nm == QJ_NONE) {
                            return rs_err(s, ev, "first fragment of tool call %lld lacks \"id\" or \"function.name\"",
                                        (long long)idx);
                        }
                        uint32_t k = acc->ntool;
                        if (!(b = racc_push(acc, custom ? RK_CUSTOM_CALL : RK_TOOL_CALL))) {
                            return q_oom(s->err);
                        }
                        if (!racc_key(acc, b, idx)) return q_oom(s->err);
                        if (made) qbuf_printf(&b->id, "%s%u", acc->call_prefix, k);
                        else rb_put_str(&b->id, d, id);
                        rb_put_str(&b->name, d, nm);
                        racc_ev_call(acc, acc->n - 1, b);
                    } else if (id != QJ_NONE && qj_at(d, id)->len &&
                               !(qj_str_decoded_len(d, id) == b->id.len && qj_str_eqn(d, id, b->id.data, b->id.len))) {
                        return rs_err(s, ev, "tool call %lld changed its id", (long long)idx);
                    }
                    if (b->kind == RK_CUSTOM_CALL) {
                        if (f != QJ_NONE) return rs_err(s, ev, "tool call %lld mixes function and custom fragments", (long long)idx);
                        uint32_t in = rj_str(d, cu, "input");
                        if (in != QJ_NONE) {
                            rb_put_str(&b->text, d, in);
                            racc_ev_args(acc, (uint32_t)(b - acc->b), b, d, in);
                        }
                        continue;
                    }
                    if (cu != QJ_NONE) return rs_err(s, ev, "tool call %lld mixes function and custom fragments", (long long)idx);
                    uint32_t a = f != QJ_NONE ? qj_get(d, f, "arguments") : QJ_NONE; /* a fragment may carry only its index */
                    args_of(&b->args, d, a);
                    if (a != QJ_NONE) rb_source(b, s->ev_off, s->ev_line, "");
                    if (a != QJ_NONE && qj_type_of(d, a) == QJ_STRING)
                        racc_ev_args(acc, (uint32_t)(b - acc->b), b, d, a);
                }
        }
        uint32_t fr = rj_str(d, c, "finish_reason");
        if (fr != QJ_NONE) { racc_stop(acc, d, fr); s->phase |= PH_FINISHED; }
    }
    return QUIRE_OK;
}

quire_status q_chat_event(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen) {
    (void)nlen;
    if (s->phase & PH_DONE) return rs_err(s, "chat.completion.chunk", "data after [DONE]");
    if (dlen == 6 && memcmp(data, "[DONE]", 6) == 0) {
        s->phase |= PH_DONE;
        return QUIRE_OK;
    }
    qj_doc doc;
    quire_status st = rs_parse(s, data, dlen, &doc);
    if (st) return st;
    st = q_chat_handle(s, name, &doc);
    qj_doc_free(&doc);
    return st;
}

quire_status q_chat_end(rstream *s) {
    if (!(s->phase & PH_FINISHED)) return rs_err(s, "(end of stream)", "the stream ended before a finish_reason");
    if (!(s->phase & PH_DONE)) return rs_err(s, "(end of stream)", "the stream ended before data: [DONE]");
    return QUIRE_OK;
}

static const char *chat_stop(const racc *acc) {
    if (acc->refusal) return "refusal";
    const char *r = acc->has_stop ? acc->stop_raw.data : NULL;
    if (r && (strcmp(r, "length") == 0)) return "max_tokens";
    if (r && (strcmp(r, "content_filter") == 0)) return "refusal";
    if (r && (strcmp(r, "tool_calls") == 0 || strcmp(r, "function_call") == 0)) return "tool_use";
    /* DeepSeek: the inference was cut short for lack of resources (DeepSeek
     * API reference, chat completion finish_reason) */
    if (r && strcmp(r, "insufficient_system_resource") == 0) return "error";
    return rb_has_calls(acc) ? "tool_use" : "end_turn";
}

static void chat_usage(const qj_doc *d, uint32_t u, int64_t out[RU_COUNT]) {
    out[RU_INPUT] = rj_int(d, u, "prompt_tokens");
    out[RU_OUTPUT] = rj_int(d, u, "completion_tokens");
    out[RU_CACHE_READ] = rj_int(d, u, "prompt_tokens_details.cached_tokens");
    if (out[RU_CACHE_READ] < 0) out[RU_CACHE_READ] = rj_int(d, u, "prompt_cache_hit_tokens"); /* DeepSeek */
    out[RU_REASONING] = rj_int(d, u, "completion_tokens_details.reasoning_tokens");
}

/* The name a tool is sent under (render/: qr_write_tool_name). */
static size_t chat_tool_name(const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    return rdec_sent_name(QD_OPENAI_CHAT, s, n, out);
}

const rdec q_dec_openai_chat = {q_chat_json, true, q_chat_event, q_chat_end, chat_stop, chat_usage, NULL, NULL, chat_tool_name};
