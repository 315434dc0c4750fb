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

// CUDA's overloaded math functions for float and double.
using std::fabs;
using std::hypot;
using std::sqrt;
inline float fabsf(float x) { return std::fabs(x); }

/// A kernel as the registry knows it: its name, whether it synchronises threads, and a
/// trampoline that unpacks cuLaunchKernel's `kernelParams` (one pointer per argument) into a call.
struct dl_emu_kernel {
    const char* name;
    bool sync;
    void (*invoke)(void** params);
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

#define DL_EMU_ENTRY(name, sync) \
    dl_emu_kernel { #name, sync, &dl_emu_trampoline<decltype(&name), &name>::invoke }
#endif
