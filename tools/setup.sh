#!/usr/bin/env bash
# setup.sh: installs what building and testing Cradle needs on Debian 12.
# Installs only what is missing; runs apt-get update first when it installs.
# Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev valgrind
  libenet-dev libsodium-dev libcmocka-dev libsdl2-dev libjansson-dev
  xvfb xauth python3
  libcurl4-openssl-dev libzstd-dev python3
  # The deploy tests: PyYAML reads deploy/fleet.yaml (integration.fleet_manifest);
  # systemd-analyze verifies and rates the units (integration.template_unit).
  python3-yaml systemd
  # The image (integration.image): podman builds and runs deploy/Containerfile
  # with runc (crun, podman's default, fails on rlimits and cgroups on the CI's
  # machines), from a base image debootstrap makes (no registry is reachable).
  podman runc debootstrap
  # Broadcast over HTTP caches (integration.broadcast_nginx): nginx-light has
  # WebDAV PUT for the origin and proxy_cache for the edge; the test's
  # viewers and writer are the curl command.
  nginx-light curl
  # The same broadcast through another cache (integration.broadcast_varnish).
  varnish
  # The core and the games for WebAssembly (client/web, tests/wasm): clang
  # 14's wasm32 target with its runtime, wasi-libc, lld and llvm's archiver;
  # node runs the modules. libsodium's and zstd's sources come from Debian's
  # source packages (tools/wasm_sources.sh, run below).
  wasi-libc libclang-rt-14-dev-wasm32 lld-14 llvm-14 nodejs
  # The browser viewer's test (integration.viewer_chromium): headless
  # Chromium, and a font for its text.
  chromium fonts-dejavu-core
)
# Extra packages a caller asks for (the benchmarks add redis-server).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
bash "$(dirname "$0")/wasm_sources.sh"
