#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire estimate [--provider P] [--model M] [--state F] [--remind F] [--caps F] [--policy F]\n"
    "                      [--from DIALECT] [--log] [--bytes-per-token N] [--pretty] [-o FILE] [FILE|-]\n"
    "\n"
    "Estimates the input tokens of the request that 'quire render' would send for a target: the\n"
    "system prompt, the tool definitions, the messages with the provider family's per-message and\n"
    "per-block overheads, the reminders rendered this turn, and images and documents priced by the\n"
    "family's rule (docs/compaction.md, \"Request estimates\"). Prints one JSON object:\n"
    "{\"total\",\"family\",\"system\",\"tools\",\"messages\",\"reminders\",\"media\",\"counts\":{...}}.\n"
    "\n"
    "  --provider P     target provider (default anthropic)\n"
    "  --model M        target model (default: the provider's default)\n"
    "  --state F        reminder state (quire.state/1) whose reminders would be rendered (default: none)\n"
    "  --remind F       session-log lines (mcp, acp, reminder, clear) applied to the state first\n"
    "  --caps FILE      capability override rows, consulted before the built-in table\n"
    "  --policy FILE    render policy (as for render): where reminders go\n"
    "  --from DIALECT   input is a request body: anthropic, openai_chat, openai_responses, gemini\n"
    "  --log            input is a quire.session/1 log: replay it and print one estimate per rendered\n"
    "                   request (JSONL, with \"line\", \"turn\", \"provider\", \"model\", \"requestBytes\");\n"
    "                   --provider/--model then override every render's target\n"
    "  --bytes-per-token N  count text as ceil(bytes / N) tokens instead of quire's estimator\n"
    "  --pretty         two-space indented output\n"
    "  -o FILE          write the output to FILE (atomically) instead of stdout\n";

int cmd_estimate(int argc, char **argv) {
    const char *provider = NULL, *model = NULL, *out = NULL, *caps_file = NULL, *policy_file = NULL, *from = NULL;
    bool pretty = false, log = false, has_bpt = false;
    unsigned long long bpt = 0;
    cli_remind rm = {NULL, NULL, NULL, NULL};
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"state", CLI_STRING, &rm.state_path, NULL}, {"remind", CLI_STRING, &rm.remind_path, NULL},
        {"caps", CLI_STRING, &caps_file, NULL}, {"policy", CLI_STRING, &policy_file, NULL},
        {"from", CLI_STRING, &from, NULL}, {"log", CLI_FLAG, &log, NULL},
        {"bytes-per-token", CLI_UINT, &bpt, &has_bpt},
        {"pretty", CLI_FLAG, &pretty, NULL}, {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("estimate", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (has_bpt && (bpt == 0 || bpt > 1000000)) return cli_usage("estimate", "--bytes-per-token must be from 1 to 1000000");
    if (log && (from || rm.state_path || rm.remind_path))
        return cli_usage("estimate", "--log takes no --from, --state or --remind (the log carries them)");
    size_t per = (size_t)bpt;
    quire_error e;
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider ? provider : "anthropic";
    ro.model = model;
    quire_caps *caps;
    if (!cli_load_caps_policy(caps_file, policy_file, &ro, &caps)) return 1;
    ro.caps = caps;
    quire_estimate_options eo = QUIRE_ESTIMATE_OPTIONS_INIT;
    eo.render = &ro;
    if (has_bpt) { eo.count_tokens = cli_count_by_bytes; eo.count_tokens_ud = &per; }
    quire_state *state = NULL;
    quire_bytes pre = {0};
    if (!log && cli_remind_load(&rm, NULL, &state, &pre, NULL)) { quire_caps_free(caps); return 1; }
    quire_bytes_free(&pre); /* the events of --remind: not this command's output */
    cli_file f;
    if (!cli_read(npos ? pos[0] : "-", &f)) { quire_state_free(state); quire_caps_free(caps); return 1; }
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_bytes res = {0};
    quire_status st;
    if (log) {
        quire_replay_options rpo = QUIRE_REPLAY_OPTIONS_INIT;
        rpo.provider = provider;
        rpo.model = model;
        rpo.render = &ro;
        st = quire_estimate_log(f.data, f.len, &rpo, &eo, &o, &res, &e);
    } else {
        quire_transcript *t = NULL;
        st = from ? quire_transcript_parse_dialect(from, f.data, f.len, &o, &t, &e)
                  : quire_transcript_parse(f.data, f.len, &o, &t, &e);
        if (!st) {
            quire_estimate est;
            st = quire_estimate_request(t, state, &eo, &o, &est, NULL, &e);
            if (!st) st = quire_estimate_write(&est, pretty, &res, &e);
        }
        quire_transcript_free(t);
    }
    quire_state_free(state);
    quire_caps_free(caps);
    if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
    cli_file_free(&f);
    cli_outputs *outs = cli_out_new();
    if (log) cli_out_add(outs, out, &res);
    else cli_out_add_line(outs, out, &res);
    return cli_out_commit(outs);
}
