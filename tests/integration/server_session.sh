#!/usr/bin/env bash
# A paced loopback session of the counter game for 600 steps: three players,
# a spectator, a player who drops and rejoins its slot, and a late joiner who
# catches up from a state block. Every client checks every state hash the
# server sends (one per 30 steps) and all end on the same hash at step 599;
# SIGTERM then closes the log with a trailer and names its keyframe index,
# and cradle-replay replays it to the output bytes two of the clients
# computed, seeking through the index the server wrote.
set -euo pipefail
server=$1 client=$2 game=$3 replay=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"

start_server --game "$game" --players 4 --log session.log --dev-socket dev.sock --hash-interval 30 --index-interval 120
echo "server on port $PORT"
run_client() { # name args...
  local name=$1; shift
  "$client" --port "$PORT" --game "$game" --timeout-ms 40000 "$@" >"$name.out" 2>"$name.err"
}

run_client p0 --slot 0 --seed 10 --steps 600 --output p0.bin & p0=$!
run_client p1 --slot 1 --seed 11 --steps 600 & p1=$!
run_client p2 --slot 2 --seed 12 --steps 200 --drop-at 200 & p2=$!
run_client spec --spectator --steps 600 & spec=$!
wait $p2
grep -q '"event":"dropped","slot":2' p2.out
# Rejoin slot 2 (the server may need a moment to see the drop).
for try in $(seq 1 20); do
  if run_client p2b --slot 2 --seed 13 --steps 600 --expect-refusal none; then break; fi
  if grep -q '"reason":"full"' p2b.out; then sleep 0.1; continue; fi
  break
done &
rejoin=$!
# The late joiner comes last: once the rejoiner has joined slot 2 again (the
# server's second join line for slot 2), so it catches up from a state block
# of a session that has seen the drop and the rejoin.
rejoined() { [ "$(grep -c 'joined as the player in slot 2 at step' server.err)" -ge 2 ]; }
wait_until 30 "the rejoin of slot 2" rejoined
run_client late --slot 3 --seed 14 --steps 600 --output late.bin & late=$!
# A client that fails is named with what it printed, and the server's log.
wait_client() { # name pid
  local rc=0
  wait "$2" || rc=$?
  [ "$rc" -eq 0 ] && return 0
  echo "client $1 exited $rc:"; cat "$1.out" "$1.err"; echo "server:"; cat server.err
  return 1
}
wait_client p0 $p0; wait_client p1 $p1; wait_client spec $spec; wait_client late $late
wait $rejoin || true

hash=""
for name in p0 p1 spec p2b late; do
  line=$(grep '"event":"done"' "$name.out" || { echo "$name did not finish:"; cat "$name.out" "$name.err"; exit 1; })
  echo "$name: $line"
  [ "$(json_field "$line" steps)" -ge 600 ]
  [ "$(json_field "$line" last_hash_step)" = 599 ]
  [ "$(json_field "$line" hashes_checked)" -ge 1 ]
  h=$(json_field "$line" last_hash)
  [ -z "$hash" ] || [ "$h" = "$hash" ] || { echo "$name ends on hash $h, others on $hash"; exit 1; }
  hash=$h
done
# The late joiner and the rejoiner started from a state block.
[ "$(json_field "$(grep done late.out)" start_step)" -gt 0 ]
[ "$(json_field "$(grep done p2b.out)" start_step)" -ge 200 ]
[ "$(json_field "$(grep done late.out)" start_step)" -ge "$(json_field "$(grep done p2b.out)" start_step)" ]
grep -q "slot 2 left" server.err

kill -TERM "$SERVER_PID"
rc=0; wait "$SERVER_PID" || rc=$?
[ "$rc" -eq 0 ] || { echo "server exited $rc"; cat server.err; exit 1; }
grep -q "session log closed" server.err
# The server wrote the log's keyframe index as it recorded (a keyframe every
# 120 steps): the replays of a slice below seek through it.
grep -q "keyframe index written: [45] keyframes" server.err
[ -s session.log.index ]
out=$("$replay" --json session.log)
echo "$out"
<<<"$out" grep -q '"verdict":"ok"'
<<<"$out" grep -q '"log_end":"closed"'
<<<"$out" grep -q '"final_hash_equal":true'
# The log replays to the same output bytes the clients computed live.
for name in p0 late; do
  start=$(json_field "$(grep done $name.out)" start_step)
  "$replay" --json --output replay_$name.bin --from "$start" --to 599 session.log >replay_$name.json
  if [ "$start" -gt 120 ]; then # from the keyframe before start, not from step 0
    grep -q '"index":"loaded"' replay_$name.json || { cat replay_$name.json; exit 1; }
    [ "$(json_field "$(cat replay_$name.json)" start_step)" -gt 0 ]
  fi
  cmp replay_$name.bin $name.bin
  [ -s $name.bin ]
done
echo "server session ok"
