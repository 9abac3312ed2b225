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
    qbuf *out;
    qbuf *report;
    quire_error *err;
} qimport_ctx;

quire_status q_import_claude_code(qimport_ctx *c, const char *src, size_t len);
/* One session-log line {"type": type, ...} written compact into b: begin it,
 * add the keys with w, end it (closes the object and adds the newline). */
void q_log_line_begin(qw *w, qbuf *b, const char *type);
void q_log_line_end(qw *w, qbuf *b);
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

#endif
