#!/bin/sh
# Makes what mutual TLS between Temporal's frontend and its clients needs, with openssl, into DIR (default
# ./secrets/tls): a private CA (ca.pem, ca-key.pem), the frontend's certificate (frontend.pem, frontend-key.pem)
# for `temporal`, `localhost`, 127.0.0.1 and the names or IP addresses given, and one client certificate
# (client.pem, client-key.pem) for the worker, the CLI and the UI. Keys are P-256, readable by their owner only.
# Existing files are kept: delete DIR to make new ones. See docs/operations.md, "Exposing the stack".
#
#   scripts/make-certs.sh [DIR] [SERVER_NAME...]
set -eu
dir=${1:-./secrets/tls}
[ $# -gt 0 ] && shift
umask 077
mkdir -p "$dir"
if [ -e "$dir/ca.pem" ]; then
  echo "make-certs: $dir/ca.pem exists; keeping the certificates in $dir" >&2
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

san="DNS:temporal,DNS:localhost,IP:127.0.0.1"
for name in "$@"; do
  case $name in
    *[!0-9.]*) san="$san,DNS:$name" ;;
    *) san="$san,IP:$name" ;;
  esac
done

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key "$dir/ca-key.pem"
openssl req -x509 -new -key "$dir/ca-key.pem" -sha256 -days 3650 -subj "/CN=longhaul private CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$dir/ca.pem"

# sign NAME CN EXTENSIONS: a certificate for NAME's key, signed by the CA.
sign() {
  key "$dir/$1-key.pem"
  openssl req -new -key "$dir/$1-key.pem" -subj "/CN=$2" -out "$tmp/$1.csr"
  printf '%s\n' "$3" > "$tmp/$1.ext"
  openssl x509 -req -in "$tmp/$1.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -CAcreateserial -CAserial "$tmp/ca.srl" \
    -sha256 -days 825 -extfile "$tmp/$1.ext" -out "$dir/$1.pem" 2>/dev/null
}

sign frontend temporal "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=$san"
sign client longhaul "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"

chmod 644 "$dir/ca.pem" "$dir/frontend.pem" "$dir/client.pem"
openssl verify -CAfile "$dir/ca.pem" "$dir/frontend.pem" "$dir/client.pem" >&2
echo "make-certs: CA, frontend ($san) and client certificates in $dir" >&2
