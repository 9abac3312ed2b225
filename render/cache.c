/* Cache breakpoints (DESIGN 5.3) for rows with explicit markers
 * (block_markers: Anthropic cache_control; cache_points: Bedrock cachePoint).
 *
 * Managed breakpoints (policy "managed", the default), in request order:
 *   1. the last tool definition,
 *   2. the last system block,
 *   3. the last stable block of the conversation: the last markable block of
 *      the last transcript message (reminder blocks are never marked).
 * An ephemeral_cache reminder forces (3) even under policy "input".
 * Markers present in the input fill the remaining room up to the row's limit;
 * when there are more, the oldest are dropped first, each with a
 * cache_marker_dropped event. A marker of the input on a managed site is kept
 * as given (counted once). TTL order: a managed marker before a "1h" marker
 * gets "ttl":"1h"; an input marker with a shorter TTL before a "1h" one is
 * dropped (event, reason "ttl_order"). */
#include "render/render.h"
#include "render/memo.h"

/* Whether block b of message m can carry a breakpoint in this dialect. */
static bool markable(const qr_ctx *c, const qmsg *m, const qblock *b) {
    if (c->caps.cache == QCACHE_BREAKPOINTS) {
        /* content parts only: user text/image/file parts and tool outputs */
        if (m->role == QR_ASSISTANT) return false;
        return (b->type == QB_TEXT && b->text.len > 0) || b->type == QB_IMAGE || b->type == QB_DOCUMENT ||
               b->type == QB_TOOL_RESULT;
    }
    switch (b->type) {
    case QB_TEXT:
        return b->text.len > 0; /* empty text blocks cannot be cached */
    case QB_IMAGE: case QB_DOCUMENT: case QB_TOOL_CALL: case QB_TOOL_RESULT:
        return true;
    case QB_FILE:
        return true;
    case QB_THINKING: case QB_REDACTED_THINKING: case QB_OPAQUE:
    case QB_AUDIO: case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
        return false; /* audio reaches no marker dialect; server tool blocks are provider artefacts */
    }
    return false;
}

static void ev_dropped(qr_ctx *c, const qr_mark *m, const char *reason) {
    if (!c->events) return;
    qw w;
    qw_init(&w, c->events, false);
    qw_obj_begin(&w);
    qw_key(&w, "sessionUpdate"); qw_strz(&w, "cache_marker_dropped");
    qw_key(&w, "site"); qw_strz(&w, m->site == QRS_TOOL ? "tool" : m->site == QRS_SYSTEM ? "system" : "message");
    if (m->site == QRS_BLOCK) {
        qw_key(&w, "messageIndex"); qw_int(&w, c->t->msgs[m->a].src_index);
        qw_key(&w, "blockIndex"); qw_int(&w, m->b);
    } else {
        qw_key(&w, "index"); qw_int(&w, m->a);
    }
    qw_key(&w, "reason"); qw_strz(&w, reason);
    qw_obj_end(&w);
    qw_dispose(&w);
    qbuf_putc(c->events, '\n');
}

static bool is_1h(qval v) {
    if (!qval_present(v) || qj_type_of(v.doc, v.idx) != QJ_OBJECT) return false;
    uint32_t t = qj_get(v.doc, v.idx, "ttl");
    return t != QJ_NONE && qj_type_of(v.doc, t) == QJ_STRING && qj_str_eq(v.doc, t, "1h");
}

static int site_cmp(const qr_mark *x, const qr_mark *y) {
    if (x->site != y->site) return (int)x->site - (int)y->site;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    return 0;
}

quire_status qr_plan_cache(qr_ctx *c) {
    c->nmarks = 0;
    const quire_transcript *t = c->t;
    qcache kind = c->caps.cache;
    if (kind != QCACHE_BLOCK_MARKERS && kind != QCACHE_CACHE_POINTS && kind != QCACHE_BREAKPOINTS) return QUIRE_OK;
    uint32_t limit = c->caps.cache_limit ? c->caps.cache_limit : 4;
    if (limit > Q_COUNTOF(c->marks)) limit = (uint32_t)Q_COUNTOF(c->marks);
    bool managed = c->ro->cache_breakpoints != QUIRE_CACHE_INPUT_ONLY;
    bool eph = false;
    for (uint32_t i = 0; i < c->ngroups; i++)
        if (c->groups[i].slot == QSLOT_EPHEMERAL_CACHE) eph = true;

    qr_mark want[3];
    uint32_t nwant = 0;
    /* the last tool the marker dialects render (custom tools reach OpenAI only) */
    uint32_t last_tool = UINT32_MAX;
    for (uint32_t i = 0; t->has_tools && i < t->ntools; i++)
        if (t->tools[i].kind != QTK_CUSTOM) last_tool = i;
    if (managed && last_tool != UINT32_MAX && kind != QCACHE_BREAKPOINTS) want[nwant++] = (qr_mark){QRS_TOOL, last_tool, 0, {0}, false};
    if (managed && t->has_system && t->nsystem && c->caps.system == QSYS_NATIVE)
        want[nwant++] = (qr_mark){QRS_SYSTEM, t->nsystem - 1, 0, {0}, false};
    if (managed || eph) {
        /* the last stable block: the last markable block of the last message
         * (a message with none is skipped backwards) */
        bool found = false;
        for (uint32_t k = t->nmsgs; k-- > 0 && !found;) {
            const qmsg *m = &t->msgs[k];
            if (m->role == QR_SYSTEM || m->role == QR_DEVELOPER) continue;
            for (uint32_t b = m->nblocks; b-- > 0;)
                if (markable(c, m, &m->blocks[b])) { want[nwant++] = (qr_mark){QRS_BLOCK, k, b, {0}, false}; found = true; break; }
        }
    }
    if (nwant > limit) nwant = limit;

    /* input markers of messages: with a memo, the ones of the messages it
     * has seen are known and only the new messages are scanned */
    qr_inmarks *im = c->memo ? qr_memo_inmarks(c->memo) : NULL;
    uint32_t from = 0;
    if (im) {
        if (qr_scan_holds(im->t, im->n, im->last, t)) {
            from = im->n;
        } else {
            im->t = t;
            im->n = 0;
            im->cnt = 0;
        }
    }
    /* input markers in request order: tools, system, messages */
    qr_mark *in = NULL;
    uint32_t nin = 0, capin = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t cnt = 0;
        for (uint32_t i = 0; t->has_tools && i < t->ntools; i++)
            if (qval_present(t->tools[i].cache_control)) {
                if (pass) in[cnt] = (qr_mark){QRS_TOOL, i, 0, t->tools[i].cache_control, false};
                cnt++;
            }
        for (uint32_t i = 0; t->has_system && i < t->nsystem; i++)
            if (qval_present(t->system[i].cache_control)) {
                if (pass) in[cnt] = (qr_mark){QRS_SYSTEM, i, 0, t->system[i].cache_control, false};
                cnt++;
            }
        for (uint32_t i = 0; im && i < im->cnt; i++) {
            if (pass) {
                uint32_t k = im->k[i], b = im->b[i];
                in[cnt] = (qr_mark){QRS_BLOCK, k, b, t->msgs[k].blocks[b].cache_control, false};
            }
            cnt++;
        }
        for (uint32_t k = from; k < t->nmsgs; k++)
            for (uint32_t b = 0; b < t->msgs[k].nblocks; b++)
                if (qval_present(t->msgs[k].blocks[b].cache_control)) {
                    if (pass) in[cnt] = (qr_mark){QRS_BLOCK, k, b, t->msgs[k].blocks[b].cache_control, false};
                    cnt++;
                }
        if (!pass) {
            if (!cnt) break;
            capin = cnt;
            in = qarena_calloc(&c->scratch, cnt, sizeof(qr_mark));
            if (!in) return q_oom(c->err);
        } else {
            nin = cnt;
        }
    }
    (void)capin;
    if (im) {
        /* the messages recorded end with one whose blocks identify it in a
         * later render: not the render's scratch (qr_memo_stable) */
        uint32_t upto = t->nmsgs;
        if (upto && !qr_memo_stable(c->memo, t, upto - 1)) upto--;
        for (uint32_t j = 0; j < nin; j++)
            if (in[j].site == QRS_BLOCK && in[j].a >= from && in[j].a < upto && !qr_inmarks_push(c->memo, in[j].a, in[j].b)) {
                im->t = NULL; /* forget: the next render scans everything */
                break;
            }
        if (im->t == t && upto >= im->n) {
            im->n = upto;
            im->last = upto ? t->msgs[upto - 1].blocks : NULL;
        }
    }
    /* input markers on sites this dialect cannot mark are dropped with an event */
    {
        uint32_t w2 = 0;
        for (uint32_t j = 0; j < nin; j++) {
            bool ok = in[j].site != QRS_TOOL || kind != QCACHE_BREAKPOINTS;
            if (in[j].site == QRS_BLOCK) ok = markable(c, &t->msgs[in[j].a], &t->msgs[in[j].a].blocks[in[j].b]) &&
                                              t->msgs[in[j].a].role != QR_SYSTEM && t->msgs[in[j].a].role != QR_DEVELOPER;
            if (ok) in[w2++] = in[j];
            else ev_dropped(c, &in[j], "not_markable");
        }
        nin = w2;
    }
    /* an input marker on a managed site replaces it */
    bool *used = nin ? qarena_calloc(&c->scratch, nin, sizeof(bool)) : NULL;
    if (nin && !used) return q_oom(c->err);
    for (uint32_t i = 0; i < nwant; i++)
        for (uint32_t j = 0; j < nin; j++)
            if (site_cmp(&want[i], &in[j]) == 0) { want[i].input = in[j].input; used[j] = true; }
    /* the rest fill the room newest first; older ones are dropped */
    uint32_t room = limit - nwant;
    uint32_t nkeep = 0;
    bool *keep = nin ? qarena_calloc(&c->scratch, nin, sizeof(bool)) : NULL;
    if (nin && !keep) return q_oom(c->err);
    for (uint32_t j = nin; j-- > 0;) {
        if (used[j]) continue;
        if (nkeep < room) { keep[j] = true; nkeep++; }
    }
    for (uint32_t j = 0; j < nin; j++)
        if (!used[j] && !keep[j]) ev_dropped(c, &in[j], "limit");
    /* merge in request order */
    qr_mark all[32];
    uint32_t nall = 0;
    for (uint32_t i = 0; i < nwant; i++) all[nall++] = want[i];
    for (uint32_t j = 0; j < nin && nall < Q_COUNTOF(all); j++)
        if (keep[j]) all[nall++] = in[j];
    for (uint32_t i = 1; i < nall; i++) {
        qr_mark x = all[i];
        uint32_t j = i;
        while (j > 0 && site_cmp(&x, &all[j - 1]) < 0) { all[j] = all[j - 1]; j--; }
        all[j] = x;
    }
    /* TTL order: longer before shorter */
    if (kind == QCACHE_BLOCK_MARKERS) {
        bool later_1h = false;
        for (uint32_t i = nall; i-- > 0;) {
            qr_mark *m = &all[i];
            if (is_1h(m->input)) { later_1h = true; continue; }
            if (!later_1h) continue;
            if (!qval_present(m->input)) m->ttl_1h = true;
            else { ev_dropped(c, m, "ttl_order"); m->site = (qr_site)99; }
        }
    }
    for (uint32_t i = 0; i < nall; i++)
        if ((int)all[i].site != 99) c->marks[c->nmarks++] = all[i];
    return QUIRE_OK;
}

const qr_mark *qr_mark_at(const qr_ctx *c, qr_site site, uint32_t a, uint32_t b) {
    for (uint32_t i = 0; i < c->nmarks; i++) {
        const qr_mark *m = &c->marks[i];
        if (m->site == site && m->a == a && m->b == b) return m;
    }
    return NULL;
}

void qr_write_cache_control(qr_ctx *c, const qr_mark *m) {
    qw *w = c->w;
    if (c->caps.cache == QCACHE_BREAKPOINTS) { /* OpenAI: {"mode":"explicit"} whatever the input said */
        qw_obj_begin(w);
        qw_key(w, "mode"); qw_strz(w, "explicit");
        qw_obj_end(w);
        return;
    }
    if (qval_present(m->input)) { qw_qval(w, m->input); return; }
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "ephemeral");
    if (m->ttl_1h) { qw_key(w, "ttl"); qw_strz(w, "1h"); }
    qw_obj_end(w);
}
