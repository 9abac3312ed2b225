/* Rendering: transcript (+ reminders) -> one provider's request body.
 * The driver resolves the target, the dialect encoders write the body. */
#ifndef QUIRE_RENDER_RENDER_H
#define QUIRE_RENDER_RENDER_H

#include "core/state.h"
#include "core/transcript.h"

typedef struct qr_ctx {
    const quire_transcript *t;
    const quire_render_options *ro;
    const char *model;        /* resolved model name */
    uint32_t max_tokens;      /* resolved */
    qw *w;
    qbuf *events;             /* JSONL lifecycle events, may be NULL */
    quire_error *err;
    qarena scratch;
    int64_t turn;             /* the turn being rendered: state->turn + 1 */
    const qreminder **rems;   /* reminders to render this turn, injection order */
    uint32_t nrems;
    quire_state *next;        /* the state after this call (being built) */
} qr_ctx;

/* Dialect encoders: write the whole request body with c->w. */
quire_status qr_encode_anthropic(qr_ctx *c);

/* Appends one event line {"sessionUpdate":"reminder_dropped",...}-style to c->events. */
void qr_event_dropped_block(qr_ctx *c, uint32_t msg, uint32_t block, const char *reason, const char *detail);

#endif
