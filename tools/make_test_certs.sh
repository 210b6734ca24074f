#!/usr/bin/env bash
# Writes the TLS test identities of the cluster runtime's tests
# (crates/dist/tests/tls.rs) into crates/dist/tests/fixtures/tls/:
#
#   ca.pem                        the cluster CA (self-signed)
#   server.pem, server.key        a server certificate signed by it, for
#                                 DNS:localhost and IP:127.0.0.1 (serverAuth)
#   client.pem, client.key        a client certificate signed by it (clientAuth)
#   other_ca.pem                  a second, unrelated CA
#   other_client.pem, other_client.key
#                                 a client certificate signed by the other CA
#
# ECDSA P-256 keys (PKCS#8), 100 years of validity, so the fixtures never
# expire under the tests. Test-only keys: never use them for a real cluster.
# Needs the openssl command-line tool (1.1.1 or 3.x). Running it again makes
# new keys and certificates; the tests need only that they match each other.
set -euo pipefail
out="$(cd "$(dirname "$0")/.." && pwd)/crates/dist/tests/fixtures/tls"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
days=36500

key() { # key <file>
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

ca() { # ca <name> <common name>
  key "$work/$1.key"
  cat >"$work/$1.ext" <<EOF
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
  openssl req -new -key "$work/$1.key" -subj "/O=ferroflow tests/CN=$2" -out "$work/$1.csr"
  openssl x509 -req -in "$work/$1.csr" -signkey "$work/$1.key" -days "$days" \
    -sha256 -extfile "$work/$1.ext" -out "$out/$1.pem" 2>/dev/null
}

leaf() { # leaf <name> <ca name> <common name> <extended key usage> [subjectAltName]
  key "$out/$1.key"
  {
    echo "basicConstraints = critical, CA:FALSE"
    echo "keyUsage = critical, digitalSignature"
    echo "extendedKeyUsage = $4"
    echo "authorityKeyIdentifier = keyid"
    if [ $# -ge 5 ]; then echo "subjectAltName = $5"; fi
  } >"$work/$1.ext"
  openssl req -new -key "$out/$1.key" -subj "/O=ferroflow tests/CN=$3" -out "$work/$1.csr"
  openssl x509 -req -in "$work/$1.csr" -CA "$out/$2.pem" -CAkey "$work/$2.key" \
    -CAcreateserial -CAserial "$work/$2.srl" -days "$days" -sha256 \
    -extfile "$work/$1.ext" -out "$out/$1.pem" 2>/dev/null
}

ca ca "ferroflow test cluster CA"
leaf server ca "ferroflow test server" serverAuth "DNS:localhost, IP:127.0.0.1"
leaf client ca "ferroflow test client" clientAuth
ca other_ca "unrelated test CA"
leaf other_client other_ca "client of the unrelated CA" clientAuth

openssl verify -CAfile "$out/ca.pem" "$out/server.pem" "$out/client.pem" >/dev/null
openssl verify -CAfile "$out/other_ca.pem" "$out/other_client.pem" >/dev/null
if openssl verify -CAfile "$out/ca.pem" "$out/other_client.pem" >/dev/null 2>&1; then
  echo "other_client.pem must not verify against ca.pem" >&2
  exit 1
fi
chmod 644 "$out"/*.key
echo "wrote $(ls "$out" | wc -l) files to $out"
