"""PyLops-MPI's post-stack inversion (tutorials/poststack.py) on distlops' inputs.

Reads model.npy, background.npy and data.npy written by distlops' `examples/poststack` from DIR,
runs the same three inversions with PyLops-MPI (same operator, wavelet, starting model, number of
iterations, eps and tol = 0), and compares the data and every result with distlops' volumes.

    mpirun -n N python poststack.py DIR NITER EPS [OUT]

The number of ranks must be the one distlops ran with only for the timings: both split the
crossline axis with the same balanced rule. PyLops-MPI's own results depend on the rank count in
the last bits (its dot products are summed per rank), which the unregularised CGLS amplifies; to
measure that, OUT (optional) receives PyLops-MPI's volumes as .npy.
"""

import os

import sys
import time

import numpy as np
from mpi4py import MPI

import pylops
import pylops_mpi
from pylops.avo.poststack import PoststackLinearModelling
from pylops.utils.wavelets import ricker
from pylops_mpi.optimization.basic import cg, cgls

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
folder, niter, eps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
out = sys.argv[4] if len(sys.argv) > 4 else None

m_true = np.load(f"{folder}/model.npy")
m_back = np.load(f"{folder}/background.npy")
data = np.load(f"{folder}/data.npy")
ny, nx, nt = m_true.shape
counts = [ny // size + (1 if r < ny % size else 0) for r in range(size)]
y0 = sum(counts[:rank])
nyi = counts[rank]


def dist(vol):
    """The flat Scatter DistributedArray of a (ny, nx, nt) volume, crosslines split by rank."""
    x = pylops_mpi.DistributedArray(
        global_shape=ny * nx * nt,
        local_shapes=[(c * nx * nt,) for c in counts],
        partition=pylops_mpi.Partition.SCATTER,
        dtype=np.float64,
    )
    x[:] = vol[y0 : y0 + nyi].ravel()
    return x


# The tutorial's operator: time-first PoststackLinearModelling between two transposes.
wav, _, _ = ricker(np.arange(21) * 0.004, f0=15)
Top = pylops.Transpose((nyi, nx, nt), (2, 0, 1), dtype=np.float64)
PPop = PoststackLinearModelling(wav, nt0=nt, spatdims=(nyi, nx))
BDiag = pylops_mpi.basicoperators.MPIBlockDiag(ops=[Top.H @ PPop @ Top])
Lap = pylops_mpi.basicoperators.MPILaplacian(
    dims=(ny, nx, nt), axes=(0, 1, 2), weights=(1, 1, 1), sampling=(1, 1, 1), dtype=np.float64
)

m = dist(m_true)
mback = dist(m_back)
d = dist(data)
d_model = (BDiag @ m).asarray().reshape(ny, nx, nt)

timings = {}


def timed(name, f):
    comm.Barrier()
    t = time.perf_counter()
    x = f()
    comm.Barrier()
    timings[name] = time.perf_counter() - t
    return x.asarray().reshape(ny, nx, nt)


inv_a = timed("inv_cgls", lambda: cgls(BDiag, d, x0=mback.copy(), niter=niter, tol=0.0)[0])
Stack = pylops_mpi.MPIStackedVStack([BDiag, np.sqrt(eps) * Lap])
dstack = pylops_mpi.StackedDistributedArray([d, dist(np.zeros_like(data))])
inv_b = timed("inv_cgls_reg", lambda: cgls(Stack, dstack, x0=mback.copy(), niter=niter, tol=0.0)[0])
Normal = BDiag.H @ BDiag + eps * Lap.H @ Lap
rhs = BDiag.H @ d
inv_c = timed("inv_cg_normal", lambda: cg(Normal, rhs, x0=mback.copy(), niter=niter, tol=0.0)[0])

if rank == 0:

    def rel(a, b):
        return np.linalg.norm(a - b) / np.linalg.norm(b)

    print(f"PyLops-MPI {pylops_mpi.__version__} (pylops {pylops.__version__}) on {size} ranks, "
          f"model {m_true.shape}, {niter} iterations, eps = {eps}")
    print(f"{'volume':<16} {'vs distlops':>12} {'model error':>12} {'time [s]':>9}")
    print(f"{'data = G m':<16} {rel(d_model, data):>12.2e} {'':>12} {'':>9}  (equal if distlops ran with --noise 0)")
    for name, x in [("inv_cgls", inv_a), ("inv_cgls_reg", inv_b), ("inv_cg_normal", inv_c)]:
        ours = np.load(f"{folder}/{name}.npy")
        print(f"{name:<16} {rel(x, ours):>12.2e} {rel(x, m_true):>12.4e} {timings[name]:>9.2f}")
        if out:
            os.makedirs(out, exist_ok=True)
            np.save(f"{out}/{name}.npy", x)
    if out:
        np.save(f"{out}/data.npy", d_model)
