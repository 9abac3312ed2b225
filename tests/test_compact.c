/* Compaction (DESIGN 6): unit checks of the policy parser and the summary
 * wrapper, then property tests over generated transcripts: for many seeds and
 * policies, every result keeps tool calls paired with their results, keeps
 * pinned messages byte-exact, meets the budget (or fails with
 * QUIRE_E_BUDGET), cuts only on grapheme boundaries, never introduces two
 * consecutive user messages, is deterministic and is a fixed point (compacting
 * it again changes nothing). */
#include "compact/compact.h"
#include "compact/internal.h"
#include "core/text.h"
#include "unit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <utf8proc.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static quire_transcript *parse(const char *json, size_t len) {
    quire_transcript *t = NULL;
    quire_error e;
    if (quire_transcript_parse(json, len, NULL, &t, &e)) {
        fprintf(stderr, "parse failed: %s: %s\n", e.pointer, e.message);
        return NULL;
    }
    return t;
}

static char *write_t(const quire_transcript *t) {
    quire_bytes b = {0};
    quire_error e;
    if (quire_transcript_write(t, 0, &b, &e)) return NULL;
    return b.data; /* malloc'd by the default allocator */
}

static char *write_msg(const qmsg *m) {
    qbuf b;
    qbuf_init(&b, NULL);
    qw w;
    qw_init(&w, &b, false);
    qtr_write_message(m, &w);
    qw_dispose(&w);
    qbuf_putc(&b, '\0');
    return b.data;
}

/* ------------------------------------------------------------------------ */
/* Policy parsing                                                            */
/* ------------------------------------------------------------------------ */

static void test_policy(void) {
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    CHECK_INT(p.keep_last_turns, 4);
    CHECK_INT(p.keep_first_turns, 1);
    CHECK_INT(p.stages, QUIRE_COMPACT_ALL_STAGES);
    quire_error e;
    const char *ok = "{\"budgetTokens\":20000,\"keepLastTurns\":0,\"keepFirstTurns\":2,\"toolOutputExcerptBytes\":64,"
                     "\"summaryTokens\":300,\"stages\":{\"summarize\":false}}";
    CHECK_INT(quire_compact_policy_parse(ok, strlen(ok), &p, &e), QUIRE_OK);
    CHECK_INT(p.budget_tokens, 20000);
    CHECK_INT(p.keep_last_turns, 0);
    CHECK_INT(p.keep_first_turns, 2);
    CHECK_INT(p.tool_output_excerpt_bytes, 64);
    CHECK_INT(p.summary_tokens, 300);
    CHECK_INT(p.summary_request_tokens, 100000);
    CHECK_INT(p.stages, QUIRE_COMPACT_PRUNE_TOOL_OUTPUTS | QUIRE_COMPACT_CUT_OVERSIZED);
    /* fields absent keep their value; null budget = none */
    const char *nb = "{\"budgetTokens\":null}";
    CHECK_INT(quire_compact_policy_parse(nb, strlen(nb), &p, &e), QUIRE_OK);
    CHECK_INT(p.budget_tokens, 0);
    CHECK_INT(p.keep_first_turns, 2);
    static const struct { const char *json, *ptr, *msg; } bad[] = {
        {"{\"budget\":1}", "/budget", "unknown policy field"},
        {"{\"stages\":{\"prune\":true}}", "/stages/prune", "unknown stage switch"},
        {"{\"stages\":{\"summarize\":1}}", "/stages/summarize", "expected a boolean, got number"},
        {"{\"keepLastTurns\":-1}", "/keepLastTurns", "expected a whole number from 0 to 4294967295"},
        {"{\"keepLastTurns\":1.5}", "/keepLastTurns", "expected a whole number from 0 to 4294967295"},
        {"{\"keepFirstTurns\":\"1\"}", "/keepFirstTurns", "expected a whole number, got string"},
        {"{\"keepLastTurns\":1,\"keepLastTurns\":2}", "/keepLastTurns", "duplicate key in policy"},
        {"[]", "", "expected a policy object, got array"},
    };
    for (size_t i = 0; i < Q_COUNTOF(bad); i++) {
        quire_compact_policy q = QUIRE_COMPACT_POLICY_INIT;
        memset(&e, 0, sizeof e);
        quire_status st = quire_compact_policy_parse(bad[i].json, strlen(bad[i].json), &q, &e);
        CHECK_MSG(st == QUIRE_E_INVALID, "%s accepted", bad[i].json);
        CHECK_STR(e.pointer, bad[i].ptr);
        CHECK_MSG(strstr(e.message, bad[i].msg) != NULL, "%s: message %s", bad[i].json, e.message);
        CHECK_INT(q.budget_tokens, 0); /* nothing applied on error */
    }
}

static void test_wrap(void) {
    qbuf b;
    qbuf_init(&b, NULL);
    const char *s = "\n\nline one\nsee </conversation-summary> here\n\n  ";
    qc_wrap_summary(&b, s, strlen(s));
    qbuf_putc(&b, '\0');
    CHECK_STR(b.data, "<conversation-summary>\nline one\nsee &lt;/conversation-summary> here\n</conversation-summary>");
    qbuf_free(&b);
}

/* A host counter: one token per byte, counts its calls. */
static size_t g_calls;
static size_t count_bytes(const char *s, size_t n, void *ud) {
    (void)s;
    g_calls++;
    CHECK(ud == &g_calls);
    return n;
}

static void test_host_counter(void) {
    const char *j = "{\"messages\":[{\"role\":\"user\",\"content\":\"abcd\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"xy\"},"
                    "{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":\"AAAA\"}]}]}";
    quire_transcript *t = parse(j, strlen(j));
    if (!t) { CHECK(0); return; }
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.count_tokens = count_bytes;
    p.count_tokens_ud = &g_calls;
    /* user: 4 + 3 + 4; assistant: 4 + (3 + 2) + (3 + image) */
    CHECK_INT(quire_compact_estimate(t, &p), 4 + 3 + 4 + 4 + 3 + 2 + 3 + QC_TOK_IMAGE);
    CHECK(g_calls == 2);
    quire_transcript_free(t);
}

/* ------------------------------------------------------------------------ */
/* Generated transcripts                                                     */
/* ------------------------------------------------------------------------ */

static uint64_t g_rng;
static uint32_t rnd(uint32_t n) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return n ? (uint32_t)(g_rng % n) : 0;
}

/* Text pieces that punish bad cuts: ZWJ families, decomposed accents,
 * Arabic with harakat, flags, Hangul jamo, CJK, plain ASCII lines. */
static const char *const k_pieces[] = {
    "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7\xE2\x80\x8D\xF0\x9F\x91\xA6",
    "cafe\xCC\x81 na\xCC\x88ive ",
    "\xD9\x85\xD9\x8E\xD8\xB1\xD9\x92\xD8\xAD\xD9\x8E\xD8\xA8\xD9\x8B\xD8\xA7 ",
    "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7",
    "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8",
    "\xE4\xB8\xAD\xE6\x96\x87\xE6\x96\x87\xE6\x9C\xAC",
    "the quick brown fox jumps over the lazy dog\n",
    "x = f(y) + \"quoted\\n\" {tab\t}\n",
    "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD ",
};

static void put_text(qw *w, uint32_t pieces) {
    qbuf s;
    qbuf_init(&s, NULL);
    for (uint32_t i = 0; i < pieces; i++) qbuf_puts(&s, k_pieces[rnd((uint32_t)Q_COUNTOF(k_pieces))]);
    qw_str(w, s.data ? s.data : "", s.len);
    qbuf_free(&s);
}

static bool g_pins = true; /* generate pinned messages */

static uint32_t big(void) { return rnd(4) == 0 ? 100 + rnd(400) : 1 + rnd(12); }

/* One transcript: n turns of user -> assistant (text, tool calls) -> tool
 * results (sometimes Anthropic style inside the user message, sometimes with
 * a user interjection between call and result), pinned messages, images,
 * developer messages. */
static char *gen(uint32_t nturns, size_t *len) {
    qbuf b;
    qbuf_init(&b, NULL);
    qw w;
    qw_init(&w, &b, false);
    qw_obj_begin(&w);
    qw_key(&w, "system"); qw_strz(&w, "You are a careful agent.");
    qw_key(&w, "tools");
    qw_arr_begin(&w);
    const char *tool = "{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}";
    qw_raw_value(&w, tool, strlen(tool));
    qw_arr_end(&w);
    qw_key(&w, "messages");
    qw_arr_begin(&w);
    uint32_t call = 0, mid = 0;
    char id[32];
    for (uint32_t t = 0; t < nturns; t++) {
        /* user */
        qw_obj_begin(&w);
        qw_key(&w, "role"); qw_strz(&w, "user");
        qw_key(&w, "content");
        if (rnd(5) == 0) {
            qw_arr_begin(&w);
            qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "text"); qw_key(&w, "text"); put_text(&w, big()); qw_obj_end(&w);
            qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "image"); qw_key(&w, "mediaType"); qw_strz(&w, "image/png");
            qw_key(&w, "data"); qw_strz(&w, "iVBORw0KGgo="); qw_obj_end(&w);
            qw_arr_end(&w);
        } else {
            put_text(&w, big());
        }
        snprintf(id, sizeof id, "m%u", mid++);
        qw_key(&w, "id"); qw_strz(&w, id);
        if (rnd(9) == 0 && g_pins) { qw_key(&w, "pinned"); qw_bool(&w, true); }
        qw_obj_end(&w);
        if (rnd(8) == 0) { /* a developer note inside the turn */
            qw_obj_begin(&w);
            qw_key(&w, "role"); qw_strz(&w, "developer");
            qw_key(&w, "content"); put_text(&w, 2);
            qw_obj_end(&w);
        }
        uint32_t steps = rnd(4);
        for (uint32_t s = 0; s <= steps; s++) {
            uint32_t ncalls = s == steps ? 0 : 1 + rnd(3);
            qw_obj_begin(&w);
            qw_key(&w, "role"); qw_strz(&w, "assistant");
            qw_key(&w, "content");
            qw_arr_begin(&w);
            if (rnd(3) == 0) {
                qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "thinking"); qw_key(&w, "text"); put_text(&w, 3);
                qw_key(&w, "signature"); qw_strz(&w, "sig=="); qw_obj_end(&w);
            }
            qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "text"); qw_key(&w, "text"); put_text(&w, 1 + rnd(6)); qw_obj_end(&w);
            uint32_t first = call;
            for (uint32_t c = 0; c < ncalls; c++) {
                snprintf(id, sizeof id, "call_%u", call++);
                qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "toolCall"); qw_key(&w, "id"); qw_strz(&w, id);
                qw_key(&w, "name"); qw_strz(&w, "read");
                qw_key(&w, "input"); qw_raw_value(&w, "{\"path\":\"a.c\",\"n\":1.50}", strlen("{\"path\":\"a.c\",\"n\":1.50}"));
                qw_obj_end(&w);
            }
            qw_arr_end(&w);
            snprintf(id, sizeof id, "m%u", mid++);
            qw_key(&w, "id"); qw_strz(&w, id);
            if (rnd(12) == 0 && g_pins) { qw_key(&w, "pinned"); qw_bool(&w, true); }
            qw_obj_end(&w);
            if (!ncalls) break;
            /* the draw is kept (same random stream), the interjection is not:
             * a user message between a call and its result leaves an orphan
             * result, which compact refuses as render does */
            bool interject = rnd(10) == 0 && false;
            if (interject) {
                qw_obj_begin(&w);
                qw_key(&w, "role"); qw_strz(&w, "user");
                qw_key(&w, "content"); qw_strz(&w, "(waiting)");
                qw_obj_end(&w);
            }
            bool anthropic = rnd(3) == 0;
            qw_obj_begin(&w);
            qw_key(&w, "role"); qw_strz(&w, anthropic ? "user" : "tool");
            qw_key(&w, "content");
            qw_arr_begin(&w);
            for (uint32_t c = 0; c < ncalls; c++) {
                snprintf(id, sizeof id, "call_%u", first + c);
                qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "toolResult"); qw_key(&w, "toolCallId"); qw_strz(&w, id);
                qw_key(&w, "content");
                if (rnd(4) == 0) {
                    qw_arr_begin(&w);
                    qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "text"); qw_key(&w, "text"); put_text(&w, big()); qw_obj_end(&w);
                    qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "text"); qw_key(&w, "text"); put_text(&w, big()); qw_obj_end(&w);
                    qw_arr_end(&w);
                } else {
                    put_text(&w, big());
                }
                if (rnd(5) == 0) { qw_key(&w, "isError"); qw_bool(&w, true); }
                qw_obj_end(&w);
            }
            if (anthropic && rnd(2)) {
                qw_obj_begin(&w); qw_key(&w, "type"); qw_strz(&w, "text"); qw_key(&w, "text"); put_text(&w, 1); qw_obj_end(&w);
            }
            qw_arr_end(&w);
            snprintf(id, sizeof id, "m%u", mid++);
            qw_key(&w, "id"); qw_strz(&w, id);
            if (rnd(10) == 0 && g_pins) { qw_key(&w, "pinned"); qw_bool(&w, true); }
            qw_obj_end(&w);
        }
    }
    qw_arr_end(&w);
    qw_obj_end(&w);
    qw_dispose(&w);
    qbuf_putc(&b, '\0');
    *len = b.len - 1;
    return b.data;
}

/* ------------------------------------------------------------------------ */
/* Properties                                                                */
/* ------------------------------------------------------------------------ */

static bool qstr_same(qstr a, qstr b) {
    qarena ar;
    qarena_init(&ar, NULL);
    size_t la, lb;
    const char *pa = qstr_plain_bytes(a, &ar, &la), *pb = qstr_plain_bytes(b, &ar, &lb);
    bool same = pa && pb && la == lb && memcmp(pa, pb, la) == 0;
    qarena_free(&ar);
    return same;
}

/* Every toolCall has its result later, every result its call earlier (when
 * the input had them). */
static void check_pairs(const quire_transcript *in, const quire_transcript *out, const char *what) {
    for (uint32_t i = 0; i < out->nmsgs; i++) {
        const qmsg *m = &out->msgs[i];
        for (uint32_t k = 0; k < m->nblocks; k++) {
            const qblock *b = &m->blocks[k];
            if (b->type == QB_TOOL_CALL) {
                bool found = false;
                for (uint32_t j = i + 1; j < out->nmsgs && !found; j++)
                    for (uint32_t q = 0; q < out->msgs[j].nblocks; q++)
                        if (out->msgs[j].blocks[q].type == QB_TOOL_RESULT && qstr_same(out->msgs[j].blocks[q].tool_call_id, b->id)) { found = true; break; }
                CHECK_MSG(found, "%s: call %.*s lost its result", what, (int)b->id.len, b->id.p);
            } else if (b->type == QB_TOOL_RESULT) {
                bool found = false;
                for (uint32_t j = 0; j < i && !found; j++)
                    for (uint32_t q = 0; q < out->msgs[j].nblocks; q++)
                        if (out->msgs[j].blocks[q].type == QB_TOOL_CALL && qstr_same(out->msgs[j].blocks[q].id, b->tool_call_id)) { found = true; break; }
                CHECK_MSG(found, "%s: result %.*s lost its call", what, (int)b->tool_call_id.len, b->tool_call_id.p);
            }
        }
    }
    (void)in;
}

/* Pinned input messages appear in the output byte-exact (a summary block may
 * have been merged in front of a pinned user message). */
static void check_pinned(const quire_transcript *in, const quire_transcript *out, const char *what) {
    for (uint32_t i = 0; i < in->nmsgs; i++) {
        const qmsg *im = &in->msgs[i];
        if (!im->pinned || !qstr_present(im->id)) continue;
        char *a = write_msg(im);
        bool found = false;
        for (uint32_t j = 0; j < out->nmsgs && !found; j++) {
            const qmsg *om = &out->msgs[j];
            if (!qstr_present(om->id) || !qstr_same(om->id, im->id) || om->role != im->role) continue;
            qmsg c = *om;
            if (c.nblocks == im->nblocks + 1 && c.blocks[0].type == QB_TEXT) {
                c.blocks++;
                c.nblocks--;
                c.content_is_string = im->content_is_string;
            }
            char *b2 = write_msg(&c);
            found = strcmp(a, b2) == 0;
            free(b2);
        }
        CHECK_MSG(found, "%s: pinned message %u missing or changed: %.200s", what, i, a);
        free(a);
    }
}

/* Each excerpt ("\n[… N bytes omitted …]\n") joins a head and a tail that
 * start and end on grapheme boundaries of the text. */
static bool grapheme_boundary_after(const char *s, size_t n, size_t pos) {
    /* pos is a boundary of s[0..n) iff a grapheme walk from 0 stops there */
    if (pos == 0 || pos >= n) return true;
    utf8proc_int32_t state = 0, prev = -1, cp;
    size_t i = 0;
    while (i < n) {
        utf8proc_ssize_t l = utf8proc_iterate((const uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (l <= 0) return false;
        if (prev >= 0 && i == pos) return utf8proc_grapheme_break_stateful(prev, cp, &state);
        if (prev >= 0 && i > pos) return false;
        if (prev >= 0) utf8proc_grapheme_break_stateful(prev, cp, &state);
        prev = cp;
        i += (size_t)l;
    }
    return true;
}

/* The input's texts, plain, to find where an excerpt came from. */
typedef struct texts { const char **s; size_t *n; size_t count, cap; qarena ar; } texts;

static void texts_add(texts *x, qstr q) {
    size_t n;
    const char *p = qstr_plain_bytes(q, &x->ar, &n);
    if (!p) return;
    if (x->count == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 64;
        x->s = realloc(x->s, x->cap * sizeof *x->s);
        x->n = realloc(x->n, x->cap * sizeof *x->n);
    }
    x->s[x->count] = p;
    x->n[x->count++] = n;
}

static void texts_of(texts *x, const quire_transcript *t) {
    memset(x, 0, sizeof *x);
    qarena_init(&x->ar, NULL);
    for (uint32_t i = 0; i < t->nmsgs; i++)
        for (uint32_t k = 0; k < t->msgs[i].nblocks; k++) {
            const qblock *b = &t->msgs[i].blocks[k];
            if (b->type == QB_TEXT) texts_add(x, b->text);
            else if (b->type == QB_TOOL_RESULT && b->content_is_string) texts_add(x, b->content_text);
            else if (b->type == QB_TOOL_RESULT)
                for (uint32_t q = 0; q < b->nparts; q++)
                    if (b->parts[q].type == QB_TEXT) texts_add(x, b->parts[q].text);
        }
}

static void texts_free(texts *x) { free(x->s); free(x->n); qarena_free(&x->ar); }

static uint32_t g_cuts_checked;

/* Each excerpt "HEAD\n[… N bytes omitted …]\nTAIL" comes from an input text
 * that starts with HEAD, ends with TAIL and has grapheme boundaries at both
 * cut points; N is the number of bytes between them. */
static void check_cut_text(const texts *in, const char *s, size_t n, const char *what) {
    CHECK_MSG(qt_utf8_valid(s, n, NULL), "%s: invalid UTF-8 in output", what);
    const char *mk = "\n[\xE2\x80\xA6 ";
    size_t i = 0;
    for (; i + 6 <= n; i++)
        if (memcmp(s + i, mk, 6) == 0) break;
    if (i + 6 > n) return;
    const char *close = NULL;
    for (size_t j = i + 6; j + 6 <= n; j++)
        if (memcmp(s + j, " \xE2\x80\xA6]\n", 6) == 0) { close = s + j; break; }
    if (!close) return;
    /* a summary wraps its own text: the digest may quote excerpts; skip it */
    if (n >= 22 && memcmp(s, "<conversation-summary>", 22) == 0) return;
    size_t head = i, tail_at = (size_t)(close - s) + 6, tail = n - tail_at;
    unsigned long long omitted = strtoull(s + i + 6, NULL, 10);
    bool found = false;
    for (size_t k = 0; k < in->count && !found; k++) {
        const char *o = in->s[k];
        size_t on = in->n[k];
        if (on < head + tail || memcmp(o, s, head) != 0 || memcmp(o + on - tail, s + tail_at, tail) != 0) continue;
        if (on - head - tail != omitted) continue;
        found = true;
        g_cuts_checked++;
        CHECK_MSG(grapheme_boundary_after(o, on, head), "%s: head cut inside a grapheme at %zu of %zu", what, head, on);
        CHECK_MSG(grapheme_boundary_after(o, on, on - tail), "%s: tail cut inside a grapheme at %zu of %zu", what,
                  on - tail, on);
    }
    CHECK_MSG(found, "%s: excerpt of unknown origin (head %zu, tail %zu, omitted %llu)", what, head, tail, omitted);
}

static void check_text(const quire_transcript *in_t, const quire_transcript *out, const char *what) {
    texts in;
    texts_of(&in, in_t);
    texts o;
    texts_of(&o, out);
    for (size_t k = 0; k < o.count; k++) check_cut_text(&in, o.s[k], o.n[k], what);
    texts_free(&o);
    texts_free(&in);
}

static uint32_t user_pairs(const quire_transcript *t) {
    uint32_t n = 0;
    for (uint32_t i = 1; i < t->nmsgs; i++) n += t->msgs[i - 1].role == QR_USER && t->msgs[i].role == QR_USER;
    return n;
}

static uint32_t g_met, g_budget_errors, g_unchanged, g_summaries, g_cuts, g_prunes;

static void property_run(uint64_t seed, uint32_t nturns, const quire_compact_policy *p, bool with_summary) {
    char what[128];
    snprintf(what, sizeof what, "seed %llu turns %u budget %llu kf %u kl %u ks %u stages %u%s", (unsigned long long)seed,
             nturns, (unsigned long long)p->budget_tokens, p->keep_first_turns, p->keep_last_turns, p->keep_last_steps,
             p->stages,
             with_summary ? " +summary" : "");
    g_rng = seed * 2654435761u + 1;
    size_t len;
    char *json = gen(nturns, &len);
    quire_transcript *t = parse(json, len);
    CHECK_MSG(t != NULL, "%s: generated transcript rejected", what);
    if (!t) { free(json); return; }
    const char *summary = with_summary ? "Summary: \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9 did things." : NULL;
    quire_compact_result r1, r2;
    quire_error e;
    memset(&e, 0, sizeof e);
    quire_status st = quire_compact(t, NULL, p, summary, summary ? strlen(summary) : 0, NULL, &r1, &e);
    if (st == QUIRE_E_BUDGET) {
        g_budget_errors++;
        CHECK_MSG(strstr(e.message, "budget of ") != NULL, "%s: unclear budget error: %s", what, e.message);
        CHECK(r1.transcript == NULL);
        quire_transcript_free(t);
        free(json);
        return;
    }
    if (st == QUIRE_E_INVALID && with_summary) { /* no span */
        CHECK_MSG(strstr(e.message, "selects no turns or steps") != NULL, "%s: %s", what, e.message);
        quire_transcript_free(t);
        free(json);
        return;
    }
    CHECK_MSG(st == QUIRE_OK, "%s: %s", what, e.message);
    if (st) { quire_transcript_free(t); free(json); return; }
    const quire_transcript *o = r1.transcript;
    uint64_t after = quire_compact_estimate(o, p);
    if (p->budget_tokens) CHECK_MSG(after <= p->budget_tokens, "%s: %llu over budget", what, (unsigned long long)after);
    g_met++;
    if (!r1.changed) g_unchanged++;
    if (strstr(r1.report.data, "\"summarize\"")) g_summaries++;
    if (strstr(r1.report.data, "\"cutOversized\"")) g_cuts++;
    if (strstr(r1.report.data, "\"pruneToolOutputs\"")) g_prunes++;
    check_pairs(t, o, what);
    check_pinned(t, o, what);
    check_text(t, o, what);
    CHECK_MSG(user_pairs(o) <= user_pairs(t), "%s: consecutive user messages introduced", what);
    /* instructions (system/developer messages) are never summarised away */
    uint32_t ni = 0, no = 0;
    for (uint32_t i = 0; i < t->nmsgs; i++) ni += t->msgs[i].role == QR_DEVELOPER || t->msgs[i].role == QR_SYSTEM;
    for (uint32_t i = 0; i < o->nmsgs; i++) no += o->msgs[i].role == QR_DEVELOPER || o->msgs[i].role == QR_SYSTEM;
    CHECK_MSG(ni == no, "%s: %u instruction messages in, %u out", what, ni, no);
    CHECK(t->has_system == o->has_system && t->system == o->system);
    char *out1 = write_t(o);
    /* the report's numbers match a fresh estimate */
    char want[64];
    snprintf(want, sizeof want, "\"tokensAfter\":%llu,", (unsigned long long)after);
    CHECK_MSG(strstr(r1.report.data, want) != NULL, "%s: report %s", what, r1.report.data);
    /* unchanged means byte-identical to the canonical input */
    if (!r1.changed) {
        char *in1 = write_t(t);
        CHECK_MSG(in1 && out1 && strcmp(in1, out1) == 0, "%s: unchanged but different", what);
        free(in1);
    }
    /* determinism */
    st = quire_compact(t, NULL, p, summary, summary ? strlen(summary) : 0, NULL, &r2, &e);
    CHECK(st == QUIRE_OK);
    if (st == QUIRE_OK) {
        char *out2 = write_t(r2.transcript);
        CHECK_MSG(out1 && out2 && strcmp(out1, out2) == 0, "%s: not deterministic", what);
        CHECK(r1.report.len == r2.report.len && memcmp(r1.report.data, r2.report.data, r1.report.len) == 0);
        CHECK(r1.events.len == r2.events.len && memcmp(r1.events.data, r2.events.data, r1.events.len) == 0);
        free(out2);
        quire_compact_result_free(&r2);
    }
    /* idempotence: compacting the result (re-parsed) changes nothing */
    if (out1 && p->budget_tokens) {
        quire_transcript *t2 = parse(out1, strlen(out1));
        CHECK(t2 != NULL);
        if (t2) {
            quire_compact_result r3;
            st = quire_compact(t2, NULL, p, NULL, 0, NULL, &r3, &e);
            CHECK_MSG(st == QUIRE_OK && !r3.changed, "%s: second compaction changed it (%s)", what, e.message);
            if (st == QUIRE_OK) {
                char *out3 = write_t(r3.transcript);
                CHECK_MSG(out3 && strcmp(out1, out3) == 0, "%s: not a fixed point", what);
                free(out3);
                quire_compact_result_free(&r3);
            }
            quire_transcript_free(t2);
        }
    }
    /* QUIRE_COMPACT_OWN gives the same bytes, independent of the input */
    quire_compact_policy po = *p;
    po.flags = QUIRE_COMPACT_OWN;
    quire_compact_result r4;
    st = quire_compact(t, NULL, &po, summary, summary ? strlen(summary) : 0, NULL, &r4, &e);
    CHECK(st == QUIRE_OK);
    if (st == QUIRE_OK) {
        quire_transcript_free(t);
        t = NULL;
        memset(json, 'X', len); /* the input bytes are gone */
        char *out4 = write_t(r4.transcript);
        CHECK_MSG(out1 && out4 && strcmp(out1, out4) == 0, "%s: owned copy differs", what);
        free(out4);
        quire_compact_result_free(&r4);
    }
    free(out1);
    quire_compact_result_free(&r1);
    quire_transcript_free(t);
    free(json);
}

static void test_properties(void) {
    static const uint64_t budgets[] = {0, 150, 600, 2000, 6000, 20000};
    static const uint32_t keeps[][3] = {{1, 4, 8}, {0, 0, 0}, {2, 1, 2}, {0, 2, 1}, {1, 1, 0}};
    static const uint32_t stages[] = {QUIRE_COMPACT_ALL_STAGES, QUIRE_COMPACT_SUMMARIZE,
                                      QUIRE_COMPACT_PRUNE_TOOL_OUTPUTS | QUIRE_COMPACT_CUT_OVERSIZED};
    for (uint64_t seed = 1; seed <= 24; seed++) {
        uint32_t nturns = 1 + (uint32_t)(seed * 7 % 13);
        for (size_t b = 0; b < Q_COUNTOF(budgets); b++)
            for (size_t k = 0; k < Q_COUNTOF(keeps); k++)
                for (size_t s = 0; s < Q_COUNTOF(stages); s++) {
                    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
                    p.budget_tokens = budgets[b];
                    p.keep_first_turns = keeps[k][0];
                    p.keep_last_turns = keeps[k][1];
                    p.keep_last_steps = keeps[k][2];
                    p.stages = stages[s];
                    p.tool_output_excerpt_bytes = (uint32_t)(40 + seed * 13 % 200);
                    p.summary_tokens = 200;
                    property_run(seed, nturns, &p, false);
                    if (s == 0 && (b == 0 || b == 3)) property_run(seed, nturns, &p, true);
                }
    }
    printf("properties: %u excerpts checked against their source\n", g_cuts_checked);
    CHECK(g_cuts_checked > 100);
    printf("properties: %u met the budget (%u unchanged, %u pruned, %u summarised, %u cut), %u budget errors\n",
           g_met, g_unchanged, g_prunes, g_summaries, g_cuts, g_budget_errors);
    CHECK(g_summaries > 50 && g_cuts > 50 && g_prunes > 50 && g_budget_errors > 10 && g_unchanged > 50);
}

/* ------------------------------------------------------------------------ */
/* Specific behaviours                                                       */
/* ------------------------------------------------------------------------ */

static void test_reminders(void) {
    const char *st_json = "{\"turn\":3,\"seq\":2,\"reminders\":["
                          "{\"id\":\"keep\",\"body\":\"Keep me.\",\"preserveOnCompact\":true,\"ttlTurns\":4,\"ttlRemaining\":2},"
                          "{\"id\":\"go\",\"body\":\"Go away.\",\"ttlTurns\":4,\"ttlRemaining\":2}]}";
    quire_state *s = NULL;
    quire_error e;
    CHECK_INT(quire_state_parse(st_json, strlen(st_json), NULL, &s, &e), QUIRE_OK);
    g_rng = 99;
    size_t len;
    char *json = gen(8, &len);
    quire_transcript *t = parse(json, len);
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.budget_tokens = 100000000;
    quire_compact_result r;
    /* under budget: no compaction, every reminder stays, no events */
    CHECK_INT(quire_compact(t, s, &p, NULL, 0, NULL, &r, &e), QUIRE_OK);
    CHECK(!r.changed && r.state->nrems == 2 && r.events.len == 0);
    quire_compact_result_free(&r);
    /* compaction: "keep" stays with its TTL untouched, "go" leaves */
    p.budget_tokens = quire_compact_estimate(t, &p) - 1;
    quire_status st = quire_compact(t, s, &p, NULL, 0, NULL, &r, &e);
    CHECK_MSG(st == QUIRE_OK, "%s", e.message);
    if (st) { quire_state_free(s); quire_transcript_free(t); free(json); return; }
    CHECK(r.changed);
    CHECK_INT(r.state->nrems, 1);
    if (r.state->nrems == 1) {
        CHECK_STR(r.state->rems[0].id, "keep");
        CHECK_INT(r.state->rems[0].ttl_remaining, 2);
    }
    CHECK_INT(r.state->turn, 3);
    CHECK(strncmp(r.events.data, "{\"sessionUpdate\":\"transcript_compacted\",", 40) == 0);
    CHECK(strstr(r.events.data, "{\"sessionUpdate\":\"reminder_expired\",\"reminderId\":\"go\",\"phase\":\"compacted_out\"") != NULL);
    CHECK(strstr(r.report.data, "\"reminders\":{\"kept\":[\"keep\"],\"removed\":[\"go\"]}") != NULL);
    CHECK_INT(s->nrems, 2); /* the input state is a value: untouched */
    quire_compact_result_free(&r);
    quire_state_free(s);
    quire_transcript_free(t);
    free(json);
}

static void test_plan(void) {
    g_rng = 7;
    size_t len;
    char *json = gen(12, &len);
    quire_transcript *t = parse(json, len);
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.budget_tokens = 1500;
    quire_bytes b = {0};
    quire_error e;
    CHECK_INT(quire_compact_plan(t, &p, 0, NULL, &b, &e), QUIRE_OK);
    /* the summarisation transcript is a valid quire.transcript/1 */
    qj_doc d;
    CHECK_INT(qj_parse(&d, b.data, b.len, NULL, q_alloc_default(), &e), QUIRE_OK);
    uint32_t st = qj_get(&d, 0, "summarizationTranscript");
    CHECK(st != QJ_NONE && qj_type_of(&d, st) == QJ_OBJECT);
    if (st != QJ_NONE && qj_type_of(&d, st) == QJ_OBJECT) {
        quire_transcript *s = qtr_new(NULL);
        CHECK_INT(qtr_decode(s, &d, st, &e), QUIRE_OK);
        CHECK_INT(s->nmsgs, 1);
        quire_transcript_free(s);
    }
    /* the span the plan names is the span a supplied summary replaces */
    uint32_t span = qj_get(&d, 0, "span");
    CHECK(span != QJ_NONE && qj_type_of(&d, span) == QJ_OBJECT);
    quire_compact_result r;
    p.budget_tokens = 0; /* the span does not depend on the budget */
    CHECK_INT(quire_compact(t, NULL, &p, "S.", 2, NULL, &r, &e), QUIRE_OK);
    if (span != QJ_NONE && r.report.data) {
        const qj_node *sn = qj_at(&d, qj_get(&d, span, "messageIds"));
        char *ids = malloc(sn->len + 1);
        memcpy(ids, sn->p, sn->len);
        ids[sn->len] = '\0';
        CHECK_MSG(strstr(r.report.data, ids) != NULL, "plan span %s not in report %s", ids, r.report.data);
        free(ids);
    }
    quire_compact_result_free(&r);
    qj_doc_free(&d);
    quire_bytes_free(&b);
    /* the summarisation request fits summaryRequestTokens (host counter: 1 token a
     * byte): 0 = unlimited, then limits below that size, down to the last resort */
    p.count_tokens = count_bytes;
    p.count_tokens_ud = &g_calls;
    size_t full = 0;
    static const uint32_t limits[] = {0, 4000, 2000, 1000, 300};
    for (size_t li = 0; li < Q_COUNTOF(limits); li++) {
        p.summary_request_tokens = limits[li];
        CHECK_INT(quire_compact_plan(t, &p, 0, NULL, &b, &e), QUIRE_OK);
        CHECK_INT(qj_parse(&d, b.data, b.len, NULL, q_alloc_default(), &e), QUIRE_OK);
        st = qj_get(&d, 0, "summarizationTranscript");
        if (st != QJ_NONE && qj_type_of(&d, st) == QJ_OBJECT) {
            uint32_t msgs = qj_get(&d, st, "messages");
            uint32_t c = qj_get(&d, msgs + 1, "content");
            size_t n = qj_str_decoded_len(&d, c);
            if (!limits[li]) full = n;
            else CHECK_MSG(n <= limits[li] + 200 && (n < full || full <= limits[li]), "limit %u: request of %zu bytes (full %zu)",
                           limits[li], n, full); /* + the fixed lines around the span */
        } else {
            CHECK(0);
        }
        qj_doc_free(&d);
        quire_bytes_free(&b);
    }
    CHECK_MSG(full > 4000, "full request of %zu bytes", full);
    quire_transcript_free(t);
    free(json);
}

static void test_boundary_checker(void) {
    const char *fam = k_pieces[0]; /* 25 bytes: man ZWJ woman ZWJ girl ZWJ boy */
    CHECK(grapheme_boundary_after(fam, 25, 0));
    CHECK(!grapheme_boundary_after(fam, 25, 4));
    CHECK(!grapheme_boundary_after(fam, 25, 7));
    CHECK(!grapheme_boundary_after(fam, 25, 5));
    char two[51];
    memcpy(two, fam, 25); memcpy(two + 25, fam, 25); two[50] = 0;
    CHECK(grapheme_boundary_after(two, 50, 25));
    CHECK(!grapheme_boundary_after("cafe\xCC\x81", 6, 4));
    CHECK(grapheme_boundary_after("cafe\xCC\x81", 6, 3));
    CHECK(!grapheme_boundary_after(k_pieces[3], 8, 4)); /* one flag = two regional indicators */
}

static void test_excerpt_lines(void) {
    char src[400];
    size_t n = 0;
    for (int i = 0; i < 40; i++) n += (size_t)snprintf(src + n, sizeof src - n, "line %02d\n", i);
    qbuf b;
    qbuf_init(&b, NULL);
    /* head 30 -> "line 00..02\n" (24 bytes: a line end in the last quarter), tail 30 likewise */
    size_t omitted = qc_excerpt(&b, src, n, 30, 30);
    qbuf_putc(&b, '\0');
    CHECK_STR(b.data, "line 00\nline 01\nline 02\n\n[\xE2\x80\xA6 272 bytes omitted \xE2\x80\xA6]\nline 37\nline 38\nline 39\n");
    CHECK_INT(omitted, 272);
    /* no line end near the cut: plain grapheme-safe excerpt */
    b.len = 0;
    char flat[200];
    memset(flat, 'x', sizeof flat);
    CHECK_INT(qc_excerpt(&b, flat, sizeof flat, 40, 40), 120);
    /* short enough: unchanged */
    b.len = 0;
    CHECK_INT(qc_excerpt(&b, src, 60, 30, 30), 0);
    CHECK_INT(b.len, 60);
    qbuf_free(&b);
}

/* A second compaction quotes the first summary; keepLastTurns 0 gives a
 * standalone summary message with a derived id. */
static void test_resummarise(void) {
    g_rng = 4242;
    size_t len;
    g_pins = false;
    char *json = gen(10, &len);
    g_pins = true;
    quire_transcript *t = parse(json, len);
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.keep_last_turns = 3;
    p.keep_first_turns = 0;
    p.keep_last_steps = 0;
    quire_compact_result r1, r2;
    quire_error e;
    CHECK_INT(quire_compact(t, NULL, &p, "First summary: alpha.", 21, NULL, &r1, &e), QUIRE_OK);
    if (!r1.transcript) { quire_transcript_free(t); free(json); return; }
    p.keep_last_turns = 0;
    p.budget_tokens = 1;
    p.stages = QUIRE_COMPACT_SUMMARIZE;
    quire_status st = quire_compact(r1.transcript, NULL, &p, NULL, 0, NULL, &r2, &e);
    CHECK_INT(st, QUIRE_E_BUDGET); /* 1 token cannot be met ... */
    p.budget_tokens = 0;
    st = quire_compact(r1.transcript, NULL, &p, "Second.", 7, NULL, &r2, &e);
    CHECK_INT(st, QUIRE_OK);
    if (st == QUIRE_OK) {
        /* only the developer notes (kept) and the standalone summary remain */
        const quire_transcript *o = r2.transcript;
        for (uint32_t i = 0; i + 1 < o->nmsgs; i++) CHECK(o->msgs[i].role == QR_DEVELOPER);
        const qmsg *last = &o->msgs[o->nmsgs - 1];
        CHECK(last->role == QR_USER && qstr_present(last->id) && strncmp(last->id.p, "summary-", 8) == 0);
        CHECK(strstr(r2.report.data, "\"placement\":\"standalone\"") != NULL);
        quire_compact_result_free(&r2);
    }
    /* ... and the digest of a span holding the first summary quotes it */
    quire_compact_policy q = QUIRE_COMPACT_POLICY_INIT;
    q.keep_first_turns = 0;
    q.keep_last_turns = 0;
    q.keep_last_steps = 0;
    q.budget_tokens = 1000;
    q.stages = QUIRE_COMPACT_SUMMARIZE | QUIRE_COMPACT_CUT_OVERSIZED;
    q.summary_tokens = 400;
    st = quire_compact(r1.transcript, NULL, &q, NULL, 0, NULL, &r2, &e);
    CHECK_MSG(st == QUIRE_OK, "%s", e.message);
    if (st == QUIRE_OK) {
        char *o = write_t(r2.transcript);
        CHECK_MSG(o && strstr(o, "earlier summary:\\nFirst summary: alpha.") != NULL, "%s", o ? o : "");
        free(o);
        quire_compact_result_free(&r2);
    }
    quire_compact_result_free(&r1);
    quire_transcript_free(t);
    free(json);
}


/* A loop that compacts every few turns with keepFirstTurns 1: each new summary
 * joins the kept first user message and replaces the one before (quoting it),
 * so summaries never pile up there. */
static char *loop_turns(const char *head, uint32_t from, uint32_t n) {
    qbuf b;
    qbuf_init(&b, NULL);
    qbuf_puts(&b, head);
    for (uint32_t i = from; i < from + n; i++) {
        qbuf_printf(&b, "%s{\"role\":\"user\",\"content\":\"List dir%u\"},"
                        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Let me look at dir%u.\"},"
                        "{\"type\":\"toolCall\",\"id\":\"c%u\",\"name\":\"read\",\"input\":{\"path\":\"dir%u\"}}]},"
                        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c%u\","
                        "\"content\":\"dir%u/main.c\\ndir%u/util.c\\ndir%u/README.md\"}]},"
                        "{\"role\":\"assistant\",\"content\":\"dir%u holds three files. Done.\"}",
                    i == from && strcmp(head, "{\"messages\":[") == 0 ? "" : ",", i, i, i, i, i, i, i, i, i);
    }
    qbuf_puts(&b, "]}");
    qbuf_putc(&b, '\0');
    return b.data;
}

static size_t count_of(const char *s, const char *z) {
    size_t c = 0;
    for (const char *p = s; (p = strstr(p, z)) != NULL; p += strlen(z)) c++;
    return c;
}

static void test_repeated_kept_first(void) {
    char *json = loop_turns("{\"messages\":[", 0, 6);
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.keep_first_turns = 1;
    p.keep_last_turns = 1;
    p.keep_last_steps = 0;
    p.summary_tokens = 64;
    p.budget_tokens = 250;
    quire_error e;
    for (uint32_t round = 0; round < 4 && json; round++) {
        quire_transcript *t = parse(json, strlen(json));
        free(json);
        json = NULL;
        if (!t) break;
        quire_compact_result r;
        quire_status st = quire_compact(t, NULL, &p, NULL, 0, NULL, &r, &e);
        CHECK_MSG(st == QUIRE_OK, "round %u: %s", round, e.message);
        if (st != QUIRE_OK) { quire_transcript_free(t); break; }
        char *o = write_t(r.transcript);
        CHECK(o != NULL);
        if (o) {
            /* one summary, in the first user message, whatever the round */
            CHECK_MSG(count_of(o, "<conversation-summary>") == 1, "round %u: %s", round, o);
            const char *first_end = strstr(o, "\"role\":\"assistant\"");
            const char *sum = strstr(o, "<conversation-summary>");
            CHECK_MSG(sum && first_end && sum < first_end, "round %u: %s", round, o);
            if (round > 0) {
                CHECK_MSG(strstr(r.report.data, "\"replacedEarlierSummaries\":1") != NULL, "%s", r.report.data);
            }
            /* the next turns of the loop */
            o[strlen(o) - 2] = '\0'; /* drop "]}" */
            json = loop_turns(o, 10 * (round + 1), 3);
            free(o);
        }
        quire_compact_result_free(&r);
        quire_transcript_free(t); /* the result borrowed from it */
    }
    free(json);
}

/* ------------------------------------------------------------------------ */
/* Steps inside one long turn, and pinned spans                              */
/* ------------------------------------------------------------------------ */

/* One user message, then nsteps steps (assistant text + a call, a tool
 * result of about 1,500 bytes), then extra (raw JSON messages, may be ""). */
static char *long_turn(uint32_t nsteps, const char *extra, uint32_t changed_step) {
    qbuf b;
    qbuf_init(&b, NULL);
    qbuf_puts(&b, "{\"system\":\"You are an agent.\",\"messages\":[{\"role\":\"user\",\"content\":\"Port the parser to Rust.\",\"id\":\"task\"}");
    for (uint32_t s = 0; s < nsteps; s++) {
        qbuf_printf(&b, ",{\"role\":\"assistant\",\"id\":\"a%u\",\"content\":[{\"type\":\"text\",\"text\":\"Step %u%s.\"},"
                        "{\"type\":\"toolCall\",\"id\":\"c%u\",\"name\":\"bash\",\"input\":{\"cmd\":\"cargo test %u\"}}]}",
                    s, s, s == changed_step ? " (edited)" : "", s, s);
        qbuf_printf(&b, ",{\"role\":\"tool\",\"id\":\"r%u\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c%u\",\"content\":\"", s, s);
        for (uint32_t l = 0; l < 48; l++) qbuf_printf(&b, "test %u.%u ... ok (line of output)\\n", s, l);
        qbuf_puts(&b, "\"}]}");
    }
    qbuf_puts(&b, extra);
    qbuf_puts(&b, "]}");
    qbuf_putc(&b, '\0');
    return b.data;
}

static void check_tail_verbatim(const quire_transcript *in, const quire_transcript *out, uint32_t nmsgs) {
    CHECK(out->nmsgs >= nmsgs);
    for (uint32_t k = 1; k <= nmsgs && k <= out->nmsgs; k++) {
        quire_bytes a, b;
        qbuf ba, bb;
        qbuf_init(&ba, NULL);
        qbuf_init(&bb, NULL);
        qw w;
        qw_init(&w, &ba, false); qtr_write_message(&in->msgs[in->nmsgs - k], &w); qw_dispose(&w);
        qw_init(&w, &bb, false); qtr_write_message(&out->msgs[out->nmsgs - k], &w); qw_dispose(&w);
        CHECK_MSG(ba.len == bb.len && memcmp(ba.data, bb.data, ba.len) == 0, "message %u from the end changed",
                  k);
        (void)a; (void)b;
        qbuf_free(&ba);
        qbuf_free(&bb);
    }
}

/* Stage 1 and stage 2 work inside the one and only turn; the newest steps and
 * the task's user message stay. */
static void test_long_turn(void) {
    char *json = long_turn(60, "", UINT32_MAX);
    quire_transcript *t = parse(json, strlen(json));
    if (!t) { CHECK(0); free(json); return; }
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    uint64_t before = quire_compact_estimate(t, &p);
    for (int pct = 50; pct >= 25; pct -= 25) {
        p.budget_tokens = before * (uint64_t)pct / 100;
        quire_compact_result r;
        quire_error e;
        CHECK_MSG(quire_compact(t, NULL, &p, NULL, 0, NULL, &r, &e) == QUIRE_OK, "%d%%: %s", pct, e.message);
        if (!r.transcript) continue;
        const quire_transcript *o = r.transcript;
        CHECK(quire_compact_estimate(o, &p) <= p.budget_tokens);
        check_pairs(t, o, "long turn");
        /* the last keepLastSteps steps (2 messages each) verbatim */
        check_tail_verbatim(t, o, 2 * p.keep_last_steps);
        /* the task stays first, its text first */
        CHECK(o->msgs[0].role == QR_USER && qstr_eq(o->msgs[0].id, "task"));
        CHECK(user_pairs(o) == 0);
        if (pct == 50) CHECK_MSG(strstr(r.report.data, "\"stages\":[\"pruneToolOutputs\"") != NULL, "%s", r.report.data);
        if (pct == 25) {
            CHECK_MSG(strstr(r.report.data, "\"summarize\"") != NULL, "%s", r.report.data);
            CHECK_MSG(strstr(r.report.data, "\"placement\":\"appended\"") != NULL, "%s", r.report.data);
            CHECK(o->msgs[0].nblocks == 2); /* the request, then the summary */
        }
        quire_compact_result_free(&r);
    }
    /* keepLastSteps 0: every tool output is old, the newest included */
    p.keep_last_steps = 0;
    p.stages = QUIRE_COMPACT_PRUNE_TOOL_OUTPUTS;
    p.budget_tokens = 200; /* the error names what pruning everything leaves */
    quire_compact_result r;
    quire_error e;
    CHECK_INT(quire_compact(t, NULL, &p, NULL, 0, NULL, &r, &e), QUIRE_E_BUDGET);
    const char *need = strstr(e.message, "still needs ");
    CHECK_MSG(need != NULL, "%s", e.message);
    p.budget_tokens = need ? strtoull(need + strlen("still needs "), NULL, 10) : 1;
    CHECK_MSG(quire_compact(t, NULL, &p, NULL, 0, NULL, &r, &e) == QUIRE_OK, "%s", e.message);
    CHECK(r.report.data && strstr(r.report.data, "\"toolCallId\":\"c59\"") != NULL);
    quire_compact_result_free(&r);
    quire_transcript_free(t);
    free(json);
}

/* Extracts "id":"..." of the plan's span. */
static bool plan_span_id(const char *plan, char *id, size_t cap) {
    const char *s = strstr(plan, "\"span\":{\"id\":\"");
    if (!s) return false;
    s += strlen("\"span\":{\"id\":\"");
    const char *e = strchr(s, '"');
    if (!e || (size_t)(e - s) >= cap) return false;
    memcpy(id, s, (size_t)(e - s));
    id[e - s] = 0;
    return true;
}

static void test_span_pinning(void) {
    char *json = long_turn(20, "", UINT32_MAX);
    const char *more = ",{\"role\":\"assistant\",\"content\":\"Done with the lexer.\",\"id\":\"late1\"}"
                       ",{\"role\":\"user\",\"content\":\"Now the parser.\",\"id\":\"late2\"}";
    char *grown = long_turn(20, more, UINT32_MAX);
    char *edited = long_turn(20, more, 3);
    quire_transcript *t = parse(json, strlen(json)), *g = parse(grown, strlen(grown)), *x = parse(edited, strlen(edited));
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    if (!t || !g || !x) { CHECK(0); goto out; }
    {
    p.budget_tokens = 0; /* "compact now": the whole eligible run */
    quire_bytes plan;
    quire_error e;
    CHECK_INT(quire_compact_plan(t, &p, 0, NULL, &plan, &e), QUIRE_OK);
    char id[96];
    CHECK_MSG(plan.data && plan_span_id(plan.data, id, sizeof id), "%s", plan.data ? plan.data : "");
    quire_bytes_free(&plan);
    /* the grown transcript: the policy alone would pick another span ... */
    quire_compact_result r0, r1;
    const char *sum = "The tests of steps 0-9 pass.";
    CHECK_INT(quire_compact(g, NULL, &p, sum, strlen(sum), NULL, &r0, &e), QUIRE_OK);
    /* ... the span id names the planned one */
    CHECK_MSG(quire_compact_apply(g, NULL, &p, sum, strlen(sum), id, NULL, &r1, &e) == QUIRE_OK, "%s", e.message);
    if (r0.report.data && r1.report.data) {
        char want[160];
        snprintf(want, sizeof want, "\"id\":\"%s\"", id);
        CHECK_MSG(strstr(r1.report.data, want) != NULL, "%s", r1.report.data);
        CHECK_MSG(strstr(r0.report.data, want) == NULL, "%s", r0.report.data);
        /* the appended messages are there, untouched */
        check_tail_verbatim(g, r1.transcript, 2);
    }
    quire_compact_result_free(&r0);
    quire_compact_result_free(&r1);
    /* a span whose messages changed is an error */
    CHECK_INT(quire_compact_apply(x, NULL, &p, sum, strlen(sum), id, NULL, &r1, &e), QUIRE_E_MISMATCH);
    CHECK_MSG(strstr(e.message, "changed since the plan") != NULL, "%s", e.message);
    CHECK(r1.transcript == NULL);
    /* malformed ids, and spans that are not whole steps */
    CHECK_INT(quire_compact_apply(g, NULL, &p, sum, strlen(sum), "1-2", NULL, &r1, &e), QUIRE_E_INVALID);
    CHECK_INT(quire_compact_apply(g, NULL, &p, sum, strlen(sum), "9-3-0000000000000000", NULL, &r1, &e), QUIRE_E_INVALID);
    CHECK_INT(quire_compact_apply(g, NULL, &p, sum, strlen(sum), "1-999-0000000000000000", NULL, &r1, &e), QUIRE_E_MISMATCH);
    CHECK_INT(quire_compact_apply(g, NULL, &p, NULL, 0, id, NULL, &r1, &e), QUIRE_E_INVALID);
    }
out:
    quire_transcript_free(t);
    quire_transcript_free(g);
    quire_transcript_free(x);
    free(json);
    free(grown);
    free(edited);
}

/* A step whose call is not answered yet (the host is running it) is never
 * summarised: its result would come for a call no longer there. */
static void test_open_call(void) {
    const char *json =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"start\"},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"a1\",\"name\":\"read\",\"input\":{}}]},"
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"a1\",\"content\":\"one\"}]},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"a2\",\"name\":\"read\",\"input\":{}}]},"
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"a2\",\"content\":\"two\"}]},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"next\"},"
        "{\"type\":\"toolCall\",\"id\":\"c9\",\"name\":\"read\",\"input\":{}}]}]}";
    quire_transcript *t = parse(json, strlen(json));
    if (!t) { CHECK(0); return; }
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.budget_tokens = 0;
    p.keep_first_turns = 0;
    p.keep_last_turns = 0;
    p.keep_last_steps = 0;
    quire_compact_result r;
    quire_error e;
    CHECK_MSG(quire_compact(t, NULL, &p, "S.", 2, NULL, &r, &e) == QUIRE_OK, "%s", e.message);
    if (r.transcript) {
        quire_bytes b;
        CHECK_INT(quire_transcript_write(r.transcript, 0, &b, &e), QUIRE_OK);
        /* the answered steps went into the summary; the open one is there as it was */
        CHECK_MSG(b.data && !strstr(b.data, "\"a1\"") && !strstr(b.data, "\"a2\""), "%s", b.data ? b.data : "");
        CHECK_MSG(b.data && strstr(b.data, "{\"type\":\"text\",\"text\":\"next\"},{\"type\":\"toolCall\",\"id\":\"c9\"") != NULL,
                  "%s", b.data ? b.data : "");
        quire_bytes_free(&b);
    }
    quire_compact_result_free(&r);
    /* the task's message may go into the summary; the open step stays */
    const char *only = "{\"messages\":[{\"role\":\"user\",\"content\":\"start\"},"
                       "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"read\",\"input\":{}}]}]}";
    quire_transcript *o = parse(only, strlen(only));
    if (o) {
        CHECK_MSG(quire_compact(o, NULL, &p, "S.", 2, NULL, &r, &e) == QUIRE_OK, "%s", e.message);
        quire_bytes b = {0};
        if (r.transcript) CHECK_INT(quire_transcript_write(r.transcript, 0, &b, &e), QUIRE_OK);
        CHECK_MSG(b.data && strstr(b.data, "{\"type\":\"toolCall\",\"id\":\"c1\"") != NULL, "%s", b.data ? b.data : "");
        quire_bytes_free(&b);
        quire_compact_result_free(&r);
        p.keep_first_turns = 1; /* now nothing may go */
        CHECK_INT(quire_compact(o, NULL, &p, "S.", 2, NULL, &r, &e), QUIRE_E_INVALID);
        CHECK_MSG(strstr(e.message, "a step whose calls are not answered yet are kept") != NULL, "%s", e.message);
    }
    quire_transcript_free(o);
    quire_transcript_free(t);
}

int main(void) {
    test_open_call();
    test_long_turn();
    test_span_pinning();
    test_excerpt_lines();
    test_resummarise();
    test_repeated_kept_first();
    test_boundary_checker();
    test_policy();
    test_wrap();
    test_host_counter();
    test_reminders();
    test_plan();
    test_properties();
    TEST_MAIN_END();
}
