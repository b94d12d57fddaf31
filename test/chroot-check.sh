#!/usr/bin/env bash
# Build snowflake and run every suite (pg_regress, isolation, TAP) against
# another PostgreSQL major, in a Debian chroot made with debootstrap.  Root
# only.  The chroot is built once (about five minutes) and reused; the
# package mirror is the one this host's apt configuration uses.
#
#   test/chroot-check.sh 17          # Debian trixie's PostgreSQL 17
#   test/chroot-check.sh 18          # Debian sid's PostgreSQL 18
#   test/chroot-check.sh 17 --prepare   # only build the chroot
#
# Environment:
#   CHROOT_DIR        where the chroots live (default /var/tmp/snowflake-chroots)
#   SNOWFLAKE_MIRROR  a Debian mirror URL to use instead of the host's
#   PG_TEST_PORT_DIR  shared with the chroot, so that servers started inside
#                     and outside it do not pick the same port
#   SNOWFLAKE_CITUS_MAJORS  the majors whose run must test Citus
#                     (test/t/048_citus.pl), default "17": Citus's release
#                     source (SNOWFLAKE_CITUS_TARBALL, default
#                     ../shared/vendor/citus-14.0.1.tar.gz beside the
#                     repository) goes into the run's tree, test/check.sh
#                     builds it once in the chroot (test/citus.sh, cached
#                     there) and SNOWFLAKE_REQUIRE_CITUS=1 makes a skip fail
#
# Each run copies the tree into a directory of its own inside the chroot and
# runs test/check.sh there, so its checks (every suite ran) apply as they do
# natively.  test/check.sh --all-majors calls this script.
set -euo pipefail

major=${1:?usage: test/chroot-check.sh MAJOR [--prepare]}
mode=${2:-}
case "$major" in
    17) suite=trixie ;;
    18) suite=sid ;;
    *) echo "no Debian suite known for PostgreSQL $major" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$src/test/lib.sh"
sf_chroot_paths "$major"
packages="postgresql-$major,postgresql-server-dev-$major,build-essential,perl,libipc-run-perl,faketime,libfaketime"

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

build_chroot() {
    local mirror proxy tmp
    mirror=${SNOWFLAKE_MIRROR:-$(host_mirror)} || true
    if [ -z "$mirror" ]; then
        echo "no Debian mirror found in /etc/apt; set SNOWFLAKE_MIRROR" >&2
        exit 1
    fi
    proxy=$(host_proxy || true)
    command -v debootstrap >/dev/null || sf_apt_install debootstrap
    # Built under a temporary name and renamed when complete: an interrupted
    # build is never mistaken for a usable chroot.
    tmp=$CHROOT.partial
    rm -rf "$tmp"
    mkdir -p "$tmp"
    log "building a Debian $suite chroot in $CHROOT from $mirror"
    if ! env ${proxy:+http_proxy="$proxy"} debootstrap --variant=minbase \
        --include="$packages" "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
        tail -n 30 "$tmp.log" >&2
        [ -f "$tmp/debootstrap/debootstrap.log" ] && tail -n 30 "$tmp/debootstrap/debootstrap.log" >&2
        echo "debootstrap of $suite failed" >&2
        exit 1
    fi
    [ -x "$tmp$CHROOT_PGC" ] || { echo "the $suite chroot has no $CHROOT_PGC" >&2; exit 1; }
    mv "$tmp" "$CHROOT"
    rm -f "$tmp.log"
}

sf_chroot_lock

[ -x "$CHROOT$CHROOT_PGC" ] || build_chroot
if [ "$mode" = "--prepare" ]; then
    log "chroot ready: $CHROOT"
    exit 0
fi

work=$(mktemp -d "$CHROOT/build.XXXXXX")
mounted=()
cleanup() {
    sf_unmount_all
    rm -rf "$work"
}
trap cleanup EXIT

# The chroot is a throwaway test system whose suite may come from a dated
# snapshot of the archive (as the host's may): let apt accept Release files
# past their Valid-Until date there, so that the suites' own package
# installs (test/setup.sh) work.  The host's apt configuration is untouched.
echo 'Acquire::Check-Valid-Until "false";' >"$CHROOT/etc/apt/apt.conf.d/99snowflake-test"

sf_chroot_mounts
if [ -n "${PG_TEST_PORT_DIR:-}" ]; then
    mkdir -p "$PG_TEST_PORT_DIR" "$CHROOT$PG_TEST_PORT_DIR"
    chmod 1777 "$PG_TEST_PORT_DIR" "$CHROOT$PG_TEST_PORT_DIR"
    if ! mountpoint -q "$CHROOT$PG_TEST_PORT_DIR"; then
        mount --bind "$PG_TEST_PORT_DIR" "$CHROOT$PG_TEST_PORT_DIR"
        mounted=("$CHROOT$PG_TEST_PORT_DIR" "${mounted[@]}")
    fi
fi

# A copy of the tree of its own (test/check.sh cleans and rebuilds it with
# the chroot's PostgreSQL), without the host's test output.
tar -C "$src" --exclude=./.git --exclude='./tmp_check*' --exclude=./results \
    --exclude=./output_iso -cf - . | tar -C "$work" -xf -
inner=/${work#"$CHROOT"/}
citus=()
if grep -qw "$major" <<<"${SNOWFLAKE_CITUS_MAJORS:-17}"; then
    citus_tarball=${SNOWFLAKE_CITUS_TARBALL:-$src/../shared/vendor/citus-14.0.1.tar.gz}
    citus=(SNOWFLAKE_REQUIRE_CITUS=1)
    if [ -e "$citus_tarball" ]; then
        mkdir -p "$work/.citus"
        cp "$citus_tarball" "$work/.citus/"
        citus+=(SNOWFLAKE_CITUS_TARBALL="$inner/.citus/$(basename "$citus_tarball")")
    else
        log "no Citus source at $citus_tarball: test/t/048_citus.pl will fail"
    fi
fi
log "running every suite in $CHROOT$inner"
chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    PG_MAJOR="$major" ${PG_TEST_PORT_DIR:+PG_TEST_PORT_DIR="$PG_TEST_PORT_DIR"} \
    ${SNOWFLAKE_DEB:+SNOWFLAKE_DEB=1} \
    ${PROVE_TESTS:+PROVE_TESTS="$PROVE_TESTS"} "${citus[@]}" \
    bash "$inner/test/check.sh"
