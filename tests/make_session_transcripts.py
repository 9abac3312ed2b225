#!/usr/bin/python3
"""Builds tests/data/corpus/transcripts/NAME.json from the real session logs.

    make_session_transcripts.py --quire BUILD/quire [--data tests/data]

Each Claude Code log and Codex rollout of corpus/sessions is imported with `quire import`
(claude-code: --skip-invalid), and every `message` line of the session log, in order, becomes
one message of a quire.transcript/1 transcript (compaction events are ignored: the
transcript is the whole conversation as the agent lived it). The compaction tests and
goldens (golden/compact/session_*) read these files; rerun this script after an importer
change and review the diff.
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    a = ap.parse_args()
    src = os.path.join(a.data, "corpus", "sessions")
    dst = os.path.join(a.data, "corpus", "transcripts")
    os.makedirs(dst, exist_ok=True)
    for fmt in ("claude-code", "codex"):
        for name in sorted(os.listdir(os.path.join(src, fmt))):
            if not name.endswith(".jsonl"):
                continue
            path = os.path.join(src, fmt, name)
            p = subprocess.run([a.quire, "import", "--from", fmt, "--skip-invalid", path],
                               capture_output=True, check=True)
            msgs = []
            for line in p.stdout.decode().splitlines():
                o = json.loads(line)
                if o.get("type") == "message":
                    msgs.append(o["message"])
            stem = name[:-len(".jsonl")]
            if "rollout-" in stem:  # codex rollouts: the date is enough
                stem = stem[:stem.index("rollout-") + len("rollout-") + 10]
            out = os.path.join(dst, fmt + "__" + stem + ".json")
            with open(out, "w") as f:
                json.dump({"messages": msgs}, f, ensure_ascii=False, separators=(",", ":"))
                f.write("\n")
            print(out, len(msgs), "messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
