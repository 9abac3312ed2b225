/* Fuzz target: render against validate, for every row of the capability table
 * (DESIGN principle 4: render never returns success with a body its own
 * validator rejects).
 * Input: byte 0 the render options (bit 0 lossy, bit 1 systemSlot allow,
 * bit 2 input-only cache markers, bit 3 max_tokens), then a
 * quire.transcript/1 transcript. Every transcript the decoder accepts is
 * rendered for one concrete model of every built-in row (the row's glob with
 * each '*' and '?' replaced by "x"); each render either fails with a clear
 * error or gives a request that passes quire_validate for the same target.
 * Unlike fuzz_render's strict mode this oracle is always on: the seeds under
 * fuzz/seeds/fuzz_differential/ run as a plain test. */
#include "fuzz_common.h"

#define QF_MAX_ROWS 96

static char qf_rows[QF_MAX_ROWS][2][96];
static size_t qf_nrows;

/* Copies the JSON string starting at p (after its opening quote) into out,
 * globs made concrete; returns false on an escape or overflow. */
static int qf_row_string(const char *p, const char *end, char *out, size_t cap, int concrete) {
    size_t n = 0;
    for (; p < end && *p != '"'; p++) {
        if (*p == '\\' || n + 2 >= cap) return 0;
        if (concrete && (*p == '*' || *p == '?')) { out[n++] = 'x'; continue; }
        out[n++] = *p;
    }
    out[n] = '\0';
    return p < end;
}

static void qf_load_rows(void) {
    if (qf_nrows) return;
    quire_bytes b = {0};
    quire_error e;
    QF_ASSERT(quire_caps_list(NULL, 0, &b, &e) == QUIRE_OK, "caps_list: %s", e.message);
    const char *p = b.data, *end = b.data + b.len;
    static const char kp[] = "{\"provider\":\"", km[] = "\"model\":\"";
    while (p && p < end && qf_nrows < QF_MAX_ROWS) {
        p = strstr(p, kp);
        if (!p) break;
        p += sizeof kp - 1;
        char *prov = qf_rows[qf_nrows][0], *model = qf_rows[qf_nrows][1];
        if (!qf_row_string(p, end, prov, sizeof qf_rows[0][0], 0)) continue;
        const char *m = strstr(p, km);
        if (!m) break;
        if (!qf_row_string(m + sizeof km - 1, end, model, sizeof qf_rows[0][1], 1)) continue;
        qf_nrows++;
    }
    quire_bytes_free(&b);
    QF_ASSERT(qf_nrows > 10, "only %zu capability rows found", qf_nrows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || !QF_HAVE(quire_validate)) return 0;
    qf_load_rows();
    uint8_t bits = data[0];
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    o.limits.max_messages = 4096;
    quire_error e;
    quire_transcript *t = NULL;
    quire_status st = quire_transcript_parse((const char *)data + 1, size - 1, &o, &t, &e);
    if (st) { qf_check_error(st, &e, "transcript_parse"); return 0; }
    for (size_t i = 0; i < qf_nrows; i++) {
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = qf_rows[i][0];
        ro.model = qf_rows[i][1];
        ro.lossy = bits & 1;
        ro.allow_system_slot = (bits >> 1) & 1;
        ro.cache_breakpoints = (bits & 4) ? QUIRE_CACHE_INPUT_ONLY : QUIRE_CACHE_MANAGED;
        ro.max_tokens = (bits & 8) ? 100 : 0;
        quire_render_result r;
        memset(&r, 0, sizeof r);
        st = quire_render(t, NULL, &ro, &o, &r, &e);
        if (st) {
            qf_check_error(st, &e, "render");
            continue;
        }
        qf_check_json(r.request.data, r.request.len, "rendered request");
        quire_bytes rep = {0};
        quire_error ve;
        st = quire_validate(r.request.data, r.request.len, &ro, &o, &rep, &ve);
        QF_ASSERT(st == QUIRE_OK, "%s %s%s: render succeeded but validate says: %s\n%.*s\nrequest: %.600s",
                  ro.provider, ro.model, ro.lossy ? " (lossy)" : "", ve.message, (int)(rep.len < 800 ? rep.len : 800),
                  rep.data ? rep.data : "", r.request.data);
        quire_bytes_free(&rep);
        quire_render_result_free(&r);
    }
    quire_transcript_free(t);
    return 0;
}
