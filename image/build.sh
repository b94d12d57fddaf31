#!/usr/bin/env bash
# Build snowflake's extension image for CloudNativePG (image/Containerfile)
# with Debian's buildah: FROM scratch, so no registry is needed.  Root only
# (buildah's vfs storage).  `make image` runs it.
#
#   image/build.sh                 build against the newest PostgreSQL
#                                  installed (PG_MAJOR or PG_CONFIG choose),
#                                  tag snowflake:VERSION-pgMAJOR in buildah's
#                                  storage (/var/lib/containers)
#   image/build.sh --unpack DIR    build in a throwaway storage, export the
#                                  image as an OCI layout and unpack its
#                                  layers into DIR, as a container runtime
#                                  does when it mounts it (CI: test/check.sh
#                                  runs 044_extension_dir.pl against DIR)
#
# WERROR=1 and ASSERTS=1 are passed to the build as test/check.sh passes
# them; leave them unset for an image to publish.  Publish with
# `buildah push snowflake:VERSION-pgMAJOR docker://REGISTRY/...`.
source "$(dirname "${BASH_SOURCE[0]}")/../test/setup.sh"

unpack=
case "${1:-}" in
    --unpack) unpack=${2:?usage: image/build.sh [--unpack DIR]} ;;
    "") ;;
    *) echo "usage: image/build.sh [--unpack DIR]" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "image/build.sh must run as root (buildah)" >&2; exit 2; }

sf_pick_major
if [ "$PG_MAJOR" -lt 18 ]; then
    echo "extension images need PostgreSQL 18 or later (extension_control_path), not $PG_MAJOR" >&2
    exit 2
fi
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/$PG_MAJOR/bin/pg_config}
# buildah looks for a network backend (netavark) before any build step,
# even with --network none and nothing to run.
sf_apt_install buildah netavark make gcc libc6-dev libssl-dev "postgresql-server-dev-$PG_MAJOR"
version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$SNOWFLAKE_ROOT/snowflake.control")
tag=snowflake:$version-pg$PG_MAJOR

work=$(mktemp -d /tmp/snowflake-image.XXXXXX)
storage=()
cleanup() {
    # A throwaway storage (--unpack) goes with the work directory.
    rm -rf "$work"
}
trap cleanup EXIT
if [ -n "$unpack" ]; then
    storage=(--root "$work/storage" --runroot "$work/runroot")
fi

# The build context: make install into share/ and lib/ of a staging
# directory (PGXS installs into $(datadir)/extension and $(pkglibdir)),
# without LLVM bitcode, plus the licence.
log "building snowflake $version against PostgreSQL $PG_MAJOR for $tag"
ctx=$work/context
make -C "$SNOWFLAKE_ROOT" -s PG_CONFIG="$PG_CONFIG" WERROR="${WERROR:-}" ASSERTS="${ASSERTS:-}"
make -C "$SNOWFLAKE_ROOT" -s install PG_CONFIG="$PG_CONFIG" WERROR="${WERROR:-}" \
    ASSERTS="${ASSERTS:-}" DESTDIR="$ctx" datadir=/share pkglibdir=/lib with_llvm=no >/dev/null
cp "$SNOWFLAKE_ROOT/LICENSE" "$ctx/"
buildah "${storage[@]}" --storage-driver vfs build --quiet --network none \
    --build-arg PG_MAJOR="$PG_MAJOR" --build-arg VERSION="$version" \
    -f "$SNOWFLAKE_ROOT/image/Containerfile" -t "$tag" "$ctx" >/dev/null
log "built $tag"
[ -n "$unpack" ] || exit 0

# Export as an OCI image layout, then unpack the layers of its manifest in
# order, as a runtime does (a FROM scratch image has no whiteouts).
buildah "${storage[@]}" --storage-driver vfs push --quiet "$tag" "oci:$work/oci:snowflake"
mkdir -p "$unpack"
perl -MJSON::PP -e '
    my ($oci, $ref) = @ARGV;
    sub blob { my ($d) = @_; $d =~ s/^sha256://; return "$oci/blobs/sha256/$d" }
    sub json { local $/; open my $f, "<", $_[0] or die "$_[0]: $!"; return decode_json(<$f>) }
    my ($m) = grep { ($_->{annotations}{"org.opencontainers.image.ref.name"} // "") eq $ref }
        @{ json("$oci/index.json")->{manifests} };
    die "no manifest named $ref\n" unless $m;
    print blob($_->{digest}), "\n" foreach @{ json(blob($m->{digest}))->{layers} };
' "$work/oci" snowflake >"$work/layers"
[ -s "$work/layers" ] || { echo "FAILED: the image $tag has no layers" >&2; exit 1; }
while read -r layer; do
    tar -xf "$layer" -C "$unpack" --no-same-owner
done <"$work/layers"
chmod -R a+rX "$unpack"
log "unpacked $tag ($(wc -l <"$work/layers") layer(s)) into $unpack:"
(cd "$unpack" && find . -type f | sort) >&2
