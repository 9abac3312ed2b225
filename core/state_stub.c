/* Temporary stand-in so the tree builds: replaced by the reminders module
 * (core/state.c and friends), which implements core/state.h for real. */
#include "core/state.h"

quire_state *qs_new(const quire_allocator *a, const char *session_id) {
    a = a ? a : q_alloc_default();
    quire_state *s = q_malloc(a, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->a = a;
    qarena_init(&s->ar, a);
    s->session_id = session_id ? session_id : "";
    return s;
}
quire_state *qs_clone(const quire_state *s) {
    quire_state *n = qs_new(s->a, s->session_id);
    if (n) { n->turn = s->turn; n->seq = s->seq; }
    return n;
}
const qreminder **qs_live_for_turn(const quire_state *s, qarena *ar, uint32_t *n) {
    (void)s; *n = 0;
    return qarena_alloc(ar, sizeof(qreminder *));
}
void qs_after_render(quire_state *s, qbuf *events) { (void)events; s->turn++; }
void quire_state_free(quire_state *s) {
    if (!s) return;
    qarena_free(&s->ar);
    q_free(s->a, s, sizeof *s);
}
