#!/usr/bin/env bash
# deploy/cradle-server@.service hosts many sessions on one machine: ten
# instances, started as plain processes from the installed unit's own lines
# (systemd is not PID 1 here). `cmake --install` into a temporary prefix
# gives the units with their paths rewritten to it; unit_exec.py reads the
# template's [Service] section and expands, for each instance name, the
# specifiers (%i %I %n %N %p %P %%, and %E %S %t as ROOT/etc, ROOT/var/lib,
# ROOT/run in a temporary ROOT) and the variables systemd sets
# (${INVOCATION_ID}, ...). For each instance this writes its config
# ROOT/etc/cradle/NAME.json as deploy/README.md tells an operator to (from
# the installed server.json: its own port on 127.0.0.1, its game and key in
# its own state directory; secure, with issuer keys made by cradle-keys),
# creates its StateDirectory= and RuntimeDirectory= with their modes, runs
# its ExecStartPre= lines, then ExecStart= with exactly that argv, as
# systemd would for DynamicUser=yes with no capabilities when run as root:
# its own uid, no new privileges, the unit's UMask=. Each must print its
# "serving" line with its config's port, listen on the dev socket in its own
# runtime directory and answer `cradlectl --socket SOCK status` (as root,
# like `sudo cradlectl`); then each gets KillSignal= and must exit 0 within
# TimeoutStopSec= with its log in its own logs/ directory.
# With systemd-analyze (package systemd): `verify` on both installed units,
# and `security --offline=true` must rate the template no worse than
# cradle-server.service; without it that part is skipped, saying so.
#   template_unit.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
sessions=10

work=$(mktemp -d /tmp/cradle-units-XXXXXX)
chmod 0755 "$work" # the instances' users must reach their directories
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.txt" || { cat "$work/install.txt"; fail "cmake --install"; }
units=$prefix/lib/systemd/system
template=$units/cradle-server@.service
[ -f "$template" ] || fail "cmake --install put no cradle-server@.service in lib/systemd/system"

# 1. systemd's own checks of both installed units.
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$units/cradle-server.service" "$template" >"$work/verify.txt" 2>&1 ||
    { cat "$work/verify.txt"; fail "systemd-analyze verify"; }
  [ ! -s "$work/verify.txt" ] || { cat "$work/verify.txt"; fail "systemd-analyze verify printed warnings"; }
  exposure() {
    systemd-analyze security --offline=true "$1" 2>/dev/null |
      sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
  }
  single=$(exposure "$units/cradle-server.service") many=$(exposure "$template")
  [ -n "$single" ] && [ -n "$many" ] || fail "systemd-analyze security printed no exposure level"
  echo "systemd-analyze security: cradle-server.service $single, cradle-server@.service $many"
  awk -v a="$many" -v b="$single" 'BEGIN { exit !(a <= b) }' ||
    fail "the template's exposure $many is worse than cradle-server.service's $single"
else
  echo "skipped: systemd-analyze verify and security (no systemd-analyze: install the package systemd)"
fi

# 2. Keys: one token issuer trusted by every session (a file like /etc/cradle/trusted-issuers.txt).
root=$work/root
mkdir -p "$root/etc/cradle" "$root/var/lib" "$root/run" "$work/keys"
session_keys "$prefix/bin/cradle-keys" "$work/keys"
echo "$ISSUER_PUB" >"$root/etc/cradle/trusted-issuers.txt"

# config NAME PORT: the instance's config, made from the installed example as
# deploy/README.md says (its state directory instead of /var/lib/cradle, its
# port), with this test's root for /etc and /var/lib, and a loopback bind.
config() {
  python3 - "$prefix/share/cradle/server.json" "$root" "$1" "$2" >"$root/etc/cradle/$1.json" <<'EOF'
import json, sys
example, root, name, port = sys.argv[1:5]
config = json.load(open(example))
for key, value in config.items():
    if isinstance(value, str) and value.startswith("/var/lib/cradle/"):
        config[key] = root + "/var/lib/cradle-" + name + "/" + value[len("/var/lib/cradle/"):]
    elif isinstance(value, str) and value.startswith("/etc/cradle/"):
        config[key] = root + value
config["port"], config["bind"] = int(port), "127.0.0.1"
assert not config.get("insecure"), "the example config is secure"
print(json.dumps(config, indent=2))
EOF
}

# run_as INDEX CWD UMASK CMD...: execs CMD in CWD with UMASK as instance
# INDEX's own user, as DynamicUser=yes, CapabilityBoundingSet= and
# NoNewPrivileges=yes would (when run as root; else as this user).
run_as() {
  local index=$1 cwd=$2 mask=$3
  shift 3
  cd "$cwd"
  umask "$mask"
  if [ "$(id -u)" -eq 0 ]; then
    exec setpriv --reuid=$((61184 + index)) --regid=$((61184 + index)) --clear-groups --no-new-privs \
      --bounding-set=-all --inh-caps=-all "$@"
  fi
  exec "$@"
}

free_port() { # a random high port no other instance has
  local port i
  while :; do
    port=$((20000 + RANDOM % 12000))
    for i in "${!PORTS[@]}"; do [ "${PORTS[$i]}" != "$port" ] || continue 2; done
    echo "$port"
    return
  done
}

# start INDEX: lays out instance INDEX (its plan from the unit, its config, its
# directories), runs its ExecStartPre= lines, and starts ExecStart=.
PORTS=() NAMES=()
start() {
  local i=$1 name plan mode path pre rc argv=() env=()
  name=session$(printf %02d "$i")
  plan=$work/plan/$name
  NAMES[$i]=$name
  rm -rf "$plan"
  python3 "$here/unit_exec.py" "$template" "$name" "$root" "$plan" || fail "the unit (above)"
  PORTS[$i]=$(free_port)
  config "$name" "${PORTS[$i]}"
  while read -r mode path; do
    mkdir -p "$path"
    chmod "$mode" "$path"
    [ "$(id -u)" -ne 0 ] || chown $((61184 + i)):$((61184 + i)) "$path"
  done <"$plan/dirs"
  mapfile -d '' -t env <"$plan/env"
  for pre in "$plan"/pre-*.argv; do
    [ -e "$pre" ] || break
    mapfile -d '' -t argv <"$pre"
    rc=0
    (run_as "$i" "$(cat "$plan/cwd")" "$(cat "$plan/umask")" env -i "${env[@]}" "${argv[@]}") \
      >"$work/$name.pre.out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && [ "$(cat "${pre%.argv}.ignore")" != 1 ]; then
      cat "$work/$name.pre.out"
      fail "$name: ExecStartPre ${argv[*]} exited $rc"
    fi
  done
  mapfile -d '' -t argv <"$plan/start.argv"
  # systemd runs the server itself (no shell between: `verify` checks the binary).
  [ "${argv[0]}" = "$prefix/bin/cradle-server" ] || fail "ExecStart= runs ${argv[0]}, not $prefix/bin/cradle-server"
  (run_as "$i" "$(cat "$plan/cwd")" "$(cat "$plan/umask")" env -i "${env[@]}" "${argv[@]}") \
    >"$work/$name.out" 2>"$work/$name.err" &
  PIDS[$i]=$!
}

serving() { grep -q '"event":"serving"' "$work/${NAMES[$1]}.out" 2>/dev/null; }
alive() { kill -0 "${PIDS[$1]}" 2>/dev/null; }
settled() { # every instance serves or has exited
  local i
  for i in $(seq 1 $sessions); do serving "$i" || ! alive "$i" || return 1; done
}

# 3. Ten sessions at once. One whose port is taken exits 3 and starts again on another.
for i in $(seq 1 $sessions); do start "$i"; done
for try in 1 2 3 4 5; do
  wait_until 60 "every session to serve or exit" settled
  again=()
  for i in $(seq 1 $sessions); do
    serving "$i" && continue
    rc=0; wait "${PIDS[$i]}" || rc=$?
    [ "$rc" -eq 3 ] || { cat "$work/${NAMES[$i]}.err"; fail "${NAMES[$i]} exited $rc"; }
    again+=("$i")
  done
  [ ${#again[@]} -gt 0 ] || break
  for i in "${again[@]}"; do start "$i"; done
done

# 4. Each on its own port and its own socket, answering status.
for i in $(seq 1 $sessions); do
  name=${NAMES[$i]}
  serving "$i" || fail "$name never served"
  line=$(grep '"event":"serving"' "$work/$name.out")
  [ "$(json_field "$line" port)" = "${PORTS[$i]}" ] || fail "$name serves on port $(json_field "$line" port), its config says ${PORTS[$i]}"
  [ "$(json_field "$line" address)" = 127.0.0.1 ] || fail "$name: not on 127.0.0.1: $line"
  [ -n "$(json_field "$line" server_id)" ] || fail "$name is not secure: $line"
  sock=$(sed -n 's/.*"event":"listening","path":"\([^"]*\)".*/\1/p' "$work/$name.out")
  [ "${sock#"$root/run/cradle-$name/"}" != "$sock" ] ||
    fail "$name's dev socket '$sock' is not in its own runtime directory $root/run/cradle-$name"
  status=$("$prefix/bin/cradlectl" --socket "$sock" status) || fail "$name: cradlectl status"
  case $status in ok\ *) ;; *) fail "$name: status did not answer ok: $status" ;; esac
  if [ "$(id -u)" -eq 0 ]; then
    [ "$(awk '/^Uid:/ { print $2 }' "/proc/${PIDS[$i]}/status")" = $((61184 + i)) ] ||
      fail "$name does not run as its own user"
  fi
  echo "$name: port ${PORTS[$i]}, socket ${sock#"$root"}, $(echo "$status" | grep -o 'log=[^ ]*' | sed "s|$root||")"
done

# 5. systemctl stop: KillSignal=, then at most TimeoutStopSec= for each.
read -r signal stop_seconds <"$work/plan/${NAMES[1]}/stop" || true # (no newline at its end)
for i in $(seq 1 $sessions); do kill -s "${signal#SIG}" "${PIDS[$i]}"; done
all_exited() {
  local i
  for i in $(seq 1 $sessions); do ! alive "$i" || return 1; done
}
wait_until "$stop_seconds" "every session to stop within TimeoutStopSec=$stop_seconds" all_exited
for i in $(seq 1 $sessions); do
  name=${NAMES[$i]}
  rc=0; wait "${PIDS[$i]}" || rc=$?
  [ "$rc" -eq 0 ] || { cat "$work/$name.err"; fail "$name exited $rc after $signal"; }
  logs=("$root/var/lib/cradle-$name/logs"/session-*.log)
  [ -s "${logs[0]}" ] || fail "$name left no session log in its logs directory"
done
PIDS=()
echo "template unit ok: $sessions sessions"
