/* The render driver: resolve the capability row, plan slots and cache
 * breakpoints, call the dialect encoder. */
#include "render/wire.h"

#include <stdio.h>

/* ---- events ---- */

static void ev_begin(qr_ctx *c, qw *w, const char *kind) {
    qw_init(w, c->events, false);
    qw_obj_begin(w);
    qw_key(w, "sessionUpdate"); qw_strz(w, kind);
}
static void ev_end(qr_ctx *c, qw *w) {
    qw_obj_end(w);
    qw_dispose(w);
    qbuf_putc(c->events, '\n');
}

static void ev_content_dropped(qr_ctx *c, uint32_t msg, int32_t block, int32_t part, const char *reason,
                               const char *detail) {
    if (!c->events) return;
    qw w;
    ev_begin(c, &w, "content_dropped");
    qw_key(&w, "messageIndex"); qw_int(&w, msg < c->t->nmsgs ? c->t->msgs[msg].src_index : msg);
    if (block >= 0) { qw_key(&w, "blockIndex"); qw_int(&w, block); }
    if (part >= 0) { qw_key(&w, "partIndex"); qw_int(&w, part); }
    qw_key(&w, "reason"); qw_strz(&w, reason);
    qw_key(&w, "detail"); qw_strz(&w, detail);
    ev_end(c, &w);
}

static bool unsupported_at(qr_ctx *c, uint32_t msg, int32_t block, int32_t part, const char *what);
bool qr_unsupported(qr_ctx *c, uint32_t msg, int32_t block, const char *what) {
    return unsupported_at(c, msg, block, -1, what);
}
bool qr_unsupported_part(qr_ctx *c, uint32_t msg, uint32_t block, uint32_t part, const char *what) {
    return unsupported_at(c, msg, (int32_t)block, (int32_t)part, what);
}
static bool unsupported_at(qr_ctx *c, uint32_t msg, int32_t block, int32_t part, const char *what) {
    char detail[256];
    snprintf(detail, sizeof detail, "%s cannot be expressed for %s (%s)", what, qdialect_name(c->caps.dialect),
             c->model);
    if (c->ro->lossy) {
        ev_content_dropped(c, msg, block, part, "not_expressible", detail);
        return true;
    }
    if (!c->st) {
        char ptr[96];
        uint32_t src = msg < c->t->nmsgs ? c->t->msgs[msg].src_index : msg;
        if (block >= 0 && part >= 0) snprintf(ptr, sizeof ptr, "/messages/%u/content/%d/content/%d", src, block, part);
        else if (block >= 0) snprintf(ptr, sizeof ptr, "/messages/%u/content/%d", src, block);
        else snprintf(ptr, sizeof ptr, "/messages/%u", src);
        c->st = q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr, "%s (use --lossy to drop it with an event)",
                         detail);
    }
    return true;
}

void qr_drop_artefact(qr_ctx *c, uint32_t msg, uint32_t block, const char *detail) {
    ev_content_dropped(c, msg, (int32_t)block, -1, "not_renderable", detail);
}

void qr_event_adjusted(qr_ctx *c, const char *change, uint32_t msg, const char *detail) {
    if (!c->events) return;
    qw w;
    ev_begin(c, &w, "request_adjusted");
    qw_key(&w, "change"); qw_strz(&w, change);
    if (msg != UINT32_MAX) { qw_key(&w, "messageIndex"); qw_int(&w, msg < c->t->nmsgs ? c->t->msgs[msg].src_index : msg); }
    qw_key(&w, "detail"); qw_strz(&w, detail);
    ev_end(c, &w);
}

/* ---- string helpers ---- */

qstr qr_plain(qr_ctx *c, qstr s) {
    if (!s.esc || !s.p) return s;
    size_t n = 0;
    const char *p = qstr_plain_bytes(s, &c->scratch, &n);
    if (!p) { c->w->b->oom = true; return qstr_lit(""); }
    return qstr_plain(p, n);
}

qstr qr_system_joined(qr_ctx *c) {
    const quire_transcript *t = c->t;
    uint32_t n = t->has_system ? t->nsystem : 0;
    if (n == 1 && !qstr_present(c->sys_extra)) return t->system[0].text;
    if (n == 0 && qstr_present(c->sys_extra)) return c->sys_extra;
    qbuf b;
    qbuf_init(&b, c->scratch.a);
    for (uint32_t i = 0; i < n; i++) {
        if (i) qbuf_puts(&b, "\n\n");
        qbuf_put_qstr(&b, t->system[i].text);
    }
    if (qstr_present(c->sys_extra)) {
        if (n) qbuf_puts(&b, "\n\n");
        qbuf_put(&b, c->sys_extra.p, c->sys_extra.len);
    }
    qstr r = qstr_lit("");
    char *m = b.oom ? NULL : qarena_alloc(&c->scratch, b.len + 1);
    if (m) {
        if (b.len) memcpy(m, b.data, b.len);
        m[b.len] = '\0';
        r = qstr_plain(m, b.len);
    } else {
        c->w->b->oom = true;
    }
    qbuf_free(&b);
    return r;
}

void qr_write_data_url(qr_ctx *c, qstr media_type, qstr data) {
    qbuf *b = c->w->b;
    /* a JSON string: "data:" media ";base64," data, both copied escaped */
    qw_str_esc(c->w, "", 0);
    b->len--; /* reopen the string: drop the closing quote */
    qbuf_puts(b, "data:");
    if (media_type.esc) qbuf_put(b, media_type.p, media_type.len);
    else qj_escape(b, media_type.p ? media_type.p : "", media_type.len);
    qbuf_puts(b, ";base64,");
    if (data.esc) qbuf_put(b, data.p, data.len);
    else qj_escape(b, data.p ? data.p : "", data.len);
    qbuf_putc(b, '"');
}

void qr_write_value_as_string(qr_ctx *c, qval v) {
    /* the value's exact bytes (compact when the input was compact; numbers and
     * escapes untouched), as the content of a JSON string */
    qbuf tmp;
    qbuf_init(&tmp, c->scratch.a);
    qw w2;
    qw_init(&w2, &tmp, false);
    qw_qval(&w2, v);
    qw_dispose(&w2);
    if (tmp.oom) { c->w->b->oom = true; qbuf_free(&tmp); return; }
    qw_str(c->w, tmp.data ? tmp.data : "", tmp.len);
    qbuf_free(&tmp);
}

bool qr_tool_input_ok(qr_ctx *c, uint32_t mi, uint32_t bi, const qblock *b) {
    if (b->custom || qj_type_of(b->input.doc, b->input.idx) == QJ_OBJECT) return true;
    qr_unsupported(c, mi, (int32_t)bi, "a toolCall whose input is not a JSON object (this dialect takes an object)");
    return false;
}

void qr_write_tool_input(qr_ctx *c, const qblock *b) {
    qw *w = c->w;
    if (!b->custom) { qw_qval(w, b->input); return; }
    qw_obj_begin(w);
    qw_key(w, "input"); qw_qval(w, b->input);
    qw_obj_end(w);
}

void qr_write_tool_input_string(qr_ctx *c, const qblock *b) {
    if (!b->custom) { qr_write_value_as_string(c, b->input); return; }
    qbuf tmp;
    qbuf_init(&tmp, c->scratch.a);
    qw w2;
    qw_init(&w2, &tmp, false);
    qw_obj_begin(&w2);
    qw_key(&w2, "input"); qw_qval(&w2, b->input);
    qw_obj_end(&w2);
    qw_dispose(&w2);
    if (tmp.oom) { c->w->b->oom = true; qbuf_free(&tmp); return; }
    qw_str(c->w, tmp.data ? tmp.data : "", tmp.len);
    qbuf_free(&tmp);
}

const qblock *qr_call_for(const qr_ctx *c, uint32_t before_msg, qstr call_id) {
    const quire_transcript *t = c->t;
    size_t idn = 0;
    const char *idp = call_id.p;
    char tmp[512];
    if (call_id.esc) {
        if (call_id.len >= sizeof tmp) return NULL;
        idn = qj_unescape(call_id.p, call_id.len, tmp);
        idp = tmp;
    } else {
        idn = call_id.len;
    }
    for (uint32_t k = before_msg; k-- > 0;) {
        const qmsg *m = &t->msgs[k];
        if (m->role != QR_ASSISTANT) continue;
        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *bl = &m->blocks[b];
            if (bl->type != QB_TOOL_CALL) continue;
            char t2[512];
            const char *p2 = bl->id.p;
            size_t n2 = bl->id.len;
            if (bl->id.esc) {
                if (n2 >= sizeof t2) continue;
                n2 = qj_unescape(bl->id.p, bl->id.len, t2);
                p2 = t2;
            }
            if (n2 == idn && memcmp(p2, idp, idn) == 0) return bl;
        }
    }
    return NULL;
}

qstr qr_tool_name_for(const qr_ctx *c, uint32_t before_msg, qstr call_id) {
    const qblock *b = qr_call_for(c, before_msg, call_id);
    return b ? b->name : qstr_lit("");
}

/* ---- result ---- */

void quire_render_result_free(quire_render_result *r) {
    if (!r) return;
    quire_bytes_free(&r->request);
    quire_bytes_free(&r->events);
    quire_state_free(r->state);
    r->state = NULL;
}

/* ---- transcript checks every dialect needs (DESIGN principle 4) ----
 * A request is valid by construction only if the transcript pairs its tool
 * calls and results: every toolResult answers a toolCall of the assistant
 * message right before its tool messages, once; every toolCall (except in the
 * last assistant message) is answered before the next user or assistant
 * message; toolCall ids are unique. Results keep their transcript order
 * (providers accept any order within the turn, and logged requests use the
 * order the tools finished in). Messages need at least one content block. */

static quire_status check_transcript(qr_ctx *c) {
    /* ids must be unique in one assistant turn everywhere; across the whole
     * request for the dialects that match results by id request-wide */
    bool global = c->caps.dialect == QD_ANTHROPIC_MESSAGES || c->caps.dialect == QD_BEDROCK_CONVERSE;
    return qtr_check(c->t, global, false, &c->scratch, c->err);
}

/* ---- provider content rules applied before encoding (docs/providers.md,
 * "Provider rules") ----
 * Rules the dialect encoders would otherwise break in the body:
 *   - blank text (empty or whitespace only) on Anthropic and Bedrock, empty
 *     text (not carrying a signature) on Gemini: the block is dropped
 *     (content_dropped, reason blank_text);
 *   - a thinking / redactedThinking block signed by another provider (its
 *     `provider` differs from the target's): dropped (reason foreign_signature),
 *     every dialect; an unsigned thinking block on Anthropic and Bedrock
 *     (reason unsigned_thinking); thinking on a row without thinking there
 *     (reason not_renderable, as the encoders report it elsewhere);
 *   - the final assistant message on Anthropic and Bedrock may not end with
 *     whitespace: its last text block is trimmed (request_adjusted,
 *     trimmed_trailing_whitespace);
 *   - a message left with no block: an assistant message is dropped
 *     (request_adjusted, dropped_empty_message; the user turns around it
 *     merge); any other message is an error (with --lossy, dropped with the
 *     same event).
 * The encoders then see a view of the transcript: same message indices,
 * changed messages hold their kept blocks (block indices of a changed
 * message count kept blocks). */

static bool is_blank(qstr s) {
    /* JSON-escaped input: \n \t \r escapes are whitespace too */
    for (uint32_t i = 0; i < s.len; i++) {
        char ch = s.p[i];
        if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') continue;
        if (s.esc && ch == '\\' && i + 1 < s.len && (s.p[i + 1] == 'n' || s.p[i + 1] == 't' || s.p[i + 1] == 'r')) {
            i++;
            continue;
        }
        return false;
    }
    return true;
}

static void ev_drop(qr_ctx *c, uint32_t msg, uint32_t block, const char *reason, const char *detail) {
    ev_content_dropped(c, msg, (int32_t)block, -1, reason, detail);
}

static quire_status apply_rules(qr_ctx *c, quire_transcript **viewp) {
    const quire_transcript *t = c->t;
    bool claude_rules = c->caps.dialect == QD_ANTHROPIC_MESSAGES || c->caps.dialect == QD_BEDROCK_CONVERSE;
    quire_transcript *view = NULL;
    *viewp = NULL;
    uint32_t last = t->nmsgs ? t->nmsgs - 1 : 0;
    uint32_t gf;
    bool final_assistant = claude_rules && t->nmsgs && t->msgs[last].role == QR_ASSISTANT &&
                           qr_groups_at(c, last, &gf) == 0 && qr_groups_at(c, QR_TAIL, &gf) == 0;
    for (uint32_t k = 0; k < t->nmsgs; k++) {
        const qmsg *m = &t->msgs[k];
        qblock *kept = NULL;
        uint32_t nk = 0;
        bool changed = false;
        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *bl = &m->blocks[b];
            const char *reason = NULL, *detail = NULL;
            if (claude_rules && bl->type == QB_TEXT && !qr_is_instruction(m) && is_blank(bl->text)) {
                reason = "blank_text";
                detail = "a text block with no visible character is rejected by this provider";
            } else if (c->caps.dialect == QD_GEMINI && bl->type == QB_TEXT && bl->text.len == 0 && !qr_is_instruction(m) &&
                       !(b > 0 && m->blocks[b - 1].type == QB_THINKING && m->blocks[b - 1].text.len == 0 &&
                         qstr_present(m->blocks[b - 1].signature))) {
                /* Gemini: an empty text part is rejected unless it carries a thoughtSignature */
                reason = "blank_text";
                detail = "an empty text part is rejected by this provider";
            } else if ((bl->type == QB_THINKING || bl->type == QB_REDACTED_THINKING) && qstr_present(bl->provider) &&
                       !qstr_eq(bl->provider, c->ro->provider)) {
                reason = "foreign_signature";
                detail = "thinking signed by another provider is only sent back to that provider";
            } else if (claude_rules && (bl->type == QB_THINKING || bl->type == QB_REDACTED_THINKING) && !c->caps.thinking) {
                reason = "not_renderable";
                detail = "thinking block: the row has no thinking";
            } else if (claude_rules && bl->type == QB_THINKING && !qstr_present(bl->signature)) {
                reason = "unsigned_thinking";
                detail = "a thinking block without its signature is rejected by this provider";
            }
            if (reason) {
                ev_drop(c, k, b, reason, detail);
                if (!changed) {
                    changed = true;
                    kept = qarena_alloc(&c->scratch, (size_t)(m->nblocks ? m->nblocks : 1) * sizeof(qblock));
                    if (!kept) return q_oom(c->err);
                    if (b) memcpy(kept, m->blocks, (size_t)b * sizeof(qblock));
                    nk = b;
                }
                continue;
            }
            if (changed) kept[nk++] = *bl;
        }
        const qblock *blocks = changed ? kept : m->blocks;
        uint32_t nb = changed ? nk : m->nblocks;
        if (k == last && final_assistant && nb && blocks[nb - 1].type == QB_TEXT) {
            qstr p = qr_plain(c, blocks[nb - 1].text);
            uint32_t n = p.len;
            while (n && (p.p[n - 1] == ' ' || p.p[n - 1] == '\n' || p.p[n - 1] == '\t' || p.p[n - 1] == '\r')) n--;
            if (n != p.len) {
                if (!changed) {
                    changed = true;
                    kept = qarena_alloc(&c->scratch, (size_t)m->nblocks * sizeof(qblock));
                    if (!kept) return q_oom(c->err);
                    memcpy(kept, m->blocks, (size_t)m->nblocks * sizeof(qblock));
                    nk = m->nblocks;
                }
                kept[nk - 1].text = qstr_plain(p.p, n);
                qr_event_adjusted(c, "trimmed_trailing_whitespace", k,
                                  "the final assistant message may not end with whitespace: its last text block is trimmed");
            }
        }
        if (!changed) continue;
        if (!view) {
            view = qarena_alloc(&c->scratch, sizeof *view);
            qmsg *msgs = qarena_alloc(&c->scratch, (size_t)(t->nmsgs ? t->nmsgs : 1) * sizeof(qmsg));
            if (!view || !msgs) return q_oom(c->err);
            *view = *t;
            memcpy(msgs, t->msgs, (size_t)t->nmsgs * sizeof(qmsg));
            view->msgs = msgs;
        }
        qmsg *vm = &view->msgs[k];
        vm->blocks = kept;
        vm->nblocks = nk;
        vm->content_is_string = vm->content_is_string && nk == 1;
        if (nk == 0) {
            if (m->role != QR_ASSISTANT && !c->ro->lossy) {
                char ptr[64];
                snprintf(ptr, sizeof ptr, "/messages/%u/content", m->src_index);
                return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, ptr,
                                "no block of this %s message can be carried to %s (%s): nothing would be left "
                                "(use --lossy to drop the message with an event)",
                                qrole_name(m->role), qdialect_name(c->caps.dialect), c->model);
            }
            qr_event_adjusted(c, "dropped_empty_message", k,
                              "no block of this message can be carried: the message is left out");
        }
    }
    *viewp = view;
    return QUIRE_OK;
}

typedef quire_status (*qr_encoder)(qr_ctx *c);
static const qr_encoder k_encoders[QD_COUNT_] = {
    [QD_ANTHROPIC_MESSAGES] = qr_encode_anthropic,
    [QD_OPENAI_CHAT] = qr_encode_openai_chat,
    [QD_OPENAI_RESPONSES] = qr_encode_openai_responses,
    [QD_GEMINI] = qr_encode_gemini,
    [QD_BEDROCK_CONVERSE] = qr_encode_bedrock,
    [QD_MISTRAL] = qr_encode_mistral,
    [QD_OLLAMA] = qr_encode_ollama,
};

quire_status quire_render(const quire_transcript *t, const quire_state *state, const quire_render_options *ro,
                          const quire_options *opts, quire_render_result *res, quire_error *err) {
    memset(res, 0, sizeof *res);
    if (!t || !ro) return q_err(err, QUIRE_E_INVALID, "quire_render: transcript and options are required");
    if (!ro->provider || !*ro->provider) return q_err(err, QUIRE_E_INVALID, "no provider given");
    if (!qcaps_known_provider(ro->caps, ro->provider))
        return q_err(err, QUIRE_E_INVALID,
                     "unknown provider \"%s\" (expected anthropic, openai, openai_responses, gemini, bedrock, "
                     "mistral, ollama, deepseek or openai_compatible)", ro->provider);
    const char *model = ro->model && *ro->model ? ro->model : qcaps_default_model(ro->provider);
    if (!model) return q_err(err, QUIRE_E_INVALID, "provider \"%s\" has no default model; give one", ro->provider);
    qr_ctx c;
    memset(&c, 0, sizeof c);
    if (!qcaps_resolve(ro->caps, ro->provider, model, &c.caps, NULL, NULL))
        return q_err(err, QUIRE_E_INVALID, "no capability row matches provider \"%s\" model \"%s\"", ro->provider,
                     model);
    const quire_allocator *a = q_alloc_of(opts);
    qbuf out;
    qbuf_init(&out, a);
    qw w;
    qw_init(&w, &out, ro->pretty != 0);
    c.t = t; c.ro = ro; c.w = &w; c.err = err; c.model = model;
    c.max_tokens = ro->max_tokens ? ro->max_tokens : c.caps.default_max_tokens;
    qarena_init(&c.scratch, a);
    qbuf events;
    qbuf_init(&events, a);
    c.events = &events;
    quire_status st = QUIRE_OK;
    /* the next state starts as a copy of the given one */
    c.next = state ? qs_clone(state) : qs_new(a, NULL);
    if (!c.next) { qarena_free(&c.scratch); qbuf_free(&events); qbuf_free(&out); return q_oom(err); }
    c.turn = c.next->turn + 1;
    c.rems = qs_live_for_turn(c.next, &c.scratch, &c.nrems);
    if (!c.rems) st = q_oom(err);
    if (!st && ro->placement == QUIRE_PLACEMENT_APPEND_ONLY) {
        c.retired = qs_retired_anchored(c.next, &c.scratch, &c.nretired);
        if (!c.retired) st = q_oom(err);
    }
    if (!st) st = check_transcript(&c);
    if (!st) st = qr_plan_slots(&c);
    quire_transcript *view = NULL;
    if (!st) st = apply_rules(&c, &view);
    if (!st && view) c.t = view;
    if (!st) st = qr_plan_cache(&c);
    if (!st) {
        st = k_encoders[c.caps.dialect](&c);
        if (!st && c.st) st = c.st;
    }
    qw_dispose(&w);
    if (!st && ro->lossy && !out.oom) {
        /* what --lossy dropped may leave a request its provider rejects (an
         * emptied message): check our own output, never emit it invalid */
        quire_render_options vro = *ro;
        vro.model = model;
        quire_bytes rep;
        quire_error verr;
        quire_options vo = QUIRE_OPTIONS_INIT;
        vo.allocator = a;
        quire_status vs = quire_validate(out.data ? out.data : "", out.len, &vro, &vo, &rep, &verr);
        if (vs == QUIRE_E_VALIDATE) {
            size_t n = 0;
            while (n < rep.len && rep.data[n] != '\n') n++;
            st = q_err(err, QUIRE_E_UNSUPPORTED, "after dropping what %s cannot express, the request is invalid: %.*s",
                       qdialect_name(c.caps.dialect), (int)(n < 300 ? n : 300), rep.data);
            quire_bytes_free(&rep);
        } else if (vs == QUIRE_E_NOMEM) {
            st = q_oom(err);
        }
    }
    if (st == QUIRE_OK) qs_after_render(c.next, &events);
    qarena_free(&c.scratch);
    if (st == QUIRE_OK && (out.oom || events.oom || !qbuf_take(&out, &res->request) ||
                           !qbuf_take(&events, &res->events)))
        st = q_oom(err);
    if (st) {
        qbuf_free(&out);
        qbuf_free(&events);
        quire_bytes_free(&res->request);
        quire_bytes_free(&res->events);
        quire_state_free(c.next);
        return st;
    }
    res->state = c.next;
    return QUIRE_OK;
}

/* ---- wire segmentation ---- */
#include "render/wire.h"

void qr_write_system_parts(qr_ctx *c, const char *part_type) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    qw_arr_begin(w);
    for (uint32_t i = 0; t->has_system && i < t->nsystem; i++) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, part_type);
        qw_key(w, "text"); qw_qstr(w, t->system[i].text);
        const qr_mark *mk = qr_mark_at(c, QRS_SYSTEM, i, 0);
        if (mk) { qw_key(w, "prompt_cache_breakpoint"); qr_write_cache_control(c, mk); }
        qw_obj_end(w);
    }
    if (qstr_present(c->sys_extra)) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, part_type);
        qw_key(w, "text"); qw_qstr(w, c->sys_extra);
        qw_obj_end(w);
    }
    qw_arr_end(w);
}

void qr_write_function_tools(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    if (!t->has_tools || !t->ntools) return;
    qw_key(w, "tools");
    qw_arr_begin(w);
    for (uint32_t i = 0; i < t->ntools; i++) {
        const qtool *tl = &t->tools[i];
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "function");
        qw_key(w, "function");
        qw_obj_begin(w);
        qw_key(w, "name"); qw_qstr(w, tl->name);
        if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
        qw_key(w, "parameters"); qw_qval(w, tl->input_schema);
        qw_obj_end(w);
        qw_obj_end(w);
    }
    qw_arr_end(w);
}

qstr qr_wrap_instruction(qr_ctx *c, const qblock *b) {
    qbuf tmp;
    qbuf_init(&tmp, c->scratch.a);
    qbuf_puts(&tmp, c->caps.xml ? "<system-reminder>\n" : "System reminder:\n");
    qbuf_put_qstr(&tmp, b->text);
    if (c->caps.xml) qbuf_puts(&tmp, "\n</system-reminder>");
    qstr r = qstr_lit("");
    char *m = tmp.oom ? NULL : qarena_alloc(&c->scratch, tmp.len + 1);
    if (m) {
        memcpy(m, tmp.data, tmp.len);
        m[tmp.len] = '\0';
        r = qstr_plain(m, tmp.len);
    } else {
        c->w->b->oom = true;
    }
    qbuf_free(&tmp);
    return r;
}

static qwrole base_role(const qmsg *m) {
    switch (m->role) {
    case QR_ASSISTANT: return QW_ASSISTANT;
    case QR_TOOL: return QW_TOOL;
    case QR_SYSTEM: case QR_DEVELOPER: return QW_SYSTEM;
    case QR_USER: return QW_USER;
    }
    return QW_USER;
}

qr_run *qr_segment(qr_ctx *c, const qr_seg_opts *o, uint32_t *nruns) {
    const quire_transcript *t = c->t;
    qr_run *r = qarena_calloc(&c->scratch, t->nmsgs ? t->nmsgs : 1, sizeof(qr_run));
    *nruns = 0;
    if (!r) { c->w->b->oom = true; return NULL; }
    uint32_t n = 0;
    for (uint32_t k = 0; k < t->nmsgs; k++) {
        if (t->msgs[k].nblocks == 0) { /* left out by the provider rules: no wire message */
            if (n > 0) r[n - 1].j = k + 1;
            continue;
        }
        qwrole role = base_role(&t->msgs[k]);
        if (role == QW_SYSTEM) {
            bool ok = o->mid_system;
            if (ok && o->anthropic_rule) {
                /* after a user turn, and before an assistant turn or at the end */
                uint32_t p = k, q = k + 1;
                while (p > 0 && qr_is_instruction(&t->msgs[p - 1])) p--;
                while (q < t->nmsgs && qr_is_instruction(&t->msgs[q])) q++;
                ok = p > 0 && (t->msgs[p - 1].role == QR_USER || t->msgs[p - 1].role == QR_TOOL) &&
                     (q == t->nmsgs || t->msgs[q].role == QR_ASSISTANT);
            } else if (ok) {
                ok = k > 0 || !o->merge_user; /* never the first message where a user turn must open */
            }
            if (!ok) role = QW_USER;
        }
        if (role == QW_TOOL && o->merge_user) role = QW_USER;
        bool merge = n > 0 && r[n - 1].role == role && role != QW_SYSTEM &&
                     (role == QW_USER ? (o->merge_user || o->merge_same) : role == QW_ASSISTANT ? o->merge_same : false);
        if (merge) { r[n - 1].j = k + 1; continue; }
        r[n].role = role;
        r[n].i = k;
        r[n].j = k + 1;
        n++;
    }
    *nruns = n;
    return r;
}
