#!/usr/bin/env bash
# scripts/test.sh: the whole test suite, without and with MPI.
# Installs missing system packages first (scripts/setup.sh). Extra arguments go to both `cargo test` runs.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh
# segyio, the independent SEG-Y tool of distlops-io's tests (io/tests/segyio.rs, the CLI test):
# a pinned venv in .venv-segy; without the variable those tests would only print that they skip.
DISTLOPS_SEGYIO_PYTHON="$(scripts/py-segy-env.sh)"
export DISTLOPS_SEGYIO_PYTHON

# Both runs always happen (and --no-fail-fast runs every test binary), so one report lists every
# failure; the script still exits non-zero if anything failed.
failed=()
echo "==> cargo test --workspace"
cargo test --workspace --no-fail-fast "$@" || failed+=("cargo test --workspace")
echo "==> cargo test --workspace --features mpi"
cargo test --workspace --features mpi --no-fail-fast "$@" || failed+=("cargo test --workspace --features mpi")

# The examples assert their own results: run each on 3 thread ranks and under mpirun -n 3.
examples=(distributed_array cgls stacking halo derivatives)
echo "==> examples on the Threads communicator"
for ex in "${examples[@]}"; do
  cargo run -q --example "$ex" -- 3 >/dev/null || failed+=("example $ex (threads)")
done
echo "==> examples under mpirun -n 3"
if cargo build -q --features mpi --examples; then
  for ex in "${examples[@]}"; do
    timeout 300 "$MPIEXEC" -n 3 "${CARGO_TARGET_DIR:-target}/debug/examples/$ex" >/dev/null || failed+=("example $ex (mpirun -n 3)")
  done
else
  failed+=("cargo build --features mpi --examples")
fi
echo "==> post-stack example: same volumes on 1-4 ranks (threads and mpirun)"
scripts/poststack-ranks.sh || failed+=("post-stack example across rank counts")
echo "==> MDD example: same arrays on 1-4 ranks (threads and mpirun)"
scripts/mdd-ranks.sh || failed+=("MDD example across rank counts")
echo "==> post-stack example on a SEG-Y cube written by segyio (mpirun -n 1-3, outputs read back by segyio)"
scripts/test-segy-cli.sh || failed+=("post-stack example on SEG-Y (scripts/test-segy-cli.sh)")
echo "==> the Cuda engine without a GPU: sanitizers, emulated device, NVRTC and library symbols"
scripts/test-gpu.sh --emulated || failed+=("scripts/test-gpu.sh --emulated")

if [ ${#failed[@]} -gt 0 ]; then
  printf '==> FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "==> all tests passed"
