//! [`VStack`]: operators stacked vertically across ranks (PyLops-MPI's `MPIVStack`).

use crate::local::LocalOperator;
use crate::seam::{gathered_layout, offsets, plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{Communicator, DistVector, Error, Layout, ReduceOp, Result, Scalar};
use std::sync::Mutex;

/// `y = [A_0; A_1; ...; A_{n-1}] x`: every operator sees the whole `x`; rank `r` holds its own
/// operators and their rows of `y`.
///
/// ```text
/// forward:  y_i = A_i x                          (no communication)
/// adjoint:  x   = sum over all ranks of sum_i A_i^H y_i   (one all-reduce)
/// ```
///
/// * Partitions: domain Broadcast (1-D, `ncols`, the same for every operator on every rank) ->
///   range Scatter (1-D, `sum nrows` per rank).
/// * The adjoint all-reduces straight into the Broadcast output; PyLops-MPI broadcasts it once more.
/// * PyLops-MPI: `MPIVStack(ops)`.
pub struct VStack<T: Scalar> {
    ops: Vec<Box<dyn LocalOperator<T>>>,
    rows: Vec<usize>,
    domain: Space,
    range: Space,
    comm: Communicator,
    /// (partial sum, one operator's adjoint output), allocated at construction.
    work: Mutex<(Vec<T>, Vec<T>)>,
}

impl<T: Scalar> VStack<T> {
    /// Builds the operator from this rank's local operators. Collective (two small reductions and
    /// one all-gather).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on every rank if the operators (on any rank) do not all have the
    /// same number of columns.
    pub fn new(comm: &Communicator, ops: Vec<Box<dyn LocalOperator<T>>>) -> Result<Self> {
        let ncols = common_ncols(comm, &ops, "VStack")?;
        let rows = offsets(ops.iter().map(|o| o.nrows()));
        let domain = Space::array(Layout::broadcast(&[ncols], comm.size())?);
        let range = Space::array(gathered_layout(
            comm,
            *rows.last().expect("offsets start at 0"),
        )?);
        Ok(VStack {
            ops,
            rows,
            domain,
            range,
            comm: comm.clone(),
            work: Mutex::new((vec![T::zero(); ncols], vec![T::zero(); ncols])),
        })
    }
}

/// `out = sum over ranks of sum_i apply(i)`: each operator's output goes to a work buffer, is added
/// to a local sum, and one all-reduce sums over the ranks. `work` holds (sum, one output).
pub(crate) fn sum_over_ops_and_ranks<T: Scalar>(
    work: &Mutex<(Vec<T>, Vec<T>)>,
    nops: usize,
    comm: &Communicator,
    out: &mut [T],
    apply: impl Fn(usize, &mut [T]),
) {
    let mut work = work.lock().unwrap_or_else(|e| e.into_inner());
    let (sum, one) = &mut *work;
    sum.fill(T::zero());
    for i in 0..nops {
        apply(i, one);
        distlops_core::kernels::axpy(T::one(), one, sum);
    }
    comm.all_reduce_into(sum, out, ReduceOp::Sum);
}

/// The number of columns every operator on every rank shares.
pub(crate) fn common_ncols<T: Scalar>(
    comm: &Communicator,
    ops: &[Box<dyn LocalOperator<T>>],
    what: &str,
) -> Result<usize> {
    common_size(comm, ops.iter().map(|o| o.ncols()), what, "columns")
}

/// The number of rows every operator on every rank shares.
pub(crate) fn common_nrows<T: Scalar>(
    comm: &Communicator,
    ops: &[Box<dyn LocalOperator<T>>],
    what: &str,
) -> Result<usize> {
    common_size(comm, ops.iter().map(|o| o.nrows()), what, "rows")
}

/// Agrees (one all-reduce) on a size that every operator on every rank must share; ranks with no
/// operator accept any.
fn common_size(
    comm: &Communicator,
    sizes: impl Iterator<Item = usize> + Clone,
    what: &str,
    unit: &str,
) -> Result<usize> {
    let local_min = sizes.clone().min().unwrap_or(usize::MAX);
    let local_max = sizes.max().unwrap_or(0);
    let mut both = [0usize; 2];
    comm.all_reduce_into(
        &[local_max, usize::MAX - local_min],
        &mut both,
        ReduceOp::Max,
    );
    let (max, min) = (both[0], usize::MAX - both[1]);
    if min == usize::MAX {
        return Err(Error::InvalidArgument(format!(
            "{what} needs at least one operator"
        )));
    }
    if min != max {
        return Err(Error::ShapeMismatch(format!(
            "{what}: all operators must have the same number of {unit} (found {min} to {max})"
        )));
    }
    Ok(max)
}

impl<T: Scalar> LinearOperator<T> for VStack<T> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let (x, y) = (plain(x), plain_mut(y));
        for (i, op) in self.ops.iter().enumerate() {
            op.matvec(x, &mut y[self.rows[i]..self.rows[i + 1]]);
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let y = plain(y);
        sum_over_ops_and_ranks(
            &self.work,
            self.ops.len(),
            &self.comm,
            plain_mut(x),
            |i, out| self.ops[i].rmatvec(&y[self.rows[i]..self.rows[i + 1]], out),
        );
        Ok(())
    }
    fn name(&self) -> String {
        format!(
            "VStack[{}]",
            self.ops
                .iter()
                .map(|o| o.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
