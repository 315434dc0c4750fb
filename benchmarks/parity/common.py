"""Helpers shared by the parity scripts (solvers.py, fft.py): the .npy convention for complex
arrays, the case lines of cases.txt and the error measures.

Complex arrays are stored as real arrays with a last axis of 2 (re, im), the memory layout of
complex numbers, so that distlops' examples read and write them with one code path.
"""

import os
import sys

import numpy as np


def to_real(a):
    """Complex arrays as real arrays with a last axis (re, im); real arrays unchanged."""
    a = np.asarray(a)
    return np.stack([a.real, a.imag], axis=-1) if np.iscomplexobj(a) else a


def from_real(a, dtype):
    """The inverse of `to_real` for the dtype names of the cases ("f64", "c128")."""
    return a[..., 0] + 1j * a[..., 1] if dtype == "c128" else a


def parse(line):
    """A line `name key=value ...` of cases.txt as (name, {key: value})."""
    name, *kv = line.split()
    return name, dict(item.split("=", 1) for item in kv)


def read_cases(folder):
    """Every case of `folder`/cases.txt, as `parse` returns them."""
    return [parse(line) for line in open(f"{folder}/cases.txt") if line.strip()]


def rel(a, b):
    """|a - b|_2 / |b|_2 (|a - b|_2 when b is zero)."""
    nb = np.linalg.norm(b)
    return np.linalg.norm(a - b) / (nb if nb > 0 else 1.0)


def rel_max(a, b):
    """max |a - b| / max |b| (max |a - b| when b is zero); inf when the shapes differ."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return np.inf
    mb = np.max(np.abs(b)) if b.size else 0.0
    return np.max(np.abs(a - b)) / (mb if mb > 0 else 1.0) if b.size else 0.0


def dist(v, counts, rank, dtype):
    """`v` as a PyLops-MPI DistributedArray split with `counts` (this rank's part filled)."""
    import pylops_mpi

    d = pylops_mpi.DistributedArray(global_shape=len(v), local_shapes=[(c,) for c in counts],
                                    dtype=dtype)
    o = sum(counts[:rank])
    d[:] = v[o:o + counts[rank]]
    return d


def main(make, reference, compare, default_tol=1e-10):
    """The command line of a case-based parity script: `make DIR`, `reference DIR` or
    `compare DIR NP...`; `compare` returns the worst difference, and the exit status says whether
    it is within PARITY_TOL (default `default_tol`)."""
    mode, folder = sys.argv[1], sys.argv[2]
    if mode == "make":
        make(folder)
    elif mode == "reference":
        reference(folder)
    elif mode == "compare":
        worst = compare(folder, [int(v) for v in sys.argv[3:]])
        sys.exit(0 if worst <= float(os.environ.get("PARITY_TOL", str(default_tol))) else 1)
    else:
        sys.exit(f"unknown mode {mode}")
