#include "core/transcript.h"

#include <stdarg.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* qstr                                                                      */
/* ------------------------------------------------------------------------ */

const char *qstr_plain_bytes(qstr s, qarena *ar, size_t *len) {
    if (!s.esc) { *len = s.len; return s.p; }
    char *o = qarena_alloc(ar, (size_t)s.len + 1);
    if (!o) return NULL;
    *len = qj_unescape(s.p, s.len, o);
    o[*len] = '\0';
    return o;
}

bool qstr_eq(qstr s, const char *z) {
    size_t n = strlen(z);
    if (!s.p) return false;
    if (!s.esc) return s.len == n && memcmp(s.p, z, n) == 0;
    if (n > s.len) return false;
    char tmp[256];
    if (s.len >= sizeof tmp) return false; /* identifiers compared this way are short */
    size_t k = qj_unescape(s.p, s.len, tmp);
    return k == n && memcmp(tmp, z, n) == 0;
}

void qw_qstr(qw *w, qstr s) {
    if (s.esc || s.raw) qw_str_esc(w, s.p, s.len); /* escaped or needing none: copied as is */
    else qw_str(w, s.p ? s.p : "", s.len);
}

void qbuf_put_qstr(qbuf *b, qstr s) {
    if (!s.p) return;
    if (!s.esc) { qbuf_put(b, s.p, s.len); return; }
    if (!qbuf_grow(b, s.len)) return;
    b->len += qj_unescape(s.p, s.len, b->data + b->len);
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */
/* ------------------------------------------------------------------------ */

/* Name tables written once as lists: the strings and their lengths (the
 * field and value matching compares a key's length first). */
#define QN_STR(s) s,
#define QN_LEN(s) (uint8_t)(sizeof(s) - 1),
#define ROLES(X) X("user") X("assistant") X("tool") X("system") X("developer")
static const char *const k_roles[] = {ROLES(QN_STR)};
static const uint8_t k_roles_len[] = {ROLES(QN_LEN)};
const char *qrole_name(qrole r) { return (unsigned)r < Q_COUNTOF(k_roles) ? k_roles[r] : "?"; }

#define BLOCK_TYPES(X)                                                                                      \
    X("text") X("image") X("document") X("toolCall") X("toolResult") X("thinking") X("redactedThinking")     \
    X("opaque") X("audio") X("file") X("serverToolCall") X("serverToolResult")
static const char *const k_block_types[] = {BLOCK_TYPES(QN_STR)};
static const uint8_t k_block_types_len[] = {BLOCK_TYPES(QN_LEN)};
const char *qblock_type_name(qblock_type t) {
    return (unsigned)t < Q_COUNTOF(k_block_types) ? k_block_types[t] : "?";
}

/* ------------------------------------------------------------------------ */
/* Construction                                                              */
/* ------------------------------------------------------------------------ */

quire_transcript *qtr_new(const quire_allocator *a) {
    a = a ? a : q_alloc_default();
    quire_transcript *t = q_malloc(a, sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->a = a;
    qarena_init(&t->ar, a);
    return t;
}

void quire_transcript_free(quire_transcript *t) {
    if (!t) return;
    for (uint32_t i = 0; i < t->ndocs; i++) qj_doc_free(t->docs[i]);
    q_free(t->a, t->docs, (size_t)t->capdocs * sizeof(qj_doc *));
    q_free(t->a, t->msgs, (size_t)t->capmsgs * sizeof(qmsg));
    qarena_free(&t->ar);
    q_free(t->a, t, sizeof *t);
}

size_t quire_transcript_message_count(const quire_transcript *t) { return t ? t->nmsgs : 0; }

qj_doc *qtr_parse_doc(quire_transcript *t, const char *json, size_t len, bool borrow,
                      const quire_options *opts, quire_error *err) {
    quire_limits l = q_limits(opts);
    if ((uint64_t)len > l.max_input_bytes) {
        q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                 (unsigned long long)l.max_input_bytes);
        return NULL;
    }
    if (t->ndocs == t->capdocs) {
        uint32_t ncap = t->capdocs ? t->capdocs * 2 : 4;
        qj_doc **nd = q_realloc(t->a, t->docs, (size_t)t->capdocs * sizeof(qj_doc *), (size_t)ncap * sizeof(qj_doc *));
        if (!nd) { q_oom(err); return NULL; }
        t->docs = nd; t->capdocs = ncap;
    }
    qj_doc *d = qarena_alloc(&t->ar, sizeof *d);
    const char *src = json;
    if (!borrow) {
        char *copy = qarena_alloc(&t->ar, len ? len : 1);
        if (!d || !copy) { q_oom(err); return NULL; }
        if (len) memcpy(copy, json, len);
        src = copy;
    }
    if (!d) { q_oom(err); return NULL; }
    qj_opts jo = {l.max_depth, l.max_string_bytes};
    if (qj_parse(d, src, len, &jo, t->a, err) != QUIRE_OK) return NULL;
    t->docs[t->ndocs++] = d;
    return d;
}

qmsg *qtr_push_msg(quire_transcript *t) {
    if (t->nmsgs == t->capmsgs) {
        uint32_t ncap = t->capmsgs ? t->capmsgs + t->capmsgs / 2 + 8 : 16;
        qmsg *nm = q_realloc(t->a, t->msgs, (size_t)t->capmsgs * sizeof(qmsg), (size_t)ncap * sizeof(qmsg));
        if (!nm) return NULL;
        t->msgs = nm; t->capmsgs = ncap;
    }
    qmsg *m = &t->msgs[t->nmsgs++];
    memset(m, 0, sizeof *m);
    return m;
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                  */
/* ------------------------------------------------------------------------ */

/* The JSON Pointer of the value being decoded is kept as a stack of
 * segments (a key or an index) and written out only when an error needs it. */
#define DCTX_SEGS 64
typedef struct dseg {
    const char *key; /* NULL: an array index */
    size_t idx;
} dseg;
typedef struct dctx {
    quire_transcript *t;
    const qj_doc *d;
    quire_error *err;
    char ptr[512];   /* the caller's prefix; the whole pointer once derr writes it */
    size_t pre;      /* strlen of the caller's prefix */
    size_t plen;     /* segments in the permanent prefix */
    size_t cur;      /* plen, or plen + 1 with the last segment pushed */
    dseg seg[DCTX_SEGS];
} dctx;

static inline void ptr_key(dctx *c, const char *k) {
    if (c->plen < DCTX_SEGS) c->seg[c->plen] = (dseg){k, 0};
    c->cur = c->plen + 1;
}
static inline void ptr_idx(dctx *c, size_t i) {
    if (c->plen < DCTX_SEGS) c->seg[c->plen] = (dseg){NULL, i};
    c->cur = c->plen + 1;
}
/* Enter: make the current pointer permanent; returns the saved length. */
static inline size_t ptr_enter(dctx *c) { size_t s = c->plen; c->plen = c->cur; return s; }
static inline void ptr_leave(dctx *c, size_t saved) { c->plen = c->cur = saved; }
/* Back to the permanent prefix. */
static inline void ptr_reset(dctx *c) { c->cur = c->plen; }
/* Writes the pointer into c->ptr (after the caller's prefix). */
static const char *ptr_build(dctx *c) {
    size_t n = c->pre, k = c->cur < DCTX_SEGS ? c->cur : DCTX_SEGS;
    c->ptr[n] = '\0';
    for (size_t i = 0; i < k; i++)
        n = c->seg[i].key ? q_ptr_append_key(c->ptr, n, sizeof c->ptr, c->seg[i].key, strlen(c->seg[i].key))
                          : q_ptr_append_index(c->ptr, n, sizeof c->ptr, c->seg[i].idx);
    return c->ptr;
}

static quire_status Q_PRINTF(3, 4) derr(dctx *c, uint32_t node, const char *fmt, ...) {
    quire_error *e = c->err;
    if (!e) return QUIRE_E_SCHEMA;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_err_at(e, QUIRE_E_SCHEMA, qj_offset(c->d, node), ptr_build(c), "%s", msg);
    q_err_locate(e, c->d->src, c->d->len);
    return QUIRE_E_SCHEMA;
}

static quire_status type_err(dctx *c, uint32_t v, const char *what) {
    return derr(c, v, "expected %s, got %s", what, qj_type_name(qj_type_of(c->d, v)));
}
static inline quire_status expect_type(dctx *c, uint32_t v, qj_type want, const char *what) {
    qj_type t = qj_type_of(c->d, v);
    if (Q_LIKELY(t == want || (want == QJ_TRUE && t == QJ_FALSE))) return QUIRE_OK;
    return type_err(c, v, what);
}

static quire_status fields_err(dctx *c, uint32_t k, bool dup, const char *what);
/* Scans the members of obj: each key must be one of names (else "unknown
 * field"), none may repeat. vals[i] receives the value index or QJ_NONE.
 * Inline in each caller (the table and its size are constants there); the
 * error out of line. */
static inline quire_status scan_fields(dctx *c, uint32_t obj, const char *const *names, const uint8_t *lens, size_t n,
                                       uint32_t *vals, uint64_t *present, const char *what) {
    bool dup;
    uint32_t k = qj_match_fields_len(c->d, obj, names, lens, n, vals, present, &dup);
    if (Q_LIKELY(k == QJ_NONE)) return QUIRE_OK;
    return fields_err(c, k, dup, what);
}
static quire_status fields_err(dctx *c, uint32_t k, bool dup, const char *what) {
    char keybuf[128];
    const qj_node *kn = qj_at(c->d, k);
    size_t kl = kn->len < sizeof keybuf - 1 ? kn->len : sizeof keybuf - 1;
    memcpy(keybuf, kn->p, kl);
    keybuf[kl] = '\0';
    ptr_key(c, keybuf);
    if (dup) return derr(c, k, "duplicate key \"%s\"", keybuf);
    return derr(c, k, "unknown field \"%s\" in %s", keybuf, what);
}

/* A cache marker: {"type":"ephemeral"} with an optional "ttl" of "5m" or
 * "1h", nothing else (the only marker the providers take; the Messages API
 * refuses any other field or value, and Bedrock's cachePoint takes the same
 * TTLs). The pointer is at the cacheControl member. */
static quire_status cache_control_check(dctx *c, uint32_t obj) {
    static const char *const names[] = {"type", "ttl"};
    static const uint8_t lens[] = {4, 3};
    quire_status st = expect_type(c, obj, QJ_OBJECT, "object");
    if (st) return st;
    uint32_t v[2];
    uint64_t present = 0;
    size_t s = ptr_enter(c);
    if ((st = scan_fields(c, obj, names, lens, 2, v, &present, "cacheControl"))) return st;
    if (v[0] == QJ_NONE) return derr(c, obj, "missing required field \"type\" (\"ephemeral\")");
    ptr_key(c, "type");
    if (qj_type_of(c->d, v[0]) != QJ_STRING || !qj_str_eq(c->d, v[0], "ephemeral"))
        return derr(c, v[0], "a cache marker's type is \"ephemeral\"");
    if (v[1] != QJ_NONE) {
        ptr_key(c, "ttl");
        if (qj_type_of(c->d, v[1]) != QJ_STRING || !(qj_str_eq(c->d, v[1], "5m") || qj_str_eq(c->d, v[1], "1h")))
            return derr(c, v[1], "a cache marker's ttl is \"5m\" or \"1h\"");
    }
    ptr_leave(c, s);
    return QUIRE_OK;
}

static quire_status str_err(dctx *c, uint32_t v, const char *field) {
    ptr_key(c, field); /* the pointer is only built for an error */
    return expect_type(c, v, QJ_STRING, "string");
}
/* Inline (a few loads and stores per field), the error out of line. */
static inline quire_status get_str(dctx *c, uint32_t v, const char *field, qstr *out) {
    if (v == QJ_NONE) return QUIRE_OK;
    if (Q_UNLIKELY(qj_type_of(c->d, v) != QJ_STRING)) return str_err(c, v, field);
    *out = qstr_node(c->d, v);
    return QUIRE_OK;
}

static quire_status need(dctx *c, uint32_t obj, uint32_t v, const char *field, const char *what) {
    if (v != QJ_NONE) return QUIRE_OK;
    ptr_reset(c);
    return derr(c, obj, "missing required field \"%s\" in %s", field, what);
}

enum {
    BF_TYPE, BF_TEXT, BF_CACHE, BF_MEDIA, BF_DATA, BF_URL, BF_TITLE, BF_ID, BF_NAME, BF_INPUT,
    BF_TOOLCALLID, BF_CONTENT, BF_ISERROR, BF_SIGNATURE, BF_PROVIDER, BF_ITEM, BF_FILEID, BF_FILENAME,
    BF_CITATIONS, BF_KIND, BF_DETAIL, BF_POPTS, BF_COUNT
};
#define BLOCK_FIELDS(X)                                                                                     \
    X("type") X("text") X("cacheControl") X("mediaType") X("data") X("url") X("title") X("id") X("name")      \
    X("input") X("toolCallId") X("content") X("isError") X("signature") X("provider") X("item") X("fileId")  \
    X("filename") X("citations") X("kind") X("detail") X("providerOptions")
static const char *const k_block_fields[BF_COUNT] = {BLOCK_FIELDS(QN_STR)};
static const uint8_t k_block_fields_len[BF_COUNT] = {BLOCK_FIELDS(QN_LEN)};
#define B(x) (1u << (x))
static const uint32_t k_block_allowed[] = {
    [QB_TEXT] = B(BF_TYPE) | B(BF_TEXT) | B(BF_CITATIONS) | B(BF_CACHE) | B(BF_POPTS),
    [QB_IMAGE] = B(BF_TYPE) | B(BF_MEDIA) | B(BF_DATA) | B(BF_URL) | B(BF_FILEID) | B(BF_PROVIDER) | B(BF_CACHE) |
                 B(BF_DETAIL),
    [QB_DOCUMENT] = B(BF_TYPE) | B(BF_MEDIA) | B(BF_DATA) | B(BF_URL) | B(BF_FILEID) | B(BF_PROVIDER) | B(BF_TITLE) |
                    B(BF_FILENAME) | B(BF_CACHE),
    [QB_AUDIO] = B(BF_TYPE) | B(BF_MEDIA) | B(BF_DATA) | B(BF_URL) | B(BF_FILEID) | B(BF_PROVIDER) | B(BF_CACHE),
    [QB_FILE] = B(BF_TYPE) | B(BF_MEDIA) | B(BF_DATA) | B(BF_URL) | B(BF_FILEID) | B(BF_PROVIDER) | B(BF_FILENAME) |
                B(BF_CACHE),
    [QB_SERVER_TOOL_CALL] = B(BF_TYPE) | B(BF_PROVIDER) | B(BF_ID) | B(BF_NAME) | B(BF_INPUT) | B(BF_CACHE),
    [QB_SERVER_TOOL_RESULT] = B(BF_TYPE) | B(BF_PROVIDER) | B(BF_TOOLCALLID) | B(BF_NAME) | B(BF_CONTENT) | B(BF_CACHE),
    [QB_TOOL_CALL] = B(BF_TYPE) | B(BF_ID) | B(BF_NAME) | B(BF_INPUT) | B(BF_KIND) | B(BF_CACHE) | B(BF_POPTS),
    [QB_TOOL_RESULT] = B(BF_TYPE) | B(BF_TOOLCALLID) | B(BF_CONTENT) | B(BF_ISERROR) | B(BF_CACHE),
    [QB_THINKING] = B(BF_TYPE) | B(BF_TEXT) | B(BF_SIGNATURE) | B(BF_PROVIDER),
    [QB_REDACTED_THINKING] = B(BF_TYPE) | B(BF_DATA) | B(BF_PROVIDER),
    [QB_OPAQUE] = B(BF_TYPE) | B(BF_PROVIDER) | B(BF_ITEM),
};

static quire_status decode_block(dctx *c, uint32_t v, qblock *b, bool in_tool_result);

bool qtr_json_text(quire_transcript *t, qval v, qstr *out) {
    qbuf jb;
    qbuf_init(&jb, t->a);
    qw w;
    qw_init(&w, &jb, false);
    qw_qval(&w, v);
    qw_dispose(&w);
    char *txt = jb.oom ? NULL : qarena_strndup(&t->ar, jb.data ? jb.data : "", jb.len);
    size_t n = jb.len;
    qbuf_free(&jb);
    if (!txt) return false;
    *out = qstr_plain(txt, n);
    return true;
}

/* Base64 digits of the first bytes of data decoded into out (at most cap);
 * returns how many bytes. */
static size_t b64_prefix(const char *p, size_t n, uint8_t *out, size_t cap) {
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        char ch = p[i];
        int v;
        if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
        else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
        else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
        else if (ch == '+' || ch == '-') v = 62;
        else if (ch == '/' || ch == '_') v = 63;
        else if (ch == '\\') continue; /* "\/" in JSON-escaped input */
        else break;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) { bits -= 8; out[k++] = (uint8_t)(acc >> bits); }
    }
    return k;
}

const char *qtr_sniff_media(qstr data) {
    uint8_t h[16];
    size_t n = b64_prefix(data.p ? data.p : "", data.p ? data.len : 0, h, sizeof h);
    if (n >= 8 && memcmp(h, "\x89PNG\r\n\x1a\n", 8) == 0) return "image/png";
    if (n >= 3 && h[0] == 0xFF && h[1] == 0xD8 && h[2] == 0xFF) return "image/jpeg";
    if (n >= 6 && (memcmp(h, "GIF87a", 6) == 0 || memcmp(h, "GIF89a", 6) == 0)) return "image/gif";
    if (n >= 12 && memcmp(h, "RIFF", 4) == 0 && memcmp(h + 8, "WEBP", 4) == 0) return "image/webp";
    if (n >= 12 && memcmp(h, "RIFF", 4) == 0 && memcmp(h + 8, "WAVE", 4) == 0) return "audio/wav";
    if (n >= 5 && memcmp(h, "%PDF-", 5) == 0) return "application/pdf";
    if (n >= 3 && memcmp(h, "ID3", 3) == 0) return "audio/mpeg";
    if (n >= 2 && h[0] == 0xFF && (h[1] & 0xE0) == 0xE0 && (h[1] & 0x06) != 0) return "audio/mpeg";
    return NULL;
}

/* The media type's top-level part (before '/') of a plain or escaped string. */
static bool media_has_subtype(qstr s) {
    for (uint32_t i = 0; i < s.len; i++)
        if (s.p[i] == '/' || (s.esc && s.p[i] == '\\')) return i + 1 < s.len;
    return false;
}

static quire_status decode_source(dctx *c, uint32_t obj, const uint32_t *f, qblock *b, const char *what) {
    quire_status st;
    if ((st = get_str(c, f[BF_MEDIA], "mediaType", &b->media_type))) return st;
    if ((st = get_str(c, f[BF_DATA], "data", &b->data))) return st;
    if ((st = get_str(c, f[BF_URL], "url", &b->url))) return st;
    if ((st = get_str(c, f[BF_FILEID], "fileId", &b->file_id))) return st;
    if ((st = get_str(c, f[BF_PROVIDER], "provider", &b->provider))) return st;
    if ((st = get_str(c, f[BF_FILENAME], "filename", &b->filename))) return st;
    ptr_reset(c);
    int nsrc = (f[BF_DATA] != QJ_NONE) + (f[BF_URL] != QJ_NONE) + (f[BF_FILEID] != QJ_NONE);
    if (nsrc == 0) return derr(c, obj, "%s block needs \"data\", \"url\" or \"fileId\"", what);
    if (nsrc == 2 && f[BF_FILEID] == QJ_NONE)
        return derr(c, obj, "%s block has both \"data\" and \"url\"; give one", what);
    if (nsrc > 1) return derr(c, obj, "%s block has more than one of \"data\", \"url\" and \"fileId\"; give one", what);
    if (f[BF_FILEID] != QJ_NONE && f[BF_PROVIDER] == QJ_NONE)
        return derr(c, obj, "missing required field \"provider\" in %s block with \"fileId\" (the provider that owns the id)", what);
    if (f[BF_PROVIDER] != QJ_NONE && f[BF_FILEID] == QJ_NONE) {
        ptr_key(c, "provider");
        return derr(c, f[BF_PROVIDER], "\"provider\" on a %s block names the owner of a \"fileId\"; this block has none", what);
    }
    bool typed = qstr_present(b->media_type) && media_has_subtype(b->media_type);
    if (typed) return QUIRE_OK;
    /* no subtype ("image") or no media type at all: resolved from the data */
    if (f[BF_DATA] == QJ_NONE) {
        if (!qstr_present(b->media_type)) return QUIRE_OK; /* by URL or file id: the provider reads it */
        ptr_key(c, "mediaType");
        return derr(c, f[BF_MEDIA], "media type without a subtype in %s block and no \"data\" to resolve it from", what);
    }
    const char *sn = qtr_sniff_media(b->data);
    if (!sn) {
        if (qstr_present(b->media_type)) ptr_key(c, "mediaType");
        return derr(c, qstr_present(b->media_type) ? f[BF_MEDIA] : obj,
                    "%s block: the media type %s and the data's first bytes match no known format "
                    "(PNG, JPEG, GIF, WebP, PDF, WAV, MP3); give \"mediaType\" with a subtype",
                    what, qstr_present(b->media_type) ? "has no subtype" : "is missing");
    }
    if (qstr_present(b->media_type)) {
        size_t tl = (size_t)(strchr(sn, '/') - sn);
        if (b->media_type.len != tl || memcmp(b->media_type.p, sn, tl) != 0) {
            ptr_key(c, "mediaType");
            return derr(c, f[BF_MEDIA], "%s block: the data is %s, not of media type \"%.*s\"", what, sn,
                        (int)b->media_type.len, b->media_type.p);
        }
    }
    b->media_given = b->media_type;
    b->media_resolved = true;
    b->media_type = qstr_lit(sn);
    return QUIRE_OK;
}

/* b comes zeroed (every caller allocates the blocks with qarena_calloc). */
static quire_status decode_block(dctx *c, uint32_t v, qblock *b, bool in_tool_result) {
    const qj_doc *d = c->d;
    b->is_error = -1;
    quire_status st = expect_type(c, v, QJ_OBJECT, "object (a content block)");
    if (st) return st;
    uint32_t f[BF_COUNT];
    uint64_t present;
    size_t saved = ptr_enter(c);
    if ((st = scan_fields(c, v, k_block_fields, k_block_fields_len, BF_COUNT, f, &present, "content block"))) return st;
    if ((st = need(c, v, f[BF_TYPE], "type", "content block"))) return st;
    ptr_key(c, "type");
    if ((st = expect_type(c, f[BF_TYPE], QJ_STRING, "string"))) return st;
    int type = qj_str_index_len(d, f[BF_TYPE], k_block_types, k_block_types_len, Q_COUNTOF(k_block_types));
    if (type < 0) {
        char tb[96];
        const qj_node *tn = qj_at(d, f[BF_TYPE]);
        size_t tl = tn->len < sizeof tb - 1 ? tn->len : sizeof tb - 1;
        memcpy(tb, tn->p, tl);
        tb[tl] = '\0';
        return derr(c, f[BF_TYPE], "unknown block type \"%s\"", tb);
    }
    b->type = (qblock_type)type;
    if (in_tool_result && b->type != QB_TEXT && b->type != QB_IMAGE)
        return derr(c, f[BF_TYPE], "a toolResult's content holds only text and image blocks, not \"%s\"",
                    k_block_types[type]);
    uint64_t extra = present & ~(uint64_t)k_block_allowed[type];
    if (Q_UNLIKELY(extra)) { /* the first such field in table order */
        int i = __builtin_ctzll(extra);
        ptr_key(c, k_block_fields[i]);
        return derr(c, f[i] - 1, "unknown field \"%s\" in %s block", k_block_fields[i], k_block_types[type]);
    }
    if (f[BF_CACHE] != QJ_NONE) {
        ptr_key(c, "cacheControl");
        if ((st = cache_control_check(c, f[BF_CACHE]))) return st;
        b->cache_control = qval_of(d, f[BF_CACHE]);
    }
    if (f[BF_POPTS] != QJ_NONE) {
        /* fields for one dialect's item; the only reader is the Responses encoder */
        ptr_key(c, "providerOptions");
        if ((st = expect_type(c, f[BF_POPTS], QJ_OBJECT, "object"))) return st;
        uint32_t k = f[BF_POPTS] + 1;
        for (uint32_t i = 0; i < qj_at(d, f[BF_POPTS])->n; i++, k = qj_next(d, k + 1)) {
            if (!qj_str_eq(d, k, "openai_responses"))
                return derr(c, k, "a block's providerOptions are read for \"openai_responses\" only");
            if (qj_type_of(d, k + 1) != QJ_OBJECT) return derr(c, k + 1, "expected object, got %s", qj_type_name(qj_type_of(d, k + 1)));
        }
        if (in_tool_result) return derr(c, f[BF_POPTS], "providerOptions belong on message blocks, not inside a toolResult's content");
        b->provider_options = qval_of(d, f[BF_POPTS]);
    }
    const char *tname = k_block_types[type];
    switch (b->type) {
    case QB_TEXT:
        if ((st = need(c, v, f[BF_TEXT], "text", "text block"))) return st;
        if ((st = get_str(c, f[BF_TEXT], "text", &b->text))) return st;
        if (f[BF_CITATIONS] != QJ_NONE) {
            if (in_tool_result) {
                ptr_key(c, "citations");
                return derr(c, f[BF_CITATIONS], "citations belong on message text, not inside a toolResult's content");
            }
            b->citations = qval_of(d, f[BF_CITATIONS]);
        }
        break;
    case QB_IMAGE:
    case QB_DOCUMENT:
    case QB_AUDIO:
    case QB_FILE:
        if ((st = decode_source(c, v, f, b, tname))) return st;
        if ((st = get_str(c, f[BF_TITLE], "title", &b->title))) return st;
        if (f[BF_DETAIL] != QJ_NONE) {
            if ((st = get_str(c, f[BF_DETAIL], "detail", &b->detail))) return st;
            if (!qstr_eq(b->detail, "auto") && !qstr_eq(b->detail, "low") && !qstr_eq(b->detail, "high") &&
                !qstr_eq(b->detail, "original")) {
                ptr_key(c, "detail");
                return derr(c, f[BF_DETAIL], "an image's detail is \"auto\", \"low\", \"high\" or \"original\"");
            }
        }
        break;
    case QB_SERVER_TOOL_CALL:
        if ((st = need(c, v, f[BF_PROVIDER], "provider", "serverToolCall block"))) return st;
        if ((st = need(c, v, f[BF_ID], "id", "serverToolCall block"))) return st;
        if ((st = need(c, v, f[BF_NAME], "name", "serverToolCall block"))) return st;
        if ((st = need(c, v, f[BF_INPUT], "input", "serverToolCall block"))) return st;
        if ((st = get_str(c, f[BF_PROVIDER], "provider", &b->provider))) return st;
        if ((st = get_str(c, f[BF_ID], "id", &b->id))) return st;
        if ((st = get_str(c, f[BF_NAME], "name", &b->name))) return st;
        b->input = qval_of(d, f[BF_INPUT]);
        break;
    case QB_SERVER_TOOL_RESULT:
        if ((st = need(c, v, f[BF_PROVIDER], "provider", "serverToolResult block"))) return st;
        if ((st = need(c, v, f[BF_TOOLCALLID], "toolCallId", "serverToolResult block"))) return st;
        if ((st = need(c, v, f[BF_CONTENT], "content", "serverToolResult block"))) return st;
        if ((st = get_str(c, f[BF_PROVIDER], "provider", &b->provider))) return st;
        if ((st = get_str(c, f[BF_TOOLCALLID], "toolCallId", &b->tool_call_id))) return st;
        if ((st = get_str(c, f[BF_NAME], "name", &b->name))) return st;
        b->result = qval_of(d, f[BF_CONTENT]);
        break;
    case QB_TOOL_CALL:
        if ((st = need(c, v, f[BF_ID], "id", "toolCall block"))) return st;
        if ((st = need(c, v, f[BF_NAME], "name", "toolCall block"))) return st;
        if ((st = need(c, v, f[BF_INPUT], "input", "toolCall block"))) return st;
        if ((st = get_str(c, f[BF_ID], "id", &b->id))) return st;
        if ((st = get_str(c, f[BF_NAME], "name", &b->name))) return st;
        b->input = qval_of(d, f[BF_INPUT]);
        if (f[BF_KIND] != QJ_NONE) {
            ptr_key(c, "kind");
            if ((st = expect_type(c, f[BF_KIND], QJ_STRING, "string"))) return st;
            if (!qj_str_eq(d, f[BF_KIND], "custom"))
                return derr(c, f[BF_KIND], "unknown toolCall kind (the only kind is \"custom\")");
            b->custom = true;
        }
        if (b->custom && qj_type_of(d, f[BF_INPUT]) != QJ_STRING) {
            ptr_key(c, "input");
            return derr(c, f[BF_INPUT], "a custom toolCall's input is a string, got %s",
                        qj_type_name(qj_type_of(d, f[BF_INPUT])));
        }
        break;
    case QB_TOOL_RESULT: {
        if ((st = need(c, v, f[BF_TOOLCALLID], "toolCallId", "toolResult block"))) return st;
        if ((st = get_str(c, f[BF_TOOLCALLID], "toolCallId", &b->tool_call_id))) return st;
        if (f[BF_ISERROR] != QJ_NONE) {
            ptr_key(c, "isError");
            if ((st = expect_type(c, f[BF_ISERROR], QJ_TRUE, "boolean"))) return st;
            b->is_error = qj_type_of(d, f[BF_ISERROR]) == QJ_TRUE;
        }
        uint32_t cv = f[BF_CONTENT];
        if (cv == QJ_NONE) { b->content_is_string = true; b->content_text = qstr_lit(""); break; }
        ptr_key(c, "content");
        qj_type ct = qj_type_of(d, cv);
        if (ct == QJ_STRING) {
            b->content_is_string = true;
            b->content_text = qstr_node(d, cv);
        } else if (ct == QJ_OBJECT) {
            b->content_is_string = true;
            b->content_json = qval_of(d, cv);
            if (!qtr_json_text(c->t, b->content_json, &b->content_text)) return q_oom(c->err);
        } else if (ct == QJ_ARRAY) {
            uint32_t n = qj_at(d, cv)->n;
            b->parts = qarena_calloc(&c->t->ar, n ? n : 1, sizeof(qblock));
            if (!b->parts) return q_oom(c->err);
            b->nparts = n;
            size_t s2 = ptr_enter(c);
            uint32_t e = cv + 1;
            for (uint32_t i = 0; i < n; i++) {
                ptr_idx(c, i);
                size_t s3 = ptr_enter(c);
                if ((st = decode_block(c, e, &b->parts[i], true))) return st;
                ptr_leave(c, s3);
                e = qj_next(d, e);
            }
            ptr_leave(c, s2);
        } else {
            return derr(c, cv, "expected string, object or array, got %s", qj_type_name(ct));
        }
        break;
    }
    case QB_THINKING:
        if ((st = need(c, v, f[BF_TEXT], "text", "thinking block"))) return st;
        if ((st = get_str(c, f[BF_TEXT], "text", &b->text))) return st;
        if ((st = get_str(c, f[BF_SIGNATURE], "signature", &b->signature))) return st;
        if ((st = get_str(c, f[BF_PROVIDER], "provider", &b->provider))) return st;
        break;
    case QB_REDACTED_THINKING:
        if ((st = need(c, v, f[BF_DATA], "data", "redactedThinking block"))) return st;
        if ((st = get_str(c, f[BF_DATA], "data", &b->data))) return st;
        if ((st = get_str(c, f[BF_PROVIDER], "provider", &b->provider))) return st;
        break;
    case QB_OPAQUE:
        if ((st = need(c, v, f[BF_PROVIDER], "provider", "opaque block"))) return st;
        if ((st = need(c, v, f[BF_ITEM], "item", "opaque block"))) return st;
        if ((st = get_str(c, f[BF_PROVIDER], "provider", &b->provider))) return st;
        b->item = qval_of(d, f[BF_ITEM]);
        break;
    }
    ptr_leave(c, saved);
    return QUIRE_OK;
}

/* Which blocks a role may hold; NULL when allowed, else why not. */
static const char *role_rule(qrole role, qblock_type bt) {
    switch (role) {
    case QR_TOOL:
        return bt == QB_TOOL_RESULT ? NULL : "a tool message holds only toolResult blocks";
    case QR_USER:
        return (bt == QB_TOOL_CALL || bt == QB_THINKING || bt == QB_REDACTED_THINKING ||
                bt == QB_SERVER_TOOL_CALL || bt == QB_SERVER_TOOL_RESULT)
                   ? "this block type belongs in an assistant message" : NULL;
    case QR_ASSISTANT:
        return bt == QB_TOOL_RESULT ? "toolResult blocks belong in a tool or user message" : NULL;
    case QR_SYSTEM:
    case QR_DEVELOPER:
        return bt == QB_TEXT ? NULL : "system and developer messages hold only text blocks";
    }
    return NULL;
}

enum { MF_ROLE, MF_CONTENT, MF_ID, MF_PINNED, MF_META, MF_COUNT };
#define MSG_FIELDS(X) X("role") X("content") X("id") X("pinned") X("meta")
static const char *const k_msg_fields[MF_COUNT] = {MSG_FIELDS(QN_STR)};
static const uint8_t k_msg_fields_len[MF_COUNT] = {MSG_FIELDS(QN_LEN)};

static quire_status decode_message(dctx *c, uint32_t v, uint32_t src_index) {
    const qj_doc *d = c->d;
    quire_status st = expect_type(c, v, QJ_OBJECT, "object (a message)");
    if (st) return st;
    size_t saved = ptr_enter(c);
    uint32_t f[MF_COUNT];
    uint64_t present;
    if ((st = scan_fields(c, v, k_msg_fields, k_msg_fields_len, MF_COUNT, f, &present, "message"))) return st;
    if ((st = need(c, v, f[MF_ROLE], "role", "message"))) return st;
    if ((st = need(c, v, f[MF_CONTENT], "content", "message"))) return st;
    ptr_key(c, "role");
    if ((st = expect_type(c, f[MF_ROLE], QJ_STRING, "string"))) return st;
    int role = qj_str_index_len(d, f[MF_ROLE], k_roles, k_roles_len, Q_COUNTOF(k_roles));
    if (role < 0) {
        char rb[64];
        const qj_node *rn = qj_at(d, f[MF_ROLE]);
        size_t rl = rn->len < sizeof rb - 1 ? rn->len : sizeof rb - 1;
        memcpy(rb, rn->p, rl);
        rb[rl] = '\0';
        return derr(c, f[MF_ROLE], "unknown role \"%s\" (expected user, assistant, tool, system or developer)", rb);
    }
    qstr id = {0};
    if ((st = get_str(c, f[MF_ID], "id", &id))) return st;
    bool pinned = false;
    if (f[MF_PINNED] != QJ_NONE) {
        ptr_key(c, "pinned");
        if ((st = expect_type(c, f[MF_PINNED], QJ_TRUE, "boolean"))) return st;
        pinned = qj_type_of(d, f[MF_PINNED]) == QJ_TRUE;
    }
    qval meta = {0};
    if (f[MF_META] != QJ_NONE) meta = qval_of(d, f[MF_META]);

    uint32_t cv = f[MF_CONTENT];
    ptr_key(c, "content");
    qj_type ct = qj_type_of(d, cv);
    qblock *blocks;
    uint32_t n;
    bool is_string = false;
    if (ct == QJ_STRING) {
        blocks = qarena_calloc(&c->t->ar, 1, sizeof(qblock));
        if (!blocks) return q_oom(c->err);
        blocks[0].type = QB_TEXT;
        blocks[0].is_error = -1;
        blocks[0].text = qstr_node(d, cv);
        n = 1;
        is_string = true;
    } else if (ct == QJ_ARRAY) {
        n = qj_at(d, cv)->n;
        blocks = qarena_calloc(&c->t->ar, n ? n : 1, sizeof(qblock));
        if (!blocks) return q_oom(c->err);
        size_t s2 = ptr_enter(c);
        uint32_t e = cv + 1;
        for (uint32_t i = 0; i < n; i++) {
            ptr_idx(c, i);
            size_t s3 = ptr_enter(c);
            if ((st = decode_block(c, e, &blocks[i], false))) return st;
            const char *bad = role_rule((qrole)role, blocks[i].type);
            if (bad) {
                ptr_key(c, "type");
                return derr(c, qj_get(d, e, "type"), "%s", bad);
            }
            ptr_leave(c, s3);
            e = qj_next(d, e);
        }
        ptr_leave(c, s2);
    } else {
        return derr(c, cv, "expected string or array, got %s", qj_type_name(ct));
    }
    if (is_string && role == QR_TOOL) return derr(c, cv, "%s", role_rule(QR_TOOL, QB_TEXT));

    uint32_t nresults = 0;
    for (uint32_t i = 0; i < n; i++)
        if (blocks[i].type == QB_TOOL_RESULT) nresults++;

    /* a user message carrying toolResult blocks is split: tool message first */
    if (role == QR_USER && nresults > 0) {
        qblock *res = qarena_calloc(&c->t->ar, nresults, sizeof(qblock));
        qblock *rest = qarena_calloc(&c->t->ar, n - nresults ? n - nresults : 1, sizeof(qblock));
        if (!res || !rest) return q_oom(c->err);
        uint32_t a = 0, r = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (blocks[i].type == QB_TOOL_RESULT) res[a++] = blocks[i];
            else rest[r++] = blocks[i];
        }
        qmsg *tm = qtr_push_msg(c->t);
        if (!tm) return q_oom(c->err);
        tm->role = QR_TOOL; tm->blocks = res; tm->nblocks = a; tm->src_index = src_index;
        tm->pinned = pinned; /* both halves of a pinned message are pinned */
        if (r == 0) {
            tm->id = id; tm->meta = meta;
            ptr_leave(c, saved);
            return QUIRE_OK;
        }
        blocks = rest; n = r;
    }
    qmsg *m = qtr_push_msg(c->t);
    if (!m) return q_oom(c->err);
    m->role = (qrole)role;
    m->content_is_string = is_string;
    m->pinned = pinned;
    m->id = id;
    m->meta = meta;
    m->blocks = blocks;
    m->nblocks = n;
    m->src_index = src_index;
    ptr_leave(c, saved);
    return QUIRE_OK;
}

static void dctx_init(dctx *c, quire_transcript *t, const qj_doc *d, const char *ptr, quire_error *err) {
    c->t = t; c->d = d; c->err = err;
    snprintf(c->ptr, sizeof c->ptr, "%s", ptr ? ptr : "");
    c->pre = strlen(c->ptr);
    c->plen = c->cur = 0;
}

quire_status qtr_decode_message(quire_transcript *t, const qj_doc *d, uint32_t msg, const char *ptr,
                                uint32_t src_index, quire_error *err) {
    dctx c;
    dctx_init(&c, t, d, ptr, err);
    return decode_message(&c, msg, src_index);
}

static quire_status decode_system(dctx *c, uint32_t v) {
    const qj_doc *d = c->d;
    quire_transcript *t = c->t;
    qj_type ty = qj_type_of(d, v);
    t->has_system = true;
    if (ty == QJ_STRING) {
        t->system = qarena_calloc(&t->ar, 1, sizeof(qblock));
        if (!t->system) return q_oom(c->err);
        t->system[0].type = QB_TEXT;
        t->system[0].is_error = -1;
        t->system[0].text = qstr_node(d, v);
        t->nsystem = 1;
        t->system_is_string = true;
        return QUIRE_OK;
    }
    if (ty != QJ_ARRAY) return derr(c, v, "expected string or array of text blocks, got %s", qj_type_name(ty));
    uint32_t n = qj_at(d, v)->n;
    t->system = qarena_calloc(&t->ar, n ? n : 1, sizeof(qblock));
    if (!t->system) return q_oom(c->err);
    t->nsystem = n;
    t->system_is_string = false;
    size_t saved = ptr_enter(c);
    uint32_t e = v + 1;
    for (uint32_t i = 0; i < n; i++) {
        ptr_idx(c, i);
        size_t s2 = ptr_enter(c);
        quire_status st = decode_block(c, e, &t->system[i], false);
        if (st) return st;
        if (t->system[i].type != QB_TEXT) {
            ptr_key(c, "type");
            return derr(c, e, "the system prompt holds only text blocks");
        }
        if (qval_present(t->system[i].citations)) {
            ptr_key(c, "citations");
            return derr(c, qj_get(d, e, "citations"), "citations belong on message text, not in the system prompt");
        }
        ptr_leave(c, s2);
        e = qj_next(d, e);
    }
    ptr_leave(c, saved);
    return QUIRE_OK;
}

quire_status qtr_decode_system(quire_transcript *t, const qj_doc *d, uint32_t v, const char *ptr,
                               quire_error *err) {
    dctx c;
    dctx_init(&c, t, d, ptr, err);
    return decode_system(&c, v);
}

enum { TF_NAME, TF_DESC, TF_SCHEMA, TF_CACHE, TF_KIND, TF_FORMAT, TF_PROVIDER, TF_ITEM, TF_COUNT };
#define TOOL_FIELDS(X)                                                                                      \
    X("name") X("description") X("inputSchema") X("cacheControl") X("kind") X("format") X("provider") X("item")
static const char *const k_tool_fields[TF_COUNT] = {TOOL_FIELDS(QN_STR)};
static const uint8_t k_tool_fields_len[TF_COUNT] = {TOOL_FIELDS(QN_LEN)};
/* Fields each tool kind takes (beyond cacheControl and kind). */
static const uint32_t k_tool_allowed[] = {
    [QTK_FUNCTION] = B(TF_NAME) | B(TF_DESC) | B(TF_SCHEMA) | B(TF_CACHE) | B(TF_KIND),
    [QTK_CUSTOM] = B(TF_NAME) | B(TF_DESC) | B(TF_FORMAT) | B(TF_CACHE) | B(TF_KIND),
    [QTK_PROVIDER] = B(TF_PROVIDER) | B(TF_ITEM) | B(TF_CACHE) | B(TF_KIND),
};
#define TOOL_KINDS(X) X("function") X("custom") X("provider")
static const char *const k_tool_kinds[] = {TOOL_KINDS(QN_STR)};
static const uint8_t k_tool_kinds_len[] = {TOOL_KINDS(QN_LEN)};

static quire_status decode_tools(dctx *c, uint32_t v) {
    const qj_doc *d = c->d;
    quire_transcript *t = c->t;
    quire_status st = expect_type(c, v, QJ_ARRAY, "array of tools");
    if (st) return st;
    uint32_t n = qj_at(d, v)->n;
    t->has_tools = true;
    t->tools = qarena_calloc(&t->ar, n ? n : 1, sizeof(qtool));
    if (!t->tools) return q_oom(c->err);
    t->ntools = n;
    size_t saved = ptr_enter(c);
    uint32_t e = v + 1;
    for (uint32_t i = 0; i < n; i++) {
        ptr_idx(c, i);
        size_t s2 = ptr_enter(c);
        if ((st = expect_type(c, e, QJ_OBJECT, "object (a tool)"))) return st;
        uint32_t f[TF_COUNT];
        uint64_t present;
        if ((st = scan_fields(c, e, k_tool_fields, k_tool_fields_len, TF_COUNT, f, &present, "tool"))) return st;
        qtool *tl = &t->tools[i];
        if (f[TF_KIND] != QJ_NONE) {
            ptr_key(c, "kind");
            if ((st = expect_type(c, f[TF_KIND], QJ_STRING, "string"))) return st;
            int kind = qj_str_index_len(d, f[TF_KIND], k_tool_kinds, k_tool_kinds_len, Q_COUNTOF(k_tool_kinds));
            if (kind < 0) return derr(c, f[TF_KIND], "unknown tool kind (expected function, custom or provider)");
            tl->kind = (qtool_kind)kind;
            tl->kind_given = true;
        }
        for (int k = 0; k < TF_COUNT; k++) {
            if (f[k] != QJ_NONE && !(k_tool_allowed[tl->kind] & B(k))) {
                ptr_key(c, k_tool_fields[k]);
                return derr(c, f[k] - 1, "unknown field \"%s\" in %s tool", k_tool_fields[k], k_tool_kinds[tl->kind]);
            }
        }
        ptr_reset(c);
        if (tl->kind == QTK_PROVIDER) {
            if ((st = need(c, e, f[TF_PROVIDER], "provider", "provider tool"))) return st;
            if ((st = need(c, e, f[TF_ITEM], "item", "provider tool"))) return st;
            if ((st = get_str(c, f[TF_PROVIDER], "provider", &tl->provider))) return st;
            ptr_key(c, "item");
            if ((st = expect_type(c, f[TF_ITEM], QJ_OBJECT, "object (the provider's tool item)"))) return st;
            tl->item = qval_of(d, f[TF_ITEM]);
            uint32_t nm = qj_get(d, f[TF_ITEM], "name");
            if (nm != QJ_NONE && qj_type_of(d, nm) == QJ_STRING) tl->name = qstr_node(d, nm);
        } else {
            if ((st = need(c, e, f[TF_NAME], "name", "tool"))) return st;
            if ((st = get_str(c, f[TF_NAME], "name", &tl->name))) return st;
            if ((st = get_str(c, f[TF_DESC], "description", &tl->description))) return st;
        }
        if (tl->kind == QTK_FUNCTION) {
            if ((st = need(c, e, f[TF_SCHEMA], "inputSchema", "tool"))) return st;
            ptr_key(c, "inputSchema");
            if ((st = expect_type(c, f[TF_SCHEMA], QJ_OBJECT, "object (a JSON Schema)"))) return st;
            /* the providers take only object parameters (the Messages API,
             * Converse and OpenAI refuse any other top-level type; MCP
             * requires it of a tool's inputSchema) */
            uint32_t sty = qj_get(d, f[TF_SCHEMA], "type");
            if (sty == QJ_NONE)
                return derr(c, f[TF_SCHEMA], "a tool's inputSchema needs \"type\": \"object\" (the providers take only "
                            "object parameters)");
            if (qj_type_of(d, sty) != QJ_STRING || !qj_str_eq(d, sty, "object")) {
                size_t s2b = ptr_enter(c);
                ptr_key(c, "type");
                quire_status es = derr(c, sty, "a tool's inputSchema is of type \"object\" (the providers take only "
                                        "object parameters)");
                ptr_leave(c, s2b);
                return es;
            }
            tl->input_schema = qval_of(d, f[TF_SCHEMA]);
        }
        if (tl->kind == QTK_CUSTOM && f[TF_FORMAT] != QJ_NONE) {
            ptr_key(c, "format");
            if ((st = expect_type(c, f[TF_FORMAT], QJ_OBJECT, "object (a text or grammar format)"))) return st;
            tl->format = qval_of(d, f[TF_FORMAT]);
        }
        if (f[TF_CACHE] != QJ_NONE) {
            ptr_key(c, "cacheControl");
            if ((st = cache_control_check(c, f[TF_CACHE]))) return st;
            tl->cache_control = qval_of(d, f[TF_CACHE]);
        }
        ptr_leave(c, s2);
        e = qj_next(d, e);
    }
    ptr_leave(c, saved);
    return QUIRE_OK;
}

quire_status qtr_decode_tools(quire_transcript *t, const qj_doc *d, uint32_t v, const char *ptr,
                              quire_error *err) {
    dctx c;
    dctx_init(&c, t, d, ptr, err);
    return decode_tools(&c, v);
}

enum { XF_SYSTEM, XF_TOOLS, XF_MESSAGES, XF_COUNT };
#define TR_FIELDS(X) X("system") X("tools") X("messages")
static const char *const k_tr_fields[XF_COUNT] = {TR_FIELDS(QN_STR)};
static const uint8_t k_tr_fields_len[XF_COUNT] = {TR_FIELDS(QN_LEN)};

quire_status qtr_decode(quire_transcript *t, const qj_doc *d, uint32_t root, quire_error *err) {
    dctx c;
    dctx_init(&c, t, d, "", err);
    quire_status st = expect_type(&c, root, QJ_OBJECT, "object (a quire.transcript/1 transcript)");
    if (st) return st;
    uint32_t f[XF_COUNT];
    uint64_t present;
    if ((st = scan_fields(&c, root, k_tr_fields, k_tr_fields_len, XF_COUNT, f, &present, "transcript"))) return st;
    if ((st = need(&c, root, f[XF_MESSAGES], "messages", "transcript"))) return st;
    if (f[XF_SYSTEM] != QJ_NONE) {
        ptr_key(&c, "system");
        size_t s = ptr_enter(&c);
        if ((st = decode_system(&c, f[XF_SYSTEM]))) return st;
        ptr_leave(&c, s);
    }
    if (f[XF_TOOLS] != QJ_NONE) {
        ptr_key(&c, "tools");
        size_t s = ptr_enter(&c);
        if ((st = decode_tools(&c, f[XF_TOOLS]))) return st;
        ptr_leave(&c, s);
    }
    uint32_t mv = f[XF_MESSAGES];
    ptr_key(&c, "messages");
    if ((st = expect_type(&c, mv, QJ_ARRAY, "array of messages"))) return st;
    uint32_t n = qj_at(d, mv)->n;
    if (n > c.t->capmsgs - c.t->nmsgs) {
        /* room for one message per element at once (a user message split
         * in two grows it as usual), not a chain of reallocations */
        uint32_t ncap = c.t->nmsgs + n;
        qmsg *nm = q_realloc(c.t->a, c.t->msgs, (size_t)c.t->capmsgs * sizeof(qmsg), (size_t)ncap * sizeof(qmsg));
        if (!nm) return q_oom(err);
        c.t->msgs = nm;
        c.t->capmsgs = ncap;
    }
    size_t s = ptr_enter(&c);
    uint32_t e = mv + 1;
    for (uint32_t i = 0; i < n; i++) {
        ptr_idx(&c, i);
        if ((st = decode_message(&c, e, i))) return st;
        e = qj_next(d, e);
    }
    ptr_leave(&c, s);
    return QUIRE_OK;
}

quire_status quire_transcript_parse(const char *json, size_t len, const quire_options *opts,
                                    quire_transcript **out, quire_error *err) {
    *out = NULL;
    quire_transcript *t = qtr_new(q_alloc_of(opts));
    if (!t) return q_oom(err);
    bool borrow = opts && (opts->flags & QUIRE_PARSE_BORROW);
    qj_doc *d = qtr_parse_doc(t, json, len, borrow, opts, err);
    quire_status st = d ? qtr_decode(t, d, 0, err) : (err ? err->code : QUIRE_E_JSON);
    if (st == QUIRE_OK) {
        quire_limits l = q_limits(opts);
        if (t->nmsgs > l.max_messages)
            st = q_err_at(err, QUIRE_E_LIMIT, 0, "/messages", "%u messages exceed the limit of %u", t->nmsgs,
                          l.max_messages);
    }
    if (st) { quire_transcript_free(t); return st; }
    *out = t;
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                  */
/* ------------------------------------------------------------------------ */

void qtr_write_block(const qblock *b, qw *w) {
    qw_obj_begin(w);
    qw_key(w, "type");
    qw_strz(w, k_block_types[b->type]);
    switch (b->type) {
    case QB_TEXT:
        qw_key(w, "text"); qw_qstr(w, b->text);
        if (qval_present(b->citations)) { qw_key(w, "citations"); qw_qval(w, b->citations); }
        break;
    case QB_IMAGE:
    case QB_DOCUMENT:
    case QB_AUDIO:
    case QB_FILE: {
        qstr mt = b->media_resolved ? b->media_given : b->media_type;
        if (qstr_present(mt)) { qw_key(w, "mediaType"); qw_qstr(w, mt); }
        if (qstr_present(b->data)) { qw_key(w, "data"); qw_qstr(w, b->data); }
        if (qstr_present(b->url)) { qw_key(w, "url"); qw_qstr(w, b->url); }
        if (qstr_present(b->file_id)) { qw_key(w, "fileId"); qw_qstr(w, b->file_id); }
        if (qstr_present(b->provider)) { qw_key(w, "provider"); qw_qstr(w, b->provider); }
        if (qstr_present(b->title)) { qw_key(w, "title"); qw_qstr(w, b->title); }
        if (qstr_present(b->filename)) { qw_key(w, "filename"); qw_qstr(w, b->filename); }
        if (qstr_present(b->detail)) { qw_key(w, "detail"); qw_qstr(w, b->detail); }
        break;
    }
    case QB_SERVER_TOOL_CALL:
        qw_key(w, "provider"); qw_qstr(w, b->provider);
        qw_key(w, "id"); qw_qstr(w, b->id);
        qw_key(w, "name"); qw_qstr(w, b->name);
        qw_key(w, "input"); qw_qval(w, b->input);
        break;
    case QB_SERVER_TOOL_RESULT:
        qw_key(w, "provider"); qw_qstr(w, b->provider);
        qw_key(w, "toolCallId"); qw_qstr(w, b->tool_call_id);
        if (qstr_present(b->name)) { qw_key(w, "name"); qw_qstr(w, b->name); }
        qw_key(w, "content"); qw_qval(w, b->result);
        break;
    case QB_TOOL_CALL:
        if (b->custom) { qw_key(w, "kind"); qw_strz(w, "custom"); }
        qw_key(w, "id"); qw_qstr(w, b->id);
        qw_key(w, "name"); qw_qstr(w, b->name);
        qw_key(w, "input"); qw_qval(w, b->input);
        break;
    case QB_TOOL_RESULT:
        qw_key(w, "toolCallId"); qw_qstr(w, b->tool_call_id);
        qw_key(w, "content");
        if (qval_present(b->content_json)) qw_qval(w, b->content_json);
        else if (b->content_is_string) qw_qstr(w, b->content_text);
        else {
            qw_arr_begin(w);
            for (uint32_t i = 0; i < b->nparts; i++) qtr_write_block(&b->parts[i], w);
            qw_arr_end(w);
        }
        if (b->is_error >= 0) { qw_key(w, "isError"); qw_bool(w, b->is_error == 1); }
        break;
    case QB_THINKING:
        qw_key(w, "text"); qw_qstr(w, b->text);
        if (qstr_present(b->signature)) { qw_key(w, "signature"); qw_qstr(w, b->signature); }
        if (qstr_present(b->provider)) { qw_key(w, "provider"); qw_qstr(w, b->provider); }
        break;
    case QB_REDACTED_THINKING:
        qw_key(w, "data"); qw_qstr(w, b->data);
        if (qstr_present(b->provider)) { qw_key(w, "provider"); qw_qstr(w, b->provider); }
        break;
    case QB_OPAQUE:
        qw_key(w, "provider"); qw_qstr(w, b->provider);
        qw_key(w, "item"); qw_qval(w, b->item);
        break;
    }
    if (qval_present(b->provider_options)) { qw_key(w, "providerOptions"); qw_qval(w, b->provider_options); }
    if (qval_present(b->cache_control)) { qw_key(w, "cacheControl"); qw_qval(w, b->cache_control); }
    qw_obj_end(w);
}

void qtr_write_message(const qmsg *m, qw *w) {
    qw_obj_begin(w);
    qw_key(w, "role");
    qw_strz(w, k_roles[m->role]);
    qw_key(w, "content");
    if (m->content_is_string && m->nblocks == 1 && m->blocks[0].type == QB_TEXT &&
        !qval_present(m->blocks[0].cache_control)) {
        qw_qstr(w, m->blocks[0].text);
    } else {
        qw_arr_begin(w);
        for (uint32_t i = 0; i < m->nblocks; i++) qtr_write_block(&m->blocks[i], w);
        qw_arr_end(w);
    }
    if (qstr_present(m->id)) { qw_key(w, "id"); qw_qstr(w, m->id); }
    if (m->pinned) { qw_key(w, "pinned"); qw_bool(w, true); }
    if (qval_present(m->meta)) { qw_key(w, "meta"); qw_qval(w, m->meta); }
    qw_obj_end(w);
}

void qtr_write(const quire_transcript *t, qw *w) {
    qw_obj_begin(w);
    if (t->has_system) {
        qw_key(w, "system");
        if (t->system_is_string && t->nsystem == 1 && !qval_present(t->system[0].cache_control)) {
            qw_qstr(w, t->system[0].text);
        } else {
            qw_arr_begin(w);
            for (uint32_t i = 0; i < t->nsystem; i++) qtr_write_block(&t->system[i], w);
            qw_arr_end(w);
        }
    }
    if (t->has_tools) {
        qw_key(w, "tools");
        qw_arr_begin(w);
        for (uint32_t i = 0; i < t->ntools; i++) {
            const qtool *tl = &t->tools[i];
            qw_obj_begin(w);
            if (tl->kind_given) { qw_key(w, "kind"); qw_strz(w, k_tool_kinds[tl->kind]); }
            if (tl->kind == QTK_PROVIDER) {
                qw_key(w, "provider"); qw_qstr(w, tl->provider);
                qw_key(w, "item"); qw_qval(w, tl->item);
            } else {
                qw_key(w, "name"); qw_qstr(w, tl->name);
                if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
            }
            if (tl->kind == QTK_FUNCTION) { qw_key(w, "inputSchema"); qw_qval(w, tl->input_schema); }
            if (qval_present(tl->format)) { qw_key(w, "format"); qw_qval(w, tl->format); }
            if (qval_present(tl->cache_control)) { qw_key(w, "cacheControl"); qw_qval(w, tl->cache_control); }
            qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    qw_key(w, "messages");
    qw_arr_begin(w);
    for (uint32_t i = 0; i < t->nmsgs; i++) qtr_write_message(&t->msgs[i], w);
    qw_arr_end(w);
    qw_obj_end(w);
}

quire_status quire_transcript_write(const quire_transcript *t, int pretty, quire_bytes *out, quire_error *err) {
    qbuf b;
    qbuf_init(&b, t->a);
    qw w;
    qw_init(&w, &b, pretty != 0);
    qtr_write(t, &w);
    qw_dispose(&w);
    if (b.oom || !qbuf_take(&b, out)) { qbuf_free(&b); return q_oom(err); }
    return QUIRE_OK;
}

/* One escaped and one not: compared decoded (a frame of 1 KiB, kept out of
 * the usual path). */
static bool ids_eq_mixed(qstr a, qstr b) {
    char ta[512], tb[512];
    if (a.len >= sizeof ta || b.len >= sizeof tb) return false;
    size_t na = a.esc ? qj_unescape(a.p, a.len, ta) : a.len, nb = b.esc ? qj_unescape(b.p, b.len, tb) : b.len;
    return na == nb && memcmp(a.esc ? ta : a.p, b.esc ? tb : b.p, na) == 0;
}
bool qtr_ids_eq(qstr a, qstr b) {
    if (Q_LIKELY(a.esc == b.esc)) return a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
    return ids_eq_mixed(a, b);
}

uint64_t qtr_id_hash(qstr s) {
    /* hash of the decoded bytes (escapes decoded on the fly for the common ASCII case) */
    char tmp[512];
    const char *p = s.p;
    size_t n = s.len;
    if (s.esc && s.len < sizeof tmp) { n = qj_unescape(s.p, s.len, tmp); p = tmp; }
    /* eight bytes a step (the last step overlapping the one before), not
     * one multiply per byte: ids are usually 9 to 40 bytes */
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n, w;
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 < n; i += 8) {
            memcpy(&w, p + i, 8);
            h = (h ^ w) * 0xFF51AFD7ED558CCDull;
            h ^= h >> 32;
        }
        memcpy(&w, p + n - 8, 8);
    } else {
        w = 0;
        for (size_t i = 0; i < n; i++) w |= (uint64_t)(uint8_t)p[i] << (8 * i);
    }
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 29;
    h *= 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 32);
}

/* msg = `<what> "<id>"<tail>` */
static quire_status pair_err(const quire_transcript *t, qarena *scratch, quire_error *err, uint32_t mi, uint32_t bi,
                             const char *field, const char *what, qstr id, const char *tail) {
    char ptr[128];
    snprintf(ptr, sizeof ptr, "/messages/%u/content/%u%s", t->msgs[mi].src_index, bi, field);
    size_t n = 0;
    const char *plain = qstr_plain_bytes(id, scratch, &n);
    char idb[80];
    q_quote_text(idb, sizeof idb, plain ? plain : "", plain ? n : 0);
    return q_err_at(err, QUIRE_E_SCHEMA, SIZE_MAX, ptr, "%s \"%s\"%s", what, idb, tail);
}

quire_status qtr_check(const quire_transcript *t, bool global, bool open_calls, qarena *scratch, quire_error *err) {
    return qtr_check_from(t, 0, global, open_calls, NULL, NULL, scratch, err);
}

quire_status qtr_check_from(const quire_transcript *t, uint32_t from, bool global, bool open_calls, qtr_seen_fn checked,
                            const void *ud, qarena *scratch, quire_error *err) {
    /* function and custom tool names: unique (every provider refuses a list
     * that names one tool twice, and a call could not say which it means) */
    if (from == 0 && t->has_tools && t->ntools > 1) {
        uint32_t cap = 16;
        while (cap < t->ntools * 2) cap *= 2;
        uint32_t *slots = qarena_calloc(scratch, cap, sizeof *slots); /* tool index + 1 */
        if (!slots) return q_oom(err);
        for (uint32_t i = 0; i < t->ntools; i++) {
            const qtool *tl = &t->tools[i];
            if (tl->kind == QTK_PROVIDER || !tl->name.len) continue;
            uint32_t h = (uint32_t)qtr_id_hash(tl->name) & (cap - 1);
            while (slots[h]) {
                if (qtr_ids_eq(t->tools[slots[h] - 1].name, tl->name)) {
                    char ptr[48], nb[80];
                    snprintf(ptr, sizeof ptr, "/tools/%u/name", i);
                    size_t n = 0;
                    const char *plain = qstr_plain_bytes(tl->name, scratch, &n);
                    q_quote_text(nb, sizeof nb, plain ? plain : "", plain ? n : 0);
                    return q_err_at(err, QUIRE_E_SCHEMA, SIZE_MAX, ptr,
                                    "tool name \"%s\" is used twice (/tools/%u has it): the providers take each name once", nb,
                                    slots[h] - 1);
                }
                h = (h + 1) & (cap - 1);
            }
            slots[h] = i + 1;
        }
    }
    /* all toolCall ids: unique (open addressing over hashes) */
    uint32_t ncalls = 0;
    for (uint32_t k = from; k < t->nmsgs; k++) {
        if (t->msgs[k].nblocks == 0) { /* no dialect accepts an empty message, the last one included */
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/messages/%u/content", t->msgs[k].src_index);
            return q_err_at(err, QUIRE_E_SCHEMA, SIZE_MAX, ptr, "a message needs at least one content block");
        }
        if (t->msgs[k].role == QR_ASSISTANT)
            for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) ncalls += t->msgs[k].blocks[b].type == QB_TOOL_CALL;
    }
    if (ncalls) {
        uint32_t cap = 16;
        while (cap < ncalls * 2) cap *= 2;
        const qblock **slots = qarena_calloc(scratch, cap, sizeof *slots);
        uint32_t *slot_msg = qarena_calloc(scratch, cap, sizeof *slot_msg);
        if (!slots || !slot_msg) return q_oom(err);
        for (uint32_t k = from; k < t->nmsgs; k++) {
            if (t->msgs[k].role != QR_ASSISTANT) continue;
            for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) {
                const qblock *bl = &t->msgs[k].blocks[b];
                if (bl->type != QB_TOOL_CALL) continue;
                if (global && checked && checked(ud, bl->id))
                    return pair_err(t, scratch, err, k, b, "/id", "toolCall id", bl->id,
                                    " is used twice (ids must be unique in the request)");
                uint32_t h = (uint32_t)qtr_id_hash(bl->id) & (cap - 1);
                while (slots[h]) {
                    if (qtr_ids_eq(slots[h]->id, bl->id) && (global || slot_msg[h] == k))
                        return pair_err(t, scratch, err, k, b, "/id", "toolCall id", bl->id,
                                        slot_msg[h] == k ? " is used twice in one assistant message"
                                                         : " is used twice (ids must be unique in the request)");
                    h = (h + 1) & (cap - 1);
                }
                slots[h] = bl;
                slot_msg[h] = k;
            }
        }
    }
    /* pairing, turn by turn */
    for (uint32_t k = from; k < t->nmsgs; k++) {
        const qmsg *m = &t->msgs[k];
        if (m->role == QR_TOOL) {
            /* results not preceded by an assistant turn with calls */
            uint32_t p = k;
            while (p > 0 && t->msgs[p - 1].role == QR_TOOL) p--;
            bool has_calls = p > 0 && t->msgs[p - 1].role == QR_ASSISTANT;
            if (!has_calls)
                return pair_err(t, scratch, err, k, 0, "/toolCallId", "toolResult", m->blocks[0].tool_call_id,
                                " answers no toolCall: no assistant message precedes it");
            continue;
        }
        if (m->role != QR_ASSISTANT) continue;
        uint32_t e = k + 1;
        while (e < t->nmsgs && t->msgs[e].role == QR_TOOL) e++;
        /* each call answered exactly once by the results in [k+1, e) */

        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *call = &m->blocks[b];
            if (call->type != QB_TOOL_CALL) continue;
            uint32_t seen = 0;
            for (uint32_t q = k + 1; q < e; q++)
                for (uint32_t r = 0; r < t->msgs[q].nblocks; r++)
                    if (qtr_ids_eq(t->msgs[q].blocks[r].tool_call_id, call->id)) {
                        if (++seen == 2)
                            return pair_err(t, scratch, err, q, r, "/toolCallId", "toolCall", call->id, " has two toolResults");
                    }
            if (seen == 0 && open_calls) continue; /* compaction: a call may still be unanswered */
            if (seen == 0) {
                const char *why = e == t->nmsgs ? " has no toolResult: a request cannot end with an unanswered call"
                                  : t->msgs[e].role == QR_ASSISTANT
                                      ? " is separated from its result: another assistant message follows it"
                                      : " has no toolResult before the next message";
                return pair_err(t, scratch, err, k, b, "/id", "toolCall", call->id, why);
            }
        }
        for (uint32_t q = k + 1; q < e; q++)
            for (uint32_t r = 0; r < t->msgs[q].nblocks; r++) {
                bool found = false;
                for (uint32_t b = 0; b < m->nblocks && !found; b++)
                    found = m->blocks[b].type == QB_TOOL_CALL && qtr_ids_eq(m->blocks[b].id, t->msgs[q].blocks[r].tool_call_id);
                if (!found)
                    return pair_err(t, scratch, err, q, r, "/toolCallId", "toolResult", t->msgs[q].blocks[r].tool_call_id,
                                    " answers no toolCall of the assistant message before it");
            }
    }
    return QUIRE_OK;
}

bool qtr_copy_msg(quire_transcript *t, const qmsg *src) {
    qmsg *m = qtr_push_msg(t);
    if (!m) return false;
    *m = *src;
    if (src->nblocks) {
        m->blocks = qarena_alloc(&t->ar, (size_t)src->nblocks * sizeof(qblock));
        if (!m->blocks) { t->nmsgs--; return false; }
        memcpy(m->blocks, src->blocks, (size_t)src->nblocks * sizeof(qblock));
    }
    return true;
}
