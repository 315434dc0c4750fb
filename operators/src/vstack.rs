//! [`VStack`]: operators stacked vertically across ranks (PyLops-MPI's `MPIVStack`).

use crate::local::LocalOperator;
use crate::seam::{gathered_layout, offsets, plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{
    Communicator, DistVector, Engine, Error, Host, Layout, ReduceOp, Result, Scalar,
};
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
/// * Engines: the local operators' engine; on a device without a device-aware communicator the
///   adjoint's all-reduce is staged through host memory
///   ([`Communicator::all_reduce_sum_on`]).
/// * PyLops-MPI: `MPIVStack(ops)`.
pub struct VStack<T: Scalar, E: Engine = Host> {
    ops: Vec<Box<dyn LocalOperator<T, E>>>,
    rows: Vec<usize>,
    domain: Space,
    range: Space,
    comm: Communicator,
    /// The adjoint's work buffers, on the engine of the first vector it sees.
    work: SumWork<T, E>,
}

impl<T: Scalar, E: Engine> VStack<T, E> {
    /// Builds the operator from this rank's local operators. Collective (two small reductions and
    /// one all-gather).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on every rank if the operators (on any rank) do not all have the
    /// same number of columns.
    pub fn new(comm: &Communicator, ops: Vec<Box<dyn LocalOperator<T, E>>>) -> Result<Self> {
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
            work: SumWork::new(ncols),
        })
    }
}

/// The work buffers of a sum over local operators and ranks (the VStack adjoint, the HStack
/// forward): a partial sum and one operator's output, on the engine of the vectors they serve
/// (allocated at the first product, again only if a product comes on another engine value).
pub(crate) struct SumWork<T: Scalar, E: Engine> {
    len: usize,
    bufs: Mutex<Option<SumBuffers<T, E>>>,
}

/// The engine the buffers are on, the partial sum and one operator's output.
type SumBuffers<T, E> = (E, <E as Engine>::Storage<T>, <E as Engine>::Storage<T>);

impl<T: Scalar, E: Engine> SumWork<T, E> {
    /// Buffers of `len` elements.
    pub(crate) fn new(len: usize) -> Self {
        SumWork {
            len,
            bufs: Mutex::new(None),
        }
    }

    /// `out = sum over ranks of sum_i apply(i)`: each local operator's output (written by
    /// `apply(i, buffer)`) is added to a partial sum in operator order, then one all-reduce.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the buffers cannot be had (at the first product).
    pub(crate) fn sum_over_ops_and_ranks(
        &self,
        engine: &E,
        nops: usize,
        comm: &Communicator,
        out: E::SliceMut<'_, T>,
        apply: impl Fn(usize, E::SliceMut<'_, T>),
    ) -> Result<()> {
        let mut bufs = self.bufs.lock().unwrap_or_else(|e| e.into_inner());
        if bufs.as_ref().is_none_or(|b| &b.0 != engine) {
            let shape = [self.len];
            *bufs = Some((engine.clone(), engine.zeros(&shape)?, engine.zeros(&shape)?));
        }
        let (_, sum, one) = bufs.as_mut().expect("allocated above");
        E::fill(sum, T::zero());
        for i in 0..nops {
            apply(i, E::slice_mut(one));
            E::axpy(T::one(), one, sum);
        }
        comm.all_reduce_sum_on::<T, E>(E::slice(sum), out)
    }
}

/// The number of columns every operator on every rank shares.
pub(crate) fn common_ncols<T: Scalar, E: Engine>(
    comm: &Communicator,
    ops: &[Box<dyn LocalOperator<T, E>>],
    what: &str,
) -> Result<usize> {
    common_size(comm, ops.iter().map(|o| o.ncols()), what, "columns")
}

/// The number of rows every operator on every rank shares.
pub(crate) fn common_nrows<T: Scalar, E: Engine>(
    comm: &Communicator,
    ops: &[Box<dyn LocalOperator<T, E>>],
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

impl<T: Scalar, E: Engine> LinearOperator<T, E> for VStack<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: &DistVector<T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let (x, mut y) = (plain(x), plain_mut(y));
        for (i, op) in self.ops.iter().enumerate() {
            op.matvec(x, E::sub_mut(&mut y, self.rows[i]..self.rows[i + 1]));
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let engine = x.engine();
        let y = plain(y);
        self.work.sum_over_ops_and_ranks(
            &engine,
            self.ops.len(),
            &self.comm,
            plain_mut(x),
            |i, out| self.ops[i].rmatvec(E::sub(y, self.rows[i]..self.rows[i + 1]), out),
        )
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
