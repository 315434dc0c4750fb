//! [`Convolve1D`]: 1-D convolution along one axis of an n-D array, direct or by FFT (PyLops'
//! `signalprocessing.Convolve1D`).

use super::corr_line::LinePad;
use super::shape::{check_axis, check_dims, check_matvec_on, check_rmatvec_on, split_axis};
use super::LocalOperator;
use distlops_core::band::MAX_BAND_TAPS;
use distlops_core::kernels::axpy;
use distlops_core::{
    AxisBand, Banded, Complex32, Complex64, Error, Host, RealScalar, Result, Scalar, SliceLen,
};
use ndarray::ArrayView1;
use rustfft::{Fft, FftPlanner};
use std::any::Any;
use std::sync::{Arc, Mutex, TryLockError};

/// How [`Convolve1D`] computes the convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvolveMethod {
    /// One shifted AXPY per filter tap: `O(n len(h))`, best for short filters.
    Direct,
    /// Zero-padded FFTs (planned once, computed in double precision): `O((n + len(h)) log)`.
    Fft,
}

/// Filters longer than this are applied by FFT when the method is chosen automatically.
pub const FFT_THRESHOLD: usize = 32;

/// [`FFT_THRESHOLD`] when the convolution axis is the last (contiguous) one, where the direct
/// method runs a register-blocked kernel. Measured on 2000 lines of 550 samples: 41 taps direct
/// 3.4 ms vs FFT 4.6 ms, 65 taps 5.1 vs 6.1 ms, 81 taps 6.2 vs 4.3 ms.
pub const FFT_THRESHOLD_CONTIGUOUS: usize = 64;

/// `y[i] = sum_m h[i + offset - m] x[m]` along `axis`: convolution with the filter `h` whose
/// centre is at index `offset`. PyLops: `Convolve1D(dims, h, offset, axis, method)`.
///
/// * With `n = dims[axis]` and `nh = len(h)`: `dims` (model); `dimsd` = `dims` with
///   `dimsd[axis] = max(n, nh)` (data). For a filter no longer than the signal (`nh <= n`) the
///   data has the model's shape and `offset <= nh - 1`; for a longer filter PyLops returns `nh`
///   samples and requires `offset <= n - 1`. Indices outside `0..n` contribute zero.
/// * Adjoint: the correlation `x[m] = sum_i conj(h[i + offset - m]) y[i]`.
/// * [`ConvolveMethod::Direct`] and [`ConvolveMethod::Fft`] give the same values up to rounding;
///   [`new`](Self::new) picks `Fft` when `nh > FFT_THRESHOLD` (`FFT_THRESHOLD_CONTIGUOUS` along the
///   last axis).
///
/// # Engines
///
/// The constructors build a host operator (`E = Host`) running the kernels above.
/// [`to_engine`](Self::to_engine) gives the same operator on any engine, where a product is the
/// direct method as one [`Banded::band`](distlops_core::Banded::band) call along the axis: the taps `h[k]` read source row
/// `i + offset - k`, and the band's valid range `0..n` drops the rows outside the signal, the
/// truncation of the host's direct method; the adjoint is the transposed band (taps
/// `conj(h[nh - 1 - k])`, valid range `0..nout`). The band's coefficients are real, so a complex
/// filter takes a second band of its imaginary parts into a work buffer (allocated once, in
/// `to_engine`) and one [`Compute::axpy_slice`](distlops_core::Compute::axpy_slice) by `i`; a filter of more than
/// [`MAX_BAND_TAPS`] taps is split into several accumulating bands. The filter's tables are
/// uploaded once, so a product moves no data between host and device, and there is no
/// communication.
///
/// * On the engine path the method is always [`ConvolveMethod::Direct`]
///   ([`method`](Self::method) says so), whatever the filter length: a path through the engine's
///   FFT ([`Fourier::fft`](distlops_core::Fourier::fft), cuFFT on a device) above a crossover length is not built, so long
///   filters cost `O(n len(h))` there.
/// * Results equal the host operator's to rounding, not bitwise (the host's direct method runs a
///   register-blocked kernel along the last axis, its FFT method another sum altogether):
///   relative differences of about `1e-15` in double precision (tested to `1e-12`).
/// * [`to_engine(&Host)`](Self::to_engine) runs this engine path on the host.
pub struct Convolve1D<T: Scalar, E: Banded = Host> {
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    axis: usize,
    offset: usize,
    method: ConvolveMethod,
    h: Vec<T>,
    /// `conj(h)` reversed: the adjoint is a convolution with it.
    h_adj: Vec<T>,
    outer: usize,
    n: usize,
    nout: usize,
    inner: usize,
    path: Path<T, E>,
}

/// How the products run.
enum Path<T: Scalar, E: Banded> {
    /// The host kernels (only built with `E = Host`): direct (`None`) or by FFT.
    Host(Option<FftConv>),
    /// Bands on the engine.
    Engine(EngineConv<T, E>),
}

/// The convolution on an engine: both directions' bands and the work buffer of a complex filter.
struct EngineConv<T: Scalar, E: Banded> {
    forward: EngineBands<E>,
    adjoint: EngineBands<E>,
    /// `max(nrows, ncols)` values when the filter has imaginary parts (empty otherwise).
    work: Mutex<E::Storage<T>>,
}

/// One direction of the convolution as bands: the real parts of the taps, and the imaginary
/// parts (none for a real filter), each in pieces of at most [`MAX_BAND_TAPS`] taps.
struct EngineBands<E: Banded> {
    re: Vec<(AxisBand, E::Storage<f64>)>,
    im: Vec<(AxisBand, E::Storage<f64>)>,
}

impl<T: Scalar, E: Banded> std::fmt::Debug for Convolve1D<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Convolve1D")
            .field("dims", &self.dims)
            .field("dimsd", &self.dimsd)
            .field("axis", &self.axis)
            .field("offset", &self.offset)
            .field("method", &self.method)
            .field("h", &self.h)
            .field("engine", &E::NAME)
            .field(
                "nfft",
                &match &self.path {
                    Path::Host(fft) => fft.as_ref().map(|f| f.nfft),
                    Path::Engine(_) => None,
                },
            )
            .finish()
    }
}

/// The FFT plans, the two spectra and the scratch space, built once.
struct FftConv {
    nfft: usize,
    forward: Arc<dyn Fft<f64>>,
    inverse: Arc<dyn Fft<f64>>,
    /// `FFT(h) / nfft`.
    spectrum: Vec<Complex64>,
    /// `FFT(h_adj) / nfft`.
    spectrum_adj: Vec<Complex64>,
    /// Complex lines transformed together.
    batch: usize,
    scratch_len: usize,
    work: Mutex<FftWork>,
}

struct FftWork {
    lines: Vec<Complex64>,
    scratch: Vec<Complex64>,
}

/// One direction of the operator: `out[i] = sum_k g[k] input[i + shift - k]` along the axis, with
/// `nin` input and `nout` output samples per line.
#[derive(Clone, Copy)]
struct Pass {
    nin: usize,
    nout: usize,
    shift: usize,
}

/// The smallest `2^a 3^b 5^c >= n`.
fn fast_len(n: usize) -> usize {
    (n.max(1)..)
        .find(|&m| {
            let mut k = m;
            for p in [2, 3, 5] {
                while k % p == 0 {
                    k /= p;
                }
            }
            k == 1
        })
        .expect("a 5-smooth number exists above any usize that FFT sizes reach")
}

fn to_c64<T: Scalar>(v: T) -> Complex64 {
    Complex64::new(v.re().to_f64(), v.im().to_f64())
}

/// `i` in `T` for the complex types (zero for the real ones, where it is never used).
fn imag_unit<T: Scalar>() -> T {
    let mut unit = T::zero();
    let any = &mut unit as &mut dyn Any;
    if let Some(c) = any.downcast_mut::<Complex64>() {
        *c = Complex64::i();
    } else if let Some(c) = any.downcast_mut::<Complex32>() {
        *c = Complex32::i();
    }
    unit
}

impl<T: Scalar> Convolve1D<T> {
    /// Builds the operator, with the method chosen from the filter length (`Fft` when
    /// `len(h) > FFT_THRESHOLD`, `Direct` otherwise).
    ///
    /// # Errors
    /// As [`with_method`](Self::with_method).
    pub fn new(dims: &[usize], h: impl Into<Vec<T>>, offset: usize, axis: usize) -> Result<Self> {
        let h = h.into();
        let contiguous = axis + 1 == dims.len();
        let threshold = if contiguous {
            FFT_THRESHOLD_CONTIGUOUS
        } else {
            FFT_THRESHOLD
        };
        let method = if h.len() > threshold {
            ConvolveMethod::Fft
        } else {
            ConvolveMethod::Direct
        };
        Self::with_method(dims, h, offset, axis, method)
    }

    /// Builds the operator with an explicit method.
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if
    ///   `axis >= dims.len()`.
    /// * [`Error::InvalidArgument`] if `h` is empty, if `offset > len(h) - 1` (filter no longer
    ///   than the signal) or `offset > dims[axis] - 1` (longer filter), or if the data shape
    ///   overflows `usize`.
    pub fn with_method(
        dims: &[usize],
        h: impl Into<Vec<T>>,
        offset: usize,
        axis: usize,
        method: ConvolveMethod,
    ) -> Result<Self> {
        let h = h.into();
        check_dims("Convolve1D dims", dims)?;
        check_axis("Convolve1D", dims, axis)?;
        let nh = h.len();
        if nh == 0 {
            return Err(Error::InvalidArgument(
                "Convolve1D: the filter h is empty".into(),
            ));
        }
        let (outer, n, inner) = split_axis(dims, axis);
        let (limit, what) = if nh <= n {
            (nh, "len(h)")
        } else {
            (n, "dims[axis]")
        };
        if offset >= limit {
            return Err(Error::InvalidArgument(format!(
                "Convolve1D: offset {offset} must be smaller than {what} = {limit}"
            )));
        }
        let nout = n.max(nh);
        let mut dimsd = dims.to_vec();
        dimsd[axis] = nout;
        check_dims("Convolve1D dimsd", &dimsd)?;
        let h_adj: Vec<T> = h.iter().rev().map(|v| v.conj()).collect();
        let fft = (method == ConvolveMethod::Fft).then(|| FftConv::new(&h, &h_adj, n + nh - 1));
        Ok(Convolve1D {
            dims: dims.to_vec(),
            dimsd,
            axis,
            offset,
            method,
            h,
            h_adj,
            outer,
            n,
            nout,
            inner,
            path: Path::Host(fft),
        })
    }
}

impl<T: Scalar, E: Banded> Convolve1D<T, E> {
    /// The same operator on `engine`, running the direct method as bands (see
    /// [Engines](Convolve1D#engines)): the filter's tables are uploaded and the work buffer is
    /// allocated here, once. The method becomes [`ConvolveMethod::Direct`].
    /// A rank-local operator, so no communication: when every rank moves its block, agree on
    /// the outcome (`comm.agree_value(block.to_engine(&engine))`) so that a failure on one rank
    /// is an error on all of them.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the tables or the work buffer.
    pub fn to_engine<F: Banded>(&self, engine: &F) -> Result<Convolve1D<T, F>> {
        let nh = self.h.len();
        let (outer, inner) = (self.outer, self.inner);
        let forward = EngineBands::new(
            engine,
            (outer, self.nout, self.n, inner),
            &self.h,
            self.offset,
        )?;
        let adjoint = EngineBands::new(
            engine,
            (outer, self.n, self.nout, inner),
            &self.h_adj,
            nh - 1 - self.offset,
        )?;
        let work_len = if forward.im.is_empty() {
            0
        } else {
            outer * self.nout.max(self.n) * inner
        };
        Ok(Convolve1D {
            dims: self.dims.clone(),
            dimsd: self.dimsd.clone(),
            axis: self.axis,
            offset: self.offset,
            method: ConvolveMethod::Direct,
            h: self.h.clone(),
            h_adj: self.h_adj.clone(),
            outer,
            n: self.n,
            nout: self.nout,
            inner,
            path: Path::Engine(EngineConv {
                forward,
                adjoint,
                work: Mutex::new(engine.zeros::<T>(&[work_len])?),
            }),
        })
    }

    /// The filter.
    pub fn filter(&self) -> &[T] {
        &self.h
    }

    /// The index of the filter's centre.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The convolution axis.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The method in use ([`ConvolveMethod::Direct`] on the engine path).
    pub fn method(&self) -> ConvolveMethod {
        self.method
    }

    /// `y = A x` (`adjoint = false`) or `A^H x`, on the path the operator was built for.
    fn apply_on(&self, adjoint: bool, input: E::Slice<'_, T>, out: E::SliceMut<'_, T>) {
        match &self.path {
            Path::Host(fft) => {
                let (Some(input), Some(out)) = (E::on_host(input), E::on_host_mut(out)) else {
                    unreachable!("Convolve1D: host kernels are only built for the host engine")
                };
                self.apply(fft.as_ref(), adjoint, input, out);
            }
            Path::Engine(conv) => conv.apply(adjoint, input, out),
        }
    }

    fn forward_pass(&self) -> Pass {
        Pass {
            nin: self.n,
            nout: self.nout,
            shift: self.offset,
        }
    }

    fn adjoint_pass(&self) -> Pass {
        Pass {
            nin: self.nout,
            nout: self.n,
            shift: self.h.len() - 1 - self.offset,
        }
    }

    /// The direct method: one AXPY of shifted rows per tap, on blocks of output rows that stay in
    /// cache.
    fn direct(&self, g: &[T], pass: Pass, input: &[T], out: &mut [T]) {
        let inner = self.inner;
        let (bi, bo) = (pass.nin * inner, pass.nout * inner);
        if bo == 0 {
            return;
        }
        if inner == 1 {
            // Contiguous lines: the register-blocked kernel.
            let mut pad = LinePad::default();
            for (ib, ob) in input
                .chunks_exact(bi)
                .zip(out.chunks_exact_mut(bo))
                .take(self.outer)
            {
                pad.correlate(g, pass.shift, ib, ob);
            }
            return;
        }
        let rows_per_block = (4096 / inner).max(1);
        for (ib, ob) in input
            .chunks_exact(bi)
            .zip(out.chunks_exact_mut(bo))
            .take(self.outer)
        {
            ob.fill(T::zero());
            let mut i0 = 0;
            while i0 < pass.nout {
                let i1 = (i0 + rows_per_block).min(pass.nout);
                for (k, &gk) in g.iter().enumerate() {
                    // Output rows i whose input row i + shift - k lies in 0..nin.
                    let lo = i0.max(k.saturating_sub(pass.shift));
                    let hi = i1.min((pass.nin + k).saturating_sub(pass.shift));
                    if lo < hi {
                        let j0 = lo + pass.shift - k;
                        let len = (hi - lo) * inner;
                        axpy(
                            gk,
                            &ib[j0 * inner..j0 * inner + len],
                            &mut ob[lo * inner..hi * inner],
                        );
                    }
                }
                i0 = i1;
            }
        }
    }

    fn apply(&self, fft: Option<&FftConv>, adjoint: bool, input: &[T], out: &mut [T]) {
        let (pass, g) = if adjoint {
            (self.adjoint_pass(), &self.h_adj)
        } else {
            (self.forward_pass(), &self.h)
        };
        match fft {
            Some(fft) => {
                let spectrum = if adjoint {
                    &fft.spectrum_adj
                } else {
                    &fft.spectrum
                };
                fft.apply(spectrum, pass, self.outer, self.inner, input, out);
            }
            None => self.direct(g, pass, input, out),
        }
    }
}

impl FftConv {
    fn new<T: Scalar>(h: &[T], h_adj: &[T], min_len: usize) -> Self {
        let nfft = fast_len(min_len);
        let mut planner = FftPlanner::<f64>::new();
        let forward = planner.plan_fft_forward(nfft);
        let inverse = planner.plan_fft_inverse(nfft);
        let spectrum_of = |g: &[T]| {
            let mut s = vec![Complex64::new(0.0, 0.0); nfft];
            for (z, &v) in s.iter_mut().zip(g) {
                *z = to_c64(v);
            }
            forward.process(&mut s);
            let scale = 1.0 / nfft as f64;
            s.iter_mut().for_each(|z| *z *= scale);
            s
        };
        let spectrum = spectrum_of(h);
        let spectrum_adj = spectrum_of(h_adj);
        let batch = ((1usize << 16) / nfft).clamp(1, 16);
        let scratch_len = forward
            .get_inplace_scratch_len()
            .max(inverse.get_inplace_scratch_len());
        FftConv {
            nfft,
            forward,
            inverse,
            spectrum,
            spectrum_adj,
            batch,
            scratch_len,
            work: Mutex::new(FftWork::new(batch * nfft, scratch_len)),
        }
    }

    /// Convolves every line along the axis with the filter whose scaled spectrum is `spectrum`.
    ///
    /// Lines are transformed `batch` at a time; for real `T` two lines share one complex FFT (real
    /// and imaginary parts), the filter being real then.
    fn apply<T: Scalar>(
        &self,
        spectrum: &[Complex64],
        pass: Pass,
        outer: usize,
        inner: usize,
        input: &[T],
        out: &mut [T],
    ) {
        let nlines = outer * inner;
        if nlines == 0 || pass.nout == 0 {
            return;
        }
        // The shared scratch, or a private one if another thread holds it.
        let mut guard;
        let mut private;
        let work: &mut FftWork = match self.work.try_lock() {
            Ok(g) => {
                guard = g;
                &mut guard
            }
            Err(TryLockError::Poisoned(e)) => {
                guard = e.into_inner();
                &mut guard
            }
            Err(TryLockError::WouldBlock) => {
                private = FftWork::new(self.batch * self.nfft, self.scratch_len);
                &mut private
            }
        };
        let nfft = self.nfft;
        let per = if T::IS_COMPLEX { 1 } else { 2 };
        let iu = imag_unit::<T>();
        let mut l0 = 0;
        while l0 < nlines {
            let lb = (self.batch * per).min(nlines - l0);
            let buf = &mut work.lines[..lb.div_ceil(per) * nfft];
            buf.fill(Complex64::new(0.0, 0.0));
            for q in 0..lb {
                let (o, c) = ((l0 + q) / inner, (l0 + q) % inner);
                let src = &input[o * pass.nin * inner + c..];
                let line = &mut buf[(q / per) * nfft..(q / per) * nfft + pass.nin];
                for (r, z) in line.iter_mut().enumerate() {
                    let v = src[r * inner];
                    if T::IS_COMPLEX {
                        *z = to_c64(v);
                    } else if q % 2 == 0 {
                        z.re = v.re().to_f64();
                    } else {
                        z.im = v.re().to_f64();
                    }
                }
            }
            self.forward.process_with_scratch(buf, &mut work.scratch);
            for line in buf.chunks_exact_mut(nfft) {
                for (z, s) in line.iter_mut().zip(spectrum) {
                    *z *= s;
                }
            }
            self.inverse.process_with_scratch(buf, &mut work.scratch);
            for q in 0..lb {
                let (o, c) = ((l0 + q) / inner, (l0 + q) % inner);
                let dst = &mut out[o * pass.nout * inner + c..];
                let start = (q / per) * nfft + pass.shift;
                let line = &buf[start..start + pass.nout];
                for (i, z) in line.iter().enumerate() {
                    dst[i * inner] = if T::IS_COMPLEX {
                        T::from_f64(z.re) + iu * T::from_f64(z.im)
                    } else if q % 2 == 0 {
                        T::from_f64(z.re)
                    } else {
                        T::from_f64(z.im)
                    };
                }
            }
            l0 += lb;
        }
    }
}

impl FftWork {
    fn new(lines: usize, scratch: usize) -> Self {
        FftWork {
            lines: vec![Complex64::new(0.0, 0.0); lines],
            scratch: vec![Complex64::new(0.0, 0.0); scratch],
        }
    }
}

impl<E: Banded> EngineBands<E> {
    /// `out[i] = sum_k g[k] input[i + shift - k]` on blocks `(outer, n_out, inner)` from
    /// `(outer, n_src, inner)`, with `input` rows outside `0..n_src` left out.
    fn new<G: Scalar>(
        engine: &E,
        dims: (usize, usize, usize, usize),
        g: &[G],
        shift: usize,
    ) -> Result<Self> {
        let n_src = dims.2;
        // The host sums contiguous f64 lines with fused multiply-adds (`corr_line`): so do these
        // bands, for the host's bits.
        let fused = G::SUFFIX == "f64" && dims.3 == 1;
        let shift = isize::try_from(shift).expect("a filter offset fits in isize");
        let bands = |part: &dyn Fn(usize) -> f64| -> Result<Vec<(AxisBand, E::Storage<f64>)>> {
            (0..g.len())
                .step_by(MAX_BAND_TAPS)
                .map(|k0| {
                    let k1 = (k0 + MAX_BAND_TAPS).min(g.len());
                    let taps: Vec<(isize, f64)> = (k0..k1)
                        .map(|k| {
                            (
                                -isize::try_from(k).expect("a filter fits in isize"),
                                part(k),
                            )
                        })
                        .collect();
                    let band = AxisBand::new(dims, &taps, shift, 0..n_src, &[])?.with_fma(fused);
                    let table = engine.upload(ArrayView1::from(band.table()).into_dyn())?;
                    Ok((band, table))
                })
                .collect()
        };
        let re = bands(&|k| g[k].re().to_f64())?;
        let im = if g.iter().any(|v| v.im().to_f64() != 0.0) {
            bands(&|k| g[k].im().to_f64())?
        } else {
            Vec::new()
        };
        Ok(EngineBands { re, im })
    }

    /// The pieces of one part, the first overwriting `out` and the others adding to it.
    fn run<T: Scalar>(
        pieces: &[(AxisBand, E::Storage<f64>)],
        input: E::Slice<'_, T>,
        mut out: E::SliceMut<'_, T>,
    ) {
        let len = out.len();
        for (i, (band, table)) in pieces.iter().enumerate() {
            E::band(
                band,
                E::slice(table),
                input,
                E::sub_mut(&mut out, 0..len),
                i > 0,
            );
        }
    }
}

impl<T: Scalar, E: Banded> EngineConv<T, E> {
    fn apply(&self, adjoint: bool, input: E::Slice<'_, T>, mut out: E::SliceMut<'_, T>) {
        let bands = if adjoint {
            &self.adjoint
        } else {
            &self.forward
        };
        let len = out.len();
        EngineBands::<E>::run(&bands.re, input, E::sub_mut(&mut out, 0..len));
        if bands.im.is_empty() {
            return;
        }
        // out += i (sum_k im(g[k]) input[..]), through the work buffer.
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let mut whole = E::slice_mut(&mut guard);
        let mut work = E::sub_mut(&mut whole, 0..len);
        EngineBands::<E>::run(&bands.im, input, E::sub_mut(&mut work, 0..len));
        E::axpy_slice(imag_unit::<T>(), E::freeze(&work), out);
    }
}

impl<T: Scalar, E: Banded> LocalOperator<T, E> for Convolve1D<T, E> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Convolve1D::matvec", &x, &y);
        self.apply_on(false, x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Convolve1D::rmatvec", &y, &x);
        self.apply_on(true, y, x);
    }
    fn name(&self) -> String {
        format!("Convolve1D({:?}, len(h) = {})", self.method, self.h.len())
    }
}
