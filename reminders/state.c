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

void quire_state_free(quire_state *s) {
    if (!s) return;
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
    uint32_t cap = s->caprems ? s->caprems : 8;
    while (cap < need) cap *= 2;
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

static bool is_live(const qreminder *r) { return r->retired_at_turn == 0; }

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

qserver *qs_server(quire_state *s, const char *name, size_t len, bool create) {
    for (uint32_t i = 0; i < s->nservers; i++)
        if (strlen(s->servers[i].name) == len && memcmp(s->servers[i].name, name, len) == 0) return &s->servers[i];
    if (!create) return NULL;
    if (s->nservers == s->capservers) {
        uint32_t cap = s->capservers ? s->capservers * 2 : 4;
        qserver *n = q_realloc(s->a, s->servers, (size_t)s->capservers * sizeof *n, (size_t)cap * sizeof *n);
        if (!n) return NULL;
        s->servers = n;
        s->capservers = cap;
    }
    char *nm = qarena_strndup(&s->ar, name, len);
    if (!nm) return NULL;
    qserver *sv = &s->servers[s->nservers++];
    memset(sv, 0, sizeof *sv);
    sv->name = nm;
    return sv;
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
    }
    if (ok && !rems_reserve(n, s->nrems)) ok = false;
    for (uint32_t i = 0; ok && i < s->nrems; i++) ok = rems_push(n, &s->rems[i]);
    if (!ok) { quire_state_free(n); return NULL; }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Inject, dedupe, budgets                                                   */
/* ------------------------------------------------------------------------ */

static bool streq0(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }
static bool is_host(const char *origin) { return !origin || strcmp(origin, "host") == 0; }

quire_status qs_inject(quire_state *s, const qreminder *r, qbuf *events, uint32_t *deduped, const char **id_out,
                       quire_error *err) {
    if (deduped) *deduped = 0;
    const char *origin = r->origin ? r->origin : "host";
    bool host = is_host(origin);
    /* an explicit id may only replace a reminder of the same origin (or any, for the host) */
    if (r->id) {
        for (uint32_t i = 0; i < s->nrems; i++)
            if (is_live(&s->rems[i]) && streq0(s->rems[i].id, r->id) && !host && !streq0(s->rems[i].origin, origin)) {
                quire_status st = q_err(err, QUIRE_E_INVALID,
                                        "id \"%.100s\" is used by a live reminder of another origin (%.100s)",
                                        r->id, s->rems[i].origin);
                if (err) snprintf(err->field, sizeof err->field, "id");
                return st;
            }
    }
    qreminder nr = *r;
    nr.origin = origin;
    nr.seq = s->seq + 1;
    char idbuf[37];
    if (!nr.id) {
        if (!qrem_derive_id(s->a, s->session_id, nr.seq, nr.body, nr.body_len, idbuf)) return q_oom(err);
        nr.id = idbuf;
    }
    if (!rems_reserve(s, s->nrems + 1)) return q_oom(err);
    /* replaced reminders: same id, or same dedupeKey in scope */
    const char **dropped = NULL;
    uint32_t ndropped = 0, ncap = s->nrems;
    if (ncap) {
        dropped = q_malloc(s->a, (size_t)ncap * sizeof *dropped);
        if (!dropped) return q_oom(err);
    }
    s->seq = nr.seq;
    for (uint32_t i = 0; i < s->nrems;) {
        const qreminder *o = &s->rems[i];
        if (!is_live(o)) { i++; continue; } /* history under append_only: never replaced */
        bool in_scope = host || streq0(o->origin, origin);
        bool same_id = streq0(o->id, nr.id);
        bool same_key = nr.dedupe_key && in_scope && streq0(o->dedupe_key, nr.dedupe_key);
        if (same_id || same_key) {
            dropped[ndropped++] = o->id;
            rems_remove(s, i);
        } else {
            i++;
        }
    }
    if (ndropped) qev_reminder_deduped(events, nr.id, nr.dedupe_key, dropped, ndropped);
    if (dropped) q_free(s->a, dropped, (size_t)ncap * sizeof *dropped);
    if (deduped) *deduped = ndropped;
    /* per-origin budget: make room by dropping the oldest of this origin */
    quire_reminder_limits lim = qs_limits(s);
    for (;;) {
        uint32_t count = 0, oldest = UINT32_MAX;
        for (uint32_t i = 0; i < s->nrems; i++)
            if (is_live(&s->rems[i]) && streq0(s->rems[i].origin, origin)) {
                if (oldest == UINT32_MAX) oldest = i;
                count++;
            }
        if (count < lim.max_live_per_origin || oldest == UINT32_MAX) break;
        char detail[200];
        snprintf(detail, sizeof detail, "origin %.120s already has %u live reminders (limit %u); the oldest is dropped",
                 origin, count, lim.max_live_per_origin);
        qev_reminder_dropped(events, s->rems[oldest].id, "budget", detail, origin, NULL, NULL);
        retire_or_remove(s, &oldest, s->turn);
    }
    if (!rems_push(s, &nr)) return q_oom(err);
    qreminder *added = &s->rems[s->nrems - 1];
    if (added->mode == QM_AUDIT_ONLY) qev_reminder_audit(events, added);
    if (id_out) *id_out = added->id;
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

/* Marks in keep[i] (for every reminder i of s) whether it is rendered in the
 * next turn. audit_only: never. The rest, in injection order, under the
 * per-turn byte budget: while the bodies to render exceed it, the origin with
 * the most body bytes this turn (ties: the origin whose oldest kept reminder
 * is oldest) loses its oldest kept reminder. Returns false on OOM. */
static bool turn_selection(const quire_state *s, bool *keep, bool *over) {
    quire_reminder_limits lim = qs_limits(s);
    uint64_t total = 0;
    for (uint32_t i = 0; i < s->nrems; i++) {
        keep[i] = s->rems[i].mode != QM_AUDIT_ONLY && is_live(&s->rems[i]);
        over[i] = false;
        if (keep[i]) total += s->rems[i].body_len;
    }
    while (total > lim.turn_budget_bytes) {
        /* the origin with the most kept bytes; first such origin by its oldest kept reminder */
        uint32_t victim = UINT32_MAX;
        uint64_t best = 0;
        for (uint32_t i = 0; i < s->nrems; i++) {
            if (!keep[i]) continue;
            bool first_of_origin = true;
            for (uint32_t j = 0; j < i && first_of_origin; j++)
                if (keep[j] && streq0(s->rems[j].origin, s->rems[i].origin)) first_of_origin = false;
            if (!first_of_origin) continue;
            uint64_t bytes = 0;
            for (uint32_t j = i; j < s->nrems; j++)
                if (keep[j] && streq0(s->rems[j].origin, s->rems[i].origin)) bytes += s->rems[j].body_len;
            if (victim == UINT32_MAX || bytes > best) { victim = i; best = bytes; }
        }
        if (victim == UINT32_MAX) break;
        keep[victim] = false;
        over[victim] = true;
        total -= s->rems[victim].body_len;
    }
    return true;
}

const qreminder **qs_live_for_turn(const quire_state *s, qarena *ar, uint32_t *n) {
    *n = 0;
    const qreminder **out = qarena_alloc(ar, (size_t)(s->nrems + 1) * sizeof *out);
    if (!out) return NULL;
    if (!s->nrems) return out;
    bool *keep = qarena_alloc(ar, (size_t)s->nrems * 2);
    if (!keep) return NULL;
    turn_selection(s, keep, keep + s->nrems);
    for (uint32_t i = 0; i < s->nrems; i++)
        if (keep[i]) out[(*n)++] = &s->rems[i];
    return out;
}

const qreminder **qs_retired_anchored(const quire_state *s, qarena *ar, uint32_t *n) {
    *n = 0;
    const qreminder **out = qarena_alloc(ar, (size_t)(s->nrems + 1) * sizeof *out);
    if (!out) return NULL;
    for (uint32_t i = 0; i < s->nrems; i++)
        if (!is_live(&s->rems[i]) && s->rems[i].anchor_msg != UINT32_MAX) out[(*n)++] = &s->rems[i];
    return out;
}

void qs_after_render(quire_state *s, qbuf *events) {
    int64_t t = s->turn + 1;
    uint32_t n0 = s->nrems;
    if (n0) {
        bool small[128];
        bool *keep = n0 <= 64 ? small : q_malloc(s->a, (size_t)n0 * 2);
        if (keep) {
            bool *over = keep + n0;
            turn_selection(s, keep, over);
            quire_reminder_limits lim = qs_limits(s);
            for (uint32_t i = 0; i < n0; i++)
                if (keep[i] && !s->rems[i].fired_at_turn) s->rems[i].fired_at_turn = t;
            /* per-turn budget drops (k walks the selection, i the shrinking array) */
            for (uint32_t i = 0, k = 0; k < n0; k++) {
                if (over[k]) {
                    char detail[240];
                    snprintf(detail, sizeof detail,
                             "reminder bodies to render in turn %lld exceed the per-turn budget of %u bytes; "
                             "the oldest reminder of the origin with the most bytes (%.60s) is dropped",
                             (long long)t, lim.turn_budget_bytes, s->rems[i].origin);
                    qev_reminder_dropped(events, s->rems[i].id, "budget", detail, s->rems[i].origin, NULL, NULL);
                    retire_or_remove(s, &i, t);
                } else {
                    i++;
                }
            }
            if (keep != small) q_free(s->a, keep, (size_t)n0 * 2);
        } else if (events) {
            events->oom = true; /* reported by the caller's sticky-flag check */
        }
    }
    s->turn = t;
    for (uint32_t i = 0; i < s->nrems;) {
        qreminder *r = &s->rems[i];
        if (is_live(r) && r->ttl_remaining > 0 && --r->ttl_remaining == 0) {
            qev_reminder_expired(events, r->id, "ttl_expired", t);
            retire_or_remove(s, &i, t);
        } else {
            i++;
        }
    }
}

void qs_after_compact(quire_state *s, qbuf *events, uint32_t *kept, uint32_t *removed) {
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

static quire_status parse_servers(quire_state *s, const qj_doc *d, uint32_t obj, quire_error *err) {
    char ptr[512] = "/servers";
    quire_status st = want_obj(err, d, obj, ptr, "servers");
    if (st) return st;
    for (uint32_t k = obj + 1; k < qj_at(d, obj)->end; k = qj_next(d, k + 1)) {
        uint32_t v = k + 1;
        size_t nl = 0;
        char *name = qj_str_decode(d, k, &s->ar, &nl);
        if (!name) return q_oom(err);
        snprintf(ptr, sizeof ptr, "/servers");
        q_ptr_push_key(ptr, sizeof ptr, name, nl);
        if ((st = want_obj(err, d, v, ptr, "server"))) return st;
        qserver *sv = qs_server(s, name, nl, true);
        if (!sv) return q_oom(err);
        size_t base = strlen(ptr);
        for (uint32_t k2 = v + 1; k2 < qj_at(d, v)->end; k2 = qj_next(d, k2 + 1)) {
            uint32_t v2 = k2 + 1;
            ptr[base] = '\0';
            if (qj_str_eq(d, k2, "reminders")) {
                q_ptr_push_key(ptr, sizeof ptr, "reminders", 9);
                if ((st = want_obj(err, d, v2, ptr, "reminders"))) return st;
                size_t b2 = strlen(ptr);
                for (uint32_t k3 = v2 + 1; k3 < qj_at(d, v2)->end; k3 = qj_next(d, k3 + 1)) {
                    ptr[b2] = '\0';
                    if (!qj_str_eq(d, k3, "emit")) return unknown_key(err, d, k3, ptr);
                    q_ptr_push_key(ptr, sizeof ptr, "emit", 4);
                    qj_type t = qj_type_of(d, k3 + 1);
                    if (t != QJ_TRUE && t != QJ_FALSE)
                        return sfail(err, QUIRE_E_REMINDER_TYPE, d, k3 + 1, ptr, "emit",
                                     "emit must be a boolean");
                    sv->emit = t == QJ_TRUE;
                }
            } else if (qj_str_eq(d, k2, "bridges")) {
                q_ptr_push_key(ptr, sizeof ptr, "bridges", 7);
                if (qj_type_of(d, v2) != QJ_ARRAY)
                    return sfail(err, QUIRE_E_REMINDER_TYPE, d, v2, ptr, "bridges",
                                 "bridges must be an array of \"resources\", \"tools\", \"prompts\"");
                size_t b2 = strlen(ptr);
                uint32_t idx = 0;
                for (uint32_t e = v2 + 1; e < qj_at(d, v2)->end; e = qj_next(d, e), idx++) {
                    ptr[b2] = '\0';
                    q_ptr_push_index(ptr, sizeof ptr, idx);
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
            } else {
                return unknown_key(err, d, k2, ptr);
            }
        }
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
        else return unknown_key(err, d, k, ptr);
        snprintf(ptr, sizeof ptr, "/limits/%s", f);
        int64_t x = 0;
        if ((st = want_count(err, d, k + 1, ptr, f, 1, UINT32_MAX, &x))) return st;
        *dst = (uint32_t)x;
    }
    return QUIRE_OK;
}

static quire_status state_decode(quire_state *s, const qj_doc *d, quire_error *err) {
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
    quire_reminder_limits l = qs_limits(s);
    uint32_t idx = 0;
    for (uint32_t e = reminders + 1; e < qj_at(d, reminders)->end; e = qj_next(d, e), idx++) {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/reminders/%u", idx);
        qreminder r;
        if ((st = qrem_decode(d, e, QSURF_STATE, l.body_cap_bytes, ptr, &s->ar, &r, err))) return st;
        for (uint32_t j = 0; j < s->nrems; j++)
            if (strcmp(s->rems[j].id, r.id) == 0)
                return qrem_fail(err, QUIRE_E_SCHEMA, "id", qj_offset(d, e), ptr,
                                 "reminder id \"%.100s\" appears twice", r.id);
        r.seq = idx + 1;
        if (!rems_reserve(s, s->nrems + 1)) return q_oom(err);
        s->rems[s->nrems++] = r; /* strings already in s->ar */
    }
    return QUIRE_OK;
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
    quire_status st = qj_parse(&d, json, len, &jo, s->a, err);
    if (st == QUIRE_OK) {
        st = state_decode(s, &d, err);
        qj_doc_free(&d);
        if (st) q_err_locate(err, json, len);
    }
    if (st) { quire_state_free(s); return st; }
    *out = s;
    return QUIRE_OK;
}

static bool limits_default(const quire_state *s) {
    quire_reminder_limits l = qs_limits(s);
    return l.max_live_per_origin == QREM_DEFAULT_MAX_LIVE_PER_ORIGIN &&
           l.turn_budget_bytes == QREM_DEFAULT_TURN_BUDGET_BYTES && l.body_cap_bytes == QREM_DEFAULT_BODY_CAP_BYTES;
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
        qw_obj_end(&w);
    }
    qw_obj_end(&w);
    qw_key(&w, "reminders");
    qw_arr_begin(&w);
    for (uint32_t i = 0; i < s->nrems; i++) qrem_write_state(&w, &s->rems[i]);
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
    quire_reminder_limits none = {0, 0, 0};
    if (!s) {
        *out = none;
        out->max_live_per_origin = QREM_DEFAULT_MAX_LIVE_PER_ORIGIN;
        out->turn_budget_bytes = QREM_DEFAULT_TURN_BUDGET_BYTES;
        out->body_cap_bytes = QREM_DEFAULT_BODY_CAP_BYTES;
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
