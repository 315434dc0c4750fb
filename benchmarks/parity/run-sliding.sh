#!/usr/bin/env bash
# benchmarks/parity/run-sliding.sh: distlops' Sliding1D, Sliding2D and Patch2D against serial
# PyLops' operators of the same names (PyLops-MPI has none), forward and adjoint, with a dense
# MatrixMult per window, on the same inputs, at several rank counts.
#
# Uses the pinned Python environment of the benchmarks (benchmarks/venv.sh), writes the inputs
# and serial PyLops' results with benchmarks/parity/sliding.py (fixed seed; the cases are listed
# there), runs distlops' examples/parity_sliding under mpirun for every rank count, then prints
# the table of errors max|a - b| / max|b| and whether every rank count gave the same bits. Exits
# non-zero if distlops differs from PyLops by more than PARITY_TOL (default 1e-10) or between
# rank counts. Environment: NPS (default "1 2"), OUT (default benchmarks/parity/out/sliding).
set -euo pipefail

# shellcheck source=benchmarks/parity/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_cases sliding parity_sliding
