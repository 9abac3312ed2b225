/* The compaction policy object (JSON) and the public API wrappers. */
#include "compact/internal.h"

#include <stdarg.h>
#include <stdio.h>

static quire_status Q_PRINTF(5, 6) perr(quire_error *err, const qj_doc *d, uint32_t node, const char *ptr,
                                         const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_err_at(err, QUIRE_E_INVALID, qj_offset(d, node), ptr, "%s", msg);
    q_err_locate(err, d->src, d->len);
    return QUIRE_E_INVALID;
}

static quire_status get_uint(const qj_doc *d, uint32_t v, const char *ptr, uint64_t max, uint64_t *out,
                             quire_error *err) {
    int64_t x;
    if (qj_type_of(d, v) != QJ_NUMBER) return perr(err, d, v, ptr, "expected a whole number, got %s", qj_type_name(qj_type_of(d, v)));
    if (!qj_int64(d, v, &x) || x < 0 || (uint64_t)x > max) {
        char lim[32];
        snprintf(lim, sizeof lim, "%llu", (unsigned long long)max);
        return perr(err, d, v, ptr, "expected a whole number from 0 to %s", lim);
    }
    *out = (uint64_t)x;
    return QUIRE_OK;
}

static const char *const k_stage_names[] = {"pruneToolOutputs", "summarize", "cutOversized"};
static const uint32_t k_stage_bits[] = {QUIRE_COMPACT_PRUNE_TOOL_OUTPUTS, QUIRE_COMPACT_SUMMARIZE,
                                        QUIRE_COMPACT_CUT_OVERSIZED};

static void key_ptr(char *ptr, size_t cap, const char *prefix, const qj_doc *d, uint32_t k) {
    snprintf(ptr, cap, "%s", prefix);
    char key[128];
    const qj_node *kn = qj_at(d, k);
    size_t kl = kn->len < sizeof key - 1 ? kn->len : sizeof key - 1;
    memcpy(key, kn->p, kl);
    q_ptr_push_key(ptr, cap, key, kl);
}

quire_status qc_policy_parse(const qj_doc *d, uint32_t node, qc_policy *out, quire_error *err) {
    if (qj_type_of(d, node) != QJ_OBJECT)
        return perr(err, d, node, "", "expected a policy object, got %s", qj_type_name(qj_type_of(d, node)));
    uint32_t dup = qj_find_dup_key(d, node);
    if (dup != QJ_NONE) {
        char ptr[160];
        key_ptr(ptr, sizeof ptr, "", d, dup);
        return perr(err, d, dup, ptr, "duplicate key %s", "in policy");
    }
    qc_policy p = *out;
    const qj_node *o = qj_at(d, node);
    uint32_t k = node + 1;
    for (uint32_t m = 0; m < o->n; m++) {
        uint32_t v = k + 1;
        char ptr[160];
        key_ptr(ptr, sizeof ptr, "", d, k);
        uint64_t x = 0;
        quire_status st = QUIRE_OK;
        if (qj_str_eq(d, k, "budgetTokens")) {
            if (qj_type_of(d, v) == QJ_NULL) p.budget_tokens = 0;
            else if (!(st = get_uint(d, v, ptr, UINT64_C(1) << 53, &x, err))) p.budget_tokens = x;
        } else if (qj_str_eq(d, k, "budgetScope")) {
            if (qj_type_of(d, v) != QJ_STRING)
                return perr(err, d, v, ptr, "expected \"transcript\" or \"request\", got %s", qj_type_name(qj_type_of(d, v)));
            if (qj_str_eq(d, v, "transcript")) p.budget_scope = QUIRE_BUDGET_TRANSCRIPT;
            else if (qj_str_eq(d, v, "request")) p.budget_scope = QUIRE_BUDGET_REQUEST;
            else return perr(err, d, v, ptr, "unknown budget scope (expected \"transcript\" or \"request\")%s", "");
        } else if (qj_str_eq(d, k, "keepLastTurns")) {
            if (!(st = get_uint(d, v, ptr, UINT32_MAX, &x, err))) p.keep_last_turns = (uint32_t)x;
        } else if (qj_str_eq(d, k, "keepLastSteps")) {
            if (!(st = get_uint(d, v, ptr, UINT32_MAX, &x, err))) p.keep_last_steps = (uint32_t)x;
        } else if (qj_str_eq(d, k, "keepFirstTurns")) {
            if (!(st = get_uint(d, v, ptr, UINT32_MAX, &x, err))) p.keep_first_turns = (uint32_t)x;
        } else if (qj_str_eq(d, k, "toolOutputExcerptBytes")) {
            if (!(st = get_uint(d, v, ptr, UINT32_MAX, &x, err))) p.tool_output_excerpt_bytes = (uint32_t)x;
        } else if (qj_str_eq(d, k, "summaryTokens")) {
            if (!(st = get_uint(d, v, ptr, UINT32_MAX, &x, err))) p.summary_tokens = (uint32_t)x;
        } else if (qj_str_eq(d, k, "summaryRequestTokens")) {
            if (!(st = get_uint(d, v, ptr, UINT32_MAX, &x, err))) p.summary_request_tokens = (uint32_t)x;
        } else if (qj_str_eq(d, k, "stages")) {
            if (qj_type_of(d, v) != QJ_OBJECT)
                return perr(err, d, v, ptr, "expected an object of stage switches, got %s", qj_type_name(qj_type_of(d, v)));
            uint32_t dk = qj_find_dup_key(d, v);
            if (dk != QJ_NONE) {
                char p2[160];
                key_ptr(p2, sizeof p2, ptr, d, dk);
                return perr(err, d, dk, p2, "duplicate key %s", "in stages");
            }
            const qj_node *so = qj_at(d, v);
            uint32_t sk = v + 1;
            for (uint32_t j = 0; j < so->n; j++) {
                uint32_t sv = sk + 1;
                char p2[160];
                key_ptr(p2, sizeof p2, ptr, d, sk);
                size_t s = 0;
                while (s < Q_COUNTOF(k_stage_names) && !qj_str_eq(d, sk, k_stage_names[s])) s++;
                if (s == Q_COUNTOF(k_stage_names))
                    return perr(err, d, sk, p2, "unknown stage %s (expected pruneToolOutputs, summarize or cutOversized)",
                                "switch");
                qj_type ty = qj_type_of(d, sv);
                if (ty != QJ_TRUE && ty != QJ_FALSE) return perr(err, d, sv, p2, "expected a boolean, got %s", qj_type_name(ty));
                if (ty == QJ_TRUE) p.stages |= k_stage_bits[s];
                else p.stages &= ~k_stage_bits[s];
                sk = qj_next(d, sv);
            }
        } else {
            return perr(err, d, k, ptr, "unknown policy field (expected budgetTokens, budgetScope, keepLastSteps, keepLastTurns, keepFirstTurns, "
                                        "toolOutputExcerptBytes, summaryTokens, summaryRequestTokens or stages)%s", "");
        }
        if (st) return st;
        k = qj_next(d, v);
    }
    *out = p;
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

quire_status quire_compact_policy_parse(const char *json, size_t len, quire_compact_policy *p, quire_error *err) {
    if (!p) return q_err(err, QUIRE_E_INVALID, "no policy to fill");
    qj_doc d;
    quire_status st = qj_parse(&d, json, len, NULL, q_alloc_default(), err);
    if (st) return st;
    st = qc_policy_parse(&d, 0, p, err);
    qj_doc_free(&d);
    return st;
}

/* Policies from older callers (smaller size) take defaults for new fields. */
static qc_policy policy_of(const quire_compact_policy *in) {
    qc_policy p = QUIRE_COMPACT_POLICY_INIT;
    if (in) {
        size_t n = in->size < sizeof p ? in->size : sizeof p;
        if (n > sizeof(size_t)) memcpy((char *)&p + sizeof(size_t), (const char *)in + sizeof(size_t), n - sizeof(size_t));
        p.size = sizeof p;
    }
    return p;
}

static bool take(qbuf *b, quire_bytes *out) {
    if (b->oom) return false;
    if (!b->data) qbuf_grow(b, 1);
    return qbuf_take(b, out);
}

quire_status quire_compact(const quire_transcript *t, const quire_state *state, const quire_compact_policy *policy,
                           const char *summary, size_t summary_len, const quire_options *opts,
                           quire_compact_result *out, quire_error *err) {
    return quire_compact_apply(t, state, policy, summary, summary_len, NULL, opts, out, err);
}

quire_status quire_compact_apply(const quire_transcript *t, const quire_state *state,
                                 const quire_compact_policy *policy, const char *summary, size_t summary_len,
                                 const char *span_id, const quire_options *opts, quire_compact_result *out,
                                 quire_error *err) {
    (void)opts; /* allocation follows the transcript's allocator */
    if (!out) return q_err(err, QUIRE_E_INVALID, "no result to fill");
    memset(out, 0, sizeof *out);
    qc_policy p = policy_of(policy);
    qc_result r;
    quire_status st = qc_compact_span(t, state, &p, summary, summary_len, span_id, &r, err);
    if (st) return st;
    if (!take(&r.events, &out->events) || !take(&r.report, &out->report)) {
        quire_bytes_free(&out->events);
        qc_result_free(&r);
        return q_oom(err);
    }
    out->transcript = r.t;
    out->state = r.state;
    out->changed = r.changed;
    return QUIRE_OK;
}

void quire_compact_result_free(quire_compact_result *r) {
    if (!r) return;
    quire_transcript_free(r->transcript);
    quire_state_free(r->state);
    quire_bytes_free(&r->events);
    quire_bytes_free(&r->report);
    memset(r, 0, sizeof *r);
}

quire_status quire_compact_plan(const quire_transcript *t, const quire_compact_policy *policy, int pretty,
                                const quire_options *opts, quire_bytes *out, quire_error *err) {
    (void)opts;
    if (!t || !out) return q_err(err, QUIRE_E_INVALID, "plan needs a transcript and an output");
    qc_policy p = policy_of(policy);
    qbuf b;
    qbuf_init(&b, t->a);
    qw w;
    qw_init(&w, &b, pretty != 0);
    quire_status st = qc_plan(t, &p, &w, err);
    qw_dispose(&w);
    if (st) { qbuf_free(&b); return st; }
    if (b.oom || !qbuf_take(&b, out)) { qbuf_free(&b); return q_oom(err); }
    return QUIRE_OK;
}
