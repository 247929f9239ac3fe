#!/usr/bin/env bash
# A broadcast through Varnish (Debian's varnishd, its built-in VCL, nothing
# configured), not nginx: "any cache that obeys Cache-Control works". The
# viewer arrives before the session: its first requests for sync are 404s,
# which Varnish left to itself keeps 120 s. The origin marks every
# not-yet-written broadcast file as kept a second at most, so the viewer
# sees the session within seconds of its start and watches it to the end,
# every recorded hash checked; frag/0 asked for before it existed is served
# once it does. Fragments go up at the cadence sync announces.
set -euo pipefail
server=$1 client=$2 game=$3 ctl=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/broadcast_nginx.sh"
broadcast_need_nginx
work=$(mktemp -d)
viewer=
cleanup() {
  [ -z "$viewer" ] || kill "$viewer" 2>/dev/null || true
  stop_varnish
  stop_server_on_exit
  stop_nginx "$work/origin" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }
at_least() { [ "$(json_field "$(ctl status)" "$1")" -ge "$2" ]; }
# code URL: the HTTP status of a GET through the cache; answers URL CODE: it is CODE.
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1" || true; }
answers() { [ "$(code "$1")" = "$2" ]; }

start_origin "$work/origin"
start_varnish "$work/varnish" "$ORIGIN_URL"
EDGE=$VARNISH_URL

# The viewer comes first; so does a request for frag/0.
"$client" --headless --watch "$EDGE/live/match" --game "$game" --delay 3 >viewer.out 2>viewer.err &
viewer=$!
wait_until 30 "the viewer's first request for sync" grep -q ' /live/match/sync 404 ' "$work/origin/access.log"
[ "$(code "$EDGE/live/match/frag/0")" = 404 ]

CRADLE_TEST_INSECURE=1 start_server --game "$game" --players 2 --dev-socket dev.sock --log session.log \
  --broadcast "$ORIGIN_URL/live/match" --broadcast-auth "$ORIGIN_SECRET_FILE"
"$client" --headless --port "$PORT" --insecure --game "$game" --bot --seed 3 >bot.out 2>bot.err &
bot=$!
wait_until 30 "frag/0 on the origin" at_least broadcast_fragments 1
# The 404 Varnish held for frag/0 is gone within its second (and the grace
# request that refreshes it).
wait_until 10 "frag/0 through Varnish" answers "$EDGE/live/match/frag/0" 200
wait_until 30 "the viewer to play the broadcast" grep -q -- '--watch: BROADCAST [0-9.]* S BEHIND: PLAYING' viewer.err
wait_until 60 "eight fragments" at_least broadcast_fragments 8
# The cadence is what sync says (the default, 2000 ms): the median time
# between the uploads of fragments 1 to 7, within a quarter of it (a busy
# machine delays some; the median holds).
grep -q '"fragment_ms":2000' "$ORIGIN_ROOT/live/match/sync" || { cat "$ORIGIN_ROOT/live/match/sync"; exit 1; }
median_ms=$(awk '$2 == "PUT" && $3 ~ /\/live\/match\/frag\/[1-7]$/ { n = $3; sub(/.*\//, "", n); t[n] = $1 }
  END { for (i = 2; i <= 7; i++) printf "%d\n", (t[i] - t[i - 1]) * 1000 }' "$work/origin/access.log" |
  sort -n | sed -n '3,4p' | awk '{ s += $1 } END { printf "%d", s / 2 }')
[ "$median_ms" -ge 1500 ] && [ "$median_ms" -le 2500 ] ||
  { echo "fragments every $median_ms ms (median), sync says 2000"; grep 'PUT .*/frag/' "$work/origin/access.log"; exit 1; }
ctl quit >/dev/null
wait "$SERVER_PID"
rc=0; wait "$viewer" || rc=$?
line=$(grep '"event":"watched"' viewer.out) || { cat viewer.out viewer.err; exit 1; }
viewer=
[ "$rc" -eq 0 ] || { echo "the viewer exited $rc: $line"; cat viewer.err; exit 1; }
[ "$(json_field "$line" verdict)" = ok ] && [ "$(json_field "$line" ended)" = true ] || { echo "$line"; exit 1; }
[ "$(json_field "$line" hash_mismatches)" -eq 0 ] && [ "$(json_field "$line" hashes_checked)" -ge 5 ] ||
  { echo "$line"; exit 1; }
# It plays at the delay it was given (3 s): the picture's median lateness
# past it is under a second (tools/bench/bench_broadcast.sh measures the p99).
[ "$(json_field "$line" over_delay_ms_p50)" -le 1000 ] || { echo "the viewer lags its delay: $line"; exit 1; }
wait "$bot" || true
# What the viewer fetched came through Varnish.
grep -q 'Via: 1.1 varnish' < <(curl -s -D - -o /dev/null "$EDGE/live/match/start") ||
  { echo "not served by Varnish"; exit 1; }
echo "broadcast_varnish: ok ($(json_field "$line" hashes_checked) hashes checked by a viewer who came early; a fragment every $median_ms ms)"
