#!/usr/bin/env bash
# scripts/mdd-ranks.sh: the MDD example gives the same arrays on any number of ranks.
# Runs it at a small size on 1-4 thread ranks and under mpirun on 1-4 ranks, and compares every
# output (.npy: kernel, data, true and inverted model) with the 1-thread run's, bitwise.
# The kernel is computed trace by trace, MDC computes every value with whole-trace transforms and
# per-frequency sums in a fixed order, and CGLS's dot products and norms are reproducible sums
# (distlops_core::repro), so every array must be bitwise identical; a difference is reported
# (relative 2-norm, the example's --compare) and fails the script. This CGLS amplifies rounding
# differences by about 1e3 every 5 iterations, so 30 iterations would show any.
# The example's error target is for its default size, hence --no-check.
# NPS (default "1 2 3 4") and THREAD_NPS (default "2 3 4") choose the runs besides the reference
# (scripts/test-two-nodes.sh runs NPS=4 across two nodes). Expects scripts/mpi-env.sh to be
# sourced (scripts/test.sh does it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

args=(--nr 12 --ns 17 --nv 2 --nt 101 --nf 40 --niter 30 --quiet --no-figures --no-check)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step "mdd-ranks.sh: build the example" 1200 cargo build -q "${BUILD[@]}" --example mdd
bin="$(example_bin mdd)"
step "mdd-ranks.sh: 1 thread rank" 600 "$bin" "${args[@]}" --ranks 1 --out "$tmp/threads1" >"$tmp/log-ref" 2>&1 || {
  cat "$tmp/log-ref" >&2
  echo "mdd-ranks.sh: the 1-thread run failed" >&2
  exit 1
}
outputs=("$tmp"/threads1/*.npy)
if [ ! -e "${outputs[0]}" ]; then
  echo "mdd-ranks.sh: the 1-thread run wrote no arrays" >&2
  exit 1
fi
grep 'relative model error' "$tmp/log-ref" | sed 's/^/1 thread: /'
status=0
# Checks one run's arrays against the reference; $1 names the run, $2 is its log.
check() {
  local run="$1" log="$2" identical=() report=() name line rel
  for f in "${outputs[@]}"; do
    name="$(basename "$f" .npy)"
    if cmp -s "$f" "$tmp/$run/$name.npy"; then
      identical+=("$name")
      continue
    fi
    rel="$(awk -v n="$name" '$1 == n && $2 == "relative" { print $4 }' "$log")"
    report+=("$name ${rel:-?}")
    status=1
  done
  line="$run: ${#identical[@]} of ${#outputs[@]} arrays bitwise identical to the 1-thread run"
  if [ "${#report[@]}" -gt 0 ]; then
    line+="; relative differences: $(IFS=,; echo "${report[*]}" | sed 's/,/, /g')"
  fi
  echo "$line"
}
run() {
  local name="$1"
  shift
  step "mdd-ranks.sh: $name" 600 "$@" "${args[@]}" --out "$tmp/$name" --compare "$tmp/threads1" \
    >"$tmp/log-$name" 2>&1 || {
    cat "$tmp/log-$name" >&2
    echo "mdd-ranks.sh: $name failed" >&2
    status=1
    return 0
  }
  check "$name" "$tmp/log-$name"
}
for n in ${THREAD_NPS-2 3 4}; do
  run "threads$n" "$bin" --ranks "$n"
done
for np in ${NPS:-1 2 3 4}; do
  run "np$np" "$MPIEXEC" -n "$np" "$bin"
done
if [ "$status" -ne 0 ]; then
  echo "mdd-ranks.sh: outputs depend on the number of ranks (or a run failed)" >&2
fi
exit "$status"
