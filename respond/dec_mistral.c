/* Mistral chat completions: the Chat Completions shapes (dec_openai_chat.c)
 * with Mistral's finish reasons (stop, length, model_length, tool_calls,
 * error) and error bodies ({"object":"error",...} or {"detail":...}).
 * Source: docs.mistral.ai API reference, "Chat Completion". */
#include "respond/respond.h"

static const char *mi_stop(const racc *acc) {
    const char *r = acc->has_stop ? acc->stop_raw.data : NULL;
    if (r && (strcmp(r, "length") == 0 || strcmp(r, "model_length") == 0)) return "max_tokens";
    if (r && strcmp(r, "error") == 0) return "error";
    if (r && strcmp(r, "tool_calls") == 0) return "tool_use";
    return rb_has_calls(acc) ? "tool_use" : "end_turn";
}

static void mi_usage(const qj_doc *d, uint32_t u, int64_t out[RU_COUNT]) {
    out[RU_INPUT] = rj_int(d, u, "prompt_tokens");
    out[RU_OUTPUT] = rj_int(d, u, "completion_tokens");
    out[RU_CACHE_READ] = rj_int(d, u, "prompt_tokens_details.cached_tokens");
}

/* The name a tool is sent under (render/: qr_write_tool_name). */
static size_t mi_tool_name(const char *s, size_t n, char out[QCAPS_NAME_MAX + 1]) {
    return rdec_sent_name(QD_MISTRAL, s, n, out);
}

const rdec q_dec_mistral = {q_chat_json, true, q_chat_event, q_chat_end, mi_stop, mi_usage, NULL, NULL, mi_tool_name};
