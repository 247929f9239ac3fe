#!/usr/bin/env bash
# layers.sh ROOT: fails when a file includes a header from a layer above its
# own (DESIGN.md "Layers"), or when a pure file reaches the OS.
#
#   shared/core/   layer 1: C standard headers only (no POSIX, no OS), its
#                  own cradle/ headers, and no call that allocates, prints,
#                  reads a clock, the environment, a file or an unseeded
#                  random source
#   shared/io/     layer 2: cradle/ headers of core and io only
#   server/ client/ tools/   layer 3: each program folder includes its own
#                  headers and the library's, never another program's
#   shared/games/  layer 4: like core (a game's step is pure), plus its own
#                  folder's headers
# Prints every breach as FILE:LINE: what, and exits 1 if there was one.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

breaches=0
breach() { echo "$1: $2"; breaches=$((breaches + 1)); }

pure_std='assert|float|inttypes|limits|math|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|string'
# Calls a pure file never makes (stdio.h is allowed for snprintf alone).
pure_calls='\b(malloc|calloc|realloc|free|fopen|fclose|fread|fwrite|fprintf|printf|puts|fputs|getenv|time|clock|clock_gettime|gettimeofday|rand|srand|random|open|read|write|dlopen|socket)\s*\('

core_headers=$(cd shared/core/include && ls cradle/*.h cradle/*.h.in | sed 's/\.in$//')
io_headers=$(cd shared/io/include && ls cradle/*.h)

# check_includes FILE ALLOWED_CRADLE_HEADERS STD_PATTERN(or empty for any)
check_includes() {
  local file=$1 allowed=$2 std=$3 dir
  dir=$(dirname "$file")
  while IFS=: read -r line text; do
    if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^>]+)\> ]]; then
      local h=${BASH_REMATCH[1]}
      if [[ $h == cradle/* ]]; then
        grep -qxF "$h" <<<"$allowed" || breach "$file:$line" "includes <$h> from a higher layer"
      elif [ -n "$std" ] && ! [[ $h =~ ^($std)\.h$ ]]; then
        breach "$file:$line" "includes <$h>, not a C standard header this layer may use"
      fi
    elif [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
      local h=${BASH_REMATCH[1]}
      if [[ $h == cradle/* ]]; then
        grep -qxF "$h" <<<"$allowed" || breach "$file:$line" "includes \"$h\" from a higher layer"
      elif [[ $h == */* ]] || ! { [ -f "$dir/$h" ] || [ "$h" = cradle_build_id.h ]; }; then
        breach "$file:$line" "includes \"$h\", outside its own folder"
      fi
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file" || true)
}

check_pure_calls() {
  local file=$1
  # Comments and strings are not calls: blank them (keeping the line
  # breaks, so line numbers hold) before looking.
  perl -0pe 's{/\*.*?\*/}{$& =~ tr/\n//cdr}gse; s{//[^\n]*}{}g; s{"(\\.|[^"\\\n])*"}{""}g' "$file" |
    grep -nE "$pure_calls" |
    while IFS=: read -r line text; do
      echo "$file:$line: calls the OS or allocates in a pure layer: $(echo "$text" | sed 's/^ *//')"
    done || true
}

for f in $(find shared/core -name '*.[ch]' | sort); do
  check_includes "$f" "$core_headers" "$pure_std"
  out=$(check_pure_calls "$f"); [ -z "$out" ] || { echo "$out"; breaches=$((breaches + 1)); }
done
for f in $(find shared/io -name '*.[ch]' | sort); do
  check_includes "$f" "$core_headers"$'\n'"$io_headers" ""
done
for f in $(find shared/games -name '*.[ch]' | sort); do
  check_includes "$f" "$core_headers" "$pure_std"
  case $f in *_render.c) continue ;; esac # render() draws; it never steps
  out=$(check_pure_calls "$f"); [ -z "$out" ] || { echo "$out"; breaches=$((breaches + 1)); }
done
for program in server client tools; do
  for f in $(find "$program" -name '*.[ch]' | sort); do
    while IFS=: read -r line text; do
      breach "$f:$line" "reaches into another folder: $(echo "$text" | sed 's/^ *//')"
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(\.\./|[^"]*(server|client|tools)/)' "$f" || true)
  done
done

if [ "$breaches" -gt 0 ]; then
  echo "layers: $breaches breach(es)" >&2
  exit 1
fi
echo "layers: shared/core, shared/io, shared/games and the programs keep to their layers"
