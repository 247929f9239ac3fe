#!/usr/bin/env bash
# The demo host runs, steps in order, and its replay matches the live run.
set -euo pipefail
demo=$1
out=$("$demo" --steps 120 --rate 120 --json)
echo "$out" | tail -n 3
echo "$out" | grep -q '"event":"done","steps":120'
echo "$out" | grep -q '"replay_equal":true'
# Paced: 120 steps at 120/s take about a second, not zero.
secs=$(echo "$out" | sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p')
awk -v s="$secs" 'BEGIN { exit !(s > 0.8) }'
# Usage errors exit 2 and name the flag.
set +e
"$demo" --steps 0 2>err.txt; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q -- '--steps' err.txt
"$demo" --help | grep -q usage
"$demo" --version | grep -q cradle-demo
echo "demo host ok"
