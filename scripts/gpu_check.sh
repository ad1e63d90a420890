#!/usr/bin/env bash
# The checks that need a GPU, in one run (issue "GPU"): the tests marked
# cuda and the benchmarks on the device; ends with one summary line. Run it
# where CUDA is: bash scripts/gpu_check.sh [device] (default: cuda);
# PYTHON names the interpreter (default: python). BASELINE names another
# tree of the project (say a `git archive` of the last commit): its
# bench_resample runs first, in the same call, for a before and after.
# CANDIDATES names modules of benchmarks/candidates (say "triton_draw
# capture_keeps_cache"): the resample, step and end-to-end benchmarks run
# again with each in place of the library function it replaces (their
# tests are among the cuda tests); each adds minutes, so where device time
# is short, name one.
set -uo pipefail
cd "$(dirname "$0")/.."
DEVICE=${1:-cuda}
PY=${PYTHON:-python}
export PYTHONPATH="$PWD/src:$PWD/lab/src:$PWD${PYTHONPATH:+:$PYTHONPATH}"
SIZES=(0.5 2.2 16 100)  # bench_resample's, the baseline's too
STEP_LIMIT=${STEP_LIMIT:-300}  # seconds for one step; then it FAILED
# each step's output in LOGS, and all of them, step by step, in one file
# in $OUT where the device tool sets it (it brings back 8 files at most,
# and what its command left when stopped)
LOGS=/tmp/gpu_check
ALL=${OUT:-$LOGS}/gpu_check.log
mkdir -p "$LOGS" && : > "$ALL"
status=()
run() {  # name, command...
    local name=$1; shift
    if timeout "$STEP_LIMIT" "$@" > "$LOGS/$name.txt" 2>&1; then
        status+=("$name ok")
    else status+=("$name FAILED"); fi
    { echo "=== ${status[-1]}"; cat "$LOGS/$name.txt"; } >> "$ALL"
    tail -n 12 "$LOGS/$name.txt"
}
if [[ -n "${BASELINE:-}" ]]; then
    run baseline env PYTHONPATH="$BASELINE/src:$BASELINE/lab/src:$BASELINE" \
        "$PY" "$BASELINE/benchmarks/bench_resample.py" --device "$DEVICE" \
        --sizes "${SIZES[@]}"
fi
# the GPU's tests live in one module: a GPU image may lack what other test
# modules import (fairlearn, say), which would stop pytest's collection
run tests "$PY" -m pytest -q -m cuda -p no:cacheprovider tests/test_cuda.py
run resample "$PY" benchmarks/bench_resample.py --device "$DEVICE" \
    --sizes "${SIZES[@]}"
run profile "$PY" benchmarks/bench_resample.py --device "$DEVICE" \
    --profile
run step "$PY" benchmarks/bench_step.py --device "$DEVICE"
run step_profile "$PY" benchmarks/bench_step.py --device "$DEVICE" --profile
run end_to_end "$PY" benchmarks/bench_end_to_end.py --device "$DEVICE" \
    --pairs 3
for candidate in ${CANDIDATES:-}; do
    run "resample_$candidate" "$PY" benchmarks/bench_resample.py \
        --device "$DEVICE" --sizes "${SIZES[@]}" --candidate "$candidate"
    run "step_$candidate" "$PY" benchmarks/bench_step.py --device "$DEVICE" \
        --candidate "$candidate"
    run "end_to_end_$candidate" "$PY" benchmarks/bench_end_to_end.py \
        --device "$DEVICE" --pairs 3 --candidate "$candidate"
done
run scaling "$PY" benchmarks/bench_scaling.py --device "$DEVICE" \
    --sizes 16 100
IFS='|'; echo "GPU CHECK: ${status[*]}" | tee -a "$ALL"
[[ "${status[*]}" != *FAILED* ]]
