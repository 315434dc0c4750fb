//! [`Collectives`](crate::Collectives) for [`Cuda`]: the engine's payload collectives, on the
//! device collectives of `collective.rs` (NCCL, or NCCL emulated) where the value carries them
//! for this communicator, CUDA-aware MPI, or staging through main memory.

use super::*;

impl Collectives for Cuda {
    fn all_reduce_sum<T: Scalar>(
        comm: &crate::Communicator,
        send: DeviceSlice<'_, T>,
        recv: DeviceSliceMut<'_, T>,
    ) -> Result<()> {
        same_slices((send.len, send.cuda), (recv.len, recv.cuda));
        let Some(c) = send.cuda.collectives_for(comm) else {
            return collective::fallback_all_reduce_sum(comm, send, recv);
        };
        let (count, dtype) = collective::reals::<T>(send.len);
        // SAFETY: both slices are live ranges of `send.len` elements, that is `count` reals, on
        // the device the collectives were made for.
        let r = unsafe { c.all_reduce_sum(send.ptr, recv.ptr, count, dtype) };
        collective::on_device(send.cuda, c, "all-reduce", r)
    }
    fn broadcast<T: Scalar>(
        comm: &crate::Communicator,
        buf: DeviceSliceMut<'_, T>,
        root: usize,
    ) -> Result<()> {
        let Some(c) = buf.cuda.collectives_for(comm) else {
            return collective::fallback_broadcast(comm, buf, root);
        };
        let (count, dtype) = collective::reals::<T>(buf.len);
        // SAFETY: `buf` is a live range of `count` reals on the collectives' device.
        let r = unsafe { c.broadcast(buf.ptr, count, dtype, root) };
        collective::on_device(buf.cuda, c, "broadcast", r)
    }
    fn all_gather_varcount<T: Scalar>(
        comm: &crate::Communicator,
        send: DeviceSlice<'_, T>,
        recv: DeviceSliceMut<'_, T>,
        counts: &[usize],
    ) -> Result<()> {
        assert!(send.cuda == recv.cuda, "slices on different devices");
        let Some(c) = send.cuda.collectives_for(comm) else {
            return collective::fallback_all_gather_varcount(comm, send, recv, counts);
        };
        let reals: Vec<usize> = counts
            .iter()
            .map(|&n| collective::reals::<T>(n).0)
            .collect();
        let dtype = collective::reals::<T>(0).1;
        // SAFETY: `send` holds counts[rank] elements and `recv` their sum (checked by the
        // caller, `Communicator::all_gather_varcount_on`), in reals as `reals` counts them.
        let r = unsafe { c.all_gather_varcount(send.ptr, recv.ptr, &reals, dtype) };
        collective::on_device(send.cuda, c, "all-gather", r)
    }
    fn exchange<T: Scalar>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, DeviceSlice<'_, T>)],
        recvs: &mut [(usize, DeviceSliceMut<'_, T>)],
    ) -> Result<()> {
        let on_self =
            sends.iter().all(|s| s.1.cuda == self) && recvs.iter().all(|r| r.1.cuda == self);
        assert!(on_self, "exchange of slices of another device");
        let Some(c) = self.collectives_for(comm) else {
            return collective::fallback_exchange(comm, self, sends, recvs);
        };
        let s: Vec<_> = sends
            .iter()
            .map(|(p, x)| (*p, x.ptr, collective::reals::<T>(x.len).0))
            .collect();
        let r: Vec<_> = recvs
            .iter()
            .map(|(p, y)| (*p, y.ptr, collective::reals::<T>(y.len).0))
            .collect();
        let dtype = collective::reals::<T>(0).1;
        // SAFETY: every entry is a live range of its slice's length (in reals) on this device;
        // the receive slices are borrowed mutably, so no two overlap.
        let result = unsafe { c.exchange(&s, &r, dtype) };
        collective::on_device(self, c, "exchange", result)
    }
}
