#!/usr/bin/env python3
"""The documentation is true: every fenced block of README.md and docs/*.md
that is meant to run, runs.

- ```sh blocks run with `sh -e` from the root of a temporary copy of the
  repository (one copy per Markdown file, blocks in order, so a block may use
  files an earlier one made), with the built quire first on PATH. A block whose
  lines start with "$ " is a transcript: each "$ command" runs and its output
  (standard output and error, in order) must equal the lines shown under it,
  up to the next "$ " line (trailing spaces and blank lines ignored). Any other
  block must exit 0.
- ```c blocks that hold `int main` are compiled (-Wall -Wextra -Werror) against
  the library built beside quire and run; they must exit 0.
- Every other block must say what it is (```text, ```json, ```c fragment...):
  an opening fence without a language fails, so that no command is left
  untested by accident.
"""
import argparse, glob, os, re, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--quire", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--data")
ap.add_argument("-v", action="store_true")
ap.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
a = ap.parse_args()
passed = failed = 0
quire = os.path.abspath(a.quire)
bindir = os.path.dirname(quire)
src = os.path.abspath(a.src)


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
        if a.v:
            print("ok:", what)
    else:
        failed += 1
        print("FAIL:", what)
        if detail:
            print("   ", detail.rstrip().replace("\n", "\n    "))


FENCE = re.compile(r"^```(.*)$")


def blocks(text):
    """(first line number, info string, body) of every fenced block."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip()) if lines[i].startswith("```") else None
        if m:
            info, start, body = m.group(1).strip(), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((start, info, "\n".join(body) + "\n"))
        i += 1
    return out


def norm(s):
    ls = [l.rstrip() for l in s.replace("\r", "").split("\n")]
    while ls and not ls[-1]:
        ls.pop()
    return "\n".join(ls)


def sh(args, **kw):
    try:
        return subprocess.run(args, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 124, b"", b"timed out")


def copy_repo(dst):
    def ignore(d, names):
        return [n for n in names if n == ".git" or (d == src and n.startswith("build"))]
    shutil.copytree(src, dst, ignore=ignore, symlinks=True)


env = dict(os.environ)
env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
env["LC_ALL"] = "C"
for k in list(env):
    if k.startswith("QUIRE_"):
        del env[k]
with open(quire, "rb") as fh:
    sanitized = b"__asan_init" in fh.read()
lib = os.path.join(bindir, "libquire.a")

files = a.files or [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
with tempfile.TemporaryDirectory() as td:
    for md in files:
        rel = os.path.relpath(md, src)
        text = open(md, encoding="utf-8").read()
        bl = blocks(text)
        repo = os.path.join(td, rel.replace("/", "_") + ".repo")
        copied = False
        for line, info, body in bl:
            where = "%s:%d" % (rel, line)
            lang = info.split()[0] if info else ""
            if not lang:
                check(False, "%s: a fenced block without a language (```sh to run it, ```text otherwise)" % where)
                continue
            if lang == "sh":
                if not copied:
                    copy_repo(repo)
                    copied = True
                if any(l.startswith("$ ") for l in body.split("\n")):
                    # a transcript: "$ command" then its output
                    steps, cur = [], None
                    for l in body.split("\n"):
                        if l.startswith("$ "):
                            cur = [l[2:], []]
                            steps.append(cur)
                        elif cur is not None:
                            cur[1].append(l)
                    for cmd, want in steps:
                        r = sh(["sh", "-c", cmd], cwd=repo, env=env, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, timeout=300)
                        got = r.stdout.decode("utf-8", "replace")
                        check(norm(got) == norm("\n".join(want)), "%s: $ %s" % (where, cmd),
                              "shown:\n%s\ngot (exit %d):\n%s" % (norm("\n".join(want)), r.returncode, norm(got)))
                else:
                    r = sh(["sh", "-e", "-c", body], cwd=repo, env=env, capture_output=True, timeout=300)
                    check(r.returncode == 0, "%s: the block runs (exit %d)" % (where, r.returncode),
                          (r.stderr.decode("utf-8", "replace") or r.stdout.decode("utf-8", "replace"))[-2000:])
            elif lang == "c" and re.search(r"\bint main\s*\(", body):
                cdir = os.path.join(td, "c%d" % (passed + failed))
                os.mkdir(cdir)
                open(os.path.join(cdir, "doc.c"), "w").write(body)
                if not os.path.exists(lib):
                    check(False, "%s: no %s to link the sample with" % (where, lib))
                    continue
                cc = [os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror",
                      "-I", os.path.join(src, "include"), "doc.c", lib, "-lutf8proc", "-lm", "-o", "doc"]
                if sanitized:
                    cc[1:1] = ["-fsanitize=address,undefined"]
                r = sh(cc, cwd=cdir, capture_output=True, timeout=300)
                check(r.returncode == 0, "%s: the C sample compiles" % where, r.stderr.decode("utf-8", "replace"))
                if r.returncode == 0:
                    r = sh(["./doc"], cwd=cdir, capture_output=True, timeout=120)
                    check(r.returncode == 0, "%s: the C sample runs (exit %d)" % (where, r.returncode),
                          (r.stderr + r.stdout).decode("utf-8", "replace")[-2000:])
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
