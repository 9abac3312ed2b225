#!/usr/bin/python3
"""Every compacted transcript renders and validates for every dialect.

    py_compact_render.py --quire BIN --src SRC [--data DIR]

Takes every transcript the compaction goldens produce (golden/compact/*: expected.stdout
and expected/*.json that hold a quire.transcript/1, plus each plan's summarisation
transcript) and a few compactions of bench/data/transcript-200k.json, renders each with
`quire render --provider P` for anthropic, openai, openai_responses, gemini, bedrock,
mistral and ollama, and checks the request with `quire validate --provider P`.

A provider that `quire render` reports as unknown (or whose dialect is not implemented
yet) is skipped and named; any other render or validate failure fails the test.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

PROVIDERS = ["anthropic", "openai", "openai_responses", "gemini", "bedrock", "mistral", "ollama"]
SKIP_MARKERS = ("unknown provider", "not implemented")


def transcripts_from_goldens(src):
    root = os.path.join(src, "golden", "compact")
    found = []
    for case in sorted(os.listdir(root)):
        d = os.path.join(root, case)
        if not os.path.isfile(os.path.join(d, "case.json")):
            continue
        cands = [os.path.join(d, "expected.stdout")]
        ed = os.path.join(d, "expected")
        if os.path.isdir(ed):
            cands += [os.path.join(ed, n) for n in sorted(os.listdir(ed)) if n.endswith(".json")]
        for path in cands:
            try:
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
            except (OSError, ValueError):
                continue
            if isinstance(doc, dict) and "messages" in doc:
                found.append(("%s/%s" % (case, os.path.basename(path)), json.dumps(doc)))
            elif isinstance(doc, dict) and isinstance(doc.get("summarizationTranscript"), dict):
                found.append(("%s/summarizationTranscript" % case, json.dumps(doc["summarizationTranscript"])))
    return found


def transcripts_from_bench(quire, src, tmp):
    path = os.path.join(src, "bench", "data", "transcript-200k.json")
    found = []
    if not os.path.isfile(path):
        return found
    for args in (["--budget", "5000"], ["--budget", "20000", "--keep-last", "1"], ["--budget", "3000", "--keep-first", "0"]):
        p = subprocess.run([quire, "compact"] + args + [path], capture_output=True)
        if p.returncode != 0:
            raise SystemExit("compact %s failed: %s" % (args, p.stderr.decode(errors="replace")))
        found.append(("bench-200k %s" % " ".join(args), p.stdout.decode("utf-8")))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--data")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        items = transcripts_from_goldens(a.src) + transcripts_from_bench(a.quire, a.src, tmp)
        if len(items) < 10:
            print("FAIL: only %d compacted transcripts found" % len(items))
            return 1
        skipped = {}
        failures = []
        checked = 0
        for name, text in items:
            tpath = os.path.join(tmp, "t.json")
            with open(tpath, "w", encoding="utf-8") as f:
                f.write(text)
            for prov in PROVIDERS:
                if prov in skipped:
                    continue
                r = subprocess.run([a.quire, "render", "--provider", prov, tpath], capture_output=True)
                err = r.stderr.decode(errors="replace")
                if r.returncode != 0:
                    if any(m in err for m in SKIP_MARKERS):
                        skipped[prov] = "render: " + err.strip().splitlines()[0]
                        continue
                    failures.append("%s: render --provider %s: exit %d: %s" % (name, prov, r.returncode, err.strip()))
                    continue
                rpath = os.path.join(tmp, "req.json")
                with open(rpath, "wb") as f:
                    f.write(r.stdout)
                v = subprocess.run([a.quire, "validate", "--provider", prov, rpath], capture_output=True)
                verr = v.stderr.decode(errors="replace")
                if v.returncode != 0:
                    if any(m in verr for m in SKIP_MARKERS):
                        skipped[prov] = "validate: " + verr.strip().splitlines()[0]
                        continue
                    failures.append("%s: validate --provider %s: exit %d: %s" % (name, prov, v.returncode, verr.strip()))
                    continue
                checked += 1
        for prov, why in sorted(skipped.items()):
            print("SKIP %s (%s)" % (prov, why))
        for f in failures:
            print("FAIL " + f)
        print("%d transcripts x %d providers: %d rendered and validated, %d skipped providers, %d failures"
              % (len(items), len(PROVIDERS), checked, len(skipped), len(failures)))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
