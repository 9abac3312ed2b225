/* The capability table and its lookup (DESIGN 5.1). See docs/providers.md. */
#include "providers/caps.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const k_dialects[QD_COUNT_] = {
    "anthropic_messages", "openai_chat", "openai_responses", "gemini", "bedrock_converse", "mistral", "ollama",
};
const char *qdialect_name(qdialect d) { return (unsigned)d < QD_COUNT_ ? k_dialects[d] : "?"; }
int qdialect_parse(const char *name, size_t n) {
    for (int i = 0; i < QD_COUNT_; i++)
        if (strlen(k_dialects[i]) == n && memcmp(k_dialects[i], name, n) == 0) return i;
    return -1;
}

static const char *const k_sys[] = {"native", "first_user_message"};
static const char *const k_dev[] = {"developer_role", "system_role", "none"};
static const char *const k_tail[] = {"last_user_message", "separate_user_message", "last_tool_message"};
static const char *const k_cache[] = {"block_markers", "cache_points", "breakpoints", "automatic", "none"};
static const char *const k_ids[] = {"any", "alnum9"};

/* Row shorthands. */
#define ANTHROPIC(glob, dev, note)                                                                              \
    {"anthropic", glob, QD_ANTHROPIC_MESSAGES, QSYS_NATIVE, "system", dev, QTAIL_LAST_USER, QCACHE_BLOCK_MARKERS, \
     4, QCAPS_TTL_5M | QCAPS_TTL_1H, true, true, true, true, true, 4096, NULL, note, QIDS_ANY}
#define OPENAI(prov, d, glob, sys, srole, dev, cache, tri, param, note)                                     \
    {prov, glob, d, sys, srole, dev, QTAIL_SEPARATE_USER, cache, 0, 0, true, tri, true, true, false, 0, param, \
     note, QIDS_ANY}

#define OPENAI_BP(prov, d, glob, param)                                                                        \
    {prov, glob, d, QSYS_NATIVE, "developer", QDEV_DEVELOPER_ROLE, QTAIL_SEPARATE_USER, QCACHE_BREAKPOINTS, 3, 0,  \
     true, d == QD_OPENAI_RESPONSES, true, true, false, 0, param,                                                  \
     "gpt-5.6 and later: explicit prompt_cache_breakpoint (3 besides the implicit one)", QIDS_ANY}

static const qcaps k_rows[] = {
    /* Anthropic Messages. Mid-conversation system messages (beta
     * mid-conversation-system-2026-04-07) carry developer instructions on the
     * models that have them; the others get a user_block. */
    ANTHROPIC("claude-opus-4-8*", QDEV_SYSTEM_ROLE, "mid-conversation system messages"),
    ANTHROPIC("claude-sonnet-5-5*", QDEV_SYSTEM_ROLE, "mid-conversation system messages"),
    ANTHROPIC("claude-opus-5-5*", QDEV_SYSTEM_ROLE, "mid-conversation system messages"),
    ANTHROPIC("claude-fable-5-1*", QDEV_SYSTEM_ROLE, "mid-conversation system messages"),
    ANTHROPIC("claude-fable-5-2*", QDEV_SYSTEM_ROLE, "mid-conversation system messages"),
    ANTHROPIC("*", QDEV_NONE, "Claude: no system role inside messages"),

    /* OpenAI Chat Completions. */
    OPENAI("openai", QD_OPENAI_CHAT, "o1-mini*", QSYS_FIRST_USER, "user", QDEV_NONE, QCACHE_AUTOMATIC, false,
           "max_completion_tokens", "legacy o1: neither system nor developer messages"),
    OPENAI("openai", QD_OPENAI_CHAT, "o1-preview*", QSYS_FIRST_USER, "user", QDEV_NONE, QCACHE_AUTOMATIC, false,
           "max_completion_tokens", "legacy o1: neither system nor developer messages"),
    OPENAI("openai", QD_OPENAI_CHAT, "o[0-9]*", QSYS_NATIVE, "developer", QDEV_DEVELOPER_ROLE, QCACHE_AUTOMATIC,
           false, "max_completion_tokens", "reasoning models: developer role"),
    OPENAI_BP("openai", QD_OPENAI_CHAT, "gpt-5.[6-9]*", "max_completion_tokens"),
    OPENAI_BP("openai", QD_OPENAI_CHAT, "gpt-[6-9]*", "max_completion_tokens"),
    OPENAI("openai", QD_OPENAI_CHAT, "gpt-5*", QSYS_NATIVE, "developer", QDEV_DEVELOPER_ROLE, QCACHE_AUTOMATIC,
           false, "max_completion_tokens", "reasoning models: developer role"),
    OPENAI("openai", QD_OPENAI_CHAT, "*", QSYS_NATIVE, "system", QDEV_SYSTEM_ROLE, QCACHE_AUTOMATIC, false,
           "max_completion_tokens", "gpt-4o, gpt-4.1 and others: mid-conversation system messages"),

    /* OpenAI Responses. */
    OPENAI("openai_responses", QD_OPENAI_RESPONSES, "o1-mini*", QSYS_FIRST_USER, "user", QDEV_NONE,
           QCACHE_AUTOMATIC, true, "max_output_tokens", "legacy o1: neither system nor developer messages"),
    OPENAI("openai_responses", QD_OPENAI_RESPONSES, "o1-preview*", QSYS_FIRST_USER, "user", QDEV_NONE,
           QCACHE_AUTOMATIC, true, "max_output_tokens", "legacy o1: neither system nor developer messages"),
    OPENAI("openai_responses", QD_OPENAI_RESPONSES, "o[0-9]*", QSYS_NATIVE, "developer", QDEV_DEVELOPER_ROLE,
           QCACHE_AUTOMATIC, true, "max_output_tokens", "reasoning models: developer role"),
    OPENAI_BP("openai_responses", QD_OPENAI_RESPONSES, "gpt-5.[6-9]*", "max_output_tokens"),
    OPENAI_BP("openai_responses", QD_OPENAI_RESPONSES, "gpt-[6-9]*", "max_output_tokens"),
    OPENAI("openai_responses", QD_OPENAI_RESPONSES, "gpt-5*", QSYS_NATIVE, "developer", QDEV_DEVELOPER_ROLE,
           QCACHE_AUTOMATIC, true, "max_output_tokens", "reasoning models: developer role"),
    OPENAI("openai_responses", QD_OPENAI_RESPONSES, "*", QSYS_NATIVE, "system", QDEV_SYSTEM_ROLE,
           QCACHE_AUTOMATIC, true, "max_output_tokens", "system-role models: mid-conversation system messages"),

    /* Gemini generateContent (Gemini and Gemma). */
    {"gemini", "gemma-*", QD_GEMINI, QSYS_FIRST_USER, "user", QDEV_NONE, QTAIL_SEPARATE_USER, QCACHE_AUTOMATIC, 0, 0, true, false,
     false, false, false, 0, NULL, "Gemma: no system instruction", QIDS_ANY},
    {"gemini", "gemini-[3-9]*", QD_GEMINI, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_SEPARATE_USER, QCACHE_AUTOMATIC, 0,
     0, true, true, true, true, true, 0, NULL, "Gemini 3 and later: images in function responses", QIDS_ANY},
    {"gemini", "*", QD_GEMINI, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_SEPARATE_USER, QCACHE_AUTOMATIC, 0, 0, true,
     false, true, true, true, 0, NULL, "Gemini: implicit prefix caching", QIDS_ANY},

    /* Bedrock Converse. */
    {"bedrock", "*anthropic.claude*", QD_BEDROCK_CONVERSE, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_USER,
     QCACHE_CACHE_POINTS, 4, QCAPS_TTL_5M, true, true, true, false, true, 0, NULL, "Claude on Bedrock: cachePoint blocks", QIDS_ANY},
    {"bedrock", "*amazon.nova*", QD_BEDROCK_CONVERSE, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_USER,
     QCACHE_CACHE_POINTS, 4, QCAPS_TTL_5M, true, true, true, false, false, 0, NULL, "Nova: cachePoint blocks", QIDS_ANY},
    {"bedrock", "*mistral.*", QD_BEDROCK_CONVERSE, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_USER, QCACHE_NONE, 0, 0,
     true, false, true, false, false, 0, NULL, "Mistral on Converse: tool call ids of 9 letters and digits", QIDS_ALNUM9},
    {"bedrock", "*", QD_BEDROCK_CONVERSE, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_USER, QCACHE_NONE, 0, 0, true,
     false, true, false, false, 0, NULL, "other Converse models: no prompt caching", QIDS_ANY},

    /* Mistral: no user message right after a tool message. */
    {"mistral", "*", QD_MISTRAL, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_TOOL, QCACHE_NONE, 0, 0, false, false,
     true, true, true, 0, "max_tokens", "no user message right after a tool message; tool call ids of 9 letters and digits",
     QIDS_ALNUM9},

    /* Ollama /api/chat. */
    {"ollama", "*gemma*", QD_OLLAMA, QSYS_FIRST_USER, "user", QDEV_NONE, QTAIL_SEPARATE_USER, QCACHE_AUTOMATIC, 0, 0,
     false, false, false, false, true, 0, NULL, "Gemma templates: no system message", QIDS_ANY},
    {"ollama", "*mistral*", QD_OLLAMA, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_TOOL, QCACHE_AUTOMATIC, 0, 0,
     false, false, false, false, true, 0, NULL, "strict template: no user message right after a tool message", QIDS_ANY},
    {"ollama", "*", QD_OLLAMA, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_SEPARATE_USER, QCACHE_AUTOMATIC, 0, 0, false,
     false, false, false, true, 0, NULL, "KV-cache prefix reuse", QIDS_ANY},

    /* DeepSeek (OpenAI-compatible chat). */
    OPENAI("deepseek", QD_OPENAI_CHAT, "*", QSYS_NATIVE, "system", QDEV_NONE, QCACHE_AUTOMATIC, false, "max_tokens",
           "automatic context caching on disk"),

    /* Generic OpenAI-compatible servers (vLLM, llama.cpp server, gateways). */
    {"openai_compatible", "*gemma*", QD_OPENAI_CHAT, QSYS_FIRST_USER, "user", QDEV_NONE, QTAIL_SEPARATE_USER,
     QCACHE_AUTOMATIC, 0, 0, true, false, false, false, false, 0, "max_tokens", "Gemma templates: no system message", QIDS_ANY},
    {"openai_compatible", "*mistral*", QD_OPENAI_CHAT, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_TOOL,
     QCACHE_AUTOMATIC, 0, 0, true, false, false, false, false, 0, "max_tokens",
     "strict template: no user message right after a tool message; tool call ids of 9 letters and digits", QIDS_ALNUM9},
    {"openai_compatible", "*mixtral*", QD_OPENAI_CHAT, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_LAST_TOOL,
     QCACHE_AUTOMATIC, 0, 0, true, false, false, false, false, 0, "max_tokens",
     "strict template: no user message right after a tool message; tool call ids of 9 letters and digits", QIDS_ALNUM9},
    {"openai_compatible", "*", QD_OPENAI_CHAT, QSYS_NATIVE, "system", QDEV_NONE, QTAIL_SEPARATE_USER,
     QCACHE_AUTOMATIC, 0, 0, true, false, false, true, false, 0, "max_tokens",
     "generic OpenAI-compatible server (vLLM, llama.cpp: automatic prefix caching)", QIDS_ANY},
};

const qcaps *qcaps_builtin(uint32_t *n) {
    *n = (uint32_t)Q_COUNTOF(k_rows);
    return k_rows;
}

static const struct { const char *provider, *model; } k_defaults[] = {
    {"anthropic", "claude-sonnet-4-5"},
    {"openai", "gpt-4o"},
    {"openai_responses", "gpt-5"},
    {"gemini", "gemini-2.5-flash"},
    {"bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
    {"mistral", "mistral-large-latest"},
    {"ollama", "llama3.2"},
    {"deepseek", "deepseek-chat"},
};

const char *qcaps_default_model(const char *provider) {
    for (size_t i = 0; i < Q_COUNTOF(k_defaults); i++)
        if (strcmp(k_defaults[i].provider, provider) == 0) return k_defaults[i].model;
    return NULL;
}

/* ---- glob: '*' any run, '?' one byte, '[a-z0-9]' a class ('[!...]' negated) ---- */
static bool class_match(const char **pp, char c) {
    const char *p = *pp + 1;
    bool neg = false, hit = false;
    if (*p == '!') { neg = true; p++; }
    const char *start = p;
    while (*p && (*p != ']' || p == start)) {
        char lo = *p, hi = lo;
        if (p[1] == '-' && p[2] && p[2] != ']') { hi = p[2]; p += 2; }
        if (c >= lo && c <= hi) hit = true;
        p++;
    }
    if (*p != ']') return false; /* malformed: no match */
    *pp = p + 1;
    return hit != neg;
}

bool qcaps_glob(const char *pat, const char *s) {
    const char *star_p = NULL, *star_s = NULL;
    while (*s) {
        if (*pat == '*') { star_p = ++pat; star_s = s; continue; }
        if (*pat == '[') {
            const char *q = pat;
            if (class_match(&q, *s)) { pat = q; s++; continue; }
        } else if (*pat && (*pat == '?' || *pat == *s)) { pat++; s++; continue; }
        if (!star_p) return false;
        pat = star_p;
        s = ++star_s;
    }
    while (*pat == '*') pat++;
    return *pat == '\0';
}

static int builtin_match(const char *provider, const char *model) {
    for (size_t i = 0; i < Q_COUNTOF(k_rows); i++)
        if (strcmp(k_rows[i].provider, provider) == 0 && qcaps_glob(k_rows[i].model, model)) return (int)i;
    return -1;
}

bool qcaps_known_provider(const quire_caps *ov, const char *provider) {
    for (size_t i = 0; i < Q_COUNTOF(k_rows); i++)
        if (strcmp(k_rows[i].provider, provider) == 0) return true;
    for (uint32_t i = 0; ov && i < ov->nrows; i++)
        if (strcmp(ov->rows[i].provider, provider) == 0) return true;
    return false;
}

/* ---- override fields ---- */
enum {
    CF_PROVIDER, CF_MODEL, CF_DIALECT, CF_SYSTEM, CF_SYSTEM_ROLE, CF_DEVELOPER, CF_TAIL, CF_CACHE, CF_CACHE_LIMIT,
    CF_CACHE_TTLS, CF_XML, CF_TRI, CF_DOCS, CF_URLS, CF_THINKING, CF_MAXTOK, CF_MAXPARAM, CF_NOTE, CF_IDS, CF_COUNT
};
static const char *const k_fields[CF_COUNT] = {
    "provider", "model", "dialect", "system", "systemRole", "developer", "tailBlock", "cache", "cacheLimit",
    "cacheTtls", "xmlWrappers", "toolResultImages", "documents", "imageUrls", "thinking", "defaultMaxTokens",
    "maxTokensParam", "note", "toolCallIds",
};

static void patch(qcaps *dst, const qcaps *src, uint64_t set) {
#define P(f, field) if (set & (1ull << (f))) dst->field = src->field
    P(CF_DIALECT, dialect); P(CF_SYSTEM, system); P(CF_SYSTEM_ROLE, system_role); P(CF_DEVELOPER, developer);
    P(CF_TAIL, tail); P(CF_CACHE, cache); P(CF_CACHE_LIMIT, cache_limit); P(CF_CACHE_TTLS, cache_ttls);
    P(CF_XML, xml); P(CF_TRI, tool_result_images); P(CF_DOCS, documents); P(CF_URLS, image_urls);
    P(CF_THINKING, thinking); P(CF_MAXTOK, default_max_tokens); P(CF_MAXPARAM, max_tokens_param); P(CF_NOTE, note);
    P(CF_IDS, tool_ids);
#undef P
}

/* What a dialect can carry at all: an override row asking for more is
 * narrowed to the nearest form the dialect has (shown by `quire caps`). */
static void clamp_to_dialect(qcaps *c) {
    switch (c->dialect) {
    case QD_ANTHROPIC_MESSAGES: case QD_BEDROCK_CONVERSE:
        c->tail = QTAIL_LAST_USER; /* strict alternation: the block joins the last user message */
        if (c->dialect == QD_BEDROCK_CONVERSE) c->developer = QDEV_NONE;
        else if (c->developer == QDEV_DEVELOPER_ROLE) c->developer = QDEV_SYSTEM_ROLE;
        if (c->cache != QCACHE_NONE)
            c->cache = c->dialect == QD_ANTHROPIC_MESSAGES ? QCACHE_BLOCK_MARKERS : QCACHE_CACHE_POINTS;
        if (!c->cache_limit && c->cache != QCACHE_NONE) c->cache_limit = 4;
        break;
    case QD_OPENAI_CHAT: case QD_OPENAI_RESPONSES:
        if (c->tail == QTAIL_LAST_USER) c->tail = QTAIL_SEPARATE_USER;
        if (c->dialect == QD_OPENAI_RESPONSES && c->tail == QTAIL_LAST_TOOL) c->tail = QTAIL_SEPARATE_USER;
        if (c->cache == QCACHE_BLOCK_MARKERS || c->cache == QCACHE_CACHE_POINTS) c->cache = QCACHE_BREAKPOINTS;
        if (c->cache == QCACHE_BREAKPOINTS && !c->cache_limit) c->cache_limit = 3;
        break;
    case QD_GEMINI:
        c->developer = QDEV_NONE;
        c->tail = QTAIL_SEPARATE_USER; /* never inside a functionResponse */
        if (c->cache != QCACHE_NONE) c->cache = QCACHE_AUTOMATIC;
        break;
    case QD_MISTRAL: case QD_OLLAMA:
        if (c->tail == QTAIL_LAST_USER) c->tail = QTAIL_SEPARATE_USER;
        if (c->developer == QDEV_DEVELOPER_ROLE) c->developer = QDEV_SYSTEM_ROLE;
        if (c->cache != QCACHE_NONE) c->cache = c->dialect == QD_OLLAMA ? QCACHE_AUTOMATIC : QCACHE_NONE;
        break;
    case QD_COUNT_:
        break;
    }
    if (c->cache != QCACHE_BLOCK_MARKERS && c->cache != QCACHE_CACHE_POINTS && c->cache != QCACHE_BREAKPOINTS) {
        c->cache_limit = 0;
        c->cache_ttls = 0;
    }
}

bool qcaps_resolve(const quire_caps *ov, const char *provider, const char *model, qcaps *out, int *builtin_index,
                   int *ov_index) {
    int bi = builtin_match(provider, model);
    int oi = -1;
    for (uint32_t i = 0; ov && i < ov->nrows; i++)
        if (strcmp(ov->rows[i].provider, provider) == 0 && qcaps_glob(ov->rows[i].model, model)) { oi = (int)i; break; }
    if (builtin_index) *builtin_index = bi;
    if (ov_index) *ov_index = oi;
    if (oi >= 0) {
        const qcaps *o = &ov->rows[oi];
        uint64_t set = ov->set[oi];
        if (bi >= 0) {
            *out = k_rows[bi];
            patch(out, o, set);
        } else {
            *out = *o; /* a full row (dialect was required at parse time) */
        }
        out->provider = o->provider;
        out->model = o->model;
        clamp_to_dialect(out);
        return true;
    }
    if (bi < 0) return false;
    *out = k_rows[bi];
    return true;
}

void qcaps_write(qw *w, const qcaps *c) {
    qw_obj_begin(w);
    qw_key(w, "provider"); qw_strz(w, c->provider);
    qw_key(w, "model"); qw_strz(w, c->model);
    qw_key(w, "dialect"); qw_strz(w, qdialect_name(c->dialect));
    qw_key(w, "system"); qw_strz(w, k_sys[c->system]);
    qw_key(w, "systemRole"); qw_strz(w, c->system_role ? c->system_role : "system");
    qw_key(w, "developer"); qw_strz(w, k_dev[c->developer]);
    qw_key(w, "tailBlock"); qw_strz(w, k_tail[c->tail]);
    qw_key(w, "cache"); qw_strz(w, k_cache[c->cache]);
    qw_key(w, "cacheLimit"); qw_int(w, c->cache_limit);
    qw_key(w, "cacheTtls");
    qw_arr_begin(w);
    if (c->cache_ttls & QCAPS_TTL_1H) qw_strz(w, "1h");
    if (c->cache_ttls & QCAPS_TTL_5M) qw_strz(w, "5m");
    qw_arr_end(w);
    qw_key(w, "xmlWrappers"); qw_bool(w, c->xml);
    qw_key(w, "toolResultImages"); qw_bool(w, c->tool_result_images);
    qw_key(w, "documents"); qw_bool(w, c->documents);
    qw_key(w, "imageUrls"); qw_bool(w, c->image_urls);
    qw_key(w, "thinking"); qw_bool(w, c->thinking);
    qw_key(w, "defaultMaxTokens"); qw_int(w, c->default_max_tokens);
    qw_key(w, "maxTokensParam");
    if (c->max_tokens_param) qw_strz(w, c->max_tokens_param); else qw_null(w);
    qw_key(w, "note"); qw_strz(w, c->note ? c->note : "");
    /* written only where it is not the default, so the other rows' dumps stay as they were */
    if (c->tool_ids != QIDS_ANY) { qw_key(w, "toolCallIds"); qw_strz(w, k_ids[c->tool_ids]); }
    qw_obj_end(w);
}

/* ---- override file parsing ---- */
static int enum_index(const qj_doc *d, uint32_t v, const char *const *names, size_t n) {
    if (qj_type_of(d, v) != QJ_STRING) return -1;
    for (size_t i = 0; i < n; i++)
        if (qj_str_eq(d, v, names[i])) return (int)i;
    return -1;
}

static quire_status Q_PRINTF(5, 6) ferr(quire_error *err, const qj_doc *d, uint32_t node, const char *ptr,
                                       const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    q_err_at(err, QUIRE_E_SCHEMA, qj_offset(d, node), ptr, "%s", msg);
    q_err_locate(err, d->src, d->len);
    return QUIRE_E_SCHEMA;
}

static quire_status parse_row(quire_caps *cs, const qj_doc *d, uint32_t obj, uint32_t ri, qcaps *r, uint64_t *set,
                              quire_error *err) {
    char ptr[96];
    snprintf(ptr, sizeof ptr, "/rows/%u", ri);
    if (qj_type_of(d, obj) != QJ_OBJECT)
        return ferr(err, d, obj, ptr, "expected object (a capability row), got %s",
                    qj_type_name(qj_type_of(d, obj)));
    /* fields a new provider's row leaves out: the most conservative forms */
    memset(r, 0, sizeof *r);
    r->system = QSYS_NATIVE;
    r->system_role = "system";
    r->developer = QDEV_NONE;
    r->tail = QTAIL_SEPARATE_USER;
    r->cache = QCACHE_NONE;
    r->xml = true;
    *set = 0;
    uint32_t n = qj_at(d, obj)->n, k = obj + 1;
    for (uint32_t m = 0; m < n; m++, k = qj_next(d, k + 1)) {
        uint32_t v = k + 1;
        int f = -1;
        for (int i = 0; i < CF_COUNT; i++)
            if (qj_str_eq(d, k, k_fields[i])) { f = i; break; }
        char fp[160];
        size_t klen = 0;
        char *kname = qj_str_decode(d, k, &cs->ar, &klen);
        if (!kname) return q_oom(err);
        snprintf(fp, sizeof fp, "%s", ptr);
        q_ptr_push_key(fp, sizeof fp, kname, klen);
        if (f < 0) return ferr(err, d, k, fp, "unknown field \"%s\" in capability row", kname);
        if (*set & (1ull << f)) return ferr(err, d, k, fp, "duplicate field \"%s\"", kname);
        *set |= 1ull << f;
        qj_type t = qj_type_of(d, v);
        int e;
        switch (f) {
        case CF_PROVIDER: case CF_MODEL: case CF_SYSTEM_ROLE: case CF_MAXPARAM: case CF_NOTE: {
            if (f == CF_MAXPARAM && t == QJ_NULL) { r->max_tokens_param = NULL; break; }
            if (t != QJ_STRING) return ferr(err, d, v, fp, "expected string, got %s", qj_type_name(t));
            char *s = qj_str_decode(d, v, &cs->ar, NULL);
            if (!s) return q_oom(err);
            if (!*s && f != CF_NOTE) return ferr(err, d, v, fp, "expected a non-empty string");
            if (f == CF_PROVIDER) r->provider = s;
            else if (f == CF_MODEL) r->model = s;
            else if (f == CF_SYSTEM_ROLE) r->system_role = s;
            else if (f == CF_MAXPARAM) r->max_tokens_param = s;
            else r->note = s;
            break;
        }
        case CF_DIALECT:
            e = t == QJ_STRING ? qdialect_parse(qj_at(d, v)->p, qj_at(d, v)->len) : -1;
            if (e < 0) return ferr(err, d, v, fp, "expected one of anthropic_messages, openai_chat, openai_responses, gemini, bedrock_converse, mistral, ollama");
            r->dialect = (qdialect)e;
            break;
        case CF_SYSTEM:
            if ((e = enum_index(d, v, k_sys, Q_COUNTOF(k_sys))) < 0)
                return ferr(err, d, v, fp, "expected \"native\" or \"first_user_message\"");
            r->system = (qsys_carry)e;
            break;
        case CF_DEVELOPER:
            if ((e = enum_index(d, v, k_dev, Q_COUNTOF(k_dev))) < 0)
                return ferr(err, d, v, fp, "expected \"developer_role\", \"system_role\" or \"none\"");
            r->developer = (qdev_carry)e;
            break;
        case CF_TAIL:
            if ((e = enum_index(d, v, k_tail, Q_COUNTOF(k_tail))) < 0)
                return ferr(err, d, v, fp, "expected \"last_user_message\", \"separate_user_message\" or \"last_tool_message\"");
            r->tail = (qtail)e;
            break;
        case CF_CACHE:
            if ((e = enum_index(d, v, k_cache, Q_COUNTOF(k_cache))) < 0)
                return ferr(err, d, v, fp, "expected \"block_markers\", \"cache_points\", \"breakpoints\", \"automatic\" or \"none\"");
            r->cache = (qcache)e;
            break;
        case CF_IDS:
            if ((e = enum_index(d, v, k_ids, Q_COUNTOF(k_ids))) < 0) return ferr(err, d, v, fp, "expected \"any\" or \"alnum9\"");
            r->tool_ids = (qtool_ids)e;
            break;
        case CF_CACHE_LIMIT: case CF_MAXTOK: {
            int64_t x;
            if (t != QJ_NUMBER || !qj_int64(d, v, &x) || x < 0 || x > 1000000000)
                return ferr(err, d, v, fp, "expected a whole number >= 0");
            if (f == CF_CACHE_LIMIT) r->cache_limit = (uint32_t)x; else r->default_max_tokens = (uint32_t)x;
            break;
        }
        case CF_CACHE_TTLS: {
            if (t != QJ_ARRAY) return ferr(err, d, v, fp, "expected array of \"5m\" | \"1h\", got %s", qj_type_name(t));
            r->cache_ttls = 0;
            uint32_t x = v + 1;
            for (uint32_t i = 0; i < qj_at(d, v)->n; i++, x = qj_next(d, x)) {
                if (qj_type_of(d, x) == QJ_STRING && qj_str_eq(d, x, "5m")) r->cache_ttls |= QCAPS_TTL_5M;
                else if (qj_type_of(d, x) == QJ_STRING && qj_str_eq(d, x, "1h")) r->cache_ttls |= QCAPS_TTL_1H;
                else return ferr(err, d, x, fp, "expected \"5m\" or \"1h\"");
            }
            break;
        }
        case CF_XML: case CF_TRI: case CF_DOCS: case CF_URLS: case CF_THINKING: {
            if (t != QJ_TRUE && t != QJ_FALSE) return ferr(err, d, v, fp, "expected boolean, got %s", qj_type_name(t));
            bool b = t == QJ_TRUE;
            if (f == CF_XML) r->xml = b;
            else if (f == CF_TRI) r->tool_result_images = b;
            else if (f == CF_DOCS) r->documents = b;
            else if (f == CF_URLS) r->image_urls = b;
            else r->thinking = b;
            break;
        }
        default:
            break;
        }
    }
    if (!(*set & (1ull << CF_PROVIDER))) return ferr(err, d, obj, ptr, "missing required field \"provider\" in capability row");
    if (!(*set & (1ull << CF_MODEL))) return ferr(err, d, obj, ptr, "missing required field \"model\" in capability row");
    if (!(*set & (1ull << CF_DIALECT))) {
        /* a patch: some built-in row of this provider must exist */
        bool known = false;
        for (size_t i = 0; i < Q_COUNTOF(k_rows); i++)
            if (strcmp(k_rows[i].provider, r->provider) == 0) known = true;
        if (!known)
            return ferr(err, d, obj, ptr, "row for unknown provider \"%s\" needs a \"dialect\"", r->provider);
    }
    if (!r->system_role) r->system_role = "system";
    return QUIRE_OK;
}

void quire_caps_free(quire_caps *c) {
    if (!c) return;
    const quire_allocator *a = c->a;
    qarena_free(&c->ar);
    q_free(a, c, sizeof *c);
}

quire_status quire_caps_parse(const char *json, size_t len, const quire_options *opts, quire_caps **out,
                              quire_error *err) {
    *out = NULL;
    const quire_allocator *a = q_alloc_of(opts);
    quire_caps *cs = q_malloc(a, sizeof *cs);
    if (!cs) return q_oom(err);
    memset(cs, 0, sizeof *cs);
    cs->a = a;
    qarena_init(&cs->ar, a);
    qj_doc d;
    quire_limits lim = q_limits(opts);
    if ((uint64_t)len > lim.max_input_bytes) {
        quire_caps_free(cs);
        return q_err_at(err, QUIRE_E_LIMIT, 0, "", "input of %zu bytes exceeds the limit of %llu bytes", len,
                        (unsigned long long)lim.max_input_bytes);
    }
    qj_opts jo = {lim.max_depth, lim.max_string_bytes};
    quire_status st = qj_parse(&d, json, len, &jo, a, err);
    if (st) { quire_caps_free(cs); return st; }
    uint32_t rows = 0;
    if (qj_type_of(&d, 0) == QJ_ARRAY) rows = 0;
    else if (qj_type_of(&d, 0) == QJ_OBJECT) {
        uint32_t k = 1;
        for (uint32_t m = 0; m < qj_at(&d, 0)->n; m++, k = qj_next(&d, k + 1)) {
            if (!qj_str_eq(&d, k, "rows")) {
                st = ferr(err, &d, k, "", "unknown field in capability file (expected \"rows\")");
                break;
            }
            rows = k + 1;
        }
        if (!st && !rows) st = ferr(err, &d, 0, "", "missing required field \"rows\" in capability file");
        if (!st && qj_type_of(&d, rows) != QJ_ARRAY)
            st = ferr(err, &d, rows, "/rows", "expected array of capability rows, got %s",
                      qj_type_name(qj_type_of(&d, rows)));
    } else {
        st = ferr(err, &d, 0, "", "expected object {\"rows\": [...]} or array of rows, got %s",
                  qj_type_name(qj_type_of(&d, 0)));
    }
    if (!st) {
        uint32_t n = qj_at(&d, rows)->n;
        cs->rows = qarena_calloc(&cs->ar, n ? n : 1, sizeof(qcaps));
        cs->set = qarena_calloc(&cs->ar, n ? n : 1, sizeof(uint64_t));
        if (!cs->rows || !cs->set) st = q_oom(err);
        uint32_t e = rows + 1;
        for (uint32_t i = 0; !st && i < n; i++, e = qj_next(&d, e)) {
            st = parse_row(cs, &d, e, i, &cs->rows[i], &cs->set[i], err);
            if (!st && rows == 0 && err) { /* top-level array: pointers are /i */ }
        }
        cs->nrows = n;
    }
    qj_doc_free(&d);
    if (st) { quire_caps_free(cs); return st; }
    *out = cs;
    return QUIRE_OK;
}

static quire_status take(qbuf *b, quire_bytes *out, quire_error *err) {
    if (b->oom || !qbuf_take(b, out)) { qbuf_free(b); return q_oom(err); }
    return QUIRE_OK;
}

quire_status qcaps_target(const quire_caps *ov, const char *provider, const char *model, const char **model_out,
                          qcaps *out, int *builtin_index, int *ov_index, quire_error *err) {
    if (!provider || !*provider) return q_err(err, QUIRE_E_INVALID, "no provider given");
    if (!qcaps_known_provider(ov, provider))
        return q_err(err, QUIRE_E_INVALID,
                     "unknown provider \"%s\" (expected anthropic, openai, openai_responses, gemini, bedrock, "
                     "mistral, ollama, deepseek or openai_compatible)", provider);
    if (!model || !*model) model = qcaps_default_model(provider);
    if (!model) return q_err(err, QUIRE_E_INVALID, "provider \"%s\" has no default model; give one", provider);
    if (!qcaps_resolve(ov, provider, model, out, builtin_index, ov_index))
        return q_err(err, QUIRE_E_INVALID, "no capability row matches provider \"%s\" model \"%s\"", provider, model);
    *model_out = model;
    return QUIRE_OK;
}

quire_status quire_caps_resolve(const quire_caps *ov, const char *provider, const char *model, int pretty,
                                quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    qcaps c;
    int bi, oi;
    quire_status st = qcaps_target(ov, provider, model, &model, &c, &bi, &oi, err);
    if (st) return st;
    qbuf b;
    qbuf_init(&b, ov ? ov->a : q_alloc_default());
    qw w;
    qw_init(&w, &b, pretty != 0);
    qw_obj_begin(&w);
    qw_key(&w, "provider"); qw_strz(&w, provider);
    qw_key(&w, "model"); qw_strz(&w, model);
    qw_key(&w, "matched");
    qw_obj_begin(&w);
    qw_key(&w, "builtin"); if (bi >= 0) qw_int(&w, bi); else qw_null(&w);
    qw_key(&w, "override"); if (oi >= 0) qw_int(&w, oi); else qw_null(&w);
    qw_obj_end(&w);
    qw_key(&w, "row");
    qcaps_write(&w, &c);
    qw_obj_end(&w);
    qw_dispose(&w);
    return take(&b, out, err);
}

quire_status quire_caps_list(const quire_caps *ov, int pretty, quire_bytes *out, quire_error *err) {
    memset(out, 0, sizeof *out);
    qbuf b;
    qbuf_init(&b, ov ? ov->a : q_alloc_default());
    qw w;
    qw_init(&w, &b, pretty != 0);
    qw_obj_begin(&w);
    qw_key(&w, "overrides");
    qw_arr_begin(&w);
    for (uint32_t i = 0; ov && i < ov->nrows; i++) {
        /* only the given fields of an override row */
        const qcaps *r = &ov->rows[i];
        qcaps full;
        int bi = builtin_match(r->provider, r->model);
        full = bi >= 0 ? k_rows[bi] : *r;
        patch(&full, r, ov->set[i]);
        full.provider = r->provider;
        full.model = r->model;
        clamp_to_dialect(&full);
        qcaps_write(&w, &full);
    }
    qw_arr_end(&w);
    qw_key(&w, "rows");
    qw_arr_begin(&w);
    for (size_t i = 0; i < Q_COUNTOF(k_rows); i++) qcaps_write(&w, &k_rows[i]);
    qw_arr_end(&w);
    qw_key(&w, "defaultModels");
    qw_obj_begin(&w);
    for (size_t i = 0; i < Q_COUNTOF(k_defaults); i++) { qw_key(&w, k_defaults[i].provider); qw_strz(&w, k_defaults[i].model); }
    qw_obj_end(&w);
    qw_obj_end(&w);
    qw_dispose(&w);
    return take(&b, out, err);
}

/* ---- tool names (docs/providers.md, "Provider rules") ---- */
static bool name_char(char ch, bool dot_colon) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
           (dot_colon && (ch == '.' || ch == ':'));
}

qname_rule qcaps_name_rule(qdialect d) {
    switch (d) {
    case QD_ANTHROPIC_MESSAGES: return (qname_rule){128, false, false, true, false};
    case QD_OPENAI_CHAT: case QD_OPENAI_RESPONSES: case QD_MISTRAL: case QD_BEDROCK_CONVERSE:
        return (qname_rule){64, false, false, true, false};
    case QD_GEMINI: return (qname_rule){64, true, true, true, false};
    case QD_OLLAMA: case QD_COUNT_: break;
    }
    return (qname_rule){0, false, false, false, false};
}

uint32_t qcaps_max_tools(const char *provider) {
    if (!provider) return 0;
    return strcmp(provider, "openai") == 0 || strcmp(provider, "deepseek") == 0 ? 128 : 0;
}

qname_rule qcaps_id_rule(qdialect d) {
    switch (d) {
    case QD_ANTHROPIC_MESSAGES: return (qname_rule){(size_t)1 << 30, false, false, true, false};
    case QD_BEDROCK_CONVERSE: return (qname_rule){64, false, false, true, false};
    case QD_OPENAI_CHAT: return (qname_rule){40, false, false, true, true};
    /* Responses: call_id of 1 to 64 characters (FunctionCallOutputItemParam) */
    case QD_OPENAI_RESPONSES: return (qname_rule){64, false, false, true, true};
    case QD_GEMINI: case QD_MISTRAL: case QD_OLLAMA: case QD_COUNT_: break;
    }
    return (qname_rule){0, false, false, false, false};
}

const char *qcaps_name_rule_text(qname_rule r) {
    if (!r.any) return "any";
    if (r.anychar) return r.max == 40 ? "at most 40 characters" : r.max == 64 ? "1 to 64 characters" : "a limited length";
    if (r.max > QCAPS_NAME_MAX) return "[a-zA-Z0-9_-]+";
    if (r.dot_colon) return "[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}";
    return r.max == 128 ? "[a-zA-Z0-9_-]{1,128}" : "[a-zA-Z0-9_-]{1,64}";
}

bool qcaps_name_ok(qname_rule r, const char *s, size_t n) {
    if (!r.any) return true;
    if (n < 1 || n > r.max) return false;
    if (r.anychar) return true;
    if (r.first_letter && !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return false;
    for (size_t i = 0; i < n; i++)
        if (!name_char(s[i], r.dot_colon)) return false;
    return true;
}

size_t qcaps_map_name(qname_rule r, const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    size_t k = 0, keep = (r.max < QCAPS_NAME_MAX ? r.max : QCAPS_NAME_MAX) - 9; /* room for "_" and 8 hex digits */
    if (r.first_letter && !(n && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')))
        out[k++] = '_';
    for (size_t i = 0; i < n && k < keep; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch & 0xC0) == 0x80) continue; /* one '_' per code point */
        out[k++] = name_char((char)ch, r.dot_colon) ? (char)ch : '_';
    }
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 16777619u; }
    k += (size_t)snprintf(out + k, QCAPS_NAME_MAX + 1 - k, "_%08x", h);
    return k;
}


bool qcaps_messages_citation(const qj_doc *d, uint32_t e) {
    static const char *const kinds[] = {"char_location", "page_location", "content_block_location",
                                        "web_search_result_location", "search_result_location"};
    uint32_t t = qj_type_of(d, e) == QJ_OBJECT ? qj_get(d, e, "type") : QJ_NONE;
    if (t == QJ_NONE || qj_type_of(d, t) != QJ_STRING) return false;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (qj_str_eq(d, t, kinds[k])) return true;
    return false;
}

bool qcaps_image_types_limited(const qcaps *c) {
    return c->dialect == QD_ANTHROPIC_MESSAGES || c->dialect == QD_OPENAI_RESPONSES ||
           (c->dialect == QD_OPENAI_CHAT && c->provider && strcmp(c->provider, "openai") == 0);
}

bool qcaps_takes_effort(const qcaps *c, const char *model) {
    static const char *const none[] = {"gpt-4o*", "gpt-4.1*", "gpt-4", "gpt-4-*", "gpt-3.5*", "chatgpt-4o*",
                                       "gpt-5-chat*", "o1-mini*", "o1-preview*"};
    if (!c->provider || strncmp(c->provider, "openai", 6) != 0 || strcmp(c->provider, "openai_compatible") == 0 || !model)
        return true;
    if (strncmp(model, "ft:", 3) == 0) model += 3; /* a fine-tune names its base model first */
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (qcaps_glob(none[i], model)) return false;
    return true;
}

bool qcaps_custom_tools(const qcaps *c) {
    return c->dialect == QD_OPENAI_RESPONSES || (c->dialect == QD_OPENAI_CHAT && c->provider && strcmp(c->provider, "openai") == 0);
}

bool qcaps_messages_image_type(const char *p, size_t n) {
    static const char *const types[] = {"image/jpeg", "image/png", "image/gif", "image/webp"};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strlen(types[k]) == n && memcmp(types[k], p, n) == 0) return true;
    return false;
}
