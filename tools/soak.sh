#!/usr/bin/env bash
# soak.sh: 8 bot players through cradle-proxy under netcode's and yojimbo's
# network profiles, then checks the session held.
#
#   tools/soak.sh [SECONDS]     (default 900 = 15 min, split evenly across the
#                                profiles; builds build/ops first)
#
# For each profile (SOAK_PROFILES, default "netcode yojimbo"):
#   netcode  250 ms latency, 250 ms jitter, 5% loss, 10% duplicates
#   yojimbo 1000 ms latency, 100 ms jitter, 25% loss, 25% duplicates
# (each way), a paced server (--players 8, input delay auto, a 600 s peer
# timeout on both sides so ENet tolerates the loss), the proxy in front of it
# with a printed seed, and 8 headless bots (cradle-client --headless --bot).
# The server is paused until every bot prints "playing" (ENet's handshake and
# the reliable WELCOME and state block can take tens of seconds under
# yojimbo's loss; a bot that gives up is relaunched and counted), then
# resumed: the bots play SECONDS/profiles seconds of steps (60 a second).
# The bots predict (window 16, the default), so the session is also prediction's soak.
# Passes when:
#   - every bot predicted to the end (its summary's "predict" is on);
#   - zero desyncs: every bot checked every state hash it received and ended
#     without a mismatch, and the server counted no DESYNC report;
#   - every step in the log: the closed log holds every step the server ran
#     (its trailer's count), with every recorded hash verified by a replay;
#   - the log replays to the bots' output: cradle-replay --output over each
#     bot's steps equals the bytes the bot computed live (--output);
#   - the server's memory is flat: its RSS, sampled from /proc every 2 s, stays
#     within 1 MiB of the first sample taken after a warm-up (a quarter of the
#     run, at least 10 s).
# It prints a summary line per profile. Programs: as tools/crash_drill.sh
# (CRADLE_BUILD, or SERVER CLIENT GAME REPLAY CTL PROXY). Work files:
# $SOAK_DIR (default a temp dir, removed on success).
set -Eeuo pipefail
total=${1:-900}
profiles=${SOAK_PROFILES:-netcode yojimbo}
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SERVER:-}" ]; then
  build=${CRADLE_BUILD:-$root/build/ops}
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCRADLE_BUILD_BENCH=OFF -DCRADLE_BUILD_CLIENT=ON >/dev/null
  cmake --build "$build" -j"$(nproc)" --target cradle-server cradle-client cradle_game_counter \
    cradle-replay cradlectl cradle-proxy cradle-keys >/dev/null
  SERVER=$build/server/cradle-server CLIENT=$build/client/cradle-client
  GAME=$build/shared/games/counter/counter.so REPLAY=$build/tools/cradle-replay CTL=$build/tools/cradlectl
  PROXY=$build/tools/cradle-proxy
fi
bots=${SOAK_BOTS:-8}
rss_bound_kib=${SOAK_RSS_BOUND_KIB:-1024}
nprofiles=$(echo $profiles | wc -w)
seconds=$((total / nprofiles))
[ "$seconds" -ge 20 ] || { echo "soak: at least 20 s per profile, got $seconds" >&2; exit 2; }
work=${SOAK_DIR:-$(mktemp -d)}
mkdir -p "$work/tmp"
cd "$work"
# cradle-replay's library copies go to TMPDIR: keep them out of the shared /tmp,
# where a copy left by a killed process with a recycled pid takes the name.
export TMPDIR=$work/tmp
# Secure, as in production: a server key and an issuer key in the work dir;
# each bot mints a token per connect with the issuer key (--issuer-key).
source "$root/tools/session_keys.sh"
session_keys "${KEYS:-$(dirname "$SERVER")/../tools/cradle-keys}" "$work"
SECURITY=(--key "$work/server.key" --trust "$ISSUER_PUB"
  --connect-rate 1000 --connect-burst 1000 --auth-timeout 30000)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
field() { echo "$1" | sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\)\"\{0,1\}.*/\1/p"; }
# A bare check that fails (under set -e) names its line, never ending the
# soak in silence.
trap 'echo "soak FAILED (${profile:-before a profile}): line $LINENO: $BASH_COMMAND" >&2' ERR
fail() {
  echo "soak FAILED ($profile): $*" >&2
  echo "work files kept in $work" >&2
  exit 1
}

soak_profile() {
  local profile=$1 dir=$work/$1
  mkdir -p "$dir"
  cd "$dir"
  local target port pid_server pid_proxy try
  for try in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 12000))
    rm -f session.log dev.sock
    : >server.out
    "$SERVER" --game "$GAME" --bind 127.0.0.1 --port "$port" --players "$bots" --log session.log \
      "${SECURITY[@]}" --dev-socket dev.sock --input-delay auto --timeout 600000 --hash-interval 30 \
      >server.out 2>server.err &
    pid_server=$!
    local deadline=$((SECONDS + 60))
    while ! grep -q '"event":"serving"' server.out 2>/dev/null; do
      kill -0 "$pid_server" 2>/dev/null || break
      [ $SECONDS -lt $deadline ] || { kill -KILL "$pid_server"; fail "server not serving after 60 s: $(cat server.err)"; }
      sleep 0.05
    done
    grep -q '"event":"serving"' server.out && break
    wait "$pid_server" || [ $? -eq 3 ] || fail "server did not start: $(cat server.err)"
  done
  PIDS+=("$pid_server")
  "$PROXY" --listen 127.0.0.1:0 --server "127.0.0.1:$port" --profile "$profile" \
    ${SOAK_SEED:+--seed "$SOAK_SEED"} >proxy.out 2>proxy.err &
  pid_proxy=$!
  PIDS+=("$pid_proxy")
  local proxy_deadline=$((SECONDS + 30))
  until grep -q '"event":"proxy"' proxy.out 2>/dev/null || [ $SECONDS -ge $proxy_deadline ]; do sleep 0.05; done
  local settings listen
  settings=$(grep '"event":"proxy"' proxy.out) || fail "proxy did not start: $(cat proxy.err)"
  listen=$(field "$settings" listen)
  # Gather: the server is paused while the bots connect, so that a slow
  # handshake under the profile costs no session time. A bot whose ENet
  # handshake or HELLO did not get through (exit before joining) is launched
  # again; the relaunches are counted in the summary.
  "$CTL" --socket dev.sock pause >/dev/null || fail "cannot pause the server"
  local paused_at
  paused_at=$(field "$("$CTL" --json --socket dev.sock status)" step)
  target=$((paused_at + seconds * 60))
  local pids=() launched=() i relaunches=0 joined=0 gather_deadline=$(($(date +%s) + 300))
  launch_bot() {
    "$CLIENT" --headless --bot --port "${listen##*:}" --game "$GAME" --slot "$1" --seed $((100 + $1)) \
      --steps "$target" --output "bot$1.bin" --silence-timeout 600000 --connect-timeout 20000 \
      --server-key "$CRADLE_TEST_SERVER_KEY" --issuer-key "$CRADLE_TEST_ISSUER_KEY" \
      >"bot$1.out" 2>>"bot$1.err" &
    pids[$1]=$!
    launched[$1]=$(date +%s)
    PIDS+=($!)
  }
  for ((i = 0; i < bots; i++)); do launch_bot "$i"; done
  while :; do
    # Joined means the bot has its WELCOME and state block (it printed
    # "playing"): the server's own "joined" is set when it sends the WELCOME,
    # which ENet's retransmissions can deliver tens of seconds later under
    # yojimbo's loss, and the session must not run ahead meanwhile.
    joined=0
    local alive=0
    for ((i = 0; i < bots; i++)); do
      kill -0 "${pids[$i]}" 2>/dev/null && alive=$((alive + 1))
      grep -q '"event":"playing"' "bot$i.out" 2>/dev/null && joined=$((joined + 1))
    done
    [ "$joined" -lt "$bots" ] || [ "$alive" -lt "$bots" ] || break
    [ "$(date +%s)" -lt "$gather_deadline" ] || fail "only $joined of $bots bots joined in 300 s"
    for ((i = 0; i < bots; i++)); do
      # Relaunch a bot that gave up (its ENet handshake, HELLO or WELCOME was
      # lost to the profile for too long), even one the server already counts
      # as joined: the relaunch's token names the same client (id 0, as every
      # bot's), so it takes the slot back at once, whether or not the first
      # one's disconnect got through the loss. Never kill a waiting bot: a
      # vanished peer holds the server's one-at-a-time join stream until its
      # peer timeout.
      if ! kill -0 "${pids[$i]}" 2>/dev/null; then
        wait "${pids[$i]}" 2>/dev/null || true
        relaunches=$((relaunches + 1))
        launch_bot "$i"
      fi
    done
    sleep 1
  done
  "$CTL" --socket dev.sock resume >/dev/null || fail "cannot resume the server"
  local started
  started=$(date +%s)
  # RSS samples every 2 s while the bots play.
  : >rss.txt
  (while kill -0 "$pid_server" 2>/dev/null; do
     awk '/^VmRSS:/ { print $2 }' "/proc/$pid_server/status" >>rss.txt 2>/dev/null || true
     sleep 2
   done) &
  local pid_rss=$!
  local failed=0
  for ((i = 0; i < bots; i++)); do
    wait "${pids[$i]}" ||
      { failed=$((failed + 1)); echo "bot $i exited $?: $(cat "bot$i.out" "bot$i.err" | tail -3)" >&2; }
  done
  local status
  status=$("$CTL" --json --socket dev.sock status) || fail "no status"
  kill -TERM "$pid_server"
  wait "$pid_server" || fail "server exited $?: $(tail -5 server.err)"
  kill "$pid_rss" 2>/dev/null || true
  wait "$pid_rss" 2>/dev/null || true
  # The proxy prints its counters as it exits: waited for, its line is there.
  kill -TERM "$pid_proxy"
  wait "$pid_proxy" || fail "the proxy exited $?: $(tail -3 proxy.err)"
  local elapsed=$(($(date +%s) - started))
  [ "$failed" -eq 0 ] || fail "$failed of $bots bots failed (exit 4 = desync, 1 = an error it printed)"
  [ "$(field "$status" desyncs)" = 0 ] || fail "the server counted desyncs: $status"

  # Every step in the log, and the log replays to every bot's output.
  local closed replay_json steps hashes
  closed=$(grep -o 'session log closed after [0-9]* steps' server.err | grep -o '[0-9]*') ||
    fail "no closed log: $(tail -3 server.err)"
  replay_json=$("$REPLAY" --json session.log 2>/dev/null) || fail "replay: $replay_json"
  [ "$(field "$replay_json" verdict)" = ok ] && [ "$(field "$replay_json" log_end)" = closed ] ||
    fail "replay: $replay_json"
  steps=$(field "$replay_json" steps)
  hashes=$(field "$replay_json" hashes_checked)
  [ "$steps" = "$closed" ] || fail "the log holds $steps steps, the server ran $closed"
  [ "$steps" -ge "$target" ] || fail "the server ran $steps steps, fewer than the bots' $target"
  local hashes_min=999999999 start line rollbacks=0
  for ((i = 0; i < bots; i++)); do
    line=$(grep '"event":"done"' "bot$i.out") || fail "bot $i did not finish"
    [ "$(field "$line" hashes_checked)" -lt "$hashes_min" ] && hashes_min=$(field "$line" hashes_checked)
    # Every bot predicted (the default: client/README.md "Prediction and rollback") to the end.
    grep -q '"predict":{"window":16,"on":true,' <<<"$line" || fail "bot $i did not predict to the end: $line"
    rollbacks=$((rollbacks + $(sed -n 's/.*"rollbacks":\([0-9]*\).*/\1/p' <<<"$line")))
    start=$(field "$line" start_step)
    "$REPLAY" --output "replay$i.bin" --from "$start" --to $((target - 1)) session.log 2>/dev/null
    cmp -s "replay$i.bin" "bot$i.bin" || fail "bot $i's output differs from the log's replay"
    [ -s "bot$i.bin" ] || fail "bot $i wrote no output"
  done
  [ "$hashes_min" -ge 1 ] || fail "a bot checked no state hash"

  # Flat memory after the warm-up.
  local samples warm first max
  samples=$(wc -l <rss.txt)
  warm=$((samples / 4))
  [ "$warm" -ge 5 ] || warm=5
  [ "$samples" -gt "$warm" ] || fail "only $samples RSS samples"
  first=$(sed -n "$((warm + 1))p" rss.txt)
  max=$(tail -n +"$((warm + 1))" rss.txt | sort -n | tail -1)
  if [ "${SOAK_SKIP_RSS:-0}" = 1 ]; then
    # A sanitizer build keeps freed memory in quarantine, so its RSS says
    # nothing about leaks; tools/test.sh runs this check on a plain build.
    echo "soak: RSS check skipped (SOAK_SKIP_RSS=1: sanitizer build); $first..$max KiB"
  else
    [ $((max - first)) -le "$rss_bound_kib" ] ||
      fail "server RSS grew from $first KiB to $max KiB after the warm-up (bound $rss_bound_kib KiB)"
  fi

  local counters
  counters=$(grep '"event":"exit"' proxy.out | tail -1) || fail "the proxy printed no counters: $(tail -3 proxy.out)"
  printf 'soak %-8s %4d s, %d bots, seed %s: %s steps, 0 desyncs, %s hashes verified in the log,' \
    "$profile" "$elapsed" "$bots" "$(field "$settings" seed)" "$steps" "$hashes"
  printf ' each bot checked >= %s hashes and matched the replay; server RSS %s..%s KiB after warm-up' \
    "$hashes_min" "$first" "$max"
  printf ' (%s samples); proxy lost %s, duplicated %s of %s packets; %s bot relaunches before the start;' \
    "$samples" "$(field "$counters" lost)" "$(field "$counters" duplicated)" "$(field "$counters" submitted)" \
    "$relaunches"
  printf ' the bots predicted, with %s rollbacks in all\n' "$rollbacks"
  cd "$work"
}

echo "soak: $total s over: $profiles ($seconds s each), $bots bots, work dir $work"
for profile in $profiles; do soak_profile "$profile"; done
echo "soak passed"
[ -n "${SOAK_DIR:-}" ] || rm -rf "$work"
