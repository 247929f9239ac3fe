#!/usr/bin/env bash
# bench_data.sh [BUILD_DIR]: figures for game data edited live (issue 24).
#   1. edit -> applied: a paced cradle-server (Release, vanguard, plaintext on
#      loopback, two headless bot clients, a session log) with --data on a
#      copy of vanguard's data folder; EDITS (BENCH_DATA_EDITS, default 10)
#      saves of tuning.json (a new file renamed into place, as editors do),
#      each once the last one applied. Per edit the server's status gives
#      data_delay_last_us (the file's last write to applied and announced:
#      goal the 120 ms settle + <= 5 ms) and data_apply_last_us (the step
#      loop's stall for it: parse, validate, archive, record, announce);
#      dropped_steps before and after says whether the loop missed a step.
#   2. replay speed: a 20,000-step 4-bot vanguard session recorded without
#      data changes and the same session with a data change every 2,000
#      steps (tuning.json saved again with other spacing: new bytes, the same
#      values, so both sessions play alike and only the applications differ),
#      each replayed 5 times, interleaved (the best run counts).
# It asserts nothing; it prints its figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
edits=${BENCH_DATA_EDITS:-10}
server=$build/server/cradle-server client=$build/client/cradle-client ctl=$build/tools/cradlectl
record=$build/tools/cradle-record replay=$build/tools/cradle-replay
game=$build/shared/games/vanguard/vanguard.so
for f in "$server" "$client" "$ctl" "$record" "$replay" "$game"; do
  [ -f "$f" ] || { echo "bench_data: $f is not built (tools/bench.sh builds it)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/cradle-bench-data-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cp -r "$root/shared/games/vanguard/data" "$work/data"
tuning=$work/data/vanguard/tuning.json
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
status() { "$ctl" --socket "$work/dev.sock" --json status; }

port=$((20000 + RANDOM % 12000))
"$server" --game "$game" --data "$work/data" --insecure --bind 127.0.0.1 --port "$port" --players 2 \
  --dev-socket "$work/dev.sock" --log "$work/session.log" >"$work/out" 2>"$work/err" &
pids+=($!)
for _ in $(seq 200); do grep -q '"event":"serving"' "$work/out" 2>/dev/null && break; sleep 0.05; done
grep -q '"event":"serving"' "$work/out" || { cat "$work/err" >&2; exit 1; }
"$client" --headless --insecure --port "$port" --game "$game" --bots 2 >"$work/bots.out" 2>"$work/bots.err" &
pids+=($!)
for _ in $(seq 200); do [ "$(status | field joins)" -ge 2 ] && break; sleep 0.05; done
sleep 1 # past the joins
dropped_before=$(status | field dropped_steps)
echo "edit -> applied, $edits saves of tuning.json in a paced 2-player vanguard session:"
delays=() stalls=()
for i in $(seq "$edits"); do
  applied=$(status | field data_applied)
  speed=$([ $((i % 2)) -eq 1 ] && echo 3.5 || echo 3)
  sed "s/\"ship_speed\": [0-9.]*/\"ship_speed\": $speed/" "$tuning" >"$tuning.tmp"
  mv -f "$tuning.tmp" "$tuning"
  for _ in $(seq 100); do [ "$(status | field data_applied)" -gt "$applied" ] && break; sleep 0.05; done
  line=$(status)
  [ "$(echo "$line" | field data_applied)" -gt "$applied" ] || { echo "edit $i was not applied" >&2; cat "$work/err" >&2; exit 1; }
  delays+=("$(echo "$line" | field data_delay_last_us)")
  stalls+=("$(echo "$line" | field data_apply_last_us)")
done
dropped_after=$(status | field dropped_steps)
summary() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "median %.2f ms, max %.2f ms", v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }'; }
echo "  last write -> applied and announced: $(summary "${delays[@]}") (settle 120 ms)"
[ -n "${BENCH_DATA_VERBOSE:-}" ] && echo "  each (us): ${delays[*]}; stalls (us): ${stalls[*]}"
echo "  step loop stall while applying:      $(summary "${stalls[@]}")"
echo "  steps dropped by the clock meanwhile: $((dropped_after - dropped_before))"
"$ctl" --socket "$work/dev.sock" quit >/dev/null || true

echo "replay speed, 20000 steps of 4-bot vanguard:"
cp -r "$root/shared/games/vanguard/data" "$work/data1"
cp -r "$root/shared/games/vanguard/data" "$work/data2"
sed -i 's/"ship_speed": 3,/"ship_speed":  3,/' "$work/data2/vanguard/tuning.json"
changes=()
for s in $(seq 2000 2000 18000); do changes+=(--data-at "$s:$work/data$((s / 2000 % 2 + 1))"); done
"$record" --game "$game" --data "$work/data1" --players 4 --bots --steps 20000 --log "$work/plain.log" --no-check \
  --output "$work/plain.out" >/dev/null
"$record" --game "$game" --data "$work/data1" --players 4 --bots --steps 20000 --log "$work/changes.log" --no-check \
  --output "$work/changes.out" "${changes[@]}" >/dev/null
cmp -s "$work/plain.out" "$work/changes.out" || echo "  (the two sessions' outputs differ: the figures compare unlike runs)"
declare -A best=([plain]=0 [changes]=0)
for _ in 1 2 3 4 5; do # interleaved, so a machine getting busier shows in both
  for name in plain changes; do
    rate=$("$replay" --json "$work/$name.log" 2>/dev/null | sed -n 's/.*"steps_per_second":\([0-9]*\).*/\1/p')
    [ "$rate" -gt "${best[$name]}" ] && best[$name]=$rate
  done
done
for name in plain changes; do
  applied=$("$replay" --json "$work/$name.log" 2>/dev/null | field data_applied)
  echo "  $name: ${best[$name]} steps/s, best of 5 ($applied data files applied)"
done
