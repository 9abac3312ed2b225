/* The session API as JSONL (DESIGN 8, 11; docs/serve.md).
 *
 * One request object in, one reply object out. The server holds many named
 * sessions in a hash table (open addressing, linear probing, deletion by
 * backward shift: no tombstones, so a long-lived server does not slow down
 * as sessions come and go). Every op is one quire_session_* call; the
 * request's fields are handed to it as slices of the request line (inline
 * JSON values) or decoded (JSON strings), and the call's error is moved
 * back onto the request line: offset, line:col and the JSON Pointer name the
 * bytes of the line that were wrong.
 *
 * Pure like the rest of the library: the command (cli/cmd_serve.c) reads and
 * writes the lines.
 */
#include "core/base.h"
#include "core/json.h"
#include "render/params.h"
#include "reminders/state.h"

#include <stdarg.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* The session table                                                         */
/* ------------------------------------------------------------------------ */

typedef struct sv_entry {
    char *name; /* NULL = empty slot */
    size_t nlen;
    uint64_t hash;
    quire_session *s;
    char *provider, *model; /* the pending turn's target (accept of a response) */
} sv_entry;

struct quire_server {
    const quire_allocator *a;
    quire_options opts;
    const quire_caps *caps;
    sv_entry *tab;
    size_t cap, count; /* cap: 0 or a power of two */
    qbuf out;
};

static uint64_t hash_of(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ull; }
    return h;
}

static sv_entry *tab_find(quire_server *sv, const char *name, size_t n) {
    if (!sv->cap) return NULL;
    uint64_t h = hash_of(name, n);
    size_t mask = sv->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        sv_entry *e = &sv->tab[i];
        if (!e->name) return NULL;
        if (e->hash == h && e->nlen == n && memcmp(e->name, name, n) == 0) return e;
    }
}

static bool tab_grow(quire_server *sv) {
    size_t ncap = sv->cap ? sv->cap * 2 : 16;
    sv_entry *nt = q_malloc(sv->a, ncap * sizeof *nt);
    if (!nt) return false;
    memset(nt, 0, ncap * sizeof *nt);
    for (size_t i = 0; i < sv->cap; i++) {
        if (!sv->tab[i].name) continue;
        size_t j = (size_t)sv->tab[i].hash & (ncap - 1);
        while (nt[j].name) j = (j + 1) & (ncap - 1);
        nt[j] = sv->tab[i];
    }
    q_free(sv->a, sv->tab, sv->cap * sizeof *sv->tab);
    sv->tab = nt;
    sv->cap = ncap;
    return true;
}

static void entry_target_clear(quire_server *sv, sv_entry *e) {
    if (e->provider) q_free(sv->a, e->provider, strlen(e->provider) + 1);
    if (e->model) q_free(sv->a, e->model, strlen(e->model) + 1);
    e->provider = e->model = NULL;
}

/* Adds a session under name (not present). Takes s on success. */
static bool tab_add(quire_server *sv, const char *name, size_t n, quire_session *s) {
    if ((sv->count + 1) * 4 > sv->cap * 3 && !tab_grow(sv)) return false;
    char *copy = q_malloc(sv->a, n + 1);
    if (!copy) return false;
    memcpy(copy, name, n);
    copy[n] = '\0';
    uint64_t h = hash_of(name, n);
    size_t mask = sv->cap - 1, i = (size_t)h & mask;
    while (sv->tab[i].name) i = (i + 1) & mask;
    sv_entry e = {copy, n, h, s, NULL, NULL};
    sv->tab[i] = e;
    sv->count++;
    return true;
}

static void tab_remove(quire_server *sv, sv_entry *e) {
    quire_session_free(e->s);
    entry_target_clear(sv, e);
    q_free(sv->a, e->name, e->nlen + 1);
    size_t mask = sv->cap - 1, i = (size_t)(e - sv->tab);
    memset(e, 0, sizeof *e);
    sv->count--;
    /* backward shift: move later members of the probe run into the hole */
    for (size_t j = (i + 1) & mask; sv->tab[j].name; j = (j + 1) & mask) {
        size_t home = (size_t)sv->tab[j].hash & mask;
        /* j may move to i when its home is not in (i, j] (cyclically) */
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        sv->tab[i] = sv->tab[j];
        memset(&sv->tab[j], 0, sizeof sv->tab[j]);
        i = j;
    }
}

quire_status quire_server_new(const quire_caps *caps, const quire_options *opts, quire_server **out,
                              quire_error *err) {
    if (!out) return q_err(err, QUIRE_E_INVALID, "quire_server_new: out is NULL");
    *out = NULL;
    const quire_allocator *a = q_alloc_of(opts);
    quire_server *sv = q_malloc(a, sizeof *sv);
    if (!sv) return q_oom(err);
    memset(sv, 0, sizeof *sv);
    sv->a = a;
    quire_options o = QUIRE_OPTIONS_INIT;
    if (opts) {
        size_t n = opts->size < sizeof o ? opts->size : sizeof o;
        memcpy(&o, opts, n);
        o.size = sizeof o;
    }
    o.flags &= ~QUIRE_PARSE_BORROW; /* request lines do not outlive the call */
    sv->opts = o;
    sv->caps = caps;
    qbuf_init(&sv->out, a);
    *out = sv;
    return QUIRE_OK;
}

void quire_server_free(quire_server *sv) {
    if (!sv) return;
    for (size_t i = 0; i < sv->cap; i++) {
        sv_entry *e = &sv->tab[i];
        if (!e->name) continue;
        quire_session_free(e->s);
        entry_target_clear(sv, e);
        q_free(sv->a, e->name, e->nlen + 1);
    }
    q_free(sv->a, sv->tab, sv->cap * sizeof *sv->tab);
    qbuf_free(&sv->out);
    q_free(sv->a, sv, sizeof *sv);
}

size_t quire_server_session_count(const quire_server *sv) { return sv ? sv->count : 0; }

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */
/* ------------------------------------------------------------------------ */

enum {
    F_ID, F_OP, F_SESSION, F_CONFIG, F_LOG, F_MESSAGE, F_LINE, F_TARGET, F_RESPONSE, F_STREAM,
    F_CALLID, F_OUTCOME, F_CONTENT, F_POLICY, F_SUMMARY, F_PARAMS, F_SPAN, F_COUNT_
};
static const char *const k_fields[F_COUNT_] = {
    "id", "op", "session", "config", "log", "message", "line", "target", "response", "stream",
    "callId", "outcome", "content", "policy", "summary", "params", "span",
};
#define B(f) (1u << (f))
#define COMMON (B(F_ID) | B(F_OP) | B(F_SESSION))

typedef struct req {
    const char *src;
    size_t len;
    qj_doc d;
    uint32_t v[F_COUNT_];
    char *name; /* the session name, decoded */
    size_t nlen;
    char *repaired; /* the repaired copy d points into (a peer's invalid text in an apply's line), or NULL */
} req;

typedef struct op_def {
    const char *name;
    uint32_t takes;    /* fields besides id, op, session */
    uint32_t requires; /* fields that must be present */
    int kind;
} op_def;

enum { OP_OPEN, OP_RESTORE, OP_APPEND, OP_APPLY, OP_RENDER, OP_ACCEPT, OP_TOOL_OUTCOME, OP_COMPACT, OP_PLAN,
       OP_ESTIMATE, OP_TRANSCRIPT, OP_STATE, OP_LOG, OP_CLOSE };

static const op_def k_ops[] = {
    {"open", B(F_CONFIG), B(F_CONFIG), OP_OPEN},
    {"restore", B(F_LOG), B(F_LOG), OP_RESTORE},
    {"append", B(F_MESSAGE), B(F_MESSAGE), OP_APPEND},
    {"apply", B(F_LINE), B(F_LINE), OP_APPLY},
    {"render", B(F_TARGET) | B(F_PARAMS), 0, OP_RENDER},
    {"accept", B(F_MESSAGE) | B(F_RESPONSE) | B(F_STREAM), 0, OP_ACCEPT},
    {"tool_outcome", B(F_CALLID) | B(F_OUTCOME) | B(F_CONTENT), B(F_CALLID) | B(F_OUTCOME), OP_TOOL_OUTCOME},
    {"compact", B(F_POLICY) | B(F_SUMMARY) | B(F_SPAN), 0, OP_COMPACT},
    {"plan", B(F_POLICY), 0, OP_PLAN},
    {"estimate", 0, 0, OP_ESTIMATE},
    {"transcript", 0, 0, OP_TRANSCRIPT},
    {"state", 0, 0, OP_STATE},
    {"log", 0, 0, OP_LOG},
    {"close", 0, 0, OP_CLOSE},
};

/* The raw bytes of a value node (strings with their quotes). */
static void raw_value(const qj_doc *d, uint32_t v, const char **p, size_t *n) {
    const qj_node *x = qj_at(d, v);
    if (x->type == QJ_STRING) { *p = x->p - 1; *n = (size_t)x->len + 2; }
    else if (x->type == QJ_NULL) { *p = "null"; *n = 4; }
    else if (x->type == QJ_TRUE) { *p = "true"; *n = 4; }
    else if (x->type == QJ_FALSE) { *p = "false"; *n = 5; }
    else { *p = x->p; *n = x->len; }
}

/* Offset in the line of decoded byte k of string node v. */
static size_t string_offset(const req *r, uint32_t v, size_t k) {
    const qj_node *x = qj_at(&r->d, v);
    const char *p = x->p, *end = x->p + x->len;
    size_t dec = 0;
    while (p < end && dec < k) {
        if (*p != '\\') { p++; dec++; continue; }
        if (p[1] != 'u') { p += 2; dec++; continue; }
        unsigned u = 0;
        for (int i = 2; i < 6; i++) {
            char c = p[i];
            u = u * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        if (u >= 0xD800 && u <= 0xDBFF) { p += 12; dec += 4; }
        else { p += 6; dec += u < 0x80 ? 1 : u < 0x800 ? 2 : 3; }
    }
    return (size_t)(p - r->src);
}

/* The deepest node of the request that a JSON Pointer reaches. */
static uint32_t resolve_pointer(const qj_doc *d, const char *ptr) {
    uint32_t v = 0;
    const char *p = ptr;
    char tok[512];
    while (*p == '/') {
        p++;
        size_t n = 0;
        while (*p && *p != '/' && n + 1 < sizeof tok) {
            if (p[0] == '~' && p[1] == '1') { tok[n++] = '/'; p += 2; }
            else if (p[0] == '~' && p[1] == '0') { tok[n++] = '~'; p += 2; }
            else tok[n++] = *p++;
        }
        while (*p && *p != '/') p++;
        tok[n] = '\0';
        uint32_t next = QJ_NONE;
        if (qj_type_of(d, v) == QJ_OBJECT) {
            next = qj_getn(d, v, tok, n);
        } else if (qj_type_of(d, v) == QJ_ARRAY && n > 0 && n < 10) {
            uint32_t idx = 0;
            bool ok = true;
            for (size_t i = 0; i < n; i++) {
                if (tok[i] < '0' || tok[i] > '9') ok = false;
                else idx = idx * 10 + (uint32_t)(tok[i] - '0');
            }
            if (ok && idx < qj_at(d, v)->n) {
                next = v + 1;
                for (uint32_t i = 0; i < idx; i++) next = qj_next(d, next);
            }
        }
        if (next == QJ_NONE) break;
        v = next;
    }
    return v;
}

/* Appends z at dst[k] (capacity cap, truncating); returns the new length. */
static size_t cat(char *dst, size_t cap, size_t k, const char *z) {
    size_t n = strlen(z);
    if (k + n + 1 > cap) n = cap - 1 - k;
    memcpy(dst + k, z, n);
    dst[k + n] = '\0';
    return k + n;
}

/* A render error about the session's transcript (a pointer under
 * /messages, /tools or /system): no place of the request line holds it, so
 * it points at /op, with the transcript's pointer in the message
 * (docs/serve.md, err_at_op). */
static bool transcript_pointer(const char *p) {
    static const char *const roots[] = {"/messages", "/tools", "/system"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        size_t n = strlen(roots[i]);
        if (strncmp(p, roots[i], n) == 0 && (p[n] == '\0' || p[n] == '/')) return true;
    }
    return false;
}
/* An error about the call, not a place in the request line: it points at
 * /op, and the pointer it had (into what the call was given, or a default)
 * goes into the message after prefix. */
static void err_at_op(const req *r, quire_error *err, const char *prefix) {
    if (err->pointer[0]) {
        char msg[sizeof err->message];
        size_t k = cat(msg, sizeof msg, 0, prefix);
        k = cat(msg, sizeof msg, k, err->pointer);
        k = cat(msg, sizeof msg, k, ": ");
        cat(msg, sizeof msg, k, err->message);
        memcpy(err->message, msg, sizeof msg);
        q_utf8_trim(err->message);
    }
    snprintf(err->pointer, sizeof err->pointer, "/op");
    err->offset = qj_offset(&r->d, r->v[F_OP]);
    err->line = err->column = 0;
    q_err_locate(err, r->src, r->len);
}
/* The library's advice names the CLI's flag; a session takes it as its
 * render policy. */
static void render_advice(quire_error *err) {
    static const char cli[] = "(use --lossy to ";
    static const char sess[] = "(a session whose renderPolicy has \"lossy\": true would ";
    char *at = strstr(err->message, cli);
    if (!at) return;
    char msg[sizeof err->message];
    size_t k = (size_t)(at - err->message);
    memcpy(msg, err->message, k);
    msg[k] = '\0';
    k = cat(msg, sizeof msg, k, sess);
    cat(msg, sizeof msg, k, at + sizeof cli - 1);
    memcpy(err->message, msg, sizeof msg);
    q_utf8_trim(err->message);
}

/* Moves an error of a call given field f onto the request line. decoded: the
 * call was given the decoded text of a JSON string (positions inside it are
 * mapped back through its escapes; its pointer goes into the message). */
static void err_onto_line(const req *r, quire_error *err, int f, bool decoded) {
    char inner[sizeof err->pointer];
    memcpy(inner, err->pointer, sizeof inner);
    uint32_t v = r->v[f];
    if (v == QJ_NONE) {
        /* the call was not given that field (a default applied): about the call, the op */
        err_at_op(r, err, "");
        return;
    }
    if (decoded) {
        if (inner[0] || err->line) {
            /* "LINE:COL: POINTER: message" of the decoded text, in the message */
            char msg[sizeof err->message], pos[64] = "";
            if (err->line) snprintf(pos, sizeof pos, "%u:%u: ", err->line, err->column);
            size_t k = 0;
            k = cat(msg, sizeof msg, k, pos);
            if (inner[0]) { k = cat(msg, sizeof msg, k, inner); k = cat(msg, sizeof msg, k, ": "); }
            cat(msg, sizeof msg, k, err->message);
            memcpy(err->message, msg, sizeof msg);
            q_utf8_trim(err->message);
        }
        size_t k = cat(err->pointer, sizeof err->pointer, 0, "/");
        cat(err->pointer, sizeof err->pointer, k, k_fields[f]);
        err->offset = err->offset != SIZE_MAX ? string_offset(r, v, err->offset) : qj_offset(&r->d, v);
    } else {
        size_t k = cat(err->pointer, sizeof err->pointer, 0, "/");
        k = cat(err->pointer, sizeof err->pointer, k, k_fields[f]);
        cat(err->pointer, sizeof err->pointer, k, inner);
        q_utf8_trim(err->pointer);
        if (err->offset != SIZE_MAX) {
            err->offset += qj_offset(&r->d, v);
        } else if (!inner[0]) {
            /* about the call, not a place in its value (no pending turn, a budget not met): the op */
            snprintf(err->pointer, sizeof err->pointer, "/op");
            err->offset = qj_offset(&r->d, r->v[F_OP]);
        } else {
            err->offset = qj_offset(&r->d, resolve_pointer(&r->d, err->pointer));
        }
    }
    err->line = err->column = 0;
    q_err_locate(err, r->src, r->len);
}

/* An error about field f of the request itself. */
static quire_status req_err(const req *r, quire_error *err, quire_status code, int f, const char *fmt, ...)
    Q_PRINTF(5, 6);
static quire_status req_err(const req *r, quire_error *err, quire_status code, int f, const char *fmt, ...) {
    char ptr[80], msg[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ptr, sizeof ptr, "/%s", k_fields[f]);
    size_t off = r->v[f] != QJ_NONE ? qj_offset(&r->d, r->v[f]) : 0;
    if (r->v[f] == QJ_NONE) ptr[0] = '\0';
    q_err_at(err, code, off, ptr, "%s", msg);
    q_err_locate(err, r->src, r->len);
    return code;
}

/* The decoded text of string field f (allocator-owned, NUL-terminated), or
 * an error when it is not a string. */
static quire_status take_string(quire_server *sv, const req *r, int f, char **out, size_t *n, quire_error *err) {
    uint32_t v = r->v[f];
    if (qj_type_of(&r->d, v) != QJ_STRING)
        return req_err(r, err, QUIRE_E_SCHEMA, f, "%s must be a string, got %s", k_fields[f],
                       qj_type_name(qj_type_of(&r->d, v)));
    size_t len = qj_str_decoded_len(&r->d, v);
    char *p = q_malloc(sv->a, len + 1);
    if (!p) return q_oom(err);
    *n = qj_str_decode_into(&r->d, v, p);
    p[*n] = '\0';
    *out = p;
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                   */
/* ------------------------------------------------------------------------ */

static void put_id(qbuf *b, const req *r) {
    qbuf_puts(b, "{\"id\":");
    if (r && r->v[F_ID] != QJ_NONE) {
        const char *p;
        size_t n;
        raw_value(&r->d, r->v[F_ID], &p, &n);
        size_t at = b->len;
        qbuf_put(b, p, n);
        /* a host that hands over a request with line breaks inside the id still gets a
         * one-line reply (a raw CR or LF in JSON can only be whitespace) */
        for (size_t i = at; !b->oom && i < b->len; i++)
            if (b->data[i] == '\n' || b->data[i] == '\r') b->data[i] = ' ';
    } else {
        qbuf_puts(b, "null");
    }
}

static void put_str(qbuf *b, const char *s, size_t n) {
    qbuf_putc(b, '"');
    qj_escape(b, s, n);
    qbuf_putc(b, '"');
}

static void put_key(qbuf *b, const char *k) {
    qbuf_putc(b, ',');
    qbuf_putc(b, '"');
    qbuf_puts(b, k);
    qbuf_puts(b, "\":");
}

/* JSONL (one JSON value a line) as a JSON array. */
static void put_jsonl_array(qbuf *b, const char *p, size_t n) {
    qbuf_putc(b, '[');
    bool first = true;
    const char *end = p ? p + n : p;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = p;
        while (s < le && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
        if (s < le) {
            if (!first) qbuf_putc(b, ',');
            first = false;
            const char *e = le;
            while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
            qbuf_put(b, s, (size_t)(e - s));
        }
        p = nl ? nl + 1 : end;
    }
    qbuf_putc(b, ']');
}

/* An inline JSON value produced by the library (compact: no raw newline);
 * null when empty. */
static void put_inline(qbuf *b, const char *p, size_t n) {
    while (n && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' ')) n--;
    if (n) qbuf_put(b, p, n);
    else qbuf_puts(b, "null");
}

static void put_error(qbuf *b, const req *r, const quire_error *e) {
    b->len = 0;
    put_id(b, r);
    qbuf_puts(b, ",\"error\":{\"code\":");
    put_str(b, quire_status_name(e->code), strlen(quire_status_name(e->code)));
    qbuf_puts(b, ",\"message\":");
    put_str(b, e->message, strlen(e->message));
    qbuf_puts(b, ",\"offset\":");
    if (e->offset != SIZE_MAX) qbuf_put_u64(b, e->offset); else qbuf_puts(b, "null");
    qbuf_puts(b, ",\"line\":");
    if (e->line) qbuf_put_u64(b, e->line); else qbuf_puts(b, "null");
    qbuf_puts(b, ",\"column\":");
    if (e->column) qbuf_put_u64(b, e->column); else qbuf_puts(b, "null");
    qbuf_puts(b, ",\"pointer\":");
    put_str(b, e->pointer, strlen(e->pointer));
    qbuf_puts(b, "}}");
}

/* ------------------------------------------------------------------------ */
/* Ops                                                                       */
/* ------------------------------------------------------------------------ */

static char *dupz(const quire_allocator *a, const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s);
    char *p = q_malloc(a, n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

static const char *const k_outcomes[] = {"completed", "failed", "timeout", "cancelled"};

/* Runs op on the request; writes the reply fields after `"ok":true` into b. */
static quire_status run_op(quire_server *sv, req *r, const op_def *op, sv_entry *e, qbuf *b, quire_error *err) {
    quire_status st = QUIRE_OK;
    const char *p = NULL;
    size_t n = 0;
    quire_bytes x1 = {0}, x2 = {0};
    char *text = NULL;
    size_t tlen = 0;
#define RAW(f) raw_value(&r->d, r->v[f], &p, &n)
    switch (op->kind) {
    case OP_OPEN:
    case OP_RESTORE: {
        quire_session *s = NULL;
        if (op->kind == OP_OPEN) {
            RAW(F_CONFIG);
            st = quire_session_open(p, n, sv->caps, &sv->opts, &s, err);
            if (st) err_onto_line(r, err, F_CONFIG, false);
        } else {
            if ((st = take_string(sv, r, F_LOG, &text, &tlen, err))) break;
            st = quire_session_restore(text, tlen, sv->caps, &sv->opts, &s, err);
            if (st) err_onto_line(r, err, F_LOG, true);
        }
        if (st) break;
        if (!tab_add(sv, r->name, r->nlen, s)) { quire_session_free(s); st = q_oom(err); }
        break;
    }
    case OP_APPEND:
        entry_target_clear(sv, e);
        RAW(F_MESSAGE);
        if ((st = quire_session_append(e->s, p, n, err))) err_onto_line(r, err, F_MESSAGE, false);
        break;
    case OP_APPLY:
        entry_target_clear(sv, e);
        RAW(F_LINE);
        if (r->repaired) p = r->src + (p - r->repaired); /* the line as sent */
        if ((st = quire_session_apply(e->s, p, n, &x1, &x2, err))) { err_onto_line(r, err, F_LINE, false); break; }
        put_key(b, "events");
        put_jsonl_array(b, x1.data, x1.len);
        put_key(b, "responses");
        put_jsonl_array(b, x2.data, x2.len);
        break;
    case OP_RENDER: {
        entry_target_clear(sv, e);
        if (r->v[F_TARGET] != QJ_NONE) RAW(F_TARGET);
        const char *pp = NULL; /* request parameters (DESIGN 13) */
        size_t pn = 0;
        if (r->v[F_PARAMS] != QJ_NONE) raw_value(&r->d, r->v[F_PARAMS], &pp, &pn);
        quire_session_turn t;
        st = quire_session_render(e->s, p, n, pp, pn, 0, &t, err);
        if (st) {
            render_advice(err);
            if (pp && qr_is_param_pointer(err->pointer)) err_onto_line(r, err, F_PARAMS, false);
            else if (transcript_pointer(err->pointer)) err_at_op(r, err, "the session's transcript at ");
            else if (r->v[F_TARGET] != QJ_NONE) err_onto_line(r, err, F_TARGET, false);
            break;
        }
        e->provider = dupz(sv->a, t.provider);
        e->model = dupz(sv->a, t.model);
        if ((t.provider && !e->provider) || (t.model && !e->model)) { st = q_oom(err); break; }
        put_key(b, "turn");
        qbuf_put_i64(b, t.turn);
        put_key(b, "method");
        put_str(b, t.method, strlen(t.method));
        put_key(b, "path");
        if (t.path) put_str(b, t.path, strlen(t.path)); else qbuf_puts(b, "null");
        put_key(b, "headers");
        if (t.headers) put_inline(b, t.headers, t.headers_len); else qbuf_puts(b, "null");
        put_key(b, "provider");
        if (t.provider) put_str(b, t.provider, strlen(t.provider)); else qbuf_puts(b, "null");
        put_key(b, "model");
        if (t.model) put_str(b, t.model, strlen(t.model)); else qbuf_puts(b, "null");
        put_key(b, "interruptPending");
        qbuf_puts(b, t.interrupt_pending ? "true" : "false");
        put_key(b, "events");
        put_jsonl_array(b, t.events, t.events_len);
        put_key(b, "body"); /* the segments, copied once into the reply */
        for (size_t i = 0; i < t.nsegments; i++) qbuf_put(b, t.segments[i].data, t.segments[i].len);
        break;
    }
    case OP_ACCEPT: {
        bool has_msg = r->v[F_MESSAGE] != QJ_NONE, has_resp = r->v[F_RESPONSE] != QJ_NONE;
        if (has_msg == has_resp) {
            st = req_err(r, err, QUIRE_E_SCHEMA, has_msg ? F_RESPONSE : F_OP,
                         "accept takes one of message and response%s", has_msg ? ", not both" : "");
            break;
        }
        if (r->v[F_STREAM] != QJ_NONE) {
            qj_type ty = qj_type_of(&r->d, r->v[F_STREAM]);
            if (ty != QJ_TRUE && ty != QJ_FALSE) {
                st = req_err(r, err, QUIRE_E_SCHEMA, F_STREAM, "stream must be a boolean, got %s", qj_type_name(ty));
                break;
            }
            if (!has_resp) {
                st = req_err(r, err, QUIRE_E_SCHEMA, F_STREAM, "stream goes with response, not message");
                break;
            }
        }
        if (has_msg) {
            RAW(F_MESSAGE);
            if ((st = quire_session_accept_message(e->s, p, n, err))) { err_onto_line(r, err, F_MESSAGE, false); break; }
            entry_target_clear(sv, e);
            break;
        }
        if (!e->provider) {
            st = req_err(r, err, QUIRE_E_INVALID, F_OP,
                         "no pending turn: render the request before accepting its answer");
            break;
        }
        bool is_str = qj_type_of(&r->d, r->v[F_RESPONSE]) == QJ_STRING;
        if (is_str) {
            if ((st = take_string(sv, r, F_RESPONSE, &text, &tlen, err))) break;
            p = text;
            n = tlen;
        } else {
            RAW(F_RESPONSE);
        }
        quire_response_options ro = QUIRE_RESPONSE_OPTIONS_INIT;
        ro.caps = sv->caps;
        /* ids the decoder makes up are unique in the session (the turn is part of them) */
        char prefix[40];
        snprintf(prefix, sizeof prefix, "call_%lld_", (long long)quire_session_turn_count(e->s) + 1);
        ro.call_id_prefix = prefix;
        quire_response resp;
        memset(&resp, 0, sizeof resp);
        if (r->v[F_STREAM] != QJ_NONE && qj_type_of(&r->d, r->v[F_STREAM]) == QJ_TRUE) {
            quire_stream *qs = NULL;
            st = quire_stream_new(e->provider, e->model, &ro, &sv->opts, &qs, err);
            if (!st) st = quire_stream_feed(qs, p, n, NULL, err);
            if (!st) st = quire_stream_finish(qs, &resp, NULL, err);
            quire_stream_free(qs);
        } else {
            st = quire_response_decode(e->provider, e->model, p, n, &ro, &sv->opts, &resp, err);
        }
        if (st) { err_onto_line(r, err, F_RESPONSE, is_str); quire_response_free(&resp); break; }
        st = quire_session_accept_message(e->s, resp.message.data, resp.message.len, err);
        if (st) {
            /* the decoded message is not in the request: point at the response */
            if (err) { err->offset = SIZE_MAX; err->line = err->column = 0; }
            err_onto_line(r, err, F_RESPONSE, true);
            quire_response_free(&resp);
            break;
        }
        entry_target_clear(sv, e);
        put_key(b, "message");
        put_inline(b, resp.message.data, resp.message.len);
        put_key(b, "info");
        put_inline(b, resp.info.data, resp.info.len);
        quire_response_free(&resp);
        break;
    }
    case OP_TOOL_OUTCOME: {
        entry_target_clear(sv, e);
        if ((st = take_string(sv, r, F_CALLID, &text, &tlen, err))) break;
        if (tlen == 0 || memchr(text, '\0', tlen)) {
            st = req_err(r, err, QUIRE_E_SCHEMA, F_CALLID, "callId must be a non-empty string without NUL");
            break;
        }
        uint32_t ov = r->v[F_OUTCOME];
        int oc = -1;
        for (int i = 0; qj_type_of(&r->d, ov) == QJ_STRING && i < 4; i++)
            if (qj_str_eq(&r->d, ov, k_outcomes[i])) oc = i;
        if (oc < 0) {
            st = req_err(r, err, QUIRE_E_SCHEMA, F_OUTCOME,
                         "outcome must be \"completed\", \"failed\", \"timeout\" or \"cancelled\"");
            break;
        }
        if (r->v[F_CONTENT] != QJ_NONE) RAW(F_CONTENT);
        int answered = 0;
        st = quire_session_tool_outcome(e->s, text, (quire_tool_outcome)oc, p, n, &answered, &x1, err);
        if (st) {
            static const char k_in_result[] = "/content/0/content";
            size_t k = sizeof k_in_result - 1;
            if (r->v[F_CONTENT] != QJ_NONE && err && strncmp(err->pointer, k_in_result, k) == 0 &&
                (err->pointer[k] == '\0' || err->pointer[k] == '/')) {
                /* an error in the tool message built around the content: its pointer past the
                 * toolResult's "content" is a pointer into the request's content (its offset is
                 * not: the message was written anew) */
                memmove(err->pointer, err->pointer + k, strlen(err->pointer + k) + 1);
                err->offset = err->pointer[0] ? SIZE_MAX : 0;
                err_onto_line(r, err, F_CONTENT, false);
            } else {
                /* the content's own errors carry offsets; the rest is about the call id */
                bool about_content = r->v[F_CONTENT] != QJ_NONE && err && err->offset != SIZE_MAX;
                err_onto_line(r, err, about_content ? F_CONTENT : F_CALLID, !about_content);
            }
            break;
        }
        put_key(b, "answered");
        qbuf_puts(b, answered ? "true" : "false");
        put_key(b, "events");
        put_jsonl_array(b, x1.data, x1.len);
        break;
    }
    case OP_COMPACT: {
        entry_target_clear(sv, e);
        if (r->v[F_POLICY] != QJ_NONE) RAW(F_POLICY);
        if (r->v[F_SUMMARY] != QJ_NONE && (st = take_string(sv, r, F_SUMMARY, &text, &tlen, err))) break;
        char span[128] = "";
        if (r->v[F_SPAN] != QJ_NONE) {
            /* the plan's span id: short, plain (digits, '-', hex) */
            if (qj_type_of(&r->d, r->v[F_SPAN]) != QJ_STRING || qj_at(&r->d, r->v[F_SPAN])->len >= sizeof span ||
                (qj_at(&r->d, r->v[F_SPAN])->flags & QJ_F_ESC)) {
                st = req_err(r, err, QUIRE_E_SCHEMA, F_SPAN, "expected a plan's span id (a short string)");
                break;
            }
            memcpy(span, qj_at(&r->d, r->v[F_SPAN])->p, qj_at(&r->d, r->v[F_SPAN])->len);
            span[qj_at(&r->d, r->v[F_SPAN])->len] = '\0';
        }
        st = quire_session_compact_span(e->s, p, n, text, tlen, span[0] ? span : NULL, &x1, &x2, err);
        if (st && span[0] && (st == QUIRE_E_MISMATCH || st == QUIRE_E_INVALID)) {
            err_onto_line(r, err, F_SPAN, true); /* the span named is not the plan's any more */
            break;
        }
        if (st) {
            err_onto_line(r, err, r->v[F_POLICY] != QJ_NONE || r->v[F_SUMMARY] == QJ_NONE ? F_POLICY : F_SUMMARY,
                          r->v[F_POLICY] == QJ_NONE && r->v[F_SUMMARY] != QJ_NONE);
            break;
        }
        put_key(b, "report");
        put_inline(b, x1.data, x1.len);
        put_key(b, "events");
        put_jsonl_array(b, x2.data, x2.len);
        break;
    }
    case OP_PLAN:
        if (r->v[F_POLICY] != QJ_NONE) RAW(F_POLICY);
        if ((st = quire_session_plan(e->s, p, n, 0, &x1, err))) { err_onto_line(r, err, F_POLICY, false); break; }
        put_key(b, "plan");
        put_inline(b, x1.data, x1.len);
        break;
    case OP_ESTIMATE:
        put_key(b, "tokens");
        qbuf_put_u64(b, quire_session_estimate(e->s));
        break;
    case OP_TRANSCRIPT:
    case OP_STATE:
        st = op->kind == OP_TRANSCRIPT ? quire_session_transcript(e->s, 0, &x1, err)
                                       : quire_session_state(e->s, 0, &x1, err);
        if (st) break;
        put_key(b, op->name);
        put_inline(b, x1.data, x1.len);
        break;
    case OP_LOG:
        if ((st = quire_session_log(e->s, &x1, err))) break;
        put_key(b, "log");
        put_str(b, x1.data ? x1.data : "", x1.len);
        break;
    case OP_CLOSE:
        tab_remove(sv, e);
        break;
    }
#undef RAW
    quire_bytes_free(&x1);
    quire_bytes_free(&x2);
    if (text) q_free(sv->a, text, tlen + 1);
    return st;
}

/* Parses and checks the request; on failure err is set (relative to the line). */
static quire_status parse_request(quire_server *sv, req *r, const op_def **op, quire_error *err) {
    quire_limits lim = q_limits(&sv->opts);
    if ((uint64_t)r->len > lim.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "request of %zu bytes exceeds the limit of %llu bytes", r->len,
                        (unsigned long long)lim.max_input_bytes);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_status st = qj_parse(&r->d, r->src, r->len, &jo, sv->a, err);
    if (st == QUIRE_E_JSON && r->len) {
        /* invalid text inside the message of an apply's line is a peer's: the
         * line goes to the session as sent, which drops that message's
         * reminder with an event (docs/reminders.md, "Peers' invalid text");
         * anywhere else the error stands */
        char *copy = q_malloc(sv->a, r->len);
        quire_status rs = qs_parse_repaired(&r->d, r->src, r->len, copy, &jo, sv->a);
        if (rs == QUIRE_E_NOMEM) {
            if (copy) q_free(sv->a, copy, r->len);
            return q_oom(err);
        }
        if (rs == QUIRE_OK) {
            uint32_t o = qj_type_of(&r->d, 0) == QJ_OBJECT ? qj_get(&r->d, 0, "op") : QJ_NONE;
            uint32_t l = qj_type_of(&r->d, 0) == QJ_OBJECT ? qj_get(&r->d, 0, "line") : QJ_NONE;
            if (o != QJ_NONE && qj_str_eq(&r->d, o, "apply") && qs_peer_text_at(&r->d, l, err->offset)) {
                r->repaired = copy;
                copy = NULL;
                st = QUIRE_OK;
            } else {
                qj_doc_free(&r->d);
                memset(&r->d, 0, sizeof r->d);
            }
        }
        if (copy) q_free(sv->a, copy, r->len);
    }
    if (st) return st;
    if (qj_type_of(&r->d, 0) != QJ_OBJECT) {
        st = q_err_at(err, QUIRE_E_SCHEMA, 0, "", "a request must be a JSON object, got %s",
                      qj_type_name(qj_type_of(&r->d, 0)));
        q_err_locate(err, r->src, r->len);
        return st;
    }
    bool dup = false;
    uint32_t bad = qj_match_fields(&r->d, 0, k_fields, F_COUNT_, r->v, &dup);
    if (bad != QJ_NONE) {
        /* the id is echoed even when the rest of the request is wrong, unless it is the repeated key */
        r->v[F_ID] = dup && qj_str_eq(&r->d, bad, "id") ? QJ_NONE : qj_get(&r->d, 0, "id");
        char key[200] = "...", ptr[256] = "";
        size_t kn = qj_str_decoded_len(&r->d, bad);
        char *dec = q_malloc(sv->a, kn + 1);
        if (dec) {
            size_t m = qj_str_decode_into(&r->d, bad, dec);
            q_quote_text(key, sizeof key, dec, m);
            q_ptr_push_key(ptr, sizeof ptr, dec, m);
            q_free(sv->a, dec, kn + 1);
        }
        st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&r->d, bad), ptr,
                      dup ? "the field \"%s\" is given twice" : "unknown field \"%s\"", key);
        q_err_locate(err, r->src, r->len);
        return st;
    }
    uint32_t ov = r->v[F_OP];
    if (ov == QJ_NONE) return req_err(r, err, QUIRE_E_SCHEMA, F_OP, "the request has no op");
    *op = NULL;
    for (size_t i = 0; qj_type_of(&r->d, ov) == QJ_STRING && i < Q_COUNTOF(k_ops); i++)
        if (qj_str_eq(&r->d, ov, k_ops[i].name)) *op = &k_ops[i];
    if (!*op)
        return req_err(r, err, QUIRE_E_SCHEMA, F_OP,
                       "unknown op (open, restore, append, apply, render, accept, tool_outcome, compact, plan, "
                       "estimate, transcript, state, log, close)");
    for (int f = F_SESSION + 1; f < F_COUNT_; f++) {
        if (r->v[f] != QJ_NONE && !((*op)->takes & B(f))) {
            char ptr[40];
            snprintf(ptr, sizeof ptr, "/%s", k_fields[f]);
            st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&r->d, r->v[f] - 1), ptr, "%s takes no field \"%s\"",
                          (*op)->name, k_fields[f]);
            q_err_locate(err, r->src, r->len);
            return st;
        }
        if (r->v[f] == QJ_NONE && ((*op)->requires & B(f))) {
            char msg[80];
            snprintf(msg, sizeof msg, "%s needs the field \"%s\"", (*op)->name, k_fields[f]);
            return req_err(r, err, QUIRE_E_SCHEMA, F_OP, "%s", msg);
        }
    }
    uint32_t sv_node = r->v[F_SESSION];
    if (sv_node == QJ_NONE)
        return req_err(r, err, QUIRE_E_SCHEMA, F_OP, "the request has no session (a session name)");
    if (qj_type_of(&r->d, sv_node) != QJ_STRING || qj_at(&r->d, sv_node)->len == 0)
        return req_err(r, err, QUIRE_E_SCHEMA, F_SESSION, "session must be a non-empty string");
    size_t nl = qj_str_decoded_len(&r->d, sv_node);
    r->name = q_malloc(sv->a, nl + 1);
    if (!r->name) return q_oom(err);
    r->nlen = qj_str_decode_into(&r->d, sv_node, r->name);
    r->name[r->nlen] = '\0';
    return QUIRE_OK;
}

static bool blank(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n') return false;
    return true;
}

quire_status quire_server_handle(quire_server *sv, const char *line, size_t len, quire_bytes *reply,
                                 quire_error *err) {
    if (reply) memset(reply, 0, sizeof *reply);
    if (!sv || !reply) return q_err(err, QUIRE_E_INVALID, "quire_server_handle: no server or no reply");
    if (!line) len = 0;
    if (blank(line, len)) return QUIRE_OK;
    req r;
    memset(&r, 0, sizeof r);
    r.src = line;
    r.len = len;
    for (int f = 0; f < F_COUNT_; f++) r.v[f] = QJ_NONE;
    qbuf *b = &sv->out;
    b->len = 0;
    b->oom = false;
    quire_error e;
    memset(&e, 0, sizeof e);
    e.offset = SIZE_MAX;
    const op_def *op = NULL;
    quire_status st = parse_request(sv, &r, &op, &e);
    bool parsed = r.d.nodes != NULL;
    sv_entry *ent = NULL;
    if (!st) {
        ent = tab_find(sv, r.name, r.nlen);
        bool creates = op->kind == OP_OPEN || op->kind == OP_RESTORE;
        if (creates && ent) {
            st = req_err(&r, &e, QUIRE_E_INVALID, F_SESSION, "a session of this name is already open");
        } else if (!creates && !ent) {
            st = req_err(&r, &e, QUIRE_E_INVALID, F_SESSION, "no session of this name is open");
        }
    }
    if (!st) {
        put_id(b, &r);
        qbuf_puts(b, ",\"ok\":true");
        st = run_op(sv, &r, op, ent, b, &e);
        qbuf_putc(b, '}');
    }
    if (st && e.offset != SIZE_MAX && e.offset > len) {
        /* never a position outside the line: fall back on what the pointer names */
        e.offset = parsed ? qj_offset(&r.d, resolve_pointer(&r.d, e.pointer)) : SIZE_MAX;
        e.line = e.column = 0;
        q_err_locate(&e, line, len);
    }
    if (st) put_error(b, parsed && r.v[F_ID] != QJ_NONE ? &r : NULL, &e);
    if (r.name) q_free(sv->a, r.name, r.nlen + 1);
    if (parsed) qj_doc_free(&r.d);
    if (r.repaired) q_free(sv->a, r.repaired, r.len);
    if (b->oom) { b->len = 0; b->oom = false; return q_oom(err); }
    /* the reply goes out in its own buffer; the work buffer stays for the next */
    char *data = q_malloc(sv->a, b->len + 1);
    if (!data) return q_oom(err);
    memcpy(data, b->data, b->len);
    data[b->len] = '\0';
    reply->data = data;
    reply->len = b->len;
    reply->alloc_ = sv->a;
    return QUIRE_OK;
}

quire_status quire_server_overlong(const quire_server *sv, uint64_t max_line, quire_bytes *reply, quire_error *err) {
    if (reply) memset(reply, 0, sizeof *reply);
    if (!sv || !reply) return q_err(err, QUIRE_E_INVALID, "quire_server_overlong: no server or no reply");
    qbuf b;
    qbuf_init(&b, sv->a);
    quire_error e;
    q_err_at(&e, QUIRE_E_LIMIT, max_line, "", "the request line is longer than %llu bytes (--max-line); it was dropped",
             (unsigned long long)max_line);
    e.line = 1;
    e.column = (uint32_t)(max_line + 1 > UINT32_MAX ? UINT32_MAX : max_line + 1);
    put_error(&b, NULL, &e);
    if (b.oom || !qbuf_take(&b, reply)) { qbuf_free(&b); return q_oom(err); }
    return QUIRE_OK;
}
