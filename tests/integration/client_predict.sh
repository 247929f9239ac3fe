#!/usr/bin/env bash
# Prediction with the real programs (client/README.md "Prediction and
# rollback"): through cradle-proxy (40 ms each way, jitter, loss), two
# players that predict (the default) and one in --lockstep play vanguard
# for 600 steps beside a spectator. All end on the server's hash; the
# predicting players' --output bytes are cradle-replay's of the server's log
# (prediction changes nothing confirmed); their summaries carry the
# prediction figures, the lockstep one's "predict":null; while they play,
# `cradlectl players` shows each player's figures as its REPORTs bring them
# and the event stream has "prediction" lines. The flags: --lockstep and
# --predict-window exclude each other, and a window outside 1..64 is refused.
set -euo pipefail
server=$1 client=$2 game=$3 replay=$4 proxy=$5 ctl=$6
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
proxy_pid=""
trap 'stop_server_on_exit; [ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
trap 'echo "client_predict.sh: check failed at line $LINENO" >&2; tail -n 5 p0.err p1.err p2.err server.err 2>/dev/null >&2' ERR
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }

usage() { # args... -> the client's exit status must be 2, the message naming the flag
  local rc=0
  "$client" --headless --game "$game" --insecure "$@" >/dev/null 2>err.txt || rc=$?
  [ "$rc" -eq 2 ] || { echo "cradle-client $*: exit $rc, not 2"; exit 1; }
  grep -q -- "$1" err.txt || grep -q -- "--lockstep" err.txt
}
usage --predict-window 0
usage --predict-window 65
usage --lockstep --predict-window 8

start_server --game "$game" --players 3 --log session.log --hash-interval 30 --dev-socket dev.sock
"$proxy" --listen 127.0.0.1:0 --server 127.0.0.1:$PORT --latency 40 --jitter 10 --loss 2 --seed 5 \
  >proxy.out 2>proxy.err & proxy_pid=$!
proxy_listening() { grep -q '"event":"proxy"' proxy.out 2>/dev/null; }
wait_until 10 "the proxy to listen" proxy_listening
via=$(sed -n 's/.*"listen":"127.0.0.1:\([0-9]*\)".*/\1/p' proxy.out)
run_client() { # name args...
  local name=$1; shift
  "$client" --headless --port "$via" "${CLIENT_SECURITY[@]}" --game "$game" --silence-timeout 10000 \
    --steps 600 "$@" >"$name.out" 2>"$name.err"
}
run_client p0 --bot --seed 1 --output p0.bin & p0=$!
run_client p1 --bot --seed 2 --predict-window 8 & p1=$!
run_client p2 --bot --seed 3 --lockstep & p2=$!
run_client spec --spectator & spec=$!
ctl watch prediction >events.txt 2>/dev/null & watcher=$!
reported() { # both predicting players' figures are in, the lockstep one's null
  local players; players=$(ctl players)
  [ "$(grep -o '"predict":{"window":16' <<<"$players" | wc -l)" -eq 1 ] &&
    [ "$(grep -o '"predict":{"window":8' <<<"$players" | wc -l)" -eq 1 ] &&
    [ "$(grep -o '"predict":null' <<<"$players" | wc -l)" -eq 1 ]
}
wait_until 60 "cradlectl players to show the prediction figures" reported
have_events() { grep -q '"event":"prediction".*"predict":{"window":' events.txt 2>/dev/null; }
wait_until 30 "a prediction line on the event stream" have_events
for pid in $p0 $p1 $p2 $spec; do wait "$pid"; done
kill "$watcher" 2>/dev/null || true
hash=""
for name in p0 p1 p2 spec; do
  line=$(grep '"event":"done"' "$name.out") || { echo "$name did not finish:"; cat "$name.out" "$name.err"; exit 1; }
  echo "$name: $line"
  [ "$(json_field "$line" last_hash_step)" = 599 ]
  h=$(json_field "$line" final_hash)
  [ -z "$hash" ] || [ "$h" = "$hash" ] || { echo "$name ends on hash $h, others on $hash"; exit 1; }
  hash=$h
done
grep -q '"predict":{"window":16,"on":true,' p0.out
grep -q '"predict":{"window":8,"on":true,' p1.out
grep -q '"predict":null' p2.out
grep -q '"predict":null' spec.out
# It ran ahead: more steps predicted than the 600 - start it confirmed.
predicted=$(sed -n 's/.*"predicted_steps":\([0-9]*\).*/\1/p' p0.out)
start=$(json_field "$(grep done p0.out)" start_step)
[ "$predicted" -gt $((600 - start)) ] || { echo "p0 predicted $predicted steps from step $start"; exit 1; }
ctl quit >/dev/null
wait "$SERVER_PID"
"$replay" --output replay.bin --from "$start" --to 599 session.log
cmp replay.bin p0.bin
echo "client predict ok"
