/* Internal foundation: allocation through the caller's hook, a growable byte
 * buffer, a bump arena, and error helpers. Nothing here touches I/O or globals
 * beyond the read-only default allocator. */
#ifndef QUIRE_CORE_BASE_H
#define QUIRE_CORE_BASE_H

#include "quire.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define Q_LIKELY(x) __builtin_expect(!!(x), 1)
#define Q_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define Q_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define Q_FALLTHROUGH __attribute__((fallthrough)) /* gcc and clang alike */
#else
#define Q_LIKELY(x) (x)
#define Q_UNLIKELY(x) (x)
#define Q_PRINTF(a, b)
#define Q_FALLTHROUGH ((void)0)
#endif

/* ---- allocation ---- */
const quire_allocator *q_alloc_default(void);
static inline const quire_allocator *q_alloc_of(const quire_options *o) {
    return (o && o->allocator) ? o->allocator : q_alloc_default();
}
void *q_malloc(const quire_allocator *a, size_t n);
void *q_realloc(const quire_allocator *a, void *p, size_t old_n, size_t new_n);
void q_free(const quire_allocator *a, void *p, size_t n);

/* ---- growable buffer: sticky out-of-memory flag, check once at the end ---- */
typedef struct qbuf {
    char *data;
    size_t len, cap;
    const quire_allocator *a;
    bool oom;
} qbuf;

void qbuf_init(qbuf *b, const quire_allocator *a);
void qbuf_free(qbuf *b);
bool qbuf_grow(qbuf *b, size_t extra); /* ensure cap >= len + extra (+1 for NUL) */
static inline void qbuf_put(qbuf *b, const void *p, size_t n) {
    if (Q_UNLIKELY(b->cap - b->len <= n) && !qbuf_grow(b, n)) return;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
}
static inline void qbuf_putc(qbuf *b, char c) {
    if (Q_UNLIKELY(b->cap - b->len <= 1) && !qbuf_grow(b, 1)) return;
    b->data[b->len++] = c;
}
static inline void qbuf_puts(qbuf *b, const char *s) { qbuf_put(b, s, strlen(s)); }
void qbuf_printf(qbuf *b, const char *fmt, ...) Q_PRINTF(2, 3);
void qbuf_put_u64(qbuf *b, uint64_t v);
void qbuf_put_i64(qbuf *b, int64_t v);
/* Moves the contents into a quire_bytes (NUL-terminated); false on OOM. */
bool qbuf_take(qbuf *b, quire_bytes *out);

/* ---- bump arena: many small allocations, one free ---- */
typedef struct qarena_chunk qarena_chunk;
typedef struct qarena {
    const quire_allocator *a;
    qarena_chunk *head;
    char *cur, *end;
    size_t total;
} qarena;

void qarena_init(qarena *ar, const quire_allocator *a);
void qarena_free(qarena *ar);
void *qarena_alloc(qarena *ar, size_t n);                 /* 16-byte aligned, NULL on OOM */
void *qarena_calloc(qarena *ar, size_t count, size_t size);
char *qarena_strndup(qarena *ar, const char *s, size_t n); /* NUL-terminated copy */

/* ---- errors ---- */
/* Sets code + message (printf); clears pointer/field/offset. Returns code. */
quire_status q_err(quire_error *e, quire_status code, const char *fmt, ...) Q_PRINTF(3, 4);
/* Sets code, offset, JSON pointer and message. Returns code. */
quire_status q_err_at(quire_error *e, quire_status code, size_t offset, const char *pointer,
                      const char *fmt, ...) Q_PRINTF(5, 6);
/* Fills line/column from offset within src. */
void q_err_locate(quire_error *e, const char *src, size_t len);
quire_status q_oom(quire_error *e);

/* Appends a JSON Pointer reference token (escaping ~ and /) to a NUL-terminated
 * pointer buffer of capacity cap; truncates safely. */
void q_ptr_push_key(char *ptr, size_t cap, const char *key, size_t keylen);
void q_ptr_push_index(char *ptr, size_t cap, size_t index);
/* The same with the pointer's length n known (strlen(ptr) == n); returns
 * the new length. */
size_t q_ptr_append_key(char *ptr, size_t n, size_t cap, const char *key, size_t keylen);
size_t q_ptr_append_index(char *ptr, size_t n, size_t cap, size_t index);

/* Writes s[0..n) into out (capacity cap, NUL-terminated) for quoting in an
 * error message: at most cap - 1 bytes cut on a UTF-8 character boundary
 * (with "..." when cut), control bytes shown as \n, \t or \xNN, so the
 * message stays one line of valid UTF-8 (s itself is assumed UTF-8). */
void q_quote_text(char *out, size_t cap, const char *s, size_t n);
/* Cuts a NUL-terminated buffer at the last whole UTF-8 character (and drops
 * any partial character inside it, see q_utf8_mend). */
void q_utf8_trim(char *s);
/* Removes in place every byte of s (NUL-terminated) that is not part of a
 * well-formed UTF-8 sequence: text assembled with %.Ns cuts or fixed buffers
 * becomes valid UTF-8, cut on character boundaries. */
void q_utf8_mend(char *s);
/* Largest length <= max of a prefix of the UTF-8 text s[0..n) that ends on a
 * character boundary (n when n <= max). */
size_t q_utf8_prefix(const char *s, size_t n, size_t max);

/* Limits with defaults applied. */
quire_limits q_limits(const quire_options *o);

#define Q_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

#endif
