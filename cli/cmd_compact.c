#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire compact [--budget N] [--keep-last N] [--keep-first N] [--keep-last-steps N]\n"
    "                     [--summary F [--span ID]] [--plan] [--dry-run] [--policy F] [--state F]\n"
    "                     [--state-out F] [--events F] [--bytes-per-token N] [--pretty] [-o FILE] [FILE|-]\n"
    "\n"
    "Compacts a quire.transcript/1 transcript to a token budget (docs/compaction.md), cheapest stage\n"
    "first: old tool outputs to head/tail excerpts, the oldest steps and turns to one summary, oversized\n"
    "messages to head/tail. Writes the compacted transcript; a transcript already under budget comes\n"
    "back byte for byte.\n"
    "\n"
    "  --budget N       budgetTokens: the estimate to get under\n"
    "  --keep-last N    keepLastTurns: the user messages of the last N turns are never summarised\n"
    "                   (default 4)\n"
    "  --keep-first N   keepFirstTurns: the user messages of the first N turns are never summarised\n"
    "                   (default 1: the task)\n"
    "  --keep-last-steps N  keepLastSteps: the newest N steps stay verbatim (default 8)\n"
    "  --policy F       a JSON policy object (budgetTokens, keepLastSteps, keepLastTurns, keepFirstTurns,\n"
    "                   toolOutputExcerptBytes, summaryTokens, stages); flags override it\n"
    "  --summary F      a model-written summary (UTF-8 text) applied to the span the policy selects,\n"
    "                   even under budget; without it a deterministic digest stands in when needed\n"
    "  --span ID        with --summary: apply it to exactly the span the plan named (span.id), even\n"
    "                   if messages were appended since; an error if that span changed\n"
    "  --plan           print the plan: what would happen, the span to summarise and a ready\n"
    "                   summarisation transcript (render it for any provider)\n"
    "  --dry-run        print only the report\n"
    "  --state F        the reminder state (quire.state/1); --state-out F writes the next one\n"
    "  --events F       write lifecycle events (JSONL) to F\n"
    "  --bytes-per-token N  count text as ceil(bytes / N) tokens instead of quire's estimator\n"
    "                   (hosts that budget in bytes; tests independent of the estimator)\n"
    "  --pretty         two-space indented output\n"
    "  -o FILE          write the output to FILE (atomically) instead of stdout\n";

static bool read_opt(const char *path, cli_file *f) {
    if (!path) { memset(f, 0, sizeof *f); return true; }
    return cli_read(path, f);
}

int cmd_compact(int argc, char **argv) {
    const char *out = NULL, *summary_path = NULL, *policy_path = NULL, *state_path = NULL, *state_out = NULL,
               *events_path = NULL;
    bool plan = false, dry = false, pretty = false, has_budget = false, has_last = false, has_first = false;
    unsigned long long budget = 0, keep_last = 0, keep_first = 0, bpt = 0, keep_steps = 0;
    bool has_bpt = false, has_steps = false;
    const char *span = NULL;
    const cli_opt opts[] = {
        {"budget", CLI_UINT, &budget, &has_budget},   {"keep-last", CLI_UINT, &keep_last, &has_last},
        {"keep-first", CLI_UINT, &keep_first, &has_first}, {"summary", CLI_STRING, &summary_path, NULL},
        {"plan", CLI_FLAG, &plan, NULL},               {"dry-run", CLI_FLAG, &dry, NULL},
        {"policy", CLI_STRING, &policy_path, NULL},    {"state", CLI_STRING, &state_path, NULL},
        {"state-out", CLI_STRING, &state_out, NULL},   {"events", CLI_STRING, &events_path, NULL},
        {"pretty", CLI_FLAG, &pretty, NULL},           {"o", CLI_STRING, &out, NULL},
        {"bytes-per-token", CLI_UINT, &bpt, &has_bpt},
        {"keep-last-steps", CLI_UINT, &keep_steps, &has_steps},
        {"span", CLI_STRING, &span, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("compact", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (has_budget && (budget == 0 || budget > (1ull << 53))) return cli_usage("compact", "--budget must be from 1 to 2^53");
    if ((has_last && keep_last > 0xFFFFFFFFull) || (has_first && keep_first > 0xFFFFFFFFull) ||
        (has_steps && keep_steps > 0xFFFFFFFFull))
        return cli_usage("compact", "--keep-last, --keep-first and --keep-last-steps must fit in 32 bits");
    if (span && !summary_path) return cli_usage("compact", "--span names the span a --summary replaces: give --summary too");
    if (has_bpt && (bpt == 0 || bpt > 1024)) return cli_usage("compact", "--bytes-per-token must be from 1 to 1024");
    if (plan && dry) return cli_usage("compact", "--plan and --dry-run cannot be combined");
    if (plan && (summary_path || state_out || events_path))
        return cli_usage("compact", "--plan prints the plan only; it takes no --summary, --state-out or --events");
    if (dry && (state_out || events_path))
        return cli_usage("compact", "--dry-run prints only the report; it takes no --state-out or --events");

    quire_compact_policy pol = QUIRE_COMPACT_POLICY_INIT;
    quire_error e;
    int rc = 1;
    cli_file f = {0}, pf = {0}, sf = {0}, stf = {0};
    quire_transcript *t = NULL;
    quire_state *state = NULL;
    quire_compact_result res;
    memset(&res, 0, sizeof res);
    cli_outputs *outs = NULL;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    size_t per = (size_t)bpt;

    if (!read_opt(policy_path, &pf)) goto done;
    if (policy_path && quire_compact_policy_parse(pf.data, pf.len, &pol, &e)) { cli_report(pf.name, &e); goto done; }
    if (has_budget) pol.budget_tokens = budget;
    if (has_last) pol.keep_last_turns = (uint32_t)keep_last;
    if (has_first) pol.keep_first_turns = (uint32_t)keep_first;
    if (has_steps) pol.keep_last_steps = (uint32_t)keep_steps;
    if (has_bpt) { pol.count_tokens = cli_count_by_bytes; pol.count_tokens_ud = &per; }
    if (!read_opt(summary_path, &sf)) goto done;
    if (!read_opt(state_path, &stf)) goto done;
    if (!cli_read(npos ? pos[0] : "-", &f)) goto done;

    if (quire_transcript_parse(f.data, f.len, &o, &t, &e)) { cli_report(f.name, &e); goto done; }
    if (state_path && quire_state_parse(stf.data, stf.len, &o, &state, &e)) { cli_report(stf.name, &e); goto done; }

    outs = cli_out_new();
    if (plan) {
        quire_bytes pb;
        if (quire_compact_plan(t, &pol, pretty, &o, &pb, &e)) { cli_report(f.name, &e); goto done; }
        cli_out_add_line(outs, out, &pb);
    } else {
        if (quire_compact_apply(t, state, &pol, summary_path ? (sf.data ? sf.data : "") : NULL, sf.len, span, &o, &res,
                                &e)) {
            cli_report(summary_path && e.code == QUIRE_E_INVALID ? sf.name : f.name, &e);
            goto done;
        }
        if (dry) {
            quire_bytes rb;
            if (pretty) {
                if (quire_json_format(res.report.data, res.report.len, 1, &o, &rb, &e)) { cli_report(NULL, &e); goto done; }
                cli_out_add_line(outs, out, &rb);
            } else {
                cli_out_add_line(outs, out, &res.report);
            }
        } else {
            if (!res.changed && !pretty) {
                cli_out_add_copy(outs, out, f.data, f.len); /* under budget: byte for byte */
            } else {
                quire_bytes tb;
                if (quire_transcript_write(res.transcript, pretty, &tb, &e)) { cli_report(NULL, &e); goto done; }
                cli_out_add_line(outs, out, &tb);
            }
            if (state_out) {
                quire_bytes sb;
                if (quire_state_write(res.state, pretty, &sb, &e)) { cli_report(NULL, &e); goto done; }
                cli_out_add_line(outs, state_out, &sb);
            }
            if (events_path) cli_out_add(outs, events_path, &res.events);
        }
    }
    rc = cli_out_commit(outs);
    outs = NULL;
done:
    cli_out_discard(outs);
    quire_compact_result_free(&res);
    quire_state_free(state);
    quire_transcript_free(t);
    cli_file_free(&f);
    cli_file_free(&pf);
    cli_file_free(&sf);
    cli_file_free(&stf);
    return rc;
}
