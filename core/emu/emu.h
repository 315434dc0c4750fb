// emu.h: CUDA's built-ins for the host C++ compiler, so that distlops' unchanged kernel files
// (core/kernels/*.cu) run on the CPU in the emulated device.
//
// Execution model (runtime.cpp): a launch runs its blocks one after another. Kernels marked
// `sync` in kernels.txt run each block with one host thread per CUDA thread and a std::barrier
// for __syncthreads(); the others run every thread of a block in turn on the calling thread (a
// legal CUDA schedule for kernels that never wait for each other), unless DL_EMU_THREADED=1 asks
// for threads for every kernel (the sanitizer builds do, so ThreadSanitizer sees races between
// CUDA threads). One launch at a time in a process: `__shared__` arrays are function statics,
// private to the running block because blocks never overlap.
//
// Order: blocks, and the threads of a block run one at a time, go in index order unless
// DL_EMU_ORDER says `reverse` or `shuffle[:SEED]` (a permutation per block and launch, drawn
// from the seed, the kernel's name and its launch count). CUDA promises no order, so a kernel
// whose result depends on it (an output that aliases an input another thread still reads) gives
// different results under another order.
//
// Checks at launch (from kernels.txt through the generated registry): a block larger than the
// kernel's `block=`, and, for a kernel that declares its pointers (`ptrs=`), a written range that
// overlaps another pointer's range, are refused with a message naming the kernel.
//
// The generated translation units put common.cuh and the kernel file in an anonymous namespace:
// each file's helpers are its own (as in its own NVRTC module), and the `__shared__` statics of
// the kernel templates have internal linkage, which AddressSanitizer instruments (it leaves
// the statics of templates with vague linkage without red zones).
//
// Kernels marked `peer` (peer.cu) run outside that lock: they wait inside the launch for the
// same kernel on the other ranks (one emulated device per Threads rank, one host thread each), so
// their launches must overlap. They use no `__shared__` arrays, and communicate only through the
// symmetric heap with the signals below, which are C++ atomics with the CUDA memory model's
// release / acquire meaning, so ThreadSanitizer sees a peer read that no signal orders as a race.
//
// Multicast (NVLink SHARP, sm_90): a multicast address is a range registered by the emulated
// symmetric heap (dl_emu_multicast_register) that stands for one allocation on every rank; the
// multimem built-ins look the address up and act on every rank's copy in rank order (ld_reduce: a
// sum from rank 0 up; red: an atomic add to each). The range itself is
// poisoned under AddressSanitizer, so a plain load or store of a multicast address (undefined on
// a GPU) is reported, and a multimem built-in on an address that is not multicast aborts with a
// message (on a GPU: an illegal-address fault).
//
// Not provided (a kernel that needs one fails to compile here, not silently): dynamic shared
// memory (`extern __shared__`), warp shuffles and votes, atomics other than the signals,
// textures, cooperative groups.
#pragma once

/// Kernel files may test this: the emulator's definitions of the built-ins below replace the
/// inline PTX of common.cuh.
#define DL_EMULATED_DEVICE 1

#include <cmath>
#include <cstddef>
#include <cstdint>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

extern thread_local dim3 threadIdx;
extern thread_local dim3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

/// Waits for every thread of the block (only valid in a kernel marked `sync`).
void dl_emu_syncthreads();

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __syncthreads() dl_emu_syncthreads()
// The launch bounds are kernels.txt's `block=` here; NVRTC reads the attribute itself.
#define __launch_bounds__(...)

// CUDA's overloaded math functions for float and double.
using std::fabs;
using std::hypot;
using std::sqrt;
inline float fabsf(float x) { return std::fabs(x); }

// Memory ordering and signals of device-initiated communication (common.cuh declares their
// CUDA forms: `fence.sc.sys`, `st.release.sys`, `ld.acquire.sys`, `red.release.sys`,
// `__nanosleep`).

/// `__threadfence_system()`: a sequentially consistent fence. ThreadSanitizer models no fences;
/// under it this is empty, which changes nothing the kernels rely on: the release stores that
/// follow every fence in peer.cu order the block's writes by themselves in the C++ model.
#if defined(__SANITIZE_THREAD__)
inline void __threadfence_system() {}
#else
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
#endif
/// Stores a signal value with release semantics (every write of this thread before it, and every
/// write it has seen ordered by a barrier, is visible to a thread that acquires the value).
inline void dl_signal_store(unsigned long long* flag, unsigned long long value) {
    __atomic_store_n(flag, value, __ATOMIC_RELEASE);
}
/// Loads a signal value with acquire semantics.
inline unsigned long long dl_signal_load(const unsigned long long* flag) {
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}
/// Adds to a signal with release semantics.
inline void dl_signal_add(unsigned long long* flag, unsigned long long value) {
    __atomic_fetch_add(flag, value, __ATOMIC_RELEASE);
}
/// Gives the CPU to the other emulated ranks while a thread waits for a signal.
void dl_backoff();

/// The rank copies that multicast address `mc` (with `bytes` from it) stands for: writes their
/// count into `*n` and returns the array of each rank's address of `mc`'s byte. Aborts with a
/// message naming `what` if `mc` is not inside a registered multicast range.
unsigned char* const* dl_emu_multicast(const void* mc, unsigned long long bytes, unsigned* n,
                                       const char* what);

/// `multimem.ld_reduce.relaxed.sys.global.add`: the sum over the ranks of the element at `mc`,
/// from rank 0 up.
template <typename R> inline R dl_multimem_ld_reduce_add(const R* mc) {
    unsigned n = 0;
    unsigned char* const* at = dl_emu_multicast(mc, sizeof(R), &n, "multimem.ld_reduce");
    R acc = *reinterpret_cast<const R*>(at[0]);
    for (unsigned q = 1; q < n; ++q) acc = acc + *reinterpret_cast<const R*>(at[q]);
    return acc;
}
/// `multimem.red.release.sys.global.add.u64`: adds `v` to every rank's signal at `mc`.
inline void dl_multimem_signal_add(unsigned long long* mc, unsigned long long v) {
    unsigned n = 0;
    unsigned char* const* at = dl_emu_multicast(mc, sizeof v, &n, "multimem.red");
    for (unsigned q = 0; q < n; ++q)
        __atomic_fetch_add(reinterpret_cast<unsigned long long*>(at[q]), v, __ATOMIC_RELEASE);
}

/// A kernel as the registry knows it (generated from kernels.txt by core/emu/registry.rs): its
/// name, whether it synchronises threads, the largest block it takes, its pointer parameters
/// (`ptrs`: one role letter per pointer, `r` read, `w` written, `u` read and written, or null when
/// not declared; `ptr_names`: their names, comma-separated), whether a written pointer may be
/// exactly an input, whether it waits for its peers on other ranks, and a trampoline that unpacks cuLaunchKernel's `kernelParams` (one pointer
/// per argument) into a call.
struct dl_emu_kernel {
    const char* name;
    bool sync;
    unsigned max_block;
    const char* ptrs;
    const char* ptr_names;
    bool inplace;
    bool peer;
    void (*invoke)(void** params);
};

/// The extent of one pointer argument of a launch: parameter `param` (its index in
/// `kernelParams`) holds a device address from which the kernel touches at most `bytes` bytes.
struct dl_emu_span {
    unsigned param;
    unsigned long long bytes;
};

#ifdef DL_EMU_REGISTRY
#include <utility>

template <typename F, F f> struct dl_emu_trampoline;

template <typename... A, void (*f)(A...)> struct dl_emu_trampoline<void (*)(A...), f> {
    template <std::size_t... I> static void call(void** p, std::index_sequence<I...>) {
        f(*static_cast<A*>(p[I])...);
    }
    static void invoke(void** p) { call(p, std::index_sequence_for<A...>{}); }
};

#define DL_EMU_ENTRY(name, sync, max_block, ptrs, ptr_names, inplace, peer)                  \
    dl_emu_kernel {                                                                          \
        #name, sync, max_block, ptrs, ptr_names, inplace, peer,                             \
            &dl_emu_trampoline<decltype(&name), &name>::invoke                               \
    }
#endif
