#!/usr/bin/env bash
# scripts/lsm-ranks.sh: the least-squares migration example gives the same images on any number
# of ranks. Runs it on 1-4 thread ranks and under mpirun on 1-4 ranks (each run fails by itself
# if its image misses the example's targets; the 1-thread run also draws the figure) and compares every output (.npy: reflectivity, data, migrated and least-squares images)
# with the 1-thread run's, bitwise: the migration sums the sources' images along a fixed tree and
# CGLS's reductions are reproducible, so a difference is a bug. Expects scripts/mpi-env.sh to be
# sourced (scripts/test.sh does it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
step "lsm-ranks.sh: build the example" 1200 cargo build -q "${BUILD[@]}" --example lsm
bin="$(example_bin lsm)"
status=0
# lsm NAME CMD...: one run into $tmp/NAME; a failed run fails the script.
lsm() {
  local name="$1"
  shift
  if ! step "lsm-ranks.sh: $name" 600 "$@" --out "$tmp/$name" >"$tmp/$name.log" 2>&1; then
    cat "$tmp/$name.log" >&2
    status=1
  fi
}
lsm threads1 "$bin" 1
test -s "$tmp/threads1/lsm.png" || { echo "lsm-ranks.sh: no lsm.png" >&2; status=1; }
for n in 2 3 4; do lsm "threads$n" "$bin" "$n" --no-figures; done
for np in 1 2 3 4; do lsm "np$np" "$MPIEXEC" -n "$np" "$bin" --no-figures; done
for run in threads2 threads3 threads4 np1 np2 np3 np4; do
  for f in "$tmp"/threads1/*.npy; do
    if ! cmp -s "$f" "$tmp/$run/$(basename "$f")"; then
      echo "lsm-ranks.sh: $run: $(basename "$f") differs from the 1-thread run's" >&2
      status=1
    fi
  done
done
# The dynamic operator with the filtered wavelet: its own targets, and the same bits at 1 thread
# rank and 3 MPI ranks (the other rank counts share the code paths checked above).
lsm dyn-threads1 "$bin" 1 --dynamic --wavfilter --no-figures
lsm dyn-np3 "$MPIEXEC" -n 3 "$bin" --dynamic --wavfilter --no-figures
# The image split over the ranks (parts of 4 lines of x): its targets, the same bits at 1 thread
# rank and 3 MPI ranks (3 ranks of 11 parts: uneven blocks).
lsm split-threads1 "$bin" 1 --image-split 4 --no-figures
lsm split-np3 "$MPIEXEC" -n 3 "$bin" --image-split 4 --no-figures
for pair in dyn-threads1:dyn-np3 split-threads1:split-np3; do
  one="${pair%%:*}" three="${pair##*:}"
  for f in "$tmp/$one"/*.npy; do
    if ! cmp -s "$f" "$tmp/$three/$(basename "$f")"; then
      echo "lsm-ranks.sh: $three: $(basename "$f") differs from the $one run's" >&2
      status=1
    fi
  done
done
[ "$status" -eq 0 ] && echo "lsm-ranks.sh: every image and the data bitwise identical on 1-4 ranks (threads and mpirun), dynamic and image-split runs too"
exit "$status"
