#!/usr/bin/python3
"""The Python package (bindings/python): installs it the documented way —
`pip install --no-build-isolation` against the static library of this build — into a temporary
--target (never the system), then runs its pytest suite (bindings/python/tests) with Debian's
python3-pytest on the installed copy. Fails if the install or any test fails.

The package source is copied to a temporary directory first, so parallel builds (the ASan one)
never share setuptools' in-tree build folder. Under a sanitizer build the ASan runtime is
preloaded into the interpreter (leak checks off: CPython keeps its allocations at exit)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--quire", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--data")
a = ap.parse_args()
build = os.path.dirname(os.path.abspath(a.quire))
src = os.path.abspath(a.src)
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

tmp = tempfile.mkdtemp(prefix="quire-py-")
try:
    pkg = os.path.join(tmp, "pkg")
    shutil.copytree(os.path.join(src, "bindings", "python"), pkg,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    target = os.path.join(tmp, "site")
    env = dict(os.environ, QUIRE_BUILD_DIR=build, QUIRE_INCLUDE_DIR=os.path.join(src, "include"),
               PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
                        "--no-deps", "--target", target, pkg], env=env, capture_output=True, text=True)
    check(r.returncode == 0, "pip install --no-build-isolation bindings/python: " + r.stderr[-3000:])
    check(any(f.startswith("_quire") and f.endswith(".so") for f in os.listdir(os.path.join(target, "quire")))
          if r.returncode == 0 else False, "the extension quire/_quire*.so is installed")
    if r.returncode == 0:
        tenv = dict(env, PYTHONPATH=target, QUIRE_BIN=os.path.abspath(a.quire), QUIRE_SRC=src)
        if san:
            rt = subprocess.run(["cc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
            libs = [rt] if "address" in san and os.path.exists(rt) else []
            if "undefined" in san:
                ub = subprocess.run(["cc", "-print-file-name=libubsan.so"], capture_output=True, text=True).stdout.strip()
                if os.path.exists(ub):
                    libs.append(ub)
            tenv["LD_PRELOAD"] = " ".join(libs)
            tenv["ASAN_OPTIONS"] = "detect_leaks=0"
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            os.path.join(src, "bindings", "python", "tests")], env=tenv, cwd=tmp,
                           capture_output=True, text=True)
        print(r.stdout[-6000:], r.stderr[-3000:])
        m = re.search(r"(\d+) passed", r.stdout)
        check(r.returncode == 0, "pytest bindings/python/tests")
        check(m is not None and int(m.group(1)) >= 10, "pytest ran the suite")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
