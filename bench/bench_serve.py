#!/usr/bin/python3
"""Per-call cost of a session render from another language.

1. `quire serve` over a pipe: the round trip of one `render` request for a session whose request
   body is about 5 KB (write the line, the server renders and writes the reply, read the reply
   line), median over many calls; beside it the round trip of `estimate` (almost no work: what
   the pipe and the two processes' wake-ups cost).
2. With --python DIR (a folder where the `quire` package of bindings/python is installed, e.g.
   by `pip install --no-build-isolation --target DIR bindings/python`): `Session.render()` in
   process on the same session.
   Then, when bench/bench_serve_handle is built beside quire, the same two requests handled in
   process by quire_server_handle (the server's own share, without the pipe), and
   quire_session_render alone on the same session.
3. With --node DIR (bindings/node with its addon built, `npm ci` in it): `new Session()` /
   `s.render()` in process on the same session.

Prints one line per measurement. Timing thresholds never appear in tests.

    bench/bench_serve.py --quire build/quire [--calls 20000] [--python DIR] [--node DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--quire", default="build/quire")
ap.add_argument("--calls", type=int, default=20000)
ap.add_argument("--python", help="a folder holding the installed quire Python package")
ap.add_argument("--node", help="bindings/node with its addon built")
a = ap.parse_args()

SYSTEM = "You are a coding agent. Work in small steps, run the tests after every change."
TOOLS = [{"name": "read", "description": "Read a file or list a directory",
          "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]


def messages():
    """A session of about 5 KB: user asks, tool calls and results."""
    out = [{"role": "user", "content": "List src/ and tell me which files are longest."}]
    i = 0
    while len(json.dumps(out)) < 4600:
        cid = "call_%04d" % i
        out.append({"role": "assistant", "content": [
            {"type": "text", "text": "Reading file number %d to check its length." % i},
            {"type": "toolCall", "id": cid, "name": "read", "input": {"path": "src/file_%d.c" % i}}]})
        out.append({"role": "tool", "content": [{"type": "toolResult", "toolCallId": cid,
                    "content": "int f%d(void) { return %d; } /* %s */" % (i, i, "x" * 120)}]})
        i += 1
    out.append({"role": "user", "content": "Now summarise."})
    return out


MSGS = messages()
CONFIG = {"sessionId": "bench", "target": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
          "system": SYSTEM, "tools": TOOLS}


def median_us(samples):
    return statistics.median(samples) * 1e6


def bench_serve():
    p = subprocess.Popen([a.quire, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    wfd, rf = p.stdin.fileno(), os.fdopen(p.stdout.fileno(), "rb", buffering=1 << 16, closefd=False)

    def call(line):
        os.write(wfd, line)
        return rf.readline()

    def req(**kw):
        return (json.dumps(kw, separators=(",", ":")) + "\n").encode()

    call(req(op="open", session="s", config=CONFIG))
    call(req(op="append", session="s", message=MSGS))
    render = req(id=1, op="render", session="s")
    reply = call(render)
    body_len = len(json.dumps(json.loads(reply)["body"], separators=(",", ":")))
    estimate = req(id=2, op="estimate", session="s")
    for _ in range(500):
        call(render)
        call(estimate)
    rs, es = [], []
    for _ in range(a.calls):
        t0 = time.perf_counter()
        call(render)
        t1 = time.perf_counter()
        call(estimate)
        t2 = time.perf_counter()
        rs.append(t1 - t0)
        es.append(t2 - t1)
    p.stdin.close()
    p.wait()
    print("serve render round trip (pipe, %d-byte body, %d-byte reply): median %.1f us, p90 %.1f us over %d calls"
          % (body_len, len(reply), median_us(rs), sorted(rs)[int(len(rs) * 0.9)] * 1e6, len(rs)))
    print("serve estimate round trip (pipe, the protocol's floor): median %.1f us" % median_us(es))


def bench_python():
    sys.path.insert(0, a.python)
    import quire  # noqa: E402
    s = quire.Session(provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM, tools=TOOLS)
    s.append(MSGS)
    body = s.render().body
    for _ in range(500):
        s.render()
    ts = []
    for _ in range(a.calls):
        t0 = time.perf_counter()
        r = s.render()
        r.body  # noqa: B018 (the body bytes, as a host posts them)
        ts.append(time.perf_counter() - t0)
    print("python Session.render() + .body (%d-byte body): median %.2f us over %d calls"
          % (len(body), median_us(ts), len(ts)))


NODE = r"""
const { Session } = require(process.argv[1]);
const cfg = JSON.parse(process.argv[2]), msgs = JSON.parse(process.argv[3]), calls = +process.argv[4];
const s = new Session({ provider: 'anthropic', model: 'claude-sonnet-4-5', system: cfg.system, tools: cfg.tools });
s.append(msgs);
const len = s.render().body.length;
for (let i = 0; i < 500; i++) s.render();
const ts = new Float64Array(calls);
for (let i = 0; i < calls; i++) {
  const t0 = process.hrtime.bigint();
  const r = s.render(); r.body;
  ts[i] = Number(process.hrtime.bigint() - t0) / 1000;
}
ts.sort();
console.log(`node Session.render() + .body (${len}-byte body): median ${ts[calls >> 1].toFixed(2)} us over ${calls} calls`);
"""


def bench_node():
    r = subprocess.run(["node", "-e", NODE, os.path.abspath(a.node), json.dumps(CONFIG), json.dumps(MSGS),
                        str(a.calls)], capture_output=True, text=True)
    print(r.stdout.strip() or "node: " + r.stderr.strip()[-500:])


def bench_handle():
    """The server in process (bench/bench_serve_handle, built beside quire): no pipe."""
    exe = os.path.join(os.path.dirname(os.path.abspath(a.quire)), "bench", "bench_serve_handle")
    if not os.path.exists(exe):
        return
    import tempfile
    d = tempfile.mkdtemp(prefix="bench-serve-")
    cfg, msgs = os.path.join(d, "config.json"), os.path.join(d, "messages.json")
    with open(cfg, "w") as f:
        json.dump(CONFIG, f)
    with open(msgs, "w") as f:
        json.dump(MSGS, f)
    try:
        r = subprocess.run([exe, cfg, msgs, str(a.calls)], capture_output=True, text=True)
        print(r.stdout.strip() or r.stderr.strip())
    finally:
        os.unlink(cfg)
        os.unlink(msgs)
        os.rmdir(d)


bench_serve()
bench_handle()
if a.python:
    bench_python()
if a.node:
    bench_node()
