//! Payload collectives on engine memory: the values of arrays, as opposed to the metadata
//! (layouts, sizes, agreement on errors) that the host communicator carries.
//!
//! On the host the engine's slices are main memory and go straight to the communicator. On an
//! engine whose memory is elsewhere (a CUDA device without a device-aware communicator) the
//! values are staged through host memory: copied out, reduced, copied back, in that order on
//! every rank, so the result is the host path's result bit for bit.

use super::{Communicator, ReduceOp};
use crate::engine::{Engine, SliceLen};
use crate::scalar::Scalar;

impl Communicator {
    /// `recv = sum over ranks of send`, on slices of any engine (the same length on every
    /// rank). Collective.
    ///
    /// # Panics
    /// If `send` and `recv` differ in length.
    pub fn all_reduce_sum_on<T: Scalar, E: Engine>(
        &self,
        send: E::Slice<'_, T>,
        recv: E::SliceMut<'_, T>,
    ) {
        assert_eq!(
            send.len(),
            recv.len(),
            "all_reduce_sum_on: buffer lengths differ"
        );
        if let Some(s) = E::host_slice(send) {
            let r =
                E::host_slice_mut(recv).expect("an engine's slices are all in host memory or none");
            self.all_reduce_into(s, r, ReduceOp::Sum);
            return;
        }
        let staged = E::read_slice(send);
        let mut sum = vec![T::zero(); staged.len()];
        self.all_reduce_into(&staged, &mut sum, ReduceOp::Sum);
        E::write_slice(&sum, recv);
    }
}
