# Helpers for the cradle-server integration tests (sourced, not run).
#
# start_server ARGS...  starts "$server" on 127.0.0.1 at a random free high
#                       port (retrying when the port is taken: exit 3) with
#                       ARGS, waits for its "serving" line, and sets PORT and
#                       SERVER_PID. Its stdout goes to server.out, stderr to
#                       server.err (in the current directory).
# json_field LINE KEY   prints the value of "KEY" in a flat JSON line.
# wait_until SECS WHAT CMD...  runs CMD (a function too) until it succeeds;
#                       after SECS seconds fails, naming WHAT. Tests wait for
#                       a condition, never for a fixed time.
# no_steps_dropped_since COUNT STATUS [ALLOWED]  fails, saying how many, when
#                       STATUS (a status reply) shows more than ALLOWED
#                       (default 0) dropped_steps past COUNT:
#                       the count taken before the event a test checks (a
#                       start-up on a busy machine may drop a step or two).
#
# Sourcing it also sets an ERR trap: a bare check that fails at a test's top
# level (under set -e) names its line and command on stderr before the test
# exits, so a failure never passes in silence. A test's own ERR trap replaces it.

source "$(dirname "${BASH_SOURCE[0]}")/../../tools/session_keys.sh"

# secure_setup        (called by start_server) creates issuer.key and
#                       server.key in the current directory with cradle-keys
#                       (beside "$server": ../tools/cradle-keys, or
#                       $CRADLE_KEYS), and sets SERVER_SECURITY (the server's
#                       flags), CLIENT_SECURITY (cradle-client's flags), SERVER_ID,
#                       ISSUER_PUB, KEYS_BIN, and exports CRADLE_TEST_SERVER_KEY
#                       and CRADLE_TEST_ISSUER_KEY for cradle-test-client.
# The servers are secure by default, as in production; set
# CRADLE_TEST_INSECURE=1 before start_server for a plaintext (--insecure) one.

secure_setup() {
  KEYS_BIN=${CRADLE_KEYS:-$(dirname "$server")/../tools/cradle-keys}
  session_keys "$KEYS_BIN" "$PWD"
  # Loopback tests connect many clients from one address: a generous limiter.
  SERVER_SECURITY=(--key server.key --trust "$ISSUER_PUB" --connect-rate 1000 --connect-burst 1000)
  CLIENT_SECURITY=(--server-key "$SERVER_ID" --issuer-key "$PWD/issuer.key")
}

start_server() {
  local try
  local security=()
  if [ -n "${CRADLE_TEST_INSECURE:-}" ]; then
    security=(--insecure)
    CLIENT_SECURITY=(--insecure)
  else
    secure_setup || return 1
    security=("${SERVER_SECURITY[@]}")
  fi
  for try in 1 2 3 4 5 6 7 8; do
    # Below the kernel's ephemeral ports (32768-60999 on Debian), which
    # every client socket of every test running beside this one takes from.
    PORT=$((20000 + RANDOM % 12000))
    : >server.out
    "$server" --bind 127.0.0.1 --port "$PORT" "${security[@]}" "$@" >server.out 2>server.err &
    SERVER_PID=$!
    # A sanitizer build on a busy machine can take seconds to start: the
    # deadline is generous, and a server still starting at it is stopped
    # and named, never waited for without end.
    local deadline=$((SECONDS + 60))
    while :; do
      if grep -q '"event":"serving"' server.out 2>/dev/null; then return 0; fi
      if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
      if [ $SECONDS -ge $deadline ]; then
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        echo "server did not print \"serving\" within 60 s:" >&2
        cat server.err >&2
        return 1
      fi
      sleep 0.05
    done
    local rc=0
    wait "$SERVER_PID" || rc=$?
    if [ "$rc" -ne 3 ]; then
      echo "server failed to start (exit $rc):" >&2
      cat server.err >&2
      return 1
    fi
  done
  echo "no free port found" >&2
  return 1
}

json_field() {
  echo "$1" | sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\)\"\{0,1\}.*/\1/p"
}

stop_server_on_exit() {
  if [ -n "${SERVER_PID:-}" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
}

no_steps_dropped_since() {
  local now allowed=${3:-0}
  now=$(json_field "$2" dropped_steps)
  [ "$((now - $1))" -le "$allowed" ] && return 0
  echo "$((now - $1)) steps dropped since the count of $1 (at most $allowed allowed): $2" >&2
  return 1
}

wait_until() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if [ $SECONDS -ge $deadline ]; then
      echo "timed out after $limit s waiting for $what" >&2
      return 1
    fi
    sleep 0.05
  done
}

trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
