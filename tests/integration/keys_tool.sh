#!/usr/bin/env bash
# cradle-keys end to end, and cradle-replay --verify-key on an unsigned log:
#   keys_tool.sh CRADLE_KEYS CRADLE_RECORD CRADLE_REPLAY COUNTER_SO
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
keys=$1 record=$2 replay=$3 counter=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {
  local want=$1; shift
  set +e; "$@" >"$work/out" 2>"$work/err"; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat "$work/err" >&2; fail "exit $rc, expected $want: $*"; }
}
has() { grep -q -- "$1" "$work/$2" || { cat "$work/$2" >&2; fail "$2 lacks '$1'"; }; }

expect 0 "$keys" gen --out "$work/server.key"
grep -Eq '^kx   [0-9a-f]{64}$' "$work/out" || fail "gen prints no kx key"
grep -Eq '^sign [0-9a-f]{64}$' "$work/out" || fail "gen prints no sign key"
[ "$(stat -c %a "$work/server.key")" = 600 ] || fail "key file is not 0600"
[ "$(stat -c %s "$work/server.key")" = 96 ] || fail "key file is not 96 bytes"
kx=$(sed -n 's/^kx   //p' "$work/out")
expect 0 "$keys" pub "$work/server.key" --kx
[ "$(cat "$work/out")" = "$kx" ] || fail "pub --kx differs from gen"

expect 1 "$keys" gen --out "$work/server.key"
has "already exists" err
ln -s "$work/server.key" "$work/link.key"
expect 1 "$keys" pub "$work/link.key"
has "symlink" err
expect 0 "$keys" gen --out "$work/issuer.key"
chmod 644 "$work/issuer.key"
expect 1 "$keys" token --key "$work/issuer.key" --client-id 7 --server-id "$kx" --build b1 --ttl 60
has "chmod 600" err
chmod 600 "$work/issuer.key"

expect 0 "$keys" token --key "$work/issuer.key" --client-id 7 --server-id "$kx" --build b1 \
  --ttl 60 --now 1800000000
token=$(cat "$work/out")
expect 0 "$keys" show "$token"
has "client_id 7" out
has "server_id $kx" out
has "build     b1" out
has "expires   1800000060" out
expect 1 "$keys" show "${token}x"
expect 2 "$keys" token --key "$work/issuer.key" --client-id 7 --server-id abc --build b1 --ttl 60
expect 2 "$keys" token --key "$work/issuer.key" --client-id -1 --server-id "$kx" --build b1 --ttl 60
expect 2 "$keys" token --key "$work/issuer.key" --client-id 7 --server-id "$kx" --build b1 --ttl 0
expect 2 "$keys" frobnicate
expect 2 "$keys" token --key "$work/issuer.key" --client-id 7 --server-id "$kx" --build b1 --ttl
has "a value is missing after '--ttl'" err
expect 2 "$keys" pub "$work/server.key" extra --kx
has "unexpected argument 'extra'" err
expect 2 "$keys" gen --kx --out "$work/other.key"
has "unknown option '--kx'" err

# An unsigned log fails --verify-key; without it the replay is fine.
expect 0 "$record" --game "$counter" --log "$work/run.log" --seed 3 --players 2 --steps 200
sign=$("$keys" pub "$work/server.key" --sign)
expect 0 "$replay" "$work/run.log"
expect 1 "$replay" --verify-key "$sign" "$work/run.log"
has "signature is missing or invalid" err
expect 2 "$replay" --verify-key nothex "$work/run.log"
echo "keys_tool: OK"
