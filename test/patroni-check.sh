#!/usr/bin/env bash
# Failover under a real cluster manager: three Patroni members on loopback
# with one etcd, the extension preloaded and the node id set through
# Patroni's configuration, clients inserting rows keyed by
# snowflake_nextval() throughout, while
#
#   1. the leader's postmaster is killed with SIGKILL (automatic failover,
#      primary_start_timeout = 0);
#   2. the old leader rejoins as a replica (Patroni runs pg_rewind);
#   3. a planned switchover hands the leadership back to it.
#
# Passes only if no ID returned to any client (collected client-side, also
# from transactions the failover lost) was returned twice, and every ID is
# above every ID returned before its request was sent (so every ID issued
# by a new leader is above every ID returned before it).  Run with one node
# id shared by all members, with one shared by all members and
# snowflake.node_id_span = 2 (each timeline mints with the next node id in
# turn: the stored IDs must carry node ids 7 and 8, nothing else), with
# one node id per member, and with node ids derived from the host name
# (hostname: snowflake.node_id_from = 'hostname', base 10 and count 8 in the
# DCS configuration, every member's Patroni in a UTS namespace of its own
# with host name pg-N, test/hostns.c: member N mints with node id 10 + N,
# and the stored IDs carry those of the leaders, nothing else).  Each mode
# prints how many IDs the clients got with each node id.
#
#   test/patroni-check.sh                  every node id mode (CI)
#   test/patroni-check.sh per-member       one mode: per-member, shared,
#                                          shared-span or hostname
#   test/patroni-check.sh --demo           per-member, printing what happens
#                                          and pausing briefly between steps
#
# Installs Debian's patroni and etcd-server if missing, builds and installs
# the extension (as test/check.sh does).  Uses the PostgreSQL that
# PG_CONFIG names, else the newest installed.  Root or sudo; the servers
# run as the "postgres" user when run as root.  Every wait is a bounded poll;
# the whole run is bounded by PATRONI_CHECK_TIMEOUT seconds (default 600);
# every process started here is stopped by its PID at the end.
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

modes=(shared shared-span per-member hostname)
demo=0
case "${1:-}" in
    '') ;;
    shared | shared-span | per-member | hostname) modes=("$1") ;;
    --demo) modes=(per-member); demo=1 ;;
    *) echo "usage: test/patroni-check.sh [shared|shared-span|per-member|hostname|--demo]" >&2; exit 2 ;;
esac
limit=${PATRONI_CHECK_TIMEOUT:-600}
started_at=$(date +%s)

sf_pick_major
sf_install_packages
sf_apt_install "${SF_PATRONI_PACKAGES[@]}"
sf_build_install

# AS_PG runs a command as the servers' user; BG does too but execs it, so
# that the PID of a background job is the PID of the process itself.
if [ "$(id -u)" -eq 0 ]; then
    AS_PG=(runuser -u postgres --)
    BG=(setpriv --reuid=postgres --regid=postgres --init-groups)
else
    AS_PG=()
    BG=()
fi

work=$(mktemp -d /tmp/snowflake-patroni.XXXXXX)
chmod 755 "$work"
[ "$(id -u)" -eq 0 ] && chown postgres: "$work"
pids=()          # every process started here, stopped at the end by PID

# test/hostns.c runs a member's Patroni (and so its PostgreSQL) in a UTS
# namespace of its own with host name pg-N (mode hostname); as root it
# makes the namespace and runs BG's setpriv in it, which drops to postgres.
cc -O2 -Wall -Wextra -Werror -o "$work/hostns" "$SNOWFLAKE_ROOT/test/hostns.c"

stop_all() {
    local p d pm i alive
    # Clients and Patroni members first (Patroni stops its PostgreSQL and
    # gives up its leader key, which needs etcd), etcd last.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        [ "${pids[$i]}" = "${etcd_pid:-}" ] || kill "${pids[$i]}" 2>/dev/null || true
    done
    for _ in $(seq 1 150); do
        alive=0
        for p in "${pids[@]}"; do
            [ "$p" = "${etcd_pid:-}" ] && continue
            kill -0 "$p" 2>/dev/null && alive=1
        done
        [ "$alive" -eq 0 ] && break
        sleep 0.2
    done
    [ -n "${etcd_pid:-}" ] && kill "$etcd_pid" 2>/dev/null
    sleep 0.5
    for p in "${pids[@]}"; do
        kill -9 "$p" 2>/dev/null || true
    done
    # A postmaster whose Patroni died first: stop it by the PID it recorded.
    for d in "$work"/m*/data; do
        [ -f "$d/postmaster.pid" ] || continue
        pm=$(head -n 1 "$d/postmaster.pid")
        if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null &&
            grep -q postgres "/proc/$pm/comm" 2>/dev/null; then
            kill -QUIT "$pm" 2>/dev/null || true
        fi
    done
    pids=()
    etcd_pid=
}
finish() {
    local rc=$?
    stop_all
    if [ "$rc" -ne 0 ]; then
        for f in "$work"/*.log "$work"/m*/patroni.log; do
            [ -f "$f" ] && { echo "==> tail of $f"; tail -n 40 "$f"; }
        done
        for f in "$work"/m*/data/log/*; do
            [ -f "$f" ] && { echo "==> tail of $f"; tail -n 20 "$f"; }
        done
    fi
    if [ "$rc" -ne 0 ] && [ -n "${PATRONI_KEEP_FAILED:-}" ]; then
        echo "kept $work"
    else
        rm -rf "$work"
    fi
    exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

say() { printf '==> patroni: %s\n' "$*"; }
fail() { printf 'FAILED: patroni: %s\n' "$*" >&2; exit 1; }
pause() { [ "$demo" -eq 1 ] && sleep 2 || true; }

# Wait (bounded) until "$@" succeeds; fail with $what otherwise.
wait_for() {
    local what=$1 seconds=$2
    shift 2
    local deadline=$(($(date +%s) + seconds))
    while ! "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${seconds}s waiting for $what"
        [ "$(($(date +%s) - started_at))" -lt "$limit" ] || fail "the run exceeded ${limit}s"
        sleep 0.5
    done
}

# Free loopback TCP ports (nothing listening, not handed out before), below
# the kernel's range of ephemeral ports: a port a client connection happens
# to use cannot be listened on.
free_port() {
    local p low
    low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    while :; do
        p=$((10000 + RANDOM % (low - 10000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null &&
            ! grep -qx "$p" "$work/ports" 2>/dev/null; then
            echo "$p" >>"$work/ports"
            echo "$p"
            return
        fi
    done
}

api() {    # api MEMBER PATH: GET from a member's REST API
    curl -sf --max-time 2 "http://127.0.0.1:${rest[$1]}$2"
}
role_is() {    # role_is MEMBER ROLE (primary|replica): 200 only if running as that
    api "$1" "/$2" >/dev/null
}
leader() {
    local m
    for m in 1 2 3; do
        if api "$m" /primary >/dev/null 2>&1; then
            echo "$m"
            return 0
        fi
    done
    return 1
}
has_leader_other_than() {
    local l
    l=$(leader) && [ "$l" != "$1" ]
}
psql_m() {    # psql_m MEMBER SQL
    "${AS_PG[@]}" "$PG_BINDIR/psql" -X -At -h 127.0.0.1 -p "${pgport[$1]}" -U postgres \
        -d postgres -c "$2"
}
node_id_is() {    # node_id_is MEMBER VALUE
    [ "$(psql_m "$1" 'SHOW snowflake.node_id')" = "$2" ]
}
derived_node_id_is() {    # derived_node_id_is MEMBER VALUE: node id and its source
    [ "$(psql_m "$1" "SELECT node_id || ' ' || node_id_source FROM snowflake_stats")" = "$2 hostname pg-$1" ]
}
streaming_replicas() {    # the leader streams to both other members
    [ "$(psql_m "$1" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 2 ]
}

# One client: insert rows keyed by snowflake_nextval() on whichever member
# accepts writes, until $work/stop exists; for every ID returned, print the
# time the request was sent, the time the answer came, the ID and the port.
client() {
    local out=$1 conn t0 t1 r
    conn="host=127.0.0.1,127.0.0.1,127.0.0.1 port=${pgport[1]},${pgport[2]},${pgport[3]}"
    conn+=" user=postgres dbname=postgres target_session_attrs=read-write connect_timeout=2"
    while [ ! -e "$work/stop" ]; do
        t0=$(date +%s%N)
        r=$(timeout 10 "$PG_BINDIR/psql" -X -q -At -F ' ' -d "$conn" -c \
            "INSERT INTO ids (id) VALUES (snowflake_nextval()) RETURNING id, inet_server_port()" \
            2>/dev/null) || { sleep 0.05; continue; }
        t1=$(date +%s%N)
        [ -n "$r" ] && echo "$t0 $t1 $r" >>"$out"
    done
}

# The checks on what the clients collected: no ID twice; each ID above all
# IDs whose answer came before its request was sent.
check_ids() {
    local files=("$@")
    perl -e '
        my @r;
        while (<>) {
            /^\d+ \d+ \d+ \d+$/ or die "unexpected client output: $_";
            my ($t0, $t1, $id, $port) = split;
            push @r, [$t0, $t1, $id, $port];
        }
        my %seen; my $dups = 0;
        $seen{$_->[2]}++ == 1 and $dups++ for @r;
        my @by_sent = sort { $a->[0] <=> $b->[0] } @r;
        my @by_recv = sort { $a->[1] <=> $b->[1] } @r;
        my ($j, $max, $bad) = (0, -1, 0);
        for my $x (@by_sent) {
            while ($j < @by_recv && $by_recv[$j][1] < $x->[0]) {
                $max = $by_recv[$j][2] if $by_recv[$j][2] > $max;
                $j++;
            }
            if ($x->[2] <= $max) {
                $bad++;
                print STDERR "ID $x->[2] from port $x->[3] is not above $max, returned before it\n"
                    if $bad <= 5;
            }
        }
        my @terms; my $prev = "";
        for my $x (sort { $a->[1] <=> $b->[1] } @r) {
            push @terms, $x->[3] if $x->[3] ne $prev;
            $prev = $x->[3];
        }
        # The node id of each ID (default layout: 10 node bits, 12 sequence).
        my %nodes;
        $nodes{($_->[2] >> 12) & 1023}++ for @r;
        printf "ids=%d duplicates=%d out_of_order=%d leader_terms=%s node_ids=%s\n",
            scalar(@r), $dups, $bad, join(">", @terms),
            join(",", map { "$_:$nodes{$_}" } sort { $a <=> $b } keys %nodes);
    ' "${files[@]}"
}

run_mode() {
    local mode=$1 dir m etcd_client etcd_peer old new summary
    dir=$work/$mode
    say "node ids: $mode"
    etcd_client=$(free_port)
    etcd_peer=$(free_port)
    declare -g -A rest pgport
    for m in 1 2 3; do
        rest[$m]=$(free_port)
        pgport[$m]=$(free_port)
    done
    rm -rf "$work"/m* "$work/etcd" "$work/stop" "$work"/client*.out
    "${AS_PG[@]}" mkdir -p "$work/etcd"
    "${BG[@]}" etcd --name e1 --data-dir "$work/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_client" \
        --advertise-client-urls "http://127.0.0.1:$etcd_client" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
        --initial-cluster "e1=http://127.0.0.1:$etcd_peer" >"$work/etcd.log" 2>&1 &
    etcd_pid=$!
    pids+=($!)
    wait_for "etcd" 30 curl -sf --max-time 2 "http://127.0.0.1:$etcd_client/health"

    # The node id: cluster-wide in the DCS (shared, and shared-span with a
    # span of 2 there too), or in each member's own parameters (per-member).
    local shared_line="" node_line="" host=()
    [ "$mode" = shared ] && shared_line="        snowflake.node_id: 7"
    [ "$mode" = shared-span ] &&
        shared_line=$'        snowflake.node_id: 7\n        snowflake.node_id_span: 2'
    [ "$mode" = hostname ] &&
        shared_line=$'        snowflake.node_id_from: hostname\n        snowflake.node_id_base: 10\n        snowflake.node_id_count: 8'
    for m in 1 2 3; do
        [ "$mode" = hostname ] && host=("$work/hostns" "pg-$m")
        [ "$mode" = per-member ] && node_line="    snowflake.node_id: $m"
        "${AS_PG[@]}" mkdir -p "$work/m$m"
        "${AS_PG[@]}" tee "$work/m$m/patroni.yml" >/dev/null <<EOF
scope: snowflake-$mode
namespace: /snowflake-check/
name: m$m
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${rest[$m]}
  connect_address: 127.0.0.1:${rest[$m]}
etcd3:
  hosts: 127.0.0.1:$etcd_client
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    primary_start_timeout: 0
    maximum_lag_on_failover: 1073741824
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        shared_preload_libraries: snowflake
        snowflake.max_drift_ms: 1000
        wal_log_hints: 'on'
        wal_level: replica
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        logging_collector: 'on'
        log_directory: log
$shared_line
  initdb:
    - encoding: UTF8
    - auth: trust
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${pgport[$m]}
  connect_address: 127.0.0.1:${pgport[$m]}
  data_dir: $work/m$m/data
  bin_dir: $PG_BINDIR
  pgpass: $work/m$m/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: '$work/m$m'
$node_line
EOF
        "${host[@]}" "${BG[@]}" env HOME="$work" patroni "$work/m$m/patroni.yml" \
            >"$work/m$m/patroni.log" 2>&1 &
        pids+=($!)
        # The first member bootstraps the cluster before the others join.
        [ "$m" -eq 1 ] && wait_for "m1 to bootstrap as the leader" 120 role_is 1 primary
    done
    wait_for "the leader to stream to both replicas" 180 streaming_replicas 1
    say "3 members running, m1 leads"
    psql_m 1 "CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY)" >/dev/null
    for m in 1 2 3; do
        if [ "$mode" = hostname ]; then
            wait_for "m$m to run with node id $((10 + m)) from host name pg-$m" 60 \
                derived_node_id_is "$m" "$((10 + m))"
            continue
        fi
        local want=$m
        [ "$mode" != per-member ] && want=7
        wait_for "m$m to run with snowflake.node_id $want" 60 node_id_is "$m" "$want"
    done
    pause

    for c in 1 2; do
        client "$work/client$c.out" &
        pids+=($!)
    done
    wait_for "clients to get IDs from m1" 30 test -s "$work/client2.out"

    # 1. SIGKILL the leader's postmaster: automatic failover.  Its WAL
    # senders are frozen (SIGSTOP) first while the clients go on, so that
    # the replicas miss the last transactions: the failover loses IDs the
    # clients were given, and the old leader's history diverges from the
    # new one's, which makes Patroni rewind it.
    old=$(leader) || fail "no leader"
    local pm senders before
    pm=$(head -n 1 "$work/m$old/data/postmaster.pid")
    senders=$(psql_m "$old" "SELECT string_agg(pid::text, ' ') FROM pg_stat_replication")
    [ -n "$senders" ] || fail "m$old has no WAL senders"
    kill -STOP $senders
    before=$(cat "$work"/client*.out | wc -l)
    wait_for "clients to get IDs the replicas do not have" 60 \
        bash -c "[ \$(cat $work/client*.out | wc -l) -gt $((before + 20)) ]"
    say "killing the postmaster of m$old (PID $pm) and its frozen WAL senders with SIGKILL"
    kill -9 "$pm" $senders
    wait_for "a new leader" 120 has_leader_other_than "$old"
    new=$(leader)
    say "m$new took over"
    before=$(cat "$work"/client*.out | wc -l)
    wait_for "clients to get IDs from m$new" 60 \
        bash -c "[ \$(cat $work/client*.out | wc -l) -gt $((before + 20)) ]"
    pause

    # 2. The old leader rejoins as a replica.
    wait_for "m$old to rejoin as a streaming replica" 180 streaming_replicas "$new"
    wait_for "m$old to run as a replica" 120 role_is "$old" replica
    grep -i 'rewind' "$work/m$old/patroni.log" | sed 's/^/    /' | head -n 5
    if grep -qE 'running pg_rewind|pg_rewind: Done' "$work/m$old/patroni.log"; then
        say "m$old rejoined as a replica through pg_rewind"
    else
        fail "m$old rejoined without pg_rewind (see its patroni.log)"
    fi
    pause

    # 3. Planned switchover back to the old leader.
    say "switchover from m$new to m$old"
    "${AS_PG[@]}" patronictl -c "$work/m$new/patroni.yml" switchover --leader "m$new" \
        --candidate "m$old" --force >"$work/switchover.log" 2>&1 ||
        fail "patronictl switchover failed: $(cat "$work/switchover.log")"
    wait_for "m$old to lead again" 120 role_is "$old" primary
    before=$(cat "$work"/client*.out | wc -l)
    wait_for "clients to get IDs from m$old again" 60 \
        bash -c "[ \$(cat $work/client*.out | wc -l) -gt $((before + 20)) ]"
    touch "$work/stop"
    wait_for "the clients to stop" 30 bash -c "! kill -0 ${pids[-1]} ${pids[-2]}"

    # The IDs the table kept: those the clients got but the table lacks were
    # lost in the failover (the frozen WAL senders never shipped them).
    psql_m "$old" "SELECT id FROM ids" >"$work/kept.ids" || fail "cannot read the table"
    local lost
    lost=$(awk 'NR == FNR { kept[$1] = 1; next } /^[0-9]+ [0-9]+ [0-9]+ [0-9]+$/ && !($3 in kept)' \
        "$work/kept.ids" "$work"/client*.out | wc -l)
    say "$mode: $lost IDs returned to clients were lost in the failover"
    [ "$lost" -ge 1 ] || fail "$mode: no transaction was lost: the failover did not test that case"
    summary=$(check_ids "$work"/client*.out) || fail "checking the IDs failed"
    say "$mode: $summary"
    echo "$summary" | grep -q ' duplicates=0 ' || fail "$mode: an ID was returned twice"
    echo "$summary" | grep -q ' out_of_order=0 ' || fail "$mode: an ID was not above an earlier one"
    # The clients saw three leadership terms: m1, the failover target, m1.
    local terms
    terms=$(echo "$summary" | sed -E 's/.*leader_terms=([^ ]*).*/\1/' | tr '>' '\n' | wc -l)
    [ "$terms" -ge 3 ] || fail "$mode: the clients saw $terms leadership terms, not 3"
    if [ "$mode" = per-member ]; then
        local nodes
        nodes=$(psql_m "$old" "SELECT count(DISTINCT snowflake_node_id(id)) FROM ids")
        [ "$nodes" -ge 2 ] || fail "per-member: the stored IDs carry $nodes node ids"
    fi
    if [ "$mode" = hostname ]; then
        # The leaders minted with their own node ids: m1's and the failover
        # target's, nothing else.
        local nodes want
        nodes=$(psql_m "$old" "SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM ids")
        want=$(printf '%s\n' $((10 + old)) $((10 + new)) | sort -n | paste -sd,)
        [ "$nodes" = "$want" ] || fail "hostname: the stored IDs carry node ids $nodes, not $want"
        say "hostname: the stored IDs carry node ids $nodes (members m$old and m$new)"
    fi
    if [ "$mode" = shared-span ]; then
        # Three terms on three timelines: node ids 7, 8 and 7 again.
        local nodes
        nodes=$(psql_m "$old" "SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM ids")
        [ "$nodes" = 7,8 ] || fail "shared-span: the stored IDs carry node ids $nodes, not 7,8"
        say "shared-span: the stored IDs carry node ids $nodes"
    fi
    stop_all
    say "$mode: passed"
}

for mode in "${modes[@]}"; do
    run_mode "$mode"
done
say "every check passed (${modes[*]}) in $(($(date +%s) - started_at)) s"
