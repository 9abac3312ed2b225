#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire import --from claude-code|codex|gemini-cli|cline|swe-agent [--lift-reminders]\n"
    "                    [--skip-invalid] [--sidechains] [--provider P] [--verbose] [-o FILE] FILE|-\n"
    "\n"
    "Turns an agent's own log into a quire.session/1 log that `quire replay` reproduces request\n"
    "by request, with one render before each logged model response (docs/replay.md):\n"
    "\n"
    "  claude-code  a Claude Code session log (~/.claude/projects/.../<session>.jsonl)\n"
    "  codex        a Codex rollout (~/.codex/sessions/.../rollout-*.jsonl)\n"
    "  gemini-cli   a Gemini CLI chat recording (~/.gemini/tmp/<hash>/chats/session-*.json)\n"
    "  cline        a Cline task's api_conversation_history.json (and the task_metadata.json\n"
    "               beside it, when there is one: the model)\n"
    "  swe-agent    a SWE-agent trajectory (*.traj)\n"
    "\n"
    "  --from F          the format of FILE, one of the above (required)\n"
    "  --lift-reminders  lift inline <system-reminder> text into typed reminder events\n"
    "                    (claude-code, codex)\n"
    "  --skip-invalid    claude-code, codex: skip lines that are not JSON objects (reported on\n"
    "                    stderr) instead of failing on the first one\n"
    "  --sidechains      claude-code: import the sub-agent (isSidechain) conversation\n"
    "  --provider P      target provider written into the log (default: anthropic for\n"
    "                    claude-code and cline, openai_responses for codex, gemini for\n"
    "                    gemini-cli, openai for swe-agent)\n"
    "  --verbose         print the whole import report (dropped entries, counts) on stderr\n"
    "  -o FILE           write the log to FILE (atomically) instead of stdout\n"
    "\n"
    "What each format keeps and drops is printed as notes on stderr (entries skipped, repairs)\n"
    "and written down in docs/replay.md (\"Importers\").\n";

/* Cline keeps a task's history and its task_metadata.json in one folder: the
 * metadata beside FILE is read when it exists (it names the model). False on
 * a read error (already reported). meta is zeroed when there is none. */
bool cli_import_sidecar(const char *from, const char *path, cli_file *meta);
bool cli_import_sidecar(const char *from, const char *path, cli_file *meta) {
    static char name[4096];
    static const char base[] = "task_metadata.json";
    memset(meta, 0, sizeof *meta);
    if (strcmp(from, "cline") != 0 || strcmp(path, "-") == 0) return true;
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    if (dl + sizeof base > sizeof name) return true;
    memcpy(name, path, dl);
    memcpy(name + dl, base, sizeof base);
    if (strcmp(name, path) == 0) return true; /* FILE is the metadata itself */
    struct stat st;
    if (stat(name, &st) != 0 || !S_ISREG(st.st_mode)) return true;
    return cli_read(name, meta);
}

/* Whether --lift-reminders and --skip-invalid apply to format from (the JSONL
 * logs; the single-document formats have neither inline reminders nor lines). */
bool cli_import_line_format(const char *from);
bool cli_import_line_format(const char *from) { return strcmp(from, "claude-code") == 0 || strcmp(from, "codex") == 0; }

/* The formats --from takes (import, replay, report). */
bool cli_import_format_ok(const char *from);
bool cli_import_format_ok(const char *from) {
    static const char *const k[] = {"claude-code", "codex", "gemini-cli", "cline", "swe-agent"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(from, k[i]) == 0) return true;
    return false;
}

static bool has(const char *h, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(h + i, needle, k) == 0) return true;
    return false;
}

/* Prints the report lines about skipped input lines (all lines when verbose). */
void cli_import_report(const char *file, const quire_bytes *rep, bool verbose);
void cli_import_report(const char *file, const quire_bytes *rep, bool verbose) {
    const char *p = rep->data, *end = rep->data ? rep->data + rep->len : NULL;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        bool summary = n >= 8 && memcmp(p, "summary:", 8) == 0;
        bool invalid = !summary && has(p, n, "skipped: not a JSON object");
        bool note = !summary && has(p, n, ": note: "); /* what the user must know: always shown */
        if (verbose || invalid || note) {
            if (summary) fprintf(stderr, "quire: %s: %.*s\n", file, (int)n, p);
            else if (n > 3 && memcmp(p, "0: ", 3) == 0) fprintf(stderr, "quire: %s: %.*s\n", file, (int)n - 3, p + 3);
            else fprintf(stderr, "quire: %s:%.*s\n", file, (int)n, p);
        }
        p += n + 1;
    }
}

/* A file none of whose lines is an entry of the named format (a transcript,
 * a Gemini CLI JSON, an empty file) is not a log of that format: an error,
 * with or without --skip-invalid, instead of an empty session log. An entry is
 * a line the importer knew: conversation or not, but neither invalid JSON
 * (skipped) nor an object of no known type ("other" in the report). */
bool cli_import_check(const char *file, const char *from, const quire_bytes *rep);
bool cli_import_check(const char *file, const char *from, const quire_bytes *rep) {
    /* the single-document importers reject a file of another shape themselves */
    if (!cli_import_line_format(from)) return true;
    unsigned lines = 0, invalid = 0, other = 0;
    const char *p = rep->data, *end = rep->data ? rep->data + rep->len : NULL;
    bool seen = false;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n >= 8 && memcmp(p, "summary:", 8) == 0 && sscanf(p, "summary: %u lines", &lines) == 1) {
            seen = true;
            const char *q = strstr(p, " invalid lines skipped");
            if (q && q < p + n) {
                while (q > p && q[-1] >= '0' && q[-1] <= '9') q--;
                invalid = (unsigned)strtoul(q, NULL, 10);
            }
            q = strstr(p, " other ");
            if (q && q < p + n) other = (unsigned)strtoul(q + 7, NULL, 10);
        }
        p += n + 1;
    }
    if (!seen || lines > invalid + other) return true;
    bool codex = strcmp(from, "codex") == 0;
    cli_fail("%s: not a %s: none of its %u lines is a %s entry", file, codex ? "Codex rollout" : "Claude Code session log",
             lines, codex ? "Codex rollout" : "Claude Code log");
    return false;
}

int cmd_import(int argc, char **argv) {
    const char *from = NULL, *out = NULL, *provider = NULL;
    bool lift = false, skip = false, side = false, verbose = false;
    const cli_opt opts[] = {
        {"from", CLI_STRING, &from, NULL}, {"lift-reminders", CLI_FLAG, &lift, NULL},
        {"skip-invalid", CLI_FLAG, &skip, NULL}, {"sidechains", CLI_FLAG, &side, NULL},
        {"provider", CLI_STRING, &provider, NULL}, {"verbose", CLI_FLAG, &verbose, NULL},
        {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("import", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (!from) return cli_usage("import", "--from claude-code|codex|gemini-cli|cline|swe-agent is required");
    if (!cli_import_format_ok(from))
        return cli_usage("import", "--from takes claude-code, codex, gemini-cli, cline or swe-agent, not '%s'", from);
    if (side && strcmp(from, "claude-code") != 0) return cli_usage("import", "--sidechains applies to claude-code logs");
    if ((lift || skip) && !cli_import_line_format(from))
        return cli_usage("import", "--lift-reminders and --skip-invalid apply to claude-code and codex logs");
    if (!npos) return cli_usage("import", "a log FILE is required");
    cli_file f, meta;
    if (!cli_read(pos[0], &f)) return 1;
    if (!cli_import_sidecar(from, pos[0], &meta)) { cli_file_free(&f); return 1; }
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = from;
    io.provider = provider;
    io.metadata = meta.data;
    io.metadata_len = meta.len;
    io.flags = (lift ? QUIRE_IMPORT_LIFT_REMINDERS : 0u) | (skip ? QUIRE_IMPORT_SKIP_INVALID : 0u) |
               (side ? QUIRE_IMPORT_SIDECHAINS : 0u);
    quire_bytes log = {0}, rep = {0};
    quire_error e;
    quire_status st = quire_import(f.data, f.len, &io, NULL, &log, &rep, &e);
    cli_file_free(&meta);
    if (st) {
        cli_report(f.name, &e);
        cli_file_free(&f);
        return 1;
    }
    bool ok = cli_import_check(f.name, from, &rep); /* not that format: one line, not one per skipped line */
    if (ok) cli_import_report(f.name, &rep, verbose);
    quire_bytes_free(&rep);
    cli_file_free(&f);
    if (!ok) { quire_bytes_free(&log); return 1; }
    cli_outputs *outs = cli_out_new();
    cli_out_add(outs, out, &log);
    return cli_out_commit(outs);
}
