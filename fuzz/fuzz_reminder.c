/* Fuzz target: reminder validation and the reminder state. Input: byte 0
 * picks the surface (0: a direct reminder record, 1: a quire.state/1 state
 * file, 2: session-log lines), byte 1 the state's limits, then the JSON.
 * Checks: no crash; failures name a field/pointer with a message; accepted
 * states write, parse back and write again to the same bytes; a state that
 * took the reminder renders (Anthropic) and can be cleared and propagated. */
#include "fuzz_common.h"

static const char k_transcript[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

static void roundtrip_state(const quire_state *s, const quire_options *o) {
    quire_error e;
    quire_bytes a = {0}, b = {0};
    QF_ASSERT(quire_state_write(s, 0, &a, &e) == QUIRE_OK, "state_write: %s", e.message);
    qf_check_json(a.data, a.len, "state");
    quire_state *back = NULL;
    quire_status st = quire_state_parse(a.data, a.len, o, &back, &e);
    QF_ASSERT(st == QUIRE_OK, "a written state does not parse back: %s: %s: %.400s", e.pointer, e.message, a.data);
    QF_ASSERT(quire_state_write(back, 0, &b, &e) == QUIRE_OK, "state_write: %s", e.message);
    QF_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0, "state write/parse is not a fixed point:\n%s\n%s",
              a.data, b.data);
    quire_state_free(back);
    quire_bytes_free(&a);
    quire_bytes_free(&b);
}

static void exercise(const quire_state *s, const quire_options *o) {
    quire_error e;
    roundtrip_state(s, o);
    quire_transcript *t = NULL;
    if (quire_transcript_parse(k_transcript, sizeof k_transcript - 1, o, &t, &e) == QUIRE_OK) {
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = "anthropic";
        quire_render_result r;
        quire_status st = quire_render(t, s, &ro, o, &r, &e);
        if (st == QUIRE_OK) {
            qf_check_json(r.request.data, r.request.len, "request");
            qf_check_jsonl(r.events.data, r.events.len, "render events");
            roundtrip_state(r.state, o);
            quire_render_result_free(&r);
        } else {
            qf_check_error(st, &e, "render");
        }
        quire_transcript_free(t);
    }
    if (QF_HAVE(quire_state_propagate)) {
        quire_state *child = NULL;
        quire_status st = quire_state_propagate(s, "agent-2", NULL, o, &child, &e);
        if (st == QUIRE_OK) { roundtrip_state(child, o); quire_state_free(child); }
        else qf_check_error(st, &e, "propagate");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || !QF_HAVE(quire_state_new) || !QF_HAVE(quire_state_parse) || !QF_HAVE(quire_state_write))
        return 0;
    int mode = data[0] % 3;
    uint8_t lb = data[1];
    const char *json = (const char *)data + 2;
    size_t len = size - 2;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    quire_error e;
    quire_state *s0 = NULL, *s = NULL;
    quire_status st;
    if (mode == 1) {
        st = quire_state_parse(json, len, &o, &s, &e);
        if (st) { qf_check_error(st, &e, "state_parse"); QF_ASSERT(!s, "state on failure"); return 0; }
        exercise(s, &o);
        quire_state_free(s);
        return 0;
    }
    if (quire_state_new("fuzz", &o, &s0, &e) != QUIRE_OK) return 0;
    if (QF_HAVE(quire_state_set_limits) && (lb & 0x80)) {
        quire_reminder_limits l = {(uint32_t)(lb & 3) + 1, (uint32_t)((lb >> 2) & 7) * 64, (uint32_t)((lb >> 5) & 3) * 32, 0, 0};
        quire_state_set_limits(s0, &l);
    }
    quire_bytes ev = {0}, id = {0}, resp = {0};
    if (mode == 0) {
        if (!QF_HAVE(quire_state_inject)) { quire_state_free(s0); return 0; }
        st = quire_state_inject(s0, json, len, &o, &s, &ev, &id, &e);
    } else {
        if (!QF_HAVE(quire_state_apply_lines)) { quire_state_free(s0); return 0; }
        st = quire_state_apply_lines(s0, json, len, &o, &s, &ev, &resp, &e);
    }
    if (st) {
        qf_check_error(st, &e, mode == 0 ? "inject" : "apply_lines");
        QF_ASSERT(!s && !ev.data && !id.data && !resp.data, "output on failure");
    } else {
        QF_ASSERT(s != NULL, "no next state");
        qf_check_jsonl(ev.data, ev.len, "events");
        qf_check_jsonl(resp.data, resp.len, "responses");
        if (mode == 0) QF_ASSERT(id.data && id.len, "inject returned no reminder id");
        exercise(s, &o);
        if (mode == 0 && QF_HAVE(quire_state_clear)) {
            quire_reminder_selector sel;
            memset(&sel, 0, sizeof sel);
            sel.id = id.data;
            quire_state *c = NULL;
            quire_bytes cev = {0};
            st = quire_state_clear(s, &sel, &o, &c, &cev, &e);
            if (st == QUIRE_OK) {
                qf_check_jsonl(cev.data, cev.len, "clear events");
                if (QF_HAVE(quire_state_reminder_count))
                    QF_ASSERT(quire_state_reminder_count(c) < quire_state_reminder_count(s) ||
                                  quire_state_reminder_count(s) == 0,
                              "clearing the injected id removed nothing");
                quire_state_free(c);
            } else {
                qf_check_error(st, &e, "clear");
            }
            quire_bytes_free(&cev);
        }
        quire_state_free(s);
    }
    quire_bytes_free(&ev);
    quire_bytes_free(&id);
    quire_bytes_free(&resp);
    quire_state_free(s0);
    return 0;
}
