#!/bin/sh
# make fuzz FUZZ_SECONDS=N: builds every fuzz target with clang + libFuzzer
# (ASan+UBSan) and runs each for N seconds on a scratch copy of its seeds.
# Crashers are kept in fuzz/crashes/<target>/; add them to the seeds once fixed.
set -eu
secs=${1:-60}
cd "$(dirname "$0")/.."
sh scripts/setup.sh clang libclang-rt-14-dev
build=build-fuzz
cmake -S . -B $build -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQUIRE_FUZZ=ON >/dev/null
cmake --build $build -j "$(nproc)" >/dev/null
status=0
for src in fuzz/fuzz_*.c; do
  t=$(basename "$src" .c)
  work=fuzz/corpus-work/$t
  mkdir -p "$work" "fuzz/crashes/$t"
  [ -d "fuzz/seeds/$t" ] && cp -n fuzz/seeds/$t/* "$work"/ 2>/dev/null || true
  log=$build/$t.log
  if "$build/fuzz/$t" -max_total_time="$secs" -dict=fuzz/json.dict -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
      -artifact_prefix="fuzz/crashes/$t/" -print_final_stats=1 "$work" >"$log" 2>&1; then
    execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz $t: ${secs}s, ${execs:-?} executions, no crash"
  else
    echo "fuzz $t: CRASH — see $log and fuzz/crashes/$t/"
    tail -30 "$log"
    status=1
  fi
done
exit $status
