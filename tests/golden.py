#!/usr/bin/python3
"""Golden test runner for the quire command.

    golden.py --quire PATH [--data DIR] [--filter SUBSTR] [-j N] [-v] DIR [DIR...]

Each DIR is a case folder (it holds case.json), or any folder above case folders (an
area such as golden/render, or golden/ itself). A case folder holds:

    case.json        {"args": [...], "stdin": "file", "files": ["out.json"], "description": "..."}
    expected.stdout  exact bytes of standard output
    expected.stderr  exact bytes of standard error
    expected.exit    the exit status, as text, e.g. "0\\n"
    expected/NAME    exact bytes of every output file named in "files" (a folder when the
                     command writes a folder)
    ...inputs        whatever the arguments name, relative to the case folder

Every case runs in a private copy of its folder (inputs only, no expected files), so the
source tree is never written to. `@DATA@` in an argument becomes the test data folder (tests/data).
In the captured stdout and stderr the test data folder's path reads `@DATA@` and the
temporary case folder's path reads `@CASE@`, so that goldens do not depend on where the
tree lives.

QUIRE_UPDATE_GOLDEN=1 rewrites the expected files from what the command does now
(refused when CI is set). See docs/testing.md.
"""

import argparse
import concurrent.futures
import difflib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

CASE_FILE = "case.json"
CASE_KEYS = {"args", "stdin", "files", "description"}
EXPECTED_DIR = "expected"
EXPECTED_STREAMS = ("expected.stdout", "expected.stderr", "expected.exit")
DIFF_CAP = 200          # lines of diff shown per mismatching file
LONG_LINE = 300         # lines longer than this get a JSON-aware diff and a byte locator
DEFAULT_TIMEOUT = 120   # seconds per case


class CaseError(Exception):
    """The case itself is malformed (not a quire failure)."""


# --------------------------------------------------------------------------------------
# Finding and loading cases

def find_cases(root):
    """Case folders at or below root, sorted; a case folder's own subfolders are not searched."""
    if os.path.isfile(os.path.join(root, CASE_FILE)):
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if CASE_FILE in filenames:
            found.append(dirpath)
            dirnames[:] = []
        else:
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    return sorted(found)


def _safe_rel(name, what):
    if not isinstance(name, str) or not name:
        raise CaseError("%s must be a non-empty string" % what)
    norm = os.path.normpath(name)
    if os.path.isabs(name) or norm == ".." or norm.startswith(".." + os.sep) or norm == ".":
        raise CaseError("%s %r must be a relative path inside the case folder" % (what, name))
    if norm == EXPECTED_DIR or norm.startswith(EXPECTED_DIR + os.sep) or norm in EXPECTED_STREAMS \
            or norm == CASE_FILE:
        raise CaseError("%s %r collides with the runner's own files" % (what, name))
    return norm


def load_case(case_dir):
    path = os.path.join(case_dir, CASE_FILE)
    try:
        with open(path, "rb") as f:
            spec = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CaseError("cannot read %s: %s" % (CASE_FILE, e))
    if not isinstance(spec, dict):
        raise CaseError("%s must hold a JSON object" % CASE_FILE)
    unknown = sorted(set(spec) - CASE_KEYS)
    if unknown:
        raise CaseError("%s: unknown key(s) %s (allowed: %s)" % (
            CASE_FILE, ", ".join(unknown), ", ".join(sorted(CASE_KEYS))))
    args = spec.get("args")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise CaseError('%s: "args" must be a list of strings' % CASE_FILE)
    stdin = spec.get("stdin")
    if stdin is not None:
        stdin = _safe_rel(stdin, '"stdin"')
        if not os.path.isfile(os.path.join(case_dir, stdin)):
            raise CaseError('%s: "stdin" file %r does not exist' % (CASE_FILE, stdin))
    files = spec.get("files", [])
    if not isinstance(files, list):
        raise CaseError('%s: "files" must be a list of names' % CASE_FILE)
    files = [_safe_rel(n, '"files" entry') for n in files]
    if len(set(files)) != len(files):
        raise CaseError('%s: "files" lists a name twice' % CASE_FILE)
    desc = spec.get("description", "")
    if not isinstance(desc, str):
        raise CaseError('%s: "description" must be a string' % CASE_FILE)
    return {"args": args, "stdin": stdin, "files": files, "description": desc}


# --------------------------------------------------------------------------------------
# Reading trees of files

def read_tree(path):
    """bytes for a file, {relname: bytes} for a folder, None when absent."""
    if os.path.isdir(path):
        out = {}
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames.sort()
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                with open(full, "rb") as f:
                    out[os.path.relpath(full, path).replace(os.sep, "/")] = f.read()
        return out
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return f.read()
    if os.path.lexists(path):
        return b""   # dangling symlink or special file: present, unreadable
    return None


def list_paths(root):
    """Every file and folder below root, relative, as a set."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/"))
    return out


def write_tree(path, content):
    """Write bytes or {rel: bytes} at path; returns True if anything changed."""
    if read_tree(path) == content:
        return False
    remove_path(path)
    if isinstance(content, dict):
        os.makedirs(path, exist_ok=True)
        for rel, data in content.items():
            full = os.path.join(path, *rel.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
    else:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)
    return True


def remove_path(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


# --------------------------------------------------------------------------------------
# Diffs

class _Num(str):
    """A JSON number kept as its source text."""


def _parse_json_keep_numbers(text):
    return json.loads(text, parse_float=_Num, parse_int=_Num, parse_constant=_Num)


def _pretty(v, ind=0):
    """Two-space pretty print that keeps key order and number text."""
    pad = "  " * ind
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = ['%s  %s: %s' % (pad, json.dumps(k, ensure_ascii=False), _pretty(x, ind + 1))
                 for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if not v:
            return "[]"
        return "[\n" + ",\n".join("%s  %s" % (pad, _pretty(x, ind + 1)) for x in v) + "\n" + pad + "]"
    if isinstance(v, _Num):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def _json_view(data):
    """Pretty-printed JSON (or JSON Lines) text of data, or None if it is not JSON."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        return _pretty(_parse_json_keep_numbers(text)) + "\n"
    except ValueError:
        pass
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return None
    out = []
    for line in lines:
        try:
            out.append(_pretty(_parse_json_keep_numbers(line)))
        except ValueError:
            return None
    return "\n".join(out) + "\n"


def _lines(text):
    """Lines for difflib, split on \n only, with carriage returns made visible."""
    out = [l + "\n" for l in text.replace("\r", "\\r").split("\n")]
    if out[-1] == "\n":
        out.pop()
    else:
        out[-1] = out[-1][:-1] + "\n\\ No newline at end of file\n"
    return out


def _first_difference(exp, act):
    n = min(len(exp), len(act))
    i = next((k for k in range(n) if exp[k] != act[k]), n)
    line = exp.count(b"\n", 0, i) + 1
    col = i - (exp.rfind(b"\n", 0, i) + 1) + 1
    lo = max(0, i - 40)
    return ("first difference at byte %d (line %d, column %d):\n"
            "  expected: %r\n  actual:   %r\n" % (i, line, col, exp[lo:i + 40], act[lo:i + 40]))


def diff_bytes(label, exp, act):
    """A readable unified diff of two byte strings, capped at DIFF_CAP lines."""
    exp_t = exp.decode("utf-8", "backslashreplace")
    act_t = act.decode("utf-8", "backslashreplace")
    out = []
    longest = max([len(l) for l in exp_t.split("\n")] + [len(l) for l in act_t.split("\n")])
    note = ""
    if longest > LONG_LINE:
        ev, av = _json_view(exp), _json_view(act)
        if ev is not None and av is not None and ev != av:
            exp_t, act_t = ev, av
            note = "(diff of the pretty-printed JSON; the files themselves are compact)\n"
    diff = list(difflib.unified_diff(_lines(exp_t), _lines(act_t),
                                     "expected/" + label, "actual/" + label))
    if note:
        out.append(note)
    if len(diff) > DIFF_CAP:
        diff = diff[:DIFF_CAP] + ["... (%d more diff lines)\n" % (len(diff) - DIFF_CAP)]
    out.extend(l if l.endswith("\n") else l + "\n" for l in diff)
    subtle = b"\r" in exp or b"\r" in act or "\\x" in exp_t + act_t
    if not diff or longest > LONG_LINE or subtle:
        out.append(_first_difference(exp, act))
    return "".join(out)


def diff_trees(label, exp, act):
    """Diff two {rel: bytes} trees."""
    out = []
    for rel in sorted(set(exp) | set(act)):
        name = label + "/" + rel
        if rel not in act:
            out.append("missing file: actual/%s\n" % name)
        elif rel not in exp:
            out.append("unexpected file: actual/%s (no expected/%s)\n" % (name, name))
        elif exp[rel] != act[rel]:
            out.append(diff_bytes(name, exp[rel], act[rel]))
    return "".join(out)


# --------------------------------------------------------------------------------------
# Running one case

def display_path(path):
    """path relative to the current folder when it lies below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def reproduce_command(case_dir, quire, args, stdin):
    cmd = "cd %s && %s" % (shlex.quote(display_path(case_dir)),
                          " ".join(shlex.quote(a) for a in [quire] + args))
    if stdin:
        cmd += " < " + shlex.quote(stdin)
    return cmd


def child_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_")}
    env["LC_ALL"] = "C"
    env["TZ"] = "UTC"
    return env


def run_bounded(argv, cwd, stdin_data, timeout):
    """subprocess.run in its own process group, all of which is killed on timeout."""
    with subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=child_env(),
                          start_new_session=True) as p:
        try:
            out, err = p.communicate(stdin_data, timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.communicate()
            raise
        return subprocess.CompletedProcess(argv, p.returncode, out, err)


def run_case(case_dir, name, opts):
    """Returns (name, status, report) with status "pass", "fail" or "updated"."""
    try:
        spec = load_case(case_dir)
    except CaseError as e:
        return name, "fail", "bad case: %s\n" % e
    args = [a.replace("@DATA@", opts.data) for a in spec["args"]]
    repro = reproduce_command(case_dir, opts.quire, args, spec["stdin"])

    with tempfile.TemporaryDirectory(prefix="quire-golden-") as tmp:
        work = os.path.join(tmp, os.path.basename(os.path.abspath(case_dir)))
        shutil.copytree(case_dir, work, ignore=lambda d, names: [
            n for n in names if d == case_dir and (n == EXPECTED_DIR or n in EXPECTED_STREAMS)])
        before = list_paths(work)
        preexisting = {n: read_tree(os.path.join(work, n)) for n in spec["files"]}
        stdin_data = b""
        if spec["stdin"]:
            with open(os.path.join(work, spec["stdin"]), "rb") as f:
                stdin_data = f.read()
        try:
            proc = run_bounded([opts.quire] + args, work, stdin_data, opts.timeout)
        except subprocess.TimeoutExpired:
            return name, "fail", "timed out after %gs\nreproduce: %s\n" % (opts.timeout, repro)
        except OSError as e:
            return name, "fail", "cannot run %s: %s\n" % (opts.quire, e)

        def scrub(data):
            for path, token in ((work, b"@CASE@"), (os.path.realpath(work), b"@CASE@"),
                                (opts.data, b"@DATA@"),
                                (os.path.realpath(opts.data), b"@DATA@")):
                data = data.replace(os.fsencode(path), token)
            return data

        actual = {"stdout": scrub(proc.stdout), "stderr": scrub(proc.stderr),
                  "exit": ("%d\n" % proc.returncode).encode()}
        produced = {n: read_tree(os.path.join(work, n)) for n in spec["files"]}
        problems = []
        if proc.returncode < 0:
            try:
                sig = signal.Signals(-proc.returncode).name
            except ValueError:
                sig = str(-proc.returncode)
            problems.append("killed by signal %s\n" % sig)
        if proc.returncode != 0:
            # Nothing partial: named outputs absent, or unchanged if they pre-existed.
            for n in spec["files"]:
                if produced[n] != preexisting[n]:
                    problems.append("exit status %d but output %s was %s\n" % (
                        proc.returncode, n,
                        "created" if preexisting[n] is None else "changed"))
        stray = sorted(p for p in list_paths(work) - before
                       if not any(p == f or p.startswith(f + "/") for f in spec["files"]))
        if stray:
            problems.append("files created that case.json does not list: %s\n" % ", ".join(stray))

    if opts.update and problems:
        return name, "fail", "".join(problems) + "reproduce: %s\n" % repro
    if opts.update:
        changed = False
        for stream in ("stdout", "stderr", "exit"):
            changed |= write_tree(os.path.join(case_dir, "expected." + stream), actual[stream])
        for n in spec["files"]:
            dest = os.path.join(case_dir, EXPECTED_DIR, n)
            if proc.returncode == 0 and produced[n] is not None:
                changed |= write_tree(dest, produced[n])
            elif os.path.lexists(dest):
                remove_path(dest)
                changed = True
        exp_dir = os.path.join(case_dir, EXPECTED_DIR)
        if os.path.isdir(exp_dir) and not os.listdir(exp_dir):
            os.rmdir(exp_dir)
        return name, ("updated" if changed else "pass"), ""

    report = list(problems)
    missing = [s for s in EXPECTED_STREAMS if not os.path.lexists(os.path.join(case_dir, s))]
    if missing:
        report.append("missing %s (QUIRE_UPDATE_GOLDEN=1 creates them)\n" % ", ".join(missing))
    for stream in ("stdout", "stderr", "exit"):
        exp = read_tree(os.path.join(case_dir, "expected." + stream))
        if exp is None:
            pass
        elif not isinstance(exp, bytes):
            report.append("expected.%s is not a file\n" % stream)
        elif exp != actual[stream]:
            report.append(diff_bytes(stream, exp, actual[stream]))
    if proc.returncode == 0:
        for n in spec["files"]:
            label = n.replace(os.sep, "/")
            exp = read_tree(os.path.join(case_dir, EXPECTED_DIR, n))
            act = produced[n]
            if exp is None:
                report.append("missing expected/%s (QUIRE_UPDATE_GOLDEN=1 creates it)\n" % label)
            elif act is None:
                report.append("output %s was not written\n" % label)
            elif isinstance(exp, dict) != isinstance(act, dict):
                report.append("expected/%s and actual/%s differ in kind (file vs folder)\n" % (
                    label, label))
            elif isinstance(exp, dict):
                report.append(diff_trees(label, exp, act))
            elif exp != act:
                report.append(diff_bytes(label, exp, act))
    report = [r for r in report if r]
    if report:
        return name, "fail", "".join(report) + "reproduce: %s\n" % repro
    return name, "pass", ""


# --------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Run golden cases against the quire binary.",
        epilog="QUIRE_UPDATE_GOLDEN=1 rewrites the expected files (refused when CI is set).")
    ap.add_argument("--quire", required=True, help="path to the quire binary")
    ap.add_argument("--data", help="the test data folder substituted for @DATA@ "
                    "(default: tests/data)")
    ap.add_argument("--filter", default="", metavar="SUBSTR",
                    help="run only cases whose name (area/case) contains SUBSTR")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="cases run in parallel (default 2)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                    help="seconds before a case is killed (default %d)" % DEFAULT_TIMEOUT)
    ap.add_argument("-v", "--verbose", action="store_true", help="also list passing cases")
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="case folder or folder of cases")
    opts = ap.parse_args(argv)

    opts.update = os.environ.get("QUIRE_UPDATE_GOLDEN", "") not in ("", "0")
    if opts.update and "CI" in os.environ:
        print("golden.py: QUIRE_UPDATE_GOLDEN is refused when CI is set: "
              "goldens are updated on a workstation and reviewed", file=sys.stderr)
        return 2
    quire = shutil.which(opts.quire) if os.sep not in opts.quire else opts.quire
    if not quire or not os.path.isfile(quire) or not os.access(quire, os.X_OK):
        print("golden.py: %s is not an executable file" % opts.quire, file=sys.stderr)
        return 2
    opts.quire = os.path.abspath(quire)
    here = os.path.dirname(os.path.abspath(__file__))
    opts.data = os.path.abspath(opts.data or os.path.join(here, "data"))
    if opts.jobs < 1:
        ap.error("-j must be at least 1")

    cases = {}
    for d in opts.dirs:
        if not os.path.isdir(d):
            print("golden.py: %s is not a folder" % d, file=sys.stderr)
            return 2
        top = os.path.dirname(os.path.abspath(d))
        if os.path.isfile(os.path.join(d, CASE_FILE)):
            top = os.path.dirname(top)   # a single case is still named area/case
        for c in find_cases(d):
            name = os.path.relpath(os.path.abspath(c), top).replace(os.sep, "/")
            if opts.filter in name:
                cases[os.path.abspath(c)] = name   # dedupe when folders overlap
    cases = sorted((name, c) for c, name in cases.items())
    if not cases:
        print("golden.py: no cases found%s" % (
            " matching %r" % opts.filter if opts.filter else ""), file=sys.stderr)

    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        results = list(pool.map(lambda nc: run_case(nc[1], nc[0], opts), cases))

    passed = failed = updated = 0
    for name, status, report in sorted(results):
        if status == "fail":
            failed += 1
            print("FAIL %s" % name)
            sys.stdout.write("".join("    " + l + "\n" for l in report.rstrip("\n").split("\n")))
        else:
            passed += 1
            if status == "updated":
                updated += 1
                print("UPDATED %s" % name)
            elif opts.verbose:
                print("ok   %s" % name)
    if opts.update:
        print("%d updated" % updated)
    print("%d passed, %d failed" % (passed, failed))
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
