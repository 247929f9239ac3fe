#!/usr/bin/env bash
# Admission that scales: legitimate clients get in however many share one
# address, while the per-address connect limit still stops what fails.
#   1. default settings: 8 player bots and 56 spectator bots from one address,
#      started at once, all join and finish (before: 5 of 8 players got in);
#   2. behind a flood of connects that never authenticate, a client with a
#      valid token is turned away (a DISCONNECT that says why), tries again
#      with backoff and gets in;
#   3. the flood protection stands: clients whose tokens fail are limited;
#   4. half-open connections from 40 addresses cannot hold the slots: the
#      oldest one that has not authenticated makes room, a connection that
#      sent nothing is dropped after 500 ms, and three clients all join.
#   server_admission.sh CRADLE_SERVER CRADLE_CLIENT GAME CRADLECTL CRADLE_TEST_CLIENT
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4 KEYS_CLIENT=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; tail -20 server.err >&2; exit 1; }
status() { json_field "$("$ctl" --socket dev.sock --json status)" "$1"; }
bots() { # ARGS...: cradle-client --headless bots against the server, 300 steps
  "$client" --game "$game" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --steps 300 "$@"
}

# 1. the default limits, 64 bots from one address
start_server --game "$game" --players 8 --spectators 56 --dev-socket dev.sock
bots --bots 8 >p.out 2>p.err & players=$!
bots --bots 56 --spectator >s.out 2>s.err & spectators=$!
wait "$players" || { cat p.err; fail "a player bot failed"; }
wait "$spectators" || { cat s.err; fail "a spectator bot failed"; }
[ "$(status joins)" = 64 ] || fail "joins $(status joins), expected 64"
# each of them authenticated, so each connect gave its address's token back
[ "$(status rate_refunded)" -ge 64 ] || fail "rate_refunded $(status rate_refunded), expected at least 64"
# and status counts its own dev lines
[ "$(status dev_lines)" -ge 2 ] && [ "$(status dev_accepted)" -ge 2 ] || fail "the dev counters do not move"
echo "default limits: 64 bots joined ($(status rate_limited) connects turned away and tried again)"
"$ctl" --socket dev.sock quit >/dev/null; wait "$SERVER_PID"; SERVER_PID=

# 2. behind a busy limit: a flood of connects that never authenticate holds
# the address's two tokens; a client with a valid token is turned away (a
# DISCONNECT that says why), tries again with backoff, and gets in as the
# bucket refills; its own connect then does not count
# (the flood makes each attempt the server drops again at once, so the limit
# stays spent whatever the machine's speed, until the test releases it)
start_server --game "$game" --players 8 --dev-socket dev.sock --connect-burst 2 --connect-rate 1
"$KEYS_CLIENT" --port "$PORT" --game "$game" --connect-flood 10 --flood-hold >flood.out & flood=$!
flood_limited() { [ "$(status rate_limited)" -ge 1 ]; }
wait_until 20 "the flood to be limited" flood_limited
bots >p.out 2>p.err & joiner=$!
wait_until 30 "the client to be turned away" grep -q "the server turned this client away" p.err
kill -USR1 "$flood"
wait "$joiner" || { cat p.err; fail "the client did not get in behind the flood"; }
kill -TERM "$flood" 2>/dev/null || true; wait "$flood" 2>/dev/null || true
turned=$(json_field "$(grep '"event":"done"' p.out)" turned_away)
[ "$turned" -ge 1 ] || fail "the client was never turned away: $(cat p.out)"
echo "behind a flood: the client was turned away $turned times, tried again and joined"

# 3. joins that fail still count: tokens from an issuer the server does not trust
cradle-keys-untrusted() { "$KEYS_BIN" gen --out other.key >/dev/null; }
cradle-keys-untrusted
# Eight at once, more than the burst of 2 (one after another, a slow machine
# would let the bucket refill between them).
before=$(status rate_limited)
bad=()
for i in 1 2 3 4 5 6 7 8; do
  "$client" --game "$game" --headless --port "$PORT" --server-key "$SERVER_ID" --issuer-key "$PWD/other.key" \
    --steps 10 >"bad$i.out" 2>"bad$i.err" & bad+=($!)
done
for pid in "${bad[@]}"; do wait "$pid" && fail "a client with an untrusted token joined"; done
[ "$(status rate_limited)" -gt "$before" ] || fail "failed joins were not limited (rate_limited $before before them)"
cat bad*.err >bad.err
grep -q "turned this client away" bad.err || { cat bad.err; fail "no client said it was turned away"; }
grep -q "refused" bad.err || { cat bad.err; fail "no client said why it was refused"; }
echo "failed joins still count: rate_limited $(status rate_limited)"
"$ctl" --socket dev.sock quit >/dev/null; wait "$SERVER_PID"; SERVER_PID=

# 4. half-open connections cannot hold the slots: 40 loopback addresses open
# 8 connections each (320, more than the peer table holds) and never say a
# word, while three clients with valid tokens join; every join succeeds
start_server --game "$game" --players 3 --dev-socket dev.sock
"$KEYS_CLIENT" --port "$PORT" --game "$game" --connect-flood 320 --flood-from 40 >flood.out & flood=$!
flooded() { [ "$(status rate_limited)" -ge 1 ] || [ "$(status auth_timeouts)" -ge 1 ]; }
wait_until 20 "the flood to reach the server" flooded
pids=()
for i in 1 2 3; do bots >"h$i.out" 2>"h$i.err" & pids+=($!); done
for i in 1 2 3; do wait "${pids[$((i - 1))]}" || { cat "h$i.err"; fail "client $i did not get in under the flood"; }; done
kill -TERM "$flood" 2>/dev/null || true; wait "$flood" 2>/dev/null || true
[ "$(status joins)" = 3 ] || fail "joins $(status joins), expected 3"
echo "under a half-open flood from 40 addresses: 3 of 3 joined (evicted $(status evicted_unauthenticated)," \
  "auth timeouts $(status auth_timeouts), rate limited $(status rate_limited))"
