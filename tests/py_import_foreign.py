#!/usr/bin/python3
"""Import fidelity for the single-document formats (DESIGN 7): Gemini CLI chat
recordings, Cline task histories and SWE-agent trajectories.

For every example in tests/data/import_foreign, this test rebuilds in Python,
straight from the raw file and independently of the C importer, the
conversation the agent sent before each logged model response, and checks
that `quire replay --from FORMAT` renders exactly one request per response,
whose messages are that conversation (roles, texts, tool calls with their ids,
names and arguments, tool results with their ids, contents and error flags),
for the format's default provider:

  gemini-cli -> gemini     `contents` (a gemini message is one response)
  cline      -> anthropic  `messages` (an assistant message is one response)
  swe-agent  -> openai     `messages` (a non-demonstration assistant entry is
                            one response; the first system entry is the system)

The repair rules written in docs/replay.md ("Importers") are applied here too:
repeated tool call ids renamed "<id>-<k>", calls left without a result answered
by an error result, results for unknown calls dropped. Also: two runs give the
same bytes, every request validates (`quire validate`), a file of another
format is rejected with exit 1 and one line naming the expected format, and
seeded damage to the examples either imports into a log that replays or is
rejected with one line that names line:col.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

FAIL = []


def fail(msg):
    FAIL.append(msg)
    print("FAIL:", msg)


def run(quire, args, stdin=None):
    p = subprocess.run([quire] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def merge(msgs):
    """Consecutive messages of one role as one (the providers' own rule)."""
    out = []
    for role, parts in msgs:
        if out and out[-1][0] == role:
            out[-1] = (role, out[-1][1] + parts)
        else:
            out.append((role, list(parts)))
    return out


# ---------------------------------------------------------------- Gemini CLI

def gem_parts(content):
    if isinstance(content, str):
        return [("text", content)] if content else []
    if isinstance(content, dict):
        content = [content]
    out = []
    for p in content or []:
        if isinstance(p, str):
            if p:
                out.append(("text", p))
        elif isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought"):
            if p["text"]:
                out.append(("text", p["text"]))
    return out


def gem_expected(raw):
    conv, reqs = [], []
    for m in raw["messages"]:
        t = m.get("type")
        if t == "user":
            parts = gem_parts(m.get("content"))
            if parts:
                conv.append(("user", parts))
        elif t == "gemini":
            calls = [c for c in m.get("toolCalls") or [] if c.get("name")]
            parts = gem_parts(m.get("content"))
            if not parts and not calls:
                continue
            if conv:
                reqs.append((m.get("model"), merge(conv)))
            conv.append(("model", parts + [("call", c["id"], c["name"], c.get("args", {})) for c in calls]))
            if calls:
                resp = []
                for c in calls:
                    failed = c.get("status") in ("error", "cancelled")
                    r = c["result"][0]["functionResponse"]["response"]
                    (key, val), = r.items()
                    resp.append(("resp", c["id"], c["name"], {"error" if failed or key == "error" else "output": val}))
                conv.append(("user", resp))
    return reqs


def gem_actual(body):
    out = []
    for c in body["contents"]:
        parts = []
        for p in c["parts"]:
            if "text" in p:
                parts.append(("text", p["text"]))
            elif "functionCall" in p:
                f = p["functionCall"]
                parts.append(("call", f.get("id"), f["name"], f.get("args")))
            elif "functionResponse" in p:
                f = p["functionResponse"]
                parts.append(("resp", f.get("id"), f["name"], f["response"]))
            else:
                parts.append(("other", json.dumps(p, sort_keys=True)))
        out.append((c["role"], parts))
    return merge(out)


# ---------------------------------------------------------------- Cline

def cl_block(b):
    t = b.get("type")
    if t == "text":
        return ("text", b["text"])
    if t == "image":
        return ("image", b["source"].get("media_type"))
    if t == "tool_use":
        return ("tool_use", b["id"], b["name"], b.get("input", {}))
    if t == "tool_result":
        c = b.get("content")
        if isinstance(c, list):
            c = [x.get("text") for x in c]
        elif isinstance(c, str):
            c = [c]
        return ("tool_result", b["tool_use_id"], c, bool(b.get("is_error")))
    if t == "thinking":
        return ("thinking", b["thinking"], b.get("signature"))
    return ("other", t)


def cl_expected(raw):
    conv, reqs, pending = [], [], []
    for m in raw:
        c = m["content"]
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else c
        blocks = [b for b in blocks if not (b.get("type") == "text" and not b.get("text"))]
        if m["role"] == "user":
            kept = []
            for b in blocks:
                if b.get("type") == "tool_result":
                    if b["tool_use_id"] not in pending:
                        continue  # a result for a call not in the conversation
                    pending.remove(b["tool_use_id"])
                kept.append(cl_block(b))
            if pending:  # calls the conversation left without a result
                conv.append(("user", [("tool_result", i, ["[no output was recorded for this call]"], True)
                                      for i in pending]))
                pending = []
            if kept:
                conv.append(("user", kept))
        else:
            if not blocks:
                continue
            if pending:
                conv.append(("user", [("tool_result", i, ["[no output was recorded for this call]"], True)
                                      for i in pending]))
            if conv:
                reqs.append((None, merge(conv)))
            conv.append(("assistant", [cl_block(b) for b in blocks]))
            pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    return reqs


def cl_actual(body):
    out = []
    for m in body["messages"]:
        c = m["content"]
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else c
        out.append((m["role"], [cl_block(b) for b in blocks]))
    return merge(out)


# ---------------------------------------------------------------- SWE-agent

def sw_text(c):
    if isinstance(c, str):
        return [c] if c else []
    return [p["text"] for p in c or [] if isinstance(p, dict) and p.get("text")]


def sw_expected(raw):
    hist = raw["history"]
    agent = next((e["agent"] for e in hist if "agent" in e), None)
    conv, reqs = [], []
    used, open_ = set(), {}
    system = None
    pending = []

    def answer_pending():
        nonlocal pending
        left = [p for p in pending if p[1]]
        for p in left:
            conv.append(("tool", {"content": ["[no output was recorded for this call]"], "id": p[0]}))
            open_[p[2]].remove(p[0])
        pending = []

    for e in hist:
        if agent is not None and e.get("agent", agent) != agent:
            continue
        role = e["role"]
        if role == "system" and not conv and system is None and isinstance(e.get("content"), str) and e["content"]:
            system = e["content"]
            continue
        if role in ("system", "user"):
            answer_pending()
            t = sw_text(e.get("content"))
            if t:
                conv.append((role, {"content": t}))
        elif role == "assistant":
            answer_pending()
            calls = []
            for tc in e.get("tool_calls") or []:
                orig = tc["id"]
                new = orig
                k = 2
                while new in used:  # the documented rename: "<id>-<k>", smallest free k >= 2
                    new = "%s-%d" % (orig, k)
                    k += 1
                used.add(new)
                open_.setdefault(orig, []).append(new)
                args = tc["function"]["arguments"]
                calls.append((new, tc["function"]["name"], json.loads(args) if isinstance(args, str) else args))
                pending.append([new, True, orig])
            t = sw_text(e.get("content"))
            if not t and not calls:
                continue
            if not e.get("is_demo") and conv:
                reqs.append((None, list(conv)))
            conv.append(("assistant", {"content": t, "calls": calls}))
        elif role == "tool":
            orig = e["tool_call_ids"][0]
            if not open_.get(orig):
                continue
            new = open_[orig].pop(0)
            for p in pending:
                if p[0] == new:
                    p[1] = False
            conv.append(("tool", {"content": sw_text(e.get("content")), "id": new}))
    return system, reqs


def sw_actual(body):
    out = []
    system = None
    for i, m in enumerate(body["messages"]):
        if i == 0 and m["role"] in ("system", "developer") and system is None:
            system = m["content"]
            continue
        d = {"content": sw_text(m.get("content"))}
        if m["role"] == "assistant":
            d["calls"] = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                          for c in m.get("tool_calls") or []]
        if m["role"] == "tool":
            d["id"] = m["tool_call_id"]
        out.append((m["role"], d))
    return system, out


# ---------------------------------------------------------------- driver

def replay(quire, fmt, path):
    rc, out, err = run(quire, ["replay", "--from", fmt, path])
    if rc != 0:
        fail("%s: replay exit %d: %s" % (path, rc, err.strip()))
        return None
    rc2, out2, _ = run(quire, ["replay", "--from", fmt, path])
    if out2 != out:
        fail("%s: two replays differ" % path)
    return [json.loads(l) for l in out.splitlines() if json.loads(l).get("type") == "request"]


def validate(quire, req, label):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(req["body"], f)
    try:
        t = req["target"]
        args = ["validate", "--provider", t["provider"]] + (["--model", t["model"]] if t.get("model") else []) + [f.name]
        rc, _, err = run(QUIRE, args)
        if rc != 0:
            fail("%s: request %d does not validate: %s" % (label, req["turn"], err.strip()))
    finally:
        os.unlink(f.name)


def check(fmt, path, expected, actual_fn, model_check):
    label = os.path.basename(path)
    reqs = replay(QUIRE, fmt, path)
    if reqs is None:
        return
    if len(reqs) != len(expected):
        fail("%s: %d requests, expected %d (one per logged model response)" % (label, len(reqs), len(expected)))
        return
    for k, (req, (model, conv)) in enumerate(zip(reqs, expected), 1):
        got = actual_fn(req["body"])
        if got != conv:
            for i, (a, b) in enumerate(zip(got, conv)):
                if a != b:
                    fail("%s: request %d, message %d:\n  got      %r\n  expected %r" % (label, k, i, a, b))
                    break
            else:
                fail("%s: request %d: %d messages, expected %d" % (label, k, len(got), len(conv)))
        if model_check and model and req["target"].get("model") != model:
            fail("%s: request %d: model %r, expected %r" % (label, k, req["target"].get("model"), model))
        validate(QUIRE, req, label)
    print("ok: %s: %d requests match the conversation rebuilt from the raw file" % (label, len(reqs)))


def damaged(root, files):
    """Seeded damage to every example (keys dropped, values swapped for other
    types, entries duplicated or removed): what an importer accepts must replay
    (exit 0); what it rejects is exit 1 with one line naming line:col."""
    import copy
    import random
    import re
    rnd = random.Random(18)
    vals = [None, True, 0, -1, "", "x", [], {}, [1], {"a": 1}, "call_0", [{"type": "text", "text": ""}]]

    def mutate(v):
        if isinstance(v, dict) and v:
            k = rnd.choice(sorted(v))
            r = rnd.random()
            if r < 0.25:
                del v[k]
            elif r < 0.5:
                v[k] = copy.deepcopy(rnd.choice(vals))
            else:
                mutate(v[k])
        elif isinstance(v, list) and v:
            i = rnd.randrange(len(v))
            r = rnd.random()
            if r < 0.2:
                del v[i]
            elif r < 0.35:
                v.insert(i, copy.deepcopy(v[i]))
            elif r < 0.45:
                v[i] = copy.deepcopy(rnd.choice(vals))
            else:
                mutate(v[i])

    accepted = rejected = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            base = os.path.basename(path)
            fmt = "gemini-cli" if base.startswith("gemini-cli") else "cline" if base.startswith("cline") else "swe-agent"
            raw = json.load(open(path, encoding="utf-8"))
            for i in range(60):
                v = copy.deepcopy(raw)
                for _ in range(rnd.randint(1, 5)):
                    mutate(v)
                f = os.path.join(tmp, "%s-%d.json" % (base, i))
                with open(f, "w") as o:
                    json.dump(v, o, indent=1)
                rc, out, err = run(QUIRE, ["import", "--from", fmt, f, "-o", f + ".log"])
                if rc == 0:
                    accepted += 1
                    rc2, _, err2 = run(QUIRE, ["replay", f + ".log"])
                    if rc2 != 0:
                        fail("%s damaged #%d: imported but does not replay: %s" % (base, i, err2.strip()))
                else:
                    rejected += 1
                    lines = err.strip().splitlines()
                    if rc != 1 or len(lines) != 1 or not re.match(r"quire: .*:\d+:\d+: ", lines[0]):
                        fail("%s damaged #%d: exit %d, stderr %r" % (base, i, rc, err))
    print("ok: %d damaged examples imported and replayed, %d rejected with one located line" % (accepted, rejected))


def main():
    global QUIRE
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    QUIRE = a.quire
    root = os.path.join(a.data, "import_foreign")
    files = sorted(glob.glob(os.path.join(root, "*.json")) + glob.glob(os.path.join(root, "*.traj")))
    if len(files) < 5:
        fail("expected the five examples in %s, found %d" % (root, len(files)))
    for path in files:
        raw = json.load(open(path, encoding="utf-8"))
        base = os.path.basename(path)
        if base.startswith("gemini-cli"):
            check("gemini-cli", path, gem_expected(raw), gem_actual, True)
        elif base.startswith("cline"):
            check("cline", path, cl_expected(raw), cl_actual, False)
        elif base.startswith("swe-agent"):
            system, exp = sw_expected(raw)
            got_sys = []

            def actual(body, got_sys=got_sys):
                s, msgs = sw_actual(body)
                got_sys.append(s)
                return msgs
            check("swe-agent", path, exp, actual, False)
            if system is not None and any(s != system for s in got_sys):
                fail("%s: the system message is not the trajectory's first system entry" % base)
    # a file of another format: exit 1, one line naming the format asked for
    others = {"gemini-cli": ("cline-xml-tools.json", "Gemini CLI chat recording"),
              "cline": ("gemini-cli-session.json", "Cline api_conversation_history.json"),
              "swe-agent": ("cline-native-tools.json", "SWE-agent trajectory")}
    for fmt, (name, what) in sorted(others.items()):
        for cmd in ("import", "replay"):
            rc, out, err = run(QUIRE, [cmd, "--from", fmt, os.path.join(root, name)])
            lines = err.strip().splitlines()
            if rc != 1 or out or len(lines) != 1 or ("not a " + what) not in lines[0] or ":1:1:" not in lines[0]:
                fail("%s --from %s %s: exit %d, stderr %r" % (cmd, fmt, name, rc, err))
    damaged(root, files)
    if FAIL:
        print("%d failure(s)" % len(FAIL))
        sys.exit(1)
    print("all import fidelity checks passed")


QUIRE = None
if __name__ == "__main__":
    main()
