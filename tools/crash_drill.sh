#!/usr/bin/env bash
# crash_drill.sh: kills cradle-server with SIGKILL at random moments and
# checks that its session log always recovers every step the server had
# reported durable before the kill, and that a restarted server resumes the
# session from its log (--resume) with the same seed and steps.
#
#   tools/crash_drill.sh [KILLS]       (default 100; builds build/ops first)
#
# One session lives through all the kills: life 0 starts it, life i runs
# `cradle-server --resume life(i-1).log --log life(i).log`. In each life a bot
# player joins (a late joiner with a state block), the server runs paced for a
# random 0.3..2.5 s, `status` reports its durable_steps D, then SIGKILL.
# Checked after every kill:
#   - cradle-replay verifies the log (checksums, recorded hashes): verdict ok;
#   - it recovers R >= D steps (every step reported durable survived);
#   - the resumed server replayed exactly the previous life's R steps, and
#     this life's log replays them to the same output bytes.
# After the last kill: a resumed server, a bot that joins and checks every
# state hash, SIGTERM, a closed log that replays with its final hash.
#
# Programs come from $CRADLE_BUILD (default build/ops, configured Release
# with the tests); set SERVER, CLIENT, GAME, REPLAY and CTL to use others
# (the test suite does). Work files go to $DRILL_DIR (default: a temp dir,
# removed on success). RNG: $DRILL_SEED (default: random, printed).
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
kills=${1:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SERVER:-}" ]; then
  build=${CRADLE_BUILD:-$root/build/ops}
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_BENCH=OFF \
    -DCRADLE_BUILD_CLIENT=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target cradle-server cradle-test-client cradle_game_counter \
    cradle-replay cradlectl cradle-keys >/dev/null
  SERVER=$build/server/cradle-server CLIENT=$build/tests/integration/cradle-test-client
  GAME=$build/shared/games/counter/counter.so REPLAY=$build/tools/cradle-replay CTL=$build/tools/cradlectl
fi
seed=${DRILL_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
work=${DRILL_DIR:-$(mktemp -d)}
mkdir -p "$work/game"
cd "$work"
# The game runs from a copy in the work dir: a SIGKILLed server leaves its
# numbered library copy (<game>.cradle-<pid>-<n>.so) beside the library, and a
# later server with a recycled pid would find the name taken. Each life starts
# by removing them, as the systemd unit and the container do.
cp "$GAME" game/
mkdir -p tmp
export TMPDIR=$work/tmp # cradle-replay's library copies, away from the shared /tmp
GAME=$work/game/$(basename "$GAME")
# Secure, as in production: a server key and an issuer key in the work dir;
# the test client mints a token per connect (CRADLE_TEST_* variables).
source "$root/tools/session_keys.sh"
session_keys "${KEYS:-$(dirname "$SERVER")/../tools/cradle-keys}" "$work"
SECURITY=(--key "$work/server.key" --trust "$ISSUER_PUB"
  --connect-rate 1000 --connect-burst 1000)
SERVER_PID= CLIENT_PID=
cleanup() {
  for pid in $SERVER_PID $CLIENT_PID; do kill -KILL "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
fail() {
  echo "crash drill FAILED: $*" >&2
  echo "work files kept in $work (seed $seed)" >&2
  exit 1
}
field() { echo "$1" | sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\)\"\{0,1\}.*/\1/p"; }

# start_life LOG [ARGS...]: starts the server on a free port, waits for "serving".
start_life() {
  local log=$1; shift
  local try
  for try in 1 2 3 4 5 6 7 8; do
    PORT=$((20000 + RANDOM % 12000))
    rm -f dev.sock "$work"/game/*.cradle-*.so
    : >server.out # before the launch: a stale "serving" line must not be seen
    "$SERVER" --game "$GAME" --bind 127.0.0.1 --port "$PORT" --dev-socket dev.sock --log "$log" \
      "${SECURITY[@]}" "$@" >server.out 2>"$log.err" &
    SERVER_PID=$!
    for _ in $(seq 1 200); do
      grep -q '"event":"serving"' server.out 2>/dev/null && return 0
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.05
    done
    local rc=0
    wait "$SERVER_PID" || rc=$?
    SERVER_PID=
    [ "$rc" -eq 3 ] || fail "server did not start (exit $rc): $(cat "$log.err")"
    rm -f "$log" && rm -rf "$log.builds"
  done
  fail "no free port"
}

echo "crash drill: $kills kills, seed $seed, work dir $work"
started=$(date +%s)
prev_log= prev_steps=0 lost_min= lost_max=0 lost_total=0 durable_total=0
for ((i = 0; i < kills; i++)); do
  log=life$i.log
  if [ -z "$prev_log" ]; then
    start_life "$log" --players 2 --seed 4242 --hash-interval 30
  else
    start_life "$log" --resume "$prev_log"
    line=$(grep "resumed '$prev_log'" "$log.err" || true)
    [ -n "$line" ] || fail "life $i did not report resuming: $(cat "$log.err")"
    <<<"$line" grep -q ": $prev_steps steps replayed" || fail "life $i: $line (expected $prev_steps steps)"
  fi
  "$CLIENT" --port "$PORT" --game "$GAME" --slot $((i % 2)) --seed $((1000 + i)) --steps 100000000 \
    --timeout-ms 60000 >client$i.out 2>&1 &
  CLIENT_PID=$!
  t=$((RANDOM % 23 + 3))
  sleep "$((t / 10)).$((t % 10))"
  status=$("$CTL" --json --socket dev.sock status || true)
  durable=$(field "$status" durable_steps)
  at=$(field "$status" step)
  [ -n "$durable" ] || fail "life $i: no status reply: $status"
  kill -KILL "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
  kill -KILL "$CLIENT_PID" 2>/dev/null || true
  wait "$CLIENT_PID" 2>/dev/null || true
  CLIENT_PID=

  out=$("$REPLAY" --json "$log" 2>replay$i.err) || fail "life $i: cradle-replay failed: $out $(cat replay$i.err)"
  [ "$(field "$out" verdict)" = ok ] || fail "life $i: $out"
  steps=$(field "$out" steps)
  [ "$steps" -ge "$durable" ] || fail "life $i: recovered $steps steps, $durable were reported durable"
  [ "$steps" -ge "$prev_steps" ] || fail "life $i: recovered $steps steps, fewer than the $prev_steps it resumed"
  if [ -n "$prev_log" ] && [ "$prev_steps" -gt 0 ]; then
    "$REPLAY" --output a.bin --to $((prev_steps - 1)) "$prev_log" 2>/dev/null
    "$REPLAY" --output b.bin --to $((prev_steps - 1)) "$log" 2>/dev/null
    cmp -s a.bin b.bin || fail "life $i replays steps 0..$((prev_steps - 1)) differently from life $((i - 1))"
  fi
  lost=$((at - steps))
  [ "$lost" -ge 0 ] || lost=0
  lost_total=$((lost_total + lost))
  [ "$lost" -le "$lost_max" ] || lost_max=$lost
  [ -n "$lost_min" ] && [ "$lost" -ge "$lost_min" ] || lost_min=$lost
  durable_total=$((durable_total + durable))
  printf 'kill %3d: step %5s at the kill, %5s reported durable, %5s recovered (%s)\n' \
    $((i + 1)) "$at" "$durable" "$steps" "$(field "$out" log_end)"
  [ -z "$prev_log" ] || [ -n "${DRILL_DIR:-}" ] || rm -rf "$prev_log" "$prev_log.builds"
  prev_log=$log prev_steps=$steps
done

# The last life: resume, a bot joins and checks every hash, a clean stop.
log=final.log
start_life "$log" --resume "$prev_log"
grep -q ": $prev_steps steps replayed" "$log.err" || fail "final life: $(cat "$log.err")"
target=$((prev_steps + 300))
"$CLIENT" --port "$PORT" --game "$GAME" --slot 0 --seed 7 --steps "$target" --timeout-ms 60000 \
  >final_client.out 2>final_client.err || fail "the bot did not finish: $(cat final_client.out final_client.err)"
done_line=$(grep '"event":"done"' final_client.out)
[ "$(field "$done_line" hashes_checked)" -ge 1 ] || fail "the bot checked no hash: $done_line"
[ "$(field "$done_line" start_step)" -ge "$prev_steps" ] || fail "the bot did not join the resumed session"
kill -TERM "$SERVER_PID"
rc=0; wait "$SERVER_PID" || rc=$?
SERVER_PID=
[ "$rc" -eq 0 ] || fail "the final server exited $rc"
out=$("$REPLAY" --json "$log" 2>/dev/null)
[ "$(field "$out" verdict)" = ok ] && [ "$(field "$out" log_end)" = closed ] &&
  [ "$(field "$out" final_hash_equal)" = true ] || fail "final log: $out"
total=$(field "$out" steps)
elapsed=$(($(date +%s) - started))
echo "crash drill passed: $kills SIGKILLs in ${elapsed} s (seed $seed); every log verified and recovered" \
  "every step reported durable; steps lost per kill (run but not yet durable): min $lost_min," \
  "mean $((lost_total / kills)), max $lost_max; the session resumed $kills times and ended closed after" \
  "$total steps with the bot on the server's hash"
[ -n "${DRILL_DIR:-}" ] || rm -rf "$work"
