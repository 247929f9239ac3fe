#!/usr/bin/env bash
# README's Troubleshooting table against the programs' real output: every
# message in the table's first column must appear in what the programs print
# when its condition is provoked here (on loopback), so the table cannot drift
# from the code. A row whose message cannot be provoked in this test is listed
# in NOT_PROVOKED below with the reason; a new row that is in neither fails.
#
#   troubleshooting.sh README SERVER CLIENT CRADLECTL REPLAY RECORD KEYS COUNTER \
#                      RELOAD_INC1 RELOAD_BIG_STATE RELOAD_OTHER_NAME RELOAD_INC5
#
# Placeholders in a message (X, Y, N, S, HOST:PORT, PATH, ADDR:PORT, <pid>,
# numbers, "...") match any text. Waits are on conditions with deadlines.
set -euo pipefail
readme=$1 server=$2 client=$3 ctl=$4 replay=$5 record=$6 keys=$7 counter=$8
inc1=$9 big_state=${10} other_name=${11} inc5=${12}
export CRADLE_KEYS=$keys
here=$(cd "$(dirname "$0")" && pwd)
readme=$(cd "$(dirname "$readme")" && pwd)/$(basename "$readme")
work=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
source "$here/server_common.sh"
corpus=$work/corpus.txt # everything the programs printed
: >"$corpus"

# Rows that cannot be provoked here, by the start of their message, and why.
declare -A NOT_PROVOKED=(
  ['... cradle-<pid>-<n>.so: File exists']='only older builds printed it; current ones skip a crashed host'"'"'s copies'
  ['--agones: this build has no Agones support']='printed only by a build configured with -DCRADLE_AGONES=OFF (server/src/main.c)'
  ['cradle-desync-<pid>.bin']='needs a game that breaks determinism; client_desync.sh provokes it with tests/games/nondeterministic.c'
)

# run WANT_STATUS CMD...: runs CMD, appends its stdout and stderr to the corpus
# and checks its exit status.
run() {
  local want=$1; shift
  local rc=0
  timeout 60 "$@" >out.txt 2>err.txt </dev/null || rc=$? # 124: it hung
  cat out.txt err.txt >>"$corpus"
  [ "$rc" -eq "$want" ] || { cat err.txt >&2; fail "exit $rc, expected $want: $*"; }
}
# wait_for FILE PATTERN SECONDS: until grep -E finds PATTERN in FILE.
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -Eq -- "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || fail "no '$2' in $1 within $3 s: $(tail -c 500 "$1" 2>/dev/null)"
    sleep 0.05
  done
}
wait_exit() { # wait_exit PID SECONDS: sets rc to the exit status
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || fail "process $1 did not exit within $2 s"
    sleep 0.05
  done
  rc=0
  wait "$1" || rc=$?
}

# ---- the server's start-up refusals -------------------------------------------------
run 2 "$server" --game "$counter" --bind 127.0.0.1 --port 1
run 2 "$server" --game "$counter" --insecure
[ ! -e session.log ] || fail "a refused start left a log"

# ---- a secure session -----------------------------------------------------------------
cp "$inc1" game.so # its directory must be writable: the loader copies the file beside it
start_server --game "$work/game.so" --players 1 --dev-socket "$work/dev.sock" --log "$work/session.log" \
  --timeout 5000
pids+=("$SERVER_PID")
build=$(json_field "$(grep '"event":"serving"' server.out)" build)
[ -n "$build" ] || fail "no build in the serving line"

# The dev socket and the UDP port of a running server: refused, and nothing left behind.
run 1 "$server" --game "$work/game.so" --bind 127.0.0.1 --port $((PORT == 65535 ? 65534 : PORT + 1)) \
  "${SERVER_SECURITY[@]}" --dev-socket "$work/dev.sock" --log "$work/second.log"
run 3 "$server" --game "$work/game.so" --bind 127.0.0.1 --port "$PORT" "${SERVER_SECURITY[@]}" \
  --dev-socket "$work/third.sock" --log "$work/third.log"
[ ! -e second.log ] && [ ! -e third.log ] && [ ! -e third.sock ] || fail "a failed start left files behind"

# A client that cannot prove the server: a pinned key that is not the server's.
run 1 "$client" --headless --game "$work/game.so" --port "$PORT" --server-key "$(printf '%064d' 7)" \
  --issuer-key issuer.key --connect-timeout 1500 --steps 100000000
# Tokens: one for another build (from a client of the right build), then one used twice.
bad_build=$("$keys" token --key issuer.key --client-id 1 --server-id "$SERVER_ID" --build other-build --ttl 60)
run 1 "$client" --headless --game "$work/game.so" --port "$PORT" --server-key "$SERVER_ID" --token "$bad_build" \
  --steps 100000000
grep -q '(auth): token_build' err.txt || fail "a token for another build is not reported as token_build"
token=$("$keys" token --key issuer.key --client-id 1 --server-id "$SERVER_ID" --build "$build" --ttl 60)
"$client" --headless --game "$work/game.so" --port "$PORT" --server-key "$SERVER_ID" --token "$token" \
  >first.out 2>first.err &
first=$!
pids+=("$first")
wait_for first.out '"event":"playing"' 20
kill -INT "$first" # the token did its one join: leave
wait_exit "$first" 20
[ "$rc" -eq 0 ] || fail "the first use of the token: exit $rc: $(cat first.err)"
run 1 "$client" --headless --game "$work/game.so" --port "$PORT" --server-key "$SERVER_ID" --token "$token" \
  --steps 100000000
# Another build of the game (+5 a step, not +1).
cp "$inc5" other-build.so
run 1 "$client" --headless --game "$work/other-build.so" --port "$PORT" "${CLIENT_SECURITY[@]}" --steps 100000000
# An --insecure client gets the whole refusal text (the REFUSE is cut to its HELLO's size).
run 1 "$client" --headless --game "$work/game.so" --port "$PORT" --insecure --steps 100000000
grep -q 'needs a join token$' err.txt || fail "the insecure client's refusal is cut: $(cat err.txt)"
# --steps already past (client/README.md): refused, exit 2.
run 2 "$client" --headless --game "$work/game.so" --port "$PORT" "${CLIENT_SECURITY[@]}" --steps 1
grep -q -- '--steps 1 is already past' err.txt || fail "--steps in the past: $(cat err.txt)"

# The one slot taken: the next player is refused (full).
"$client" --headless --game "$work/game.so" --port "$PORT" "${CLIENT_SECURITY[@]}" --bot --steps 100000000 \
  --silence-timeout 1500 >holder.out 2>holder.err &
holder=$!
pids+=("$holder")
wait_for holder.out '"event":"playing"' 20
run 1 "$client" --headless --game "$work/game.so" --port "$PORT" "${CLIENT_SECURITY[@]}" --client-id 9 \
  --steps 100000000
# The server falls silent (stopped): the holder gives up after --silence-timeout.
kill -STOP "$SERVER_PID"
wait_exit "$holder" 20
kill -CONT "$SERVER_PID"
cat holder.out holder.err >>"$corpus"
[ "$rc" -eq 1 ] || fail "the silenced client exits $rc, expected 1: $(cat holder.err)"

# Reloads the host refuses: a state that outgrew the block, then another game.
swap_in() { cp "$1" game.so.new && mv -f game.so.new game.so; }
swap_in "$big_state"
"$ctl" --socket "$work/dev.sock" reload >>"$corpus" 2>&1 || true
wait_for server.err 'refused \(state_size\)' 10
swap_in "$other_name"
"$ctl" --socket "$work/dev.sock" reload >>"$corpus" 2>&1 || true
wait_for server.err 'refused \(game_mismatch\)' 10
"$ctl" --socket "$work/dev.sock" quit >/dev/null
wait_exit "$SERVER_PID" 20
[ "$rc" -eq 0 ] || fail "server exit $rc: $(cat server.err)"
cat server.out server.err >>"$corpus"

# Nothing listens: the client's connect timeout, cradlectl's socket.
run 1 "$client" --headless --game "$work/game.so" --port "$PORT" --insecure --connect-timeout 500
run 1 "$ctl" --socket "$work/nobody.sock" status

# ---- logs: a torn tail, damage in the middle, a golden difference --------------------
run 0 "$record" --game "$counter" --log rec.log --steps 3000 --players 2 --block-size 4096
size=$(stat -c %s rec.log)
head -c $((size - 100)) rec.log >torn.log
run 0 "$replay" --game "$counter" torn.log
cp rec.log damaged.log
printf '\xff' | dd of=damaged.log bs=1 seek=$((size / 3)) conv=notrunc status=none
run 1 "$replay" --game "$counter" damaged.log
run 0 "$replay" --bless rec.golden rec.log
printf '\x5a' | dd of=rec.golden bs=1 seek=500 conv=notrunc status=none
run 1 "$replay" --golden rec.golden rec.log
# a digest golden file: window 1's digest (its line is the file's tenth) changed
run 0 "$replay" --bless rec.digest --digest 100 rec.log
awk 'NR == 10 { $2 = (substr($2, 1, 1) == "0" ? "1" : "0") substr($2, 2) } { print }' rec.digest >flipped.digest
run 1 "$replay" --golden flipped.digest rec.log

# ---- the table against the corpus ---------------------------------------------------------
python3 - "$readme" "$corpus" "$(for k in "${!NOT_PROVOKED[@]}"; do printf '%s\n' "$k"; done)" <<'EOF'
import re, sys
readme, corpus_path, skipped = sys.argv[1], sys.argv[2], [s for s in sys.argv[3].split('\n') if s]
text = open(readme, encoding='utf-8').read()
section = text.split('\n## Troubleshooting\n', 1)[1].split('\n## ', 1)[0]
corpus = open(corpus_path, encoding='utf-8', errors='replace').read()
placeholder = re.compile(r'\.\.\.|<pid>|<n>|HOST:PORT|ADDR:PORT|PATH|\b[A-Z]\b|\d+')
failures, checked = [], 0
for line in section.splitlines():
    if not line.startswith('| ') or line.startswith('| message') or line.startswith('| ---'):
        continue
    first = line.split(' | ', 1)[0]
    m = re.search(r'`([^`]+)`', first)
    if not m:
        continue
    message = m.group(1)
    if any(message.startswith(s) or s in message for s in skipped):
        print(f'not provoked: {message}')
        continue
    pattern, at = '', 0
    for p in placeholder.finditer(message):
        pattern += re.escape(message[at:p.start()]) + ('.*?' if p.group() == '...' else r'\S+?')
        at = p.end()
    pattern += re.escape(message[at:])
    checked += 1
    if re.search(pattern, corpus):
        print(f'found: {message}')
    else:
        failures.append(message)
for f in failures:
    print(f'FAIL: no program printed: {f}', file=sys.stderr)
print(f'{checked} messages checked, {len(failures)} missing')
sys.exit(1 if failures or checked == 0 else 0)
EOF
