#!/usr/bin/env bash
# cradle-server's handshake, commanded mode, dev commands, refusals, usage
# errors, the config file and shutdown, on loopback with the counter game
# (and two other builds of it: another game name, another build id).
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4 replay=$5 other_name=$6 other_build=$7
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"

expect_usage() { # expected-text args...
  local text=$1; shift
  local rc=0
  "$server" "$@" >/dev/null 2>usage.err || rc=$?
  [ "$rc" -eq 2 ] || { echo "expected exit 2 for: $*, got $rc"; cat usage.err; exit 1; }
  grep -q -- "$text" usage.err || { echo "expected '$text' in:"; cat usage.err; exit 1; }
}
expect_usage "--game is required"
expect_usage "--players" --game "$game" --players 0
expect_usage "--players must be from 1 to 8" --game "$game" --players 9 --port 1
expect_usage "--mode must be 'paced' or 'commanded'" --game "$game" --mode fast
expect_usage "--input-delay" --game "$game" --input-delay soon
expect_usage "--port" --game "$game" --port 70000
expect_usage "--log-format" --game "$game" --log-format xml
expect_usage "unexpected argument" --game "$game" extra
echo '{"players": "many"}' >bad.json
expect_usage 'config key "players"' --game "$game" --config bad.json
echo '{"colour": 1}' >bad2.json
expect_usage 'unknown config key "colour"' --game "$game" --config bad2.json
"$server" --help | grep "usage: cradle-server" >/dev/null # all of it: grep -q would close the pipe early (SIGPIPE)
"$server" --version | grep -q "cradle-server"

# Commanded mode; the config file sets players 4 and the flag overrides it.
echo '{"players": 4, "mode": "commanded", "log-format": "json"}' >cfg.json
start_server --game "$game" --config cfg.json --players 2 --dev-socket dev.sock --log c.log
ctl() { "$ctl" --socket dev.sock --json "$@"; }
ctl_fails() { # expected-error args...: the reply is ok:false with that error
  local want=$1; shift
  local out rc=0
  out=$(ctl "$@") || rc=$?
  [ "$rc" -ne 0 ] && <<<"$out" grep -q "\"error\":\"$want\"" || { echo "expected error $want for $*: $out"; exit 1; }
}
ctl status | grep '"player_limit":2' >/dev/null
ctl status | grep '"mode":"commanded"' >/dev/null
[ "$(json_field "$(ctl step 50)" step)" = 50 ]
# Nothing advances by itself: once the server's own clock has run 300 ms
# (18 steps at 60/s) past the step, a status it answers then still says 50.
up0=$(json_field "$(ctl status)" uptime_ms)
status_after() { # MS: the server answers a status at uptime >= MS (kept in $status)
  status=$(ctl status)
  [ "$(json_field "$status" uptime_ms)" -ge "$1" ]
}
wait_until 30 "the server's uptime to pass $((up0 + 300)) ms" status_after $((up0 + 300))
[ "$(json_field "$status" step)" = 50 ] || { echo "commanded mode stepped by itself: $status"; exit 1; }
[ "$(json_field "$(ctl step 7)" step)" = 57 ]

# Refusals carry their reason.
# another game (the counter named "other"), another build of this one (+5 a step)
"$client" --port "$PORT" --game "$other_name" --expect-refusal game >r1.out
grep -q '"reason":"game"' r1.out
"$client" --port "$PORT" --game "$other_build" --expect-refusal build >r2.out
grep -q '"reason":"build"' r2.out
"$client" --port "$PORT" --game "$game" --protocol 9 --expect-refusal protocol >r3.out
grep -q '"reason":"protocol"' r3.out

# Two players join mid-session (state block at step 57); a third is refused.
joins0=$(json_field "$(ctl status)" joins)
"$client" --port "$PORT" --game "$game" --steps 100 --seed 1 --timeout-ms 20000 >a.out 2>a.err & a=$!
"$client" --port "$PORT" --game "$game" --steps 100 --seed 2 --timeout-ms 20000 >b.out 2>b.err & b=$!
"$client" --port "$PORT" --game "$game" --spectator --steps 100 --timeout-ms 20000 >s.out 2>s.err & s=$!
slots_at_least() { [ "$(ctl players | grep -o '"slot"' | wc -l)" -ge "$1" ]; }
wait_until 30 "two players in their slots" slots_at_least 2
"$client" --port "$PORT" --game "$game" --expect-refusal full >r4.out
grep -q '"reason":"full"' r4.out
# A slot is taken at HELLO, but a peer joins (WELCOME, state block) in turn:
# step only once all three have joined, so each joins at step 57.
joins_at_least() { [ "$(json_field "$(ctl status)" joins)" -ge "$1" ]; }
wait_until 30 "the two players and the spectator to join" joins_at_least $((joins0 + 3))
ctl step 43 >/dev/null
wait $a; wait $b; wait $s
server_hash=$(json_field "$(ctl hash)" hash)
for name in a b s; do
  line=$(grep '"event":"done"' $name.out)
  echo "$name: $line"
  [ "$(json_field "$line" start_step)" = 57 ]
  [ "$(json_field "$line" steps)" = 100 ]
  [ "$(json_field "$line" final_hash)" = "$server_hash" ] || { echo "$name differs from the server's $server_hash"; exit 1; }
done
ctl status | grep '"desyncs":0' >/dev/null
# Malformed messages are dropped and counted; the sender still joins; kick
# sends it away with a reason.
"$client" --port "$PORT" --game "$game" --garbage 200 --steps 1000000 --timeout-ms 20000 >k.out 2>k.err & k=$!
slot0_taken() { ctl players | grep -q '"slot":0'; }
wait_until 30 "slot 0 to be taken" slot0_taken
[ "$(json_field "$(ctl status)" dropped_malformed)" -ge 150 ]
ctl '{"cmd":"kick","slot":0}' | grep -q '"ok":true'
rc=0; wait $k || rc=$?
[ "$rc" -eq 1 ] && grep -q "kicked" k.err || { echo "kick: exit $rc"; cat k.err; exit 1; }
# Dev errors: step count above the maximum, an unknown command, kick of an empty slot.
ctl_fails count_above_maximum '{"cmd":"step","count":100001}'
ctl_fails unknown_command '{"cmd":"dance"}'
ctl_fails bad_argument '{"cmd":"kick","slot":5}'
ctl flush | grep -q '"durable_steps":100'
ctl quit >/dev/null
rc=0; wait "$SERVER_PID" || rc=$?
[ "$rc" -eq 0 ]
grep -q '"event":"join"' server.err    # --log-format json from the config file
"$replay" --json c.log | grep -q '"log_end":"closed"'

# Paced mode refuses "step"; SIGTERM stops it cleanly with a closed log.
start_server --game "$game" --dev-socket dev.sock --log p.log
ctl_fails wrong_state step 1
ctl pause >/dev/null
ctl resume >/dev/null
# The session steps again after the resume before SIGTERM stops it.
step0=$(json_field "$(ctl status)" step)
stepped_past() { [ "$(json_field "$(ctl status)" step)" -ge "$1" ]; }
wait_until 30 "paced steps after the resume (step $((step0 + 10)))" stepped_past $((step0 + 10))
kill -TERM "$SERVER_PID"
rc=0; wait "$SERVER_PID" || rc=$?
[ "$rc" -eq 0 ]
out=$("$replay" --json p.log)
echo "$out"
<<<"$out" grep -q '"verdict":"ok"'
<<<"$out" grep -q '"log_end":"closed"'
echo "server handshake ok"
