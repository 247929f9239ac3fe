# Sourced by tools/soak.sh, tools/crash_drill.sh and the integration tests
# (tests/integration/server_common.sh): a secure session's keys, as in
# production.
#
# session_keys KEYS_BIN DIR   creates DIR/issuer.key (the token issuer) and
#                             DIR/server.key with cradle-keys, unless they
#                             exist; sets ISSUER_PUB (for the server's
#                             --trust) and SERVER_ID (for a client's
#                             --server-key); exports CRADLE_TEST_SERVER_KEY and
#                             CRADLE_TEST_ISSUER_KEY, which cradle-test-client
#                             reads to mint a token per connect.
session_keys() {
  local bin=$1 dir=$2
  [ -x "$bin" ] || { echo "cradle-keys not found at $bin (build it, or set CRADLE_KEYS)" >&2; return 1; }
  [ -f "$dir/issuer.key" ] || "$bin" gen --out "$dir/issuer.key" >/dev/null
  [ -f "$dir/server.key" ] || "$bin" gen --out "$dir/server.key" >/dev/null
  ISSUER_PUB=$("$bin" pub "$dir/issuer.key" --sign)
  SERVER_ID=$("$bin" pub "$dir/server.key" --kx)
  export CRADLE_TEST_SERVER_KEY=$SERVER_ID
  export CRADLE_TEST_ISSUER_KEY=$dir/issuer.key
}
