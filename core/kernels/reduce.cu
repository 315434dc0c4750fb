// reduce.cu: the device side of distlops' reproducible sums (distlops_core::repro) and the
// order-free reductions.
//
// The canonical tree sums F = 64 children per node in one fixed pattern: child i into accumulator
// i % 8 (left to right, from +0), then the accumulators pairwise (a_i += a_{i+4}, a_i += a_{i+2},
// a_0 += a_1). One thread evaluates one node, so a node's value is the same bits as the host's.

#define DL_LANES 8
#define DL_FANOUT 64

template <typename V> __device__ __forceinline__ V dl_finish_lanes(V* acc) {
    for (int half = DL_LANES / 2; half > 0; half /= 2)
        for (int i = 0; i < half; ++i) acc[i] = acc[i] + acc[i + half];
    return acc[0];
}

/// Leaf values: out[j] = sum over the terms k in [j chunk, min((j + 1) chunk, stop)) of
/// conj?(x_k) y_k, for j < n_out (chunk <= 64).
template <typename T>
__device__ void leaf_dot(dl_index n_out, dl_index chunk, dl_index stop, int conj,
                         const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out) {
    for (dl_index j = dl_global_thread(); j < n_out; j += dl_grid_threads()) {
        T acc[DL_LANES];
        for (int i = 0; i < DL_LANES; ++i) acc[i] = dl_zero<T>();
        dl_index start = j * chunk, end = start + chunk < stop ? start + chunk : stop;
        for (dl_index k = start; k < end; ++k) {
            T a = conj ? dl_conj(x[k]) : x[k];
            acc[(k - start) % DL_LANES] = acc[(k - start) % DL_LANES] + a * y[k];
        }
        out[j] = dl_finish_lanes(acc);
    }
}

/// Leaf values of sum |x_k|^2, as leaf_dot.
template <typename T, typename R>
__device__ void leaf_abs2(dl_index n_out, dl_index chunk, dl_index stop, const T* __restrict__ x,
                          R* __restrict__ out) {
    for (dl_index j = dl_global_thread(); j < n_out; j += dl_grid_threads()) {
        R acc[DL_LANES];
        for (int i = 0; i < DL_LANES; ++i) acc[i] = R(0);
        dl_index start = j * chunk, end = start + chunk < stop ? start + chunk : stop;
        for (dl_index k = start; k < end; ++k)
            acc[(k - start) % DL_LANES] = acc[(k - start) % DL_LANES] + dl_abs2(x[k]);
        out[j] = dl_finish_lanes(acc);
    }
}

/// One level up the tree: out[j] = the pattern sum of in[64 j .. min(64 j + 64, n_in)].
template <typename V>
__device__ void node_sum(dl_index n_out, dl_index n_in, const V* __restrict__ in,
                         V* __restrict__ out) {
    for (dl_index j = dl_global_thread(); j < n_out; j += dl_grid_threads()) {
        V acc[DL_LANES];
        for (int i = 0; i < DL_LANES; ++i) acc[i] = dl_zero<V>();
        dl_index start = j * DL_FANOUT;
        dl_index end = start + DL_FANOUT < n_in ? start + DL_FANOUT : n_in;
        for (dl_index k = start; k < end; ++k)
            acc[(k - start) % DL_LANES] = acc[(k - start) % DL_LANES] + in[k];
        out[j] = dl_finish_lanes(acc);
    }
}

/// Gathers values: out[i] = in[index[i]].
template <typename V>
__device__ void gather(dl_index n, const dl_index* __restrict__ index, const V* __restrict__ in,
                       V* __restrict__ out) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) out[i] = in[index[i]];
}

/// Per-block max |x_i| (the norm of order inf): a shared-memory tree over the block's threads,
/// each of which first takes the max over its grid-stride elements. NaN wins, as on the host.
/// blockDim.x must be a power of two no larger than 256.
template <typename T, typename R>
__device__ void max_abs(dl_index n, const T* __restrict__ x, R* __restrict__ block_max) {
    __shared__ R partial[256];
    R m = R(0);
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        R a = dl_abs(x[i]);
        if (a > m || a != a) m = a;
    }
    partial[threadIdx.x] = m;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            R a = partial[threadIdx.x + half], b = partial[threadIdx.x];
            if (a > b || a != a) partial[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) block_max[blockIdx.x] = partial[0];
}

#define DL_REDUCE(S, T)                                                                           \
    extern "C" __global__ void leaf_dot_##S(dl_index n_out, dl_index chunk, dl_index stop,        \
                                            int conj, const T* x, const T* y, T* out) {           \
        leaf_dot<T>(n_out, chunk, stop, conj, x, y, out);                                         \
    }                                                                                             \
    extern "C" __global__ void leaf_abs2_##S(dl_index n_out, dl_index chunk, dl_index stop,       \
                                             const T* x, dl_real_of<T>::type* out) {              \
        leaf_abs2<T, dl_real_of<T>::type>(n_out, chunk, stop, x, out);                            \
    }                                                                                             \
    extern "C" __global__ void node_sum_##S(dl_index n_out, dl_index n_in, const T* in, T* out) { \
        node_sum<T>(n_out, n_in, in, out);                                                        \
    }                                                                                             \
    extern "C" __global__ void gather_##S(dl_index n, const dl_index* index, const T* in,         \
                                          T* out) {                                               \
        gather<T>(n, index, in, out);                                                             \
    }                                                                                             \
    extern "C" __global__ void max_abs_##S(dl_index n, const T* x, dl_real_of<T>::type* out) {    \
        max_abs<T, dl_real_of<T>::type>(n, x, out);                                               \
    }
DL_FOR_EACH_SCALAR(DL_REDUCE)
