/* Wire segmentation shared by the encoders: the transcript's messages cut into
 * the dialect's wire messages (runs of one wire role). */
#ifndef QUIRE_RENDER_WIRE_H
#define QUIRE_RENDER_WIRE_H

#include "render/render.h"

typedef enum qwrole { QW_USER, QW_ASSISTANT, QW_SYSTEM, QW_TOOL } qwrole;

typedef struct qr_run {
    qwrole role;
    uint32_t i, j;       /* transcript messages [i, j) */
} qr_run;

/* Segmentation rules (per dialect, from the encoder):
 *   merge_user: user, tool and folded system messages share one wire user message
 *               (Anthropic, Bedrock); otherwise tool messages are their own runs
 *               (QW_TOOL, one per transcript message) and users are merged only
 *               when merge_same is set;
 *   mid_system: transcript system/developer messages may be wire system messages
 *               (row developer != none); placement per mid_rule. */
typedef struct qr_seg_opts {
    bool merge_user;      /* tool results join the user run */
    bool merge_same;      /* consecutive same-role runs are merged */
    bool mid_system;      /* system/developer messages become QW_SYSTEM runs */
    bool anthropic_rule;  /* a QW_SYSTEM run only after a user run and before an assistant run or the end */
} qr_seg_opts;

/* Cuts the transcript into runs (allocated in c->scratch). */
qr_run *qr_segment(qr_ctx *c, const qr_seg_opts *o, uint32_t *nruns);
/* The same when runs [0, k0) are known (the memo's reused prefix, memo.h):
 * only runs 0 and k0 - 1 (first, lastr) are filled among them, and the
 * messages after lastr->j are cut. */
qr_run *qr_segment_after(qr_ctx *c, const qr_seg_opts *o, uint32_t k0, const qr_run *first, const qr_run *lastr,
                         uint32_t *nruns);

/* True when transcript message k renders as a wrapped user text (a system or
 * developer message the row cannot carry). */
static inline bool qr_is_instruction(const qmsg *m) { return m->role == QR_SYSTEM || m->role == QR_DEVELOPER; }

/* Wraps an instruction message's text like a reminder (<system-reminder>). */
qstr qr_wrap_instruction(qr_ctx *c, const qblock *b);

/* The system prompt as an array of {"type": part_type, "text"} parts, each
 * with its "prompt_cache_breakpoint" where cache planning put one, then the
 * system-slot reminders (OpenAI Chat: "text", Responses: "input_text"). */
void qr_write_system_parts(qr_ctx *c, const char *part_type);

/* "tools": [{"type":"function","function":{name, description?, parameters}}]
 * (OpenAI Chat, Mistral, Ollama); nothing when the transcript has no tools. */
void qr_write_function_tools(qr_ctx *c);

#endif
