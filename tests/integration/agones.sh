#!/usr/bin/env bash
# cradle-server --agones against a stand-in for the Agones SDK sidecar
# (agones_standin.py): the sidecar is not ready when the server starts, so
# the first calls fail and are retried; then Ready arrives once, Health at
# least every 5 s, and SIGTERM (and, in a second run, the dev protocol's
# quit) brings a Shutdown. A bad AGONES_SDK_HTTP_PORT is refused. Beyond
# the lifecycle: the players and spectators labels follow a client that
# joins and leaves, the server follows the GameServer's state through the
# watch stream, and --exit-when-empty ends the session once it stays empty
# (after a player left, or after an allocation with nobody come). The
# stand-in checks every call against the API (methods, Content-Type, JSON
# bodies, label syntax): its .bad file stays empty.
set -euo pipefail
server=$1 game=$2 ctl=$3 client=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
STANDIN_PID=
trap 'stop_server_on_exit; [ -z "$STANDIN_PID" ] || kill "$STANDIN_PID" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"

standin() { # calls-file [port]
  rm -f port.txt
  python3 "$here/agones_standin.py" port.txt "$@" & STANDIN_PID=$!
  for _ in $(seq 1 100); do [ -s port.txt ] && return 0; sleep 0.05; done
  echo "stand-in did not start"; return 1
}

# A free port for the sidecar: let the stand-in pick one, then stop it.
standin probe.txt
AGONES_PORT=$(cat port.txt)
kill "$STANDIN_PID"; wait "$STANDIN_PID" 2>/dev/null || true; STANDIN_PID=
export AGONES_SDK_HTTP_PORT=$AGONES_PORT

# 1. SIGTERM ends the session. The sidecar is not ready yet: the stand-in
# answers 503 (its calls go to refused1.txt) until the server has made a
# call that failed; then it comes up, and the server's retries get through.
standin calls1.txt "$AGONES_PORT" refused1.txt
start_server --game "$game" --players 2 --log one.log --agones
# A refused Ready or Health, which the server counts as a failed call (the
# watch stream's first GET may come first, and counts as a watch error).
wait_until 30 "a refused Ready or Health call" grep -q -E ' /(ready|health) ' refused1.txt
kill -USR1 "$STANDIN_PID"
# count PATTERN FILE: the lines that match, 0 for a file not yet written.
count() { { grep -s -- "$1" "$2" || true; } | wc -l; }
deadline=$((SECONDS + 30)) # Health every 2 s: three of them, then stop
until [ "$(count ' /health ' calls1.txt)" -ge 3 ]; do
  [ $SECONDS -lt $deadline ] || { echo "fewer than 3 Health calls in 30 s"; cat calls1.txt; exit 1; }
  sleep 0.1
done
kill -TERM "$SERVER_PID"
rc=0; wait "$SERVER_PID" || rc=$?
[ "$rc" -eq 0 ] || { echo "server exited $rc"; cat server.err; exit 1; }
cat calls1.txt
[ "$(grep -c ' /ready ' calls1.txt)" -eq 1 ]
[ "$(grep -c ' /shutdown ' calls1.txt)" -eq 1 ]
[ "$(grep -c ' /health ' calls1.txt)" -ge 3 ]
grep -q ' /ready {}' calls1.txt
# Health never more than 5 s apart; Shutdown is the last call.
awk '$2 == "/health" { if (last && $1 - last > 5.0) bad = 1; last = $1 } END { exit bad }' calls1.txt
tail -1 calls1.txt | grep -q ' /shutdown '
grep -q "shutdown reported" server.err
grep -q "failed calls [1-9]" server.err # the retries before the sidecar came up

# 2. The dev protocol's quit ends the session.
: >calls2.txt
kill "$STANDIN_PID"; wait "$STANDIN_PID" 2>/dev/null || true
standin calls2.txt "$AGONES_PORT"
start_server --game "$game" --players 2 --log two.log --agones --dev-socket dev.sock
wait_until 30 "Ready" grep -q ' /ready ' calls2.txt
"$ctl" --socket dev.sock quit >/dev/null
rc=0; wait "$SERVER_PID" || rc=$?
[ "$rc" -eq 0 ]
[ "$(grep -c ' /ready ' calls2.txt)" -eq 1 ]
[ "$(grep -c ' /shutdown ' calls2.txt)" -eq 1 ]

# 3. A bad port in the environment is an error, and the log is still closed.
rc=0
AGONES_SDK_HTTP_PORT=99999 "$server" --game "$game" --port $((20000 + RANDOM % 12000)) --bind 127.0.0.1 "${SERVER_SECURITY[@]}" --agones --log three.log \
  >three.out 2>three.err || rc=$?
if grep -q "cannot listen" three.err; then : ; else
  [ "$rc" -eq 1 ] || { echo "bad AGONES_SDK_HTTP_PORT: exit $rc"; cat three.err; exit 1; }
  grep -q "AGONES_SDK_HTTP_PORT" three.err
fi

# 4. labels and --exit-when-empty after the last player leaves
: >calls4.txt
kill "$STANDIN_PID"; wait "$STANDIN_PID" 2>/dev/null || true
standin calls4.txt "$AGONES_PORT"
start_server --game "$game" --players 2 --log four.log --agones --exit-when-empty 2
wait_until 20 "Ready" grep -q ' /ready ' calls4.txt
wait_until 20 "the first labels" grep -q '"key":"players","value":"0"' calls4.txt
# The label is looked for while the client plays: the server sends the
# labels it holds when it sends them, so one sent after the client left
# would say 0 again.
"$client" --port "$PORT" --game "$game" --steps 600 --timeout-ms 20000 >c.out 2>c.err & client_pid=$!
wait_until 30 "the players=1 label" grep -q '"key":"players","value":"1"' calls4.txt
wait "$client_pid" || { cat c.err; exit 1; }
rc=0; wait "$SERVER_PID" || rc=$? # it ends itself: empty for 2 s after the client left
[ "$rc" -eq 0 ] || { echo "server exited $rc"; cat server.err; exit 1; }
grep -q "no player for 2 s (--exit-when-empty): ending the session" server.err
grep -q "the GameServer is Ready" server.err # the watch stream's state
tail -1 calls4.txt | grep -q ' /shutdown '
# the last labels before Shutdown say nobody is here
[ "$(grep ' /metadata/label ' calls4.txt | grep '"key":"players"' | tail -1 | grep -c '"value":"0"')" -eq 1 ]
grep -q '"key":"spectators","value":"0"' calls4.txt
# Health every 2 s: never more than 5 s apart (Agones' default period)
awk '$2 == "/health" { if (last && $1 - last > 5.0) bad = 1; last = $1 } END { exit bad }' calls4.txt

# 5. an allocation with nobody come: the session ends after --exit-when-empty
: >calls5.txt
kill "$STANDIN_PID"; wait "$STANDIN_PID" 2>/dev/null || true
standin calls5.txt "$AGONES_PORT"
start_server --game "$game" --players 2 --log five.log --agones --exit-when-empty 1
wait_until 20 "the watch stream's Ready" grep -q "the GameServer is Ready" server.err
kill -0 "$SERVER_PID" # not allocated: it waits for players however long
kill -USR2 "$STANDIN_PID" # a matchmaker allocates the GameServer
wait_until 20 "the allocation to be seen" grep -q "the GameServer is Allocated" server.err
rc=0; wait "$SERVER_PID" || rc=$?
[ "$rc" -eq 0 ] || { echo "server exited $rc"; cat server.err; exit 1; }
grep -q "no player for 1 s (--exit-when-empty)" server.err
grep -q ' /watch/gameserver ' calls5.txt
for f in calls1.txt calls2.txt calls4.txt calls5.txt; do
  [ ! -s "$f.bad" ] || { echo "calls the Agones API refuses:"; cat "$f.bad"; exit 1; }
done
echo "agones ok"
