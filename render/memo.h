/* The render memo: what a live session keeps between turns so that a turn
 * encodes only what changed (DESIGN 11).
 *
 * The memo holds, for the current target, the encoded bytes of each wire
 * unit (one loop step of a dialect encoder: a run of transcript messages and
 * what it writes) under a key of everything those bytes depend on: the
 * messages [i, j) (by identity: the address of their blocks, only where it
 * cannot be handed out again while the key lives, see qr_memo_stable), the
 * run's role and variant bits, whether an
 * element precedes it in the array (the separator is part of the bytes) and
 * the cache breakpoints that fall in [i, j). A unit that touches a reminder
 * group, the folded system prompt or the tail is never kept: it is encoded
 * every turn. A kept unit keeps the events its encoding reported (a dropped
 * artefact, a merge: they depend on its messages and the target only) and
 * the anthropic-beta features it needed (qr_need_beta): a reuse writes the
 * events again and names the features again, in their order.
 * The request head (model, system, tools) is encoded every turn and
 * interned: equal bytes reuse the stored copy.
 *
 * The context (dialect row, model, transcript, placement, pretty) is checked
 * at every render: any change (a target switch, a compaction that replaced
 * the transcript, a policy or caps change) empties the memo.
 *
 * A render starts at the first unit that can have changed: the units the
 * last render took or wrote one after another right after the head (the
 * reused prefix, qr_memo_prefix) are taken as they are, without a look, up
 * to the first new message, breakpoint that appeared or went, anchored
 * reminder group or message whose view the provider rules changed since the
 * last render (qr_rules: a message they change the same way every turn keeps
 * the same blocks). Their pieces stay
 * in place, and qr_memo_same tells the consumers of the body (the running
 * digest, the contiguous body, the segments, the validation window) how
 * much of the last body is unchanged.
 *
 * The body of a memo render is a list of pieces: bytes written this turn
 * (in the memo's fresh buffer) and stored units (in the memo's storage,
 * immutable until the storage epoch changes). Dialects with a memo path:
 * anthropic_messages and openai_chat. Every other dialect (and any render
 * with lossy) renders in full, as one fresh piece. */
#ifndef QUIRE_RENDER_MEMO_H
#define QUIRE_RENDER_MEMO_H

#include "render/render.h"
#include "render/wire.h"

typedef struct qr_memo qr_memo;

qr_memo *qr_memo_new(const quire_allocator *a);
void qr_memo_free(qr_memo *m);
/* Stale bytes (stored units replaced since) are tolerated up to the live
 * bytes + slack before the storage is compacted (default 1 MB); slack 0
 * compacts whenever a byte is stale (tests). */
void qr_memo_set_slack(qr_memo *m, size_t bytes);
/* Forgets every stored unit (and the storage: the epoch changes). */
void qr_memo_clear(qr_memo *m);

/* quire_render with a memo: on success res->request is empty and the body is
 * the memo's pieces (qr_memo_pieces), valid until the next call with m. */
quire_status qr_render_memo(const quire_transcript *t, const quire_state *state, const quire_render_options *ro,
                            const quire_options *opts, qr_memo *m, quire_render_result *res, quire_error *err);

/* A piece of the last body. stable: the bytes live in the memo's storage and
 * stay put (same pointer, same bytes) as long as the epoch does not change. */
enum { QR_PIECE_FRESH, QR_PIECE_HEAD, QR_PIECE_UNIT };
typedef struct qr_piece {
    const char *p;
    size_t n;
    bool stable;
    uint8_t kind;        /* QR_PIECE_* */
    bool marked, sep;    /* a unit: carries a breakpoint; starts with a separator */
    uint8_t role;        /* a unit: its role (the encoder's variant) */
    bool closed;         /* a unit that leaves no call open (not an assistant's) */
    bool written;        /* a unit this render encoded (not one it took from storage) */
} qr_piece;
const qr_piece *qr_memo_pieces(const qr_memo *m, size_t *n, size_t *body_len);
/* The pieces with contiguous neighbours merged (for writev). */
const quire_segment *qr_memo_segments(qr_memo *m, size_t *n);
uint64_t qr_memo_epoch(const qr_memo *m);
/* Counters for tests and benchmarks: units reused and encoded by the last render. */
void qr_memo_counts(const qr_memo *m, uint32_t *reused, uint32_t *encoded);
/* Units the last render looked at one by one (its key checked or encoded);
 * the units of the reused prefix are not among them (tests). */
uint32_t qr_memo_visited(const qr_memo *m);
/* The last body's leading pieces that are the pieces of the body before it
 * (same pointers, same bytes: the reused prefix and an unchanged head); 0
 * when unknown. *gen: successful renders so far (a consumer that kept
 * something of the body of render gen - 1 may keep that much of it);
 * *bytes: their length. */
size_t qr_memo_same(const qr_memo *m, uint64_t *gen, size_t *bytes);

/* The body with stretches of stored units left out, for a validation that
 * costs what changed: never the head, the first element, a unit with a
 * breakpoint, what was written this turn or the unit on each side of
 * those; a stretch [s, e) goes only when the units before s and before e are
 * closed units of one role (so the unit at e follows a unit like the one it
 * followed, and no call is left open). One unit each way is enough: the
 * validator's rules between messages reach one message each way (roles
 * alternate, results answer the calls of the assistant message before them, a
 * mid-conversation system message sits between a user and an assistant turn,
 * the thinking rules read the last message and the assistant one before it,
 * which is never closed and so never left out). The bytes are the memo's (valid until
 * the next render); the scan resumes where the last body's was still the
 * same. False when nothing would be left out. */
bool qr_memo_window(qr_memo *m, const char **p, size_t *n);

/* Whether what a render found in messages [0, n) of transcript seen (message
 * n - 1 then held the blocks last) still holds for t: the same transcript,
 * at most appended to since. The scans below resume after n when it does. */
static inline bool qr_scan_holds(const quire_transcript *seen, uint32_t n, const qblock *last,
                                 const quire_transcript *t) {
    return seen == t && n <= t->nmsgs && (n == 0 || t->msgs[n - 1].blocks == last);
}

/* What the transcript checks of render.c have verified for a transcript:
 * messages [0, n) (the last one's blocks identify it) and, for the dialects
 * that want toolCall ids unique request-wide, the ids of their calls (an
 * open-addressing set). A render checks only the messages after n. */
typedef struct qr_idslot {
    qstr id;
    uint32_t msg;
    bool used;
} qr_idslot;
typedef struct qr_checked {
    const quire_transcript *t;
    bool global;
    uint32_t n;
    const qblock *last;
    qr_idslot *ids;
    uint32_t nids, capids; /* capids: a power of two or 0 */
} qr_checked;
qr_checked *qr_memo_checked(qr_memo *m);
/* The blocks of messages [0, n) of transcript t that carry an input cache
 * marker (cache.c), in order: a render scans only the messages after n.
 * t is the rules view, whose blocks depend on the target: emptying the memo
 * (a target switch) forgets them. */
typedef struct qr_inmarks {
    const quire_transcript *t;
    uint32_t n;
    const qblock *last;
    uint32_t *k, *b;
    uint32_t cnt, cap;
} qr_inmarks;
qr_inmarks *qr_memo_inmarks(qr_memo *m);
/* Whether message k of t (the transcript or the rules view a render reads)
 * has blocks whose address may identify it in a later render: the
 * transcript's own or the view's kept copy, never the render's scratch
 * (memo.c, next to qr_unit_begin). */
bool qr_memo_stable(const qr_memo *m, const quire_transcript *t, uint32_t k);
bool qr_inmarks_push(qr_memo *m, uint32_t k, uint32_t b);
/* What the provider rules (render.c apply_rules) found in messages [0, n)
 * of transcript t (the last one's blocks identify it) for one target: the
 * messages they changed (in order). A render applies them to the messages
 * after n and to those only. */
typedef struct qr_rules {
    const quire_transcript *t;
    uint32_t n;
    const qblock *last;
    int dialect;
    bool thinking;
    char provider[64];
    uint32_t *chg;
    uint32_t nchg, cap;
    /* the view the encoders see: t with the messages the rules changed, in
     * the memo (kept up to date with what changed), so that a message the
     * rules change the same way every turn keeps the same blocks (its stored
     * encoding stays usable) */
    quire_transcript vt;
    qmsg *vmsgs;
    uint32_t nv, capv;       /* vmsgs[0, nv) mirror t->msgs[0, nv) but for vchg */
    uint32_t *vchg;          /* the messages changed in the view, in order */
    uint32_t nvchg, capvchg;
    qblock **kblk;           /* per message: its last kept blocks (in karena) */
    uint32_t *knb;
    qarena karena;           /* kept blocks: freed only with the memo's encodings */
} qr_rules;
qr_rules *qr_memo_rules(qr_memo *m);
bool qr_rules_push(qr_memo *m, uint32_t k);
/* The blocks (or tool result parts) of messages [0, n) of transcript t whose
 * image detail level the target drops (render.c): a render reports them
 * again and scans only the messages after n. */
typedef struct qr_noted {
    uint32_t k, b;
    int32_t part;
} qr_noted;
typedef struct qr_details {
    const quire_transcript *t;
    uint32_t n;
    const qblock *last;
    qr_noted *v;
    uint32_t cnt, cap;
} qr_details;
qr_details *qr_memo_details(qr_memo *m);
bool qr_details_push(qr_memo *m, uint32_t k, uint32_t b, int32_t part);
/* Brings the view in line with t (the messages changed last time restored,
 * the new ones copied); old, oldb, nold: the messages the view had changed and
 * their blocks then (in c->scratch). False on OOM. */
bool qr_rules_view_sync(qr_memo *m, const quire_transcript *t, qarena *scratch, uint32_t **old, qblock ***oldb,
                        uint32_t *nold);
/* Message k of the view becomes kept[0, nk). pure: kept is what the rules
 * make of the message whatever else the transcript holds (blocks dropped, a
 * tool result's blank parts taken out; not the trimmed final message): the
 * view keeps one copy of it (tool result parts too), the same blocks every
 * turn; otherwise the view holds kept (in c->scratch) for this render.
 * False on OOM. */
bool qr_rules_view_set(qr_memo *m, uint32_t k, qblock *kept, uint32_t nk, bool pure);
/* Empties the id set; false when growing it failed. */
void qr_checked_reset(qr_memo *m);
bool qr_checked_grow(qr_memo *m, uint32_t want);

/* ---- used by the encoders (no-ops when c->memo is NULL) ---- */
typedef struct qr_unit {
    uint32_t slot;       /* entry index: the unit's first transcript message */
    uint32_t i, j;       /* transcript messages [i, j) */
    uint32_t variant;    /* encoder-specific bits that change the bytes */
    bool keep;           /* false: encode and do not store */
    size_t start;        /* out offset where the unit began */
    size_t ev_start;     /* events length where the unit began */
    uint32_t nwire;      /* wire messages the unit wrote (set by the encoder) */
    uint64_t marks;      /* hash of the breakpoints in [i, j) */
    bool marked;         /* some breakpoint falls in [i, j) */
    bool sep;            /* an element precedes it */
} qr_unit;

/* Starts a unit. keep = false when the unit must be encoded and not stored.
 * Returns true when a stored encoding was reused: the caller skips the unit
 * (u->nwire tells how many wire messages it counts for). */
bool qr_unit_begin(qr_ctx *c, qr_unit *u, uint32_t i, uint32_t j, uint32_t variant, bool keep);
/* Ends a unit that was encoded: stores it when it may be kept. */
void qr_unit_end(qr_ctx *c, qr_unit *u);
/* True when any reminder group is anchored after a message of [i, j). */
bool qr_groups_in(const qr_ctx *c, uint32_t i, uint32_t j);
/* The request head written so far (from offset 0): interned. */
void qr_memo_head(qr_ctx *c);

/* The reused prefix: the units from the first that the last render took or
 * wrote one after another right after the head. A render may take the first
 * K of them without looking at them when nothing they depend on can have
 * changed: the same transcript and context, no breakpoint, anchored reminder
 * group or provider-rule change before their end, their last message the
 * same and followed (then) by a message that is no instruction.
 * qr_memo_prefix (before qr_memo_head) finds K and the runs it starts and
 * ends with, *msgs = the first message after them; qr_memo_skip (right
 * after the head, before any unit) takes them: false when it cannot. */
uint32_t qr_memo_prefix(qr_ctx *c, qr_run *first, qr_run *last, uint32_t *msgs);
bool qr_memo_skip(qr_ctx *c, uint32_t k, uint32_t *nwire);

#endif
