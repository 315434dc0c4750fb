#!/usr/bin/env bash
# benchmarks/venv.sh: create or update benchmarks/.venv, the Python environment of the PyLops-MPI
# side of the benchmark, with the exact versions pinned in benchmarks/requirements.txt.
#
#   benchmarks/venv.sh                    # prints nothing but errors; afterwards use
#   benchmarks/.venv/bin/python ...       # (e.g. mpirun -n 2 benchmarks/.venv/bin/python benchmarks/pylops/bench.py ...)
#   PY=$(benchmarks/venv.sh --print-python)   # same, then prints the venv's python path
#   benchmarks/venv.sh --gpu              # also requirements-gpu.txt (CuPy, NCCL: benchmarks/gpu.sh)
#
# Run it (do not source it). Idempotent: the venv is created only when missing, and pip runs only
# when an installed version differs from requirements.txt (so a second run takes about a second).
# If Python's venv module is missing (Debian without python3-venv) it installs python3-venv with
# apt-get (through sudo when not root). Environment: PYTHON (interpreter, default python3).
# mpi4py is compiled against the MPI found by mpicc (Open MPI here), not taken as a binary wheel,
# so that it uses the same MPI library as distlops.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
req="$here/requirements.txt"
python="${PYTHON:-python3}"

print_python=0
gpu=0
for arg in "$@"; do
  case "$arg" in
    --print-python) print_python=1 ;;
    --gpu) gpu=1 ;;
    -h | --help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "venv.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ ! -x "$venv/bin/python" ]; then
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
    # Debian splits the venv module (and ensurepip) into python3-venv.
    rm -rf "$venv"
    as_root apt-get install -y -qq python3-venv >/dev/null ||
      { as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq python3-venv >/dev/null; }
    "$python" -m venv "$venv"
  fi
  # The repository's .gitignore need not know about this directory.
  echo '*' >"$venv/.gitignore"
fi

# Name==version pairs of requirements.txt that the venv does not have exactly.
missing="$("$venv/bin/python" - "$req" <<'PY'
import re, sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line)
    if not m:
        continue
    try:
        ok = version(m[1]) == m[2]
    except PackageNotFoundError:
        ok = False
    if not ok:
        print(line)
PY
)"

if [ -n "$missing" ]; then
  # mpi4py-fft compiles against FFTW's headers (Debian: libfftw3-dev).
  if [ ! -e /usr/include/fftw3.h ]; then
    as_root apt-get install -y -qq libfftw3-dev >/dev/null ||
      { as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq libfftw3-dev >/dev/null; }
  fi
  # mpi4py from source, built with the system's mpicc (Open MPI); needs a C compiler.
  export MPICC="${MPICC:-$(command -v mpicc.openmpi || command -v mpicc || echo mpicc)}"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-binary mpi4py,mpi4py-fft -r "$req" >/dev/null
  # Check that the pins took.
  "$venv/bin/python" -c "import numpy, scipy, mpi4py.MPI, pylops, pylops_mpi, mpi4py_fft"
fi

if [ "$gpu" -eq 1 ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements-gpu.txt" >/dev/null
fi

if [ "$print_python" -eq 1 ]; then
  echo "$venv/bin/python"
fi
