/* Gemini generateContent encoder (dialect gemini; Gemini and Gemma).
 *
 * Key order: systemInstruction, tools, contents, generationConfig (only when
 * a max is given). The model is in the URL, not the body.
 * Contents: roles "user" and "model"; consecutive assistant messages merge
 * into one model content; the results of one model turn's calls form one
 * separate user content of functionResponse parts (in call order as given),
 * never mixed with text; the first content is a user content (the folded
 * system prompt on rows without a system instruction, else a placeholder).
 * Parts: text, inlineData, fileData, functionCall {id, name, args},
 * functionResponse {id, name, response: a JSON object result as it is, else
 * {"output"|"error": ...}; parts: inlineData images on rows with toolResultImages},
 * thinking as {"text", "thought": true, "thoughtSignature"}.
 * Reminder user blocks: a separate user content at the tail. */
#include "render/wire.h"

#include <string.h>

static void text_part(qw *w, qstr s) {
    qw_obj_begin(w);
    qw_key(w, "text"); qw_qstr(w, s);
    qw_obj_end(w);
}

/* {"inlineData": {mimeType, data}}: a media block's base64 bytes. */
static void inline_part(qw *w, const qblock *p) {
    qw_obj_begin(w);
    qw_key(w, "inlineData");
    qw_obj_begin(w);
    qw_key(w, "mimeType"); qw_qstr(w, p->media_type);
    qw_key(w, "data"); qw_qstr(w, p->data);
    qw_obj_end(w);
    qw_obj_end(w);
}

static void media_part(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi) {
    qw *w = c->w;
    if (b->type == QB_DOCUMENT && !c->caps.documents) { qr_unsupported(c, mi, (int32_t)bi, "a document block"); return; }
    if (qstr_present(b->url) && !c->caps.image_urls) { qr_unsupported(c, mi, (int32_t)bi, "a block by URL"); return; }
    /* a Gemini file id is the file's URI (Files API): fileData.fileUri */
    if (qstr_present(b->file_id) && !qstr_eq(b->provider, "gemini") && !qr_media_ok(c, b, mi, bi)) return;
    if ((qstr_present(b->filename) || qstr_present(b->title)) &&
        qr_unsupported(c, mi, (int32_t)bi, "a document's title or filename (Gemini parts carry none)") && !c->ro->lossy)
        return;
    if (!qstr_present(b->url) && !qstr_present(b->file_id)) { inline_part(w, b); return; }
    qw_obj_begin(w);
    qw_key(w, "fileData");
    qw_obj_begin(w);
    if (qstr_present(b->media_type)) { qw_key(w, "mimeType"); qw_qstr(w, b->media_type); }
    qw_key(w, "fileUri"); qw_qstr(w, qstr_present(b->url) ? b->url : b->file_id);
    qw_obj_end(w);
    qw_obj_end(w);
}

static void user_part(qr_ctx *c, const qmsg *m, const qblock *b, uint32_t mi, uint32_t bi) {
    if (qr_is_instruction(m)) { text_part(c->w, qr_wrap_instruction(c, b)); return; }
    switch (b->type) {
    case QB_TEXT:
        text_part(c->w, b->text);
        if (qval_present(b->citations)) qr_drop_citations(c, mi, bi);
        return;
    case QB_IMAGE: case QB_DOCUMENT: case QB_AUDIO: case QB_FILE: media_part(c, b, mi, bi); return;
    case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT: return; /* assistant-only blocks */
    case QB_OPAQUE:
        if (qstr_eq(b->provider, c->ro->provider) || qstr_eq(b->provider, "gemini")) qr_write_as_given(c, b->item);
        else qr_drop_artefact(c, mi, bi, "opaque item of another provider");
        return;
    case QB_TOOL_CALL: case QB_TOOL_RESULT: case QB_THINKING: case QB_REDACTED_THINKING: return;
    }
}

/* A signature carried by an empty thinking block right before a text or call
 * part (how a signed Gemini part is held in a transcript). */
static qstr pending_sig(const qmsg *m, uint32_t bi) {
    if (bi == 0) return (qstr){0};
    const qblock *p = &m->blocks[bi - 1];
    if (p->type == QB_THINKING && p->text.len == 0 && qstr_present(p->signature)) return p->signature;
    return (qstr){0};
}
static bool is_carrier(const qmsg *m, uint32_t bi) {
    const qblock *b = &m->blocks[bi];
    if (b->type != QB_THINKING || b->text.len != 0 || !qstr_present(b->signature) || bi + 1 >= m->nblocks) return false;
    qblock_type nt = m->blocks[bi + 1].type;
    return nt == QB_TEXT || nt == QB_TOOL_CALL;
}
static void sig(qw *w, qstr s) {
    if (!qstr_present(s)) return;
    qw_key(w, "thoughtSignature");
    qw_qstr(w, s);
}

/* Gemini 3 and later reject a functionCall of the current turn (the model
 * messages after the last user message) without its thoughtSignature; only the
 * first call of a message needs one (parallel calls share it). A call quire has
 * no signature for (another model's, an imported or edited history) gets the
 * sentinel Google documents for that case (docs/providers.md, Provider rules). */
#define QR_GEMINI_SKIP_SIGNATURE "skip_thought_signature_validator"

bool qr_gemini_signs_calls(const char *model) {
    return model && strncmp(model, "gemini-", 7) == 0 && model[7] >= '3' && model[7] <= '9';
}

static bool needs_placeholder(const qr_ctx *c, const qmsg *m, uint32_t bi, bool current_turn) {
    if (!current_turn || !qr_gemini_signs_calls(c->model)) return false;
    for (uint32_t k = 0; k < bi; k++)
        if (m->blocks[k].type == QB_TOOL_CALL) return false; /* not the first call of the message */
    return true;
}

/* current_turn: m comes after the transcript's last user message. */
static void model_part(qr_ctx *c, const qmsg *m, uint32_t mi, uint32_t bi, bool current_turn) {
    qw *w = c->w;
    const qblock *b = &m->blocks[bi];
    if (is_carrier(m, bi)) return;
    switch (b->type) {
    case QB_TEXT:
        qw_obj_begin(w);
        qw_key(w, "text"); qw_qstr(w, b->text);
        sig(w, pending_sig(m, bi));
        qw_obj_end(w);
        if (qval_present(b->citations)) qr_drop_citations(c, mi, bi);
        return;
    case QB_IMAGE: case QB_DOCUMENT: case QB_AUDIO: case QB_FILE:
        qr_unsupported(c, mi, (int32_t)bi, "media in a model turn");
        return;
    case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
        qr_drop_artefact(c, mi, bi, "server tool block: no form in this dialect");
        return;
    case QB_TOOL_CALL:
        if (!b->custom && qj_type_of(b->input.doc, b->input.idx) != QJ_OBJECT) {
            qr_unsupported(c, mi, (int32_t)bi, "tool call input that is not a JSON object (functionCall.args)");
            return;
        }
        qw_obj_begin(w);
        qw_key(w, "functionCall");
        qw_obj_begin(w);
        qw_key(w, "id"); qw_qstr(w, b->id);
        qw_key(w, "name"); qr_write_tool_name(c, b->name, mi);
        qw_key(w, "args"); qr_write_tool_input(c, b);
        qw_obj_end(w);
        if (qstr_present(pending_sig(m, bi))) sig(w, pending_sig(m, bi));
        else if (needs_placeholder(c, m, bi, current_turn)) {
            qw_key(w, "thoughtSignature"); qw_strz(w, QR_GEMINI_SKIP_SIGNATURE);
            qr_event_adjusted(c, "thought_signature_placeholder", mi,
                              "a function call of the current turn has no thought signature: Gemini 3 and later "
                              "need one, so it carries the documented skip_thought_signature_validator value");
        }
        qw_obj_end(w);
        return;
    case QB_THINKING:
        if (!c->caps.thinking) { qr_drop_artefact(c, mi, bi, "thinking block: the row has no thinking"); return; }
        qw_obj_begin(w);
        qw_key(w, "text"); qw_qstr(w, b->text);
        qw_key(w, "thought"); qw_bool(w, true);
        if (qstr_present(b->signature)) { qw_key(w, "thoughtSignature"); qw_qstr(w, b->signature); }
        qw_obj_end(w);
        return;
    case QB_REDACTED_THINKING:
        qr_drop_artefact(c, mi, bi, "redactedThinking has no Gemini form");
        return;
    case QB_OPAQUE:
        if (qstr_eq(b->provider, c->ro->provider) || qstr_eq(b->provider, "gemini")) {
            qr_write_as_given(c, b->item);
            return;
        }
        qr_drop_artefact(c, mi, bi, "opaque item of another provider");
        return;
    case QB_TOOL_RESULT:
        return;
    }
}

/* Whether model_part writes a part for block bi (it reports every drop). */
static bool model_part_renders(const qr_ctx *c, const qmsg *m, uint32_t bi) {
    const qblock *b = &m->blocks[bi];
    if (is_carrier(m, bi)) return false;
    switch (b->type) {
    case QB_TEXT: return true;
    case QB_TOOL_CALL: return b->custom || qj_type_of(b->input.doc, b->input.idx) == QJ_OBJECT;
    case QB_THINKING: return c->caps.thinking;
    case QB_OPAQUE: return qstr_eq(b->provider, c->ro->provider) || qstr_eq(b->provider, "gemini");
    case QB_IMAGE: case QB_DOCUMENT: case QB_REDACTED_THINKING: case QB_TOOL_RESULT: return false;
    case QB_AUDIO: case QB_FILE: case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT: return false;
    }
    return false;
}

/* Whether an image of a tool result goes into functionResponse.parts: rows
 * with toolResultImages (Gemini 3 and later), base64 data only (a
 * FunctionResponsePart holds inline data, no file reference). */
static bool response_image_ok(const qr_ctx *c, const qblock *p) {
    return c->caps.tool_result_images && qstr_present(p->data);
}

/* Rows without functionResponse.parts (Gemini 2.x): a base64 image of a tool
 * result is an inlineData part right after the functionResponse part, in the
 * same user content, which is what Gemini CLI sends for a read_file of an
 * image (observed in its chat recordings). */
static bool image_beside_ok(const qr_ctx *c, const qblock *p) {
    return !c->caps.tool_result_images && qstr_present(p->data);
}

/* functionResponse.response is a JSON object (a protobuf Struct): a JSON
 * object result goes as that object ({"error": object} for an error), a text
 * result as {"output"|"error": text} (several text parts: an array of them);
 * images follow in functionResponse.parts where the row takes them. */
static void response_part(qr_ctx *c, const qblock *r, uint32_t mi, uint32_t bi) {
    qw *w = c->w;
    qw_obj_begin(w);
    qw_key(w, "functionResponse");
    qw_obj_begin(w);
    qw_key(w, "id"); qw_qstr(w, r->tool_call_id);
    qw_key(w, "name"); qr_write_tool_name(c, qr_tool_name_for(c, mi, r->tool_call_id), mi);
    qw_key(w, "response");
    uint32_t ntext = 0, nimg = 0;
    if (qval_present(r->content_json) && r->is_error != 1) {
        qw_qval(w, r->content_json);
    } else {
        qw_obj_begin(w);
        qw_key(w, r->is_error == 1 ? "error" : "output");
        if (qval_present(r->content_json)) {
            qw_qval(w, r->content_json);
        } else if (r->content_is_string) {
            qw_qstr(w, r->content_text);
        } else {
            for (uint32_t i = 0; i < r->nparts; i++) if (r->parts[i].type == QB_TEXT) ntext++;
            if (ntext == 1) {
                for (uint32_t i = 0; i < r->nparts; i++)
                    if (r->parts[i].type == QB_TEXT) qw_qstr(w, r->parts[i].text);
            } else {
                qw_arr_begin(w);
                for (uint32_t i = 0; i < r->nparts; i++)
                    if (r->parts[i].type == QB_TEXT) qw_qstr(w, r->parts[i].text);
                qw_arr_end(w);
            }
        }
        qw_obj_end(w);
    }
    uint32_t nbeside = 0;
    for (uint32_t i = 0; !r->content_is_string && i < r->nparts; i++) {
        const qblock *p = &r->parts[i];
        if (p->type != QB_IMAGE) continue;
        if (response_image_ok(c, p)) nimg++;
        else if (image_beside_ok(c, p)) nbeside++;
        else qr_unsupported_part(c, mi, bi, i, "an image by URL or file id inside a tool result");
    }
    if (nimg) { /* never an empty parts array */
        qw_key(w, "parts");
        qw_arr_begin(w);
        for (uint32_t i = 0; i < r->nparts; i++) {
            const qblock *p = &r->parts[i];
            if (p->type == QB_IMAGE && response_image_ok(c, p)) inline_part(w, p);
        }
        qw_arr_end(w);
    }
    qw_obj_end(w);
    qw_obj_end(w);
    /* rows without functionResponse.parts: the images follow the response as
     * parts of the same content */
    for (uint32_t i = 0; nbeside && i < r->nparts; i++) {
        const qblock *p = &r->parts[i];
        if (p->type == QB_IMAGE && image_beside_ok(c, p)) inline_part(w, p);
    }
}

static bool user_groups_at(const qr_ctx *c, uint32_t k) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) return true;
    return false;
}

static void group_content(qr_ctx *c, uint32_t k) {
    if (!user_groups_at(c, k)) return;
    qw *w = c->w;
    uint32_t f, n = qr_groups_at(c, k, &f);
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "user");
    qw_key(w, "parts");
    qw_arr_begin(w);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) text_part(w, c->groups[g].text);
    qw_arr_end(w);
    qw_obj_end(w);
}

static void content_begin(qw *w, const char *role) {
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, role);
    qw_key(w, "parts");
    qw_arr_begin(w);
}
static void content_end(qw *w) {
    qw_arr_end(w);
    qw_obj_end(w);
}

/* Request parameters (docs/params.md): toolConfig after tools; the sampling
 * fields, output format and thinking budget in generationConfig (proto field
 * order); stream is the path (:streamGenerateContent?alt=sse), not a field. */
static void write_tool_config(qr_ctx *c) {
    const qparams *p = c->params;
    qw *w = c->w;
    if (p->parallel_tool_calls >= 0)
        qr_param_unsupported(c, "parallelToolCalls", "generateContent has no switch for parallel function calls");
    if (p->tool_choice == QP_TC_UNSET) return;
    qw_key(w, "toolConfig");
    qw_obj_begin(w);
    qw_key(w, "functionCallingConfig");
    qw_obj_begin(w);
    qw_key(w, "mode");
    qw_strz(w, p->tool_choice == QP_TC_AUTO ? "AUTO" : p->tool_choice == QP_TC_NONE ? "NONE" : "ANY");
    if (p->tool_choice == QP_TC_TOOL) {
        qw_key(w, "allowedFunctionNames");
        qw_arr_begin(w);
        qr_write_tool_name(c, qstr_node(p->tool_name.doc, p->tool_name.idx), QR_NAME_CHOICE);
        qw_arr_end(w);
    }
    qw_obj_end(w);
    qw_obj_end(w);
}

static void write_generation_config(qr_ctx *c) {
    const qparams *p = c->params;
    qw *w = c->w;
    if (qval_present(p->user)) qr_param_unsupported(c, "user", "generateContent has no end-user field");
    if (qval_present(p->effort))
        qr_param_unsupported(c, "reasoning.effort", "thinkingConfig takes a token budget (reasoning budgetTokens)");
    bool stop = qval_present(p->stop);
    if (stop && qj_type_of(p->stop.doc, p->stop.idx) == QJ_ARRAY && qj_at(p->stop.doc, p->stop.idx)->n > 5) {
        qr_param_unsupported(c, "stop", "at most 5 stop sequences");
        stop = false;
    }
    bool temp = qval_present(p->temperature) && !qr_param_above(c, "temperature", p->temperature, 2);
    if (!c->max_tokens && !stop && !temp && !qval_present(p->top_p) && !qval_present(p->top_k) &&
        !qval_present(p->seed) && p->format == QP_RF_UNSET && !qval_present(p->budget_tokens))
        return;
    qw_key(w, "generationConfig");
    qw_obj_begin(w);
    if (stop) { qw_key(w, "stopSequences"); qr_write_stop(c); }
    if (c->max_tokens) { qw_key(w, "maxOutputTokens"); qw_int(w, c->max_tokens); }
    if (temp) { qw_key(w, "temperature"); qw_qval(w, p->temperature); }
    if (qval_present(p->top_p)) { qw_key(w, "topP"); qw_qval(w, p->top_p); }
    if (qval_present(p->top_k)) { qw_key(w, "topK"); qw_qval(w, p->top_k); }
    if (qval_present(p->seed)) { qw_key(w, "seed"); qw_qval(w, p->seed); }
    if (p->format != QP_RF_UNSET) {
        qw_key(w, "responseMimeType"); qw_strz(w, p->format == QP_RF_TEXT ? "text/plain" : "application/json");
        if (p->format == QP_RF_SCHEMA) { qw_key(w, "responseJsonSchema"); qw_qval(w, p->format_schema); }
    }
    if (qval_present(p->budget_tokens)) {
        qw_key(w, "thinkingConfig");
        qw_obj_begin(w);
        qw_key(w, "thinkingBudget"); qw_qval(w, p->budget_tokens);
        qw_obj_end(w);
    }
    qw_obj_end(w);
}

quire_status qr_encode_gemini(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    bool fold = qr_fold_system(c);
    qw_obj_begin(w);
    if (!fold && qr_has_system(c)) {
        qw_key(w, "systemInstruction");
        qw_obj_begin(w);
        qw_key(w, "parts");
        qw_arr_begin(w);
        for (uint32_t i = 0; t->has_system && i < t->nsystem; i++) text_part(w, t->system[i].text);
        if (qstr_present(c->sys_extra)) text_part(w, c->sys_extra);
        qw_arr_end(w);
        qw_obj_end(w);
    }
    if (t->has_tools && t->ntools) {
        qw_key(w, "tools");
        qw_arr_begin(w);
        /* provider tools (googleSearch, codeExecution, ...) are their own Tool objects */
        uint32_t nfn = 0;
        for (uint32_t i = 0; i < t->ntools; i++) {
            const qtool *tl = &t->tools[i];
            if (tl->kind == QTK_FUNCTION) nfn++;
            else if (tl->kind == QTK_CUSTOM) qr_tool_unsupported(c, i, "a custom (freeform) tool");
            else if (qr_is_provider(c, tl->provider)) qr_write_as_given(c, tl->item);
            else qr_tool_unsupported(c, i, "a provider tool of another provider");
        }
        if (nfn) {
        qw_obj_begin(w);
        qw_key(w, "functionDeclarations");
        qw_arr_begin(w);
        for (uint32_t i = 0; i < t->ntools; i++) {
            const qtool *tl = &t->tools[i];
            if (tl->kind != QTK_FUNCTION) continue;
            qw_obj_begin(w);
            qw_key(w, "name"); qr_write_tool_name(c, tl->name, QR_NAME_TOOLS);
            if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
            qw_key(w, "parametersJsonSchema"); qw_qval(w, tl->input_schema);
            qw_obj_end(w);
        }
        qw_arr_end(w);
        qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    write_tool_config(c);
    qw_key(w, "contents");
    qw_arr_begin(w);
    uint32_t ncontents = 0;
    uint32_t k0 = 0; /* the first message that writes a content (the provider rules may have emptied some) */
    while (k0 < t->nmsgs && t->msgs[k0].nblocks == 0) k0++;
    if (t->nmsgs == 0 || k0 == t->nmsgs || t->msgs[k0].role == QR_ASSISTANT || t->msgs[k0].role == QR_TOOL) {
        if (fold || t->nmsgs > 0) {
            content_begin(w, "user");
            if (fold) { text_part(w, qr_system_joined(c)); fold = false; }
            else {
                text_part(w, qstr_lit("(continued)"));
                qr_event_adjusted(c, "inserted_user_turn", 0, "the first content must be a user content");
            }
            content_end(w);
            ncontents++;
        }
    }
    uint32_t last_user = UINT32_MAX; /* the current turn: the messages after it */
    for (uint32_t k = 0; k < t->nmsgs; k++)
        if (t->msgs[k].role == QR_USER) last_user = k;
    for (uint32_t k = 0; k < t->nmsgs;) {
        const qmsg *m = &t->msgs[k];
        uint32_t e = k + 1;
        if (m->role == QR_ASSISTANT) {
            /* consecutive assistant messages form one model content */
            while (e < t->nmsgs && t->msgs[e].role == QR_ASSISTANT && !user_groups_at(c, e - 1)) e++;
            bool any = false;
            for (uint32_t q = k; q < e && !any; q++)
                for (uint32_t b = 0; b < t->msgs[q].nblocks && !any; b++) any = model_part_renders(c, &t->msgs[q], b);
            if (!any) { /* nothing Gemini can carry: report the drops, write no empty content */
                for (uint32_t q = k; q < e; q++)
                    for (uint32_t b = 0; b < t->msgs[q].nblocks; b++) model_part(c, &t->msgs[q], q, b, q > last_user || last_user == UINT32_MAX);
                group_content(c, e - 1);
                k = e;
                continue;
            }
            content_begin(w, "model");
            for (uint32_t q = k; q < e; q++)
                for (uint32_t b = 0; b < t->msgs[q].nblocks; b++) model_part(c, &t->msgs[q], q, b, q > last_user || last_user == UINT32_MAX);
            content_end(w);
        } else if (m->role == QR_TOOL) {
            /* the results of one model turn: one content of functionResponse parts */
            while (e < t->nmsgs && t->msgs[e].role == QR_TOOL && !user_groups_at(c, e - 1)) e++;
            content_begin(w, "user");
            for (uint32_t q = k; q < e; q++)
                for (uint32_t b = 0; b < t->msgs[q].nblocks; b++) response_part(c, &t->msgs[q].blocks[b], q, b);
            content_end(w);
        } else if (m->nblocks == 0 && !fold) {
            /* left out by the provider rules (reported): no empty content */
            group_content(c, e - 1);
            k = e;
            continue;
        } else {
            content_begin(w, "user");
            if (fold) { text_part(w, qr_system_joined(c)); fold = false; }
            for (uint32_t b = 0; b < m->nblocks; b++) user_part(c, m, &m->blocks[b], k, b);
            content_end(w);
        }
        ncontents++;
        group_content(c, e - 1);
        k = e;
    }
    if (user_groups_at(c, QR_TAIL)) { group_content(c, QR_TAIL); ncontents++; }
    qw_arr_end(w);
    write_generation_config(c);
    qw_obj_end(w);
    if (ncontents == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/contents", "a Gemini request needs at least one content");
    return QUIRE_OK;
}
