//! Writes into Broadcast arrays that keep the replicas equal: [`assign`](DistributedArray::assign),
//! [`assign_slice`](DistributedArray::assign_slice) and
//! [`broadcast_from_root`](DistributedArray::broadcast_from_root).

use super::DistributedArray;
use crate::comm::Fingerprint;
use crate::engine::Host;
use crate::error::{Error, Result};
use crate::partition::Partition;
use crate::scalar::Scalar;
use ndarray::{ArrayViewD, SliceInfoElem};

impl<T: Scalar> DistributedArray<T, Host> {
    /// Overwrites this rank's block with `value` (PyLops-MPI's `x[:] = value`).
    /// [Collective](crate#collective-calls) for Broadcast arrays: every rank of the array's
    /// communicator calls it, and rank 0's value is copied to every rank (one small agreement,
    /// then one broadcast). No communication for Scatter and UnsafeBroadcast arrays, which write
    /// this rank's `value` into this rank's block.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `value` does not have the local shape (agreed over the ranks
    /// for Broadcast).
    pub fn assign(&mut self, value: ArrayViewD<'_, T>) -> Result<()> {
        self.assign_slice(&[], value)
    }

    /// Overwrites a slice of this rank's block (`x[info] = value`), with the semantics of
    /// [`assign`](Self::assign). [Collective](crate#collective-calls) for Broadcast arrays (every
    /// rank passes the same `info`); no communication for Scatter and UnsafeBroadcast arrays.
    /// `info` uses ndarray's `SliceInfoElem`; missing trailing axes are taken whole.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if the slice is invalid or `value` does not have its shape.
    pub fn assign_slice(&mut self, info: &[SliceInfoElem], value: ArrayViewD<'_, T>) -> Result<()> {
        let broadcast = self.layout.partition() == Partition::Broadcast;
        let check = slice_shape(self.local.shape(), info).and_then(|shape| {
            if shape == value.shape() {
                Ok(())
            } else {
                Err(Error::ShapeMismatch(format!(
                    "assigning an array of shape {:?} into a slice of shape {:?}",
                    value.shape(),
                    shape
                )))
            }
        });
        if broadcast {
            // Every rank writes rank 0's value into its own slice: the slices must be the same.
            let fp = info
                .iter()
                .fold(Fingerprint::default(), |h, e| h.text(&format!("{e:?}")));
            let describe = || format!("slice {info:?}");
            self.agree_before("assign_slice", fp, describe, check)?;
        } else {
            check?;
        }
        // ndarray wants one element per axis: take the missing trailing axes whole.
        let used = info
            .iter()
            .filter(|e| !matches!(e, SliceInfoElem::NewAxis))
            .count();
        let mut full: Vec<SliceInfoElem> = info.to_vec();
        full.extend((used..self.local.ndim()).map(|_| SliceInfoElem::from(..)));
        let mut target = self.local.slice_mut(&full[..]);
        if broadcast && self.comm.size() > 1 {
            let mut buf: Vec<T> = value.iter().copied().collect();
            self.comm.broadcast_into(&mut buf, 0);
            target.iter_mut().zip(buf).for_each(|(t, v)| *t = v);
        } else {
            target.assign(&value);
        }
        Ok(())
    }

    /// Makes every replica of a Broadcast or UnsafeBroadcast array equal to rank 0's (one
    /// broadcast). [Collective](crate#collective-calls): every rank of the array's communicator
    /// calls it, for every partition (for Scatter arrays only the layout agreement runs and no data
    /// moves).
    ///
    /// # Panics
    /// On every rank if the ranks hold the array with different layouts.
    pub fn broadcast_from_root(&mut self) {
        self.agree_or_panic("broadcast_from_root", &self.comm);
        if self.layout.partition().is_replicated() && self.comm.size() > 1 {
            let comm = self.comm.clone();
            comm.broadcast_into(self.local_slice_mut(), 0);
        }
    }
}

/// The shape of `shape[info]`, or an error if the slice does not fit.
fn slice_shape(shape: &[usize], info: &[SliceInfoElem]) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    let mut axis = 0;
    for elem in info {
        match *elem {
            SliceInfoElem::NewAxis => out.push(1),
            SliceInfoElem::Index(i) => {
                let n = *shape
                    .get(axis)
                    .ok_or_else(|| Error::ShapeMismatch("too many indices".into()))?
                    as isize;
                let i = if i < 0 { i + n } else { i };
                if i < 0 || i >= n {
                    return Err(Error::ShapeMismatch(format!(
                        "index out of range for an axis of length {n}"
                    )));
                }
                axis += 1;
            }
            SliceInfoElem::Slice { start, end, step } => {
                let n = *shape
                    .get(axis)
                    .ok_or_else(|| Error::ShapeMismatch("too many indices".into()))?
                    as isize;
                if step == 0 {
                    return Err(Error::ShapeMismatch("slice step must not be zero".into()));
                }
                let fix = |v: isize| if v < 0 { v + n } else { v };
                let (s, e) = (fix(start), fix(end.unwrap_or(n)));
                if s < 0 || e > n || s > e {
                    return Err(Error::ShapeMismatch(format!(
                        "slice {start}..{end:?} out of range for an axis of length {n}"
                    )));
                }
                let len = (e - s) as usize;
                out.push(len.div_ceil(step.unsigned_abs()));
                axis += 1;
            }
        }
    }
    if axis > shape.len() {
        return Err(Error::ShapeMismatch("too many indices".into()));
    }
    out.extend_from_slice(&shape[axis..]);
    Ok(out)
}
