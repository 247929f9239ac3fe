#!/usr/bin/env bash
# The soak (tools/soak.sh) for 60 s: 30 s under netcode's profile (250 ms
# latency, 250 ms jitter, 5% loss, 10% duplicates) and 30 s under yojimbo's
# (1000 ms, 100 ms jitter, 25% loss, 25% duplicates), 8 cradle-client bots;
# the documented soak runs 15 minutes over both.
set -euo pipefail
export SERVER=$1 CLIENT=$2 GAME=$3 REPLAY=$4 CTL=$5 PROXY=$6 KEYS=$7
export SOAK_PROFILES="netcode yojimbo"
exec "$(cd "$(dirname "$0")/../.." && pwd)/tools/soak.sh" 60
