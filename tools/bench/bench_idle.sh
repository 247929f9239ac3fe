#!/usr/bin/env bash
# bench_idle.sh [BUILD_DIR]: what an empty session costs the machine. A paced
# cradle-server (Release, the counter game, plaintext on loopback) hosts a
# session nobody joins, 60 steps a second; after a second's start it reads
# each thread's CPU time from /proc/PID/task/*/schedstat, waits SECONDS
# (BENCH_IDLE_SECONDS, default 20) and reads again, ROUNDS times
# (BENCH_IDLE_ROUNDS, default 3). Prints each thread's share of a core and
# the total per round. Goal (issue 23): at most 0.2% of a core, so that a
# machine packing a hundred sessions does not spend a core on empty ones.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
seconds=${BENCH_IDLE_SECONDS:-20}
rounds=${BENCH_IDLE_ROUNDS:-3}
server=$build/server/cradle-server
game=$build/shared/games/counter/counter.so
for f in "$server" "$game"; do
  [ -f "$f" ] || { echo "bench_idle: $f is not built (tools/bench.sh builds it)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/cradle-bench-idle-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# cpu_ns PID: "TID NS" per thread (schedstat's first field: time on a CPU)
cpu_ns() { for t in /proc/"$1"/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat")"; done; }
echo "an empty session (no peer, paced at 60 steps/s), $rounds rounds of $seconds s:"
for round in $(seq "$rounds"); do
  port=$((20000 + RANDOM % 12000))
  "$server" --game "$game" --insecure --bind 127.0.0.1 --port "$port" >"$work/out" 2>"$work/err" &
  pid=$!
  for _ in $(seq 200); do grep -q '"event":"serving"' "$work/out" 2>/dev/null && break; sleep 0.05; done
  grep -q '"event":"serving"' "$work/out" || { cat "$work/err" >&2; exit 1; }
  sleep 1 # past the start-up
  cpu_ns "$pid" >"$work/a"
  sleep "$seconds"
  cpu_ns "$pid" >"$work/b"
  join "$work/a" "$work/b" | awk -v s="$seconds" -v r="$round" '
    { d = ($3 - $2) / (s * 1e9) * 100; total += d; line = line sprintf(" %.3f%%", d) }
    END { printf "  round %d: threads%s, total %.3f%% of a core\n", r, line, total }'
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
done
