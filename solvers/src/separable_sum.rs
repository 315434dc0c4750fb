//! [`SeparableSum`]: a sum of proximable functions, each of one part of a stacked vector,
//! `g(v) = sum_i g_i(v_i)`.

use crate::common::Result;
use crate::prox::{check_positive, check_tau, Proximal};
use distlops_core::{DistVector, Engine, Error, Host, RealScalar, Scalar, VectorRef};

/// `g(v) = g_1(v_1) + ... + g_k(v_k)` on a stacked vector `v = [v_1; ...; v_k]`: a separable
/// sum, each term a proximable function of its own part (pyproximal's `VStack` of proximal
/// operators; PyLops-MPI 0.8.0 has none).
///
/// * `prox_{tau g}(v) = [prox_{tau g_1}(v_1); ...; prox_{tau g_k}(v_k)]`: the function is
///   separable across the parts, so its proximal operator is each term's on its part.
/// * `prox_{tau g*}(v) = [prox_{tau g_1*}(v_1); ...]`: the conjugate of a separable sum is the
///   separable sum of the conjugates, so each term's own `proxdual` (with its closed form where
///   it has one) runs on its part.
/// * `grad g(v) = [grad g_1(v_1); ...]` when every term has a gradient.
/// * The typical use is a primal-dual solve with a stacked operator `K = [K_1; K_2]`, each block
///   regularised by its own function: TV and sparsity together with `K = [grad; I]` and
///   `g = SeparableSum::new(vec![Box::new(L21 { .. }), Box::new(L1 { .. })])`.
/// * Partitions: `v` must be a stack of exactly `k` parts (each part may itself be a stack,
///   as its term needs: a stacked gradient for [`L21`](crate::L21)); the terms check their parts.
///   The structure is checked with one agreement per call, so a vector of another structure on
///   one rank only is an [`Error::LayoutMismatch`] on every rank. Beyond that, the
///   communication is the terms' own (`value` is one reduction per term).
///
/// ```
/// use distlops_core::{DistVector, DistributedArray, Layout, StackedDistributedArray, Threads};
/// use distlops_solvers::{Bounds, Proximal, SeparableSum, L1};
///
/// Threads::run(2, |comm| {
///     let layout = Layout::scatter(&[3], 0, comm.size()).unwrap();
///     let part = |v: f64| DistVector::Array(DistributedArray::<f64>::full(&comm, &layout, v).unwrap());
///     let v = DistVector::Stacked(StackedDistributedArray::new(vec![part(2.0), part(-2.0)]).unwrap());
///     // |v_1|_1 + indicator of [-1, 1] at v_2
///     let g = SeparableSum::new(vec![
///         Box::new(L1 { sigma: 1.0 }),
///         Box::new(Bounds { lower: -1.0, upper: 1.0 }),
///     ])
///     .unwrap();
///     let p = g.prox(v.view(), 0.5).unwrap();
///     let DistVector::Stacked(p) = p else { unreachable!() };
///     assert_eq!(p.parts()[0].asarray().as_slice().unwrap(), &[1.5, 1.5, 1.5]); // soft(2, 0.5)
///     assert_eq!(p.parts()[1].asarray().as_slice().unwrap(), &[-1.0, -1.0, -1.0]); // clip(-2)
/// });
/// ```
pub struct SeparableSum<'a, T: Scalar, E: Engine = Host> {
    terms: Vec<Box<dyn Proximal<T, E> + 'a>>,
}

const NAME: &str = "SeparableSum";

impl<'a, T: Scalar, E: Engine> SeparableSum<'a, T, E> {
    /// `sum_i terms[i](v_i)`. No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `terms` is empty (the same on every rank, which all pass
    /// the same terms).
    pub fn new(terms: Vec<Box<dyn Proximal<T, E> + 'a>>) -> Result<Self> {
        if terms.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{NAME}: at least one term is needed"
            )));
        }
        Ok(SeparableSum { terms })
    }

    /// The terms, in the order of the parts they act on.
    pub fn terms(&self) -> &[Box<dyn Proximal<T, E> + 'a>] {
        &self.terms
    }

    /// The parts of `x`, checked to be a stack of one part per term (agreed over the vector's
    /// communicator: an error on every rank when any rank's structure differs).
    fn parts<'v>(&self, x: VectorRef<'v, T, E>) -> Result<&'v [DistVector<T, E>]> {
        let parts = x.as_stacked().map(|s| s.parts());
        let local = match parts {
            Some(p) if p.len() == self.terms.len() => Ok(()),
            _ => Err(Error::LayoutMismatch(format!(
                "{NAME}: the vector must be a stack of {} parts, one per term, got {}",
                self.terms.len(),
                x.describe()
            ))),
        };
        x.reduce_comm().agree(local)?;
        Ok(parts.expect("checked: a stack"))
    }

    /// `f(term, part)` for every term and its part of `x` (checked as [`parts`](Self::parts)).
    fn each_part(
        &self,
        x: &mut DistVector<T, E>,
        mut f: impl FnMut(usize, &dyn Proximal<T, E>, &mut DistVector<T, E>) -> Result<()>,
    ) -> Result<()> {
        self.parts(x.view())?;
        let DistVector::Stacked(s) = x else {
            unreachable!("checked: a stack")
        };
        for (k, (term, part)) in self.terms.iter().zip(s.parts_mut()).enumerate() {
            f(k, term.as_ref(), part)?;
        }
        Ok(())
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for SeparableSum<'_, T, E> {
    /// `sum_i g_i(v_i)`, the terms' values added in order (one reduction per term).
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        let mut sum = <T::Real as RealScalar>::real_from_f64(0.0);
        for (term, part) in self.terms.iter().zip(self.parts(x)?) {
            sum += term.value(part.view())?;
        }
        Ok(sum)
    }

    /// Each term's proximal operator on its part.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_tau(NAME, tau)?;
        self.each_part(x, |_, term, part| term.prox_in_place(part, tau))
    }

    /// Each term's `proxdual` on its part (the conjugate of a separable sum is separable).
    fn proxdual_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_positive("proxdual", "tau", tau)?;
        self.each_part(x, |_, term, part| term.proxdual_in_place(part, tau))
    }

    /// Each term's gradient on its part; an error on every rank if a term has none.
    fn grad_into(&self, x: VectorRef<'_, T, E>, grad: &mut DistVector<T, E>) -> Result<()> {
        let parts = self.parts(x)?;
        self.each_part(grad, |k, term, g| term.grad_into(parts[k].view(), g))
    }

    fn name(&self) -> String {
        let names: Vec<String> = self.terms.iter().map(|t| t.name()).collect();
        format!("{NAME}({})", names.join(" + "))
    }
}
