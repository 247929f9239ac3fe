#!/usr/bin/env bash
# Hot reload in a hosted session: the server notices the rebuilt file and
# swaps the counter (+1 per step) for the rebuild (+5 per step) between two
# steps, tells the clients, and they
# switch at the same step and stay on the server's hash. A library of another
# game is refused and the session goes on with the old build. The log records
# the reload and replays with the archived builds.
set -euo pipefail
server=$1 client=$2 inc1=$3 inc5=$4 other=$5 ctl=$6 replay=$7
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
install_game() { cp "$1" game.so.tmp && mv -f game.so.tmp game.so; }
ctl() { "$ctl" --socket dev.sock --json "$@"; }

install_game "$inc1"
start_server --game "$PWD/game.so" --mode commanded --players 2 --dev-socket dev.sock --log r.log --hash-interval 10
build1=$(json_field "$(ctl status)" build)
"$client" --port "$PORT" --game "$PWD/game.so" --steps 200 --timeout-ms 20000 >a.out 2>a.err & a=$!
"$client" --port "$PORT" --game "$PWD/game.so" --spectator --steps 200 --timeout-ms 20000 >s.out 2>s.err & s=$!
joins_at_least() { [ "$(json_field "$(ctl status)" joins)" -ge "$1" ]; }
wait_until 30 "two clients to join" joins_at_least 2
ctl step 50 >/dev/null
# The rebuild is picked up by the server's own watch (settle, then load),
# the path a developer's build takes. (A cradlectl reload here would race
# with it: both would reload, twice in the log.)
install_game "$inc5"
reloaded() { [ "$(json_field "$(ctl status)" reloads)" -ge 1 ]; }
wait_until 30 "the server to reload the rebuild" reloaded
build5=$(json_field "$(ctl status)" build)
[ "$build5" != "$build1" ] || { echo "the build did not change"; exit 1; }
ctl status | grep '"last_reload":"swapped to build' >/dev/null
ctl step 150 >/dev/null
wait $a; wait $s
server_hash=$(json_field "$(ctl hash)" hash)
for name in a s; do
  line=$(grep '"event":"done"' $name.out) || { cat $name.out $name.err; exit 1; }
  echo "$name: $line"
  [ "$(json_field "$line" build)" = "$build5" ]
  [ "$(json_field "$line" final_hash)" = "$server_hash" ]
done

# Another game's library is refused; the session keeps the running build.
install_game "$other"
out=$(ctl reload) && { echo "reload of another game accepted: $out"; exit 1; }
<<<"$out" grep -q '"error":"game_mismatch"'
ctl status | grep '"last_reload":"refused' >/dev/null
[ "$(json_field "$(ctl status)" build)" = "$build5" ]
[ "$(json_field "$(ctl step 10)" step)" = 210 ]
grep -q "keeps running the old build" server.err
ctl quit >/dev/null
wait "$SERVER_PID"
out=$("$replay" --json r.log)
echo "$out"
<<<"$out" grep -q '"verdict":"ok"'
<<<"$out" grep -q '"reloads":1'
echo "server reload ok"
