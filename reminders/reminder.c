/* The one reminder validator, body hygiene and derived ids. */
#include "reminders/reminder.h"

#include "core/text.h"

#include <stdarg.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Enum names                                                               */
/* ------------------------------------------------------------------------ */

static const char *const k_modes[] = {"finish_step", "interrupt_immediate", "audit_only"};
static const char *const k_role_hints[] = {"system", "developer", "user_block", "ephemeral_cache"};
static const char *const k_propagates[] = {"session", "all", "none"};
static const char *const k_sources[] = {"host", "provider", "hook", "bridge", "inherited"};

const char *qmode_name(qmode m) { return (unsigned)m < Q_COUNTOF(k_modes) ? k_modes[m] : "finish_step"; }
const char *qrole_hint_name(qrole_hint h) {
    return (unsigned)h < Q_COUNTOF(k_role_hints) ? k_role_hints[h] : "system";
}
const char *qpropagate_name(qpropagate p) {
    return (unsigned)p < Q_COUNTOF(k_propagates) ? k_propagates[p] : "session";
}
const char *qsource_name(qsource s) { return (unsigned)s < Q_COUNTOF(k_sources) ? k_sources[s] : "host"; }

static int enum_find(const char *const *names, size_t count, const char *s, size_t n) {
    for (size_t i = 0; i < count; i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return (int)i;
    return -1;
}
bool qrem_parse_mode(const char *s, size_t n, qmode *v) {
    int i = enum_find(k_modes, Q_COUNTOF(k_modes), s, n);
    if (i < 0) return false;
    *v = (qmode)i;
    return true;
}
bool qrem_parse_role_hint(const char *s, size_t n, qrole_hint *v) {
    int i = enum_find(k_role_hints, Q_COUNTOF(k_role_hints), s, n);
    if (i < 0) return false;
    *v = (qrole_hint)i;
    return true;
}
bool qrem_parse_propagate(const char *s, size_t n, qpropagate *v) {
    int i = enum_find(k_propagates, Q_COUNTOF(k_propagates), s, n);
    if (i < 0) return false;
    *v = (qpropagate)i;
    return true;
}
bool qrem_parse_source(const char *s, size_t n, qsource *v) {
    int i = enum_find(k_sources, Q_COUNTOF(k_sources), s, n);
    if (i < 0) return false;
    *v = (qsource)i;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

quire_status qrem_fail(quire_error *err, quire_status code, const char *field, size_t offset, const char *ptr,
                       const char *fmt, ...) {
    if (!err) return code;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_utf8_trim(msg); /* a cut message stays UTF-8 before the code is appended */
    q_err_at(err, code, offset, ptr, "%s (%s)", msg, quire_status_name(code));
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    q_utf8_mend(err->field);
    return code;
}

void qrem_defaults(qreminder *r) {
    memset(r, 0, sizeof *r);
    r->propagate = QP_SESSION;
    r->role_hint = QRH_SYSTEM;
    r->mode = QM_FINISH_STEP;
    r->source = QS_HOST;
    r->anchor_msg = UINT32_MAX;
}

/* ------------------------------------------------------------------------ */
/* Body                                                                      */
/* ------------------------------------------------------------------------ */

static quire_status body_clean(qreminder *r, const char *body, size_t n, size_t cap, qarena *ar, quire_error *err,
                               size_t offset, const char *ptr) {
    size_t bad = 0;
    if (!qt_utf8_valid(body, n, &bad))
        return qrem_fail(err, QUIRE_E_REMINDER_BODY, "body", offset, ptr,
                         "body is not valid UTF-8 (ill-formed sequence at byte %zu)", bad);
    qbuf clean;
    qbuf_init(&clean, ar->a);
    qt_hygiene(&clean, body, n, NULL);
    if (clean.oom) { qbuf_free(&clean); return q_oom(err); }
    if (qt_is_blank_visible(clean.data ? clean.data : "", clean.len)) {
        qbuf_free(&clean);
        return qrem_fail(err, QUIRE_E_REMINDER_BODY, "body", offset, ptr,
                         n == 0                ? "body is empty"
                         : qt_is_blank(body, n) ? "body is blank"
                                                : "body is blank: only invisible characters once control, bidi and "
                                                  "tag characters are removed");
    }
    const char *src = clean.data;
    size_t len = clean.len;
    qbuf cut;
    qbuf_init(&cut, ar->a);
    if (cap && len > cap) {
        qt_cut_head(&cut, src, len, cap);
        if (cut.oom) { qbuf_free(&cut); qbuf_free(&clean); return q_oom(err); }
        src = cut.data;
        len = cut.len;
    }
    char *copy = qarena_strndup(ar, src, len);
    qbuf_free(&cut);
    qbuf_free(&clean);
    if (!copy) return q_oom(err);
    r->body = copy;
    r->body_len = len;
    return QUIRE_OK;
}

quire_status qrem_set_body(qreminder *r, const char *body, size_t n, size_t body_cap, qarena *ar, quire_error *err) {
    if (!body) return qrem_fail(err, QUIRE_E_REMINDER_BODY, "body", SIZE_MAX, "", "body is required");
    return body_clean(r, body, n, body_cap, ar, err, SIZE_MAX, "");
}

/* ------------------------------------------------------------------------ */
/* The validator                                                             */
/* ------------------------------------------------------------------------ */

enum {
    K_ID, K_BODY, K_TAGS, K_DEDUPE, K_TTL, K_PRESERVE, K_PROPAGATE, K_ROLE, K_MODE, K_SOURCE, K_ORIGIN, K_FIRED,
    K_AGENT, K_META, K_SESSION, K_TTL_REMAINING, K_ANCHOR, K_RETIRED, K_COUNT_
};
static const char *const k_keys[K_COUNT_] = {
    "id", "body", "tags", "dedupeKey", "ttlTurns", "preserveOnCompact", "propagate", "roleHint", "mode", "source",
    "origin", "firedAtTurn", "originatingAgentId", "_meta", "sessionId", "ttlRemaining", "anchorMessage", "retiredAtTurn"};

static int key_of(const qj_doc *d, uint32_t k, qrem_surface surf) {
    for (int i = 0; i < K_COUNT_; i++) {
        if (!qj_str_eq(d, k, k_keys[i])) continue;
        if (i == K_SESSION && surf != QSURF_ACP) return -1;
        if ((i == K_TTL_REMAINING || i == K_ANCHOR || i == K_RETIRED) && surf != QSURF_STATE) return -1;
        return i;
    }
    return -1;
}

/* Tags seen so far in one record: pairwise for a few, hashed for many (a
 * peer's record with 10^5 tags stays linear). Slots index tags[]. */
typedef struct tagset {
    uint32_t *slot; /* NULL = pairwise */
    size_t cap;
} tagset;

static uint64_t tag_hash(const char *s, size_t n) {
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    return h ^ (h >> 31);
}

static bool tagset_init(tagset *t, qarena *ar, uint32_t n) {
    t->slot = NULL;
    t->cap = 0;
    if (n <= 16) return true;
    size_t cap = 32;
    while (cap < (size_t)n * 2) cap *= 2;
    t->slot = qarena_alloc(ar, cap * sizeof *t->slot);
    if (!t->slot) return false;
    for (size_t i = 0; i < cap; i++) t->slot[i] = UINT32_MAX;
    t->cap = cap;
    return true;
}

/* True when tag (length tl) is among tags[0..ntags); otherwise records it as
 * tags[ntags] (the caller appends it there). */
static bool tag_seen_n(tagset *t, const char **tags, uint32_t ntags, const char *tag, size_t tl) {
    if (!t->slot) {
        for (uint32_t j = 0; j < ntags; j++)
            if (strlen(tags[j]) == tl && memcmp(tags[j], tag, tl) == 0) return true;
        return false;
    }
    for (size_t i = (size_t)tag_hash(tag, tl) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        uint32_t j = t->slot[i];
        if (j == UINT32_MAX) { t->slot[i] = ntags; return false; }
        if (strlen(tags[j]) == tl && memcmp(tags[j], tag, tl) == 0) return true;
    }
}
#define tag_seen(t, tags, tag, tl) tag_seen_n(t, tags, ntags, tag, tl)

typedef struct vctx {
    const qj_doc *d;
    qarena *ar;
    quire_error *err;
    char ptr[512];
    const char *field;
} vctx;

static quire_status type_fail(vctx *c, uint32_t v, const char *want) {
    return qrem_fail(c->err, QUIRE_E_REMINDER_TYPE, c->field, qj_offset(c->d, v), c->ptr, "%s must be %s, got %s",
                     c->field, want, qj_type_name(qj_type_of(c->d, v)));
}

/* A non-empty string (decoded into the arena). */
static quire_status want_string(vctx *c, uint32_t v, const char **out, size_t *outlen, bool allow_empty) {
    if (qj_type_of(c->d, v) != QJ_STRING) return type_fail(c, v, "a string");
    size_t n = 0;
    char *s = qj_str_decode(c->d, v, c->ar, &n);
    if (!s) return q_oom(c->err);
    if (!allow_empty && n == 0)
        return qrem_fail(c->err, QUIRE_E_REMINDER_TYPE, c->field, qj_offset(c->d, v), c->ptr,
                         "%s must be a non-empty string", c->field);
    *out = s;
    if (outlen) *outlen = n;
    return QUIRE_OK;
}

static quire_status want_enum(vctx *c, uint32_t v, const char *const *names, size_t count, int *out) {
    if (qj_type_of(c->d, v) != QJ_STRING) return type_fail(c, v, "a string");
    size_t n = 0;
    char *s = qj_str_decode(c->d, v, c->ar, &n);
    if (!s) return q_oom(c->err);
    int i = enum_find(names, count, s, n);
    if (i < 0) {
        char list[160] = "";
        for (size_t k = 0; k < count; k++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", k ? ", " : "", names[k]);
        }
        const qj_node *nd = qj_at(c->d, v);
        return qrem_fail(c->err, QUIRE_E_REMINDER_ENUM, c->field, qj_offset(c->d, v), c->ptr,
                         "%s must be one of %s, got \"%.*s\"", c->field, list, nd->len > 60 ? 60 : (int)nd->len,
                         nd->p);
    }
    *out = i;
    return QUIRE_OK;
}

/* An integer >= min; code for range/non-integer failures. */
static quire_status want_int(vctx *c, uint32_t v, int64_t min, quire_status code, const char *want, int64_t *out) {
    if (qj_type_of(c->d, v) != QJ_NUMBER) return type_fail(c, v, want);
    int64_t x = 0;
    const qj_node *nd = qj_at(c->d, v);
    if (!qj_int64(c->d, v, &x) || x < min)
        return qrem_fail(c->err, code, c->field, qj_offset(c->d, v), c->ptr, "%s must be %s, got %.*s", c->field,
                         want, nd->len > 40 ? 40 : (int)nd->len, nd->p);
    *out = x;
    return QUIRE_OK;
}

quire_status qrem_decode(const qj_doc *d, uint32_t obj, qrem_surface surf, size_t body_cap, const char *ptr,
                         qarena *ar, qreminder *out, quire_error *err) {
    qrem_defaults(out);
    vctx c;
    c.d = d; c.ar = ar; c.err = err; c.field = "reminder";
    snprintf(c.ptr, sizeof c.ptr, "%s", ptr ? ptr : "");
    if (qj_type_of(d, obj) != QJ_OBJECT)
        return qrem_fail(err, QUIRE_E_REMINDER_TYPE, "", qj_offset(d, obj), c.ptr,
                         "expected a reminder object, got %s", qj_type_name(qj_type_of(d, obj)));
    /* the first unknown key is rejected before anything else looks at the
     * record (a peer's record with 10^5 keys costs one pass) */
    for (uint32_t k = obj + 1; k < qj_at(d, obj)->end; k = qj_next(d, k + 1)) {
        if (key_of(d, k, surf) >= 0) continue;
        size_t klen = 0;
        char *kname = qj_str_decode(d, k, ar, &klen);
        if (!kname) return q_oom(err);
        q_ptr_push_key(c.ptr, sizeof c.ptr, kname, klen);
        char field[64], shown[64];
        q_quote_text(field, sizeof field, kname, klen);
        q_quote_text(shown, sizeof shown, kname, klen);
        return qrem_fail(err, QUIRE_E_REMINDER_UNKNOWN_FIELD, field, qj_offset(d, k), c.ptr,
                         "unknown field \"%s\" in a reminder", shown);
    }
    uint32_t dup = qj_find_dup_key(d, obj);
    if (dup != QJ_NONE) {
        const qj_node *nd = qj_at(d, dup);
        char field[64]; /* the field given twice, as the unknown-field error names its field */
        q_quote_text(field, sizeof field, nd->p, nd->len);
        return qrem_fail(err, QUIRE_E_SCHEMA, field, qj_offset(d, dup), c.ptr, "duplicate key \"%.*s\"",
                         nd->len > 60 ? 60 : (int)nd->len, nd->p);
    }
    if (surf == QSURF_DIRECT || surf == QSURF_STATE) out->origin = "host";
    uint32_t body = QJ_NONE;
    int64_t ttl_remaining = 0;
    bool ttl_remaining_given = false;
    uint32_t ttl_remaining_node = QJ_NONE;
    const char **tags = NULL;
    uint32_t ntags = 0;
    size_t base = strlen(c.ptr);
    quire_status st = QUIRE_OK;
    for (uint32_t k = obj + 1; k < qj_at(d, obj)->end && st == QUIRE_OK; k = qj_next(d, k + 1)) {
        uint32_t v = k + 1;
        int key = key_of(d, k, surf);
        c.ptr[base] = '\0';
        /* the key's text for the pointer: its raw bytes unless it has escapes
         * (nothing is left in the arena for a key) */
        size_t klen = qj_at(d, k)->len;
        const char *kname = qj_at(d, k)->p;
        if (qj_at(d, k)->flags & QJ_F_ESC) {
            char *dk = qj_str_decode(d, k, ar, &klen);
            if (!dk) return q_oom(err);
            kname = dk;
        }
        q_ptr_push_key(c.ptr, sizeof c.ptr, kname, klen);
        if (key < 0) {
            char field[64], shown[64];
            q_quote_text(field, sizeof field, kname, klen);
            q_quote_text(shown, sizeof shown, kname, klen);
            return qrem_fail(err, QUIRE_E_REMINDER_UNKNOWN_FIELD, field, qj_offset(d, k), c.ptr,
                             "unknown field \"%s\" in a reminder", shown);
        }
        c.field = k_keys[key];
        /* null is a value only where the table says so: firedAtTurn (not yet
         * rendered) and _meta (ACP's convention); elsewhere it is a type error */
        if (qj_type_of(d, v) == QJ_NULL && (key == K_FIRED || key == K_META)) continue;
        int e = 0;
        switch (key) {
        case K_ID: st = want_string(&c, v, &out->id, NULL, false); break;
        case K_BODY: body = v; break;
        case K_TAGS: {
            if (qj_type_of(d, v) != QJ_ARRAY) { st = type_fail(&c, v, "an array of strings"); break; }
            uint32_t n = qj_at(d, v)->n;
            tags = n ? qarena_calloc(ar, n, sizeof *tags) : NULL;
            if (n && !tags) return q_oom(err);
            uint32_t idx = 0;
            size_t tbase = strlen(c.ptr);
            tagset ts;
            if (!tagset_init(&ts, ar, n)) return q_oom(err);
            for (uint32_t t = v + 1; t < qj_at(d, v)->end && st == QUIRE_OK; t = qj_next(d, t), idx++) {
                c.ptr[tbase] = '\0';
                q_ptr_push_index(c.ptr, sizeof c.ptr, idx);
                const char *tag = NULL;
                size_t tl = 0;
                if (qj_type_of(d, t) != QJ_STRING) {
                    st = qrem_fail(err, QUIRE_E_REMINDER_TYPE, "tags", qj_offset(d, t), c.ptr,
                                   "tags must be an array of strings, got %s in it", qj_type_name(qj_type_of(d, t)));
                    break;
                }
                st = want_string(&c, t, &tag, &tl, false);
                if (st) break;
                if (!tag_seen(&ts, tags, tag, tl)) tags[ntags++] = tag;
            }
            c.ptr[tbase] = '\0';
            break;
        }
        case K_DEDUPE: {
            const char *s = NULL;
            size_t n = 0;
            st = want_string(&c, v, &s, &n, true);
            if (!st && !qt_is_blank(s, n)) out->dedupe_key = s;
            break;
        }
        case K_TTL: st = want_int(&c, v, 1, QUIRE_E_REMINDER_TTL, "an integer >= 1", &out->ttl_turns); break;
        case K_PRESERVE:
            if (qj_type_of(d, v) == QJ_TRUE || qj_type_of(d, v) == QJ_FALSE) out->preserve_on_compact = qj_type_of(d, v) == QJ_TRUE;
            else st = type_fail(&c, v, "a boolean");
            break;
        case K_PROPAGATE:
            st = want_enum(&c, v, k_propagates, Q_COUNTOF(k_propagates), &e);
            out->propagate = (qpropagate)e;
            break;
        case K_ROLE:
            st = want_enum(&c, v, k_role_hints, Q_COUNTOF(k_role_hints), &e);
            out->role_hint = (qrole_hint)e;
            break;
        case K_MODE:
            st = want_enum(&c, v, k_modes, Q_COUNTOF(k_modes), &e);
            out->mode = (qmode)e;
            break;
        case K_SOURCE:
            st = want_enum(&c, v, k_sources, Q_COUNTOF(k_sources), &e);
            out->source = (qsource)e;
            break;
        case K_ORIGIN: st = want_string(&c, v, &out->origin, NULL, false); break;
        case K_FIRED: st = want_int(&c, v, 1, QUIRE_E_REMINDER_TYPE, "an integer >= 1 or null", &out->fired_at_turn); break;
        case K_AGENT: st = want_string(&c, v, &out->originating_agent_id, NULL, false); break;
        case K_META: {
            if (qj_type_of(d, v) != QJ_OBJECT) { st = type_fail(&c, v, "an object"); break; }
            qbuf mb;
            qbuf_init(&mb, ar->a);
            qw w;
            qw_init(&w, &mb, false);
            qw_node(&w, d, v);
            qw_dispose(&w);
            char *m = mb.oom ? NULL : qarena_strndup(ar, mb.data, mb.len);
            out->meta_len = mb.len;
            qbuf_free(&mb);
            if (!m) return q_oom(err);
            out->meta_json = m;
            break;
        }
        case K_SESSION: break; /* ACP: read by the caller */
        case K_TTL_REMAINING:
            /* 0 only for a retired reminder (checked below) */
            st = want_int(&c, v, 0, QUIRE_E_REMINDER_TTL, "an integer >= 0", &ttl_remaining);
            ttl_remaining_given = true;
            ttl_remaining_node = v;
            break;
        case K_ANCHOR: {
            int64_t a = 0;
            st = want_int(&c, v, 0, QUIRE_E_REMINDER_TYPE, "an integer >= 0", &a);
            if (!st && a >= (int64_t)UINT32_MAX)
                st = qrem_fail(err, QUIRE_E_REMINDER_TYPE, c.field, qj_offset(d, v), c.ptr, "anchorMessage is too large");
            if (!st) out->anchor_msg = (uint32_t)a;
            break;
        }
        case K_RETIRED:
            st = want_int(&c, v, 1, QUIRE_E_REMINDER_TYPE, "an integer >= 1", &out->retired_at_turn);
            break;
        default: break;
        }
    }
    if (st) return st;
    c.ptr[base] = '\0';
    out->tags = tags;
    out->ntags = ntags;
    if (body == QJ_NONE)
        return qrem_fail(err, QUIRE_E_REMINDER_BODY, "body", qj_offset(d, obj), c.ptr, "body is required");
    q_ptr_push_key(c.ptr, sizeof c.ptr, "body", 4);
    c.field = "body";
    if (qj_type_of(d, body) != QJ_STRING) return type_fail(&c, body, "a string");
    /* the raw text when it has no escapes: body_clean keeps only its cleaned copy */
    size_t bl = qj_at(d, body)->len;
    const char *b = qj_at(d, body)->p;
    if (qj_at(d, body)->flags & QJ_F_ESC) {
        char *db = qj_str_decode(d, body, ar, &bl);
        if (!db) return q_oom(err);
        b = db;
    }
    st = body_clean(out, b, bl, body_cap, ar, err, qj_offset(d, body), c.ptr);
    if (st) return st;
    c.ptr[base] = '\0';
    if (surf == QSURF_STATE) {
        if (!out->id)
            return qrem_fail(err, QUIRE_E_REMINDER_TYPE, "id", qj_offset(d, obj), c.ptr,
                             "id is required in a state file");
        if (ttl_remaining && out->ttl_turns && ttl_remaining > out->ttl_turns)
            return qrem_fail(err, QUIRE_E_REMINDER_TTL, "ttlRemaining", qj_offset(d, obj), c.ptr,
                             "ttlRemaining (%lld) exceeds ttlTurns (%lld)", (long long)ttl_remaining,
                             (long long)out->ttl_turns);
        if (ttl_remaining_given && ttl_remaining == 0 && !out->retired_at_turn) {
            q_ptr_push_key(c.ptr, sizeof c.ptr, "ttlRemaining", 12);
            return qrem_fail(err, QUIRE_E_REMINDER_TTL, "ttlRemaining", qj_offset(d, ttl_remaining_node), c.ptr,
                             "ttlRemaining 0 is only valid with retiredAtTurn (an expired reminder kept in history)");
        }
        if (ttl_remaining && !out->ttl_turns) out->ttl_turns = ttl_remaining;
        out->ttl_remaining = ttl_remaining_given ? ttl_remaining : out->ttl_turns;
    } else {
        out->ttl_remaining = out->ttl_turns;
    }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* State serialisation of one reminder                                       */
/* ------------------------------------------------------------------------ */

void qrem_write_state(qw *w, const qreminder *r) {
    qw_obj_begin(w);
    qw_key(w, "id"); qw_strz(w, r->id);
    qw_key(w, "body"); qw_str(w, r->body, r->body_len);
    qw_key(w, "tags");
    qw_arr_begin(w);
    for (uint32_t i = 0; i < r->ntags; i++) qw_strz(w, r->tags[i]);
    qw_arr_end(w);
    if (r->dedupe_key) { qw_key(w, "dedupeKey"); qw_strz(w, r->dedupe_key); }
    if (r->ttl_turns) {
        qw_key(w, "ttlTurns"); qw_int(w, r->ttl_turns);
        qw_key(w, "ttlRemaining"); qw_int(w, r->ttl_remaining);
    }
    qw_key(w, "preserveOnCompact"); qw_bool(w, r->preserve_on_compact);
    qw_key(w, "propagate"); qw_strz(w, qpropagate_name(r->propagate));
    qw_key(w, "roleHint"); qw_strz(w, qrole_hint_name(r->role_hint));
    qw_key(w, "mode"); qw_strz(w, qmode_name(r->mode));
    qw_key(w, "source"); qw_strz(w, qsource_name(r->source));
    qw_key(w, "origin"); qw_strz(w, r->origin ? r->origin : "host");
    qw_key(w, "firedAtTurn");
    if (r->fired_at_turn) qw_int(w, r->fired_at_turn);
    else qw_null(w);
    if (r->originating_agent_id) { qw_key(w, "originatingAgentId"); qw_strz(w, r->originating_agent_id); }
    if (r->anchor_msg != UINT32_MAX) { qw_key(w, "anchorMessage"); qw_int(w, r->anchor_msg); }
    if (r->retired_at_turn) { qw_key(w, "retiredAtTurn"); qw_int(w, r->retired_at_turn); }
    if (r->meta_json) {
        qw_key(w, "_meta");
        if (!w->pretty) {
            qw_raw_value(w, r->meta_json, r->meta_len); /* compact JSON text, as stored */
        } else {
            qj_doc md;
            if (qj_parse(&md, r->meta_json, r->meta_len, NULL, w->b->a, NULL) == QUIRE_OK) {
                qw_node(w, &md, 0);
                qj_doc_free(&md);
            } else {
                w->b->oom = true; /* stored _meta always parses: only allocation can fail */
            }
        }
    }
    qw_obj_end(w);
}

/* ------------------------------------------------------------------------ */
/* Derived ids: MurmurHash3 x64 128                                          */
/* ------------------------------------------------------------------------ */

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64u - r)); }
static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}
static inline uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8u * i);
    return v;
}

void qrem_hash128(const void *key, size_t len, uint32_t seed, uint64_t out[2]) {
    const uint8_t *data = key;
    const size_t nblocks = len / 16;
    uint64_t h1 = seed, h2 = seed;
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = le64(data + i * 16), k2 = le64(data + i * 16 + 8);
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = data + nblocks * 16;
    size_t rem = len & 15u;
    uint64_t k1 = 0, k2 = 0;
    if (rem > 8) {
        for (size_t i = rem; i > 8; i--) k2 ^= (uint64_t)tail[i - 1] << (8u * (unsigned)(i - 9));
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    }
    if (rem > 0) {
        size_t m = rem > 8 ? 8 : rem;
        for (size_t i = m; i > 0; i--) k1 ^= (uint64_t)tail[i - 1] << (8u * (unsigned)(i - 1));
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    }
    h1 ^= (uint64_t)len; h2 ^= (uint64_t)len;
    h1 += h2; h2 += h1;
    h1 = fmix64(h1); h2 = fmix64(h2);
    h1 += h2; h2 += h1;
    out[0] = h1;
    out[1] = h2;
}

static void put_le64(qbuf *b, uint64_t v) {
    char t[8];
    for (unsigned i = 0; i < 8; i++) t[i] = (char)(uint8_t)(v >> (8u * i));
    qbuf_put(b, t, 8);
}

bool qrem_derive_id(const quire_allocator *a, const char *session, uint64_t seq, const char *body, size_t n,
                    char out[37]) {
    static const char k_domain[] = "quire.reminder-id/1";
    if (!session) session = "";
    size_t sl = strlen(session);
    qbuf b;
    qbuf_init(&b, a);
    qbuf_put(&b, k_domain, sizeof k_domain); /* includes the NUL */
    put_le64(&b, (uint64_t)sl);
    qbuf_put(&b, session, sl);
    put_le64(&b, seq);
    put_le64(&b, (uint64_t)n);
    qbuf_put(&b, body, n);
    if (b.oom) { qbuf_free(&b); return false; }
    uint64_t h[2];
    qrem_hash128(b.data, b.len, 0, h);
    qbuf_free(&b);
    static const char hex[] = "0123456789abcdef";
    char raw[32];
    for (unsigned i = 0; i < 16; i++) {
        raw[i] = hex[(h[0] >> (60u - 4u * i)) & 15u];
        raw[16 + i] = hex[(h[1] >> (60u - 4u * i)) & 15u];
    }
    raw[12] = '8';                                                /* version 8: custom */
    raw[16] = hex[8u | ((unsigned)(strchr(hex, raw[16]) - hex) & 3u)]; /* variant 10xx */
    size_t o = 0;
    for (unsigned i = 0; i < 32; i++) {
        if (i == 8 || i == 12 || i == 16 || i == 20) out[o++] = '-';
        out[o++] = raw[i];
    }
    out[o] = '\0';
    return true;
}
