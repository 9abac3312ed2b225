/* Gemini generateContent responses: the JSON body (or the JSON array that
 * streamGenerateContent returns without alt=sse) and the alt=sse stream, one
 * GenerateContentResponse per event. Parts: text, thought text (`thought:
 * true`), functionCall, thoughtSignature on any part; everything else
 * (executableCode, codeExecutionResult, inlineData, ...) stays whole as an
 * opaque item. Consecutive text parts of one kind join into one block, so a
 * body and its stream decode alike. A signature on a non-thought part becomes
 * an empty thinking block carrying it, right before the block it belongs to
 * (the form render/enc_gemini.c sends back). Only the first candidate is
 * decoded. Sources: ai.google.dev "Generating content" API reference
 * (GenerateContentResponse, Candidate, FinishReason, UsageMetadata) and
 * "Thought signatures". */
#include "respond/respond.h"

#include <stdio.h>

static rblock *last(racc *acc) { return acc->n ? &acc->b[acc->n - 1] : NULL; }

static bool sig_block(const rblock *b) { return b->kind == RK_THINKING && b->text.len == 0 && b->sig.len; }

/* Inserts an empty thinking block carrying sig at position pos. */
static bool insert_sig(racc *acc, uint32_t pos, const qj_doc *d, uint32_t sig) {
    if (!racc_push(acc, RK_THINKING)) return false;
    rblock nb = acc->b[acc->n - 1];
    memmove(&acc->b[pos + 1], &acc->b[pos], (acc->n - 1 - pos) * sizeof *acc->b);
    acc->b[pos] = nb;
    rb_put_str(&acc->b[pos].sig, d, sig);
    return true;
}

static bool part(racc *acc, const qj_doc *d, uint32_t p, bool stream) {
    uint32_t text = rj_str(d, p, "text"), sig = rj_str(d, p, "thoughtSignature");
    uint32_t th = qj_get(d, p, "thought");
    bool thought = th != QJ_NONE && qj_type_of(d, th) == QJ_TRUE;
    uint32_t fc = rj_obj(d, p, "functionCall");
    rblock *b = last(acc);
    if (text != QJ_NONE && thought) {
        if (!b || b->kind != RK_THINKING || b->sig.len) b = racc_push(acc, RK_THINKING);
        if (!b) return false;
        rb_put_str(&b->text, d, text);
        if (sig != QJ_NONE) rb_put_str(&b->sig, d, sig);
        if (stream) racc_ev_text(acc, acc->n - 1, true, d, text);
        return true;
    }
    if (text != QJ_NONE && fc == QJ_NONE) {
        bool empty = qj_at(d, text)->len == 0;
        if (sig != QJ_NONE && empty) {
            /* a trailing signature: it belongs to the text block before it */
            if (b && b->kind == RK_TEXT && !(acc->n >= 2 && sig_block(&acc->b[acc->n - 2])))
                return insert_sig(acc, acc->n - 1, d, sig);
            b = racc_push(acc, RK_THINKING);
            if (b) rb_put_str(&b->sig, d, sig);
            return b != NULL;
        }
        if (sig != QJ_NONE && stream && !empty && b && b->kind == RK_TEXT &&
            !(acc->n >= 2 && sig_block(&acc->b[acc->n - 2]))) {
            /* a stream splits one part over chunks and sends its signature
             * with the last: it signs the text block it ends, as in the body */
            if (!insert_sig(acc, acc->n - 1, d, sig)) return false;
            b = last(acc);
        } else if (sig != QJ_NONE) {
            rblock *t = racc_push(acc, RK_THINKING);
            if (!t) return false;
            rb_put_str(&t->sig, d, sig);
            b = NULL;
        }
        if (empty && (!b || b->kind != RK_TEXT)) return true;
        if (!b || b->kind != RK_TEXT) b = racc_push(acc, RK_TEXT);
        if (!b) return false;
        rb_put_str(&b->text, d, text);
        if (stream) racc_ev_text(acc, acc->n - 1, false, d, text);
        return true;
    }
    if (sig != QJ_NONE && fc != QJ_NONE) {
        rblock *t = racc_push(acc, RK_THINKING);
        if (!t) return false;
        rb_put_str(&t->sig, d, sig);
    }
    if (fc != QJ_NONE) {
        uint32_t name = rj_str(d, fc, "name"), id = rj_str(d, fc, "id"), args = qj_get(d, fc, "args");
        if (name == QJ_NONE) return true; /* checked by the caller */
        uint32_t k = acc->ntool;
        b = racc_push(acc, RK_TOOL_CALL);
        if (!b) return false;
        if (id != QJ_NONE) rb_put_str(&b->id, d, id);
        else qbuf_printf(&b->id, "%s%u", acc->call_prefix, k);
        rb_put_str(&b->name, d, name);
        if (args != QJ_NONE) rb_put_raw(&b->args, d, args);
        if (stream) racc_ev_call(acc, acc->n - 1, b);
        return true;
    }
    b = racc_push(acc, RK_OPAQUE);
    if (b) rb_put_raw(&b->raw, d, p);
    return b != NULL;
}

#define PH_FINISHED 0x1u

/* One GenerateContentResponse (a body or a stream chunk). */
static quire_status chunk(racc *acc, const qj_doc *d, uint32_t r, bool stream, uint32_t *phase, quire_error *err,
                          const char *ptr) {
    if (qj_type_of(d, r) != QJ_OBJECT) return rerr_at(err, d, r, ptr, "expected a GenerateContentResponse object");
    uint32_t eo = rj_obj(d, r, "error");
    if (eo != QJ_NONE) {
        uint32_t t = rj_str(d, eo, "status");
        if (t == QJ_NONE) t = qj_get(d, eo, "code");
        return rerr_provider(err, d, t, rj_str(d, eo, "message"), qj_offset(d, r));
    }
    racc_meta(acc, d, rj_str(d, r, "responseId"), rj_str(d, r, "modelVersion"));
    uint32_t um = rj_obj(d, r, "usageMetadata");
    if (um != QJ_NONE) { racc_usage_clear(acc); racc_usage(acc, d, um); }
    uint32_t cands = rj_arr(d, r, "candidates");
    if (cands == QJ_NONE || qj_at(d, cands)->n == 0) {
        uint32_t br = rj_str(d, rj_obj(d, r, "promptFeedback"), "blockReason");
        if (br != QJ_NONE) { racc_stop(acc, d, br); acc->refusal = true; *phase |= PH_FINISHED; }
        return QUIRE_OK;
    }
    uint32_t c = cands + 1;
    uint32_t parts = rj_arr(d, rj_obj(d, c, "content"), "parts");
    if (parts != QJ_NONE) {
        if (*phase & PH_FINISHED) {
            char pp[96];
            snprintf(pp, sizeof pp, "%s/candidates/0/content/parts", ptr);
            return rerr_at(err, d, parts, pp, "content after the candidate's finishReason");
        }
        uint32_t k = 0;
        for (uint32_t p = parts + 1; p < qj_next(d, parts); p = qj_next(d, p), k++) {
            uint32_t fc = rj_obj(d, p, "functionCall");
            if (fc != QJ_NONE && rj_str(d, fc, "name") == QJ_NONE) {
                char fp[128];
                snprintf(fp, sizeof fp, "%s/candidates/0/content/parts/%u/functionCall", ptr, k);
                return rerr_at(err, d, fc, fp, "functionCall without a string \"name\"");
            }
            if (!part(acc, d, p, stream)) return q_oom(err);
        }
    }
    uint32_t fr = rj_str(d, c, "finishReason");
    if (fr != QJ_NONE) { racc_stop(acc, d, fr); *phase |= PH_FINISHED; }
    return QUIRE_OK;
}

static quire_status ge_json(racc *acc, const qj_doc *d, quire_error *err) {
    uint32_t phase = 0;
    if (qj_type_of(d, 0) != QJ_ARRAY) return chunk(acc, d, 0, false, &phase, err, "");
    uint32_t i = 0;
    for (uint32_t e = 1; e < qj_next(d, 0); e = qj_next(d, e), i++) {
        char ptr[32];
        snprintf(ptr, sizeof ptr, "/%u", i);
        quire_status st = chunk(acc, d, e, false, &phase, err, ptr);
        if (st) return st;
    }
    return QUIRE_OK;
}

static quire_status ge_event(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen) {
    (void)name; (void)nlen;
    qj_doc doc;
    quire_status st = rs_parse(s, data, dlen, &doc);
    if (st) return st;
    quire_error e;
    st = chunk(&s->acc, &doc, 0, true, &s->phase, &e, "");
    if (st == QUIRE_E_PROVIDER) {
        if (s->err) { *s->err = e; s->err->offset = (size_t)s->ev_off; s->err->line = (uint32_t)s->ev_line; s->err->column = 1; }
    } else if (st == QUIRE_E_NOMEM) {
        q_oom(s->err);
    } else if (st) {
        st = rs_err(s, "GenerateContentResponse", "%s", e.message);
    }
    qj_doc_free(&doc);
    return st;
}

static quire_status ge_end(rstream *s) {
    if (!(s->phase & PH_FINISHED))
        return rs_err(s, "(end of stream)", "the stream ended before a candidate's finishReason");
    return QUIRE_OK;
}

static const char *ge_stop(const racc *acc) {
    if (acc->refusal) return "refusal";
    const char *r = acc->has_stop ? acc->stop_raw.data : NULL;
    if (!r || strcmp(r, "STOP") == 0) return rb_has_calls(acc) ? "tool_use" : "end_turn";
    if (strcmp(r, "MAX_TOKENS") == 0) return "max_tokens";
    static const char *const refuse[] = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
                                         "IMAGE_SAFETY", "LANGUAGE"};
    for (size_t i = 0; i < Q_COUNTOF(refuse); i++)
        if (strcmp(r, refuse[i]) == 0) return "refusal";
    return "error"; /* MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER, FINISH_REASON_UNSPECIFIED, ... */
}

static void ge_usage(const qj_doc *d, uint32_t u, int64_t out[RU_COUNT]) {
    static const char *const in[] = {"promptTokenCount", "toolUsePromptTokenCount"};
    static const char *const outp[] = {"candidatesTokenCount", "thoughtsTokenCount"};
    out[RU_INPUT] = rj_sum(d, u, in, Q_COUNTOF(in));
    out[RU_OUTPUT] = rj_sum(d, u, outp, Q_COUNTOF(outp));
    out[RU_CACHE_READ] = rj_int(d, u, "cachedContentTokenCount");
    out[RU_REASONING] = rj_int(d, u, "thoughtsTokenCount");
}

/* The name a tool is sent under (render/: qr_write_tool_name). */
static size_t ge_tool_name(const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    return rdec_sent_name(QD_GEMINI, s, n, out);
}

const rdec q_dec_gemini = {ge_json, true, ge_event, ge_end, ge_stop, ge_usage, NULL, NULL, ge_tool_name};
