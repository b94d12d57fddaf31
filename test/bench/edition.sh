#!/usr/bin/env bash
# test/bench/edition.sh: the SQL edition at a sequence's speed (issue 55),
# beside bigserial, a UUIDv7 and the C extension, on one throwaway server.
#
# Single-row insert transactions (INSERT INTO t (v) VALUES (1), the key from
# the column's default) into one table per contender:
#   edition    bigint PRIMARY KEY DEFAULT sqled.snowflake_nextval(): the SQL
#              edition of this tree (sql-edition/build.pl), its plain script
#              installed into schema sqled, node id 2
#   bigserial  bigserial PRIMARY KEY
#   uuidv7     uuid PRIMARY KEY DEFAULT uuidv7() on PostgreSQL 18 and later,
#              else a PL/pgSQL UUIDv7 (bench_uuid_v7() of test/bench/bench.sql)
#   c          bigint PRIMARY KEY DEFAULT snowflake_nextval(): the C
#              extension, installed into PG_CONFIG's PostgreSQL, preloaded,
#              node id 1
#   floor      (at 2/s only) bigint PRIMARY KEY DEFAULT
#              bench_floor_nextval(): the least move under a lock no
#              other role can take, as a key's default (SECURITY DEFINER,
#              as the edition's; a row lock in a subtransaction rolled
#              back, the clock and four sequence operations in one
#              statement, every call a move): a lower bound of an edition
#              that moves its key sequence under such a lock, at 2/s,
#              where every call moves it
# with real commits (synchronous_commit on, fsync on), each run of pgbench
# (-n -M prepared, every transaction's latency logged) in these modes:
#   saturated with 1 and with 8 clients (-j 2), --seconds S each;
#   at a fixed rate of 300 transactions a second (--rate, Poisson arrivals)
#   with 1 and with 8 clients, --seconds S each;
#   at 2 a second, 1 and 8 clients, --low-seconds S each (and floor);
# --reps N repetitions, the contenders interleaved in every mode of every
# repetition (the first one rotating), each run on its table emptied
# (TRUNCATE) and checkpointed, after one unmeasured insert; the latencies
# leave out each client's first transaction (its backend's first: the
# catalogs read and the PL/pgSQL compiled, which an application's pooled
# connections have done long before; at 2/s with 8 clients they were 8
# of a 10 s run's 20 transactions, 8 of a 30 s run's 60).  Then:
#   hostile    the edition's table, 8 clients saturated, --seconds S: alone;
#              beside two loops of brin_summarize_new_values() on the
#              edition's relations (its lock table and key sequence, by OID,
#              as a role with no privilege: issue 53); and beside the same
#              two loops on a table of that role's own (the loops' own cost
#              on the CPUs, the control), interleaved, --reps N each;
#   publicid   the public-ID functions per call (issue 48), the edition's
#              (pgcrypto installed first, the same key as the C extension's)
#              and the C extension's, over real IDs in one backend, less
#              count() of the column read;
#   move       one call at 2/s, timed inside the server, every call in a
#              transaction of its own after a pause of 0.5 s: the edition
#              (whose every call then moves its key sequence), nextval()
#              (bigserial's default), the UUIDv7, the C extension, and the
#              pieces of a move under a lock no other role can take (a
#              subtransaction rolled back; a row lock in one; the least
#              such move: that lock and four sequence operations in one
#              statement), less an empty PL/pgSQL function's call.
# It writes a Markdown report (test/bench/edition-report.pl): per mode and
# contender, transactions a second and the median, p99 and maximum latency
# of each run, as the median of the runs with their spread, each against
# bigserial's; issue 55's targets; the load average of each section.
# Measurements only: nothing passes or fails.
#
#   test/bench/edition.sh [--reps N] [--seconds S] [--low-seconds S]
#                         [--only LIST] [--output FILE] [--keep] [--quick]
#
#   --reps N          repetitions (default 5)
#   --seconds S       length of each saturated, 300/s and hostile run
#                     (default 10)
#   --low-seconds S   length of each run at 2/s (default 30)
#   --only LIST       some sections only, comma-separated: saturated, 300,
#                     2, hostile, publicid, move (default all; the report then
#                     leaves the others' tables and targets empty)
#   --output FILE     the report (default
#                     docs/performance/report-sql-edition-speed-pgMAJOR.md)
#   --keep            keep the temporary directory (server log, raw data)
#   --quick           a smoke run: 2 repetitions of 2 s (6 s at 2/s)
#
# Needs the extension built and installed into the PostgreSQL PG_CONFIG
# names (make && make install), pgcrypto (PostgreSQL's contrib), psql,
# pgbench and perl.  Run as root, the server runs as "postgres".  About 50
# minutes with the defaults on 2 CPUs.  test/bench/chroot-run.sh MAJOR
# --edition runs it on 17, 18 or 19.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)
cmdline=test/bench/edition.sh
for a in "$@"; do
    case "$a" in *[!A-Za-z0-9_./=:,+-]*) cmdline+=" '${a//\'/\'\\\'\'}'" ;; *) cmdline+=" $a" ;; esac
done
[ -z "${SNOWFLAKE_BENCH_CMDLINE:-}" ] || cmdline=$SNOWFLAKE_BENCH_CMDLINE

reps='' seconds='' low_seconds='' output='' keep=0 quick=0 only=saturated,300,2,hostile,publicid,move
usage="usage: test/bench/edition.sh [--reps N] [--seconds S] [--low-seconds S] [--only LIST] [--output FILE] [--keep] [--quick]"
while [ $# -gt 0 ]; do
    case $1 in
        --reps) reps=${2:?$usage}; shift 2 ;;
        --seconds) seconds=${2:?$usage}; shift 2 ;;
        --low-seconds) low_seconds=${2:?$usage}; shift 2 ;;
        --only) only=${2:?$usage}; shift 2 ;;
        --output) output=${2:?$usage}; shift 2 ;;
        --keep) keep=1; shift ;;
        --quick) quick=1; shift ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
if [ "$quick" -eq 1 ]; then
    reps=${reps:-2} seconds=${seconds:-2} low_seconds=${low_seconds:-6}
else
    reps=${reps:-5} seconds=${seconds:-10} low_seconds=${low_seconds:-30}
fi
for v in "$reps" "$seconds" "$low_seconds"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "$usage" >&2; exit 2; }
done
for s in ${only//,/ }; do
    case $s in saturated|300|2|hostile|publicid|move) ;; *) echo "edition.sh: no section \"$s\"" >&2; exit 2 ;; esac
done
want() { case ",$only," in *,"$1",*) return 0 ;; esac; return 1; }
# The public IDs' rows: the C extension's, and of them the edition's (some
# hundred times slower).
n_pub=200000
n_pub_ed=2000
[ "$quick" -eq 0 ] || { n_pub=20000; n_pub_ed=200; }

PG_CONFIG=${PG_CONFIG:-pg_config}
"$PG_CONFIG" --bindir >/dev/null 2>&1 || { echo "edition.sh: pg_config not found; set PG_CONFIG" >&2; exit 1; }
bindir=$("$PG_CONFIG" --bindir)
if [ ! -f "$("$PG_CONFIG" --pkglibdir)/snowflake.so" ]; then
    echo "edition.sh: snowflake is not installed into $("$PG_CONFIG" --pkglibdir): make && make install" >&2
    exit 1
fi
if [ ! -f "$("$PG_CONFIG" --sharedir)/extension/pgcrypto.control" ]; then
    echo "edition.sh: the public IDs of the SQL edition need pgcrypto (PostgreSQL's contrib)" >&2
    exit 1
fi
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
output=${output:-$root/docs/performance/report-sql-edition-speed-pg$major.md}

if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "edition.sh: running as root needs a \"postgres\" user" >&2; exit 1; }
    as_server=(runuser -u postgres --)
    server_user=postgres
else
    as_server=()
    server_user=$(id -un)
fi
log() { printf '==> %s\n' "$*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }

work=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-edition.XXXXXX")
chmod 755 "$work"
[ "$server_user" = "$(id -un)" ] || chown "$server_user" "$work"
data=$work/data
port=$((20000 + RANDOM % 30000))
logs=$work/logs
mkdir -m 777 "$logs"
meta=$work/meta.txt
server_started=0
server_pid=
bg_pids=()

cleanup() {
    local pid
    for pid in "${bg_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    if [ "$server_started" -eq 1 ]; then
        "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m immediate -t 30 -w stop >/dev/null 2>&1 || true
        [ -z "$server_pid" ] || sf_stop_pid "$server_pid"
    fi
    sf_keep_or_remove "$work" "$keep"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# psql against the bench database, as $role (postgres unless set):
# unaligned, tab-separated, no headers; search_path set before anything
# runs (public, pg_catalog searched first as always), so that no statement
# the superuser runs resolves a name in a schema another role could write.
q() {
    PGOPTIONS="-c client_min_messages=warning -c search_path=public" "$bindir/psql" -X -q -At -F $'\t' \
        -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U "${role:-postgres}" -d bench "$@"
}

# The elements of a list, rotated left by $1.
rotate() {
    local k=$1
    shift
    local a=("$@") n=$# i
    for ((i = 0; i < n; i++)); do
        echo "${a[(i + k) % n]}"
    done
}

# --- the server ---

log "throwaway server in $work (port $port)"
"${as_server[@]}" "$bindir/initdb" -D "$data" -A trust -U postgres --no-sync >"$work/initdb.log" 2>&1
cat >> "$data/postgresql.conf" <<CONF
# test/bench/edition.sh
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
max_connections = 40
shared_preload_libraries = 'snowflake'
snowflake.node_id = 1
shared_buffers = 256MB
# Real commits, as an application's: every insert's commit waits for its
# WAL to reach the disk.
synchronous_commit = on
fsync = on
# Every run starts right after an explicit CHECKPOINT; no timed or
# size-triggered checkpoint and no autovacuum worker falls inside one.
checkpoint_timeout = 30min
max_wal_size = 8GB
autovacuum = off
statement_timeout = '10min'
snowflake.public_keys_file = 'public.keys'
CONF
pub_key=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
printf '1 %s current\n' "$pub_key" > "$data/public.keys"
chmod 600 "$data/public.keys"
[ "$server_user" = "$(id -un)" ] || chown "$server_user" "$data/public.keys"
"${as_server[@]}" "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -t 120 -w start >/dev/null
server_started=1
server_pid=$(head -n 1 "$data/postmaster.pid")
"$bindir/psql" -X -q -h "$work" -p "$port" -U postgres -d postgres -c "CREATE DATABASE bench"
q -c "CREATE EXTENSION snowflake" >/dev/null
q -f "$here/bench.sql" >/dev/null
q -c "CREATE EXTENSION pgcrypto" >/dev/null
perl "$root/sql-edition/build.pl" --out "$work/sqled" >/dev/null
chmod -R a+rX "$work/sqled"
q -c "CREATE SCHEMA sqled" >/dev/null
q -c "SET search_path = sqled" -f "$work/sqled/snowflake-plain.sql" >/dev/null
q -c "SELECT sqled.snowflake_set_node_id(2)" >/dev/null
q -c "SELECT sqled.snowflake_set_public_key(1, '\\x$pub_key', true)" >/dev/null
has_uuidv7=$(q -c "SELECT to_regprocedure('pg_catalog.uuidv7()') IS NOT NULL")
# The hostile role of the hostile section: no privilege, a table of its
# own (the control's target).
q -c "CREATE ROLE bench_hostile LOGIN; CREATE SCHEMA hostile AUTHORIZATION bench_hostile" >/dev/null
role=bench_hostile q -c "CREATE TABLE hostile.own (v int)" >/dev/null

kinds=(edition bigserial uuidv7 c)
# The contenders of a mode: at 2/s the floor too.
kinds_of() {
    echo "${kinds[@]}"
    [ "$1" != 2 ] || echo floor
}
key_def() {
    case $1 in
        edition) echo "id bigint PRIMARY KEY DEFAULT sqled.snowflake_nextval()" ;;
        bigserial) echo "id bigserial PRIMARY KEY" ;;
        uuidv7)
            if [ "$has_uuidv7" = t ]; then
                echo "id uuid PRIMARY KEY DEFAULT uuidv7()"
            else
                echo "id uuid PRIMARY KEY DEFAULT bench_uuid_v7()"
            fi ;;
        c) echo "id bigint PRIMARY KEY DEFAULT snowflake_nextval()" ;;
        floor) echo "id bigint PRIMARY KEY DEFAULT bench_floor_nextval()" ;;
    esac
}
# The floor: a move under a row lock of a one-row table that only the
# function's owner can write, taken in a subtransaction that is rolled back
# (released before the transaction ends, and by any error): the state
# sequence set to "a move under way", L taken from the key sequence, the key
# the later of L + 1000 and the clock's millisecond, the key sequence set to
# it, the state set back; no check, no fast path, no refusal, no server life.
q >/dev/null <<'SQL'
CREATE TABLE bench_floor_lock (x int);
INSERT INTO bench_floor_lock VALUES (1);
CREATE SEQUENCE bench_floor_key;
CREATE SEQUENCE bench_floor_state;
CREATE FUNCTION bench_floor_nextval() RETURNS int8
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
    k pg_catalog.int8;
BEGIN
    BEGIN
        SELECT CASE WHEN pg_catalog.setval('public.bench_floor_key'::pg_catalog.regclass, m.k) IS NOT NULL
                     AND pg_catalog.setval('public.bench_floor_state'::pg_catalog.regclass, 2) IS NOT NULL
                    THEN m.k END
          INTO k
          FROM (SELECT GREATEST(
                         pg_catalog.nextval(CASE WHEN pg_catalog.setval('public.bench_floor_state'::pg_catalog.regclass, 2 + 1024) IS NOT NULL
                                                 THEN 'public.bench_floor_key'::pg_catalog.regclass END) + 1000,
                         (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::pg_catalog.int8 << 22) AS k
                  FROM (SELECT FROM public.bench_floor_lock
                         WHERE pg_catalog.set_config('lock_timeout', '5000', true) IS NOT NULL
                           FOR UPDATE) f) m;
        RAISE SQLSTATE 'SFREL';
    EXCEPTION WHEN SQLSTATE 'SFREL' THEN
        NULL;
    END;
    RETURN k;
END $$;
SQL
for kind in "${kinds[@]}" floor; do
    q -c "CREATE TABLE bench_$kind ($(key_def "$kind"), v integer NOT NULL)"
    # pgbench reads the clock lazily: a meta-command at the end makes each
    # transaction end, and the next begin, at a fresh reading
    # (test/bench/run.sh, LATENCY_SCRIPT_END).
    printf '%s\n' "INSERT INTO bench_$kind (v) VALUES (1);" '\set fresh_clock 0' > "$work/insert_$kind.sql"
done

{
    echo "date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "command=$cmdline"
    echo "reps=$reps"
    echo "only=$only"
    echo "seconds=$seconds"
    echo "low_seconds=$low_seconds"
    echo "nproc=$(nproc)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "ram=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel=$(uname -sr)"
    echo "os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}")${SNOWFLAKE_BENCH_WHERE:+ ($SNOWFLAKE_BENCH_WHERE)}"
    echo "pgversion=$(q -c 'SELECT version()')"
    echo "has_uuidv7=$has_uuidv7"
    echo "settings=$(q -c "SELECT string_agg(name || ' = ' || setting || coalesce(unit, ''), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'synchronous_commit', 'fsync', 'wal_sync_method', 'autovacuum', 'max_wal_size', 'checkpoint_timeout', 'max_connections', 'snowflake.node_id', 'jit')")"
    echo "edition=$(q -c 'SELECT sqled._snowflake_edition_version()')"
    echo "extension=$(q -c "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")"
    if git -C "$root" rev-parse --short HEAD >/dev/null 2>&1; then
        echo "git=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" status --porcelain -- src sql-edition 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
    else
        echo "git=${SNOWFLAKE_BENCH_GIT:-unknown}"
    fi
    echo "load_start=$(loadavg)"
} > "$meta"
t_start=$(date +%s)

# Run pgbench on the bench database; print "tps<TAB>transactions".
pgbench_run() {
    local out tps tx
    out=$("$bindir/pgbench" -h "$work" -p "$port" -U postgres "$@" bench 2>&1) || { echo "$out" >&2; return 1; }
    tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' <<< "$out")
    tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<< "$out")
    printf '%s\t%s\n' "${tps:-0}" "${tx:-0}"
}

# The latencies of a run from its -l logs (one file per thread), as a
# histogram of microseconds appended to $3 with the tag $2 in front; under
# --rate the time a transaction waited for its turn (the schedule lag,
# field 7) is taken out of its time.  Each client's first transaction
# (field 2, counted from 1) is left out.  The logs are removed.
collect_latencies() {
    local prefix=$1 tag=$2 out=$3
    cat "$prefix".* | awk -v tag="$tag" '
        $2 > 1 && $3 ~ /^[0-9]+$/ {
            lag = (NF >= 7 && $7 ~ /^[0-9]+$/) ? $7 : 0
            n[$3 - lag]++
        }
        END { for (us in n) printf "%s\t%d\t%d\n", tag, us, n[us] }' >> "$out"
    rm -f "$prefix".*
}

# One run: kind, mode ("saturated" or a rate), clients, rep, seconds.
printf 'mode\tclients\tkind\trep\tseconds\ttps\ttx\n' > "$work/runs.tsv"
printf 'mode\tclients\tkind\trep\tlatency_us\ttransactions\n' > "$work/latency.tsv"
one_run() {
    local kind=$1 mode=$2 clients=$3 rep=$4 secs=$5 prefix res
    q -c "TRUNCATE bench_$kind" -c "CHECKPOINT" >/dev/null
    q -c "INSERT INTO bench_$kind (v) VALUES (0)" >/dev/null
    prefix=$logs/run.$kind.$mode.$clients.$rep
    local rate=()
    [ "$mode" = saturated ] || rate=(-R "$mode")
    res=$(pgbench_run -n -M prepared -c "$clients" -j $((clients < 2 ? clients : 2)) "${rate[@]}" \
        -T "$secs" -l --log-prefix="$prefix" -f "$work/insert_$kind.sql")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$clients" "$kind" "$rep" "$secs" "$res" >> "$work/runs.tsv"
    collect_latencies "$prefix" "$mode"$'\t'"$clients"$'\t'"$kind"$'\t'"$rep" "$work/latency.tsv"
}

# --- the modes, the contenders interleaved ---

modes=("saturated 1 $seconds" "saturated 8 $seconds" "300 1 $seconds" "300 8 $seconds"
    "2 1 $low_seconds" "2 8 $low_seconds")
for m in "${modes[@]}"; do
    read -r mode clients secs <<< "$m"
    want "$mode" || continue
    log "$mode, $clients client(s): $(kinds_of "$mode" | tr '\n' ' ')x $reps repetitions of $secs s"
    t0=$(date +%s)
    for ((rep = 1; rep <= reps; rep++)); do
        for kind in $(rotate $((rep - 1)) $(kinds_of "$mode")); do
            one_run "$kind" "$mode" "$clients" "$rep" "$secs"
        done
    done
    echo "load_${mode}_$clients=$(loadavg)" >> "$meta"
    echo "seconds_${mode}_$clients=$(($(date +%s) - t0))" >> "$meta"
done

# --- hostile: two loops of brin_summarize_new_values() by OID ---

if want hostile; then

# A loop as bench_hostile: one psql session reading the same statement for
# ever, each one refused (no BRIN index there) after it has queued its
# lock; ended by its PID.
start_loop() {
    local oid=$1
    yes "SELECT brin_summarize_new_values($oid);" |
        PGOPTIONS="-c client_min_messages=error" "$bindir/psql" -X -q -h "$work" -p "$port" \
            -U bench_hostile -d bench >/dev/null 2>&1 &
    bg_pids+=($!)
}
stop_loops() {
    local pid
    for pid in "${bg_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    bg_pids=()
    # (Each loop's yes ends at its next write, into the closed pipe.)
    q -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'bench_hostile'" >/dev/null
}
targets_edition=$(q -c "SELECT string_agg(c.oid::text, ' ' ORDER BY c.relname) FROM pg_class c
                         WHERE c.relnamespace = '_snowflake'::regnamespace
                           AND c.relname IN ('_snowflake_lock', '_snowflake_id_seq')")
target_own=$(q -c "SELECT 'hostile.own'::regclass::oid")
printf 'loops\trep\tseconds\ttps\ttx\n' > "$work/hostile.tsv"
printf 'loops\trep\tlatency_us\ttransactions\n' > "$work/hostile_latency.tsv"
log "hostile: the edition, 8 clients, alone / beside two brin_summarize_new_values() loops on its relations / on the role's own table x $reps repetitions of $seconds s"
t0=$(date +%s)
for ((rep = 1; rep <= reps; rep++)); do
    for loops in $(rotate $((rep - 1)) none edition own); do
        case $loops in
            edition) for oid in $targets_edition; do start_loop "$oid"; done ;;
            own) start_loop "$target_own"; start_loop "$target_own" ;;
        esac
        q -c "TRUNCATE bench_edition" -c "CHECKPOINT" >/dev/null
        q -c "INSERT INTO bench_edition (v) VALUES (0)" >/dev/null
        prefix=$logs/hostile.$loops.$rep
        res=$(pgbench_run -n -M prepared -c 8 -j 2 -T "$seconds" -l --log-prefix="$prefix" \
            -f "$work/insert_edition.sql")
        [ "$loops" = none ] || stop_loops
        printf '%s\t%s\t%s\t%s\n' "$loops" "$rep" "$seconds" "$res" >> "$work/hostile.tsv"
        collect_latencies "$prefix" "$loops"$'\t'"$rep" "$work/hostile_latency.tsv"
    done
done
echo "load_hostile=$(loadavg)" >> "$meta"
echo "seconds_hostile=$(($(date +%s) - t0))" >> "$meta"
fi

# --- public IDs per call ---

if want publicid; then

log "publicid: the C extension's over $n_pub IDs, the edition's over $n_pub_ed, x $reps repetitions"
t0=$(date +%s)
q -c "CREATE TABLE bench_pub AS
      SELECT id, snowflake_to_public(id, 1) AS pub, snowflake_to_public_base32(id, 'ord_') AS ptext
        FROM snowflake_nextval_batch($n_pub) id" >/dev/null
q -c "VACUUM (FREEZE, ANALYZE) bench_pub" >/dev/null
pub_names=(count_id count_pub count_ptext to_public from_public to_public_base32 from_public_base32
    encrypt_id decrypt_id)
pub_expr() {
    case $1 in
        count_id) echo "id" ;;
        count_pub) echo "pub" ;;
        count_ptext) echo "ptext" ;;
        to_public) echo "SCHEMA.snowflake_to_public(id, 1)" ;;
        from_public) echo "SCHEMA.snowflake_from_public(pub, 1)" ;;
        to_public_base32) echo "SCHEMA.snowflake_to_public_base32(id, 'ord_')" ;;
        from_public_base32) echo "SCHEMA.snowflake_from_public_base32(ptext, 'ord_')" ;;
        encrypt_id) echo "SCHEMA.snowflake_encrypt_id(id, '\\x$pub_key'::bytea)" ;;
        decrypt_id) echo "SCHEMA.snowflake_decrypt_id(pub, '\\x$pub_key'::bytea)" ;;
    esac
}
printf 'who\tname\trep\tseconds\tn\n' > "$work/publicid.tsv"
pub_time() {
    local who=$1 name=$2 schema=public n=$n_pub expr
    [ "$who" = c ] || { schema=sqled; n=$n_pub_ed; }
    expr=$(pub_expr "$name" | sed "s/SCHEMA/$schema/; s/'/''/g")
    q -c "SELECT seconds, n FROM bench_time('SELECT count($expr) FROM (SELECT * FROM bench_pub LIMIT $n) s')"
}
for who in c edition; do
    for name in "${pub_names[@]}"; do pub_time "$who" "$name" >/dev/null; done
done
for ((rep = 1; rep <= reps; rep++)); do
    for who in c edition; do
        for name in $(rotate $((rep - 1)) "${pub_names[@]}"); do
            IFS=$'\t' read -r sec n <<< "$(pub_time "$who" "$name")"
            printf '%s\t%s\t%s\t%s\t%s\n' "$who" "$name" "$rep" "$sec" "$n" >> "$work/publicid.tsv"
        done
    done
done
echo "load_publicid=$(loadavg)" >> "$meta"
echo "seconds_publicid=$(($(date +%s) - t0))" >> "$meta"
fi

# --- one call at 2/s, inside the server: what a move costs ---

if want move; then

# Every call in a transaction of its own, after a pause of half a second
# (the 2/s regime: the backend idle, its CPU caches cold, and the edition's key
# sequence behind the clock, so that every call of the edition moves it),
# timed inside the server around the statement alone: no client, no commit,
# no WAL flush.  The transaction has its XID before the call, as an
# INSERT's has by the end.  Beside the edition and what a bigserial's
# default does (nextval()), the pieces of a move under a lock that no other
# role can take: a subtransaction rolled back (which releases a lock before
# the transaction ends), a row lock in one, and the least such a move can
# be: the row lock, then the state set, a nextval(), the key sequence set
# and the state set back, in one statement in the subtransaction.  Each
# calls' median over the repetitions; the EXECUTE around every call is the
# same for all (the empty call is it and the call of a PL/pgSQL function:
# the calls that are not PL/pgSQL come out below their cost).
q >/dev/null <<'SQL'
CREATE TABLE bench_cold_lock (x int);
INSERT INTO bench_cold_lock VALUES (1);
CREATE SEQUENCE bench_cold_seq;
CREATE SEQUENCE bench_cold_key;
CREATE SEQUENCE bench_cold_state;
CREATE TABLE bench_cold_times (name text, rep int, us float8);
CREATE FUNCTION bench_cold_empty() RETURNS int8 LANGUAGE plpgsql AS $$
BEGIN
    RETURN 1;
END $$;
CREATE FUNCTION bench_cold_subxact() RETURNS int8 LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        RAISE SQLSTATE 'SFREL';
    EXCEPTION WHEN SQLSTATE 'SFREL' THEN
        NULL;
    END;
    RETURN 1;
END $$;
CREATE FUNCTION bench_cold_rowlock() RETURNS int8 LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        PERFORM FROM bench_cold_lock FOR UPDATE;
        RAISE SQLSTATE 'SFREL';
    EXCEPTION WHEN SQLSTATE 'SFREL' THEN
        NULL;
    END;
    RETURN 1;
END $$;
CREATE FUNCTION bench_cold_move() RETURNS int8 LANGUAGE plpgsql AS $$
DECLARE
    k int8;
BEGIN
    BEGIN
        SELECT CASE WHEN setval('bench_cold_key', m.l + 1000) IS NOT NULL
                     AND setval('bench_cold_state', 2) IS NOT NULL THEN m.l + 1000 END
          INTO k
          FROM (SELECT nextval(CASE WHEN setval('bench_cold_state', 2 + 1024) IS NOT NULL
                                    THEN 'bench_cold_key'::regclass END) l
                  FROM (SELECT FROM bench_cold_lock
                         WHERE set_config('lock_timeout', '5000', true) IS NOT NULL FOR UPDATE) f) m;
        RAISE SQLSTATE 'SFREL';
    EXCEPTION WHEN SQLSTATE 'SFREL' THEN
        NULL;
    END;
    RETURN k;
END $$;
CREATE PROCEDURE bench_cold(rep int, names text[], calls text[], n int, pause float8)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    us float8;
    x int8;
    j int;
BEGIN
    FOR i IN 1 .. n LOOP
        FOR jj IN 0 .. array_length(names, 1) - 1 LOOP
            j := (i + jj) % array_length(names, 1) + 1;
            PERFORM pg_sleep(pause);
            COMMIT;
            PERFORM txid_current();
            t0 := clock_timestamp();
            EXECUTE calls[j] INTO x;
            us := extract(epoch FROM clock_timestamp() - t0) * 1e6;
            INSERT INTO bench_cold_times VALUES (names[j], rep, us);
            COMMIT;
        END LOOP;
    END LOOP;
END $$;
SQL
if [ "$has_uuidv7" = t ]; then uuid_call="SELECT (uuidv7() IS NOT NULL)::int::int8"
else uuid_call="SELECT (bench_uuid_v7() IS NOT NULL)::int::int8"; fi
cold_names="ARRAY['empty', 'nextval', 'uuidv7', 'subxact', 'rowlock', 'move', 'edition', 'c']"
cold_calls="ARRAY['SELECT bench_cold_empty()', 'SELECT nextval(''bench_cold_seq'')',
    '$uuid_call', 'SELECT bench_cold_subxact()', 'SELECT bench_cold_rowlock()',
    'SELECT bench_cold_move()', 'SELECT sqled.snowflake_nextval()', 'SELECT snowflake_nextval()']"
cold_n=12
[ "$quick" -eq 0 ] || cold_n=3
log "move: 8 calls, each in its own transaction every 0.5 s, x $cold_n a repetition, x $reps repetitions"
t0=$(date +%s)
for ((rep = 1; rep <= reps; rep++)); do
    # (A session of its own: its first call of each is not counted.)
    q -c "CALL bench_cold(0, $cold_names, $cold_calls, 1, 0)" \
      -c "CALL bench_cold($rep, $cold_names, $cold_calls, $cold_n, 0.5)" >/dev/null
done
q -c "COPY (SELECT name, rep, percentile_cont(0.5) WITHIN GROUP (ORDER BY us), count(*)
              FROM bench_cold_times WHERE rep > 0 GROUP BY 1, 2 ORDER BY 1, 2) TO STDOUT" \
  | { printf 'name\trep\tus\tn\n'; cat; } > "$work/move.tsv"
echo "load_move=$(loadavg)" >> "$meta"
echo "seconds_move=$(($(date +%s) - t0))" >> "$meta"
fi

echo "load_end=$(loadavg)" >> "$meta"
echo "duration=$(($(date +%s) - t_start))" >> "$meta"
perl "$here/edition-report.pl" "$work" > "$work/report.md"
mkdir -p "$(dirname "$output")"
cp "$work/report.md" "$output"
log "report written to $output"
