/* OpenAI Chat Completions encoder (dialect openai_chat; also DeepSeek and
 * OpenAI-compatible servers) and Mistral chat (dialect mistral): the two share
 * the message model, with these differences (dialect rules, not providers):
 *   mistral: tool messages carry the tool "name"; images are
 *     {"type":"image_url","image_url":URL}; documents are document_url chunks;
 *     an assistant message without text has no "content"; a final assistant
 *     message gets "prefix": true (Mistral's prefill form).
 *
 * Key order: model, messages, tools, <max tokens param> (only when given or
 * the row has a default).
 * Wire rules: system prompt first (role from the row: system | developer) or
 * folded into the first user message; each toolResult its own tool message,
 * right after the assistant message with the calls; on rows with tailBlock
 * last_tool_message, no user message follows a tool message: user content
 * after tool messages (transcript text, wrapped instructions, reminder
 * blocks) joins the last tool message as text parts, and user and tool
 * contents are always arrays so that appending keeps earlier bytes. */
#include "render/wire.h"
#include "render/memo.h"

#include <stdio.h>

typedef struct cctx {
    qr_ctx *c;
    bool mistral;
    bool force_array;  /* user/tool contents always arrays */
    bool fold;         /* system prompt folded into the first user message (pending) */
} cctx;

static void breakpoint(cctx *x, uint32_t mi, uint32_t bi) {
    if (x->c->caps.cache != QCACHE_BREAKPOINTS) return;
    const qr_mark *m = qr_mark_at(x->c, QRS_BLOCK, mi, bi);
    if (!m) return;
    qw_key(x->c->w, "prompt_cache_breakpoint");
    qr_write_cache_control(x->c, m);
}

static void text_part(qw *w, qstr s) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text"); qw_qstr(w, s);
    qw_obj_end(w);
}

static void url_value(cctx *x, const qblock *b) {
    if (qstr_present(b->url)) qw_qstr(x->c->w, b->url);
    else qr_write_data_url(x->c, b->media_type, b->data);
}

/* One user content part (text, image, document). */
static void user_part(cctx *x, const qblock *b, uint32_t mi, uint32_t bi, bool in_tool) {
    qr_ctx *c = x->c;
    qw *w = c->w;
    switch (b->type) {
    case QB_TEXT:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "text");
        qw_key(w, "text"); qw_qstr(w, b->text);
        breakpoint(x, mi, bi);
        qw_obj_end(w);
        if (qval_present(b->citations)) qr_drop_citations(c, mi, bi);
        return;
    case QB_IMAGE:
        if (in_tool && !c->caps.tool_result_images) { qr_unsupported(c, mi, (int32_t)bi, "an image inside a tool message"); return; }
        if (qstr_present(b->url) && !c->caps.image_urls) { qr_unsupported(c, mi, (int32_t)bi, "an image by URL"); return; }
        if (qstr_present(b->file_id)) { qr_unsupported(c, mi, (int32_t)bi, "an image by file id (image_url takes a URL)"); return; }
        if (!qr_image_type_ok(c, b, mi, bi)) return;
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "image_url");
        qw_key(w, "image_url");
        if (x->mistral) {
            url_value(x, b);
        } else {
            qw_obj_begin(w);
            qw_key(w, "url"); url_value(x, b);
            if (qstr_present(b->detail) && !qstr_eq(b->detail, "original")) { qw_key(w, "detail"); qw_qstr(w, b->detail); }
            qw_obj_end(w);
        }
        breakpoint(x, mi, bi);
        qw_obj_end(w);
        return;
    case QB_AUDIO: {
        /* input_audio {data, format}: base64 WAV or MP3 only */
        const char *fmt = qstr_eq(b->media_type, "audio/wav") || qstr_eq(b->media_type, "audio/x-wav") ? "wav"
                        : qstr_eq(b->media_type, "audio/mpeg") || qstr_eq(b->media_type, "audio/mp3") ? "mp3" : NULL;
        if (x->mistral || in_tool) { qr_unsupported(c, mi, (int32_t)bi, "an audio block"); return; }
        if (!qstr_present(b->data)) { qr_unsupported(c, mi, (int32_t)bi, "audio by URL or file id (input_audio takes base64 data)"); return; }
        if (!fmt) { qr_unsupported(c, mi, (int32_t)bi, "audio of this media type (input_audio takes WAV or MP3)"); return; }
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "input_audio");
        qw_key(w, "input_audio");
        qw_obj_begin(w);
        qw_key(w, "data"); qw_qstr(w, b->data);
        qw_key(w, "format"); qw_strz(w, fmt);
        qw_obj_end(w);
        breakpoint(x, mi, bi);
        qw_obj_end(w);
        return;
    }
    case QB_FILE:
        if (x->mistral) { qr_unsupported(c, mi, (int32_t)bi, "a file block"); return; }
        Q_FALLTHROUGH; /* a file part like a document */
    case QB_DOCUMENT:
        if (!c->caps.documents || in_tool) { qr_unsupported(c, mi, (int32_t)bi, "a document block"); return; }
        if (x->mistral && qstr_present(b->file_id)) { qr_unsupported(c, mi, (int32_t)bi, "a document by file id"); return; }
        if (x->mistral && qstr_present(b->title) && qstr_present(b->filename) &&
            qr_unsupported(c, mi, (int32_t)bi, "a document's filename next to its title") && !c->ro->lossy)
            return;
        if (x->mistral) {
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "document_url");
            qw_key(w, "document_url"); url_value(x, b);
            qstr dn = qstr_present(b->title) ? b->title : b->filename;
            if (qstr_present(dn)) { qw_key(w, "document_name"); qw_qstr(w, dn); }
            qw_obj_end(w);
            return;
        }
        if (qstr_present(b->url)) { qr_unsupported(c, mi, (int32_t)bi, "a document by URL"); return; }
        if (!qr_media_ok(c, b, mi, bi)) return;
        if (qstr_present(b->title) && qstr_present(b->filename) &&
            qr_unsupported(c, mi, (int32_t)bi, "a document's title next to its filename") && !c->ro->lossy)
            return;
        if (!qstr_present(b->file_id) && !qstr_eq(b->media_type, "application/pdf")) {
            qr_unsupported(c, mi, (int32_t)bi, "a document that is not application/pdf (Chat files are PDFs)");
            return;
        }
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "file");
        qw_key(w, "file");
        qw_obj_begin(w);
        if (qstr_present(b->file_id)) {
            qw_key(w, "file_id"); qw_qstr(w, b->file_id);
        } else {
            qw_key(w, "filename"); /* required with file_data: the block's, else its title, else derived */
            qstr fname = qstr_present(b->filename) ? b->filename : b->title;
            if (qstr_present(fname)) qw_qstr(w, fname);
            else {
                char nm[48];
                snprintf(nm, sizeof nm, "document-%u-%u.pdf", mi < c->t->nmsgs ? c->t->msgs[mi].src_index : mi, bi);
                qw_strz(w, nm);
            }
            qw_key(w, "file_data"); qr_write_data_url(c, b->media_type, b->data);
        }
        qw_obj_end(w);
        breakpoint(x, mi, bi);
        qw_obj_end(w);
        return;
    case QB_OPAQUE:
        qr_drop_artefact(c, mi, bi, "opaque item: no form in this dialect");
        return;
    case QB_TOOL_CALL: case QB_TOOL_RESULT: case QB_THINKING: case QB_REDACTED_THINKING:
    case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
        return;
    }
}

static void user_groups(cctx *x, uint32_t k) {
    uint32_t f, n = qr_groups_at(x->c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (x->c->groups[g].slot != QSLOT_DEVELOPER) text_part(x->c->w, x->c->groups[g].text);
}
static bool has_user_groups(const qr_ctx *c, uint32_t k) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) return true;
    return false;
}

static void dev_groups(cctx *x, uint32_t k) {
    qr_ctx *c = x->c;
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++) {
        if (c->groups[g].slot != QSLOT_DEVELOPER) continue;
        qw_obj_begin(c->w);
        qw_key(c->w, "role"); qw_strz(c->w, c->caps.developer == QDEV_DEVELOPER_ROLE ? "developer" : "system");
        qw_key(c->w, "content"); qw_qstr(c->w, c->groups[g].text);
        qw_obj_end(c->w);
    }
}

/* The content parts of a user-side transcript message (user text/media, or a
 * wrapped instruction). */
static void user_parts_of(cctx *x, uint32_t k, bool in_tool) {
    const qmsg *m = &x->c->t->msgs[k];
    for (uint32_t b = 0; b < m->nblocks; b++) {
        if (qr_is_instruction(m)) text_part(x->c->w, qr_wrap_instruction(x->c, &m->blocks[b]));
        else user_part(x, &m->blocks[b], k, b, in_tool);
    }
}

static void fold_part(cctx *x) {
    if (!x->fold) return;
    text_part(x->c->w, qr_system_joined(x->c));
    x->fold = false;
}

#define NOMSG (UINT32_MAX - 1)

/* A user message for transcript message k (NOMSG: none) followed by the user
 * blocks anchored at ga (NOMSG: none) and, with tail, the tail user blocks. */
static void user_message(cctx *x, uint32_t k, uint32_t ga, bool tail) {
    qr_ctx *c = x->c;
    qw *w = c->w;
    /* a message the provider rules left with no block (reported), with nothing
     * else to carry: no empty message */
    if (k != NOMSG && c->t->msgs[k].nblocks == 0 && !x->fold && !(ga != NOMSG && has_user_groups(c, ga)) &&
        !(tail && has_user_groups(c, QR_TAIL)))
        return;
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "user");
    qw_key(w, "content");
    const qmsg *m = k != NOMSG ? &c->t->msgs[k] : NULL;
    bool groups = ga != NOMSG && has_user_groups(c, ga);
    bool tailg = tail && has_user_groups(c, QR_TAIL);
    uint32_t ngroups = 0, single = 0;
    if (!m && !x->fold && !x->force_array) {
        uint32_t anchors[2] = {ga, tail ? QR_TAIL : NOMSG};
        for (int a = 0; a < 2; a++) {
            if (anchors[a] == NOMSG) continue;
            uint32_t f, n = qr_groups_at(c, anchors[a], &f);
            for (uint32_t g = f; g < f + n; g++)
                if (c->groups[g].slot != QSLOT_DEVELOPER) { ngroups++; single = g; }
        }
    }
    bool as_string = m && !x->fold && !groups && !tailg && !x->force_array && m->role == QR_USER && m->nblocks == 1 &&
                     m->blocks[0].type == QB_TEXT && m->content_is_string && !qr_mark_at(c, QRS_BLOCK, k, 0);
    if (as_string) {
        qw_qstr(w, m->blocks[0].text);
    } else if (!m && ngroups == 1) {
        qw_qstr(w, c->groups[single].text);
    } else {
        qw_arr_begin(w);
        fold_part(x);
        if (m) user_parts_of(x, k, false);
        if (ga != NOMSG) user_groups(x, ga);
        if (tail) user_groups(x, QR_TAIL);
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

static void system_message(cctx *x) {
    qr_ctx *c = x->c;
    qw *w = c->w;
    const quire_transcript *t = c->t;
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, c->caps.system_role ? c->caps.system_role : "system");
    qw_key(w, "content");
    bool bp = c->caps.cache == QCACHE_BREAKPOINTS;
    if (!bp || !t->has_system) {
        qw_qstr(w, qr_system_joined(c));
    } else {
        qr_write_system_parts(c, "text");
    }
    qw_obj_end(w);
}

static void instruction_message(cctx *x, uint32_t k) {
    qr_ctx *c = x->c;
    const qmsg *m = &c->t->msgs[k];
    qw *w = c->w;
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, c->caps.developer == QDEV_DEVELOPER_ROLE ? "developer" : "system");
    qw_key(w, "content");
    if (m->nblocks == 1) {
        qw_qstr(w, m->blocks[0].text);
    } else {
        qw_arr_begin(w);
        for (uint32_t b = 0; b < m->nblocks; b++) text_part(w, m->blocks[b].text);
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

static void assistant_message(cctx *x, uint32_t k, bool prefix) {
    qr_ctx *c = x->c;
    const qmsg *m = &c->t->msgs[k];
    qw *w = c->w;
    uint32_t ntext = 0, ncalls = 0, nthink = 0;
    bool think_chunks = x->mistral && c->caps.thinking; /* Mistral thinking chunks */
    for (uint32_t b = 0; b < m->nblocks; b++) {
        const qblock *bl = &m->blocks[b];
        switch (bl->type) {
        case QB_TEXT:
            ntext++;
            if (qval_present(m->blocks[b].citations)) qr_drop_citations(c, k, b);
            break;
        case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
            qr_drop_artefact(c, k, b, "server tool block: no form in this dialect");
            break;
        case QB_TOOL_CALL: ncalls++; break;
        case QB_THINKING:
            if (think_chunks) { nthink++; break; }
            qr_drop_artefact(c, k, b, "thinking has no form in this dialect");
            break;
        case QB_REDACTED_THINKING:
            qr_drop_artefact(c, k, b, "thinking has no form in this dialect");
            break;
        case QB_OPAQUE:
            qr_drop_artefact(c, k, b, "opaque item of another provider");
            break;
        case QB_IMAGE: case QB_DOCUMENT: case QB_AUDIO: case QB_FILE:
            qr_unsupported(c, k, (int32_t)b, "an image or document in an assistant message");
            break;
        case QB_TOOL_RESULT:
            break;
        }
    }
    /* nothing left that this dialect can carry (thinking only, say): the drops
     * were reported; an empty assistant message would be rejected */
    if (!ntext && !ncalls && !nthink) return;
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "assistant");
    if (nthink) {
        /* [{"type":"thinking","thinking":[{"type":"text","text":…}]}, {"type":"text",…}] in block order */
        qw_key(w, "content");
        qw_arr_begin(w);
        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *bl = &m->blocks[b];
            if (bl->type == QB_TEXT) text_part(w, bl->text);
            if (bl->type != QB_THINKING) continue;
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "thinking");
            qw_key(w, "thinking");
            qw_arr_begin(w);
            text_part(w, bl->text);
            qw_arr_end(w);
            qw_obj_end(w);
        }
        qw_arr_end(w);
    } else if (ntext == 1) {
        qw_key(w, "content");
        for (uint32_t b = 0; b < m->nblocks; b++)
            if (m->blocks[b].type == QB_TEXT) qw_qstr(w, m->blocks[b].text);
    } else if (ntext > 1) {
        qw_key(w, "content");
        qw_arr_begin(w);
        for (uint32_t b = 0; b < m->nblocks; b++)
            if (m->blocks[b].type == QB_TEXT) text_part(w, m->blocks[b].text);
        qw_arr_end(w);
    } else if (!x->mistral) {
        qw_key(w, "content"); qw_null(w);
    }
    if (ncalls) {
        qw_key(w, "tool_calls");
        qw_arr_begin(w);
        for (uint32_t b = 0; b < m->nblocks; b++) {
            const qblock *bl = &m->blocks[b];
            if (bl->type != QB_TOOL_CALL) continue;
            qw_obj_begin(w);
            qw_key(w, "id"); qr_write_call_id(c, bl->id, k, true);
            qw_key(w, "type"); qw_strz(w, "function");
            qw_key(w, "function");
            qw_obj_begin(w);
            qw_key(w, "name"); qr_write_tool_name(c, bl->name, k);
            qw_key(w, "arguments"); qr_write_tool_input_string(c, bl);
            qw_obj_end(w);
            qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    if (prefix) { qw_key(w, "prefix"); qw_bool(w, true); }
    qw_obj_end(w);
}

/* One tool message per toolResult block; the last one of a tool run may
 * absorb the user content that follows (last_tool_message rows). */
static void tool_result_message(cctx *x, uint32_t k, uint32_t b, uint32_t absorb_from, uint32_t absorb_to,
                                bool absorb_groups_k, bool absorb_tail) {
    qr_ctx *c = x->c;
    const qblock *r = &c->t->msgs[k].blocks[b];
    qw *w = c->w;
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "tool");
    qw_key(w, "tool_call_id"); qr_write_call_id(c, r->tool_call_id, k, false);
    if (x->mistral) {
        qstr name = qr_tool_name_for(c, k, r->tool_call_id);
        if (name.len) { qw_key(w, "name"); qr_write_tool_name(c, name, k); }
    }
    qw_key(w, "content");
    bool marked = qr_mark_at(c, QRS_BLOCK, k, b) != NULL;
    bool extra = absorb_from < absorb_to || absorb_groups_k || absorb_tail;
    uint32_t ntext = 0; /* text parts written (an image part is an error or, lossy, dropped) */
    for (uint32_t i = 0; !r->content_is_string && i < r->nparts; i++) ntext += r->parts[i].type == QB_TEXT;
    if (!r->content_is_string && ntext == 0 && !x->force_array && !marked && !extra) {
        /* nothing to send (an empty result, or only what lossy dropped): the
         * empty string, as for an empty text result; a content array must
         * not be empty */
        qw_str(w, "", 0);
    } else if (r->content_is_string && !x->force_array && !marked && !extra) {
        qw_qstr(w, r->content_text);
    } else {
        qw_arr_begin(w);
        if (r->content_is_string) {
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "text");
            qw_key(w, "text"); qw_qstr(w, r->content_text);
            breakpoint(x, k, b);
            qw_obj_end(w);
        } else {
            if (ntext == 0) { /* an array it must be (a breakpoint, absorbed content): one empty text part */
                qw_obj_begin(w);
                qw_key(w, "type"); qw_strz(w, "text");
                qw_key(w, "text"); qw_str(w, "", 0);
                breakpoint(x, k, b);
                qw_obj_end(w);
            }
            for (uint32_t i = 0; i < r->nparts; i++) {
                const qblock *p = &r->parts[i];
                if (p->type != QB_TEXT) { qr_unsupported_part(c, k, b, i, "an image inside a tool result"); continue; }
                qw_obj_begin(w);
                qw_key(w, "type"); qw_strz(w, "text");
                qw_key(w, "text"); qw_qstr(w, p->text);
                if (i + 1 == r->nparts) breakpoint(x, k, b);
                qw_obj_end(w);
            }
        }
        for (uint32_t u = absorb_from; u < absorb_to; u++) {
            user_parts_of(x, u, true);
            user_groups(x, u);
        }
        if (absorb_groups_k) user_groups(x, k);
        if (absorb_tail) user_groups(x, QR_TAIL);
        qw_arr_end(w);
    }
    qw_obj_end(w);
}

/* Request parameters (docs/params.md), after tools and the max tokens field.
 * Chat: temperature, top_p, stop, seed, tool_choice, parallel_tool_calls,
 * response_format, reasoning_effort, stream, user. Mistral: the same fields
 * where it has them (random_seed for seed, "any" for a required tool call). */
static void write_params(qr_ctx *c, bool mistral) {
    const qparams *p = c->params;
    qw *w = c->w;
    if (p->has_max_tokens && !c->caps.max_tokens_param)
        qr_param_unsupported(c, "maxTokens", "the capability row names no max tokens field");
    if (qval_present(p->temperature) && (mistral || !qr_param_above(c, "temperature", p->temperature, 2))) {
        qw_key(w, "temperature"); qw_qval(w, p->temperature);
    }
    if (qval_present(p->top_p)) { qw_key(w, "top_p"); qw_qval(w, p->top_p); }
    if (qval_present(p->top_k)) qr_param_unsupported(c, "topK", "the API has no top_k");
    if (qval_present(p->stop)) {
        qval s = p->stop;
        if (!mistral && qj_type_of(s.doc, s.idx) == QJ_ARRAY && qj_at(s.doc, s.idx)->n > 4)
            qr_param_unsupported(c, "stop", "at most 4 stop sequences");
        else { qw_key(w, "stop"); qr_write_stop(c); }
    }
    if (qval_present(p->seed)) { qw_key(w, mistral ? "random_seed" : "seed"); qw_qval(w, p->seed); }
    if (p->tool_choice != QP_TC_UNSET) {
        qw_key(w, "tool_choice");
        switch (p->tool_choice) {
        case QP_TC_UNSET: case QP_TC_AUTO: qw_strz(w, "auto"); break;
        case QP_TC_NONE: qw_strz(w, "none"); break;
        case QP_TC_REQUIRED: qw_strz(w, mistral ? "any" : "required"); break;
        case QP_TC_TOOL:
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "function");
            qw_key(w, "function");
            qw_obj_begin(w);
            qw_key(w, "name"); qr_write_tool_name(c, qstr_node(p->tool_name.doc, p->tool_name.idx), QR_NAME_CHOICE);
            qw_obj_end(w);
            qw_obj_end(w);
            break;
        }
    }
    if (p->parallel_tool_calls >= 0) { qw_key(w, "parallel_tool_calls"); qw_bool(w, p->parallel_tool_calls == 1); }
    if (p->format != QP_RF_UNSET) {
        qw_key(w, "response_format");
        qw_obj_begin(w);
        qw_key(w, "type");
        if (p->format == QP_RF_TEXT) qw_strz(w, "text");
        else if (p->format == QP_RF_JSON) qw_strz(w, "json_object");
        else {
            qw_strz(w, "json_schema");
            qw_key(w, "json_schema");
            qw_obj_begin(w);
            qw_key(w, "name"); qw_qval(w, p->format_name);
            qw_key(w, "schema"); qw_qval(w, p->format_schema);
            if (p->format_strict >= 0) { qw_key(w, "strict"); qw_bool(w, p->format_strict == 1); }
            qw_obj_end(w);
        }
        qw_obj_end(w);
    }
    if (qval_present(p->effort)) {
        if (mistral) qr_param_unsupported(c, "reasoning.effort", "the API has no reasoning effort");
        else if (!qcaps_takes_effort(&c->caps, c->model)) qr_param_unsupported(c, "reasoning.effort", "this model takes no reasoning effort");
        else { qw_key(w, "reasoning_effort"); qw_qval(w, p->effort); }
    }
    if (qval_present(p->budget_tokens))
        qr_param_unsupported(c, "reasoning.budgetTokens", mistral ? "the API has no thinking budget"
                                                                  : "reasoning takes an effort level, not a token budget");
    if (p->stream >= 0) { qw_key(w, "stream"); qw_bool(w, p->stream == 1); }
    if (qval_present(p->user)) {
        if (mistral) qr_param_unsupported(c, "user", "the API has no end-user field");
        else { qw_key(w, "user"); qw_qval(w, p->user); }
    }
}

static quire_status encode(qr_ctx *c, bool mistral) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    cctx x = {c, mistral, c->caps.tail == QTAIL_LAST_TOOL || c->caps.cache == QCACHE_BREAKPOINTS, qr_fold_system(c)};
    bool no_user_after_tool = c->caps.tail == QTAIL_LAST_TOOL;
    qw_obj_begin(w);
    qw_key(w, "model"); qw_strz(w, c->model);
    qw_key(w, "messages");
    qw_arr_begin(w);
    uint32_t nwire = 0;
    if (!x.fold && qr_has_system(c)) { system_message(&x); nwire++; }
    if (x.fold && (t->nmsgs == 0 || t->msgs[0].role != QR_USER)) {
        /* no user message opens the conversation: the system text opens it */
        qw_obj_begin(w);
        qw_key(w, "role"); qw_strz(w, "user");
        qw_key(w, "content"); qw_qstr(w, qr_system_joined(c));
        qw_obj_end(w);
        x.fold = false;
        nwire++;
    }
    /* the memo's reused prefix (memo.h): its units are not looked at */
    qr_run pf_first, pf_last;
    uint32_t pf_msgs = 0, pf = qr_memo_prefix(c, &pf_first, &pf_last, &pf_msgs);
    qr_memo_head(c);
    bool tail_done = !qr_has_tail_user(c);
    uint32_t k0 = 0, pw = 0;
    if (pf && qr_memo_skip(c, pf, &pw)) {
        nwire += pw;
        k0 = pf_msgs;
    }
    for (uint32_t k = k0; k < t->nmsgs; k++) {
        const qmsg *m = &t->msgs[k];
        bool last = k + 1 == t->nmsgs;
        /* the unit: the message, or the tool run and what it absorbs; it keeps
         * its bytes unless it carries the folded system prompt or the tail */
        uint32_t kend = k + 1;
        bool keep = !(mistral && last);
        if (m->role == QR_TOOL) {
            uint32_t e = k + 1;
            while (e < t->nmsgs && t->msgs[e].role == QR_TOOL) e++;
            uint32_t u = e;
            if (no_user_after_tool)
                while (u < t->nmsgs && (t->msgs[u].role == QR_USER ||
                                        (qr_is_instruction(&t->msgs[u]) && c->caps.developer == QDEV_NONE)))
                    u++;
            kend = no_user_after_tool ? u : e;
            keep = keep && !(no_user_after_tool && u == t->nmsgs && !tail_done);
        } else if (m->role == QR_USER || (qr_is_instruction(m) && c->caps.developer == QDEV_NONE)) {
            keep = keep && !x.fold && !(last && !tail_done && c->caps.tail == QTAIL_LAST_TOOL);
        }
        qr_unit unit;
        if (qr_unit_begin(c, &unit, k, kend, (uint32_t)m->role, keep)) {
            nwire += unit.nwire;
            k = kend - 1;
            continue;
        }
        uint32_t nwire0 = nwire;
        switch (m->role) {
        case QR_ASSISTANT:
            assistant_message(&x, k, mistral && last && tail_done && !qr_has_tail_developer(c));
            nwire++;
            if (has_user_groups(c, k)) user_message(&x, NOMSG, k, false); /* anchored after an assistant */
            break;
        case QR_TOOL: {
            /* the tool run [k, e) and, on no-user-after-tool rows, the user-side
             * messages that follow it up to the next assistant/tool message */
            uint32_t e = k + 1;
            while (e < t->nmsgs && t->msgs[e].role == QR_TOOL) e++;
            uint32_t u = e;
            bool instr_ok = c->caps.developer != QDEV_NONE;
            if (no_user_after_tool)
                while (u < t->nmsgs && (t->msgs[u].role == QR_USER || (qr_is_instruction(&t->msgs[u]) && !instr_ok))) u++;
            bool run_is_last = u == t->nmsgs;
            for (uint32_t q = k; q < e; q++) {
                const qmsg *tm = &t->msgs[q];
                for (uint32_t b = 0; b < tm->nblocks; b++) {
                    bool final = q + 1 == e && b + 1 == tm->nblocks;
                    bool absorb = final && no_user_after_tool;
                    tool_result_message(&x, q, b, absorb ? e : 0, absorb ? u : 0, absorb,
                                        absorb && run_is_last && !tail_done);
                    nwire++;
                }
                if (!no_user_after_tool && has_user_groups(c, q)) user_message(&x, NOMSG, q, false);
                dev_groups(&x, q);
            }
            if (no_user_after_tool) {
                if (u > e) qr_event_adjusted(c, "merged_into_tool_message", e,
                                             "no user message may follow a tool message: its content joins the last tool message");
                for (uint32_t q = e; q < u; q++) dev_groups(&x, q);
                if (run_is_last) tail_done = true;
            }
            k = (no_user_after_tool ? u : e) - 1;
            break;
        }
        case QR_SYSTEM:
        case QR_DEVELOPER:
            if (c->caps.developer != QDEV_NONE) { instruction_message(&x, k); nwire++; dev_groups(&x, k); break; }
            Q_FALLTHROUGH;
        case QR_USER: {
            bool tail_here = last && !tail_done && c->caps.tail == QTAIL_LAST_TOOL;
            user_message(&x, k, no_user_after_tool ? k : NOMSG, tail_here);
            if (tail_here) tail_done = true;
            nwire++;
            if (!no_user_after_tool && has_user_groups(c, k)) user_message(&x, NOMSG, k, false);
            dev_groups(&x, k);
            break;
        }
        }
        unit.nwire = nwire - nwire0;
        qr_unit_end(c, &unit);
    }
    if (!tail_done) { user_message(&x, NOMSG, NOMSG, true); nwire++; }
    dev_groups(&x, QR_TAIL);
    qw_arr_end(w);
    qr_write_function_tools(c);
    if (c->max_tokens && c->caps.max_tokens_param) { qw_key(w, c->caps.max_tokens_param); qw_int(w, c->max_tokens); }
    write_params(c, mistral);
    qw_obj_end(w);
    if (nwire == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/messages", "a chat request needs at least one message");
    return QUIRE_OK;
}

quire_status qr_encode_openai_chat(qr_ctx *c) { return encode(c, false); }
quire_status qr_encode_mistral(qr_ctx *c) { return encode(c, true); }
