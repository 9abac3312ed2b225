#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire report [--provider P] [--model M] [--from FORMAT] [--lift-reminders]\n"
    "                    [--skip-invalid] [--against OLD.jsonl] [--no-bodies] [--title T] [-o FILE] LOG|-\n"
    "\n"
    "Replays a quire.session/1 log (or, with --from, a Claude Code / Codex / Gemini CLI / Cline /\n"
    "SWE-agent log imported on the fly) and writes one self-contained HTML page: the turn\n"
    "timeline (request bytes, estimated tokens, the share repeating the previous request's\n"
    "prefix, compactions), reminder lanes (emitted, deduped, expired, cleared, compacted out,\n"
    "dropped: origin, slot and reason), and per turn the events, the request body and its diff\n"
    "against the previous turn (docs/replay.md).\n"
    "\n"
    "  --provider P      render every turn for provider P (as `quire replay --provider`)\n"
    "  --model M         render every turn for model M\n"
    "  --from F          LOG is a claude-code, codex, gemini-cli, cline or swe-agent\n"
    "                    log: import it first\n"
    "  --lift-reminders  with --from: lift inline <system-reminder> text into reminder events\n"
    "  --skip-invalid    with --from: skip lines that are not JSON objects\n"
    "  --against F       a previous `quire replay` output (JSONL, bodies or --digest lines):\n"
    "                    show the first turn that differs and the bytes that differ there\n"
    "  --no-bodies       leave the request bodies out of the page (figures and events stay)\n"
    "  --title T         the page title (default: the LOG's file name)\n"
    "  -o FILE           write the page to FILE (default: standard output)\n";

void cli_import_report(const char *file, const quire_bytes *rep, bool verbose);
bool cli_import_format_ok(const char *from);
bool cli_import_line_format(const char *from);
bool cli_import_sidecar(const char *from, const char *path, cli_file *meta);

int cmd_report(int argc, char **argv) {
    const char *provider = NULL, *model = NULL, *from = NULL, *against = NULL, *title = NULL, *out = NULL;
    bool lift = false, skip = false, no_bodies = false;
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"from", CLI_STRING, &from, NULL},         {"lift-reminders", CLI_FLAG, &lift, NULL},
        {"skip-invalid", CLI_FLAG, &skip, NULL},   {"against", CLI_STRING, &against, NULL},
        {"no-bodies", CLI_FLAG, &no_bodies, NULL}, {"title", CLI_STRING, &title, NULL},
        {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("report", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (!npos) return cli_usage("report", "a session LOG is required");
    if (from && !cli_import_format_ok(from))
        return cli_usage("report", "--from takes claude-code, codex, gemini-cli, cline or swe-agent, not '%s'", from);
    if ((lift || skip) && !from) return cli_usage("report", "--lift-reminders and --skip-invalid need --from");
    if ((lift || skip) && !cli_import_line_format(from))
        return cli_usage("report", "--lift-reminders and --skip-invalid apply to claude-code and codex logs");
    if (provider && !*provider) return cli_usage("report", "--provider needs a name");

    cli_file f, a;
    memset(&a, 0, sizeof a);
    if (!cli_read(pos[0], &f)) return 1;
    if (against && !cli_read(against, &a)) { cli_file_free(&f); return 1; }
    quire_bytes imported = {0};
    const char *log = f.data;
    size_t len = f.len;
    int rc = 1;
    if (from) {
        quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
        io.format = from;
        io.flags = (lift ? QUIRE_IMPORT_LIFT_REMINDERS : 0u) | (skip ? QUIRE_IMPORT_SKIP_INVALID : 0u);
        cli_file meta;
        if (!cli_import_sidecar(from, pos[0], &meta)) goto done;
        io.metadata = meta.data;
        io.metadata_len = meta.len;
        quire_bytes rep = {0};
        quire_error e;
        quire_status ist = quire_import(f.data, f.len, &io, NULL, &imported, &rep, &e);
        cli_file_free(&meta);
        if (ist) {
            cli_report(f.name, &e);
            goto done;
        }
        cli_import_report(f.name, &rep, false);
        quire_bytes_free(&rep);
        log = imported.data;
        len = imported.len;
    }
    {
        const char *base = strrchr(f.name, '/');
        quire_report_options ro = QUIRE_REPORT_OPTIONS_INIT;
        ro.provider = provider;
        ro.model = model;
        ro.title = title ? title : (base ? base + 1 : f.name);
        ro.no_bodies = no_bodies;
        if (against) {
            ro.against = a.data;
            ro.against_len = a.len;
            const char *ab = strrchr(a.name, '/');
            ro.against_name = ab ? ab + 1 : a.name;
        }
        quire_bytes html = {0};
        quire_error e;
        quire_options o = QUIRE_OPTIONS_INIT;
        o.flags = QUIRE_PARSE_BORROW;
        if (quire_report(log, len, &ro, &o, &html, &e)) {
            cli_report(strcmp(e.field, "against") == 0 ? a.name : f.name, &e);
            goto done;
        }
        cli_outputs *outs = cli_out_new();
        cli_out_add(outs, out, &html);
        rc = cli_out_commit(outs);
    }
done:
    quire_bytes_free(&imported);
    if (against) cli_file_free(&a);
    cli_file_free(&f);
    return rc;
}
