#!/usr/bin/env bash
# test/bench/restart.sh: what a start that applies the floor costs (issues
# 36 and 41), beside a clean restart, with bigserial alongside.
#
# Since 1.2 every start that was not preceded by a clean shutdown (a crash,
# a volume snapshot, a backup) places the first ID past the clock plus
# snowflake.max_drift_ms (the floor); a clean restart resumes right after the
# last ID.  This script starts its own throwaway server (initdb in a
# temporary directory, Unix socket only, the library preloaded, fsync and
# synchronous_commit on), and for each repetition, clean restarts (pg_ctl
# stop -m fast) and crashes (-m immediate, crash recovery at the next start)
# interleaved, measures:
#   - start to first ID: from "pg_ctl start" to the first snowflake key a
#     client's INSERT got back (crash recovery and connection included);
#   - the first ID's lead over the server's clock when it was issued, and
#     the gap between the last ID before the stop and the first after (ms of
#     ID time);
#   - bigserial's gap: how many values the sequence skipped (a sequence
#     logs 32 values ahead, which a crash loses);
#   - the everyday insert right after the start: one client per table
#     inserting single rows at 50 a second for 10 s (pgbench --rate, real
#     commits), snowflake and bigserial at the same time, each transaction's
#     latency from pgbench's log (median, p99, maximum);
#   - a burst right after another start of the same kind: the time of
#     snowflake_nextval_batch(1000000), which spans 245 ms of ID time and
#     must wait for the clock when the floor already used the lead.
# It writes a Markdown report.  Measurements only: nothing passes or fails.
#
#   test/bench/restart.sh [--reps N] [--seconds S] [--output FILE] [--keep]
#
#   --reps N      repetitions of each kind of start (default 5)
#   --seconds S   length of each everyday run (default 10)
#   --output FILE the report (default docs/performance/report-restart-pgMAJOR.md)
#   --keep        keep the temporary directory (server, logs)
#
# Needs the extension built and installed into the PostgreSQL PG_CONFIG
# names; psql, pgbench, perl.  Run as root, the server runs as "postgres".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)
cmdline="test/bench/restart.sh${*:+ $*}"

reps=5 seconds=10 output= keep=0
usage="usage: test/bench/restart.sh [--reps N] [--seconds S] [--output FILE] [--keep]"
while [ $# -gt 0 ]; do
    case $1 in
        --reps) reps=${2:?$usage}; shift 2 ;;
        --seconds) seconds=${2:?$usage}; shift 2 ;;
        --output) output=${2:?$usage}; shift 2 ;;
        --keep) keep=1; shift ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[[ $reps =~ ^[1-9][0-9]*$ && $seconds =~ ^[1-9][0-9]*$ ]] || { echo "$usage" >&2; exit 2; }

PG_CONFIG=${PG_CONFIG:-pg_config}
bindir=$("$PG_CONFIG" --bindir)
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
output=${output:-$root/docs/performance/report-restart-pg$major.md}
if [ ! -f "$("$PG_CONFIG" --pkglibdir)/snowflake.so" ]; then
    echo "restart.sh: snowflake is not installed into $("$PG_CONFIG" --pkglibdir): make && make install" >&2
    exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
    as_server=(runuser -u postgres --)
else
    as_server=()
fi
log() { printf '==> %s\n' "$*" >&2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-restart.XXXXXX")
chmod 755 "$work"
[ "${#as_server[@]}" -eq 0 ] || chown postgres "$work"
data=$work/data
port=$((20000 + RANDOM % 30000))
raw=$work/raw.tsv
server_pid=

start_server() {
    "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -t 120 -w start >/dev/null
    server_pid=$(head -n 1 "$data/postmaster.pid")
}
stop_server() {
    "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m "$1" -t 120 -w stop >/dev/null
    server_pid=
}
cleanup() {
    if [ -n "$server_pid" ]; then
        "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m immediate -t 30 -w stop >/dev/null 2>&1 || true
        sf_stop_pid "$server_pid"
    fi
    sf_keep_or_remove "$work" "$keep"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

q() {
    "$bindir/psql" -X -q -At -F $'\t' -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d postgres "$@"
}

"${as_server[@]}" "$bindir/initdb" -D "$data" -A trust -U postgres --no-sync >"$work/initdb.log" 2>&1
cat >> "$data/postgresql.conf" <<CONF
# test/bench/restart.sh
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
shared_preload_libraries = 'snowflake'
snowflake.node_id = 1
shared_buffers = 128MB
autovacuum = off
CONF
start_server
q -c "CREATE EXTENSION snowflake" \
  -c "CREATE TABLE rs_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int)" \
  -c "CREATE TABLE rs_bigserial (id bigserial PRIMARY KEY, v int)" >/dev/null
drift=$(q -c "SHOW snowflake.max_drift_ms")
for kind in snowflake bigserial; do
    printf '%s\n' "INSERT INTO rs_$kind (v) VALUES (1);" '\set fresh_clock 0' > "$work/ev_$kind.sql"
done

# The first snowflake key an INSERT gets back after the start that began at
# $1 (epoch seconds): "ms from the start<TAB>key<TAB>the clock in Unix ms
# when it was issued".
first_id() {
    perl -MTime::HiRes=time -e '
        my ($t0, @cmd) = @ARGV;
        while (1) {
            open my $fh, "-|", @cmd or die "psql: $!";
            my $out = do { local $/; <$fh> } // "";
            close $fh;
            if ($? == 0 && $out =~ /^(\d+)\t(\d+)$/m) {
                printf "%.1f\t%s\t%s\n", (time() - $t0) * 1000, $1, $2;
                exit 0;
            }
            select(undef, undef, undef, 0.005);
        }' "$1" "$bindir/psql" -X -q -At -F $'\t' -h "$work" -p "$port" -U postgres -d postgres -c \
        "INSERT INTO rs_snowflake (v) VALUES (1) RETURNING id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
}

# Unix ms of a key's time (default epoch and layout).
key_ms() { echo $((($1 >> 22) + 1704067200000)); }

# Stop the server in mode $1 (fast or immediate) after noting the last IDs,
# start it, and print "start_to_first_ms<TAB>lead_ms<TAB>gap_ms<TAB>bigserial_skipped".
restart_measured() {
    local mode=$1 last_sf last_bs t0 res ms id clock first_bs i
    # The last ID before the stop at the clock, not ahead of it (a burst
    # before, or a floor, may still lead): a bounded wait.
    for ((i = 0; i < 100; i++)); do
        [ "$(q -c "SELECT lead_ms <= 0 FROM snowflake_stats")" = t ] && break
        sleep 0.1
    done
    last_sf=$(q -c "INSERT INTO rs_snowflake (v) VALUES (0) RETURNING id")
    last_bs=$(q -c "INSERT INTO rs_bigserial (v) VALUES (0) RETURNING id")
    stop_server "$mode"
    t0=$(perl -MTime::HiRes=time -e 'printf "%.6f", time()')
    start_server
    res=$(first_id "$t0")
    IFS=$'\t' read -r ms id clock <<< "$res"
    first_bs=$(q -c "INSERT INTO rs_bigserial (v) VALUES (1) RETURNING id")
    printf '%s\t%s\t%s\t%s\n' "$ms" $(($(key_ms "$id") - clock)) \
        $(($(key_ms "$id") - $(key_ms "$last_sf"))) $((first_bs - last_bs - 1))
}

# Latencies (us) of a pgbench run's transactions from its -l logs, minus
# the schedule lag that --rate puts in them, one a line.
latencies() {
    cat "$1".* | awk '$3 ~ /^[0-9]+$/ { lag = (NF >= 7 && $7 ~ /^[0-9]+$/) ? $7 : 0; print $3 - lag }'
    rm -f "$1".*
}

printf 'mode\trep\tstart_to_first_ms\tlead_ms\tgap_ms\tbigserial_skipped\tburst_ms\n' > "$raw"
: > "$work/lat.tsv"
log "server in $work (port $port), snowflake.max_drift_ms = $drift; $reps repetitions of each kind of start"
for ((rep = 1; rep <= reps; rep++)); do
    modes=(fast immediate)
    ((rep % 2)) || modes=(immediate fast)
    for mode in "${modes[@]}"; do
        log "repetition $rep: stop -m $mode, start, the everyday inserts"
        m=$(restart_measured "$mode")
        # The everyday inserts right after the start, both tables at once.
        pids=()
        for kind in snowflake bigserial; do
            "$bindir/pgbench" -n -M prepared -c 1 -j 1 -R 50 -T "$seconds" -l \
                --log-prefix="$work/ev.$kind" -f "$work/ev_$kind.sql" \
                -h "$work" -p "$port" -U postgres postgres >"$work/pgbench.$kind.log" 2>&1 &
            pids+=($!)
        done
        wait "${pids[@]}"
        for kind in snowflake bigserial; do
            latencies "$work/ev.$kind" | sed "s/^/$mode\t$kind\t/" >> "$work/lat.tsv"
        done
        # Another start of the same kind, then a burst at once.
        restart_measured "$mode" >/dev/null
        burst=$(q -c "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint" \
                  -c "SELECT count(*) FROM snowflake_nextval_batch(1000000)" \
                  -c "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint" |
                awk 'NR == 1 { a = $1 } NR == 3 { print $1 - a }')
        printf '%s\t%s\t%s\t%s\n' "$mode" "$rep" "$m" "$burst" >> "$raw"
    done
done
stop_server fast

# The report.
perl - "$raw" "$work/lat.tsv" "$cmdline" "$drift" "$reps" "$seconds" "$(uname -m)" \
    "$(nproc)" "$("$bindir/postgres" --version)" "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PERL' > "$output"
use strict;
use warnings;
my ($raw, $lat, $cmd, $drift, $reps, $secs, $arch, $cpus, $version, $commit, $load) = @ARGV;
sub median { my @v = sort { $a <=> $b } @_; return @v ? $v[ int($#v / 2) ] : '-'; }
sub pct { my ($p, @v) = @_; @v = sort { $a <=> $b } @v; return @v ? $v[ int($p * $#v + 0.5) ] : '-'; }
sub range { my @v = sort { $a <=> $b } @_; return @v ? "$v[0] – $v[-1]" : '-'; }
my %m;
open my $fh, '<', $raw or die $!;
<$fh>;
while (<$fh>) { chomp; my ($mode, $rep, @f) = split /\t/; push @{ $m{$mode}[$_] }, $f[$_] for 0 .. $#f; }
close $fh;
my %l;
open $fh, '<', $lat or die $!;
while (<$fh>) { chomp; my ($mode, $kind, $us) = split /\t/; push @{ $l{$mode}{$kind} }, $us / 1000; }
close $fh;
my %name = (fast => 'after a clean restart (`-m fast`)', immediate => 'after a crash (`-m immediate`)');
print "# What a start that applies the floor costs\n\n";
print "`$cmd`, commit $commit, $version, $cpus CPUs ($arch), load average at the end $load;\n";
print "`snowflake.max_drift_ms` = $drift, fsync and synchronous_commit on, $reps repetitions of each\n";
print "kind of start, interleaved. Medians over the repetitions, with min – max.\n\n";
print "| | start to first ID, ms | first ID's lead over the clock, ms | gap after the last ID before the stop, ms | bigserial values skipped | `snowflake_nextval_batch(1000000)` right after the start, ms |\n";
print "|---|---:|---:|---:|---:|---:|\n";
foreach my $mode (qw(fast immediate))
{
	my @c = map { $m{$mode}[$_] } 0 .. 4;
	printf "| %s | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s (%s) |\n", $name{$mode},
	  map { (median(@$_), range(@$_)) } @c;
}
print "\nEveryday inserts right after the start: one client per table, 50 single-row inserts a second\n";
print "for $secs s, snowflake and bigserial at the same time; every transaction's latency, ms.\n\n";
print "| | key | transactions | median | p99 | max |\n|---|---|---:|---:|---:|---:|\n";
foreach my $mode (qw(fast immediate))
{
	foreach my $kind (qw(snowflake bigserial))
	{
		my @v = @{ $l{$mode}{$kind} // [] };
		printf "| %s | %s | %d | %.2f | %.2f | %.2f |\n", $name{$mode}, $kind, scalar @v,
		  median(@v), pct(0.99, @v), pct(1, @v);
	}
}
PERL
log "report written to $output"
