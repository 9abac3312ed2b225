/* Anthropic Messages encoder (dialect anthropic_messages). */
#include "render/render.h"

static void cache_control(qw *w, qval cc) {
    if (!qval_present(cc)) return;
    qw_key(w, "cache_control");
    qw_qval(w, cc);
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

static void text_block(qw *w, qstr text, qval cc) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text"); qw_qstr(w, text);
    cache_control(w, cc);
    qw_obj_end(w);
}

/* Writes one block; returns false when the block has no Anthropic form (dropped). */
static bool block(qr_ctx *c, const qblock *b, uint32_t mi, uint32_t bi) {
    qw *w = c->w;
    switch (b->type) {
    case QB_TEXT:
        text_block(w, b->text, b->cache_control);
        return true;
    case QB_IMAGE:
    case QB_DOCUMENT:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, b->type == QB_IMAGE ? "image" : "document");
        source(w, b, b->type == QB_DOCUMENT);
        if (qstr_present(b->title)) { qw_key(w, "title"); qw_qstr(w, b->title); }
        cache_control(w, b->cache_control);
        qw_obj_end(w);
        return true;
    case QB_TOOL_CALL:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "tool_use");
        qw_key(w, "id"); qw_qstr(w, b->id);
        qw_key(w, "name"); qw_qstr(w, b->name);
        qw_key(w, "input"); qw_qval(w, b->input);
        cache_control(w, b->cache_control);
        qw_obj_end(w);
        return true;
    case QB_TOOL_RESULT:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "tool_result");
        qw_key(w, "tool_use_id"); qw_qstr(w, b->tool_call_id);
        qw_key(w, "content");
        if (b->content_is_string) {
            qw_qstr(w, b->content_text);
        } else {
            qw_arr_begin(w);
            for (uint32_t i = 0; i < b->nparts; i++) block(c, &b->parts[i], mi, bi);
            qw_arr_end(w);
        }
        if (b->is_error >= 0) { qw_key(w, "is_error"); qw_bool(w, b->is_error == 1); }
        cache_control(w, b->cache_control);
        qw_obj_end(w);
        return true;
    case QB_THINKING:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "thinking");
        qw_key(w, "thinking"); qw_qstr(w, b->text);
        if (qstr_present(b->signature)) { qw_key(w, "signature"); qw_qstr(w, b->signature); }
        qw_obj_end(w);
        return true;
    case QB_REDACTED_THINKING:
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "redacted_thinking");
        qw_key(w, "data"); qw_qstr(w, b->data);
        qw_obj_end(w);
        return true;
    case QB_OPAQUE:
        if (qstr_eq(b->provider, "anthropic")) { qw_qval(w, b->item); return true; }
        qr_event_dropped_block(c, mi, bi, "not_renderable", "opaque item of another provider");
        return false;
    }
    return false;
}

static const char *wire_role(qrole r) {
    switch (r) {
    case QR_ASSISTANT: return "assistant";
    case QR_USER: case QR_TOOL: case QR_SYSTEM: case QR_DEVELOPER: return "user";
    }
    return "user";
}

/* Writes the blocks of messages [i, j) that form one wire message; tool
 * results first so they directly follow the assistant's tool_use turn. */
static void group(qr_ctx *c, uint32_t i, uint32_t j) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    qw_obj_begin(w);
    qw_key(w, "role"); qw_strz(w, wire_role(t->msgs[i].role));
    qw_key(w, "content");
    qw_arr_begin(w);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t k = i; k < j; k++) {
            const qmsg *m = &t->msgs[k];
            if ((pass == 0) != (m->role == QR_TOOL)) continue;
            if (m->role == QR_SYSTEM || m->role == QR_DEVELOPER) {
                /* harness instructions inside the conversation, wrapped */
                for (uint32_t b = 0; b < m->nblocks; b++) {
                    qbuf tmp;
                    qbuf_init(&tmp, c->w->b->a);
                    qbuf_puts(&tmp, "<system-reminder>\n");
                    qbuf_put_qstr(&tmp, m->blocks[b].text);
                    qbuf_puts(&tmp, "\n</system-reminder>");
                    if (tmp.oom) { c->w->b->oom = true; qbuf_free(&tmp); continue; }
                    qval none = {0};
                    text_block(w, qstr_plain(tmp.data, tmp.len), none);
                    qbuf_free(&tmp);
                }
                continue;
            }
            for (uint32_t b = 0; b < m->nblocks; b++) block(c, &m->blocks[b], k, b);
        }
    }
    qw_arr_end(w);
    qw_obj_end(w);
}

quire_status qr_encode_anthropic(qr_ctx *c) {
    const quire_transcript *t = c->t;
    qw *w = c->w;
    if (t->nmsgs == 0)
        return q_err_at(c->err, QUIRE_E_UNSUPPORTED, SIZE_MAX, "/messages",
                        "an Anthropic request needs at least one message");
    qw_obj_begin(w);
    qw_key(w, "model"); qw_strz(w, c->model);
    qw_key(w, "max_tokens"); qw_int(w, c->max_tokens);
    if (t->has_system && t->nsystem) {
        qw_key(w, "system");
        qw_arr_begin(w);
        for (uint32_t i = 0; i < t->nsystem; i++) text_block(w, t->system[i].text, t->system[i].cache_control);
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
            cache_control(w, tl->cache_control);
            qw_obj_end(w);
        }
        qw_arr_end(w);
    }
    qw_key(w, "messages");
    qw_arr_begin(w);
    uint32_t i = 0;
    while (i < t->nmsgs) {
        const char *role = wire_role(t->msgs[i].role);
        uint32_t j = i + 1;
        while (j < t->nmsgs && wire_role(t->msgs[j].role) == role) j++;
        group(c, i, j);
        i = j;
    }
    qw_arr_end(w);
    qw_obj_end(w);
    return QUIRE_OK;
}
