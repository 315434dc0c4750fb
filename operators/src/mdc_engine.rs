//! The engine path of [`Mdc`](crate::Mdc): the same product as the host pipeline, written once
//! over [`Engine`] primitives (strided copies, grouped exchanges, batched FFTs, diagonal
//! products and one gemm per frequency), so it runs unchanged on the host and on a device.
//!
//! Forward, for this rank (the adjoint runs the same steps backwards, with `K^H`):
//!
//! 1. the real parts of the model move from its layout to whole time traces split along `r`
//!    (or `v`), stored as complex lines of `nt` samples (one exchange unless the model is split
//!    along `r` or `v` already), and are ifftshifted with two strided copies (`twosided`);
//! 2. one batched FFT of every line, and the weights of PyLops' real transform (`1 / sqrt(nt)`,
//!    `sqrt(2)` on the bins that stand for two, zero past the kernel's `nf`) by `diag_mul`;
//! 3. the first `nf` bins of every line move to the kernel's frequency split (one exchange);
//! 4. `Y(f) = K(f) X(f)` for this rank's frequencies, one batched gemm (`K` holds `conj` and
//!    the scaling);
//! 5. the spectra move to whole lines split along `s` (or `v`), zero-padded to `nt`, weighted,
//!    and inverse-transformed by one batched FFT;
//! 6. the real parts move to the data layout (one exchange unless it is split along `s` or `v`).

use crate::fft::moves::{Move, Place};
use crate::fft::FftReal;
use distlops_core::{
    Communicator, Dense, Fourier, HasComplex, Layout, MatOp, Result, Scalar, StridedCopy,
};
use ndarray::Array1;
use num_complex::Complex;
use num_traits::Zero;
use std::sync::Mutex;

/// The complex type of `R` as the engines know it.
type C<R> = <R as HasComplex>::Complex;

/// What [`EngineMdc::new`] needs from the operator.
pub(crate) struct MdcShape<'a, R> {
    /// This rank's scaled (and conjugated) kernel, `nf_local x ns x nr`.
    pub kernel: &'a [Complex<R>],
    /// The kernel's frequencies on every rank.
    pub counts: &'a [usize],
    pub nt: usize,
    pub nv: usize,
    pub ns: usize,
    pub nr: usize,
    pub twosided: bool,
    pub save_gt: bool,
    /// The operator's domain and range layouts.
    pub model: &'a Layout,
    pub data: &'a Layout,
    /// Reals per element of the operator's scalar type (1 real, 2 complex).
    pub width: usize,
}

/// Buffers of a product, allocated once.
struct Work<E: Fourier + Dense, R: FftReal> {
    /// Model-side lines (`lines_m x nt` complex), twice.
    m: [E::Storage<C<R>>; 2],
    /// Data-side lines (`lines_d x nt` complex), twice.
    d: [E::Storage<C<R>>; 2],
    /// This rank's frequencies of the model and the data (`nf_local x nr x nv`, `x ns x nv`).
    xf: E::Storage<C<R>>,
    yf: E::Storage<C<R>>,
    send: E::Storage<C<R>>,
    recv: E::Storage<C<R>>,
}

/// The moves of one side (model or data): the real parts between the vector and the lines,
/// and the spectra between the lines and the frequency split.
struct Side<E: Fourier + Dense, R: FftReal> {
    to_lines: Move,
    from_lines: Move,
    to_freq: Move,
    from_freq: Move,
    fft: Option<E::FftPlan<R>>,
}

/// The engine state of an [`Mdc`](crate::Mdc).
pub(crate) struct EngineMdc<E: Fourier + Dense, R: FftReal> {
    engine: E,
    comm: Communicator,
    dims: (usize, usize, usize, usize),
    k: E::Storage<C<R>>,
    kt: Option<E::Storage<C<R>>>,
    /// The real transform's weights of the `nt` bins (zero past `nf`).
    weights: E::Storage<C<R>>,
    /// The ifftshift of the model lines (`twosided`) and its inverse: two strided copies each.
    shift: Option<([StridedCopy; 2], [StridedCopy; 2])>,
    model: Side<E, R>,
    data: Side<E, R>,
    width: usize,
    work: Mutex<Work<E, R>>,
}

impl<E: Fourier + Dense, R: FftReal> EngineMdc<E, R> {
    /// Plans the product on `engine`: uploads the kernel (and `K^H` with `save_gt`) and the
    /// weights, plans the moves and the FFTs, and allocates every buffer. No communication.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room; what the engine's FFT plans report.
    pub(crate) fn new(engine: &E, comm: &Communicator, s: &MdcShape<'_, R>) -> Result<Self> {
        let (nt, nv, ns, nr) = (s.nt, s.nv, s.ns, s.nr);
        let rank = comm.rank();
        let nranks = comm.size();
        let nf: usize = s.counts.iter().sum();
        let nf_local = s.counts[rank];
        let c = |z: Complex<R>| R::complex(z.re, z.im);
        let upload = |v: Vec<C<R>>| engine.upload(Array1::from(v).into_dyn().view());
        let k = upload(s.kernel.iter().map(|&z| c(z)).collect())?;
        let kt = if s.save_gt {
            let mut kt = vec![C::<R>::zero(); s.kernel.len()];
            for f in 0..nf_local {
                for i in 0..ns {
                    for j in 0..nr {
                        kt[(f * nr + j) * ns + i] = c(s.kernel[(f * ns + i) * nr + j].conj());
                    }
                }
            }
            Some(upload(kt)?)
        } else {
            None
        };
        let w = 1.0 / (nt as f64).sqrt();
        let weights = (0..nt)
            .map(|f| {
                let v = match f {
                    f if f >= nf => 0.0,
                    f if f >= 1 && f <= (nt - 1) / 2 => w * std::f64::consts::SQRT_2,
                    _ => w,
                };
                R::complex(R::real_from_f64(v), R::zero())
            })
            .collect();
        let weights = upload(weights)?;
        // The lines: the host pipeline's layouts (whole traces split along the first space
        // axis, or along `v` when the vector is split along it).
        let lines_layout = |shape: [usize; 3], axis: usize| -> Result<(Layout, Layout)> {
            let axis = if axis == 0 { 1 } else { axis };
            let time = Layout::scatter(&shape, axis, nranks)?;
            let freq = Layout::with_counts(&[nf, shape[1], nv], axis, time.counts())?;
            Ok((time, freq))
        };
        let side = |vector: &Layout, n: usize| -> Result<(Side<E, R>, usize)> {
            let (time, freq) = lines_layout([nt, n, nv], vector.axis())?;
            let split = Layout::with_counts(&[nf, n, nv], 0, s.counts)?;
            let (v, l) = (
                Place::c_order(vector, rank, s.width),
                Place::lines(&time, rank, nt, 2),
            );
            let (lf, sf) = (
                Place::lines(&freq, rank, nt, 1),
                Place::c_order(&split, rank, 1),
            );
            let lines = time.local_len(rank) / nt;
            let fft = if lines > 0 {
                Some(engine.fft_plan::<R>(nt, lines)?)
            } else {
                None
            };
            Ok((
                Side {
                    to_lines: Move::new(&v, &l)?,
                    from_lines: Move::new(&l, &v)?,
                    to_freq: Move::new(&lf, &sf)?,
                    from_freq: Move::new(&sf, &lf)?,
                    fft,
                },
                lines,
            ))
        };
        let (model, lines_m) = side(s.model, nr)?;
        let (data, lines_d) = side(s.data, ns)?;
        let h = if s.twosided { nt / 2 } else { 0 };
        let shift = if h > 0 {
            let len = lines_m * nt;
            let copy = |n: usize, from: usize, to: usize| {
                StridedCopy::new(&[lines_m, n], (from, &[nt, 1], len), (to, &[nt, 1], len))
            };
            let (a, b) = (copy(nt - h, h, 0)?, copy(h, 0, nt - h)?);
            Some(([a.clone(), b.clone()], [a.reversed(), b.reversed()]))
        } else {
            None
        };
        // Buffers: reals moves count reals (half as many complex numbers).
        let (mut send, mut recv) = (0, 0);
        for side in [&model, &data] {
            for (mv, reals) in [
                (&side.to_lines, true),
                (&side.from_lines, true),
                (&side.to_freq, false),
                (&side.from_freq, false),
            ] {
                let (a, b) = mv.buffer_lens();
                let half = |n: usize| if reals { n.div_ceil(2) } else { n };
                send = send.max(half(a));
                recv = recv.max(half(b));
            }
        }
        let zeros = |n: usize| engine.zeros::<C<R>>(&[n]);
        let work = Work {
            m: [zeros(lines_m * nt)?, zeros(lines_m * nt)?],
            d: [zeros(lines_d * nt)?, zeros(lines_d * nt)?],
            xf: zeros(nf_local * nr * nv)?,
            yf: zeros(nf_local * ns * nv)?,
            send: zeros(send)?,
            recv: zeros(recv)?,
        };
        Ok(EngineMdc {
            engine: engine.clone(),
            comm: comm.clone(),
            dims: (nf_local, ns, nr, nv),
            k,
            kt,
            weights,
            shift,
            model,
            data,
            width: s.width,
            work: Mutex::new(work),
        })
    }

    /// The forward product of this rank's model block `x` into its data block `y`.
    /// [Collective](distlops_core#collective-calls).
    ///
    /// # Errors
    /// What the engine's FFTs, gemms and exchanges report.
    pub(crate) fn forward<T: Scalar<Real = R>>(
        &self,
        x: E::Slice<'_, T>,
        y: E::SliceMut<'_, T>,
    ) -> Result<()> {
        self.product(false, x, y)
    }

    /// The adjoint product of this rank's data block `y` into its model block `x`.
    /// [Collective](distlops_core#collective-calls).
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub(crate) fn adjoint<T: Scalar<Real = R>>(
        &self,
        y: E::Slice<'_, T>,
        x: E::SliceMut<'_, T>,
    ) -> Result<()> {
        self.product(true, y, x)
    }

    /// The forward product (model side to data side) or the adjoint (the same steps backwards:
    /// data side to model side, `K^H`, the model's ifftshift undone last).
    fn product<T: Scalar<Real = R>>(
        &self,
        adjoint: bool,
        input: E::Slice<'_, T>,
        output: E::SliceMut<'_, T>,
    ) -> Result<()> {
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let Work {
            m,
            d,
            xf,
            yf,
            send,
            recv,
        } = &mut *guard;
        let (first, second, [a0, a1], [b0, b1], fin, fout) = if adjoint {
            (&self.data, &self.model, d, m, yf, xf)
        } else {
            (&self.model, &self.data, m, d, xf, yf)
        };
        self.vector_to_lines(first, E::reals(input), a0, send, recv)?;
        if let (false, Some((shift, _))) = (adjoint, &self.shift) {
            for c in shift {
                E::strided_copy(c, E::slice(a0), E::slice_mut(a1));
            }
            std::mem::swap(a0, a1);
        }
        self.spectra(first, a0, a1, send, recv, fin)?;
        self.frequencies(adjoint, fin, fout)?;
        self.traces(second, fout, b0, b1, send, recv)?;
        if let (true, Some((_, unshift))) = (adjoint, &self.shift) {
            for c in unshift {
                E::strided_copy(c, E::slice(b0), E::slice_mut(b1));
            }
            std::mem::swap(b0, b1);
        }
        self.lines_to_vector::<T>(second, b0, output, send, recv)
    }

    /// The products of this rank's frequencies: `K(f) X(f)` forward, `K(f)^H Y(f)` in the
    /// adjoint (with the saved `K^H` when there is one), one batched gemm.
    fn frequencies(
        &self,
        adjoint: bool,
        input: &E::Storage<C<R>>,
        output: &mut E::Storage<C<R>>,
    ) -> Result<()> {
        let (nf, ns, nr, nv) = self.dims;
        let (op, dims, kernel) = match (adjoint, &self.kt) {
            (false, _) => (MatOp::N, (ns, nr, nv), &self.k),
            (true, Some(kt)) => (MatOp::N, (nr, ns, nv), kt),
            (true, None) => (MatOp::H, (ns, nr, nv), &self.k),
        };
        E::matmul_batched(
            op,
            dims,
            nf,
            E::slice(kernel),
            E::slice(input),
            E::slice_mut(output),
        )
    }

    /// The real parts of a vector block (`reals`, as reals) into complex lines `lines` with a
    /// zero imaginary part.
    fn vector_to_lines(
        &self,
        side: &Side<E, R>,
        reals: E::Slice<'_, R>,
        lines: &mut E::Storage<C<R>>,
        send: &mut E::Storage<C<R>>,
        recv: &mut E::Storage<C<R>>,
    ) -> Result<()> {
        E::fill(lines, C::<R>::zero());
        side.to_lines.run::<R, E>(
            &self.engine,
            &self.comm,
            reals,
            E::reals_mut(E::slice_mut(lines)),
            E::reals_mut(E::slice_mut(send)),
            E::reals_mut(E::slice_mut(recv)),
        )
    }

    /// The real parts of the lines into a vector block (a zero imaginary part for complex
    /// types).
    fn lines_to_vector<T: Scalar<Real = R>>(
        &self,
        side: &Side<E, R>,
        lines: &E::Storage<C<R>>,
        mut out: E::SliceMut<'_, T>,
        send: &mut E::Storage<C<R>>,
        recv: &mut E::Storage<C<R>>,
    ) -> Result<()> {
        use distlops_core::SliceLen;
        if self.width == 2 {
            let n = out.len();
            E::fill_slice(E::sub_mut(&mut out, 0..n), T::zero());
        }
        side.from_lines.run::<R, E>(
            &self.engine,
            &self.comm,
            E::reals(E::slice(lines)),
            E::reals_mut(out),
            E::reals_mut(E::slice_mut(send)),
            E::reals_mut(E::slice_mut(recv)),
        )
    }

    /// Lines `a` to this rank's frequencies `freq`: FFT into `b`, weights back into `a`, and
    /// the first bins to the frequency split. `a` and `b` are work buffers.
    fn spectra(
        &self,
        side: &Side<E, R>,
        a: &mut E::Storage<C<R>>,
        b: &mut E::Storage<C<R>>,
        send: &mut E::Storage<C<R>>,
        recv: &mut E::Storage<C<R>>,
        freq: &mut E::Storage<C<R>>,
    ) -> Result<()> {
        if let Some(plan) = &side.fft {
            E::fft(plan, E::slice(a), E::slice_mut(b), false)?;
            E::diag_mul(E::slice(&self.weights), 1, E::slice(b), E::slice_mut(a));
        }
        side.to_freq.run::<C<R>, E>(
            &self.engine,
            &self.comm,
            E::slice(a),
            E::slice_mut(freq),
            E::slice_mut(send),
            E::slice_mut(recv),
        )
    }

    /// This rank's frequencies `freq` to time lines in `a`: to whole zero-padded lines in `a`,
    /// weights into `b`, inverse FFT into `a`.
    fn traces(
        &self,
        side: &Side<E, R>,
        freq: &E::Storage<C<R>>,
        a: &mut E::Storage<C<R>>,
        b: &mut E::Storage<C<R>>,
        send: &mut E::Storage<C<R>>,
        recv: &mut E::Storage<C<R>>,
    ) -> Result<()> {
        E::fill(a, C::<R>::zero());
        side.from_freq.run::<C<R>, E>(
            &self.engine,
            &self.comm,
            E::slice(freq),
            E::slice_mut(a),
            E::slice_mut(send),
            E::slice_mut(recv),
        )?;
        if let Some(plan) = &side.fft {
            E::diag_mul(E::slice(&self.weights), 1, E::slice(a), E::slice_mut(b));
            E::fft(plan, E::slice(b), E::slice_mut(a), true)?;
        }
        Ok(())
    }
}
