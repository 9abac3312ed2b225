/* The replay engine for quire.session/1 logs (DESIGN 7).
 *
 * The replayer keeps one transcript that grows in place: each `message` line
 * is parsed once and decoded once (its parsed document stays alive for the
 * whole replay, the transcript points into it), so replaying N turns costs the
 * parse of the log once plus the bytes of the N requests written. Every event
 * goes through the library's pure functions: quire_render for `render`, the
 * reminder module for `mcp`/`acp`/`reminder`/`clear`, compaction for
 * `compact`.
 */
#include "session/engine.h"

#include "compact/compact.h"
#include "render/memo.h"
#include "reminders/state.h"
#include "core/transcript.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Integration points: reminders (reminders/state) and compaction (compact/)     */
/* ------------------------------------------------------------------------ */

/* Compacts t under the policy object at d/policy (QJ_NONE = defaults). The
 * result transcript borrows from t: the replayer keeps retired transcripts
 * alive until it ends. */
static quire_status qsess_compact(const quire_replay *r, const qj_doc *d, uint32_t policy,
                                  const char *summary, size_t summary_len, const char *span, quire_transcript **nt,
                                  quire_state **ns, qbuf *events, qbuf *report, quire_error *err, bool *policy_error) {
    const quire_transcript *t = r->t;
    const quire_state *s = r->state;
    *nt = NULL;
    *ns = NULL;
    *policy_error = false;
    qc_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.keep_last_steps = 0; /* a logged policy without keepLastSteps predates steps: it kept none */
    quire_status st;
    if (policy != QJ_NONE && (st = qc_policy_parse(d, policy, &p, err)) != QUIRE_OK) {
        *policy_error = true;
        return st;
    }
    /* a replayed compaction with its summary happened: it is applied over the
     * span the policy selects whatever the budget (DESIGN 6, 7) */
    if (summary) p.budget_tokens = 0;
    if ((st = qrp_request_budget(r, &p, err)) != QUIRE_OK) return st;
    qc_result res;
    st = qc_compact_span(t, s, &p, summary, summary_len, span, &res, err);
    if (st) return st;
    *nt = res.t;
    *ns = res.state;
    res.t = NULL;
    res.state = NULL;
    qbuf_put(events, res.events.data, res.events.len);
    qbuf_put(report, res.report.data, res.report.len);
    qc_result_free(&res);
    return QUIRE_OK;
}

/* ------------------------------------------------------------------------ */
/* The replayer                                                              */
/* ------------------------------------------------------------------------ */

static uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ull; }
    return h;
}

static bool idset_has(const idset *s, const char *k, size_t n) {
    if (!s->cap) return false;
    uint32_t mask = s->cap - 1;
    for (uint32_t i = (uint32_t)hash_bytes(k, n) & mask;; i = (i + 1) & mask) {
        if (!s->keys[i]) return false;
        if (s->lens[i] == n && memcmp(s->keys[i], k, n) == 0) return true;
    }
}

static bool idset_add(quire_replay *r, idset *s, const char *k, size_t n) {
    if (idset_has(s, k, n)) return true;
    if ((s->n + 1) * 4 >= s->cap * 3) {
        uint32_t ncap = s->cap ? s->cap * 2 : 64;
        const char **nk = q_malloc(r->a, (size_t)ncap * sizeof *nk);
        uint32_t *nl = q_malloc(r->a, (size_t)ncap * sizeof *nl);
        if (!nk || !nl) { q_free(r->a, nk, (size_t)ncap * sizeof *nk); q_free(r->a, nl, (size_t)ncap * sizeof *nl); return false; }
        memset(nk, 0, (size_t)ncap * sizeof *nk);
        for (uint32_t i = 0; i < s->cap; i++) {
            if (!s->keys[i]) continue;
            uint32_t j = (uint32_t)hash_bytes(s->keys[i], s->lens[i]) & (ncap - 1);
            while (nk[j]) j = (j + 1) & (ncap - 1);
            nk[j] = s->keys[i];
            nl[j] = s->lens[i];
        }
        q_free(r->a, s->keys, (size_t)s->cap * sizeof *s->keys);
        q_free(r->a, s->lens, (size_t)s->cap * sizeof *s->lens);
        s->keys = nk; s->lens = nl; s->cap = ncap;
    }
    char *copy = qarena_strndup(&r->ar, k, n);
    if (!copy) return false;
    uint32_t mask = s->cap - 1;
    uint32_t i = (uint32_t)hash_bytes(k, n) & mask;
    while (s->keys[i]) i = (i + 1) & mask;
    s->keys[i] = copy;
    s->lens[i] = (uint32_t)n;
    s->n++;
    return true;
}

static void idset_free(quire_replay *r, idset *s) {
    q_free(r->a, s->keys, (size_t)s->cap * sizeof *s->keys);
    q_free(r->a, s->lens, (size_t)s->cap * sizeof *s->lens);
    memset(s, 0, sizeof *s);
}

/* Per-line context for errors. */
typedef struct lctx {
    quire_replay *r;
    const qj_doc *d;
    const char *line;
    size_t len, off;
    uint32_t lineno;
    quire_error *err;
    const quire_error *taint; /* the line parsed once repaired: its JSON error (a peer's text) */
    quire_error taint_err;
} lctx;

static quire_status Q_PRINTF(5, 6) lerr(lctx *c, quire_status code, uint32_t node, const char *ptr, const char *fmt, ...) {
    if (!c->err) return code;
    char msg[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t off = node == QJ_NONE ? 0 : qj_offset(c->d, node);
    q_err_at(c->err, code, off, ptr ? ptr : "", "%s", msg);
    q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno);
    return code;
}

/* Checks that obj's keys are among names (NULL-terminated); fills vals. */
static quire_status fields(lctx *c, uint32_t obj, const char *const *names, uint32_t *vals, const char *what,
                           const char *prefix) {
    size_t n = 0;
    while (names[n]) n++;
    bool dup;
    uint32_t k = qj_match_fields(c->d, obj, names, n, vals, &dup);
    if (k == QJ_NONE) return QUIRE_OK;
    char ptr[300];
    const qj_node *kn = qj_at(c->d, k);
    snprintf(ptr, sizeof ptr, "%s", prefix);
    q_ptr_push_key(ptr, sizeof ptr, kn->p, kn->len);
    if (dup) return lerr(c, QUIRE_E_SESSION, k, ptr, "duplicate key \"%.*s\"", (int)(kn->len > 80 ? 80 : kn->len), kn->p);
    return lerr(c, QUIRE_E_SESSION, k, ptr, "unknown field \"%.*s\" in %s", (int)(kn->len > 80 ? 80 : kn->len), kn->p,
                what);
}

static quire_status want_type(lctx *c, uint32_t v, qj_type t, const char *ptr, const char *what) {
    qj_type got = qj_type_of(c->d, v);
    if (got == t || (t == QJ_TRUE && got == QJ_FALSE)) return QUIRE_OK;
    return lerr(c, QUIRE_E_SESSION, v, ptr, "expected %s, got %s", what, qj_type_name(got));
}

/* A decoded string of node v in the replay arena. */
static const char *arena_str(quire_replay *r, const qj_doc *d, uint32_t v) {
    size_t n;
    return qj_str_decode(d, v, &r->ar, &n);
}

static bool keep_doc(quire_replay *r, qj_doc *d) {
    if (r->ndocs == r->capdocs) {
        uint32_t ncap = r->capdocs ? r->capdocs * 2 : 64;
        qj_doc **nd = q_realloc(r->a, r->docs, (size_t)r->capdocs * sizeof *nd, (size_t)ncap * sizeof *nd);
        if (!nd) return false;
        r->docs = nd;
        r->capdocs = ncap;
    }
    r->docs[r->ndocs++] = d;
    return true;
}

/* Parses {"provider":..., "model":...} into the given buffers. */
static quire_status parse_target(lctx *c, uint32_t v, const char *ptr, const char **prov, const char **model) {
    quire_status st = want_type(c, v, QJ_OBJECT, ptr, "object {\"provider\", \"model\"}");
    if (st) return st;
    static const char *const names[] = {"provider", "model", NULL};
    uint32_t f[2];
    if ((st = fields(c, v, names, f, "target", ptr))) return st;
    char p2[300];
    if (f[0] != QJ_NONE) {
        snprintf(p2, sizeof p2, "%s/provider", ptr);
        if ((st = want_type(c, f[0], QJ_STRING, p2, "string"))) return st;
        *prov = arena_str(c->r, c->d, f[0]);
        if (!*prov) return q_oom(c->err);
        if (!**prov) return lerr(c, QUIRE_E_SESSION, f[0], p2, "provider must not be empty");
    }
    if (f[1] != QJ_NONE) {
        snprintf(p2, sizeof p2, "%s/model", ptr);
        if (qj_type_of(c->d, f[1]) == QJ_NULL) {
            *model = NULL;
        } else {
            if ((st = want_type(c, f[1], QJ_STRING, p2, "string or null"))) return st;
            *model = arena_str(c->r, c->d, f[1]);
            if (!*model) return q_oom(c->err);
        }
    }
    return QUIRE_OK;
}

static bool contains(const char *h, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (h[i] == needle[0] && memcmp(h + i, needle, k) == 0) return true;
    return false;
}

static void out_event_lines(quire_replay *r, const char *ev, size_t n, uint32_t *emitted) {
    if (r->live) {
        qbuf_put(&r->sev, ev, n);
        return;
    }
    qline_iter it = {ev, n, 0, 0};
    const char *l;
    size_t ln, off;
    while (q_next_line(&it, &l, &ln, &off)) {
        if (q_line_blank(l, ln)) continue;
        qw w;
        qw_init(&w, &r->out, false);
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "event");
        qw_key(&w, "event"); qw_raw_value(&w, l, ln);
        qw_obj_end(&w);
        qw_dispose(&w);
        qbuf_putc(&r->out, '\n');
        if (emitted && ln > 40 && contains(l, ln, "\"reminder_emitted\"")) (*emitted)++;
    }
}

/* ---- event handlers ---- */

/* The render and reminder settings a session line may carry (a live session
 * records its configuration there, so its log replays with the same rules). */
/* "bridges": {"<server>": ["resources", "tools", "prompts"], ...}: the MCP
 * bridges the session turns on (DESIGN 3; off by default). */
static quire_status session_bridges(lctx *c, uint32_t v) {
    quire_status st = want_type(c, v, QJ_OBJECT, "/bridges", "object {\"<server>\": [\"resources\", ...]}");
    if (st) return st;
    if (qj_find_dup_key(c->d, v) != QJ_NONE)
        return lerr(c, QUIRE_E_SESSION, qj_find_dup_key(c->d, v), "/bridges", "duplicate server in bridges");
    for (uint32_t k = v + 1; k < qj_at(c->d, v)->end; k = qj_next(c->d, k + 1)) {
        char ptr[300] = "/bridges";
        const qj_node *kn = qj_at(c->d, k);
        q_ptr_push_key(ptr, sizeof ptr, kn->p, kn->len);
        uint32_t arr = k + 1;
        if ((st = want_type(c, arr, QJ_ARRAY, ptr, "array of \"resources\", \"tools\", \"prompts\""))) return st;
        size_t n = 0;
        char *name = qj_str_decode(c->d, k, &c->r->ar, &n);
        if (!name) return q_oom(c->err);
        if (!n || strlen(name) != n) return lerr(c, QUIRE_E_SESSION, k, ptr, "a server name must be non-empty text");
        unsigned mask = 0;
        uint32_t i = 0;
        for (uint32_t e = arr + 1; e < qj_at(c->d, arr)->end; e = qj_next(c->d, e), i++) {
            unsigned bit = qj_type_of(c->d, e) != QJ_STRING       ? 0u
                           : qj_str_eq(c->d, e, "resources")    ? QUIRE_BRIDGE_RESOURCES
                           : qj_str_eq(c->d, e, "tools")        ? QUIRE_BRIDGE_TOOLS
                           : qj_str_eq(c->d, e, "prompts")      ? QUIRE_BRIDGE_PROMPTS
                                                                : 0u;
            if (!bit) {
                char p2[320];
                snprintf(p2, sizeof p2, "%s/%u", ptr, i);
                return lerr(c, QUIRE_E_SESSION, e, p2, "a bridge is \"resources\", \"tools\" or \"prompts\"");
            }
            mask |= bit;
        }
        if ((st = quire_state_set_bridges(c->r->state, name, mask, c->err))) return st;
    }
    return QUIRE_OK;
}

static quire_status session_settings(lctx *c, uint32_t policy, uint32_t cpolicy, uint32_t max_tokens,
                                     uint32_t limits) {
    quire_replay *r = c->r;
    quire_status st;
    if (policy != QJ_NONE) {
        if ((st = want_type(c, policy, QJ_OBJECT, "/renderPolicy", "object (a render policy)"))) return st;
        const qj_node *n = qj_at(c->d, policy);
        quire_error perr;
        if ((st = quire_render_policy_apply(n->p, n->len, &r->rpol, &perr)))
            return lerr(c, st, policy, "/renderPolicy", "%s", perr.message);
    }
    if (cpolicy != QJ_NONE) {
        if ((st = want_type(c, cpolicy, QJ_OBJECT, "/compactPolicy", "object (a compaction policy)"))) return st;
        qc_policy p = QUIRE_COMPACT_POLICY_INIT;
        quire_error perr;
        if ((st = qc_policy_parse(c->d, cpolicy, &p, &perr)))
            return lerr(c, st, cpolicy, "/compactPolicy", "%s", perr.message);
        const qj_node *n = qj_at(c->d, cpolicy);
        r->compact_policy = qarena_strndup(&r->ar, n->p, n->len);
        if (!r->compact_policy) return q_oom(c->err);
        r->compact_policy_len = n->len;
    }
    if (max_tokens != QJ_NONE) {
        const qj_node *n = qj_at(c->d, max_tokens);
        uint64_t v = 0;
        bool ok = qj_type_of(c->d, max_tokens) == QJ_NUMBER && n->len > 0 && n->len < 10;
        for (uint32_t i = 0; ok && i < n->len; i++) {
            ok = n->p[i] >= '0' && n->p[i] <= '9';
            v = v * 10 + (uint64_t)(n->p[i] - '0');
        }
        if (!ok || v == 0) return lerr(c, QUIRE_E_SESSION, max_tokens, "/maxTokens", "expected an integer >= 1");
        r->rpol.max_tokens = (uint32_t)v;
    }
    if (limits != QJ_NONE) {
        if ((st = want_type(c, limits, QJ_OBJECT, "/limits", "object (reminder limits)"))) return st;
        static const char *const names[] = {"maxLivePerOrigin", "turnBudgetBytes", "bodyCapBytes", "maxOrigins",
                                            "maxPendingPerServer", NULL};
        uint32_t f[5];
        if ((st = fields(c, limits, names, f, "limits", "/limits"))) return st;
        quire_reminder_limits lim = {0, 0, 0, 0, 0};
        uint32_t *dst[5] = {&lim.max_live_per_origin, &lim.turn_budget_bytes, &lim.body_cap_bytes, &lim.max_origins,
                            &lim.max_pending_per_server};
        for (int i = 0; i < 5; i++) {
            if (f[i] == QJ_NONE) continue;
            const qj_node *n = qj_at(c->d, f[i]);
            uint64_t v = 0;
            bool ok = qj_type_of(c->d, f[i]) == QJ_NUMBER && n->len > 0 && n->len < 10;
            for (uint32_t k = 0; ok && k < n->len; k++) {
                ok = n->p[k] >= '0' && n->p[k] <= '9';
                v = v * 10 + (uint64_t)(n->p[k] - '0');
            }
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/limits/%s", names[i]);
            if (!ok || v == 0) return lerr(c, QUIRE_E_SESSION, f[i], ptr, "expected an integer >= 1");
            *dst[i] = (uint32_t)v;
        }
        quire_state_set_limits(r->state, &lim);
    }
    return QUIRE_OK;
}


static quire_status ev_session(lctx *c, uint32_t root) {
    quire_replay *r = c->r;
    static const char *const names[] = {"type",        "sessionId",     "target",    "system", "tools", "_meta",
                                        "renderPolicy", "compactPolicy", "maxTokens", "limits", "bridges", NULL};
    uint32_t f[11];
    quire_status st = fields(c, root, names, f, "session event", "");
    if (st) return st;
    if (r->seen_session) return lerr(c, QUIRE_E_SESSION, root, "", "a second session event; a log holds one, first");
    if (r->seen_event) return lerr(c, QUIRE_E_SESSION, root, "", "the session event must be the first line of the log");
    r->seen_session = true;
    if (f[1] != QJ_NONE) {
        if ((st = want_type(c, f[1], QJ_STRING, "/sessionId", "string"))) return st;
        r->session_id = arena_str(r, c->d, f[1]);
        if (!r->session_id) return q_oom(c->err);
        quire_state *ns = qs_new(r->a, r->session_id);
        if (!ns) return q_oom(c->err);
        quire_state_free(r->state);
        r->state = ns;
    }
    if (f[2] != QJ_NONE && (st = parse_target(c, f[2], "/target", &r->provider, &r->model))) return st;
    if (f[3] != QJ_NONE) {
        st = qtr_decode_system(r->t, c->d, f[3], "/system", c->err);
        if (st) { q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno); return st; }
    }
    if (f[4] != QJ_NONE) {
        st = qtr_decode_tools(r->t, c->d, f[4], "/tools", c->err);
        if (st) { q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno); return st; }
    }
    if ((st = session_settings(c, f[6], f[7], f[8], f[9]))) return st;
    return f[10] != QJ_NONE ? session_bridges(c, f[10]) : QUIRE_OK;
}

static quire_status ev_message(lctx *c, uint32_t root) {
    quire_replay *r = c->r;
    static const char *const names[] = {"type", "message", "_meta", NULL};
    uint32_t f[3];
    quire_status st = fields(c, root, names, f, "message event", "");
    if (st) return st;
    if (f[1] == QJ_NONE) return lerr(c, QUIRE_E_SESSION, root, "", "missing required field \"message\" in message event");
    uint32_t m = f[1];
    if ((st = want_type(c, m, QJ_OBJECT, "/message", "object (a transcript message)"))) return st;
    /* every toolResult must answer a toolCall seen earlier in the log */
    uint32_t role = qj_get(c->d, m, "role");
    uint32_t content = qj_get(c->d, m, "content");
    bool is_assistant = role != QJ_NONE && qj_type_of(c->d, role) == QJ_STRING && qj_str_eq(c->d, role, "assistant");
    st = qtr_decode_message(r->t, c->d, m, "/message", r->t->nmsgs, c->err);
    if (st) { q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno); return st; }
    quire_limits lim = q_limits(&r->opts);
    if (r->t->nmsgs > lim.max_messages)
        return lerr(c, QUIRE_E_LIMIT, m, "/message", "the transcript would hold %u messages, more than the limit of %u",
                    r->t->nmsgs, lim.max_messages);
    if (content == QJ_NONE || qj_type_of(c->d, content) != QJ_ARRAY) return QUIRE_OK;
    uint32_t e = content + 1;
    for (uint32_t i = 0; i < qj_at(c->d, content)->n; i++, e = qj_next(c->d, e)) {
        uint32_t ty = qj_get(c->d, e, "type");
        if (ty == QJ_NONE) continue;
        if (is_assistant && qj_str_eq(c->d, ty, "toolCall")) {
            uint32_t id = qj_get(c->d, e, "id");
            size_t n;
            const char *s = qj_str_decode(c->d, id, &r->ar, &n);
            if (!s || !idset_add(r, &r->calls, s, n)) return q_oom(c->err);
        } else if (qj_str_eq(c->d, ty, "toolResult")) {
            uint32_t id = qj_get(c->d, e, "toolCallId");
            size_t n = qj_str_decoded_len(c->d, id);
            char small[256];
            char *s = n < sizeof small ? small : qarena_alloc(&r->ar, n + 1);
            if (!s) return q_oom(c->err);
            n = qj_str_decode_into(c->d, id, s);
            if (!idset_has(&r->calls, s, n)) {
                char ptr[64], q[104];
                snprintf(ptr, sizeof ptr, "/message/content/%u/toolCallId", i);
                q_quote_text(q, sizeof q, s, n); /* a decoded id may hold line breaks */
                return lerr(c, QUIRE_E_SESSION, id, ptr, "tool result for \"%s\", which no earlier toolCall in the log has", q);
            }
        }
    }
    return QUIRE_OK;
}

/* The body's pieces in one buffer (r->req), once per render. The first
 * req_keep bytes there are the same in this body (memo.h, qr_memo_same):
 * only what follows them is written. */
bool qrp_flatten(quire_replay *r) {
    if (r->req_flat) return true;
    size_t np = 0, len = 0;
    const qr_piece *pc = r->memo ? qr_memo_pieces(r->memo, &np, &len) : NULL;
    size_t keep = r->req_keep <= r->req.len && r->req_keep <= len ? r->req_keep : 0;
    size_t k = 0, at = 0;
    if (keep) {
        size_t sbytes = 0, same = qr_memo_same(r->memo, NULL, &sbytes);
        if (keep == sbytes) {
            k = same;
            at = sbytes;
        } else {
            /* an earlier body: find the piece the kept bytes end in */
            while (k < np && at + pc[k].n <= keep) at += pc[k++].n;
        }
    }
    r->req.len = at;
    r->flat_written = len - keep;
    if (!qbuf_grow(&r->req, len - at + 1)) return false;
    if (k < np && at < keep) {
        /* the rest of a piece the kept bytes end inside */
        size_t off = keep - at;
        memcpy(r->req.data + keep, pc[k].p + off, pc[k].n - off);
        r->req.len = at + pc[k].n;
        k++;
    }
    for (; k < np; k++) {
        memcpy(r->req.data + r->req.len, pc[k].p, pc[k].n);
        r->req.len += pc[k].n;
    }
    if (r->req.oom) return false;
    r->req.data[r->req.len] = '\0';
    r->req_flat = true;
    r->req_keep = r->req.len;
    return true;
}

/* The digest of the body (quire_digest128), carried over the stable pieces
 * that the previous body shares from its start: only what follows the first
 * change is hashed. */
struct qrp_dlink {
    const char *p;
    size_t n;
    uint64_t hi, lo;
};

static void running_digest(quire_replay *r, char hex[33], size_t *blen) {
    size_t n, len;
    const qr_piece *p = qr_memo_pieces(r->memo, &n, &len);
    *blen = len;
    uint64_t hi, lo;
    q_fnv1a128_begin(&hi, &lo);
    size_t k = 0;
    uint64_t gen = 0;
    size_t same = qr_memo_same(r->memo, &gen, NULL);
    if (r->dchain_epoch == qr_memo_epoch(r->memo)) {
        /* the pieces the last body shares from its start are known (the
         * memo's reused prefix) when the chain is of that body: no look */
        if (r->dchain_gen + 1 == gen && same) k = same < r->ndchain ? same : r->ndchain;
        if (k) {
            hi = r->dchain[k - 1].hi;
            lo = r->dchain[k - 1].lo;
        }
        for (; k < n && k < r->ndchain && p[k].stable && r->dchain[k].p == p[k].p && r->dchain[k].n == p[k].n; k++) {
            hi = r->dchain[k].hi;
            lo = r->dchain[k].lo;
        }
    }
    if (r->capdchain < n) {
        size_t ncap = n + n / 2 + 16;
        struct qrp_dlink *nd = q_realloc(r->a, r->dchain, r->capdchain * sizeof *nd, ncap * sizeof *nd);
        if (nd) { r->dchain = nd; r->capdchain = ncap; }
    }
    r->ndchain = k;
    for (; k < n; k++) {
        q_fnv1a128_more(&hi, &lo, p[k].p, p[k].n);
        if (k < r->capdchain && r->ndchain == k && p[k].stable) {
            struct qrp_dlink l = {p[k].p, p[k].n, hi, lo};
            r->dchain[k] = l;
            r->ndchain = k + 1;
        }
    }
    r->dchain_epoch = qr_memo_epoch(r->memo);
    r->dchain_gen = gen;
    q_digest_hex(hi, lo, hex);
}

/* True when the render's events emit, for the first time, a reminder of
 * state s (the state rendered) whose mode is interrupt_immediate. */
static bool fires_interrupt(const quire_state *s, const char *ev, size_t n) {
    bool found = false;
    for (uint32_t i = 0; i < s->nrems && !found; i++) {
        const qreminder *q = &s->rems[i];
        if (q->mode != QM_INTERRUPT_IMMEDIATE || q->fired_at_turn != 0 || q->retired_at_turn != 0) continue;
        /* the event's opening bytes, written by the same JSON writer */
        qbuf b;
        qbuf_init(&b, s->a);
        qw w;
        qw_init(&w, &b, false);
        qw_obj_begin(&w);
        qw_key(&w, "sessionUpdate"); qw_strz(&w, "reminder_emitted");
        qw_key(&w, "reminderId"); qw_strz(&w, q->id);
        qw_dispose(&w);
        qbuf_putc(&b, '\0');
        /* out of memory: err on the side of stopping the batch */
        found = b.oom || (ev && contains(ev, n, b.data));
        qbuf_free(&b);
    }
    return found;
}

static quire_status ev_render(lctx *c, uint32_t root, quire_replay_step *step) {
    quire_replay *r = c->r;
    static const char *const names[] = {"type", "target", "_meta", "params", NULL};
    uint32_t f[4];
    quire_status st = fields(c, root, names, f, "render event", "");
    if (st) return st;
    const char *prov = r->provider, *model = r->model;
    if (f[1] != QJ_NONE) {
        const char *p2 = NULL, *m2 = NULL;
        bool had_model = qj_get(c->d, f[1], "model") != QJ_NONE;
        if ((st = parse_target(c, f[1], "/target", &p2, &m2))) return st;
        if (p2) { prov = p2; if (!had_model) model = NULL; }
        if (had_model) model = m2;
    }
    if (r->ro.provider) { prov = r->ro.provider; model = NULL; }
    if (r->ro.model) model = r->ro.model;
    if (!prov)
        return lerr(c, QUIRE_E_SESSION, root, "",
                    "no target provider: give one in the session event, the render event or --provider");
    /* the log's render policy (session line renderPolicy, maxTokens), with what
     * the replay was asked for on top (replay --caps/--policy/--lossy): a
     * non-default value given there wins */
    quire_render_options ro = r->rpol;
    const quire_render_options *over = r->ro.render;
    if (over && over->size >= sizeof *over) {
        if (over->allow_system_slot) ro.allow_system_slot = over->allow_system_slot;
        if (over->placement) ro.placement = over->placement;
        if (over->cache_breakpoints) ro.cache_breakpoints = over->cache_breakpoints;
        if (over->lossy) ro.lossy = over->lossy;
        if (over->peer_max_slot) ro.peer_max_slot = over->peer_max_slot;
        if (over->max_tokens) ro.max_tokens = over->max_tokens;
    }
    ro.size = sizeof ro;
    ro.provider = prov;
    ro.model = model;
    ro.pretty = r->ro.pretty;
    if (r->ro.max_tokens) ro.max_tokens = r->ro.max_tokens;
    ro.caps = over && over->size >= sizeof *over && over->caps ? over->caps : r->caps;
    /* request parameters of this render (DESIGN 13): the line's params object */
    ro.params = NULL;
    ro.params_len = 0;
    ro.params_override = NULL;
    ro.params_override_len = 0;
    ro.params_base = NULL;
    ro.params_base_len = 0;
    if (f[3] != QJ_NONE) {
        if (qj_type_of(c->d, f[3]) != QJ_OBJECT)
            return lerr(c, QUIRE_E_SESSION, f[3], "/params", "expected an object of request parameters");
        ro.params = qj_at(c->d, f[3])->p;
        ro.params_len = qj_at(c->d, f[3])->len;
    }
    quire_render_result res;
    if (!r->memo && !(r->memo = qr_memo_new(r->a))) return q_oom(c->err);
    r->req_flat = false;
    st = qr_render_memo(r->t, r->state, &ro, &r->opts, r->memo, &res, c->err);
    {
        /* what r->req still holds of this body: the bytes it shares with the
         * last body, at most (qrp_flatten) */
        size_t sbytes = 0;
        if (st || !qr_memo_same(r->memo, NULL, &sbytes)) sbytes = 0;
        if (sbytes < r->req_keep) r->req_keep = sbytes;
    }
    if (st) {
        /* render errors point into the transcript, not this line: keep the
         * message and pointer, locate them at this render line */
        if (c->err) {
            c->err->offset = c->off;
            c->err->line = c->lineno;
            c->err->column = 1;
        }
        return st;
    }
    if (!ro.lossy) {
        /* a replay never writes a body its provider would reject (DESIGN 7);
         * with lossy, quire_render has checked its own output already */
        quire_render_options vro = ro;
        quire_bytes rep;
        quire_error verr;
        quire_options vo = QUIRE_OPTIONS_INIT;
        vo.allocator = r->a;
        /* the window first (what changed and its neighbours, memo.h); the
         * whole body when the window fails, for the errors of the body */
        quire_status vs = QUIRE_E_VALIDATE;
        const char *win = NULL;
        size_t winlen = 0;
        if (qr_memo_window(r->memo, &win, &winlen)) {
            vs = quire_validate(win, winlen, &vro, &vo, &rep, &verr);
            if (vs == QUIRE_E_VALIDATE) quire_bytes_free(&rep);
            if (vs == QUIRE_OK) r->nwindow++;
#ifdef QUIRE_CHECK_WINDOW
            /* fuzz builds: a window that passes stands for a body that passes
             * (render/memo.h); anything else is a bug in the window */
            if (vs == QUIRE_OK) {
                quire_bytes_free(&rep);
                if (!qrp_flatten(r)) { quire_render_result_free(&res); return q_oom(c->err); }
                quire_status fs = quire_validate(r->req.data ? r->req.data : "", r->req.len, &vro, &vo, &rep, &verr);
                if (fs == QUIRE_E_VALIDATE) abort(); /* the fuzzer keeps the input */
            }
#endif
        }
        if (vs != QUIRE_OK) {
            if (!qrp_flatten(r)) { quire_render_result_free(&res); return q_oom(c->err); }
            r->nfull++;
            vs = quire_validate(r->req.data ? r->req.data : "", r->req.len, &vro, &vo, &rep, &verr);
        }
        if (vs == QUIRE_E_VALIDATE) {
            size_t n = 0;
            while (n < rep.len && rep.data[n] != '\n') n++;
            uint32_t more = 0;
            for (size_t i = n + 1; i < rep.len; i++) more += rep.data[i] == '\n';
            lerr(c, QUIRE_E_VALIDATE, root, "", "the request for %s would be invalid: %.*s%s (the target cannot carry "
                 "this conversation as logged; --lossy drops what it cannot express, with events)",
                 prov, (int)(n < 300 ? n : 300), rep.data, more ? " (and more)" : "");
            quire_bytes_free(&rep);
            quire_render_result_free(&res);
            return QUIRE_E_VALIDATE;
        }
        if (vs == QUIRE_OK) quire_bytes_free(&rep);
        if (vs == QUIRE_E_NOMEM) { quire_render_result_free(&res); return q_oom(c->err); }
        if (vs != QUIRE_OK) {
            lerr(c, QUIRE_E_VALIDATE, root, "", "the request for %s written is not well-formed (%s at %s): please report this",
                 prov, verr.message, verr.pointer);
            quire_render_result_free(&res);
            return QUIRE_E_VALIDATE;
        }
    }
    int64_t turn = res.state ? res.state->turn : 0;
    /* an interrupt_immediate reminder rendered for the first time asks the
     * host to skip the pending tool batch (DESIGN 11); one the per-turn
     * budget kept out was not rendered and interrupts nothing */
    bool interrupt = r->live && fires_interrupt(r->state, res.events.data, res.events.len);
    snprintf(r->target_provider, sizeof r->target_provider, "%s", prov);
    snprintf(r->target_model, sizeof r->target_model, "%s", model ? model : "");
    step->turn = turn;
    step->provider = r->target_provider;
    step->model = model ? r->target_model : NULL;
    if (r->live) {
        /* the envelope: path and headers of the pending request */
        r->env_path.len = 0;
        r->env_headers.len = 0;
        qj_doc ed;
        if (qj_parse(&ed, res.envelope.data ? res.envelope.data : "{}", res.envelope.data ? res.envelope.len : 2, NULL,
                     r->a, NULL) == QUIRE_OK) {
            uint32_t pn = qj_get(&ed, 0, "path"), hn = qj_get(&ed, 0, "headers");
            if (pn != QJ_NONE) {
                char *pz = qj_str_decode(&ed, pn, &r->ar, NULL);
                if (pz) qbuf_puts(&r->env_path, pz);
            }
            if (hn != QJ_NONE) qbuf_put(&r->env_headers, qj_at(&ed, hn)->p, qj_at(&ed, hn)->len);
            qj_doc_free(&ed);
        }
        qbuf_putc(&r->env_path, '\0');
        qbuf_putc(&r->env_headers, '\0');
        if (r->env_path.oom || r->env_headers.oom) { quire_render_result_free(&res); return q_oom(c->err); }
        r->env_path.len--;
        r->env_headers.len--;
        /* the turn stays pending: the state moves on only when it is accepted */
        qbuf_put(&r->sev, res.events.data, res.events.len);
        quire_state_free(r->pending);
        r->pending = res.state;
        r->pending_turn = turn;
        r->interrupt_pending = interrupt;
        res.state = NULL;
        quire_render_result_free(&res);
        return r->sev.oom ? q_oom(c->err) : QUIRE_OK;
    }
    if (r->restoring) {
        /* a session being restored commits the turn and writes no line */
        quire_state_free(r->state);
        r->state = res.state;
        res.state = NULL;
        quire_render_result_free(&res);
        return QUIRE_OK;
    }
    /* the stream line: bodies are always compact inside JSONL */
    qw w;
    qw_init(&w, &r->out, false);
    qw_obj_begin(&w);
    qw_key(&w, "type"); qw_strz(&w, "request");
    qw_key(&w, "turn"); qw_int(&w, turn);
    qw_key(&w, "target");
    qw_obj_begin(&w);
    qw_key(&w, "provider"); qw_strz(&w, prov);
    if (model) { qw_key(&w, "model"); qw_strz(&w, model); }
    qw_obj_end(&w);
    if (r->ro.flags & QUIRE_REPLAY_DIGEST) {
        char hex[33];
        size_t blen = 0;
        running_digest(r, hex, &blen);
        qw_key(&w, "bytes"); qw_int(&w, (int64_t)blen);
        qw_key(&w, "digest"); qw_strz(&w, hex);
    } else {
        if (!qrp_flatten(r)) { qw_dispose(&w); quire_render_result_free(&res); return q_oom(c->err); }
        qw_key(&w, "body");
        if (r->ro.pretty) {
            /* the step keeps the pretty body; the line gets a compact copy */
            quire_bytes compact = {0};
            if (quire_json_format(r->req.data, r->req.len, 0, &r->opts, &compact, NULL) == QUIRE_OK) {
                qw_raw_value(&w, compact.data, compact.len);
                quire_bytes_free(&compact);
            } else {
                qw_raw_value(&w, r->req.data, r->req.len);
            }
        } else {
            qw_raw_value(&w, r->req.data, r->req.len);
        }
    }
    qw_obj_end(&w);
    qw_dispose(&w);
    qbuf_putc(&r->out, '\n');
    uint32_t emitted = 0;
    out_event_lines(r, res.events.data, res.events.len, &emitted);
    quire_state_free(r->state);
    r->state = res.state;
    res.state = NULL;
    quire_render_result_free(&res);
    step->reminders = emitted;
    return QUIRE_OK;
}

static quire_status ev_reminders(lctx *c, uint32_t root, const char *type) {
    quire_replay *r = c->r;
    qbuf events, responses;
    qbuf_init(&events, r->a);
    qbuf_init(&responses, r->a);
    (void)type;
    quire_status st = qs_apply_line_repaired(r->state, c->d, root, "", &events, &responses, c->taint, c->err);
    if (st) {
        q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno);
        qbuf_free(&events);
        qbuf_free(&responses);
        return st;
    }
    out_event_lines(r, events.data, events.len, NULL);
    if (r->live) qbuf_put(&r->sresp, responses.data, responses.len);
    qline_iter it = {responses.data, r->live ? 0 : responses.len, 0, 0};
    const char *l;
    size_t ln, off;
    while (q_next_line(&it, &l, &ln, &off)) {
        if (q_line_blank(l, ln)) continue;
        qw w;
        qw_init(&w, &r->out, false);
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "response");
        qw_key(&w, "message"); qw_raw_value(&w, l, ln);
        qw_obj_end(&w);
        qw_dispose(&w);
        qbuf_putc(&r->out, '\n');
    }
    bool oom = events.oom || responses.oom;
    qbuf_free(&events);
    qbuf_free(&responses);
    return oom ? q_oom(c->err) : QUIRE_OK;
}

static quire_status ev_compact(lctx *c, uint32_t root, quire_replay_step *step) {
    quire_replay *r = c->r;
    static const char *const names[] = {"type", "policy", "summary", "messages", "span", "_meta", NULL};
    uint32_t f[6];
    quire_status st = fields(c, root, names, f, "compact event", "");
    if (st) return st;
    /* span: the id of the span a plan named (DESIGN 6): the summary replaces
     * exactly it, whatever was appended since */
    if (f[4] != QJ_NONE && (st = want_type(c, f[4], QJ_STRING, "/span", "string (a plan's span id)"))) return st;
    if (f[4] != QJ_NONE && (f[2] == QJ_NONE || f[3] != QJ_NONE))
        return lerr(c, QUIRE_E_SESSION, f[4], "/span", "a span id goes with a summary (and no messages)");
    if (f[1] != QJ_NONE && (st = want_type(c, f[1], QJ_OBJECT, "/policy", "object (a compaction policy)"))) return st;
    if (f[2] != QJ_NONE && (st = want_type(c, f[2], QJ_STRING, "/summary", "string"))) return st;
    if (f[3] != QJ_NONE && (st = want_type(c, f[3], QJ_ARRAY, "/messages", "array of transcript messages"))) return st;
    qbuf events, report;
    qbuf_init(&events, r->a);
    qbuf_init(&report, r->a);
    quire_transcript *nt = NULL;
    quire_state *ns = NULL;
    if (f[3] != QJ_NONE) {
        /* a logged compaction with its exact replacement history */
        nt = qtr_new(r->a);
        if (!nt) { st = q_oom(c->err); goto done; }
        nt->has_system = r->t->has_system;
        nt->system_is_string = r->t->system_is_string;
        nt->system = r->t->system;
        nt->nsystem = r->t->nsystem;
        nt->has_tools = r->t->has_tools;
        nt->tools = r->t->tools;
        nt->ntools = r->t->ntools;
        uint32_t e = f[3] + 1;
        for (uint32_t i = 0; i < qj_at(c->d, f[3])->n; i++, e = qj_next(c->d, e)) {
            char ptr[48];
            snprintf(ptr, sizeof ptr, "/messages/%u", i);
            st = qtr_decode_message(nt, c->d, e, ptr, i, c->err);
            if (st) { q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno); goto done; }
            uint32_t content = qj_get(c->d, e, "content");
            if (content != QJ_NONE && qj_type_of(c->d, content) == QJ_ARRAY) {
                uint32_t b = content + 1;
                for (uint32_t k = 0; k < qj_at(c->d, content)->n; k++, b = qj_next(c->d, b)) {
                    uint32_t ty = qj_get(c->d, b, "type");
                    if (ty != QJ_NONE && qj_str_eq(c->d, ty, "toolCall")) {
                        uint32_t id = qj_get(c->d, b, "id");
                        size_t n;
                        const char *s = qj_str_decode(c->d, id, &r->ar, &n);
                        if (!s || !idset_add(r, &r->calls, s, n)) { st = q_oom(c->err); goto done; }
                    }
                }
            }
        }
        ns = qs_clone(r->state);
        if (!ns) { st = q_oom(c->err); goto done; }
        uint32_t kept = 0, removed = 0;
        qs_after_compact(ns, &events, &kept, &removed);
        qw w;
        qw_init(&w, &report, false);
        qw_obj_begin(&w);
        qw_key(&w, "mode"); qw_strz(&w, "replacement");
        qw_key(&w, "messagesBefore"); qw_int(&w, r->t->nmsgs);
        qw_key(&w, "messagesAfter"); qw_int(&w, nt->nmsgs);
        qw_key(&w, "remindersKept"); qw_int(&w, kept);
        qw_key(&w, "remindersRemoved"); qw_int(&w, removed);
        qw_obj_end(&w);
        qw_dispose(&w);
    } else {
        const char *summary = NULL;
        size_t summary_len = 0;
        if (f[2] != QJ_NONE) {
            summary = qj_str_decode(c->d, f[2], &r->ar, &summary_len);
            if (!summary) { st = q_oom(c->err); goto done; }
        }
        const char *span = NULL;
        if (f[4] != QJ_NONE) {
            size_t sl = 0;
            const char *sp = qj_str_decode(c->d, f[4], &r->ar, &sl);
            span = sp ? qarena_strndup(&r->ar, sp, sl) : NULL; /* NUL-terminated */
            if (!span) { st = q_oom(c->err); goto done; }
        }
        bool perr = false;
        st = qsess_compact(r, c->d, f[1], summary, summary_len, span, &nt, &ns, &events, &report, c->err, &perr);
        if (st) {
            if (perr && c->err) {
                /* a policy error: its pointer is relative to the policy object */
                char tmp[sizeof c->err->pointer];
                memcpy(tmp, c->err->pointer, sizeof tmp);
                tmp[sizeof tmp - 8] = '\0';
                memcpy(c->err->pointer, "/policy", 7);
                memcpy(c->err->pointer + 7, tmp, strlen(tmp) + 1);
            }
            q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno);
            goto done;
        }
    }
    /* the transcript is replaced; the old one stays alive (the new one
     * borrows from it) and its documents stay in r->docs */
    if (r->nretired == r->capretired) {
        uint32_t ncap = r->capretired ? r->capretired * 2 : 4;
        quire_transcript **nr = q_realloc(r->a, r->retired, (size_t)r->capretired * sizeof *nr, (size_t)ncap * sizeof *nr);
        if (!nr) { st = q_oom(c->err); goto done; }
        r->retired = nr;
        r->capretired = ncap;
    }
    r->retired[r->nretired++] = r->t;
    r->t = nt;
    nt = NULL;
    if (ns) {
        quire_state_free(r->state);
        r->state = ns;
        ns = NULL;
    }
    if (r->live) {
        qbuf_put(&r->sreport, report.data, report.len);
    } else {
        qw w;
        qw_init(&w, &r->out, false);
        qw_obj_begin(&w);
        qw_key(&w, "type"); qw_strz(&w, "compacted");
        qw_key(&w, "messages"); qw_int(&w, r->t->nmsgs);
        qw_key(&w, "report");
        if (report.len) qw_raw_value(&w, report.data, report.len);
        else { qw_obj_begin(&w); qw_obj_end(&w); }
        qw_obj_end(&w);
        qw_dispose(&w);
        qbuf_putc(&r->out, '\n');
    }
    out_event_lines(r, events.data, events.len, NULL);
    step->compactions = 1;
done:
    quire_transcript_free(nt);
    quire_state_free(ns);
    if (st == QUIRE_OK && (events.oom || report.oom)) st = q_oom(c->err);
    qbuf_free(&events);
    qbuf_free(&report);
    return st;
}

static const char *const k_event_types[] = {"session", "message", "mcp", "acp", "reminder", "clear", "render", "compact"};

static quire_status apply_line(quire_replay *r, lctx *c, quire_replay_step *step) {
    qj_doc *d = qarena_alloc(&r->ar, sizeof *d);
    if (!d) return q_oom(c->err);
    quire_limits lim = q_limits(&r->opts);
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_error e0;
    quire_status st = qj_parse(d, c->line, c->len, &jo, r->a, &e0);
    c->taint = NULL;
    /* a peer's invalid text (docs/reminders.md, "Peers' invalid text"): a
     * repaired copy is read, and the original error goes with it; it drops
     * the reminder of an mcp or acp line's message, and is the error anywhere
     * else */
    quire_status rs = st == QUIRE_E_JSON ? qs_parse_repaired(d, c->line, c->len, qarena_alloc(&r->ar, c->len), &jo, r->a)
                                         : QUIRE_E_JSON;
    if (rs == QUIRE_E_NOMEM) return q_oom(c->err);
    if (rs == QUIRE_OK) {
        if (qs_peer_text_at(d, 0, e0.offset)) {
            c->taint_err = e0;
            c->taint = &c->taint_err;
            st = QUIRE_OK;
        } else {
            qj_doc_free(d);
        }
    }
    if (st && c->err) *c->err = e0;
    if (st) {
        q_err_rebase_line(c->err, c->line, c->len, c->off, c->lineno);
        return st;
    }
    if (!keep_doc(r, d)) { qj_doc_free(d); return q_oom(c->err); }
    c->d = d;
    if (qj_type_of(d, 0) != QJ_OBJECT)
        return lerr(c, QUIRE_E_SESSION, 0, "", "expected an object (a session-log event), got %s", qj_type_name(qj_type_of(d, 0)));
    uint32_t dup = qj_find_dup_key(d, 0);
    if (dup != QJ_NONE) {
        char ptr[300] = "";
        q_ptr_push_key(ptr, sizeof ptr, qj_at(d, dup)->p, qj_at(d, dup)->len);
        return lerr(c, QUIRE_E_SESSION, dup, ptr, "duplicate key");
    }
    uint32_t ty = qj_get(d, 0, "type");
    if (ty == QJ_NONE) return lerr(c, QUIRE_E_SESSION, 0, "", "missing required field \"type\" in session-log event");
    if ((st = want_type(c, ty, QJ_STRING, "/type", "string"))) return st;
    int k = -1;
    for (size_t i = 0; i < Q_COUNTOF(k_event_types); i++)
        if (qj_str_eq(d, ty, k_event_types[i])) { k = (int)i; break; }
    if (k < 0) {
        const qj_node *tn = qj_at(d, ty);
        return lerr(c, QUIRE_E_SESSION, ty, "/type",
                    "unknown event type \"%.*s\" (expected session, message, mcp, acp, reminder, clear, render or compact)",
                    (int)(tn->len > 60 ? 60 : tn->len), tn->p);
    }
    step->type = k_event_types[k];
    switch (k) {
    case 0: st = ev_session(c, 0); break;
    case 1: st = ev_message(c, 0); break;
    case 2: case 3: case 4: case 5: st = ev_reminders(c, 0, k_event_types[k]); break;
    case 6: st = ev_render(c, 0, step); break;
    case 7: st = ev_compact(c, 0, step); break;
    default: st = QUIRE_OK; break;
    }
    if (k != 0) r->seen_event = true;
    if (k >= 2 && k <= 6 && r->ndocs && r->docs[r->ndocs - 1] == d) {
        /* reminder, clear and render lines leave nothing that points into
         * their document (states own their strings): free it now */
        qj_doc_free(d);
        r->ndocs--;
        c->d = NULL;
    }
    return st;
}

quire_status qrp_apply(quire_replay *r, const char *line, size_t len, uint32_t lineno, size_t off,
                       quire_replay_step *step, quire_error *err) {
    lctx c = {r, NULL, line, len, off, lineno, err, NULL, {0}};
    step->line = lineno;
    quire_status st = apply_line(r, &c, step);
    if (st == QUIRE_OK && (r->out.oom || r->req.oom)) st = q_oom(err);
    if (st && err && err->line == 0) { err->line = lineno; err->offset = off; err->column = 1; }
    return st;
}

bool qrp_call_seen(const quire_replay *r, const char *id, size_t n) { return idset_has(&r->calls, id, n); }

quire_status quire_replay_open(const char *log, size_t len, const quire_replay_options *ro, const quire_options *opts,
                               quire_replay **out, quire_error *err) {
    *out = NULL;
    const quire_allocator *a = q_alloc_of(opts);
    quire_limits lim = q_limits(opts);
    if ((uint64_t)len > lim.max_input_bytes)
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)lim.max_input_bytes);
    quire_replay *r = q_malloc(a, sizeof *r);
    if (!r) return q_oom(err);
    memset(r, 0, sizeof *r);
    r->a = a;
    if (opts) {
        size_t n = opts->size < sizeof r->opts ? opts->size : sizeof r->opts;
        memcpy(&r->opts, opts, n);
    }
    r->opts.size = sizeof r->opts;
    quire_replay_options dro = QUIRE_REPLAY_OPTIONS_INIT;
    r->ro = dro;
    if (ro) {
        size_t n = ro->size < sizeof r->ro ? ro->size : sizeof r->ro;
        memcpy(&r->ro, ro, n);
    }
    qarena_init(&r->ar, a);
    qbuf_init(&r->out, a);
    qbuf_init(&r->req, a);
    qbuf_init(&r->env_path, a);
    qbuf_init(&r->env_headers, a);
    qbuf_init(&r->sev, a);
    qbuf_init(&r->sresp, a);
    qbuf_init(&r->sreport, a);
    r->rpol.size = sizeof r->rpol;
    const char *src = log;
    if (!(r->opts.flags & QUIRE_PARSE_BORROW)) {
        r->owned = q_malloc(a, len ? len : 1);
        if (!r->owned) { quire_replay_free(r); return q_oom(err); }
        if (len) memcpy(r->owned, log, len);
        r->owned_len = len ? len : 1;
        src = r->owned;
    }
    r->it.src = src;
    r->it.len = len;
    r->t = qtr_new(a);
    r->state = qs_new(a, NULL);
    if (!r->t || !r->state) { quire_replay_free(r); return q_oom(err); }
    *out = r;
    return QUIRE_OK;
}

quire_status quire_replay_next(quire_replay *r, quire_replay_step *step, int *done, quire_error *err) {
    memset(step, 0, sizeof *step);
    *done = 0;
    if (r->failed) return q_err(err, QUIRE_E_INVALID, "the replay already failed");
    r->out.len = 0;
    const char *line;
    size_t len, off;
    for (;;) {
        if (!q_next_line(&r->it, &line, &len, &off)) {
            *done = 1;
            return QUIRE_OK;
        }
        if (!q_line_blank(line, len)) break;
    }
    quire_status st = qrp_apply(r, line, len, r->it.lineno, off, step, err);
    if (st) {
        r->failed = true;
        return st;
    }
    step->output = r->out.data ? r->out.data : "";
    step->output_len = r->out.len;
    if (step->turn) {
        /* with QUIRE_REPLAY_DIGEST the body is never put in one buffer */
        size_t np, blen = 0;
        if (r->memo) qr_memo_pieces(r->memo, &np, &blen);
        bool flat = r->req_flat && !(r->ro.flags & QUIRE_REPLAY_DIGEST);
        step->request = flat ? r->req.data : NULL;
        step->request_len = flat ? r->req.len : blen;
    }
    return QUIRE_OK;
}

void quire_replay_free(quire_replay *r) {
    if (!r) return;
    quire_transcript_free(r->t);
    quire_state_free(r->state);
    for (uint32_t i = r->nretired; i-- > 0;) quire_transcript_free(r->retired[i]);
    q_free(r->a, r->retired, (size_t)r->capretired * sizeof *r->retired);
    for (uint32_t i = 0; i < r->ndocs; i++) qj_doc_free(r->docs[i]);
    q_free(r->a, r->docs, (size_t)r->capdocs * sizeof *r->docs);
    idset_free(r, &r->calls);
    qbuf_free(&r->out);
    qbuf_free(&r->env_path);
    qbuf_free(&r->env_headers);
    qbuf_free(&r->req);
    qbuf_free(&r->sev);
    qbuf_free(&r->sresp);
    qbuf_free(&r->sreport);
    quire_state_free(r->pending);
    qr_memo_free(r->memo);
    q_free(r->a, r->dchain, r->capdchain * sizeof *r->dchain);
    qarena_free(&r->ar);
    q_free(r->a, r->owned, r->owned_len);
    q_free(r->a, r, sizeof *r);
}

quire_status quire_replay_run(const char *log, size_t len, const quire_replay_options *ro, const quire_options *opts,
                              quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    quire_options o = QUIRE_OPTIONS_INIT;
    if (opts) {
        size_t n = opts->size < sizeof o ? opts->size : sizeof o;
        memcpy(&o, opts, n);
        o.size = sizeof o;
    }
    o.flags |= QUIRE_PARSE_BORROW; /* the caller's bytes outlive this call */
    quire_replay *r;
    quire_status st = quire_replay_open(log, len, ro, &o, &r, err);
    if (st) return st;
    qbuf b;
    qbuf_init(&b, q_alloc_of(opts));
    for (;;) {
        quire_replay_step step;
        int done;
        st = quire_replay_next(r, &step, &done, err);
        if (st || done) break;
        qbuf_put(&b, step.output, step.output_len);
    }
    quire_replay_free(r);
    if (st == QUIRE_OK && (b.oom || !qbuf_take(&b, out))) st = q_oom(err);
    if (st) qbuf_free(&b);
    return st;
}
