#!/usr/bin/env bash
# benchmarks/ab.sh: distlops against an earlier distlops, side by side in one run.
#
#   benchmarks/ab.sh BASE_REV [NEW_REV]
#
# Builds distlops-bench (release, feature mpi) at BASE_REV and at NEW_REV (default: the working
# tree) in worktrees under ${AB_DIR:-/tmp/distlops-ab}, then for every rank count and workload
# runs the two binaries alternately (A, B, A, B, ... ROUNDS times, default 3) under
# `mpirun --bind-to core`, so slow phases of a shared machine hit both sides alike. Prints one
# row per (workload, op, np): the median over rounds of each side's median time, the ratio
# new/old, and whether both sides computed the same checksum bit for bit.
#
# Environment: NPS (default "1 2"), WORKLOADS (default W1..W7 in float64, W3 and W7 also in
# complex128, as benchmarks/run.sh), ROUNDS (default 3), REPS (override repetitions).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
base="${1:?usage: benchmarks/ab.sh BASE_REV [NEW_REV]}"
new="${2:-}"
. scripts/mpi-env.sh

dir="${AB_DIR:-/tmp/distlops-ab}"
mkdir -p "$dir"
build() { # build LABEL REV: prints the binary's path
  local label="$1" rev="$2" src="$root"
  if [ -n "$rev" ]; then
    src="$dir/src-$label"
    # Reuse a clean worktree already at REV (and so its build); make it anew otherwise.
    if [ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" != "$(git rev-parse "$rev^{commit}")" ] ||
      [ -n "$(git -C "$src" status --porcelain 2>/dev/null)" ]; then
      rm -rf "$src"
      git worktree add -f -q --detach "$src" "$rev"
    fi
  fi
  (cd "$src" && CARGO_TARGET_DIR="$dir/target-$label" cargo build --release -q -p distlops-bench --features mpi) >&2
  echo "$dir/target-$label/release/distlops-bench"
}
echo "==> building $base (old) and ${new:-the working tree} (new)" >&2
old_bin="$(build old "$base")"
new_bin="$(build new "$new")"

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
nps="${NPS:-1 2}"
workloads="${WORKLOADS:-W1 W2 W3 W3:complex128 W4 W5 W6 W7 W7:complex128}"
rounds="${ROUNDS:-3}"
records="$dir/records-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
reps=()
if [ -n "${REPS:-}" ]; then reps=(--reps "$REPS"); fi
for np in $nps; do
  for spec in $workloads; do
    w="${spec%%:*}"
    dtype=float64
    [ "$spec" != "$w" ] && dtype="${spec#*:}"
    echo "==> np=$np $w $dtype" >&2
    for _ in $(seq "$rounds"); do
      for side in old new; do
        bin="$old_bin"
        [ "$side" = new ] && bin="$new_bin"
        tmp="$(mktemp)"
        "$MPIEXEC" -n "$np" --bind-to core "$bin" --workload "$w" --dtype "$dtype" "${reps[@]}" \
          --out "$tmp" </dev/null >/dev/null
        sed "s/^{/{\"ab\": \"$side\", /" "$tmp" >>"$records"
        rm -f "$tmp"
      done
    done
  done
done

python3 - "$records" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["workload"], r["dtype"], r["op"], r["np"])
    rows.setdefault(key, {"old": [], "new": [], "check": {}})
    rows[key][r["ab"]].append(r["median_s"])
    rows[key]["check"].setdefault(r["ab"], set()).add(r["check"])
print("| workload | dtype | op | np | old median (s) | new median (s) | new/old | same checksum |")
print("|---|---|---|---|---|---|---|---|")
for (w, d, op, np), v in sorted(rows.items()):
    o, n = statistics.median(v["old"]), statistics.median(v["new"])
    same = v["check"].get("old") == v["check"].get("new")
    print(f"| {w} | {d} | {op} | {np} | {o:.4g} | {n:.4g} | {n / o:.3f} | {'yes' if same else 'NO'} |")
EOF
echo "==> records: $records" >&2
