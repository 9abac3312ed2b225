#!/bin/sh
# make bench: installs what the benchmarks need (npm peers from the committed
# lock file, Debian's GNU time), builds quire in Release, generates the
# deterministic inputs, and prints one table (bench/run.py).
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh time nodejs npm
if [ ! -d bench/peers/node_modules ]; then
  npm ci --prefix bench/peers --engine-strict=false --no-audit --no-fund >/dev/null
fi
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DQUIRE_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j "$(nproc)" >/dev/null
# quire's Node package against this build, for the same-process rows beside the AI SDK
# (rebuilt when the package's sources or the static library it links are newer than the addon)
addon=build-bench/node/build/Release/quire.node
if [ ! -f "$addon" ] || [ -n "$(find bindings/node -path bindings/node/node_modules -prune -o -newer "$addon" -type f -print | head -n 1)" ] ||
   [ build-bench/libquire.a -nt "$addon" ]; then
  rm -rf build-bench/node && cp -r bindings/node build-bench/node && rm -rf build-bench/node/node_modules build-bench/node/build
  (cd build-bench/node && QUIRE_BUILD_DIR="$PWD/.." QUIRE_INCLUDE_DIR="$PWD/../../include" \
     npm ci --no-audit --no-fund >/dev/null 2>&1) || echo "bench: the Node package did not build; its rows are skipped" >&2
fi
exec /usr/bin/python3 bench/run.py --build build-bench "$@"
