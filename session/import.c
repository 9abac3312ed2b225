/* quire_import: Claude Code / Codex logs -> quire.session/1 (DESIGN 7).
 * The format-specific work lives in import_claude_code.c and import_codex.c. */
#include "session/import.h"

#include <stdio.h>

static uint64_t map_hash(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ull; }
    return h ^ (h >> 29);
}

void qmap_init(qmap *m, const quire_allocator *a) { memset(m, 0, sizeof *m); m->a = a; }

void qmap_free(qmap *m) {
    q_free(m->a, m->k, (size_t)m->cap * sizeof *m->k);
    q_free(m->a, m->kl, (size_t)m->cap * sizeof *m->kl);
    q_free(m->a, m->v, (size_t)m->cap * sizeof *m->v);
    memset(m, 0, sizeof *m);
}

static uint32_t map_slot(const qmap *m, const char *k, size_t n) {
    uint32_t mask = m->cap - 1;
    uint32_t i = (uint32_t)map_hash(k, n) & mask;
    while (m->k[i] && !(m->kl[i] == n && memcmp(m->k[i], k, n) == 0)) i = (i + 1) & mask;
    return i;
}

int32_t qmap_get(const qmap *m, const char *k, size_t n) {
    if (!m->cap || !k) return -1;
    uint32_t i = map_slot(m, k, n);
    return m->k[i] ? m->v[i] : -1;
}

bool qmap_put(qmap *m, const char *k, size_t n, int32_t v) {
    if ((m->n + 1) * 4 >= m->cap * 3) {
        qmap nm;
        qmap_init(&nm, m->a);
        nm.cap = m->cap ? m->cap * 2 : 64;
        nm.k = q_malloc(m->a, (size_t)nm.cap * sizeof *nm.k);
        nm.kl = q_malloc(m->a, (size_t)nm.cap * sizeof *nm.kl);
        nm.v = q_malloc(m->a, (size_t)nm.cap * sizeof *nm.v);
        if (!nm.k || !nm.kl || !nm.v) { qmap_free(&nm); return false; }
        memset(nm.k, 0, (size_t)nm.cap * sizeof *nm.k);
        for (uint32_t i = 0; i < m->cap; i++) {
            if (!m->k[i]) continue;
            uint32_t j = map_slot(&nm, m->k[i], m->kl[i]);
            nm.k[j] = m->k[i]; nm.kl[j] = m->kl[i]; nm.v[j] = m->v[i];
        }
        nm.n = m->n;
        qmap_free(m);
        *m = nm;
    }
    uint32_t i = map_slot(m, k, n);
    if (!m->k[i]) { m->k[i] = k; m->kl[i] = (uint32_t)n; m->n++; }
    m->v[i] = v;
    return true;
}

uint32_t q_lift_reminders(const char *s, size_t n, qbuf *rest, void (*emit)(void *ud, const char *body, size_t len),
                          void *ud) {
    static const char open_tag[] = "<system-reminder>";
    static const char close_tag[] = "</system-reminder>";
    const size_t ol = sizeof open_tag - 1, cl = sizeof close_tag - 1;
    uint32_t lifted = 0;
    size_t i = 0, copied = 0;
    while (i + ol <= n) {
        if (s[i] != '<' || memcmp(s + i, open_tag, ol) != 0) { i++; continue; }
        size_t j = i + ol, end = SIZE_MAX;
        for (size_t k = j; k + cl <= n; k++)
            if (s[k] == '<' && memcmp(s + k, close_tag, cl) == 0) { end = k; break; }
        if (end == SIZE_MAX) break; /* unterminated: left as text */
        /* the segment with the blank lines that separate it from the text before */
        size_t seg_start = i;
        while (seg_start > copied && (s[seg_start - 1] == '\n' || s[seg_start - 1] == ' ')) seg_start--;
        size_t seg_end = end + cl;
        if (seg_start == copied && copied == 0)
            while (seg_end < n && s[seg_end] == '\n') seg_end++; /* leading reminder: drop the newlines after it */
        else if (seg_end < n && s[seg_end] == '\n' && seg_end + 1 == n)
            seg_end++; /* trailing reminder: its final newline goes with it */
        qbuf_put(rest, s + copied, seg_start - copied);
        const char *b = s + j;
        size_t bl = end - j;
        if (bl && b[0] == '\n') { b++; bl--; }
        if (bl && b[bl - 1] == '\n') bl--;
        emit(ud, b, bl);
        lifted++;
        copied = seg_end;
        i = seg_end;
    }
    qbuf_put(rest, s + copied, n - copied);
    return lifted;
}

quire_status quire_import(const char *bytes, size_t len, const quire_import_options *io, const quire_options *opts,
                          quire_bytes *log, quire_bytes *report, quire_error *err) {
    memset(log, 0, sizeof *log);
    if (report) memset(report, 0, sizeof *report);
    if (!io || !io->format) return q_err(err, QUIRE_E_INVALID, "quire_import: a format is required (claude-code or codex)");
    quire_limits lim = q_limits(opts);
    if ((uint64_t)len > lim.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)lim.max_input_bytes);
    const quire_allocator *a = q_alloc_of(opts);
    qbuf out, rep;
    qbuf_init(&out, a);
    qbuf_init(&rep, a);
    qimport_ctx c = {a, opts, io->flags, io->provider, &out, &rep, err};
    quire_status st;
    if (strcmp(io->format, "claude-code") == 0) {
        if (!c.provider) c.provider = "anthropic";
        st = q_import_claude_code(&c, bytes, len);
    } else if (strcmp(io->format, "codex") == 0) {
        if (!c.provider) c.provider = "openai_responses";
        st = q_import_codex(&c, bytes, len);
    } else {
        st = q_err(err, QUIRE_E_INVALID, "unknown import format \"%s\" (expected claude-code or codex)", io->format);
    }
    if (st == QUIRE_OK && (out.oom || rep.oom)) st = q_oom(err);
    if (st == QUIRE_OK && !qbuf_take(&out, log)) st = q_oom(err);
    if (st == QUIRE_OK && report && !qbuf_take(&rep, report)) { quire_bytes_free(log); st = q_oom(err); }
    qbuf_free(&out);
    qbuf_free(&rep);
    return st;
}

quire_status q_import_parse_line(qimport_ctx *c, qj_doc *d, const char *what, const char *l, size_t ln, size_t off,
                                 uint32_t lineno, bool *skipped, char *skip_msg, size_t skip_cap) {
    *skipped = false;
    quire_limits lim = q_limits(c->opts);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_error pe;
    memset(&pe, 0, sizeof pe);
    quire_status st = qj_parse(d, l, ln, &jo, c->a, &pe);
    if (st == QUIRE_OK && qj_type_of(d, 0) == QJ_OBJECT) return QUIRE_OK;
    if (st == QUIRE_OK) {
        snprintf(pe.message, sizeof pe.message, "expected a JSON object, got %s", qj_type_name(qj_type_of(d, 0)));
        pe.offset = 0;
        qj_doc_free(d);
        st = QUIRE_E_JSON;
    }
    if (st == QUIRE_E_NOMEM) return q_oom(c->err);
    q_err_rebase_line(&pe, l, ln, off, lineno);
    if (st == QUIRE_E_LIMIT) { /* a limit stops the import: --skip-invalid is for malformed lines */
        if (c->err) *c->err = pe;
        return QUIRE_E_LIMIT;
    }
    if (!(c->flags & QUIRE_IMPORT_SKIP_INVALID)) {
        q_err_at(c->err, QUIRE_E_JSON, pe.offset, "", "line %u is not a %s entry: %s (use --skip-invalid to skip such lines)",
                 lineno, what, pe.message);
        if (c->err) { c->err->line = pe.line; c->err->column = pe.column; }
        return QUIRE_E_JSON;
    }
    snprintf(skip_msg, skip_cap, "%s", pe.message);
    *skipped = true;
    return QUIRE_OK;
}

void q_log_line_begin(qw *w, qbuf *b, const char *type) {
    qw_init(w, b, false);
    qw_obj_begin(w);
    qw_key(w, "type");
    qw_strz(w, type);
}

void q_log_line_end(qw *w, qbuf *b) {
    qw_obj_end(w);
    qw_dispose(w);
    qbuf_putc(b, '\n');
}

void q_w_meta_line(qw *w, uint32_t lineno) {
    if (!lineno) return;
    qw_key(w, "_meta");
    qw_obj_begin(w);
    qw_key(w, "line"); qw_int(w, lineno);
    qw_obj_end(w);
}
