/* Ollama /api/chat encoder (dialect ollama).
 *
 * Key order: model, messages, tools, stream (false: one JSON response),
 * options.num_predict (only when a max is given).
 * Messages: content is always one string (text blocks joined by a blank
 * line), images a list of base64 strings (no URLs, no documents); assistant
 * messages carry "thinking" and "tool_calls" [{"function":{"name","arguments"}}]
 * with arguments as a JSON object (the input, byte-exact); each toolResult is a
 * {"role":"tool","content","tool_name"} message. Mid-conversation system
 * messages where the row allows them. Reminder user blocks: a separate user
 * message, or (tailBlock last_tool_message, strict templates) appended to the
 * last tool/user message's content after a blank line. */
#include "render/wire.h"

/* Writes the joined text of blocks as one JSON string, with extra texts
 * appended (blank-line separated). The buffer holds the JSON-escaped form:
 * escaped input slices are copied as they are, nothing is decoded. */
typedef struct joiner {
    qr_ctx *c;
    qbuf b;
    bool any;
} joiner;

static void j_init(joiner *j, qr_ctx *c) { j->c = c; qbuf_init(&j->b, c->scratch.a); j->any = false; }
static void j_add(joiner *j, qstr s) {
    if (j->any) qbuf_put(&j->b, "\\n\\n", 4); /* an escaped blank line */
    if (s.esc) qbuf_put(&j->b, s.p, s.len);
    else if (s.p) qj_escape(&j->b, s.p, s.len);
    j->any = true;
}
static void j_write(joiner *j) {
    if (j->b.oom) j->c->w->b->oom = true;
    qw_str_esc(j->c->w, j->b.data ? j->b.data : "", j->b.len);
    qbuf_free(&j->b);
}

static bool user_groups_at(const qr_ctx *c, uint32_t k) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) return true;
    return false;
}
static void j_groups(joiner *j, uint32_t k) {
    uint32_t f, n = qr_groups_at(j->c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (j->c->groups[g].slot != QSLOT_DEVELOPER) j_add(j, j->c->groups[g].text);
}

static void dev_messages(qr_ctx *c, uint32_t k) {
    qw *w = c->w;
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++) {
        if (c->groups[g].slot != QSLOT_DEVELOPER) continue;
        qw_obj_begin(w);
        qw_key(w, "role"); qw_strz(w, "system");
        qw_key(w, "content"); qw_qstr(w, c->groups[g].text);
        qw_obj_end(w);
    }
}

static void group_message(qr_ctx *c, uint32_t k) {
    if (!user_groups_at(c, k)) return;
    qw *w = c->w;
    joiner j;
    j_init(&j, c);
    j_groups(&j, k);
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "user");
    qw_key(w, "content"); j_write(&j);
    qw_obj_end(w);
}

/* A user message for k; absorbs the groups at k (and the tail) when asked. */
static void user_message(qr_ctx *c, uint32_t k, bool *fold, bool groups_k, bool tail) {
    const qmsg *m = &c->t->msgs[k];
    qw *w = c->w;
    joiner j;
    j_init(&j, c);
    if (*fold) { j_add(&j, qr_system_joined(c)); *fold = false; }
    uint32_t nimg = 0;
    for (uint32_t b = 0; b < m->nblocks; b++) {
        const qblock *bl = &m->blocks[b];
        if (qr_is_instruction(m)) { j_add(&j, qr_wrap_instruction(c, bl)); continue; }
        switch (bl->type) {
        case QB_TEXT:
            j_add(&j, bl->text);
            if (qval_present(bl->citations)) qr_drop_citations(c, k, b);
            break;
        case QB_IMAGE:
            if (qstr_present(bl->url)) qr_unsupported(c, k, (int32_t)b, "an image by URL");
            else if (qstr_present(bl->file_id)) qr_unsupported(c, k, (int32_t)b, "an image by file id");
            else nimg++;
            break;
        case QB_DOCUMENT: qr_unsupported(c, k, (int32_t)b, "a document block"); break;
        case QB_AUDIO: qr_unsupported(c, k, (int32_t)b, "an audio block"); break;
        case QB_FILE: qr_unsupported(c, k, (int32_t)b, "a file block"); break;
        case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT: break;
        case QB_OPAQUE: qr_drop_artefact(c, k, b, "opaque item: no form in this dialect"); break;
        case QB_TOOL_CALL: case QB_TOOL_RESULT: case QB_THINKING: case QB_REDACTED_THINKING: break;
        }
    }
    if (groups_k) j_groups(&j, k);
    if (tail) j_groups(&j, QR_TAIL);
    if (!j.any && !nimg) { qbuf_free(&j.b); return; } /* every block dropped (reported): no empty message */
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "user");
    qw_key(w, "content"); j_write(&j);
    if (nimg) {
        qw_key(w, "images");
        qw_arr_begin(w);
        for (uint32_t b = 0; b < m->nblocks; b++)
            if (m->blocks[b].type == QB_IMAGE && qstr_present(m->blocks[b].data)) qw_qstr(w, m->blocks[b].data);
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

static void assistant_message(qr_ctx *c, uint32_t k) {
    const qmsg *m = &c->t->msgs[k];
    qw *w = c->w;
    joiner j, th;
    j_init(&j, c);
    j_init(&th, c);
    uint32_t ncalls = 0;
    for (uint32_t b = 0; b < m->nblocks; b++) {
        const qblock *bl = &m->blocks[b];
        switch (bl->type) {
        case QB_TEXT:
            j_add(&j, bl->text);
            if (qval_present(bl->citations)) qr_drop_citations(c, k, b);
            break;
        case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
            qr_drop_artefact(c, k, b, "server tool block: no form in this dialect");
            break;
        case QB_AUDIO: case QB_FILE:
            qr_unsupported(c, k, (int32_t)b, "media in an assistant message");
            break;
        case QB_THINKING:
            if (c->caps.thinking) j_add(&th, bl->text);
            else qr_drop_artefact(c, k, b, "thinking block: the row has no thinking");
            break;
        case QB_REDACTED_THINKING: qr_drop_artefact(c, k, b, "redactedThinking has no Ollama form"); break;
        case QB_OPAQUE: qr_drop_artefact(c, k, b, "opaque item of another provider"); break;
        case QB_TOOL_CALL:
            if (!bl->custom && qj_type_of(bl->input.doc, bl->input.idx) != QJ_OBJECT)
                qr_unsupported(c, k, (int32_t)b, "tool call input that is not a JSON object");
            else ncalls++;
            break;
        case QB_IMAGE: case QB_DOCUMENT: qr_unsupported(c, k, (int32_t)b, "an image or document in an assistant message"); break;
        case QB_TOOL_RESULT: break;
        }
    }
    if (!j.any && !th.any && !ncalls) { /* every block dropped (reported): no empty message */
        qbuf_free(&j.b);
        qbuf_free(&th.b);
        return;
    }
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "assistant");
    qw_key(w, "content"); j_write(&j);
    if (th.any) { qw_key(w, "thinking"); j_write(&th); } else qbuf_free(&th.b);
    if (ncalls) {
        qw_key(w, "tool_calls");
        qw_arr_begin(w);
        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *bl = &m->blocks[b];
            if (bl->type != QB_TOOL_CALL || (!bl->custom && qj_type_of(bl->input.doc, bl->input.idx) != QJ_OBJECT)) continue;
            qw_obj_begin(w);
            qw_key(w, "function");
            qw_obj_begin(w);
            qw_key(w, "name"); qw_qstr(w, bl->name);
            qw_key(w, "arguments"); qr_write_tool_input(c, bl);
            qw_obj_end(w);
            qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

static void tool_message(qr_ctx *c, uint32_t k, uint32_t b, uint32_t absorb_from, uint32_t absorb_to, bool groups_k,
                         bool tail) {
    const qblock *r = &c->t->msgs[k].blocks[b];
    qw *w = c->w;
    joiner j;
    j_init(&j, c);
    if (r->content_is_string) {
        j_add(&j, r->content_text);
    } else {
        for (uint32_t i = 0; i < r->nparts; i++) {
            if (r->parts[i].type == QB_TEXT) j_add(&j, r->parts[i].text);
            else qr_unsupported_part(c, k, b, i, "an image inside a tool result");
        }
    }
    bool dummy = false;
    for (uint32_t u = absorb_from; u < absorb_to; u++) {
        const qmsg *m = &c->t->msgs[u];
        for (uint32_t q = 0; q < m->nblocks; q++) {
            if (qr_is_instruction(m)) j_add(&j, qr_wrap_instruction(c, &m->blocks[q]));
            else if (m->blocks[q].type == QB_TEXT) j_add(&j, m->blocks[q].text);
            else qr_unsupported(c, u, (int32_t)q, "non-text user content after a tool message (strict template)");
        }
        j_groups(&j, u);
    }
    (void)dummy;
    if (groups_k) j_groups(&j, k);
    if (tail) j_groups(&j, QR_TAIL);
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "tool");
    qw_key(w, "content"); j_write(&j);
    qstr name = qr_tool_name_for(c, k, r->tool_call_id);
    if (name.len) { qw_key(w, "tool_name"); qw_qstr(w, name); }
    qw_obj_end(w);
}

/* Request parameters (docs/params.md): format and think after tools, stream
 * (false unless asked), then options (num_predict, temperature, top_p,
 * top_k, seed, stop). */
static void write_params(qr_ctx *c) {
    const qparams *p = c->params;
    qw *w = c->w;
    if (p->tool_choice != QP_TC_UNSET) qr_param_unsupported(c, "toolChoice", "/api/chat has no tool choice");
    if (p->parallel_tool_calls >= 0) qr_param_unsupported(c, "parallelToolCalls", "/api/chat has no such switch");
    if (qval_present(p->user)) qr_param_unsupported(c, "user", "/api/chat has no end-user field");
    if (qval_present(p->budget_tokens))
        qr_param_unsupported(c, "reasoning.budgetTokens", "think takes true/false or a level, not a budget");
    if (p->format == QP_RF_JSON) { qw_key(w, "format"); qw_strz(w, "json"); }
    else if (p->format == QP_RF_SCHEMA) { qw_key(w, "format"); qw_qval(w, p->format_schema); }
    if (qval_present(p->effort)) {
        qval e = p->effort;
        if (qj_str_eq(e.doc, e.idx, "none")) { qw_key(w, "think"); qw_bool(w, false); }
        else if (qj_str_eq(e.doc, e.idx, "low") || qj_str_eq(e.doc, e.idx, "medium") || qj_str_eq(e.doc, e.idx, "high")) {
            qw_key(w, "think"); qw_qval(w, e);
        } else {
            qr_param_unsupported(c, "reasoning.effort", "think takes none, low, medium or high");
        }
    }
    qw_key(w, "stream"); qw_bool(w, p->stream == 1);
    if (c->max_tokens || qval_present(p->temperature) || qval_present(p->top_p) || qval_present(p->top_k) ||
        qval_present(p->seed) || qval_present(p->stop)) {
        qw_key(w, "options");
        qw_obj_begin(w);
        if (c->max_tokens) { qw_key(w, "num_predict"); qw_int(w, c->max_tokens); }
        if (qval_present(p->temperature)) { qw_key(w, "temperature"); qw_qval(w, p->temperature); }
        if (qval_present(p->top_p)) { qw_key(w, "top_p"); qw_qval(w, p->top_p); }
        if (qval_present(p->top_k)) { qw_key(w, "top_k"); qw_qval(w, p->top_k); }
        if (qval_present(p->seed)) { qw_key(w, "seed"); qw_qval(w, p->seed); }
        if (qval_present(p->stop)) { qw_key(w, "stop"); qr_write_stop(c); }
        qw_obj_end(w);
    }
}

quire_status qr_encode_ollama(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    bool fold = qr_fold_system(c);
    bool strict = c->caps.tail == QTAIL_LAST_TOOL;
    bool tail_done = !qr_has_tail_user(c);
    qw_obj_begin(w);
    qw_key(w, "model"); qw_strz(w, c->model);
    qw_key(w, "messages");
    qw_arr_begin(w);
    uint32_t nwire = 0;
    if (!fold && qr_has_system(c)) {
        qw_obj_begin(w);
        qw_key(w, "role"); qw_strz(w, "system");
        qw_key(w, "content"); qw_qstr(w, qr_system_joined(c));
        qw_obj_end(w);
        nwire++;
    }
    if (fold && (t->nmsgs == 0 || t->msgs[0].role != QR_USER)) {
        qw_obj_begin(w);
        qw_key(w, "role"); qw_strz(w, "user");
        qw_key(w, "content"); qw_qstr(w, qr_system_joined(c));
        qw_obj_end(w);
        fold = false;
        nwire++;
    }
    for (uint32_t k = 0; k < t->nmsgs; k++) {
        const qmsg *m = &t->msgs[k];
        bool last = k + 1 == t->nmsgs;
        switch (m->role) {
        case QR_ASSISTANT:
            assistant_message(c, k);
            nwire++;
            group_message(c, k);
            break;
        case QR_TOOL: {
            uint32_t e = k + 1;
            while (e < t->nmsgs && t->msgs[e].role == QR_TOOL) e++;
            uint32_t u = e;
            if (strict)
                while (u < t->nmsgs && (t->msgs[u].role == QR_USER ||
                                        (qr_is_instruction(&t->msgs[u]) && c->caps.developer == QDEV_NONE)))
                    u++;
            for (uint32_t q = k; q < e; q++) {
                for (uint32_t b = 0; b < t->msgs[q].nblocks; b++) {
                    bool absorb = strict && q + 1 == e && b + 1 == t->msgs[q].nblocks;
                    tool_message(c, q, b, absorb ? e : 0, absorb ? u : 0, absorb, absorb && u == t->nmsgs && !tail_done);
                    nwire++;
                }
                if (!strict) group_message(c, q);
                dev_messages(c, q);
            }
            if (strict) {
                if (u > e) qr_event_adjusted(c, "merged_into_tool_message", e,
                                             "the template allows no user message right after a tool message");
                if (u == t->nmsgs) tail_done = true;
                for (uint32_t q = e; q < u; q++) dev_messages(c, q);
            }
            k = (strict ? u : e) - 1;
            continue;
        }
        case QR_SYSTEM: case QR_DEVELOPER:
            if (c->caps.developer != QDEV_NONE) {
                joiner j;
                j_init(&j, c);
                for (uint32_t b = 0; b < m->nblocks; b++) j_add(&j, m->blocks[b].text);
                qw_obj_begin(w);
                qw_key(w, "role"); qw_strz(w, "system");
                qw_key(w, "content"); j_write(&j);
                qw_obj_end(w);
                nwire++;
                break;
            }
            Q_FALLTHROUGH;
        case QR_USER: {
            bool tail_here = strict && last && !tail_done;
            user_message(c, k, &fold, strict, tail_here);
            if (tail_here) tail_done = true;
            nwire++;
            if (!strict) group_message(c, k);
            break;
        }
        }
        dev_messages(c, k);
    }
    if (!tail_done) { group_message(c, QR_TAIL); nwire++; }
    dev_messages(c, QR_TAIL);
    qw_arr_end(w);
    qr_write_function_tools(c);
    write_params(c);
    qw_obj_end(w);
    if (nwire == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/messages", "an Ollama request needs at least one message");
    return QUIRE_OK;
}
