"""Output files of the quire command: -o and the other file flags write regular
files atomically through a temporary sibling of the real path (a symlink keeps
pointing at its target, which gets the new bytes), and write terminals, pipes and
devices directly (never replacing them with a regular file). Uses only paths in a
temporary folder: a FIFO, a symlink to the process's stderr, a symlink to a file."""
import argparse, os, subprocess, sys, tempfile, threading, stat

ap = argparse.ArgumentParser()
ap.add_argument("--quire", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--data")
a = ap.parse_args()
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


ex = os.path.join(a.src, "examples", "transcript.json")
rem = os.path.join(a.src, "examples", "remind.jsonl")
with tempfile.TemporaryDirectory() as td:
    # 1. a symlink to a regular file: the link stays, its target gets the request
    real = os.path.join(td, "real.json")
    link = os.path.join(td, "link.json")
    open(real, "w").write("old\n")
    os.symlink("real.json", link)
    r = subprocess.run([a.quire, "render", "-o", link, ex], capture_output=True)
    check(r.returncode == 0, "render -o symlink exits 0")
    check(os.path.islink(link), "the symlink is still a symlink")
    check(open(real).read().startswith('{"model"'), "the symlink's target holds the request")
    check(sorted(os.listdir(td)) == ["link.json", "real.json"], "no temporary file left: %s" % os.listdir(td))

    # 2. a symlink to the process's stderr: events arrive on stderr, the link stays
    errlink = os.path.join(td, "err")
    os.symlink("/proc/self/fd/2", errlink)
    r = subprocess.run([a.quire, "render", "--remind", rem, "--events", errlink, "-o", os.path.join(td, "out.json"), ex],
                       capture_output=True)
    check(r.returncode == 0, "render --events <symlink to stderr> exits 0")
    check(b'"sessionUpdate":"reminder_emitted"' in r.stderr, "the events went to stderr")
    check(os.path.islink(errlink), "the stderr symlink is still a symlink")

    # 3. a FIFO: the request arrives through it, the FIFO stays a FIFO
    fifo = os.path.join(td, "fifo")
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    t.start()
    r = subprocess.run([a.quire, "render", "-o", fifo, ex], capture_output=True, timeout=30)
    t.join(10)
    check(r.returncode == 0, "render -o FIFO exits 0")
    check(got and got[0].startswith(b'{"model"'), "the request came through the FIFO")
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO is still a FIFO")

    # 4. replay -o through a symlink
    open(real, "w").write("old\n")
    log = os.path.join(td, "s.jsonl")
    open(log, "w").write('{"type":"session","sessionId":"s","target":{"provider":"anthropic"}}\n'
                         '{"type":"message","message":{"role":"user","content":"hi"}}\n{"type":"render"}\n')
    r = subprocess.run([a.quire, "replay", "-o", link, log], capture_output=True)
    check(r.returncode == 0, "replay -o symlink exits 0")
    check(os.path.islink(link) and open(real).read().startswith('{"type":"request"'), "replay wrote the link's target")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
