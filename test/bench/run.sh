#!/usr/bin/env bash
# test/bench/run.sh: the snowflake benchmark suite (issues 4, 8 and 13).
#
# Starts its own throwaway PostgreSQL server (initdb in a temporary
# directory, Unix socket only), runs every contender side by side on that
# one server, interleaved round-robin over several repetitions, stops and
# removes the server, and writes docs/performance/report.md.  Measurements only:
# nothing here passes or fails on a timing.
#
#   test/bench/run.sh            every section (about 17 minutes on 2 cores)
#   test/bench/run.sh --only new the sections of issues 8 and 13 (about 8;
#                                10 on PostgreSQL 18, which has uuidv7())
#   test/bench/run.sh --quick    a short smoke run (2 to 3 minutes)
#   test/bench/chroot-run.sh 18  the same on PostgreSQL 18, in its chroot
#
# Sections (--only takes a comma-separated list of them):
#   bulk        IDs per second in one backend, count(EXPR); the SQL edition
#               (sql-edition/, generated into schema sqled) among them
#   decode      decoding a table of keys, one backend: the scalar decoders
#               beside snowflake_decode() in the SELECT list and in FROM
#   textform    the text forms of IDs, one backend: each encoder against
#               id::text (int8out), each decoder against text::bigint
#               (int8in), the C extension's and the SQL edition's; with
#               callgrind, instructions per call too
#   publicid    public IDs (issue 48), one backend: FF1 with a key given
#               as an argument and with the configured keys, both ways,
#               and the public text, against id::text (int8out) and
#               gen_random_uuid(); the SQL edition's over fewer rows; with
#               callgrind, instructions per call of the C functions too
#   pgbench     SELECT EXPR at 1 to 8 clients
#   inserts     1M-row INSERT ... SELECT, and 100-row transactions
#   micro       the generator alone, one and two backends; reservation write
#   callgrind   instructions per ID (valgrind), of the bulk section's
#               contenders and, when the decode section runs, per row of
#               its own (with --only decode,callgrind, only those)
#   everyday    single-row inserts at 2 and 50 a second, one client, real
#               commits: latency against bigserial, gen_random_uuid(), the
#               SQL edition (and uuidv7()), on this machine's disk and with
#               every fsync slowed down
#   bulkload    loading 1M rows: COPY and INSERT ... SELECT, and the ways
#               around COPY's lost batching for a volatile key default
#   concurrent  single-row insert transactions at 1, 2, 4, 8 clients
#   latency     SELECT snowflake_nextval() at 8 clients: p50, p99, p99.9
#               against SELECT 1, on this disk and with slow fsyncs
#   new         = everyday,bulkload,concurrent,latency
#
# Options:
#   --only LIST           run only these sections (default: all of them)
#   --quick               fewer repetitions, smaller N, shorter runs
#   --reps N              repetitions of every section (default 5 for the
#                         first five sections, 3 for the new ones; quick 2)
#   --pgbench-seconds S   duration of one pgbench run of the pgbench,
#                         concurrent and latency sections (default 3, quick 1)
#   --everyday-seconds S  duration of one everyday run at 2/s (default 15,
#                         quick 4); runs at 50/s last a third of it
#   --bulk-rows N         rows of one bulk load (default 1000000, quick 100000)
#   --fsync-delay MS      the slow disk: every fsync sleeps MS ms first
#                         (default 20)
#   --no-callgrind        skip the instruction counts (valgrind)
#   --set NAME=VALUE      one more setting of the throwaway server (repeat
#                         the option for more), e.g. to measure an older
#                         build with one of its settings; the report lists
#                         them
#   --output FILE         where to write the report (default docs/performance/report.md);
#                         its plots and their data go beside it, FILE less
#                         ".md" followed by -bulk, -everyday and -decode,
#                         .svg and .tsv
#   --keep                keep the temporary directory (server, logs, raw data)
#
# Needs the extension built and installed into the PostgreSQL that
# PG_CONFIG (default: pg_config on PATH) names: make && make install.
# Run as root, the server runs as the "postgres" operating system user; run
# as anyone else, as that user.  Needs psql, pgbench, perl, gnuplot (Debian's
# gnuplot-nox, installed through test/lib.sh when missing); a C compiler
# for the slow-fsync runs (test/faultshim.c, an LD_PRELOAD shim); valgrind
# for the instruction counts (skipped with a note when missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)
cmdline="test/bench/run.sh${*:+ $*}"
[ -n "${SNOWFLAKE_BENCH_CMDLINE:-}" ] && cmdline=$SNOWFLAKE_BENCH_CMDLINE

quick=0
reps=
pgbench_seconds=
everyday_seconds=
bulk_rows=
fsync_delay=20
callgrind=1
only=
extra_settings=()
output=$root/docs/performance/report.md
keep=0

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
        --only) only=$2; shift ;;
        --quick) quick=1 ;;
        --reps) reps=$2; shift ;;
        --pgbench-seconds) pgbench_seconds=$2; shift ;;
        --everyday-seconds) everyday_seconds=$2; shift ;;
        --bulk-rows) bulk_rows=$2; shift ;;
        --fsync-delay) fsync_delay=$2; shift ;;
        --no-callgrind) callgrind=0 ;;
        --set)
            [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_.]*=.+$ ]] ||
                { echo "run.sh: --set takes NAME=VALUE, not \"$2\"" >&2; exit 2; }
            extra_settings+=("$2"); shift ;;
        --output) output=$2; shift ;;
        --keep) keep=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run.sh: unknown option \"$1\" (see --help)" >&2; exit 2 ;;
    esac
    shift
done

for v in "$reps" "$pgbench_seconds" "$everyday_seconds" "$bulk_rows" "$fsync_delay"; do
    case "$v" in
        ''|*[!0-9]*) [ -z "$v" ] || { echo "run.sh: \"$v\" is not a positive integer" >&2; exit 2; } ;;
        0) echo "run.sh: counts and durations must be positive" >&2; exit 2 ;;
    esac
done

# The sections to run.
old_sections="bulk decode textform publicid pgbench inserts micro callgrind"
new_sections="everyday bulkload concurrent latency"
if [ -z "$only" ]; then
    sections="$old_sections $new_sections"
else
    sections=
    for s in ${only//,/ }; do
        case " $old_sections $new_sections new " in
            *" $s "*) ;;
            *) echo "run.sh: unknown section \"$s\" (see --help)" >&2; exit 2 ;;
        esac
        [ "$s" = new ] && s=$new_sections
        sections="$sections $s"
    done
fi
want() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }
[ "$callgrind" -eq 1 ] || sections=$(echo " $sections " | sed 's/ callgrind / /g')
want callgrind || callgrind=0
# In the order they run.
ran=
for s in $old_sections $new_sections; do
    want "$s" && ran="$ran${ran:+,}$s"
done
if [ -z "$ran" ]; then
    echo "run.sh: no section left to run" >&2
    exit 2
fi

# Sizes of the runs.  N_* are IDs per measured run.
if [ "$quick" -eq 1 ]; then
    reps_old=${reps:-2}
    reps_new=${reps:-2}
    pgbench_seconds=${pgbench_seconds:-1}
    everyday_seconds=${everyday_seconds:-4}
    bulk_rows=${bulk_rows:-100000}
    N_FAST=200000          # snowflake, clock_timestamp(), count(1), nextval()
    N_UUID=50000           # gen_random_uuid(), uuidv7()
    N_PLPGSQL=20000        # PL/pgSQL Instagram and UUIDv7
    N_MICRO=500000         # generator micro-benchmark, one backend
    N_TEXT=200000          # keys of the text-form table
    N_PUB=200000           # keys of the public-ID table
    N_PUB_ED=500           # of them, what the SQL edition's public IDs read
    N_MICRO2=250000        # generator micro-benchmark, each of two backends
    INSERT_ROWS=100000     # single-statement insert
    MT_TX=50               # transactions per client of the 4-client insert
    CG_N1=10000; CG_N2=30000; CG_SLOW1=2000; CG_SLOW2=6000
    BATCHES="1000 100000"
    RW_SAMPLES=4           # reservation writes timed
else
    reps_old=${reps:-5}
    reps_new=${reps:-3}
    pgbench_seconds=${pgbench_seconds:-3}
    everyday_seconds=${everyday_seconds:-15}
    bulk_rows=${bulk_rows:-1000000}
    N_FAST=2000000
    N_UUID=500000
    N_PLPGSQL=200000
    N_MICRO=5000000
    N_TEXT=1000000
    N_PUB=1000000
    N_PUB_ED=5000
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
# Everyday rates (inserts per second, one client) and the length of a run
# at each: a run at 50/s needs fewer seconds for as many samples.
EV_RATES="2 50"
ev_seconds() {
    if [ "$1" -le 2 ]; then
        echo "$everyday_seconds"
    else
        echo $(((everyday_seconds + 2) / 3))
    fi
}
LAT_CLIENTS=8
# The largest batch snowflake_nextval_batch() accepts.
SF_BATCH_MAX=1000000

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
# The plots of the report (plots.gp): gnuplot, installed if missing.
plots="bulk everyday decode"
if ! command -v gnuplot >/dev/null 2>&1 && ! sf_apt_install gnuplot-nox; then
    echo "run.sh: gnuplot is needed to draw the report's plots (Debian: gnuplot-nox)" >&2
    exit 1
fi
slow_disk=0
if want everyday || want latency; then
    slow_disk=1
    if ! command -v cc >/dev/null 2>&1; then
        echo "run.sh: the everyday and latency sections need a C compiler (cc) for test/faultshim.c" >&2
        exit 1
    fi
fi
if want bulkload && ! [ -f "$("$PG_CONFIG" --sharedir)/extension/file_fdw.control" ]; then
    echo "run.sh: the bulkload section needs file_fdw (PostgreSQL's contrib)" >&2
    exit 1
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
# The scripts CREATE EXTENSION runs for that version: 1.0's install script,
# then the update scripts from one version to the next (there is no install
# script of a later version, see snowflake--1.0--1.1.sql).
scripts=("$extdir/snowflake--1.0.sql")
v=1.0
while [ "$v" != "$ext_version" ]; do
    next=("$extdir/snowflake--$v--"*.sql)
    if [ ! -f "${next[0]}" ]; then
        echo "run.sh: no update script from $v towards $ext_version in $extdir" >&2
        exit 1
    fi
    scripts+=("${next[0]}")
    v=${next[0]##*--}
    v=${v%.sql}
done
sed -e '/^\\echo /d' -e '/pg_extension_config_dump/d' \
    -e "s|MODULE_PATHNAME|$work/lib/snowflake.so|g" \
    -e 's/@extschema@/public/g' \
    "${scripts[@]}" > "$work/lib/snowflake.sql"
chmod -R a+rX "$work/lib"
lib_sum() { md5sum "$1" | cut -c1-12; }
lib_md5=$(lib_sum "$work/lib/snowflake.so")
lib_built=$(date -u -r "$pkglibdir/snowflake.so" '+%Y-%m-%d %H:%M UTC')
results=$work/results.tsv
meta=$work/meta.txt
logs=$work/logs
mkdir "$logs"
server_started=0
server_pid=
bg_pids=()

log() { printf '==> %s\n' "$*" >&2; }

# The slow disk: test/faultshim.c preloaded into the server, its control
# file saying how long every fsync()/fdatasync() sleeps.
shim=$work/faultshim.so
fault_control=$work/fault_control
if [ "$slow_disk" -eq 1 ]; then
    if ! cc -shared -fPIC -O2 -o "$shim" "$root/test/faultshim.c" -ldl 2>"$work/cc.log"; then
        cat "$work/cc.log" >&2
        echo "run.sh: could not compile test/faultshim.c" >&2
        exit 1
    fi
    : > "$fault_control"
    chmod a+r "$shim" "$fault_control"
fi

# Start the server; with "slow", under the shim with every fsync slowed.
start_server() {
    local env=()
    if [ "${1:-}" = slow ]; then
        echo "anyfsync sleep=$fsync_delay" > "$fault_control.new"
        mv "$fault_control.new" "$fault_control"
        env=(env LD_PRELOAD="$shim" SF_FAULT_CONTROL="$fault_control")
    fi
    "${as_server[@]}" "${env[@]}" "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -t 120 -w start >/dev/null
    server_started=1
    server_pid=$(head -n 1 "$data/postmaster.pid")
    if [ "${1:-}" = slow ] && ! grep -q faultshim "/proc/$server_pid/maps"; then
        echo "run.sh: the server did not load the fault shim" >&2
        exit 1
    fi
}

# Stop it (fast), the shim's slowness lifted first so that the shutdown
# checkpoint is not slowed down.
stop_server() {
    [ "$slow_disk" -eq 0 ] || : > "$fault_control"
    "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m fast -t 120 -w stop >/dev/null
    server_started=0
    server_pid=
}

cleanup() {
    local pid i
    for pid in "${bg_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    if [ "$server_started" -eq 1 ]; then
        [ "$slow_disk" -eq 0 ] || : > "$fault_control"
        "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m immediate -t 30 -w stop >/dev/null 2>&1 || true
        # pg_ctl could not stop it: its postmaster, by PID.
        [ -z "$server_pid" ] || sf_stop_pid "$server_pid"
    fi
    sf_keep_or_remove "$work" "$keep"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# psql against the bench database: unaligned, tab-separated, no headers.
q() {
    PGOPTIONS="-c client_min_messages=warning ${PGOPTIONS_EXTRA:-}" "$bindir/psql" -X -q -At -F $'\t' \
        -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d bench "$@"
}

# One line of raw data: section name param rep, then the measured fields
# (see the header written below).
record() {
    local IFS=$'\t'
    echo "$*" >> "$results"
}

# One line of raw data into a file of its own (the new sections).
record_to() {
    local file=$1
    shift
    local IFS=$'\t'
    echo "$*" >> "$file"
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

log "throwaway server in $work (port $port); sections: $ran"
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
# full_page_writes stay on.  (The everyday section turns it on again in
# its own sessions: real commits.)
synchronous_commit = off
# Every measured run starts right after an explicit CHECKPOINT; no timed or
# size-triggered checkpoint falls inside one, and no autovacuum worker
# competes for the 2 cores (every table is dropped after its run).
checkpoint_timeout = 30min
max_wal_size = 8GB
autovacuum = off
# Nothing runs for ever: the longest measured statement takes seconds.
statement_timeout = '10min'
# Public IDs (the publicid section): a key file of one key, current.
snowflake.public_keys_file = 'public.keys'
CONF
# A key made for this run, which the throwaway server's removal removes.
pub_key=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
printf '1 %s current\n' "$pub_key" > "$data/public.keys"
chmod 600 "$data/public.keys"
[ "$server_user" = "$(id -un)" ] || chown "$server_user" "$data/public.keys"
if [ "${#extra_settings[@]}" -gt 0 ]; then
    echo "# --set" >> "$data/postgresql.conf"
    for kv in "${extra_settings[@]}"; do
        printf "%s = '%s'\n" "${kv%%=*}" "$(sed "s/'/''/g" <<<"${kv#*=}")" >> "$data/postgresql.conf"
    done
fi
start_server
"$bindir/psql" -X -q -h "$work" -p "$port" -U postgres -d postgres \
    -c "CREATE DATABASE bench"
q -f "$work/lib/snowflake.sql" >/dev/null
q -f "$here/bench.sql" >/dev/null
# The SQL edition (sql-edition/), generated from this tree, installed into
# schema sqled of the same database (its plain script installs into the
# first schema of search_path), beside the C extension in public: its
# functions are sqled.snowflake_nextval() and so on, node id 2.
perl "$root/sql-edition/build.pl" --out "$work/sqled" >/dev/null
chmod -R a+rX "$work/sqled"
q -c "CREATE SCHEMA sqled" >/dev/null
# The edition's public IDs use pgcrypto's AES, bound when pgcrypto is
# there first; its keys are its own (the same key as the C extension's).
q -c "CREATE EXTENSION IF NOT EXISTS pgcrypto" >/dev/null
q -c "SET search_path = sqled" -f "$work/sqled/snowflake-plain.sql" >/dev/null
q -c "SELECT sqled.snowflake_set_node_id(2)" >/dev/null
q -c "SELECT sqled.snowflake_set_public_key(1, '\\x$pub_key', true)" >/dev/null
has_uuidv7=$(q -c "SELECT to_regprocedure('pg_catalog.uuidv7()') IS NOT NULL")

# ---------------------------------------------------------------------------
# Facts about this run, for the report

{
    echo "date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "command=$cmdline"
    echo "sections=$ran"
    echo "quick=$quick"
    echo "reps=$reps_old"
    echo "reps_new=$reps_new"
    echo "pgbench_seconds=$pgbench_seconds"
    echo "nproc=$(nproc)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "ram=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel=$(uname -sr)"
    echo "os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}")${SNOWFLAKE_BENCH_WHERE:+ ($SNOWFLAKE_BENCH_WHERE)}"
    echo "pgversion=$(q -c 'SELECT version()')"
    echo "pgmajor=$(q -c "SELECT current_setting('server_version_num')::int / 10000")"
    echo "has_uuidv7=$has_uuidv7"
    echo "settings=$(q -c "SELECT string_agg(name || ' = ' || setting || coalesce(unit, ''), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'synchronous_commit', 'fsync', 'wal_sync_method', 'autovacuum', 'max_wal_size', 'checkpoint_timeout', 'snowflake.max_drift_ms', 'snowflake.max_wait_ms', 'snowflake.node_id', 'snowflake.background_writer', 'snowflake.writer_idle_timeout', 'jit')")"
    extra=
    for kv in "${extra_settings[@]}"; do
        extra="$extra${extra:+, }$(q -c "SELECT '${kv%%=*}' || ' = ' || current_setting('${kv%%=*}')")"
    done
    echo "extra_settings=$extra"
    echo "layout=$(q -c "SELECT timestamp_bits || '/' || node_bits || '/' || sequence_bits FROM snowflake_stats")"
    if git -C "$root" rev-parse --short HEAD >/dev/null 2>&1; then
        echo "git=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" status --porcelain -- src Makefile snowflake.control 'snowflake--*.sql' 2>/dev/null | grep -q . && echo ' (src/ has uncommitted changes)')"
    else
        echo "git=${SNOWFLAKE_BENCH_GIT:-unknown}"
    fi
    echo "library=snowflake $ext_version, snowflake.so installed $lib_built (md5 $lib_md5...)"
    # An assertion build (test/check.sh installs one) calls ExceptionalCondition.
    if command -v nm >/dev/null 2>&1 && nm -D "$work/lib/snowflake.so" 2>/dev/null | grep -q ExceptionalCondition; then
        echo "library_asserts=1"
    fi
    echo "n_fast=$N_FAST"
    echo "n_uuid=$N_UUID"
    echo "n_plpgsql=$N_PLPGSQL"
    echo "n_micro=$N_MICRO"
    echo "n_text=$N_TEXT"
    echo "n_pub=$N_PUB"
    echo "n_pub_ed=$N_PUB_ED"
    echo "n_micro2=$N_MICRO2"
    echo "insert_rows=$INSERT_ROWS"
    echo "mt_clients=$MT_CLIENTS"
    echo "mt_tx=$MT_TX"
    echo "mt_rows_per_tx=$MT_ROWS_PER_TX"
    echo "batches=$BATCHES"
    echo "clients=$CLIENTS"
    echo "everyday_rates=$EV_RATES"
    echo "everyday_seconds=$(for r in $EV_RATES; do printf '%s:%s ' "$r" "$(ev_seconds "$r")"; done)"
    echo "fsync_delay_ms=$fsync_delay"
    echo "bulk_rows=$bulk_rows"
    echo "lat_clients=$LAT_CLIENTS"
    echo "load_start=$(loadavg)"
} > "$meta"

printf 'section\tname\tparam\trep\tseconds\tcpu_seconds\trunq_seconds\tn\ttps\tlead_ms\tborrowed_ms\twaits\twait_ms\treservation_writes\tidx_bytes\ttbl_bytes\n' > "$results"
suite_t0=$(date +%s)

# ---------------------------------------------------------------------------
# Helpers of several sections

# CPU seconds of the server's exited backends: the postmaster's reaped
# children (cutime + cstime), read before and after a pgbench run.
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
server_cpu() {
    awk -v hz="$clk_tck" '{ printf "%.2f", ($16 + $17) / hz }' "/proc/$server_pid/stat" 2>/dev/null || echo -
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

# The primary key of each kind of table.
key_def() {
    case "$1" in
        snowflake) echo "id bigint PRIMARY KEY DEFAULT snowflake_nextval()" ;;
        bigserial) echo "id bigserial PRIMARY KEY" ;;
        uuid4) echo "id uuid PRIMARY KEY DEFAULT gen_random_uuid()" ;;
        uuid7core) echo "id uuid PRIMARY KEY DEFAULT uuidv7()" ;;
        instagram) echo "id bigint PRIMARY KEY DEFAULT bench_instagram_id()" ;;
        sqledition) echo "id bigint PRIMARY KEY DEFAULT sqled.snowflake_nextval()" ;;
        uuid7) echo "id uuid PRIMARY KEY DEFAULT bench_uuid_v7()" ;;
    esac
}

# The end of every script whose per-transaction latencies are logged.
# pgbench reads the clock lazily: within one pass over a client it reuses
# the time it read first, so a result that is already there when pgbench
# looks (the server answered while pgbench was descheduled) ends its
# transaction at the time the transaction began, and the next one begins
# early: latencies of 0 and shifted ones.  A meta-command makes pgbench read
# the clock afresh, so each transaction ends, and the next begins, at a
# fresh reading.
LATENCY_SCRIPT_END='\set fresh_clock 0'

# Per-transaction latencies of a pgbench run from its -l logs (one file per
# thread, "<prefix>.<pid>[.<thread>]"), as a histogram with microsecond
# bins: "<tag><TAB>latency_us<TAB>transactions" appended to a file (a run at
# 8 clients logs some hundred thousand transactions a second); the logs are
# removed.  pgbench logs a transaction's time from its scheduled start, so
# under --rate the time it waited for its turn (schedule lag, the 7th field)
# is in it: the transaction's own latency is the difference.
collect_latencies() {
    local prefix=$1 tag=$2 out=$3
    cat "$prefix".* | awk -v tag="$tag" '
        $3 ~ /^[0-9]+$/ {
            lag = (NF >= 7 && $7 ~ /^[0-9]+$/) ? $7 : 0
            n[$3 - lag]++
        }
        END { for (us in n) printf "%s\t%d\t%d\n", tag, us, n[us] }' >> "$out"
    rm -f "$prefix".*
}

# How long each section took, for the report.
section_start() { section_t0=$(date +%s); }
section_end() { echo "seconds_$1=$(($(date +%s) - section_t0))" >> "$meta"; }

# The generator's writer counters since the last bench_settle():
# "ids<TAB>writes<TAB>background<TAB>caller<TAB>caller_wait_ms".
writer_counters() {
    q -c "SELECT * FROM bench_writer_counters()"
}
# ---------------------------------------------------------------------------
# 1. Bulk IDs/s in one backend

if want bulk; then
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
            uuid7core) echo "bench_run('SELECT count(uuidv7()) FROM generate_series(1, $N_UUID)')" ;;
            instagram) echo "bench_run('SELECT count(bench_instagram_id()) FROM generate_series(1, $N_PLPGSQL)')" ;;
            uuid7) echo "bench_run('SELECT count(bench_uuid_v7()) FROM generate_series(1, $N_PLPGSQL)')" ;;
            sqledition) echo "bench_run('SELECT count(sqled.snowflake_nextval()) FROM generate_series(1, $N_PLPGSQL)')" ;;
            batch_from_*) local b=${name#batch_from_}; echo "bench_run(NULL, $b, $((N_FAST / b)), 'from')" ;;
            batch_select_*) local b=${name#batch_select_}; echo "bench_run(NULL, $b, $((N_FAST / b)), 'select')" ;;
        esac
    }

    bulk_names=(count1 clock snowflake)
    for b in $BATCHES; do
        bulk_names+=("batch_from_$b" "batch_select_$b")
    done
    bulk_names+=(nextval_c1 nextval_c32 uuid4)
    [ "$has_uuidv7" = t ] && bulk_names+=(uuid7core)
    bulk_names+=(instagram uuid7 sqledition)

    log "bulk: ${#bulk_names[@]} contenders x $reps_old repetitions"
    echo "load_bulk=$(loadavg)" >> "$meta"
    section_start
    # Warm up: load the library, the plans and the caches once, unmeasured.
    for name in "${bulk_names[@]}"; do
        q -c "SELECT * FROM $(bulk_call "$name")" >/dev/null
    done
    for ((rep = 1; rep <= reps_old; rep++)); do
        for name in $(rotate $((rep - 1)) "${bulk_names[@]}"); do
            row=$(q -c "SELECT * FROM $(bulk_call "$name")")
            IFS=$'\t' read -r sec cpu runq n lead borrowed waits waitms writes <<< "$row"
            record bulk "$name" - "$rep" "$sec" "$cpu" "$runq" "$n" - \
                "$lead" "$borrowed" "$waits" "$waitms" "$writes" - -
        done
    done
    section_end bulk
fi

# ---------------------------------------------------------------------------
# 1b. Decoding a table of keys in one backend

if want decode; then
    # The statement of a decode contender, over N_FAST keys.
    decode_call() {
        local from="FROM bench_decode_keys"
        case "$1" in
            count1) echo "SELECT count(1) $from" ;;
            timestamp) echo "SELECT count(snowflake_timestamp(id)) $from" ;;
            sequence) echo "SELECT count(snowflake_sequence(id)) $from" ;;
            select_ts) echo "SELECT count((snowflake_decode(id)).ts) $from" ;;
            select_star) echo "SELECT count(d) FROM (SELECT (snowflake_decode(id)).* $from) d" ;;
            from_ts) echo "SELECT count(d.ts) FROM bench_decode_keys k, snowflake_decode(k.id) d" ;;
        esac
    }
    decode_time() {
        q -c "SELECT * FROM bench_time('$(decode_call "$1")')"
    }
    decode_names=(count1 timestamp sequence select_ts select_star from_ts)

    log "decode: ${#decode_names[@]} contenders over $N_FAST keys x $reps_old repetitions"
    # The keys: real IDs of this server, minted in batches, frozen so that
    # no scan sets hint bits.
    q -c "CREATE TABLE bench_decode_keys (id bigint NOT NULL)" >/dev/null
    for ((left = N_FAST; left > 0; left -= SF_BATCH_MAX)); do
        q -c "SELECT bench_settle()" >/dev/null
        q -c "INSERT INTO bench_decode_keys SELECT snowflake_nextval_batch($((left < SF_BATCH_MAX ? left : SF_BATCH_MAX)))" >/dev/null
    done
    q -c "VACUUM (FREEZE, ANALYZE) bench_decode_keys" >/dev/null
    echo "load_decode=$(loadavg)" >> "$meta"
    section_start
    for name in "${decode_names[@]}"; do
        decode_time "$name" >/dev/null
    done
    for ((rep = 1; rep <= reps_old; rep++)); do
        for name in $(rotate $((rep - 1)) "${decode_names[@]}"); do
            row=$(decode_time "$name")
            IFS=$'\t' read -r sec cpu runq n <<< "$row"
            record decode "$name" - "$rep" "$sec" "$cpu" "$runq" "$n" - - - - - - - -
        done
    done
    section_end decode
    q -c "DROP TABLE bench_decode_keys" >/dev/null
fi

# ---------------------------------------------------------------------------
# 1c. Text forms of IDs (issue 39): encoding and decoding a table of keys in
# one backend, against printing and reading the number (int8out, int8in)

# Rows of the text-form table, and its contenders: encoders over the key,
# decoders over a column holding the text they read.  Each statement's
# baseline is count() of the same column, so that every contender's cost
# over its baseline is the function's own (deforming a later column costs
# more, and its baseline pays that too).
textform_encoders="int8out to_base32 to_base62 to_base58 to_base36 to_hex to_base32_prefix"
textform_decoders="int8in from_base32 from_base62 from_base58 from_base36 from_hex from_base32_prefix"
# The SQL edition's (schema sqled): ed_ and the C contender's name.
textform_edition="ed_to_base32 ed_to_base62 ed_to_base58 ed_to_base36 ed_to_hex ed_to_base32_prefix
    ed_from_base32 ed_from_base62 ed_from_base58 ed_from_base36 ed_from_hex ed_from_base32_prefix"
# The column a contender reads, and its expression over it.
textform_col() {
    case "$1" in
        ed_*) textform_col "${1#ed_}" ;;
        int8out|to_*|count_id) echo id ;;
        int8in|count_dec) echo dec ;;
        from_base32_prefix|count_b32p) echo b32p ;;
        from_base32|count_b32) echo b32 ;;
        from_base62|count_b62) echo b62 ;;
        from_base58|count_b58) echo b58 ;;
        from_base36|count_b36) echo b36 ;;
        from_hex|count_hex) echo hex ;;
    esac
}
textform_expr() {
    local c
    c=$(textform_col "$1")
    case "$1" in
        ed_*) textform_expr "${1#ed_}" | sed 's/snowflake_/sqled.snowflake_/' ;;
        count_*) echo "$c" ;;
        int8out) echo "id::text" ;;
        int8in) echo "dec::bigint" ;;
        to_base32_prefix) echo "snowflake_to_base32(id, 'ord_')" ;;
        from_base32_prefix) echo "snowflake_from_base32(b32p, 'ord_')" ;;
        to_*) echo "snowflake_$1(id)" ;;
        from_*) echo "snowflake_$1($c)" ;;
    esac
}
textform_baselines="count_id count_dec count_b32 count_b62 count_b58 count_b36 count_hex count_b32p"

if want textform; then
    textform_names=($textform_baselines $textform_encoders $textform_decoders $textform_edition)
    log "textform: ${#textform_names[@]} contenders over $N_TEXT keys x $reps_old repetitions"
    # Real IDs of this server and their texts, frozen.  Kept until the end
    # of the run: the callgrind section reads it too.
    q -c "CREATE TABLE bench_text_keys (id bigint NOT NULL, dec text NOT NULL, b32 text NOT NULL,
              b62 text NOT NULL, b58 text NOT NULL, b36 text NOT NULL, hex text NOT NULL, b32p text NOT NULL)" >/dev/null
    for ((left = N_TEXT; left > 0; left -= SF_BATCH_MAX)); do
        q -c "SELECT bench_settle()" >/dev/null
        q -c "INSERT INTO bench_text_keys
              SELECT id, id::text, snowflake_to_base32(id), snowflake_to_base62(id), snowflake_to_base58(id),
                     snowflake_to_base36(id), snowflake_to_hex(id), snowflake_to_base32(id, 'ord_')
                FROM snowflake_nextval_batch($((left < SF_BATCH_MAX ? left : SF_BATCH_MAX))) id" >/dev/null
    done
    q -c "VACUUM (FREEZE, ANALYZE) bench_text_keys" >/dev/null
    echo "load_textform=$(loadavg)" >> "$meta"
    section_start
    for name in "${textform_names[@]}"; do
        q -c "SELECT * FROM bench_time('SELECT count($(textform_expr "$name" | sed "s/'/''/g")) FROM bench_text_keys')" >/dev/null
    done
    for ((rep = 1; rep <= reps_old; rep++)); do
        for name in $(rotate $((rep - 1)) "${textform_names[@]}"); do
            row=$(q -c "SELECT * FROM bench_time('SELECT count($(textform_expr "$name" | sed "s/'/''/g")) FROM bench_text_keys')")
            IFS=$'\t' read -r sec cpu runq n <<< "$row"
            record textform "$name" - "$rep" "$sec" "$cpu" "$runq" "$n" - - - - - - - -
        done
    done
    section_end textform
fi

# ---------------------------------------------------------------------------
# 1d. Public IDs (issue 48): FF1 over real IDs in one backend, with the key
# as an argument and configured, both ways, and the public text, against
# printing the number (int8out) and gen_random_uuid().  Each statement's
# baseline is count() of the column it reads; the SQL edition's, two orders
# of magnitude slower, read the first N_PUB_ED rows, over count() of as
# many.

publicid_c="int8out uuid4 to_base32_prefix encrypt_id decrypt_id to_public from_public to_public_base32 from_public_base32"
publicid_edition="ed_encrypt_id ed_decrypt_id ed_to_public ed_from_public ed_to_public_base32 ed_from_public_base32"
publicid_baselines="count_id count_pub count_ptext ed_count_id"
publicid_col() {
    case "$1" in
        ed_count_id) echo id ;;
        ed_*) publicid_col "${1#ed_}" ;;
        int8out|uuid4|to_*|encrypt_id|count_id) echo id ;;
        decrypt_id|from_public|count_pub) echo pub ;;
        from_public_base32|count_ptext) echo ptext ;;
    esac
}
publicid_expr() {
    local c
    c=$(publicid_col "$1")
    case "$1" in
        ed_count_id) echo "id" ;;
        ed_*) publicid_expr "${1#ed_}" | sed 's/snowflake_/sqled.snowflake_/' ;;
        count_*) echo "$c" ;;
        int8out) echo "id::text" ;;
        uuid4) echo "gen_random_uuid()" ;;
        to_base32_prefix) echo "snowflake_to_base32(id, 'ord_')" ;;
        encrypt_id) echo "snowflake_encrypt_id(id, '\\x$pub_key'::bytea)" ;;
        decrypt_id) echo "snowflake_decrypt_id(pub, '\\x$pub_key'::bytea)" ;;
        to_public) echo "snowflake_to_public(id, 1)" ;;
        from_public) echo "snowflake_from_public(pub, 1)" ;;
        to_public_base32) echo "snowflake_to_public_base32(id, 'ord_')" ;;
        from_public_base32) echo "snowflake_from_public_base32(ptext, 'ord_')" ;;
    esac
}
# The table a contender reads: the whole table, or its first N_PUB_ED rows.
publicid_from() {
    case "$1" in
        ed_*) echo "(SELECT * FROM bench_public_keys LIMIT $N_PUB_ED) s" ;;
        *) echo "bench_public_keys" ;;
    esac
}

if want publicid; then
    publicid_names=($publicid_baselines $publicid_c $publicid_edition)
    log "publicid: ${#publicid_names[@]} contenders over $N_PUB keys ($N_PUB_ED for the SQL edition) x $reps_old repetitions"
    # Real IDs of this server, their public IDs and public texts, frozen.
    # Kept until the end of the run: the callgrind section reads it too.
    q -c "CREATE TABLE bench_public_keys (id bigint NOT NULL, pub bigint NOT NULL, ptext text NOT NULL)" >/dev/null
    for ((left = N_PUB; left > 0; left -= SF_BATCH_MAX)); do
        q -c "SELECT bench_settle()" >/dev/null
        q -c "INSERT INTO bench_public_keys
              SELECT id, snowflake_to_public(id, 1), snowflake_to_public_base32(id, 'ord_')
                FROM snowflake_nextval_batch($((left < SF_BATCH_MAX ? left : SF_BATCH_MAX))) id" >/dev/null
    done
    q -c "VACUUM (FREEZE, ANALYZE) bench_public_keys" >/dev/null
    echo "load_publicid=$(loadavg)" >> "$meta"
    publicid_time() {
        q -c "SELECT * FROM bench_time('SELECT count($(publicid_expr "$1" | sed "s/'/''/g")) FROM $(publicid_from "$1")')"
    }
    section_start
    for name in "${publicid_names[@]}"; do
        publicid_time "$name" >/dev/null
    done
    for ((rep = 1; rep <= reps_old; rep++)); do
        for name in $(rotate $((rep - 1)) "${publicid_names[@]}"); do
            row=$(publicid_time "$name")
            IFS=$'\t' read -r sec cpu runq n <<< "$row"
            record publicid "$name" - "$rep" "$sec" "$cpu" "$runq" "$n" - - - - - - - -
        done
    done
    section_end publicid
fi

# ---------------------------------------------------------------------------
# 2. Concurrent SELECT EXPR with pgbench

if want pgbench; then
    declare -A pgb_sql=(
        [select1]='SELECT 1;'
        [snowflake]='SELECT snowflake_nextval();'
        [nextval_c1]="SELECT nextval('bench_seq_c1');"
        [uuid4]='SELECT gen_random_uuid();'
    )
    pgb_names=(select1 snowflake nextval_c1 uuid4)
    if [ "$has_uuidv7" = t ]; then
        pgb_sql[uuid7core]='SELECT uuidv7();'
        pgb_names+=(uuid7core)
    fi
    for name in "${pgb_names[@]}"; do
        echo "${pgb_sql[$name]}" > "$work/pgbench_$name.sql"
    done

    sample_seconds=$(awk -v t="$pgbench_seconds" 'BEGIN { printf "%.2f", t - 0.5 }')
    printf 'name\tclients\trep\twhat\tsamples\n' > "$work/waits.tsv"
    log "pgbench: ${#pgb_names[@]} statements x clients {$CLIENTS} x $reps_old repetitions, ${pgbench_seconds}s each"
    echo "load_pgbench=$(loadavg)" >> "$meta"
    section_start
    for ((rep = 1; rep <= reps_old; rep++)); do
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
    section_end pgbench
fi

# ---------------------------------------------------------------------------
# 3. Inserts per key kind

if want inserts; then
    insert_kinds=(snowflake bigserial uuid4)
    [ "$has_uuidv7" = t ] && insert_kinds+=(uuid7core)
    insert_kinds+=(instagram uuid7)
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

    log "inserts: ${#insert_kinds[@]} key kinds x $reps_old repetitions ($INSERT_ROWS rows in one statement; $((MT_CLIENTS * MT_TX * MT_ROWS_PER_TX)) rows in $MT_ROWS_PER_TX-row transactions from $MT_CLIENTS clients)"
    echo "load_insert=$(loadavg)" >> "$meta"
    section_start
    for ((rep = 1; rep <= reps_old; rep++)); do
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
    section_end inserts
fi

# ---------------------------------------------------------------------------
# 4. Micro-benchmark of the generator: one backend, then two contending

if want micro; then
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
    section_start
    for ((rep = 1; rep <= reps_old; rep++)); do
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
    section_end micro
fi

# ---------------------------------------------------------------------------
# 6. to 9.: the sections of issues 8 and 13
#
# Raw data of each in a file of its own, header first: everyday.tsv (one
# row per run) with everyday_lat.tsv (one row per transaction),
# bulkload.tsv, concurrent.tsv, latency.tsv with latency_lat.tsv.

# The UUIDv7 contender: PostgreSQL's own uuidv7() where the server has it
# (18 and later), else the PL/pgSQL one.
if [ "$has_uuidv7" = t ]; then
    uuid7_kind=uuid7core
else
    uuid7_kind=uuid7
fi

# 8. Concurrent single-row inserts: pgbench at 1, 2, 4, 8 clients, one
# row per transaction, TPS.
if want concurrent; then
    cc_kinds=(snowflake bigserial "$uuid7_kind" sqledition)
    echo "INSERT INTO bench_t(payload) VALUES (1);" > "$work/pgbench_insert1.sql"
    printf 'kind\tclients\trep\tseconds\ttps\ttx\tcpu_seconds\tids\treservation_writes\tbackground_writes\tcaller_writes\tcaller_wait_ms\n' \
        > "$work/concurrent.tsv"
    log "concurrent: ${#cc_kinds[@]} key kinds x clients {$CLIENTS} x $reps_new repetitions, ${pgbench_seconds}s each"
    echo "load_concurrent=$(loadavg)" >> "$meta"
    section_start
    for ((rep = 1; rep <= reps_new; rep++)); do
        for c in $CLIENTS; do
            j=$((c < 2 ? c : 2))
            for kind in $(rotate $(((rep - 1 + c) % ${#cc_kinds[@]})) "${cc_kinds[@]}"); do
                # One unmeasured insert, as in the everyday section: the run
                # measures a table in use, not the first insert after a pause.
                q -c "DROP TABLE IF EXISTS bench_t" \
                  -c "CREATE TABLE bench_t ($(key_def "$kind"), payload integer NOT NULL)" \
                  -c "CHECKPOINT" \
                  -c "INSERT INTO bench_t(payload) VALUES (0)" >/dev/null
                q -c "SELECT bench_settle()" >/dev/null
                cpu0=$(server_cpu)
                res=$(pgbench_run -n -M prepared -T "$pgbench_seconds" -c "$c" -j "$j" \
                    -f "$work/pgbench_insert1.sql")
                IFS=$'\t' read -r tps tx ccpu <<< "$res"
                IFS=$'\t' read -r ids writes bgw cw cwms <<< "$(writer_counters)"
                scpu=$(cpu_sum "$cpu0" "$(server_cpu)" 0)
                record_to "$work/concurrent.tsv" "$kind" "$c" "$rep" "$pgbench_seconds" "$tps" "$tx" \
                    "$(cpu_sum 0 "$scpu" "$ccpu")" "$ids" "$writes" "$bgw" "$cw" "$cwms"
            done
        done
    done
    q -c "DROP TABLE IF EXISTS bench_t" >/dev/null
    section_end concurrent
fi

# 7. Bulk loads: N rows from a file, every way of getting them into a
# table keyed by snowflake_nextval(), beside bigserial's.
#
#   copy      \copy t(v) FROM file: COPY evaluates the key's default per
#             row; a volatile default (anything but nextval()) turns off
#             its multi-row inserts
#   insert    INSERT INTO t(v) SELECT v FROM a table already loaded
#   file_fdw  INSERT INTO t(v) SELECT v FROM a file_fdw foreign table
#   staging   \copy into a temporary table, then INSERT ... SELECT
#   batch     keys minted first by snowflake_nextval_batch(), joined to the
#             rows by the client (paste), COPY t(id, v) FROM STDIN: the key
#             is in the data, no default is evaluated, COPY batches
#
# Each load is one shell pipeline timed from the client (psql start-up and
# connection included, the same for every method), right after the table
# was created afresh and a CHECKPOINT taken.
if want bulkload; then
    bl_file=$work/load.tsv
    seq 1 "$bulk_rows" > "$bl_file"
    chmod a+r "$bl_file"
    q -c "CREATE EXTENSION file_fdw" \
      -c "CREATE SERVER bench_files FOREIGN DATA WRAPPER file_fdw" \
      -c "CREATE FOREIGN TABLE bench_load_file (v integer NOT NULL) SERVER bench_files OPTIONS (filename '$bl_file')" \
      -c "CREATE TABLE bench_load_src AS SELECT v FROM bench_load_file" \
      -c "VACUUM ANALYZE bench_load_src" >/dev/null
    psql_cmd="'$bindir/psql' -X -q -v ON_ERROR_STOP=1 -h '$work' -p $port -U postgres -d bench"
    bl_batches=$(((bulk_rows + SF_BATCH_MAX - 1) / SF_BATCH_MAX))
    bl_cmd() {
        case "$1" in
            copy) echo "$psql_cmd -c \"\\copy bench_l(v) FROM '$bl_file'\"" ;;
            insert) echo "$psql_cmd -c 'INSERT INTO bench_l(v) SELECT v FROM bench_load_src'" ;;
            file_fdw) echo "$psql_cmd -c 'INSERT INTO bench_l(v) SELECT v FROM bench_load_file'" ;;
            staging) echo "$psql_cmd -c 'CREATE TEMP TABLE bench_stage (v integer NOT NULL)' -c \"\\copy bench_stage FROM '$bl_file'\" -c 'INSERT INTO bench_l(v) SELECT v FROM bench_stage'" ;;
            batch) echo "paste <($psql_cmd -At -c 'COPY (SELECT snowflake_nextval_batch(least($SF_BATCH_MAX, $bulk_rows - (i - 1) * $SF_BATCH_MAX)) FROM generate_series(1, $bl_batches) i) TO STDOUT') '$bl_file' | $psql_cmd -c 'COPY bench_l(id, v) FROM STDIN'" ;;
        esac
    }
    # Run a shell pipeline; print "wall seconds<TAB>CPU seconds of its processes".
    timed() {
        perl -MTime::HiRes=time -e '
            my $t0 = time;
            my $rc = system("bash", "-c", "set -o pipefail; $ARGV[0]");
            my $t1 = time;
            exit 1 if $rc != 0;
            my @t = times;
            printf "%.6f\t%.2f\n", $t1 - $t0, $t[2] + $t[3];' -- "$1"
    }
    bl_runs=(copy:bigserial copy:snowflake)
    [ "$has_uuidv7" = t ] && bl_runs+=(copy:uuid7core)
    bl_runs+=(batch:snowflake staging:snowflake insert:bigserial insert:snowflake)
    [ "$has_uuidv7" = t ] && bl_runs+=(insert:uuid7core)
    bl_runs+=(file_fdw:bigserial file_fdw:snowflake)
    printf 'method\tkind\trep\tseconds\tcpu_seconds\trows\twal_bytes\tidx_bytes\ttbl_bytes\tids\treservation_writes\tbackground_writes\tcaller_writes\tcaller_wait_ms\n' \
        > "$work/bulkload.tsv"
    log "bulk loads: ${#bl_runs[@]} methods x $reps_new repetitions, $bulk_rows rows each"
    echo "load_bulkload=$(loadavg)" >> "$meta"
    section_start
    for ((rep = 1; rep <= reps_new; rep++)); do
        for run in $(rotate $((rep - 1)) "${bl_runs[@]}"); do
            method=${run%%:*}
            kind=${run#*:}
            q -c "DROP TABLE IF EXISTS bench_l" \
              -c "CREATE TABLE bench_l ($(key_def "$kind"), v integer NOT NULL)" \
              -c "CHECKPOINT" >/dev/null
            q -c "SELECT bench_settle()" >/dev/null
            wal0=$(q -c "SELECT pg_current_wal_insert_lsn()")
            # The server's CPU time counts a backend once the postmaster
            # has reaped it: give the ones that just exited a moment.
            sleep 0.3
            cpu0=$(server_cpu)
            if res=$(timed "$(bl_cmd "$method")" 2>"$work/bulkload.err"); then
                IFS=$'\t' read -r sec ccpu <<< "$res"
                sleep 0.3
                scpu=$(cpu_sum "$cpu0" "$(server_cpu)" 0)
                wal=$(q -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$wal0')::bigint")
                IFS=$'\t' read -r ids writes bgw cw cwms <<< "$(writer_counters)"
                IFS=$'\t' read -r idx tbl cnt <<< "$(q -c "SELECT pg_relation_size('bench_l_pkey'), pg_relation_size('bench_l'), count(*) FROM bench_l")"
                if [ "$cnt" -ne "$bulk_rows" ]; then
                    log "bulk load $method into $kind loaded $cnt rows, not $bulk_rows"
                    echo "bulkload_error=$method $kind: $cnt rows loaded, not $bulk_rows" >> "$meta"
                fi
                record_to "$work/bulkload.tsv" "$method" "$kind" "$rep" "$sec" "$(cpu_sum 0 "$scpu" "$ccpu")" \
                    "$cnt" "$wal" "$idx" "$tbl" "$ids" "$writes" "$bgw" "$cw" "$cwms"
            else
                log "bulk load $method into $kind failed: $(grep -m 1 . "$work/bulkload.err" || true)"
                echo "bulkload_error=$method $kind: $(grep -m 1 . "$work/bulkload.err" | tr '\t' ' ')" >> "$meta"
            fi
        done
    done
    q -c "DROP TABLE IF EXISTS bench_l" -c "DROP TABLE bench_load_src" >/dev/null
    section_end bulkload
fi

# 6. Everyday rates: one client inserting single rows at 2 and at 50 a
# second (pgbench --rate, Poisson arrivals), real commits
# (synchronous_commit = on in these sessions), one table per key kind, the
# kinds interleaved.  Each run is preceded by one unmeasured insert into its
# table: the run measures a table in use, not the first insert after a
# pause (which for snowflake may write the reservation itself once, after
# snowflake.writer_idle_timeout of quiet).
ev_kinds=(snowflake bigserial uuid4 sqledition)
[ "$has_uuidv7" = t ] && ev_kinds+=(uuid7core)
if want everyday; then
    printf 'disk\trate\tkind\trep\tseconds\ttps\ttx\tids\treservation_writes\tbackground_writes\tcaller_writes\tcaller_wait_ms\n' \
        > "$work/everyday.tsv"
    printf 'disk\trate\tkind\trep\tlatency_us\ttransactions\n' > "$work/everyday_lat.tsv"
    for kind in "${ev_kinds[@]}"; do
        q -c "CREATE TABLE bench_ev_$kind ($(key_def "$kind"), v integer NOT NULL)"
        printf '%s\n' "INSERT INTO bench_ev_$kind (v) VALUES (1);" "$LATENCY_SCRIPT_END" \
            > "$work/pgbench_ev_$kind.sql"
    done
fi
everyday_phase() {
    local disk=$1 rep kind rate secs res tps tx ccpu ids writes bgw cw cwms prefix
    log "everyday ($disk disk): ${#ev_kinds[@]} key kinds x rates {$EV_RATES}/s x $reps_new repetitions"
    echo "load_everyday_$disk=$(loadavg)" >> "$meta"
    section_start
    q -c "CHECKPOINT" >/dev/null
    for ((rep = 1; rep <= reps_new; rep++)); do
        for kind in $(rotate $((rep - 1)) "${ev_kinds[@]}"); do
            for rate in $EV_RATES; do
                secs=$(ev_seconds "$rate")
                PGOPTIONS_EXTRA='-c synchronous_commit=on' q -c "INSERT INTO bench_ev_$kind (v) VALUES (0)"
                q -c "SELECT bench_settle()" >/dev/null
                prefix=$logs/ev.$disk.$kind.$rate.$rep
                res=$(PGOPTIONS='-c synchronous_commit=on' pgbench_run -n -M prepared -c 1 -j 1 \
                    -R "$rate" -T "$secs" -l --log-prefix="$prefix" -f "$work/pgbench_ev_$kind.sql")
                IFS=$'\t' read -r tps tx ccpu <<< "$res"
                IFS=$'\t' read -r ids writes bgw cw cwms <<< "$(writer_counters)"
                record_to "$work/everyday.tsv" "$disk" "$rate" "$kind" "$rep" "$secs" "$tps" "$tx" \
                    "$ids" "$writes" "$bgw" "$cw" "$cwms"
                collect_latencies "$prefix" "$disk"$'\t'"$rate"$'\t'"$kind"$'\t'"$rep" "$work/everyday_lat.tsv"
            done
        done
    done
    section_end "everyday_$disk"
}

# 9. Latency of SELECT snowflake_nextval() at 8 clients against SELECT 1:
# every transaction's latency from pgbench's -l logs.
lat_names=(select1 snowflake)
if want latency; then
    printf '%s\n' 'SELECT 1;' "$LATENCY_SCRIPT_END" > "$work/pgbench_lat_select1.sql"
    printf '%s\n' 'SELECT snowflake_nextval();' "$LATENCY_SCRIPT_END" > "$work/pgbench_lat_snowflake.sql"
    printf 'disk\tname\trep\tseconds\ttps\ttx\tids\treservation_writes\tbackground_writes\tcaller_writes\tcaller_wait_ms\n' \
        > "$work/latency.tsv"
    printf 'disk\tname\trep\tlatency_us\ttransactions\n' > "$work/latency_lat.tsv"
fi
latency_phase() {
    local disk=$1 rep name res tps tx ccpu ids writes bgw cw cwms prefix
    log "latency ($disk disk): ${#lat_names[@]} statements x $LAT_CLIENTS clients x $reps_new repetitions, ${pgbench_seconds}s each"
    echo "load_latency_$disk=$(loadavg)" >> "$meta"
    section_start
    for ((rep = 1; rep <= reps_new; rep++)); do
        for name in $(rotate $((rep - 1)) "${lat_names[@]}"); do
            q -c "$(head -n 1 "$work/pgbench_lat_$name.sql")" >/dev/null
            q -c "SELECT bench_settle()" >/dev/null
            prefix=$logs/lat.$disk.$name.$rep
            res=$(pgbench_run -n -M prepared -c "$LAT_CLIENTS" -j 2 -T "$pgbench_seconds" \
                -l --log-prefix="$prefix" -f "$work/pgbench_lat_$name.sql")
            IFS=$'\t' read -r tps tx ccpu <<< "$res"
            IFS=$'\t' read -r ids writes bgw cw cwms <<< "$(writer_counters)"
            record_to "$work/latency.tsv" "$disk" "$name" "$rep" "$pgbench_seconds" "$tps" "$tx" \
                "$ids" "$writes" "$bgw" "$cw" "$cwms"
            collect_latencies "$prefix" "$disk"$'\t'"$name"$'\t'"$rep" "$work/latency_lat.tsv"
        done
    done
    section_end "latency_$disk"
}

want latency && latency_phase machine
want everyday && everyday_phase machine
stop_server

# The slow disk: the same server again, every fsync and fdatasync of every
# process of it (WAL, data files, the state file) sleeping first.
if [ "$slow_disk" -eq 1 ]; then
    log "restarting the server with every fsync slowed by $fsync_delay ms (test/faultshim.c)"
    start_server slow
    want everyday && everyday_phase slow
    want latency && latency_phase slow
    stop_server
fi

echo "load_end=$(loadavg)" >> "$meta"
if [ "$(lib_sum "$pkglibdir/snowflake.so")" != "$lib_md5" ]; then
    echo "library_changed=$(date -u -r "$pkglibdir/snowflake.so" '+%Y-%m-%d %H:%M UTC')" >> "$meta"
fi

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
# The bulk section's contenders, unless only the decode or text-form
# section's are wanted (--only decode,callgrind).
if want bulk || { ! want decode && ! want textform && ! want publicid; }; then
cg_add count1 "$CG_N1" "$CG_N2" "SELECT count(1) FROM generate_series(1, %N%)"
cg_add clock "$CG_N1" "$CG_N2" "SELECT count(clock_timestamp()) FROM generate_series(1, %N%)"
cg_add snowflake "$CG_N1" "$CG_N2" "SELECT count(snowflake_nextval()) FROM generate_series(1, %N%)"
cg_add batch_from "$CG_N1" "$CG_N2" "SELECT count(*) FROM snowflake_nextval_batch(%N%)"
cg_add batch_select "$CG_N1" "$CG_N2" "SELECT count(*) FROM (SELECT snowflake_nextval_batch(%N%)) s"
cg_add nextval_c1 "$CG_N1" "$CG_N2" "SELECT count(nextval('bench_seq_c1')) FROM generate_series(1, %N%)"
cg_add nextval_c32 "$CG_N1" "$CG_N2" "SELECT count(nextval('bench_seq_c32')) FROM generate_series(1, %N%)"
cg_add uuid4 "$CG_SLOW1" "$CG_SLOW2" "SELECT count(gen_random_uuid()) FROM generate_series(1, %N%)"
[ "$has_uuidv7" = t ] &&
    cg_add uuid7core "$CG_SLOW1" "$CG_SLOW2" "SELECT count(uuidv7()) FROM generate_series(1, %N%)"
cg_add instagram "$CG_SLOW1" "$CG_SLOW2" "SELECT count(bench_instagram_id()) FROM generate_series(1, %N%)"
cg_add uuid7 "$CG_SLOW1" "$CG_SLOW2" "SELECT count(bench_uuid_v7()) FROM generate_series(1, %N%)"
fi
# The decode section's, over IDs of the default layout in 2027 (the
# series' own numbers: no table to read), against count(g) over the same.
if want decode; then
    cg_ids="generate_series(450000000000000000, 450000000000000000 + %N%) g"
    cg_add dec_count1 "$CG_N1" "$CG_N2" "SELECT count(g) FROM $cg_ids"
    cg_add dec_timestamp "$CG_N1" "$CG_N2" "SELECT count(snowflake_timestamp(g)) FROM $cg_ids"
    cg_add dec_select_ts "$CG_N1" "$CG_N2" "SELECT count((snowflake_decode(g)).ts) FROM $cg_ids"
    cg_add dec_select_star "$CG_N1" "$CG_N2" "SELECT count(d) FROM (SELECT (snowflake_decode(g)).* FROM $cg_ids) d"
    cg_add dec_from_ts "$CG_N1" "$CG_N2" "SELECT count(d.ts) FROM $cg_ids, snowflake_decode(g) d"
fi
# The text forms, over the rows of the text-form table (its section made it).
if want textform; then
    for name in $textform_baselines $textform_encoders $textform_decoders; do
        cg_add "text_$name" "$CG_N1" "$CG_N2" \
            "SELECT count($(textform_expr "$name")) FROM (SELECT * FROM bench_text_keys LIMIT %N%) s"
    done
    # The SQL edition's, tens of times slower, over fewer rows.
    for name in $textform_edition; do
        cg_add "text_$name" "$CG_SLOW1" "$CG_SLOW2" \
            "SELECT count($(textform_expr "$name")) FROM (SELECT * FROM bench_text_keys LIMIT %N%) s"
    done
fi

# Public IDs, the C extension's, over the rows of the public-ID table (its
# section made it).
if want publicid; then
    for name in count_id count_pub count_ptext $publicid_c; do
        cg_add "pid_$name" "$CG_N1" "$CG_N2" \
            "SELECT count($(publicid_expr "$name")) FROM (SELECT * FROM bench_public_keys LIMIT %N%) s"
    done
fi

if [ "$callgrind" -eq 1 ]; then
    log "callgrind: instructions per ID in a single-user backend"
    section_start
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
    section_end callgrind
    echo "callgrind_version=$(valgrind --version)" >> "$meta"
else
    echo "callgrind=0" >> "$meta"
    if ! want callgrind; then
        cg_skip=${cg_skip:-not selected: --no-callgrind or --only}
    fi
    echo "callgrind_skip=${cg_skip:-skipped}" >> "$meta"
fi

echo "suite_seconds=$(($(date +%s) - suite_t0))" >> "$meta"

# ---------------------------------------------------------------------------
# The report

# The report, and beside it the data of its plots (PREFIX-*.tsv, PREFIX
# the report's path less ".md"), drawn as PREFIX-*.svg; those of an earlier
# run at the same path go first, so that no plot outlives its data.
plot_prefix=${output%.md}
for plot in $plots; do
    rm -f "$plot_prefix-$plot.tsv" "$plot_prefix-$plot.svg"
done
perl "$here/report.pl" "$work" "$plot_prefix" > "$output.tmp"
mv "$output.tmp" "$output"
log "report written to ${output#"$root"/}"
for plot in $plots; do
    [ -f "$plot_prefix-$plot.tsv" ] || continue
    gnuplot -e "prefix='$plot_prefix'; plot='$plot'" "$here/plots.gp"
    log "plot drawn: ${plot_prefix#"$root"/}-$plot.svg"
done
