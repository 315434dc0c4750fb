#!/usr/bin/env bash
# benchmarks/parity/run-solvers.sh: LSQR, ISTA and FISTA in distlops against SciPy's lsqr and
# PyLops-MPI's ista / fista (and serial PyLops'), on the same inputs, at several rank counts.
#
# Uses the pinned Python environment of the benchmarks (benchmarks/venv.sh), writes the inputs
# with benchmarks/parity/solvers.py (fixed seed: four dense blocks of a block-diagonal operator,
# PyLops-MPI's MPIBlockDiag of MatrixMult; real and complex; well- and ill-conditioned), runs
# the reference (SciPy's lsqr on the dense matrix, once more with correctly rounded products to
# measure the problem's own rounding floor; PyLops-MPI's ista / fista under mpirun; serial
# PyLops' on rank 0) and distlops' examples/solvers_parity under mpirun for every rank count,
# then prints every difference. Exits non-zero if a case whose floor is below 1e-12 differs by
# more than PARITY_TOL (default 1e-10) or takes a different number of iterations.
# Environment: NPS (rank counts, dividing 4; default "1 2"), OUT (default
# benchmarks/parity/out/solvers).
set -euo pipefail

# shellcheck source=benchmarks/parity/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_cases solvers solvers_parity
