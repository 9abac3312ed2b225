#!/bin/sh
# Peer side of quire's benchmarks: the same transcripts through the Vercel AI
# SDK (`ai` + `@ai-sdk/anthropic` / `@ai-sdk/openai`) and LangChain.js
# (`@langchain/core` trimMessages). Prints one JSON line per measurement on
# stdout; progress and problems go to stderr. bench/run.sh puts quire's own
# numbers beside these.
#
#   bench/peers.sh [--quick] [--slow]
#
#   --quick   fewer runs (a smoke test, numbers are noisy)
#   --slow    also run trimMessages with a counter that reads every character
#             (--counter codepoints; about 10 s a run on the 3 MB input)
#
# Environment: NODE (default node), NPM (default npm), PYTHON (default
# /usr/bin/python3, else python3), PEER_TIMEOUT seconds per peer process
# (default 600).
#
# Exit status: 0 all rows measured, 1 a peer failed or timed out, 3 Node.js or
# npm missing (the command to run is printed).
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$here")
cd "$root"

quick=0
slow=0
for a in "$@"; do
    case $a in
        --quick) quick=1 ;;
        --slow) slow=1 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "peers.sh: unknown argument: $a" >&2; exit 2 ;;
    esac
done

NODE=${NODE:-node}
NPM=${NPM:-npm}
PEER_TIMEOUT=${PEER_TIMEOUT:-600}
if [ -z "${PYTHON:-}" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

if ! command -v "$NODE" >/dev/null 2>&1; then
    echo "peers.sh: Node.js not found; install Node.js (20 or later), then run:" >&2
    echo "  npm ci --prefix bench/peers" >&2
    exit 3
fi

if [ ! -d bench/peers/node_modules ]; then
    if ! command -v "$NPM" >/dev/null 2>&1; then
        echo "peers.sh: npm not found; with npm installed, run from $root:" >&2
        echo "  npm ci --prefix bench/peers" >&2
        exit 3
    fi
    echo "peers.sh: npm ci --prefix bench/peers" >&2
    # The AI SDK packages declare engines node>=22 but run on Node 20: let npm
    # warn rather than fail if the user has engine-strict set.
    "$NPM" ci --prefix bench/peers --no-audit --no-fund --engine-strict=false >&2
fi

mkdir -p bench/data
small=bench/data/transcript-200k.json
large=bench/data/transcript-3m.json
[ -s "$small" ] || { echo "peers.sh: generating $small" >&2; "$PYTHON" bench/gen.py --size 200000 --out "$small"; }
[ -s "$large" ] || { echo "peers.sh: generating $large" >&2; "$PYTHON" bench/gen.py --size 3000000 --out "$large"; }
# Not used by the peers; generated here so that bench/run.sh finds every input.
session=bench/data/session-200.jsonl
[ -s "$session" ] || { echo "peers.sh: generating $session" >&2; "$PYTHON" bench/gen.py --session 200 --out "$session"; }

if [ "$quick" = 1 ]; then
    runs_small=5; runs_large=3; warm=1
else
    runs_small=100; runs_large=30; warm=5
fi

status=0
peer() {
    if ! "$NODE" "$@" --timeout "$PEER_TIMEOUT"; then
        echo "peers.sh: failed: node $*" >&2
        status=1
    fi
}

for f in "$small" "$large"; do
    if [ "$f" = "$small" ]; then runs=$runs_small; else runs=$runs_large; fi
    peer bench/peers/aisdk_render.mjs --provider anthropic --runs "$runs" --warmup "$warm" "$f"
    peer bench/peers/aisdk_render.mjs --provider openai --runs "$runs" --warmup "$warm" "$f"
    peer bench/peers/langchain_trim.mjs --runs "$runs" --warmup "$warm" "$f"
    if [ "$slow" = 1 ]; then
        peer bench/peers/langchain_trim.mjs --counter codepoints --runs 1 --warmup 0 "$f"
    fi
done
exit $status
