#!/usr/bin/env bash
# scripts/run-poststack.sh: the 3-D post-stack seismic inversion on 4 MPI ranks, from scratch.
# Installs missing system packages (scripts/setup.sh), builds the example in release mode with MPI,
# runs it under `mpirun --oversubscribe -n 4` and says where the figures are.
# Extra arguments go to the example (see `--help`), e.g. `scripts/run-poststack.sh --ny 80 --noise 0.05`,
# or your own data: `scripts/run-poststack.sh --data cube.sgy --ai0 F [--wavelet ricker:25]` (or
# `--background ai.sgy` instead of `--ai0`).
# NP=2 scripts/run-poststack.sh chooses another number of ranks.
# `--gpu` runs the inversions on the Cuda engine, one device per rank: the example is then built
# with feature cuda (NVIDIA devices, libraries loaded at run time), and also emulator when
# DISTLOPS_DEVICE=emulated (the emulated device, no GPU needed).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

np="${NP:-4}"
out="$root/poststack-out"
# The folder the messages below name: the example's last --out, if given.
prev=""
features=mpi
for arg in "$@"; do
  [ "$prev" = "--out" ] && out="$arg"
  [ "$arg" = "--gpu" ] && features=mpi,cuda
  prev="$arg"
done
if [ "$features" != mpi ] && [ "${DISTLOPS_DEVICE:-}" = emulated ]; then
  features+=",emulator"
fi
# DISTLOPS_DEVICE reaches every rank, also on other nodes.
xenv=()
[ -n "${DISTLOPS_DEVICE:-}" ] && xenv=(-x DISTLOPS_DEVICE)
echo "==> cargo build --release --features $features --example poststack"
cargo build --release --features "$features" --example poststack
echo "==> $MPIEXEC --oversubscribe -n $np ${CARGO_TARGET_DIR:-target}/release/examples/poststack --out $out $*"
"$MPIEXEC" --oversubscribe -n "$np" "${xenv[@]}" "${CARGO_TARGET_DIR:-target}"/release/examples/poststack --out "$out" "$@"
echo "==> figures: $out/*.png (true model (synthetic runs), starting model, data, and the three inversions)"
echo "    volumes: $out/*.npy (numpy.load; shape (inline, crossline, time), ln(AI) except data.npy)"
echo "    SEG-Y:   $out/inv_*.sgy (impedance; the input's headers with --data FILE.sgy)"
