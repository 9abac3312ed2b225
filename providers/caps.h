/* The capability table (DESIGN 5.1): data, not branches.
 *
 * One const table of rows keyed by (provider, model glob); the first row whose
 * provider equals and whose glob matches wins. User override rows (a JSON
 * file) are consulted first; an override row patches the built-in row that the
 * same (provider, model) resolves to, so it only names the fields it changes.
 * Everything the renderer does differently per target comes from a row: the
 * encoders switch on the wire dialect only, never on a provider name. */
#ifndef QUIRE_PROVIDERS_CAPS_H
#define QUIRE_PROVIDERS_CAPS_H

#include "core/json.h"

typedef enum qdialect {
    QD_ANTHROPIC_MESSAGES, QD_OPENAI_CHAT, QD_OPENAI_RESPONSES, QD_GEMINI, QD_BEDROCK_CONVERSE,
    QD_MISTRAL, QD_OLLAMA, QD_COUNT_
} qdialect;

/* How the system prompt is carried. */
typedef enum qsys_carry {
    QSYS_NATIVE,       /* the dialect's system field / role */
    QSYS_FIRST_USER    /* folded into the first user message (Gemma, o1-mini, o1-preview) */
} qsys_carry;

/* How a `developer` instruction (and a mid-conversation system message) is carried. */
typedef enum qdev_carry {
    QDEV_DEVELOPER_ROLE, /* an OpenAI `developer` message */
    QDEV_SYSTEM_ROLE,    /* a mid-conversation `system` message */
    QDEV_NONE            /* not expressible: becomes a user_block */
} qdev_carry;

/* Where a tail user block sits. */
typedef enum qtail {
    QTAIL_LAST_USER,     /* a text block after the tool results of the last user message */
    QTAIL_SEPARATE_USER, /* a separate user message after the tool messages */
    QTAIL_LAST_TOOL      /* inside the last tool message (no user message right after a tool message) */
} qtail;

typedef enum qcache {
    QCACHE_BLOCK_MARKERS, /* explicit per-block markers with a limit and TTLs (Anthropic cache_control) */
    QCACHE_CACHE_POINTS,  /* explicit cache point blocks (Bedrock cachePoint) */
    QCACHE_BREAKPOINTS,   /* explicit breakpoints on content parts (OpenAI prompt_cache_breakpoint, gpt-5.6+) */
    QCACHE_AUTOMATIC,     /* automatic prefix caching (OpenAI, Gemini implicit, DeepSeek, Ollama) */
    QCACHE_NONE
} qcache;

/* Tool call ids the model accepts (docs/providers.md, "Provider rules"). */
typedef enum qtool_ids {
    QIDS_ANY,    /* whatever the dialect takes (the row default) */
    QIDS_ALNUM9  /* exactly 9 characters [a-zA-Z0-9] (Mistral models): other ids are sent mapped */
} qtool_ids;

#define QCAPS_TTL_5M 0x1u
#define QCAPS_TTL_1H 0x2u

typedef struct qcaps {
    const char *provider;
    const char *model;        /* glob: '*' any run, '?' one byte */
    qdialect dialect;
    qsys_carry system;
    const char *system_role;  /* role name of the system prompt where it is a message ("system" | "developer") */
    qdev_carry developer;
    qtail tail;
    qcache cache;
    uint32_t cache_limit;     /* explicit markers per request (0 = n/a) */
    uint32_t cache_ttls;      /* QCAPS_TTL_* */
    bool xml;                 /* prefers XML wrappers (<system-reminder>) */
    bool tool_result_images;  /* images inside tool results */
    bool documents;           /* document blocks */
    bool image_urls;          /* images / documents by URL */
    bool thinking;            /* thinking blocks round-trip */
    uint32_t default_max_tokens; /* written when the dialect requires it (0 = only when given) */
    const char *max_tokens_param; /* request field for an explicit max (openai_chat family) */
    const char *note;         /* one line, shown in the dump */
    qtool_ids tool_ids;       /* what tool call ids the model accepts (QIDS_ANY: any the dialect takes) */
} qcaps;

/* A parsed override file. */
struct quire_caps {
    qarena ar;
    const quire_allocator *a;
    qcaps *rows;
    uint64_t *set;            /* per row: bit i = field i given */
    uint32_t nrows;
};

const char *qdialect_name(qdialect d);
/* -1 when unknown. */
int qdialect_parse(const char *name, size_t n);

/* Model used when none is given (NULL when the provider has no default). */
const char *qcaps_default_model(const char *provider);
/* True if the provider has at least one row (built-in or override). */
bool qcaps_known_provider(const quire_caps *ov, const char *provider);
/* Resolves (provider, model) into *out; false when no row matches. *src_index
 * receives the built-in row index; *ov_index the override row (or -1). */
bool qcaps_resolve(const quire_caps *ov, const char *provider, const char *model, qcaps *out,
                   int *builtin_index, int *ov_index);
/* The target of a call: the provider must be known, the model defaults to
 * the provider's own (*model_out), and a row must match (*out, row indices
 * as qcaps_resolve, either may be NULL). Errors are QUIRE_E_INVALID, each
 * naming what is missing. */
quire_status qcaps_target(const quire_caps *ov, const char *provider, const char *model, const char **model_out,
                          qcaps *out, int *builtin_index, int *ov_index, quire_error *err);
/* Anthropic Messages: node e of d is a citation the API takes back, an object
 * whose "type" is one of its citation kinds (docs.anthropic.com, "Citations":
 * char_location, page_location, content_block_location,
 * web_search_result_location, search_result_location). */
bool qcaps_messages_citation(const qj_doc *d, uint32_t e);
/* Anthropic Messages: a base64 image of media type p[0..n) (plain bytes) is
 * one the API takes: jpeg, png, gif or webp (docs.anthropic.com, "Vision"). */
bool qcaps_messages_image_type(const char *p, size_t n);

/* Whether the row takes base64 images of the four common types only (jpeg,
 * png, gif, webp: qcaps_messages_image_type): Anthropic ("Vision"), OpenAI's
 * Chat and Responses rows (the "Images and vision" guide: PNG, JPEG, WEBP,
 * non-animated GIF). Other rows are left to their servers. */
bool qcaps_image_types_limited(const qcaps *c);

/* Whether OpenAI takes a reasoning effort for model: not for its known
 * models without reasoning (gpt-4o, gpt-4.1, gpt-4, gpt-3.5, chatgpt-4o,
 * gpt-5-chat, o1-mini, o1-preview), which answer 400 "Unsupported parameter:
 * 'reasoning_effort' is not supported with this model"; any other model and
 * every other provider: yes (a name quire does not know is passed on). */
bool qcaps_takes_effort(const qcaps *c, const char *model);

/* Whether the row takes custom (freeform) tools: OpenAI's Responses rows and
 * OpenAI's own Chat rows. DeepSeek ("only function is supported",
 * api-docs.deepseek.com, chat completion tools[].type) and openai_compatible
 * servers (vLLM, llama.cpp, Ollama's /v1: function tools) take none. */
bool qcaps_custom_tools(const qcaps *c);

/* Glob match ('*', '?'). */
bool qcaps_glob(const char *pat, const char *s);
/* Writes a row as a JSON object. */
void qcaps_write(qw *w, const qcaps *c);

const qcaps *qcaps_builtin(uint32_t *n);

/* Tool names a dialect takes (docs/providers.md, "Provider rules"):
 * Anthropic [a-zA-Z0-9_-]{1,128}; OpenAI Chat and Responses, Mistral and
 * Converse [a-zA-Z0-9_-]{1,64}; Gemini [a-zA-Z_][a-zA-Z0-9_.:-]{0,63};
 * Ollama any. A name outside its dialect's rule is sent mapped (render/) and
 * mapped back when an answer calls it (respond/): every other character (per
 * code point) becomes '_', a leading '_' is added where the first character
 * must be a letter or '_', the result is cut to max - 9 bytes and "_" plus
 * the FNV-1a 32 of the name (8 hex digits) is appended. Plain UTF-8 bytes. */
#define QCAPS_NAME_MAX 128
typedef struct qname_rule {
    size_t max;        /* longest name */
    bool dot_colon;    /* '.' and ':' allowed too */
    bool first_letter; /* the first character is a letter or '_' */
    bool any;          /* false: every name is taken as it is */
    bool anychar;      /* only the length is limited (a mapped name is still [a-zA-Z0-9_-]) */
} qname_rule;
qname_rule qcaps_name_rule(qdialect d);
/* Tool call ids a dialect takes, mapped the same way (render/: qr_write_call_id):
 * Anthropic [a-zA-Z0-9_-]+, Converse [a-zA-Z0-9_-]{1,64}, OpenAI Chat at most
 * 40 characters; the others any. A mapped id is at most 128 bytes. */
qname_rule qcaps_id_rule(qdialect d);
/* The most tools a request of this provider carries; 0 = no limit known.
 * OpenAI and DeepSeek: 128 (docs/providers.md, "Provider rules"). */
uint32_t qcaps_max_tools(const char *provider);
const char *qcaps_name_rule_text(qname_rule r);
bool qcaps_name_ok(qname_rule r, const char *s, size_t n);
/* The mapped name into out (NUL-terminated); returns its length. */
size_t qcaps_map_name(qname_rule r, const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]);

#endif
