#!/usr/bin/python3
"""The Node package (bindings/node), built and tested the documented way on a copy of the
package: `npm ci` (node-addon-api, node-gyp and TypeScript from the npm registry; the addon is
built by the install script with node-gyp against the system's Node headers, linked with this
build's libquire.a), then `node --test` over bindings/node/test (the stateless API against the
CLI's bytes, QuireError fields, Session, the ES module entry, the README TypeScript loop and the
loop against the mock provider and MCP server in tests/bindings/). Finally a consumer project runs
`npm install <package folder>` and loads the package through both entry points.

Under a sanitizer build the ASan runtime is preloaded into node (leak checks off)."""
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


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print("$", " ".join(cmd), "\n", r.stdout[-4000:], r.stderr[-4000:])
    return r


san = ""
try:
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith("QUIRE_SANITIZER:"):
            san = line.split("=", 1)[1].strip()
except OSError:
    pass

if not shutil.which("npm") or not shutil.which("node"):
    print("FAIL: node and npm are required (scripts/setup.sh installs them)")
    print("0 passed, 1 failed")
    sys.exit(1)

tmp = tempfile.mkdtemp(prefix="quire-node-")
try:
    pkg = os.path.join(tmp, "pkg")
    shutil.copytree(os.path.join(src, "bindings", "node"), pkg,
                    ignore=shutil.ignore_patterns("node_modules", "build", ".readme-*"))
    env = dict(os.environ, QUIRE_BUILD_DIR=build, QUIRE_INCLUDE_DIR=os.path.join(src, "include"),
               npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
    r = run(["npm", "ci", "--no-audit", "--no-fund"], cwd=pkg, env=env)
    check(r.returncode == 0, "npm ci in bindings/node (builds the addon)")
    check(os.path.exists(os.path.join(pkg, "build", "Release", "quire.node")), "the addon build/Release/quire.node")
    tenv = dict(env, QUIRE_SRC=src, QUIRE_BIN=os.path.abspath(a.quire), QUIRE_PYTHON=sys.executable)
    if san:
        libs = []
        for rt in (["libasan.so"] if "address" in san else []) + (["libubsan.so"] if "undefined" in san else []):
            p = subprocess.run(["cc", "-print-file-name=" + rt], capture_output=True, text=True).stdout.strip()
            if os.path.exists(p):
                libs.append(p)
        tenv["LD_PRELOAD"] = " ".join(libs)
        tenv["ASAN_OPTIONS"] = "detect_leaks=0"
    if r.returncode == 0:
        t = subprocess.run(["node", "--test", "test/"], cwd=pkg, env=tenv, capture_output=True, text=True)
        out = t.stdout + t.stderr
        for line in out.splitlines():
            if line.startswith("not ok") or line.startswith("# pass") or line.startswith("# fail"):
                print(line)
        if t.returncode != 0:
            print(out[-8000:])
        m = re.search(r"^# pass (\d+)", out, re.M)
        check(t.returncode == 0, "node --test bindings/node/test")
        check(m is not None and int(m.group(1)) >= 10, "node --test ran the suite")
    # a consumer project installs the package folder (the install script builds it again)
    app = os.path.join(tmp, "app")
    os.mkdir(app)
    with open(os.path.join(app, "package.json"), "w") as f:
        f.write('{"name": "app", "version": "1.0.0", "private": true}\n')
    r = run(["npm", "install", "--no-audit", "--no-fund", "--no-save", pkg], cwd=app, env=env)
    check(r.returncode == 0, "npm install <bindings/node folder> in a consumer project")
    probe = ("const q = require('quire'); const s = new q.Session({provider: 'openai'});"
             "s.append({role: 'user', content: 'hi'}); process.stdout.write(s.render().path);")
    r = run(["node", "-e", probe], cwd=app, env=tenv)
    check(r.returncode == 0 and r.stdout == "/v1/chat/completions", "require('quire') from the consumer")
    r = run(["node", "--input-type=module", "-e",
             "import { render } from 'quire'; process.stdout.write(render({messages: [{role: 'user', content: 'x'}]},"
             " {provider: 'ollama'}).body.toString().slice(0, 1));"], cwd=app, env=tenv)
    check(r.returncode == 0 and r.stdout == "{", "import from 'quire' (ES module) in the consumer")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
