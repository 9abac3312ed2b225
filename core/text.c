/* Pure text helpers: UTF-8 validation, body hygiene, grapheme-safe cuts.
 * See core/text.h for the contract and docs/text.md for the formats. */
#include "core/text.h"

#include <utf8proc.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define QT_SSE2 1
#endif

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                     */
/* ------------------------------------------------------------------------ */

/* Length of the well-formed sequence at p (rem bytes available), 0 if the
 * sequence starting at p is ill-formed or truncated (Unicode Table 3-7). */
static size_t qt_seq_len(const uint8_t *p, size_t rem) {
    uint8_t c = p[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0; /* stray continuation or overlong 2-byte lead */
    if (c < 0xE0) return (rem >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c < 0xF0) {
        if (rem < 3) return 0;
        uint8_t lo = c == 0xE0 ? 0xA0 : 0x80; /* E0 80..9F: overlong */
        uint8_t hi = c == 0xED ? 0x9F : 0xBF; /* ED A0..BF: surrogates */
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80) return 0;
        return 3;
    }
    if (c < 0xF5) {
        if (rem < 4) return 0;
        uint8_t lo = c == 0xF0 ? 0x90 : 0x80; /* F0 80..8F: overlong */
        uint8_t hi = c == 0xF4 ? 0x8F : 0xBF; /* F4 90..: above U+10FFFF */
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        return 4;
    }
    return 0; /* F5..FF: never valid (5- and 6-byte forms, > U+10FFFF) */
}

/* Decodes the code point at s[i] (i < n). An ill-formed byte decodes as
 * U+FFFD of length 1, so walking never stalls and never reads past n. */
static int32_t qt_decode(const uint8_t *s, size_t n, size_t i, size_t *len) {
    const uint8_t *p = s + i;
    size_t l = qt_seq_len(p, n - i);
    *len = l ? l : 1;
    switch (l) {
    case 1: return p[0];
    case 2: return (int32_t)(((uint32_t)(p[0] & 0x1F) << 6) | (uint32_t)(p[1] & 0x3F));
    case 3:
        return (int32_t)(((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) |
                         (uint32_t)(p[2] & 0x3F));
    case 4:
        return (int32_t)(((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
                         ((uint32_t)(p[2] & 0x3F) << 6) | (uint32_t)(p[3] & 0x3F));
    default: return 0xFFFD;
    }
}

bool qt_utf8_valid(const char *str, size_t n, size_t *bad) {
    const uint8_t *s = (const uint8_t *)str;
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path: 32 bytes, then 16, per step. */
#if QT_SSE2
        while (n - i >= 32) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
            if (_mm_movemask_epi8(_mm_or_si128(a, b))) break;
            i += 32;
        }
        if (n - i >= 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            if (!_mm_movemask_epi8(a)) { i += 16; continue; }
        }
#else
        while (n - i >= 16) {
            uint64_t a, b;
            memcpy(&a, s + i, 8);
            memcpy(&b, s + i + 8, 8);
            if ((a | b) & UINT64_C(0x8080808080808080)) break;
            i += 16;
        }
#endif
        /* Byte-wise until the next ASCII stretch; multibyte text stays here. */
        size_t stop = n - i > 16 ? i + 16 : n;
        while (i < stop) {
            if (s[i] < 0x80) { i++; continue; }
            size_t l = qt_seq_len(s + i, n - i);
            if (Q_UNLIKELY(!l)) {
                if (bad) *bad = i;
                return false;
            }
            i += l;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Character properties                                                      */
/* ------------------------------------------------------------------------ */

/* White_Space beyond ASCII: U+0085 and general categories Zs, Zl, Zp. */
static bool qt_is_ws_cp(int32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
    if (cp == 0x85) return true;
    utf8proc_category_t cat = utf8proc_category(cp);
    return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

/* Default_Ignorable_Code_Point (U+00AD, U+200B..U+200F, U+2060.., U+FEFF,
 * variation selectors, ...): invisible, so looked through when matching a tag. */
static bool qt_is_ignorable_cp(int32_t cp) {
    return cp >= 0x80 && utf8proc_get_property(cp)->ignorable;
}

/* ------------------------------------------------------------------------ */
/* Hygiene                                                                   */
/* ------------------------------------------------------------------------ */

/* 1 = byte may start something phase 1 removes: C0 controls other than \t and
 * \n, DEL, 0xC2 (C1 controls are C2 80..C2 9F), 0xE2 (bidi controls). */
static const uint8_t k_hyg_special[256] = {
    1,1,1,1,1,1,1,1,1,0,0,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
};

static const char k_tag_name[] = "system-reminder";

/* True if p[i..len) continues an opener into the wrapper tag:
 * ws* ('/' ws*)? "system-reminder" (ASCII case-insensitive), looking through
 * default-ignorable code points anywhere. */
static bool qt_tag_follows(const uint8_t *p, size_t len, size_t i) {
    bool slash = false;
    for (;;) {
        if (i >= len) return false;
        uint8_t c = p[i];
        if (c == '/' && !slash) { slash = true; i++; continue; }
        if (c < 0x80) {
            if (c == ' ' || (c >= 0x09 && c <= 0x0D)) { i++; continue; }
            break;
        }
        size_t l;
        int32_t cp = qt_decode(p, len, i, &l);
        if (!qt_is_ws_cp(cp) && !qt_is_ignorable_cp(cp)) return false;
        i += l;
    }
    for (size_t k = 0; k_tag_name[k];) {
        if (i >= len) return false;
        uint8_t c = p[i];
        if (c < 0x80) {
            if (c >= 'A' && c <= 'Z') c = (uint8_t)(c + ('a' - 'A'));
            if (c != (uint8_t)k_tag_name[k]) return false;
            i++, k++;
            continue;
        }
        size_t l;
        int32_t cp = qt_decode(p, len, i, &l);
        if (!qt_is_ignorable_cp(cp)) return false;
        i += l;
    }
    return true;
}

/* Phase 2: neutralises tag openers inside out->data[from..len). Openers are
 * first marked in place with bytes phase 1 guarantees absent (0x00 for '<',
 * 0x01 x3 for a 3-byte lookalike), then the region is expanded backwards. */
static size_t qt_neutralise_tags(qbuf *out, size_t from) {
    uint8_t *p = (uint8_t *)out->data;
    size_t len = out->len, k1 = 0, k3 = 0;
    for (size_t i = from; i < len; i++) {
        uint8_t c = p[i];
        if (c == '<') {
            if (qt_tag_follows(p, len, i + 1)) { p[i] = 0x00; k1++; }
        } else if (c == 0xEF && i + 2 < len &&
                   ((p[i + 1] == 0xBC && p[i + 2] == 0x9C) ||   /* U+FF1C fullwidth < */
                    (p[i + 1] == 0xB9 && p[i + 2] == 0xA4))) { /* U+FE64 small < */
            if (qt_tag_follows(p, len, i + 3)) { p[i] = p[i + 1] = p[i + 2] = 0x01; k3++; i += 2; }
        }
    }
    if (!k1 && !k3) return 0;
    size_t grow = 3 * k1 + k3;
    if (!qbuf_grow(out, grow)) {
        for (size_t i = from; i < len; i++) /* leave the text readable on OOM */
            if (p[i] == 0x00) p[i] = '<';
        return k1 + k3;
    }
    p = (uint8_t *)out->data;
    size_t src = len, dst = len + grow;
    while (src > from) {
        uint8_t c = p[src - 1];
        if (c > 0x01) { p[--dst] = c; src--; continue; }
        dst -= 4;
        memcpy(p + dst, "&lt;", 4);
        src -= c == 0x00 ? 1 : 3;
    }
    out->len = len + grow;
    return k1 + k3;
}

void qt_hygiene(qbuf *out, const char *str, size_t n, qt_hygiene_report *rep) {
    const uint8_t *s = (const uint8_t *)str;
    size_t from = out->len, run = 0, ctl = 0, bidi = 0;
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        if (Q_LIKELY(!k_hyg_special[c])) { i++; continue; }
        size_t drop = 0;
        if (c < 0x80) { /* C0 control (not \t \n) or DEL */
            drop = 1;
            ctl++;
        } else if (c == 0xC2) {
            if (i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F) { drop = 2; ctl++; }
        } else if (i + 2 < n && ((s[i + 1] == 0x80 && s[i + 2] >= 0xAA && s[i + 2] <= 0xAE) ||
                                 (s[i + 1] == 0x81 && s[i + 2] >= 0xA6 && s[i + 2] <= 0xA9))) {
            drop = 3; /* U+202A..U+202E, U+2066..U+2069 */
            bidi++;
        }
        if (!drop) { i++; continue; }
        qbuf_put(out, s + run, i - run);
        i += drop;
        run = i;
    }
    qbuf_put(out, s + run, n - run);
    size_t tags = out->oom ? 0 : qt_neutralise_tags(out, from);
    if (rep) {
        rep->controls_removed += ctl;
        rep->bidi_removed += bidi;
        rep->tags_neutralised += tags;
    }
}

/* ------------------------------------------------------------------------ */
/* Grapheme boundaries                                                       */
/* ------------------------------------------------------------------------ */
/*
 * utf8proc_grapheme_break_stateful must see every code point from a point
 * where its state is known. A code point c is a resync point when the state
 * after c does not depend on what came before it: that holds unless c is
 * Extend, ZWJ (both fold into an emoji ZWJ sequence, and carry Indic conjunct
 * state) or a Regional Indicator (pair parity). Starting a walk at such a c
 * with a zero state reproduces exactly the decisions a scan from the start of
 * the string makes for every position after c. ASCII is always a resync point,
 * so in ordinary text the walk starts one byte back.
 */
static bool qt_is_resync_cp(int32_t cp) {
    if (cp < 0x80) return true;
    switch ((utf8proc_boundclass_t)utf8proc_get_property(cp)->boundclass) {
    case UTF8PROC_BOUNDCLASS_OTHER:
    case UTF8PROC_BOUNDCLASS_CR:
    case UTF8PROC_BOUNDCLASS_LF:
    case UTF8PROC_BOUNDCLASS_CONTROL:
    case UTF8PROC_BOUNDCLASS_L:
    case UTF8PROC_BOUNDCLASS_V:
    case UTF8PROC_BOUNDCLASS_T:
    case UTF8PROC_BOUNDCLASS_LV:
    case UTF8PROC_BOUNDCLASS_LVT:
    case UTF8PROC_BOUNDCLASS_SPACINGMARK:
    case UTF8PROC_BOUNDCLASS_PREPEND:
    case UTF8PROC_BOUNDCLASS_EXTENDED_PICTOGRAPHIC:
        return true;
    case UTF8PROC_BOUNDCLASS_START:
    case UTF8PROC_BOUNDCLASS_EXTEND:
    case UTF8PROC_BOUNDCLASS_ZWJ:
    case UTF8PROC_BOUNDCLASS_REGIONAL_INDICATOR:
    case UTF8PROC_BOUNDCLASS_E_BASE:
    case UTF8PROC_BOUNDCLASS_E_MODIFIER:
    case UTF8PROC_BOUNDCLASS_GLUE_AFTER_ZWJ:
    case UTF8PROC_BOUNDCLASS_E_BASE_GAZ:
    case UTF8PROC_BOUNDCLASS_E_ZWG:
    default:
        return false;
    }
}

/* Finds a resync code point start p in [lo, hi) scanning back from hi - 1.
 * Offset 0 always qualifies (the true start). False if none in the window. */
static bool qt_find_resync(const uint8_t *s, size_t n, size_t hi, size_t lo, size_t *pos) {
    for (size_t i = hi; i-- > lo;) {
        uint8_t c = s[i];
        if (c < 0x80 || i == 0) { *pos = i; return true; }
        if ((c & 0xC0) == 0x80) continue; /* continuation byte */
        size_t l;
        if (qt_is_resync_cp(qt_decode(s, n, i, &l))) { *pos = i; return true; }
    }
    return false;
}

/* Largest code point start <= t (t < n); the degraded answer. */
static size_t qt_cp_start_le(const uint8_t *s, size_t t) {
    size_t i = t;
    while (i > 0 && t - i < 3 && (s[i] & 0xC0) == 0x80) i--;
    return i;
}
/* Smallest code point start >= t. */
static size_t qt_cp_start_ge(const uint8_t *s, size_t n, size_t t) {
    size_t i = t;
    while (i < n && i - t < 3 && (s[i] & 0xC0) == 0x80) i++;
    return i;
}

/* Walks from resync point p and returns the largest boundary in (p, hi]
 * (hi < n), or p when there is none. */
static size_t qt_walk_last(const uint8_t *s, size_t n, size_t p, size_t hi) {
    utf8proc_int32_t state = 0;
    size_t l;
    int32_t c1 = qt_decode(s, n, p, &l);
    size_t cur = p + l, best = p;
    while (cur <= hi) {
        int32_t c2 = qt_decode(s, n, cur, &l);
        if (utf8proc_grapheme_break_stateful(c1, c2, &state)) best = cur;
        c1 = c2;
        cur += l;
    }
    return best;
}

size_t qt_grapheme_prefix(const char *str, size_t n, size_t max_bytes) {
    const uint8_t *s = (const uint8_t *)str;
    if (max_bytes >= n) return n;
    if (max_bytes == 0) return 0;
    size_t t = max_bytes, hi = t, p;
    size_t lo = t > QT_GRAPHEME_WINDOW ? t - QT_GRAPHEME_WINDOW : 0;
    for (;;) {
        if (!qt_find_resync(s, n, hi, lo, &p)) return qt_cp_start_le(s, t);
        size_t b = qt_walk_last(s, n, p, hi);
        if (b > p) return b;
        if (p == 0) return 0;
        hi = p; /* no boundary in (p, t]: is there one at or before p? */
    }
}

size_t qt_grapheme_suffix_start(const char *str, size_t n, size_t max_bytes) {
    const uint8_t *s = (const uint8_t *)str;
    if (max_bytes >= n) return 0;
    if (max_bytes == 0) return n;
    size_t t = n - max_bytes, p;
    size_t lo = t > QT_GRAPHEME_WINDOW ? t - QT_GRAPHEME_WINDOW : 0;
    if (!qt_find_resync(s, n, t, lo, &p)) return qt_cp_start_ge(s, n, t);
    utf8proc_int32_t state = 0;
    size_t l;
    int32_t c1 = qt_decode(s, n, p, &l);
    size_t cur = p + l;
    while (cur < n) {
        if (cur > t && cur - t > QT_GRAPHEME_WINDOW) return qt_cp_start_ge(s, n, t);
        int32_t c2 = qt_decode(s, n, cur, &l);
        if (utf8proc_grapheme_break_stateful(c1, c2, &state) && cur >= t) return cur;
        c1 = c2;
        cur += l;
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Cutting                                                                   */
/* ------------------------------------------------------------------------ */

#define QT_PUT_LIT(b, lit) qbuf_put((b), (lit), sizeof(lit) - 1)

static size_t qt_digits(size_t v) {
    size_t d = 1;
    while (v >= 10) { v /= 10; d++; }
    return d;
}

static void qt_put_cut_marker(qbuf *out, size_t removed) {
    QT_PUT_LIT(out, "\n[\xE2\x80\xA6 truncated ");
    qbuf_put_u64(out, (uint64_t)removed);
    QT_PUT_LIT(out, " bytes]");
}

size_t qt_cut_head(qbuf *out, const char *s, size_t n, size_t cap) {
    if (n <= cap) {
        qbuf_put(out, s, n);
        return 0;
    }
    /* The marker's length depends on N = n - P. Try each digit count d: the
     * first d whose best prefix leaves an N of at most d digits is optimal. */
    size_t dmax = qt_digits(n);
    for (size_t d = 1; d <= dmax; d++) {
        if (cap < QT_CUT_MARKER_FIXED + d) break;
        size_t p = qt_grapheme_prefix(s, n, cap - QT_CUT_MARKER_FIXED - d);
        if (qt_digits(n - p) <= d) {
            qbuf_put(out, s, p);
            qt_put_cut_marker(out, n - p);
            return n - p;
        }
    }
    qt_put_cut_marker(out, n); /* cap cannot hold even the marker */
    return n;
}

static void qt_put_excerpt_marker(qbuf *out, size_t omitted) {
    QT_PUT_LIT(out, "\n[\xE2\x80\xA6 ");
    qbuf_put_u64(out, (uint64_t)omitted);
    QT_PUT_LIT(out, " bytes omitted \xE2\x80\xA6]\n");
}

size_t qt_excerpt(qbuf *out, const char *s, size_t n, size_t head_bytes, size_t tail_bytes) {
    if (head_bytes >= n || tail_bytes >= n - head_bytes) {
        qbuf_put(out, s, n);
        return 0;
    }
    size_t nominal = n - head_bytes - tail_bytes;
    if (nominal <= QT_EXCERPT_MARKER_FIXED + qt_digits(nominal)) {
        qbuf_put(out, s, n);
        return 0;
    }
    size_t hp = qt_grapheme_prefix(s, n, head_bytes);
    size_t ts = qt_grapheme_suffix_start(s, n, tail_bytes);
    if (ts < hp) ts = hp; /* cannot happen (ts >= n - tail > head >= hp); kept as a guard */
    qbuf_put(out, s, hp);
    qt_put_excerpt_marker(out, ts - hp);
    qbuf_put(out, s + ts, n - ts);
    return ts - hp;
}

/* ------------------------------------------------------------------------ */
/* Blank                                                                     */
/* ------------------------------------------------------------------------ */

bool qt_is_blank(const char *str, size_t n) {
    const uint8_t *s = (const uint8_t *)str;
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        if (c < 0x80) {
            if (c == ' ' || (c >= 0x09 && c <= 0x0D)) { i++; continue; }
            return false;
        }
        size_t l = qt_seq_len(s + i, n - i);
        if (!l) return false;
        size_t dl;
        if (!qt_is_ws_cp(qt_decode(s, n, i, &dl))) return false;
        i += l;
    }
    return true;
}
