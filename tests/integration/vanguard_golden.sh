#!/usr/bin/env bash
# Record -> replay -> golden for the sample game: every session in
# GOLDEN_DIR/vanguard_sessions.txt is recorded with cradle-record (seeded bots),
# replayed with cradle-replay (hashes checked) and compared byte for byte with
# its committed golden file. CRADLE_BLESS=1 rewrites the golden files.
#   vanguard_golden.sh CRADLE_RECORD CRADLE_REPLAY VANGUARD_SO GOLDEN_DIR
set -euo pipefail
record=$1 replay=$2 game=$3 golden=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
while read -r name seed players steps; do
  case "$name" in ''|'#'*) continue ;; esac
  "$record" --game "$game" --log "$work/$name.log" --seed "$seed" --players "$players" \
    --steps "$steps" --hash-interval 30 --output "$work/$name.live" >/dev/null
  if [ "${CRADLE_BLESS:-0}" = 1 ]; then
    "$replay" --bless "$golden/$name.golden" "$work/$name.log"
  fi
  out=$("$replay" --json --golden "$golden/$name.golden" "$work/$name.log") || {
    echo "$name: replay differs from its golden file:" >&2
    "$replay" --golden "$golden/$name.golden" "$work/$name.log" >&2 || true
    exit 1
  }
  echo "$name: $out"
  echo "$out" | grep -q '"verdict":"ok"'
  echo "$out" | grep -q "\"steps\":$steps,"
  cmp -s "$work/$name.live" "$golden/$name.golden" || { echo "$name: live output differs from golden" >&2; exit 1; }
  n=$((n + 1))
done < "$golden/vanguard_sessions.txt"
[ "$n" -ge 3 ]
echo "vanguard golden sessions ok ($n)"
