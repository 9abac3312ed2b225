/* Helpers of the render rule tests (test_rules.c, test_render_vocab.c, test_from.c): parse a
 * transcript, render it, and check that every successful body passes
 * quire_validate for the same target (render never returns a body its own
 * validator rejects). Include after unit.h. */
#ifndef QUIRE_TESTS_RENDER_CHECK_H
#define QUIRE_TESTS_RENDER_CHECK_H
#include "quire.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static quire_transcript *tr(const char *json) {
    quire_transcript *t = NULL;
    quire_error e;
    if (quire_transcript_parse(json, strlen(json), NULL, &t, &e)) {
        fprintf(stderr, "transcript: %s %s\n", e.pointer, e.message);
        return NULL;
    }
    return t;
}

typedef struct out {
    quire_status st;
    bool parsed;     /* the transcript parsed (else st is QUIRE_E_SCHEMA) */
    char *req, *ev;  /* the body and the events of a successful render */
    quire_error err; /* a failed render's error */
    char msg[1400];  /* ... as "pointer: message" */
} out;

/* Renders a parsed transcript for provider/model; a successful body must
 * pass quire_validate for the same target. */
static out rend_tp(const quire_transcript *t, const char *provider, const char *model, bool lossy, const char *params) {
    out o;
    memset(&o, 0, sizeof o);
    o.parsed = true;
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    ro.lossy = lossy;
    ro.params = params;
    ro.params_len = params ? strlen(params) : 0;
    quire_render_result res;
    o.st = quire_render(t, NULL, &ro, NULL, &res, &o.err);
    if (o.st) { snprintf(o.msg, sizeof o.msg, "%s: %s", o.err.pointer, o.err.message); return o; }
    o.req = strdup(res.request.data);
    o.ev = strdup(res.events.data ? res.events.data : "");
    quire_bytes rep = {0};
    quire_error ve;
    quire_status vs = quire_validate(res.request.data, res.request.len, &ro, NULL, &rep, &ve);
    CHECK_MSG(vs == QUIRE_OK, "%s/%s: rendered body fails validate: %.*s %s\n%s", provider, model ? model : "",
              (int)(vs == QUIRE_E_VALIDATE ? rep.len : 0), vs == QUIRE_E_VALIDATE ? rep.data : "",
              vs == QUIRE_E_VALIDATE ? "" : ve.message, o.req);
    if (vs == QUIRE_E_VALIDATE) quire_bytes_free(&rep);
    quire_render_result_free(&res);
    return o;
}

static inline out rend_t(const quire_transcript *t, const char *provider, const char *model, bool lossy) {
    return rend_tp(t, provider, model, lossy, NULL);
}

/* The same from transcript JSON, with request parameters (params may be NULL). */
static inline out rend_p(const char *json, const char *provider, const char *model, bool lossy, const char *params) {
    quire_transcript *t = tr(json);
    if (!t) {
        out o;
        memset(&o, 0, sizeof o);
        o.st = QUIRE_E_SCHEMA;
        snprintf(o.msg, sizeof o.msg, "transcript did not parse");
        return o;
    }
    out o = rend_tp(t, provider, model, lossy, params);
    quire_transcript_free(t);
    return o;
}

/* The same from transcript JSON. */
static inline out rend(const char *json, const char *provider, const char *model, bool lossy) {
    return rend_p(json, provider, model, lossy, NULL);
}

static void out_free(out *o) { free(o->req); free(o->ev); memset(o, 0, sizeof *o); }

#define HAS(s, sub) ((s) && strstr((s), (sub)) != NULL)
#define CHECK_HAS(s, sub) CHECK_MSG(HAS(s, sub), "missing %s in: %s", sub, (s) ? (s) : "(null)")
#define CHECK_NOT(s, sub) CHECK_MSG(!HAS(s, sub), "unexpected %s in: %s", sub, (s) ? (s) : "(null)")

#endif
