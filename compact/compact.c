/* Compaction engine (DESIGN 6): stages, summary placement, report, events.
 * docs/compaction.md describes the behaviour; this file implements it.
 *
 * Every message and block is estimated once (cached counts are adjusted as
 * blocks change), so a run costs one pass of the estimator over the input
 * plus the excerpts it writes. */
#include "compact/internal.h"
#include "core/text.h"

#include <stdio.h>

/* Stage 3: a cut keeps at least this many tokens of an item, and charges
 * this many for the marker when choosing the water level. */
#define QC_CUT_FLOOR 32u
#define QC_CUT_MARK 12u

typedef struct qc_rec {
    uint32_t msg;      /* index in the work array */
    uint32_t block;
    int32_t part;      /* toolResult content part, -1 = the block's own text */
    size_t before, after;
} qc_rec;

typedef struct qc_run {
    const quire_transcript *in;
    const qc_policy *p;
    const quire_allocator *a;
    quire_error *err;
    qarena ar;          /* scratch for this run */
    qc_counter cnt;
    qc_view v;
    quire_transcript *nt; /* the result; its arena holds every new string */
    uint32_t n;         /* input messages; work has n + 1 slots (the last: a standalone summary) */
    qmsg *work;
    uint64_t **btok;    /* per message: cached block estimates */
    uint64_t **btok0;   /* per input message: its blocks' estimates as input */
    uint64_t *mtok;     /* per message estimate */
    uint64_t *mtok0;    /* per message estimate of the input */
    bool *owned;        /* blocks array already copied into nt's arena */
    bool *drop;
    uint64_t fixed, total, before;
    uint64_t cut_floor;  /* stage 3 gave up: the estimate with every item it may cut at the floor (0: not) */
    uint32_t tail_unit;  /* first unit of the protected tail (the last keepLastSteps steps) */
    uint32_t tail_msg;   /* its first message (n when nothing is protected) */
    /* summary */
    uint32_t span_a, span_b; /* the span: messages [span_a, span_b), whole units; empty when equal */
    uint32_t span_units, span_steps, span_msgs, span_first, span_last;
    int place;           /* QC_PLACE_*: where the summary goes */
    uint32_t place_at;   /* message the summary merges into / is appended to / stands before */
    bool summarized, supplied;
    uint32_t summary_at; /* work index of the message holding the summary block */
    uint32_t summary_block; /* its block index there */
    uint64_t summary_tok, span_tok;
    /* the last span digest computed (the report and the event both name the span) */
    uint32_t dig_a, dig_b;
    uint64_t dig;
    bool dig_ok;
    uint32_t replaced;      /* earlier summaries the new one replaced */
    /* records */
    qbuf prunes, cuts;  /* arrays of qc_rec */
    bool did_prune, did_cut;
    bool oom;
} qc_run;

static bool over(const qc_run *r) { return r->p->budget_tokens && r->total > r->p->budget_tokens; }

static bool run_init(qc_run *r, const quire_transcript *t, const qc_policy *p, quire_error *err) {
    memset(r, 0, sizeof *r);
    r->in = t;
    r->p = p;
    r->a = t->a;
    r->err = err;
    qarena_init(&r->ar, r->a);
    qc_counter_init(&r->cnt, p, r->a);
    r->cnt.keep = &r->ar; /* the long texts that stages 1 and 3 may cut are decoded once */
    /* stage 1 cuts texts longer than the excerpt; stage 3 texts of more than
     * QC_CUT_FLOOR + QC_CUT_MARK tokens, which have at least as many bytes */
    r->cnt.keep_min = p->tool_output_excerpt_bytes < QC_CUT_FLOOR + QC_CUT_MARK ? p->tool_output_excerpt_bytes
                                                                              : QC_CUT_FLOOR + QC_CUT_MARK;
    qbuf_init(&r->prunes, r->a);
    qbuf_init(&r->cuts, r->a);
    r->nt = qtr_new(r->a);
    if (!r->nt) return false;
    if (!qc_view_build(&r->v, t, p, &r->ar)) return false;
    uint32_t n = t->nmsgs;
    r->n = n;
    r->work = qarena_alloc(&r->ar, ((size_t)n + 1) * sizeof(qmsg));
    r->btok = qarena_calloc(&r->ar, (size_t)n + 1, sizeof(uint64_t *));
    r->btok0 = qarena_calloc(&r->ar, (size_t)n + 1, sizeof(uint64_t *));
    r->mtok = qarena_calloc(&r->ar, (size_t)n + 1, sizeof(uint64_t));
    r->mtok0 = qarena_calloc(&r->ar, (size_t)n + 1, sizeof(uint64_t));
    r->owned = qarena_calloc(&r->ar, (size_t)n + 1, sizeof(bool));
    r->drop = qarena_calloc(&r->ar, (size_t)n + 1, sizeof(bool));
    if (!r->work || !r->btok || !r->btok0 || !r->mtok || !r->mtok0 || !r->owned || !r->drop) return false;
    if (n) memcpy(r->work, t->msgs, (size_t)n * sizeof(qmsg));
    memset(&r->work[n], 0, sizeof(qmsg));
    r->drop[n] = true;
    r->fixed = qc_fixed_tokens(&r->cnt, t);
    r->total = r->fixed;
    for (uint32_t i = 0; i < n; i++) {
        const qmsg *m = &r->work[i];
        size_t nb = m->nblocks ? m->nblocks : 1;
        r->btok[i] = qarena_alloc(&r->ar, nb * sizeof(uint64_t));
        r->btok0[i] = qarena_alloc(&r->ar, nb * sizeof(uint64_t));
        if (!r->btok[i] || !r->btok0[i]) return false;
        uint64_t mt = QC_TOK_MESSAGE;
        for (uint32_t k = 0; k < m->nblocks; k++) mt += r->btok[i][k] = r->btok0[i][k] = qc_block_tokens(&r->cnt, &m->blocks[k]);
        r->mtok[i] = r->mtok0[i] = mt;
        r->total += mt;
    }
    r->before = r->total;
    r->summary_at = UINT32_MAX;
    /* the protected tail: the last keepLastSteps steps and everything after
     * the first of them */
    const qc_view *v = &r->v;
    uint32_t kls = p->keep_last_steps, seen = 0, tu = v->nunits;
    if (kls) {
        for (uint32_t u = v->nunits; u > 0; u--) {
            if (!v->ustep[u - 1]) continue;
            tu = u - 1;
            if (++seen == kls) break;
        }
    }
    r->tail_unit = tu;
    r->tail_msg = v->ustart[tu];
    return true;
}

static void run_free(qc_run *r) {
    qc_counter_free(&r->cnt);
    qbuf_free(&r->prunes);
    qbuf_free(&r->cuts);
    qarena_free(&r->ar);
    quire_transcript_free(r->nt);
    r->nt = NULL;
}

/* Copy-on-write: message i's blocks (and, for block k, its parts) move to nt's arena. */
static qblock *own_block(qc_run *r, uint32_t i, uint32_t k, bool parts) {
    qmsg *m = &r->work[i];
    if (!r->owned[i]) {
        qblock *nb = qarena_alloc(&r->nt->ar, (m->nblocks ? m->nblocks : 1) * sizeof(qblock));
        if (!nb) { r->oom = true; return NULL; }
        memcpy(nb, m->blocks, (size_t)m->nblocks * sizeof(qblock));
        m->blocks = nb;
        r->owned[i] = true;
    }
    qblock *b = &m->blocks[k];
    if (parts && b->nparts) {
        qblock *np = qarena_alloc(&r->nt->ar, (size_t)b->nparts * sizeof(qblock));
        if (!np) { r->oom = true; return NULL; }
        memcpy(np, b->parts, (size_t)b->nparts * sizeof(qblock));
        b->parts = np;
    }
    return b;
}

/* Sets the cached estimate of block k of message i to nb. */
static void block_set(qc_run *r, uint32_t i, uint32_t k, uint64_t nb) {
    uint64_t ob = r->btok[i][k];
    r->btok[i][k] = nb;
    r->mtok[i] = r->mtok[i] - ob + nb;
    r->total = r->total - ob + nb;
}

/* Re-estimates block k of message i after a change. */
static void block_changed(qc_run *r, uint32_t i, uint32_t k) {
    uint64_t nb = qc_block_tokens(&r->cnt, &r->work[i].blocks[k]);
    uint64_t ob = r->btok[i][k];
    r->btok[i][k] = nb;
    r->mtok[i] = r->mtok[i] - ob + nb;
    r->total = r->total - ob + nb;
}

static qstr *item_text(qblock *b, int32_t part) {
    if (part >= 0) return &b->parts[part].text;
    return b->type == QB_TOOL_RESULT ? &b->content_text : &b->text;
}

/* Replaces an item's text by a head/tail excerpt of head + tail bytes.
 * Returns true when something was cut (record filled). */
static bool excerpt_item(qc_run *r, uint32_t i, uint32_t k, int32_t part, qstr orig, size_t head, size_t tail,
                         qc_rec *rec) {
    size_t n;
    const char *s = qc_plain_bytes(&r->cnt, orig, &r->ar, &n);
    if (!s) { r->oom = true; return false; }
    qbuf out;
    qbuf_init(&out, r->a);
    size_t omitted = qc_excerpt(&out, s, n, head, tail);
    if (out.oom) { qbuf_free(&out); r->oom = true; return false; }
    if (!omitted) { qbuf_free(&out); return false; }
    char *copy = qarena_alloc(&r->nt->ar, out.len ? out.len : 1);
    if (!copy) { qbuf_free(&out); r->oom = true; return false; }
    memcpy(copy, out.data, out.len);
    qblock *b = own_block(r, i, k, part >= 0);
    if (!b) { qbuf_free(&out); return false; }
    *item_text(b, part) = qstr_plain(copy, out.len);
    /* a result given as a JSON object is cut in its compact text: the excerpt
     * is a string result (the object is written only while uncut) */
    if (part < 0 && b->type == QB_TOOL_RESULT) b->content_json = (qval){0};
    rec->msg = i; rec->block = k; rec->part = part; rec->before = n; rec->after = out.len;
    qbuf_free(&out);
    block_changed(r, i, k);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Stage 1: old tool outputs -> head/tail excerpts, oldest first             */
/* ------------------------------------------------------------------------ */


static void stage_prune(qc_run *r) {
    uint32_t old_end = r->tail_msg;
    size_t cap = r->p->tool_output_excerpt_bytes;
    size_t head = cap / 2, tail = cap - head;
    for (uint32_t i = 0; i < old_end && over(r) && !r->oom; i++) {
        if (r->drop[i] || r->work[i].pinned) continue;
        for (uint32_t k = 0; k < r->work[i].nblocks && over(r) && !r->oom; k++) {
            const qblock *b = &r->work[i].blocks[k];
            if (b->type != QB_TOOL_RESULT) continue;
            qc_rec rec;
            if (b->content_is_string) {
                if (b->content_text.len <= cap) continue; /* escaped length >= plain length */
                if (excerpt_item(r, i, k, -1, b->content_text, head, tail, &rec)) {
                    qbuf_put(&r->prunes, &rec, sizeof rec);
                    r->did_prune = true;
                }
                continue;
            }
            for (uint32_t q = 0; q < b->nparts && !r->oom; q++) {
                b = &r->work[i].blocks[k];
                if (b->parts[q].type != QB_TEXT || b->parts[q].text.len <= cap) continue;
                if (excerpt_item(r, i, k, (int32_t)q, b->parts[q].text, head, tail, &rec)) {
                    qbuf_put(&r->prunes, &rec, sizeof rec);
                    r->did_prune = true;
                }
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Stage 2: the oldest turns -> one summary                                  */
/* ------------------------------------------------------------------------ */

/* System and developer messages inside the span are instructions: they stay
 * (before the summary, in order) instead of being summarised away. */
static bool instruction(const qmsg *m) { return m->role == QR_SYSTEM || m->role == QR_DEVELOPER; }

/* Where the summary of the messages [a, b) goes (docs/compaction.md, "The
 * summary message"): merged as the first block of the user message that
 * follows, else appended to the user message before it, else a user message
 * of its own in the span's place. QC_PLACE_NONE when that would put two user
 * messages next to each other (user messages on both sides, or a pinned one
 * on either side). The
 * system and developer messages of the span stay, just before the summary. */
enum { QC_PLACE_NONE = 0, QC_PLACE_MERGED, QC_PLACE_APPENDED, QC_PLACE_STANDALONE };

/* pred: the last instruction message of the span, else the message before
 * it (UINT32_MAX when the span starts the transcript). */
static int place_after(const qc_run *r, uint32_t pred, uint32_t b, uint32_t *at) {
    const qmsg *m = r->in->msgs;
    bool next_user = b < r->n && m[b].role == QR_USER;
    bool pred_user = pred != UINT32_MAX && m[pred].role == QR_USER;
    if (next_user && pred_user) return QC_PLACE_NONE; /* the two would meet */
    if (next_user && !m[b].pinned) { *at = b; return QC_PLACE_MERGED; }
    if (pred_user && !m[pred].pinned) { *at = pred; return QC_PLACE_APPENDED; }
    if (next_user || pred_user) return QC_PLACE_NONE;
    *at = b;
    return QC_PLACE_STANDALONE;
}

static uint32_t span_pred(const qc_run *r, uint32_t pred, uint32_t a, uint32_t b) {
    for (uint32_t i = a; i < b; i++)
        if (instruction(&r->in->msgs[i])) pred = i;
    return pred;
}

static int placement(const qc_run *r, uint32_t a, uint32_t b, uint32_t *at) {
    return place_after(r, span_pred(r, a ? a - 1 : UINT32_MAX, a, b), b, at);
}

/* Whether unit u may be summarised: not pinned, not in the protected tail
 * (the last keepLastSteps steps), and not the user message of one of the first
 * keepFirstTurns or last keepLastTurns turns. */
static bool eligible(const qc_run *r, uint32_t u) {
    const qc_view *v = &r->v;
    /* a step whose calls are still open (the host runs them) is not
     * summarised: their results would come for calls no longer there */
    if (u >= r->tail_unit || v->upinned[u] || v->uopen[u]) return false;
    if (v->ustep[u]) return true;
    uint32_t t = v->uturn[u];
    return t >= r->p->keep_first_turns && (uint64_t)t + r->p->keep_last_turns < v->nturns;
}

/* Tokens the summary would take away from unit u (instructions stay). */
static uint64_t unit_gain(const qc_run *r, uint32_t u) {
    uint64_t g = 0;
    for (uint32_t i = r->v.ustart[u]; i < r->v.ustart[u + 1]; i++)
        if (!instruction(&r->in->msgs[i]) && !r->drop[i]) g += r->mtok[i];
    return g;
}

/* Fills the span fields for the units [ua, ub). */
static void set_span(qc_run *r, uint32_t ua, uint32_t ub) {
    const qc_view *v = &r->v;
    r->span_a = v->ustart[ua];
    r->span_b = v->ustart[ub];
    r->span_units = ub - ua;
    r->span_steps = r->span_msgs = 0;
    r->span_first = r->span_last = UINT32_MAX;
    r->span_tok = 0;
    for (uint32_t u = ua; u < ub; u++) r->span_steps += v->ustep[u];
    for (uint32_t i = r->span_a; i < r->span_b; i++) {
        if (instruction(&r->in->msgs[i])) continue;
        r->span_msgs++;
        r->span_tok += r->mtok0[i];
        if (r->span_first == UINT32_MAX) r->span_first = i;
        r->span_last = i;
    }
    r->place = placement(r, r->span_a, r->span_b, &r->place_at);
}

/* The span: a run of consecutive eligible units (whole steps and turn heads,
 * so no call is parted from its result). Over budget, the oldest run and the
 * fewest of its units that bring the estimate (with summaryTokens reserved
 * for the summary) under budget; when no run can, the run that takes most
 * away. Under budget or without a budget (a summary the host supplied), the
 * run that takes most away, whole. Ends that leave no valid place for the
 * summary are skipped. */
static void select_span(qc_run *r) {
    const qc_view *v = &r->v;
    r->span_a = r->span_b = 0;
    r->span_units = r->span_steps = r->span_msgs = 0;
    r->span_first = r->span_last = UINT32_MAX;
    r->span_tok = 0;
    r->place = QC_PLACE_NONE;
    bool want = over(r);
    uint64_t need = want ? r->total + r->p->summary_tokens + QC_TOK_MESSAGE - r->p->budget_tokens : 0;
    uint32_t best_a = 0, best_b = 0;
    uint64_t best = 0;
    uint32_t at;
    for (uint32_t ua = 0; ua < v->nunits; ua++) {
        if (!eligible(r, ua)) continue;
        uint64_t got = 0;
        uint32_t ub = ua;
        uint32_t a = v->ustart[ua], pred = a ? a - 1 : UINT32_MAX; /* see place_after */
        for (; ub < v->nunits && eligible(r, ub); ub++) {
            got += unit_gain(r, ub);
            pred = span_pred(r, pred, v->ustart[ub], v->ustart[ub + 1]);
            if (!place_after(r, pred, v->ustart[ub + 1], &at)) continue;
            if (want && got >= need) { set_span(r, ua, ub + 1); return; }
            if (got > best || !best_b) { best = got; best_a = ua; best_b = ub + 1; }
        }
        ua = ub; /* the next run starts after this one */
    }
    if (best_b) set_span(r, best_a, best_b);
}

/* Writes a message's reference for ids: its id, else its input index. */
static void put_ref(qbuf *b, const qmsg *m) {
    if (qstr_present(m->id)) qbuf_put_qstr(b, m->id);
    else qbuf_put_u64(b, m->src_index);
}

/* Inserts block sb into work message i at position k (0 or the end). */
static bool insert_block(qc_run *r, uint32_t i, const qblock *sb, uint64_t stok, bool first) {
    qmsg *m = &r->work[i];
    qblock *nb = qarena_alloc(&r->nt->ar, ((size_t)m->nblocks + 1) * sizeof(qblock));
    uint64_t *bt = qarena_alloc(&r->ar, ((size_t)m->nblocks + 1) * sizeof(uint64_t));
    if (!nb || !bt) { r->oom = true; return false; }
    uint32_t k = first ? 0 : m->nblocks, off = first ? 1 : 0;
    memcpy(nb + off, m->blocks, (size_t)m->nblocks * sizeof(qblock));
    memcpy(bt + off, r->btok[i], (size_t)m->nblocks * sizeof(uint64_t));
    nb[k] = *sb;
    bt[k] = stok;
    m->blocks = nb;
    m->nblocks++;
    m->content_is_string = false;
    r->btok[i] = bt;
    r->owned[i] = true;
    r->mtok[i] += stok;
    r->total += stok;
    r->summary_at = i;
    r->summary_block = k;
    return true;
}

/* The summaries of earlier compactions in the message the new summary joins
 * (a kept first turn collects one per compaction otherwise): their texts,
 * for the digest and the summarisation request to quote. */
static void earlier_summaries(qc_run *r, qbuf *out) {
    if (r->place != QC_PLACE_MERGED && r->place != QC_PLACE_APPENDED) return;
    const qmsg *m = &r->work[r->place_at];
    qbuf scratch;
    qbuf_init(&scratch, r->a);
    for (uint32_t k = 0; k < m->nblocks; k++) {
        const char *in;
        size_t n;
        if (!qc_summary_inner(&m->blocks[k], &scratch, &in, &n)) continue;
        if (out->len) qbuf_putc(out, '\n');
        qbuf_put(out, in, n);
    }
    if (scratch.oom) out->oom = true;
    qbuf_free(&scratch);
}

/* Removes the earlier summaries from message i: the new summary replaces
 * them (its digest quotes them; a supplied one was asked to cover them). */
static bool drop_earlier_summaries(qc_run *r, uint32_t i) {
    qmsg *m = &r->work[i];
    qbuf scratch;
    qbuf_init(&scratch, r->a);
    uint32_t keep = 0;
    bool *is = qarena_alloc(&r->ar, (m->nblocks ? m->nblocks : 1) * sizeof(bool));
    if (!is) { qbuf_free(&scratch); r->oom = true; return false; }
    for (uint32_t k = 0; k < m->nblocks; k++) {
        const char *in;
        size_t n;
        is[k] = qc_summary_inner(&m->blocks[k], &scratch, &in, &n);
        keep += !is[k];
    }
    bool oom = scratch.oom;
    qbuf_free(&scratch);
    if (oom) { r->oom = true; return false; }
    if (keep == m->nblocks) return true;
    qblock *nb = qarena_alloc(&r->nt->ar, (keep ? keep : 1) * sizeof(qblock));
    uint64_t *bt = qarena_alloc(&r->ar, (keep ? keep : 1) * sizeof(uint64_t));
    if (!nb || !bt) { r->oom = true; return false; }
    uint32_t j = 0;
    for (uint32_t k = 0; k < m->nblocks; k++) {
        if (is[k]) {
            r->mtok[i] -= r->btok[i][k];
            r->total -= r->btok[i][k];
            r->replaced++;
            continue;
        }
        nb[j] = m->blocks[k];
        bt[j++] = r->btok[i][k];
    }
    m->blocks = nb;
    m->nblocks = keep;
    m->content_is_string = false;
    r->btok[i] = bt;
    r->owned[i] = true;
    return true;
}

static bool apply_summary(qc_run *r, const char *text, size_t len) {
    qbuf w;
    qbuf_init(&w, r->a);
    qc_wrap_summary(&w, text, len);
    char *copy = w.oom ? NULL : qarena_alloc(&r->nt->ar, w.len ? w.len : 1);
    if (!copy) { qbuf_free(&w); r->oom = true; return false; }
    memcpy(copy, w.data, w.len);
    qblock sb;
    memset(&sb, 0, sizeof sb);
    sb.type = QB_TEXT;
    sb.is_error = -1;
    sb.text = qstr_plain(copy, w.len);
    qbuf_free(&w);
    for (uint32_t i = r->span_a; i < r->span_b; i++) {
        if (instruction(&r->work[i])) continue;
        r->drop[i] = true;
        r->total -= r->mtok[i];
    }
    uint64_t stok = qc_block_tokens(&r->cnt, &sb);
    r->summary_tok = stok;
    if (r->place == QC_PLACE_MERGED || r->place == QC_PLACE_APPENDED) {
        if (!drop_earlier_summaries(r, r->place_at)) return false;
        if (!insert_block(r, r->place_at, &sb, stok, r->place == QC_PLACE_MERGED)) return false;
    } else {
        /* standalone: a user message in the span's place, with a derived id */
        qmsg *m = &r->work[r->n];
        memset(m, 0, sizeof *m);
        m->role = QR_USER;
        m->blocks = qarena_alloc(&r->nt->ar, sizeof(qblock));
        r->btok[r->n] = qarena_alloc(&r->ar, sizeof(uint64_t));
        qbuf id;
        qbuf_init(&id, r->a);
        qbuf_puts(&id, "summary-");
        put_ref(&id, &r->in->msgs[r->span_first]);
        qbuf_putc(&id, '-');
        put_ref(&id, &r->in->msgs[r->span_last]);
        char *idc = id.oom ? NULL : qarena_strndup(&r->nt->ar, id.data, id.len);
        size_t idlen = id.len;
        qbuf_free(&id);
        if (!m->blocks || !r->btok[r->n] || !idc) { r->oom = true; return false; }
        m->blocks[0] = sb;
        m->nblocks = 1;
        m->id = qstr_plain(idc, idlen);
        m->src_index = UINT32_MAX;
        r->btok[r->n][0] = stok;
        r->mtok[r->n] = QC_TOK_MESSAGE + stok;
        r->total += r->mtok[r->n];
        r->owned[r->n] = true;
        r->drop[r->n] = false;
        r->summary_at = r->n;
        r->summary_block = 0;
    }
    r->summarized = true;
    return true;
}

/* ---- span ids: "FIRST-LAST-DIGEST" (message indexes, inclusive, and the
 * span digest of the span's messages as compact JSON, one per line) ----
 *
 * The span digest reads the bytes as 64-bit little-endian words (the last
 * one padded with zero bytes): h starts at SPAN_SEED; each word w gives
 * h = (h ^ w) * SPAN_MUL, h ^= h >> 32; then h ^= the byte count and h goes
 * through the avalanche below. One multiply per 8 bytes rather than per
 * byte: the span is most of a transcript, and its digest is computed on
 * every compaction (docs/compaction.md, "Pinned spans"). */
#define SPAN_SEED UINT64_C(0x9E3779B97F4A7C15)
#define SPAN_MUL UINT64_C(0xFF51AFD7ED558CCD)

typedef struct span_hash {
    uint64_t h, total;
    uint8_t carry[8];
    unsigned nc;
} span_hash;

static inline uint64_t span_word(const uint8_t *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static inline uint64_t span_mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * SPAN_MUL;
    return h ^ (h >> 32);
}

static void span_hash_put(span_hash *sh, const char *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data, *end = p + n;
    sh->total += n;
    if (sh->nc) {
        while (sh->nc < 8 && p < end) sh->carry[sh->nc++] = *p++;
        if (sh->nc < 8) return;
        sh->h = span_mix(sh->h, span_word(sh->carry));
        sh->nc = 0;
    }
    uint64_t h = sh->h;
    for (; end - p >= 8; p += 8) h = span_mix(h, span_word(p));
    sh->h = h;
    while (p < end) sh->carry[sh->nc++] = *p++;
}

static uint64_t span_hash_end(span_hash *sh) {
    uint64_t h = sh->h;
    if (sh->nc) {
        memset(sh->carry + sh->nc, 0, 8 - sh->nc);
        h = span_mix(h, span_word(sh->carry));
    }
    h ^= sh->total;
    h ^= h >> 33;
    h *= UINT64_C(0xC4CEB9FE1A85EC53);
    h ^= h >> 29;
    h *= SPAN_MUL;
    h ^= h >> 32;
    return h;
}

static uint64_t span_digest(qc_run *r, uint32_t a, uint32_t b) {
    if (r->dig_ok && r->dig_a == a && r->dig_b == b) return r->dig;
    qbuf buf;
    qbuf_init(&buf, r->a);
    span_hash sh = {SPAN_SEED, 0, {0}, 0};
    for (uint32_t i = a; i < b; i++) {
        buf.len = 0;
        qw w;
        qw_init(&w, &buf, false);
        qtr_write_message(&r->in->msgs[i], &w);
        qw_dispose(&w);
        qbuf_putc(&buf, '\n');
        if (buf.oom) { r->oom = true; break; }
        span_hash_put(&sh, buf.data, buf.len);
    }
    qbuf_free(&buf);
    uint64_t h = span_hash_end(&sh);
    if (!r->oom) {
        r->dig_a = a;
        r->dig_b = b;
        r->dig = h;
        r->dig_ok = true;
    }
    return h;
}

static void put_span_id(qc_run *r, qbuf *b) {
    char id[80];
    snprintf(id, sizeof id, "%u-%u-%016llx", r->span_a, r->span_b - 1,
             (unsigned long long)span_digest(r, r->span_a, r->span_b));
    qbuf_puts(b, id);
}

static bool parse_u32(const char **p, const char *end, uint32_t *out) {
    uint64_t v = 0;
    const char *s = *p;
    while (s < end && *s >= '0' && *s <= '9' && v <= UINT32_MAX) v = v * 10 + (uint64_t)(*s++ - '0');
    if (s == *p || v > UINT32_MAX || (s - *p > 1 && **p == '0')) return false;
    *p = s;
    *out = (uint32_t)v;
    return true;
}

/* Parses "FIRST-LAST-DIGEST". */
static bool parse_span_id(const char *id, uint32_t *a, uint32_t *last, uint64_t *digest) {
    const char *p = id, *end = id + strlen(id);
    if (!parse_u32(&p, end, a) || p == end || *p++ != '-' || !parse_u32(&p, end, last) || p == end || *p++ != '-' ||
        *last < *a)
        return false;
    uint64_t v = 0;
    int hex = 0;
    for (; p < end; p++, hex++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0 || hex == 16) return false;
        v = v << 4 | (uint64_t)d;
    }
    *digest = v;
    return hex == 16;
}

/* Sets the span from a span id; QUIRE_E_INVALID when the id is malformed or
 * does not fall on whole units, QUIRE_E_MISMATCH when the span changed. */
static quire_status span_from_id(qc_run *r, const char *id) {
    uint32_t a, last;
    uint64_t want;
    if (!parse_span_id(id, &a, &last, &want))
        return q_err(r->err, QUIRE_E_INVALID, "malformed span id \"%.40s\" (expected FIRST-LAST-DIGEST as in the plan)",
                     id);
    if (last >= r->n)
        return q_err(r->err, QUIRE_E_MISMATCH,
                     "span %u-%u is not in the transcript: it has %u messages (was it compacted since the plan?)", a,
                     last, r->n);
    uint64_t got = span_digest(r, a, last + 1);
    if (r->oom) return q_oom(r->err);
    if (got != want)
        return q_err(r->err, QUIRE_E_MISMATCH,
                     "span %u-%u changed since the plan: its digest is now %016llx, the plan named %016llx", a, last,
                     (unsigned long long)got, (unsigned long long)want);
    const qc_view *v = &r->v;
    uint32_t ua = UINT32_MAX, ub = UINT32_MAX;
    for (uint32_t u = 0; u <= v->nunits; u++) {
        if (v->ustart[u] == a && u < v->nunits) ua = u;
        if (v->ustart[u] == last + 1) ub = u;
    }
    if (ua == UINT32_MAX || ub == UINT32_MAX || ub <= ua)
        return q_err(r->err, QUIRE_E_INVALID,
                     "span %u-%u does not fall on whole steps and turns of this transcript (a tool call and its "
                     "result would be parted)", a, last);
    for (uint32_t u = ua; u < ub; u++)
        if (v->upinned[u]) return q_err(r->err, QUIRE_E_INVALID, "span %u-%u holds a pinned message", a, last);
    for (uint32_t u = ua; u < ub; u++)
        if (v->uopen[u])
            return q_err(r->err, QUIRE_E_INVALID,
                         "span %u-%u holds a tool call that is not answered yet: its result would come for a call no "
                         "longer there (compact once the results are in)", a, last);
    set_span(r, ua, ub);
    if (!r->span_msgs) return q_err(r->err, QUIRE_E_INVALID, "span %u-%u holds only system and developer messages", a, last);
    if (r->place == QC_PLACE_NONE)
        return q_err(r->err, QUIRE_E_INVALID,
                     "span %u-%u has pinned user messages on both sides: the summary has no place that keeps roles "
                     "alternating", a, last);
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Stage 3: oversized items -> head/tail, down to a common water level        */
/* ------------------------------------------------------------------------ */

typedef struct cut_item {
    uint32_t msg, block;
    int32_t part;
    uint64_t tok;   /* tokens of the item's text as stage 3 finds it */
    uint64_t btok;  /* tokens of its block as stage 3 finds it */
    qstr orig;      /* its text as stage 3 finds it (restored between rounds) */
    qstr src;       /* the input's text (before a stage 1 excerpt), cut from */
    qval json;      /* a result's JSON object as stage 3 finds it (restored with orig) */
    uint64_t src_tok;
} cut_item;

/* The input's version of an item (before stage 1), or cur when it has none. */
static qstr item_source(const qc_run *r, const cut_item *it, qstr cur) {
    if (it->msg >= r->n) return cur;
    uint32_t k = it->block;
    if (it->msg == r->summary_at) {
        if (k == r->summary_block) return cur;
        if (k > r->summary_block) k--;
    }
    const qmsg *im = &r->in->msgs[it->msg];
    if (k >= im->nblocks) return cur;
    qblock *ib = &im->blocks[k];
    if (it->part >= 0) return (uint32_t)it->part < ib->nparts ? ib->parts[it->part].text : cur;
    return *item_text(ib, -1);
}

/* Tokens of item_source()'s text: the input block's count when that text is
 * all the block counts, else a fresh estimate. */
static uint64_t source_tokens(qc_run *r, const cut_item *it) {
    if (it->part < 0 && it->msg < r->n) {
        uint32_t k = it->block;
        if (it->msg == r->summary_at && k > r->summary_block) k--;
        const qmsg *im = &r->in->msgs[it->msg];
        if (k < im->nblocks) {
            const qblock *ib = &im->blocks[k];
            if (ib->type == QB_TEXT || ib->type == QB_THINKING || (ib->type == QB_TOOL_RESULT && ib->content_is_string))
                return r->btok0[it->msg][k] - QC_TOK_BLOCK;
        }
    }
    return qc_count_qstr(&r->cnt, it->src);
}

static uint64_t cut_gain(const cut_item *it, size_t n, uint64_t level) {
    uint64_t g = 0;
    for (size_t i = 0; i < n; i++)
        if (it[i].tok > level + QC_CUT_MARK) g += it[i].tok - level - QC_CUT_MARK;
    return g;
}

static void stage_cut(qc_run *r) {
    qbuf items;
    qbuf_init(&items, r->a);
    for (uint32_t i = 0; i <= r->n; i++) {
        if (r->drop[i] || r->work[i].pinned) continue;
        const qmsg *m = &r->work[i];
        for (uint32_t k = 0; k < m->nblocks; k++) {
            const qblock *b = &m->blocks[k];
            cut_item it;
            memset(&it, 0, sizeof it);
            it.msg = i; it.block = k; it.part = -1;
            it.btok = r->btok[i][k];
            if (b->type == QB_TEXT) {
                it.orig = b->text;
                it.tok = r->btok[i][k] - QC_TOK_BLOCK;
            } else if (b->type == QB_TOOL_RESULT && b->content_is_string) {
                it.orig = b->content_text;
                it.json = b->content_json;
                it.tok = r->btok[i][k] - QC_TOK_BLOCK;
            } else if (b->type == QB_TOOL_RESULT) {
                for (uint32_t q = 0; q < b->nparts; q++) {
                    if (b->parts[q].type != QB_TEXT) continue;
                    cut_item pi = it;
                    pi.part = (int32_t)q;
                    pi.orig = b->parts[q].text;
                    pi.tok = qc_count_qstr(&r->cnt, pi.orig);
                    if (pi.tok > QC_CUT_FLOOR + QC_CUT_MARK) qbuf_put(&items, &pi, sizeof pi);
                }
                continue;
            } else {
                continue;
            }
            if (it.tok > QC_CUT_FLOOR + QC_CUT_MARK) qbuf_put(&items, &it, sizeof it);
        }
    }
    if (items.oom) { r->oom = true; qbuf_free(&items); return; }
    cut_item *it = (cut_item *)(void *)items.data;
    size_t nit = items.len / sizeof(cut_item);
    /* items outside the protected tail first: the newest steps are cut only
     * when cutting everything older cannot meet the budget */
    size_t nfront = 0;
    for (size_t j = 0; j < nit; j++)
        if (it[j].msg >= r->n || it[j].msg < r->tail_msg) {
            cut_item x = it[j];
            memmove(&it[nfront + 1], &it[nfront], (j - nfront) * sizeof(cut_item));
            it[nfront++] = x;
        }
    for (size_t j = 0; j < nit; j++) {
        it[j].src = item_source(r, &it[j], it[j].orig);
        bool same = it[j].src.p == it[j].orig.p && it[j].src.len == it[j].orig.len;
        it[j].src_tok = same ? it[j].tok : source_tokens(r, &it[j]);
    }
    uint64_t base = r->total, extra = 0;
    uint64_t maxtok = 0;
    for (size_t j = 0; j < nit; j++) if (it[j].tok > maxtok) maxtok = it[j].tok;
    size_t rec_mark = r->cuts.len;
    for (int round = 0; round < 24 && over(r) && !r->oom && nit; round++) {
        uint64_t need = base - r->p->budget_tokens + extra;
        size_t act = cut_gain(it, nfront, QC_CUT_FLOOR) >= need ? nfront : nit;
        if (cut_gain(it, act, QC_CUT_FLOOR) < need) {
            /* impossible: reported by the caller, with what cutting every item
             * to the floor would leave */
            uint64_t g = cut_gain(it, nit, QC_CUT_FLOOR);
            r->cut_floor = base > g ? base - g : 0;
            break;
        }
        /* the highest level whose gain still covers the need */
        uint64_t lo = QC_CUT_FLOOR, hi = maxtok;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            if (cut_gain(it, act, mid) >= need) lo = mid;
            else hi = mid - 1;
        }
        /* restore, then cut every item above the level (once all its items
         * are restored, a block is as stage 3 found it: its count too) */
        r->cuts.len = rec_mark;
        for (size_t j = 0; j < nit; j++) {
            qblock *b = &r->work[it[j].msg].blocks[it[j].block];
            qstr *cur = item_text(b, it[j].part);
            if (cur->p != it[j].orig.p || cur->len != it[j].orig.len) {
                *cur = it[j].orig;
                if (it[j].part < 0 && b->type == QB_TOOL_RESULT) b->content_json = it[j].json;
                block_set(r, it[j].msg, it[j].block, it[j].btok);
            }
        }
        for (size_t j = 0; j < act && !r->oom; j++) {
            if (it[j].tok <= lo + QC_CUT_MARK) continue;
            size_t n;
            if (!qc_plain_bytes(&r->cnt, it[j].src, &r->ar, &n)) { r->oom = true; break; }
            uint64_t keep = (uint64_t)n * lo / (it[j].src_tok ? it[j].src_tok : 1);
            qc_rec rec;
            if (excerpt_item(r, it[j].msg, it[j].block, it[j].part, it[j].src, (size_t)(keep / 2),
                             (size_t)(keep - keep / 2), &rec)) {
                qbuf_put(&r->cuts, &rec, sizeof rec);
                r->did_cut = true;
            }
        }
        if (over(r)) extra += r->total - r->p->budget_tokens + 1;
    }
    qbuf_free(&items);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */
/* ------------------------------------------------------------------------ */

static bool build_output(qc_run *r) {
    quire_transcript *nt = r->nt;
    const quire_transcript *t = r->in;
    nt->has_system = t->has_system;
    nt->system_is_string = t->system_is_string;
    nt->system = t->system;
    nt->nsystem = t->nsystem;
    nt->has_tools = t->has_tools;
    nt->tools = t->tools;
    nt->ntools = t->ntools;
    /* a standalone summary (work[n]) stands where its span was */
    uint32_t at = r->summarized && r->summary_at == r->n ? r->place_at : UINT32_MAX;
    for (uint32_t i = 0; i <= r->n; i++) {
        if (i == at) {
            qmsg *m = qtr_push_msg(nt);
            if (!m) return false;
            *m = r->work[r->n];
        }
        if (r->drop[i] || (i == r->n && at != UINT32_MAX)) continue;
        qmsg *m = qtr_push_msg(nt);
        if (!m) return false;
        *m = r->work[i];
    }
    return true;
}

/* The estimate of the output: its messages' cached counts (kept exact as
 * blocks changed), without estimating any text again. */
static uint64_t output_tokens(const qc_run *r) {
    uint64_t t = r->fixed;
    uint32_t at = r->summarized && r->summary_at == r->n ? r->place_at : UINT32_MAX;
    for (uint32_t i = 0; i <= r->n; i++) {
        if (i == at) t += r->mtok[r->n];
        if (r->drop[i] || (i == r->n && at != UINT32_MAX)) continue;
        t += r->mtok[i];
    }
    return t;
}

static void put_budget(qw *w, const qc_policy *p) {
    qw_key(w, "budgetTokens");
    if (p->budget_tokens) qw_int(w, (int64_t)p->budget_tokens);
    else qw_null(w);
}

static void write_recs(qc_run *r, qw *w, const qbuf *recs, const char *key) {
    const qc_rec *rc = (const qc_rec *)(const void *)recs->data;
    size_t n = recs->len / sizeof(qc_rec), count = 0;
    uint64_t removed = 0;
    for (size_t j = 0; j < n; j++)
        if (!r->drop[rc[j].msg]) { count++; removed += rc[j].before - rc[j].after; }
    qw_key(w, key);
    qw_obj_begin(w);
    qw_key(w, "count"); qw_int(w, (int64_t)count);
    qw_key(w, "bytesRemoved"); qw_int(w, (int64_t)removed);
    qw_key(w, "items");
    qw_arr_begin(w);
    for (size_t j = 0; j < n; j++) {
        if (r->drop[rc[j].msg]) continue;
        const qmsg *m = &r->work[rc[j].msg];
        const qblock *b = &m->blocks[rc[j].block];
        qw_obj_begin(w);
        if (m->src_index != UINT32_MAX) { qw_key(w, "messageIndex"); qw_int(w, m->src_index); }
        if (qstr_present(m->id)) { qw_key(w, "messageId"); qw_qstr(w, m->id); }
        if (rc[j].msg == r->summary_at && rc[j].block == r->summary_block && r->summarized) { qw_key(w, "summary"); qw_bool(w, true); }
        if (b->type == QB_TOOL_RESULT) { qw_key(w, "toolCallId"); qw_qstr(w, b->tool_call_id); }
        if (rc[j].part >= 0) { qw_key(w, "part"); qw_int(w, rc[j].part); }
        qw_key(w, "bytesBefore"); qw_int(w, (int64_t)rc[j].before);
        qw_key(w, "bytesAfter"); qw_int(w, (int64_t)rc[j].after);
        qw_obj_end(w);
    }
    qw_arr_end(w);
    qw_obj_end(w);
}

static void write_span(qc_run *r, qw *w) {
    const qc_view *v = &r->v;
    qbuf id;
    qbuf_init(&id, r->a);
    put_span_id(r, &id);
    qw_key(w, "id");
    qw_str(w, id.data ? id.data : "", id.len);
    if (id.oom) r->oom = true;
    qbuf_free(&id);
    qw_key(w, "turns");
    qw_arr_begin(w);
    uint32_t last = UINT32_MAX;
    for (uint32_t i = r->span_a; i < r->span_b; i++) {
        uint32_t t = v->turn_of[i];
        if (t != last && t != UINT32_MAX) qw_int(w, (int64_t)t + 1);
        last = t;
    }
    qw_arr_end(w);
    qw_key(w, "steps"); qw_int(w, r->span_steps);
    qw_key(w, "messageCount"); qw_int(w, r->span_msgs);
    qw_key(w, "firstMessageIndex"); qw_int(w, r->in->msgs[r->span_first].src_index);
    qw_key(w, "lastMessageIndex"); qw_int(w, r->in->msgs[r->span_last].src_index);
    qw_key(w, "messageIds");
    qw_arr_begin(w);
    for (uint32_t i = r->span_a; i < r->span_b; i++) {
        const qmsg *m = &r->in->msgs[i];
        if (!instruction(m) && qstr_present(m->id)) qw_qstr(w, m->id);
    }
    qw_arr_end(w);
    qw_key(w, "spanTokens"); qw_int(w, (int64_t)r->span_tok);
}

static void write_report_body(qc_run *r, qw *w, const quire_state *state, bool changed, uint64_t after) {
    qw_key(w, "tokensBefore"); qw_int(w, (int64_t)r->before);
    qw_key(w, "tokensAfter"); qw_int(w, (int64_t)after);
    put_budget(w, r->p);
    qw_key(w, "changed"); qw_bool(w, changed);
    qw_key(w, "stages");
    qw_arr_begin(w);
    /* stages that left a mark on the output (outputs pruned in turns later
     * summarised do not count) */
    bool pruned = false;
    const qc_rec *pr = (const qc_rec *)(const void *)r->prunes.data;
    for (size_t j = 0; j < r->prunes.len / sizeof(qc_rec) && !pruned; j++) pruned = !r->drop[pr[j].msg];
    if (pruned) qw_strz(w, "pruneToolOutputs");
    if (r->summarized) qw_strz(w, "summarize");
    if (r->did_cut) qw_strz(w, "cutOversized");
    qw_arr_end(w);
    write_recs(r, w, &r->prunes, "toolOutputsPruned");
    qw_key(w, "summary");
    if (r->summarized) {
        qw_obj_begin(w);
        qw_key(w, "source"); qw_strz(w, r->supplied ? "supplied" : "digest");
        write_span(r, w);
        qw_key(w, "summaryTokens"); qw_int(w, (int64_t)r->summary_tok);
        if (r->replaced) { qw_key(w, "replacedEarlierSummaries"); qw_int(w, r->replaced); }
        bool alone = r->summary_at == r->n;
        qw_key(w, "placement");
        qw_strz(w, alone ? "standalone" : r->place == QC_PLACE_MERGED ? "merged" : "appended");
        const qmsg *m = &r->work[r->summary_at];
        if (alone) { qw_key(w, "summaryMessageId"); qw_qstr(w, m->id); }
        else {
            qw_key(w, "mergedIntoMessageIndex"); qw_int(w, m->src_index);
            if (qstr_present(m->id)) { qw_key(w, "mergedIntoMessageId"); qw_qstr(w, m->id); }
        }
        qw_obj_end(w);
    } else {
        qw_null(w);
    }
    write_recs(r, w, &r->cuts, "messagesCut");
    qw_key(w, "reminders");
    qw_obj_begin(w);
    for (int pass = 0; pass < 2; pass++) {
        qw_key(w, pass ? "removed" : "kept");
        qw_arr_begin(w);
        for (uint32_t i = 0; state && i < state->nrems; i++) {
            bool keep = !changed || state->rems[i].preserve_on_compact;
            if (keep == (pass == 0)) qw_strz(w, state->rems[i].id ? state->rems[i].id : "");
        }
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

static quire_status budget_error(qc_run *r, uint64_t after) {
    uint64_t pinned = 0;
    for (uint32_t i = 0; i < r->n; i++)
        if (!r->drop[i] && r->work[i].pinned) pinned += r->mtok[i];
    uint64_t b = r->p->budget_tokens;
    if (r->fixed + pinned > b)
        return q_err(r->err, QUIRE_E_BUDGET,
                     "budget of %llu tokens cannot be met: pinned content alone needs %llu tokens "
                     "(system prompt and tools %llu, pinned messages %llu; the whole transcript: %llu)",
                     (unsigned long long)b, (unsigned long long)(r->fixed + pinned), (unsigned long long)r->fixed,
                     (unsigned long long)pinned, (unsigned long long)r->before);
    uint32_t st = r->p->stages;
    /* stage 3 stops when the budget is out of its reach, without cutting:
     * the error gives what it could have reached */
    if (r->cut_floor && r->cut_floor < after) after = r->cut_floor;
    return q_err(r->err, QUIRE_E_BUDGET,
                 "budget of %llu tokens cannot be met: after compaction the transcript still needs %s%llu tokens "
                 "(of %llu; system prompt and tools %llu, pinned messages %llu, other kept messages %llu)%s",
                 (unsigned long long)b, r->cut_floor ? "about " : "", (unsigned long long)after, (unsigned long long)r->before,
                 (unsigned long long)r->fixed, (unsigned long long)pinned,
                 (unsigned long long)(after > r->fixed + pinned ? after - r->fixed - pinned : 0),
                 (st & QUIRE_COMPACT_ALL_STAGES) != QUIRE_COMPACT_ALL_STAGES ? "; some stages are disabled" : "");
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

void qc_result_free(qc_result *r) {
    if (!r) return;
    quire_transcript_free(r->t);
    quire_state_free(r->state);
    qbuf_free(&r->events);
    qbuf_free(&r->report);
    memset(r, 0, sizeof *r);
}

static quire_status own_copy(quire_transcript **t, quire_error *err) {
    quire_bytes b;
    quire_status st = quire_transcript_write(*t, 0, &b, err);
    if (st) return st;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.allocator = (*t)->a;
    o.limits.max_depth = 0xFFFFFFu;
    o.limits.max_messages = 0xFFFFFFFFu;
    quire_transcript *c = NULL;
    st = quire_transcript_parse(b.data, b.len, &o, &c, err);
    quire_bytes_free(&b);
    if (st) return st;
    quire_transcript_free(*t);
    *t = c;
    return QUIRE_OK;
}

quire_status qc_compact(const quire_transcript *t, const quire_state *state, const qc_policy *p,
                        const char *summary, size_t summary_len, qc_result *out, quire_error *err) {
    return qc_compact_span(t, state, p, summary, summary_len, NULL, out, err);
}

quire_status qc_compact_span(const quire_transcript *t, const quire_state *state, const qc_policy *p,
                             const char *summary, size_t summary_len, const char *span_id, qc_result *out,
                             quire_error *err) {
    memset(out, 0, sizeof *out);
    if (span_id && !summary) return q_err(err, QUIRE_E_INVALID, "a span id applies a summary: give the summary too");
    if (!t || !p) return q_err(err, QUIRE_E_INVALID, "compact needs a transcript and a policy");
    if (p->budget_scope == QUIRE_BUDGET_REQUEST && p->budget_tokens)
        return q_err(err, QUIRE_E_INVALID, "budgetScope \"request\" counts the request to a session's target: "
                                           "use it in a session or session log, or give budgetScope \"transcript\"");
    {
        /* the transcript checks render runs (an orphan tool result is an
         * error in both); calls may still be unanswered */
        qarena ar;
        qarena_init(&ar, t->a);
        quire_status cs = qtr_check(t, false, true, &ar, err);
        qarena_free(&ar);
        if (cs) return cs;
    }
    if (summary) {
        size_t bad;
        if (!qt_utf8_valid(summary, summary_len, &bad))
            return q_err(err, QUIRE_E_INVALID, "the summary is not valid UTF-8 (byte %zu)", bad);
        if (qt_is_blank(summary, summary_len)) return q_err(err, QUIRE_E_INVALID, "the summary is empty");
    }
    qc_run r;
    quire_status st = QUIRE_OK;
    if (!run_init(&r, t, p, err) || r.cnt.oom) { run_free(&r); return q_oom(err); }
    uint32_t stages = p->stages;
    bool changed = false;
    if (summary) {
        if (span_id) {
            st = span_from_id(&r, span_id);
            if (st) { run_free(&r); return st; }
        } else {
            select_span(&r);
        }
        if (!r.span_units) {
            st = q_err(err, QUIRE_E_INVALID,
                       "a summary was supplied but the policy selects no turns or steps to summarise "
                       "(%u turns, %u steps; keepFirstTurns %u, keepLastTurns %u, keepLastSteps %u; pinned steps "
                       "and a step whose calls are not answered yet are kept)",
                       r.v.nturns, r.v.nsteps, p->keep_first_turns, p->keep_last_turns, p->keep_last_steps);
            run_free(&r);
            return st;
        }
        r.supplied = true;
        apply_summary(&r, summary, summary_len);
        if (over(&r) && (stages & QUIRE_COMPACT_PRUNE_TOOL_OUTPUTS)) stage_prune(&r);
        if (over(&r) && (stages & QUIRE_COMPACT_CUT_OVERSIZED)) stage_cut(&r);
        changed = true;
    } else if (over(&r)) {
        if (stages & QUIRE_COMPACT_PRUNE_TOOL_OUTPUTS) stage_prune(&r);
        if (over(&r) && (stages & QUIRE_COMPACT_SUMMARIZE) && !r.oom) {
            select_span(&r);
            if (r.span_units) {
                qbuf d, e;
                qbuf_init(&d, r.a);
                qbuf_init(&e, r.a);
                earlier_summaries(&r, &e);
                qc_digest(&d, &r.v, r.span_a, r.span_b, e.data, e.oom ? 0 : e.len, &r.cnt, &r.ar);
                if (d.oom || e.oom) r.oom = true;
                else apply_summary(&r, d.data, d.len);
                qbuf_free(&d);
                qbuf_free(&e);
            }
        }
        if (over(&r) && (stages & QUIRE_COMPACT_CUT_OVERSIZED) && !r.oom) stage_cut(&r);
        changed = r.did_prune || r.summarized || r.did_cut;
    }
    if (r.oom || r.cnt.oom || r.prunes.oom || r.cuts.oom || !build_output(&r)) { run_free(&r); return q_oom(err); }
    uint64_t after = changed ? output_tokens(&r) : r.before;
    if (p->budget_tokens && after > p->budget_tokens) {
        st = budget_error(&r, after);
        run_free(&r);
        return st;
    }
    /* reminder state and events */
    out->state = state ? qs_clone(state) : qs_new(r.a, NULL);
    qbuf_init(&out->events, r.a);
    qbuf_init(&out->report, r.a);
    qbuf rem_events;
    qbuf_init(&rem_events, r.a);
    if (!out->state) { qbuf_free(&rem_events); run_free(&r); qc_result_free(out); return q_oom(err); }
    if (changed) {
        uint32_t kept = 0, removed = 0;
        qs_after_compact(out->state, &rem_events, &kept, &removed);
    }
    qw w;
    qw_init(&w, &out->report, false);
    qw_obj_begin(&w);
    write_report_body(&r, &w, state, changed, after);
    qw_obj_end(&w);
    qw_dispose(&w);
    if (changed) {
        qw_init(&w, &out->events, false);
        qw_obj_begin(&w);
        qw_key(&w, "sessionUpdate"); qw_strz(&w, "transcript_compacted");
        write_report_body(&r, &w, state, changed, after);
        qw_obj_end(&w);
        qw_dispose(&w);
        qbuf_putc(&out->events, '\n');
        qbuf_put(&out->events, rem_events.data, rem_events.len);
    }
    bool oom = rem_events.oom || out->events.oom || out->report.oom || r.oom;
    qbuf_free(&rem_events);
    out->t = r.nt;
    r.nt = NULL;
    out->changed = changed;
    out->tokens_before = r.before;
    out->tokens_after = after;
    run_free(&r);
    if (oom) { qc_result_free(out); return q_oom(err); }
    if (p->flags & QUIRE_COMPACT_OWN) {
        st = own_copy(&out->t, err);
        if (st) { qc_result_free(out); return st; }
    }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Plan                                                                      */
/* ------------------------------------------------------------------------ */

const char qc_summary_instruction[] =
    "You are compacting the history of a conversation between a user and an AI agent that uses tools. "
    "Write a summary that lets the agent continue the work without the original messages. Keep: the "
    "user's requests and constraints (quote short ones exactly); decisions made and why; names of files, "
    "functions, commands, identifiers and values that matter; tool calls that failed and their errors; "
    "what is done and what remains open. Leave out pleasantries, thinking and tool output that no longer "
    "matters. Write plain text in the conversation's language, no preamble, no closing remarks.";

quire_status qc_plan(const quire_transcript *t, const qc_policy *p, qw *w, quire_error *err) {
    if (p->budget_scope == QUIRE_BUDGET_REQUEST && p->budget_tokens)
        return q_err(err, QUIRE_E_INVALID, "budgetScope \"request\" counts the request to a session's target: "
                                           "plan in a session, or give budgetScope \"transcript\"");
    qc_run r;
    if (!run_init(&r, t, p, err) || r.cnt.oom) { run_free(&r); return q_oom(err); }
    select_span(&r);
    qw_obj_begin(w);
    qw_key(w, "tokensBefore"); qw_int(w, (int64_t)r.before);
    put_budget(w, p);
    qw_key(w, "overBudget"); qw_bool(w, over(&r));
    qw_key(w, "summaryTokens"); qw_int(w, p->summary_tokens);
    /* what compaction without a summary would do */
    qw_key(w, "withoutSummary");
    qc_result res;
    quire_error e2;
    memset(&e2, 0, sizeof e2);
    quire_status st = qc_compact(t, NULL, p, NULL, 0, &res, &e2);
    if (st == QUIRE_OK) {
        qj_doc rd;
        st = qj_parse(&rd, res.report.data, res.report.len, NULL, r.a, NULL);
        if (st == QUIRE_OK) qw_node(w, &rd, 0);
        qj_doc_free(&rd);
        qc_result_free(&res);
        if (st) { run_free(&r); return q_oom(err); }
    } else if (st == QUIRE_E_NOMEM) {
        run_free(&r);
        return q_oom(err);
    } else {
        qw_obj_begin(w);
        qw_key(w, "error");
        qw_obj_begin(w);
        qw_key(w, "code"); qw_strz(w, quire_status_name(st));
        qw_key(w, "message"); qw_strz(w, e2.message);
        qw_obj_end(w);
        qw_obj_end(w);
    }
    qw_key(w, "span");
    if (!r.span_units) {
        qw_null(w);
        qw_key(w, "summarizationTranscript");
        qw_null(w);
    } else {
        qw_obj_begin(w);
        write_span(&r, w);
        qw_obj_end(w);
        qw_key(w, "summarizationTranscript");
        qbuf text, body;
        qbuf_init(&text, r.a);
        qbuf_init(&body, r.a);
        qbuf_puts(&text, "Summarise the conversation below, following your instructions. Keep the summary under ");
        qbuf_put_u64(&text, p->summary_tokens);
        qbuf_puts(&text, " tokens.\n\n<conversation>\n");
        /* fit summaryRequestTokens: halve the excerpt sizes until the span
         * fits, then, as a last resort, cut the whole span head/tail */
        size_t tool_cap = p->tool_output_excerpt_bytes ? p->tool_output_excerpt_bytes : 1024;
        size_t text_cap = tool_cap * 8;
        uint64_t limit = p->summary_request_tokens, tok = 0;
        qbuf earlier;
        qbuf_init(&earlier, r.a);
        earlier_summaries(&r, &earlier);
        if (earlier.oom) body.oom = true;
        for (;;) {
            body.len = 0;
            if (earlier.len) {
                qbuf_puts(&body, "[earlier summary]\n");
                qc_put_neutral(&body, earlier.data, earlier.len, "conversation");
                qbuf_puts(&body, "\n\n");
            }
            qc_span_text(&body, &r.v, r.span_a, r.span_b, tool_cap, text_cap, &r.ar);
            if (body.oom) break;
            tok = limit ? qc_count_text(&r.cnt, body.data, body.len) : 0;
            if (!limit || tok <= limit || (tool_cap <= 64 && text_cap <= 256)) break;
            tool_cap = tool_cap / 2 > 64 ? tool_cap / 2 : 64;
            text_cap = text_cap / 2 > 256 ? text_cap / 2 : 256;
        }
        if (!body.oom && limit && tok > limit) {
            uint64_t keep = (uint64_t)body.len * limit / tok * 9 / 10;
            qc_excerpt(&text, body.data, body.len, (size_t)(keep / 2), (size_t)(keep - keep / 2));
        } else if (!body.oom) {
            qbuf_put(&text, body.data, body.len);
        }
        qbuf_puts(&text, "</conversation>");
        bool boom = body.oom;
        qbuf_free(&body);
        qbuf_free(&earlier);
        if (text.oom || boom) { qbuf_free(&text); run_free(&r); return q_oom(err); }
        qw_obj_begin(w);
        qw_key(w, "system"); qw_strz(w, qc_summary_instruction);
        qw_key(w, "messages");
        qw_arr_begin(w);
        qw_obj_begin(w);
        qw_key(w, "role"); qw_strz(w, "user");
        qw_key(w, "content"); qw_str(w, text.data, text.len);
        qw_obj_end(w);
        qw_arr_end(w);
        qw_obj_end(w);
        qbuf_free(&text);
    }
    qw_obj_end(w);
    bool oom = r.oom || r.cnt.oom;
    run_free(&r);
    return oom ? q_oom(err) : QUIRE_OK;
}
