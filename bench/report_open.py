#!/usr/bin/python3
"""How long a `quire report` page of a long session takes to open in a browser.

    bench/report_open.py --quire build/quire [--turns 1000] [--runs 5]

Generates a TURNS-turn session log (bench/gen.py --session), writes its report with and
without bodies, and opens each in Debian's headless Chromium RUNS times. The figure is the
page's own clock at its load event (performance.now(), from navigation start: parsing the
HTML, running the page script, laying out the timeline), read back from the DOM; Chromium's
process start is not in it. Prints one line per variant; never asserts a time."""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--quire", default=os.path.join(os.path.dirname(HERE), "build", "quire"))
ap.add_argument("--turns", type=int, default=1000)
ap.add_argument("--runs", type=int, default=5)
a = ap.parse_args()
chrome = shutil.which("chromium") or shutil.which("chromium-browser")
if not chrome:
    sys.exit("report_open: chromium is not installed (scripts/setup.sh chromium)")
tmp = tempfile.mkdtemp(prefix="quire-report-open-")
try:
    log = os.path.join(tmp, "session.jsonl")
    subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), "--session", str(a.turns), "--out", log], check=True)
    probe = ("<script>addEventListener('load',()=>{document.documentElement.setAttribute("
             "'data-load-ms',String(Math.round(performance.now())))})</script>")
    for name, extra in (("with bodies", []), ("--no-bodies", ["--no-bodies"])):
        page = os.path.join(tmp, "report.html")
        t0 = time.perf_counter()
        subprocess.run([a.quire, "report", *extra, "-o", page, log], check=True)
        gen = time.perf_counter() - t0
        html = open(page, encoding="utf-8").read()
        k = html.rfind("</body>")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html[:k] + probe + html[k:])
        ms = []
        for _ in range(a.runs):
            r = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu",
                                "--user-data-dir=" + os.path.join(tmp, "profile"), "--dump-dom",
                                "file://" + page], capture_output=True, text=True, timeout=120)
            m = re.search(r'data-load-ms="(\d+)"', r.stdout)
            if m:
                ms.append(int(m.group(1)))
        print("%d turns, %s: report written in %.2f s, %.1f MB; opened (load event) median %s ms of %d runs %s"
              % (a.turns, name, gen, len(html) / 1e6, statistics.median(ms) if ms else "n/a", len(ms), ms))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
