/* Fuzz target: the session-log reader and replay. Input: byte 0 the replay
 * options (bit 0: digest lines; bits 1-7: a provider override, 0 = none),
 * then a quire.session/1 log. Checks: no crash; errors carry a message and a
 * line; the output is JSONL; replaying step by step (quire_replay_next)
 * produces exactly the bytes of quire_replay_run; replay is deterministic. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || !QF_HAVE(quire_replay_run)) return 0;
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.flags = (data[0] & 1) ? QUIRE_REPLAY_DIGEST : 0;
    unsigned pick = data[0] >> 1;
    if (pick) {
        ro.provider = qf_targets[(pick - 1) % QF_NTARGETS][0];
        ro.model = qf_targets[(pick - 1) % QF_NTARGETS][1];
    }
    const char *log = (const char *)data + 1;
    size_t len = size - 1;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    o.limits.max_messages = 4096;
    quire_error e;
    quire_bytes out = {0}, out2 = {0};
    quire_status st = quire_replay_run(log, len, &ro, &o, &out, &e);
    if (st) {
        qf_check_error(st, &e, "replay_run");
        QF_ASSERT(!out.data, "output on failure");
    } else {
        qf_check_jsonl(out.data, out.len, "replay output");
        QF_ASSERT(quire_replay_run(log, len, &ro, &o, &out2, &e) == QUIRE_OK, "second run failed: %s", e.message);
        QF_ASSERT(out.len == out2.len && (!out.len || memcmp(out.data, out2.data, out.len) == 0),
                  "replay is not deterministic");
        quire_bytes_free(&out2);
    }
    if (QF_HAVE(quire_replay_open) && QF_HAVE(quire_replay_next) && QF_HAVE(quire_replay_free)) {
        quire_replay *r = NULL;
        quire_error e2;
        quire_status st2 = quire_replay_open(log, len, &ro, &o, &r, &e2);
        size_t at = 0;
        int steps = 0;
        while (st2 == QUIRE_OK) {
            quire_replay_step step;
            int done = 0;
            st2 = quire_replay_next(r, &step, &done, &e2);
            if (st2 || done) break;
            steps++;
            if (st == QUIRE_OK && step.output_len) {
                QF_ASSERT(at + step.output_len <= out.len && memcmp(out.data + at, step.output, step.output_len) == 0,
                          "line %u: step output differs from replay_run at byte %zu", step.line, at);
            }
            at += step.output_len;
        }
        if (st == QUIRE_OK) {
            QF_ASSERT(st2 == QUIRE_OK, "replay_run succeeded but step %d failed: %s", steps, e2.message);
            QF_ASSERT(at == out.len, "steps produced %zu bytes, replay_run %zu", at, out.len);
        } else {
            QF_ASSERT(st2 != QUIRE_OK, "replay_run failed (%s) but every step succeeded", e.message);
            qf_check_error(st2, &e2, "replay_next");
            QF_ASSERT(st2 == st && strcmp(e.message, e2.message) == 0 && e.line == e2.line,
                      "replay_run and replay_next disagree: %s:%u: %s / %s:%u: %s", quire_status_name(st), e.line,
                      e.message, quire_status_name(st2), e2.line, e2.message);
        }
        quire_replay_free(r);
    }
    quire_bytes_free(&out);
    return 0;
}
