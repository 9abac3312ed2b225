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

static void mark(qr_ctx *c, qr_site site, uint32_t a, uint32_t b) {
    const qr_mark *m = qr_mark_at(c, site, a, b);
    if (!m) return;
    qw_key(c->w, "cache_control");
    qr_write_cache_control(c, m);
}

static void source(qw *w, const qblock *b, bool document) {
    qw_key(w, "source");
    qw_obj_begin(w);
    if (qstr_present(b->url)) {
        qw_key(w, "type"); qw_strz(w, "url");
        qw_key(w, "url"); qw_qstr(w, b->url);
    } else if (document && qstr_eq(b->media_type, "text/plain")) {
        qw_key(w, "type"); qw_strz(w, "text");
        qw_key(w, "media_type"); qw_qstr(w, b->media_type);
        qw_key(w, "data"); qw_qstr(w, b->data);
    } else {
        qw_key(w, "type"); qw_strz(w, "base64");
        qw_key(w, "media_type"); qw_qstr(w, b->media_type);
        qw_key(w, "data"); qw_qstr(w, b->data);
    }
    qw_obj_end(w);
}

static void text_block(qw *w, qstr text) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text"); qw_qstr(w, text);
    qw_obj_end(w);
}

/* One content block of message mi (bi = its index; parts of a tool result use
 * the result's index). */
static void block(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi, bool part) {
    qw *w = c->w;
    switch (b->type) {
    case QB_TEXT:
        if (b->text.len == 0) { qr_unsupported(c, mi, (int32_t)bi, "an empty text block"); return; }
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "text");
        qw_key(w, "text"); qw_qstr(w, b->text);
        if (!part) mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    case QB_IMAGE:
    case QB_DOCUMENT:
        if (b->type == QB_DOCUMENT && !c->caps.documents) { qr_unsupported(c, mi, (int32_t)bi, "a document block"); return; }
        if (qstr_present(b->url) && !c->caps.image_urls) { qr_unsupported(c, mi, (int32_t)bi, "a block by URL"); return; }
        if (b->type == QB_DOCUMENT && !qstr_present(b->url) && !qstr_eq(b->media_type, "application/pdf") &&
            !qstr_eq(b->media_type, "text/plain")) {
            /* base64 documents are PDFs; plain text goes as a text source */
            qr_unsupported(c, mi, (int32_t)bi, "a document that is neither application/pdf nor text/plain");
            return;
        }
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, b->type == QB_IMAGE ? "image" : "document");
        source(w, b, b->type == QB_DOCUMENT);
        if (qstr_present(b->title)) { qw_key(w, "title"); qw_qstr(w, b->title); }
        if (!part) mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    case QB_TOOL_CALL:
        if (!qr_tool_input_ok(c, mi, bi, b)) return;
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "tool_use");
        qw_key(w, "id"); qw_qstr(w, b->id);
        qw_key(w, "name"); qw_qstr(w, b->name);
        qw_key(w, "input"); qr_write_tool_input(c, b);
        mark(c, QRS_BLOCK, mi, bi);
        qw_obj_end(w);
        return;
    case QB_TOOL_RESULT:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "tool_result");
        qw_key(w, "tool_use_id"); qw_qstr(w, b->tool_call_id);
        qw_key(w, "content");
        if (b->content_is_string) {
            qw_qstr(w, b->content_text);
        } else {
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
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "thinking");
        qw_key(w, "thinking"); qw_qstr(w, b->text);
        if (qstr_present(b->signature)) { qw_key(w, "signature"); qw_qstr(w, b->signature); }
        qw_obj_end(w);
        return;
    case QB_REDACTED_THINKING:
        if (!c->caps.thinking) { qr_drop_artefact(c, mi, bi, "redactedThinking block: the row has no thinking"); return; }
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "redacted_thinking");
        qw_key(w, "data"); qw_qstr(w, b->data);
        qw_obj_end(w);
        return;
    case QB_OPAQUE:
        if (qstr_eq(b->provider, "anthropic")) { qw_qval(w, b->item); return; }
        qr_drop_artefact(c, mi, bi, "opaque item of another provider");
        return;
    }
}

/* The user blocks (user_block, ephemeral_cache) anchored after message k. */
static void groups_after(qr_ctx *c, uint32_t k, bool user_side) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    (void)user_side;
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot != QSLOT_DEVELOPER) text_block(c->w, c->groups[g].text);
}

static void system_message(qr_ctx *c, const qstr *texts, uint32_t n) {
    qw *w = c->w;
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "system");
    qw_key(w, "content");
    qw_arr_begin(w);
    for (uint32_t i = 0; i < n; i++) text_block(w, texts[i]);
    qw_arr_end(w);
    qw_obj_end(w);
}

static void developer_groups_after(qr_ctx *c, uint32_t k) {
    uint32_t f, n = qr_groups_at(c, k, &f);
    for (uint32_t g = f; g < f + n; g++)
        if (c->groups[g].slot == QSLOT_DEVELOPER) system_message(c, &c->groups[g].text, 1);
}

static bool has_user_groups(const qr_ctx *c, uint32_t k) {
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
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "user");
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
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, "assistant");
    qw_key(w, "content");
    qw_arr_begin(w);
    for (uint32_t k = i; k < j; k++) {
        const qmsg *m = &c->t->msgs[k];
        for (uint32_t b = 0; b < m->nblocks; b++) block(c, &m->blocks[b], k, b, false);
    }
    qw_arr_end(w);
    qw_obj_end(w);
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
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "text");
            qw_key(w, "text"); qw_qstr(w, t->system[i].text);
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
            qw_obj_begin(w);
            qw_key(w, "name"); qw_qstr(w, tl->name);
            if (qstr_present(tl->description)) { qw_key(w, "description"); qw_qstr(w, tl->description); }
            qw_key(w, "input_schema"); qw_qval(w, tl->input_schema);
            mark(c, QRS_TOOL, i, 0);
            qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    qr_seg_opts so = {true, true, c->caps.developer != QDEV_NONE, true};
    uint32_t nr = 0;
    qr_run *runs = qr_segment(c, &so, &nr);
    if (!runs) return q_oom(c->err);
    qw_key(w, "messages");
    qw_arr_begin(w);
    uint32_t nwire = 0;
    bool tail_user = qr_has_tail_user(c);
    /* the first message must be user */
    if (nr == 0 || runs[0].role != QW_USER) {
        if (nr > 0 || fold || tail_user) {
            /* an opening user turn: the folded system prompt, or a placeholder */
            bool only_tail = nr == 0 && !fold;
            if (!only_tail) {
                qw_obj_begin(w);
                qw_key(w, "role"); qw_strz(w, "user");
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
    for (uint32_t r = 0; r < nr; r++) {
        const qr_run *run = &runs[r];
        bool last = r + 1 == nr;
        switch (run->role) {
        case QW_USER:
        case QW_TOOL: {
            uint32_t prev_anchor = UINT32_MAX;
            if (r > 0 && runs[r - 1].role == QW_ASSISTANT && has_user_groups(c, runs[r - 1].j - 1))
                prev_anchor = runs[r - 1].j - 1;
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
            qw_obj_begin(w);
            qw_key(w, "role"); qw_strz(w, "user");
            qw_key(w, "content");
            qw_arr_begin(w);
            groups_after(c, run->j - 1, true);
            if (last && tail_user) { groups_after(c, QR_TAIL, true); tail_user = false; }
            qw_arr_end(w);
            qw_obj_end(w);
        }
    }
    if (tail_user) {
        /* the transcript ends with an assistant or system message: a new user turn */
        qw_obj_begin(w);
        qw_key(w, "role"); qw_strz(w, "user");
        qw_key(w, "content");
        qw_arr_begin(w);
        groups_after(c, QR_TAIL, true);
        qw_arr_end(w);
        qw_obj_end(w);
        nwire++;
    }
    developer_groups_after(c, QR_TAIL);
    qw_arr_end(w);
    qw_obj_end(w);
    if (nwire == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/messages",
                        "an Anthropic request needs at least one message");
    return QUIRE_OK;
}
