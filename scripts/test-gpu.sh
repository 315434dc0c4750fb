#!/usr/bin/env bash
# scripts/test-gpu.sh: the tests of the Cuda engine.
#
#   scripts/test-gpu.sh --emulated   no GPU needed (what CI runs, from scripts/test.sh):
#     1. every kernel under AddressSanitizer (blocks and threads in index, reversed and shuffled
#        order) and ThreadSanitizer (scripts/test-kernels.sh), and three deliberate faults in the
#        device-initiated peer kernels, each of which must be reported (test-kernels.sh --faults);
#     2. the emulated device's own tests, and the Cuda instantiation of the suite on the emulated
#        device, on the Threads communicator at 1-4 ranks and under mpirun -n 1..4 (blocks and
#        threads in a shuffled order, DL_EMU_ORDER), the mpirun half again through the CUDA-aware
#        MPI path (in reversed order); the post-stack and MDD examples with --gpu against their
#        host runs (scripts/poststack-gpu.sh, scripts/mdd-gpu.sh);
#     3. the Cuda suite on Threads once more with the emulated device's kernels built with
#        AddressSanitizer (DL_EMU_SANITIZE=address, in its own target directory
#        $CARGO_TARGET_DIR/emu-asan): an out-of-bounds access of a kernel linked into the Rust
#        suite, e.g. a `__shared__` array smaller than the engine's block, is reported at once
#        with its file and line instead of corrupting the test binary's memory;
#     4. against the real NVIDIA libraries from pinned PyPI wheels (scripts/gpu-libs.sh): NVRTC
#        compiles every kernel file for sm_80 and sm_90, and every NCCL and NVSHMEM entry point
#        the bindings use resolves.
#   scripts/test-gpu.sh              on a machine with NVIDIA GPUs: the Cuda suite on the real
#                                    devices, one GPU per rank (rank % device count), Threads and
#                                    mpirun -n 1..4, and the two examples' --gpu runs against their
#                                    host runs. Without a driver each binary prints one `skipped:`
#                                    line.
# Extra arguments go to every `cargo test`. Every step has a time limit (scripts/lib.sh: a step
# past it fails with its name); the test binaries also limit each test.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

emulated=0
if [ "${1:-}" = "--emulated" ]; then
  emulated=1
  shift
fi

step "system packages (scripts/setup.sh)" 900 scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

failed=()
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# run NAME SECONDS CMD...: one step (scripts/lib.sh) whose output is kept for the final count; a
# failure or a timeout is recorded and the next step runs.
run() {
  local what="$1" seconds="$2"
  shift 2
  if ! step "$what" "$seconds" "$@" 2>&1 | tee -a "$log"; then
    failed+=("$what")
  fi
}

if [ "$emulated" = 1 ]; then
  export DISTLOPS_DEVICE=emulated
  run "kernels under sanitizers" 2400 scripts/test-kernels.sh
  run "deliberate faults in the peer kernels are caught (a read before the signal, a peer index off by one, multimem on a plain address)" \
    900 scripts/test-kernels.sh --faults
  # scripts/test.sh has just run these in its one `cargo test` (DISTLOPS_SUITE_DONE=1).
  if [ -z "${DISTLOPS_SUITE_DONE:-}" ]; then
    run "emulated device" 1200 cargo test "${BUILD[@]}" --lib --test emulator --no-fail-fast "$@"
    DL_EMU_ORDER=shuffle:2718 run "Cuda suite on the emulated device (Threads, mpirun), blocks and threads in a shuffled order" \
      2400 cargo test "${BUILD[@]}" --test gpu_threads --test gpu_mpi --no-fail-fast "$@"
  fi
  run "MDD example with --gpu against the host run (emulated device, mpirun -n 1 and 2)" \
    900 scripts/mdd-gpu.sh
  DISTLOPS_CUDA_AWARE_MPI=1 DL_EMU_ORDER=reverse run "Cuda suite under mpirun, device payloads by address through MPI (the CUDA-aware MPI path), in reversed order" \
    1500 cargo test "${BUILD[@]}" --test gpu_mpi --no-fail-fast "$@"
  run "post-stack example: --gpu on the emulated device gives the host run's volumes (1 and 2 ranks)" \
    900 scripts/poststack-gpu.sh
  # Its own target directory: the flag changes the emulator's build, and the main directory
  # stays as it was (no rebuild of everything for the next cargo command). Seeded the first time
  # with the main directory's compiled dependencies (a copy: only the workspace's crates rebuild).
  target="${CARGO_TARGET_DIR:-$root/target}"
  if [ ! -d "$target/emu-asan/debug" ] && [ -d "$target/debug/deps" ]; then
    mkdir -p "$target/emu-asan/debug"
    cp -a "$target/debug/deps" "$target/debug/build" "$target/debug/.fingerprint" "$target/emu-asan/debug/"
  fi
  DL_EMU_SANITIZE=address ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 CARGO_TARGET_DIR="$target/emu-asan" \
    run "Cuda suite on Threads, emulator kernels under AddressSanitizer (DL_EMU_SANITIZE=address)" \
    2400 cargo test "${BUILD[@]}" --test gpu_threads --no-fail-fast "$@"
  # In CI its gigabytes go back at once (a CI machine's disk filled); a developer keeps it.
  if [ "${CI:-}" = true ]; then rm -rf "$target/emu-asan"; fi
  run "NVIDIA libraries (pinned wheels)" 900 scripts/gpu-libs.sh
  gpu_env="${DISTLOPS_GPU_LIBS:-$HOME/.cache/distlops/gpu-libs}/env.sh"
  if [ -f "$gpu_env" ]; then
    # shellcheck disable=SC1090
    . "$gpu_env"
    DISTLOPS_REQUIRE_GPU_LIBS=1 run "NVRTC compiles every kernel; NCCL and NVSHMEM symbols resolve" \
      900 cargo test -p distlops-gpu-sys --no-fail-fast "$@"
  else
    failed+=("NVRTC and the NVIDIA libraries: no $gpu_env")
  fi
else
  unset DISTLOPS_DEVICE
  run "Cuda suite on the real devices (Threads, mpirun)" \
    2400 cargo test --workspace --features cuda,emulator,mpi --test gpu_threads --test gpu_mpi --no-fail-fast "$@"
  DISTLOPS_GPU=real run "post-stack example: --gpu on the real devices against the host run" \
    900 scripts/poststack-gpu.sh
  DISTLOPS_GPU=real run "MDD example: --gpu on the real devices against the host run" \
    900 scripts/mdd-gpu.sh
fi

# Both summary styles: libtest's `test result: ok. N passed; M failed` and the kernel test's
# `N passed, M failed`.
passed=$(grep -Eo '(^|test result: [a-zA-Z]+\. )[0-9]+ passed' "$log" | grep -Eo '[0-9]+' | awk '{s += $1} END {print s + 0}')
nfailed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s += $1} END {print s + 0}')
skipped=$(grep -c '^skipped:' "$log" || true)
echo "==> GPU tests: $passed passed, $nfailed failed, $skipped binaries skipped"
if [ "$emulated" = 1 ] && [ "$skipped" -gt 0 ]; then
  echo "==> FAILED: a binary skipped on the emulated device" >&2
  exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
  printf '==> FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
