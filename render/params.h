/* Request parameters (DESIGN 13): one provider-neutral object, parsed once,
 * mapped per dialect by the encoders (render/enc_*.c), and the request
 * envelope (method, path, headers).
 *
 * The params object (camelCase):
 *   maxTokens          integer >= 1
 *   temperature        number >= 0 (the dialect's maximum is checked by its encoder)
 *   topP               number in [0, 1]
 *   topK               integer >= 1
 *   stop               string or non-empty array of non-empty strings
 *   seed               integer
 *   toolChoice         "auto" | "none" | "required" | {"tool": NAME}
 *   parallelToolCalls  bool
 *   responseFormat     "text" | "json" | {"type": "text"|"json"} |
 *                      {"type": "jsonSchema", "name", "schema": {...}, "strict"?: bool}
 *   reasoning          {"effort": "none"|"minimal"|"low"|"medium"|"high"|"xhigh"} | {"budgetTokens": int >= 1}
 *   stream             bool
 *   user               non-empty string
 *   providerOptions    {"<provider>": {...}}: the target provider's object is merged into the body
 * Values are kept as nodes of the parsed text: numbers are written byte-exact. */
#ifndef QUIRE_RENDER_PARAMS_H
#define QUIRE_RENDER_PARAMS_H

#include "core/transcript.h"

typedef enum qp_tool_choice { QP_TC_UNSET, QP_TC_AUTO, QP_TC_NONE, QP_TC_REQUIRED, QP_TC_TOOL } qp_tool_choice;
typedef enum qp_format { QP_RF_UNSET, QP_RF_TEXT, QP_RF_JSON, QP_RF_SCHEMA } qp_format;

typedef struct qparams {
    bool any;                 /* at least one parameter (or provider option) given */
    bool has_max_tokens;
    uint32_t max_tokens;
    qval temperature, top_p, top_k, seed; /* number nodes */
    qval stop;                /* a string or an array of strings */
    qp_tool_choice tool_choice;
    qval tool_name;           /* QP_TC_TOOL: the tool's name (string node) */
    int parallel_tool_calls;  /* -1 unset, 0, 1 */
    qp_format format;
    qval format_name, format_schema; /* QP_RF_SCHEMA */
    int format_strict;        /* -1 unset, 0, 1 */
    qval effort;              /* reasoning.effort (string node) */
    qval budget_tokens;       /* reasoning.budgetTokens (number node) */
    int stream;               /* -1 unset, 0, 1 */
    qval user;                /* string node */
    qval provider_options;    /* the whole providerOptions object (absent: none) */
    qj_doc docs[3];           /* the parsed params texts (from a request body, base, override) */
    uint32_t ndocs;
} qparams;

/* Parses params (members of over replace those of base, whose members replace
 * those of body); any may be NULL. Errors name the parameter with its JSON
 * Pointer (/toolChoice/tool). */
quire_status qp_parse(qparams *p, const char *body, size_t body_len, const char *base, size_t base_len,
                      const char *over, size_t over_len, const quire_allocator *a, quire_error *err);
void qp_free(qparams *p);

/* True when a JSON Pointer names a parameter of the params object (/seed,
 * /toolChoice/tool, /providerOptions/openai/store). */
bool qr_is_param_pointer(const char *ptr);

/* The number value of a number node (strtod of its text). */
double qp_number(qval v);

#endif
