/* Lifecycle events (DESIGN 2.5): one ACP SessionUpdate-shaped JSON object per
 * line appended to a qbuf (JSONL). Every writer accepts events == NULL (no-op).
 * qev_reminder_emitted() is declared in reminders/state.h (render/ calls it). */
#ifndef QUIRE_REMINDERS_EVENTS_H
#define QUIRE_REMINDERS_EVENTS_H

#include "reminders/state.h"

/* {"sessionUpdate":"reminder_emitted",...} for an audit_only reminder when it
 * is recorded: firedAtTurn null, _meta.quire.slot "none", reason "audit_only". */
void qev_reminder_audit(qbuf *events, const qreminder *r);

/* {"sessionUpdate":"reminder_deduped","reminderId","dedupeKey","droppedReminderIds":[...]} */
void qev_reminder_deduped(qbuf *events, const char *id, const char *dedupe_key, const char *const *dropped,
                          uint32_t ndropped);

/* {"sessionUpdate":"reminder_expired","reminderId","phase","expiredAtTurn"} */
void qev_reminder_expired(qbuf *events, const char *id, const char *phase, int64_t turn);

/* {"sessionUpdate":"reminder_dropped","reminderId"?,"reason","detail",
 *  "_meta":{"quire":{"origin"?,"code"?,"field"?}}}; NULL parts are omitted. */
void qev_reminder_dropped(qbuf *events, const char *id, const char *reason, const char *detail, const char *origin,
                          const char *code, const char *field);

#endif
