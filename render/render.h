/* Rendering: transcript (+ reminders) -> one provider's request body.
 *
 * The driver (render.c) resolves the capability row, then builds a small plan:
 *   - the slot of every reminder of this turn (slots.c), grouped into one
 *     wrapped block per (anchor, slot): tail groups, plus earlier anchors under
 *     the append_only placement;
 *   - the cache breakpoints (cache.c): which tool / system block / message block
 *     carries a marker, within the row's limit;
 * and calls the dialect encoder (enc_<dialect>.c), which writes the body with
 * c->w. Encoders branch on the dialect's rules and the row's fields only. */
#ifndef QUIRE_RENDER_RENDER_H
#define QUIRE_RENDER_RENDER_H

#include "reminders/state.h"
#include "core/transcript.h"
#include "providers/caps.h"
#include "render/params.h"

typedef enum qslot { QSLOT_SYSTEM, QSLOT_DEVELOPER, QSLOT_USER_BLOCK, QSLOT_EPHEMERAL_CACHE } qslot;
const char *qslot_name(qslot s);

#define QR_TAIL UINT32_MAX

/* Reminders rendered together: one wrapped text block (or one developer message). */
typedef struct qr_group {
    qslot slot;         /* QSLOT_DEVELOPER, QSLOT_USER_BLOCK or QSLOT_EPHEMERAL_CACHE */
    uint32_t anchor;    /* transcript message after which it sits; QR_TAIL = the tail */
    qstr text;          /* the block's text, plain bytes (wrapper included for user blocks) */
} qr_group;

/* Where a cache breakpoint goes. */
typedef enum qr_site { QRS_TOOL, QRS_SYSTEM, QRS_BLOCK } qr_site;
typedef struct qr_mark {
    qr_site site;
    uint32_t a, b;      /* tool index | system block index | (message, block) */
    qval input;         /* the marker given in the input (absent: managed) */
    bool ttl_1h;        /* managed: needs "ttl":"1h" (a later 1h marker exists) */
} qr_mark;

typedef struct qr_ctx {
    const quire_transcript *t;
    const quire_render_options *ro;
    qcaps caps;               /* the resolved capability row */
    const char *model;        /* resolved model name */
    uint32_t max_tokens;      /* 0 = not written */
    qw *w;
    qbuf *events;             /* JSONL lifecycle events, may be NULL */
    quire_error *err;
    quire_status st;          /* sticky: first error of an encoder */
    qarena scratch;
    int64_t turn;             /* the turn being rendered: state->turn + 1 */
    const qreminder **rems;   /* reminders to render this turn, injection order */
    uint32_t nrems;
    const qreminder **retired; /* append_only: expired ones still in history, at their anchors */
    uint32_t nretired;
    quire_state *next;        /* the state after this call (being built) */
    /* plan */
    qstr sys_extra;           /* system-slot reminders (a paragraph), absent when none */
    qr_group *groups;         /* sorted by anchor, tail last */
    uint32_t ngroups;
    qr_mark marks[16];
    uint32_t nmarks;
    uint32_t first_user;      /* first user-role message (system folding), UINT32_MAX = none */
    struct qr_memo *memo;     /* a live session's stored encodings (render/memo.h); NULL = stateless */
    uint32_t changed_from;    /* first message the provider rules changed (UINT32_MAX: none) */
    quire_transcript *memo_view; /* the memo's view of the transcript (render.c apply_rules), or NULL */
    /* request parameters (DESIGN 13); never NULL (an empty set when none given) */
    const qparams *params;
    const char *betas[4];     /* anthropic-beta features the body needs (envelope) */
    uint32_t nbetas;
    uint8_t unit_betas[4];    /* the features the memo unit being encoded needed, in order (qr_beta_id + 1) */
    uint8_t nunit_betas;
    bool verbatim;            /* an opaque item was written as given: the body is validated before it is returned */
} qr_ctx;

/* Dialect encoders: write the whole request body with c->w. */
quire_status qr_encode_anthropic(qr_ctx *c);
quire_status qr_encode_bedrock(qr_ctx *c);
quire_status qr_encode_openai_chat(qr_ctx *c);
quire_status qr_encode_mistral(qr_ctx *c);
quire_status qr_encode_ollama(qr_ctx *c);
quire_status qr_encode_openai_responses(qr_ctx *c);
quire_status qr_encode_gemini(qr_ctx *c);

/* ---- slots.c ---- */
/* Decides every reminder's slot, writes reminder_emitted events, builds
 * c->sys_extra and c->groups, sets anchors in c->next (append_only). */
quire_status qr_plan_slots(qr_ctx *c);
/* Groups anchored after message k ([*first, *first + n)); k = QR_TAIL for the tail. */
uint32_t qr_groups_at(const qr_ctx *c, uint32_t k, uint32_t *first);
/* True when some tail group is a user block (user_block or ephemeral_cache). */
bool qr_has_tail_user(const qr_ctx *c);
bool qr_has_tail_developer(const qr_ctx *c);

/* ---- cache.c ---- */
quire_status qr_plan_cache(qr_ctx *c);
const qr_mark *qr_mark_at(const qr_ctx *c, qr_site site, uint32_t a, uint32_t b);
/* Writes the marker value ({"type":"ephemeral"...} or the input's). */
void qr_write_cache_control(qr_ctx *c, const qr_mark *m);

/* ---- shared helpers (render.c) ---- */
/* Content that the target cannot express: an error naming the block, or with
 * lossy an event. Returns true when the caller should skip it (lossy). */
bool qr_unsupported(qr_ctx *c, uint32_t msg, int32_t block, const char *what);
/* The same for part `part` of a tool result's content. */
bool qr_unsupported_part(qr_ctx *c, uint32_t msg, uint32_t block, uint32_t part, const char *what);
/* A model-private artefact (thinking, an opaque item of another provider)
 * that the target has no slot for: dropped with an event. */
void qr_drop_artefact(qr_ctx *c, uint32_t msg, uint32_t block, const char *detail);
/* A structural change the renderer made for the dialect (merged messages,
 * folded system prompt, inserted user turn), reported as an event. */
void qr_event_adjusted(qr_ctx *c, const char *change, uint32_t msg, const char *detail);
/* Gemini 3 and later: the first functionCall of each model content of the
 * current turn must carry a thoughtSignature (enc_gemini.c, validate.c). */
bool qr_gemini_signs_calls(const char *model);
/* ---- request parameters (render.c; docs/params.md) ---- */
/* A parameter the target cannot carry: an error naming it (/name), or with
 * lossy a request_adjusted event (change parameter_dropped). */
void qr_param_unsupported(qr_ctx *c, const char *name, const char *why);
/* A base64 image on a row that takes only jpeg, png, gif and webp
 * (qcaps_image_types_limited): true when it may be written; else an error
 * naming the block, or with lossy an event (false: leave it out). */
bool qr_image_type_ok(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi);
/* Whether the request enables thinking (a reasoning budget, Anthropic and
 * Bedrock): not when the tool loop in progress was started by an assistant
 * message that does not begin with thinking, which Claude rejects (an error
 * naming /reasoning/budgetTokens, or with lossy the budget is dropped). */
bool qr_thinking_budget(qr_ctx *c);
/* A number parameter above the dialect's maximum: an error naming it. */
bool qr_param_above(qr_ctx *c, const char *name, qval v, double max);
/* Writes the stop parameter as an array of strings. */
void qr_write_stop(qr_ctx *c);
/* Records an anthropic-beta feature the body needs. */
void qr_need_beta(qr_ctx *c, const char *beta);
/* The anthropic-beta features the encoders name, by number (the memo keeps
 * the ones a stored unit needs): NULL past the last. */
const char *qr_beta_name(uint8_t id);

/* ---- vocabulary helpers (render.c) ---- */
/* Whether p names the provider being rendered for (file ids, provider tools,
 * server tool blocks go only to their own provider). */
bool qr_is_provider(const qr_ctx *c, qstr p);
/* A tool the target cannot express: an error naming /tools/<i>, or with lossy
 * a content_dropped event (the tool is left out). */
void qr_tool_unsupported(qr_ctx *c, uint32_t tool, const char *what);
/* A text block's citations where the dialect has no place for them: dropped
 * with an event (the text itself is rendered). */
void qr_drop_citations(qr_ctx *c, uint32_t msg, uint32_t block);
/* The media rules every encoder shares for block b (image, document, audio,
 * file): a fileId of another provider is unsupported. Returns false (after
 * reporting) when the block must be skipped. */
bool qr_media_ok(qr_ctx *c, const qblock *b, uint32_t msg, uint32_t block);
/* Joins the system blocks (and the system-slot paragraph) with blank lines. */
qstr qr_system_joined(qr_ctx *c);
/* Plain bytes of a qstr (decoded into scratch if escaped). */
qstr qr_plain(qr_ctx *c, qstr s);
/* Writes "data:<mediaType>;base64,<data>" as a JSON string. */
void qr_write_data_url(qr_ctx *c, qstr media_type, qstr data);
/* Writes a JSON value as a JSON string holding its exact bytes (tool arguments). */
void qr_write_value_as_string(qr_ctx *c, qval v);
/* Tool inputs (docs/providers.md, "Provider rules"): dialects that take an
 * object refuse a non-object input of a function call (qr_unsupported);
 * a custom call's string input is wrapped as {"input": "<string>"}. */
bool qr_tool_input_ok(qr_ctx *c, uint32_t mi, uint32_t bi, const qblock *b);
void qr_write_tool_input(qr_ctx *c, const qblock *b);
/* The same object as the content of a JSON string (Chat arguments). */
void qr_write_tool_input_string(qr_ctx *c, const qblock *b);
/* The toolCall block that a result answers (NULL when none). */
const qblock *qr_call_for(const qr_ctx *c, uint32_t before_msg, qstr call_id);
/* Index of the tool call that a result answers, for names (Gemini, Ollama). */
qstr qr_tool_name_for(const qr_ctx *c, uint32_t before_msg, qstr call_id);
/* Writes a tool's name as the dialect takes it (providers/caps.h,
 * qcaps_name_rule): as it is, or mapped when the dialect would refuse it;
 * the same way in the tool list, the calls, the results that name their
 * call and toolChoice, so an answer's call is mapped back from the request's
 * tools (respond/). at: QR_NAME_TOOLS for the tool list, which reports each
 * mapped pair (request_adjusted tool_name_mapped); QR_NAME_CHOICE for
 * toolChoice (a tool of the list); else the message index of a call or
 * result, reported when no tool of the list has that name. */
#define QR_NAME_TOOLS UINT32_MAX
#define QR_NAME_CHOICE (UINT32_MAX - 1)
void qr_write_tool_name(qr_ctx *c, qstr name, uint32_t at);
/* Writes a tool call id as the dialect takes it (providers/caps.h,
 * qcaps_id_rule): as it is, or mapped (a function of the id alone, so a
 * call and its result agree and a stored unit stays valid) when the dialect
 * would refuse it. call: the id of a call in message msg, which reports the
 * pair (request_adjusted tool_call_id_mapped); false for a result. Rows that
 * map ids themselves (toolCallIds alnum9) have theirs written as they are. */
void qr_write_call_id(qr_ctx *c, qstr id, uint32_t msg, bool call);
/* Whether the system prompt is folded into the first user message. */
static inline bool qr_fold_system(const qr_ctx *c) {
    return c->caps.system == QSYS_FIRST_USER && ((c->t->has_system && c->t->nsystem) || qstr_present(c->sys_extra));
}
/* Writes an opaque item or a provider tool as the transcript gives it; the
 * body is then checked with the validator before it is returned (render.c). */
static inline void qr_write_as_given(qr_ctx *c, qval v) {
    qw_qval(c->w, v);
    c->verbatim = true;
}
static inline bool qr_has_system(const qr_ctx *c) {
    return (c->t->has_system && c->t->nsystem) || qstr_present(c->sys_extra);
}

#endif
