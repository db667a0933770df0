#!/bin/sh
# Runs a 3- or 5-node Hourglass cluster on this machine, each node its own process on loopback
# with its own data and log directory under one run directory.
#
#   deploy/local-cluster.sh up 3|5        start the nodes, wait for a leader, print --servers
#   deploy/local-cluster.sh up 3|5 --secure  the same with TLS and tokens: certificates and an admin
#                                        token made by deploy/certs.sh in RUN/certs, HTTPS
#   deploy/local-cluster.sh status        one line per node: pid, ports, role, ready
#   deploy/local-cluster.sh kill NODE     kill -9 one node (n1, n2, ...)
#   deploy/local-cluster.sh restart NODE  stop (SIGTERM) and start one node on its data
#   deploy/local-cluster.sh rolling-restart  restart every node in turn, waiting for readiness;
#                                           the leader hands its leadership to the next node first
#   deploy/local-cluster.sh down          stop every node (SIGTERM, then SIGKILL after 20 s)
#
# Environment: HOURGLASS_HOME (default: deploy/target/hourglass next to this script),
# HOURGLASS_RUN_DIR (default: ./run/local-cluster), HOURGLASS_BASE_PORT (default 7070: node i
# gets gRPC BASE+10*(i-1), Raft +1, HTTP +2). Paths must not contain spaces. Once up with --secure,
# the other commands act on the cluster as secure until the next up.
set -eu

here=$(cd "$(dirname "$0")" && pwd -P)
home=${HOURGLASS_HOME:-$here/target/hourglass}
run=${HOURGLASS_RUN_DIR:-$PWD/run/local-cluster}
base=${HOURGLASS_BASE_PORT:-7070}

die() { echo "local-cluster: $*" >&2; exit 1; }

[ -x "$home/bin/hourglass-server" ] || die "no distribution at $home (build it: mvn -DskipTests package)"

grpc_port() { echo $((base + 10 * ($1 - 1))); }
raft_port() { echo $((base + 10 * ($1 - 1) + 1)); }
http_port() { echo $((base + 10 * ($1 - 1) + 2)); }
index_of() { # n3 -> 3
  case $1 in n[1-9]) echo "${1#n}" ;; *) die "unknown node '$1' (n1..n5)" ;; esac
}
size() { [ -f "$run/size" ] || die "no cluster in $run (run: $0 up 3)"; cat "$run/size"; }
pid_of() { [ -f "$run/n$1/pid" ] && cat "$run/n$1/pid" || true; }
alive() { al_p=$(pid_of "$1"); [ -n "$al_p" ] && kill -0 "$al_p" 2>/dev/null; }
is_secure() { [ -f "$run/secure" ]; }
http_get() { # node path
  if ! is_secure; then curl -sf "http://127.0.0.1:$(http_port "$1")$2"; return; fi
  # HTTPS trusting the cluster's CA; /metrics needs the admin token, handed to curl on stdin
  # (-H @-) rather than on its command line, where ps would show it
  hg_auth=; [ "$2" != /metrics ] || hg_auth="Authorization: Bearer $(cat "$run/certs/admin.token")"
  printf '%s\n' "$hg_auth" | curl -sf --cacert "$run/certs/ca.pem" -H @- "https://127.0.0.1:$(http_port "$1")$2"
}
ready() { http_get "$1" /readyz >/dev/null 2>&1; }
is_leader() { http_get "$1" /metrics 2>/dev/null | grep -Eq '^hourglass_is_leader(\{shard="0"\})? 1'; }  # shard 0's leader when there are shards

# POSIX sh has no local variables: each function uses its own prefixed names, so that a
# function never clobbers its caller's loop counter.
peers() {
  pe_n=$1; pe_list=; pe_i=1
  while [ "$pe_i" -le "$pe_n" ]; do
    pe_list="$pe_list${pe_list:+,}n$pe_i=127.0.0.1:$(raft_port "$pe_i"):$(grpc_port "$pe_i")"
    pe_i=$((pe_i + 1))
  done
  echo "$pe_list"
}

servers() {
  sv_n=$(size); sv_list=; sv_i=1
  while [ "$sv_i" -le "$sv_n" ]; do
    sv_list="$sv_list${sv_list:+,}127.0.0.1:$(grpc_port "$sv_i")"
    sv_i=$((sv_i + 1))
  done
  echo "$sv_list"
}

hg_cli() { # args...: the CLI against this cluster, with its certificates and admin token when secure
  if is_secure; then
    "$home/bin/hourglass" --servers "$(servers)" --tls-ca "$run/certs/ca.pem" --token-file "$run/certs/admin.token" "$@"
  else
    "$home/bin/hourglass" --servers "$(servers)" "$@"
  fi
}

print_servers() {
  echo "--servers $(servers)"
  if is_secure; then
    echo "--tls-ca $run/certs/ca.pem --token-file $run/certs/admin.token"
    echo "export HOURGLASS_TOKEN=\$(cat $run/certs/admin.token)"
  fi
}

write_config() { # node: the properties file that turns on TLS and tokens (--secure)
  mkdir -p "$run/n$1"
  cat > "$run/n$1/hourglass.properties" <<EOF
security.enabled=true
security.bootstrapTokenFile=$run/certs/admin.token
tls.certFile=$run/certs/n$1/node.pem
tls.keyFile=$run/certs/n$1/node.key
tls.caFile=$run/certs/ca.pem
tls.clientAuth=optional
tls.peerCertFile=$run/certs/n$1/peer.pem
tls.peerKeyFile=$run/certs/n$1/peer.key
tls.peerCaFile=$run/certs/peer-ca.pem
EOF
}

start_node() {
  sn_i=$1; sn_n=$(size)
  alive "$sn_i" && die "n$sn_i is already running (pid $(pid_of "$sn_i"))"
  mkdir -p "$run/n$sn_i/data" "$run/n$sn_i/logs"
  set --; if is_secure; then set -- --config "$run/n$sn_i/hourglass.properties"; fi
  HOURGLASS_JAVA_OPTS="${HOURGLASS_JAVA_OPTS:-} -Dhourglass.log.dir=$run/n$sn_i/logs" \
    nohup "$home/bin/hourglass-server" --node-id "n$sn_i" --data-dir "$run/n$sn_i/data" \
      --grpc-port "$(grpc_port "$sn_i")" --raft-port "$(raft_port "$sn_i")" --http-port "$(http_port "$sn_i")" \
      --peers "$(peers "$sn_n")" "$@" > "$run/n$sn_i/server.out" 2>&1 &
  echo $! > "$run/n$sn_i/pid"
}

wait_until() { # seconds, description, command...
  wu_limit=$1; wu_what=$2; shift 2; wu_t=0
  while ! "$@"; do
    wu_t=$((wu_t + 1))
    [ "$wu_t" -le $((wu_limit * 5)) ] || die "timed out after ${wu_limit}s waiting for $wu_what"
    sleep 0.2
  done
}

leader_known() {
  lk_n=$(size); lk_i=1
  while [ "$lk_i" -le "$lk_n" ]; do
    if alive "$lk_i" && is_leader "$lk_i"; then echo "n$lk_i" > "$run/leader"; return 0; fi
    lk_i=$((lk_i + 1))
  done
  return 1
}

stop_node() {
  st_i=$1; st_p=$(pid_of "$st_i")
  [ -n "$st_p" ] || return 0
  if kill -0 "$st_p" 2>/dev/null; then
    kill -TERM "$st_p" 2>/dev/null || true
    st_t=0
    while kill -0 "$st_p" 2>/dev/null; do
      st_t=$((st_t + 1))
      if [ "$st_t" -gt 100 ]; then kill -KILL "$st_p" 2>/dev/null || true; break; fi
      sleep 0.2
    done
  fi
  rm -f "$run/n$st_i/pid"
}

cmd=${1:-}
case $cmd in
  up)
    n=3; secure=
    shift; for a in "$@"; do case $a in --secure) secure=1 ;; *) n=$a ;; esac; done
    case $n in 3|5) ;; *) die "up takes 3 or 5 nodes, got '$n'" ;; esac
    if [ -f "$run/size" ]; then
      i=1; while [ "$i" -le "$(size)" ]; do alive "$i" && die "a cluster is running in $run (run: $0 down)"; i=$((i + 1)); done
    fi
    mkdir -p "$run"
    echo "$n" > "$run/size"
    rm -f "$run/secure"
    if [ -n "$secure" ]; then
      set --; i=1; while [ "$i" -le "$n" ]; do set -- "$@" "n$i"; write_config "$i"; i=$((i + 1)); done
      "$here/certs.sh" "$run/certs" "$@" >/dev/null
      touch "$run/secure"
    fi
    i=1; while [ "$i" -le "$n" ]; do start_node "$i"; i=$((i + 1)); done
    wait_until 90 "a leader" leader_known
    i=1; while [ "$i" -le "$n" ]; do wait_until 90 "n$i to be ready" ready "$i"; i=$((i + 1)); done
    echo "cluster of $n up in $run, leader $(cat "$run/leader")${secure:+ (secure)}"
    print_servers
    ;;
  status)
    n=$(size); i=1
    while [ "$i" -le "$n" ]; do
      if alive "$i"; then
        role=follower; is_leader "$i" && role=leader
        r=not-ready; ready "$i" && r=ready
        echo "n$i pid=$(pid_of "$i") grpc=$(grpc_port "$i") raft=$(raft_port "$i") http=$(http_port "$i") $role $r"
      else
        echo "n$i down grpc=$(grpc_port "$i") raft=$(raft_port "$i") http=$(http_port "$i")"
      fi
      i=$((i + 1))
    done
    print_servers
    ;;
  kill)
    i=$(index_of "${2:-}"); p=$(pid_of "$i")
    [ -n "$p" ] && kill -KILL "$p" 2>/dev/null || die "n$i is not running"
    rm -f "$run/n$i/pid"
    echo "killed n$i (pid $p)"
    ;;
  restart)
    i=$(index_of "${2:-}")
    stop_node "$i"
    start_node "$i"
    wait_until 90 "n$i to be ready" ready "$i"
    echo "restarted n$i"
    ;;
  rolling-restart)
    n=$(size); i=1
    while [ "$i" -le "$n" ]; do
      # A planned stop moves the leadership first (about 50 ms without a failed publish) rather
      # than leave the followers to notice the leader gone (a few hundred ms). A transfer can lose
      # to an election that a restart just set off: ask again while n$i still leads, 3 times at most.
      attempt=1
      while is_leader "$i"; do
        j=$((i % n + 1))
        if hg_cli cluster transfer-leader "n$j" >/dev/null 2>&1; then
          echo "moved the leadership from n$i to n$j"
          break
        fi
        if [ "$attempt" -ge 3 ]; then
          echo "local-cluster: could not move the leadership off n$i; stopping it anyway" >&2
          break
        fi
        attempt=$((attempt + 1))
        wait_until 30 "a leader" leader_known
      done
      stop_node "$i"
      start_node "$i"
      wait_until 90 "n$i to be ready" ready "$i"
      wait_until 90 "a leader" leader_known
      echo "restarted n$i"
      i=$((i + 1))
    done
    ;;
  down)
    n=$(size); i=1
    while [ "$i" -le "$n" ]; do stop_node "$i"; i=$((i + 1)); done
    echo "cluster in $run stopped (data kept; delete $run to start fresh)"
    ;;
  *)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "$cmd" ] || exit 2
    ;;
esac
