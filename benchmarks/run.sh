#!/usr/bin/env bash
# benchmarks/run.sh: the side-by-side benchmark of distlops against PyLops-MPI, in one command.
#
# Installs what is missing (system packages through scripts/setup.sh, the pinned Python
# environment through benchmarks/venv.sh), builds the distlops side (release, feature mpi), then
# for every rank count runs the STREAM triad and every workload of
# benchmarks/WORKLOADS.md on both sides under `mpirun --bind-to core`, one process
# group per workload and side (so peak memory is per workload), one thread per rank. Finally
# benchmarks/compare.py checks that both sides computed the same numbers (1e-10) and prints the
# table; the raw records and the matched table are written as JSON.
#
# Environment:
#   NPS        rank counts (default "1 2")
#   WORKLOADS  workloads as W[:dtype] (default: W1..W8 and W11..W14 in float64, W3 and W7 also in
#              complex128, W9 and W10 in complex128)
#   REPS       override every workload's repetitions (default: the specification's)
#   OUT        output folder (default benchmarks/results)
#   FEATURES   cargo features of the distlops side (default "mpi"; "mpi,blas" runs the host's
#              matrix products on the system's OpenBLAS, see README "Dense products")
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh
benchmarks/venv.sh
python="$root/benchmarks/.venv/bin/python"

nps="${NPS:-1 2}"
workloads="${WORKLOADS:-W1 W2 W3 W3:complex128 W4 W5 W6 W7 W7:complex128 W8 W9:complex128 W10:complex128 W11 W12 W13 W14}"
out="${OUT:-$root/benchmarks/results}"
mkdir -p "$out"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
records="$out/records-$stamp.jsonl"

# One thread per rank on both sides; no oversubscription when the cores suffice (ranks then
# busy-poll in MPI calls instead of yielding, on both sides alike).
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
max_np=0
for np in $nps; do [ "$np" -gt "$max_np" ] && max_np=$np; done
if [ "$(nproc)" -ge "$max_np" ]; then
  unset OMPI_MCA_rmaps_base_oversubscribe
fi

features="${FEATURES:-mpi}"
echo "==> building distlops-bench (release, features $features)"
cargo build --release -q -p distlops-bench --features "$features"
bench="${CARGO_TARGET_DIR:-$root/target}/release/distlops-bench"

reps=()
if [ -n "${REPS:-}" ]; then reps=(--reps "$REPS"); fi
run() { # run NP LABEL COMMAND...: one mpirun, stdin closed (mpirun reads it), records appended
  local np="$1" label="$2"
  shift 2
  printf '    %-34s' "$label"
  local t0=$SECONDS
  if "$MPIEXEC" -n "$np" --bind-to core "$@" --out "$records" </dev/null >/dev/null; then
    echo " $((SECONDS - t0)) s"
  else
    echo " FAILED"
    failed+=("$label")
  fi
}

failed=()
# W8's kernel and model are built by the Python side (as pylops-mpi's plot_mdc.py builds them) and
# read by distlops-bench from .npy files.
inputs="$out/w8-inputs"
if [[ " $workloads " == *" W8 "* ]]; then
  echo "==> W8 inputs (G.npy, m.npy) into $inputs"
  "$MPIEXEC" -n 1 "$python" benchmarks/pylops/bench.py --workload W8 --write-inputs "$inputs" \
    </dev/null >/dev/null
fi
for np in $nps; do
  echo "==> $np rank(s)"
  run "$np" "STREAM triad (distlops-bench)" "$bench" --workload triad
  for w in $workloads; do
    name="${w%%:*}"
    dtype=float64
    [[ "$w" == *:* ]] && dtype="${w#*:}"
    run "$np" "$name $dtype PyLops-MPI" "$python" benchmarks/pylops/bench.py \
      --workload "$name" --dtype "$dtype" "${reps[@]}"
    extra=()
    [ "$name" = W8 ] && extra=(--inputs "$inputs")
    run "$np" "$name $dtype distlops" "$bench" --workload "$name" --dtype "$dtype" "${reps[@]}" \
      "${extra[@]}"
  done
done

echo "==> results (records: $records)"
status=0
python3 benchmarks/compare.py "$records" --json "$out/summary-$stamp.json" |
  tee "$out/summary-$stamp.md" || status=$?
echo "==> tables also in $out/summary-$stamp.md, matched rows in $out/summary-$stamp.json"
if [ ${#failed[@]} -gt 0 ]; then
  printf '==> FAILED: %s\n' "${failed[@]}" >&2
  status=1
fi
exit $status
