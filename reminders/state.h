/* Reminder records and the reminder state (DESIGN 2.2-2.5, 3, 4).
 *
 * The state is a value: every operation takes a state and produces the next
 * one (copy-on-write: qs_clone, then mutate the clone). All strings are plain
 * UTF-8 owned by the state's arena. Events are appended to a qbuf as JSONL,
 * one ACP SessionUpdate-shaped object per line (reminders/events.h writes them).
 *
 * Contract for other modules:
 *   render/   calls qs_live_for_turn() to get what to render in turn T, decides
 *             slots, writes reminder_emitted events with qev_reminder_emitted(),
 *             then qs_after_render() on the next state.
 *   compact/  calls qs_after_compact() on the next state.
 *   replay    feeds session-log lines through qs_apply_line().
 */
#ifndef QUIRE_REMINDERS_STATE_H
#define QUIRE_REMINDERS_STATE_H

#include "core/json.h"

typedef enum qrole_hint { QRH_SYSTEM, QRH_DEVELOPER, QRH_USER_BLOCK, QRH_EPHEMERAL_CACHE } qrole_hint;
typedef enum qmode { QM_FINISH_STEP, QM_INTERRUPT_IMMEDIATE, QM_AUDIT_ONLY } qmode;
typedef enum qpropagate { QP_SESSION, QP_ALL, QP_NONE } qpropagate;
typedef enum qsource { QS_HOST, QS_PROVIDER, QS_HOOK, QS_BRIDGE, QS_INHERITED } qsource;

const char *qrole_hint_name(qrole_hint h);
const char *qmode_name(qmode m);
const char *qpropagate_name(qpropagate p);
const char *qsource_name(qsource s);

typedef struct qreminder {
    const char *id;
    const char *body;            /* after hygiene (and cap), plain UTF-8 */
    size_t body_len;
    const char **tags;
    uint32_t ntags;
    const char *dedupe_key;      /* NULL = none */
    int64_t ttl_turns;           /* 0 = none */
    int64_t ttl_remaining;       /* 0 = none (lives until cleared or compacted) */
    bool preserve_on_compact;
    qpropagate propagate;
    qrole_hint role_hint;
    qmode mode;
    qsource source;
    const char *origin;          /* "mcp:<server>", "acp:<sessionId>", "host", ... */
    int64_t fired_at_turn;       /* 0 = not yet rendered (null) */
    const char *originating_agent_id; /* NULL = none */
    const char *meta_json;       /* _meta as compact JSON text; NULL = none */
    size_t meta_len;
    uint64_t seq;                /* injection order */
    /* append_only placement: index of the transcript message after which it
     * was first rendered (UINT32_MAX = not placed yet) */
    uint32_t anchor_msg;
    /* 0 = live. Otherwise the turn at which a reminder already placed in
     * append_only history expired or was cleared: it is no longer live (no TTL,
     * dedupe, budget or events) but its bytes stay at its anchor, so history
     * stays append-only, until the next compaction removes it. */
    int64_t retired_at_turn;
    /* removed inside one batch of ingest operations and not yet compacted out
     * (see qs_settle); never set in a state a public function returns */
    bool dead;
} qreminder;

typedef struct qserver {
    const char *name;
    bool emit;                   /* declared capabilities.reminders.emit */
    bool bridge_resources, bridge_tools, bridge_prompts; /* opt-in bridges */
    /* resource URIs the host subscribed to, in subscription order: by
     * resources/subscribe (listen NULL) or, in MCP 2026-07-28, by the
     * resourceSubscriptions of a subscriptions/listen request (listen = that
     * request's id as compact JSON); strings and arrays in the state's arena */
    const char **subs;
    const char **sub_listen;
    uint32_t nsubs, capsubs;
} qserver;

struct quire_state {
    qarena ar;
    const quire_allocator *a;
    const char *session_id;      /* for derived ids; "" when unknown */
    int64_t turn;
    uint64_t seq;
    qserver *servers;
    uint32_t nservers, capservers;
    qreminder *rems;             /* live reminders in injection order */
    uint32_t nrems, caprems;
    quire_reminder_limits lim;   /* as set (0 = default); see qs_limits() */
    uint32_t ndead;              /* rems marked dead, compacted by qs_settle */
    struct qs_index *ix;         /* lookup tables for inject (state.c); NULL = not built */
    uint64_t *srv_slot;          /* open-addressing table: hash tag << 32 | server index; NULL = not built */
    uint32_t srv_cap;
};

/* Compacts reminders removed by inject out of the array and drops the lookup
 * tables (rebuilt on demand). Every function that hands a state out, or walks
 * s->rems by index, works on a settled state. */
void qs_settle(quire_state *s);

/* Effective limits (defaults filled in). */
quire_reminder_limits qs_limits(const quire_state *s);

/* Fresh empty state. */
quire_state *qs_new(const quire_allocator *a, const char *session_id);
/* Deep copy (the next state starts as a clone of the previous). */
quire_state *qs_clone(const quire_state *s);

/* Reminders of state s that are rendered in turn T = s->turn + 1, in injection
 * order (audit_only excluded). Pointers into s; *n receives the count. The
 * array is allocated in ar. */
const qreminder **qs_live_for_turn(const quire_state *s, qarena *ar, uint32_t *n);

/* Retired reminders that still sit in append_only history (anchored), in
 * injection order; allocated in ar like qs_live_for_turn. */
const qreminder **qs_retired_anchored(const quire_state *s, qarena *ar, uint32_t *n);

/* The state after a rendered model call: turn + 1, firedAtTurn set on the
 * reminders that were rendered for the first time, every ttlRemaining - 1,
 * reaching 0 -> removed with reminder_expired(ttl_expired). Mutates s. */
void qs_after_render(quire_state *s, qbuf *events);

/* The state after a compaction: preserveOnCompact reminders kept, the rest
 * removed with reminder_expired(compacted_out). TTLs untouched. Mutates s.
 * *kept / *removed receive the counts. */
void qs_after_compact(quire_state *s, qbuf *events, uint32_t *kept, uint32_t *removed);

/* ---- lifecycle operations (reminders/state.c); all mutate s in place ---- */

/* Injects r (strings anywhere: they are copied into s). Checks the id against
 * live reminders of other origins (QUIRE_E_INVALID, field "id", s unchanged),
 * then: seq + 1, derives the id when r->id is NULL, removes the reminders it
 * replaces (same id, or same dedupeKey within its origin; the host's reaches
 * every origin) with one reminder_deduped, enforces the per-origin budget
 * (oldest of that origin dropped with reminder_dropped(budget)) and appends.
 * audit_only reminders get their audit reminder_emitted event. *deduped and
 * *id_out (both optional) receive the count replaced and the new id. */
quire_status qs_inject(quire_state *s, const qreminder *r, qbuf *events, uint32_t *deduped, const char **id_out,
                       quire_error *err);

typedef struct qs_selector {
    const char *id, *tag, *dedupe_key, *origin; /* NULL = any */
} qs_selector;
/* Removes every reminder matching all given fields with
 * reminder_expired(cleared). Returns the count removed. */
uint32_t qs_clear(quire_state *s, const qs_selector *sel, qbuf *events);

/* The child state of a sub-agent (see quire_state_propagate). NULL on OOM. */
quire_state *qs_propagate(const quire_state *parent, const char *agent_id, const char *child_session_id);

/* The record of MCP server `name`, created (emit false, no bridges) when
 * create is set. NULL when absent or on OOM. */
qserver *qs_server(quire_state *s, const char *name, size_t len, bool create);
/* Subscriptions of a server (DESIGN 11, push routing): add (no-op when
 * present) and remove (no-op when absent) a URI; false on OOM. */
bool qs_sub_add(quire_state *s, qserver *sv, const char *uri, size_t len, const char *listen);
void qs_sub_remove(qserver *sv, const char *uri, size_t len);
bool qs_sub_has(const qserver *sv, const char *uri, size_t len);
/* Removes the subscriptions of listen request `listen` (its stream ended);
 * returns how many. */
uint32_t qs_sub_end_listen(qserver *sv, const char *listen);
/* The key of a JSON-RPC request id (node id of d): compact JSON, strings in
 * one spelling; in ar (a scratch arena will do: qs_sub_add copies). NULL on OOM. */
const char *qs_listen_key(qarena *ar, const quire_allocator *a, const qj_doc *d, uint32_t id);
/* Writes the distinct subscribed URIs of sv (NULL: none) as a JSON array. */
void qs_sub_write_uris(qw *w, const qserver *sv);
/* Sets the session id (copied). false on OOM. */
bool qs_set_session_id(quire_state *s, const char *id, size_t len);

/* Applies one session-log line (DESIGN 7) of type mcp, acp, reminder or clear,
 * already parsed: node is the line object in d, ptr its JSON Pointer prefix
 * ("" for a JSONL line, "/3" for an element of an array). Mutates s only on
 * success (validation happens first). ACP JSON-RPC responses are appended to
 * responses as JSONL lines (may be NULL). Error offsets are into d->src. */
quire_status qs_apply_line(quire_state *s, const qj_doc *d, uint32_t node, const char *ptr, qbuf *events,
                           qbuf *responses, quire_error *err);

/* The same for a line that parsed only once its strings were repaired
 * (qs_parse_repaired): taint is the original JSON error; inside the message
 * of an mcp or acp line it drops that message's reminder with an event
 * (docs/reminders.md, "Peers' invalid text"), elsewhere it is the error. */
quire_status qs_apply_line_repaired(quire_state *s, const qj_doc *d, uint32_t node, const char *ptr, qbuf *events,
                                    qbuf *responses, const quire_error *taint, quire_error *err);
/* A peer's invalid text (docs/reminders.md, "Peers' invalid text"): parses
 * into d a copy of json (len bytes written to copy, which the caller
 * allocates, owns and keeps as long as d) with each bad \u escape made
 * \ufffd and each bad byte '?', lengths and offsets unchanged. QUIRE_E_NOMEM
 * when copy is NULL or the parse ran out of memory; QUIRE_E_JSON when nothing
 * needed repair or the repaired text does not parse either (d is then empty). */
quire_status qs_parse_repaired(qj_doc *d, const char *json, size_t len, char *copy, const qj_opts *jo,
                               const quire_allocator *a);
/* Whether the session-log line object at node line is an mcp or acp line
 * whose message holds byte offset off: the one place a peer's invalid text is
 * tolerated (only to drop that message's reminder). */
bool qs_peer_text_at(const qj_doc *d, uint32_t line, size_t off);

/* Writes {"sessionUpdate":"reminder_emitted",...} for r with the slot decision. */
void qev_reminder_emitted(qbuf *events, const qreminder *r, int64_t turn, const char *slot,
                          const char *requested_slot, const char *reason);

#endif
