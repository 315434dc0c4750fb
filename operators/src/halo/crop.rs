//! The crop that goes with a [`Halo`](super::Halo): extended blocks to their cores.

use super::boxes::Runs;
use crate::seam::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Result, Scalar};

/// `x_r = y_r[core]` on every rank; adjoint: the core padded with zero halos. Made by
/// [`Halo::crop`](super::Halo::crop).
pub(super) struct Crop {
    core_in_ext: Runs,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl Crop {
    pub(super) fn new(core_in_ext: Runs, domain: Space, range: Space, comm: Communicator) -> Self {
        Crop {
            core_in_ext,
            domain,
            range,
            comm,
        }
    }
}

impl<T: Scalar> LinearOperator<T> for Crop {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T>, y: &mut DistVector<T>) -> Result<()> {
        self.core_in_ext.pack(plain(x), plain_mut(y));
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> Result<()> {
        let x = plain_mut(x);
        x.fill(T::zero());
        self.core_in_ext.unpack(plain(y), x);
        Ok(())
    }
    fn name(&self) -> String {
        "HaloCrop".into()
    }
}
