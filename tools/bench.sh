#!/usr/bin/env bash
# bench.sh [NAME...]: builds the benchmark programs in Release and runs them
# (all, or only those named: core world game log reload trial idle data dev events
# server secure client broadcast flood seek; server-curve on request). Each prints its own figures; the README's
# performance table comes from these runs. bench_server runs 64 bots for BENCH_SERVER_SECONDS (60);
# server-curve runs it at BENCH_CURVE_CLIENTS (8 64 256 1024) for BENCH_CURVE_SECONDS (20) each.
# bench_client runs bench_predict after it (prediction's worst case per frame).
# bench_seek measures the keyframe intervals in BENCH_SEEK_INTERVALS (1200; a list: 600,1200,3600)
# on a 432,000-step session it records once per build of vanguard (build/release/bench-seek/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh redis-server
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" >build/release-build.log 2>&1 ||
  { tail -40 build/release-build.log; exit 1; }
b=build/release/tools/bench
vanguard=build/release/shared/games/vanguard/vanguard.so
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(core world game log reload trial idle data dev events secure client server broadcast flood seek)
for name in "${names[@]}"; do
  echo "== bench_$name"
  case "$name" in
    dev) bash tools/bench/bench_dev.sh build/release ;;
    events) bash tools/bench/bench_events.sh build/release ;;
    trial) bash tools/bench/bench_trial.sh build/release ;;
    idle) bash tools/bench/bench_idle.sh build/release ;;
    data) bash tools/bench/bench_data.sh build/release ;;
    broadcast) bash tools/bench/bench_broadcast.sh build/release ;;
    flood) # the flood comes from the test client: a build with the tests configured
      cmake -S . -B build/release-flood -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_BENCH=OFF >/dev/null
      cmake --build build/release-flood -j"$(nproc)" --target cradle-server cradle-client cradlectl cradle-keys \
        cradle-test-client cradle_game_vanguard >build/release-flood.log 2>&1 || { tail -40 build/release-flood.log; exit 1; }
      bash tools/bench/bench_flood.sh build/release-flood ;;
    log) "$b/bench_log" "$vanguard" ;;
    client) "$b/bench_client" && "$b/bench_predict" ;; # frame time, input to screen; prediction's worst case
    seek) "$b/bench_seek" --interval "${BENCH_SEEK_INTERVALS:-1200}" ;;
    server) "$b/bench_server" "${BENCH_SERVER_SECONDS:-60}" ;;
    server-curve) for n in ${BENCH_CURVE_CLIENTS:-8 64 256 1024}; do
                    "$b/bench_server" "${BENCH_CURVE_SECONDS:-20}" "$n" || exit 1
                  done ;;
    *) [ -x "$b/bench_$name" ] || { echo "bench.sh: no benchmark '$name'" >&2; exit 2; }
       "$b/bench_$name" ;;
  esac
done
