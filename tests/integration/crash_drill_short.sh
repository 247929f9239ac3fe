#!/usr/bin/env bash
# The crash drill (tools/crash_drill.sh) with 10 SIGKILLs instead of 100.
set -euo pipefail
export SERVER=$1 CLIENT=$2 GAME=$3 REPLAY=$4 CTL=$5
exec "$(cd "$(dirname "$0")/../.." && pwd)/tools/crash_drill.sh" 10
