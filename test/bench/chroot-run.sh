#!/usr/bin/env bash
# test/bench/chroot-run.sh: the benchmark suite on another PostgreSQL major,
# in the Debian chroot that test/chroot-check.sh builds.  Root only.
#
#   test/bench/chroot-run.sh 18                 every section, on 18
#   test/bench/chroot-run.sh 18 --only new      the sections of issues 8 and 13
#   test/bench/chroot-run.sh 18 --quick         a smoke run
#   test/bench/chroot-run.sh 19 --only decode   decoding on 19
#   test/bench/chroot-run.sh 18 --restart --before d0c4a94 --reps 5 --seconds 10
#                                               test/bench/restart.sh on 18,
#                                               the build of commit d0c4a94
#                                               beside this tree's
#   test/bench/chroot-run.sh 18 --edition       test/bench/edition.sh on 18
#
# Every option after the major goes to test/bench/run.sh, or with --restart
# or --edition (first after the major) to test/bench/restart.sh or
# test/bench/edition.sh.  The report is written to
# docs/performance/report-pg<major>.md (report-restart-pg<major>.md with
# --restart, report-sql-edition-speed-pg<major>.md with --edition), or to
# --output FILE (a path outside the chroot), run.sh's plots and their data
# beside it (see run.sh).
# With --restart, --before REV (a git revision of this repository) is the
# second build restart.sh measures: the tree of REV (git archive) is built
# and installed into a relocated copy of the chroot's PostgreSQL inside this
# run's directory (usr/lib, usr/share and usr/include/postgresql, its
# pg_config finding its files from where it lies), labelled
# "VERSION (REV)" unless --label-before says otherwise; this tree is
# labelled "VERSION (commit)" unless --label-after says otherwise.
# Environment: CHROOT_DIR, as for test/chroot-check.sh.
#
# Mirrors test/chroot-check.sh: builds the chroot first if it is missing
# (test/chroot-check.sh MAJOR --prepare), takes the same lock (one run per
# chroot at a time), copies this tree into a directory of its own inside the
# chroot, builds and installs the extension there with the chroot's
# PostgreSQL (a plain build: no assertions), and runs test/bench/run.sh (or
# restart.sh) on the copy.  The throwaway servers run inside the chroot on
# Unix sockets in the script's temporary directory; if the script is
# killed, its servers are stopped by PID here.  The host's PostgreSQL
# installation is not touched.  When the run includes the callgrind section
# and the chroot has no valgrind, it is installed there with apt-get (the
# section is skipped, with a note in the report, if that fails).
set -euo pipefail

major=${1:?usage: test/bench/chroot-run.sh MAJOR [run.sh options]}
shift
case "$major" in
    17|18|19) ;;
    *) echo "test/bench/chroot-run.sh: no chroot is built for PostgreSQL $major (17, 18 or 19)" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$src/test/lib.sh"
sf_chroot_paths "$major"
script=run.sh
if [ "${1:-}" = --restart ]; then
    script=restart.sh
    shift
elif [ "${1:-}" = --edition ]; then
    script=edition.sh
    shift
fi
case $script in
    run.sh) output=$src/docs/performance/report-pg$major.md ;;
    restart.sh) output=$src/docs/performance/report-restart-pg$major.md ;;
    edition.sh) output=$src/docs/performance/report-sql-edition-speed-pg$major.md ;;
esac
keep=0
callgrind=1
[ "$script" = run.sh ] || callgrind=0
before_rev=
labels_given=()
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --output) output=$(realpath -m "$2"); shift ;;
        --before)
            [ "$script" = restart.sh ] || { echo "test/bench/chroot-run.sh: --before goes with --restart" >&2; exit 2; }
            before_rev=$2; shift ;;
        --label-before|--label-after) labels_given+=("$1"); args+=("$1" "$2"); shift ;;
        --keep) keep=1; args+=("$1") ;;
        --no-callgrind) callgrind=0; args+=("$1") ;;
        --only)
            case ",$2," in *,callgrind,*) ;; *) callgrind=0 ;; esac
            args+=("$1" "$2"); shift ;;
        *) args+=("$1") ;;
    esac
    shift
done

log() { printf '==> [pg%s bench] %s\n' "$major" "$*" >&2; }

if [ -n "$before_rev" ]; then
    before_commit=$(git -C "$src" rev-parse --short --verify "$before_rev^{commit}") || {
        echo "test/bench/chroot-run.sh: --before $before_rev is not a commit of this repository" >&2
        exit 2
    }
fi

[ -x "$CHROOT$CHROOT_PGC" ] || "$src/test/chroot-check.sh" "$major" --prepare

sf_chroot_lock

work=$(mktemp -d "$CHROOT/bench.XXXXXX")
chmod 755 "$work"
inner=/${work#"$CHROOT"/}
mounted=()
cleanup() {
    local pidfile pid
    # run.sh and restart.sh stop their servers even when they fail; if one
    # was killed, its servers may still run: stop them by the PID in their
    # postmaster.pid.
    for pidfile in "$work"/tmp/snowflake-bench.*/data/postmaster.pid \
        "$work"/tmp/snowflake-edition.*/data/postmaster.pid \
        "$work"/tmp/snowflake-restart.*/data/postmaster.pid \
        "$work"/tmp/snowflake-restart.*/b*/data/postmaster.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(head -n 1 "$pidfile")
        case "$pid" in ''|*[!0-9]*) continue ;; esac
        if kill -0 "$pid" 2>/dev/null; then
            log "stopping the server left running (PID $pid)"
            sf_stop_pid "$pid"
        fi
    done
    sf_unmount_all
    sf_keep_or_remove "$work" "$keep"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sf_chroot_mounts

# A copy of the tree's sources of its own.
sf_copy_tree "$src" "$work"
mkdir -m 1777 "$work/tmp"

if [ "$callgrind" -eq 1 ] && ! chroot "$CHROOT" sh -c 'command -v valgrind' >/dev/null 2>&1; then
    log "installing valgrind in the chroot for the callgrind section"
    # As test/chroot-check.sh does: the chroot's suite may come from a dated
    # snapshot of the archive whose Release files are past their
    # Valid-Until date.  The host's apt configuration is untouched.
    echo 'Acquire::Check-Valid-Until "false";' >"$CHROOT/etc/apt/apt.conf.d/99snowflake-test"
    chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        bash -c 'source "$1/test/lib.sh" && sf_apt_install valgrind' bash "$inner" >"$work/apt.log" 2>&1 ||
        log "could not install valgrind (see $work/apt.log with --keep); the callgrind section will be skipped"
fi

# gnuplot draws the report's plots (run.sh would install it too, but
# without the apt configuration above).
if [ "$script" = run.sh ] && ! chroot "$CHROOT" sh -c 'command -v gnuplot' >/dev/null 2>&1; then
    log "installing gnuplot-nox in the chroot for the report's plots"
    echo 'Acquire::Check-Valid-Until "false";' >"$CHROOT/etc/apt/apt.conf.d/99snowflake-test"
    chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        bash -c 'source "$1/test/lib.sh" && sf_apt_install gnuplot-nox' bash "$inner" >"$work/apt-gnuplot.log" 2>&1 || {
        log "could not install gnuplot-nox in the chroot (see $work/apt-gnuplot.log with --keep)"
        exit 1
    }
fi

git_rev=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
if git -C "$src" status --porcelain -- src Makefile snowflake.control 'snowflake--*.sql' 2>/dev/null | grep -q .; then
    git_rev="$git_rev (src/ has uncommitted changes)"
fi
# The command line as given, for the report.
cmdline="test/bench/chroot-run.sh $major"
[ "$script" != restart.sh ] || cmdline+=" --restart"
[ "$script" != edition.sh ] || cmdline+=" --edition"
[ -z "$before_rev" ] || cmdline+=" --before $before_rev"
for a in "${args[@]}"; do
    case "$a" in *[!A-Za-z0-9_./=:,+-]*) cmdline+=" '${a//\'/\'\\\'\'}'" ;; *) cmdline+=" $a" ;; esac
done

# With --before: the tree of that commit, and a relocated copy of the
# chroot's PostgreSQL to install it into (without any snowflake files the
# copy may have taken from the chroot's installation).
before_pgc=
if [ -n "$before_rev" ]; then
    mkdir "$work/before"
    git -C "$src" archive "$before_commit" | tar -C "$work/before" -xf -
    pgb=$work/pg-before
    mkdir -p "$pgb/usr/lib/postgresql" "$pgb/usr/share/postgresql" "$pgb/usr/include"
    cp -a "$CHROOT/usr/lib/postgresql/$major" "$pgb/usr/lib/postgresql/"
    cp -a "$CHROOT/usr/share/postgresql/$major" "$pgb/usr/share/postgresql/"
    cp -a "$CHROOT/usr/include/postgresql" "$pgb/usr/include/"
    rm -rf "$pgb/usr/lib/postgresql/$major/lib/snowflake.so" "$pgb/usr/lib/postgresql/$major/lib/bitcode/snowflake" \
        "$pgb/usr/lib/postgresql/$major/lib/bitcode/snowflake.index.bc" "$pgb/usr/share/postgresql/$major/extension/snowflake"*
    before_pgc=$inner/pg-before/usr/lib/postgresql/$major/bin/pg_config
    ctl_version() { sed -nE "s/^default_version = '([^']*)'.*/\1/p"; }
    case " ${labels_given[*]} " in *" --label-before "*) ;; *)
        args+=(--label-before "$(git -C "$src" show "$before_commit:snowflake.control" | ctl_version) ($before_commit)") ;;
    esac
    case " ${labels_given[*]} " in *" --label-after "*) ;; *)
        args+=(--label-after "$(ctl_version < "$src/snowflake.control") ($git_rev)") ;;
    esac
    args=(--before "$before_pgc" "${args[@]}")
fi

log "building and installing the extension in $CHROOT${before_rev:+ (and $before_rev into a copy of its PostgreSQL)}, then test/bench/$script ${args[*]}"
chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    TMPDIR="$inner/tmp" PG_CONFIG="$CHROOT_PGC" SNOWFLAKE_BENCH_GIT="$git_rev" \
    SNOWFLAKE_BENCH_WHERE="in a Debian chroot (test/bench/chroot-run.sh) on $(. /etc/os-release && echo "$PRETTY_NAME")" \
    SNOWFLAKE_BENCH_CMDLINE="$cmdline" BEFORE_PGC="$before_pgc" SCRIPT="$script" \
    bash -c 'set -e
        cd "$1"
        shift
        if [ -n "$BEFORE_PGC" ]; then
            make -s -C before PG_CONFIG="$BEFORE_PGC" >/dev/null
            make -s -C before install PG_CONFIG="$BEFORE_PGC" >/dev/null
        fi
        make -s PG_CONFIG="$PG_CONFIG" >/dev/null
        make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
        test/bench/$SCRIPT "$@"' \
    bash "$inner" --output "$inner/$(basename "$output")" "${args[@]}"
cp "$work/$(basename "$output")" "$output"
log "report written to ${output#"$src"/}"
[ "$script" = run.sh ] || exit 0
# Its plots and their data, under the names the report links to; an
# earlier run's at the same path go first.
base=$(basename "${output%.md}")
for plot in bulk everyday decode; do
    for ext in tsv svg; do
        rm -f "${output%.md}-$plot.$ext"
        [ ! -f "$work/$base-$plot.$ext" ] || cp "$work/$base-$plot.$ext" "${output%.md}-$plot.$ext"
    done
done
