//! `--gpu`: the engine the inversion runs on, and how its operators are made there.
//!
//! On the host ([`Host`]) the operators are the host ones. On a device ([`Cuda`], features
//! `cuda` or `emulator`) the modelling blocks are moved with
//! [`PoststackLinearModelling::to_engine`] (bands on the device), the solvers' vectors live on the
//! device, and the Laplacian, which has no device path yet, runs on the host behind
//! [`OnHost`]: each of its products downloads its input and uploads its output.

use distlops::core::operator::{LinearOperator, Op, Space};
use distlops::core::{Communicator, DistVector, Engine, Error, Host, Result, VectorRef};
use distlops::operators::local::{LocalOperator, PoststackLinearModelling};
use distlops::operators::Laplacian;

/// An engine the example can run on.
pub trait Device: Engine {
    /// This rank's modelling block on the engine.
    fn modelling(
        &self,
        op: PoststackLinearModelling<f64>,
    ) -> Result<Box<dyn LocalOperator<f64, Self>>>;
    /// The Laplacian on vectors of the engine.
    fn laplacian(&self, lap: Laplacian<f64>) -> Op<f64, Self>;
}

impl Device for Host {
    fn modelling(&self, op: PoststackLinearModelling<f64>) -> Result<Box<dyn LocalOperator<f64>>> {
        Ok(Box::new(op))
    }
    fn laplacian(&self, lap: Laplacian<f64>) -> Op<f64> {
        Op::new(lap)
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
    fn laplacian(&self, lap: Laplacian<f64>) -> Op<f64, Cuda> {
        Op::new(OnHost {
            op: lap,
            engine: self.clone(),
        })
    }
}

/// A vector of `engine`'s memory copied to the host.
pub fn to_host<E: Engine>(v: VectorRef<'_, f64, E>) -> Result<DistVector<f64>> {
    match v {
        VectorRef::Array(a) => Ok(DistVector::Array(a.to_host()?)),
        VectorRef::Stacked(_) => Err(Error::InvalidArgument(
            "poststack: only plain vectors move between engines here".into(),
        )),
    }
}

/// A host vector copied to `engine`.
pub fn to_engine<E: Engine>(v: &DistVector<f64>, engine: &E) -> Result<DistVector<f64, E>> {
    match v {
        DistVector::Array(a) => Ok(DistVector::Array(a.to_engine(engine)?)),
        DistVector::Stacked(_) => Err(Error::InvalidArgument(
            "poststack: only plain vectors move between engines here".into(),
        )),
    }
}

/// A host operator applied to vectors of another engine: its input is downloaded, the host
/// product runs, its output is uploaded (the same values as on the host, plus two copies).
#[cfg_attr(not(any(feature = "cuda", feature = "emulator")), allow(dead_code))]
struct OnHost<L, E> {
    op: L,
    engine: E,
}

#[cfg_attr(not(any(feature = "cuda", feature = "emulator")), allow(dead_code))]
impl<L: LinearOperator<f64>, E: Engine> OnHost<L, E> {
    /// `out = f(op, input)` on the host.
    fn product(
        &self,
        input: VectorRef<'_, f64, E>,
        out: &mut DistVector<f64, E>,
        space: &Space,
        f: impl FnOnce(&L, VectorRef<'_, f64>, &mut DistVector<f64>) -> Result<()>,
    ) -> Result<()> {
        let input = to_host(input)?;
        let mut result = space.zeros_on(&Host, self.op.comm())?;
        f(&self.op, input.view(), &mut result)?;
        *out = to_engine(&result, &self.engine)?;
        Ok(())
    }
}

impl<L: LinearOperator<f64>, E: Engine> LinearOperator<f64, E> for OnHost<L, E> {
    fn domain(&self) -> &Space {
        self.op.domain()
    }
    fn range(&self) -> &Space {
        self.op.range()
    }
    fn comm(&self) -> &Communicator {
        self.op.comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, f64, E>, y: &mut DistVector<f64, E>) -> Result<()> {
        self.product(x, y, self.op.range(), |op, x, y| op.matvec_unchecked(x, y))
    }
    fn rmatvec_unchecked(
        &self,
        y: VectorRef<'_, f64, E>,
        x: &mut DistVector<f64, E>,
    ) -> Result<()> {
        self.product(y, x, self.op.domain(), |op, y, x| {
            op.rmatvec_unchecked(y, x)
        })
    }
    fn name(&self) -> String {
        format!("OnHost({})", self.op.name())
    }
}
