//! Reductions: dot products and norms, over the whole array or along one axis.

use super::DistributedArray;
use crate::comm::ReduceOp;
use crate::engine::Host;
use crate::error::{Error, Result};
use crate::kernels;
use crate::layout::Layout;
use crate::partition::Partition;
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

    /// The partial of one slice.
    fn partial<T: Scalar>(self, x: &[T]) -> T::Real {
        match self {
            NormOrd::Zero => {
                <T::Real as RealScalar>::real_from_f64(kernels::count_nonzero(x) as f64)
            }
            NormOrd::One => kernels::sum_abs(x),
            NormOrd::Two => kernels::sum_abs2(x),
            NormOrd::P(p) => kernels::sum_abs_pow(x, <T::Real as RealScalar>::real_from_f64(p)),
            NormOrd::Inf => kernels::max_abs(x),
            NormOrd::NegInf => kernels::min_abs(x),
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
            NormOrd::One => acc + v.abs(),
            NormOrd::Two => acc + v.abs2(),
            NormOrd::P(p) => acc + v.abs().powf(<T::Real as RealScalar>::real_from_f64(p)),
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

impl<T: Scalar> DistributedArray<T, Host> {
    /// `sum_i x_i y_i` over the global array (no conjugation): local dot, then one all-reduce in
    /// the colour group. Replicated arrays need no communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the layouts or masks differ.
    pub fn dot(&self, other: &Self) -> Result<T> {
        self.check_same_layout(other)?;
        Ok(self.reduce_sum(kernels::dot(self.local_slice(), other.local_slice())))
    }

    /// `sum_i conj(x_i) y_i` over the global array.
    ///
    /// # Errors
    /// As [`dot`](Self::dot).
    pub fn vdot(&self, other: &Self) -> Result<T> {
        self.check_same_layout(other)?;
        Ok(self.reduce_sum(kernels::vdot(self.local_slice(), other.local_slice())))
    }

    /// Sums a per-rank partial over the ranks that hold disjoint parts (none for replicated arrays).
    pub(crate) fn reduce_sum<U: crate::scalar::CommData>(&self, local: U) -> U {
        if self.partition().is_replicated() {
            local
        } else {
            self.reduce_comm().all_reduce(local, ReduceOp::Sum)
        }
    }

    /// The Euclidean norm of the whole array (one all-reduce).
    pub fn norm2(&self) -> T::Real {
        self.reduce_sum(kernels::sum_abs2(self.local_slice()))
            .sqrt()
    }

    /// The norm of the whole array, flattened (PyLops-MPI's `norm(ord)` with `axis=None`). One
    /// all-reduce (sum, max or min) in the colour group; none for replicated arrays.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `NormOrd::P(NaN)`.
    pub fn norm(&self, ord: NormOrd) -> Result<T::Real> {
        let ord = ord.normalized()?;
        let partial = ord.partial(self.local_slice());
        let total = if self.partition().is_replicated() {
            partial
        } else {
            self.reduce_comm().all_reduce(partial, ord.reduce_op())
        };
        Ok(ord.finish(total))
    }

    /// The norm along one axis (numpy's `norm(x, ord, axis)`), as a distributed array of the global
    /// shape without `axis`:
    ///
    /// * along the distributed axis of a Scatter array: per-rank partials, one all-reduce, and the
    ///   result is a Broadcast array (identical on every rank of the colour group);
    /// * along another axis: no communication, and the result is Scatter along the same data axis;
    /// * replicated arrays: local, same partition.
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`]; [`Error::InvalidArgument`] for `NormOrd::P(NaN)`.
    pub fn norm_axis(&self, ord: NormOrd, axis: usize) -> Result<DistributedArray<T::Real, Host>> {
        let ord = ord.normalized()?;
        let ndim = self.ndim();
        if axis >= ndim {
            return Err(Error::AxisOutOfRange { axis, ndim });
        }
        let mut reduced_shape = self.global_shape().to_vec();
        reduced_shape.remove(axis);
        let mut local_reduced = self.local.shape().to_vec();
        local_reduced.remove(axis);
        let mut partial = ArrayD::from_elem(IxDyn(&local_reduced), ord.identity());
        for lane in self.local.axis_iter(Axis(axis)) {
            ndarray::Zip::from(&mut partial)
                .and(&lane)
                .for_each(|acc, &v| *acc = ord.accumulate(*acc, v));
        }
        let nranks = self.comm.size();
        let partition = self.partition();
        let layout = if partition == Partition::Scatter && axis == self.axis() {
            let comm = self.reduce_comm();
            let send = partial
                .as_slice()
                .expect("fresh arrays are contiguous")
                .to_vec();
            comm.all_reduce_into(
                &send,
                partial.as_slice_mut().expect("contiguous"),
                ord.reduce_op(),
            );
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
}
