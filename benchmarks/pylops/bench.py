"""PyLops-MPI side of the distlops vs PyLops-MPI benchmark (workloads W1-W14).

Implements the workloads of benchmarks/WORKLOADS.md with pylops-mpi's own classes,
times them with the protocol of that spec and prints one JSON record per (workload, op):

    benchmarks/venv.sh
    mpirun -n NP --bind-to core benchmarks/.venv/bin/python benchmarks/pylops/bench.py \
        --workload W3 [--dtype float64|complex128] [--reps N] [--warmup N] [--out FILE]
    benchmarks/.venv/bin/python benchmarks/pylops/bench.py --workload W8 --write-inputs DIR

Conventions (from the spec):

* Inputs: numpy ``default_rng(0)`` (a fresh stream per workload), ``rng.random(n)`` only;
  ``sym(n) = 2*u - 1``; complex ``csym(n) = sym(n) + 1j*sym(n)`` (first n draws are the real
  parts, the next n the imaginary parts). Each rank draws only its ``local_split`` part of the
  global input (axis 0: rank r owns ``n//P + (r < n%P)`` rows, rank 0 first), jumping over the
  draws before it with PCG64's ``advance``: the same numbers as generating the global array on
  every rank (as the spec describes), without the harness's global copies inflating the peak
  memory, which then measures the library (distlops-bench does the same).
* Timing: one warm-up call, then ``reps`` times ``Barrier(); t0 = Wtime(); op(); dt = Wtime() - t0``
  with dt max-reduced over ranks; median and min reported. matvec/rmatvec are timed as
  ``Op.matvec(x)`` / ``Op.rmatvec(x)`` (what ``Op @ x`` / ``Op.H @ x`` call, without building the
  adjoint wrapper object on every repetition); the output allocation, halo exchange etc. done
  inside the call are included.
* Checksums (after timing) on the global output y flattened in C order, i = 0..N-1:
  ``check = sqrt(sum |y_i|^2)``, ``check_w = sqrt(sum (1 + i mod 7) |y_i|^2)``; scalar results
  (W6 dot and norm) are reported as ``check`` (``check_w`` null); solvers also report ``cost``,
  the final residual norm ``||s||`` of pylops-mpi's CGLS. The sums are done per rank over the
  rank's slice with its global indices, then added over ranks (the same numbers as on the
  gathered array up to rounding, ~1e-16 relative, without gathering the output).
* Output: rank 0 prints one JSON line per record to stdout and appends it to --out if given.
  ``peak_rss_mb`` is the max over ranks of VmHWM (/proc/self/status) in MiB, read at the end of
  the run, so it covers the inputs and all ops of the workload.
  ``shape`` is the operator's [rows, cols]; for W6 it is [1, N] for dot/norm and [N, N] for
  add/scale (output length, input length).

Complex versions (``--dtype complex128``) exist for W3 and W7; W9 and W10 exist only in complex128.
``--write-inputs DIR`` (W8 only, one process) writes
W8's kernel and model as ``DIR/G.npy`` (float64 (re, im) pairs, shape (200, 101, 61, 2)) and
``DIR/m.npy`` ((799, 61)) for distlops-bench's ``--inputs DIR``, and exits without timing.
"""

import os

# One thread per rank, whatever the caller's environment says (must precede the numpy import).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

import pylops  # noqa: E402
import pylops_mpi  # noqa: E402
from pylops.avo.poststack import PoststackLinearModelling  # noqa: E402
from pylops.utils.seismicevents import hyperbolic2d, makeaxis  # noqa: E402
from pylops.utils.tapers import taper3d  # noqa: E402
from pylops.utils.wavelets import ricker  # noqa: E402
from pylops_mpi import DistributedArray, Partition, StackedDistributedArray  # noqa: E402
from pylops_mpi.basicoperators import (  # noqa: E402
    MPIBlockDiag,
    MPIFirstDerivative,
    MPILaplacian,
    MPIStackedVStack,
    MPIVStack,
)
from pylops_mpi.optimization.basic import cgls  # noqa: E402
from pylops_mpi.signalprocessing import MPIFFT2D, MPIFFTND  # noqa: E402
from pylops_mpi.waveeqprocessing import MPIMDC  # noqa: E402

comm = MPI.COMM_WORLD
RANK, SIZE = comm.Get_rank(), comm.Get_size()

DEFAULT_REPS = {"W1": 10, "W2": 3, "W12": 3, "W13": 10, "W14": 5, "W3": 10, "W4": 10, "W5": 3, "W6": 10, "W7": 20, "W8": 20,
                "W9": 10, "W10": 10}
COMPLEX_OK = {"W3", "W7", "W9", "W10"}
COMPLEX_ONLY = {"W9", "W10"}


# --------------------------------------------------------------------------------------------
# Inputs and distribution
# --------------------------------------------------------------------------------------------


def row_split(n):
    """(count, start) of this rank's block of the n rows of axis 0 (pylops-mpi local_split)."""
    counts = [n // SIZE + (1 if r < n % SIZE else 0) for r in range(SIZE)]
    return counts, sum(counts[:RANK])


def draws_into(out, start):
    """Fill the float64 array ``out`` with draws ``start, start+1, ...`` of the ``default_rng(0)``
    stream: PCG64's ``advance`` jumps over the draws before (one ``random()`` = one 64-bit step), so
    a rank generates only its own block and never holds the global array."""
    g = np.random.default_rng(0)
    g.bit_generator.advance(start)
    g.random(out=out)


def sym_inplace(a):
    """sym(u) = 2*u - 1 in place (the same two roundings as ``2.0*u - 1.0``)."""
    a *= 2.0
    a -= 1.0


def fill_block(local, stream_start, n, start, uniform=False):
    """Fill ``local`` (flat) with elements ``start ..`` of a global array of ``n`` values drawn from
    ``stream_start``: sym(u) (or u if ``uniform``); complex128: real parts from draws
    ``stream_start ..``, imaginary parts from ``stream_start + n ..``. Returns the stream position
    after the global array."""
    if np.iscomplexobj(local):
        for part, first in ((local.real, stream_start), (local.imag, stream_start + n)):
            tmp = np.empty(local.size)
            draws_into(tmp, first + start)
            if not uniform:
                sym_inplace(tmp)
            part[:] = tmp
        return stream_start + 2 * n
    draws_into(local, stream_start + start)
    if not uniform:
        sym_inplace(local)
    return stream_start + n


def scatter_rows(shape, stream_start, dtype, uniform=False):
    """Flat SCATTER DistributedArray of a random global array of ``shape`` split along axis 0;
    each rank draws only its own rows (see ``fill_block``). Returns (array, next stream position)."""
    rowsize = int(np.prod(shape[1:], dtype=np.int64))
    n = int(np.prod(shape, dtype=np.int64))
    counts, start = row_split(shape[0])
    x = DistributedArray(
        global_shape=n,
        local_shapes=[(c * rowsize,) for c in counts],
        partition=Partition.SCATTER,
        dtype=dtype,
    )
    nxt = fill_block(x.local_array, stream_start, n, start * rowsize, uniform)
    return x, nxt


def scatter(global_array, dtype):
    """Flat SCATTER DistributedArray of a (non-random) global array split along its axis 0."""
    g = np.asarray(global_array)
    rowsize = int(np.prod(g.shape[1:], dtype=np.int64))
    counts, start = row_split(g.shape[0])
    x = DistributedArray(
        global_shape=g.size,
        local_shapes=[(c * rowsize,) for c in counts],
        partition=Partition.SCATTER,
        dtype=dtype,
    )
    x[:] = g[start : start + counts[RANK]].ravel()
    return x


def broadcast(global_array, dtype):
    """Flat BROADCAST DistributedArray holding ``global_array`` on every rank."""
    g = np.asarray(global_array).ravel()
    x = DistributedArray(global_shape=g.size, partition=Partition.BROADCAST, dtype=dtype)
    x[:] = g
    return x


# --------------------------------------------------------------------------------------------
# Timing, checksums, memory
# --------------------------------------------------------------------------------------------


def timed(fn, reps, warmup):
    """Run fn() ``warmup`` times, then ``reps`` timed times; returns (times, last result).

    Each rep: Barrier; t0 = Wtime(); fn(); dt = Wtime() - t0; dt max-reduced over ranks."""
    out = None
    for _ in range(warmup):
        out = None
        out = fn()
    times = []
    for _ in range(reps):
        out = None  # free the previous result before the next call allocates its own
        comm.Barrier()
        t0 = MPI.Wtime()
        out = fn()
        dt = MPI.Wtime() - t0
        times.append(comm.allreduce(dt, op=MPI.MAX))
    return times, out


def checksums(y, real=False):
    """(check, check_w) of a DistributedArray's global value (its real part if ``real``),
    flattened in C order.

    check = sqrt(sum_i |y_i|^2), check_w = sqrt(sum_i (1 + i mod 7) |y_i|^2), i the global
    index. SCATTER: each rank sums its slice (global offset = sizes of the ranks before it),
    then the sums are added over ranks. BROADCAST: every rank has the whole array; rank 0's
    sums are used."""
    a = np.ascontiguousarray(y.local_array.real if real else y.local_array).ravel()
    scattered = y.partition is Partition.SCATTER
    offset = comm.exscan(a.size) if scattered else 0
    offset = offset or 0  # exscan gives None on rank 0
    sums = np.zeros(2)
    chunk = 1 << 20
    for i in range(0, a.size, chunk):
        blk = a[i : i + chunk]
        p = blk.real * blk.real + blk.imag * blk.imag if np.iscomplexobj(blk) else blk * blk
        w = 1.0 + (np.arange(offset + i, offset + i + blk.size, dtype=np.int64) % 7)
        sums[0] += p.sum()
        sums[1] += (w * p).sum()
    if scattered:
        total = np.zeros(2)
        comm.Allreduce(sums, total, op=MPI.SUM)
    else:
        total = comm.bcast(sums, root=0)
    return math.sqrt(total[0]), math.sqrt(total[1])


def peak_rss_mb():
    """Max over ranks of this process's VmHWM (peak resident set) in MiB."""
    kb = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                kb = int(line.split()[1])
    return comm.allreduce(kb / 1024.0, op=MPI.MAX)


def record(name, op, shape, global_size, times, y=None, check=None, check_w=None, cost=None,
           niter=None):
    """One output record (without the run-wide fields); checksums of y if given."""
    if y is not None:
        check, check_w = checksums(y)
    med = float(np.median(times))
    return {
        "name": name,
        "op": op,
        "global_size": int(global_size),
        "shape": [int(shape[0]), int(shape[1])],
        "median_s": med,
        "min_s": float(min(times)),
        "reps": len(times),
        "check": None if check is None else float(check),
        "check_w": None if check_w is None else float(check_w),
        "cost": None if cost is None else float(cost),
        "per_iter_s": None if niter is None else med / niter,
        "times": [float(t) for t in times],
    }


# --------------------------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------------------------

NY, NX, NZ = 20, 267, 550


def poststack_setup():
    """W1's operator and model, as pylops-mpi tutorials/poststack.py (no random numbers).

    m[y,x,z] = ln(2000 + 2z + 150 floor(z/50) + 0.5x + 2y) on (NY, NX, NZ) = (20, 267, 550);
    wavelet w = ricker(t[:21], f0=15) with t_k = k*0.004;
    BDiag = MPIBlockDiag([Top.H @ PoststackLinearModelling(w, nt0=NZ, spatdims=(ny_i, NX)) @ Top]),
    Top = Transpose((ny_i, NX, NZ), (2, 0, 1)): per trace, d = w * D m (D the centred first
    derivative along z with zero edges, * the 'same' convolution with the 41-sample wavelet).
    Returns (BDiag, m, counts) with m the flat SCATTER model (split along y)."""
    counts, y0 = row_split(NY)
    nyi = counts[RANK]
    y = np.arange(y0, y0 + nyi, dtype=np.int64)[:, None, None]
    x = np.arange(NX, dtype=np.int64)[None, :, None]
    z = np.arange(NZ, dtype=np.int64)[None, None, :]
    m_local = np.log(2000.0 + 2 * z + 150 * (z // 50) + 0.5 * x + 2 * y)
    wav = ricker(np.arange(21) * 0.004, f0=15)[0]
    Top = pylops.Transpose((nyi, NX, NZ), (2, 0, 1), dtype=np.float64)
    PPop = PoststackLinearModelling(wav, nt0=NZ, spatdims=(nyi, NX))
    BDiag = MPIBlockDiag(ops=[Top.H @ PPop @ Top])
    m = DistributedArray(
        global_shape=NY * NX * NZ,
        local_shapes=[(c * NX * NZ,) for c in counts],
        partition=Partition.SCATTER,
        dtype=np.float64,
    )
    m[:] = m_local.ravel()
    return BDiag, m, counts


def forward_and_adjoint(name, Op, x, n, reps, warmup):
    """The records of ``Op.matvec(x)`` and ``Op.rmatvec(x)`` (the same x), each output freed
    before the next is timed."""
    times, y = timed(lambda: Op.matvec(x), reps, warmup)
    recs = [record(name, "matvec", Op.shape, n, times, y=y)]
    y = None
    times, z = timed(lambda: Op.rmatvec(x), reps, warmup)
    recs.append(record(name, "rmatvec", Op.shape, n, times, y=z))
    return recs


def timed_cgls(name, Op, data, m, niter, reps, warmup):
    """The record of ``cgls(Op, data, x0=0, niter, tol=0)`` timed as one call (``m`` gives the
    model space); cost = pylops-mpi's recursive residual norm ||s|| after the last iteration."""
    x0 = m.zeros_like()
    times, out = timed(lambda: cgls(Op, data, x0=x0, niter=niter, tol=0.0), reps, warmup)
    x, _, iiter, _, _, cost = out
    assert iiter == niter, f"cgls stopped after {iiter} iterations"
    return record(name, "cgls", Op.shape, m.global_shape[0], times, y=x, cost=cost[-1],
                  niter=niter)


def w1(reps, warmup, dtype):
    """W1 poststack_matvec: d = BDiag m (matvec), a = BDiag^T d (rmatvec, on the matvec output).

    Checks: ||d||, ||a|| (and the weighted versions)."""
    BDiag, m, _ = poststack_setup()
    name, n = "poststack_matvec", m.global_shape[0]
    times, d = timed(lambda: BDiag.matvec(m), reps, warmup)
    recs = [record(name, "matvec", BDiag.shape, n, times, y=d)]
    times, a = timed(lambda: BDiag.rmatvec(d), reps, warmup)
    recs.append(record(name, "rmatvec", BDiag.shape, d.global_shape[0], times, y=a))
    return recs


def w2(reps, warmup, dtype):
    """W2 poststack_cgls: x = cgls(BDiag, d, x0=0, niter=30, tol=0), d = BDiag m (no noise).

    pylops-mpi CGLS (damp=0): s = d - Op x0; r = Op^T s; c = r; q = Op c; kold = r.r; then 30 times
    a = kold/(q.q); x += a c; s -= a q; r = Op^T s; k = r.r; c = r + (k/kold) c; q = Op c; kold = k.
    Timed: the whole cgls call. Checks: final x; cost = ||s|| after the last iteration."""
    BDiag, m, _ = poststack_setup()
    d = BDiag.matvec(m)
    return [timed_cgls("poststack_cgls", BDiag, d, m, 30, reps, warmup)]


# W12's TV weight, iterations and inner CG steps; the steps tau = mu = 0.95 / sqrt(12) bound
# tau mu |grad|^2 <= 0.95^2 for the 3-D forward gradient (|grad|^2 <= 12).
W12_EPS, W12_NITER, W12_INNER = 0.01, 10, 3
W12_STEP = 0.95 / math.sqrt(12.0)


def w12(reps, warmup, dtype):
    """W12 poststack_tv: PrimalDual(MPIL2(BDiag, d, x0=0, niter=3, warm=True, solver="cg",
    tol=0), MPIL21(ndim=3, sigma=0.01), MPIGradient(dims, kind="forward", edge=False), x0=0,
    y0=0, tau=mu=0.95/sqrt(12) (as float64 arrays: a float is rounded to float32), niter=10,
    gfirst=True), d = BDiag m of W1 (no noise). Timed: MPIL2's construction (BDiag^H d) and the
    solve. Checks: the final x."""
    from pylops_mpi.proximal.optimization import PrimalDual
    from pylops_mpi.proximal.proximal import MPIL2, MPIL21

    BDiag, m, _ = poststack_setup()
    d = BDiag.matvec(m)
    grad = pylops_mpi.basicoperators.MPIGradient(dims=(NY, NX, NZ), kind="forward", edge=False)
    x0 = m.zeros_like()
    y0 = grad.matvec(x0)
    steps = W12_STEP * np.ones(W12_NITER)

    def solve():
        f = MPIL2(Op=BDiag, b=d, x0=x0, niter=W12_INNER, warm=True, solver="cg",
                  kwargs_solver=dict(tol=0.0))
        g = MPIL21(ndim=3, sigma=W12_EPS)
        return PrimalDual(f, g, grad, x0, y0, steps, steps, niter=W12_NITER, gfirst=True)

    times, x = timed(solve, reps, warmup)
    return [record("poststack_tv", "primaldual", BDiag.shape, m.global_shape[0], times, y=x,
                   niter=W12_NITER)]


def w3(reps, warmup, dtype):
    """W3 laplacian3d: L = MPILaplacian(dims=(160,160,160), axes=(0,1,2), weights=(1,1,1),
    sampling=(1,1,1)) = D2_0 + D2_1 + D2_2, (D2 x)[i] = x[i+1] - 2x[i] + x[i-1] inside, 0 at the
    two ends of each axis. x = sym(160^3) (complex128: csym). Timed: y = L x, z = L^T x (same x)."""
    dims = (160, 160, 160)
    n = int(np.prod(dims))
    x, _ = scatter_rows(dims, 0, dtype)
    L = MPILaplacian(dims=dims, axes=(0, 1, 2), weights=(1, 1, 1), sampling=(1, 1, 1), dtype=dtype)
    return forward_and_adjoint("laplacian3d", L, x, n, reps, warmup)


def w4(reps, warmup, dtype):
    """W4 firstderivative2d: D = MPIFirstDerivative(dims=(4000,2000), kind="centered") along
    axis 0: y[i,:] = 0.5 (x[i+1,:] - x[i-1,:]) for 1 <= i <= 3998, rows 0 and 3999 zero.
    x = sym(8e6). Timed: y = D x, z = D^T x (same x)."""
    dims = (4000, 2000)
    n = dims[0] * dims[1]
    x, _ = scatter_rows(dims, 0, dtype)
    D = MPIFirstDerivative(dims=dims, kind="centered", dtype=dtype)
    return forward_and_adjoint("firstderivative2d", D, x, n, reps, warmup)


def w5(reps, warmup, dtype):
    """W5 stacked_reg_cgls: x = cgls([BDiag; 10 Lap], [d; 0], x0=0, niter=20, tol=0).

    BDiag, m, d of W1/W2; Lap = MPILaplacian(dims=(20,267,550), axes=(0,1,2)) as W3;
    StackOp = MPIStackedVStack([BDiag, sqrt(1e2) Lap]), data StackedDistributedArray([d, 0]).
    Dot products and norms of stacked vectors sum over both blocks. Checks: final x;
    cost = sqrt(||d - BDiag x||^2 + ||10 Lap x||^2) (pylops-mpi's recursive residual ||s||)."""
    BDiag, m, _ = poststack_setup()
    d = BDiag.matvec(m)
    Lap = MPILaplacian(dims=(NY, NX, NZ), axes=(0, 1, 2), weights=(1, 1, 1), sampling=(1, 1, 1),
                       dtype=np.float64)
    StackOp = MPIStackedVStack([BDiag, np.sqrt(1e2) * Lap])
    dstack = StackedDistributedArray([d, m.zeros_like()])
    return [timed_cgls("stacked_reg_cgls", StackOp, dstack, m, 20, reps, warmup)]


def w6(reps, warmup, dtype):
    """W6 vector_ops on N = 2e7, SCATTER: x = rng.random(N), y = rng.random(N) (not sym).

    Timed separately: x.dot(y) = sum x_i y_i (local dot + allreduce); x.norm() =
    (sum |x_i|^2)^0.5 (local sum + allreduce); x + y; x * 2.0 (each a new DistributedArray).
    Checks: the dot and norm values; check/check_w of x + y and 2x."""
    n = 20_000_000
    x, nxt = scatter_rows((n,), 0, np.float64, uniform=True)
    y, _ = scatter_rows((n,), nxt, np.float64, uniform=True)
    name = "vector_ops"
    times, v = timed(lambda: x.dot(y), reps, warmup)
    recs = [record(name, "dot", (1, n), n, times, check=v)]
    times, v = timed(lambda: x.norm(), reps, warmup)
    recs.append(record(name, "norm", (1, n), n, times, check=v))
    times, s = timed(lambda: x + y, reps, warmup)
    recs.append(record(name, "add", (n, n), n, times, y=s))
    s = None
    times, s = timed(lambda: x * 2.0, reps, warmup)
    recs.append(record(name, "scale", (n, n), n, times, y=s))
    return recs


def w7(reps, warmup, dtype):
    """W7 vstack_matmul: Op = MPIVStack([MatrixMult(A_r)]), A = sym(4000*2000) reshaped
    (4000, 2000) (complex128: csym), rank r holding its rows A_r; then x = sym(2000),
    y = sym(4000). Timed: matvec A x (x BROADCAST, result SCATTER); rmatvec A^H y (y SCATTER,
    local A_r^H y_r, allreduce, result BROADCAST). Checks: ||A x||, ||A^H y||."""
    nr, nc = 4000, 2000
    counts, start = row_split(nr)
    A_r = np.empty((counts[RANK], nc), dtype=dtype)
    nxt = fill_block(A_r.reshape(-1), 0, nr * nc, start * nc)
    xg = np.empty(nc, dtype=dtype)
    nxt = fill_block(xg, nxt, nc, 0)
    x = broadcast(xg, dtype)
    y, _ = scatter_rows((nr,), nxt, dtype)
    Op = MPIVStack(ops=[pylops.MatrixMult(A_r, dtype=dtype)], dtype=dtype)
    times, ax = timed(lambda: Op.matvec(x), reps, warmup)
    recs = [record("vstack_matmul", "matvec", Op.shape, nc, times, y=ax)]
    times, aty = timed(lambda: Op.rmatvec(y), reps, warmup)
    recs.append(record("vstack_matmul", "rmatvec", Op.shape, nr, times, y=aty))
    return recs


# W8: sizes of pylops-mpi examples/plot_mdc.py (nt = 400 one-sided samples, 61 receivers, 101
# sources, dt = 0.004, 200 frequencies), in float64 / complex128.
MDC_PAR = {"ox": -300, "dx": 10, "nx": 61, "oy": -500, "dy": 10, "ny": 101, "ot": 0, "dt": 0.004,
           "nt": 400, "f0": 20, "nfmax": 200}
MDC_NT2 = 2 * MDC_PAR["nt"] - 1


def mdc_inputs(f0, f1):
    """W8's kernel frequencies f0..f1 and model, built as plot_mdc.py does (float64/complex128).

    Model m = hyperbolic2d(x, t, 0.2, 1100, 1.0, wav)[0] (the spiky one), kernel
    Gwav[iy] = hyperbolic2d(x - y[iy], t, (0.2, 0.5, 0.7), (1200, 1500, 2000), (1, 0.6, 0.5),
    wav)[1] * taper3d(400, (101, 61), (5, 5), "hanning")[iy], wav = ricker(t[:41], f0=20); both
    get 399 leading zero samples; G = rfft(Gwav2, 799, axis=-1)[..., :200] transposed to
    (f, s, r). The kernel is built source by source, keeping only frequencies f0..f1, so that a
    rank never holds the whole time-domain kernel. Returns (G[f0:f1] (f1-f0, 101, 61), m (799, 61))."""
    par = MDC_PAR
    nt, nx, ny = par["nt"], par["nx"], par["ny"]
    tap = taper3d(nt, (ny, nx), (5, 5), tapertype="hanning")
    t, _, x, y = makeaxis(par)
    wav = ricker(t[:41], f0=par["f0"])[0]
    m = hyperbolic2d(x, t, 0.2, 1100.0, 1.0, wav)[0]
    m = np.concatenate((np.zeros((nx, nt - 1)), m), axis=-1).T.copy()
    G = np.empty((f1 - f0, ny, nx), dtype=np.complex128)
    for iy, y0 in enumerate(y):
        gwav = hyperbolic2d(x - y0, t, (0.2, 0.5, 0.7), (1200.0, 1500.0, 2000.0), (1.0, 0.6, 0.5),
                            wav)[1] * tap[iy]
        gwav2 = np.concatenate((np.zeros((nx, nt - 1)), gwav), axis=-1)
        G[:, iy, :] = np.fft.rfft(gwav2, MDC_NT2, axis=-1)[:, f0:f1].T
    return G, m


def write_mdc_inputs(folder):
    """W8's whole kernel and model as .npy files for distlops-bench --inputs (see the module doc)."""
    os.makedirs(folder, exist_ok=True)
    G, m = mdc_inputs(0, MDC_PAR["nfmax"])
    np.save(os.path.join(folder, "G.npy"), G.view(np.float64).reshape(G.shape + (2,)))
    np.save(os.path.join(folder, "m.npy"), m)


def w8(reps, warmup, dtype):
    """W8 mdc: Op = MPIMDC(G_rank, nt=799, nv=1, nfreq=200, dt=0.004, dr=1.0, twosided=True)
    (numpy FFT, saveGt=True, usematmul=False) with the frequencies split over ranks
    (local_split of 200). Timed: d = Op m (m BROADCAST), a = Op^H d. Checks on the real parts."""
    counts, f0 = row_split(MDC_PAR["nfmax"])
    G, m = mdc_inputs(f0, f0 + counts[RANK])
    Op = MPIMDC(G, nt=MDC_NT2, nv=1, nfreq=MDC_PAR["nfmax"], dt=MDC_PAR["dt"], dr=1.0,
                twosided=True)
    x = broadcast(m, np.float64)
    name = "mdc"
    times, d = timed(lambda: Op.matvec(x), reps, warmup)
    check, check_w = checksums(d, real=True)
    recs = [record(name, "matvec", Op.shape, x.global_shape[0], times, check=check,
                   check_w=check_w)]
    times, a = timed(lambda: Op.rmatvec(d), reps, warmup)
    check, check_w = checksums(a, real=True)
    recs.append(record(name, "rmatvec", Op.shape, d.global_shape[0], times, check=check,
                       check_w=check_w))
    return recs


def w9(reps, warmup, dtype):
    """W9 fft2d: MPIFFT2D(dims=(1024, 1024), dtype=complex128) (axes (0, 1), norm "none", no
    shifts; mpi4py-fft with FFTW). x = sym(N) + 1j sym(N) reshaped (1024, 1024), split along
    axis 0. Timed: y = F x, z = F^H x (same x); outputs come back split along axis 0."""
    dims = (1024, 1024)
    x, _ = scatter_rows(dims, 0, dtype)
    Op = MPIFFT2D(dims=dims, dtype=dtype)
    return forward_and_adjoint("fft2d", Op, x, int(np.prod(dims)), reps, warmup)


def w10(reps, warmup, dtype):
    """W10 fft3d: MPIFFTND(dims=(256, 256, 256), axes=(0, 1, 2), dtype=complex128) (norm "none",
    no shifts). x = sym(N) + 1j sym(N) reshaped (256, 256, 256), split along axis 0. Timed:
    y = F x, z = F^H x (same x)."""
    dims = (256, 256, 256)
    x, _ = scatter_rows(dims, 0, dtype)
    Op = MPIFFTND(dims=dims, axes=(0, 1, 2), dtype=dtype)
    return forward_and_adjoint("fft3d", Op, x, int(np.prod(dims)), reps, warmup)


# W13: PyLops-MPI's Kirchhoff benchmark geometry (examples' lsm.py): an 81 x 60 image 4 m apart,
# v = 1000 m/s, 20 sources at z = 10 m and 11 receivers at z = 20 m from x = 40 to 284 m,
# 651 samples of 4 ms, a 20 Hz Ricker of 81 samples.
KIRCH = {"nx": 81, "nz": 60, "d": 4.0, "vel": 1000.0, "ns": 20, "nr": 11, "nt": 651, "dt": 0.004}


def w13(reps, warmup, dtype):
    """W13 kirchhoff: Op = MPIVStack([Kirchhoff(z, x, t, srcs_rank, recs, vel, wav, wavc,
    mode="analytic", engine="numba")]), the sources split in row_split blocks; x = sym(nx nz)
    (BROADCAST), y = sym(ns nr nt) (SCATTER by sources). Timed: matvec (modelling) and rmatvec
    (migration). Checks: ||K x||, ||K^H y||."""
    import warnings

    from pylops.waveeqprocessing import Kirchhoff

    k = KIRCH
    x_ax = np.arange(k["nx"]) * k["d"]
    z_ax = np.arange(k["nz"]) * k["d"]
    t = np.arange(k["nt"]) * k["dt"]
    counts, start = row_split(k["ns"])
    sx = np.linspace(40.0, 284.0, k["ns"])[start : start + counts[RANK]]
    srcs = np.vstack((sx, 10.0 * np.ones(sx.size)))
    rx = np.linspace(40.0, 284.0, k["nr"])
    recs = np.vstack((rx, 20.0 * np.ones(k["nr"])))
    wav, _, wavc = ricker(t[:41], f0=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kop = Kirchhoff(z_ax, x_ax, t, srcs, recs, k["vel"], wav, wavc, mode="analytic",
                        engine="numba", dtype=dtype)
    Op = MPIVStack(ops=[kop], dtype=dtype)
    ni, ntr = k["nx"] * k["nz"], k["nr"] * k["nt"]
    xg = np.empty(ni, dtype=dtype)
    nxt = fill_block(xg, 0, ni, 0)
    x = broadcast(xg, dtype)
    y = DistributedArray(global_shape=k["ns"] * ntr, local_shapes=[(c * ntr,) for c in counts],
                         partition=Partition.SCATTER, dtype=dtype)
    fill_block(y.local_array, nxt, k["ns"] * ntr, start * ntr)
    times, kx = timed(lambda: Op.matvec(x), reps, warmup)
    recs_out = [record("kirchhoff", "matvec", Op.shape, ni, times, y=kx)]
    times, kty = timed(lambda: Op.rmatvec(y), reps, warmup)
    recs_out.append(record("kirchhoff", "rmatvec", Op.shape, k["ns"] * ntr, times, y=kty))
    return recs_out


# W14: a seismic section of NX traces by NT time samples, non-stationary convolution with NH-tap
# filters, along the traces (axis 0) and along time (axis 1). Per case: (op prefix, axis, first
# filter position, spacing, number of filters); every block edge at 1, 2 and 4 ranks is at least
# NH // 2 samples from the neighbour filters either side, where PyLops-MPI's forward is exact.
NSC = {"nx": 2048, "nt": 1000, "nh": 31}
NSC_CASES = (("traces", 0, 32, 64, 32), ("time", 1, 25, 50, 20))


def block_checksums(local, r0, c0, ncols):
    """(check, check_w) of a global (rows, ncols) array in C order from this rank's 2-D block
    ``local`` at (r0, c0): the sums over the block with its global flat indices, added over the
    ranks (W14, whose blocks along time are not contiguous in the global order)."""
    sums = np.zeros(2)
    c = c0 + np.arange(local.shape[1], dtype=np.int64)
    for i in range(0, local.shape[0], 256):
        blk = local[i:i + 256]
        p = blk * blk
        idx = (r0 + i + np.arange(blk.shape[0], dtype=np.int64))[:, None] * ncols + c[None, :]
        sums[0] += p.sum()
        sums[1] += ((1.0 + idx % 7) * p).sum()
    total = np.zeros(2)
    comm.Allreduce(sums, total, op=MPI.SUM)
    return math.sqrt(total[0]), math.sqrt(total[1])


def w14(reps, warmup, dtype):
    """W14 nonstationary: MPINonStationaryConvolve1D((NX, NT), hs, ih, axis) for each case of
    NSC_CASES, distributed along the convolution axis (PyLops-MPI's only layout; NX and NT divide
    by the ranks). Draws: the filters of the traces case, sym(32 * 31), then those of the time
    case, sym(20 * 31), then x = sym(NX NT). Timed: Op.matvec(x), Op.rmatvec(x) (the same x).
    Checks on the global (NX, NT) outputs in C order."""
    from pylops_mpi.signalprocessing import MPINonStationaryConvolve1D

    nx, nt, nh = NSC["nx"], NSC["nt"], NSC["nh"]
    dims, n = (nx, nt), nx * nt
    pos, filters = 0, []
    for _, _, _, _, nf in NSC_CASES:
        hs = np.empty((nf, nh))
        pos = fill_block(hs, pos, hs.size, 0)
        filters.append(hs)
    recs = []
    for (label, axis, oh, dh, nf), hs in zip(NSC_CASES, filters):
        ih = oh + dh * np.arange(nf)
        nloc = dims[axis] // SIZE
        r0, c0 = (RANK * nloc, 0) if axis == 0 else (0, RANK * nloc)
        shape = (nloc, nt) if axis == 0 else (nx, nloc)
        local = np.empty(shape, dtype=dtype)
        fill_2d(local, pos, dims, r0, c0)
        x = DistributedArray(global_shape=n, local_shapes=[(local.size,)] * SIZE,
                             partition=Partition.SCATTER, dtype=dtype)
        x[:] = local.ravel()
        local = None
        Op = MPINonStationaryConvolve1D(dims, hs, ih, axis=axis, dtype=dtype)
        for op, fn in (("matvec", Op.matvec), ("rmatvec", Op.rmatvec)):
            times, y = timed(lambda: fn(x), reps, warmup)
            check, check_w = block_checksums(y.local_array.reshape(shape), r0, c0, nt)
            recs.append(record("nonstationary", f"{label}_{op}", Op.shape, n, times,
                               check=check, check_w=check_w))
            y = None
        Op = x = None
    return recs


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W6": w6, "W7": w7, "W8": w8,
             "W9": w9, "W10": w10, "W12": w12, "W13": w13, "W14": w14}


# N = K = M of W11 (environment W11_SIZE for quick checks; the benchmark uses 2000).
W11_SIZE = int(os.environ.get("W11_SIZE", "2000"))


def fill_2d(out, stream_start, total_shape, r0, c0):
    """Fill the 2-D ``out`` with the block at ``(r0, c0)`` of the row-major global array of
    ``total_shape`` whose values are drawn from ``stream_start`` (see ``fill_block``), one row
    at a time."""
    for i in range(out.shape[0]):
        fill_block(out[i], stream_start, total_shape[0] * total_shape[1],
                   (r0 + i) * total_shape[1] + c0)


def w11(reps, warmup, dtype):
    """W11 matmul: MPIMatrixMult(A, M, kind="block" and "summa"), N = K = M = 2000,
    A = sym(N*K) (N, K), then X = sym(K*M) (K, M), then Y = sym(N*M) (N, M), row-major. The
    ranks form PyLops-MPI's square grid through ``active_grid_comm``: with a non-square count
    (2 ranks) only the first isqrt(P)^2 ranks work, the others wait at the timing barriers.
    Layouts as pylops-mpi's examples (plot_matrixmult.py for block, plot_summamatrixmult.py and
    ``local_block_split`` for summa). Timed: Op.matvec(x), Op.rmatvec(y). Checks on the global
    output matrix in C order (gathered on the active ranks after timing)."""
    from pylops_mpi.basicoperators.MatrixMult import (
        MPIMatrixMult, active_grid_comm, local_block_split)
    n = k = m = W11_SIZE
    sub, srank, row, col, active = active_grid_comm(comm, n, m)
    xstart, ystart = n * k, n * k + k * m

    def dist(local, gshape, r0, c0, mask=None):
        """A flat SCATTER array of the active comm holding the 2-D block ``local``."""
        sizes = sub.allgather(local.size)
        v = DistributedArray(global_shape=sum(sizes), local_shapes=[(s,) for s in sizes],
                             partition=Partition.SCATTER, mask=mask, base_comm=sub, dtype=dtype)
        v[:] = local.ravel()
        return v

    def global_checks(v, ncols_local, gshape, r0, c0):
        """(check, check_w) of the global matrix assembled from every active rank's block."""
        if active:
            local = v.local_array.reshape(-1, ncols_local) if ncols_local else np.empty((0, 0))
            parts = sub.allgather((r0, c0, local))
            g = np.zeros(gshape, dtype=dtype)
            for pr0, pc0, blk in parts:
                g[pr0:pr0 + blk.shape[0], pc0:pc0 + blk.shape[1]] = blk
            p = (g.real ** 2 + g.imag ** 2).ravel()
            w = 1.0 + (np.arange(p.size, dtype=np.int64) % 7)
            sums = (math.sqrt(p.sum()), math.sqrt((w * p).sum()))
        else:
            sums = None
        return comm.bcast(sums, root=0)

    recs = []
    for kind in ("block", "summa"):
        Op = x = y = None
        if active:
            pp = math.isqrt(sub.Get_size())
            if kind == "block":
                br, bc = math.ceil(n / pp), math.ceil(m / pp)
                rs, re = col * br, min(n, col * br + br)
                cs, ce = row * bc, min(m, row * bc + bc)
                A = np.empty((re - rs, k), dtype=dtype)
                fill_2d(A, 0, (n, k), rs, 0)
                xl = np.empty((k, ce - cs), dtype=dtype)
                fill_2d(xl, xstart, (k, m), 0, cs)
                yl = np.empty((n, ce - cs), dtype=dtype)
                fill_2d(yl, ystart, (n, m), 0, cs)
                mask = [r % pp for r in range(sub.Get_size())]
                xo, yo, ncx, ncy = (0, cs), (0, cs), ce - cs, ce - cs
            else:
                ar, ac = local_block_split((n, k), srank, sub)
                A = np.empty((ar.stop - ar.start, ac.stop - ac.start), dtype=dtype)
                fill_2d(A, 0, (n, k), ar.start, ac.start)
                xr, xc = local_block_split((k, m), srank, sub)
                xl = np.empty((xr.stop - xr.start, xc.stop - xc.start), dtype=dtype)
                fill_2d(xl, xstart, (k, m), xr.start, xc.start)
                yr, yc = local_block_split((n, m), srank, sub)
                yl = np.empty((yr.stop - yr.start, yc.stop - yc.start), dtype=dtype)
                fill_2d(yl, ystart, (n, m), yr.start, yc.start)
                mask = None
                xo, yo = (xr.start, xc.start), (yr.start, yc.start)
                ncx, ncy = xc.stop - xc.start, yc.stop - yc.start
            Op = MPIMatrixMult(A, m, base_comm=sub, kind=kind, dtype=dtype)
            x = dist(xl, (k, m), *xo, mask=mask)
            y = dist(yl, (n, m), *yo, mask=mask)
            del A, xl, yl
        shape = (n * m, k * m)
        times, ax = timed(lambda: Op.matvec(x) if active else None, reps, warmup)
        check, check_w = global_checks(ax, ncy, (n, m), *yo) if active else global_checks(
            None, 0, (n, m), 0, 0)
        recs.append(record("matmul", f"{kind}_matvec", shape, k * m, times,
                           check=check, check_w=check_w))
        ax = None
        times, aty = timed(lambda: Op.rmatvec(y) if active else None, reps, warmup)
        check, check_w = global_checks(aty, ncx, (k, m), *xo) if active else global_checks(
            None, 0, (k, m), 0, 0)
        recs.append(record("matmul", f"{kind}_rmatvec", shape, n * m, times,
                           check=check, check_w=check_w))
    return recs


WORKLOADS["W11"] = w11
DEFAULT_REPS["W11"] = 5


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    p.add_argument("--dtype", default="float64", choices=["float64", "complex128"])
    p.add_argument("--reps", type=int, default=None, help="timed repetitions (default: the spec's)")
    p.add_argument("--warmup", type=int, default=1, help="untimed calls first (spec: 1)")
    p.add_argument("--out", default=None, help="also append the JSON lines to this file")
    p.add_argument("--write-inputs", default=None, metavar="DIR",
                   help="W8: write G.npy and m.npy to DIR for distlops-bench --inputs, and exit")
    args = p.parse_args()
    if args.write_inputs:
        if args.workload != "W8":
            p.error("--write-inputs exists for W8 only")
        if RANK == 0:
            write_mdc_inputs(args.write_inputs)
        return 0
    if args.dtype == "complex128" and args.workload not in COMPLEX_OK:
        p.error(f"--dtype complex128 exists for {sorted(COMPLEX_OK)} only")
    if args.dtype != "complex128" and args.workload in COMPLEX_ONLY:
        p.error(f"{args.workload} exists in complex128 only")
    reps = DEFAULT_REPS[args.workload] if args.reps is None else args.reps
    if reps < 1:
        p.error("--reps must be >= 1")

    recs = WORKLOADS[args.workload](reps, args.warmup, np.dtype(args.dtype))
    peak = peak_rss_mb()  # collective: every rank reads its own VmHWM
    if RANK != 0:
        return
    lines = []
    for r in recs:
        full = {"side": "pylops-mpi", "workload": args.workload, "np": SIZE, "dtype": args.dtype}
        full.update(r)
        full["peak_rss_mb"] = peak
        # Fixed field order: identification, results, then the list of times.
        times = full.pop("times")
        full["times"] = times
        lines.append(json.dumps(full))
    print("\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
