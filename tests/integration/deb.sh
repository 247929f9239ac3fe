#!/usr/bin/env bash
# The Debian package: cpack builds cradle_<version>_<arch>.deb from the build
# under test; its control data names the Debian packages it needs (and apt
# can satisfy them here: `apt-get install --simulate`), it holds the
# programs, the sample game, the units and the SDK under /usr, lintian finds
# no error in it (when lintian is installed), and the SDK test (sdk.sh) passes
# against the package's files unpacked into an empty root.
# usage: deb.sh BUILD_DIR SOURCE_DIR GOLDEN
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$(cd "$1" && pwd) src=$2 golden=$3
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d /tmp/cradle-deb-XXXXXX)
trap 'rm -rf "$work"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.txt" 2>&1 ||
  { cat "$work/cpack.txt"; fail "cpack"; }
deb=$(ls "$work"/out/cradle_*_*.deb)
echo "built $(basename "$deb")"
info=$(dpkg-deb -I "$deb")
depends=$(echo "$info" | sed -n 's/^ Depends: //p')
echo "Depends: $depends"
for need in libenet7 libsodium23 libjansson4 libc6; do
  [[ $depends == *"$need"* ]] || fail "Depends lacks $need: $depends"
done
if [ -x "$build/client/cradle-client" ]; then
  [[ $depends == *libsdl2-2.0-0* ]] || fail "Depends lacks libsdl2-2.0-0: $depends"
fi
files=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for f in usr/bin/cradle-server usr/bin/cradlectl usr/bin/cradle-replay usr/bin/cradle-record \
         usr/lib/cradle/games/vanguard.so usr/lib/cradle/games/vanguard/shot.wav \
         usr/lib/systemd/system/cradle-server.service usr/lib/systemd/system/cradle-server@.service \
         usr/include/cradle/game_abi.h usr/lib/libcradle_core.a usr/lib/pkgconfig/cradle.pc \
         usr/lib/cmake/Cradle/CradleConfig.cmake usr/share/doc/cradle/copyright usr/share/doc/cradle/changelog.gz; do
  <<<"$files" grep -qx "./$f" || fail "the package lacks /$f"
done
if command -v apt-get >/dev/null; then
  apt-get install --simulate "$deb" >"$work/apt.txt" 2>&1 || { cat "$work/apt.txt"; fail "apt cannot install the package here"; }
  echo "apt-get install --simulate: its dependencies resolve"
fi
if command -v lintian >/dev/null; then
  rc=0
  lintian --fail-on error "$deb" >"$work/lintian.txt" 2>&1 || rc=$?
  grep -v 'running with root privileges' "$work/lintian.txt" || true
  [ "$rc" -eq 0 ] || fail "lintian reports errors (above)"
  echo "lintian: no errors"
else
  echo "note: lintian is not installed: the package was checked with dpkg-deb and apt only"
fi
dpkg-deb -x "$deb" "$work/root"
bash "$here/sdk.sh" --prefix "$work/root/usr" "$src" "$golden"
