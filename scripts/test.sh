#!/usr/bin/env bash
# scripts/test.sh: the whole test suite, without and with MPI.
# Installs missing system packages first (scripts/setup.sh). Extra arguments go to both `cargo test` runs.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh

echo "==> cargo test --workspace"
cargo test --workspace "$@"
echo "==> cargo test --workspace --features mpi"
cargo test --workspace --features mpi "$@"
echo "==> all tests passed"
