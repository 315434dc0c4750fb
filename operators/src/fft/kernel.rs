//! Per-frequency matrix products on a block distributed along the frequency axis: the Fredholm
//! step of [`Mdc`](crate::Mdc).

use super::FftReal;
use num_complex::Complex;
use num_traits::Zero;
use std::sync::Arc;

/// `out[f] = K[f] in[f]` for this rank's frequencies `f`, with `K[f]` a dense `nout x nin`
/// matrix (row-major) and `in[f]`, `out[f]` row-major `nin x nv` and `nout x nv` matrices; or
/// the adjoint `out[f] = K[f]^H in[f]` of such a plan.
pub(crate) struct KernelPlan<R: FftReal> {
    /// The matrices, `nf x rows x cols` (row-major).
    k: Arc<Vec<Complex<R>>>,
    nf: usize,
    rows: usize,
    cols: usize,
    nv: usize,
    /// Apply `K^H` instead of `K` (the matrices' rows are then the inputs).
    adjoint: bool,
}

impl<R: FftReal> KernelPlan<R> {
    /// The product with `k` (`nf x rows x cols`), or with its adjoint.
    pub(crate) fn new(
        k: Arc<Vec<Complex<R>>>,
        (nf, rows, cols): (usize, usize, usize),
        nv: usize,
        adjoint: bool,
    ) -> Self {
        debug_assert_eq!(k.len(), nf * rows * cols);
        KernelPlan {
            k,
            nf,
            rows,
            cols,
            nv,
            adjoint,
        }
    }

    /// Elements of the input and output blocks.
    pub(crate) fn lens(&self) -> (usize, usize) {
        let (a, b) = (self.nf * self.cols * self.nv, self.nf * self.rows * self.nv);
        if self.adjoint {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// The products of every frequency of `x` into `y`. Each output value is one sum over the
    /// inner index in increasing order.
    pub(crate) fn run(&self, x: &[Complex<R>], y: &mut [Complex<R>]) {
        let (rows, cols, nv) = (self.rows, self.cols, self.nv);
        let (nin, nout) = if self.adjoint {
            (rows, cols)
        } else {
            (cols, rows)
        };
        for f in 0..self.nf {
            let k = &self.k[f * rows * cols..(f + 1) * rows * cols];
            let xf = &x[f * nin * nv..(f + 1) * nin * nv];
            let yf = &mut y[f * nout * nv..(f + 1) * nout * nv];
            if self.adjoint {
                // y[c, v] = sum_r conj(k[r, c]) x[r, v]: rows of k in turn, accumulated.
                yf.fill(Complex::zero());
                for r in 0..rows {
                    let kr = &k[r * cols..(r + 1) * cols];
                    let xr = &xf[r * nv..(r + 1) * nv];
                    for (c, &kv) in kr.iter().enumerate() {
                        let kv = kv.conj();
                        for (o, &xv) in yf[c * nv..(c + 1) * nv].iter_mut().zip(xr) {
                            *o += kv * xv;
                        }
                    }
                }
            } else {
                for r in 0..rows {
                    let kr = &k[r * cols..(r + 1) * cols];
                    for v in 0..nv {
                        let mut acc = Complex::zero();
                        for (c, &kv) in kr.iter().enumerate() {
                            acc += kv * xf[c * nv + v];
                        }
                        yf[r * nv + v] = acc;
                    }
                }
            }
        }
    }
}
