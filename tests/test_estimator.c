#define _POSIX_C_SOURCE 200809L
/* Unit checks of the token estimator (compact/estimate.c).
 *
 * Without arguments: checks that need no data (empty input, segmentation of
 * fixed strings into o200k pre-tokens, ASCII fast path = code point path,
 * runs priced in place = runs reported to a visitor,
 * invalid UTF-8, monotonic growth, a few fixed expectations).
 *
 * Tools for tests/py_estimator.py and tests/calibrate_estimator.py, given a
 * JSONL file whose lines carry a "text" string:
 *   --print FILE   one estimate per line
 *   --runs FILE    every run of every sample:
 *                  sample start end kind table base len extra cost_q8 lstart lend g0 .. g21
 *   --time FILE    estimator throughput over the texts, in CPU time (for hand
 *                  timing only; never asserted) */
#include "compact/estimate.h"
#include "core/json.h"
#include "tests/unit.h"

#include <utf8proc.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ sample files */

typedef struct text {
    char *s;
    size_t n;
} text;

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (!r) break;
        n += r;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Reads the "text" member of every JSONL line (parsed with quire's codec). */
static text *load_texts(const char *path, size_t *count) {
    size_t len = 0;
    char *src = slurp(path, &len);
    if (!src) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    size_t cap = 256, k = 0;
    text *out = malloc(cap * sizeof *out);
    size_t line_no = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && src[j] != '\n') j++;
        line_no++;
        if (j > i) {
            qj_doc doc;
            quire_error err;
            memset(&err, 0, sizeof err);
            if (qj_parse(&doc, src + i, j - i, NULL, NULL, &err) != QUIRE_OK) {
                fprintf(stderr, "%s:%zu: %s\n", path, line_no, err.message);
                exit(2);
            }
            uint32_t t = qj_get(&doc, 0, "text");
            if (t == QJ_NONE || qj_type_of(&doc, t) != QJ_STRING) {
                fprintf(stderr, "%s:%zu: no \"text\" string\n", path, line_no);
                exit(2);
            }
            size_t dn = qj_str_decoded_len(&doc, t);
            char *d = malloc(dn + 1);
            size_t got = qj_str_decode_into(&doc, t, d);
            if (k == cap) {
                cap *= 2;
                out = realloc(out, cap * sizeof *out);
            }
            out[k].s = d;
            out[k].n = got;
            k++;
            qj_doc_free(&doc);
        }
        i = j + 1;
    }
    free(src);
    *count = k;
    return out;
}

static void free_texts(text *t, size_t n) {
    for (size_t i = 0; i < n; i++) free(t[i].s);
    free(t);
}

typedef struct run_printer {
    size_t sample;
} run_printer;

static void print_run(void *ctx, const qc_est_run *r) {
    const run_printer *p = ctx;
    printf("%zu %zu %zu %d %d %d %u %u %u %zu %zu", p->sample, r->start, r->end, r->kind, r->table,
           r->base, r->len, r->extra, r->cost_q8, r->lstart, r->lend);
    for (int g = 0; g < QC_G_COUNT; g++) printf(" %u", r->groups[g]);
    putchar('\n');
}

static int tool_main(const char *mode, const char *path) {
    size_t n = 0;
    text *t = load_texts(path, &n);
    if (strcmp(mode, "--print") == 0) {
        for (size_t i = 0; i < n; i++) printf("%zu\n", qc_estimate_tokens(t[i].s, t[i].n));
    } else if (strcmp(mode, "--runs") == 0) {
        for (size_t i = 0; i < n; i++) {
            run_printer p = {i};
            qc_estimate_scan(t[i].s, t[i].n, print_run, &p);
        }
    } else if (strcmp(mode, "--time") == 0) {
        size_t bytes = 0, ascii_bytes = 0;
        for (size_t i = 0; i < n; i++) bytes += t[i].n;
        /* one ASCII-only buffer: the ASCII samples concatenated */
        char *ascii = malloc(bytes + 1);
        for (size_t i = 0; i < n; i++) {
            bool only = true;
            for (size_t j = 0; j < t[i].n; j++) only = only && (unsigned char)t[i].s[j] < 0x80;
            if (only) {
                memcpy(ascii + ascii_bytes, t[i].s, t[i].n);
                ascii_bytes += t[i].n;
            }
        }
        for (int pass = 0; pass < 2; pass++) {
            size_t total = 0, reps = 0;
            struct timespec a, b;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
            double secs = 0;
            do {
                if (pass == 0) {
                    total += qc_estimate_tokens(ascii, ascii_bytes);
                } else {
                    for (size_t i = 0; i < n; i++) total += qc_estimate_tokens(t[i].s, t[i].n);
                }
                reps++;
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
                secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
            } while (secs < 1.0);
            size_t per = pass == 0 ? ascii_bytes : bytes;
            printf("%s: %zu bytes x %zu in %.3f s = %.0f MB/s (tokens %zu)\n",
                   pass == 0 ? "ascii samples" : "all samples", per, reps, secs,
                   (double)per * (double)reps / secs / 1e6, total / reps);
        }
        free(ascii);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        free_texts(t, n);
        return 2;
    }
    free_texts(t, n);
    return 0;
}

/* ------------------------------------------------------------ unit checks */

static size_t est(const char *s) { return qc_estimate_tokens(s, strlen(s)); }

typedef struct seg {
    char buf[4096];
    size_t len;
    const char *src;
} seg;

static void seg_visit(void *ctx, const qc_est_run *r) {
    seg *g = ctx;
    size_t n = r->end - r->start;
    if (g->len + n + 2 >= sizeof g->buf) return;
    if (g->len) g->buf[g->len++] = '|';
    memcpy(g->buf + g->len, g->src + r->start, n);
    g->len += n;
    g->buf[g->len] = 0;
}

/* The runs of s joined by '|' (digit runs are kept whole). */
static const char *segments(seg *g, const char *s) {
    g->len = 0;
    g->buf[0] = 0;
    g->src = s;
    qc_estimate_scan(s, strlen(s), seg_visit, g);
    return g->buf;
}

typedef struct first_run {
    qc_est_run r;
    int seen;
} first_run;

static void first_visit(void *ctx, const qc_est_run *r) {
    first_run *f = ctx;
    if (!f->seen++) f->r = *r;
}

static qc_est_run first_of(const char *s, size_t n) {
    first_run f;
    memset(&f, 0, sizeof f);
    qc_estimate_scan(s, n, first_visit, &f);
    return f.r;
}

static void check_segmentation(void) {
    seg g;
    /* expected splits are the o200k_base pre-tokens (tests/o200k.py) */
    CHECK_STR(segments(&g, "Hello world"), "Hello| world");
    CHECK_STR(segments(&g, "fooBar HTTPServer snake_case"), "foo|Bar| HTTPServer| snake|_case");
    CHECK_STR(segments(&g, "don't they'll I'M"), "don't| they'll| I'M");
    CHECK_STR(segments(&g, "x  = 12345;\n    y"), "x| | =| |12345|;\n|   | y");
    CHECK_STR(segments(&g, "((foo) .bar\n\n  baz"), "((|foo|)| .|bar|\n\n| | baz");
    CHECK_STR(segments(&g, "a\tb \t c  "), "a|\tb| \t| c|  ");
    CHECK_STR(segments(&g, "end.\r\n"), "end|.\r\n");
    CHECK_STR(segments(&g, "path/to/file.c"), "path|/to|/file|.c");
    CHECK_STR(segments(&g, "Привет, мир! 你好世界。"), "Привет|,| мир|!| 你好世界|。");
    /* one deliberate difference: a non-ASCII symbol that prefixes an ASCII
     * word is priced as its own run (the pre-token is "🔥fire") */
    CHECK_STR(segments(&g, "🔥fire 😀😀 ok"), "🔥|fire| 😀😀| ok");
    CHECK_STR(segments(&g, "  12→import os"), " | |12|→|import| os");
    CHECK_STR(segments(&g, "Straße ÄÖÜ"), "Straße| ÄÖÜ");
}

static void check_basics(void) {
    CHECK_INT(qc_estimate_tokens(NULL, 0), 0);
    CHECK_INT(qc_estimate_tokens("", 0), 0);
    CHECK_INT(qc_estimate_tokens("abc", 0), 0);
    CHECK_INT(est("a"), 1);
    CHECK_INT(est("hello"), 1);
    CHECK_INT(est("hello world"), 2);
    CHECK_INT(est("12345678"), 3);
    CHECK_INT(est(" "), 1);
    CHECK_INT(est("\n"), 1);
    /* fixed expectations against exact o200k_base counts (tests/o200k.py) */
    static const struct {
        const char *s;
        size_t exact;
    } fixed[] = {
        {"Hello, World! How are you today?", 9},
        {"The quick brown fox jumps over 13 lazy dogs.", 11},
        {"int main(int argc, char **argv) {\n    return 0;\n}\n", 16},
        {"{\"path\":\"/src/main.c\",\"offset\":120,\"limit\":40}", 16},
        {"Python vs Java: Which programming language should you learn first?", 12},
        {"Это был незабываемый опыт, который я буду помнить всегда.", 14},
        {"こんにちは、世界！お元気ですか？", 10},
    };
    for (size_t i = 0; i < Q_COUNTOF(fixed); i++) {
        size_t e = est(fixed[i].s), x = fixed[i].exact;
        size_t diff = e > x ? e - x : x - e;
        CHECK_MSG(diff * 100 <= x * 30 || diff <= 1, "%s: estimate %zu, exact %zu", fixed[i].s, e, x);
    }
}

/* Runs cut short by a non-ASCII neighbour take the code point path; they
 * must be priced exactly like the same runs on the ASCII fast path. */
static void check_fast_equals_slow(void) {
    static const char *words[] = {"a", "the", "Hello", "HTTPServer", "XML", "supercalifragilistic",
                                  "don't", "They're", "x", "Zz", "abcdefghijklmnopqrstuvwxyzabc"};
    static const char *prefixes[] = {"", " ", ".", "_", "\t"};
    for (size_t p = 0; p < Q_COUNTOF(prefixes); p++) {
        for (size_t w = 0; w < Q_COUNTOF(words); w++) {
            char a[128], b[128];
            snprintf(a, sizeof a, "%s%s;", prefixes[p], words[w]);
            snprintf(b, sizeof b, "%s%s\xc2\xa0", prefixes[p], words[w]); /* NBSP */
            qc_est_run ra = first_of(a, strlen(a)), rb = first_of(b, strlen(b));
            CHECK_MSG(ra.table == rb.table && ra.cost_q8 == rb.cost_q8 && ra.end == rb.end &&
                          ra.table >= 0,
                      "word %s%s: fast cell %d cost %u end %zu, slow cell %d cost %u end %zu",
                      prefixes[p], words[w], ra.table, ra.cost_q8, ra.end, rb.table, rb.cost_q8,
                      rb.end);
        }
    }
    static const char *puncts[] = {"(", "();", "=>", "-----", "**", "\"},{\"", "!!!!!!!!!!!!!!!!!!!!"};
    for (size_t p = 0; p < Q_COUNTOF(puncts); p++) {
        char a[128], b[128];
        snprintf(a, sizeof a, "%s1", puncts[p]);
        snprintf(b, sizeof b, "%s\xc2\xa0", puncts[p]); /* followed by NBSP */
        qc_est_run ra = first_of(a, strlen(a)), rb = first_of(b, strlen(b));
        CHECK_MSG(ra.table == rb.table && ra.cost_q8 == rb.cost_q8 && ra.end == rb.end,
                  "punct %s: fast cell %d cost %u, slow cell %d cost %u", puncts[p], ra.table,
                  ra.cost_q8, rb.table, rb.cost_q8);
    }
    /* a non-ASCII character appended after a run that ends the text adds its
     * own run and leaves the price of every ASCII run unchanged */
    const char *txt = "Returns the sum of xs.\n    for (i = 0; i < n; i++) total += xs[i];\n";
    char mixed[256];
    snprintf(mixed, sizeof mixed, "%s\xe2\x80\x94", txt); /* em dash */
    uint64_t qa = qc_estimate_scan(txt, strlen(txt), NULL, NULL);
    uint64_t qm = qc_estimate_scan(mixed, strlen(mixed), NULL, NULL);
    uint64_t qd = qc_estimate_scan("\xe2\x80\x94", 3, NULL, NULL);
    CHECK(qd >= 256 && qm == qa + qd);
}

static void sum_visit(void *ctx, const qc_est_run *r) { *(uint64_t *)ctx += r->cost_q8; }

/* The scan without a visitor prices words, digits, punctuation and single
 * whitespace characters in place; with one it reports every run through the
 * general functions. The two must agree on every text, at every length
 * (exact-size copies, so a sanitizer sees reads past the end). */
static void check_in_place_equals_reported(void) {
    static const char *parts[] = {"a", "the", "Hello", "HTTPServer", "abcdefghijklmnop", "abcdefghijklmnopq",
                                  "Abcdefghijklmnopqrstu", "don't", "it's", "WE'LL", "'x", "'", " ", "  ", "\t",
                                  "\n", "\r\n", "\n\n", " \n", "/", "//", "\n/", "(", ");", ".", "=", "-", "0",
                                  "12", "1234567", "\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x98\x80",
                                  "\xc2\xa0", "\xd9\xa3", "\xe2\x86\x92", "\xcc\x81", "\xff", "\xe2\x82", "\v",
                                  "\f", "\x01", "x"};
    uint32_t x = 2024;
    char buf[600];
    int bad = 0;
    for (int round = 0; round < 20000 && bad < 5; round++) {
        size_t len = 0;
        x = x * 1103515245u + 12345u;
        int nparts = 1 + (int)((x >> 16) % 40);
        for (int k = 0; k < nparts; k++) {
            x = x * 1103515245u + 12345u;
            const char *pt = parts[(x >> 16) % Q_COUNTOF(parts)];
            size_t l = strlen(pt);
            if (len + l > sizeof buf) break;
            memcpy(buf + len, pt, l);
            len += l;
        }
        char *heap = malloc(len ? len : 1);
        memcpy(heap, buf, len);
        uint64_t reported = 0, in_place = qc_estimate_scan(heap, len, NULL, NULL);
        qc_estimate_scan(heap, len, sum_visit, &reported);
        if (in_place != reported) {
            bad++;
            CHECK_MSG(0, "round %d: %llu in place, %llu reported (%zu bytes)", round, (unsigned long long)in_place,
                      (unsigned long long)reported, len);
        }
        free(heap);
    }
}

/* ------------------------------------------------- vector scan = scalar scan
 *
 * Without a visitor the scan prices ASCII text in 64-byte windows (on CPUs
 * with AVX-512 VBMI2); with one it runs the scalar scanner. The totals must
 * be identical on every text. The generated texts cover every length from 0
 * to 200 (and longer ones that span many windows), made of fragments (words,
 * camel case, contractions and near-misses, digit runs, whitespace runs with
 * newlines, punctuation with trailing newlines and slashes, long words) or
 * of bytes drawn from small alphabets, ASCII-only or with non-ASCII code
 * points and invalid UTF-8 mixed in. Exact-size heap copies, so a sanitizer
 * sees reads past the end. */

static uint32_t rng(uint64_t *st) {
    *st = *st * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*st >> 33);
}

static const char *const frag_ascii[] = {
    "a", "the", "Hello", "HTTPServer", "XML", "fooBar", "camelCaseWordsHere", "getHTTPResponseCode",
    "supercalifragilisticexpialidocious", "ABCDEFGHIJKLMNOPQRSTU", "Abcdefghijklmnopqrstuvwxyz", "aBcDeF",
    "don't", "it's", "WE'LL", "they're", "I've", "I'm", "she'd", "You'D", "x'y", "x'r", "x'rx", "x'l", "'s",
    "'", "''", "'ll'd", "'s's", "x's's", "x'll'd", "x'sx", "'re", "'ve", "'m", " ", "  ", "    ", "        ",
    "\t", "\n", "\r\n", "\n\n", " \n", "\n  ", " \t ", "\t\n\t", "\v", "\f", "/", "//", "\n/", ".\n/", "/\n",
    ".\n\n", ";\r\n", ",\n/x", "(", ");", ".", ",", "=", "->", "...", "\"", "{\"a\":", "\\n", " .x", "\t.x",
    ".x", "_x", "0", "12", "123", "1234567", "3.14", "2024-01-01", "\x01", "\x7f", "_", "-", "#", "x", "Z", "q",
    " (", " =", " 1", "  1", "\n\n\n", " \n \n ", "\r", "*/", "/*", "a/b/c", "\n/usr/bin", "ok.\n/",
};
static const char *const frag_high[] = {
    "\xc3\xa9", "Stra\xc3\x9f\x65", "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x98\x80",
    "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9", "\xc2\xa0", "\xd9\xa3", "\xe2\x86\x92", "\xcc\x81", "\xff",
    "\xe2\x82", "\x80", "\xc0\xaf", "\xed\xa0\x80", "\xe3\x80\x80", "\xe2\x80\x94", "\xd0\x9f\xd1\x80\xd0\xb8",
    "\xe2\x80\xa8", "\xef\xbc\x8c",
};
static const char alpha_ascii[] = "aAzZsStTrReEvVlLmMdDqQ''''    \n\r\t\v\f//.,_(#0123\x01\x7f";
static const char alpha_high[] = "aAsStTeElL''  \n\t/.0\x80\xc3\xa9\xe4\xb8\xf0\x9f\xff\xcc\x81";

static size_t gen_text(uint64_t *st, char *buf, size_t len) {
    unsigned mode = rng(st) % 4;
    size_t k = 0;
    while (k < len) {
        if (mode < 2) {
            const char *f = (mode == 1 && rng(st) % 4 == 0) ? frag_high[rng(st) % Q_COUNTOF(frag_high)]
                                                           : frag_ascii[rng(st) % Q_COUNTOF(frag_ascii)];
            for (size_t i = 0; f[i] && k < len; i++) buf[k++] = f[i];
        } else if (mode == 2) {
            buf[k++] = alpha_ascii[rng(st) % (sizeof alpha_ascii - 1)];
        } else {
            buf[k++] = alpha_high[rng(st) % (sizeof alpha_high - 1)];
        }
    }
    return mode;
}

static int diff_one(const char *s, size_t n, const char *what) {
    char *heap = malloc(n ? n : 1);
    memcpy(heap, s, n);
    uint64_t scalar = 0, fast = qc_estimate_scan(heap, n, NULL, NULL);
    qc_estimate_scan(heap, n, sum_visit, &scalar);
    free(heap);
    if (fast == scalar) return 0;
    CHECK_MSG(0, "%s: %llu without a visitor, %llu with one (%zu bytes)", what, (unsigned long long)fast,
              (unsigned long long)scalar, n);
    return 1;
}

static void check_vector_equals_scalar(void) {
    uint64_t st = 0x5eed;
    char buf[4096];
    int bad = 0;
    size_t count = 0;
    for (size_t len = 0; len <= 200 && bad < 5; len++) {
        for (int rep = 0; rep < 500 && bad < 5; rep++) {
            gen_text(&st, buf, len);
            char what[64];
            snprintf(what, sizeof what, "length %zu, text %d", len, rep);
            bad += diff_one(buf, len, what);
            count++;
        }
    }
    for (int rep = 0; rep < 4000 && bad < 5; rep++) {
        size_t len = 201 + rng(&st) % (sizeof buf - 201);
        gen_text(&st, buf, len);
        char what[64];
        snprintf(what, sizeof what, "long text %d", rep);
        bad += diff_one(buf, len, what);
        count++;
    }
    CHECK(bad == 0 && count >= 100000);
    /* the calibration samples, whole and cut at every offset below 8 from
     * either end (the windows fall elsewhere) */
    size_t nt = 0;
    text *t = load_texts("tests/data/estimator_calibration.jsonl", &nt);
    CHECK(nt >= 1000);
    bad = 0;
    for (size_t i = 0; i < nt && bad < 5; i++) {
        for (size_t cut = 0; cut < 8 && cut < t[i].n; cut++) {
            char what[96];
            snprintf(what, sizeof what, "calibration sample %zu from byte %zu", i, cut);
            bad += diff_one(t[i].s + cut, t[i].n - cut, what);
            snprintf(what, sizeof what, "calibration sample %zu less %zu bytes", i, cut);
            bad += diff_one(t[i].s, t[i].n - cut, what);
        }
    }
    CHECK(bad == 0);
    free_texts(t, nt);
}

static void check_invalid_utf8(void) {
    /* every invalid byte counts (at least) one token; no over-reads on truncation */
    char bad[300];
    for (size_t i = 0; i < sizeof bad; i++) bad[i] = (char)(0x80 + (i % 64));
    CHECK(qc_estimate_tokens(bad, sizeof bad) >= sizeof bad);
    memset(bad, 0xFF, sizeof bad);
    CHECK(qc_estimate_tokens(bad, sizeof bad) >= sizeof bad);
    static const char *cases[] = {"abc\xe2\x82", "\xe2", "\xf0\x9f\x98", "x\xc0\xafy", "\xed\xa0\x80",
                                  "\xf4\x90\x80\x80", "word\xff", " \xfe", "\xc2", "12\xe3\x81"};
    for (size_t i = 0; i < Q_COUNTOF(cases); i++) {
        size_t n = strlen(cases[i]);
        char *heap = malloc(n); /* exact-size copy so a sanitizer sees over-reads */
        memcpy(heap, cases[i], n);
        size_t e = qc_estimate_tokens(heap, n);
        CHECK_MSG(e >= 1 && e <= 2 * n + 1, "case %zu: %zu tokens for %zu bytes", i, e, n);
        free(heap);
    }
    /* pseudo-random bytes: deterministic LCG, sizes 0..512 */
    uint32_t x = 12345;
    int ok = 1;
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(round % 513);
        char *buf = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (char)(x >> 24);
        }
        size_t e = qc_estimate_tokens(buf, n);
        if ((n == 0) != (e == 0) || e > 2 * n + 1) ok = 0;
        free(buf);
    }
    CHECK(ok);
    /* pseudo-random valid UTF-8 drawn from every kind of code point the
     * scanner distinguishes: no crash, at least one token, bounded */
    static const uint32_t ranges[][2] = {
        {0x20, 0x7E},       {0x09, 0x0D},       {0xA0, 0x24F},      {0x300, 0x36F},
        {0x370, 0x52F},     {0x590, 0x8FF},     {0x900, 0xDFF},     {0xE00, 0xFFF},
        {0x1000, 0x1FFF},   {0x2000, 0x2BFF},   {0x3000, 0x30FF},   {0x4E00, 0x9FFF},
        {0xAC00, 0xD7A3},   {0xFE00, 0xFFFD},   {0x1F000, 0x1FAFF}, {0x20000, 0x2A6DF},
        {0xE0000, 0xE01EF}, {0xF0000, 0x10FFFF}};
    ok = 1;
    for (int round = 0; round < 3000; round++) {
        char buf[1024];
        size_t n = 0, want = (size_t)(round % 300);
        while (n + 4 <= want) {
            x = x * 1103515245u + 12345u;
            const uint32_t *r = ranges[(x >> 16) % Q_COUNTOF(ranges)];
            x = x * 1103515245u + 12345u;
            uint32_t cp = r[0] + (x >> 8) % (r[1] - r[0] + 1);
            if (cp >= 0xD800 && cp <= 0xDFFF) continue;
            n += (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)buf + n);
        }
        char *heap = malloc(n ? n : 1);
        memcpy(heap, buf, n);
        size_t e = qc_estimate_tokens(heap, n);
        if ((n == 0) != (e == 0) || e > 2 * n + 1) ok = 0;
        free(heap);
    }
    CHECK(ok);
}

static void check_monotonic(void) {
    const char *para =
        "The compactor keeps the last turns verbatim and replaces older ones by a summary.\n"
        "    if (budget < used) { prune(tool_outputs, keep_last); }\n"
        "Résumé: 12 files changed, 340 insertions(+), 25 deletions(-) — see PR #4521.\n"
        "日本語のテキストも数えます。Ελληνικά και русский текст. 🚀✨\n";
    size_t n = strlen(para);
    /* prefixes cut at line ends grow monotonically */
    size_t prev = 0;
    int ok = 1;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && para[i] != '\n') continue;
        size_t e = qc_estimate_tokens(para, i);
        if (e < prev) ok = 0;
        prev = e;
    }
    CHECK(ok);
    /* repetition: k copies cost about k times one copy, strictly increasing */
    char *buf = malloc(n * 8 + 1);
    size_t one = qc_estimate_tokens(para, n), last = 0;
    ok = 1;
    for (size_t k = 1; k <= 8; k++) {
        for (size_t j = 0; j < k; j++) memcpy(buf + j * n, para, n);
        size_t e = qc_estimate_tokens(buf, k * n);
        if (e <= last || e + k > k * one + k * 2 || e + 2 * k < k * one) ok = 0;
        last = e;
    }
    CHECK(ok);
    free(buf);
    /* appending characters one at a time never lowers the estimate by more
     * than the one run that absorbs them (runs merge, so allow a 1-token dip) */
    const char *code = "for (size_t i = 0; i < n; i++) { total += xs[i] * 2; } // done";
    prev = 0;
    ok = 1;
    for (size_t i = 0; i <= strlen(code); i++) {
        size_t e = qc_estimate_tokens(code, i);
        if (e + 1 < prev) ok = 0;
        prev = e;
    }
    CHECK(ok);
}

/* Long white space: o200k_base has no token of more than 128 spaces or 16 newlines
 * (or tabs), so a long run costs at least len / 128 or len / 16 tokens, also as the
 * newlines a punctuation run ends with (":" then CR LF pairs: the pre-tokeniser's
 * `[^\s\p{L}\p{N}]+[\r\n/]*`). The runs were priced as one token whatever their
 * length (exact o200k counts: 20000 spaces 157, 20000 newlines 1250, ":" + 3000 CR LF
 * 750). Both paths, with and without a visitor, agree. */
static void check_long_whitespace(void) {
    static const struct { const char *unit; size_t reps; size_t min, max; } cases[] = {
        {" ", 20000, 150, 400}, {"\n", 20000, 1200, 2600}, {"\t", 20000, 150, 2600}, {"\r\n", 3000, 370, 1500},
        {" \n", 5000, 600, 2600},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int colon = 0; colon < 2; colon++) {
            size_t ul = strlen(cases[k].unit), n = 4 + (size_t)colon + ul * cases[k].reps + 4;
            char *t = malloc(n);
            size_t at = 4;
            memcpy(t, "log ", 4);
            if (colon) t[at++] = ':';
            for (size_t r = 0; r < cases[k].reps; r++, at += ul) memcpy(t + at, cases[k].unit, ul);
            memcpy(t + at, " end", 4);
            at += 4;
            size_t e = qc_estimate_tokens(t, at);
            CHECK_MSG(e >= cases[k].min && e <= cases[k].max, "%zu x %s%s: %zu tokens, want %zu..%zu", cases[k].reps,
                      k == 0 ? "space" : k == 1 ? "LF" : k == 2 ? "tab" : k == 3 ? "CR LF" : "space LF",
                      colon ? " after ':'" : "", e, cases[k].min, cases[k].max);
            diff_one(t, at, "long white space");
            free(t);
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 3) return tool_main(argv[1], argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_estimator [--print|--runs|--time FILE]\n");
        return 2;
    }
    check_basics();
    check_segmentation();
    check_fast_equals_slow();
    check_in_place_equals_reported();
    check_vector_equals_scalar();
    check_invalid_utf8();
    check_monotonic();
    check_long_whitespace();
    TEST_MAIN_END();
}
