//! [`Compute`] for [`Host`]: the kernels of [`kernels`](crate::kernels) on contiguous slices.

use super::{flat, flat_mut, Host};
use crate::engine::{BinaryOp, Compute, GroupScale, NormTerm, OrderFree, Shrink, StridedCopy};
use crate::kernels;
use crate::repro::{node_value, BlockNode};
use crate::scalar::Scalar;
use ndarray::ArrayD;
use num_traits::{Float, Zero};
use std::cell::RefCell;
use std::ops::Range;

impl Compute for Host {
    fn fill<T: Scalar>(y: &mut ArrayD<T>, value: T) {
        y.fill(value);
    }
    fn scale<T: Scalar>(y: &mut ArrayD<T>, alpha: T) {
        kernels::scale(alpha, flat_mut(y));
    }
    fn conj<T: Scalar>(y: &mut ArrayD<T>) {
        Self::conj_slice(flat_mut(y));
    }
    fn copy<T: Scalar>(x: &ArrayD<T>, y: &mut ArrayD<T>) {
        Self::copy_slice(flat(x), flat_mut(y));
    }
    fn axpy<T: Scalar>(alpha: T, x: &ArrayD<T>, y: &mut ArrayD<T>) {
        Self::axpy_slice(alpha, flat(x), flat_mut(y));
    }
    fn axpby<T: Scalar>(alpha: T, x: &ArrayD<T>, beta: T, y: &mut ArrayD<T>) {
        kernels::axpby(alpha, flat(x), beta, flat_mut(y));
    }
    fn binary<T: Scalar>(op: BinaryOp, x: &ArrayD<T>, y: &ArrayD<T>, out: &mut ArrayD<T>) {
        kernels::zip_map_into(flat(x), flat(y), flat_mut(out), |a, b| op.apply(a, b));
    }
    fn binary_assign<T: Scalar>(op: BinaryOp, y: &mut ArrayD<T>, x: &ArrayD<T>) {
        kernels::zip_apply(flat_mut(y), flat(x), |a, b| op.apply(a, b));
    }

    fn dot_nodes<T: Scalar>(
        conj: bool,
        x: &ArrayD<T>,
        y: &ArrayD<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        let (x, y) = (flat(x), flat(y));
        let eval = |leaf: &dyn Fn(std::ops::Range<usize>) -> T| -> Vec<T> {
            nodes
                .iter()
                .map(|n| node_value(n.level, n.range.clone(), &leaf))
                .collect()
        };
        if conj {
            eval(&|r| kernels::vdot(&x[r.clone()], &y[r]))
        } else {
            eval(&|r| kernels::dot(&x[r.clone()], &y[r]))
        }
    }
    fn cg_update_nodes<T: Scalar>(
        a: T,
        c: &ArrayD<T>,
        x: &mut ArrayD<T>,
        q: &ArrayD<T>,
        r: &mut ArrayD<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        let (c, q) = (flat(c), flat(q));
        let (x, r) = (flat_mut(x), flat_mut(r));
        assert!(
            c.len() == x.len() && q.len() == r.len() && x.len() == r.len(),
            "cg_update on blocks of different lengths"
        );
        let state = RefCell::new((x, r));
        leafwise(c.len(), nodes, |range| {
            let mut s = state.borrow_mut();
            let (x, r) = &mut *s;
            kernels::axpy(a, &c[range.clone()], &mut x[range.clone()]);
            kernels::axpy(-a, &q[range.clone()], &mut r[range.clone()]);
            kernels::vdot(&r[range.clone()], &r[range])
        })
    }
    fn axpby_vdot_nodes<T: Scalar>(
        alpha: T,
        x: &ArrayD<T>,
        beta: T,
        y: &mut ArrayD<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        let x = flat(x);
        let y = flat_mut(y);
        assert_eq!(
            x.len(),
            y.len(),
            "axpby_vdot on blocks of different lengths"
        );
        let state = RefCell::new(y);
        leafwise(x.len(), nodes, |range| {
            let mut y = state.borrow_mut();
            kernels::axpby(alpha, &x[range.clone()], beta, &mut y[range.clone()]);
            kernels::vdot(&y[range.clone()], &x[range])
        })
    }
    fn extrapolate_nodes<T: Scalar>(
        theta: T,
        x: &ArrayD<T>,
        x_old: &ArrayD<T>,
        xhat: &mut ArrayD<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        let (x, x_old) = (flat(x), flat(x_old));
        let xhat = flat_mut(xhat);
        assert!(
            x.len() == x_old.len() && x.len() == xhat.len(),
            "extrapolate on blocks of different lengths"
        );
        let state = RefCell::new(xhat);
        leafwise(x.len(), nodes, |range| {
            let mut xhat = state.borrow_mut();
            let (x, d) = (&x[range.clone()], &mut xhat[range.clone()]);
            kernels::zip_map_into(x, &x_old[range], d, |a, b| BinaryOp::Sub.apply(a, b));
            let value = kernels::vdot(d, d);
            kernels::axpby(T::one(), x, theta, d);
            value
        })
    }
    fn norm_nodes<T: Scalar>(term: NormTerm, x: &ArrayD<T>, nodes: &[BlockNode]) -> Vec<T::Real> {
        let x = flat(x);
        nodes
            .iter()
            .map(|n| node_value(n.level, n.range.clone(), &|r| term.leaf(&x[r])))
            .collect()
    }
    fn order_free<T: Scalar>(kind: OrderFree, x: &ArrayD<T>) -> T::Real {
        kind.host(flat(x))
    }

    fn fill_slice<T: Scalar>(y: &mut [T], value: T) {
        y.fill(value);
    }
    fn copy_slice<T: Scalar>(x: &[T], y: &mut [T]) {
        y.copy_from_slice(x);
    }
    fn conj_slice<T: Scalar>(y: &mut [T]) {
        if T::IS_COMPLEX {
            y.iter_mut().for_each(|v| *v = v.conj());
        }
    }
    fn axpy_slice<T: Scalar>(alpha: T, x: &[T], y: &mut [T]) {
        kernels::axpy(alpha, x, y);
    }
    fn diag_mul<T: Scalar>(d: &[T], inner: usize, x: &[T], y: &mut [T]) {
        host_diag_mul(d, inner, x, y);
    }
    fn shrink<T: Scalar>(op: Shrink<T::Real>, w: Option<&ArrayD<T>>, y: &mut ArrayD<T>) {
        let y = flat_mut(y);
        match w {
            None => y.iter_mut().for_each(|v| *v = op.apply(*v, None)),
            Some(w) => {
                let w = flat(w);
                assert_eq!(w.len(), y.len(), "shrink: weights of another length");
                for (v, &wi) in y.iter_mut().zip(w) {
                    *v = op.apply(*v, Some(wi));
                }
            }
        }
    }
    fn group_scale_work(_n: usize) -> usize {
        0
    }
    fn group_scale<T: Scalar>(
        op: GroupScale<T::Real>,
        parts: &mut [&mut ArrayD<T>],
        add: Option<(T, &[&ArrayD<T>])>,
        _work: &mut ArrayD<T::Real>,
    ) {
        let mut blocks: Vec<&mut [T]> = parts.iter_mut().map(|p| flat_mut(p)).collect();
        let add = add.map(|(alpha, a)| {
            assert_eq!(a.len(), blocks.len(), "group_scale: one addend per part");
            (alpha, a.iter().map(|p| flat(p)).collect::<Vec<&[T]>>())
        });
        let add = add.as_ref().map(|(alpha, a)| (*alpha, a.as_slice()));
        host_group_scale(&mut blocks, add, |n| op.factor(n));
    }
    fn strided_copy<T: Scalar>(copy: &StridedCopy, x: &[T], y: &mut [T]) {
        super::strided::copy(copy, x, y);
    }
    fn strided_add<T: Scalar>(copy: &StridedCopy, x: &[T], y: &mut [T]) {
        super::strided::add(copy, x, y);
    }
}

/// The values of `nodes` with `leaf` run once on every leaf of the block `0..n`, in order,
/// when the nodes cover the block exactly (a block's nodes do); `leaf` first updates its range
/// and then gives its sum, so an update and its reduction make one pass over the data. Nodes
/// that do not cover the block: every element updated once all the same (the ranges outside
/// the nodes by `leaf` too, their sums dropped).
fn leafwise<T: Scalar>(n: usize, nodes: &[BlockNode], leaf: impl Fn(Range<usize>) -> T) -> Vec<T> {
    let mut pos = 0;
    let mut values = Vec::with_capacity(nodes.len());
    for node in nodes {
        let range = node.range.clone();
        assert!(
            range.start >= pos && range.end <= n,
            "block nodes out of order"
        );
        if range.start > pos {
            leaf(pos..range.start);
        }
        values.push(node_value(node.level, range.clone(), &leaf));
        pos = range.end;
    }
    if pos < n {
        leaf(pos..n);
    }
    values
}

/// Every `b_k[i]` scaled by `factor(n_i)`, `n_i = sqrt(sum_k |b_k[i]|^2)`, a chunk of elements
/// at a time: the factors of a chunk first (reading every part, and first adding `alpha a_k` to
/// it when `add` is given), then each part's chunk scaled (loops the compiler vectorises; the
/// same operations in the same order as element by element, the sum rounded as `axpy`'s).
fn host_group_scale<T: Scalar>(
    blocks: &mut [&mut [T]],
    add: Option<(T, &[&[T]])>,
    factor: impl Fn(T::Real) -> T::Real,
) {
    const CHUNK: usize = 512;
    let n = blocks.first().map_or(0, |b| b.len());
    assert!(
        blocks.iter().all(|b| b.len() == n)
            && add.is_none_or(|(_, a)| a.iter().all(|a| a.len() == n)),
        "group_scale on parts of different lengths"
    );
    let mut factors = [T::Real::zero(); CHUNK];
    for start in (0..n).step_by(CHUNK) {
        let end = (start + CHUNK).min(n);
        let factors = &mut factors[..end - start];
        factors.fill(T::Real::zero());
        for (k, b) in blocks.iter_mut().enumerate() {
            let b = &mut b[start..end];
            if let Some((alpha, a)) = add {
                for ((f, v), &w) in factors.iter_mut().zip(b).zip(&a[k][start..end]) {
                    *v += alpha * w;
                    *f += v.abs2();
                }
            } else {
                for (f, v) in factors.iter_mut().zip(&*b) {
                    *f += v.abs2();
                }
            }
        }
        for f in factors.iter_mut() {
            *f = factor(f.sqrt());
        }
        for b in blocks.iter_mut() {
            for (v, &c) in b[start..end].iter_mut().zip(factors.iter()) {
                *v = v.scale_real(c);
            }
        }
    }
}

/// `y_i = d_j x_i`, `j = (i / inner) mod len(d)`, on host slices.
fn host_diag_mul<T: Scalar>(d: &[T], inner: usize, x: &[T], y: &mut [T]) {
    assert_eq!(x.len(), y.len(), "diag_mul on slices of different lengths");
    let block = d.len() * inner;
    if block == 0 {
        assert!(
            x.is_empty(),
            "diag_mul with an empty diagonal on a non-empty slice"
        );
        return;
    }
    assert_eq!(
        x.len() % block,
        0,
        "diag_mul: the length is not a multiple of the diagonal's"
    );
    for (xb, yb) in x.chunks_exact(block).zip(y.chunks_exact_mut(block)) {
        if inner == 1 {
            for ((yv, &xv), &dv) in yb.iter_mut().zip(xb).zip(d) {
                *yv = dv * xv;
            }
        } else {
            for ((yr, xr), &dv) in yb
                .chunks_exact_mut(inner)
                .zip(xb.chunks_exact(inner))
                .zip(d)
            {
                for (yv, &xv) in yr.iter_mut().zip(xr) {
                    *yv = dv * xv;
                }
            }
        }
    }
}
