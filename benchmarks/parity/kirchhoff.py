"""distlops' Kirchhoff (`Kirchhoff::distributed`, sources split over the ranks) against serial
PyLops' `waveeqprocessing.Kirchhoff(z, x, t, srcs, recs, vel, wav, wavcenter, mode="analytic")`
with its numpy and numba engines, forward (demigration) and adjoint (migration).

    python kirchhoff.py make DIR                  # inputs (.npy), serial PyLops, cases.txt
    mpirun -n N python kirchhoff.py reference DIR # nothing to do (PyLops-MPI has no Kirchhoff)
    python kirchhoff.py compare DIR NP...         # the table of differences

distlops' side is `examples/parity_kirchhoff.rs`, which reads the same DIR and writes
DIR/rs-npN; `run-kirchhoff.sh` runs everything. The 2-D case is PyLops-MPI's Kirchhoff
benchmark geometry scaled down (41 x 30 points every 8 m, v = 1000 m/s, 11 receivers at z = 20,
8 sources at z = 10, nt = 301, dt = 4 ms, a 41-sample Ricker wavelet of 20 Hz); the 3-D case a
small volume (5 x 9 x 8 points every 10 m, 4 sources and 6 receivers). Both sides write the
data of all sources in source order (`fwd`, flat `ns nr nt`) and the migrated image (`adj`,
flat) of a random image `x` and random data `y`. The `_dyn` cases are PyLops' `dynamic=True`
(analytic amplitudes, angles from the travel-time gradient, an angle aperture; in 3-D with
PyLops' receiver-angle sign corrected, see `fix_3d_receiver_angles`), the `_wavfilter` cases
its `wavfilter=True` (distlops: `filtered_wavelet`). Errors are
`max |a - b| / max |b|` against each engine; a case passes within PARITY_TOL (default 1e-10) of
both.
"""

import os
import warnings

import numpy as np

from common import main, parse, read_cases, rel_max

SEED = 20261202
ENGINES = ("numpy", "numba")
CASES = [
    ("kirchhoff_2d", "dtype=f64 vel=1000 nt=301 dt=0.004"),
    ("kirchhoff_3d", "dtype=f64 vel=1500 nt=101 dt=0.004"),
    # dynamic=True: amplitudes, angles, the angle aperture (alo, ahi) in degrees.
    ("kirchhoff_2d_dyn", "dtype=f64 vel=1000 nt=301 dt=0.004 dynamic=1 alo=20 ahi=50"),
    ("kirchhoff_3d_dyn", "dtype=f64 vel=1500 nt=101 dt=0.004 dynamic=1 alo=72 ahi=90"),
    # wavfilter=True: the wavelet reshaped for the omega factor (half derivative in 2-D,
    # derivative in 3-D), distlops' filtered_wavelet.
    ("kirchhoff_2d_wavfilter", "dtype=f64 vel=1000 nt=301 dt=0.004 wavfilter=1"),
    ("kirchhoff_3d_wavfilter", "dtype=f64 vel=1500 nt=101 dt=0.004 wavfilter=1"),
]


def fix_3d_receiver_angles(op, gy, gx, gz, nr):
    """PyLops' 3-D dynamic receiver angles take the sign of the *sources'* x gradient
    (`np.sign(trav_srcs_grad[1])`); distlops uses each side's own. The reference is PyLops with
    that one line corrected: the receivers' angles recomputed from their own gradient, with
    PyLops' expressions."""
    dsamp = (gy[1] - gy[0], gx[1] - gx[0], gz[1] - gz[0])
    dims = (len(gy), len(gx), len(gz))
    g = np.array(np.gradient(op.trav_recs.reshape(*dims, nr), *dsamp, axis=(0, 1, 2)))
    op.angle_recs = (np.sign(g[1]) * np.arccos(g[-1] / np.sqrt(np.sum(g**2, axis=0)))
                     ).reshape(np.prod(dims), nr)


def geometry(name):
    """The grid axes ((y,) x, z), sources and receivers (rows (y,) x, z) of a case."""
    if name.startswith("kirchhoff_2d"):
        gx, gz = np.arange(41) * 8.0, np.arange(30) * 8.0
        srcs = np.stack([np.linspace(40.0, 280.0, 8), np.full(8, 10.0)], axis=1)
        recs = np.stack([np.linspace(40.0, 280.0, 11), np.full(11, 20.0)], axis=1)
        return None, gx, gz, srcs, recs
    gy, gx, gz = np.arange(5) * 10.0, np.arange(9) * 10.0, np.arange(8) * 10.0
    srcs = np.array([[10.0, 20.0, 5.0], [10.0, 60.0, 5.0], [30.0, 20.0, 5.0], [30.0, 60.0, 5.0]])
    recs = np.array([[y, x, 0.0] for y in (0.0, 40.0) for x in (0.0, 40.0, 80.0)])
    return gy, gx, gz, srcs, recs


def make(folder):
    import pylops
    from pylops.utils.wavelets import ricker

    os.makedirs(f"{folder}/serial", exist_ok=True)
    rng = np.random.default_rng(SEED)
    warnings.simplefilter("ignore", FutureWarning)
    with open(f"{folder}/cases.txt", "w") as f:
        for name, spec in CASES:
            _, p = parse(f"{name} {spec}")
            nt, dt, vel = int(p["nt"]), float(p["dt"]), float(p["vel"])
            t = np.arange(nt) * dt
            wav, _, wavc = ricker(t[:21], 20)
            f.write(f"{name} {spec} wavcenter={wavc}\n")
            gy, gx, gz, srcs, recs = geometry(name)
            dims = (len(gx), len(gz)) if gy is None else (len(gy), len(gx), len(gz))
            x = rng.standard_normal(dims)
            y = rng.standard_normal((len(srcs), len(recs), nt))
            arrays = dict(gx=gx, gz=gz, srcs=srcs, recs=recs, wav=wav, x=x, y=y)
            if gy is not None:
                arrays["gy"] = gy
            for what, a in arrays.items():
                np.save(f"{folder}/{name}_{what}.npy", a)
            for engine in ENGINES:
                dyn = {}
                if p.get("dynamic") == "1":
                    dyn = dict(dynamic=True, angleaperture=(float(p["alo"]), float(p["ahi"])))
                if p.get("wavfilter") == "1":
                    dyn["wavfilter"] = True
                op = pylops.waveeqprocessing.Kirchhoff(
                    gz, gx, t, srcs.T, recs.T, vel, wav, wavc, y=gy, mode="analytic",
                    engine=engine, **dyn)
                if dyn.get("dynamic") and gy is not None:
                    fix_3d_receiver_angles(op, gy, gx, gz, len(recs))
                np.save(f"{folder}/serial/{name}_{engine}_fwd.npy", (op @ x.ravel()).ravel())
                np.save(f"{folder}/serial/{name}_{engine}_adj.npy", (op.H @ y.ravel()).ravel())


def reference(folder):
    """PyLops-MPI has no Kirchhoff operator of its own: the references are serial PyLops'."""


def compare(folder, nps):
    """Prints, per case and rank count, distlops against serial PyLops' numpy and numba engines
    (forward, adjoint) and distlops at N ranks against the first rank count; returns the worst
    error."""
    tol = float(os.environ.get("PARITY_TOL", "1e-10"))
    worst = 0.0
    print(f"errors: max|a - b| / max|b|; a case passes within {tol:.0e}")
    print(f"{'case':<14}{'np':>3}  {'fwd numpy':>10} {'adj numpy':>10} {'fwd numba':>10} "
          f"{'adj numba':>10} {'np1 vs npN':>10}")
    for name, _ in read_cases(folder):
        first = [np.load(f"{folder}/rs-np{nps[0]}/{name}_{w}.npy") for w in ("fwd", "adj")]
        for np_ in nps:
            rs = [np.load(f"{folder}/rs-np{np_}/{name}_{w}.npy").ravel() for w in ("fwd", "adj")]
            errs = [rel_max(rs[k], np.load(f"{folder}/serial/{name}_{e}_{w}.npy"))
                    for e in ENGINES for k, w in enumerate(("fwd", "adj"))]
            same = all(np.array_equal(a.ravel(), b.ravel()) for a, b in zip(rs, first))
            worst = max(worst, *errs)
            print(f"{name:<14}{np_:>3}  " + " ".join(f"{e:10.2e}" for e in errs) +
                  f" {'same bits' if same else 'differ':>10}"
                  f"{'   <- MISSES' if max(errs) > tol else ''}")
    print(f"worst error: {worst:.2e} ({'pass' if worst <= tol else 'FAIL'}, tolerance {tol:.0e})")
    return worst


if __name__ == "__main__":
    main(make, reference, compare)
