# scripts/gpu-device.sh: sourced by the scripts that compare an example's --gpu run with its host
# run (poststack-gpu.sh, mdd-gpu.sh). Sets `build` (the cargo selection and features), `device`
# (the command prefix that picks the device) and `xenv` (mpirun's export of that choice):
# the emulated device by default (the scripts' one build, scripts/lib.sh), the real devices with
# DISTLOPS_GPU=real (scripts/test-gpu.sh on a GPU machine; features cuda,mpi, DISTLOPS_DEVICE left
# unset).
# shellcheck shell=bash disable=SC2034
if [ "${DISTLOPS_GPU:-emulated}" = real ]; then
  build=(--workspace --features cuda,mpi)
  device=(env -u DISTLOPS_DEVICE)
  xenv=()
else
  build=("${BUILD[@]}")
  device=(env DISTLOPS_DEVICE=emulated)
  xenv=(-x DISTLOPS_DEVICE)
fi
