#!/usr/bin/env bash
# Build the Debian package postgresql-NN-snowflake with pg_buildext
# (debian/), install it, run the test suites against the installed package
# (not against a build from source), then remove the package again, so that
# the machine's PostgreSQL is left as it was found.  Root or sudo.
#
#   test/deb-check.sh              build, install, test, remove
#   test/deb-check.sh --installed  only test the package already installed
#                                  (debian/tests/installcheck, autopkgtest)
#   KEEP_PACKAGE=1                 leave the package installed
#
# test/check.sh runs it after the other suites when SNOWFLAKE_DEB=1 (CI).
# It works on the system's PostgreSQL (/usr/lib/postgresql/NN), never on a
# PG_CONFIG of a private installation.
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

mode=${1:-build}
unset PG_CONFIG
sf_pick_major
pkg="postgresql-$PG_MAJOR-snowflake"
pgc=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
work=$(mktemp -d /tmp/snowflake-deb.XXXXXX)
chmod 755 "$work"
installed_here=0
cleanup() {
    if [ "$installed_here" -eq 1 ] && [ -z "${KEEP_PACKAGE:-}" ]; then
        log "removing $pkg"
        sf_apt_get purge -y -qq "$pkg" >/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

if [ "$mode" != "--installed" ]; then
    # Build tools, and what the suites need.
    sf_apt_install "${SF_DEB_PACKAGES[@]}" "postgresql-$PG_MAJOR" \
        "postgresql-server-dev-$PG_MAJOR" make gcc libc6-dev libipc-run-perl
    if sf_is_installed "$pkg"; then
        echo "$pkg is installed already: remove it first, or use --installed" >&2
        exit 1
    fi

    # The package version is the extension's version.
    ext_version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$SNOWFLAKE_ROOT/snowflake.control")
    deb_version=$(dpkg-parsechangelog -l "$SNOWFLAKE_ROOT/debian/changelog" -S Version)
    case "$deb_version" in
        "$ext_version"|"$ext_version"[~+-]*) ;;
        *) echo "debian/changelog version $deb_version does not match default_version $ext_version" >&2
           exit 1 ;;
    esac

    # pg_buildext builds for the versions postgresql-common supports (the
    # distribution's default major): ask for this major's package instead,
    # which on a newer major than the default (19 on sid) is the only way.
    export PG_SUPPORTED_VERSIONS=$PG_MAJOR
    log "building $pkg $deb_version with pg_buildext"
    mkdir "$work/src"
    cp -a "$SNOWFLAKE_ROOT/." "$work/src/"
    rm -rf "$work/src/.git" "$work/src/test/node/node_modules" "$work/src"/tmp_check* \
        "$work/src"/*.so "$work/src"/src/*.o "$work/src"/src/*.bc "$work/src/.build-flags"
    (cd "$work/src" && pg_buildext updatecontrol >/dev/null &&
        grep -q "^Package: $pkg\$" debian/control &&
        dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1) || {
        tail -n 40 "$work/build.log" >&2
        echo "FAILED: the package did not build" >&2
        exit 1
    }
    deb=$(ls "$work"/"${pkg}"_*.deb)
    log "built $(basename "$deb")"
    dpkg-deb -f "$deb" Package Version Provides Conflicts >&2

    log "installing $(basename "$deb")"
    installed_here=1
    sf_apt_get install -y -qq "$deb" >/dev/null
fi

# The server must load the package's files: the library, the control file
# and every script of the tree (1.0's install script and the update scripts
# that CREATE EXTENSION chains after it), and no other script.
scripts=()
for f in "$SNOWFLAKE_ROOT"/snowflake--*.sql; do
    scripts+=("$("$pgc" --sharedir)/extension/$(basename "$f")")
done
for f in "$("$pgc" --sharedir)"/extension/snowflake--*.sql; do
    if [ ! -f "$SNOWFLAKE_ROOT/$(basename "$f")" ]; then
        echo "FAILED: $f is not a script of this tree (owner: $(dpkg -S "$f" 2>/dev/null | cut -d: -f1))" >&2
        exit 1
    fi
done
for f in "$("$pgc" --pkglibdir)/snowflake.so" "$("$pgc" --sharedir)/extension/snowflake.control" \
         "${scripts[@]}"; do
    owner=$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)
    if [ "$owner" != "$pkg" ]; then
        echo "FAILED: $f does not come from $pkg (owner: ${owner:-none})" >&2
        exit 1
    fi
done
dpkg --verify "$pkg" || { echo "FAILED: installed files differ from the package" >&2; exit 1; }

# The suites, from a copy of the tree that has no build in it: pg_regress,
# the isolation specs, and the TAP test of the install and upgrade scripts
# and dump/restore.
log "running the suites against the installed $pkg"
mkdir -p "$work/run"
cp -a "$SNOWFLAKE_ROOT/." "$work/run/"
rm -f "$work/run"/*.so "$work/run"/src/*.o
if [ "$(id -u)" -eq 0 ]; then
    chown -R postgres: "$work/run"
    run_as=(runuser -u postgres --)
else
    run_as=()
fi
out="$work/installcheck.log"
status=0
"${run_as[@]}" env PATH="/usr/lib/postgresql/$PG_MAJOR/bin:$PATH" \
    PROVE_TESTS="${DEB_PROVE_TESTS:-test/t/040_upgrade_dump.pl}" \
    make -C "$work/run" installcheck PG_CONFIG="$pgc" >"$out" 2>&1 || status=$?
cat "$out"
if [ "$status" -ne 0 ] ||
    [ "$(grep -cE 'All [0-9]+ tests passed' "$out")" -lt 2 ] ||
    ! grep -q '^Result: PASS' "$out"; then
    for f in "$work/run/regression.diffs" "$work/run/output_iso/regression.diffs"; do
        [ -f "$f" ] && { echo "==> $f"; cat "$f"; }
    done
    echo "FAILED: a suite failed against the installed package" >&2
    exit 1
fi
log "$pkg: every suite run passed against the installed package"
