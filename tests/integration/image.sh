#!/usr/bin/env bash
# deploy/Containerfile's image, built with podman and run as deploy/fleet.yaml
# runs it: the pod of fleet_manifest.sh, but in the real image.
#
#  1. Can podman run a container here? A tiny image (this machine's
#     /bin/true) is started with each runtime in turn (runc first: crun fails
#     on rlimits and cgroups on the CI's machines), with explicit ulimits
#     (podman's default nofile is above the hard limit there) and
#     --network=host. If podman is missing, `podman info` fails or no runtime
#     starts it, or the base image cannot be made (debootstrap missing, not
#     root), this prints one "SKIP: ..." line and exits 77 (CTest's skip).
#  2. The base: debian:12-slim if the machine has it, else
#     localhost/cradle-base:bookworm, made here (no registry is reachable
#     from CI, Debian's mirror is): `debootstrap --variant=minbase bookworm`,
#     slimmed as Debian's slim images are (no docs, man pages, locales, apt
#     lists, and dpkg told to skip them in later installs too) and
#     `podman import`ed. It is the cache: kept, and remade when older than
#     7 days.
#  3. The image: `podman build` of deploy/Containerfile with --build-arg
#     BASE=<the base> and JOBS (2 at most), tagged
#     localhost/cradle-server:image-test. podman's layer cache keeps the apt
#     steps of both stages: a second run on the same machine compiles only.
#     The image must stay under CRADLE_IMAGE_MAX_MB (default 120) MB.
#  4. The pod: image_pod.py (fleet_pod.py's checks and volumes, then podman
#     options from the manifest: user, groups, read-only root, capabilities,
#     no new privileges, limits, mounts, args) with the Secret's files made by
#     cradle-keys; the init container copies the key, then the server runs
#     detached with the manifest's args plus --bind 127.0.0.1 --port N on the
#     host's network beside the Agones stand-in (AGONES_SDK_HTTP_PORT).
#  5. Checks: the "serving" line names the Secret's server id, the server
#     runs as uid 10001, cradlectl in the container answers status
#     (`kubectl exec`), Ready reached the stand-in; a headless client joins
#     with a token and the server id of the serving line and runs 300 steps
#     from the step it joined at, every state hash checked; `podman stop` (SIGTERM): Shutdown
#     reached the stand-in, the container exited 0, and the session log in
#     the volume replays (here, with the build archived in the image) to the
#     client's output bytes and to its trailer's final hash.
# Prints the time of each part ("timing: ...") and the image's size.
#   image.sh SOURCE_DIR CLIENT KEYS GAME REPLAY
set -euo pipefail
src=$(cd "$1" && pwd) client=$2 keys_bin=$3 game=$4 replay=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_common.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: integration.image: $*"; exit 77; }
started=$SECONDS

tag=localhost/cradle-server:image-test
local_base=localhost/cradle-base:bookworm
label=cradle.test=image
work=$(mktemp -d /tmp/cradle-image-XXXXXX)
chmod 0755 "$work" # the pod's user (uid 10001) must reach the volumes under it
probe= STANDIN_PID= containers=()
cleanup() {
  local c
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  [ -z "$probe" ] || podman rmi -f "$probe" >/dev/null 2>&1 || true
  [ -z "$STANDIN_PID" ] || kill "$STANDIN_PID" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# PyYAML: Debian's python3-yaml (tools/setup.sh) is for /usr/bin/python3.
python=
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import yaml' 2>/dev/null; then python=$candidate; break; fi
done
[ -n "$python" ] || fail "no python3 with PyYAML (install python3-yaml: tools/setup.sh)"

# 1. podman, and a runtime that starts a container on this machine.
command -v podman >/dev/null || skip "podman is not installed (tools/setup.sh installs podman and runc)"
[ "$(id -u)" -eq 0 ] || skip "not root: the pod's files are laid out as the kubelet does (root and uid 10001), which rootless podman cannot map"
podman info >"$work/info.out" 2>&1 || skip "\`podman info\` fails: $(grep -m1 -i error "$work/info.out" || tail -1 "$work/info.out")"
# Explicit ulimits at or below the hard limits: podman's defaults (nofile
# 1048576) are refused where the hard limit is lower, and nproc is refused
# above the kernel's pid_max in some sandboxes.
hard_nofile=$(ulimit -Hn) hard_nproc=$(ulimit -Hu)
nofile=1024 nproc=4096
[ "$hard_nofile" = unlimited ] || [ "$hard_nofile" -ge $nofile ] || nofile=$hard_nofile
[ "$hard_nproc" = unlimited ] || [ "$hard_nproc" -ge $nproc ] || nproc=$hard_nproc
limits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
# Containers a killed run of this test left (its pid label names a dead process).
podman ps -a --filter "label=$label" --format '{{.Names}} {{index .Labels "cradle.test.pid"}}' 2>/dev/null |
  while read -r name pid; do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then podman rm -f -t 0 "$name" >/dev/null 2>&1 || true; fi
  done
mkdir -p "$work/probe/bin"
cp /bin/true "$work/probe/bin/true"
for lib in $(ldd /bin/true | grep -o '/[^ ]*'); do
  mkdir -p "$work/probe$(dirname "$lib")" && cp -L "$lib" "$work/probe$lib"
done
probe=localhost/cradle-image-probe:$$
tar -C "$work/probe" -c . | podman import - "$probe" >"$work/probe.out" 2>&1 ||
  skip "podman cannot import an image: $(tail -1 "$work/probe.out")"
runtime= why=
for candidate in runc crun ""; do
  flags=()
  if [ -n "$candidate" ]; then
    command -v "$candidate" >/dev/null || continue
    flags=(--runtime "$candidate")
  fi
  if podman "${flags[@]}" run --rm --network=host --read-only "${limits[@]}" "$probe" /bin/true \
    >"$work/probe.out" 2>&1; then
    runtime=${candidate:-default}
    break
  fi
  why="${why:+$why; }${candidate:-the default runtime}: $(tail -1 "$work/probe.out")"
done
podman rmi -f "$probe" >/dev/null 2>&1 || true
probe=
[ -n "$runtime" ] || skip "no container runtime starts a container here (${why:-no runc or crun})"
pm() { podman "${flags[@]}" "$@"; }
echo "podman: $(podman --version | awk '{ print $3 }'), runtime $runtime ($("${runtime/default/podman}" --version 2>/dev/null | head -1)), storage $(podman info --format '{{.Store.GraphDriverName}}'), ulimits nofile=$nofile nproc=$nproc"

# 2. The base image.
base=${CRADLE_IMAGE_BASE:-}
if [ -z "$base" ] && podman image exists docker.io/library/debian:12-slim; then
  base=docker.io/library/debian:12-slim
fi
if [ -z "$base" ]; then
  base=$local_base
  created=$(podman image inspect --format '{{.Created.Unix}}' "$base" 2>/dev/null || echo 0)
  if [ $(( $(date +%s) - created )) -gt $((7 * 86400)) ]; then
    command -v debootstrap >/dev/null ||
      skip "no debian:12-slim image and no debootstrap to make one (tools/setup.sh installs it)"
    t=$SECONDS
    root=$work/root
    mirror=${CRADLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log"; fail "debootstrap of bookworm from $mirror"; }
    echo "timing: debootstrap $((SECONDS - t)) s"
    # As Debian's slim images (debuerreotype): no docs, man pages or locales,
    # now or in later installs; apt cleans its downloads; the three suites.
    cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
    echo 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };' \
      >"$root/etc/apt/apt.conf.d/docker-clean"
    echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
    rm -f "$root/etc/apt/sources.list"
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/* \
      "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/groff/* "$root"/usr/share/lintian/* \
      "$root"/var/log/*.log "$root"/var/log/apt/*
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    t=$SECONDS
    tar -C "$root" -c . | podman import --change 'CMD ["bash"]' - "$base" >"$work/import.out" 2>&1 ||
      { cat "$work/import.out"; fail "podman import of the base"; }
    rm -rf "$root"
    echo "timing: base import $((SECONDS - t)) s"
  else
    echo "base: $base from the cache (made $(( ($(date +%s) - created) / 60 )) min ago)"
  fi
fi
size_mb() { echo $(( ($(podman image inspect --format '{{.Size}}' "$1") + 500000) / 1000000 )); }
echo "base: $base, $(size_mb "$base") MB"

# 3. The image.
jobs=$(nproc)
[ "$jobs" -le 2 ] || jobs=2
old=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
t=$SECONDS
pm build --pull=never --layers "${limits[@]}" -f "$src/deploy/Containerfile" \
  --ignorefile "$src/deploy/Containerfile.dockerignore" \
  --build-arg BASE="$base" --build-arg JOBS="$jobs" -t "$tag" "$src" >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; fail "podman build of deploy/Containerfile"; }
echo "timing: image build $((SECONDS - t)) s ($(grep -c -- '--> Using cache' "$work/build.log" || true) steps from the cache)"
new=$(podman image inspect --format '{{.Id}}' "$tag")
# The image of an earlier run is replaced; its layers stay in the cache.
if [ -n "$old" ] && [ "$old" != "$new" ]; then podman rmi --no-prune "$old" >/dev/null 2>&1 || true; fi
size=$(size_mb "$tag") max=${CRADLE_IMAGE_MAX_MB:-120}
echo "image: $tag, $size MB; its layers above the base:"
podman history --format '{{.Size}}	{{.CreatedBy}}' "$tag" | awk -F'\t' '$1 != "0B" && $1 != "0 B"' |
  cut -c1-150 | sed 's/^/  /' | head -8
[ "$size" -le "$max" ] || fail "the image is $size MB, above $max MB"

# 4. The pod's files and containers (image_pod.py, over fleet_pod.py).
mkdir "$work/files"
session_keys "$keys_bin" "$work/files"
echo "$ISSUER_PUB" >"$work/files/trusted-issuers.txt"
"$python" "$here/image_pod.py" "$src/deploy/fleet.yaml" "$src/deploy/Containerfile" \
  "$src/deploy/README.md" "$work/files" "$work/pod" || fail "the manifest (above)"
pod=$work/pod
read -r uid _ <"$pod/user" || true

# run_container NAME PODMAN_OPTIONS... -- EXTRA_ARGS...: podman run of the
# pod's container NAME (its options and args from image_pod.py), labelled.
run_container() {
  local name=$1 more=() options=() args=()
  shift
  while [ "$1" != -- ]; do more+=("$1"); shift; done
  shift
  mapfile -d '' -t options <"$pod/$name.podman"
  mapfile -d '' -t args <"$pod/$name.args"
  pm run --label "$label" --label "cradle.test.pid=$$" --network=host "${limits[@]}" \
    "${more[@]}" "${options[@]}" "$tag" "${args[@]}" "$@"
}

t=$SECONDS
for options in "$pod"/init-*.podman; do
  [ -e "$options" ] || break
  name=$(basename "$options" .podman)
  containers+=("cradle-image-$$-$name")
  run_container "$name" --name "cradle-image-$$-$name" -- >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out"; fail "init container $name failed"; }
done

agones_env=()
if [ "$(cat "$pod/agones")" = 1 ]; then
  python3 "$here/agones_standin.py" "$work/sdk.port" "$work/sdk-calls.txt" & STANDIN_PID=$!
  wait_until 10 "the Agones stand-in" test -s "$work/sdk.port"
  : >>"$work/sdk-calls.txt"
  agones_env=(--env "AGONES_SDK_HTTP_PORT=$(cat "$work/sdk.port")" --env AGONES_SDK_GRPC_PORT=9357)
fi

server=cradle-image-$$-server
containers+=("$server")
running() { [ "$(podman inspect --format '{{.State.Running}}' "$server" 2>/dev/null)" = true ]; }
serving() { podman logs "$server" 2>/dev/null | grep -q '"event":"serving"'; }
serving_or_exited() { serving || ! running; }
for try in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 12000))
  run_container server --name "$server" --detach "${agones_env[@]}" -- --bind 127.0.0.1 --port "$port" \
    >"$work/run.out" 2>&1 || { cat "$work/run.out"; fail "podman run of the server"; }
  wait_until 60 "the container's serving line or its exit" serving_or_exited
  serving && break
  podman wait "$server" >/dev/null 2>&1 || true
  rc=$(podman inspect --format '{{.State.ExitCode}}' "$server")
  [ "$rc" -eq 3 ] || { podman logs "$server"; fail "the server container exited $rc"; }
  podman rm -f "$server" >/dev/null
done
serving || fail "no free port found"
line=$(podman logs "$server" 2>/dev/null | grep '"event":"serving"')
echo "serving: $line"
echo "timing: the pod up $((SECONDS - t)) s"
server_id=$(json_field "$line" server_id)
if [ -s "$pod/server-key" ]; then
  [ "$server_id" = "$SERVER_ID" ] || fail "the server's id $server_id is not the Secret's server.key's ($SERVER_ID)"
fi
host_pid=$(podman inspect --format '{{.State.Pid}}' "$server")
if [ -n "${uid:-}" ]; then
  [ "$(awk '/^Uid:/ { print $2 }' "/proc/$host_pid/status")" = "$uid" ] || fail "the server does not run as uid $uid"
fi
sock=$(podman logs "$server" 2>/dev/null | sed -n 's/.*"event":"listening","path":"\([^"]*\)".*/\1/p')
[ -n "$sock" ] || fail "no dev socket (the entry point passes --dev-socket)"
status=$(podman exec "$server" cradlectl --socket "$sock" status) || fail "cradlectl status in the container"
echo "status: ${status:0:60} ..."
case $status in ok\ *) ;; *) fail "status did not answer ok" ;; esac
if [ -n "$STANDIN_PID" ]; then
  wait_until 10 "Ready reported to the Agones stand-in" grep -q ' /ready ' "$work/sdk-calls.txt"
fi

# 5. A headless client: the server id of the serving line, a token of the trusted issuer.
"$client" --port "$port" --game "$game" --run 300 --timeout-ms 30000 --server-key "$server_id" \
  --issuer-key "$work/files/issuer.key" --output "$work/client.bin" >"$work/client.out" 2>"$work/client.err" ||
  { cat "$work/client.out" "$work/client.err"; podman logs "$server" | tail -20; fail "the client failed (exit 4: a hash mismatch)"; }
done_line=$(grep '"event":"done"' "$work/client.out") || fail "the client did not finish: $(cat "$work/client.out")"
echo "client: $done_line"
[ "$(json_field "$done_line" hashes_checked)" -ge 1 ] || fail "the client checked no state hash"
start=$(json_field "$done_line" start_step) last=$(( $(json_field "$done_line" steps) - 1 ))

# The kubelet stops a pod with SIGTERM: podman stop sends the image's STOPSIGNAL.
pm stop -t 20 "$server" >/dev/null || fail "podman stop"
rc=$(podman inspect --format '{{.State.ExitCode}}' "$server")
[ "$rc" -eq 0 ] || { podman logs "$server" | tail -20; fail "the server container exited $rc after SIGTERM"; }
if [ -n "$STANDIN_PID" ]; then
  grep -q ' /shutdown ' "$work/sdk-calls.txt" || fail "no Shutdown reported to the stand-in"
  [ ! -s "$work/sdk-calls.txt.bad" ] || fail "the stand-in refused calls: $(cat "$work/sdk-calls.txt.bad")"
fi
logs=("$pod"/volumes/*/logs/session-*.log)
[ -f "${logs[0]}" ] || fail "no session log in the pod's volume"
"$replay" --json "${logs[0]}" >"$work/replay.out" 2>"$work/replay.err" ||
  { cat "$work/replay.out" "$work/replay.err"; fail "the session log does not replay"; }
grep -q '"final_hash_equal":true' "$work/replay.out" || fail "the log's trailer: $(cat "$work/replay.out")"
"$replay" --output "$work/replay.bin" --from "$start" --to "$last" "${logs[0]}" >/dev/null 2>"$work/replay.err" ||
  { cat "$work/replay.err"; fail "cradle-replay --output"; }
cmp "$work/replay.bin" "$work/client.bin" || fail "the client's output differs from the server's log"
echo "timing: total $((SECONDS - started)) s"
echo "image ok"
