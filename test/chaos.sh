#!/usr/bin/env bash
# test/chaos.sh --seed S --minutes M [--keep]: the seeded fault campaign of
# test/t/051_chaos.pl (engine and checker in test/t/ChaosTest.pm) for M
# minutes: install what is missing, build and install snowflake (as
# test/check.sh does, PG_CONFIG picks the PostgreSQL), run the campaign
# against a primary and a streaming standby on this machine, print the
# summary (faults by kind, IDs acknowledged, refusals by SQLSTATE,
# violations) and the command that reproduces it.  Exits non-zero on a
# violation.  The history (every client's acknowledgements and errors, the
# schedule of faults) and the summary are left in a directory it names;
# --keep also keeps the servers' logs (the TAP run's tmp_check).
#
# --major N (root) runs the campaign on PostgreSQL N in the Debian chroot
# of test/chroot-check.sh instead, unless N is the PostgreSQL here (17 and
# later: the restart without the preload is one of the faults there); the
# summary is then in the TAP output.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

seed=1 minutes=2 keep=0 major=
usage="usage: test/chaos.sh --seed S --minutes M [--major N] [--keep]"
while [ $# -gt 0 ]; do
    case $1 in
        --seed) seed=${2:?$usage}; shift 2 ;;
        --minutes) minutes=${2:?$usage}; shift 2 ;;
        --major) major=${2:?$usage}; shift 2 ;;
        --keep) keep=1; shift ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[[ $seed =~ ^[0-9]+$ ]] || { echo "--seed takes a whole number" >&2; exit 2; }
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "--minutes takes a number" >&2; exit 2; }
[[ -z $major || $major =~ ^[0-9]+$ ]] || { echo "--major takes a PostgreSQL major version" >&2; exit 2; }
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 0.5 }')

host_major=$("${PG_CONFIG:-pg_config}" --version 2>/dev/null | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
if [ -n "$major" ] && [ "$major" != "$host_major" ]; then
    exec env PROVE_TESTS=test/t/051_chaos.pl SNOWFLAKE_CHAOS_SEED="$seed" \
        SNOWFLAKE_CHAOS_SECONDS="$seconds" SF_FRAMEWORKS=0 SNOWFLAKE_DEB= SNOWFLAKE_IMAGE= \
        bash "$here/chroot-check.sh" "$major"
fi

source "$here/setup.sh"

WERROR=${WERROR:-1}
ASSERTS=${ASSERTS:-1}
sf_pick_major
wanted=()
sf_wanted_packages
sf_apt_install "${wanted[@]}" libdbd-pg-perl
sf_build_install
sf_pick_runner
if [ "$keep" -eq 1 ] && [ "$(id -u)" -eq 0 ]; then
    trap - EXIT
fi

out=$(mktemp -d /tmp/snowflake-chaos.XXXXXX)
chmod a+rwx "$out"
log "seed $seed, $minutes minutes of faults on PostgreSQL $PG_MAJOR; history in $out"
status=0
"${RUN_AS[@]}" env PATH="$PG_BINDIR:$PATH" PROVE_TESTS=test/t/051_chaos.pl \
    SNOWFLAKE_CHAOS_SEED="$seed" SNOWFLAKE_CHAOS_SECONDS="$seconds" SNOWFLAKE_CHAOS_OUT="$out" \
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
