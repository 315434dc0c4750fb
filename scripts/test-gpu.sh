#!/usr/bin/env bash
# scripts/test-gpu.sh: the tests of the Cuda engine.
#
#   scripts/test-gpu.sh --emulated   no GPU needed (what CI runs, from scripts/test.sh):
#     1. every kernel under AddressSanitizer and ThreadSanitizer (scripts/test-kernels.sh);
#     2. the emulated device's own tests, and the Cuda instantiation of the suite on the emulated
#        device, on the Threads communicator at 1-4 ranks and under mpirun -n 1..4; the post-stack
#        and MDD examples with --gpu against their host runs (scripts/poststack-gpu.sh,
#        scripts/mdd-gpu.sh);
#     3. against the real NVIDIA libraries from pinned PyPI wheels (scripts/gpu-libs.sh): NVRTC
#        compiles every kernel file for sm_80 and sm_90, and every NCCL and NVSHMEM entry point
#        the bindings use resolves.
#   scripts/test-gpu.sh              on a machine with NVIDIA GPUs: the Cuda suite on the real
#                                    devices, one GPU per rank (rank % device count), Threads and
#                                    mpirun -n 1..4, and the two examples' --gpu runs against their
#                                    host runs. Without a driver each binary prints one `skipped:`
#                                    line.
# Extra arguments go to every `cargo test`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

emulated=0
if [ "${1:-}" = "--emulated" ]; then
  emulated=1
  shift
fi

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

failed=()
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Runs a cargo test command, keeps its output for the final count, records a failure.
run() {
  local what="$1"
  shift
  echo "==> $what"
  if ! "$@" 2>&1 | tee -a "$log"; then
    failed+=("$what")
  fi
}

if [ "$emulated" = 1 ]; then
  export DISTLOPS_DEVICE=emulated
  run "kernels under sanitizers" scripts/test-kernels.sh
  run "emulated device" cargo test -p distlops-core --features emulator --no-fail-fast "$@"
  run "Cuda suite on the emulated device (Threads, mpirun)" \
    cargo test --features emulator,mpi --test gpu_threads --test gpu_mpi --no-fail-fast "$@"
  run "MDD example with --gpu against the host run (emulated device, mpirun -n 1 and 2)" \
    scripts/mdd-gpu.sh
  DISTLOPS_CUDA_AWARE_MPI=1 run "Cuda suite under mpirun, device payloads by address through MPI (the CUDA-aware MPI path)" \
    cargo test --features emulator,mpi --test gpu_mpi --no-fail-fast "$@"
  run "post-stack example: --gpu on the emulated device gives the host run's volumes (1 and 2 ranks)" \
    scripts/poststack-gpu.sh
  echo "==> NVIDIA libraries (pinned wheels)"
  scripts/gpu-libs.sh
  # shellcheck disable=SC1091
  . "${DISTLOPS_GPU_LIBS:-$HOME/.cache/distlops/gpu-libs}/env.sh"
  DISTLOPS_REQUIRE_GPU_LIBS=1 run "NVRTC compiles every kernel; NCCL and NVSHMEM symbols resolve" \
    cargo test -p distlops-gpu-sys --no-fail-fast "$@"
else
  unset DISTLOPS_DEVICE
  run "Cuda suite on the real devices (Threads, mpirun)" \
    cargo test --features cuda,emulator,mpi --test gpu_threads --test gpu_mpi --no-fail-fast "$@"
  DISTLOPS_GPU=real run "post-stack example: --gpu on the real devices against the host run" \
    scripts/poststack-gpu.sh
  DISTLOPS_GPU=real run "MDD example: --gpu on the real devices against the host run" \
    scripts/mdd-gpu.sh
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
