#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire import --from claude-code|codex [--lift-reminders] [--skip-invalid] [--sidechains]\n"
    "                    [--provider P] [--verbose] [-o FILE] FILE|-\n"
    "\n"
    "Turns a Claude Code session log or a Codex rollout (JSONL) into a quire.session/1 log\n"
    "that `quire replay` reproduces request by request (docs/replay.md).\n"
    "\n"
    "  --from F          claude-code or codex (required)\n"
    "  --lift-reminders  lift inline <system-reminder> text into typed reminder events\n"
    "  --skip-invalid    skip lines that are not JSON objects (reported on stderr)\n"
    "                    instead of failing on the first one\n"
    "  --sidechains      claude-code: import the sub-agent (isSidechain) conversation\n"
    "  --provider P      target provider written into the log (default: anthropic for\n"
    "                    claude-code, openai_responses for codex)\n"
    "  --verbose         print the whole import report (dropped lines, counts) on stderr\n"
    "  -o FILE           write the log to FILE (atomically) instead of stdout\n";

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
        if (verbose || invalid) {
            if (summary) fprintf(stderr, "quire: %s: %.*s\n", file, (int)n, p);
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
    if (!from) return cli_usage("import", "--from claude-code|codex is required");
    if (strcmp(from, "claude-code") != 0 && strcmp(from, "codex") != 0)
        return cli_usage("import", "--from takes claude-code or codex, not '%s'", from);
    if (side && strcmp(from, "claude-code") != 0) return cli_usage("import", "--sidechains applies to claude-code logs");
    if (!npos) return cli_usage("import", "a log FILE is required");
    cli_file f;
    if (!cli_read(pos[0], &f)) return 1;
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = from;
    io.provider = provider;
    io.flags = (lift ? QUIRE_IMPORT_LIFT_REMINDERS : 0u) | (skip ? QUIRE_IMPORT_SKIP_INVALID : 0u) |
               (side ? QUIRE_IMPORT_SIDECHAINS : 0u);
    quire_bytes log = {0}, rep = {0};
    quire_error e;
    quire_status st = quire_import(f.data, f.len, &io, NULL, &log, &rep, &e);
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
