"""distlops' NonStationaryConvolve1D against PyLops-MPI's `MPINonStationaryConvolve1D` and serial
PyLops' `NonStationaryConvolve1D` (the ground truth), forward and adjoint, on the same inputs.

    python nonstationary.py make DIR                  # inputs (.npy), serial PyLops, cases.txt
    mpirun -n N python nonstationary.py reference DIR # PyLops-MPI's results into DIR/ref-npN
    python nonstationary.py compare DIR NP...         # the table of differences

distlops' side is `examples/parity_nonstationary.rs`, which reads the same DIR and writes
DIR/rs-npN; `run-nonstationary.sh` runs everything. Every case has random filters `hs`
(nfilts x nh, odd nh) at the regular positions `ih`, a model `x` and an independent data `y`;
all sides write `fwd = A x` and `adj = A^H y` as global arrays of shape `dims`.

PyLops-MPI needs dims[axis] % P == 0 and a filter on every rank, and its forward is wrong when a
filter reaches further than the neighbour filters a rank keeps (its halo extrapolates the edge
filter): the cases with `judge=mpi` (64 samples and 4 filters of 15 taps per rank at 2 ranks)
must agree with PyLops-MPI and with serial PyLops; the case with `judge=serial` (61 taps, longer
than the filters' spacing of 16) must agree with serial PyLops, and PyLops-MPI's error there is
only printed. Errors are `max |a - b| / max |b|`; a case passes within PARITY_TOL (default 1e-10).
"""

import os
import warnings

import numpy as np

from common import main, parse, read_cases, rel_max

SEED = 20261201

# 8 filters every 16 samples from 8 on 128 samples (2 ranks: 64 samples and 4 filters each).
IH = ",".join(str(8 + 16 * k) for k in range(8))
CASES = [
    ("ns_1d", f"dims=128 axis=0 nh=15 ih={IH} judge=mpi"),
    ("ns_2d_ax0", f"dims=128,20 axis=0 nh=15 ih={IH} judge=mpi"),
    ("ns_2d_axlast", f"dims=20,128 axis=-1 nh=15 ih={IH} judge=mpi"),
    ("ns_1d_long", f"dims=128 axis=0 nh=61 ih={IH} judge=serial"),
    ("ns_2d_ax0_long", f"dims=128,20 axis=0 nh=61 ih={IH} judge=serial"),
]


def ints(p, key):
    return [int(v) for v in p[key].split(",")]


def make(folder):
    import pylops

    os.makedirs(f"{folder}/serial", exist_ok=True)
    rng = np.random.default_rng(SEED)
    with open(f"{folder}/cases.txt", "w") as f:
        for name, spec in CASES:
            f.write(f"{name} dtype=f64 {spec}\n")
            _, p = parse(f"{name} {spec}")
            dims, ih, axis, nh = ints(p, "dims"), ints(p, "ih"), int(p["axis"]), int(p["nh"])
            hs = rng.standard_normal((len(ih), nh))
            x, y = rng.standard_normal(dims), rng.standard_normal(dims)
            for what, a in (("hs", hs), ("x", x), ("y", y)):
                np.save(f"{folder}/{name}_{what}.npy", a)
            op = pylops.signalprocessing.NonStationaryConvolve1D(dims=dims, hs=hs, ih=ih,
                                                                 axis=axis)
            np.save(f"{folder}/serial/{name}_fwd.npy", (op @ x.ravel()).reshape(dims))
            np.save(f"{folder}/serial/{name}_adj.npy", (op.H @ y.ravel()).reshape(dims))


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
        dims, ih, axis = ints(p, "dims"), ints(p, "ih"), int(p["axis"])
        ax = axis % len(dims)
        hs = np.load(f"{folder}/{name}_hs.npy")
        op = pylops_mpi.signalprocessing.MPINonStationaryConvolve1D(dims, hs, np.array(ih), axis=ax)
        nloc = dims[ax] // size
        blocks = [np.take(a, range(rank * nloc, (rank + 1) * nloc), axis=ax)
                  for a in (np.load(f"{folder}/{name}_x.npy"), np.load(f"{folder}/{name}_y.npy"))]
        sizes = [blocks[0].size] * size

        def dist(block):
            """This rank's block along the axis (C order), as MPIHalo takes it."""
            d = pylops_mpi.DistributedArray(global_shape=sum(sizes),
                                            local_shapes=[(s,) for s in sizes])
            d[:] = block.ravel()
            return d

        def gather(d):
            """The global array of the ranks' flat blocks."""
            shape = list(dims)
            shape[ax] = nloc
            parts = comm.allgather(np.asarray(d.local_array).reshape(shape))
            return np.concatenate(parts, axis=ax)

        fwd, adj = gather(op @ dist(blocks[0])), gather(op.H @ dist(blocks[1]))
        if rank == 0:
            np.save(f"{out}/{name}_fwd.npy", fwd)
            np.save(f"{out}/{name}_adj.npy", adj)


def compare(folder, nps):
    """Prints, per case and rank count, distlops against PyLops-MPI and against serial PyLops
    (forward, adjoint), and PyLops-MPI against serial PyLops; returns the worst error of the
    judged comparisons (judge=mpi: both; judge=serial: against serial PyLops)."""
    tol = float(os.environ.get("PARITY_TOL", "1e-10"))
    worst = 0.0
    print(f"errors: max|a - b| / max|b|; a case passes within {tol:.0e} (judge: which reference)")
    print(f"{'case':<16}{'np':>3}  {'fwd vs MPI':>10} {'adj vs MPI':>10} {'fwd vs ser':>10} "
          f"{'adj vs ser':>10} {'MPIf vs ser':>11} {'MPIa vs ser':>11}  judge")
    for name, p in read_cases(folder):
        ser = [np.load(f"{folder}/serial/{name}_{w}.npy") for w in ("fwd", "adj")]
        for np_ in nps:
            rs = [np.load(f"{folder}/rs-np{np_}/{name}_{w}.npy") for w in ("fwd", "adj")]
            ref = [np.load(f"{folder}/ref-np{np_}/{name}_{w}.npy") for w in ("fwd", "adj")]
            vs_mpi = [rel_max(a, b) for a, b in zip(rs, ref)]
            vs_ser = [rel_max(a, b) for a, b in zip(rs, ser)]
            mpi_ser = [rel_max(a, b) for a, b in zip(ref, ser)]
            judged = vs_ser + (vs_mpi if p["judge"] == "mpi" else [])
            bad = max(judged) > tol
            worst = max(worst, *judged)
            print(f"{name:<16}{np_:>3}  {vs_mpi[0]:10.2e} {vs_mpi[1]:10.2e} {vs_ser[0]:10.2e} "
                  f"{vs_ser[1]:10.2e} {mpi_ser[0]:11.2e} {mpi_ser[1]:11.2e}  {p['judge']}"
                  f"{'   <- MISSES' if bad else ''}")
    print(f"worst judged error: {worst:.2e} ({'pass' if worst <= tol else 'FAIL'}, tolerance "
          f"{tol:.0e})")
    return worst


if __name__ == "__main__":
    main(make, reference, compare)
