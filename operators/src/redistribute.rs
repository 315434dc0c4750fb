//! [`Redistribute`]: the identity between two Scatter layouts of the same global array, as an
//! operator, so that a chain of operators can move its vectors between the layouts its parts
//! want (an FFT's output split along one axis, a stencil's input along another).

use crate::dist_stencil::check_layout;
use crate::fourier::split::Split;
use crate::fourier::transpose::TransposePlan;
use crate::vector_blocks::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::ToEngine;
use distlops_core::VectorRef;
use distlops_core::{
    Communicator, DistVector, Engine, Error, Fingerprint, Host, Layout, Result, Scalar,
};
use std::sync::Mutex;

/// The identity on a global N-D array, from one Scatter layout to another of the same global
/// shape: `y = x` element by element, with `x` distributed as `from` and `y` as `to` (any
/// distributed axes, any counts). The adjoint (also its inverse) moves back.
///
/// * Partitions: domain Scatter `from`, range Scatter `to`.
/// * Communication per product: one personalised all-to-all of the boxes each pair of ranks
///   shares (only non-empty messages travel); a rank's own box is one strided copy. Boxes that
///   are contiguous in the source or destination block are sent or received in place, the
///   others packed into buffers allocated once, at construction (or by
///   [`to_engine`](distlops_core::ToEngine::to_engine)), so products allocate nothing.
/// * Reproducibility: values are only moved: the output holds the input's bits, on any number
///   of ranks.
/// * Engines: [`new`](Self::new) makes the operator on the host; [`to_engine`](distlops_core::ToEngine::to_engine)
///   the same moves on any engine (strided copies and one [`Collectives::exchange`](distlops_core::Collectives::exchange), NCCL on a CUDA
///   device).
/// * PyLops-MPI: no operator; its `DistributedArray.redistribute` is the array method
///   [`DistributedArray::redistribute_to`](distlops_core::DistributedArray::redistribute_to)
///   here, which allocates its result; this operator puts the same move inside operator chains
///   and solvers.
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{DistVector, DistributedArray, Layout, Threads};
/// use distlops_operators::Redistribute;
///
/// let ok = Threads::run(3, |comm| {
///     // A 7 x 5 array split along its rows, moved to a split along its columns.
///     let rows = Layout::scatter(&[7, 5], 0, comm.size())?;
///     let cols = Layout::scatter(&[7, 5], 1, comm.size())?;
///     let op = Redistribute::<f64>::new(&comm, &rows, &cols)?;
///     let mut x = DistributedArray::zeros(&comm, &rows)?;
///     x.fill(2.0);
///     let y = op.apply(&DistVector::Array(x))?;
///     Ok::<bool, distlops_core::Error>(y.as_array().unwrap().layout() == &cols)
/// });
/// assert!(ok.into_iter().all(|r| r.unwrap()));
/// ```
pub struct Redistribute<T: Scalar, E: Engine = Host> {
    from: Layout,
    to: Layout,
    forward: TransposePlan,
    adjoint: TransposePlan,
    /// Send and receive buffers, long enough for either direction.
    work: Mutex<(E::Storage<T>, E::Storage<T>)>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl<T: Scalar> Redistribute<T> {
    /// The move from `from` to `to` on the host. No communication; the same outcome on every
    /// rank for the same layouts.
    ///
    /// # Errors
    /// * [`Error::UnsupportedPartition`] if a layout is not Scatter,
    ///   [`Error::CommSizeMismatch`] if a layout was made for another number of ranks.
    /// * [`Error::ShapeMismatch`] if the global shapes differ.
    pub fn new(comm: &Communicator, from: &Layout, to: &Layout) -> Result<Self> {
        const WHAT: &str = "Redistribute";
        check_layout(WHAT, comm, from)?;
        check_layout(WHAT, comm, to)?;
        if from.global_shape() != to.global_shape() {
            return Err(Error::ShapeMismatch(format!(
                "{WHAT}: from a global shape {:?} to {:?}",
                from.global_shape(),
                to.global_shape()
            )));
        }
        Self::planned(&Host, comm, from, to)
    }
}

impl<T: Scalar, E: Engine> Redistribute<T, E> {
    /// The plans and the buffers of the move from `from` to `to` on `engine`.
    fn planned(engine: &E, comm: &Communicator, from: &Layout, to: &Layout) -> Result<Self> {
        let rank = comm.rank();
        let (a, b) = (Split::from_layout(from), Split::from_layout(to));
        let forward = TransposePlan::with_width(&a, &b, rank, 1);
        let adjoint = TransposePlan::with_width(&b, &a, rank, 1);
        let send = forward.send_len().max(adjoint.send_len());
        let recv = forward.recv_len().max(adjoint.recv_len());
        Ok(Redistribute {
            from: from.clone(),
            to: to.clone(),
            forward,
            adjoint,
            work: Mutex::new((engine.zeros::<T>(&[send])?, engine.zeros::<T>(&[recv])?)),
            domain: Space::array(from.clone()),
            range: Space::array(to.clone()),
            comm: comm.clone(),
        })
    }

    /// The layout of the domain.
    pub fn from_layout(&self) -> &Layout {
        &self.from
    }

    /// The layout of the range.
    pub fn to_layout(&self) -> &Layout {
        &self.to
    }

    /// Moves `src`'s block into `dst`'s by `plan`. Collective.
    fn run(
        &self,
        plan: &TransposePlan,
        src: VectorRef<'_, T, E>,
        dst: &mut DistVector<T, E>,
    ) -> Result<()> {
        let engine = src
            .as_array()
            .expect("the space check admits plain vectors only")
            .engine();
        let mut work = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let (send, recv) = &mut *work;
        let mut send = E::slice_mut(send);
        plan.run_on::<E, T>(
            &engine,
            &self.comm,
            plain(src),
            plain_mut(dst),
            &mut send,
            E::slice_mut(recv),
        )
    }
}

impl<T: Scalar, E: Engine, F: Engine> ToEngine<F> for Redistribute<T, E> {
    type Output = Redistribute<T, F>;

    /// The same operator on `engine`, its buffers allocated there.
    /// [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one small
    /// all-reduce), so a failure on one rank only is an error on every rank.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the buffers (on that rank;
    /// [`Error::FailedOnOtherRank`] on the others).
    fn to_engine(&self, engine: &F) -> Result<Redistribute<T, F>> {
        self.comm.agree_value(Redistribute::planned(
            engine, &self.comm, &self.from, &self.to,
        ))
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Redistribute<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.run(&self.forward, x, y)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.run(&self.adjoint, y, x)
    }
    fn name(&self) -> String {
        format!(
            "Redistribute({} -> {})",
            self.from.describe(),
            self.to.describe()
        )
    }
    fn fingerprint(&self) -> Fingerprint {
        Fingerprint::default().text("Redistribute")
    }
}
