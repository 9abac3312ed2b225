/* `quire report`: a replay as one self-contained HTML file (docs/replay.md).
 *
 * The log is replayed with the library's own replayer; every figure is one
 * that `quire replay --stats` prints (request bytes, the prefix shared with
 * the previous request) plus an estimate of the request's tokens. The page is
 * static HTML and inline SVG written here, with one small script that loads
 * request bodies lazily: each body is stored as the prefix length it shares
 * with the previous turn's body plus its own remaining bytes, so the embedded
 * data grows with what changed between turns, not with turns x request size.
 *
 * Escaping: text goes into the page through html_text() (& < > " ' as
 * entities), data goes into one <script type="application/json"> block
 * through js_str(), which also escapes < > & U+2028 U+2029 so no byte
 * sequence of a body can close the block. The script inserts data with
 * textContent only. Pure: no I/O, no clock.
 */
#include "session/log.h"

#include "compact/estimate.h"

#include <stdio.h>

/* ---- collected data ---- */

enum { EV_EMITTED, EV_DEDUPED, EV_EXPIRED, EV_CLEARED, EV_COMPACTED_OUT, EV_DROPPED, EV_OTHER };

typedef struct rp_event {
    uint32_t turn_slot;  /* 2*k: during the render of turn k; 2*k+1: after turn k */
    uint32_t lane;       /* UINT32_MAX: no reminder lane */
    uint8_t kind;
    size_t json_off, json_len; /* the event object in R.evtext */
} rp_event;

typedef struct rp_turn {
    int64_t turn;
    uint32_t line;
    const char *provider, *model;
    size_t bytes, prefix, tokens;
    uint32_t reminders;
    size_t prefix_u16;           /* the shared prefix in UTF-16 units (for the script) */
    size_t delta_off, delta_len; /* the body bytes after the prefix, in R.body_delta (raw) */
} rp_turn;

typedef struct rp_lane {
    const char *id;       /* reminder id, or "origin <o>" for drops without an id */
    const char *origin;
    const char *body;     /* first body seen (for the label) */
    const char *slot;     /* last slot / reason seen */
    const char *reason;
    uint32_t first_slot;
} rp_lane;

/* The current body as the run of turn deltas it is made of, with each part's
 * token estimate and UTF-16 length, so a turn costs what changed: the body of
 * turn T is a prefix of turn T-1's parts plus its own delta. */
typedef struct rp_seg {
    size_t off, len;      /* bytes in R.body_delta */
    size_t tokens, u16;
} rp_seg;

typedef struct rp_compaction {
    uint32_t after_turn;
    size_t json_off, json_len;
} rp_compaction;

typedef struct report {
    const quire_allocator *a;
    qarena ar;
    rp_turn *turns;
    uint32_t nturns, capturns;
    rp_event *evs;
    uint32_t nevs, capevs;
    rp_lane *lanes;
    uint32_t nlanes, caplanes;
    uint32_t *lane_tab;   /* open addressing: lane index + 1, 0 = empty */
    uint32_t lane_tab_cap; /* a power of two, at least twice nlanes */
    rp_compaction *comps;
    uint32_t ncomps, capcomps;
    qbuf evtext;      /* event objects, compact JSON, one after another */
    qbuf body_delta;  /* raw body bytes after each turn's shared prefix */
    qbuf prev;        /* the previous turn's body */
    rp_seg *segs;     /* the previous body as parts of body_delta */
    uint32_t nsegs, capsegs;
    size_t seg_tokens, seg_u16; /* sums over segs */
    uint64_t total_bytes, total_prefix;
    quire_error *err;
} report;

static bool grow(report *R, void **p, uint32_t *cap, uint32_t n, size_t elem) {
    if (n < *cap) return true;
    uint32_t nc = *cap ? *cap * 2 : 64;
    void *np = q_realloc(R->a, *p, (size_t)*cap * elem, (size_t)nc * elem);
    if (!np) return false;
    *p = np;
    *cap = nc;
    return true;
}

/* Bytes of a common prefix, moved back to a UTF-8 character boundary. */
static size_t common_prefix(const char *a, size_t an, const char *b, size_t bn) {
    size_t n = an < bn ? an : bn, i = 0;
    while (i + 4096 <= n && memcmp(a + i, b + i, 4096) == 0) i += 4096; /* blocks first: bodies share most */
    while (i < n && a[i] == b[i]) i++;
    while (i > 0 && i < bn && ((unsigned char)b[i] & 0xC0) == 0x80) i--;
    return i;
}

static size_t utf16_units(const char *s, size_t n) {
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80) u += c >= 0xF0 ? 2 : 1;
    }
    return u;
}

static const char *dup_str(report *R, const qj_doc *d, uint32_t v) {
    if (v == QJ_NONE || qj_type_of(d, v) != QJ_STRING) return NULL;
    return qj_str_decode(d, v, &R->ar, NULL);
}

static uint64_t hash_str(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static bool lane_tab_grow(report *R) {
    uint32_t nc = R->lane_tab_cap ? R->lane_tab_cap * 2 : 128;
    uint32_t *nt = q_malloc(R->a, (size_t)nc * sizeof(uint32_t));
    if (!nt) return false;
    memset(nt, 0, (size_t)nc * sizeof(uint32_t));
    for (uint32_t i = 0; i < R->nlanes; i++) {
        uint32_t k = (uint32_t)hash_str(R->lanes[i].id) & (nc - 1);
        while (nt[k]) k = (k + 1) & (nc - 1);
        nt[k] = i + 1;
    }
    q_free(R->a, R->lane_tab, (size_t)R->lane_tab_cap * sizeof(uint32_t));
    R->lane_tab = nt;
    R->lane_tab_cap = nc;
    return true;
}

/* The lane of a reminder id (created on first sight). UINT32_MAX - 1 on OOM. */
static uint32_t lane_for(report *R, const char *id, const char *origin, uint32_t slot) {
    if (2 * (R->nlanes + 1) > R->lane_tab_cap && !lane_tab_grow(R)) return UINT32_MAX - 1;
    uint32_t k = (uint32_t)hash_str(id) & (R->lane_tab_cap - 1);
    for (; R->lane_tab[k]; k = (k + 1) & (R->lane_tab_cap - 1)) {
        rp_lane *L = &R->lanes[R->lane_tab[k] - 1];
        if (strcmp(L->id, id) == 0) {
            if (!L->origin && origin) L->origin = origin;
            return R->lane_tab[k] - 1;
        }
    }
    if (!grow(R, (void **)&R->lanes, &R->caplanes, R->nlanes, sizeof(rp_lane))) return UINT32_MAX - 1;
    rp_lane *l = &R->lanes[R->nlanes];
    memset(l, 0, sizeof *l);
    l->id = id;
    l->origin = origin;
    l->first_slot = slot;
    R->lane_tab[k] = R->nlanes + 1;
    return R->nlanes++;
}

/* One {"type":"event","event":{...}} or {"type":"compacted",...} line of a step's output. */
static quire_status take_compacted(report *R, const qj_doc *dd, uint32_t slot) {
    if (!grow(R, (void **)&R->comps, &R->capcomps, R->ncomps, sizeof(rp_compaction))) return q_oom(R->err);
    uint32_t rep = qj_get(dd, 0, "report");
    rp_compaction *c = &R->comps[R->ncomps++];
    c->after_turn = slot / 2;
    c->json_off = R->evtext.len;
    if (rep != QJ_NONE) qbuf_put(&R->evtext, dd->nodes[rep].p, dd->nodes[rep].len);
    c->json_len = R->evtext.len - c->json_off;
    return QUIRE_OK;
}

static quire_status take_event(report *R, const qj_doc *dd, uint32_t ev, uint32_t slot) {
    uint32_t su = qj_get(dd, ev, "sessionUpdate");
    uint8_t kind = EV_OTHER;
    if (su != QJ_NONE) {
        if (qj_str_eq(dd, su, "reminder_emitted")) kind = EV_EMITTED;
        else if (qj_str_eq(dd, su, "reminder_deduped")) kind = EV_DEDUPED;
        else if (qj_str_eq(dd, su, "reminder_dropped")) kind = EV_DROPPED;
        else if (qj_str_eq(dd, su, "reminder_expired")) {
            uint32_t ph = qj_get(dd, ev, "phase");
            kind = ph != QJ_NONE && qj_str_eq(dd, ph, "cleared")         ? EV_CLEARED
                   : ph != QJ_NONE && qj_str_eq(dd, ph, "compacted_out") ? EV_COMPACTED_OUT
                                                                         : EV_EXPIRED;
        }
    }
    const char *origin = NULL, *qslot = NULL, *reason = NULL;
    uint32_t meta = qj_get(dd, ev, "_meta");
    uint32_t q = meta != QJ_NONE && qj_type_of(dd, meta) == QJ_OBJECT ? qj_get(dd, meta, "quire") : QJ_NONE;
    if (q != QJ_NONE && qj_type_of(dd, q) == QJ_OBJECT) {
        origin = dup_str(R, dd, qj_get(dd, q, "origin"));
        qslot = dup_str(R, dd, qj_get(dd, q, "slot"));
    }
    if (q != QJ_NONE && qj_type_of(dd, q) == QJ_OBJECT) reason = dup_str(R, dd, qj_get(dd, q, "reason"));
    if (kind == EV_DROPPED) reason = dup_str(R, dd, qj_get(dd, ev, "reason"));
    uint32_t lane = UINT32_MAX;
    if (kind != EV_OTHER) {
        const char *id = dup_str(R, dd, qj_get(dd, ev, "reminderId"));
        if (!id) {
            size_t on = origin ? strlen(origin) : 7;
            char *k = qarena_alloc(&R->ar, on + 16);
            if (!k) { return q_oom(R->err); }
            snprintf(k, on + 16, "(no id) %s", origin ? origin : "unknown"); /* one lane per origin */
            id = k;
        }
        lane = lane_for(R, id, origin, slot);
        if (lane == UINT32_MAX - 1) { return q_oom(R->err); }
        rp_lane *L = &R->lanes[lane];
        if (!L->body && kind == EV_EMITTED) L->body = dup_str(R, dd, qj_get(dd, ev, "body"));
        if (kind == EV_EMITTED) { L->slot = qslot; L->reason = reason; }
        if (kind == EV_DROPPED && !L->reason) L->reason = reason;
    }
    if (!grow(R, (void **)&R->evs, &R->capevs, R->nevs, sizeof(rp_event))) { return q_oom(R->err); }
    rp_event *E = &R->evs[R->nevs++];
    E->turn_slot = slot;
    E->lane = lane;
    E->kind = kind;
    E->json_off = R->evtext.len;
    qbuf_put(&R->evtext, dd->nodes[ev].p, dd->nodes[ev].len);
    E->json_len = R->evtext.len - E->json_off;
    return QUIRE_OK;
}

static quire_status take_line(report *R, const char *l, size_t n, uint32_t slot) {
    qj_doc d;
    quire_error e;
    if (qj_parse(&d, l, n, NULL, R->a, &e)) return q_oom(R->err); /* the replayer's own output: only OOM fails */
    quire_status st = QUIRE_OK;
    uint32_t ty = qj_get(&d, 0, "type"), ev = qj_get(&d, 0, "event");
    if (ty != QJ_NONE && qj_str_eq(&d, ty, "compacted")) st = take_compacted(R, &d, slot);
    else if (ty != QJ_NONE && qj_str_eq(&d, ty, "event") && ev != QJ_NONE && qj_type_of(&d, ev) == QJ_OBJECT)
        st = take_event(R, &d, ev, slot);
    qj_doc_free(&d);
    return st;
}

static quire_status take_step(report *R, const quire_replay_step *s) {
    const char *p = s->output, *end = s->output + s->output_len;
    bool skip_first = false;
    uint32_t slot = 2 * R->nturns + 1; /* after the last turn rendered */
    if (s->turn > 0 && s->request) {
        if (!grow(R, (void **)&R->turns, &R->capturns, R->nturns, sizeof(rp_turn))) return q_oom(R->err);
        rp_turn *t = &R->turns[R->nturns];
        memset(t, 0, sizeof *t);
        t->turn = s->turn;
        t->line = s->line;
        t->provider = qarena_strndup(&R->ar, s->provider ? s->provider : "", s->provider ? strlen(s->provider) : 0);
        t->model = s->model ? qarena_strndup(&R->ar, s->model, strlen(s->model)) : NULL;
        t->bytes = s->request_len;
        t->prefix = R->nturns ? common_prefix(R->prev.data, R->prev.len, s->request, s->request_len) : 0;
        t->reminders = s->reminders;
        t->delta_off = R->body_delta.len;
        qbuf_put(&R->body_delta, s->request + t->prefix, s->request_len - t->prefix);
        t->delta_len = s->request_len - t->prefix;
        if (R->body_delta.oom) return q_oom(R->err);
        /* keep the parts that lie inside the shared prefix; the part the prefix
         * ends in is measured again over its kept bytes only */
        size_t pos = 0;
        uint32_t k = 0;
        while (k < R->nsegs && pos + R->segs[k].len <= t->prefix) pos += R->segs[k++].len;
        for (uint32_t j = k; j < R->nsegs; j++) {
            R->seg_tokens -= R->segs[j].tokens;
            R->seg_u16 -= R->segs[j].u16;
        }
        R->nsegs = k;
        if (pos < t->prefix) {
            rp_seg *g = &R->segs[R->nsegs++]; /* the slot of the part cut, still allocated */
            g->len = t->prefix - pos;
            g->tokens = qc_estimate_tokens(R->body_delta.data + g->off, g->len);
            g->u16 = utf16_units(R->body_delta.data + g->off, g->len);
            R->seg_tokens += g->tokens;
            R->seg_u16 += g->u16;
        }
        t->prefix_u16 = R->seg_u16;
        if (!grow(R, (void **)&R->segs, &R->capsegs, R->nsegs, sizeof(rp_seg))) return q_oom(R->err);
        rp_seg *g = &R->segs[R->nsegs++];
        g->off = t->delta_off;
        g->len = t->delta_len;
        g->tokens = qc_estimate_tokens(s->request + t->prefix, t->delta_len);
        g->u16 = utf16_units(s->request + t->prefix, t->delta_len);
        R->seg_tokens += g->tokens;
        R->seg_u16 += g->u16;
        t->tokens = R->seg_tokens;
        R->prev.len = 0;
        qbuf_put(&R->prev, s->request, s->request_len);
        R->total_bytes += t->bytes;
        R->total_prefix += t->prefix;
        R->nturns++;
        slot = 2 * R->nturns; /* during this turn */
        skip_first = true;    /* the request line */
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (skip_first) skip_first = false;
        else if (n) {
            quire_status st = take_line(R, p, n, slot);
            if (st) return st;
        }
        p += n + 1;
    }
    if (R->evtext.oom || R->body_delta.oom || R->prev.oom) return q_oom(R->err);
    return QUIRE_OK;
}

/* ---- the previous run (--against) ---- */

typedef struct against {
    qj_doc d;
    uint32_t *req;   /* per turn (1-based index - 1): the request line's root node, or QJ_NONE */
    uint32_t nreq;
    size_t *line_off;
    bool has;
    int64_t first_diff;  /* 0: none */
    uint32_t ndiff, nonly_old, nonly_new;
} against;

/* ---- HTML writing ---- */

static void html_text(qbuf *b, const char *s, size_t n) {
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep = NULL;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: break;
        }
        if (rep) {
            qbuf_put(b, s + run, i - run);
            qbuf_puts(b, rep);
            run = i + 1;
        }
    }
    qbuf_put(b, s + run, n - run);
}
static void html_z(qbuf *b, const char *s) { if (s) html_text(b, s, strlen(s)); }

/* Text cut to at most max bytes on a character boundary, with a marker. */
static void html_cut(qbuf *b, const char *s, size_t n, size_t max) {
    if (n <= max) { html_text(b, s, n); return; }
    size_t k = max;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    html_text(b, s, k);
    qbuf_printf(b, "\xe2\x80\xa6 (%zu bytes in all)", n);
}

/* A short label: at most max bytes on a character boundary, "…" when cut. */
static void label_cut(qbuf *b, const char *s, size_t max) {
    size_t n = strlen(s);
    if (n <= max) { html_text(b, s, n); return; }
    size_t k = max;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    html_text(b, s, k);
    qbuf_puts(b, "\xe2\x80\xa6");
}

/* A JSON string for the data block: JSON escaping plus < > & U+2028 U+2029 as
 * \u escapes, so nothing inside can end the <script> element. */
static void js_str(qbuf *b, const char *s, size_t n) {
    static const char hx[] = "0123456789abcdef";
    qbuf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool esc = c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' ||
                   (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                    ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9));
        if (!esc) continue;
        qbuf_put(b, s + run, i - run);
        if (c == '"') qbuf_puts(b, "\\\"");
        else if (c == '\\') qbuf_puts(b, "\\\\");
        else if (c == 0xE2) {
            qbuf_puts(b, (unsigned char)s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029");
            i += 2;
        } else {
            char u[6] = {'\\', 'u', '0', '0', hx[c >> 4], hx[c & 15]};
            qbuf_put(b, u, 6);
        }
        run = i + 1;
    }
    qbuf_put(b, s + run, n - run);
    qbuf_putc(b, '"');
}

static const char k_css[] =
    "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;"
    "padding:0 16px 48px;color:#1d2329;background:#fff}"
    "h1{font-size:22px;margin:18px 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #dde2e6}"
    ".meta{color:#56616b;margin:0}.meta b{color:#1d2329}"
    "svg{display:block;width:100%;height:auto;background:#fafbfc;border:1px solid #e3e7ea}"
    "svg text{font:11px system-ui,sans-serif;fill:#56616b}"
    ".bar{fill:#9cc3e6}.bar.compact-after{fill:#e6b89c}.turn-pt{fill:#2f6fb0}.share{fill:none;stroke:#2f6fb0;stroke-width:1}"
    ".compaction{stroke:#c0572b;stroke-width:1.5;stroke-dasharray:4 3}"
    ".lane-bg{fill:#f1f4f6}.lane-line{stroke:#c9d1d8}"
    ".ev-emitted{fill:#2f8f4e}.ev-deduped{fill:#8a5cc2}.ev-expired{fill:#7a8691}.ev-cleared{fill:#d08a00}"
    ".ev-compacted_out{fill:#c0572b}.ev-dropped{fill:#c62828}"
    ".legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:10px;height:10px;"
    "border-radius:5px;margin-right:4px;vertical-align:-1px}"
    "table{border-collapse:collapse;width:100%;font-size:13px}td,th{border-bottom:1px solid #e6eaed;padding:3px 6px;"
    "text-align:left;vertical-align:top}th{color:#56616b;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".body-text{white-space:pre-wrap;word-break:break-word;max-width:520px}"
    "details{border:1px solid #e3e7ea;border-radius:4px;margin:4px 0;padding:2px 8px}"
    "summary{cursor:pointer;font-variant-numeric:tabular-nums}"
    ".body-pre{white-space:pre}pre{white-space:pre-wrap;word-break:break-all;background:#f6f8fa;padding:8px;font:12px/1.4 ui-monospace,"
    "SFMono-Regular,Menlo,monospace;max-height:480px;overflow:auto}"
    ".ev-list{margin:4px 0;padding-left:18px;font:12px ui-monospace,monospace;word-break:break-all}"
    "mark{background:#ffe08a}.diff-del{background:#fde7e7}.diff-add{background:#e3f6e8}.warn{color:#a33}";

/* The script: lazy bodies, pretty printing, the diff against the previous
 * turn. Data is read from #quire-data and written with textContent only. */
static const char k_js[] =
    "(function(){'use strict';\n"
    "var D=null;function data(){if(!D){var el=document.getElementById('quire-data');D=el?JSON.parse(el.textContent):{turns:[]};}return D;}\n"
    "var cache={i:-1,segs:[]};\n"
    "function body(i){var d=data();if(!d.bodies)return null;var segs,k;\n"
    " if(cache.i>=0&&cache.i<=i){segs=cache.segs.slice();k=cache.i+1;}else{segs=[];k=0;}\n"
    " for(;k<=i;k++){var t=d.turns[k],p=t.p,pos=0,j=0;\n"
    "  while(j<segs.length&&pos+segs[j].b-segs[j].a<=p){pos+=segs[j].b-segs[j].a;j++;}\n"
    "  if(j<segs.length&&pos<p){segs[j]={t:segs[j].t,a:segs[j].a,b:segs[j].a+(p-pos)};j++;}\n"
    "  segs.length=j;segs.push({t:k,a:0,b:t.s.length});}\n"
    " cache={i:i,segs:segs};\n"
    " return segs.map(function(g){return d.turns[g.t].s.slice(g.a,g.b);}).join('');}\n"
    "function pretty(s){var o=[],ind=0,st=0,i=0,n=s.length,c,nl=function(){return '\\n'+'  '.repeat(ind);};\n"
    " while(i<n){c=s.charCodeAt(i);\n"
    "  if(c===34){i++;while(i<n){c=s.charCodeAt(i);if(c===92)i+=2;else if(c===34){i++;break;}else i++;}continue;}\n"
    "  if(c===123||c===91){var e=s.charCodeAt(i+1);o.push(s.slice(st,i+1));\n"
    "   if(e===125||e===93){o.push(s[i+1]);i+=2;}else{ind++;o.push(nl());i++;}st=i;continue;}\n"
    "  if(c===125||c===93){o.push(s.slice(st,i));ind--;o.push(nl());st=i;i++;continue;}\n"
    "  if(c===44){o.push(s.slice(st,i+1));o.push(nl());i++;st=i;continue;}\n"
    "  if(c===58){o.push(s.slice(st,i+1));o.push(' ');i++;st=i;continue;}\n"
    "  i++;}\n"
    " o.push(s.slice(st));return o.join('');}\n"
    "function diff(a,b){var A=a.split('\\n'),B=b.split('\\n'),p=0,q=0;\n"
    " while(p<A.length&&p<B.length&&A[p]===B[p])p++;\n"
    " while(q<A.length-p&&q<B.length-p&&A[A.length-1-q]===B[B.length-1-q])q++;\n"
    " var out=document.createDocumentFragment(),line=function(cls,t){var d=document.createElement('div');"
    "if(cls)d.className=cls;d.textContent=t;out.appendChild(d);};\n"
    " line('',p+' unchanged line(s) before');\n"
    " var del=A.slice(p,A.length-q),add=B.slice(p,B.length-q),cap=400;\n"
    " del.slice(0,cap).forEach(function(t){line('diff-del','- '+t);});if(del.length>cap)line('diff-del','- \\u2026 '+(del.length-cap)+' more');\n"
    " add.slice(0,cap).forEach(function(t){line('diff-add','+ '+t);});if(add.length>cap)line('diff-add','+ \\u2026 '+(add.length-cap)+' more');\n"
    " line('',q+' unchanged line(s) after');return out;}\n"
    "function fill(det){if(det.dataset.filled)return;det.dataset.filled='1';var i=+det.dataset.index;\n"
    " var pb=det.querySelector('.body-pre'),pd=det.querySelector('.diff-pre');if(!pb)return;\n"
    " var pv=i>0?body(i-1):null,b=body(i);if(b===null){pb.textContent='(request bodies were left out: --no-bodies)';return;}\n"
    " var pr=pretty(b),cap=262144;\n"
    " if(pr.length>cap){pb.textContent=pr.slice(0,cap);var btn=document.createElement('button');\n"
    "  btn.textContent='show the whole body ('+pr.length+' characters)';btn.addEventListener('click',function(){pb.textContent=pr;btn.remove();});\n"
    "  pb.parentNode.insertBefore(btn,pb.nextSibling);}else pb.textContent=pr;\n"
    " if(pv!==null&&pd){pd.textContent='';pd.appendChild(diff(pretty(pv),pr));}\n"
    " else if(pd)pd.textContent='(first turn: nothing to compare)';}\n"
    "document.querySelectorAll('details.turn').forEach(function(d){d.addEventListener('toggle',function(){if(d.open)fill(d);});});\n"
    "function fromHash(){var m=/^#turn-([0-9,]+)$/.exec(location.hash);if(!m)return;var last=null;\n"
    " m[1].split(',').forEach(function(n){var d=document.getElementById('turn-'+n);if(d){d.open=true;fill(d);last=d;}});\n"
    " if(last)last.scrollIntoView();}\n"
    "window.addEventListener('hashchange',fromHash);fromHash();\n"
    "var root=document.documentElement;root.setAttribute('data-ready','1');\n"
    "if(window.performance)root.setAttribute('data-ready-ms',String(Math.round(performance.now())));\n"
    "})();\n";

static const char *kind_name(uint8_t k) {
    switch (k) {
    case EV_EMITTED: return "emitted";
    case EV_DEDUPED: return "deduped";
    case EV_EXPIRED: return "expired";
    case EV_CLEARED: return "cleared";
    case EV_COMPACTED_OUT: return "compacted_out";
    case EV_DROPPED: return "dropped";
    default: return "other";
    }
}

#define LANE_MAX 300u
#define LANE_X0 220.0 /* both charts start their turn axis here, so turns line up */

static double xpos(uint32_t slot, double x0, double step) {
    /* slot 2k: at turn k; 2k+1: between turn k and k+1 */
    return x0 + step * ((double)slot / 2.0 - 0.5);
}

static void write_timeline(report *R, qbuf *b) {
    uint32_t n = R->nturns;
    double W = 1000, H = 240, x0 = LANE_X0, x1 = W - 48, y0 = 16, y1 = H - 28;
    double step = n ? (x1 - x0) / (double)n : 1;
    size_t maxtok = 1;
    for (uint32_t i = 0; i < n; i++)
        if (R->turns[i].tokens > maxtok) maxtok = R->turns[i].tokens;
    qbuf_printf(b, "<svg id=\"timeline\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"request tokens and "
                   "cached-prefix share per turn\">", W, H);
    qbuf_printf(b, "<line class=\"lane-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, y1, x1, y1);
    qbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%zu tokens</text><text x=\"%.1f\" y=\"%.1f\" "
                   "text-anchor=\"end\">0</text>", x0 - 6, y0 + 8, maxtok, x0 - 6, y1);
    qbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">100%%</text><text x=\"%.1f\" y=\"%.1f\">0%%</text>", x1 + 6, y0 + 8,
                x1 + 6, y1);
    double bw = step * 0.7 < 1 ? step : step * 0.7;
    for (uint32_t i = 0; i < n; i++) {
        const rp_turn *t = &R->turns[i];
        double h = (y1 - y0) * (double)t->tokens / (double)maxtok;
        double x = x0 + step * (double)i + (step - bw) / 2;
        qbuf_printf(b, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>turn %lld: "
                       "%zu bytes, ~%zu tokens</title></rect>",
                    x, y1 - h, bw, h, (long long)t->turn, t->bytes, t->tokens);
    }
    qbuf_puts(b, "<polyline class=\"share\" points=\"");
    for (uint32_t i = 0; i < n; i++) {
        const rp_turn *t = &R->turns[i];
        double share = t->bytes ? (double)t->prefix / (double)t->bytes : 0;
        qbuf_printf(b, "%s%.2f,%.2f", i ? " " : "", x0 + step * ((double)i + 0.5), y1 - (y1 - y0) * share);
    }
    qbuf_puts(b, "\"/>");
    for (uint32_t i = 0; i < n; i++) {
        const rp_turn *t = &R->turns[i];
        double share = t->bytes ? (double)t->prefix / (double)t->bytes : 0;
        qbuf_printf(b, "<circle class=\"turn-pt\" data-turn=\"%lld\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\"><title>turn "
                       "%lld: %.1f%% of %zu bytes shared with the previous request</title></circle>",
                    (long long)t->turn, x0 + step * ((double)i + 0.5), y1 - (y1 - y0) * share, n > 200 ? 1.5 : 3.0,
                    (long long)t->turn, 100.0 * share, t->bytes);
    }
    for (uint32_t i = 0; i < R->ncomps; i++) {
        double x = x0 + step * (double)R->comps[i].after_turn;
        qbuf_printf(b, "<line class=\"compaction\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"><title>compaction "
                       "after turn %u</title></line>",
                    x, y0, x, y1, R->comps[i].after_turn);
    }
    uint32_t tick = n <= 20 ? 1 : n <= 100 ? 10 : n <= 1000 ? 100 : 1000;
    for (uint32_t i = 0; i < n; i++)
        if ((i + 1) % tick == 0 || i == 0)
            qbuf_printf(b, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%lld</text>",
                        x0 + step * ((double)i + 0.5), H - 10, (long long)R->turns[i].turn);
    qbuf_puts(b, "</svg>\n<p class=\"legend\"><span><i style=\"background:#9cc3e6\"></i>estimated request tokens</span>"
                 "<span><i style=\"background:#2f6fb0\"></i>share of the request that repeats the previous one's "
                 "prefix (the cacheable part)</span><span><i style=\"background:#c0572b\"></i>compaction</span></p>\n");
}

static void write_lanes(report *R, qbuf *b) {
    uint32_t nl = R->nlanes < LANE_MAX ? R->nlanes : LANE_MAX;
    if (!nl) { qbuf_puts(b, "<p>No reminder events in this session.</p>\n"); return; }
    double W = 1000, lh = 16, x0 = LANE_X0, x1 = W - 48, H = lh * (double)nl + 16;
    double step = R->nturns ? (x1 - x0) / (double)R->nturns : (x1 - x0);
    qbuf_printf(b, "<svg id=\"lanes\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"reminder lanes\">", W, H);
    for (uint32_t i = 0; i < nl; i++) {
        const rp_lane *L = &R->lanes[i];
        double y = 8 + lh * (double)i;
        if (i % 2 == 0) qbuf_printf(b, "<rect class=\"lane-bg\" x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\"/>", y, W, lh);
        qbuf_printf(b, "<text class=\"lane-label\" x=\"4\" y=\"%.1f\">", y + 12);
        if (strncmp(L->id, "(no id) ", 8) == 0) qbuf_puts(b, "(no id)");
        else label_cut(b, L->id, 8);
        qbuf_puts(b, " ");
        if (L->origin) label_cut(b, L->origin, 20);
        qbuf_puts(b, "<title>");
        html_z(b, L->id);
        if (L->origin) { qbuf_puts(b, " from "); html_z(b, L->origin); }
        if (L->body) { qbuf_puts(b, ": "); html_cut(b, L->body, strlen(L->body), 300); }
        qbuf_puts(b, "</title></text>");
    }
    for (uint32_t e = 0; e < R->nevs; e++) {
        const rp_event *E = &R->evs[e];
        if (E->lane >= nl) continue;
        double y = 8 + lh * (double)E->lane + lh / 2, x = xpos(E->turn_slot, x0, step);
        if (E->kind == EV_EMITTED)
            qbuf_printf(b, "<circle class=\"ev ev-emitted\" cx=\"%.2f\" cy=\"%.1f\" r=\"4\">", x, y);
        else
            qbuf_printf(b, "<rect class=\"ev ev-%s\" x=\"%.2f\" y=\"%.1f\" width=\"7\" height=\"7\" transform=\"rotate(45 "
                           "%.2f %.1f)\">",
                        kind_name(E->kind), x - 3.5, y - 3.5, x, y);
        qbuf_printf(b, "<title>%s %u, %s: ", E->turn_slot % 2 ? "after turn" : "turn", E->turn_slot / 2,
                    kind_name(E->kind));
        html_cut(b, R->evtext.data + E->json_off, E->json_len, 600);
        qbuf_puts(b, E->kind == EV_EMITTED ? "</title></circle>" : "</title></rect>");
    }
    qbuf_puts(b, "</svg>\n<p class=\"legend\"><span><i class=\"ev-emitted\" style=\"background:#2f8f4e\"></i>emitted "
                 "(rendered)</span><span><i style=\"background:#8a5cc2\"></i>deduped</span><span><i "
                 "style=\"background:#7a8691\"></i>TTL expired</span><span><i style=\"background:#d08a00\"></i>cleared</span>"
                 "<span><i style=\"background:#c0572b\"></i>compacted out</span><span><i style=\"background:#c62828\"></i>"
                 "dropped</span></p>\n");
    if (R->nlanes > nl)
        qbuf_printf(b, "<p class=\"warn\">%u more reminder lanes are not drawn; the table below lists every "
                       "reminder.</p>\n", R->nlanes - nl);
    qbuf_puts(b, "<table id=\"reminder-table\"><thead><tr><th>reminder</th><th>origin</th><th>slot</th><th>reason</th>"
                 "<th>body</th><th>events</th></tr></thead><tbody>\n");
    /* per-lane event counts in one pass */
    uint32_t *cnt = q_malloc(R->a, (size_t)R->nlanes * 7 * sizeof(uint32_t) + 1);
    if (cnt) {
        memset(cnt, 0, (size_t)R->nlanes * 7 * sizeof(uint32_t));
        for (uint32_t e = 0; e < R->nevs; e++)
            if (R->evs[e].lane < R->nlanes) cnt[R->evs[e].lane * 7 + R->evs[e].kind]++;
    } else {
        b->oom = true;
    }
    for (uint32_t i = 0; cnt && i < R->nlanes; i++) {
        const rp_lane *L = &R->lanes[i];
        qbuf_puts(b, "<tr><td>");
        html_z(b, L->id);
        qbuf_puts(b, "</td><td>");
        html_z(b, L->origin);
        qbuf_puts(b, "</td><td>");
        html_z(b, L->slot);
        qbuf_puts(b, "</td><td>");
        html_z(b, L->reason);
        qbuf_puts(b, "</td><td class=\"body-text\">");
        if (L->body) html_cut(b, L->body, strlen(L->body), 2000);
        qbuf_puts(b, "</td><td>");
        bool first = true;
        for (uint8_t k = 0; k < 7; k++)
            if (cnt[i * 7 + k]) {
                qbuf_printf(b, "%s%s %u", first ? "" : ", ", kind_name(k), cnt[i * 7 + k]);
                first = false;
            }
        qbuf_puts(b, "</td></tr>\n");
    }
    if (cnt) q_free(R->a, cnt, (size_t)R->nlanes * 7 * sizeof(uint32_t) + 1);
    qbuf_puts(b, "</tbody></table>\n");
}

static void write_turns(report *R, qbuf *b, bool bodies) {
    uint32_t e = 0;
    /* events before the first render belong to turn 1's list, after-turn-k events to turn k+1 */
    for (uint32_t i = 0; i < R->nturns; i++) {
        const rp_turn *t = &R->turns[i];
        double share = t->bytes ? 100.0 * (double)t->prefix / (double)t->bytes : 0;
        qbuf_printf(b, "<details class=\"turn\" id=\"turn-%lld\" data-index=\"%u\"><summary>turn %lld &middot; %zu bytes "
                       "&middot; ~%zu tokens &middot; %.1f%% cached prefix &middot; %u reminder(s) &middot; ",
                    (long long)t->turn, i, (long long)t->turn, t->bytes, t->tokens, share, t->reminders);
        html_z(b, t->provider);
        if (t->model) { qbuf_puts(b, " / "); html_z(b, t->model); }
        qbuf_printf(b, " &middot; log line %u</summary>\n", t->line);
        uint32_t upto = 2 * (i + 1); /* this turn's own events included */
        uint32_t first = e;
        while (e < R->nevs && R->evs[e].turn_slot <= upto) e++;
        if (e > first) {
            qbuf_printf(b, "<ul class=\"ev-list\">");
            for (uint32_t k = first; k < e; k++) {
                qbuf_puts(b, "<li>");
                html_cut(b, R->evtext.data + R->evs[k].json_off, R->evs[k].json_len, 4000);
                qbuf_puts(b, "</li>");
            }
            qbuf_puts(b, "</ul>\n");
        }
        if (bodies) qbuf_puts(b, "<p>Request body:</p><pre class=\"body-pre\"></pre><p>Against the previous turn:</p><pre class=\"diff-pre\"></pre>");
        else qbuf_puts(b, "<p>Request bodies were left out (--no-bodies).</p>");
        qbuf_puts(b, "</details>\n");
    }
    if (e < R->nevs) {
        qbuf_puts(b, "<details class=\"tail\"><summary>after the last turn</summary><ul class=\"ev-list\">");
        for (; e < R->nevs; e++) {
            qbuf_puts(b, "<li>");
            html_cut(b, R->evtext.data + R->evs[e].json_off, R->evs[e].json_len, 4000);
            qbuf_puts(b, "</li>");
        }
        qbuf_puts(b, "</ul></details>\n");
    }
}

static void write_data(report *R, qbuf *b, bool bodies) {
    qbuf_puts(b, "<script type=\"application/json\" id=\"quire-data\">{\"bodies\":");
    qbuf_puts(b, bodies ? "true" : "false");
    qbuf_puts(b, ",\"turns\":[");
    for (uint32_t i = 0; i < R->nturns; i++) {
        const rp_turn *t = &R->turns[i];
        qbuf_printf(b, "%s{\"p\":%zu,\"s\":", i ? "," : "", bodies ? t->prefix_u16 : (size_t)0);
        if (bodies) js_str(b, R->body_delta.data + t->delta_off, t->delta_len);
        else qbuf_puts(b, "\"\"");
        qbuf_putc(b, '}');
    }
    qbuf_puts(b, "]}</script>\n");
}

/* ---- --against: the first differing turn ---- */

static quire_status against_load(report *R, against *A, const char *src, size_t len) {
    memset(A, 0, sizeof *A);
    A->has = true;
    qline_iter it = {src, len, 0, 0};
    const char *l;
    size_t n, off;
    while (q_next_line(&it, &l, &n, &off)) {
        if (q_line_blank(l, n)) continue;
        qj_doc d;
        quire_error e;
        if (qj_parse(&d, l, n, NULL, R->a, &e)) {
            q_err_rebase_line(&e, l, n, off, it.lineno);
            *R->err = e;
            snprintf(R->err->field, sizeof R->err->field, "against");
            return e.code;
        }
        uint32_t ty = qj_get(&d, 0, "type");
        if (qj_type_of(&d, 0) != QJ_OBJECT || ty == QJ_NONE) {
            qj_doc_free(&d);
            quire_status st = q_err_at(R->err, QUIRE_E_SCHEMA, off, "", "line %u of the previous replay is not a "
                                       "quire replay line (an object with a \"type\")", it.lineno);
            R->err->line = it.lineno;
            R->err->column = 1;
            snprintf(R->err->field, sizeof R->err->field, "against");
            return st;
        }
        if (qj_str_eq(&d, ty, "request")) {
            uint32_t tn = qj_get(&d, 0, "turn");
            int64_t turn = 0;
            if (tn == QJ_NONE || !qj_int64(&d, tn, &turn) || turn < 1 || turn > (int64_t)UINT32_MAX - 1) {
                qj_doc_free(&d);
                quire_status st = q_err_at(R->err, QUIRE_E_SCHEMA, off, "/turn", "request line %u of the previous "
                                           "replay has no valid \"turn\"", it.lineno);
                R->err->line = it.lineno;
                R->err->column = 1;
                snprintf(R->err->field, sizeof R->err->field, "against");
                return st;
            }
            if ((uint32_t)turn > A->nreq) {
                size_t old = A->nreq, nn = (size_t)turn;
                size_t *np = q_realloc(R->a, A->line_off, old * sizeof(size_t), nn * sizeof(size_t));
                if (!np) { qj_doc_free(&d); return q_oom(R->err); }
                A->line_off = np;
                for (size_t k = old; k < nn; k++) A->line_off[k] = SIZE_MAX;
                A->nreq = (uint32_t)turn;
            }
            A->line_off[turn - 1] = off;
        }
        qj_doc_free(&d);
    }
    return QUIRE_OK;
}

/* The previous run's turn t as body bytes (or only a digest). */
typedef struct old_req {
    const char *body;
    size_t len;
    char digest[33];
    bool has_body, has_digest;
} old_req;

static bool old_request(report *R, const against *A, const char *src, size_t len, uint32_t idx, old_req *o, qj_doc *d) {
    memset(o, 0, sizeof *o);
    if (idx >= A->nreq || A->line_off[idx] == SIZE_MAX) return false;
    size_t off = A->line_off[idx];
    const char *l = src + off, *nl = memchr(l, '\n', len - off);
    size_t n = nl ? (size_t)(nl - l) : len - off;
    if (n && l[n - 1] == '\r') n--;
    quire_error e;
    if (qj_parse(d, l, n, NULL, R->a, &e)) return false;
    uint32_t b = qj_get(d, 0, "body"), g = qj_get(d, 0, "digest");
    if (b != QJ_NONE) {
        o->body = d->nodes[b].type == QJ_STRING ? d->nodes[b].p - 1 : d->nodes[b].p;
        o->len = d->nodes[b].type == QJ_STRING ? d->nodes[b].len + 2 : d->nodes[b].len;
        o->has_body = true;
    } else if (g != QJ_NONE && qj_type_of(d, g) == QJ_STRING && d->nodes[g].len == 32) {
        memcpy(o->digest, d->nodes[g].p, 32);
        o->has_digest = true;
    }
    return true;
}

/* The bytes around [from, to) with the differing part marked, cut on
 * character boundaries; long middles are shortened with a marker. */
static void excerpt(qbuf *b, const char *s, size_t n, size_t from, size_t to) {
    size_t ctx = 160;
    while (to < n && ((unsigned char)s[to] & 0xC0) == 0x80) to++;
    size_t a = from > ctx ? from - ctx : 0, z = to + ctx < n ? to + ctx : n;
    while (a > 0 && ((unsigned char)s[a] & 0xC0) == 0x80) a--;
    while (z < n && ((unsigned char)s[z] & 0xC0) == 0x80) z++;
    if (a) qbuf_printf(b, "\xe2\x80\xa6 (%zu bytes before)\n", a);
    html_text(b, s + a, from - a);
    qbuf_puts(b, "<mark>");
    html_cut(b, s + from, to - from, 8192);
    qbuf_puts(b, "</mark>");
    html_text(b, s + to, z - to);
    if (z < n) qbuf_printf(b, "\n\xe2\x80\xa6 (%zu bytes after)", n - z);
}

/* Re-runs the replay keeping only the bodies of the turns compared (the
 * collected deltas rebuild any body too, but one pass keeps memory flat). */
static void write_against(report *R, qbuf *b, against *A, const char *src, size_t len, const char *name,
                          const char *log, size_t loglen, const quire_replay_options *ro, const quire_options *opts) {
    qbuf_puts(b, "<h2>Against ");
    html_z(b, name ? name : "the previous replay");
    qbuf_puts(b, "</h2>\n");
    quire_replay *rp = NULL;
    quire_error e;
    /* the same log replayed a moment ago: only running out of memory can fail here */
    if (quire_replay_open(log, loglen, ro, opts, &rp, &e)) { b->oom = true; return; }
    quire_replay_step s;
    int done = 0;
    uint32_t idx = 0;
    bool shown = false;
    while (!done) {
        if (quire_replay_next(rp, &s, &done, &e)) { b->oom = true; break; }
        if (done || s.turn <= 0 || !s.request) continue;
        qj_doc d;
        memset(&d, 0, sizeof d);
        old_req o;
        bool have = old_request(R, A, src, len, idx, &o, &d);
        bool same;
        if (!have) { same = false; A->nonly_new++; }
        else if (o.has_body) same = o.len == s.request_len && memcmp(o.body, s.request, o.len) == 0;
        else if (o.has_digest) {
            char hx[33];
            quire_digest128(s.request, s.request_len, hx);
            same = memcmp(hx, o.digest, 32) == 0;
        } else same = false;
        if (!same) {
            A->ndiff++;
            if (!A->first_diff) {
                A->first_diff = s.turn;
                shown = true;
                qbuf_printf(b, "<p id=\"first-diff\" data-turn=\"%lld\">First differing turn: <b>%lld</b> "
                               "(<a href=\"#turn-%lld\">details</a>).</p>\n",
                            (long long)s.turn, (long long)s.turn, (long long)s.turn);
                if (!have) {
                    qbuf_puts(b, "<p>The previous replay has no request for this turn.</p>\n");
                } else if (o.has_body) {
                    size_t p = common_prefix(o.body, o.len, s.request, s.request_len);
                    size_t q = 0;
                    while (q < o.len - p && q < s.request_len - p && o.body[o.len - 1 - q] == s.request[s.request_len - 1 - q]) q++;
                    qbuf_printf(b, "<p>%zu bytes before vs %zu bytes now; the first %zu bytes and the last %zu bytes "
                                   "are the same.</p>\n<p>Before:</p><pre class=\"diff-del\" id=\"against-old\">",
                                o.len, s.request_len, p, q);
                    excerpt(b, o.body, o.len, p, o.len - q);
                    qbuf_puts(b, "</pre>\n<p>Now:</p><pre class=\"diff-add\" id=\"against-new\">");
                    excerpt(b, s.request, s.request_len, p, s.request_len - q);
                    qbuf_puts(b, "</pre>\n");
                } else {
                    qbuf_puts(b, "<p>The previous replay holds only digests (replay --digest): the bytes that differ "
                                 "cannot be shown.</p>\n");
                }
            }
        }
        qj_doc_free(&d);
        idx++;
    }
    quire_replay_free(rp);
    if (A->nreq > idx) A->nonly_old = A->nreq - idx;
    if (!shown) {
        if (A->nonly_old)
            qbuf_printf(b, "<p id=\"first-diff\" data-turn=\"%u\">Every turn of this replay matches; the previous one "
                           "has %u more turn(s).</p>\n", idx + 1, A->nonly_old);
        else
            qbuf_printf(b, "<p id=\"first-diff\" data-turn=\"0\">No difference: all %u turns are byte-identical.</p>\n",
                        idx);
    }
    qbuf_printf(b, "<p>%u turn(s) differ in all; %u only in this replay, %u only in the previous one.</p>\n", A->ndiff,
                A->nonly_new, A->nonly_old);
}

/* Replays the log into R. */
static quire_status collect(report *R, const char *log, size_t len, const quire_replay_options *rro,
                            const quire_options *opts) {
    quire_replay *rp = NULL;
    quire_status st = quire_replay_open(log, len, rro, opts, &rp, R->err);
    if (st) return st;
    for (;;) {
        quire_replay_step s;
        int fin = 0;
        st = quire_replay_next(rp, &s, &fin, R->err);
        if (st || fin) break;
        st = take_step(R, &s);
        if (st) break;
    }
    quire_replay_free(rp);
    if (!st && !R->nturns)
        st = q_err(R->err, QUIRE_E_SESSION, "the log renders no request (no \"render\" event): nothing to report");
    return st;
}

static quire_status write_page(report *R, against *A, const char *log, size_t len, const quire_report_options *ro,
                               const quire_replay_options *rro, const quire_options *opts, quire_bytes *out) {
    qbuf b;
    qbuf_init(&b, R->a);
    const char *title = ro->title && *ro->title ? ro->title : "session";
    const rp_turn *last = &R->turns[R->nturns - 1];
    qbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
                  "script-src 'unsafe-inline'; img-src data:\">"
                  "<meta name=\"generator\" content=\"quire ");
    qbuf_puts(&b, quire_version());
    qbuf_puts(&b, "\"><title>quire report: ");
    html_z(&b, title);
    qbuf_puts(&b, "</title><style>");
    qbuf_puts(&b, k_css);
    qbuf_puts(&b, "</style></head><body>\n<h1>quire report: ");
    html_z(&b, title);
    qbuf_puts(&b, "</h1>\n");
    double reuse = R->total_bytes ? 100.0 * (double)R->total_prefix / (double)R->total_bytes : 0;
    qbuf_printf(&b, "<p class=\"meta\" id=\"summary\" data-turns=\"%u\"><b>%u</b> turns &middot; target ", R->nturns,
                R->nturns);
    html_z(&b, last->provider);
    if (last->model) { qbuf_puts(&b, " / "); html_z(&b, last->model); }
    qbuf_printf(&b, " (last turn) &middot; <b>%llu</b> request bytes &middot; <b>%.1f%%</b> shared with the previous "
                    "request's prefix &middot; %u compaction(s) &middot; %u reminder(s) seen</p>\n",
                (unsigned long long)R->total_bytes, reuse, R->ncomps, R->nlanes);
    qbuf_puts(&b, "<h2>Turns</h2>\n");
    write_timeline(R, &b);
    if (R->ncomps) {
        qbuf_puts(&b, "<table id=\"compactions\"><thead><tr><th>after turn</th><th>report</th></tr></thead><tbody>");
        for (uint32_t i = 0; i < R->ncomps; i++) {
            qbuf_printf(&b, "<tr><td class=\"num\">%u</td><td><code>", R->comps[i].after_turn);
            html_cut(&b, R->evtext.data + R->comps[i].json_off, R->comps[i].json_len, 2000);
            qbuf_puts(&b, "</code></td></tr>");
        }
        qbuf_puts(&b, "</tbody></table>\n");
    }
    qbuf_puts(&b, "<h2>Reminders</h2>\n");
    write_lanes(R, &b);
    if (A->has) write_against(R, &b, A, ro->against, ro->against_len, ro->against_name, log, len, rro, opts);
    qbuf_puts(&b, "<h2>Turn details</h2>\n<p>Open a turn to see its events, its request body and what changed "
                  "since the previous turn (bodies are rebuilt on demand from the shared prefix).</p>\n");
    write_turns(R, &b, !ro->no_bodies);
    write_data(R, &b, !ro->no_bodies);
    qbuf_puts(&b, "<script>");
    qbuf_puts(&b, k_js);
    qbuf_puts(&b, "</script>\n</body></html>\n");
    if (b.oom || !qbuf_take(&b, out)) {
        qbuf_free(&b);
        return q_oom(R->err);
    }
    return QUIRE_OK;
}

quire_status quire_report(const char *log, size_t len, const quire_report_options *ro, const quire_options *opts,
                          quire_bytes *out, quire_error *err) {
    out->data = NULL;
    out->len = 0;
    quire_error ebuf;
    if (!err) err = &ebuf;
    memset(err, 0, sizeof *err);
    err->offset = SIZE_MAX;
    if (!ro || ro->size < sizeof(quire_report_options))
        return q_err(err, QUIRE_E_INVALID, "report options missing or too old");
    report R;
    memset(&R, 0, sizeof R);
    R.a = q_alloc_of(opts);
    R.err = err;
    qarena_init(&R.ar, R.a);
    qbuf_init(&R.evtext, R.a);
    qbuf_init(&R.body_delta, R.a);
    qbuf_init(&R.prev, R.a);
    against A;
    memset(&A, 0, sizeof A);
    quire_replay_options rro = QUIRE_REPLAY_OPTIONS_INIT;
    rro.provider = ro->provider;
    rro.model = ro->model;
    quire_status st = ro->against ? against_load(&R, &A, ro->against, ro->against_len) : QUIRE_OK;
    if (!st) st = collect(&R, log, len, &rro, opts);
    if (!st) st = write_page(&R, &A, log, len, ro, &rro, opts, out);
    q_free(R.a, R.turns, (size_t)R.capturns * sizeof(rp_turn));
    q_free(R.a, R.evs, (size_t)R.capevs * sizeof(rp_event));
    q_free(R.a, R.lanes, (size_t)R.caplanes * sizeof(rp_lane));
    q_free(R.a, R.lane_tab, (size_t)R.lane_tab_cap * sizeof(uint32_t));
    q_free(R.a, R.comps, (size_t)R.capcomps * sizeof(rp_compaction));
    q_free(R.a, R.segs, (size_t)R.capsegs * sizeof(rp_seg));
    q_free(R.a, A.line_off, (size_t)A.nreq * sizeof(size_t));
    qbuf_free(&R.evtext);
    qbuf_free(&R.body_delta);
    qbuf_free(&R.prev);
    qarena_free(&R.ar);
    return st;
}
