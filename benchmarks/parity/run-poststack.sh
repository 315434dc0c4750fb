#!/usr/bin/env bash
# benchmarks/parity/run-poststack.sh: the post-stack inversion in distlops and in PyLops-MPI on the
# same inputs, side by side, at several rank counts.
#
# Uses the pinned Python environment of the benchmarks (benchmarks/venv.sh: numpy, scipy, mpi4py,
# pylops, pylops-mpi), builds distlops' example with MPI and, for every rank count, runs it under
# mpirun (noise-free data by default, so the data are compared too) and then
# benchmarks/parity/poststack.py on its .npy files. Finally it prints every pairwise relative
# difference: distlops against PyLops-MPI at each rank count, and each library against itself
# across rank counts.
# Environment: NPS (rank counts, default "1 2"), NITER (default 100), EPS (default 0.1),
# NOISE (default 0). Extra arguments go to distlops' example (e.g. --ny 80).
set -euo pipefail

# shellcheck source=benchmarks/parity/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

nps="${NPS:-1 2}"
niter="${NITER:-100}"
eps="${EPS:-0.1}"
noise="${NOISE:-0}"
out="$root/benchmarks/parity/out"

cargo build --release --features mpi --example poststack
example="${CARGO_TARGET_DIR:-target}/release/examples/poststack"
for np in $nps; do
  echo "==> distlops, $np MPI rank(s)"
  "$MPIEXEC" -n "$np" "$example" --quiet --no-figures --out "$out/distlops-np$np" \
    --niter "$niter" --eps "$eps" --noise "$noise" "$@" </dev/null
  echo "==> PyLops-MPI, $np MPI rank(s), same inputs"
  "$MPIEXEC" -n "$np" "$python" benchmarks/parity/poststack.py "$out/distlops-np$np" "$niter" \
    "$eps" "$out/pylops-np$np" </dev/null
done

echo "==> pairwise relative differences |a - b| / |b|"
"$python" - "$out" $nps <<'PY'
import sys
import numpy as np

out, nps = sys.argv[1], sys.argv[2:]
names = ["data", "inv_cgls", "inv_cgls_reg", "inv_cg_normal"]
runs = [(f"distlops np={n}", f"{out}/distlops-np{n}") for n in nps]
runs += [(f"PyLops-MPI np={n}", f"{out}/pylops-np{n}") for n in nps]
pairs = [(runs[i], runs[j]) for i in range(len(runs)) for j in range(i + 1, len(runs))]
print(f"{'pair':<40}" + "".join(f"{n:>15}" for n in names))
for (la, da), (lb, db) in pairs:
    row = []
    for n in names:
        a, b = np.load(f"{da}/{n}.npy"), np.load(f"{db}/{n}.npy")
        row.append(np.linalg.norm(a - b) / np.linalg.norm(b))
    print(f"{la + ' vs ' + lb:<40}" + "".join(f"{v:>15.2e}" for v in row))
PY
