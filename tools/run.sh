#!/usr/bin/env bash
# run.sh: sets up, builds and runs the main job: a cradle-server session of
# the sample game (vanguard) on this machine, with local bot clients and, when
# a display exists, a cradle-client window for you. Without a display it runs
# headless for a while, printing the server's status, then stops the session
# and replays its log to show the replay matches.
#
#   bash tools/run.sh [--bots N] [--seconds S] [--port P] [--headless] [--broadcast]
#
# --bots N     bot players besides you (default 3)
# --seconds S  headless only: how long the session runs (default 30)
# --port P     UDP port of the server (default 7777)
# --headless   do not open a window even when a display exists
# --broadcast  also broadcast the session through an nginx origin and edge
#              on loopback, and print the link that watches it in a browser
set -euo pipefail
cd "$(dirname "$0")/.."
bots=3 seconds=30 port=7777 headless=0 broadcast=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bots) bots=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --headless) headless=1; shift ;;
    --broadcast) broadcast=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$bots$seconds$port" in *[!0-9]*) echo "run.sh: --bots, --seconds and --port take whole numbers" >&2; exit 2 ;; esac

bash tools/setup.sh
echo "run.sh: building (Release) ..." >&2
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" >build/release-build.log 2>&1 ||
  { tail -40 build/release-build.log; exit 1; }

bin=build/release
game=$PWD/$bin/shared/games/vanguard/vanguard.so
work=$PWD/build/run
mkdir -p "$work"
log=$work/session-$(date +%Y%m%d-%H%M%S).log
sock=$work/dev.sock
players=$((bots + 1))

# The secure default, as in production: a server key (its public half, the
# "server id", is what clients pin) and a token issuer the server trusts. The
# bots and your window mint a fresh join token per connection from the issuer
# key (--issuer-key: a development convenience; real players get tokens from a
# backend, see the README's Security section).
keys=$bin/tools/cradle-keys
[ -f "$work/issuer.key" ] || "$keys" gen --out "$work/issuer.key" >/dev/null
[ -f "$work/server.key" ] || "$keys" gen --out "$work/server.key" >/dev/null
server_id=$("$keys" pub "$work/server.key" --kx)
issuer_pub=$("$keys" pub "$work/issuer.key" --sign)
secure_client=(--server-key "$server_id" --issuer-key "$work/issuer.key")

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$broadcast" -eq 1 ]; then
    stop_nginx "$work/edge" 2>/dev/null || true
    stop_nginx "$work/origin" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# --broadcast: an origin that takes the server's uploads and an edge cache
# that serves viewers, both nginx on loopback (deploy/broadcast/*.conf, as
# the tests start them); the edge also serves the browser's viewer.
broadcasting=()
if [ "$broadcast" -eq 1 ]; then
  source tests/integration/broadcast_nginx.sh
  start_origin "$work/origin"
  start_edge "$work/edge" "$ORIGIN_URL"
  rm -rf "$ORIGIN_ROOT/live/run"
  broadcasting=(--broadcast "$ORIGIN_URL/live/run" --broadcast-auth "$ORIGIN_SECRET_FILE")
fi

"$bin/server/cradle-server" --game "$game" --bind 127.0.0.1 --port "$port" --players "$players" \
  --dev-socket "$sock" --log "$log" --key "$work/server.key" --trust "$issuer_pub" \
  --connect-rate 50 --connect-burst 50 "${broadcasting[@]}" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
pids+=("$server_pid")
for _ in $(seq 1 100); do
  grep -q '"event":"serving"' "$work/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.05
done
echo "run.sh: cradle-server hosts vanguard on 127.0.0.1:$port, server id $server_id"
echo "run.sh: session log $log, dev socket $sock"
if [ "$broadcast" -eq 1 ]; then
  echo "run.sh: broadcasting through the edge $EDGE_URL; watch it in a browser:"
  echo "  $EDGE_URL/viewer.html#b=/live/run/&key=$("$keys" pub "$work/server.key" --sign)"
fi
if [ "$bots" -gt 0 ]; then
  "$bin/client/cradle-client" --headless --game "$game" --port "$port" --bots "$bots" --seed 7 "${secure_client[@]}" \
    >"$work/bots.out" 2>"$work/bots.err" &
  pids+=("$!")
  echo "run.sh: $bots bot players joined"
fi

ctl() { "$bin/tools/cradlectl" --socket "$sock" "$@"; }
if [ "$headless" -eq 0 ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  echo "run.sh: opening the window: arrows/WASD move, Space fires, R restarts after game over; close it to stop"
  "$bin/client/cradle-client" --game "$game" --port "$port" "${secure_client[@]}" || true
else
  echo "run.sh: no display: running headless for $seconds s (status every 5 s)"
  "$bin/client/cradle-client" --headless --bot --seed 99 --game "$game" --port "$port" "${secure_client[@]}" \
    >"$work/player.out" 2>"$work/player.err" &
  pids+=("$!")
  for _ in $(seq 1 $(( (seconds + 4) / 5 ))); do
    sleep 5
    ctl --readable status || true
  done
fi
ctl quit >/dev/null 2>&1 || kill -TERM "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
echo "run.sh: session over; replaying its log and checking the server's signature:"
"$bin/tools/cradle-replay" --verify-key "$("$keys" pub "$work/server.key" --sign)" "$log"
