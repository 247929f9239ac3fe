#!/usr/bin/env bash
# bench_viewer.sh [BUILD_DIR]: the browser viewer's figures, each beside the
# native one in the same run (Release; prints, asserts nothing):
#   1. frame time at 2,000 entities, 1280x720 (goal <= 4 ms): client/web/
#      viewer.c's cv_frame drawing of vanguard_scene.h's picture, natively
#      (bench_viewer_frame, the reference), then as bench_viewer_frame.wasm
#      in headless Chromium, the call and putImageData timed on each
#      requestAnimationFrame (bench_viewer_frame.mjs, .html); the last
#      frames' pixel hashes say whether both drew the same picture.
#   2. link to first frame on loopback (goal <= 2 s) and what a viewer
#      downloads to start and per second after: an nginx origin and edge
#      (tests/integration/broadcast_nginx.sh), a secure cradle-server
#      broadcasting vanguard with two bots at its default fragment (2 s) and
#      keyframe (10 s) periods, the twin beside the game's library as the
#      server uploads it. Once the twin is on the origin and 8 fragments are
#      out, BENCH_VIEWER_RUNS (5) times each, taking turns: a fresh Chromium
#      (empty profile and cache) on the edge's viewer.html#b=/live/match/&delay=3,
#      and the native viewer cradle-client --headless --watch --delay 3
#      (bench_viewer.mjs): the time to the first step shown and to playing
#      without buffering, the bytes by kind from the edge's access log until
#      the first step, and per second over BENCH_VIEWER_AFTER_S (10) more.
# Needs nginx, /usr/bin/chromium and node (tools/setup.sh installs them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
runs=${BENCH_VIEWER_RUNS:-5}
after=${BENCH_VIEWER_AFTER_S:-10}
server=$build/server/cradle-server # the name start_server runs
client=$build/client/cradle-client
ctl=$build/tools/cradlectl
game=$build/shared/games/vanguard/vanguard.so
frame=$build/tools/bench/bench_viewer_frame
for f in "$server" "$client" "$ctl" "$game" "${game%.so}.wasm" "$frame" "$frame.wasm"; do
  [ -f "$f" ] || { echo "bench_viewer: $f is not built (tools/bench.sh builds it; the .wasm files need tools/setup.sh's toolchain)" >&2; exit 1; }
done
node=$(command -v node || command -v nodejs || true)
[ -n "$node" ] || { echo "bench_viewer: no node: run tools/setup.sh" >&2; exit 1; }
[ -x /usr/bin/chromium ] || { echo "bench_viewer: no /usr/bin/chromium: run tools/setup.sh" >&2; exit 1; }
source "$root/tests/integration/broadcast_nginx.sh" # and server_common.sh
broadcast_need_nginx

echo "frame time at 2,000 entities:"
native=$("$frame")
echo "$native"
browser=$("$node" "$root/tools/bench/bench_viewer_frame.mjs" "$frame.wasm")
echo "$browser"
hash_of() { sed -n "s/.*last frame's pixels: fnv1a \([0-9a-f]*\).*/\1/p" <<<"$1"; }
if [ "$(hash_of "$native")" = "$(hash_of "$browser")" ]; then
  echo "  the same pixels natively and in the browser (fnv1a $(hash_of "$native"))"
else
  echo "  DIFFERENT pixels natively ($(hash_of "$native")) and in the browser ($(hash_of "$browser"))"
fi

work=$(mktemp -d /tmp/cradle-bench-viewer-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_server_on_exit
  stop_nginx "$work/edge" 2>/dev/null || true
  stop_nginx "$work/origin" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
status_field() { json_field "$("$ctl" --socket dev.sock --json status)" "$1"; }
at_least() { [ "$(status_field "$1")" -ge "$2" ]; }
equals() { [ "$(status_field "$1")" = "$2" ]; }

# The game the server runs with its twin, sounds and data files beside it.
mkdir -p game
cp "$game" "${game%.so}.wasm" game/
cp -r "$(dirname "$game")/vanguard" game/
start_origin "$work/origin"
start_edge "$work/edge" "$ORIGIN_URL"
start_server --game "$work/game/vanguard.so" --players 2 --dev-socket dev.sock --log session.log \
  --broadcast "$ORIGIN_URL/live/match" --broadcast-auth "$ORIGIN_SECRET_FILE"
for seed in 3 4; do
  "$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$work/game/vanguard.so" --bot --seed $seed \
    >bot$seed.out 2>bot$seed.err &
  pids+=($!)
done
wait_until 30 "two players" at_least joins 2
wait_until 30 "the twin on the origin" equals broadcast_web ok
wait_until 60 "eight fragments" at_least broadcast_fragments 8
echo "a live broadcast of vanguard, two bots, fragments every 2 s and keyframes every 10 s (the server's defaults)," \
  "origin and edge nginx on loopback; each viewer alone on the edge:"
"$node" "$root/tools/bench/bench_viewer.mjs" "$EDGE_URL" /live/match/ "$EDGE_DIR/access.log" "$client" \
  "$work/game/vanguard.so" "$runs" "$after"
"$ctl" --socket dev.sock quit >/dev/null
wait "$SERVER_PID" || true
