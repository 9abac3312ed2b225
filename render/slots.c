/* Slot choice (DESIGN 5.2) and placement (5.4).
 *
 * Per reminder: start from roleHint, then the capability row and the policy
 * decide; every decision is reported in reminder_emitted (slot, requestedSlot,
 * reason). Reminders of one slot that sit at the same place are grouped into
 * one block, in injection order, bodies separated by one blank line:
 *
 *   <system-reminder>\nBODY1\n\nBODY2\n</system-reminder>      (xmlWrappers)
 *   System reminder:\n> BODY1\n>\n> BODY2\nEnd of system reminder.   (otherwise)
 *
 * Hygiene runs again on the joined bodies (a tag split across two bodies is
 * caught), and the plain shape quotes every body line so that no body can
 * end the block or start a second one.
 *
 * The developer slot carries the bare bodies (joined the same way) as one
 * developer / mid-conversation system message; the system slot appends them as
 * one paragraph after the system prompt.
 *
 * Reasons: "requested", "system_demoted_for_cache" (default policy keeps the
 * system prompt byte-identical), "no_prompt_cache" (system allowed because the
 * row has no prompt caching), "policy_allows_system", "no_developer_slot",
 * "no_explicit_cache" (ephemeral_cache without explicit breakpoints),
 * "peer_slot_capped" (a peer's reminder held to the policy's peerMaxSlot). */
#include "render/render.h"

#include "core/text.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_slots[] = {"system", "developer", "user_block", "ephemeral_cache"};
const char *qslot_name(qslot s) { return (unsigned)s < Q_COUNTOF(k_slots) ? k_slots[s] : "?"; }

static qslot strongest_in_conversation(const qcaps *caps) {
    return caps->developer != QDEV_NONE ? QSLOT_DEVELOPER : QSLOT_USER_BLOCK;
}

static qslot decide_hint(const qr_ctx *c, qrole_hint hint, const char **reason) {
    const qcaps *caps = &c->caps;
    switch (hint) {
    case QRH_SYSTEM:
        if (c->ro->allow_system_slot) { *reason = "policy_allows_system"; return QSLOT_SYSTEM; }
        if (caps->cache == QCACHE_NONE) { *reason = "no_prompt_cache"; return QSLOT_SYSTEM; }
        *reason = "system_demoted_for_cache";
        return strongest_in_conversation(caps);
    case QRH_DEVELOPER:
        if (caps->developer != QDEV_NONE) { *reason = "requested"; return QSLOT_DEVELOPER; }
        *reason = "no_developer_slot";
        return QSLOT_USER_BLOCK;
    case QRH_USER_BLOCK:
        *reason = "requested";
        return QSLOT_USER_BLOCK;
    case QRH_EPHEMERAL_CACHE:
        if (caps->cache == QCACHE_BLOCK_MARKERS || caps->cache == QCACHE_CACHE_POINTS ||
            caps->cache == QCACHE_BREAKPOINTS) {
            *reason = "requested";
            return QSLOT_EPHEMERAL_CACHE;
        }
        *reason = "no_explicit_cache";
        return QSLOT_USER_BLOCK;
    }
    *reason = "requested";
    return QSLOT_USER_BLOCK;
}

/* Peers (principle: a compromised server must not steer the agent): a
 * reminder whose origin is not the host, or that came over an MCP bridge,
 * gets at most the policy's peerMaxSlot. The rank is the authority a slot
 * carries: system prompt > developer message > user block (ephemeral_cache is
 * a user block too). */
static bool from_peer(const qreminder *r) {
    return r->source == QS_BRIDGE || (r->origin && strcmp(r->origin, "host") != 0);
}

static int slot_rank(qslot s) {
    return s == QSLOT_SYSTEM ? QUIRE_PEER_SLOT_SYSTEM : s == QSLOT_DEVELOPER ? QUIRE_PEER_SLOT_DEVELOPER
                                                                              : QUIRE_PEER_SLOT_USER_BLOCK;
}

static qslot decide(const qr_ctx *c, const qreminder *r, const char **reason) {
    qslot s = decide_hint(c, r->role_hint, reason);
    /* a caller built before the field existed passes a smaller size: the default */
    int cap = c->ro->size >= offsetof(quire_render_options, peer_max_slot) + sizeof(int) ? c->ro->peer_max_slot
                                                                                         : QUIRE_PEER_SLOT_USER_BLOCK;
    if (cap < QUIRE_PEER_SLOT_USER_BLOCK || cap > QUIRE_PEER_SLOT_SYSTEM) cap = QUIRE_PEER_SLOT_USER_BLOCK;
    if (slot_rank(s) <= cap || !from_peer(r)) return s;
    /* above the cap: decide again as if the peer had asked for the cap's slot
     * (a developer cap on a row without one still ends in user_block) */
    const char *ignored = NULL;
    s = decide_hint(c, cap == QUIRE_PEER_SLOT_DEVELOPER ? QRH_DEVELOPER : QRH_USER_BLOCK, &ignored);
    *reason = "peer_slot_capped";
    return s;
}

static int slot_order(qslot s) {
    /* within one anchor: user blocks first (they join the last user/tool
     * content), then the ephemeral block, then the developer message */
    switch (s) {
    case QSLOT_USER_BLOCK: return 0;
    case QSLOT_EPHEMERAL_CACHE: return 1;
    case QSLOT_DEVELOPER: return 2;
    case QSLOT_SYSTEM: return 3;
    }
    return 3;
}

typedef struct pick {
    const qreminder *r;
    qslot slot;
    uint32_t anchor;
    uint64_t order; /* injection order (seq) */
    uint32_t at;    /* position in the input: makes the order total */
} pick;

static int pick_cmp(const void *a, const void *b) {
    /* anchors ascending with the tail (UINT32_MAX) last, then slot, then injection order */
    const pick *x = a, *y = b;
    if (x->anchor != y->anchor) return x->anchor < y->anchor ? -1 : 1;
    if (x->slot != y->slot) return slot_order(x->slot) < slot_order(y->slot) ? -1 : 1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int pick_order_cmp(const void *a, const void *b) {
    const pick *x = a, *y = b;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Appends the joined text quoted line by line ("> " before every line, ">"
 * before an empty one; U+2028/U+2029 also start a line), so no body line can
 * stand at the start of a line and pose as the wrapper's header or end. */
static void put_quoted(qbuf *b, const char *s, size_t n) {
    qbuf_puts(b, n && s[0] != '\n' ? "> " : ">");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        bool ls = (unsigned char)s[i] == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                  ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9);
        if (s[i] != '\n' && !ls) continue;
        size_t end = ls ? i + 3 : i + 1;
        qbuf_put(b, s + run, end - run);
        bool empty = end >= n || s[end] == '\n';
        qbuf_puts(b, empty ? ">" : "> ");
        run = end;
        i = end - 1;
    }
    qbuf_put(b, s + run, n - run);
}

static qstr build_text(qr_ctx *c, const pick *p, uint32_t n, qslot slot) {
    /* the bodies as joined: hygiene already ran on each, and runs again on
     * the joined text so that no tag can span two bodies */
    qbuf joined, b;
    qbuf_init(&joined, c->scratch.a);
    qbuf_init(&b, c->scratch.a);
    for (uint32_t i = 0; i < n; i++) {
        if (i) qbuf_puts(&joined, "\n\n");
        qbuf_put(&joined, p[i].r->body, p[i].r->body_len);
    }
    bool wrap = slot == QSLOT_USER_BLOCK || slot == QSLOT_EPHEMERAL_CACHE;
    if (!wrap) {
        qt_neutralise(&b, joined.data ? joined.data : "", joined.len, "system-reminder", true);
    } else if (c->caps.xml) {
        qbuf_puts(&b, "<system-reminder>\n");
        qt_neutralise(&b, joined.data ? joined.data : "", joined.len, "system-reminder", true);
        qbuf_puts(&b, "\n</system-reminder>");
    } else {
        qbuf inner;
        qbuf_init(&inner, c->scratch.a);
        qt_neutralise(&inner, joined.data ? joined.data : "", joined.len, "system-reminder", true);
        qbuf_puts(&b, "System reminder:\n");
        put_quoted(&b, inner.data ? inner.data : "", inner.len);
        qbuf_puts(&b, "\nEnd of system reminder.");
        if (inner.oom) b.oom = true;
        qbuf_free(&inner);
    }
    if (joined.oom) b.oom = true;
    qbuf_free(&joined);
    qstr s = {0};
    if (!b.oom) {
        char *m = qarena_alloc(&c->scratch, b.len + 1);
        if (m) {
            if (b.len) memcpy(m, b.data, b.len);
            m[b.len] = '\0';
            s = qstr_plain(m, b.len);
        }
    }
    qbuf_free(&b);
    return s;
}

quire_status qr_plan_slots(qr_ctx *c) {
    uint32_t n = c->nrems + c->nretired;
    c->groups = NULL;
    c->ngroups = 0;
    c->sys_extra = (qstr){0};
    if (!n) return QUIRE_OK;
    pick *p = qarena_calloc(&c->scratch, n, sizeof(pick));
    if (!p) return q_oom(c->err);
    bool append_only = c->ro->placement == QUIRE_PLACEMENT_APPEND_ONLY;
    uint32_t last = c->t->nmsgs ? c->t->nmsgs - 1 : QR_TAIL;
    for (uint32_t i = 0; i < n; i++) {
        if (i >= c->nrems) {
            /* expired, but its bytes are history: same slot, same place, no event */
            const qreminder *r = c->retired[i - c->nrems];
            const char *reason = "requested";
            p[i].r = r;
            p[i].slot = decide(c, r, &reason);
            p[i].order = r->seq;
            p[i].at = i;
            p[i].anchor = p[i].slot == QSLOT_SYSTEM ? QR_TAIL : r->anchor_msg;
            if (p[i].slot == QSLOT_SYSTEM) p[i].slot = QSLOT_USER_BLOCK; /* never re-enters the system prompt */
            continue;
        }
        const qreminder *r = c->rems[i];
        const char *reason = "requested";
        qslot s = decide(c, r, &reason);
        p[i].r = r;
        p[i].slot = s;
        p[i].order = r->seq;
        p[i].at = i;
        p[i].anchor = QR_TAIL;
        if (append_only && s != QSLOT_SYSTEM) {
            if (r->anchor_msg != UINT32_MAX && r->anchor_msg < last) {
                p[i].anchor = r->anchor_msg; /* stays where it first fired */
            } else if (c->next && r >= c->next->rems && r < c->next->rems + c->next->nrems) {
                /* first fired now: remember where (the message it follows) */
                c->next->rems[r - c->next->rems].anchor_msg = last;
            }
        }
        qev_reminder_emitted(c->events, r, c->turn, qslot_name(s), qrole_hint_name(r->role_hint), reason);
    }
    /* O(n log n): many live reminders must not make rendering quadratic */
    qsort(p, n, sizeof *p, pick_cmp);
    c->groups = qarena_calloc(&c->scratch, n, sizeof(qr_group));
    if (!c->groups) return q_oom(c->err);
    /* system slot: one paragraph, in injection order */
    uint32_t nsys = 0;
    pick *sys = qarena_calloc(&c->scratch, n, sizeof(pick));
    if (!sys) return q_oom(c->err);
    for (uint32_t i = 0; i < n; i++)
        if (p[i].slot == QSLOT_SYSTEM) sys[nsys++] = p[i];
    if (nsys) {
        qsort(sys, nsys, sizeof *sys, pick_order_cmp);
        c->sys_extra = build_text(c, sys, nsys, QSLOT_SYSTEM);
        if (!c->sys_extra.p) return q_oom(c->err);
    }
    for (uint32_t i = 0; i < n;) {
        if (p[i].slot == QSLOT_SYSTEM) { i++; continue; }
        uint32_t j = i + 1;
        while (j < n && p[j].anchor == p[i].anchor && p[j].slot == p[i].slot) j++;
        qr_group *g = &c->groups[c->ngroups++];
        g->slot = p[i].slot;
        g->anchor = p[i].anchor;
        g->text = build_text(c, p + i, j - i, p[i].slot);
        if (!g->text.p) return q_oom(c->err);
        i = j;
    }
    return QUIRE_OK;
}

uint32_t qr_groups_at(const qr_ctx *c, uint32_t k, uint32_t *first) {
    /* groups are sorted by anchor: binary search for the first at k */
    uint32_t lo = 0, hi = c->ngroups;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->groups[mid].anchor < k) lo = mid + 1;
        else hi = mid;
    }
    uint32_t i = lo;
    *first = i;
    uint32_t j = i;
    while (j < c->ngroups && c->groups[j].anchor == k) j++;
    return j - i;
}

bool qr_has_tail_user(const qr_ctx *c) {
    uint32_t f, n = qr_groups_at(c, QR_TAIL, &f);
    for (uint32_t i = f; i < f + n; i++)
        if (c->groups[i].slot != QSLOT_DEVELOPER) return true;
    return false;
}

bool qr_has_tail_developer(const qr_ctx *c) {
    uint32_t f, n = qr_groups_at(c, QR_TAIL, &f);
    for (uint32_t i = f; i < f + n; i++)
        if (c->groups[i].slot == QSLOT_DEVELOPER) return true;
    return false;
}
