#include "core/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void *def_malloc(size_t n, void *ud) { (void)ud; return malloc(n ? n : 1); }
static void *def_realloc(void *p, size_t o, size_t n, void *ud) { (void)o; (void)ud; return realloc(p, n ? n : 1); }
static void def_free(void *p, size_t n, void *ud) { (void)n; (void)ud; free(p); }
static const quire_allocator k_default_alloc = {def_malloc, def_realloc, def_free, NULL};

const quire_allocator *q_alloc_default(void) { return &k_default_alloc; }

void *q_malloc(const quire_allocator *a, size_t n) { return a->malloc_fn(n, a->ud); }
void *q_realloc(const quire_allocator *a, void *p, size_t o, size_t n) {
    if (!p) return a->malloc_fn(n, a->ud);
    return a->realloc_fn(p, o, n, a->ud);
}
void q_free(const quire_allocator *a, void *p, size_t n) { if (p) a->free_fn(p, n, a->ud); }

const char *quire_version(void) { return "0.2.0"; }

/* ---- qbuf ---- */
void qbuf_init(qbuf *b, const quire_allocator *a) {
    b->data = NULL; b->len = b->cap = 0; b->a = a ? a : q_alloc_default(); b->oom = false;
}
void qbuf_free(qbuf *b) {
    q_free(b->a, b->data, b->cap);
    b->data = NULL; b->len = b->cap = 0;
}
bool qbuf_grow(qbuf *b, size_t extra) {
    if (b->oom) return false;
    if (extra > SIZE_MAX / 2 - b->len) { b->oom = true; return false; }
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return true;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < need) ncap += ncap / 2 + 64;
    char *nd = q_realloc(b->a, b->data, b->cap, ncap);
    if (!nd) { b->oom = true; return false; }
    b->data = nd; b->cap = ncap;
    return true;
}
void qbuf_printf(qbuf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) { qbuf_put(b, tmp, (size_t)n); return; }
    if (!qbuf_grow(b, (size_t)n + 1)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}
void qbuf_put_u64(qbuf *b, uint64_t v) {
    char tmp[24]; size_t i = sizeof tmp;
    do { tmp[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    qbuf_put(b, tmp + i, sizeof tmp - i);
}
void qbuf_put_i64(qbuf *b, int64_t v) {
    if (v < 0) { qbuf_putc(b, '-'); qbuf_put_u64(b, (uint64_t)0 - (uint64_t)v); }
    else qbuf_put_u64(b, (uint64_t)v);
}
bool qbuf_take(qbuf *b, quire_bytes *out) {
    if (!qbuf_grow(b, 0)) { qbuf_free(b); return false; }
    b->data[b->len] = '\0';
    out->data = b->data; out->len = b->len; out->alloc_ = b->a;
    /* remember capacity for the sized free: store in a hidden slot is overkill;
     * the default allocator ignores sizes, custom ones get len + 1 via realloc below */
    if (b->cap != b->len + 1) {
        char *nd = q_realloc(b->a, b->data, b->cap, b->len + 1);
        if (nd) out->data = nd;
        else { out->data = NULL; out->len = 0; qbuf_free(b); return false; }
    }
    b->data = NULL; b->len = b->cap = 0;
    return true;
}
void quire_bytes_free(quire_bytes *b) {
    if (!b || !b->data) return;
    q_free(b->alloc_ ? b->alloc_ : q_alloc_default(), b->data, b->len + 1);
    b->data = NULL; b->len = 0;
}

/* ---- arena ---- */
struct qarena_chunk { qarena_chunk *next; size_t size; };
#define QA_ALIGN 16u
#define QA_HDR ((sizeof(qarena_chunk) + QA_ALIGN - 1) & ~(size_t)(QA_ALIGN - 1))

void qarena_init(qarena *ar, const quire_allocator *a) {
    ar->a = a ? a : q_alloc_default(); ar->head = NULL; ar->cur = ar->end = NULL; ar->total = 0;
}
void qarena_free(qarena *ar) {
    qarena_chunk *c = ar->head;
    while (c) { qarena_chunk *n = c->next; q_free(ar->a, c, c->size); c = n; }
    ar->head = NULL; ar->cur = ar->end = NULL; ar->total = 0;
}
void *qarena_alloc(qarena *ar, size_t n) {
    n = (n + QA_ALIGN - 1) & ~(size_t)(QA_ALIGN - 1);
    if (n == 0) n = QA_ALIGN;
    if ((size_t)(ar->end - ar->cur) < n) {
        size_t want = ar->total < 4096 ? 4096 : ar->total; /* geometric growth */
        if (want > ((size_t)1 << 26)) want = (size_t)1 << 26;
        if (n > SIZE_MAX - QA_HDR) return NULL;
        size_t size = QA_HDR + (n > want ? n : want);
        qarena_chunk *c = q_malloc(ar->a, size);
        if (!c) return NULL;
        c->next = ar->head; c->size = size; ar->head = c;
        ar->total += size;
        ar->cur = (char *)c + QA_HDR; ar->end = (char *)c + size;
    }
    void *p = ar->cur;
    ar->cur += n;
    return p;
}
void *qarena_calloc(qarena *ar, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = qarena_alloc(ar, count * size);
    if (p) memset(p, 0, count * size);
    return p;
}
char *qarena_strndup(qarena *ar, const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *p = qarena_alloc(ar, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* ---- errors ---- */
static const char *const k_status_names[QUIRE_STATUS_COUNT_] = {
    "QUIRE_OK", "QUIRE_E_NOMEM", "QUIRE_E_JSON", "QUIRE_E_LIMIT", "QUIRE_E_SCHEMA",
    "QUIRE_E_UNSUPPORTED", "QUIRE_E_REMINDER_BODY", "QUIRE_E_REMINDER_TTL",
    "QUIRE_E_REMINDER_ENUM", "QUIRE_E_REMINDER_UNKNOWN_FIELD", "QUIRE_E_REMINDER_TYPE",
    "QUIRE_E_INVALID", "QUIRE_E_BUDGET", "QUIRE_E_SESSION", "QUIRE_E_MISMATCH",
    "QUIRE_E_VALIDATE",
    "QUIRE_E_PROVIDER",
};
const char *quire_status_name(quire_status s) {
    if ((unsigned)s >= QUIRE_STATUS_COUNT_) return "QUIRE_E_UNKNOWN";
    return k_status_names[s];
}

/* Length of s[0..n) without a trailing incomplete UTF-8 sequence: text cut
 * to fit a fixed buffer must stay valid UTF-8 (it ends up in events and on
 * stderr). */
static size_t utf8_whole_len(const char *s, size_t n) {
    size_t i = n, back = 0;
    while (i > 0 && back < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) { i--; back++; }
    if (i == 0) return n;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (need == 1) return n;
    return back + 1 >= need ? n : i - 1;
}
/* Length of the well-formed UTF-8 sequence at s[0..n) (1..4), or 0 when the
 * bytes there do not start one (Unicode Table 3-7). */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t need = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!need || n < need) return 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;
    else if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t k = 2; k < need; k++)
        if ((s[k] & 0xC0) != 0x80) return 0;
    return need;
}

/* Removes, in place, every byte that does not belong to a well-formed UTF-8
 * sequence. A string cut with %.Ns (or any fixed-size buffer) in the middle
 * of a character loses that partial character; everything else is kept. */
static void utf8_mend(char *str) {
    unsigned char *s = (unsigned char *)str;
    size_t n = strlen(str), o = 0;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_seq(s + i, n - i);
        if (!l) { i++; continue; }
        if (o != i) memmove(s + o, s + i, l);
        o += l;
        i += l;
    }
    s[o] = '\0';
}
static void utf8_trim(char *s) { utf8_mend(s); }
/* An error message is one line of text whatever it quotes: a control byte
 * that reached it from decoded input is written as an escape. */
static void msg_one_line(char *m, size_t cap) {
    utf8_mend(m);
    size_t n = strlen(m), i = 0;
    while (i < n && (unsigned char)m[i] >= 0x20 && m[i] != 0x7F) i++;
    if (i == n) return;
    char tmp[sizeof ((quire_error *)0)->message];
    size_t tn = n < sizeof tmp ? n : sizeof tmp - 1;
    memcpy(tmp, m, tn);
    q_quote_text(m, cap, tmp, tn);
}
void q_utf8_trim(char *s) { utf8_mend(s); }
void q_utf8_mend(char *s) { utf8_mend(s); }

size_t q_utf8_prefix(const char *s, size_t n, size_t max) {
    if (n <= max) return n;
    size_t i = max;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    return i;
}

void q_quote_text(char *out, size_t cap, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    if (!cap) return;
    size_t o = 0, i = 0;
    size_t room = cap > 4 ? cap - 4 : 0; /* keep space for "..." and the NUL */
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[5];
        size_t el = 0;
        if (c == '\n') { esc[0] = '\\'; esc[1] = 'n'; el = 2; }
        else if (c == '\t') { esc[0] = '\\'; esc[1] = 't'; el = 2; }
        else if (c < 0x20 || c == 0x7F) { esc[0] = '\\'; esc[1] = 'x'; esc[2] = hex[c >> 4]; esc[3] = hex[c & 15]; el = 4; }
        if (o + (el ? el : 1) > room) break;
        if (el) { memcpy(out + o, esc, el); o += el; }
        else out[o++] = (char)c;
    }
    out[o] = '\0';
    if (i < n) { /* cut: end on a whole character, then mark it */
        o = utf8_whole_len(out, o);
        if (o + 3 < cap) { memcpy(out + o, "...", 3); o += 3; }
        out[o] = '\0';
    }
}

static void err_reset(quire_error *e, quire_status code) {
    e->code = code; e->offset = SIZE_MAX; e->line = 0; e->column = 0;
    e->pointer[0] = '\0'; e->field[0] = '\0'; e->message[0] = '\0';
}
quire_status q_err(quire_error *e, quire_status code, const char *fmt, ...) {
    if (!e) return code;
    err_reset(e, code);
    va_list ap; va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    msg_one_line(e->message, sizeof e->message);
    return code;
}
quire_status q_err_at(quire_error *e, quire_status code, size_t offset, const char *pointer,
                      const char *fmt, ...) {
    if (!e) return code;
    err_reset(e, code);
    e->offset = offset;
    if (pointer) { snprintf(e->pointer, sizeof e->pointer, "%s", pointer); utf8_trim(e->pointer); }
    va_list ap; va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    msg_one_line(e->message, sizeof e->message);
    return code;
}
quire_status q_oom(quire_error *e) { return q_err(e, QUIRE_E_NOMEM, "out of memory"); }

void q_err_locate(quire_error *e, const char *src, size_t len) {
    if (!e || e->offset == SIZE_MAX || !src) return;
    size_t off = e->offset < len ? e->offset : len;
    uint32_t line = 1; size_t ls = 0;
    const char *p = src, *end = src + off;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) { line++; p++; ls = (size_t)(p - src); }
    e->line = line;
    e->column = (uint32_t)(off - ls + 1);
}

size_t q_ptr_append_key(char *ptr, size_t n, size_t cap, const char *key, size_t keylen) {
    if (n + 2 > cap) return n;
    if (n + keylen + 2 <= cap) { /* the common key: fits, nothing to escape */
        size_t i = 0;
        while (i < keylen && key[i] != '~' && key[i] != '/') i++;
        if (i == keylen) {
            ptr[n] = '/';
            memcpy(ptr + n + 1, key, keylen);
            n += keylen + 1;
            ptr[n] = '\0';
            return n;
        }
    }
    ptr[n++] = '/';
    for (size_t i = 0; i < keylen; i++) {
        char c = key[i];
        const char *rep = c == '~' ? "~0" : c == '/' ? "~1" : NULL;
        size_t rl = rep ? 2 : 1;
        if (n + rl + 1 > cap) { n = utf8_whole_len(ptr, n); break; } /* cut on a character boundary */
        if (rep) { ptr[n++] = rep[0]; ptr[n++] = rep[1]; }
        else ptr[n++] = c;
    }
    ptr[n] = '\0';
    return n;
}
size_t q_ptr_append_index(char *ptr, size_t n, size_t cap, size_t index) {
    char tmp[24];
    size_t i = sizeof tmp;
    do { tmp[--i] = (char)('0' + index % 10); index /= 10; } while (index);
    return q_ptr_append_key(ptr, n, cap, tmp + i, sizeof tmp - i);
}
void q_ptr_push_key(char *ptr, size_t cap, const char *key, size_t keylen) {
    (void)q_ptr_append_key(ptr, strlen(ptr), cap, key, keylen);
}
void q_ptr_push_index(char *ptr, size_t cap, size_t index) {
    (void)q_ptr_append_index(ptr, strlen(ptr), cap, index);
}

quire_limits q_limits(const quire_options *o) {
    quire_limits l = {1024, (uint64_t)1 << 30, (uint64_t)256 << 20, 10000000u};
    if (o) {
        if (o->limits.max_depth) l.max_depth = o->limits.max_depth;
        if (o->limits.max_input_bytes) l.max_input_bytes = o->limits.max_input_bytes;
        if (o->limits.max_string_bytes) l.max_string_bytes = o->limits.max_string_bytes;
        if (o->limits.max_messages) l.max_messages = o->limits.max_messages;
    }
    if (l.max_input_bytes > 0xFFFFFFFEu) l.max_input_bytes = 0xFFFFFFFEu;
    return l;
}
