#!/usr/bin/env bash
# A step that never returns (tests/games hang_at.so: step 180 loops forever)
# in a session reporting to Agones (the stand-in sidecar) with a log:
#   1. health means alive: Health calls stop once the game thread hangs;
#   2. the stop deadline: SIGTERM ends the server within --stop-timeout (it
#      exits 1), the log durable up to the last complete step (179: it reads
#      back as 180 steps, unclosed, every hash matching), Shutdown sent.
set -euo pipefail
server=$1 game=$2 replay=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
STANDIN_PID=
trap 'stop_server_on_exit; [ -z "$STANDIN_PID" ] || kill "$STANDIN_PID" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; cat server.err calls.txt >&2 2>/dev/null || true; exit 1; }

python3 "$here/agones_standin.py" port.txt calls.txt & STANDIN_PID=$!
wait_until 10 "the Agones stand-in" test -s port.txt
export AGONES_SDK_HTTP_PORT=$(cat port.txt)

start_server --game "$game" --players 2 --log hang.log --hash-interval 10 --agones --stop-timeout 1000
healths() { local n; n=$(grep -c ' /health ' calls.txt 2>/dev/null) || true; echo "${n:-0}"; }
some_health() { [ "$(healths)" -ge 1 ]; }
wait_until 20 "the first Health" some_health
# the step loop hangs at step 180, three seconds in: from then on Health stops
now() { python3 -c 'import time; print(time.monotonic())'; }
silent_for() { # SECONDS: no Health for that long while the stand-in keeps listening
  local last; last=$(awk '$2 == "/health" { t = $1 } END { print t + 0 }' calls.txt)
  awk -v now="$(now)" -v last="$last" -v s="$1" 'BEGIN { exit !(now - last > s) }'
}
wait_until 30 "Health to stop (no call for 5 s, the Health period being 2 s)" silent_for 5
before=$(healths)
[ "$before" -ge 1 ] || fail "no Health at all"
grep -q ' /shutdown ' calls.txt && fail "Shutdown before SIGTERM"

started=$SECONDS
kill -TERM "$SERVER_PID"
rc=0; wait "$SERVER_PID" || rc=$?
SERVER_PID=
[ "$rc" -eq 1 ] || fail "the server exited $rc, expected 1"
[ $((SECONDS - started)) -le 8 ] || fail "the server took $((SECONDS - started)) s to stop (deadline 1 s)"
grep -q "did not finish within 1000 ms of signal 15 (stuck in the game's step 180" server.err || fail "no stop message"
grep -q "the log is durable up to step 179 (180 steps" server.err || fail "the log was not kept"
grep -q "info: shutdown reported" server.err || fail "Shutdown not reported"
tail -1 calls.txt | grep -q ' /shutdown ' || fail "Shutdown is not the last call"
[ "$(healths)" -eq "$before" ] || fail "Health after the hang"

# the log: 180 complete steps, no trailer, every hash as recorded
set +e; "$replay" --json hang.log >replay.out 2>replay.err; set -e
grep -q '"steps":180,' replay.out || { cat replay.out replay.err; fail "the log does not hold 180 steps"; }
grep -q '"log_end":"unclosed"' replay.out || { cat replay.out; fail "the log is not unclosed"; }
grep -q '"hashes_checked":18,' replay.out || { cat replay.out; fail "hashes"; }
echo "a hung step: Health stopped ($before calls before), SIGTERM ended it in $((SECONDS - started)) s, 180 steps kept"
