#!/usr/bin/env bash
# Build Citus from its release source and install it into the PostgreSQL of
# PG_CONFIG, for test/t/048_citus.pl.  Only Citus is built here, never
# snowflake: test/setup.sh builds the extension as for every suite.
#
#   PG_CONFIG=... test/citus.sh TARBALL    (root, or a user with sudo)
#
# TARBALL is Citus's release source (citus-VERSION.tar.gz, unmodified; see
# ../shared/vendor/README.md beside the repository).  Its sha256 must be one
# this script knows.  The build is installed into a staging tree,
# $SNOWFLAKE_CITUS_CACHE/citus-VERSION-pgMAJOR (default /var/tmp/snowflake-citus;
# inside a chroot of test/chroot-check.sh that lies under the chroot, so the
# cache lives and dies with it), built once and reused; every run copies it
# into the PostgreSQL installation, which takes a second.  The build needs a
# few development packages, installed here (sf_apt_install).
set -euo pipefail

tarball=${1:?usage: test/citus.sh TARBALL}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
: "${PG_CONFIG:?PG_CONFIG must name the pg_config to build against}"
log() { printf '==> [citus] %s\n' "$*" >&2; }

# The releases this script accepts, by file name and sha256.
declare -A known=(
    [citus-14.0.1.tar.gz]=acfa9a77cd84a8e1edab26cca4a71355f39c910c01586da89560e0240d4b05ba
)
name=$(basename "$tarball")
want=${known[$name]:-}
[ -n "$want" ] || { echo "test/citus.sh: $name is not a Citus release this script knows" >&2; exit 1; }
[ -r "$tarball" ] || { echo "test/citus.sh: cannot read $tarball" >&2; exit 1; }
got=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
    echo "test/citus.sh: $tarball has sha256 $got, expected $want" >&2
    exit 1
fi
version=${name#citus-}
version=${version%.tar.gz}
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
pkglibdir=$("$PG_CONFIG" --pkglibdir)
cache=${SNOWFLAKE_CITUS_CACHE:-/var/tmp/snowflake-citus}
stage=$cache/citus-$version-pg$major
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# A staging tree for another installation of this major (another
# PG_CONFIG) has its files under other paths: rebuild then.
if [ ! -e "$stage$pkglibdir/citus.so" ]; then
    # Citus's columnar storage includes zstd and lz4, and the server's own
    # headers include GSSAPI's and ICU's; built without libcurl, Citus has
    # no statistics collection to switch off.
    sf_apt_install "${SF_CITUS_PACKAGES[@]}"
    build=$(mktemp -d /tmp/snowflake-citus-build.XXXXXX)
    trap 'rm -rf "$build"' EXIT
    log "building Citus $version for PostgreSQL $major (once; cached in $stage)"
    t0=$(date +%s)
    tar -C "$build" -xzf "$tarball"
    # No LLVM bitcode (with_llvm=no): the tests do not JIT Citus's code,
    # and it would double the build time.
    if ! (cd "$build/citus-$version" &&
        ./configure PG_CONFIG="$PG_CONFIG" --without-libcurl &&
        make -j"$(nproc)" with_llvm=no &&
        make install with_llvm=no DESTDIR="$build/stage") >"$build/build.log" 2>&1; then
        tail -n 40 "$build/build.log" >&2
        echo "test/citus.sh: building Citus $version failed" >&2
        exit 1
    fi
    "${sudo[@]}" mkdir -p "$cache"
    "${sudo[@]}" rm -rf "$stage"
    "${sudo[@]}" mv "$build/stage" "$stage"
    log "built in $(($(date +%s) - t0)) s"
fi
tar -C "$stage" -cf - . | "${sudo[@]}" tar -C / -xf - --no-overwrite-dir
log "Citus $version installed into $("$PG_CONFIG" --bindir)/.. (PostgreSQL $major)"
