//! [`Collectives`] for [`Host`]: the host communicator's collectives, which cannot fail.

use super::Host;
use crate::engine::Collectives;
use crate::error::Result;
use crate::scalar::Scalar;

impl Collectives for Host {
    fn all_reduce_sum<T: Scalar>(
        comm: &crate::Communicator,
        send: &[T],
        recv: &mut [T],
    ) -> Result<()> {
        comm.all_reduce_into(send, recv, crate::ReduceOp::Sum);
        Ok(())
    }
    fn broadcast<T: Scalar>(comm: &crate::Communicator, buf: &mut [T], root: usize) -> Result<()> {
        comm.broadcast_into(buf, root);
        Ok(())
    }
    fn exchange<T: Scalar>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, &[T])],
        recvs: &mut [(usize, &mut [T])],
    ) -> Result<()> {
        comm.exchange(sends, recvs);
        Ok(())
    }
    fn exchange_overlapped<T: Scalar, W>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, &[T])],
        recvs: &mut [(usize, &mut [T])],
        work: impl FnOnce() -> W,
    ) -> Result<W> {
        Ok(comm.exchange_overlapped(sends, recvs, work))
    }
    fn all_gather_varcount<T: Scalar>(
        comm: &crate::Communicator,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<()> {
        comm.all_gather_varcount_into(send, recv, counts);
        Ok(())
    }
}
