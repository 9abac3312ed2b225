"""quire's benchmark table. Every row is the median of several runs made in
this invocation, side by side with the peers where the performance issue asks,
ratios computed from this run's numbers. MB = 10^6 bytes.

usage: bench/run.py --build DIR [--quick]"""
import argparse, json, os, platform, statistics, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build-bench")
ap.add_argument("--quick", action="store_true", help="fewer runs: a smoke test")
a = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(root)
B = a.build
QUIRE = os.path.join(B, "quire")
data = "bench/data"
os.makedirs(data, exist_ok=True)
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
inputs = {"200 KB": f"{data}/transcript-200k.json", "3 MB": f"{data}/transcript-3m.json"}
sizes = {"200 KB": 200000, "3 MB": 3000000}
for k, f in inputs.items():
    if not os.path.exists(f):
        subprocess.run([PY, "bench/gen.py", "--size", str(sizes[k]), "--out", f], check=True)
session = f"{data}/session-1000.jsonl"
if not os.path.exists(session):
    subprocess.run([PY, "bench/gen.py", "--session", "1000", "--out", session], check=True)
quick = a.quick
rows = []

def row(what, size, quire, peer="", ratio=""):
    rows.append((what, size, quire, peer, ratio))
    print(f"  .. {what} [{size}]: {quire} | {peer} {ratio}", file=sys.stderr)

def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[-1]
    try:
        return json.loads(r.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, "no JSON output"

def wall(cmd, runs, stdin=None):
    """median wall time (s) of a whole process"""
    ts = []
    for i in range(runs + 1):
        fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t1 = time.perf_counter()
        if stdin:
            fin.close()
        if r.returncode != 0:
            return None, r.stderr.decode(errors="replace").strip()[-200:]
        if i:
            ts.append(t1 - t0)
    return statistics.median(ts), None

def peak_rss_kb(cmd):
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    try:
        return int(r.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None

def node_peer(script, args, f, runs, warm):
    # --expose-gc: a peer script may collect the heap between its timed phases (settle())
    return run_json(["node", "--expose-gc", script] + args + ["--runs", str(runs), "--warmup", str(warm), f])

def fmt_ms(s):
    return f"{s * 1e3:.2f} ms"

have_node = subprocess.run(["sh", "-c", "command -v node"], capture_output=True).returncode == 0 and os.path.isdir("bench/peers/node_modules")

# 1. JSON parse
for k, f in inputs.items():
    j, err = run_json([f"{B}/bench/bench_json", f, "30" if quick else "200"])
    row("1. JSON parse (quire codec)", k, f"{j['parse_mb_s']:.0f} MB/s ({j['parse_ms']:.2f} ms)" if j else f"n/a: {err}")

# 2. Render to Anthropic: in-process and whole-process, vs the AI SDK
for k, f in inputs.items():
    runs = 20 if quick else (300 if k == "200 KB" else 60)
    q, err = run_json([f"{B}/bench/bench_render", f, "anthropic", str(runs)])
    p, perr = node_peer("bench/peers/aisdk_render.mjs", ["--provider", "anthropic"], f, 10 if quick else (100 if k == "200 KB" else 30), 5) if have_node else (None, "node peers not installed")
    qs = f"{q['mb_per_s']:.0f} MB/s, {q['median_ms']:.3f} ms/request" if q else f"n/a: {err}"
    ps = f"{p['mb_per_s']:.0f} MB/s, {p['median_ms']:.2f} ms" if p else f"n/a: {perr}"
    ratio = f"{p['median_ms'] / q['median_ms']:.1f}x" if q and p else ""
    row("2a. Render -> Anthropic, in-process (parse + build + serialise)", k, qs, "AI SDK: " + ps, ratio)
    qw, err = wall([QUIRE, "render", "--provider", "anthropic", f], 5 if quick else 20)
    pw, perr = wall(["node", "bench/peers/aisdk_render.mjs", "--provider", "anthropic", "--runs", "1", "--warmup", "0", f], 3 if quick else 7) if have_node else (None, "node peers not installed")
    if k == "200 KB" and have_node and os.path.exists(f"{B}/node/build/Release/quire.node"):
        n, nerr = node_peer("bench/peers/aisdk_render.mjs", ["--provider", "anthropic", "--quire-node", os.path.abspath(f"{B}/node")],
                            f, 10 if quick else 100, 10)
        if n:
            row("2c. Render -> Anthropic from Node, same process: quire's Node package (from the bytes / from a JS string / bytes into a reused buffer)", k,
                f"{n['quire_node_buffer_ms']:.3f} ms / {n['quire_node_string_ms']:.3f} ms / {n['quire_node_into_ms']:.3f} ms",
                f"AI SDK: {n['median_ms']:.2f} ms",
                f"{n['median_ms'] / n['quire_node_buffer_ms']:.1f}x / {n['median_ms'] / n['quire_node_string_ms']:.1f}x / "
                f"{n['median_ms'] / n['quire_node_into_ms']:.1f}x")
            row("2d. One loop turn from Node on the same transcript: a quire Session (append, render, accept) vs the AI SDK converting it (new body / into a reused buffer)", k,
                f"{n['quire_node_session_turn_ms']:.3f} ms / {n['quire_node_session_into_ms']:.3f} ms", f"AI SDK: {n['median_ms']:.2f} ms",
                f"{n['median_ms'] / n['quire_node_session_turn_ms']:.1f}x / {n['median_ms'] / n['quire_node_session_into_ms']:.1f}x")
        else:
            row("2c. Render -> Anthropic from Node, same process", k, f"n/a: {nerr}")
    row("2b. Render -> Anthropic, whole process", k, fmt_ms(qw) if qw else f"n/a: {err}",
        "AI SDK (node): " + (fmt_ms(pw) if pw else f"n/a: {perr}"), f"{pw / qw:.0f}x" if qw and pw else "")

# 3. Other dialects
for prov in ("openai", "gemini", "openai_responses", "bedrock", "mistral", "ollama"):
    f = inputs["3 MB"]
    q, err = run_json([f"{B}/bench/bench_render", f, prov, "20" if quick else "60"])
    row(f"3. Render -> {prov}, in-process", "3 MB", f"{q['mb_per_s']:.0f} MB/s, {q['median_ms']:.2f} ms" if q else f"n/a: {err[:60]}")

# 4. Compaction to 20,000 tokens vs LangChain trimMessages (both in-process, from bytes)
for k, f in inputs.items():
    q, err = run_json([f"{B}/bench/bench_compact", f, "20000", "5" if quick else "30"])
    p, perr = node_peer("bench/peers/langchain_trim.mjs", [], f, 5 if quick else 20, 3) if have_node else (None, "node peers not installed")
    qs = f"{q['median_ms']:.2f} ms" if q else f"n/a: {err[:60]}"
    row("4a. Compact to 20k tokens, in-process (quire: parse + estimate + 3 stages + write; LangChain: chars/4 counter)",
        k, qs, "trimMessages: " + (f"{p['median_ms']:.2f} ms" if p else f"n/a: {perr}"),
        f"{p['median_ms'] / q['median_ms']:.1f}x" if q and p else "")
    q4, err4 = run_json([f"{B}/bench/bench_compact", f, "20000", "5" if quick else "30", "bytes4"])
    row("4e. Compact to 20k tokens, in-process, the same rough counter on both sides (quire: bytes/4, as compact --bytes-per-token 4; LangChain: chars/4)",
        k, f"{q4['median_ms']:.3f} ms" if q4 else f"n/a: {err4[:60]}",
        "trimMessages: " + (f"{p['median_ms']:.2f} ms" if p else f"n/a: {perr}"),
        f"{p['median_ms'] / q4['median_ms']:.1f}x" if q4 and p else "")
    if k == "3 MB" and have_node and not quick:
        p2, perr2 = node_peer("bench/peers/langchain_trim.mjs", ["--counter", "codepoints", "--timeout", "120"], f, 1, 0)
        row("4b. Compact, LangChain with a counter that reads every character", k, qs,
            "trimMessages: " + (f"{p2['median_ms']:.0f} ms" if p2 else f"n/a: {perr2}"),
            f"{p2['median_ms'] / q['median_ms']:.0f}x" if q and p2 else "")
    if have_node and not quick:
        big = k == "3 MB"
        p3, perr3 = node_peer("bench/peers/langchain_trim.mjs", ["--counter", "stringify", "--timeout", "600"], f,
                              3 if big else 20, 1 if big else 3)
        row("4d. Compact, LangChain with a JSON.stringify / 4 counter", k, qs,
            "trimMessages: " + (f"{p3['median_ms']:.1f} ms" if p3 else f"n/a: {perr3}"),
            f"{p3['median_ms'] / q['median_ms']:.0f}x" if q and p3 else "")
    qw, err = wall([QUIRE, "compact", "--budget", "20000", "-o", "/dev/null", f], 5 if quick else 20)
    row("4c. Compact to 20k tokens, whole process", k, fmt_ms(qw) if qw else f"n/a: {err[:60]}")

# 5. Replay of a 1,000-turn session
rw, err = wall([QUIRE, "replay", "-o", "/dev/null", session], 2 if quick else 5)
row("5a. Replay 1,000 turns (reminder every 5 turns, 1 compaction), whole process, bodies written", "session",
    fmt_ms(rw) if rw else f"n/a: {err[:60]}")
j, err = run_json([f"{B}/bench/bench_replay", session])
if j:
    row("5b. Replay in-process: total; request bytes produced", "session",
        f"{j['total_ms']:.0f} ms; {j['request_bytes'] / 1e9:.2f} GB ({j['request_bytes'] / j['total_ms'] / 1e3:.0f} MB/s)")
    row("5c. Time per turn at turn 100 / 500 / 1000 (request size)", "session",
        " / ".join(f"{j.get(f'turn_{n}_us', 0):.0f} us ({j.get(f'turn_{n}_bytes', 0) / 1e6:.2f} MB)" for n in (100, 500, 1000)))
    row("5d. Cost per request byte at turn 100 / 500 / 1000", "session",
        " / ".join(f"{j.get(f'turn_{n}_ns_per_byte', 0):.2f} ns" for n in (100, 500, 1000)))
else:
    row("5b. Replay in-process", "session", f"n/a: {err[:60]}")

# 6. Peak RSS
for k, f in inputs.items():
    kb = peak_rss_kb([QUIRE, "render", "--provider", "anthropic", "-o", "/dev/null", f])
    size = os.path.getsize(f)
    row("6a. Peak RSS, render", k, f"{kb / 1024:.1f} MiB = {kb * 1024 / size:.1f}x input" if kb else "n/a")
kb = peak_rss_kb([QUIRE, "replay", session])
size = os.path.getsize(session)
row("6b. Peak RSS, replay 1,000 turns", "session", f"{kb / 1024:.1f} MiB = {kb * 1024 / size:.1f}x input" if kb else "n/a")

# 7. Decoding responses (JSON bodies whole, streams fed in 4 KB chunks) vs the AI SDK's own
resp = os.path.join(data, "responses")
if not os.path.exists(os.path.join(resp, "response-anthropic.json")):
    subprocess.run([PY, "bench/gen_responses.py", "--out-dir", resp], check=True)
for prov, model, f, chunk, peer in (("anthropic", "claude-sonnet-4-5", "anthropic.json", 0, "anthropic"),
                                    ("anthropic", "claude-sonnet-4-5", "anthropic.sse", 4096, "anthropic"),
                                    ("openai", "gpt-4o", "openai_chat.json", 0, "openai"),
                                    ("openai", "gpt-4o", "openai_chat.sse", 4096, "openai"),
                                    ("openai_responses", "gpt-5", "openai_responses.json", 0, None),
                                    ("gemini", "gemini-2.5-pro", "gemini.json", 0, None)):
    path = os.path.join(resp, "response-" + f)
    q, err = run_json([f"{B}/bench/bench_respond", prov, model, path, str(chunk), "30" if quick else "300"])
    p, perr = (None, "")
    if peer and have_node:
        p, perr = run_json(["node", "bench/peers/aisdk_decode.mjs", "--provider", peer, "--chunk", str(chunk),
                            "--runs", "10" if quick else "100", "--warmup", "10", path])
    what = "7. Decode %s %s%s" % (prov, "stream (4 KB chunks)" if chunk else "JSON body", "" if peer else " (no peer)")
    qs = f"{q['mb_per_s']:.0f} MB/s, {q['median_ms']:.3f} ms" if q else f"n/a: {err[:60]}"
    ps = ("AI SDK: " + (f"{p['mb_per_s']:.0f} MB/s, {p['median_ms']:.2f} ms" if p else f"n/a: {perr}")) if peer else ""
    row(what, f"{os.path.getsize(path) // 1000} KB", qs, ps, f"{p['median_ms'] / q['median_ms']:.0f}x" if q and p else "")

# 8. Sessions: incremental rendering (bench_session), replay --digest 1,000 vs 4,000 vs 10,000 turns
session4 = f"{data}/session-4000.jsonl"
if not os.path.exists(session4):
    subprocess.run([PY, "bench/gen.py", "--session", "4000", "--out", session4], check=True)
session10 = f"{data}/session-10000.jsonl"
if not os.path.exists(session10):
    subprocess.run([PY, "bench/gen.py", "--session", "10000", "--out", session10], check=True)
j, err = run_json([f"{B}/bench/bench_session", session, session4, session10])
if j:
    row("8a. Session render per turn at turn 10 / 100 / 1000, segments (body size)", "session",
        " / ".join(f"{j.get(f'render_us_at_{n}', 0):.0f} us ({j.get(f'body_bytes_at_{n}', 0) / 1e6:.2f} MB)" for n in (10, 100, 1000)))
    row("8b. Last turn again: segments / contiguous body; stateless quire_render of the same turn", "session",
        f"{j['segments_us_last']:.0f} us / {j['contiguous_us_last']:.0f} us (memcpy of the body: {j['memcpy_us_last']:.0f} us)",
        f"stateless: {j['stateless_us_last']:.0f} us", f"{j['stateless_us_last'] / max(j['segments_us_last'], 1e-3):.1f}x")
    row("8c. Replay --digest in-process (CPU): 1,000 turns / 4,000 turns / 10,000 turns", "session",
        f"{j['replay_digest_ms']:.0f} ms / {j['replay_digest_ms_longer']:.0f} ms = {j['replay_ratio']:.2f}x"
        + (f" / {j['replay_digest_ms_longest']:.0f} ms = {j['replay_ratio_longest']:.2f}x" if 'replay_ratio_longest' in j else ""))
else:
    row("8. Sessions", "session", f"n/a: {err[:60]}")

cpu = ""
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except (OSError, StopIteration):
    pass
print(f"\nquire benchmarks — {cpu or platform.processor()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}")
print("inputs: bench/gen.py (deterministic); peers: bench/peers/package.json (pinned)\n")
w = [max(len(r[i]) for r in rows + [("what", "size", "quire", "peer", "ratio")]) for i in range(5)]
hdr = ("what", "size", "quire", "peer", "peer/quire")
print("| " + " | ".join(h.ljust(w[i]) for i, h in enumerate(hdr)) + " |")
print("|" + "|".join("-" * (x + 2) for x in w) + "|")
for r in rows:
    print("| " + " | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)) + " |")
