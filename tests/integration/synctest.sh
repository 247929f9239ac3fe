#!/usr/bin/env bash
# cradle-replay --synctest over logs cradle-record made, for every game the
# project builds: each step runs a second time on a twin of the state at
# another address, the replay's state moves every N steps, and all of them
# pass, across hot reloads too. Then the bad builds: a pointer kept in the state and a static
# counter outside it each fail at the step and byte they break; the
# process-id build is caught by the log's hashes as in a plain replay.
# The bad builds run twice: with a small state and a 256 KiB one (the state
# compared in halves on two threads). The game itself never runs on two
# threads at once, so both give the same report, every run.
#   synctest.sh CRADLE_RECORD CRADLE_REPLAY COUNTER VANGUARD GATHER INC1 INC5
#               NONDETERMINISTIC POINTER_STATE STATIC_COUNTER POINTER_BIG STATIC_BIG
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 replay=$2 counter=$3 vanguard=$4 gather=$5 inc1=$6 inc5=$7
nondet=$8 pointer=$9 static=${10} pointer_big=${11} static_big=${12}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect RC CMD...: runs CMD, keeps stdout/stderr in $work/out, $work/err.
expect() {
  local want=$1; shift
  set +e; "$@" >"$work/out" 2>"$work/err"; local rc=$?; set -e
  if [ "$rc" -ne "$want" ]; then
    cat "$work/out" "$work/err" >&2
    fail "exit $rc, expected $want: $*"
  fi
}
has() { grep -q -- "$1" "$work/err" || { cat "$work/err" >&2; fail "stderr lacks '$1'"; }; }
json_has() { grep -q -- "$1" "$work/out" || { cat "$work/out" >&2; fail "JSON lacks '$1'"; }; }

# passes NAME STEPS MOVES [replay args]: the sync test of $work/NAME.log passes.
passes() {
  local name=$1 steps=$2 moves=$3; shift 3
  expect 0 "$replay" --synctest --json "$@" "$work/$name.log"
  json_has '"verdict":"ok"'; json_has "\"steps\":$steps,"; json_has '"final_hash_equal":true'
  json_has '"sync_equal":true'; json_has "\"steps_rerun\":$steps,"; json_has "\"moves\":$moves"
  has "sync test passed: $steps steps re-run, $moves moves: OK"
  echo "$name: $steps steps re-run, $moves moves"
}

# 1. every game library the project builds passes (moves before steps 100, 200, ...)
expect 0 "$record" --game "$counter" --log "$work/counter.log" --players 3 --steps 1000
passes counter 1000 9
passes counter 1000 142 --every 7
expect 0 "$record" --game "$vanguard" --log "$work/vanguard.log" --players 8 --steps 1200 --bots
passes vanguard 1200 11
expect 0 "$record" --game "$gather" --log "$work/gather.log" --players 4 --steps 1500 --bots
passes gather 1500 14
# the test games: two builds of the counter with reloads between them (on_reload
# changes the state: the re-run after a swap starts from the state the new build
# took over, and runs that build)
expect 0 "$record" --game "$inc1" --log "$work/reload.log" --players 2 --steps 600 --hash-interval 20 \
  --reload "150:$inc5" --reload "400:$inc1"
passes reload 600 59 --every 10
json_has '"reloads":2'
echo "every game passes"

# 2. a pointer into the state block: the twin's copy of it points into the
# replay's block, so the twin's first step adds its one there and the two
# totals part at step 0 (byte 0, the total's low byte). Run twice at one
# address the step agrees with itself: the state depends on its address.
for pointer_game in "$pointer" "$pointer_big"; do
  expect 0 "$record" --game "$pointer_game" --log "$work/pointer.log" --players 2 --steps 300 \
    --hash-interval 0 --no-check --force
  expect 1 "$replay" --synctest --every 10 "$work/pointer.log"
  has "sync test failed at step 0: state byte 0 differs: first run 0x"
  has "run twice at one address, the step agrees with itself"
  has "the state depends on its address"; has "FAILED"
  expect 1 "$replay" --synctest --every 1000 --json "$work/pointer.log"
  json_has '"verdict":"failed"'; json_has '"sync_equal":false'; json_has '"sync_difference_step":0,'
  json_has '"sync_difference":"state"'; json_has '"sync_first_difference":0,'; json_has '"sync_moved":true'
  json_has '"sync_difference_name":"state byte 0"'
done
echo "a pointer in the state fails at its first step"

# 3. a static counter outside the state: a plain replay in a fresh process
# agrees with the recording, running a step twice does not (byte 16, its
# copy, which the game's state layout names "calls"). The large state's
# compare runs on two threads; its steps do not, so it fails the same way.
for static_game in "$static" "$static_big"; do
  expect 0 "$record" --game "$static_game" --log "$work/static.log" --players 2 --steps 300 --no-check --force
  expect 0 "$replay" "$work/static.log"
  expect 1 "$replay" --synctest "$work/static.log"
  has "sync test failed at step 0: calls (state byte 16) differs: first run 0x01, re-run 0x02"
  has "something outside its state block"; has "run twice at one address, it differs too"
  expect 1 "$replay" --synctest --json "$work/static.log"
  json_has '"sync_difference_step":0,'; json_has '"sync_first_difference":16,'
  json_has '"sync_difference_name":"calls (state byte 16)"'
  json_has '"sync_first_run_byte":1,'; json_has '"sync_rerun_byte":2,'; json_has '"sync_moved":false'
done
echo "a static counter fails at step 0"

# 4. the process id at step 250: the same in both runs of one process, but
# not in the second process the sync test replays the log in, whose output
# differs at that very step (before the log's next hash at 259)
expect 0 "$record" --game "$nondet" --log "$work/nondet.log" --players 2 --steps 400 \
  --hash-interval 20 --no-check
expect 1 "$replay" --synctest "$work/nondet.log"
has "output byte 2000 (step 250) differs from a second process's replay of the log"
has "251 steps in"; has "FAILED"
echo "the log's hashes are checked"

# 5. usage
expect 2 "$replay" --every 5 "$work/counter.log"; has "--every is for --synctest"
expect 2 "$replay" --synctest --every 0 "$work/counter.log"
expect 2 "$replay" --synctest --golden "$work/x.golden" "$work/counter.log"
expect 2 "$replay" --synctest --output "$work/x.out" "$work/counter.log"
# a slice: --from without an index starts at step 0 and compares from step 3 on
expect 0 "$replay" --synctest --from 3 "$work/counter.log"; has "sync test passed"
expect 0 "$replay" --help; grep -q -- "--synctest" "$work/out" || fail "--help lacks --synctest"
echo "sync test ok"
