#!/usr/bin/python3
"""Writes the inputs of golden/compact/* (case.json + inputs):
    /usr/bin/python3 golden/compact/make_cases.py golden/compact   (run twice: idempotent_second_run
    reads combined_all_stages/expected/out.json). Expected files come from
QUIRE_UPDATE_GOLDEN=1 and are checked by hand."""
import json, os, shutil, sys
ROOT = sys.argv[1]
_prev = os.path.join(ROOT, "combined_all_stages", "expected", "out.json")
PREV = open(_prev, encoding="utf-8").read() if os.path.exists(_prev) else None
def dump(o): return json.dumps(o, ensure_ascii=False, separators=(',', ':'))
def case(name, args, inputs, desc, files=None, stdin=None, bpt=True):
    # Most cases count 4 bytes a token (--bytes-per-token 4, the host-counter path), so
    # recalibrating the estimator does not move them; the others use the estimator.
    if bpt and args[0] == "compact":
        args = ["compact", "--bytes-per-token", "4"] + args[1:]
    d = os.path.join(ROOT, name)
    if os.path.isdir(d): shutil.rmtree(d)
    os.makedirs(d)
    c = {"description": desc, "args": args}
    if files: c["files"] = files
    if stdin: c["stdin"] = stdin
    with open(os.path.join(d, "case.json"), "w") as f: f.write(json.dumps(c, ensure_ascii=False) + "\n")
    for n, v in inputs.items():
        with open(os.path.join(d, n), "w", encoding="utf-8") as f:
            f.write(v if isinstance(v, str) else dump(v) + "\n")

TOOLS = [{"name": "read", "description": "Read a file", "inputSchema": {"type": "object"}},
         {"name": "bash", "inputSchema": {"type": "object"}}]

def out_lines(tag, n):
    return "".join("%s line %d\n" % (tag, i) for i in range(n))

def turns(n, out=40, errors=(), pinned=(), system="You are a coding agent."):
    msgs = []
    for t in range(1, n + 1):
        u = {"role": "user", "content": "Task %d: fix bug #%d in src/m%d.c\nDetails follow." % (t, t, t), "id": "u%d" % t}
        if t in pinned: u["pinned"] = True
        msgs.append(u)
        name = "read" if t % 2 else "bash"
        msgs.append({"role": "assistant", "id": "a%d" % t, "content": [
            {"type": "text", "text": "Looking at m%d." % t},
            {"type": "toolCall", "id": "call%d" % t, "name": name, "input": {"path": "src/m%d.c" % t}}]})
        res = {"type": "toolResult", "toolCallId": "call%d" % t, "content": out_lines("m%d.c" % t, out)}
        if t in errors:
            res["content"] = "error: permission denied for src/m%d.c\n" % t + out_lines("trace", out)
            res["isError"] = True
        msgs.append({"role": "tool", "id": "r%d" % t, "content": [res]})
        msgs.append({"role": "assistant", "id": "b%d" % t, "content": "Fixed m%d.c." % t})
    tr = {"messages": msgs}
    if system: tr = {"system": system, "tools": TOOLS, "messages": msgs}
    return tr

base = turns(6, out=200, errors=(3,))

# --- idempotence / under budget -------------------------------------------------------
pretty_in = json.dumps(turns(3, out=3), indent=1) + "\n"
case("under_budget_unchanged", ["compact", "--budget", "100000", "in.json"], {"in.json": pretty_in},
     "a transcript under budget comes back byte for byte (even pretty-printed input)", bpt=False)
case("no_budget_unchanged", ["compact", "in.json"], {"in.json": turns(3, out=3)},
     "without a budget or a summary nothing changes", bpt=False)

# --- stages alone ---------------------------------------------------------------------
case("stage1_prune_only", ["compact", "--budget", "3700", "--keep-last", "2", "--pretty", "in.json"], {"in.json": base},
     "stage 1 alone: old tool outputs cut to head/tail excerpts, oldest first, stopping under budget")
case("stage1_prune_only_report", ["compact", "--budget", "3700", "--keep-last", "2", "--dry-run", "--pretty", "in.json"], {"in.json": base},
     "stage 1 alone: the report")
case("stage2_summary_only", ["compact", "--policy", "policy.json", "--pretty", "in.json"],
     {"in.json": base, "policy.json": {"budgetTokens": 2500, "keepLastTurns": 2, "stages": {"pruneToolOutputs": False, "cutOversized": False}}},
     "stage 2 alone: turns 2-4 replaced by the digest, merged into the first kept user message")
case("stage2_oldest_turns_only", ["compact", "--policy", "policy.json", "--pretty", "in.json"],
     {"in.json": base, "policy.json": {"budgetTokens": 4200, "keepLastTurns": 2, "stages": {"pruneToolOutputs": False, "cutOversized": False}}},
     "stage 2, slightly over budget: only the oldest turns (2-3) are summarised, as few as fit the budget; turn 4 stays whole")
big = turns(2, out=3)
big["messages"].append({"role": "user", "id": "u3", "content": "Please review this log:\n" + out_lines("log", 400) + "Thanks."})
case("stage3_cut_only", ["compact", "--budget", "1200", "--pretty", "in.json"], {"in.json": big},
     "stage 3 alone: the one oversized (recent) message cut head/tail")
case("stage3_cut_only_report", ["compact", "--budget", "1200", "--dry-run", "in.json"], {"in.json": big},
     "stage 3 alone: the report")
comb = turns(8, out=120, errors=(3, 6))
comb["messages"].append({"role": "user", "id": "u9", "content": "Final check, here is the full build log:\n" + out_lines("build", 300)})
case("combined_all_stages", ["compact", "--budget", "2500", "-o", "out.json", "in.json"], {"in.json": comb},
     "all three stages: prune, digest, cut", files=["out.json"])
case("combined_all_stages_report", ["compact", "--budget", "2500", "--dry-run", "--pretty", "in.json"], {"in.json": comb},
     "all three stages: the report")

# --- pinned and impossible budgets ----------------------------------------------------
pin = turns(7, out=200, pinned=(3,))
pin["messages"][10]["pinned"] = True   # r3: a pinned tool output is never pruned
case("pinned_turn_kept", ["compact", "--budget", "2900", "--keep-last", "2", "--pretty", "in.json"], {"in.json": pin},
     "a pinned turn inside the span stays whole (its pinned tool output unpruned); the summary sits after it")
imp = turns(3, out=3)
imp["messages"][2]["pinned"] = True
imp["messages"][2]["content"][0]["content"] = out_lines("pinned", 200)
case("impossible_budget_pinned", ["compact", "--budget", "300", "-o", "out.json", "in.json"], {"in.json": imp},
     "pinned content alone exceeds the budget: a clear error with the numbers, nothing written", files=[])
case("impossible_budget_stages_off", ["compact", "--policy", "policy.json", "in.json"],
     {"in.json": base, "policy.json": {"budgetTokens": 200, "stages": {"summarize": False, "cutOversized": False}}},
     "the budget cannot be met with the enabled stages")

# --- tool turns at both edges of the cut ----------------------------------------------
edge = {"system": "sys", "tools": TOOLS, "messages": [
    {"role": "user", "id": "u1", "content": "Start."},
    {"role": "assistant", "id": "a1", "content": [{"type": "toolCall", "id": "t1", "name": "read", "input": {"path": "README"}}]},
    {"role": "tool", "id": "r1", "content": [{"type": "toolResult", "toolCallId": "t1", "content": "# readme"}]},
    {"role": "assistant", "id": "b1", "content": "OK."},
    # turn 2: the span's first turn opens with tool traffic (Anthropic-style user tool results + text)
    {"role": "user", "id": "u2", "content": "Read two files."},
    {"role": "assistant", "id": "a2", "content": [{"type": "toolCall", "id": "t2a", "name": "read", "input": {"path": "a"}},
                                                  {"type": "toolCall", "id": "t2b", "name": "read", "input": {"path": "b"}}]},
    {"role": "user", "id": "u2r", "content": [{"type": "toolResult", "toolCallId": "t2a", "content": out_lines("a", 50)},
                                              {"type": "toolResult", "toolCallId": "t2b", "content": out_lines("b", 50)},
                                              {"type": "text", "text": "Also check c."}]},
    {"role": "assistant", "id": "a2c", "content": [{"type": "toolCall", "id": "t2c", "name": "bash", "input": {"cmd": "cat c"}}]},
    # a user interjection between a call and its result: not a turn boundary
    {"role": "user", "id": "u2x", "content": "(still waiting)"},
    {"role": "tool", "id": "r2c", "content": [{"type": "toolResult", "toolCallId": "t2c", "content": out_lines("c", 50), "isError": True}]},
    {"role": "user", "id": "u3", "content": "Now run the tests."},
    # a harness instruction inside the span: kept, not summarised
    {"role": "developer", "id": "d3", "content": "Run the tests with -j1 from now on."},
    {"role": "assistant", "id": "a3", "content": [{"type": "toolCall", "id": "t3", "name": "bash", "input": {"cmd": "make test"}}]},
    {"role": "tool", "id": "r3", "content": [{"type": "toolResult", "toolCallId": "t3", "content": out_lines("test", 60)}]},
    # the first kept turn starts with tool traffic too
    {"role": "user", "id": "u4", "content": "Fix the failing one."},
    {"role": "assistant", "id": "a4", "content": [{"type": "text", "text": "Patching."}, {"type": "toolCall", "id": "t4", "name": "bash", "input": {"cmd": "patch"}}]},
    {"role": "tool", "id": "r4", "content": [{"type": "toolResult", "toolCallId": "t4", "content": "patched"}]},
    {"role": "assistant", "id": "b4", "content": "Done."}]}
case("tool_turns_at_edges", ["compact", "--budget", "400", "--keep-last", "1", "--pretty", "in.json"], {"in.json": edge},
     "tool calls at both edges of the summarised span (and a user message between a call and its result) stay paired; "
     "a developer instruction inside the span is kept")

# --- supplied summary -----------------------------------------------------------------
summ = "The user asked for fixes in m2-m5.\nAll fixed except m3 (permission denied; see </conversation-summary> trick).\n"
case("summary_supplied", ["compact", "--summary", "summary.txt", "--keep-last", "2", "--pretty", "in.json"],
     {"in.json": base, "summary.txt": summ},
     "a supplied summary applies to the span even without a budget; its closing tag is neutralised")
case("summary_supplied_replay_policy", ["compact", "--summary", "summary.txt", "--policy", "policy.json", "--pretty", "in.json"],
     {"in.json": turns(3, out=3), "summary.txt": "Everything so far: three fixes.", "policy.json": {"keepFirstTurns": 0, "keepLastTurns": 0}},
     "keepFirstTurns 0, keepLastTurns 0 (as importers write): one standalone summary message replaces everything", bpt=False)
case("summary_nothing_to_summarise", ["compact", "--summary", "summary.txt", "in.json"],
     {"in.json": turns(3, out=3), "summary.txt": "x"},
     "a summary with no span (3 turns, keepFirst 1 + keepLast 4) is an error", bpt=False)
case("summary_invalid_utf8", ["compact", "--summary", "summary.txt", "--keep-last", "1", "in.json"],
     {"in.json": turns(3, out=3), "summary.txt": "ok"}, "a summary that is not UTF-8 is rejected", bpt=False)
with open(os.path.join(ROOT, "summary_invalid_utf8", "summary.txt"), "wb") as f: f.write(b"bad \xff byte\n")

# --- plan -----------------------------------------------------------------------------
case("plan", ["compact", "--plan", "--budget", "1400", "--keep-last", "2", "--pretty", "in.json"], {"in.json": base},
     "the plan: the report without a summary, the span and a ready summarisation transcript")
case("plan_no_span", ["compact", "--plan", "--budget", "100000", "in.json"], {"in.json": turns(2, out=3)},
     "the plan when nothing can be summarised")

# --- reminders ------------------------------------------------------------------------
state = {"turn": 7, "seq": 3, "reminders": [
    {"id": "keep-tests", "body": "Run the tests before committing.", "preserveOnCompact": True, "ttlTurns": 5, "ttlRemaining": 3, "firedAtTurn": 6},
    {"id": "file-changed", "body": "src/m2.c changed on disk.", "ttlTurns": 2, "ttlRemaining": 1, "firedAtTurn": 7},
    {"id": "server-note", "body": "The dev server restarted.", "origin": "mcp:devserver"}]}
case("reminders_preserved", ["compact", "--budget", "1500", "--state", "state.json", "--state-out", "state.out.json",
                             "--events", "events.jsonl", "-o", "out.json", "in.json"],
     {"in.json": base, "state.json": state},
     "preserveOnCompact reminders stay (TTLs untouched), the others leave with reminder_expired(compacted_out)",
     files=["out.json", "state.out.json", "events.jsonl"])
case("reminders_untouched_under_budget", ["compact", "--budget", "100000", "--state", "state.json", "--state-out", "state.out.json",
                                          "--events", "events.jsonl", "-o", "out.json", "in.json"],
     {"in.json": base, "state.json": state},
     "no compaction, no reminder leaves", files=["out.json", "state.out.json", "events.jsonl"])

# --- graphemes ------------------------------------------------------------------------
fam = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"   # 25 bytes
dec = "cafe\u0301 na\u0308ive re\u0301sume\u0301 "                    # decomposed accents
ara = "\u0645\u064E\u0631\u0652\u062D\u064E\u0628\u064B\u0627 \u0628\u0650\u0627\u0644\u0639\u064E\u0627\u0644\u064E\u0645\u0650 "  # Arabic with harakat
flags = "\U0001F1EB\U0001F1F7\U0001F1EF\U0001F1F5"
gr = {"messages": [
    {"role": "user", "id": "u1", "content": "Show me the files."},
    {"role": "assistant", "id": "a1", "content": [{"type": "toolCall", "id": "e", "name": "read", "input": {"path": "emoji.txt"}},
                                                  {"type": "toolCall", "id": "d", "name": "read", "input": {"path": "accents.txt"}},
                                                  {"type": "toolCall", "id": "r", "name": "read", "input": {"path": "arabic.txt"}},
                                                  {"type": "toolCall", "id": "f", "name": "read", "input": {"path": "flags.txt"}}]},
    {"role": "tool", "id": "r1", "content": [
        {"type": "toolResult", "toolCallId": "e", "content": fam * 40},
        {"type": "toolResult", "toolCallId": "d", "content": dec * 20},
        {"type": "toolResult", "toolCallId": "r", "content": ara * 20},
        {"type": "toolResult", "toolCallId": "f", "content": "x" + flags * 30}]},
    {"role": "assistant", "id": "b1", "content": "Shown."},
    {"role": "user", "id": "u2", "content": "Thanks. " + "\u4E2D\u6587\u6587\u672C" * 300 + " " + ara * 30},
]}
case("grapheme_safe_cuts", ["compact", "--policy", "policy.json", "-o", "out.json", "in.json"],
     {"in.json": gr, "policy.json": {"budgetTokens": 700, "keepLastTurns": 1, "keepFirstTurns": 1, "toolOutputExcerptBytes": 90}},
     "cuts never split a ZWJ family emoji, a decomposed accent, an Arabic letter with its harakat, a flag or CJK",
     files=["out.json"])

# --- errors and usage -----------------------------------------------------------------
case("policy_unknown_field", ["compact", "--policy", "policy.json", "in.json"],
     {"in.json": base, "policy.json": "{\"budgetTokens\": 100,\n \"stages\": {\"prune\": true}}\n"},
     "an unknown policy field is rejected with its JSON Pointer", bpt=False)
case("policy_bad_type", ["compact", "--policy", "policy.json", "in.json"],
     {"in.json": base, "policy.json": "{\"keepLastTurns\": -1}\n"}, "a negative count is rejected", bpt=False)
case("policy_flags_override", ["compact", "--policy", "policy.json", "--budget", "1500", "--dry-run", "in.json"],
     {"in.json": base, "policy.json": {"budgetTokens": 10}}, "flags override the policy file")
case("usage_plan_and_dry_run", ["compact", "--plan", "--dry-run", "in.json"], {"in.json": base}, "--plan with --dry-run is a usage error", bpt=False)
case("stdin_input", ["compact", "--budget", "1500", "--dry-run", "-"], {"in.json": base}, "the transcript from standard input", stdin="in.json")

# --- idempotence: the compacted output compacted again is byte-identical -------------------
if PREV is not None:
    case("idempotent_second_run", ["compact", "--budget", "2500", "in.json"], {"in.json": PREV},
         "compacting the output of combined_all_stages again with the same budget returns it byte for byte")
