#!/usr/bin/env bash
# bench_broadcast.sh [BUILD_DIR]: what broadcasting costs and what viewers get
# (issue 21). nginx origin and edge on loopback (tests/integration/
# broadcast_nginx.sh), a paced 8-player vanguard session with 8 bots in
# their own process, the server's process CPU time read from /proc/PID/stat
# over SECONDS (BENCH_BROADCAST_SECONDS, default 30):
#   1. the same session with the broadcast off, then on (alternating,
#      ROUNDS times, BENCH_BROADCAST_ROUNDS default 2): the server's CPU;
#      with it on, the bytes uploaded per second (keyframes included);
#   2. with it on, VIEWERS simulated viewers (BENCH_BROADCAST_VIEWERS,
#      default 1000: tools' cradle-viewers, libcurl multi) on the edge, and
#      one real headless viewer (cradle-client --watch): requests reaching
#      the origin per fragment, the edge's CPU per viewer, bytes per viewer
#      per second, and how much later than its delay the real viewer showed
#      each step. Twice: the edge is nginx (deploy/broadcast/edge.conf),
#      then Debian's Varnish with its built-in configuration.
# The server is secure, as in production: it signs every log block and
# keyframe, and every viewer pins its key (--verify-key), so the figures
# include signing and checking the signatures.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
seconds=${BENCH_BROADCAST_SECONDS:-30}
rounds=${BENCH_BROADCAST_ROUNDS:-2}
viewer_count=${BENCH_BROADCAST_VIEWERS:-1000}
server=$build/server/cradle-server
client=$build/client/cradle-client
viewers=$build/tools/cradle-viewers
ctl=$build/tools/cradlectl
game=$build/shared/games/vanguard/vanguard.so
for f in "$server" "$client" "$viewers" "$ctl" "$game"; do
  [ -f "$f" ] || { echo "bench_broadcast: $f is not built (tools/bench.sh builds it)" >&2; exit 1; }
done
source "$root/tests/integration/broadcast_nginx.sh"
source "$root/tools/session_keys.sh"
broadcast_need_nginx
work=$(mktemp -d /tmp/cradle-bench-broadcast-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_varnish 2>/dev/null || true
  stop_nginx "$work/edge" 2>/dev/null || true
  stop_nginx "$work/origin" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
session_keys "$build/tools/cradle-keys" "$work" # ISSUER_PUB, SERVER_ID
signer=$("$build/tools/cradle-keys" pub "$work/server.key" --sign)
ticks=$(getconf CLK_TCK)
# cpu_s PID...: user + system seconds of the processes
cpu_s() { for p in "$@"; do cut -d' ' -f14,15 /proc/"$p"/stat; done | awk -v t="$ticks" '{ s += $1 + $2 } END { printf "%.3f", s / t }'; }
field() { sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\)\"\{0,1\}.*/\1/p" <<<"$1"; }
status() { "$ctl" --socket "$work/dev.sock" --json status; }
start_origin "$work/origin"
start_edge "$work/edge" "$ORIGIN_URL"
start_varnish "$work/varnish" "$ORIGIN_URL"
# the processes that serve viewers: nginx's workers, Varnish's cache child
nginx_workers() { pgrep -P "$EDGE_PID" | tr '\n' ' '; }
varnish_workers() { pgrep -P "$VARNISH_PID" | tr '\n' ' '; }

# run_session NAME BROADCAST(0|1): the session for SECONDS; sets SERVER_CPU and, on, UPLOAD_BPS.
run=0
run_session() {
  run=$((run + 1))
  local port=$((20000 + RANDOM % 12000)) extra=()
  rm -f "$work/dev.sock"
  [ "$2" = 1 ] && extra=(--broadcast "$ORIGIN_URL/live/run$run" --broadcast-auth "$ORIGIN_SECRET_FILE")
  "$server" --game "$game" --key "$work/server.key" --trust "$ISSUER_PUB" --connect-rate 1000 --connect-burst 1000 \
    --bind 127.0.0.1 --port "$port" --players 8 --dev-socket "$work/dev.sock" \
    --log "$work/run$run.log" "${extra[@]}" >"$work/server$run.out" 2>"$work/server$run.err" &
  local spid=$!
  pids+=("$spid")
  for _ in $(seq 200); do grep -q '"event":"serving"' "$work/server$run.out" 2>/dev/null && break; sleep 0.05; done
  "$client" --headless --server-key "$SERVER_ID" --issuer-key "$work/issuer.key" --port "$port" --game "$game" \
    --bots 8 --bot >"$work/bots$run.out" 2>&1 &
  local bots=$!
  pids+=("$bots")
  for _ in $(seq 200); do [ "$(field "$(status)" joins)" -ge 8 ] 2>/dev/null && break; sleep 0.05; done
  sleep 3 # past the joins and the first keyframe
  local c0 b0 t0 c1 b1 t1
  c0=$(cpu_s "$spid"); b0=$(field "$(status)" broadcast_bytes); t0=$(date +%s.%N)
  if [ "$2" = 1 ] && [ -n "${3:-}" ]; then audience "$run" "$3"; else sleep "$seconds"; fi
  c1=$(cpu_s "$spid"); b1=$(field "$(status)" broadcast_bytes); t1=$(date +%s.%N)
  SERVER_CPU=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.2f", (b - a) / (t1 - t0) * 100 }')
  UPLOAD_BPS=0
  [ "$2" = 1 ] && UPLOAD_BPS=$(awk -v a="$b0" -v b="$b1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", (b - a) / (t1 - t0) }')
  "$ctl" --socket "$work/dev.sock" quit >/dev/null
  wait "$spid" || true
  kill "$bots" 2>/dev/null || true
  wait "$bots" 2>/dev/null || true
}

# audience RUN EDGE: the simulated viewers and one real viewer on the edge
# (nginx or varnish) for SECONDS.
audience() {
  local edge_url=$EDGE_URL
  [ "$2" = varnish ] && edge_url=$VARNISH_URL
  local url="$edge_url/live/run$1" e0 e1 f0 f1 o0 o1 w
  "$client" --headless --watch "$url" --game "$game" --delay 6 --verify-key "$signer" --steps 1000000000 \
    >"$work/watch.out" 2>"$work/watch.err" &
  w=$!
  pids+=("$w")
  e0=$(cpu_s $("$2"_workers)); o0=$(origin_requests '/live/run'"$1"'/frag/[0-9]+' GET)
  f0=$(field "$(status)" broadcast_fragments)
  "$viewers" --url "$url" --viewers "$viewer_count" --seconds "$seconds" --verify-key "$signer" --json \
    >"$work/viewers.json" 2>"$work/viewers.err" || true
  e1=$(cpu_s $("$2"_workers)); o1=$(origin_requests '/live/run'"$1"'/frag/[0-9]+' GET)
  f1=$(field "$(status)" broadcast_fragments)
  kill -TERM "$w" 2>/dev/null || true # the viewer prints its summary
  wait "$w" 2>/dev/null || true
  local v
  v=$(cat "$work/viewers.json")
  echo "  $viewer_count simulated viewers on the $2 edge for $seconds s: $(field "$v" fragments_verified) fragments verified, refused $(field "$v" refused), http errors $(field "$v" http_errors)"
  awk -v o=$((o1 - o0)) -v f=$((f1 - f0)) 'BEGIN { printf "  origin requests per fragment: %.2f (%d fragment GETs reached the origin for %d fragments)\n", f ? o / f : 0, o, f }'
  awk -v a="$e0" -v b="$e1" -v n="$viewer_count" -v s="$seconds" 'BEGIN { printf "  edge CPU: %.1f%% of a core, %.2f us of CPU per viewer per second\n", (b - a) / s * 100, (b - a) / n / s * 1e6 }'
  echo "  bytes per viewer per second: $(field "$v" bytes_per_viewer_per_s); the load tool's own CPU: $(field "$v" cpu_s) s"
  local line
  line=$(grep '"event":"watched"' "$work/watch.out" || true)
  echo "  a real viewer (--delay 6): shown $(field "$line" steps) steps, later than its delay by p50 $(field "$line" over_delay_ms_p50) ms, p99 $(field "$line" over_delay_ms_p99) ms, max $(field "$line" over_delay_ms_max) ms; hashes checked $(field "$line" hashes_checked), mismatches $(field "$line" hash_mismatches)"
}

echo "a paced 8-player vanguard session (secure: blocks and keyframes signed; 8 bots in their own process), $seconds s a run:"
for r in $(seq "$rounds"); do
  run_session off 0
  off=$SERVER_CPU
  run_session on 1
  echo "  round $r: server CPU $off% of a core with the broadcast off, $SERVER_CPU% on; upload $UPLOAD_BPS B/s"
done
for edge in nginx varnish; do
  echo "with an audience, through $edge:"
  run_session on 1 "$edge"
  echo "  server CPU $SERVER_CPU% of a core meanwhile; upload $UPLOAD_BPS B/s"
done
