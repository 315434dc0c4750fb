//! `--gpu`: the engine the inversion runs on, and how its operators are made there.
//!
//! On the host ([`Host`]) the operators are the host ones. On a device ([`Cuda`], features
//! `cuda` or `emulator`) the modelling blocks are moved with
//! [`PoststackLinearModelling::to_engine`] and the Laplacian with [`Laplacian::to_engine`]
//! (bands on the device, ghost slabs through the engine's exchange), and the solvers' vectors
//! live on the device.

use distlops::core::operator::Op;
use distlops::core::{DistVector, Error, FullEngine, Host, Result, VectorRef};
use distlops::operators::local::{LocalOperator, PoststackLinearModelling};
use distlops::operators::Laplacian;

/// An engine the example can run on.
pub trait Device: FullEngine {
    /// This rank's modelling block on the engine.
    fn modelling(
        &self,
        op: PoststackLinearModelling<f64>,
    ) -> Result<Box<dyn LocalOperator<f64, Self>>>;
    /// The Laplacian on vectors of the engine.
    fn laplacian(&self, lap: Laplacian<f64>) -> Result<Op<f64, Self>>;
}

impl Device for Host {
    fn modelling(&self, op: PoststackLinearModelling<f64>) -> Result<Box<dyn LocalOperator<f64>>> {
        Ok(Box::new(op))
    }
    fn laplacian(&self, lap: Laplacian<f64>) -> Result<Op<f64>> {
        Ok(Op::new(lap))
    }
}

#[cfg(any(feature = "cuda", feature = "emulator"))]
pub use distlops::core::Cuda;

#[cfg(any(feature = "cuda", feature = "emulator"))]
impl Device for Cuda {
    fn modelling(
        &self,
        op: PoststackLinearModelling<f64>,
    ) -> Result<Box<dyn LocalOperator<f64, Cuda>>> {
        Ok(Box::new(op.to_engine(self)?))
    }
    fn laplacian(&self, lap: Laplacian<f64>) -> Result<Op<f64, Cuda>> {
        Ok(Op::new(lap.to_engine(self)?))
    }
}

/// A vector of `engine`'s memory copied to the host.
pub fn to_host<E: FullEngine>(v: VectorRef<'_, f64, E>) -> Result<DistVector<f64>> {
    match v {
        VectorRef::Array(a) => Ok(DistVector::Array(a.to_host()?)),
        VectorRef::Stacked(_) => Err(Error::InvalidArgument(
            "poststack: only plain vectors move between engines here".into(),
        )),
    }
}

/// A host vector copied to `engine`.
pub fn to_engine<E: FullEngine>(v: &DistVector<f64>, engine: &E) -> Result<DistVector<f64, E>> {
    match v {
        DistVector::Array(a) => Ok(DistVector::Array(a.to_engine(engine)?)),
        DistVector::Stacked(_) => Err(Error::InvalidArgument(
            "poststack: only plain vectors move between engines here".into(),
        )),
    }
}
