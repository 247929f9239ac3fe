#!/usr/bin/env bash
# bench_flood.sh [BUILD_DIR]: what a connect flood costs the players (issue
# 37). A paced, secure cradle-server (Release, vanguard, 8 players, the
# default --connect-rate and --connect-burst, as an operator runs it) on
# loopback, 8 bots in a process of their own. For SECONDS
# (BENCH_FLOOD_SECONDS, default 15) the session runs calm, then for as long
# beside a flood: cradle-test-client --connect-flood ATTEMPTS --flood-from
# ADDRESSES --flood-hold (BENCH_FLOOD_ATTEMPTS 1200 from BENCH_FLOOD_FROM 120
# loopback addresses: each connect the server drops is made again at once,
# none ever authenticates). For each phase it prints:
#   - the steps the host dropped (it fell behind its clock) and the inputs
#     that arrived after their step ran (late, repeated);
#   - the players' input delay, read from `status` twice a second: the
#     median and the largest of the 8 players' largest;
#   - the flood the server turned away per second (rate limited, evicted,
#     timed out before authenticating);
#   - each server thread's share of a core (/proc/PID/task/*/schedstat, the
#     threads by name; the main thread runs the game).
# BUILD_DIR needs cradle-server, cradle-client, cradlectl, cradle-keys,
# vanguard and tests/integration/cradle-test-client (tools/bench.sh flood
# builds them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/release-flood}" && pwd)
seconds=${BENCH_FLOOD_SECONDS:-15}
attempts=${BENCH_FLOOD_ATTEMPTS:-1200}
from=${BENCH_FLOOD_FROM:-120}
server=$build/server/cradle-server
client=$build/client/cradle-client
ctl=$build/tools/cradlectl
flooder=$build/tests/integration/cradle-test-client
game=$build/shared/games/vanguard/vanguard.so
for f in "$server" "$client" "$ctl" "$flooder" "$game"; do
  [ -f "$f" ] || { echo "bench_flood: $f is not built (tools/bench.sh flood builds it)" >&2; exit 1; }
done
source "$root/tools/session_keys.sh"
work=$(mktemp -d /tmp/cradle-bench-flood-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
session_keys "$build/tools/cradle-keys" "$work" # ISSUER_PUB, SERVER_ID
status() { "$ctl" --socket "$work/dev.sock" --json status; }
# threads PID: "TID NAME NS" per thread (schedstat's first field: time on a CPU)
threads() {
  for t in /proc/"$1"/task/*; do
    echo "${t##*/} $(tr ' ' _ <"$t/comm") $(cut -d' ' -f1 "$t/schedstat")"
  done | sort
}

port=$((20000 + RANDOM % 12000))
"$server" --bind 127.0.0.1 --port "$port" --key server.key --trust "$ISSUER_PUB" --game "$game" \
  --players 8 --dev-socket "$work/dev.sock" >server.out 2>server.err &
spid=$!
pids+=("$spid")
for _ in $(seq 400); do grep -q '"event":"serving"' server.out 2>/dev/null && break; sleep 0.05; done
grep -q '"event":"serving"' server.out || { cat server.err >&2; exit 1; }
"$client" --game "$game" --headless --port "$port" --server-key "$SERVER_ID" --issuer-key "$work/issuer.key" \
  --bots 8 >bots.out 2>bots.err &
pids+=("$!")
playing() { status | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(sum(p["joined"] for p in d["players"]) < 8)'; }
for _ in $(seq 400); do playing && break; sleep 0.05; done
playing || { echo "bench_flood: the 8 bots did not join" >&2; cat bots.err >&2; exit 1; }
sleep 3 # past the joins: the input delay settles on loopback's

# phase NAME: SECONDS of the session, sampled; prints the phase's figures.
phase() {
  status >"$1.before"
  threads "$spid" >"$1.cpu0"
  local until=$((SECONDS + seconds))
  : >"$1.samples"
  while [ $SECONDS -lt $until ]; do
    status >>"$1.samples"
    sleep 0.5
  done
  threads "$spid" >"$1.cpu1"
  status >"$1.after"
  python3 - "$1" "$seconds" "$spid" <<'EOF'
import json, statistics, sys
name, seconds, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
before, after = (json.load(open(f"{name}.{w}")) for w in ("before", "after"))
samples = [json.loads(line) for line in open(f"{name}.samples") if line.strip()]
largest = [max(p["input_delay"] for p in s["players"]) for s in samples]
late = sum(p["late"] for p in after["players"]) - sum(p["late"] for p in before["players"])
on_time = sum(p["on_time"] for p in after["players"]) - sum(p["on_time"] for p in before["players"])
turned = sum(after[k] - before[k] for k in ("rate_limited", "evicted_unauthenticated", "auth_timeouts"))
cpu = {}
for w in ("cpu0", "cpu1"):
    for line in open(f"{name}.{w}"):
        tid, comm, ns = line.split()
        cpu.setdefault(tid, ["game" if tid == pid else comm, []])[1].append(int(ns))
shares = ", ".join(f"{comm} {(ns[1] - ns[0]) / (seconds * 1e7):.1f}%" for comm, ns in cpu.values() if len(ns) == 2)
print(f"  {name}: {after['dropped_steps'] - before['dropped_steps']} steps dropped, "
      f"{late} of {late + on_time} inputs late; input delay median {statistics.median(largest):g}, "
      f"largest {max(largest)}; {turned / seconds:.0f} connects turned away/s")
print(f"    server threads: {shares}")
EOF
}

echo "8 players (vanguard, secure, paced at 60 steps/s), $seconds s calm, then $seconds s beside a flood of" \
  "$attempts connects from $from addresses:"
phase calm
"$flooder" --port "$port" --game "$game" --connect-flood "$attempts" --flood-from "$from" --flood-hold \
  >flood.out 2>flood.err &
pids+=("$!")
phase flood
