#!/usr/bin/env bash
# Shared set-up for the README's two commands (test/demo.sh, test/check.sh):
# install what is missing from Debian/Ubuntu packages, build the extension
# and install it into the chosen PostgreSQL.  Sourced, not run.
#
# Works as root (CI) and as a normal user with sudo.  Environment:
#   PG_MAJOR   PostgreSQL major to build against (default: the newest one
#              installed, else the distribution's default)
#   PG_CONFIG  a pg_config to build and test against instead: a relocated
#              copy of the distribution's packages (whose packages, those of
#              its major, are then wanted as usual), or a PostgreSQL built
#              from source (its version names no distribution build: no
#              package of its major is wanted, and the per-major extensions
#              the tests use, which only the packaged server has, are not
#              promised: the files that need them skip, see test/check.sh)
#   WERROR=1   build with -Werror (test/check.sh sets it)
#   ASSERTS=1  build with the extension's assertions on (test/check.sh sets it)
#   SF_TEST_DEPS=1  also install what the test suites need (test/check.sh
#              sets it): node, npm and the client tests' npm packages,
#              clang and its sanitizers' runtime (the fuzz targets),
#              pg_partman, PL/Proxy, PgBouncer, pgpool-II, the Prometheus
#              exporter and promtool, and the frameworks of the recipes
#              (Python, Ruby, Java and Go packages) unless SF_FRAMEWORKS=0
#   SNOWFLAKE_UPGRADE_FROM=N  also install PostgreSQL N (server and
#              headers) and build and install the extension for it, for
#              the upgrades from N of test/t/050_major_upgrade.pl
#              (test/chroot-check.sh sets 18 for 19); N must be packaged
#   SNOWFLAKE_OLD_RELEASE=1  also build snowflake 1.2, the last release
#              that writes no WAL record, against the PostgreSQL under test
#              and install it into a directory of its own, never into that
#              PostgreSQL: SNOWFLAKE_RELEASE_DIR/1.2/lib/snowflake.so and
#              .../1.2/extension/ (the control file and scripts), for the
#              rolling upgrade of test/t/085_upgrade_order.pl (test/check.sh
#              sets it when that file runs).  Its source is the release's
#              commit in this clone's history (git archive; a tag does not
#              travel with a clone, the commit does), or the directory
#              SNOWFLAKE_RELEASE_SRC names (test/chroot-check.sh exports
#              the commit there, since the chroot's copy has no .git)

set -euo pipefail

SNOWFLAKE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$SNOWFLAKE_ROOT/test/lib.sh"

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
else
    SUDO=(sudo)
fi

log() { printf '==> %s\n' "$*" >&2; }

# Pick the PostgreSQL major version, and tell whether the server under test
# is the distribution's build of it (SF_PACKAGED_SERVER=1) or one built from
# source (0): Debian's and Ubuntu's builds name themselves in their version,
# "PostgreSQL 15.20 (Debian 15.20-0+deb12u1)", a copy of them too.
sf_pick_major() {
    SF_PACKAGED_SERVER=1
    if [ -n "${PG_CONFIG:-}" ]; then
        local version
        version=$("$PG_CONFIG" --version)
        PG_MAJOR=$(sed -E 's/^PostgreSQL ([0-9]+).*/\1/' <<<"$version")
        if ! grep -qE '\((Debian|Ubuntu) [^)]+\)' <<<"$version"; then
            SF_PACKAGED_SERVER=0
            log "$version (from $PG_CONFIG) is not a distribution build: no package of PostgreSQL $PG_MAJOR is wanted"
        fi
        return
    fi
    if [ -n "${PG_MAJOR:-}" ]; then
        return
    fi
    local newest
    newest=$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null |
        sed -E 's|/usr/lib/postgresql/([0-9]+)/.*|\1|' | sort -n | tail -n 1 || true)
    if [ -n "$newest" ]; then
        PG_MAJOR=$newest
        return
    fi
    if ! apt-cache show postgresql >/dev/null 2>&1; then
        sf_apt_update
    fi
    PG_MAJOR=$(apt-cache depends postgresql 2>/dev/null |
        sed -nE 's/.*Depends: postgresql-([0-9]+)$/\1/p' | head -n 1)
    if [ -z "$PG_MAJOR" ]; then
        echo "cannot tell which PostgreSQL version this distribution ships; set PG_MAJOR" >&2
        exit 1
    fi
}

# The Debian packages building (and, with SF_TEST_DEPS, testing) needs,
# into the array "wanted"; and into SF_TEST_PROVIDES the extensions and
# commands the test packages among them provide, which a TAP file may
# therefore not skip for want of (test/check.sh).
sf_wanted_packages() {
    SF_TEST_PROVIDES=()
    wanted=(make gcc libc6-dev perl libipc-run-perl faketime libfaketime)
    # The server, its headers and client, unless PG_CONFIG names one built
    # from source (sf_pick_major), which brings its own.
    if [ "${SF_PACKAGED_SERVER:-1}" != 0 ]; then
        wanted+=("postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
                 "postgresql-client-$PG_MAJOR")
    fi
    # Public IDs link OpenSSL's libcrypto (src/ff1.c): its headers.
    # postgresql-server-dev-NN brings them through libpq-dev; named here so
    # that the build does not rest on that.
    wanted+=(libssl-dev)
    # An older major to upgrade from: its server, and its headers to build
    # the extension for it.
    if [ -n "${SNOWFLAKE_UPGRADE_FROM:-}" ]; then
        wanted+=("postgresql-$SNOWFLAKE_UPGRADE_FROM"
                 "postgresql-server-dev-$SNOWFLAKE_UPGRADE_FROM")
    fi
    if [ -n "${SF_TEST_DEPS:-}" ]; then
        # What only the tests need.  The client tests (041_node_client.pl,
        # 047_js_orms.pl) run node-postgres and ORMs; Prisma 7 needs node
        # 20.19 or later.  A node from another source (NodeSource ships npm
        # inside "nodejs") is used as it is.
        command -v node >/dev/null 2>&1 || wanted+=(nodejs)
        command -v npm >/dev/null 2>&1 || wanted+=(npm)
        # The partitioning test (042_partitioning.pl) runs pg_partman (a
        # major it has no package for yet, 19 at first, gets none, and the
        # test skips, saying so), the pooler test (045_pgbouncer.pl)
        # PgBouncer.
        # Through it, the drivers whose settings docs/deployment/poolers.md
        # gives: node-postgres (npm), psycopg 2 and 3, asyncpg.
        wanted+=(pgbouncer python3-psycopg2 python3-psycopg python3-asyncpg)
        SF_TEST_PROVIDES+=(pgbouncer)
        # The fault campaign (test/t/ChaosTest.pm, 051_chaos.pl): its
        # clients are Perl processes on DBD::Pg.
        wanted+=(libdbd-pg-perl)
        # The fuzz targets (test/fuzz/run.sh, which test/check.sh runs):
        # clang and the runtime of its sanitizers and libFuzzer, the
        # distribution's default version of both.
        wanted+=(clang libclang-rt-dev)
        # The monitoring test (049_prometheus.pl) runs postgres_exporter
        # with monitoring/postgres_exporter.yml and promtool over the
        # alert rules.  Where systemd runs, installing the exporter starts
        # its packaged service on port 9187; the test runs its own on a
        # free loopback port and never touches that one.
        wanted+=(prometheus-postgres-exporter prometheus)
        SF_TEST_PROVIDES+=(prometheus-postgres-exporter promtool)
        # The scale-out tests: PL/Proxy (053_plproxy.pl) and pgpool-II
        # (054_pgpool.pl; postgres_fdw, for 052, comes with the server).
        # Installing pgpool2 where systemd runs starts its packaged service
        # (on the port of /etc/pgpool2/pgpool.conf); the test runs its own
        # on a free loopback port and never touches that one.
        wanted+=(pgpool2)
        SF_TEST_PROVIDES+=(pgpool)
        # pg_partman and PL/Proxy, where the archive has them for this
        # major (a new major may have neither at first): a file that needs
        # one skips where the server cannot create it, and test/check.sh
        # accepts that only for what SF_TEST_PROVIDES does not name.
        local ext
        for ext in partman:pg_partman plproxy:plproxy; do
            if [ "${SF_PACKAGED_SERVER:-1}" = 0 ]; then
                log "a server built from source: the tests that need ${ext#*:} skip unless it is installed into that server"
            elif sf_in_archive "postgresql-$PG_MAJOR-${ext%%:*}"; then
                wanted+=("postgresql-$PG_MAJOR-${ext%%:*}")
                SF_TEST_PROVIDES+=("${ext#*:}")
            else
                log "no package postgresql-$PG_MAJOR-${ext%%:*} in the archive: the tests that need ${ext#*:} skip"
            fi
        done
        # The backup tools (061_pgbackrest.pl, 062_barman.pl), unless
        # SF_BACKUP_TOOLS=0 (test/chroot-check.sh's default): without them
        # those files skip, which test/check.sh accepts only where no
        # package was installed for them (SF_TEST_PROVIDES).
        if [ "${SF_BACKUP_TOOLS:-1}" != 0 ]; then
            wanted+=(pgbackrest barman)
            SF_TEST_PROVIDES+=(pgbackrest barman)
        fi
        # The HA managers beyond Patroni: pg_auto_failover
        # (056_pg_auto_failover.pl: the command pg_autoctl and the
        # extension pgautofailover, which the monitor creates) and repmgr
        # (057_repmgr.pl: the commands repmgr and repmgrd in the server's
        # bin directory and the extension repmgr), where this major's
        # archive has them (the files skip, saying which is missing, where
        # it does not).  Their packages install into the distribution's
        # server only: a server built from source has neither.
        if [ "${SF_PACKAGED_SERVER:-1}" = 0 ]; then
            log "a server built from source: 056_pg_auto_failover.pl and 057_repmgr.pl skip unless their files are installed into it"
        elif sf_in_archive "postgresql-$PG_MAJOR-auto-failover"; then
            wanted+=(pg-auto-failover-cli "postgresql-$PG_MAJOR-auto-failover")
            SF_TEST_PROVIDES+=(pg_autoctl pgautofailover)
        else
            log "no package postgresql-$PG_MAJOR-auto-failover in the archive: 056_pg_auto_failover.pl skips"
        fi
        if [ "${SF_PACKAGED_SERVER:-1}" = 0 ]; then
            :
        elif sf_in_archive "postgresql-$PG_MAJOR-repmgr"; then
            wanted+=("postgresql-$PG_MAJOR-repmgr")
            SF_TEST_PROVIDES+=(repmgr repmgrd)
        else
            log "no package postgresql-$PG_MAJOR-repmgr in the archive: 057_repmgr.pl skips"
        fi
        # The framework recipes (046_frameworks.pl, docs/adoption/), unless
        # SF_FRAMEWORKS=0: SQLAlchemy and Django with psycopg2, SQLAlchemy
        # on asyncpg (greenlet), psycopg 3 and asyncpg directly (the
        # drivers are installed for 045 above), Active
        # Record with pg, a JDK with pgjdbc and Hibernate (which needs
        # javassist but does not depend on it), Go with lib/pq.
        if [ "${SF_FRAMEWORKS:-1}" != 0 ]; then
            wanted+=(python3 python3-sqlalchemy python3-django python3-greenlet
                     ruby ruby-activerecord ruby-pg
                     default-jdk-headless libpostgresql-jdbc-java libhibernate3-java
                     libjavassist-java
                     golang-go golang-github-lib-pq-dev)
        fi
    fi
}

# Install what building (and, with SF_TEST_DEPS, testing) needs.
sf_install_packages() {
    local wanted
    sf_wanted_packages
    sf_apt_install "${wanted[@]}"
}

# Build and install the extension into the PostgreSQL of pg_config $1.
sf_build_install_into() {
    local pgc=$1
    log "building snowflake against PostgreSQL $("$pgc" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
    make -C "$SNOWFLAKE_ROOT" -s clean PG_CONFIG="$pgc"
    make -C "$SNOWFLAKE_ROOT" -s PG_CONFIG="$pgc" WERROR="${WERROR:-}" ASSERTS="${ASSERTS:-}"
    # The same flags again: make install rebuilds when they differ
    # (.build-flags), and would install a build without assertions.
    "${SUDO[@]}" make -C "$SNOWFLAKE_ROOT" -s install PG_CONFIG="$pgc" \
        WERROR="${WERROR:-}" ASSERTS="${ASSERTS:-}" >/dev/null
    sf_remove_stale_scripts "$pgc"
}

# Build and install the extension: for the older major to upgrade from
# first (SNOWFLAKE_UPGRADE_FROM), if any, then for the one under test, whose
# build stays in the tree.
sf_build_install() {
    PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/$PG_MAJOR/bin/pg_config}
    PG_BINDIR=$("$PG_CONFIG" --bindir)
    export PG_CONFIG PG_BINDIR
    if [ -n "${SNOWFLAKE_UPGRADE_FROM:-}" ]; then
        SNOWFLAKE_OLD_BINDIR=/usr/lib/postgresql/$SNOWFLAKE_UPGRADE_FROM/bin
        export SNOWFLAKE_OLD_BINDIR
        sf_build_install_into "$SNOWFLAKE_OLD_BINDIR/pg_config"
    fi
    sf_build_install_into "$PG_CONFIG"
}

# Build snowflake $SF_OLD_RELEASE_VERSION against the PostgreSQL of
# pg_config $1 and install it into $2/$SF_OLD_RELEASE_VERSION/{lib,extension}
# (readable by every user), from SNOWFLAKE_RELEASE_SRC or the commit.
sf_build_old_release() {
    local pgc=$1 dest=$2 build
    build=$(mktemp -d /tmp/snowflake-release.XXXXXX)
    if [ -n "${SNOWFLAKE_RELEASE_SRC:-}" ]; then
        mkdir -p "$build/src"
        cp -a "$SNOWFLAKE_RELEASE_SRC/." "$build/src/"
    else
        mkdir -p "$build/src"
        if ! git -C "$SNOWFLAKE_ROOT" archive --format=tar "$SF_OLD_RELEASE_COMMIT" 2>"$build/git.err" |
            tar -x -C "$build/src"; then
            cat "$build/git.err" >&2
            echo "cannot read snowflake $SF_OLD_RELEASE_VERSION (commit $SF_OLD_RELEASE_COMMIT) from the git history of $SNOWFLAKE_ROOT: test/t/085_upgrade_order.pl needs it; run from a clone (not a shallow one), or set SNOWFLAKE_RELEASE_SRC to that commit's tree" >&2
            rm -rf "$build"
            exit 1
        fi
    fi
    log "building snowflake $SF_OLD_RELEASE_VERSION ($SF_OLD_RELEASE_COMMIT) into $dest/$SF_OLD_RELEASE_VERSION"
    # As released: without -Werror, which a newer compiler than its own
    # may fail for a warning it did not have.
    make -C "$build/src" -s PG_CONFIG="$pgc" >/dev/null
    make -C "$build/src" -s install PG_CONFIG="$pgc" DESTDIR="$build/stage" >/dev/null
    mkdir -p "$dest/$SF_OLD_RELEASE_VERSION/lib" "$dest/$SF_OLD_RELEASE_VERSION/extension"
    cp "$build/stage$("$pgc" --pkglibdir)/snowflake.so" "$dest/$SF_OLD_RELEASE_VERSION/lib/"
    cp "$build/stage$("$pgc" --sharedir)"/extension/snowflake* "$dest/$SF_OLD_RELEASE_VERSION/extension/"
    grep -q "^default_version = '$SF_OLD_RELEASE_VERSION'" \
        "$dest/$SF_OLD_RELEASE_VERSION/extension/snowflake.control" ||
        { echo "commit $SF_OLD_RELEASE_COMMIT is not snowflake $SF_OLD_RELEASE_VERSION" >&2; exit 1; }
    chmod -R a+rX "$dest"
    rm -rf "$build"
}

# make install never removes a file: a snowflake script that an earlier
# build installed and this tree no longer has (an unreleased version's
# install script, which CREATE EXTENSION would prefer to the chain from
# 1.0) would be tested instead of the tree's.  Remove such files from the
# PostgreSQL of pg_config $1 (default $PG_CONFIG).
sf_remove_stale_scripts() {
    local dir f
    dir="$("${1:-$PG_CONFIG}" --sharedir)/extension"
    for f in "$dir"/snowflake--*.sql; do
        [ -e "$f" ] || continue
        if [ ! -e "$SNOWFLAKE_ROOT/$(basename "$f")" ]; then
            log "removing $f, which this tree does not have"
            "${SUDO[@]}" rm -f "$f"
        fi
    done
}

# PostgreSQL refuses to run as root: the tests and the demo run as the
# unprivileged "postgres" user (created by the Debian package) when we are
# root, in a copy of the tree that user owns.  RUN_AS runs a command as that
# user; RUN_DIR is the tree to run in.
sf_pick_runner() {
    if [ "$(id -u)" -eq 0 ]; then
        RUN_DIR=$(mktemp -d /tmp/snowflake-run.XXXXXX)
        cp -a "$SNOWFLAKE_ROOT/." "$RUN_DIR/"
        chown -R postgres: "$RUN_DIR"
        trap 'rm -rf "$RUN_DIR"' EXIT
        RUN_AS=(runuser -u postgres --)
    else
        RUN_DIR=$SNOWFLAKE_ROOT
        RUN_AS=()
    fi
}

sf_setup() {
    sf_pick_major
    sf_install_packages
    if [ -n "${SF_TEST_DEPS:-}" ]; then
        sf_install_node_modules "$SNOWFLAKE_ROOT"
    fi
    sf_build_install
    sf_pick_runner
    # The older release, into the tree the tests run in (removed with it
    # when that is a copy; tmp_check_* is ignored by git and by make).
    if [ -n "${SNOWFLAKE_OLD_RELEASE:-}" ]; then
        SNOWFLAKE_RELEASE_DIR=$RUN_DIR/tmp_check_releases
        rm -rf "$SNOWFLAKE_RELEASE_DIR"
        sf_build_old_release "$PG_CONFIG" "$SNOWFLAKE_RELEASE_DIR"
        export SNOWFLAKE_RELEASE_DIR
    fi
}
