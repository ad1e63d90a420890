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
OUT=${OUT:-/tmp}/gpu_check
SIZES=(0.5 2.2 16 100)  # bench_resample's, the baseline's too
mkdir -p "$OUT"
status=()
run() {  # name, command...
    local name=$1; shift
    if "$@" > "$OUT/$name.txt" 2>&1; then status+=("$name ok")
    else status+=("$name FAILED"); fi
    tail -n 12 "$OUT/$name.txt"
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
IFS='|'; echo "GPU CHECK: ${status[*]}"
[[ "${status[*]}" != *FAILED* ]]
