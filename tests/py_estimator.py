#!/usr/bin/python3
"""Checks quire's token estimator against exact o200k_base counts.

1. tests/o200k.py (the exact BPE used as reference) reproduces every
   o200k_base vector of SHARED/tokenizers/TestPlans.txt.
2. The committed calibration set (tests/data/estimator_calibration.jsonl,
   built by tests/calibrate_estimator.py) is intact: 20 samples drawn with a
   fixed seed are re-tokenised live and must match their stored exact counts,
   and the estimator's runs over them must be the o200k pre-tokens.
3. The estimator (the unit-test binary, `test_estimator --print`) stays
   within the documented error over the whole set: median absolute relative
   error <= 10 % and worst case <= 35 %.

Usage: py_estimator.py --quire BUILD/quire --src SRC --data SHARED
(the estimator binary is BUILD/tests/test_estimator).
"""
import argparse
import json
import os
import random
import sys
import tempfile
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import calibrate_estimator as cal  # noqa: E402
import o200k  # noqa: E402

MEDIAN_LIMIT = 0.10
WORST_LIMIT = 0.35
LIVE_SAMPLES = 20
SEED = 1729
DATA_LIMIT = 2 * 1024 * 1024

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args(argv)

    tool = os.path.join(os.path.dirname(os.path.abspath(a.quire)), "tests", "test_estimator")
    ranks = os.path.join(a.data, "tokenizers", "o200k_base.tiktoken")
    plans = os.path.join(a.data, "tokenizers", "TestPlans.txt")
    data = os.path.join(a.src, "tests", "data", "estimator_calibration.jsonl")
    if not os.path.exists(tool):
        print("FAIL: estimator binary not found at %s" % tool)
        print("0 passed, 1 failed")
        return 1

    # 1. the reference tokenizer
    enc = o200k.O200k.load(ranks)
    n_ok, failures = o200k.verify(enc, plans)
    for sample, want, got, heap in failures[:5]:
        print("  o200k mismatch on %r: want %s got %s" % (sample, want, got))
    check(not failures and n_ok >= 50,
          "o200k.py reproduces the TestPlans.txt o200k_base vectors (%d ok, %d wrong)"
          % (n_ok, len(failures)))

    # 2. the calibration set
    check(os.path.getsize(data) < DATA_LIMIT, "calibration set is under 2 MB")
    rows = cal.load(data)
    check(len(rows) >= 500, "calibration set has %d samples" % len(rows))
    rng = random.Random(SEED)
    picked = sorted(rng.sample(range(len(rows)), min(LIVE_SAMPLES, len(rows))))
    stale = [i for i in picked if enc.count(rows[i]["text"]) != rows[i]["tokens"]]
    for i in stale:
        print("  stored count of sample %s is stale (%d stored, %d now)"
              % (rows[i]["id"], rows[i]["tokens"], enc.count(rows[i]["text"])))
    check(not stale, "%d seeded samples re-tokenised live match their stored counts" % len(picked))

    # the estimator's runs over those samples are the o200k pre-tokens (digit
    # runs are kept whole; a non-ASCII symbol before an ASCII word is its own run)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for i in picked:
            f.write(json.dumps({"text": rows[i]["text"]}, ensure_ascii=False) + "\n")
        sub = f.name
    try:
        runs = list(cal.parse_runs(cal.run_tool(tool, "--runs", sub)))
    finally:
        os.unlink(sub)
    bad = 0
    for k, i in enumerate(picked):
        b = rows[i]["text"].encode("utf-8")
        want, pos = set(), 0
        for p in enc.pretokenize(rows[i]["text"]):
            pos += len(p.encode("utf-8"))
            want.add(pos)
        inside_number, pos, prev_num = set(), 0, False
        for ch in rows[i]["text"]:
            num = unicodedata.category(ch).startswith("N")
            if num and prev_num:
                inside_number.add(pos)
            prev_num = num
            pos += len(ch.encode("utf-8"))
        got = {r.end for r in runs if r.sample == k}
        extra = {e for e in got - want if e < len(b) and b[e] < 0x80 and b[e - 1] >= 0x80}
        missing = want - got - inside_number
        if (got - want - extra) or missing:
            bad += 1
            e = sorted((got - want - extra) | missing)[0]
            print("  sample %s: run boundary differs at byte %d: %r|%r" % (
                rows[i]["id"], e, b[max(0, e - 20):e].decode("utf-8", "replace"),
                b[e:e + 20].decode("utf-8", "replace")))
    check(bad == 0, "estimator runs match the o200k pre-tokens on %d samples" % len(picked))

    # 3. the error over the whole set
    est = cal.estimates(tool, data)
    check(len(est) == len(rows), "one estimate per sample")
    s = cal.summary(rows, est)
    print("%-9s %5s %8s %8s %8s %8s" % ("family", "n", "median", "p90", "worst", "bias"))
    for fam in sorted(s, key=lambda k: (k == "ALL", k == "sessions", k)):
        n, med, p90, worst, bias = s[fam]
        print("%-9s %5d %7.1f%% %7.1f%% %7.1f%% %+7.1f%%" % (fam, n, 100 * med, 100 * p90,
                                                          100 * worst, 100 * bias))
    n, med, p90, worst, bias = s["ALL"]
    check(med <= MEDIAN_LIMIT, "median error %.1f%% <= %.0f%%" % (100 * med, 100 * MEDIAN_LIMIT))
    check(worst <= WORST_LIMIT, "worst error %.1f%% <= %.0f%%" % (100 * worst, 100 * WORST_LIMIT))

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
