#!/usr/bin/env bash
# The README's second command: install what is missing, build and install
# snowflake, then run every test suite against real servers the suites start
# themselves: pg_regress (sql/), the isolation specs (test/specs/) and the
# TAP tests (test/t/).  On PostgreSQL 17 and later the TAP files that hold
# in both modes (NO_PRELOAD_TESTS below) run a second time with servers that
# do not preload the library (SNOWFLAKE_TEST_NO_PRELOAD=1, see
# test/t/SnowflakeTest.pm).  Fails if any suite fails, or if a suite did not
# run.
#
#   PROVE_TESTS='test/t/010_crash.pl'   run only some TAP tests
#   SF_FRAMEWORKS=0   neither install the frameworks of the recipes
#                     (Python, Ruby, Java, Go) nor run their TAP file,
#                     test/t/046_frameworks.pl (test/chroot-check.sh sets it),
#                     nor pgjdbc and lib/pq through PgBouncer in 045
#   SF_BACKUP_TOOLS=0 do not install pgBackRest and Barman (test/chroot-check.sh
#                     sets it): test/t/061_pgbackrest.pl and 062_barman.pl
#                     then skip ("command NAME not found"), which is
#                     accepted as for anything test/setup.sh installed
#                     no package for
#   SNOWFLAKE_DEB=1   then test the Debian package too (test/deb-check.sh)
#   SNOWFLAKE_NO_PRELOAD_PASS=0  leave out the no-preload pass (CI does on
#                     18, whose DSM registry code is 17's, to save time)
#   SNOWFLAKE_IMAGE=1 (root, PostgreSQL 18 and later) build the extension
#                     image (image/build.sh) first, and run
#                     044_extension_dir.pl against its unpacked layers
#   SNOWFLAKE_UPGRADE_FROM=N    an older major that test/t/050_major_upgrade.pl
#       upgrades from, besides its upgrades within this major: test/setup.sh
#       installs PostgreSQL N and builds the extension for it too, when 050
#       is chosen, and the file must run those upgrades (test/chroot-check.sh
#       sets 18 for 19)
#
#   SF_MODEL=0        neither install Spin nor check the model of a key
#                     space's history (test/model/run.sh, a few minutes;
#                     test/chroot-check.sh sets it: the model does not
#                     depend on the PostgreSQL major)
#
#   SNOWFLAKE_FUZZ_SECONDS=N   how long the fuzz targets (test/fuzz/run.sh)
#       run in all, before the suites (default 60, or 0 with PROVE_TESTS:
#       0 runs them on their committed inputs only; test/chroot-check.sh
#       sets 0 unless told otherwise)
#
#   SNOWFLAKE_CHAOS_SECONDS=N   how long test/t/051_chaos.pl, the seeded
#       fault campaign, injects faults (default 20 s, a smoke run; CI's
#       native stage runs 120; test/chaos.sh runs longer ones), and
#       SNOWFLAKE_CHAOS_SEED=S its seed (default 1), and
#       SNOWFLAKE_CHAOS_NO_PRELOAD=1 its servers without the preload (17+)
#
#   test/check.sh --all-majors   (root, CI) every suite on the PostgreSQL
#       installed here (15 on Debian 12), then the Patroni failover test
#       (test/patroni-check.sh) against it, then every suite on PostgreSQL
#       17 and 18 in Debian trixie and sid chroots (test/chroot-check.sh).
#       Fails if any of them fails or did not run.
if [ "${1:-}" = "--all-majors" ]; then
    exec bash "$(dirname "${BASH_SOURCE[0]}")/all-majors.sh"
elif [ $# -gt 0 ]; then
    echo "usage: test/check.sh [--all-majors]" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
# The older major is installed only for the file that upgrades from it.
if [ -n "${SNOWFLAKE_UPGRADE_FROM:-}" ] &&
    ! grep -q '050_major_upgrade' <<<"${PROVE_TESTS:-test/t/050_major_upgrade.pl}"; then
    unset SNOWFLAKE_UPGRADE_FROM
fi
# snowflake 1.2, which test/t/085_upgrade_order.pl upgrades from, is built
# only for that file.
if grep -q '085_upgrade_order' <<<"${PROVE_TESTS:-test/t/085_upgrade_order.pl}"; then
    export SNOWFLAKE_OLD_RELEASE=1
fi
WERROR=${WERROR:-1}
ASSERTS=${ASSERTS:-1}
SF_TEST_DEPS=1
sf_setup

# No C function over 80 lines (CONTRIBUTING.md), checked before any suite
# runs: every run catches it, one of a few files (PROVE_TESTS) as well as
# CI's, not only a run that includes test/t/043_docs.pl.
if ! perl "$RUN_DIR/test/function-length.pl" "$RUN_DIR"/src/*.c; then
    echo "FAILED: a function in src/ is over 80 lines (test/function-length.pl)" >&2
    exit 1
fi
# No TAP file compares a background session's query_safe() result
# directly (test/query-safe.pl): 16.2's test framework leaves a trailing
# newline there, so such a file fails on 16 only, which CI does not run.
if ! perl "$RUN_DIR/test/query-safe.pl" "$RUN_DIR"/test/t/*.pl "$RUN_DIR"/test/t/*.pm; then
    echo "FAILED: a TAP file uses query_safe()'s result directly: read it through query_value() (test/query-safe.pl)" >&2
    exit 1
fi
# The SQL edition's committed files (sql-edition/dist, what users
# download) are what its sources build: checked before any suite too.
if ! perl "$RUN_DIR/sql-edition/build.pl" --check; then
    echo "FAILED: sql-edition/dist differs from what sql-edition/src builds (make sql-edition)" >&2
    exit 1
fi

# The fuzz targets (test/fuzz/run.sh): SNOWFLAKE_FUZZ_SECONDS in all,
# shared among them (default 60, or 0 when PROVE_TESTS chooses TAP files;
# 0 runs each only on its committed inputs, as the chroots of CI do).
# Built and run as the caller, in a directory of the copy; an input that
# fails goes into this tree's test/fuzz/corpus, to be committed with the
# fix.  The stage must report every target as run.
fuzz_seconds=${SNOWFLAKE_FUZZ_SECONDS:-$([ -n "${PROVE_TESTS:-}" ] && echo 0 || echo 60)}
fuzz_targets=$(make -s -C "$SNOWFLAKE_ROOT/test/fuzz" list | wc -w)
fuzz_out=$(mktemp /tmp/snowflake-fuzz.XXXXXX.log)
status=0
bash "$SNOWFLAKE_ROOT/test/fuzz/run.sh" --seconds "$fuzz_seconds" --build "$RUN_DIR/tmp_fuzz" \
    2>&1 | tee "$fuzz_out" || status=$?
if [ "$status" -ne 0 ] || [ "$fuzz_targets" -eq 0 ] ||
    ! grep -qE "^==> fuzz: every target ran: $fuzz_targets of $fuzz_targets targets, [1-9][0-9]* runs\$" "$fuzz_out"; then
    rm -f "$fuzz_out"
    echo "FAILED: the fuzz targets found a defect or did not all run (test/fuzz/run.sh)" >&2
    exit 1
fi
rm -f "$fuzz_out"
if [ "$fuzz_seconds" -gt 0 ]; then
    fuzz_summary="fuzzing ($fuzz_targets targets, $fuzz_seconds s)"
else
    fuzz_summary="fuzzing ($fuzz_targets targets, committed inputs only)"
fi

# The model of a key space's history (test/model/run.sh): Spin explores
# it, its counterexamples are replayed through the C rules.  Built and run
# as the caller, in the copy; it must print "model: PASS" (Spin missing is
# a failure there, not a skip).  Left out only by SF_MODEL=0, said so.
if [ "${SF_MODEL:-1}" = 0 ]; then
    echo "==> not checking the model (SF_MODEL=0: Spin is not installed; CI checks it natively)"
    model_summary=""
else
    model_out=$(mktemp /tmp/snowflake-model.XXXXXX.log)
    status=0
    model_start=$SECONDS
    PG_CONFIG="$PG_CONFIG" bash "$RUN_DIR/test/model/run.sh" 2>&1 |
        tee "$model_out" || status=$?
    if [ "$status" -ne 0 ] || ! grep -qx 'model: PASS' "$model_out"; then
        rm -f "$model_out"
        echo "FAILED: the model of a key space's history (test/model/run.sh)" >&2
        exit 1
    fi
    rm -f "$model_out"
    model_summary="the model ($((SECONDS - model_start)) s), "
fi

# The framework recipes' file runs only where their packages are installed.
FRAMEWORK_TESTS="test/t/046_frameworks.pl"
if [ "${SF_FRAMEWORKS:-1}" = 0 ] && [ -z "${PROVE_TESTS:-}" ]; then
    PROVE_TESTS=$(cd "$RUN_DIR" && ls -d test/t/*.pl |
        grep -vxF -f <(printf '%s\n' $FRAMEWORK_TESTS) | tr '\n' ' ')
    echo "==> not running $FRAMEWORK_TESTS (SF_FRAMEWORKS=0: the frameworks are not installed)"
fi
# 045_pgbouncer.pl runs pgjdbc, lib/pq and SQLAlchemy through PgBouncer only where the
# frameworks are installed; elsewhere it must run them (and fails without).
if [ "${SF_FRAMEWORKS:-1}" = 0 ]; then
    echo "==> 045_pgbouncer.pl: JDBC, Go and SQLAlchemy through PgBouncer skipped (SF_FRAMEWORKS=0)"
fi
# Show what the failed suites left (the regression diffs, the tail of each
# failed TAP file's log, or of every log when prove named none), say $1,
# remove the output file $out and exit 1.  The last lines name each failed
# file and its failed tests ("==> failed: ..."): CI keeps only the head
# and the tail of a long output, and test/all-majors.sh repeats them in
# its summary.
fail_with_logs() {
    local f file failed=()
    for f in "$RUN_DIR"/regression.diffs "$RUN_DIR"/output_iso/regression.diffs; do
        [ -f "$f" ] && { echo "==> $f"; cat "$f"; }
    done
    mapfile -t failed < <(sed -nE 's/^(test\/t\/[^ ]*\.pl) +\(Wstat: .*/\1/p' "$out" | sort -u)
    if [ "${#failed[@]}" -eq 0 ]; then
        find "$RUN_DIR/tmp_check" -name 'regress_log_*' 2>/dev/null | while read -r f; do
            echo "==> tail of $f"; tail -n 60 "$f"
        done
    fi
    for file in "${failed[@]}"; do
        f=$RUN_DIR/tmp_check/log/regress_log_$(basename "$file" .pl)
        [ -f "$f" ] && { echo "==> tail of $f"; tail -n 150 "$f"; }
    done
    echo
    for f in "$RUN_DIR"/regression.diffs "$RUN_DIR"/output_iso/regression.diffs; do
        [ -f "$f" ] && echo "==> failed: $(basename "$(dirname "$f")")/regression.diffs: $(grep -c '^diff ' "$f") files differ"
    done
    for file in "${failed[@]}"; do
        f=$RUN_DIR/tmp_check/log/regress_log_$(basename "$file" .pl)
        echo "==> failed: $file: $(grep -hoE 'not ok [0-9]+.*' "$f" 2>/dev/null | head -n 5 |
            tr '\n' ';' || true) $(grep -E "^$file +\(Wstat" "$out" | head -n 1 | sed -E 's/^[^(]*//')"
    done
    echo "FAILED: $1" >&2
    rm -f "$out"
    exit 1
}

# CI (.ci/run) builds the extension image on 18 and later, and the TAP
# file of the extension in a directory of its own runs against the image's
# unpacked layers (SNOWFLAKE_EXTENSION_DIR), not against a copy of the
# installed files.
image_tested=0
if [ -n "${SNOWFLAKE_IMAGE:-}" ] && [ "$PG_MAJOR" -ge 18 ]; then
    WERROR=$WERROR ASSERTS=$ASSERTS PG_CONFIG=$PG_CONFIG \
        bash "$SNOWFLAKE_ROOT/image/build.sh" --unpack "$RUN_DIR/tmp_image"
    export SNOWFLAKE_EXTENSION_DIR=$RUN_DIR/tmp_image
    image_tested=1
fi

# A server of its own host name (snowflake.node_id_from = 'hostname'):
# test/hostns.c runs it in a UTS namespace of its own.  The tests run as
# "postgres", and in a chroot no user namespace may be made without root:
# as root, the program is installed setuid root (it drops to the caller's
# user and group before it runs anything) in a directory of root's, and
# the tests are told where (SNOWFLAKE_HOSTNS).  Otherwise the tests compile
# it themselves and use a user namespace.
if [ "$(id -u)" -eq 0 ]; then
    hostns_dir=$(mktemp -d /tmp/snowflake-hostns.XXXXXX)
    trap 'rm -rf "$RUN_DIR" "$hostns_dir"' EXIT
    cc -O2 -Wall -Wextra -Werror -o "$hostns_dir/hostns" "$SNOWFLAKE_ROOT/test/hostns.c"
    chown root:postgres "$hostns_dir/hostns"
    chmod 4750 "$hostns_dir/hostns"
    chmod 755 "$hostns_dir"
    export SNOWFLAKE_HOSTNS=$hostns_dir/hostns
fi

out=$(mktemp /tmp/snowflake-check.XXXXXX.log)
chmod a+r "$out"
status=0
"${RUN_AS[@]}" env PATH="$PG_BINDIR:$PATH" ${PROVE_TESTS:+PROVE_TESTS="$PROVE_TESTS"} \
    ${SNOWFLAKE_HOSTNS:+SNOWFLAKE_HOSTNS="$SNOWFLAKE_HOSTNS"} \
    ${SNOWFLAKE_EXTENSION_DIR:+SNOWFLAKE_EXTENSION_DIR="$SNOWFLAKE_EXTENSION_DIR"} \
    SNOWFLAKE_FRAMEWORKS="${SF_FRAMEWORKS:-1}" \
    ${SNOWFLAKE_OLD_BINDIR:+SNOWFLAKE_OLD_BINDIR="$SNOWFLAKE_OLD_BINDIR"} \
    ${SNOWFLAKE_RELEASE_DIR:+SNOWFLAKE_RELEASE_DIR="$SNOWFLAKE_RELEASE_DIR"} \
    ${SNOWFLAKE_CHAOS_SECONDS:+SNOWFLAKE_CHAOS_SECONDS="$SNOWFLAKE_CHAOS_SECONDS"} \
    ${SNOWFLAKE_CHAOS_SEED:+SNOWFLAKE_CHAOS_SEED="$SNOWFLAKE_CHAOS_SEED"} \
    ${SNOWFLAKE_CHAOS_NO_PRELOAD:+SNOWFLAKE_CHAOS_NO_PRELOAD="$SNOWFLAKE_CHAOS_NO_PRELOAD"} \
    make -C "$RUN_DIR" installcheck PG_CONFIG="$PG_CONFIG" 2>&1 | tee "$out" || status=$?

if [ "$status" -ne 0 ]; then
    fail_with_logs "a test suite failed (see above)"
fi

# Every suite must have run: pg_regress and the isolation tester print
# "All N tests passed", prove prints "Result: PASS" after running tests.
fail=0
if [ "$(grep -cE '^# All [0-9]+ tests passed|^ *All [0-9]+ tests passed' "$out")" -lt 2 ]; then
    echo "FAILED: pg_regress or the isolation tester did not report its tests as passed" >&2
    fail=1
fi
if grep -q 'TAP tests not enabled' "$out" || ! grep -q '^Result: PASS' "$out"; then
    echo "FAILED: the TAP tests did not run" >&2
    fail=1
fi
# 050_major_upgrade.pl says when it did not upgrade from an older major:
# where one was installed for it, that is a failure.
if [ -n "${SNOWFLAKE_OLD_BINDIR:-}" ] && grep -q 'cross-major parts not run' "$out"; then
    echo "FAILED: test/t/050_major_upgrade.pl did not upgrade from PostgreSQL $SNOWFLAKE_UPGRADE_FROM" >&2
    fail=1
fi
tap_files=$(grep -cE '^test/t/.*\.pl \.+ ok' "$out" || true)
tap_results=$(grep -E '^test/t/.*\.pl \.+ ' "$out" || true)
tap_expected=$(cd "$RUN_DIR" && ls -d ${PROVE_TESTS:-test/t/*.pl} | wc -l)
# A file may skip only for one of two reasons, saying so:
#  - this major lacks what it tests ("skipped: ... need PostgreSQL N or
#    later" with N above this major);
#  - the server under test cannot create an extension it needs ("skipped:
#    extension NAME is not available on this server", asked of the server,
#    test/t/SnowflakeTest.pm's skip_without_extension), or a program it
#    needs is not there ("skipped: command NAME not found",
#    skip_without_command): a new major that other extensions have not
#    been packaged for yet, Citus (which no archive CI reaches ships), a
#    server built from source.  Accepted only for what test/setup.sh
#    installed no package for (SF_TEST_PROVIDES): a package it installed
#    must work;
#  - a tool, asked, says that it does not support the server under test
#    ("skipped: NAME VERSION does not support PostgreSQL N ...": pgBackRest
#    2.45 and 16): accepted only for a server built from source
#    (SF_PACKAGED_SERVER=0, test/setup.sh), which no package of the tool
#    promises to support; the archive's tools must support its own server.
# Any other skip counts as a file that did not pass.  The second kind is
# listed in the summary line (and in the CI summary of test/all-majors.sh).
tap_skipped=0
while read -r need; do
    if [ -n "$need" ] && [ "$PG_MAJOR" -lt "$need" ]; then
        tap_skipped=$((tap_skipped + 1))
    fi
done < <(sed -nE 's/^test\/t\/.*\.pl \.+ skipped: .*need PostgreSQL ([0-9]+) or later.*/\1/p' "$out")
missing_skips=()
while read -r file what; do
    [ -n "$what" ] || continue
    if printf '%s\n' "${SF_TEST_PROVIDES[@]}" | grep -qxF "$what"; then
        echo "FAILED: $file skipped for want of $what, which test/setup.sh installed a package for" >&2
        fail=1
    else
        echo "==> skipped: $file ($what is not installed here)"
        missing_skips+=("$(basename "$file") ($what)")
        tap_skipped=$((tap_skipped + 1))
    fi
done < <(sed -nE 's/^(test\/t\/[^ ]*\.pl) \.+ skipped: (extension ([a-z0-9_]+) is not available on this server|command ([a-z0-9_.+-]+) not found)( .*)?$/\1 \3\4/p' "$out")
while read -r file what; do
    [ -n "$what" ] || continue
    if [ "${SF_PACKAGED_SERVER:-1}" != 0 ]; then
        echo "FAILED: $file skipped: $what does not support the packaged PostgreSQL $PG_MAJOR" >&2
        fail=1
    else
        echo "==> skipped: $file ($what does not support this PostgreSQL $PG_MAJOR built from source)"
        missing_skips+=("$(basename "$file") ($what does not support it)")
        tap_skipped=$((tap_skipped + 1))
    fi
done < <(sed -nE 's/^(test\/t\/[^ ]*\.pl) \.+ skipped: ([a-z0-9_.+-]+) [^ ]+ does not support PostgreSQL [0-9]+( .*)?$/\1 \2/p' "$out")
echo "==> TAP test files passed: $tap_files of $tap_expected ($tap_skipped skipped: they need a later PostgreSQL than $PG_MAJOR, or what is not installed or supported here: ${#missing_skips[@]})"
tap_expected=$((tap_expected - tap_skipped))
rm -f "$out"
if [ "$tap_files" -ne "$tap_expected" ]; then
    echo "FAILED: not every TAP test file ran and passed" >&2
    fail=1
fi
if [ "$fail" -ne 0 ] || [ "$tap_files" -eq 0 ]; then
    exit 1
fi

# The no-preload pass: PostgreSQL 17 and later run the generator without
# shared_preload_libraries (the DSM registry), and these files prove the
# same guarantees there: concurrency, bursts, restarts and crashes with the
# clock set back, clock steps, layout changes, standbys, promotion and
# failover, the lineage floor and restores, state file faults, edge errors,
# the stats (and their Prometheus metrics through a real exporter), node ids
# derived from the host name, the install and update scripts with dump and
# restore, a point-in-time recovery under load, the 64-client soak, and
# public IDs' key file.
# Files whose subject is the preloaded mode itself (settings as real GUCs
# at startup, the writer registered with the postmaster, a start that only
# the postmaster can see: 074's, a restore's confirmation) are not in it; 029_no_preload.pl covers what differs without the
# preload.  034_settings_file.pl runs its servers without the preload in
# both passes (it is about that mode's settings file).
NO_PRELOAD_TESTS="test/t/004_js_safe_layout.pl test/t/005_concurrent_pgbench.pl
    test/t/006_bulk_drift.pl test/t/010_restart_clock_back.pl
    test/t/011_crash_under_load.pl test/t/012_clock_steps.pl
    test/t/013_layout_lock.pl test/t/014_standby.pl
    test/t/015_state_file_faults.pl test/t/016_stats.pl
    test/t/017_edge_errors.pl test/t/019_clock_before_epoch.pl
    test/t/024_spread_sequence.pl test/t/025_lineage.pl
    test/t/027_early_write.pl test/t/030_split_brain.pl
    test/t/031_fsync_off.pl test/t/032_drift_one_bound.pl
    test/t/033_lastval.pl test/t/034_settings_file.pl
    test/t/036_node_id_from_host.pl test/t/037_split_brain_hosts.pl
    test/t/038_floor_obligation.pl
    test/t/040_upgrade_dump.pl test/t/049_prometheus.pl
    test/t/060_restore_pitr.pl test/t/064_start_rule.pl
    test/t/073_raised_lead.pl test/t/075_skipped_timeline.pl
    test/t/077_soak.pl test/t/078_public_ids.pl"
summary="pg_regress, isolation, $fuzz_summary, $model_summary$tap_files TAP files"
if [ "$PG_MAJOR" -ge 17 ] && [ "${SNOWFLAKE_NO_PRELOAD_PASS:-1}" = 0 ]; then
    echo "==> the no-preload pass is left out here (SNOWFLAKE_NO_PRELOAD_PASS=0)"
elif [ "$PG_MAJOR" -ge 17 ]; then
    # The chosen files that are in the list (none: grep fails, hence || true).
    np_tests=$(cd "$RUN_DIR" && ls -d ${PROVE_TESTS:-test/t/*.pl} |
        grep -xF -f <(printf '%s\n' $NO_PRELOAD_TESTS) | tr '\n' ' ' || true)
    if [ -z "$np_tests" ]; then
        echo "==> no chosen TAP file runs without the preload"
    else
        out=$(mktemp /tmp/snowflake-check.XXXXXX.log)
        chmod a+r "$out"
        status=0
        "${RUN_AS[@]}" env PATH="$PG_BINDIR:$PATH" SNOWFLAKE_TEST_NO_PRELOAD=1 \
            ${SNOWFLAKE_HOSTNS:+SNOWFLAKE_HOSTNS="$SNOWFLAKE_HOSTNS"} \
            PROVE_TESTS="$np_tests" \
            make -C "$RUN_DIR" installcheck PG_CONFIG="$PG_CONFIG" REGRESS= ISOLATION= \
            2>&1 | tee "$out" || status=$?
        np_files=$(grep -cE '^test/t/.*\.pl \.+ ok' "$out" || true)
        np_expected=$(echo $np_tests | wc -w)
        echo "==> TAP test files passed without the preload: $np_files of $np_expected"
        if [ "$status" -ne 0 ] || ! grep -q '^Result: PASS' "$out" ||
            [ "$np_files" -ne "$np_expected" ]; then
            fail_with_logs "not every TAP test file passed without the preload"
        fi
        rm -f "$out"
        summary="$summary, $np_files TAP files without the preload"
    fi
fi
if [ "$image_tested" -eq 1 ] && grep -qE '^test/t/044_extension_dir\.pl \.+ ok' <<<"$tap_results"; then
    summary="$summary, the extension image"
fi
if [ "${#missing_skips[@]}" -gt 0 ]; then
    summary="$summary; skipped, not installed here: ${missing_skips[*]}"
fi
echo "==> PostgreSQL $PG_MAJOR: every suite passed ($summary)"

# CI (.ci/run) also builds the Debian package, installs it, runs the suites
# against it and removes it again.
if [ -n "${SNOWFLAKE_DEB:-}" ]; then
    bash "$SNOWFLAKE_ROOT/test/deb-check.sh"
fi
