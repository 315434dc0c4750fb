#!/usr/bin/env bash
# scripts/poststack-ranks.sh: the post-stack example gives the same volumes on any number of ranks.
# Runs it at a small size on 3 thread ranks, then under mpirun on 1, 2, 3 and 4 ranks, and compares
# every output volume with the thread run (relative difference <= 1e-10, checked by the example's
# --compare). Ten iterations: unregularised CGLS amplifies rounding differences once it starts
# fitting noise (see the README), the regularised solvers agree to 1e-13 even after 100.
# Expects scripts/mpi-env.sh to be sourced (scripts/test.sh does it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

args=(--ny 10 --nx 24 --nt 64 --niter 10 --quiet --no-figures)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cargo run -q --example poststack -- "${args[@]}" --ranks 3 --out "$tmp/threads3" >/dev/null
cargo build -q --features mpi --example poststack
for np in 1 2 3 4; do
  timeout 300 "$MPIEXEC" -n "$np" "${CARGO_TARGET_DIR:-target}"/debug/examples/poststack "${args[@]}" \
    --out "$tmp/np$np" --compare "$tmp/threads3" >"$tmp/log$np" 2>&1 || {
    cat "$tmp/log$np" >&2
    echo "poststack-ranks.sh: mpirun -n $np differs from the thread run" >&2
    exit 1
  }
  grep "largest relative difference" "$tmp/log$np" | sed "s/^/np=$np: /"
done
