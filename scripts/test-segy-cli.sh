#!/usr/bin/env bash
# scripts/test-segy-cli.sh: the post-stack example on a SEG-Y cube written by an independent tool.
#
# 1. The example models small synthetic data (its own model, 6 x 16 x 48) and writes it as .npy.
# 2. segyio writes that data as a SEG-Y cube (IBM floats, an extended textual header, its own
#    trace headers: io/tests/python/segyio_write.py).
# 3. `poststack --data cube.sgy` runs under mpirun -n 1, 2 and 3.
# 4. Every output (.npy and .sgy) must be bitwise identical at the three rank counts.
# 5. segyio reads the inversions' SEG-Y files back: every header field must be the input's except
#    the sample format (IBM in, IEEE out, on purpose), and the samples exp() of the .npy volumes
#    (io/tests/python/segyio_check_copy.py).
# Expects scripts/mpi-env.sh to be sourced (scripts/test.sh does it); finds segyio through
# DISTLOPS_SEGYIO_PYTHON or makes its venv (scripts/py-segy-env.sh).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

py="${DISTLOPS_SEGYIO_PYTHON:-$(timeout --kill-after=30 900 scripts/py-segy-env.sh)}"
mpiexec="${MPIEXEC:-mpirun}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step "test-segy-cli.sh: build the example" 1200 cargo build -q "${BUILD[@]}" --example poststack
exe="$(example_bin poststack)"
common=(--niter 30 --quiet)

step "test-segy-cli.sh: synthetic data" 300 "$mpiexec" --oversubscribe -n 1 "$exe" --ny 6 --nx 16 \
  --nt 48 "${common[@]}" --no-figures --no-check --out "$tmp/synthetic" >/dev/null
step "test-segy-cli.sh: segyio writes the cube" 300 \
  "$py" io/tests/python/segyio_write.py "$tmp/cube.sgy" --data "$tmp/synthetic/data.npy" \
  --nil 6 --nxl 16 --nt 48 --il0 1001 --il-step 2 --xl0 200 --dt-us 4000 --delay-ms 0 \
  --format 1 --ext-headers 1

# Mistakes on the command line stop with one line naming the option and the value, before any
# work: --data without an impedance level, a Ricker wavelet written without its colon or with a
# frequency that is not a number.
bad_cli() {
  local want="$1"
  shift
  local msg rc=0
  msg="$("$exe" "$@" 2>&1 >/dev/null)" || rc=$?
  if [ "$rc" -ne 2 ] || [[ "$msg" != *"$want"* ]] || [ "$(printf '%s\n' "$msg" | wc -l)" -ne 1 ]; then
    echo "test-segy-cli.sh: poststack $* should stop with one line naming $want (exit $rc): $msg" >&2
    return 1
  fi
  echo "refused as it should: poststack $*: $msg"
}
bad_cli "--ai0" --data "$tmp/cube.sgy"
bad_cli "--wavelet ricker15" --data "$tmp/cube.sgy" --ai0 1 --wavelet ricker15
bad_cli "--wavelet ricker:abc" --data "$tmp/cube.sgy" --ai0 1 --wavelet ricker:abc
bad_cli "--niter ten" --niter ten
bad_cli "--smooth 0" --data "$tmp/cube.sgy" --ai0 1 --smooth 0
bad_cli "--smooth 4:x" --data "$tmp/cube.sgy" --ai0 1 --smooth 4:x

# --ai0 1: the results are impedance relative to a constant 1 (this cube has no absolute level).
for np in 1 2 3; do
  figures=()
  [ "$np" -eq 1 ] || figures=(--no-figures)
  step "test-segy-cli.sh: poststack --data under mpirun -n $np" 300 \
    "$mpiexec" --oversubscribe -n "$np" "$exe" --data "$tmp/cube.sgy" --ai0 1 "${common[@]}" \
    "${figures[@]}" --out "$tmp/np$np" >"$tmp/log$np" 2>&1 || {
    cat "$tmp/log$np" >&2
    echo "test-segy-cli.sh: poststack --data under mpirun -n $np failed" >&2
    exit 1
  }
done
grep -A4 "data misfit" "$tmp/log1"

status=0
outputs=("$tmp"/np1/*.npy "$tmp"/np1/*.sgy)
for np in 2 3; do
  same=0
  for f in "${outputs[@]}"; do
    if cmp -s "$f" "$tmp/np$np/$(basename "$f")"; then
      same=$((same + 1))
    else
      echo "np=$np: $(basename "$f") differs from np=1" >&2
      status=1
    fi
  done
  echo "np=$np: $same of ${#outputs[@]} outputs (.npy, .sgy) bitwise identical to np=1"
done
for png in data inv_cgls_reg; do
  test -s "$tmp/np1/$png.png" || { echo "missing $png.png" >&2; status=1; }
done

step "test-segy-cli.sh: segyio reads the inversions back" 300 \
  "$py" io/tests/python/segyio_check_copy.py "$tmp/cube.sgy" "$tmp/np1" \
  inv_cgls inv_cgls_reg inv_cg_normal || status=1
exit "$status"
