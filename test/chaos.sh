#!/usr/bin/env bash
# test/chaos.sh --seed S --minutes M [--dir DIR] [--port P] [--keep]: the
# seeded fault campaign of test/t/051_chaos.pl (engine and checker in
# test/t/ChaosTest.pm) for M minutes: install what is missing (apt-get, as
# test/check.sh does: libfaketime, the Perl DBI driver and the rest),
# build snowflake with WERROR=1 ASSERTS=1 (the defaults; an assertion
# build) and install it into the PostgreSQL that PG_CONFIG names (default:
# the newest installed, or PG_MAJOR's), run the campaign against a primary
# and a streaming standby on this machine, print the summary (faults by
# kind, IDs acknowledged, refusals by SQLSTATE, violations) and the command
# that reproduces it: the same seed and minutes, rebuilt the same way, into
# the same PostgreSQL.  Exits non-zero on a violation.
#
# --dir DIR    where everything goes (default: a new /tmp/snowflake-chaos.*):
#              the history (every client's acknowledgements and errors, the
#              schedule of faults) and the summary in DIR, and the copy of
#              the tree the campaign runs in, with the servers' data
#              directories and logs under tree/tmp_check (the TAP framework
#              removes the data directories of a run that passed), in
#              DIR/tree, removed at the end unless --keep
# --port P     the servers listen on the first free ports from P on, P
#              from 10200 to 32767, the range of PostgreSQL's TAP framework
#              (default: free ports from a random one, as every TAP test)
# --no-preload (PostgreSQL 17 and later) both servers run without
#              snowflake in shared_preload_libraries throughout, its shared
#              state in the DSM registry: the restart without the preload,
#              otherwise one of the faults on 17 and later, is a clean
#              restart then, and a standby started without standby.signal
#              is skipped (such a start cannot be seen without the preload)
#
# --major N (root) runs the campaign on PostgreSQL N in the Debian chroot
# of test/chroot-check.sh instead, unless N is the PostgreSQL here (17 and
# later: the restart without the preload is one of the faults there); the
# summary is then in the TAP output.
#
# The seed chooses snowflake.node_id_span too: 2 for an odd seed (a split
# brain must share no key), 1 for an even one (a failover after a raised
# lead must share none); test/t/ChaosTest.pm, span_of_seed, says why.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

seed=1 minutes=2 keep=0 major= dir= port= no_preload=
usage="usage: test/chaos.sh --seed S --minutes M [--dir DIR] [--port P] [--major N] [--no-preload] [--keep]"
while [ $# -gt 0 ]; do
    case $1 in
        --seed) seed=${2:?$usage}; shift 2 ;;
        --minutes) minutes=${2:?$usage}; shift 2 ;;
        --major) major=${2:?$usage}; shift 2 ;;
        --dir) dir=${2:?$usage}; shift 2 ;;
        --port) port=${2:?$usage}; shift 2 ;;
        --keep) keep=1; shift ;;
        --no-preload) no_preload=1; shift ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[[ $seed =~ ^[0-9]+$ ]] || { echo "--seed takes a whole number" >&2; exit 2; }
[[ -z $port || ( $port =~ ^[0-9]+$ && $port -ge 10200 && $port -le 32767 ) ]] ||
    { echo "--port takes a port number from 10200 to 32767" >&2; exit 2; }
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "--minutes takes a number" >&2; exit 2; }
[[ -z $major || $major =~ ^[0-9]+$ ]] || { echo "--major takes a PostgreSQL major version" >&2; exit 2; }
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 0.5 }')

host_major=$("${PG_CONFIG:-pg_config}" --version 2>/dev/null | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
no_preload_check() {
    [ -z "$no_preload" ] || [ "$1" -ge 17 ] ||
        { echo "--no-preload needs PostgreSQL 17 or later (the DSM registry), not $1" >&2; exit 2; }
}
if [ -n "$major" ] && [ "$major" != "$host_major" ]; then
    no_preload_check "$major"
    [ -z "$dir$port" ] || { echo "--dir and --port apply to a campaign on this machine, not with --major $major" >&2; exit 2; }
    exec env PROVE_TESTS=test/t/051_chaos.pl SNOWFLAKE_CHAOS_SEED="$seed" \
        SNOWFLAKE_CHAOS_SECONDS="$seconds" ${no_preload:+SNOWFLAKE_CHAOS_NO_PRELOAD=1} \
        SF_FRAMEWORKS=0 SNOWFLAKE_DEB= SNOWFLAKE_IMAGE= \
        bash "$here/chroot-check.sh" "$major"
fi

source "$here/setup.sh"

WERROR=${WERROR:-1}
ASSERTS=${ASSERTS:-1}
sf_pick_major
no_preload_check "$PG_MAJOR"
wanted=()
sf_wanted_packages
sf_apt_install "${wanted[@]}" libdbd-pg-perl
sf_build_install
if [ -n "$dir" ]; then
    mkdir -p "$dir"
    out=$(cd "$dir" && pwd)
    [ ! -e "$out/tree" ] || { echo "$out/tree exists: give --dir a directory without it" >&2; exit 2; }
    RUN_DIR=$out/tree
    cp -a "$SNOWFLAKE_ROOT/." "$RUN_DIR/"
    RUN_AS=()
    if [ "$(id -u)" -eq 0 ]; then
        chown -R postgres: "$RUN_DIR"
        RUN_AS=(runuser -u postgres --)
    fi
    [ "$keep" -eq 1 ] || trap 'rm -rf "$RUN_DIR"' EXIT
else
    sf_pick_runner
    if [ "$keep" -eq 1 ] && [ "$(id -u)" -eq 0 ]; then
        trap - EXIT
    fi
    out=$(mktemp -d /tmp/snowflake-chaos.XXXXXX)
fi
chmod a+rwx "$out"

# The command that reproduces this campaign: the same seed and length, the
# same build flags, the same PostgreSQL (ChaosTest.pm prints it).
pgc=$(command -v "$PG_CONFIG")
[[ $pgc == /* ]] || pgc=$PWD/$pgc
reproduce="PG_CONFIG=$pgc WERROR=$WERROR ASSERTS=$ASSERTS test/chaos.sh --seed $seed --minutes $minutes${no_preload:+ --no-preload}"
log "seed $seed, $minutes minutes of faults on PostgreSQL $PG_MAJOR${no_preload:+ without the preload}; history in $out"
status=0
"${RUN_AS[@]}" env PATH="$PG_BINDIR:$PATH" PROVE_TESTS=test/t/051_chaos.pl \
    SNOWFLAKE_CHAOS_SEED="$seed" SNOWFLAKE_CHAOS_SECONDS="$seconds" SNOWFLAKE_CHAOS_OUT="$out" \
    SNOWFLAKE_CHAOS_REPRODUCE="$reproduce" ${port:+SNOWFLAKE_CHAOS_PORT="$port"} \
    ${no_preload:+SNOWFLAKE_CHAOS_NO_PRELOAD=1} \
    make -C "$RUN_DIR" installcheck PG_CONFIG="$PG_CONFIG" REGRESS= ISOLATION= \
    >"$out/tap.log" 2>&1 || status=$?
# The faults injected, in order (the schedule's F lines: sequence, time, kind, parameters).
[ -f "$out/schedule" ] && awk -F'\t' '$1 == "F" { printf "fault %4d at %s  %-18s %s\n", $3, strftime("%H:%M:%S", $2), $4, $5 }' "$out/schedule"
echo
if [ -f "$out/summary" ]; then
    cat "$out/summary"
else
    tail -n 40 "$out/tap.log"
fi
[ "$keep" -eq 0 ] || log "kept $RUN_DIR (servers' logs in tmp_check/log)"
if [ "$status" -ne 0 ]; then
    echo "FAILED: the campaign found a violation or did not run (see $out/tap.log)" >&2
    exit 1
fi
log "history and summary in $out"
