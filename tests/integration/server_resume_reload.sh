#!/usr/bin/env bash
# --resume across a hot reload: a session recorded with a reload (+1 build,
# then the +5 build from step 100) resumes on the build it ended on, the new
# log holds the same reload, and cradle-replay verifies it; --game of the
# build it started on is refused, naming both builds, and leaves no new log.
set -euo pipefail
server=$1 record=$2 replay=$3 inc1=$4 inc5=$5 ctl=$6
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
work=$(mktemp -d)
trap 'stop_server_on_exit; rm -rf "$work"' EXIT
cd "$work"
ctl() { "$ctl" --socket dev.sock --json "$@"; }

"$record" --game "$inc1" --log a.log --players 2 --steps 200 --reload "100:$inc5" --hash-interval 10 2>record.err
start_server --game "$inc5" --resume a.log --log b.log --mode commanded --dev-socket dev.sock
grep "resume" server.err
grep -q "200 steps replayed, 20 hashes verified, 1 reloads; continuing at step 200" server.err
[ "$(json_field "$(ctl status)" step)" = 200 ]
ctl step 50 >/dev/null
ctl quit >/dev/null
wait "$SERVER_PID"
"$replay" --json b.log >replay.json 2>replay.err || { cat replay.err; exit 1; }
cat replay.json
[ "$(json_field "$(cat replay.json)" verdict)" = ok ]
[ "$(json_field "$(cat replay.json)" steps)" = 250 ]
[ "$(json_field "$(cat replay.json)" reloads)" = 1 ]

# The build it started on is not the build it ended on: refused, nothing left.
for try in 1 2 3 4 5; do # exit 3: the random port was taken, try another
  rc=0
  "$server" --bind 127.0.0.1 --port $((20000 + RANDOM % 12000)) "${SERVER_SECURITY[@]}" --game "$inc1" \
    --resume a.log --log c.log --mode commanded >refused.out 2>refused.err || rc=$?
  [ "$rc" -eq 3 ] || break
done
cat refused.err
[ "$rc" -eq 1 ]
grep -q "the session ended on build" refused.err
[ ! -e c.log ]
echo "resume across a reload ok"
