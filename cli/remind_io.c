/* Reminder state I/O for the render and ingest commands. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_remind_load(const cli_remind *r, const char *session_id, quire_state **state, quire_bytes *events,
                    quire_bytes *responses) {
    *state = NULL;
    memset(events, 0, sizeof *events);
    if (responses) memset(responses, 0, sizeof *responses);
    quire_error e;
    quire_state *s = NULL;
    if (r->state_path) {
        cli_file f;
        if (!cli_read(r->state_path, &f)) return 1;
        quire_status st = quire_state_parse(f.data, f.len, NULL, &s, &e);
        if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
        cli_file_free(&f);
        if (session_id && quire_state_set_session_id(s, session_id, &e)) {
            cli_report(NULL, &e); quire_state_free(s); return 1;
        }
    } else if (quire_state_new(session_id, NULL, &s, &e)) {
        cli_report(NULL, &e);
        return 1;
    }
    if (r->remind_path) {
        cli_file f;
        if (!cli_read(r->remind_path, &f)) { quire_state_free(s); return 1; }
        quire_state *next = NULL;
        quire_bytes resp;
        quire_status st = quire_state_apply_lines(s, f.data, f.len, NULL, &next, events, &resp, &e);
        quire_state_free(s);
        if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
        cli_file_free(&f);
        if (responses) *responses = resp;
        else quire_bytes_free(&resp);
        s = next;
    }
    *state = s;
    return 0;
}

bool cli_remind_outputs(const cli_remind *r, cli_outputs *outs, const quire_state *state, quire_bytes *pre,
                        quire_bytes *mid, quire_bytes *post) {
    bool ok = true;
    if (r->events_out) {
        size_t a = pre ? pre->len : 0, m = mid ? mid->len : 0, b = post ? post->len : 0;
        if (a + m + b == 0) {
            cli_out_add_copy(outs, r->events_out, "", 0);
        } else {
            char *buf = calloc(a + m + b, 1);
            if (!buf) {
                ok = false;
            } else {
                if (a) memcpy(buf, pre->data, a);
                if (m) memcpy(buf + a, mid->data, m);
                if (b) memcpy(buf + a + m, post->data, b);
                cli_out_add_copy(outs, r->events_out, buf, a + m + b);
                free(buf);
            }
        }
    }
    if (pre) quire_bytes_free(pre);
    if (mid) quire_bytes_free(mid);
    if (post) quire_bytes_free(post);
    if (!ok) { cli_fail("out of memory"); return false; }
    if (r->state_out && state) {
        quire_bytes sb;
        quire_error e;
        if (quire_state_write(state, 0, &sb, &e)) { cli_report(NULL, &e); return false; }
        cli_out_add_line(outs, r->state_out, &sb);
    }
    return true;
}
