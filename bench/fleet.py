#!/usr/bin/python3
"""Fleet replay throughput: logs per second for the serial CLI loop and for
`python3 -m quire.fleet replay` on a local Dask cluster with 1 and 2 workers.

The corpus is made from the real logs in tests/data: each is imported, and every prefix of it
that ends after a render (one per turn, up to --per-log of them, spread over the log) is a log of
its own, so the corpus has real shapes and sizes (1 to hundreds of turns) and --logs of them.

    bench/fleet.py --quire build/quire [--logs 2000] [--per-log 400]

Needs the Python package installed (PYTHONPATH) or installs it into a temporary folder from
bindings/python against the build of --quire. Prints one table; never asserts a time.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def corpus(quire, out, nlogs, per_log):
    raws = [("claude-code", p) for p in sorted(glob.glob(os.path.join(SRC, "tests/data/corpus/sessions/claude-code/*.jsonl")))]
    raws += [("codex", p) for p in sorted(glob.glob(os.path.join(SRC, "tests/data/corpus/sessions/codex/*.jsonl")))]
    logs = []
    for fmt, p in raws:
        r = subprocess.run([quire, "import", "--from", fmt, "--skip-invalid", p], capture_output=True)
        if r.returncode == 0:
            lines = r.stdout.decode().split("\n")
            ends = [i for i, l in enumerate(lines) if '"type":"render"' in l]
            if ends:
                logs.append((os.path.basename(p), lines, ends))
    made, k = 0, 0
    # round robin over the real logs, prefixes spread evenly over each
    cursors = {name: 0 for name, _, _ in logs}
    while made < nlogs:
        name, lines, ends = logs[k % len(logs)]
        k += 1
        c = cursors[name]
        picks = ends if len(ends) <= per_log else [ends[int(i * len(ends) / per_log)] for i in range(per_log)]
        e = picks[c % len(picks)]
        cursors[name] = c + 1
        with open(os.path.join(out, "%05d__%s" % (made, name)), "w") as f:
            f.write("\n".join(lines[:e + 1]) + "\n")
        made += 1
    return sorted(glob.glob(os.path.join(out, "*")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", default=os.path.join(SRC, "build", "quire"))
    ap.add_argument("--logs", type=int, default=2000)
    ap.add_argument("--per-log", type=int, default=400)
    a = ap.parse_args()
    quire = os.path.abspath(a.quire)
    tmp = tempfile.mkdtemp(prefix="quire-fleet-bench-")
    try:
        env = dict(os.environ)
        try:
            import quire as _q  # noqa: F401
        except ImportError:
            target = os.path.join(tmp, "site")
            penv = dict(env, QUIRE_BUILD_DIR=os.path.dirname(quire), QUIRE_INCLUDE_DIR=os.path.join(SRC, "include"),
                        PIP_DISABLE_PIP_VERSION_CHECK="1")
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
                            "--no-deps", "--target", target, os.path.join(SRC, "bindings", "python")],
                           env=penv, check=True, capture_output=True)
            env["PYTHONPATH"] = target
        cdir = os.path.join(tmp, "corpus")
        os.makedirs(cdir)
        logs = corpus(quire, cdir, a.logs, a.per_log)
        size = sum(os.path.getsize(p) for p in logs)
        rows = []
        t0 = time.perf_counter()
        turns = 0
        for p in logs:
            r = subprocess.run([quire, "replay", "--digest", p], capture_output=True)
            turns += r.stdout.count(b'"type":"request"')
        t = time.perf_counter() - t0
        rows.append(("serial CLI loop (quire replay --digest per log)", t))
        for w in (1, 2):
            out = os.path.join(tmp, "r%d.jsonl" % w)
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "quire.fleet", "replay", "--workers", str(w), "--out", out,
                                os.path.join(cdir, "*")], env=env, capture_output=True, text=True)
            t = time.perf_counter() - t0
            if r.returncode != 0:
                print("fleet failed:", r.stderr[-2000:])
                return 1
            summ = json.loads(r.stdout.strip().splitlines()[-1])["summary"]
            rows.append(("quire.fleet, LocalCluster %d worker%s (incl. cluster start)" % (w, "s" if w > 1 else ""), t))
            rows.append(("  of which replaying, once the cluster is up", summ["seconds"]))
        print("fleet replay: %d logs, %d turns, %.1f MB of logs, %d cores" % (len(logs), turns, size / 1e6,
                                                                              os.cpu_count() or 1))
        print("%-62s %10s %10s" % ("runner", "seconds", "logs/s"))
        for name, t in rows:
            print("%-62s %10.2f %10.1f" % (name, t, len(logs) / t if t else 0))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
