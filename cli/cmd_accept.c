#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire accept --provider P [--model M] [--stream] [--usage F] [--events F]\n"
    "                    [--caps F] [--tools F] [--chunks N[,N...]] [--pretty] [-o FILE]\n"
    "                    [RESPONSE|-]\n"
    "\n"
    "Decodes a provider's response (a JSON body, or with --stream the SSE or JSON-lines\n"
    "stream) into the assistant message to append to the transcript (docs/responses.md).\n"
    "\n"
    "  --provider P     anthropic, openai, openai_responses, gemini, bedrock, mistral,\n"
    "                   ollama, deepseek or openai_compatible\n"
    "  --model M        model name (default: the provider's default); picks the dialect\n"
    "  --stream         the input is a stream\n"
    "  --usage F        write the response info to F: stop reason (normalised and the\n"
    "                   provider's), usage (normalised and the provider's), id, model\n"
    "  --events F       with --stream: write the delta events (JSONL) to F\n"
    "  --chunks N,...   with --stream: feed the input in pieces of these sizes (cycled;\n"
    "                   default: whole); the result must not depend on it\n"
    "  --caps FILE      capability override rows\n"
    "  --tools FILE     the request's transcript (or its tools array): a call naming a tool\n"
    "                   by the name the dialect sent it under (every dialect but Ollama maps\n"
    "                   names outside its rule, docs/providers.md) gets the tool's own name back\n"
    "  --pretty         two-space indented output\n"
    "  -o FILE          write the message to FILE (atomically) instead of stdout\n";

/* Parses "N[,N...]" into sizes (each >= 1). */
static int parse_chunks(const char *s, size_t **out, size_t *n) {
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    size_t *v = calloc(cap, sizeof *v);
    if (!v) return 1;
    size_t k = 0;
    const char *p = s;
    while (*p) {
        char *end;
        unsigned long long x = strtoull(p, &end, 10);
        if (end == p || x == 0 || (*end && *end != ',')) { free(v); return 2; }
        v[k++] = (size_t)x;
        p = *end ? end + 1 : end;
    }
    if (!k) { free(v); return 2; }
    *out = v;
    *n = k;
    return 0;
}

static void append(quire_bytes *acc, quire_bytes *more) {
    if (!more->len) { quire_bytes_free(more); return; }
    char *nd = realloc(acc->data == NULL ? NULL : acc->data, acc->len + more->len + 1);
    if (!nd) { quire_bytes_free(more); return; }
    memcpy(nd + acc->len, more->data, more->len);
    acc->len += more->len;
    nd[acc->len] = '\0';
    acc->data = nd;
    quire_bytes_free(more);
}

int cmd_accept(int argc, char **argv) {
    const char *provider = NULL, *model = NULL, *out = NULL, *usage_file = NULL, *events_file = NULL;
    const char *caps_file = NULL, *chunks = NULL, *tools_file = NULL;
    bool stream = false, pretty = false;
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"stream", CLI_FLAG, &stream, NULL}, {"usage", CLI_STRING, &usage_file, NULL},
        {"events", CLI_STRING, &events_file, NULL}, {"caps", CLI_STRING, &caps_file, NULL},
        {"chunks", CLI_STRING, &chunks, NULL}, {"pretty", CLI_FLAG, &pretty, NULL},
        {"o", CLI_STRING, &out, NULL}, {"tools", CLI_STRING, &tools_file, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("accept", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (!provider) return cli_usage("accept", "--provider is required");
    if (!stream && (events_file || chunks)) return cli_usage("accept", "--events and --chunks need --stream");
    size_t *sizes = NULL, nsizes = 0;
    if (chunks && (r = parse_chunks(chunks, &sizes, &nsizes)))
        return r == 1 ? cli_fail("out of memory") : cli_usage("accept", "--chunks takes sizes >= 1 separated by commas");
    quire_error e;
    quire_caps *caps = NULL;
    if (caps_file) {
        cli_file cf;
        if (!cli_read(caps_file, &cf)) { free(sizes); return 1; }
        quire_status st = quire_caps_parse(cf.data, cf.len, NULL, &caps, &e);
        if (st) { cli_report(cf.name, &e); cli_file_free(&cf); free(sizes); return 1; }
        cli_file_free(&cf);
    }
    cli_file tf = {0};
    if (tools_file && !cli_read(tools_file, &tf)) { quire_caps_free(caps); free(sizes); return 1; }
    cli_file f;
    if (!cli_read(npos ? pos[0] : "-", &f)) { cli_file_free(&tf); quire_caps_free(caps); free(sizes); return 1; }
    quire_response_options ro = QUIRE_RESPONSE_OPTIONS_INIT;
    ro.caps = caps;
    ro.pretty = pretty;
    if (tools_file) { ro.tools = tf.data; ro.tools_len = tf.len; }
    quire_response res;
    quire_bytes evs = {NULL, 0, NULL};
    quire_status st;
    if (!stream) {
        st = quire_response_decode(provider, model, f.data, f.len, &ro, NULL, &res, &e);
    } else {
        quire_stream *s = NULL;
        st = quire_stream_new(provider, model, &ro, NULL, &s, &e);
        size_t off = 0, k = 0;
        while (st == QUIRE_OK && off < f.len) {
            size_t n = sizes ? sizes[k++ % nsizes] : f.len - off;
            if (n > f.len - off) n = f.len - off;
            quire_bytes more;
            st = quire_stream_feed(s, f.data + off, n, events_file ? &more : NULL, &e);
            if (st == QUIRE_OK && events_file) append(&evs, &more);
            off += n;
        }
        if (st == QUIRE_OK) {
            quire_bytes more;
            st = quire_stream_finish(s, &res, events_file ? &more : NULL, &e);
            if (st == QUIRE_OK && events_file) append(&evs, &more);
        }
        quire_stream_free(s);
    }
    free(sizes);
    quire_caps_free(caps);
    if (st) {
        /* an error in the tools file is located there */
        cli_report(tools_file && strcmp(e.field, "tools") == 0 ? tf.name : f.name, &e);
        cli_file_free(&tf);
        cli_file_free(&f);
        free(evs.data);
        return 1;
    }
    cli_file_free(&f);
    cli_file_free(&tf);
    cli_outputs *outs = cli_out_new();
    cli_out_add_line(outs, out, &res.message);
    if (usage_file) cli_out_add_line(outs, usage_file, &res.info);
    if (events_file) cli_out_add_copy(outs, events_file, evs.data ? evs.data : "", evs.len);
    free(evs.data);
    quire_response_free(&res);
    return cli_out_commit(outs);
}
