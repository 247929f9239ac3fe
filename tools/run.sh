#!/usr/bin/env bash
# run.sh: sets up, builds and runs the main job: the demo host stepping a
# session in real time. Extra arguments go to the host.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" >/dev/null
exec build/release/server/cradle-demo "$@"
