/* Claude Code session JSONL -> quire.session/1 (docs/replay.md).
 *
 * 1. Every line is parsed; lines that are not JSON objects are an error naming
 *    the line (or, with QUIRE_IMPORT_SKIP_INVALID, skipped and reported).
 * 2. The conversation is the parentUuid chain that ends at the last user or
 *    assistant line (a compact_boundary continues through logicalParentUuid),
 *    plus the lines that hang off that chain but belong to it: further
 *    streamed blocks of a chain assistant message (same message.id) and tool
 *    results for its tool_use blocks. Abandoned branches (edits, retries,
 *    resumed copies) fall out. Progress, file-history-snapshot,
 *    queue-operation, summary and system lines carry no conversation.
 * 3. In file order: the streamed lines of one assistant message (same
 *    message.id) become one message at the position of its first line, with
 *    one `render` before it; consecutive user lines become one user message;
 *    a compact_boundary + isCompactSummary pair becomes a `compact` event.
 */
#include "session/import.h"

#include <stdio.h>

enum { K_SKIP, K_USER, K_ASSISTANT, K_BOUNDARY, K_PASS };

typedef struct ccline {
    qj_doc *doc;
    uint32_t lineno;
    uint8_t kind;
    bool sidechain, compact_summary, on_path, sel;
    bool attachment;   /* a type "attachment" line (context Claude Code adds to a turn) */
    uint32_t message, content, model; /* nodes in doc (QJ_NONE if absent) */
    int32_t parent, logical;
    const char *uuid; uint32_t uuid_len;
    const char *mid; uint32_t mid_len;
} ccline;

typedef struct cblock {
    const qj_doc *d;
    uint32_t node;      /* the Anthropic block (or the string content node) */
    bool from_string;   /* node is a string: a text block */
    const char *text;   /* lifted: replacement plain text (NULL = copy node) */
    size_t text_len;
    int32_t call1;      /* a tool_use or tool_result: its call in cc.k + 1 (0: none; the id as logged) */
} cblock;

enum { IT_RENDER, IT_MSG, IT_COMPACT };

typedef struct citem {
    uint8_t type;
    bool assistant;
    bool string_content;  /* one user line whose content was a string */
    uint32_t lineno;      /* the raw log line it comes from (its first line) */
    const ccline *summary_line; /* compact: the isCompactSummary user line (NULL = none) */
    const qj_doc *d;      /* render: model node doc; compact: summary doc */
    uint32_t node;        /* render: model string node; compact: summary node (QJ_NONE = none) */
    const qj_doc *idd;    /* message id source */
    uint32_t idnode;
    cblock *blocks;
    uint32_t nblocks, capblocks;
    struct { const char *p; size_t n; } *rems; /* lifted reminder bodies (plain) */
    uint32_t nrems, caprems;
} citem;

typedef struct cc {
    qimport_ctx *c;
    qarena ar;
    ccline *lines;
    uint32_t nlines, caplines;
    citem *items;
    uint32_t nitems, capitems;
    qmap uuids, mids, calls;
    uint32_t skipped_invalid, skipped_types[8];
    uint32_t renders, messages, compacts, lifted, dropped_results, branch_lines;
    uint32_t cur_lineno; /* the raw line being built */
    qcalls k;            /* the calls as written: unique ids (repeats renamed), which are answered */
    int32_t *pend;       /* the last assistant message's calls (indices in k) */
    uint32_t npend, cappend;
    uint32_t repaired;   /* calls answered with an error result because the log has none */
    uint32_t json_parts; /* tool result parts with no transcript form, written as their JSON text */
} cc;

static const char *const k_skip_names[] = {"progress", "file-history-snapshot", "queue-operation", "summary",
                                           "system", "sidechain", "other", "attachment"};

static bool grow(cc *s, void **p, uint32_t *cap, uint32_t n, size_t elem) {
    if (n < *cap) return true;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    void *np = q_realloc(s->c->a, *p, (size_t)*cap * elem, (size_t)ncap * elem);
    if (!np) return false;
    *p = np;
    *cap = ncap;
    return true;
}

static bool get_bool(const qj_doc *d, uint32_t obj, const char *key) {
    uint32_t v = qj_get(d, obj, key);
    return v != QJ_NONE && qj_type_of(d, v) == QJ_TRUE;
}

/* ---- 1. read ---- */

static quire_status read_lines(cc *s, const char *src, size_t len) {
    qimport_ctx *c = s->c;
    qline_iter it = {src, len, 0, 0};
    const char *l;
    size_t ln, off;
    while (q_next_line(&it, &l, &ln, &off)) {
        if (q_line_blank(l, ln)) continue;
        qj_doc *d = qarena_alloc(&s->ar, sizeof *d);
        if (!d) return q_oom(c->err);
        bool skipped;
        char why[512];
        quire_status st = q_import_parse_line(c, d, "Claude Code log", l, ln, off, it.lineno, &skipped, why, sizeof why);
        if (st) return st;
        if (skipped) {
            q_import_report(s->c, it.lineno, "skipped: not a JSON object: %s", why);
            s->skipped_invalid++;
            continue;
        }
        if (!grow(s, (void **)&s->lines, &s->caplines, s->nlines, sizeof(ccline))) { qj_doc_free(d); return q_oom(c->err); }
        ccline *L = &s->lines[s->nlines++];
        memset(L, 0, sizeof *L);
        L->doc = d;
        L->lineno = it.lineno;
        L->parent = L->logical = -1;
        L->message = L->content = L->model = QJ_NONE;
        uint32_t ty = q_import_str(d, 0, "type");
        uint32_t u = q_import_str(d, 0, "uuid");
        if (u != QJ_NONE) { L->uuid = qj_at(d, u)->p; L->uuid_len = qj_at(d, u)->len; }
        L->sidechain = get_bool(d, 0, "isSidechain");
        uint32_t msg = qj_get(d, 0, "message");
        bool is_user = ty != QJ_NONE && qj_str_eq(d, ty, "user");
        bool is_asst = ty != QJ_NONE && qj_str_eq(d, ty, "assistant");
        if ((is_user || is_asst) && msg != QJ_NONE && qj_type_of(d, msg) == QJ_OBJECT) {
            L->kind = is_user ? K_USER : K_ASSISTANT;
            L->message = msg;
            L->content = qj_get(d, msg, "content");
            if (L->content != QJ_NONE && qj_type_of(d, L->content) != QJ_STRING &&
                qj_type_of(d, L->content) != QJ_ARRAY)
                L->content = QJ_NONE;
            L->compact_summary = get_bool(d, 0, "isCompactSummary");
            if (is_asst) {
                uint32_t mid = q_import_str(d, msg, "id");
                if (mid != QJ_NONE) { L->mid = qj_at(d, mid)->p; L->mid_len = qj_at(d, mid)->len; }
                L->model = q_import_str(d, msg, "model");
            }
        } else if (ty != QJ_NONE && qj_str_eq(d, ty, "system") && q_import_str(d, 0, "subtype") != QJ_NONE &&
                   qj_str_eq(d, q_import_str(d, 0, "subtype"), "compact_boundary")) {
            L->kind = K_BOUNDARY;
        } else {
            L->kind = u != QJ_NONE ? K_PASS : K_SKIP;
            int k = 6;
            if (ty != QJ_NONE)
                for (int i = 0; i < 5; i++)
                    if (qj_str_eq(d, ty, k_skip_names[i])) { k = i; break; }
            if (ty != QJ_NONE && qj_str_eq(d, ty, "attachment")) { k = 7; L->attachment = true; }
            s->skipped_types[k]++;
        }
        if (L->uuid && !qmap_put(&s->uuids, L->uuid, L->uuid_len, (int32_t)(s->nlines - 1))) return q_oom(c->err);
    }
    return QUIRE_OK;
}

/* ---- 2. select ---- */

static int32_t lookup(cc *s, const qj_doc *d, const char *key) {
    uint32_t v = q_import_str(d, 0, key);
    if (v == QJ_NONE) return -1;
    return qmap_get(&s->uuids, qj_at(d, v)->p, qj_at(d, v)->len);
}

/* The conversation line (user, assistant or boundary, of the wanted chain)
 * before line cur in file order, -1 when none. */
static int32_t conversation_line_before(const cc *s, int32_t cur, bool want_side) {
    for (int32_t j = cur - 1; j >= 0; j--) {
        const ccline *P = &s->lines[j];
        if ((P->kind == K_USER || P->kind == K_ASSISTANT || P->kind == K_BOUNDARY) && P->sidechain == want_side) return j;
    }
    return -1;
}

static quire_status select_lines(cc *s) {
    qimport_ctx *c = s->c;
    bool want_side = (c->flags & QUIRE_IMPORT_SIDECHAINS) != 0;
    int32_t leaf = -1;
    for (uint32_t i = 0; i < s->nlines; i++) {
        ccline *L = &s->lines[i];
        L->parent = lookup(s, L->doc, "parentUuid");
        L->logical = lookup(s, L->doc, "logicalParentUuid");
        if (L->parent >= (int32_t)i) L->parent = -1; /* parents come first; guards cycles */
        if (L->logical >= (int32_t)i) L->logical = -1;
        if ((L->kind == K_USER || L->kind == K_ASSISTANT) && L->sidechain == want_side) leaf = (int32_t)i;
    }
    for (int32_t cur = leaf; cur >= 0;) {
        ccline *L = &s->lines[cur];
        L->on_path = true;
        int32_t nx = L->parent;
        if (nx < 0 && s->skipped_invalid && L->kind != K_BOUNDARY && q_import_str(L->doc, 0, "parentUuid") != QJ_NONE) {
            /* its parent is not in the file, and --skip-invalid dropped lines:
             * the parent was most likely one of them (a line cut short by a
             * partial write). Continue from the conversation line before it
             * in file order rather than lose everything before the damage. */
            nx = conversation_line_before(s, cur, want_side);
            if (nx >= 0)
                q_import_report(s->c, L->lineno, "note: the line its parentUuid names is not in the file (a skipped "
                                "line?); continued from line %u, the conversation line before it", s->lines[nx].lineno);
        }
        if (nx < 0 && L->kind == K_BOUNDARY) nx = L->logical;
        if (nx < 0 && L->kind == K_BOUNDARY) {
            /* the pre-compaction chain is not in the file (its logicalParentUuid
             * names a line Claude Code wrote elsewhere): continue from the
             * conversation line before the boundary in file order */
            nx = conversation_line_before(s, cur, want_side);
            if (nx >= 0)
                q_import_report(s->c, L->lineno, "compact_boundary: its logical parent is not in the file; continued from line %u, "
                       "the conversation line before it", s->lines[nx].lineno);
        }
        cur = nx;
    }
    if (leaf < 0) {
        /* nothing of the asked kind: say so instead of an empty log */
        uint32_t other = 0;
        for (uint32_t i = 0; i < s->nlines; i++)
            other += (s->lines[i].kind == K_USER || s->lines[i].kind == K_ASSISTANT) && s->lines[i].sidechain != want_side;
        if (other)
            q_import_report(s->c, 0, "note: no %s conversation in this log, only %u %s line(s)%s", want_side ? "sub-agent" : "main",
                   other, want_side ? "main-conversation" : "sub-agent (isSidechain)",
                   want_side ? "; import it without --sidechains" : "; import it with --sidechains");
    }
    /* lines hanging off the chain that belong to it */
    qmap sel_mids, sel_calls;
    qmap_init(&sel_mids, c->a);
    qmap_init(&sel_calls, c->a);
    quire_status st = QUIRE_OK;
    for (uint32_t i = 0; i < s->nlines && st == QUIRE_OK; i++) {
        ccline *L = &s->lines[i];
        bool sel = L->on_path;
        if (!sel && L->sidechain == want_side && L->parent >= 0 && s->lines[L->parent].sel) {
            if (L->kind == K_PASS) sel = true;
            else if (L->kind == K_ASSISTANT && L->mid && qmap_get(&sel_mids, L->mid, L->mid_len) >= 0) sel = true;
            else if (L->kind == K_USER && L->content != QJ_NONE && qj_type_of(L->doc, L->content) == QJ_ARRAY &&
                     qj_at(L->doc, L->content)->n > 0) {
                sel = true;
                uint32_t b = L->content + 1;
                for (uint32_t k = 0; k < qj_at(L->doc, L->content)->n; k++, b = qj_next(L->doc, b)) {
                    uint32_t ty = q_import_str(L->doc, b, "type");
                    uint32_t id = q_import_str(L->doc, b, "tool_use_id");
                    if (ty == QJ_NONE || !qj_str_eq(L->doc, ty, "tool_result") || id == QJ_NONE ||
                        qmap_get(&sel_calls, qj_at(L->doc, id)->p, qj_at(L->doc, id)->len) < 0) {
                        sel = false;
                        break;
                    }
                }
            }
        }
        L->sel = sel;
        if (!sel) {
            if ((L->kind == K_USER || L->kind == K_ASSISTANT) && L->sidechain == want_side) s->branch_lines++;
            continue;
        }
        if (L->kind == K_ASSISTANT) {
            if (L->mid && !qmap_put(&sel_mids, L->mid, L->mid_len, 1)) st = q_oom(c->err);
            if (L->content != QJ_NONE && qj_type_of(L->doc, L->content) == QJ_ARRAY) {
                uint32_t b = L->content + 1;
                for (uint32_t k = 0; k < qj_at(L->doc, L->content)->n; k++, b = qj_next(L->doc, b)) {
                    uint32_t id = q_import_str(L->doc, b, "id");
                    uint32_t ty = q_import_str(L->doc, b, "type");
                    if (id != QJ_NONE && ty != QJ_NONE && qj_str_eq(L->doc, ty, "tool_use") &&
                        !qmap_put(&sel_calls, qj_at(L->doc, id)->p, qj_at(L->doc, id)->len, 1))
                        st = q_oom(c->err);
                }
            }
        }
    }
    qmap_free(&sel_mids);
    qmap_free(&sel_calls);
    return st;
}

/* ---- 3. build items ---- */

static citem *new_item(cc *s, uint8_t type) {
    if (!grow(s, (void **)&s->items, &s->capitems, s->nitems, sizeof(citem))) return NULL;
    citem *it = &s->items[s->nitems++];
    memset(it, 0, sizeof *it);
    it->type = type;
    it->lineno = s->cur_lineno;
    it->node = QJ_NONE;
    it->idnode = QJ_NONE;
    return it;
}

static bool add_block(cc *s, citem *it, cblock b) {
    if (!grow(s, (void **)&it->blocks, &it->capblocks, it->nblocks, sizeof(cblock))) return false;
    it->blocks[it->nblocks++] = b;
    return true;
}

typedef struct lift_ud {
    cc *s;
    citem *it;
    bool oom;
} lift_ud;

static void on_lift(void *ud, const char *body, size_t len) {
    lift_ud *u = ud;
    citem *it = u->it;
    cc *s = u->s;
    if (!grow(s, (void **)&it->rems, &it->caprems, it->nrems, sizeof *it->rems)) {
        u->oom = true;
        return;
    }
    it->rems[it->nrems].p = body;
    it->rems[it->nrems].n = len;
    it->nrems++;
    s->lifted++;
}

/* Lifts reminders out of plain text; *out receives the rest (arena). */
static bool lift_text(cc *s, citem *it, const qj_doc *d, uint32_t strnode, const char **out, size_t *outlen,
                      uint32_t *nlifted) {
    size_t n;
    const char *plain = qj_str_decode(d, strnode, &s->ar, &n);
    if (!plain) return false;
    *nlifted = 0;
    *out = NULL;
    if (!strstr(plain, "<system-reminder>")) return true;
    qbuf rest;
    qbuf_init(&rest, s->c->a);
    lift_ud u = {s, it, false};
    *nlifted = q_lift_reminders(plain, n, &rest, on_lift, &u);
    if (u.oom || rest.oom) { qbuf_free(&rest); return false; }
    char *copy = qarena_alloc(&s->ar, rest.len + 1);
    if (!copy) { qbuf_free(&rest); return false; }
    if (rest.len) memcpy(copy, rest.data, rest.len);
    copy[rest.len] = '\0';
    *out = copy;
    *outlen = rest.len;
    qbuf_free(&rest);
    return true;
}

static quire_status add_user_line(cc *s, ccline *L) {
    qimport_ctx *c = s->c;
    const qj_doc *d = L->doc;
    citem *prev = s->nitems ? &s->items[s->nitems - 1] : NULL;
    citem *it;
    if (prev && prev->type == IT_MSG && !prev->assistant) {
        it = prev;
        it->string_content = false;
    } else {
        it = new_item(s, IT_MSG);
        if (!it) return q_oom(c->err);
        it->string_content = qj_type_of(d, L->content) == QJ_STRING;
        it->idd = d;
        it->idnode = q_import_str(d, 0, "uuid");
        s->messages++;
    }
    bool lift = (c->flags & QUIRE_IMPORT_LIFT_REMINDERS) != 0;
    if (qj_type_of(d, L->content) == QJ_STRING) {
        cblock b = {d, L->content, true, NULL, 0, 0};
        if (lift) {
            uint32_t nl;
            if (!lift_text(s, it, d, L->content, &b.text, &b.text_len, &nl)) return q_oom(c->err);
            if (nl && q_line_blank(b.text, b.text_len)) return QUIRE_OK;
            if (nl) it->string_content = false;
        }
        return add_block(s, it, b) ? QUIRE_OK : q_oom(c->err);
    }
    uint32_t b = L->content + 1;
    for (uint32_t k = 0; k < qj_at(d, L->content)->n; k++, b = qj_next(d, b)) {
        if (qj_type_of(d, b) != QJ_OBJECT) continue;
        uint32_t ty = q_import_str(d, b, "type");
        cblock cb = {d, b, false, NULL, 0, 0};
        if (ty != QJ_NONE && (qj_str_eq(d, ty, "tool_use") || qj_str_eq(d, ty, "thinking") ||
                              qj_str_eq(d, ty, "redacted_thinking"))) {
            q_import_report(s->c, L->lineno, "dropped a %.*s block from a user line (it belongs to the assistant)",
                   (int)qj_at(d, ty)->len, qj_at(d, ty)->p);
            continue;
        }
        if (ty != QJ_NONE && qj_str_eq(d, ty, "tool_result")) {
            uint32_t id = q_import_str(d, b, "tool_use_id");
            if (id == QJ_NONE || qmap_get(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len) < 0) {
                q_import_report(s->c, L->lineno, "dropped a tool_result for a tool_use not in the conversation (%.*s)",
                       id == QJ_NONE ? 1 : (int)qj_at(d, id)->len, id == QJ_NONE ? "?" : qj_at(d, id)->p);
                s->dropped_results++;
                continue;
            }
            /* never lifted from: a tool's output is not what the harness wrote */
        } else if (lift && ty != QJ_NONE && qj_str_eq(d, ty, "text")) {
            uint32_t tv = q_import_str(d, b, "text");
            if (tv != QJ_NONE) {
                uint32_t nl;
                if (!lift_text(s, it, d, tv, &cb.text, &cb.text_len, &nl)) return q_oom(c->err);
                if (nl && q_line_blank(cb.text, cb.text_len)) continue;
            }
        }
        if (!add_block(s, it, cb)) return q_oom(c->err);
    }
    return QUIRE_OK;
}

static quire_status build(cc *s) {
    qimport_ctx *c = s->c;
    int32_t pending_compact = -1;
    for (uint32_t i = 0; i < s->nlines; i++) {
        ccline *L = &s->lines[i];
        if (!L->sel) continue;
        s->cur_lineno = L->lineno;
        if (L->kind == K_BOUNDARY) {
            citem *it = new_item(s, IT_COMPACT);
            if (!it) return q_oom(c->err);
            pending_compact = (int32_t)(s->nitems - 1);
            s->compacts++;
            continue;
        }
        if (L->kind != K_USER && L->kind != K_ASSISTANT) continue;
        if (L->content == QJ_NONE) {
            q_import_report(s->c, L->lineno, "skipped: %s line without message content", L->kind == K_USER ? "user" : "assistant");
            continue;
        }
        if (L->kind == K_USER && L->compact_summary) {
            citem *it = pending_compact >= 0 ? &s->items[pending_compact] : new_item(s, IT_COMPACT);
            if (!it) return q_oom(c->err);
            if (pending_compact < 0) s->compacts++;
            pending_compact = -1;
            it->summary_line = L;
            if (qj_type_of(L->doc, L->content) == QJ_STRING) {
                it->d = L->doc;
                it->node = L->content;
            } else {
                /* the summary as an array: its first text block */
                uint32_t b = L->content + 1;
                for (uint32_t k = 0; k < qj_at(L->doc, L->content)->n; k++, b = qj_next(L->doc, b)) {
                    uint32_t tv = q_import_str(L->doc, b, "text");
                    if (tv != QJ_NONE) { it->d = L->doc; it->node = tv; break; }
                }
            }
            continue;
        }
        if (L->kind == K_USER) {
            quire_status st = add_user_line(s, L);
            if (st) return st;
            continue;
        }
        /* assistant */
        int32_t at = L->mid ? qmap_get(&s->mids, L->mid, L->mid_len) : -1;
        citem *it;
        if (at >= 0) {
            it = &s->items[at];
        } else {
            bool synthetic = L->model != QJ_NONE && qj_str_eq(L->doc, L->model, "<synthetic>");
            if (!synthetic) {
                citem *r = new_item(s, IT_RENDER);
                if (!r) return q_oom(c->err);
                r->d = L->doc;
                r->node = L->model;
                s->renders++;
            }
            it = new_item(s, IT_MSG);
            if (!it) return q_oom(c->err);
            it->assistant = true;
            it->idd = L->doc;
            it->idnode = L->mid ? q_import_str(L->doc, L->message, "id") : q_import_str(L->doc, 0, "uuid");
            s->messages++;
            if (L->mid && !qmap_put(&s->mids, L->mid, L->mid_len, (int32_t)(s->nitems - 1))) return q_oom(c->err);
        }
        const qj_doc *d = L->doc;
        if (qj_type_of(d, L->content) == QJ_STRING) {
            cblock b = {d, L->content, true, NULL, 0, 0};
            if (!add_block(s, it, b)) return q_oom(c->err);
            continue;
        }
        uint32_t b = L->content + 1;
        for (uint32_t k = 0; k < qj_at(d, L->content)->n; k++, b = qj_next(d, b)) {
            if (qj_type_of(d, b) != QJ_OBJECT) continue;
            cblock cb = {d, b, false, NULL, 0, 0};
            if (!add_block(s, it, cb)) return q_oom(c->err);
            uint32_t ty = q_import_str(d, b, "type");
            uint32_t id = q_import_str(d, b, "id");
            /* only calls the writer keeps (id and name strings) can be answered */
            if (ty != QJ_NONE && id != QJ_NONE && qj_str_eq(d, ty, "tool_use") && q_import_str(d, b, "name") != QJ_NONE &&
                !qmap_put(&s->calls, qj_at(d, id)->p, qj_at(d, id)->len, 1))
                return q_oom(c->err);
        }
    }
    return QUIRE_OK;
}

/* ---- 4. write ---- */

static void w_copy_key(qw *w, const qj_doc *d, uint32_t obj, const char *from, const char *to) {
    uint32_t v = qj_get(d, obj, from);
    if (v == QJ_NONE) return;
    qw_key(w, to);
    qw_node(w, d, v);
}

/* An Anthropic image/document source -> mediaType + data | url. False when
 * the source kind has no quire equivalent. */
static bool source_ok(const qj_doc *d, uint32_t blk) {
    uint32_t src = qj_get(d, blk, "source");
    if (src == QJ_NONE || qj_type_of(d, src) != QJ_OBJECT) return false;
    uint32_t ty = q_import_str(d, src, "type");
    if (ty == QJ_NONE) return false;
    if (qj_str_eq(d, ty, "base64")) return q_import_str(d, src, "data") != QJ_NONE && q_import_str(d, src, "media_type") != QJ_NONE;
    if (qj_str_eq(d, ty, "url")) return q_import_str(d, src, "url") != QJ_NONE;
    return false;
}

static void w_source(qw *w, const qj_doc *d, uint32_t blk) {
    uint32_t src = qj_get(d, blk, "source");
    uint32_t ty = q_import_str(d, src, "type");
    if (qj_str_eq(d, ty, "base64")) {
        w_copy_key(w, d, src, "media_type", "mediaType");
        w_copy_key(w, d, src, "data", "data");
    } else {
        w_copy_key(w, d, src, "url", "url");
    }
}

static void w_opaque(qw *w, const qj_doc *d, uint32_t blk) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "opaque");
    qw_key(w, "provider"); qw_strz(w, "anthropic");
    qw_key(w, "item"); qw_node(w, d, blk);
    qw_obj_end(w);
}

static void w_text(qw *w, const qj_doc *d, uint32_t strnode, const char *plain, size_t plain_len) {
    qw_obj_begin(w);
    qw_key(w, "type"); qw_strz(w, "text");
    qw_key(w, "text");
    if (plain) qw_str(w, plain, plain_len);
    else qw_node(w, d, strnode);
    qw_obj_end(w);
}

/* Writes one converted block. */
static void w_block(cc *s, qw *w, const cblock *cb) {
    const qj_doc *d = cb->d;
    uint32_t b = cb->node;
    if (cb->from_string) { w_text(w, d, b, cb->text, cb->text_len); return; }
    uint32_t ty = q_import_str(d, b, "type");
    if (ty == QJ_NONE) { w_opaque(w, d, b); return; }
    if (qj_str_eq(d, ty, "text") && q_import_str(d, b, "text") != QJ_NONE) {
        uint32_t ci = qj_get(d, b, "citations");
        if (ci != QJ_NONE && qj_type_of(d, ci) == QJ_ARRAY && qj_at(d, ci)->n > 0) {
            /* the answer's citations (Anthropic's shape): kept on the block */
            qw_obj_begin(w);
            qw_key(w, "type"); qw_strz(w, "text");
            qw_key(w, "text");
            if (cb->text) qw_str(w, cb->text, cb->text_len);
            else qw_node(w, d, q_import_str(d, b, "text"));
            qw_key(w, "citations"); qw_node(w, d, ci);
            qw_obj_end(w);
        } else {
            w_text(w, d, q_import_str(d, b, "text"), cb->text, cb->text_len);
        }
    } else if (qj_str_eq(d, ty, "thinking") && q_import_str(d, b, "thinking") != QJ_NONE) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "thinking");
        w_copy_key(w, d, b, "thinking", "text");
        if (q_import_str(d, b, "signature") != QJ_NONE) {
            w_copy_key(w, d, b, "signature", "signature");
            /* Claude Code talks to the Messages API: the signature is Anthropic's
             * (sent back only there, docs/providers.md "Provider rules") */
            qw_key(w, "provider"); qw_strz(w, "anthropic");
        }
        qw_obj_end(w);
    } else if (qj_str_eq(d, ty, "redacted_thinking") && q_import_str(d, b, "data") != QJ_NONE) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "redactedThinking");
        w_copy_key(w, d, b, "data", "data");
        qw_key(w, "provider"); qw_strz(w, "anthropic");
        qw_obj_end(w);
    } else if (qj_str_eq(d, ty, "tool_use") && q_import_str(d, b, "id") != QJ_NONE && q_import_str(d, b, "name") != QJ_NONE) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "toolCall");
        if (cb->call1 > 0) { qw_key(w, "id"); qw_str_esc(w, s->k.v[cb->call1 - 1].id, s->k.v[cb->call1 - 1].idn); }
        else w_copy_key(w, d, b, "id", "id");
        w_copy_key(w, d, b, "name", "name");
        qw_key(w, "input");
        uint32_t in = qj_get(d, b, "input");
        if (in == QJ_NONE) { qw_obj_begin(w); qw_obj_end(w); }
        else qw_node(w, d, in);
        qw_obj_end(w);
    } else if ((qj_str_eq(d, ty, "image") || qj_str_eq(d, ty, "document")) && source_ok(d, b) &&
               !(qj_str_eq(d, ty, "document") && (qj_get(d, b, "context") != QJ_NONE || qj_get(d, b, "citations") != QJ_NONE))) {
        /* (a document with context or a citations setting has no transcript
         * form: it stays opaque, sent to Anthropic as logged) */
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, qj_str_eq(d, ty, "image") ? "image" : "document");
        w_source(w, d, b);
        if (qj_str_eq(d, ty, "document") && q_import_str(d, b, "title") != QJ_NONE) w_copy_key(w, d, b, "title", "title");
        qw_obj_end(w);
    } else if (qj_str_eq(d, ty, "tool_result") && q_import_str(d, b, "tool_use_id") != QJ_NONE) {
        qw_obj_begin(w);
        qw_key(w, "type"); qw_strz(w, "toolResult");
        if (cb->call1 > 0) {
            qw_key(w, "toolCallId");
            qw_str_esc(w, s->k.v[cb->call1 - 1].id, s->k.v[cb->call1 - 1].idn);
        } else {
            w_copy_key(w, d, b, "tool_use_id", "toolCallId");
        }
        qw_key(w, "content");
        uint32_t cv = qj_get(d, b, "content");
        if (cb->text) {
            qw_str(w, cb->text, cb->text_len);
        } else if (cv == QJ_NONE || qj_type_of(d, cv) == QJ_NULL) {
            qw_str(w, "", 0);
        } else if (qj_type_of(d, cv) == QJ_STRING) {
            qw_node(w, d, cv);
        } else if (qj_type_of(d, cv) == QJ_ARRAY) {
            qw_arr_begin(w);
            uint32_t p = cv + 1;
            for (uint32_t k = 0; k < qj_at(d, cv)->n; k++, p = qj_next(d, p)) {
                uint32_t pt = q_import_str(d, p, "type");
                if (pt != QJ_NONE && qj_str_eq(d, pt, "text") && q_import_str(d, p, "text") != QJ_NONE) {
                    w_text(w, d, q_import_str(d, p, "text"), NULL, 0);
                } else if (pt != QJ_NONE && qj_str_eq(d, pt, "image") && source_ok(d, p)) {
                    qw_obj_begin(w);
                    qw_key(w, "type"); qw_strz(w, "image");
                    w_source(w, d, p);
                    qw_obj_end(w);
                } else {
                    /* no quire equivalent inside a tool result: keep its JSON as text */
                    (void)q_import_w_json_text(w, d, p, s->c->a);
                    s->json_parts++;
                }
            }
            qw_arr_end(w);
        } else {
            qw_str(w, "", 0);
        }
        uint32_t ie = qj_get(d, b, "is_error");
        if (ie != QJ_NONE && (qj_type_of(d, ie) == QJ_TRUE || qj_type_of(d, ie) == QJ_FALSE)) {
            qw_key(w, "isError");
            qw_bool(w, qj_type_of(d, ie) == QJ_TRUE);
        }
        qw_obj_end(w);
    } else {
        w_opaque(w, d, b);
    }
}

static void write_log(cc *s) {
    qimport_ctx *c = s->c;
    qbuf *o = c->out;
    qw w;
    /* session: id and the first model of the conversation */
    const qj_doc *sid_d = NULL, *model_d = NULL;
    uint32_t sid = QJ_NONE, model = QJ_NONE;
    for (uint32_t i = 0; i < s->nlines && (sid == QJ_NONE || model == QJ_NONE); i++) {
        ccline *L = &s->lines[i];
        if (!L->sel) continue;
        if (sid == QJ_NONE && q_import_str(L->doc, 0, "sessionId") != QJ_NONE) { sid_d = L->doc; sid = q_import_str(L->doc, 0, "sessionId"); }
        if (model == QJ_NONE && L->model != QJ_NONE && !qj_str_eq(L->doc, L->model, "<synthetic>")) {
            model_d = L->doc;
            model = L->model;
        }
    }
    q_log_line_begin(&w, o, "session");
    if (sid != QJ_NONE) { qw_key(&w, "sessionId"); qw_node(&w, sid_d, sid); }
    qw_key(&w, "target");
    qw_obj_begin(&w);
    qw_key(&w, "provider"); qw_strz(&w, c->provider);
    if (model != QJ_NONE) { qw_key(&w, "model"); qw_node(&w, model_d, model); }
    qw_obj_end(&w);
    qw_key(&w, "_meta");
    qw_obj_begin(&w);
    qw_key(&w, "importedFrom"); qw_strz(&w, "claude-code");
    qw_obj_end(&w);
    q_log_line_end(&w, o);

    uint32_t written = 0; /* messages written so far: a render or compaction needs some */
    for (uint32_t i = 0; i < s->nitems && !o->oom; i++) {
        citem *it = &s->items[i];
        /* calls the log left without a result before anything but a user
         * message: one tool message answers them (the user message case is
         * below: the results go at its start) */
        if (s->npend && !(it->type == IT_MSG && !it->assistant && it->nblocks)) {
            uint32_t n = qcalls_answer_pending(&s->k, s->pend, &s->npend, o, it->lineno);
            if (n) { s->repaired += n; written++; }
        }
        if ((it->type == IT_RENDER || (it->type == IT_COMPACT && !it->summary_line)) && written == 0) {
            qbuf_printf(c->report, "0: skipped a %s before the first message of the conversation\n",
                        it->type == IT_RENDER ? "model call" : "compaction");
            continue;
        }
        if (it->type == IT_RENDER) {
            q_log_line_begin(&w, o, "render");
            bool same = it->node == QJ_NONE || model == QJ_NONE ||
                        (qj_at(it->d, it->node)->len == qj_at(model_d, model)->len &&
                         memcmp(qj_at(it->d, it->node)->p, qj_at(model_d, model)->p, qj_at(model_d, model)->len) == 0);
            if (!same) {
                qw_key(&w, "target");
                qw_obj_begin(&w);
                qw_key(&w, "provider"); qw_strz(&w, c->provider);
                qw_key(&w, "model"); qw_node(&w, it->d, it->node);
                qw_obj_end(&w);
            }
            q_w_meta_line(&w, it->lineno);
            q_log_line_end(&w, o);
        } else if (it->type == IT_COMPACT) {
            q_log_line_begin(&w, o, "compact");
            if (it->summary_line) {
                /* the history Claude Code continued with: the summary message
                 * as it logged it (it is what the next requests carry) */
                if (it->node != QJ_NONE) { qw_key(&w, "summary"); qw_node(&w, it->d, it->node); }
                const ccline *L = it->summary_line;
                qw_key(&w, "messages");
                qw_arr_begin(&w);
                qw_obj_begin(&w);
                qw_key(&w, "role"); qw_strz(&w, "user");
                qw_key(&w, "content");
                if (qj_type_of(L->doc, L->content) == QJ_STRING) {
                    qw_node(&w, L->doc, L->content);
                } else {
                    qw_arr_begin(&w);
                    uint32_t b = L->content + 1;
                    for (uint32_t k = 0; k < qj_at(L->doc, L->content)->n; k++, b = qj_next(L->doc, b)) {
                        if (qj_type_of(L->doc, b) != QJ_OBJECT) continue;
                        cblock cb = {L->doc, b, false, NULL, 0, 0};
                        w_block(s, &w, &cb);
                    }
                    qw_arr_end(&w);
                }
                uint32_t uid = q_import_str(L->doc, 0, "uuid");
                if (uid != QJ_NONE) { qw_key(&w, "id"); qw_node(&w, L->doc, uid); }
                qw_obj_end(&w);
                qw_arr_end(&w);
                written++;
            } else {
                qw_key(&w, "policy");
                qw_obj_begin(&w);
                qw_key(&w, "keepFirstTurns"); qw_int(&w, 0);
                qw_key(&w, "keepLastTurns"); qw_int(&w, 0);
                qw_obj_end(&w);
            }
            q_w_meta_line(&w, it->lineno);
            q_log_line_end(&w, o);
        } else {
            if (it->nblocks == 0) continue;
            written++;
            uint32_t added = 0, unanswered = 0; /* calls this message made (the last ones of pend) */
            if (!it->assistant) {
                /* its results answer the open calls (renamed ids follow their call) */
                for (uint32_t k = 0; k < it->nblocks; k++) {
                    cblock *cb = &it->blocks[k];
                    uint32_t ty = cb->from_string ? QJ_NONE : q_import_str(cb->d, cb->node, "type");
                    uint32_t id = ty != QJ_NONE && qj_str_eq(cb->d, ty, "tool_result")
                                      ? q_import_str(cb->d, cb->node, "tool_use_id") : QJ_NONE;
                    int32_t at = id != QJ_NONE ? qcalls_answer(&s->k, qj_at(cb->d, id)->p, qj_at(cb->d, id)->len) : -1;
                    cb->call1 = at + 1;
                }
                for (uint32_t k = 0; k < s->npend; k++) unanswered += !s->k.v[s->pend[k]].answered;
            } else {
                for (uint32_t k = 0; k < it->nblocks; k++) {
                    cblock *cb = &it->blocks[k];
                    uint32_t ty = cb->from_string ? QJ_NONE : q_import_str(cb->d, cb->node, "type");
                    uint32_t id = ty != QJ_NONE && qj_str_eq(cb->d, ty, "tool_use") ? q_import_str(cb->d, cb->node, "id")
                                                                                     : QJ_NONE;
                    if (id == QJ_NONE || q_import_str(cb->d, cb->node, "name") == QJ_NONE) continue;
                    int32_t at = qcalls_add(&s->k, qj_at(cb->d, id)->p, qj_at(cb->d, id)->len, false);
                    if (at < 0 || !grow(s, (void **)&s->pend, &s->cappend, s->npend + 1, sizeof *s->pend)) {
                        o->oom = true;
                        break;
                    }
                    cb->call1 = at + 1;
                    s->pend[s->npend++] = at;
                    added++;
                }
            }
            q_log_message_begin(&w, o, it->assistant ? "assistant" : "user");
            qw_key(&w, "content");
            if (unanswered) {
                /* the calls before it that the log answers nowhere: error results first */
                qw_arr_begin(&w);
                for (uint32_t k = 0; k < s->npend; k++) {
                    qcall *kc = &s->k.v[s->pend[k]];
                    if (kc->answered) continue;
                    if (kc->orig) (void)qcalls_answer(&s->k, kc->orig, kc->orign);
                    kc->answered = true;
                    qcalls_w_no_output(&w, kc);
                }
                s->repaired += unanswered;
                for (uint32_t k = 0; k < it->nblocks; k++) w_block(s, &w, &it->blocks[k]);
                qw_arr_end(&w);
            } else if (it->string_content && it->nblocks == 1 && it->blocks[0].from_string) {
                if (it->blocks[0].text) qw_str(&w, it->blocks[0].text, it->blocks[0].text_len);
                else qw_node(&w, it->blocks[0].d, it->blocks[0].node);
            } else {
                qw_arr_begin(&w);
                for (uint32_t k = 0; k < it->nblocks; k++) w_block(s, &w, &it->blocks[k]);
                qw_arr_end(&w);
            }
            if (it->idnode != QJ_NONE) { qw_key(&w, "id"); qw_node(&w, it->idd, it->idnode); }
            if (added) qcalls_w_meta(&s->k, &w, s->pend + s->npend - added, added);
            qw_obj_end(&w);
            q_w_meta_line(&w, it->lineno);
            q_log_line_end(&w, o);
            if (!it->assistant) s->npend = 0;
            for (uint32_t k = 0; k < it->nrems; k++) {
                char hex[33];
                quire_digest128(it->rems[k].p, it->rems[k].n, hex);
                char key[48];
                snprintf(key, sizeof key, "claude-code:%.16s", hex);
                q_log_line_begin(&w, o, "reminder");
                qw_key(&w, "reminder");
                qw_obj_begin(&w);
                qw_key(&w, "body"); qw_str(&w, it->rems[k].p, it->rems[k].n);
                qw_key(&w, "tags"); qw_arr_begin(&w); qw_strz(&w, "claude-code"); qw_arr_end(&w);
                qw_key(&w, "dedupeKey"); qw_strz(&w, key);
                qw_key(&w, "ttlTurns"); qw_int(&w, 1);
                qw_key(&w, "roleHint"); qw_strz(&w, "user_block");
                qw_obj_end(&w);
                q_log_line_end(&w, o);
            }
        }
    }
    uint32_t natt = 0;
    for (uint32_t i = 0; i < s->nlines; i++) natt += s->lines[i].sel && s->lines[i].attachment;
    if (natt)
        q_import_report(c, 0, "note: %u attachment line(s) in the conversation (@-mentioned files, hook output, reminders "
                        "that Claude Code sends with a turn) are not reproduced: the log keeps their data, not the "
                        "text Claude Code sent", natt);
    if (s->repaired)
        q_import_report(c, 0, "note: answered %u tool call(s) the log has no result for with an error result", s->repaired);
    if (s->json_parts)
        q_import_report(c, 0, "note: %u tool result part(s) with no transcript form (a document, ...) are sent as their "
                        "JSON text", s->json_parts);
    if (s->k.renamed)
        q_import_report(c, 0, "note: renamed %u repeated tool call ids (see renamedToolCallIds)", s->k.renamed);
    qbuf_printf(c->report,
                "summary: %u lines, %u messages, %u renders, %u compactions, %u reminders lifted, "
                "%u branch lines dropped, %u tool results dropped, %u invalid lines skipped; not conversation:",
                s->nlines + s->skipped_invalid, s->messages, s->renders, s->compacts, s->lifted, s->branch_lines,
                s->dropped_results, s->skipped_invalid);
    for (int k = 0; k < 8; k++)
        if (s->skipped_types[k]) qbuf_printf(c->report, " %s %u", k_skip_names[k], s->skipped_types[k]);
    qbuf_putc(c->report, '\n');
}

quire_status q_import_claude_code(qimport_ctx *c, const char *src, size_t len) {
    cc s;
    memset(&s, 0, sizeof s);
    s.c = c;
    qarena_init(&s.ar, c->a);
    qmap_init(&s.uuids, c->a);
    qmap_init(&s.mids, c->a);
    qmap_init(&s.calls, c->a);
    qcalls_init(&s.k, c->a, &s.ar);
    quire_status st = read_lines(&s, src, len);
    if (!st) st = select_lines(&s);
    if (!st) st = build(&s);
    if (!st) write_log(&s);
    for (uint32_t i = 0; i < s.nlines; i++) qj_doc_free(s.lines[i].doc);
    for (uint32_t i = 0; i < s.nitems; i++) {
        q_free(c->a, s.items[i].blocks, (size_t)s.items[i].capblocks * sizeof(cblock));
        q_free(c->a, s.items[i].rems, (size_t)s.items[i].caprems * sizeof *s.items[i].rems);
    }
    q_free(c->a, s.lines, (size_t)s.caplines * sizeof(ccline));
    q_free(c->a, s.items, (size_t)s.capitems * sizeof(citem));
    qmap_free(&s.uuids);
    qmap_free(&s.mids);
    qmap_free(&s.calls);
    qcalls_free(&s.k);
    q_free(c->a, s.pend, (size_t)s.cappend * sizeof *s.pend);
    qarena_free(&s.ar);
    return st;
}
