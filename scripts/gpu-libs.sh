#!/usr/bin/env bash
# scripts/gpu-libs.sh: fetch the NVIDIA host libraries the GPU engine loads at run time (NVRTC, NCCL,
# NVSHMEM) from pinned PyPI wheels, so that distlops-gpu-sys can be checked against the real
# libraries on a machine with no GPU and no CUDA install.
#
#   scripts/gpu-libs.sh && source "${DISTLOPS_GPU_LIBS:-$HOME/.cache/distlops/gpu-libs}/env.sh"
#
# Layout of the cache dir ($DISTLOPS_GPU_LIBS, default ~/.cache/distlops/gpu-libs):
#   pkgs/<name>-<version>/nvidia/...   what we keep of each wheel (its lib/*.so* and include/)
#   lib/                               symlinks to every shared library, plus unversioned names
#   include/{nvrtc,nccl,nvshmem}       symlinks to the wheels' header dirs
#   bin/ptxas                          the PTX assembler of the nvcc wheel (of NVRTC's version, so
#                                      it reads NVRTC's PTX): the NVRTC test assembles every kernel
#                                      with it, inline PTX included, for sm_80 and sm_90
#   env.sh                             exports DISTLOPS_GPU_LIBS, DISTLOPS_PTXAS, LD_LIBRARY_PATH
# Idempotent: a wheel whose pkgs/ dir is complete is not downloaded again; pkgs/ dirs of versions
# no longer pinned are removed. Needs bash, python3 + pip, unzip and sha256sum; no root.
set -euo pipefail

# label name version wheel-platform-tag sha256 (of the wheel). The label names include/<label>.
# The platform tag is the one PyPI lists for that version: pip's --platform matches tags exactly,
# and the newest NVRTC wheels are tagged manylinux_2_12 and the newest NCCL ones manylinux_2_27
# (glibc >= 2.27), so manylinux_2_17 alone finds neither (it picks NCCL 2.27.7 and no NVRTC).
# To move a pin: `pip index versions NAME`, then `pip download --no-deps NAME==V -d DIR` and take
# the tag from the wheel's file name and the sha256 from `sha256sum`.
PINS=(
  "nvrtc   nvidia-cuda-nvrtc   13.5.37 manylinux_2_12_x86_64 86b4d68058807988b7d9af5b44917a0601e9c337f35ccd657bfb3c759ff8d8bc"
  "nccl    nvidia-nccl-cu13    2.32.3  manylinux_2_27_x86_64 1459723080ac889d73a26edfa3e04383a7928ab31ac8f0ec43b3ea9548b04ff3"
  "nvshmem nvidia-nvshmem-cu13 3.8.0   manylinux_2_17_x86_64 81a4d1f666543e6d34df6d2ff940c7da1435e34e186aab6f3c2b48861b64ef38"
  "ptxas   nvidia-cuda-nvcc    13.5.37 manylinux_2_17_x86_64 f5c4f7ead5d964fb4af42bbf1e6d3ec3c1e6e9d83b53749f691d387e7fcaa3a7"
)
# Unversioned names that loaders may ask for (cudarc looks for libnccl.so, never libnccl.so.2).
LINKS=(
  "libnvrtc.so        libnvrtc.so.13"
  "libnccl.so         libnccl.so.2"
  "libnvshmem_host.so libnvshmem_host.so.3"
)

CACHE="${DISTLOPS_GPU_LIBS:-$HOME/.cache/distlops/gpu-libs}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$CACHE/pkgs"
CACHE="$(cd "$CACHE" && pwd)"
say() { printf 'gpu-libs: %s\n' "$*"; }

for tool in unzip sha256sum; do
  command -v "$tool" >/dev/null || { say "error: $tool not found" >&2; exit 1; }
done

TMP=""
cleanup() { if [ -n "$TMP" ]; then rm -rf "$TMP"; fi; }
trap cleanup EXIT

wanted=()
for pin in "${PINS[@]}"; do
  read -r _ name version platform sha <<<"$pin"
  dir="$CACHE/pkgs/$name-$version"
  wanted+=("$name-$version")
  if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$sha" ]; then
    say "cached      $name==$version"
    continue
  fi
  say "downloading $name==$version ($platform)"
  rm -rf "$dir"
  TMP="$(mktemp -d "$CACHE/.tmp.XXXXXX")"
  t0=$(date +%s)
  PIP_NO_INPUT=1 "$PYTHON" -m pip download --quiet --no-cache-dir --no-deps --only-binary=:all: \
    --platform "$platform" --python-version 3.11 -d "$TMP/wheel" "$name==$version"
  wheels=("$TMP"/wheel/*.whl)
  [ "${#wheels[@]}" -eq 1 ] && [ -f "${wheels[0]}" ] || { say "error: expected one wheel, got: ${wheels[*]}" >&2; exit 1; }
  got="$(sha256sum "${wheels[0]}" | cut -d' ' -f1)"
  if [ "$got" != "$sha" ]; then
    say "error: sha256 of $(basename "${wheels[0]}") is $got, pinned $sha" >&2
    exit 1
  fi
  # Keep the host libraries and headers only (not device bitcode, static archives or .dist-info).
  mkdir -p "$TMP/x"
  # (The nvcc wheel has no shared library, only ptxas; the LINKS check below catches a wheel that
  # lost one the loaders need.)
  unzip -q "${wheels[0]}" 'nvidia/*/lib/*.so*' -d "$TMP/x" 2>/dev/null || true
  unzip -q "${wheels[0]}" 'nvidia/*/include/*' -d "$TMP/x" 2>/dev/null || true
  unzip -q "${wheels[0]}" 'nvidia/*/bin/ptxas' -d "$TMP/x" 2>/dev/null || true
  printf '%s\n' "$sha" >"$TMP/x/.complete"
  mv "$TMP/x" "$dir"
  rm -rf "$TMP"; TMP=""
  say "  $(basename "${wheels[0]}"): $(( $(date +%s) - t0 )) s, kept $(du -sh "$dir" | cut -f1)"
done

# Drop versions no longer pinned, and interrupted downloads.
for old in "$CACHE"/pkgs/*/ "$CACHE"/.tmp.*; do
  [ -e "$old" ] || continue
  base="$(basename "$old")"
  keep=0
  for w in "${wanted[@]}"; do [ "$base" = "$w" ] && keep=1; done
  if [ "$keep" -eq 0 ]; then say "removing    ${old%/}"; rm -rf "${old%/}"; fi
done

# lib/: one symlink per shared library of the pinned wheels, plus the unversioned names.
# Rebuilt whenever the pins change (the key is the pin list itself).
key="$(printf '%s\n' "${PINS[@]}" "${LINKS[@]}" | sha256sum | cut -d' ' -f1)"
if [ -f "$CACHE/lib/.key" ] && [ "$(cat "$CACHE/lib/.key")" = "$key" ]; then
  say "lib/ up to date"
else
  rm -rf "$CACHE/lib.new"
  mkdir -p "$CACHE/lib.new"
  for w in "${wanted[@]}"; do
    for so in "$CACHE/pkgs/$w"/nvidia/*/lib/*.so*; do
      ln -s "../pkgs/$w/${so#"$CACHE/pkgs/$w/"}" "$CACHE/lib.new/$(basename "$so")"
    done
  done
  for l in "${LINKS[@]}"; do
    read -r link target <<<"$l"
    [ -e "$CACHE/lib.new/$target" ] || { say "error: $target is in no pinned wheel" >&2; exit 1; }
    ln -s "$target" "$CACHE/lib.new/$link"
  done
  printf '%s\n' "$key" >"$CACHE/lib.new/.key"
  rm -rf "$CACHE/lib"
  mv "$CACHE/lib.new" "$CACHE/lib"
  say "lib/ rebuilt: $(find "$CACHE/lib" -mindepth 1 -name '*.so*' | wc -l) libraries"
fi

# include/<label>: the headers each wheel ships (for checking the FFI declarations by eye).
rm -rf "$CACHE/include"
mkdir -p "$CACHE/include"
for pin in "${PINS[@]}"; do
  read -r label name version _ <<<"$pin"
  for inc in "$CACHE/pkgs/$name-$version"/nvidia/*/include; do
    [ -d "$inc" ] || continue
    ln -s "../pkgs/$name-$version/${inc#"$CACHE/pkgs/$name-$version/"}" "$CACHE/include/$label"
  done
done

# bin/ptxas: the assembler, where a pinned wheel has one.
rm -rf "$CACHE/bin"
mkdir -p "$CACHE/bin"
for w in "${wanted[@]}"; do
  for exe in "$CACHE/pkgs/$w"/nvidia/*/bin/ptxas; do
    [ -x "$exe" ] && ln -s "../pkgs/$w/${exe#"$CACHE/pkgs/$w/"}" "$CACHE/bin/ptxas"
  done
done

cat >"$CACHE/env.sh" <<EOF
# Written by scripts/gpu-libs.sh; source it. Pins: $(for p in "${PINS[@]}"; do read -r _ n v _ <<<"$p"; printf '%s==%s ' "$n" "$v"; done)
export DISTLOPS_GPU_LIBS="$CACHE"
export DISTLOPS_PTXAS="$CACHE/bin/ptxas"
case ":\${LD_LIBRARY_PATH:-}:" in
  *":$CACHE/lib:"*) ;;
  *) export LD_LIBRARY_PATH="$CACHE/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" ;;
esac
EOF
say "wrote $CACHE/env.sh ($(du -sh "$CACHE" | cut -f1) in $CACHE)"
say "use:  source $CACHE/env.sh"
