//! Layouts: the global shape of a distributed array and which part of it every rank holds.

use crate::axis::{resolve_axis, AxisArg};
use crate::comm::{prefix_sums, Communicator, Fingerprint, ReduceOp};
use crate::error::{Error, Result};
use crate::partition::Partition;
use std::sync::Arc;

/// The balanced split of PyLops-MPI's `local_split`: `n` items over `nranks` ranks, the first
/// `n % nranks` ranks getting one extra.
///
/// ```
/// assert_eq!(distlops_core::balanced_counts(10, 4), vec![3, 3, 2, 2]);
/// ```
pub fn balanced_counts(n: usize, nranks: usize) -> Vec<usize> {
    (0..nranks)
        .map(|r| n / nranks + usize::from(r < n % nranks))
        .collect()
}

#[derive(Debug)]
struct Inner {
    global_shape: Vec<usize>,
    axis: usize,
    partition: Partition,
    counts: Vec<usize>,
    offsets: Vec<usize>,
    fingerprint: Fingerprint,
}

/// Global N-D shape, distributed axis, partition, and every rank's local extent along that axis.
///
/// A layout is computed once (collectively only when ranks supply their own local shapes,
/// [`Layout::from_local_shapes`]; every other constructor and method does no communication) and
/// is then identical on every rank, so any check that reads it takes the same branch everywhere.
/// Cheap to clone.
///
/// For [`Partition::Scatter`], rank `r` holds indices `offset(r)..offset(r) + count(r)` along
/// `axis` and everything along the other axes. For the replicated partitions every rank holds
/// the whole array (`count(r)` is the full length, `offset(r)` is 0).
#[derive(Debug, Clone)]
pub struct Layout(Arc<Inner>);

impl PartialEq for Layout {
    /// Equal global shape, partition and per-rank extents; the axis counts only for Scatter
    /// (replicated arrays have no distributed axis).
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.0, &other.0);
        Arc::ptr_eq(a, b)
            || (a.global_shape == b.global_shape
                && a.partition == b.partition
                && a.counts == b.counts
                && (a.axis == b.axis || a.partition != Partition::Scatter))
    }
}
impl Eq for Layout {}

fn check_axis(shape: &[usize], axis: impl AxisArg) -> Result<usize> {
    // A 0-D array is allowed for the replicated partitions (axis 0 then means "no axis").
    let axis = resolve_axis("Layout", axis, shape.len().max(1))?;
    // Every size computed from the shape (global length, local lengths, offsets) fits.
    if shape
        .iter()
        .try_fold(1usize, |a, &n| a.checked_mul(n))
        .is_none()
    {
        return Err(Error::InvalidArgument(format!(
            "a global shape {shape:?} with more than usize::MAX elements"
        )));
    }
    Ok(axis)
}

impl Layout {
    /// A layout with PyLops-MPI's balanced split (for Scatter) over `nranks` ranks. No
    /// communication.
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`] if `axis >= global_shape.len()`, [`Error::InvalidArgument`] if
    /// `nranks == 0` or a Scatter layout has no dimensions.
    pub fn new(
        global_shape: &[usize],
        axis: impl AxisArg,
        partition: Partition,
        nranks: usize,
    ) -> Result<Self> {
        if nranks == 0 {
            return Err(Error::InvalidArgument(
                "a layout needs at least one rank".into(),
            ));
        }
        if partition == Partition::Scatter && global_shape.is_empty() {
            return Err(Error::InvalidArgument(
                "a Scatter array needs at least one dimension".into(),
            ));
        }
        let axis = check_axis(global_shape, axis)?;
        let counts = match partition {
            Partition::Scatter => balanced_counts(global_shape[axis], nranks),
            _ => vec![global_shape.get(axis).copied().unwrap_or(1); nranks],
        };
        Ok(Self::build(global_shape.to_vec(), axis, partition, counts))
    }

    /// A Scatter layout with the balanced split. No communication.
    ///
    /// # Errors
    /// As [`Layout::new`].
    pub fn scatter(global_shape: &[usize], axis: impl AxisArg, nranks: usize) -> Result<Self> {
        Self::new(global_shape, axis, Partition::Scatter, nranks)
    }

    /// A Broadcast layout (every rank holds the whole array; assignments copy rank 0's value). No
    /// communication.
    ///
    /// # Errors
    /// As [`Layout::new`].
    pub fn broadcast(global_shape: &[usize], nranks: usize) -> Result<Self> {
        Self::new(global_shape, 0, Partition::Broadcast, nranks)
    }

    /// A Scatter layout with the given number of items along `axis` on each rank. No
    /// communication.
    ///
    /// # Errors
    /// [`Error::InvalidLocalShapes`] if `counts` does not sum to `global_shape[axis]`, or
    /// [`Error::AxisOutOfRange`].
    pub fn with_counts(
        global_shape: &[usize],
        axis: impl AxisArg,
        counts: &[usize],
    ) -> Result<Self> {
        if counts.is_empty() {
            return Err(Error::InvalidArgument(
                "a layout needs at least one rank".into(),
            ));
        }
        if global_shape.is_empty() {
            return Err(Error::InvalidArgument(
                "a Scatter array needs at least one dimension".into(),
            ));
        }
        let axis = check_axis(global_shape, axis)?;
        let sum = counts.iter().try_fold(0usize, |a, &c| a.checked_add(c));
        if sum != Some(global_shape[axis]) {
            let sum = sum.map_or_else(|| "more than usize::MAX".to_string(), |s| s.to_string());
            return Err(Error::InvalidLocalShapes(format!(
                "local sizes {counts:?} along axis {axis} sum to {sum}, not to the global {}",
                global_shape[axis]
            )));
        }
        Ok(Self::build(
            global_shape.to_vec(),
            axis,
            Partition::Scatter,
            counts.to_vec(),
        ))
    }

    /// Builds a layout from the local shape each rank holds. [Collective](crate#collective-calls):
    /// every rank of `comm` calls it, with the same `axis` and `partition` (two small all-reduces
    /// of the number of dimensions, then one all-gather of the local shapes); every rank
    /// validates the same gathered list, so an invalid combination is an error on every rank.
    ///
    /// For Scatter all local shapes must agree except along `axis`; for the replicated partitions
    /// they must all be equal.
    ///
    /// # Errors
    /// [`Error::InvalidLocalShapes`] on every rank when the shapes do not assemble;
    /// [`Error::AxisOutOfRange`] if `axis` is out of range on any rank; [`Error::LayoutMismatch`]
    /// if the ranks pass different `axis` or `partition` (every error on every rank).
    pub fn from_local_shapes(
        comm: &Communicator,
        local_shape: &[usize],
        axis: usize,
        partition: Partition,
    ) -> Result<Self> {
        let built = Self::assemble(comm, local_shape, axis, partition);
        // Every rank validated the same gathered shapes, but with its own `axis` and `partition`:
        // agree on those too, so that a rank that passed other ones fails with the others.
        let fp = Fingerprint::default()
            .word(axis as u64)
            .text(&format!("{partition:?}"));
        let verdict = built.as_ref().map(|_| ()).map_err(Clone::clone);
        let describe = || format!("axis {axis}, {partition:?}");
        comm.agree_on("Layout::from_local_shapes", fp, describe, verdict)?;
        built
    }

    /// The gather and the checks of [`from_local_shapes`](Self::from_local_shapes), before the
    /// agreement on `axis` and `partition`.
    fn assemble(
        comm: &Communicator,
        local_shape: &[usize],
        axis: usize,
        partition: Partition,
    ) -> Result<Self> {
        let size = comm.size();
        let ndim = comm.all_reduce(local_shape.len(), ReduceOp::Max);
        let ndim_min = comm.all_reduce(local_shape.len(), ReduceOp::Min);
        if ndim != ndim_min {
            return Err(Error::InvalidLocalShapes(format!(
                "ranks hold arrays with {ndim_min} to {ndim} dimensions"
            )));
        }
        let mut all = vec![0usize; ndim * size];
        comm.all_gather_into(local_shape, &mut all);
        let shapes: Vec<&[usize]> = all.chunks(ndim.max(1)).take(size).collect();
        let shapes: Vec<&[usize]> = if ndim == 0 {
            vec![&[][..]; size]
        } else {
            shapes
        };
        let axis = check_axis(shapes[0], axis)?;
        match partition {
            Partition::Scatter => {
                if ndim == 0 {
                    return Err(Error::InvalidArgument(
                        "a Scatter array needs at least one dimension".into(),
                    ));
                }
                for (r, s) in shapes.iter().enumerate() {
                    let differs = s
                        .iter()
                        .zip(shapes[0])
                        .enumerate()
                        .any(|(a, (x, y))| a != axis && x != y);
                    if differs {
                        return Err(Error::InvalidLocalShapes(format!(
                            "rank {r} holds {s:?} but rank 0 holds {:?}; only axis {axis} may differ",
                            shapes[0]
                        )));
                    }
                }
                let counts: Vec<usize> = shapes.iter().map(|s| s[axis]).collect();
                let mut global = shapes[0].to_vec();
                global[axis] = counts.iter().sum();
                Ok(Self::build(global, axis, partition, counts))
            }
            _ => {
                if let Some(r) = shapes.iter().position(|s| s != &shapes[0]) {
                    return Err(Error::InvalidLocalShapes(format!(
                        "a {partition} array must have the same shape on every rank: rank {r} holds {:?}, rank 0 {:?}",
                        shapes[r], shapes[0]
                    )));
                }
                Self::new(shapes[0], axis, partition, size)
            }
        }
    }

    pub(crate) fn build(
        global_shape: Vec<usize>,
        axis: usize,
        partition: Partition,
        counts: Vec<usize>,
    ) -> Self {
        let offsets = match partition {
            Partition::Scatter => prefix_sums(&counts),
            _ => vec![0; counts.len()],
        };
        // What `PartialEq` compares, so equal layouts have equal fingerprints.
        let fingerprint = Fingerprint::default()
            .words(&global_shape)
            .word(match partition {
                Partition::Scatter => axis as u64,
                Partition::Broadcast => u64::MAX - 1,
                Partition::UnsafeBroadcast => u64::MAX - 2,
            })
            .words(&counts);
        Layout(Arc::new(Inner {
            global_shape,
            axis,
            partition,
            counts,
            offsets,
            fingerprint,
        }))
    }

    /// The same global shape and axis with another partition (balanced when Scatter). No
    /// communication.
    pub fn with_partition(&self, partition: Partition) -> Self {
        Self::new(&self.0.global_shape, self.0.axis, partition, self.nranks())
            .expect("a valid layout stays valid with another partition")
    }

    /// A fingerprint of what [`PartialEq`] compares (global shape, partition, Scatter axis,
    /// counts): how ranks check with one small all-reduce that they hold the same layout
    /// ([`Communicator::agree_on`]).
    pub fn fingerprint(&self) -> Fingerprint {
        self.0.fingerprint
    }

    /// The layout in words, for messages: partition, global shape, and for Scatter the axis and
    /// the per-rank counts.
    pub fn describe(&self) -> String {
        let i = &self.0;
        match i.partition {
            Partition::Scatter => format!(
                "Scatter {:?} along axis {} with counts {:?}",
                i.global_shape, i.axis, i.counts
            ),
            p => format!("{p} {:?} on {} rank(s)", i.global_shape, i.counts.len()),
        }
    }

    /// The global shape.
    pub fn global_shape(&self) -> &[usize] {
        &self.0.global_shape
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.0.global_shape.len()
    }

    /// The total number of elements of the global array.
    pub fn global_len(&self) -> usize {
        self.0.global_shape.iter().product()
    }

    /// The distributed axis (meaningful for Scatter).
    pub fn axis(&self) -> usize {
        self.0.axis
    }

    /// The partition.
    pub fn partition(&self) -> Partition {
        self.0.partition
    }

    /// The number of ranks this layout is for.
    pub fn nranks(&self) -> usize {
        self.0.counts.len()
    }

    /// Items along the distributed axis on every rank.
    pub fn counts(&self) -> &[usize] {
        &self.0.counts
    }

    /// Where every rank's block starts along the distributed axis.
    pub fn offsets(&self) -> &[usize] {
        &self.0.offsets
    }

    /// Items along the distributed axis on `rank`.
    pub fn count(&self, rank: usize) -> usize {
        self.0.counts[rank]
    }

    /// Start of `rank`'s block along the distributed axis.
    pub fn offset(&self, rank: usize) -> usize {
        self.0.offsets[rank]
    }

    /// The shape of the local array on `rank`.
    pub fn local_shape(&self, rank: usize) -> Vec<usize> {
        let mut s = self.0.global_shape.clone();
        if self.0.partition == Partition::Scatter {
            s[self.0.axis] = self.0.counts[rank];
        }
        s
    }

    /// The number of elements of the local array on `rank`.
    pub fn local_len(&self, rank: usize) -> usize {
        self.local_shape(rank).iter().product()
    }

    /// Number of elements of every rank's local array.
    pub fn local_lens(&self) -> Vec<usize> {
        (0..self.nranks()).map(|r| self.local_len(r)).collect()
    }

    /// Checks that this layout was made for a communicator of `comm`'s size. No communication.
    ///
    /// # Errors
    /// [`Error::CommSizeMismatch`].
    pub fn check_comm(&self, comm: &Communicator) -> Result<()> {
        if self.nranks() != comm.size() {
            return Err(Error::CommSizeMismatch {
                layout: self.nranks(),
                comm: comm.size(),
            });
        }
        Ok(())
    }
}
