/* Provider rules (docs/providers.md, "Provider rules"): for each rule, a
 * transcript and what render does with it (an error naming the block, or an
 * event and the body it writes), the validator's verdict on a body that
 * breaks the rule, and every successful render checked by quire_validate. */
#define _POSIX_C_SOURCE 200809L
#include "quire.h"
#include "unit.h"
#include "render_check.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>


/* The validator's report for a body (NULL when valid). */
static char *val(const char *body, const char *provider, const char *model) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    quire_bytes rep;
    quire_error e;
    quire_status st = quire_validate(body, strlen(body), &ro, NULL, &rep, &e);
    if (st == QUIRE_OK) return NULL;
    if (st != QUIRE_E_VALIDATE) return strdup(e.message);
    char *r = malloc(rep.len + 1);
    memcpy(r, rep.data, rep.len);
    r[rep.len] = '\0';
    quire_bytes_free(&rep);
    return r;
}
#define CHECK_VIOL(body, prov, model, sub) do { char *r_ = val(body, prov, model); CHECK_HAS(r_, sub); free(r_); } while (0)
#define CHECK_VALID(body, prov, model) do { char *r_ = val(body, prov, model); \
    CHECK_MSG(r_ == NULL, "expected valid, got %s", r_); free(r_); } while (0)

#define BEDROCK_CLAUDE "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
#define NOVA "us.amazon.nova-pro-v1:0"

/* ---- blank text ---- */
static void test_blank_text(void) {
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"\\n\\n\"},"
                    "{\"type\":\"thinking\",\"text\":\"hmm\",\"signature\":\"sig\",\"provider\":\"anthropic\"},"
                    "{\"type\":\"text\",\"text\":\"Hello.\"}]},{\"role\":\"user\",\"content\":\"more\"}]}";
    out o = rend(t, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"sessionUpdate\":\"content_dropped\",\"messageIndex\":1,\"blockIndex\":0,\"reason\":\"blank_text\"");
    CHECK_HAS(o.req, "\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\",\"signature\":\"sig\"},{\"type\":\"text\",\"text\":\"Hello.\"}]");
    out_free(&o);
    o = rend(t, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"reason\":\"blank_text\"");
    CHECK_NOT(o.req, "\\n\\n");
    out_free(&o);
    /* Chat accepts whitespace text: kept, no event */
    o = rend(t, "openai", "gpt-4o", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.ev, "blank_text");
    CHECK_HAS(o.req, "{\"type\":\"text\",\"text\":\"\\n\\n\"}");
    out_free(&o);
    /* Gemini rejects empty text (whitespace is fine), unless the part carries a signature */
    o = rend("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"\"},"
             "{\"type\":\"text\",\"text\":\" \"},{\"type\":\"thinking\",\"text\":\"\",\"signature\":\"S\",\"provider\":\"gemini\"},"
             "{\"type\":\"text\",\"text\":\"\"}]},{\"role\":\"user\",\"content\":\"more\"}]}", "gemini", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"blockIndex\":0,\"reason\":\"blank_text\"");
    CHECK_HAS(o.req, "{\"role\":\"model\",\"parts\":[{\"text\":\" \"},{\"text\":\"\",\"thoughtSignature\":\"S\"}]}");
    out_free(&o);
    CHECK_VIOL("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"\"}]}]}", "gemini", NULL,
               "/contents/0/parts/0/text: an empty text part is rejected");
    /* a user message of blank text only: nothing left, an error (lossy: dropped with an event) */
    const char *u = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"ok\"},"
                    "{\"role\":\"user\",\"content\":\" \\n\"}]}";
    o = rend(u, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_HAS(o.msg, "/messages/2/content: no block of this user message can be carried to anthropic_messages");
    out_free(&o);
    /* validator */
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\" \\n\"}]}]}",
               "anthropic", NULL, "/messages/0/content/0/text: text content blocks must contain non-whitespace text");
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"\\t\"}]}]}", "bedrock", BEDROCK_CLAUDE,
               "/messages/0/content/0/text: text blocks must contain non-whitespace text");
}

/* ---- the final assistant message ---- */
static void test_final_whitespace(void) {
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"Sure: \\n\"}]}";
    out o = rend(t, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"change\":\"trimmed_trailing_whitespace\",\"messageIndex\":1");
    CHECK_HAS(o.req, "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Sure:\",\"cache_control\"");
    out_free(&o);
    o = rend(t, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"text\":\"Sure:\"}");
    out_free(&o);
    /* not final: untouched */
    o = rend("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"Sure: \\n\"},"
             "{\"role\":\"user\",\"content\":\"go\"}]}", "anthropic", NULL, false);
    CHECK_HAS(o.req, "\"text\":\"Sure: \\n\"");
    CHECK_NOT(o.ev, "trimmed");
    out_free(&o);
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a \"}]}]}",
               "anthropic", NULL, "/messages/1/content/0/text: the final assistant content may not end with trailing whitespace");
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
               "{\"role\":\"assistant\",\"content\":\"a\\n\"}]}",
               "anthropic", NULL, "/messages/1/content: the final assistant content may not end with trailing whitespace");
    /* an escaped backslash before n is not whitespace */
    CHECK_VALID("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                "{\"role\":\"assistant\",\"content\":\"a\\\\n\"}]}", "anthropic", NULL);
}

/* ---- thinking: signatures and their provider ---- */
static void test_thinking(void) {
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"plan\",\"signature\":\"GSIG\",\"provider\":\"gemini\"},"
                    "{\"type\":\"text\",\"text\":\"Done.\"}]},{\"role\":\"user\",\"content\":\"next\"}]}";
    out o = rend(t, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"blockIndex\":0,\"reason\":\"foreign_signature\"");
    CHECK_NOT(o.req, "GSIG");
    out_free(&o);
    o = rend(t, "gemini", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"thoughtSignature\":\"GSIG\"");
    CHECK_NOT(o.ev, "foreign_signature");
    out_free(&o);
    /* unsigned thinking: Anthropic and Bedrock refuse it, it is dropped */
    const char *u = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"plan\"},{\"type\":\"text\",\"text\":\"Done.\"}]},"
                    "{\"role\":\"user\",\"content\":\"next\"}]}";
    o = rend(u, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"reason\":\"unsigned_thinking\"");
    CHECK_NOT(o.req, "\"thinking\"");
    out_free(&o);
    /* the transcript writes the provider back */
    quire_transcript *x = tr(t);
    quire_bytes b;
    quire_error e;
    CHECK_INT(quire_transcript_write(x, 0, &b, &e), QUIRE_OK);
    CHECK_HAS(b.data, "{\"type\":\"thinking\",\"text\":\"plan\",\"signature\":\"GSIG\",\"provider\":\"gemini\"}");
    quire_bytes_free(&b);
    quire_transcript_free(x);
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"x\"},{\"type\":\"text\",\"text\":\"a\"}]},"
               "{\"role\":\"user\",\"content\":\"go\"}]}", "anthropic", NULL, "/messages/1/content/0/signature: missing");
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
               "[{\"reasoningContent\":{\"reasoningText\":{\"text\":\"x\"}}},{\"text\":\"a\"}]},{\"role\":\"user\",\"content\":[{\"text\":\"go\"}]}]}",
               "bedrock", BEDROCK_CLAUDE, "/messages/1/content/0/reasoningContent/reasoningText/signature: missing");
}

/* ---- a message left with nothing the target carries ---- */
static void test_emptied_message(void) {
    /* Nova has no thinking: the assistant message holding only thinking is
     * left out and the user turns around it merge (never "content":[]) */
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"plan\",\"signature\":\"s\"}]},"
                    "{\"role\":\"user\",\"content\":\"next\"}]}";
    out o = rend(t, "bedrock", NOVA, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"change\":\"dropped_empty_message\",\"messageIndex\":1");
    CHECK_HAS(o.req, "\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"},{\"text\":\"next\"},{\"cachePoint\"");
    CHECK_NOT(o.req, "\"content\":[]");
    out_free(&o);
    o = rend(t, "openai", "gpt-4o", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "\"content\":[]");
    CHECK_NOT(o.req, "assistant");
    out_free(&o);
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":[]},"
               "{\"role\":\"user\",\"content\":[{\"text\":\"go\"}]}]}", "bedrock", NOVA, "/messages/1/content: content must be non-empty");
}

/* ---- tool inputs: objects, custom calls ---- */
static void test_tool_inputs(void) {
    const char *bad = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                      "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t1\",\"name\":\"x\",\"input\":[1,2]}]},"
                      "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"ok\"}]}]}";
    out o = rend(bad, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_HAS(o.msg, "/messages/1/content/0: a toolCall whose input is not a JSON object");
    out_free(&o);
    o = rend(bad, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    out_free(&o);
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
               "[{\"toolUse\":{\"toolUseId\":\"t\",\"name\":\"x\",\"input\":\"s\"}}]},{\"role\":\"user\",\"content\":"
               "[{\"toolResult\":{\"toolUseId\":\"t\",\"content\":[{\"text\":\"ok\"}]}}]}]}", "bedrock", BEDROCK_CLAUDE,
               "/messages/1/content/0/toolUse/input: expected object");
    /* custom calls (apply_patch): the string input byte-exact */
    const char *cu = "{\"messages\":[{\"role\":\"user\",\"content\":\"patch it\"},"
                     "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"kind\":\"custom\",\"id\":\"c1\",\"name\":\"apply_patch\","
                     "\"input\":\"*** Begin Patch\\n*** End Patch\"}]},"
                     "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":\"Done\"}]}]}";
    o = rend(cu, "openai_responses", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"custom_tool_call\",\"call_id\":\"c1\",\"name\":\"apply_patch\",\"input\":\"*** Begin Patch\\n*** End Patch\"}");
    CHECK_HAS(o.req, "{\"type\":\"custom_tool_call_output\",\"call_id\":\"c1\",\"output\":\"Done\"}");
    out_free(&o);
    o = rend(cu, "anthropic", NULL, false);
    CHECK_HAS(o.req, "\"input\":{\"input\":\"*** Begin Patch\\n*** End Patch\"}");
    out_free(&o);
    o = rend(cu, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_HAS(o.req, "\"input\":{\"input\":\"*** Begin Patch\\n*** End Patch\"}");
    out_free(&o);
    o = rend(cu, "openai", "gpt-4o", false);
    CHECK_HAS(o.req, "\"arguments\":\"{\\\"input\\\":\\\"*** Begin Patch\\\\n*** End Patch\\\"}\"");
    out_free(&o);
    o = rend(cu, "gemini", NULL, false);
    CHECK_HAS(o.req, "\"args\":{\"input\":\"*** Begin Patch\\n*** End Patch\"}");
    out_free(&o);
    /* the transcript: kind written back; a custom input must be a string */
    quire_transcript *x = tr(cu);
    quire_bytes b;
    quire_error e;
    CHECK_INT(quire_transcript_write(x, 0, &b, &e), QUIRE_OK);
    CHECK_HAS(b.data, "{\"type\":\"toolCall\",\"kind\":\"custom\",\"id\":\"c1\"");
    quire_bytes_free(&b);
    quire_transcript_free(x);
    x = NULL;
    const char *bk = "{\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"kind\":\"custom\",\"id\":\"c\",\"name\":\"n\",\"input\":{}}]}]}";
    CHECK_INT(quire_transcript_parse(bk, strlen(bk), NULL, &x, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/messages/0/content/0/input");
    CHECK_HAS(e.message, "a custom toolCall's input is a string, got object");
    const char *bf = "{\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"kind\":\"fn\",\"id\":\"c\",\"name\":\"n\",\"input\":{}}]}]}";
    CHECK_INT(quire_transcript_parse(bf, strlen(bf), NULL, &x, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/messages/0/content/0/kind");
    /* a custom tool in the list: OpenAI's rows only (DeepSeek and openai_compatible take function tools) */
    const char *ct = "{\"tools\":[{\"name\":\"apply_patch\",\"kind\":\"custom\"}],\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}";
    o = rend(ct, "openai", "gpt-5", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"custom\",\"custom\":{\"name\":\"apply_patch\"}}");
    out_free(&o);
    static const char *const fn_only[] = {"deepseek", "openai_compatible"};
    for (int i = 0; i < 2; i++) {
        o = rend(ct, fn_only[i], "some-model", false);
        CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
        CHECK_HAS(o.msg, "/tools/0: a custom (freeform) tool cannot be expressed");
        out_free(&o);
        o = rend(ct, fn_only[i], "some-model", true);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_NOT(o.req, "apply_patch");
        out_free(&o);
    }
    /* image types: OpenAI takes jpeg, png, gif and webp, as the Messages API does */
    const char *heic = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},"
                       "{\"type\":\"image\",\"mediaType\":\"image/heic\",\"data\":\"AAAA\"}]}]}";
    o = rend(heic, "openai", NULL, true);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "image/heic");
    CHECK_HAS(o.ev, "an image that is not jpeg, png, gif or webp");
    out_free(&o);
    o = rend(heic, "openai_compatible", "llava", false); /* a server of one's own decides */
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "data:image/heic;base64,AAAA");
    out_free(&o);
    CHECK_VIOL("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
               "{\"url\":\"data:image\\/heic;base64,AAAA\"}}]}]}", "openai", NULL,
               "/messages/0/content/0/image_url/url: a base64 image is image/jpeg, image/png, image/gif or image/webp");
    CHECK_VALID("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
                "{\"url\":\"data:image/png;base64,AAAA\"}}]}]}", "openai", NULL);
    CHECK_VIOL("{\"model\":\"gpt-5\",\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_image\","
               "\"image_url\":\"data:image/bmp;base64,AAAA\",\"detail\":\"auto\"}]}]}", "openai_responses", NULL,
               "/input/0/content/0/image_url: a base64 image is image/jpeg");
    CHECK_VIOL("{\"model\":\"deepseek-chat\",\"tools\":[{\"type\":\"custom\",\"custom\":{\"name\":\"p\"}}],\"messages\":"
               "[{\"role\":\"user\",\"content\":\"go\"}]}", "deepseek", NULL,
               "/tools/0/type: custom tools are not supported by this provider (function tools only)");
}

/* ---- Converse tool names ---- */
static void test_converse_names(void) {
    /* a name Converse refuses is mapped the same way in the tool list, the calls
     * of the history and toolChoice, with an event; two such names never meet */
    const char *t = "{\"tools\":[{\"name\":\"mcp.fs.read\",\"inputSchema\":{\"type\":\"object\"}},"
                    "{\"name\":\"mcp/fs/read\",\"inputSchema\":{\"type\":\"object\"}}],"
                    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t1\",\"name\":\"mcp.fs.read\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"x\"}]}]}";
    out o = rend(t, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    const char *m1 = o.req ? strstr(o.req, "\"name\":\"mcp_fs_read_") : NULL;
    CHECK(m1 != NULL);
    if (m1) {
        char name[80];
        snprintf(name, sizeof name, "%.29s", m1); /* "name":"mcp_fs_read_XXXXXXXX" */
        const char *m2 = strstr(m1 + 1, name);
        CHECK_MSG(m2 != NULL, "the call in the history uses the same mapped name: %s", o.req);
        CHECK_MSG(strstr(o.req, "\"name\":\"mcp_fs_read_") != NULL && strstr(m1 + 1, "\"name\":\"mcp_fs_read_") != NULL,
                  "%s", o.req);
    }
    CHECK_NOT(o.req, "mcp.fs.read");
    CHECK_NOT(o.req, "mcp/fs/read");
    CHECK_HAS(o.ev, "\"change\":\"tool_name_mapped\"");
    CHECK_HAS(o.ev, "tool \\\"mcp.fs.read\\\" is sent as");
    CHECK_VALID(o.req, "bedrock", BEDROCK_CLAUDE);
    out_free(&o);
    /* the two names map to different names (the hash of the original) */
    char a[65], b[65];
    out o1 = rend("{\"tools\":[{\"name\":\"mcp.fs.read\",\"inputSchema\":{\"type\":\"object\"}}],"
                  "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "bedrock", BEDROCK_CLAUDE, false);
    out o2 = rend("{\"tools\":[{\"name\":\"mcp/fs/read\",\"inputSchema\":{\"type\":\"object\"}}],"
                  "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "bedrock", BEDROCK_CLAUDE, false);
    const char *p1 = o1.req ? strstr(o1.req, "mcp_fs_read_") : NULL, *p2 = o2.req ? strstr(o2.req, "mcp_fs_read_") : NULL;
    CHECK(p1 && p2);
    if (p1 && p2) {
        snprintf(a, sizeof a, "%.20s", p1);
        snprintf(b, sizeof b, "%.20s", p2);
        CHECK_MSG(strcmp(a, b) != 0, "%s vs %s", a, b);
    }
    out_free(&o1);
    out_free(&o2);
    o = rend("{\"tools\":[{\"name\":\"mcp__fs-read\",\"inputSchema\":{\"type\":\"object\"}}],"
             "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    out_free(&o);
    CHECK_VIOL("{\"toolConfig\":{\"tools\":[{\"toolSpec\":{\"name\":\"a b\",\"inputSchema\":{\"json\":{}}}}]},"
               "\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}]}", "bedrock", BEDROCK_CLAUDE,
               "/toolConfig/tools/0/toolSpec/name: a tool name matches");
}

/* ---- Bedrock cachePoint TTL ---- */
static void test_cache_ttl(void) {
    out o = rend("{\"system\":[{\"type\":\"text\",\"text\":\"Terse.\",\"cacheControl\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"}}],"
                 "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"text\":\"Terse.\"},{\"cachePoint\":{\"type\":\"default\",\"ttl\":\"1h\"}}");
    out_free(&o);
    CHECK_VIOL("{\"system\":[{\"text\":\"x\"},{\"cachePoint\":{\"type\":\"default\",\"ttl\":\"2h\"}}],"
               "\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}]}", "bedrock", BEDROCK_CLAUDE,
               "/system/1/cachePoint/ttl: expected \"5m\" or \"1h\"");
}

/* ---- documents ---- */
static void doc(char *buf, size_t n, const char *mt, const char *data) {
    snprintf(buf, n, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"mediaType\":\"%s\","
             "\"data\":\"%s\"},{\"type\":\"text\",\"text\":\"summarise\"}]}]}", mt, data);
}
static void test_documents(void) {
    char buf[512];
    doc(buf, sizeof buf, "application/pdf", "JVBERi0x");
    out o = rend(buf, "anthropic", NULL, false);
    CHECK_HAS(o.req, "\"source\":{\"type\":\"base64\",\"media_type\":\"application/pdf\",\"data\":\"JVBERi0x\"}");
    out_free(&o);
    o = rend(buf, "openai", "gpt-4o", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"file\":{\"filename\":\"document-0-0.pdf\",\"file_data\":\"data:application/pdf;base64,JVBERi0x\"}");
    out_free(&o);
    doc(buf, sizeof buf, "text/plain", "hello");
    o = rend(buf, "anthropic", NULL, false);
    CHECK_HAS(o.req, "\"source\":{\"type\":\"text\",\"media_type\":\"text/plain\",\"data\":\"hello\"}");
    out_free(&o);
    o = rend(buf, "openai", "gpt-4o", false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_HAS(o.msg, "/messages/0/content/0: a document that is not application/pdf");
    out_free(&o);
    doc(buf, sizeof buf, "text/csv", "YSxi");
    o = rend(buf, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_HAS(o.msg, "/messages/0/content/0: a document that is neither application/pdf nor text/plain");
    out_free(&o);
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\","
               "\"source\":{\"type\":\"base64\",\"media_type\":\"text/csv\",\"data\":\"YSxi\"}}]}]}", "anthropic", NULL,
               "/messages/0/content/0/source/media_type: a base64 document source is application/pdf");
    CHECK_VIOL("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"file\",\"file\":"
               "{\"file_data\":\"data:application/pdf;base64,JVBERi0x\"}}]}]}", "openai", "gpt-4o",
               "/messages/0/content/0/file/filename: a file part with file_data needs a filename");
    CHECK_VIOL("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"file\",\"file\":"
               "{\"filename\":\"a.txt\",\"file_data\":\"data:text/plain;base64,aGk=\"}}]}]}", "openai", "gpt-4o",
               "/messages/0/content/0/file/file_data: file parts carry PDFs");
}

/* ---- Responses: call, text, call in one assistant turn ---- */
static void test_responses_order(void) {
    const char *t = "{\"tools\":[{\"name\":\"r\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"a\",\"name\":\"r\",\"input\":{}},"
                    "{\"type\":\"text\",\"text\":\"and\"},{\"type\":\"toolCall\",\"id\":\"b\",\"name\":\"r\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"a\",\"content\":\"1\"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"b\",\"content\":\"2\"}]}]}";
    out o = rend(t, "openai_responses", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"call_id\":\"a\",\"name\":\"r\",\"arguments\":\"{}\"},{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"and\"},"
                     "{\"type\":\"function_call\",\"call_id\":\"b\"");
    out_free(&o);
    /* a user message between a call and its output is still refused */
    CHECK_VIOL("{\"model\":\"gpt-5\",\"input\":[{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":\"r\",\"arguments\":\"{}\"},"
               "{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"},{\"type\":\"function_call_output\",\"call_id\":\"a\",\"output\":\"1\"}]}",
               "openai_responses", NULL, "tool call \"a\" has no result right after its turn");
}

/* ---- Mistral: the row's thinking claim is carried ---- */
static void test_mistral_thinking(void) {
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"plan\"},{\"type\":\"text\",\"text\":\"Done.\"}]},"
                    "{\"role\":\"user\",\"content\":\"next\"}]}";
    out o = rend(t, "mistral", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":\"plan\"}]},"
                     "{\"type\":\"text\",\"text\":\"Done.\"}]}");
    CHECK_NOT(o.ev, "content_dropped");
    out_free(&o);
}

/* ---- Gemini 3 and later: a signature on the current turn's calls ---- */
static void test_gemini_signature_placeholder(void) {
    const char *t = "{\"tools\":[{\"name\":\"ls\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
                    "{\"role\":\"user\",\"content\":\"old task\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c0\",\"name\":\"ls\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c0\",\"content\":\"w\"}]},"
                    "{\"role\":\"assistant\",\"content\":\"ok\"},"
                    "{\"role\":\"user\",\"content\":\"list src\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"ls\",\"input\":{\"p\":\"a\"}},"
                    "{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"ls\",\"input\":{\"p\":\"b\"}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":\"x\"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c2\",\"content\":\"y\"}]}]}";
    out o = rend(t, "gemini", "gemini-3-pro-preview", false);
    CHECK_INT(o.st, QUIRE_OK);
    /* the first call of the current turn gets the sentinel, its parallel sibling and the
     * earlier turn's call do not */
    CHECK_HAS(o.req, "{\"functionCall\":{\"id\":\"c1\",\"name\":\"ls\",\"args\":{\"p\":\"a\"}},"
                     "\"thoughtSignature\":\"skip_thought_signature_validator\"}");
    CHECK_HAS(o.req, "{\"functionCall\":{\"id\":\"c2\",\"name\":\"ls\",\"args\":{\"p\":\"b\"}}}");
    CHECK_HAS(o.req, "{\"functionCall\":{\"id\":\"c0\",\"name\":\"ls\",\"args\":{}}}");
    CHECK_HAS(o.ev, "thought_signature_placeholder");
    CHECK_VALID(o.req, "gemini", "gemini-3-pro-preview");
    /* the validator knows the rule: without it the body is rejected on Gemini 3, not on 2.5 */
    char *bad = o.req ? strdup(o.req) : NULL;
    char *at = bad ? strstr(bad, ",\"thoughtSignature\":\"skip_thought_signature_validator\"") : NULL;
    if (at) memmove(at, at + strlen(",\"thoughtSignature\":\"skip_thought_signature_validator\""),
                    strlen(at + strlen(",\"thoughtSignature\":\"skip_thought_signature_validator\"")) + 1);
    CHECK(at != NULL);
    if (bad) {
        CHECK_VIOL(bad, "gemini", "gemini-3-pro-preview", "needs a thoughtSignature");
        CHECK_VALID(bad, "gemini", "gemini-2.5-pro");
    }
    free(bad);
    out_free(&o);
    /* Gemini 2.5 takes calls without signatures: nothing added */
    o = rend(t, "gemini", "gemini-2.5-pro", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "skip_thought_signature_validator");
    CHECK_NOT(o.ev, "thought_signature_placeholder");
    out_free(&o);
    /* a recorded signature is kept, never replaced */
    const char *signed_t = "{\"tools\":[{\"name\":\"ls\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
                           "{\"role\":\"user\",\"content\":\"list\"},"
                           "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"\",\"signature\":\"SIG1\","
                           "\"provider\":\"gemini\"},{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"ls\",\"input\":{}}]},"
                           "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":\"x\"}]}]}";
    o = rend(signed_t, "gemini", "gemini-3-flash", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"thoughtSignature\":\"SIG1\"");
    CHECK_NOT(o.req, "skip_thought_signature_validator");
    out_free(&o);
}

/* ---- Anthropic mid-conversation system messages ---- */
static void test_mid_system(void) {
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"system\",\"content\":\"Be brief.\"}]}";
    out o = rend(t, "anthropic", "claude-opus-4-8", false);
    CHECK_HAS(o.req, "{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"Be brief.\"}]}");
    out_free(&o);
    o = rend(t, "anthropic", "claude-sonnet-4-5", false);
    CHECK_NOT(o.req, "\"role\":\"system\"");
    CHECK_HAS(o.req, "<system-reminder>\\nBe brief.\\n</system-reminder>");
    out_free(&o);
    /* before any user turn: wrapped even where the row allows it */
    o = rend("{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"hi\"}]}",
             "anthropic", "claude-opus-4-8", false);
    CHECK_NOT(o.req, "\"role\":\"system\"");
    out_free(&o);
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
               "{\"role\":\"system\",\"content\":\"x\"}]}", "anthropic", NULL,
               "/messages/1/role: mid-conversation system messages are not supported by this model row");
}

/* ---- compact runs render's transcript checks ---- */
static void test_compact_checks(void) {
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"zz\",\"content\":\"1\"}]}]}";
    quire_transcript *x = tr(t);
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    p.budget_tokens = 1000000;
    quire_compact_result r;
    quire_error e;
    CHECK_INT(quire_compact(x, NULL, &p, NULL, 0, NULL, &r, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/messages/1/content/0/toolCallId");
    CHECK_HAS(e.message, "toolResult \"zz\" answers no toolCall");
    quire_transcript_free(x);
    out o = rend(t, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_E_SCHEMA);
    CHECK_HAS(o.msg, "/messages/1/content/0/toolCallId: toolResult \"zz\" answers no toolCall");
    out_free(&o);
}

/* Every rule transcript for every target: what renders validates. */
static void test_cross(void) {
    static const char *const ts[] = {
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"\\n\\n\"},"
        "{\"type\":\"thinking\",\"text\":\"p\",\"signature\":\"s\",\"provider\":\"anthropic\"},{\"type\":\"text\",\"text\":\"Hi.\"}]},"
        "{\"role\":\"user\",\"content\":\"more\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"Sure: \\n\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"p\",\"signature\":\"g\",\"provider\":\"gemini\"}]},"
        "{\"role\":\"user\",\"content\":\"next\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"p\"}]},"
        "{\"role\":\"user\",\"content\":\"next\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"patch\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok \"},"
        "{\"type\":\"toolCall\",\"kind\":\"custom\",\"id\":\"c1\",\"name\":\"apply_patch\",\"input\":\"*** Begin Patch\"},"
        "{\"type\":\"text\",\"text\":\" \"},{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"r\",\"input\":{}}]},"
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":\"Done\"},"
        "{\"type\":\"toolResult\",\"toolCallId\":\"c2\",\"content\":\"1\"}]},{\"role\":\"user\",\"content\":\" \"},"
        "{\"role\":\"user\",\"content\":\"go on\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"mediaType\":\"application/pdf\",\"data\":\"JVBERi0x\"},"
        "{\"type\":\"text\",\"text\":\"sum\"}]},{\"role\":\"system\",\"content\":\"Be brief.\"}]}",
    };
    static const struct { const char *p, *m; } tg[] = {
        {"anthropic", NULL}, {"anthropic", "claude-opus-4-8"}, {"openai", "gpt-4o"}, {"openai", "gpt-5"},
        {"openai_responses", NULL}, {"gemini", NULL}, {"gemini", "gemma-3-27b-it"}, {"bedrock", BEDROCK_CLAUDE},
        {"bedrock", NOVA}, {"mistral", NULL}, {"ollama", NULL}, {"deepseek", NULL},
    };
    uint32_t ok = 0;
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        for (size_t j = 0; j < sizeof tg / sizeof tg[0]; j++) {
            out o = rend(ts[i], tg[j].p, tg[j].m, false);
            if (o.st == QUIRE_OK) ok++;
            else CHECK_MSG(o.st == QUIRE_E_UNSUPPORTED, "%s: case %zu: %s", tg[j].p, i, o.msg);
            out_free(&o);
            o = rend(ts[i], tg[j].p, tg[j].m, true); /* lossy: validated by render itself too */
            CHECK_MSG(o.st == QUIRE_OK || o.st == QUIRE_E_UNSUPPORTED, "%s lossy: case %zu: %s", tg[j].p, i, o.msg);
            out_free(&o);
        }
    CHECK_MSG(ok >= 60, "%u renders succeeded", ok);
}


static void session_matches_stateless(const char *provider, const char *model);

/* ---- blank system and tool result text (Anthropic, Bedrock) ---- */
static size_t count_of(const char *hay, const char *needle) {
    size_t n = 0, l = strlen(needle);
    for (const char *p = hay; p && (p = strstr(p, needle)); p += l) n++;
    return n;
}

/* Gemma rows (no system instruction) fold the system prompt into the first
 * user content as a text part: an empty prompt is dropped with an event, never
 * sent as an empty part (found by fuzz_differential). */
static void test_gemini_folded_empty_system(void) {
    out o = rend("{\"system\":\"\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}", "gemini", "gemma-3-27b-it", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "{\"text\":\"\"}");
    CHECK_HAS(o.req, "\"parts\":[{\"text\":\"go\"}]");
    CHECK_HAS(o.ev, "{\"sessionUpdate\":\"content_dropped\",\"systemIndex\":0,\"reason\":\"blank_text\"");
    out_free(&o);
    /* a prompt with text is folded as before */
    o = rend("{\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}", "gemini", "gemma-3-27b-it", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"parts\":[{\"text\":\"Be brief.\"},{\"text\":\"go\"}]");
    CHECK_NOT(o.ev, "blank_text");
    out_free(&o);
    /* a row with a system instruction: an empty part of it is rejected too ("required oneof
     * field 'data'"), so it is dropped with the same event, and no systemInstruction is left */
    o = rend("{\"system\":\"\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}", "gemini", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "systemInstruction");
    CHECK_HAS(o.ev, "{\"sessionUpdate\":\"content_dropped\",\"systemIndex\":0,\"reason\":\"blank_text\"");
    out_free(&o);
    /* whitespace is a part Gemini takes: kept */
    o = rend("{\"system\":\" \",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}", "gemini", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"systemInstruction\":{\"parts\":[{\"text\":\" \"}]}");
    out_free(&o);
    CHECK_VIOL("{\"systemInstruction\":{\"parts\":[{\"text\":\"\"}]},\"contents\":[{\"role\":\"user\",\"parts\":"
               "[{\"text\":\"go\"}]}]}", "gemini", NULL, "/systemInstruction/parts/0/text: an empty text part is rejected");
    CHECK_VIOL("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"\"},{\"text\":\"go\"}]}]}", "gemini",
               "gemma-3-27b-it", "an empty text part is rejected");
}

static void test_blank_system_and_results(void) {
    const char *t = "{\"system\":[{\"type\":\"text\",\"text\":\" \\n\"},{\"type\":\"text\",\"text\":\"Be brief.\"}],"
                    "\"messages\":[{\"role\":\"user\",\"content\":\"go\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"a\",\"name\":\"f\",\"input\":{}},"
                    "{\"type\":\"toolCall\",\"id\":\"b\",\"name\":\"f\",\"input\":{}},{\"type\":\"toolCall\",\"id\":\"c\",\"name\":\"f\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"a\",\"content\":\" \"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"b\",\"content\":[{\"type\":\"text\",\"text\":\"\\t\"}],\"isError\":true},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"},{\"type\":\"text\",\"text\":\"\\n\"}]}]}]}";
    out o = rend(t, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"system\":[{\"text\":\"Be brief.\"}");
    CHECK_HAS(o.ev, "{\"sessionUpdate\":\"content_dropped\",\"systemIndex\":0,\"reason\":\"blank_text\"");
    /* a string content left blank, an array left empty: the placeholder keeps the pair valid */
    CHECK_HAS(o.req, "{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"text\":\"(no output)\"}]}}");
    CHECK_HAS(o.req, "{\"toolResult\":{\"toolUseId\":\"b\",\"content\":[{\"text\":\"(no output)\"}],\"status\":\"error\"}}");
    CHECK_HAS(o.req, "{\"toolResult\":{\"toolUseId\":\"c\",\"content\":[{\"text\":\"ok\"}]}}");
    CHECK_HAS(o.ev, "\"messageIndex\":2,\"blockIndex\":0,\"partIndex\":0,\"reason\":\"blank_text\"");
    CHECK_HAS(o.ev, "\"messageIndex\":2,\"blockIndex\":2,\"partIndex\":1,\"reason\":\"blank_text\"");
    CHECK_HAS(o.ev, "\"change\":\"empty_tool_result_placeholder\",\"messageIndex\":2");
    out_free(&o);
    o = rend(t, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\"");
    /* Anthropic: a string content as given; an error result emptied: the
     * placeholder ("content cannot be empty if is_error is true") */
    CHECK_HAS(o.req, "{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"content\":\" \"}");
    CHECK_HAS(o.req, "{\"type\":\"tool_result\",\"tool_use_id\":\"b\",\"content\":\"(no output)\",\"is_error\":true}");
    CHECK_HAS(o.req, "\"tool_use_id\":\"c\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]");
    CHECK_HAS(o.ev, "\"change\":\"empty_tool_result_placeholder\",\"messageIndex\":2");
    out_free(&o);
    /* ... a result that is not an error keeps an empty content; an error
     * result given with an empty string or array gets the placeholder too */
    const char *e = "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"a\",\"name\":\"f\",\"input\":{}},"
                    "{\"type\":\"toolCall\",\"id\":\"b\",\"name\":\"f\",\"input\":{}},{\"type\":\"toolCall\",\"id\":\"c\",\"name\":\"f\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"a\",\"content\":[{\"type\":\"text\",\"text\":\" \"}]},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"b\",\"content\":\"\",\"isError\":true},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c\",\"content\":[],\"isError\":true}]}]}";
    o = rend(e, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"content\":[]}");
    CHECK_HAS(o.req, "{\"type\":\"tool_result\",\"tool_use_id\":\"b\",\"content\":\"(no output)\",\"is_error\":true}");
    CHECK_HAS(o.req, "{\"type\":\"tool_result\",\"tool_use_id\":\"c\",\"content\":\"(no output)\",\"is_error\":true");
    CHECK_INT((int)count_of(o.ev, "empty_tool_result_placeholder"), 2);
    out_free(&o);
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\",\"input\":{}}]},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"content\":[],\"is_error\":true}]}]}",
               "anthropic", NULL, "/messages/2/content/0/content: a tool_result with is_error true needs a non-empty content");
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\",\"input\":{}}]},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"is_error\":true}]}]}",
               "anthropic", NULL, "/messages/2/content/0: a tool_result with is_error true needs a non-empty content");
    /* Chat carries whitespace: untouched */
    o = rend(t, "openai", "gpt-4o", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.ev, "blank_text");
    out_free(&o);
    /* a system prompt of blank text only: no system field */
    o = rend("{\"system\":\"  \",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}", "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "\"system\"");
    out_free(&o);
    /* validator */
    CHECK_VIOL("{\"system\":[{\"text\":\" \"}],\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}]}", "bedrock",
               BEDROCK_CLAUDE, "/system/0/text: text blocks must contain non-whitespace text");
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
               "[{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}}]},{\"role\":\"user\",\"content\":"
               "[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"text\":\"\\n\"}]}}]}]}", "bedrock", BEDROCK_CLAUDE,
               "/messages/2/content/0/toolResult/content/0/text: text blocks must contain non-whitespace text");
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
               "[{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}}]},{\"role\":\"user\",\"content\":"
               "[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[],\"status\":\"error\"}}]}]}", "bedrock", BEDROCK_CLAUDE,
               "/messages/2/content/0/toolResult/content: a toolResult needs content");
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
               "[{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}}]},{\"role\":\"user\",\"content\":"
               "[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"text\":\"x\"},{\"cachePoint\":{\"type\":\"default\"}}]}}]}]}",
               "bedrock", BEDROCK_CLAUDE, "/messages/2/content/0/toolResult/content/1: a cachePoint follows the toolResult block");
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"system\":\" \",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
               "anthropic", NULL, "/system: text content blocks must contain non-whitespace text");
    CHECK_VIOL("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\",\"input\":{}}]},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"content\":[{\"type\":\"text\",\"text\":\" \"}]}]}]}",
               "anthropic", NULL, "/messages/2/content/0/content/0/text: text content blocks must contain non-whitespace text");
    CHECK_VALID("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\",\"input\":{}}]},"
                "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"a\"}]}]}", "anthropic", NULL);
    /* sessions render the same bytes (Anthropic through its incremental path) */
    session_matches_stateless("anthropic", "claude-sonnet-4-5");
    session_matches_stateless("bedrock", BEDROCK_CLAUDE);
    session_matches_stateless("bedrock", "mistral.mistral-large-2407-v1:0");
    session_matches_stateless("mistral", "mistral-large-latest");
    session_matches_stateless("openai_compatible", "mistral-small-3.1");
}

/* The session's body for each turn equals the stateless render of its
 * transcript (the incremental paths see the same rule view). */
static void session_matches_stateless(const char *provider, const char *model) {
    char cfg[400];
    snprintf(cfg, sizeof cfg, "{\"sessionId\":\"b\",\"target\":{\"provider\":\"%s\",\"model\":\"%s\"},"
             "\"system\":[{\"type\":\"text\",\"text\":\"\\n\"},{\"type\":\"text\",\"text\":\"Be brief.\"}]}", provider, model);
    const char *steps[] = {
        "{\"role\":\"user\",\"content\":\"go\"}",
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\" \"},{\"type\":\"toolCall\",\"id\":\"call-1\",\"name\":\"f\",\"input\":{}}]}",
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"call-1\",\"content\":[{\"type\":\"text\",\"text\":\"\\t\"}]}]}",
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"call-2\",\"name\":\"f\",\"input\":{}}]}",
        "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"call-2\",\"content\":\" \"}]}",
    };
    quire_session *s = NULL;
    quire_error e;
    CHECK_INT(quire_session_open(cfg, strlen(cfg), NULL, NULL, &s, &e), QUIRE_OK);
    for (size_t i = 0; s && i < sizeof steps / sizeof steps[0]; i++) {
        bool assistant = strstr(steps[i], "\"assistant\"") != NULL;
        if (assistant) CHECK_INT(quire_session_accept_message(s, steps[i], strlen(steps[i]), &e), QUIRE_OK);
        else CHECK_INT(quire_session_append(s, steps[i], strlen(steps[i]), &e), QUIRE_OK);
        if (assistant) continue;
        quire_session_turn turn;
        CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &turn, &e), QUIRE_OK);
        quire_bytes tj;
        CHECK_INT(quire_session_transcript(s, 0, &tj, &e), QUIRE_OK);
        out o = rend(tj.data, provider, model, false);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_MSG(o.req && turn.body && strcmp(o.req, turn.body) == 0, "%s step %zu: session body differs:\n%s\n%s", provider, i,
                  turn.body ? turn.body : "", o.req ? o.req : "");
        out_free(&o);
        quire_bytes_free(&tj);
    }
    quire_session_free(s);
}

/* ---- signed thinking without a recorded provider ---- */
static void test_unrecorded_signature(void) {
    /* a signed thinking text (a Claude signature's shape) and an empty signed
     * block (quire's Gemini form), neither saying who signed it */
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"plan\",\"signature\":\"CSIG\"},"
                    "{\"type\":\"thinking\",\"text\":\"\",\"signature\":\"GSIG\"},{\"type\":\"text\",\"text\":\"Done.\"}]},"
                    "{\"role\":\"user\",\"content\":\"next\"}]}";
    out o = rend(t, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"thinking\",\"thinking\":\"plan\",\"signature\":\"CSIG\"}");
    CHECK_NOT(o.req, "GSIG");
    CHECK_HAS(o.ev, "\"blockIndex\":1,\"reason\":\"foreign_signature\"");
    out_free(&o);
    o = rend(t, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"signature\":\"CSIG\"");
    CHECK_NOT(o.req, "GSIG");
    out_free(&o);
    o = rend(t, "gemini", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "CSIG");
    CHECK_HAS(o.req, "{\"text\":\"Done.\",\"thoughtSignature\":\"GSIG\"}");
    CHECK_HAS(o.ev, "\"blockIndex\":0,\"reason\":\"foreign_signature\"");
    out_free(&o);
    /* a dialect that never sends a signature is not concerned */
    o = rend(t, "mistral", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.ev, "foreign_signature");
    CHECK_NOT(o.req, "CSIG");
    out_free(&o);
}

/* ---- Mistral on Converse: tool call ids of 9 letters and digits ---- */
#define BEDROCK_MISTRAL "mistral.mistral-large-2407-v1:0"
static void test_mistral_ids(void) {
    const char *t = "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"tooluse_x-1\",\"name\":\"f\",\"input\":{}},"
                    "{\"type\":\"toolCall\",\"id\":\"abcDEF123\",\"name\":\"f\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"abcDEF123\",\"content\":\"1\"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"tooluse_x-1\",\"content\":\"2\"}]},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t3\",\"name\":\"f\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t3\",\"content\":\"3\"}]}]}";
    out o = rend(t, "bedrock", BEDROCK_MISTRAL, false);
    CHECK_INT(o.st, QUIRE_OK);
    /* a valid id is kept; another one is mapped the same way in its call and its result */
    CHECK_HAS(o.req, "{\"toolUse\":{\"toolUseId\":\"abcDEF123\"");
    CHECK_HAS(o.req, "{\"toolResult\":{\"toolUseId\":\"abcDEF123\"");
    CHECK_NOT(o.req, "tooluse_x-1");
    CHECK_NOT(o.req, "\"t3\"");
    const char *ev = strstr(o.ev ? o.ev : "", "tool call id \\\"tooluse_x-1\\\" is sent as \\\"");
    CHECK(ev != NULL);
    char mapped[10] = {0};
    if (ev) memcpy(mapped, ev + strlen("tool call id \\\"tooluse_x-1\\\" is sent as \\\""), 9);
    char want[64];
    snprintf(want, sizeof want, "{\"toolUse\":{\"toolUseId\":\"%s\"", mapped);
    CHECK_HAS(o.req, want);
    snprintf(want, sizeof want, "{\"toolResult\":{\"toolUseId\":\"%s\"", mapped);
    CHECK_HAS(o.req, want);
    CHECK_HAS(o.ev, "\"change\":\"tool_call_id_mapped\",\"detail\":\"tool call id \\\"t3\\\" is sent as");
    /* the same transcript renders the same ids (deterministic) */
    out o2 = rend(t, "bedrock", BEDROCK_MISTRAL, false);
    CHECK_STR(o2.req, o.req);
    out_free(&o2);
    /* a collision: an earlier call's valid id equal to another id's mapping keeps it, the later one moves */
    char c[900];
    snprintf(c, sizeof c, "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},"
             "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"%s\",\"name\":\"f\",\"input\":{}},"
             "{\"type\":\"toolCall\",\"id\":\"tooluse_x-1\",\"name\":\"f\",\"input\":{}}]},"
             "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"tooluse_x-1\",\"content\":\"1\"},"
             "{\"type\":\"toolResult\",\"toolCallId\":\"%s\",\"content\":\"2\"}]}]}", mapped, mapped);
    out_free(&o);
    o = rend(c, "bedrock", BEDROCK_MISTRAL, false);
    CHECK_INT(o.st, QUIRE_OK); /* rend checks the body validates (distinct ids, every call answered) */
    snprintf(want, sizeof want, "is sent as \\\"%s\\\"", mapped);
    CHECK_NOT(o.ev, want);
    CHECK_HAS(o.ev, "tool_call_id_mapped");
    out_free(&o);
    /* Claude on Bedrock keeps any id */
    o = rend(t, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"toolUseId\":\"tooluse_x-1\"");
    CHECK_NOT(o.ev, "tool_call_id_mapped");
    out_free(&o);
    /* validator: the row's id form */
    const char *bad = "{\"toolConfig\":{\"tools\":[{\"toolSpec\":{\"name\":\"f\",\"inputSchema\":{\"json\":{\"type\":\"object\"}}}}]},"
                      "\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
                      "[{\"toolUse\":{\"toolUseId\":\"call_1\",\"name\":\"f\",\"input\":{}}}]},{\"role\":\"user\",\"content\":"
                      "[{\"toolResult\":{\"toolUseId\":\"call_1\",\"content\":[{\"text\":\"x\"}]}}]}]}";
    CHECK_VIOL(bad, "bedrock", BEDROCK_MISTRAL, "/messages/1/content/0/toolUse/toolUseId: a tool call id of this model is 9 letters or digits");
    CHECK_VIOL(bad, "bedrock", BEDROCK_MISTRAL, "/messages/2/content/0/toolResult/toolUseId: a tool call id of this model");
    CHECK_VALID(bad, "bedrock", BEDROCK_CLAUDE);
    /* Mistral's own API: the same rule on the Chat-style wire */
    o = rend(t, "mistral", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"id\":\"abcDEF123\",\"type\":\"function\"");
    CHECK_HAS(o.req, "\"tool_call_id\":\"abcDEF123\"");
    CHECK_NOT(o.req, "tooluse_x-1");
    CHECK_HAS(o.ev, "tool_call_id_mapped");
    out_free(&o);
    /* a Mistral model behind an OpenAI-compatible server: its template takes the same ids */
    o = rend(t, "openai_compatible", "mistral-small-3.1", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"tool_call_id\":\"abcDEF123\"");
    CHECK_NOT(o.req, "tooluse_x-1");
    CHECK_HAS(o.ev, "tool_call_id_mapped");
    out_free(&o);
    o = rend(t, "openai_compatible", "llama-3.3-70b", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "tooluse_x-1");
    out_free(&o);
    CHECK_VIOL("{\"model\":\"mistral-large-latest\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\","
               "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
               "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"r\"}]}", "mistral", NULL,
               "/messages/1/tool_calls/0/id: a tool call id of this model is 9 letters or digits");
}

/* ---- answers that would break the conversation they join ---- */
static void test_answer_rules(void) {
    quire_response r;
    quire_error e;
    /* an answer with no content: one empty text block, which every dialect renders */
    const char *blocked = "{\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"},\"usageMetadata\":{\"promptTokenCount\":8}}";
    CHECK_INT(quire_response_decode("gemini", NULL, blocked, strlen(blocked), NULL, NULL, &r, &e), QUIRE_OK);
    CHECK_STR(r.message.data, "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"\"}]}");
    CHECK_STR(r.stop_reason, "refusal");
    quire_response_free(&r);
    const char *refusal = "{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"c\",\"content\":[],"
                          "\"stop_reason\":\"refusal\",\"usage\":{\"input_tokens\":3,\"output_tokens\":0}}";
    CHECK_INT(quire_response_decode("anthropic", NULL, refusal, strlen(refusal), NULL, NULL, &r, &e), QUIRE_OK);
    CHECK_HAS(r.message.data, "[{\"type\":\"text\",\"text\":\"\"}]");
    quire_response_free(&r);
    /* one id for two calls: refused, naming the second */
    const char *dup = "{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"c\",\"content\":["
                      "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"a\",\"input\":{}},{\"type\":\"text\",\"text\":\"x\"},"
                      "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"b\",\"input\":{}}],\"stop_reason\":\"tool_use\"}";
    CHECK_INT(quire_response_decode("anthropic", NULL, dup, strlen(dup), NULL, NULL, &r, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/content/2/id");
    CHECK_HAS(e.message, "\"t1\" twice");
    const char *dups = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":"
                       "{\"name\":\"f\",\"arguments\":\"{}\"}},{\"index\":1,\"id\":\"c\",\"function\":{\"name\":\"g\","
                       "\"arguments\":\"{}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
                       "\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    quire_stream *st = NULL;
    CHECK_INT(quire_stream_new("openai", NULL, NULL, NULL, &st, &e), QUIRE_OK);
    CHECK_INT(quire_stream_feed(st, dups, strlen(dups), NULL, &e), QUIRE_OK);
    CHECK_INT(quire_stream_finish(st, &r, NULL, &e), QUIRE_E_SCHEMA);
    quire_stream_free(st);
    /* ids made up for calls without one: the prefix, then the ordinal */
    const char *two = "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"f\","
                      "\"args\":{}}},{\"functionCall\":{\"name\":\"f\",\"args\":{\"x\":1}}}]},\"finishReason\":\"STOP\"}]}";
    CHECK_INT(quire_response_decode("gemini", NULL, two, strlen(two), NULL, NULL, &r, &e), QUIRE_OK);
    CHECK_HAS(r.message.data, "\"id\":\"call_0\"");
    CHECK_HAS(r.message.data, "\"id\":\"call_1\"");
    quire_response_free(&r);
    quire_response_options ro = QUIRE_RESPONSE_OPTIONS_INIT;
    ro.call_id_prefix = "t7-";
    CHECK_INT(quire_response_decode("gemini", NULL, two, strlen(two), &ro, NULL, &r, &e), QUIRE_OK);
    CHECK_HAS(r.message.data, "\"id\":\"t7-1\"");
    quire_response_free(&r);
    ro.call_id_prefix = "no spaces";
    CHECK_INT(quire_response_decode("gemini", NULL, two, strlen(two), &ro, NULL, &r, &e), QUIRE_E_INVALID);
    CHECK_STR(e.field, "call_id_prefix");
    /* n > 1: an assistant message holds one choice */
    const char *n2 = "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"a\"},"
                     "\"finish_reason\":\"stop\"},{\"index\":1,\"message\":{\"role\":\"assistant\",\"content\":\"b\"},"
                     "\"finish_reason\":\"stop\"}]}";
    CHECK_INT(quire_response_decode("openai", NULL, n2, strlen(n2), NULL, NULL, &r, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/choices/1");
    const char *n2s = "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"b\"}}]}\n\n";
    st = NULL;
    CHECK_INT(quire_stream_new("openai", NULL, NULL, NULL, &st, &e), QUIRE_OK);
    CHECK(quire_stream_feed(st, n2s, strlen(n2s), NULL, &e) != QUIRE_OK);
    CHECK_HAS(e.message, "n > 1");
    quire_stream_free(st);
    /* stop reasons that mean the answer broke off */
    const char *mal = "{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"text\":\"x\"}]}},"
                      "\"stopReason\":\"malformed_tool_use\"}";
    CHECK_INT(quire_response_decode("bedrock", NULL, mal, strlen(mal), NULL, NULL, &r, &e), QUIRE_OK);
    CHECK_STR(r.stop_reason, "error");
    quire_response_free(&r);
    const char *ds = "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"a\"},"
                     "\"finish_reason\":\"insufficient_system_resource\"}]}";
    CHECK_INT(quire_response_decode("deepseek", NULL, ds, strlen(ds), NULL, NULL, &r, &e), QUIRE_OK);
    CHECK_STR(r.stop_reason, "error");
    quire_response_free(&r);
    /* a stream is one input: the input limit holds for the bytes fed in all */
    quire_options lo = QUIRE_OPTIONS_INIT;
    lo.limits.max_input_bytes = 100;
    const char *big = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"0123456789012345678901234567890\"}}]}\n\n";
    st = NULL;
    CHECK_INT(quire_stream_new("openai", NULL, NULL, &lo, &st, &e), QUIRE_OK);
    CHECK_INT(quire_stream_feed(st, big, strlen(big), NULL, &e), QUIRE_OK);
    CHECK_INT(quire_stream_feed(st, big, strlen(big), NULL, &e), QUIRE_E_LIMIT);
    CHECK_HAS(e.message, "input limit of 100 bytes");
    quire_stream_free(st);
    /* a session: each turn's made-up ids are its own, so the conversation renders for any target */
    quire_session *s = NULL;
    const char *cfg = "{\"sessionId\":\"s\",\"target\":{\"provider\":\"gemini\"},\"tools\":[{\"name\":\"f\","
                      "\"inputSchema\":{\"type\":\"object\"}}]}";
    CHECK_INT(quire_session_open(cfg, strlen(cfg), NULL, NULL, &s, &e), QUIRE_OK);
    const char *u = "{\"role\":\"user\",\"content\":\"go\"}";
    CHECK_INT(quire_session_append(s, u, strlen(u), &e), QUIRE_OK);
    quire_session_turn turn;
    for (int k = 1; k <= 2; k++) {
        CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &turn, &e), QUIRE_OK);
        CHECK_INT(quire_session_accept(s, two, strlen(two), NULL, NULL, &e), QUIRE_OK);
        char res[256];
        snprintf(res, sizeof res, "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"call_%d_0\","
                 "\"content\":\"a\"},{\"type\":\"toolResult\",\"toolCallId\":\"call_%d_1\",\"content\":\"b\"}]}", k, k);
        quire_status as = quire_session_append(s, res, strlen(res), &e);
        CHECK_MSG(as == QUIRE_OK, "turn %d: %s", k, e.message);
    }
    const char *anth = "{\"provider\":\"anthropic\"}";
    quire_status rs = quire_session_render(s, anth, strlen(anth), NULL, 0, QUIRE_SESSION_CONTIGUOUS, &turn, &e);
    CHECK_MSG(rs == QUIRE_OK, "render for anthropic: %s", e.message);
    if (rs == QUIRE_OK) CHECK(strstr(turn.body, "\"id\":\"call_2_1\"") != NULL);
    /* what would make every later render fail is refused when it is given, and changes nothing */
    size_t before = quire_session_message_count(s);
    const char *empty = "{\"role\":\"user\",\"content\":[]}";
    CHECK_INT(quire_session_append(s, empty, strlen(empty), &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/content");
    CHECK_HAS(e.message, "a message needs at least one content block");
    const char *orphan = "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"tool\",\"content\":[{\"type\":"
                         "\"toolResult\",\"toolCallId\":\"gone\",\"content\":\"r\"}]}]";
    CHECK(quire_session_append(s, orphan, strlen(orphan), &e) != QUIRE_OK);
    CHECK_STR(e.pointer, "/1/content/0/toolCallId");
    CHECK_INT(quire_session_message_count(s), before);
    rs = quire_session_render(s, anth, strlen(anth), NULL, 0, 0, &turn, &e);
    CHECK_MSG(rs == QUIRE_OK, "render after refused appends: %s", e.message);
    quire_session_free(s);
}

/* The session's compaction applies a summary to exactly the span a plan named,
 * after messages were appended; a span that changed is refused; the log
 * replays to the same requests (DESIGN 6, 11). */
static void test_session_compact_span(void) {
    quire_session *s = NULL;
    quire_error e;
    const char *cfg = "{\"sessionId\":\"s\",\"target\":{\"provider\":\"anthropic\"}}";
    CHECK_INT(quire_session_open(cfg, strlen(cfg), NULL, NULL, &s, &e), QUIRE_OK);
    const char *m1 = "[{\"role\":\"user\",\"content\":\"task one\"},{\"role\":\"assistant\",\"content\":\"did a\"},"
                     "{\"role\":\"user\",\"content\":\"task two\"},{\"role\":\"assistant\",\"content\":\"did b\"},"
                     "{\"role\":\"user\",\"content\":\"task three\"}]";
    CHECK_INT(quire_session_append(s, m1, strlen(m1), &e), QUIRE_OK);
    const char *pol = "{\"keepLastTurns\":1,\"keepFirstTurns\":0}";
    quire_bytes plan = {0};
    CHECK_INT(quire_session_plan(s, pol, strlen(pol), 0, &plan, &e), QUIRE_OK);
    const char *sp = plan.data ? strstr(plan.data, "\"span\":{\"id\":\"") : NULL;
    CHECK(sp != NULL);
    char span[64] = "";
    if (sp) {
        sp += strlen("\"span\":{\"id\":\"");
        size_t n = strcspn(sp, "\"");
        if (n < sizeof span) { memcpy(span, sp, n); span[n] = '\0'; }
    }
    quire_bytes_free(&plan);
    CHECK(strncmp(span, "0-3-", 4) == 0);
    const char *m2 = "[{\"role\":\"assistant\",\"content\":\"did c\"},{\"role\":\"user\",\"content\":\"task four\"}]";
    CHECK_INT(quire_session_append(s, m2, strlen(m2), &e), QUIRE_OK);
    const char *sum = "Tasks one and two done.";
    CHECK_INT(quire_session_compact_span(s, pol, strlen(pol), sum, strlen(sum), "0-3-0000000000000000", NULL, NULL, &e),
              QUIRE_E_MISMATCH);
    CHECK_INT(quire_session_message_count(s), 7);
    CHECK_INT(quire_session_compact_span(s, pol, strlen(pol), sum, strlen(sum), span, NULL, NULL, &e), QUIRE_OK);
    quire_bytes tb = {0};
    CHECK_INT(quire_session_transcript(s, 0, &tb, &e), QUIRE_OK);
    /* messages 0..3 became the summary; "task three" and the appended two stay as they were */
    CHECK_HAS(tb.data, "Tasks one and two done.");
    CHECK_NOT(tb.data, "did a");
    CHECK_NOT(tb.data, "did b");
    CHECK_HAS(tb.data, "task three");
    CHECK_HAS(tb.data, "{\"role\":\"assistant\",\"content\":\"did c\"},{\"role\":\"user\",\"content\":\"task four\"}");
    quire_bytes_free(&tb);
    /* the log records the span and replays to the same next request */
    quire_session_turn turn;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &turn, &e), QUIRE_OK);
    char *want = turn.body ? strndup(turn.body, turn.body_len) : NULL;
    quire_bytes log = {0};
    CHECK_INT(quire_session_log(s, &log, &e), QUIRE_OK);
    CHECK_HAS(log.data, "\"span\":\"");
    quire_session *r = NULL;
    CHECK_INT(quire_session_restore(log.data, log.len, NULL, NULL, &r, &e), QUIRE_OK);
    if (r) {
        quire_session_turn t2;
        CHECK_INT(quire_session_render(r, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &t2, &e), QUIRE_OK);
        CHECK(want && t2.body && t2.body_len == strlen(want) && memcmp(t2.body, want, t2.body_len) == 0);
        quire_session_free(r);
    }
    free(want);
    quire_bytes_free(&log);
    quire_session_free(s);
}

/* ---- Converse tool names mapped back in answers ---- */
static void test_converse_names_back(void) {
    const char *resp = "{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"toolUse\":{\"toolUseId\":\"u1\","
                       "\"name\":\"files_read_v2_afe91f73\",\"input\":{\"path\":\"a\"}}},{\"toolUse\":{\"toolUseId\":\"u2\","
                       "\"name\":\"plain\",\"input\":{}}}]}},\"stopReason\":\"tool_use\",\"usage\":{\"inputTokens\":1,\"outputTokens\":2}}";
    const char *tools = "[{\"name\":\"files.read/v2\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"plain\",\"inputSchema\":{\"type\":\"object\"}}]";
    quire_response_options ro = QUIRE_RESPONSE_OPTIONS_INIT;
    quire_response r;
    quire_error e;
    /* without the tools: the name as the model wrote it */
    CHECK_INT(quire_response_decode("bedrock", NULL, resp, strlen(resp), &ro, NULL, &r, &e), QUIRE_OK);
    CHECK_HAS(r.message.data, "\"name\":\"files_read_v2_afe91f73\"");
    quire_response_free(&r);
    ro.tools = tools;
    ro.tools_len = strlen(tools);
    CHECK_INT(quire_response_decode("bedrock", NULL, resp, strlen(resp), &ro, NULL, &r, &e), QUIRE_OK);
    CHECK_HAS(r.message.data, "{\"type\":\"toolCall\",\"id\":\"u1\",\"name\":\"files.read/v2\",\"input\":{\"path\":\"a\"}}");
    CHECK_HAS(r.message.data, "\"name\":\"plain\"");
    quire_response_free(&r);
    /* a stream maps the same way */
    const char *sse = "{\"messageStart\":{\"role\":\"assistant\"}}\n"
                      "{\"contentBlockStart\":{\"contentBlockIndex\":0,\"start\":{\"toolUse\":{\"toolUseId\":\"u1\",\"name\":\"files_read_v2_afe91f73\"}}}}\n"
                      "{\"contentBlockDelta\":{\"contentBlockIndex\":0,\"delta\":{\"toolUse\":{\"input\":\"{}\"}}}}\n"
                      "{\"contentBlockStop\":{\"contentBlockIndex\":0}}\n{\"messageStop\":{\"stopReason\":\"tool_use\"}}\n";
    quire_stream *st = NULL;
    CHECK_INT(quire_stream_new("bedrock", NULL, &ro, NULL, &st, &e), QUIRE_OK);
    CHECK_INT(quire_stream_feed(st, sse, strlen(sse), NULL, &e), QUIRE_OK);
    quire_status fs = quire_stream_finish(st, &r, NULL, &e);
    CHECK_MSG(fs == QUIRE_OK, "stream: %s", e.message);
    if (fs == QUIRE_OK) { CHECK_HAS(r.message.data, "\"name\":\"files.read/v2\""); quire_response_free(&r); }
    quire_stream_free(st);
    /* Ollama sends names as they are: nothing mapped back */
    const char *ol = "{\"model\":\"llama3.1\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":"
                     "{\"name\":\"files_read_v2_afe91f73\",\"arguments\":{}}}]},\"done\":true,\"done_reason\":\"stop\"}";
    CHECK_INT(quire_response_decode("ollama", NULL, ol, strlen(ol), &ro, NULL, &r, &e), QUIRE_OK);
    CHECK_HAS(r.message.data, "\"name\":\"files_read_v2_afe91f73\"");
    quire_response_free(&r);
    /* a session: render maps the name, accept maps it back, the transcript keeps the tool's own name */
    quire_session *s = NULL;
    const char *cfg = "{\"sessionId\":\"s\",\"target\":{\"provider\":\"bedrock\",\"model\":\"" BEDROCK_CLAUDE "\"},"
                      "\"tools\":[{\"name\":\"files.read/v2\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"plain\",\"inputSchema\":{\"type\":\"object\"}}]}";
    CHECK_INT(quire_session_open(cfg, strlen(cfg), NULL, NULL, &s, &e), QUIRE_OK);
    const char *u = "{\"role\":\"user\",\"content\":\"read a\"}";
    CHECK_INT(quire_session_append(s, u, strlen(u), &e), QUIRE_OK);
    quire_session_turn turn;
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &turn, &e), QUIRE_OK);
    CHECK(turn.body && strstr(turn.body, "\"name\":\"files_read_v2_afe91f73\""));
    CHECK_INT(quire_session_accept(s, resp, strlen(resp), NULL, NULL, &e), QUIRE_OK);
    quire_bytes tb;
    CHECK_INT(quire_session_transcript(s, 0, &tb, &e), QUIRE_OK);
    CHECK_HAS(tb.data, "{\"type\":\"toolCall\",\"id\":\"u1\",\"name\":\"files.read/v2\"");
    CHECK_NOT(tb.data, "files_read_v2_afe91f73");
    quire_bytes_free(&tb);
    /* the next request sends the call mapped again, paired with its result */
    const char *res = "[{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"u1\",\"content\":\"A\"},"
                      "{\"type\":\"toolResult\",\"toolCallId\":\"u2\",\"content\":\"B\"}]}]";
    CHECK_INT(quire_session_append(s, res, strlen(res), &e), QUIRE_OK);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, QUIRE_SESSION_CONTIGUOUS, &turn, &e), QUIRE_OK);
    CHECK(turn.body && strstr(turn.body, "{\"toolUse\":{\"toolUseId\":\"u1\",\"name\":\"files_read_v2_afe91f73\""));
    quire_session_free(s);
    /* a stream decoded without the tools, then accepted into the session: mapped back there */
    s = NULL;
    CHECK_INT(quire_session_open(cfg, strlen(cfg), NULL, NULL, &s, &e), QUIRE_OK);
    CHECK_INT(quire_session_append(s, u, strlen(u), &e), QUIRE_OK);
    CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &turn, &e), QUIRE_OK);
    quire_response_options plain = QUIRE_RESPONSE_OPTIONS_INIT;
    st = NULL;
    CHECK_INT(quire_stream_new("bedrock", BEDROCK_CLAUDE, &plain, NULL, &st, &e), QUIRE_OK);
    CHECK_INT(quire_stream_feed(st, sse, strlen(sse), NULL, &e), QUIRE_OK);
    CHECK_INT(quire_stream_finish(st, &r, NULL, &e), QUIRE_OK);
    quire_stream_free(st);
    CHECK_HAS(r.message.data, "\"name\":\"files_read_v2_afe91f73\"");
    CHECK_INT(quire_session_accept_response(s, &r, &e), QUIRE_OK);
    quire_response_free(&r);
    CHECK_INT(quire_session_transcript(s, 0, &tb, &e), QUIRE_OK);
    CHECK_HAS(tb.data, "{\"type\":\"toolCall\",\"id\":\"u1\",\"name\":\"files.read/v2\"");
    quire_bytes_free(&tb);
    quire_session_free(s);
}

/* Every dialect with a name rule maps a name it would refuse the same way
 * in the tool list, the calls, the results that name their call and
 * toolChoice, reports the pair, validates, and maps an answer's call back
 * (docs/providers.md, "Provider rules"). */
static void test_tool_names_all(void) {
    static const struct { const char *prov, *model, *resp; } d[] = {
        {"anthropic", NULL, "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"u9\","
                            "\"name\":\"@\",\"input\":{}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}"},
        {"openai", "gpt-4o", "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"message\":"
                             "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"u9\",\"type\":\"function\",\"function\":"
                             "{\"name\":\"@\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":1,"
                             "\"completion_tokens\":1,\"total_tokens\":2}}"},
        {"openai_responses", "gpt-5", "{\"id\":\"r\",\"object\":\"response\",\"status\":\"completed\",\"model\":\"gpt-5\",\"output\":"
                                      "[{\"type\":\"function_call\",\"id\":\"fc\",\"call_id\":\"u9\",\"name\":\"@\",\"arguments\":\"{}\","
                                      "\"status\":\"completed\"}],\"usage\":{\"input_tokens\":1,\"output_tokens\":1,\"total_tokens\":2}}"},
        {"gemini", "gemini-2.5-pro", "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"@\","
                                     "\"args\":{}}}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,"
                                     "\"candidatesTokenCount\":1}}"},
        {"mistral", "mistral-large-latest", "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"mistral-large-latest\",\"choices\":"
                                            "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":"
                                            "\"u9aaaaaaa\",\"type\":\"function\",\"function\":{\"name\":\"@\",\"arguments\":\"{}\"}}]},"
                                            "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,"
                                            "\"total_tokens\":2}}"},
    };
    const char *t = "{\"tools\":[{\"name\":\"9 fs/read.v2\",\"inputSchema\":{\"type\":\"object\"}},"
                    "{\"name\":\"ok_name\",\"inputSchema\":{\"type\":\"object\"}}],"
                    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t1aaaaaaa\",\"name\":\"9 fs/read.v2\",\"input\":{}},"
                    "{\"type\":\"toolCall\",\"id\":\"t2aaaaaaa\",\"name\":\"gone tool\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1aaaaaaa\",\"content\":\"x\"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"t2aaaaaaa\",\"content\":\"y\"}]}]}";
    const char *params = "{\"toolChoice\":{\"tool\":\"9 fs/read.v2\"}}";
    for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
        quire_transcript *tt = tr(t);
        CHECK(tt != NULL);
        if (!tt) return;
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = d[i].prov;
        ro.model = d[i].model;
        ro.params = params;
        ro.params_len = strlen(params);
        quire_render_result res;
        quire_error e;
        quire_status st = quire_render(tt, NULL, &ro, NULL, &res, &e);
        CHECK_MSG(st == QUIRE_OK, "%s: %s %s", d[i].prov, e.pointer, e.message);
        if (st) { quire_transcript_free(tt); continue; }
        const char *body = res.request.data, *ev = res.events.data ? res.events.data : "";
        CHECK_MSG(strstr(body, "9 fs/read.v2") == NULL && strstr(body, "gone tool") == NULL, "%s: %s", d[i].prov, body);
        CHECK_MSG(strstr(body, "\"ok_name\"") != NULL, "%s: a name the dialect takes is sent as it is", d[i].prov);
        /* the mapped name, from the tool list's event */
        const char *sa = strstr(ev, "\\\"9 fs/read.v2\\\" is sent as \\\"");
        CHECK_MSG(sa != NULL, "%s: no tool_name_mapped for the tool list: %s", d[i].prov, ev);
        char mapped[140] = "";
        if (sa) {
            sa += strlen("\\\"9 fs/read.v2\\\" is sent as \\\"");
            const char *se = strstr(sa, "\\\"");
            if (se && (size_t)(se - sa) < sizeof mapped) { memcpy(mapped, sa, (size_t)(se - sa)); mapped[se - sa] = 0; }
        }
        char q[160];
        snprintf(q, sizeof q, "\"%s\"", mapped);
        /* tool list, call, toolChoice (and Gemini's functionResponse, Mistral's tool message) */
        int n = 0;
        for (const char *p = body; (p = strstr(p, q)) != NULL; p++) n++;
        CHECK_MSG(n >= 3, "%s: %s appears %d times: %s", d[i].prov, q, n, body);
        /* a call naming a tool the list does not have is reported with its message */
        CHECK_MSG(strstr(ev, "\"messageIndex\":1,\"detail\":\"tool \\\"gone tool\\\" is sent as") != NULL, "%s: %s", d[i].prov, ev);
        CHECK_MSG(strstr(ev, "\\\"9 fs/read.v2\\\" is sent as") == strstr(ev, "\\\"9 fs/read.v2\\\""), "%s", d[i].prov);
        CHECK_VALID(body, d[i].prov, d[i].model);
        /* an answer calling the mapped name gets the tool's own name back */
        char resp[1200];
        const char *at = strchr(d[i].resp, '@');
        snprintf(resp, sizeof resp, "%.*s%s%s", (int)(at - d[i].resp), d[i].resp, mapped, at + 1);
        const char *tools = "[{\"name\":\"9 fs/read.v2\",\"inputSchema\":{\"type\":\"object\"}}]";
        quire_response_options rro = QUIRE_RESPONSE_OPTIONS_INIT;
        rro.tools = tools;
        rro.tools_len = strlen(tools);
        quire_response r;
        st = quire_response_decode(d[i].prov, d[i].model, resp, strlen(resp), &rro, NULL, &r, &e);
        CHECK_MSG(st == QUIRE_OK, "%s: %s %s", d[i].prov, e.pointer, e.message);
        if (st == QUIRE_OK) {
            CHECK_MSG(strstr(r.message.data, "\"name\":\"9 fs/read.v2\"") != NULL, "%s: %s", d[i].prov, r.message.data);
            quire_response_free(&r);
        }
        quire_render_result_free(&res);
        quire_transcript_free(tt);
    }
}

/* Tool call ids from another provider (Kimi's "functions.read:0", a 53-byte
 * Responses id) are sent mapped where the dialect refuses them, the same in
 * the call and its result, with one event per call; a valid id is kept. */
static void test_call_ids(void) {
    static const struct { const char *prov, *model, *call_key, *result_key; } d[] = {
        {"anthropic", NULL, "\"id\":", "\"tool_use_id\":"},
        {"bedrock", BEDROCK_CLAUDE, "\"toolUseId\":", "\"toolUseId\":"},
        {"openai", "gpt-4o", "\"id\":", "\"tool_call_id\":"},
    };
    const char *t = "{\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],"
                    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"functions.read:0\",\"name\":\"read\",\"input\":{}},"
                    "{\"type\":\"toolCall\",\"id\":\"fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f\",\"name\":\"read\",\"input\":{}},"
                    "{\"type\":\"toolCall\",\"id\":\"toolu_01ABC\",\"name\":\"read\",\"input\":{}}]},"
                    "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"functions.read:0\",\"content\":\"a\"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f\",\"content\":\"b\"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"toolu_01ABC\",\"content\":\"c\"}]}]}";
    for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
        out o = rend(t, d[i].prov, d[i].model, false);
        CHECK_MSG(o.st == QUIRE_OK, "%s: %s", d[i].prov, o.msg);
        if (o.st) { out_free(&o); continue; }
        CHECK_VALID(o.req, d[i].prov, d[i].model);
        CHECK_MSG(strstr(o.req, "toolu_01ABC\"") != NULL, "%s: a valid id is kept: %s", d[i].prov, o.req);
        bool colon = strcmp(d[i].prov, "openai") != 0; /* OpenAI limits the length only */
        CHECK_MSG((strstr(o.req, "functions.read:0") == NULL) == colon, "%s: %s", d[i].prov, o.req);
        /* 53 bytes: over OpenAI's 40, within Converse's 64 */
        CHECK_MSG((strstr(o.req, "fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f") == NULL) == !colon, "%s: %s",
                  d[i].prov, o.req);
        /* every mapped id of a call is the id of its result */
        for (const char *ev = o.ev; ev && (ev = strstr(ev, "is sent as \\\"")) != NULL; ev++) {
            const char *a = ev + strlen("is sent as \\\"");
            const char *e = strstr(a, "\\\"");
            if (!e) break;
            char want[160];
            snprintf(want, sizeof want, "%s\"%.*s\"", d[i].result_key, (int)(e - a), a);
            CHECK_MSG(strstr(o.req, want) != NULL, "%s: result with %s: %s", d[i].prov, want, o.req);
            snprintf(want, sizeof want, "%s\"%.*s\"", d[i].call_key, (int)(e - a), a);
            CHECK_MSG(strstr(o.req, want) != NULL, "%s: call with %s", d[i].prov, want);
        }
        int n = 0;
        for (const char *ev = o.ev; ev && (ev = strstr(ev, "tool_call_id_mapped")) != NULL; ev++) n++;
        CHECK_MSG(n == 1, "%s: %d events (one mapped call): %s", d[i].prov, n, o.ev);
        out_free(&o);
    }
}

/* A tool list that names one tool twice (also through an escape) is an
 * error naming the second, for every provider; a provider tool beside a
 * function is not compared. */
static void test_tool_names_unique(void) {
    const char *provs[][2] = {{"anthropic", NULL}, {"openai", "gpt-4o"}, {"gemini", "gemini-2.5-pro"}, {"bedrock", BEDROCK_CLAUDE}};
    const char *dup = "{\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"write\",\"inputSchema\":"
                      "{\"type\":\"object\"}},{\"name\":\"r\\u0065ad\",\"inputSchema\":{\"type\":\"object\"}}],"
                      "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    for (size_t i = 0; i < sizeof provs / sizeof *provs; i++) {
        out o = rend(dup, provs[i][0], provs[i][1], false);
        CHECK_INT(o.st, QUIRE_E_SCHEMA);
        CHECK_STR(o.err.pointer, "/tools/2/name");
        CHECK_HAS(o.err.message, "tool name \"read\" is used twice (/tools/0 has it)");
        out_free(&o);
    }
    out o = rend("{\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"Read\",\"inputSchema\":"
                 "{\"type\":\"object\"}}],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK); /* names are case-sensitive */
    out_free(&o);
}

/* OpenAI and DeepSeek take at most 128 tools: 129 is an error naming the
 * 129th; 128 renders; other providers take more. */
static void test_tool_count(void) {
    for (int n = 128; n <= 129; n++) {
        size_t cap = 64 + (size_t)n * 64;
        char *t = malloc(cap);
        size_t k = (size_t)snprintf(t, cap, "{\"tools\":[");
        for (int i = 0; i < n; i++)
            k += (size_t)snprintf(t + k, cap - k, "%s{\"name\":\"t%d\",\"inputSchema\":{\"type\":\"object\"}}", i ? "," : "", i);
        snprintf(t + k, cap - k, "],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        const char *provs[][2] = {{"openai", "gpt-4o"}, {"deepseek", NULL}, {"anthropic", NULL}};
        for (size_t i = 0; i < sizeof provs / sizeof *provs; i++) {
            out o = rend(t, provs[i][0], provs[i][1], false);
            bool limited = strcmp(provs[i][0], "anthropic") != 0 && n > 128;
            CHECK_MSG(o.st == (limited ? QUIRE_E_UNSUPPORTED : QUIRE_OK), "%s with %d tools: %s", provs[i][0], n, o.msg);
            if (limited) {
                CHECK_STR(o.err.pointer, "/tools/128");
                CHECK_HAS(o.err.message, "takes at most 128 tools in a request; this one would send 129");
            }
            out_free(&o);
        }
        free(t);
    }
}

/* ---- Claude's thinking placement, and Converse's toolConfig (docs/providers.md, "Thinking") ---- */
static void test_thinking_placement(void) {
    static const char *const provs[2][2] = {{"anthropic", NULL}, {"bedrock", BEDROCK_CLAUDE}};
    /* thinking after a text block: dropped with an event */
    const char *late = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":["
                       "{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"thinking\",\"text\":\"t\",\"signature\":\"S1\"},"
                       "{\"type\":\"text\",\"text\":\"b\"}]},{\"role\":\"user\",\"content\":\"go\"}]}";
    /* interleaved thinking that starts the message is kept */
    const char *inter = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":["
                        "{\"type\":\"thinking\",\"text\":\"t\",\"signature\":\"S1\"},{\"type\":\"text\",\"text\":\"a\"},"
                        "{\"type\":\"thinking\",\"text\":\"u\",\"signature\":\"S2\"},{\"type\":\"text\",\"text\":\"b\"}]},"
                        "{\"role\":\"user\",\"content\":\"go\"}]}";
    /* signed thinking in the final (prefill) assistant message */
    const char *pre = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":["
                      "{\"type\":\"thinking\",\"text\":\"t\",\"signature\":\"S1\"},{\"type\":\"text\",\"text\":\"a\"}]}]}";
    /* a tool loop whose assistant message does not start with thinking */
    const char *loop = "{\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":["
                       "{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
                       "{\"type\":\"toolCall\",\"id\":\"t1\",\"name\":\"read\",\"input\":{}}]},"
                       "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"ok\"}]}]}";
    const char *budget = "{\"maxTokens\":4096,\"reasoning\":{\"budgetTokens\":2048}}";
    for (int i = 0; i < 2; i++) {
        const char *p = provs[i][0], *m = provs[i][1];
        out o = rend(late, p, m, false);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_HAS(o.ev, "\"messageIndex\":1,\"blockIndex\":1,\"reason\":\"misplaced_thinking\"");
        CHECK_NOT(o.req, "S1");
        out_free(&o);
        o = rend(inter, p, m, false);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_HAS(o.req, "S1");
        CHECK_HAS(o.req, "S2");
        CHECK_NOT(o.ev, "misplaced_thinking");
        out_free(&o);
        o = rend(pre, p, m, false);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_HAS(o.ev, "\"messageIndex\":1,\"blockIndex\":0,\"reason\":\"thinking_disabled\"");
        CHECK_NOT(o.req, "S1");
        out_free(&o);
        o = rend_p(pre, p, m, false, budget); /* thinking enabled: the prefill keeps it */
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_HAS(o.req, "S1");
        out_free(&o);
        o = rend_p(loop, p, m, false, budget);
        CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
        CHECK_STR(o.err.pointer, "/reasoning/budgetTokens");
        CHECK_HAS(o.err.message, "(message 1) must start with a thinking block");
        out_free(&o);
        o = rend_p(loop, p, m, true, budget);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_HAS(o.ev, "\"change\":\"parameter_dropped\",\"parameter\":\"reasoning.budgetTokens\"");
        CHECK_NOT(o.req, "budget_tokens");
        out_free(&o);
        o = rend(loop, p, m, false); /* no budget: nothing to say */
        CHECK_INT(o.st, QUIRE_OK);
        out_free(&o);
    }
    /* the validator's rules */
    const char *mid = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                      "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"thinking\",\"thinking\":\"x\","
                      "\"signature\":\"S\"}]},{\"role\":\"user\",\"content\":\"go\"}]}";
    CHECK_VIOL(mid, "anthropic", NULL, "/messages/1/content/1: an assistant message that holds thinking must start with a thinking block");
    const char *fin = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                      "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"x\",\"signature\":\"S\"}]}]}";
    CHECK_VIOL(fin, "anthropic", NULL, "/messages/1/content/0: with thinking disabled, the final assistant message may not hold thinking");
    const char *fin_on = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":4096,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                         "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"x\",\"signature\":\"S\"}]}],"
                         "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048}}";
    CHECK_VALID(fin_on, "anthropic", NULL);
    const char *lp = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":4096,\"tools\":[{\"name\":\"r\",\"input_schema\":{\"type\":\"object\"}}],"
                     "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                     "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"r\",\"input\":{}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                     "\"tool_use_id\":\"t\",\"content\":\"ok\"}]}],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048}}";
    CHECK_VIOL(lp, "anthropic", NULL, "/messages/1/content/0: with thinking enabled, the assistant message whose calls the last message answers must start with a thinking block");
    const char *bmid = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
                       "[{\"text\":\"a\"},{\"reasoningContent\":{\"reasoningText\":{\"text\":\"x\",\"signature\":\"S\"}}}]},"
                       "{\"role\":\"user\",\"content\":[{\"text\":\"go\"}]}]}";
    CHECK_VIOL(bmid, "bedrock", BEDROCK_CLAUDE, "/messages/1/content/1: an assistant message that holds thinking must start with a thinking block");
    /* Converse: tool calls in the history need toolConfig; without tools the called names are declared */
    const char *notools = "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":["
                          "{\"type\":\"toolCall\",\"id\":\"t1\",\"name\":\"zed\",\"input\":{}},{\"type\":\"toolCall\",\"id\":\"t2\",\"name\":\"read\",\"input\":{}},"
                          "{\"type\":\"toolCall\",\"id\":\"t3\",\"name\":\"zed\",\"input\":{}}]},"
                          "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"ok\"},"
                          "{\"type\":\"toolResult\",\"toolCallId\":\"t2\",\"content\":\"ok\"},{\"type\":\"toolResult\",\"toolCallId\":\"t3\",\"content\":\"ok\"}]}]}";
    out o = rend(notools, "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"toolConfig\":{\"tools\":[{\"toolSpec\":{\"name\":\"read\",\"inputSchema\":{\"json\":{\"type\":\"object\"}}}},"
                     "{\"toolSpec\":{\"name\":\"zed\",\"inputSchema\":{\"json\":{\"type\":\"object\"}}}}]},");
    CHECK_HAS(o.ev, "\"change\":\"declared_called_tools\",\"messageIndex\":1");
    out_free(&o);
    o = rend("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", "bedrock", BEDROCK_CLAUDE, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_NOT(o.req, "toolConfig");
    CHECK_NOT(o.ev, "declared_called_tools");
    out_free(&o);
    CHECK_VIOL("{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":"
               "[{\"toolUse\":{\"toolUseId\":\"a\",\"name\":\"f\",\"input\":{}}}]},{\"role\":\"user\",\"content\":"
               "[{\"toolResult\":{\"toolUseId\":\"a\",\"content\":[{\"text\":\"x\"}]}}]}]}",
               "bedrock", BEDROCK_CLAUDE, "/messages/1/content/0: toolUse and toolResult blocks need toolConfig in the request");
}

int main(void) {
    test_tool_count();
    test_tool_names_unique();
    test_call_ids();
    test_tool_names_all();
    test_blank_text();
    test_final_whitespace();
    test_thinking();
    test_thinking_placement();
    test_emptied_message();
    test_tool_inputs();
    test_converse_names();
    test_cache_ttl();
    test_documents();
    test_responses_order();
    test_mistral_thinking();
    test_gemini_signature_placeholder();
    test_mid_system();
    test_compact_checks();
    test_cross();
    test_blank_system_and_results();
    test_gemini_folded_empty_system();
    test_unrecorded_signature();
    test_mistral_ids();
    test_converse_names_back();
    test_answer_rules();
    test_session_compact_span();
    TEST_MAIN_END();
}
