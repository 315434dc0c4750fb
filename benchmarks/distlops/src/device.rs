//! The benchmark on the `Cuda` engine (`--engine cuda`, feature `cuda`; feature `emulator` with
//! `DISTLOPS_DEVICE=emulated` runs the same code on the emulated device, for checking the
//! benchmark itself, never for timing): each workload's operator moved to the device with
//! `to_engine` (W7's with `into_engine`, which keeps the matrix in place on the host engine), its
//! input uploaded once, every product timed up to the end of the device's work
//! (the stream is synchronised before the clock stops), the output downloaded after timing for
//! the checksums. `devcopy` measures the device's copy bandwidth, the floor the memory-bound
//! workloads are compared with (as the triad is on the host).

use crate::measure::{time_op, vector_checks, Record};
use crate::Res;
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, DistVector, Engine, FullEngine, Host, Scalar};

/// An engine the benchmark runs on: how a rank gets it, and how to wait for its work.
pub trait BenchEngine: FullEngine {
    /// This rank's engine.
    fn for_rank(comm: &Communicator) -> Res<Self>;
    /// Waits until the work enqueued on this engine is done.
    fn sync(&self) -> Res<()>;
}

impl BenchEngine for Host {
    fn for_rank(_comm: &Communicator) -> Res<Self> {
        Ok(Host)
    }
    fn sync(&self) -> Res<()> {
        Ok(())
    }
}

#[cfg(any(feature = "cuda", feature = "emulator"))]
impl BenchEngine for distlops::core::Cuda {
    fn for_rank(comm: &Communicator) -> Res<Self> {
        let cuda = distlops::core::Cuda::for_rank(comm)?;
        // Device collectives (NCCL) when the build has them; MPI staging otherwise.
        #[cfg(feature = "nccl")]
        let cuda = cuda.with_collectives(comm)?;
        Ok(cuda)
    }
    fn sync(&self) -> Res<()> {
        Ok(self.synchronize()?)
    }
}

/// A vector moved to `engine`.
pub fn upload<T: Scalar, E: Engine>(x: &DistVector<T>, engine: &E) -> Res<DistVector<T, E>> {
    Ok(x.to_engine(engine)?)
}

/// Times `op x` (or `op^H x`) on the engine: the protocol of [`time_op`] with the engine's work
/// waited for inside each timed call; the last output comes back to the host for the checks.
pub fn time_on<T: Scalar, E: BenchEngine>(
    comm: &Communicator,
    engine: &E,
    reps: usize,
    op: &dyn LinearOperator<T, E>,
    x: &DistVector<T, E>,
    adjoint: bool,
) -> Res<(Vec<f64>, (f64, f64))> {
    let (times, y) = time_op(comm, reps, || -> Res<DistVector<T, E>> {
        let y = if adjoint {
            op.apply_adjoint(x)?
        } else {
            op.apply(x)?
        };
        engine.sync()?;
        Ok(y)
    })?;
    let y: DistVector<T> = y.into_engine(&Host)?;
    Ok((times, vector_checks(&y)))
}

/// `devcopy`: `y = x` of 2^27 bytes per rank on the engine, on every rank at once; `bytes`
/// counts one read and one write per element, summed over the ranks. Its record is labelled
/// workload `triad`, so that `benchmarks/compare.py` takes it as the floor of the device run (as
/// the STREAM triad is of the host run).
pub fn devcopy<E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    const N: usize = 1 << 24;
    let engine = E::for_rank(comm)?;
    let x = engine.upload(distlops::ndarray::ArrayD::<f64>::ones(vec![N]).view())?;
    let mut y = engine.zeros::<f64>(&[N])?;
    let (times, ()) = time_op(comm, reps, || -> Res<()> {
        E::copy(&x, &mut y);
        engine.sync()
    })?;
    let check = E::download(&y).sum();
    Ok(vec![Record {
        workload: "triad",
        name: "device_copy",
        op: "copy",
        dtype: "float64",
        global_size: N * comm.size(),
        shape: [N * comm.size(), N * comm.size()],
        times,
        check,
        bytes: Some((2 * 8 * N * comm.size()) as f64),
        ..Record::default()
    }])
}

/// The device workloads: `devcopy` and those of `benchmarks/gpu.sh`.
pub fn run<E: BenchEngine>(
    comm: &Communicator,
    workload: &str,
    complex: bool,
    reps: usize,
    inputs: Option<&std::path::Path>,
) -> Res<Vec<Record>> {
    match (workload, complex) {
        ("devcopy", false) => devcopy::<E>(comm, reps),
        ("W1", false) => crate::poststack::w1_on::<E>(comm, reps),
        ("W2", false) => crate::poststack::w2_on::<E>(comm, reps),
        ("W3", false) => crate::stencils::w3_on::<f64, E>(comm, reps),
        ("W3", true) => crate::stencils::w3_on::<distlops::core::Complex64, E>(comm, reps),
        ("W4", false) => crate::stencils::w4_on::<E>(comm, reps),
        ("W5", false) => crate::poststack::w5_on::<E>(comm, reps),
        ("W8", false) => crate::mdc::w8_on::<E>(comm, reps, inputs),
        ("W9", true) => crate::ffts::w9_on::<E>(comm, reps),
        ("W7", false) => crate::matmul::w7_on::<f64, E>(comm, reps),
        ("W7", true) => crate::matmul::w7_on::<distlops::core::Complex64, E>(comm, reps),
        (w, _) => Err(format!("no device workload {w} in this dtype").into()),
    }
}
