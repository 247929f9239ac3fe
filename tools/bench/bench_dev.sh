#!/usr/bin/env bash
# bench_dev.sh [BUILD_DIR]: dev-protocol round trips next to Redis.
#
# Builds bench_dev in Release (in BUILD_DIR, default build/bench-dev, unless
# it is built there already) and runs it: `status` round trips per second
# over a Unix socket, one client, unpipelined and pipelined (depth 16). When
# redis-server and redis-benchmark are installed it then starts a private
# redis-server on a Unix socket in a temporary directory (no TCP port, no
# persistence), runs `redis-benchmark -s SOCK -t ping -n N -q` with and
# without `-P 16`, both with redis-benchmark's default 50 clients and with
# one client (the shape of our figure), prints the ratios and stops Redis.
# Goal (issue 4): >= 1.0x Redis unpipelined, >= 0.5x pipelined.
# The two are measured in turns, BENCH_DEV_ROUNDS times (default 3), and the
# best figure of each is kept, so a burst of load on a shared machine does
# not decide the ratio. BENCH_DEV_REQUESTS sets N (default 200000).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/bench-dev}
n=${BENCH_DEV_REQUESTS:-200000}
rounds=${BENCH_DEV_ROUNDS:-3}

bench=$build/tools/bench/bench_dev
if [ ! -x "$bench" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_TESTS=OFF \
    -DCRADLE_BUILD_CLIENT=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target bench_dev >/dev/null
fi

max() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { printf "%.2f\n", (a + 0 > b + 0 ? a : b) }'; }
ours_u=0 ours_p=0
ours() {
  local out
  out=$("$bench" --requests "$n")
  echo "$out" | sed 's/^/  /'
  ours_u=$(max "$ours_u" "$(echo "$out" | awk '$1 == "unpipelined" { print $2 }')")
  ours_p=$(max "$ours_p" "$(echo "$out" | awk '$1 == "pipelined" { print $2 }')")
}

if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
  for _ in $(seq "$rounds"); do ours; done
  printf 'best of %s: unpipelined %.0f, pipelined %.0f round trips/s\n' "$rounds" "$ours_u" "$ours_p"
  echo "redis-server or redis-benchmark not installed: no comparison"
  exit 0
fi

tmp=$(mktemp -d /tmp/cradle-bench-redis-XXXXXX)
redis_pid=""
cleanup() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
sock=$tmp/redis.sock
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' --appendonly no \
  --dir "$tmp" --daemonize no >"$tmp/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do
  [ -S "$sock" ] && break
  sleep 0.05
done
[ -S "$sock" ] || { echo "redis-server did not start: $(cat "$tmp/redis.log")" >&2; exit 1; }

# redis_rps ARGS...: requests per second of PING_INLINE (a text line, as ours).
redis_rps() {
  redis-benchmark -s "$sock" -t ping -n "$n" -q "$@" 2>/dev/null | tr '\r' '\n' |
    awk -F'[: ]+' '/^PING_INLINE: [0-9.]+ requests per second/ { print $2 }' | tail -n 1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

r50_u=0 r50_p=0 r1_u=0 r1_p=0
for round in $(seq "$rounds"); do
  echo "round $round of $rounds"
  ours
  r50_u=$(max "$r50_u" "$(redis_rps)")
  r50_p=$(max "$r50_p" "$(redis_rps -P 16)")
  r1_u=$(max "$r1_u" "$(redis_rps -c 1)")
  r1_p=$(max "$r1_p" "$(redis_rps -c 1 -P 16)")
  printf '  redis best so far, 50 clients: %.0f / %.0f, 1 client: %.0f / %.0f (unpipelined / -P 16)\n' \
    "$r50_u" "$r50_p" "$r1_u" "$r1_p"
done
printf '\n%-44s %12s %12s\n' "best round trips/s of $rounds rounds" unpipelined "pipelined 16"
printf '%-44s %12.0f %12.0f\n' "cradle dev status, 1 client" "$ours_u" "$ours_p"
printf '%-44s %12.0f %12.0f\n' "redis ping (redis-benchmark -s, 50 clients)" "$r50_u" "$r50_p"
printf '%-44s %12.0f %12.0f\n' "redis ping (redis-benchmark -s -c 1)" "$r1_u" "$r1_p"
printf '%-44s %12s %12s\n' "ratio cradle / redis 50 clients" "$(ratio "$ours_u" "$r50_u")x" "$(ratio "$ours_p" "$r50_p")x"
printf '%-44s %12s %12s\n' "ratio cradle / redis 1 client" "$(ratio "$ours_u" "$r1_u")x" "$(ratio "$ours_p" "$r1_p")x"
echo "goal: >= 1.0x unpipelined, >= 0.5x pipelined"
