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
    }
DL_FOR_EACH_SCALAR(DL_ELEMENTWISE)

extern "C" __global__ void conj_c32(dl_index n, c32* y) { conj<c32>(n, y); }
extern "C" __global__ void conj_c64(dl_index n, c64* y) { conj<c64>(n, y); }
