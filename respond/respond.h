/* Responses in (DESIGN 12): one decoder per dialect turns a provider's answer,
 * whole or streamed, into the assistant message of quire.transcript/1, the
 * normalised stop reason and usage, and (for streams) delta events.
 *
 * Every decoder fills the same accumulator (racc): a list of blocks built from
 * the body or from stream events, the raw stop reason and the raw usage
 * object. One writer turns the accumulator into the message and the response
 * info, so a body and the stream of the same answer give the same bytes.
 * Streams are framed here (SSE or JSON lines, any chunking) and handed to the
 * dialect's event function one complete event at a time. See docs/responses.md. */
#ifndef QUIRE_RESPOND_H
#define QUIRE_RESPOND_H

#include "core/json.h"
#include "providers/caps.h"

typedef enum rkind {
    RK_TEXT, RK_THINKING, RK_REDACTED, RK_TOOL_CALL, RK_CUSTOM_CALL, RK_SERVER_CALL, RK_SERVER_RESULT, RK_OPAQUE
} rkind;

typedef struct rblock {
    rkind kind;
    int64_t key;   /* the dialect's index of the block in a stream; -1 none */
    bool open;     /* stream: started and not yet stopped */
    qbuf text;     /* text | thinking text | redacted data | custom call input (plain UTF-8) */
    qbuf sig;      /* thinking signature (plain) */
    qbuf id, name; /* calls (plain); serverToolResult: id = the call it answers */
    qbuf args;     /* toolCall / serverToolCall input, serverToolResult content: JSON text as sent */
    bool as_opaque; /* a server call written as an opaque item (MCP calls: fields beyond id/name/input) */
    qbuf raw;      /* opaque and server blocks: the provider item (JSON text);
                      text: citations, JSON values joined by ',' */
    qbuf po;       /* text and calls: the block's providerOptions object (JSON text), or empty */
    /* calls: where the input came from, for its errors: a body's arguments
     * node (offset, pointer) or a stream's first fragment (offset, line) */
    bool has_src;
    uint64_t src_off, src_line;
    char src_ptr[80];
} rblock;
/* Records where b's input came from (a body node with its pointer, or a
 * stream event: line > 0). */
void rb_source(rblock *b, uint64_t off, uint64_t line, const char *ptr);

/* One member of the raw usage object (JSON text of key and value). */
typedef struct rkv {
    char *k, *v;
    size_t kn, vn;
} rkv;

/* The normalised usage fields, in output order. -1 = not reported. */
enum { RU_INPUT, RU_OUTPUT, RU_CACHE_READ, RU_CACHE_WRITE, RU_REASONING, RU_COUNT };

typedef struct racc {
    const quire_allocator *a;
    qarena ar;
    const char *provider; /* written into `provider` fields */
    rblock *b;
    uint32_t n, cap;
    qbuf stop_raw;        /* the provider's stop reason (plain) */
    bool has_stop;
    bool refusal;         /* a refusal was seen (normalises the stop reason) */
    rkv *usage;           /* raw usage members in first-seen order */
    uint32_t nusage, capusage;
    bool has_usage;
    qbuf id, model;       /* response id and model as reported (plain) */
    qbuf *events;         /* delta events (JSONL) or NULL */
    bool oom;
    uint32_t ntool;       /* RK_TOOL_CALL blocks pushed so far */
    const char *call_prefix; /* generated call ids: call_prefix + ordinal ("call_") */
    bool usage_limit;     /* a usage object named more than RUSAGE_MAX members */
    /* key -> the last block given that key (racc_key), open addressing */
    struct rkslot { int64_t key; uint32_t at; bool used; } *kslots;
    uint32_t kcap, kn;
} racc;

/* A dialect decoder. */
typedef struct rstream rstream;
typedef struct rdec {
    /* A whole response body (parsed) into acc; provider error bodies become errors. */
    quire_status (*json)(racc *acc, const qj_doc *d, quire_error *err);
    bool sse;  /* stream framing: SSE (true) or one JSON value per line (false) */
    /* One stream event: name (SSE `event:`; "" when absent) and its data. */
    quire_status (*event)(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen);
    /* The end of a stream: is it complete? (off = total bytes) */
    quire_status (*end)(rstream *s);
    /* The normalised stop reason from acc (raw stop reason, blocks, refusal). */
    const char *(*stop)(const racc *acc);
    /* The normalised usage from the raw usage object. */
    void (*usage)(const qj_doc *d, uint32_t obj, int64_t u[RU_COUNT]);
    /* Optional per-stream state of the dialect (rstream.ext) and its release. */
    void *(*state_new)(const quire_allocator *a);
    void (*state_free)(void *state, const quire_allocator *a);
    /* The name a tool is sent under in the dialect's requests, into out
     * (returns its length; 0 = sent as it is); NULL = the dialect sends every
     * name as it is. A call naming a mapped name gets the tool's own name back. */
    size_t (*tool_name)(const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]);
} rdec;

/* The name a tool is sent under by dialect d (providers/caps.h,
 * qcaps_name_rule), into out; 0 when it is sent as it is. */
size_t rdec_sent_name(qdialect d, const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]);

extern const rdec q_dec_anthropic, q_dec_openai_chat, q_dec_openai_responses, q_dec_gemini, q_dec_bedrock,
    q_dec_mistral, q_dec_ollama;

/* Stream state shared by the framing and the dialect event functions. */
struct rstream {
    racc acc;
    const rdec *dec;
    quire_error *err;
    qj_opts jo;
    uint64_t fed, max_bytes; /* bytes fed so far; the input limit (quire_limits.max_input_bytes) */
    /* framing */
    uint64_t pos;          /* bytes consumed */
    uint64_t line_no;      /* 1-based line of the next byte */
    bool skip_lf;          /* last byte was CR */
    qbuf line;             /* a line split across feeds */
    uint64_t line_start;   /* offset of the buffered line */
    qbuf data;             /* SSE: data of the event being read */
    char ev[64];           /* SSE: event name (cut at 63 bytes) */
    size_t evn;
    bool has_data;
    uint64_t ev_off, ev_line; /* offset and line of the event being read / handled */
    /* dialect progress */
    uint32_t phase;        /* dialect-defined bits */
    int64_t cur;           /* dialect-defined */
    uint32_t nevents;
    void *ext;             /* the dialect's own state (rdec.state_new) */
    bool failed;
};

/* The most distinct usage members kept: providers report about 10 to 25; a
 * usage object naming more is an error (QUIRE_E_LIMIT), so that looking a
 * member up stays constant time. */
#define RUSAGE_MAX 256

/* ---- accumulator ---- */
void racc_init(racc *acc, const quire_allocator *a, const char *provider);
void racc_free(racc *acc);
/* A new block (zeroed, key -1). NULL on OOM. */
rblock *racc_push(racc *acc, rkind kind);
/* The last block with this key (open or not), NULL if none. Constant time:
 * keys given with racc_key are indexed (a stream's indices are the
 * provider's, so a hostile one may name each block anew). */
rblock *racc_find(racc *acc, int64_t key);
/* Sets b's key and indexes it (false on OOM). */
bool racc_key(racc *acc, rblock *b, int64_t key);
/* Appends the decoded content of string node i to b. */
void rb_put_str(qbuf *b, const qj_doc *d, uint32_t i);
/* Appends the raw JSON text of node i (compact form of containers). */
void rb_put_raw(qbuf *b, const qj_doc *d, uint32_t i);
/* Sets the stop reason from string node i (replaces). */
void racc_stop(racc *acc, const qj_doc *d, uint32_t i);
void racc_stopz(racc *acc, const char *s);
/* Merges the members of usage object obj into the raw usage (later values replace). */
void racc_usage(racc *acc, const qj_doc *d, uint32_t obj);
/* The same for the members of obj named in keys only. */
void racc_usage_keys(racc *acc, const qj_doc *d, uint32_t obj, const char *const *keys, size_t nkeys);
/* Drops the raw usage gathered so far. */
void racc_usage_clear(racc *acc);
/* Records id / model from string nodes (QJ_NONE ignored). */
void racc_meta(racc *acc, const qj_doc *d, uint32_t id, uint32_t model);

/* Delta events (no-ops when acc->events is NULL). */
void racc_ev_text(racc *acc, uint32_t block, bool thinking, const qj_doc *d, uint32_t str);
void racc_ev_call(racc *acc, uint32_t block, const rblock *b);
void racc_ev_args(racc *acc, uint32_t block, const rblock *b, const qj_doc *d, uint32_t str);

/* Writes the message and the response info. */
/* The request's tool names (plain UTF-8) for mapping names back. */
typedef struct rnames {
    const char **p;
    size_t *len;
    uint32_t n;
} rnames;
/* Calls of acc naming a tool by its dialect-mapped name get the tool's name. */
quire_status racc_map_names(racc *acc, const rdec *dec, const rnames *names);
/* quire_response_decode with the request's tool names given (session/: its
 * transcript's tools) instead of ro->tools. */
quire_status qresp_decode_named(const char *provider, const char *model, const char *bytes, size_t len,
                                const quire_response_options *ro, const quire_options *opts, const rnames *names,
                                quire_response *out, quire_error *err);
/* A decoded message (transcript JSON) whose toolCall blocks name a tool by
 * the provider's mapped name, with the tools' own names: *out receives the
 * new message, or stays empty (data NULL) when nothing changed. */
quire_status qresp_map_message(const char *provider, const char *model, const quire_caps *caps, const char *msg,
                               size_t len, const rnames *names, const quire_allocator *a, quire_bytes *out,
                               quire_error *err);
quire_status racc_write(racc *acc, const rdec *dec, bool pretty, quire_bytes *message, quire_bytes *info,
                        quire_error *err);

/* ---- helpers for decoders ---- */
/* Provider error: "provider error TYPE: MESSAGE" with err->field = TYPE. */
quire_status rerr_provider(quire_error *err, const qj_doc *d, uint32_t type, uint32_t msg, size_t off);
/* A shape error at node i of a body: "/pointer: message". */
quire_status rerr_at(quire_error *err, const qj_doc *d, uint32_t i, const char *ptr, const char *fmt, ...)
    Q_PRINTF(5, 6);
/* Stream error naming the current event and its byte offset. */
quire_status rs_err(rstream *s, const char *event, const char *fmt, ...) Q_PRINTF(3, 4);
/* Parses event data as JSON (errors point into the stream). The caller frees doc. */
quire_status rs_parse(rstream *s, const char *data, size_t dlen, qj_doc *doc);
/* Typed member lookups: QJ_NONE when absent or of another type. */
uint32_t rj_str(const qj_doc *d, uint32_t obj, const char *key);
uint32_t rj_obj(const qj_doc *d, uint32_t obj, const char *key);
uint32_t rj_arr(const qj_doc *d, uint32_t obj, const char *key);
/* Integer member (or nested "a.b"), -1 when absent. */
int64_t rj_int(const qj_doc *d, uint32_t obj, const char *path);
/* Sum of present integer members; -1 when none is present. */
int64_t rj_sum(const qj_doc *d, uint32_t obj, const char *const *paths, size_t n);
/* Index of the i-th element of array arr. */
uint32_t rj_elem(const qj_doc *d, uint32_t arr, uint32_t i);
bool rb_has_calls(const racc *acc);

/* Chat Completions shapes, shared by the OpenAI Chat and Mistral decoders
 * (dec_openai_chat.c): a body, one stream event, the end of a stream. */
quire_status q_chat_json(racc *acc, const qj_doc *d, quire_error *err);
quire_status q_chat_event(rstream *s, const char *name, size_t nlen, const char *data, size_t dlen);
quire_status q_chat_end(rstream *s);

#endif
