#!/usr/bin/env bash
# benchmarks/gpu.sh: the GPU benchmark, distlops' Cuda engine against PyLops-MPI with CuPy arrays
# and NCCL, side by side, in one command, on a machine with NVIDIA GPUs (one GPU per rank).
#
# For every rank count: the device's copy bandwidth (distlops-bench --workload devcopy, the floor
# the memory-bound workloads are compared with, as the STREAM triad is on the host), then W1-W5,
# W8 and W9 of benchmarks/WORKLOADS.md on both sides (W9 on distlops only:
# PyLops-MPI's MPIFFT2D is NumPy only), then benchmarks/compare.py (checksums to 1e-10, the table,
# bandwidth against the copy). distlops runs with features mpi, cuda, nccl; PyLops-MPI from the
# pinned environment of benchmarks/venv.sh --gpu (requirements.txt + requirements-gpu.txt).
#
# Without a GPU (no nvidia-smi, or it lists no device) it prints one `skipped:` line and exits 0.
#
# Environment: NPS (rank counts, default "1 2"), WORKLOADS (default "W1 W2 W3 W4 W5 W8 W9"),
# REPS, OUT (default benchmarks/results-gpu) as benchmarks/run.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "skipped: no NVIDIA GPU here (nvidia-smi lists none); benchmarks/gpu.sh runs only on GPU machines"
  exit 0
fi

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh
benchmarks/venv.sh --gpu
python="$root/benchmarks/.venv/bin/python"

nps="${NPS:-1 2}"
workloads="${WORKLOADS:-W1 W2 W3 W4 W5 W8 W9}"
out="${OUT:-$root/benchmarks/results-gpu}"
mkdir -p "$out"
records="$out/records-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

echo "==> building distlops-bench (release, mpi, cuda, nccl)"
cargo build --release -q -p distlops-bench --features mpi,cuda,nccl
bench="${CARGO_TARGET_DIR:-$root/target}/release/distlops-bench"

reps=()
if [ -n "${REPS:-}" ]; then reps=(--reps "$REPS"); fi
failed=()
run() { # run NP LABEL COMMAND...: one mpirun, stdin closed, records appended
  local np="$1" label="$2"
  shift 2
  printf '    %-34s' "$label"
  local t0=$SECONDS
  if "$MPIEXEC" -n "$np" "$@" --out "$records" </dev/null >/dev/null; then
    echo " $((SECONDS - t0)) s"
  else
    echo " FAILED"
    failed+=("$label")
  fi
}

inputs="$out/w8-inputs"
if [[ " $workloads " == *" W8 "* ]]; then
  "$MPIEXEC" -n 1 "$python" benchmarks/pylops/bench.py --workload W8 --write-inputs "$inputs" \
    </dev/null >/dev/null
fi
for np in $nps; do
  echo "==> $np rank(s), one GPU each"
  run "$np" "device copy (distlops-bench)" "$bench" --engine cuda --workload devcopy
  for w in $workloads; do
    if [ "$w" != W9 ]; then
      run "$np" "$w PyLops-MPI (CuPy, NCCL)" "$python" benchmarks/pylops/bench_gpu.py \
        --workload "$w" "${reps[@]}"
    fi
    dtype=float64
    [ "$w" = W9 ] && dtype=complex128
    run "$np" "$w distlops (Cuda)" "$bench" --engine cuda --workload "$w" --dtype "$dtype" \
      --inputs "$inputs" "${reps[@]}"
  done
done

"$python" benchmarks/compare.py "$records" --json "$out/summary.json" || failed+=("compare")
echo "records: $records"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
