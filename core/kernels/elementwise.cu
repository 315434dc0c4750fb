// elementwise.cu: one pass over one to three vectors of n elements, in a grid-stride loop (any
// grid covers any n). Names: <kernel>_<f32|f64|c32|c64>. The operations are those of
// distlops_core::kernels, in the same order, so results are the same bits as on the host.

template <typename T> __device__ void fill(dl_index n, T value, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) y[i] = value;
}

template <typename T> __device__ void scale(dl_index n, T alpha, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) y[i] = y[i] * alpha;
}

/// y += alpha x.
template <typename T>
__device__ void axpy(dl_index n, T alpha, const T* __restrict__ x, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) y[i] = y[i] + alpha * x[i];
}

/// y = alpha x + beta y.
template <typename T>
__device__ void axpby(dl_index n, T alpha, const T* __restrict__ x, T beta, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads())
        y[i] = alpha * x[i] + beta * y[i];
}

/// out = x (op) y for op 0: +, 1: -, 2: *, 3: /. `out` may be `x` or `y` (no __restrict__).
template <typename T> __device__ void binary(dl_index n, int op, const T* x, const T* y, T* out) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        T a = x[i], b = y[i];
        out[i] = op == 0 ? a + b : op == 1 ? a - b : op == 2 ? a * b : a / b;
    }
}

/// y = conj(y) (complex only).
template <typename T> __device__ void conj(dl_index n, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) y[i] = dl_conj(y[i]);
}

/// y[i] = d[(i / inner) % nd] * x[i]: a diagonal broadcast along the axes around its own.
template <typename T>
__device__ void diag_mul(dl_index n, dl_index nd, dl_index inner, const T* __restrict__ d,
                         const T* __restrict__ x, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads())
        y[i] = d[(i / inner) % nd] * x[i];
}

/// The real part (the value itself for the real types).
__device__ __forceinline__ float dl_re(float a) { return a; }
__device__ __forceinline__ double dl_re(double a) { return a; }
__device__ __forceinline__ float dl_re(c32 a) { return a.re; }
__device__ __forceinline__ double dl_re(c64 a) { return a.re; }

/// v inside [lo, hi] by comparisons (a NaN stays NaN).
template <typename R> __device__ __forceinline__ R dl_clip(R v, R lo, R hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/// max(|x| - t, 0) by a comparison (NaN gives 0, as the host's).
template <typename R> __device__ __forceinline__ R dl_shrunk(R a, R t) {
    R d = a - t;
    return d > R(0) ? d : R(0);
}

/// The soft threshold (distlops_core::Shrink::Soft): real values times numpy's sign, complex
/// ones scaled by d / |x|.
__device__ __forceinline__ float dl_soft(float x, float t) {
    float sign = x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;
    return dl_shrunk(dl_abs(x), t) * sign;
}
__device__ __forceinline__ double dl_soft(double x, double t) {
    double sign = x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x;
    return dl_shrunk(dl_abs(x), t) * sign;
}
template <typename C, typename R> __device__ __forceinline__ C dl_soft_complex(C x, R t) {
    R a = dl_abs(x);
    R d = dl_shrunk(a, t);
    return a == R(0) ? dl_zero<C>() : dl_scale_real(x, d / a);
}
__device__ __forceinline__ c32 dl_soft(c32 x, float t) { return dl_soft_complex(x, t); }
__device__ __forceinline__ c64 dl_soft(c64 x, double t) { return dl_soft_complex(x, t); }

/// The box on the real and the imaginary part separately.
__device__ __forceinline__ float dl_clip_value(float x, float lo, float hi) { return dl_clip(x, lo, hi); }
__device__ __forceinline__ double dl_clip_value(double x, double lo, double hi) { return dl_clip(x, lo, hi); }
__device__ __forceinline__ c32 dl_clip_value(c32 x, float lo, float hi) {
    return c32{dl_clip(x.re, lo, hi), dl_clip(x.im, lo, hi)};
}
__device__ __forceinline__ c64 dl_clip_value(c64 x, double lo, double hi) {
    return c64{dl_clip(x.re, lo, hi), dl_clip(x.im, lo, hi)};
}

/// y[i] = op(y[i]), the separable proximal maps of distlops_core::Shrink with its expressions in
/// its order: op 0 soft threshold at a (times re(w[i]) when nw = n; nw = 0: no weights, w not
/// read), 1 hard threshold at a, 2 the box [a, b], 3 Huber with t = a, at = b.
template <typename T, typename R>
__device__ void shrink(dl_index n, int op, R a, R b, const T* __restrict__ w, dl_index nw,
                       T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        T x = y[i];
        if (op == 0) {
            y[i] = dl_soft(x, nw ? a * dl_re(w[i]) : a);
        } else if (op == 1) {
            if (dl_abs(x) <= a) y[i] = dl_zero<T>();
        } else if (op == 2) {
            y[i] = dl_clip_value(x, a, b);
        } else {
            R m = dl_abs(x);
            y[i] = dl_scale_real(x, R(1) - a / (m > b ? m : b));
        }
    }
}

/// acc[i] = acc[i] + |x[i]|^2: one part's squares added to the sums of the lengths of
/// distlops_core::GroupScale (the parts one launch each, in order, acc from +0).
template <typename T, typename R>
__device__ void abs2_add(dl_index n, const T* __restrict__ x, R* __restrict__ acc) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) acc[i] = acc[i] + dl_abs2(x[i]);
}

/// y[i] = y[i] * factor(sqrt(acc[i])), distlops_core::GroupScale's factor: op 0 (shrink)
/// 1 - level / m, 1 when level = 0; op 1 (project) level / m, 0 when level = 0; m = n if
/// n > level, else level.
template <typename T, typename R>
__device__ void group_scale(dl_index n, int op, R level, const R* __restrict__ acc,
                            T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        R len = sqrt(acc[i]);
        R m = len > level ? len : level;
        R f = op == 0 ? (level == R(0) ? R(1) : R(1) - level / m)
                      : (level == R(0) ? R(0) : level / m);
        y[i] = dl_scale_real(y[i], f);
    }
}

/// The box of a strided copy, as distlops_core::engine::StridedCopy merges it (at most 8 axes).
struct dl_strides {
    dl_index ndim;
    dl_index extent[8];
    dl_index src[8];
    dl_index dst[8];
};

/// The offsets in x and y of element i (C order) of the box.
__device__ __forceinline__ void dl_strided_at(dl_index i, const dl_strides& s, dl_index* xs, dl_index* ys) {
    dl_index rest = i;
    *xs = 0;
    *ys = 0;
    for (dl_index a = s.ndim - 1; a >= 0; --a) {
        dl_index k = rest % s.extent[a];
        rest /= s.extent[a];
        *xs += k * s.src[a];
        *ys += k * s.dst[a];
    }
}

/// y[sum k_a dst_a] = x[sum k_a src_a] for every index k of the box (n = its element count).
template <typename T>
__device__ void strided_copy(dl_index n, dl_strides s, const T* __restrict__ x, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        dl_index xs, ys;
        dl_strided_at(i, s, &xs, &ys);
        y[ys] = x[xs];
    }
}

/// y[sum k_a dst_a] = y[...] + x[sum k_a src_a] for every index k of the box: one rounded
/// addition per element, as Compute::strided_add on the host.
template <typename T>
__device__ void strided_add(dl_index n, dl_strides s, const T* __restrict__ x, T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        dl_index xs, ys;
        dl_strided_at(i, s, &xs, &ys);
        y[ys] = y[ys] + x[xs];
    }
}

#define DL_ELEMENTWISE(S, T)                                                                      \
    extern "C" __global__ void fill_##S(dl_index n, T value, T* y) { fill<T>(n, value, y); }       \
    extern "C" __global__ void scale_##S(dl_index n, T alpha, T* y) { scale<T>(n, alpha, y); }     \
    extern "C" __global__ void axpy_##S(dl_index n, T alpha, const T* x, T* y) {                  \
        axpy<T>(n, alpha, x, y);                                                                  \
    }                                                                                             \
    extern "C" __global__ void axpby_##S(dl_index n, T alpha, const T* x, T beta, T* y) {         \
        axpby<T>(n, alpha, x, beta, y);                                                           \
    }                                                                                             \
    extern "C" __global__ void binary_##S(dl_index n, int op, const T* x, const T* y, T* out) {   \
        binary<T>(n, op, x, y, out);                                                              \
    }                                                                                             \
    extern "C" __global__ void diag_mul_##S(dl_index n, dl_index nd, dl_index inner, const T* d,  \
                                            const T* x, T* y) {                                   \
        diag_mul<T>(n, nd, inner, d, x, y);                                                       \
    }                                                                                             \
    extern "C" __global__ void strided_copy_##S(dl_index n, dl_strides s, const T* x, T* y) {     \
        strided_copy<T>(n, s, x, y);                                                              \
    }                                                                                             \
    extern "C" __global__ void strided_add_##S(dl_index n, dl_strides s, const T* x, T* y) {      \
        strided_add<T>(n, s, x, y);                                                               \
    }                                                                                             \
    extern "C" __global__ void shrink_##S(dl_index n, int op, typename dl_real_of<T>::type a,     \
                                          typename dl_real_of<T>::type b, const T* w,             \
                                          dl_index nw, T* y) {                                    \
        shrink<T, typename dl_real_of<T>::type>(n, op, a, b, w, nw, y);                           \
    }                                                                                             \
    extern "C" __global__ void abs2_add_##S(dl_index n, const T* x,                               \
                                            typename dl_real_of<T>::type* acc) {                  \
        abs2_add<T, typename dl_real_of<T>::type>(n, x, acc);                                     \
    }                                                                                             \
    extern "C" __global__ void group_scale_##S(dl_index n, int op,                                \
                                               typename dl_real_of<T>::type level,                \
                                               const typename dl_real_of<T>::type* acc, T* y) {   \
        group_scale<T, typename dl_real_of<T>::type>(n, op, level, acc, y);                       \
    }
DL_FOR_EACH_SCALAR(DL_ELEMENTWISE)

extern "C" __global__ void conj_c32(dl_index n, c32* y) { conj<c32>(n, y); }
extern "C" __global__ void conj_c64(dl_index n, c64* y) { conj<c64>(n, y); }
