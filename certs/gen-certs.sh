#!/usr/bin/env bash
# Make a CA and a serving certificate for rdma-webhook with openssl.
#
#   certs/gen-certs.sh [--rsa[=2048|3072]] [--days N] [--force] OUT_DIR [SERVICE [NAMESPACE [EXTRA_SAN...]]]
#
#   SERVICE    default rdma-webhook;  NAMESPACE  default rdma-webhook
#   EXTRA_SAN  more DNS names or IP addresses (an IP is detected by shape)
#
# Writes OUT_DIR/ca.crt ca.key tls.crt tls.key (keys mode 0600). The serving
# certificate always carries DNS:localhost, IP:127.0.0.1, IP:::1 and
#   SERVICE, SERVICE.NAMESPACE, SERVICE.NAMESPACE.svc,
#   SERVICE.NAMESPACE.svc.cluster.local
# Keys are ECDSA P-256 unless --rsa is given (RSA 2048; --rsa=3072 for 3072).
#
# Idempotent: an existing CA in OUT_DIR is reused, whatever its key type (so a caBundle already
# handed out stays valid) and the serving certificate is re-issued only when
# it is missing, does not match the requested SANs/key type, or --force is
# given. No prompts. Prints the paths of the files.
#
# Then, e.g.:
#   kubectl -n rdma-webhook create secret tls rdma-webhook-tls --cert OUT_DIR/tls.crt --key OUT_DIR/tls.key
#   base64 -w0 OUT_DIR/ca.crt   # the caBundle
set -euo pipefail

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

ALG=ec
RSA_BITS=2048
DAYS=825
CA_DAYS=3650
FORCE=0
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rsa) ALG=rsa ;;
    --rsa=2048|--rsa=3072) ALG=rsa; RSA_BITS="${1#--rsa=}" ;;
    --rsa=*) echo "gen-certs.sh: --rsa takes 2048 or 3072, not '${1#--rsa=}'" >&2; exit 2 ;;
    --days) [ $# -ge 2 ] || usage; DAYS="$2"; shift ;;
    --days=*) DAYS="${1#--days=}" ;;
    --force) FORCE=1 ;;
    -h|--help) usage ;;
    --) shift; ARGS+=("$@"); break ;;
    -*) echo "gen-certs.sh: unknown option '$1'" >&2; exit 2 ;;
    *) ARGS+=("$1") ;;
  esac
  shift
done
[ "${#ARGS[@]}" -ge 1 ] || usage
case "$DAYS" in ''|*[!0-9]*) echo "gen-certs.sh: --days needs a positive integer" >&2; exit 2 ;; esac

OUT="${ARGS[0]}"
SVC="${ARGS[1]:-rdma-webhook}"
NS="${ARGS[2]:-rdma-webhook}"
EXTRA=("${ARGS[@]:3}")

command -v openssl >/dev/null || { echo "gen-certs.sh: openssl not found" >&2; exit 1; }
mkdir -p "$OUT"
umask 077

is_ip() { [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ || "$1" == *:*:* ]]; }

# SAN list, deduplicated, in a fixed order.
declare -A seen=()
SANS=()
add_san() { local s="$1"; [ -n "$s" ] || return 0; [ -z "${seen[$s]:-}" ] || return 0; seen[$s]=1
  if is_ip "$s"; then SANS+=("IP:$s"); else SANS+=("DNS:$s"); fi; }
add_san "$SVC"; add_san "$SVC.$NS"; add_san "$SVC.$NS.svc"; add_san "$SVC.$NS.svc.cluster.local"
add_san localhost; add_san 127.0.0.1; add_san ::1
for s in "${EXTRA[@]}"; do add_san "$s"; done
SAN_LINE="$(IFS=,; echo "${SANS[*]}")"

newkey() { # file
  if [ "$ALG" = ec ]; then
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
  else
    openssl genpkey -algorithm RSA -pkeyopt "rsa_keygen_bits:$RSA_BITS" -out "$1" 2>/dev/null
  fi
  chmod 600 "$1"
}
keytype() { openssl pkey -in "$1" -noout -text 2>/dev/null | head -n1; }

# --- CA (reused when present and readable) ---
if [ -s "$OUT/ca.crt" ] && [ -s "$OUT/ca.key" ] && openssl x509 -in "$OUT/ca.crt" -noout 2>/dev/null; then
  echo "reusing CA $OUT/ca.crt" >&2
else
  newkey "$OUT/ca.key"
  openssl req -x509 -new -key "$OUT/ca.key" -sha256 -days "$CA_DAYS" \
    -subj "/CN=$SVC-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" \
    -out "$OUT/ca.crt"
  chmod 644 "$OUT/ca.crt"
  FORCE=1   # a new CA invalidates any old serving certificate
fi

# --- serving certificate ---
want_keytype() { if [ "$ALG" = ec ]; then echo "Private-Key: (256 bit"; else echo "Private-Key: ($RSA_BITS bit"; fi; }
cert_ok() {
  [ -s "$OUT/tls.crt" ] && [ -s "$OUT/tls.key" ] || return 1
  openssl verify -CAfile "$OUT/ca.crt" "$OUT/tls.crt" >/dev/null 2>&1 || return 1
  openssl x509 -in "$OUT/tls.crt" -noout -checkend 86400 >/dev/null 2>&1 || return 1
  [ "$(openssl x509 -in "$OUT/tls.crt" -noout -pubkey | openssl sha256)" = \
    "$(openssl pkey -in "$OUT/tls.key" -pubout | openssl sha256)" ] || return 1
  [[ "$(keytype "$OUT/tls.key")" == *"$(want_keytype)"* ]] || return 1
  local have; have="$(openssl x509 -in "$OUT/tls.crt" -noout -ext subjectAltName 2>/dev/null | tail -n +2 | tr -d ' ' \
    | sed 's/IPAddress:/IP:/g; s/0:0:0:0:0:0:0:1/::1/')"
  [ "$have" = "$SAN_LINE" ] || return 1
}
if [ "$FORCE" = 0 ] && cert_ok; then
  echo "reusing serving certificate $OUT/tls.crt" >&2
else
  newkey "$OUT/tls.key"
  CSR="$(mktemp)"; EXT="$(mktemp)"; trap 'rm -f "$CSR" "$EXT"' EXIT
  openssl req -new -key "$OUT/tls.key" -subj "/CN=$SVC.$NS.svc" -out "$CSR"
  cat > "$EXT" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
subjectAltName=$SAN_LINE
EXT
  # -set_serial from /dev/urandom: no .srl file next to the CA.
  openssl x509 -req -in "$CSR" -CA "$OUT/ca.crt" -CAkey "$OUT/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days "$DAYS" -sha256 -extfile "$EXT" -out "$OUT/tls.crt" 2>/dev/null
  chmod 644 "$OUT/tls.crt"
fi

echo "CA certificate:      $OUT/ca.crt"
echo "CA key:              $OUT/ca.key"
echo "serving certificate: $OUT/tls.crt"
echo "serving key:         $OUT/tls.key"
echo "SANs:                $SAN_LINE"
