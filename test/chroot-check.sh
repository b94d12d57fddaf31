#!/usr/bin/env bash
# Build snowflake and run its suites against another PostgreSQL major, in a
# Debian chroot made with debootstrap (root only; about five minutes the
# first time, then reused):
#
#   test/chroot-check.sh 17          # Debian trixie's PostgreSQL 17
#   test/chroot-check.sh 18          # Debian sid's PostgreSQL 18
#   CHROOT_DIR=/srv/chroots test/chroot-check.sh 17 --tap   # TAP tests too
#
# Not part of test/check.sh: it needs the Debian mirror and several minutes.
set -euo pipefail

major=${1:?usage: test/chroot-check.sh MAJOR [--tap]}
with_tap=${2:-}
case "$major" in
    17) suite=trixie ;;
    18) suite=sid ;;
    *) echo "no Debian suite known for PostgreSQL $major" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "test/chroot-check.sh must run as root" >&2; exit 2; }

root=${CHROOT_DIR:-/srv/chroots}/pg$major
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pgc=/usr/lib/postgresql/$major/bin/pg_config

if [ ! -x "$root$pgc" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    mkdir -p "$root"
    debootstrap --variant=minbase \
        --include="postgresql-$major,postgresql-server-dev-$major,build-essential,libipc-run-perl,faketime,libfaketime" \
        "$suite" "$root" http://deb.debian.org/debian
fi

mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
mountpoint -q "$root/dev" || mount --bind /dev "$root/dev"
trap 'umount "$root/dev" "$root/proc" 2>/dev/null || true' EXIT

rm -rf "$root/build"
mkdir -p "$root/build"
cp -a "$src/." "$root/build/"
chroot "$root" chown -R postgres: /build
chroot "$root" make -C /build -s clean PG_CONFIG="$pgc"
chroot "$root" make -C /build -s WERROR=1 ASSERTS=1 PG_CONFIG="$pgc"
chroot "$root" make -C /build -s install PG_CONFIG="$pgc" >/dev/null
tap=TAP_TESTS=
[ "$with_tap" = "--tap" ] && tap=
chroot "$root" su postgres -s /bin/bash -c \
    "cd /build && PATH=/usr/lib/postgresql/$major/bin:\$PATH make installcheck PG_CONFIG=$pgc $tap"
echo "==> PostgreSQL $major: every suite run passed"
