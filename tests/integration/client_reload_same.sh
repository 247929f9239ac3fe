#!/usr/bin/env bash
# A reload of the build already running is one act on server and clients
# (issue: a no-op rebuild desynced every client). Vanguard counts reloads in
# its state, so a host that skipped on_reload would end on another hash.
#  1. `cradlectl reload` of the unchanged file, four clients attached: the
#     server reloads the same build, every client runs on_reload at the same
#     step, and all end on the server's hash with no desync.
#  2. The same bytes copied over the library (a rebuild that changed nothing,
#     a touch): the server sees the change settle, finds the bytes of the
#     build in use and reloads nothing (status reload_unchanged).
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }
wait_status() { # KEY MIN: until status KEY >= MIN, at most 20 s
  local deadline=$((SECONDS + 20))
  until [ "$(json_field "$(ctl status)" "$1")" -ge "$2" ]; do
    [ $SECONDS -lt $deadline ] || { echo "status $1 stayed below $2"; ctl status; exit 1; }
    sleep 0.05
  done
}

cp "$game" game.so
start_server --game "$PWD/game.so" --mode commanded --players 4 --dev-socket dev.sock --hash-interval 10
build=$(json_field "$(ctl status)" build)
run_client() { # name args...
  local name=$1; shift
  "$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$PWD/game.so" --steps 300 \
    --silence-timeout 10000 "$@" >"$name.out" 2>"$name.err"
}
run_client a --bot --seed 1 & a=$!
run_client b --bot --seed 2 & b=$!
run_client c --bot --seed 3 & c=$!
run_client s --spectator & s=$!
wait_status joins 4
ctl step 100 >/dev/null
reply=$(ctl reload)
echo "$reply"
[ "$(json_field "$reply" swapped)" = true ]
[ "$(json_field "$reply" build)" = "$build" ]
ctl step 100 >/dev/null

cp "$game" game.so.new && mv -f game.so.new game.so
wait_status reload_unchanged 1
[ "$(json_field "$(ctl status)" reloads)" = 1 ]
ctl step 100 >/dev/null

for pid in $a $b $c $s; do
  rc=0; wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || { echo "a client exited $rc"; cat ./*.err; exit 1; }
done
server_hash=$(json_field "$(ctl hash)" hash)
for name in a b c s; do
  line=$(grep '"event":"done"' $name.out) || { cat $name.out $name.err; exit 1; }
  echo "$name: $line"
  [ "$(json_field "$line" desync)" = false ]
  [ "$(json_field "$line" reloads)" = 1 ]
  [ "$(json_field "$line" final_hash)" = "$server_hash" ]
done
[ "$(json_field "$(ctl status)" desyncs)" = 0 ]
ctl quit >/dev/null
wait "$SERVER_PID"
echo "client reload of the same build ok"
