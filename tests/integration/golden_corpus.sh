#!/usr/bin/env bash
# The golden corpus (tests/golden/corpus.txt, described there): every session
# recorded with cradle-record and replayed with cradle-replay against its
# golden file, CORPUS_JOBS (default 2) sessions at a time; then the cases
# that must fail (a changed digest, a changed rule, a damaged golden file).
#
#   golden_corpus.sh BUILD SOURCE              check (integration.golden_corpus)
#   golden_corpus.sh BUILD SOURCE --bless DIR  record every session, write its
#       golden file anew under DIR (the same paths as in SOURCE) and say per
#       session "unchanged", "new" or what differs from the committed one;
#       writes nothing in SOURCE (tools/bless.sh does, after showing this)
#
# BUILD is a build directory (its tools and game libraries are used), SOURCE
# the source tree. CORPUS_ONLY=REGEX keeps the sessions whose name matches
# (and skips the failure cases). A failure prints the session, how to record
# it again and cradle-replay's words for the first difference.
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
mode=check out=
if [ "${3:-}" = --bless ]; then
  mode=bless out=$4
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
fi
record=$build/tools/cradle-record replay=$build/tools/cradle-replay
scriptgen=$build/tests/integration/cradle-corpus-script
corpus=$src/tests/golden/corpus.txt
jobs=${CORPUS_JOBS:-2}
# Scratch on tmpfs where there is one: the recorder syncs its logs, which
# costs a loaded disk up to a tenth of a second a session and buys nothing here.
work=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "golden corpus: $*" >&2; exit 1; }

source "$src/tests/integration/golden_corpus_file.sh" # lib_path, read_corpus, record_args
for tool in "$record" "$replay" "$scriptgen" $(for l in counter inc5 vanguard rapid; do lib_path $l; done); do
  [ -e "$tool" ] || fail "$tool is missing: build $build first (cmake --build $build)"
done

# ---- the corpus file, checked line by line ----
read_corpus

# How to record session i again by hand (printed with a failure).
reproduce() {
  local i=$1 how=${inputs[$1]} gen=""
  [[ $how == gen:* ]] && gen="$scriptgen ${how#gen:} ${seeds[$i]} ${players[$i]} ${steps[$i]} >/tmp/${names[$i]}.log.input && "
  record_args "$i" "/tmp/${names[$i]}.log" nogen
  echo "  record it again: $gen$record --force ${args[*]}"
  echo "  and replay it:   $replay --golden $src/$(golden_of "$i") /tmp/${names[$i]}.log"
}

# record_session I DIR: the session's log in DIR/log; 0, or 1 with why in DIR/report.
record_session() {
  local i=$1 dir=$2
  mkdir -p "$dir"
  if ! record_args "$i" "$dir/log" 2>"$dir/err" || ! "$record" "${args[@]}" >/dev/null 2>>"$dir/err"; then
    { echo "FAILED ${names[$i]}: cradle-record failed:"; sed 's/^/  /' "$dir/err"; reproduce "$i"; } >"$dir/report"
    return 1
  fi
}

# usec: the time in microseconds, from bash itself (no awk or date per session).
usec() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
# indent FILE [LOG NAME]: cradle-replay's stderr without its summary line,
# indented, the scratch log named as reproduce() records it.
indent() { sed "/ steps\/s), /d; s/^/  /${2:+; s|$2|/tmp/$3.log|g}" "$1"; }

# check_session I: records session i and replays it against its golden file.
check_session() {
  local i=$1 dir=$work/$1 t0 golden json n_reloads=0 commas
  t0=$(usec)
  record_session "$i" "$dir" || return 0
  golden=$src/$(golden_of "$i")
  local part
  if [ "${reloads[$i]}" != - ]; then
    IFS=, read -ra parts <<<"${reloads[$i]}"
    for part in "${parts[@]}"; do [[ $part == *:data=* ]] || n_reloads=$((n_reloads + 1)); done
  fi
  if [ ! -f "$golden" ]; then
    { echo "FAILED ${names[$i]}: no golden file $golden (bless it: tools/bless.sh)"; } >"$dir/report"
  elif ! "$replay" --golden "$golden" --json "$dir/log" >"$dir/out" 2>"$dir/err" || ! json=$(<"$dir/out") ||
       [[ $json != *'"verdict":"ok"'* || $json != *"\"steps\":${steps[$i]},"* ]] ||
       [[ $json != *'"log_end":"closed"'* || $json != *"\"reloads\":$n_reloads,"* ]] ||
       [[ $json != *'"golden_equal":true'* ]]; then
    { echo "FAILED ${names[$i]} (${games[$i]}, ${players[$i]} players, ${steps[$i]} steps, golden ${goldens[$i]}):"
      indent "$dir/err" "$dir/log" "${names[$i]}"
      echo "  cradle-replay --json: $(sed "s|$dir/log|/tmp/${names[$i]}.log|g" "$dir/out")"
      reproduce "$i"; } >"$dir/report"
  else
    local ms=$((($(usec) - t0) / 1000))
    printf 'ok %-26s %-8s %u players %6u steps  %-12s %s  %d.%02d s\n' "${names[$i]}" "${games[$i]}" \
      "${players[$i]}" "${steps[$i]}" "${goldens[$i]}" "${reloads[$i]}" $((ms / 1000)) $((ms % 1000 / 10)) \
      >"$dir/report"
  fi
  rm -rf "$dir/log" "$dir/log.builds" "$dir/log.data" "$dir/log.input"
}

# bless_session I: records session i, writes its golden file under $out and
# says how it differs from the committed one.
bless_session() {
  local i=$1 dir=$work/$1 rel kind=${goldens[$1]}
  record_session "$i" "$dir" || return 0
  rel=$(golden_of "$i")
  mkdir -p "$(dirname "$out/$rel")"
  local bless=(--bless "$out/$rel")
  [ "$kind" = full ] || bless+=(--digest "${kind#digest:}")
  if ! "$replay" "${bless[@]}" "$dir/log" >/dev/null 2>"$dir/err"; then
    { echo "FAILED ${names[$i]}: cradle-replay could not bless it:"; indent "$dir/err"; } >"$dir/report"
  elif [ ! -f "$src/$rel" ]; then
    echo "new       ${names[$i]}: $rel" >"$dir/report"
  elif cmp -s "$out/$rel" "$src/$rel"; then
    echo "unchanged ${names[$i]}" >"$dir/report"
  else
    "$replay" --golden "$src/$rel" "$dir/log" >/dev/null 2>"$dir/err" || true
    { echo "changed   ${names[$i]}: $rel"
      indent "$dir/err" "$dir/log" "${names[$i]}"
      [ "$kind" = full ] || awk 'NR == FNR { if (NF == 2 && $1 ~ /^[0-9]+$/) old[$1] = $2; next }
        NF == 2 && $1 ~ /^[0-9]+$/ { n++; if (old[$1] != $2) d++ }
        END { printf "  %d of %d windows differ\n", d, n }' "$src/$rel" "$out/$rel"; } >"$dir/report"
  fi
  rm -rf "$dir/log" "$dir/log.builds" "$dir/log.data" "$dir/log.input"
}

# run_all FUNCTION: FUNCTION for every selected session, $jobs at a time;
# then prints the reports in the corpus file's order.
selected=()
for i in "${!names[@]}"; do
  [ -z "${CORPUS_ONLY:-}" ] || [[ ${names[$i]} =~ $CORPUS_ONLY ]] && selected+=("$i")
done
run_all() {
  local running=0
  for i in "${selected[@]}"; do
    "$1" "$i" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  done
  wait
  for i in "${selected[@]}"; do cat "$work/$i/report"; done
}

start=$(usec)
if [ "$mode" = bless ]; then
  run_all bless_session
  if grep -q '^FAILED' "$work"/*/report; then exit 1; fi
  exit 0
fi
run_all check_session
failed=$(cat "$work"/*/report | grep -c '^FAILED' || true)
ms=$((($(usec) - start) / 1000))
elapsed=$((ms / 1000)).$((ms % 1000 / 100))
if [ "$failed" -ne 0 ]; then
  echo "golden corpus: $failed of ${#selected[@]} sessions FAILED (in $elapsed s); an intended change: tools/bless.sh $build" >&2
  exit 1
fi
echo "golden corpus: ${#selected[@]} sessions replay to their golden files in $elapsed s ($jobs at a time)"
[ -z "${CORPUS_ONLY:-}" ] || exit 0

# ---- what must fail, and how it says so ----
neg=$work/negative
mkdir -p "$neg"
# expect_failure WHAT TEXT CMD...: CMD exits 1 and says TEXT on stderr.
expect_failure() {
  local what=$1 text=$2 rc=0; shift 2
  "$@" >"$neg/out" 2>"$neg/err" || rc=$?
  [ "$rc" -eq 1 ] || { cat "$neg/err" >&2; fail "$what: exit $rc, expected 1"; }
  grep -qF -- "$text" "$neg/err" || { cat "$neg/err" >&2; fail "$what: stderr lacks '$text'"; }
}
# The first counter session with a digest golden: a changed digest and a
# changed rule (the +5 build) must both fail, naming the window.
for i in "${!names[@]}"; do
  [ "${games[$i]}" = counter ] && [[ ${goldens[$i]} == digest:* ]] && break
done
record_session "$i" "$neg" || { cat "$neg/report" >&2; exit 1; }
golden=$src/$(golden_of "$i") w=${goldens[$i]#digest:}
"$replay" --bless "$neg/same.digest" --digest "$w" "$neg/log" 2>"$neg/err" || { cat "$neg/err" >&2; fail "--bless"; }
cmp -s "$neg/same.digest" "$golden" || fail "${names[$i]}: --bless --digest $w does not write the committed bytes"
# Window 1's digest, one hex digit changed (its line is the file's tenth).
awk 'NR == 10 { d = substr($2, 1, 1); $2 = (d == "0" ? "1" : "0") substr($2, 2) } { print }' "$golden" >"$neg/flipped.digest"
expect_failure "a changed digest" "first difference in window 1 of" \
  "$replay" --golden "$neg/flipped.digest" "$neg/log"
grep -qF "(steps $w..$((2 * w - 1)))" "$neg/err" || { cat "$neg/err" >&2; fail "the window's steps are not named"; }
expect_failure "a changed rule (the counter built with +5 a step)" "first difference in window 0 of" \
  "$replay" --golden "$golden" --game "$(lib_path inc5)" --force "$neg/log"
head -n 9 "$golden" >"$neg/short.digest"
expect_failure "a truncated digest golden file" "short.digest: line 10: the file ends before a window line" \
  "$replay" --golden "$neg/short.digest" "$neg/log"
echo "golden corpus: a changed digest, a changed rule and a truncated golden file fail, naming where"
