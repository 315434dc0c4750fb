#!/usr/bin/env bash
# scripts/mdd-gpu.sh: the MDD example with --gpu (the data and CGLS on the Cuda engine, here the
# emulated device) gives the host run's outputs.
# Runs the example at a small size under mpirun -n 1 and 2, once on the host and once with
# --gpu and DISTLOPS_DEVICE=emulated, and compares every output (.npy: kernel, data, true and
# inverted model) with the example's --compare, which fails above 1e-10 relative (2-norm).
# The engine path is not bitwise the host's (cuBLAS-style gemms, another FFT library), and this
# CGLS amplifies rounding (scripts/mdd-ranks.sh), hence 5 iterations here (measured: 7.8e-16
# after 5, 7.9e-11 after 30); the example's error target is for its default size, hence
# --no-check.
# Expects scripts/mpi-env.sh to be sourced (scripts/test-gpu.sh does it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
# shellcheck source=scripts/gpu-device.sh
. scripts/gpu-device.sh

args=(--nr 12 --ns 17 --nv 2 --nt 101 --nf 40 --niter 5 --quiet --no-figures --no-check)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step "mdd-gpu.sh: build the example (${build[*]})" 1200 cargo build -q "${build[@]}" --example mdd
bin="$(example_bin mdd)"
status=0
for np in 1 2; do
  if ! step "mdd-gpu.sh: host run under mpirun -n $np" 300 "$MPIEXEC" -n "$np" "$bin" "${args[@]}" --out "$tmp/host$np" \
    >"$tmp/log-host$np" 2>&1; then
    cat "$tmp/log-host$np" >&2
    echo "mdd-gpu.sh: the host run on $np ranks failed" >&2
    exit 1
  fi
  if ! step "mdd-gpu.sh: --gpu under mpirun -n $np" 300 "${device[@]}" "$MPIEXEC" -n "$np" "${xenv[@]}" "$bin" "${args[@]}" --gpu \
    --out "$tmp/gpu$np" --compare "$tmp/host$np" >"$tmp/log-gpu$np" 2>&1; then
    cat "$tmp/log-gpu$np" >&2
    echo "mdd-gpu.sh: the --gpu run on $np ranks failed or differs from the host run" >&2
    status=1
    continue
  fi
  err="$(grep -o 'relative model error.* = [0-9.e+-]*' "$tmp/log-gpu$np" | awk '{print $NF}')"
  diff="$(grep -o 'largest relative difference.*' "$tmp/log-gpu$np")"
  echo "mdd-gpu.sh: $np rank(s), --gpu (${DISTLOPS_GPU:-emulated} device): model error $err; $diff"
done
exit "$status"
