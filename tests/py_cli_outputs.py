"""Output files of the quire command: -o and the other file flags write regular
files atomically through a temporary sibling of the real path (a symlink keeps
pointing at its target, which gets the new bytes), and write terminals, pipes and
devices directly (never replacing them with a regular file). Uses only paths in a
temporary folder: a FIFO, a symlink to the process's stderr, a symlink to a file.

Then the rules of docs/cli.md "Output files" and "Input limit", each checked on
the case that used to lose or expose a file: descriptors written in place
(appending), temporaries never opened through a planted link, nothing committed
before every output (stdout too) was written, mode and owner kept, dangling
links resolved, every read bounded, replay --out all or nothing, validate -o,
import of a file of another format, an empty replay log."""
import argparse, os, resource, signal, subprocess, sys, tempfile, threading, stat, time

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

Q = a.quire


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("timeout", 60)
    return subprocess.run([Q] + args, **kw)


def listing(d):
    return sorted(os.listdir(d))


REQ = b'{"model"'
with tempfile.TemporaryDirectory() as td:
    # ---- 1. descriptors are written in place, appending where opened for append ----
    log = os.path.join(td, "app.log")
    with open(log, "wb") as fh:
        fh.write(b"before\n")
    ino = os.stat(log).st_ino
    with open(log, "ab") as fh:  # quire ... -o /dev/stdout >> app.log
        r = run(["render", "-o", "/dev/stdout", ex], stdout=fh, stderr=subprocess.PIPE, capture_output=False)
    data = open(log, "rb").read()
    check(r.returncode == 0, "render -o /dev/stdout >> log exits 0")
    check(data.startswith(b"before\n" + REQ), "-o /dev/stdout appended to the log: %r" % data[:40])
    check(os.stat(log).st_ino == ino, "the log is the same file (not replaced)")
    # make run > log 2>&1: one open file for both; --events /dev/stderr
    with open(log, "wb") as fh:
        fh.write(b"header\n")
        fh.flush()
        r = run(["render", "--remind", rem, "--events", "/dev/stderr", ex], stdout=fh, stderr=fh, capture_output=False)
    data = open(log, "rb").read()
    check(r.returncode == 0, "render --events /dev/stderr > log 2>&1 exits 0")
    check(data.startswith(b"header\n") and REQ in data and b"reminder_emitted" in data,
          "log keeps its header and holds both the request and the events: %r" % data[:60])
    for form in ("/dev/fd/%d", "/proc/self/fd/%d"):
        with open(log, "wb") as fh:
            fh.write(b"kept\n")
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        ino = os.stat(log).st_ino
        r = run(["render", "-o", form % fd, ex], pass_fds=(fd,))
        os.close(fd)
        data = open(log, "rb").read()
        check(r.returncode == 0, "render -o %s exits 0: %r" % (form, r.stderr))
        check(data.startswith(b"kept\n" + REQ), "-o %s appended: %r" % (form, data[:30]))
        check(os.stat(log).st_ino == ino, "-o %s left the same file" % form)
    r = run(["render", "-o", "/dev/fd/97", ex])
    check(r.returncode == 1 and b"/dev/fd/97: Bad file descriptor" in r.stderr, "a closed descriptor is an error: %r" % r.stderr)
    slog = os.path.join(td, "s.jsonl")
    open(slog, "w").write('{"type":"session","sessionId":"s","target":{"provider":"anthropic"}}\n'
                          '{"type":"message","message":{"role":"user","content":"hi"}}\n{"type":"render"}\n')
    with open(log, "wb") as fh:
        fh.write(b"kept\n")
    with open(log, "ab") as fh:
        r = run(["replay", "-o", "/dev/stdout", slog], stdout=fh, stderr=subprocess.PIPE, capture_output=False)
    check(r.returncode == 0 and open(log, "rb").read().startswith(b'kept\n{"type":"request"'), "replay -o /dev/stdout appends")
    os.unlink(log)

    # ---- 2. temporaries: never opened through a planted link or into a planted file ----
    victim = os.path.join(td, "victim")
    open(victim, "w").write("precious\n")
    out = os.path.join(td, "out.json")
    last = int(open("/proc/sys/kernel/ns_last_pid").read())
    planted = []
    for pid in range(last + 1, last + 1500):  # the names the old writer used: TARGET.quire-tmp-PID-I
        for i in range(2):
            n = "%s.quire-tmp-%d-%d" % (out, pid, i)
            os.symlink(victim, n)
            planted.append(n)
    r = run(["render", "-o", out, ex])
    check(r.returncode == 0, "render -o with planted links exits 0")
    check(open(victim).read() == "precious\n", "a planted link's target was not written")
    check(open(out, "rb").read().startswith(REQ), "the output is in place")
    for n in planted:
        if os.path.lexists(n):
            os.unlink(n)
    os.unlink(victim)
    if os.path.exists(out) and not open(out, "rb").read().startswith(REQ):
        os.unlink(out)
    check(listing(td) == ["out.json", "s.jsonl"], "no temporary left: %s" % listing(td))
    # a new file gets 0666 less the umask (the temporary's 0600 is not what stays)
    os.unlink(out)
    old = os.umask(0o022)
    r = run(["render", "-o", out, ex])
    os.umask(old)
    check(stat.S_IMODE(os.stat(out).st_mode) == 0o644, "a new output is 0644 under umask 022: %o" % os.stat(out).st_mode)

    # ---- 3. nothing is committed before every output, stdout included, was written ----
    st_path = os.path.join(td, "p.json")
    open(st_path, "w").write("OLD\n")
    with open("/dev/full", "wb") as full:
        r = run(["render", "--remind", rem, "--state-out", st_path, ex], stdout=full, stderr=subprocess.PIPE,
                capture_output=False)
    check(r.returncode == 1 and b"write failed" in r.stderr, "render > /dev/full exits 1: %r" % r.stderr)
    check(open(st_path).read() == "OLD\n", "--state-out untouched when stdout failed")
    check(listing(td) == ["out.json", "p.json", "s.jsonl"], "no temporary left after /dev/full: %s" % listing(td))
    # a closed pipe (SIGPIPE): exit 1 with the state untouched, not a kill after the rename
    rfd, wfd = os.pipe()
    os.close(rfd)
    r = run(["render", "--remind", rem, "--state-out", st_path, ex], stdout=wfd, stderr=subprocess.PIPE, capture_output=False)
    os.close(wfd)
    check(r.returncode == 1, "render into a closed pipe exits 1 (not killed by SIGPIPE): %d" % r.returncode)
    check(open(st_path).read() == "OLD\n", "--state-out untouched when the pipe was closed")
    check(listing(td) == ["out.json", "p.json", "s.jsonl"], "no temporary left after a closed pipe: %s" % listing(td))
    # a full disk (RLIMIT_FSIZE): the named outputs all stay as they were
    def fsize(n):
        def f():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
        return f
    small_fsize = fsize(300)
    open(out, "w").write("OLD\n")
    r = run(["render", "--remind", rem, "--state-out", st_path, "-o", out, ex], preexec_fn=small_fsize)
    check(r.returncode == 1 and b"write failed" in r.stderr, "render on a full disk exits 1: %r" % r.stderr)
    check(open(out).read() == "OLD\n" and open(st_path).read() == "OLD\n", "both outputs untouched on a full disk")
    check(listing(td) == ["out.json", "p.json", "s.jsonl"], "no temporary left on a full disk: %s" % listing(td))

    # ---- 4. an existing file keeps its mode (and owner, for root); hard links ----
    os.chmod(out, 0o600)
    r = run(["render", "-o", out, ex])
    check(r.returncode == 0 and stat.S_IMODE(os.stat(out).st_mode) == 0o600, "chmod 600 output stays 600: %o" % os.stat(out).st_mode)
    os.chmod(st_path, 0o640)
    r = run(["render", "--remind", rem, "--state-out", st_path, "-o", out, ex])
    check(stat.S_IMODE(os.stat(st_path).st_mode) == 0o640, "--state-out keeps 0640")
    if os.geteuid() == 0:
        os.chown(out, 4242, 4343)
        r = run(["render", "-o", out, ex])
        check((os.stat(out).st_uid, os.stat(out).st_gid) == (4242, 4343), "root keeps the file's owner")
    hl = os.path.join(td, "hard")
    os.link(out, hl)
    before = open(hl, "rb").read()
    r = run(["render", "--pretty", "-o", out, ex])
    check(open(hl, "rb").read() == before and open(out, "rb").read() != before,
          "the documented link rule: the named path gets the new bytes, another hard link keeps the old ones")
    os.unlink(hl)

    # ---- 5. dangling links, both ways ----
    s1, s2 = os.path.join(td, "s1"), os.path.join(td, "s2")
    os.symlink("s1", s2)
    r = run(["render", "--remind", rem, "--state-out", s1, "-o", s2, ex])
    check(r.returncode == 1 and b"named for two outputs" in r.stderr, "a dangling link to another output is refused: %r" % r.stderr)
    check(not os.path.exists(s1) and os.path.islink(s2), "nothing written")
    os.unlink(s2)
    dl = os.path.join(td, "dl.json")
    os.symlink("sub/dtarget.json", dl)
    os.mkdir(os.path.join(td, "sub"))
    r = run(["render", "-o", dl, ex])
    check(r.returncode == 0, "render -o <dangling link> exits 0: %r" % r.stderr)
    dt = os.path.join(td, "sub", "dtarget.json")
    check(os.path.islink(dl) and os.path.exists(dt) and open(dt, "rb").read().startswith(REQ),
          "written through the dangling link, which stays a link")
    check(listing(os.path.join(td, "sub")) == ["dtarget.json"], "no temporary left in the link's folder")

    # ---- 6. every read is bounded (--max-input on every command, 1 GiB by default) ----
    t0 = time.time()
    yes = subprocess.Popen(["yes", "[1,"], stdout=subprocess.PIPE)
    r = run(["json", "--max-input", "1000000", "-"], stdin=yes.stdout)
    yes.stdout.close()
    yes.kill()
    yes.wait()
    check(r.returncode == 1 and r.stderr == b"quire: <stdin>: input larger than 1000000 bytes (the --max-input limit)\n",
          "yes '[1,' | quire json stops at the limit: %r" % r.stderr)
    check(time.time() - t0 < 20, "and fast")
    small = ["--max-input", "100000"]
    zero_cases = [
        ["json", "/dev/zero"], ["render", "/dev/zero"], ["render", "--state", "/dev/zero", ex],
        ["render", "--remind", "/dev/zero", ex], ["render", "--caps", "/dev/zero", ex],
        ["render", "--policy", "/dev/zero", ex], ["compact", "/dev/zero"], ["compact", "--summary", "/dev/zero", ex],
        ["compact", "--policy", "/dev/zero", ex], ["compact", "--state", "/dev/zero", ex], ["replay", "/dev/zero"],
        ["import", "--from", "codex", "/dev/zero"], ["ingest", "/dev/zero"], ["ingest", "--state", "/dev/zero"],
        ["caps", "--list", "--caps", "/dev/zero"], ["validate", "--provider", "anthropic", "/dev/zero"],
        ["validate", "--provider", "anthropic", "--caps", "/dev/zero", ex],
    ]
    for c in zero_cases:
        r = run(c[:1] + small + c[1:], stdin=subprocess.DEVNULL, timeout=30)
        check(r.returncode == 1 and r.stderr == b"quire: /dev/zero: input larger than 100000 bytes (the --max-input limit)\n",
              "%s stops at the limit: %d %r" % (" ".join(c), r.returncode, r.stderr[:120]))
    # exactly the limit is fine; one byte more is not
    j = os.path.join(td, "n.json")
    open(j, "w").write("[1]\n")
    check(run(["json", "--max-input", "4", j]).returncode == 0, "an input of exactly --max-input bytes is read")
    check(run(["json", "--max-input=3", j]).returncode == 1, "one byte more is an error")
    check(run(["json", "--max-input", "0", j]).returncode == 2, "--max-input 0 is a usage error")
    # the default: a (sparse) file one byte over 1 GiB is refused without reading it
    big = os.path.join(td, "big.json")
    with open(big, "wb") as fh:
        fh.truncate((1 << 30) + 1)
    r = run(["json", big])
    check(r.returncode == 1 and b"input larger than 1073741824 bytes" in r.stderr, "the default limit is 1 GiB: %r" % r.stderr)
    os.unlink(big)
    check(b"--max-input N" in run(["render", "--help"]).stdout, "every command's help lists --max-input")

    # ---- 7. replay --out all or nothing; validate -o; import of another format; an empty log ----
    od = os.path.join(td, "replay-out")
    before = listing(td)
    r = run(["replay", "--out", od, slog], preexec_fn=fsize(40))
    check(r.returncode == 1, "replay --out on a full disk exits 1: %r" % r.stderr)
    check(listing(td) == before, "replay --out on a full disk leaves nothing: %s" % listing(td))
    r = run(["replay", "--out", od, slog])
    check(r.returncode == 0 and listing(od) == ["events.jsonl", "turn-0001.json"], "replay --out writes the folder")
    olds = {n: open(os.path.join(od, n), "rb").read() for n in listing(od)}
    r = run(["replay", "--pretty", "--out", od, slog], preexec_fn=fsize(40))
    check(r.returncode == 1 and {n: open(os.path.join(od, n), "rb").read() for n in listing(od)} == olds,
          "a failed replay --out into an existing folder changes none of its files: %s" % listing(od))
    bad = os.path.join(td, "bad-req.json")
    open(bad, "w").write('{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"assistant","content":"hi"}]}')
    vo = os.path.join(td, "violations.txt")
    r = run(["validate", "--provider", "anthropic", "-o", vo, bad])
    check(r.returncode == 1 and open(vo).read() == "/messages/0/role: the first message must be a user message\n",
          "validate -o writes the violations: %r" % (open(vo).read() if os.path.exists(vo) else None))
    good = os.path.join(td, "good-req.json")
    open(good, "wb").write(run(["render", ex]).stdout)
    r = run(["validate", "--provider", "anthropic", "-o", vo, good])
    check(r.returncode == 0 and open(vo).read() == "", "validate -o of a valid request writes an empty file")
    gem = os.path.join(td, "gemini-cli.json")
    open(gem, "w").write('{\n  "sessionId": "x",\n  "projectHash": "y",\n  "messages": [\n    {"type": "user", "content": "hi"}\n  ]\n}\n')
    for src, nlines in ((ex, open(ex).read().count("\n")), (gem, 7)):
        for fmt, name in (("claude-code", "Claude Code"), ("codex", "Codex rollout")):
            for extra in ([], ["--skip-invalid"]):
                r = run(["import", "--from", fmt] + extra + [src])
                lines = r.stderr.decode().splitlines()
                check(r.returncode == 1 and r.stdout == b"" and len(lines) == 1 and name in lines[0],
                      "import --from %s %s %s: exit 1 naming the format: %d %r" % (fmt, " ".join(extra), os.path.basename(src),
                                                                                 r.returncode, lines[:3]))
    r = run(["replay", "--from", "claude-code", "--skip-invalid", ex])
    check(r.returncode == 1 and b"not a Claude Code session log" in r.stderr, "replay --from of another format fails")
    empty = os.path.join(td, "empty.jsonl")
    open(empty, "w").write("\n")
    r = run(["replay", empty])
    check(r.returncode == 1 and r.stderr == b"quire: %s: empty session log (no lines)\n" % empty.encode(), "an empty replay log is an error: %r" % r.stderr)
    r = run(["replay", os.path.join(td, "missing.jsonl")])
    check(r.returncode == 1, "a missing replay log is an error")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
