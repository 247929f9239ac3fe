#!/usr/bin/env bash
# test.sh: sets up, builds and runs every Cradle test. Exits non-zero on any
# failure. What it runs, in order:
#   1. the whole suite built with ASan+UBSan and warnings as errors (gcc);
#   2. the threaded tests (label "threads") built with ThreadSanitizer (clang);
#   3. the unit tests under valgrind (no sanitizers), which must report no
#      error and no leak, and the short soak on that plain build (its
#      flat-memory check means nothing under a sanitizer);
#   4. a short bounded run of every libFuzzer harness (clang);
#   5. the golden sessions and the golden corpus again with the games and
#      tools optimised: gcc -O3 (Release) and clang -O2 (RelWithDebInfo), so
#      a game that depends on the compiler or its optimisation shows as a
#      golden difference (tools/bless.sh blesses them with a Debug build);
#   6. the container image: deploy/Containerfile built with podman and run as
#      deploy/fleet.yaml runs it, a client joined (integration.image; a skip
#      where podman cannot run a container). Its own stage, not stage 1's: the
#      image compiles the project in its build stage, which beside the ASan
#      suite's two parallel tests would slow both; here it has the machine to
#      itself. Its host-side programs (client, keys, replay) are stage 5's gcc
#      Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
# lintian checks the Debian package (integration.deb).
bash tools/setup.sh lintian

jobs=$(nproc)
export CTEST_OUTPUT_ON_FAILURE=1

# build DIR: builds quietly; shows the compiler's output only when it fails.
build() {
  if ! cmake --build "$1" -j"$jobs" >"$1/build.log" 2>&1; then
    grep -E "error|warning" "$1/build.log" | head -50 || tail -50 "$1/build.log"
    echo "build of $1 failed (full log: $1/build.log)" >&2
    exit 1
  fi
}

echo "== 1/6 ASan+UBSan build and full suite"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_ASAN=ON \
  -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/asan
(cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest -j"$jobs" -LE 'fuzz|^image$')

echo "== 2/6 ThreadSanitizer build, threaded tests"
CC=clang cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_TSAN=ON \
  -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/tsan
(cd build/tsan && TSAN_OPTIONS=halt_on_error=1 ctest -j"$jobs" -L threads --no-tests=ignore)

echo "== 3/6 valgrind over the unit tests; the short soak on a plain build"
cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_VALGRIND=ON \
  -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/valgrind
(cd build/valgrind && ctest -j"$jobs" -L unit -LE no_valgrind)
# The soak's flat-memory check needs a build without sanitizers: this one.
(cd build/valgrind && ctest -L soak)

echo "== 4/6 libFuzzer harnesses, short bounded runs"
CC=clang cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_ASAN=ON \
  -DCRADLE_FUZZ=ON -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/fuzz
(cd build/fuzz && ctest -j"$jobs" -L fuzz --no-tests=ignore)

echo "== 5/6 the golden sessions with optimised builds (gcc -O3, clang -O2)"
golden_tests='^integration\.(log_replay|vanguard_golden|golden_corpus|synctest|sdk)$'
for cross in "gcc Release" "clang RelWithDebInfo"; do
  read -r cc type <<<"$cross"
  dir=build/golden-$cc
  CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DCRADLE_WERROR=ON -DCRADLE_BUILD_BENCH=OFF \
    -DCRADLE_BUILD_CLIENT=OFF >/dev/null
  build "$dir"
  (cd "$dir" && ctest -j"$jobs" -R "$golden_tests")
done

echo "== 6/6 the container image (podman), run as the Fleet runs it"
(cd build/golden-gcc && ctest -V -L '^image$') # -V: its timings, size and any skip reason

echo "all test stages passed"
