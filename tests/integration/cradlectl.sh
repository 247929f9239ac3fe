#!/usr/bin/env bash
# cradlectl end to end against the offline host (cradle-record running the
# counter game): commanded mode over a Unix socket and over stdin, paced mode
# with a socket, exit codes, socket rules.
# usage: cradlectl.sh CRADLE_RECORD CRADLECTL COUNTER_GAME
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 ctl=$2 counter=$3
dir=$(mktemp -d /tmp/cradlectl-test-XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
sock=$dir/dev.sock
# host ARGS...: the offline host on the counter game, each run its own log.
newlog() { mktemp -u "$dir/sXXXXXX.log"; }
host() { "$record" --game "$counter" --log "$(newlog)" "$@"; }

fail() { echo "FAIL: $*" >&2; exit 1; }

# run WANT_RC CMD...: runs CMD, checks its exit status, leaves stdout in $out.
run() {
  local want=$1 rc
  shift
  set +e
  out=$("$@" 2>"$dir/stderr")
  rc=$?
  set -e
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, wanted $want; stdout: $out; stderr: $(cat "$dir/stderr")"
}

# start_host ARGS...: starts the host in the background, waits for its
# listening event.
start_host() {
  # The background job truncates out only once it runs: clear it here, so
  # the previous host's listening line is never taken for this one's.
  rm -f "$dir/out"
  "$record" --game "$counter" --log "$(newlog)" "$@" >"$dir/out" 2>"$dir/err" &
  pid=$!
  for _ in $(seq 200); do
    grep -q '"event":"listening"' "$dir/out" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  fail "host did not listen: $(cat "$dir/err")"
}

# wait_host WANT_RC: waits for the host to exit with WANT_RC.
wait_host() {
  local rc=0
  wait "$pid" || rc=$?
  pid=""
  [ "$rc" -eq "$1" ] || fail "host exited $rc, wanted $1: $(cat "$dir/err")"
}

echo "== commanded over a socket"
start_host --commanded --dev-socket "$sock" --json --max-count 1000
grep -qxF "{\"event\":\"listening\",\"path\":\"$sock\"}" "$dir/out" || fail "listening event: $(cat "$dir/out")"
[ "$(stat -c %a "$sock")" = 600 ] || fail "socket mode is $(stat -c %a "$sock")"

run 0 "$ctl" --socket "$sock" status
[[ $out == "ok  step=0 mode=commanded seed=1 "* ]] || fail "status: $out"
run 0 "$ctl" --socket "$sock" step 10
[ "$out" = "ok  step=10" ] || fail "step: $out"
run 0 "$ctl" -s "$sock" --json status   # status does not advance
[[ $out == '{"ok":true,"step":10,"mode":"commanded",'* ]] || fail "json status: $out"
out=$(CRADLE_SOCKET=$sock "$ctl" status)
[[ $out == "ok  step=10 "* ]] || fail "CRADLE_SOCKET: $out"
run 0 "$ctl" -s "$sock" --json '{"cmd":"step","count":5,"id":"r1"}'
[ "$out" = '{"ok":true,"id":"r1","step":15}' ] || fail "raw JSON: $out"

echo "== lines that are not strict JSON run nothing"
before=$("$ctl" -s "$sock" --json status | sed -n 's/.*"step":\([0-9]*\).*/\1/p')
python3 - "$sock" <<'PY'
import json, socket, sys
# Each would step a lenient parser; each must be refused and run nothing.
lines = [b'{"cmd":"step","count":01}', b'{"cmd":"step","count":1.}', b'{"cmd":"step","count":.5e1}',
         b'\x0c{"cmd":"step","count":1}', b'{"cmd":"step","count":1}\x0c', b'\x00{"cmd":"step","count":1}',
         b'{"cmd":"step\\u0000junk","count":1}', b'{"cmd":"step","count":1,"count":2}',
         b'{"cmd":"step","count":1e0}', b'{"cmd":"step","count":1.0}', b'{"cmd":"st\\ud800ep","count":1}',
         b'{"cmd":"step","count":1,}', b'{"cmd":"step","count":+1}', b'{"cmd":"step","count":1',
         b'[{"cmd":"step","count":1}]', b'{"cmd":"step","count":1}{"cmd":"step","count":1}',
         b'{"cmd":"step","count":0x1}', b'{\'cmd\':\'step\',\'count\':1}', b'\xef\xbb\xbf{"cmd":"step","count":1}',
         b'{"cmd":"step","count":99999999999999999999999}', b'{"cmd":"step","count":1, "c\\u0000":1}']
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"".join(l + b"\n" for l in lines))
data = b""
while data.count(b"\n") < len(lines):
    chunk = s.recv(65536)
    assert chunk, "the host closed the connection"
    data += chunk
for line, reply in zip(lines, data.split(b"\n")):
    r = json.loads(reply)
    assert r["ok"] is False, (line, reply)
    assert r["error"] in ("not_json", "not_object", "count_not_integer"), (line, reply)
print(len(lines), "refused")
PY
after=$("$ctl" -s "$sock" --json status | sed -n 's/.*"step":\([0-9]*\).*/\1/p')
[ "$before" = "$after" ] || fail "a refused line stepped the host: $before -> $after"

echo "== readable output: a terminal's default, or --readable"
run 0 "$ctl" -s "$sock" --readable status
[[ $(echo "$out" | head -n 1) == "step $after  commanded"* ]] || fail "readable status: $out"
<<<"$out" grep -q '^game counter  build ' || fail "readable status game line: $out"
if command -v script >/dev/null; then
  tty_out=$(script -qec "$ctl -s $sock status" /dev/null | tr -d '\r')
  [[ $(echo "$tty_out" | head -n 1) == "step $after  commanded"* ]] || fail "status on a terminal: $tty_out"
fi

echo "== server errors exit 1"
run 1 "$ctl" -s "$sock" step 0
[[ $out == "error  count_zero: "* ]] || fail "step 0: $out"
run 1 "$ctl" -s "$sock" step 1.5
[[ $out == *count_not_whole*"got 1.5"* ]] || fail "step 1.5: $out"
run 1 "$ctl" -s "$sock" step 1001
[[ $out == *count_above_maximum* ]] || fail "step 1001: $out"
run 1 "$ctl" -s "$sock" step 1e300
[[ $out == *count_not_integer* ]] || fail "step 1e300: $out"
run 1 "$ctl" -s "$sock" --json '{"cmd":"step","count":01}'
[[ $out == '{"ok":false,"error":"not_json",'* ]] || fail "count 01: $out"
run 1 "$ctl" -s "$sock" step 9007199254740992
[[ $out == *count_too_large* ]] || fail "step 2^53: $out"
run 1 "$ctl" -s "$sock" --json '{"cmd":"step","count":1,"count":5}'
[[ $out == '{"ok":false,"error":"not_json",'*duplicate* ]] || fail "duplicate key: $out"
run 1 "$ctl" -s "$sock" --json '{"cmd":"step\u0000junk","count":1}'
[[ $out == '{"ok":false,"error":"not_json",'* ]] || fail "NUL in cmd: $out"
run 1 "$ctl" -s "$sock" step
[[ $out == *count_missing* ]] || fail "step: $out"
run 1 "$ctl" -s "$sock" fly speed=3 name=x
[[ $out == 'error  unknown_command: unknown command "fly"' ]] || fail "fly: $out"
run 1 "$ctl" -s "$sock" --json '{"cmd":"status"'
[[ $out == '{"ok":false,"error":"not_json",'* ]] || fail "broken JSON: $out"

echo "== usage errors exit 2"
run 2 env -u CRADLE_SOCKET "$ctl" status
run 2 "$ctl" --bogus
run 2 "$ctl" -s "$sock" step 1 2
run 2 "$ctl" -s "$sock" --timeout zero status
run 2 "$ctl" -s "$sock" --file /nonexistent/script
"$ctl" --help | grep usage >/dev/null # all of it: grep -q would close the pipe early (SIGPIPE)
"$ctl" --version | grep -q cradlectl

echo "== script mode"
printf 'status\n# a comment\n\nstep 5\n{"cmd":"step","count":1.5}\nstatus\n' >"$dir/script"
run 1 "$ctl" -s "$sock" <"$dir/script"
[ "$(echo "$out" | wc -l)" -eq 4 ] || fail "script replies: $out"
[[ $(echo "$out" | tail -n 1) == "ok  step=20 "* ]] || fail "script end: $out"
printf 'step 2\nstatus\n' >"$dir/good"
run 0 "$ctl" -s "$sock" --json --file "$dir/good"
[[ $(echo "$out" | head -n 1) == '{"ok":true,"step":22}' ]] || fail "--file: $out"

echo "== no server, live and stale sockets"
run 1 "$ctl" -s "$dir/none.sock" status
grep -q "no server listens at $dir/none.sock" "$dir/stderr" || fail "no server message: $(cat "$dir/stderr")"
run 1 host --commanded --dev-socket "$sock"
grep -q "already listening" "$dir/stderr" || fail "live socket message: $(cat "$dir/stderr")"
run 0 "$ctl" -s "$sock" status  # the first host is unharmed

echo "== quit"
run 0 "$ctl" -s "$sock" quit
[ "$out" = "ok  step=22 replay_equal=true" ] || fail "quit: $out"
wait_host 0
grep -q '"event":"done","steps":22,' "$dir/out" || fail "done line: $(cat "$dir/out")"
[ ! -e "$sock" ] || fail "socket not removed"

echo "== stale socket replaced, SIGTERM removes it"
start_host --commanded --dev-socket "$sock"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
pid=""
[ -S "$sock" ] || fail "killed host left no socket (test assumption)"
start_host --commanded --dev-socket "$sock"
run 0 "$ctl" -s "$sock" step 3
kill -TERM "$pid"
wait_host 0
[ ! -e "$sock" ] || fail "socket not removed after SIGTERM"

echo "== a file that is not a socket is refused"
touch "$sock"
run 1 host --commanded --dev-socket "$sock"
grep -q "not our socket" "$dir/stderr" || fail "foreign file message: $(cat "$dir/stderr")"
rm -f "$sock"

echo "== commanded over stdin"
out=$(printf '{"cmd":"status"}\n{"cmd":"step","count":7,"id":1}\n{"cmd":"nope"}\n{"cmd":"quit"}\n' |
  host --dev-stdin --json 2>"$dir/err")
[ "$(echo "$out" | wc -l)" -eq 4 ] || fail "stdin replies: $out"
[ "$(echo "$out" | sed -n 2p)" = '{"ok":true,"id":1,"step":7}' ] || fail "stdin step: $out"
[[ $(echo "$out" | sed -n 3p) == '{"ok":false,"error":"unknown_command",'* ]] || fail "stdin unknown: $out"
[ "$(echo "$out" | sed -n 4p)" = '{"ok":true,"step":7,"replay_equal":true}' ] || fail "stdin quit: $out"
grep -q '"event":"done","steps":7,' "$dir/err" || fail "stdin done line: $(cat "$dir/err")"
# End of input ends the host as quit does.
out=$(printf '{"cmd":"step","count":2}' | host --dev-stdin 2>/dev/null)
[ "$out" = '{"ok":true,"step":2}' ] || fail "stdin EOF: $out"
run 2 host --commanded

echo "== paced mode with a socket"
start_host --paced --steps 6000 --json --dev-socket "$sock"
run 0 "$ctl" -s "$sock" status
[[ $out == *"mode=paced"* ]] || fail "paced status: $out"
run 1 "$ctl" -s "$sock" step 1
[[ $out == "error  wrong_state: "* ]] || fail "paced step: $out"
run 0 "$ctl" -s "$sock" quit
wait_host 0
grep -q '"replay_equal":true' "$dir/out" || fail "paced done: $(cat "$dir/out")"
[ ! -e "$sock" ] || fail "paced socket not removed"

echo "cradlectl ok"
