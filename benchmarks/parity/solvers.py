"""LSQR, ISTA and FISTA in distlops against SciPy's `lsqr` and PyLops-MPI's `ista` / `fista` (and
serial PyLops' `ista` / `fista`), on the same inputs.

    python solvers.py make DIR                  # inputs (.npy) and the list of cases (cases.txt)
    mpirun -n N python solvers.py reference DIR # SciPy / PyLops(-MPI) results into DIR/ref-npN
    python solvers.py compare DIR NP...         # the table of differences

distlops' side is `examples/solvers_parity.rs`, which reads the same DIR and writes DIR/rs-npN;
`run-solvers.sh` runs everything. The global operator is block-diagonal, `diag(A_0, ..., A_3)`
with four dense blocks (PyLops-MPI's `MPIBlockDiag` of `MatrixMult`, each rank holding 4 / N of
the blocks, so the global problem is the same at every rank count); SciPy's `lsqr` gets the
dense global matrix. Complex arrays are stored as real arrays with a last axis of 2 (re, im).

Cases are lines `name key=value ...` in cases.txt; keys: solver (lsqr, ista, fista), problem
(tall, wide, ill: the block sets), dtype (f64, c128), and the solver's parameters.
"""

import os

import numpy as np

from common import dist as dist_array, from_real, main, parse, read_cases, rel, to_real

NBLOCKS = 4
SEED = 20240615


def blocks(rng, problem, dtype):
    """The four dense blocks of a problem."""
    shapes = {"tall": (50, 20), "ill": (30, 20), "wide": (20, 30)}
    m, n = shapes[problem]
    out = []
    for k in range(NBLOCKS):
        a = rng.standard_normal((m, n))
        if dtype == "c128":
            a = a + 1j * rng.standard_normal((m, n))
        if problem == "ill":
            # Singular values from 1 down to 1e-6 (cond(A) = 1e6): A = U diag(s) V^H.
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            s = np.logspace(0, -6, n) * (1 + 0.1 * k)
            a = (u * s) @ vh
        out.append(a / np.sqrt(m))
    return out


CASES = [
    # LSQR: SciPy's defaults, damping, an initial guess, complex, ill-conditioned, every stop.
    ("lsqr_default", "solver=lsqr problem=tall dtype=f64"),
    ("lsqr_damp_x0", "solver=lsqr problem=tall dtype=f64 damp=0.5 x0=1"),
    ("lsqr_tight", "solver=lsqr problem=tall dtype=f64 atol=1e-10 btol=1e-10"),
    ("lsqr_iterlim", "solver=lsqr problem=tall dtype=f64 atol=0 btol=0 niter=15"),
    ("lsqr_c128", "solver=lsqr problem=tall dtype=c128"),
    ("lsqr_c128_damp", "solver=lsqr problem=tall dtype=c128 damp=0.1 atol=1e-12 btol=1e-12"),
    ("lsqr_ill", "solver=lsqr problem=ill dtype=f64 atol=1e-10 btol=1e-10"),
    ("lsqr_ill_conlim", "solver=lsqr problem=ill dtype=f64 atol=1e-12 btol=1e-12 conlim=1e3"),
    ("lsqr_wide", "solver=lsqr problem=wide dtype=f64"),
    # ISTA and FISTA: every threshold, real and complex, decay, x0, alpha from the power iteration.
    ("ista_soft", "solver=ista problem=wide dtype=f64 threshkind=soft niter=100 eps=0.1"),
    ("ista_hard", "solver=ista problem=wide dtype=f64 threshkind=hard niter=100 eps=0.1"),
    ("ista_half", "solver=ista problem=wide dtype=f64 threshkind=half niter=100 eps=0.1"),
    ("fista_soft", "solver=fista problem=wide dtype=f64 threshkind=soft niter=100 eps=0.1"),
    ("fista_hard", "solver=fista problem=wide dtype=f64 threshkind=hard niter=100 eps=0.1"),
    ("fista_half", "solver=fista problem=wide dtype=f64 threshkind=half niter=100 eps=0.1"),
    ("ista_c128_soft", "solver=ista problem=wide dtype=c128 threshkind=soft niter=100 eps=0.1"),
    ("fista_c128_soft", "solver=fista problem=wide dtype=c128 threshkind=soft niter=100 eps=0.1"),
    ("fista_c128_half", "solver=fista problem=wide dtype=c128 threshkind=half niter=100 eps=0.1"),
    ("ista_decay_x0", "solver=ista problem=wide dtype=f64 threshkind=soft niter=60 eps=0.2 decay=1 x0=1"),
    ("fista_decay", "solver=fista problem=wide dtype=f64 threshkind=soft niter=60 eps=0.2 decay=1"),
    ("fista_tol", "solver=fista problem=wide dtype=f64 threshkind=soft niter=500 eps=0.1 tol=1e-6"),
    ("fista_eigs", "solver=fista problem=wide dtype=f64 threshkind=soft niter=80 eps=0.1 alpha=none eigs_niter=3000"),
]


def make(folder):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(SEED)
    problems = {}
    for problem in ("tall", "wide", "ill"):
        for dtype in ("f64", "c128"):
            bl = blocks(rng, problem, dtype)
            a = np.zeros((sum(b.shape[0] for b in bl), sum(b.shape[1] for b in bl)),
                         dtype=bl[0].dtype)
            r = c = 0
            for b in bl:
                a[r:r + b.shape[0], c:c + b.shape[1]] = b
                r, c = r + b.shape[0], c + b.shape[1]
            m, n = a.shape
            if problem == "wide":
                # A sparse model and its data plus a little noise.
                x = np.zeros(n, dtype=a.dtype)
                idx = rng.choice(n, n // 8, replace=False)
                x[idx] = rng.standard_normal(len(idx)) + 1.0
                if dtype == "c128":
                    x[idx] += 1j * rng.standard_normal(len(idx))
                y = a @ x + 0.01 * rng.standard_normal(m)
            else:
                y = rng.standard_normal(m) + (1j * rng.standard_normal(m) if dtype == "c128" else 0)
            x0 = 0.1 * rng.standard_normal(n) + (0.1j * rng.standard_normal(n) if dtype == "c128" else 0)
            for k, b in enumerate(bl):
                np.save(f"{folder}/{problem}_{dtype}_A{k}.npy", to_real(b))
            np.save(f"{folder}/{problem}_{dtype}_y.npy", to_real(y))
            np.save(f"{folder}/{problem}_{dtype}_x0.npy", to_real(x0))
            problems[problem, dtype] = a
    # One decay for every case that asks for one: 1 down to 0.5.
    np.save(f"{folder}/decay.npy", np.linspace(1.0, 0.5, 1000))
    with open(f"{folder}/cases.txt", "w") as f:
        for name, spec in CASES:
            _, p = parse(f"{name} {spec}")
            if p["solver"] != "lsqr" and p.get("alpha", "") != "none":
                # alpha = 1 / lambda_max(A^H A), exactly (both sides read it from the file).
                a = problems[p["problem"], p["dtype"]]
                spec += f" alpha={float(1.0 / np.linalg.norm(a, 2) ** 2)!r}"
            f.write(f"{name} {spec}\n")


def load_problem(folder, p):
    dt = p["dtype"]
    bl = [from_real(np.load(f"{folder}/{p['problem']}_{dt}_A{k}.npy"), dt) for k in range(NBLOCKS)]
    y = from_real(np.load(f"{folder}/{p['problem']}_{dt}_y.npy"), dt)
    x0 = from_real(np.load(f"{folder}/{p['problem']}_{dt}_x0.npy"), dt)
    return bl, y, x0


def exact_operator(a):
    """`a` as a SciPy LinearOperator whose products are correctly rounded (math.fsum)."""
    import math

    from scipy.sparse.linalg import LinearOperator

    def prod(mat, v):
        if np.iscomplexobj(mat) or np.iscomplexobj(v):
            re = [math.fsum(np.concatenate([(r.real * v.real), -(r.imag * v.imag)])) for r in mat]
            im = [math.fsum(np.concatenate([(r.real * v.imag), (r.imag * v.real)])) for r in mat]
            return np.array(re) + 1j * np.array(im)
        return np.array([math.fsum(r * v) for r in mat])

    ah = a.conj().T
    return LinearOperator(a.shape, matvec=lambda v: prod(a, v), rmatvec=lambda v: prod(ah, v),
                          dtype=a.dtype)


def reference(folder):
    from mpi4py import MPI

    import pylops
    import pylops_mpi
    from scipy.sparse.linalg import lsqr

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    assert NBLOCKS % size == 0, "the rank count must divide the number of blocks"
    out = f"{folder}/ref-np{size}"
    if rank == 0:
        os.makedirs(out, exist_ok=True)
    comm.Barrier()
    decay_all = np.load(f"{folder}/decay.npy")
    for name, p in read_cases(folder):
        bl, y, x0 = load_problem(folder, p)
        dtype = np.complex128 if p["dtype"] == "c128" else np.float64
        if p["solver"] == "lsqr":
            if rank != 0:
                continue
            a = np.zeros((sum(b.shape[0] for b in bl), sum(b.shape[1] for b in bl)), dtype=dtype)
            r = c = 0
            for b in bl:
                a[r:r + b.shape[0], c:c + b.shape[1]] = b
                r, c = r + b.shape[0], c + b.shape[1]
            kw = dict(damp=float(p.get("damp", 0.0)), atol=float(p.get("atol", 1e-6)),
                      btol=float(p.get("btol", 1e-6)), conlim=float(p.get("conlim", 1e8)))
            if "niter" in p:
                kw["iter_lim"] = int(p["niter"])
            if p.get("x0") == "1":
                kw["x0"] = x0
            x, istop, itn, r1, r2, anorm, acond, arnorm, xnorm, _ = lsqr(a, y, **kw)
            np.save(f"{out}/{name}_x.npy", to_real(x))
            # The problem's own sensitivity to rounding: SciPy again, with products whose every
            # entry is rounded once (math.fsum), i.e. the same maths in another rounding.
            np.save(f"{out}/{name}_floor_x.npy", to_real(lsqr(exact_operator(a), y, **kw)[0]))
            np.save(f"{out}/{name}_scalars.npy",
                    np.array([istop, itn, r1, r2, anorm, acond, arnorm, xnorm], dtype=np.float64))
            continue
        # ISTA / FISTA: PyLops-MPI on MPIBlockDiag(MatrixMult), this rank's blocks.
        per = NBLOCKS // size
        mine = bl[rank * per:(rank + 1) * per]
        Op = pylops_mpi.MPIBlockDiag(ops=[pylops.MatrixMult(b, dtype=dtype) for b in mine])
        nrows = [sum(b.shape[0] for b in bl[r * per:(r + 1) * per]) for r in range(size)]
        ncols = [sum(b.shape[1] for b in bl[r * per:(r + 1) * per]) for r in range(size)]

        def dist(v, counts):
            return dist_array(v, counts, rank, dtype)

        yd = dist(y, nrows)
        x0v = x0 if p.get("x0") == "1" else np.zeros(len(x0), dtype=dtype)
        niter = int(p["niter"])
        kw = dict(niter=niter, eps=float(p["eps"]), tol=float(p.get("tol", 1e-10)),
                  threshkind=p["threshkind"])
        if p.get("alpha", "none") == "none":
            kw["alpha"] = None
            kw["eigsdict"] = dict(niter=int(p.get("eigs_niter", 10)), tol=float(p.get("eigs_tol", 0.0)))
        else:
            kw["alpha"] = float(p["alpha"])
        if p.get("decay") == "1":
            kw["decay"] = decay_all[:niter]
        solve = pylops_mpi.optimization.sparsity.ista if p["solver"] == "ista" else \
            pylops_mpi.optimization.sparsity.fista
        xd, iit, cost = solve(Op, yd, dist(x0v, ncols), **kw)
        x = xd.asarray()
        if rank == 0:
            np.save(f"{out}/{name}_x.npy", to_real(x))
            np.save(f"{out}/{name}_scalars.npy", np.array([iit], dtype=np.float64))
            np.save(f"{out}/{name}_cost.npy", np.asarray(cost, dtype=np.float64))
            # Serial PyLops on the dense global operator, when alpha is given.
            if kw["alpha"] is not None:
                a = np.zeros((sum(nrows), sum(ncols)), dtype=dtype)
                r = c = 0
                for b in bl:
                    a[r:r + b.shape[0], c:c + b.shape[1]] = b
                    r, c = r + b.shape[0], c + b.shape[1]
                sk = {k: v for k, v in kw.items() if k != "eigsdict"}
                sserial = pylops.optimization.sparsity.ista if p["solver"] == "ista" else \
                    pylops.optimization.sparsity.fista
                xs, iits, costs = sserial(pylops.MatrixMult(a, dtype=dtype), y, x0=x0v.copy(), **sk)
                np.save(f"{out}/{name}_serial_x.npy", to_real(xs))
                np.save(f"{out}/{name}_serial_cost.npy", np.asarray(costs, dtype=np.float64))


def compare(folder, nps):
    """Prints, per case and rank count: x against the reference (SciPy's lsqr, PyLops-MPI's ista
    and fista), the estimates or the cost history against the reference, the iteration counts
    (LSQR: istop/itn), x against serial PyLops (ISTA, FISTA) and, for LSQR, the problem's own
    rounding floor (SciPy against SciPy with correctly rounded products), and x against
    distlops' own first rank count. Returns the worst difference of the cases whose floor is
    below 1e-12 (the ill-conditioned ones are reported, not judged)."""
    lines = read_cases(folder)
    worst = 0.0
    print(f"{'case':<16}{'np':>3}  {'x vs ref':>9} {'est/cost':>9} {'istop/itn or iit':>17} "
          f"{'x vs serial':>11} {'ref floor':>9} {'np1 vs npN':>10}")
    for name, p in lines:
        for np_ in nps:
            rs, ref = f"{folder}/rs-np{np_}", f"{folder}/ref-np{np_}"
            xr = np.load(f"{rs}/{name}_x.npy")
            xp = np.load(f"{ref}/{name}_x.npy")
            sr = np.load(f"{rs}/{name}_scalars.npy")
            sp = np.load(f"{ref}/{name}_scalars.npy")
            dx = rel(xr, xp)
            floor = 0.0
            if p["solver"] == "lsqr":
                # istop and itn exactly; r1norm, r2norm, anorm, acond, xnorm relatively; arnorm
                # relative to anorm * r2norm, the scale test 2 compares it with.
                iters = f"{int(sr[0])}/{int(sr[1])} {int(sp[0])}/{int(sp[1])}"
                est = [abs(sr[i] - sp[i]) / max(abs(sp[i]), 1e-300) for i in (2, 3, 4, 5, 7)]
                est.append(abs(sr[6] - sp[6]) / (sp[4] * sp[3]))
                dc = max(est)
                ok_iters = sr[0] == sp[0] and sr[1] == sp[1]
                floor = rel(np.load(f"{ref}/{name}_floor_x.npy"), xp)
                fl = f"{floor:9.1e}"
            else:
                cr = np.load(f"{rs}/{name}_cost.npy")
                cp = np.load(f"{ref}/{name}_cost.npy")
                iters = f"{int(sr[0])} {int(sp[0])}"
                dc = rel(cr, cp) if len(cr) == len(cp) else np.inf
                ok_iters = sr[0] == sp[0]
                fl = f"{'-':>9}"
            serial = f"{ref}/{name}_serial_x.npy"
            ds = f"{rel(xr, np.load(serial)):11.2e}" if os.path.exists(serial) else f"{'-':>11}"
            d1 = rel(xr, np.load(f"{folder}/rs-np{nps[0]}/{name}_x.npy"))
            judged = floor <= 1e-12
            note = "" if ok_iters else "   <- iterations differ"
            if not judged:
                note += "   (rounding-sensitive: SciPy differs from itself as much; not judged)"
            print(f"{name:<16}{np_:>3}  {dx:9.2e} {dc:9.2e} {iters:>17} {ds} {fl} {d1:10.1e}{note}")
            if judged:
                worst = max(worst, dx, dc, 0.0 if ok_iters else np.inf)
    print(f"worst relative difference against SciPy / PyLops-MPI (judged cases): {worst:.2e}")
    return worst


if __name__ == "__main__":
    main(make, reference, compare)
