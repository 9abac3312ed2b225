/* quire_import: Claude Code / Codex / Gemini CLI / Cline / SWE-agent logs ->
 * quire.session/1 (DESIGN 7). The format-specific work lives in one
 * import_<format>.c per format. */
#include "session/import.h"

#include <stdarg.h>
#include <stddef.h>
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
    if (!io || !io->format) return q_err(err, QUIRE_E_INVALID,
                                               "quire_import: a format is required (claude-code, codex, gemini-cli, cline or swe-agent)");
    quire_limits lim = q_limits(opts);
    if ((uint64_t)len > lim.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)lim.max_input_bytes);
    const quire_allocator *a = q_alloc_of(opts);
    qbuf out, rep;
    qbuf_init(&out, a);
    qbuf_init(&rep, a);
    quire_import_options o; /* fields the caller's struct has (size), the rest zero */
    memset(&o, 0, sizeof o);
    size_t osz = io->size ? io->size : offsetof(quire_import_options, metadata);
    memcpy(&o, io, osz < sizeof o ? osz : sizeof o);
    qarena mended;
    qarena_init(&mended, a);
    qimport_ctx c = {a, opts, o.flags, o.provider, o.metadata, o.metadata ? o.metadata_len : 0, &out, &rep, err,
                     &mended, 0};
    quire_status st;
    if (strcmp(io->format, "claude-code") == 0) {
        if (!c.provider) c.provider = "anthropic";
        st = q_import_claude_code(&c, bytes, len);
    } else if (strcmp(io->format, "codex") == 0) {
        if (!c.provider) c.provider = "openai_responses";
        st = q_import_codex(&c, bytes, len);
    } else if (strcmp(io->format, "gemini-cli") == 0) {
        if (!c.provider) c.provider = "gemini";
        st = q_import_gemini_cli(&c, bytes, len);
    } else if (strcmp(io->format, "cline") == 0) {
        if (!c.provider) c.provider = "anthropic";
        st = q_import_cline(&c, bytes, len);
    } else if (strcmp(io->format, "swe-agent") == 0) {
        if (!c.provider) c.provider = "openai";
        st = q_import_swe_agent(&c, bytes, len);
    } else {
        st = q_err(err, QUIRE_E_INVALID,
                   "unknown import format \"%s\" (expected claude-code, codex, gemini-cli, cline or swe-agent)", io->format);
    }
    if (st == QUIRE_OK && c.nmended)
        qbuf_printf(&rep, "0: note: replaced %u lone UTF-16 surrogate escape(s) (a \\uD800-\\uDFFF escape without its "
                          "pair, as JavaScript writes a string cut inside an emoji) with \\ufffd, the replacement "
                          "character\n", c.nmended);
    if (st == QUIRE_OK && (out.oom || rep.oom)) st = q_oom(err);
    if (st == QUIRE_OK && !qbuf_take(&out, log)) st = q_oom(err);
    if (st == QUIRE_OK && report && !qbuf_take(&rep, report)) { quire_bytes_free(log); st = q_oom(err); }
    qarena_free(&mended);
    qbuf_free(&out);
    qbuf_free(&rep);
    return st;
}

/* Agents written in JavaScript log strings cut inside a surrogate pair as a
 * lone \uD83D (JSON.stringify writes an unpaired surrogate as an escape); the
 * JSON reader refuses it. A copy of the text with each lone surrogate escape
 * replaced by \ufffd (qj_mend_lone_surrogates) reads, and says the same apart
 * from the character that was cut. NULL when the text has none (or no memory). */
static char *mend_surrogates(qimport_ctx *c, const char *l, size_t ln) {
    char *m = qarena_alloc(c->mended, ln + 1);
    if (!m) return NULL;
    memcpy(m, l, ln);
    m[ln] = '\0';
    size_t k = qj_mend_lone_surrogates(m, ln);
    c->nmended += (uint32_t)k;
    return k ? m : NULL;
}

/* qj_parse, and when the text fails only for lone surrogate escapes, again
 * on its mended copy (mend_surrogates). */
static quire_status parse_mended(qimport_ctx *c, qj_doc *d, const char *src, size_t len, const qj_opts *jo,
                                 quire_error *pe) {
    memset(pe, 0, sizeof *pe);
    quire_status st = qj_parse(d, src, len, jo, c->a, pe);
    if (st != QUIRE_E_JSON || !strstr(pe->message, "surrogate")) return st;
    char *m = mend_surrogates(c, src, len);
    if (!m) return st;
    quire_error pe2;
    memset(&pe2, 0, sizeof pe2);
    quire_status st2 = qj_parse(d, m, len, jo, c->a, &pe2);
    if (st2 != QUIRE_OK && st2 != QUIRE_E_NOMEM && strstr(pe2.message, "surrogate")) return st;
    *pe = pe2;
    return st2;
}

quire_status q_import_parse_line(qimport_ctx *c, qj_doc *d, const char *what, const char *l, size_t ln, size_t off,
                                 uint32_t lineno, bool *skipped, char *skip_msg, size_t skip_cap) {
    *skipped = false;
    quire_limits lim = q_limits(c->opts);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_error pe;
    quire_status st = parse_mended(c, d, l, ln, &jo, &pe);
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

void q_log_message_begin(qw *w, qbuf *b, const char *role) {
    q_log_line_begin(w, b, "message");
    qw_key(w, "message");
    qw_obj_begin(w);
    qw_key(w, "role");
    qw_strz(w, role);
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

/* ---- single-document formats ---- */

quire_status q_import_parse_doc(qimport_ctx *c, qj_doc *d, const char *what, const char *src, size_t len) {
    quire_limits lim = q_limits(c->opts);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_error pe;
    quire_status st = parse_mended(c, d, src, len, &jo, &pe);
    if (st == QUIRE_OK) return QUIRE_OK;
    if (st == QUIRE_E_NOMEM) return q_oom(c->err);
    if (st != QUIRE_E_LIMIT) {
        char msg[sizeof pe.message];
        memcpy(msg, pe.message, sizeof msg);
        msg[sizeof msg - 1] = 0;
        size_t wl = (size_t)snprintf(pe.message, sizeof pe.message, "not a %s: ", what);
        if (wl < sizeof pe.message) {
            size_t room = sizeof pe.message - wl - 1, ml = strlen(msg);
            memcpy(pe.message + wl, msg, ml < room ? ml : room);
            pe.message[wl + (ml < room ? ml : room)] = 0;
        }
        q_utf8_trim(pe.message);
    }
    if (c->err) *c->err = pe;
    return st;
}

quire_status q_import_err(qimport_ctx *c, quire_status code, const qj_doc *d, uint32_t node, const char *pointer,
                          const char *fmt, ...) {
    if (!c->err) return code;
    char msg[sizeof c->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t off = node != QJ_NONE && node < d->count ? qj_offset(d, node) : 0;
    q_err_at(c->err, code, off, pointer, "%s", msg);
    q_err_locate(c->err, d->src, d->len);
    return code;
}

uint32_t qlinecur_at(qlinecur *lc, size_t off) {
    if (off > lc->len) off = lc->len;
    if (lc->line == 0) { lc->pos = 0; lc->line = 1; }
    if (off < lc->pos) { /* back: count the newlines between off and pos (cost: the distance) */
        for (size_t i = off; i < lc->pos; i++)
            if (lc->src[i] == '\n') lc->line--;
        lc->pos = off;
        return lc->line;
    }
    while (lc->pos < off) {
        const char *nl = memchr(lc->src + lc->pos, '\n', off - lc->pos);
        if (!nl) { lc->pos = off; break; }
        lc->line++;
        lc->pos = (size_t)(nl - lc->src) + 1;
    }
    return lc->line;
}

void qcalls_init(qcalls *k, const quire_allocator *a, qarena *ar) {
    memset(k, 0, sizeof *k);
    k->a = a;
    k->ar = ar;
    qmap_init(&k->used, a);
    qmap_init(&k->open, a);
    qmap_init(&k->nextk, a);
}

void qcalls_free(qcalls *k) {
    qmap_free(&k->used);
    qmap_free(&k->open);
    qmap_free(&k->nextk);
    q_free(k->a, k->v, (size_t)k->cap * sizeof *k->v);
    memset(k, 0, sizeof *k);
}

int32_t qcalls_add(qcalls *k, const char *raw, size_t n, bool missing) {
    if (k->n >= (uint32_t)INT32_MAX - 1) return -1;
    if (k->n == k->cap) {
        uint32_t nc = k->cap ? k->cap * 2 : 16;
        qcall *nv = q_realloc(k->a, k->v, (size_t)k->cap * sizeof *nv, (size_t)nc * sizeof *nv);
        if (!nv) return -1;
        k->v = nv;
        k->cap = nc;
    }
    int32_t idx = (int32_t)k->n;
    qcall *e = &k->v[k->n];
    memset(e, 0, sizeof *e);
    e->next = e->tail = -1;
    if (missing || n == 0) {
        raw = NULL;
        n = 0;
    }
    e->orig = raw;
    e->orign = (uint32_t)n;
    if (raw && qmap_get(&k->used, raw, n) < 0) {
        e->id = raw;
        e->idn = (uint32_t)n;
    } else {
        char *b = qarena_alloc(k->ar, n + 24);
        if (!b) return -1;
        int32_t from = raw ? qmap_get(&k->nextk, raw, n) : -1;
        uint32_t j = raw ? (from >= 2 ? (uint32_t)from : 2u) : (k->anon > k->n + 1 ? k->anon : k->n + 1);
        for (;; j++) {
            int m = raw ? snprintf(b, n + 24, "%.*s-%u", (int)n, raw, j) : snprintf(b, 24, "call-%u", j);
            if (m < 0) return -1;
            if (qmap_get(&k->used, b, (size_t)m) < 0) { e->idn = (uint32_t)m; break; }
        }
        /* the K tried next for this id: every smaller K is taken (ids are never freed) */
        if (raw && j < (uint32_t)INT32_MAX && !qmap_put(&k->nextk, raw, n, (int32_t)(j + 1))) return -1;
        if (!raw) k->anon = j + 1;
        e->id = b;
        if (raw) k->renamed++;
    }
    if (!qmap_put(&k->used, e->id, e->idn, idx)) return -1;
    if (raw) {
        int32_t head = qmap_get(&k->open, raw, n);
        if (head >= 0) {
            int32_t t = k->v[head].tail >= 0 ? k->v[head].tail : head;
            k->v[t].next = idx;
            k->v[head].tail = idx;
        } else if (!qmap_put(&k->open, raw, n, idx)) {
            return -1;
        }
    }
    k->n++;
    return idx;
}

int32_t qcalls_answer(qcalls *k, const char *raw, size_t n) {
    if (!raw || !n) return -1;
    int32_t head = qmap_get(&k->open, raw, n);
    if (head < 0) return -1;
    qcall *e = &k->v[head];
    e->answered = true;
    int32_t nx = e->next;
    if (nx >= 0) k->v[nx].tail = e->tail == nx ? -1 : e->tail;
    if (!qmap_put(&k->open, raw, n, nx)) return -1;
    return head;
}

static bool renamed(const qcall *e) {
    return e->orig && !(e->idn == e->orign && memcmp(e->id, e->orig, e->idn) == 0);
}

void qcalls_w_meta(const qcalls *k, qw *w, const int32_t *idx, uint32_t n) {
    uint32_t first = 0;
    while (first < n && !renamed(&k->v[idx[first]])) first++;
    if (first == n) return;
    qw_key(w, "meta");
    qw_obj_begin(w);
    qw_key(w, "renamedToolCallIds");
    qw_obj_begin(w);
    for (uint32_t i = first; i < n; i++) {
        const qcall *e = &k->v[idx[i]];
        if (!renamed(e)) continue;
        qw_key_esc(w, e->id, e->idn);
        qw_str_esc(w, e->orig, e->orign);
    }
    qw_obj_end(w);
    qw_obj_end(w);
}

void qcalls_w_no_output(qw *w, const qcall *kc) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "toolResult");
    qw_key(w, "toolCallId"); qw_str_esc(w, kc->id, kc->idn);
    qw_key(w, "content"); qw_strz(w, "[no output was recorded for this call]");
    qw_key(w, "isError"); qw_bool(w, true);
    qw_obj_end(w);
}

uint32_t qcalls_answer_pending(qcalls *k, int32_t *pend, uint32_t *npend, qbuf *body, uint32_t lineno) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < *npend; i++)
        if (!k->v[pend[i]].answered) pend[n++] = pend[i];
    *npend = 0;
    if (!n) return 0;
    qw w;
    q_log_message_begin(&w, body, "tool");
    qw_key(&w, "content");
    qw_arr_begin(&w);
    for (uint32_t i = 0; i < n; i++) {
        qcall *kc = &k->v[pend[i]];
        if (kc->orig) (void)qcalls_answer(k, kc->orig, kc->orign);
        kc->answered = true;
        qcalls_w_no_output(&w, kc);
    }
    qw_arr_end(&w);
    qw_obj_end(&w);
    q_w_meta_line(&w, lineno);
    q_log_line_end(&w, body);
    return n;
}

bool q_import_w_json_string(qw *w, const qj_doc *d, uint32_t node, const quire_allocator *a) {
    qbuf tmp;
    qbuf_init(&tmp, a);
    qw w2;
    qw_init(&w2, &tmp, false);
    qw_node(&w2, d, node);
    qw_dispose(&w2);
    qw_str(w, tmp.data ? tmp.data : "", tmp.len);
    bool ok = !tmp.oom;
    if (!ok) w->b->oom = true; /* the output is short: its own out-of-memory mark says so */
    qbuf_free(&tmp);
    return ok;
}

bool q_import_w_json_text(qw *w, const qj_doc *d, uint32_t node, const quire_allocator *a) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text");
    bool ok = q_import_w_json_string(w, d, node, a);
    qw_obj_end(w);
    return ok;
}

uint32_t q_import_get(const qj_doc *d, uint32_t obj, const char *key, qj_type t) {
    if (obj == QJ_NONE || qj_type_of(d, obj) != QJ_OBJECT) return QJ_NONE;
    uint32_t v = qj_get(d, obj, key);
    return (v != QJ_NONE && qj_type_of(d, v) == t) ? v : QJ_NONE;
}

void q_import_report(qimport_ctx *c, uint32_t lineno, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_utf8_mend(msg);
    qbuf_printf(c->report, "%u: %s\n", lineno, msg);
}
