#!/usr/bin/env bash
# benchmarks/parity/run-fft.sh: distlops' Fft2d, FftNd and Mdc against PyLops-MPI's MPIFFT2D,
# MPIFFTND (mpi4py-fft) and MPIMDC, forward and adjoint, on the same inputs, at several rank
# counts.
#
# Uses the pinned Python environment of the benchmarks (benchmarks/venv.sh, with mpi4py-fft),
# writes the inputs and serial PyLops' results with benchmarks/parity/fft.py (fixed seed; complex
# 2-D and 3-D FFTs, odd and even sizes, norm none and 1/n, real input with shifts, MDC one- and
# two-sided with one or several virtual sources), runs PyLops-MPI and distlops'
# examples/fft_parity under mpirun for every rank count, then prints the table of errors
# max|a - b| / max|b|. Exits non-zero if a forward or an adjoint differs from PyLops-MPI's by
# more than PARITY_TOL (default 1e-12).
# Environment: NPS (rank counts; default "1 2"), OUT (default benchmarks/parity/out/fft).
set -euo pipefail

# shellcheck source=benchmarks/parity/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_cases fft fft_parity
