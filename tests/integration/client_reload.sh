#!/usr/bin/env bash
# Hot reload seen by cradle-client: the server swaps the counter (+1 per step)
# for a rebuild (+5 per step); the clients, watching the same library path,
# load the announced build at the announced step and end on the server's hash
# with the new build. A client whose library never becomes the announced
# build fails after its reload timeout with both build ids in the message.
set -euo pipefail
server=$1 client=$2 inc1=$3 inc5=$4 ctl=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
install_game() { cp "$1" "$2.tmp" && mv -f "$2.tmp" "$2"; }
ctl() { "$ctl" --socket dev.sock --json "$@"; }

install_game "$inc1" game.so
install_game "$inc1" stale.so
start_server --game "$PWD/game.so" --mode commanded --players 3 --dev-socket dev.sock --hash-interval 10
build1=$(json_field "$(ctl status)" build)
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$PWD/game.so" --bot --steps 200 >a.out 2>a.err & a=$!
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$PWD/game.so" --spectator --steps 200 >s.out 2>s.err & s=$!
# This one's library is never rebuilt: it must give up with both ids.
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$PWD/stale.so" --bot --steps 200 --reload-timeout 1500 >x.out 2>x.err & x=$!
joins_at_least() { [ "$(json_field "$(ctl status)" joins)" -ge "$1" ]; }
wait_until 30 "three clients to join" joins_at_least 3
ctl step 50 >/dev/null
install_game "$inc5" game.so
ctl reload | grep -q '"ok":true'
build5=$(json_field "$(ctl status)" build)
[ "$build5" != "$build1" ]
ctl step 150 >/dev/null
wait $a; wait $s
server_hash=$(json_field "$(ctl hash)" hash)
for name in a s; do
  line=$(grep '"event":"done"' $name.out) || { cat $name.out $name.err; exit 1; }
  echo "$name: $line"
  [ "$(json_field "$line" build)" = "$build5" ]
  [ "$(json_field "$line" final_hash)" = "$server_hash" ]
done
rc=0; wait $x || rc=$?
cat x.err
[ "$rc" -eq 1 ]
grep -q "server runs build '$build5'" x.err
grep -q "is build '$build1'" x.err
grep -q "after 1500 ms" x.err
ctl quit >/dev/null
wait "$SERVER_PID"
echo "client reload ok"
