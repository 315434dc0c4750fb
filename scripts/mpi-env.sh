# scripts/mpi-env.sh: environment for building and running distlops with Open MPI.
# Source it (`. scripts/mpi-env.sh`); it only exports variables.

# mpi-sys's build script probes $MPICC; this pins Open MPI even if MPICH is also installed.
export MPICC=mpicc.openmpi
# The launcher the MPI tests and benches relaunch themselves with.
export MPIEXEC=mpirun.openmpi
# Open MPI refuses to run as root without both of these (CI and containers run as root).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# = --oversubscribe: more ranks than cores, and ranks yield when idle instead of busy-polling.
export OMPI_MCA_rmaps_base_oversubscribe=1
