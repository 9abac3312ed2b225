/* Session logs (quire.session/1, DESIGN 7): the line reader, the replay
 * engine and the importers that turn Claude Code and Codex logs into session
 * logs. Everything here is pure: bytes in, bytes out.
 *
 * A session log is JSONL. Each line is parsed as its own JSON document; errors
 * name the JSONL line (1-based) and the column within it, plus a JSON Pointer
 * relative to the line's object (e.g. "/message/content/0/type").
 */
#ifndef QUIRE_SESSION_LOG_H
#define QUIRE_SESSION_LOG_H

#include "core/json.h"

/* 128-bit FNV-1a over data (offset basis 0x6c62272e07bb014262b821756295c58d,
 * prime 2^88 + 0x13b). hi/lo are the two 64-bit halves. */
void q_fnv1a128(const void *data, size_t len, uint64_t *hi, uint64_t *lo);
/* The same, streaming: begin, then more over consecutive pieces. */
void q_fnv1a128_begin(uint64_t *hi, uint64_t *lo);
void q_fnv1a128_more(uint64_t *hi, uint64_t *lo, const void *data, size_t len);
/* hi:lo as 32 lowercase hex digits and a NUL (quire_digest128's form). */
void q_digest_hex(uint64_t hi, uint64_t lo, char out[33]);

/* One physical line of a JSONL text: [start, start + len) without the
 * newline (a trailing '\r' is kept out too). Returns false at the end. */
typedef struct qline_iter {
    const char *src;
    size_t len, pos;
    uint32_t lineno; /* of the line last returned */
} qline_iter;
bool q_next_line(qline_iter *it, const char **line, size_t *len, size_t *offset);

/* Rebases an error produced while parsing or decoding one JSONL line (whose
 * doc source is that line) onto the whole file: offset += line_offset, line =
 * lineno, column within the line. */
void q_err_rebase_line(quire_error *e, const char *line, size_t len, size_t line_offset, uint32_t lineno);

/* True when the line holds only whitespace. */
bool q_line_blank(const char *p, size_t n);

#endif
