#!/usr/bin/env bash
# test/load.sh: run a command several times in a row beside a CPU load, to
# show that tests hold on a busy machine (CONTRIBUTING.md, "Tests on a
# loaded machine").  Starts N processes that spin on the CPU (shell loops,
# at the default nice level), runs the command K times, one after another,
# and stops the busy processes by their PIDs when it ends, however it ends.
# For each run it prints the exit status, the duration and the lowest and
# highest one-minute load average sampled (every 5 s) while it ran; it
# exits non-zero if any run failed.
#
#   test/load.sh --busy 16 --times 10 -- \
#       env PROVE_TESTS='test/t/018_fault_injection.pl test/t/028_background_writer.pl' \
#       test/check.sh
#
# Options:
#   --busy N     busy processes (default 16)
#   --times K    runs of the command (default 1)
#   --log DIR    keep each run's output in DIR/run-I.log (default: a
#                temporary directory, printed at the end)
set -u
usage="usage: test/load.sh [--busy N] [--times K] [--log DIR] -- COMMAND [ARG...]"
busy=16 times=1 logdir=
while [ $# -gt 0 ]; do
    case $1 in
        --busy) busy=${2:?$usage}; shift 2 ;;
        --times) times=${2:?$usage}; shift 2 ;;
        --log) logdir=${2:?$usage}; shift 2 ;;
        --) shift; break ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
case $busy$times in
    *[!0-9]*) echo "$usage" >&2; exit 2 ;;
esac
logdir=${logdir:-$(mktemp -d /tmp/snowflake-load.XXXXXX)}
mkdir -p "$logdir"

pids=()
sampler=
stop_all() {
    local pid
    for pid in "${pids[@]}" $sampler; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${pids[@]}" $sampler; do
        wait "$pid" 2>/dev/null
    done
    pids=() sampler=
}
trap stop_all EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$busy"); do
    ( trap - INT TERM; while :; do :; done ) &
    pids+=("$!")
done
echo "==> $busy busy processes: ${pids[*]}"

# The one-minute load average every 5 s, with the time, into $logdir/load.
(
    while :; do
        echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg)"
        sleep 5
    done
) >"$logdir/load" &
sampler=$!

# The lowest and highest load average sampled from time $1 to $2.
load_range() {
    awk -v from="$1" -v to="$2" '
        $1 >= from && $1 <= to {
            if (n == 0 || $2 < lo) lo = $2
            if (n == 0 || $2 > hi) hi = $2
            n++
        }
        END { if (n) printf "%s-%s", lo, hi; else printf "n/a" }' "$logdir/load"
}

failed=0
for i in $(seq "$times"); do
    start=$(date +%s)
    "$@" >"$logdir/run-$i.log" 2>&1
    status=$?
    end=$(date +%s)
    [ "$status" -eq 0 ] || failed=$((failed + 1))
    printf '==> run %d of %d: %s, %d s, load average %s\n' "$i" "$times" \
        "$([ "$status" -eq 0 ] && echo pass || echo "FAIL (exit $status)")" \
        "$((end - start))" "$(load_range "$start" "$end")"
done
stop_all
echo "==> $((times - failed)) of $times runs passed; outputs in $logdir"
[ "$failed" -eq 0 ]
