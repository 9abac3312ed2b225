/* The session engine: one implementation of the quire.session/1 semantics,
 * shared by `quire replay` (session/replay.c, lines from a log) and the live
 * session (session/session.c, lines built from API calls). Every call of the
 * live session is turned into the log line that records it and applied here,
 * so the log a session returns replays to exactly the requests it produced.
 *
 * Two modes:
 *   replay  (live = false): a render line commits its turn at once and the
 *           step's output is the JSONL stream of DESIGN 7 in `out`;
 *   session (live = true):  a render line leaves the turn pending (the next
 *           state in `pending`), nothing is written to `out`; events, ACP
 *           responses and compaction reports go raw to `sev`, `sresp` and
 *           `sreport`.
 */
#ifndef QUIRE_SESSION_ENGINE_H
#define QUIRE_SESSION_ENGINE_H

#include "session/log.h"

#include "core/transcript.h"
#include "reminders/state.h"

typedef struct idset {
    const char **keys;
    uint32_t *lens;
    uint32_t n, cap; /* cap is a power of two or 0 */
} idset;

struct quire_replay {
    const quire_allocator *a;
    quire_options opts;
    quire_replay_options ro;
    char *owned;
    size_t owned_len;
    qline_iter it;
    qarena ar;
    quire_transcript *t;
    quire_state *state;
    const char *session_id;
    const char *provider, *model; /* the session's target */
    qj_doc **docs;
    uint32_t ndocs, capdocs;
    quire_transcript **retired; /* transcripts replaced by compaction (borrowed from) */
    uint32_t nretired, capretired;
    qbuf out;    /* output lines of the current step */
    qbuf req;    /* last request body */
    idset calls; /* toolCall ids seen */
    bool seen_session, seen_event;
    bool failed;
    char target_provider[128], target_model[256];
    /* render settings of the session line (renderPolicy, maxTokens) and the
     * capability overrides (borrowed) */
    quire_render_options rpol;
    const quire_caps *caps;
    const char *compact_policy; /* compactPolicy of the session line, compact JSON; NULL = none */
    size_t compact_policy_len;
    /* session mode */
    bool live;
    quire_state *pending;       /* the state after the pending turn (live render) */
    int64_t pending_turn;
    bool interrupt_pending;
    qbuf sev, sresp, sreport;   /* raw events, ACP responses, compaction report */
    /* incremental rendering (render/memo.h): the stored encodings, whether
     * req holds the current body, and the running digest of the body's
     * stable pieces (the FNV state after each one) */
    struct qr_memo *memo;
    bool req_flat;
    bool restoring;             /* quire_session_restore: render lines write no stream line */
    uint32_t nwindow, nfull;    /* bodies validated on a window / in full (tests) */
    size_t flat_written;        /* bytes the last qrp_flatten wrote (tests) */
    size_t req_keep;            /* leading bytes of req that are the current body's too */
    struct qrp_dlink *dchain;
    size_t ndchain, capdchain;
    uint64_t dchain_epoch, dchain_gen;
    qbuf env_path, env_headers; /* the pending turn's request path (NUL-terminated) and headers (JSON) */
};

/* The current body (after a render line) in one buffer: r->req. False on OOM. */
bool qrp_flatten(quire_replay *r);

/* Applies one log line (its bytes must stay alive as long as r: message and
 * compact lines are referenced by the transcript). lineno and off locate the
 * line in its source for errors. */
quire_status qrp_apply(quire_replay *r, const char *line, size_t len, uint32_t lineno, size_t off,
                       quire_replay_step *step, quire_error *err);

/* True when the toolCall id (decoded bytes) has been seen in the log. */
bool qrp_call_seen(const quire_replay *r, const char *id, size_t n);

/* The estimate of the request the session's next render would send to
 * provider/model (session/estimate.c): the session's render policy, caps,
 * transcript and committed state; counter (may be NULL) supplies a host token
 * counter. */
quire_status qrp_estimate(const quire_replay *r, const char *provider, const char *model,
                          const quire_compact_policy *counter, const quire_options *opts, quire_estimate *out,
                          quire_error *err);

/* budgetScope "request" (session/estimate.c): turns p's budget for the whole
 * request to the session's target into the budget compaction measures (the
 * transcript with system and tools), by the current ratio of the two
 * estimates; p then has the transcript scope. Other scopes are left alone. */
quire_status qrp_request_budget(const quire_replay *r, quire_compact_policy *p, quire_error *err);

#endif
