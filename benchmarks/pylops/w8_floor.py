"""How fast W8 (MDC) could be on this machine: the 5x target against what any implementation
has to do, measured in one process (one rank, one thread).

    benchmarks/.venv/bin/python benchmarks/pylops/w8_floor.py [--rounds 5] [--reps 100]
        [--distlops target/release/distlops-bench --inputs DIR]

Each round times, with the same inputs as W8 (``bench.mdc_inputs``):

* ``mdc``: PyLops-MPI's ``MPIMDC`` forward and adjoint on one rank (the reference of the 5x
  target; ``budget`` is its median divided by 5);
* ``transforms``: only the time transforms a forward product needs, with NumPy's FFT
  (pocketfft): the real FFT of the 61 model traces (799 samples) and the inverse real FFT of
  the 101 data traces from 200 bins;
* ``kernel read``: one pass over the complex128 kernel (19.7 MB), its float64 view as rows of
  1024 values times a vector of ones (OpenBLAS ``dgemv``, which streams the matrix): every
  product reads each kernel value once, so no implementation's kernel step is faster;
* ``kernel product``: the 200 products ``G[f] @ X[f]`` alone, as one batched ``np.matmul``
  (OpenBLAS);
* with ``--distlops``: distlops' own W8 (``distlops-bench --workload W8``, one rank) in the same
  round.

Per quantity the median over rounds of each round's 10th percentile (the uninterrupted runs) is
printed, in ms, then ``budget``, ``transforms + read`` (a floor: NumPy's transforms and a kernel
step as fast as reading the kernel) and ``transforms + product`` (the two steps with NumPy's
libraries). When these exceed the budget, 5x needs time transforms faster than NumPy's, or the
kernel read hidden behind them.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (sets one thread per process before numpy loads)
import numpy as np  # noqa: E402


def p10(fn, reps):
    """The 10th percentile of ``reps`` timed calls of fn (seconds), after one warm-up call."""
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 10]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--distlops", help="distlops-bench binary (optional)")
    ap.add_argument("--inputs", help="W8 inputs folder for distlops-bench (bench.py --write-inputs)")
    args = ap.parse_args()

    nf = bench.MDC_PAR["nfmax"]
    nt = bench.MDC_NT2
    G, m = bench.mdc_inputs(0, nf)
    Op = bench.MPIMDC(G, nt=nt, nv=1, nfreq=nf, dt=bench.MDC_PAR["dt"], dr=1.0, twosided=True)
    x = bench.broadcast(m, np.float64)
    d = Op.matvec(x)
    ms = np.fft.ifftshift(m, axes=0)  # (799, 61)
    dd = np.ascontiguousarray(np.fft.rfft(np.random.default_rng(0).random((nt, 101)), axis=0)[:nf])
    Gr = G.view(np.float64).reshape(-1)
    Gr = Gr[: Gr.size - Gr.size % 1024].reshape(-1, 1024)
    ones = np.ones(1024)
    X = np.ascontiguousarray(np.fft.rfft(ms, axis=0)[:nf])[:, :, None]  # (200, 61, 1)

    def transforms():
        np.fft.rfft(ms, axis=0)[:nf]
        np.fft.irfft(dd, nt, axis=0)

    cases = {
        "mdc matvec": lambda: Op.matvec(x),
        "mdc rmatvec": lambda: Op.rmatvec(d),
        "transforms": transforms,
        "kernel read": lambda: Gr @ ones,
        "kernel product": lambda: np.matmul(G, X),
    }
    got = {k: [] for k in cases}
    if args.distlops:
        got["distlops matvec"], got["distlops rmatvec"] = [], []
    for _ in range(args.rounds):
        for k, fn in cases.items():
            got[k].append(p10(fn, args.reps))
        if args.distlops:
            with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as out:
                cmd = [args.distlops, "--workload", "W8", "--reps", str(args.reps), "--out", out.name]
                if args.inputs:
                    cmd += ["--inputs", args.inputs]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
                for line in out:
                    r = json.loads(line)
                    ts = sorted(r["times"])
                    got[f"distlops {r['op']}"].append(ts[len(ts) // 10])
    med = {k: statistics.median(v) * 1e3 for k, v in got.items()}
    for k, v in med.items():
        print(f"{k:20s} {v:8.3f} ms")
    budget = min(med["mdc matvec"], med["mdc rmatvec"]) / 5
    floor = med["transforms"] + med["kernel read"]
    libs = med["transforms"] + med["kernel product"]
    print(f"{'budget (mdc / 5)':20s} {budget:8.3f} ms")
    print(f"{'transforms + read':20s} {floor:8.3f} ms")
    print(f"{'transforms + product':20s} {libs:8.3f} ms")
    print(json.dumps({"workload": "W8 floor", "p10_median_ms": med, "budget_ms": budget,
                      "transforms_plus_read_ms": floor, "transforms_plus_product_ms": libs,
                      "rounds": args.rounds, "reps": args.reps}))


if __name__ == "__main__":
    main()
