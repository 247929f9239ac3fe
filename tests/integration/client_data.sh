#!/usr/bin/env bash
# Game data edited live (game_abi.h minor 4), seen by server, clients and the
# replay. The counter's data variant adds counter/bonus.json's bonus every
# step. A server with --data runs it; two players and a spectator join; the
# bonus file is edited mid-session and both players apply the new bytes at
# the same step as the server (their output bytes equal the replay's, their
# final hash the server's); a late joiner receives the state with the data
# in it; a broken edit is refused with its line and field and the session
# plays on with the old data; the log names both applications and replays
# byte for byte from the archived files. Offline, a reload to a build that
# declares data files applies them at the reload's step.
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4 replay=$5 record=$6 no_data_game=$7
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }
# An editor's save: the whole new file renamed into place.
edit() { printf '%s' "$1" >data/counter/bonus.json.tmp && mv -f data/counter/bonus.json.tmp data/counter/bonus.json; }
status_count() { json_field "$(ctl status)" "$1"; }
count_at_least() { [ "$(status_count "$1")" -ge "$2" ]; }

mkdir -p data/counter
edit '{"bonus": 2}'
start_server --game "$game" --data "$PWD/data" --mode commanded --players 2 --dev-socket dev.sock \
  --hash-interval 10 --log session.log
[ "$(status_count data_files)" -eq 1 ]
[ "$(status_count data_applied)" -eq 1 ] # bonus 2, before step 0
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --bot --seed 3 --steps 300 \
  --output a.bin >a.out 2>a.err & a=$!
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --bot --seed 4 --steps 300 \
  --output b.bin >b.out 2>b.err & b=$!
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --spectator --steps 300 \
  >s.out 2>s.err & s=$!
wait_until 30 "three clients to join" count_at_least joins 3
ctl step 100 >/dev/null

# The edit applies between two steps, announced to every client.
edit '{"bonus": -5}'
wait_until 20 "the edit to apply" count_at_least data_applied 2
ctl status | grep '"last_data":"counter/bonus.json (13 bytes, [0-9a-f]*) applied at step 100"' >/dev/null
ctl step 50 >/dev/null

# A late joiner: its state block holds the data.
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --spectator --steps 300 \
  >late.out 2>late.err & late=$!
wait_until 30 "the late joiner" count_at_least joins 4

# A broken edit: refused with its line and field; the session keeps bonus -5.
edit '{"bonus": -5,
  "bonsu": 1}'
wait_until 20 "the broken edit to be refused" count_at_least data_refusals 1
ctl status | grep '"last_data":"refused at step 150: counter/bonus.json:2: unknown field \\"bonsu\\""' >/dev/null
grep -q 'counter/bonus.json:2: unknown field "bonsu"; the session keeps the data it had' server.err
[ "$(status_count data_applied)" -eq 2 ]
ctl step 150 >/dev/null
wait $a; wait $b; wait $s; wait $late
server_hash=$(json_field "$(ctl hash)" hash)
for name in a b s late; do
  line=$(grep '"event":"done"' $name.out) || { cat $name.out $name.err; exit 1; }
  echo "$name: $line"
  [ "$(json_field "$line" final_hash)" = "$server_hash" ]
done
ctl quit >/dev/null
wait "$SERVER_PID"

# The log names which data ran which steps, and replays byte for byte.
"$replay" --changes --output replay.bin --to 299 session.log 2>changes.txt
cat changes.txt
grep -q 'data counter/bonus.json (12 bytes, [0-9a-f]*) applied before step 0$' changes.txt
grep -q 'data counter/bonus.json (13 bytes, [0-9a-f]*) applied before step 100$' changes.txt
[ "$(grep -c 'applied before step' changes.txt)" -eq 2 ]
cmp a.bin replay.bin
cmp b.bin replay.bin

# A build without data files reloaded to one with them: its files apply there.
edit '{"bonus": -5}'
"$record" --game "$no_data_game" --reload "50:$game" --data "$PWD/data" --log offline.log --steps 120 --json \
  >offline.out
grep -q '"data_applied":1' offline.out
"$replay" --changes offline.log 2>offline.txt
grep -q 'takes over before step 50$' offline.txt
grep -q 'data counter/bonus.json (13 bytes, [0-9a-f]*) applied before step 50$' offline.txt
echo "client data ok"
