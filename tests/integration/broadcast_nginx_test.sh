#!/usr/bin/env bash
# The broadcast nginx pair from deploy/broadcast/ on loopback
# (broadcast_nginx.sh starts them), with curl:
#   - origin: a PUT without the secret, with a wrong one or with it in
#     another case, and any other method without it, is 403 and stores
#     nothing; with it, PUT is 201 (new) or 204 (replaced) and GET returns
#     the bytes; names outside the layout are 404, stored nowhere;
#   - Cache-Control and Content-Type for start, frag/, key/, data/, sync;
#   - edge: 50 concurrent GETs of a fresh fragment reach the origin at most
#     twice (proxy_cache_lock); a rewritten sync is seen within 5 s; PUT,
#     POST and DELETE through it are 405 and never reach the origin;
#   - origin killed: the edge still serves what it holds (sync as STALE),
#     502 for what it does not; restarted on the same port and root, it
#     serves and takes PUTs again, and the edge reaches it.
# Prints the origin-request count of the 50 GETs and how long the sync took.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/broadcast_nginx.sh"

fail() { echo "broadcast_nginx_test: FAIL: $*" >&2; exit 1; }
broadcast_need_nginx || fail "no usable nginx"
command -v curl >/dev/null || fail "curl not found: run tools/setup.sh (it installs curl)"

work=$(mktemp -d)
viewers_pid=
on_exit() {
  local rc=$?
  # Nginx first: a closed stderr (SIGPIPE) must not stop the cleanup.
  trap '' PIPE
  if [ -n "${viewers_pid:-}" ]; then # the viewers' curl, when it still runs
    kill -KILL "$viewers_pid" 2>/dev/null || true
    wait "$viewers_pid" 2>/dev/null || true
  fi
  [ -z "${ORIGIN_DIR:-}" ] || resume_origin 2>/dev/null || true
  stop_nginx "$work/edge" || true
  stop_nginx "$work/origin" || true
  if [ "$rc" -ne 0 ]; then
    for f in "$work"/origin/error.log "$work"/edge/error.log "$work"/origin/access.log "$work"/edge/access.log; do
      [ -s "$f" ] && { echo "--- last lines of $f" >&2; tail -n 8 "$f" >&2; }
    done
  fi
  rm -rf "$work"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# set -e stops silently at a failed command: say where.
trap 'echo "broadcast_nginx_test: command failed at line $LINENO" >&2' ERR

start_origin "$work/origin" || fail "the origin did not start"
start_edge "$work/edge" "$ORIGIN_URL" || fail "the edge did not start"
secret=$(cat "$ORIGIN_SECRET_FILE")
B=/live/match1
echo "origin $ORIGIN_URL, edge $EDGE_URL"

# req METHOD URL [curl args...]: prints the status; the body is in
# $work/body, the headers in $work/headers.
req() {
  local method=$1 url=$2
  shift 2
  local how=(-X "$method")
  [ "$method" = HEAD ] && how=(--head)
  curl -sS --max-time 10 -o "$work/body" -D "$work/headers" -w '%{http_code}' "${how[@]}" "$@" "$url"
}
header() { # NAME: its value in $work/headers
  sed -n "s/^$1: *//Ip" "$work/headers" | tr -d '\r'
}
expect_status() { # WHAT EXPECTED_RE METHOD URL [curl args...]
  local what=$1 want=$2 got
  shift 2
  got=$(req "$@") || fail "$what: curl failed"
  [[ $got =~ ^($want)$ ]] || fail "$what: status $got, expected $want"
}
put() { # NAME FILE [curl args]: PUT FILE to the origin's B/NAME with the secret
  local name=$1 file=$2
  shift 2
  req PUT "$ORIGIN_URL$B/$name" -H "X-Origin-Auth: $secret" --data-binary "@$file" "$@"
}
same_body() { # WHAT FILE: $work/body holds FILE's bytes
  cmp -s "$work/body" "$2" || fail "$1: the body is not the bytes put"
}

# ---- the origin refuses writers without the secret
head -c 256 /dev/urandom >"$work/start.bin"
expect_status "PUT without the secret" 403 PUT "$ORIGIN_URL$B/start" --data-binary "@$work/start.bin"
expect_status "PUT with a wrong secret" 403 PUT "$ORIGIN_URL$B/start" --data-binary "@$work/start.bin" \
  -H "X-Origin-Auth: 0000000000000000000000000000000000000000000000000000000000000000"
expect_status "PUT with the secret and more" 403 PUT "$ORIGIN_URL$B/start" --data-binary "@$work/start.bin" \
  -H "X-Origin-Auth: ${secret}0"
expect_status "PUT with part of the secret" 403 PUT "$ORIGIN_URL$B/start" --data-binary "@$work/start.bin" \
  -H "X-Origin-Auth: ${secret:0:63}"
if [ "${secret^^}" != "$secret" ]; then # map strings would match ignoring case
  expect_status "PUT with the secret in capitals" 403 PUT "$ORIGIN_URL$B/start" \
    --data-binary "@$work/start.bin" -H "X-Origin-Auth: ${secret^^}"
fi
expect_status "PUT with an empty X-Origin-Auth" 403 PUT "$ORIGIN_URL$B/start" \
  --data-binary "@$work/start.bin" -H "X-Origin-Auth;"
expect_status "DELETE without the secret" 403 DELETE "$ORIGIN_URL$B/start"
expect_status "POST without the secret" 403 POST "$ORIGIN_URL$B/start" --data-binary "@$work/start.bin"
[ -z "$(find "$ORIGIN_ROOT" -mindepth 1)" ] || fail "refused PUTs stored: $(find "$ORIGIN_ROOT" -mindepth 1)"

# ---- the writer stores, anyone reads
code=$(put start "$work/start.bin")
[ "$code" = 201 ] || fail "PUT start with the secret: status $code, expected 201"
expect_status "GET start" 200 GET "$ORIGIN_URL$B/start"
same_body "GET start" "$work/start.bin"
head -c 5000 /dev/urandom >"$work/frag0.bin"
head -c 9000 /dev/urandom >"$work/key0.bin"
head -c 70000 /dev/urandom >"$work/data.bin"
data_name=$(b2sum -l 256 "$work/data.bin" | cut -d' ' -f1)
printf '{"fragment":0,"keyframe":0,"tps":30}' >"$work/sync1.json"
for pair in frag/0:frag0.bin key/0:key0.bin "data/$data_name:data.bin" sync:sync1.json; do
  code=$(put "${pair%%:*}" "$work/${pair#*:}")
  [ "$code" = 201 ] || fail "PUT ${pair%%:*}: status $code, expected 201"
  expect_status "GET ${pair%%:*}" 200 GET "$ORIGIN_URL$B/${pair%%:*}"
  same_body "GET ${pair%%:*}" "$work/${pair#*:}"
done
printf '{"fragment":1,"keyframe":0,"tps":30}' >"$work/sync2.json"
code=$(put sync "$work/sync2.json")
[ "$code" = 204 ] || fail "PUT over sync: status $code, expected 204"
expect_status "GET sync rewritten" 200 GET "$ORIGIN_URL$B/sync"
same_body "GET sync rewritten" "$work/sync2.json"
expect_status "DELETE with the secret (PUT is the only write)" 405 DELETE "$ORIGIN_URL$B/start" \
  -H "X-Origin-Auth: $secret"
expect_status "GET start after DELETE" 200 GET "$ORIGIN_URL$B/start"
for name in other frag/01 frag/x key/ data/ABCD data/${data_name^^} start/; do
  code=$(put "$name" "$work/start.bin")
  [ "$code" = 404 ] || fail "PUT of $name, outside the layout: status $code, expected 404"
done
[ ! -e "$ORIGIN_ROOT$B/other" ] && [ ! -e "$ORIGIN_ROOT$B/frag/01" ] || fail "a name outside the layout was stored"
# A file not written yet is a 404 any cache keeps a second at most (a cache
# left to choose keeps it minutes: Varnish 120 s), sync as the others.
for missing in frag/999 key/999 "data/$(printf '%064d' 0)" start2/sync; do
  expect_status "GET of $missing, not written" 404 GET "$ORIGIN_URL$B/$missing"
  [ "$(header Cache-Control)" = "public, max-age=1" ] ||
    fail "a 404 for $missing carries Cache-Control \"$(header Cache-Control)\", expected \"public, max-age=1\""
done

# ---- headers, on GET and HEAD
immutable="public, max-age=31536000, immutable"
check_headers() { # NAME CACHE_CONTROL CONTENT_TYPE
  local method
  for method in GET HEAD; do
    expect_status "$method $1" 200 "$method" "$ORIGIN_URL$B/$1"
    [ "$(header Cache-Control)" = "$2" ] || fail "$method $1: Cache-Control \"$(header Cache-Control)\", expected \"$2\""
    [ "$(header Content-Type)" = "$3" ] || fail "$method $1: Content-Type \"$(header Content-Type)\", expected \"$3\""
  done
}
check_headers start "$immutable" application/octet-stream
check_headers frag/0 "$immutable" application/octet-stream
check_headers key/0 "$immutable" application/octet-stream
check_headers "data/$data_name" "$immutable" application/octet-stream
check_headers sync "public, max-age=1" application/json

# ---- the edge: a miss, then hits, with the origin's headers
before=$(origin_requests "$B/frag/0.*" GET)
expect_status "edge GET frag/0" 200 GET "$EDGE_URL$B/frag/0"
same_body "edge GET frag/0" "$work/frag0.bin"
[ "$(header X-Cache-Status)" = MISS ] || fail "edge first GET frag/0: X-Cache-Status $(header X-Cache-Status), expected MISS"
[ "$(header Cache-Control)" = "$immutable" ] || fail "edge frag/0: Cache-Control $(header Cache-Control)"
expect_status "edge GET frag/0 again" 200 GET "$EDGE_URL$B/frag/0?bust=1" -H "Cache-Control: no-cache"
[ "$(header X-Cache-Status)" = HIT ] || fail "edge second GET frag/0: X-Cache-Status $(header X-Cache-Status), expected HIT"
same_body "edge GET frag/0 again" "$work/frag0.bin"
[ "$(origin_requests "$B/frag/0.*" GET)" -eq $((before + 1)) ] ||
  fail "two edge GETs of frag/0 (one with a query and no-cache) did not make exactly one origin request"

# ---- 50 viewers miss the same fresh fragment at once
head -c 200000 /dev/urandom >"$work/frag1.bin"
code=$(put frag/1 "$work/frag1.bin")
[ "$code" = 201 ] || fail "PUT frag/1: status $code"
[ "$(origin_requests "$B/frag/1" GET)" -eq 0 ] || fail "frag/1 was read before the test"
mkdir "$work/viewers"
# They must all be in flight during the miss: the origin stalls (its worker
# stopped) until the edge has read all 50 requests, one curl sending them at
# once. Whoever is not the miss waits on the lock.
edge_port_hex=$(printf '%04X' "$EDGE_PORT")
edge_read_all() { # 50 connections at the edge, no request left unread
  awk -v p=":$edge_port_hex" '$4 == "01" && substr($2, length($2) - 4) == p {
      n++; split($5, q, ":"); if (q[2] != "00000000") unread++ }
    END { exit !(n == 50 && unread == 0) }' /proc/net/tcp
}
viewers=()
for i in $(seq 1 50); do viewers+=(-o "$work/viewers/$i.body" "$EDGE_URL$B/frag/1"); done
pause_origin
started=$EPOCHREALTIME
curl -sS --no-progress-meter --max-time 20 --parallel --parallel-immediate --parallel-max 50 \
  -w '%{http_code} %{time_total}\n' "${viewers[@]}" >"$work/viewers/status" 2>"$work/viewers/err" &
viewers_pid=$!
wait_until 15 "50 viewers' requests read by the edge" edge_read_all || fail "the 50 GETs were not all in flight at once"
stalled=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
resume_origin
wait "$viewers_pid" || { viewers_pid=; fail "the viewers' curl failed: $(cat "$work/viewers/err")"; }
viewers_pid=
elapsed=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
[ "$(wc -l <"$work/viewers/status")" -eq 50 ] || fail "not 50 transfers: $(cat "$work/viewers/status")"
while read -r code _; do
  [ "$code" = 200 ] || fail "a viewer got status $code"
done <"$work/viewers/status"
for i in $(seq 1 50); do
  cmp -s "$work/viewers/$i.body" "$work/frag1.bin" || fail "viewer $i: not the fragment's bytes"
done
times=$(cut -d' ' -f2 "$work/viewers/status" | sort -n |
  awk '{ t[NR] = $1 } END { printf "fastest %.3f s, median %.3f s, slowest %.3f s", t[1], t[int((NR + 1) / 2)], t[NR] }')
at_origin=$(origin_requests "$B/frag/1" GET)
# (a function: an argument "$(...)" would be read once, at the call)
edge_logged_50() { [ "$(edge_requests "$B/frag/1")" -eq 50 ]; }
wait_until 15 "50 edge log lines for frag/1" edge_logged_50
statuses=$(awk -v u="$B/frag/1" '$3 == u { n[$5]++ } END { for (s in n) printf " %d %s", n[s], s }' "$EDGE_DIR/access.log")
echo "50 concurrent GETs of a fresh fragment: $at_origin origin request(s); at the edge$statuses;" \
  "origin stalled $stalled s, all done after $elapsed s; viewers: $times"
[ "$at_origin" -ge 1 ] && [ "$at_origin" -le 2 ] || fail "50 concurrent GETs made $at_origin origin requests, expected 1 or 2"

# ---- a rewritten sync reaches viewers within 5 s
expect_status "edge GET sync" 200 GET "$EDGE_URL$B/sync"
same_body "edge GET sync" "$work/sync2.json"
[ "$(header Content-Type)" = application/json ] || fail "edge sync: Content-Type $(header Content-Type)"
printf '{"fragment":2,"keyframe":0,"tps":30}' >"$work/sync3.json"
code=$(put sync "$work/sync3.json")
[ "$code" = 204 ] || fail "PUT sync 3: status $code"
started=$EPOCHREALTIME
edge_sync_is() { # FILE
  [ "$(req GET "$EDGE_URL$B/sync")" = 200 ] && cmp -s "$work/body" "$1"
}
wait_until 5 "the edge to serve the rewritten sync" edge_sync_is "$work/sync3.json" ||
  fail "the edge still serves the old sync after 5 s"
echo "rewritten sync seen through the edge after $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s"

# ---- a sync written twice in one second, the edge fetching it in between
# Last-Modified (and nginx's ETag) have one-second resolution: an edge that
# revalidates (If-Modified-Since) is told "304 Not Modified" for the second
# write and keeps the first until a write in a later second (the session's
# last sync, "ended", never). So, once the edge's copy has expired, at the
# start of a second: write A, have the edge fetch it, write B. A try counts when the origin logged all three in one
# second, else it is made again.
origin_sync_times() { # METHOD: the seconds of the origin's METHOD requests of sync, one a line
  awk -v u="$B/sync" -v m="$1" '$2 == m && $3 == u { print int($1) }' "$work/origin/access.log"
}
origin_sync_gets() { origin_sync_times GET | wc -l; }
second_after() { [ "${EPOCHREALTIME%.*}" -gt "$1" ]; }
same_second=false
for try in 1 2 3 4 5; do
  # nginx keeps a copy fetched in second F until second F + 2 begins
  last_fetch=$(origin_sync_times GET | tail -1)
  wait_until 4 "the edge's copy of sync to expire" second_after $((last_fetch + 1)) || fail "the clock did not move"
  printf '{"fragment":%d,"keyframe":0,"tps":30}' $((10 + try)) >"$work/syncA.json"
  code=$(put sync "$work/syncA.json")
  [ "$code" = 204 ] || fail "PUT sync A: status $code"
  gets_before=$(origin_sync_gets)
  edge_fetched_sync() { req GET "$EDGE_URL$B/sync" >/dev/null; [ "$(origin_sync_gets)" -gt "$gets_before" ]; }
  wait_until 5 "the edge to fetch sync again" edge_fetched_sync || fail "the edge did not fetch sync again"
  printf '{"fragment":%d,"keyframe":1,"tps":30}' $((10 + try)) >"$work/sync4.json"
  code=$(put sync "$work/sync4.json")
  [ "$code" = 204 ] || fail "PUT sync B: status $code"
  seconds=$( (origin_sync_times PUT | tail -2; origin_sync_times GET | tail -1) | sort -u | wc -l)
  if [ "$seconds" = 1 ]; then same_second=true; break; fi
done
$same_second || fail "no try wrote sync twice in one second with the edge's fetch between, in 5"
wait_until 5 "the edge to serve the second of two syncs written in one second" edge_sync_is "$work/sync4.json" ||
  fail "the edge still serves the first of two syncs written in one second after 5 s (a 304 on revalidation?)"
echo "two syncs written in one second, the edge fetching between (try $try): the second seen through the edge"

# ---- nobody writes through the edge
puts_before=$(origin_requests ".*" "PUT|POST|DELETE")
for method in PUT POST DELETE; do
  expect_status "$method through the edge" 405 "$method" "$EDGE_URL$B/frag/7" \
    -H "X-Origin-Auth: $secret" --data-binary "@$work/start.bin"
  [ "$(header Allow)" = "GET, HEAD" ] || fail "$method through the edge: Allow \"$(header Allow)\""
done
[ ! -e "$ORIGIN_ROOT$B/frag/7" ] || fail "a PUT through the edge stored frag/7"
[ "$(origin_requests ".*" "PUT|POST|DELETE")" -eq "$puts_before" ] || fail "a write through the edge reached the origin"

# ---- the origin dies: the edge serves what it holds
kill_origin
broadcast__status "$ORIGIN_PORT" GET / >/dev/null && fail "the origin still answers after kill_origin"
expect_status "edge GET frag/0, origin down" 200 GET "$EDGE_URL$B/frag/0"
same_body "edge GET frag/0, origin down" "$work/frag0.bin"
[ "$(header X-Cache-Status)" = HIT ] || fail "edge frag/0, origin down: X-Cache-Status $(header X-Cache-Status)"
expect_status "edge GET frag/1, origin down" 200 GET "$EDGE_URL$B/frag/1"
same_body "edge GET frag/1, origin down" "$work/frag1.bin"
# sync expires a second after it was fetched; then it is served stale.
edge_sync_stale() {
  [ "$(req GET "$EDGE_URL$B/sync")" = 200 ] || fail "edge sync, origin down: status not 200"
  cmp -s "$work/body" "$work/sync4.json" || fail "edge sync, origin down: not the last sync"
  [ "$(header X-Cache-Status)" = STALE ]
}
wait_until 5 "the edge to serve sync as STALE with the origin down" edge_sync_stale ||
  fail "no STALE sync with the origin down"
expect_status "edge GET key/0 (never cached), origin down" 502 GET "$EDGE_URL$B/key/0"

# ---- the origin comes back on the same port, with the same files and secret
old_port=$ORIGIN_PORT
restart_origin || fail "restart_origin"
[ "$ORIGIN_PORT" = "$old_port" ] || fail "the origin came back on port $ORIGIN_PORT, not $old_port"
expect_status "GET frag/1 after the restart" 200 GET "$ORIGIN_URL$B/frag/1"
same_body "GET frag/1 after the restart" "$work/frag1.bin"
head -c 3000 /dev/urandom >"$work/frag2.bin"
code=$(put frag/2 "$work/frag2.bin")
[ "$code" = 201 ] || fail "PUT frag/2 after the restart: status $code"
edge_has_frag2() {
  [ "$(req GET "$EDGE_URL$B/frag/2")" = 200 ] && cmp -s "$work/body" "$work/frag2.bin"
}
wait_until 5 "the edge to fetch frag/2 from the restarted origin" edge_has_frag2 ||
  fail "the edge does not reach the restarted origin"
expect_status "edge GET key/0 after the restart" 200 GET "$EDGE_URL$B/key/0"
same_body "edge GET key/0 after the restart" "$work/key0.bin"
edge_sync_fresh() {
  [ "$(req GET "$EDGE_URL$B/sync")" = 200 ] && [[ $(header X-Cache-Status) =~ ^(HIT|MISS|REVALIDATED|EXPIRED)$ ]]
}
wait_until 5 "a fresh sync at the edge after the restart" edge_sync_fresh ||
  fail "the edge still serves sync stale after the restart"

stop_nginx "$EDGE_DIR" || fail "the edge did not quit gracefully"
stop_nginx "$ORIGIN_DIR" || fail "the origin did not quit gracefully"
[ -z "$(broadcast__master "$EDGE_DIR")$(broadcast__master "$ORIGIN_DIR")" ] || fail "nginx still runs after stop_nginx"
echo "broadcast_nginx_test: ok"
