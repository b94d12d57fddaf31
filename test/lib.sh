# test/lib.sh: helpers shared by the shell scripts of test/ (through
# test/setup.sh for those that source it): Debian packages, the chroots of
# test/chroot-check.sh, stopping a server by PID.  Sourced, not run;
# sourcing it only defines functions.

# Whether Debian package $1 is installed.
sf_is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# apt-get with the given arguments, as root (through sudo otherwise),
# waiting for apt's locks instead of failing when another apt-get holds
# them.  The project's own calls queue on one lock file of their own
# (flock), so two stages never race; dpkg's lock, held by a foreign
# process such as unattended-upgrades, is waited for by apt itself
# (DPkg::Lock::Timeout).  Both waits end after SF_APT_LOCK_TIMEOUT seconds
# (default 900).
sf_apt_get() {
    local sudo=() timeout=${SF_APT_LOCK_TIMEOUT:-900}
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" flock -w "$timeout" /var/lib/apt/snowflake-apt.lock \
        env DEBIAN_FRONTEND=noninteractive \
        apt-get -o DPkg::Lock::Timeout="$timeout" "$@"
}

# apt-get update.  Its lock of the package lists has no timeout option:
# while another process holds that lock, try again every 5 s, for at most
# SF_APT_LOCK_TIMEOUT seconds; any other failure is final.  Never with
# SF_NO_HOST_APT set (see sf_apt_install): the lists are left as
# test/host-deps.sh left them, and this fails.
sf_apt_update() {
    local out deadline=$((SECONDS + ${SF_APT_LOCK_TIMEOUT:-900}))
    if [ -n "${SF_NO_HOST_APT:-}" ]; then
        echo "not running apt-get update (SF_NO_HOST_APT)" >&2
        return 1
    fi
    while :; do
        if out=$(sf_apt_get update -qq 2>&1); then
            [ -z "$out" ] || printf '%s\n' "$out" >&2
            return 0
        fi
        if ! grep -q 'Could not get lock' <<<"$out" || [ "$SECONDS" -ge "$deadline" ]; then
            printf '%s\n' "$out" >&2
            return 1
        fi
        sleep 5
    done
}

# Install those of the named Debian packages that are not installed yet,
# in one apt-get run (none if all are there), through sudo unless root.
# With SF_NO_HOST_APT set (test/all-majors.sh sets it for every stage, all
# of which may run while others do), a missing package is an error instead:
# test/host-deps.sh installs everything beforehand, and a package it
# forgot must be added there, not installed while other stages run.
sf_apt_install() {
    local missing=() p
    for p in "$@"; do
        sf_is_installed "$p" || missing+=("$p")
    done
    [ "${#missing[@]}" -gt 0 ] || return 0
    if [ -n "${SF_NO_HOST_APT:-}" ]; then
        printf 'not installed: %s; test/host-deps.sh must install it before any stage starts (SF_NO_HOST_APT)\n' \
            "${missing[*]}" >&2
        return 1
    fi
    printf '==> installing %s\n' "${missing[*]}" >&2
    sf_apt_update
    sf_apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Whether apt knows Debian package $1 (installed or not), updating its
# lists first if it does not (never with SF_NO_HOST_APT: then it does not
# know it); through sudo unless root.
sf_in_archive() {
    apt-cache show "$1" >/dev/null 2>&1 && return 0
    [ -z "${SF_NO_HOST_APT:-}" ] || return 1
    sf_apt_update
    apt-cache show "$1" >/dev/null 2>&1
}

# The npm packages of the client tests (041, 047), exactly as
# test/node/package-lock.json pins them, into test/node/node_modules of the
# tree $1 (ignored by git).  npm ci writes node_modules/.package-lock.json
# last: an install older than the lock file, or an interrupted one, is
# redone.  No install scripts: the only ones are Prisma's, which download
# its native engines from Prisma's own server (the tests do without them,
# see 047_js_orms.pl).  test/chroot-check.sh runs this on the host, whose
# npm has the host's CA and proxy configuration, and the chroot gets the
# packages with its copy of the tree.
sf_install_node_modules() {
    local dir="$1/test/node"
    if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        printf "==> installing the JavaScript client tests' packages (npm ci)\n" >&2
        (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    fi
}

# Copy the tree $1's sources into the directory $2, with the client tests'
# packages (test/node/node_modules) if installed: what git tracks or does
# not ignore, never build or test output.  Under test/check.sh --all-majors
# the native stage builds and cleans in the tree while the chroot stages
# copy it, and a copy of the whole tree failed when make removed
# snowflake.so under it ("File removed before we read it").  A tree without
# git is copied whole, less its build and test output.
sf_copy_tree() {
    local from=$1 to=$2
    if git -c safe.directory="$from" -C "$from" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -c safe.directory="$from" -C "$from" ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do
                # a tracked file deleted in the working tree is not copied
                [ ! -e "$from/$f" ] || printf '%s\0' "$f"
            done |
            tar -C "$from" --null --no-recursion -T - -cf - | tar -C "$to" -xf -
        if [ -d "$from/test/node/node_modules" ]; then
            tar -C "$from" -cf - test/node/node_modules | tar -C "$to" -xf -
        fi
    else
        tar -C "$from" --exclude=./.git --exclude='./tmp_check*' --exclude=./results \
            --exclude=./output_iso --exclude='./test/fuzz/build*' \
            --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
            -cf - . | tar -C "$to" -xf -
    fi
}

# What the stages of test/check.sh --all-majors install on the host besides
# test/setup.sh's packages (sf_wanted_packages): test/patroni-check.sh,
# test/deb-check.sh and test/chroot-check.sh.  test/host-deps.sh installs them all at once.
SF_PATRONI_PACKAGES=(patroni etcd-server python3-etcd python3-psycopg2 curl)
SF_DEB_PACKAGES=(debhelper dpkg-dev postgresql-server-dev-all)
SF_CHROOT_PACKAGES=(debootstrap acl)

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

# Make $1 a port reservation directory (PostgreSQL::Test's
# PG_TEST_PORT_DIR) that the servers of every chroot can share.  Each
# chroot's postgres user has its own uid (100 in one, 101 in another), and
# PostgreSQL::Test::Cluster opens an existing reservation file of a port
# read-write: a file another chroot's user made with the usual umask
# (0644) fails with EACCES, and the test dies before its first test (CI saw
# it: 038 on 19, exit 13, on a port 17 had used).  A default ACL makes every
# file created in the directory rw for all, whatever the creator's umask;
# no sticky bit, as fs.protected_regular refuses opening another user's
# file there with O_CREAT.
sf_port_dir() {
    mkdir -p "$1"
    chmod 0777 "$1"
    command -v setfacl >/dev/null || sf_apt_install acl
    setfacl -d -m u::rw,g::rw,o::rw "$1"
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

# The released version test/t/085_upgrade_order.pl upgrades from (the last
# that writes no WAL record), and its commit: tags do not come with a
# clone, commits do.  test/setup.sh builds it, test/chroot-check.sh exports
# its tree into the chroot's copy.
SF_OLD_RELEASE_VERSION=1.2
SF_OLD_RELEASE_COMMIT=d0c4a94
