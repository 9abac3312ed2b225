#!/usr/bin/env python3
"""`quire report` in a real browser: headless Chromium from Debian.

For a small session with hostile bodies and for a real Claude Code log:
  - the page's script ran (the root element carries data-ready="1");
  - the timeline has one point (circle.turn-pt) per turn and the summary says so;
  - no script from the log ran: a body that tries to set data-pwned on the root
    element leaves no trace, the page has exactly its own two <script> elements and
    no <img>, and the hostile text is in the page as text;
  - opening turn N (#turn-N) rebuilds its body from the embedded prefix data: the
    text shown parses as JSON equal to the request `quire replay` produced for that
    turn, and the diff against turn N-1 is filled in;
  - a screenshot of each page is left in the test's output folder
    (build/tests/report-browser/*.png) for a person to look at.

Chromium is installed by the set-up (scripts/setup.sh chromium) when the test runs
as root and it is missing; otherwise the test says what to run and counts as skipped.

Usage: py_report_browser.py --quire BIN --src SRC --data DIR [--out DIR]
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--mute-audio"]


def chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Run:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what)


def browse(chrome, url, profile, extra):
    cmd = [chrome] + FLAGS + ["--user-data-dir=" + profile] + extra + [url]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    return p.stdout.decode("utf-8", "replace")


def dom_of(chrome, path, profile, frag=""):
    return browse(chrome, "file://" + path + frag, profile, ["--dump-dom", "--virtual-time-budget=5000"])


def pre_text(dom, turn, cls):
    m = re.search(r'<details[^>]*id="turn-%d"[^>]*>(.*?)</details>' % turn, dom, re.S)
    if not m:
        return None
    m2 = re.search(r'<pre class="%s">(.*?)</pre>' % cls, m.group(1), re.S)
    return None if not m2 else m2.group(1)


def strip_tags(s):
    return html.unescape(re.sub(r"<[^>]+>", "\n", s))


def check_page(R, chrome, quire, page, log, args, outdir, name, profile):
    # the bodies quire replay produced, to compare with what the page rebuilds
    rp = subprocess.run([quire, "replay"] + args + [log], capture_output=True)
    bodies = [json.loads(l)["body"] for l in rp.stdout.decode().split("\n")
              if l.startswith('{"type":"request"')]
    turns = len(bodies)
    opened = sorted({1, 2, turns} & set(range(1, turns + 1)))
    # one load opens several turns at once (#turn-1,2,N): each launch costs seconds
    dom = dom_of(chrome, page, profile, "#turn-" + ",".join(str(n) for n in opened))
    R.check('data-ready="1"' in dom, "%s: the page's script ran" % name)
    m = re.search(r'id="summary" data-turns="(\d+)"', dom)
    R.check(m is not None and int(m.group(1)) == turns, "%s: the summary counts %d turns" % (name, turns))
    pts = len(re.findall(r'<circle class="turn-pt"', dom))
    R.check(pts == turns, "%s: one timeline point per turn (%d points, %d turns)" % (name, pts, turns))
    root = dom.split("<head", 1)[0] + dom.split("<body", 1)[-1].split(">", 1)[0]
    R.check("data-pwned" not in root, "%s: no script from the log ran (data-pwned set)" % name)
    R.check(len(re.findall(r"<script\b", dom)) == 2, "%s: exactly the page's own two <script> elements" % name)
    R.check(re.search(r"<img\b", dom) is None, "%s: no <img> element came from a body" % name)
    for n in opened:
        body = pre_text(dom, n, "body-pre")
        ok = False
        try:
            text = html.unescape(body or "")
            ok = json.loads(text) == bodies[n - 1] and "\n  " in text
        except ValueError:
            ok = False
        R.check(ok, "%s: #turn-%d shows the request body of turn %d, pretty" % (name, n, n))
        diff = pre_text(dom, n, "diff-pre")
        if n == 1:
            R.check(diff is not None and "nothing to compare" in diff, "%s: turn 1 has no diff" % name)
        else:
            R.check(diff is not None and "unchanged line(s) before" in diff,
                    "%s: #turn-%d shows the diff against turn %d" % (name, n, n - 1))
    shot = os.path.join(outdir, name + ".png")
    browse(chrome, "file://" + page + "#turn-%d" % turns, profile,
           ["--screenshot=" + shot, "--window-size=1280,1800", "--hide-scrollbars"])
    R.check(os.path.exists(shot) and os.path.getsize(shot) > 1000, "%s: screenshot %s" % (name, shot))
    return dom


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    chrome = chromium()
    if not chrome and os.geteuid() == 0:
        subprocess.run(["sh", os.path.join(a.src, "scripts", "setup.sh"), "chromium"], check=False)
        chrome = chromium()
    if not chrome:
        print("report-browser: Chromium is not installed; run: sudo apt-get install -y chromium")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    outdir = a.out or os.path.join(os.path.dirname(os.path.abspath(a.quire)), "tests", "report-browser")
    os.makedirs(outdir, exist_ok=True)
    R = Run()
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "profile")
        hostile = os.path.join(a.src, "golden", "report", "hostile", "session.jsonl")
        page = os.path.join(tmp, "hostile.html")
        subprocess.run([a.quire, "report", "-o", page, hostile], check=True)
        dom = check_page(R, chrome, a.quire, page, hostile, [], outdir, "hostile", profile)
        text = strip_tags(dom)
        R.check("<script>document.documentElement.setAttribute('data-pwned','reminder')</script>" in text,
                "hostile: the reminder body is shown as text")
        R.check('evil"><img src=x onerror=alert(1)>' in text, "hostile: the server name is shown as text")

        cc = os.path.join(a.data, "corpus", "sessions", "claude-code", "spotter__tool_heavy.jsonl")
        log = os.path.join(tmp, "cc.jsonl")
        with open(log, "wb") as f:
            f.write(subprocess.run([a.quire, "import", "--from", "claude-code", cc], capture_output=True,
                                   check=True).stdout)
        page = os.path.join(tmp, "cc.html")
        subprocess.run([a.quire, "report", "-o", page, log], check=True)
        check_page(R, chrome, a.quire, page, log, [], outdir, "claude-code", profile)
    print("report-browser: screenshots in %s" % outdir)
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
