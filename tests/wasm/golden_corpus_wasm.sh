#!/usr/bin/env bash
# golden_corpus_wasm.sh BUILD SOURCE NODE: native and wasm must agree. Every
# session of the golden corpus (tests/golden/corpus.txt) that runs in one
# build is recorded natively with cradle-record as golden_corpus.sh records
# it, replayed with cradle-replay --golden (the reference), then in NODE
# through its game's WebAssembly build (replay_<game>.wasm: replay_run.c)
# --golden the same file; the two must both match the golden file, write
# the same output bytes (cmp) and end in the same state (cradle_sim_hash:
# cradle-replay's "state_hash"), after as many steps and reloads.
# CORPUS_JOBS (default 2) sessions at a time. Then what must fail: a golden
# file with one byte changed (full and digest kind: native and wasm both
# fail, naming the same place), and a session that switches builds.
#
# Sessions that reload another build mid-session are skipped, and counted
# with why: a wasm module links one build (shared/io/reload_linked.c), and
# the page that plays such a session loads the next build's module. Reloads
# of the session's own build run (the module loads its build again: the
# game's on_reload runs as natively), and so do game data files (DATA
# records read LOG.data/ through WASI).
#
# BUILD is a build directory (its tools, game libraries and
# tests/wasm/replay_*.wasm), SOURCE the source tree. CORPUS_ONLY=REGEX keeps
# the sessions whose name matches (and skips the failure cases), as for
# golden_corpus.sh.
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) node=$3
record=$build/tools/cradle-record replay=$build/tools/cradle-replay
scriptgen=$build/tests/integration/cradle-corpus-script
wasm_dir=$build/tests/wasm runner=$src/tests/wasm/replay_run.mjs
corpus=$src/tests/golden/corpus.txt
jobs=${CORPUS_JOBS:-2}
# Scratch on tmpfs where there is one, as golden_corpus.sh (the recorder
# syncs its logs).
work=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "wasm golden corpus: $*" >&2; exit 1; }

source "$src/tests/integration/golden_corpus_file.sh" # lib_path, read_corpus, record_args
for tool in "$record" "$replay" "$scriptgen" "$wasm_dir/replay_counter.wasm" "$wasm_dir/replay_vanguard.wasm" \
            $(for l in counter inc5 vanguard; do lib_path $l; done); do
  [ -e "$tool" ] || fail "$tool is missing: build $build first (cmake --build $build)"
done
"$node" --version >/dev/null 2>&1 || fail "no node at '$node'"
# WASI before node 20 is behind this flag; node 20 takes it too.
wasm_run() { "$node" --no-warnings --experimental-wasi-unstable-preview1 "$runner" "$@"; }

# ---- the corpus file, read and checked as golden_corpus.sh reads it; a
# session that switches to another build cannot run in a one-build module:
# skipped, and said ----
read_corpus
skips=()
for i in "${!names[@]}"; do
  skip=
  if [ "${reloads[$i]}" != - ]; then
    IFS=, read -ra parts <<<"${reloads[$i]}"
    for part in "${parts[@]}"; do
      case $part in
        *:data=*) ;;
        *:"${games[$i]}") ;; # its own build again: the module loads it again
        *) skip="switches to build ${part#*:} before step ${part%%:*}"; break ;;
      esac
    done
  fi
  skips+=("$skip")
done

# field JSON KEY: a number's or a string's value in a one-line JSON object.
field() { sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$1"; }
usec() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
ms() { local d=$((($(usec) - $1) / 1000)); printf '%d.%02d' $((d / 1000)) $((d % 1000 / 10)); }

# check_session I: records session i, replays it natively and in wasm, and
# writes DIR/report ("ok ..." or "FAILED ..." with why).
check_session() {
  local i=$1 dir=$work/$1 golden native wasm t0 t_native t_wasm why=
  mkdir -p "$dir"
  golden=$src/$(golden_of "$i")
  t0=$(usec)
  if ! record_args "$i" "$dir/log" 2>"$dir/err" || ! "$record" "${args[@]}" >/dev/null 2>>"$dir/err"; then
    why="cradle-record failed: $(tr '\n' ' ' <"$dir/err")"
  elif [ ! -f "$golden" ]; then
    why="no golden file $golden"
  else
    t0=$(usec)
    native=$("$replay" --golden "$golden" --output "$dir/native.out" --json "$dir/log" 2>"$dir/native.err") || true
    t_native=$(ms "$t0")
    # The archived builds are native libraries, which the module cannot
    # load: without them a RELOAD loads its own linked build again.
    rm -rf "$dir/log.builds"
    t0=$(usec)
    wasm=$(wasm_run "$wasm_dir/replay_${games[$i]}.wasm" "$dir:$src/tests/golden" --golden "$golden" \
             --output "$dir/wasm.out" "$dir/log" 2>"$dir/wasm.err") || true
    t_wasm=$(ms "$t0")
    if [[ $native != *'"verdict":"ok"'* || $native != *'"golden_equal":true'* ]]; then
      why="the native replay fails its golden file (integration.golden_corpus says more): $native $(tr '\n' ' ' <"$dir/native.err")"
    elif [ -z "$(field "$native" state_hash)" ]; then
      why="cradle-replay --json prints no state_hash: $native"
    elif [[ $wasm != *'"verdict":"ok"'* || $wasm != *'"golden_equal":true'* || $wasm != *'"log_end":"closed"'* ]]; then
      why="the wasm replay fails: ${wasm:-no JSON} $(tr '\n' ' ' <"$dir/wasm.err")"
    elif [ "$(field "$wasm" steps)" != "${steps[$i]}" ] || [ "$(field "$native" steps)" != "${steps[$i]}" ]; then
      why="steps: native $(field "$native" steps), wasm $(field "$wasm" steps), the corpus ${steps[$i]}"
    elif [ "$(field "$wasm" reloads)" != "$(field "$native" reloads)" ] ||
         [ "$(field "$wasm" data_applied)" != "$(field "$native" data_applied)" ]; then
      why="reloads and data files: native $(field "$native" reloads) and $(field "$native" data_applied), wasm $(field "$wasm" reloads) and $(field "$wasm" data_applied)"
    elif [ "$(field "$wasm" state_hash)" != "$(field "$native" state_hash)" ]; then
      why="final state: native $(field "$native" state_hash), wasm $(field "$wasm" state_hash)"
    elif [ ! -s "$dir/native.out" ] || [ "$(stat -c %s "$dir/native.out")" != "$(field "$wasm" output_bytes)" ]; then
      why="output bytes: native $(stat -c %s "$dir/native.out"), wasm $(field "$wasm" output_bytes)"
    elif ! cmp "$dir/native.out" "$dir/wasm.out" >"$dir/cmp" 2>&1; then
      why="output bytes differ ($(field "$wasm" output_bytes) bytes in wasm): $(cat "$dir/cmp")"
    fi
  fi
  if [ -n "$why" ]; then
    printf 'FAILED %s (%s, %s players, %s steps, golden %s, reloads %s): %s\n' "${names[$i]}" "${games[$i]}" \
      "${players[$i]}" "${steps[$i]}" "${goldens[$i]}" "${reloads[$i]}" "$why" >"$dir/report"
  else
    printf 'ok %-24s %-8s %u players %6u steps  %-12s state %s  native %s s, wasm %s s\n' "${names[$i]}" \
      "${games[$i]}" "${players[$i]}" "${steps[$i]}" "${goldens[$i]}" "$(field "$wasm" state_hash)" "$t_native" \
      "$t_wasm" >"$dir/report"
  fi
  rm -rf "$dir/log" "$dir/log.builds" "$dir/log.data" "$dir/log.input" "$dir/native.out" "$dir/wasm.out"
}

selected=() skipped=0
for i in "${!names[@]}"; do
  [ -z "${CORPUS_ONLY:-}" ] || [[ ${names[$i]} =~ $CORPUS_ONLY ]] || continue
  if [ -n "${skips[$i]}" ]; then
    echo "skipped ${names[$i]}: it ${skips[$i]}, and a wasm module holds one build"
    skipped=$((skipped + 1))
  else
    selected+=("$i")
  fi
done
[ ${#selected[@]} -gt 0 ] || fail "no session to replay${CORPUS_ONLY:+ (CORPUS_ONLY=$CORPUS_ONLY)}"

start=$(usec) running=0
for i in "${selected[@]}"; do
  check_session "$i" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
for i in "${selected[@]}"; do cat "$work/$i/report"; done
failed=$(cat "$work"/*/report | grep -c '^FAILED' || true)
if [ "$failed" -ne 0 ]; then
  echo "wasm golden corpus: $failed of ${#selected[@]} sessions FAILED (in $(ms "$start") s)" >&2
  exit 1
fi
echo "wasm golden corpus: ${#selected[@]} sessions give the same output bytes and final state in wasm (node" \
     "$("$node" --version)) as natively, in $(ms "$start") s ($jobs at a time); $skipped skipped: they switch builds"
[ -z "${CORPUS_ONLY:-}" ] || exit 0

# ---- what must fail, natively and in wasm alike ----
neg=$work/negative
mkdir -p "$neg"
# expect_failure WHAT TEXT CMD...: CMD exits 1, says TEXT on stderr; its
# stdout (the JSON line) is left in $out.
expect_failure() {
  local what=$1 text=$2 rc=0; shift 2
  out=$("$@" 2>"$neg/err") || rc=$?
  [ "$rc" -eq 1 ] || { cat "$neg/err" >&2; fail "$what: exit $rc, expected 1"; }
  grep -qF -- "$text" "$neg/err" || { cat "$neg/err" >&2; fail "$what: stderr lacks '$text'"; }
}
# session_index NAME: the index of a session of the corpus.
session_index() { local i; for i in "${!names[@]}"; do [ "${names[$i]}" != "$1" ] || { echo "$i"; return; }; done; fail "no session $1 in $corpus"; }

# A full golden file with one byte changed, halfway: both name that byte.
i=$(session_index vanguard_solo)
record_args "$i" "$neg/log" && "$record" "${args[@]}" >/dev/null 2>"$neg/err" || { cat "$neg/err" >&2; fail "cradle-record"; }
rm -rf "$neg/log.builds"
golden=$src/$(golden_of "$i") at=$(($(stat -c %s "$src/$(golden_of "$i")") / 2))
byte=$(od -An -tu1 -j "$at" -N 1 "$golden" | tr -d ' ')
cp "$golden" "$neg/changed.golden"
printf "\\$(printf %03o $(((byte + 1) % 256)))" | dd of="$neg/changed.golden" bs=1 seek="$at" conv=notrunc status=none
cmp -s "$golden" "$neg/changed.golden" && fail "the changed golden file is the same"
expect_failure "a changed byte, natively" "first difference at byte $at " \
  "$replay" --game "$(lib_path vanguard)" --golden "$neg/changed.golden" --json "$neg/log"
[[ $out == *"\"first_difference\":$at,"* ]] || fail "cradle-replay --json names another byte: $out"
expect_failure "a changed byte, in wasm" "first difference at byte $at " \
  wasm_run "$wasm_dir/replay_vanguard.wasm" "$neg" --golden "$neg/changed.golden" "$neg/log"
[[ $out == *'"golden_equal":false'* && $out == *"\"first_difference\":$at,"* ]] ||
  fail "the wasm replay's JSON names another byte: $out"
echo "wasm golden corpus: a full golden file with byte $at changed fails natively and in wasm, naming that byte"

# A digest golden file with one hex digit changed in window 1's digest
# (its line is the file's tenth): both name the window.
i=$(session_index v_mash_p8_1k)
rm -rf "$neg/log" "$neg/log.data" "$neg/log.input"
record_args "$i" "$neg/log" && "$record" "${args[@]}" >/dev/null 2>"$neg/err" || { cat "$neg/err" >&2; fail "cradle-record"; }
rm -rf "$neg/log.builds"
awk 'NR == 10 { d = substr($2, 1, 1); $2 = (d == "0" ? "1" : "0") substr($2, 2) } { print }' "$src/$(golden_of "$i")" \
  >"$neg/changed.digest"
[ "$(cmp "$src/$(golden_of "$i")" "$neg/changed.digest" | wc -l)" -eq 1 ] || fail "the changed digest file differs in more than one byte"
w=${goldens[$i]#digest:}
expect_failure "a changed digest, natively" "first difference in window 1 of" \
  "$replay" --game "$(lib_path vanguard)" --golden "$neg/changed.digest" "$neg/log"
expect_failure "a changed digest, in wasm" "first difference in window 1 of" \
  wasm_run "$wasm_dir/replay_vanguard.wasm" "$neg" --golden "$neg/changed.digest" "$neg/log"
grep -qF "(steps $w..$((2 * w - 1)))" "$neg/err" || { cat "$neg/err" >&2; fail "the wasm replay does not name the window's steps"; }
echo "wasm golden corpus: a digest golden file with one digit changed fails natively and in wasm, naming window 1"

# Why the skipped sessions are skipped: one that switches builds fails in
# the one-build module, naming the build it switches to.
i=$(session_index reload_inc5)
rm -rf "$neg/log" "$neg/log.data" "$neg/log.input"
record_args "$i" "$neg/log" && "$record" "${args[@]}" >/dev/null 2>"$neg/err" || { cat "$neg/err" >&2; fail "cradle-record"; }
rm -rf "$neg/log.builds"
expect_failure "a switch to another build, in wasm" "library is game 'counter' build" \
  wasm_run "$wasm_dir/replay_counter.wasm" "$neg" "$neg/log"
[ "$(field "$out" steps)" = "${reloads[$i]%%:*}" ] || fail "the wasm replay fails elsewhere than at the reload: $out"
echo "wasm golden corpus: a session that switches builds fails at the switch in a one-build module:" \
     "$(head -n 1 "$neg/err")"
