#!/usr/bin/env bash
# README's "A tour", run as printed: every ```sh block of the tour that a
# <!-- tour-test: ... --> marker names, in order, in a scratch directory whose
# build/release is the build under test (and its programs on PATH). The test
# fails if any command fails, and also if a tour block has no marker.
#
#   readme_tour.sh BUILD_DIR README
#
# Markers (the line before a block's ```sh):
#   tour-test: run              run each command; a cradle-client without
#                               --headless needs a display and is skipped
#   tour-test: skip. WHY        not run (WHY is printed)
#   tour-test: interrupt "TEXT" run it in the background, wait until it
#                               prints TEXT, stop it with SIGINT, expect exit 0
# Between commands the test only waits (with deadlines, never a fixed time):
#   after "cradle-server ... &"     for its "serving" line;
#   after "cradle-client ... &"     until the server lists its players
#                                   (--bots N: N of them);
#   after "cradlectl quit"          for the server to exit 0.
# Background clients end with the session (the tour kicks one and quits the
# server), which they report with exit 1: their status is not judged, but
# each must have exited once the server did.
#
# The tour's commands use port 7777 and /tmp/cradle.sock: run as root, the
# test enters its own network and mount namespaces (a private loopback and
# /tmp), so it never meets another server; otherwise it skips (exit 77) when
# either is in use.
set -euo pipefail
# A bare check that fails names its line, never ending the test in silence.
trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$(cd "$1" && pwd)
readme=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "$0")" && pwd)

# A private /tmp would hide a build or a README that lives there: then only
# the network is private, and /tmp/cradle.sock must be free.
private_tmp=1
case "$build/ $readme $here/" in */tmp/*) private_tmp= ;; esac
if [ -z "${CRADLE_TOUR_INSIDE:-}" ] && [ "$(id -u)" = 0 ] && unshare --net --mount true 2>/dev/null; then
  exec env CRADLE_TOUR_INSIDE=1 CRADLE_TOUR_PRIVATE_TMP=$private_tmp unshare --net --mount --propagation private \
    bash -c '{ [ -z "$CRADLE_TOUR_PRIVATE_TMP" ] || mount -t tmpfs tmpfs /tmp; } && ip link set lo up &&
             exec bash "$0" "$@"' "$0" "$build" "$readme"
fi
if { [ -z "${CRADLE_TOUR_INSIDE:-}" ] || [ -z "${CRADLE_TOUR_PRIVATE_TMP:-}" ]; } && [ -e /tmp/cradle.sock ]; then
  echo "skip: /tmp/cradle.sock is in use, and this run has no private /tmp"
  exit 77
fi
if [ -z "${CRADLE_TOUR_INSIDE:-}" ] && ss -uln 2>/dev/null | grep -q ':7777\b'; then
  echo "skip: UDP port 7777 is in use, and this run has no private network (not root)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build"
ln -s "$build" "$work/build/release"
export PATH="$build/server:$build/client:$build/tools:$PATH"

# The tour's blocks as one script: the README's commands, verbatim, with the
# waits above between them.
python3 - "$readme" >"$work/tour.sh" <<'EOF'
import re, shlex, sys
text = open(sys.argv[1], encoding='utf-8').read()
tour = text.split('\n## A tour\n', 1)[1].split('\n## ', 1)[0]
lines = tour.split('\n')
out = ['source "$TOUR_HELPERS"']
blocks = 0
i = 0
while i < len(lines):
    if lines[i].strip() != '```sh':
        i += 1
        continue
    marker = lines[i - 1].strip() if i > 0 else ''
    m = re.match(r'<!-- tour-test: (run|skip|interrupt)\b(.*?)-->$', marker)
    j = i + 1
    body = []
    while lines[j].strip() != '```':
        body.append(lines[j])
        j += 1
    i = j + 1
    blocks += 1
    if not m:
        sys.exit(f'README.md: a tour block has no <!-- tour-test: ... --> marker: {body[0] if body else ""}')
    kind, rest = m.group(1), m.group(2).strip()
    # Join continuation lines; drop comment-only lines.
    commands, cur = [], ''
    for line in body:
        if cur == '' and line.lstrip().startswith('#'):
            continue
        cur += line + '\n' if line.endswith('\\') else line
        if not line.endswith('\\'):
            commands.append(cur)
            cur = ''
    if kind == 'skip':
        out.append(f'tour_note {shlex.quote("skipped block: " + rest.lstrip(". "))}')
        continue
    for c in commands:
        code = c.split(' #', 1)[0].rstrip() if ' #' in c else c.rstrip()
        out.append(f'tour_note {shlex.quote("$ " + c.strip())}')
        if kind == 'interrupt':
            want = re.match(r'"([^"]*)"', rest).group(1)
            out.append(code + ' &')
            out.append(f'tour_interrupt $! {shlex.quote(want)}')
            continue
        if 'cradle-client' in code and '--headless' not in code:
            out.append('tour_note "  skipped: a windowed cradle-client needs a display"')
            continue
        out.append(c)
        if code.endswith('&'):
            if 'cradle-server' in code:
                out.append('tour_server_started $!')
            elif 'cradle-client' in code:
                bots = re.search(r'--bots (\d+)', code)
                out.append(f'tour_client_started $! {bots.group(1) if bots else 1}')
            else:
                out.append('TOUR_PIDS+=" $!"')
        if re.search(r'cradlectl\b.* quit\b', code):
            out.append('tour_server_quit')
out.append('tour_finish')
if blocks == 0:
    sys.exit('README.md: no tour blocks found')
print('\n'.join(out))
EOF

cat >"$work/helpers.sh" <<'EOF'
# Sourced by tour.sh: the waits between the tour's commands.
set -e
TOUR_PIDS= TOUR_SERVER= TOUR_CLIENTS= TOUR_SOCKET=
# Whatever the tour started and left running when it stops (a failure).
trap 'for p in $TOUR_PIDS; do kill -KILL "$p" 2>/dev/null || true; done' EXIT
tour_note() { printf '%s\n' "$*" >>tour.log; }
tour_fail() { echo "FAIL: $*" >&2; exit 1; }
tour_wait() { # tour_wait SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || tour_fail "no $what within the deadline"
    sleep 0.05
  done
}
tour_server_started() {
  TOUR_SERVER=$1
  TOUR_PIDS+=" $1"
  tour_wait 30 "serving line from the server" tour_serving
  TOUR_SOCKET=$(sed -n 's/.*"event":"listening","path":"\([^"]*\)".*/\1/p' tour.out | tail -1)
}
tour_serving() {
  kill -0 "$TOUR_SERVER" 2>/dev/null || { wait "$TOUR_SERVER" || true; tour_fail "the server exited: $(tail -5 tour.err)"; }
  grep -q '"event":"serving"' tour.out
}
tour_client_started() { # tour_client_started PID PLAYERS
  TOUR_CLIENTS+=" $1"
  TOUR_PIDS+=" $1"
  [ -n "$TOUR_SOCKET" ] || tour_fail "the server has no dev socket to watch the join on"
  TOUR_WANT=$2 TOUR_CLIENT=$1
  tour_wait 60 "$2 players in the server's list" tour_joined
}
tour_joined() {
  kill -0 "$TOUR_CLIENT" 2>/dev/null || { wait "$TOUR_CLIENT" || true; tour_fail "the client exited: $(tail -5 tour.err)"; }
  [ "$(cradlectl --socket "$TOUR_SOCKET" --json '{"cmd":"players"}' | grep -o '"slot"' | wc -l)" -ge "$TOUR_WANT" ]
}
tour_server_quit() {
  tour_wait 30 "exit of the server after quit" tour_gone "$TOUR_SERVER"
  local rc=0
  wait "$TOUR_SERVER" || rc=$?
  [ "$rc" -eq 0 ] || tour_fail "the server exited $rc after quit: $(tail -5 tour.err)"
  local p
  for p in $TOUR_CLIENTS; do
    tour_wait 30 "exit of client $p after the session ended" tour_gone "$p"
    wait "$p" || true # 1 after a kick or the server's shutdown (client/README.md)
  done
  TOUR_SERVER= TOUR_CLIENTS=
}
tour_gone() { ! kill -0 "$1" 2>/dev/null; }
tour_interrupt() { # tour_interrupt PID TEXT
  local pid=$1 text=$2
  TOUR_PIDS+=" $pid"
  TOUR_RUNNING=$pid TOUR_TEXT=$text
  tour_wait 60 "'$text' from the command" tour_printed
  kill -INT "$pid"
  tour_wait 30 "exit after SIGINT" tour_gone "$pid"
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || tour_fail "exit $rc after SIGINT: $(tail -5 tour.err)"
}
tour_printed() {
  kill -0 "$TOUR_RUNNING" 2>/dev/null || { wait "$TOUR_RUNNING" || true; tour_fail "it exited: $(tail -5 tour.err)"; }
  grep -qF -- "$TOUR_TEXT" tour.out tour.err
}
tour_finish() {
  [ -z "$TOUR_SERVER" ] || tour_fail "the tour leaves a server running"
  echo "tour: every command ran" >>tour.log
}
EOF

cd "$work"
rc=0
TOUR_HELPERS=$work/helpers.sh bash -e tour.sh >tour.out 2>tour.err || rc=$?
cat tour.log
if [ "$rc" -ne 0 ]; then
  echo "--- stdout"; tail -20 tour.out
  echo "--- stderr"; tail -40 tour.err
  echo "FAIL: the tour stopped (exit $rc) after: $(grep '^\$ ' tour.log | tail -1)"
  exit 1
fi
echo "readme_tour: ok"
