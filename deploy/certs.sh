#!/usr/bin/env bash
# Makes the TLS material of a Hourglass cluster with openssl: two CAs, a certificate per node and
# per client, and a bootstrap admin token. EC P-256 keys, unencrypted PKCS#8 PEM, mode 600.
#
#   deploy/certs.sh DIR NODE... [--san NODE=ADDR[,ADDR...]]... [--client NAME]... [--days N]
#
#   DIR/ca.pem, ca.key             client CA ("Hourglass client CA"): signs the nodes' client-port
#                                  certificates and the client certificates; clients trust ca.pem
#   DIR/peer-ca.pem, peer-ca.key   peer CA ("Hourglass peer CA"): node-to-node mutual TLS only
#   DIR/NODE/node.pem, node.key    client gRPC port and HTTPS (serverAuth), signed by ca
#   DIR/NODE/peer.pem, peer.key    node-to-node (serverAuth, clientAuth), signed by peer-ca
#   DIR/clients/NAME.pem, NAME.key a client (clientAuth), signed by ca
#   DIR/admin.token                bootstrap token: 32 random bytes, URL-safe base64, mode 600
#
# Node certificates are CN=NODE with subject alternative names DNS:localhost, IP:127.0.0.1,
# DNS:NODE and the addresses given with --san (IPs or DNS names; the option may be repeated).
# --client NAME (repeatable) names the client certificates; default one client, admin. --days N:
# validity of every certificate made by this run (default 825).
#
# Re-running is safe: existing CAs, certificates and admin.token are kept, never overwritten; only
# what is missing is made, with the existing CAs. To reissue a certificate (new SANs, expired),
# delete its files and run again.
set -euo pipefail

die() { echo "certs: $*" >&2; exit 1; }
usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

command -v openssl >/dev/null || die "needs openssl"

dir=
nodes=()
san_specs=()  # NODE=ADDR[,ADDR...], as given
clients=()
days=825

while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --san) [ $# -ge 2 ] || die "--san needs NODE=ADDR[,ADDR...]"; san_specs+=("$2"); shift 2 ;;
    --san=*) san_specs+=("${1#--san=}"); shift ;;
    --client) [ $# -ge 2 ] || die "--client needs a name"; clients+=("$2"); shift 2 ;;
    --client=*) clients+=("${1#--client=}"); shift ;;
    --days) [ $# -ge 2 ] || die "--days needs a number"; days=$2; shift 2 ;;
    --days=*) days=${1#--days=}; shift ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) if [ -z "$dir" ]; then dir=$1; else nodes+=("$1"); fi; shift ;;
  esac
done

if [ -z "$dir" ] || [ ${#nodes[@]} -eq 0 ]; then usage >&2; exit 2; fi
[[ $days =~ ^[1-9][0-9]*$ ]] || die "--days takes a positive whole number, got '$days'"
[ ${#clients[@]} -gt 0 ] || clients=(admin)

# Names end up in file names, subjects and SANs: keep them plain.
name_ok() { [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]]; }
for n in "${nodes[@]}"; do
  name_ok "$n" || die "bad node id '$n' (letters, digits, . _ -)"
  [ "$n" != clients ] || die "a node cannot be called 'clients' (DIR/clients holds the client certificates)"
done
for c in "${clients[@]}"; do name_ok "$c" || die "bad client name '$c' (letters, digits, . _ -)"; done

is_node() { local n; for n in "${nodes[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }
for spec in ${san_specs[@]+"${san_specs[@]}"}; do
  [[ $spec == *=?* ]] || die "--san takes NODE=ADDR[,ADDR...], got '$spec'"
  is_node "${spec%%=*}" || die "--san names '${spec%%=*}', which is not one of the nodes: ${nodes[*]}"
done

# The subjectAltName value of a node: the fixed names, then its --san addresses, without repeats.
san_of() {
  local node=$1 spec addr addrs entry e seen list=()
  list=(DNS:localhost IP:127.0.0.1 "DNS:$node")
  for spec in ${san_specs[@]+"${san_specs[@]}"}; do
    [ "${spec%%=*}" = "$node" ] || continue
    IFS=, read -r -a addrs <<< "${spec#*=}"
    for addr in ${addrs[@]+"${addrs[@]}"}; do
      [ -n "$addr" ] || continue
      if [[ $addr =~ ^[0-9]+(\.[0-9]+){3}$ ]] || [[ $addr =~ ^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$ ]]; then
        entry="IP:$addr"
      elif [[ $addr =~ ^(\*\.)?[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$ ]]; then
        entry="DNS:$addr"
      else
        die "bad --san address '$addr' for $node (an IP or a DNS name)"
      fi
      seen=
      for e in "${list[@]}"; do [ "$e" = "$entry" ] && seen=1; done
      [ -n "$seen" ] || list+=("$entry")
    done
  done
  local IFS=,
  echo "${list[*]}"
}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
# Everything is made here first and moved into place when complete: an interrupted run leaves no
# half-written key or certificate behind.
tmp=$(mktemp -d "$dir/.certs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A minimal request config, so that the system's openssl.cnf (its defaults, extensions) plays no
# part; the subject is given with -subj.
printf '[req]\ndistinguished_name = dn\nprompt = no\n[dn]\n' > "$tmp/req.cnf"

made=()
kept=()

genkey() { # file
  (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null) \
    || die "openssl genpkey failed"
  chmod 600 "$1"
}

serial() { echo "0x$(openssl rand -hex 16)"; }

# make_ca BASE CN: DIR/BASE.pem and DIR/BASE.key, self-signed, kept if both exist.
make_ca() {
  local base=$1 cn=$2
  if [ -f "$dir/$base.pem" ] && [ -f "$dir/$base.key" ]; then
    kept+=("$base.pem"); return 0
  fi
  if [ -e "$dir/$base.pem" ] || [ -e "$dir/$base.key" ]; then
    die "$dir has only one of $base.pem and $base.key; not overwriting it (restore the other, or delete both to make a new CA)"
  fi
  cat > "$tmp/$base.ext" <<EOF
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
  genkey "$tmp/$base.key"
  openssl req -new -config "$tmp/req.cnf" -key "$tmp/$base.key" -subj "/CN=$cn" -out "$tmp/$base.csr"
  openssl x509 -req -in "$tmp/$base.csr" -signkey "$tmp/$base.key" -set_serial "$(serial)" \
    -days "$days" -sha256 -extfile "$tmp/$base.ext" -out "$tmp/$base.pem" 2>/dev/null \
    || die "openssl x509 failed making $base.pem"
  mv "$tmp/$base.key" "$dir/$base.key"
  mv "$tmp/$base.pem" "$dir/$base.pem"
  made+=("$base.pem ($cn)")
}

# make_leaf CA_BASE OUT CN EKU [SAN]: OUT.pem and OUT.key (OUT relative to DIR), signed by
# DIR/CA_BASE; kept if both exist and verify against that CA.
make_leaf() {
  local ca=$1 out=$2 cn=$3 eku=$4 san=${5:-} t
  if [ -f "$dir/$out.pem" ] && [ -f "$dir/$out.key" ]; then
    openssl verify -CAfile "$dir/$ca.pem" "$dir/$out.pem" >/dev/null 2>&1 \
      || die "$dir/$out.pem exists but does not verify against $ca.pem (expired, or from another CA); delete $out.pem and $out.key to reissue it"
    kept+=("$out.pem"); return 0
  fi
  if [ -e "$dir/$out.pem" ] || [ -e "$dir/$out.key" ]; then
    die "$dir has only one of $out.pem and $out.key; not overwriting it (delete it to reissue)"
  fi
  t=$tmp/${out//\//_}
  {
    echo "basicConstraints = critical, CA:FALSE"
    echo "keyUsage = critical, digitalSignature"
    echo "extendedKeyUsage = $eku"
    [ -z "$san" ] || echo "subjectAltName = $san"
    echo "subjectKeyIdentifier = hash"
    echo "authorityKeyIdentifier = keyid, issuer"
  } > "$t.ext"
  genkey "$t.key"
  openssl req -new -config "$tmp/req.cnf" -key "$t.key" -subj "/CN=$cn" -out "$t.csr"
  openssl x509 -req -in "$t.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" -set_serial "$(serial)" \
    -days "$days" -sha256 -extfile "$t.ext" -out "$t.pem" 2>/dev/null \
    || die "openssl x509 failed making $out.pem"
  mkdir -p "$dir/$(dirname "$out")"
  mv "$t.key" "$dir/$out.key"
  mv "$t.pem" "$dir/$out.pem"
  made+=("$out.pem${san:+ [$san]}")
}

make_ca ca "Hourglass client CA"
make_ca peer-ca "Hourglass peer CA"

for n in "${nodes[@]}"; do
  san=$(san_of "$n")
  make_leaf ca "$n/node" "$n" serverAuth "$san"
  make_leaf peer-ca "$n/peer" "$n" "serverAuth, clientAuth" "$san"
done
for c in "${clients[@]}"; do
  make_leaf ca "clients/$c" "$c" clientAuth
done

if [ -f "$dir/admin.token" ]; then
  kept+=(admin.token)
else
  (umask 077 && openssl rand 32 | openssl base64 -A | tr '+/' '-_' | tr -d '=\n' > "$tmp/admin.token" \
    && echo >> "$tmp/admin.token") || die "could not make admin.token"
  chmod 600 "$tmp/admin.token"
  mv "$tmp/admin.token" "$dir/admin.token"
  made+=(admin.token)
fi

echo "certs in $dir (valid $days days):"
for f in ${made[@]+"${made[@]}"}; do echo "  made  $f"; done
for f in ${kept[@]+"${kept[@]}"}; do echo "  kept  $f"; done
echo "clients trust $dir/ca.pem; nodes trust each other through $dir/peer-ca.pem"
