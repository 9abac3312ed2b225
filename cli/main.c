#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static const char k_help[] =
    "usage: quire COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Render LLM agent transcripts into provider requests, manage system reminders,\n"
    "compact transcripts and replay logged sessions.\n"
    "\n"
    "commands:\n"
    "  render    render a transcript (+ reminder state) into a provider request body\n"
    "  compact   compact a transcript to a token budget\n"
    "  replay    replay a session log into requests, events and responses\n"
    "  import    turn an agent's log (Claude Code, Codex, Gemini CLI, Cline, SWE-agent)\n"
    "            into a quire session log\n"
    "  ingest    apply MCP/ACP messages and reminders to a reminder state\n"
    "  caps      print the capability row of a provider and model, or the table\n"
    "  validate  check a request body against its provider's rules\n"
    "  json      check or reformat JSON with quire's codec\n"
    "  report    replay a session log into one self-contained HTML page\n"
    "  accept    decode a provider response or stream into the assistant message\n"
    "  serve     the session API as JSONL over standard input and output\n"
    "  estimate  estimate the input tokens of the request for a target, with a breakdown\n"
    "\n"
    "Run 'quire COMMAND --help' for a command's options. Every command takes\n"
    "--max-input N (stop reading any input at N bytes; default 1073741824).\n"
    "Exit codes: 0 ok, 1 bad input or processing error, 2 usage, 3 replay or golden mismatch.\n";

int main(int argc, char **argv) {
    if (argc < 2) { fputs(k_help, stderr); return 2; }
    /* a closed pipe is a write error (exit 1, no file committed), not a kill */
    signal(SIGPIPE, SIG_IGN);
    const char *c = argv[1];
    if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0 || strcmp(c, "help") == 0) { fputs(k_help, stdout); return 0; }
    if (strcmp(c, "--version") == 0) { printf("quire %s\n", quire_version()); return 0; }
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        {"render", cmd_render}, {"compact", cmd_compact}, {"replay", cmd_replay}, {"import", cmd_import},
        {"ingest", cmd_ingest}, {"caps", cmd_caps}, {"validate", cmd_validate}, {"json", cmd_json},
        {"report", cmd_report},
        {"accept", cmd_accept},
        {"serve", cmd_serve},
        {"estimate", cmd_estimate},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(c, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "quire: unknown command '%s'\n", c);
    fputs("Run 'quire --help' for the list of commands.\n", stderr);
    return 2;
}
