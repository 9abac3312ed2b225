"""Installs quire into a temporary prefix, then compiles and runs the C example
from README.md against it twice: with pkg-config and with CMake's find_package.
Fails if the install rules, the pkg-config file, the CMake package or the README
example break."""
import argparse, os, re, shutil, subprocess, sys, tempfile

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

def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print("$", " ".join(cmd), "\n", r.stdout[-2000:], r.stderr[-2000:])
    return r

# a sanitizer build installs an instrumented library: its users link with the same flags
san = ""
try:
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith("QUIRE_SANITIZER:"):
            san = line.split("=", 1)[1].strip()
except OSError:
    pass
sanflags = ["-fsanitize=" + san] if san else []

readme = open(os.path.join(a.src, "README.md"), encoding="utf-8").read()
m = re.search(r"```c\n(.*?)```", readme, re.S)
check(m is not None, "README.md has a ```c example")
tmp = tempfile.mkdtemp(prefix="quire-install-")
try:
    prefix = os.path.join(tmp, "prefix")
    r = run(["cmake", "--install", build, "--prefix", prefix])
    check(r.returncode == 0, "cmake --install")
    libdir = next((d for d in ("lib", "lib64", "lib/x86_64-linux-gnu") if os.path.exists(os.path.join(prefix, d, "pkgconfig", "quire.pc"))), None)
    check(libdir is not None, "quire.pc installed")
    check(os.path.exists(os.path.join(prefix, "include", "quire.h")), "quire.h installed")
    check(os.path.exists(os.path.join(prefix, "bin", "quire")), "quire binary installed")
    if m and libdir:
        src = os.path.join(tmp, "example.c")
        open(src, "w").write(m.group(1))
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, libdir, "pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "--static", "quire"], env=env)
        check(flags.returncode == 0, "pkg-config quire")
        exe = os.path.join(tmp, "example")
        r = run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror"] + sanflags + [src, "-o", exe, "-static-libgcc"] + flags.stdout.split()
                + ["-Wl,-rpath," + os.path.join(prefix, libdir)], env=env)
        check(r.returncode == 0, "README example compiles with pkg-config flags")
        if r.returncode == 0:
            out = run([exe])
            check(out.returncode == 0 and out.stdout.startswith('{"model":"claude-sonnet-4-5"'), "README example renders a request")
        # CMake package
        proj = os.path.join(tmp, "proj")
        os.mkdir(proj)
        shutil.copy(src, os.path.join(proj, "example.c"))
        open(os.path.join(proj, "CMakeLists.txt"), "w").write(
            "cmake_minimum_required(VERSION 3.16)\nproject(ex C)\nfind_package(quire REQUIRED)\n"
            "add_executable(ex example.c)\ntarget_link_libraries(ex PRIVATE quire::quire_static)\n")
        r = run(["cmake", "-S", proj, "-B", os.path.join(proj, "b"), "-DCMAKE_PREFIX_PATH=" + prefix]
                + (["-DCMAKE_C_FLAGS=" + sanflags[0], "-DCMAKE_EXE_LINKER_FLAGS=" + sanflags[0]] if sanflags else []))
        check(r.returncode == 0, "find_package(quire)")
        r = run(["cmake", "--build", os.path.join(proj, "b")])
        check(r.returncode == 0, "build against quire::quire_static")
        if r.returncode == 0:
            out = run([os.path.join(proj, "b", "ex")])
            check(out.returncode == 0 and out.stdout.startswith('{"model"'), "CMake-built example renders")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
