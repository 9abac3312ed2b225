#!/usr/bin/env python3
"""Request estimates against the input tokens that real sessions logged.

The Claude Code and Codex logs in tests/data/corpus/sessions record what every model call
consumed: Claude Code as message.usage (input_tokens + cache_creation_input_tokens +
cache_read_input_tokens, once per message id), Codex as token_count events
(info.last_token_usage.input_tokens, once per change of the running total). Each log is
imported (`quire import`), replayed and every rendered request estimated
(`quire estimate --log`); the k-th estimate answers the k-th logged call.

The logs do not record the harness's system prompt and tool definitions (about 18-50k tokens
on the first call of these sessions), so the estimate cannot see them. What is compared is
what the estimator can see: the growth of the request since the session's first call,
(estimate_k - estimate_1) against (usage_k - usage_1), over the calls that grew by at least
MIN_GROWTH tokens; and, with the first call's unseen part added to every later estimate,
the whole request (usage_1 - estimate_1 + estimate_k against usage_k).

Per provider family the median and p90 of |error| / actual are printed (the table of
docs/compaction.md, "Request estimates"), with the same numbers for a length / 4 counter
(`--bytes-per-token 4`). The test fails when the growth error exceeds the bounds below, and
checks that the bounds are tight enough to catch an estimator that returned 0 or doubled.

Usage: py_estimate_calibration.py --quire BIN --data DIR [--src DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

MIN_GROWTH = 1000
# Bounds on the growth error (|est growth - logged growth| / logged growth), per family:
# median and p90. Measured (docs/compaction.md): see the table printed by this script.
BOUNDS = {"anthropic": (0.10, 0.25), "openai": (0.10, 0.30)}


def claude_code_usage(path):
    out, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("isSidechain") or d.get("type") != "assistant":
                continue
            m = d.get("message")
            if not isinstance(m, dict) or not isinstance(m.get("usage"), dict):
                continue
            key = m.get("id") or d.get("requestId")
            if key in seen:
                continue
            seen.add(key)
            u = m["usage"]
            out.append(u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0) +
                       u.get("cache_read_input_tokens", 0))
    return out


def codex_usage(path):
    out, last = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            p = d.get("payload") or {}
            if d.get("type") != "event_msg" or p.get("type") != "token_count" or not p.get("info"):
                continue
            total = json.dumps(p["info"].get("total_token_usage"), sort_keys=True)
            if total == last:
                continue
            last = total
            out.append(p["info"]["last_token_usage"]["input_tokens"])
    return out


def redacted(path):
    """A log whose texts were replaced by "[REDACTED_X len=N ...]" markers: the usage it logged
    is for texts the log no longer holds."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return text.count("[REDACTED_") >= 5 and "len=" in text


def run(cmd):
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode != 0:
        raise SystemExit("FAIL: %s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.decode()[:300]))
    return r.stdout


def estimates(quire, log, extra):
    out = run([quire, "estimate", "--log"] + extra + [log])
    return [json.loads(l) for l in out.decode().splitlines() if l.strip()]


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def errors(usage, est, starts, scale=1.0):
    """(growth errors, whole-request errors) of one session. starts: the calls that open a
    segment (the first call, and the first call after each compaction): growth is measured
    from the segment's first call."""
    g, w = [], []
    e = [x * scale for x in est]
    b = 0
    for k in range(len(usage)):
        if k in starts:
            b = k
            continue
        off = usage[b] - e[b]
        grow = usage[k] - usage[b]
        if grow >= MIN_GROWTH:
            g.append(abs((e[k] - e[b]) - grow) / grow)
        w.append(abs(e[k] + off - usage[k]) / usage[k])
    return g, w


def segment_starts(log, est):
    """Indexes of the estimates that follow a compact line of the log (and 0)."""
    compact_lines = []
    with open(log, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.startswith('{"type":"compact"'):
                compact_lines.append(i)
    starts = {0}
    for k in range(1, len(est)):
        if any(est[k - 1]["line"] < c < est[k]["line"] for c in compact_lines):
            starts.add(k)
    return starts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--src")
    a = ap.parse_args()
    base = os.path.join(a.data, "corpus", "sessions")
    fams = {}
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, sub, reader in (("claude-code", "claude-code", claude_code_usage), ("codex", "codex", codex_usage)):
            for name in sorted(os.listdir(os.path.join(base, sub))):
                path = os.path.join(base, sub, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    if "len=" in f.read() and redacted(path):
                        print("%-48s skipped: its texts are redacted (only their lengths are logged)" % name[:48])
                        continue
                usage = reader(path)
                log = os.path.join(tmp, name + ".log")
                with open(log, "wb") as f:
                    f.write(run([a.quire, "import", "--skip-invalid", "--from", fmt, path]))
                est = estimates(a.quire, log, [])
                est4 = estimates(a.quire, log, ["--bytes-per-token", "4"])
                if len(est) != len(usage):
                    failures.append("%s: %d rendered requests, %d logged calls" % (name, len(est), len(usage)))
                    continue
                if any(e["total"] <= 0 for e in est):
                    failures.append("%s: an estimate of 0 tokens" % name)
                fam = est[0]["family"] if est else "?"
                F = fams.setdefault(fam, {"sessions": 0, "calls": 0, "g": [], "w": [], "g4": [], "w4": [],
                                          "g0": [], "g2": [], "first": []})
                F["sessions"] += 1
                F["calls"] += len(usage)
                tot = [e["total"] for e in est]
                starts = segment_starts(log, est)
                g, w = errors(usage, tot, starts)
                F["g"] += g
                F["w"] += w
                g4, w4 = errors(usage, [e["total"] for e in est4], starts)
                F["g4"] += g4
                F["w4"] += w4
                F["g0"] += errors(usage, tot, starts, 0.0)[0]
                F["g2"] += errors(usage, tot, starts, 2.0)[0]
                if usage:
                    F["first"].append(usage[0] - tot[0])
                print("%-48s %-9s calls %3d  first call: logged %6d, estimated %6d  growth err median %5.1f%% max %5.1f%%"
                      % (name[:48], fam, len(usage), usage[0] if usage else 0, tot[0] if tot else 0,
                         100 * pct(g, 0.5) if g else float("nan"), 100 * max(g) if g else float("nan")))
    print()
    print("| family | sessions | calls | growth compared | growth: median | p90 | whole request: median | p90 |"
          " length/4 growth: median | p90 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for fam in sorted(fams):
        F = fams[fam]
        print("| %s | %d | %d | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |" % (
            fam, F["sessions"], F["calls"], len(F["g"]), 100 * pct(F["g"], .5), 100 * pct(F["g"], .9),
            100 * pct(F["w"], .5), 100 * pct(F["w"], .9), 100 * pct(F["g4"], .5), 100 * pct(F["g4"], .9)))
    print()
    for fam in sorted(fams):
        F = fams[fam]
        if fam not in BOUNDS:
            failures.append("no bound for family %s" % fam)
            continue
        bm, b90 = BOUNDS[fam]
        if len(F["g"]) < 10:
            failures.append("%s: only %d calls to compare" % (fam, len(F["g"])))
            continue
        m, p = pct(F["g"], .5), pct(F["g"], .9)
        if m > bm or p > b90:
            failures.append("%s: growth error median %.1f%% / p90 %.1f%% over the bound %.0f%% / %.0f%%"
                            % (fam, 100 * m, 100 * p, 100 * bm, 100 * b90))
        # the bounds must catch an estimator that returned 0 or doubled
        for label, xs in (("an estimator returning 0", F["g0"]), ("a doubled estimator", F["g2"])):
            if pct(xs, .5) <= bm:
                failures.append("%s: the bound %.0f%% would not catch %s (median %.1f%%)"
                                % (fam, 100 * bm, label, 100 * pct(xs, .5)))
    for f in failures:
        print("FAIL: " + f)
    n = sum(len(F["g"]) for F in fams.values())
    print("%d passed, %d failed" % (n if not failures else 0, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
