//! [`L21`]: the mixed `L2,1` norm of a stack of vectors, the penalty of isotropic total
//! variation on a stacked gradient.

use crate::common::real;
use crate::common::Result;
use crate::elementwise::with_blocks;
use crate::prox::{check_tau, check_weight, norm, Proximal};
use distlops_core::{
    DistVector, DistributedArray, Engine, Error, GroupScale, NormOrd, RealScalar, Scalar, VectorRef,
};
use num_traits::{Float, Zero};

/// `f(x) = sigma sum_i sqrt(sum_k |x_k[i]|^2)`: the mixed `L2,1` norm of a stack
/// `x = [x_0; x_1; ...; x_{K-1}]` of `K` parts with one layout, the sum over the elements `i`
/// of the Euclidean norm across the parts. On the output of
/// [`Gradient`](../distlops_operators/struct.Gradient.html) (one part per axis) it is the
/// isotropic total variation; `L1` on the same stack is the anisotropic one.
///
/// * `prox_{tau f}(x)`: every element's vector `(x_0[i], ..., x_{K-1}[i])` shrinks towards zero
///   by `tau sigma` in length: it is scaled by `1 - tau sigma / max(n_i, tau sigma)`, `n_i` its
///   length (zero when `n_i <= tau sigma`).
/// * `prox_{tau f*}(x)` ([`proxdual_in_place`](Proximal::proxdual_in_place)): `f*` is the
///   indicator of the vectors with every `n_i <= sigma`, so its prox is the projection onto them,
///   `x_k[i] sigma / max(n_i, sigma)`, for every `tau` (pyproximal's formula; the Moreau
///   identity holds to rounding, tested).
/// * Partitions: a stacked vector whose parts are plain arrays with **the same layout** (any
///   partition; Scatter parts may be distributed along any axis, with any counts), or a plain
///   array (one part: `f` is then `sigma |x|_1` of the moduli). Each rank works on its own
///   elements of every part: no communication for the proxes, one reduction for `f(x)`. A
///   stack whose parts' layouts differ is an [`Error::LayoutMismatch`] on every rank (the
///   layouts are global, so every rank sees the same).
/// * Engines: the proxes run on the vector's engine (`Compute::group_scale`: on a device one
///   kernel pass per part for the lengths and one for the scaling, bitwise the host's); the
///   value's lengths make a round trip through host memory.
/// * Complex values: `|x_k[i]|^2` is the squared modulus; the scale is real.
/// * PyLops-MPI: `MPIL21(ndim, sigma)` (0.8.0), pyproximal's `L21(ndim, sigma)` on a flat vector
///   of `ndim` stacked parts; here the stack is the vector's own structure.
///
/// ```
/// use distlops_core::{DistVector, DistributedArray, Layout, StackedDistributedArray, Threads};
/// use distlops_solvers::{Proximal, L21};
///
/// Threads::run(2, |comm| {
///     let layout = Layout::scatter(&[3], 0, comm.size()).unwrap();
///     let part = |v: [f64; 3]| {
///         let mut a = DistributedArray::<f64>::zeros(&comm, &layout).unwrap();
///         let offset = layout.offset(comm.rank());
///         for (i, x) in a.local_slice_mut().iter_mut().enumerate() {
///             *x = v[offset + i];
///         }
///         DistVector::Array(a)
///     };
///     // Three 2-vectors (3, 4), (0, 0), (0.6, 0.8): lengths 5, 0, 1.
///     let stack = StackedDistributedArray::new(vec![part([3.0, 0.0, 0.6]), part([4.0, 0.0, 0.8])]);
///     let x = DistVector::Stacked(stack.unwrap());
///     let l21 = L21 { sigma: 2.0 };
///     assert_eq!(l21.value(x.view()).unwrap(), 12.0); // 2 (5 + 0 + 1)
///     let p = l21.prox(x.view(), 1.0).unwrap(); // lengths shrink by 2: 3, 0, 0
///     let want = [1.8, 0.0, 0.0, 2.4, 0.0, 0.0];
///     assert!(p.asarray().iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-15));
/// });
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L21 {
    /// The weight `sigma` (finite, non-negative).
    pub sigma: f64,
}

impl<T: Scalar, E: Engine> Proximal<T, E> for L21 {
    /// `sigma sum_i n_i`: the lengths in a vector of the parts' layout, then its reproducible
    /// 1-norm (the same bits at every rank count).
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        check_weight("sigma", "L21", self.sigma)?;
        let mut x = x.to_owned();
        let mut parts = parts_of(&mut x)?;
        // The lengths go into the first part; its 1-norm is their sum.
        with_blocks(&mut parts, lengths_into_first);
        let lengths = VectorRef::Array(&*parts[0]);
        let total = norm(lengths, NormOrd::One)?;
        Ok(<T::Real as RealScalar>::real_from_f64(self.sigma) * total)
    }

    /// Every element's vector scaled by `1 - tau sigma / max(n_i, tau sigma)`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_weight("sigma", "L21", self.sigma)?;
        check_tau("L21", tau)?;
        let ts = <T::Real as RealScalar>::real_from_f64(tau * self.sigma);
        group_scale(&mut parts_of(x)?, None, GroupScale::Shrink(ts))
    }

    /// The projection: every element's vector scaled by `sigma / max(n_i, sigma)` (`tau` is
    /// checked, not used).
    fn proxdual_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_weight("sigma", "L21", self.sigma)?;
        crate::prox::check_positive("L21", "tau", tau)?;
        let s = <T::Real as RealScalar>::real_from_f64(self.sigma);
        group_scale(&mut parts_of(x)?, None, GroupScale::Project(s))
    }

    /// The projection of `y + alpha x` in one pass over `y` (on the host; on a device the sum
    /// is one more kernel per part), the same bits as `axpy` then
    /// [`proxdual_in_place`](Proximal::proxdual_in_place).
    fn proxdual_of_sum_in_place(
        &self,
        y: &mut DistVector<T, E>,
        alpha: f64,
        x: &DistVector<T, E>,
        tau: f64,
    ) -> Result<()> {
        check_weight("sigma", "L21", self.sigma)?;
        crate::prox::check_positive("L21", "tau", tau)?;
        let s = <T::Real as RealScalar>::real_from_f64(self.sigma);
        let mut parts = parts_of(y)?;
        let added = parts_of_ref(x, &parts)?;
        group_scale(
            &mut parts,
            Some((real::<T>(alpha), &added)),
            GroupScale::Project(s),
        )
    }

    fn name(&self) -> String {
        format!("L21(sigma = {})", self.sigma)
    }
}

/// The plain arrays of `x` (itself, or the parts of a one-level stack), checked to share one
/// layout.
fn parts_of<T: Scalar, E: Engine>(
    x: &mut DistVector<T, E>,
) -> Result<Vec<&mut DistributedArray<T, E>>> {
    let parts: Vec<&mut DistributedArray<T, E>> = match x {
        DistVector::Array(a) => vec![a],
        DistVector::Stacked(s) => s
            .parts_mut()
            .iter_mut()
            .map(|p| match p {
                DistVector::Array(a) => Ok(a),
                DistVector::Stacked(_) => Err(Error::LayoutMismatch(
                    "L21: the parts of the stack must be plain arrays, got a nested stack".into(),
                )),
            })
            .collect::<Result<_>>()?,
    };
    let Some(first) = parts.first() else {
        return Err(Error::LayoutMismatch("L21: the stack has no parts".into()));
    };
    let layout = first.layout().clone();
    if let Some((k, p)) = parts
        .iter()
        .enumerate()
        .find(|(_, p)| *p.layout() != layout)
    {
        return Err(Error::LayoutMismatch(format!(
            "L21: every part of the stack must have the layout of part 0 ({}), part {k} has {}",
            layout.describe(),
            p.layout().describe()
        )));
    }
    Ok(parts)
}

/// `n_i = sqrt(sum_k |b_k[i]|^2)`, the parts added in order.
fn length<T: Scalar>(blocks: &[&mut [T]], i: usize) -> T::Real {
    blocks
        .iter()
        .fold(T::Real::zero(), |acc, b| acc + b[i].abs2())
        .sqrt()
}

/// `b_0[i] = n_i` for every element (the other blocks are left as they are).
fn lengths_into_first<T: Scalar>(blocks: &mut [&mut [T]]) {
    for i in 0..blocks.first().map_or(0, |b| b.len()) {
        blocks[0][i] = T::from_real(length(blocks, i));
    }
}

/// `op` on the parts' blocks on this rank, on their engine (`Compute::group_scale`, one kernel
/// pass per part on a device).
///
/// # Errors
/// [`Error::Allocation`] if the engine has no room for its work space.
/// The parts of `x`, which must be plain arrays with the layouts of `parts` (the parts of `y`).
fn parts_of_ref<'x, T: Scalar, E: Engine>(
    x: &'x DistVector<T, E>,
    parts: &[&mut DistributedArray<T, E>],
) -> Result<Vec<&'x DistributedArray<T, E>>> {
    // None for a nested stack.
    let xs: Option<Vec<&DistributedArray<T, E>>> = match x {
        DistVector::Array(a) => Some(vec![a]),
        DistVector::Stacked(s) => s.parts().iter().map(DistVector::as_array).collect(),
    };
    match xs {
        Some(xs)
            if xs.len() == parts.len()
                && xs.iter().zip(parts).all(|(a, b)| a.layout() == b.layout()) =>
        {
            Ok(xs)
        }
        _ => Err(Error::LayoutMismatch(
            "L21: the added vector must have the stack's structure and layouts".into(),
        )),
    }
}

fn group_scale<T: Scalar, E: Engine>(
    parts: &mut [&mut DistributedArray<T, E>],
    add: Option<(T, &[&DistributedArray<T, E>])>,
    op: GroupScale<T::Real>,
) -> Result<()> {
    let n = parts[0].local_shape().iter().product();
    let mut work = parts[0]
        .engine()
        .zeros::<T::Real>(&[E::group_scale_work(n)])?;
    let mut blocks: Vec<&mut E::Storage<T>> =
        parts.iter_mut().map(|a| a.local_block_mut()).collect();
    let added: Option<(T, Vec<&E::Storage<T>>)> =
        add.map(|(alpha, a)| (alpha, a.iter().map(|p| p.local_block()).collect()));
    let added = added.as_ref().map(|(alpha, a)| (*alpha, a.as_slice()));
    E::group_scale(op, &mut blocks, added, &mut work);
    Ok(())
}
