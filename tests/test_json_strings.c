/* The JSON reader's fast string scan (whole-input UTF-8 check, then 32-byte
 * blocks with escapes resolved from bit masks) against the careful scan
 * (one segment at a time, every escape and UTF-8 run checked in place):
 * generated documents of strings with every escape shape placed across
 * block boundaries, valid and broken, whole and cut short, must give the
 * same tape (offsets, lengths, flags) or the same error (code, offset,
 * line:col, pointer, message). The string decoder (qj_unescape, which
 * copies the text between escapes a block at a time, and decodes 64-byte
 * blocks without a branch per escape where the CPU has AVX-512 VBMI2; and
 * qj_unescape_portable, the path other CPUs take) against a decoder
 * written here one byte at a time, on the same strings, into an output of
 * exactly the decoded length (ASan sees a store past it). A fixed-seed
 * generator: the same cases every run. */
#include "core/json.h"
#include "unit.h"

#include <stdlib.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

typedef struct sbuf { char *p; size_t n, cap; } sbuf;
static void put(sbuf *b, const char *s, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

/* One string's content: pieces chosen so escapes, runs of backslashes,
 * surrogate pairs and multi-byte characters land on every offset. */
static void gen_string(sbuf *b, bool broken) {
    static const char *const ok[] = {
        "a", "bc", "hello world ", "0123456789abcdef", "\\n", "\\\"", "\\\\", "\\\\\\\\", "\\\\\\\"", "\\/",
        "\\b\\f\\r\\t", "\\u00e9", "\\u4E2D", "\\ud83d\\ude00", "\\uD83D\\uDE00x", "\xc3\xa9", "\xe4\xb8\xad",
        "\xf0\x9f\x98\x80", "\\\\u0041", " ", "{}[],:",
    };
    static const char *const bad[] = {
        "\\x", "\\u12", "\\u12G4", "\\udc00", "\\ud83d", "\\ud83dx", "\\ud83d\\u0041", "\x01", "\x1f", "\t",
        "\xc3", "\xe4\xb8", "\xff", "\xed\xa0\x80", "\xc0\xaf", "\\",
    };
    int pieces = (int)rnd(24);
    int bad_at = broken ? (int)rnd((uint32_t)pieces + 1) : -1;
    for (int i = 0; i <= pieces; i++) {
        if (i == bad_at) puts_(b, bad[rnd(sizeof bad / sizeof bad[0])]);
        else if (i < pieces) puts_(b, ok[rnd(sizeof ok / sizeof ok[0])]);
    }
}

static bool same_doc(const qj_doc *a, const qj_doc *b) {
    if (a->count != b->count) return false;
    for (uint32_t i = 0; i < a->count; i++) {
        const qj_node *x = &a->nodes[i], *y = &b->nodes[i];
        if (x->p != y->p || x->len != y->len || x->end != y->end || x->n != y->n || x->type != y->type ||
            x->flags != y->flags)
            return false;
    }
    return true;
}

static void compare(const char *src, size_t len, uint64_t max_str, int *fails) {
    qj_doc a, b;
    quire_error ea, eb;
    memset(&ea, 0, sizeof ea);
    memset(&eb, 0, sizeof eb);
    qj_opts o = {0, max_str};
    quire_status sa = qj_parse(&a, src, len, &o, NULL, &ea);
    quire_status sb = qj_parse_careful(&b, src, len, &o, NULL, &eb);
    bool same = sa == sb;
    if (same && sa == QUIRE_OK) same = same_doc(&a, &b);
    if (same && sa != QUIRE_OK)
        same = ea.code == eb.code && ea.offset == eb.offset && ea.line == eb.line && ea.column == eb.column &&
               strcmp(ea.pointer, eb.pointer) == 0 && strcmp(ea.message, eb.message) == 0;
    if (!same && (*fails)++ < 5)
        fprintf(stderr, "differs (%d vs %d: %s | %s) on: %.*s\n", (int)sa, (int)sb, ea.message, eb.message,
                (int)(len > 300 ? 300 : len), src);
    CHECK(same);
    if (sa == QUIRE_OK) qj_doc_free(&a);
    if (sb == QUIRE_OK) qj_doc_free(&b);
}

/* The reference decoder: one byte or one escape at a time. */
static unsigned ref_hex4(const char *s) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0;
        v = v << 4 | (unsigned)h;
    }
    return v;
}
static size_t ref_unescape(const char *s, size_t n, char *out) {
    size_t o = 0, i = 0;
    while (i < n) {
        if (s[i] != '\\') { out[o++] = s[i++]; continue; }
        if (i + 1 >= n) { out[o++] = s[i++]; break; }
        char c = s[i + 1];
        const char *simple = strchr("bfnrt", c);
        if (c && simple) { out[o++] = "\b\f\n\r\t"[simple - "bfnrt"]; i += 2; continue; }
        if (c != 'u') { out[o++] = c; i += 2; continue; }
        if (i + 6 > n) { out[o++] = s[i++]; continue; }
        unsigned cp = ref_hex4(s + i + 2);
        i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
            unsigned lo = ref_hex4(s + i + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) { cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00); i += 6; }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        if (cp < 0x80) out[o++] = (char)cp;
        else if (cp < 0x800) { out[o++] = (char)(0xC0 | cp >> 6); out[o++] = (char)(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) {
            out[o++] = (char)(0xE0 | cp >> 12); out[o++] = (char)(0x80 | (cp >> 6 & 0x3F));
            out[o++] = (char)(0x80 | (cp & 0x3F));
        } else {
            out[o++] = (char)(0xF0 | cp >> 18); out[o++] = (char)(0x80 | (cp >> 12 & 0x3F));
            out[o++] = (char)(0x80 | (cp >> 6 & 0x3F)); out[o++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    return o;
}

static int unescape_cases;
static void compare_unescape(const char *s, size_t n, int *fails) {
    char *want = malloc(n + 1);
    size_t wn = ref_unescape(s, n, want);
    char *got = malloc(wn ? wn : 1); /* exactly the decoded length: ASan sees a store past it */
    size_t gn = qj_unescape(s, n, got);
    bool same = gn == wn && memcmp(got, want, gn) == 0;
    gn = qj_unescape_portable(s, n, got); /* the path CPUs without AVX-512 VBMI2 take */
    same = same && gn == wn && memcmp(got, want, gn) == 0;
    if (!same && (*fails)++ < 5)
        fprintf(stderr, "qj_unescape differs (%zu vs %zu bytes) on: %.*s\n", gn, wn, (int)(n > 300 ? 300 : n), s);
    CHECK(same);
    unescape_cases++;
    free(got);
    free(want);
}

int main(void) {
    int fails = 0, accepted = 0, rejected = 0;
    for (int doc = 0; doc < 3000; doc++) {
        sbuf b = {0};
        bool broken = rnd(4) == 0;
        int nstr = 1 + (int)rnd(12);
        puts_(&b, "{\"k\":[");
        int bad_str = broken ? (int)rnd((uint32_t)nstr) : -1;
        for (int i = 0; i < nstr; i++) {
            if (i) puts_(&b, rnd(3) ? "," : " ,\n ");
            put(&b, "\"", 1);
            gen_string(&b, i == bad_str);
            put(&b, "\"", 1);
        }
        puts_(&b, "],\"");
        /* the decoder on every string of the array as one text, and on its tails */
        compare_unescape(b.p + 6, b.n - 6, &fails);
        compare_unescape(b.p + 6 + rnd((uint32_t)b.n - 5), 0, &fails);
        gen_string(&b, false);
        puts_(&b, "\":1}");
        /* whole, then cut short (strings that run into the end of input) */
        qj_doc d;
        if (qj_parse_careful(&d, b.p, b.n, NULL, NULL, NULL) == QUIRE_OK) { accepted++; qj_doc_free(&d); }
        else rejected++;
        compare(b.p, b.n, 0, &fails);
        compare(b.p, b.n, 1 + rnd(40), &fails);
        for (int cut = 0; cut < 3; cut++) compare(b.p, rnd((uint32_t)b.n + 1), 0, &fails);
        free(b.p);
    }
    /* long strings: escapes on both sides of many block boundaries */
    for (int doc = 0; doc < 200; doc++) {
        sbuf b = {0};
        put(&b, "\"", 1);
        for (int i = 0; i < 40; i++) gen_string(&b, false);
        if (rnd(3) == 0) gen_string(&b, true);
        put(&b, "\"", 1);
        compare(b.p, b.n, 0, &fails);
        compare(b.p, b.n - 1, 0, &fails);
        for (size_t off = 1; off < 20 && off < b.n; off++) compare_unescape(b.p + off, b.n - 1 - off, &fails);
        free(b.p);
    }
    /* every piece at every offset of a 32- or 64-byte block, then plain ASCII: sequences
     * cut by a block's end, escapes whose letter opens the next block */
    static const char *const at[] = {"\xc3", "\xe4\xb8", "\xf0\x9f\x98", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
                                     "\xed\xa0\x80", "\\", "\\\\", "\\\\\\", "\\u00e9", "\\ud83d\\ude00", "\\ud83d",
                                     "\\x", "\x01"};
    for (size_t w = 0; w < sizeof at / sizeof at[0]; w++)
        for (int k = 0; k < 140; k++)
            for (int tail = 0; tail < 3; tail++) {
                sbuf b = {0};
                puts_(&b, "[\"");
                for (int i = 0; i < k; i++) put(&b, "a", 1);
                puts_(&b, at[w]);
                for (int i = 0; i < (tail == 0 ? 1 : tail == 1 ? 40 : 100); i++) put(&b, "b", 1);
                puts_(&b, "\", \"after\"]");
                compare(b.p, b.n, 0, &fails);
                size_t body = b.n - strlen("\", \"after\"]") - 2;
                compare_unescape(b.p + 2, body, &fails);
                compare_unescape(b.p + 2, (size_t)k + strlen(at[w]), &fails); /* the piece ends the text */
                free(b.p);
            }
    /* every length 0..130 with one piece at every position of the string (so
     * at every offset around the 16-byte look and the 32- and 64-byte block
     * edges), the string ending the input or followed by more: every escape,
     * every class of invalid UTF-8 (lone and excess continuation bytes,
     * overlong forms, surrogates, code points past U+10FFFF, bytes never
     * valid, sequences cut by another byte or the closing quote), control
     * bytes and runs of backslashes that cross a block edge. */
    static const char *const one[] = {
        "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0041", "\\u00e9", "\\uFFFF", "\\ud83d\\ude00",
        "\\uDBFF\\uDFFF", "\\u001b", "\\x", "\\u12", "\\u12G4", "\\udc00", "\\ud83d", "\\ud83dx", "\\ud83d\\u0041",
        "\\ud83d\\", "\\", "\\\\\\", "\xc3\xa9", "\xdf\xbf", "\xe0\xa0\x80", "\xe4\xb8\xad", "\xef\xbf\xbf",
        "\xf0\x90\x80\x80", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf", "\x80", "\xbf", "\xc3\xa9\x80", "\xc0\x80",
        "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", "\xed\xa0\x80",
        "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8", "\xfe", "\xff", "\xc3", "\xe4\xb8",
        "\xf0\x9f\x98", "\xc3" "a", "\xe4" "a\xad", "\xf0\x9f" "a\x80", "\x01", "\x1f", "\x7f", "\t", "\n",
    };
    for (size_t w = 0; w < sizeof one / sizeof one[0]; w++) {
        size_t pl = strlen(one[w]);
        for (size_t len = 0; len <= 130; len++) {
            size_t max_pos = len >= pl ? len - pl : 0;
            for (size_t pos = 0; pos <= max_pos; pos++) {
                for (int tail = 0; tail < 4; tail++) {
                    sbuf b = {0};
                    /* the string opening at offset 2 or 4: the AVX-512 scan
                     * reads 3 bytes before a string, and leaves a string
                     * opening in the first 3 bytes to the AVX2 scan */
                    puts_(&b, tail < 2 ? "[\"" : "[  \"");
                    for (size_t i = 0; i < pos; i++) put(&b, &"abcdefgh ijklmnop"[i % 17], 1);
                    if (len >= pl) puts_(&b, one[w]);
                    for (size_t i = pos + (len >= pl ? pl : 0); i < len; i++) put(&b, "z", 1);
                    puts_(&b, tail & 1 ? "\", \"after\", \"\xc3\xa9\xe4\xb8\xad plus more text past one block\"]" : "\"]");
                    compare(b.p, b.n, 0, &fails);
                    if (!(tail & 1)) compare(b.p, b.n - 2, 0, &fails); /* the string runs into the end */
                    free(b.p);
                }
            }
        }
    }
    for (size_t run = 1; run <= 130; run++)
        for (size_t lead = 0; lead < 70; lead += 3) {
            sbuf b = {0};
            puts_(&b, "[ \"");
            for (size_t i = 0; i < lead; i++) put(&b, "a", 1);
            for (size_t i = 0; i < run; i++) put(&b, "\\", 1);
            puts_(&b, "\"x\", \"y\"]");
            compare(b.p, b.n, 0, &fails);
            free(b.p);
        }
    /* both outcomes were exercised */
    CHECK(accepted > 1000);
    CHECK(rejected > 300);
    CHECK(unescape_cases > 10000);
    TEST_MAIN_END();
}
