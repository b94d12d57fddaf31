#!/usr/bin/env bash
# test/bench/run.sh: the snowflake benchmark suite (issue 4).
#
# Starts its own throwaway PostgreSQL server (initdb in a temporary
# directory, Unix socket only), runs every contender side by side on that
# one server, interleaved round-robin over several repetitions, stops and
# removes the server, and writes test/bench/report.md.  Measurements only:
# nothing here passes or fails on a timing.
#
#   test/bench/run.sh            the full suite (about 9 minutes on 2 cores)
#   test/bench/run.sh --quick    a short smoke run (1 to 2 minutes)
#
# Options:
#   --quick               fewer repetitions, smaller N, 1 s pgbench runs
#   --reps N              repetitions of every section (default 5, quick 2)
#   --pgbench-seconds S   duration of one pgbench run (default 3, quick 1)
#   --no-callgrind        skip the instruction counts (valgrind)
#   --output FILE         where to write the report (default test/bench/report.md)
#   --keep                keep the temporary directory (server, logs, raw data)
#
# Needs the extension built and installed into the PostgreSQL that
# PG_CONFIG (default: pg_config on PATH) names: make && make install.
# Run as root, the server runs as the "postgres" operating system user; run
# as anyone else, as that user.  Needs psql, pgbench, perl; valgrind for the
# instruction counts (skipped with a note when missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cmdline="test/bench/run.sh${*:+ $*}"

quick=0
reps=
pgbench_seconds=
callgrind=1
output=$here/report.md
keep=0

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --reps) reps=$2; shift ;;
        --pgbench-seconds) pgbench_seconds=$2; shift ;;
        --no-callgrind) callgrind=0 ;;
        --output) output=$2; shift ;;
        --keep) keep=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run.sh: unknown option \"$1\" (see --help)" >&2; exit 2 ;;
    esac
    shift
done

# Sizes of the runs.  N_* are IDs per measured run.
if [ "$quick" -eq 1 ]; then
    reps=${reps:-2}
    pgbench_seconds=${pgbench_seconds:-1}
    N_FAST=200000          # snowflake, clock_timestamp(), count(1), nextval()
    N_UUID=50000           # gen_random_uuid()
    N_PLPGSQL=20000        # PL/pgSQL Instagram and UUIDv7
    N_MICRO=500000         # generator micro-benchmark, one backend
    N_MICRO2=250000        # generator micro-benchmark, each of two backends
    INSERT_ROWS=100000     # single-statement insert
    MT_TX=50               # transactions per client of the 4-client insert
    CG_N1=10000; CG_N2=30000; CG_SLOW1=2000; CG_SLOW2=6000
    BATCHES="1000 100000"
    RW_SAMPLES=4           # reservation writes timed
else
    reps=${reps:-5}
    pgbench_seconds=${pgbench_seconds:-3}
    N_FAST=2000000
    N_UUID=500000
    N_PLPGSQL=200000
    N_MICRO=5000000
    N_MICRO2=2000000
    INSERT_ROWS=1000000
    MT_TX=500
    CG_N1=100000; CG_N2=300000; CG_SLOW1=10000; CG_SLOW2=30000
    BATCHES="1000 100000 1000000"
    RW_SAMPLES=12
fi
CLIENTS="1 2 4 8"
MT_CLIENTS=4
MT_ROWS_PER_TX=100

PG_CONFIG=${PG_CONFIG:-pg_config}
if ! command -v "$PG_CONFIG" >/dev/null 2>&1; then
    echo "run.sh: pg_config not found; set PG_CONFIG" >&2
    exit 1
fi
bindir=$("$PG_CONFIG" --bindir)
if [ ! -f "$("$PG_CONFIG" --pkglibdir)/snowflake.so" ] ||
   [ ! -f "$("$PG_CONFIG" --sharedir)/extension/snowflake.control" ]; then
    echo "run.sh: the snowflake extension is not installed into $("$PG_CONFIG" --pkglibdir)" >&2
    echo "        build and install it first: make && make install" >&2
    exit 1
fi
for tool in psql pgbench initdb pg_ctl postgres; do
    if [ ! -x "$bindir/$tool" ]; then
        echo "run.sh: $bindir/$tool not found" >&2
        exit 1
    fi
done
if ! command -v perl >/dev/null 2>&1; then
    echo "run.sh: perl is needed to write the report" >&2
    exit 1
fi
if [ "$callgrind" -eq 1 ] && ! command -v valgrind >/dev/null 2>&1; then
    callgrind=0
    cg_skip="valgrind is not installed"
fi

# Root runs the server as "postgres"; anyone else as themselves.
if [ "$(id -u)" -eq 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
        echo "run.sh: running as root needs a \"postgres\" operating system user" >&2
        exit 1
    fi
    as_server=(runuser -u postgres --)
    server_user=postgres
else
    as_server=()
    server_user=$(id -un)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-bench.XXXXXX")
chmod 755 "$work"
[ "$server_user" = "$(id -un)" ] || chown "$server_user" "$work"
data=$work/data
port=$((20000 + RANDOM % 30000))

# Benchmark a snapshot of the installed extension: its library and install
# script are copied now, the server preloads the copy, and the functions are
# created from the script with MODULE_PATHNAME pointing at the copy.  A
# "make install" running elsewhere during the suite (it can take a quarter of
# an hour) then cannot change what is measured half-way.  The server finds
# the copy first on dynamic_library_path, so that the background writer,
# which the postmaster starts from the library named "snowflake", runs the
# same copy.  pg_extension_config_dump() works only inside CREATE EXTENSION
# and only matters to pg_dump: left out.
pkglibdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension
ext_version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$extdir/snowflake.control")
mkdir "$work/lib"
cp "$pkglibdir/snowflake.so" "$work/lib/snowflake.so"
if [ ! -f "$extdir/snowflake--$ext_version.sql" ]; then
    echo "run.sh: $extdir/snowflake--$ext_version.sql not found" >&2
    exit 1
fi
sed -e '/^\\echo /d' -e '/pg_extension_config_dump/d' \
    -e "s|MODULE_PATHNAME|$work/lib/snowflake.so|g" \
    -e 's/@extschema@/public/g' \
    "$extdir/snowflake--$ext_version.sql" > "$work/lib/snowflake.sql"
chmod -R a+rX "$work/lib"
lib_sum() { md5sum "$1" | cut -c1-12; }
lib_md5=$(lib_sum "$work/lib/snowflake.so")
lib_built=$(date -u -r "$pkglibdir/snowflake.so" '+%Y-%m-%d %H:%M UTC')
results=$work/results.tsv
meta=$work/meta.txt
server_started=0
bg_pids=()

log() { printf '==> %s\n' "$*" >&2; }

cleanup() {
    local pid
    for pid in "${bg_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    if [ "$server_started" -eq 1 ]; then
        "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    if [ "$keep" -eq 1 ]; then
        log "kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# psql against the bench database: unaligned, tab-separated, no headers.
q() {
    PGOPTIONS='-c client_min_messages=warning' "$bindir/psql" -X -q -At -F $'\t' -v ON_ERROR_STOP=1 \
        -h "$work" -p "$port" -U postgres -d bench "$@"
}

# One line of raw data: section name param rep, then the measured fields
# (see the header written below).
record() {
    local IFS=$'\t'
    echo "$*" >> "$results"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }

# The elements of a list, rotated left by $1 (round-robin start).
rotate() {
    local k=$1
    shift
    local a=("$@") n=$# i
    for ((i = 0; i < n; i++)); do
        echo "${a[(i + k) % n]}"
    done
}

# ---------------------------------------------------------------------------
# The server

log "throwaway server in $work (port $port)"
"${as_server[@]}" "$bindir/initdb" -D "$data" -A trust -U postgres --no-sync \
    >"$work/initdb.log" 2>&1
cat >> "$data/postgresql.conf" <<CONF
# test/bench/run.sh
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
max_connections = 30
shared_preload_libraries = 'snowflake'
dynamic_library_path = '$work/lib:\$libdir'
snowflake.node_id = 1
shared_buffers = 256MB
# Commits do not wait for the WAL flush: the 100-row transactions measure
# key generation and insertion, not the disk's fsync latency.  fsync and
# full_page_writes stay on.
synchronous_commit = off
# Every measured run starts right after an explicit CHECKPOINT; no timed or
# size-triggered checkpoint falls inside one, and no autovacuum worker
# competes for the 2 cores (every table is dropped after its run).
checkpoint_timeout = 30min
max_wal_size = 8GB
autovacuum = off
CONF
"${as_server[@]}" "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -w start >/dev/null
server_started=1
"$bindir/psql" -X -q -h "$work" -p "$port" -U postgres -d postgres \
    -c "CREATE DATABASE bench"
q -f "$work/lib/snowflake.sql" >/dev/null
q -f "$here/bench.sql" >/dev/null

# ---------------------------------------------------------------------------
# Facts about this run, for the report

{
    echo "date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "command=$cmdline"
    echo "quick=$quick"
    echo "reps=$reps"
    echo "pgbench_seconds=$pgbench_seconds"
    echo "nproc=$(nproc)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "ram=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel=$(uname -sr)"
    echo "pgversion=$(q -c 'SELECT version()')"
    echo "settings=$(q -c "SELECT string_agg(name || ' = ' || setting || coalesce(unit, ''), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'synchronous_commit', 'fsync', 'autovacuum', 'max_wal_size', 'checkpoint_timeout', 'snowflake.max_drift_ms', 'snowflake.max_wait_ms', 'snowflake.node_id', 'jit')")"
    echo "layout=$(q -c "SELECT timestamp_bits || '/' || node_bits || '/' || sequence_bits FROM snowflake_stats")"
    echo "git=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" status --porcelain -- src Makefile snowflake.control 'snowflake--*.sql' 2>/dev/null | grep -q . && echo ' (src/ has uncommitted changes)')"
    echo "library=snowflake $ext_version, snowflake.so installed $lib_built (md5 $lib_md5...)"
    echo "n_fast=$N_FAST"
    echo "n_uuid=$N_UUID"
    echo "n_plpgsql=$N_PLPGSQL"
    echo "n_micro=$N_MICRO"
    echo "n_micro2=$N_MICRO2"
    echo "insert_rows=$INSERT_ROWS"
    echo "mt_clients=$MT_CLIENTS"
    echo "mt_tx=$MT_TX"
    echo "mt_rows_per_tx=$MT_ROWS_PER_TX"
    echo "batches=$BATCHES"
    echo "clients=$CLIENTS"
    echo "load_start=$(loadavg)"
} > "$meta"

printf 'section\tname\tparam\trep\tseconds\tcpu_seconds\trunq_seconds\tn\ttps\tlead_ms\tborrowed_ms\twaits\twait_ms\treservation_writes\tidx_bytes\ttbl_bytes\n' > "$results"
suite_t0=$(date +%s)

# ---------------------------------------------------------------------------
# 1. Bulk IDs/s in one backend

# The statement of a bulk contender and its N.
bulk_call() {
    local name=$1
    case "$name" in
        count1) echo "bench_run('SELECT count(1) FROM generate_series(1, $N_FAST)')" ;;
        clock) echo "bench_run('SELECT count(clock_timestamp()) FROM generate_series(1, $N_FAST)')" ;;
        snowflake) echo "bench_run('SELECT count(snowflake_nextval()) FROM generate_series(1, $N_FAST)')" ;;
        nextval_c1) echo "bench_run('SELECT count(nextval(''bench_seq_c1'')) FROM generate_series(1, $N_FAST)')" ;;
        nextval_c32) echo "bench_run('SELECT count(nextval(''bench_seq_c32'')) FROM generate_series(1, $N_FAST)')" ;;
        uuid4) echo "bench_run('SELECT count(gen_random_uuid()) FROM generate_series(1, $N_UUID)')" ;;
        instagram) echo "bench_run('SELECT count(bench_instagram_id()) FROM generate_series(1, $N_PLPGSQL)')" ;;
        uuid7) echo "bench_run('SELECT count(bench_uuid_v7()) FROM generate_series(1, $N_PLPGSQL)')" ;;
        batch_from_*) local b=${name#batch_from_}; echo "bench_run_batch($b, $((N_FAST / b)), 'from')" ;;
        batch_select_*) local b=${name#batch_select_}; echo "bench_run_batch($b, $((N_FAST / b)), 'select')" ;;
    esac
}

bulk_names=(count1 clock snowflake)
for b in $BATCHES; do
    bulk_names+=("batch_from_$b" "batch_select_$b")
done
bulk_names+=(nextval_c1 nextval_c32 uuid4 instagram uuid7)

log "bulk: ${#bulk_names[@]} contenders x $reps repetitions"
echo "load_bulk=$(loadavg)" >> "$meta"
# Warm up: load the library, the plans and the caches once, unmeasured.
for name in "${bulk_names[@]}"; do
    q -c "SELECT * FROM $(bulk_call "$name")" >/dev/null
done
for ((rep = 1; rep <= reps; rep++)); do
    for name in $(rotate $((rep - 1)) "${bulk_names[@]}"); do
        row=$(q -c "SELECT * FROM $(bulk_call "$name")")
        IFS=$'\t' read -r sec cpu runq n lead borrowed waits waitms writes <<< "$row"
        record bulk "$name" - "$rep" "$sec" "$cpu" "$runq" "$n" - \
            "$lead" "$borrowed" "$waits" "$waitms" "$writes" - -
    done
done

# ---------------------------------------------------------------------------
# 2. Concurrent SELECT EXPR with pgbench

declare -A pgb_sql=(
    [select1]='SELECT 1;'
    [snowflake]='SELECT snowflake_nextval();'
    [nextval_c1]="SELECT nextval('bench_seq_c1');"
    [uuid4]='SELECT gen_random_uuid();'
)
pgb_names=(select1 snowflake nextval_c1 uuid4)
for name in "${pgb_names[@]}"; do
    echo "${pgb_sql[$name]}" > "$work/pgbench_$name.sql"
done

# CPU seconds of the server's exited backends: the postmaster's reaped
# children (cutime + cstime), read before and after a pgbench run.
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
server_cpu() {
    local pm
    pm=$(head -n 1 "$data/postmaster.pid")
    awk -v hz="$clk_tck" '{ printf "%.2f", ($16 + $17) / hz }' "/proc/$pm/stat" 2>/dev/null || echo -
}

# Run pgbench; print "tps<TAB>transactions<TAB>pgbench's own CPU seconds".
pgbench_run() {
    local out
    out=$(perl -e 'system(@ARGV) == 0 or exit 1; my @t = times;
                   printf "client cpu = %.2f\n", $t[2] + $t[3];' -- \
          "$bindir/pgbench" -h "$work" -p "$port" -U postgres "$@" bench 2>&1) ||
        { echo "$out" >&2; return 1; }
    local tps tx cpu
    tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' <<< "$out")
    tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<< "$out")
    cpu=$(sed -n 's/^client cpu = //p' <<< "$out")
    printf '%s\t%s\t%s\n' "$tps" "$tx" "$cpu"
}

# CPU seconds between two server_cpu readings plus the client's, or "-".
cpu_sum() {
    awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN {
        if (a == "-" || b == "-") print "-"; else printf "%.2f", b - a + c }'
}

sample_seconds=$(awk -v t="$pgbench_seconds" 'BEGIN { printf "%.2f", t - 0.5 }')
printf 'name\tclients\trep\twhat\tsamples\n' > "$work/waits.tsv"
log "pgbench: ${#pgb_names[@]} statements x clients {$CLIENTS} x $reps repetitions, ${pgbench_seconds}s each"
echo "load_pgbench=$(loadavg)" >> "$meta"
for ((rep = 1; rep <= reps; rep++)); do
    for c in $CLIENTS; do
        j=$((c < 2 ? c : 2))
        for name in $(rotate $(((rep - 1 + c) % ${#pgb_names[@]})) "${pgb_names[@]}"); do
            q -c "SELECT bench_settle()" >/dev/null
            cpu0=$(server_cpu)
            # A sampler of the backends' wait events runs beside pgbench.
            q -c "SELECT * FROM bench_sample_waits(0.3, $sample_seconds)" > "$work/waits.out" &
            sampler=$!
            bg_pids=("$sampler")
            res=$(pgbench_run -n -M prepared -T "$pgbench_seconds" -c "$c" -j "$j" \
                -f "$work/pgbench_$name.sql")
            wait "$sampler"
            bg_pids=()
            while IFS=$'\t' read -r what cnt; do
                printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$rep" "$what" "$cnt" >> "$work/waits.tsv"
            done < "$work/waits.out"
            IFS=$'\t' read -r tps tx ccpu <<< "$res"
            row=$(q -c "SELECT * FROM bench_counters()")
            IFS=$'\t' read -r lead borrowed waits waitms writes issued <<< "$row"
            scpu=$(cpu_sum "$cpu0" "$(server_cpu)" 0)
            record pgbench "$name" "$c" "$rep" "$pgbench_seconds" "$(cpu_sum 0 "$scpu" "$ccpu")" - "$tx" "$tps" \
                "$lead" "$borrowed" "$waits" "$waitms" "$writes" - -
        done
    done
done

# ---------------------------------------------------------------------------
# 3. Inserts per key kind

key_def() {
    case "$1" in
        snowflake) echo "id bigint PRIMARY KEY DEFAULT snowflake_nextval()" ;;
        bigserial) echo "id bigserial PRIMARY KEY" ;;
        uuid4) echo "id uuid PRIMARY KEY DEFAULT gen_random_uuid()" ;;
        instagram) echo "id bigint PRIMARY KEY DEFAULT bench_instagram_id()" ;;
        uuid7) echo "id uuid PRIMARY KEY DEFAULT bench_uuid_v7()" ;;
    esac
}
insert_kinds=(snowflake bigserial uuid4 instagram uuid7)
echo "INSERT INTO bench_t(payload) SELECT g FROM generate_series(1, $MT_ROWS_PER_TX) g;" \
    > "$work/pgbench_insert.sql"

new_table() {
    q -c "DROP TABLE IF EXISTS bench_t" \
      -c "CREATE TABLE bench_t ($(key_def "$1"), payload integer NOT NULL)" \
      -c "CHECKPOINT" >/dev/null
}

sizes() {
    q -c "SELECT pg_relation_size('bench_t_pkey'), pg_relation_size('bench_t'), count(*) FROM bench_t"
}

log "inserts: ${#insert_kinds[@]} key kinds x $reps repetitions ($INSERT_ROWS rows in one statement; $((MT_CLIENTS * MT_TX * MT_ROWS_PER_TX)) rows in $MT_ROWS_PER_TX-row transactions from $MT_CLIENTS clients)"
echo "load_insert=$(loadavg)" >> "$meta"
for ((rep = 1; rep <= reps; rep++)); do
    for kind in $(rotate $((rep - 1)) "${insert_kinds[@]}"); do
        new_table "$kind"
        if row=$(q -c "SELECT * FROM bench_run('INSERT INTO bench_t(payload) SELECT g FROM generate_series(1, $INSERT_ROWS) g')" 2>"$work/insert.err"); then
            IFS=$'\t' read -r sec cpu runq n lead borrowed waits waitms writes <<< "$row"
            IFS=$'\t' read -r idx tbl cnt <<< "$(sizes)"
            record insert "$kind" "$INSERT_ROWS" "$rep" "$sec" "$cpu" "$runq" "$n" - \
                "$lead" "$borrowed" "$waits" "$waitms" "$writes" "$idx" "$tbl"
        else
            log "insert $kind failed: $(head -n 1 "$work/insert.err")"
            record insert_error "$kind" "$INSERT_ROWS" "$rep" "$(head -n 1 "$work/insert.err" | tr '\t' ' ')" \
                - - - - - - - - - - -
        fi
    done
    for kind in $(rotate $((rep - 1)) "${insert_kinds[@]}"); do
        new_table "$kind"
        q -c "SELECT bench_settle()" >/dev/null
        cpu0=$(server_cpu)
        if res=$(pgbench_run -n -M prepared -c "$MT_CLIENTS" -j 2 -t "$MT_TX" \
                -f "$work/pgbench_insert.sql" 2>"$work/insert.err"); then
            IFS=$'\t' read -r tps tx ccpu <<< "$res"
            row=$(q -c "SELECT * FROM bench_counters()")
            IFS=$'\t' read -r lead borrowed waits waitms writes issued <<< "$row"
            scpu=$(cpu_sum "$cpu0" "$(server_cpu)" 0)
            IFS=$'\t' read -r idx tbl cnt <<< "$(sizes)"
            sec=$(awk -v t="$tx" -v r="$tps" 'BEGIN { printf "%.6f", t / r }')
            record insert_mt "$kind" "$cnt" "$rep" "$sec" "$scpu" - "$cnt" "$tps" \
                "$lead" "$borrowed" "$waits" "$waitms" "$writes" "$idx" "$tbl"
        else
            log "4-client insert $kind failed: $(grep -m 1 ERROR "$work/insert.err" || true)"
            record insert_error "$kind" multi "$rep" "$(grep -m 1 ERROR "$work/insert.err" | tr '\t' ' ')" \
                - - - - - - - - - - -
        fi
    done
done
q -c "DROP TABLE IF EXISTS bench_t" >/dev/null

# ---------------------------------------------------------------------------
# 4. Micro-benchmark of the generator: one backend, then two contending

micro_sql() {
    case "$1" in
        count1) echo "SELECT count(1) FROM generate_series(1, $2)" ;;
        clock) echo "SELECT count(clock_timestamp()) FROM generate_series(1, $2)" ;;
        snowflake) echo "SELECT count(snowflake_nextval()) FROM generate_series(1, $2)" ;;
    esac
}
micro_names=(count1 clock snowflake)

log "micro-benchmark: one backend ($N_MICRO IDs) and two contending ($N_MICRO2 IDs each)"
echo "load_micro=$(loadavg)" >> "$meta"
for ((rep = 1; rep <= reps; rep++)); do
    for name in $(rotate $((rep - 1)) "${micro_names[@]}"); do
        row=$(q -c "SELECT * FROM bench_run('$(micro_sql "$name" "$N_MICRO")')")
        IFS=$'\t' read -r sec cpu runq n lead borrowed waits waitms writes <<< "$row"
        record micro1 "$name" 1 "$rep" "$sec" "$cpu" "$runq" "$n" - \
            "$lead" "$borrowed" "$waits" "$waitms" "$writes" - -
    done
    for name in $(rotate $((rep - 1)) "${micro_names[@]}"); do
        q -c "SELECT bench_settle()" >/dev/null
        sql=$(micro_sql "$name" "$N_MICRO2")
        bg_pids=()
        for b in 1 2; do
            q -c "SELECT * FROM bench_time('$sql')" > "$work/micro2.$b" &
            bg_pids+=($!)
        done
        for pid in "${bg_pids[@]}"; do
            wait "$pid"
        done
        bg_pids=()
        row=$(q -c "SELECT * FROM bench_counters()")
        IFS=$'\t' read -r lead borrowed waits waitms writes issued <<< "$row"
        for b in 1 2; do
            IFS=$'\t' read -r sec cpu runq n < "$work/micro2.$b"
            record micro2 "$name" "$b" "$rep" "$sec" "$cpu" "$runq" "$n" - \
                "$lead" "$borrowed" "$waits" "$waitms" "$writes" - -
        done
    done
done
# The cost of one reservation write (state file write, fsync, rename, fsync
# of the directory), as the latency of the call that has to make it: the
# background writer is switched off meanwhile, so that the call after a
# pause finds the reservation used up and writes it itself (the fallback
# path every caller took before the writer).
q -c "ALTER SYSTEM SET snowflake.background_writer = off" -c "SELECT pg_reload_conf()" >/dev/null
q -c "SELECT bench_settle()" >/dev/null
rep=0
q -c "SELECT * FROM bench_reservation_write($RW_SAMPLES)" > "$work/reswrite.out"
row=$(q -c "SELECT * FROM bench_counters()")
IFS=$'\t' read -r lead borrowed waits waitms writes issued <<< "$row"
while IFS=$'\t' read -r first next; do
    rep=$((rep + 1))
    record reswrite snowflake - "$rep" "$first" "$next" - 1 - \
        "$lead" "$borrowed" "$waits" "$waitms" "$writes" - -
done < "$work/reswrite.out"
q -c "ALTER SYSTEM RESET snowflake.background_writer" -c "SELECT pg_reload_conf()" >/dev/null

echo "load_end=$(loadavg)" >> "$meta"
if [ "$(lib_sum "$pkglibdir/snowflake.so")" != "$lib_md5" ]; then
    echo "library_changed=$(date -u -r "$pkglibdir/snowflake.so" '+%Y-%m-%d %H:%M UTC')" >> "$meta"
fi

"${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
server_started=0

# ---------------------------------------------------------------------------
# 5. Instructions per ID: callgrind on a single-user backend
#
# perf's hardware counters are often unavailable in virtual machines, and
# callgrind's counts are deterministic.  One single-user backend on the same
# data directory runs every statement at two sizes; callgrind dumps its
# counters after each statement (--dump-after=PortalDrop: once per statement
# in single-user mode, after the executor's clean-up, which belongs to the
# statement), so the instructions per ID of a contender are
# (Ir at N2 - Ir at N1) / (N2 - N1): parsing, planning and start-up cancel.

cg_queries=()
cg_add() {                    # name, N1, N2, SQL with %N%
    cg_queries+=("$1|$2|$3|$4")
}
cg_add count1 "$CG_N1" "$CG_N2" "SELECT count(1) FROM generate_series(1, %N%)"
cg_add clock "$CG_N1" "$CG_N2" "SELECT count(clock_timestamp()) FROM generate_series(1, %N%)"
cg_add snowflake "$CG_N1" "$CG_N2" "SELECT count(snowflake_nextval()) FROM generate_series(1, %N%)"
cg_add batch_from "$CG_N1" "$CG_N2" "SELECT count(*) FROM snowflake_nextval_batch(%N%)"
cg_add batch_select "$CG_N1" "$CG_N2" "SELECT count(*) FROM (SELECT snowflake_nextval_batch(%N%)) s"
cg_add nextval_c1 "$CG_N1" "$CG_N2" "SELECT count(nextval('bench_seq_c1')) FROM generate_series(1, %N%)"
cg_add nextval_c32 "$CG_N1" "$CG_N2" "SELECT count(nextval('bench_seq_c32')) FROM generate_series(1, %N%)"
cg_add uuid4 "$CG_SLOW1" "$CG_SLOW2" "SELECT count(gen_random_uuid()) FROM generate_series(1, %N%)"
cg_add instagram "$CG_SLOW1" "$CG_SLOW2" "SELECT count(bench_instagram_id()) FROM generate_series(1, %N%)"
cg_add uuid7 "$CG_SLOW1" "$CG_SLOW2" "SELECT count(bench_uuid_v7()) FROM generate_series(1, %N%)"

if [ "$callgrind" -eq 1 ]; then
    log "callgrind: instructions per ID in a single-user backend"
    cg=$work/callgrind
    mkdir -p "$cg"
    [ "$server_user" = "$(id -un)" ] || chown "$server_user" "$cg"
    : > "$cg/queries.sql"
    : > "$cg/index.tsv"
    k=0
    # Warm-up (caches, the library), then every contender at N1, then at N2.
    for pass in warm n1 n2; do
        for entry in "${cg_queries[@]}"; do
            IFS='|' read -r name n1 n2 sql <<< "$entry"
            case $pass in
                warm) n=1000 ;;
                n1) n=$n1 ;;
                n2) n=$n2 ;;
            esac
            k=$((k + 1))
            echo "${sql//%N%/$n}" >> "$cg/queries.sql"
            printf '%s\t%s\t%s\t%s\n' "$k" "$name" "$pass" "$n" >> "$cg/index.tsv"
        done
    done
    if "${as_server[@]}" valgrind --tool=callgrind --dump-after=PortalDrop \
            --callgrind-out-file="$cg/callgrind.out" \
            "$bindir/postgres" --single -D "$data" -c shared_buffers=64MB bench \
            < "$cg/queries.sql" > "$cg/single.log" 2>&1; then
        ndumps=$(ls "$cg"/callgrind.out.* 2>/dev/null | wc -l)
        if [ "$ndumps" -ne "$k" ]; then
            callgrind=0
            cg_skip="callgrind wrote $ndumps dumps for $k statements (see --keep)"
        fi
        # The single-user backend prompts "backend> " before each statement:
        # the k-th chunk of its output belongs to the k-th statement.
        perl -0777 -ne '@c = split /backend> /;
            for $k (1 .. $#c) { print "$k\t$1\n" if $c[$k] =~ /\bERROR:\s+(.*)/ }' \
            "$cg/single.log" > "$cg/failed.tsv"
    else
        callgrind=0
        cg_skip="valgrind failed: $(tail -n 1 "$cg/single.log")"
    fi
fi

# "instructions<TAB>function" for every function of a callgrind dump,
# exclusive (no) or inclusive (yes).  Code inlined from another file is
# listed by callgrind under the function it was inlined into: summed there.
# Functions without a symbol keep their address and object.
cg_functions() {
    # (From a neutral directory: run from inside the source tree, callgrind_annotate
    # lists some functions twice, under absolute and relative file names.)
    (cd "$work" && callgrind_annotate --auto=no --threshold=100 --inclusive="$1" "$2" 2>/dev/null) | perl -ne '
        next unless /^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*?)\s*$/;
        my ($ir, $loc) = ($1, $2);
        $ir =~ tr/,//d;
        $total = $ir if $loc =~ /PROGRAM TOTALS/;
        next if $loc =~ /PROGRAM TOTALS/;
        # Frames active through the whole dump (main and the like) are
        # listed with the total as their own cost: not real.
        next if $ir == $total;
        my $obj = "";
        $obj = $1 if $loc =~ s/\s+\[(.*)\]$//;
        $obj =~ s{.*/}{};
        my ($fn) = $loc =~ /([^:]+)$/;
        $fn .= " ($obj)" if $fn =~ /^0x/ && $obj ne "";
        $sum{$fn} += $ir;
        END { print "$sum{$_}\t$_\n" for sort { $sum{$b} <=> $sum{$a} } keys %sum }'
}

if [ "$callgrind" -eq 1 ]; then
    # Per dump: the total, and each function's exclusive count.
    printf 'name\tpass\tn\tfunction\tir\n' > "$work/callgrind.tsv"
    while IFS=$'\t' read -r idx name pass n; do
        [ "$pass" = warm ] && continue
        if err=$(awk -F'\t' -v k="$idx" '$1 == k { print $2; found = 1 } END { exit !found }' "$cg/failed.tsv"); then
            echo "callgrind_failed_$name=$err" >> "$meta"
            continue
        fi
        f=$cg/callgrind.out.$idx
        total=$(sed -n 's/^summary: *//p' "$f" | head -n 1)
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$pass" "$n" TOTAL "$total" >> "$work/callgrind.tsv"
        cg_functions no "$f" | while IFS=$'\t' read -r ir fn; do
            printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$pass" "$n" "$fn" "$ir"
        done >> "$work/callgrind.tsv"
        cg_functions yes "$f" | while IFS=$'\t' read -r ir fn; do
            case "$fn" in
                snowflake*|sf_*|RecoveryInProgress|clock_gettime*|GetCurrentTimestamp|gettimeofday*)
                    printf '%s\t%s\t%s\tincl:%s\t%s\n' "$name" "$pass" "$n" "$fn" "$ir" ;;
            esac
        done >> "$work/callgrind.tsv"
    done < "$cg/index.tsv"
    echo "callgrind=1" >> "$meta"
    echo "callgrind_version=$(valgrind --version)" >> "$meta"
else
    echo "callgrind=0" >> "$meta"
    echo "callgrind_skip=${cg_skip:-skipped with --no-callgrind}" >> "$meta"
fi

echo "suite_seconds=$(($(date +%s) - suite_t0))" >> "$meta"

# ---------------------------------------------------------------------------
# The report

perl "$here/report.pl" "$meta" "$results" "$work/callgrind.tsv" "$work/waits.tsv" > "$output.tmp"
mv "$output.tmp" "$output"
log "report written to ${output#"$root"/}"
