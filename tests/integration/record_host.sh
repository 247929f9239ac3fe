#!/usr/bin/env bash
# The offline host (cradle-record) in its fast and paced modes: it records a
# log that replays to the same state, checks that itself at the end, paces
# in real time when asked, plays the game's bots, stops cleanly on SIGINT,
# and refuses what cannot work with exit 2.
# usage: record_host.sh CRADLE_RECORD CRADLE_REPLAY COUNTER_GAME
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 replay=$2 counter=$3
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Fast (the default): the done line says the log replays to the same state.
"$record" --game "$counter" --log fast.log --players 3 --steps 500 --json >fast.out
grep -q '"event":"done","steps":500,' fast.out || fail "fast done: $(cat fast.out)"
grep -q '"replay_equal":true' fast.out || fail "fast check: $(cat fast.out)"
"$replay" --json fast.log | grep -q '"verdict":"ok"' || fail "cradle-replay of fast.log"

# Paced: the counter runs 60 steps/s, so 120 steps take about 2 s, not 0.
"$record" --game "$counter" --log paced.log --steps 120 --paced --json >paced.out
grep -q '"event":"status","step":60,' paced.out || fail "no status line each game second: $(cat paced.out)"
grep -q '"event":"done","steps":120,' paced.out || fail "paced done: $(cat paced.out)"
secs=$(sed -n 's/.*"event":"done".*"seconds":\([0-9.]*\).*/\1/p' paced.out)
awk -v s="$secs" 'BEGIN { exit !(s > 1.5) }' || fail "120 paced steps took $secs s"

# The game's own bots: the counter's bot entry sends deltas 0..63, so the
# two slots' inputs differ from the seeded random bytes of the default.
"$record" --game "$counter" --log bots.log --players 2 --steps 60 --bots --output bots.out >/dev/null
"$record" --game "$counter" --log random.log --players 2 --steps 60 --output random.out >/dev/null
cmp -s bots.out random.out && fail "--bots played the same input as the random default"
"$replay" --json bots.log | grep -q '"verdict":"ok"' || fail "cradle-replay of bots.log"

# SIGINT ends a paced run early: the log is closed and still checked.
"$record" --game "$counter" --log stopped.log --steps 100000 --paced --json >stopped.out 2>stopped.err & pid=$!
deadline=$((SECONDS + 20))
until grep -q '"event":"status"' stopped.out 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "the paced run printed no status: $(cat stopped.err)"
  sleep 0.05
done
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
pid=""
[ "$rc" -eq 0 ] || fail "SIGINT: exit $rc: $(cat stopped.err)"
grep -q '"replay_equal":true' stopped.out || fail "SIGINT done line: $(cat stopped.out)"
"$replay" --json stopped.log | grep -q '"verdict":"ok"' || fail "the interrupted log does not replay"

# Usage errors exit 2 and say why.
expect2() { # expect2 TEXT ARGS...: exit 2 with TEXT on stderr
  local text=$1 rc=0
  shift
  "$record" "$@" >/dev/null 2>err.txt || rc=$?
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc, wanted 2"
  grep -q -- "$text" err.txt || fail "'$*': no '$text' in: $(cat err.txt)"
}
expect2 --steps --game "$counter" --log x.log --steps abc
expect2 "--game and --log are required" --steps 5
expect2 "choose one" --game "$counter" --log x.log --bots --script s.txt
expect2 "choose one" --game "$counter" --log x.log --watch --reload "5:$counter"
expect2 "needs --dev-stdin or --dev-socket" --game "$counter" --log x.log --commanded
[ ! -e x.log ] || fail "a usage error left a log behind"
"$record" --help | grep usage >/dev/null # all of it: grep -q would close the pipe early (SIGPIPE)
echo "record host ok"
