/* quire_import: Claude Code and Codex logs -> quire.session/1. */
#include "quire.h"
#include "unit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

static int imp(const char *fmt, uint32_t flags, const char *in, quire_bytes *log, quire_bytes *rep, quire_error *e) {
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = fmt;
    io.flags = flags;
    memset(e, 0, sizeof *e);
    return (int)quire_import(in, strlen(in), &io, NULL, log, rep, e);
}

static bool has(const quire_bytes *b, const char *s) {
    size_t k = strlen(s);
    for (size_t i = 0; b->data && i + k <= b->len; i++)
        if (memcmp(b->data + i, s, k) == 0) return true;
    return false;
}

/* The log replays cleanly (tool pairing, roles) for anthropic. */
static void replays(const quire_bytes *log, int want_requests) {
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_bytes out = {0};
    quire_error e;
    quire_status st = quire_replay_run(log->data, log->len, &ro, NULL, &out, &e);
    CHECK_MSG(st == QUIRE_OK, "%u:%u %s %s", e.line, e.column, e.pointer, e.message);
    int n = 0;
    for (size_t i = 0; out.data && i + 17 <= out.len; i++)
        if (memcmp(out.data + i, "{\"type\":\"request\"", 17) == 0) n++;
    CHECK_INT(n, want_requests);
    quire_bytes_free(&out);
}

static const char k_cc[] =
    "{\"type\":\"progress\",\"uuid\":\"p0\",\"parentUuid\":null}\n"
    "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":\"p0\",\"sessionId\":\"S\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"
    "{\"type\":\"assistant\",\"uuid\":\"a1\",\"parentUuid\":\"u1\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":"
    "[{\"type\":\"text\",\"text\":\"A\"}]}}\n"
    "{\"type\":\"assistant\",\"uuid\":\"a2\",\"parentUuid\":\"a1\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":"
    "[{\"type\":\"tool_use\",\"id\":\"T1\",\"name\":\"Read\",\"input\":{\"p\":1}}]}}\n"
    "{\"type\":\"assistant\",\"uuid\":\"a3\",\"parentUuid\":\"a2\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":"
    "[{\"type\":\"tool_use\",\"id\":\"T2\",\"name\":\"Read\",\"input\":{\"p\":2}}]}}\n"
    "{\"type\":\"user\",\"uuid\":\"r2\",\"parentUuid\":\"a3\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
    "\"tool_use_id\":\"T2\",\"content\":\"two\\n\\n<system-reminder>\\nR\\n</system-reminder>\\n\"}]}}\n"
    "{\"type\":\"user\",\"uuid\":\"r1\",\"parentUuid\":\"a2\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
    "\"tool_use_id\":\"T1\",\"content\":\"one\",\"is_error\":true}]}}\n"
    "{\"type\":\"assistant\",\"uuid\":\"a4\",\"parentUuid\":\"r1\",\"message\":{\"id\":\"m2\",\"model\":\"claude-x\",\"content\":"
    "[{\"type\":\"text\",\"text\":\"B\"}]}}\n";

static void test_claude_code(void) {
    quire_bytes log = {0}, rep = {0};
    quire_error e;
    CHECK_INT(imp("claude-code", 0, k_cc, &log, &rep, &e), QUIRE_OK);
    const char *want =
        "{\"type\":\"session\",\"sessionId\":\"S\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-x\"},"
        "\"_meta\":{\"importedFrom\":\"claude-code\"}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"id\":\"u1\"},\"_meta\":{\"line\":2}}\n"
        "{\"type\":\"render\",\"_meta\":{\"line\":3}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"A\"},"
        "{\"type\":\"toolCall\",\"id\":\"T1\",\"name\":\"Read\",\"input\":{\"p\":1}},{\"type\":\"toolCall\",\"id\":\"T2\","
        "\"name\":\"Read\",\"input\":{\"p\":2}}],\"id\":\"m1\"},\"_meta\":{\"line\":3}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"T2\","
        "\"content\":\"two\\n\\n<system-reminder>\\nR\\n</system-reminder>\\n\"},{\"type\":\"toolResult\",\"toolCallId\":\"T1\","
        "\"content\":\"one\",\"isError\":true}],\"id\":\"r2\"},\"_meta\":{\"line\":6}}\n"
        "{\"type\":\"render\",\"_meta\":{\"line\":8}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"B\"}],\"id\":\"m2\"},\"_meta\":{\"line\":8}}\n";
    CHECK_STR(log.data, want);
    CHECK(has(&rep, "summary: 8 lines, 4 messages, 2 renders, 0 compactions, 0 reminders lifted"));
    replays(&log, 2);
    quire_bytes_free(&log);
    quire_bytes_free(&rep);

    /* --lift-reminders lifts only what the harness wrote: reminder text
     * inside a tool's output stays there, byte for byte (issue #14) */
    CHECK_INT(imp("claude-code", QUIRE_IMPORT_LIFT_REMINDERS, k_cc, &log, &rep, &e), QUIRE_OK);
    CHECK(has(&log, "\"content\":\"two\\n\\n<system-reminder>\\nR\\n</system-reminder>\\n\"}"));
    CHECK(!has(&log, "{\"type\":\"reminder\""));
    CHECK(has(&rep, "0 reminders lifted"));
    replays(&log, 2);
    quire_bytes_free(&log);
    quire_bytes_free(&rep);
}

static void test_invalid_lines(void) {
    const char *in = "// a comment added by the publisher\n"
                     "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"
                     "42\n";
    quire_bytes log = {0}, rep = {0};
    quire_error e;
    CHECK_INT(imp("claude-code", 0, in, &log, &rep, &e), QUIRE_E_JSON);
    CHECK_INT(e.line, 1);
    CHECK_INT(e.column, 1);
    CHECK_STR(e.message, "line 1 is not a Claude Code log entry: unexpected '/', expected a value "
                         "(use --skip-invalid to skip such lines)");
    CHECK(log.data == NULL);
    CHECK_INT(imp("claude-code", QUIRE_IMPORT_SKIP_INVALID, in, &log, &rep, &e), QUIRE_OK);
    CHECK(has(&rep, "1: skipped: not a JSON object: unexpected '/', expected a value\n"));
    CHECK(has(&rep, "3: skipped: not a JSON object: expected a JSON object, got number\n"));
    CHECK(has(&rep, "2 invalid lines skipped"));
    CHECK(has(&log, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"id\":\"u1\"},\"_meta\":{\"line\":2}}\n"));
    quire_bytes_free(&log);
    quire_bytes_free(&rep);
    CHECK_INT(imp("codex", 0, "{\"type\":\"session_meta\",\"payload\":{}}\n{oops\n", &log, &rep, &e), QUIRE_E_JSON);
    CHECK_INT(e.line, 2);
    CHECK_INT(e.column, 2);
    CHECK_INT(imp("cursor", 0, "", &log, &rep, &e), QUIRE_E_INVALID);
    CHECK_STR(e.message, "unknown import format \"cursor\" (expected claude-code, codex, gemini-cli, cline or swe-agent)");
}

static const char k_cx[] =
    "{\"type\":\"session_meta\",\"payload\":{\"id\":\"C1\",\"base_instructions\":{\"text\":\"SYS\"}}}\n"
    "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5\"}}\n"
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"developer\",\"content\":[{\"type\":\"input_text\","
    "\"text\":\"D\"}]}}\n"
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
    "\"text\":\"U\"}]}}\n"
    "{\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"U\"}}\n"
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"reasoning\",\"summary\":[],\"encrypted_content\":\"E\"}}\n"
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"sh\",\"arguments\":\"{\\\"c\\\": 1}\","
    "\"call_id\":\"c1\"}}\n"
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"out\"}}\n"
    "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5-mini\"}}\n"
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
    "\"text\":\"A\"}],\"phase\":\"final_answer\"}}\n"
    "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{}}}\n"
    "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
    "\"text\":\"A2\"}]}}\n"
    "{\"type\":\"compacted\",\"payload\":{\"message\":\"SUM\"}}\n";

static void test_codex(void) {
    quire_bytes log = {0}, rep = {0};
    quire_error e;
    CHECK_INT(imp("codex", 0, k_cx, &log, &rep, &e), QUIRE_OK);
    const char *want =
        "{\"type\":\"session\",\"sessionId\":\"C1\",\"target\":{\"provider\":\"openai_responses\",\"model\":\"gpt-5\"},"
        "\"system\":\"SYS\",\"_meta\":{\"importedFrom\":\"codex\"}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"developer\",\"content\":[{\"type\":\"text\",\"text\":\"D\"}]},"
        "\"_meta\":{\"line\":3}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"U\"}]},"
        "\"_meta\":{\"line\":4}}\n"
        "{\"type\":\"render\",\"_meta\":{\"line\":6}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"opaque\",\"provider\":"
        "\"openai_responses\",\"item\":{\"type\":\"reasoning\",\"summary\":[],\"encrypted_content\":\"E\"}},"
        "{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"sh\",\"input\":{\"c\": 1}}]},\"_meta\":{\"line\":6}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c1\","
        "\"content\":\"out\"}]},\"_meta\":{\"line\":8}}\n"
        "{\"type\":\"render\",\"target\":{\"provider\":\"openai_responses\",\"model\":\"gpt-5-mini\"},\"_meta\":{\"line\":10}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"A\","
        "\"providerOptions\":{\"openai_responses\":{\"phase\":\"final_answer\"}}}]},\"_meta\":{\"line\":10}}\n"
        "{\"type\":\"render\",\"target\":{\"provider\":\"openai_responses\",\"model\":\"gpt-5-mini\"},\"_meta\":{\"line\":12}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"A2\"}]},"
        "\"_meta\":{\"line\":12}}\n"
        "{\"type\":\"compact\",\"policy\":{\"keepFirstTurns\":0,\"keepLastTurns\":0},\"summary\":\"SUM\"}\n";
    CHECK_STR(log.data, want);
    CHECK(has(&rep, "summary: 13 lines, 6 messages, 3 renders, 1 compactions"));
    replays(&log, 3);
    quire_bytes_free(&log);
    quire_bytes_free(&rep);
}

/* gemini-cli, cline, swe-agent: whole JSON documents. */
static void test_foreign(void) {
    quire_bytes log = {0}, rep = {0};
    quire_error e;
    static const char gem[] =
        "{\"sessionId\":\"G\",\"messages\":[\n"
        "{\"id\":\"u\",\"type\":\"user\",\"content\":\"hi\"},\n"
        "{\"id\":\"i\",\"type\":\"info\",\"content\":\"note\"},\n"
        "{\"id\":\"g\",\"type\":\"gemini\",\"content\":\"\",\"model\":\"m1\",\"thoughts\":[{\"subject\":\"s\",\"description\":\"d\"}],"
        "\"toolCalls\":[{\"id\":\"t\",\"name\":\"ls\",\"args\":{\"p\":1},\"result\":[{\"functionResponse\":{\"id\":\"t\",\"name\":\"ls\","
        "\"response\":{\"output\":\"a\"}}}],\"status\":\"success\"}]},\n"
        "{\"id\":\"g2\",\"type\":\"gemini\",\"content\":\"done\",\"model\":\"m2\"}]}\n";
    CHECK_INT(imp("gemini-cli", 0, gem, &log, &rep, &e), QUIRE_OK);
    CHECK_STR(log.data,
              "{\"type\":\"session\",\"sessionId\":\"G\",\"target\":{\"provider\":\"gemini\",\"model\":\"m1\"},"
              "\"_meta\":{\"importedFrom\":\"gemini-cli\"}}\n"
              "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"id\":\"u\"},"
              "\"_meta\":{\"line\":2}}\n"
              "{\"type\":\"render\",\"_meta\":{\"line\":4}}\n"
              "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t\",\"name\":\"ls\","
              "\"input\":{\"p\":1}}],\"id\":\"g\"},\"_meta\":{\"line\":4}}\n"
              "{\"type\":\"message\",\"message\":{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"t\","
              "\"content\":\"a\"}],\"id\":\"g/results\"},\"_meta\":{\"line\":4}}\n"
              "{\"type\":\"render\",\"target\":{\"provider\":\"gemini\",\"model\":\"m2\"},\"_meta\":{\"line\":5}}\n"
              "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"id\":\"g2\"},"
              "\"_meta\":{\"line\":5}}\n");
    CHECK(has(&rep, "3: note: skipped /messages/1: a Gemini CLI info notice"));
    CHECK(has(&rep, "note: dropped 1 thought summaries"));
    replays(&log, 2);
    quire_bytes_free(&log);
    quire_bytes_free(&rep);

    /* swe-agent: repeated ids renamed "<id>-<k>" (an original "a-2" then
     * becomes "a-2-2"); parallel calls with one id pair in order */
    static const char swe[] =
        "{\"history\":[{\"role\":\"system\",\"content\":\"S\",\"agent\":\"main\"},{\"role\":\"user\",\"content\":\"U\",\"agent\":\"main\"},"
        "{\"role\":\"assistant\",\"content\":\"\",\"agent\":\"main\",\"tool_calls\":[{\"id\":\"a\",\"type\":\"function\","
        "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"g\","
        "\"arguments\":\"{\\\"x\\\":1}\"}}]},"
        "{\"role\":\"tool\",\"content\":\"r1\",\"tool_call_ids\":[\"a\"],\"agent\":\"main\"},"
        "{\"role\":\"tool\",\"content\":\"r2\",\"tool_call_ids\":[\"a\"],\"agent\":\"main\"},"
        "{\"role\":\"user\",\"content\":\"other\",\"agent\":\"reviewer\"},"
        "{\"role\":\"assistant\",\"content\":\"B\",\"agent\":\"main\",\"tool_calls\":[{\"id\":\"a-2\",\"type\":\"function\","
        "\"function\":{\"name\":\"f\",\"arguments\":\"not json\"}}]}]}";
    CHECK_INT(imp("swe-agent", 0, swe, &log, &rep, &e), QUIRE_OK);
    CHECK(has(&log, "\"system\":\"S\""));
    CHECK(has(&log, "{\"type\":\"toolCall\",\"id\":\"a\",\"name\":\"f\",\"input\":{}},{\"type\":\"toolCall\",\"id\":\"a-2\","
                    "\"name\":\"g\",\"input\":{\"x\":1}}],\"meta\":{\"renamedToolCallIds\":{\"a-2\":\"a\"}}}"));
    CHECK(has(&log, "{\"type\":\"toolResult\",\"toolCallId\":\"a\",\"content\":\"r1\"}]}"));
    CHECK(has(&log, "{\"type\":\"toolResult\",\"toolCallId\":\"a-2\",\"content\":\"r2\"}],\"meta\":{\"renamedToolCallIds\":{\"a-2\":\"a\"}}}"));
    CHECK(has(&log, "{\"type\":\"toolCall\",\"id\":\"a-2-2\",\"name\":\"f\",\"input\":\"not json\"}],\"meta\":{\"renamedToolCallIds\":{\"a-2-2\":\"a-2\"}}}"));
    CHECK(has(&rep, "note: skipped /history/5: an entry of another agent (\"reviewer\")"));
    CHECK(has(&rep, "summary: 7 history entries, 5 messages, 2 renders"));
    replays(&log, 2);
    quire_bytes_free(&log);
    quire_bytes_free(&rep);

    /* cline: task_metadata.json (io.metadata) names the model */
    {
        quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
        static const char meta[] = "{\"model_usage\":[{\"ts\":1,\"model_id\":\"m1\"},{\"ts\":2,\"model_id\":\"m2\"}]}";
        static const char hist[] = "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"A\"}]";
        io.format = "cline";
        io.metadata = meta;
        io.metadata_len = sizeof meta - 1;
        CHECK_INT(quire_import(hist, sizeof hist - 1, &io, NULL, &log, &rep, &e), QUIRE_OK);
        CHECK(has(&log, "{\"type\":\"session\",\"target\":{\"provider\":\"anthropic\",\"model\":\"m1\"}"));
        CHECK(has(&rep, "note: task_metadata.json: the task used more than one model; the log names the first"));
        replays(&log, 1);
        quire_bytes_free(&log);
        quire_bytes_free(&rep);
        /* a caller built before metadata existed (a smaller size) is read up to its size */
        io.size = offsetof(quire_import_options, metadata);
        CHECK_INT(quire_import(hist, sizeof hist - 1, &io, NULL, &log, &rep, &e), QUIRE_OK);
        CHECK(has(&log, "{\"type\":\"session\",\"target\":{\"provider\":\"anthropic\"},"));
        quire_bytes_free(&log);
        quire_bytes_free(&rep);
    }

    /* errors: one line, line:col, pointer, the format named */
    CHECK_INT(imp("cline", 0, "[{\"role\":\"user\",\"content\":\"hi\"},\n 3]", &log, &rep, &e), QUIRE_E_INVALID);
    CHECK_INT(e.line, 2);
    CHECK_INT(e.column, 2);
    CHECK_STR(e.pointer, "/1");
    CHECK_STR(e.message, "not a Cline api_conversation_history.json message: expected an object");
    CHECK(log.data == NULL);
    CHECK_INT(imp("swe-agent", 0, "{\"trajectory\":[]}", &log, &rep, &e), QUIRE_E_INVALID);
    CHECK_STR(e.message, "not a SWE-agent trajectory: no \"history\" array");
    CHECK_INT(imp("gemini-cli", 0, "{\"messages\":[}", &log, &rep, &e), QUIRE_E_JSON);
    CHECK_INT(e.line, 1);
    CHECK_INT(e.column, 14);
    CHECK(strncmp(e.message, "not a Gemini CLI chat recording: ", 33) == 0);
    CHECK_INT(imp("gemini-cli", 0, "{\"messages\":[{\"type\":7}]}", &log, &rep, &e), QUIRE_E_INVALID);
    CHECK_STR(e.pointer, "/messages/0/type");
}

int main(void) {
    test_claude_code();
    test_invalid_lines();
    test_codex();
    test_foreign();
    TEST_MAIN_END();
}
