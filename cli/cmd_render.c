#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

static const char k_help[] =
    "usage: quire render [--provider P] [--model M] [--from DIALECT] [--state F] [--remind F]\n"
    "                    [--state-out F] [--events F] [--caps F] [--policy F] [--max-tokens N]\n"
    "                    [--lossy] [--pretty] [--explain] [-o FILE] [FILE|-]\n"
    "\n"
    "Renders a quire.transcript/1 transcript into the request body for a provider.\n"
    "\n"
    "  --provider P     target provider (default anthropic)\n"
    "  --model M        target model (default: the provider's default)\n"
    "  --max-tokens N   max output tokens (default: 4096 where the dialect requires one, else omitted)\n"
    "  --pretty         two-space indented output\n"
    "  --caps FILE      capability override rows, consulted before the built-in table\n"
    "  --policy FILE    render policy: {\"systemSlot\":\"allow\"|\"demote\", \"placement\":\"tail\"|\"append_only\",\n"
    "                   \"cacheBreakpoints\":\"managed\"|\"input\", \"lossy\": bool}\n"
    "  --from DIALECT   input is a request body: anthropic, openai_chat, openai_responses, gemini\n"
    "  --lossy          content the target cannot express becomes an event, not an error\n"
    "  --explain        print the resolved capability row and the render events to stderr\n"
    CLI_REMIND_HELP
    "  -o FILE          write the request to FILE (atomically) instead of stdout\n";

int cmd_render(int argc, char **argv) {
    const char *provider = "anthropic", *model = NULL, *out = NULL;
    bool pretty = false;
    unsigned long long max_tokens = 0;
    const char *caps_file = NULL, *policy_file = NULL, *from = NULL; /* render module */
    bool lossy = false, explain = false;
    cli_remind rm = {NULL, NULL, NULL, NULL}; /* reminders module: --state --remind --state-out --events */
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"pretty", CLI_FLAG, &pretty, NULL}, {"max-tokens", CLI_UINT, &max_tokens, NULL},
        {"o", CLI_STRING, &out, NULL},
        {"caps", CLI_STRING, &caps_file, NULL}, {"policy", CLI_STRING, &policy_file, NULL},
        {"from", CLI_STRING, &from, NULL}, {"lossy", CLI_FLAG, &lossy, NULL}, {"explain", CLI_FLAG, &explain, NULL},
        CLI_REMIND_OPTS(&rm),
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("render", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (max_tokens > 0xFFFFFFFFu) return cli_usage("render", "--max-tokens is too large");
    quire_state *state = NULL;
    quire_bytes pre; /* events of --remind */
    if (cli_remind_load(&rm, NULL, &state, &pre, NULL)) return 1;
    cli_file f;
    if (!cli_read(npos ? pos[0] : "-", &f)) { quire_state_free(state); quire_bytes_free(&pre); return 1; }
    quire_error e;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_transcript *t = NULL;
    if (from ? quire_transcript_parse_dialect(from, f.data, f.len, &o, &t, &e)
             : quire_transcript_parse(f.data, f.len, &o, &t, &e)) {
        cli_report(f.name, &e); cli_file_free(&f); quire_state_free(state); quire_bytes_free(&pre); return 1;
    }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    ro.pretty = pretty;
    ro.max_tokens = (uint32_t)max_tokens;
    quire_caps *caps = NULL;
    if (caps_file || policy_file) { /* render module: capability overrides and policy */
        cli_file cf = {0};
        bool ok = true;
        if (caps_file && (ok = cli_read(caps_file, &cf)) && quire_caps_parse(cf.data, cf.len, NULL, &caps, &e)) {
            cli_report(cf.name, &e); ok = false;
        }
        cli_file_free(&cf);
        if (ok && policy_file && (ok = cli_read(policy_file, &cf)) && quire_render_policy_apply(cf.data, cf.len, &ro, &e)) {
            cli_report(cf.name, &e); ok = false;
        }
        cli_file_free(&cf);
        if (!ok) {
            quire_caps_free(caps); quire_transcript_free(t); cli_file_free(&f);
            quire_state_free(state); quire_bytes_free(&pre);
            return 1;
        }
    }
    ro.caps = caps;
    if (lossy) ro.lossy = 1;
    quire_render_result res;
    quire_status st = quire_render(t, state, &ro, &o, &res, &e);
    quire_transcript_free(t);
    quire_state_free(state);
    if (explain) { /* render module: the resolved row and every decision, on stderr */
        quire_bytes row;
        quire_error e2;
        if (quire_caps_resolve(caps, provider, model, 0, &row, &e2) == QUIRE_OK) {
            fprintf(stderr, "quire: caps %s\n", row.data);
            quire_bytes_free(&row);
        }
        if (!st && res.events.len) fprintf(stderr, "%s", res.events.data);
    }
    quire_caps_free(caps);
    if (st) { cli_report(f.name, &e); cli_file_free(&f); quire_bytes_free(&pre); return 1; }
    cli_file_free(&f);
    cli_outputs *outs = cli_out_new();
    cli_out_add_line(outs, out, &res.request);
    if (!cli_remind_outputs(&rm, outs, res.state, &pre, &res.events)) {
        quire_render_result_free(&res); cli_out_discard(outs); return 1;
    }
    quire_render_result_free(&res);
    return cli_out_commit(outs);
}
