#!/usr/bin/env bash
# benchmarks/parity/run-poststack.sh: the post-stack inversion in distlops and in PyLops-MPI on the
# same inputs, side by side. Creates a virtual environment (benchmarks/parity/.venv) with numpy,
# scipy, mpi4py, pylops and pylops-mpi on first use, builds and runs distlops' example under
# mpirun (noise-free data by default, so the data are compared too), runs
# benchmarks/parity/poststack.py on its .npy files and prints the differences and timings.
# Environment: NP (ranks, default 2), NITER (default 100), EPS (default 0.1), NOISE (default 0).
# Extra arguments go to distlops' example (e.g. --ny 80).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

np="${NP:-2}"
niter="${NITER:-100}"
eps="${EPS:-0.1}"
noise="${NOISE:-0}"
venv="$root/benchmarks/parity/.venv"
out="$root/benchmarks/parity/out"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || {
    echo "run-poststack.sh: python3 -m venv failed; install Debian's python3-venv" >&2
    exit 1
  }
fi
if ! "$venv/bin/python" -c "import numpy, scipy, mpi4py, pylops, pylops_mpi" 2>/dev/null; then
  "$venv/bin/pip" install -q numpy scipy mpi4py pylops pylops-mpi
fi

cargo build --release --features mpi --example poststack
echo "==> distlops, $np MPI ranks"
"$MPIEXEC" -n "$np" target/release/examples/poststack --quiet --no-figures --out "$out" \
  --niter "$niter" --eps "$eps" --noise "$noise" "$@"
echo "==> PyLops-MPI, $np MPI ranks, same inputs"
"$MPIEXEC" -n "$np" "$venv/bin/python" benchmarks/parity/poststack.py "$out" "$niter" "$eps"
