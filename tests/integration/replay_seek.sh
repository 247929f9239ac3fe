#!/usr/bin/env bash
# cradle-replay's keyframe index and the slices it seeks to: a session of
# vanguard's 8 bots (cradle-record, which writes an index as it checks the
# log) and one of the counter across two hot reloads are indexed with --index; --from/--to then starts at the keyframe
# before --from and writes exactly the bytes a whole replay writes for those
# steps, the sync test passes on a slice, and a damaged, foreign or
# truncated index is refused with its byte offset and built again, never
# used. A log without an index replays a slice from step 0 as before.
#   replay_seek.sh CRADLE_RECORD CRADLE_REPLAY VANGUARD INC1 INC5
set -euo pipefail
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 replay=$2 vanguard=$3 inc1=$4 inc5=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { # RC CMD...: stdout in out, stderr in err
  local want=$1; shift
  set +e; "$@" >out 2>err; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat out err >&2; fail "exit $rc, expected $want: $*"; }
}
has() { grep -q -- "$1" "$2" || { cat "$2" >&2; fail "$2 lacks '$1'"; }; }

# --- vanguard, 8 bots, 6,000 steps; keyframes every 500 steps
"$record" --game "$vanguard" --log v.log --players 8 --bots --steps 6000 2>/dev/null
# cradle-record's check replay wrote the index (a keyframe every 1,200 steps)
[ -s v.log.index ]
expect 0 "$replay" --json --from 4321 --to 4400 v.log
has '"index":"loaded"' out; has '"start_step":3600,' out
expect 0 "$replay" --index --interval 500 --json v.log
has '"verdict":"ok"' out; has '"keyframes":12,' out; has '"interval":500,' out
has 'indexed 6000 steps' err
[ -s v.log.index ]
expect 0 "$replay" --output whole.bin v.log
per_step=$(( $(stat -c %s whole.bin) / 6000 ))

# slice SOURCE FROM TO: --from/--to through the index; its bytes are the whole replay's
slice() {
  local log=$1 from=$2 to=$3 whole=$4 per=$5
  expect 0 "$replay" --json --from "$from" --to "$to" --output slice.bin "$log"
  cmp slice.bin <(tail -c +$((from * per + 1)) "$whole" | head -c $(((to - from + 1) * per))) ||
    fail "$log --from $from --to $to: the slice differs from the whole replay's bytes"
}
slice v.log 4321 4800 whole.bin "$per_step"
has '"index":"loaded"' out; has '"start_step":4000,' out
has '"steps":801,' out # 4000..4800: from the keyframe, not from step 0
slice v.log 4000 4000 whole.bin "$per_step"
has '"start_step":4000,' out
slice v.log 120 130 whole.bin "$per_step" # before the first keyframe: from step 0
has '"start_step":0,' out
# the sync test on a slice: both runs (this process and the second) seek
expect 0 "$replay" --synctest --json --from 5100 --to 5400 v.log
has '"verdict":"ok"' out; has '"sync_equal":true' out; has '"start_step":5000,' out

# --- a damaged index: refused with its offset, built again, then used
cp v.log.index good.index
printf '\x00' | dd of=v.log.index bs=1 seek=2000 conv=notrunc 2>/dev/null
expect 0 "$replay" --json --from 3100 --to 3200 v.log
has '"index":"rebuilt"' out; has '"start_step":2400,' out # built again at the default interval, 1200
has 'index byte 64: keyframe checksum mismatch (damaged); built again' err
expect 0 "$replay" --json --from 3100 --to 3200 v.log
has '"index":"loaded"' out
# --- truncated: the same
head -c 10000 good.index >v.log.index
expect 0 "$replay" --json --from 3100 --to 3200 v.log
has '"index":"rebuilt"' out; has 'truncated' err
# --- another session's index: stale, refused and built again
"$record" --game "$vanguard" --log w.log --players 8 --bots --steps 600 --seed 2 --index-interval 0 2>/dev/null
[ ! -e w.log.index ]
expect 0 "$replay" --index w.log
cp w.log.index v.log.index
expect 0 "$replay" --json --from 3100 --to 3200 v.log
has '"index":"rebuilt"' out; has 'index byte 16: the index is of another session than this log (stale)' err
# --- no index: a slice from step 0, as before, and a note how to make one
rm v.log.index
expect 0 "$replay" --from 3100 --to 3200 --output none.bin v.log
has 'no keyframe index' err; has 'cradle-replay --index' err
[ ! -e v.log.index ] # nothing written unasked
# --- usage
expect 2 "$replay" --index --from 5 v.log
has '--index builds the index of the whole log' err
expect 2 "$replay" --interval 10 v.log
has '--interval is for --index' err
expect 2 "$replay" --index --interval 0 v.log

# --- the counter across two hot reloads (+1, +5, +1): slices on either side of both
"$record" --game "$inc1" --log c.log --players 3 --steps 3000 --reload 1000:"$inc5" --reload 2000:"$inc1" 2>/dev/null
expect 0 "$replay" --index --interval 300 c.log
expect 0 "$replay" --output cwhole.bin c.log
cper=$(( $(stat -c %s cwhole.bin) / 3000 ))
for range in "950 1050" "1210 1990" "2100 2999" "100 2500"; do
  set -- $range
  slice c.log "$1" "$2" cwhole.bin "$cper"
  has '"verdict":"ok"' out
done
has '"start_step":0,' out # "100 2500": before the first keyframe
slice c.log 2100 2999 cwhole.bin "$cper"
has '"start_step":2100,' out; has '"final_hash_equal":true' out
echo "replay seek ok"
