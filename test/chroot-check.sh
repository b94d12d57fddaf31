#!/usr/bin/env bash
# Build snowflake and run every suite (pg_regress, isolation, TAP) against
# another PostgreSQL major, in a Debian chroot made with debootstrap.  Root
# only.  The chroot is built once (about five minutes) and reused; the
# package mirror is the one this host's apt configuration uses.
#
#   test/chroot-check.sh 17          # Debian trixie's PostgreSQL 17
#   test/chroot-check.sh 18          # Debian sid's PostgreSQL 18
#   test/chroot-check.sh 19          # PostgreSQL 19: Debian sid, with
#                                    # experimental for its packages
#   test/chroot-check.sh 17 --prepare   # only build the chroot
#
# A major that is not in its suite yet comes from an extra suite (19: sid
# plus experimental).  apt takes only that major's packages (those built
# from the source package postgresql-NN) from the extra suite, at the same
# priority as the base suite's, so that the higher version wins: once sid
# has postgresql-19, a newly built chroot takes it from sid, without an
# edit here.  A chroot is kept once built: remove it to get newer packages.
#
# Environment:
#   CHROOT_DIR        where the chroots live (default /var/tmp/snowflake-chroots)
#   SNOWFLAKE_MIRROR  a Debian mirror URL to use instead of the host's
#   PG_TEST_PORT_DIR  shared with the chroot, so that servers started inside
#                     and outside it do not pick the same port
#   SF_FRAMEWORKS     1 to install the frameworks of the recipes and run
#                     test/t/046_frameworks.pl in the chroot too (default 0:
#                     their packages come to 205 MB on trixie and 530 MB on
#                     sid, against 107 MB on the host, which has a JDK; see
#                     CONTRIBUTING.md, CI)
#   SF_BACKUP_TOOLS   1 to install pgBackRest and Barman and run
#                     test/t/061_pgbackrest.pl and 062_barman.pl in the
#                     chroot too (default 0: they skip there; CI runs them
#                     natively on 15, see CONTRIBUTING.md, CI)
#   SF_MODEL          1 to install Spin and check the model
#                     (test/model/run.sh) in the chroot too (default 0: it
#                     does not depend on the PostgreSQL major; CI checks it
#                     natively, see CONTRIBUTING.md, CI)
#   SNOWFLAKE_FUZZ_SECONDS  how long the fuzz targets run (default 0: each
#                     only on its committed inputs; test/check.sh's
#                     native run fuzzes them for a minute)
#   SNOWFLAKE_CHAOS_SEED, SNOWFLAKE_CHAOS_SECONDS, SNOWFLAKE_CHAOS_NO_PRELOAD
#                     the fault campaign's seed, length and mode
#                     (test/check.sh), passed into the chroot
#   SNOWFLAKE_UPGRADES  the upgrades from an older major that
#                     test/t/050_major_upgrade.pl must run, as OLD:NEW
#                     pairs (default "18:19": the chroot of 19 is sid, which
#                     has PostgreSQL 18 too); the run of NEW installs OLD
#                     and builds the extension for it (test/setup.sh,
#                     SNOWFLAKE_UPGRADE_FROM)
#
# Each run copies the tree into a directory of its own inside the chroot and
# runs test/check.sh there, so its checks (every suite ran) apply as they do
# natively.  test/check.sh --all-majors calls this script.
set -euo pipefail

major=${1:?usage: test/chroot-check.sh MAJOR [--prepare]}
mode=${2:-}
extra_suite=
case "$major" in
    17) suite=trixie ;;
    18) suite=sid ;;
    19) suite=sid extra_suite=experimental ;;
    *) echo "no Debian suite known for PostgreSQL $major" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$src/test/lib.sh"
sf_chroot_paths "$major"
base_packages="build-essential,perl,libipc-run-perl,faketime,libfaketime"
pg_packages="postgresql-$major postgresql-server-dev-$major"

log() { printf '==> [pg%s] %s\n' "$major" "$*" >&2; }

# The first Debian archive (not the security archive) in the host's apt
# sources: deb822 files ("URIs:" in a stanza of Types "deb") first, then
# one-line "deb URL SUITE ..." entries.
host_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        uri=$(awk '
            function flush() {
                if (!done && isdeb && uris != "" && suites !~ /-security/) {
                    print uris; done = 1; exit
                }
                isdeb = 0; uris = ""; suites = ""
            }
            /^[[:space:]]*$/ { flush(); next }
            /^[[:space:]]*#/ { next }
            tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") isdeb = 1 }
            tolower($1) == "uris:" { uris = $2 }
            tolower($1) == "suites:" { suites = $0 }
            END { flush() }' "$f")
        [ -n "$uri" ] && { echo "$uri"; return; }
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        uri=$(awk '$1 == "deb" {
                  i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                  if ($(i + 1) !~ /-security/) { print $i; exit } }' "$f")
        [ -n "$uri" ] && { echo "$uri"; return; }
    done
    return 1
}

# apt's proxy, if the host uses one, for debootstrap's downloads.
host_proxy() {
    apt-config dump 2>/dev/null |
        sed -nE 's/^Acquire::http::Proxy "(.+)";$/\1/p' | head -n 1
}

# In the chroot $1 being built: add suite $extra_suite of mirror $2 with
# the pin described at the top, then install PostgreSQL's packages (through
# proxy $3, if any), with /proc mounted (their maintainer scripts need it).
add_extra_suite() {
    local tmp=$1 mirror=$2 proxy=$3
    printf 'deb %s %s main\n' "$mirror" "$extra_suite" \
        >"$tmp/etc/apt/sources.list.d/$extra_suite.list"
    cat >"$tmp/etc/apt/preferences.d/snowflake-pg$major" <<EOF
# test/chroot-check.sh: PostgreSQL $major's packages from $extra_suite, at the
# priority of $suite's; the higher version wins.
Package: src:postgresql-$major
Pin: release a=$extra_suite
Pin-Priority: 500
EOF
    echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99snowflake-test"
    mount -t proc proc "$tmp/proc"
    mounted=("$tmp/proc")
    chroot "$tmp" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        ${proxy:+http_proxy="$proxy"} sh -c "apt-get -o DPkg::Lock::Timeout=900 update -qq &&
            apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends $pg_packages" >>"$tmp.log" 2>&1 || {
        tail -n 30 "$tmp.log" >&2
        echo "installing $pg_packages from $suite and $extra_suite failed" >&2
        exit 1
    }
    sf_unmount_all
    mounted=()
}

build_chroot() {
    local mirror proxy tmp include
    mirror=${SNOWFLAKE_MIRROR:-$(host_mirror)} || true
    if [ -z "$mirror" ]; then
        echo "no Debian mirror found in /etc/apt; set SNOWFLAKE_MIRROR" >&2
        exit 1
    fi
    proxy=$(host_proxy || true)
    command -v debootstrap >/dev/null || sf_apt_install "${SF_CHROOT_PACKAGES[@]}"
    # Built under a temporary name and renamed when complete: an interrupted
    # build is never mistaken for a usable chroot.
    tmp=$CHROOT.partial
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # Without an extra suite, debootstrap installs PostgreSQL too.
    include=$base_packages
    [ -n "$extra_suite" ] || include="$include,${pg_packages// /,}"
    log "building a Debian $suite${extra_suite:+ + $extra_suite} chroot in $CHROOT from $mirror"
    if ! env ${proxy:+http_proxy="$proxy"} debootstrap --variant=minbase \
        --include="$include" "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
        tail -n 30 "$tmp.log" >&2
        [ -f "$tmp/debootstrap/debootstrap.log" ] && tail -n 30 "$tmp/debootstrap/debootstrap.log" >&2
        echo "debootstrap of $suite failed" >&2
        exit 1
    fi
    [ -z "$extra_suite" ] || add_extra_suite "$tmp" "$mirror" "$proxy"
    [ -x "$tmp$CHROOT_PGC" ] || { echo "the $suite chroot has no $CHROOT_PGC" >&2; exit 1; }
    mv "$tmp" "$CHROOT"
    rm -f "$tmp.log"
}

sf_chroot_lock

# What this script mounts, unmounted at exit (sf_unmount_all).
mounted=()
trap sf_unmount_all EXIT
[ -x "$CHROOT$CHROOT_PGC" ] || build_chroot

# The chroot is a throwaway test system whose suite may come from a dated
# snapshot of the archive (as the host's may): let apt accept Release files
# past their Valid-Until date there, so that the suites' own package
# installs (test/setup.sh) work.  The host's apt configuration is untouched.
echo 'Acquire::Check-Valid-Until "false";' >"$CHROOT/etc/apt/apt.conf.d/99snowflake-test"

if [ "$mode" = "--prepare" ]; then
    log "chroot ready: $CHROOT"
    exit 0
fi

work=$(mktemp -d "$CHROOT/build.XXXXXX")
cleanup() {
    sf_unmount_all
    rm -rf "$work"
}
trap cleanup EXIT

sf_chroot_mounts
if [ -n "${PG_TEST_PORT_DIR:-}" ]; then
    sf_port_dir "$PG_TEST_PORT_DIR"
    mkdir -p "$CHROOT$PG_TEST_PORT_DIR"
    if ! mountpoint -q "$CHROOT$PG_TEST_PORT_DIR"; then
        mount --bind "$PG_TEST_PORT_DIR" "$CHROOT$PG_TEST_PORT_DIR"
        mounted=("$CHROOT$PG_TEST_PORT_DIR" "${mounted[@]}")
    fi
fi

# The client tests' npm packages are installed on the host and reach the
# chroot with the tree: npm in the chroot has neither the host's CA bundle
# nor its npm and proxy configuration, so its own npm ci can fail
# (SELF_SIGNED_CERT_IN_CHAIN), and this run must not depend on a native
# run having installed them before.
command -v npm >/dev/null || sf_apt_install nodejs npm
sf_install_node_modules "$src"

# A copy of the tree's sources of its own (test/check.sh builds it with the
# chroot's PostgreSQL), with the client tests' packages.
sf_copy_tree "$src" "$work"
inner=/${work#"$CHROOT"/}
# snowflake $SF_OLD_RELEASE_VERSION's tree (test/lib.sh), which test/t/085_upgrade_order.pl upgrades from
# (test/setup.sh builds it): the copy above has no .git, and the chroot may
# have no git.
release_src=
if grep -q '085_upgrade_order' <<<"${PROVE_TESTS:-test/t/085_upgrade_order.pl}"; then
    mkdir -p "$work/tmp_check_release_src"
    git -C "$src" archive --format=tar "$SF_OLD_RELEASE_COMMIT" | tar -x -C "$work/tmp_check_release_src"
    release_src=$inner/tmp_check_release_src
fi
# The older major this run upgrades from, if any.
upgrade_from=$(tr ' ' '\n' <<<"${SNOWFLAKE_UPGRADES-18:19}" | sed -n "s/^\([0-9]*\):$major\$/\1/p" | head -n 1)
log "running every suite in $CHROOT$inner"
chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    PG_MAJOR="$major" ${PG_TEST_PORT_DIR:+PG_TEST_PORT_DIR="$PG_TEST_PORT_DIR"} \
    ${SNOWFLAKE_DEB:+SNOWFLAKE_DEB=1} ${SNOWFLAKE_IMAGE:+SNOWFLAKE_IMAGE=1} \
    ${SNOWFLAKE_NO_PRELOAD_PASS:+SNOWFLAKE_NO_PRELOAD_PASS="$SNOWFLAKE_NO_PRELOAD_PASS"} \
    SF_FRAMEWORKS="${SF_FRAMEWORKS:-0}" SF_BACKUP_TOOLS="${SF_BACKUP_TOOLS:-0}" \
    SF_MODEL="${SF_MODEL:-0}" \
    ${SNOWFLAKE_CHAOS_SEED:+SNOWFLAKE_CHAOS_SEED="$SNOWFLAKE_CHAOS_SEED"} \
    ${SNOWFLAKE_CHAOS_SECONDS:+SNOWFLAKE_CHAOS_SECONDS="$SNOWFLAKE_CHAOS_SECONDS"} \
    ${SNOWFLAKE_CHAOS_NO_PRELOAD:+SNOWFLAKE_CHAOS_NO_PRELOAD="$SNOWFLAKE_CHAOS_NO_PRELOAD"} \
    SNOWFLAKE_FUZZ_SECONDS="${SNOWFLAKE_FUZZ_SECONDS:-0}" \
    ${upgrade_from:+SNOWFLAKE_UPGRADE_FROM="$upgrade_from"} \
    ${release_src:+SNOWFLAKE_RELEASE_SRC="$release_src"} \
    ${PROVE_TESTS:+PROVE_TESTS="$PROVE_TESTS"} \
    bash "$inner/test/check.sh"
