//! The crop that goes with a [`Halo`](super::Halo): extended blocks to their cores.

use super::boxes::Runs;
use super::engine::box_copy;
use crate::seam::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Engine, Result, Scalar, StridedCopy};

/// `x_r = y_r[core]` on every rank; adjoint: the core padded with zero halos. Made by
/// [`Halo::crop`](super::Halo::crop). On the host it walks the runs of the core; on other
/// engines it is one strided copy each way (the same values).
pub(super) struct Crop {
    core_in_ext: Runs,
    /// The core of the extended block to the domain block, and back.
    to_core: StridedCopy,
    to_ext: StridedCopy,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl Crop {
    /// The crop of the core `(start, shape)` of extended blocks of shape `ext`.
    ///
    /// # Panics
    /// If the core is not inside the extended block (a bug of the caller).
    pub(super) fn new(
        core_in_ext: Runs,
        (start, core, ext): (&[usize], &[usize], &[usize]),
        domain: Space,
        range: Space,
        comm: Communicator,
    ) -> Self {
        let len = core.iter().product();
        let to_core = box_copy(ext, (start, core), (0, len), true).expect("the core is a box");
        Crop {
            core_in_ext,
            to_ext: to_core.reversed(),
            to_core,
            domain,
            range,
            comm,
        }
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Crop {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let (x, y) = (plain(x), plain_mut(y));
        match E::on_host(x) {
            Some(x) => self
                .core_in_ext
                .pack(x, E::on_host_mut(y).expect("a host engine")),
            None => E::strided_copy(&self.to_core, x, y),
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let (y, mut x) = (plain(y), plain_mut(x));
        if let Some(y) = E::on_host(y) {
            let x = E::on_host_mut(x).expect("a host engine");
            x.fill(T::zero());
            self.core_in_ext.unpack(y, x);
            return Ok(());
        }
        let n = distlops_core::SliceLen::len(&x);
        E::fill_slice(E::sub_mut(&mut x, 0..n), T::zero());
        E::strided_copy(&self.to_ext, y, x);
        Ok(())
    }
    fn name(&self) -> String {
        "HaloCrop".into()
    }
}
