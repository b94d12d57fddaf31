#!/usr/bin/env bash
# test/fuzz/run.sh: build the fuzz targets of test/fuzz (libFuzzer with
# AddressSanitizer and UndefinedBehaviorSanitizer) and run each one on its
# committed corpus (test/fuzz/corpus/NAME: seeds and the inputs of earlier
# findings) plus the new inputs it makes.  Fails if a target crashes,
# breaks a property, leaks, hangs or did not run; the input that did it is
# copied into test/fuzz/corpus/NAME/ as regress-<kind>-<hash>, to be
# committed with the fix.  test/check.sh runs it.
#
#   test/fuzz/run.sh [options] [TARGET...]    (default: every target)
#     --seconds N   fuzz for N seconds in all, shared among the targets
#                   (default: SNOWFLAKE_FUZZ_SECONDS, else 60); 0 runs only
#                   the committed inputs
#     --runs N      fuzz each target for N executions instead (by hand:
#                   docs/guarantees.md's figures)
#     --corpus DIR  keep each target's new inputs in DIR/NAME (default: a
#                   temporary directory, removed at the end)
#     --coverage    instead of fuzzing, build the targets for llvm-cov and
#                   report the lines of src/ that the inputs of --corpus DIR
#                   (and the committed ones) reach
#     --build DIR   where to build (default: test/fuzz/build, or
#                   test/fuzz/build-cov for --coverage)
#
# PG_CONFIG names the PostgreSQL whose server headers and libpgcommon and
# libpgport the targets are built with (default: pg_config on PATH).
# Needs clang and its sanitizer and libFuzzer runtime (Debian's clang and
# libclang-rt-dev, which test/setup.sh installs), and for --coverage
# llvm-profdata and llvm-cov of the same version (Debian's llvm).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${SNOWFLAKE_FUZZ_SECONDS:-60}
runs=
corpus=
coverage=0
build=
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --corpus) corpus=$2; shift 2 ;;
        --coverage) coverage=1; shift ;;
        --build) build=$2; shift 2 ;;
        -*) echo "usage: test/fuzz/run.sh [--seconds N | --runs N] [--corpus DIR] [--coverage] [--build DIR] [TARGET...]" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
PG_CONFIG=${PG_CONFIG:-pg_config}
if [ "$coverage" -eq 1 ]; then
    build=${build:-$here/build-cov}
else
    build=${build:-$here/build}
fi
all=$(make -s -C "$here" list)
[ "${#targets[@]}" -gt 0 ] || read -ra targets <<<"$all"
for t in "${targets[@]}"; do
    grep -qw -- "$t" <<<"$all" || { echo "test/fuzz/run.sh: no target $t (targets: $all)" >&2; exit 2; }
done

echo "==> fuzz: building ${#targets[@]} targets with $(clang --version | head -n 1) against $("$PG_CONFIG" --version)"
flags=(PG_CONFIG="$PG_CONFIG" BUILD="$build")
[ "$coverage" -eq 0 ] || flags+=(COVERAGE=1)
make -s -C "$here" "${flags[@]}" "${targets[@]/#/$build/}" >/dev/null

work=$(mktemp -d /tmp/snowflake-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -n "$corpus" ] || corpus=$work/corpus

if [ "$coverage" -eq 1 ]; then
    # Each target over its inputs, counted by the instrumented build.
    prof=()
    for t in "${targets[@]}"; do
        mkdir -p "$corpus/$t"
        LLVM_PROFILE_FILE="$work/$t.profraw" "$build/$t" -runs=0 \
            "$corpus/$t" "$here/corpus/$t" >"$work/$t.log" 2>&1 ||
            { cat "$work/$t.log"; echo "FAILED: $t on its corpus" >&2; exit 1; }
        prof+=("$work/$t.profraw")
    done
    profdata=$(command -v llvm-profdata-"$(clang --version | sed -nE '1s/.*version ([0-9]+).*/\1/p')" || command -v llvm-profdata)
    llvmcov=$(command -v llvm-cov-"$(clang --version | sed -nE '1s/.*version ([0-9]+).*/\1/p')" || command -v llvm-cov)
    for t in "${targets[@]}"; do
        "$profdata" merge -sparse -o "$work/$t.profdata" "$work/$t.profraw"
        # Only the lines of the files of src/ the target tests.
        keep=$(make -s -C "$here" sources-"$t")
        echo "==> coverage of $t ($(find "$corpus/$t" "$here/corpus/$t" -type f | wc -l) inputs)"
        "$llvmcov" report "$build/$t" -instr-profile="$work/$t.profdata" >"$work/$t.cov"
        grep -E '^Filename' "$work/$t.cov"
        for f in $keep; do
            grep -E "(^|/)src/${f//./\\.} " "$work/$t.cov"
        done
    done
    # A file of src/ that several targets test (textform.c: one per form),
    # by all of them together.
    if [ "${#targets[@]}" -gt 1 ]; then
        "$profdata" merge -sparse -o "$work/all.profdata" "${prof[@]}"
        objects=()
        for t in "${targets[@]:1}"; do
            objects+=(-object "$build/$t")
        done
        echo "==> coverage of ${targets[*]} together"
        "$llvmcov" report "$build/${targets[0]}" "${objects[@]}" \
            -instr-profile="$work/all.profdata" >"$work/all.cov"
        grep -E '^Filename' "$work/all.cov"
        for f in $(for t in "${targets[@]}"; do make -s -C "$here" sources-"$t"; done | tr ' ' '\n' | sort -u); do
            grep -E "(^|/)src/${f//./\\.} " "$work/all.cov"
        done
    fi
    exit 0
fi

# Fuzz each target in turn: a share of the time, or a number of runs.
per=$(( ${#targets[@]} > 0 ? seconds / ${#targets[@]} : 0 ))
total_runs=0
ran=0
failed=()
for t in "${targets[@]}"; do
    mkdir -p "$corpus/$t" "$work/artifacts/$t"
    if [ -n "$runs" ]; then
        limit=(-runs="$runs")
    elif [ "$per" -gt 0 ]; then
        limit=(-max_total_time="$per")
    else
        limit=(-runs=0)
    fi
    # A dictionary of the input's words, if the target has one: NAME.dict,
    # or that of its family (layout.dict for layout_parse).
    dict=()
    for d in "$here/$t.dict" "$here/${t%%_*}.dict"; do
        [ -f "$d" ] && { dict=(-dict="$d"); break; }
    done
    t0=$(date +%s)
    status=0
    "$build/$t" "${limit[@]}" "${dict[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$t/" "$corpus/$t" "$here/corpus/$t" \
        >"$work/$t.log" 2>&1 || status=$?
    # (Either may be missing from the log of a target that failed.)
    n=$(sed -nE 's/^stat::number_of_executed_units: ([0-9]+)$/\1/p' "$work/$t.log" | tail -n 1 || true)
    cov=$(grep -aoE '(INITED|DONE|pulse|NEW|REDUCE) +cov: [0-9]+ ft: [0-9]+' "$work/$t.log" |
        tail -n 1 | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+)/\1/' || true)
    found=$(ls "$work/artifacts/$t")
    if [ "$status" -ne 0 ] || [ -n "$found" ] || [ -z "$n" ]; then
        tail -n 60 "$work/$t.log"
        for f in $found; do
            kind=${f%%-*}
            cp "$work/artifacts/$t/$f" "$here/corpus/$t/regress-$kind-${f#*-}"
            echo "==> fuzz $t: the input is test/fuzz/corpus/$t/regress-$kind-${f#*-}; commit it with the fix"
        done
        failed+=("$t")
        continue
    fi
    ran=$((ran + 1))
    total_runs=$((total_runs + n))
    echo "==> fuzz $t: $n runs in $(($(date +%s) - t0)) s, $cov, $(ls "$corpus/$t" | wc -l) new inputs kept"
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED: fuzz targets ${failed[*]} found a crash or a broken property (see above)" >&2
    exit 1
fi
echo "==> fuzz: every target ran: $ran of ${#targets[@]} targets, $total_runs runs"
