/* Bedrock Converse encoder (dialect bedrock_converse).
 *
 * Key order: system, toolConfig, messages, inferenceConfig (only when a max
 * is given). The model id is in the URL, not the body.
 * Wire rules as Anthropic: user/assistant alternate (user, tool and wrapped
 * instruction messages merge, toolResult blocks first), the first message is
 * user. Blocks: text, image {format, source.bytes}, document {format, name,
 * source.bytes}, toolUse {toolUseId, name, input}, toolResult {toolUseId,
 * content, status}, reasoningContent {reasoningText {text, signature}} |
 * {redactedContent}. Cache breakpoints are {"cachePoint":{"type":"default"}}
 * blocks right after the marked block (system, tools, messages). */
#include "render/wire.h"

#include <stdio.h>
#include <stdlib.h>

/* {"cachePoint":{"type":"default"}}, with the marker's TTL kept: an input
 * cacheControl "ttl" ("5m" | "1h") or a managed marker that needs "1h". */
static void cache_point(qw *w, const qr_mark *m) {
    qw_obj_begin(w);
    qw_key(w, "cachePoint");
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "default");
    uint32_t ttl = qval_present(m->input) && qj_type_of(m->input.doc, m->input.idx) == QJ_OBJECT
                       ? qj_get(m->input.doc, m->input.idx, "ttl") : QJ_NONE;
    if (ttl != QJ_NONE && qj_type_of(m->input.doc, ttl) == QJ_STRING) { qw_key(w, "ttl"); qw_node(w, m->input.doc, ttl); }
    else if (m->ttl_1h) { qw_key(w, "ttl"); qw_strz(w, "1h"); }
    qw_obj_end(w);
    qw_obj_end(w);
}

static void point_after(qr_ctx *c, qr_site site, uint32_t a, uint32_t b) {
    const qr_mark *m = qr_mark_at(c, site, a, b);
    if (m) cache_point(c->w, m);
}

static void text_block(qw *w, qstr s) {
    qw_obj_begin(w);
    qw_key(w, "text"); qw_qstr(w, s);
    qw_obj_end(w);
}

static const struct { const char *mime, *fmt; } k_formats[] = {
    {"image/png", "png"}, {"image/jpeg", "jpeg"}, {"image/gif", "gif"}, {"image/webp", "webp"},
    {"application/pdf", "pdf"}, {"text/csv", "csv"}, {"application/msword", "doc"},
    {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx"},
    {"application/vnd.ms-excel", "xls"},
    {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"},
    {"text/html", "html"}, {"text/plain", "txt"}, {"text/markdown", "md"},
};

static const char *format_of(qstr mt, bool image) {
    for (size_t i = 0; i < Q_COUNTOF(k_formats); i++)
        if (qstr_eq(mt, k_formats[i].mime) && (strncmp(k_formats[i].mime, "image/", 6) == 0) == image)
            return k_formats[i].fmt;
    return NULL;
}

/* A document name as Converse accepts it: letters, digits, single spaces,
 * hyphens, parentheses and square brackets, 1..200 bytes. Any other byte
 * (a filename's dot, say) becomes a hyphen, reported as an event. */
static void doc_name(qr_ctx *c, qstr given, uint32_t mi) {
    qstr p = qr_plain(c, given);
    char out[201];
    size_t n = 0;
    bool changed = p.len > 200;
    for (uint32_t i = 0; i < p.len && n < 200; i++) {
        unsigned char ch = (unsigned char)p.p[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                  ch == '(' || ch == ')' || ch == '[' || ch == ']';
        if (ch == ' ' && n > 0 && out[n - 1] != ' ') { out[n++] = ' '; continue; }
        if (ch == ' ') { changed = true; continue; }
        if (!ok) { out[n++] = '-'; changed = true; continue; }
        out[n++] = (char)ch;
    }
    if (n == 0) { out[n++] = '-'; changed = true; }
    qw_str(c->w, out, n);
    if (changed)
        qr_event_adjusted(c, "document_name", mi,
                          "a document name keeps only letters, digits, single spaces, hyphens, parentheses and brackets");
}

static void media(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi) {
    qw *w = c->w;
    bool image = b->type == QB_IMAGE ||
                 (b->type == QB_FILE && b->media_type.len > 6 && memcmp(b->media_type.p, "image/", 6) == 0);
    if (image && qstr_present(b->filename) &&
        qr_unsupported(c, mi, (int32_t)bi, "a filename on an image") && !c->ro->lossy)
        return;
    if (b->type == QB_AUDIO) { qr_unsupported(c, mi, (int32_t)bi, "an audio block"); return; }
    if (!image && !c->caps.documents) { qr_unsupported(c, mi, (int32_t)bi, "a document block"); return; }
    if (qstr_present(b->url)) { qr_unsupported(c, mi, (int32_t)bi, "a block by URL (Converse takes bytes or S3)"); return; }
    if (qstr_present(b->file_id)) { qr_unsupported(c, mi, (int32_t)bi, "a block by file id (Converse takes bytes or S3)"); return; }
    if (!image && qstr_present(b->title) && qstr_present(b->filename) &&
        qr_unsupported(c, mi, (int32_t)bi, "a document's filename next to its title") && !c->ro->lossy)
        return;
    const char *fmt = format_of(b->media_type, image);
    if (!fmt) { qr_unsupported(c, mi, (int32_t)bi, image ? "an image of this media type" : "a document of this media type"); return; }
    qw_obj_begin(w);
    qw_key(w, image ? "image" : "document");
    qw_obj_begin(w);
    qw_key(w, "format"); qw_strz(w, fmt);
    if (!image) {
        qw_key(w, "name");
        if (qstr_present(b->title)) doc_name(c, b->title, mi);
        else if (qstr_present(b->filename)) doc_name(c, b->filename, mi);
        else {
            char nm[48];
            snprintf(nm, sizeof nm, "document-%u-%u", mi < c->t->nmsgs ? c->t->msgs[mi].src_index : mi, bi);
            qw_strz(w, nm);
        }
    }
    qw_key(w, "source");
    qw_obj_begin(w);
    qw_key(w, "bytes"); qw_qstr(w, b->data);
    qw_obj_end(w);
    qw_obj_end(w);
    qw_obj_end(w);
}


/* point: write the block's cache point after it (not for the parts of a
 * tool result: the marker of a result follows the whole toolResult block). */
static void block_at(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi, bool point);
static void block(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi) { block_at(c, b, mi, bi, true); }

static void block_at(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi, bool point) {
    qw *w = c->w;
    switch (b->type) {
    case QB_TEXT:
        if (b->text.len == 0) { qr_unsupported(c, mi, (int32_t)bi, "an empty text block"); return; }
        text_block(w, b->text);
        if (qval_present(b->citations)) qr_drop_citations(c, mi, bi);
        break;
    case QB_IMAGE: case QB_DOCUMENT: case QB_AUDIO: case QB_FILE:
        if (point && mi < c->t->nmsgs && c->t->msgs[mi].role == QR_ASSISTANT) {
            /* media blocks belong in user messages (Converse) */
            qr_unsupported(c, mi, (int32_t)bi, "an image or document in an assistant message");
            return;
        }
        media(c, b, mi, bi);
        break;
    case QB_SERVER_TOOL_CALL: case QB_SERVER_TOOL_RESULT:
        qr_drop_artefact(c, mi, bi, "server tool block: no form in this dialect");
        return;
    case QB_TOOL_CALL:
        if (!qr_tool_input_ok(c, mi, bi, b)) return;
        qw_obj_begin(w);
        qw_key(w, "toolUse");
        qw_obj_begin(w);
        qw_key(w, "toolUseId"); qr_write_call_id(c, b->id, mi, true);
        qw_key(w, "name"); qr_write_tool_name(c, b->name, mi);
        qw_key(w, "input"); qr_write_tool_input(c, b);
        qw_obj_end(w);
        qw_obj_end(w);
        break;
    case QB_TOOL_RESULT:
        qw_obj_begin(w);
        qw_key(w, "toolResult");
        qw_obj_begin(w);
        qw_key(w, "toolUseId"); qr_write_call_id(c, b->tool_call_id, mi, false);
        qw_key(w, "content");
        qw_arr_begin(w);
        if (b->content_is_string) {
            text_block(w, b->content_text);
        } else {
            for (uint32_t i = 0; i < b->nparts; i++) {
                if (b->parts[i].type == QB_IMAGE && !c->caps.tool_result_images) {
                    qr_unsupported_part(c, mi, bi, i, "an image inside a tool result");
                    continue;
                }
                block_at(c, &b->parts[i], mi, bi, false);
            }
        }
        qw_arr_end(w);
        if (b->is_error >= 0) { qw_key(w, "status"); qw_strz(w, b->is_error == 1 ? "error" : "success"); }
        qw_obj_end(w);
        qw_obj_end(w);
        break;
    case QB_THINKING:
        if (!c->caps.thinking) { qr_drop_artefact(c, mi, bi, "thinking block: the row has no thinking"); return; }
        qw_obj_begin(w);
        qw_key(w, "reasoningContent");
        qw_obj_begin(w);
        qw_key(w, "reasoningText");
        qw_obj_begin(w);
        qw_key(w, "text"); qw_qstr(w, b->text);
        if (qstr_present(b->signature)) { qw_key(w, "signature"); qw_qstr(w, b->signature); }
        qw_obj_end(w);
        qw_obj_end(w);
        qw_obj_end(w);
        break;
    case QB_REDACTED_THINKING:
        if (!c->caps.thinking) { qr_drop_artefact(c, mi, bi, "redactedThinking block: the row has no thinking"); return; }
        qw_obj_begin(w);
        qw_key(w, "reasoningContent");
        qw_obj_begin(w);
        qw_key(w, "redactedContent"); qw_qstr(w, b->data);
        qw_obj_end(w);
        qw_obj_end(w);
        break;
    case QB_OPAQUE:
        if (qstr_eq(b->provider, c->ro->provider) || qstr_eq(b->provider, "bedrock_converse")) {
            qr_write_as_given(c, b->item);
            break;
        }
        qr_drop_artefact(c, mi, bi, "opaque item of another provider");
        return;
    }
    if (point) point_after(c, QRS_BLOCK, mi, bi);
}

static bool user_groups_at(const qr_ctx *c, uint32_t k) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) return true;
    return false;
}
static void groups_after(qr_ctx *c, uint32_t k) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) text_block(c->w, c->groups[g].text);
}

static void message_begin(qw *w, const char *role) {
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, role);
    qw_key(w, "content");
    qw_arr_begin(w);
}
static void message_end(qw *w) {
    qw_arr_end(w);
    qw_obj_end(w);
}

/* Request parameters (docs/params.md): toolConfig.toolChoice; inferenceConfig
 * (maxTokens, stopSequences, temperature, topP); top_k and the thinking budget
 * in additionalModelRequestFields on rows whose model takes Anthropic's fields
 * (thinking rows); stream is the path (/converse-stream), not a field. */
static void write_tool_choice(qr_ctx *c) {
    const qparams *p = c->params;
    qw *w = c->w;
    if (p->tool_choice == QP_TC_UNSET || p->tool_choice == QP_TC_NONE) return;
    qw_key(w, "toolChoice");
    qw_obj_begin(w);
    if (p->tool_choice == QP_TC_TOOL) {
        qw_key(w, "tool");
        qw_obj_begin(w);
        qw_key(w, "name"); qr_write_tool_name(c, qstr_node(p->tool_name.doc, p->tool_name.idx), QR_NAME_CHOICE);
        qw_obj_end(w);
    } else {
        qw_key(w, p->tool_choice == QP_TC_AUTO ? "auto" : "any");
        qw_obj_begin(w);
        qw_obj_end(w);
    }
    qw_obj_end(w);
}

static void write_params(qr_ctx *c) {
    const qparams *p = c->params;
    qw *w = c->w;
    if (p->tool_choice == QP_TC_NONE) qr_param_unsupported(c, "toolChoice", "Converse has no \"none\" tool choice (leave the tools out)");
    if (p->parallel_tool_calls >= 0) qr_param_unsupported(c, "parallelToolCalls", "Converse has no such switch");
    if (qval_present(p->seed)) qr_param_unsupported(c, "seed", "Converse has no seed");
    if (qval_present(p->user)) qr_param_unsupported(c, "user", "Converse has no end-user field");
    if (p->format == QP_RF_JSON || p->format == QP_RF_SCHEMA)
        qr_param_unsupported(c, "responseFormat", "Converse has no output format field");
    if (qval_present(p->effort)) qr_param_unsupported(c, "reasoning.effort", "Converse takes no reasoning effort");
    bool native = c->caps.thinking; /* Anthropic request fields */
    if (qval_present(p->top_k) && !native) qr_param_unsupported(c, "topK", "this model's top_k field is not known");
    if (qval_present(p->budget_tokens) && !native)
        qr_param_unsupported(c, "reasoning.budgetTokens", "this model takes no thinking budget");
    bool stop = qval_present(p->stop);
    if (stop && qj_type_of(p->stop.doc, p->stop.idx) == QJ_ARRAY && qj_at(p->stop.doc, p->stop.idx)->n > 4) {
        qr_param_unsupported(c, "stop", "at most 4 stop sequences");
        stop = false;
    }
    bool temp = qval_present(p->temperature) && !qr_param_above(c, "temperature", p->temperature, 1);
    if (c->max_tokens || stop || temp || qval_present(p->top_p)) {
        qw_key(w, "inferenceConfig");
        qw_obj_begin(w);
        if (c->max_tokens) { qw_key(w, "maxTokens"); qw_int(w, c->max_tokens); }
        if (stop) { qw_key(w, "stopSequences"); qr_write_stop(c); }
        if (temp) { qw_key(w, "temperature"); qw_qval(w, p->temperature); }
        if (qval_present(p->top_p)) { qw_key(w, "topP"); qw_qval(w, p->top_p); }
        qw_obj_end(w);
    }
    bool thinking = native && qr_thinking_budget(c);
    if (native && (qval_present(p->top_k) || thinking)) {
        qw_key(w, "additionalModelRequestFields");
        qw_obj_begin(w);
        if (qval_present(p->top_k)) { qw_key(w, "top_k"); qw_qval(w, p->top_k); }
        if (thinking) {
            qw_key(w, "thinking");
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "enabled");
            qw_key(w, "budget_tokens"); qw_qval(w, p->budget_tokens);
            qw_obj_end(w);
        }
        qw_obj_end(w);
    }
}

static int name_cmp(const void *x, const void *y) {
    const qstr *a = x, *b = y;
    int r = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);
    return r ? r : (a->len > b->len) - (a->len < b->len);
}

/* Whether the tool list writes a tool (a function tool, or a provider tool of
 * Bedrock's own). */
static bool tool_written(const qr_ctx *c, const qtool *tl) {
    return tl->kind != QTK_CUSTOM && (tl->kind != QTK_PROVIDER || qr_is_provider(c, tl->provider));
}
/* Tool i, which the list cannot write: an error naming it (lossy: an event). */
static void tool_refused(qr_ctx *c, uint32_t i) {
    qr_tool_unsupported(c, i, c->t->tools[i].kind == QTK_CUSTOM ? "a custom (freeform) tool"
                                                                : "a provider tool of another provider");
}

/* Converse refuses toolUse and toolResult blocks in a request without
 * toolConfig ("The toolConfig field must be defined when using toolUse and
 * toolResult content blocks"; docs/providers.md): when the transcript gives no
 * tool it can send and its history holds calls, each called name is declared
 * with an open object schema, in byte order of the names (request_adjusted,
 * declared_called_tools). False: out of memory. */
static bool tools_for_history(qr_ctx *c) {
    const quire_transcript *t = c->t;
    uint32_t ncalls = 0, fm = UINT32_MAX;
    for (uint32_t k = 0; k < t->nmsgs; k++)
        for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) {
            qblock_type ty = t->msgs[k].blocks[b].type;
            if (ty != QB_TOOL_CALL && ty != QB_TOOL_RESULT) continue;
            if (fm == UINT32_MAX) fm = k;
            ncalls += ty == QB_TOOL_CALL;
        }
    if (fm == UINT32_MAX) return true;
    qstr *names = qarena_alloc(&c->scratch, (size_t)(ncalls ? ncalls : 1) * sizeof *names);
    if (!names) { c->st = q_oom(c->err); return false; }
    uint32_t n = 0;
    for (uint32_t k = 0; k < t->nmsgs; k++)
        for (uint32_t b = 0; b < t->msgs[k].nblocks; b++)
            if (t->msgs[k].blocks[b].type == QB_TOOL_CALL) names[n++] = qr_plain(c, t->msgs[k].blocks[b].name);
    qsort(names, n, sizeof *names, name_cmp);
    qw *w = c->w;
    qw_key(w, "toolConfig");
    qw_obj_begin(w);
    qw_key(w, "tools");
    qw_arr_begin(w);
    for (uint32_t i = 0; i < n; i++) {
        if (i && name_cmp(&names[i - 1], &names[i]) == 0) continue;
        qw_obj_begin(w);
        qw_key(w, "toolSpec");
        qw_obj_begin(w);
        qw_key(w, "name"); qr_write_tool_name(c, names[i], QR_NAME_TOOLS);
        qw_key(w, "inputSchema");
        qw_obj_begin(w);
        qw_key(w, "json");
        qw_obj_lit(w, "type", "object");
        qw_obj_end(w);
        qw_obj_end(w);
        qw_obj_end(w);
        qw_obj_end(w);
    }
    qw_arr_end(w);
    write_tool_choice(c);
    qw_obj_end(w);
    qr_event_adjusted(c, "declared_called_tools", fm,
                      "Converse needs toolConfig when the messages hold tool calls: each called tool is "
                      "declared with an open object schema");
    return true;
}

quire_status qr_encode_bedrock(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    bool fold = qr_fold_system(c);
    qw_obj_begin(w);
    if (!fold && qr_has_system(c)) {
        qw_key(w, "system");
        qw_arr_begin(w);
        for (uint32_t i = 0; t->has_system && i < t->nsystem; i++) {
            text_block(w, t->system[i].text);
            point_after(c, QRS_SYSTEM, i, 0);
        }
        if (qstr_present(c->sys_extra)) text_block(w, c->sys_extra);
        qw_arr_end(w);
    }
    uint32_t declared = 0;
    for (uint32_t i = 0; t->has_tools && i < t->ntools; i++) declared += tool_written(c, &t->tools[i]);
    if (!declared) {
        for (uint32_t i = 0; t->has_tools && i < t->ntools; i++) tool_refused(c, i);
        if (!c->st && !tools_for_history(c)) return c->st;
    } else {
        qw_key(w, "toolConfig");
        qw_obj_begin(w);
        qw_key(w, "tools");
        qw_arr_begin(w);
        for (uint32_t i = 0; i < t->ntools; i++) {
            const qtool *tl = &t->tools[i];
            if (!tool_written(c, tl)) { tool_refused(c, i); continue; }
            if (tl->kind == QTK_PROVIDER) {
                qr_write_as_given(c, tl->item);
                point_after(c, QRS_TOOL, i, 0);
                continue;
            }
            qw_obj_begin(w);
            qw_key(w, "toolSpec");
            qw_obj_begin(w);
            qw_key(w, "name"); qr_write_tool_name(c, tl->name, QR_NAME_TOOLS);
            if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
            qw_key(w, "inputSchema");
            qw_obj_begin(w);
            qw_key(w, "json"); qw_qval(w, tl->input_schema);
            qw_obj_end(w);
            qw_obj_end(w);
            qw_obj_end(w);
            point_after(c, QRS_TOOL, i, 0);
        }
        qw_arr_end(w);
        write_tool_choice(c);
        qw_obj_end(w);
    }
    qr_seg_opts so = {true, true, false, false};
    uint32_t nr = 0;
    qr_run *runs = qr_segment(c, &so, &nr);
    if (!runs) return q_oom(c->err);
    qw_key(w, "messages");
    qw_arr_begin(w);
    uint32_t nwire = 0;
    bool tail_user = qr_has_tail_user(c);
    if (nr > 0 && runs[0].role != QW_USER) {
        message_begin(w, "user");
        if (fold) { text_block(w, qr_system_joined(c)); fold = false; }
        else {
            text_block(w, qstr_lit("(continued)"));
            qr_event_adjusted(c, "inserted_user_turn", 0, "the first message must be a user message");
        }
        message_end(w);
        nwire++;
    }
    for (uint32_t r = 0; r < nr; r++) {
        const qr_run *run = &runs[r];
        bool last = r + 1 == nr;
        if (run->role == QW_ASSISTANT) {
            message_begin(w, "assistant");
            for (uint32_t k = run->i; k < run->j; k++)
                for (uint32_t b = 0; b < t->msgs[k].nblocks; b++) block(c, &t->msgs[k].blocks[b], k, b);
            message_end(w);
            nwire++;
            bool anchored = user_groups_at(c, run->j - 1);
            if ((anchored && (last || runs[r + 1].role != QW_USER)) || (last && tail_user)) {
                message_begin(w, "user");
                groups_after(c, run->j - 1);
                if (last && tail_user) { groups_after(c, QR_TAIL); tail_user = false; }
                message_end(w);
                nwire++;
            }
            continue;
        }
        message_begin(w, "user");
        for (uint32_t k = run->i; k < run->j; k++) {
            const qmsg *m = &t->msgs[k];
            if (m->role != QR_TOOL) continue;
            for (uint32_t b = 0; b < m->nblocks; b++) block(c, &m->blocks[b], k, b);
        }
        if (fold) { text_block(w, qr_system_joined(c)); fold = false; }
        if (r > 0 && runs[r - 1].role == QW_ASSISTANT) groups_after(c, runs[r - 1].j - 1);
        for (uint32_t k = run->i; k < run->j; k++) {
            const qmsg *m = &t->msgs[k];
            if (m->role != QR_TOOL) {
                for (uint32_t b = 0; b < m->nblocks; b++) {
                    if (qr_is_instruction(m)) text_block(w, qr_wrap_instruction(c, &m->blocks[b]));
                    else block(c, &m->blocks[b], k, b);
                }
            }
            groups_after(c, k);
        }
        if (last && tail_user) { groups_after(c, QR_TAIL); tail_user = false; }
        message_end(w);
        nwire++;
    }
    if (tail_user || (nr == 0 && fold)) {
        message_begin(w, "user");
        if (fold) text_block(w, qr_system_joined(c));
        groups_after(c, QR_TAIL);
        message_end(w);
        nwire++;
    }
    qw_arr_end(w);
    write_params(c);
    qw_obj_end(w);
    if (nwire == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/messages", "a Converse request needs at least one message");
    return QUIRE_OK;
}
