#!/usr/bin/env bash
# The browser's viewer end to end: a secure server broadcasts vanguard with
# two bots to an nginx origin; headless Chromium opens the edge's
# viewer.html on it (viewer_chromium.mjs drives it over the DevTools
# protocol) and watches: the page loads the game's WebAssembly twin that the
# server uploaded, verifies every fragment's signature with the pinned key,
# and reaches a step whose state hash equals the server's (cradle-replay of
# the server's log to that step). The session then reloads to another build
# (vanguard_rapid, its twin beside it): the page follows, handing the viewer
# to that build's twin, and watches to the end, where its hash is the
# server's final one. The ended broadcast, without the HUD, is compared
# pixel by pixel with the native software renderer's frame of the same step
# (cradle-softframe). Copies of the broadcast with a damaged last fragment,
# and with a twin of another build under the announced name, are refused on
# the page, saying what and why.
set -euo pipefail
[ -n "${BROADCAST_TRACE:-}" ] && set -x
server=$1 client=$2 game=$3 ctl=$4 replay=$5 rapid=$6 softframe=$7 node=$8
here=$(cd "$(dirname "$0")" && pwd)
source "$here/broadcast_nginx.sh"
broadcast_need_nginx
[ -x /usr/bin/chromium ] || { echo "no /usr/bin/chromium: run tools/setup.sh" >&2; exit 1; }
for twin in "${game%.so}.wasm" "${rapid%.so}.wasm"; do
  [ -f "$twin" ] || { echo "$twin is missing: the build makes it (client/web; tools/setup.sh installs the toolchain)" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_server_on_exit
  stop_nginx "$work/edge" 2>/dev/null || true
  stop_nginx "$work/origin" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }
status_field() { json_field "$(ctl status)" "$1"; }
at_least() { [ "$(status_field "$1")" -ge "$2" ]; }
equals() { [ "$(status_field "$1")" = "$2" ]; }
page_said() { grep -q "\"event\":\"$1\"" "$2"; }
page_line() { grep "\"event\":\"$1\"" "$2"; }

# The game the server runs, its twin and sounds beside it: the reload
# later puts the other build's library and twin in their place.
mkdir -p game
cp "$game" game/vanguard.so
cp "${game%.so}.wasm" game/vanguard.wasm
cp -r "$(dirname "$game")/vanguard" game/ # its sounds and data files

start_origin "$work/origin"
start_edge "$work/edge" "$ORIGIN_URL"
start_server --game "$work/game/vanguard.so" --players 2 --dev-socket dev.sock --log session.log \
  --broadcast "$ORIGIN_URL/live/match" --broadcast-auth "$ORIGIN_SECRET_FILE" \
  --broadcast-fragment-ms 1000 --broadcast-keyframe-s 2
for seed in 3 4; do
  "$client" --headless --port "$PORT" "${CLIENT_SECURITY[@]}" --game "$work/game/vanguard.so" --bot --seed $seed \
    >bot$seed.out 2>bot$seed.err &
  pids+=($!)
done
wait_until 30 "two players" at_least joins 2
wait_until 30 "the twin on the origin" equals broadcast_web ok
wait_until 30 "two fragments" at_least broadcast_fragments 2
signer=$("$KEYS_BIN" pub server.key --sign)

# Watching live, with the key pinned.
"$node" "$here/viewer_chromium.mjs" live "$EDGE_URL" /live/match/ "$signer" "$work" >live.jsonl 2>live.err &
page=$!
pids+=("$page")
# The page's event, or the script ends at once when the page is gone.
page_event() {
  page_said "$1" live.jsonl && return 0
  kill -0 "$page" 2>/dev/null || { echo "the page (live) ended before \"$1\":" >&2; cat live.jsonl live.err >&2; exit 1; }
  return 1
}
wait_until 120 "the page to show the match" page_event live
live=$(page_line live live.jsonl)
[ "$(json_field "$live" hash_mismatches)" -eq 0 ]
[ "$(json_field "$live" signed)" = true ]
sound=$(page_line sound live.jsonl)
[ "$(json_field "$sound" decoded)" -eq "$(json_field "$sound" files)" ] # every WAV of the game's decoded

# The session reloads to vanguard_rapid: its twin first, then the library.
cp "${rapid%.so}.wasm" game/vanguard.wasm.new && mv game/vanguard.wasm.new game/vanguard.wasm
cp "$rapid" game/vanguard.so.new && mv game/vanguard.so.new game/vanguard.so
wait_until 30 "the server to reload" at_least reloads 1
wait_until 30 "the rapid build's twin on the origin" equals broadcast_web ok
wait_until 120 "the page to follow the reload" page_event reloaded
wait_until 30 "three fragments after the reload" at_least broadcast_fragments $(($(status_field broadcast_fragments) + 3))
ctl quit >/dev/null
wait "$SERVER_PID"
rc=0
wait "$page" || rc=$?
[ "$rc" -eq 0 ] || { echo "the page (live) failed:" >&2; cat live.jsonl live.err >&2; exit 1; }
cat live.jsonl

# What the page reached is what the server ran: the hash at the live step,
# after the reload, and at the end.
server_hash_at() { json_field "$("$replay" --json --to "$1" session.log 2>/dev/null)" state_hash; }
for event in live reloaded; do
  line=$(page_line $event live.jsonl)
  step=$(json_field "$line" step)
  [ "$(server_hash_at "$step")" = "$(json_field "$line" hash)" ] ||
    { echo "$event: the page's hash at step $step is not the server's" >&2; exit 1; }
done
final_hash=$(json_field "$("$replay" --json session.log 2>/dev/null)" state_hash)
ended=$(page_line ended live.jsonl)
[ "$(json_field "$ended" hash)" = "$final_hash" ] || { echo "the page's final hash is not the server's" >&2; exit 1; }
[ "$(json_field "$ended" hash_mismatches)" -eq 0 ]
[ "$(json_field "$ended" hashes_checked)" -ge 10 ]
[ "$(json_field "$(page_line reloaded live.jsonl)" build)" != "$(json_field "$live" build)" ]

# The ended broadcast without the HUD against the native software renderer.
"$node" "$here/viewer_chromium.mjs" still "$EDGE_URL" /live/match/ "$softframe" session.log "$work" >still.jsonl 2>still.err ||
  { cat still.jsonl still.err >&2; exit 1; }
cat still.jsonl
still=$(page_line still still.jsonl)
[ "$(json_field "$still" differing)" -eq 0 ] ||
  { echo "the page's frame differs from the native one in $(json_field "$still" differing) pixels" >&2; exit 1; }

# A copy whose last fragment is damaged: refused, named, never shown.
root=$ORIGIN_ROOT/live
mkdir -p "$root/damaged"
cp -r "$root/match/." "$root/damaged/"
last=$(($(json_field "$(cat "$root/match/sync")" fragments) - 1))
printf 'X' | dd of="$root/damaged/frag/$last" bs=1 seek=60 conv=notrunc status=none
"$node" "$here/viewer_chromium.mjs" refused "$EDGE_URL" /live/damaged/ "^fragment $last: " >damaged.jsonl 2>damaged.err ||
  { cat damaged.jsonl damaged.err >&2; exit 1; }
cat damaged.jsonl
[ "$(json_field "$(page_line refused damaged.jsonl)" ended)" = false ]

# The same checks as --watch, in the browser: a copy with a fragment cut
# short, one with two fragments swapped, one whose sync names another
# session, and the broadcast watched with another key pinned. Each refusal
# is named on the page and nothing past it is shown.
bad_copy() {
  rm -rf "$root/$1"
  mkdir -p "$root/$1"
  cp -r "$root/match/." "$root/$1/"
}
bad_copy truncated
head -c -40 "$root/match/frag/$last" >"$root/truncated/frag/$last"
bad_copy swapped
cp "$root/match/frag/$((last - 1))" "$root/swapped/frag/$last"
cp "$root/match/frag/$last" "$root/swapped/frag/$((last - 1))"
bad_copy othersession
session=$(json_field "$(cat "$root/match/sync")" session)
sed -i "s/$session/$(printf '%032d' 7)/" "$root/othersession/sync"
refused_on_page() { # NAME PATH REGEX [KEY]
  "$node" "$here/viewer_chromium.mjs" refused "$EDGE_URL" "$2" "$3" ${4:+"$4"} >"$1.jsonl" 2>"$1.err" ||
    { cat "$1.jsonl" "$1.err" >&2; exit 1; }
  cat "$1.jsonl"
  [ "$(json_field "$(page_line refused "$1.jsonl")" ended)" = false ]
}
refused_on_page truncated /live/truncated/ "^fragment $last: truncated or damaged"
refused_on_page swapped /live/swapped/ "^fragment $((last - 1)): .*out of order or of another session"
refused_on_page othersession /live/othersession/ '^start: of another session'
refused_on_page otherkey /live/match/ '^(fragment|keyframe) [0-9]+: .*not signed by the pinned key' "$ISSUER_PUB"

# A copy whose announced twin is another build's (vanguard's under the
# rapid build's name): the hash is right, the build is not.
mkdir -p "$root/wrongtwin"
cp -r "$root/match/." "$root/wrongtwin/"
manifest=$(grep -o '"manifest":"[0-9a-f]*"' "$root/match/sync" | tail -1 | cut -d'"' -f4)
wasm=$(grep -o '"wasm":{"sha256":"[0-9a-f]*"' "$root/match/web/$manifest" | cut -d'"' -f6)
other=$(sha256sum "${game%.so}.wasm" | cut -c1-64)
cp "${game%.so}.wasm" "$root/wrongtwin/web/$other"
sed "s/$wasm/$other/; s/\"bytes\":[0-9]*}/\"bytes\":$(stat -c %s "${game%.so}.wasm")}/" "$root/match/web/$manifest" >forged.json
forged=$(sha256sum forged.json | cut -c1-64)
cp forged.json "$root/wrongtwin/web/$forged"
sed -i "s/$manifest/$forged/" "$root/wrongtwin/sync"
"$node" "$here/viewer_chromium.mjs" refused "$EDGE_URL" /live/wrongtwin/ 'is build ".*", the session announced ".*": refused' \
  >wrongtwin.jsonl 2>wrongtwin.err || { cat wrongtwin.jsonl wrongtwin.err >&2; exit 1; }
cat wrongtwin.jsonl
echo "viewer_chromium: ok"
