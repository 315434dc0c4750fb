#!/usr/bin/env bash
# benchmarks/parity/run-proximal.sh: distlops' proximal solvers and operators against PyLops-MPI
# 0.8.0's proximal module (pyproximal 0.13.0) on the same inputs, at several rank counts:
# ProximalGradient with L1 (no acceleration, FISTA, Vandenberghe; f64 and c128), ADMML2 with
# anisotropic TV, PrimalDual with MPIL2 and MPIL21 on the forward gradient (both update orders),
# MPIL2's prox / value / gradient, and pre- and post-composed L1; and against serial pyproximal
# where PyLops-MPI has no counterpart: affine_addition of L1, LinearizedADMM on TV denoising.
#
# Uses the pinned Python environment of the benchmarks (benchmarks/venv.sh), writes the inputs
# with benchmarks/parity/proximal.py (fixed seed: four dense blocks of a block-diagonal operator
# on an 8 x 15 image), runs PyLops-MPI under mpirun and distlops' examples/proximal_parity under
# mpirun for every rank count, then prints every difference. Exits non-zero if an output differs
# from PyLops-MPI's by more than PARITY_TOL (default 1e-10), or, for ADMML2 with gfirst (where
# PyLops-MPI's update order differs from the textbook one distlops keeps), if distlops'
# objective is higher. Environment: NPS (rank counts, dividing 4; default "1 2"), OUT (default
# benchmarks/parity/out/proximal).
set -euo pipefail

# shellcheck source=benchmarks/parity/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_cases proximal proximal_parity
