#include "render/render.h"

#include <stdio.h>

#define QR_DEFAULT_MAX_TOKENS 4096u

void qr_event_dropped_block(qr_ctx *c, uint32_t msg, uint32_t block, const char *reason, const char *detail) {
    if (!c->events) return;
    qw w;
    qw_init(&w, c->events, false);
    qw_obj_begin(&w);
    qw_key(&w, "sessionUpdate"); qw_strz(&w, "content_dropped");
    qw_key(&w, "messageIndex"); qw_int(&w, msg);
    qw_key(&w, "blockIndex"); qw_int(&w, block);
    qw_key(&w, "reason"); qw_strz(&w, reason);
    qw_key(&w, "detail"); qw_strz(&w, detail);
    qw_obj_end(&w);
    qw_dispose(&w);
    qbuf_putc(c->events, '\n');
}

void quire_render_result_free(quire_render_result *r) {
    if (!r) return;
    quire_bytes_free(&r->request);
    quire_bytes_free(&r->events);
    quire_state_free(r->state);
    r->state = NULL;
}

quire_status quire_render(const quire_transcript *t, const quire_state *state, const quire_render_options *ro,
                          const quire_options *opts, quire_render_result *res, quire_error *err) {
    memset(res, 0, sizeof *res);
    quire_bytes *request = &res->request;
    if (!t || !ro) return q_err(err, QUIRE_E_INVALID, "quire_render: transcript and options are required");
    if (!ro->provider || !*ro->provider) return q_err(err, QUIRE_E_INVALID, "no provider given");
    const quire_allocator *a = q_alloc_of(opts);
    qbuf out;
    qbuf_init(&out, a);
    qw w;
    qw_init(&w, &out, ro->pretty != 0);
    qr_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t; c.ro = ro; c.w = &w; c.err = err;
    c.max_tokens = ro->max_tokens ? ro->max_tokens : QR_DEFAULT_MAX_TOKENS;
    qarena_init(&c.scratch, a);
    qbuf events;
    qbuf_init(&events, a);
    c.events = &events;
    quire_status st = QUIRE_OK;
    /* the next state starts as a copy of the given one */
    c.next = state ? qs_clone(state) : qs_new(a, NULL);
    if (!c.next) { qarena_free(&c.scratch); qbuf_free(&events); qbuf_free(&out); return q_oom(err); }
    c.turn = c.next->turn + 1;
    c.rems = qs_live_for_turn(c.next, &c.scratch, &c.nrems);
    if (!c.rems) st = q_oom(err);
    if (st) {
    } else if (strcmp(ro->provider, "anthropic") == 0) {
        c.model = ro->model ? ro->model : "claude-sonnet-4-5";
        st = qr_encode_anthropic(&c);
    } else {
        st = q_err(err, QUIRE_E_INVALID, "unknown provider \"%s\"", ro->provider);
    }
    qw_dispose(&w);
    if (st == QUIRE_OK) qs_after_render(c.next, &events);
    qarena_free(&c.scratch);
    if (st == QUIRE_OK && (out.oom || events.oom || !qbuf_take(&out, request) || !qbuf_take(&events, &res->events)))
        st = q_oom(err);
    if (st) {
        qbuf_free(&out);
        qbuf_free(&events);
        quire_bytes_free(&res->request);
        quire_state_free(c.next);
        return st;
    }
    res->state = c.next;
    return QUIRE_OK;
}
