/* quire ingest: apply MCP/ACP messages, reminders and clears to a reminder
 * state; or derive a sub-agent's state (--propagate). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire ingest [--state F] [--state-out F] [--events F] [--session-id S]\n"
    "                    [--enable-bridge SERVER:KIND[,...]] [--disable-bridge SERVER:KIND[,...]]\n"
    "                    [--max-live-per-origin N] [--turn-budget N] [--body-cap N]\n"
    "                    [--max-pending-per-server N] [-o FILE] [MESSAGES|-]\n"
    "       quire ingest --propagate AGENT_ID [--state F] [--session-id S] [--state-out F | -o F]\n"
    "\n"
    "Applies session-log lines to a reminder state (quire.state/1), in order, all or nothing.\n"
    "MESSAGES (default: standard input) holds lines of these types, as JSONL or one JSON array:\n"
    "  {\"type\":\"mcp\",\"server\":NAME,\"message\":JSON-RPC}   a message from an MCP server\n"
    "  {\"type\":\"mcp\",\"server\":NAME,\"direction\":\"out\",\"message\":JSON-RPC}\n"
    "                                                   a message the host sent it (resources/subscribe,\n"
    "                                                   resources/unsubscribe, subscriptions/listen)\n"
    "  {\"type\":\"mcp\",\"server\":NAME,\"event\":\"reconnected\"}  the host reconnected to it\n"
    "  {\"type\":\"acp\",\"message\":JSON-RPC}                 a message from an ACP client\n"
    "  {\"type\":\"reminder\",\"reminder\":{...}}              a reminder injected by the host\n"
    "  {\"type\":\"clear\",\"selector\":{\"id\"|\"tag\"|\"dedupeKey\"|\"origin\":...}}\n"
    "MCP servers must declare capabilities.reminders.emit: true in their initialize result before\n"
    "their notifications/reminder are accepted; a bridged resources/updated needs the host's\n"
    "subscription to its URI. The JSON-RPC responses to ACP requests\n"
    "(session/inject_reminder, session/remind) are written to standard output (or -o) as JSONL.\n"
    "\n"
    "  --state F               the state to start from (default: a fresh state, turn 0)\n"
    "  --state-out F           write the next state to F\n"
    "  --events F              write the lifecycle events (ACP SessionUpdate objects, JSONL) to F\n"
    "  --session-id S          the session id that derived reminder ids hash (replaces the state's)\n"
    "  --enable-bridge S:K     turn MCP server S's bridge K on: resources (resources/updated), tools\n"
    "                          (tools/list_changed) or prompts (prompts/list_changed); comma-separated\n"
    "  --disable-bridge S:K    turn it off again (bridges are off by default and kept in the state)\n"
    "  --max-live-per-origin N live reminders per origin before the oldest is dropped (default 32)\n"
    "  --turn-budget N         reminder body bytes rendered per turn (default 16384)\n"
    "  --body-cap N            bytes of one reminder body; longer ones are cut (default 8192)\n"
    "  --max-pending-per-server N\n"
    "                          reminders one MCP server pushed that no turn rendered yet before the\n"
    "                          oldest is dropped (default 32)\n"
    "                          (the limits are kept in the state file)\n"
    "  --propagate AGENT_ID    write the state a sub-agent starts with instead: reminders with\n"
    "                          propagate all, and session ones not themselves inherited, copied with\n"
    "                          source inherited and originatingAgentId AGENT_ID (the parent agent's id,\n"
    "                          kept when already set); --session-id names the child's session\n"
    "  -o FILE                 write the responses (or, with --propagate, the child state) to FILE\n"
    "\n"
    "Exit status: 0 ok, 1 bad input (one line on stderr: FILE:LINE:COL: /pointer: message), 2 usage.\n"
    "Nothing is written when a command fails. See docs/reminders.md.\n";

/* Parses "SERVER:KIND[,SERVER:KIND...]" and applies it to s. */
static int bridges(quire_state *s, const char *spec, bool enable) {
    const char *opt = enable ? "--enable-bridge" : "--disable-bridge";
    char *copy = strdup(spec);
    if (!copy) return cli_fail("out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(item, ':');
        if (!colon || colon == item) {
            rc = cli_usage("ingest", "%s needs SERVER:KIND, got '%s'", opt, item);
            break;
        }
        *colon = '\0';
        const char *kind = colon + 1;
        unsigned bit = strcmp(kind, "resources") == 0 ? QUIRE_BRIDGE_RESOURCES
                       : strcmp(kind, "tools") == 0   ? QUIRE_BRIDGE_TOOLS
                       : strcmp(kind, "prompts") == 0 ? QUIRE_BRIDGE_PROMPTS
                                                      : 0u;
        if (!bit) {
            rc = cli_usage("ingest", "%s: unknown bridge '%s' (resources, tools, prompts)", opt, kind);
            break;
        }
        unsigned mask = quire_state_bridges(s, item);
        mask = enable ? (mask | bit) : (mask & ~bit);
        quire_error e;
        if (quire_state_set_bridges(s, item, mask, &e)) { cli_report(NULL, &e); rc = 1; }
    }
    free(copy);
    return rc;
}

int cmd_ingest(int argc, char **argv) {
    cli_remind rm = {NULL, NULL, NULL, NULL};
    const char *out = NULL, *session_id = NULL, *enable = NULL, *disable = NULL, *propagate = NULL;
    unsigned long long max_live = 0, turn_budget = 0, body_cap = 0, max_pending = 0;
    bool seen_live = false, seen_budget = false, seen_cap = false, seen_pending = false;
    const cli_opt opts[] = {
        {"state", CLI_STRING, &rm.state_path, NULL},
        {"state-out", CLI_STRING, &rm.state_out, NULL},
        {"events", CLI_STRING, &rm.events_out, NULL},
        {"session-id", CLI_STRING, &session_id, NULL},
        {"enable-bridge", CLI_STRING, &enable, NULL},
        {"disable-bridge", CLI_STRING, &disable, NULL},
        {"max-live-per-origin", CLI_UINT, &max_live, &seen_live},
        {"turn-budget", CLI_UINT, &turn_budget, &seen_budget},
        {"body-cap", CLI_UINT, &body_cap, &seen_cap},
        {"max-pending-per-server", CLI_UINT, &max_pending, &seen_pending},
        {"propagate", CLI_STRING, &propagate, NULL},
        {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("ingest", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if ((seen_live && (max_live == 0 || max_live > 0xFFFFFFFFu)) ||
        (seen_budget && (turn_budget == 0 || turn_budget > 0xFFFFFFFFu)) ||
        (seen_cap && (body_cap == 0 || body_cap > 0xFFFFFFFFu)) ||
        (seen_pending && (max_pending == 0 || max_pending > 0xFFFFFFFFu)))
        return cli_usage("ingest", "limits must be whole numbers from 1 to 4294967295");
    if (propagate) {
        if (!*propagate) return cli_usage("ingest", "--propagate needs the parent agent's id");
        if (npos) return cli_usage("ingest", "--propagate takes no MESSAGES");
        if (enable || disable || rm.events_out)
            return cli_usage("ingest", "--propagate cannot be combined with bridges or --events");
        if (rm.state_out && out) return cli_usage("ingest", "--propagate writes one state: give --state-out or -o");
    }
    quire_state *s = NULL;
    quire_bytes none;
    /* the session id of a child is set at propagation, not on the parent */
    if (cli_remind_load(&rm, propagate ? NULL : session_id, &s, &none, NULL)) return 1;
    quire_bytes_free(&none);
    quire_error e;
    if (propagate) {
        quire_state *child = NULL;
        quire_status st = quire_state_propagate(s, propagate, session_id, NULL, &child, &e);
        quire_state_free(s);
        if (st) { cli_report(NULL, &e); return 1; }
        cli_outputs *outs = cli_out_new();
        quire_bytes sb;
        if (quire_state_write(child, 0, &sb, &e)) {
            cli_report(NULL, &e); quire_state_free(child); cli_out_discard(outs); return 1;
        }
        quire_state_free(child);
        cli_out_add_line(outs, rm.state_out ? rm.state_out : out, &sb);
        return cli_out_commit(outs);
    }
    if (seen_live || seen_budget || seen_cap || seen_pending) {
        quire_reminder_limits lim;
        quire_state_limits(s, &lim);
        if (seen_live) lim.max_live_per_origin = (uint32_t)max_live;
        if (seen_budget) lim.turn_budget_bytes = (uint32_t)turn_budget;
        if (seen_cap) lim.body_cap_bytes = (uint32_t)body_cap;
        if (seen_pending) lim.max_pending_per_server = (uint32_t)max_pending;
        quire_state_set_limits(s, &lim);
    }
    if ((enable && (r = bridges(s, enable, true)) != 0) || (disable && (r = bridges(s, disable, false)) != 0)) {
        quire_state_free(s);
        return r;
    }
    cli_file f;
    if (!cli_read(npos ? pos[0] : "-", &f)) { quire_state_free(s); return 1; }
    quire_state *next = NULL;
    quire_bytes events, responses;
    quire_status st = quire_state_apply_lines(s, f.data, f.len, NULL, &next, &events, &responses, &e);
    quire_state_free(s);
    if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
    cli_file_free(&f);
    cli_outputs *outs = cli_out_new();
    cli_out_add(outs, out, &responses);
    bool ok = cli_remind_outputs(&rm, outs, next, &events, NULL, NULL);
    quire_state_free(next);
    if (!ok) { cli_out_discard(outs); return 1; }
    return cli_out_commit(outs);
}
