/* Private to compact/: token accounting, the turn view of a transcript and
 * the summary texts (digest, summarisation request, wrapper). */
#ifndef QUIRE_COMPACT_INTERNAL_H
#define QUIRE_COMPACT_INTERNAL_H

#include "compact/compact.h"

/* ---- token accounting (counter.c) ---- */
/* A long escaped text decoded once, by the address and length of its
 * escaped bytes. */
typedef struct qc_plain {
    const char *key;
    size_t key_len;
    const char *p;
    size_t n;
} qc_plain;

typedef struct qc_counter {
    const qc_policy *p;
    qbuf tmp; /* decode / serialise scratch */
    bool oom; /* sticky: an estimate could not be made (its count is then 0) */
    /* When keep is set, an escaped text longer than keep_min bytes is decoded
     * into keep when it is counted and remembered (qc_plain_bytes finds it
     * again): compaction counts every block, then cuts the long ones, and
     * would otherwise decode them twice. */
    qarena *keep;
    size_t keep_min;
    qc_plain *plain; /* open addressing, plain_cap a power of two (or 0) */
    uint32_t plain_cap, plain_n;
} qc_counter;

void qc_counter_init(qc_counter *c, const qc_policy *p, const quire_allocator *a);
void qc_counter_free(qc_counter *c);
uint64_t qc_count_text(qc_counter *c, const char *s, size_t n);
uint64_t qc_count_qstr(qc_counter *c, qstr s);
/* The plain bytes of s: those qc_count_qstr kept, else decoded into ar. NULL on OOM. */
const char *qc_plain_bytes(qc_counter *c, qstr s, qarena *ar, size_t *len);
uint64_t qc_block_tokens(qc_counter *c, const qblock *b);
uint64_t qc_msg_tokens(qc_counter *c, const qmsg *m);
/* System prompt and tool definitions. */
uint64_t qc_fixed_tokens(qc_counter *c, const quire_transcript *t);
/* The whole transcript; *oom set when an estimate could not be made. */
uint64_t qc_transcript_tokens(const quire_transcript *t, const qc_policy *p, bool *oom);

/* ---- tool-call id map ---- */
typedef struct qc_idmap_entry {
    const char *key; /* plain bytes */
    uint32_t len;
    uint32_t msg;    /* message index */
    const qblock *block;
} qc_idmap_entry;
typedef struct qc_idmap {
    qc_idmap_entry *e;
    uint32_t cap; /* power of two, 0 = empty map */
} qc_idmap;

/* ---- the turn view of a transcript ---- */
typedef struct qc_view {
    const quire_transcript *t;
    const qc_policy *p;
    uint32_t n;          /* messages */
    uint32_t nturns;
    uint32_t *start;     /* nturns + 1 entries; start[0] = first turn (= preamble length), start[nturns] = n */
    bool *turn_pinned;   /* per turn: holds a pinned message */
    uint32_t *turn_of;   /* per message: its turn, UINT32_MAX in the preamble */
    /* units: the head of each turn (its user message and what follows up to
     * the first step) and its steps (an assistant message outside any
     * call/result pair and what follows up to the next unit) */
    uint32_t nunits;
    uint32_t *ustart;    /* nunits + 1 entries; ustart[0] = start[0], ustart[nunits] = n */
    bool *ustep;         /* per unit: a step (else a turn head) */
    bool *upinned;       /* per unit: holds a pinned message */
    bool *uopen;         /* per unit: holds a call the transcript has no result for (yet) */
    uint32_t *uturn;     /* per unit: its turn */
    uint32_t nsteps;
    qc_idmap calls;      /* toolCall id -> message holding it (first occurrence) */
    qc_idmap results;    /* toolCallId -> toolResult block (first occurrence) */
} qc_view;

/* Builds the view in ar. false on OOM. */
bool qc_view_build(qc_view *v, const quire_transcript *t, const qc_policy *p, qarena *ar);
/* Looks up a plain id; NULL when absent. */
const qc_idmap_entry *qc_idmap_get(const qc_idmap *m, const char *key, size_t len);

/* ---- summary texts (summary.c) ---- */
/* qt_excerpt (same no-cut rule and size bound) with the cut points moved back
 * to a line end when one lies in the last quarter of the head (first quarter
 * of the tail): excerpts of logs keep whole lines. */
size_t qc_excerpt(qbuf *out, const char *s, size_t n, size_t head, size_t tail);
/* Appends s with every "</TAG" (TAG without brackets, e.g. "conversation-summary")
 * turned into "&lt;/TAG" so it cannot close the wrapper. */
void qc_put_neutral(qbuf *b, const char *s, size_t n, const char *tag);
/* Appends the wrapped summary block text: QC_SUMMARY_OPEN + s (trailing
 * whitespace trimmed, closing tag neutralised) + QC_SUMMARY_CLOSE. */
void qc_wrap_summary(qbuf *b, const char *s, size_t n);
/* Appends the deterministic extractive digest of the messages [from, to)
 * (whole units), cut head/tail to at most p->summary_tokens tokens; earlier
 * (the summaries the new one replaces, may be empty) is quoted first. */
void qc_digest(qbuf *b, const qc_view *v, uint32_t from, uint32_t to, const char *earlier, size_t earlier_len,
               qc_counter *c, qarena *ar);
/* Whether bl is a summary block quire wrote (a text block that opens with the
 * summary tag); *inner, *len: its text inside the tags (in scratch or bl). */
bool qc_summary_inner(const qblock *bl, qbuf *scratch, const char **inner, size_t *len);
/* Appends the messages [from, to) as plain text for the summarisation
 * request: tool inputs and outputs cut head/tail to tool_cap bytes, other
 * texts to text_cap. */
void qc_span_text(qbuf *b, const qc_view *v, uint32_t from, uint32_t to, size_t tool_cap, size_t text_cap, qarena *ar);

#endif
