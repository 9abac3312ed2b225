/* Lifecycle events as ACP SessionUpdate-shaped JSONL lines. */
#include "reminders/events.h"

#include <stdio.h>

static void begin(qw *w, qbuf *events, const char *kind) {
    qw_init(w, events, false);
    qw_obj_begin(w);
    qw_key(w, "sessionUpdate");
    qw_strz(w, kind);
}

static void end(qw *w, qbuf *events) {
    qw_obj_end(w);
    qw_dispose(w);
    qbuf_putc(events, '\n');
}

static void opt_str(qw *w, const char *s) {
    if (s) qw_strz(w, s);
    else qw_null(w);
}

static void emitted(qbuf *events, const qreminder *r, int64_t fired, int64_t turn, const char *slot,
                    const char *requested_slot, const char *reason) {
    if (!events || !r) return;
    qw w;
    begin(&w, events, "reminder_emitted");
    qw_key(&w, "reminderId"); qw_strz(&w, r->id ? r->id : "");
    qw_key(&w, "body"); qw_str(&w, r->body ? r->body : "", r->body_len);
    qw_key(&w, "tags");
    qw_arr_begin(&w);
    for (uint32_t i = 0; i < r->ntags; i++) qw_strz(&w, r->tags[i]);
    qw_arr_end(&w);
    qw_key(&w, "dedupeKey"); opt_str(&w, r->dedupe_key);
    qw_key(&w, "source"); qw_strz(&w, qsource_name(r->source));
    qw_key(&w, "firedAtTurn");
    if (fired > 0) qw_int(&w, fired);
    else qw_null(&w);
    qw_key(&w, "_meta");
    qw_obj_begin(&w);
    qw_key(&w, "quire");
    qw_obj_begin(&w);
    qw_key(&w, "slot"); qw_strz(&w, slot ? slot : "");
    qw_key(&w, "requestedSlot"); qw_strz(&w, requested_slot ? requested_slot : qrole_hint_name(r->role_hint));
    qw_key(&w, "reason"); qw_strz(&w, reason ? reason : "");
    if (turn > 0) { qw_key(&w, "turn"); qw_int(&w, turn); }
    qw_key(&w, "origin"); qw_strz(&w, r->origin ? r->origin : "host");
    qw_key(&w, "mode"); qw_strz(&w, qmode_name(r->mode));
    qw_obj_end(&w);
    qw_obj_end(&w);
    end(&w, events);
}

void qev_reminder_emitted(qbuf *events, const qreminder *r, int64_t turn, const char *slot,
                          const char *requested_slot, const char *reason) {
    if (!r) return;
    emitted(events, r, r->fired_at_turn ? r->fired_at_turn : turn, turn, slot, requested_slot, reason);
}

void qev_reminder_audit(qbuf *events, const qreminder *r) {
    emitted(events, r, 0, 0, "none", qrole_hint_name(r->role_hint),
            "audit_only: recorded in the state and in events, never rendered");
}

void qev_reminder_deduped(qbuf *events, const char *id, const char *dedupe_key, const char *const *dropped,
                          uint32_t ndropped) {
    if (!events) return;
    qw w;
    begin(&w, events, "reminder_deduped");
    qw_key(&w, "reminderId"); qw_strz(&w, id ? id : "");
    qw_key(&w, "dedupeKey"); opt_str(&w, dedupe_key);
    qw_key(&w, "droppedReminderIds");
    qw_arr_begin(&w);
    for (uint32_t i = 0; i < ndropped; i++) qw_strz(&w, dropped[i]);
    qw_arr_end(&w);
    end(&w, events);
}

void qev_reminder_expired(qbuf *events, const char *id, const char *phase, int64_t turn) {
    if (!events) return;
    qw w;
    begin(&w, events, "reminder_expired");
    qw_key(&w, "reminderId"); qw_strz(&w, id ? id : "");
    qw_key(&w, "phase"); qw_strz(&w, phase);
    qw_key(&w, "expiredAtTurn"); qw_int(&w, turn);
    end(&w, events);
}

void qev_reminder_dropped(qbuf *events, const char *id, const char *reason, const char *detail, const char *origin,
                          const char *code, const char *field) {
    if (!events) return;
    qw w;
    begin(&w, events, "reminder_dropped");
    if (id) { qw_key(&w, "reminderId"); qw_strz(&w, id); }
    qw_key(&w, "reason"); qw_strz(&w, reason);
    /* details are assembled with cut fields: emitted cut on character boundaries */
    char mended[1200];
    snprintf(mended, sizeof mended, "%s", detail ? detail : "");
    q_utf8_mend(mended);
    qw_key(&w, "detail"); qw_strz(&w, mended);
    char fm[128];
    snprintf(fm, sizeof fm, "%s", field ? field : "");
    q_utf8_mend(fm);
    field = field ? fm : NULL;
    if (origin || code || field) {
        qw_key(&w, "_meta");
        qw_obj_begin(&w);
        qw_key(&w, "quire");
        qw_obj_begin(&w);
        if (origin) { qw_key(&w, "origin"); qw_strz(&w, origin); }
        if (code) { qw_key(&w, "code"); qw_strz(&w, code); }
        if (field && *field) { qw_key(&w, "field"); qw_strz(&w, field); }
        qw_obj_end(&w);
        qw_obj_end(&w);
    }
    end(&w, events);
}
