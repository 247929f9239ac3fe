#!/usr/bin/env bash
# Record -> replay -> golden for the sample game: every vanguard session with
# a full golden file in GOLDEN_DIR/corpus.txt (seeded random input) is
# recorded with cradle-record, replayed with cradle-replay (hashes checked) and
# compared byte for byte with its committed golden file, the live output too.
# Re-bless the golden files with tools/bless.sh (tests/README.md).
#   vanguard_golden.sh CRADLE_RECORD CRADLE_REPLAY VANGUARD_SO GOLDEN_DIR
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 replay=$2 game=$3 golden=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
while read -r name session_game seed players steps input reloads kind; do
  case "$name" in ''|'#'*) continue ;; esac
  [ "$session_game" = vanguard ] && [ "$kind" = full ] || continue
  [ "$input" = random ] && [ "$reloads" = - ] || { echo "$name: this script records seeded input only" >&2; exit 1; }
  "$record" --game "$game" --log "$work/$name.log" --seed "$seed" --players "$players" \
    --steps "$steps" --hash-interval 30 --output "$work/$name.live" >/dev/null
  out=$("$replay" --json --golden "$golden/$name.golden" "$work/$name.log") || {
    echo "$name: replay differs from its golden file:" >&2
    "$replay" --golden "$golden/$name.golden" "$work/$name.log" >&2 || true
    exit 1
  }
  echo "$name: $out"
  <<<"$out" grep -q '"verdict":"ok"'
  <<<"$out" grep -q "\"steps\":$steps,"
  cmp -s "$work/$name.live" "$golden/$name.golden" || { echo "$name: live output differs from golden" >&2; exit 1; }
  n=$((n + 1))
done < "$golden/corpus.txt"
[ "$n" -ge 3 ]
echo "vanguard golden sessions ok ($n)"
