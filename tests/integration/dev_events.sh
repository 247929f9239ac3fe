#!/usr/bin/env bash
# The dev protocol's event stream and connection limit, end to end:
#  - `cradlectl watch` prints joins, leaves, kicks, pauses, reloads and step
#    lines as they happen, and ends cleanly when the server quits;
#  - a subscriber that stops reading is dropped with a last "dropped" line,
#    and the game thread never waits for it (the steps go on);
#  - a subscriber killed mid-stream leaves the server unharmed;
#  - one connection past --dev-clients is refused naming the limit.
# usage: dev_events.sh CRADLE_SERVER TEST_CLIENT COUNTER_GAME CRADLECTL
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
watchers=()
trap 'for w in "${watchers[@]}"; do kill "$w" 2>/dev/null || true; done; stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
ctl() { "$ctl" --socket dev.sock --json "$@"; }
field() { json_field "$(ctl status)" "$1"; }

CRADLE_TEST_INSECURE=1 start_server --game "$game" --mode commanded --players 2 --dev-socket dev.sock --dev-clients 4

# 1. A watcher sees what happens, in order, each line JSON.
"$ctl" --socket dev.sock --json watch join leave kick pause step every=25 >watch.out 2>watch.err &
watchers+=($!)
subscribed() { grep -q '"ok":true,"events":\["join","leave","pause","kick","step"\],"every":25' watch.out; }
wait_until 10 "the watcher to subscribe" subscribed
[ "$(field dev_subscribers)" = 1 ] || fail "dev_subscribers: $(ctl status)"
"$client" --port "$PORT" --game "$game" --insecure --steps 100000 --timeout-ms 30000 >a.out 2>a.err & a=$!
joined() { grep -q '"event":"join"' watch.out; }
wait_until 20 "a join event" joined
# The players table, as a terminal shows it.
"$ctl" --socket dev.sock --readable players >players.out
grep -Eq '^players 1' players.out || fail "readable players: $(cat players.out)"
grep -Eq '^  slot +address +rtt_ms' players.out || fail "players table header: $(cat players.out)"
grep -Eq '^  0 +127\.0\.0\.1:[0-9]+ ' players.out || fail "players table row: $(cat players.out)"
ctl step 50 >/dev/null
ctl pause >/dev/null
ctl resume >/dev/null
ctl kick slot=0 >/dev/null
left() { grep -q '"event":"leave"' watch.out; }
wait_until 20 "a leave event" left
wait $a || true
grep -q '"event":"step","step":25,' watch.out || fail "no step line at 25: $(cat watch.out)"
grep -q '"event":"step","step":50,' watch.out || fail "no step line at 50"
grep -q '"event":"pause".*paused by the operator' watch.out || fail "no pause line"
grep -q '"event":"pause".*resumed by the operator' watch.out || fail "no resume line"
grep -q '"event":"kick".*slot 0' watch.out || fail "no kick line"
# Every line the watcher printed is one JSON object.
python3 - watch.out <<'PY'
import json, sys
for line in open(sys.argv[1]):
    assert isinstance(json.loads(line), dict), line
PY
# The readable form names the event after a time and the step.
"$ctl" --socket dev.sock --readable watch pause >readable.out 2>readable.err &
watchers+=($!)
wait_until 10 "the readable watcher" grep -q '"ok"\|events=' readable.out
ctl pause >/dev/null
ctl resume >/dev/null
readable_pause() { grep -Eq '^[0-9]{2}:[0-9]{2}:[0-9]{2}  step [0-9]+ +pause +paused by the operator' readable.out; }
wait_until 10 "a readable pause line" readable_pause

# 2. A subscriber that never reads: dropped, and the steps go on.
python3 - dev.sock >slow.out <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
s.sendall(b'{"cmd":"subscribe","events":["step"],"every":1}\n')
print("subscribed", flush=True)
open("slow.ready", "w").close()
while not __import__("os").path.exists("slow.go"):
    time.sleep(0.05)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data.rstrip(b"\n").split(b"\n")[-1].decode(), flush=True)
PY
slow=$!
wait_until 10 "the slow subscriber" test -e slow.ready
subscribers_2() { [ "$(field dev_subscribers)" -ge 3 ]; }
wait_until 10 "three subscribers" subscribers_2
before=$(field step)
ctl step 100000 >/dev/null
[ "$(field step)" -eq $((before + 100000)) ] || fail "the steps did not all run"
[ "$(field dev_subscribers_dropped)" -ge 1 ] || fail "the slow subscriber was not dropped: $(ctl status)"
touch slow.go
wait $slow
tail -n 1 slow.out | grep -q '"event":"dropped","reason":"slow' || fail "no dropped line: $(tail -c 300 slow.out)"

# 3. A subscriber killed mid-stream: the server goes on.
"$ctl" --socket dev.sock --json watch step every=1 >killed.out 2>&1 &
victim=$!
wait_until 10 "the victim to subscribe" grep -q '"ok":true' killed.out
ctl step 20000 >/dev/null &
stepping=$!
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
wait "$stepping"
ctl step 10 >/dev/null
ctl status | grep '"ok":true' >/dev/null || fail "status after the kill"

# 4. One connection past --dev-clients 4 is refused, naming the option.
holders=()
for _ in 1 2 3 4; do
  # Each holds a connection until the test kills it.
  python3 -c 'import signal,socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); signal.pause()' dev.sock & holders+=($!)
done
watchers+=("${holders[@]}")
refused_one() {
  local rc=0
  "$ctl" --socket dev.sock status >full.out 2>&1 || rc=$?
  [ "$rc" -eq 1 ] && grep -q -- '--dev-clients' full.out
}
wait_until 10 "a refusal naming --dev-clients" refused_one
# From then on every try gets the server's refusal, never a send error: the
# server writes its reason and closes at once, maybe before the request goes.
for try in 1 2 3 4 5 6 7 8 9 10; do
  refused_one || fail "try $try of a connection past the limit: $(cat full.out)"
done
grep -q "full: all 4 dev connections are in use (the host's --dev-clients)" full.out || fail "$(cat full.out)"
for h in "${holders[@]}"; do kill "$h" 2>/dev/null || true; done
dev_free() { ctl status >/dev/null 2>&1; }
wait_until 10 "a dev connection to free up" dev_free

# The first watcher ends cleanly when the server quits.
ctl quit >/dev/null
rc=0; wait "${watchers[0]}" || rc=$?
[ "$rc" -eq 0 ] || fail "the watcher exited $rc after quit: $(cat watch.err)"
wait "$SERVER_PID"
echo "dev events ok"
