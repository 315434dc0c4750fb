#!/usr/bin/env bash
# scripts/fault-injection.sh: deliberate faults, and whether the emulated device's tests catch them.
#
# For each fault: a detached worktree of HEAD (under $FAULTS_DIR, default
# ${CARGO_TARGET_DIR:-target}-faults) is reset, the fault is applied (an exact text replacement;
# a fault whose text is not found is reported NOT APPLIED), and the narrowest command that should
# catch it runs there (the part of scripts/test-gpu.sh --emulated that exercises it). The report
# gives each fault's command, `caught` with the first line that says why, or `NOT caught`; the
# full output is in $FAULTS_DIR/logs/NAME.log. A few rows show what a check hides when it is
# turned off (`hidden` expected): the gaps of issue 27 as they were.
#
# A tool for notes and reviews, not a CI step: each fault rebuilds what it touches (most of an
# hour in all on a 2-core machine). `scripts/fault-injection.sh NAME...` runs only those faults.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

base="${FAULTS_DIR:-${CARGO_TARGET_DIR:-$root/target}-faults}"
tree="$base/tree"
mkdir -p "$base/logs"
export CARGO_TARGET_DIR="$base/target"
asan_target="$base/target-asan"
export DISTLOPS_DEVICE=emulated
selected=("$@")

git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"
# --force: reuses the path if an earlier run left it registered (no `git worktree prune`, which
# would touch the other worktrees of the repository).
git worktree add --force --detach "$tree" HEAD >/dev/null
trap 'git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1' EXIT

# replace FILE OLD NEW: replaces the first occurrence of OLD in the tree's FILE (fails if absent).
replace() {
  python3 - "$tree/$1" "$2" "$3" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if old not in text:
    sys.exit(f"fault not applied: {old!r} is not in {path}")
open(path, "w").write(text.replace(old, new, 1))
PY
}

rows=()
# fault NAME EXPECT WHAT APPLY CMD...: resets the tree, applies the fault with the shell command
# APPLY, runs CMD in the tree and records a row. EXPECT is `caught` or `hidden`.
fault() {
  local name="$1" expect="$2" what="$3" apply="$4"
  shift 4
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $name "* ]]; then
    return 0
  fi
  local log="$base/logs/$name.log" verdict line rc=0
  git -C "$tree" checkout -q -- . && git -C "$tree" clean -fdq
  if ! eval "$apply" >"$log" 2>&1; then
    rows+=("$name|$what|-|NOT APPLIED|$(tail -n 1 "$log")")
    return 0
  fi
  (cd "$tree" && step "fault $name: $what" 3600 "$@") >>"$log" 2>&1 || rc=$?
  line="$(grep -m 1 -E 'FAILED \(timeout|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error|refused|panicked at|^FAILED:|FAILED|timed out|error\[|error:' "$log" |
    sed -E 's/^[[:space:]]+//' | cut -c 1-300)"
  if [ "$rc" -ne 0 ]; then
    verdict="caught"
    # The assertion or report itself, when the first line only says where.
    if [[ "$line" == *"panicked at"* ]]; then
      line="$line / $(grep -m 1 -A 1 'panicked at' "$log" | tail -n 1 | cut -c 1-300)"
    fi
  else
    verdict="NOT caught"
    line="(exit 0)"
  fi
  [ "$expect" = hidden ] && verdict="$verdict (expected: hidden, the check off)"
  rows+=("$name|$what|$*|$verdict|$line")
  printf '%s: %s\n' "$name" "$verdict"
}

core_test=(cargo test -p distlops-core --features emulator --test emulator)
suite=(cargo test --features emulator --test gpu_threads --)

# The four faults of the earlier emulator issue.
fault a-syncthreads caught "one __syncthreads() removed from the block reduction (max_abs)" \
  "replace core/kernels/reduce.cu '        }
        __syncthreads();
    }' '        }
    }'" \
  scripts/test-kernels.sh
fault b-bound caught "i < n turned into i <= n in an element-wise kernel (scale)" \
  "replace core/kernels/elementwise.cu 'i < n; i += dl_grid_threads()) y[i] = y[i] * alpha;' 'i <= n; i += dl_grid_threads()) y[i] = y[i] * alpha;'" \
  scripts/test-kernels.sh
fault c-gemm-ld caught "the leading dimension of B in the cuBLAS gemm swapped for the other dimension (ldb: m -> n)" \
  "replace core/src/cuda/dense.rs 'ldb: m,' 'ldb: n,'" \
  "${suite[@]}" primitives
fault d-no-sync caught "the stream synchronisation before a device-to-host read removed (Cuda::read)" \
  "replace core/src/cuda/mod.rs '        self.synchronize()?;
        Ok(out)' '        Ok(out)'" \
  "${core_test[@]}"

# Gap 1: a __shared__ array smaller than the block the engine launches with.
shared="replace core/kernels/reduce.cu '__shared__ R partial[256];' '__shared__ R partial[64];'"
fault g1-shared-kernels caught "max_abs's __shared__ array cut to 64 (the engine launches 128 threads): kernel test" \
  "$shared" scripts/test-kernels.sh
fault g1-shared-asan caught "the same, in the Rust suite with the emulator under AddressSanitizer" \
  "$shared" env CARGO_TARGET_DIR="$asan_target" DL_EMU_SANITIZE=address \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 "${core_test[@]}"
fault g1-shared-plain hidden "the same, in the Rust suite without AddressSanitizer (as before)" \
  "$shared" "${core_test[@]}"
fault g1-block caught "the engine's block for block reductions raised to 512 (the kernel declares block=256)" \
  "replace core/src/cuda/mod.rs 'const SYNC_BLOCK: u32 = 128;' 'const SYNC_BLOCK: u32 = 512;'" \
  "${core_test[@]}"

# Gap 2: an output that aliases an input another thread still reads: the top level of the sum
# tree written over its children (right in index order, a race on a GPU).
alias="replace core/src/cuda/tree.rs '        let (s, e, entries, offset) = levels[k - 1];' '        let (s, e, entries, mut offset) = levels[k - 1];' &&
  replace core/src/cuda/tree.rs '        let n_in = (e - s).div_ceil(span(k as u32 - 1));' '        let n_in = (e - s).div_ceil(span(k as u32 - 1));
        if k == top as usize {
            offset = offset_prev + skip;
            levels[k - 1].3 = offset;
        }'"
fault g2-alias-index hidden "the tree's top level written over its children; overlap check off, index order" \
  "$alias" env DL_EMU_NO_OVERLAP_CHECK=1 DL_EMU_ORDER=index "${core_test[@]}"
fault g2-alias-shuffled caught "the same; overlap check off, shuffled order" \
  "$alias" env DL_EMU_NO_OVERLAP_CHECK=1 DL_EMU_ORDER=shuffle:2718 "${core_test[@]}"
fault g2-alias-reversed caught "the same; overlap check off, reversed order" \
  "$alias" env DL_EMU_NO_OVERLAP_CHECK=1 DL_EMU_ORDER=reverse "${core_test[@]}"
fault g2-alias-checked caught "the same, with the launch-time overlap check (kernels.txt ptrs=)" \
  "$alias" "${core_test[@]}"

# Gap 3: a put's source reused before the barrier.
fault g3-put-reuse caught "the put's source overwritten after the put, before the barrier (symmetric heap test)" \
  "replace tests/suite/engines.rs '    let src = cuda.upload(mine.view()).unwrap();
    heap.put(Cuda::slice(&src), &buf, r, next).unwrap();' '    let mut src = cuda.upload(mine.view()).unwrap();
    heap.put(Cuda::slice(&src), &buf, r, next).unwrap();
    Cuda::fill(&mut src, T::zero());'" \
  "${suite[@]}" symmetric_heap

# Gap 4: hangs. A rank that never reaches the next collective, in a test; a step that never ends.
hang="replace tests/suite/engines.rs '    let heap = cuda.symmetric_heap(comm).unwrap();' '    while comm.rank() == 1 {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    let heap = cuda.symmetric_heap(comm).unwrap();'"
fault g4-hang-threads caught "rank 1 never reaches the heap's first collective (Threads; THREADS_TEST_TIMEOUT=60)" \
  "$hang" env THREADS_TEST_TIMEOUT=60 "${suite[@]}" symmetric_heap
fault g4-hang-mpi caught "the same under mpirun -n 2 (MPI_TEST_CASE_TIMEOUT=60)" \
  "$hang" env MPI_TEST_CASE_TIMEOUT=60 MPI_TEST_NP=2 \
  cargo test --features emulator,mpi --test gpu_mpi -- symmetric_heap
fault g4-hang-step caught "a script step that never ends (sleep in scripts/mdd-gpu.sh; its step limited to 20 s)" \
  "replace scripts/mdd-gpu.sh 'set -euo pipefail
' 'set -euo pipefail
sleep 100000
'" \
  bash -c '. scripts/lib.sh; step "MDD example with --gpu against the host run" 20 scripts/mdd-gpu.sh'

# Issue 32: the broadcast between node leaders skipped for real nodes (kept for emulated ones, so
# the one-node suite, whose emulated nodes still broadcast, cannot see it); two nodes must.
leaders="replace core/src/shared.rs '        if out.copies > 1 {
            out.broadcast_between_nodes' '        if ranks_per_node.is_some() && out.copies > 1 {
            out.broadcast_between_nodes'"
fault n1-leaders-one-node hidden "the second node's copy not seeded (leaders' broadcast skipped for real nodes); one node, mpirun -n 4" \
  "$leaders" env MPI_TEST_NP=4 cargo test --features emulator,mpi --test mpi -- shared::
fault n1-leaders-two-nodes caught "the same, on two nodes (scripts/test-two-nodes.sh)" \
  "$leaders" scripts/test-two-nodes.sh

echo
echo "| fault | what | command | result | message |"
echo "|---|---|---|---|---|"
for row in "${rows[@]}"; do
  IFS='|' read -r name what cmd verdict line <<<"$row"
  printf '| %s | %s | `%s` | %s | %s |\n' "$name" "$what" "$cmd" "$verdict" "${line//|/\\|}"
done
