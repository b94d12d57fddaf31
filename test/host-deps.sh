#!/usr/bin/env bash
# test/host-deps.sh: install everything test/check.sh --all-majors needs
# on this host, in one apt-get run, then the client tests' npm packages.
# test/all-majors.sh runs it before it starts anything in parallel: on a
# new machine each stage would otherwise install its own packages at the
# same moment as the others, and every apt-get but one fails at once on
# dpkg's lock.  Afterwards it checks that every package is installed, so
# that a stage never has to call apt while another runs (the stages run
# with SF_NO_HOST_APT=1, which turns such a call into an error naming the
# package to add here).  Root or sudo, like test/setup.sh.
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

SF_TEST_DEPS=1
# CI runs the framework recipes and the backup tools' tests whatever the
# environment says (all-majors.sh).
SF_FRAMEWORKS=1
SF_BACKUP_TOOLS=1
sf_pick_major
wanted=()
sf_wanted_packages
wanted+=("${SF_PATRONI_PACKAGES[@]}" "${SF_DEB_PACKAGES[@]}" "${SF_CHROOT_PACKAGES[@]}")
sf_apt_install "${wanted[@]}"
missing=()
for p in "${wanted[@]}"; do
    sf_is_installed "$p" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "test/host-deps.sh: still not installed: ${missing[*]}" >&2
    exit 1
fi
sf_install_node_modules "$SNOWFLAKE_ROOT"
log "every package the stages need is installed (PostgreSQL $PG_MAJOR host)"
