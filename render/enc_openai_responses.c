/* OpenAI Responses encoder (dialect openai_responses).
 *
 * Key order: model, input, tools, max_output_tokens (only when given).
 * Input items, in transcript order:
 *   system prompt   {"type":"message","role":<systemRole>,"content":...} first
 *                   (or folded into the first user message);
 *   user            {"type":"message","role":"user","content": string | [input_text|input_image|input_file]}
 *   assistant text  {"type":"message","role":"assistant","content":"..."}, one per text block
 *                   (a block's providerOptions.openai_responses fields, e.g. phase, follow)
 *   tool call       {"type":"function_call","call_id","name","arguments":"<input JSON text>"}
 *                   (a custom call: {"type":"custom_tool_call","call_id","name","input":"<string>"},
 *                   its result a custom_tool_call_output)
 *   tool result     {"type":"function_call_output","call_id","output": string | [input_text|input_image]}
 *   opaque items of this dialect (encrypted reasoning) verbatim; thinking
 *   blocks have no item without an id and are dropped with an event;
 *   instructions    developer / system messages per the row, else wrapped user text.
 * Reminder user blocks: a separate user message after the function outputs. */
#include "render/wire.h"

static bool opaque_mine(const qr_ctx *c, const qblock *b) {
    return qstr_eq(b->provider, c->ro->provider) || qstr_eq(b->provider, "openai_responses");
}

/* File ids and provider tools: OpenAI's own ("openai" ids serve Chat and
 * Responses alike). */
static bool mine(const qr_ctx *c, qstr provider) {
    return qr_is_provider(c, provider) || qstr_eq(provider, "openai") || qstr_eq(provider, "openai_responses");
}

static void bp(qr_ctx *c, uint32_t mi, uint32_t bi) {
    if (c->caps.cache != QCACHE_BREAKPOINTS) return;
    const qr_mark *m = qr_mark_at(c, QRS_BLOCK, mi, bi);
    if (!m) return;
    qw_key(c->w, "prompt_cache_breakpoint");
    qr_write_cache_control(c, m);
}

static void input_text(qw *w, qstr s) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "input_text");
    qw_key(w, "text"); qw_qstr(w, s);
    qw_obj_end(w);
}

static void input_part(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi, bool mark) {
    qw *w = c->w;
    switch (b->type) {
    case QB_TEXT:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "input_text");
        qw_key(w, "text"); qw_qstr(w, b->text);
        if (mark) bp(c, mi, bi);
        qw_obj_end(w);
        if (qval_present(b->citations)) qr_drop_citations(c, mi, bi);
        return;
    case QB_IMAGE:
        if (qstr_present(b->url) && !c->caps.image_urls) { qr_unsupported(c, mi, (int32_t)bi, "an image by URL"); return; }
        if (qstr_present(b->file_id) && !mine(c, b->provider)) { qr_unsupported(c, mi, (int32_t)bi, "a file id of another provider"); return; }
        if (!qr_image_type_ok(c, b, mi, bi)) return;
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "input_image");
        if (qstr_present(b->file_id)) { qw_key(w, "file_id"); qw_qstr(w, b->file_id); }
        else {
            qw_key(w, "image_url");
            if (qstr_present(b->url)) qw_qstr(w, b->url); else qr_write_data_url(c, b->media_type, b->data);
        }
        qw_key(w, "detail");
        if (qstr_present(b->detail)) qw_qstr(w, b->detail); else qw_strz(w, "auto");
        if (mark) bp(c, mi, bi);
        qw_obj_end(w);
        return;
    case QB_DOCUMENT:
    case QB_FILE: {
        if (!c->caps.documents) { qr_unsupported(c, mi, (int32_t)bi, "a document block"); return; }
        if (qstr_present(b->file_id) && !mine(c, b->provider)) { qr_unsupported(c, mi, (int32_t)bi, "a file id of another provider"); return; }
        if (qstr_present(b->title) && qstr_present(b->filename) &&
            qr_unsupported(c, mi, (int32_t)bi, "a document's title next to its filename") && !c->ro->lossy)
            return;
        qstr fname = qstr_present(b->filename) ? b->filename : b->title;
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "input_file");
        if (qstr_present(b->file_id)) { qw_key(w, "file_id"); qw_qstr(w, b->file_id); }
        else {
            if (qstr_present(fname)) { qw_key(w, "filename"); qw_qstr(w, fname); }
            if (qstr_present(b->url)) { qw_key(w, "file_url"); qw_qstr(w, b->url); }
            else { qw_key(w, "file_data"); qr_write_data_url(c, b->media_type, b->data); }
        }
        if (mark) bp(c, mi, bi);
        qw_obj_end(w);
        return;
    }
    case QB_AUDIO:
        qr_unsupported(c, mi, (int32_t)bi, "an audio block");
        return;
    case QB_TOOL_CALL: case QB_TOOL_RESULT: case QB_THINKING: case QB_REDACTED_THINKING: case QB_OPAQUE:
    case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
        return;
    }
}

static bool user_groups_at(const qr_ctx *c, uint32_t k) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) return true;
    return false;
}

/* A user message holding the reminder blocks anchored at k. */
static void group_message(qr_ctx *c, uint32_t k) {
    if (!user_groups_at(c, k)) return;
    qw *w = c->w;
    uint32_t f, n = qr_groups_at(c, k, &f), users = 0, one = f;
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) { users++; one = g; }
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "message");
    qw_key(w, "role"); qw_strz(w, "user");
    qw_key(w, "content");
    if (users == 1 && c->caps.cache != QCACHE_BREAKPOINTS) {
        qw_qstr(w, c->groups[one].text);
    } else {
        qw_arr_begin(w);
        for (uint32_t g = f; g < f + n; g++)
            if (c->groups[g].slot != QSLOT_DEVELOPER) input_text(w, c->groups[g].text);
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

static void dev_messages(qr_ctx *c, uint32_t k) {
    qw *w = c->w;
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++) {
        if (c->groups[g].slot != QSLOT_DEVELOPER) continue;
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "message");
        qw_key(w, "role"); qw_strz(w, c->caps.developer == QDEV_DEVELOPER_ROLE ? "developer" : "system");
        qw_key(w, "content"); qw_qstr(w, c->groups[g].text);
        qw_obj_end(w);
    }
}

static void user_message_range(qr_ctx *c, uint32_t k, bool *fold, uint32_t b0, uint32_t b1);

/* A user message; opaque items of this dialect among its blocks (tool outputs
 * of other kinds, ...) are input items of their own, in place. */
static void user_message(qr_ctx *c, uint32_t k, bool *fold) {
    const qmsg *m = &c->t->msgs[k];
    uint32_t start = 0;
    if (m->nblocks == 0 && !*fold) return; /* left out by the provider rules (reported) */
    for (uint32_t b = 0; b <= m->nblocks; b++) {
        bool opq = b < m->nblocks && m->blocks[b].type == QB_OPAQUE;
        if (b < m->nblocks && !opq) continue;
        if (b > start || (b == m->nblocks && start == 0)) user_message_range(c, k, fold, start, b);
        if (opq) {
            if (opaque_mine(c, &m->blocks[b])) qr_write_as_given(c, m->blocks[b].item);
            else qr_drop_artefact(c, k, b, "opaque item of another provider");
        }
        start = b + 1;
    }
}

static void user_message_range(qr_ctx *c, uint32_t k, bool *fold, uint32_t b0, uint32_t b1) {
    const qmsg *m = &c->t->msgs[k];
    qw *w = c->w;
    bool force = c->caps.cache == QCACHE_BREAKPOINTS;
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "message");
    qw_key(w, "role"); qw_strz(w, "user");
    qw_key(w, "content");
    if (!*fold && !force && m->role == QR_USER && m->content_is_string && m->nblocks == 1 && m->blocks[0].type == QB_TEXT) {
        qw_qstr(w, m->blocks[0].text);
    } else {
        qw_arr_begin(w);
        if (*fold) { input_text(w, qr_system_joined(c)); *fold = false; }
        for (uint32_t b = b0; b < b1; b++) {
            if (qr_is_instruction(m)) input_text(w, qr_wrap_instruction(c, &m->blocks[b]));
            else input_part(c, &m->blocks[b], k, b, true);
        }
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

/* A block's providerOptions.openai_responses fields (message phase,
 * function_call namespace) written into its item after the fields quire
 * writes; a field quire writes itself is refused (it would be a duplicate). */
static void item_options(qr_ctx *c, const qblock *bl, uint32_t k, uint32_t b) {
    static const char *const taken[] = {"type", "role", "content", "call_id", "name", "arguments", "input"};
    if (!qval_present(bl->provider_options)) return;
    const qj_doc *d = bl->provider_options.doc;
    uint32_t o = qj_get(d, bl->provider_options.idx, "openai_responses");
    if (o == QJ_NONE || qj_type_of(d, o) != QJ_OBJECT) return;
    uint32_t key = o + 1;
    for (uint32_t i = 0; i < qj_at(d, o)->n; i++, key = qj_next(d, key + 1)) {
        bool dup = false;
        for (size_t t = 0; t < Q_COUNTOF(taken); t++) dup = dup || qj_str_eq(d, key, taken[t]);
        if (dup) { qr_unsupported(c, k, (int32_t)b, "a providerOptions field the item already has"); continue; }
        qw_key_esc(c->w, qj_at(d, key)->p, qj_at(d, key)->len);
        qw_node(c->w, d, key + 1);
    }
}

static void assistant_items(qr_ctx *c, uint32_t k) {
    const qmsg *m = &c->t->msgs[k];
    qw *w = c->w;
    for (uint32_t b = 0; b < m->nblocks; b++) {
        const qblock *bl = &m->blocks[b];
        switch (bl->type) {
        case QB_TEXT:
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "message");
            qw_key(w, "role"); qw_strz(w, "assistant");
            qw_key(w, "content"); qw_qstr(w, bl->text);
            item_options(c, bl, k, b);
            qw_obj_end(w);
            if (qval_present(bl->citations)) qr_drop_citations(c, k, b);
            break;
        case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
            qr_drop_artefact(c, k, b, "server tool block: Responses server tools travel as opaque items");
            break;
        case QB_AUDIO: case QB_FILE:
            qr_unsupported(c, k, (int32_t)b, "media in an assistant message");
            break;
        case QB_TOOL_CALL:
            if (bl->custom) { /* a freeform tool: its input string as given */
                qw_obj_begin(w);
                qw_key(w, "type"); qw_strz(w, "custom_tool_call");
                qw_key(w, "call_id"); qr_write_call_id(c, bl->id, k, true);
                qw_key(w, "name"); qr_write_tool_name(c, bl->name, k);
                qw_key(w, "input"); qw_qval(w, bl->input);
                item_options(c, bl, k, b);
                qw_obj_end(w);
                break;
            }
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "function_call");
            qw_key(w, "call_id"); qr_write_call_id(c, bl->id, k, true);
            qw_key(w, "name"); qr_write_tool_name(c, bl->name, k);
            qw_key(w, "arguments"); qr_write_value_as_string(c, bl->input);
            item_options(c, bl, k, b);
            qw_obj_end(w);
            break;
        case QB_OPAQUE:
            if (opaque_mine(c, bl)) qr_write_as_given(c, bl->item);
            else qr_drop_artefact(c, k, b, "opaque item of another provider");
            break;
        case QB_THINKING: case QB_REDACTED_THINKING:
            qr_drop_artefact(c, k, b, "thinking has no Responses item without an id (pass reasoning items as opaque)");
            break;
        case QB_IMAGE: case QB_DOCUMENT:
            qr_unsupported(c, k, (int32_t)b, "an image or document in an assistant message");
            break;
        case QB_TOOL_RESULT:
            break;
        }
    }
}

static void tool_outputs(qr_ctx *c, uint32_t k) {
    const qmsg *m = &c->t->msgs[k];
    qw *w = c->w;
    for (uint32_t b = 0; b < m->nblocks; b++) {
        const qblock *r = &m->blocks[b];
        const qblock *call = qr_call_for(c, k, r->tool_call_id);
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, call && call->custom ? "custom_tool_call_output" : "function_call_output");
        qw_key(w, "call_id"); qr_write_call_id(c, r->tool_call_id, k, false);
        qw_key(w, "output");
        bool marked = qr_mark_at(c, QRS_BLOCK, k, b) != NULL;
        if (r->content_is_string && !marked) {
            qw_qstr(w, r->content_text);
        } else if (r->content_is_string) {
            qw_arr_begin(w);
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "input_text");
            qw_key(w, "text"); qw_qstr(w, r->content_text);
            bp(c, k, b);
            qw_obj_end(w);
            qw_arr_end(w);
        } else {
            qw_arr_begin(w);
            for (uint32_t i = 0; i < r->nparts; i++) {
                if (r->parts[i].type == QB_IMAGE && !c->caps.tool_result_images) {
                    qr_unsupported_part(c, k, b, i, "an image inside a tool result");
                    continue;
                }
                input_part(c, &r->parts[i], k, b, false);
            }
            qw_arr_end(w);
        }
        qw_obj_end(w);
    }
}

/* Request parameters (docs/params.md), after tools and max_output_tokens:
 * temperature, top_p, tool_choice, parallel_tool_calls, text.format,
 * reasoning.effort, stream, user. */
static void write_params(qr_ctx *c) {
    const qparams *p = c->params;
    qw *w = c->w;
    if (qval_present(p->temperature) && !qr_param_above(c, "temperature", p->temperature, 2)) {
        qw_key(w, "temperature"); qw_qval(w, p->temperature);
    }
    if (qval_present(p->top_p)) { qw_key(w, "top_p"); qw_qval(w, p->top_p); }
    if (qval_present(p->top_k)) qr_param_unsupported(c, "topK", "the Responses API has no top_k");
    if (qval_present(p->stop)) qr_param_unsupported(c, "stop", "the Responses API has no stop sequences");
    if (qval_present(p->seed)) qr_param_unsupported(c, "seed", "the Responses API has no seed");
    if (p->tool_choice != QP_TC_UNSET) {
        qw_key(w, "tool_choice");
        switch (p->tool_choice) {
        case QP_TC_UNSET: case QP_TC_AUTO: qw_strz(w, "auto"); break;
        case QP_TC_NONE: qw_strz(w, "none"); break;
        case QP_TC_REQUIRED: qw_strz(w, "required"); break;
        case QP_TC_TOOL:
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "function");
            qw_key(w, "name"); qr_write_tool_name(c, qstr_node(p->tool_name.doc, p->tool_name.idx), QR_NAME_CHOICE);
            qw_obj_end(w);
            break;
        }
    }
    if (p->parallel_tool_calls >= 0) { qw_key(w, "parallel_tool_calls"); qw_bool(w, p->parallel_tool_calls == 1); }
    if (p->format != QP_RF_UNSET) {
        qw_key(w, "text");
        qw_obj_begin(w);
        qw_key(w, "format");
        qw_obj_begin(w);
        qw_key(w, "type");
        if (p->format == QP_RF_TEXT) qw_strz(w, "text");
        else if (p->format == QP_RF_JSON) qw_strz(w, "json_object");
        else {
            qw_strz(w, "json_schema");
            qw_key(w, "name"); qw_qval(w, p->format_name);
            qw_key(w, "schema"); qw_qval(w, p->format_schema);
            if (p->format_strict >= 0) { qw_key(w, "strict"); qw_bool(w, p->format_strict == 1); }
        }
        qw_obj_end(w);
        qw_obj_end(w);
    }
    if (qval_present(p->effort) && !qcaps_takes_effort(&c->caps, c->model)) {
        qr_param_unsupported(c, "reasoning.effort", "this model takes no reasoning effort");
    } else if (qval_present(p->effort)) {
        qw_key(w, "reasoning");
        qw_obj_begin(w);
        qw_key(w, "effort"); qw_qval(w, p->effort);
        qw_obj_end(w);
    }
    if (qval_present(p->budget_tokens))
        qr_param_unsupported(c, "reasoning.budgetTokens", "reasoning takes an effort level, not a token budget");
    if (p->stream >= 0) { qw_key(w, "stream"); qw_bool(w, p->stream == 1); }
    if (qval_present(p->user)) { qw_key(w, "user"); qw_qval(w, p->user); }
}

quire_status qr_encode_openai_responses(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    bool fold = qr_fold_system(c);
    qw_obj_begin(w);
    qw_key(w, "model"); qw_strz(w, c->model);
    qw_key(w, "input");
    qw_arr_begin(w);
    uint32_t nitems = 0;
    if (!fold && qr_has_system(c)) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "message");
        qw_key(w, "role"); qw_strz(w, c->caps.system_role ? c->caps.system_role : "system");
        qw_key(w, "content");
        if (c->caps.cache == QCACHE_BREAKPOINTS && t->has_system) {
            qr_write_system_parts(c, "input_text");
        } else {
            qw_qstr(w, qr_system_joined(c));
        }
        qw_obj_end(w);
        nitems++;
    }
    if (fold && (t->nmsgs == 0 || t->msgs[0].role != QR_USER)) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "message");
        qw_key(w, "role"); qw_strz(w, "user");
        qw_key(w, "content"); qw_qstr(w, qr_system_joined(c));
        qw_obj_end(w);
        fold = false;
        nitems++;
    }
    for (uint32_t k = 0; k < t->nmsgs; k++) {
        const qmsg *m = &t->msgs[k];
        switch (m->role) {
        case QR_ASSISTANT: assistant_items(c, k); break;
        case QR_TOOL: tool_outputs(c, k); break;
        case QR_SYSTEM: case QR_DEVELOPER:
            if (c->caps.developer != QDEV_NONE) {
                /* one instruction message; its blocks are its parts */
                qw_obj_begin(w);
                qw_key(w, "type"); qw_strz(w, "message");
                qw_key(w, "role"); qw_strz(w, c->caps.developer == QDEV_DEVELOPER_ROLE ? "developer" : "system");
                qw_key(w, "content");
                if (m->nblocks == 1 && m->content_is_string) {
                    qw_qstr(w, m->blocks[0].text);
                } else {
                    qw_arr_begin(w);
                    for (uint32_t b = 0; b < m->nblocks; b++) input_text(w, m->blocks[b].text);
                    qw_arr_end(w);
                }
                qw_obj_end(w);
                break;
            }
            user_message(c, k, &fold);
            break;
        case QR_USER: user_message(c, k, &fold); break;
        }
        nitems++;
        group_message(c, k);
        dev_messages(c, k);
    }
    group_message(c, QR_TAIL);
    dev_messages(c, QR_TAIL);
    if (c->ngroups) nitems++;
    qw_arr_end(w);
    if (t->has_tools && t->ntools) {
        qw_key(w, "tools");
        qw_arr_begin(w);
        for (uint32_t i = 0; i < t->ntools; i++) {
            const qtool *tl = &t->tools[i];
            if (tl->kind == QTK_PROVIDER) {
                if (mine(c, tl->provider)) qr_write_as_given(c, tl->item);
                else qr_tool_unsupported(c, i, "a provider tool of another provider");
                continue;
            }
            if (tl->kind == QTK_CUSTOM) {
                qw_obj_begin(w);
                qw_key(w, "type"); qw_strz(w, "custom");
                qw_key(w, "name"); qr_write_tool_name(c, tl->name, QR_NAME_TOOLS);
                if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
                if (qval_present(tl->format)) { qw_key(w, "format"); qw_qval(w, tl->format); }
                qw_obj_end(w);
                continue;
            }
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "function");
            qw_key(w, "name"); qr_write_tool_name(c, tl->name, QR_NAME_TOOLS);
            if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
            qw_key(w, "parameters"); qw_qval(w, tl->input_schema);
            qw_key(w, "strict"); qw_bool(w, false);
            qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    if (c->max_tokens && c->caps.max_tokens_param) { qw_key(w, c->caps.max_tokens_param); qw_int(w, c->max_tokens); }
    write_params(c);
    qw_obj_end(w);
    if (nitems == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/input", "a Responses request needs at least one input item");
    return QUIRE_OK;
}
