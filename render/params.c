/* Request parameters (DESIGN 13): parsing and shape checks. The mapping to
 * each dialect lives in its encoder; see docs/params.md. */
#include "render/params.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const k_names[] = {"maxTokens", "temperature", "topP", "topK", "stop", "seed", "toolChoice",
                                      "parallelToolCalls", "responseFormat", "reasoning", "stream", "user",
                                      "providerOptions"};
enum { F_MAX, F_TEMP, F_TOPP, F_TOPK, F_STOP, F_SEED, F_TC, F_PAR, F_RF, F_REASON, F_STREAM, F_USER, F_PO, F_N };

typedef struct pctx {
    qparams *p;
    const char *src[3];
    size_t len[3];
    uint32_t which[F_N]; /* doc of each field */
    uint32_t node[F_N];  /* its value node, QJ_NONE when absent */
    quire_error *err;
} pctx;

static quire_status perr(pctx *c, uint32_t f, uint32_t n, const char *sub, const char *msg, const char *unused) {
    (void)unused;
    char ptr[96];
    snprintf(ptr, sizeof ptr, "/%s%s", k_names[f], sub ? sub : "");
    const qj_doc *d = &c->p->docs[c->which[f]];
    quire_status st = q_err_at(c->err, QUIRE_E_SCHEMA, qj_offset(d, n), ptr, "%s", msg);
    if (c->err) q_err_locate(c->err, c->src[c->which[f]], c->len[c->which[f]]);
    return st;
}

bool qr_is_param_pointer(const char *ptr) {
    if (!ptr || ptr[0] != '/') return false;
    for (uint32_t f = 0; f < F_N; f++) {
        size_t n = strlen(k_names[f]);
        if (strncmp(ptr + 1, k_names[f], n) == 0 && (ptr[1 + n] == '\0' || ptr[1 + n] == '/')) return true;
    }
    return false;
}

double qp_number(qval v) {
    if (!v.doc) return 0;
    const qj_node *n = qj_at(v.doc, v.idx);
    char tmp[64];
    size_t k = n->len < sizeof tmp - 1 ? n->len : sizeof tmp - 1;
    memcpy(tmp, n->p, k);
    tmp[k] = '\0';
    return strtod(tmp, NULL);
}

static bool is_int(const qj_doc *d, uint32_t n, int64_t *v) {
    return qj_type_of(d, n) == QJ_NUMBER && qj_int64(d, n, v);
}

static const char *const k_efforts[] = {"none", "minimal", "low", "medium", "high", "xhigh"};

static quire_status interpret(pctx *c) {
    qparams *p = c->p;
    for (uint32_t f = 0; f < F_N; f++) {
        uint32_t n = c->node[f];
        if (n == QJ_NONE) continue;
        const qj_doc *d = &p->docs[c->which[f]];
        qj_type t = qj_type_of(d, n);
        qval v = qval_of(d, n);
        int64_t iv = 0;
        p->any = true;
        switch (f) {
        case F_MAX:
            if (!is_int(d, n, &iv) || iv < 1 || iv > 0xFFFFFFFFll)
                return perr(c, f, n, NULL, "expected an integer >= 1", NULL);
            p->has_max_tokens = true;
            p->max_tokens = (uint32_t)iv;
            break;
        case F_TEMP:
            if (t != QJ_NUMBER || qp_number(v) < 0) return perr(c, f, n, NULL, "expected a number >= 0", NULL);
            p->temperature = v;
            break;
        case F_TOPP:
            if (t != QJ_NUMBER || qp_number(v) < 0 || qp_number(v) > 1)
                return perr(c, f, n, NULL, "expected a number between 0 and 1", NULL);
            p->top_p = v;
            break;
        case F_TOPK:
            if (!is_int(d, n, &iv) || iv < 1) return perr(c, f, n, NULL, "expected an integer >= 1", NULL);
            p->top_k = v;
            break;
        case F_SEED:
            if (!is_int(d, n, &iv)) return perr(c, f, n, NULL, "expected an integer", NULL);
            p->seed = v;
            break;
        case F_STOP:
            if (t == QJ_STRING) {
                if (qj_at(d, n)->len == 0) return perr(c, f, n, NULL, "a stop sequence must be non-empty", NULL);
            } else if (t == QJ_ARRAY) {
                if (qj_at(d, n)->n == 0) return perr(c, f, n, NULL, "expected at least one stop sequence", NULL);
                uint32_t e = n + 1;
                for (uint32_t i = 0; i < qj_at(d, n)->n; i++, e = qj_next(d, e)) {
                    char sub[24];
                    snprintf(sub, sizeof sub, "/%u", i);
                    if (qj_type_of(d, e) != QJ_STRING || qj_at(d, e)->len == 0)
                        return perr(c, f, e, sub, "expected a non-empty string", NULL);
                }
            } else {
                return perr(c, f, n, NULL, "expected a string or an array of strings", NULL);
            }
            p->stop = v;
            break;
        case F_TC:
            if (t == QJ_STRING && qj_str_eq(d, n, "auto")) p->tool_choice = QP_TC_AUTO;
            else if (t == QJ_STRING && qj_str_eq(d, n, "none")) p->tool_choice = QP_TC_NONE;
            else if (t == QJ_STRING && qj_str_eq(d, n, "required")) p->tool_choice = QP_TC_REQUIRED;
            else if (t == QJ_OBJECT) {
                uint32_t tn = qj_get(d, n, "tool");
                if (qj_at(d, n)->n != 1 || tn == QJ_NONE)
                    return perr(c, f, n, NULL, "expected {\"tool\": NAME} (one field)", NULL);
                if (qj_type_of(d, tn) != QJ_STRING || qj_at(d, tn)->len == 0)
                    return perr(c, f, tn, "/tool", "expected a tool name (non-empty string)", NULL);
                p->tool_choice = QP_TC_TOOL;
                p->tool_name = qval_of(d, tn);
            } else {
                return perr(c, f, n, NULL, "expected \"auto\", \"none\", \"required\" or {\"tool\": NAME}", NULL);
            }
            break;
        case F_PAR:
            if (t != QJ_TRUE && t != QJ_FALSE) return perr(c, f, n, NULL, "expected a boolean", NULL);
            p->parallel_tool_calls = t == QJ_TRUE;
            break;
        case F_STREAM:
            if (t != QJ_TRUE && t != QJ_FALSE) return perr(c, f, n, NULL, "expected a boolean", NULL);
            p->stream = t == QJ_TRUE;
            break;
        case F_USER:
            if (t != QJ_STRING || qj_at(d, n)->len == 0) return perr(c, f, n, NULL, "expected a non-empty string", NULL);
            p->user = v;
            break;
        case F_RF: {
            uint32_t ty = n;
            if (t == QJ_OBJECT) {
                static const char *const names[] = {"type", "name", "schema", "strict"};
                uint32_t vals[4];
                bool dup = false;
                uint32_t bad = qj_match_fields(d, n, names, 4, vals, &dup);
                if (bad != QJ_NONE) {
                    char key[48];
                    size_t kl = qj_at(d, bad)->len < sizeof key - 1 ? qj_at(d, bad)->len : sizeof key - 1;
                    memcpy(key, qj_at(d, bad)->p, kl);
                    key[kl] = '\0';
                    char msg[128];
                    snprintf(msg, sizeof msg, dup ? "field \"%s\" given twice" : "unknown field \"%s\" (expected type, name, schema, strict)", key);
                    return perr(c, f, bad, NULL, msg, NULL);
                }
                ty = vals[0];
                if (ty == QJ_NONE) return perr(c, f, n, NULL, "missing \"type\" (text, json or jsonSchema)", NULL);
                if (qj_type_of(d, ty) == QJ_STRING && qj_str_eq(d, ty, "jsonSchema")) {
                    if (vals[1] == QJ_NONE || qj_type_of(d, vals[1]) != QJ_STRING || qj_at(d, vals[1])->len == 0)
                        return perr(c, f, vals[1] == QJ_NONE ? n : vals[1], vals[1] == QJ_NONE ? NULL : "/name",
                                    "a jsonSchema format needs a \"name\" (non-empty string)", NULL);
                    const qj_node *nm = qj_at(d, vals[1]);
                    for (uint32_t i = 0; i < nm->len; i++) {
                        char ch = nm->p[i];
                        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                                  ch == '_' || ch == '-';
                        if (!ok || nm->len > 64)
                            return perr(c, f, vals[1], "/name", "a format name is 1 to 64 of a-z A-Z 0-9 _ -", NULL);
                    }
                    if (vals[2] == QJ_NONE || qj_type_of(d, vals[2]) != QJ_OBJECT)
                        return perr(c, f, vals[2] == QJ_NONE ? n : vals[2], vals[2] == QJ_NONE ? NULL : "/schema",
                                    "a jsonSchema format needs a \"schema\" (a JSON Schema object)", NULL);
                    if (vals[3] != QJ_NONE && qj_type_of(d, vals[3]) != QJ_TRUE && qj_type_of(d, vals[3]) != QJ_FALSE)
                        return perr(c, f, vals[3], "/strict", "expected a boolean", NULL);
                    p->format = QP_RF_SCHEMA;
                    p->format_name = qval_of(d, vals[1]);
                    p->format_schema = qval_of(d, vals[2]);
                    p->format_strict = vals[3] == QJ_NONE ? -1 : qj_type_of(d, vals[3]) == QJ_TRUE;
                    break;
                }
                if (vals[1] != QJ_NONE || vals[2] != QJ_NONE || vals[3] != QJ_NONE)
                    return perr(c, f, n, NULL, "name, schema and strict belong to a jsonSchema format", NULL);
            }
            if (qj_type_of(d, ty) == QJ_STRING && qj_str_eq(d, ty, "text")) p->format = QP_RF_TEXT;
            else if (qj_type_of(d, ty) == QJ_STRING && qj_str_eq(d, ty, "json")) p->format = QP_RF_JSON;
            else
                return perr(c, f, ty, ty == n ? NULL : "/type",
                            "expected \"text\", \"json\" or {\"type\": \"jsonSchema\", \"name\", \"schema\"}", NULL);
            break;
        }
        case F_REASON: {
            if (t != QJ_OBJECT || qj_at(d, n)->n != 1)
                return perr(c, f, n, NULL, "expected {\"effort\": LEVEL} or {\"budgetTokens\": N}", NULL);
            uint32_t ef = qj_get(d, n, "effort"), bt = qj_get(d, n, "budgetTokens");
            if (ef != QJ_NONE) {
                bool ok = false;
                for (size_t i = 0; i < Q_COUNTOF(k_efforts) && !ok; i++)
                    ok = qj_type_of(d, ef) == QJ_STRING && qj_str_eq(d, ef, k_efforts[i]);
                if (!ok)
                    return perr(c, f, ef, "/effort", "expected none, minimal, low, medium, high or xhigh", NULL);
                p->effort = qval_of(d, ef);
            } else if (bt != QJ_NONE) {
                if (!is_int(d, bt, &iv) || iv < 1)
                    return perr(c, f, bt, "/budgetTokens", "expected an integer >= 1", NULL);
                p->budget_tokens = qval_of(d, bt);
            } else {
                return perr(c, f, n, NULL, "expected {\"effort\": LEVEL} or {\"budgetTokens\": N}", NULL);
            }
            break;
        }
        case F_PO: {
            if (t != QJ_OBJECT) return perr(c, f, n, NULL, "expected an object {\"<provider>\": {...}}", NULL);
            uint32_t k = n + 1;
            for (uint32_t m = 0; m < qj_at(d, n)->n; m++, k = qj_next(d, k + 1)) {
                if (qj_type_of(d, k + 1) != QJ_OBJECT) {
                    char sub[80];
                    sub[0] = '\0';
                    q_ptr_push_key(sub, sizeof sub, qj_at(d, k)->p, qj_at(d, k)->len);
                    return perr(c, f, k + 1, sub, "expected an object of request fields", NULL);
                }
            }
            if (qj_find_dup_key(d, n) != QJ_NONE)
                return perr(c, f, n, NULL, "a provider is named twice", NULL);
            p->provider_options = v;
            break;
        }
        default: break;
        }
    }
    return QUIRE_OK;
}

quire_status qp_parse(qparams *p, const char *body, size_t body_len, const char *base, size_t base_len,
                      const char *over, size_t over_len, const quire_allocator *a, quire_error *err) {
    memset(p, 0, sizeof *p);
    p->parallel_tool_calls = p->stream = p->format_strict = -1;
    pctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.err = err;
    for (uint32_t f = 0; f < F_N; f++) c.node[f] = QJ_NONE;
    const char *srcs[3] = {body, base, over};
    size_t lens[3] = {body_len, base_len, over_len};
    for (uint32_t s = 0; s < 3; s++) {
        if (!srcs[s]) continue;
        uint32_t di = p->ndocs;
        c.src[di] = srcs[s];
        c.len[di] = lens[s];
        quire_status st = qj_parse(&p->docs[di], srcs[s], lens[s], NULL, a, err);
        if (st) { qp_free(p); return st; }
        p->ndocs++;
        const qj_doc *d = &p->docs[di];
        if (qj_type_of(d, 0) != QJ_OBJECT) {
            st = q_err_at(err, QUIRE_E_SCHEMA, 0, "", "expected an object of request parameters, got %s",
                          qj_type_name(qj_type_of(d, 0)));
            if (err) q_err_locate(err, srcs[s], lens[s]);
            qp_free(p);
            return st;
        }
        uint32_t vals[F_N];
        bool dup = false;
        uint32_t bad = qj_match_fields(d, 0, k_names, F_N, vals, &dup);
        if (bad != QJ_NONE) {
            char key[64];
            size_t kl = qj_at(d, bad)->len < sizeof key - 1 ? qj_at(d, bad)->len : sizeof key - 1;
            memcpy(key, qj_at(d, bad)->p, kl);
            key[kl] = '\0';
            char ptr[80] = "";
            q_ptr_push_key(ptr, sizeof ptr, key, kl);
            st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(d, bad), ptr,
                          dup ? "parameter \"%s\" is given twice"
                              : "unknown parameter \"%s\" (expected maxTokens, temperature, topP, topK, stop, seed, "
                                "toolChoice, parallelToolCalls, responseFormat, reasoning, stream, user, "
                                "providerOptions)",
                          key);
            if (err) q_err_locate(err, srcs[s], lens[s]);
            qp_free(p);
            return st;
        }
        for (uint32_t f = 0; f < F_N; f++)
            if (vals[f] != QJ_NONE) { c.node[f] = vals[f]; c.which[f] = di; }
    }
    quire_status st = interpret(&c);
    if (st) qp_free(p);
    return st;
}

void qp_free(qparams *p) {
    for (uint32_t i = 0; i < p->ndocs; i++) qj_doc_free(&p->docs[i]);
    p->ndocs = 0;
}

QUIRE_API quire_status quire_params_check(const char *json, size_t len, quire_error *err) {
    qparams p;
    quire_status st = qp_parse(&p, NULL, 0, json ? json : "", json ? len : 0, NULL, 0, q_alloc_default(), err);
    if (!st) qp_free(&p);
    return st;
}
