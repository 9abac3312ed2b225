/* The render memo (render/memo.h): stored unit encodings, the pieces of the
 * last body, storage that is compacted when stale bytes pile up. */
#include "render/memo.h"

#include <stdio.h>

typedef struct mentry {
    bool used;
    uint32_t i, j, variant, nwire;
    bool sep, marked, closed;
    uint64_t marks;
    const qblock *bi, *bj;   /* identity of the first and last message */
    uint32_t ni, nj;
    const char *p;
    size_t n;
    uint8_t betas[4], nbetas; /* anthropic-beta features its encoding needed, in order (qr_beta_name + 1) */
    const char *ev;          /* the events its encoding reported (JSONL), written again when reused */
    size_t ev_n;
} mentry;

typedef struct mblock {
    char *p;
    size_t len, cap;
} mblock;

/* A unit of the reused prefix (memo.h): the run it encoded, the last
 * message's identity, and the totals up to and including it. */
typedef struct mlink {
    uint32_t i, j, variant;
    bool sep;                /* an element preceded it */
    const qblock *last;
    uint32_t nlast;
    uint32_t nwire;          /* wire messages of units [0, this] */
    size_t bytes;            /* bytes of units [0, this] */
    uint8_t betas[4], nbetas; /* features units [0, this] needed, in order of first need */
    size_t ev_end;           /* events of units [0, this]: the memo's chev[0, ev_end) */
} mlink;

typedef struct mhole {
    size_t off;
    const char *p;
    size_t n;
    uint8_t kind;
    bool marked, sep;
    uint8_t role;
    bool closed;
    bool written;
} mhole;

struct qr_memo {
    const quire_allocator *a;
    /* context */
    bool have_ctx;
    qcaps caps;
    char model[256];
    const quire_transcript *t;
    int placement, pretty, system_slot, breakpoints;
    /* units, by first message; the head */
    mentry *e;
    uint32_t ne;
    const char *head;
    size_t head_n;
    /* storage */
    mblock *blk;
    uint32_t nblk, capblk;
    size_t live, total;
    uint64_t epoch;
    /* the last body */
    qbuf fresh;
    mhole *holes;
    size_t nholes, capholes;
    qr_piece *pieces;
    size_t npieces, cappieces, body_len;
    quire_segment *segs;
    size_t nsegs, capsegs;
    bool oom;
    uint32_t reused, encoded;
    qr_checked chk;
    qr_inmarks inm;
    qr_rules rules;
    qr_details details;
    size_t slack;            /* stale bytes tolerated beyond the live ones */
    /* the reused prefix: the units from the first that this render took or
     * wrote one after another (holes 1..n right after the head, nothing
     * fresh between them); sealed by a successful render for the next one */
    mlink *chain;
    uint32_t nchain, capchain;
    qbuf chev;               /* the events of the chain's units, one after another */
    bool chain_open;         /* this render is still extending the chain */
    bool chain_ok;           /* the chain is sealed and usable by the next render */
    uint64_t chain_epoch;
    uint32_t skipped;        /* units the current render took from the prefix */
    uint32_t visited;        /* units the current render looked at one by one */
    uint64_t gen;            /* successful renders */
    uint32_t plan;           /* units qr_memo_prefix found usable */
    qr_mark pmarks[16];      /* the breakpoints in messages of the render that sealed the chain */
    uint32_t npmarks;
    const char *prev_head;   /* the head piece of the last successful render */
    size_t same;             /* leading pieces equal to the last successful render's */
    /* the first piece the last successful render wrote (pieces from there on
     * may have .written set), and the same for the render before it */
    size_t wfirst, wprev;
    /* the validation window (qr_memo_window), resumable */
    qbuf win;
    struct wstate { size_t a, len; bool any; } *ws;
    size_t capws, nws;
    uint64_t win_last; /* win_last: the render the scan states are of */
    /* piece -> its segment (qr_memo_segments), resumable */
    uint32_t *segof;
    size_t capsegof;
    uint64_t seg_gen;
};

qr_memo *qr_memo_new(const quire_allocator *a) {
    qr_memo *m = q_malloc(a, sizeof *m);
    if (!m) return NULL;
    memset(m, 0, sizeof *m);
    m->a = a;
    m->slack = (size_t)1 << 20;
    qbuf_init(&m->fresh, a);
    qbuf_init(&m->win, a);
    qbuf_init(&m->chev, a);
    qarena_init(&m->rules.karena, a);
    return m;
}

void qr_memo_set_slack(qr_memo *m, size_t bytes) { m->slack = bytes; }

static void free_storage(qr_memo *m) {
    for (uint32_t k = 0; k < m->nblk; k++) q_free(m->a, m->blk[k].p, m->blk[k].cap);
    q_free(m->a, m->blk, (size_t)m->capblk * sizeof *m->blk);
    m->blk = NULL;
    m->nblk = m->capblk = 0;
    m->live = m->total = 0;
}

void qr_memo_clear(qr_memo *m) {
    if (!m) return;
    q_free(m->a, m->e, (size_t)m->ne * sizeof *m->e);
    m->e = NULL;
    m->ne = 0;
    m->head = NULL;
    m->head_n = 0;
    free_storage(m);
    m->epoch++;
    m->have_ctx = false;
    m->wfirst = m->wprev = 0;
    m->chain_ok = m->chain_open = false;
    m->nchain = 0;
    m->rules.t = NULL;
    m->details.t = NULL;
    /* its key may name a kept copy freed below (qr_memo_stable) */
    m->inm.t = NULL;
    /* the view's kept blocks go with the encodings that may name them */
    m->rules.nv = m->rules.nvchg = 0;
    if (m->rules.capv) memset(m->rules.kblk, 0, (size_t)m->rules.capv * sizeof *m->rules.kblk);
    qarena_free(&m->rules.karena);
    qarena_init(&m->rules.karena, m->a);
}

void qr_memo_free(qr_memo *m) {
    if (!m) return;
    qr_memo_clear(m);
    q_free(m->a, m->chk.ids, (size_t)m->chk.capids * sizeof *m->chk.ids);
    q_free(m->a, m->inm.k, (size_t)m->inm.cap * sizeof *m->inm.k);
    q_free(m->a, m->inm.b, (size_t)m->inm.cap * sizeof *m->inm.b);
    qbuf_free(&m->fresh);
    q_free(m->a, m->holes, m->capholes * sizeof *m->holes);
    q_free(m->a, m->pieces, m->cappieces * sizeof *m->pieces);
    q_free(m->a, m->segs, m->capsegs * sizeof *m->segs);
    q_free(m->a, m->chain, (size_t)m->capchain * sizeof *m->chain);
    q_free(m->a, m->rules.chg, (size_t)m->rules.cap * sizeof *m->rules.chg);
    q_free(m->a, m->details.v, (size_t)m->details.cap * sizeof *m->details.v);
    q_free(m->a, m->rules.vmsgs, (size_t)m->rules.capv * sizeof *m->rules.vmsgs);
    q_free(m->a, m->rules.kblk, (size_t)m->rules.capv * sizeof *m->rules.kblk);
    q_free(m->a, m->rules.knb, (size_t)m->rules.capv * sizeof *m->rules.knb);
    q_free(m->a, m->rules.vchg, (size_t)m->rules.capvchg * sizeof *m->rules.vchg);
    qarena_free(&m->rules.karena);
    q_free(m->a, m->ws, m->capws * sizeof *m->ws);
    q_free(m->a, m->segof, m->capsegof * sizeof *m->segof);
    qbuf_free(&m->win);
    qbuf_free(&m->chev);
    q_free(m->a, m, sizeof *m);
}

/* Copies n bytes into storage. */
static const char *store(qr_memo *m, const char *p, size_t n) {
    mblock *b = m->nblk ? &m->blk[m->nblk - 1] : NULL;
    if (!b || b->cap - b->len < n) {
        if (m->nblk == m->capblk) {
            uint32_t ncap = m->capblk ? m->capblk * 2 : 8;
            mblock *nb = q_realloc(m->a, m->blk, (size_t)m->capblk * sizeof *nb, (size_t)ncap * sizeof *nb);
            if (!nb) { m->oom = true; return NULL; }
            m->blk = nb;
            m->capblk = ncap;
        }
        size_t cap = n > ((size_t)1 << 20) ? n : ((size_t)1 << 20);
        char *q = q_malloc(m->a, cap);
        if (!q) { m->oom = true; return NULL; }
        b = &m->blk[m->nblk++];
        b->p = q;
        b->len = 0;
        b->cap = cap;
    }
    char *d = b->p + b->len;
    if (n) memcpy(d, p, n);
    b->len += n;
    m->live += n;
    m->total += n;
    return d;
}

/* Stale bytes outnumber the live ones: copy the live ones into new storage
 * (in message order, so that neighbours become contiguous). */
static void compact_storage(qr_memo *m) {
    size_t stale = m->total - m->live;
    if (m->slack ? stale <= m->live + m->slack : stale == 0) return;
    mblock *oblk = m->blk;
    uint32_t onblk = m->nblk, ocap = m->capblk;
    m->blk = NULL;
    m->nblk = m->capblk = 0;
    m->live = m->total = 0;
    if (m->head) m->head = store(m, m->head, m->head_n);
    for (uint32_t k = 0; k < m->ne && !m->oom; k++)
        if (m->e[k].used) {
            m->e[k].p = store(m, m->e[k].p, m->e[k].n);
            if (m->e[k].ev_n) m->e[k].ev = store(m, m->e[k].ev, m->e[k].ev_n);
        }
    for (uint32_t k = 0; k < onblk; k++) q_free(m->a, oblk[k].p, oblk[k].cap);
    q_free(m->a, oblk, (size_t)ocap * sizeof *oblk);
    m->epoch++;
    if (m->oom) { /* forget everything rather than keep dangling units */
        q_free(m->a, m->e, (size_t)m->ne * sizeof *m->e);
        m->e = NULL;
        m->ne = 0;
        m->head = NULL;
        free_storage(m);
    }
}

static bool add_hole(qr_memo *m, size_t off, const char *p, size_t n, uint8_t kind, bool marked, bool sep,
                     uint8_t role, bool closed, bool written) {
    if (m->nholes == m->capholes) {
        size_t ncap = m->capholes ? m->capholes * 2 : 64;
        mhole *nh = q_realloc(m->a, m->holes, m->capholes * sizeof *nh, ncap * sizeof *nh);
        if (!nh) { m->oom = true; return false; }
        m->holes = nh;
        m->capholes = ncap;
    }
    mhole h = {off, p, n, kind, marked, sep, role, closed, written};
    m->holes[m->nholes++] = h;
    return true;
}

/* ---- render hooks (render.c) ---- */

/* Called before the encoder: checks the context, resets the body. use: the
 * dialect has a memo path and the render may use it. */
void qr_memo_prepare(qr_memo *m, qr_ctx *c, bool use);
void qr_memo_prepare(qr_memo *m, qr_ctx *c, bool use) {
    m->nholes = 0;
    m->prev_head = m->npieces && m->pieces[0].kind == QR_PIECE_HEAD ? m->pieces[0].p : NULL;
    m->npieces = m->nsegs = 0;
    m->body_len = 0;
    m->oom = false;
    m->reused = m->encoded = 0;
    m->skipped = m->visited = 0;
    m->same = 0;
    m->plan = 0;
    m->chain_open = false;
    const quire_render_options *ro = c->ro;
    bool same = m->have_ctx && memcmp(&m->caps, &c->caps, sizeof m->caps) == 0 && strcmp(m->model, c->model) == 0 &&
                m->t == c->t && m->placement == (int)ro->placement && m->pretty == (ro->pretty != 0) &&
                m->system_slot == (int)ro->allow_system_slot && m->breakpoints == (int)ro->cache_breakpoints;
    if (!same || !use) {
        qr_memo_clear(m);
        if (use && strlen(c->model) < sizeof m->model) {
            m->have_ctx = true;
            memcpy(&m->caps, &c->caps, sizeof m->caps);
            snprintf(m->model, sizeof m->model, "%s", c->model);
            m->t = c->t;
            m->placement = (int)ro->placement;
            m->pretty = ro->pretty != 0;
            m->system_slot = (int)ro->allow_system_slot;
            m->breakpoints = (int)ro->cache_breakpoints;
        }
    } else {
        compact_storage(m);
    }
    c->memo = use && m->have_ctx ? m : NULL;
    if (m->chain_ok && (!c->memo || m->chain_epoch != m->epoch)) m->chain_ok = false;
    if (c->memo && m->ne < c->t->nmsgs) {
        uint32_t n = c->t->nmsgs + c->t->nmsgs / 2 + 16;
        mentry *ne = q_realloc(m->a, m->e, (size_t)m->ne * sizeof *ne, (size_t)n * sizeof *ne);
        if (!ne) { c->memo = NULL; m->chain_ok = false; return; }
        memset(ne + m->ne, 0, (size_t)(n - m->ne) * sizeof *ne);
        m->e = ne;
        m->ne = n;
    }
    if (c->memo && m->capchain < c->t->nmsgs) {
        uint32_t n = c->t->nmsgs + c->t->nmsgs / 2 + 16;
        mlink *nc = q_realloc(m->a, m->chain, (size_t)m->capchain * sizeof *nc, (size_t)n * sizeof *nc);
        if (!nc) { c->memo = NULL; m->chain_ok = false; return; }
        m->chain = nc;
        m->capchain = n;
    }
}

static bool put_piece(qr_memo *m, const char *p, size_t n, bool stable, uint8_t kind, bool marked, bool sep,
                      uint8_t role, bool closed, bool written) {
    if (!n) return true;
    if (m->npieces == m->cappieces) {
        size_t ncap = m->cappieces ? m->cappieces * 2 : 64;
        qr_piece *np = q_realloc(m->a, m->pieces, m->cappieces * sizeof *np, ncap * sizeof *np);
        if (!np) return false;
        m->pieces = np;
        m->cappieces = ncap;
    }
    qr_piece pc = {p, n, stable, kind, marked, sep, role, closed, written};
    m->pieces[m->npieces++] = pc;
    m->body_len += n;
    return true;
}

/* Called after a successful encode: out becomes the memo's fresh buffer and
 * the pieces are built (after the reused prefix, which is in place); the
 * chain is sealed for the next render. False on OOM. */
bool qr_memo_finish(qr_memo *m, qr_ctx *c, qbuf *out);
bool qr_memo_finish(qr_memo *m, qr_ctx *c, qbuf *out) {
    if (m->oom || out->oom) { m->chain_ok = false; return false; }
    qbuf tmp = m->fresh;
    m->fresh = *out;
    *out = tmp;
    out->len = 0;
    const char *f = m->fresh.data ? m->fresh.data : "";
    size_t at = 0, h = 0;
    if (m->skipped) {
        /* the head, then the prefix's units: pieces 1..K of the last body */
        const mhole *hl = &m->holes[0];
        if (!put_piece(m, hl->p, hl->n, true, hl->kind, hl->marked, hl->sep, hl->role, hl->closed, false)) goto fail;
        m->npieces = 1 + m->skipped;
        /* the prefix's pieces are the last body's: those it wrote are stored now */
        for (size_t q = m->wfirst; q < m->npieces; q++) m->pieces[q].written = false;
        m->body_len += m->chain[m->skipped - 1].bytes;
        h = 1 + m->skipped;
        if (m->prev_head == hl->p) m->same = 1 + m->skipped;
    }
    for (; h < m->nholes; h++) {
        const mhole *hl = &m->holes[h];
        if (!put_piece(m, f + at, hl->off - at, false, QR_PIECE_FRESH, false, false, 0, false, false)) goto fail;
        if (!put_piece(m, hl->p, hl->n, true, hl->kind, hl->marked, hl->sep, hl->role, hl->closed, hl->written))
            goto fail;
        at = hl->off;
    }
    if (!put_piece(m, f + at, m->fresh.len - at, false, QR_PIECE_FRESH, false, false, 0, false, false)) goto fail;
    m->wprev = m->wfirst;
    m->wfirst = m->npieces;
    for (size_t q = m->skipped ? 1 + m->skipped : 0; q < m->npieces; q++)
        if (m->pieces[q].written) { m->wfirst = q; break; }
    m->gen++;
    /* seal the chain: its last unit must end before a message that exists
     * and is no instruction (what follows cannot regroup it) */
    m->chain_ok = false;
    if (c && c->memo == m && m->chain_epoch == m->epoch && m->nchain) {
        const quire_transcript *t = c->t;
        uint32_t l = t->nmsgs;
        while (l > 0 && qr_is_instruction(&t->msgs[l - 1])) l--;
        /* l - 1: the last message that is no instruction */
        while (m->nchain && (l == 0 || m->chain[m->nchain - 1].j > l - 1)) m->nchain--;
        m->chain_ok = m->nchain > 0;
        m->npmarks = 0;
        for (uint32_t k = 0; k < c->nmarks && m->npmarks < Q_COUNTOF(m->pmarks); k++)
            if (c->marks[k].site == QRS_BLOCK) m->pmarks[m->npmarks++] = c->marks[k];
    }
    return true;
fail:
    m->chain_ok = false;
    m->npieces = 0;
    m->wfirst = 0; /* the array's flags are unknown: clear them all next time */
    return false;
}

/* ---- pieces and segments ---- */

const qr_piece *qr_memo_pieces(const qr_memo *m, size_t *n, size_t *body_len) {
    *n = m->npieces;
    if (body_len) *body_len = m->body_len;
    return m->pieces;
}

const quire_segment *qr_memo_segments(qr_memo *m, size_t *n) {
    if (m->nsegs == 0 && m->npieces) {
        if (m->capsegs < m->npieces || m->capsegof < m->npieces) {
            size_t ncap = m->npieces + m->npieces / 2 + 16;
            quire_segment *ns = q_realloc(m->a, m->segs, m->capsegs * sizeof *ns, ncap * sizeof *ns);
            if (!ns) { *n = 0; return NULL; }
            m->segs = ns;
            m->capsegs = ncap;
            uint32_t *so = q_realloc(m->a, m->segof, m->capsegof * sizeof *so, ncap * sizeof *so);
            if (!so) { *n = 0; m->seg_gen = 0; return NULL; }
            m->segof = so;
            m->capsegof = ncap;
        }
        size_t k = 0;
        if (m->seg_gen && m->seg_gen + 1 == m->gen && m->same > 0) {
            /* the segments of the unchanged pieces are in place: the last
             * one ends where the last unchanged piece does */
            k = m->same;
            m->nsegs = (size_t)m->segof[k - 1] + 1;
            quire_segment *sg = &m->segs[m->nsegs - 1];
            sg->len = (size_t)(m->pieces[k - 1].p + m->pieces[k - 1].n - sg->data);
        }
        for (; k < m->npieces; k++) {
            const qr_piece *p = &m->pieces[k];
            if (m->nsegs && m->segs[m->nsegs - 1].data + m->segs[m->nsegs - 1].len == p->p) {
                m->segs[m->nsegs - 1].len += p->n;
                m->segof[k] = (uint32_t)(m->nsegs - 1);
                continue;
            }
            m->segs[m->nsegs].data = p->p;
            m->segs[m->nsegs].len = p->n;
            m->segof[k] = (uint32_t)m->nsegs;
            m->nsegs++;
        }
        m->seg_gen = m->gen;
    }
    *n = m->nsegs;
    return m->segs;
}

size_t qr_memo_same(const qr_memo *m, uint64_t *gen, size_t *bytes) {
    if (gen) *gen = m->gen;
    if (bytes) *bytes = m->same ? m->pieces[0].n + m->chain[m->skipped - 1].bytes : 0;
    return m->same;
}

uint32_t qr_memo_visited(const qr_memo *m) { return m->visited; }

uint64_t qr_memo_epoch(const qr_memo *m) { return m->epoch; }

void qr_memo_counts(const qr_memo *m, uint32_t *reused, uint32_t *encoded) {
    *reused = m->reused;
    *encoded = m->encoded;
}

/* ---- encoder hooks ---- */

bool qr_groups_in(const qr_ctx *c, uint32_t i, uint32_t j) {
    for (uint32_t g = 0; g < c->ngroups; g++)
        if (c->groups[g].anchor != QR_TAIL && c->groups[g].anchor >= i && c->groups[g].anchor < j) return true;
    return false;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

static uint64_t marks_in(const qr_ctx *c, uint32_t i, uint32_t j, bool *any) {
    uint64_t h = 0;
    *any = false;
    for (uint32_t k = 0; k < c->nmarks; k++) {
        const qr_mark *mk = &c->marks[k];
        if (mk->site != QRS_BLOCK || mk->a < i || mk->a >= j) continue;
        *any = true;
        h = mix(h, ((uint64_t)mk->a << 32) | mk->b);
        h = mix(h, (uint64_t)mk->ttl_1h + 2);
        h = mix(h, (uint64_t)(uintptr_t)mk->input.doc);
        h = mix(h, (uint64_t)mk->input.idx + 1);
    }
    return h;
}

/* Extends the chain with the unit whose hole is about to be added (it starts
 * right after the head and the chain's units), or closes the chain. */
/* The features a reused encoding needs, named again in their order. */
static void need_betas(qr_ctx *c, const uint8_t *b, uint8_t n) {
    for (uint8_t k = 0; k < n; k++) qr_need_beta(c, qr_beta_name((uint8_t)(b[k] - 1)));
}

static void chain_push(qr_memo *m, const qr_ctx *c, const qr_unit *u, size_t n, uint32_t nwire, bool marked,
                       const uint8_t *betas, uint8_t nbetas, const char *ev, size_t ev_n) {
    if (!m->chain_open) return;
    (void)marked; /* a unit with a breakpoint may be in it: qr_memo_prefix compares them */
    if (n == 0) {
        /* an empty unit leaves no piece (put_piece), so pieces 1..K of the
         * body would no longer be the chain's K units: the prefix ends here */
        m->chain_open = false;
        return;
    }
    if (u->start != 0 || m->nholes != 1 + (size_t)m->nchain || m->nchain >= m->capchain) {
        m->chain_open = false;
        return;
    }
    mlink *l = &m->chain[m->nchain];
    const mlink *pv = m->nchain ? &m->chain[m->nchain - 1] : NULL;
    l->i = u->i;
    l->j = u->j;
    l->variant = u->variant;
    l->sep = u->sep;
    l->last = c->t->msgs[u->j - 1].blocks;
    l->nlast = c->t->msgs[u->j - 1].nblocks;
    l->nwire = (pv ? pv->nwire : 0) + nwire;
    l->bytes = (pv ? pv->bytes : 0) + n;
    l->nbetas = 0;
    if (pv) { memcpy(l->betas, pv->betas, sizeof l->betas); l->nbetas = pv->nbetas; }
    for (uint8_t k = 0; k < nbetas; k++) {
        bool seen = false;
        for (uint8_t q = 0; q < l->nbetas && !seen; q++) seen = l->betas[q] == betas[k];
        if (!seen && l->nbetas < sizeof l->betas) l->betas[l->nbetas++] = betas[k];
    }
    m->chev.len = pv ? pv->ev_end : 0;
    if (ev_n) qbuf_put(&m->chev, ev, ev_n);
    if (m->chev.oom) { m->chev.oom = false; m->chev.len = 0; m->chain_open = false; return; }
    l->ev_end = m->chev.len;
    m->nchain++;
}

/* The identity keys (mentry bi/bj, mlink.last, qr_inmarks.last) name a
 * message by the address of its blocks. Two messages at one index with
 * blocks at one address are the same bytes only when that address cannot
 * have been freed and handed out again since the key was taken (the ABA
 * case). Two kinds of address qualify, and only these are ever keys:
 * - the transcript's own blocks: a session appends (a failed append takes
 *   back messages no render has seen) and its compaction replaces the
 *   transcript while the old one stays alive (the context check empties the
 *   memo on the new transcript pointer);
 * - the rules view's kept copies (r->kblk, in r->karena): freed only by
 *   qr_memo_clear, with every key that may name them.
 * What the rules rewrite into the render's scratch (the trimmed final
 * assistant message; any rewritten message when the memo keeps no view) is
 * freed at the end of the render, and the next render's scratch or kept
 * copies may reuse the address for other bytes (the message untrimmed):
 * such a message is no key, and a unit holding one is encoded, not kept. */
bool qr_memo_stable(const qr_memo *m, const quire_transcript *t, uint32_t k) {
    if (k >= t->nmsgs) return false;
    const qblock *b = t->msgs[k].blocks;
    if (!b || (m->t && k < m->t->nmsgs && b == m->t->msgs[k].blocks)) return true;
    const qr_rules *r = &m->rules;
    return r->t && t == &r->vt && k < r->capv && b == r->kblk[k];
}

bool qr_unit_begin(qr_ctx *c, qr_unit *u, uint32_t i, uint32_t j, uint32_t variant, bool keep) {
    memset(u, 0, sizeof *u);
    u->slot = i;
    u->i = i;
    u->j = j;
    u->variant = variant;
    qr_memo *m = c->memo;
    if (!m) return false;
    m->visited++;
    c->nunit_betas = 0;
    qw *w = c->w;
    u->sep = w->depth > 0 && w->count[w->depth] != 0;
    u->start = w->b->len;
    u->ev_start = c->events ? c->events->len : 0;
    u->keep = keep && j > i && i < m->ne && (!c->ngroups || !qr_groups_in(c, i, j));
    for (uint32_t k = i; u->keep && k < j; k++) u->keep = qr_memo_stable(m, c->t, k);
    if (!u->keep) { m->chain_open = false; return false; }
    u->marks = marks_in(c, i, j, &u->marked);
    const quire_transcript *t = c->t;
    mentry *e = &m->e[i];
    if (e->used && e->i == i && e->j == j && e->variant == variant && e->sep == u->sep && e->marks == u->marks &&
        e->bi == t->msgs[i].blocks && e->ni == t->msgs[i].nblocks && e->bj == t->msgs[j - 1].blocks &&
        e->nj == t->msgs[j - 1].nblocks) {
        if (e->ev_n && !c->events) return false;
        chain_push(m, c, u, e->n, e->nwire, e->marked, e->betas, e->nbetas, e->ev, e->ev_n);
        need_betas(c, e->betas, e->nbetas);
        if (e->ev_n) qbuf_put(c->events, e->ev, e->ev_n);
        if (!add_hole(m, w->b->len, e->p, e->n, QR_PIECE_UNIT, e->marked, e->sep, (uint8_t)variant,
                      t->msgs[i].role != QR_ASSISTANT, false))
            return false;
        if (e->n && w->depth > 0) w->count[w->depth] = 1;
        u->nwire = e->nwire;
        m->reused++;
        return true;
    }
    return false;
}

void qr_unit_end(qr_ctx *c, qr_unit *u) {
    qr_memo *m = c->memo;
    if (!m) return;
    m->encoded++;
    qbuf *b = c->w->b;
    bool known = true; /* every feature it needed can be named again */
    for (uint8_t k = 0; k < c->nunit_betas; k++) known = known && qr_beta_name((uint8_t)(c->unit_betas[k] - 1));
    if (!u->keep || c->st || b->oom || (c->events && (c->events->oom || c->events->len < u->ev_start)) ||
        b->len < u->start || !known) {
        m->chain_open = false;
        return;
    }
    size_t n = b->len - u->start;
    /* the events it reported are kept with it: a reuse writes them again */
    size_t ev_n = c->events ? c->events->len - u->ev_start : 0;
    mentry *e = &m->e[u->slot];
    if (e->used) m->live -= e->n + e->ev_n;
    e->used = false;
    const char *p = store(m, b->data + u->start, n);
    if (!p) { m->chain_open = false; return; }
    const char *ev = ev_n ? store(m, c->events->data + u->ev_start, ev_n) : NULL;
    if (ev_n && !ev) { m->live -= n; m->chain_open = false; return; }
    const quire_transcript *t = c->t;
    e->used = true;
    e->i = u->i;
    e->j = u->j;
    e->variant = u->variant;
    e->nwire = u->nwire;
    e->sep = u->sep;
    e->marks = u->marks;
    e->marked = u->marked;
    e->bi = t->msgs[u->i].blocks;
    e->ni = t->msgs[u->i].nblocks;
    e->bj = t->msgs[u->j - 1].blocks;
    e->nj = t->msgs[u->j - 1].nblocks;
    e->p = p;
    e->n = n;
    memcpy(e->betas, c->unit_betas, sizeof e->betas);
    e->nbetas = c->nunit_betas;
    e->ev = ev;
    e->ev_n = ev_n;
    b->len = u->start;
    chain_push(m, c, u, n, u->nwire, u->marked, e->betas, e->nbetas, ev, ev_n);
    add_hole(m, u->start, p, n, QR_PIECE_UNIT, u->marked, u->sep, (uint8_t)u->variant, t->msgs[u->i].role != QR_ASSISTANT,
             true);
}

void qr_memo_head(qr_ctx *c) {
    qr_memo *m = c->memo;
    if (!m) return;
    qbuf *b = c->w->b;
    if (b->oom || m->nholes) return;
    size_t n = b->len;
    if (!(m->head && m->head_n == n && memcmp(m->head, b->data, n) == 0)) {
        if (m->head) m->live -= m->head_n;
        m->head = store(m, b->data, n);
        m->head_n = m->head ? n : 0;
        if (!m->head) return;
    }
    b->len = 0;
    add_hole(m, 0, m->head, n, QR_PIECE_HEAD, false, false, 0, false, false);
    /* the units that follow start the chain (the last one is kept in its
     * array until they overwrite it: qr_memo_skip takes its start) */
    m->chain_open = true;
    m->chain_epoch = m->epoch;
    m->chain_ok = false;
    m->nchain = 0;
}

static bool mark_eq(const qr_mark *x, const qr_mark *y) {
    return x->site == y->site && x->a == y->a && x->b == y->b && x->ttl_1h == y->ttl_1h && x->input.doc == y->input.doc &&
           x->input.idx == y->input.idx;
}

uint32_t qr_memo_prefix(qr_ctx *c, qr_run *first, qr_run *last, uint32_t *msgs) {
    qr_memo *m = c->memo;
    *msgs = 0;
    if (!m) return 0;
    m->plan = 0;
    if (!m->chain_ok || m->chain_epoch != m->epoch || !m->nchain) return 0;
    /* the first message that can have changed: a breakpoint, an anchored
     * reminder group, a message the provider rules changed, the end */
    const quire_transcript *t = c->t;
    uint32_t cut = t->nmsgs;
    if (c->changed_from < cut) cut = c->changed_from;
    /* a breakpoint that is new, or gone, since the render that sealed the chain */
    for (uint32_t k = 0; k < c->nmarks; k++) {
        const qr_mark *x = &c->marks[k];
        if (x->site != QRS_BLOCK || x->a >= cut) continue;
        bool was = false;
        for (uint32_t q = 0; q < m->npmarks && !was; q++) was = mark_eq(x, &m->pmarks[q]);
        if (!was) cut = x->a;
    }
    for (uint32_t q = 0; q < m->npmarks; q++) {
        const qr_mark *y = &m->pmarks[q];
        if (y->a >= cut) continue;
        bool is = false;
        for (uint32_t k = 0; k < c->nmarks && !is; k++) is = mark_eq(y, &c->marks[k]);
        if (!is) cut = y->a;
    }
    for (uint32_t g = 0; g < c->ngroups; g++)
        if (c->groups[g].anchor != QR_TAIL && c->groups[g].anchor < cut) cut = c->groups[g].anchor;
    /* the longest run of the chain's units that ends by cut */
    uint32_t lo = 0, hi = m->nchain;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->chain[mid].j <= cut) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    const mlink *l = &m->chain[lo - 1];
    if (l->j > t->nmsgs || t->msgs[l->j - 1].blocks != l->last || t->msgs[l->j - 1].nblocks != l->nlast) return 0;
    first->i = m->chain[0].i;
    first->j = m->chain[0].j;
    first->role = (qwrole)m->chain[0].variant;
    last->i = l->i;
    last->j = l->j;
    last->role = (qwrole)l->variant;
    *msgs = l->j;
    m->plan = lo;
    return lo;
}

bool qr_memo_skip(qr_ctx *c, uint32_t k, uint32_t *nwire) {
    qr_memo *m = c->memo;
    *nwire = 0;
    if (!m || !k || k != m->plan || m->nchain != 0 || m->nholes != 1 || c->w->b->len != 0 || !m->chain_open) return false;
    qw *w = c->w;
    if (w->depth == 0 || (w->count[w->depth] != 0) != m->chain[0].sep) return false;
    const mlink *l = &m->chain[k - 1];
    if (1 + (size_t)k > m->capholes || 1 + (size_t)k > m->cappieces) return false;
    if (l->ev_end && (!c->events || l->ev_end > m->chev.len)) return false;
    m->nholes = 1 + (size_t)k;
    m->nchain = k;
    m->plan = 0;
    need_betas(c, l->betas, l->nbetas);
    if (l->ev_end) qbuf_put(c->events, m->chev.data, l->ev_end);
    if (l->bytes) w->count[w->depth] = 1;
    m->skipped = k;
    m->reused += k;
    *nwire = l->nwire;
    return true;
}

/* ---- validation window ---- */

static bool base_keep(const qr_piece *p) {
    return !(p->kind == QR_PIECE_UNIT && p->sep && !p->marked && !p->written);
}

static bool boundary(const qr_piece *p) { return p->kind == QR_PIECE_UNIT && p->closed; }

bool qr_memo_window(qr_memo *m, const char **p, size_t *len) {
    size_t n = m->npieces;
    *p = NULL;
    *len = 0;
    if (n < 8) return false;
    const qr_piece *pc = m->pieces;
    qbuf *out = &m->win;
    if (m->capws < n + 1) {
        size_t ncap = n + n / 2 + 16;
        struct wstate *nw = q_realloc(m->a, m->ws, m->capws * sizeof *nw, ncap * sizeof *nw);
        if (!nw) return false;
        m->ws = nw;
        m->capws = ncap;
    }
    bool any = false;
    out->len = 0;
    size_t a = 0; /* start of the current stretch of pieces that may go */
    size_t k = 0;
    /* the scan's state at piece k depends on pieces [0, k + 1] only: after
     * a render that kept the last body's first `same` pieces, resume at
     * same - 2 with what the last scan had there (its output is in place) */
    /* (the last scan kept what the render before wrote: resume before that) */
    size_t r = m->same < m->wprev ? m->same : m->wprev;
    if (r >= 3 && m->win_last + 1 == m->gen && m->nws > r - 2) {
        k = r - 2;
        a = m->ws[k].a;
        out->len = m->ws[k].len;
        any = m->ws[k].any;
    }
    for (; k <= n; k++) {
        struct wstate st = {a, out->len, any};
        m->ws[k] = st;
        bool keep = true;
        if (k < n) {
            /* and its neighbours: the pairing and role rules look one unit
             * each way, and a stretch left out keeps every unit after a
             * unit of the role it followed (below) */
            keep = base_keep(&pc[k]) || (k >= 1 && base_keep(&pc[k - 1])) || (k + 1 < n && base_keep(&pc[k + 1]));
        }
        if (!keep) {
            if (k == 0 || a > k) a = k;
            continue;
        }
        if (a < k) {
            /* the stretch [a, k): leave out [s, e) with pc[s-1] and pc[e-1]
             * closed units of one role */
            size_t s = a, e = a;
            while (s < k && !(s > 0 && boundary(&pc[s - 1]))) s++;
            if (s < k) {
                for (e = k; e > s + 1; e--)
                    if (boundary(&pc[e - 1]) && pc[e - 1].role == pc[s - 1].role) break;
                if (e <= s + 1) e = s; /* none: keep the whole stretch */
            }
            if (e <= s) s = e = k; /* nothing left out: all of [a, k) */
            for (size_t q = a; q < s; q++) qbuf_put(out, pc[q].p, pc[q].n);
            for (size_t q = e; q < k; q++) qbuf_put(out, pc[q].p, pc[q].n);
            if (e > s) any = true;
        }
        if (k < n) qbuf_put(out, pc[k].p, pc[k].n);
        a = k + 1;
    }
    m->nws = n + 1;
    if (out->oom) { out->oom = false; out->len = 0; m->nws = 0; return false; }
    m->win_last = m->gen;
    *p = out->data;
    *len = out->len;
    return any;
}

/* ---- transcript checks ---- */

qr_checked *qr_memo_checked(qr_memo *m) { return &m->chk; }

void qr_checked_reset(qr_memo *m) {
    if (m->chk.capids) memset(m->chk.ids, 0, (size_t)m->chk.capids * sizeof *m->chk.ids);
    m->chk.nids = 0;
    m->chk.n = 0;
    m->chk.last = NULL;
    m->chk.t = NULL;
}

bool qr_checked_grow(qr_memo *m, uint32_t want) {
    qr_checked *k = &m->chk;
    if ((uint64_t)want * 2 <= k->capids) return true;
    uint32_t ncap = k->capids ? k->capids : 64;
    while ((uint64_t)ncap < (uint64_t)want * 2) ncap *= 2;
    qr_idslot *n = q_malloc(m->a, (size_t)ncap * sizeof *n);
    if (!n) return false;
    memset(n, 0, (size_t)ncap * sizeof *n);
    /* rehashing needs the ids' hashes: the caller re-inserts (render.c) */
    q_free(m->a, k->ids, (size_t)k->capids * sizeof *k->ids);
    k->ids = n;
    k->capids = ncap;
    k->nids = 0;
    return true;
}

/* ---- provider rules ---- */

qr_rules *qr_memo_rules(qr_memo *m) { return &m->rules; }

bool qr_rules_push(qr_memo *m, uint32_t k) {
    qr_rules *r = &m->rules;
    if (r->nchg == r->cap) {
        uint32_t ncap = r->cap ? r->cap * 2 : 16;
        uint32_t *n = q_realloc(m->a, r->chg, (size_t)r->cap * sizeof *n, (size_t)ncap * sizeof *n);
        if (!n) return false;
        r->chg = n;
        r->cap = ncap;
    }
    r->chg[r->nchg++] = k;
    return true;
}

/* ---- image detail levels ---- */

qr_details *qr_memo_details(qr_memo *m) { return &m->details; }

bool qr_details_push(qr_memo *m, uint32_t k, uint32_t b, int32_t part) {
    qr_details *d = &m->details;
    if (d->cnt == d->cap) {
        uint32_t ncap = d->cap ? d->cap * 2 : 16;
        qr_noted *n = q_realloc(m->a, d->v, (size_t)d->cap * sizeof *n, (size_t)ncap * sizeof *n);
        if (!n) return false;
        d->v = n;
        d->cap = ncap;
    }
    qr_noted x = {k, b, part};
    d->v[d->cnt++] = x;
    return true;
}

bool qr_rules_view_sync(qr_memo *m, const quire_transcript *t, qarena *scratch, uint32_t **old, qblock ***oldb,
                        uint32_t *nold) {
    qr_rules *r = &m->rules;
    *old = NULL;
    *oldb = NULL;
    *nold = 0;
    if (r->capv < t->nmsgs) {
        uint32_t n = t->nmsgs + t->nmsgs / 2 + 16;
        /* the three arrays share capv: all three are allocated before any
         * is replaced, so a failure leaves them as they were */
        qmsg *nm = q_malloc(m->a, (size_t)n * sizeof *nm);
        qblock **nk = q_malloc(m->a, (size_t)n * sizeof *nk);
        uint32_t *nn = q_malloc(m->a, (size_t)n * sizeof *nn);
        if (!nm || !nk || !nn) {
            q_free(m->a, nm, nm ? (size_t)n * sizeof *nm : 0);
            q_free(m->a, nk, nk ? (size_t)n * sizeof *nk : 0);
            q_free(m->a, nn, nn ? (size_t)n * sizeof *nn : 0);
            return false;
        }
        if (r->capv) {
            memcpy(nm, r->vmsgs, (size_t)r->capv * sizeof *nm);
            memcpy(nk, r->kblk, (size_t)r->capv * sizeof *nk);
            memcpy(nn, r->knb, (size_t)r->capv * sizeof *nn);
        }
        q_free(m->a, r->vmsgs, (size_t)r->capv * sizeof *nm);
        q_free(m->a, r->kblk, (size_t)r->capv * sizeof *nk);
        q_free(m->a, r->knb, (size_t)r->capv * sizeof *nn);
        r->vmsgs = nm;
        r->kblk = nk;
        r->knb = nn;
        memset(r->kblk + r->capv, 0, (size_t)(n - r->capv) * sizeof *nk);
        memset(r->knb + r->capv, 0, (size_t)(n - r->capv) * sizeof *nn);
        r->capv = n;
    }
    if (r->nv > t->nmsgs) r->nv = r->nvchg = 0;
    if (r->nvchg) {
        *old = qarena_alloc(scratch, (size_t)r->nvchg * sizeof **old);
        *oldb = qarena_alloc(scratch, (size_t)r->nvchg * sizeof **oldb);
        if (!*old || !*oldb) return false;
    }
    for (uint32_t q = 0; q < r->nvchg; q++) {
        uint32_t k = r->vchg[q];
        (*old)[q] = k;
        (*oldb)[q] = k < r->nv ? r->vmsgs[k].blocks : NULL;
        if (k < r->nv) r->vmsgs[k] = t->msgs[k];
    }
    *nold = r->nvchg;
    r->nvchg = 0;
    if (t->nmsgs > r->nv) memcpy(r->vmsgs + r->nv, t->msgs + r->nv, (size_t)(t->nmsgs - r->nv) * sizeof *r->vmsgs);
    r->nv = t->nmsgs;
    r->vt = *t;
    r->vt.msgs = r->vmsgs;
    return true;
}

bool qr_rules_view_set(qr_memo *m, uint32_t k, qblock *kept, uint32_t nk, bool pure) {
    qr_rules *r = &m->rules;
    if (k >= r->nv) return false;
    qblock *b = kept;
    if (pure) {
        /* what the rules drop from a message depends on the message and the
         * target only: one copy for the memo's life (it goes with the
         * encodings that may name its address) */
        b = r->kblk[k];
        if (!(b && r->knb[k] == nk)) {
            b = qarena_alloc(&r->karena, (size_t)(nk ? nk : 1) * sizeof *b);
            if (!b) return false;
            if (nk) memcpy(b, kept, (size_t)nk * sizeof *b);
            /* a tool result's parts the rules rewrote are in the render's scratch: copied too */
            for (uint32_t q = 0; q < nk; q++) {
                if (b[q].type != QB_TOOL_RESULT || !b[q].nparts || !b[q].parts) continue;
                qblock *parts = qarena_alloc(&r->karena, (size_t)b[q].nparts * sizeof *parts);
                if (!parts) return false;
                memcpy(parts, b[q].parts, (size_t)b[q].nparts * sizeof *parts);
                b[q].parts = parts;
            }
            r->kblk[k] = b;
            r->knb[k] = nk;
        }
    }
    if (r->nvchg == r->capvchg) {
        uint32_t ncap = r->capvchg ? r->capvchg * 2 : 16;
        uint32_t *nv = q_realloc(m->a, r->vchg, (size_t)r->capvchg * sizeof *nv, (size_t)ncap * sizeof *nv);
        if (!nv) return false;
        r->vchg = nv;
        r->capvchg = ncap;
    }
    r->vchg[r->nvchg++] = k;
    qmsg *vm = &r->vmsgs[k];
    vm->blocks = b;
    vm->nblocks = nk;
    vm->content_is_string = vm->content_is_string && nk == 1;
    return true;
}

/* ---- input cache markers ---- */

qr_inmarks *qr_memo_inmarks(qr_memo *m) { return &m->inm; }

bool qr_inmarks_push(qr_memo *m, uint32_t k, uint32_t b) {
    qr_inmarks *im = &m->inm;
    if (im->cnt == im->cap) {
        uint32_t ncap = im->cap ? im->cap * 2 : 16;
        uint32_t *nk = q_malloc(m->a, (size_t)ncap * sizeof *nk), *nb = q_malloc(m->a, (size_t)ncap * sizeof *nb);
        if (!nk || !nb) { q_free(m->a, nk, (size_t)ncap * sizeof *nk); q_free(m->a, nb, (size_t)ncap * sizeof *nb); return false; }
        if (im->cnt) { memcpy(nk, im->k, im->cnt * sizeof *nk); memcpy(nb, im->b, im->cnt * sizeof *nb); }
        q_free(m->a, im->k, (size_t)im->cap * sizeof *im->k);
        q_free(m->a, im->b, (size_t)im->cap * sizeof *im->b);
        im->k = nk;
        im->b = nb;
        im->cap = ncap;
    }
    im->k[im->cnt] = k;
    im->b[im->cnt] = b;
    im->cnt++;
    return true;
}
