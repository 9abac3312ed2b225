/* The body of the importer fuzz targets (fuzz_import_claude.c, fuzz_import_codex.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || !QF_HAVE(quire_import)) return 0;
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = QF_IMPORT_FORMAT;
    io.flags = data[0] & (QUIRE_IMPORT_LIFT_REMINDERS | QUIRE_IMPORT_SKIP_INVALID | QUIRE_IMPORT_SIDECHAINS);
    if (data[0] & 0x80) io.provider = "openai";
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    o.limits.max_messages = 4096;
    quire_error e;
    quire_bytes log = {0}, rep = {0};
    quire_status st = quire_import((const char *)data + 1, size - 1, &io, &o, &log, &rep, &e);
    if (st) {
        qf_check_error(st, &e, "import");
        QF_ASSERT(!log.data && !rep.data, "output on failure");
        return 0;
    }
    qf_check_jsonl(log.data, log.len, "imported session log");
    if (QF_HAVE(quire_replay_run)) {
        quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
        quire_bytes out = {0};
        st = quire_replay_run(log.data ? log.data : "", log.len, &ro, &o, &out, &e);
        if (st) {
            qf_check_error(st, &e, "replay of an imported log");
            QF_ASSERT(!qf_strict() || st == QUIRE_E_UNSUPPORTED || st == QUIRE_E_BUDGET,
                      "the imported log does not replay: line %u: %s: %s", e.line, e.pointer, e.message);
        } else {
            qf_check_jsonl(out.data, out.len, "replay output");
        }
        quire_bytes_free(&out);
    }
    quire_bytes_free(&log);
    quire_bytes_free(&rep);
    return 0;
}
