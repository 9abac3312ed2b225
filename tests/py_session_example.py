"""Compiles and runs the C agent-loop example of docs/api.md (the block after
<!-- session-example -->) against the build's static library: a scripted
provider answers two turns; the program must print both turns and the log,
and `quire replay` of the log must reproduce the two requests."""
import argparse, os, re, subprocess, sys, tempfile, shutil, json

ap = argparse.ArgumentParser()
ap.add_argument("--quire", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--data")
a = ap.parse_args()
build = os.path.dirname(os.path.abspath(a.quire))
passed = failed = 0

def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)

san = ""
try:
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith("QUIRE_SANITIZER:"):
            san = line.split("=", 1)[1].strip()
except OSError:
    pass
sanflags = ["-fsanitize=" + san] if san else []

doc = open(os.path.join(a.src, "docs", "api.md"), encoding="utf-8").read()
m = re.search(r"<!-- session-example -->\n```c\n(.*?)```", doc, re.S)
check(m is not None, "docs/api.md has the session example")
lines = m.group(1).count("\n") if m else 0
check(30 <= lines <= 50, f"the example is about 40 lines ({lines})")
tmp = tempfile.mkdtemp(prefix="quire-session-example-")
try:
    if m:
        src = os.path.join(tmp, "loop.c")
        # the example, plus a main wrapper that also prints the log for the replay check
        code = m.group(1).replace("    quire_bytes_free(&log);", "    fwrite(log.data, 1, log.len, stderr);\n    quire_bytes_free(&log);")
        open(src, "w").write(code)
        exe = os.path.join(tmp, "loop")
        r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(a.src, "include")]
                           + sanflags + [src, "-o", exe, os.path.join(build, "libquire.a"), "-lutf8proc", "-lm"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "the example compiles: " + r.stderr[-1500:])
        if r.returncode == 0:
            out = subprocess.run([exe], capture_output=True, text=True)
            check(out.returncode == 0, "the example exits 0: " + out.stderr[-500:])
            lines_out = out.stdout.splitlines()
            check(len(lines_out) == 3 and lines_out[0].startswith("turn 1: POST ") and lines_out[1].startswith("turn 2: POST "),
                  "two turns printed: %r" % out.stdout)
            check(lines_out[-1].endswith(", 2 turns"), "two turns accepted")
            log = out.stderr
            check('"type":"render"' in log and log.count('"type":"render"') == 2, "the log holds two renders")
            lp = os.path.join(tmp, "session.jsonl")
            open(lp, "w").write(log)
            rep = subprocess.run([a.quire, "replay", lp], capture_output=True, text=True)
            check(rep.returncode == 0, "quire replay of the example's log: " + rep.stderr)
            reqs = [json.loads(l) for l in rep.stdout.splitlines() if l.startswith('{"type":"request"')]
            check(len(reqs) == 2, "two requests replayed")
            sizes = [int(l.split()[-2]) for l in lines_out[:2]]
            body_sizes = [len(json.dumps(q["body"], separators=(",", ":"), ensure_ascii=False).encode()) for q in reqs]
            check(sizes == body_sizes, f"replayed body sizes {body_sizes} == rendered {sizes}")
            check(len(reqs) == 2 and "CI is red." in json.dumps(reqs[0]["body"]) and "CI is red." not in json.dumps(reqs[1]["body"]),
                  "the ttl-1 reminder is in turn 1 only")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
