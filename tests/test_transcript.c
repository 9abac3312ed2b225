/* The transcript decoder and encoder: every block type round-trips (encoding
 * a decoded transcript is a fixed point) and every error path reports the
 * exact JSON Pointer and message. */
#include "core/transcript.h"
#include "unit.h"

#include <stdlib.h>

static char *encode(const char *json, quire_error *e) {
    quire_transcript *t = NULL;
    if (quire_transcript_parse(json, strlen(json), NULL, &t, e)) return NULL;
    quire_bytes b = {0};
    quire_status st = quire_transcript_write(t, 0, &b, e);
    quire_transcript_free(t);
    if (st) return NULL;
    return b.data;
}

/* decode -> encode equals want (NULL = equals input) and is a fixed point */
static void roundtrip(const char *json, const char *want) {
    quire_error e;
    char *once = encode(json, &e);
    CHECK_MSG(once != NULL, "decode failed: %s: %s", e.pointer, e.message);
    if (!once) return;
    CHECK_STR(once, want ? want : json);
    char *twice = encode(once, &e);
    CHECK_MSG(twice && strcmp(once, twice) == 0, "not a fixed point: %s", twice ? twice : e.message);
    free(once);
    free(twice);
}

static void bad(const char *json, const char *pointer, const char *message, uint32_t line, uint32_t col) {
    quire_transcript *t = NULL;
    quire_error e;
    memset(&e, 0, sizeof e);
    quire_status st = quire_transcript_parse(json, strlen(json), NULL, &t, &e);
    CHECK_MSG(st != QUIRE_OK && t == NULL, "accepted: %s", json);
    CHECK_STR(e.pointer, pointer);
    CHECK_STR(e.message, message);
    if (line) { CHECK_INT(e.line, line); CHECK_INT(e.column, col); }
    quire_transcript_free(t);
}

#define M(x) "{\"messages\":[" x "]}"

int main(void) {
    /* every block type, every optional field */
    roundtrip("{\"system\":\"You are a coding agent.\",\"tools\":[{\"name\":\"read\",\"description\":\"Read a file\","
              "\"inputSchema\":{\"type\":\"object\"}}],\"messages\":[{\"role\":\"user\",\"content\":\"List src/\"}]}", NULL);
    roundtrip("{\"system\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\",\"cacheControl\":{\"type\":\"ephemeral\"}}],"
              "\"messages\":[]}", NULL);
    roundtrip(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},"
                "{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":\"iVBOR\"},"
                "{\"type\":\"image\",\"url\":\"https://example.com/a.png\"},"
                "{\"type\":\"document\",\"mediaType\":\"application/pdf\",\"data\":\"JVBER\",\"title\":\"spec\"},"
                "{\"type\":\"document\",\"mediaType\":\"text/plain\",\"url\":\"https://example.com/a.txt\"}],"
                "\"id\":\"m1\",\"pinned\":true,\"meta\":{\"k\":[1,2.50,{\"z\":null}]}}"), NULL);
    roundtrip(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"hmm\",\"signature\":\"c2ln\"},"
                "{\"type\":\"redactedThinking\",\"data\":\"ZW5j\"},{\"type\":\"text\",\"text\":\"Looking.\"},"
                "{\"type\":\"toolCall\",\"id\":\"t1\",\"name\":\"read\",\"input\":{\"n\":1.0,\"big\":12345678901234567890,\"e\":-0.5e-10}},"
                "{\"type\":\"opaque\",\"provider\":\"openai_responses\",\"item\":{\"type\":\"reasoning\",\"encrypted_content\":\"gAAA\"}}]},"
                "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"a.c\\nb.c\",\"isError\":false}]},"
                "{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t2\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},"
                "{\"type\":\"image\",\"mediaType\":\"image/jpeg\",\"data\":\"/9j\"}],\"isError\":true}]},"
                "{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"developer\",\"content\":[{\"type\":\"text\",\"text\":\"no force-push\"}]}"), NULL);
    /* escapes are kept byte for byte */
    roundtrip(M("{\"role\":\"user\",\"content\":\"caf\\u00e9 \\\"q\\\" \\ud83d\\ude00 \\/\"}"), NULL);
    /* a toolResult without content gets an empty string; whitespace is normalised */
    roundtrip("{ \"messages\" : [ {\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\"}]} ] }",
              M("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\",\"content\":\"\"}]}"));
    /* toolResult blocks inside a user message are split out into a tool message first */
    roundtrip(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"and now\"},"
                "{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"ok\"}]}"),
              M("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"ok\"}]},"
                "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"and now\"}]}"));
    roundtrip(M("{\"role\":\"user\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"ok\"}],\"id\":\"u1\"}"),
              M("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t1\",\"content\":\"ok\"}],\"id\":\"u1\"}"));
    {
        quire_transcript *t = NULL;
        quire_error e;
        const char *j = M("{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":[]}");
        CHECK(quire_transcript_parse(j, strlen(j), NULL, &t, &e) == QUIRE_OK);
        CHECK_INT(quire_transcript_message_count(t), 2);
        quire_transcript_free(t);
    }

    /* error paths: pointer, message, line:col */
    bad("", "", "empty input, expected a JSON value", 1, 1);
    bad("{\"messages\":[}", "/messages/0", "unexpected '}', expected a value", 1, 14);
    bad("[]", "", "expected object (a quire.transcript/1 transcript), got array", 1, 1);
    bad("{}", "", "missing required field \"messages\" in transcript", 1, 1);
    bad("{\"messages\":[],\"model\":\"x\"}", "/model", "unknown field \"model\" in transcript", 1, 16);
    bad("{\"messages\":[],\"messages\":[]}", "/messages", "duplicate key \"messages\"", 1, 16);
    bad("{\"messages\":{}}", "/messages", "expected array of messages, got object", 1, 13);
    bad(M("1"), "/messages/0", "expected object (a message), got number", 1, 14);
    bad(M("{\"content\":\"x\"}"), "/messages/0", "missing required field \"role\" in message", 1, 14);
    bad(M("{\"role\":\"user\"}"), "/messages/0", "missing required field \"content\" in message", 1, 14);
    bad(M("{\"role\":7,\"content\":\"x\"}"), "/messages/0/role", "expected string, got number", 1, 22);
    bad(M("{\"role\":\"robot\",\"content\":\"x\"}"), "/messages/0/role",
        "unknown role \"robot\" (expected user, assistant, tool, system or developer)", 1, 22);
    bad(M("{\"role\":\"user\",\"content\":\"x\",\"name\":\"bob\"}"), "/messages/0/name", "unknown field \"name\" in message", 1, 43);
    bad(M("{\"role\":\"user\",\"content\":5}"), "/messages/0/content", "expected string or array, got number", 1, 39);
    bad("{\"messages\":[\n  {\"role\":\"user\",\n   \"content\":null}]}", "/messages/0/content",
        "expected string or array, got null", 3, 14);
    bad(M("{\"role\":\"user\",\"content\":\"x\",\"pinned\":\"yes\"}"), "/messages/0/pinned", "expected boolean, got string", 1, 52);
    bad(M("{\"role\":\"user\",\"content\":\"x\",\"id\":3}"), "/messages/0/id", "expected string, got number", 1, 48);
    bad(M("{\"role\":\"user\",\"content\":[\"x\"]}"), "/messages/0/content/0",
        "expected object (a content block), got string", 1, 40);
    bad(M("{\"role\":\"user\",\"content\":[{\"text\":\"x\"}]}"), "/messages/0/content/0",
        "missing required field \"type\" in content block", 1, 40);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":1}]}"), "/messages/0/content/0/type", "expected string, got number", 1, 48);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\"}]}"), "/messages/0/content/0/type",
        "unknown block type \"tool_use\"", 1, 53);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\",\"signature\":\"s\"}]}"),
        "/messages/0/content/0/signature", "unknown field \"signature\" in text block", 1, 66);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"bogus\":1}]}"), "/messages/0/content/0/bogus",
        "unknown field \"bogus\" in content block", 1, 55);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}"), "/messages/0/content/0",
        "missing required field \"text\" in text block", 1, 40);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":[]}]}"), "/messages/0/content/0/text",
        "expected string, got array", 1, 62);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\",\"text\":\"b\"}]}"), "/messages/0/content/0/text",
        "duplicate key \"text\"", 1, 66);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"mediaType\":\"image/png\"}]}"), "/messages/0/content/0",
        "image block needs \"data\", \"url\" or \"fileId\"", 1, 40);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":\"a\",\"url\":\"b\"}]}"),
        "/messages/0/content/0", "image block has both \"data\" and \"url\"; give one", 1, 40);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"data\":\"a\"}]}"), "/messages/0/content/0",
        "document block: the media type is missing and the data's first bytes match no known format "
        "(PNG, JPEG, GIF, WebP, PDF, WAV, MP3); give \"mediaType\" with a subtype", 1, 40);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"url\":\"u\",\"title\":5}]}"), "/messages/0/content/0/title",
        "expected string, got number", 1, 77);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"name\":\"r\",\"input\":{}}]}"), "/messages/0/content/0",
        "missing required field \"id\" in toolCall block", 1, 45);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t\",\"input\":{}}]}"), "/messages/0/content/0",
        "missing required field \"name\" in toolCall block", 1, 45);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t\",\"name\":\"r\"}]}"), "/messages/0/content/0",
        "missing required field \"input\" in toolCall block", 1, 45);
    bad(M("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"content\":\"x\"}]}"), "/messages/0/content/0",
        "missing required field \"toolCallId\" in toolResult block", 1, 40);
    bad(M("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\",\"content\":1}]}"),
        "/messages/0/content/0/content", "expected string, object or array, got number", 1, 88);
    bad(M("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\",\"isError\":\"no\"}]}"),
        "/messages/0/content/0/isError", "expected boolean, got string", 1, 88);
    bad(M("{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\",\"content\":[{\"type\":\"document\",\"url\":\"u\"}]}]}"),
        "/messages/0/content/0/content/0/type", "a toolResult's content holds only text and image blocks, not \"document\"", 1, 97);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"signature\":\"s\"}]}"), "/messages/0/content/0",
        "missing required field \"text\" in thinking block", 1, 45);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"redactedThinking\"}]}"), "/messages/0/content/0",
        "missing required field \"data\" in redactedThinking block", 1, 45);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"opaque\",\"item\":{}}]}"), "/messages/0/content/0",
        "missing required field \"provider\" in opaque block", 1, 45);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"opaque\",\"provider\":\"x\"}]}"), "/messages/0/content/0",
        "missing required field \"item\" in opaque block", 1, 45);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\",\"cacheControl\":true}]}"),
        "/messages/0/content/0/cacheControl", "expected object, got boolean", 1, 81);
    /* a cache marker is {"type":"ephemeral"} with an optional ttl of 5m or 1h: any other
     * shape would be written into a request the provider refuses */
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\",\"cacheControl\":{}}]}"),
        "/messages/0/content/0/cacheControl", "missing required field \"type\" (\"ephemeral\")", 1, 81);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\",\"cacheControl\":{\"type\":\"persistent\"}}]}"),
        "/messages/0/content/0/cacheControl/type", "a cache marker's type is \"ephemeral\"", 1, 89);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\",\"cacheControl\":{\"type\":\"ephemeral\","
          "\"ttl\":\"2h\"}}]}"),
        "/messages/0/content/0/cacheControl/ttl", "a cache marker's ttl is \"5m\" or \"1h\"", 1, 107);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\",\"cacheControl\":{\"type\":\"ephemeral\","
          "\"scope\":\"global\"}}]}"),
        "/messages/0/content/0/cacheControl/scope", "unknown field \"scope\" in cacheControl", 1, 101);
    bad("{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"},\"cacheControl\":{\"type\":\"x\"}}],\"messages\":[]}",
        "/tools/0/cacheControl/type", "a cache marker's type is \"ephemeral\"", 1, 78);
    /* role rules */
    bad(M("{\"role\":\"tool\",\"content\":\"x\"}"), "/messages/0/content", "a tool message holds only toolResult blocks", 1, 39);
    bad(M("{\"role\":\"tool\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}"), "/messages/0/content/0/type",
        "a tool message holds only toolResult blocks", 1, 48);
    /* the pointer is written out only for the error: escaped segments, and the
     * prefix restored after the blocks and messages that decoded */
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\",\"a/b~\":1}]}"),
        "/messages/0/content/0/a~1b~0", "unknown field \"a/b~\" in content block", 1, 66);
    bad(M("{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
          "{\"type\":\"toolCall\",\"id\":\"x\",\"name\":\"n\",\"input\":{},\"kind\":\"odd\"}]}"),
        "/messages/1/content/1/kind", "unknown toolCall kind (the only kind is \"custom\")", 1, 160);
    bad(M("{\"role\":\"user\",\"content\":[{\"text\":\"a\",\"type\":\"text\",\"text\":\"b\"}]}"),
        "/messages/0/content/0/text", "duplicate key \"text\"", 1, 66);
    bad(M("{\"role\":\"user\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t\",\"name\":\"n\",\"input\":1}]}"),
        "/messages/0/content/0/type", "this block type belongs in an assistant message", 1, 48);
    bad(M("{\"role\":\"assistant\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\"}]}"),
        "/messages/0/content/0/type", "toolResult blocks belong in a tool or user message", 1, 53);
    bad(M("{\"role\":\"developer\",\"content\":[{\"type\":\"image\",\"url\":\"u\"}]}"), "/messages/0/content/0/type",
        "system and developer messages hold only text blocks", 1, 53);
    /* system and tools */
    bad("{\"system\":5,\"messages\":[]}", "/system", "expected string or array of text blocks, got number", 1, 11);
    bad("{\"system\":[{\"type\":\"image\",\"url\":\"u\"}],\"messages\":[]}", "/system/0/type",
        "the system prompt holds only text blocks", 1, 12);
    bad("{\"tools\":{},\"messages\":[]}", "/tools", "expected array of tools, got object", 1, 10);
    bad("{\"tools\":[1],\"messages\":[]}", "/tools/0", "expected object (a tool), got number", 1, 11);
    bad("{\"tools\":[{\"inputSchema\":{}}],\"messages\":[]}", "/tools/0", "missing required field \"name\" in tool", 1, 11);
    bad("{\"tools\":[{\"name\":\"n\"}],\"messages\":[]}", "/tools/0", "missing required field \"inputSchema\" in tool", 1, 11);
    bad("{\"tools\":[{\"name\":\"n\",\"inputSchema\":[]}],\"messages\":[]}", "/tools/0/inputSchema",
        "expected object (a JSON Schema), got array", 1, 37);
    bad("{\"tools\":[{\"name\":\"n\",\"inputSchema\":{},\"input_schema\":{}}],\"messages\":[]}", "/tools/0/input_schema",
        "unknown field \"input_schema\" in tool", 1, 40);

    /* limits: 100,000 messages and a 50 MB string */
    {
        size_t n = 100000;
        size_t cap = n * 40 + 64;
        char *j = malloc(cap);
        size_t len = (size_t)sprintf(j, "{\"messages\":[");
        for (size_t i = 0; i < n; i++)
            len += (size_t)sprintf(j + len, "%s{\"role\":\"%s\",\"content\":\"m%zu\"}", i ? "," : "", i % 2 ? "assistant" : "user", i);
        len += (size_t)sprintf(j + len, "]}");
        quire_transcript *t = NULL;
        quire_error e;
        CHECK(quire_transcript_parse(j, len, NULL, &t, &e) == QUIRE_OK);
        CHECK_INT(quire_transcript_message_count(t), n);
        quire_bytes b = {0};
        CHECK(quire_transcript_write(t, 0, &b, &e) == QUIRE_OK);
        CHECK(b.len == len && memcmp(b.data, j, len) == 0);
        quire_bytes_free(&b);
        quire_transcript_free(t);
        quire_options o = QUIRE_OPTIONS_INIT;
        o.limits.max_messages = 1000;
        CHECK(quire_transcript_parse(j, len, &o, &t, &e) == QUIRE_E_LIMIT);
        CHECK_STR(e.message, "100000 messages exceed the limit of 1000");
        free(j);
    }
    {
        size_t big = 50u << 20;
        char *j = malloc(big + 64);
        size_t len = (size_t)sprintf(j, "{\"messages\":[{\"role\":\"user\",\"content\":\"");
        memset(j + len, 'a', big);
        len += big;
        len += (size_t)sprintf(j + len, "\"}]}");
        quire_transcript *t = NULL;
        quire_error e;
        CHECK(quire_transcript_parse(j, len, NULL, &t, &e) == QUIRE_OK);
        quire_bytes b = {0};
        CHECK(quire_transcript_write(t, 0, &b, &e) == QUIRE_OK);
        CHECK(b.len == len);
        quire_bytes_free(&b);
        quire_transcript_free(t);
        quire_options o = QUIRE_OPTIONS_INIT;
        o.limits.max_string_bytes = 1u << 20;
        CHECK(quire_transcript_parse(j, len, &o, &t, &e) == QUIRE_E_LIMIT);
        CHECK_STR(e.message, "string of 52428800 bytes exceeds the limit of 1048576 bytes");
        CHECK_STR(e.pointer, "/messages/0/content");
        free(j);
    }
    TEST_MAIN_END();
}
