/* Fuzz target: compaction. Input: byte 0 the budget (x16 tokens, 0 = none),
 * byte 1 keepLastTurns (3 bits), keepFirstTurns (2 bits) and the stages
 * (3 bits, 0 = all), byte 2 the tool-output excerpt size and QUIRE_COMPACT_OWN,
 * then a transcript, optionally a NUL and a summary text.
 * Checks: no crash; errors carry a message; results write as transcripts that
 * parse back; events are JSONL and the report is JSON; compaction is
 * deterministic; an unchanged result is byte-identical to the input; a
 * result under budget compacts again to itself (idempotent); the plan is JSON. */
#include "fuzz_common.h"

static char *write_tr(const quire_transcript *t, size_t *len) {
    quire_bytes b = {0};
    quire_error e;
    QF_ASSERT(quire_transcript_write(t, 0, &b, &e) == QUIRE_OK, "transcript_write: %s", e.message);
    *len = b.len;
    return b.data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3 || !QF_HAVE(quire_compact) || !QF_HAVE(quire_compact_result_free)) return 0;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.budget_tokens = (uint64_t)data[0] * 16;
    p.keep_last_turns = data[1] & 7;
    p.keep_first_turns = (data[1] >> 3) & 3;
    p.stages = (data[1] >> 5) ? (uint32_t)(data[1] >> 5) : QUIRE_COMPACT_ALL_STAGES;
    p.tool_output_excerpt_bytes = (uint32_t)(data[2] >> 1) * 8;
    p.flags = (data[2] & 1) ? QUIRE_COMPACT_OWN : 0;
    const char *tr, *sum;
    size_t trlen, sumlen;
    qf_split(data + 3, size - 3, &tr, &trlen, &sum, &sumlen);

    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    o.limits.max_messages = 4096;
    quire_error e;
    quire_transcript *t = NULL;
    quire_status st = quire_transcript_parse(tr, trlen, &o, &t, &e);
    if (st) return 0;

    quire_compact_result r, r2;
    memset(&r, 0, sizeof r);
    memset(&r2, 0, sizeof r2);
    st = quire_compact(t, NULL, &p, sum, sumlen, &o, &r, &e);
    if (st) {
        qf_check_error(st, &e, "compact");
        QF_ASSERT(!r.transcript && !r.state && !r.events.data && !r.report.data, "output on failure");
    } else {
        QF_ASSERT(r.transcript != NULL, "no transcript");
        qf_check_jsonl(r.events.data, r.events.len, "compact events");
        if (r.report.data) qf_check_json(r.report.data, r.report.len, "report");
        size_t inl, outl, out2l;
        char *in = write_tr(t, &inl), *out = write_tr(r.transcript, &outl);
        if (!r.changed)
            QF_ASSERT(inl == outl && memcmp(in, out, inl) == 0, "changed == 0 but the transcript differs");
        quire_transcript *back = NULL;
        st = quire_transcript_parse(out, outl, &o, &back, &e);
        QF_ASSERT(st == QUIRE_OK, "the compacted transcript does not parse back: %s: %s", e.pointer, e.message);
        quire_transcript_free(back);
        /* deterministic */
        QF_ASSERT(quire_compact(t, NULL, &p, sum, sumlen, &o, &r2, &e) == QUIRE_OK, "second run failed: %s",
                  e.message);
        char *out2 = write_tr(r2.transcript, &out2l);
        QF_ASSERT(out2l == outl && memcmp(out, out2, outl) == 0, "compaction is not deterministic");
        QF_ASSERT(r2.report.len == r.report.len &&
                      (!r.report.len || memcmp(r.report.data, r2.report.data, r.report.len) == 0),
                  "the report is not deterministic");
        free(out2);
        quire_compact_result_free(&r2);
        /* idempotent: a result under budget compacts to itself */
        if (p.budget_tokens && QF_HAVE(quire_compact_estimate) &&
            quire_compact_estimate(r.transcript, &p) <= p.budget_tokens) {
            memset(&r2, 0, sizeof r2);
            st = quire_compact(r.transcript, NULL, &p, NULL, 0, &o, &r2, &e);
            QF_ASSERT(st == QUIRE_OK, "compacting a result under budget failed: %s", e.message);
            QF_ASSERT(!r2.changed, "compacting a result under budget changed it (not idempotent)");
            quire_compact_result_free(&r2);
        }
        free(in);
        free(out);
        quire_compact_result_free(&r);
    }
    if (QF_HAVE(quire_compact_plan)) {
        quire_bytes plan = {0};
        st = quire_compact_plan(t, &p, data[2] & 2, &o, &plan, &e);
        if (st) qf_check_error(st, &e, "compact_plan");
        else qf_check_json(plan.data, plan.len, "plan");
        quire_bytes_free(&plan);
    }
    quire_transcript_free(t);
    return 0;
}
