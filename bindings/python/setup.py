"""Builds the quire Python package: the CPython extension quire._quire over include/quire.h,
linked with the static library that the CMake build makes (libquire.a, position-independent).

Where the library is found (first that exists):
  $QUIRE_BUILD_DIR/libquire.a      e.g. QUIRE_BUILD_DIR=/path/to/quire/build
  <repository>/build/libquire.a    what `make` produces
The header comes from <repository>/include (or $QUIRE_INCLUDE_DIR). libutf8proc is linked
dynamically (Debian's libutf8proc-dev). See bindings/python/README.md.
"""
import os
from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.normpath(os.path.join(here, "..", ".."))
build = os.environ.get("QUIRE_BUILD_DIR") or os.path.join(repo, "build")
lib = os.path.join(build, "libquire.a")
if not os.path.exists(lib):
    raise SystemExit("quire: %s not found; run `make` in the repository first or set QUIRE_BUILD_DIR" % lib)
include = os.environ.get("QUIRE_INCLUDE_DIR") or os.path.join(repo, "include")

extra_link = []
san = ""
try:  # a sanitizer build of the library needs the same runtime in the extension
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith("QUIRE_SANITIZER:"):
            san = line.split("=", 1)[1].strip()
except OSError:
    pass
if san:
    extra_link.append("-fsanitize=" + san)

setup(
    name="quire",
    version="0.2.0",
    description="Render LLM agent transcripts and system reminders into provider requests (quire bindings)",
    license="MIT",
    packages=["quire"],
    package_data={"quire": ["py.typed", "*.pyi"]},
    ext_modules=[Extension(
        "quire._quire",
        sources=[os.path.join("src", "quire_module.c")],
        depends=[os.path.join("src", "session.inc"), os.path.join(include, "quire.h")],
        include_dirs=[include, "src"],
        extra_objects=[lib],
        libraries=["utf8proc"],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
        extra_link_args=extra_link,
    )],
    python_requires=">=3.9",
    zip_safe=False,
)
