// kirchhoff.cu: sums along travel-time curves (distlops_core::Demigration), the kinematic part
// of Kirchhoff demigration and migration. `src` is the ns x ni source travel-time table, `rec` the
// nr x ni receiver table (seconds, one row per source or receiver), `x` the ni model values, `y`
// the (ns, nr, nt) data. A time t = src[s, i] + rec[r, i] lands at q = t / dt: sample
// it = trunc(q) and fraction f = q - it when 0 <= q < nt - 1 (in double), weights (1 - f) and f
// rounded to the real type. Products then sums, each rounded (NVRTC runs with --fmad=false), in
// the order of the host engine:
//   kirchhoff_fwd: one thread per trace (s, r): the trace zeroed, then the points i in order;
//   kirchhoff_adj: one thread per point i: the traces (s, r) in order, s outer.
// No two threads write one value, so there are no atomics and the bits do not depend on the
// launch.
//
// kirchhoff_dyn_fwd/adj add the dynamic weights (distlops_core::DemigrationWeights): the point
// (s, r, i) has w = (ps[s, i] pr[r, i] + qs[s, i] qr[r, i]) o in double, o the offset
// aperture's factor (1 when nz = 0: no aperture), and the weights (1 - f) w and f w are rounded
// to the real type.

/// Where time t lands in a trace of nt samples dt apart (false: outside, or NaN).
__device__ __forceinline__ bool dl_kirch_sample(double t, double dt, dl_index nt, dl_index* it,
                                                double* f) {
    const double q = t / dt;
    if (!(q >= 0.0 && q < (double)(nt - 1))) return false;
    *it = (dl_index)q;
    *f = q - (double)*it;
    return true;
}

/// No dynamic weights: w = 1, the weights (1 - f) and f.
struct DlKirchUnit {
    __device__ __forceinline__ double at(dl_index, dl_index, dl_index) const { return 1.0; }
};

/// The dynamic weights of distlops_core::DemigrationWeights (nz = 0: no offset aperture).
struct DlKirchWeights {
    dl_index ni, nr, nz;
    double amin, amax;
    const double *ps, *qs, *pr, *qr, *off, *taper;
    __device__ __forceinline__ double at(dl_index s, dl_index r, dl_index i) const {
        const double v = ps[s * ni + i] * pr[r * ni + i] + qs[s * ni + i] * qr[r * ni + i];
        if (nz == 0) return v;
        const double a = off[s * nr + r] / (double)(i % nz + 1);
        if (!(a < amax)) return v * 0.0;
        if (a < amin) return v * 1.0;
        dl_index k = (dl_index)(20.0 * (a - amin) / (amax - amin));
        return v * taper[k < 20 ? k : 20];
    }
};

/// y[s, r, :] = the model spread along the trace's travel-time curve, for every trace.
template <typename T, typename W>
__device__ void kirchhoff_fwd(dl_index ns, dl_index nr, dl_index ni, dl_index nt, double dt,
                              const double* __restrict__ src, const double* __restrict__ rec,
                              const W& w, const T* __restrict__ x, T* __restrict__ y) {
    typedef typename dl_real_of<T>::type R;
    for (dl_index tr = dl_global_thread(); tr < ns * nr; tr += dl_grid_threads()) {
        const dl_index s = tr / nr, r = tr % nr;
        const double* ts = src + s * ni;
        const double* tq = rec + r * ni;
        T* trace = y + tr * nt;
        for (dl_index k = 0; k < nt; ++k) trace[k] = dl_zero<T>();
        for (dl_index i = 0; i < ni; ++i) {
            dl_index it;
            double f;
            if (dl_kirch_sample(ts[i] + tq[i], dt, nt, &it, &f)) {
                const double wi = w.at(s, r, i);
                trace[it] = trace[it] + dl_scale_real(x[i], (R)((1.0 - f) * wi));
                trace[it + 1] = trace[it + 1] + dl_scale_real(x[i], (R)(f * wi));
            }
        }
    }
}

/// x[i] = the data summed along point i's travel-time curves, for every point.
template <typename T, typename W>
__device__ void kirchhoff_adj(dl_index ns, dl_index nr, dl_index ni, dl_index nt, double dt,
                              const double* __restrict__ src, const double* __restrict__ rec,
                              const W& w, const T* __restrict__ y, T* __restrict__ x) {
    typedef typename dl_real_of<T>::type R;
    for (dl_index i = dl_global_thread(); i < ni; i += dl_grid_threads()) {
        T acc = dl_zero<T>();
        for (dl_index s = 0; s < ns; ++s) {
            for (dl_index r = 0; r < nr; ++r) {
                dl_index it;
                double f;
                if (dl_kirch_sample(src[s * ni + i] + rec[r * ni + i], dt, nt, &it, &f)) {
                    const double wi = w.at(s, r, i);
                    const T* trace = y + (s * nr + r) * nt;
                    acc = acc + (dl_scale_real(trace[it], (R)((1.0 - f) * wi)) +
                                 dl_scale_real(trace[it + 1], (R)(f * wi)));
                }
            }
        }
        x[i] = acc;
    }
}

#define DL_KIRCH_DYN_PARAMS                                                                       \
    const double *ps, const double *qs, const double *pr, const double *qr, dl_index nz,        \
        double amin, double amax, const double *off, const double *taper
#define DL_KIRCH_DYN_WEIGHTS DlKirchWeights{ni, nr, nz, amin, amax, ps, qs, pr, qr, off, taper}

#define DL_KIRCHHOFF(S, T)                                                                        \
    extern "C" __global__ void kirchhoff_fwd_##S(dl_index ns, dl_index nr, dl_index ni,           \
                                                 dl_index nt, double dt, const double* src,       \
                                                 const double* rec, const T* x, T* y) {           \
        kirchhoff_fwd<T>(ns, nr, ni, nt, dt, src, rec, DlKirchUnit{}, x, y);                      \
    }                                                                                             \
    extern "C" __global__ void kirchhoff_adj_##S(dl_index ns, dl_index nr, dl_index ni,           \
                                                 dl_index nt, double dt, const double* src,       \
                                                 const double* rec, const T* y, T* x) {           \
        kirchhoff_adj<T>(ns, nr, ni, nt, dt, src, rec, DlKirchUnit{}, y, x);                      \
    }                                                                                             \
    extern "C" __global__ void kirchhoff_dyn_fwd_##S(                                             \
        dl_index ns, dl_index nr, dl_index ni, dl_index nt, double dt, const double* src,         \
        const double* rec, DL_KIRCH_DYN_PARAMS, const T* x, T* y) {                               \
        kirchhoff_fwd<T>(ns, nr, ni, nt, dt, src, rec, DL_KIRCH_DYN_WEIGHTS, x, y);               \
    }                                                                                             \
    extern "C" __global__ void kirchhoff_dyn_adj_##S(                                             \
        dl_index ns, dl_index nr, dl_index ni, dl_index nt, double dt, const double* src,         \
        const double* rec, DL_KIRCH_DYN_PARAMS, const T* y, T* x) {                               \
        kirchhoff_adj<T>(ns, nr, ni, nt, dt, src, rec, DL_KIRCH_DYN_WEIGHTS, y, x);               \
    }
DL_FOR_EACH_SCALAR(DL_KIRCHHOFF)
