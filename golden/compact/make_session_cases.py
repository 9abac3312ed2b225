#!/usr/bin/python3
"""Writes golden/compact/session_* cases: compaction of every real session transcript.

    make_session_cases.py --quire BUILD/quire

For each tests/data/corpus/transcripts/NAME.json (made by tests/make_session_transcripts.py)
two cases compact to 50% and 25% of its size with the default policy and print the report
(--dry-run). Sizes count text as bytes / 4 (--bytes-per-token 4), so that recalibrating the
estimator does not move these goldens; tests/py_compact_render.py runs the same compactions
with quire's estimator and renders and validates every result for every provider. When the
default keep windows cannot meet a budget (short sessions: everything is inside the windows,
or what is left is images and tool inputs, which no stage cuts) the case records that error,
and a third case (`_keep1`) compacts to 25% with keepFirstTurns, keepLastTurns and
keepLastSteps 1. Then QUIRE_UPDATE_GOLDEN=1 writes the expected outputs.
"""
import argparse
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "tests", "data", "corpus", "transcripts")
KEEP1 = ["--keep-first", "1", "--keep-last", "1", "--keep-last-steps", "1"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    a = ap.parse_args()
    for name in sorted(os.listdir(DATA)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(DATA, name)
        p = subprocess.run([a.quire, "compact", "--bytes-per-token", "4", "--dry-run", path],
                           capture_output=True, check=True)
        before = json.loads(p.stdout)["tokensBefore"]
        stem = name[:-5].replace("claude-code__", "cc_").replace("codex__", "cx_").replace("-", "_").replace(".", "_")
        failed = False
        for pct, extra in ((50, []), (25, []), (25, KEEP1)):
            if extra and not failed:
                continue
            budget = before * pct // 100
            args = ["compact", "--bytes-per-token", "4", "--dry-run", "--pretty"] + extra + \
                   ["--budget", str(budget), "@DATA@/corpus/transcripts/" + name]
            real = [a.quire] + [x.replace("@DATA@/corpus/transcripts/", DATA + "/") for x in args]
            r = subprocess.run(real, capture_output=True)
            failed = failed or r.returncode != 0
            case = "session_%s_%d%s" % (stem, pct, "_keep1" if extra else "")
            d = os.path.join(HERE, case)
            os.makedirs(d, exist_ok=True)
            desc = "the real session %s compacted to %d%% of its %d tokens (bytes / 4)%s" % (
                name[:-5], pct, before, ", keep windows of 1" if extra else ", default policy")
            with open(os.path.join(d, "case.json"), "w") as f:
                json.dump({"description": desc, "args": args}, f)
                f.write("\n")
            print(case, "exit", r.returncode)


if __name__ == "__main__":
    main()
