#!/usr/bin/python3
"""Every compacted transcript renders and validates for every dialect.

    py_compact_render.py --quire BIN --src SRC [--data DIR]

Takes every transcript the compaction goldens produce (golden/compact/*: expected.stdout
and expected/*.json that hold a quire.transcript/1, plus each plan's summarisation
transcript), a few compactions of bench/data/transcript-200k.json and every real session
transcript (tests/data/corpus/transcripts) compacted to 50% and 25% of its estimate, renders each with
`quire render --provider P` for anthropic, openai, openai_responses, gemini, bedrock,
mistral and ollama, and checks the request with `quire validate --provider P`.

For the real sessions it also checks what compaction promises: every tool call keeps its
result and every result its call, the task's first user message comes first with its text
unchanged, and the newest keepLastSteps steps are verbatim unless the report shows stage 3
had to cut them (then only their text may differ). A session whose budget the default keep
windows cannot meet is compacted with keep windows of 1; one that still fails (what is left
is images and tool inputs, which no stage cuts) must fail with QUIRE_E_BUDGET's message.

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


KEEP1 = ["--keep-first", "1", "--keep-last", "1", "--keep-last-steps", "1"]


def units(msgs):
    """Steps of a transcript as lists of message indexes (an assistant message outside a
    call/result pair starts one; Claude Code user messages holding only tool results are
    tool messages)."""
    open_calls = set()
    steps = []
    for i, m in enumerate(msgs):
        c = m.get("content")
        blocks = c if isinstance(c, list) else []
        is_tool = m["role"] == "tool" or (m["role"] == "user" and blocks and
                                          all(b.get("type") == "toolResult" for b in blocks))
        if m["role"] == "assistant" and not open_calls:
            steps.append([i])
        elif m["role"] == "user" and not is_tool and not open_calls:
            steps.append(None)  # a turn head ends the step before it
        elif steps and steps[-1] is not None:
            steps[-1].append(i)
        for b in blocks:
            if b.get("type") == "toolCall":
                open_calls.add(b.get("id"))
            elif b.get("type") == "toolResult":
                open_calls.discard(b.get("toolCallId"))
    return [s for s in steps if s]


def pair_ids(msgs):
    calls, results = set(), set()
    for m in msgs:
        c = m.get("content")
        for b in c if isinstance(c, list) else []:
            if b.get("type") == "toolCall":
                calls.add(b.get("id"))
            elif b.get("type") == "toolResult":
                results.add(b.get("toolCallId"))
    return calls, results


def first_text(m):
    c = m.get("content")
    if isinstance(c, str):
        return c
    for b in c:
        if b.get("type") == "text":
            return b["text"]
    return None


def violation_kinds(text):
    """The rule texts of validate's report lines, without their pointers."""
    return {line.split(": ", 3)[-1] for line in text.strip().splitlines()}


def transcripts_from_sessions(quire, data, failures, stats, inherited):
    root = os.path.join(data, "corpus", "transcripts")
    found = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        # the canonical form (the transcript model splits Claude Code's tool-result user messages)
        src = json.loads(subprocess.run([quire, "compact", "--pretty", path], capture_output=True,
                                        check=True).stdout)
        inherited[name] = src
        p = subprocess.run([quire, "compact", "--dry-run", path], capture_output=True, check=True)
        before = json.loads(p.stdout)["tokensBefore"]
        for pct in (50, 25):
            budget = str(before * pct // 100)
            label = "%s at %d%%" % (name, pct)
            for extra in ([], KEEP1):
                p = subprocess.run([quire, "compact", "--budget", budget] + extra + [path], capture_output=True)
                if p.returncode == 0:
                    break
            if p.returncode != 0:
                err = p.stderr.decode(errors="replace")
                if "cannot be met" not in err:
                    failures.append("%s: compact failed: %s" % (label, err.strip()))
                stats["impossible"] += 1
                continue
            r = subprocess.run([quire, "compact", "--dry-run", "--budget", budget] + extra + [path],
                               capture_output=True, check=True)
            report = json.loads(r.stdout)
            out = json.loads(p.stdout)
            stats["compacted"] += 1
            ks = 1 if extra else 8
            # pairs: every call that had a result keeps it, and the other way round
            ic, ir = pair_ids(src["messages"])
            oc, orr = pair_ids(out["messages"])
            if (oc & ir) - orr or (orr & ic) - oc:
                failures.append("%s: a tool call was parted from its result" % label)
            # the task's first user message stays first
            if first_text(out["messages"][0]) != first_text(src["messages"][0]):
                failures.append("%s: the first user message changed" % label)
            # the newest steps verbatim, unless stage 3 cut them
            cut = {it.get("messageIndex") for it in report["messagesCut"]["items"]}
            su, ou = units(src["messages"]), units(out["messages"])
            for k in range(1, min(ks, len(su)) + 1):
                s_idx = su[-k]
                if any(i in cut for i in s_idx):
                    stats["tail_cut"] += 1
                    continue
                if k > len(ou) or [src["messages"][i] for i in s_idx] != [out["messages"][i] for i in ou[-k]]:
                    failures.append("%s: step %d from the end is not verbatim" % (label, k))
                else:
                    stats["tail_verbatim"] += 1
            found.append((label, p.stdout.decode("utf-8"), name))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--data")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        failures = []
        inherited = {}  # session name -> its uncompacted transcript
        stats = {"compacted": 0, "impossible": 0, "tail_verbatim": 0, "tail_cut": 0}
        data = a.data or os.path.join(a.src, "tests", "data")
        items = transcripts_from_goldens(a.src) + transcripts_from_bench(a.quire, a.src, tmp) + \
            transcripts_from_sessions(a.quire, data, failures, stats, inherited)
        print("real sessions: %(compacted)d compactions (%(impossible)d budgets impossible), newest steps: "
              "%(tail_verbatim)d verbatim, %(tail_cut)d cut by stage 3" % stats)
        if len(items) < 10 or stats["compacted"] < 10:
            print("FAIL: only %d compacted transcripts found" % len(items))
            return 1
        skipped = {}
        checked = 0
        base_kinds = {}  # (session, provider) -> what validate says about the uncompacted session
        inherited_n = 0
        for item in items:
            name, text = item[0], item[1]
            session = item[2] if len(item) > 2 else None
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
                    if session is not None:
                        key = (session, prov)
                        if key not in base_kinds:
                            spath = os.path.join(tmp, "s.json")
                            with open(spath, "w", encoding="utf-8") as f:
                                json.dump(inherited[session], f)
                            br = subprocess.run([a.quire, "render", "--provider", prov, spath], capture_output=True)
                            with open(rpath, "wb") as f:
                                f.write(br.stdout)
                            bv = subprocess.run([a.quire, "validate", "--provider", prov, rpath], capture_output=True)
                            base_kinds[key] = violation_kinds(bv.stderr.decode(errors="replace"))
                        if violation_kinds(verr) <= base_kinds[key]:
                            inherited_n += 1  # the uncompacted session breaks the same rules
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
        print("%d compacted real sessions break only rules their uncompacted session breaks too "
              "(request encoding, not compaction)" % inherited_n)
        print("%d passed, %d failed" % (checked, len(failures)))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
