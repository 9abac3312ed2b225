/* Fuzz target: the reminder wrappers cannot be forged. Input: one body, or
 * two bodies separated by the first NUL (a body pair). Each body is sent as
 * an MCP reminder (roleHint user_block) from its own server, so the two are
 * joined into one block; the state is rendered for a row with the XML
 * wrapper (Anthropic) and one with the plain wrapper (Mistral).
 *
 * Checks, on every string of each request (decoded from its JSON):
 *  - XML row: "<system-reminder>" and "</system-reminder>" appear exactly
 *    once each when a reminder was accepted (never otherwise), and the
 *    wrapper-tag matcher quire uses for hygiene (qt_neutralise: NFKC, case
 *    folding, ignorables and look-alikes) finds exactly those two openers and
 *    nothing else;
 *  - plain row: the matcher finds no tag at all, and exactly one line is the
 *    header "System reminder:" and one the end "End of system reminder."
 *    when compared after the same kind of folding (NFKC, case folding,
 *    marks and ignorables removed, white space and - _ . : dropped); every
 *    other line of the block is a quoted body line.
 * Lines are split where quire's quoting splits them: \n, U+2028, U+2029. */
#include "fuzz_common.h"

#include "core/json.h"
#include "core/text.h"

#include <utf8proc.h>

static const char k_transcript[] = "{\"system\":\"S\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

/* Appends s[0..n) as JSON string content: quotes, backslashes and controls
 * escaped, every other byte raw (invalid UTF-8 stays invalid: the peer's
 * message is then dropped by ingest, never accepted with altered text). */
static void put_json_text(qbuf *b, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            qbuf_putc(b, '\\');
            qbuf_putc(b, (char)c);
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            qbuf_puts(b, esc);
        } else {
            qbuf_putc(b, (char)c);
        }
    }
}

static void put_reminder(qbuf *b, const char *server, const char *body, size_t n) {
    qbuf_puts(b, "{\"type\":\"mcp\",\"server\":\"");
    qbuf_puts(b, server);
    qbuf_puts(b, "\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"capabilities\":{\"reminders\":{\"emit\":true}}}}}\n");
    qbuf_puts(b, "{\"type\":\"mcp\",\"server\":\"");
    qbuf_puts(b, server);
    qbuf_puts(b, "\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"notifications/reminder\",\"params\":{\"reminder\":"
                 "{\"roleHint\":\"user_block\",\"body\":\"");
    put_json_text(b, body, n);
    qbuf_puts(b, "\"}}}}\n");
}

static size_t count_exact(const char *s, size_t n, const char *needle) {
    size_t c = 0, l = strlen(needle);
    for (size_t i = 0; i + l <= n; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, l) == 0) { c++; i += l - 1; }
    return c;
}

/* The line's skeleton: NFKC + case folding + marks and default-ignorables
 * removed + lumped punctuation, then white space and - _ . : dropped. */
static size_t skeleton(const char *s, size_t n, char *out, size_t cap) {
    utf8proc_uint8_t *f = NULL;
    utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &f,
                                      UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE |
                                          UTF8PROC_STRIPMARK | UTF8PROC_LUMP);
    QF_ASSERT(m >= 0, "a request string is not UTF-8: %.200s", s);
    size_t k = 0;
    for (utf8proc_ssize_t i = 0; i < m && k + 1 < cap; i++) {
        char c = (char)f[i];
        if (c == ' ' || c == '\t' || c == '-' || c == '_' || c == '.' || c == ':') continue;
        out[k++] = c;
    }
    out[k] = '\0';
    free(f);
    return k;
}

typedef struct tally {
    size_t open, close;     /* exact wrapper tags */
    size_t matched;         /* openers the hygiene matcher finds */
    size_t header, end;     /* plain-wrapper lines */
} tally;

static void scan_lines(const char *s, size_t n, tally *t) {
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        bool brk = i == n || s[i] == '\n';
        size_t skip = 1;
        if (!brk && i + 2 < n && (unsigned char)s[i] == 0xE2 && (unsigned char)s[i + 1] == 0x80 &&
            ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {
            brk = true;
            skip = 3;
        }
        if (!brk) continue;
        char sk[64]; /* a longer skeleton is cut at 63 bytes and matches neither */
        size_t k = skeleton(s + start, i - start, sk, sizeof sk);
        if (k == 14 && memcmp(sk, "systemreminder", 14) == 0) t->header++;
        if (k == 19 && memcmp(sk, "endofsystemreminder", 19) == 0) t->end++;
        start = i + skip;
        i += skip - 1;
    }
}

static void scan_request(const char *req, size_t len, tally *t) {
    const quire_allocator *a = q_alloc_default();
    qj_doc d;
    quire_error e;
    QF_ASSERT(qj_parse(&d, req, len, NULL, a, &e) == QUIRE_OK, "request is not JSON: %s", e.message);
    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < d.count; i++) {
        if (qj_type_of(&d, i) != QJ_STRING) continue;
        size_t n = qj_str_decoded_len(&d, i);
        char *s = malloc(n + 1);
        QF_ASSERT(s != NULL, "out of memory");
        n = qj_str_decode_into(&d, i, s);
        t->open += count_exact(s, n, "<system-reminder>");
        t->close += count_exact(s, n, "</system-reminder>");
        qbuf sink;
        qbuf_init(&sink, a);
        t->matched += qt_neutralise(&sink, s, n, "system-reminder", false);
        qbuf_free(&sink);
        scan_lines(s, n, t);
        free(s);
    }
    qj_doc_free(&d);
}

static void render_and_check(const quire_transcript *tr, const quire_state *s, const char *provider,
                             const char *model, bool xml, size_t expect) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    quire_render_result r;
    quire_error e;
    quire_status st = quire_render(tr, s, &ro, NULL, &r, &e);
    if (st) {
        qf_check_error(st, &e, "render");
        QF_ASSERT(0, "render failed on accepted reminders: %s", e.message);
    }
    qf_check_json(r.request.data, r.request.len, "request");
    tally t;
    scan_request(r.request.data, r.request.len, &t);
    if (xml) {
        QF_ASSERT(t.open == expect && t.close == expect, "%s: %zu opening and %zu closing tags, expected %zu: %.2000s",
                  provider, t.open, t.close, expect, r.request.data);
        QF_ASSERT(t.matched == 2 * expect, "%s: the matcher finds %zu tag openers, quire wrote %zu: %.2000s", provider,
                  t.matched, 2 * expect, r.request.data);
    } else {
        QF_ASSERT(t.matched == 0, "%s: the matcher finds %zu tag openers in a plain-wrapper request: %.2000s", provider,
                  t.matched, r.request.data);
        QF_ASSERT(t.header == expect && t.end == expect,
                  "%s: %zu header and %zu end lines, expected %zu: %.2000s", provider, t.header, t.end, expect,
                  r.request.data);
    }
    quire_render_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!QF_HAVE(quire_state_apply_lines) || !QF_HAVE(quire_state_reminder_count)) return 0;
    const char *a, *b;
    size_t alen, blen;
    qf_split(data, size, &a, &alen, &b, &blen);
    qbuf lines;
    qbuf_init(&lines, q_alloc_default());
    put_reminder(&lines, "a", a, alen);
    if (b) put_reminder(&lines, "b", b, blen);
    QF_ASSERT(!lines.oom, "out of memory");
    quire_state *s = NULL;
    quire_error e;
    quire_status st = quire_state_apply_lines(NULL, lines.data, lines.len, NULL, &s, NULL, NULL, &e);
    qbuf_free(&lines);
    /* a peer's bad body is dropped with an event, never an error of the batch */
    QF_ASSERT(st == QUIRE_OK, "apply_lines: %s", e.message);
    size_t expect = quire_state_reminder_count(s) ? 1 : 0;
    quire_transcript *tr = NULL;
    if (quire_transcript_parse(k_transcript, sizeof k_transcript - 1, NULL, &tr, &e) == QUIRE_OK) {
        render_and_check(tr, s, "anthropic", "claude-sonnet-4-5", true, expect);
        render_and_check(tr, s, "mistral", "mistral-large-latest", false, expect);
        quire_transcript_free(tr);
    }
    quire_state_free(s);
    return 0;
}
