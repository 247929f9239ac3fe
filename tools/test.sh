#!/usr/bin/env bash
# test.sh: sets up, builds and runs every Cradle test. Exits non-zero on any
# failure. What it runs, in order:
#   1. the whole suite built with ASan+UBSan and warnings as errors (gcc);
#   2. the whole suite again in Release (gcc -O3, no sanitizers), as users
#      build it (tools/run.sh does): it runs the golden sessions with the
#      games and tools optimised, so a game that depends on the optimiser
#      shows as a golden difference (tools/bless.sh blesses with Debug);
#   3. the threaded tests (label "threads") built with ThreadSanitizer (clang);
#   4. the unit tests under valgrind (no sanitizers), which must report no
#      error and no leak, and the short soak on that plain build (its
#      flat-memory check means nothing under a sanitizer);
#   5. a short bounded run of every libFuzzer harness (clang);
#   6. the golden sessions and the golden corpus again with clang -O2
#      (RelWithDebInfo): the other compiler;
#   7. the container image: deploy/Containerfile built with podman and run as
#      deploy/fleet.yaml runs it, a client joined (integration.image; a skip
#      where podman cannot run a container). Its own stage, not stage 1's: the
#      image compiles the project in its build stage, which beside the ASan
#      suite's two parallel tests would slow both; here it has the machine to
#      itself. Its host-side programs (client, keys, replay) are stage 2's
#      Release build.
#
# Options:
#   --stages LIST  runs only these stages (numbers, comma-separated: 1,2);
#                  stage 7 builds stage 2's tree when stage 2 is not run
#   --busy         keeps both cores loaded with real work while the stages
#                  run, as on a CI machine or a packager's build farm: a
#                  second build of the whole project, from clean, over and
#                  over on one core, and a CPU-bound program (sha256sum of an
#                  endless stream) on the other. A suite that passes only on
#                  a quiet machine fails here. Every change is checked this
#                  way before it lands.
#   --help
set -euo pipefail
cd "$(dirname "$0")/.."
stages=1,2,3,4,5,6,7
busy=0
while [ $# -gt 0 ]; do
  case $1 in
    --stages) [ $# -ge 2 ] || { echo "test.sh: --stages needs a list, e.g. 1,2" >&2; exit 2; }
      [[ $2 =~ ^[1-7](,[1-7])*$ ]] || { echo "test.sh: --stages takes numbers 1-7, comma-separated: got '$2'" >&2; exit 2; }
      stages=$2; shift 2 ;;
    --stages=*) set -- --stages "${1#--stages=}" "${@:2}" ;;
    --busy) busy=1; shift ;;
    --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
want() { [[ ",$stages," == *",$1,"* ]]; }

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

# --busy: the load, started before the first build and ended on exit.
LOAD_PIDS=()
stop_load() {
  local pid
  for pid in "${LOAD_PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
  LOAD_PIDS=()
}
trap stop_load EXIT
start_load() {
  mkdir -p build/busy
  # Each in a process group of its own (set -m), so that stopping it stops
  # its children too (the compiler, sha256sum).
  set -m
  (cd build/busy && while :; do
     cmake -S ../.. -B . -DCMAKE_BUILD_TYPE=Debug -DCRADLE_BUILD_BENCH=ON >/dev/null 2>&1 || exit 1
     cmake --build . --clean-first -j1 >/dev/null 2>&1 || exit 1
   done) &
  LOAD_PIDS+=($!)
  (exec sha256sum /dev/zero) >/dev/null &
  LOAD_PIDS+=($!)
  set +m
  echo "== busy: both cores loaded while the stages run (a clean rebuild in build/busy, again and again; sha256sum /dev/zero)"
}
[ "$busy" = 0 ] || start_load

if want 1; then
echo "== 1/7 ASan+UBSan build and full suite"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_ASAN=ON \
  -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/asan
(cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest -j"$jobs" -LE 'fuzz|^image$')
fi

# Stage 2's tree; stage 7 uses its host-side programs.
release() {
  cmake -S . -B build/release-test -DCMAKE_BUILD_TYPE=Release -DCRADLE_WERROR=ON -DCRADLE_BUILD_BENCH=OFF >/dev/null
  build build/release-test
}
if want 2; then
echo "== 2/7 Release build (gcc -O3) and full suite"
release
(cd build/release-test && ctest -j"$jobs" -LE 'fuzz|^image$')
fi

if want 3; then
echo "== 3/7 ThreadSanitizer build, threaded tests"
CC=clang cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_TSAN=ON \
  -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/tsan
(cd build/tsan && TSAN_OPTIONS=halt_on_error=1 ctest -j"$jobs" -L threads --no-tests=ignore)

fi

if want 4; then
echo "== 4/7 valgrind over the unit tests; the short soak on a plain build"
cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_VALGRIND=ON \
  -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/valgrind
(cd build/valgrind && ctest -j"$jobs" -L unit -LE no_valgrind)
# The soak's flat-memory check needs a build without sanitizers: this one.
(cd build/valgrind && ctest -L soak)

fi

if want 5; then
echo "== 5/7 libFuzzer harnesses, short bounded runs"
CC=clang cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=Debug -DCRADLE_WERROR=ON -DCRADLE_ASAN=ON \
  -DCRADLE_FUZZ=ON -DCRADLE_BUILD_BENCH=OFF >/dev/null
build build/fuzz
(cd build/fuzz && ctest -j"$jobs" -L fuzz --no-tests=ignore)

fi

if want 6; then
echo "== 6/7 the golden sessions with clang -O2 (stage 2 ran them with gcc -O3)"
golden_tests='^integration\.(log_replay|vanguard_golden|golden_corpus|synctest|sdk)$'
CC=clang cmake -S . -B build/golden-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCRADLE_WERROR=ON \
  -DCRADLE_BUILD_BENCH=OFF -DCRADLE_BUILD_CLIENT=OFF >/dev/null
build build/golden-clang
(cd build/golden-clang && ctest -j"$jobs" -R "$golden_tests")
fi

if want 7; then
echo "== 7/7 the container image (podman), run as the Fleet runs it"
want 2 || release
(cd build/release-test && ctest -V -L '^image$') # -V: its timings, size and any skip reason
fi

if [ "$busy" = 1 ]; then echo "test stages passed: $stages (busy)"; else echo "test stages passed: $stages"; fi
