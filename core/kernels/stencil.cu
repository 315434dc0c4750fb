// stencil.cu: sums of 1-D stencils along axes of a block, with ghost slabs along the distributed
// axis (distlops_core::Stencils, the finite-difference operators). One thread per output real
// (grid-stride), on the real view of the arrays (complex values are their two reals).
//
// `table` is the plan's packed description (StencilPlan::table, layout in
// core/src/engine/stencils/table.rs). One launch computes the elements of one output whose index
// along the distributed axis is in part_start..part_start + part_len, over one run of terms
// t0..t1 (in the plan's order) that all read the input `x`; an output whose terms read several
// inputs takes one launch per run, in order, the first starting from zero (`first`), the next
// ones from the value the previous left in `y`.
//
// Per element, as the host does (see core/src/engine/stencils/mod.rs): the sources of the run's
// terms in order, each the element of `x` (or of the ghost buffer) at the element's global index
// with the term's axis moved to the entry's column; sources at the same address merged into the
// first one's place, the coefficients converted to the real type and added in order. Then from
// acc = y (or +0 when `first`): acc = acc + c * x (two roundings) when the element is in a
// boundary row of a scalar line, else acc = fma(x, c, acc) (one rounding; NVRTC runs with
// --fmad=false, so only the explicit fma fuses).

#define DL_STENCIL_HEAD 13
#define DL_STENCIL_MAX_NDIM 32
#define DL_STENCIL_MAX_SOURCES 64

/// The merged sources of one element: where each is (buffer -1: the input, k >= 0: ghost piece
/// k; offset in reals), its value and its coefficient.
template <typename R> struct dl_stencil_sources {
    dl_index buf[DL_STENCIL_MAX_SOURCES];
    dl_index off[DL_STENCIL_MAX_SOURCES];
    R value[DL_STENCIL_MAX_SOURCES];
    R coef[DL_STENCIL_MAX_SOURCES];
    int n;

    /// Adds the source at (buf, off) with coefficient c, merging with one already listed.
    __device__ void add(dl_index b, dl_index o, R v, R c) {
        for (int s = 0; s < n; ++s) {
            if (buf[s] == b && off[s] == o) {
                coef[s] = coef[s] + c;
                return;
            }
        }
        buf[n] = b;
        off[n] = o;
        value[n] = v;
        coef[n] = c;
        ++n;
    }
};

/// Whether row g of the band at `band` (n, lo, hi, ...) is interior.
__device__ __forceinline__ bool dl_stencil_interior(const double* band, dl_index g) {
    return g >= (dl_index)band[1] && g < (dl_index)band[2];
}

template <typename R>
__device__ void stencil(dl_index n, dl_index part_start, dl_index part_len,
                        const double* __restrict__ table, dl_index out, dl_index t0, dl_index t1,
                        int first, const R* __restrict__ x, const R* __restrict__ ghosts,
                        R* __restrict__ y) {
    const dl_index la = (dl_index)table[0];
    const dl_index axis = (dl_index)table[1];
    const dl_index offset = (dl_index)table[2];
    const dl_index n_local = (dl_index)table[3];
    const dl_index inner = (dl_index)table[4];
    const bool row_scalar = table[5] != 0.0;
    const dl_index post = (dl_index)table[7];
    const dl_index npieces = (dl_index)table[8];
    const double* pieces = table + (dl_index)table[9];
    const double* outputs = table + (dl_index)table[11];
    const double* terms = table + (dl_index)table[12];
    const double* shape = table + DL_STENCIL_HEAD;
    const double* strides = shape + la + 1;
    const dl_index piece_len = 4 + la + 1;
    for (dl_index i = dl_global_thread(); i < n; i += dl_grid_threads()) {
        const dl_index q = i % post;
        const dl_index rest = i / post;
        const dl_index e = ((rest / part_len) * n_local + part_start + rest % part_len) * post + q;
        // The element's local index along axes 0..=la, its global one, its real inside a row.
        dl_index idx[DL_STENCIL_MAX_NDIM];
        dl_index glob[DL_STENCIL_MAX_NDIM];
        for (dl_index a = 0; a <= la; ++a) {
            idx[a] = (e / (dl_index)strides[a]) % (dl_index)shape[a];
            glob[a] = idx[a] + (a == axis ? offset : 0);
        }
        const dl_index k_in = e % inner;
        dl_stencil_sources<R> src;
        src.n = 0;
        for (dl_index t = t0; t < t1; ++t) {
            const dl_index inp = (dl_index)terms[3 * t];
            const dl_index b = (dl_index)terms[3 * t + 1];
            const double* band = table + (dl_index)terms[3 * t + 2];
            const dl_index g = glob[b];
            const dl_index nb = (dl_index)band[0], lo = (dl_index)band[1], hi = (dl_index)band[2];
            const dl_index ntaps = (dl_index)band[3];
            const double* taps = band + 4;
            const double* rows = taps + 2 * ntaps;
            const double* entries = rows + 2 * (lo + nb - hi);
            const bool interior = g >= lo && g < hi;
            dl_index count = ntaps;
            const double* list = taps;
            if (!interior) {
                const dl_index row = g < lo ? g : lo + (g - hi);
                list = entries + 2 * (dl_index)rows[2 * row];
                count = (dl_index)rows[2 * row + 1];
            }
            for (dl_index k = 0; k < count; ++k) {
                const dl_index col = interior ? g + (dl_index)list[2 * k] : (dl_index)list[2 * k];
                const R c = (R)list[2 * k + 1];
                if (b == axis && (col < offset || col >= offset + n_local)) {
                    // A ghost row: the piece of this input that holds it.
                    for (dl_index p = 0; p < npieces; ++p) {
                        const double* pc = pieces + p * piece_len;
                        const dl_index start = (dl_index)pc[1];
                        if ((dl_index)pc[0] != inp || col < start || col >= start + (dl_index)pc[2]) {
                            continue;
                        }
                        const double* ps = pc + 4;
                        dl_index at = (dl_index)pc[3] + (col - start) * (dl_index)ps[b] + k_in;
                        for (dl_index a = 0; a <= la; ++a) {
                            if (a != b) at += idx[a] * (dl_index)ps[a];
                        }
                        src.add(p, at, ghosts[at], c);
                        break;
                    }
                } else {
                    const dl_index at = e + (col - g) * (dl_index)strides[b];
                    src.add(-1, at, x[at], c);
                }
            }
        }
        // Boundary rows of scalar lines are summed directly.
        bool direct = false;
        if (row_scalar) {
            const dl_index f = (dl_index)outputs[2 * out], m = (dl_index)outputs[2 * out + 1];
            for (dl_index t = f; t < f + m; ++t) {
                if ((dl_index)terms[3 * t + 1] == la &&
                    !dl_stencil_interior(table + (dl_index)terms[3 * t + 2], glob[la])) {
                    direct = true;
                }
            }
        }
        R acc = first ? R(0) : y[e];
        for (int s = 0; s < src.n; ++s) {
            acc = direct ? acc + src.coef[s] * src.value[s] : dl_fma(src.value[s], src.coef[s], acc);
        }
        y[e] = acc;
    }
}

#define DL_STENCIL(S, R)                                                                          \
    extern "C" __global__ void stencil_##S(dl_index n, dl_index part_start, dl_index part_len,    \
                                           const double* table, dl_index out, dl_index t0,        \
                                           dl_index t1, int first, const R* x, const R* ghosts,   \
                                           R* y) {                                                \
        stencil<R>(n, part_start, part_len, table, out, t0, t1, first, x, ghosts, y);             \
    }
DL_STENCIL(f32, float)
DL_STENCIL(f64, double)
