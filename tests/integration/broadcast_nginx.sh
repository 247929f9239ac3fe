# shellcheck shell=bash disable=SC2034 # it sets variables for the tests
# Helpers for the broadcast tests: an nginx origin and edge cache on loopback,
# from deploy/broadcast/origin.conf and edge.conf (sourced, not run; works
# from any directory). Each nginx runs as the current user with everything
# it writes in its own directory DIR:
#   DIR/nginx.conf   the template with its placeholders replaced
#   DIR/nginx.pid    the master's pid (nginx writes it once it is listening)
#   DIR/access.log   one line a request (the templates give the format)
#   DIR/error.log    and DIR/nginx.err, what nginx printed at start
#   DIR/tmp/         its temporary files; DIR/cache/ an edge's cache
#
# start_origin DIR    writes a random secret to DIR/auth.secret (mode 0600:
#                     64 hex digits, what a writer sends in X-Origin-Auth)
#                     and its map to DIR/auth.map.conf, stores files in
#                     DIR/root, starts nginx on 127.0.0.1 at a random free
#                     high port (another one when the port is taken), waits
#                     until it answers, and sets ORIGIN_DIR, ORIGIN_ROOT,
#                     ORIGIN_PORT, ORIGIN_PID, ORIGIN_URL (http://127.0.0.1:PORT,
#                     no slash) and ORIGIN_SECRET_FILE.
# start_edge DIR URL  an edge cache in front of the origin at URL, serving
#                     the browser's viewer (viewer.html) from deploy/broadcast;
#                     sets EDGE_DIR, EDGE_PORT, EDGE_PID, EDGE_URL.
# stop_nginx DIR      graceful stop (SIGQUIT: requests in flight finish);
#                     after 10 s, SIGKILL and a failure. Nothing to do (and
#                     success) when none runs there.
# kill_origin         the origin dies at once (SIGKILL, its workers too), as
#                     in a crash; returns when none of its processes is left.
# restart_origin      kills the origin if it runs, then starts it again on
#                     the same port, root and secret (retrying for 10 s while
#                     the port is taken); sets ORIGIN_PID.
# pause_origin        SIGSTOP to the origin's workers: connections are still
#                     accepted by the kernel, never answered, as from an
#                     origin that stalls; resume_origin sends SIGCONT.
# origin_requests RE [METHOD_RE]  prints how many requests reached the
#                     origin whose URI matches the extended regex RE (and
#                     whose method matches METHOD_RE), anchored at both ends
#                     (awk: write a backslash as \\). Requests finished
#                     before the call are all counted: the origin logs a
#                     marker request first, when it runs.
# edge_requests RE [STATUS_RE]  the same at the edge, optionally only those
#                     whose cache status matches STATUS_RE (HIT, MISS, ...).
# broadcast_need_nginx  fails, saying to run tools/setup.sh, without nginx.
# start_varnish DIR URL  Debian's Varnish as the edge instead, with its
#                     built-in configuration (nothing set but the origin at
#                     URL as its backend): its working files in DIR, on
#                     127.0.0.1 at a random free high port; waits until it
#                     answers; sets VARNISH_PID (the manager; its child, the
#                     cache, is pgrep -P VARNISH_PID) and VARNISH_URL.
# stop_varnish        stops it (nothing to do when none runs).
#
# Failures print what nginx (or Varnish) said and return non-zero. Needs
# bash and nginx (nginx-light is enough: WebDAV PUT), and varnishd for
# start_varnish; none of this needs curl or root.

source "$(dirname "${BASH_SOURCE[0]}")/server_common.sh" # wait_until

BROADCAST_TEMPLATES=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../deploy/broadcast" && pwd)

broadcast_need_nginx() {
  # /usr/sbin is not on a plain user's PATH on Debian.
  NGINX_BIN=${NGINX_BIN:-$(PATH=$PATH:/usr/sbin:/usr/local/sbin command -v nginx || true)}
  if [ -z "$NGINX_BIN" ] || [ ! -x "$NGINX_BIN" ]; then
    echo "nginx not found${NGINX_BIN:+ at $NGINX_BIN}: run tools/setup.sh (it installs nginx-light)" >&2
    return 1
  fi
  if ! "$NGINX_BIN" -V 2>&1 | grep -q -- --with-http_dav_module; then
    echo "$NGINX_BIN has no http_dav_module (WebDAV PUT): run tools/setup.sh (nginx-light)" >&2
    return 1
  fi
}

# A path or URL put in a config by sed: no quote, no sed metacharacter, no
# space, nothing nginx would read as the end of a value.
broadcast__check_value() {
  case $1 in
    *[!A-Za-z0-9/._:+@=,-]* | "")
      echo "broadcast_nginx: cannot use \"$1\" in an nginx config (plain path characters only)" >&2
      return 1 ;;
  esac
}

# broadcast__render TEMPLATE OUT NAME=VALUE...: OUT is TEMPLATE with each
# @NAME@ replaced; fails when a placeholder is left.
broadcast__render() {
  local template=$1 out=$2 pair
  shift 2
  local script=()
  for pair in "$@"; do
    script+=(-e "s|@${pair%%=*}@|${pair#*=}|g")
  done
  sed "${script[@]}" "$template" >"$out.new" || return 1
  if grep -n '@[A-Z_]*@' "$out.new" | grep -v '^[0-9]*:[[:space:]]*#' >&2; then
    echo "broadcast_nginx: placeholders left in $out" >&2
    return 1
  fi
  mv "$out.new" "$out"
}

# Workers read and write DIR as the user that started nginx: as root that
# takes a user directive (nginx's own default would be nobody).
broadcast__user_line() {
  if [ "$(id -u)" -eq 0 ]; then
    echo "user $(id -un) $(id -gn);"
  fi
}

# broadcast__alive PID: a process that is not a zombie (a killed worker whose
# new parent never reaps it stays one).
broadcast__alive() {
  local state=
  [ -r "/proc/$1/stat" ] || return 1
  read -r _ _ state _ 2>/dev/null <"/proc/$1/stat" || return 1
  [ "$state" != Z ]
}

# broadcast__children PID: the pids of PID's children (nginx's workers,
# cache manager and loader).
broadcast__children() {
  local stat pid ppid rest
  for stat in /proc/[0-9]*/stat; do
    read -r pid _ _ ppid rest 2>/dev/null <"$stat" || continue
    [ "$ppid" = "$1" ] && echo "$pid"
  done
  return 0
}

# broadcast__status PORT METHOD PATH: prints the status code nginx answers,
# with bash's /dev/tcp (no curl); fails when nothing answers in 2 s.
broadcast__status() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf '%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" "$3" >&3
    IFS= read -r -t 2 line <&3 || exit 1
    case $line in
      "HTTP/1."[01]" "[0-9][0-9][0-9]*) echo "${line:9:3}" ;;
      *) exit 1 ;;
    esac
  ) 2>/dev/null
}

# broadcast__pid_written DIR PID: nginx wrote DIR/nginx.pid, which it does
# once it has read its config and bound its port.
broadcast__pid_written() {
  [ "$(cat "$1/nginx.pid" 2>/dev/null)" = "$2" ]
}

# broadcast__launch DIR PORT: starts nginx with DIR/nginx.conf (daemon off,
# a child of this shell) and waits until it answers on PORT. Sets
# BROADCAST_PID. Returns 0, 3 when the port was taken, 1 on another failure.
broadcast__launch() {
  local dir=$1 port=$2 deadline=$((SECONDS + 15))
  : >"$dir/nginx.err"
  "$NGINX_BIN" -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' 2>"$dir/nginx.err" &
  BROADCAST_PID=$!
  # Still this shell's child (reaped when it ends), but out of its job table:
  # no "Killed" line when kill_origin ends it.
  disown "$BROADCAST_PID"
  # Listening once the pid file is ours (a stale one holds an older pid);
  # then an answer, which also proves a worker is up.
  until broadcast__pid_written "$dir" "$BROADCAST_PID" &&
        [ -n "$(broadcast__status "$port" OPTIONS /)" ]; do
    if ! broadcast__alive "$BROADCAST_PID"; then
      if grep -q 'Address already in use' "$dir/nginx.err" "$dir/error.log" 2>/dev/null; then
        return 3
      fi
      echo "nginx failed to start in $dir:" >&2
      cat "$dir/nginx.err" >&2
      tail -n 5 "$dir/error.log" >&2 2>/dev/null
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "nginx in $dir did not answer on port $port within 15 s" >&2
      kill -KILL "$BROADCAST_PID" 2>/dev/null || true
      return 1
    fi
    sleep 0.05
  done
}

# broadcast__start DIR TEMPLATE NAME=VALUE...: renders the template with a
# random high port (@PORT@) and starts it, another port when one is taken.
# Sets BROADCAST_PORT and BROADCAST_PID.
broadcast__start() {
  local dir=$1 template=$2 rc
  shift 2
  for _ in 1 2 3 4 5 6 7 8; do
    BROADCAST_PORT=$((20000 + RANDOM % 12000))
    broadcast__render "$template" "$dir/nginx.conf" PORT="$BROADCAST_PORT" "$@" || return 1
    rc=0
    broadcast__launch "$dir" "$BROADCAST_PORT" || rc=$?
    [ "$rc" -eq 3 ] || return "$rc"
  done
  echo "no free port found for nginx in $dir" >&2
  return 1
}

# broadcast__dir DIR: creates DIR and its tmp/, prints its absolute path.
broadcast__dir() {
  mkdir -p "$1/tmp" && (cd "$1" && pwd)
}

start_origin() {
  broadcast_need_nginx || return 1
  local dir secret
  dir=$(broadcast__dir "$1") || return 1
  broadcast__check_value "$dir" || return 1
  mkdir -p "$dir/root"
  secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  [ ${#secret} -eq 64 ] || { echo "broadcast_nginx: no secret from /dev/urandom" >&2; return 1; }
  (
    umask 077
    printf '%s\n' "$secret" >"$dir/auth.secret"
    # shellcheck disable=SC2016 # nginx variables, not the shell's
    printf 'map $http_x_origin_auth $origin_writer { default 0; "~^%s$" 1; }\n' "$secret" \
      >"$dir/auth.map.conf"
  ) || return 1
  broadcast__start "$dir" "$BROADCAST_TEMPLATES/origin.conf" PREFIX="$dir" ROOT="$dir/root" \
    ADDR=127.0.0.1 AUTH_MAP="$dir/auth.map.conf" USER="$(broadcast__user_line)" || return 1
  ORIGIN_DIR=$dir
  ORIGIN_ROOT=$dir/root
  ORIGIN_PORT=$BROADCAST_PORT
  ORIGIN_PID=$BROADCAST_PID
  ORIGIN_URL=http://127.0.0.1:$ORIGIN_PORT
  ORIGIN_SECRET_FILE=$dir/auth.secret
}

start_edge() {
  broadcast_need_nginx || return 1
  local dir origin=$2
  dir=$(broadcast__dir "$1") || return 1
  broadcast__check_value "$dir" || return 1
  case $origin in
    http://* | https://*) ;;
    *) echo "start_edge: origin URL \"$origin\" is not http(s)://HOST:PORT" >&2; return 1 ;;
  esac
  broadcast__check_value "$origin" || return 1
  mkdir -p "$dir/cache"
  broadcast__start "$dir" "$BROADCAST_TEMPLATES/edge.conf" PREFIX="$dir" ADDR=127.0.0.1 \
    ORIGIN="${origin%/}" VIEWER="$BROADCAST_TEMPLATES" USER="$(broadcast__user_line)" || return 1
  EDGE_DIR=$dir
  EDGE_PORT=$BROADCAST_PORT
  EDGE_PID=$BROADCAST_PID
  EDGE_URL=http://127.0.0.1:$EDGE_PORT
}

# broadcast__master DIR: prints the pid in DIR/nginx.pid when that process is
# still an nginx (a stale file, or a pid since reused, gives nothing).
broadcast__master() {
  local pid
  pid=$(cat "$1/nginx.pid" 2>/dev/null) || return 0
  case $pid in '' | *[!0-9]*) return 0 ;; esac
  broadcast__alive "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = nginx ] && echo "$pid"
  return 0
}

# broadcast__gone PID...: none of them is alive.
broadcast__gone() {
  local pid
  for pid in "$@"; do
    broadcast__alive "$pid" && return 1
  done
  return 0
}

# broadcast__kill DIR: SIGKILL to the master and its children, then waits.
# The master first: it would start new workers for killed ones.
broadcast__kill() {
  local master children
  master=$(broadcast__master "$1")
  [ -n "$master" ] || return 0
  children=$(broadcast__children "$master")
  kill -KILL "$master" 2>/dev/null || true
  # shellcheck disable=SC2086 # one pid a word
  [ -z "$children" ] || kill -KILL $children 2>/dev/null || true
  # shellcheck disable=SC2086
  wait_until 10 "nginx in $1 to die" broadcast__gone "$master" $children || return 1
  rm -f "$1/nginx.pid"
}

stop_nginx() {
  local dir=$1 master deadline
  master=$(broadcast__master "$dir")
  [ -n "$master" ] || return 0
  kill -QUIT "$master" 2>/dev/null || true
  deadline=$((SECONDS + 10))
  while broadcast__alive "$master"; do
    if [ $SECONDS -ge $deadline ]; then
      echo "nginx in $dir did not quit within 10 s: killing it" >&2
      broadcast__kill "$dir"
      return 1
    fi
    sleep 0.05
  done
}

kill_origin() {
  broadcast__kill "$ORIGIN_DIR"
}

# Varnish in the foreground (-F: the manager is this shell's child), its
# working files in DIR (-n), no privilege separation (-j none: it may run as
# root), the origin as its one backend (-b HOST:PORT).
start_varnish() {
  local dir origin=${2%/} bin try port
  bin=$(PATH=$PATH:/usr/sbin command -v varnishd || true)
  [ -n "$bin" ] || { echo "varnishd not found: run tools/setup.sh (it installs varnish)" >&2; return 1; }
  case $origin in
    http://*) ;;
    *) echo "start_varnish: origin URL \"$origin\" is not http://HOST:PORT" >&2; return 1 ;;
  esac
  dir=$(broadcast__dir "$1") || return 1
  for try in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 12000))
    "$bin" -F -j none -n "$dir/work" -a "127.0.0.1:$port" -b "${origin#http://}" -s malloc,64m \
      >"$dir/varnish.out" 2>&1 &
    VARNISH_PID=$!
    # answering (the built-in configuration passes / to the origin: 404), or
    # gone (its port was taken)
    broadcast__varnish_settled() {
      ! kill -0 "$VARNISH_PID" 2>/dev/null || [ "$(broadcast__status "$port" GET /)" = 404 ]
    }
    wait_until 30 "Varnish to answer" broadcast__varnish_settled || return 1
    if kill -0 "$VARNISH_PID" 2>/dev/null; then
      VARNISH_URL=http://127.0.0.1:$port
      return 0
    fi
    wait "$VARNISH_PID" 2>/dev/null || true
  done
  VARNISH_PID=
  cat "$dir/varnish.out" >&2
  echo "Varnish did not start" >&2
  return 1
}

stop_varnish() {
  [ -n "${VARNISH_PID:-}" ] || return 0
  kill "$VARNISH_PID" 2>/dev/null || true
  wait "$VARNISH_PID" 2>/dev/null || true
  VARNISH_PID=
}

restart_origin() {
  local rc deadline=$((SECONDS + 10))
  kill_origin || return 1
  while :; do
    rc=0
    broadcast__launch "$ORIGIN_DIR" "$ORIGIN_PORT" || rc=$?
    [ "$rc" -eq 0 ] && break
    [ "$rc" -eq 3 ] && [ $SECONDS -lt $deadline ] || {
      echo "restart_origin: could not listen on port $ORIGIN_PORT again" >&2
      return 1
    }
  done
  ORIGIN_PID=$BROADCAST_PID
}

# broadcast__signal_workers SIGNAL: to each child of the origin's master.
broadcast__signal_workers() {
  local master workers
  master=$(broadcast__master "$ORIGIN_DIR")
  [ -n "$master" ] || { echo "no origin runs in $ORIGIN_DIR" >&2; return 1; }
  workers=$(broadcast__children "$master")
  # shellcheck disable=SC2086 # one pid a word
  [ -n "$workers" ] && kill "-$1" $workers
}

pause_origin() {
  broadcast__signal_workers STOP
}

resume_origin() {
  broadcast__signal_workers CONT
}

# broadcast__mark DIR PORT: when nginx runs there, sends it a marker request
# (OPTIONS, refused without touching files or the origin) and waits until it
# is logged. One worker logs requests in the order they end, so every request
# that ended before is logged too; with several workers (an edge), a request
# that ended just before may still be logging on another.
broadcast__mark() {
  local dir=$1 port=$2 uri
  [ -n "$(broadcast__master "$dir")" ] || return 0
  uri=/.broadcast-log-mark/$RANDOM$RANDOM
  broadcast__status "$port" OPTIONS "$uri" >/dev/null || return 0
  wait_until 5 "the marker in $dir/access.log" grep -q " $uri " "$dir/access.log"
}

# broadcast__count LOG URI_RE FIELD RE: lines whose URI (field 3) matches
# URI_RE and whose field FIELD matches RE (both anchored).
broadcast__count() {
  awk -v re="^($2)\$" -v f="$3" -v fre="^($4)\$" '$3 ~ re && $f ~ fre { n++ } END { print n + 0 }' "$1" 2>/dev/null ||
    echo 0
}

origin_requests() {
  broadcast__mark "$ORIGIN_DIR" "$ORIGIN_PORT" || return 1
  broadcast__count "$ORIGIN_DIR/access.log" "$1" 2 "${2:-.*}"
}

edge_requests() {
  broadcast__mark "$EDGE_DIR" "$EDGE_PORT" || return 1
  broadcast__count "$EDGE_DIR/access.log" "$1" 5 "${2:-.*}"
}
