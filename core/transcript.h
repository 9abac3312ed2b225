/* The transcript model (quire.transcript/1, DESIGN 2.1).
 *
 * A decoded transcript is a light index over parsed JSON documents: strings are
 * qstr slices (still JSON-escaped when they come from input, so rendering can
 * copy them without decoding), free-form values (tool inputs, meta, opaque
 * items) are qval references to parsed subtrees, written back byte-exact.
 * Modules that build or rewrite transcripts (compaction, importers, ingest)
 * allocate new strings in the transcript's arena with esc = 0.
 */
#ifndef QUIRE_CORE_TRANSCRIPT_H
#define QUIRE_CORE_TRANSCRIPT_H

#include "core/json.h"

/* A string: JSON-escaped content from input (esc = 1) or plain UTF-8 (esc = 0).
 * Absent when p == NULL. */
typedef struct qstr {
    const char *p;
    uint32_t len;
    uint8_t esc;
    uint8_t raw; /* esc = 0 and the bytes are JSON string content as read: they
                    need no escaping (no quote, backslash or control byte) */
} qstr;

static inline bool qstr_present(qstr s) { return s.p != NULL; }
static inline qstr qstr_plain(const char *p, size_t n) { qstr s = {p, (uint32_t)n, 0, 0}; return s; }
static inline qstr qstr_lit(const char *z) { qstr s = {z, (uint32_t)strlen(z), 0, 0}; return s; }
/* The string node of a doc as a qstr (escaped form). */
static inline qstr qstr_node(const qj_doc *d, uint32_t i) {
    uint8_t esc = (uint8_t)((d->nodes[i].flags & QJ_F_ESC) ? 1 : 0);
    qstr s = {d->nodes[i].p, d->nodes[i].len, esc, (uint8_t)!esc};
    return s;
}
/* Plain UTF-8 bytes of s (decoded into ar when escaped). NULL on OOM. */
const char *qstr_plain_bytes(qstr s, qarena *ar, size_t *len);
bool qstr_eq(qstr s, const char *z);
void qw_qstr(qw *w, qstr s);
/* qw_key(w, k) then qw_qstr(w, s); a string copied as it is goes with its
 * key in one reservation. */
QW_INLINE void qw_key_qstr(qw *w, const char *k, qstr s) {
    if (s.esc || s.raw) {
        qw_key_str_esc(w, k, strlen(k), s.p, s.len);
        return;
    }
    qw_key(w, k);
    qw_qstr(w, s);
}
/* Appends the plain (decoded) bytes of s to b. */
void qbuf_put_qstr(qbuf *b, qstr s);

/* A reference to a parsed JSON value. Absent when doc == NULL. */
typedef struct qval {
    const qj_doc *doc;
    uint32_t idx;
} qval;
static inline bool qval_present(qval v) { return v.doc != NULL; }
static inline qval qval_of(const qj_doc *d, uint32_t i) { qval v = {d, i}; return v; }
static inline void qw_qval(qw *w, qval v) { qw_node(w, v.doc, v.idx); }

typedef enum qrole { QR_USER, QR_ASSISTANT, QR_TOOL, QR_SYSTEM, QR_DEVELOPER } qrole;
const char *qrole_name(qrole r);

typedef enum qblock_type {
    QB_TEXT, QB_IMAGE, QB_DOCUMENT, QB_TOOL_CALL, QB_TOOL_RESULT, QB_THINKING,
    QB_REDACTED_THINKING, QB_OPAQUE, QB_AUDIO, QB_FILE, QB_SERVER_TOOL_CALL, QB_SERVER_TOOL_RESULT
} qblock_type;
/* image, document, audio, file: blocks that carry media. */
static inline bool qblock_is_media(qblock_type t) {
    return t == QB_IMAGE || t == QB_DOCUMENT || t == QB_AUDIO || t == QB_FILE;
}
const char *qblock_type_name(qblock_type t);

typedef struct qblock {
    qblock_type type;
    int8_t is_error;          /* toolResult: -1 absent, 0 false, 1 true */
    bool content_is_string;   /* toolResult: content given as a string */
    bool custom;              /* toolCall kind "custom": input is a string, carried byte-exact */
    qstr text;                /* text; thinking */
    qstr signature;           /* thinking (optional) */
    qstr media_type;          /* image, document */
    qstr data;                /* image, document (base64); redactedThinking */
    qstr url;                 /* image, document */
    qstr title;               /* document (optional) */
    qstr id, name;            /* toolCall */
    qval input;               /* toolCall input, byte-exact */
    qstr tool_call_id;        /* toolResult */
    qstr content_text;        /* toolResult string content */
    qval content_json;        /* toolResult content given as a JSON object (byte-exact); content_is_string
                                 is then set and content_text holds the object's compact JSON text, which
                                 is what dialects whose results are text send */
    qstr detail;              /* image: the OpenAI detail level ("auto", "low", "high", "original"; optional) */
    qval provider_options;    /* text, toolCall: {"openai_responses": {fields}} written into that dialect's
                                 item (message phase, function_call namespace); byte-exact */
    struct qblock *parts;     /* toolResult array content: text | image blocks */
    uint32_t nparts;
    qstr provider;            /* opaque; media with fileId; serverToolCall/Result; thinking,
                                 redactedThinking: who signed it (optional) */
    qval item;                /* opaque */
    qstr file_id;             /* media: a file id owned by provider */
    qstr filename;            /* document, file (optional) */
    qstr media_given;         /* media: mediaType as written when media_type was resolved */
    bool media_resolved;      /* media: media_type resolved from the data's magic bytes */
    qval citations;           /* text (optional), byte-exact */
    qval result;              /* serverToolResult content, byte-exact */
    qval cache_control;       /* extension: a provider cache marker to honour */
} qblock;

typedef struct qmsg {
    qrole role;
    bool content_is_string;   /* content was a string: written back as one */
    bool pinned;
    qstr id;                  /* optional */
    qval meta;                /* optional, carried, never rendered */
    qblock *blocks;
    uint32_t nblocks;
    uint32_t src_index;       /* index in the input's messages array */
} qmsg;

typedef enum qtool_kind { QTK_FUNCTION, QTK_CUSTOM, QTK_PROVIDER } qtool_kind;

typedef struct qtool {
    qstr name, description;
    qval input_schema;        /* function tools */
    qval cache_control;
    qtool_kind kind;          /* absent in the input: function */
    bool kind_given;          /* "kind" was written (kept on write-back) */
    qval format;              /* custom tools (optional), byte-exact */
    qstr provider;            /* provider tools */
    qval item;                /* provider tools: the provider's tool item, byte-exact */
} qtool;

/* The media type a base64 payload starts with (PNG, JPEG, GIF, WebP, PDF, WAV,
 * MP3), or NULL. */
const char *qtr_sniff_media(qstr data);

struct quire_transcript {
    qarena ar;
    const quire_allocator *a;
    bool has_system, system_is_string;
    qblock *system;           /* text blocks */
    uint32_t nsystem;
    bool has_tools;
    qtool *tools;
    uint32_t ntools;
    qmsg *msgs;
    uint32_t nmsgs, capmsgs;
    qj_doc **docs;            /* parsed documents this transcript references */
    uint32_t ndocs, capdocs;
    char *owned;              /* copies of input bytes */
};

/* An empty transcript (no system, no tools, no messages). NULL on OOM. */
quire_transcript *qtr_new(const quire_allocator *a);
/* Parses bytes owned by t (copied into t's arena unless borrow) into a new doc
 * that t keeps alive. Returns NULL and fills err on failure. */
qj_doc *qtr_parse_doc(quire_transcript *t, const char *json, size_t len, bool borrow,
                      const quire_options *opts, quire_error *err);
/* The compact JSON text of v, allocated in t's arena (plain). False on OOM. */
bool qtr_json_text(quire_transcript *t, qval v, qstr *out);
/* Appends a message slot (zeroed). NULL on OOM. */
qmsg *qtr_push_msg(quire_transcript *t);
/* Decodes a whole transcript object at doc node root into t. */
quire_status qtr_decode(quire_transcript *t, const qj_doc *d, uint32_t root, quire_error *err);
/* Decodes one message object and appends it to t (toolResult blocks inside a
 * user message are split out into a preceding tool message). ptr is the JSON
 * Pointer prefix of the message for errors (e.g. "/messages/3" or "/message"). */
quire_status qtr_decode_message(quire_transcript *t, const qj_doc *d, uint32_t msg, const char *ptr,
                                uint32_t src_index, quire_error *err);
/* Decodes a `system` value (string or array of text blocks). */
quire_status qtr_decode_system(quire_transcript *t, const qj_doc *d, uint32_t v, const char *ptr,
                               quire_error *err);
/* Decodes a `tools` array. */
quire_status qtr_decode_tools(quire_transcript *t, const qj_doc *d, uint32_t v, const char *ptr,
                              quire_error *err);
/* Writes the transcript as quire.transcript/1. */
void qtr_write(const quire_transcript *t, qw *w);
void qtr_write_message(const qmsg *m, qw *w);
void qtr_write_block(const qblock *b, qw *w);

/* The structural checks every request needs (docs/providers.md, "Transcript
 * checks"), shared by render and compact: every message has a block; toolCall
 * ids unique within an assistant message (request-wide when global); every
 * toolResult answers a call of the assistant message right before its tool
 * messages, once; every call is answered before the next message (unless
 * open_calls: compaction accepts transcripts whose calls are not answered
 * yet, never a result that answers no call). */
quire_status qtr_check(const quire_transcript *t, bool global, bool open_calls, qarena *scratch, quire_error *err);
/* The same checks for the messages from `from` on, when the ones before were
 * checked already (render's incremental check in a session): checked (may be
 * NULL) tells whether a toolCall id is among the calls of that checked part,
 * for the request-wide uniqueness of global. */
typedef bool (*qtr_seen_fn)(const void *ud, qstr id);
quire_status qtr_check_from(const quire_transcript *t, uint32_t from, bool global, bool open_calls, qtr_seen_fn checked,
                            const void *ud, qarena *scratch, quire_error *err);
/* toolCall id equality and hash on the decoded bytes (escaped or not). */
bool qtr_ids_eq(qstr a, qstr b);
uint64_t qtr_id_hash(qstr s);

/* Deep-copies message src of another transcript into t (strings and values
 * keep pointing at the source's documents: the caller keeps those alive or
 * uses qtr_adopt_docs). */
bool qtr_copy_msg(quire_transcript *t, const qmsg *src);

#endif
