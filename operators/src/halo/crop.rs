//! The crop that goes with a [`Halo`](super::Halo): extended blocks to their cores.

use crate::seam::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Engine, Result, Scalar, SliceLen, StridedCopy};

/// `x_r = y_r[core]` on every rank; adjoint: the core padded with zero halos. Made by
/// [`Halo::crop`](super::Halo::crop): one strided copy each way on the operator's engine (pure
/// moves, so every engine gives the same bits).
pub(super) struct Crop {
    /// The core of the extended block to the domain block, and back.
    to_core: StridedCopy,
    to_ext: StridedCopy,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl Crop {
    /// The crop with the copies `to_core` (extended block to core) and `to_ext` (back).
    pub(super) fn new(
        (to_core, to_ext): (StridedCopy, StridedCopy),
        domain: Space,
        range: Space,
        comm: Communicator,
    ) -> Self {
        Crop {
            to_core,
            to_ext,
            domain,
            range,
            comm,
        }
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Crop {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        E::strided_copy(&self.to_core, plain(x), plain_mut(y));
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let mut x = plain_mut(x);
        let n = x.len();
        E::fill_slice(E::sub_mut(&mut x, 0..n), T::zero());
        E::strided_copy(&self.to_ext, plain(y), x);
        Ok(())
    }
    fn name(&self) -> String {
        "HaloCrop".into()
    }
}
