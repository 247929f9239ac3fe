#!/usr/bin/env bash
# vanguard's output bytes are the same in separate processes, through the
# statically linked game and through its shared library loaded with dlopen,
# and the comparison does catch a difference.
#   vanguard_determinism.sh <vanguard_determinism program> <vanguard.so>
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
prog=$1
lib=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$prog" --write "$dir/a.bin" --steps 3000
"$prog" --compare "$dir/a.bin" --steps 3000
"$prog" --compare "$dir/a.bin" --steps 3000 --lib "$lib"
# Flip one byte in the middle: the comparison must fail and name it.
cp "$dir/a.bin" "$dir/b.bin"
size=$(stat -c %s "$dir/b.bin")
off=$((size / 2))
orig=$(od -An -tu1 -j "$off" -N1 "$dir/b.bin" | tr -d ' ')
printf "\\$(printf '%03o' $(((orig + 1) % 256)))" |
  dd of="$dir/b.bin" bs=1 seek="$off" conv=notrunc status=none
set +e
out=$("$prog" --compare "$dir/b.bin" --steps 3000)
rc=$?
set -e
echo "$out"
[ "$rc" -eq 1 ]
<<<"$out" grep -q "first differing byte $off "
echo "vanguard determinism ok"
