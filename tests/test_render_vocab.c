#define _POSIX_C_SOURCE 200809L
/* The transcript vocabulary of DESIGN 2.1 beyond text and tool calls: audio
 * and file media, file ids with their owning provider, document filenames,
 * media types resolved from magic bytes, citations, server tool blocks, custom
 * and provider tools. Each rule: the transcript round-trips byte-exact, each
 * dialect renders what it can carry (and the result validates), everything
 * else is an error naming the block or, with lossy, an event. */
#include "core/transcript.h"
#include "quire.h"
#include "unit.h"
#include "render_check.h"

#include <stdlib.h>

/* ---- helpers ---- */

/* A render of a transcript that must parse (render_check.h). */
static out render(const char *json, const char *provider, const char *model, bool lossy) {
    out o = rend(json, provider, model, lossy);
    CHECK_MSG(o.parsed, "transcript rejected: %s", json);
    return o;
}

static char *encode(const char *json, quire_error *e) {
    quire_transcript *t = NULL;
    if (quire_transcript_parse(json, strlen(json), NULL, &t, e)) return NULL;
    quire_bytes b = {0};
    quire_status st = quire_transcript_write(t, 0, &b, e);
    quire_transcript_free(t);
    return st ? NULL : b.data;
}

static void roundtrip(const char *json) {
    quire_error e;
    char *once = encode(json, &e);
    CHECK_MSG(once != NULL, "decode failed: %s: %s", e.pointer, e.message);
    if (once) CHECK_STR(once, json);
    free(once);
}

static void bad(const char *json, const char *pointer, const char *message) {
    quire_transcript *t = NULL;
    quire_error e;
    memset(&e, 0, sizeof e);
    quire_status st = quire_transcript_parse(json, strlen(json), NULL, &t, &e);
    CHECK_MSG(st != QUIRE_OK, "accepted: %s", json);
    CHECK_STR(e.pointer, pointer);
    CHECK_STR(e.message, message);
    quire_transcript_free(t);
}

/* An unsupported block: an error naming it, or with lossy a content_dropped event. */
static void refused(const char *json, const char *provider, const char *pointer, const char *what) {
    out o = render(json, provider, NULL, false);
    CHECK_MSG(o.st == QUIRE_E_UNSUPPORTED, "%s rendered: %s", provider, o.req ? o.req : "");
    CHECK_STR(o.err.pointer, pointer);
    CHECK_HAS(o.err.message, what);
    out_free(&o);
    o = render(json, provider, NULL, true);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.ev, "\"content_dropped\"");
    CHECK_HAS(o.ev, "not_expressible");
    out_free(&o);
}

#define PNG "iVBORw0KGgoAAAANSUhEUg=="
#define PDF "JVBERi0xLjQK"
#define WAV "UklGRiQAAABXQVZFZm10IA=="
#define U(blocks) "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"see\"}," blocks "]}]}"

/* ---- magic bytes ---- */
static void test_sniff(void) {
    static const struct { const char *b64, *mt; } k[] = {
        {PNG, "image/png"}, {"/9j/4AAQSkZJRg==", "image/jpeg"}, {"R0lGODlhAQA=", "image/gif"},
        {"UklGRiQAAABXRUJQVlA4IA==", "image/webp"}, {WAV, "audio/wav"}, {PDF, "application/pdf"},
        {"SUQzAwAA", "audio/mpeg"}, {"//uQZA==", "audio/mpeg"}, {"\\/9j\\/4AAQSkZJRg==", "image/jpeg"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const char *got = qtr_sniff_media(qstr_plain(k[i].b64, strlen(k[i].b64)));
        CHECK_MSG(got && strcmp(got, k[i].mt) == 0, "%s: got %s, want %s", k[i].b64, got ? got : "NULL", k[i].mt);
    }
    CHECK(qtr_sniff_media(qstr_lit("aGVsbG8=")) == NULL); /* "hello" */
    CHECK(qtr_sniff_media(qstr_lit("")) == NULL);
}

/* ---- transcript: parse and write ---- */
static void test_roundtrip(void) {
    roundtrip(U("{\"type\":\"audio\",\"mediaType\":\"audio/wav\",\"data\":\"" WAV "\"}"));
    roundtrip(U("{\"type\":\"file\",\"mediaType\":\"application/pdf\",\"fileId\":\"file-1\",\"provider\":\"openai\","
                "\"filename\":\"a.pdf\"}"));
    roundtrip(U("{\"type\":\"document\",\"data\":\"" PDF "\",\"title\":\"T\",\"filename\":\"a.pdf\"}"));
    roundtrip(U("{\"type\":\"image\",\"mediaType\":\"image\",\"data\":\"" PNG "\"}"));
    roundtrip(U("{\"type\":\"image\",\"fileId\":\"file_011\",\"provider\":\"anthropic\"}"));
    roundtrip("{\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\",\"citations\":"
              "[{\"type\":\"char_location\",\"n\":1.50}]}]}]}");
    roundtrip("{\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"serverToolCall\",\"provider\":\"anthropic\","
              "\"id\":\"s1\",\"name\":\"web_search\",\"input\":{\"query\":\"q\"}},{\"type\":\"serverToolResult\","
              "\"provider\":\"anthropic\",\"toolCallId\":\"s1\",\"name\":\"web_search\",\"content\":[{\"x\":1e2}]}]}]}");
    roundtrip("{\"tools\":[{\"kind\":\"custom\",\"name\":\"apply_patch\",\"description\":\"d\",\"format\":"
              "{\"type\":\"grammar\",\"syntax\":\"lark\",\"definition\":\"start: /.+/\"}},{\"kind\":\"provider\","
              "\"provider\":\"anthropic\",\"item\":{\"type\":\"web_search_20250305\",\"name\":\"web_search\",\"max_uses\":5}},"
              "{\"kind\":\"function\",\"name\":\"f\",\"inputSchema\":{\"type\":\"object\"}}],\"messages\":[]}");
}

static void test_errors(void) {
    bad(U("{\"type\":\"image\",\"mediaType\":\"image\",\"data\":\"" PDF "\"}"), "/messages/0/content/1/mediaType",
        "image block: the data is application/pdf, not of media type \"image\"");
    bad(U("{\"type\":\"image\",\"mediaType\":\"image\",\"data\":\"aGVsbG8=\"}"), "/messages/0/content/1/mediaType",
        "image block: the media type has no subtype and the data's first bytes match no known format "
        "(PNG, JPEG, GIF, WebP, PDF, WAV, MP3); give \"mediaType\" with a subtype");
    bad(U("{\"type\":\"image\",\"mediaType\":\"image\",\"url\":\"https://x/a\"}"), "/messages/0/content/1/mediaType",
        "media type without a subtype in image block and no \"data\" to resolve it from");
    bad(U("{\"type\":\"file\",\"fileId\":\"f\"}"), "/messages/0/content/1",
        "missing required field \"provider\" in file block with \"fileId\" (the provider that owns the id)");
    bad(U("{\"type\":\"image\",\"data\":\"" PNG "\",\"provider\":\"openai\"}"), "/messages/0/content/1/provider",
        "\"provider\" on a image block names the owner of a \"fileId\"; this block has none");
    bad(U("{\"type\":\"image\",\"data\":\"" PNG "\",\"fileId\":\"f\",\"provider\":\"openai\"}"), "/messages/0/content/1",
        "image block has more than one of \"data\", \"url\" and \"fileId\"; give one");
    bad(U("{\"type\":\"audio\",\"data\":\"" WAV "\",\"title\":\"t\"}"), "/messages/0/content/1/title",
        "unknown field \"title\" in audio block");
    bad(U("{\"type\":\"image\",\"data\":\"" PNG "\",\"filename\":\"a.png\"}"), "/messages/0/content/1/filename",
        "unknown field \"filename\" in image block");
    bad(U("{\"type\":\"serverToolCall\",\"provider\":\"anthropic\",\"id\":\"s\",\"name\":\"n\",\"input\":{}}"),
        "/messages/0/content/1/type", "this block type belongs in an assistant message");
    bad("{\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"serverToolResult\",\"provider\":\"anthropic\","
        "\"toolCallId\":\"s\"}]}]}", "/messages/0/content/0", "missing required field \"content\" in serverToolResult block");
    /* parameters are an object schema for every provider */
    bad("{\"tools\":[{\"name\":\"f\",\"inputSchema\":{}}],\"messages\":[]}", "/tools/0/inputSchema",
        "a tool's inputSchema needs \"type\": \"object\" (the providers take only object parameters)");
    bad("{\"tools\":[{\"name\":\"f\",\"inputSchema\":{\"type\":\"string\"}}],\"messages\":[]}", "/tools/0/inputSchema/type",
        "a tool's inputSchema is of type \"object\" (the providers take only object parameters)");
    bad("{\"tools\":[{\"name\":\"f\",\"inputSchema\":{\"type\":[\"object\",\"null\"]}}],\"messages\":[]}",
        "/tools/0/inputSchema/type", "a tool's inputSchema is of type \"object\" (the providers take only object parameters)");
    bad("{\"tools\":[{\"kind\":\"custom\",\"name\":\"c\",\"inputSchema\":{}}],\"messages\":[]}", "/tools/0/inputSchema",
        "unknown field \"inputSchema\" in custom tool");
    bad("{\"tools\":[{\"kind\":\"provider\",\"provider\":\"anthropic\"}],\"messages\":[]}", "/tools/0",
        "missing required field \"item\" in provider tool");
    bad("{\"tools\":[{\"kind\":\"provider\",\"provider\":\"anthropic\",\"item\":{},\"name\":\"x\"}],\"messages\":[]}",
        "/tools/0/name", "unknown field \"name\" in provider tool");
    bad("{\"system\":[{\"type\":\"text\",\"text\":\"s\",\"citations\":[]}],\"messages\":[]}", "/system/0/citations",
        "citations belong on message text, not in the system prompt");
    bad("{\"messages\":[{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\",\"content\":"
        "[{\"type\":\"text\",\"text\":\"r\",\"citations\":[]}]}]}]}", "/messages/0/content/0/content/0/citations",
        "citations belong on message text, not inside a toolResult's content");
    bad("{\"tools\":[{\"kind\":\"builtin\",\"name\":\"x\"}],\"messages\":[]}", "/tools/0/kind",
        "unknown tool kind (expected function, custom or provider)");
}

/* ---- media per dialect ---- */
static void test_media(void) {
    const char *fid_a = U("{\"type\":\"document\",\"mediaType\":\"application/pdf\",\"fileId\":\"file_011\",\"provider\":\"anthropic\"}");
    out o = render(fid_a, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"document\",\"source\":{\"type\":\"file\",\"file_id\":\"file_011\"}");
    out_free(&o);
    refused(fid_a, "openai", "/messages/0/content/1", "a file id of another provider");
    refused(fid_a, "gemini", "/messages/0/content/1", "a file id of another provider");
    refused(fid_a, "bedrock", "/messages/0/content/1", "file id");

    /* an image given as "image" + PNG bytes renders as image/png */
    const char *img = U("{\"type\":\"image\",\"mediaType\":\"image\",\"data\":\"" PNG "\"}");
    o = render(img, "anthropic", NULL, false);
    CHECK_HAS(o.req, "\"media_type\":\"image/png\"");
    out_free(&o);
    o = render(img, "bedrock", NULL, false);
    CHECK_HAS(o.req, "\"format\":\"png\"");
    out_free(&o);

    /* audio: OpenAI Chat input_audio; nowhere else */
    const char *aud = U("{\"type\":\"audio\",\"data\":\"" WAV "\"}");
    o = render(aud, "openai", "gpt-4o", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"" WAV "\",\"format\":\"wav\"}}");
    out_free(&o);
    o = render(aud, "gemini", NULL, false);
    CHECK_HAS(o.req, "{\"inlineData\":{\"mimeType\":\"audio/wav\"");
    out_free(&o);
    refused(aud, "anthropic", "/messages/0/content/1", "an audio block");
    refused(aud, "openai_responses", "/messages/0/content/1", "an audio block");
    refused(aud, "bedrock", "/messages/0/content/1", "an audio block");
    refused(aud, "mistral", "/messages/0/content/1", "an audio block");
    refused(aud, "ollama", "/messages/0/content/1", "an audio block");

    /* file blocks: Chat file {file_data, filename}, Responses input_file, Bedrock document name */
    const char *file = U("{\"type\":\"file\",\"data\":\"" PDF "\",\"filename\":\"report.pdf\"}");
    o = render(file, "openai", "gpt-4o", false);
    CHECK_HAS(o.req, "{\"type\":\"file\",\"file\":{\"filename\":\"report.pdf\",\"file_data\":\"data:application/pdf;base64," PDF "\"}}");
    out_free(&o);
    o = render(file, "openai_responses", NULL, false);
    CHECK_HAS(o.req, "{\"type\":\"input_file\",\"filename\":\"report.pdf\",\"file_data\":\"data:application/pdf;base64,");
    out_free(&o);
    o = render(file, "bedrock", NULL, false);
    CHECK_HAS(o.req, "{\"document\":{\"format\":\"pdf\",\"name\":\"report-pdf\"");
    out_free(&o);
    o = render(file, "anthropic", NULL, false);
    CHECK_HAS(o.req, "{\"type\":\"document\",\"source\":{\"type\":\"base64\",\"media_type\":\"application/pdf\"");
    CHECK_HAS(o.req, "\"title\":\"report.pdf\"");
    out_free(&o);
    o = render(U("{\"type\":\"document\",\"url\":\"https://x/r.pdf\",\"filename\":\"r.pdf\"}"), "mistral", NULL, false);
    CHECK_MSG(o.st == QUIRE_OK, "mistral: %s", o.err.message);
    CHECK_HAS(o.req, "{\"type\":\"document_url\",\"document_url\":\"https://x/r.pdf\",\"document_name\":\"r.pdf\"}");
    out_free(&o);
    refused(file, "gemini", "/messages/0/content/1", "title or filename");
    o = render(U("{\"type\":\"file\",\"data\":\"" PNG "\"}"), "anthropic", NULL, false);
    CHECK_HAS(o.req, "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\"");
    out_free(&o);
    refused(U("{\"type\":\"file\",\"data\":\"" PNG "\",\"filename\":\"a.png\"}"), "anthropic", "/messages/0/content/1",
            "a filename on an image");
    o = render(U("{\"type\":\"file\",\"data\":\"" PNG "\"}"), "bedrock", NULL, false);
    CHECK_HAS(o.req, "{\"image\":{\"format\":\"png\"");
    out_free(&o);
    refused(file, "ollama", "/messages/0/content/1", "a file block");
    refused(file, "mistral", "/messages/0/content/1", "a file block");

    /* OpenAI file ids: Chat file_id, Responses input_file/input_image file_id */
    const char *fid_o = U("{\"type\":\"file\",\"fileId\":\"file-abc\",\"provider\":\"openai\"}");
    o = render(fid_o, "openai", "gpt-4o", false);
    CHECK_HAS(o.req, "{\"type\":\"file\",\"file\":{\"file_id\":\"file-abc\"}}");
    out_free(&o);
    o = render(fid_o, "openai_responses", NULL, false);
    CHECK_HAS(o.req, "{\"type\":\"input_file\",\"file_id\":\"file-abc\"}");
    out_free(&o);
    o = render(U("{\"type\":\"image\",\"fileId\":\"file-abc\",\"provider\":\"openai\"}"), "openai_responses", NULL, false);
    CHECK_HAS(o.req, "{\"type\":\"input_image\",\"file_id\":\"file-abc\",\"detail\":\"auto\"}");
    out_free(&o);
    refused(U("{\"type\":\"image\",\"fileId\":\"file-abc\",\"provider\":\"openai\"}"), "openai", "/messages/0/content/1",
            "an image by file id");

    /* Gemini file ids are file URIs */
    o = render(U("{\"type\":\"file\",\"mediaType\":\"application/pdf\",\"fileId\":\"https://generativelanguage.googleapis.com/v1beta/files/x\",\"provider\":\"gemini\"}"),
               "gemini", NULL, false);
    CHECK_HAS(o.req, "{\"fileData\":{\"mimeType\":\"application/pdf\",\"fileUri\":\"https://generativelanguage.googleapis.com/v1beta/files/x\"}}");
    out_free(&o);
}

/* ---- citations ---- */
static void test_citations(void) {
    const char *j = "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
                    "\"text\":\"A.\",\"citations\":[{\"type\":\"char_location\",\"cited_text\":\"a\",\"start_char_index\":0}]}]},"
                    "{\"role\":\"user\",\"content\":\"more\"}]}";
    out o = render(j, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"text\":\"A.\",\"citations\":[{\"type\":\"char_location\",\"cited_text\":\"a\",\"start_char_index\":0}]");
    CHECK_NOT(o.ev, "content_dropped");
    out_free(&o);
    /* elsewhere: the text is kept, the citations dropped with an event, also without lossy */
    static const char *const others[] = {"openai", "openai_responses", "gemini", "bedrock", "ollama", "mistral"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        o = render(j, others[i], NULL, false);
        CHECK_MSG(o.st == QUIRE_OK, "%s: %s", others[i], o.err.message);
        CHECK_HAS(o.req, "A.");
        CHECK_NOT(o.req, "char_location");
        CHECK_HAS(o.ev, "citations of a text block");
        out_free(&o);
    }
}

/* ---- server tools ---- */
static void test_server_tools(void) {
    const char *j = "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":["
                    "{\"type\":\"serverToolCall\",\"provider\":\"anthropic\",\"id\":\"srv1\",\"name\":\"web_search\",\"input\":{\"query\":\"x\"}},"
                    "{\"type\":\"serverToolResult\",\"provider\":\"anthropic\",\"toolCallId\":\"srv1\",\"content\":[{\"type\":\"web_search_result\",\"url\":\"u\"}]},"
                    "{\"type\":\"text\",\"text\":\"Done.\"}]},{\"role\":\"user\",\"content\":\"thanks\"}]}";
    out o = render(j, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"server_tool_use\",\"id\":\"srv1\",\"name\":\"web_search\",\"input\":{\"query\":\"x\"}}");
    CHECK_HAS(o.req, "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srv1\",\"content\":[{\"type\":\"web_search_result\",\"url\":\"u\"}]}");
    out_free(&o);
    static const char *const others[] = {"openai", "openai_responses", "gemini", "bedrock", "ollama"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        o = render(j, others[i], NULL, false);
        CHECK_MSG(o.st == QUIRE_OK, "%s: %s", others[i], o.err.message);
        CHECK_NOT(o.req, "srv1");
        CHECK_HAS(o.ev, "server tool");
        out_free(&o);
    }
    /* a result with neither a name nor its call: the block type cannot be named */
    refused("{\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"serverToolResult\","
            "\"provider\":\"anthropic\",\"toolCallId\":\"zz\",\"content\":[]},{\"type\":\"text\",\"text\":\"x\"}]}]}",
            "anthropic", "/messages/1/content/0", "serverToolResult");
}

/* ---- tools ---- */
static void test_tools(void) {
    const char *custom = "{\"tools\":[{\"kind\":\"custom\",\"name\":\"apply_patch\",\"description\":\"Patch\",\"format\":"
                         "{\"type\":\"grammar\",\"syntax\":\"lark\",\"definition\":\"start: /.+/\"}}],"
                         "\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}";
    out o = render(custom, "openai_responses", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"tools\":[{\"type\":\"custom\",\"name\":\"apply_patch\",\"description\":\"Patch\",\"format\":"
                     "{\"type\":\"grammar\",\"syntax\":\"lark\",\"definition\":\"start: /.+/\"}}]");
    out_free(&o);
    o = render(custom, "openai", "gpt-5", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"tools\":[{\"type\":\"custom\",\"custom\":{\"name\":\"apply_patch\",\"description\":\"Patch\",\"format\":"
                     "{\"type\":\"grammar\",\"grammar\":{\"definition\":\"start: /.+/\",\"syntax\":\"lark\"}}}}]");
    out_free(&o);
    static const char *const no_custom[] = {"anthropic", "gemini", "bedrock", "mistral", "ollama"};
    for (size_t i = 0; i < sizeof no_custom / sizeof no_custom[0]; i++)
        refused(custom, no_custom[i], "/tools/0", "a custom (freeform) tool");

    const char *prov = "{\"tools\":[{\"kind\":\"provider\",\"provider\":\"anthropic\",\"item\":{\"type\":\"web_search_20250305\","
                       "\"name\":\"web_search\",\"max_uses\":5}},{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}],"
                       "\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}";
    o = render(prov, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"tools\":[{\"type\":\"web_search_20250305\",\"name\":\"web_search\",\"max_uses\":5},{\"name\":\"read\"");
    out_free(&o);
    static const char *const others[] = {"openai", "openai_responses", "gemini", "bedrock", "mistral", "ollama"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        refused(prov, others[i], "/tools/0", "a provider tool of another provider");
    /* the last tool is the provider's: the managed cache marker lands on it, not silently nowhere */
    o = render("{\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}},{\"kind\":\"provider\",\"provider\":"
               "\"anthropic\",\"item\":{\"type\":\"web_search_20250305\",\"name\":\"web_search\"}}],\"messages\":"
               "[{\"role\":\"user\",\"content\":\"go\"}]}", "anthropic", NULL, false);
    CHECK_HAS(o.req, "{\"type\":\"web_search_20250305\",\"name\":\"web_search\",\"cache_control\":{\"type\":\"ephemeral\"}}]");
    out_free(&o);
    o = render("{\"tools\":[{\"kind\":\"provider\",\"provider\":\"gemini\",\"item\":{\"googleSearch\":{}}},{\"name\":\"read\","
               "\"inputSchema\":{\"type\":\"object\"}}],\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}",
               "gemini", NULL, false);
    CHECK_HAS(o.req, "\"tools\":[{\"googleSearch\":{}},{\"functionDeclarations\":[{\"name\":\"read\"");
    out_free(&o);
}

/* ---- --from anthropic: the vocabulary comes in as blocks, not opaque items ---- */
static void test_from_anthropic(void) {
    const char *req =
        "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":100,\"tools\":[{\"type\":\"web_search_20250305\",\"name\":\"web_search\","
        "\"max_uses\":3}],\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"q\"},"
        "{\"type\":\"document\",\"source\":{\"type\":\"file\",\"file_id\":\"file_011\"},\"title\":\"T\"}]},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"server_tool_use\",\"id\":\"srv1\",\"name\":\"web_search\",\"input\":{\"query\":\"x\"}},"
        "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srv1\",\"content\":[{\"type\":\"web_search_result\",\"url\":\"u\"}]},"
        "{\"type\":\"text\",\"text\":\"A.\",\"citations\":[{\"type\":\"web_search_result_location\",\"url\":\"u\"}]}]},"
        "{\"role\":\"user\",\"content\":\"more\"}]}";
    quire_transcript *t = NULL;
    quire_error e;
    quire_status st = quire_transcript_parse_dialect("anthropic", req, strlen(req), NULL, &t, &e);
    CHECK_MSG(st == QUIRE_OK, "from anthropic: %s %s", e.pointer, e.message);
    if (st) return;
    quire_bytes b = {0};
    CHECK_INT(quire_transcript_write(t, 0, &b, &e), QUIRE_OK);
    CHECK_HAS(b.data, "{\"kind\":\"provider\",\"provider\":\"anthropic\",\"item\":{\"type\":\"web_search_20250305\"");
    CHECK_HAS(b.data, "{\"type\":\"document\",\"fileId\":\"file_011\",\"provider\":\"anthropic\",\"title\":\"T\"}");
    CHECK_HAS(b.data, "{\"type\":\"serverToolCall\",\"provider\":\"anthropic\",\"id\":\"srv1\",\"name\":\"web_search\",\"input\":{\"query\":\"x\"}}");
    CHECK_HAS(b.data, "{\"type\":\"serverToolResult\",\"provider\":\"anthropic\",\"toolCallId\":\"srv1\",\"name\":\"web_search\",\"content\":");
    CHECK_HAS(b.data, "\"text\":\"A.\",\"citations\":[{\"type\":\"web_search_result_location\",\"url\":\"u\"}]");
    CHECK_NOT(b.data, "\"opaque\"");
    /* and back to Anthropic: the request's blocks again */
    out o = render(b.data, "anthropic", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"type\":\"web_search_20250305\",\"name\":\"web_search\",\"max_uses\":3");
    CHECK_HAS(o.req, "{\"type\":\"document\",\"source\":{\"type\":\"file\",\"file_id\":\"file_011\"},\"title\":\"T\"");
    CHECK_HAS(o.req, "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srv1\"");
    out_free(&o);
    quire_bytes_free(&b);
    quire_transcript_free(t);
}

/* ---- --from openai_responses: custom and built-in tools ---- */
static void test_from_responses(void) {
    const char *req = "{\"model\":\"gpt-5\",\"input\":\"go\",\"tools\":[{\"type\":\"custom\",\"name\":\"apply_patch\","
                      "\"format\":{\"type\":\"grammar\",\"syntax\":\"lark\",\"definition\":\"start: /.+/\"}},"
                      "{\"type\":\"web_search\"}]}";
    quire_transcript *t = NULL;
    quire_error e;
    quire_status st = quire_transcript_parse_dialect("openai_responses", req, strlen(req), NULL, &t, &e);
    CHECK_MSG(st == QUIRE_OK, "from responses: %s %s", e.pointer, e.message);
    if (st) return;
    quire_bytes b = {0};
    CHECK_INT(quire_transcript_write(t, 0, &b, &e), QUIRE_OK);
    CHECK_HAS(b.data, "\"tools\":[{\"kind\":\"custom\",\"name\":\"apply_patch\",\"format\":{\"type\":\"grammar\"");
    CHECK_HAS(b.data, "{\"kind\":\"provider\",\"provider\":\"openai_responses\",\"item\":{\"type\":\"web_search\"}}");
    out o = render(b.data, "openai_responses", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"tools\":[{\"type\":\"custom\",\"name\":\"apply_patch\",\"format\":{\"type\":\"grammar\",\"syntax\":\"lark\","
                     "\"definition\":\"start: /.+/\"}},{\"type\":\"web_search\"}]");
    out_free(&o);
    quire_bytes_free(&b);
    quire_transcript_free(t);
}

int main(void) {
    test_sniff();
    test_roundtrip();
    test_errors();
    test_media();
    test_citations();
    test_server_tools();
    test_tools();
    test_from_anthropic();
    test_from_responses();
    TEST_MAIN_END();
}
