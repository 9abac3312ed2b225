#!/usr/bin/python3
"""Runs the bad-input corpus (tests/bad/, see tests/bad/cases.py) against the quire binary.

    py_bad.py --quire BIN [--src DIR] [--data DIR] [-j N] [--area NAME]... [--filter SUBSTR] [-v]

Every case runs in a fresh temporary folder holding only its input (and the area's
fixtures). A case passes when:
  - the process was not killed by a signal, did not hit the timeout, and printed no
    sanitizer report (ASan/UBSan/LeakSanitizer exit with 86 here, so they cannot pass for 1);
  - exit status and stderr equal the recorded line of tests/bad/<area>/expected.tsv
    (exactly; the input's name appears as is, the folder never does);
  - when nothing is recorded: the generator's invariant holds (exit status, and for
    failures exactly one stderr line `quire: NAME...`);
  - after a failure none of the area's output files exists, and no stray file (say a
    leftover temporary from an atomic write) was left in the folder.

QUIRE_UPDATE_BAD=1 records expected.tsv from what the binary does now (refused when CI is
set; never records a crash, a sanitizer report, a partial output or a stray file).
"""

import argparse
import concurrent.futures
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad")
sys.path.insert(0, BAD)
import cases as C  # noqa: E402

SAN_EXIT = 86
SAN_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer",
               "AddressSanitizer:DEADLYSIGNAL")
TIMEOUT = 180
MANIFEST = "expected.tsv"
SKIP_FILES = {MANIFEST, "README.md"}


def esc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def unesc(s):
    out, i = [], 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            out.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def load_manifest(area):
    path = os.path.join(BAD, area, MANIFEST)
    if not os.path.exists(path):
        return None
    m = {}
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not (parts[1].isdigit() or (parts[1][:1] == "x" and parts[1][1:].isdigit())):
                raise SystemExit("%s:%d: want NAME<TAB>EXIT<TAB>STDERR (or NAME<TAB>xEXIT<TAB>WHY)" % (path, ln))
            if parts[1].startswith("x"):  # a known bug: should exit EXIT, does not yet
                m[parts[0]] = ("x", int(parts[1][1:]), unesc(parts[2]))
            else:
                m[parts[0]] = (int(parts[1]), unesc(parts[2]))
    return m


def write_manifest(area, results):
    path = os.path.join(BAD, area, MANIFEST)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lines = ["# %s: NAME<TAB>EXIT<TAB>STDERR (escaped); recorded with QUIRE_UPDATE_BAD=1, review before committing\n"
             % area]
    for name in sorted(results):
        r = results[name]
        if r[0] == "x":
            lines.append("%s\tx%d\t%s\n" % (name, r[1], esc(r[2])))
        else:
            lines.append("%s\t%d\t%s\n" % (name, r[0], esc(r[1])))
    new = "".join(lines)
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
    if new != old:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        return True
    return False


def area_cases(area, spec):
    """Committed files first, then generated ones; names must be unique."""
    out, seen = [], set()
    d = os.path.join(BAD, area)
    if os.path.isdir(d):
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if name in SKIP_FILES or name.startswith(".") or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                data = f.read()
            out.append(C.Case(name, data, None))
            seen.add(name)
    for g in spec.gens:
        for c in g():
            if c.name in seen:
                raise SystemExit("%s: duplicate case name %s (from %s)" % (area, c.name, g.__name__))
            seen.add(c.name)
            out.append(c)
    return out


def child_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_")}
    env["LC_ALL"] = "C"
    env["TZ"] = "UTC"
    asan = "exitcode=%d:detect_leaks=1:allocator_may_return_null=1" % SAN_EXIT
    env["ASAN_OPTIONS"] = asan + (":" + os.environ["ASAN_OPTIONS"] if os.environ.get("ASAN_OPTIONS") else "")
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:exitcode=%d" % SAN_EXIT
    env["LSAN_OPTIONS"] = "exitcode=%d" % SAN_EXIT
    return env


def area_available(quire, spec):
    """The command exists and knows every --flag the area uses (modules land at different times)."""
    argv = spec.args.split()
    cmd = spec.needs or argv[0]
    try:
        p = subprocess.run([quire, cmd, "--help"], capture_output=True, timeout=30, env=child_env())
    except subprocess.TimeoutExpired:
        return "quire %s --help hangs" % cmd
    text = (p.stdout + p.stderr).decode("utf-8", "replace")
    if p.returncode != 0 or "not implemented" in text:
        return "quire %s is not implemented yet" % cmd
    for a in argv:
        if a.startswith("--") and a not in text:
            return "quire %s has no %s yet" % (cmd, a)
    return None


def run_case(quire, area, spec, case, fixtures_dir):
    """Returns (exit, stderr, problems) where problems are hard failures (never recordable)."""
    problems = []
    tmp = tempfile.mkdtemp(prefix="quire-bad-")
    try:
        data = case.bytes()
        with open(os.path.join(tmp, case.name), "wb") as f:
            f.write(data)
        del data
        args = []
        for a in spec.args.split():
            if a == "@IN@":
                args.append(case.name)
            elif a.startswith("@FIX/") and a.endswith("@"):
                fx = a[5:-1]
                shutil.copy(os.path.join(fixtures_dir, fx), os.path.join(tmp, fx))
                args.append(fx)
            else:
                args.append(a)
        before = set(os.listdir(tmp))
        t0 = time.monotonic()
        try:
            p = subprocess.run([quire] + args, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=TIMEOUT, env=child_env())
        except subprocess.TimeoutExpired:
            return None, "", ["timed out after %d s (a hang?)" % TIMEOUT]
        secs = time.monotonic() - t0
        err = p.stderr.decode("utf-8", "replace")
        try:
            p.stderr.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.append("stderr is not valid UTF-8 (byte %d): %r" % (e.start, p.stderr[max(0, e.start - 40):e.start + 8]))
        if p.returncode < 0:
            problems.append("killed by signal %s" % signal.Signals(-p.returncode).name)
        if p.returncode == SAN_EXIT or any(m in err for m in SAN_MARKERS):
            problems.append("sanitizer report:\n" + "\n".join("      " + ln for ln in err.splitlines()[:40]))
        if p.returncode == 1 and not spec.report_lines and (len(err.splitlines()) != 1 or not err.endswith("\n")):
            problems.append("a failure must print exactly one stderr line (DESIGN 8), got %d: %r" % (
                len(err.splitlines()), err[:300]))
        after = set(os.listdir(tmp))
        created = after - before
        outputs = set(spec.outputs)
        if p.returncode != 0:
            left = sorted(created & outputs)
            if left:
                problems.append("failed (exit %d) but left output file(s) behind: %s" % (p.returncode, ", ".join(left)))
        if p.returncode == 0:
            for o in sorted(created & outputs):
                bad = check_output(os.path.join(tmp, o))
                if bad:
                    problems.append("output %s is not valid: %s" % (o, bad))
            for post in spec.post:
                argv = post.split()
                if not all(os.path.exists(os.path.join(tmp, x)) for x in argv if x in outputs):
                    continue
                q = subprocess.run([quire] + argv, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, timeout=TIMEOUT, env=child_env())
                if q.returncode != 0:
                    problems.append("quire does not read what it wrote: `quire %s` exits %d: %s" % (
                        post, q.returncode, q.stderr.decode("utf-8", "replace").strip()[:600]))
            after = set(os.listdir(tmp))
            created = after - before
        stray = sorted(created - outputs)
        if stray:
            problems.append("stray file(s) left in the folder: %s" % ", ".join(stray))
        if secs > 60:
            problems.append("took %.0f s" % secs)
        return p.returncode, err, problems
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _no_constants(name):
    raise ValueError("%s is not JSON" % name)


def check_json_text(b, what):
    import json
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError as e:
        return "%s: invalid UTF-8 at byte %d" % (what, e.start)
    try:
        json.loads(text, parse_constant=_no_constants)
    except ValueError as e:
        return "%s: %s" % (what, e)
    return None


def check_output(path):
    """Every file quire writes is JSON (.json) or JSON Lines (.jsonl); folders file by file."""
    if os.path.isdir(path):
        for n in sorted(os.listdir(path)):
            bad = check_output(os.path.join(path, n))
            if bad:
                return "%s/%s" % (os.path.basename(path), bad)
        return None
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".jsonl"):
        for i, line in enumerate(data.split(b"\n"), 1):
            if line:
                bad = check_json_text(line, "line %d" % i)
                if bad:
                    return bad
        if data and not data.endswith(b"\n"):
            return "does not end in a newline"
    elif path.endswith(".json"):
        return check_json_text(data, "the file")
    return None


def invariant(case, code, err, spec):
    """What an unrecorded case must satisfy."""
    want = case.exit
    if want is not None and code != want:
        return "exit %d, the generator expects %d" % (code, want)
    if want is None and code not in (0, 1):
        return "exit %d, want 0 or 1" % code
    if code == 1:
        lines = err.splitlines()
        if (len(lines) != 1 and not (spec.report_lines and lines)) or not err.endswith("\n"):
            return "a failure must print exactly one stderr line, got %d" % len(lines)
        if not (lines[0].startswith("quire: %s:" % case.name) or lines[0].startswith("quire: ")):
            return "stderr must start with 'quire: ': %r" % lines[0]
        if not lines[0].startswith("quire: %s" % case.name):
            return "the stderr line does not name the input %s: %r" % (case.name, lines[0])
    return None


def main():
    # outputs may nest 1024 deep (the default limit): give the checking threads room
    import threading
    sys.setrecursionlimit(20000)
    threading.stack_size(256 << 20)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", default=os.path.dirname(HERE))
    ap.add_argument("--data", default=None)
    ap.add_argument("-j", type=int, default=int(os.environ.get("QUIRE_BAD_JOBS", "2")))
    ap.add_argument("--area", action="append", default=[])
    ap.add_argument("--filter", default="")
    ap.add_argument("--no-big", action="store_true", help="skip the 64 MiB / 100,000-deep inputs")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    quire = os.path.abspath(a.quire)
    update = os.environ.get("QUIRE_UPDATE_BAD") == "1"
    if update and os.environ.get("CI"):
        print("QUIRE_UPDATE_BAD is refused when CI is set", file=sys.stderr)
        return 2
    fixtures = os.path.join(BAD, "fixtures")
    unknown = [x for x in a.area if x not in C.AREAS]
    if unknown:
        print("unknown area(s): %s (have: %s)" % (", ".join(unknown), ", ".join(C.AREAS)), file=sys.stderr)
        return 2
    passed = failed = unrecorded = xfailed = 0
    skipped = []
    for area, spec in C.AREAS.items():
        if a.area and area not in a.area:
            continue
        why = area_available(quire, spec)
        if why:
            skipped.append("%s (%s)" % (area, why))
            continue
        manifest = load_manifest(area)
        cases = [c for c in area_cases(area, spec) if a.filter in c.name]
        big_names = set()
        if a.no_big:
            big_names = {c.name for g in (C.gen_json_big, C.big_transcript_cases) for c in g()}
            cases = [c for c in cases if c.name not in big_names]
        results, recorded = {}, {}
        with concurrent.futures.ThreadPoolExecutor(max(1, a.j)) as ex:
            futs = {ex.submit(run_case, quire, area, spec, c, fixtures): c for c in cases}
            for fut in futs:
                results[futs[fut].name] = fut.result()
        for c in cases:
            code, err, problems = results[c.name]
            label = "%s/%s" % (area, c.name)
            msgs = list(problems)
            want = manifest.get(c.name) if manifest is not None else None
            if not problems and want is not None and want[0] == "x":
                if code == want[1]:
                    msgs.append("XPASS: recorded as a known bug (%s) but now exits %d: record it with "
                                "QUIRE_UPDATE_BAD=1 after checking stderr %r" % (want[2], code, err))
                else:
                    xfailed += 1
                    if a.v:
                        print("XFAIL %s: %s" % (label, want[2]))
                if update:  # a fixed bug gets its real line; an open one keeps its xEXIT line
                    recorded[c.name] = (code, err) if code == want[1] else want
                    msgs = []
            elif not problems:
                if update:
                    recorded[c.name] = (code, err)
                elif want is not None:
                    if code != want[0]:
                        msgs.append("exit %d, expected %d" % (code, want[0]))
                    if err != want[1]:
                        msgs.append("stderr differs:\n      expected: %r\n      actual:   %r" % (want[1], err))
                else:
                    inv = invariant(c, code, err, spec)
                    if inv:
                        msgs.append(inv + (" (stderr: %r)" % err[:300]))
                    elif manifest is not None:
                        msgs.append("no line in %s/%s/%s: record it with QUIRE_UPDATE_BAD=1 (exit %d, stderr %r)"
                                    % ("tests/bad", area, MANIFEST, code, err))
                    else:
                        unrecorded += 1
            if msgs:
                failed += 1
                print("FAIL %s\n    %s\n    reproduce: cd $(mktemp -d) && <write the input> && %s %s" % (
                    label, "\n    ".join(msgs), quire, spec.args.replace("@IN@", c.name)))
            else:
                passed += 1
                if a.v:
                    print("ok   %s (exit %s)" % (label, code))
        if manifest is not None and not a.filter and not a.no_big and not update:
            stale = sorted(set(manifest) - {c.name for c in cases})
            for s in stale:
                failed += 1
                print("FAIL %s/%s: recorded in %s but no such case any more" % (area, s, MANIFEST))
        if update:
            if a.filter or a.no_big:
                old = manifest or {}
                old.update(recorded)
                recorded = old
            changed = write_manifest(area, recorded)
            print("%s %s/%s (%d cases)" % ("UPDATED" if changed else "unchanged", area, MANIFEST, len(recorded)))
    for s in skipped:
        print("SKIP %s" % s)
    if unrecorded:
        print("NOTE %d cases of areas without expected.tsv were checked against their invariants only" % unrecorded)
    if xfailed:
        print("XFAIL %d known bugs (lines with xEXIT in expected.tsv; -v lists them)" % xfailed)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
