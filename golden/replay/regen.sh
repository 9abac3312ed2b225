#!/bin/sh
# Regenerates the committed --out folders of the --check cases and then every
# expected output of golden/replay and golden/import. Run after a change in
# rendering, reminders or compaction output, then READ the diff (git diff).
#   golden/replay/regen.sh [QUIRE_BINARY]
set -e
cd "$(dirname "$0")/../.."
Q=$(realpath "${1:-build/quire}")
S=$(realpath tests/data)
for d in golden/replay/*check*; do
  [ -f "$d/case.json" ] || continue
  args=$(/usr/bin/python3 -c "
import json,sys
a=json.load(open('$d/case.json'))['args']
i=a.index('--check'); a[i:i+2]=['--out','committed']
if any(x.startswith('@DATA@') for x in a): a.insert(1,'--digest')
print(' '.join(x.replace('@DATA@','$S') for x in a[1:]))")
  rm -rf "$d/committed"
  (cd "$d" && "$Q" replay $args 2>/dev/null)
  # keep the full last turn only when it is under 256 KiB
  for f in "$d"/committed/turn-*.json; do
    [ -f "$f" ] && [ "$(wc -c < "$f")" -gt 262144 ] && rm "$f"
  done
done
# the two mismatch cases carry a deliberate difference
/usr/bin/python3 - <<'PY'
p='golden/replay/check_mismatch/committed/turn-0003.json'
s=open(p).read(); assert 'Now fix b.c' in s; open(p,'w').write(s.replace('Now fix b.c','Now fix c.c'))
p='golden/replay/check_events_mismatch/committed/events.jsonl'
s=open(p).read(); assert '"expiredAtTurn":3' in s; open(p,'w').write(s.replace('"expiredAtTurn":3','"expiredAtTurn":4',1))
PY
QUIRE_UPDATE_GOLDEN=1 /usr/bin/python3 tests/golden.py --quire "$Q" --data "$S" golden/replay golden/import
