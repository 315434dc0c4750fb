"""distlops' Sliding1D, Sliding2D and Patch2D against serial PyLops' `signalprocessing.Sliding1D`,
`Sliding2D` and `Patch2D` (the ground truth; PyLops-MPI has no windowed operators), forward and
adjoint, with a dense `MatrixMult` per window, on the same inputs.

    python sliding.py make DIR                  # inputs (.npy), serial PyLops, cases.txt
    mpirun -n N python sliding.py reference DIR # nothing to do (PyLops-MPI has none)
    python sliding.py compare DIR NP...         # the table of differences

distlops' side is `examples/parity_sliding.rs`, which reads the same DIR and writes DIR/rs-npN;
`run-sliding.sh` runs everything. Every case has a random window matrix `A` (window samples x
`nop`), a model `x` of shape (nwins, nop) (patches: (nwins0, nwins1, nop)) and an independent
data `y` of shape `dimsd`; the tapers are PyLops' hanning, cosine, cosinesquare, cosinesqrt and
none, with overlaps below, at and above half a window. Every case has at least two windows along
each windowed axis (PyLops tapers a lone window at one end, distlops at neither). Errors are
`max |a - b| / max |b|`; a case passes within PARITY_TOL (default 1e-10); the table also says
whether distlops gives the same bits at every rank count.
"""

import os

import numpy as np

from common import main, read_cases, rel_max

SEED = 20261203
CASES = [
    ("sl1d_hanning", "kind=1 dimsd=205 nwin=23 nover=10 nop=17 taper=hanning"),
    ("sl1d_cosine", "kind=1 dimsd=205 nwin=23 nover=10 nop=30 taper=cosine"),
    ("sl1d_none", "kind=1 dimsd=100 nwin=16 nover=12 nop=16 taper=none"),
    ("sl1d_sqrt", "kind=1 dimsd=101 nwin=21 nover=5 nop=21 taper=cosinesqrt"),
    ("sl2d_hanning", "kind=2 dimsd=62,37 nwin=13 nover=6 nop=200 taper=hanning"),
    ("patch_hanning", "kind=p dimsd=41,54 nwin=11,14 nover=5,6 nop=100 taper=hanning"),
    ("patch_cossq", "kind=p dimsd=43,54 nwin=11,14 nover=3,6 nop=160 taper=cosinesquare"),
]


def ints(p, key):
    return [int(v) for v in p[key].split(",")]


def count(n, nwin, nover):
    return (n - nwin) // (nwin - nover) + 1


def make(folder):
    import pylops
    from pylops.signalprocessing import Patch2D, Sliding1D, Sliding2D

    os.makedirs(f"{folder}/serial", exist_ok=True)
    rng = np.random.default_rng(SEED)
    with open(f"{folder}/cases.txt", "w") as f:
        for name, spec in CASES:
            f.write(f"{name} dtype=f64 {spec}\n")
            p = dict(item.split("=", 1) for item in spec.split())
            dimsd, nwin, nover = ints(p, "dimsd"), ints(p, "nwin"), ints(p, "nover")
            nop, kind = int(p["nop"]), p["kind"]
            taper = None if p["taper"] == "none" else p["taper"]
            if kind == "p":
                wlen = nwin[0] * nwin[1]
                nw = (count(dimsd[0], nwin[0], nover[0]), count(dimsd[1], nwin[1], nover[1]))
                model = (nw[0], nw[1], nop)
            else:
                wlen = nwin[0] * (dimsd[1] if kind == "2" else 1)
                nw = (count(dimsd[0], nwin[0], nover[0]),)
                model = (nw[0], nop)
            a = rng.standard_normal((wlen, nop))
            x, y = rng.standard_normal(model), rng.standard_normal(dimsd)
            for what, v in (("a", a), ("x", x), ("y", y)):
                np.save(f"{folder}/{name}_{what}.npy", v)
            mm = pylops.MatrixMult(a)
            if kind == "1":
                op = Sliding1D(mm, nw[0] * nop, dimsd[0], nwin[0], nover[0], tapertype=taper)
            elif kind == "2":
                op = Sliding2D(mm, (nw[0] * nop, 1), dimsd, nwin[0], nover[0], tapertype=taper)
            else:
                op = Patch2D(mm, (nw[0] * nop, nw[1]), dimsd, nwin, nover, (nop, 1),
                             tapertype=taper)
            np.save(f"{folder}/serial/{name}_fwd.npy", (op @ x.ravel()).reshape(dimsd))
            np.save(f"{folder}/serial/{name}_adj.npy", (op.H @ y.ravel()).reshape(model))


def reference(folder):
    """PyLops-MPI has no windowed operators: the references are serial PyLops'."""


def compare(folder, nps):
    """Prints, per case and rank count, distlops against serial PyLops (forward, adjoint) and
    whether distlops at N ranks has the bits of the first rank count; returns the worst error."""
    tol = float(os.environ.get("PARITY_TOL", "1e-10"))
    worst = 0.0
    print(f"errors: max|a - b| / max|b|; a case passes within {tol:.0e}")
    print(f"{'case':<15}{'np':>3}  {'fwd':>10} {'adj':>10} {'np1 vs npN':>10}")
    for name, _ in read_cases(folder):
        first = [np.load(f"{folder}/rs-np{nps[0]}/{name}_{w}.npy") for w in ("fwd", "adj")]
        for np_ in nps:
            rs = [np.load(f"{folder}/rs-np{np_}/{name}_{w}.npy") for w in ("fwd", "adj")]
            ser = [np.load(f"{folder}/serial/{name}_{w}.npy") for w in ("fwd", "adj")]
            errs = [rel_max(a, b) for a, b in zip(rs, ser)]
            same = all(np.array_equal(a, b) for a, b in zip(rs, first))
            worst = max(worst, *errs)
            print(f"{name:<15}{np_:>3}  {errs[0]:10.2e} {errs[1]:10.2e}"
                  f" {'same bits' if same else 'differ':>10}"
                  f"{'   <- MISSES' if max(errs) > tol or not same else ''}")
            if not same:
                worst = max(worst, np.inf)
    print(f"worst error: {worst:.2e} ({'pass' if worst <= tol else 'FAIL'}, tolerance {tol:.0e})")
    return worst


if __name__ == "__main__":
    main(make, reference, compare)
