//! [`VStack`]: operators stacked vertically across ranks (PyLops-MPI's `MPIVStack`).

use crate::local::LocalOperator;
use crate::vector_blocks::{gathered_layout, offsets, plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::repro::VectorSum;
use distlops_core::VectorRef;
use distlops_core::{
    Communicator, DistVector, Engine, Error, Host, Layout, ReduceOp, Result, Scalar,
};

/// `y = [A_0; A_1; ...; A_{n-1}] x`: every operator sees the whole `x`; rank `r` holds its own
/// operators and their rows of `y`.
///
/// ```text
/// forward:  y_i = A_i x                                (no communication)
/// adjoint:  x   = sum over all operators i of A_i^H y_i   (one all-gather)
/// ```
///
/// * Partitions: domain Broadcast (1-D, `ncols`, the same for every operator on every rank) ->
///   range Scatter (1-D, `sum nrows` per rank).
/// * The adjoint is reproducible: the operators are numbered globally (rank 0's first) and their
///   outputs added along a fixed tree over that number ([`VectorSum`]), so `x` has the same bits
///   for any number of ranks and any distribution of the operators (ranks without operators
///   included), on every rank. It costs one all-gather of every rank's partial sums (one vector
///   from a rank with one operator, at most `2 log2(k) + 2` from a rank with `k`) where a plain
///   sum would all-reduce one vector; PyLops-MPI all-reduces and then broadcasts once more.
/// * Engines: the local operators' engine; on a device without a device-aware communicator the
///   adjoint's all-gather is staged through host memory
///   ([`Communicator::all_gather_varcount_on`]).
/// * PyLops-MPI: `MPIVStack(ops)`.
///
/// # `VStack` or `StackedVStack`
///
/// `VStack` stacks **serial** blocks: each rank hands in its own [`LocalOperator`]s (a
/// `MatrixMult`, a `Convolve1D`, ...) over one replicated model, as PyLops-MPI's `MPIVStack`
/// does with its per-rank PyLops operators. To stack **distributed** operators that share a
/// domain (an operator of your own that implements
/// [`LinearOperator`], a [`FirstDerivative`](crate::FirstDerivative) as a regulariser, an
/// [`FftNd`](crate::FftNd), ...) use [`StackedVStack`](crate::StackedVStack), wrapping each in
/// [`Op::new`](distlops_core::operator::Op::new); its range is a stack of the parts' ranges
/// (PyLops-MPI's `MPIStackedVStack`):
///
/// ```
/// use distlops_core::operator::{LinearOperator, LinearOperatorExt, Op};
/// use distlops_core::{Threads, Vector};
/// use distlops_operators::{
///     FirstDerivative, FirstDerivativeParams, SecondDerivative, SecondDerivativeParams,
///     StackedVStack,
/// };
///
/// Threads::run(3, |comm| {
///     let d1 = FirstDerivative::<f64>::new(&comm, &[10, 4], FirstDerivativeParams::default())?;
///     let d2 = SecondDerivative::<f64>::new(&comm, &[10, 4], SecondDerivativeParams::default())?;
///     // [D1; 0.5 D2]: two distributed operators on the same (10, 4) model.
///     let stack = StackedVStack::new(vec![Op::new(d1), Op::new(d2).scale(0.5)])?;
///     let mut x = stack.domain().zeros::<f64>(&comm)?;
///     x.fill(1.0);
///     let y = stack.apply(&x)?; // a stacked vector: [D1 x; 0.5 D2 x]
///     assert_eq!(y.as_stacked().unwrap().len(), 2);
///     Ok::<(), distlops_core::Error>(())
/// })
/// .into_iter()
/// .collect::<Result<Vec<()>, _>>()
/// .unwrap();
/// ```
pub struct VStack<T: Scalar, E: Engine = Host> {
    ops: Vec<Box<dyn LocalOperator<T, E>>>,
    rows: Vec<usize>,
    domain: Space,
    range: Space,
    comm: Communicator,
    /// The adjoint's sum over all operators, with its buffers.
    sum: VectorSum<T, E>,
}

impl<T: Scalar, E: Engine> VStack<T, E> {
    /// Builds the operator from this rank's local operators.
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (one small
    /// all-reduce of the column counts and two small all-gathers of the row and operator counts).
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
        let sum = VectorSum::from_local(comm, ops.len(), ncols);
        Ok(VStack {
            ops,
            rows,
            domain,
            range,
            comm: comm.clone(),
            sum,
        })
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
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let (x, mut y) = (plain(x), plain_mut(y));
        for (i, op) in self.ops.iter().enumerate() {
            op.matvec(x, E::sub_mut(&mut y, self.rows[i]..self.rows[i + 1]));
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let engine = x.engine();
        let y = plain(y);
        self.sum
            .sum_into(&engine, &self.comm, plain_mut(x), |i, out| {
                self.ops[i].rmatvec(E::sub(y, self.rows[i]..self.rows[i + 1]), out)
            })
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
