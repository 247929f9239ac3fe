#!/usr/bin/env bash
# deploy/fleet.yaml starts a server that serves: one pod of the Fleet, stood
# in for on this machine (no Kubernetes here). fleet_pod.py reads the
# manifest and deploy/Containerfile (its image) and checks that they agree:
# the Secret that the header's `kubectl create secret` line makes (the same
# line as in deploy/README.md) is the one mounted, the server's trust file
# (args over the image's config) is a file of that mount, the server's port
# is the GameServer's containerPort. It lays out the pod's volumes as the
# kubelet does (the Secret's files as symlinks into ..data, mode defaultMode
# made group-readable by fsGroup, owned by root) with keys made here by
# cradle-keys, and gives the argv, environment and working directory of each
# container: the image's entry point with the manifest's args, only the paths
# under the mounts and the image's own files rewritten to the stand-in's
# directories. This runs the init containers, then the server with that argv
# plus --bind 127.0.0.1 --port N (loopback here; a pod has a network of its
# own), as the pod's user (runAsUser, runAsGroup, fsGroup; no capabilities,
# no new privileges) when run as root, with the Agones stand-in sidecar when
# the argv has --agones. The server must print its "serving" line with the
# Secret's server id, answer `cradlectl status` (run as the pod's user, as
# `kubectl exec` would), report Ready, and on SIGTERM close its log, report
# Shutdown and exit 0.
#   fleet_manifest.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

# PyYAML: Debian's python3-yaml (tools/setup.sh) is for /usr/bin/python3.
python=
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import yaml' 2>/dev/null; then python=$candidate; break; fi
done
[ -n "$python" ] || fail "no python3 with PyYAML (install python3-yaml: tools/setup.sh)"

work=$(mktemp -d /tmp/cradle-fleet-XXXXXX)
chmod 0755 "$work" # the pod's user must reach the stand-in's directories
SERVER_PID= STANDIN_PID=
cleanup() {
  [ -z "$SERVER_PID" ] || kill -KILL "$SERVER_PID" 2>/dev/null || true
  [ -z "$STANDIN_PID" ] || kill "$STANDIN_PID" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The image's installed tree: fleet_pod.py checks that the Containerfile's
# final stage copies a `cmake --install` staged under this prefix.
prefix=$(sed -n 's/.*-DCMAKE_INSTALL_PREFIX=\([^ ]*\).*/\1/p' "$src/deploy/Containerfile" | head -1)
[ -n "$prefix" ] || fail "deploy/Containerfile names no CMAKE_INSTALL_PREFIX"
DESTDIR=$work/image cmake --install "$build" --prefix "$prefix" >"$work/install.txt" ||
  { cat "$work/install.txt"; fail "cmake --install"; }
keys_bin=$work/image$prefix/bin/cradle-keys

# The files the kubectl line names (issuer keys trusted, the server key).
mkdir "$work/files"
session_keys "$keys_bin" "$work/files"
echo "$ISSUER_PUB" >"$work/files/trusted-issuers.txt"

"$python" "$here/fleet_pod.py" "$src/deploy/fleet.yaml" "$src/deploy/Containerfile" \
  "$src/deploy/README.md" "$work/image" "$work/files" "$work/pod" || fail "the manifest (above)"
pod=$work/pod

# as_pod CMD...: runs CMD as the pod's user, as the container runtime would.
read -r uid gid groups <"$pod/user" || true
as_pod=()
if [ -n "${uid:-}" ] && [ "$(id -u)" -eq 0 ]; then
  as_pod=(setpriv --reuid="$uid" --regid="$gid" --no-new-privs --bounding-set=-all --inh-caps=-all)
  if [ "$groups" = - ]; then as_pod+=(--clear-groups); else as_pod+=(--groups="$groups"); fi
elif [ -n "${uid:-}" ]; then
  echo "note: not root: the containers run as $(id -un), not uid $uid (the Secret's files are $(id -un)'s)"
fi

# run_container NAME [EXTRA_ENV...] -- [EXTRA_ARGS...]: execs the container NAME's
# argv in its environment and working directory (for the caller to background).
run_container() {
  local name=$1 extra_env=() extra_args=() argv=() env=()
  shift
  while [ "$1" != -- ]; do extra_env+=("$1"); shift; done
  shift
  extra_args=("$@")
  mapfile -d '' -t argv <"$pod/$name.argv"
  mapfile -d '' -t env <"$pod/$name.env"
  cd "$(cat "$pod/$name.cwd")"
  exec env -i "${env[@]}" "${extra_env[@]}" "${as_pod[@]}" "${argv[@]}" "${extra_args[@]}"
}

# 1. The init containers, in order, each to completion.
for argv in "$pod"/init-*.argv; do
  [ -e "$argv" ] || break
  name=$(basename "$argv" .argv)
  rc=0
  (run_container "$name" --) >"$work/$name.out" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { cat "$work/$name.out"; fail "init container $name exited $rc"; }
done

# 2. The Agones sidecar, when the server reports to it.
agones_env=()
if [ "$(cat "$pod/agones")" = 1 ]; then
  python3 "$here/agones_standin.py" "$work/sdk.port" "$work/sdk-calls.txt" & STANDIN_PID=$!
  wait_until 10 "the Agones stand-in" test -s "$work/sdk.port"
  : >>"$work/sdk-calls.txt"
  agones_env=(AGONES_SDK_HTTP_PORT="$(cat "$work/sdk.port")" AGONES_SDK_GRPC_PORT=9357)
fi

# 3. The game server, on a free loopback port (exit 3: taken, try another).
serving() { grep -q '"event":"serving"' "$work/server.out" 2>/dev/null; }
exited() { ! kill -0 "$SERVER_PID" 2>/dev/null; }
for try in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 12000))
  (run_container server "${agones_env[@]}" -- --bind 127.0.0.1 --port "$port") \
    >"$work/server.out" 2>"$work/server.err" &
  SERVER_PID=$!
  wait_until 30 "the server's serving line or its exit" bash -c \
    'grep -q "\"event\":\"serving\"" "$1" 2>/dev/null || ! kill -0 "$2" 2>/dev/null' _ "$work/server.out" "$SERVER_PID"
  serving && break
  rc=0; wait "$SERVER_PID" || rc=$?; SERVER_PID=
  [ "$rc" -eq 3 ] || { cat "$work/server.err"; fail "the pod's server exited $rc"; }
done
serving || fail "no free port found"
line=$(grep '"event":"serving"' "$work/server.out")
echo "serving: $line"
if [ ${#as_pod[@]} -gt 0 ]; then
  [ "$(awk '/^Uid:/ { print $2 }' "/proc/$SERVER_PID/status")" = "$uid" ] || fail "the server does not run as uid $uid"
fi
if [ -s "$pod/server-key" ]; then
  [ "$(json_field "$line" server_id)" = "$SERVER_ID" ] ||
    fail "the server's id is not the Secret's server.key's ($SERVER_ID)"
fi
sock=$(sed -n 's/.*"event":"listening","path":"\([^"]*\)".*/\1/p' "$work/server.out")
[ -n "$sock" ] || fail "no dev socket (the entry point passes --dev-socket)"
status=$("${as_pod[@]}" "$work/image$prefix/bin/cradlectl" --socket "$sock" status) || fail "cradlectl status"
echo "status: ${status:0:60} ..."
case $status in ok\ *) ;; *) fail "status did not answer ok" ;; esac
if [ -n "$STANDIN_PID" ]; then
  wait_until 10 "Ready reported to the Agones stand-in" grep -q ' /ready ' "$work/sdk-calls.txt"
fi

# 4. The kubelet stops a pod with SIGTERM.
kill -TERM "$SERVER_PID"
wait_until 20 "the server to exit after SIGTERM" exited
rc=0; wait "$SERVER_PID" || rc=$?; SERVER_PID=
[ "$rc" -eq 0 ] || { cat "$work/server.err"; fail "the server exited $rc after SIGTERM"; }
if [ -n "$STANDIN_PID" ]; then
  grep -q ' /shutdown ' "$work/sdk-calls.txt" || fail "no Shutdown reported"
fi
ls "$pod"/volumes/*/logs/session-*.log >/dev/null 2>&1 || fail "no session log in the pod's volume"
echo "fleet manifest ok"
