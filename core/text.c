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
 * \n, DEL, 0xC2 (C1 controls are C2 80..C2 9F), 0xE2 (bidi controls,
 * U+206A..U+206F), 0xF3 (tag characters U+E0000..U+E007F). */
static const uint8_t k_hyg_special[256] = {
    1,1,1,1,1,1,1,1,1,0,0,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,
};

/* Look-alikes that NFKC case folding keeps apart from the ASCII letter or
 * sign they imitate (Unicode confusables.txt, restricted to what can spell
 * the wrapper tags and their brackets). Sorted by code point. */
static const struct { int32_t cp; char to; } k_confusables[] = {
    {0x0131, 'i'}, /* dotless i */
    {0x01C0, 'l'}, {0x0251, 'a'}, {0x0261, 'g'}, {0x0262, 'g'}, {0x026A, 'i'},
    {0x0274, 'n'}, /* small capital n */
    {0x0280, 'r'}, {0x028F, 'y'}, {0x0299, 'b'}, {0x029C, 'h'}, {0x029F, 'l'},
    {0x02C2, '<'}, /* modifier letter left arrowhead */
    {0x03B1, 'a'}, {0x03B5, 'e'}, {0x03B9, 'i'}, {0x03BA, 'k'}, {0x03BD, 'v'}, {0x03BF, 'o'},
    {0x03C1, 'p'}, {0x03C4, 't'}, {0x03C5, 'u'}, {0x03F2, 'c'}, {0x03F3, 'j'}, {0x0430, 'a'},
    {0x0432, 'b'}, {0x0433, 'r'}, {0x0435, 'e'}, {0x043A, 'k'}, {0x043C, 'm'}, {0x043D, 'h'},
    {0x043E, 'o'}, {0x043F, 'n'}, {0x0440, 'p'}, {0x0441, 'c'}, {0x0442, 't'}, {0x0443, 'y'},
    {0x0445, 'x'}, {0x044C, 'b'}, {0x0455, 's'}, {0x0456, 'i'}, {0x0458, 'j'}, {0x04AF, 'y'},
    {0x04BB, 'h'}, {0x04C0, 'i'}, {0x04CF, 'i'}, {0x0501, 'd'}, {0x051B, 'q'}, {0x051D, 'w'},
    {0x0578, 'n'}, {0x057D, 'u'}, {0x0585, 'o'}, {0x13A0, 'd'}, {0x13A1, 'r'}, {0x13A2, 't'},
    {0x13AC, 'e'}, {0x13B3, 'w'}, {0x13BB, 'h'}, {0x13C2, 'h'}, {0x13DA, 's'}, {0x13DE, 'l'},
    {0x13E2, 'r'}, {0x13F4, 'b'},
    {0x1438, '<'}, /* Canadian syllabics pa */
    {0x1D00, 'a'}, {0x1D04, 'c'}, {0x1D05, 'd'}, {0x1D07, 'e'}, {0x1D0A, 'j'}, {0x1D0B, 'k'},
    {0x1D0D, 'm'}, {0x1D0F, 'o'}, {0x1D18, 'p'}, {0x1D1B, 't'}, {0x1D1C, 'u'}, {0x1D20, 'v'},
    {0x1D21, 'w'}, {0x1D22, 'z'}, {0x2039, '<'}, {0x2329, '<'}, {0x276C, '<'}, {0x276E, '<'},
    {0x27E8, '<'}, {0x27EA, '<'}, {0x29FC, '<'}, {0x3008, '<'}, {0x300A, '<'}, {0xA730, 'f'}, {0xA731, 's'},
    {0xA793, 'e'}, {0xA7AF, 'q'}, {0xAB47, 'r'}, {0xAB48, 'r'},
};

static int32_t confusable(int32_t cp) {
    size_t lo = 0, hi = Q_COUNTOF(k_confusables);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (k_confusables[mid].cp < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < Q_COUNTOF(k_confusables) && k_confusables[lo].cp == cp ? k_confusables[lo].to : -1;
}

/* Folds one code point for tag matching: NFKC compatibility decomposition,
 * case folding, combining marks and default-ignorable code points removed,
 * utf8proc's "lump" of dashes, spaces, angle brackets and slashes to ASCII,
 * then the look-alike table. Writes up to 8 ASCII bytes to f and returns how
 * many (0: invisible), or -1 when the result is not all ASCII. */
static int fold_cp_impl(int32_t cp, char f[8], bool fast) {
    if (cp < 0x80) {
        f[0] = (char)(cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp);
        return 1;
    }
    /* the line breaks of White_Space that NFKC and the lump leave alone (NEL,
     * LINE SEPARATOR, PARAGRAPH SEPARATOR) are white space in a tag too */
    if (cp == 0x85 || cp == 0x2028 || cp == 0x2029) { f[0] = '\n'; return 1; }
    int32_t c = confusable(cp);
    if (c >= 0) { f[0] = (char)c; return 1; }
    if (fast) {
        /* Most text outside ASCII is other letters (CJK, Hangul, Arabic, ...)
         * and emoji: with no compatibility decomposition, no case folding and
         * not default-ignorable, such a code point folds to itself (utf8proc's
         * lump touches no Lo code point and nothing from U+1F000 on; a Hangul
         * syllable decomposes algorithmically, to jamo), so the fold is not
         * ASCII. tests/test_text.c checks this against the full fold for every
         * code point. */
        const utf8proc_property_t *pr = utf8proc_get_property(cp);
        if ((pr->category == UTF8PROC_CATEGORY_LO || (cp >= 0x1F000 && pr->category == UTF8PROC_CATEGORY_SO)) &&
            pr->decomp_seqindex == UINT16_MAX && pr->casefold_seqindex == UINT16_MAX && !pr->ignorable)
            return -1;
    }
    utf8proc_int32_t buf[8];
    int last = 0;
    utf8proc_ssize_t k = utf8proc_decompose_char(
        cp, buf, 8,
        (utf8proc_option_t)(UTF8PROC_COMPAT | UTF8PROC_DECOMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_STRIPMARK |
                            UTF8PROC_IGNORE | UTF8PROC_LUMP),
        &last);
    if (k < 0 || k > 8) return -1;
    for (utf8proc_ssize_t j = 0; j < k; j++) {
        int32_t x = buf[j];
        if (x >= 0x80) x = confusable(x);
        if (x < 0 || x >= 0x80) return -1;
        f[j] = (char)(x >= 'A' && x <= 'Z' ? x + ('a' - 'A') : x);
    }
    return (int)k;
}

static int fold_cp(int32_t cp, char f[8]) { return fold_cp_impl(cp, f, true); }

int qt_fold_cp(int32_t cp, char f[8], bool fast) { return fold_cp_impl(cp, f, fast); }

/* A stream of folded ASCII bytes over p[i..len). */
typedef struct qt_fold {
    const uint8_t *p;
    size_t len, i;
    char buf[8];
    int n, k;
} qt_fold;

/* Next folded byte, or -1 at the end or at a code point that folds to
 * something that is not ASCII. */
static int fold_next(qt_fold *g) {
    while (g->k >= g->n) {
        if (g->i >= g->len) return -1;
        uint8_t c = g->p[g->i];
        if (c < 0x80) {
            g->i++;
            return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
        }
        size_t l;
        int32_t cp = qt_decode(g->p, g->len, g->i, &l);
        g->i += l;
        g->n = fold_cp(cp, g->buf);
        g->k = 0;
        if (g->n < 0) { g->n = 0; return -1; }
    }
    return (unsigned char)g->buf[g->k++];
}

static bool is_ws_byte(int c) { return c == ' ' || (c >= 0x09 && c <= 0x0D); }
static bool is_sep_byte(int c) { return c == '-' || c == '_' || c == '.' || is_ws_byte(c); }

/* True if p[i..len) continues an opener into the tag named tag (lower-case
 * ASCII words joined by '-'): ws* ('/' ws*)? then the words, each '-'
 * matching any run (possibly empty) of '-', '_', '.' or white space, all
 * after folding (fold_cp). */
static bool qt_tag_follows(const uint8_t *p, size_t len, size_t i, const char *tag) {
    qt_fold g = {p, len, i, {0}, 0, 0};
    int c = fold_next(&g);
    while (is_ws_byte(c)) c = fold_next(&g);
    if (c == '/') {
        c = fold_next(&g);
        while (is_ws_byte(c)) c = fold_next(&g);
    }
    for (const char *t = tag; *t; t++) {
        if (*t == '-') {
            while (is_sep_byte(c)) c = fold_next(&g);
            continue;
        }
        if (c != (unsigned char)*t) return false;
        if (t[1]) c = fold_next(&g);
    }
    return true;
}

/* Byte length of an opener at p[i] ('<' or anything that folds to it), 0 if none. */
static size_t qt_opener(const uint8_t *p, size_t len, size_t i) {
    uint8_t c = p[i];
    if (c == '<') return 1;
    if (c < 0xC0) return 0;
    size_t l;
    int32_t cp = qt_decode(p, len, i, &l);
    char f[8];
    return fold_cp(cp, f) == 1 && f[0] == '<' ? l : 0;
}

/* Chat-template control tokens that a server applying a template may read as
 * special tokens (docs/text.md); their first character is neutralised. */
static const char *const k_template_tokens[] = {
    "<|", "<\xEF\xBD\x9C", /* <| and <｜ (DeepSeek's fullwidth bar) */
    "<start_of_turn>", "<end_of_turn>", "<s>", "</s>", "<bos>", "<eos>", "<<SYS>>", "<</SYS>>",
    "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[TOOL_RESULTS]",
};

static size_t qt_template_token(const uint8_t *p, size_t len, size_t i) {
    for (size_t k = 0; k < Q_COUNTOF(k_template_tokens); k++) {
        size_t tl = strlen(k_template_tokens[k]);
        if (tl <= len - i && memcmp(p + i, k_template_tokens[k], tl) == 0) return 1;
    }
    return 0;
}

size_t qt_neutralise(qbuf *out, const char *str, size_t n, const char *tag, bool template_tokens) {
    const uint8_t *p = (const uint8_t *)str;
    size_t run = 0, count = 0;
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        if (c != '<' && c != '[' && c < 0xC0) { i++; continue; }
        size_t ol = c == '[' ? 0 : qt_opener(p, n, i);
        if (ol && qt_tag_follows(p, n, i + ol, tag)) {
            qbuf_put(out, p + run, i - run);
            qbuf_puts(out, "&lt;");
            count++;
            i += ol;
            run = i;
            continue;
        }
        if (template_tokens && (c == '<' || c == '[') && qt_template_token(p, n, i)) {
            qbuf_put(out, p + run, i - run);
            qbuf_puts(out, c == '<' ? "&lt;" : "&#91;");
            count++;
            i++;
            run = i;
            continue;
        }
        if (c < 0x80) { i++; continue; }
        size_t l;
        (void)qt_decode(p, n, i, &l);
        i += l;
    }
    qbuf_put(out, p + run, n - run);
    return count;
}

void qt_hygiene(qbuf *out, const char *str, size_t n, qt_hygiene_report *rep) {
    const uint8_t *s = (const uint8_t *)str;
    size_t run = 0, ctl = 0, bidi = 0, tagc = 0;
    qbuf tmp;
    qbuf_init(&tmp, out->a);
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        if (Q_LIKELY(!k_hyg_special[c])) { i++; continue; }
        size_t drop = 0;
        if (c < 0x80) { /* C0 control (not \t \n) or DEL */
            drop = 1;
            ctl++;
        } else if (c == 0xC2) {
            if (i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F) { drop = 2; ctl++; }
        } else if (c == 0xF3) {
            /* U+E0000..U+E007F: F3 A0 80 80 .. F3 A0 81 BF */
            if (i + 3 < n && s[i + 1] == 0xA0 && (s[i + 2] == 0x80 || s[i + 2] == 0x81) && (s[i + 3] & 0xC0) == 0x80) {
                drop = 4;
                tagc++;
            }
        } else if (i + 2 < n && ((s[i + 1] == 0x80 && s[i + 2] >= 0xAA && s[i + 2] <= 0xAE) ||
                                 (s[i + 1] == 0x81 && s[i + 2] >= 0xA6 && s[i + 2] <= 0xAF))) {
            drop = 3; /* U+202A..U+202E, U+2066..U+2069, deprecated format U+206A..U+206F */
            bidi++;
        }
        if (!drop) { i++; continue; }
        qbuf_put(&tmp, s + run, i - run);
        i += drop;
        run = i;
    }
    size_t tags;
    if (run == 0) {
        tags = qt_neutralise(out, str, n, "system-reminder", true);
    } else {
        qbuf_put(&tmp, s + run, n - run);
        tags = tmp.oom ? 0 : qt_neutralise(out, tmp.data ? tmp.data : "", tmp.len, "system-reminder", true);
        if (tmp.oom) out->oom = true;
    }
    qbuf_free(&tmp);
    if (rep) {
        rep->controls_removed += ctl;
        rep->bidi_removed += bidi;
        rep->tags_neutralised += tags;
        rep->tag_chars_removed += tagc;
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

/* Invisible: white space, default-ignorable code points (ZWSP, ZWJ, BOM, SHY,
 * word joiner, variation selectors, U+115F/U+1160/U+3164/U+FFA0 Hangul
 * fillers, U+180E, tag characters ...) and the blank-looking U+2800 braille
 * pattern blank. */
static bool qt_is_invisible_cp(int32_t cp) {
    return qt_is_ws_cp(cp) || qt_is_ignorable_cp(cp) || cp == 0x2800 || cp == 0x115F || cp == 0x1160 ||
           cp == 0x3164 || cp == 0xFFA0 || cp == 0x180E || (cp >= 0xE0000 && cp <= 0xE007F);
}

bool qt_is_blank_visible(const char *str, size_t n) {
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
        if (!qt_is_invisible_cp(qt_decode(s, n, i, &dl))) return false;
        i += l;
    }
    return true;
}
