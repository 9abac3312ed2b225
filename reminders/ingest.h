/* Ingest of MCP and ACP messages into a reminder state (DESIGN 3).
 *
 * MCP (a JSON-RPC message from the named server):
 *   - a response whose result holds a `capabilities` object (initialize, or
 *     server/discover in MCP 2026-07-28) records the server and whether it
 *     declared capabilities.reminders.emit: true;
 *   - notifications/reminder {reminder, _meta} and notifications/message whose
 *     params._meta.harn.reminder holds a reminder: accepted from declaring
 *     servers (source bridge, origin mcp:<server>), else
 *     reminder_dropped(capability_not_declared); invalid -> reminder_dropped(invalid);
 *   - notifications/resources/updated, tools/list_changed, prompts/list_changed:
 *     a bridge reminder when the server's bridge is enabled, else ignored;
 *     resources/updated only for a URI the host subscribed to, else
 *     reminder_dropped(not_subscribed);
 * A session-log mcp line may also carry "direction":"out" (a message the host
 * sent: resources/subscribe and resources/unsubscribe are recorded per server)
 * or "event":"reconnected" (an mcp_reconnected event; state unchanged).
 *   - everything else: ignored.
 * ACP (a JSON-RPC message to the agent):
 *   - session/inject_reminder and its deprecated alias session/remind (flat
 *     params with sessionId): source host, origin acp:<sessionId>; requests get
 *     a JSON-RPC response {reminderId, dedupedCount} or error -32602 with
 *     data {code, field};
 *   - everything else: ignored.
 * All functions mutate s in place and only on success or on a handled drop. */
#ifndef QUIRE_REMINDERS_INGEST_H
#define QUIRE_REMINDERS_INGEST_H

#include "reminders/state.h"

/* One message from MCP server `server`. ptr is the JSON Pointer of msg.
 * Fails (QUIRE_E_SESSION) only when msg is not a JSON-RPC object. */
quire_status qin_mcp(quire_state *s, const char *server, size_t server_len, const qj_doc *d, uint32_t msg,
                     const char *ptr, qbuf *events, quire_error *err);

/* One ACP message. JSON-RPC responses are appended to responses (JSONL). */
quire_status qin_acp(quire_state *s, const qj_doc *d, uint32_t msg, const char *ptr, qbuf *events, qbuf *responses,
                     quire_error *err);

/* Bridge reminder bodies. */
#define QIN_RESOURCE_BODY_FMT "Resource %s changed; re-read it before relying on it."

#endif
