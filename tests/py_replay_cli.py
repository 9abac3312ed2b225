#!/usr/bin/python3
"""quire replay / import command-line behaviour that goldens cannot express:
no partial output on failure, --out then --check round trips (also after a
--digest --out), -o atomicity, and import | replay == replay --from."""
import argparse
import os
import subprocess
import sys
import tempfile

FAIL = []


def check(cond, msg):
    if not cond:
        FAIL.append(msg)
        print("FAIL:", msg)


def run(q, args, cwd=None, stdin=None):
    p = subprocess.run([q] + args, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


GOOD = (b'{"type":"session","sessionId":"s","target":{"provider":"anthropic"}}\n'
        b'{"type":"message","message":{"role":"user","content":"hi"}}\n'
        b'{"type":"render"}\n'
        b'{"type":"message","message":{"role":"assistant","content":"hello"}}\n'
        b'{"type":"message","message":{"role":"user","content":"more"}}\n'
        b'{"type":"render"}\n')
BAD = GOOD + b'{"type":"nope"}\n'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src")
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    q = os.path.abspath(a.quire)
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.jsonl")
        bad = os.path.join(tmp, "bad.jsonl")
        open(good, "wb").write(GOOD)
        open(bad, "wb").write(BAD)
        # a failing replay writes no folder and no -o file
        rc, out, err = run(q, ["replay", "--out", "o1", "bad.jsonl"], cwd=tmp)
        check(rc == 1, "bad log: exit %d" % rc)
        check(not os.path.exists(os.path.join(tmp, "o1")), "bad log: --out folder created")
        check("bad.jsonl:7:9: /type: unknown event type" in err, "bad log: message %r" % err)
        rc, out, err = run(q, ["replay", "-o", "s.jsonl", "bad.jsonl"], cwd=tmp)
        check(rc == 1 and not os.path.exists(os.path.join(tmp, "s.jsonl")), "bad log: -o file created")
        # --out then --check: 0; a changed log: 3 with a diff on stdout
        rc, _, err = run(q, ["replay", "--out", "o2", "good.jsonl"], cwd=tmp)
        check(rc == 0, "out: %s" % err)
        check(sorted(os.listdir(os.path.join(tmp, "o2"))) == ["events.jsonl", "turn-0001.json", "turn-0002.json"],
              "out folder: %s" % os.listdir(os.path.join(tmp, "o2")))
        rc, out, err = run(q, ["replay", "--check", "o2", "good.jsonl"], cwd=tmp)
        check(rc == 0 and out == b"", "check same: %d %r" % (rc, err))
        open(os.path.join(tmp, "changed.jsonl"), "wb").write(GOOD.replace(b'"more"', b'"less"'))
        rc, out, err = run(q, ["replay", "--check", "o2", "changed.jsonl"], cwd=tmp)
        check(rc == 3, "check changed: exit %d" % rc)
        check(out.startswith(b"--- o2/turn-0002.json\n+++ turn-0002.json (replay)\n@@ "), "diff header: %r" % out[:80])
        check(b'-          "text": "more"' in out and b'+          "text": "less"' in out, "diff body: %r" % out)
        check("differs from o2 at turn 2" in err, "check message: %r" % err)
        # a replay with fewer turns than the folder
        open(os.path.join(tmp, "short.jsonl"), "wb").write(GOOD.rsplit(b'{"type":"render"}\n', 1)[0])
        rc, out, err = run(q, ["replay", "--check", "o2", "short.jsonl"], cwd=tmp)
        check(rc == 3, "check fewer turns: exit %d %r" % (rc, err))
        # --digest --out keeps only the last body and still checks
        rc, _, _ = run(q, ["replay", "--digest", "--out", "o3", "good.jsonl"], cwd=tmp)
        check(sorted(os.listdir(os.path.join(tmp, "o3"))) == ["events.jsonl", "turn-0002.json"], "digest out folder")
        rc, _, err = run(q, ["replay", "--check", "o3", "good.jsonl"], cwd=tmp)
        check(rc == 0, "check digest folder: %s" % err)
        rc, out, err = run(q, ["replay", "--check", "o3", "changed.jsonl"], cwd=tmp)
        check(rc == 3, "check digest folder, changed: %d" % rc)
        # usage
        rc, _, err = run(q, ["replay", "--out", "x", "--check", "y", "good.jsonl"], cwd=tmp)
        check(rc == 2, "usage: --out with --check")
        rc, _, err = run(q, ["replay"], cwd=tmp)
        check(rc == 2, "usage: no log")
        # import | replay == replay --from, for a real log
        cc = os.path.join(a.data, "corpus", "sessions", "claude-code", "spotter__tool_heavy.jsonl")
        rc, log, err = run(q, ["import", "--from", "claude-code", cc])
        check(rc == 0, "import: %s" % err)
        rc1, r1, _ = run(q, ["replay", "-"], stdin=log)
        rc2, r2, _ = run(q, ["replay", "--from", "claude-code", cc])
        check(rc1 == 0 and rc2 == 0 and r1 == r2 and r1, "import | replay differs from replay --from")
        # -o writes the import atomically
        rc, _, _ = run(q, ["import", "--from", "claude-code", "-o", "imp.jsonl", cc], cwd=tmp)
        check(rc == 0 and open(os.path.join(tmp, "imp.jsonl"), "rb").read() == log, "import -o")
    print("%d failures" % len(FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
