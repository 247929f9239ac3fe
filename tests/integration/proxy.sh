#!/usr/bin/env bash
# cradle-proxy: bad flags exit 2 naming the flag; a session of the counter
# game through the proxy (latency, jitter, loss, duplicates, reordering) ends
# with both players on the server's hash and the log replaying to their
# output bytes; the proxy printed its seed and counted what it did.
set -euo pipefail
server=$1 client=$2 game=$3 replay=$4 proxy=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
PROXY_PID=
trap 'stop_server_on_exit; [ -z "$PROXY_PID" ] || kill -KILL "$PROXY_PID" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
# set -e stops silently at a failed check: say which line and show the state.
trap 'echo "proxy.sh: check failed at line $LINENO" >&2; tail -n 3 proxy.out proxy.err p0.out p0.err p1.out p1.err server.err 2>/dev/null >&2' ERR

expect_usage() { # flag-name args...
  local flag=$1; shift
  local rc=0
  "$proxy" "$@" >/dev/null 2>err.txt || rc=$?
  [ "$rc" -eq 2 ] || { echo "expected exit 2 for $*, got $rc"; exit 1; }
  grep -q -- "$flag" err.txt || { echo "message does not name $flag:"; cat err.txt; exit 1; }
}
expect_usage --loss --listen 127.0.0.1:0 --server 127.0.0.1:9 --loss 101
expect_usage --latency --listen 127.0.0.1:0 --server 127.0.0.1:9 --latency -5
expect_usage --profile --listen 127.0.0.1:0 --server 127.0.0.1:9 --profile lan
expect_usage --server --listen 127.0.0.1:0 --server localhost
expect_usage --listen --server 127.0.0.1:9
expect_usage --latency-at --listen 127.0.0.1:0 --server 127.0.0.1:9 --latency-at 5
expect_usage --latency-at --listen 127.0.0.1:0 --server 127.0.0.1:9 --latency-at 9:10 --latency-at 3:10
"$proxy" --help | grep -- "--profile" >/dev/null # all of it: grep -q would close the pipe early (SIGPIPE)

start_server --game "$game" --players 2 --log session.log --hash-interval 30 --timeout 20000
"$proxy" --listen 127.0.0.1:0 --server 127.0.0.1:$PORT --latency 40 --jitter 20 --loss 5 \
  --duplicate 10 --reorder 5 --seed 7 >proxy.out 2>proxy.err &
PROXY_PID=$!
for _ in $(seq 1 100); do grep -q '"event":"proxy"' proxy.out 2>/dev/null && break; sleep 0.05; done
line=$(grep '"event":"proxy"' proxy.out)
echo "$line"
[ "$(json_field "$line" seed)" = 7 ]
[ "$(json_field "$line" loss_pct)" = 5 ]
listen=$(json_field "$line" listen)
pport=${listen##*:}
[ "$pport" -gt 0 ]

"$client" --port "$pport" --game "$game" --slot 0 --seed 10 --steps 400 --output p0.bin \
  --timeout-ms 60000 >p0.out 2>p0.err & c0=$!
"$client" --port "$pport" --game "$game" --slot 1 --seed 11 --steps 400 --output p1.bin \
  --timeout-ms 60000 >p1.out 2>p1.err & c1=$!
wait $c0 || { echo "client 0 failed"; cat p0.out p0.err; exit 1; }
wait $c1 || { echo "client 1 failed"; cat p1.out p1.err; exit 1; }
h0=$(json_field "$(grep '"event":"done"' p0.out)" last_hash)
h1=$(json_field "$(grep '"event":"done"' p1.out)" last_hash)
[ -n "$h0" ] && [ "$h0" = "$h1" ]

kill -USR1 "$PROXY_PID"
for _ in $(seq 1 100); do grep -q '"event":"counters"' proxy.out && break; sleep 0.05; done
counters=$(grep '"event":"counters"' proxy.out | tail -1)
echo "$counters"
[ "$(json_field "$counters" lost)" -gt 0 ]
[ "$(json_field "$counters" duplicated)" -gt 0 ]
[ "$(json_field "$counters" reordered)" -gt 0 ]
[ "$(json_field "$counters" flows_opened)" -eq 2 ]
[ "$(json_field "$counters" overflowed)" -eq 0 ]

kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
kill -TERM "$PROXY_PID"
rc=0; wait "$PROXY_PID" || rc=$?
PROXY_PID=
[ "$rc" -eq 0 ]
grep -q '"event":"exit"' proxy.out
grep -q "repeat with --seed 7" proxy.err

"$replay" --json session.log | grep -q '"verdict":"ok"'
for name in p0 p1; do
  start=$(json_field "$(grep done $name.out)" start_step)
  "$replay" --output replay_$name.bin --from "$start" --to 399 session.log
  cmp replay_$name.bin $name.bin
done
echo "proxy ok"
