//! Reductions: dot products and norms, over the whole array or along one axis.
//!
//! The sums over the whole array ([`dot`](DistributedArray::dot),
//! [`vdot`](DistributedArray::vdot), [`norm2`](DistributedArray::norm2) and the orders 1, 2 and
//! `p` of [`norm`](DistributedArray::norm)) are reproducible sums (see
//! [`repro`](crate::repro#which-arrays-are-reproducible) for which layouts give the same bits for
//! every split); the orders 0, inf and -inf (counts, max, min) do not depend on the order of the
//! terms and keep one all-reduce of per-rank partials; [`norm_axis`](DistributedArray::norm_axis)
//! along the split axis adds the rows of the orders 1, 2 and `p` along a fixed tree over the
//! global row index ([`VectorSum`]), so it too has the same bits for every split.

use super::DistributedArray;
use crate::axis::{resolve_axis, AxisArg};
use crate::comm::{Fingerprint, ReduceOp};
use crate::engine::{Engine, Host, NormTerm, OrderFree};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::partition::Partition;
use crate::repro::{BlockNode, ReproSums, SumTree, VectorSum};
use crate::scalar::{RealScalar, Scalar};
use ndarray::{ArrayD, Axis, IxDyn};
use num_traits::{Float, One, Zero};

/// The order of a vector norm (numpy's `ord`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum NormOrd {
    /// The number of non-zero entries.
    Zero,
    /// `sum |x_i|`.
    One,
    /// `sqrt(sum |x_i|^2)` (the default).
    #[default]
    Two,
    /// `(sum |x_i|^p)^(1/p)` for any finite non-zero `p` (0, 1 and 2 map to the variants above).
    P(f64),
    /// `max |x_i|`.
    Inf,
    /// `min |x_i|`.
    NegInf,
}

impl NormOrd {
    pub(crate) fn normalized(self) -> Result<Self> {
        Ok(match self {
            NormOrd::P(p) if p.is_nan() => {
                return Err(Error::InvalidArgument("the norm order is NaN".into()));
            }
            NormOrd::P(p) if p == f64::INFINITY => NormOrd::Inf,
            NormOrd::P(p) if p == f64::NEG_INFINITY => NormOrd::NegInf,
            NormOrd::P(0.0) => NormOrd::Zero,
            NormOrd::P(1.0) => NormOrd::One,
            NormOrd::P(2.0) => NormOrd::Two,
            other => other,
        })
    }

    /// How partial results from the ranks combine.
    fn reduce_op(self) -> ReduceOp {
        match self {
            NormOrd::Inf => ReduceOp::Max,
            NormOrd::NegInf => ReduceOp::Min,
            _ => ReduceOp::Sum,
        }
    }

    /// The terms of a sum-based order (1, 2, p), or the kind of an order-free one (0, inf,
    /// -inf), which keeps per-rank partials.
    fn kind(self) -> std::result::Result<NormTerm, OrderFree> {
        match self {
            NormOrd::Zero => Err(OrderFree::CountNonzero),
            NormOrd::Inf => Err(OrderFree::MaxAbs),
            NormOrd::NegInf => Err(OrderFree::MinAbs),
            NormOrd::One => Ok(NormTerm::Abs),
            NormOrd::Two => Ok(NormTerm::Abs2),
            NormOrd::P(p) => Ok(NormTerm::AbsPow(p)),
        }
    }

    /// The partial's neutral element.
    fn identity<R: RealScalar>(self) -> R {
        match self {
            NormOrd::NegInf => R::infinity(),
            _ => R::zero(),
        }
    }

    /// Adds one element to a partial.
    fn accumulate<T: Scalar>(self, acc: T::Real, v: T) -> T::Real {
        match self {
            NormOrd::Zero => {
                acc + if v.is_zero() {
                    T::Real::zero()
                } else {
                    T::Real::one()
                }
            }
            NormOrd::One => acc + norm_term(NormTerm::Abs, v),
            NormOrd::Two => acc + norm_term(NormTerm::Abs2, v),
            NormOrd::P(p) => acc + norm_term(NormTerm::AbsPow(p), v),
            NormOrd::Inf => {
                let a = v.abs();
                if a > acc || Float::is_nan(a) {
                    a
                } else {
                    acc
                }
            }
            NormOrd::NegInf => {
                let a = v.abs();
                if a < acc || Float::is_nan(a) {
                    a
                } else {
                    acc
                }
            }
        }
    }

    /// Turns a reduced partial into the norm.
    fn finish<R: RealScalar>(self, v: R) -> R {
        match self {
            NormOrd::Two => v.sqrt(),
            NormOrd::P(p) => v.powf(R::real_from_f64(1.0 / p)),
            _ => v,
        }
    }
}

/// One term of a sum-based norm: `|v|`, `|v|^2` or `|v|^p`.
fn norm_term<T: Scalar>(term: NormTerm, v: T) -> T::Real {
    match term {
        NormTerm::Abs => v.abs(),
        NormTerm::Abs2 => v.abs2(),
        NormTerm::AbsPow(p) => v.abs().powf(<T::Real as RealScalar>::real_from_f64(p)),
    }
}

impl<T: Scalar, E: Engine> DistributedArray<T, E> {
    /// `sum_i x_i y_i` over the global array (no conjugation): a reproducible sum (see
    /// [`repro`](crate::repro#which-arrays-are-reproducible) for which layouts give the same bits
    /// for any split). [Collective](crate#collective-calls): every rank of the array's communicator
    /// calls it (of its colour group, for a masked array), for every partition: one small agreement
    /// on the layouts, then one all-reduce, both in the colour group (replicated arrays skip the
    /// all-reduce, not the agreement).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the layouts or masks differ.
    pub fn dot(&self, other: &Self) -> Result<T> {
        self.agree_pair("dot", other)?;
        Ok(self.repro_sum(|nodes| E::dot_nodes(false, &self.local, &other.local, nodes)))
    }

    /// `sum_i conj(x_i) y_i` over the global array, as [`dot`](Self::dot):
    /// [collective](crate#collective-calls).
    ///
    /// # Errors
    /// As [`dot`](Self::dot).
    pub fn vdot(&self, other: &Self) -> Result<T> {
        self.agree_pair("vdot", other)?;
        Ok(self.repro_sum(|nodes| E::dot_nodes(true, &self.local, &other.local, nodes)))
    }

    /// Computes this rank's share of `vdot(self, other)` (one pass over the local blocks) and adds
    /// it to a batch of sums, which [`ReproSums::all_reduce`] then completes with one all-reduce
    /// over [`reduce_comm`](Self::reduce_comm) for the whole batch. The result has the bits of
    /// [`vdot`](Self::vdot). No communication (and no agreement: the caller agrees on the
    /// vectors before the batch's collective all-reduce).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the layouts or masks differ (nothing is pushed).
    pub fn push_vdot(&self, other: &Self, sums: &mut ReproSums<T>) -> Result<()> {
        self.check_same_layout(other)?;
        let tree = self.sum_tree();
        let values = E::dot_nodes(true, &self.local, &other.local, &tree.block_nodes());
        sums.push_values(tree, &values);
        Ok(())
    }

    /// CG's update with its reduction, one pass on the host: `x += a c`, `self -= a q`, then
    /// this rank's share of `vdot(self, self)` pushed onto `sums` (as
    /// [`push_vdot`](Self::push_vdot); the bits of [`axpy`](Self::axpy) twice and
    /// [`vdot`](Self::vdot)). No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the four layouts differ (nothing is changed).
    pub fn push_cg_update(
        &mut self,
        a: T,
        q: &Self,
        x: &mut Self,
        c: &Self,
        sums: &mut ReproSums<T>,
    ) -> Result<()> {
        self.check_same_layout(q)?;
        self.check_same_layout(x)?;
        self.check_same_layout(c)?;
        let tree = self.sum_tree();
        let values = E::cg_update_nodes(
            a,
            &c.local,
            &mut x.local,
            &q.local,
            &mut self.local,
            &tree.block_nodes(),
        );
        sums.push_values(tree, &values);
        Ok(())
    }

    /// `self = alpha x + beta self` and this rank's share of `vdot(self, x)` pushed onto `sums`,
    /// one pass on the host (the bits of [`axpby`](Self::axpby) and [`vdot`](Self::vdot)). No
    /// communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the layouts differ (nothing is changed).
    pub fn push_axpby_vdot(
        &mut self,
        alpha: T,
        x: &Self,
        beta: T,
        sums: &mut ReproSums<T>,
    ) -> Result<()> {
        self.check_same_layout(x)?;
        let tree = self.sum_tree();
        let values =
            E::axpby_vdot_nodes(alpha, &x.local, beta, &mut self.local, &tree.block_nodes());
        sums.push_values(tree, &values);
        Ok(())
    }

    /// `d = x - x_old`, this rank's share of `vdot(d, d)` pushed onto `sums`, and
    /// `self = x + theta d`: a primal-dual extrapolation, one pass on the host (the bits of
    /// [`binary_into`](Self::binary_into), [`vdot`](Self::vdot) and [`axpby`](Self::axpby)). No
    /// communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the layouts differ (nothing is changed).
    pub fn push_extrapolate(
        &mut self,
        theta: T,
        x: &Self,
        x_old: &Self,
        sums: &mut ReproSums<T>,
    ) -> Result<()> {
        self.check_same_layout(x)?;
        self.check_same_layout(x_old)?;
        let tree = self.sum_tree();
        let values = E::extrapolate_nodes(
            theta,
            &x.local,
            &x_old.local,
            &mut self.local,
            &tree.block_nodes(),
        );
        sums.push_values(tree, &values);
        Ok(())
    }

    /// The canonical summation tree of this array's reductions, seen from this rank: over the
    /// blocks of the ranks of [`reduce_comm`](Self::reduce_comm) in rank order for Scatter arrays
    /// (the colour group's members when masked), over the local copy alone (no communication) for
    /// replicated arrays. See [`repro`](crate::repro#which-arrays-are-reproducible). No
    /// communication.
    pub fn sum_tree(&self) -> SumTree {
        if self.partition().is_replicated() {
            return SumTree::local(self.layout.local_len(self.rank()));
        }
        match &self.mask {
            None => {
                let axis_len = self.global_shape()[self.axis()];
                let unit = self.global_len().checked_div(axis_len).unwrap_or(0);
                let tree = SumTree::from_counts(self.layout.counts(), unit, self.rank());
                debug_assert_eq!(tree.block().len(), self.layout.local_len(self.rank()));
                tree
            }
            Some(_) => {
                let (lens, rank) = self.group_blocks(|r| self.layout.local_len(r));
                SumTree::new(&lens, rank)
            }
        }
    }

    /// The agreement before a norm of order `ord` (along `axis`, if given): the order is valid
    /// and the axis an axis of the array on every rank, and both are the same everywhere.
    fn agree_norm(
        &self,
        what: &str,
        ord: NormOrd,
        axis: Option<&Result<usize>>,
    ) -> Result<NormOrd> {
        let (fp, checked) = match (ord.normalized(), axis) {
            (Ok(_), Some(Err(e))) => (Fingerprint::default(), Err(e.clone())),
            (Ok(o), _) => (
                Fingerprint::default()
                    .text(&format!("{o:?}"))
                    .word(axis.map_or(u64::MAX, |a| *a.as_ref().unwrap_or(&0) as u64)),
                Ok(o),
            ),
            (Err(e), _) => (Fingerprint::default(), Err(e)),
        };
        let local = checked.as_ref().map(|_| ()).map_err(Clone::clone);
        let describe = || match axis {
            Some(Ok(a)) => format!("order {ord:?} along axis {a}"),
            _ => format!("order {ord:?}"),
        };
        self.agree_reduction(what, fp, describe, local)?;
        checked
    }

    /// `per_rank(r)` for the ranks `r` of [`reduce_comm`](Self::reduce_comm) in its rank order,
    /// and this rank's place among them.
    fn group_blocks(&self, per_rank: impl Fn(usize) -> usize) -> (Vec<usize>, usize) {
        match &self.mask {
            None => ((0..self.comm.size()).map(per_rank).collect(), self.rank()),
            Some(mask) => (
                mask.members(self.rank())
                    .into_iter()
                    .map(per_rank)
                    .collect(),
                mask.group().rank(),
            ),
        }
    }

    /// One reproducible sum over this array's tree, whose block nodes `values` evaluates (see
    /// [`SumTree::block_nodes`]): [`ReproSums`] for a single sum, without its bookkeeping.
    fn repro_sum<V: Scalar>(&self, values: impl FnOnce(&[BlockNode]) -> Vec<V>) -> V {
        let tree = self.sum_tree();
        let values = values(&tree.block_nodes());
        let mut slots = vec![V::zero(); tree.slots()];
        tree.fill_slots_from(&values, &mut slots);
        if !tree.is_distributed() {
            return tree.finish(&mut slots);
        }
        self.reduce_comm()
            .all_reduce_in_place(&mut slots, ReduceOp::Sum);
        tree.finish(&mut slots)
    }

    /// The Euclidean norm of the whole array: a reproducible sum of `|x_i|^2` (as
    /// [`dot`](Self::dot)). [Collective](crate#collective-calls): every rank of the array's
    /// communicator calls it, for every partition (one small agreement, then one all-reduce in the
    /// colour group, none for replicated arrays).
    ///
    /// # Panics
    /// On every rank if the ranks hold this array with different layouts (use
    /// [`norm`](Self::norm) for an `Err` instead).
    pub fn norm2(&self) -> T::Real {
        self.agree_or_panic("norm2", self.reduce_comm());
        self.repro_sum(|nodes| E::norm_nodes(NormTerm::Abs2, &self.local, nodes))
            .sqrt()
    }

    /// The norm of the whole array, flattened (PyLops-MPI's `norm(ord)` with `axis=None`).
    /// [Collective](crate#collective-calls): every rank of the array's communicator calls it with
    /// the same `ord`, for every partition: one small agreement on the layout and order, then one
    /// all-reduce in the colour group (none for replicated arrays): a reproducible sum (as
    /// [`dot`](Self::dot)) for the orders 1, 2 and `p`, a sum, max or min of per-rank partials for
    /// 0, inf and -inf (which do not depend on the order of the terms).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `NormOrd::P(NaN)`.
    pub fn norm(&self, ord: NormOrd) -> Result<T::Real> {
        let ord = self.agree_norm("norm", ord, None)?;
        let total = match ord.kind() {
            Err(kind) => {
                let partial = E::order_free(kind, &self.local);
                if self.partition().is_replicated() {
                    partial
                } else {
                    self.reduce_comm().all_reduce(partial, ord.reduce_op())
                }
            }
            Ok(term) => self.repro_sum(|nodes| E::norm_nodes(term, &self.local, nodes)),
        };
        Ok(ord.finish(total))
    }
}

impl<T: Scalar> DistributedArray<T, Host> {
    /// The norm along one axis (numpy's `norm(x, ord, axis)`), as a distributed array of the global
    /// shape without `axis`. [Collective](crate#collective-calls): every rank of the array's
    /// communicator calls it with the same `ord` and `axis`, for every partition and axis (one
    /// small agreement on the layout, order and axis; the data moves as below):
    ///
    /// * along the distributed axis of a Scatter array: the result is a Broadcast array
    ///   (identical on every rank of the colour group). The orders 1, 2 and `p` add the rows'
    ///   terms along a fixed tree over the global row index, so the result has the same bits for
    ///   every number of ranks and every split (one all-gather of at most `2 log2(rows) + 2`
    ///   partial rows per rank, see [`VectorSum`]); the orders 0, inf and -inf reduce per-rank
    ///   partials with one all-reduce;
    /// * along another axis: no data moves, and the result is Scatter along the same data axis;
    /// * replicated arrays: no data moves, same partition.
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`]; [`Error::InvalidArgument`] for `NormOrd::P(NaN)`;
    /// [`Error::Allocation`] if the partial rows of a sum along the split axis cannot be had.
    pub fn norm_axis(
        &self,
        ord: NormOrd,
        axis: impl AxisArg,
    ) -> Result<DistributedArray<T::Real, Host>> {
        let resolved = resolve_axis("norm_axis", axis, self.ndim());
        let ord = self.agree_norm("norm_axis", ord, Some(&resolved))?;
        let axis = resolved?;
        let mut reduced_shape = self.global_shape().to_vec();
        reduced_shape.remove(axis);
        let mut local_reduced = self.local.shape().to_vec();
        local_reduced.remove(axis);
        let mut partial = ArrayD::from_elem(IxDyn(&local_reduced), ord.identity());
        let nranks = self.comm.size();
        let partition = self.partition();
        let split = partition == Partition::Scatter && axis == self.axis();
        if let (true, Ok(term)) = (split, ord.kind()) {
            self.sum_rows(term, axis, &mut partial)?;
        } else {
            for lane in self.local.axis_iter(Axis(axis)) {
                ndarray::Zip::from(&mut partial)
                    .and(&lane)
                    .for_each(|acc, &v| *acc = ord.accumulate(*acc, v));
            }
        }
        let layout = if split {
            if ord.kind().is_err() {
                let send = partial
                    .as_slice()
                    .expect("fresh arrays are contiguous")
                    .to_vec();
                self.reduce_comm().all_reduce_into(
                    &send,
                    partial.as_slice_mut().expect("contiguous"),
                    ord.reduce_op(),
                );
            }
            Layout::new(&reduced_shape, 0, Partition::Broadcast, nranks)?
        } else if partition == Partition::Scatter {
            let data_axis = self.axis() - usize::from(axis < self.axis());
            Layout::with_counts(&reduced_shape, data_axis, self.layout.counts())?
        } else {
            Layout::new(&reduced_shape, 0, partition, nranks)?
        };
        partial.mapv_inplace(|v| ord.finish(v));
        Ok(DistributedArray::from_parts(
            self.comm.clone(),
            layout,
            partial,
            self.mask.clone(),
        ))
    }

    /// `out = sum over the global rows i along the split axis of term(x_i)`, the same on every
    /// rank of the colour group: a [`VectorSum`] over the group's rows.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the partial rows cannot be had.
    fn sum_rows(&self, term: NormTerm, axis: usize, out: &mut ArrayD<T::Real>) -> Result<()> {
        let (counts, rank) = self.group_blocks(|r| self.layout.count(r));
        let out = out.as_slice_mut().expect("fresh arrays are contiguous");
        let sum = VectorSum::<T::Real, Host>::new(&counts, rank, out.len());
        sum.sum_into(&Host, self.reduce_comm(), out, |i, buf| {
            let row = self.local.index_axis(Axis(axis), i);
            for (b, &v) in buf.iter_mut().zip(row.iter()) {
                *b = norm_term(term, v);
            }
        })
    }
}
