#!/usr/bin/env bash
# test/bench/restart.sh: what a start costs, clean restarts beside crashes
# (issues 36, 41 and 44), with bigserial alongside; optionally two builds of
# the extension side by side in one run.
#
# Release 1.2 places the first ID past the clock plus snowflake.max_drift_ms
# (the floor) only after a start that was not preceded by a clean shutdown
# (a crash, a volume snapshot, a backup); a clean restart resumes right
# after the last ID.  Since issue 44 every start applies the floor.  This
# script starts its own throwaway server (initdb in a temporary directory,
# Unix socket only, the library preloaded, fsync and synchronous_commit on),
# and for each repetition, clean restarts (pg_ctl stop -m fast) and crashes
# (-m immediate, crash recovery at the next start) interleaved, measures:
#   - start to first ID: from "pg_ctl start" to the first snowflake key a
#     client's INSERT got back (crash recovery and connection included), and
#     PostgreSQL's own part of it: to the server's log line "database system
#     is ready to accept connections";
#   - the first ID's lead over the server's clock when it was issued, and
#     the gap between the last ID before the stop and the first after (ms of
#     ID time);
#   - whether that start applied the floor: the server's own log line
#     ("snowflake IDs resume at N ms past the clock, because ...");
#   - bigserial's gap: how many values the sequence skipped (a sequence
#     logs 32 values ahead, which a crash loses);
#   - the everyday insert right after the start: one client per table
#     inserting single rows at 50 a second for S seconds (pgbench --rate,
#     real commits), snowflake and bigserial at the same time, each
#     transaction's latency from pgbench's log (median, p99, maximum);
#   - a burst right after another start of the same kind: the time of
#     snowflake_nextval_batch(1000000), which spans 245 ms of ID time and
#     must wait for the clock when the floor already used the lead.
# With --before, a second installation (another build of the extension,
# the same PostgreSQL major) gets a throwaway server of its own; both run
# side by side, and each measurement above is taken on one, then the other,
# the order alternating, so that both builds see the same machine load.
# It writes a Markdown report.  Measurements only: nothing passes or fails.
#
#   test/bench/restart.sh [--reps N] [--seconds S] [--before PG_CONFIG]
#                         [--label-before TEXT] [--label-after TEXT]
#                         [--output FILE] [--keep]
#
#   --reps N            repetitions of each kind of start (default 5)
#   --seconds S         length of each everyday run (default 10)
#   --before PG_CONFIG  the pg_config of a second installation with another
#                       build of the extension installed (e.g. 1.2 in a
#                       relocated copy of PostgreSQL), measured beside the
#                       one PG_CONFIG names ("after")
#   --label-before TEXT, --label-after TEXT
#                       the builds' names in the report (default: "snowflake"
#                       and the default_version of each installation's
#                       control file, or "before" and "after" if the same)
#   --output FILE       the report (default
#                       docs/performance/report-restart-pgMAJOR.md)
#   --keep              keep the temporary directory (servers, logs, raw data)
#
# Needs the extension built and installed into the PostgreSQL PG_CONFIG
# names (and into --before's); psql, pgbench, perl.  Run as root, the
# servers run as "postgres".  About 5 minutes with one build, 10 with two
# (--reps 5 --seconds 10).  test/bench/chroot-run.sh MAJOR --restart runs it
# on 17, 18 or 19.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)
cmdline=test/bench/restart.sh
for a in "$@"; do
    case "$a" in *[!A-Za-z0-9_./=:,+-]*) cmdline+=" '${a//\'/\'\\\'\'}'" ;; *) cmdline+=" $a" ;; esac
done
[ -z "${SNOWFLAKE_BENCH_CMDLINE:-}" ] || cmdline=$SNOWFLAKE_BENCH_CMDLINE

reps=5 seconds=10 output='' keep=0 before='' label_before='' label_after=''
usage="usage: test/bench/restart.sh [--reps N] [--seconds S] [--before PG_CONFIG] [--label-before TEXT] [--label-after TEXT] [--output FILE] [--keep]"
while [ $# -gt 0 ]; do
    case $1 in
        --reps) reps=${2:?$usage}; shift 2 ;;
        --seconds) seconds=${2:?$usage}; shift 2 ;;
        --before) before=${2:?$usage}; shift 2 ;;
        --label-before) label_before=${2:?$usage}; shift 2 ;;
        --label-after) label_after=${2:?$usage}; shift 2 ;;
        --output) output=${2:?$usage}; shift 2 ;;
        --keep) keep=1; shift ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[[ $reps =~ ^[1-9][0-9]*$ && $seconds =~ ^[1-9][0-9]*$ ]] || { echo "$usage" >&2; exit 2; }

# The builds: index 0 is --before's when given; the last is PG_CONFIG's.
PG_CONFIG=${PG_CONFIG:-pg_config}
pgcs=("$PG_CONFIG")
[ -z "$before" ] || pgcs=("$before" "$PG_CONFIG")
nb=${#pgcs[@]}
bindirs=() versions=() extvers=() labels=()
for ((b = 0; b < nb; b++)); do
    pgc=${pgcs[b]}
    "$pgc" --bindir >/dev/null 2>&1 || { echo "restart.sh: $pgc is not a pg_config" >&2; exit 1; }
    if [ ! -f "$("$pgc" --pkglibdir)/snowflake.so" ]; then
        echo "restart.sh: snowflake is not installed into $("$pgc" --pkglibdir): make PG_CONFIG=$pgc && make install PG_CONFIG=$pgc" >&2
        exit 1
    fi
    bindirs+=("$("$pgc" --bindir)")
    versions+=("$("${bindirs[b]}/postgres" --version)")
    extvers+=("$(sed -nE "s/^default_version = '([^']*)'.*/\1/p" "$("$pgc" --sharedir)/extension/snowflake.control")")
done
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
if [ "$nb" -eq 2 ]; then
    bmajor=$("$before" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
    [ "$bmajor" = "$major" ] || { echo "restart.sh: --before is PostgreSQL $bmajor, PG_CONFIG is $major: the builds must share a major" >&2; exit 2; }
    if [ "${extvers[0]}" != "${extvers[1]}" ]; then
        labels=("${label_before:-snowflake ${extvers[0]}}" "${label_after:-snowflake ${extvers[1]}}")
    else
        labels=("${label_before:-before}" "${label_after:-after}")
    fi
    [ "${labels[0]}" != "${labels[1]}" ] || { echo "restart.sh: the two builds need different labels" >&2; exit 2; }
else
    labels=("${label_after:-}")
fi
output=${output:-$root/docs/performance/report-restart-pg$major.md}

if [ "$(id -u)" -eq 0 ]; then
    as_server=(runuser -u postgres --)
else
    as_server=()
fi
log() { printf '==> %s\n' "$*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
load_start=$(loadavg)

work=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-restart.XXXXXX")
chmod 755 "$work"
[ "${#as_server[@]}" -eq 0 ] || chown postgres "$work"
raw=$work/raw.tsv

# Build $1's server: its directory (Unix socket, data, log) and port; sets
# the globals that the functions below use (bindir, dir, data, port).
ports=()
for ((b = 0; b < nb; b++)); do ports+=($((20000 + RANDOM % 30000 + b))); done
use_build() {
    bindir=${bindirs[$1]}
    dir=$work/b$1
    data=$dir/data
    port=${ports[$1]}
}

start_server() {
    "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -t 120 -w start >/dev/null
}
stop_server() {
    "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m "$1" -t 120 -w stop >/dev/null
}
# Every server still running, stopped: by pg_ctl, then by the PID in its
# postmaster.pid if pg_ctl could not.
cleanup() {
    local b pid
    for ((b = 0; b < nb; b++)); do
        use_build "$b"
        [ -f "$data/postmaster.pid" ] || continue
        pid=$(head -n 1 "$data/postmaster.pid")
        "${as_server[@]}" "$bindir/pg_ctl" -D "$data" -m immediate -t 30 -w stop >/dev/null 2>&1 || true
        case "$pid" in '' | *[!0-9]*) ;; *) sf_stop_pid "$pid" ;; esac
    done
    sf_keep_or_remove "$work" "$keep"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

q() {
    "$bindir/psql" -X -q -At -F $'\t' -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres "$@"
}

printf 'build\tlabel\tpostgres\tsnowflake\tpg_config\tmax_drift_ms\n' > "$work/builds.tsv"
for ((b = 0; b < nb; b++)); do
    use_build "$b"
    mkdir -m 755 "$dir"
    [ "${#as_server[@]}" -eq 0 ] || chown postgres "$dir"
    "${as_server[@]}" "$bindir/initdb" -D "$data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1
    cat >> "$data/postgresql.conf" <<CONF
# test/bench/restart.sh
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
shared_preload_libraries = 'snowflake'
snowflake.node_id = 1
shared_buffers = 128MB
autovacuum = off
log_line_prefix = '%n [%p] '
CONF
    start_server
    q -c "CREATE EXTENSION snowflake" \
      -c "CREATE TABLE rs_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int)" \
      -c "CREATE TABLE rs_bigserial (id bigserial PRIMARY KEY, v int)" >/dev/null
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$b" "${labels[b]}" "${versions[b]}" \
        "$(q -c "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" \
        "${pgcs[b]}" "$(q -c "SHOW snowflake.max_drift_ms")" >> "$work/builds.tsv"
done
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
        }' "$1" "$bindir/psql" -X -q -At -F $'\t' -h "$dir" -p "$port" -U postgres -d postgres -c \
        "INSERT INTO rs_snowflake (v) VALUES (1) RETURNING id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
}

# Unix ms of a key's time (default epoch and layout).
key_ms() { echo $((($1 >> 22) + 1704067200000)); }

# Stop the current build's server in mode $1 (fast or immediate) after
# noting the last IDs, start it, and print "start_to_first_ms<TAB>ready_ms
# <TAB>lead_ms<TAB>gap_ms<TAB>bigserial_skipped<TAB>floor" (floor: 1 if the server
# logged that this start placed the IDs past the clock, else 0); the
# reason it logged goes to $work/reasons.tsv.  ready_ms: from the start to
# the server's log line "database system is ready to accept connections"
# (its prefix %n is the Unix time in ms).
restart_measured() {
    local mode=$1 last_sf last_bs t0 res ms id clock first_bs i logsize reason ready
    # The last ID before the stop at the clock, not ahead of it (a burst
    # before, or a floor, may still lead): a bounded wait.
    for ((i = 0; i < 100; i++)); do
        [ "$(q -c "SELECT lead_ms <= 0 FROM snowflake_stats")" = t ] && break
        sleep 0.1
    done
    last_sf=$(q -c "INSERT INTO rs_snowflake (v) VALUES (0) RETURNING id")
    last_bs=$(q -c "INSERT INTO rs_bigserial (v) VALUES (0) RETURNING id")
    stop_server "$mode"
    logsize=$(stat -c %s "$dir/server.log")
    t0=$(perl -MTime::HiRes=time -e 'printf "%.6f", time()')
    start_server
    res=$(first_id "$t0")
    IFS=$'\t' read -r ms id clock <<< "$res"
    first_bs=$(q -c "INSERT INTO rs_bigserial (v) VALUES (1) RETURNING id")
    # The floor's log line is written before the first ID is issued.
    reason=$(tail -c +$((logsize + 1)) "$dir/server.log" |
             sed -nE 's/.*snowflake IDs resume at -?[0-9]+ ms past the clock, because (.*)$/\1/p' | head -n 1)
    [ -z "$reason" ] || printf '%s\t%s\t%s\n' "$cur" "$mode" "$reason" >> "$work/reasons.tsv"
    ready=$(tail -c +$((logsize + 1)) "$dir/server.log" |
            perl -e 'my $t0 = shift; while (<STDIN>) { if (/^(\d+\.\d+) .*database system is ready to accept connections/) { printf "%.1f\n", ($1 - $t0) * 1000; last } }' "$t0")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$ms" "${ready:--}" $(($(key_ms "$id") - clock)) \
        $(($(key_ms "$id") - $(key_ms "$last_sf"))) $((first_bs - last_bs - 1)) $((${#reason} > 0))
}

# Latencies (us) of a pgbench run's transactions from its -l logs, minus
# the schedule lag that --rate puts in them, one a line.
latencies() {
    cat "$1".* | awk '$3 ~ /^[0-9]+$/ { lag = (NF >= 7 && $7 ~ /^[0-9]+$/) ? $7 : 0; print $3 - lag }'
    rm -f "$1".*
}

# One measurement of build $1 after a stop in mode $2, repetition $3: a
# start, the everyday inserts, another start of the same kind and a burst.
measure() {
    local kind pids m m2 burst load
    cur=$1
    use_build "$1"
    load=$(cut -d' ' -f1 /proc/loadavg)
    m=$(restart_measured "$2")
    # The everyday inserts right after the start, both tables at once.
    pids=()
    for kind in snowflake bigserial; do
        "$bindir/pgbench" -n -M prepared -c 1 -j 1 -R 50 -T "$seconds" -l \
            --log-prefix="$work/ev.$kind" -f "$work/ev_$kind.sql" \
            -h "$dir" -p "$port" -U postgres postgres >"$work/pgbench.$kind.log" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    for kind in snowflake bigserial; do
        latencies "$work/ev.$kind" | sed "s/^/$1\t$2\t$kind\t/" >> "$work/lat.tsv"
    done
    # Another start of the same kind, then a burst at once.
    m2=$(restart_measured "$2")
    burst=$(q -c "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint" \
              -c "SELECT count(*) FROM snowflake_nextval_batch(1000000)" \
              -c "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint" |
            awk 'NR == 1 { a = $1 } NR == 3 { print $1 - a }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$m" "$burst" "${m2##*$'\t'}" "$load" >> "$raw"
}

printf 'build\tmode\trep\tstart_to_first_ms\tstart_to_ready_ms\tlead_ms\tgap_ms\tbigserial_skipped\tfloor\tburst_ms\tburst_floor\tload1\n' > "$raw"
: > "$work/lat.tsv"
: > "$work/reasons.tsv"
log "servers in $work/b*; $reps repetitions of each kind of start${before:+, builds ${labels[0]} and ${labels[1]} in turn}"
step=0
for ((rep = 1; rep <= reps; rep++)); do
    modes=(fast immediate)
    ((rep % 2)) || modes=(immediate fast)
    for mode in "${modes[@]}"; do
        # The order of the builds alternates from one measurement to the next.
        order=()
        for ((b = 0; b < nb; b++)); do order+=($(((b + step) % nb))); done
        step=$((step + 1))
        for b in "${order[@]}"; do
            log "repetition $rep: ${labels[b]:+${labels[b]}: }stop -m $mode, start, the everyday inserts, another start, a burst"
            measure "$b" "$mode" "$rep"
        done
    done
done
for ((b = 0; b < nb; b++)); do
    use_build "$b"
    stop_server fast
done

# The report.
load_end=$(loadavg)
perl - "$work" "$cmdline" "$reps" "$seconds" "$(uname -m)" "$(nproc)" \
    "${SNOWFLAKE_BENCH_GIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')}" \
    "$load_start" "$load_end" "${SNOWFLAKE_BENCH_WHERE:-}" <<'PERL' > "$output"
use strict;
use warnings;
my ($work, $cmd, $reps, $secs, $arch, $cpus, $commit, $load0, $load1, $where) = @ARGV;
sub median { my @v = sort { $a <=> $b } @_; return @v ? $v[ int($#v / 2) ] : '-'; }
sub pct { my ($p, @v) = @_; @v = sort { $a <=> $b } @v; return @v ? $v[ int($p * $#v + 0.5) ] : '-'; }
sub range { my @v = sort { $a <=> $b } @_; return @v ? "$v[0] – $v[-1]" : '-'; }
sub rows
{
	my ($file, $header) = @_;
	open my $fh, '<', "$work/$file" or die "$file: $!";
	<$fh> if $header;
	my @r = map { chomp; [ split /\t/, $_, -1 ] } <$fh>;
	close $fh;
	return @r;
}
my @builds = rows('builds.tsv', 1);
my $two = @builds > 1;
my (%m, %floors, %starts, @loads, %bload);
foreach my $r (rows('raw.tsv', 1))
{
	my ($b, $mode, $rep, @f) = @$r;
	push @{ $m{$b}{$mode}[$_] }, $f[$_] for grep { $f[$_] ne '-' } 0 .. 4;
	push @{ $m{$b}{$mode}[5] }, $f[6];
	$floors{$b}{$mode} += $f[5] + $f[7];
	$starts{$b}{$mode} += 2;
	push @loads, $f[8];
	push @{ $bload{$b} }, $f[8];
}
my %l;
push @{ $l{ $_->[0] }{ $_->[1] }{ $_->[2] } }, $_->[3] / 1000 foreach rows('lat.tsv', 0);
my %why;
$why{ $_->[0] }{ $_->[1] }{ $_->[2] }++ foreach rows('reasons.tsv', 0);
my %name = (fast => 'clean restart (`-m fast`)', immediate => 'crash (`-m immediate`)');
my @drifts = map { $_->[5] } @builds;
my $drift = (grep { $_ ne $drifts[0] } @drifts) ? 'see the builds' : $drifts[0];

print "# What a start costs: clean restarts and crashes",
  ($two ? ", $builds[0][1] beside $builds[1][1]" : ''), "\n\n";
print "`$cmd`, commit $commit, $builds[-1][2], $cpus CPUs ($arch)", ($where ne '' ? " $where" : ''), ";\n";
printf "load average at the start %s, at the end %s (1-minute load at each measured start: median %s, %s);\n",
  $load0, $load1, median(@loads), range(@loads);
print "`snowflake.max_drift_ms` = $drift, fsync and synchronous_commit on, $reps repetitions of each kind of\n";
print "start", ($two ? " and build" : ''), ", interleaved. Medians over the repetitions, with min – max.\n\n";
if ($two)
{
	print "Two builds of the extension, each on a throwaway server of its own, both servers running\n";
	print "throughout; each measurement is taken on one build and then on the other, the order alternating,\n";
	print "so that both see the same load on the machine.\n\n";
	print "| build | extension version | `snowflake.max_drift_ms` | installation (`pg_config`) | 1-minute load at its measured starts, median (min – max) |\n|---|---|---:|---|---:|\n";
	printf "| %s | %s | %s | `%s` | %s (%s) |\n", $_->[1], $_->[3], $_->[5], $_->[4], median(@{ $bload{ $_->[0] } }), range(@{ $bload{ $_->[0] } })
	  foreach @builds;
	print "\n";
}
print "*Regime* is what the server's log says of each start of that kind (the measured one and the one\n";
print "before the batch): *floor* when it placed the first IDs past the clock plus `snowflake.max_drift_ms`\n";
print "(\"snowflake IDs resume at N ms past the clock, because ...\"), *resume* when it resumed right after\n";
print "the last ID. *Of which to \"ready to accept connections\"* is PostgreSQL's own part, up to that line\n";
print "of the server's log (after a crash: crash recovery, which begins with an fsync of the whole data\n";
print "directory); the rest is pg_ctl noticing, the client's connection and its INSERT.\n\n";
my $bcol = $two ? ' build |' : '';
print "| start |$bcol regime | start to first ID, ms | of which to \"ready to accept connections\", ms | first ID's lead over the clock, ms | gap after the last ID before the stop, ms | bigserial values skipped | `snowflake_nextval_batch(1000000)` right after the start, ms |\n";
print "|---|", ($two ? '---|' : ''), "---|---:|---:|---:|---:|---:|---:|\n";
foreach my $mode (qw(fast immediate))
{
	foreach my $b (@builds)
	{
		my $i = $b->[0];
		my ($f, $n) = ($floors{$i}{$mode} // 0, $starts{$i}{$mode} // 0);
		my $regime = $f == $n ? "floor at $f of $n starts" : $f == 0 ? "resume at $n of $n starts" : "mixed: floor at $f of $n starts";
		printf "| %s |%s %s | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s (%s) |\n", $name{$mode},
		  ($two ? " $b->[1] |" : ''), $regime, map { (median(@$_), range(@$_)) } @{ $m{$i}{$mode} };
	}
}
my @reasons;
foreach my $mode (qw(fast immediate))
{
	foreach my $b (@builds)
	{
		my $w = $why{ $b->[0] }{$mode} // {};
		push @reasons, sprintf("- %s%s: %s", ($two ? "$b->[1], " : ''), $name{$mode},
			join('; ', map { "\"because $_\" ($w->{$_})" } sort keys %$w))
		  if %$w;
	}
}
print "\nThe reasons the server logged for the floor:\n\n", join("\n", @reasons), "\n" if @reasons;
print "\nEveryday inserts right after the start: one client per table, 50 single-row inserts a second\n";
print "for $secs s, snowflake and bigserial at the same time; every transaction's latency, ms.\n\n";
print "| start |$bcol key | transactions | median | p99 | max |\n|---|", ($two ? '---|' : ''), "---|---:|---:|---:|---:|\n";
foreach my $mode (qw(fast immediate))
{
	foreach my $b (@builds)
	{
		foreach my $kind (qw(snowflake bigserial))
		{
			my @v = @{ $l{ $b->[0] }{$mode}{$kind} // [] };
			printf "| %s |%s %s | %d | %.2f | %.2f | %.2f |\n", $name{$mode}, ($two ? " $b->[1] |" : ''),
			  $kind, scalar @v, median(@v), pct(0.99, @v), pct(1, @v);
		}
	}
}
PERL
log "report written to $output"
