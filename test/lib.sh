# test/lib.sh: helpers shared by the shell scripts of test/ (through
# test/setup.sh for those that source it): Debian packages, the chroots of
# test/chroot-check.sh, stopping a server by PID.  Sourced, not run;
# sourcing it only defines functions.

# Whether Debian package $1 is installed.
sf_is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# Install those of the named Debian packages that are not installed yet,
# in one apt-get run (none if all are there), through sudo unless root.
sf_apt_install() {
    local missing=() p sudo=()
    for p in "$@"; do
        sf_is_installed "$p" || missing+=("$p")
    done
    [ "${#missing[@]}" -gt 0 ] || return 0
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    printf '==> installing %s\n' "${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Whether apt knows Debian package $1 (installed or not), updating its
# lists first if it does not; through sudo unless root.
sf_in_archive() {
    local sudo=()
    apt-cache show "$1" >/dev/null 2>&1 && return 0
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    apt-cache show "$1" >/dev/null 2>&1
}

# The Debian chroot of PostgreSQL major $1 that test/chroot-check.sh builds:
# sets CHROOTS (where the chroots live: $CHROOT_DIR, default
# /var/tmp/snowflake-chroots), CHROOT (this one's root) and CHROOT_PGC (its
# pg_config, as a path inside the chroot).  Exits with 2 unless run as root.
sf_chroot_paths() {
    [ "$(id -u)" -eq 0 ] || { echo "$0 must run as root" >&2; exit 2; }
    CHROOTS=${CHROOT_DIR:-/var/tmp/snowflake-chroots}
    CHROOT=$CHROOTS/pg$1
    CHROOT_PGC=/usr/lib/postgresql/$1/bin/pg_config
}

# Wait for the lock of $CHROOT and hold it until the script exits (file
# descriptor 9): one run per chroot at a time, test suites and benchmarks
# alike, as runs share its mounts.
sf_chroot_lock() {
    mkdir -p "$CHROOTS"
    exec 9>"$CHROOT.lock"
    flock 9
}

# Mount /proc and /dev in $CHROOT where they are not mounted yet; what it
# mounts is added to the array "mounted", for sf_unmount_all at exit.
sf_chroot_mounts() {
    mountpoint -q "$CHROOT/proc" || { mount -t proc proc "$CHROOT/proc"; mounted+=("$CHROOT/proc"); }
    mountpoint -q "$CHROOT/dev" || { mount --bind /dev "$CHROOT/dev"; mounted+=("$CHROOT/dev"); }
}

# Unmount what the array "mounted" lists, in its order (lazily if busy);
# never fails.
sf_unmount_all() {
    local m
    for m in "${mounted[@]}"; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
}

# Stop process $1 (a postmaster pg_ctl could not stop) by its PID: SIGQUIT,
# then SIGKILL if it is still there after 5 s (a bounded poll).  Returns at
# once if it does not run.
sf_stop_pid() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -QUIT "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

# At the end of a run: remove the work directory $1, or with $2 = 1 (the
# --keep option) leave it and say where it is (with the script's own log).
sf_keep_or_remove() {
    if [ "$2" -eq 1 ]; then
        log "kept $1"
    else
        rm -rf "$1"
    fi
}
