"""distlops' FFT2D / FFTND / MDC against PyLops-MPI's `MPIFFT2D`, `MPIFFTND` (mpi4py-fft) and
`MPIMDC` (and serial PyLops' `FFT2D`, `FFTND`, `MDC`), forward and adjoint, on the same inputs.

    python fft.py make DIR                  # inputs (.npy), serial PyLops' results, cases.txt
    mpirun -n N python fft.py reference DIR # PyLops-MPI's results into DIR/ref-npN
    python fft.py compare DIR NP...         # the table of differences

distlops' side is `examples/fft_parity.rs`, which reads the same DIR and writes DIR/rs-npN;
`run-fft.sh` runs everything. Every case has a model `x` (the forward's input) and a data `y`
(the adjoint's input, drawn independently of `x`, so that a real transform's adjoint also sees a
half spectrum that is not the spectrum of a real array); both sides write `fwd = A x` and
`adj = A^H y`, gathered to the global arrays. Complex arrays are stored as real arrays with a last
axis of 2 (re, im); the spectra of real-dtype FFTs are complex (the `(re, im)` pairs of distlops'
`f64` range), their adjoints real.

The error of a case is `max |a - b| / max |b|` (the largest entry error relative to the largest
entry of the reference), per output; a case passes when the forward and the adjoint are within
PARITY_TOL (default 1e-12) of PyLops-MPI's at every rank count.

Cases are lines `name key=value ...` in cases.txt; keys: kind (fft2d, fftnd, mdc), dtype (f64,
c128: PyLops-MPI's dtype, distlops' element type); FFTs: dims, axes, norm (none, 1/n), real,
ifftshift, fftshift (0/1 per axis, or one for all); MDC: nt, ns, nr, nv, nf, dt, dr, twosided,
conj, prescaled, savegt.
"""

import os
import warnings

import numpy as np

from common import from_real, main, parse, read_cases, rel_max, to_real

SEED = 20251126

CASES = [
    # MPIFFT2D, complex input: odd and even sizes, both norms, swapped axes (the last transformed
    # axis is the distributed one), shifts, a 3-D array with a non-transformed axis.
    ("fft2d_30x21", "kind=fft2d dtype=c128 dims=30,21 axes=0,1 norm=none"),
    ("fft2d_64x48_1n", "kind=fft2d dtype=c128 dims=64,48 axes=0,1 norm=1/n"),
    ("fft2d_30x21_10", "kind=fft2d dtype=c128 dims=30,21 axes=1,0 norm=none ifftshift=1 fftshift=1"),
    ("fft2d_64x48_sh", "kind=fft2d dtype=c128 dims=64,48 axes=0,1 norm=1/n ifftshift=1,0 fftshift=0,1"),
    ("fft2d_3d_20", "kind=fft2d dtype=c128 dims=9,14,11 axes=2,0 norm=none ifftshift=1 fftshift=1"),
    # MPIFFTND, complex input over all three axes, in both orders.
    ("fftnd_c", "kind=fftnd dtype=c128 dims=12,11,10 axes=0,1,2 norm=none"),
    ("fftnd_c_sh", "kind=fftnd dtype=c128 dims=13,10,7 axes=0,1,2 norm=1/n ifftshift=1 fftshift=1"),
    ("fftnd_c_210_sh", "kind=fftnd dtype=c128 dims=9,8,11 axes=2,1,0 norm=none ifftshift=1,0,1 fftshift=0,1,1"),
    # MPIFFTND, real input (real=True: half spectrum along the last axis of `axes`, sqrt(2)),
    # with shifts; odd and even real axes (with and without a Nyquist bin); the real axis the
    # distributed one; PyLops-MPI's real dtype (distlops' f64: (re, im) pairs) and complex dtype
    # (distlops' Complex64 with `real`).
    ("fftnd_r", "kind=fftnd dtype=f64 dims=12,11,10 axes=0,1,2 norm=none real=1"),
    ("fftnd_r_sh", "kind=fftnd dtype=f64 dims=13,10,9 axes=0,1,2 norm=none real=1 ifftshift=1 fftshift=1,1,0"),
    ("fftnd_r_sh_1n", "kind=fftnd dtype=f64 dims=12,11,10 axes=0,1,2 norm=1/n real=1 ifftshift=1,0,1 fftshift=0,1,0"),
    ("fftnd_r_shall", "kind=fftnd dtype=f64 dims=11,9,12 axes=0,1,2 norm=none real=1 ifftshift=1 fftshift=1"),
    ("fftnd_r_210_sh", "kind=fftnd dtype=f64 dims=10,7,9 axes=2,1,0 norm=none real=1 ifftshift=1 fftshift=1,1,0"),
    ("fftnd_r_c128_sh", "kind=fftnd dtype=c128 dims=13,10,9 axes=0,1,2 norm=none real=1 ifftshift=1 fftshift=1,1,0"),
    ("fft2d_r_sh", "kind=fft2d dtype=f64 dims=30,21 axes=0,1 norm=1/n real=1 ifftshift=1 fftshift=1,0"),
    # Real dtype without `real`: the full spectrum of a real array, the real part back.
    ("fftnd_f64_full", "kind=fftnd dtype=f64 dims=9,10,11 axes=0,1,2 norm=none ifftshift=1 fftshift=1"),
    # MPIMDC: two-sided (odd nt) and one-sided, one and several virtual sources, dt and dr,
    # conj, prescaled, saveGt off; nf from 4 (2 per rank at 2 ranks) to nt / 2 + 1.
    ("mdc_2s_nv1", "kind=mdc dtype=f64 nt=21 ns=5 nr=4 nv=1 nf=8 dt=0.004 dr=10 twosided=1"),
    ("mdc_2s_nv3", "kind=mdc dtype=f64 nt=21 ns=5 nr=4 nv=3 nf=11 dt=0.004 dr=10 twosided=1"),
    ("mdc_1s_nv1", "kind=mdc dtype=f64 nt=20 ns=6 nr=7 nv=1 nf=11 dt=0.5 dr=2 twosided=0"),
    ("mdc_1s_nv2_conj", "kind=mdc dtype=f64 nt=20 ns=6 nr=7 nv=2 nf=9 dt=0.5 dr=2 twosided=0 conj=1"),
    ("mdc_2s_nv2_pre", "kind=mdc dtype=f64 nt=15 ns=4 nr=3 nv=2 nf=4 twosided=1 prescaled=1 savegt=0"),
]


def ints(p, key):
    return [int(v) for v in p[key].split(",")]


def flags(p, key, naxes):
    """A per-axis 0/1 list (one value for all axes allowed) as bools."""
    v = [bool(int(s)) for s in p.get(key, "0").split(",")]
    return v * naxes if len(v) == 1 else v


def flag(p, key, default):
    return bool(int(p.get(key, default)))


def dtype_of(p):
    return np.complex128 if p["dtype"] == "c128" else np.float64


def fft_kwargs(p):
    """The keyword arguments of PyLops(-MPI)'s FFT2D / FFTND of a case."""
    axes = ints(p, "axes")
    return dict(dims=tuple(ints(p, "dims")), axes=tuple(axes), norm=p["norm"],
                real=flag(p, "real", "0"), ifftshift_before=flags(p, "ifftshift", len(axes)),
                fftshift_after=flags(p, "fftshift", len(axes)),
                dtype="complex128" if p["dtype"] == "c128" else "float64")


def mdc_kwargs(p):
    """The keyword arguments of PyLops(-MPI)'s MDC of a case (without G)."""
    return dict(nt=int(p["nt"]), nv=int(p["nv"]), dt=float(p.get("dt", 1.0)),
                dr=float(p.get("dr", 1.0)), twosided=flag(p, "twosided", "1"),
                conj=flag(p, "conj", "0"), prescaled=flag(p, "prescaled", "0"))


def fft_shapes(p):
    """The model's and the data's (complex) shapes of an FFT case."""
    kw = fft_kwargs(p)
    dims, axes = list(kw["dims"]), kw["axes"]
    dimsd = list(dims)
    if kw["real"]:
        dimsd[axes[-1]] = dims[axes[-1]] // 2 + 1
    return dims, dimsd


def balanced(n, size, rank):
    """PyLops-MPI's `local_split` (and distlops' balanced split) of n items: (start, count)."""
    q, r = divmod(n, size)
    return rank * q + min(rank, r), q + (1 if rank < r else 0)


def serial_operator(p, G):
    """Serial PyLops' counterpart of a case (the whole kernel G for MDC)."""
    import pylops

    if p["kind"] == "mdc":
        kw = mdc_kwargs(p)
        return pylops.waveeqprocessing.MDC(G, saveGt=flag(p, "savegt", "1"), **kw)
    cls = pylops.signalprocessing.FFT2D if p["kind"] == "fft2d" else pylops.signalprocessing.FFTND
    return cls(**fft_kwargs(p))


def finish(p, fwd, adj, dims, dimsd):
    """Both outputs in the stored form: shapes restored, real where the case's output is real."""
    fwd = np.asarray(fwd).reshape(dimsd)
    adj = np.asarray(adj).reshape(dims)
    if p["kind"] == "mdc":
        fwd = fwd.real
    # Real-dtype (and MDC) adjoints are real; complex-dtype ones complex, even with real=True
    # (serial PyLops then returns a real array, PyLops-MPI and distlops a zero imaginary part).
    adj = adj.real if p["kind"] == "mdc" or p["dtype"] == "f64" else adj.astype(np.complex128)
    return to_real(fwd), to_real(adj)


def make(folder):
    os.makedirs(f"{folder}/serial", exist_ok=True)
    rng = np.random.default_rng(SEED)

    def draw(shape, cplx):
        a = rng.standard_normal(shape)
        return a + 1j * rng.standard_normal(shape) if cplx else a

    with open(f"{folder}/cases.txt", "w") as f:
        for name, spec in CASES:
            f.write(f"{name} {spec}\n")
            _, p = parse(f"{name} {spec}")
            G = None
            if p["kind"] == "mdc":
                nt, ns, nr, nv, nf = (int(p[k]) for k in ("nt", "ns", "nr", "nv", "nf"))
                dims, dimsd = [nt, nr, nv], [nt, ns, nv]
                x, y = draw(dims, False), draw(dimsd, False)
                G = draw((nf, ns, nr), True)
                np.save(f"{folder}/{name}_G.npy", to_real(G))
            else:
                dims, dimsd = fft_shapes(p)
                # Complex dtype: a complex model even with real=True (whose imaginary part both
                # sides must ignore).
                x = draw(dims, p["dtype"] == "c128")
                y = draw(dimsd, True)
            np.save(f"{folder}/{name}_x.npy", to_real(x))
            np.save(f"{folder}/{name}_y.npy", to_real(y))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                op = serial_operator(p, G)
                fwd, adj = finish(p, op @ x.ravel(), op.H @ y.ravel(), dims, dimsd)
            np.save(f"{folder}/serial/{name}_fwd.npy", fwd)
            np.save(f"{folder}/serial/{name}_adj.npy", adj)


def reference(folder):
    from mpi4py import MPI

    import pylops_mpi

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    out = f"{folder}/ref-np{size}"
    if rank == 0:
        os.makedirs(out, exist_ok=True)
    comm.Barrier()
    warnings.simplefilter("ignore")
    for name, p in read_cases(folder):
        x = from_real(np.load(f"{folder}/{name}_x.npy"), p["dtype"])
        y = from_real(np.load(f"{folder}/{name}_y.npy"), "f64" if p["kind"] == "mdc" else "c128")
        if p["kind"] == "mdc":
            G = from_real(np.load(f"{folder}/{name}_G.npy"), "c128")
            start, count = balanced(G.shape[0], size, rank)
            op = pylops_mpi.waveeqprocessing.MPIMDC(
                G[start:start + count], nfreq=G.shape[0], saveGt=flag(p, "savegt", "1"),
                **mdc_kwargs(p))
            partition = pylops_mpi.Partition.BROADCAST
        else:
            cls = pylops_mpi.signalprocessing.MPIFFT2D if p["kind"] == "fft2d" else \
                pylops_mpi.signalprocessing.MPIFFTND
            op = cls(**fft_kwargs(p))
            partition = pylops_mpi.Partition.SCATTER

        def dist(a):
            """`a` raveled, as a DistributedArray of the operator's partition (Scatter: the
            default split of the flat vector, which the operator redistributes itself)."""
            flat = np.ascontiguousarray(a).ravel()
            d = pylops_mpi.DistributedArray(global_shape=flat.size, partition=partition,
                                            dtype=flat.dtype)
            sizes = [int(np.prod(s)) for s in d.local_shapes]
            off = sum(sizes[:rank]) if partition == pylops_mpi.Partition.SCATTER else 0
            d[:] = flat[off:off + sizes[rank]]
            return d

        fwd = (op @ dist(x)).asarray()
        adj = (op.H @ dist(y)).asarray()
        if rank == 0:
            fwd, adj = finish(p, fwd, adj, x.shape, y.shape)
            np.save(f"{out}/{name}_fwd.npy", fwd)
            np.save(f"{out}/{name}_adj.npy", adj)


def compare(folder, nps, tol):
    """Prints, per case and rank count, distlops against PyLops-MPI (forward, adjoint), against
    serial PyLops (the larger of the two), PyLops-MPI against serial PyLops, and distlops at N
    ranks against distlops at the first rank count ("same bits" when identical). Returns
    whether every case is within `tol` of PyLops-MPI."""
    ok = True
    worst = 0.0
    print(f"errors: max|a - b| / max|b|; a case passes when fwd and adj are within {tol:.0e}")
    print(f"{'case':<18}{'np':>3}  {'fwd vs MPI':>10} {'adj vs MPI':>10} {'vs serial':>10} "
          f"{'MPI vs ser':>10} {'np1 vs npN':>10}")
    for name, p in read_cases(folder):
        ser = [np.load(f"{folder}/serial/{name}_{w}.npy") for w in ("fwd", "adj")]
        first = [np.load(f"{folder}/rs-np{nps[0]}/{name}_{w}.npy") for w in ("fwd", "adj")]
        for np_ in nps:
            rs = [np.load(f"{folder}/rs-np{np_}/{name}_{w}.npy") for w in ("fwd", "adj")]
            ref = [np.load(f"{folder}/ref-np{np_}/{name}_{w}.npy") for w in ("fwd", "adj")]
            dfwd, dadj = (rel_max(a, b) for a, b in zip(rs, ref))
            dser = max(rel_max(a, b) for a, b in zip(rs, ser))
            dref = max(rel_max(a, b) for a, b in zip(ref, ser))
            same = all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(rs, first))
            d1 = "same bits" if same else f"{max(rel_max(a, b) for a, b in zip(rs, first)):10.1e}"
            good = dfwd <= tol and dadj <= tol
            ok = ok and good
            worst = max(worst, dfwd, dadj)
            print(f"{name:<18}{np_:>3}  {dfwd:10.2e} {dadj:10.2e} {dser:10.2e} {dref:10.2e} "
                  f"{d1:>10}{'' if good else '   <- MISSES'}")
    print(f"worst error against PyLops-MPI: {worst:.2e} ({'pass' if ok else 'FAIL'}, tolerance "
          f"{tol:.0e})")
    return ok


if __name__ == "__main__":
    tol = float(os.environ.get("PARITY_TOL", "1e-12"))
    main(make, reference, lambda folder, nps: 0.0 if compare(folder, nps, tol) else np.inf)
