#!/usr/bin/python3
"""(Re)generates the seed corpora of the fuzz targets from the golden inputs, the
examples, the bad-input fixtures and the vendored corpus in tests/data (MCP protocol examples; Claude
Code and Codex logs cut into small line-aligned chunks; the Gemini CLI, Cline and SWE-agent examples).

    fuzz/make_seeds.py [--data DIR]

Targets whose input starts with selector bytes (render, compact, reminder, ingest,
session, import_*) get them prepended here. Seeds are small on purpose: the plain
executable also runs every prefix of each seed (truncation at every byte). Crashers found
by fuzzing go to fuzz/seeds/<target>/crash-* by hand and are never removed by this
script; everything else it wrote before is replaced.
"""

import argparse
import glob
import hashlib
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
GEN_PREFIX = "g-"     # files this script owns
CHUNK = 3072          # bytes per log chunk (whole lines)


def load(path):
    with open(path, "rb") as f:
        return f.read()


def as_json(b):
    try:
        return json.loads(b)
    except Exception:
        return None


def as_jsonl(b):
    out = []
    for ln in b.splitlines():
        if not ln.strip():
            continue
        v = as_json(ln)
        if not isinstance(v, dict):
            return None
        out.append(v)
    return out or None


def slug(path):
    rel = os.path.relpath(path, ROOT) if path.startswith(ROOT) else path
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", rel).strip("_")


def pick(name, n):
    return int(hashlib.sha1(name.encode()).hexdigest(), 16) % n


def chunks(b, maxn=CHUNK, count=3):
    """Up to count line-aligned chunks of at most maxn bytes: the start, the middle, the end."""
    lines = b.splitlines(keepends=True)
    out = []
    for start in sorted({0, len(lines) // 2, max(0, len(lines) - 8)}):
        buf = b""
        for ln in lines[start:]:
            if len(buf) + len(ln) > maxn:
                break
            buf += ln
        if buf and buf not in out:
            out.append(buf)
    return out[:count]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data"))
    a = ap.parse_args()
    seeds = {}  # target -> {name: bytes}

    def add(target, name, data):
        seeds.setdefault(target, {})[GEN_PREFIX + name] = data

    inputs = sorted(glob.glob(os.path.join(ROOT, "golden", "**", "*"), recursive=True))
    inputs = [p for p in inputs if os.path.isfile(p) and "/expected" not in p and not p.endswith("case.json")]
    inputs += [os.path.join(ROOT, "examples", "transcript.json")]
    inputs += sorted(glob.glob(os.path.join(ROOT, "tests", "bad", "fixtures", "*")))
    remind_lines = []
    for p in inputs:
        b = load(p)
        if len(b) > 16384:
            continue
        name = slug(p)
        v = as_json(b)
        lines = as_jsonl(b) if v is None else None
        if isinstance(v, dict) and "messages" in v and "model" not in v and "contents" not in v:
            # a quire transcript: render (two targets), compact (two policies)
            add("fuzz_render", name, bytes([0, 0]) + b)
            add("fuzz_render", name + "-t", bytes([pick(name, 16), pick(name, 64)]) + b)
            add("fuzz_compact", name, bytes([4, 0x01, 0x10]) + b)
            add("fuzz_compact", name + "-s", bytes([1, 0x00, 0x03]) + b + b"\x00A summary of the early turns.")
        elif isinstance(v, dict) and "turn" in v and "reminders" in v:
            add("fuzz_reminder", name, bytes([1, 0]) + b)
        elif isinstance(v, dict) and "body" in v:
            add("fuzz_reminder", name, bytes([0, 0]) + b)
        elif isinstance(v, list) and v and all(isinstance(x, dict) and "type" in x for x in v):
            add("fuzz_reminder", name, bytes([2, 0]) + b)
            remind_lines.append(b)
        elif lines and lines[0].get("type") == "session":
            add("fuzz_session", name, b"\x00" + b)
            add("fuzz_session", name + "-d", bytes([1 + 2 * (1 + pick(name, 15))]) + b)
        elif lines and all(x.get("type") in ("mcp", "acp", "reminder", "clear") for x in lines):
            add("fuzz_reminder", name, bytes([2, 0x80 | pick(name, 128)]) + b)
            remind_lines.append(b)
            for i, x in enumerate(lines):
                m = x.get("message")
                if x.get("type") == "mcp" and isinstance(m, dict):
                    add("fuzz_ingest", "%s-%d" % (name, i), b"\x00" + json.dumps(m).encode())
                elif x.get("type") == "acp" and isinstance(m, dict):
                    add("fuzz_ingest", "%s-%d" % (name, i), b"\x02" + json.dumps(m).encode())
                elif x.get("type") == "reminder" and isinstance(x.get("reminder"), dict):
                    add("fuzz_reminder", "%s-%d" % (name, i), bytes([0, 0]) + json.dumps(x["reminder"]).encode())
    # transcripts with reminder lines (render input = transcript NUL lines)
    ex = load(os.path.join(ROOT, "examples", "transcript.json"))
    for i, rl in enumerate(remind_lines[:12]):
        add("fuzz_render", "example-with-reminders-%02d" % i, bytes([i % 16, i * 37 % 64]) + ex + b"\x00" + rl)

    # request parameters (fuzz_params: target byte, option bits, params NUL transcript)
    for i, case in enumerate(sorted(glob.glob(os.path.join(ROOT, "golden", "params", "*", "params.json")))[::3]):
        pb = load(case)
        tb = load(os.path.join(os.path.dirname(case), "transcript.json"))
        add("fuzz_params", slug(os.path.dirname(case)), bytes([i % 16, i % 4]) + pb.rstrip(b"\n") + b"\x00" + tb)

    # tests/data: MCP protocol examples (ingest), agent logs (importers)
    for p in sorted(glob.glob(os.path.join(a.data, "protocol", "**", "*.json"), recursive=True)):
        b = load(p)
        if len(b) <= 4096:
            rel = "shared_" + slug(os.path.relpath(p, a.data))
            add("fuzz_ingest", rel, b"\x00" + b)
    for fmt, target in (("claude-code", "fuzz_import_claude"), ("codex", "fuzz_import_codex")):
        for p in sorted(glob.glob(os.path.join(a.data, "corpus", "sessions", fmt, "*.jsonl"))):
            rel = "shared_" + slug(os.path.relpath(p, a.data))
            for i, c in enumerate(chunks(load(p))):
                add(target, "%s-%d" % (rel, i), bytes([i % 4 | (1 if i == 0 else 0)]) + c)

    # tests/data/import_foreign: one JSON document per log (gemini-cli, cline, swe-agent);
    # byte 0 bits 4-5 pick the format (fuzz/fuzz_import_foreign.c)
    sel = {"gemini-cli": 0x00, "cline": 0x10, "swe-agent": 0x20}
    for p in sorted(glob.glob(os.path.join(a.data, "import_foreign", "*"))):
        base = os.path.basename(p)
        fmt = next((f for f in sel if base.startswith(f)), None)
        if fmt is None:
            continue
        rel = "shared_" + slug(os.path.relpath(p, a.data))
        b = load(p)
        add("fuzz_import_foreign", rel, bytes([sel[fmt]]) + b)
        add("fuzz_import_foreign", rel + "-p", bytes([sel[fmt] | 0x80]) + b)  # provider openai
        v = as_json(b)
        if v is not None:  # the same document compact, under another format's selector
            add("fuzz_import_foreign", rel + "-x", bytes([(sel[fmt] + 0x10) % 0x30]) + json.dumps(v).encode())

    for target, files in sorted(seeds.items()):
        d = os.path.join(SEEDS, target)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            if old.startswith(GEN_PREFIX) and old not in files:
                os.remove(os.path.join(d, old))
        for n, data in sorted(files.items()):
            path = os.path.join(d, n)
            if not os.path.exists(path) or load(path) != data:
                with open(path, "wb") as f:
                    f.write(data)
        total = sum(len(x) for x in files.values())
        print("%-22s %4d seeds, %7d bytes" % (target, len(files), total))


if __name__ == "__main__":
    main()
