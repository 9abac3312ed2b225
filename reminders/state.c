/* The reminder state (quire.state/1) and its lifecycle (DESIGN 2.3, 4).
 *
 * A state owns an arena holding every string of its reminders and servers.
 * Operations mutate a state in place; the public functions clone first so the
 * caller's state is a value. Removing a reminder leaves its strings in the
 * arena until the next clone (clones copy only what is live). */
#include "reminders/state.h"

#include "reminders/events.h"
#include "reminders/reminder.h"

#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Construction, copies                                                      */
/* ------------------------------------------------------------------------ */

quire_state *qs_new(const quire_allocator *a, const char *session_id) {
    a = a ? a : q_alloc_default();
    quire_state *s = q_malloc(a, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->a = a;
    qarena_init(&s->ar, a);
    s->session_id = "";
    if (session_id && *session_id && !qs_set_session_id(s, session_id, strlen(session_id))) {
        quire_state_free(s);
        return NULL;
    }
    return s;
}

static void ix_free(quire_state *s);

void quire_state_free(quire_state *s) {
    if (!s) return;
    ix_free(s);
    if (s->srv_slot) q_free(s->a, s->srv_slot, (size_t)s->srv_cap * sizeof *s->srv_slot);
    if (s->rems) q_free(s->a, s->rems, (size_t)s->caprems * sizeof *s->rems);
    if (s->servers) q_free(s->a, s->servers, (size_t)s->capservers * sizeof *s->servers);
    qarena_free(&s->ar);
    q_free(s->a, s, sizeof *s);
}

bool qs_set_session_id(quire_state *s, const char *id, size_t len) {
    char *c = qarena_strndup(&s->ar, id ? id : "", id ? len : 0);
    if (!c) return false;
    s->session_id = c;
    return true;
}

quire_reminder_limits qs_limits(const quire_state *s) {
    quire_reminder_limits l = s->lim;
    if (!l.max_live_per_origin) l.max_live_per_origin = QREM_DEFAULT_MAX_LIVE_PER_ORIGIN;
    if (!l.turn_budget_bytes) l.turn_budget_bytes = QREM_DEFAULT_TURN_BUDGET_BYTES;
    if (!l.body_cap_bytes) l.body_cap_bytes = QREM_DEFAULT_BODY_CAP_BYTES;
    if (!l.max_origins) l.max_origins = QREM_DEFAULT_MAX_ORIGINS;
    if (!l.max_pending_per_server) l.max_pending_per_server = QREM_DEFAULT_MAX_PENDING_PER_SERVER;
    return l;
}

static const char *dup0(qarena *ar, const char *s, bool *ok) {
    if (!s) return NULL;
    char *c = qarena_strndup(ar, s, strlen(s));
    if (!c) *ok = false;
    return c;
}

/* Deep copy of src's strings into ar. */
static bool rem_copy(qarena *ar, qreminder *dst, const qreminder *src) {
    bool ok = true;
    *dst = *src;
    dst->id = dup0(ar, src->id, &ok);
    char *b = qarena_strndup(ar, src->body ? src->body : "", src->body ? src->body_len : 0);
    if (!b) ok = false;
    dst->body = b;
    dst->tags = NULL;
    if (src->ntags) {
        const char **t = qarena_calloc(ar, src->ntags, sizeof *t);
        if (!t) return false;
        for (uint32_t i = 0; i < src->ntags; i++) t[i] = dup0(ar, src->tags[i], &ok);
        dst->tags = t;
    }
    dst->dedupe_key = dup0(ar, src->dedupe_key, &ok);
    dst->origin = dup0(ar, src->origin ? src->origin : "host", &ok);
    dst->originating_agent_id = dup0(ar, src->originating_agent_id, &ok);
    if (src->meta_json) {
        char *m = qarena_strndup(ar, src->meta_json, src->meta_len);
        if (!m) ok = false;
        dst->meta_json = m;
    }
    return ok;
}

static bool rems_reserve(quire_state *s, uint32_t need) {
    if (need <= s->caprems) return true;
    /* doubling for appends; a bulk reserve (a state file's count) gets exactly what it asks */
    uint32_t cap = s->caprems ? (s->caprems > UINT32_MAX / 2 ? UINT32_MAX : s->caprems * 2) : 8;
    if (cap < need) cap = need;
    qreminder *n = q_realloc(s->a, s->rems, (size_t)s->caprems * sizeof *n, (size_t)cap * sizeof *n);
    if (!n) return false;
    s->rems = n;
    s->caprems = cap;
    return true;
}

/* Appends a deep copy of r. */
static bool rems_push(quire_state *s, const qreminder *r) {
    if (!rems_reserve(s, s->nrems + 1)) return false;
    if (!rem_copy(&s->ar, &s->rems[s->nrems], r)) return false;
    s->nrems++;
    return true;
}

static void rems_remove(quire_state *s, uint32_t i) {
    memmove(&s->rems[i], &s->rems[i + 1], (size_t)(s->nrems - i - 1) * sizeof *s->rems);
    s->nrems--;
}

static bool is_live(const qreminder *r) { return r->retired_at_turn == 0 && !r->dead; }

/* ------------------------------------------------------------------------ */
/* Lookup tables for inject                                                  */
/* ------------------------------------------------------------------------ */

/* Inject must find, among the live reminders, the ones with a given id, the
 * ones with a given (origin, dedupeKey), and the oldest of an origin and its
 * count, without walking the whole state: a log of 10^6 peer messages must
 * cost linear time. Inside one batch of operations a reminder removed by
 * inject is only marked dead (positions stay put, so the tables stay valid);
 * qs_settle compacts the array and drops the tables at the end of the batch.
 *
 * Tables: open addressing with linear probing on a 64-bit hash of the key.
 * A slot is 8 bytes, the upper half of the hash beside the index of the key's
 * entry, so a probe past another key touches nothing else and a table of
 * 10^6 slots is 8 MB; the entries lie in one array in the order keys first
 * appeared, each with its key strings (in the state's arena, alive until the
 * next clone) and the head of a chain of positions (newest first) linked
 * through ix->chain_*. Chains skip and unlink dead or retired positions as
 * they are walked; a key whose chain empties stays (it is still known) until
 * the table is rebuilt, which happens when keys reach half the capacity. */
typedef struct ix_slot { /* an entry: one key */
    const char *k1, *k2; /* k2 NULL when the table has one key string */
    uint32_t head;       /* newest position, UINT32_MAX = none */
} ix_slot;

#define IX_EMPTY UINT64_MAX
#define IX_TAG UINT64_C(0xFFFFFFFF00000000)
typedef struct ix_table {
    uint64_t *slot;  /* hash tag | entry index; IX_EMPTY = free */
    ix_slot *entry;  /* cap / 2 entries, used of them in use */
    uint32_t cap, used;
} ix_table;

typedef struct ix_origin {
    const char *name;
    uint32_t nlive;
    uint32_t first; /* oldest position of this origin (may be dead: skipped lazily) */
    uint32_t last;  /* newest position */
} ix_origin;

typedef struct qs_index {
    ix_table ids;      /* k1 = id */
    ix_table keys;     /* k1 = origin, k2 = dedupeKey */
    ix_table origins;  /* k1 = origin; head = index into orig[] */
    uint32_t *chain_id, *chain_key; /* per position: next older position with the same key */
    uint32_t *onext;   /* per position: next newer position of the same origin */
    uint32_t *oidx;    /* per position: index into orig[] */
    uint32_t cappos;
    ix_origin *orig;
    uint32_t norig, caporig;
    uint32_t live_origins; /* origins other than the host with nlive > 0 */
} qs_index;

static bool is_host(const char *origin) { return !origin || strcmp(origin, "host") == 0; }

static uint64_t ix_hash(const char *k1, const char *k2) {
    uint64_t h = UINT64_C(1469598103934665603);
    for (const unsigned char *p = (const unsigned char *)k1; *p; p++) h = (h ^ *p) * UINT64_C(1099511628211);
    h = (h ^ 0xFFu) * UINT64_C(1099511628211); /* separator: ("ab","c") != ("a","bc") */
    if (k2)
        for (const unsigned char *p = (const unsigned char *)k2; *p; p++) h = (h ^ *p) * UINT64_C(1099511628211);
    return h ^ (h >> 32);
}

static bool ix_key_eq(const ix_slot *sl, const char *k1, const char *k2) {
    return strcmp(sl->k1, k1) == 0 && (!k2 || strcmp(sl->k2, k2) == 0);
}

/* The hashes of one reminder's keys in the three tables, taken once: inject
 * prefetches the three slots together, so their misses overlap. */
typedef struct ix_hashes {
    uint64_t id, key, origin; /* key: 0 when the reminder has no dedupeKey */
} ix_hashes;

static void ix_hashes_of(ix_hashes *h, const char *id, const char *origin, const char *dedupe_key) {
    h->id = ix_hash(id, NULL);
    h->key = dedupe_key ? ix_hash(origin, dedupe_key) : 0;
    h->origin = ix_hash(origin, NULL);
}

static void ix_prefetch(const ix_table *t, uint64_t h) {
    if (t->cap) __builtin_prefetch(&t->slot[(uint32_t)h & (t->cap - 1)], 1);
}

/* The entry of (k1, k2) whose ix_hash is h, or NULL. */
static ix_slot *ix_find_h(ix_table *t, uint64_t h, const char *k1, const char *k2) {
    if (!t->cap) return NULL;
    uint64_t tag = h & IX_TAG;
    for (uint32_t i = (uint32_t)h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        uint64_t v = t->slot[i];
        if (v == IX_EMPTY) return NULL;
        if ((v & IX_TAG) == tag && ix_key_eq(&t->entry[(uint32_t)v], k1, k2)) return &t->entry[(uint32_t)v];
    }
}

static void ix_table_free(const quire_allocator *a, ix_table *t) {
    if (t->slot) q_free(a, t->slot, (size_t)t->cap * sizeof *t->slot);
    if (t->entry) q_free(a, t->entry, (size_t)(t->cap / 2) * sizeof *t->entry);
    t->slot = NULL;
    t->entry = NULL;
}

static bool ix_table_init(const quire_allocator *a, ix_table *t, uint32_t want) {
    uint32_t cap = 16;
    while (cap < want * 2 && cap < (UINT32_C(1) << 30)) cap *= 2;
    t->cap = cap;
    t->used = 0;
    t->slot = q_malloc(a, (size_t)cap * sizeof *t->slot);
    /* entries are written in order: pages past the last one in use are never touched */
    t->entry = q_malloc(a, (size_t)(cap / 2) * sizeof *t->entry);
    if (!t->slot || !t->entry) { ix_table_free(a, t); return false; }
    memset(t->slot, 0xFF, (size_t)cap * sizeof *t->slot);
    return true;
}

/* The entry of (k1, k2) (ix_hash h), created (empty chain) when absent; NULL
 * when the table is full (the caller rebuilds). */
static ix_slot *ix_slot_of(ix_table *t, uint64_t h, const char *k1, const char *k2) {
    uint64_t tag = h & IX_TAG;
    for (uint32_t i = (uint32_t)h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        uint64_t v = t->slot[i];
        if (v == IX_EMPTY) {
            if ((t->used + 1) * 2 > t->cap) return NULL;
            ix_slot *sl = &t->entry[t->used];
            sl->k1 = k1;
            sl->k2 = k2;
            sl->head = UINT32_MAX;
            t->slot[i] = tag | t->used++;
            return sl;
        }
        if ((v & IX_TAG) == tag && ix_key_eq(&t->entry[(uint32_t)v], k1, k2)) return &t->entry[(uint32_t)v];
    }
}

static void ix_free(quire_state *s) {
    qs_index *x = s->ix;
    if (!x) return;
    const quire_allocator *a = s->a;
    ix_table_free(a, &x->ids);
    ix_table_free(a, &x->keys);
    ix_table_free(a, &x->origins);
    if (x->chain_id) q_free(a, x->chain_id, (size_t)x->cappos * 4 * sizeof *x->chain_id);
    if (x->orig) q_free(a, x->orig, (size_t)x->caporig * sizeof *x->orig);
    q_free(a, x, sizeof *x);
    s->ix = NULL;
}

static bool ix_reserve_pos(quire_state *s, uint32_t need) {
    qs_index *x = s->ix;
    if (need <= x->cappos) return true;
    uint32_t cap = x->cappos ? x->cappos : 16;
    while (cap < need) cap *= 2;
    uint32_t *n = q_realloc(s->a, x->chain_id, (size_t)x->cappos * 4 * sizeof *n, (size_t)cap * 4 * sizeof *n);
    if (!n) return false;
    /* one block, four arrays of cap entries: move the later three up */
    memmove(n + 3 * (size_t)cap, n + 3 * (size_t)x->cappos, (size_t)x->cappos * sizeof *n);
    memmove(n + 2 * (size_t)cap, n + 2 * (size_t)x->cappos, (size_t)x->cappos * sizeof *n);
    memmove(n + 1 * (size_t)cap, n + 1 * (size_t)x->cappos, (size_t)x->cappos * sizeof *n);
    x->chain_id = n;
    x->chain_key = n + cap;
    x->onext = n + 2 * (size_t)cap;
    x->oidx = n + 3 * (size_t)cap;
    x->cappos = cap;
    return true;
}

/* The origin record of name (created when absent); UINT32_MAX on OOM. */
static uint32_t ix_origin_of(quire_state *s, const char *name, uint64_t h) {
    qs_index *x = s->ix;
    ix_slot *sl = ix_slot_of(&x->origins, h, name, NULL);
    if (!sl) return UINT32_MAX; /* never: the table is sized for every origin (see ix_add) */
    if (sl->head != UINT32_MAX) return sl->head;
    if (x->norig == x->caporig) {
        uint32_t cap = x->caporig ? x->caporig * 2 : 16;
        ix_origin *n = q_realloc(s->a, x->orig, (size_t)x->caporig * sizeof *n, (size_t)cap * sizeof *n);
        if (!n) return UINT32_MAX;
        x->orig = n;
        x->caporig = cap;
    }
    ix_origin *o = &x->orig[x->norig];
    o->name = name;
    o->nlive = 0;
    o->first = o->last = UINT32_MAX;
    sl->head = x->norig;
    return x->norig++;
}

static bool ix_build(quire_state *s);

/* Rebuilds a table that filled up (stale keys are left behind). */
static bool ix_grow_needed(const ix_table *t) { return (t->used + 1) * 2 > t->cap; }

/* Records live position pos, whose keys hash to *h, in the tables. */
static bool ix_add(quire_state *s, uint32_t pos, const ix_hashes *h) {
    qs_index *x = s->ix;
    if (ix_grow_needed(&x->ids) || ix_grow_needed(&x->keys) || ix_grow_needed(&x->origins)) {
        ix_free(s);
        return ix_build(s); /* includes pos (it is already in the array) */
    }
    if (!ix_reserve_pos(s, pos + 1)) return false;
    const qreminder *r = &s->rems[pos];
    ix_slot *sl = ix_slot_of(&x->ids, h->id, r->id, NULL);
    x->chain_id[pos] = sl->head;
    sl->head = pos;
    x->chain_key[pos] = UINT32_MAX;
    if (r->dedupe_key) {
        sl = ix_slot_of(&x->keys, h->key, r->origin, r->dedupe_key);
        x->chain_key[pos] = sl->head;
        sl->head = pos;
    }
    uint32_t oi = ix_origin_of(s, r->origin, h->origin);
    if (oi == UINT32_MAX) return false;
    ix_origin *o = &x->orig[oi];
    x->oidx[pos] = oi;
    x->onext[pos] = UINT32_MAX;
    if (o->last != UINT32_MAX && o->nlive) x->onext[o->last] = pos;
    else o->first = pos;
    o->last = pos;
    if (o->nlive++ == 0 && !is_host(r->origin)) x->live_origins++;
    return true;
}

static bool ix_build(quire_state *s) {
    qs_index *x = q_malloc(s->a, sizeof *x);
    if (!x) return false;
    memset(x, 0, sizeof *x);
    s->ix = x;
    uint32_t n = 2 * s->nrems + 16; /* room to double before the next rebuild */
    if (!ix_table_init(s->a, &x->ids, n) || !ix_table_init(s->a, &x->keys, n) ||
        !ix_table_init(s->a, &x->origins, n) || !ix_reserve_pos(s, s->caprems > n ? s->caprems : n)) {
        ix_free(s);
        return false;
    }
    /* keys hashed BUILD_AHEAD positions before their insert, their slots prefetched */
    enum { BUILD_AHEAD = 8 };
    ix_hashes ring[BUILD_AHEAD];
    for (uint32_t i = 0, ahead = 0; i < s->nrems; i++) {
        for (; ahead < s->nrems && ahead < i + BUILD_AHEAD; ahead++) {
            const qreminder *r = &s->rems[ahead];
            ix_hashes *h = &ring[ahead % BUILD_AHEAD];
            if (!is_live(r)) continue;
            ix_hashes_of(h, r->id, r->origin, r->dedupe_key);
            ix_prefetch(&x->ids, h->id);
            if (r->dedupe_key) ix_prefetch(&x->keys, h->key);
            ix_prefetch(&x->origins, h->origin);
        }
        if (is_live(&s->rems[i]) && !ix_add(s, i, &ring[i % BUILD_AHEAD])) { ix_free(s); return false; }
    }
    return true;
}

/* Position pos stops being live (dead or retired): its origin's count drops;
 * chains forget it lazily. */
static void ix_del(quire_state *s, uint32_t pos) {
    qs_index *x = s->ix;
    if (!x) return;
    ix_origin *o = &x->orig[x->oidx[pos]];
    if (o->nlive && --o->nlive == 0 && !is_host(o->name)) x->live_origins--;
}

/* Walks the chain at *head (through next[]), unlinking positions that are no
 * longer live; calls fn for each live one (newest first). */
typedef void (*ix_visit)(quire_state *s, uint32_t pos, void *arg);
static void ix_walk(quire_state *s, uint32_t *head, uint32_t *next, ix_visit fn, void *arg) {
    uint32_t *link = head;
    while (*link != UINT32_MAX) {
        uint32_t pos = *link;
        if (!is_live(&s->rems[pos])) { *link = next[pos]; continue; }
        fn(s, pos, arg);
        link = &next[pos];
    }
}

/* The oldest live position of origin record oi (UINT32_MAX when none). */
static uint32_t ix_oldest(quire_state *s, uint32_t oi) {
    qs_index *x = s->ix;
    ix_origin *o = &x->orig[oi];
    if (!o->nlive) return UINT32_MAX;
    while (o->first != UINT32_MAX && !is_live(&s->rems[o->first])) o->first = x->onext[o->first];
    return o->first;
}

void qs_settle(quire_state *s) {
    ix_free(s);
    if (!s->ndead) return;
    uint32_t o = 0;
    for (uint32_t i = 0; i < s->nrems; i++) {
        if (s->rems[i].dead) continue;
        if (o != i) s->rems[o] = s->rems[i];
        o++;
    }
    s->nrems = o;
    s->ndead = 0;
}

/* An expired or cleared reminder leaves the state, unless append_only
 * placement already put it into history (it has an anchor): then it is
 * retired and stays, rendered where it was, until the next compaction.
 * Advances *i past the reminder when it stays. */
static void retire_or_remove(quire_state *s, uint32_t *i, int64_t turn) {
    qreminder *r = &s->rems[*i];
    if (r->anchor_msg != UINT32_MAX) {
        r->retired_at_turn = turn > 0 ? turn : 1;
        (*i)++;
    } else {
        rems_remove(s, *i);
    }
}

static uint64_t name_hash(const char *p, size_t n) {
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    return h ^ (h >> 32);
}

static bool srv_eq(const qserver *sv, const char *name, size_t len) {
    return strncmp(sv->name, name, len) == 0 && sv->name[len] == '\0';
}

/* A slot of the server table: the upper half of the name's hash (checked
 * before the name is read: a probe past another server then touches no
 * other memory) and the server's index. */
#define SRV_EMPTY UINT64_MAX
static uint64_t srv_entry(uint64_t h, uint32_t k) { return (h & UINT64_C(0xFFFFFFFF00000000)) | k; }

/* (Re)builds the server table with room for twice the servers. */
static bool srv_rehash(quire_state *s, uint32_t want) {
    uint32_t cap = 16;
    while (cap < want * 2) cap *= 2;
    uint64_t *t = q_malloc(s->a, (size_t)cap * sizeof *t);
    if (!t) return false;
    for (uint32_t i = 0; i < cap; i++) t[i] = SRV_EMPTY;
    for (uint32_t k = 0; k < s->nservers; k++) {
        const char *nm = s->servers[k].name;
        uint64_t h = name_hash(nm, strlen(nm));
        uint32_t i = (uint32_t)h & (cap - 1);
        while (t[i] != SRV_EMPTY) i = (i + 1) & (cap - 1);
        t[i] = srv_entry(h, k);
    }
    if (s->srv_slot) q_free(s->a, s->srv_slot, (size_t)s->srv_cap * sizeof *s->srv_slot);
    s->srv_slot = t;
    s->srv_cap = cap;
    return true;
}

/* Room for want servers: the array and the table sized once (a state file
 * names its servers up front), so loading grows neither. false on OOM. */
static bool srv_reserve(quire_state *s, uint32_t want) {
    if (want > s->capservers) {
        qserver *n = q_realloc(s->a, s->servers, (size_t)s->capservers * sizeof *n, (size_t)want * sizeof *n);
        if (!n) return false;
        s->servers = n;
        s->capservers = want;
    }
    return (s->srv_slot && (uint64_t)want * 2 <= s->srv_cap) || srv_rehash(s, want);
}

/* Starts loading the table slot of a name hashed h (see srv_lookup). */
static void srv_prefetch(const quire_state *s, uint64_t h) {
    if (s->srv_slot) __builtin_prefetch(&s->srv_slot[(uint32_t)h & (s->srv_cap - 1)], 1);
}

/* qs_server with the name's hash (name_hash) already computed; owned: name
 * already lives in s's arena, NUL-terminated (kept, not copied). */
static qserver *srv_lookup(quire_state *s, const char *name, size_t len, uint64_t h, bool create, bool owned) {
    if (!s->srv_slot || (s->nservers + 1) * 2 > s->srv_cap) {
        if (!srv_rehash(s, s->nservers + 1)) {
            /* out of memory for the table: look through the list */
            for (uint32_t i = 0; i < s->nservers; i++)
                if (srv_eq(&s->servers[i], name, len)) return &s->servers[i];
            return NULL;
        }
    }
    uint64_t tag = srv_entry(h, 0);
    uint32_t i = (uint32_t)h & (s->srv_cap - 1);
    for (; s->srv_slot[i] != SRV_EMPTY; i = (i + 1) & (s->srv_cap - 1)) {
        uint64_t v = s->srv_slot[i];
        if ((v & UINT64_C(0xFFFFFFFF00000000)) != tag) continue;
        qserver *sv = &s->servers[(uint32_t)v];
        if (srv_eq(sv, name, len)) return sv;
    }
    if (!create) return NULL;
    if (s->nservers == s->capservers) {
        uint32_t cap = s->capservers ? s->capservers * 2 : 4;
        qserver *n = q_realloc(s->a, s->servers, (size_t)s->capservers * sizeof *n, (size_t)cap * sizeof *n);
        if (!n) return NULL;
        s->servers = n;
        s->capservers = cap;
    }
    const char *nm = owned ? name : qarena_strndup(&s->ar, name, len);
    if (!nm) return NULL;
    qserver *sv = &s->servers[s->nservers];
    memset(sv, 0, sizeof *sv);
    sv->name = nm;
    s->srv_slot[i] = srv_entry(h, s->nservers++);
    return sv;
}

/* Server lookup by name through a hash table (10^5 servers stay linear). */
qserver *qs_server(quire_state *s, const char *name, size_t len, bool create) {
    return srv_lookup(s, name, len, name_hash(name, len), create, false);
}

bool qs_sub_has(const qserver *sv, const char *uri, size_t len) {
    for (uint32_t i = 0; i < sv->nsubs; i++)
        if (strncmp(sv->subs[i], uri, len) == 0 && sv->subs[i][len] == '\0') return true;
    return false;
}

static bool listen_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

bool qs_sub_add(quire_state *s, qserver *sv, const char *uri, size_t len, const char *listen) {
    for (uint32_t i = 0; i < sv->nsubs; i++)
        if (strncmp(sv->subs[i], uri, len) == 0 && sv->subs[i][len] == '\0' && listen_eq(sv->sub_listen[i], listen))
            return true;
    if (sv->nsubs == sv->capsubs) {
        /* the arrays live in the arena: grown copies leave the old ones to the next clone */
        uint32_t cap = sv->capsubs ? sv->capsubs * 2 : 4;
        const char **n = qarena_alloc(&s->ar, (size_t)cap * sizeof *n);
        const char **nl = qarena_alloc(&s->ar, (size_t)cap * sizeof *nl);
        if (!n || !nl) return false;
        if (sv->nsubs) {
            memcpy(n, sv->subs, (size_t)sv->nsubs * sizeof *n);
            memcpy(nl, sv->sub_listen, (size_t)sv->nsubs * sizeof *nl);
        }
        sv->subs = n;
        sv->sub_listen = nl;
        sv->capsubs = cap;
    }
    char *c = qarena_strndup(&s->ar, uri, len);
    char *l = listen ? qarena_strndup(&s->ar, listen, strlen(listen)) : NULL;
    if (!c || (listen && !l)) return false;
    sv->subs[sv->nsubs] = c;
    sv->sub_listen[sv->nsubs++] = l;
    return true;
}

/* Keeps the entries for which drop() is false, in order; returns the count removed. */
static uint32_t sub_filter(qserver *sv, const char *uri, size_t len, const char *listen) {
    uint32_t o = 0, removed = 0;
    for (uint32_t i = 0; i < sv->nsubs; i++) {
        bool drop = uri ? strncmp(sv->subs[i], uri, len) == 0 && sv->subs[i][len] == '\0'
                        : listen && sv->sub_listen[i] && strcmp(sv->sub_listen[i], listen) == 0;
        if (drop) { removed++; continue; }
        sv->subs[o] = sv->subs[i];
        sv->sub_listen[o++] = sv->sub_listen[i];
    }
    sv->nsubs = o;
    return removed;
}

void qs_sub_remove(qserver *sv, const char *uri, size_t len) { (void)sub_filter(sv, uri, len, NULL); }

uint32_t qs_sub_end_listen(qserver *sv, const char *listen) { return sub_filter(sv, NULL, 0, listen); }

void qs_sub_write_uris(qw *w, const qserver *sv) {
    qw_arr_begin(w);
    for (uint32_t k = 0; sv && k < sv->nsubs; k++) {
        bool seen = false;
        for (uint32_t j = 0; j < k && !seen; j++) seen = strcmp(sv->subs[j], sv->subs[k]) == 0;
        if (!seen) qw_strz(w, sv->subs[k]);
    }
    qw_arr_end(w);
}

quire_state *qs_clone(const quire_state *s) {
    quire_state *n = qs_new(s->a, NULL);
    if (!n) return NULL;
    n->turn = s->turn;
    n->seq = s->seq;
    n->lim = s->lim;
    bool ok = qs_set_session_id(n, s->session_id, strlen(s->session_id));
    for (uint32_t i = 0; ok && i < s->nservers; i++) {
        const qserver *src = &s->servers[i];
        qserver *d = qs_server(n, src->name, strlen(src->name), true);
        if (!d) { ok = false; break; }
        const char *nm = d->name;
        *d = *src;
        d->name = nm;
        d->subs = d->sub_listen = NULL;
        d->nsubs = d->capsubs = 0;
        for (uint32_t k = 0; ok && k < src->nsubs; k++)
            ok = qs_sub_add(n, d, src->subs[k], strlen(src->subs[k]), src->sub_listen[k]);
    }
    if (ok && !rems_reserve(n, s->nrems)) ok = false;
    for (uint32_t i = 0; ok && i < s->nrems; i++)
        if (!s->rems[i].dead) ok = rems_push(n, &s->rems[i]);
    if (!ok) { quire_state_free(n); return NULL; }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Inject, dedupe, budgets                                                   */
/* ------------------------------------------------------------------------ */

static bool streq0(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Inject's removal: dedupe removes (dead), the per-origin budget retires an
 * anchored one (it stays in append_only history) and removes the rest. */
static void inject_remove(quire_state *s, uint32_t pos, bool retire) {
    qreminder *r = &s->rems[pos];
    ix_del(s, pos);
    if (retire && r->anchor_msg != UINT32_MAX) {
        r->retired_at_turn = s->turn > 0 ? s->turn : 1;
    } else {
        r->dead = true;
        s->ndead++;
    }
}

typedef struct posvec {
    uint32_t *p;
    uint32_t n, cap;
    const quire_allocator *a;
    bool oom;
} posvec;

static void posvec_push(posvec *v, uint32_t pos) {
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 8;
        uint32_t *n = q_realloc(v->a, v->p, (size_t)v->cap * sizeof *n, (size_t)cap * sizeof *n);
        if (!n) { v->oom = true; return; }
        v->p = n;
        v->cap = cap;
    }
    v->p[v->n++] = pos;
}

static void collect_pos(quire_state *s, uint32_t pos, void *arg) {
    (void)s;
    posvec_push(arg, pos);
}

typedef struct id_clash {
    const char *origin;
    uint32_t found;
} id_clash;

static void find_clash(quire_state *s, uint32_t pos, void *arg) {
    id_clash *c = arg;
    if (c->found == UINT32_MAX && !streq0(s->rems[pos].origin, c->origin)) c->found = pos;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A reminder in its MCP server's pending queue: pushed by the server (source
 * bridge, origin mcp:<server>), renderable, not rendered yet. */
static bool pending_counts(const qreminder *r) {
    return r->source == QS_BRIDGE && r->origin && strncmp(r->origin, "mcp:", 4) == 0 && r->mode != QM_AUDIT_ONLY &&
           r->fired_at_turn == 0;
}

quire_status qs_inject(quire_state *s, const qreminder *r, qbuf *events, uint32_t *deduped, const char **id_out,
                       quire_error *err) {
    if (deduped) *deduped = 0;
    if (id_out) *id_out = NULL;
    const char *origin = r->origin ? r->origin : "host";
    bool host = is_host(origin);
    if (!s->ix && !ix_build(s)) return q_oom(err);
    qs_index *x = s->ix;
    /* the id first (derived when not given), then this reminder's slots in
     * the three tables, loaded together so their misses overlap */
    char idbuf[37];
    const char *id = r->id;
    if (!id) {
        if (!qrem_derive_id(s->a, s->session_id, s->seq + 1, r->body, r->body_len, idbuf)) return q_oom(err);
        id = idbuf;
    }
    ix_hashes hs;
    ix_hashes_of(&hs, id, origin, r->dedupe_key);
    ix_prefetch(&x->ids, hs.id);
    if (r->dedupe_key) ix_prefetch(&x->keys, hs.key);
    ix_prefetch(&x->origins, hs.origin);
    /* an explicit id may only replace a reminder of the same origin (or any, for the host) */
    if (r->id && !host) {
        ix_slot *sl = ix_find_h(&x->ids, hs.id, r->id, NULL);
        id_clash c = {origin, UINT32_MAX};
        if (sl) ix_walk(s, &sl->head, x->chain_id, find_clash, &c);
        if (c.found != UINT32_MAX) {
            quire_status st = q_err(err, QUIRE_E_INVALID,
                                    "id \"%.100s\" is used by a live reminder of another origin (%.100s)",
                                    r->id, s->rems[c.found].origin);
            if (err) snprintf(err->field, sizeof err->field, "id");
            return st;
        }
    }
    quire_reminder_limits lim = qs_limits(s);
    /* origins per state: a new origin past the limit is turned away at the door */
    if (!host) {
        ix_slot *sl = ix_find_h(&x->origins, hs.origin, origin, NULL);
        bool known = sl && x->orig[sl->head].nlive > 0;
        if (!known && x->live_origins >= lim.max_origins) {
            char detail[300];
            snprintf(detail, sizeof detail,
                     "%u origins already have live reminders (limit %u); a reminder from a new origin %.120s is "
                     "dropped",
                     x->live_origins, lim.max_origins, origin);
            qev_reminder_dropped(events, r->id, "budget", detail, origin, "QUIRE_E_BUDGET", NULL);
            quire_status st = q_err(err, QUIRE_E_BUDGET, "%s", detail);
            if (err) snprintf(err->field, sizeof err->field, "origin");
            return st;
        }
    }
    qreminder nr = *r;
    nr.origin = origin;
    nr.dead = false;
    nr.seq = s->seq + 1;
    nr.id = id;
    if (!rems_reserve(s, s->nrems + 1)) return q_oom(err);
    /* replaced reminders: same id, or same dedupeKey in scope */
    posvec v = {NULL, 0, 0, s->a, false};
    ix_slot *sl = ix_find_h(&x->ids, hs.id, nr.id, NULL);
    if (sl) ix_walk(s, &sl->head, x->chain_id, collect_pos, &v);
    if (nr.dedupe_key && !host) {
        sl = ix_find_h(&x->keys, hs.key, origin, nr.dedupe_key);
        if (sl) ix_walk(s, &sl->head, x->chain_key, collect_pos, &v);
    } else if (nr.dedupe_key) {
        /* the host's key reaches every origin: one pass (the host is trusted) */
        for (uint32_t i = 0; i < s->nrems; i++)
            if (is_live(&s->rems[i]) && streq0(s->rems[i].dedupe_key, nr.dedupe_key)) posvec_push(&v, i);
    }
    if (v.oom) { q_free(s->a, v.p, (size_t)v.cap * sizeof *v.p); return q_oom(err); }
    /* injection order, each once (same id and same key may name one reminder) */
    if (v.n > 1) qsort(v.p, v.n, sizeof *v.p, cmp_u32);
    const char **dropped = v.n ? q_malloc(s->a, (size_t)v.n * sizeof *dropped) : NULL;
    if (v.n && !dropped) { q_free(s->a, v.p, (size_t)v.cap * sizeof *v.p); return q_oom(err); }
    s->seq = nr.seq;
    uint32_t ndropped = 0;
    for (uint32_t i = 0; i < v.n; i++) {
        if (i && v.p[i] == v.p[i - 1]) continue;
        dropped[ndropped++] = s->rems[v.p[i]].id;
        inject_remove(s, v.p[i], false);
    }
    if (ndropped) qev_reminder_deduped(events, nr.id, nr.dedupe_key, dropped, ndropped);
    if (dropped) q_free(s->a, dropped, (size_t)v.n * sizeof *dropped);
    q_free(s->a, v.p, (size_t)v.cap * sizeof *v.p);
    if (deduped) *deduped = ndropped;
    /* per-server pending queue: what an MCP server pushed and no turn has
     * rendered yet is bounded; the oldest pending one makes room (DESIGN 11) */
    sl = ix_find_h(&x->origins, hs.origin, origin, NULL);
    if (sl && pending_counts(&nr)) {
        uint32_t oi = sl->head;
        for (;;) {
            uint32_t npend = 0, oldest = UINT32_MAX;
            for (uint32_t p = ix_oldest(s, oi); p != UINT32_MAX; p = x->onext[p]) {
                if (!is_live(&s->rems[p]) || !pending_counts(&s->rems[p])) continue;
                if (oldest == UINT32_MAX) oldest = p;
                npend++;
            }
            if (npend < lim.max_pending_per_server || oldest == UINT32_MAX) break;
            char detail[240];
            snprintf(detail, sizeof detail,
                     "MCP server %.120s already has %u reminders waiting for a turn (limit %u); the oldest is dropped",
                     origin + 4, npend, lim.max_pending_per_server);
            qev_reminder_dropped(events, s->rems[oldest].id, "queue_full", detail, origin, NULL, NULL);
            inject_remove(s, oldest, true);
        }
    }
    /* per-origin budget: make room by dropping the oldest of this origin */
    if (sl) {
        uint32_t oi = sl->head;
        while (x->orig[oi].nlive >= lim.max_live_per_origin) {
            uint32_t oldest = ix_oldest(s, oi);
            if (oldest == UINT32_MAX) break;
            char detail[200];
            snprintf(detail, sizeof detail,
                     "origin %.120s already has %u live reminders (limit %u); the oldest is dropped", origin,
                     x->orig[oi].nlive, lim.max_live_per_origin);
            qev_reminder_dropped(events, s->rems[oldest].id, "budget", detail, origin, NULL, NULL);
            inject_remove(s, oldest, true);
        }
    }
    if (!rems_push(s, &nr)) return q_oom(err);
    if (!ix_add(s, s->nrems - 1, &hs)) { ix_free(s); return q_oom(err); }
    qreminder *added = &s->rems[s->nrems - 1];
    if (added->mode == QM_AUDIT_ONLY) qev_reminder_audit(events, added);
    if (id_out) *id_out = added->id;
    /* compact once the dead outnumber the living (amortised constant time) */
    if (s->ndead > 64 && s->ndead > s->nrems / 2) qs_settle(s);
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Clear                                                                     */
/* ------------------------------------------------------------------------ */

static bool has_tag(const qreminder *r, const char *tag) {
    for (uint32_t i = 0; i < r->ntags; i++)
        if (strcmp(r->tags[i], tag) == 0) return true;
    return false;
}

uint32_t qs_clear(quire_state *s, const qs_selector *sel, qbuf *events) {
    if (!sel->id && !sel->tag && !sel->dedupe_key && !sel->origin) return 0;
    qs_settle(s);
    uint32_t removed = 0;
    for (uint32_t i = 0; i < s->nrems;) {
        const qreminder *r = &s->rems[i];
        bool match = is_live(r) && (!sel->id || streq0(r->id, sel->id)) && (!sel->tag || has_tag(r, sel->tag)) &&
                     (!sel->dedupe_key || streq0(r->dedupe_key, sel->dedupe_key)) &&
                     (!sel->origin || streq0(r->origin, sel->origin));
        if (match) {
            qev_reminder_expired(events, r->id, "cleared", s->turn);
            retire_or_remove(s, &i, s->turn);
            removed++;
        } else {
            i++;
        }
    }
    return removed;
}

/* ------------------------------------------------------------------------ */
/* Render turn: selection under the per-turn budget, after-render update      */
/* ------------------------------------------------------------------------ */

/* The per-turn budget (docs/reminders.md section 6). sel[i] for every
 * reminder i of s:
 *   SEL_NONE   not a candidate (audit_only, retired)
 *   SEL_KEEP   rendered in the next turn
 *   SEL_DEFER  cut by the budget this turn, kept in the state for a later turn
 *   SEL_DROP   cut by the budget and removed (reminder_dropped(budget))
 * Rule: the host's reminders (origin "host") first, newest first, within the
 * budget. The rest of the budget is shared max-min fairly between the other
 * origins: an origin whose bytes fit an equal share of what is left keeps all
 * of them; the share of the origins that do not fit is the equal split of the
 * rest. Such an origin keeps its newest reminders that fit its share. Room
 * left over goes, one reminder at a time, to the cut origins in a rotation
 * that starts at (turn mod count), the origin with strictly the most bytes
 * last. A cut reminder is dropped when its origin is the one with strictly
 * the most bytes this turn (it caused the overflow) or when it alone exceeds
 * the whole budget; otherwise it is deferred. So one origin's bytes never
 * remove another origin's reminder. O(n log n); pure in the state. */
enum { SEL_NONE, SEL_KEEP, SEL_DEFER, SEL_DROP };

typedef struct sel_group {
    const char *origin;
    uint64_t bytes;   /* candidate bytes */
    uint64_t kept;    /* bytes kept so far */
    uint32_t first;   /* index into order[] of its first (oldest) candidate */
    uint32_t count;
    uint32_t next_cut; /* order[] index (+1) of the newest cut candidate still to try; 0 = none */
    bool host;
} sel_group;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool turn_selection(const quire_state *s, uint8_t *sel) {
    quire_reminder_limits lim = qs_limits(s);
    const uint64_t budget = lim.turn_budget_bytes;
    uint64_t total = 0;
    uint32_t ncand = 0;
    for (uint32_t i = 0; i < s->nrems; i++) {
        bool c = s->rems[i].mode != QM_AUDIT_ONLY && is_live(&s->rems[i]);
        sel[i] = c ? SEL_KEEP : SEL_NONE;
        if (c) { total += s->rems[i].body_len; ncand++; }
    }
    if (total <= budget) return true;
    const quire_allocator *a = s->a;
    /* origin of each candidate: an open-addressing table of group indices */
    uint32_t cap = 16;
    while (cap < ncand * 2) cap *= 2;
    uint32_t *tab = q_malloc(a, (size_t)cap * sizeof *tab);
    sel_group *g = q_malloc(a, (size_t)ncand * sizeof *g);
    uint64_t *key = q_malloc(a, (size_t)ncand * sizeof *key); /* (group << 32) | index: grouped, in order */
    uint32_t *order = q_malloc(a, (size_t)ncand * sizeof *order);
    uint64_t *byw = q_malloc(a, (size_t)ncand * sizeof *byw);
    bool ok = tab && g && key && order && byw;
    uint32_t ng = 0;
    if (ok) {
        for (uint32_t i = 0; i < cap; i++) tab[i] = UINT32_MAX;
        uint32_t k = 0;
        for (uint32_t i = 0; i < s->nrems; i++) {
            if (sel[i] != SEL_KEEP) continue;
            const char *o = s->rems[i].origin ? s->rems[i].origin : "host";
            uint32_t h = (uint32_t)name_hash(o, strlen(o)) & (cap - 1);
            while (tab[h] != UINT32_MAX && strcmp(g[tab[h]].origin, o) != 0) h = (h + 1) & (cap - 1);
            if (tab[h] == UINT32_MAX) {
                tab[h] = ng;
                memset(&g[ng], 0, sizeof g[ng]);
                g[ng].origin = o;
                g[ng].host = is_host(o);
                ng++;
            }
            g[tab[h]].bytes += s->rems[i].body_len;
            g[tab[h]].count++;
            key[k++] = ((uint64_t)tab[h] << 32) | i;
        }
        qsort(key, ncand, sizeof *key, cmp_u64);
        for (uint32_t k2 = 0; k2 < ncand; k2++) {
            order[k2] = (uint32_t)key[k2];
            uint32_t gi = (uint32_t)(key[k2] >> 32);
            if (k2 == 0 || (uint32_t)(key[k2 - 1] >> 32) != gi) g[gi].first = k2;
        }
        for (uint32_t i = 0; i < ncand; i++) sel[order[i]] = SEL_DEFER; /* decided below */
    }
    if (!ok) {
        if (tab) q_free(a, tab, (size_t)cap * sizeof *tab);
        if (g) q_free(a, g, (size_t)ncand * sizeof *g);
        if (key) q_free(a, key, (size_t)ncand * sizeof *key);
        if (order) q_free(a, order, (size_t)ncand * sizeof *order);
        if (byw) q_free(a, byw, (size_t)ncand * sizeof *byw);
        return false;
    }
    /* keeps the newest reminders of group gi that fit allowance; remembers where the cut starts */
#define KEEP_NEWEST(gi, allowance)                                                             \
    do {                                                                                       \
        sel_group *G = &g[gi];                                                                 \
        uint32_t j = G->first + G->count;                                                      \
        while (j > G->first) {                                                                 \
            uint32_t ri = order[j - 1];                                                        \
            if (G->kept + s->rems[ri].body_len > (allowance)) break;                           \
            G->kept += s->rems[ri].body_len;                                                   \
            sel[ri] = SEL_KEEP;                                                                \
            j--;                                                                               \
        }                                                                                      \
        G->next_cut = j > G->first ? j : 0;                                                    \
    } while (0)
    uint64_t room = budget;
    for (uint32_t gi = 0; gi < ng; gi++)
        if (g[gi].host) { KEEP_NEWEST(gi, budget); room -= g[gi].kept; }
    /* max-min fair share of the rest between the other origins */
    uint32_t nw = 0;
    for (uint32_t gi = 0; gi < ng; gi++)
        if (!g[gi].host) byw[nw++] = (g[gi].bytes << 24) | gi; /* bytes < 2^40: 16 MiB-capped bodies x 2^24 */
    qsort(byw, nw, sizeof *byw, cmp_u64);
    uint64_t left = room;
    uint32_t k = 0;
    for (; k < nw; k++) {
        uint32_t gi = (uint32_t)(byw[k] & 0xFFFFFFu);
        if (g[gi].bytes * (nw - k) > left) break;
        KEEP_NEWEST(gi, g[gi].bytes);
        left -= g[gi].bytes;
    }
    uint32_t ncut = nw - k;
    uint32_t worst = UINT32_MAX; /* the origin with strictly the most bytes, if any */
    if (ncut) {
        uint64_t share = left / ncut;
        for (uint32_t q = k; q < nw; q++) {
            uint32_t gi = (uint32_t)(byw[q] & 0xFFFFFFu);
            KEEP_NEWEST(gi, share);
            left -= g[gi].kept;
        }
        uint32_t top = (uint32_t)(byw[nw - 1] & 0xFFFFFFu);
        if (ncut == 1 || g[(uint32_t)(byw[nw - 2] & 0xFFFFFFu)].bytes < g[top].bytes) worst = top;
        /* leftover room: a rotation over the cut origins in injection order of
         * their oldest reminder, starting at turn mod count, the worst last */
        uint32_t m = 0;
        for (uint32_t gi = 0; gi < ng; gi++)
            if (!g[gi].host && g[gi].next_cut && gi != worst) byw[m++] = ((uint64_t)order[g[gi].first] << 24) | gi;
        qsort(byw, m, sizeof *byw, cmp_u64);
        uint32_t start = m ? (uint32_t)((uint64_t)(s->turn + 1) % m) : 0;
        bool progress = true;
        while (progress && left) {
            progress = false;
            for (uint32_t q = 0; q < m + 1; q++) {
                uint32_t gi = q < m ? (uint32_t)(byw[(start + q) % m] & 0xFFFFFFu) : worst;
                if (gi == UINT32_MAX) continue;
                sel_group *G = &g[gi];
                if (!G->next_cut) continue;
                uint32_t ri = order[G->next_cut - 1];
                if (s->rems[ri].body_len <= left) {
                    sel[ri] = SEL_KEEP;
                    left -= s->rems[ri].body_len;
                    progress = true;
                }
                G->next_cut = G->next_cut - 1 > G->first ? G->next_cut - 1 : 0;
            }
        }
    }
#undef KEEP_NEWEST
    for (uint32_t gi = 0; gi < ng; gi++) {
        bool drops = g[gi].host || gi == worst; /* the host's overflow is its own; so is the worst's */
        for (uint32_t j = g[gi].first; j < g[gi].first + g[gi].count; j++) {
            uint32_t ri = order[j];
            if (sel[ri] == SEL_DEFER && (drops || s->rems[ri].body_len > budget)) sel[ri] = SEL_DROP;
        }
    }
    q_free(a, tab, (size_t)cap * sizeof *tab);
    q_free(a, g, (size_t)ncand * sizeof *g);
    q_free(a, key, (size_t)ncand * sizeof *key);
    q_free(a, order, (size_t)ncand * sizeof *order);
    q_free(a, byw, (size_t)ncand * sizeof *byw);
    return true;
}

const qreminder **qs_live_for_turn(const quire_state *s, qarena *ar, uint32_t *n) {
    *n = 0;
    const qreminder **out = qarena_alloc(ar, (size_t)(s->nrems + 1) * sizeof *out);
    if (!out) return NULL;
    if (!s->nrems) return out;
    uint8_t *sel = qarena_alloc(ar, (size_t)s->nrems);
    if (!sel || !turn_selection(s, sel)) return NULL;
    for (uint32_t i = 0; i < s->nrems; i++)
        if (sel[i] == SEL_KEEP) out[(*n)++] = &s->rems[i];
    return out;
}

const qreminder **qs_retired_anchored(const quire_state *s, qarena *ar, uint32_t *n) {
    *n = 0;
    const qreminder **out = qarena_alloc(ar, (size_t)(s->nrems + 1) * sizeof *out);
    if (!out) return NULL;
    for (uint32_t i = 0; i < s->nrems; i++)
        if (!s->rems[i].dead && !is_live(&s->rems[i]) && s->rems[i].anchor_msg != UINT32_MAX)
            out[(*n)++] = &s->rems[i];
    return out;
}

/* Removes (or retires, when anchored in append_only history) reminder i in
 * a pass that compacts once at the end (qs_settle). */
static void after_remove(quire_state *s, uint32_t i, int64_t t) {
    qreminder *r = &s->rems[i];
    if (r->anchor_msg != UINT32_MAX) {
        r->retired_at_turn = t > 0 ? t : 1;
    } else {
        r->dead = true;
        s->ndead++;
    }
}

void qs_after_render(quire_state *s, qbuf *events) {
    qs_settle(s);
    int64_t t = s->turn + 1;
    uint32_t n0 = s->nrems;
    uint8_t small[64];
    uint8_t *sel = n0 <= sizeof small ? small : q_malloc(s->a, n0);
    if (n0 && (!sel || !turn_selection(s, sel))) {
        if (sel && sel != small) q_free(s->a, sel, n0);
        if (events) events->oom = true; /* reported by the caller's sticky-flag check */
        s->turn = t;
        return;
    }
    quire_reminder_limits lim = qs_limits(s);
    for (uint32_t i = 0; i < n0; i++)
        if (sel[i] == SEL_KEEP && !s->rems[i].fired_at_turn) s->rems[i].fired_at_turn = t;
    /* per-turn budget drops, in injection order */
    for (uint32_t i = 0; i < n0; i++) {
        if (sel[i] != SEL_DROP) continue;
        char detail[420];
        snprintf(detail, sizeof detail,
                 "reminder bodies to render in turn %lld exceed the per-turn budget of %u bytes; origin %.80s sent "
                 "the most bytes (or this body alone exceeds the budget): its reminders that do not fit its share "
                 "are dropped, oldest first",
                 (long long)t, lim.turn_budget_bytes, s->rems[i].origin);
        qev_reminder_dropped(events, s->rems[i].id, "budget", detail, s->rems[i].origin, NULL, NULL);
        after_remove(s, i, t);
    }
    s->turn = t;
    /* TTLs: a reminder deferred by the budget was not seen, so it keeps its turn */
    for (uint32_t i = 0; i < n0; i++) {
        qreminder *r = &s->rems[i];
        if (sel[i] == SEL_DEFER || !is_live(r)) continue;
        if (r->ttl_remaining > 0 && --r->ttl_remaining == 0) {
            qev_reminder_expired(events, r->id, "ttl_expired", t);
            after_remove(s, i, t);
        }
    }
    if (sel != small) q_free(s->a, sel, n0);
    qs_settle(s);
}

void qs_after_compact(quire_state *s, qbuf *events, uint32_t *kept, uint32_t *removed) {
    qs_settle(s);
    uint32_t k = 0, rm = 0;
    for (uint32_t i = 0; i < s->nrems;) {
        if (!is_live(&s->rems[i])) { rems_remove(s, i); continue; } /* expired already: history ends here */
        if (s->rems[i].preserve_on_compact) {
            s->rems[i].anchor_msg = UINT32_MAX; /* the transcript changed: placed afresh */
            k++;
            i++;
            continue;
        }
        qev_reminder_expired(events, s->rems[i].id, "compacted_out", s->turn);
        rems_remove(s, i);
        rm++;
    }
    if (kept) *kept = k;
    if (removed) *removed = rm;
}

/* ------------------------------------------------------------------------ */
/* Propagation                                                               */
/* ------------------------------------------------------------------------ */

quire_state *qs_propagate(const quire_state *parent, const char *agent_id, const char *child_session_id) {
    quire_state *c = qs_new(parent->a, child_session_id ? child_session_id : parent->session_id);
    if (!c) return NULL;
    c->lim = parent->lim;
    /* the child's counter continues the parent's, so an id the child derives
     * later can never repeat an inherited one (same session id by default) */
    c->seq = parent->seq;
    for (uint32_t i = 0; i < parent->nrems; i++) {
        const qreminder *r = &parent->rems[i];
        if (!is_live(r)) continue;
        bool copy = r->propagate == QP_ALL || (r->propagate == QP_SESSION && r->source != QS_INHERITED);
        if (!copy) continue;
        qreminder nr = *r;
        nr.source = QS_INHERITED;
        if (!nr.originating_agent_id && agent_id && *agent_id) nr.originating_agent_id = agent_id;
        nr.fired_at_turn = 0;
        nr.ttl_remaining = nr.ttl_turns;
        nr.anchor_msg = UINT32_MAX;
        if (!rems_push(c, &nr)) { quire_state_free(c); return NULL; }
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* quire.state/1: parse and write                                            */
/* ------------------------------------------------------------------------ */

static quire_status sfail(quire_error *err, quire_status code, const qj_doc *d, uint32_t node, const char *ptr,
                          const char *field, const char *msg) {
    return qrem_fail(err, code, field, node == QJ_NONE ? 0 : qj_offset(d, node), ptr, "%s", msg);
}

static quire_status unknown_key(quire_error *err, const qj_doc *d, uint32_t k, const char *ptr) {
    const qj_node *kn = qj_at(d, k);
    char field[64], p[512];
    snprintf(field, sizeof field, "%.*s", kn->len > 63 ? 63 : (int)kn->len, kn->p);
    snprintf(p, sizeof p, "%s", ptr);
    q_ptr_push_key(p, sizeof p, field, strlen(field));
    return qrem_fail(err, QUIRE_E_REMINDER_UNKNOWN_FIELD, field, qj_offset(d, k), p, "unknown field \"%s\"", field);
}

static quire_status dup_check(quire_error *err, const qj_doc *d, uint32_t obj, const char *ptr) {
    uint32_t dup = qj_find_dup_key(d, obj);
    if (dup == QJ_NONE) return QUIRE_OK;
    const qj_node *kn = qj_at(d, dup);
    char field[64];
    snprintf(field, sizeof field, "%.*s", kn->len > 63 ? 63 : (int)kn->len, kn->p);
    return qrem_fail(err, QUIRE_E_SCHEMA, field, qj_offset(d, dup), ptr, "duplicate key \"%s\"", field);
}

static quire_status want_obj(quire_error *err, const qj_doc *d, uint32_t v, const char *ptr, const char *field) {
    if (qj_type_of(d, v) == QJ_OBJECT) return dup_check(err, d, v, ptr);
    char m[120];
    snprintf(m, sizeof m, "%s must be an object, got %s", field, qj_type_name(qj_type_of(d, v)));
    return sfail(err, QUIRE_E_REMINDER_TYPE, d, v, ptr, field, m);
}

static quire_status want_count(quire_error *err, const qj_doc *d, uint32_t v, const char *ptr, const char *field,
                               int64_t min, int64_t max, int64_t *out) {
    int64_t x = 0;
    if (qj_type_of(d, v) != QJ_NUMBER || !qj_int64(d, v, &x) || x < min || x > max) {
        char m[160];
        snprintf(m, sizeof m, "%s must be an integer from %lld to %lld", field, (long long)min, (long long)max);
        return sfail(err, QUIRE_E_REMINDER_TYPE, d, v, ptr, field, m);
    }
    *out = x;
    return QUIRE_OK;
}

/* The members of server record v (an object, duplicate keys checked) into
 * sv; ptr (512 bytes) holds the record's pointer. */
static quire_status server_fields(quire_state *s, const qj_doc *d, uint32_t v, qserver *sv, char *ptr,
                                  quire_error *err) {
    quire_status st = QUIRE_OK;
    enum { ptr_cap = 512 };
    size_t base = strlen(ptr);
    for (uint32_t k2 = v + 1; k2 < qj_at(d, v)->end; k2 = qj_next(d, k2 + 1)) {
        uint32_t v2 = k2 + 1;
        ptr[base] = '\0';
        if (qj_str_eq(d, k2, "reminders")) {
            q_ptr_push_key(ptr, ptr_cap, "reminders", 9);
            if ((st = want_obj(err, d, v2, ptr, "reminders"))) return st;
            size_t b2 = strlen(ptr);
            for (uint32_t k3 = v2 + 1; k3 < qj_at(d, v2)->end; k3 = qj_next(d, k3 + 1)) {
                ptr[b2] = '\0';
                if (!qj_str_eq(d, k3, "emit")) return unknown_key(err, d, k3, ptr);
                q_ptr_push_key(ptr, ptr_cap, "emit", 4);
                qj_type t = qj_type_of(d, k3 + 1);
                if (t != QJ_TRUE && t != QJ_FALSE)
                    return sfail(err, QUIRE_E_REMINDER_TYPE, d, k3 + 1, ptr, "emit",
                                 "emit must be a boolean");
                sv->emit = t == QJ_TRUE;
            }
        } else if (qj_str_eq(d, k2, "bridges")) {
            q_ptr_push_key(ptr, ptr_cap, "bridges", 7);
            if (qj_type_of(d, v2) != QJ_ARRAY)
                return sfail(err, QUIRE_E_REMINDER_TYPE, d, v2, ptr, "bridges",
                             "bridges must be an array of \"resources\", \"tools\", \"prompts\"");
            size_t b2 = strlen(ptr);
            uint32_t idx = 0;
            for (uint32_t e = v2 + 1; e < qj_at(d, v2)->end; e = qj_next(d, e), idx++) {
                ptr[b2] = '\0';
                q_ptr_push_index(ptr, ptr_cap, idx);
                if (qj_type_of(d, e) != QJ_STRING)
                    return sfail(err, QUIRE_E_REMINDER_TYPE, d, e, ptr, "bridges",
                                 "bridges must be an array of strings");
                if (qj_str_eq(d, e, "resources")) sv->bridge_resources = true;
                else if (qj_str_eq(d, e, "tools")) sv->bridge_tools = true;
                else if (qj_str_eq(d, e, "prompts")) sv->bridge_prompts = true;
                else
                    return sfail(err, QUIRE_E_REMINDER_ENUM, d, e, ptr, "bridges",
                                 "bridges entries must be one of resources, tools, prompts");
            }
        } else if (qj_str_eq(d, k2, "subscriptions")) {
            q_ptr_push_key(ptr, ptr_cap, "subscriptions", 13);
            if (qj_type_of(d, v2) != QJ_ARRAY)
                return sfail(err, QUIRE_E_REMINDER_TYPE, d, v2, ptr, "subscriptions",
                             "subscriptions must be an array of resource URIs");
            size_t b2 = strlen(ptr);
            uint32_t idx = 0;
            for (uint32_t e = v2 + 1; e < qj_at(d, v2)->end; e = qj_next(d, e), idx++) {
                ptr[b2] = '\0';
                q_ptr_push_index(ptr, ptr_cap, idx);
                /* a URI, or {"uri", "listen"} for one a subscriptions/listen holds */
                uint32_t u = e, lv = QJ_NONE;
                if (qj_type_of(d, e) == QJ_OBJECT) {
                    u = qj_get(d, e, "uri");
                    lv = qj_get(d, e, "listen");
                    for (uint32_t k3 = e + 1; k3 < qj_at(d, e)->end; k3 = qj_next(d, k3 + 1))
                        if (!qj_str_eq(d, k3, "uri") && !qj_str_eq(d, k3, "listen")) return unknown_key(err, d, k3, ptr);
                    if (qj_find_dup_key(d, e) != QJ_NONE)
                        return sfail(err, QUIRE_E_SCHEMA, d, qj_find_dup_key(d, e), ptr, "subscriptions",
                                     "duplicate key in a subscription");
                    qj_type lt = lv == QJ_NONE ? QJ_NULL : qj_type_of(d, lv);
                    if (lt != QJ_STRING && lt != QJ_NUMBER)
                        return sfail(err, QUIRE_E_REMINDER_TYPE, d, lv == QJ_NONE ? e : lv, ptr, "listen",
                                     "listen must be the subscriptions/listen request id (a string or number)");
                }
                if (u == QJ_NONE || qj_type_of(d, u) != QJ_STRING || qj_at(d, u)->len == 0)
                    return sfail(err, QUIRE_E_REMINDER_TYPE, d, u == QJ_NONE ? e : u, ptr, "subscriptions",
                                 "a subscription is a non-empty URI string, or {\"uri\", \"listen\"}");
                size_t ul = 0;
                char *uri = qj_str_decode(d, u, &s->ar, &ul);
                if (!uri) return q_oom(err);
                if (memchr(uri, '\0', ul))
                    return sfail(err, QUIRE_E_REMINDER_TYPE, d, u, ptr, "subscriptions",
                                 "a subscribed URI must not contain NUL");
                const char *listen = NULL;
                if (lv != QJ_NONE && !(listen = qs_listen_key(&s->ar, s->a, d, lv))) return q_oom(err);
                if (!qs_sub_add(s, sv, uri, ul, listen)) return q_oom(err);
            }
        } else {
            return unknown_key(err, d, k2, ptr);
        }
    }
    return QUIRE_OK;
}

static quire_status parse_servers(quire_state *s, const qj_doc *d, uint32_t obj, quire_error *err) {
    char ptr[512] = "/servers";
    quire_status st = want_obj(err, d, obj, ptr, "servers");
    if (st) return st;
    if (!srv_reserve(s, s->nservers + qj_at(d, obj)->n)) return q_oom(err);
    /* names are hashed SRV_AHEAD servers ahead of their lookup and their
     * table slot prefetched: a table larger than the cache then costs no wait
     * per server (a name without escapes hashes the same raw as decoded;
     * one with escapes is hashed when it is decoded) */
    enum { SRV_AHEAD = 4 };
    uint64_t ring_h[SRV_AHEAD];
    bool ring_ok[SRV_AHEAD];
    uint32_t ahead = obj + 1, nahead = 0, nmem = qj_at(d, obj)->n, m = 0;
    for (uint32_t k = obj + 1; k < qj_at(d, obj)->end; k = qj_next(d, k + 1), m++) {
        uint32_t v = k + 1;
        for (; nahead < nmem && nahead <= m + SRV_AHEAD - 1; nahead++) {
            const qj_node *an = qj_at(d, ahead);
            bool ok = !(an->flags & QJ_F_ESC);
            ring_ok[nahead % SRV_AHEAD] = ok;
            if (ok) {
                uint64_t ah = name_hash(an->p, an->len);
                ring_h[nahead % SRV_AHEAD] = ah;
                srv_prefetch(s, ah);
            }
            ahead = qj_next(d, ahead + 1);
        }
        bool have = ring_ok[m % SRV_AHEAD];
        uint64_t h = ring_h[m % SRV_AHEAD];
        size_t nl = 0;
        char *name = qj_str_decode(d, k, &s->ar, &nl);
        if (!name) return q_oom(err);
        snprintf(ptr, sizeof ptr, "/servers");
        q_ptr_push_key(ptr, sizeof ptr, name, nl);
        if ((st = want_obj(err, d, v, ptr, "server"))) return st;
        qserver *sv = srv_lookup(s, name, nl, have ? h : name_hash(name, nl), true, true);
        if (!sv) return q_oom(err);
        if ((st = server_fields(s, d, v, sv, ptr, err))) return st;
    }
    return QUIRE_OK;
}

static quire_status parse_limits(quire_state *s, const qj_doc *d, uint32_t obj, quire_error *err) {
    char ptr[512] = "/limits";
    quire_status st = want_obj(err, d, obj, ptr, "limits");
    if (st) return st;
    for (uint32_t k = obj + 1; k < qj_at(d, obj)->end; k = qj_next(d, k + 1)) {
        uint32_t *dst = NULL;
        const char *f = NULL;
        if (qj_str_eq(d, k, "maxLivePerOrigin")) { dst = &s->lim.max_live_per_origin; f = "maxLivePerOrigin"; }
        else if (qj_str_eq(d, k, "turnBudgetBytes")) { dst = &s->lim.turn_budget_bytes; f = "turnBudgetBytes"; }
        else if (qj_str_eq(d, k, "bodyCapBytes")) { dst = &s->lim.body_cap_bytes; f = "bodyCapBytes"; }
        else if (qj_str_eq(d, k, "maxOrigins")) { dst = &s->lim.max_origins; f = "maxOrigins"; }
        else if (qj_str_eq(d, k, "maxPendingPerServer")) { dst = &s->lim.max_pending_per_server; f = "maxPendingPerServer"; }
        else return unknown_key(err, d, k, ptr);
        snprintf(ptr, sizeof ptr, "/limits/%s", f);
        int64_t x = 0;
        if ((st = want_count(err, d, k + 1, ptr, f, 1, UINT32_MAX, &x))) return st;
        *dst = (uint32_t)x;
    }
    return QUIRE_OK;
}

/* The reminders of a state file, decoded one element at a time: by the
 * parser as each element completes (qj_parse_each: the element's nodes are
 * still in the cache and are dropped after, so the tape never holds the
 * array), or from a full tape. Reminder errors are kept here and reported by
 * state_decode after the document's other checks, as when the array is
 * decoded last. Ids: a hash set, 8 bytes a slot (the upper half of the id's
 * hash beside the reminder's position, so a probe past another id reads
 * neither its record nor its string); each id is probed one element late with
 * its slot prefetched meanwhile, so a set larger than the cache costs no wait
 * per reminder; the pending probe runs before the next element's error is
 * taken, so the first error in document order still wins. */
typedef struct rem_loader {
    quire_state *s;
    uint32_t body_cap;
    bool decided, on;   /* streaming: decided at the first element, on = decoding as they come */
    uint64_t *idset;    /* UINT64_MAX = empty */
    uint32_t idcap, idused;
    uint32_t pend, pend_idx; /* position and element index of the unprobed id (UINT32_MAX = none) */
    size_t pend_off;
    uint64_t pend_h;
    uint32_t idx;       /* elements seen */
    quire_status st;    /* the first reminder error */
    quire_error e;
} rem_loader;

static void rl_init(rem_loader *L, quire_state *s) {
    memset(L, 0, sizeof *L);
    L->s = s;
    L->pend = UINT32_MAX;
}

static void rl_free(rem_loader *L) {
    if (L->idset) q_free(L->s->a, L->idset, (size_t)L->idcap * sizeof *L->idset);
    L->idset = NULL;
}

static void rl_insert(uint64_t *t, uint32_t cap, uint64_t h, uint32_t pos) {
    uint32_t i = (uint32_t)h & (cap - 1);
    while (t[i] != UINT64_MAX) i = (i + 1) & (cap - 1);
    t[i] = (h & UINT64_C(0xFFFFFFFF00000000)) | pos;
}

/* Room for want ids (and reminders); the set is rebuilt from the reminders
 * in order when it grows. false on OOM. */
static bool rl_reserve(rem_loader *L, uint32_t want) {
    quire_state *s = L->s;
    if (!rems_reserve(s, s->nrems + (want > s->nrems ? want - s->nrems : 0))) return false;
    if (L->idset && (uint64_t)want * 2 <= L->idcap) return true;
    uint32_t cap = 16;
    while (cap < (uint64_t)want * 2 && cap < (UINT32_C(1) << 31)) cap *= 2;
    uint64_t *t = q_malloc(s->a, (size_t)cap * sizeof *t);
    if (!t) return false;
    memset(t, 0xFF, (size_t)cap * sizeof *t);
    for (uint32_t p = 0; p < s->nrems; p++)
        if (p != L->pend) rl_insert(t, cap, name_hash(s->rems[p].id, strlen(s->rems[p].id)), p);
    rl_free(L);
    L->idset = t;
    L->idcap = cap;
    return true;
}

/* Probes and inserts the pending id; false (error recorded) when it repeats. */
static bool rl_probe(rem_loader *L) {
    if (L->pend == UINT32_MAX) return true;
    quire_state *s = L->s;
    const char *id = s->rems[L->pend].id;
    uint64_t tag = L->pend_h & UINT64_C(0xFFFFFFFF00000000);
    uint32_t i = (uint32_t)L->pend_h & (L->idcap - 1);
    for (; L->idset[i] != UINT64_MAX; i = (i + 1) & (L->idcap - 1))
        if ((L->idset[i] & UINT64_C(0xFFFFFFFF00000000)) == tag && strcmp(s->rems[(uint32_t)L->idset[i]].id, id) == 0) {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/reminders/%u", L->pend_idx);
            L->st = qrem_fail(&L->e, QUIRE_E_SCHEMA, "id", L->pend_off, ptr, "reminder id \"%.100s\" appears twice", id);
            L->pend = UINT32_MAX;
            return false;
        }
    L->idset[i] = tag | L->pend;
    L->idused++;
    L->pend = UINT32_MAX;
    return true;
}

/* Decodes element e (the next one); after the first error only counts. */
static void rl_step(rem_loader *L, const qj_doc *d, uint32_t e) {
    uint32_t idx = L->idx++;
    if (L->st) return;
    quire_state *s = L->s;
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/reminders/%u", idx);
    qreminder r;
    quire_status st = qrem_decode(d, e, QSURF_STATE, L->body_cap, ptr, &s->ar, &r, &L->e);
    if (st == QUIRE_OK && (s->nrems == s->caprems || (L->idused + 2) * 2 > L->idcap)) {
        uint32_t want = (s->nrems > L->idused ? s->nrems : L->idused) + 2;
        if (!rl_reserve(L, want * 2)) st = q_oom(&L->e); /* doubling */
    }
    if (!rl_probe(L)) return; /* the earlier reminder's error comes first */
    if (st) { L->st = st; return; }
    r.seq = idx + 1;
    s->rems[s->nrems++] = r; /* strings already in s->ar */
    L->pend = s->nrems - 1;
    L->pend_idx = idx;
    L->pend_off = qj_offset(d, e);
    L->pend_h = name_hash(r.id, strlen(r.id));
    __builtin_prefetch(&L->idset[(uint32_t)L->pend_h & (L->idcap - 1)], 1);
}

/* qj_parse_each hook: the elements of the root's "reminders" array. At the
 * first one it decides whether to decode them as they come: with the body
 * cap of a "limits" member before the array (none: the default; one that is
 * not valid: no, the full decode reports it); a "limits" after the array
 * that changes the cap makes state_decode read the document again. */
static bool rl_elem(void *ud, const qj_doc *d, uint32_t key, uint32_t elem) {
    rem_loader *L = ud;
    if (!qj_str_eq(d, key, "reminders")) return false;
    if (!L->decided) {
        L->decided = true;
        L->on = true;
        for (uint32_t k = 1; k < key; k = qj_next(d, k + 1)) {
            if (!qj_str_eq(d, k, "limits")) continue;
            quire_error scratch;
            if (parse_limits(L->s, d, k + 1, &scratch)) L->on = false;
            break;
        }
        L->body_cap = qs_limits(L->s).body_cap_bytes;
        /* a guess at the count from the first element's size, to size the tables once */
        size_t rest = d->len - qj_offset(d, elem), one = qj_at(d, elem)->len + 1;
        size_t guess = rest / one + 16, most = rest / 64 + 16;
        if (guess > most) guess = most;
        if (guess > (UINT32_C(1) << 28)) guess = UINT32_C(1) << 28;
        if (L->on) (void)rl_reserve(L, (uint32_t)guess); /* short of memory: the tables grow as needed */
    }
    if (!L->on) return false;
    rl_step(L, d, elem);
    return true;
}

static quire_status state_decode(quire_state *s, const qj_doc *d, rem_loader *L, bool *reparse,
                                  quire_error *err) {
    quire_status st = want_obj(err, d, 0, "", "a quire.state/1 document");
    if (st) return st;
    uint32_t reminders = QJ_NONE;
    /* limits first: the body cap applies to the reminders */
    uint32_t lim = qj_get(d, 0, "limits");
    if (lim != QJ_NONE && (st = parse_limits(s, d, lim, err))) return st;
    for (uint32_t k = 1; k < qj_at(d, 0)->end; k = qj_next(d, k + 1)) {
        uint32_t v = k + 1;
        int64_t x = 0;
        if (qj_str_eq(d, k, "turn")) {
            if ((st = want_count(err, d, v, "/turn", "turn", 0, INT64_MAX / 2, &x))) return st;
            s->turn = x;
        } else if (qj_str_eq(d, k, "seq")) {
            if ((st = want_count(err, d, v, "/seq", "seq", 0, INT64_MAX / 2, &x))) return st;
            s->seq = (uint64_t)x;
        } else if (qj_str_eq(d, k, "sessionId")) {
            if (qj_type_of(d, v) != QJ_STRING)
                return sfail(err, QUIRE_E_REMINDER_TYPE, d, v, "/sessionId", "sessionId",
                             "sessionId must be a string");
            size_t n = 0;
            char *sid = qj_str_decode(d, v, &s->ar, &n);
            if (!sid) return q_oom(err);
            s->session_id = sid;
        } else if (qj_str_eq(d, k, "servers")) {
            if ((st = parse_servers(s, d, v, err))) return st;
        } else if (qj_str_eq(d, k, "reminders")) {
            if (qj_type_of(d, v) != QJ_ARRAY)
                return sfail(err, QUIRE_E_REMINDER_TYPE, d, v, "/reminders", "reminders",
                             "reminders must be an array");
            reminders = v;
        } else if (!qj_str_eq(d, k, "limits")) {
            return unknown_key(err, d, k, "");
        }
    }
    if (reminders == QJ_NONE) return QUIRE_OK;
    if (L->on) {
        /* decoded while parsing: valid only with the cap the document ends up with */
        if (qs_limits(s).body_cap_bytes != L->body_cap) { *reparse = true; return QUIRE_OK; }
    } else {
        L->body_cap = qs_limits(s).body_cap_bytes;
        if (!rl_reserve(L, s->nrems + qj_at(d, reminders)->n)) return q_oom(err);
        for (uint32_t e = reminders + 1; e < qj_at(d, reminders)->end && !L->st; e = qj_next(d, e)) rl_step(L, d, e);
    }
    if (!L->st) rl_probe(L);
    if (L->st && err) *err = L->e;
    return L->st;
}

quire_status quire_state_new(const char *session_id, const quire_options *opts, quire_state **out,
                             quire_error *err) {
    *out = qs_new(q_alloc_of(opts), session_id);
    return *out ? QUIRE_OK : q_oom(err);
}

quire_status quire_state_parse(const char *json, size_t len, const quire_options *opts, quire_state **out,
                               quire_error *err) {
    *out = NULL;
    quire_limits l = q_limits(opts);
    if ((uint64_t)len > l.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)l.max_input_bytes);
    quire_state *s = qs_new(q_alloc_of(opts), NULL);
    if (!s) return q_oom(err);
    qj_doc d;
    qj_opts jo = {l.max_depth, l.max_string_bytes};
    rem_loader L;
    rl_init(&L, s);
    bool reparse = false;
    /* the reminders are decoded as the parser completes each one */
    quire_status st = qj_parse_each(&d, json, len, &jo, s->a, err, rl_elem, &L);
    if (st == QUIRE_OK) {
        st = state_decode(s, &d, &L, &reparse, err);
        qj_doc_free(&d);
        if (st) q_err_locate(err, json, len);
    }
    rl_free(&L);
    if (st == QUIRE_OK && reparse) {
        /* a "limits" after the reminders changed their body cap: read the whole tape, then decode */
        quire_state_free(s);
        if (!(s = qs_new(q_alloc_of(opts), NULL))) return q_oom(err);
        rl_init(&L, s);
        L.decided = true;
        st = qj_parse(&d, json, len, &jo, s->a, err);
        if (st == QUIRE_OK) {
            st = state_decode(s, &d, &L, &reparse, err);
            qj_doc_free(&d);
            if (st) q_err_locate(err, json, len);
        }
        rl_free(&L);
    }
    if (st) { quire_state_free(s); return st; }
    *out = s;
    return QUIRE_OK;
}

static bool limits_default(const quire_state *s) {
    quire_reminder_limits l = qs_limits(s);
    return l.max_live_per_origin == QREM_DEFAULT_MAX_LIVE_PER_ORIGIN &&
           l.turn_budget_bytes == QREM_DEFAULT_TURN_BUDGET_BYTES && l.body_cap_bytes == QREM_DEFAULT_BODY_CAP_BYTES &&
           l.max_origins == QREM_DEFAULT_MAX_ORIGINS && l.max_pending_per_server == QREM_DEFAULT_MAX_PENDING_PER_SERVER;
}

quire_status quire_state_write(const quire_state *s, int pretty, quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_state_write: no state");
    qbuf b;
    qbuf_init(&b, s->a);
    qw w;
    qw_init(&w, &b, pretty != 0);
    qw_obj_begin(&w);
    if (s->session_id && *s->session_id) { qw_key(&w, "sessionId"); qw_strz(&w, s->session_id); }
    qw_key(&w, "turn"); qw_int(&w, s->turn);
    qw_key(&w, "seq"); qw_int(&w, (int64_t)s->seq);
    if (!limits_default(s)) {
        quire_reminder_limits l = qs_limits(s);
        qw_key(&w, "limits");
        qw_obj_begin(&w);
        qw_key(&w, "maxLivePerOrigin"); qw_int(&w, l.max_live_per_origin);
        qw_key(&w, "turnBudgetBytes"); qw_int(&w, l.turn_budget_bytes);
        qw_key(&w, "bodyCapBytes"); qw_int(&w, l.body_cap_bytes);
        if (l.max_origins != QREM_DEFAULT_MAX_ORIGINS) { qw_key(&w, "maxOrigins"); qw_int(&w, l.max_origins); }
        if (l.max_pending_per_server != QREM_DEFAULT_MAX_PENDING_PER_SERVER) {
            qw_key(&w, "maxPendingPerServer");
            qw_int(&w, l.max_pending_per_server);
        }
        qw_obj_end(&w);
    }
    qw_key(&w, "servers");
    qw_obj_begin(&w);
    for (uint32_t i = 0; i < s->nservers; i++) {
        const qserver *sv = &s->servers[i];
        qw_keyn(&w, sv->name, strlen(sv->name));
        qw_obj_begin(&w);
        qw_key(&w, "reminders");
        qw_obj_begin(&w);
        qw_key(&w, "emit"); qw_bool(&w, sv->emit);
        qw_obj_end(&w);
        if (sv->bridge_resources || sv->bridge_tools || sv->bridge_prompts) {
            qw_key(&w, "bridges");
            qw_arr_begin(&w);
            if (sv->bridge_resources) qw_strz(&w, "resources");
            if (sv->bridge_tools) qw_strz(&w, "tools");
            if (sv->bridge_prompts) qw_strz(&w, "prompts");
            qw_arr_end(&w);
        }
        if (sv->nsubs) {
            qw_key(&w, "subscriptions");
            qw_arr_begin(&w);
            for (uint32_t k = 0; k < sv->nsubs; k++) {
                if (!sv->sub_listen[k]) { qw_strz(&w, sv->subs[k]); continue; }
                qw_obj_begin(&w);
                qw_key(&w, "uri"); qw_strz(&w, sv->subs[k]);
                qw_key(&w, "listen"); qw_raw_value(&w, sv->sub_listen[k], strlen(sv->sub_listen[k]));
                qw_obj_end(&w);
            }
            qw_arr_end(&w);
        }
        qw_obj_end(&w);
    }
    qw_obj_end(&w);
    qw_key(&w, "reminders");
    qw_arr_begin(&w);
    for (uint32_t i = 0; i < s->nrems; i++)
        if (!s->rems[i].dead) qrem_write_state(&w, &s->rems[i]);
    qw_arr_end(&w);
    qw_obj_end(&w);
    qw_dispose(&w);
    if (b.oom || !qbuf_take(&b, out)) { qbuf_free(&b); return q_oom(err); }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Small public setters and accessors                                        */
/* ------------------------------------------------------------------------ */

void quire_state_set_limits(quire_state *s, const quire_reminder_limits *limits) {
    if (!s) return;
    if (limits) s->lim = *limits;
    else memset(&s->lim, 0, sizeof s->lim);
}

void quire_state_limits(const quire_state *s, quire_reminder_limits *out) {
    quire_reminder_limits none = {0, 0, 0, 0, 0};
    if (!s) {
        *out = none;
        out->max_live_per_origin = QREM_DEFAULT_MAX_LIVE_PER_ORIGIN;
        out->turn_budget_bytes = QREM_DEFAULT_TURN_BUDGET_BYTES;
        out->body_cap_bytes = QREM_DEFAULT_BODY_CAP_BYTES;
        out->max_origins = QREM_DEFAULT_MAX_ORIGINS;
        out->max_pending_per_server = QREM_DEFAULT_MAX_PENDING_PER_SERVER;
        return;
    }
    *out = qs_limits(s);
}

quire_status quire_state_set_session_id(quire_state *s, const char *session_id, quire_error *err) {
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_state_set_session_id: no state");
    return qs_set_session_id(s, session_id, session_id ? strlen(session_id) : 0) ? QUIRE_OK : q_oom(err);
}

quire_status quire_state_set_bridges(quire_state *s, const char *server, unsigned kinds, quire_error *err) {
    if (!s || !server || !*server) return q_err(err, QUIRE_E_INVALID, "quire_state_set_bridges: no state or server");
    if (kinds & ~(QUIRE_BRIDGE_RESOURCES | QUIRE_BRIDGE_TOOLS | QUIRE_BRIDGE_PROMPTS))
        return q_err(err, QUIRE_E_INVALID, "unknown bridge kind bits 0x%x", kinds);
    qserver *sv = qs_server(s, server, strlen(server), true);
    if (!sv) return q_oom(err);
    sv->bridge_resources = (kinds & QUIRE_BRIDGE_RESOURCES) != 0;
    sv->bridge_tools = (kinds & QUIRE_BRIDGE_TOOLS) != 0;
    sv->bridge_prompts = (kinds & QUIRE_BRIDGE_PROMPTS) != 0;
    return QUIRE_OK;
}

unsigned quire_state_bridges(const quire_state *s, const char *server) {
    if (!s || !server) return 0;
    for (uint32_t i = 0; i < s->nservers; i++) {
        const qserver *sv = &s->servers[i];
        if (strcmp(sv->name, server) != 0) continue;
        return (sv->bridge_resources ? QUIRE_BRIDGE_RESOURCES : 0u) | (sv->bridge_tools ? QUIRE_BRIDGE_TOOLS : 0u) |
               (sv->bridge_prompts ? QUIRE_BRIDGE_PROMPTS : 0u);
    }
    return 0;
}

int64_t quire_state_turn(const quire_state *s) { return s ? s->turn : 0; }
size_t quire_state_reminder_count(const quire_state *s) { return s ? s->nrems : 0; }
const char *quire_state_reminder_id(const quire_state *s, size_t i) {
    return s && i < s->nrems ? s->rems[i].id : NULL;
}

/* ------------------------------------------------------------------------ */
/* Push routing: subscriptions (DESIGN 11)                                   */
/* ------------------------------------------------------------------------ */

static void write_subs(qw *w, const qserver *sv) { qs_sub_write_uris(w, sv); }

const char *qs_listen_key(qarena *ar, const quire_allocator *a, const qj_doc *d, uint32_t id) {
    qbuf b;
    qbuf_init(&b, a);
    qw w;
    qw_init(&w, &b, false);
    if (qj_type_of(d, id) == QJ_STRING) {
        /* a string id in one spelling whatever its escapes */
        size_t n = 0;
        char *v = qj_str_decode(d, id, ar, &n);
        if (!v) { qw_dispose(&w); qbuf_free(&b); return NULL; }
        qw_str(&w, v, n);
    } else {
        qw_node(&w, d, id);
    }
    qw_dispose(&w);
    const char *r = b.oom ? NULL : qarena_strndup(ar, b.data ? b.data : "", b.len);
    qbuf_free(&b);
    return r;
}

quire_status quire_state_subscriptions(const quire_state *s, const char *server, quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!s) return q_err(err, QUIRE_E_INVALID, "quire_state_subscriptions: no state");
    qbuf b;
    qbuf_init(&b, s->a);
    qw w;
    qw_init(&w, &b, false);
    if (server) {
        const qserver *sv = NULL;
        for (uint32_t i = 0; i < s->nservers && !sv; i++)
            if (strcmp(s->servers[i].name, server) == 0) sv = &s->servers[i];
        write_subs(&w, sv);
    } else {
        qw_obj_begin(&w);
        for (uint32_t i = 0; i < s->nservers; i++) {
            const qserver *sv = &s->servers[i];
            if (!sv->nsubs) continue;
            qw_keyn(&w, sv->name, strlen(sv->name));
            write_subs(&w, sv);
        }
        qw_obj_end(&w);
    }
    qw_dispose(&w);
    if (b.oom || !qbuf_take(&b, out)) { qbuf_free(&b); return q_oom(err); }
    return QUIRE_OK;
}
