#!/usr/bin/env bash
# bench.sh [NAME...]: builds the benchmark programs in Release and runs them
# (all, or only those named: core world game log reload trial idle data dev events
# server secure client broadcast flood seek wasm viewer; server-curve on request). Each prints its own figures; the README's
# performance table comes from these runs. bench_server runs 64 bots for BENCH_SERVER_SECONDS (60);
# server-curve runs it at BENCH_CURVE_CLIENTS (8 64 256 1024) for BENCH_CURVE_SECONDS (20) each.
# bench_client runs bench_predict after it (prediction's worst case per frame).
# bench_seek measures the keyframe intervals in BENCH_SEEK_INTERVALS (1200; a list: 600,1200,3600)
# on a 432,000-step session it records once per build of vanguard (build/release/bench-seek/).
# bench_wasm replays an 8-player vanguard log natively, in node and in headless Chromium through the
# game's wasm build (tests/wasm/replay_run.c: a build with the tests configured, build/release-wasm);
# BENCH_WASM_STEPS (36000) and BENCH_WASM_ROUNDS (5).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh redis-server
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" >build/release-build.log 2>&1 ||
  { tail -40 build/release-build.log; exit 1; }
b=build/release/tools/bench
vanguard=build/release/shared/games/vanguard/vanguard.so
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(core world game log reload trial idle data dev events secure client server broadcast flood seek wasm viewer)
for name in "${names[@]}"; do
  echo "== bench_$name"
  case "$name" in
    dev) bash tools/bench/bench_dev.sh build/release ;;
    events) bash tools/bench/bench_events.sh build/release ;;
    trial) bash tools/bench/bench_trial.sh build/release ;;
    idle) bash tools/bench/bench_idle.sh build/release ;;
    data) bash tools/bench/bench_data.sh build/release ;;
    broadcast) bash tools/bench/bench_broadcast.sh build/release ;;
    viewer) bash tools/bench/bench_viewer.sh build/release ;; # the browser's viewer beside the native one (nginx, node, chromium)
    flood) # the flood comes from the test client: a build with the tests configured
      cmake -S . -B build/release-flood -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_BENCH=OFF >/dev/null
      cmake --build build/release-flood -j"$(nproc)" --target cradle-server cradle-client cradlectl cradle-keys \
        cradle-test-client cradle_game_vanguard >build/release-flood.log 2>&1 || { tail -40 build/release-flood.log; exit 1; }
      bash tools/bench/bench_flood.sh build/release-flood ;;
    wasm) # replay_vanguard.wasm is tests/wasm's, and node and Chromium run it (tools/setup.sh)
      cmake -S . -B build/release-wasm -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_BENCH=OFF >/dev/null
      cmake --build build/release-wasm -j"$(nproc)" --target cradle-record cradle-replay cradle_game_vanguard \
        replay_vanguard_wasm >build/release-wasm.log 2>&1 || { tail -40 build/release-wasm.log; exit 1; }
      node --no-warnings tools/bench/bench_wasm.mjs build/release-wasm ;;
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
