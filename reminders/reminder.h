/* The one reminder validator (DESIGN 2.2), body hygiene (DESIGN 3) and
 * derived ids (DESIGN 2.4).
 *
 * Every surface that carries a reminder record (MCP notifications/reminder
 * params.reminder, the harn back-compat _meta.harn.reminder, ACP
 * session/inject_reminder flat params, direct `reminder` lines and API calls,
 * and the reminders of a state file) goes through qrem_decode(). The surface
 * only changes which extra keys are allowed (ACP: sessionId; state file:
 * ttlRemaining, anchorMessage) and how defaults are filled; the rules and the
 * error codes are the same everywhere. See docs/reminders.md. */
#ifndef QUIRE_REMINDERS_REMINDER_H
#define QUIRE_REMINDERS_REMINDER_H

#include "reminders/state.h"

typedef enum qrem_surface {
    QSURF_DIRECT, /* a host-injected record: source/origin as given (default host) */
    QSURF_MCP,    /* params.reminder of an MCP notification: source/origin set by ingest */
    QSURF_ACP,    /* flat params of session/inject_reminder (sessionId allowed) */
    QSURF_STATE   /* a reminder of a quire.state/1 file (ttlRemaining, anchorMessage allowed) */
} qrem_surface;

#define QREM_DEFAULT_MAX_LIVE_PER_ORIGIN 32u
#define QREM_DEFAULT_TURN_BUDGET_BYTES 16384u
#define QREM_DEFAULT_BODY_CAP_BYTES 8192u
#define QREM_DEFAULT_MAX_ORIGINS 64u
#define QREM_DEFAULT_MAX_PENDING_PER_SERVER 32u

/* Decodes and validates the reminder record at object node obj of d into *out.
 * Strings are copied (decoded, plain UTF-8) into ar; the body goes through
 * hygiene and is cut to body_cap bytes. ptr is the JSON Pointer of obj (for
 * errors). On failure fills err: code (QUIRE_E_REMINDER_*), offset into d->src,
 * pointer, field (the offending field name) and a one-line message that ends
 * with the code name in parentheses. out->id is NULL when no id was given
 * (the caller derives one); source and origin hold the surface defaults. */
quire_status qrem_decode(const qj_doc *d, uint32_t obj, qrem_surface surf, size_t body_cap, const char *ptr,
                         qarena *ar, qreminder *out, quire_error *err);

/* Validates and cleans a body given as bytes (bridges, API callers): UTF-8,
 * hygiene, non-blank, cut at body_cap. Sets r->body/body_len (in ar).
 * err gets code QUIRE_E_REMINDER_BODY, field "body", offset SIZE_MAX. */
quire_status qrem_set_body(qreminder *r, const char *body, size_t n, size_t body_cap, qarena *ar, quire_error *err);

/* Fills a reminder with the table's defaults (no id, no body). */
void qrem_defaults(qreminder *r);

/* Sets err for a reminder rule violation: code, field, pointer, offset and a
 * message "<text> (<CODE NAME>)". Returns code. */
quire_status qrem_fail(quire_error *err, quire_status code, const char *field, size_t offset, const char *ptr,
                       const char *fmt, ...) Q_PRINTF(6, 7);

/* MurmurHash3 x64 128 (Austin Appleby's public-domain algorithm, written out
 * here): out[0] = h1, out[1] = h2. */
void qrem_hash128(const void *data, size_t n, uint32_t seed, uint64_t out[2]);

/* The derived id of a reminder: a 128-bit hash of the length-prefixed framing
 * "quire.reminder-id/1\0" u64le(|session|) session u64le(seq) u64le(|body|) body,
 * written as a lowercase RFC 9562 UUIDv8 (8-4-4-4-12 hex, version nibble 8,
 * variant 10xx). out receives 36 chars + NUL. Returns false on OOM. */
bool qrem_derive_id(const quire_allocator *a, const char *session, uint64_t seq, const char *body, size_t n,
                    char out[37]);

/* Enum parsing: true and *v set when s names a value. */
bool qrem_parse_mode(const char *s, size_t n, qmode *v);
bool qrem_parse_role_hint(const char *s, size_t n, qrole_hint *v);
bool qrem_parse_propagate(const char *s, size_t n, qpropagate *v);
bool qrem_parse_source(const char *s, size_t n, qsource *v);

/* Writes r as a quire.state/1 reminder object. */
void qrem_write_state(qw *w, const qreminder *r);

#endif
