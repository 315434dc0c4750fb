//! The adjoint of [`Halo`](super::Halo): every halo sample sent back to its owner and added to
//! the owner's sample, in one fixed order on every engine.

use super::execution::Buffers;
use super::plan::Plan;
use distlops_core::{Communicator, Engine, Result, Scalar, SliceLen};

impl Plan {
    /// `x = H^H y` on this rank's blocks: the halo boxes packed into the halo buffer, the core of
    /// the extended block copied into `x`, the exchange (each rank gets back the copies of its
    /// core that the other ranks' halos hold), and the received boxes added into `x`.
    ///
    /// The sums have one order on every engine: for every sample `i` of this rank's core, with
    /// `q1 < q2 < ...` the other ranks whose extended blocks contain it,
    ///
    /// ```text
    /// x[i] = ((y_me[i] + y_q1[i]) + y_q2[i]) + ...
    /// ```
    ///
    /// this rank's own value first, then one message at a time in ascending rank order, each a
    /// [`Compute::strided_add`](distlops_core::Compute::strided_add) of one rounded addition per
    /// element (no fused operation). So the host and a device give the same bits.
    ///
    /// # Errors
    /// What the engine's exchange reports.
    pub(super) fn adjoint<T: Scalar, E: Engine>(
        &self,
        buffers: &Buffers<T, E>,
        comm: &Communicator,
        y: E::Slice<'_, T>,
        mut x: E::SliceMut<'_, T>,
    ) -> Result<()> {
        let (core, halo) = &mut *buffers.lock();
        for m in &self.halo_boxes {
            E::strided_copy(&m.pack, y, E::slice_mut(halo));
        }
        let n = x.len();
        E::strided_copy(&self.ext_to_core, y, E::sub_mut(&mut x, 0..n));
        Self::exchange(
            &buffers.engine,
            comm,
            (&self.halo_boxes, halo),
            (&self.core_boxes, core),
        )?;
        for m in &self.core_boxes {
            E::strided_add(&m.place, E::slice(core), E::sub_mut(&mut x, 0..n));
        }
        Ok(())
    }
}
