#!/usr/bin/env bash
# wasm_sources.sh [DIR]: unpacks Debian's sources of libsodium and zstd into
# DIR (default /usr/local/src/cradle-wasm), where the build compiles them for
# wasm32-wasi (client/web/CMakeLists.txt): the viewer checks a broadcast
# with the same BLAKE2b, Ed25519 and zstd as the native build. Debian ships
# these libraries for the host only; their sources are the ones the host's
# packages were built from. Does nothing when DIR already holds both.
set -euo pipefail
dir=${1:-/usr/local/src/cradle-wasm}
have() { compgen -G "$dir/$1-*/$2" >/dev/null; }
if have libsodium src/libsodium/include/sodium.h && have libzstd lib/zstd.h; then
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
# apt-get source needs a deb-src entry and dpkg-source (dpkg-dev).
list=/etc/apt/sources.list.d/cradle-deb-src.sources
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
    "${sudo_cmd[@]}" tee "$list" >/dev/null
fi
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
dpkg-query -W -f='${Status}' dpkg-dev 2>/dev/null | grep -q "install ok installed" ||
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dpkg-dev
"${sudo_cmd[@]}" mkdir -p "$dir"
cd "$dir"
"${sudo_cmd[@]}" apt-get source -q libsodium libzstd
have libsodium src/libsodium/include/sodium.h && have libzstd lib/zstd.h ||
  { echo "wasm_sources: libsodium's or zstd's sources are not in $dir" >&2; exit 1; }
