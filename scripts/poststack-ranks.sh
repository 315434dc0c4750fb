#!/usr/bin/env bash
# scripts/poststack-ranks.sh: the post-stack example gives the same volumes on any number of ranks.
# Runs it at a small size with the example's default 100 iterations on 3 thread ranks, then under
# mpirun on 1, 2, 3 and 4 ranks, and compares every output volume (.npy) with the thread run's.
# Dot products and norms are reproducible sums (distlops_core::repro) and every operator computes
# each output value with the same operations on any split (the stencils' boundary rows and ghost
# rows included), so every volume must be bitwise identical, even unregularised CGLS, which
# amplifies any rounding difference once it fits noise.
# The example's error targets are for its default size, hence --no-check.
# NPS (default "1 2 3 4") chooses the mpirun runs (scripts/test-two-nodes.sh runs NPS=4 across
# two nodes). Expects scripts/mpi-env.sh to be sourced (scripts/test.sh does it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

# --reg tv,l1 adds the total-variation inversions (PrimalDual, its inner CG and the gradient;
# isotropic and anisotropic).
args=(--ny 10 --nx 24 --nt 64 --niter 100 --reg tv,l1 --quiet --no-figures --no-check)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step "poststack-ranks.sh: build the example" 1200 cargo build -q "${BUILD[@]}" --example poststack
bin="$(example_bin poststack)"
step "poststack-ranks.sh: 3 thread ranks" 300 "$bin" "${args[@]}" --ranks 3 --out "$tmp/threads3" >/dev/null
volumes=("$tmp"/threads3/*.npy)
if [ ! -e "${volumes[0]}" ]; then
  echo "poststack-ranks.sh: the thread run wrote no volumes" >&2
  exit 1
fi
status=0
for np in ${NPS:-1 2 3 4}; do
  step "poststack-ranks.sh: mpirun -n $np" 300 \
    "$MPIEXEC" -n "$np" "$bin" "${args[@]}" \
    --out "$tmp/np$np" --compare "$tmp/threads3" >"$tmp/log$np" 2>&1 || {
    cat "$tmp/log$np" >&2
    echo "poststack-ranks.sh: mpirun -n $np failed" >&2
    exit 1
  }
  identical=()
  report=()
  for f in "${volumes[@]}"; do
    name="$(basename "$f" .npy)"
    if cmp -s "$f" "$tmp/np$np/$name.npy"; then
      identical+=("$name")
      continue
    fi
    rel="$(awk -v n="$name" '$1 == n && $2 == "relative" { print $4 }' "$tmp/log$np")"
    report+=("$name ${rel:-?}")
    status=1
  done
  line="np=$np: ${#identical[@]} of ${#volumes[@]} volumes bitwise identical to the 3-thread run"
  if [ "${#report[@]}" -gt 0 ]; then
    line+="; relative differences: $(IFS=,; echo "${report[*]}" | sed 's/,/, /g')"
  fi
  echo "$line"
done
if [ "$status" -ne 0 ]; then
  echo "poststack-ranks.sh: outputs depend on the number of ranks" >&2
fi
exit "$status"
