#!/usr/bin/env bash
# The issue's scenario with the sample game: a designer edits vanguard's
# waves.json while a session with two players runs. The server (its --data
# on a copy of shared/games/vanguard/data) applies the edit between two
# steps; both players apply it at the same step (their output bytes are the
# same, and the replay's); the edit shows in the game (the first wave comes
# later); a broken edit is refused with its line and field, seen on the
# event stream, and the game plays on; the replay of the session reproduces
# it byte for byte from the archived files.
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4 replay=$5 source_data=$6
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
watcher=
trap '[ -n "$watcher" ] && kill "$watcher" 2>/dev/null; stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }
waves=data/vanguard/waves.json
# A designer's save: the edited file renamed into place, as editors do.
save() { sed "$1" "$waves" >"$waves.tmp" && mv -f "$waves.tmp" "$waves"; }
count_at_least() { [ "$(json_field "$(ctl status)" "$1")" -ge "$2" ]; }
# wave_at FILE STEP: the u32 wave of vanguard's 77-byte output record of STEP
wave_at() { od -An -tu4 -j $(($2 * 77 + 16)) -N4 "$1" | tr -d ' '; }

cp -r "$source_data" data
start_server --game "$game" --data "$PWD/data" --mode commanded --players 2 --dev-socket dev.sock \
  --log session.log
[ "$(json_field "$(ctl status)" data_applied)" -eq 2 ] # waves.json and tuning.json, before step 0
"$ctl" --socket dev.sock watch data >events.txt & watcher=$!
subscribed() { grep -q '^ok  events=\["data"\]' events.txt; }
wait_until 20 "the data event subscription" subscribed
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --bot --seed 5 --steps 400 \
  --output a.bin >a.out 2>a.err & a=$!
"$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$game" --bot --seed 6 --steps 400 \
  --output b.bin >b.out 2>b.err & b=$!
wait_until 30 "two players to join" count_at_least joins 2
ctl step 20 >/dev/null

# The first wave now comes after 120 steps instead of 60.
save 's/"first_wave_steps": 60/"first_wave_steps": 120/'
wait_until 20 "the edit to apply" count_at_least data_applied 3
ctl step 80 >/dev/null

# A typo: refused with its line and field; the session keeps the edit before it.
save 's/"boss_every": 5/"boss_evry": 5/'
wait_until 20 "the typo to be refused" count_at_least data_refusals 1
ctl status | grep 'vanguard/waves.json:5: unknown field \\"boss_evry\\"' >/dev/null
grep -q 'vanguard/waves.json:5: unknown field "boss_evry"; the session keeps the data it had' server.err
ctl step 300 >/dev/null
wait $a; wait $b
server_hash=$(json_field "$(ctl hash)" hash)
for name in a b; do
  line=$(grep '"event":"done"' $name.out) || { cat $name.out $name.err; exit 1; }
  [ "$(json_field "$line" final_hash)" = "$server_hash" ]
done
ctl quit >/dev/null
wait "$SERVER_PID"
wait "$watcher" || true
watcher=
grep -q 'step 20  *data  *vanguard/waves.json (.*) applied at step 20' events.txt
grep -q 'step 100  *data  *error: vanguard/waves.json:5: unknown field "boss_evry"' events.txt

# Both players ran the same steps with the same data; the edit shows: no wave
# yet at step 110 (the built-in data starts wave 1 at step 60), wave 1 at 150.
cmp a.bin b.bin
[ "$(wave_at a.bin 110)" -eq 0 ]
[ "$(wave_at a.bin 150)" -eq 1 ]
"$replay" --changes --output replay.bin --to 399 session.log 2>changes.txt
grep -q 'data vanguard/waves.json (.*) applied before step 20$' changes.txt
cmp a.bin replay.bin
echo "vanguard data ok"
