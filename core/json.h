/* quire's JSON codec.
 *
 * Reader: one pass over the input builds a flat preorder tape of nodes that
 * point into the input (zero-copy): strings keep their escaped bytes, numbers
 * their text. Containers know their child count and where their subtree ends,
 * so skipping a value is O(1) and no recursion is needed anywhere. Strict
 * RFC 8259: UTF-8 of raw bytes and of \u escapes is validated, lone surrogates
 * are rejected, depth is bounded by an explicit stack.
 *
 * Writer: compact or two-space pretty, deterministic, minimal escaping; copies
 * parsed subtrees byte-exact (numbers and string escapes untouched).
 */
#ifndef QUIRE_CORE_JSON_H
#define QUIRE_CORE_JSON_H

#include "core/base.h"

typedef enum qj_type {
    QJ_NULL = 1, QJ_FALSE, QJ_TRUE, QJ_NUMBER, QJ_STRING, QJ_ARRAY, QJ_OBJECT
} qj_type;

#define QJ_F_ESC 0x1u     /* string: contains backslash escapes */
#define QJ_F_COMPACT 0x2u /* container: no whitespace inside its raw span */
#define QJ_F_ASCII 0x4u   /* string: raw bytes are all ASCII */

#define QJ_NONE UINT32_MAX

typedef struct qj_node {
    const char *p; /* string: first content byte; number: text; container: '[' or '{' */
    uint32_t len;  /* string: escaped content bytes; number: text; container: raw span */
    uint32_t end;  /* index one past the last node of this subtree (next sibling) */
    uint32_t n;    /* container: elements (object: members) */
    uint8_t type;
    uint8_t flags;
} qj_node;

typedef struct qj_doc {
    const char *src;
    size_t len;
    qj_node *nodes;
    uint32_t count, cap;
    const quire_allocator *a;
} qj_doc;

typedef struct qj_opts {
    uint32_t max_depth;        /* 0 = 1024 */
    uint64_t max_string_bytes; /* 0 = unlimited */
} qj_opts;

/* Parses src[0..len) into doc. On error fills err (offset, line:col, pointer,
 * message) and leaves doc empty. The doc references src; keep it alive. */
quire_status qj_parse(qj_doc *doc, const char *src, size_t len, const qj_opts *o,
                      const quire_allocator *a, quire_error *err);
/* The same, with every string scanned and UTF-8-checked one segment at a
 * time (no whole-input fast path): the reference the fast path is tested
 * against. Same results, slower. */
quire_status qj_parse_careful(qj_doc *doc, const char *src, size_t len, const qj_opts *o,
                              const quire_allocator *a, quire_error *err);
void qj_doc_free(qj_doc *doc);
/* JSON text s[0..n) with a lone UTF-16 surrogate escape (a \uD800-\uDBFF not
 * followed by its low half, or a lone \uDC00-\uDFFF), which this reader
 * refuses and JavaScript's JSON.stringify writes for a string cut inside an
 * emoji: replaces each such escape in place by \ufffd (the same six bytes)
 * and returns how many it replaced. */
size_t qj_mend_lone_surrogates(char *s, size_t n);
/* qj_parse that hands each element of an array held by a member of the root
 * object to fn as soon as the element is complete and valid (key: that
 * member's key node). fn returning true drops the element's nodes from the
 * tape: the array keeps its element count n but its subtree then holds only
 * the elements kept, so a long array is read through a tape the size of one
 * element, while it is still in the cache. The whole text is still checked:
 * an error anywhere fails the parse as qj_parse does (after fn has seen the
 * elements before it). */
typedef bool (*qj_elem_fn)(void *ud, const qj_doc *d, uint32_t key, uint32_t elem);
quire_status qj_parse_each(qj_doc *doc, const char *src, size_t len, const qj_opts *o, const quire_allocator *a,
                           quire_error *err, qj_elem_fn fn, void *ud);

static inline const qj_node *qj_at(const qj_doc *d, uint32_t i) { return &d->nodes[i]; }
static inline qj_type qj_type_of(const qj_doc *d, uint32_t i) { return (qj_type)d->nodes[i].type; }
static inline uint32_t qj_next(const qj_doc *d, uint32_t i) { return d->nodes[i].end; }
static inline size_t qj_offset(const qj_doc *d, uint32_t i) {
    /* strings point after their opening quote: report the quote */
    size_t off = (size_t)(d->nodes[i].p - d->src);
    return d->nodes[i].type == QJ_STRING && off ? off - 1 : off;
}
const char *qj_type_name(qj_type t); /* "string", "number", ... */

/* Object member lookup by key (decoded comparison); QJ_NONE if absent. */
uint32_t qj_getn(const qj_doc *d, uint32_t obj, const char *key, size_t keylen);
/* inline so that strlen of a literal folds away */
static inline uint32_t qj_get(const qj_doc *d, uint32_t obj, const char *key) { return qj_getn(d, obj, key, strlen(key)); }
/* True if string node i equals s (decoded comparison). */
bool qj_str_eqn(const qj_doc *d, uint32_t i, const char *s, size_t n);
/* inline so that strlen of a literal folds away */
static inline bool qj_str_eq(const qj_doc *d, uint32_t i, const char *s) { return qj_str_eqn(d, i, s, strlen(s)); }
/* Index of the first of names[0..n) that string node i equals (decoded
 * comparison), or -1. */
int qj_str_index(const qj_doc *d, uint32_t i, const char *const *names, size_t n);
/* Decoded length of a string node. */
size_t qj_str_decoded_len(const qj_doc *d, uint32_t i);
/* Decodes string node i into out (capacity >= qj_str_decoded_len + 1). Returns length. */
size_t qj_str_decode_into(const qj_doc *d, uint32_t i, char *out);
/* Decodes into an arena (NUL-terminated). NULL on OOM. */
char *qj_str_decode(const qj_doc *d, uint32_t i, qarena *ar, size_t *outlen);
/* Decodes escaped JSON string content (between quotes) into out; returns
 * length. out must hold the decoded length (at most n) and must not overlap s. */
size_t qj_unescape(const char *s, size_t n, char *out);
/* qj_unescape without the AVX-512 path (for tests comparing the two). */
size_t qj_unescape_portable(const char *s, size_t n, char *out);
/* Returns QJ_NONE when no key repeats in obj, else the index of the second key. */
uint32_t qj_find_dup_key(const qj_doc *d, uint32_t obj);
/* Matches the keys of object obj against names[0..n) (vals[i] = value node
 * or QJ_NONE). Returns QJ_NONE when every key is one of names and none
 * repeats; otherwise the first offending key node, with *dup telling a
 * repeated key from an unknown one. The caller words the error. */
uint32_t qj_match_fields(const qj_doc *d, uint32_t obj, const char *const *names, size_t n, uint32_t *vals, bool *dup);
/* qj_str_index and qj_match_fields with the names' lengths given (lens[i] =
 * strlen(names[i]); n <= 64): a plain key is compared only with names of
 * its length. *present gets bit i for each names[i] matched (also when an
 * offending key is returned: those before it). */
/* Inline: the transcript decoder calls them with constant tables and n for
 * every message and block (no call, the n stores of vals unrolled). */
static inline uint64_t qj_ld64_(const char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t qj_ld32_(const char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
/* The n bytes at a and b are equal (n is a name's length: small): two
 * overlapping words cover lengths 4..16, no loop whose exit depends on the
 * length; nothing past either string's n bytes is read. */
static inline bool qj_bytes_eq_(const char *a, const char *b, size_t n) {
    if (n >= 8) {
        if (n > 16) return memcmp(a, b, n) == 0;
        return ((qj_ld64_(a) ^ qj_ld64_(b)) | (qj_ld64_(a + n - 8) ^ qj_ld64_(b + n - 8))) == 0;
    }
    if (n >= 4) return ((qj_ld32_(a) ^ qj_ld32_(b)) | (qj_ld32_(a + n - 4) ^ qj_ld32_(b + n - 4))) == 0;
    if (n == 0) return true;
    return ((a[0] ^ b[0]) | (a[n / 2] ^ b[n / 2]) | (a[n - 1] ^ b[n - 1])) == 0; /* every byte of 1..3 */
}
static inline int qj_str_index_len(const qj_doc *d, uint32_t i, const char *const *names, const uint8_t *lens,
                                   size_t n) {
    const qj_node *nd = &d->nodes[i];
    if (nd->type != QJ_STRING) return -1;
    if (nd->flags & QJ_F_ESC) {
        for (size_t k = 0; k < n; k++)
            if (qj_str_eqn(d, i, names[k], lens[k])) return (int)k;
        return -1;
    }
    for (size_t k = 0; k < n; k++) /* the length first: most names fail there */
        if (lens[k] == nd->len && qj_bytes_eq_(names[k], nd->p, nd->len)) return (int)k;
    return -1;
}
static inline uint32_t qj_match_fields_len(const qj_doc *d, uint32_t obj, const char *const *names, const uint8_t *lens,
                                           size_t n, uint32_t *vals, uint64_t *present, bool *dup) {
    for (size_t i = 0; i < n; i++) vals[i] = QJ_NONE;
    *dup = false;
    uint64_t seen = 0;
    const qj_node *o = &d->nodes[obj];
    uint32_t k = obj + 1;
    size_t start = 0; /* as qj_match_fields: from the one after the last match */
    for (uint32_t m = 0; m < o->n; m++) {
        uint32_t v = k + 1;
        const qj_node *kn = &d->nodes[k];
        size_t i = start, tries = 0;
        if (kn->flags & QJ_F_ESC) {
            while (tries < n && !qj_str_eqn(d, k, names[i], lens[i])) { i = i + 1 == n ? 0 : i + 1; tries++; }
        } else {
            uint32_t len = kn->len;
            while (tries < n && !(lens[i] == len && qj_bytes_eq_(names[i], kn->p, len))) {
                i = i + 1 == n ? 0 : i + 1;
                tries++;
            }
        }
        if (tries == n) { *present = seen; return k; }
        if (seen >> i & 1) { *dup = true; *present = seen; return k; } /* the bits, not a load of vals[i] */
        vals[i] = v;
        seen |= 1ull << i;
        start = i + 1 == n ? 0 : i + 1;
        k = d->nodes[v].end;
    }
    *present = seen;
    return QJ_NONE;
}
/* Parses an integer number node (no fraction/exponent) into *v; false if not one or out of range. */
bool qj_int64(const qj_doc *d, uint32_t i, int64_t *v);

/* ---- writer ---- */
/* The writer's one-step helpers are inlined at every call (their literal
 * keys' lengths fold to constants there, no strlen or memcpy call). */
#if defined(__GNUC__)
#define QW_INLINE static inline __attribute__((always_inline))
#else
#define QW_INLINE static inline
#endif
typedef struct qw {
    qbuf *b;
    bool pretty;
    bool after_key;
    uint32_t depth;
    uint32_t cap;
    uint8_t *count; /* per depth: 0 = no element yet */
    uint8_t small[64];
} qw;

void qw_init(qw *w, qbuf *b, bool pretty);
void qw_dispose(qw *w);
/* Brackets: compact output with room in the buffer and the depth table is
 * written inline; anything else (pretty output, growth) by qw_open/qw_close. */
void qw_open(qw *w, char c);
void qw_close(qw *w, char c);
QW_INLINE void qw_open_inline(qw *w, char c) {
    qbuf *b = w->b;
    if (Q_LIKELY(!w->pretty && w->depth + 1 < w->cap && b->cap - b->len > 2)) {
        if (w->after_key) {
            w->after_key = false;
        } else if (w->depth) {
            if (w->count[w->depth]) b->data[b->len++] = ',';
            else w->count[w->depth] = 1;
        }
        b->data[b->len++] = c;
        w->count[++w->depth] = 0;
        return;
    }
    qw_open(w, c);
}
QW_INLINE void qw_close_inline(qw *w, char c) {
    qbuf *b = w->b;
    if (Q_LIKELY(!w->pretty && w->depth && b->cap - b->len > 1)) {
        w->depth--;
        b->data[b->len++] = c;
        return;
    }
    qw_close(w, c);
}
static inline void qw_obj_begin(qw *w) { qw_open_inline(w, '{'); }
static inline void qw_obj_end(qw *w) { qw_close_inline(w, '}'); }
static inline void qw_arr_begin(qw *w) { qw_open_inline(w, '['); }
static inline void qw_arr_end(qw *w) { qw_close_inline(w, ']'); }
void qw_key_esc(qw *w, const char *raw, size_t n);      /* already-escaped key content */
/* k is plain ASCII without escapes (so it is its own escaped form); inline
 * so that strlen of a literal folds away */
QW_INLINE void qw_key(qw *w, const char *k) {
    size_t n = strlen(k);
    qbuf *b = w->b;
    /* a key in a compact object: "k": written in place, after a comma unless
     * it is the object's first (the comma is stored either way, then
     * overwritten when not wanted: no branch on it) */
    if (Q_LIKELY(!w->pretty && !w->after_key && w->depth && b->cap - b->len > n + 4)) {
        char *o = b->data + b->len;
        size_t comma = w->count[w->depth] != 0;
        w->count[w->depth] = 1;
        o[0] = ',';
        o += comma;
        o[0] = '"';
        memcpy(o + 1, k, n);
        o[n + 1] = '"';
        o[n + 2] = ':';
        b->len += n + 3 + comma;
        w->after_key = true;
        return;
    }
    qw_key_esc(w, k, n);
}
void qw_keyn(qw *w, const char *k, size_t n);           /* escapes as needed */
void qw_str(qw *w, const char *s, size_t n);            /* escapes as needed */
static inline void qw_strz(qw *w, const char *s) { qw_str(w, s, strlen(s)); }
void qw_str_esc(qw *w, const char *raw, size_t n);      /* already-escaped content */
/* s is plain ASCII with nothing to escape (a literal such as a type name):
 * after a key it is written in place */
QW_INLINE void qw_lit(qw *w, const char *s) {
    size_t n = strlen(s);
    qbuf *b = w->b;
    if (Q_LIKELY(w->after_key && b->cap - b->len > n + 2)) {
        char *o = b->data + b->len;
        o[0] = '"';
        memcpy(o + 1, s, n);
        o[n + 1] = '"';
        b->len += n + 2;
        w->after_key = false;
        return;
    }
    qw_str_esc(w, s, n);
}
/* Stores "k":"v" at o (k and v written as given, the room checked by the
 * caller); returns its length. */
QW_INLINE size_t qw_put_kv(char *o, const char *k, size_t nk, const char *v, size_t nv) {
    o[0] = '"';
    memcpy(o + 1, k, nk);
    o[nk + 1] = '"';
    o[nk + 2] = ':';
    o[nk + 3] = '"';
    memcpy(o + nk + 4, v, nv);
    o[nk + nv + 4] = '"';
    return nk + nv + 5;
}
/* An object opened with its first member, a literal: {"k":"v" (k and v plain
 * ASCII with nothing to escape). Compact output with room: one step, the
 * buffer's length and the depth table read once (the byte stores may alias
 * them); otherwise the three calls. */
QW_INLINE void qw_obj_lit(qw *w, const char *k, const char *v) {
    size_t nk = strlen(k), nv = strlen(v);
    qbuf *b = w->b;
    uint32_t depth = w->depth;
    size_t len = b->len;
    if (Q_LIKELY(!w->pretty && depth + 1 < w->cap && b->cap - len > nk + nv + 8)) {
        uint8_t *cnt = w->count;
        size_t comma = 0;
        if (w->after_key) {
            w->after_key = false;
        } else if (depth) {
            comma = cnt[depth] != 0;
            cnt[depth] = 1;
        }
        cnt[depth + 1] = 1; /* the object has its first member */
        w->depth = depth + 1;
        char *o = b->data + len;
        o[0] = ',';
        o += comma;
        o[0] = '{';
        b->len = len + comma + 1 + qw_put_kv(o + 1, k, nk, v, nv);
        return;
    }
    qw_obj_begin(w);
    qw_key(w, k);
    qw_lit(w, v);
}
/* A key (plain ASCII) and its value, already-escaped string content, in one
 * reservation: "k":"raw" (after a comma unless the object's first). Inline:
 * the key's length is a constant at the call. */
QW_INLINE void qw_key_str_esc(qw *w, const char *k, size_t nk, const char *raw, size_t n) {
    qbuf *b = w->b;
    uint32_t depth = w->depth;
    size_t len = b->len;
    if (Q_LIKELY(!w->pretty && !w->after_key && depth && b->cap - len > nk + n + 6)) {
        size_t comma = w->count[depth] != 0;
        w->count[depth] = 1;
        char *o = b->data + len;
        o[0] = ',';
        o += comma;
        b->len = len + comma + qw_put_kv(o, k, nk, raw, n);
        return;
    }
    qw_key_esc(w, k, nk);
    qw_str_esc(w, raw, n);
}
void qw_num_raw(qw *w, const char *s, size_t n);        /* number text as is */
void qw_int(qw *w, int64_t v);
void qw_bool(qw *w, bool v);
void qw_null(qw *w);
void qw_node(qw *w, const qj_doc *d, uint32_t i);       /* copies a parsed subtree */
/* Writes a complete JSON text given as bytes (parsed or trusted compact JSON). */
void qw_raw_value(qw *w, const char *json, size_t n);
/* Appends JSON string escaping of s to b (no quotes). */
void qj_escape(qbuf *b, const char *s, size_t n);

#endif
