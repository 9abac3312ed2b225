/* Codex rollout JSONL -> quire.session/1 (docs/replay.md).
 *
 * A rollout records the Responses API items Codex sent and received
 * (`response_item`), the turn settings (`turn_context`: the model), UI events
 * (`event_msg`, dropped: they duplicate response items) and compactions
 * (`compacted`). Items map one to one onto transcript content:
 *   message (user | developer | system)   -> a message of that role, one per item
 *   message (assistant), function_call, custom_tool_call, reasoning, other
 *   output items                         -> blocks of one assistant message per
 *                                           model response, with a `render`
 *                                           before it (a custom_tool_call, e.g.
 *                                           apply_patch, is a toolCall of kind
 *                                           "custom" whose string input is kept
 *                                           byte-exact)
 *   function_call_output, custom_tool_call_output
 *                                         -> toolResult blocks of a tool message
 *   reasoning, web_search_call, other *_output items, ...
 *                                         -> `opaque` openai_responses items
 * A model response starts at the first output item after an input item or
 * after a token_count event (Codex writes one after every response).
 */
#include "session/import.h"

#include <stdio.h>

typedef enum { R_NONE, R_ASSISTANT, R_TOOL } cur_role;

typedef struct cxblock {
    const qj_doc *d;
    uint32_t node;
    uint8_t kind; /* 0 message content part, 1 function_call, 2 function_call_output, 3 opaque item,
                     4 custom_tool_call */
} cxblock;

typedef struct cx {
    qimport_ctx *c;
    qarena ar;
    qj_doc **docs;
    uint32_t ndocs, capdocs;
    cur_role role;
    cxblock *blocks;
    uint32_t nblocks, capblocks;
    bool need_render;
    bool bare;          /* the pre-envelope rollout form: bare response items */
    uint32_t cur_line;  /* the rollout line being read */
    uint32_t msg_line;  /* the line of the first block of the message being built */
    bool in_history;    /* converting a compaction's replacement_history: no _meta lines */
    uint32_t states;    /* its {"record_type": ...} markers */
    const qj_doc *model_d;        /* current turn_context model */
    uint32_t model;
    const qj_doc *session_model_d; /* the model written in the session line */
    uint32_t session_model;
    qmap calls;                    /* call_id -> 1 (awaiting its output) or 2 (answered) */
    cxblock *pend;                 /* function calls of the open turn still awaiting output */
    uint32_t npend, cappend;
    qbuf body;                     /* the log after the session line */
    uint32_t lines, renders, messages, compacts, skipped_invalid, events, dropped, unknown;
    quire_status st;
} cx;

static void w_opaque(qw *w, const qj_doc *d, uint32_t item) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "opaque");
    qw_key(w, "provider"); qw_strz(w, "openai_responses");
    qw_key(w, "item"); qw_node(w, d, item);
    qw_obj_end(w);
}

/* input_image {image_url} -> image {mediaType, data} | {url}. */
static void w_image(cx *s, qw *w, const qj_doc *d, uint32_t part) {
    uint32_t u = q_import_str(d, part, "image_url");
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "image");
    size_t n = 0;
    const char *url = u != QJ_NONE ? qj_str_decode(d, u, &s->ar, &n) : NULL;
    const char *semi = url && n > 5 && memcmp(url, "data:", 5) == 0 ? strstr(url, ";base64,") : NULL;
    if (semi) {
        qw_key(w, "mediaType"); qw_str(w, url + 5, (size_t)(semi - url - 5));
        qw_key(w, "data"); qw_str(w, semi + 8, n - (size_t)(semi + 8 - url));
    } else {
        qw_key(w, "url");
        if (u != QJ_NONE) qw_node(w, d, u); else qw_str(w, "", 0);
    }
    qw_obj_end(w);
}

/* One content part of a message item; false when it has no quire form. */
/* providerOptions {"openai_responses": {field: value}}: an item field the
 * Responses encoder writes back (an assistant message's phase, a call's
 * namespace; docs/transcript.md). */
static void w_item_option(qw *w, const qj_doc *d, const char *field, uint32_t v) {
    if (v == QJ_NONE) return;
    qw_key(w, "providerOptions");
    qw_obj_begin(w);
    qw_key(w, "openai_responses");
    qw_obj_begin(w);
    qw_key(w, field);
    qw_node(w, d, v);
    qw_obj_end(w);
    qw_obj_end(w);
}

/* A content part; phase (or QJ_NONE): the assistant message item's phase. */
static void w_part(cx *s, qw *w, const qj_doc *d, uint32_t part, uint32_t phase) {
    uint32_t ty = q_import_str(d, part, "type");
    uint32_t tx = q_import_str(d, part, "text");
    if (ty != QJ_NONE && tx != QJ_NONE &&
        (qj_str_eq(d, ty, "input_text") || qj_str_eq(d, ty, "output_text") || qj_str_eq(d, ty, "text"))) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "text");
        qw_key(w, "text"); qw_node(w, d, tx);
        w_item_option(w, d, "phase", phase);
        qw_obj_end(w);
    } else if (ty != QJ_NONE && qj_str_eq(d, ty, "input_image")) {
        w_image(s, w, d, part);
    } else {
        /* refusal and other parts: kept as their JSON text */
        if (!q_import_w_json_text(w, d, part, s->c->a)) s->st = q_oom(s->c->err);
    }
}

static void w_tool_call(cx *s, qw *w, const qj_doc *d, uint32_t item) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "toolCall");
    qw_key(w, "id");
    uint32_t id = q_import_str(d, item, "call_id");
    if (id == QJ_NONE) id = q_import_str(d, item, "id");
    if (id != QJ_NONE) qw_node(w, d, id); else qw_str(w, "", 0);
    qw_key(w, "name");
    uint32_t nm = q_import_str(d, item, "name");
    if (nm != QJ_NONE) qw_node(w, d, nm); else qw_str(w, "", 0);
    qw_key(w, "input");
    uint32_t args = qj_get(d, item, "arguments");
    if (args == QJ_NONE) {
        qw_obj_begin(w);
        qw_obj_end(w);
    } else if (qj_type_of(d, args) != QJ_STRING) {
        qw_node(w, d, args);
    } else {
        /* arguments is JSON text inside a string: the parsed value when it
         * parses, the string itself otherwise (e.g. redacted logs) */
        size_t n;
        const char *txt = qj_str_decode(d, args, &s->ar, &n);
        qj_doc ad;
        quire_error pe;
        bool ok = txt && qj_parse(&ad, txt, n, NULL, s->c->a, &pe) == QUIRE_OK;
        if (ok) {
            /* the argument text as logged, spacing included, unless it
             * spans lines (a JSONL line must stay one line) */
            if (memchr(txt, '\n', n) || memchr(txt, '\r', n)) qw_node(w, &ad, 0);
            else qw_raw_value(w, txt, n);
            qj_doc_free(&ad);
        } else {
            qw_node(w, d, args);
        }
    }
    w_item_option(w, d, "namespace", q_import_str(d, item, "namespace"));
    qw_obj_end(w);
}

/* custom_tool_call {call_id, name, input: string} -> toolCall kind custom. */
static void w_custom_call(qw *w, const qj_doc *d, uint32_t item) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "toolCall");
    qw_key(w, "kind"); qw_strz(w, "custom");
    qw_key(w, "id"); qw_node(w, d, q_import_str(d, item, "call_id"));
    qw_key(w, "name");
    uint32_t nm = q_import_str(d, item, "name");
    if (nm != QJ_NONE) qw_node(w, d, nm); else qw_str(w, "", 0);
    qw_key(w, "input");
    uint32_t in = q_import_str(d, item, "input");
    if (in != QJ_NONE) qw_node(w, d, in); else qw_str(w, "", 0);
    qw_obj_end(w);
}

static void w_tool_result(cx *s, qw *w, const qj_doc *d, uint32_t item) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "toolResult");
    qw_key(w, "toolCallId"); qw_node(w, d, q_import_str(d, item, "call_id"));
    qw_key(w, "content");
    uint32_t out = qj_get(d, item, "output");
    if (out == QJ_NONE || qj_type_of(d, out) == QJ_NULL) {
        qw_str(w, "", 0);
    } else if (qj_type_of(d, out) == QJ_STRING) {
        qw_node(w, d, out);
    } else if (qj_type_of(d, out) == QJ_ARRAY) {
        qw_arr_begin(w);
        uint32_t p = out + 1;
        for (uint32_t k = 0; k < qj_at(d, out)->n; k++, p = qj_next(d, p)) w_part(s, w, d, p, QJ_NONE);
        qw_arr_end(w);
    } else {
        /* {content, success} objects of older rollouts: the content text */
        uint32_t ct = q_import_str(d, out, "content");
        if (ct != QJ_NONE) {
            qw_node(w, d, ct);
        } else if (!q_import_w_json_string(w, d, out, s->c->a)) {
            s->st = q_oom(s->c->err);
        }
    }
    qw_obj_end(w);
}

/* _meta.line of a log line written from rollout line lineno; none inside a
 * compaction's replacement history (converted apart, then taken as messages). */
static void w_line(const cx *s, qw *w, uint32_t lineno) {
    if (!s->in_history) q_w_meta_line(w, lineno);
}

static void flush(cx *s) {
    if (s->role == R_NONE || s->nblocks == 0) { s->role = R_NONE; s->nblocks = 0; return; }
    qw w;
    q_log_message_begin(&w, &s->body, s->role == R_ASSISTANT ? "assistant" : "tool");
    qw_key(&w, "content");
    qw_arr_begin(&w);
    for (uint32_t i = 0; i < s->nblocks; i++) {
        cxblock *b = &s->blocks[i];
        switch (b->kind) {
        case 0: {
            uint32_t ct = qj_get(b->d, b->node, "content");
            if (ct != QJ_NONE && qj_type_of(b->d, ct) == QJ_ARRAY) {
                uint32_t p = ct + 1;
                uint32_t ph = q_import_str(b->d, b->node, "phase");
                for (uint32_t k = 0; k < qj_at(b->d, ct)->n; k++, p = qj_next(b->d, p)) w_part(s, &w, b->d, p, ph);
            }
            break;
        }
        case 1: w_tool_call(s, &w, b->d, b->node); break;
        case 2: w_tool_result(s, &w, b->d, b->node); break;
        case 4: w_custom_call(&w, b->d, b->node); break;
        default: w_opaque(&w, b->d, b->node); break;
        }
    }
    qw_arr_end(&w);
    qw_obj_end(&w);
    w_line(s, &w, s->msg_line);
    q_log_line_end(&w, &s->body);
    s->messages++;
    s->role = R_NONE;
    s->nblocks = 0;
}

/* Calls that got no output before the conversation moved on: a tool message
 * answers each with an error result saying so, so the log stays a valid
 * conversation (every provider rejects an unanswered call). */
static void answer_pending(cx *s, uint32_t lineno) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->npend; i++) {
        const cxblock *b = &s->pend[i];
        uint32_t id = q_import_str(b->d, b->node, "call_id");
        if (id == QJ_NONE) id = q_import_str(b->d, b->node, "id");
        if (id != QJ_NONE && qmap_get(&s->calls, qj_at(b->d, id)->p, qj_at(b->d, id)->len) == 1) s->pend[n++] = *b;
    }
    s->npend = 0;
    if (!n) return;
    qw w;
    q_log_message_begin(&w, &s->body, "tool");
    qw_key(&w, "content");
    qw_arr_begin(&w);
    for (uint32_t i = 0; i < n; i++) {
        const cxblock *b = &s->pend[i];
        uint32_t id = q_import_str(b->d, b->node, "call_id");
        if (id == QJ_NONE) id = q_import_str(b->d, b->node, "id");
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "toolResult");
        qw_key(&w, "toolCallId"); qw_node(&w, b->d, id);
        qw_key(&w, "content"); qw_strz(&w, "[no output was recorded for this call]");
        qw_key(&w, "isError"); qw_bool(&w, true);
        qw_obj_end(&w);
        if (!qmap_put(&s->calls, qj_at(b->d, id)->p, qj_at(b->d, id)->len, 2)) s->st = q_oom(s->c->err);
    }
    qw_arr_end(&w);
    qw_obj_end(&w);
    q_log_line_end(&w, &s->body);
    s->messages++;
    q_import_report(s->c, lineno, "answered %u function call(s) that had no output with an error result", n);
}

static bool push(cx *s, const qj_doc *d, uint32_t node, uint8_t kind) {
    if (s->nblocks == s->capblocks) {
        uint32_t ncap = s->capblocks ? s->capblocks * 2 : 16;
        cxblock *nb = q_realloc(s->c->a, s->blocks, (size_t)s->capblocks * sizeof *nb, (size_t)ncap * sizeof *nb);
        if (!nb) return false;
        s->blocks = nb;
        s->capblocks = ncap;
    }
    cxblock b = {d, node, kind};
    if (s->nblocks == 0) s->msg_line = s->cur_line;
    s->blocks[s->nblocks++] = b;
    return true;
}

static bool same_str(const qj_doc *a, uint32_t x, const qj_doc *b, uint32_t y) {
    if (x == QJ_NONE || y == QJ_NONE) return x == y;
    return qj_at(a, x)->len == qj_at(b, y)->len && memcmp(qj_at(a, x)->p, qj_at(b, y)->p, qj_at(a, x)->len) == 0;
}

/* An output-side item (part of a model response). */
static void output_item(cx *s, const qj_doc *d, uint32_t item, uint8_t kind) {
    if (s->need_render || s->role != R_ASSISTANT) {
        flush(s);
        answer_pending(s, 0);
        if (s->messages == 0) { /* a response to nothing: kept as history, no model call to replay */
            s->need_render = false;
            s->role = R_ASSISTANT;
            if (!push(s, d, item, kind)) s->st = q_oom(s->c->err);
            return;
        }
        qw w;
        q_log_line_begin(&w, &s->body, "render");
        if (s->model != QJ_NONE && !same_str(s->model_d, s->model, s->session_model_d, s->session_model)) {
            qw_key(&w, "target");
            qw_obj_begin(&w);
            qw_key(&w, "provider"); qw_strz(&w, s->c->provider);
            qw_key(&w, "model"); qw_node(&w, s->model_d, s->model);
            qw_obj_end(&w);
        }
        w_line(s, &w, s->cur_line);
        q_log_line_end(&w, &s->body);
        s->renders++;
        s->need_render = false;
        s->role = R_ASSISTANT;
    }
    if (!push(s, d, item, kind)) s->st = q_oom(s->c->err);
}

/* A message item of an input role: its own message. */
static void input_message(cx *s, const qj_doc *d, uint32_t item, const char *role, uint32_t lineno) {
    uint32_t ct = qj_get(d, item, "content");
    uint32_t usable = 0;
    if (ct != QJ_NONE && qj_type_of(d, ct) == QJ_STRING) usable = 1;
    if (ct != QJ_NONE && qj_type_of(d, ct) == QJ_ARRAY) {
        uint32_t p = ct + 1;
        for (uint32_t k = 0; k < qj_at(d, ct)->n; k++, p = qj_next(d, p))
            if (strcmp(role, "user") == 0 || q_import_str(d, p, "text") != QJ_NONE) usable++;
    }
    if (!usable) { /* no provider accepts an empty message */
        q_import_report(s->c, lineno, "skipped: a %s message without content", role);
        s->unknown++;
        return;
    }
    flush(s);
    answer_pending(s, lineno);
    s->need_render = true;
    qw w;
    q_log_message_begin(&w, &s->body, role);
    qw_key(&w, "content");
    qw_arr_begin(&w);
    if (ct != QJ_NONE && qj_type_of(d, ct) == QJ_ARRAY) {
        uint32_t p = ct + 1;
        for (uint32_t k = 0; k < qj_at(d, ct)->n; k++, p = qj_next(d, p)) {
            if (strcmp(role, "user") != 0) {
                /* developer/system messages hold text only */
                uint32_t tx = q_import_str(d, p, "text");
                if (tx == QJ_NONE) continue;
            }
            w_part(s, &w, d, p, QJ_NONE);
        }
    } else if (ct != QJ_NONE && qj_type_of(d, ct) == QJ_STRING) {
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "text");
        qw_key(&w, "text"); qw_node(&w, d, ct);
        qw_obj_end(&w);
    }
    qw_arr_end(&w);
    qw_obj_end(&w);
    w_line(s, &w, lineno);
    q_log_line_end(&w, &s->body);
    s->messages++;
}

/* An output item with no transcript form: an opaque item in a user message. */
static void opaque_user_item(cx *s, const qj_doc *d, uint32_t p, uint32_t lineno) {
    flush(s);
    answer_pending(s, lineno);
    s->need_render = true;
    qw w;
    q_log_message_begin(&w, &s->body, "user");
    qw_key(&w, "content");
    qw_arr_begin(&w);
    w_opaque(&w, d, p);
    qw_arr_end(&w);
    qw_obj_end(&w);
    w_line(s, &w, lineno);
    q_log_line_end(&w, &s->body);
    s->messages++;
}

static void response_item(cx *s, const qj_doc *d, uint32_t p, uint32_t lineno) {
    s->cur_line = lineno;
    uint32_t ty = q_import_str(d, p, "type");
    if (ty == QJ_NONE) { q_import_report(s->c, lineno, "skipped: response_item without a type"); s->unknown++; return; }
    if (qj_str_eq(d, ty, "message")) {
        uint32_t role = q_import_str(d, p, "role");
        if (role != QJ_NONE && qj_str_eq(d, role, "assistant")) { output_item(s, d, p, 0); return; }
        const char *r = "user";
        if (role != QJ_NONE && qj_str_eq(d, role, "developer")) r = "developer";
        else if (role != QJ_NONE && qj_str_eq(d, role, "system")) r = "system";
        input_message(s, d, p, r, lineno);
        return;
    }
    bool custom = qj_str_eq(d, ty, "custom_tool_call") && q_import_str(d, p, "call_id") != QJ_NONE &&
                  q_import_str(d, p, "input") != QJ_NONE;
    if (qj_str_eq(d, ty, "function_call") || qj_str_eq(d, ty, "local_shell_call") || custom) {
        uint32_t id = q_import_str(d, p, "call_id");
        if (id == QJ_NONE) id = q_import_str(d, p, "id");
        if (id != QJ_NONE && qmap_get(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len) >= 0) {
            q_import_report(s->c, lineno, "dropped a second call with call_id %.*s (ids must be unique)",
                   (int)(qj_at(d, id)->len > 60 ? 60 : qj_at(d, id)->len), qj_at(d, id)->p);
            s->dropped++;
            return;
        }
        /* 1: a call the transcript holds; 3: one kept as an opaque item
         * (local_shell_call), whose output is kept opaque beside it */
        bool plain = qj_str_eq(d, ty, "function_call") || custom;
        if (id != QJ_NONE && !qmap_put(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len, plain ? 1 : 3)) {
            s->st = q_oom(s->c->err);
            return;
        }
        if (plain) {
            output_item(s, d, p, custom ? 4 : 1);
            if (id != QJ_NONE) {
                if (s->npend == s->cappend) {
                    uint32_t nc = s->cappend ? s->cappend * 2 : 8;
                    cxblock *np = q_realloc(s->c->a, s->pend, (size_t)s->cappend * sizeof *np, (size_t)nc * sizeof *np);
                    if (!np) { s->st = q_oom(s->c->err); return; }
                    s->pend = np;
                    s->cappend = nc;
                }
                cxblock b = {d, p, (uint8_t)(custom ? 4 : 1)};
                s->pend[s->npend++] = b;
            }
        } else {
            output_item(s, d, p, 3);
        }
        return;
    }
    uint32_t oid = q_import_str(d, p, "call_id");
    if (oid != QJ_NONE && (qj_str_eq(d, ty, "function_call_output") || qj_str_eq(d, ty, "custom_tool_call_output")) &&
        qmap_get(&s->calls, qj_at(d, oid)->p, qj_at(d, oid)->len) == 3) {
        /* the output of a call kept opaque (local_shell_call): opaque too, as
         * Codex sent it, so the two stay together for openai_responses */
        opaque_user_item(s, d, p, lineno);
        return;
    }
    if (qj_str_eq(d, ty, "function_call_output") ||
        (qj_str_eq(d, ty, "custom_tool_call_output") && q_import_str(d, p, "call_id") != QJ_NONE &&
         qmap_get(&s->calls, qj_at(d, q_import_str(d, p, "call_id"))->p, qj_at(d, q_import_str(d, p, "call_id"))->len) >= 0)) {
        uint32_t id = q_import_str(d, p, "call_id");
        if (id == QJ_NONE || qmap_get(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len) < 0) {
            q_import_report(s->c, lineno, "dropped a function_call_output for a call not in the conversation");
            s->dropped++;
            return;
        }
        if (qmap_get(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len) == 2) {
            q_import_report(s->c, lineno, "dropped a second function_call_output for one call");
            s->dropped++;
            return;
        }
        if (!qmap_put(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len, 2)) { s->st = q_oom(s->c->err); return; }
        s->need_render = true;
        if (s->role != R_TOOL) { flush(s); s->role = R_TOOL; }
        if (!push(s, d, p, 2)) s->st = q_oom(s->c->err);
        return;
    }
    if (qj_str_eq(d, ty, "ghost_snapshot")) { s->unknown++; return; } /* Codex-internal, never sent */
    size_t tl = qj_at(d, ty)->len;
    bool is_output = tl > 7 && memcmp(qj_at(d, ty)->p + tl - 7, "_output", 7) == 0;
    if (is_output) {
        /* custom_tool_call_output and friends: an opaque item in a user message */
        opaque_user_item(s, d, p, lineno);
        return;
    }
    output_item(s, d, p, 3); /* reasoning, custom_tool_call, web_search_call, ... */
}

/* compacted {message, replacement_history?} */
static void compacted(cx *s, const qj_doc *d, uint32_t p, uint32_t lineno) {
    flush(s);
    answer_pending(s, lineno);
    uint32_t msg = q_import_str(d, p, "message");
    uint32_t rh = qj_get(d, p, "replacement_history");
    if ((rh == QJ_NONE || qj_type_of(d, rh) != QJ_ARRAY) && s->messages == 0) {
        q_import_report(s->c, lineno, "skipped: a compaction summary before any message (nothing to summarise)");
        return;
    }
    s->need_render = true;
    s->compacts++;
    if (rh != QJ_NONE && qj_type_of(d, rh) == QJ_ARRAY) {
        /* the exact history Codex continued with: convert it in a scratch log */
        qbuf saved = s->body;
        qbuf_init(&s->body, s->c->a);
        bool nr = s->need_render;
        cur_role role = s->role;
        uint32_t renders = s->renders, messages = s->messages;
        uint32_t e = rh + 1;
        s->in_history = true;
        /* the history goes on from the replacement alone: its calls are
         * the only ones (one of them may repeat a call_id of before it) */
        qmap_free(&s->calls);
        qmap_init(&s->calls, s->c->a);
        s->npend = 0;
        for (uint32_t k = 0; k < qj_at(d, rh)->n; k++, e = qj_next(d, e)) {
            if (qj_type_of(d, e) != QJ_OBJECT) continue;
            response_item(s, d, e, lineno);
        }
        flush(s);
        s->in_history = false;
        qbuf scratch = s->body;
        s->body = saved;
        (void)nr;
        s->need_render = true;
        s->role = role;
        s->renders = renders;
        s->messages = messages;
        qw w;
        q_log_line_begin(&w, &s->body, "compact");
        if (msg != QJ_NONE) { qw_key(&w, "summary"); qw_node(&w, d, msg); }
        qw_key(&w, "messages");
        qw_arr_begin(&w);
        /* scratch holds message lines only (renders are dropped): pull out each "message" value */
        qline_iter it = {scratch.data, scratch.len, 0, 0};
        const char *l;
        size_t ln, off;
        while (q_next_line(&it, &l, &ln, &off)) {
            static const char pre[] = "{\"type\":\"message\",\"message\":";
            if (ln > sizeof pre && memcmp(l, pre, sizeof pre - 1) == 0)
                qw_raw_value(&w, l + sizeof pre - 1, ln - (sizeof pre - 1) - 1);
        }
        qw_arr_end(&w);
        q_log_line_end(&w, &s->body);
        qbuf_free(&scratch);
        return;
    }
    qw w;
    q_log_line_begin(&w, &s->body, "compact");
    qw_key(&w, "policy");
    qw_obj_begin(&w);
    qw_key(&w, "keepFirstTurns"); qw_int(&w, 0);
    qw_key(&w, "keepLastTurns"); qw_int(&w, 0);
    qw_obj_end(&w);
    if (msg != QJ_NONE) { qw_key(&w, "summary"); qw_node(&w, d, msg); }
    q_log_line_end(&w, &s->body);
}

quire_status q_import_codex(qimport_ctx *c, const char *src, size_t len) {
    cx s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.need_render = true;
    s.model = s.session_model = QJ_NONE;
    qarena_init(&s.ar, c->a);
    qmap_init(&s.calls, c->a);
    qbuf_init(&s.body, c->a);
    const qj_doc *meta_d = NULL;
    uint32_t meta = QJ_NONE;
    qline_iter it = {src, len, 0, 0};
    const char *l;
    size_t ln, off;
    while (s.st == QUIRE_OK && q_next_line(&it, &l, &ln, &off)) {
        if (q_line_blank(l, ln)) continue;
        qj_doc *d = qarena_alloc(&s.ar, sizeof *d);
        if (!d) { s.st = q_oom(c->err); break; }
        bool skipped;
        char why[512];
        quire_status ps = q_import_parse_line(c, d, "Codex rollout", l, ln, off, it.lineno, &skipped, why, sizeof why);
        if (ps) { s.st = ps; break; }
        if (skipped) {
            q_import_report(s.c, it.lineno, "skipped: not a JSON object: %s", why);
            s.skipped_invalid++;
            continue;
        }
        if (s.ndocs == s.capdocs) {
            uint32_t ncap = s.capdocs ? s.capdocs * 2 : 64;
            qj_doc **nd = q_realloc(c->a, s.docs, (size_t)s.capdocs * sizeof *nd, (size_t)ncap * sizeof *nd);
            if (!nd) { qj_doc_free(d); s.st = q_oom(c->err); break; }
            s.docs = nd;
            s.capdocs = ncap;
        }
        s.docs[s.ndocs++] = d;
        s.lines++;
        uint32_t ty = q_import_str(d, 0, "type");
        uint32_t p = qj_get(d, 0, "payload");
        /* the rollout form before entries had an envelope (Codex CLI up to
         * mid-2025): a header line {id, timestamp, instructions, git}, state
         * markers {"record_type": "state"}, and bare response items */
        if (p == QJ_NONE && ty == QJ_NONE && s.lines == 1 && s.skipped_invalid == 0 && q_import_str(d, 0, "id") != QJ_NONE &&
            qj_get(d, 0, "timestamp") != QJ_NONE) {
            if (meta == QJ_NONE) { meta_d = d; meta = 0; }
            s.bare = true;
            continue;
        }
        if (p == QJ_NONE && ty == QJ_NONE && q_import_str(d, 0, "record_type") != QJ_NONE) { s.states++; continue; }
        if (p == QJ_NONE && ty != QJ_NONE && s.bare) { /* only after that header line */
            response_item(&s, d, 0, it.lineno);
            continue;
        }
        if (ty == QJ_NONE || p == QJ_NONE || qj_type_of(d, p) != QJ_OBJECT) {
            q_import_report(s.c, it.lineno, "skipped: not a rollout entry (no type and payload)");
            s.unknown++;
            continue;
        }
        if (qj_str_eq(d, ty, "session_meta")) {
            if (meta == QJ_NONE) { meta_d = d; meta = p; }
        } else if (qj_str_eq(d, ty, "turn_context")) {
            uint32_t m = q_import_str(d, p, "model");
            if (m != QJ_NONE) {
                s.model_d = d;
                s.model = m;
                if (s.session_model == QJ_NONE) { s.session_model_d = d; s.session_model = m; }
            }
        } else if (qj_str_eq(d, ty, "response_item")) {
            response_item(&s, d, p, it.lineno);
        } else if (qj_str_eq(d, ty, "compacted")) {
            compacted(&s, d, p, it.lineno);
        } else if (qj_str_eq(d, ty, "event_msg")) {
            s.events++;
            uint32_t et = q_import_str(d, p, "type");
            if (et != QJ_NONE && qj_str_eq(d, et, "token_count") && qj_get(d, p, "info") != QJ_NONE &&
                qj_type_of(d, qj_get(d, p, "info")) != QJ_NULL)
                s.need_render = true; /* a model response ended */
        } else {
            s.unknown++;
            q_import_report(s.c, it.lineno, "skipped: unknown rollout entry type");
        }
    }
    if (s.st == QUIRE_OK) {
        flush(&s);
        /* session line first */
        qw w;
        q_log_line_begin(&w, c->out, "session");
        uint32_t id = q_import_str(meta_d, meta, "id");
        if (id != QJ_NONE) { qw_key(&w, "sessionId"); qw_node(&w, meta_d, id); }
        qw_key(&w, "target");
        qw_obj_begin(&w);
        qw_key(&w, "provider"); qw_strz(&w, c->provider);
        if (s.session_model != QJ_NONE) { qw_key(&w, "model"); qw_node(&w, s.session_model_d, s.session_model); }
        qw_obj_end(&w);
        uint32_t bi = meta != QJ_NONE ? qj_get(meta_d, meta, "base_instructions") : QJ_NONE;
        uint32_t sys = q_import_str(meta_d, bi, "text");
        if (sys == QJ_NONE) sys = q_import_str(meta_d, meta, "instructions");
        if (sys != QJ_NONE) { qw_key(&w, "system"); qw_node(&w, meta_d, sys); }
        qw_key(&w, "_meta");
        qw_obj_begin(&w);
        qw_key(&w, "importedFrom"); qw_strz(&w, "codex");
        qw_obj_end(&w);
        q_log_line_end(&w, c->out);
        qbuf_put(c->out, s.body.data, s.body.len);
        qbuf_printf(c->report,
                    "summary: %u lines, %u messages, %u renders, %u compactions, %u results dropped, "
                    "%u invalid lines skipped; not conversation: event_msg %u, record_type %u, other %u\n",
                    s.lines + s.skipped_invalid, s.messages, s.renders, s.compacts, s.dropped, s.skipped_invalid,
                    s.events, s.states, s.unknown);
        if (s.body.oom) s.st = q_oom(c->err);
    }
    for (uint32_t i = 0; i < s.ndocs; i++) qj_doc_free(s.docs[i]);
    q_free(c->a, s.docs, (size_t)s.capdocs * sizeof *s.docs);
    q_free(c->a, s.blocks, (size_t)s.capblocks * sizeof *s.blocks);
    q_free(c->a, s.pend, (size_t)s.cappend * sizeof *s.pend);
    qmap_free(&s.calls);
    qbuf_free(&s.body);
    qarena_free(&s.ar);
    return s.st;
}
