#!/usr/bin/env bash
# test/check.sh --all-majors: what CI runs (.ci/run).  Root only.
#
#   1. every suite (test/check.sh) on the PostgreSQL installed on this host
#      (PG_CONFIG, PG_MAJOR or the newest installed, as test/check.sh picks);
#   2. the Patroni failover test (test/patroni-check.sh) on that PostgreSQL;
#   3. every suite on PostgreSQL 17 (Debian trixie) and 18 (Debian sid) in
#      chroots (test/chroot-check.sh), built while step 1 runs and reused
#      by later runs; there test/check.sh also runs TAP files without the
#      preload, and the step fails unless it reports they passed.  On 17
#      (SNOWFLAKE_CITUS_MAJORS) the Citus test must run, not skip: Citus is
#      built from ../shared/vendor once per chroot (test/citus.sh).
#
# Each step's output is shown as it runs; at the end a summary.  Fails if
# any step failed or did not report that every one of its suites ran.
# CHROOT_MAJORS="17" restricts step 3 (default "17 18").
set -uo pipefail
# Each major's suites are followed by the Debian package stage.
export SNOWFLAKE_DEB=${SNOWFLAKE_DEB:-1}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "test/check.sh --all-majors must run as root (chroots)" >&2; exit 2; }
majors=${CHROOT_MAJORS:-17 18}
logs=$(mktemp -d /tmp/snowflake-all-majors.XXXXXX)
preps=()
cleanup() {
    local p
    for p in "${preps[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    rm -rf "$logs"
}
trap cleanup EXIT
start=$(date +%s)

# The chroots are built (or found built) in the background meanwhile.
for m in $majors; do
    bash "$here/chroot-check.sh" "$m" --prepare >"$logs/prepare-$m.log" 2>&1 &
    preps+=($!)
done

declare -A result seconds
run_step() {
    local name=$1 marker=$2 t0 rc
    shift 2
    t0=$(date +%s)
    echo "==> [$name] $*"
    "$@" 2>&1 | tee "$logs/$name.log"
    rc=${PIPESTATUS[0]}
    seconds[$name]=$(($(date +%s) - t0))
    if [ "$rc" -ne 0 ]; then
        result[$name]="FAILED (exit $rc)"
    elif ! grep -qE "$marker" "$logs/$name.log"; then
        result[$name]="FAILED (did not report every suite passed)"
    else
        result[$name]=passed
    fi
}

order=(native patroni)
# (A host with 17 or later also reports its TAP files without the preload.)
run_step native '^==> PostgreSQL [0-9]+: every suite passed \(pg_regress, isolation, [1-9][0-9]* TAP files(, [1-9][0-9]* TAP files without the preload)?\)$' \
    bash "$here/check.sh"
run_step patroni '^==> patroni: every check passed' bash "$here/patroni-check.sh"

i=0
for m in $majors; do
    order+=("pg$m")
    if ! wait "${preps[$i]}"; then
        cat "$logs/prepare-$m.log"
        result[pg$m]="FAILED (chroot not built)"
        seconds[pg$m]=0
    else
        # 17 and later also run TAP files without the preload.
        run_step "pg$m" "^==> PostgreSQL $m: every suite passed \\(pg_regress, isolation, [1-9][0-9]* TAP files, [1-9][0-9]* TAP files without the preload\\)\$" \
            bash "$here/chroot-check.sh" "$m"
    fi
    i=$((i + 1))
done
preps=()

echo
echo "==> summary ($(($(date +%s) - start)) s in all)"
status=0
for name in "${order[@]}"; do
    printf '    %-8s %-45s %4d s\n' "$name" "${result[$name]}" "${seconds[$name]}"
    [ "${result[$name]}" = passed ] || status=1
done
if [ "$status" -ne 0 ]; then
    echo "FAILED: not every major passed every suite" >&2
    exit 1
fi
echo "==> every major passed every suite"
