# benchmarks/parity/common.sh: sourced (not run) by the run-*.sh parity scripts.
#
# Moves to the repository root ($root), prepares the toolchain (scripts/setup.sh,
# scripts/mpi-env.sh: $MPIEXEC) and the pinned Python environment of the benchmarks
# (benchmarks/venv.sh: $python), and keeps BLAS single-threaded. Defines run_cases, the sequence
# of the case-based parity scripts (solvers.py, fft.py).
# shellcheck shell=bash

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh
benchmarks/venv.sh
python="$root/benchmarks/.venv/bin/python"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

# run_cases SCRIPT EXAMPLE: builds distlops' examples/EXAMPLE.rs with MPI, writes the inputs with
# `benchmarks/parity/SCRIPT.py make`, then for every rank count of NPS (default "1 2") runs
# `SCRIPT.py reference` (the Python side) and the example under mpirun, and finally
# `SCRIPT.py compare`, whose exit status it returns. Everything goes to OUT (default
# benchmarks/parity/out/SCRIPT), removed first.
run_cases() {
  local script="benchmarks/parity/$1.py" name="$2" example np
  local nps="${NPS:-1 2}" out="${OUT:-$root/benchmarks/parity/out/$1}"
  cargo build --release --features mpi --example "$name"
  example="${CARGO_TARGET_DIR:-target}/release/examples/$name"
  rm -rf "$out"
  "$python" "$script" make "$out"
  for np in $nps; do
    echo "==> Python reference, $np MPI rank(s)"
    "$MPIEXEC" -n "$np" "$python" "$script" reference "$out" </dev/null
    echo "==> distlops, $np MPI rank(s)"
    "$MPIEXEC" -n "$np" "$example" "$out" </dev/null
  done
  # shellcheck disable=SC2086
  "$python" "$script" compare "$out" $nps
}
