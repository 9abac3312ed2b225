/* Fuzz target: ingest of JSON-RPC messages from MCP servers and ACP clients.
 * Input: NUL-separated chunks; each chunk's first byte picks the surface
 * (0: MCP server "fs", which declared reminders.emit and opted into every
 * bridge; 1: MCP server "new", which declared nothing; 2: ACP), the rest is
 * one JSON-RPC message, applied in order to the state the previous one
 * returned. Checks: no crash; malformed peer messages never fail silently
 * (an error with a message, or events); events and responses are JSONL;
 * every state written parses back to the same bytes. */
#include "fuzz_common.h"

static const char k_state[] = "{\"turn\":1,\"seq\":0,\"servers\":{\"fs\":{\"reminders\":{\"emit\":true}}},"
                              "\"reminders\":[]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!QF_HAVE(quire_state_parse) || !QF_HAVE(quire_state_ingest_mcp) || !QF_HAVE(quire_state_ingest_acp) ||
        !QF_HAVE(quire_state_write))
        return 0;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    quire_error e;
    quire_state *s = NULL;
    if (quire_state_parse(k_state, sizeof k_state - 1, &o, &s, &e) != QUIRE_OK) return 0;
    if (QF_HAVE(quire_state_set_bridges))
        quire_state_set_bridges(s, "fs", QUIRE_BRIDGE_RESOURCES | QUIRE_BRIDGE_TOOLS | QUIRE_BRIDGE_PROMPTS, &e);
    size_t pos = 0;
    int steps = 0;
    while (pos < size && steps++ < 16) {
        const uint8_t *z = memchr(data + pos, 0, size - pos);
        size_t end = z ? (size_t)(z - data) : size;
        if (end > pos) {
            int mode = data[pos] % 3;
            const char *json = (const char *)data + pos + 1;
            size_t len = end - pos - 1;
            quire_state *n = NULL;
            quire_bytes ev = {0}, resp = {0};
            quire_status st = mode == 2 ? quire_state_ingest_acp(s, json, len, &o, &n, &ev, &resp, &e)
                                        : quire_state_ingest_mcp(s, mode ? "new" : "fs", json, len, &o, &n, &ev, &e);
            if (st) {
                qf_check_error(st, &e, mode == 2 ? "ingest_acp" : "ingest_mcp");
                QF_ASSERT(!n && !ev.data && !resp.data, "output on failure");
            } else {
                QF_ASSERT(n != NULL, "no next state");
                qf_check_jsonl(ev.data, ev.len, "events");
                qf_check_jsonl(resp.data, resp.len, "responses");
                quire_bytes a = {0}, b = {0};
                QF_ASSERT(quire_state_write(n, 0, &a, &e) == QUIRE_OK, "state_write: %s", e.message);
                quire_state *back = NULL;
                st = quire_state_parse(a.data, a.len, &o, &back, &e);
                QF_ASSERT(st == QUIRE_OK, "an ingested state does not parse back: %s: %s: %.400s", e.pointer,
                          e.message, a.data);
                QF_ASSERT(quire_state_write(back, 0, &b, &e) == QUIRE_OK, "state_write: %s", e.message);
                QF_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0, "state is not a fixed point");
                quire_state_free(back);
                quire_bytes_free(&a);
                quire_bytes_free(&b);
                quire_state_free(s);
                s = n;
            }
            quire_bytes_free(&ev);
            quire_bytes_free(&resp);
        }
        pos = end + 1;
    }
    quire_state_free(s);
    return 0;
}
