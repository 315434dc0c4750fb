#!/usr/bin/env bash
# scripts/test.sh: the whole test suite: every test binary of the workspace once (Threads, mpirun,
# the fault suite, the Cuda instantiation on the emulated device, doctests), the examples on thread
# ranks and under mpirun, the rank-count and SEG-Y checks, two nodes in network namespaces (as
# root), and the GPU checks that need no GPU.
# Everything is compiled once, with one feature set (scripts/lib.sh `BUILD`), plus a check that
# the crates build without features (what `cargo add distlops` gets).
# Installs missing system packages first (scripts/setup.sh). Extra arguments go to the `cargo test` run.
# Every step has a time limit (scripts/lib.sh: a step past it fails with its name, and the next
# one runs); DISTLOPS_STEP_SCALE=N multiplies the limits on a slow machine.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

step "system packages (scripts/setup.sh)" 900 scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

# Every step always runs (and --no-fail-fast runs every test binary), so one report lists every
# failure; the script still exits non-zero if anything failed.
failed=()
# check NAME SECONDS CMD...: a step whose failure (or timeout) is recorded.
check() {
  local what="$1"
  step "$@" || failed+=("$what")
}

# segyio, the independent SEG-Y tool of distlops-io's tests (io/tests/segyio.rs, the CLI test):
# a pinned venv in .venv-segy; without the variable those tests would only print that they skip.
segy="$(mktemp)"
trap 'rm -f "$segy"' EXIT
if check "segyio venv (scripts/py-segy-env.sh)" 900 bash -c 'scripts/py-segy-env.sh > "$1"' _ "$segy"; then
  DISTLOPS_SEGYIO_PYTHON="$(cat "$segy")"
  export DISTLOPS_SEGYIO_PYTHON
fi

check "cargo check --workspace --all-targets (no features)" 1800 cargo check -q --workspace --all-targets
# The emulated device runs the Cuda instantiation (tests/gpu_threads.rs, tests/gpu_mpi.rs) with
# its blocks and threads in a shuffled order (an order CUDA allows; index order hides races).
DISTLOPS_DEVICE=emulated DL_EMU_ORDER=shuffle:2718 check "cargo test ${BUILD[*]}" 3600 \
  cargo test "${BUILD[@]}" --no-fail-fast "$@"

# Feature `blas`: the host's products of several columns on the system's OpenBLAS, against the
# triple loop (core alone: the rest of the workspace is not compiled again).
check "dense products on OpenBLAS (cargo test -p distlops-core --features blas dense)" 900 \
  cargo test -q -p distlops-core --features blas --lib dense

# The examples assert their own results: run each on 3 thread ranks and under mpirun -n 3.
examples=(distributed_array cgls stacking halo derivatives sparse_reflectivity patch_denoise)
if check "cargo build ${BUILD[*]} --examples" 1200 cargo build -q "${BUILD[@]}" --examples; then
  for ex in "${examples[@]}"; do
    check "example $ex (3 thread ranks)" 300 bash -c '"$1" 3 >/dev/null' _ "$(example_bin "$ex")"
    check "example $ex (mpirun -n 3)" 300 \
      bash -c '"$MPIEXEC" -n 3 "$1" >/dev/null' _ "$(example_bin "$ex")"
  done
fi
check "post-stack example: same volumes on 1-4 ranks (threads and mpirun)" 1800 scripts/poststack-ranks.sh
check "MDD example: same arrays on 1-4 ranks (threads and mpirun)" 1800 scripts/mdd-ranks.sh
check "least-squares migration example: its targets, and the same images on 1-4 ranks (threads and mpirun)" 1200 scripts/lsm-ranks.sh
# Two nodes in network namespaces (root only; one line says why it skips elsewhere).
check "two nodes: MPI tests, examples and faults across two nodes (scripts/test-two-nodes.sh)" \
  2400 scripts/test-two-nodes.sh
check "post-stack example on a SEG-Y cube written by segyio (mpirun -n 1-3, outputs read back by segyio)" \
  1200 scripts/test-segy-cli.sh
DISTLOPS_SUITE_DONE=1 check "the Cuda engine without a GPU: sanitizers, emulated device, NVRTC and library symbols (scripts/test-gpu.sh --emulated)" \
  5400 scripts/test-gpu.sh --emulated

if [ ${#failed[@]} -gt 0 ]; then
  printf '==> FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "==> all tests passed"
