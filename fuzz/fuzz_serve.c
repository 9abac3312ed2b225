/* Fuzz target: the JSONL session server (session/serve.c). Input: request
 * lines. Checks: no crash; quire_server_handle never fails on a small input;
 * every reply is one line holding one JSON object that starts with "id" and is
 * either {"id","ok":true,...} or {"id","error":{code,message,offset,line,
 * column,pointer}} with a known code and positions inside the request line;
 * blank lines get no reply; two servers given the same lines give the same
 * replies (the server is deterministic). */
#include "fuzz_common.h"

static void check_reply(const char *line, size_t n, const quire_bytes *r) {
    if (!r->len) {
        for (size_t i = 0; i < n; i++)
            QF_ASSERT(line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n',
                      "no reply to a line that is not blank");
        return;
    }
    QF_ASSERT(memchr(r->data, '\n', r->len) == NULL, "the reply spans lines: %.200s", r->data);
    qf_check_json(r->data, r->len, "reply");
    QF_ASSERT(r->len > 7 && memcmp(r->data, "{\"id\":", 6) == 0, "the reply does not start with id: %.200s", r->data);
    const char *e = strstr(r->data, ",\"error\":{\"code\":\"QUIRE_E_");
    const char *ok = strstr(r->data, ",\"ok\":true");
    QF_ASSERT(e || ok, "neither ok nor error: %.200s", r->data);
    if (e && !ok) {
        const char *o = strstr(e, "\"offset\":");
        QF_ASSERT(o != NULL, "error without offset: %.200s", r->data);
        if (o && o[9] != 'n') {
            unsigned long long off = strtoull(o + 9, NULL, 10);
            QF_ASSERT(off <= n, "error offset %llu past the line (%zu bytes)", off, n);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    o.limits.max_messages = 4096;
    quire_server *a = NULL, *b = NULL;
    quire_error err;
    QF_ASSERT(quire_server_new(NULL, &o, &a, &err) == QUIRE_OK && quire_server_new(NULL, &o, &b, &err) == QUIRE_OK,
              "quire_server_new failed");
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        quire_bytes ra, rb;
        QF_ASSERT(quire_server_handle(a, p, n, &ra, &err) == QUIRE_OK, "handle failed: %s", err.message);
        QF_ASSERT(quire_server_handle(b, p, n, &rb, &err) == QUIRE_OK, "handle failed: %s", err.message);
        check_reply(p, n, &ra);
        QF_ASSERT(ra.len == rb.len && (!ra.len || memcmp(ra.data, rb.data, ra.len) == 0),
                  "two servers answered differently: %.200s / %.200s", ra.data ? ra.data : "", rb.data ? rb.data : "");
        quire_bytes_free(&ra);
        quire_bytes_free(&rb);
        p = nl ? nl + 1 : end;
    }
    QF_ASSERT(quire_server_session_count(a) == quire_server_session_count(b), "session counts differ");
    quire_server_free(a);
    quire_server_free(b);
    return 0;
}
