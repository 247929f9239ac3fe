#!/usr/bin/env bash
# bench_trial.sh [BUILD_DIR]: what a reload trial (server/README.md, "Reload
# trials") costs a session. A paced cradle-server (Release) hosts vanguard,
# the sample game with a 960 KB state, 8 slots, and takes RELOADS forced
# reloads (`cradlectl reload`: each forks a trial that runs 60 steps twice,
# then swaps). It prints, from `status`, the longest fork() (the game
# thread's one stall for a trial), the last trial's start-to-verdict time,
# the server's resident memory, and the steps the clock dropped (goal: none).
# BENCH_TRIAL_RELOADS (default 20).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
reloads=${BENCH_TRIAL_RELOADS:-20}
server=$build/server/cradle-server ctl=$build/tools/cradlectl
game=$build/shared/games/vanguard/vanguard.so
for f in "$server" "$ctl" "$game"; do
  [ -f "$f" ] || { echo "bench_trial: $f is not built (tools/bench.sh builds it)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/cradle-bench-trial-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cp "$game" "$work/game.so"
sock=$work/dev.sock
port=$((20000 + RANDOM % 12000))
"$server" --game "$work/game.so" --insecure --bind 127.0.0.1 --port "$port" --dev-socket "$sock" \
  >"$work/server.out" 2>"$work/server.err" &
pid=$!
for _ in $(seq 200); do
  grep -q '"event":"serving"' "$work/server.out" 2>/dev/null && break
  sleep 0.05
done
grep -q '"event":"serving"' "$work/server.out" || { cat "$work/server.err" >&2; exit 1; }
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
last=()
for _ in $(seq "$reloads"); do
  "$ctl" --socket "$sock" reload >/dev/null
  last+=("$("$ctl" --socket "$sock" --json status | field reload_trial_last_us)")
done
status=$("$ctl" --socket "$sock" --json status)
sorted=$(printf '%s\n' "${last[@]}" | sort -n)
rss=$(ps -o rss= -p "$pid" | tr -d ' ')
echo "reload trials, vanguard (960 KB state), paced at 60 steps/s, $reloads forced reloads:"
echo "  fork() stall of the game thread, longest: $(echo "$status" | field reload_trial_fork_max_us) us (server RSS ${rss} KiB)"
echo "  trial start to verdict: median $(echo "$sorted" | sed -n "$(((reloads + 1) / 2))p") us, max $(echo "$sorted" | tail -1) us"
echo "  reloads $(echo "$status" | field reloads), trial failures $(echo "$status" | field reload_trial_failures), steps dropped $(echo "$status" | field dropped_steps)"
"$ctl" --socket "$sock" quit >/dev/null
wait "$pid"
pid=
