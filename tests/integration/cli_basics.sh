#!/usr/bin/env bash
# The basics every program shares (README, "A tour"):
#   --help      usage on stdout, nothing on stderr, exit 0
#   --version   exit 0, one line "<program> <version> (wire protocol W, game ABI M.m...)",
#               the same version, wire and ABI numbers in every program (one definition)
#   a bad flag  exit 2, stderr names the flag and points at what is allowed
#   a bad value exit 2, stderr names the flag and what it allows
#
#   cli_basics.sh SERVER CLIENT(or "") CRADLECTL REPLAY RECORD KEYS PROXY VIEWERS
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
failures=0
problem() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

declare -A path=(
  [cradle-server]=$1 [cradle-client]=$2 [cradlectl]=$3 [cradle-replay]=$4
  [cradle-record]=$5 [cradle-keys]=$6 [cradle-proxy]=$7 [cradle-viewers]=$8
)
[ "${path[cradle-client]}" != none ] || path[cradle-client]= # not built (CRADLE_BUILD_CLIENT=OFF)
# One bad value per program: "FLAG VALUE" (and the words before it), as a user mistypes it.
declare -A bad_value=(
  [cradle-server]="--game x.so --port abc"
  [cradle-client]="--port abc"
  [cradlectl]="--timeout abc"
  [cradle-replay]="--from abc"
  [cradle-record]="--steps abc"
  [cradle-keys]="token --ttl abc"
  [cradle-proxy]="--loss abc"
  [cradle-viewers]="--viewers abc"
)

run() { # run PROGRAM ARGS...: sets rc, output in $work/out and $work/err
  set +e
  "$@" >"$work/out" 2>"$work/err" </dev/null
  rc=$?
  set -e
}

versions=
for name in cradle-server cradle-client cradlectl cradle-replay cradle-record cradle-keys cradle-proxy cradle-viewers; do
  bin=${path[$name]}
  if [ -z "$bin" ]; then
    echo "skip $name (not built)"
    continue
  fi
  [ -x "$bin" ] || fail "$name: $bin is not executable"

  run "$bin" --help
  [ "$rc" -eq 0 ] || problem "$name --help exits $rc, expected 0"
  grep -qi 'usage' "$work/out" || problem "$name --help prints no usage on stdout"
  [ ! -s "$work/err" ] || problem "$name --help writes to stderr: $(head -c 200 "$work/err")"

  run "$bin" --version
  [ "$rc" -eq 0 ] || problem "$name --version exits $rc, expected 0"
  line=$(cat "$work/out")
  [[ $line =~ ^$name\ ([0-9]+\.[0-9]+\.[0-9]+)\ \(wire\ protocol\ ([0-9]+),\ game\ ABI\ ([0-9]+\.[0-9]+) ]] ||
    problem "$name --version prints '$line', expected '$name X.Y.Z (wire protocol N, game ABI M.m...)'"
  versions+="${BASH_REMATCH[1]:-?} ${BASH_REMATCH[2]:-?} ${BASH_REMATCH[3]:-?}"$'\n'

  run "$bin" --no-such-flag
  [ "$rc" -eq 2 ] || problem "$name --no-such-flag exits $rc, expected 2"
  grep -q -- '--no-such-flag' "$work/err" || problem "$name: the bad flag's message does not name it: $(head -c 200 "$work/err")"
  grep -Eqi 'usage|--help|expected' "$work/err" || problem "$name: the bad flag's message says nothing of what is allowed"
  [ ! -s "$work/out" ] || problem "$name --no-such-flag writes to stdout"

  read -r -a words <<<"${bad_value[$name]}"
  flag=${words[${#words[@]} - 2]}
  run "$bin" "${words[@]}"
  [ "$rc" -eq 2 ] || problem "$name ${bad_value[$name]} exits $rc, expected 2"
  grep -q -- "$flag" "$work/err" || problem "$name: '${bad_value[$name]}' does not name $flag: $(head -c 200 "$work/err")"
  grep -Eq 'expected|must be' "$work/err" || problem "$name: '${bad_value[$name]}' does not say what $flag allows: $(head -c 200 "$work/err")"
done

# cradle-keys: every command's bad flag too (the issue's `gen --bogus`).
keys=${path[cradle-keys]}
for cmd in gen pub token show; do
  run "$keys" "$cmd" --no-such-flag x
  [ "$rc" -eq 2 ] || problem "cradle-keys $cmd --no-such-flag exits $rc, expected 2"
  if [ "$cmd" != show ]; then # show takes any one word: a token may start with '-'
    grep -q -- '--no-such-flag' "$work/err" || problem "cradle-keys $cmd: the bad flag is not named: $(cat "$work/err")"
  fi
  grep -q "usage: cradle-keys $cmd" "$work/err" || problem "cradle-keys $cmd: no usage of $cmd in: $(cat "$work/err")"
done

distinct=$(sort -u <<<"$versions" | sed '/^$/d' | wc -l)
[ "$distinct" -eq 1 ] || problem "the programs disagree on the versions: $(sort -u <<<"$versions" | tr '\n' ';')"

[ "$failures" -eq 0 ] || fail "$failures problems"
echo "cli_basics: ok ($(sort -u <<<"$versions" | sed '/^$/d'))"
