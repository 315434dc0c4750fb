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
// Not provided (a kernel that needs one fails to compile here, not silently): dynamic shared
// memory (`extern __shared__`), warp shuffles and votes, atomics, textures, cooperative groups.
#pragma once

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

/// A kernel as the registry knows it (generated from kernels.txt by core/emu/registry.rs): its
/// name, whether it synchronises threads, the largest block it takes, its pointer parameters
/// (`ptrs`: one role letter per pointer, `r` read, `w` written, `u` read and written, or null when
/// not declared; `ptr_names`: their names, comma-separated), whether a written pointer may be
/// exactly an input, and a trampoline that unpacks cuLaunchKernel's `kernelParams` (one pointer
/// per argument) into a call.
struct dl_emu_kernel {
    const char* name;
    bool sync;
    unsigned max_block;
    const char* ptrs;
    const char* ptr_names;
    bool inplace;
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

#define DL_EMU_ENTRY(name, sync, max_block, ptrs, ptr_names, inplace)                        \
    dl_emu_kernel {                                                                          \
        #name, sync, max_block, ptrs, ptr_names, inplace,                                   \
            &dl_emu_trampoline<decltype(&name), &name>::invoke                               \
    }
#endif
