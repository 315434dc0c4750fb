#!/usr/bin/env bash
# scripts/test.sh: the whole test suite, without and with MPI.
# Installs missing system packages first (scripts/setup.sh). Extra arguments go to both `cargo test` runs.
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

check "cargo test --workspace" 2700 cargo test --workspace --no-fail-fast "$@"
check "cargo test --workspace --features mpi" 2700 cargo test --workspace --features mpi --no-fail-fast "$@"

# The examples assert their own results: run each on 3 thread ranks and under mpirun -n 3.
examples=(distributed_array cgls stacking halo derivatives)
for ex in "${examples[@]}"; do
  check "example $ex (threads)" 600 bash -c 'cargo run -q --example "$1" -- 3 >/dev/null' _ "$ex"
done
if check "cargo build --features mpi --examples" 1200 cargo build -q --features mpi --examples; then
  for ex in "${examples[@]}"; do
    check "example $ex (mpirun -n 3)" 300 \
      bash -c '"$MPIEXEC" -n 3 "$1" >/dev/null' _ "${CARGO_TARGET_DIR:-target}/debug/examples/$ex"
  done
fi
check "post-stack example: same volumes on 1-4 ranks (threads and mpirun)" 1800 scripts/poststack-ranks.sh
check "MDD example: same arrays on 1-4 ranks (threads and mpirun)" 1800 scripts/mdd-ranks.sh
check "post-stack example on a SEG-Y cube written by segyio (mpirun -n 1-3, outputs read back by segyio)" \
  1200 scripts/test-segy-cli.sh
check "the Cuda engine without a GPU: sanitizers, emulated device, NVRTC and library symbols (scripts/test-gpu.sh --emulated)" \
  9000 scripts/test-gpu.sh --emulated

if [ ${#failed[@]} -gt 0 ]; then
  printf '==> FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "==> all tests passed"
