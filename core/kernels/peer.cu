// peer.cu: device-initiated collectives on the symmetric heap (see core/src/cuda/peer.rs): each
// rank's kernel reads the other ranks' parts of a symmetric allocation directly (peer loads over
// NVLink, `nvshmem_ptr`) or through its multicast address (`multimem`, NVLink SHARP, sm_90), and
// the ranks order their accesses with signals in the heap, not with a host-side collective.
//
// One launch is one block (the vectors are short: a solver's reduction slots). Every rank of the
// heap launches the same kernel with the same `epoch` (1, 2, ... per reducer, in call order).
//
// Memory ordering. Each rank's part of the signal buffer holds `ready[q]` and `done[q]` for every
// rank q (peer path) or an arrival and a departure counter and two words for the length check
// (multicast path; at least 4 words), all zero before the first epoch. In epoch e, rank r:
//   1. waits until every rank has finished reading r's data of epoch e - 1 (done[q] >= e - 1, or
//      departures >= P (e - 1)): only then may r overwrite it;
//   2. writes its contribution into its own data part; __syncthreads();
//   3. thread 0: __threadfence_system(), then release-stores ready[r] = e on every rank (or adds 1
//      to every rank's arrivals through the multicast address): the block's writes of step 2,
//      ordered before the fence by __syncthreads(), are visible to whoever acquires the signal;
//   4. thread 0 acquire-loads its own ready[q] until every q reached e (arrivals >= P e);
//      __syncthreads() hands the acquisition to the block;
//   5. every thread sums its elements over the ranks' parts: rank 0's value, then + rank 1's, ...
//      (peer loads), or one multimem.ld_reduce per element;
//   6. __syncthreads(); thread 0 release-stores done[r] = e on every rank (adds 1 to departures).
// A read of step 5 that no acquire of step 4 orders after the writer's step 2 is a data race; the
// emulator's signals are C++ atomics, so ThreadSanitizer reports it on Threads runs.
//
// Bits: the peer path adds the ranks' values in rank order from rank 0's, so a rank count gives
// one result; the multicast path adds in the switch's order. Both give exactly the host's result
// for the reproducible sums' slot buffers (one rank's value and zeros in every slot: any order is
// exact), which is what the engine reduces with them.

#define DL_PEER_BLOCK 128

/// The sum over the ranks of x, by peer loads. `table` holds the address of every rank's data part
/// (ranks of them) and then of every rank's signal part (ranks more), as this rank reaches them.
/// `status[0]` becomes 0, or 1 if some rank passed another `n` (then `out` is undefined; every
/// rank sees the mismatch, so every rank reports it). A rank whose vector does not fit passes
/// n = -1: it takes part in the signals, touches no data, and every other rank sees a mismatch.
template <typename R>
__device__ void peer_all_reduce(dl_index n, int rank, int ranks, unsigned long long epoch,
                                const unsigned long long* __restrict__ table,
                                const R* __restrict__ x, R* __restrict__ out,
                                long long* __restrict__ status) {
    R* mine = reinterpret_cast<R*>(table[rank]);
    const unsigned long long* my_signals = reinterpret_cast<const unsigned long long*>(table[ranks + rank]);
    // A ready signal is the epoch in the high 32 bits and the sender's n in the low ones (n = -1,
    // a rank that cannot take part, announces 0xffffffff, which no valid n is).
    const unsigned long long ready = (epoch << 32) | ((unsigned long long)n & 0xffffffffull);
    if (threadIdx.x == 0)
        for (int q = 0; q < ranks; ++q)
            while (dl_signal_load(my_signals + ranks + q) < epoch - 1) dl_backoff();
    __syncthreads();
    for (dl_index i = threadIdx.x; i < n; i += blockDim.x) mine[i] = x[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system();
        for (int q = 0; q < ranks; ++q)
            dl_signal_store(reinterpret_cast<unsigned long long*>(table[ranks + q]) + rank, ready);
        long long mismatch = 0;
        for (int q = 0; q < ranks; ++q) {
            unsigned long long seen;
            while (((seen = dl_signal_load(my_signals + q)) >> 32) < epoch) dl_backoff();
            mismatch |= seen != ready;
        }
        status[0] = mismatch;
    }
    __syncthreads();
    for (dl_index i = threadIdx.x; i < n; i += blockDim.x) {
        R acc = reinterpret_cast<const R*>(table[0])[i];
        for (int q = 1; q < ranks; ++q) acc = acc + reinterpret_cast<const R*>(table[q])[i];
        out[i] = acc;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int q = 0; q < ranks; ++q)
            dl_signal_store(reinterpret_cast<unsigned long long*>(table[ranks + q]) + ranks + rank,
                            epoch);
}

/// The sum over the ranks of x, by multicast (sm_90). `table` holds this rank's data part, its
/// signal part, and their multicast addresses. The signal part's words 2 and 3 hold n and n^2,
/// whose sums over the ranks (by multimem) equal P n and P n^2 exactly when every rank passed the
/// same n; `status` as for the peer path.
template <typename R>
__device__ void multicast_all_reduce(dl_index n, int ranks, unsigned long long epoch,
                                     const unsigned long long* __restrict__ table,
                                     const R* __restrict__ x, R* __restrict__ out,
                                     long long* __restrict__ status) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    // No multimem before sm_90: the engine never chooses this path there (peer.rs).
    __trap();
#else
    R* mine = reinterpret_cast<R*>(table[0]);
    const unsigned long long* signals = reinterpret_cast<const unsigned long long*>(table[1]);
    const R* mc = reinterpret_cast<const R*>(table[2]);
    unsigned long long* mc_signals = reinterpret_cast<unsigned long long*>(table[3]);
    const unsigned long long p = (unsigned long long)ranks;
    const unsigned long long len = (unsigned long long)n;
    unsigned long long* my_signals = const_cast<unsigned long long*>(signals);
    if (threadIdx.x == 0) {
        while (dl_signal_load(signals + 1) < p * (epoch - 1)) dl_backoff();
        my_signals[2] = len;
        my_signals[3] = len * len;
    }
    __syncthreads();
    for (dl_index i = threadIdx.x; i < n; i += blockDim.x) mine[i] = x[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system();
        dl_multimem_signal_add(mc_signals, 1);
        while (dl_signal_load(signals) < p * epoch) dl_backoff();
        const unsigned long long sum = dl_multimem_ld_reduce_add(mc_signals + 2);
        const unsigned long long squares = dl_multimem_ld_reduce_add(mc_signals + 3);
        status[0] = sum != p * len || squares != p * len * len;
    }
    __syncthreads();
    for (dl_index i = threadIdx.x; i < n; i += blockDim.x) out[i] = dl_multimem_ld_reduce_add(mc + i);
    __syncthreads();
    if (threadIdx.x == 0) dl_multimem_signal_add(mc_signals + 1, 1);
#endif
}

#define DL_PEER_KERNELS(S, R)                                                                      \
    extern "C" __global__ void __launch_bounds__(DL_PEER_BLOCK)                                   \
        peer_all_reduce_##S(dl_index n, int rank, int ranks, unsigned long long epoch,            \
                            const unsigned long long* table, const R* x, R* out,                  \
                            long long* status) {                                                  \
        peer_all_reduce<R>(n, rank, ranks, epoch, table, x, out, status);                         \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(DL_PEER_BLOCK)                                   \
        multicast_all_reduce_##S(dl_index n, int ranks, unsigned long long epoch,                 \
                                 const unsigned long long* table, const R* x, R* out,             \
                                 long long* status) {                                             \
        multicast_all_reduce<R>(n, ranks, epoch, table, x, out, status);                          \
    }
DL_PEER_KERNELS(f32, float)
DL_PEER_KERNELS(f64, double)
