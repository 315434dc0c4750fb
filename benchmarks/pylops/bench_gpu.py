"""PyLops-MPI on GPUs (CuPy arrays, NCCL collectives): the PyLops-MPI side of benchmarks/gpu.sh.

The workloads of bench.py (W1-W5, W8; benchmarks/WORKLOADS.md) with every
DistributedArray on this rank's GPU (``engine="cupy"``, ``base_comm_nccl`` from
``pylops_mpi.utils._nccl.initialize_nccl_comm``) and the operators' own arrays (the wavelet, the
MDC kernel) as CuPy arrays. Inputs are drawn on the host exactly as bench.py draws them, then
copied to the device once; each timed call ends with a device synchronisation, so a time covers
the GPU work. Records have bench.py's fields (side "pylops-mpi") plus ``"engine": "cupy"``.

W9 has no GPU counterpart: PyLops-MPI's MPIFFT2D wraps mpi4py-fft, which is NumPy only.

    mpirun -n NP python benchmarks/pylops/bench_gpu.py --workload W3 [--reps N] [--out FILE]

Written for machines with NVIDIA GPUs and not run where it was written (no GPU there); it is
checked there only by ``python -m py_compile``.
"""

import argparse
import json
import sys

import cupy as cp
import numpy as np

import bench
from bench import RANK, SIZE, comm

from pylops_mpi import DistributedArray, StackedDistributedArray
from pylops_mpi.utils._nccl import initialize_nccl_comm

cp.cuda.Device(RANK % cp.cuda.runtime.getDeviceCount()).use()
NCCL = initialize_nccl_comm()


def to_gpu(x):
    """The same distributed array on this rank's GPU (NCCL collectives)."""
    if isinstance(x, StackedDistributedArray):
        return StackedDistributedArray([to_gpu(p) for p in x.distarrays])
    g = DistributedArray(global_shape=x.global_shape, base_comm_nccl=NCCL,
                         local_shapes=x.local_shapes, partition=x.partition, axis=x.axis,
                         engine="cupy", dtype=x.dtype)
    g[:] = cp.asarray(x.local_array)
    return g


def synced(fn):
    """``fn`` followed by a device synchronisation (what a timed call must include)."""
    def call():
        out = fn()
        cp.cuda.runtime.deviceSynchronize()
        return out
    return call


def to_host(y):
    """A CuPy DistributedArray's values as a NumPy one, for bench.py's checksums."""
    h = DistributedArray(global_shape=y.global_shape, local_shapes=y.local_shapes,
                         partition=y.partition, axis=y.axis, dtype=y.dtype)
    h[:] = cp.asnumpy(y.local_array)
    return h


def record(name, op, shape, n, times, y, real=False, **extra):
    check, check_w = bench.checksums(to_host(y), real=real)
    return bench.record(name, op, shape, n, times, check=check, check_w=check_w, **extra)


def forward_and_adjoint(name, Op, x, n, reps, warmup):
    times, y = bench.timed(synced(lambda: Op.matvec(x)), reps, warmup)
    recs = [record(name, "matvec", Op.shape, n, times, y)]
    y = None
    times, z = bench.timed(synced(lambda: Op.rmatvec(x)), reps, warmup)
    recs.append(record(name, "rmatvec", Op.shape, n, times, z))
    return recs


def poststack_gpu():
    """W1's operator with the wavelet on the GPU, and the model there."""
    import pylops
    from pylops.avo.poststack import PoststackLinearModelling
    from pylops.utils.wavelets import ricker
    from pylops_mpi.basicoperators import MPIBlockDiag
    _, m, counts = bench.poststack_setup()
    nyi = counts[RANK]
    wav = cp.asarray(ricker(np.arange(21) * 0.004, f0=15)[0])
    Top = pylops.Transpose((nyi, bench.NX, bench.NZ), (2, 0, 1), dtype=np.float64)
    PPop = PoststackLinearModelling(wav, nt0=bench.NZ, spatdims=(nyi, bench.NX))
    return MPIBlockDiag(ops=[Top.H @ PPop @ Top]), to_gpu(m)


def timed_cgls(name, Op, data, m, niter, reps, warmup):
    from pylops_mpi.optimization.basic import cgls
    x0 = m.zeros_like()
    times, out = bench.timed(synced(lambda: cgls(Op, data, x0=x0, niter=niter, tol=0.0)),
                             reps, warmup)
    x, _, _, _, _, cost = out
    return record(name, "cgls", Op.shape, m.global_shape[0], times, x, cost=float(cost[-1]),
                  niter=niter)


def w1(reps, warmup):
    BDiag, m = poststack_gpu()
    n = m.global_shape[0]
    times, d = bench.timed(synced(lambda: BDiag.matvec(m)), reps, warmup)
    recs = [record("poststack_matvec", "matvec", BDiag.shape, n, times, d)]
    times, a = bench.timed(synced(lambda: BDiag.rmatvec(d)), reps, warmup)
    recs.append(record("poststack_matvec", "rmatvec", BDiag.shape, n, times, a))
    return recs


def w2(reps, warmup):
    BDiag, m = poststack_gpu()
    return [timed_cgls("poststack_cgls", BDiag, BDiag.matvec(m), m, 30, reps, warmup)]


def w3(reps, warmup):
    from pylops_mpi.basicoperators import MPILaplacian
    dims = (160, 160, 160)
    x, _ = bench.scatter_rows(dims, 0, np.float64)
    L = MPILaplacian(dims=dims, axes=(0, 1, 2), weights=(1, 1, 1), sampling=(1, 1, 1),
                     dtype=np.float64)
    return forward_and_adjoint("laplacian3d", L, to_gpu(x), int(np.prod(dims)), reps, warmup)


def w4(reps, warmup):
    from pylops_mpi.basicoperators import MPIFirstDerivative
    dims = (4000, 2000)
    x, _ = bench.scatter_rows(dims, 0, np.float64)
    D = MPIFirstDerivative(dims=dims, kind="centered", dtype=np.float64)
    return forward_and_adjoint("firstderivative2d", D, to_gpu(x), dims[0] * dims[1], reps,
                               warmup)


def w5(reps, warmup):
    from pylops_mpi.basicoperators import MPILaplacian, MPIStackedVStack
    BDiag, m = poststack_gpu()
    d = BDiag.matvec(m)
    Lap = MPILaplacian(dims=(bench.NY, bench.NX, bench.NZ), axes=(0, 1, 2), weights=(1, 1, 1),
                       sampling=(1, 1, 1), dtype=np.float64)
    StackOp = MPIStackedVStack([BDiag, np.sqrt(1e2) * Lap])
    dstack = StackedDistributedArray([d, m.zeros_like()])
    return [timed_cgls("stacked_reg_cgls", StackOp, dstack, m, 20, reps, warmup)]


def w8(reps, warmup):
    from pylops_mpi.waveeqprocessing import MPIMDC
    par = bench.MDC_PAR
    counts, f0 = bench.row_split(par["nfmax"])
    G, m = bench.mdc_inputs(f0, f0 + counts[RANK])
    Op = MPIMDC(cp.asarray(G), nt=bench.MDC_NT2, nv=1, nfreq=par["nfmax"], dt=par["dt"], dr=1.0,
                twosided=True)
    x = to_gpu(bench.broadcast(m, np.float64))
    times, d = bench.timed(synced(lambda: Op.matvec(x)), reps, warmup)
    recs = [record("mdc", "matvec", Op.shape, x.global_shape[0], times, d, real=True)]
    times, a = bench.timed(synced(lambda: Op.rmatvec(d)), reps, warmup)
    recs.append(record("mdc", "rmatvec", Op.shape, d.global_shape[0], times, a, real=True))
    return recs


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W8": w8}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    reps = bench.DEFAULT_REPS[args.workload] if args.reps is None else args.reps
    recs = WORKLOADS[args.workload](reps, args.warmup)
    peak = bench.peak_rss_mb()
    if RANK != 0:
        return 0
    lines = []
    for r in recs:
        full = {"side": "pylops-mpi", "engine": "cupy", "workload": args.workload, "np": SIZE,
                "dtype": "float64"}
        full.update(r)
        full["peak_rss_mb"] = peak
        full["times"] = full.pop("times")
        lines.append(json.dumps(full))
    print("\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    comm.Barrier()
    sys.exit(main())
