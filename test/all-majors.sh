#!/usr/bin/env bash
# test/check.sh --all-majors: what CI runs (.ci/run).  Root only.
#
#   0. every package any step needs on this host, in one apt-get run
#      (test/host-deps.sh), before anything runs in parallel;
#   1. the Patroni failover test (test/patroni-check.sh) on the PostgreSQL
#      installed on this host (PG_CONFIG, PG_MAJOR or the newest installed,
#      as test/check.sh picks), alone, while the chroots are built;
#   2. side by side, each one's output shown whole when it ends:
#      every suite (test/check.sh) on that PostgreSQL, and every suite on
#      PostgreSQL 17 (Debian trixie), 18 (Debian sid) and 19 (Debian sid
#      with experimental, until sid has it) in chroots (test/chroot-check.sh),
#      built while step 1 runs (or found built: they are reused by later
#      runs), each starting as soon as its chroot is ready; there
#      test/check.sh also runs TAP files without the preload (on 17 and 19:
#      18's DSM registry code is 17's, see src/compat.h; left out on 18 to
#      keep CI under an hour), and the step fails unless it reports they
#      passed.
#
# Each step's output is shown as it runs; at the end a summary, which also
# lists the TAP files a step skipped because an extension or a program
# they need is not installed there (test/check.sh).  Fails if any step
# failed or did not report that every one of its suites ran.
# CHROOT_MAJORS="17" restricts step 3 (default "17 18 19").
set -uo pipefail
# Each major's suites are followed by the Debian package stage; on 18 and
# later the extension image is built and tested (image/build.sh).
export SNOWFLAKE_DEB=${SNOWFLAKE_DEB:-1}
export SNOWFLAKE_IMAGE=${SNOWFLAKE_IMAGE:-1}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "test/check.sh --all-majors must run as root (chroots)" >&2; exit 2; }
majors=${CHROOT_MAJORS:-17 18 19}
# The majors whose no-preload pass is left out: 18, whose DSM registry code
# (src/compat.h) is 17's, while 19's differs.
NO_PRELOAD_SKIP=${NO_PRELOAD_SKIP:-18}
logs=$(mktemp -d /tmp/snowflake-all-majors.XXXXXX)
ports_made=
preps=()
declare -A step_pid=() step_marker=()
cleanup() {
    local p
    for p in "${preps[@]}" "${step_pid[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    rm -rf "$logs" ${ports_made:+"$ports_made"}
}
trap cleanup EXIT
start=$(date +%s)

# Install once, then fork.  The chroot preparations run beside the native
# stage; on a new machine each of them used to install debootstrap while
# the native stage installed its own packages, and every apt-get but one
# failed at once on dpkg's lock (a CI run that fails only on a machine that
# never ran it).  So everything the host needs is installed here, in one
# apt-get, before anything runs in parallel (test/host-deps.sh), and from
# then on no stage may install a host package: SF_NO_HOST_APT makes
# sf_apt_install (test/lib.sh) fail, naming the package to add to
# test/host-deps.sh, instead of racing the others for the lock.
echo "==> [host] installing what every stage needs (test/host-deps.sh)"
host_t0=$(date +%s)
if ! bash "$here/host-deps.sh"; then
    echo "FAILED: the host's packages could not be installed" >&2
    exit 1
fi
export SF_NO_HOST_APT=1
host_seconds=$(($(date +%s) - host_t0))

# The chroots are built (or found built) in the background meanwhile; only
# after the install step above has finished (see there why).
for m in $majors; do
    bash "$here/chroot-check.sh" "$m" --prepare >"$logs/prepare-$m.log" 2>&1 &
    preps+=($!)
done

declare -A result seconds skips failures
# Judge step $1 from its exit status $2 and its log: passed only if it
# exited 0 and its log has the line $3 (every suite reported as run).
judge_step() {
    local name=$1 rc=$2 marker=$3
    skips[$name]=$(sed -n 's/^==> skipped: //p' "$logs/$name.log")
    failures[$name]=$(sed -n 's/^==> failed: //p' "$logs/$name.log")
    if [ "$rc" -ne 0 ]; then
        result[$name]="FAILED (exit $rc)"
    elif ! grep -qE "$marker" "$logs/$name.log"; then
        result[$name]="FAILED (did not report every suite passed)"
    else
        result[$name]=passed
    fi
}

# Run step $1 in the foreground, its output shown as it comes.
run_step() {
    local name=$1 marker=$2 t0 rc
    shift 2
    t0=$(date +%s)
    echo "==> [$name] $*"
    "$@" 2>&1 | tee "$logs/$name.log"
    rc=${PIPESTATUS[0]}
    seconds[$name]=$(($(date +%s) - t0))
    judge_step "$name" "$rc" "$marker"
}

# Start step $1 in the background: its output goes to $logs/$1.log, and
# "exit-status seconds" to $logs/$1.rc when it ends.
start_step() {
    local name=$1 marker=$2
    shift 2
    echo "==> [$name] started beside the others: $*"
    step_marker[$name]=$marker
    (
        t0=$(date +%s)
        "$@" >"$logs/$name.log" 2>&1
        rc=$?
        echo "$rc $(($(date +%s) - t0))" >"$logs/$name.rc"
    ) &
    step_pid[$name]=$!
}

# Wait for the background step $1, show its whole output, judge it.
finish_step() {
    local name=$1 rc secs
    wait "${step_pid[$name]}"
    read -r rc secs <"$logs/$name.rc" || { rc=1 secs=0; }
    echo "==> [$name] output ($secs s):"
    cat "$logs/$name.log"
    seconds[$name]=$secs
    judge_step "$name" "$rc" "${step_marker[$name]}"
}

order=(patroni native)
# Every stage's servers take their loopback ports from one shared
# reservation directory (PostgreSQL::Test's PG_TEST_PORT_DIR, which
# test/chroot-check.sh mounts into each chroot), so that two stages never
# pick the same port.
# Not under $logs: the native stage's postgres user must reach it, and
# mktemp makes $logs for root only.
if [ -z "${PG_TEST_PORT_DIR:-}" ]; then
    PG_TEST_PORT_DIR=$(mktemp -d /tmp/snowflake-ports.XXXXXX)
    ports_made=$PG_TEST_PORT_DIR
fi
export PG_TEST_PORT_DIR
sf_port_dir "$PG_TEST_PORT_DIR"
run_step patroni '^==> patroni: every check passed' bash "$here/patroni-check.sh"

# The native stage and the majors' stages run side by side: their servers
# spend most of their time waiting (on fsync, on the clock, on each other),
# so on 2 CPUs four at once take far less than one after another (the
# native stage alone took 29 minutes, the chroots side by side 41 after
# it), and a busy machine is what every test must hold on anyway.
# (A host with 17 or later also reports its TAP files without the preload.)
# The framework recipes and the backup tools' tests run natively whatever
# the environment says: CI must not pass with test/t/046_frameworks.pl,
# 061_pgbackrest.pl or 062_barman.pl left out (the chroots skip the last
# two: SF_BACKUP_TOOLS=0), and so does the model (test/model/run.sh; the
# chroots leave it out: SF_MODEL=0).  The seeded fault campaign (test/t/051_chaos.pl)
# runs its two minutes natively, seed 1; the chroot stages run its
# 20-second smoke.
start_step native '^==> PostgreSQL [0-9]+: every suite passed \(pg_regress, isolation, fuzzing \([1-9][0-9]* targets, [1-9][0-9]* s\), the model \([1-9][0-9]* s\), [1-9][0-9]* TAP files(, [1-9][0-9]* TAP files without the preload)?(; skipped, not installed here: .+)?\)$' \
    env SF_FRAMEWORKS=1 SF_BACKUP_TOOLS=1 SF_MODEL=1 SNOWFLAKE_CHAOS_SECONDS=120 bash "$here/check.sh"
i=0
for m in $majors; do
    order+=("pg$m")
    if ! wait "${preps[$i]}"; then
        cat "$logs/prepare-$m.log"
        result[pg$m]="FAILED (chroot not built)"
        seconds[pg$m]=0
    else
        # The majors not in NO_PRELOAD_SKIP also run TAP files without the
        # preload; 18 and later test the extension image.
        image= no_preload=', [1-9][0-9]* TAP files without the preload' pass=1
        [ "$m" -lt 18 ] || image=', the extension image'
        case " $NO_PRELOAD_SKIP " in
            *" $m "*) no_preload= pass=0 ;;
        esac
        start_step "pg$m" "^==> PostgreSQL $m: every suite passed \\(pg_regress, isolation, fuzzing \\([1-9][0-9]* targets, [^)]*\\), [1-9][0-9]* TAP files$no_preload$image(; skipped, not installed here: .+)?\\)\$" \
            env SNOWFLAKE_NO_PRELOAD_PASS=$pass bash "$here/chroot-check.sh" "$m"
    fi
    i=$((i + 1))
done
preps=()
finish_step native
for m in $majors; do
    [ -z "${step_pid[pg$m]:-}" ] || finish_step "pg$m"
done

echo
echo "==> summary ($(($(date +%s) - start)) s in all)"
printf '    %-8s %-45s %4d s\n' host "installed (test/host-deps.sh)" "$host_seconds"
status=0
for name in "${order[@]}"; do
    printf '    %-8s %-45s %4d s\n' "$name" "${result[$name]}" "${seconds[$name]}"
    while IFS= read -r line; do
        [ -z "$line" ] || printf '             skipped: %s\n' "$line"
    done <<<"${skips[$name]:-}"
    while IFS= read -r line; do
        [ -z "$line" ] || printf '             failed: %s\n' "${line:0:400}"
    done <<<"${failures[$name]:-}"
    [ "${result[$name]}" = passed ] || status=1
done
if [ "$status" -ne 0 ]; then
    echo "FAILED: not every major passed every suite" >&2
    exit 1
fi
echo "==> every major passed every suite"
