//! [`power_iteration`]: the eigenvalue of largest modulus of a square operator (PyLops-MPI's
//! `optimization.eigs.power_iteration`), from a seeded, rank-count-independent start.

use crate::common::{check_square, check_tol, finite, finite_nonzero, Result};
use crate::fused::fused_vdots_agreed;
use distlops_core::Error;
use distlops_core::{
    DistVector, Engine, Host, Layout, LinearOperator, LinearOperatorExt, Parameters, Partition,
    RealScalar, Scalar, Vector,
};
use num_traits::Float;

const NAME: &str = "power_iteration";

/// Parameters of [`power_iteration`].
#[derive(Debug, Clone, PartialEq)]
pub struct PowerIterationParams {
    /// The maximum number of products (default 10, as PyLops-MPI; must be at least 1).
    pub niter: usize,
    /// The relative update tolerance (default `1e-5`): stop when
    /// `|maxeig - maxeig_old| < tol |maxeig|`.
    pub tol: f64,
    /// The seed of the start vector (default 0; see [`fill_seeded`]).
    pub seed: u64,
}

impl Default for PowerIterationParams {
    fn default() -> Self {
        PowerIterationParams {
            niter: 10,
            tol: 1e-5,
            seed: 0,
        }
    }
}

/// The result of [`power_iteration`], PyLops-MPI's `(maxeig, b_k, iiter)`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PowerIterationResult<T: Scalar, E: Engine = Host> {
    /// The estimate of the eigenvalue of largest modulus, `b^H A b` for the last unit vector `b`
    /// (complex for complex operators).
    pub maxeig: T,
    /// The estimate of its eigenvector, normalised: `A b / |A b|` from the last product.
    pub eigenvector: DistVector<T, E>,
    /// The number of products taken (PyLops-MPI's `iiter + 1`).
    pub iterations: usize,
}

/// SplitMix64: a bijective 64-bit mix with good avalanche, used as a counter-based generator.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform value in `[0, 1)` for stream `stream` (0: real part, 1: imaginary part) of the
/// element with global index `g`.
fn uniform(seed: u64, g: u64, stream: u64) -> f64 {
    let bits = splitmix64(splitmix64(seed) ^ splitmix64(g.wrapping_mul(2).wrapping_add(stream)));
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Fills rank `rank`'s block `local` of a plain array of `layout`, whose first element has flat
/// index `base` in the whole vector.
fn fill_block<T: Scalar>(layout: &Layout, rank: usize, local: &mut [T], seed: u64, base: u64) {
    let shape = layout.global_shape();
    let axis = layout.axis();
    // Scatter: the block is [outer, count, inner] inside the global [outer, n, inner], at `offset`
    // along the middle axis. Replicated: every rank holds the whole array (offset 0, count n).
    let (outer, n, inner): (usize, usize, usize) = if shape.is_empty() {
        (1, 1, 1)
    } else {
        (
            shape[..axis].iter().product(),
            shape[axis],
            shape[axis + 1..].iter().product(),
        )
    };
    let (offset, count) = match layout.partition() {
        Partition::Scatter => (layout.offset(rank), layout.count(rank)),
        _ => (0, n),
    };
    for p in 0..outer {
        for j in 0..count {
            for q in 0..inner {
                let g = base + (((p * n + offset + j) * inner + q) as u64);
                let im = if T::IS_COMPLEX {
                    uniform(seed, g, 1)
                } else {
                    0.0
                };
                let real = <T::Real as RealScalar>::real_from_f64;
                let v = T::from_parts(real(uniform(seed, g, 0)), real(im));
                local[(p * count + j) * inner + q] = v;
            }
        }
    }
}

/// Fills `v` with uniform values in `[0, 1)` drawn from `seed` as a function of each element's
/// **global** flat index (C order; a stack numbers its parts one after another), plus `i` times
/// an independent uniform value for complex types.
///
/// The values depend only on the seed and the global position, not on the number of ranks or
/// the partition: a vector filled at 1 rank, gathered, equals the same vector filled at 4 ranks,
/// gathered. PyLops-MPI fills its start vector from each rank's unseeded generator (reference
/// study §7, quirk 16), so its runs are not reproducible. No communication.
///
/// On every engine the values of this rank's block are drawn on the host and written into the
/// block with [`Memory::write_slice`](distlops_core::Memory::write_slice).
///
/// # Panics
/// If the host has no memory for a copy of a block (as `Vec` does).
pub fn fill_seeded<T: Scalar, E: Engine>(v: &mut DistVector<T, E>, seed: u64) {
    fn go<T: Scalar, E: Engine>(v: &mut DistVector<T, E>, seed: u64, base: &mut u64) {
        match v {
            DistVector::Array(a) => {
                let (layout, rank) = (a.layout().clone(), a.rank());
                // Only this rank's block: drawn on the host and written into the engine's block
                // (no communication, nothing read back).
                let mut values = vec![T::zero(); layout.local_len(rank)];
                fill_block(&layout, rank, &mut values, seed, *base);
                E::write_slice(&values, E::slice_mut(a.local_block_mut()));
                *base += layout.global_len() as u64;
            }
            DistVector::Stacked(s) => s.parts_mut().iter_mut().for_each(|p| go(p, seed, base)),
        }
    }
    go(v, seed, &mut 0);
}

/// Estimates the eigenvalue of largest modulus of a square operator by power iteration
/// (PyLops-MPI's `power_iteration(Op, niter, tol)`), from a seeded start vector.
/// [Collective](distlops_core#collective-calls): every rank of the operator's communicator calls
/// it, with the same parameters:
///
/// ```text
/// b = fill_seeded(seed) / |fill_seeded(seed)|
/// repeat niter times:
///     b1 = A b
///     maxeig = vdot(b, b1)            (b^H A b)
///     b = b1 / |b1|
///     stop if |maxeig - maxeig_old| < tol |maxeig|
/// ```
///
/// * Reproducible: the start vector depends only on `seed` and the global index (see
///   [`fill_seeded`]), and the dot products are reproducible sums (`distlops_core::repro`), so
///   the result depends on the number of ranks only through the operator's own products.
/// * Communication per iteration: the product and **one** all-reduce of `[b^H A b, |A b|^2]`
///   (the fused reduction of [`fused_vdots`](crate::fused_vdots); PyLops-MPI does two). The
///   ranks agree once, before the first product, on the checks, the operator's spaces and the
///   parameters `niter`, `tol` and `seed` (one small all-reduce): a rank that passed other
///   values is [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) on every rank.
/// * Two vectors allocated once; plain and stacked domains alike.
///
/// # Errors
/// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if the
/// operator is not square; [`Error::InvalidParameter`](distlops_core::Error::InvalidParameter) for `niter == 0` or a NaN or
/// negative `tol`; [`Error::NonFinite`](distlops_core::Error::NonFinite) if `b^H A b` or `|A b|` is not finite and
/// [`Error::Breakdown`](distlops_core::Error::Breakdown) if `A b = 0` (iteration `k` is the `k`-th product, 0 the start
/// vector).
pub fn power_iteration<T: Scalar>(
    op: &dyn LinearOperator<T>,
    params: PowerIterationParams,
) -> Result<PowerIterationResult<T>> {
    power_iteration_on(op, &Host, params)
}

/// [`power_iteration`] with the vectors on `engine` (a `Cuda` device, say): the same seeded
/// start vector (drawn on the host, uploaded) and the same iteration.
/// [Collective](distlops_core#collective-calls), as [`power_iteration`].
///
/// # Errors
/// As [`power_iteration`].
pub fn power_iteration_on<T: Scalar, E: Engine>(
    op: &dyn LinearOperator<T, E>,
    engine: &E,
    params: PowerIterationParams,
) -> Result<PowerIterationResult<T, E>> {
    let checks = check_tol(NAME, params.tol)
        .and_then(|()| {
            if params.niter == 0 {
                return Err(Error::InvalidParameter {
                    solver: NAME,
                    message: "niter must be at least 1".into(),
                });
            }
            Ok(())
        })
        .and_then(|()| check_square(op, "power iteration"));
    // One agreement per run: on the checks, the operator's spaces and the parameters; the
    // products and reductions of the iterations then skip theirs.
    let agreed = Parameters::default()
        .with("niter", &params.niter)
        .with("tol", &params.tol)
        .with("seed", &params.seed);
    op.agree_solve(NAME, &agreed, checks)?;
    let mut b = op.new_domain_vector_on(engine)?;
    let mut b1 = op.new_range_vector_on(engine)?;
    fill_seeded(&mut b, params.seed);
    let [bb] = fused_vdots_agreed([(&b, &b)])?;
    let nb = finite_nonzero(bb.re(), NAME, "|b|", 0)?.sqrt();
    b.scale(T::from_real(nb.recip()));
    let mut maxeig_old = T::zero();
    let mut maxeig = T::zero();
    let mut iterations = 0;
    for it in 1..=params.niter {
        op.matvec_unchecked(b.view(), &mut b1)?;
        let [bab, n2] = fused_vdots_agreed([(&b, &b1), (&b1, &b1)])?;
        maxeig = finite(bab, NAME, "b^H A b", it)?;
        let n = finite_nonzero(n2.re(), NAME, "|A b|", it)?.sqrt();
        std::mem::swap(&mut b, &mut b1);
        b.scale(T::from_real(n.recip()));
        iterations = it;
        if (maxeig - maxeig_old).abs().to_f64() < params.tol * maxeig.abs().to_f64() {
            break;
        }
        maxeig_old = maxeig;
    }
    Ok(PowerIterationResult {
        maxeig,
        eigenvector: b,
        iterations,
    })
}
