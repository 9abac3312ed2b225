#!/usr/bin/env python3
"""The layering of DESIGN 9, checked on every source file of the library.

Layers, lowest first:
    core/  <-  reminders/, providers/  <-  render/, respond/, compact/  <-  session/  <-  cli/, bindings/

A file may include headers of its own folder and of lower layers only. Folders of one
layer do not include each other (render/, respond/ and compact/ are independent; so are
reminders/ and providers/). cli/ and bindings/ use only the public header, include/quire.h.
Provider names are branched on only in providers/, the dialect encoders
(render/enc_*.c), the request-dialect readers (render/from*.c) and the response
decoders (respond/dec_*.c).

Usage: py_layers.py --src SRC [--quire BIN --data DIR: ignored]
Exit 0 and "N passed, 0 failed" when every file keeps its layer; 1 with one line per
violation otherwise.
"""
import argparse
import glob
import os
import re
import sys

RANK = {"core": 0, "reminders": 1, "providers": 1, "render": 2, "respond": 2, "compact": 2,
        "session": 3, "cli": 4, "bindings": 4}
PUBLIC_ONLY = {"cli", "bindings"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A branch on a provider or dialect name: strcmp / q_streq / == against a literal.
PROVIDERS = ("anthropic", "openai", "openai_responses", "gemini", "bedrock", "mistral", "ollama",
             "deepseek", "openai_compatible")
BRANCH = re.compile(r'(?:strcmp|strncmp|q_streq\w*|q_eq\w*)\s*\([^;{]*"(%s)"' % "|".join(PROVIDERS))


def folder_of(path, src):
    rel = os.path.relpath(path, src).split(os.sep)
    return rel[0]


def check(src):
    errors, checked = [], 0
    files = []
    for top in RANK:
        files += glob.glob(os.path.join(src, top, "**", "*.[ch]"), recursive=True)
    for path in sorted(files):
        if "node_modules" in path or os.sep + "build" in path:
            continue
        top = folder_of(path, src)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        rel = os.path.relpath(path, src)
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            checked += 1
            if top in PUBLIC_ONLY:
                # cli/ and bindings/ see the library only through include/quire.h
                if inc.split("/")[0] in RANK and inc.split("/")[0] not in PUBLIC_ONLY:
                    errors.append("%s:%d: includes %s: %s/ uses only include/quire.h" % (rel, line, inc, top))
                continue
            head = inc.split("/")[0]
            if head not in RANK or "/" not in inc:
                continue  # quire.h, a local header of the same folder, or a system header
            if head == top:
                continue
            if RANK[head] > RANK[top]:
                errors.append("%s:%d: includes %s: %s/ is a higher layer than %s/" % (rel, line, inc, head, top))
            elif RANK[head] == RANK[top]:
                errors.append("%s:%d: includes %s: %s/ and %s/ are one layer and must not depend on each other"
                              % (rel, line, inc, head, top))
        base = os.path.basename(path)
        allowed = top == "providers" or (top == "render" and (base.startswith("enc_") or base.startswith("from"))) or \
            (top == "respond" and base.startswith("dec_")) or top in PUBLIC_ONLY
        if not allowed:
            for m in BRANCH.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                checked += 1
                errors.append('%s:%d: branches on the provider name "%s" outside providers/ and the dialect '
                              'encoders/decoders (put it in the capability table)' % (rel, line, m.group(1)))
    return checked, errors


def selftest():
    """The checker must catch what it claims to: a planted upward include and a branch."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for sub in ("core", "render", "compact"):
            os.makedirs(os.path.join(d, sub))
        with open(os.path.join(d, "core", "x.c"), "w") as f:
            f.write('#include "render/render.h"\n')
        with open(os.path.join(d, "render", "y.c"), "w") as f:
            f.write('#include "compact/compact.h"\nint f(const char*p){return strcmp(p, "gemini");}\n')
        with open(os.path.join(d, "compact", "z.c"), "w") as f:
            f.write('#include "core/json.h"\n')
        _, errs = check(d)
        want = ["core/x.c:1: includes render/render.h", "render/y.c:1: includes compact/compact.h",
                'render/y.c:2: branches on the provider name "gemini"']
        for w in want:
            if not any(e.startswith(w) for e in errs):
                return "selftest: the checker missed: " + w
        if len(errs) != len(want):
            return "selftest: unexpected findings: %r" % errs
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--quire")
    ap.add_argument("--data")
    a = ap.parse_args()
    bad = selftest()
    if bad:
        print(bad)
        print("0 passed, 1 failed")
        return 1
    checked, errors = check(os.path.abspath(a.src))
    for e in errors:
        print(e)
    print("layers: %d includes and branches checked" % checked)
    print("%d passed, %d failed" % (checked - len(errors) + 1, len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
