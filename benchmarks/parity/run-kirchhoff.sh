#!/usr/bin/env bash
# benchmarks/parity/run-kirchhoff.sh: distlops' Kirchhoff::distributed (the sources split over
# the ranks) against serial PyLops' Kirchhoff (mode="analytic", engines numpy and numba), forward
# (the data of all sources in source order) and adjoint (the migrated image), on the same
# inputs, at several rank counts.
#
# Uses the pinned Python environment of the benchmarks (benchmarks/venv.sh), writes the inputs
# and serial PyLops' results with benchmarks/parity/kirchhoff.py (fixed seed: PyLops-MPI's
# Kirchhoff benchmark geometry scaled down, 2-D, and a small 3-D volume), runs distlops'
# examples/parity_kirchhoff under mpirun for every rank count (PyLops-MPI has no Kirchhoff of
# its own: its step does nothing), then prints the table of errors max|a - b| / max|b|. Exits
# non-zero if distlops differs from either engine by more than PARITY_TOL (default 1e-10).
# Environment: NPS (rank counts; default "1 2"), OUT (default benchmarks/parity/out/kirchhoff).
set -euo pipefail

# shellcheck source=benchmarks/parity/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_cases kirchhoff parity_kirchhoff
