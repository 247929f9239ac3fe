#!/usr/bin/env bash
# `cmake --install` into a DESTDIR: the programs, the sample game, the
# systemd units (with their paths rewritten to the prefix), the example config
# and the Fleet manifest land where deploy/README.md says; the installed
# server runs the installed game.
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/opt/cradle-test
DESTDIR=$dest cmake --install "$build" --prefix "$prefix" >"$dest/install.txt"
root=$dest$prefix
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
libdir=${libdir:-lib}
for program in cradle-server cradlectl cradle-replay cradle-record cradle-proxy cradle-keys; do
  [ -x "$root/bin/$program" ] || { echo "missing program bin/$program"; cat "$dest/install.txt"; exit 1; }
done
[ -f "$root/$libdir/cradle/games/vanguard.so" ] || { echo "missing $libdir/cradle/games/vanguard.so"; exit 1; }
for sound in shot explosion hit pickup wave near_miss game_over; do
  [ -f "$root/$libdir/cradle/games/vanguard/$sound.wav" ] || { echo "missing the sound $libdir/cradle/games/vanguard/$sound.wav"; exit 1; }
done
for unit in "$root/lib/systemd/system/cradle-server.service" "$root/lib/systemd/system/cradle-server@.service"; do
  [ -f "$unit" ] || { echo "missing lib/systemd/system/$(basename "$unit")"; exit 1; }
  grep -q "^ExecStart=$prefix/bin/cradle-server " "$unit" # the binary itself, no shell
  grep -q "^ExecStartPre=.* $prefix/$libdir/cradle/games/vanguard.so " "$unit"
  if grep -v "^#" "$unit" | grep -q /usr/local; then echo "$(basename "$unit") still names /usr/local"; exit 1; fi
  grep -q "^DynamicUser=yes" "$unit"
  grep -q "^StateDirectory=" "$unit"
  grep -q "^RuntimeDirectory=cradle" "$unit"
done
[ -f "$root/share/cradle/server.json" ]
[ -f "$root/share/cradle/fleet.yaml" ]
[ -f "$root/share/doc/cradle/deploy.md" ]
# The example config parses: the installed server accepts it (the game path
# is overridden to the installed sample game) and --help works.
"$root/bin/cradle-server" --version | grep -q cradle-server
work=$dest/run
mkdir -p "$work/games"
cp "$root/$libdir/cradle/games/vanguard.so" "$work/games/"
# The config is the secure default: a key (created here on the first run) and
# a file of trusted issuers, which the installed cradle-keys makes.
"$root/bin/cradle-keys" gen --out "$work/issuer.key" >/dev/null
"$root/bin/cradle-keys" pub "$work/issuer.key" --sign >"$work/trusted-issuers.txt"
out=$(timeout 20 "$root/bin/cradle-server" --config "$root/share/cradle/server.json" \
  --game "$work/games/vanguard.so" --bind 127.0.0.1 --port $((20000 + RANDOM % 12000)) \
  --key "$work/server.key" --trust-file "$work/trusted-issuers.txt" \
  --mode commanded --dev-stdin 2>&1 <<<'{"cmd":"status"}' || true)
[ "$(stat -c %a "$work/server.key")" = 600 ] || { echo "server key not created 0600"; exit 1; }
<<<"$out" grep -q '"event":"serving"' || { echo "installed server did not serve:"; echo "$out"; exit 1; }
<<<"$out" grep -q '"game":"vanguard"' || { echo "$out"; exit 1; }
echo "install ok"
