#!/usr/bin/env bash
# scripts/poststack-gpu.sh: the post-stack example with --gpu on the emulated device gives the host
# run's volumes, bit for bit. Builds the example (the scripts' one build, scripts/lib.sh), runs it
# on the host under `mpirun -n 1`, then with --gpu (DISTLOPS_DEVICE=emulated) under `mpirun -n 1`
# and `-n 2`, and compares every output volume (.npy) with the host run's through the example's
# --compare.
#
# Checked: the example's default 100 iterations of each solver; every volume must equal the host
# run's exactly. Every operation of the inversion is the project's own kernel on both engines
# (the modelling bands, the Laplacian's stencils, the reproducible sums), so the device computes
# the same bits at any rank count. (NITERS lists other iteration counts to check.)
# The example's error targets are for its default size, hence --no-check.
# Expects scripts/mpi-env.sh to be sourced (scripts/test-gpu.sh does it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
# shellcheck source=scripts/gpu-device.sh
. scripts/gpu-device.sh

# --reg tv,l1: the total-variation inversions (PrimalDual, isotropic and anisotropic) too.
size=(--ny 6 --nx 10 --nt 48 --reg tv,l1 --quiet --no-figures --no-check)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step "poststack-gpu.sh: build the example (${build[*]})" 1200 cargo build -q "${build[@]}" --example poststack
bin="$(example_bin poststack)"
status=0
niters=(${NITERS:-100})
for niter in "${niters[@]}"; do
  step "poststack-gpu.sh: host run, $niter iterations" 300 \
    "$MPIEXEC" -n 1 "$bin" "${size[@]}" --niter "$niter" --out "$tmp/host$niter" >"$tmp/host.log" 2>&1 || {
    cat "$tmp/host.log" >&2
    echo "poststack-gpu.sh: the host run failed" >&2
    exit 1
  }
  for np in 1 2; do
    log="$tmp/gpu$niter-$np.log"
    step "poststack-gpu.sh: --gpu under mpirun -n $np, $niter iterations" 300 \
      "${device[@]}" "$MPIEXEC" -n "$np" "${xenv[@]}" "$bin" \
      "${size[@]}" --niter "$niter" --gpu --out "$tmp/gpu$niter-$np" --compare "$tmp/host$niter" \
      >"$log" 2>&1 || true
    worst="$(awk '/^largest relative difference/ { print $NF }' "$log")"
    if [ -z "$worst" ]; then
      cat "$log" >&2
      echo "poststack-gpu.sh: --gpu on mpirun -n $np ($niter iterations) failed" >&2
      exit 1
    fi
    details="$(awk '$2 == "relative" && $1 != "largest" { printf "%s %s, ", $1, $4 }' "$log" | sed 's/, $//')"
    if awk -v w="$worst" 'BEGIN { exit !(w + 0 == 0) }'; then
      echo "np=$np, $niter iterations: --gpu (emulated) = host, bit for bit"
    else
      echo "np=$np, $niter iterations: --gpu differs from the host by $worst: $details" >&2
      status=1
    fi
  done
done
exit "$status"
