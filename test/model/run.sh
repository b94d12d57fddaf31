#!/usr/bin/env bash
# test/model/run.sh: check the model of a key space's history with Spin
# (test/model/README.md), as test/check.sh's suite "model":
#
#   1. exhaustive runs of the current rules (src/history.c), histories of
#      MODEL_MAXOPS operations (default 8), node_id_span 1 and 2, the three
#      properties: pan must report "errors: 0", a complete search (not cut
#      by the depth limit or the memory limit) and at least a floor of
#      states, so that a model that explores nothing fails;
#   2. issue 52's findings 1 to 5: the model built from 1.3's rules
#      (-DRULES13) must find the finding's counterexample (the property it
#      names), and the same run of the current rules none;
#   3. each counterexample replayed through the C functions (build/replay:
#      1.3's rules in rules13.c): the violation must come back from C, every
#      result the model printed must equal C's, and the same operations
#      under src/history.c must break nothing; random histories of the
#      current rules replayed the same way (the model says what the code
#      does);
#   4. planted changes of the current rules must make the checks fail:
#      -DPLANT_SKIP_ACK (a raise relied on before the standbys have its
#      record) the exhaustive run, -DPLANT_HORIZON (a start's floor at the
#      horizon of a lowering, not past it) a deeper run of one server and
#      its clones that the exhaustive bound does not reach.
#
# Spin missing is a failure, not a skip.  Prints one line per run and a
# final "model: PASS" or "model: FAIL"; exits non-zero on any failure.
#
#   PG_CONFIG      the PostgreSQL whose libpgcommon/libpgport replay links
#   MODEL_MAXOPS   operations of the exhaustive runs (default 8)
#   MODEL_MEMLIM   pan's memory limit per run, MB (default 8192: the
#                  exhaustive runs store states whole, about 450 bytes each,
#                  5 and 6 GB)
#   MODEL_JOBS=1   run the two exhaustive runs one after the other (default
#                  side by side: two CPUs, about 12 GB of memory at once)
#   MODEL_KEEP=1   keep the work directory (trails, pan's output)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
MAXOPS=${MODEL_MAXOPS:-8}
MEMLIM=${MODEL_MEMLIM:-8192}
start_all=$SECONDS
failures=0

fail() {
    echo "model: FAILED: $*"
    failures=$((failures + 1))
}

for tool in spin gcc make; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "model: FAILED: $tool is not installed (test/setup.sh installs it)"
        echo "model: FAIL"
        exit 1
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sf-model.XXXXXX")
if [ "${MODEL_KEEP:-0}" != 1 ]; then
    trap 'rm -rf "$work"' EXIT
else
    echo "model: work directory $work"
fi

if ! make -s -C "$here" PG_CONFIG="$PG_CONFIG" BUILD="$work/replay" >"$work/make.log" 2>&1; then
    cat "$work/make.log"
    echo "model: FAILED: build/replay does not build"
    echo "model: FAIL"
    exit 1
fi
replay=$work/replay/replay

# The operations a targeted run enables (snowflake.pml, -DOPS), all of
# them named though not every one is used here.
# shellcheck disable=SC2034
O_MINT=1 O_RAISE=2 O_LOWER=4 O_CRASH=8 O_STOP=16 O_START=32 O_CKPT=64
# shellcheck disable=SC2034
O_PROMOTE=128 O_REJOIN=256 O_CLONE=512 O_IMG=1024 O_RESTORE=2048
O_COPY=4096 O_CONFIRM=8192

# pan NAME "MODEL -D FLAGS" [OPT]: build (gcc -OPT, default -O0: the
# targeted runs are small, the compilation would cost more than -O2 saves)
# and run a verifier in $work/NAME; sets pan_out (its output file),
# pan_errors, pan_states, pan_depth, pan_secs, pan_mem, pan_complete (1 if
# nothing cut the search short).
pan() {
    local name=$1 defs=$2 opt=${3:-O0} d=$work/$1 t0
    mkdir -p "$d"
    cp "$here/snowflake.pml" "$d/"
    pan_out=$d/pan.out
    pan_errors=x pan_states=0 pan_depth=0 pan_secs=0 pan_mem=0 pan_complete=0
    # shellcheck disable=SC2086
    if ! (cd "$d" && spin $defs -a snowflake.pml >spin.out 2>&1 &&
        gcc -$opt -w -DSAFETY -DCOLLAPSE -DMEMLIM="$MEMLIM" -o pan pan.c >>spin.out 2>&1); then
        cat "$d/spin.out"
        return 1
    fi
    t0=$(date +%s%N)
    (cd "$d" && ./pan -m10000 -w26 >pan.out 2>&1)
    t0=$((($(date +%s%N) - t0) / 100000000))
    pan_secs=$((t0 / 10)).$((t0 % 10))
    pan_errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$pan_out")
    pan_states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$pan_out" | xargs printf '%.0f')
    pan_depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$pan_out")
    pan_mem=$(sed -n 's/^ *\([0-9.]*\).*total actual memory usage.*/\1/p' "$pan_out")
    if [ -n "$pan_depth" ] && [ "$pan_depth" -lt 10000 ] &&
        ! grep -qE 'max search depth too small|MEMLIM|out of memory' "$pan_out"; then
        pan_complete=1
    fi
    [ -n "$pan_errors" ]
}

# trail NAME "MODEL -D FLAGS": the EV/RS/PV lines of NAME's trail
trail() {
    # shellcheck disable=SC2086
    (cd "$work/$1" && spin -t $2 snowflake.pml) | grep -oE '(EV|RS|PV) .*' >"$work/$1/trail.txt"
}

# 1. exhaustive runs of the current rules, span 1 and 2 side by side (two
# CPUs), reported in turn
exhaustive() {
    pan "exhaustive-span$1" "-DMAXOPS=$MAXOPS -DSPAN=$1" O2
    declare -p pan_out pan_errors pan_states pan_depth pan_secs pan_mem \
        pan_complete >"$work/exhaustive-span$1.vars"
}
if [ "${MODEL_JOBS:-2}" = 1 ]; then
    exhaustive 1
    exhaustive 2
else
    exhaustive 1 &
    exhaustive 2 &
    wait
fi
for span in 1 2; do
    name=exhaustive-span$span
    defs="-DMAXOPS=$MAXOPS -DSPAN=$span"
    if [ ! -s "$work/$name.vars" ]; then
        fail "$name: pan did not run"
        continue
    fi
    # shellcheck disable=SC1090
    source "$work/$name.vars"
    line="$name: MAXOPS=$MAXOPS span $span: $pan_states states, depth $pan_depth, errors: $pan_errors, $pan_secs s, $pan_mem MB"
    if [ "$pan_errors" != 0 ]; then
        trail "$name" "$defs"
        sed 's/^/    /' "$work/$name/trail.txt"
        fail "$line"
    elif [ "$pan_complete" != 1 ]; then
        grep -E 'too small|MEMLIM|memory' "$pan_out"
        fail "$line: the search was cut short"
    elif [ "$pan_states" -lt 1000000 ]; then
        fail "$line: fewer states than a million, the model explores too little"
    else
        echo "ok   $line"
    fi
done

# A deeper run of the current rules where the exhaustive bound does not
# reach: one server and the standbys it clones, ticks free, a raise to 2,
# to 3 and a lowering to 1 in that order, 8 other operations (the horizon
# of a lowering placed past the clock plus the lead at a promotion).
horizon="-DMAXOPS=8 -DFREE_TICKS -DCAUGHT_UP -DLEADS=$((0x132)) -DSTANDBYS=0 -DOPS=$((O_MINT | O_RAISE | O_LOWER | O_CLONE | O_CRASH | O_PROMOTE))"
if ! pan horizon "$horizon" O2; then
    fail "horizon: pan did not run"
else
    line="horizon (1 server and its clones, raises to 2 and 3, a lowering, 8 operations, ticks free): $pan_states states, depth $pan_depth, errors: $pan_errors, $pan_secs s"
    if [ "$pan_errors" != 0 ]; then
        trail horizon "$horizon"
        sed 's/^/    /' "$work/horizon/trail.txt"
        fail "$line"
    elif [ "$pan_complete" != 1 ]; then
        fail "$line: the search was cut short"
    else
        echo "ok   $line"
    fi
fi

# 2, 3. the findings: NAME PROPERTY SPAN STANDBYS "-D FLAGS"
findings=(
    "finding1 P1 1 1 -DMAXOPS=8 -DOPS=$((O_MINT | O_RAISE | O_CRASH | O_PROMOTE))"
    "finding2 P1 1 0 -DMAXOPS=9 -DFREE_TICKS -DCAUGHT_UP -DCHECK=1 -DLEADS=$((0x213)) -DOPS=$((O_MINT | O_RAISE | O_LOWER | O_CLONE | O_CRASH | O_PROMOTE))"
    "finding3 P3 1 0 -DMAXOPS=6 -DFREE_TICKS -DOPS=$((O_MINT | O_RAISE | O_LOWER | O_CRASH | O_START))"
    "finding4 P3 1 0 -DMAXOPS=8 -DFREE_TICKS -DOPS=$((O_MINT | O_IMG | O_RESTORE | O_CLONE | O_CONFIRM | O_CRASH | O_PROMOTE))"
    "finding5 P1 2 1 -DMAXOPS=8 -DOPS=$((O_MINT | O_IMG | O_COPY | O_CRASH | O_PROMOTE))"
)
for f in "${findings[@]}"; do
    read -r name prop span standbys flags <<<"$f"
    defs="-DSPAN=$span -DSTANDBYS=$standbys $flags"
    check=$(sed -n 's/.*-DCHECK=\([0-9]*\).*/\1/p' <<<"$flags")
    ropts=(--span "$span" --standbys "$standbys" --check "${check:-7}")
    if ! pan "$name-13" "-DRULES13 $defs"; then
        fail "$name-13: pan did not run"
        continue
    fi
    line="$name under 1.3's rules: $pan_states states, $pan_secs s"
    if [ "$pan_errors" = 0 ]; then
        fail "$line: no counterexample"
    else
        trail "$name-13" "-DRULES13 $defs"
        t=$work/$name-13/trail.txt
        pv=$(grep -m1 '^PV ' "$t")
        if [ "${pv:3:2}" != "$prop" ]; then
            fail "$line: expected a violation of $prop, found: ${pv:-nothing}"
        else
            echo "ok   $line: ${pv#PV }"
            grep '^EV ' "$t" | sed 's/^EV /       /'
            out=$("$replay" --rules13 --quiet "${ropts[@]}" "$t")
            rc=$?
            if [ $rc -ne 1 ]; then
                echo "$out"
                fail "$name: replayed through rules13.c: exit $rc, not the violation (1)"
            else
                echo "ok   $name replayed through rules13.c: $(tail -1 <<<"$out")"
            fi
            out=$("$replay" --cross --quiet "${ropts[@]}" "$t")
            rc=$?
            if [ $rc -ne 0 ] && [ $rc -ne 4 ]; then
                echo "$out"
                fail "$name: the same operations through history.c: exit $rc"
            else
                echo "ok   $name, the same operations through history.c: $(tail -1 <<<"$out")"
            fi
        fi
    fi
    opt=O0
    [ "$name" = finding2 ] && opt=O2    # 12 million states: worth -O2
    if ! pan "$name-new" "$defs" $opt; then
        fail "$name-new: pan did not run"
        continue
    fi
    line="$name under the current rules: $pan_states states, depth $pan_depth, errors: $pan_errors, $pan_secs s"
    if [ "$pan_errors" != 0 ]; then
        trail "$name-new" "$defs"
        sed 's/^/    /' "$work/$name-new/trail.txt"
        fail "$line"
    elif [ "$pan_complete" != 1 ]; then
        fail "$line: the search was cut short"
    else
        echo "ok   $line"
    fi
done

# 3. random histories of the current rules, replayed through history.c:
# every result of the model must be C's
nsim=0
for span in 1 2; do
    for seed in $(seq 1 40); do
        d=$work/sim
        mkdir -p "$d"
        (cd "$d" && cp "$here/snowflake.pml" . &&
            spin -DMAXOPS=10 -DSPAN=$span -n$seed snowflake.pml 2>&1) |
            grep -oE '(EV|RS|PV) .*' >"$d/sim.txt"
        out=$("$replay" --quiet --span $span "$d/sim.txt")
        rc=$?
        nsim=$((nsim + 1))
        if [ $rc -ne 0 ]; then
            echo "$out"
            fail "random history (span $span, seed $seed) replayed through history.c: exit $rc"
        fi
    done
done
echo "ok   $nsim random histories of 10 operations (span 1 and 2) replayed through history.c: the model's results are C's"

# 4. planted changes must make the checks fail: a raise relied on before
# the standbys have its record (the exhaustive run), a start's floor at the
# horizon instead of past it (the deeper run of the horizon); each trail
# must disagree with the C functions, which have no such change
planted=(
    "planted-skip-ack -DMAXOPS=$MAXOPS -DSPAN=1 -DPLANT_SKIP_ACK"
    "planted-horizon -DPLANT_HORIZON $horizon"
)
for p in "${planted[@]}"; do
    read -r name defs <<<"$p"
    if ! pan "$name" "$defs"; then
        fail "$name: pan did not run"
        continue
    fi
    if [ "$pan_errors" = 0 ]; then
        fail "$name: the planted change is not found ($pan_states states)"
        continue
    fi
    trail "$name" "$defs"
    pv=$(grep -m1 '^PV ' "$work/$name/trail.txt")
    echo "ok   $name: the check fails (${pv#PV }) after $pan_states states, $pan_secs s"
    "$replay" --quiet --standbys "$(sed -n 's/.*-DSTANDBYS=\([0-9]\).*/\1/p' <<<"$defs" | grep . || echo 2)" \
        "$work/$name/trail.txt" >"$work/$name/replay.out"
    rc=$?
    if [ $rc -ne 3 ]; then
        cat "$work/$name/replay.out"
        fail "$name: replayed through history.c, exit $rc: the planted model should disagree with C (3)"
    else
        echo "ok   $name replayed through history.c: the model disagrees with C, as planted ($(head -1 "$work/$name/replay.out" | cut -c1-90))"
    fi
done

echo "model: $((SECONDS - start_all)) s in all"
if [ $failures -ne 0 ]; then
    echo "model: FAIL ($failures failures)"
    exit 1
fi
echo "model: PASS"
