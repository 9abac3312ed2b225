/* Summary texts: the wrapper, the deterministic extractive digest and the
 * span rendered as plain text for the summarisation request. Formats are
 * documented in docs/compaction.md. */
#include "compact/internal.h"
#include "core/text.h"

/* Longest line quoted from a message in the digest, in bytes. */
#define QC_DIGEST_LINE 200u
/* Most errors quoted per turn, distinct tool names listed per turn. */
#define QC_DIGEST_ERRORS 3u
#define QC_DIGEST_NAMES 12u

void qc_put_neutral(qbuf *b, const char *s, size_t n, const char *tag) {
    /* the same matcher as reminder hygiene: case, width, look-alike and
     * spacing variants of the tag are neutralised too (core/text.h) */
    qt_neutralise(b, s, n, tag, false);
}

static size_t digits(size_t v) {
    size_t d = 1;
    while (v >= 10) { v /= 10; d++; }
    return d;
}

size_t qc_excerpt(qbuf *out, const char *s, size_t n, size_t head, size_t tail) {
    if (head + tail >= n || n - head - tail <= QT_EXCERPT_MARKER_FIXED + digits(n - head - tail))
        return qt_excerpt(out, s, n, head, tail); /* no cut: appended unchanged */
    size_t h = head, t = tail;
    for (size_t i = head; i > head - head / 4; i--)
        if (s[i - 1] == '\n') { h = i; break; }
    for (size_t i = n - tail; i < n - tail + tail / 4; i++)
        if (s[i] == '\n') { t = n - i - 1; break; }
    if (h == 0 && t == 0) { h = head; t = tail; }
    size_t mid = n - h - t;
    if (mid <= QT_EXCERPT_MARKER_FIXED + digits(mid)) return qt_excerpt(out, s, n, head, tail);
    return qt_excerpt(out, s, n, h, t);
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void qc_wrap_summary(qbuf *b, const char *s, size_t n) {
    while (n && is_space(s[n - 1])) n--;
    size_t i = 0;
    while (i < n && (s[i] == '\n' || s[i] == '\r')) i++;
    qbuf_puts(b, QC_SUMMARY_OPEN);
    qc_put_neutral(b, s + i, n - i, "conversation-summary");
    qbuf_puts(b, QC_SUMMARY_CLOSE);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* Plain bytes of s in scratch (valid until the next call with the same buf). */
static const char *plain(qbuf *scratch, qstr s, size_t *len) {
    if (!s.p) { *len = 0; return ""; }
    if (!s.esc) { *len = s.len; return s.p; }
    scratch->len = 0;
    qbuf_put_qstr(scratch, s);
    if (scratch->oom) { *len = 0; return ""; }
    *len = scratch->len;
    return scratch->data;
}

/* The first non-blank line of s, trimmed, cut to max bytes on a grapheme
 * boundary ("…" appended when cut). */
static void put_first_line(qbuf *b, const char *s, size_t n, size_t max) {
    size_t i = 0;
    for (;;) {
        while (i < n && is_space(s[i])) i++;
        size_t e = i;
        while (e < n && s[e] != '\n') e++;
        size_t end = e;
        while (end > i && is_space(s[end - 1])) end--;
        if (end > i || e >= n) {
            size_t len = end - i;
            if (len > max) {
                size_t k = qt_grapheme_prefix(s + i, len, max);
                while (k && is_space(s[i + k - 1])) k--;
                qc_put_neutral(b, s + i, k, "conversation-summary");
                qbuf_puts(b, "\xE2\x80\xA6");
            } else {
                qc_put_neutral(b, s + i, len, "conversation-summary");
            }
            return;
        }
        i = e;
    }
}

static bool starts_with(const char *s, size_t n, const char *z) {
    size_t k = strlen(z);
    return n >= k && memcmp(s, z, k) == 0;
}

bool qc_summary_inner(const qblock *bl, qbuf *scratch, const char **inner, size_t *len) {
    if (bl->type != QB_TEXT) return false;
    size_t n;
    const char *s = plain(scratch, bl->text, &n);
    size_t a = strlen(QC_SUMMARY_OPEN), c = strlen(QC_SUMMARY_CLOSE);
    if (!starts_with(s, n, QC_SUMMARY_OPEN)) return false;
    size_t e = n;
    if (e >= a + c && memcmp(s + e - c, QC_SUMMARY_CLOSE, c) == 0) e -= c;
    *inner = s + a;
    *len = e - a;
    return true;
}

static void put_earlier(qbuf *b, const char *s, size_t n, size_t cap, qbuf *tmp) {
    qbuf_puts(b, "earlier summary:\n");
    tmp->len = 0;
    qc_excerpt(tmp, s, n, cap / 2, cap - cap / 2);
    if (!tmp->oom) qc_put_neutral(b, tmp->data, tmp->len, "conversation-summary");
    qbuf_putc(b, '\n');
}

typedef struct name_count {
    const char *name;
    size_t len;
    uint32_t calls, errors, missing;
} name_count;

/* ------------------------------------------------------------------------ */
/* Digest                                                                    */
/* ------------------------------------------------------------------------ */

/* The steps of turn `turn` before message i (1-based number of the step at i). */
static uint32_t step_number(const qc_view *v, uint32_t turn, uint32_t i) {
    uint32_t k = 0;
    for (uint32_t u = 0; u < v->nunits && v->ustart[u] <= i; u++) k += v->uturn[u] == turn && v->ustep[u];
    return k;
}

/* Digests the messages [from, to) of one turn: the whole turn, or some of its
 * steps (then without the user's request, which is not in the span). */
static void digest_turn(qbuf *b, const qc_view *v, uint32_t turn, uint32_t from, uint32_t to, qbuf *s1, qbuf *s2,
                        qarena *ar) {
    const quire_transcript *t = v->t;
    if (from == v->start[turn]) {
        qbuf_printf(b, "\n[turn %u]\n", turn + 1);
    } else {
        uint32_t s0 = step_number(v, turn, from), s9 = step_number(v, turn, to - 1);
        if (s0 == s9) qbuf_printf(b, "\n[turn %u, step %u]\n", turn + 1, s0);
        else qbuf_printf(b, "\n[turn %u, steps %u-%u]\n", turn + 1, s0, s9);
    }
    /* the user's request: first text of the turn's first message, skipping an
     * earlier summary block (quoted separately) */
    const qmsg *um = &t->msgs[from];
    bool said = um->role != QR_USER;
    for (uint32_t k = 0; k < um->nblocks && !said; k++) {
        const qblock *bl = &um->blocks[k];
        if (bl->type != QB_TEXT) continue;
        const char *in;
        size_t inl;
        if (qc_summary_inner(bl, s1, &in, &inl)) {
            put_earlier(b, in, inl, (size_t)v->p->summary_tokens * 2, s2);
            continue;
        }
        size_t n;
        const char *s = plain(s1, bl->text, &n);
        qbuf_puts(b, "user: ");
        put_first_line(b, s, n, QC_DIGEST_LINE);
        qbuf_putc(b, '\n');
        said = true;
    }
    for (uint32_t k = 0; k < um->nblocks && !said; k++) {
        const qblock *bl = &um->blocks[k];
        if (bl->type == QB_IMAGE) { qbuf_puts(b, "user: [image]\n"); said = true; }
        else if (bl->type == QB_DOCUMENT) { qbuf_puts(b, "user: [document]\n"); said = true; }
    }
    /* tools: names in order of first use, with counts and outcomes */
    name_count names[QC_DIGEST_NAMES];
    uint32_t nn = 0, other_calls = 0, nerr = 0;
    for (uint32_t i = from; i < to; i++) {
        const qmsg *m = &t->msgs[i];
        for (uint32_t k = 0; k < m->nblocks; k++) {
            const qblock *bl = &m->blocks[k];
            if (bl->type != QB_TOOL_CALL) continue;
            size_t nl, il;
            const char *nm = qstr_plain_bytes(bl->name, ar, &nl);
            const char *id = qstr_plain_bytes(bl->id, ar, &il);
            if (!nm || !id) { b->oom = true; return; }
            const qc_idmap_entry *r = qc_idmap_get(&v->results, id, il);
            bool is_err = r && r->block->is_error == 1;
            uint32_t j = 0;
            while (j < nn && !(names[j].len == nl && memcmp(names[j].name, nm, nl) == 0)) j++;
            if (j == nn && nn < QC_DIGEST_NAMES) {
                names[nn].name = nm; names[nn].len = nl;
                names[nn].calls = names[nn].errors = names[nn].missing = 0;
                nn++;
            }
            if (j < nn) {
                names[j].calls++;
                if (!r) names[j].missing++;
                else if (is_err) names[j].errors++;
            } else {
                other_calls++;
            }
            if (is_err) nerr++;
        }
    }
    if (nn) {
        qbuf_puts(b, "tools: ");
        for (uint32_t j = 0; j < nn; j++) {
            if (j) qbuf_puts(b, ", ");
            qc_put_neutral(b, names[j].name, names[j].len, "conversation-summary");
            qbuf_printf(b, " x%u", names[j].calls);
            if (names[j].errors || names[j].missing) {
                qbuf_puts(b, " (");
                if (names[j].errors) qbuf_printf(b, "%u failed", names[j].errors);
                if (names[j].errors && names[j].missing) qbuf_puts(b, ", ");
                if (names[j].missing) qbuf_printf(b, "%u without result", names[j].missing);
                qbuf_putc(b, ')');
            }
        }
        if (other_calls) qbuf_printf(b, ", %u more", other_calls);
        qbuf_putc(b, '\n');
    }
    /* errors, quoted (first line each) */
    if (nerr) {
        uint32_t shown = 0;
        for (uint32_t i = from; i < to && shown < QC_DIGEST_ERRORS; i++) {
            const qmsg *m = &t->msgs[i];
            for (uint32_t k = 0; k < m->nblocks && shown < QC_DIGEST_ERRORS; k++) {
                const qblock *rb = &m->blocks[k];
                if (rb->type != QB_TOOL_RESULT || rb->is_error != 1) continue;
                shown++;
                size_t il;
                const char *id = qstr_plain_bytes(rb->tool_call_id, ar, &il);
                if (!id) { b->oom = true; return; }
                const qc_idmap_entry *c = qc_idmap_get(&v->calls, id, il);
                qbuf_puts(b, "error");
                if (c) {
                    size_t nl;
                    const char *nm = qstr_plain_bytes(c->block->name, ar, &nl);
                    if (!nm) { b->oom = true; return; }
                    {
                        qbuf_puts(b, " (");
                        qc_put_neutral(b, nm, nl, "conversation-summary");
                        qbuf_putc(b, ')');
                    }
                }
                qbuf_puts(b, ": ");
                size_t n = 0;
                const char *s = "";
                if (rb->content_is_string) s = plain(s1, rb->content_text, &n);
                else
                    for (uint32_t q = 0; q < rb->nparts; q++)
                        if (rb->parts[q].type == QB_TEXT) { s = plain(s1, rb->parts[q].text, &n); break; }
                if (n) put_first_line(b, s, n, QC_DIGEST_LINE);
                else qbuf_puts(b, "(no text)");
                qbuf_putc(b, '\n');
            }
        }
    }
    /* the assistant's last words in the turn */
    for (uint32_t i = to; i > from; i--) {
        const qmsg *m = &t->msgs[i - 1];
        if (m->role != QR_ASSISTANT) continue;
        const qblock *last = NULL;
        for (uint32_t k = 0; k < m->nblocks; k++)
            if (m->blocks[k].type == QB_TEXT) last = &m->blocks[k];
        if (!last) continue;
        size_t n;
        const char *s = plain(s1, last->text, &n);
        if (qt_is_blank(s, n)) continue;
        qbuf_puts(b, "assistant: ");
        put_first_line(b, s, n, QC_DIGEST_LINE);
        qbuf_putc(b, '\n');
        break;
    }
}

void qc_digest(qbuf *b, const qc_view *v, uint32_t from, uint32_t to, const char *earlier, size_t earlier_len,
               qc_counter *c, qarena *ar) {
    qbuf s1, s2, d;
    qbuf_init(&s1, b->a);
    qbuf_init(&s2, b->a);
    qbuf_init(&d, b->a);
    uint32_t nturns = 0, nmsgs = 0, nsteps = 0;
    for (uint32_t i = from; i < to; i++) {
        nmsgs += v->t->msgs[i].role != QR_SYSTEM && v->t->msgs[i].role != QR_DEVELOPER;
        nturns += i == from || v->turn_of[i] != v->turn_of[i - 1];
    }
    for (uint32_t u = 0; u < v->nunits; u++) nsteps += v->ustep[u] && v->ustart[u] >= from && v->ustart[u] < to;
    qbuf_printf(&d, "Digest of %u earlier message%s (%u step%s in %u turn%s), extracted by quire without a model: "
                    "first line of each request, tools used and their outcomes, errors, the assistant's last words.\n",
                nmsgs, nmsgs == 1 ? "" : "s", nsteps, nsteps == 1 ? "" : "s", nturns, nturns == 1 ? "" : "s");
    if (earlier_len) put_earlier(&d, earlier, earlier_len, (size_t)v->p->summary_tokens * 2, &s2);
    for (uint32_t i = from; i < to;) {
        uint32_t t = v->turn_of[i], j = i + 1;
        while (j < to && v->turn_of[j] == t) j++;
        digest_turn(&d, v, t, i, j, &s1, &s2, ar);
        i = j;
    }
    /* fit the reserve: head/tail excerpt, shrinking until the count fits */
    uint64_t reserve = v->p->summary_tokens;
    if (!d.oom) {
        uint64_t tok = qc_count_text(c, d.data, d.len);
        size_t keep = d.len;
        for (int round = 0; round < 12 && tok > reserve && reserve > 0; round++) {
            uint64_t k = (uint64_t)keep * reserve / (tok ? tok : 1);
            keep = (size_t)(k * 9 / 10);
            s2.len = 0;
            qc_excerpt(&s2, d.data, d.len, keep / 2, keep - keep / 2);
            if (s2.oom) break;
            tok = qc_count_text(c, s2.data, s2.len);
            if (tok <= reserve) { d.len = 0; qbuf_put(&d, s2.data, s2.len); break; }
        }
    }
    if (d.oom || s1.oom || s2.oom || c->oom) b->oom = true;
    else qbuf_put(b, d.data, d.len);
    qbuf_free(&s1);
    qbuf_free(&s2);
    qbuf_free(&d);
}

/* ------------------------------------------------------------------------ */
/* The span as plain text (summarisation request)                            */
/* ------------------------------------------------------------------------ */

static void put_excerpt(qbuf *b, const char *s, size_t n, size_t cap, qbuf *tmp) {
    tmp->len = 0;
    qc_excerpt(tmp, s, n, cap / 2, cap - cap / 2);
    if (tmp->oom) { b->oom = true; return; }
    qc_put_neutral(b, tmp->data, tmp->len, "conversation");
}

static void span_block(qbuf *b, const qblock *bl, size_t tool_cap, size_t text_cap, qbuf *s1, qbuf *tmp,
                       qarena *ar) {
    size_t n;
    const char *s;
    switch (bl->type) {
    case QB_TEXT:
        s = plain(s1, bl->text, &n);
        put_excerpt(b, s, n, text_cap, tmp);
        qbuf_putc(b, '\n');
        break;
    case QB_IMAGE: qbuf_puts(b, "[image]\n"); break;
    case QB_DOCUMENT: qbuf_puts(b, "[document]\n"); break;
    case QB_TOOL_CALL: {
        size_t nl, il;
        const char *nm = qstr_plain_bytes(bl->name, ar, &nl);
        const char *id = qstr_plain_bytes(bl->id, ar, &il);
        if (!nm || !id) { b->oom = true; return; }
        qbuf_puts(b, "[tool call ");
        qc_put_neutral(b, nm, nl, "conversation");
        qbuf_puts(b, " id=");
        qc_put_neutral(b, id, il, "conversation");
        qbuf_puts(b, "]\n");
        s1->len = 0;
        qw w;
        qw_init(&w, s1, false);
        qw_qval(&w, bl->input);
        qw_dispose(&w);
        if (s1->oom) { b->oom = true; return; }
        put_excerpt(b, s1->data, s1->len, tool_cap, tmp);
        qbuf_putc(b, '\n');
        break;
    }
    case QB_TOOL_RESULT: {
        size_t il;
        const char *id = qstr_plain_bytes(bl->tool_call_id, ar, &il);
        if (!id) { b->oom = true; return; }
        qbuf_puts(b, "[tool result id=");
        qc_put_neutral(b, id, il, "conversation");
        qbuf_puts(b, bl->is_error == 1 ? " error]\n" : "]\n");
        if (bl->content_is_string) {
            s = plain(s1, bl->content_text, &n);
            put_excerpt(b, s, n, tool_cap, tmp);
            qbuf_putc(b, '\n');
        } else {
            for (uint32_t i = 0; i < bl->nparts; i++) {
                if (bl->parts[i].type == QB_TEXT) {
                    s = plain(s1, bl->parts[i].text, &n);
                    put_excerpt(b, s, n, tool_cap, tmp);
                    qbuf_putc(b, '\n');
                } else {
                    qbuf_puts(b, "[image]\n");
                }
            }
        }
        break;
    }
    case QB_THINKING:
    case QB_REDACTED_THINKING: break; /* the model's private reasoning is not summarised */
    case QB_OPAQUE: qbuf_puts(b, "[provider item]\n"); break;
    case QB_AUDIO: qbuf_puts(b, "[audio]\n"); break;
    case QB_FILE: qbuf_puts(b, "[file]\n"); break;
    case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT: qbuf_puts(b, "[provider tool]\n"); break;
    }
}

void qc_span_text(qbuf *b, const qc_view *v, uint32_t from, uint32_t to, size_t tool_cap, size_t text_cap,
                  qarena *ar) {
    qbuf s1, tmp;
    qbuf_init(&s1, b->a);
    qbuf_init(&tmp, b->a);
    const quire_transcript *t = v->t;
    for (uint32_t i = from; i < to; i++) {
        const qmsg *m = &t->msgs[i];
        if (m->role == QR_SYSTEM || m->role == QR_DEVELOPER) continue; /* kept, not summarised */
        qbuf_printf(b, "[%s]\n", qrole_name(m->role));
        for (uint32_t k = 0; k < m->nblocks; k++) span_block(b, &m->blocks[k], tool_cap, text_cap, &s1, &tmp, ar);
        qbuf_putc(b, '\n');
    }
    if (s1.oom || tmp.oom) b->oom = true;
    qbuf_free(&s1);
    qbuf_free(&tmp);
}
