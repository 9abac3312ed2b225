"""Responses in (DESIGN 12), over the fixtures in golden/respond/:

1. every stream fixture fed one byte at a time and in random splits (fixed
   seeds) gives exactly the golden outputs (message, usage, events, or the
   same error naming the same event and byte);
2. a body and the stream of the same answer decode to the same message;
3. the round trip the loop does every turn: each decoded message, appended to
   a transcript (with results for its tool calls), renders for its own
   provider into a request that `quire validate` accepts. Messages that use
   the DESIGN 2.1 vocabulary still being added to the transcript parser
   (PENDING) must fail with that parser's "unknown" error, so this list is
   revisited the day they start to pass;
4. the C API and the CLI agree on malformed input (an empty stream, feeding
   after an error)."""
import argparse, json, os, random, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--quire", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--data")
a = ap.parse_args()
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


ROOT = os.path.join(a.src, "golden", "respond")
cases = []
for dialect in sorted(os.listdir(ROOT)):
    for name in sorted(os.listdir(os.path.join(ROOT, dialect))):
        d = os.path.join(ROOT, dialect, name)
        if os.path.isfile(os.path.join(d, "case.json")):
            cases.append((dialect + "/" + name, d, json.load(open(os.path.join(d, "case.json")))))
check(len({c[0].split("/")[0] for c in cases}) == 7, "fixtures for all seven dialects")


def run(d, args):
    with tempfile.TemporaryDirectory() as td:
        for f in os.listdir(d):
            if f.startswith("expected") or f == "case.json":
                continue
            with open(os.path.join(d, f), "rb") as src, open(os.path.join(td, f), "wb") as dst:
                dst.write(src.read())
        r = subprocess.run([a.quire] + args, cwd=td, capture_output=True)
        outs = {}
        for f in ("usage.json", "events.jsonl"):
            p = os.path.join(td, f)
            if os.path.exists(p):
                outs[f] = open(p, "rb").read()
        return r.returncode, r.stdout, r.stderr, outs


def expected(d, spec):
    exp = {f: open(os.path.join(d, "expected", f), "rb").read() for f in spec["files"]
           if os.path.exists(os.path.join(d, "expected", f))}
    return (int(open(os.path.join(d, "expected.exit")).read()), open(os.path.join(d, "expected.stdout"), "rb").read(),
            open(os.path.join(d, "expected.stderr"), "rb").read(), exp)


# 1. chunking does not matter
for name, d, spec in cases:
    if "--stream" not in spec["args"]:
        continue
    code, out, err, files = expected(d, spec)
    size = os.path.getsize(os.path.join(d, spec["args"][-1]))
    rng = random.Random(name)
    splits = ["1"] + [",".join(str(rng.randint(1, max(1, size // 3))) for _ in range(rng.randint(1, 6))) for _ in range(4)]
    for sp in splits:
        args = spec["args"][:-1] + ["--chunks", sp, spec["args"][-1]]
        got = run(d, args)
        if code != 0:
            check(got[0] == code and got[2] == err, "%s --chunks %s: same error (%r)" % (name, sp, got[2][:200]))
        else:
            check(got[:2] == (code, out) and got[3] == files, "%s --chunks %s: same message, usage and events" % (name, sp))

# 2. a body and its stream agree
PAIRS = [("anthropic/json_tool_thinking", "anthropic/stream_tool_thinking"),
         ("anthropic/json_server_tool", "anthropic/stream_server_tool"),
         ("openai_chat/json_tool_calls", "openai_chat/stream_tool_calls"),
         ("openai_responses/json_text", "openai_responses/stream_text"),
         ("openai_responses/json_reasoning_tool", "openai_responses/stream_reasoning_tool"),
         ("gemini/json_thinking_call", "gemini/stream_thinking_call"),
         ("gemini/json_text_signature", "gemini/stream_trailing_signature"),
         ("bedrock/json_tool_reasoning", "bedrock/stream_tool")]
byname = {c[0]: c for c in cases}
for j, s in PAIRS:
    # the same JSON; tool inputs keep the provider's own spacing, which differs between
    # a body (an input object) and a stream (input text deltas)
    mj = json.loads(open(os.path.join(byname[j][1], "expected.stdout"), "rb").read(), parse_float=str)
    ms = json.loads(open(os.path.join(byname[s][1], "expected.stdout"), "rb").read(), parse_float=str)
    check(mj == ms and mj["role"] == "assistant" and mj["content"], "%s and %s decode to the same message" % (j, s))

# 3. the round trip: decoded message -> transcript -> render -> validate
PENDING = {  # DESIGN 2.1 vocabulary the transcript parser does not read yet: none left
}
roundtrips = 0
with tempfile.TemporaryDirectory() as td:
    for name, d, spec in cases:
        if open(os.path.join(d, "expected.exit")).read() != "0\n":
            continue
        provider = spec["args"][spec["args"].index("--provider") + 1]
        m = json.loads(open(os.path.join(d, "expected.stdout")).read())
        check(m["content"] != [], "%s: an answer never decodes to no content (an empty one is one empty text block)" % name)
        calls = [b for b in m["content"] if b["type"] == "toolCall"]
        msgs = [{"role": "user", "content": "hi"}, m]
        if calls:
            msgs.append({"role": "tool", "content": [{"type": "toolResult", "toolCallId": b["id"], "content": "ok"} for b in calls]})
        else:
            msgs.append({"role": "user", "content": "go on"})
        # one tool per name (parallel calls of one tool name it once: a list naming a tool twice is an error)
        names = list(dict.fromkeys(b["name"] for b in calls if b.get("kind") != "custom"))
        t = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names], "messages": msgs}
        tp, rp = os.path.join(td, "t.json"), os.path.join(td, "req.json")
        json.dump(t, open(tp, "w"))
        r = subprocess.run([a.quire, "render", "--provider", provider, "-o", rp, tp], capture_output=True, text=True)
        if name in PENDING:
            check(r.returncode == 1 and PENDING[name] in r.stderr,
                  "%s: still pending on the 2.1 vocabulary (%s); got: %s" % (name, PENDING[name], r.stderr.strip()))
            continue
        check(r.returncode == 0, "%s: the decoded message renders for %s: %s" % (name, provider, r.stderr.strip()))
        if r.returncode == 0:
            v = subprocess.run([a.quire, "validate", "--provider", provider, rp], capture_output=True, text=True)
            check(v.returncode == 0, "%s: the rendered request validates: %s" % (name, v.stderr.strip()))
            roundtrips += 1
check(roundtrips >= 30, "at least 30 decoded messages round-trip today (%d)" % roundtrips)

# 4. edge cases of the command
with tempfile.TemporaryDirectory() as td:
    p = os.path.join(td, "empty.sse")
    open(p, "w").write("")
    r = subprocess.run([a.quire, "accept", "--provider", "anthropic", "--stream", p], capture_output=True, text=True)
    check(r.returncode == 1 and "ended before message_start" in r.stderr, "an empty stream is an error: %s" % r.stderr)
    r = subprocess.run([a.quire, "accept", "--provider", "anthropic", "-o", os.path.join(td, "out.json"), p],
                       capture_output=True, text=True)
    check(r.returncode == 1 and not os.path.exists(os.path.join(td, "out.json")), "no output file on failure")
    r = subprocess.run([a.quire, "accept", "--provider", "nope", p], capture_output=True, text=True)
    check(r.returncode == 1 and 'unknown provider "nope"' in r.stderr, "unknown provider named: %s" % r.stderr)
    r = subprocess.run([a.quire, "accept", "--provider", "anthropic", "--chunks", "0", "--stream", p], capture_output=True, text=True)
    check(r.returncode == 2, "--chunks 0 is a usage error")

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
