#!/usr/bin/env bash
# benchmarks/parity/run-nonstationary.sh: distlops' NonStationaryConvolve1D against PyLops-MPI's
# MPINonStationaryConvolve1D and serial PyLops' NonStationaryConvolve1D, forward and adjoint, on
# the same inputs, at several rank counts.
#
# Uses the pinned Python environment of the benchmarks (benchmarks/venv.sh), writes the inputs
# and serial PyLops' results with benchmarks/parity/nonstationary.py (fixed seed: 128 samples
# with 8 random filters every 16 samples, 1-D, (128, 20) along axis 0, (20, 128) along the last
# axis with 15 taps; 1-D and (128, 20) with 61 taps, where PyLops-MPI's forward is wrong at 2
# ranks), runs PyLops-MPI and distlops' examples/parity_nonstationary under mpirun for every
# rank count, then prints the table of errors max|a - b| / max|b|. Exits non-zero if distlops
# differs from serial PyLops, or from PyLops-MPI in the 15-tap cases, by more than PARITY_TOL
# (default 1e-10). Environment: NPS (rank counts dividing 128 with a filter on every rank;
# default "1 2"), OUT (default benchmarks/parity/out/nonstationary).
set -euo pipefail

# shellcheck source=benchmarks/parity/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_cases nonstationary parity_nonstationary
