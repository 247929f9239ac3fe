#!/usr/bin/env bash
# The SDK from outside the tree, as a game developer has it: `cmake --install`
# into a prefix, then the template game (shared/games/template) copied out and
# built twice against the installed files only (the CMake package, and plain
# cc with pkg-config), with the source tree hidden (a private mount puts an
# empty directory over it, so nothing can be picked up from there). Each build
# is recorded by the installed cradle-record and must give the committed
# golden output byte for byte; the CMake build is hosted by the installed
# server, joined by installed headless bots, and its log replays.
# usage: sdk.sh BUILD_DIR SOURCE_DIR GOLDEN      (installs BUILD_DIR first)
#        sdk.sh --prefix DIR SOURCE_DIR GOLDEN   (an installed tree: deb.sh's
#                                                 unpacked package)
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
given_prefix=
if [ "$1" = --prefix ]; then given_prefix=$(cd "$2" && pwd); shift 2; set -- "$given_prefix" "$@"; fi
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) golden=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ -z "${CRADLE_SDK_INSIDE:-}" ]; then
  work=$(mktemp -d /tmp/cradle-sdk-XXXXXX)
  trap 'rm -rf "$work"' EXIT
  prefix=$work/prefix libdir=lib
  if [ -n "$given_prefix" ]; then
    ln -s "$given_prefix" "$prefix"
  else
    cmake --install "$build" --prefix "$prefix" >"$work/install.txt"
    libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
    libdir=${libdir:-lib}
  fi
  # Every file the SDK promises.
  for f in include/cradle/game_abi.h include/cradle/ecs.h include/cradle/grid.h include/cradle/rng.h \
           include/cradle/input.h include/cradle/events.h include/cradle/errors.h \
           "$libdir/libcradle_core.a" "$libdir/pkgconfig/cradle.pc" "$libdir/cmake/Cradle/CradleConfig.cmake" \
           "$libdir/cmake/Cradle/CradleConfigVersion.cmake" "$libdir/cmake/Cradle/CradleTargets.cmake" \
           "$libdir/cmake/Cradle/CradleGame.cmake" "$libdir/cmake/Cradle/CradleBuildId.cmake" \
           bin/cradle-server bin/cradle-record bin/cradle-replay bin/cradlectl; do
    [ -e "$prefix/$f" ] || fail "the install lacks $f"
  done
  # Only the game-facing headers: none of the platform's own.
  for h in internal wire ratelimit ackpace input_delay sim clock version; do
    [ ! -e "$prefix/include/cradle/$h.h" ] || fail "the platform's $h.h is installed"
  done
  # Every installed header compiles alone (it includes what it needs, and that is installed).
  for h in "$prefix"/include/cradle/*.h; do
    echo "#include \"cradle/${h##*/}\"" | cc -std=c11 -fsyntax-only -I "$prefix/include" -x c - ||
      fail "the installed ${h##*/} does not compile alone"
  done
  cp -r "$src/shared/games/template" "$work/mygame"
  cp "$golden" "$work/gather.golden"
  cp "$0" "$work/sdk.sh"
  # The rest runs with the source tree (and the build inside it) out of reach.
  if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
    exec env CRADLE_SDK_INSIDE=1 CRADLE_SDK_WORK="$work" CRADLE_SDK_LIBDIR="$libdir" \
      unshare --mount --propagation private bash -c 'mount -t tmpfs tmpfs "$1" && exec bash "$2" "$3" "$1" "$4"' \
      _ "$src" "$work/sdk.sh" "$work" "$work/gather.golden"
  fi
  echo "note: no private mount here (not root): the source tree stays visible; the build logs are checked instead"
  export CRADLE_SDK_INSIDE=1 CRADLE_SDK_WORK="$work" CRADLE_SDK_LIBDIR="$libdir" CRADLE_SDK_SRC="$src"
  bash "$0" "$work" "$src" "$work/gather.golden"
  exit $?
fi

# ---- inside: only the installed prefix and the copied game -------------------------
work=$CRADLE_SDK_WORK libdir=$CRADLE_SDK_LIBDIR prefix=$CRADLE_SDK_WORK/prefix
cd "$work"
[ -z "$(ls -A "$src" 2>/dev/null)" ] && echo "the source tree is hidden: $src is empty here"
bin=$prefix/bin

# 1. The CMake package.
cmake -S mygame -B mygame/build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >cmake.txt 2>&1 ||
  { cat cmake.txt; fail "configure against the installed package"; }
cmake --build mygame/build >>cmake.txt 2>&1 || { cat cmake.txt; fail "build against the installed package"; }
cmake_lib=$work/mygame/build/gather.so
[ -f "$cmake_lib" ] || fail "no gather.so from the CMake build"
# Its WebAssembly twin beside it, for the browser's viewer, stamped with the
# same build id (where the wasm toolchain is: tools/setup.sh installs it).
if command -v clang-14 >/dev/null && [ -e "$prefix/$libdir/cradle/wasm32-wasi/libcradle_web.a" ]; then
  [ -f "$work/mygame/build/gather.wasm" ] || fail "no gather.wasm beside gather.so"
  id=$(sed -n 's/^#define CRADLE_BUILD_ID "\(.*\)"$/\1/p' "$(find mygame/build -name cradle_build_id.h | head -1)")
  twin_id=$(node -e 'const m = new WebAssembly.Module(require("fs").readFileSync(process.argv[1]));
    process.stdout.write(Buffer.from(WebAssembly.Module.customSections(m, "cradle_build")[0]).toString())' \
    "$work/mygame/build/gather.wasm") || fail "gather.wasm is no WebAssembly module with a cradle_build section"
  [ -n "$id" ] && [ "$twin_id" = "$id" ] || fail "gather.wasm is build '$twin_id', gather.so build '$id'"
else
  fail "the SDK has no WebAssembly runtime or there is no clang-14: run tools/setup.sh"
fi

# 2. Plain cc with pkg-config, the build id written by hand.
mkdir -p plain
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
id=$(sha256sum mygame/gather.c | cut -c1-16)
# shellcheck disable=SC2046 # pkg-config's words are flags
cc -O2 $(pkg-config --variable=game_cflags cradle) $(pkg-config --cflags cradle) -shared -o plain/gather.so \
  mygame/gather.c $(pkg-config --libs cradle) $(pkg-config --variable=game_ldflags cradle) \
  -DCRADLE_BUILD_ID="\"$id\"" 2>cc.txt || { cat cc.txt; fail "cc with pkg-config"; }
mkdir -p plain/gather && cp mygame/sounds/coin.wav mygame/data/gather/rules.json plain/gather/ # as the README does
for lib in "$cmake_lib" plain/gather.so; do
  exports=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }')
  [ "$exports" = cradle_game_get_contract ] || fail "$lib exports more than the contract: $exports"
done
if [ -n "${CRADLE_SDK_SRC:-}" ] && grep -rqF "$CRADLE_SDK_SRC" mygame/build/compile_commands.json mygame/build/CMakeCache.txt 2>/dev/null; then
  fail "the out-of-tree build names the source tree"
fi

# 3. Both builds record the committed golden output (the game's own bots, seed 5, 3 players).
for lib in "$cmake_lib" plain/gather.so; do
  log=$work/$(basename "$(dirname "$lib")").log
  "$bin/cradle-record" --game "$lib" --log "$log" --seed 5 --players 3 --steps 300 --bots --json >record.out ||
    { cat record.out; fail "cradle-record of $lib"; }
  grep -q '"replay_equal":true' record.out || fail "$lib: the log does not replay to its own run"
  grep -q '"data_applied":1,' record.out || fail "$lib: its data file gather/rules.json was not applied"
  "$bin/cradle-replay" --json --golden gather.golden "$log" >replay.out ||
    { "$bin/cradle-replay" --golden gather.golden "$log" || true; fail "$lib differs from the golden output"; }
done

# 4. Hosted by the installed server, joined by installed headless bots, replayed.
if [ -x "$bin/cradle-client" ]; then
  # A port below the kernel's ephemeral ones (32768-60999), which other
  # tests' client sockets take; one another test's server holds is tried
  # again (the server exits 3 when its port is taken).
  for try in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 12000))
    rm -f "$work/dev.sock" "$work/hosted.log"
    : >server.out
    "$bin/cradle-server" --game "$cmake_lib" --insecure --bind 127.0.0.1 --port "$port" --mode commanded \
      --dev-socket "$work/dev.sock" --log "$work/hosted.log" >server.out 2>server.err &
    server_pid=$!
    trap 'kill "$server_pid" 2>/dev/null || true' EXIT
    deadline=$((SECONDS + 20))
    until grep -q '"event":"serving"' server.out 2>/dev/null || ! kill -0 "$server_pid" 2>/dev/null; do
      [ $SECONDS -lt $deadline ] || { cat server.err; fail "the installed server did not serve"; }
      sleep 0.05
    done
    grep -q '"event":"serving"' server.out && break
    rc=0
    wait "$server_pid" || rc=$?
    [ "$rc" -eq 3 ] || { cat server.err; fail "the installed server did not serve (exit $rc)"; }
  done
  grep -q '"event":"serving"' server.out || fail "the installed server found no free port in 5 tries"
  "$bin/cradle-client" --headless --game "$cmake_lib" --port "$port" --insecure --bots 2 --steps 200 \
    >client.out 2>client.err &
  client_pid=$!
  joined() { "$bin/cradlectl" --socket "$work/dev.sock" --json status | grep '"joins":2' >/dev/null; }
  deadline=$((SECONDS + 20))
  until joined; do
    [ $SECONDS -lt $deadline ] || { cat client.err server.err; fail "the bots did not join"; }
    sleep 0.05
  done
  "$bin/cradlectl" --socket "$work/dev.sock" step 240 >/dev/null
  wait "$client_pid" || { cat client.out client.err; fail "the bots did not end on the server's hash"; }
  "$bin/cradlectl" --socket "$work/dev.sock" quit >/dev/null
  wait "$server_pid"
  "$bin/cradle-replay" --json "$work/hosted.log" | grep -q '"verdict":"ok"' || fail "the hosted log does not replay"
else
  echo "note: cradle-client is not built: the hosting step is skipped"
fi
echo "sdk ok"
