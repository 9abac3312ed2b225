/* Anthropic Messages encoder (dialect anthropic_messages).
 *
 * Key order: model, max_tokens, system, tools, messages.
 * Wire rules: roles user/assistant alternate (consecutive user, tool and
 * folded instruction messages merge into one user message, tool_result blocks
 * first); the first message is user; mid-conversation system messages only on
 * rows with developer = system_role, after a user turn and before an
 * assistant turn or at the end. Reminder user blocks join the last user
 * message after its tool results and text (every tail mode: alternation). */
#include "render/wire.h"
#include "render/memo.h"

static void mark(qr_ctx *c, qr_site site, uint32_t a, uint32_t b) {
    const qr_mark *m = qr_mark_at(c, site, a, b);
    if (!m) return;
    /* a one-hour cache TTL is enabled by a beta header (the envelope names it) */
    bool hour = m->ttl_1h;
    if (qval_present(m->input)) {
        uint32_t ttl = qj_type_of(m->input.doc, m->input.idx) == QJ_OBJECT ? qj_get(m->input.doc, m->input.idx, "ttl") : QJ_NONE;
        hour = ttl != QJ_NONE && qj_type_of(m->input.doc, ttl) == QJ_STRING && qj_str_eq(m->input.doc, ttl, "1h");
    }
    if (hour) qr_need_beta(c, "extended-cache-ttl-2025-04-11");
    qw_key(c->w, "cache_control");
    qr_write_cache_control(c, m);
}

static void source(qw *w, const qblock *b, bool document) {
    qw_key(w, "source");
    qw_obj_begin(w);
    if (qstr_present(b->file_id)) {
        qw_key(w, "type"); qw_lit(w, "file");
        qw_key_qstr(w, "file_id", b->file_id);
    } else if (qstr_present(b->url)) {
        qw_key(w, "type"); qw_lit(w, "url");
        qw_key_qstr(w, "url", b->url);
    } else if (document && qstr_eq(b->media_type, "text/plain")) {
        qw_key(w, "type"); qw_lit(w, "text");
        qw_key_qstr(w, "media_type", b->media_type);
        qw_key_qstr(w, "data", b->data);
    } else {
        qw_key(w, "type"); qw_lit(w, "base64");
        qw_key_qstr(w, "media_type", b->media_type);
        qw_key_qstr(w, "data", b->data);
    }
    qw_obj_end(w);
}

static void text_block(qw *w, qstr text) {
    qw_obj_lit(w, "type", "text");
    qw_key_qstr(w, "text", text);
    qw_obj_end(w);
}

/* The name of the serverToolCall that result b answers (for the
 * "<name>_tool_result" block type): b's own name, else the call's. */
static qstr server_tool_name(const qr_ctx *c, const qblock *b, uint32_t mi) {
    if (qstr_present(b->name)) return b->name;
    for (uint32_t k = mi + 1; k-- > 0;) {
        const qmsg *m = &c->t->msgs[k];
        for (uint32_t i = 0; i < m->nblocks; i++) {
            const qblock *x = &m->blocks[i];
            if (x->type == QB_SERVER_TOOL_CALL && x->id.len == b->tool_call_id.len &&
                memcmp(x->id.p, b->tool_call_id.p, x->id.len) == 0)
                return x->name;
        }
    }
    qstr none = {0};
    return none;
}

/* Citations the Messages API takes back: an array of its own citation kinds
 * (providers/caps.c, qcaps_messages_citation). Citations another provider
 * reported (Chat annotations, Converse citations) have other shapes and are
 * dropped with an event, the text kept. */
static bool messages_citations(qval v) {
    const qj_doc *d = v.doc;
    if (qj_type_of(d, v.idx) != QJ_ARRAY) return false;
    uint32_t e = v.idx + 1;
    for (uint32_t i = 0; i < qj_at(d, v.idx)->n; i++, e = qj_next(d, e))
        if (!qcaps_messages_citation(d, e)) return false;
    return true;
}

/* One content block of message mi (bi = its index; parts of a tool result use
 * the result's index). */
static void block(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi, bool part) {
    qw *w = c->w;
    switch (b->type) {
    case QB_TEXT:
        if (b->text.len == 0) { qr_unsupported(c, mi, (int32_t)bi, "an empty text block"); return; }
        qw_obj_lit(w, "type", "text");
        qw_key_qstr(w, "text", b->text);
        if (qval_present(b->citations) && messages_citations(b->citations)) {
            qw_key(w, "citations");
            qw_qval(w, b->citations);
        } else if (qval_present(b->citations)) {
            qr_drop_citations(c, mi, bi);
        }
        if (!part) mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    case QB_AUDIO:
        qr_unsupported(c, mi, (int32_t)bi, "an audio block");
        return;
    case QB_IMAGE:
    case QB_DOCUMENT:
    case QB_FILE: {
        /* a file renders as a document (the Messages API's attachment block), or as an
         * image when its bytes are an image */
        if (!part && mi < c->t->nmsgs && c->t->msgs[mi].role == QR_ASSISTANT) {
            /* image and document blocks belong in user messages (Messages API) */
            qr_unsupported(c, mi, (int32_t)bi, "an image or document in an assistant message");
            return;
        }
        bool file_image = b->type == QB_FILE && b->media_type.len > 6 && memcmp(b->media_type.p, "image/", 6) == 0;
        bool doc = b->type != QB_IMAGE && !file_image;
        if (doc && !c->caps.documents) { qr_unsupported(c, mi, (int32_t)bi, "a document block"); return; }
        if (qstr_present(b->url) && !c->caps.image_urls) { qr_unsupported(c, mi, (int32_t)bi, "a block by URL"); return; }
        if (!qr_media_ok(c, b, mi, bi)) return;
        if (!doc && qstr_present(b->filename) &&
            qr_unsupported(c, mi, (int32_t)bi, "a filename on an image") && !c->ro->lossy)
            return;
        if (qstr_present(b->title) && qstr_present(b->filename) &&
            qr_unsupported(c, mi, (int32_t)bi, "a document's filename next to its title") && !c->ro->lossy)
            return;
        if (!doc && !qr_image_type_ok(c, b, mi, bi)) return;
        if (doc && !qstr_present(b->url) && !qstr_present(b->file_id) && !qstr_eq(b->media_type, "application/pdf") &&
            !qstr_eq(b->media_type, "text/plain")) {
            /* base64 documents are PDFs; plain text goes as a text source */
            qr_unsupported(c, mi, (int32_t)bi, "a document that is neither application/pdf nor text/plain");
            return;
        }
        qw_obj_lit(w, "type", doc ? "document" : "image");
        source(w, b, doc);
        if (qstr_present(b->title)) { qw_key_qstr(w, "title", b->title); }
        else if (doc && qstr_present(b->filename)) { qw_key_qstr(w, "title", b->filename); }
        if (!part) mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    }
    case QB_SERVER_TOOL_CALL:
        if (!qstr_eq(b->provider, "anthropic")) { qr_drop_artefact(c, mi, bi, "server tool call of another provider"); return; }
        qw_obj_lit(w, "type", "server_tool_use");
        qw_key_qstr(w, "id", b->id);
        qw_key_qstr(w, "name", b->name);
        qw_key(w, "input"); qw_qval(w, b->input);
        mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    case QB_SERVER_TOOL_RESULT: {
        if (!qstr_eq(b->provider, "anthropic")) { qr_drop_artefact(c, mi, bi, "server tool result of another provider"); return; }
        qstr nm = server_tool_name(c, b, mi);
        if (!qstr_present(nm)) {
            qr_unsupported(c, mi, (int32_t)bi, "a serverToolResult with no \"name\" and no serverToolCall it answers");
            return;
        }
        /* "<name>_tool_result": web_search_tool_result, code_execution_tool_result, ... */
        qw_obj_begin(w);
        qw_key(w, "type");
        {
            qbuf *ob = w->b;
            qw_str_esc(w, "", 0);
            ob->len--;
            if (nm.esc) qbuf_put(ob, nm.p, nm.len);
            else qj_escape(ob, nm.p, nm.len);
            qbuf_puts(ob, "_tool_result\"");
        }
        qw_key_qstr(w, "tool_use_id", b->tool_call_id);
        qw_key(w, "content"); qw_qval(w, b->result);
        mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    }
    case QB_TOOL_CALL:
        if (!qr_tool_input_ok(c, mi, bi, b)) return;
        qw_obj_lit(w, "type", "tool_use");
        qw_key(w, "id"); qr_write_call_id(c, b->id, mi, true);
        qw_key(w, "name"); qr_write_tool_name(c, b->name, mi);
        qw_key(w, "input"); qr_write_tool_input(c, b);
        mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    case QB_TOOL_RESULT:
        qw_obj_lit(w, "type", "tool_result");
        qw_key(w, "tool_use_id"); qr_write_call_id(c, b->tool_call_id, mi, false);
        if (b->content_is_string) {
            qw_key_qstr(w, "content", b->content_text);
        } else {
            qw_key(w, "content");
            /* an empty array when nothing is left (a blank result that is not
             * an error; an error result got a text: docs/providers.md) */
            qw_arr_begin(w);
            for (uint32_t i = 0; i < b->nparts; i++) {
                if (b->parts[i].type == QB_IMAGE && !c->caps.tool_result_images) {
                    qr_unsupported_part(c, mi, bi, i, "an image inside a tool result");
                    continue;
                }
                block(c, &b->parts[i], mi, bi, true);
            }
            qw_arr_end(w);
        }
        if (b->is_error >= 0) { qw_key(w, "is_error"); qw_bool(w, b->is_error == 1); }
        mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    case QB_THINKING:
        if (!c->caps.thinking) { qr_drop_artefact(c, mi, bi, "thinking block: the row has no thinking"); return; }
        qw_obj_lit(w, "type", "thinking");
        qw_key_qstr(w, "thinking", b->text);
        if (qstr_present(b->signature)) { qw_key_qstr(w, "signature", b->signature); }
        qw_obj_end(w);
        return;
    case QB_REDACTED_THINKING:
        if (!c->caps.thinking) { qr_drop_artefact(c, mi, bi, "redactedThinking block: the row has no thinking"); return; }
        qw_obj_lit(w, "type", "redacted_thinking");
        qw_key_qstr(w, "data", b->data);
        qw_obj_end(w);
        return;
    case QB_OPAQUE:
        if (qstr_eq(b->provider, "anthropic")) {
            qr_write_as_given(c, b->item);
            return;
        }
        qr_drop_artefact(c, mi, bi, "opaque item of another provider");
        return;
    }
}

/* The user blocks (user_block, ephemeral_cache) anchored after message k. */
static void groups_after(qr_ctx *c, uint32_t k, bool user_side) {
    if (!c->ngroups) return; /* the usual case: no reminder anywhere */
    uint32_t f, n = qr_groups_at(c, k, &f);
    (void)user_side;
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) text_block(c->w, c->groups[g].text);
}

static void system_message(qr_ctx *c, const qstr *texts, uint32_t n) {
    qw *w = c->w;
    /* mid-conversation system messages are a beta feature: the envelope names it */
    qr_need_beta(c, "mid-conversation-system-2026-04-07");
    qw_obj_lit(w, "role", "system");
    qw_key(w, "content");
    qw_arr_begin(w);
    for (uint32_t i = 0; i < n; i++) text_block(w, texts[i]);
    qw_arr_end(w);
    qw_obj_end(w);
}

static void developer_groups_after(qr_ctx *c, uint32_t k) {
    if (!c->ngroups) return;
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot == QSLOT_DEVELOPER) system_message(c, &c->groups[g].text, 1);
}

static bool has_user_groups(const qr_ctx *c, uint32_t k) {
    if (!c->ngroups) return false;
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) return true;
    return false;
}

static void fold_system(qr_ctx *c) {
    qstr s = qr_system_joined(c);
    text_block(c->w, s);
}

/* A user wire message for runs [i, j); tail: also the tail user blocks. */
static void user_message(qr_ctx *c, uint32_t i, uint32_t j, bool fold, bool tail, uint32_t extra_anchor) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    qw_obj_lit(w, "role", "user");
    qw_key(w, "content");
    qw_arr_begin(w);
    /* pass 0: tool results (they must open the message) */
    for (uint32_t k = i; k < j; k++) {
        const qmsg *m = &t->msgs[k];
        if (m->role != QR_TOOL) continue;
        for (uint32_t b = 0; b < m->nblocks; b++) block(c, &m->blocks[b], k, b, false);
    }
    if (fold) fold_system(c);
    /* anchored blocks that first fired after an assistant message */
    if (extra_anchor != UINT32_MAX) groups_after(c, extra_anchor, true);
    /* pass 1: everything else, in order */
    for (uint32_t k = i; k < j; k++) {
        const qmsg *m = &t->msgs[k];
        if (m->role != QR_TOOL) {
            for (uint32_t b = 0; b < m->nblocks; b++) {
                if (qr_is_instruction(m)) text_block(w, qr_wrap_instruction(c, &m->blocks[b]));
                else block(c, &m->blocks[b], k, b, false);
            }
        }
        groups_after(c, k, true);
    }
    if (tail) groups_after(c, QR_TAIL, true);
    qw_arr_end(w);
    qw_obj_end(w);
}

static void assistant_message(qr_ctx *c, uint32_t i, uint32_t j) {
    qw *w = c->w;
    qw_obj_lit(w, "role", "assistant");
    qw_key(w, "content");
    qw_arr_begin(w);
    for (uint32_t k = i; k < j; k++) {
        const qmsg *m = &c->t->msgs[k];
        for (uint32_t b = 0; b < m->nblocks; b++) block(c, &m->blocks[b], k, b, false);
    }
    qw_arr_end(w);
    qw_obj_end(w);
}

/* Request parameters (docs/params.md): after messages, in this order:
 * stop_sequences, temperature, top_p, top_k, tool_choice, output_config,
 * thinking, metadata, stream. */
static void write_params(qr_ctx *c) {
    const qparams *p = c->params;
    qw *w = c->w;
    bool thinking = qr_thinking_budget(c);
    if (qval_present(p->stop)) { qw_key(w, "stop_sequences"); qr_write_stop(c); }
    if (qval_present(p->temperature) && !qr_param_above(c, "temperature", p->temperature, 1)) {
        if (thinking && qp_number(p->temperature) != 1)
            qr_param_unsupported(c, "temperature", "extended thinking runs at the default temperature");
        else { qw_key(w, "temperature"); qw_qval(w, p->temperature); }
    }
    if (qval_present(p->top_p)) { qw_key(w, "top_p"); qw_qval(w, p->top_p); }
    if (qval_present(p->top_k)) {
        if (thinking) qr_param_unsupported(c, "topK", "extended thinking takes no top_k");
        else { qw_key(w, "top_k"); qw_qval(w, p->top_k); }
    }
    if (qval_present(p->seed)) qr_param_unsupported(c, "seed", "the Messages API has no seed");
    if (p->tool_choice != QP_TC_UNSET || p->parallel_tool_calls >= 0) {
        bool forced = p->tool_choice == QP_TC_REQUIRED || p->tool_choice == QP_TC_TOOL;
        if (thinking && forced) {
            qr_param_unsupported(c, "toolChoice", "extended thinking allows only auto or none");
        } else if (p->tool_choice == QP_TC_NONE && p->parallel_tool_calls >= 0) {
            qr_param_unsupported(c, "parallelToolCalls", "tool_choice none takes no disable_parallel_tool_use");
        } else {
            qw_key(w, "tool_choice");
            qw_obj_begin(w);
            qw_key(w, "type");
            switch (p->tool_choice) {
            case QP_TC_NONE: qw_lit(w, "none"); break;
            case QP_TC_REQUIRED: qw_lit(w, "any"); break;
            case QP_TC_TOOL: qw_lit(w, "tool"); qw_key(w, "name"); qr_write_tool_name(c, qstr_node(p->tool_name.doc, p->tool_name.idx), QR_NAME_CHOICE); break;
            case QP_TC_UNSET: case QP_TC_AUTO: qw_lit(w, "auto"); break;
            }
            if (p->parallel_tool_calls >= 0) { qw_key(w, "disable_parallel_tool_use"); qw_bool(w, !p->parallel_tool_calls); }
            qw_obj_end(w);
        }
    }
    if (p->format == QP_RF_JSON) {
        qr_param_unsupported(c, "responseFormat", "JSON output takes a schema (responseFormat jsonSchema)");
    } else if (p->format == QP_RF_SCHEMA) {
        qw_key(w, "output_config");
        qw_obj_begin(w);
        qw_key(w, "format");
        qw_obj_lit(w, "type", "json_schema");
        qw_key(w, "schema"); qw_qval(w, p->format_schema);
        qw_obj_end(w);
        qw_obj_end(w);
    }
    if (qval_present(p->effort)) qr_param_unsupported(c, "reasoning.effort", "thinking takes a token budget (reasoning budgetTokens)");
    if (thinking) {
        double b = qp_number(p->budget_tokens);
        if (b < 1024 || b >= (double)(c->max_tokens ? c->max_tokens : 4096)) {
            if (!c->st)
                c->st = q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/reasoning/budgetTokens",
                                 "a thinking budget is at least 1024 and less than max_tokens (%u)",
                                 c->max_tokens ? c->max_tokens : 4096);
        } else {
            qw_key(w, "thinking");
            qw_obj_lit(w, "type", "enabled");
            qw_key(w, "budget_tokens"); qw_qval(w, p->budget_tokens);
            qw_obj_end(w);
        }
    }
    if (qval_present(p->user)) {
        qw_key(w, "metadata");
        qw_obj_begin(w);
        qw_key(w, "user_id"); qw_qval(w, p->user);
        qw_obj_end(w);
    }
    if (p->stream >= 0) { qw_key(w, "stream"); qw_bool(w, p->stream == 1); }
}

quire_status qr_encode_anthropic(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    qw_obj_begin(w);
    qw_key(w, "model"); qw_strz(w, c->model);
    qw_key(w, "max_tokens"); qw_int(w, c->max_tokens ? c->max_tokens : 4096);
    bool fold = qr_fold_system(c);
    if (!fold && qr_has_system(c)) {
        qw_key(w, "system");
        qw_arr_begin(w);
        for (uint32_t i = 0; t->has_system && i < t->nsystem; i++) {
            qw_obj_lit(w, "type", "text");
            qw_key_qstr(w, "text", t->system[i].text);
            mark(c, QRS_SYSTEM, i, 0);
            qw_obj_end(w);
        }
        if (qstr_present(c->sys_extra)) text_block(w, c->sys_extra);
        qw_arr_end(w);
    }
    if (t->has_tools && t->ntools) {
        qw_key(w, "tools");
        qw_arr_begin(w);
        for (uint32_t i = 0; i < t->ntools; i++) {
            const qtool *tl = &t->tools[i];
            if (tl->kind == QTK_CUSTOM) { qr_tool_unsupported(c, i, "a custom (freeform) tool"); continue; }
            if (tl->kind == QTK_PROVIDER) {
                /* the provider's own tool item, member by member byte-exact, plus a planned marker */
                if (!qr_is_provider(c, tl->provider)) { qr_tool_unsupported(c, i, "a provider tool of another provider"); continue; }
                const qj_doc *d = tl->item.doc;
                bool own_cc = qj_get(d, tl->item.idx, "cache_control") != QJ_NONE;
                qw_obj_begin(w);
                uint32_t k = tl->item.idx + 1;
                for (uint32_t m = 0; m < qj_at(d, tl->item.idx)->n; m++, k = qj_next(d, k + 1)) {
                    qw_key_esc(w, qj_at(d, k)->p, qj_at(d, k)->len);
                    qw_node(w, d, k + 1);
                }
                if (!own_cc) mark(c, QRS_TOOL, i, 0);
                qw_obj_end(w);
                c->verbatim = true;
                continue;
            }
            qw_obj_begin(w);
            qw_key(w, "name"); qr_write_tool_name(c, tl->name, QR_NAME_TOOLS);
            if (qstr_present(tl->description)) { qw_key_qstr(w, "description", tl->description); }
            qw_key(w, "input_schema"); qw_qval(w, tl->input_schema);
            mark(c, QRS_TOOL, i, 0);
            qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    qr_seg_opts so = {true, true, c->caps.developer != QDEV_NONE, true};
    uint32_t nr = 0;
    /* the memo's reused prefix (memo.h): its runs are not cut again */
    qr_run pf_first, pf_last;
    uint32_t pf_msgs = 0, pf = qr_memo_prefix(c, &pf_first, &pf_last, &pf_msgs);
    qr_run *runs = qr_segment_after(c, &so, pf, &pf_first, &pf_last, &nr);
    if (!runs) return q_oom(c->err);
    qw_key(w, "messages");
    qw_arr_begin(w);
    qr_memo_head(c);
    uint32_t nwire = 0;
    bool tail_user = qr_has_tail_user(c);
    /* the first message must be user */
    if (nr == 0 || runs[0].role != QW_USER) {
        if (nr > 0 || fold || tail_user) {
            /* an opening user turn: the folded system prompt, or a placeholder */
            bool only_tail = nr == 0 && !fold;
            if (!only_tail) {
                qw_obj_lit(w, "role", "user");
                qw_key(w, "content");
                qw_arr_begin(w);
                if (fold) fold_system(c);
                else text_block(w, qstr_lit("(continued)"));
                if (nr == 0) groups_after(c, QR_TAIL, true);
                qw_arr_end(w);
                qw_obj_end(w);
                nwire++;
                if (!fold) qr_event_adjusted(c, "inserted_user_turn", 0, "the first message must be a user message");
                fold = false;
                if (nr == 0) tail_user = false;
            }
        }
    }
    uint32_t r0 = 0;
    if (pf) {
        uint32_t pw = 0;
        if (qr_memo_skip(c, pf, &pw)) {
            nwire += pw;
            r0 = pf;
        } else if (!(runs = qr_segment(c, &so, &nr))) {
            return q_oom(c->err);
        }
    }
    for (uint32_t r = r0; r < nr; r++) {
        const qr_run *run = &runs[r];
        bool last = r + 1 == nr;
        uint32_t prev_anchor = UINT32_MAX;
        if ((run->role == QW_USER || run->role == QW_TOOL) && r > 0 && runs[r - 1].role == QW_ASSISTANT &&
            has_user_groups(c, runs[r - 1].j - 1))
            prev_anchor = runs[r - 1].j - 1;
        /* a run keeps its bytes unless it carries the folded system prompt,
         * the tail or blocks anchored before it (memo.h) */
        qr_unit u;
        if (qr_unit_begin(c, &u, run->i, run->j, (uint32_t)run->role,
                          !fold && !(last && tail_user) && prev_anchor == UINT32_MAX)) {
            nwire += u.nwire;
            continue;
        }
        switch (run->role) {
        case QW_USER:
        case QW_TOOL: {
            user_message(c, run->i, run->j, fold, last && tail_user, prev_anchor);
            fold = false;
            if (last) tail_user = false;
            break;
        }
        case QW_ASSISTANT:
            assistant_message(c, run->i, run->j);
            break;
        case QW_SYSTEM: {
            const qmsg *m = &t->msgs[run->i];
            qstr *texts = qarena_calloc(&c->scratch, m->nblocks ? m->nblocks : 1, sizeof(qstr));
            if (!texts) return q_oom(c->err);
            for (uint32_t b = 0; b < m->nblocks; b++) texts[b] = m->blocks[b].text;
            system_message(c, texts, m->nblocks);
            break;
        }
        }
        nwire++;
        /* developer groups anchored inside this run follow it */
        for (uint32_t k = run->i; k < run->j; k++) developer_groups_after(c, k);
        /* user blocks anchored after the last assistant message with no user run following */
        if (run->role == QW_ASSISTANT && (last || runs[r + 1].role != QW_USER) && has_user_groups(c, run->j - 1)) {
            qw_obj_lit(w, "role", "user");
            qw_key(w, "content");
            qw_arr_begin(w);
            groups_after(c, run->j - 1, true);
            if (last && tail_user) { groups_after(c, QR_TAIL, true); tail_user = false; }
            qw_arr_end(w);
            qw_obj_end(w);
        }
        u.nwire = 1;
        qr_unit_end(c, &u);
    }
    if (tail_user) {
        /* the transcript ends with an assistant or system message: a new user turn */
        qw_obj_lit(w, "role", "user");
        qw_key(w, "content");
        qw_arr_begin(w);
        groups_after(c, QR_TAIL, true);
        qw_arr_end(w);
        qw_obj_end(w);
        nwire++;
    }
    developer_groups_after(c, QR_TAIL);
    qw_arr_end(w);
    write_params(c);
    qw_obj_end(w);
    if (nwire == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/messages",
                        "an Anthropic request needs at least one message");
    return QUIRE_OK;
}
