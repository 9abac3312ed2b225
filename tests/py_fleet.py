#!/usr/bin/python3
"""Fleet replay on Dask (`python3 -m quire.fleet`, bindings/python/quire/fleet.py).

Installs the Python package the documented way into a temporary --target, builds a corpus
(the real logs of tests/data imported as session logs, the replay goldens' session logs and
generated sessions), then on a local Dask cluster with 2 workers:
  - `replay`: one ok line per log whose turns and digests equal `quire replay --digest`;
  - a second `replay` into the same results file skips every log (resumable);
  - `check --against` after a change planted in one log at a known turn: exit 3, that log is a
    mismatch with that first differing turn, every other log ok;
  - a malformed log is an error line carrying the quire error fields (line, pointer, message);
  - `import --from claude-code` writes the same session logs as `quire import`.
Needs Debian's python3-distributed (the set-up installs it); prints `N passed, M failed`.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--quire", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--data", required=True)
a = ap.parse_args()
Q = os.path.abspath(a.quire)
build = os.path.dirname(Q)
src = os.path.abspath(a.src)
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, **kw)


try:
    import distributed  # noqa: F401  (Debian's python3-distributed)
except ImportError:
    print("fleet: python3-distributed is not installed; run: sudo apt-get install -y python3-distributed")
    print("0 passed, 1 failed")
    sys.exit(1)

san = ""
try:
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith("QUIRE_SANITIZER:"):
            san = line.split("=", 1)[1].strip()
except OSError:
    pass
if san:
    # the package links the library of this build; under a sanitizer build the interpreter would
    # need the sanitizer runtime preloaded in every Dask worker process: the plain build covers it
    print("fleet: sanitizer build (%s): covered by the plain build" % san)
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)

tmp = tempfile.mkdtemp(prefix="quire-fleet-")
try:
    pkg = os.path.join(tmp, "pkg")
    shutil.copytree(os.path.join(src, "bindings", "python"), pkg,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    target = os.path.join(tmp, "site")
    env = dict(os.environ, QUIRE_BUILD_DIR=build, QUIRE_INCLUDE_DIR=os.path.join(src, "include"),
               PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    r = run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
             "--no-deps", "--target", target, pkg], env=env, text=True)
    check(r.returncode == 0, "pip install bindings/python: " + r.stderr[-2000:])
    if r.returncode != 0:
        raise SystemExit
    fenv = dict(env, PYTHONPATH=target)

    corpus = os.path.join(tmp, "corpus")
    os.makedirs(corpus)
    raw_cc = sorted(glob.glob(os.path.join(a.data, "corpus", "sessions", "claude-code", "*.jsonl")))
    raw_cx = sorted(glob.glob(os.path.join(a.data, "corpus", "sessions", "codex", "*.jsonl")))
    for fmt, files in (("claude-code", raw_cc), ("codex", raw_cx)):
        for p in files:
            out = run([Q, "import", "--from", fmt, "--skip-invalid", p])
            if out.returncode == 0 and out.stdout.count(b'"type":"render"'):
                with open(os.path.join(corpus, fmt + "__" + os.path.basename(p)), "wb") as f:
                    f.write(out.stdout)
    for p in sorted(glob.glob(os.path.join(src, "golden", "replay", "*", "session.jsonl"))):
        if run([Q, "replay", "--digest", p]).returncode == 0:
            shutil.copy(p, os.path.join(corpus, "golden__" + os.path.basename(os.path.dirname(p)) + ".jsonl"))
    for seed in range(12):
        g = run([sys.executable, os.path.join(src, "bench", "gen.py"), "--session", str(5 + seed * 3),
                 "--seed", str(seed + 1)])
        with open(os.path.join(corpus, "gen__%02d.jsonl" % seed), "wb") as f:
            f.write(g.stdout)
    logs = sorted(glob.glob(os.path.join(corpus, "*.jsonl")))
    check(len(logs) >= 25, "a corpus of at least 25 logs (%d)" % len(logs))

    fleet = [sys.executable, "-m", "quire.fleet"]
    res1 = os.path.join(tmp, "r1.jsonl")
    r = run(fleet + ["replay", "--workers", "2", "--out", res1, os.path.join(corpus, "*.jsonl")], env=fenv,
            text=True, timeout=600)
    check(r.returncode == 0, "fleet replay exits 0: %s %s" % (r.stdout[-500:], r.stderr[-1500:]))
    lines = [json.loads(l) for l in open(res1)] if os.path.exists(res1) else []
    check(len(lines) == len(logs), "one result line per log (%d of %d)" % (len(lines), len(logs)))
    by = {x["path"]: x for x in lines}
    good = 0
    for p in logs:
        x = by.get(os.path.abspath(p))
        want = [json.loads(l)["digest"] for l in run([Q, "replay", "--digest", p]).stdout.decode().split("\n")
                if l.startswith('{"type":"request"')]
        if x and x["status"] == "ok" and x["digests"] == want and x["turns"] == len(want) \
                and 0.0 <= x["prefixReuse"] <= 1.0 and x["seconds"] >= 0:
            good += 1
        else:
            print("  mismatch with quire replay --digest:", p, x and x.get("status"))
    check(good == len(logs), "every log's turns and digests equal `quire replay --digest` (%d of %d)"
          % (good, len(logs)))
    summ = json.loads(r.stdout.strip().splitlines()[-1])["summary"] if r.stdout.strip() else {}
    check(summ.get("ran") == len(logs) and summ.get("ok") == len(logs), "the summary counts every log: %r" % summ)

    r = run(fleet + ["replay", "--workers", "2", "--out", res1, os.path.join(corpus, "*.jsonl")], env=fenv,
            text=True, timeout=600)
    summ = json.loads(r.stdout.strip().splitlines()[-1])["summary"] if r.stdout.strip() else {}
    check(r.returncode == 0 and summ.get("skipped") == len(logs) and summ.get("ran") == 0,
          "a second run resumes: every log already in the results is skipped (%r)" % summ)
    check(sum(1 for _ in open(res1)) == len(logs), "the results file gained no line")

    # plant a change at a known turn in one generated log: the text of the user message
    # before the 4th render
    victim = os.path.join(corpus, "gen__05.jsonl")
    with open(victim, encoding="utf-8") as f:
        vl = f.read().split("\n")
    renders, idx = 0, None
    for i, l in enumerate(vl):
        if '"type":"render"' in l:
            renders += 1
        if renders == 3 and idx is None and '"role":"user"' in l:
            idx = i
    check(idx is not None, "the generated log has a user message between renders 3 and 4")
    if idx is not None:
        m = json.loads(vl[idx])
        c = m["message"]["content"]
        if isinstance(c, str):
            m["message"]["content"] = c + " (changed)"
        else:
            m["message"]["content"].append({"type": "text", "text": "changed"})
        vl[idx] = json.dumps(m, ensure_ascii=False, separators=(",", ":"))
        with open(victim, "w", encoding="utf-8") as f:
            f.write("\n".join(vl))
    res2 = os.path.join(tmp, "r2.jsonl")
    r = run(fleet + ["check", "--against", res1, "--workers", "2", "--out", res2,
                     os.path.join(corpus, "*.jsonl")], env=fenv, text=True, timeout=600)
    check(r.returncode == 3, "check exits 3 on a mismatch (got %d): %s" % (r.returncode, r.stderr[-800:]))
    lines2 = {x["path"]: x for x in (json.loads(l) for l in open(res2))} if os.path.exists(res2) else {}
    v = lines2.get(os.path.abspath(victim), {})
    check(v.get("status") == "mismatch" and v.get("firstDiffTurn") == 4,
          "the planted change is reported at turn 4: %r" % {k: v.get(k) for k in ("status", "firstDiffTurn")})
    others = [x for p, x in lines2.items() if p != os.path.abspath(victim)]
    check(len(others) == len(logs) - 1 and all(x["status"] == "ok" for x in others),
          "every other log matches its previous digests")

    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "broken.jsonl"), "w") as f:
        f.write('{"type":"session","sessionId":"s","target":{"provider":"anthropic"}}\n'
                '{"type":"message","message":{"role":"user","content":[{"type":"bogus"}]}}\n')
    res3 = os.path.join(tmp, "r3.jsonl")
    r = run(fleet + ["replay", "--workers", "1", "--out", res3, os.path.join(bad, "broken.jsonl")], env=fenv,
            text=True, timeout=300)
    x = json.loads(open(res3).readline()) if os.path.exists(res3) else {}
    e = x.get("error") or {}
    check(r.returncode == 1 and x.get("status") == "error" and e.get("line") == 2
          and e.get("pointer") == "/message/content/0/type" and "bogus" in (e.get("message") or ""),
          "a malformed log is an error line with the quire error fields: %r" % x)

    outdir = os.path.join(tmp, "imported")
    res4 = os.path.join(tmp, "r4.jsonl")
    r = run(fleet + ["import", "--from", "claude-code", "--skip-invalid", "--out-dir", outdir, "--workers", "2",
                     "--out", res4]
            + raw_cc[:3], env=fenv, text=True, timeout=300)
    same = 0
    for p in raw_cc[:3]:
        got = os.path.join(outdir, os.path.splitext(os.path.basename(p))[0] + ".quire.jsonl")
        want = run([Q, "import", "--from", "claude-code", "--skip-invalid", p]).stdout
        if os.path.exists(got) and open(got, "rb").read() == want:
            same += 1
    check(r.returncode == 0 and same == 3, "fleet import writes what quire import writes (%d of 3)" % same)

    # the other agents' formats, replayed straight from their raw files
    foreign = os.path.join(a.data, "import_foreign")
    for fmt, pat in (("gemini-cli", "gemini-cli-*.json"), ("cline", "cline-*.json"), ("swe-agent", "swe-agent-*.traj")):
        files = sorted(glob.glob(os.path.join(foreign, pat)))
        res5 = os.path.join(tmp, "r5-%s.jsonl" % fmt)
        r = run(fleet + ["replay", "--from", fmt, "--workers", "1", "--out", res5] + files, env=fenv, text=True,
                timeout=300)
        got = [json.loads(l) for l in open(res5)] if os.path.exists(res5) else []
        ok = 0
        for x in got:
            raw = run([Q, "replay", "--from", fmt, "--digest", x["path"]])
            want = [json.loads(l)["digest"] for l in raw.stdout.decode().split("\n") if '"digest"' in l]
            ok += x["status"] == "ok" and x["digests"] == want and len(want) > 0
        check(r.returncode == 0 and files and ok == len(files),
              "fleet replay --from %s equals quire replay --from %s --digest (%d of %d)" % (fmt, fmt, ok, len(files)))
except SystemExit:
    pass
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
