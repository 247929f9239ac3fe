#!/usr/bin/env bash
# A desync, provoked from outside the programs: server and clients load a
# test build of a game that mixes its process id into the state at step 250
# (tests/games/nondeterministic.c). A spectator that joined before then
# reports the desync at step 269 (the first hash step at or after 250, hash
# interval 30), exits 4 and writes its desync report (the last matching hash
# step 239 and the 30 snapshots since); the server logs the DESYNC and counts
# it in status.
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"

start_server --game "$game" --players 2 --hash-interval 30 --mode commanded --dev-socket dev.sock
ctl() { "$ctl" --socket dev.sock --json "$@"; }
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --spectator --steps 300 \
  --silence-timeout 10000 --desync-report bad.report >bad.out 2>bad.err & bad=$!
deadline=$((SECONDS + 20))
until [ "$(json_field "$(ctl status)" joins)" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || { echo "the client did not join"; cat bad.err; exit 1; }
  sleep 0.05
done
ctl step 300 >/dev/null

rc=0; wait $bad || rc=$?
cat bad.err
[ "$rc" -eq 4 ] || { echo "a desync should exit 4, got $rc"; exit 1; }
grep -q "DESYNC at step 269" bad.err
head -c 15 bad.report | grep -q "cradle-desync 1"
grep -a -q "^step 269$" bad.report
grep -a -q "^base_step 239$" bad.report
grep -a -q "^snapshots 30$" bad.report || { head -c 300 bad.report; exit 1; }
deadline=$((SECONDS + 10))
until grep -q "desync at step 269" server.err; do
  [ $SECONDS -lt $deadline ] || { echo "the server did not log the desync"; cat server.err; exit 1; }
  sleep 0.05
done
[ "$(json_field "$(ctl status)" desyncs)" = 1 ]
ctl quit >/dev/null
wait "$SERVER_PID"
echo "client desync ok"
