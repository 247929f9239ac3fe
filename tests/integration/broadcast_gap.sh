#!/usr/bin/env bash
# A gap in a broadcast, end to end with real nginx: a secure server with a
# queue of 2 fragments broadcasts a session with a bot player; the origin
# dies for longer than the queue holds, so the oldest fragments are lost.
# The session runs on (no step dropped); status and the sync document name
# the gap; a viewer that was watching through the edge (pinning the server's
# key) plays up to the gap, starts again at the first keyframe after it and
# checks every hash to the broadcast's end; cradle-replay URL refuses the
# broadcast, whose fragments no longer make one log.
#   broadcast_gap.sh SERVER CLIENT COUNTER_SO CRADLECTL REPLAY
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4 replay=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/broadcast_nginx.sh"
broadcast_need_nginx
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_server_on_exit
  stop_nginx "$work/edge" 2>/dev/null || true
  stop_nginx "$work/origin" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "broadcast_gap: FAIL: $*" >&2; [ -f server.err ] && tail -n 5 server.err >&2; exit 1; }
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }
status_field() { json_field "$(ctl status)" "$1"; }
at_least() { [ "$(status_field "$1")" -ge "$2" ]; }
equals() { [ "$(status_field "$1")" = "$2" ]; }

start_origin "$work/origin"
start_edge "$work/edge" "$ORIGIN_URL"
sync_file=$ORIGIN_ROOT/live/gap/sync
start_server --game "$game" --players 1 --dev-socket dev.sock --log session.log \
  --broadcast "$ORIGIN_URL/live/gap" --broadcast-auth "$ORIGIN_SECRET_FILE" \
  --broadcast-fragment-ms 1000 --broadcast-keyframe-s 2 --broadcast-queue 2
signer=$("$KEYS_BIN" pub server.key --sign) # start_server made it, secure by default
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --bot --seed 5 >bot.out 2>bot.err &
pids+=($!)
wait_until 30 "a player to join" at_least joins 1
wait_until 30 "three fragments on the origin" at_least broadcast_fragments 3
"$client" --headless --watch "$EDGE_URL/live/gap" --game "$game" --delay 3 --verify-key "$signer" \
  >viewer.out 2>viewer.err &
viewer=$!
pids+=("$viewer")

# The origin dies for longer than 2 queued fragments last: the oldest are lost.
# The session drops no step for it (a start-up on a busy machine may have
# dropped some already: the outage must add none).
drops_before=$(status_field dropped_steps)
# A game thread that waited on the dead origin would lose seconds of steps;
# a machine starved of CPU (ThreadSanitizer beside a second suite) loses a
# few whatever the origin does (3 seen): up to half a second is allowed.
OUTAGE_DROPS_ALLOWED=30
kill_origin
wait_until 60 "2 fragments lost while the origin is down" at_least broadcast_lost 2
no_steps_dropped_since "$drops_before" "$(ctl status)" "$OUTAGE_DROPS_ALLOWED"
ctl status | grep '"broadcast_gaps":\[\[[0-9]*,[0-9]*\]' >/dev/null || fail "status names no gap: $(ctl status)"
restart_origin
wait_until 60 "the queue to drain after the origin came back" equals broadcast_queued 0
after=$(status_field broadcast_fragments)
# a keyframe after the gap (every 2 s), and fragments after it to play
wait_until 30 "five more fragments" at_least broadcast_fragments $((after + 5))
no_steps_dropped_since "$drops_before" "$(ctl status)" "$OUTAGE_DROPS_ALLOWED"
grep -q '"gaps":\[{"first":[0-9]*,"last":[0-9]*}' "$sync_file" || fail "sync names no gap: $(cat "$sync_file")"
ctl quit >/dev/null
wait "$SERVER_PID"
grep -q '"ended":true' "$sync_file" || fail "the broadcast did not end: $(cat "$sync_file")"

rc=0
wait "$viewer" || rc=$?
line=$(grep '"event":"watched"' viewer.out) || fail "no summary: $(cat viewer.out viewer.err)"
[ "$rc" -eq 0 ] || fail "the viewer exited $rc: $line"
[ "$(json_field "$line" verdict)" = ok ] || fail "$line"
[ "$(json_field "$line" ended)" = true ] || fail "$line"
[ "$(json_field "$line" hash_mismatches)" -eq 0 ] || fail "$line"
[ "$(json_field "$line" segments)" -ge 2 ] || fail "the viewer did not start again after the gap: $line"
[ "$(json_field "$line" hashes_checked)" -ge 5 ] || fail "$line"

# Fragments with a gap are no single log: cradle-replay URL says so.
rc=0
"$replay" --game "$game" --verify-key "$signer" "$EDGE_URL/live/gap" >replay.out 2>replay.err || rc=$?
[ "$rc" -eq 1 ] || fail "cradle-replay of a broadcast with a gap exited $rc: $(cat replay.err)"
grep -q 'the broadcast has a gap' replay.err || fail "$(cat replay.err)"
echo "broadcast_gap: ok ($line)"
