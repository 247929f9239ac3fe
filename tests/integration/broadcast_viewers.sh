#!/usr/bin/env bash
# cradle-viewers (tools/cradle_viewers.c) against a live broadcast through an
# edge cache, and against damaged copies of it:
#   - usage: no --url, --viewers 0, an ftp:// URL and a --verify-key that is
#     not a key exit 2 naming the flag;
#   - a secure counter server broadcasts (paced, a keyframe every 2 s, a
#     fragment a second; every block and keyframe signed) to an nginx origin;
#     50 viewers that pin its key follow it through the edge while
#     8 more fragments are published; the server quits and the viewers see
#     "ended": exit 0, fragments and keyframes verified, nothing refused, all
#     50 saw the end with every fragment; the origin served at most 2 GETs per
#     fragment (the edge's cache lock holds the 50 viewers' misses); viewers
#     that pin another key refuse the first document they check;
#   - copies of the finished broadcast under the origin's root, listing no
#     keyframe (viewers start at fragment 0), with one byte of frag/1 flipped
#     or frag/1 cut short: the tool exits 1 and names "fragment 1".
set -euo pipefail
# shellcheck disable=SC2034 # start_server runs $server
server=$1 ctl=$2 game=$3 viewers=$4
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=broadcast_nginx.sh
source "$here/broadcast_nginx.sh"
broadcast_need_nginx
work=$(mktemp -d)
viewers_pid=
on_exit() {
  local rc=$?
  trap '' PIPE
  stop_server_on_exit
  if [ -n "$viewers_pid" ]; then
    kill -KILL "$viewers_pid" 2>/dev/null || true
    wait "$viewers_pid" 2>/dev/null || true
  fi
  stop_nginx "$work/edge" || true
  stop_nginx "$work/origin" || true
  if [ "$rc" -ne 0 ]; then
    for f in "$work"/viewers.out "$work"/viewers.err "$work"/server.err "$work"/bad.err "$work"/origin/error.log \
             "$work"/edge/error.log; do
      [ -s "$f" ] && { echo "--- last lines of $f" >&2; tail -n 8 "$f" >&2; }
    done
  fi
  rm -rf "$work"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'echo "broadcast_viewers: check failed at line $LINENO" >&2' ERR
fail() { echo "broadcast_viewers: FAIL: $*" >&2; exit 1; }
cd "$work"

# ---- usage
expect_usage() { # FLAG ARGS...: exit 2, the message names FLAG
  local flag=$1 rc=0
  shift
  "$viewers" "$@" >/dev/null 2>usage.err || rc=$?
  [ "$rc" -eq 2 ] || fail "expected exit 2 for $*, got $rc"
  grep -q -- "$flag" usage.err || fail "the message for $* does not name $flag: $(cat usage.err)"
}
expect_usage --url --viewers 3
expect_usage --viewers --url http://127.0.0.1:9/b --viewers 0
expect_usage --url --url ftp://127.0.0.1/b --viewers 3
expect_usage --poll-ms --url http://127.0.0.1:9/b --viewers 3 --poll-ms 5
expect_usage --verify-key --url http://127.0.0.1:9/b --viewers 3 --verify-key 12ab
"$viewers" --help | grep -- --connections >/dev/null # all of it: grep -q would close the pipe early (SIGPIPE)
"$viewers" --version | grep -q '^cradle-viewers '

# ---- a live broadcast through the edge
start_origin "$work/origin"
start_edge "$work/edge" "$ORIGIN_URL"
B=/live/m1
sync_file=$ORIGIN_ROOT$B/sync
start_server --game "$game" --mode paced --players 2 --dev-socket "$work/dev.sock" --log "$work/s.log" \
  --broadcast "$ORIGIN_URL$B" --broadcast-auth "$ORIGIN_SECRET_FILE" --broadcast-keyframe-s 2 \
  --broadcast-fragment-ms 1000
fragments() { # the fragment count the origin's sync document lists (0 before it exists)
  local n
  n=$(json_field "$(cat "$sync_file" 2>/dev/null)" fragments)
  echo "${n:-0}"
}
at_least() { [ "$(fragments)" -ge "$1" ]; }
wait_until 20 "the first fragment's sync document at the origin" at_least 1
signer=$("$KEYS_BIN" pub server.key --sign) # start_server made it, secure by default

"$viewers" --url "$EDGE_URL$B" --viewers 50 --seconds 60 --verify-key "$signer" --json >viewers.out 2>viewers.err &
viewers_pid=$!
first=$(fragments)
wait_until 30 "8 more fragments while the viewers watch" at_least $((first + 8))
"$ctl" --socket "$work/dev.sock" quit >/dev/null
server_gone() { ! kill -0 "$SERVER_PID" 2>/dev/null; }
wait_until 20 "the server to quit" server_gone
wait "$SERVER_PID" || fail "the server exited $?"
ended() { grep -q '"ended":true' "$sync_file"; }
wait_until 10 "the sync document to say ended" ended
viewers_done() { # exited (a zombie until waited for: /proc says Z)
  [ ! -e "/proc/$viewers_pid" ] || [ "$(awk '{ print $3 }' "/proc/$viewers_pid/stat" 2>/dev/null)" = Z ]
}
wait_until 70 "the viewers to see the end" viewers_done
rc=0
wait "$viewers_pid" || rc=$?
viewers_pid=
report=$(cat viewers.out)
echo "$report"
[ "$rc" -eq 0 ] || fail "cradle-viewers exited $rc: $(head -n 5 viewers.err)"
field() { json_field "$report" "$1"; }
[ "$(field fragments_verified)" -gt 0 ] || fail "no fragment verified"
[ "$(field keyframes_verified)" -gt 0 ] || fail "no keyframe verified"
[ "$(field refused)" -eq 0 ] || fail "$(field refused) documents refused"
[ "$(field viewers_ended)" -eq 50 ] || fail "$(field viewers_ended) of 50 viewers saw the end"
[ "$(field viewers_complete)" -eq 50 ] || fail "$(field viewers_complete) of 50 viewers have every fragment"
[ "$(field ok)" = true ] || fail "the report is not ok"
total=$(fragments)
at_origin=$(origin_requests "$B/frag/[0-9]+" GET)
echo "origin: $at_origin fragment GETs for $total fragments ($(field requests_frag) fragment requests at the edge)"
[ "$at_origin" -le $((2 * total)) ] || fail "$at_origin origin GETs for $total fragments: more than 2 per fragment"

# ---- another key pinned: nothing the server signed passes
rc=0
"$viewers" --url "$EDGE_URL$B" --viewers 2 --poll-ms 200 --seconds 3 --verify-key "$ISSUER_PUB" --json \
  >wrong.out 2>wrong.err || rc=$?
[ "$rc" -eq 1 ] || fail "another key: cradle-viewers exited $rc, expected 1: $(cat wrong.out wrong.err)"
grep -q "not signed by the pinned key" wrong.err || fail "another key: $(cat wrong.err)"
[ "$(json_field "$(cat wrong.out)" fragments_verified)" -eq 0 ] || fail "another key: fragments verified"
echo "another key: $(grep -m1 'not signed by the pinned key' wrong.err)"

# ---- damaged copies: no keyframe listed, so viewers take fragment 0, then 1
copy_broadcast() { # NAME: $ORIGIN_ROOT/live/NAME, the finished broadcast listing no keyframe
  local to=$ORIGIN_ROOT/live/$1
  cp -r "$ORIGIN_ROOT$B" "$to"
  sed -i 's/"keyframes":\[[^]]*\]/"keyframes":[]/' "$to/sync"
  grep -q '"keyframes":\[\]' "$to/sync" || fail "could not empty the keyframes of $to/sync"
  echo "$to"
}
expect_refused() { # NAME WHAT: the viewers refuse fragment 1 of live/NAME
  local rc=0
  "$viewers" --url "$EDGE_URL/live/$1" --viewers 3 --poll-ms 200 --seconds 3 --json >bad.out 2>bad.err || rc=$?
  [ "$rc" -eq 1 ] || fail "$2: cradle-viewers exited $rc, expected 1: $(cat bad.out bad.err)"
  grep -q "fragment 1: " bad.err || fail "$2: stderr does not name fragment 1: $(cat bad.err)"
  [ "$(json_field "$(cat bad.out)" refused)" -gt 0 ] || fail "$2: nothing counted refused"
  echo "$2: $(grep -m1 'fragment 1: ' bad.err)"
}
flipped=$(copy_broadcast flipped)
size=$(stat -c %s "$flipped/frag/1")
offset=$((size / 2))
byte=$(od -An -tu1 -j "$offset" -N1 "$flipped/frag/1" | tr -d ' ')
# shellcheck disable=SC2059 # the format is the byte
printf "\\$(printf '%03o' $((byte ^ 0x5a)))" | dd of="$flipped/frag/1" bs=1 seek="$offset" conv=notrunc status=none
cmp -s "$flipped/frag/1" "$ORIGIN_ROOT$B/frag/1" && fail "the byte was not flipped"
expect_refused flipped "a flipped byte in frag/1"
short=$(copy_broadcast short)
truncate -s $((size - 7)) "$short/frag/1"
expect_refused short "frag/1 cut short"
echo "broadcast_viewers: ok"
