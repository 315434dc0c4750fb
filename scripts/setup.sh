#!/usr/bin/env bash
# scripts/setup.sh: system packages to build and test distlops on Debian/Ubuntu.
# Idempotent: installs only what is missing (needs root or sudo then), and checks for a Rust toolchain.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
# g++ builds the emulated device and the sanitizer kernel tests; unzip unpacks the NVIDIA wheels;
# iproute2 (ip netns) and util-linux (unshare) make the two nodes of scripts/test-two-nodes.sh;
# libopenblas-dev is the CBLAS of feature `blas`.
PKGS=(libopenmpi-dev openmpi-bin libclang-dev g++ unzip iproute2 util-linux libopenblas-dev)

# pip fetches the NVIDIA wheels of scripts/gpu-libs.sh.
if ! python3 -m pip --version >/dev/null 2>&1; then
  PKGS+=(python3-pip)
fi

missing=()
for p in "${PKGS[@]}"; do
  # "install ok installed" is the only status that means the package is really there.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo env DEBIAN_FRONTEND=noninteractive)
    else
      echo "setup.sh: missing packages (${missing[*]}) and not root, and sudo is not available" >&2
      exit 1
    fi
  fi
  echo "setup.sh: installing ${missing[*]}"
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
else
  echo "setup.sh: system packages present (${PKGS[*]})"
fi

if ! command -v cargo >/dev/null 2>&1; then
  # rustup's default location, if this shell has not loaded it.
  if [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
  fi
fi
if ! command -v cargo >/dev/null 2>&1; then
  cat >&2 <<'MSG'
setup.sh: no Rust toolchain found (cargo is not on PATH).
Install one with rustup (https://rustup.rs), Rust 1.85 or newer, e.g.
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y
then open a new shell (or `. "$HOME/.cargo/env"`) and run this script again.
MSG
  exit 1
fi
echo "setup.sh: $(cargo --version)"

if command -v mpicc.openmpi >/dev/null 2>&1; then
  echo "setup.sh: $(mpicc.openmpi -showme:version 2>&1)"
else
  echo "setup.sh: Open MPI: $(mpirun.openmpi --version 2>&1 | head -n 1)"
fi
