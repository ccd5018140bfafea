#!/usr/bin/env bash
# Writes the TLS test's certificates (tests/tls.rs), committed as they are: two self-signed
# certificates of the same name (CN "codex-app-client test", for 127.0.0.1 and localhost), each
# with its own ECDSA P-256 key, valid for a hundred years from the day they were made.
# `proxy` serves the test's TLS proxy (its key alongside, PKCS#8); `other` is the certificate of
# the same name whose key did not sign `proxy` (a root that must not be trusted for it).
# Made once instead of at each test run so that the tests build no certificate generator.
#
#   client/tests/certificates/make.sh   # needs openssl; rewrites the three files here
set -euo pipefail
cd "$(dirname "$0")"
config=$(mktemp)
trap 'rm -f "$config"' EXIT
# An end-entity certificate: no CA basic constraint (a CA certificate is refused as the
# server's), the names the proxy answers for.
cat >"$config" <<'CNF'
[req]
distinguished_name = name
x509_extensions = end_entity
prompt = no
[name]
CN = codex-app-client test
[end_entity]
subjectAltName = IP:127.0.0.1, DNS:localhost
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
CNF
for name in proxy other; do
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$name.key.pem" 2>/dev/null
    openssl req -x509 -new -key "$name.key.pem" -config "$config" -days 36500 -sha256 -out "$name.pem"
done
rm other.key.pem
