/* Token accounting and the turn view of a transcript (see internal.h). */
#include "compact/estimate.h"
#include "compact/internal.h"

/* ------------------------------------------------------------------------ */
/* Token accounting                                                          */
/* ------------------------------------------------------------------------ */

void qc_counter_init(qc_counter *c, const qc_policy *p, const quire_allocator *a) {
    memset(c, 0, sizeof *c);
    c->p = p;
    qbuf_init(&c->tmp, a);
}

static inline uint32_t plain_slot(const char *key, uint32_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(h >> 32) & (cap - 1);
}

static const qc_plain *plain_find(const qc_counter *c, qstr s) {
    if (!c->plain_cap) return NULL;
    for (uint32_t i = plain_slot(s.p, c->plain_cap);; i = (i + 1) & (c->plain_cap - 1)) {
        if (c->plain[i].key == s.p && c->plain[i].key_len == s.len) return &c->plain[i];
        if (!c->plain[i].key) return NULL;
    }
}

/* Remembers s -> p[0..n); false on OOM (the text is then just not kept). */
static bool plain_add(qc_counter *c, qstr s, const char *p, size_t n) {
    if ((uint64_t)(c->plain_n + 1) * 2 > c->plain_cap) {
        uint32_t cap = c->plain_cap ? c->plain_cap * 2 : 64;
        if (cap < c->plain_cap) return false;
        qc_plain *t = qarena_calloc(c->keep, cap, sizeof(qc_plain));
        if (!t) return false;
        for (uint32_t i = 0; i < c->plain_cap; i++) {
            if (!c->plain[i].key) continue;
            uint32_t j = plain_slot(c->plain[i].key, cap);
            while (t[j].key) j = (j + 1) & (cap - 1);
            t[j] = c->plain[i];
        }
        c->plain = t; /* the old table stays in the arena */
        c->plain_cap = cap;
    }
    uint32_t j = plain_slot(s.p, c->plain_cap);
    while (c->plain[j].key) j = (j + 1) & (c->plain_cap - 1);
    c->plain[j].key = s.p;
    c->plain[j].key_len = s.len;
    c->plain[j].p = p;
    c->plain[j].n = n;
    c->plain_n++;
    return true;
}

const char *qc_plain_bytes(qc_counter *c, qstr s, qarena *ar, size_t *len) {
    if (s.p && s.esc) {
        const qc_plain *e = plain_find(c, s);
        if (e) { *len = e->n; return e->p; }
    }
    return qstr_plain_bytes(s, ar, len);
}

void qc_counter_free(qc_counter *c) { qbuf_free(&c->tmp); }

uint64_t qc_count_text(qc_counter *c, const char *s, size_t n) {
    if (!n) return 0;
    if (c->p && c->p->count_tokens) return (uint64_t)c->p->count_tokens(s, n, c->p->count_tokens_ud);
    return (uint64_t)qc_estimate_tokens(s, n);
}

uint64_t qc_count_qstr(qc_counter *c, qstr s) {
    if (!s.p || !s.len) return 0;
    if (!s.esc) return qc_count_text(c, s.p, s.len);
    if (c->keep && s.len > c->keep_min) {
        const qc_plain *e = plain_find(c, s);
        if (e) return qc_count_text(c, e->p, e->n);
        size_t n;
        const char *p = qstr_plain_bytes(s, c->keep, &n);
        if (!p) { c->oom = true; return 0; }
        (void)plain_add(c, s, p, n); /* not kept on OOM: a cut decodes the text again */
        return qc_count_text(c, p, n);
    }
    c->tmp.len = 0;
    qbuf_put_qstr(&c->tmp, s);
    if (c->tmp.oom) { c->oom = true; return 0; }
    return qc_count_text(c, c->tmp.data, c->tmp.len);
}

/* A JSON value counts as its compact text (what every dialect sends). */
static uint64_t count_qval(qc_counter *c, qval v) {
    if (!qval_present(v)) return 0;
    c->tmp.len = 0;
    qw w;
    qw_init(&w, &c->tmp, false);
    qw_qval(&w, v);
    qw_dispose(&w);
    if (c->tmp.oom) { c->oom = true; return 0; }
    return qc_count_text(c, c->tmp.data, c->tmp.len);
}

uint64_t qc_block_tokens(qc_counter *c, const qblock *b) {
    uint64_t t = QC_TOK_BLOCK;
    switch (b->type) {
    case QB_TEXT: t += qc_count_qstr(c, b->text); break;
    case QB_IMAGE: t += QC_TOK_IMAGE; break;
    case QB_DOCUMENT: t += QC_TOK_DOCUMENT + qc_count_qstr(c, b->title); break;
    case QB_TOOL_CALL: t += qc_count_qstr(c, b->name) + count_qval(c, b->input); break;
    case QB_TOOL_RESULT:
        if (b->content_is_string) t += qc_count_qstr(c, b->content_text);
        else
            for (uint32_t i = 0; i < b->nparts; i++) t += qc_block_tokens(c, &b->parts[i]);
        break;
    case QB_THINKING: t += qc_count_qstr(c, b->text); break;
    case QB_REDACTED_THINKING: t += (uint64_t)b->data.len / 4; break;
    case QB_OPAQUE: t += count_qval(c, b->item); break;
    case QB_AUDIO: case QB_FILE: t += QC_TOK_DOCUMENT + qc_count_qstr(c, b->filename); break;
    case QB_SERVER_TOOL_CALL: t += qc_count_qstr(c, b->name) + count_qval(c, b->input); break;
    case QB_SERVER_TOOL_RESULT: t += count_qval(c, b->result); break;
    }
    return t;
}

uint64_t qc_msg_tokens(qc_counter *c, const qmsg *m) {
    uint64_t t = QC_TOK_MESSAGE;
    for (uint32_t i = 0; i < m->nblocks; i++) t += qc_block_tokens(c, &m->blocks[i]);
    return t;
}

uint64_t qc_fixed_tokens(qc_counter *c, const quire_transcript *t) {
    uint64_t n = 0;
    if (t->has_system) {
        n += QC_TOK_SYSTEM;
        for (uint32_t i = 0; i < t->nsystem; i++) n += qc_block_tokens(c, &t->system[i]);
    }
    for (uint32_t i = 0; i < t->ntools; i++) {
        const qtool *tl = &t->tools[i];
        n += QC_TOK_TOOL_DEF + qc_count_qstr(c, tl->name) + qc_count_qstr(c, tl->description) +
             count_qval(c, tl->input_schema);
    }
    return n;
}

uint64_t qc_transcript_tokens(const quire_transcript *t, const qc_policy *p, bool *oom) {
    qc_counter c;
    qc_counter_init(&c, p, t->a);
    uint64_t n = qc_fixed_tokens(&c, t);
    for (uint32_t i = 0; i < t->nmsgs; i++) n += qc_msg_tokens(&c, &t->msgs[i]);
    qc_counter_free(&c);
    if (oom) *oom = c.oom;
    return n;
}

uint64_t qc_estimate_transcript(const quire_transcript *t, const qc_policy *p) {
    bool oom = false;
    uint64_t n = qc_transcript_tokens(t, p, &oom);
    return oom ? UINT64_MAX : n;
}

uint64_t quire_compact_estimate(const quire_transcript *t, const quire_compact_policy *policy) {
    if (!t) return 0;
    return qc_estimate_transcript(t, policy);
}

/* ------------------------------------------------------------------------ */
/* Id maps (open addressing, FNV-1a)                                         */
/* ------------------------------------------------------------------------ */

static uint32_t id_hash(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) { h ^= (uint8_t)s[i]; h *= 16777619u; }
    return h;
}

static bool idmap_init(qc_idmap *m, uint32_t count, qarena *ar) {
    uint32_t cap = 16;
    while (cap < count * 2u + 1u && cap < (1u << 30)) cap <<= 1;
    m->e = qarena_calloc(ar, cap, sizeof(qc_idmap_entry));
    m->cap = m->e ? cap : 0;
    return m->e != NULL;
}

/* Inserts unless present (first occurrence wins). */
static void idmap_put(qc_idmap *m, const char *key, size_t len, uint32_t msg, const qblock *b) {
    if (!m->cap) return;
    uint32_t mask = m->cap - 1, i = id_hash(key, len) & mask;
    while (m->e[i].key) {
        if (m->e[i].len == len && memcmp(m->e[i].key, key, len) == 0) return;
        i = (i + 1) & mask;
    }
    m->e[i].key = key;
    m->e[i].len = (uint32_t)len;
    m->e[i].msg = msg;
    m->e[i].block = b;
}

const qc_idmap_entry *qc_idmap_get(const qc_idmap *m, const char *key, size_t len) {
    if (!m->cap || !key) return NULL;
    uint32_t mask = m->cap - 1, i = id_hash(key, len) & mask;
    while (m->e[i].key) {
        if (m->e[i].len == len && memcmp(m->e[i].key, key, len) == 0) return &m->e[i];
        i = (i + 1) & mask;
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Turns                                                                     */
/* ------------------------------------------------------------------------ */

bool qc_view_build(qc_view *v, const quire_transcript *t, const qc_policy *p, qarena *ar) {
    memset(v, 0, sizeof *v);
    v->t = t;
    v->p = p;
    uint32_t n = t->nmsgs;
    v->n = n;
    uint32_t ncalls = 0, nresults = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < t->msgs[i].nblocks; k++) {
            qblock_type ty = t->msgs[i].blocks[k].type;
            if (ty == QB_TOOL_CALL) ncalls++;
            else if (ty == QB_TOOL_RESULT) nresults++;
        }
    if (!idmap_init(&v->calls, ncalls, ar) || !idmap_init(&v->results, nresults, ar)) return false;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < t->msgs[i].nblocks; k++) {
            const qblock *b = &t->msgs[i].blocks[k];
            size_t len;
            const char *key;
            if (b->type == QB_TOOL_CALL) {
                if (!(key = qstr_plain_bytes(b->id, ar, &len))) return false;
                idmap_put(&v->calls, key, len, i, b);
            } else if (b->type == QB_TOOL_RESULT) {
                if (!(key = qstr_plain_bytes(b->tool_call_id, ar, &len))) return false;
                idmap_put(&v->results, key, len, i, b);
            }
        }
    /* A turn may not start between a tool call and its result: mark every
     * message index in (call, result] as "inside a pair" (difference array). */
    int32_t *diff = qarena_calloc(ar, (size_t)n + 2, sizeof(int32_t));
    v->turn_of = qarena_alloc(ar, ((size_t)n + 1) * sizeof(uint32_t));
    v->start = qarena_alloc(ar, ((size_t)n + 2) * sizeof(uint32_t));
    if (!diff || !v->turn_of || !v->start) return false;
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t k = 0; k < t->msgs[j].nblocks; k++) {
            const qblock *b = &t->msgs[j].blocks[k];
            if (b->type != QB_TOOL_RESULT) continue;
            size_t len;
            const char *key = qstr_plain_bytes(b->tool_call_id, ar, &len);
            if (!key) return false;
            const qc_idmap_entry *e = qc_idmap_get(&v->calls, key, len);
            if (!e || e->msg >= j) continue;
            diff[e->msg + 1]++;
            diff[j + 1]--;
        }
    int32_t open = 0;
    uint32_t nt = 0, nu = 0;
    v->ustart = qarena_alloc(ar, ((size_t)n + 2) * sizeof(uint32_t));
    v->ustep = qarena_calloc(ar, (size_t)n + 1, sizeof(bool));
    v->upinned = qarena_calloc(ar, (size_t)n + 1, sizeof(bool));
    v->uopen = qarena_calloc(ar, (size_t)n + 1, sizeof(bool));
    v->uturn = qarena_alloc(ar, ((size_t)n + 1) * sizeof(uint32_t));
    if (!v->ustart || !v->ustep || !v->upinned || !v->uopen || !v->uturn) return false;
    for (uint32_t i = 0; i < n; i++) {
        open += diff[i];
        if (open != 0) continue;
        qrole role = t->msgs[i].role;
        if (role == QR_USER) {
            v->start[nt++] = i;
            v->ustep[nu] = false;
            v->uturn[nu] = nt - 1;
            v->ustart[nu++] = i;
        } else if (role == QR_ASSISTANT && nt > 0) {
            v->ustep[nu] = true;
            v->uturn[nu] = nt - 1;
            v->ustart[nu++] = i;
            v->nsteps++;
        }
    }
    v->nunits = nu;
    v->ustart[nu] = n;
    for (uint32_t u = 0; u < nu; u++)
        for (uint32_t i = v->ustart[u]; i < v->ustart[u + 1]; i++) {
            if (t->msgs[i].pinned) v->upinned[u] = true;
            for (uint32_t k = 0; k < t->msgs[i].nblocks && !v->uopen[u]; k++) {
                const qblock *b = &t->msgs[i].blocks[k];
                if (b->type != QB_TOOL_CALL) continue;
                size_t len;
                const char *key = qstr_plain_bytes(b->id, ar, &len);
                if (!key) return false;
                v->uopen[u] = qc_idmap_get(&v->results, key, len) == NULL;
            }
        }
    v->nturns = nt;
    if (nt == 0) v->start[0] = n;
    v->start[nt] = n;
    v->turn_pinned = qarena_calloc(ar, nt ? nt : 1, sizeof(bool));
    if (!v->turn_pinned) return false;
    for (uint32_t i = 0; i < v->start[0]; i++) v->turn_of[i] = UINT32_MAX;
    for (uint32_t tt = 0; tt < nt; tt++)
        for (uint32_t i = v->start[tt]; i < v->start[tt + 1]; i++) {
            v->turn_of[i] = tt;
            if (t->msgs[i].pinned) v->turn_pinned[tt] = true;
        }
    return true;
}
