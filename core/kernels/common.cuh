// common.cuh: what every kernel file of distlops shares. NVRTC compiles it in front of each
// kernel file (kernel files include nothing themselves); the emulator compiles the same text with
// the host C++ compiler after its own header, emu.h.
//
// Bits: kernels must give the same bits as the host engine. NVRTC runs with --fmad=false and the
// emulator with -ffp-contract=off, so `a * b + c` is two rounded operations everywhere, as in
// Rust; where a fused multiply-add is meant, kernels call fma() explicitly. Complex arithmetic
// follows num-complex's formulas term for term.

typedef long long dl_index;

/// Complex<f32> and Complex<f64>, laid out as num-complex's `Complex<T>` (re, then im).
struct c32 {
    float re, im;
};
struct c64 {
    double re, im;
};

template <typename C> struct dl_real_of;
template <> struct dl_real_of<float> { typedef float type; };
template <> struct dl_real_of<double> { typedef double type; };
template <> struct dl_real_of<c32> { typedef float type; };
template <> struct dl_real_of<c64> { typedef double type; };

/// A fused multiply-add, a * b + c with one rounding (fmaf / fma of CUDA and of the C library).
__device__ __forceinline__ float dl_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double dl_fma(double a, double b, double c) { return fma(a, b, c); }

#define DL_COMPLEX_OPS(C, R)                                                                      \
    __device__ __forceinline__ C operator+(C a, C b) { return C{a.re + b.re, a.im + b.im}; }      \
    __device__ __forceinline__ C operator-(C a, C b) { return C{a.re - b.re, a.im - b.im}; }      \
    __device__ __forceinline__ C operator-(C a) { return C{-a.re, -a.im}; }                       \
    __device__ __forceinline__ C operator*(C a, C b) {                                            \
        return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};                           \
    }                                                                                             \
    __device__ __forceinline__ C operator/(C a, C b) {                                            \
        R n = b.re * b.re + b.im * b.im;                                                          \
        R re = a.re * b.re + a.im * b.im;                                                         \
        R im = a.im * b.re - a.re * b.im;                                                         \
        return C{re / n, im / n};                                                                 \
    }                                                                                             \
    __device__ __forceinline__ C dl_conj(C a) { return C{a.re, -a.im}; }                          \
    __device__ __forceinline__ R dl_abs2(C a) { return a.re * a.re + a.im * a.im; }               \
    __device__ __forceinline__ R dl_abs(C a) { return hypot(a.re, a.im); }                        \
    __device__ __forceinline__ bool dl_is_zero(C a) { return a.re == R(0) && a.im == R(0); }      \
    __device__ __forceinline__ C dl_scale_real(C a, R c) { return C{a.re * c, a.im * c}; }        \
    __device__ __forceinline__ C dl_fma_real(C a, R c, C acc) {                                   \
        return C{dl_fma(a.re, c, acc.re), dl_fma(a.im, c, acc.im)};                               \
    }                                                                                             \
    template <> __device__ __forceinline__ C dl_zero<C>() { return C{R(0), R(0)}; }

template <typename T> __device__ __forceinline__ T dl_zero() { return T(0); }
DL_COMPLEX_OPS(c32, float)
DL_COMPLEX_OPS(c64, double)

__device__ __forceinline__ float dl_conj(float a) { return a; }
__device__ __forceinline__ double dl_conj(double a) { return a; }
__device__ __forceinline__ float dl_abs2(float a) { return a * a; }
__device__ __forceinline__ double dl_abs2(double a) { return a * a; }
__device__ __forceinline__ float dl_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double dl_abs(double a) { return fabs(a); }
__device__ __forceinline__ bool dl_is_zero(float a) { return a == 0.0f; }
__device__ __forceinline__ bool dl_is_zero(double a) { return a == 0.0; }
/// A value times a real coefficient, component by component (Scalar::scale_real).
__device__ __forceinline__ float dl_scale_real(float a, float c) { return a * c; }
__device__ __forceinline__ double dl_scale_real(double a, double c) { return a * c; }
__device__ __forceinline__ float dl_fma_real(float a, float c, float acc) { return dl_fma(a, c, acc); }
__device__ __forceinline__ double dl_fma_real(double a, double c, double acc) { return dl_fma(a, c, acc); }

/// The global index of this thread along x, and the stride of a grid-stride loop.
__device__ __forceinline__ dl_index dl_global_thread() {
    return (dl_index)blockIdx.x * (dl_index)blockDim.x + (dl_index)threadIdx.x;
}
__device__ __forceinline__ dl_index dl_grid_threads() {
    return (dl_index)gridDim.x * (dl_index)blockDim.x;
}

/// Instantiates `MACRO(suffix, type)` for the four scalar types.
#define DL_FOR_EACH_SCALAR(MACRO) MACRO(f32, float) MACRO(f64, double) MACRO(c32, c32) MACRO(c64, c64)

// Signals and multicast of device-initiated communication (peer.cu), at system scope: other GPUs
// observe them over NVLink. The emulator defines the same names in emu.h (C++ atomics with the
// same release / acquire meaning, multimem over a registry of multicast ranges).
#ifndef DL_EMULATED_DEVICE
/// Stores a signal with release semantics (sm_70+).
__device__ __forceinline__ void dl_signal_store(unsigned long long* flag, unsigned long long value) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(flag), "l"(value) : "memory");
}
/// Loads a signal with acquire semantics (sm_70+).
__device__ __forceinline__ unsigned long long dl_signal_load(const unsigned long long* flag) {
    unsigned long long value;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(flag) : "memory");
    return value;
}
/// Adds to a signal with release semantics (sm_70+).
__device__ __forceinline__ void dl_signal_add(unsigned long long* flag, unsigned long long value) {
    asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(flag), "l"(value) : "memory");
}
/// Waits a little between two polls of a signal (sm_70+).
__device__ __forceinline__ void dl_backoff() { __nanosleep(32); }
#if __CUDA_ARCH__ >= 900
/// `multimem.ld_reduce`: the sum over the GPUs of the element at multicast address `mc` (sm_90;
/// the order of the switch's additions is the hardware's).
__device__ __forceinline__ float dl_multimem_ld_reduce_add(const float* mc) {
    float v;
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];" : "=f"(v) : "l"(mc) : "memory");
    return v;
}
__device__ __forceinline__ double dl_multimem_ld_reduce_add(const double* mc) {
    double v;
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f64 %0, [%1];" : "=d"(v) : "l"(mc) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long dl_multimem_ld_reduce_add(const unsigned long long* mc) {
    unsigned long long v;
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.u64 %0, [%1];" : "=l"(v) : "l"(mc) : "memory");
    return v;
}
/// `multimem.red`: adds `v` to every GPU's signal at multicast address `mc` (sm_90).
__device__ __forceinline__ void dl_multimem_signal_add(unsigned long long* mc, unsigned long long v) {
    asm volatile("multimem.red.release.sys.global.add.u64 [%0], %1;" ::"l"(mc), "l"(v) : "memory");
}
#endif
#endif
