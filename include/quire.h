/*
 * quire — render LLM agent transcripts into provider requests, manage system
 * reminders, compact transcripts and replay logged sessions.
 *
 * The one public header. Everything is a pure function: bytes in, bytes out.
 * The library does no I/O, reads no clock, draws no randomness and keeps no
 * global mutable state.
 *
 * Conventions
 *   - Every function that can fail returns a quire_status (0 = QUIRE_OK) and
 *     fills a caller-owned quire_error when one is passed (it may be NULL).
 *   - Opaque objects come with a _free function; NULL is accepted by all of them.
 *   - Output buffers (quire_bytes) are owned by the caller and released with
 *     quire_bytes_free().
 *   - Options structs start with a `size` field: set it to sizeof(the struct)
 *     (the *_INIT macros do) so the library can grow them compatibly.
 *   - All JSON is UTF-8. Input bytes are copied unless a BORROW flag says the
 *     caller keeps them alive for the lifetime of the object.
 */
#ifndef QUIRE_H
#define QUIRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(QUIRE_BUILDING) && defined(__GNUC__)
#define QUIRE_API __attribute__((visibility("default")))
#else
#define QUIRE_API
#endif

#define QUIRE_VERSION_MAJOR 0
#define QUIRE_VERSION_MINOR 1
#define QUIRE_VERSION_PATCH 0
QUIRE_API const char *quire_version(void);

/* ------------------------------------------------------------------------ */
/* Status, errors, allocation                                               */
/* ------------------------------------------------------------------------ */

typedef enum quire_status {
    QUIRE_OK = 0,
    QUIRE_E_NOMEM,             /* an allocation failed */
    QUIRE_E_JSON,              /* malformed JSON */
    QUIRE_E_LIMIT,             /* a configured limit was exceeded */
    QUIRE_E_SCHEMA,            /* valid JSON, wrong shape for a quire format */
    QUIRE_E_UNSUPPORTED,       /* cannot be expressed for the target */
    QUIRE_E_REMINDER_BODY,     /* reminder body missing, blank or not UTF-8 */
    QUIRE_E_REMINDER_TTL,      /* ttlTurns not an integer >= 1 */
    QUIRE_E_REMINDER_ENUM,     /* unknown propagate/roleHint/mode/source value */
    QUIRE_E_REMINDER_UNKNOWN_FIELD,
    QUIRE_E_REMINDER_TYPE,     /* a reminder field has the wrong JSON type */
    QUIRE_E_INVALID,           /* an argument or option is invalid */
    QUIRE_E_BUDGET,            /* compaction budget cannot be met */
    QUIRE_E_SESSION,           /* a session log event is malformed */
    QUIRE_E_MISMATCH,          /* replay output differs from the expected one */
    QUIRE_E_VALIDATE,          /* a request violates its dialect's rules */
    QUIRE_STATUS_COUNT_
} quire_status;

/* Stable name of a status, e.g. "QUIRE_E_REMINDER_TTL". */
QUIRE_API const char *quire_status_name(quire_status s);

typedef struct quire_error {
    quire_status code;
    size_t offset;      /* byte offset in the failing input; SIZE_MAX if none */
    uint32_t line;      /* 1-based line of offset; 0 if unknown */
    uint32_t column;    /* 1-based column (in bytes) of offset; 0 if unknown */
    char pointer[512];  /* JSON Pointer of the offending value, "" if none */
    char field[64];     /* the offending field name, "" if none */
    char message[512];  /* what is wrong, one line, no trailing newline */
} quire_error;

/* Allocator hook. All library allocations go through it (NULL = malloc). */
typedef struct quire_allocator {
    void *(*malloc_fn)(size_t size, void *ud);
    void *(*realloc_fn)(void *ptr, size_t old_size, size_t new_size, void *ud);
    void (*free_fn)(void *ptr, size_t size, void *ud);
    void *ud;
} quire_allocator;

/* A byte buffer returned by the library. */
typedef struct quire_bytes {
    char *data;   /* NUL-terminated for convenience; len excludes the NUL */
    size_t len;
    const quire_allocator *alloc_;  /* internal */
} quire_bytes;

QUIRE_API void quire_bytes_free(quire_bytes *b);

/* ------------------------------------------------------------------------ */
/* Limits and parse options                                                 */
/* ------------------------------------------------------------------------ */

typedef struct quire_limits {
    uint32_t max_depth;         /* JSON nesting depth (default 1024) */
    uint64_t max_input_bytes;   /* default 1 GiB; hard maximum 4 GiB - 1 */
    uint64_t max_string_bytes;  /* one JSON string (default 256 MiB) */
    uint32_t max_messages;      /* messages per transcript (default 10,000,000) */
} quire_limits;

#define QUIRE_PARSE_BORROW 0x1u  /* do not copy input; caller keeps it alive */

typedef struct quire_options {
    size_t size;                       /* sizeof(quire_options) */
    const quire_allocator *allocator;  /* NULL = malloc/realloc/free */
    quire_limits limits;               /* zero fields take defaults */
    uint32_t flags;                    /* QUIRE_PARSE_* */
} quire_options;
#define QUIRE_OPTIONS_INIT {sizeof(quire_options), NULL, {0, 0, 0, 0}, 0}

/* ------------------------------------------------------------------------ */
/* JSON validation (the codec as a service)                                  */
/* ------------------------------------------------------------------------ */

/* Checks that bytes are one strict RFC 8259 JSON text. */
QUIRE_API quire_status quire_json_check(const char *json, size_t len,
                                        const quire_options *opts, quire_error *err);

/* Re-serialises one JSON text: compact (pretty = 0) or two-space indented.
 * Numbers and string escapes are kept byte for byte, key order is kept. */
QUIRE_API quire_status quire_json_format(const char *json, size_t len, int pretty,
                                         const quire_options *opts, quire_bytes *out,
                                         quire_error *err);

/* ------------------------------------------------------------------------ */
/* Transcripts (quire.transcript/1)                                          */
/* ------------------------------------------------------------------------ */

typedef struct quire_transcript quire_transcript;

QUIRE_API quire_status quire_transcript_parse(const char *json, size_t len,
                                              const quire_options *opts,
                                              quire_transcript **out, quire_error *err);
/* Writes the transcript back as quire.transcript/1 JSON. */
QUIRE_API quire_status quire_transcript_write(const quire_transcript *t, int pretty,
                                              quire_bytes *out, quire_error *err);
QUIRE_API size_t quire_transcript_message_count(const quire_transcript *t);
QUIRE_API void quire_transcript_free(quire_transcript *t);

/* ------------------------------------------------------------------------ */
/* Reminder state (quire.state/1) — DESIGN 2.2-2.5, 3, 4                     */
/* ------------------------------------------------------------------------ */

typedef struct quire_state quire_state;

/* A fresh state: turn 0, no reminders. session_id feeds derived ids (may be NULL). */
QUIRE_API quire_status quire_state_new(const char *session_id, const quire_options *opts,
                                       quire_state **out, quire_error *err);
QUIRE_API quire_status quire_state_parse(const char *json, size_t len, const quire_options *opts,
                                         quire_state **out, quire_error *err);
QUIRE_API quire_status quire_state_write(const quire_state *s, int pretty, quire_bytes *out,
                                         quire_error *err);
QUIRE_API void quire_state_free(quire_state *s);

/* @@REMINDERS-API@@ (ingest, inject, clear, propagate: see the reminders section) */

/* ------------------------------------------------------------------------ */
/* Rendering — DESIGN 5                                                      */
/* ------------------------------------------------------------------------ */

typedef struct quire_render_options {
    size_t size;                    /* sizeof(quire_render_options) */
    const char *provider;           /* e.g. "anthropic" (required) */
    const char *model;              /* e.g. "claude-sonnet-4-5"; NULL = provider default */
    int pretty;                     /* two-space indented output */
    uint32_t max_tokens;            /* 0 = default (documented in docs/providers.md) */
    /* @@RENDER-OPTIONS@@ (caps override, policy, lossy: added by the render module) */
} quire_render_options;
#define QUIRE_RENDER_OPTIONS_INIT {sizeof(quire_render_options), NULL, NULL, 0, 0}

typedef struct quire_render_result {
    quire_bytes request;    /* the request body, ready to POST */
    quire_bytes events;     /* lifecycle events, JSONL (one SessionUpdate per line) */
    quire_state *state;     /* the state after this model call */
} quire_render_result;

/* Renders the request for turn state->turn + 1. state may be NULL (no
 * reminders; result->state is then a fresh state advanced by one turn). */
QUIRE_API quire_status quire_render(const quire_transcript *t, const quire_state *state,
                                    const quire_render_options *ropts, const quire_options *opts,
                                    quire_render_result *out, quire_error *err);
QUIRE_API void quire_render_result_free(quire_render_result *r);

/* @@COMPACT-API@@ */

/* @@REPLAY-API@@ */

#ifdef __cplusplus
}
#endif
#endif /* QUIRE_H */
