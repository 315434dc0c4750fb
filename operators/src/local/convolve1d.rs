//! [`Convolve1D`]: 1-D convolution along one axis of an n-D array (PyLops'
//! `signalprocessing.Convolve1D`), as bands on any engine; and [`BandProduct`], the execution it
//! shares with the post-stack modelling.

use super::shape::{check_axis, check_dims, check_matvec_on, check_rmatvec_on, split_axis};
use super::LocalOperator;
use distlops_core::reals::real_mut;
use distlops_core::{
    AxisBand, BandChain, Banded, Error, Host, RealScalar, Result, Scalar, SliceLen,
};
use ndarray::ArrayView1;
use std::sync::{Mutex, TryLockError};

/// `y[i] = sum_k h[k] x[i + offset - k]` along `axis`: convolution with the filter `h` whose
/// centre is at index `offset`. PyLops: `Convolve1D(dims, h, offset, axis, method="direct")`.
///
/// * With `n = dims[axis]` and `nh = len(h)`: `dims` (model); `dimsd` = `dims` with
///   `dimsd[axis] = max(n, nh)` (data). For a filter no longer than the signal (`nh <= n`) the
///   data has the model's shape and `offset <= nh - 1`; for a longer filter PyLops returns `nh`
///   samples and requires `offset <= n - 1`. Indices outside `0..n` contribute zero.
/// * Adjoint: the correlation `x[m] = sum_i conj(h[i + offset - m]) y[i]`, i.e. the convolution
///   with `g[k] = conj(h[nh - 1 - k])` centred at `nh - 1 - offset`.
/// * A rank-local operator: no communication (distribute it with
///   [`BlockDiag`](crate::BlockDiag)).
///
/// # Execution and arithmetic
///
/// One execution on every engine `E`: a product is the direct sum as an
/// [`AxisBand`] along the axis ([`Banded::band_chain`] with one band): the taps `h[k]`, `k`
/// ascending, read source row `i + offset - k`, and the band's valid range `0..n` (`0..nout` for
/// the adjoint) drops the rows outside the signal. The band is fused, so each output of a real
/// filter is, bit for bit on every engine,
///
/// ```text
/// acc = +0;  for k = 0, 1, ..., nh - 1 with 0 <= i + offset - k < n:
///     acc = fma(x[i + offset - k], h[k], acc)        (one rounding per term)
/// y[i] = acc
/// ```
///
/// (per component for complex data). Band coefficients are real, so a complex filter runs the
/// band of `re(h)` into `y`, the band of `im(h)` into a work buffer `w`, then `y += i w` with the
/// engine's [`axpy_slice`](distlops_core::Compute::axpy_slice) (for finite values
/// `re y - im w`, `im y + re w`). On the host the band is the blocked kernel of
/// [`Host`]'s [`Banded`] (registers across taps, AVX2 with FMA where the processor has it); on a
/// device one thread per output. The filter's tables are uploaded and the work buffer allocated
/// once, at construction: a product moves nothing between host and device.
///
/// The cost is `O(n nh)` per line: there is no FFT method (a filter of a few hundred taps or
/// more costs proportionally more than by FFT; see the crate's benchmarks).
///
/// ```
/// use distlops_operators::local::{Convolve1D, LocalOperator};
///
/// // A 3-tap smoother centred on its middle tap, along the only axis.
/// let op = Convolve1D::new(&[5], vec![0.25, 0.5, 0.25], 1, 0)?;
/// let mut y = [0.0; 5];
/// op.matvec(&[0.0, 0.0, 4.0, 0.0, 0.0], &mut y);
/// assert_eq!(y, [0.0, 1.0, 2.0, 1.0, 0.0]);
/// # Ok::<(), distlops_core::Error>(())
/// ```
pub struct Convolve1D<T: Scalar, E: Banded = Host> {
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    axis: usize,
    offset: usize,
    h: Vec<T>,
    product: BandProduct<T, E>,
}

impl<T: Scalar, E: Banded> std::fmt::Debug for Convolve1D<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Convolve1D")
            .field("dims", &self.dims)
            .field("dimsd", &self.dimsd)
            .field("axis", &self.axis)
            .field("offset", &self.offset)
            .field("h", &self.h)
            .field("engine", &E::NAME)
            .finish()
    }
}

/// `i` in `T` (zero for the real types, where it is never used): its imaginary component set
/// through the real view.
fn imag_unit<T: Scalar>() -> T {
    let mut unit = [T::zero()];
    if let [_, im] = real_mut(&mut unit) {
        *im = <T::Real as RealScalar>::real_from_f64(1.0);
    }
    unit[0]
}

/// The bands of `y[i] = sum_k g[k] x[i + shift - k]` on blocks `(outer, n_out, inner)` from
/// `(outer, n_src, inner)`, source rows outside `0..n_src` dropped, fused: the real parts of
/// `g`, and its imaginary parts when one is not zero.
pub(crate) fn filter_bands<G: Scalar>(
    dims: (usize, usize, usize, usize),
    g: &[G],
    shift: usize,
) -> Result<(AxisBand, Option<AxisBand>)> {
    let n_src = dims.2;
    let shift = isize::try_from(shift).expect("a filter offset fits in isize");
    let band = |part: &dyn Fn(G) -> f64| {
        let taps: Vec<(isize, f64)> = g
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                (
                    -isize::try_from(k).expect("a filter fits in isize"),
                    part(v),
                )
            })
            .collect();
        Ok::<_, Error>(AxisBand::new(dims, &taps, shift, 0..n_src, &[])?.with_fma(true))
    };
    let re = band(&|v| v.re().to_f64())?;
    let im = if g.iter().any(|v| v.im().to_f64() != 0.0) {
        Some(band(&|v| v.im().to_f64())?)
    } else {
        None
    };
    Ok((re, im))
}

/// The chains of one direction of a [`BandProduct`]: `y = R x + i I x`.
pub(crate) struct Chains {
    /// `R`: the chain of the real parts.
    pub re: Vec<AxisBand>,
    /// `I`: the chain of the imaginary parts (none for real coefficients).
    pub im: Option<Vec<AxisBand>>,
}

/// A chain and its table in the engine's memory.
struct Uploaded<E: Banded> {
    chain: BandChain,
    table: E::Storage<f64>,
}

/// One direction: `y = R x`, then `y += i I x`.
struct Side<E: Banded> {
    re: Uploaded<E>,
    im: Option<Uploaded<E>>,
    /// The work space of the chains on this engine.
    chain_work: usize,
}

/// A linear map and its adjoint run as band chains on engine `E`
/// ([`Banded::band_chain`]): `y = R x + i I x` (see [`Chains`]), with the tables uploaded and
/// the work space (the chains' intermediates, and `I x`) allocated once, at construction.
pub(crate) struct BandProduct<T: Scalar, E: Banded> {
    engine: E,
    forward: Side<E>,
    adjoint: Side<E>,
    work_len: usize,
    work: Mutex<E::Storage<T>>,
}

impl<T: Scalar, E: Banded> BandProduct<T, E> {
    /// The product of `forward` and its adjoint `adjoint` on `engine`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a chain's bands do not fit together;
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room for the
    /// tables or the work space.
    pub(crate) fn new(engine: &E, forward: Chains, adjoint: Chains) -> Result<Self> {
        let forward = Side::new(engine, forward)?;
        let adjoint = Side::new(engine, adjoint)?;
        let work_len = forward.work_len().max(adjoint.work_len());
        Ok(BandProduct {
            engine: engine.clone(),
            forward,
            adjoint,
            work_len,
            work: Mutex::new(engine.zeros::<T>(&[work_len])?),
        })
    }

    /// `y = A x` (`adjoint = false`) or `y = A^H x`. Two threads applying the same operator at
    /// once do not wait for each other: the second gets work space of its own.
    pub(crate) fn apply(&self, adjoint: bool, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        let side = if adjoint {
            &self.adjoint
        } else {
            &self.forward
        };
        match self.work.try_lock() {
            Ok(mut guard) => side.apply(x, E::slice_mut(&mut guard), y),
            Err(TryLockError::Poisoned(e)) => side.apply(x, E::slice_mut(&mut e.into_inner()), y),
            Err(TryLockError::WouldBlock) => {
                let mut own = self
                    .engine
                    .zeros::<T>(&[self.work_len])
                    .expect("work space for a concurrent product");
                side.apply(x, E::slice_mut(&mut own), y);
            }
        }
    }
}

impl<E: Banded> Side<E> {
    fn new(engine: &E, chains: Chains) -> Result<Self> {
        let upload = |bands: Vec<AxisBand>| -> Result<Uploaded<E>> {
            let chain = BandChain::new(bands)?;
            let table = engine.upload(ArrayView1::from(chain.table()).into_dyn())?;
            Ok(Uploaded { chain, table })
        };
        let re = upload(chains.re)?;
        let im = chains.im.map(upload).transpose()?;
        let chain_work = std::iter::once(&re)
            .chain(&im)
            .map(|u| E::band_chain_work(&u.chain))
            .max()
            .unwrap_or(0);
        Ok(Side { re, im, chain_work })
    }

    /// The chains' work space, then `I x` if there is an imaginary part.
    fn work_len(&self) -> usize {
        self.chain_work + self.im.as_ref().map_or(0, |u| u.chain.out_len())
    }

    fn apply<T: Scalar>(
        &self,
        x: E::Slice<'_, T>,
        work: E::SliceMut<'_, T>,
        mut y: E::SliceMut<'_, T>,
    ) {
        let (mut chain_work, mut rest) = E::split_at_mut(work, self.chain_work);
        let (cw, len) = (self.chain_work, y.len());
        let re = &self.re;
        E::band_chain(
            &re.chain,
            E::slice(&re.table),
            x,
            E::sub_mut(&mut chain_work, 0..cw),
            E::sub_mut(&mut y, 0..len),
            false,
        );
        if let Some(im) = &self.im {
            let mut imag = E::sub_mut(&mut rest, 0..len);
            E::band_chain(
                &im.chain,
                E::slice(&im.table),
                x,
                E::sub_mut(&mut chain_work, 0..cw),
                E::sub_mut(&mut imag, 0..len),
                false,
            );
            E::axpy_slice(imag_unit::<T>(), E::freeze(&imag), y);
        }
    }
}

impl<T: Scalar> Convolve1D<T> {
    /// The operator on the host (see [`new_on`](Self::new_on)).
    ///
    /// # Errors
    /// As [`new_on`](Self::new_on).
    pub fn new(dims: &[usize], h: impl Into<Vec<T>>, offset: usize, axis: usize) -> Result<Self> {
        Self::new_on(&Host, dims, h, offset, axis)
    }
}

impl<T: Scalar, E: Banded> Convolve1D<T, E> {
    /// The operator on `engine`: the filter's tables are uploaded and the work buffer (complex
    /// filters only) is allocated here, once.
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if
    ///   `axis >= dims.len()`.
    /// * [`Error::InvalidArgument`] if `h` is empty or longer than
    ///   [`MAX_BAND_TAPS`](distlops_core::band::MAX_BAND_TAPS), if `offset > len(h) - 1` (filter
    ///   no longer than the signal) or `offset > dims[axis] - 1` (longer filter), or if the data
    ///   shape overflows `usize`.
    /// * [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room for
    ///   the tables or the work buffer.
    pub fn new_on(
        engine: &E,
        dims: &[usize],
        h: impl Into<Vec<T>>,
        offset: usize,
        axis: usize,
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
        let chains = |(re, im): (AxisBand, Option<AxisBand>)| Chains {
            re: vec![re],
            im: im.map(|b| vec![b]),
        };
        let forward = chains(filter_bands((outer, nout, n, inner), &h, offset)?);
        let adjoint = chains(filter_bands(
            (outer, n, nout, inner),
            &h_adj,
            nh - 1 - offset,
        )?);
        Ok(Convolve1D {
            dims: dims.to_vec(),
            dimsd,
            axis,
            offset,
            product: BandProduct::new(engine, forward, adjoint)?,
            h,
        })
    }

    /// The same operator on `engine` (built there anew: see [`new_on`](Self::new_on)).
    /// A rank-local operator, so no communication: when every rank moves its block, agree on
    /// the outcome (`comm.agree_value(block.to_engine(&engine))`) so that a failure on one rank
    /// is an error on all of them.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room for the
    /// tables or the work buffer.
    pub fn to_engine<F: Banded>(&self, engine: &F) -> Result<Convolve1D<T, F>> {
        Convolve1D::new_on(engine, &self.dims, self.h.clone(), self.offset, self.axis)
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
        self.product.apply(false, x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Convolve1D::rmatvec", &y, &x);
        self.product.apply(true, y, x);
    }
    fn name(&self) -> String {
        format!("Convolve1D(len(h) = {})", self.h.len())
    }
}
