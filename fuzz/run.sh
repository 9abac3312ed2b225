#!/bin/sh
# make fuzz FUZZ_SECONDS=N: builds every fuzz target with clang + libFuzzer
# (ASan+UBSan) and runs each for N seconds on a scratch copy of its seeds.
# Crashers are kept in fuzz/crashes/<target>/; once fixed, add them to
# fuzz/seeds/<target>/ as crash-<what> (regression seeds run under ctest).
#
#   fuzz/run.sh [SECONDS] [TARGET...]       default: 60 s, every fuzz/fuzz_*.c
#
# Environment: QUIRE_FUZZ_BUILD (build folder, default build-fuzz),
# QUIRE_FUZZ_JOBS (targets run side by side, default 1), QUIRE_FUZZ_STRICT=1
# (also cross-check modules: rendered requests must validate, imported logs replay).
# Prints one line per target and writes the table to $build/fuzz-stats.tsv:
# target, seconds, executions, exec/s, final corpus size, verdict.
set -eu
secs=${1:-60}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/.."
if ! command -v clang >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  sh scripts/setup.sh clang libclang-rt-14-dev
fi
build=${QUIRE_FUZZ_BUILD:-build-fuzz}
jobs=${QUIRE_FUZZ_JOBS:-1}
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQUIRE_FUZZ=ON -DQUIRE_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
targets=${*:-$(for s in fuzz/fuzz_*.c; do basename "$s" .c; done)}
stats=$build/fuzz-stats.tsv
printf 'target\tseconds\texecutions\texec_per_sec\tcorpus\tverdict\n' >"$stats"

run_one() {
  t=$1
  work=fuzz/corpus-work/$t
  mkdir -p "$work" "fuzz/crashes/$t"
  # crash-* regression seeds run under ctest (fuzzseeds.*); left out here so that one
  # unfixed finding does not stop the whole run at its first input
  rm -f "$work"/crash-*
  if [ -d "fuzz/seeds/$t" ]; then
    for s in "fuzz/seeds/$t"/*; do
      case $(basename "$s") in crash-*) ;; *) cp -n "$s" "$work"/ 2>/dev/null || true ;; esac
    done
  fi
  log=$build/$t.log
  marker=$build/$t.start
  : >"$marker"
  # fork mode: a finding is saved and fuzzing goes on for the whole time, so one run
  # reports every distinct crash instead of stopping at the first
  "$build/fuzz/$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$secs" \
    -dict=fuzz/json.dict -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="fuzz/crashes/$t/" "$work" >"$log" 2>&1 || true
  found=$(find "fuzz/crashes/$t" -type f -newer "$marker" | wc -l)
  if [ "$found" -eq 0 ] && grep -qE '^INFO: exiting: 0' "$log"; then
    verdict="no crash"
  else
    verdict="CRASH ($found inputs)"
  fi
  last=$(grep -E '^#[0-9]+:' "$log" | tail -1)
  execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  rate=$(echo "$last" | sed -n 's/.*exec\/s \([0-9]*\).*/\1/p')
  corpus=$(ls "$work" | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$secs" "${execs:-?}" "${rate:-?}" "$corpus" "$verdict" >"$log.stat"
  echo "fuzz $t: ${secs}s, ${execs:-?} executions (${rate:-?}/s), corpus $corpus, $verdict"
  if [ "$verdict" != "no crash" ]; then
    # fork mode keeps the children's reports to itself: replay each new input (at most 30)
    # to name what it found, then count the distinct findings
    echo "  see fuzz/crashes/$t/; distinct findings (inputs):"
    find "fuzz/crashes/$t" -type f -newer "$marker" | head -30 | while read -r f; do
      "$build/fuzz/$t" "$f" 2>&1 | grep -m1 -E \
        '^(fuzz check failed|==[0-9]+== ?ERROR: [A-Za-z]+Sanitizer|SUMMARY: [A-Za-z]+Sanitizer)|runtime error:|ERROR: libFuzzer: (timeout|out-of-memory)' \
        || echo "(no report: $f)"
    done | sed 's/^==[0-9]*== \{0,1\}//; s/0x[0-9a-f]*/0x_/g' | cut -c1-220 | sort | uniq -c | sort -rn | head -10 | sed 's/^/   /'
    return 1
  fi
}

status=0
if [ "$jobs" -le 1 ]; then
  for t in $targets; do run_one "$t" || status=1; done
else
  # simple pool: N targets at a time
  set -- $targets
  while [ $# -gt 0 ]; do
    pids=""
    i=0
    while [ $i -lt "$jobs" ] && [ $# -gt 0 ]; do
      run_one "$1" &
      pids="$pids $!"
      shift
      i=$((i + 1))
    done
    for p in $pids; do wait "$p" || status=1; done
  done
fi
for t in $targets; do cat "$build/$t.log.stat" >>"$stats" 2>/dev/null || true; done
total=$(awk -F'\t' 'NR > 1 && $3 ~ /^[0-9]+$/ {s += $3} END {print s + 0}' "$stats")
echo "fuzz: $total executions in total; table in $stats"
exit $status
