#!/usr/bin/env bash
# A desync, provoked from outside the programs: server and clients load a
# test build of a game that mixes its process id into the state at step 250
# (tests/games/nondeterministic.c). A spectator that joined before then
# reports the desync at step 269 (the first hash step at or after 250, hash
# interval 30), exits 4 and writes its desync report (the last matching hash
# step 239 and the 30 snapshots since); the server logs the DESYNC and counts
# it in status. cradle-replay --desync then analyses the report down to the
# field (the game's layout names it "total"), from the state the server kept,
# from its log (replayed from a keyframe of its index) and by re-running the
# report.
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4 replay=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"

start_server --game "$game" --players 2 --hash-interval 30 --mode commanded --dev-socket dev.sock --log s.log \
  --index-interval 100
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
# The server kept its own state at that step beside the log.
grep -q "kept the server's state at step 269 in s.log.desync-269.state" server.err || { cat server.err; exit 1; }
ctl quit >/dev/null
wait "$SERVER_PID"

# The report against the server's log: the server's state at step 269.
"$replay" --desync bad.report s.log >analysis.txt 2>analysis.err || { cat analysis.txt analysis.err; exit 1; }
cat analysis.txt
grep -q "^desync at step 269 (nondeterministic build .*): the server's state (the server's kept state)" analysis.txt
grep -Eq '^  total +state bytes 0\.\.[0-7]: server [0-9a-f]+, client [0-9a-f]+$' analysis.txt
grep -q "bytes differ" analysis.txt
! grep -q warning analysis.err || { cat analysis.err; exit 1; } # the log's state hashes to the report's server hash
# Without the kept state: the log replayed to the step, from the last
# keyframe before it that the server wrote (its index, one every 100 steps).
# The build mixes its process id into the state from step 250 on, so this
# replay's state is not the server's there: a warning says so.
mv s.log.desync-269.state kept.state
"$replay" --desync bad.report s.log >replayed.txt 2>replayed.err || { cat replayed.txt replayed.err; exit 1; }
# (a commanded session steps faster than keyframes compress: 199's may be skipped, 99's never is)
grep -Eq "from the keyframe after step (99|199) \(the log's index\)" replayed.err || { cat replayed.err; exit 1; }
grep -q "^desync at step 269 (nondeterministic build .*): the server's state (the log replayed)" replayed.txt ||
  { cat replayed.txt; exit 1; }
# Without the log: the report's base state re-run through its snapshots.
"$replay" --desync bad.report --game "$game" --json >analysis.json
grep -q '"reproduced_by":"the report re-run","fields":\[{"field":"total","first_byte":0,' analysis.json
# A damaged report is refused naming what is wrong.
head -c 200 bad.report >cut.report
rc=0; "$replay" --desync cut.report s.log 2>cut.err || rc=$?
[ "$rc" -eq 1 ] && grep -q "cut.report: " cut.err || { cat cut.err; exit 1; }
echo "client desync ok"
