#!/usr/bin/env bash
# run_fuzzer.sh FUZZER CORPUS_DIR SECONDS
# A short, bounded libFuzzer run: first every committed corpus input, then
# SECONDS of new inputs. New inputs go to a scratch directory, so the run never
# writes into the source tree. Exits non-zero on any finding.
set -euo pipefail
fuzzer=$1 corpus=$2 seconds=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/new"
seeds=()
[ -d "$corpus" ] && seeds+=("$corpus")
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$scratch/" -print_final_stats=1 "$scratch/new" "${seeds[@]}"
