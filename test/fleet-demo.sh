#!/usr/bin/env bash
# A fleet on one machine: three throwaway servers with node ids 1, 2 and 3
# mint keys into their own "orders" tables at the same time, a fourth
# collects them through built-in logical replication, and the collected
# rows are shown decoded with the server each came from.  The node id
# claims travel with the data.  Everything is removed at the end.
#
#   test/fleet-demo.sh      install what is missing, build, install, run
#
# Like test/demo.sh it uses test/setup.sh (PG_MAJOR, PG_CONFIG), and as
# root it runs the servers as the "postgres" user.
set -euo pipefail

if [ "${1:-}" != "--servers" ]; then
    source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
    sf_setup
    exec "${RUN_AS[@]}" env PATH="$PG_BINDIR:$PATH" bash "$RUN_DIR/test/fleet-demo.sh" --servers
fi

# --- from here on: PostgreSQL's bin directory on PATH, an unprivileged user ---

dir=$(mktemp -d /tmp/snowflake-fleet.XXXXXX)
names=(node1 node2 node3 hub)
base=$((20000 + RANDOM % 20000))
declare -A port
for i in "${!names[@]}"; do
    port[${names[$i]}]=$((base + i))
done
cleanup() {
    for n in "${names[@]}"; do
        [ -f "$dir/$n/postmaster.pid" ] &&
            pg_ctl -D "$dir/$n" -m fast stop >/dev/null 2>&1 || true
    done
    rm -rf "$dir"
}
trap cleanup EXIT

sql() {
    local n=$1
    shift
    psql -X -q -h "$dir" -p "${port[$n]}" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

for n in "${names[@]}"; do
    initdb -D "$dir/$n" -A trust -U postgres >/dev/null
    node_id=
    [ "$n" != hub ] && node_id="snowflake.node_id = ${n#node}"
    cat >> "$dir/$n/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = ${port[$n]}
cluster_name = '$n'
wal_level = logical
shared_preload_libraries = 'snowflake'
$node_id
CONF
    pg_ctl -D "$dir/$n" -l "$dir/$n.log" -w start >/dev/null
done
echo "==> four throwaway servers in $dir: node1, node2, node3 (node ids 1-3) and hub"

schema="CREATE EXTENSION snowflake;
CREATE TABLE orders (
    id   bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    item text NOT NULL
);"
for n in node1 node2 node3; do
    sql "$n" -c "$schema" \
        -c "SELECT snowflake_claim_node()" -o /dev/null \
        -c "CREATE PUBLICATION fleet FOR TABLE orders, snowflake_node_claims"
done
sql hub -c "$schema"
for n in node1 node2 node3; do
    sql hub -c "CREATE SUBSCRIPTION from_$n
        CONNECTION 'host=$dir port=${port[$n]} user=postgres dbname=postgres'
        PUBLICATION fleet"
done
echo "==> node1, node2 and node3 publish orders and their node id claims; hub subscribes to all three"

# The three nodes insert at the same time.
for n in node1 node2 node3; do
    sql "$n" -c "DO \$\$ BEGIN
        FOR i IN 1..1000 LOOP
            INSERT INTO orders (item) VALUES ('$n order ' || i);
            COMMIT;
        END LOOP;
    END \$\$" &
done
wait
echo "==> each node inserted 1000 orders, one transaction each, all three at the same time"

# Wait (at most a minute) until the hub has copied and applied everything.
done_sql="SELECT (SELECT count(*) FROM orders) = 3000
    AND (SELECT count(*) FROM snowflake_node_claims) = 3
    AND NOT EXISTS (SELECT FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's'))"
for _ in $(seq 1 600); do
    [ "$(sql hub -At -c "$done_sql")" = t ] && break
    sleep 0.1
done

sql hub <<'SQL'
\echo '==> on the hub: the node id claims (one server per node id)'
SELECT node_id, server_name, system_identifier FROM snowflake_node_claims ORDER BY node_id;
\echo '==> on the hub: orders per origin, named by the node id inside each key'
SELECT snowflake_node_id(id) AS node_id, count(*) AS orders,
       min(snowflake_timestamp(id)) AS first, max(snowflake_timestamp(id)) AS last
  FROM orders GROUP BY 1 ORDER BY 1;
\echo '==> on the hub: every 250th order by id, decoded (ORDER BY id is by time of creation)'
SELECT o.id, o.item, d.ts, d.node_id, d.sequence
  FROM (SELECT *, row_number() OVER (ORDER BY id) AS n FROM orders) o,
       snowflake_decode(o.id) d
 WHERE o.n % 250 = 1
 ORDER BY o.id;
\echo '==> on the hub: no replication error'
SELECT subname, apply_error_count, sync_error_count
  FROM pg_stat_subscription_stats ORDER BY subname;
SQL
echo "==> fleet demo done; the servers are stopped and removed"
