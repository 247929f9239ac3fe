#!/usr/bin/env bash
# cradle-client --play LOG --headless --seek STEP: the state at any step of a
# counter session across two hot reloads (+1, +5 from step 1000, +1 again
# from step 2000), forward and back, is the state a plain play to that step
# reaches, with the build of that step in charge. The first seek builds the
# log's keyframe index beside it; the next ones load it and restore the
# keyframe before the step; a damaged index is built again, never used.
#   client_play_seek.sh CRADLE_RECORD CRADLE_CLIENT INC1 INC5
set -euo pipefail
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 client=$2 inc1=$3 inc5=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { # field LINE KEY: a flat JSON line's value
  sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$1"
}
"$record" --game "$inc1" --log c.log --players 3 --steps 3000 --reload 1000:"$inc5" --reload 2000:"$inc1" \
  --index-interval 0 2>/dev/null
[ ! -e c.log.index ] # none: --play builds it
# the reference: a plain play from step 0, stopped after STEP steps
plain() { "$client" --play c.log --headless --steps "$1" 2>/dev/null | grep '"event":"played"'; }
seek() { "$client" --play c.log --headless --seek "$1" 2>seek.err | grep '"event":"played"'; }
build_inc1=$(field "$(seek 10)" build)
first=true
for step in 2500 1500 700 2999 1001 1999 2000 1200; do
  line=$(seek "$step")
  echo "seek $step: $line"
  [ "$(field "$line" verdict)" = ok ] || fail "seek $step: $line"
  [ "$(field "$line" next_step)" = "$step" ] || fail "seek $step ended at another step: $line"
  ref=$(plain "$step")
  [ "$(field "$line" final_hash)" = "$(field "$ref" final_hash)" ] ||
    fail "seek $step: hash $(field "$line" final_hash), a plain play there $(field "$ref" final_hash)"
  # the build of the step: +5 from 1000 to 1999 (its records handled: a reload at 2000 has happened at 2000)
  if [ "$step" -ge 1000 ] && [ "$step" -lt 2000 ]; then want=inc5; else want=inc1; fi
  if [ $want = inc1 ]; then [ "$(field "$line" build)" = "$build_inc1" ]; else [ "$(field "$line" build)" != "$build_inc1" ]; fi
  if $first; then # the first seek of all (seek 10 above) built it
    [ "$(field "$line" index)" = loaded ] || fail "the second seek did not load the index: $line"
    first=false
  fi
  if [ "$step" -ge 1200 ]; then [ "$(field "$line" keyframe_seeks)" = 1 ] || fail "seek $step: no keyframe: $line"; fi
done
[ -s c.log.index ]
# the end: the state after the last step, as a whole play's
line=$(seek 3000)
[ "$(field "$line" final_hash)" = "$(field "$(plain 3000)" final_hash)" ]
# a damaged index: refused, built again, the seek still right
printf 'XX' | dd of=c.log.index bs=1 seek=100 conv=notrunc 2>/dev/null
line=$(seek 2500)
[ "$(field "$line" index)" = rebuilt ] || fail "a damaged index was used: $line"
grep -q 'checksum mismatch' seek.err || { cat seek.err; fail "no reason given for the rebuild"; }
[ "$(field "$line" final_hash)" = "$(field "$(plain 2500)" final_hash)" ]
# usage
set +e
"$client" --seek 5 --game "$inc1" 2>err; rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- '--seek is for --play' err
echo "client play seek ok"
