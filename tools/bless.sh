#!/usr/bin/env bash
# bless.sh [--write] [BUILD]: re-blesses every golden session of
# tests/golden/corpus.txt (the corpus and the older full golden files).
#
# It builds what the sessions need in BUILD (default build/bless, a Debug
# build it configures), records every session again, writes each golden file
# anew in a scratch folder and prints per session "unchanged", "new" or what
# differs from the committed file (cradle-replay's first difference: the
# window and its steps for a digest golden, the step and the byte for a
# full one). Then it writes the new files into tests/golden/ only with
# --write, or when stdin is a terminal and the answer to "write?" is y; it
# also removes digest files no session names any more. Exit 0 when nothing
# differs or the files were written, 1 when differences were left unwritten
# or a session failed, 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
write=0 build=
for arg in "$@"; do
  case $arg in
    --write) write=1 ;;
    --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bless.sh: unknown option $arg (usage: tools/bless.sh [--write] [BUILD])" >&2; exit 2 ;;
    *) [ -z "$build" ] || { echo "bless.sh: one build folder, not '$build' and '$arg'" >&2; exit 2; }
       build=$arg ;;
  esac
done
if [ -z "$build" ]; then
  build=build/bless
  [ -f "$build/CMakeCache.txt" ] ||
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCRADLE_BUILD_BENCH=OFF -DCRADLE_BUILD_CLIENT=OFF >/dev/null
fi
[ -f "$build/CMakeCache.txt" ] || { echo "bless.sh: $build is not a CMake build folder" >&2; exit 2; }
echo "bless.sh: building the recorder, the replayer and the games in $build"
cmake --build "$build" -j2 --target cradle-record cradle-replay cradle-corpus-script cradle_game_counter \
  cradle_game_vanguard cradle_reload_inc5 cradle_game_vanguard_rapid >"$build/bless-build.log" 2>&1 ||
  { tail -30 "$build/bless-build.log"; echo "bless.sh: the build failed (log: $build/bless-build.log)" >&2; exit 1; }

fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
status=0
bash tests/integration/golden_corpus.sh "$build" "$src" --bless "$fresh" || status=$?

# What would change: new or different files, and digest files of no session.
changed=()
while IFS= read -r -d '' f; do
  rel=${f#"$fresh"/}
  cmp -s "$f" "$rel" 2>/dev/null || changed+=("$rel")
done < <(find "$fresh" -type f -print0 | sort -z)
stale=()
for f in tests/golden/corpus/*.digest; do
  [ -e "$f" ] && [ ! -e "$fresh/$f" ] && stale+=("$f")
done
for f in "${stale[@]}"; do echo "stale     $f: no session in tests/golden/corpus.txt names it"; done
if [ "$status" -ne 0 ]; then
  echo "bless.sh: a session failed to record or replay (above); nothing written" >&2
  exit 1
fi
if [ ${#changed[@]} -eq 0 ] && [ ${#stale[@]} -eq 0 ]; then
  echo "bless.sh: every golden file is unchanged"
  exit 0
fi
echo "bless.sh: ${#changed[@]} golden files new or changed, ${#stale[@]} stale"
if [ "$write" -eq 0 ] && [ -t 0 ]; then
  read -r -p "write them into tests/golden/? [y/N] " answer
  case $answer in y|Y) write=1 ;; esac
fi
if [ "$write" -eq 0 ]; then
  echo "bless.sh: nothing written; tools/bless.sh --write $build writes them" >&2
  exit 1
fi
for rel in "${changed[@]}"; do
  mkdir -p "$(dirname "$rel")"
  cp "$fresh/$rel" "$rel"
done
[ ${#stale[@]} -eq 0 ] || rm -f "${stale[@]}"
echo "bless.sh: wrote ${#changed[@]} golden files, removed ${#stale[@]}; review them with git diff --stat tests/golden"
