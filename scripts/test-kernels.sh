#!/usr/bin/env bash
# scripts/test-kernels.sh: every CUDA kernel of core/kernels on the CPU, under AddressSanitizer
# (with UndefinedBehaviorSanitizer) and under ThreadSanitizer.
#
# core/emu/tests/kernel_test.cpp launches each kernel through the emulator's launcher at sizes
# that are not multiples of the block size, with 1, 2 and several blocks, on buffers of exactly
# their size, compares bit for bit with references, and checks that every entry point of
# kernels.txt ran. DL_EMU_THREADED=1 runs every CUDA thread as a host thread, so ThreadSanitizer
# sees races between them (a missing __syncthreads); any sanitizer report fails the run.
# DISTLOPS_KERNEL_DIR points at another kernel directory (default core/kernels).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kernels="${DISTLOPS_KERNEL_DIR:-$root/core/kernels}"
out="${CARGO_TARGET_DIR:-$root/target}/kernel-test"
mkdir -p "$out"
CXX="${CXX:-g++}"
flags=(-std=c++20 -O1 -g -ffp-contract=off -pthread -I"$root/core/emu" -I"$kernels")
sources=("$root/core/emu/tests/kernel_test.cpp" "$root/core/emu/runtime.cpp")

status=0
for san in address thread; do
  case "$san" in
    address) sflags=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer) ;;
    thread) sflags=(-fsanitize=thread) ;;
  esac
  t0=$(date +%s)
  "$CXX" "${flags[@]}" "${sflags[@]}" "${sources[@]}" -o "$out/kernel_test_$san"
  t1=$(date +%s)
  echo "==> kernels under ${san} sanitizer (built in $((t1 - t0)) s)"
  if DL_EMU_THREADED=1 \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
    "$out/kernel_test_$san" "$kernels/kernels.txt" 2>&1 | tail -n 40; then
    echo "    ran in $(($(date +%s) - t1)) s"
  else
    echo "==> FAILED under the ${san} sanitizer" >&2
    status=1
  fi
done
exit "$status"
