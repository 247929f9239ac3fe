#!/usr/bin/env bash
# cradle-client's failures: clear message, exit 1, no hang.
#  - nothing listens on the port: exit 1 within the connect timeout;
#  - the server runs another build of the game: refused, both build ids shown;
#  - the server dies mid-game: "connection lost", exit 1;
#  - the server stops normally (SIGTERM) while bots play to the end: exit 0,
#    the reason said; a kicked client exits 1;
#  - a client that gives up (silence timeout) frees its slot at once;
#  - a client connecting again with its token's client id takes its slot back;
#  - usage errors exit 2; --help and --version exit 0.
set -euo pipefail
server=$1 client=$2 game=$3 other_build=$4 ctl=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
secure_setup

"$client" --help | grep -- "--headless" >/dev/null # all of it: grep -q would close the pipe early (SIGPIPE)
"$client" --version | grep -q "cradle-client"
rc=0; "$client" --headless --game "$game" --port 0 2>usage.err || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--port" usage.err
rc=0; "$client" --headless 2>usage.err || rc=$?
[ "$rc" -eq 2 ]

# Unreachable: a free port nobody listens on.
port=$((20000 + RANDOM % 12000))
start=$(date +%s)
rc=0; "$client" --headless --game "$game" --port "$port" "${CLIENT_SECURITY[@]}" --connect-timeout 1500 2>unreach.err || rc=$?
elapsed=$(( $(date +%s) - start ))
cat unreach.err
[ "$rc" -eq 1 ] && grep -q "no server answers" unreach.err
[ "$elapsed" -le 6 ] || { echo "took ${elapsed}s"; exit 1; }

# Build mismatch: the server hosts $game, the client loads another build of it.
start_server --game "$game" --players 2
rc=0; "$client" --headless --game "$other_build" --port "$PORT" "${CLIENT_SECURITY[@]}" 2>build.err || rc=$?
cat build.err
[ "$rc" -eq 1 ]
grep -q "refused the connection (build)" build.err
server_build=$(sed -n "s/.*server runs build '\([^']*\)'.*/\1/p" build.err)
client_build=$(sed -n "s/.*client has '\([^']*\)'.*/\1/p" build.err)
[ -n "$server_build" ] && [ -n "$client_build" ] && [ "$server_build" != "$client_build" ]

# Lost mid-game: the server is killed while a client plays.
"$client" --headless --game "$game" --port "$PORT" "${CLIENT_SECURITY[@]}" --bot --silence-timeout 1500 >lost.out 2>lost.err & c=$!
deadline=$((SECONDS + 20)) # the client plays, then the server dies
until grep -q '"event":"playing"' lost.out 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || { echo "the client never played"; cat lost.out lost.err; exit 1; }
  sleep 0.05
done
kill -KILL "$SERVER_PID"
rc=0; wait "$c" || rc=$?
cat lost.err
[ "$rc" -eq 1 ]
grep -E -q "connection lost|connection to the server lost" lost.err
# Gives up: the server goes silent (stopped, so not even ENet or PONGs answer)
# and the client's silence timeout ends it. A paused server would not do:
# its network thread keeps answering, and a client rightly waits for it.
# Its slot is free as soon as the server runs again, not after its 60 s peer
# timeout: the client's ENet disconnect waits in the server's socket.
start_server --game "$game" --players 2 --timeout 60000
"$client" --headless --game "$game" --port "$PORT" "${CLIENT_SECURITY[@]}" --bot --slot 1 --silence-timeout 1000 \
  >quiet.out 2>quiet.err & c=$!
for i in $(seq 1 400); do grep -q "joined as the player in slot 1" server.err && break; sleep 0.05; done
grep -q "joined as the player in slot 1" server.err || { echo "the client never joined: $(cat server.err quiet.err)"; exit 1; }
kill -STOP "$SERVER_PID"
rc=0; wait "$c" || rc=$?
kill -CONT "$SERVER_PID"
cat quiet.err
[ "$rc" -eq 1 ] && grep -q "sent nothing" quiet.err
for i in $(seq 1 200); do grep -q "slot 1 left" server.err && break; sleep 0.05; done
grep -q "slot 1 left" server.err || { echo "the slot was not freed: $(cat server.err)"; exit 1; }
# Takes its slot back: a player whose connection died unnoticed (stopped here,
# so the server still holds its slot) connects again with the same client id
# in its token and gets the slot at once; another client id is refused.
"$client" --headless --game "$game" --port "$PORT" "${CLIENT_SECURITY[@]}" --bot --slot 0 --client-id 7 \
  >ghost.out 2>ghost.err & ghost=$!
for i in $(seq 1 400); do grep -q "joined as the player in slot 0" server.err && break; sleep 0.05; done
grep -q "joined as the player in slot 0" server.err || { echo "the first connection never joined: $(cat server.err)"; exit 1; }
kill -STOP "$ghost"
rc=0; "$client" --headless --game "$game" --port "$PORT" "${CLIENT_SECURITY[@]}" --bot --slot 0 --client-id 8 \
  >other.out 2>other.err || rc=$?
cat other.err
[ "$rc" -eq 1 ] && grep -q "slot 0 is taken" other.err
"$client" --headless --game "$game" --port "$PORT" "${CLIENT_SECURITY[@]}" --bot --slot 0 --client-id 7 \
  >back.out 2>back.err & back=$!
for i in $(seq 1 400); do grep -q '"event":"playing","slot":0' back.out && break; sleep 0.05; done
grep -q '"event":"playing","slot":0' back.out || { echo "the same client was not let back: $(cat back.err server.err)"; exit 1; }
grep -q "client 7 connected again" server.err
kill -KILL "$ghost" "$back"
wait "$ghost" "$back" 2>/dev/null || true
kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true

# The end of a session: bots with no --steps play until the server stops.
# A server stopping normally is the session's end, not a failure: exit 0.
# A kicked client is removed against its will: exit 1.
start_server --game "$game" --players 3 --dev-socket dev.sock
"$client" --headless --game "$game" --port "$PORT" "${CLIENT_SECURITY[@]}" --bots 2 >bots.out 2>bots.err & bots=$!
"$client" --headless --game "$game" --port "$PORT" "${CLIENT_SECURITY[@]}" --bot --slot 2 >kicked.out 2>kicked.err &
kicked=$!
joined() { [ "$(json_field "$("$ctl" --socket dev.sock --json status)" joins)" -ge 3 ]; }
wait_until 30 "three players to join" joined
wait_until 30 "the kicked client to play" grep -q '"event":"playing"' kicked.out
"$ctl" --socket dev.sock kick slot=2 >/dev/null
rc=0; wait "$kicked" || rc=$?
[ "$rc" -eq 1 ] || { echo "a kicked client exited $rc"; cat kicked.err; exit 1; }
grep -q "the server closed the session (kicked)" kicked.err || { cat kicked.err; exit 1; }
kill -TERM "$SERVER_PID"
rc=0; wait "$bots" || rc=$?
[ "$rc" -eq 0 ] || { echo "bots at a normal end exited $rc"; cat bots.out bots.err; exit 1; }
grep -q "the server closed the session (shutdown)" bots.err || { cat bots.err; exit 1; }
grep -q '"event":"bots_done","bots":2,.*"desyncs":0,"status":0' bots.out || { cat bots.out; exit 1; }
wait "$SERVER_PID"
echo "client errors ok"
