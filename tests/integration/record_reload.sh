#!/usr/bin/env bash
# The offline host (cradle-record --paced --watch) runs a game library, keeps
# stepping while the library is rebuilt (here: overwritten with the +5 build
# of the counter), swaps it in between two steps without losing the state,
# records the reload in its log, and its own check and cradle-replay replay
# that log exactly, switching builds at the same step. A library of another
# game is refused and the old build keeps running.
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 inc1=$2 inc5=$3 other=$4 replay=$5
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
install_game() { cp "$1" game.so.tmp && mv -f game.so.tmp game.so; }

install_game "$inc1"
"$record" --game "$PWD/game.so" --players 2 --steps 240 --log s.log --paced --watch --bots >out.txt 2>err.txt & pid=$!
wait_for() { # FILE TEXT: until FILE holds TEXT, at most 10 s
  local deadline=$((SECONDS + 10))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { echo "no '$2' in $1"; cat out.txt err.txt; exit 1; }
    sleep 0.02
  done
}
deadline=$((SECONDS + 10)) # the host has loaded the game and opened its log
until [ -s s.log ]; do
  [ $SECONDS -lt $deadline ] || { echo "the host did not start"; cat out.txt err.txt; exit 1; }
  sleep 0.02
done
install_game "$inc5"          # a rebuild: the host picks it up ~120 ms later
wait_for out.txt "reloaded at step"
install_game "$other"         # another game: refused, the +5 build keeps running
wait "$pid"
cat out.txt err.txt
grep -q "reloaded at step" out.txt
grep -q "reload refused at step .*game_mismatch" err.txt
grep -q "the log replays to the same state" out.txt

# The log replays exactly across the reload, with the archived builds.
"$replay" --json --output out.bin s.log >replay.json
cat replay.json
grep -q '"verdict":"ok"' replay.json
grep -q '"reloads":1' replay.json
grep -q '"steps":240' replay.json

# The state survived the swap: the counter's total (bytes 8..15 of each
# 24-byte output record) goes on from where it was; the step after the swap
# adds 5 plus the bots' input, never a reset to the seed's start value.
python3 - out.bin <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
recs = [struct.unpack_from('<Qq', data, i) for i in range(0, len(data), 24)]
assert len(recs) == 240, len(recs)
# 2 bots press bits 0..5, adding 0..63 each: a step adds 1..127 (+1 build)
# or 5..131 (+5 build). A state reset would show as a drop.
deltas = [b[1] - a[1] for a, b in zip(recs, recs[1:])]
assert all(0 < d <= 131 for d in deltas), [d for d in deltas if not 0 < d <= 131][:5]
print("totals", recs[0][1], "->", recs[-1][1], "with no reset")
PY
echo "record reload ok"
