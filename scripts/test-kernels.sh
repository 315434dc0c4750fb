#!/usr/bin/env bash
# scripts/test-kernels.sh: every CUDA kernel of core/kernels on the CPU, under AddressSanitizer
# (with UndefinedBehaviorSanitizer) and under ThreadSanitizer.
#
# core/emu/tests/kernel_test.cpp launches each kernel through the emulator's launcher at sizes
# that are not multiples of the block size, with 1, 2 and several blocks of the engine's sizes and
# more, on buffers of exactly their size, compares bit for bit with references, tests the
# launcher's checks of kernels.txt (block=, ptrs=), and checks that every entry point of
# kernels.txt ran. The kernels are registered as the Rust build registers them: the registry
# generated from kernels.txt by core/emu/gen_registry.rs (built here with rustc).
#
# Runs: AddressSanitizer with the blocks and threads of a block in index order, reversed and
# shuffled (DL_EMU_ORDER; CUDA promises no order), one host thread at a time; ThreadSanitizer with
# DL_EMU_THREADED=1, every CUDA thread a host thread, so races between them (a missing
# __syncthreads, an output another thread still reads) are reported. Any sanitizer report fails
# the run. DISTLOPS_KERNEL_DIR points at another kernel directory (default core/kernels).
#
# --faults: instead, three deliberate faults in a copy of peer.cu, each of which must fail the
# peer kernels' test with its own report: a peer read before the peer's signal (ThreadSanitizer:
# data race), a peer index off by one (AddressSanitizer: the address table overrun), a multimem
# instruction on an address that is not multicast (the emulator's abort). A fault that passes, or
# fails otherwise, fails the run.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
kernels="${DISTLOPS_KERNEL_DIR:-$root/core/kernels}"
out="${CARGO_TARGET_DIR:-$root/target}/kernel-test"
mkdir -p "$out/registry"
CXX="${CXX:-g++}"

step "kernel registry from kernels.txt" 120 \
  rustc --edition 2021 -O "$root/core/emu/gen_registry.rs" -o "$out/gen_registry"
rm -f "$out"/registry/*.cpp
mapfile -t generated < <("$out/gen_registry" "$kernels/kernels.txt" "$out/registry")

flags=(-std=c++20 -O1 -g -ffp-contract=off -pthread -I"$root/core/emu" -I"$kernels")
sources=("$root/core/emu/tests/kernel_test.cpp" "$root/core/emu/runtime.cpp" "${generated[@]}")

if [ "${1:-}" = "--faults" ]; then
  # fault NAME SANITIZER PATTERN FROM TO: peer.cu with FROM replaced by TO must fail with PATTERN.
  status=0
  fault() {
    local name="$1" san="$2" pattern="$3" from="$4" to="$5" dir="$out/fault-$1"
    rm -rf "$dir" && mkdir -p "$dir/registry" && cp "$kernels"/* "$dir/"
    FROM="$from" TO="$to" python3 - "$dir/peer.cu" <<'PY'
import os, sys
path = sys.argv[1]
text = open(path).read()
if os.environ["FROM"] not in text:
    sys.exit("the fault's pattern is not in peer.cu: " + os.environ["FROM"])
open(path, "w").write(text.replace(os.environ["FROM"], os.environ["TO"], 1))
PY
    mapfile -t gen < <("$out/gen_registry" "$dir/kernels.txt" "$dir/registry")
    local sflags=(-fsanitize=address -fno-omit-frame-pointer)
    [ "$san" = thread ] && sflags=(-fsanitize=thread)
    step "fault $name: build" 600 "$CXX" -std=c++20 -O1 -g -ffp-contract=off -pthread \
      -I"$root/core/emu" -I"$dir" "${sflags[@]}" "$root/core/emu/tests/kernel_test.cpp" \
      "$root/core/emu/runtime.cpp" "${gen[@]}" -o "$dir/kernel_test" || { status=1; return; }
    local rc=0
    timeout 600 env KERNEL_TEST_ONLY=peer KERNEL_TEST_BLOCKS=32 DL_EMU_THREADED=1 \
      ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
      "$dir/kernel_test" >"$dir/log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && grep -q -m 1 -e "$pattern" "$dir/log"; then
      echo "fault $name: failed as it must (exit $rc): $(grep -m 1 -e "$pattern" "$dir/log")"
    else
      echo "==> FAILED: fault $name was not caught (exit $rc, no \`$pattern\`):" >&2
      tail -n 20 "$dir/log" >&2
      status=1
    fi
  }
  fault early-peer-read thread "WARNING: ThreadSanitizer: data race" \
    "while (((seen = dl_signal_load(my_signals + q)) >> 32) < epoch) dl_backoff();" "seen = ready;"
  fault peer-index-off-by-one address "ERROR: AddressSanitizer" \
    "dl_signal_store(reinterpret_cast<unsigned long long*>(table[ranks + q]) + rank, ready);" \
    "dl_signal_store(reinterpret_cast<unsigned long long*>(table[ranks + q + 1]) + rank, ready);"
  fault multimem-not-multicast address "not a multicast address" \
    "out[i] = dl_multimem_ld_reduce_add(mc + i);" "out[i] = dl_multimem_ld_reduce_add(mine + i);"
  exit "$status"
fi

status=0
# run NAME ENV... : one run of a sanitizer build with extra environment variables.
run() {
  local name="$1" san="$2"
  shift 2
  if ! step "kernels: $name" 900 bash -c 'log="$1"; shift; "$@" >"$log" 2>&1' _ "$out/$san.log" \
    env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TSAN_OPTIONS=halt_on_error=1:exitcode=66 "$@" "$out/kernel_test_$san"; then
    # The first report or failed check, then the end of the output.
    grep -m 1 -E 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error|^FAILED' "$out/$san.log" || true
    tail -n 40 "$out/$san.log"
    echo "==> FAILED: kernels: $name" >&2
    status=1
  else
    tail -n 1 "$out/$san.log"
  fi
}
for san in address thread; do
  case "$san" in
    address) sflags=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer) ;;
    thread) sflags=(-fsanitize=thread) ;;
  esac
  if ! step "kernel test with the ${san} sanitizer: build" 600 \
    "$CXX" "${flags[@]}" "${sflags[@]}" "${sources[@]}" -o "$out/kernel_test_$san"; then
    status=1
    continue
  fi
  case "$san" in
    address)
      run "address sanitizer, index order" address DL_EMU_THREADED=0 DL_EMU_ORDER=index
      run "address sanitizer, reversed order" address DL_EMU_THREADED=0 DL_EMU_ORDER=reverse
      run "address sanitizer, shuffled order" address DL_EMU_THREADED=0 DL_EMU_ORDER=shuffle:27
      ;;
    thread)
      # A thread per CUDA thread. The grid-stride kernels with blocks of a warp: they do not
      # synchronise, so a race between their threads (an output another thread still reads)
      # shows with 32 threads as with more, and every larger block only multiplies thread
      # start-ups under TSan (the address runs take every size). The block reduction still runs
      # with every power of two up to its block=, the sum tree with the engine's 256.
      run "thread sanitizer, a host thread per CUDA thread" thread DL_EMU_THREADED=1 \
        KERNEL_TEST_BLOCKS=32
      ;;
  esac
done
exit "$status"
