#!/usr/bin/env bash
# scripts/py-segy-env.sh: create or update .venv-segy, the Python environment with segyio that the
# SEG-Y tests use as an independent tool (io/tests/python/), with the exact versions pinned in
# io/tests/python/requirements.txt, and print its interpreter.
#
#   export DISTLOPS_SEGYIO_PYTHON="$(scripts/py-segy-env.sh)"   # what scripts/test.sh does
#
# Run it (do not source it). Idempotent: the venv is created only when missing, and pip runs only
# when an installed version differs from the pins (a second run takes well under a second).
# If Python's venv module is missing (Debian without python3-venv) it installs python3-venv with
# apt-get (through sudo when not root). Environment: PYTHON (interpreter, default python3),
# SEGY_VENV (where the venv goes, default .venv-segy in the repository).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${SEGY_VENV:-$root/.venv-segy}"
req="$root/io/tests/python/requirements.txt"
python="${PYTHON:-python3}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ ! -x "$venv/bin/python" ]; then
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    as_root apt-get install -y -qq python3-venv >/dev/null ||
      { as_root apt-get update -qq >/dev/null && as_root apt-get install -y -qq python3-venv >/dev/null; }
    "$python" -m venv "$venv"
  fi
  # The repository's .gitignore need not know about this directory.
  echo '*' >"$venv/.gitignore"
fi

# Name==version pairs of the requirements that the venv does not have exactly.
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
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: -r "$req" >&2
  "$venv/bin/python" -c "import numpy, segyio" >&2
fi

echo "$venv/bin/python"
