#!/usr/bin/env bash
# Record -> replay -> golden, end to end, with the real tools:
#   log_replay.sh CRADLE_RECORD CRADLE_REPLAY COUNTER_SO COUNTER_INC5_SO GOLDEN_DIR
# Every counter session with a full golden file in GOLDEN_DIR/corpus.txt is
# recorded with cradle-record and replayed with cradle-replay against its
# committed golden file (the live output and --bless must give its bytes too).
# Then the failure paths: a changed output, a flipped log byte, a torn tail,
# the wrong library, a missing archived build, bad scripts and bad flags.
# Re-bless the golden files with tools/bless.sh (tests/README.md).
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
record=$1 replay=$2 counter=$3 inc5=$4 golden=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect RC CMD...: runs CMD, keeps stdout/stderr in $work/out, $work/err.
expect() {
  local want=$1; shift
  set +e; "$@" >"$work/out" 2>"$work/err"; local rc=$?; set -e
  if [ "$rc" -ne "$want" ]; then
    cat "$work/err" >&2
    fail "exit $rc, expected $want: $*"
  fi
}
# flip FILE OFFSET: inverts every bit of one byte.
flip() {
  local b; b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf '%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
has() { grep -q -- "$1" "$work/err" || { cat "$work/err" >&2; fail "stderr lacks '$1'"; }; }

record_session() { # name seed players steps input(random|FILE.input) reloads(-|STEP:inc5) [extra args]
  local name=$1 seed=$2 players=$3 steps=$4 script=$5 reload=$6; shift 6
  local args=(--game "$counter" --log "$work/$name.log" --seed "$seed" --players "$players"
              --steps "$steps" --hash-interval 20)
  [ "$script" = - ] || [ "$script" = random ] || args+=(--script "$golden/$script")
  case $reload in
    -) ;;
    *:inc5) args+=(--reload "${reload%:inc5}:$inc5") ;;
    *) fail "$name: reloads '$reload': this script knows one reload to inc5" ;;
  esac
  expect 0 "$record" "${args[@]}" "$@"
}

# 1. every counter session with a full golden file records and replays to it
n=0
while read -r name game seed players steps script reload kind; do
  case "$name" in ''|'#'*) continue ;; esac
  [ "$game" = counter ] && [ "$kind" = full ] || continue
  record_session "$name" "$seed" "$players" "$steps" "$script" "$reload" --output "$work/$name.live"
  expect 0 "$replay" --golden "$golden/$name.golden" --json "$work/$name.log"
  grep -q '"verdict":"ok"' "$work/out" || fail "$name: $(cat "$work/out")"
  grep -q "\"steps\":$steps," "$work/out" || fail "$name steps: $(cat "$work/out")"
  grep -q '"log_end":"closed"' "$work/out" || fail "$name end: $(cat "$work/out")"
  grep -q '"final_hash_equal":true' "$work/out" || fail "$name final hash"
  [ "$reload" != - ] && { grep -q '"reloads":1' "$work/out" || fail "$name did not switch builds"; }
  # the live run's output is the replay's output
  cmp -s "$work/$name.live" "$golden/$name.golden" || fail "$name: live output differs from golden"
  # --bless writes exactly the golden bytes
  expect 0 "$replay" --bless "$work/$name.blessed" "$work/$name.log"
  cmp -s "$work/$name.blessed" "$golden/$name.golden" || fail "$name: blessed output differs"
  n=$((n + 1))
done < "$golden/corpus.txt"
[ "$n" -ge 4 ] || fail "only $n sessions"
echo "golden sessions ok ($n)"

# 2. a changed output fails with the first differing byte and its step
# (counter output is 24 bytes per step, so byte 2413 is in step 100)
cp "$golden/one_player.golden" "$work/changed.golden"
flip "$work/changed.golden" 2413
expect 1 "$replay" --golden "$work/changed.golden" "$work/one_player.log"
has "first difference at byte 2413 (step 100)"
has "golden"; has "replay"; has "FAILED"
# another session's golden differs too; a shorter output is reported at its end
expect 1 "$replay" --golden "$golden/three_join.golden" "$work/one_player.log"
has "first difference at byte"
expect 1 "$replay" --golden "$golden/one_player.golden" --to 99 "$work/one_player.log"
has "first difference at byte 2400 (step 100)"
# a range of steps gives exactly that slice of the output
expect 0 "$replay" --from 100 --to 199 --output "$work/slice" "$work/one_player.log"
dd if="$golden/one_player.golden" of="$work/slice.want" bs=24 skip=100 count=100 status=none
cmp -s "$work/slice" "$work/slice.want" || fail "--from/--to slice differs"
echo "golden differences ok"

# 3. a flipped byte in the middle of a log names the block's offset and step
record_session blocks 3 2 2000 - - --block-size 512
size=$(stat -c %s "$work/blocks.log")
cp "$work/blocks.log" "$work/flipped.log"
flip "$work/flipped.log" $((size / 2))
expect 1 "$replay" --game "$counter" "$work/flipped.log"
has "damaged block at byte"; has "from step"
# a torn tail recovers the complete steps and replays them
head -c $((size - 700)) "$work/blocks.log" > "$work/torn.log"
expect 0 "$replay" --game "$counter" --json "$work/torn.log"
has "recovered"; has "ignored the tail from byte"
grep -q '"log_end":"torn"' "$work/out" || fail "torn: $(cat "$work/out")"
echo "damage and tails ok"

# 4. the wrong library is refused with both build ids, unless --force
expect 1 "$replay" --game "$inc5" "$work/one_player.log"
has "the log needs game 'counter' build"; has "--force"
expect 1 "$replay" --game "$inc5" --force "$work/one_player.log"
has "state hash differs first at step 19"
# without the archived builds, --game must be given; a missing reload build fails
mv "$work/reload_inc5.log.builds" "$work/hidden.builds"
expect 1 "$replay" "$work/reload_inc5.log"
has "pass --game"
expect 1 "$replay" --game "$counter" "$work/reload_inc5.log"
has "switches to build"
mv "$work/hidden.builds" "$work/reload_inc5.log.builds"
echo "library checks ok"

# 5. bad scripts name the line; bad flags exit 2
printf '0 0 01\n5 0 zz\n' > "$work/bad1.input"
expect 1 "$record" --game "$counter" --log "$work/bad.log" --script "$work/bad1.input"
has "bad1.input:2:"; has "not hex"
printf '10 0 01\n5 0 02\n' > "$work/bad2.input"
expect 1 "$record" --game "$counter" --log "$work/bad.log" --script "$work/bad2.input"
has "bad2.input:2:"; has "sorted"
printf '0 3 01\n' > "$work/bad3.input"
expect 1 "$record" --game "$counter" --log "$work/bad.log" --players 2 --script "$work/bad3.input"
has "bad3.input:1:"; has "not present"
[ ! -e "$work/bad.log" ] || fail "a refused script left a log behind"
expect 1 "$record" --game "$counter" --log "$work/one_player.log"
has "exists"
expect 2 "$record" --game "$counter" --log "$work/x.log" --players 0
has "--players"
expect 2 "$replay" --from 5 --to 4 "$work/one_player.log"
expect 2 "$replay"
expect 2 "$replay" --bogus "$work/one_player.log"
expect 0 "$replay" --help; grep -q usage "$work/out" || fail "--help"
expect 0 "$replay" --version; grep -q cradle-replay "$work/out" || fail "--version"
expect 0 "$record" --version; grep -q cradle-record "$work/out" || fail "--version"
echo "usage ok"
echo "log replay ok"
