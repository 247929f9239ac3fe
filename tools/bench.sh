#!/usr/bin/env bash
# bench.sh: builds the benchmark programs in Release and runs them all.
# Each prints its own figures (the README's performance table comes from here).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh redis-server
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" >/dev/null
for b in build/release/tools/bench/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b"
done
