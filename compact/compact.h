/* Compaction (DESIGN 6): planning and rewriting of transcripts to a token
 * budget. Internal interface for the CLI wrappers in this folder and for the
 * session-log replay (`compact` events carry the same policy object).
 *
 * Pure: no I/O, no clock, no globals; all memory from the transcript's
 * allocator. Deterministic: same transcript, state, policy and summary bytes
 * give the same output bytes. See docs/compaction.md.
 *
 * Ownership: the result transcript borrows strings, blocks' values and the
 * system/tools of the input transcript (keep the input alive while the result
 * is used) unless policy->flags has QUIRE_COMPACT_OWN, in which case it is
 * written and re-parsed into bytes of its own. */
#ifndef QUIRE_COMPACT_COMPACT_H
#define QUIRE_COMPACT_COMPACT_H

#include "reminders/state.h"
#include "core/transcript.h"

typedef quire_compact_policy qc_policy;

/* Token accounting constants (documented in docs/compaction.md). */
#define QC_TOK_MESSAGE 4u    /* per message: role and framing */
#define QC_TOK_BLOCK 3u      /* per content block (a string content counts as one) */
#define QC_TOK_TOOL_DEF 8u   /* per tool definition, plus its name, description, schema */
#define QC_TOK_SYSTEM 4u     /* the system prompt's framing, when present */
#define QC_TOK_IMAGE 1600u   /* per image, whatever its size */
#define QC_TOK_DOCUMENT 3000u /* per document (data or url) */

/* The wrapper of summaries (supplied or digest). */
#define QC_SUMMARY_OPEN "<conversation-summary>\n"
#define QC_SUMMARY_CLOSE "\n</conversation-summary>"

/* Applies a JSON policy object at node of d on top of *out (fields absent
 * keep their value). Unknown fields and wrong types are QUIRE_E_INVALID with
 * the JSON Pointer (relative to node, e.g. "/stages/prune"). */
quire_status qc_policy_parse(const qj_doc *d, uint32_t node, qc_policy *out, quire_error *err);

typedef struct qc_result {
    quire_transcript *t;   /* the compacted transcript (see Ownership) */
    quire_state *state;    /* the next reminder state (fresh when none was given) */
    qbuf events;           /* JSONL: transcript_compacted + reminder_expired(compacted_out) */
    qbuf report;           /* the report object, compact JSON, no newline */
    bool changed;          /* false: nothing to do; t holds the input's messages unchanged */
    uint64_t tokens_before, tokens_after;
} qc_result;

/* Compacts t (DESIGN 6). state may be NULL. summary (NULL = none) is applied
 * to the span the policy selects even under budget. On error nothing is
 * returned (out is zeroed) and err says why; QUIRE_E_BUDGET when the budget
 * cannot be met. */
quire_status qc_compact(const quire_transcript *t, const quire_state *state, const qc_policy *p,
                        const char *summary, size_t summary_len, qc_result *out, quire_error *err);
/* As qc_compact, applying summary to the span named by span_id (an id from
 * the plan) instead of the one the policy selects: QUIRE_E_MISMATCH when that
 * span's messages changed, QUIRE_E_INVALID when the id is malformed or the
 * span no longer falls on whole steps. span_id NULL = qc_compact. */
quire_status qc_compact_span(const quire_transcript *t, const quire_state *state, const qc_policy *p,
                             const char *summary, size_t summary_len, const char *span_id, qc_result *out,
                             quire_error *err);
void qc_result_free(qc_result *r);

/* Writes the plan object (see quire_compact_plan) with w. */
quire_status qc_plan(const quire_transcript *t, const qc_policy *p, qw *w, quire_error *err);

/* Estimated tokens of the whole transcript (UINT64_MAX when out of memory). */
uint64_t qc_estimate_transcript(const quire_transcript *t, const qc_policy *p);

/* The fixed summarisation instruction (the plan's system prompt). */
extern const char qc_summary_instruction[];

#endif
