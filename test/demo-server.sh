#!/usr/bin/env bash
# Start a throwaway server with snowflake preloaded, run test/demo.sql in it,
# then stop it and remove its data directory.  Needs PostgreSQL's bin
# directory on PATH and an installed extension (test/demo.sh does both).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d /tmp/snowflake-demo.XXXXXX)
port=$((20000 + RANDOM % 20000))
cleanup() {
    pg_ctl -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT

initdb -D "$dir/data" -A trust -U postgres >/dev/null
cat >> "$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
shared_preload_libraries = 'snowflake'
snowflake.node_id = 42
CONF
pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
echo "==> throwaway server in $dir (port $port, snowflake.node_id = 42)"
psql -X -q -h "$dir" -p "$port" -U postgres -d postgres \
    -v ON_ERROR_STOP=1 -f "$here/demo.sql"
echo "==> demo done; the server is stopped and removed"
