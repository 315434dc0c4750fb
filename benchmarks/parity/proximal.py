"""The proximal operators and solvers of distlops against PyLops-MPI 0.8.0's `proximal` module
(on pyproximal 0.13.0), on the same inputs.

    python proximal.py make DIR                  # inputs (.npy) and the list of cases (cases.txt)
    mpirun -n N python proximal.py reference DIR # PyLops-MPI's results into DIR/ref-npN
    python proximal.py compare DIR NP...         # the table of differences

distlops' side is `examples/proximal_parity.rs`, which reads the same DIR and writes DIR/rs-npN;
`run-proximal.sh` runs everything. The data operator is block-diagonal, `diag(A_0, ..., A_3)`
with four dense 24 x 30 blocks (PyLops-MPI's `MPIBlockDiag` of `MatrixMult`, rank r of N holding
blocks 4r/N .. 4(r+1)/N); the model is the 8 x 15 image `m` flattened by rows, each block acting
on two rows, so that the model's split matches `MPIGradient`'s default split along the first
axis at 1, 2 and 4 ranks. Complex arrays are stored as real arrays with a last axis of 2.

Cases are lines `name key=value ...` in cases.txt; keys: kind (pg, admm, pd, l2prox, composed),
dtype (f64, c128), and the case's parameters. Fixed steps are given to PyLops-MPI's `PrimalDual`
as per-iteration float64 arrays: a fixed float is rounded to float32 there.
"""

import os

import numpy as np

from common import dist as dist_array, from_real, main, parse, read_cases, rel, to_real

NBLOCKS = 4
DIMS = (8, 15)
BLOCK = (24, 30)
SEED = 20261129

CASES = [
    # ProximalGradient: f = MPIL2(Op, y) (its gradient), g = L1(sigma); every acceleration.
    ("pg_l1", "kind=pg dtype=f64 model=sparse sigma=0.05 niter=100 accel=none"),
    ("pg_l1_fista", "kind=pg dtype=f64 model=sparse sigma=0.05 niter=100 accel=fista"),
    ("pg_l1_vdb", "kind=pg dtype=f64 model=sparse sigma=0.05 niter=100 accel=vandenberghe"),
    ("pg_l1_c128", "kind=pg dtype=c128 model=sparse sigma=0.05 niter=100 accel=fista"),
    # ADMML2: anisotropic TV (L1 on the stacked forward gradient), inner CGLS / CG of 10 steps.
    ("admm_tv", "kind=admm dtype=f64 model=blocky sigma=0.05 tau=0.5 niter=30 inner=10"),
    # From a non-zero x0 (z starts at A x0).
    ("admm_tv_x0", "kind=admm dtype=f64 model=blocky sigma=0.05 tau=0.5 niter=30 inner=10 x0=1"),
    # gfirst: PyLops-MPI (and pyproximal) solve the x-update with the dual variable u of the
    # step before and update u with the A x of before the x-update; distlops keeps the textbook
    # order, so only the objective is judged here (distlops' must not be higher).
    ("admm_tv_gfirst", "kind=admm dtype=f64 model=blocky sigma=0.05 tau=0.5 niter=30 inner=10 gfirst=1 judge=objective"),
    # PrimalDual: f = MPIL2(Op, y) by an inner CG of 5 steps (warm), g = MPIL21 on the gradient.
    ("pd_tv", "kind=pd dtype=f64 model=blocky sigma=0.05 niter=60 inner=5 gfirst=1"),
    ("pd_tv_ffirst", "kind=pd dtype=f64 model=blocky sigma=0.05 niter=60 inner=5 gfirst=0 theta=0.5"),
    # MPIL2's prox, value and gradient (a second, warm-started call).
    ("l2prox", "kind=l2prox dtype=f64 model=blocky sigma=2.0 inner=20"),
    ("l2prox_c128", "kind=l2prox dtype=c128 model=blocky sigma=2.0 inner=20"),
    # LinearizedADMM (serial pyproximal's; PyLops-MPI 0.8.0 has none) on TV denoising of the
    # image w: f = 1/2 |x - w|^2, g = sigma |grad x|_1 (forward differences).
    ("ladmm_tv", "kind=ladmm dtype=f64 sigma=0.1 tau=1.0 mu=0.11875 niter=50"),
    # Separable prox composed: f(a x + b) with a float and a vector b, sigma f, f(x) + v^T x.
    ("composed", "kind=composed dtype=f64"),
    ("composed_c128", "kind=composed dtype=c128"),
]


def model(rng, kind, dtype):
    """The true 8 x 15 image: sparse spikes or blocks."""
    m = np.zeros(DIMS)
    if kind == "sparse":
        idx = rng.choice(m.size, m.size // 10, replace=False)
        m.flat[idx] = rng.standard_normal(len(idx)) + np.sign(rng.standard_normal(len(idx)))
    else:
        m[2:6, 3:9] = 1.0
        m[5:8, 10:14] = -0.5
    if dtype == "c128":
        m = m * (1.0 + 0.5j)
    return m


def make(folder):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(SEED)
    for dtype in ("f64", "c128"):
        blocks = []
        for _ in range(NBLOCKS):
            a = rng.standard_normal(BLOCK)
            if dtype == "c128":
                a = a + 1j * rng.standard_normal(BLOCK)
            blocks.append(a / np.sqrt(BLOCK[0]))
        for k, b in enumerate(blocks):
            np.save(f"{folder}/{dtype}_A{k}.npy", to_real(b))
        for kind in ("sparse", "blocky"):
            m = model(rng, kind, dtype).ravel()
            y = np.concatenate([b @ m[k * BLOCK[1]:(k + 1) * BLOCK[1]] for k, b in enumerate(blocks)])
            y = y + 0.02 * rng.standard_normal(y.shape)
            np.save(f"{folder}/{dtype}_{kind}_y.npy", to_real(y))
        # Two points to take proxes of, a shift b, an initial guess for MPIL2.
        for name in ("v", "w", "b", "x0"):
            v = rng.standard_normal(DIMS[0] * DIMS[1])
            if dtype == "c128":
                v = v + 1j * rng.standard_normal(v.shape)
            np.save(f"{folder}/{dtype}_{name}.npy", to_real(v))
        a = np.zeros((NBLOCKS * BLOCK[0], NBLOCKS * BLOCK[1]), dtype=blocks[0].dtype)
        for k, b in enumerate(blocks):
            a[k * BLOCK[0]:(k + 1) * BLOCK[0], k * BLOCK[1]:(k + 1) * BLOCK[1]] = b
        alpha = float(0.95 / np.linalg.norm(a, 2) ** 2)
        with open(f"{folder}/cases.txt", "a") as f:
            for name, spec in CASES:
                _, p = parse(f"{name} {spec}")
                if p["dtype"] != dtype:
                    continue
                if p["kind"] == "pg":
                    spec += f" tau={alpha!r}"
                if p["kind"] == "pd":
                    # |grad|^2 <= 8 for the 2-D forward gradient.
                    step = float(0.95 / np.sqrt(8.0))
                    spec += f" tau={step!r} mu={step!r}"
                f.write(f"{name} {spec}\n")


def reference(folder):
    from mpi4py import MPI

    import pylops
    import pylops_mpi
    from pylops_mpi.proximal import MPIProxOperator
    from pylops_mpi.proximal.optimization import ADMML2, PrimalDual, ProximalGradient
    from pylops_mpi.proximal.proximal import MPIL2, MPIL21
    from pyproximal import L1

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    assert NBLOCKS % size == 0, "the rank count must divide the number of blocks"
    per = NBLOCKS // size
    out = f"{folder}/ref-np{size}"
    if rank == 0:
        os.makedirs(out, exist_ok=True)
    comm.Barrier()
    nrow, ncol = [per * BLOCK[0]] * size, [per * BLOCK[1]] * size

    def save(name, what, a):
        if rank == 0:
            np.save(f"{out}/{name}_{what}.npy", to_real(np.asarray(a)))

    for name, p in read_cases(folder):
        dt = p["dtype"]
        dtype = np.complex128 if dt == "c128" else np.float64

        def load(stem):
            return from_real(np.load(f"{folder}/{dt}_{stem}.npy"), dt)

        def dist(v, counts):
            return dist_array(v, counts, rank, dtype)

        mine = [load(f"A{k}") for k in range(rank * per, (rank + 1) * per)]
        Op = pylops_mpi.MPIBlockDiag(ops=[pylops.MatrixMult(b, dtype=dtype) for b in mine])
        zeros = dist(np.zeros(sum(ncol), dtype=dtype), ncol)
        if p["kind"] in ("pg", "admm", "pd"):
            y = dist(load(f"{p['model']}_y"), nrow)
        if p["kind"] == "pg":
            f = MPIL2(Op=Op, b=y, x0=zeros)
            g = MPIProxOperator(L1(sigma=float(p["sigma"])))
            accel = None if p["accel"] == "none" else p["accel"]
            x = ProximalGradient(f, g, zeros, tau=float(p["tau"]), niter=int(p["niter"]),
                                 acceleration=accel)
            save(name, "x", x.asarray())
        elif p["kind"] == "admm":
            grad = pylops_mpi.MPIGradient(dims=DIMS, kind="forward", edge=False, dtype=dtype)
            g = MPIProxOperator(L1(sigma=float(p["sigma"])))
            x0 = dist(load("x0"), ncol) if p.get("x0") == "1" else zeros
            x, z = ADMML2(g, Op, y, grad, x0, tau=float(p["tau"]), niter=int(p["niter"]),
                          gfirst=p.get("gfirst") == "1",
                          kwargs_solver=dict(niter=int(p["inner"]), tol=0.0))
            save(name, "x", x.asarray())
            save(name, "z", np.concatenate([z[i].asarray() for i in range(z.narrays)]))
        elif p["kind"] == "pd":
            niter = int(p["niter"])
            grad = pylops_mpi.MPIGradient(dims=DIMS, kind="forward", edge=False, dtype=dtype)
            f = MPIL2(Op=Op, b=y, x0=zeros, niter=int(p["inner"]), warm=True, solver="cg",
                      kwargs_solver=dict(tol=0.0))
            g = MPIL21(ndim=2, sigma=float(p["sigma"]))
            y0 = grad.matvec(zeros)
            tau = float(p["tau"]) * np.ones(niter)
            mu = float(p["mu"]) * np.ones(niter)
            x, yd = PrimalDual(f, g, grad, zeros, y0, tau, mu, theta=float(p.get("theta", 1.0)),
                               niter=niter, gfirst=p["gfirst"] == "1", returny=True)
            save(name, "x", x.asarray())
            save(name, "y", np.concatenate([yd[i].asarray() for i in range(yd.narrays)]))
        elif p["kind"] == "ladmm":
            from pyproximal import L2
            from pyproximal.optimization.primal import LinearizedADMM

            if rank == 0:
                grad = pylops.Gradient(dims=DIMS, kind="forward", edge=False, dtype=dtype)
                x, z = LinearizedADMM(L2(b=load("w")), L1(sigma=float(p["sigma"])), grad,
                                      np.zeros(DIMS[0] * DIMS[1], dtype=dtype),
                                      tau=float(p["tau"]), mu=float(p["mu"]),
                                      niter=int(p["niter"]))
                save(name, "x", x)
                save(name, "z", z)
        elif p["kind"] == "l2prox":
            sigma = float(p["sigma"])
            y = dist(load("blocky_y"), nrow)
            f = MPIL2(Op=Op, b=y, sigma=sigma, x0=dist(load("x0"), ncol), niter=int(p["inner"]),
                      warm=True, solver="cg", kwargs_solver=dict(tol=0.0))
            v, w = dist(load("v"), ncol), dist(load("w"), ncol)
            save(name, "prox1", f.prox(v, 0.5).asarray())
            save(name, "prox2", f.prox(w, 0.3).asarray())
            save(name, "grad", f.grad(v).asarray())
            save(name, "value", np.array([f(v)]))
        elif p["kind"] == "composed":
            v = dist(load("v"), ncol)
            b = dist(load("b"), ncol)
            f = MPIProxOperator(L1(sigma=0.4))
            ops = [f.precomposition(-1.5, 0.2), f.precomposition(2.0, b), f.postcomposition(2.5)]
            save(name, "prox", np.concatenate([op.prox(v, 0.7).asarray() for op in ops]))
            save(name, "value", np.array([float(np.real(op(v))) for op in ops]))
            # f(x) + v^T x: PyLops-MPI 0.8.0 has no affine_addition; serial pyproximal's on the
            # gathered vectors (its value uses np.dot, v^T x: compared for real values only).
            affine = L1(sigma=0.4).affine_addition(load("b"))
            save(name, "affine", affine.prox(load("v"), 0.7))
            if dt == "f64":
                save(name, "affinevalue", np.array([affine(load("v"))]))


def objective(folder, p, x):
    """1/2 |Op x - y|^2 + sigma |grad x|_1 (anisotropic TV, forward differences) of an ADMM case."""
    dt = p["dtype"]
    blocks = [from_real(np.load(f"{folder}/{dt}_A{k}.npy"), dt) for k in range(NBLOCKS)]
    y = from_real(np.load(f"{folder}/{dt}_{p['model']}_y.npy"), dt)
    x = from_real(x, dt)
    n = BLOCK[1]
    r = np.concatenate([b @ x[k * n:(k + 1) * n] for k, b in enumerate(blocks)]) - y
    m = x.reshape(DIMS)
    tv = np.abs(np.diff(m, axis=0)).sum() + np.abs(np.diff(m, axis=1)).sum()
    return 0.5 * np.vdot(r, r).real + float(p["sigma"]) * tv


def compare(folder, nps):
    """Prints, per case and rank count, every output against PyLops-MPI's and against distlops'
    own first rank count; returns the worst difference against PyLops-MPI (for the cases judged
    by their objective, 0 if distlops' is not higher, else inf)."""
    worst = 0.0
    print(f"{'case':<16}{'np':>3}  {'output':<8}{'vs PyLops-MPI':>14} {'np1 vs npN':>11}")
    for name, p in read_cases(folder):
        for np_ in nps:
            rs, ref = f"{folder}/rs-np{np_}", f"{folder}/ref-np{np_}"
            whats = sorted(f[len(name) + 1:-4] for f in os.listdir(ref)
                           if f.startswith(name + "_") and f[len(name) + 1:-4].isalnum())
            for what in whats:
                a = np.load(f"{rs}/{name}_{what}.npy")
                b = np.load(f"{ref}/{name}_{what}.npy")
                d = rel(a, b) if a.shape == b.shape else np.inf
                d1 = rel(a, np.load(f"{folder}/rs-np{nps[0]}/{name}_{what}.npy"))
                if p.get("judge") == "objective" and what == "x":
                    jr, jp = objective(folder, p, a), objective(folder, p, b)
                    ok = jr <= jp * (1 + 1e-12)
                    print(f"{name:<16}{np_:>3}  {what:<8}{d:14.2e} {d1:11.1e}   objective "
                          f"{jr:.10e} vs PyLops-MPI {jp:.10e}: {'not higher' if ok else 'HIGHER'}")
                    worst = max(worst, 0.0 if ok else np.inf)
                    continue
                print(f"{name:<16}{np_:>3}  {what:<8}{d:14.2e} {d1:11.1e}"
                      + ("   (not judged)" if p.get("judge") == "objective" else ""))
                if p.get("judge") != "objective":
                    worst = max(worst, d)
    print(f"worst relative difference against PyLops-MPI 0.8.0: {worst:.2e}")
    return worst


if __name__ == "__main__":
    main(make, reference, compare)
