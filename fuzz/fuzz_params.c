/* Fuzz target: request parameters (DESIGN 13). Input: byte 0 picks the target
 * (provider, model), byte 1 the options (bit 0 lossy, bit 1 pretty), then a
 * params object, a NUL, and a quire.transcript/1 transcript.
 * Checks: no crash; quire_params_check and quire_render agree on the params'
 * shape; errors carry a message and leave no output; a rendered request is one
 * JSON text that passes quire_validate for its target, with an envelope
 * {method, path, headers} that is JSON; rendering is deterministic. The params
 * text is also read as a request body of one input dialect (bits 2-3):
 * quire_params_from_dialect either fails with a one-line error or returns a
 * params object quire_params_check accepts, which renders as params_base. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const char *const *tg = qf_targets[data[0] % QF_NTARGETS];
    uint8_t bits = data[1];
    const char *pj, *tr;
    size_t plen, trlen;
    qf_split(data + 2, size - 2, &pj, &plen, &tr, &trlen);
    quire_error e;
    quire_status pst = quire_params_check(pj, plen, &e);
    if (pst) qf_check_error(pst, &e, "params_check");
    static const char *const dialects[] = {"anthropic", "openai_chat", "openai_responses", "gemini"};
    quire_render_options bro = QUIRE_RENDER_OPTIONS_INIT;
    bro.provider = tg[0];
    bro.model = tg[1];
    bro.lossy = bits & 1;
    quire_bytes bp = {0}, bev = {0};
    quire_status bst = quire_params_from_dialect(dialects[(bits >> 2) & 3], pj, plen, &bro, NULL, &bp, &bev, &e);
    if (bst) {
        qf_check_error(bst, &e, "params_from_dialect");
        QF_ASSERT(!bp.data && !bev.data, "params_from_dialect returned output with %s", quire_status_name(bst));
    } else if (bp.len) {
        qf_check_json(bp.data, bp.len, "params from a body");
        QF_ASSERT(quire_params_check(bp.data, bp.len, &e) == QUIRE_OK, "params from a body fail the check: %s: %s",
                  e.pointer, e.message);
    }
    if (!tr) { quire_bytes_free(&bp); quire_bytes_free(&bev); return 0; }

    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    o.limits.max_messages = 4096;
    quire_transcript *t = NULL;
    quire_status st = quire_transcript_parse(tr, trlen, &o, &t, &e);
    if (st) {
        qf_check_error(st, &e, "transcript_parse");
        quire_bytes_free(&bp);
        quire_bytes_free(&bev);
        return 0;
    }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = tg[0];
    ro.model = tg[1];
    ro.lossy = bits & 1;
    ro.pretty = (bits >> 1) & 1;
    ro.params = pj;
    ro.params_len = plen;
    if (bp.len && (bits & 16)) { /* the body's parameters under the same text's */
        ro.params_base = bp.data;
        ro.params_base_len = bp.len;
    }
    quire_render_result r, r2;
    memset(&r, 0, sizeof r);
    memset(&r2, 0, sizeof r2);
    st = quire_render(t, NULL, &ro, &o, &r, &e);
    if (st) {
        qf_check_error(st, &e, "render");
        QF_ASSERT(!r.request.data && !r.envelope.data && !r.state, "render returned output with %s", quire_status_name(st));
    } else {
        QF_ASSERT(pst == QUIRE_OK, "render accepted params that quire_params_check rejects");
        qf_check_json(r.request.data, r.request.len, "rendered request");
        qf_check_json(r.envelope.data, r.envelope.len, "envelope");
        QF_ASSERT(r.envelope.len > 20 && memcmp(r.envelope.data, "{\"method\":\"POST\",\"path\":\"/", 26) == 0,
                  "envelope: %.200s", r.envelope.data);
        QF_ASSERT(quire_render(t, NULL, &ro, &o, &r2, &e) == QUIRE_OK, "second render failed: %s", e.message);
        QF_ASSERT(r2.request.len == r.request.len && memcmp(r2.request.data, r.request.data, r.request.len) == 0,
                  "render is not deterministic");
        QF_ASSERT(r2.envelope.len == r.envelope.len && memcmp(r2.envelope.data, r.envelope.data, r.envelope.len) == 0,
                  "envelope is not deterministic");
        quire_render_result_free(&r2);
        if (qf_strict()) {
            quire_bytes rep = {0};
            st = quire_validate(r.request.data, r.request.len, &ro, &o, &rep, &e);
            QF_ASSERT(st == QUIRE_OK, "rendered request fails validate for %s: %.400s", tg[0], rep.data ? rep.data : e.message);
            quire_bytes_free(&rep);
        }
    }
    quire_render_result_free(&r);
    quire_transcript_free(t);
    quire_bytes_free(&bp);
    quire_bytes_free(&bev);
    return 0;
}
