/* Request estimates (DESIGN 6, docs/compaction.md "Request estimates"): the
 * tokens of the whole request a target would receive next — system prompt,
 * tool definitions, messages, the reminders rendered this turn, and images
 * and documents priced by the target's provider family.
 *
 * Text is counted by the o200k estimator (compact/estimate.h) or the host's
 * counter; the overheads and media rules are data per wire dialect (the
 * family table below), never a branch on a provider name. The reminders are
 * the ones the renderer would place this turn (render/slots.c plans them on a
 * scratch copy of the state; nothing is encoded). Pure: no I/O, no globals. */
#include "compact/estimate.h"
#include "render/memo.h"
#include "render/render.h"
#include "session/engine.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Provider families                                                         */
/* ------------------------------------------------------------------------ */

typedef enum { IMG_AREA750, IMG_TILES512, IMG_TILES768 } img_rule;

typedef struct est_family {
    const char *name;
    uint32_t request;    /* once per request (reply priming, framing) */
    uint32_t system;     /* the system prompt's framing, when present */
    uint32_t message;    /* per message */
    uint32_t block;      /* per content block */
    uint32_t tool;       /* per tool definition, plus name, description and schema */
    uint32_t tools_base; /* once when the request carries tools (a tool-use preamble) */
    img_rule image;
    uint32_t image_unknown; /* an image whose size is not known (a URL, an unreadable header) */
    uint32_t document;   /* per document, plus its title */
    uint32_t text_q8;    /* the family's tokens per o200k token, in 1/256 (quire's estimator only) */
} est_family;

#ifndef TEXT_Q8_ANTHROPIC
#define TEXT_Q8_ANTHROPIC 320
#endif
/* Sources and reasoning: docs/compaction.md, "Request estimates". */
static const est_family k_anthropic = {"anthropic", 0, 4, 4, 3, 8, 346, IMG_AREA750, 1600, 3000, TEXT_Q8_ANTHROPIC};
static const est_family k_openai = {"openai", 3, 4, 4, 3, 8, 0, IMG_TILES512, 765, 3000, 256};
static const est_family k_gemini = {"gemini", 0, 4, 4, 3, 8, 0, IMG_TILES768, 258, 3000, 256};

static const est_family *family_of(qdialect d) {
    switch (d) {
    case QD_ANTHROPIC_MESSAGES:
    case QD_BEDROCK_CONVERSE: return &k_anthropic;
    case QD_GEMINI: return &k_gemini;
    case QD_OPENAI_CHAT:
    case QD_OPENAI_RESPONSES:
    case QD_MISTRAL:
    case QD_OLLAMA:
    case QD_COUNT_:
    default: return &k_openai;
    }
}

/* ------------------------------------------------------------------------ */
/* Image sizes from the first bytes of base64 data                           */
/* ------------------------------------------------------------------------ */

static int b64v(unsigned char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+' || ch == '-') return 62;
    if (ch == '/' || ch == '_') return 63;
    return -1;
}

/* Decodes up to cap bytes of base64 text s into out; returns the count. esc:
 * s is JSON-escaped text (\/ is a slash; \n, \r, \t and \uXXXX are skipped). */
static size_t b64_head(const char *s, size_t n, bool esc, uint8_t *out, size_t cap) {
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        if (esc && s[i] == '\\' && i + 1 < n) {
            if (s[i + 1] != '/') {
                i += s[i + 1] == 'u' ? 5 : 1;
                continue;
            }
            i++; /* \/ : the slash */
        }
        int v = b64v((unsigned char)s[i]);
        if (v < 0) {
            if (s[i] == '=') break;
            continue; /* whitespace */
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (uint8_t)(acc >> bits);
        }
    }
    return k;
}

static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint32_t le16(const uint8_t *p) { return (uint32_t)p[1] << 8 | p[0]; }
static uint32_t le24(const uint8_t *p) { return (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]; }

/* Width and height of a PNG, GIF, WebP or JPEG held in b[0..n); false when unknown. */
static bool image_size(const uint8_t *b, size_t n, uint32_t *w, uint32_t *h) {
    if (n >= 24 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(b + 12, "IHDR", 4) == 0) {
        *w = be32(b + 16); *h = be32(b + 20);
    } else if (n >= 10 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0)) {
        *w = le16(b + 6); *h = le16(b + 8);
    } else if (n >= 30 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0) {
        if (memcmp(b + 12, "VP8 ", 4) == 0) { *w = le16(b + 26) & 0x3FFF; *h = le16(b + 28) & 0x3FFF; }
        else if (memcmp(b + 12, "VP8L", 4) == 0) {
            uint32_t v = (uint32_t)b[21] | (uint32_t)b[22] << 8 | (uint32_t)b[23] << 16 | (uint32_t)b[24] << 24;
            *w = (v & 0x3FFF) + 1; *h = ((v >> 14) & 0x3FFF) + 1;
        } else if (memcmp(b + 12, "VP8X", 4) == 0) { *w = le24(b + 24) + 1; *h = le24(b + 27) + 1; }
        else return false;
    } else if (n >= 4 && b[0] == 0xFF && b[1] == 0xD8) {
        size_t i = 2;
        for (;;) {
            while (i < n && b[i] != 0xFF) i++;
            while (i < n && b[i] == 0xFF) i++;
            if (i + 3 > n) return false;
            uint8_t m = b[i++];
            if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue; /* no length */
            if (i + 2 > n) return false;
            uint32_t len = be16(b + i);
            bool sof = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
            if (sof) {
                if (i + 7 > n) return false;
                *h = be16(b + i + 3); *w = be16(b + i + 5);
                break;
            }
            if (len < 2) return false;
            i += len;
        }
    } else {
        return false;
    }
    return *w > 0 && *h > 0;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Tokens of a w x h image under the family's rule. */
static uint64_t image_tokens(const est_family *f, uint64_t w, uint64_t h) {
    switch (f->image) {
    case IMG_AREA750: {
        /* long edge at most 1568 px, then at most ~1600 tokens (about 1.15 MP) */
        uint64_t lo = w > h ? w : h;
        if (lo > 1568) { w = w * 1568 / lo; h = h * 1568 / lo; }
        if (!w) w = 1;
        if (!h) h = 1;
        uint64_t t = ceil_div(w * h, 750);
        return t > 1600 ? 1600 : t;
    }
    case IMG_TILES512: {
        /* fit in 2048 x 2048, then the short side at most 768; 85 + 170 per 512-px tile */
        uint64_t lo = w > h ? w : h;
        if (lo > 2048) { w = w * 2048 / lo; h = h * 2048 / lo; }
        uint64_t sh = w < h ? w : h;
        if (sh > 768) { w = w * 768 / sh; h = h * 768 / sh; }
        if (!w) w = 1;
        if (!h) h = 1;
        return 85 + 170 * ceil_div(w, 512) * ceil_div(h, 512);
    }
    case IMG_TILES768:
    default:
        if (w <= 384 && h <= 384) return 258;
        return 258 * ceil_div(w, 768) * ceil_div(h, 768);
    }
}

/* ------------------------------------------------------------------------ */
/* Counting                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct est {
    const est_family *f;
    quire_count_tokens_fn fn;
    void *ud;
    qbuf tmp;
    uint8_t head[65536]; /* decoded image headers (JPEG SOF can sit after EXIF) */
    quire_estimate out;
} est;

static uint64_t text(est *e, const char *s, size_t n) {
    if (!n) return 0;
    if (e->fn) return (uint64_t)e->fn(s, n, e->ud);
    uint64_t t = (uint64_t)qc_estimate_tokens(s, n);
    return e->f->text_q8 == 256 ? t : (t * e->f->text_q8 + 128) >> 8;
}

static uint64_t qtext(est *e, qstr s) {
    if (!s.p || !s.len) return 0;
    if (!s.esc) return text(e, s.p, s.len);
    e->tmp.len = 0;
    qbuf_put_qstr(&e->tmp, s);
    return e->tmp.oom ? 0 : text(e, e->tmp.data, e->tmp.len);
}

static uint64_t qvalue(est *e, qval v) {
    if (!qval_present(v)) return 0;
    e->tmp.len = 0;
    qw w;
    qw_init(&w, &e->tmp, false);
    qw_qval(&w, v);
    qw_dispose(&w);
    return e->tmp.oom ? 0 : text(e, e->tmp.data, e->tmp.len);
}

static uint64_t image(est *e, const qblock *b) {
    e->out.images++;
    uint32_t w = 0, h = 0;
    if (b->data.p && b->data.len) {
        size_t n = b64_head(b->data.p, b->data.len, b->data.esc != 0, e->head, sizeof e->head);
        if (image_size(e->head, n, &w, &h)) return image_tokens(e->f, w, h);
    }
    return e->f->image_unknown;
}

/* Adds block b to the breakdown (text to messages, media to media). */
static void block(est *e, const qblock *b, bool current_turn, uint64_t *msg) {
    *msg += e->f->block;
    switch (b->type) {
    case QB_TEXT: *msg += qtext(e, b->text); break;
    case QB_IMAGE: e->out.media += image(e, b); break;
    case QB_DOCUMENT:
        e->out.documents++;
        e->out.media += e->f->document;
        *msg += qtext(e, b->title);
        break;
    case QB_TOOL_CALL: *msg += qtext(e, b->name) + qvalue(e, b->input); break;
    case QB_TOOL_RESULT:
        if (b->content_is_string) *msg += qtext(e, b->content_text);
        else
            for (uint32_t i = 0; i < b->nparts; i++) block(e, &b->parts[i], current_turn, msg);
        break;
    case QB_THINKING:
        /* thinking of earlier turns is not sent back as context */
        if (current_turn) *msg += qtext(e, b->text);
        break;
    case QB_REDACTED_THINKING:
        if (current_turn) *msg += (uint64_t)b->data.len / 4;
        break;
    case QB_OPAQUE:
        /* another provider's item (encrypted reasoning, server tool calls): no public rule
         * prices encrypted reasoning; half its JSON text is what the Codex logs measure */
        *msg += (qvalue(e, b->item) + 1) / 2;
        break;
    case QB_AUDIO:
    case QB_FILE:
        /* no size rule from the data alone (audio is priced by duration, files by
         * pages): the document's flat figure, plus the file name */
        e->out.documents++;
        e->out.media += e->f->document;
        *msg += qtext(e, b->filename);
        break;
    case QB_SERVER_TOOL_CALL: *msg += qtext(e, b->name) + qvalue(e, b->input); break;
    case QB_SERVER_TOOL_RESULT: *msg += qvalue(e, b->result); break;
    }
}

static void count_transcript(est *e, const quire_transcript *t) {
    if (t->has_system && t->nsystem) {
        uint64_t s = e->f->system;
        for (uint32_t i = 0; i < t->nsystem; i++) {
            uint64_t m = 0;
            block(e, &t->system[i], true, &m);
            s += m;
        }
        e->out.system += s;
    }
    if (t->ntools) e->out.tools += e->f->tools_base;
    for (uint32_t i = 0; i < t->ntools; i++) {
        const qtool *tl = &t->tools[i];
        e->out.tools += e->f->tool + qtext(e, tl->name) + qtext(e, tl->description) + qvalue(e, tl->input_schema);
    }
    uint32_t last_user = 0;
    for (uint32_t i = 0; i < t->nmsgs; i++)
        if (t->msgs[i].role == QR_USER) last_user = i;
    e->out.messages += e->f->request;
    for (uint32_t i = 0; i < t->nmsgs; i++) {
        uint64_t m = e->f->message;
        for (uint32_t k = 0; k < t->msgs[i].nblocks; k++) block(e, &t->msgs[i].blocks[k], i >= last_user, &m);
        e->out.messages += m;
    }
    e->out.nmessages = t->nmsgs;
}

/* The reminders the renderer would place this turn: planned on a copy of the
 * state, nothing encoded. */
static quire_status count_reminders(est *e, const quire_transcript *t, const quire_state *state,
                                    const quire_render_options *ro, const qcaps *caps, const quire_allocator *a,
                                    quire_error *err) {
    if (!state || !quire_state_reminder_count(state)) return QUIRE_OK;
    qr_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.ro = ro;
    c.caps = *caps;
    c.err = err;
    qarena_init(&c.scratch, a);
    qbuf events;
    qbuf_init(&events, a);
    c.events = &events;
    quire_status st = QUIRE_OK;
    c.next = qs_clone(state);
    if (!c.next) st = q_oom(err);
    if (!st) {
        c.turn = c.next->turn + 1;
        c.rems = qs_live_for_turn(c.next, &c.scratch, &c.nrems);
        if (!c.rems) st = q_oom(err);
    }
    if (!st && ro->placement == QUIRE_PLACEMENT_APPEND_ONLY) {
        c.retired = qs_retired_anchored(c.next, &c.scratch, &c.nretired);
        if (!c.retired) st = q_oom(err);
    }
    if (!st) st = qr_plan_slots(&c);
    if (!st) {
        uint64_t n = 0;
        if (qstr_present(c.sys_extra)) {
            n += qtext(e, c.sys_extra);
            if (!(t->has_system && t->nsystem)) n += e->f->system;
        }
        for (uint32_t i = 0; i < c.ngroups; i++) {
            const qr_group *g = &c.groups[i];
            /* a developer message or a separate user message costs a message; a
             * block inside a message costs a block */
            n += (g->slot == QSLOT_DEVELOPER ? e->f->message : e->f->block) + qtext(e, g->text);
        }
        e->out.reminders += n;
        e->out.nreminders = c.nrems;
    }
    quire_state_free(c.next);
    qbuf_free(&events);
    qarena_free(&c.scratch);
    return st;
}

quire_status quire_estimate_request(const quire_transcript *t, const quire_state *state,
                                    const quire_estimate_options *eo, const quire_options *opts,
                                    quire_estimate *out, quire_bytes *json, quire_error *err) {
    if (out) memset(out, 0, sizeof *out);
    if (json) memset(json, 0, sizeof *json);
    if (!t || !eo || !eo->render || !out)
        return q_err(err, QUIRE_E_INVALID, "quire_estimate_request: transcript, options and result are required");
    const quire_render_options *ro = eo->render;
    const char *model;
    qcaps caps;
    quire_status st0 = qcaps_target(ro->caps, ro->provider, ro->model, &model, &caps, NULL, NULL, err);
    if (st0) return st0;
    const quire_allocator *a = q_alloc_of(opts);
    est *e = q_malloc(a, sizeof *e);
    if (!e) return q_oom(err);
    memset(&e->out, 0, sizeof e->out);
    e->f = family_of(caps.dialect);
    e->fn = eo->count_tokens;
    e->ud = eo->count_tokens_ud;
    qbuf_init(&e->tmp, a);
    count_transcript(e, t);
    quire_render_options r2 = *ro;
    r2.model = model;
    quire_status st = count_reminders(e, t, state, &r2, &caps, a, err);
    bool oom = e->tmp.oom;
    qbuf_free(&e->tmp);
    if (!st && oom) st = q_oom(err);
    if (!st) {
        e->out.family = e->f->name;
        e->out.total = e->out.system + e->out.tools + e->out.messages + e->out.reminders + e->out.media;
        *out = e->out;
    }
    q_free(a, e, sizeof *e);
    if (!st && json) st = quire_estimate_write(out, 0, json, err);
    return st;
}

static void write_fields(qw *w, const quire_estimate *e) {
    qw_key(w, "total"); qw_int(w, (int64_t)e->total);
    qw_key(w, "family"); qw_strz(w, e->family ? e->family : "");
    qw_key(w, "system"); qw_int(w, (int64_t)e->system);
    qw_key(w, "tools"); qw_int(w, (int64_t)e->tools);
    qw_key(w, "messages"); qw_int(w, (int64_t)e->messages);
    qw_key(w, "reminders"); qw_int(w, (int64_t)e->reminders);
    qw_key(w, "media"); qw_int(w, (int64_t)e->media);
    qw_key(w, "counts");
    qw_obj_begin(w);
    qw_key(w, "messages"); qw_int(w, e->nmessages);
    qw_key(w, "reminders"); qw_int(w, e->nreminders);
    qw_key(w, "images"); qw_int(w, e->images);
    qw_key(w, "documents"); qw_int(w, e->documents);
    qw_obj_end(w);
}

quire_status quire_estimate_write(const quire_estimate *e, int pretty, quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    if (!e) return q_err(err, QUIRE_E_INVALID, "quire_estimate_write: no estimate");
    qbuf b;
    qbuf_init(&b, q_alloc_default());
    qw w;
    qw_init(&w, &b, pretty != 0);
    qw_obj_begin(&w);
    write_fields(&w, e);
    qw_obj_end(&w);
    qw_dispose(&w);
    if (b.oom || !qbuf_take(&b, out)) { qbuf_free(&b); return q_oom(err); }
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* Every request of a session log                                            */
/* ------------------------------------------------------------------------ */

/* Whether a log line may be a render line (a cheap test; false positives only
 * cost a state copy). */
static bool has_render(const char *s, size_t n) {
    static const char k[] = "\"render\"";
    for (size_t i = 0; i + 8 <= n; i++)
        if (s[i] == '"' && memcmp(s + i, k, 8) == 0) return true;
    return false;
}

quire_status quire_estimate_log(const char *log, size_t len, const quire_replay_options *ro,
                                const quire_estimate_options *eo, const quire_options *opts, quire_bytes *out,
                                quire_error *err) {
    memset(out, 0, sizeof *out);
    quire_replay *r = NULL;
    quire_status st = quire_replay_open(log, len, ro, opts, &r, err);
    if (st) return st;
    qbuf b;
    qbuf_init(&b, r->a);
    for (;;) {
        const char *line;
        size_t n, off;
        if (!q_next_line(&r->it, &line, &n, &off)) break;
        if (q_line_blank(line, n)) continue;
        /* the reminder state the render of this line starts from */
        quire_state *before = NULL;
        if (has_render(line, n) && !(before = qs_clone(r->state))) { st = q_oom(err); break; }
        quire_replay_step step;
        memset(&step, 0, sizeof step);
        r->out.len = 0;
        st = qrp_apply(r, line, n, r->it.lineno, off, &step, err);
        if (st || !step.turn) { quire_state_free(before); if (st) break; continue; }
        quire_render_options rr = r->rpol;
        rr.size = sizeof rr;
        rr.provider = step.provider;
        rr.model = step.model;
        rr.caps = ro && ro->render && ro->render->caps ? ro->render->caps : r->caps;
        quire_estimate_options e2 = eo ? *eo : (quire_estimate_options)QUIRE_ESTIMATE_OPTIONS_INIT;
        e2.render = &rr;
        quire_estimate est_out;
        st = quire_estimate_request(r->t, before, &e2, opts, &est_out, NULL, err);
        quire_state_free(before);
        if (st) break;
        qw w;
        qw_init(&w, &b, false);
        qw_obj_begin(&w);
        qw_key(&w, "line"); qw_int(&w, step.line);
        qw_key(&w, "turn"); qw_int(&w, step.turn);
        qw_key(&w, "provider"); qw_strz(&w, step.provider ? step.provider : "");
        if (step.model) { qw_key(&w, "model"); qw_strz(&w, step.model); }
        size_t np = 0, blen = 0; /* the body is flat, or the render memo's pieces */
        if (r->memo) qr_memo_pieces(r->memo, &np, &blen);
        qw_key(&w, "requestBytes"); qw_int(&w, (int64_t)(r->req_flat ? r->req.len : blen));
        write_fields(&w, &est_out);
        qw_obj_end(&w);
        qw_dispose(&w);
        qbuf_putc(&b, '\n');
    }
    quire_replay_free(r);
    if (!st && (b.oom || !qbuf_take(&b, out))) st = q_oom(err);
    if (st) qbuf_free(&b);
    return st;
}

/* ------------------------------------------------------------------------ */
/* A budget for the whole request (budgetScope "request")                    */
/* ------------------------------------------------------------------------ */

quire_status qrp_estimate(const quire_replay *r, const char *provider, const char *model,
                          const quire_compact_policy *counter, const quire_options *opts, quire_estimate *out,
                          quire_error *err) {
    quire_render_options ro = r->rpol;
    ro.size = sizeof ro;
    ro.provider = provider;
    ro.model = model;
    ro.caps = r->caps;
    quire_estimate_options eo = QUIRE_ESTIMATE_OPTIONS_INIT;
    eo.render = &ro;
    if (counter) {
        eo.count_tokens = counter->count_tokens;
        eo.count_tokens_ud = counter->count_tokens_ud;
    }
    return quire_estimate_request(r->t, r->state, &eo, opts, out, NULL, err);
}

quire_status qrp_request_budget(const quire_replay *r, quire_compact_policy *p, quire_error *err) {
    if (p->budget_scope != QUIRE_BUDGET_REQUEST) return QUIRE_OK;
    p->budget_scope = QUIRE_BUDGET_TRANSCRIPT;
    if (!p->budget_tokens) return QUIRE_OK;
    if (!r->provider)
        return q_err(err, QUIRE_E_INVALID, "budgetScope \"request\" needs the session's target provider");
    quire_estimate e;
    quire_status st = qrp_estimate(r, r->provider, r->model, p, &r->opts, &e, err);
    if (st) return st;
    uint64_t tr = quire_compact_estimate(r->t, p);
    /* compaction measures the transcript with system and tools; the request
     * adds what compaction cannot remove (the provider's per-request and
     * per-message overheads, the reminders of this turn) and counts text with
     * the target's tokenizer (at least o200k's count): the budget left for
     * compaction is the request budget less that difference. Every token
     * compaction removes takes at least one from the request, so meeting
     * the transcript budget meets the request budget. */
    if (e.total > tr) {
        uint64_t extra = e.total - tr;
        if (p->budget_tokens <= extra)
            return q_err(err, QUIRE_E_BUDGET,
                         "budget of %llu tokens for the whole request cannot be met: the request is estimated at %llu "
                         "tokens, of which %llu are the %s overheads and reminders compaction cannot remove",
                         (unsigned long long)p->budget_tokens, (unsigned long long)e.total,
                         (unsigned long long)extra, e.family);
        p->budget_tokens -= extra;
    }
    return QUIRE_OK;
}
