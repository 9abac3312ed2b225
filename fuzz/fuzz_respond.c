/* Fuzz target: provider answers (DESIGN 12), the bytes a provider (or
 * whatever sits between it and the loop) sends back. Input: byte 0 picks the
 * target (provider, model), byte 1 the mode (bit 0: a stream; bits 1-4: a
 * chunk size 1..16 for a second feed; bit 5: a call id prefix), then the
 * answer's bytes.
 * Checks: no crash; errors are one line with a known status and leave no
 * output; a decoded message is JSON that quire's own transcript check accepts
 * after a user message (an answer never produces a message that breaks the
 * conversation it joins); the info is JSON; a stream gives the same message,
 * info and events whether fed whole or in small chunks; a stream decoded
 * with events writes JSON lines. */
#include "fuzz_common.h"

/* Appends the library's events ev (freed) to the collected ones (malloc'd). */
static void append_events(quire_bytes *events, quire_bytes *ev) {
    if (events && ev->len) {
        char *nb = realloc(events->data, events->len + ev->len + 1);
        QF_ASSERT(nb != NULL, "out of memory");
        memcpy(nb + events->len, ev->data, ev->len);
        events->len += ev->len;
        nb[events->len] = '\0';
        events->data = nb;
    }
    quire_bytes_free(ev);
}

static int feed_all(const char *prov, const char *model, const quire_response_options *ro, const char *p, size_t n,
                    size_t chunk, quire_response *out, quire_bytes *events, quire_error *e) {
    quire_stream *st = NULL;
    quire_status s = quire_stream_new(prov, model, ro, NULL, &st, e);
    if (s) return s;
    size_t off = 0;
    while (s == QUIRE_OK && off < n) {
        size_t k = chunk && n - off > chunk ? chunk : n - off;
        quire_bytes ev = {0};
        s = quire_stream_feed(st, p + off, k, events ? &ev : NULL, e);
        append_events(events, &ev);
        off += k;
    }
    if (s == QUIRE_OK) {
        quire_bytes ev = {0};
        s = quire_stream_finish(st, out, events ? &ev : NULL, e);
        append_events(events, &ev);
    }
    quire_stream_free(st);
    return s;
}

static void check_message(const quire_response *r) {
    qf_check_json(r->message.data, r->message.len, "message");
    qf_check_json(r->info.data, r->info.len, "info");
    static const char head[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"},";
    size_t n = sizeof head - 1 + r->message.len + 2;
    char *t = malloc(n + 1);
    QF_ASSERT(t != NULL, "out of memory");
    memcpy(t, head, sizeof head - 1);
    memcpy(t + sizeof head - 1, r->message.data, r->message.len);
    memcpy(t + sizeof head - 1 + r->message.len, "]}", 2);
    t[n] = '\0';
    quire_transcript *tr = NULL;
    quire_error e;
    quire_status st = quire_transcript_parse(t, n, NULL, &tr, &e);
    QF_ASSERT(st == QUIRE_OK, "the decoded message is not a transcript message: %s: %s: %.300s", e.pointer, e.message,
              r->message.data);
    quire_transcript_free(tr);
    free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const char *const *tg = qf_targets[data[0] % QF_NTARGETS];
    uint8_t mode = data[1];
    const char *p = (const char *)data + 2;
    size_t n = size - 2;
    quire_response_options ro = QUIRE_RESPONSE_OPTIONS_INIT;
    if (mode & 32) ro.call_id_prefix = "call_7_";
    quire_response r, r2;
    memset(&r, 0, sizeof r);
    memset(&r2, 0, sizeof r2);
    quire_error e;
    if (!(mode & 1)) {
        quire_status st = quire_response_decode(tg[0], tg[1], p, n, &ro, NULL, &r, &e);
        if (st) {
            qf_check_error(st, &e, "response_decode");
            QF_ASSERT(!r.message.data && !r.info.data, "decode returned output with %s", quire_status_name(st));
            return 0;
        }
        check_message(&r);
        quire_response_free(&r);
        return 0;
    }
    size_t chunk = 1 + ((mode >> 1) & 15);
    quire_bytes ev = {0}, ev2 = {0};
    quire_status st = feed_all(tg[0], tg[1], &ro, p, n, 0, &r, &ev, &e);
    quire_error e2;
    quire_status st2 = feed_all(tg[0], tg[1], &ro, p, n, chunk, &r2, &ev2, &e2);
    QF_ASSERT(st == st2, "whole: %s (%s), in chunks of %zu: %s (%s)", quire_status_name(st), st ? e.message : "",
              chunk, quire_status_name(st2), st2 ? e2.message : "");
    if (st) {
        qf_check_error(st, &e, "stream");
        QF_ASSERT(strcmp(e.message, e2.message) == 0, "the error depends on the chunking: %s / %s", e.message,
                  e2.message);
        QF_ASSERT(!r.message.data && !r2.message.data, "a failed stream returned a message");
    } else {
        check_message(&r);
        QF_ASSERT(r.message.len == r2.message.len && memcmp(r.message.data, r2.message.data, r.message.len) == 0,
                  "the message depends on the chunking (%zu): %.300s / %.300s", chunk, r.message.data,
                  r2.message.data);
        QF_ASSERT(r.info.len == r2.info.len && memcmp(r.info.data, r2.info.data, r.info.len) == 0,
                  "the info depends on the chunking");
        QF_ASSERT(ev.len == ev2.len && (!ev.len || memcmp(ev.data, ev2.data, ev.len) == 0),
                  "the events depend on the chunking");
        qf_check_jsonl(ev.data, ev.len, "events");
    }
    free(ev.data);
    free(ev2.data);
    quire_response_free(&r);
    quire_response_free(&r2);
    return 0;
}
