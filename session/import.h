/* The importers (session/import_*.c, one file per foreign log format) and the
 * helpers they share (session/import.c): each turns an agent's own log into a
 * quire.session/1 log. Pure: bytes in, bytes out. */
#ifndef QUIRE_SESSION_IMPORT_H
#define QUIRE_SESSION_IMPORT_H

#include "session/log.h"

/* Importers (session/import_claude_code.c, session/import_codex.c). Write the
 * session log to out and human-readable report lines ("LINE: text\n") to
 * report. */
typedef struct qimport_ctx {
    const quire_allocator *a;
    const quire_options *opts;
    uint32_t flags;          /* QUIRE_IMPORT_* */
    const char *provider;    /* target provider written into the log */
    const char *metadata;    /* cline: task_metadata.json bytes, NULL when none */
    size_t metadata_len;
    qbuf *out;
    qbuf *report;
    quire_error *err;
    qarena *mended;          /* copies of lines whose lone surrogate escapes were mended */
    uint32_t nmended;        /* escapes replaced so far */
} qimport_ctx;

quire_status q_import_claude_code(qimport_ctx *c, const char *src, size_t len);
/* One session-log line {"type": type, ...} written compact into b: begin it,
 * add the keys with w, end it (closes the object and adds the newline). */
void q_log_line_begin(qw *w, qbuf *b, const char *type);
void q_log_line_end(qw *w, qbuf *b);
/* A message line up to its role: {"type":"message","message":{"role":role
 * — the caller adds content (and meta), closes the message and ends the line. */
void q_log_message_begin(qw *w, qbuf *b, const char *role);
/* "_meta":{"line":N}: the line of the agent's own log an event comes from
 * (replay --from names it in errors); nothing when lineno is 0. */
void q_w_meta_line(qw *w, uint32_t lineno);
/* Parses one line of an agent's log into *d (a JSON object). QUIRE_OK with
 * *skipped = false: parsed. QUIRE_OK with *skipped = true: not a JSON object
 * and --skip-invalid is on; why is in skip_msg (the caller reports it). Any
 * other status is the import's error (a malformed line without --skip-invalid,
 * a limit, out of memory), already in c->err with the line's position. what
 * names the log kind ("Claude Code log", "Codex rollout"). */
quire_status q_import_parse_line(qimport_ctx *c, qj_doc *d, const char *what, const char *l, size_t ln, size_t off,
                                 uint32_t lineno, bool *skipped, char *skip_msg, size_t skip_cap);
quire_status q_import_codex(qimport_ctx *c, const char *src, size_t len);

/* Shared by the importers: removes "<system-reminder>...</system-reminder>"
 * segments from plain text s. Writes the remaining text to rest (plain bytes)
 * and calls emit(ud, body, body_len) for each lifted body (trimmed of the
 * newline right inside the tags). Returns the number lifted. */
uint32_t q_lift_reminders(const char *s, size_t n, qbuf *rest,
                          void (*emit)(void *ud, const char *body, size_t len), void *ud);

/* A small string -> int32 map for the importers; keys are borrowed slices
 * (raw JSON string content) that must outlive the map. */
typedef struct qmap {
    const char **k;
    uint32_t *kl;
    int32_t *v;
    uint32_t n, cap;
    const quire_allocator *a;
} qmap;
void qmap_init(qmap *m, const quire_allocator *a);
void qmap_free(qmap *m);
/* -1 when absent. */
int32_t qmap_get(const qmap *m, const char *k, size_t n);
/* Inserts or replaces; false on OOM. */
bool qmap_put(qmap *m, const char *k, size_t n, int32_t v);

/* ---- Single-document formats (gemini-cli, cline, swe-agent): the whole input
 * is one JSON document (session/import_gemini_cli.c, import_cline.c,
 * import_swe_agent.c). ---- */
quire_status q_import_gemini_cli(qimport_ctx *c, const char *src, size_t len);
quire_status q_import_cline(qimport_ctx *c, const char *src, size_t len);
quire_status q_import_swe_agent(qimport_ctx *c, const char *src, size_t len);

/* Parses the whole input as one JSON document (the import's limits apply).
 * A syntax error is the import's error "not a <what>: ..." at its line:col
 * and pointer; a limit stays QUIRE_E_LIMIT. */
quire_status q_import_parse_doc(qimport_ctx *c, qj_doc *d, const char *what, const char *src, size_t len);
/* The import's error at node of d (offset, line:col within d->src) with a
 * JSON Pointer. Returns code. */
quire_status q_import_err(qimport_ctx *c, quire_status code, const qj_doc *d, uint32_t node, const char *pointer,
                          const char *fmt, ...) Q_PRINTF(6, 7);

/* The 1-based line of an offset of src; each call costs the distance from the
 * previous offset (either way), so a walk in document order is linear. */
typedef struct qlinecur {
    const char *src;
    size_t len, pos;
    uint32_t line;
} qlinecur;
uint32_t qlinecur_at(qlinecur *lc, size_t off);

/* Tool call ids of one imported conversation, made unique. The first call
 * with id X keeps X; a later call with an id already used becomes "X-K" with
 * K the smallest integer >= 2 that gives an unused id (a missing or empty id
 * becomes "call-N", N the call's ordinal in the file, or the next free N). Results pair with the
 * earliest still open call of their original id. Ids are escaped JSON string
 * content (write them with qw_str_esc). */
typedef struct qcall {
    const char *id, *orig; /* emitted id, original id (NULL when missing) */
    uint32_t idn, orign;
    int32_t next, tail;    /* chain of open calls with the same original id */
    bool answered;
} qcall;
typedef struct qcalls {
    const quire_allocator *a;
    qarena *ar;
    qmap used;  /* emitted id -> call index */
    qmap open;  /* original id -> index of its earliest open call, -1 none */
    qmap nextk; /* original id -> the K its next rename tries first */
    qcall *v;
    uint32_t n, cap;
    uint32_t renamed;
    uint32_t anon; /* the N the next "call-N" tries first */
} qcalls;
void qcalls_init(qcalls *k, const quire_allocator *a, qarena *ar);
void qcalls_free(qcalls *k);
/* A new call; returns its index, -1 on OOM. */
int32_t qcalls_add(qcalls *k, const char *raw, size_t n, bool missing);
/* The open call that a result for original id raw answers (marked answered),
 * -1 when none is open. */
int32_t qcalls_answer(qcalls *k, const char *raw, size_t n);
/* Writes "meta":{"renamedToolCallIds":{emitted: original, ...}} for the calls
 * idx[0..n) that were renamed (nothing when none was). */
void qcalls_w_meta(const qcalls *k, qw *w, const int32_t *idx, uint32_t n);
/* Answers the calls pend[0..*npend) still open (the last assistant message's
 * calls the log left without a result) with one tool message of error results
 * written to body as a message line; empties pend and returns how many it
 * answered (0: nothing written). */
uint32_t qcalls_answer_pending(qcalls *k, int32_t *pend, uint32_t *npend, qbuf *body, uint32_t lineno);
/* The error toolResult answering a call the log has no result for. */
void qcalls_w_no_output(qw *w, const qcall *kc);

/* The member key of obj when obj is an object and the member has type t, else
 * QJ_NONE. */
uint32_t q_import_get(const qj_doc *d, uint32_t obj, const char *key, qj_type t);
static inline uint32_t q_import_str(const qj_doc *d, uint32_t obj, const char *key) {
    return q_import_get(d, obj, key, QJ_STRING);
}
/* Writes the compact JSON text of node as one JSON string (a part with no
 * transcript form kept readable); false when out of memory (the writer's
 * buffer is then marked out of memory too). */
bool q_import_w_json_string(qw *w, const qj_doc *d, uint32_t node, const quire_allocator *a);
/* The same inside a {"type":"text","text":…} block. */
bool q_import_w_json_text(qw *w, const qj_doc *d, uint32_t node, const quire_allocator *a);

/* One note of the import report: "LINE: message\n", the message cut to 400
 * bytes on a character boundary (always valid UTF-8). */
void q_import_report(qimport_ctx *c, uint32_t lineno, const char *fmt, ...) Q_PRINTF(3, 4);

#endif
