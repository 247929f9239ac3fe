#!/usr/bin/env bash
# A reload that cannot crash the session: before a new build takes over, it
# runs the last steps twice in a child process (the reload trial). A build
# that crashes, hangs or is not deterministic is refused with the reason and
# the session keeps the old build; a good one swaps in as before.
#   1. commanded, a client playing and a log: `cradlectl reload` of a crashing
#      build and of one that reads a static are refused with their reasons;
#      the good rebuild swaps; the client ends on the server's hash and the
#      log replays.
#   2. paced, the server's own file watch: a build that hangs is killed at
#      the trial's deadline while the step loop goes on without dropping a
#      step; a crashing build is refused; the good one swaps.
set -euo pipefail
server=$1 client=$2 ctl=$3 replay=$4 games=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; cat server.err >&2; exit 1; }
install_game() { cp "$games/$1.so" game.so.tmp && mv -f game.so.tmp game.so; }
ctl() { "$ctl" --socket dev.sock --json "$@"; }
status_at_least() { [ "$(json_field "$(ctl status)" "$1")" -ge "$2" ]; }
# refused BUILD TEXT: a forced reload of BUILD is refused as reload_trial, saying TEXT.
refused() {
  install_game "$1"
  local out
  out=$(ctl reload) && fail "reload of $1 accepted: $out"
  <<<"$out" grep -q '"error":"reload_trial"' || fail "$1: $out"
  echo "$out" | grep -E -q -- "$2" || fail "$1: the reason lacks '$2': $out"
  echo "$1 refused: $out"
}

# 1. commanded: forced reloads, a client and a log
install_game trial
# the client loads its file when the server announces a build: it gets only the good one
mkdir client && cp "$games/trial.so" client/game.so
start_server --game "$PWD/game.so" --mode commanded --players 2 --dev-socket dev.sock --log r.log --hash-interval 10
build1=$(json_field "$(ctl status)" build)
"$client" --port "$PORT" --game "$PWD/client/game.so" --steps 300 --timeout-ms 20000 >a.out 2>a.err & a=$!
wait_until 30 "the client to join" status_at_least joins 1
ctl step 100 >/dev/null
# (a sanitizer build catches the crash first: the child then exits with its report)
crashed="crashed in its trial|a crash a sanitizer caught"
refused trial_crash "$crashed"
refused trial_static "not deterministic: step 100 .* differs at total \(state byte 0\)"
grep -E -q "new library refused \(reload_trial\): the new build .*($crashed)" server.err || fail "stderr lacks the refusal"
[ "$(json_field "$(ctl status)" build)" = "$build1" ] || fail "the build changed"
# (the file watch may have staged the same file before the dev command came:
# the command waits for that trial, then runs its own, so a build may be
# refused twice)
failures=$(json_field "$(ctl status)" reload_trial_failures)
[ "$failures" -ge 2 ] || fail "trial failures: $(ctl status)"
ctl step 50 >/dev/null
cp "$games/trial_two.so" client/game.so.tmp && mv -f client/game.so.tmp client/game.so
install_game trial_two
out=$(ctl reload) || fail "the good build was refused: $out"
<<<"$out" grep -q '"swapped":true' || fail "$out"
build2=$(json_field "$(ctl status)" build)
[ "$build2" != "$build1" ] || fail "the good build has the old build id"
# (the file watch may have staged the good build too: then it swaps in by
# the watch and again by the command, the same build twice at one step)
trials=$(json_field "$(ctl status)" reload_trials) reloads=$(json_field "$(ctl status)" reloads)
[ "$trials" -ge $((failures + 1)) ] && [ "$trials" -le $((failures + 2)) ] || fail "trials: $(ctl status)"
[ "$reloads" = $((trials - failures)) ] || fail "reloads: $(ctl status)"
ctl step 150 >/dev/null
wait $a
server_hash=$(json_field "$(ctl hash)" hash)
line=$(grep '"event":"done"' a.out) || { cat a.out a.err; fail "the client did not finish"; }
[ "$(json_field "$line" build)" = "$build2" ] || fail "client build: $line"
[ "$(json_field "$line" final_hash)" = "$server_hash" ] || fail "client hash: $line, server $server_hash"
ctl quit >/dev/null
wait "$SERVER_PID" || fail "the server exited $?"
"$replay" --json r.log >replay.out 2>replay.err || { cat replay.out replay.err; fail "the log does not replay"; }
grep -q "\"reloads\":$reloads" replay.out || fail "the log holds other reloads than the $reloads swaps: $(cat replay.out)"
# the two refused builds are in the log too, with their reasons
grep -q "\"refusals\":$failures," replay.out || fail "the log lacks the refusals: $(cat replay.out)"
grep -E -q "a new build was refused before step 100: the new build .*($crashed)" replay.err || fail "$(cat replay.err)"
grep -q "a new build was refused before step 100: not deterministic" replay.err || fail "$(cat replay.err)"
echo "commanded: two builds refused, one swapped, client on the server's hash, log replays"

# 2. paced: the file watch, a hang past the deadline, no step dropped
install_game trial
start_server --game "$PWD/game.so" --dev-socket dev.sock
wait_until 30 "the first steps" status_at_least step 30
before=$(json_field "$(ctl status)" step)
# steps a start-up on a busy machine dropped are not the trials' doing
drops=$(json_field "$(ctl status)" dropped_steps)
install_game trial_hang
wait_until 30 "the hanging build's trial to fail" status_at_least reload_trial_failures 1
after=$(json_field "$(ctl status)" step)
grep -q "did not finish its trial within 2000 ms" server.err || fail "stderr lacks the hang"
# the step loop went on for the trial's two seconds (60 steps a second)
[ $((after - before)) -ge 100 ] || fail "only $((after - before)) steps while the trial hung"
no_steps_dropped_since "$drops" "$(ctl status)" || fail "steps dropped"
install_game trial_crash
wait_until 30 "the crashing build's trial to fail" status_at_least reload_trial_failures 2
install_game trial_two
wait_until 30 "the good build to swap in" status_at_least reloads 1
[ "$(json_field "$(ctl status)" reload_refusals)" = 2 ] || fail "refusals: $(ctl status)"
no_steps_dropped_since "$drops" "$(ctl status)" || fail "steps dropped"
echo "paced: hang and crash refused by the watch, the good build swapped, no step dropped"
