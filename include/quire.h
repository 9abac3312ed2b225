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
 *   - Thread safety: every function is reentrant (no globals, no hidden
 *     state). Objects are immutable after creation, except where a function
 *     documents that it changes its argument (quire_state_set_session_id,
 *     quire_state_set_bridges, quire_state_set_limits; a quire_replay cursor
 *     advanced by quire_replay_next). So any number of threads may use one
 *     object at once as long as none of them calls such a function on it
 *     meanwhile; different objects need no coordination at all. A custom
 *     quire_allocator must itself be safe to call from the threads that use it.
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
#define QUIRE_VERSION_MINOR 2
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
    QUIRE_E_PROVIDER,          /* a response is the provider's error (DESIGN 12) */
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

/* Reminders — DESIGN 2.2-2.5, 3, 4; docs/reminders.md.
 *
 * The state is a value: every lifecycle function takes a state (const) and
 * returns the next one in *next (a new object; the input is unchanged). Events
 * are JSONL lines, one ACP SessionUpdate-shaped object each (reminder_emitted,
 * reminder_deduped, reminder_expired, reminder_dropped). `events` and
 * `response` may be NULL when the caller does not want them. On failure *next
 * is NULL, nothing is written to events/response and err names the field:
 * err->code is one of QUIRE_E_REMINDER_* for reminder rule violations (stable
 * names via quire_status_name), err->field the offending field. */

/* Budgets and caps carried by a state (copied to every next state, written to
 * the state file as "limits" when not all default). 0 = the default. */
typedef struct quire_reminder_limits {
    uint32_t max_live_per_origin; /* live reminders per origin (default 32) */
    uint32_t turn_budget_bytes;   /* reminder body bytes rendered per turn (default 16384) */
    uint32_t body_cap_bytes;      /* one body, after hygiene (default 8192) */
    uint32_t max_origins;         /* origins other than the host with live reminders (default 64) */
    uint32_t max_pending_per_server; /* reminders an MCP server pushed that no turn has rendered yet
                                        (default 32); past it the oldest is dropped (queue_full) */
} quire_reminder_limits;

/* Sets the limits of s (zero fields = defaults). */
QUIRE_API void quire_state_set_limits(quire_state *s, const quire_reminder_limits *limits);
/* The effective limits of s (defaults filled in). */
QUIRE_API void quire_state_limits(const quire_state *s, quire_reminder_limits *out);

/* Sets the session id (feeds derived ids; "" = none). */
QUIRE_API quire_status quire_state_set_session_id(quire_state *s, const char *session_id, quire_error *err);

/* Opt-in bridges of an MCP server (default off; DESIGN 3). kinds is a mask. */
#define QUIRE_BRIDGE_RESOURCES 0x1u /* notifications/resources/updated */
#define QUIRE_BRIDGE_TOOLS 0x2u     /* notifications/tools/list_changed */
#define QUIRE_BRIDGE_PROMPTS 0x4u   /* notifications/prompts/list_changed */
QUIRE_API quire_status quire_state_set_bridges(quire_state *s, const char *server, unsigned kinds,
                                               quire_error *err);
/* The bridge mask of a server (0 when unknown). */
QUIRE_API unsigned quire_state_bridges(const quire_state *s, const char *server);

/* Small accessors (for hosts and tests). */
QUIRE_API int64_t quire_state_turn(const quire_state *s);
QUIRE_API size_t quire_state_reminder_count(const quire_state *s);
/* The id of the i-th live reminder (injection order), NULL when out of range. */
QUIRE_API const char *quire_state_reminder_id(const quire_state *s, size_t i);

/* Applies ONE session-log line object (DESIGN 7) of type "mcp", "acp",
 * "reminder" or "clear". JSON-RPC responses (ACP requests) go to *response as
 * JSONL. Malformed lines and invalid direct reminders fail; invalid reminders
 * from MCP/ACP peers become reminder_dropped events / JSON-RPC errors. */
QUIRE_API quire_status quire_state_apply(const quire_state *s, const char *json, size_t len,
                                         const quire_options *opts, quire_state **next, quire_bytes *events,
                                         quire_bytes *response, quire_error *err);
/* Applies many such lines, as JSONL or one JSON array, in order; all or
 * nothing. Error offsets and line:col are relative to json. */
QUIRE_API quire_status quire_state_apply_lines(const quire_state *s, const char *json, size_t len,
                                               const quire_options *opts, quire_state **next,
                                               quire_bytes *events, quire_bytes *response, quire_error *err);

/* One JSON-RPC message from MCP server `server` (initialize/discover results,
 * notifications/reminder, notifications/message with _meta.harn.reminder,
 * bridged notifications; everything else is ignored). */
QUIRE_API quire_status quire_state_ingest_mcp(const quire_state *s, const char *server, const char *json,
                                              size_t len, const quire_options *opts, quire_state **next,
                                              quire_bytes *events, quire_error *err);
/* One ACP JSON-RPC message to the agent (session/inject_reminder and its alias
 * session/remind; everything else is ignored). A request gets its JSON-RPC
 * response in *response: {"reminderId","dedupedCount"} or error -32602 with
 * data {"code","field"}. */
QUIRE_API quire_status quire_state_ingest_acp(const quire_state *s, const char *json, size_t len,
                                              const quire_options *opts, quire_state **next,
                                              quire_bytes *events, quire_bytes *response, quire_error *err);

/* Direct injection of a reminder record (DESIGN 2.2 JSON; source default
 * "host", origin default "host"). *reminder_id (optional) receives the id. */
QUIRE_API quire_status quire_state_inject(const quire_state *s, const char *reminder_json, size_t len,
                                          const quire_options *opts, quire_state **next, quire_bytes *events,
                                          quire_bytes *reminder_id, quire_error *err);

/* Clear: every live reminder matching all given (non-NULL) fields is removed
 * with reminder_expired(cleared). At least one field must be given. */
typedef struct quire_reminder_selector {
    const char *id;
    const char *tag;
    const char *dedupe_key;
    const char *origin;
} quire_reminder_selector;
QUIRE_API quire_status quire_state_clear(const quire_state *s, const quire_reminder_selector *sel,
                                         const quire_options *opts, quire_state **next, quire_bytes *events,
                                         quire_error *err);

/* The state a sub-agent starts with: reminders with propagate "all", and
 * "session" ones whose source is not "inherited", copied with source
 * "inherited" and originatingAgentId = agent_id (kept when already set),
 * firedAtTurn null and ttlRemaining = ttlTurns. turn starts at 0, seq continues
 * the parent's; servers are not inherited; limits are. child_session_id NULL =
 * the parent's. */
QUIRE_API quire_status quire_state_propagate(const quire_state *parent, const char *agent_id,
                                             const char *child_session_id, const quire_options *opts,
                                             quire_state **child, quire_error *err);

/* ------------------------------------------------------------------------ */
/* Rendering — DESIGN 5                                                      */
/* ------------------------------------------------------------------------ */

/* Capability rows (DESIGN 5.1). The built-in table is data in the library; a
 * user override file (JSON: {"rows": [ROW...]} or [ROW...]) is parsed into a
 * quire_caps and consulted first. Each override row names provider and model
 * (a glob) and the fields it changes; see docs/providers.md for the fields. */
typedef struct quire_caps quire_caps;
QUIRE_API quire_status quire_caps_parse(const char *json, size_t len, const quire_options *opts,
                                        quire_caps **out, quire_error *err);
QUIRE_API void quire_caps_free(quire_caps *c);
/* The resolved row of (provider, model) as JSON (model NULL = the provider's default). */
QUIRE_API quire_status quire_caps_resolve(const quire_caps *overrides, const char *provider, const char *model,
                                          int pretty, quire_bytes *out, quire_error *err);
/* The whole table (override rows first) as JSON. */
QUIRE_API quire_status quire_caps_list(const quire_caps *overrides, int pretty, quire_bytes *out,
                                       quire_error *err);

#define QUIRE_PLACEMENT_TAIL 0        /* reminders at the tail each turn (default) */
#define QUIRE_PLACEMENT_APPEND_ONLY 1 /* a reminder stays where it first fired */
#define QUIRE_CACHE_MANAGED 0         /* quire places cache breakpoints (default) */
#define QUIRE_CACHE_INPUT_ONLY 1      /* only the input's markers (within the limit) */

typedef struct quire_render_options {
    size_t size;                    /* sizeof(quire_render_options) */
    const char *provider;           /* e.g. "anthropic" (required) */
    const char *model;              /* e.g. "claude-sonnet-4-5"; NULL = provider default */
    int pretty;                     /* two-space indented output */
    uint32_t max_tokens;            /* 0 = default (documented in docs/providers.md) */
    const quire_caps *caps;         /* override rows consulted before the built-in table; NULL = none */
    int allow_system_slot;          /* policy systemSlot "allow": system-slot reminders may change the system prompt */
    int placement;                  /* QUIRE_PLACEMENT_TAIL (default) | QUIRE_PLACEMENT_APPEND_ONLY */
    int cache_breakpoints;          /* QUIRE_CACHE_MANAGED (default) | QUIRE_CACHE_INPUT_ONLY */
    int lossy;                      /* inexpressible content becomes an event instead of an error */
    /* request parameters (DESIGN 13, docs/params.md): a JSON object, NULL = none */
    const char *params;
    size_t params_len;
    const char *params_override;    /* a second object whose members replace those of params (the
                                       CLI's single flags over --params); NULL = none */
    size_t params_override_len;
    int peer_max_slot;              /* policy peerMaxSlot: QUIRE_PEER_SLOT_* (default user_block) */
    /* A buffer of the caller's to write the body into (quire_render only;
     * NULL = none). When the body and its NUL fit (body length < into_cap),
     * result->request.data == into and quire_bytes_free leaves it alone;
     * otherwise the body is in a buffer of the library's, as without it (what
     * into then holds is unspecified). It must not overlap the bytes a
     * transcript parsed with QUIRE_PARSE_BORROW reads. */
    char *into;
    size_t into_cap;
    /* request parameters under params and params_override (their members
     * replace these): what quire_params_from_dialect read from a request
     * body; NULL = none */
    const char *params_base;
    size_t params_base_len;
} quire_render_options;
#define QUIRE_RENDER_OPTIONS_INIT {sizeof(quire_render_options), NULL, NULL, 0, 0, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, 0}

/* Render policy peerMaxSlot: the strongest slot a reminder from a peer (an
 * origin other than "host", or source "bridge": MCP servers, ACP sessions) may
 * take. A peer's reminder that would land above it is rendered in the cap's
 * slot instead, reason "peer_slot_capped" in its reminder_emitted event.
 * ephemeral_cache counts as user_block. Host reminders are never capped. */
#define QUIRE_PEER_SLOT_USER_BLOCK 0 /* default: no instruction authority */
#define QUIRE_PEER_SLOT_DEVELOPER 1  /* developer message at most */
#define QUIRE_PEER_SLOT_SYSTEM 2     /* no cap (roleHint and policy decide) */

typedef struct quire_render_result {
    quire_bytes request;    /* the request body, ready to POST */
    quire_bytes events;     /* lifecycle events, JSONL (one SessionUpdate per line) */
    quire_state *state;     /* the state after this model call */
    quire_bytes envelope;   /* {"method","path","headers"} of the request (DESIGN 13), compact JSON */
} quire_render_result;

/* Renders the request for turn state->turn + 1. state may be NULL (no
 * reminders; result->state is then a fresh state advanced by one turn). */
QUIRE_API quire_status quire_render(const quire_transcript *t, const quire_state *state,
                                    const quire_render_options *ropts, const quire_options *opts,
                                    quire_render_result *out, quire_error *err);
QUIRE_API void quire_render_result_free(quire_render_result *r);

/* ---- request parameters and envelope (DESIGN 13, docs/params.md) ---- */
/* Checks the shape of a params object (maxTokens, temperature, topP, topK,
 * stop, seed, toolChoice, parallelToolCalls, responseFormat, reasoning,
 * stream, user, providerOptions) without a target: QUIRE_E_SCHEMA names the
 * parameter (/toolChoice/tool). Whether a target can carry a parameter is
 * decided by quire_render. */
QUIRE_API quire_status quire_params_check(const char *json, size_t len, quire_error *err);

/* Applies a render policy file to ro: {"systemSlot": "allow"|"demote",
 * "placement": "tail"|"append_only", "cacheBreakpoints": "managed"|"input",
 * "lossy": bool, "peerMaxSlot": "user_block"|"developer"|"system"}.
 * Unknown fields are rejected. */
QUIRE_API quire_status quire_render_policy_apply(const char *json, size_t len, quire_render_options *ro,
                                                 quire_error *err);

/* Input dialects: reads a request body in a provider's shape ("anthropic",
 * "openai_chat", "openai_responses", "gemini") into a transcript. */
QUIRE_API quire_status quire_transcript_parse_dialect(const char *dialect, const char *json, size_t len,
                                                      const quire_options *opts, quire_transcript **out,
                                                      quire_error *err);

/* The request parameters of a request body in an input dialect (as
 * quire_transcript_parse_dialect reads its conversation), as a params object
 * (docs/params.md) for quire_render_options.params_base. A body field with a
 * neutral parameter becomes it (max_tokens -> maxTokens, tool_choice ->
 * toolChoice, ...; values byte for byte). Other fields (not the conversation
 * nor model) go under providerOptions.<ro->provider> when the target
 * (ro->provider, ro->model, ro->caps) renders the source's dialect; for another
 * dialect they are an error naming the first (QUIRE_E_UNSUPPORTED), or with
 * ro->lossy each is dropped with a request_adjusted event in *events (JSONL;
 * events may be NULL). *params is empty when the body has no parameters. Docs:
 * docs/providers.md, "Input dialects". */
QUIRE_API quire_status quire_params_from_dialect(const char *dialect, const char *json, size_t len,
                                                 const quire_render_options *ro, const quire_options *opts,
                                                 quire_bytes *params, quire_bytes *events, quire_error *err);

/* Checks a request body against its dialect's structural rules and the
 * capability row of (ro->provider, ro->model, ro->caps). Returns QUIRE_OK, or
 * QUIRE_E_VALIDATE with one line per violation in *report ("/pointer: message").
 * Other statuses: the body is not JSON, or the target is unknown. */
QUIRE_API quire_status quire_validate(const char *json, size_t len, const quire_render_options *ro,
                                      const quire_options *opts, quire_bytes *report, quire_error *err);

/* ------------------------------------------------------------------------ */
/* Compaction — DESIGN 6, docs/compaction.md                                 */
/* ------------------------------------------------------------------------ */

/* A host-supplied token counter for text (replaces quire's estimator; the
 * documented per-message, per-block and per-image overheads still apply). */
typedef size_t (*quire_count_tokens_fn)(const char *text, size_t len, void *ud);

/* Stage switches (quire_compact_policy.stages). */
#define QUIRE_COMPACT_PRUNE_TOOL_OUTPUTS 0x1u /* stage 1: old tool outputs -> head/tail excerpt */
#define QUIRE_COMPACT_SUMMARIZE 0x2u          /* stage 2: oldest turns -> one summary */
#define QUIRE_COMPACT_CUT_OVERSIZED 0x4u      /* stage 3: oversized messages -> head/tail */
#define QUIRE_COMPACT_ALL_STAGES 0x7u

/* Result flag: the result transcript owns all its bytes (it is written and
 * re-parsed) instead of borrowing strings from the input transcript. */
#define QUIRE_COMPACT_OWN 0x1u

typedef struct quire_compact_policy {
    size_t size;                       /* sizeof(quire_compact_policy) */
    uint64_t budget_tokens;            /* budgetTokens; 0 = no budget (only a supplied summary acts) */
    uint32_t keep_last_turns;          /* keepLastTurns (default 4) */
    uint32_t keep_first_turns;         /* keepFirstTurns (default 1: the task statement) */
    uint32_t tool_output_excerpt_bytes;/* toolOutputExcerptBytes (default 1024: head + tail) */
    uint32_t summary_tokens;           /* summaryTokens: room reserved for the summary (default 1024) */
    uint32_t stages;                   /* QUIRE_COMPACT_* stage bits (default all) */
    uint32_t flags;                    /* QUIRE_COMPACT_OWN */
    quire_count_tokens_fn count_tokens;/* NULL = quire's estimator */
    void *count_tokens_ud;
    uint32_t summary_request_tokens;   /* summaryRequestTokens: most tokens of the plan's
                                          summarisation request (default 100000) */
    uint32_t keep_last_steps;          /* keepLastSteps: the newest steps kept verbatim (default 8) */
    uint32_t budget_scope;             /* budgetScope: QUIRE_BUDGET_TRANSCRIPT (default) or
                                          QUIRE_BUDGET_REQUEST (sessions and session logs only) */
} quire_compact_policy;
#define QUIRE_BUDGET_TRANSCRIPT 0u /* budgetTokens counts the transcript, system and tools (quire_compact_estimate) */
#define QUIRE_BUDGET_REQUEST 1u    /* budgetTokens counts the whole request for the session's target
                                      (quire_session_estimate_request); docs/compaction.md */
#define QUIRE_COMPACT_POLICY_INIT \
    {sizeof(quire_compact_policy), 0, 4, 1, 1024, 1024, QUIRE_COMPACT_ALL_STAGES, 0, NULL, NULL, 100000, 8, 0}

/* Applies a JSON policy object (camelCase fields as in session-log `compact`
 * events: budgetTokens, keepLastTurns, keepFirstTurns, toolOutputExcerptBytes,
 * summaryTokens, summaryRequestTokens, stages {pruneToolOutputs, summarize,
 * cutOversized}) on top of
 * *p. Unknown fields are rejected with their JSON Pointer. */
QUIRE_API quire_status quire_compact_policy_parse(const char *json, size_t len, quire_compact_policy *p,
                                                  quire_error *err);

typedef struct quire_compact_result {
    /* The compacted transcript. It borrows strings from the input transcript
     * (keep the input alive as long as this), unless QUIRE_COMPACT_OWN. */
    quire_transcript *transcript;
    quire_state *state;     /* the reminder state after compaction (fresh if none given) */
    quire_bytes events;     /* JSONL: transcript_compacted, reminder_expired(compacted_out) */
    quire_bytes report;     /* the report, one compact JSON object */
    int changed;            /* 0: nothing to do (the transcript is the input, unchanged) */
} quire_compact_result;

/* Compacts t to policy->budget_tokens (DESIGN 6). summary (UTF-8, may be
 * NULL) is a model-written summary of the span the policy selects; it is
 * applied even when t is under budget. Without it a deterministic extractive
 * digest stands in when the summary stage is needed. QUIRE_E_BUDGET when the
 * budget cannot be met (the message gives the numbers); nothing is returned
 * then. state may be NULL. Allocation follows t's allocator (opts may be NULL).
 * docs/compaction.md describes the stages, the summary message and the report. */
QUIRE_API quire_status quire_compact(const quire_transcript *t, const quire_state *state,
                                     const quire_compact_policy *policy, const char *summary,
                                     size_t summary_len, const quire_options *opts,
                                     quire_compact_result *out, quire_error *err);
QUIRE_API void quire_compact_result_free(quire_compact_result *r);

/* The plan: what compaction would do without a summary (its report), the span
 * a summary replaces (turns, message indexes and ids) and a ready
 * summarisation transcript (quire.transcript/1: the fixed instruction + the
 * span as text) for any provider. One JSON object (pretty when pretty != 0). */
QUIRE_API quire_status quire_compact_plan(const quire_transcript *t, const quire_compact_policy *policy,
                                          int pretty, const quire_options *opts, quire_bytes *out,
                                          quire_error *err);

/* Estimated tokens of t under policy's counter (what the budget is compared with). */
QUIRE_API uint64_t quire_compact_estimate(const quire_transcript *t, const quire_compact_policy *policy);

/* ------------------------------------------------------------------------ */
/* Session logs, replay and import — DESIGN 7 (docs/replay.md)              */
/* ------------------------------------------------------------------------ */

#define QUIRE_REPLAY_DIGEST 0x1u  /* request lines carry "bytes" + "digest", not "body" */

typedef struct quire_replay_options {
    size_t size;            /* sizeof(quire_replay_options) */
    const char *provider;   /* overrides the provider of every render (NULL = the log's) */
    const char *model;      /* overrides the model of every render (NULL = the log's, or the
                               provider's default when only the provider is overridden) */
    int pretty;             /* request bodies two-space indented (step.request only) */
    uint32_t max_tokens;    /* passed to quire_render (0 = default) */
    uint32_t flags;         /* QUIRE_REPLAY_* */
    const quire_render_options *render; /* base options of every render (caps, lossy, policy
                                           fields); provider, model, pretty and max_tokens
                                           come from the log and the fields above. NULL = none */
} quire_replay_options;
#define QUIRE_REPLAY_OPTIONS_INIT {sizeof(quire_replay_options), NULL, NULL, 0, 0, 0, NULL}

typedef struct quire_replay quire_replay;

/* What one session-log line did. Pointers stay valid until the next call. */
typedef struct quire_replay_step {
    uint32_t line;            /* 1-based line of the session log just applied */
    const char *type;         /* its event type: "session", "message", "render", ... */
    const char *output;       /* the JSONL lines it produced (request, event, response,
                                 compacted), each ending in '\n'; may be empty */
    size_t output_len;
    int64_t turn;             /* render: the turn rendered (1-based); 0 otherwise */
    const char *request;      /* render: the request body (NULL with QUIRE_REPLAY_DIGEST:
                                 the body is hashed piece by piece, never joined) */
    size_t request_len;       /* render: the body's length (also with QUIRE_REPLAY_DIGEST) */
    const char *provider;     /* render: the target used */
    const char *model;        /* render: NULL when the provider default was used */
    uint32_t reminders;       /* render: reminder_emitted events of this turn */
    uint32_t compactions;     /* compact: 1 */
} quire_replay_step;

/* Prepares a replay of a quire.session/1 log (copied unless QUIRE_PARSE_BORROW).
 * Strings in ro must outlive the replay. */
QUIRE_API quire_status quire_replay_open(const char *log, size_t len, const quire_replay_options *ro,
                                         const quire_options *opts, quire_replay **out,
                                         quire_error *err);
/* Applies the next event line. *done = 1 (and step zeroed) at the end of the log.
 * On failure err names the line, column and JSON Pointer; the replay cannot go on. */
QUIRE_API quire_status quire_replay_next(quire_replay *r, quire_replay_step *step, int *done,
                                         quire_error *err);
QUIRE_API void quire_replay_free(quire_replay *r);

/* The whole log in one call: the JSONL stream of DESIGN 7. */
QUIRE_API quire_status quire_replay_run(const char *log, size_t len, const quire_replay_options *ro,
                                        const quire_options *opts, quire_bytes *out,
                                        quire_error *err);

/* Stable digest used by `quire replay --digest`: 128-bit FNV-1a, written as 32
 * lowercase hex digits and a NUL. */
QUIRE_API void quire_digest128(const void *data, size_t len, char out[33]);

#define QUIRE_IMPORT_LIFT_REMINDERS 0x1u /* inline <system-reminder> text -> reminder events */
#define QUIRE_IMPORT_SKIP_INVALID 0x2u   /* skip (and report) lines that are not JSON */
#define QUIRE_IMPORT_SIDECHAINS 0x4u     /* Claude Code: keep isSidechain lines */

typedef struct quire_import_options {
    size_t size;            /* sizeof(quire_import_options) */
    const char *format;     /* "claude-code", "codex", "gemini-cli", "cline" or "swe-agent" */
    uint32_t flags;         /* QUIRE_IMPORT_* */
    const char *provider;   /* target written into the log; NULL = the format's own
                               ("anthropic" for claude-code and cline, "openai_responses" for
                               codex, "gemini" for gemini-cli, "openai" for swe-agent) */
    const char *metadata;   /* cline: the task_metadata.json beside the history (bytes, optional):
                               its first model_usage entry names the session's model */
    size_t metadata_len;
} quire_import_options;
#define QUIRE_IMPORT_OPTIONS_INIT {sizeof(quire_import_options), NULL, 0, NULL, NULL, 0}

/* Converts a Claude Code session JSONL, a Codex rollout JSONL, a Gemini CLI
 * chat recording, a Cline api_conversation_history.json or a SWE-agent .traj
 * into a quire.session/1 log. report (may be NULL) receives one line per
 * skipped or notable input line or entry ("LINE: text") and a final
 * "summary: ..." line. */
QUIRE_API quire_status quire_import(const char *bytes, size_t len, const quire_import_options *io,
                                    const quire_options *opts, quire_bytes *log,
                                    quire_bytes *report, quire_error *err);

/* ---- Reports: a replay as one HTML file (DESIGN 7; docs/replay.md) ---- */

typedef struct quire_report_options {
    size_t size;              /* sizeof(quire_report_options) */
    const char *provider;     /* as in quire_replay_options: override every render's target */
    const char *model;
    const char *title;        /* shown in the page title and heading; NULL = "session" */
    int no_bodies;            /* leave request bodies out (figures and events stay) */
    const char *against;      /* a previous `quire replay` output (JSONL, bodies or digests)
                                 to compare with, or NULL */
    size_t against_len;
    const char *against_name; /* its name in the page; NULL = "the previous replay" */
} quire_report_options;
#define QUIRE_REPORT_OPTIONS_INIT {sizeof(quire_report_options), NULL, NULL, NULL, 0, NULL, 0, NULL}

/* Replays a quire.session/1 log and writes one self-contained HTML page (no
 * network, no external scripts or fonts): the turn timeline (estimated
 * request tokens, the share repeating the previous request's prefix,
 * compactions), reminder lanes (emitted, deduped, expired, cleared,
 * compacted out, dropped, with origin, slot and reason), per-turn events,
 * request bodies and the diff against the previous turn on demand, and with
 * ro->against the first turn that differs from a previous replay. Every text
 * from the log is escaped; no body can add markup or script. On an error in
 * ro->against, err->field is "against" (line and column are in that text). */
QUIRE_API quire_status quire_report(const char *log, size_t len, const quire_report_options *ro,
                                    const quire_options *opts, quire_bytes *html, quire_error *err);
/* ---- Responses in (DESIGN §12, docs/responses.md) ---- */

/* Decodes a provider's answer, whole (quire_response_decode) or streamed
 * (quire_stream_*), into the assistant message to append to the transcript.
 * The dialect comes from the capability row of (provider, model). */
typedef struct quire_response_options {
    size_t size;              /* sizeof(quire_response_options) */
    const quire_caps *caps;   /* override rows (NULL = built-in table only) */
    int pretty;               /* two-space indented message and info */
    /* The tools of the request the answer is for (NULL = none): a JSON array
     * of transcript tools ({"name",...}) or an object with such a "tools"
     * member (a transcript). A call naming a tool by the name the dialect sent
     * it under (every dialect but Ollama maps names outside its rule, e.g.
     * [a-zA-Z0-9_-]{1,64}) gets the tool's own name back (docs/providers.md, "Provider rules"). Read by
     * quire_response_decode, and by quire_stream_finish: keep it alive until
     * then. An error in it sets err->field to "tools". */
    const char *tools;
    size_t tools_len;
    /* Where the provider gives a call no id (Gemini without functionCall.id,
     * Ollama), the decoder makes one: call_id_prefix then the call's ordinal
     * in the answer (NULL = "call_": call_0, call_1, ...). Ids must be unique
     * in a conversation, so a host appending answers to one transcript gives
     * each answer its own prefix; the session API does ("call_<turn>_"). At
     * most 64 bytes of [A-Za-z0-9_-]. */
    const char *call_id_prefix;
} quire_response_options;
#define QUIRE_RESPONSE_OPTIONS_INIT {sizeof(quire_response_options), NULL, 0, NULL, 0, NULL}

/* Normalised token counts; -1 = not reported by the provider. inputTokens
 * counts every input token (cached ones included), outputTokens every output
 * token (reasoning included); the other three are parts of those. */
typedef struct quire_usage {
    int64_t input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens;
} quire_usage;

typedef struct quire_response {
    quire_bytes message;     /* {"role":"assistant","content":[...]} (quire.transcript/1) */
    quire_bytes info;        /* {"provider","model"?,"id"?,"stopReason","providerStopReason",
                                "usage":{...},"providerUsage":{...}|null} */
    const char *stop_reason; /* static: end_turn, tool_use, max_tokens, stop_sequence,
                                refusal, pause or error */
    quire_usage usage;
} quire_response;

/* A whole response body (JSON). A provider error body fails with
 * QUIRE_E_PROVIDER: err->field holds the provider's error type or code and
 * the message quotes the provider's message. ro and opts may be NULL. */
QUIRE_API quire_status quire_response_decode(const char *provider, const char *model, const char *bytes,
                                             size_t len, const quire_response_options *ro,
                                             const quire_options *opts, quire_response *out,
                                             quire_error *err);
QUIRE_API void quire_response_free(quire_response *r);

/* A streamed response (SSE, or JSON lines for Bedrock ConverseStream and
 * Ollama) fed in any chunking: the result does not depend on where the bytes
 * are split. feed and finish append the delta events their bytes complete to
 * *events when events is not NULL (JSONL, ACP SessionUpdate-shaped:
 * agent_message_chunk, agent_thought_chunk, tool_call, tool_call_update).
 * A malformed, out-of-order or truncated stream fails naming the event and
 * its byte offset (err->offset, err->line); after a failure, and after a
 * successful finish, the stream refuses further calls. */
typedef struct quire_stream quire_stream;
QUIRE_API quire_status quire_stream_new(const char *provider, const char *model, const quire_response_options *ro,
                                        const quire_options *opts, quire_stream **out, quire_error *err);
QUIRE_API quire_status quire_stream_feed(quire_stream *s, const char *bytes, size_t len, quire_bytes *events,
                                         quire_error *err);
QUIRE_API quire_status quire_stream_finish(quire_stream *s, quire_response *out, quire_bytes *events,
                                           quire_error *err);
QUIRE_API void quire_stream_free(quire_stream *s);
/* ---- Sessions: quire inside the agent loop (DESIGN §11, docs/api.md) ---- */

/* A live session: target, system, tools, transcript, reminder state and the
 * caches that make each turn cheap. Pure like the rest of the library. Every
 * call that changes the session is recorded as the quire.session/1 line that
 * describes it; quire_session_log returns those lines, and `quire replay` of
 * them reproduces every accepted request byte for byte.
 *
 * Calls that change the session are all or nothing: on failure the session is
 * as before and err says what was wrong, with offsets, line:col and JSON
 * Pointers relative to the JSON the call was given. */
typedef struct quire_session quire_session;

/* Opens a session. config is one JSON object, the fields of a session-log
 * `session` line (DESIGN 7; "type":"session" may be given or left out):
 *   sessionId      string: feeds derived reminder ids
 *   target         {"provider", "model"?}: the default target of render
 *   system, tools  as in quire.transcript/1
 *   renderPolicy   {"systemSlot", "placement", "cacheBreakpoints", "lossy", "peerMaxSlot"}
 *                  (quire_render_policy_apply)
 *   maxTokens      integer >= 1 (default: the row's)
 *   compactPolicy  the default policy of quire_session_compact / _plan
 *   limits         {"maxLivePerOrigin", "turnBudgetBytes", "bodyCapBytes",
 *                   "maxOrigins", "maxPendingPerServer"}
 *   bridges        {"<server>": ["resources", "tools", "prompts"]}: MCP bridges on
 * caps (may be NULL) are capability overrides consulted before the built-in
 * table; they are borrowed (keep them alive as long as the session) and are
 * not recorded in the log (replay them with `quire replay --caps`). */
QUIRE_API quire_status quire_session_open(const char *config, size_t len, const quire_caps *caps,
                                          const quire_options *opts, quire_session **out, quire_error *err);
/* The session a quire.session/1 log describes (resume after a restart): its
 * lines are applied in order; each `render` line commits its turn. The
 * restored session's log is the given log (blank lines left out). */
QUIRE_API quire_status quire_session_restore(const char *log, size_t len, const quire_caps *caps,
                                             const quire_options *opts, quire_session **out, quire_error *err);
QUIRE_API void quire_session_free(quire_session *s);

/* Appends one transcript message (a JSON object) or several (a JSON array of
 * them, all or nothing). A toolResult must answer a toolCall given earlier. */
QUIRE_API quire_status quire_session_append(quire_session *s, const char *json, size_t len, quire_error *err);

/* Applies session-log lines of type mcp, acp, reminder or clear (one object,
 * JSONL, or a JSON array; all or nothing), as quire_state_apply_lines does.
 * events (JSONL SessionUpdates) and responses (JSONL JSON-RPC responses to
 * ACP requests) may be NULL. */
QUIRE_API quire_status quire_session_apply(quire_session *s, const char *json, size_t len, quire_bytes *events,
                                           quire_bytes *responses, quire_error *err);

/* A piece of a rendered body. */
typedef struct quire_segment {
    const char *data;
    size_t len;
} quire_segment;

#define QUIRE_SESSION_CONTIGUOUS 0x1u /* render: also give the body as one buffer (one copy) */

/* The next request. Every pointer borrows the session and stays valid until
 * the next call on it (quire_session_free included). */
typedef struct quire_session_turn {
    const quire_segment *segments; /* the body: segments in order, concatenated = the body */
    size_t nsegments;
    const char *body;               /* QUIRE_SESSION_CONTIGUOUS: the body in one buffer; else NULL */
    size_t body_len;                /* the body's length (always set) */
    const char *method;             /* "POST" */
    const char *path;               /* the request path (DESIGN 13), e.g. "/v1/messages" */
    const char *headers;            /* JSON object of the headers the request needs (no credentials) */
    size_t headers_len;
    const char *events;             /* JSONL lifecycle events of this turn */
    size_t events_len;
    int64_t turn;                   /* the turn rendered (state turn + 1) */
    int interrupt_pending;          /* an interrupt_immediate reminder fires: skip the pending tool batch */
    const char *provider;           /* the target used */
    const char *model;              /* NULL = the provider's default */
} quire_session_turn;

/* Renders the next request. target (may be NULL) is a JSON object
 * {"provider"?, "model"?} overriding the session's target for this turn (as a
 * `render` line's target). The turn stays pending: nothing changes until
 * quire_session_accept_message; rendering again (a failed model call) gives the
 * same turn and the same bytes. Any other call that changes the session drops
 * the pending turn. params (may be NULL) is a JSON object of request
 * parameters (DESIGN 13, docs/params.md); it is recorded on the turn's render
 * line, so the session log replays to the same request. */
QUIRE_API quire_status quire_session_render(quire_session *s, const char *target, size_t target_len,
                                            const char *params, size_t params_len, uint32_t flags,
                                            quire_session_turn *out, quire_error *err);

/* Commits the pending turn with the model's answer, an assistant message in
 * transcript form (JSON object): the message is appended, the reminder state
 * becomes the rendered turn's next state (TTLs count down, firedAtTurn set,
 * turn + 1), and the turn's `render` and `message` lines join the log.
 * QUIRE_E_INVALID when no turn is pending. */
QUIRE_API quire_status quire_session_accept_message(quire_session *s, const char *json, size_t len,
                                                    quire_error *err);

/* An asynchronous tool outcome (MCP SEP-992 triggers). */
typedef enum quire_tool_outcome {
    QUIRE_TOOL_COMPLETED,
    QUIRE_TOOL_FAILED,
    QUIRE_TOOL_TIMEOUT,
    QUIRE_TOOL_CANCELLED
} quire_tool_outcome;
/* Answers toolCall call_id when it is still open (the last assistant message
 * holds it and no result follows): a tool message with a toolResult holding
 * content (a JSON string or array of text/image blocks; NULL = a text naming
 * the outcome), isError unless completed. Otherwise the outcome becomes a
 * host reminder keyed "tool_outcome:<callId>" (a later outcome of the same
 * call replaces it), ttlTurns 1. *answered (may be NULL) = 1 for a result,
 * 0 for a reminder. events as quire_session_apply. */
QUIRE_API quire_status quire_session_tool_outcome(quire_session *s, const char *call_id, quire_tool_outcome outcome,
                                                  const char *content, size_t content_len, int *answered,
                                                  quire_bytes *events, quire_error *err);

/* Compacts the transcript (DESIGN 6). policy (JSON object, may be NULL = the
 * session's compactPolicy, else the defaults); summary (may be NULL) as
 * quire_compact. report and events may be NULL. */
QUIRE_API quire_status quire_session_compact(quire_session *s, const char *policy, size_t policy_len,
                                             const char *summary, size_t summary_len, quire_bytes *report,
                                             quire_bytes *events, quire_error *err);
/* quire_session_compact with the summary applied to exactly the span a plan
 * named (span_id: the plan's "span"."id", as quire_compact_apply): messages
 * appended since the plan do not move it; QUIRE_E_MISMATCH when the span's
 * messages changed. The log's compact line records the span. */
QUIRE_API quire_status quire_session_compact_span(quire_session *s, const char *policy, size_t policy_len,
                                                  const char *summary, size_t summary_len, const char *span_id,
                                                  quire_bytes *report, quire_bytes *events, quire_error *err);
/* The compaction plan for the current transcript (quire_compact_plan). */
QUIRE_API quire_status quire_session_plan(quire_session *s, const char *policy, size_t policy_len, int pretty,
                                          quire_bytes *out, quire_error *err);
/* Estimated tokens of the transcript with system and tools
 * (quire_compact_estimate under the session's compaction policy): what a
 * compaction budget is compared with. The whole next request (reminders,
 * media and the provider's overheads included) is
 * quire_session_estimate_request; a compaction with budgetScope "request"
 * takes its budget in those terms. */
QUIRE_API uint64_t quire_session_estimate(const quire_session *s);

/* The values, as JSON, at any time: the transcript (quire.transcript/1), the
 * reminder state (quire.state/1, as committed) and the log (quire.session/1). */
QUIRE_API quire_status quire_session_transcript(const quire_session *s, int pretty, quire_bytes *out,
                                                quire_error *err);
QUIRE_API quire_status quire_session_state(const quire_session *s, int pretty, quire_bytes *out, quire_error *err);
QUIRE_API quire_status quire_session_log(const quire_session *s, quire_bytes *out, quire_error *err);
/* Small accessors. */
QUIRE_API int64_t quire_session_turn_count(const quire_session *s);  /* turns accepted */
QUIRE_API size_t quire_session_message_count(const quire_session *s);

/* ---- quire serve: the session API as JSONL (DESIGN §8, §11; docs/serve.md) ---- */

/* A server: named sessions driven by one JSON request object a line, one
 * reply object a line (docs/serve.md lists the ops and their fields). The
 * command `quire serve` only moves lines; a host can embed the server
 * without a process. caps (may be NULL) are borrowed and given to every
 * session the server opens (keep them alive as long as the server).
 * quire_server_handle changes the server: one thread at a time per server;
 * different servers need no coordination. */
typedef struct quire_server quire_server;
QUIRE_API quire_status quire_server_new(const quire_caps *caps, const quire_options *opts, quire_server **out,
                                        quire_error *err);
/* Handles one request line (its newline left out). *reply receives the reply
 * object, one line of JSON without a newline; a bad request is an error reply
 * ({"id", "error": {code, message, offset, line, column, pointer}}, positions
 * relative to line), never a failure of this call. A blank line gets no reply
 * (reply->len 0, reply->data NULL). Fails only when memory runs out (or sv or
 * reply is NULL). */
QUIRE_API quire_status quire_server_handle(quire_server *sv, const char *line, size_t len, quire_bytes *reply,
                                           quire_error *err);
/* The reply to a line longer than max_line bytes that was dropped unread:
 * {"id": null, "error": {"code": "QUIRE_E_LIMIT", ...}}. */
QUIRE_API quire_status quire_server_overlong(const quire_server *sv, uint64_t max_line, quire_bytes *reply,
                                             quire_error *err);
/* Sessions open. */
QUIRE_API size_t quire_server_session_count(const quire_server *sv);
QUIRE_API void quire_server_free(quire_server *sv);

/* ---- compaction by steps, pinned spans (DESIGN §6, docs/compaction.md) ---- */

/* Applies a model-written summary to exactly the span a plan named: span_id
 * is the plan's "span"."id" ("FIRST-LAST-DIGEST": the span's first and last
 * message index and a digest of its messages' bytes). Messages appended to t
 * since the plan do not move the span. QUIRE_E_MISMATCH when the span's
 * messages changed (or are gone); QUIRE_E_INVALID when the id is malformed or
 * the span no longer falls on whole steps (a tool call would be parted from
 * its result). span_id NULL = quire_compact() (the span the policy selects).
 * Everything else as quire_compact(); free the result with
 * quire_compact_result_free(). */
QUIRE_API quire_status quire_compact_apply(const quire_transcript *t, const quire_state *state,
                                           const quire_compact_policy *policy, const char *summary,
                                           size_t summary_len, const char *span_id, const quire_options *opts,
                                           quire_compact_result *out, quire_error *err);

/* ---- Request estimates (DESIGN §6 "quire estimate", docs/compaction.md) ---- */

/* What the next request for a target costs, in input tokens: the system prompt,
 * the tool definitions (names, descriptions, JSON schemas), the messages with
 * the per-message and per-block overheads of the target's provider family,
 * the reminders the renderer would place this turn, and images and documents
 * priced by that family's rule (Anthropic: pixel area / 750; OpenAI: 85 + 170
 * per 512-px tile; Gemini: 258 per 768-px tile). Text is counted by quire's
 * o200k estimator unless count_tokens is given. */
typedef struct quire_estimate_options {
    size_t size;                         /* sizeof(quire_estimate_options) */
    const quire_render_options *render;  /* the target (provider required, model, caps) and the
                                            render policy that places reminders */
    quire_count_tokens_fn count_tokens;  /* NULL = quire's estimator */
    void *count_tokens_ud;
} quire_estimate_options;
#define QUIRE_ESTIMATE_OPTIONS_INIT {sizeof(quire_estimate_options), NULL, NULL, NULL}

typedef struct quire_estimate {
    uint64_t total;       /* system + tools + messages + reminders + media */
    uint64_t system, tools, messages, reminders, media;
    uint32_t nmessages, nreminders, images, documents;
    const char *family;   /* static: "anthropic", "openai" or "gemini" (the overhead and media rules) */
} quire_estimate;

/* Estimates the request that quire_render(t, state, eo->render) would produce
 * (state may be NULL). json (may be NULL) receives the breakdown as one compact
 * JSON object: {"total","family","system","tools","messages","reminders","media",
 * "counts":{"messages","reminders","images","documents"}}. */
QUIRE_API quire_status quire_estimate_request(const quire_transcript *t, const quire_state *state,
                                              const quire_estimate_options *eo, const quire_options *opts,
                                              quire_estimate *out, quire_bytes *json, quire_error *err);
/* The breakdown of e as JSON (the object above). */
QUIRE_API quire_status quire_estimate_write(const quire_estimate *e, int pretty, quire_bytes *out, quire_error *err);
/* Replays a quire.session/1 log (ro as quire_replay_open; may be NULL) and
 * estimates every request it renders: JSONL, one object per render line, the
 * breakdown plus "line", "turn", "provider", "model" and "requestBytes".
 * eo->render is ignored (each render line's target is used); eo may be NULL. */
QUIRE_API quire_status quire_estimate_log(const char *log, size_t len, const quire_replay_options *ro,
                                          const quire_estimate_options *eo, const quire_options *opts,
                                          quire_bytes *out, quire_error *err);
/* The estimate of the session's next request: target (JSON {"provider"?,
 * "model"?}, may be NULL = the session's target), the committed reminder state
 * and the session's render policy. */
QUIRE_API quire_status quire_session_estimate_request(const quire_session *s, const char *target,
                                                      size_t target_len, quire_estimate *out, quire_error *err);

/* ---- Push routing, interrupts, responses into sessions (DESIGN §11, docs/api.md) ---- */

/* MCP push routing. The host records the resources/subscribe and
 * resources/unsubscribe requests it sends to a server as session-log lines
 *   {"type":"mcp","server":S,"direction":"out","message":{...request...}}
 * (quire_state_apply, quire_session_apply); the state keeps the subscribed
 * URIs per server (state file: servers.S.subscriptions). A bridged
 * notifications/resources/updated for a URI not subscribed is dropped with
 * reminder_dropped(not_subscribed). After a reconnect the host applies
 *   {"type":"mcp","server":S,"event":"reconnected"}
 * (an mcp_reconnected event lists S's subscriptions) and re-sends what
 * quire_*_subscriptions returns. Reminders a server pushed that no turn has
 * rendered yet are bounded per server (quire_reminder_limits
 * .max_pending_per_server): the oldest is dropped with
 * reminder_dropped(queue_full).
 *
 * The subscriptions of server (a JSON array of URIs, in subscription order;
 * [] for an unknown server) or, with server NULL, of every server that has
 * some ({"S":[...],...}). */
QUIRE_API quire_status quire_state_subscriptions(const quire_state *s, const char *server, quire_bytes *out_json,
                                                 quire_error *err);
QUIRE_API quire_status quire_session_subscriptions(const quire_session *s, const char *server, quire_bytes *out_json,
                                                   quire_error *err);

/* Commits the pending turn with the provider's raw response body (JSON) for
 * the target the turn was rendered for: decoded with quire_response_decode
 * (ro may be NULL; its caps default to the session's), then appended and
 * committed as quire_session_accept_message does. The log records the decoded
 * assistant message, so replay reproduces the session without the raw body.
 * A provider error body fails with QUIRE_E_PROVIDER and the turn stays
 * pending. info (may be NULL) receives the decoded response's info JSON
 * (stop reason, usage). */
QUIRE_API quire_status quire_session_accept(quire_session *s, const char *bytes, size_t len,
                                            const quire_response_options *ro, quire_bytes *info, quire_error *err);
/* The same with a response already decoded (a finished quire_stream, or
 * quire_response_decode): its message is appended and the turn committed. */
QUIRE_API quire_status quire_session_accept_response(quire_session *s, const quire_response *r, quire_error *err);

#ifdef __cplusplus
}
#endif
#endif /* QUIRE_H */
