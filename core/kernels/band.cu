// band.cu: a banded 1-D operator along one axis (distlops_core::AxisBand): finite-difference
// stencils, short convolutions and their adjoints. One thread per output element (grid-stride).
//
// The block is (outer, n_out, inner) for y and (outer, n_src, inner) for x. `table` is the band's
// packed description (AxisBand::table): [ntaps, shift, valid start, valid end, nrows, fused], then
// (offset, coefficient) per interior tap, (row, first entry, entry count) per explicit row
// (sorted by row), then (source row, coefficient) per entry. Indices are exact in a double.
// Sums run from zero in table order as acc = acc + x * c (two roundings: NVRTC runs with
// --fmad=false), or acc = fma(x, c, acc) for a fused band, then y = acc or y = y + acc, as the
// host engine does.

/// acc + x c: fused (one rounding per component) or not (two).
template <typename T, typename R> __device__ __forceinline__ T dl_band_term(bool fused, T acc, T x, R c) {
    return fused ? dl_fma_real(x, c, acc) : acc + dl_scale_real(x, c);
}

template <typename T>
__device__ T band_row(const double* __restrict__ table, dl_index row, const T* __restrict__ xs,
                      dl_index inner, dl_index k) {
    typedef typename dl_real_of<T>::type R;
    const dl_index ntaps = (dl_index)table[0];
    const dl_index nrows = (dl_index)table[4];
    const bool fused = table[5] != 0.0;
    const double* rows = table + 6 + 2 * ntaps;
    const double* entries = rows + 3 * nrows;
    T acc = dl_zero<T>();
    dl_index lo = 0, hi = nrows;
    while (lo < hi) {
        dl_index mid = (lo + hi) / 2;
        dl_index r = (dl_index)rows[3 * mid];
        if (r == row) {
            dl_index first = (dl_index)rows[3 * mid + 1];
            dl_index count = (dl_index)rows[3 * mid + 2];
            for (dl_index e = first; e < first + count; ++e) {
                dl_index col = (dl_index)entries[2 * e];
                acc = dl_band_term(fused, acc, xs[col * inner + k], (R)entries[2 * e + 1]);
            }
            return acc;
        }
        if (r < row) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    const dl_index shift = (dl_index)table[1], v0 = (dl_index)table[2], v1 = (dl_index)table[3];
    for (dl_index t = 0; t < ntaps; ++t) {
        dl_index j = row + shift + (dl_index)table[6 + 2 * t];
        if (j >= v0 && j < v1) acc = dl_band_term(fused, acc, xs[j * inner + k], (R)table[6 + 2 * t + 1]);
    }
    return acc;
}

/// y[o, i, k] (+)= the band's row i applied to x[o, :, k], for the n = outer * n_out * inner
/// outputs.
template <typename T>
__device__ void band(dl_index n, dl_index n_out, dl_index n_src, dl_index inner,
                     const double* __restrict__ table, int accumulate, const T* __restrict__ x,
                     T* __restrict__ y) {
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        dl_index k = i % inner;
        dl_index rest = i / inner;
        dl_index row = rest % n_out;
        dl_index o = rest / n_out;
        T acc = band_row<T>(table, row, x + o * n_src * inner, inner, k);
        y[i] = accumulate ? y[i] + acc : acc;
    }
}

#define DL_BAND(S, T)                                                                             \
    extern "C" __global__ void band_##S(dl_index n, dl_index n_out, dl_index n_src,               \
                                        dl_index inner, const double* table, int accumulate,      \
                                        const T* x, T* y) {                                       \
        band<T>(n, n_out, n_src, inner, table, accumulate, x, y);                                 \
    }
DL_FOR_EACH_SCALAR(DL_BAND)
