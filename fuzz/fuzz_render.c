/* Fuzz target: render. Input: byte 0 picks the target (provider, model),
 * byte 1 the render options (bits: pretty, systemSlot allow, append_only,
 * input-only cache markers, lossy, max_tokens), then a quire.transcript/1
 * transcript, a NUL, and reminder lines (session-log lines of types mcp, acp,
 * reminder, clear; JSONL or a JSON array) applied to a fresh state.
 * Checks: no crash; errors carry a message; a rendered request is one JSON
 * text, events are JSONL, the next state writes and parses back; rendering is
 * deterministic; the request passes quire_validate for its own target.
 * The transcript bytes are also validated as a request body for the target:
 * a report is lines "pointer: message" without a control byte. */
#define _GNU_SOURCE /* memmem */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const char *const *tg = qf_targets[data[0] % QF_NTARGETS];
    uint8_t bits = data[1];
    const char *tr, *rem;
    size_t trlen, remlen;
    qf_split(data + 2, size - 2, &tr, &trlen, &rem, &remlen);

    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    o.limits.max_messages = 4096;
    quire_error e;
    if (QF_HAVE(quire_validate)) {
        quire_render_options vo = QUIRE_RENDER_OPTIONS_INIT;
        vo.provider = tg[0];
        vo.model = tg[1];
        quire_bytes rep = {0};
        quire_status vs = quire_validate(tr, trlen, &vo, &o, &rep, &e);
        if (vs == QUIRE_E_VALIDATE) {
            QF_ASSERT(rep.len > 0 && rep.data[rep.len - 1] == '\n', "validate: a report that does not end a line");
            for (size_t i = 0, ls = 0; i < rep.len; i++) {
                unsigned char c = (unsigned char)rep.data[i];
                if (c == '\n') {
                    QF_ASSERT(rep.data[ls] == '/' && memmem(rep.data + ls, i - ls, ": ", 2) != NULL,
                              "validate: a report line is not \"pointer: message\": %.*s", (int)(i - ls), rep.data + ls);
                    ls = i + 1;
                } else {
                    QF_ASSERT(c >= 0x20 && c != 0x7F, "validate: control byte 0x%02x in the report: %.300s", c, rep.data);
                }
            }
        } else if (vs) {
            qf_check_error(vs, &e, "validate");
        }
        quire_bytes_free(&rep);
    }
    quire_transcript *t = NULL;
    quire_status st = quire_transcript_parse(tr, trlen, &o, &t, &e);
    if (st) { qf_check_error(st, &e, "transcript_parse"); QF_ASSERT(!t, "transcript on failure"); return 0; }

    quire_state *s = NULL;
    if (rem && QF_HAVE(quire_state_new) && QF_HAVE(quire_state_apply_lines)) {
        quire_state *s0 = NULL;
        if (quire_state_new("fuzz-session", &o, &s0, &e) == QUIRE_OK) {
            quire_bytes ev = {0}, resp = {0};
            st = quire_state_apply_lines(s0, rem, remlen, &o, &s, &ev, &resp, &e);
            if (st) { qf_check_error(st, &e, "state_apply_lines"); QF_ASSERT(!s, "state on failure"); }
            else { qf_check_jsonl(ev.data, ev.len, "ingest events"); qf_check_jsonl(resp.data, resp.len, "responses"); }
            quire_bytes_free(&ev);
            quire_bytes_free(&resp);
            quire_state_free(s0);
        }
    }

    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = tg[0];
    ro.model = tg[1];
    ro.pretty = bits & 1;
    ro.allow_system_slot = (bits >> 1) & 1;
    ro.placement = (bits & 4) ? QUIRE_PLACEMENT_APPEND_ONLY : QUIRE_PLACEMENT_TAIL;
    ro.cache_breakpoints = (bits & 8) ? QUIRE_CACHE_INPUT_ONLY : QUIRE_CACHE_MANAGED;
    ro.lossy = (bits >> 4) & 1;
    ro.max_tokens = (bits & 32) ? 1 : 0;
    quire_render_result r, r2;
    memset(&r, 0, sizeof r);
    memset(&r2, 0, sizeof r2);
    st = quire_render(t, s, &ro, &o, &r, &e);
    if (st) {
        qf_check_error(st, &e, "render");
        QF_ASSERT(!r.request.data && !r.events.data && !r.state, "render returned output with %s",
                  quire_status_name(st));
    } else {
        qf_check_json(r.request.data, r.request.len, "rendered request");
        qf_check_jsonl(r.events.data, r.events.len, "render events");
        QF_ASSERT(r.state != NULL, "render returned no state");
        /* deterministic: the same call gives the same bytes */
        QF_ASSERT(quire_render(t, s, &ro, &o, &r2, &e) == QUIRE_OK, "second render failed: %s", e.message);
        QF_ASSERT(r2.request.len == r.request.len && memcmp(r2.request.data, r.request.data, r.request.len) == 0,
                  "render is not deterministic");
        QF_ASSERT(r2.events.len == r.events.len &&
                  (!r.events.len || memcmp(r2.events.data, r.events.data, r.events.len) == 0),
                  "render events are not deterministic");
        quire_render_result_free(&r2);
        if (QF_HAVE(quire_state_write) && QF_HAVE(quire_state_parse)) {
            quire_bytes sb = {0}, sb2 = {0};
            QF_ASSERT(quire_state_write(r.state, 0, &sb, &e) == QUIRE_OK, "state_write: %s", e.message);
            quire_state *back = NULL;
            st = quire_state_parse(sb.data, sb.len, &o, &back, &e);
            QF_ASSERT(st == QUIRE_OK, "the state render returned does not parse back: %s: %s: %.300s", e.pointer,
                      e.message, sb.data);
            QF_ASSERT(quire_state_write(back, 0, &sb2, &e) == QUIRE_OK, "state_write: %s", e.message);
            QF_ASSERT(sb.len == sb2.len && memcmp(sb.data, sb2.data, sb.len) == 0, "state write is not a fixed point");
            quire_state_free(back);
            quire_bytes_free(&sb);
            quire_bytes_free(&sb2);
        }
        if (QF_HAVE(quire_validate) && qf_strict()) {
            quire_bytes rep = {0};
            st = quire_validate(r.request.data, r.request.len, &ro, &o, &rep, &e);
            QF_ASSERT(st == QUIRE_OK || st == QUIRE_E_UNSUPPORTED || st == QUIRE_E_INVALID,
                      "quire rendered a request its own validator rejects (%s/%s): %s %.400s", ro.provider,
                      ro.model ? ro.model : "-", rep.data ? rep.data : e.message, r.request.data);
            quire_bytes_free(&rep);
        }
        quire_render_result_free(&r);
    }
    if (s) quire_state_free(s);
    quire_transcript_free(t);
    return 0;
}
