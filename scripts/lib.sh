# scripts/lib.sh: what the test scripts share. Source it (`. scripts/lib.sh`).
# shellcheck shell=bash

# step NAME SECONDS CMD [ARGS...]: one step of a test script, which cannot hang.
#
# Prints `==> NAME`, runs CMD with a time limit, prints `<== NAME: N s (exit RC)` and returns its
# status. Past the limit the step's whole process group (cargo, the test binaries, mpirun and its
# ranks) gets SIGTERM, then SIGKILL 30 s later, and the step prints `FAILED (timeout after Ns):
# NAME` and returns 124. CMD is a command, not a shell function (run a script, or `bash -c
# '...'`). DISTLOPS_STEP_SCALE (a whole number, default 1) multiplies every limit, for a slow or
# loaded machine. Ctrl-C (or SIGTERM to the script) ends the running step's process group too,
# and the script with status 130.
#
# The limits are a few times what each step takes on a warm 2-core machine, so only a hang or a
# large slow-down reaches them; the tests inside also have their own limits (Threads:
# THREADS_TEST_TIMEOUT per test; mpirun: MPI_TEST_CASE_TIMEOUT per test, MPI_TEST_TIMEOUT per
# launch).
step() {
  local name="$1" seconds="$2"
  shift 2
  local limit=$((seconds * ${DISTLOPS_STEP_SCALE:-1}))
  echo "==> $name"
  local start=$SECONDS rc=0 pid
  # In the background, so that the trap below can end the step's process group (timeout makes
  # one, and kills it on expiry) when this script is interrupted.
  timeout --kill-after=30 "$limit" "$@" &
  pid=$!
  # shellcheck disable=SC2064 # expand $pid now
  trap "kill -TERM -- -$pid 2>/dev/null; exit 130" INT TERM
  wait "$pid" || rc=$?
  trap - INT TERM
  if { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ $((SECONDS - start)) -ge "$limit" ]; then
    echo "FAILED (timeout after ${limit}s): $name" >&2
    rc=124
  fi
  # Every step's time, so a slow run's log says where its time went.
  echo "<== $name: $((SECONDS - start)) s (exit $rc)"
  return "$rc"
}

# The one build of the test scripts: every cargo command they run selects the whole workspace
# with MPI and the emulated device, so a run compiles the workspace once. (Another feature set,
# or one package selected with -p, resolves features anew and recompiles most crates: that was
# half of CI's time.) The programs built this way run on thread ranks outside mpirun
# (`distlops::run`), under mpirun on MPI, and on the emulated device only when asked
# (`--gpu` with DISTLOPS_DEVICE=emulated).
BUILD=(--workspace --features mpi,emulator)

# example_bin NAME: the path of example NAME built with "${BUILD[@]}".
example_bin() {
  echo "${CARGO_TARGET_DIR:-$(pwd)/target}/debug/examples/$1"
}
