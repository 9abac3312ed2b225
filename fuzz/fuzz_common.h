/* Shared by the fuzz targets: the public API (with weak references to the
 * modules that land later, so every target links and does nothing until its
 * module exists), input splitting and the checks every target applies to
 * what the library returns. */
#ifndef QUIRE_FUZZ_COMMON_H
#define QUIRE_FUZZ_COMMON_H

#include "quire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls"
#define QF_WEAK(fn) extern __typeof__(fn) fn __attribute__((weak))
QF_WEAK(quire_state_new);
QF_WEAK(quire_state_parse);
QF_WEAK(quire_state_write);
QF_WEAK(quire_state_free);
QF_WEAK(quire_state_inject);
QF_WEAK(quire_state_apply);
QF_WEAK(quire_state_apply_lines);
QF_WEAK(quire_state_ingest_mcp);
QF_WEAK(quire_state_ingest_acp);
QF_WEAK(quire_state_set_bridges);
QF_WEAK(quire_state_set_limits);
QF_WEAK(quire_state_clear);
QF_WEAK(quire_state_propagate);
QF_WEAK(quire_state_reminder_count);
QF_WEAK(quire_compact);
QF_WEAK(quire_compact_result_free);
QF_WEAK(quire_compact_plan);
QF_WEAK(quire_compact_estimate);
QF_WEAK(quire_compact_policy_parse);
QF_WEAK(quire_replay_run);
QF_WEAK(quire_replay_open);
QF_WEAK(quire_replay_next);
QF_WEAK(quire_replay_free);
QF_WEAK(quire_import);
QF_WEAK(quire_validate);
QF_WEAK(quire_render_policy_apply);
#pragma GCC diagnostic pop
#define QF_HAVE(fn) ((fn) != NULL)
#else
#define QF_HAVE(fn) 1
#endif

/* A finding: print what and where, then abort so libFuzzer keeps the input. */
#define QF_ASSERT(cond, ...) do { if (!(cond)) { \
    fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

/* Checks that hold for every call: a failure carries a message and a known
 * status; QUIRE_E_NOMEM never happens (the fuzzer's inputs are small). */
static inline void qf_check_error(quire_status st, const quire_error *e, const char *what) {
    QF_ASSERT(st > QUIRE_OK && st < QUIRE_STATUS_COUNT_, "%s: status %d out of range", what, (int)st);
    QF_ASSERT(e->code == st, "%s: returned %s but err.code is %s", what, quire_status_name(st),
              quire_status_name(e->code));
    QF_ASSERT(e->message[0] != '\0', "%s: %s without a message", what, quire_status_name(st));
    for (const char *m = e->message; *m; m++)
        QF_ASSERT((unsigned char)*m >= 0x20 && *m != 0x7F, "%s: control byte 0x%02x in message: %s", what,
                  (unsigned)(unsigned char)*m, e->message);
    QF_ASSERT(st != QUIRE_E_NOMEM, "%s: out of memory on a small input: %s", what, e->message);
    QF_ASSERT(memchr(e->pointer, '\0', sizeof e->pointer) != NULL, "%s: pointer not terminated", what);
    QF_ASSERT(e->pointer[0] == '\0' || e->pointer[0] == '/', "%s: pointer '%s' is not a JSON Pointer", what,
              e->pointer);
}

/* Bytes the library returns are one JSON text... */
static inline void qf_check_json(const char *p, size_t n, const char *what) {
    quire_error e;
    quire_status st = quire_json_check(p, n, NULL, &e);
    QF_ASSERT(st == QUIRE_OK, "%s is not JSON: %s at %zu: %.200s", what, e.message, e.offset, p);
}

/* ...or JSON Lines: each line one JSON text ending in '\n'. */
static inline void qf_check_jsonl(const char *p, size_t n, const char *what) {
    if (!p || !n) return;
    QF_ASSERT(p[n - 1] == '\n', "%s does not end in a newline", what);
    size_t s = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n') continue;
        qf_check_json(p + s, i - s, what);
        s = i + 1;
    }
}

/* Splits data at the first NUL: part 0 before, part 1 after (may be empty). */
static inline void qf_split(const uint8_t *data, size_t size, const char **a, size_t *alen, const char **b,
                            size_t *blen) {
    const uint8_t *z = memchr(data, 0, size);
    *a = (const char *)data;
    if (!z) { *alen = size; *b = NULL; *blen = 0; return; }
    *alen = (size_t)(z - data);
    *b = (const char *)z + 1;
    *blen = size - *alen - 1;
}

/* Strict oracles cross-check modules against each other (a rendered request
 * must pass quire_validate; an imported log must replay). They are off unless
 * QUIRE_FUZZ_STRICT=1, because one known disagreement would otherwise stop
 * every run at its first input; crashes, sanitizer reports and the
 * per-function invariants are always checked. */
static inline int qf_strict(void) {
    static int v = -1;
    if (v < 0) { const char *s = getenv("QUIRE_FUZZ_STRICT"); v = s && *s == '1'; }
    return v;
}

static const char *const qf_targets[][2] = {
    {"anthropic", NULL}, {"anthropic", "claude-sonnet-4-5"}, {"anthropic", "claude-3-5-haiku-20241022"},
    {"openai", "gpt-4o"}, {"openai", "gpt-4.1"}, {"openai", "o3"}, {"openai", "gpt-5"}, {"openai", "o1-mini"},
    {"openai_responses", "gpt-5"}, {"gemini", "gemini-2.5-pro"}, {"gemini", "gemma-3-27b-it"},
    {"bedrock", "anthropic.claude-sonnet-4-5-v1:0"}, {"mistral", "mistral-large-latest"}, {"ollama", "llama3.1"},
    {"deepseek", "deepseek-chat"}, {"openai_compatible", "qwen3"},
};
#define QF_NTARGETS (sizeof qf_targets / sizeof qf_targets[0])

#endif
