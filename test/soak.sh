#!/usr/bin/env bash
# test/soak.sh: the soak of test/t/077_soak.pl for minutes, and its report.
# 64 pgbench clients (a mix of single inserts keyed by DEFAULT
# snowflake_nextval(), snowflake_nextval_batch(), the decoders, the text
# forms both ways, snowflake_stats) against a throwaway server; then the
# checks (no ID twice, each session's IDs strictly increasing, no error),
# the latency per minute and the memory of every process at the start and
# at the end (test/t/SoakTest.pm says what "flat" means).  Exits non-zero
# if a check fails.
#
#   test/soak.sh --minutes 10                  on the PostgreSQL here, preloaded
#   test/soak.sh --minutes 10 --major 17 --no-preload   (root) in the chroot
#                                              of test/chroot-check.sh
#   test/soak.sh --minutes 10 --plant-leak     a build with a leak planted in
#                                              snowflake_nextval(): the run
#                                              passes only if the memory
#                                              figures show it
# Options:
#   --minutes M      how long the load runs (default 10)
#   --clients N      pgbench clients (default 64)
#   --no-preload     servers without shared_preload_libraries (17 and later)
#   --plant-leak     see above (a copy of the tree is patched and built)
#   --major N        (root) on PostgreSQL N, in its Debian chroot, built
#                    there (test/chroot-check.sh MAJOR --prepare first if it
#                    is missing); the chroot is locked meanwhile
#   --output FILE    where the report (Markdown) goes (default: printed only)
#
# Natively, as test/check.sh does: installs what is missing, builds the
# extension (WERROR=1; ASSERTS=1 for an assertion build) and installs it
# into the PostgreSQL that PG_CONFIG names (default: the newest installed,
# or PG_MAJOR's), then runs the TAP file in a copy of the tree, as the
# "postgres" user when run as root.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmdline="test/soak.sh${*:+ $*}"
minutes=10 clients=64 no_preload=0 leak=0 major= output=
usage="usage: test/soak.sh [--minutes M] [--clients N] [--no-preload] [--plant-leak] [--major N] [--output FILE]"
while [ $# -gt 0 ]; do
    case $1 in
        --minutes) minutes=${2:?$usage}; shift 2 ;;
        --clients) clients=${2:?$usage}; shift 2 ;;
        --no-preload) no_preload=1; shift ;;
        --plant-leak) leak=1; shift ;;
        --major) major=${2:?$usage}; shift 2 ;;
        --output) output=$(realpath -m "${2:?$usage}"); shift 2 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "--minutes takes a number" >&2; exit 2; }
[[ $clients =~ ^[1-9][0-9]*$ ]] || { echo "--clients takes a whole number" >&2; exit 2; }
[[ -z $major || $major =~ ^[0-9]+$ ]] || { echo "--major takes a PostgreSQL major version" >&2; exit 2; }
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 0.5 }')
soak_env=(SNOWFLAKE_SOAK_SECONDS="$seconds" SNOWFLAKE_SOAK_CLIENTS="$clients"
    SNOWFLAKE_SOAK_LEAK="$leak")
[ "$no_preload" -eq 0 ] || soak_env+=(SNOWFLAKE_TEST_NO_PRELOAD=1)

# Run the TAP file in tree $1 (owned by the user of $2..., "runuser -u
# postgres --" or nothing) against pg_config $3; the report into $4.
run_tap() {
    local tree=$1 pgc=$2 report=$3
    shift 3
    "$@" env PATH="$("$pgc" --bindir):$PATH" "${soak_env[@]}" SNOWFLAKE_SOAK_OUT="$report" \
        PROVE_TESTS=test/t/077_soak.pl PROVE_FLAGS=-v \
        make -C "$tree" installcheck PG_CONFIG="$pgc" REGRESS= ISOLATION=
}

if [ -n "$major" ]; then
    source "$here/lib.sh"
    sf_chroot_paths "$major"
    log() { printf '==> [pg%s soak] %s\n' "$major" "$*" >&2; }
    [ -x "$CHROOT$CHROOT_PGC" ] || bash "$here/chroot-check.sh" "$major" --prepare
    sf_chroot_lock
    work=$(mktemp -d "$CHROOT/soak.XXXXXX")
    chmod 755 "$work"
    inner=/${work#"$CHROOT"/}
    mounted=()
    trap 'sf_unmount_all; rm -rf "$work"' EXIT
    sf_chroot_mounts
    tar -C "$here/.." --exclude=./.git --exclude='./tmp_check*' --exclude=./results \
        --exclude=./output_iso --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
        --exclude='./test/fuzz/build*' -cf - . | tar -C "$work" -xf -
    chroot "$CHROOT" chown -R postgres: "$inner"
    log "building in $CHROOT$inner, then $minutes minutes of soak"
    chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        bash -c 'set -e; make -s -C "$1" PG_CONFIG="$2" WERROR=1 ${3:+ASSERTS=1} >/dev/null
                 make -s -C "$1" install PG_CONFIG="$2" WERROR=1 ${3:+ASSERTS=1} >/dev/null' \
        bash "$inner" "$CHROOT_PGC" "${ASSERTS:-}"
    status=0
    chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
        runuser -u postgres -- env "${soak_env[@]}" SNOWFLAKE_SOAK_OUT="$inner/report.md" \
        PATH="$(dirname "$CHROOT_PGC"):/usr/bin:/bin" PROVE_TESTS=test/t/077_soak.pl PROVE_FLAGS=-v \
        make -C "$inner" installcheck PG_CONFIG="$CHROOT_PGC" REGRESS= ISOLATION= || status=$?
    report=$work/report.md
else
    source "$here/setup.sh"
    WERROR=${WERROR:-1}
    sf_pick_major
    wanted=()
    sf_wanted_packages
    sf_apt_install "${wanted[@]}"
    sf_build_install
    sf_pick_runner
    report=$RUN_DIR/soak-report.md
    status=0
    run_tap "$RUN_DIR" "$PG_CONFIG" "$report" "${RUN_AS[@]}" || status=$?
fi
if [ "$status" -ne 0 ]; then
    for f in "${RUN_DIR:-$work}"/tmp_check/log/regress_log_077_soak; do
        [ -f "$f" ] && { echo "==> tail of $f"; tail -n 80 "$f"; }
    done
fi
if [ -f "$report" ]; then
    if [ -n "$output" ]; then
        {
            echo "# Soak: PostgreSQL ${major:-$PG_MAJOR}$([ "$no_preload" -eq 1 ] && echo ' without the preload')$([ "$leak" -eq 1 ] && echo ', a leak planted')"
            echo
            echo "\`$cmdline\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$here/.." status --porcelain -- src test 2>/dev/null | grep -q . && echo ' (with uncommitted changes)'):"
            echo "$(nproc) CPUs ($(sed -nE 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(. /etc/os-release && echo "$PRETTY_NAME")$([ -n "$major" ] && echo ", PostgreSQL $major in the Debian chroot of test/chroot-check.sh"), shared with other work (load average $(cut -d' ' -f1-3 /proc/loadavg) at the end); the extension built with WERROR=1${ASSERTS:+ ASSERTS=1}."
            echo
            cat "$report"
        } >"$output"
        echo "==> report written to $output"
    fi
else
    echo "no report was written" >&2
    status=1
fi
if [ "$status" -ne 0 ]; then
    echo "FAILED: the soak's checks failed (see above)" >&2
    exit 1
fi
echo "==> soak passed"
