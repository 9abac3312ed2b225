/* The quire.session/1 log as text: its digest and its lines (DESIGN 7). */
#include "session/log.h"

/* ------------------------------------------------------------------------ */
/* Digest                                                                    */
/* ------------------------------------------------------------------------ */

void q_fnv1a128_begin(uint64_t *hi, uint64_t *lo) {
    *hi = 0x6c62272e07bb0142ull;
    *lo = 0x62b821756295c58dull;
}

void q_fnv1a128_more(uint64_t *hi_io, uint64_t *lo_io, const void *data, size_t len) {
    uint64_t hi = *hi_io, lo = *lo_io;
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        lo ^= p[i];
        /* (hi:lo) *= 2^88 + 0x13b  (mod 2^128) */
        uint64_t a = lo & 0xffffffffull, b = lo >> 32;
        uint64_t t0 = a * 0x13bull;
        uint64_t t1 = b * 0x13bull + (t0 >> 32);
        uint64_t nlo = (t1 << 32) | (t0 & 0xffffffffull);
        uint64_t nhi = hi * 0x13bull + (t1 >> 32) + (lo << 24);
        hi = nhi;
        lo = nlo;
    }
    *hi_io = hi;
    *lo_io = lo;
}

void q_fnv1a128(const void *data, size_t len, uint64_t *hi_out, uint64_t *lo_out) {
    q_fnv1a128_begin(hi_out, lo_out);
    q_fnv1a128_more(hi_out, lo_out, data, len);
}

void quire_digest128(const void *data, size_t len, char out[33]) {
    uint64_t hi, lo;
    q_fnv1a128(data, len, &hi, &lo);
    q_digest_hex(hi, lo, out);
}

void q_digest_hex(uint64_t hi, uint64_t lo, char out[33]) {
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) out[i] = hx[(hi >> (60 - 4 * i)) & 0xf];
    for (int i = 0; i < 16; i++) out[16 + i] = hx[(lo >> (60 - 4 * i)) & 0xf];
    out[32] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Lines                                                                     */
/* ------------------------------------------------------------------------ */

bool q_next_line(qline_iter *it, const char **line, size_t *len, size_t *offset) {
    if (it->pos >= it->len) return false;
    const char *s = it->src + it->pos;
    size_t rem = it->len - it->pos;
    const char *nl = memchr(s, '\n', rem);
    size_t n = nl ? (size_t)(nl - s) : rem;
    *line = s;
    *offset = it->pos;
    it->pos += n + (nl ? 1 : 0);
    if (n && s[n - 1] == '\r') n--;
    *len = n;
    it->lineno++;
    return true;
}

bool q_line_blank(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return false;
    return true;
}

void q_err_rebase_line(quire_error *e, const char *line, size_t len, size_t line_offset, uint32_t lineno) {
    if (!e) return;
    if (e->offset == SIZE_MAX) {
        e->line = lineno;
        e->column = 0;
        return;
    }
    size_t off = e->offset <= len ? e->offset : len;
    (void)line;
    e->offset = off + line_offset;
    e->line = lineno;
    e->column = (uint32_t)(off + 1);
}
