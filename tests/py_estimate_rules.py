#!/usr/bin/env python3
"""`quire estimate`: the breakdown and the provider families' rules (docs/compaction.md,
"Request estimates").

Checks, through the command line, with the text counted as ceil(bytes / 4)
(`--bytes-per-token 4`) so that every expected number is computed here by hand:
  - images priced by each family's documented rule from the size in the image header
    (PNG, GIF, JPEG, WebP), for small, wide and huge images, and the fallback for URLs;
  - the per-message, per-block, per-tool and system overheads of each family;
  - the reminders the renderer places this turn (and none without a state);
  - --log: one estimate per rendered request of a session log, matching the transcript's;
  - errors: unknown provider, bad transcript (one line, exit 1), usage (exit 2).

Usage: py_estimate_rules.py --quire BIN [--data DIR] [--src DIR]
"""
import argparse
import base64
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

FAILS = []
PASSES = [0]


def check(cond, what):
    if cond:
        PASSES[0] += 1
    else:
        FAILS.append(what)
        print("FAIL: " + what)


def png(w, h):
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0) + b"\0" * 4


def gif(w, h):
    return b"GIF89a" + struct.pack("<HH", w, h) + b"\0" * 8


def jpeg(w, h):
    # SOI, an APP0 segment, then SOF0 with height and width
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\1\1\0\0\1\0\1\0\0"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, h, w, 1) + b"\1\x11\0"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp(w, h):
    body = b"VP8X" + struct.pack("<I", 10) + b"\0\0\0\0" + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def anthropic_img(w, h):
    lo = max(w, h)
    if lo > 1568:
        w, h = w * 1568 // lo, h * 1568 // lo
    return min(1600, math.ceil(w * h / 750))


def openai_img(w, h):
    lo = max(w, h)
    if lo > 2048:
        w, h = w * 2048 // lo, h * 2048 // lo
    sh = min(w, h)
    if sh > 768:
        w, h = w * 768 // sh, h * 768 // sh
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def gemini_img(w, h):
    if w <= 384 and h <= 384:
        return 258
    return 258 * math.ceil(w / 768) * math.ceil(h / 768)


RULES = {"anthropic": anthropic_img, "openai": openai_img, "gemini": gemini_img}
UNKNOWN = {"anthropic": 1600, "openai": 765, "gemini": 258}
# family: (request, system, message, block, tool, tools_base)
OVER = {"anthropic": (0, 4, 4, 3, 8, 346), "openai": (3, 4, 4, 3, 8, 0), "gemini": (0, 4, 4, 3, 8, 0)}


def q4(s):
    return math.ceil(len(s.encode()) / 4) if s else 0


def run(quire, args, tmp, expect=0):
    r = subprocess.run([quire] + args, capture_output=True, cwd=tmp)
    if r.returncode != expect:
        FAILS.append("%s: exit %d (expected %d): %s" % (" ".join(args), r.returncode, expect, r.stderr.decode()[:300]))
        print("FAIL: " + FAILS[-1])
        return None
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--data")
    ap.add_argument("--src")
    a = ap.parse_args()
    Q = os.path.abspath(a.quire)
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, obj):
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(obj if isinstance(obj, str) else json.dumps(obj))
            return name

        def est(tname, provider, extra=()):
            r = run(Q, ["estimate", "--provider", provider, "--bytes-per-token", "4"] + list(extra) + [tname], tmp)
            return json.loads(r.stdout) if r else None

        # ---- images ----
        for maker, mt in ((png, "image/png"), (gif, "image/gif"), (jpeg, "image/jpeg"), (webp, "image/webp")):
            for (w, h) in ((200, 100), (1000, 500), (4000, 3000), (600, 2500)):
                if maker is gif and max(w, h) > 65535:
                    continue
                data = base64.b64encode(maker(w, h)).decode()
                t = write("img.json", {"messages": [{"role": "user", "content": [
                    {"type": "text", "text": "see"}, {"type": "image", "mediaType": mt, "data": data}]}]})
                for fam, prov in (("anthropic", "anthropic"), ("openai", "openai"), ("gemini", "gemini")):
                    e = est(t, prov)
                    if e:
                        check(e["media"] == RULES[fam](w, h) and e["counts"]["images"] == 1,
                              "%s %dx%d %s: media %s, expected %d" % (mt, w, h, prov, e["media"], RULES[fam](w, h)))
        # base64 wrapped at 20 characters (JSON "\n" escapes inside the data) still gives the size
        data = base64.b64encode(png(1000, 500) * 10).decode()
        data = "\n".join(data[i:i + 20] for i in range(0, len(data), 20))
        t = write("wrapped.json", {"messages": [{"role": "user", "content": [
            {"type": "image", "mediaType": "image/png", "data": data}]}]})
        e = est(t, "anthropic")
        check(e and e["media"] == anthropic_img(1000, 500), "wrapped base64: media %s" % (e and e["media"]))
        t = write("url.json", {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "see"}, {"type": "image", "mediaType": "image/png", "url": "https://example.com/a.png"}]}]})
        for prov in ("anthropic", "openai", "gemini"):
            e = est(t, prov)
            if e:
                check(e["media"] == UNKNOWN[prov], "URL image %s: media %s" % (prov, e["media"]))
        # bedrock is priced as anthropic (Claude), openai_responses as openai
        e = est("img.json", "bedrock")
        check(e and e["family"] == "anthropic", "bedrock family: %s" % (e and e["family"]))
        e = est("img.json", "openai_responses")
        check(e and e["family"] == "openai", "openai_responses family: %s" % (e and e["family"]))

        # ---- overheads, system, tools, messages ----
        sysp = "You are a coding agent."
        tool = {"name": "read", "description": "Read a file",
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
        msgs = [{"role": "user", "content": "List src/"},
                {"role": "assistant", "content": [{"type": "text", "text": "Reading."},
                                                  {"type": "toolCall", "id": "c1", "name": "read", "input": {"path": "src"}}]},
                {"role": "tool", "content": [{"type": "toolResult", "toolCallId": "c1", "content": "a.c b.c"}]},
                {"role": "user", "content": "Now fix b.c"}]
        t = write("t.json", {"system": sysp, "tools": [tool], "messages": msgs})
        schema = json.dumps(tool["inputSchema"], separators=(",", ":"))
        for prov, fam in (("anthropic", "anthropic"), ("openai", "openai"), ("gemini", "gemini")):
            req, sy, msg, blk, tl, tb = OVER[fam]
            e = est(t, prov)
            if not e:
                continue
            check(e["system"] == sy + blk + q4(sysp), "%s system %s" % (prov, e["system"]))
            check(e["tools"] == tb + tl + q4("read") + q4("Read a file") + q4(schema), "%s tools %s" % (prov, e["tools"]))
            m = req + 4 * msg + blk + q4("List src/") + 2 * blk + q4("Reading.") + q4("read") + q4('{"path":"src"}') \
                + blk + q4("a.c b.c") + blk + q4("Now fix b.c")
            check(e["messages"] == m, "%s messages %s, expected %d" % (prov, e["messages"], m))
            check(e["reminders"] == 0 and e["media"] == 0, "%s no reminders, no media" % prov)
            check(e["total"] == e["system"] + e["tools"] + e["messages"] + e["reminders"] + e["media"],
                  "%s total is the sum" % prov)
            check(e["counts"]["messages"] == 4, "%s message count" % prov)

        # ---- reminders rendered this turn ----
        body1, body2 = "File b.c changed on disk.", "Run the tests before answering."
        write("remind.jsonl", json.dumps({"type": "reminder", "reminder": {"body": body1, "roleHint": "user_block"}}) + "\n" +
              json.dumps({"type": "reminder", "reminder": {"body": body2, "roleHint": "user_block"}}) + "\n")
        for prov in ("anthropic", "openai", "gemini"):
            e0 = est(t, prov)
            e = est(t, prov, ["--remind", "remind.jsonl"])
            if not (e0 and e):
                continue
            check(e["counts"]["reminders"] == 2, "%s: 2 reminders counted (%s)" % (prov, e["counts"]["reminders"]))
            # one wrapped block holds both bodies: a block overhead + its text, at least the bodies
            check(e["reminders"] >= 3 + q4(body1) + q4(body2) - 1 and e["reminders"] < 3 + q4(body1) + q4(body2) + 40,
                  "%s reminders %s" % (prov, e["reminders"]))
            check(e["messages"] == e0["messages"] and e["total"] == e0["total"] + e["reminders"],
                  "%s: reminders add only themselves" % prov)

        # ---- the default estimator: not bytes / 4, but about as large ----
        r = run(Q, ["estimate", "t.json"], tmp)
        if r:
            e = json.loads(r.stdout)
            check(e["family"] == "anthropic" and 400 < e["total"] < 600, "default provider anthropic: %s" % e)

        # ---- --log: one estimate per render ----
        log = [{"type": "session", "sessionId": "s", "target": {"provider": "openai"}, "system": sysp, "tools": [tool]}]
        log += [{"type": "message", "message": msgs[0]}, {"type": "render"},
                {"type": "message", "message": msgs[1]}, {"type": "message", "message": msgs[2]}, {"type": "render"},
                {"type": "message", "message": {"role": "assistant", "content": "Done."}},
                {"type": "message", "message": msgs[3]}, {"type": "render", "target": {"provider": "gemini"}}]
        write("s.log", "".join(json.dumps(x) + "\n" for x in log))
        r = run(Q, ["estimate", "--log", "--bytes-per-token", "4", "s.log"], tmp)
        if r:
            lines = [json.loads(x) for x in r.stdout.decode().splitlines()]
            check([x["turn"] for x in lines] == [1, 2, 3], "log turns %s" % [x["turn"] for x in lines])
            check([x["family"] for x in lines] == ["openai", "openai", "gemini"], "log families")
            check(all(x["requestBytes"] > 0 for x in lines), "log request bytes")
            write("t3.json", {"system": sysp, "tools": [tool], "messages": msgs[:3] +
                              [{"role": "assistant", "content": "Done."}, msgs[3]]})
            e = est("t3.json", "gemini")
            check(e and lines[2]["total"] == e["total"], "log's last estimate = the transcript's (%s, %s)"
                  % (lines[2]["total"], e and e["total"]))
            check(lines[0]["total"] < lines[1]["total"] < lines[2]["total"] + 10, "log estimates grow")

        # ---- errors ----
        r = run(Q, ["estimate", "--provider", "nope", "t.json"], tmp, 1)
        check(r is not None and r.stderr.decode().count("\n") == 1 and "unknown provider" in r.stderr.decode(),
              "unknown provider: one line")
        write("bad.json", '{"messages": [{"role": "user", "content": 5}]}')
        r = run(Q, ["estimate", "bad.json"], tmp, 1)
        check(r is not None and "bad.json:1:" in r.stderr.decode() and "/messages/0/content" in r.stderr.decode(),
              "bad transcript: file, line:col, pointer (%s)" % (r and r.stderr.decode().strip()))
        run(Q, ["estimate", "--bytes-per-token", "0", "t.json"], tmp, 2)
        run(Q, ["estimate", "--log", "--state", "x", "s.log"], tmp, 2)
        r = run(Q, ["estimate", "--help"], tmp, 0)
        check(r is not None and b"usage: quire estimate" in r.stdout, "--help")
    print("%d passed, %d failed" % (PASSES[0], len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
