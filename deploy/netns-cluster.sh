#!/bin/sh
# Runs each node of a 3- or 5-node Hourglass cluster in its own network namespace, with its own
# address on a shared bridge, so that one node can be cut off the network (chaos tests, trying
# out partitions). Needs root and iproute2 (ip netns, veth, bridge).
#
#   deploy/netns-cluster.sh up 3|5       create namespaces hg-n1.., start nodes, wait for a leader
#   deploy/netns-cluster.sh status       one line per node: address, pid, ready, leader
#   deploy/netns-cluster.sh isolate NODE cut NODE off the bridge (its link goes down)
#   deploy/netns-cluster.sh heal NODE    put NODE back on the bridge
#   deploy/netns-cluster.sh kill NODE    kill -9 the node's process
#   deploy/netns-cluster.sh down         stop every node, delete namespaces, veths and the bridge
#
# Network only, for harnesses that run the nodes themselves (the chaos tests):
#   deploy/netns-cluster.sh net-up N     bridge and namespaces for N nodes (1-9), no processes;
#                                        run a node with: ip netns exec PREFIX-nI hourglass-server ...
#   deploy/netns-cluster.sh partition A B  cut every node of list A off every node of list B (lists
#                                        like n1,n2; blackhole routes both ways; the host still
#                                        reaches every node, as clients outside the split would)
#   deploy/netns-cluster.sh slow NODES DELAY JITTER LOSS  make the links of NODES (a list like
#                                        n1,n2,n3) slow and lossy both ways: tc netem on each one's
#                                        eth0, e.g. 'slow n1,n2,n3 100ms 25ms 5%'; on a kernel
#                                        without netem: tbf 1 Mbit/s with up to DELAY of queue, and
#                                        nftables random drops for the loss
#   deploy/netns-cluster.sh heal-all     remove every cut made by partition, and every slow link
#   deploy/netns-cluster.sh net-down     delete namespaces, veths and the bridge (no processes)
#
# Environment: HOURGLASS_HOME (default deploy/target/hourglass), HOURGLASS_RUN_DIR (default
# ./run/netns-cluster), HOURGLASS_NET (default 10.77.0: node i is 10.77.0.(10+i), the host
# 10.77.0.1 on the bridge), HOURGLASS_NETNS_PREFIX (default hg: namespaces hg-n1.., veths hgv1..,
# bridge hgbr0; at most 8 characters). Every node uses the default ports 7070 (gRPC), 7071
# (Raft), 7072 (HTTP).
set -eu

here=$(cd "$(dirname "$0")" && pwd -P)
home=${HOURGLASS_HOME:-$here/target/hourglass}
run=${HOURGLASS_RUN_DIR:-$PWD/run/netns-cluster}
net=${HOURGLASS_NET:-10.77.0}
prefix=${HOURGLASS_NETNS_PREFIX:-hg}
bridge=${prefix}br0

die() { echo "netns-cluster: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (ip netns)"
command -v ip >/dev/null || die "needs iproute2"

addr() { echo "$net.$((10 + $1))"; }
ns() { echo "$prefix-n$1"; }
veth() { echo "${prefix}v$1"; }
index_of() { case $1 in n[1-9]) echo "${1#n}" ;; *) die "unknown node '$1'" ;; esac; }
size() { [ -f "$run/size" ] || die "no cluster in $run"; cat "$run/size"; }

peers() {
  pe_list=; pe_i=1
  while [ "$pe_i" -le "$1" ]; do
    pe_list="$pe_list${pe_list:+,}n$pe_i=$(addr "$pe_i"):7071:7070"; pe_i=$((pe_i + 1))
  done
  echo "$pe_list"
}

ready() { curl -sf --max-time 2 "http://$(addr "$1"):7072/readyz" >/dev/null 2>&1; }
is_leader() { curl -sf --max-time 2 "http://$(addr "$1"):7072/metrics" 2>/dev/null | grep -Eq '^hourglass_is_leader(\{shard="0"\})? 1'; }  # shard 0's leader when there are shards

wait_until() { # seconds, what, command...
  wu_limit=$1; wu_what=$2; shift 2; wu_t=0
  while ! "$@"; do
    wu_t=$((wu_t + 1)); [ "$wu_t" -le $((wu_limit * 5)) ] || die "timed out waiting for $wu_what"; sleep 0.2
  done
}

any_leader() {
  al_i=1
  while [ "$al_i" -le "$(size)" ]; do is_leader "$al_i" && return 0; al_i=$((al_i + 1)); done
  return 1
}

net_up() { # i
  nu_ns=$(ns "$1")
  ip netns add "$nu_ns"
  ip link add "$(veth "$1")" type veth peer name eth0 netns "$nu_ns"
  ip link set "$(veth "$1")" master "$bridge" up
  ip netns exec "$nu_ns" ip addr add "$(addr "$1")/24" dev eth0
  ip netns exec "$nu_ns" ip link set eth0 up
  ip netns exec "$nu_ns" ip link set lo up
  ip netns exec "$nu_ns" ip route add default via "$net.1"
}

net_create() { # n: the bridge and n namespaces
  ip link show "$bridge" >/dev/null 2>&1 && die "bridge $bridge exists: run '$0 down' first"
  mkdir -p "$run"; echo "$1" > "$run/size"
  ip link add "$bridge" type bridge
  ip addr add "$net.1/24" dev "$bridge"
  ip link set "$bridge" up
  nc_i=1; while [ "$nc_i" -le "$1" ]; do net_up "$nc_i"; nc_i=$((nc_i + 1)); done
}

net_delete() { # n
  nd_i=1
  while [ "$nd_i" -le "$1" ]; do
    ip link del "$(veth "$nd_i")" 2>/dev/null || true
    ip netns del "$(ns "$nd_i")" 2>/dev/null || true
    nd_i=$((nd_i + 1))
  done
  ip link del "$bridge" 2>/dev/null || true
}

cut() { # i j: blackhole routes both ways
  ip netns exec "$(ns "$1")" ip route replace blackhole "$(addr "$2")/32"
  ip netns exec "$(ns "$2")" ip route replace blackhole "$(addr "$1")/32"
}

start_node() { # i n
  mkdir -p "$run/n$1/data" "$run/n$1/logs"
  HOURGLASS_JAVA_OPTS="${HOURGLASS_JAVA_OPTS:-} -Dhourglass.log.dir=$run/n$1/logs" \
    nohup ip netns exec "$(ns "$1")" "$home/bin/hourglass-server" --node-id "n$1" --host "$(addr "$1")" \
      --data-dir "$run/n$1/data" --peers "$(peers "$2")" > "$run/n$1/server.out" 2>&1 &
  echo $! > "$run/n$1/pid"
}

cmd=${1:-}
case $cmd in
  up)
    n=${2:-3}
    case $n in 3|5) ;; *) die "up takes 3 or 5, got '$n'" ;; esac
    net_create "$n"
    i=1; while [ "$i" -le "$n" ]; do start_node "$i" "$n"; i=$((i + 1)); done
    wait_until 120 "a leader" any_leader
    i=1; while [ "$i" -le "$n" ]; do wait_until 120 "n$i ready" ready "$i"; i=$((i + 1)); done
    s=; i=1; while [ "$i" -le "$n" ]; do s="$s${s:+,}$(addr "$i"):7070"; i=$((i + 1)); done
    echo "cluster of $n up in namespaces $(ns 1)..$(ns "$n")"
    echo "--servers $s"
    ;;
  status)
    i=1
    while [ "$i" -le "$(size)" ]; do
      st=not-ready; ready "$i" && st=ready
      role=; is_leader "$i" && role=leader
      echo "n$i $(addr "$i") pid=$(cat "$run/n$i/pid" 2>/dev/null || echo -) $st $role"
      i=$((i + 1))
    done
    ;;
  isolate) i=$(index_of "${2:-}"); ip link set "$(veth "$i")" down; echo "n$i isolated" ;;
  heal) i=$(index_of "${2:-}"); ip link set "$(veth "$i")" up; echo "n$i back on the bridge" ;;
  net-up)
    n=${2:-}
    case $n in [1-9]) ;; *) die "net-up takes a node count 1-9, got '$n'" ;; esac
    net_create "$n"
    echo "namespaces $(ns 1)..$(ns "$n") on bridge $bridge ($net.0/24)"
    ;;
  net-down) net_delete "$(size)"; rm -f "$run/size"; echo "namespaces, veths and bridge $bridge removed" ;;
  partition)
    [ -n "${2:-}" ] && [ -n "${3:-}" ] || die "partition takes two node lists, e.g. 'partition n1 n2,n3'"
    for a in $(echo "$2" | tr ',' ' '); do
      for b in $(echo "$3" | tr ',' ' '); do cut "$(index_of "$a")" "$(index_of "$b")"; done
    done
    echo "cut $2 off $3"
    ;;
  slow)
    [ $# -eq 5 ] || die "slow takes nodes, delay, jitter and loss, e.g. 'slow n1,n2 100ms 25ms 5%'"
    command -v tc >/dev/null || die "needs tc (iproute2)"
    for a in $(echo "$2" | tr ',' ' '); do
      s_ns=$(ns "$(index_of "$a")")
      if ip netns exec "$s_ns" tc qdisc replace dev eth0 root netem delay "$3" "$4" loss "$5" 2>/dev/null; then
        how="netem delay $3 jitter $4 loss $5"
      else
        # A kernel without sch_netem (some VM kernels): a slow link instead of a long one, 1 Mbit/s
        # with up to DELAY of queue (tbf), and the loss by random drops (nftables).
        command -v nft >/dev/null || die "no netem in this kernel, and no nft for the loss"
        ip netns exec "$s_ns" tc qdisc replace dev eth0 root tbf rate 1mbit burst 16kb latency "$3"
        ip netns exec "$s_ns" nft -f - <<EOF_NFT
table inet hgslow {
  chain out { type filter hook output priority 0; numgen random mod 100 < ${5%%%} drop; }
  chain in { type filter hook input priority 0; numgen random mod 100 < ${5%%%} drop; }
}
EOF_NFT
        how="no netem here: tbf 1mbit with up to $3 of queue, nft random loss $5"
      fi
    done
    echo "$2 slowed: $how"
    ;;
  heal-all)
    i=1
    while [ "$i" -le "$(size)" ]; do
      ip netns exec "$(ns "$i")" ip route flush type blackhole
      ip netns exec "$(ns "$i")" tc qdisc del dev eth0 root 2>/dev/null || true
      ip netns exec "$(ns "$i")" nft delete table inet hgslow 2>/dev/null || true
      i=$((i + 1))
    done
    echo "every cut and slow link healed"
    ;;
  kill)
    i=$(index_of "${2:-}"); p=$(cat "$run/n$i/pid" 2>/dev/null || true)
    [ -n "$p" ] || die "n$i is not running"
    # the pid is ip-netns-exec's, which exec'd the server: the same process
    kill -KILL "$p" 2>/dev/null || true; rm -f "$run/n$i/pid"; echo "killed n$i"
    ;;
  down)
    n=$(cat "$run/size" 2>/dev/null || echo 5)
    i=1
    while [ "$i" -le "$n" ]; do
      p=$(cat "$run/n$i/pid" 2>/dev/null || true)
      if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
        kill -TERM "$p" 2>/dev/null || true
        t=0; while kill -0 "$p" 2>/dev/null && [ "$t" -lt 100 ]; do sleep 0.2; t=$((t + 1)); done
        kill -KILL "$p" 2>/dev/null || true
      fi
      rm -f "$run/n$i/pid"
      i=$((i + 1))
    done
    net_delete "$n"
    echo "stopped; namespaces, veths and bridge removed (data kept in $run)"
    ;;
  *)
    sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "$cmd" ] || exit 2
    ;;
esac
