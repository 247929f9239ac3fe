#!/usr/bin/env bash
# sim_run.sh NATIVE WASM NODE SEED PLAYERS STEPS: the same session of bots
# through a game built natively and for WebAssembly (sim_run.c) writes the
# same bytes: every step's output and the final state's digest. The wasm
# build runs in node (sim_run.mjs, WASI).
set -euo pipefail
native=$1 wasm=$2 node=$3 seed=$4 players=$5 steps=$6
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$native" "$seed" "$players" "$steps" native.out
# WASI before node 20 is behind this flag; node 20 takes it too.
"$node" --no-warnings --experimental-wasi-unstable-preview1 "$here/sim_run.mjs" "$wasm" "$seed" "$players" "$steps" wasm.out
grep -a -o 'state [0-9a-f]* after [0-9]* steps' native.out | tail -1 # after the steps' output bytes
[ "$(wc -c <native.out)" -gt 100 ] || { echo "the native run wrote $(wc -c <native.out) bytes"; exit 1; }
cmp native.out wasm.out || { echo "the wasm build differs from the native one"; tail -1 wasm.out; exit 1; }
echo "native and wasm agree: $(wc -c <native.out) bytes over $steps steps"
