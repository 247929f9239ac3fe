#!/usr/bin/env bash
# bench_events.sh [BUILD_DIR]: the game thread's cost of the dev event
# stream. A commanded cradle-server (Release, the counter game, whose step
# is nearly free, so the stream's cost is not hidden under the game's) runs
# STEPS steps through `cradlectl step` with no subscriber, then with 10
# subscribers (`cradlectl --json watch every=60`, reading into /dev/null)
# that receive every event and a step line every 60 steps, and again with
# none, in turns, ROUNDS times. It prints the best per-step time of each and
# the difference: what 10 subscribers add to a step. Goal (issue 19): under
# 1 us per step. BENCH_EVENTS_STEPS (default 1,000,000), BENCH_EVENTS_ROUNDS
# (default 3).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
steps=${BENCH_EVENTS_STEPS:-1000000}
rounds=${BENCH_EVENTS_ROUNDS:-3}
server=$build/server/cradle-server ctl=$build/tools/cradlectl
game=$build/shared/games/counter/counter.so
for f in "$server" "$ctl" "$game"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "bench_events: $f is not built (tools/bench.sh builds it)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/cradle-bench-events-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
sock=$work/dev.sock
port=$((20000 + RANDOM % 12000))
"$server" --game "$game" --insecure --bind 127.0.0.1 --port "$port" --mode commanded --dev-socket "$sock" \
  >"$work/server.out" 2>"$work/server.err" &
pids+=($!)
for _ in $(seq 200); do
  grep -q '"event":"serving"' "$work/server.out" 2>/dev/null && break
  sleep 0.05
done
grep -q '"event":"serving"' "$work/server.out" || { cat "$work/server.err" >&2; exit 1; }
ctl() { "$ctl" --socket "$sock" "$@"; }

# run_steps: STEPS steps in commands of 100,000; prints ns per step.
run_steps() {
  local start end left=$steps
  start=$(date +%s%N)
  while [ "$left" -gt 0 ]; do
    local n=$((left > 100000 ? 100000 : left))
    ctl step "$n" >/dev/null
    left=$((left - n))
  done
  end=$(date +%s%N)
  echo $(( (end - start) / steps ))
}

best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
none_best="" ten_best=""
watchers=()
for round in $(seq "$rounds"); do
  t=$(run_steps); none_best=$(best "$t" "$none_best")
  echo "round $round: no subscriber   $t ns/step"
  for _ in $(seq 10); do
    "$ctl" --socket "$sock" --json watch every=60 >/dev/null 2>&1 &
    watchers+=($!)
    pids+=($!)
  done
  for _ in $(seq 200); do
    [ "$(ctl --json status | sed -n 's/.*"dev_subscribers":\([0-9]*\).*/\1/p')" = 10 ] && break
    sleep 0.05
  done
  ctl pause >/dev/null; ctl resume >/dev/null # two events to every subscriber
  t=$(run_steps); ten_best=$(best "$t" "$ten_best")
  echo "round $round: 10 subscribers  $t ns/step"
  dropped=$(ctl --json status | sed -n 's/.*"dev_subscribers_dropped":\([0-9]*\).*/\1/p')
  for w in "${watchers[@]}"; do kill "$w" 2>/dev/null || true; done
  for w in "${watchers[@]}"; do wait "$w" 2>/dev/null || true; done
  watchers=()
  for _ in $(seq 200); do
    [ "$(ctl --json status | sed -n 's/.*"dev_subscribers":\([0-9]*\).*/\1/p')" = 0 ] && break
    sleep 0.05
  done
done
ctl quit >/dev/null || true
printf '\nbest of %s rounds of %s steps (counter game, commanded, Release)\n' "$rounds" "$steps"
printf '  no subscriber:   %s ns/step\n' "$none_best"
printf '  10 subscribers:  %s ns/step (every event, a step line every 60 steps; %s dropped)\n' "$ten_best" "${dropped:-0}"
awk -v a="$ten_best" -v b="$none_best" 'BEGIN { printf "  the stream adds: %.3f us/step (goal: under 1 us)\n", (a - b) / 1000 }'
