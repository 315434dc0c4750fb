//! [`NonStationaryConvolve1D`]: convolution along one axis of a distributed N-D array with a
//! filter that varies along that axis, interpolated between filters given at regular positions
//! (PyLops' `signalprocessing.NonStationaryConvolve1D`, PyLops-MPI's
//! `MPINonStationaryConvolve1D`).

use crate::band_table::UploadedBand;
use crate::dist_stencil::check_layout;
use crate::vector_blocks::{plain, plain_mut};
use crate::Halo;
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::DistVector;
use distlops_core::{
    resolve_axis, AxisArg, AxisBand, Banded, Claim, Communicator, Error, Fingerprint, Host, Layout,
    Parameters, Result, Scalar, ToEngine, VectorRef, MAX_BAND_TAPS,
};
use ndarray::{Array2, ArrayView2};
use std::sync::Mutex;

const WHAT: &str = "NonStationaryConvolve1D";

/// `y = A x`: along `axis` (of length `n`, the other axes independent), every input sample
/// `x[j]` spreads with its own filter `h_j`, centred on `j`:
///
/// ```text
/// y[i] = sum over j in 0..n with |i - j| <= nh/2 of  h_j[i - j + nh/2] x[j]      (forward)
/// x[j] = sum over i in 0..n with |i - j| <= nh/2 of  h_j[i - j + nh/2] y[i]      (adjoint)
/// ```
///
/// (`nh/2` rounded down; samples outside `0..n` are dropped). The filters `hs` (`nfilts` rows
/// of odd length `nh`) sit at the regular positions `ih = oh, oh + dh, ...` along the axis, and
/// `h_j` is PyLops' linear interpolation between the two around `j`, computed in `f64`: with
/// `t = (j - oh) / dh` and `f = floor(t)`,
///
/// ```text
/// h_j = hs[0]                                  if f < 0
/// h_j = hs[nfilts - 1]                         if f >= nfilts - 1
/// h_j = (1 - w) hs[f] + w hs[f + 1], w = t - f otherwise
/// ```
///
/// (one filter: `h_j = hs[0]` everywhere). The filters are real, so for complex data the
/// adjoint is the transpose, as above. The model and the data have the same shape `dims`.
///
/// * Partitions: domain = range = the N-D Scatter space of the layout, distributed along any
///   axis with any counts (ranks with no rows allowed; `dims[axis]` need not divide by the
///   number of ranks); rank `r` holds its block of the layout in C order.
/// * Communication per product, when the layout is distributed along `axis`: one neighbour
///   exchange of the `nh/2` ghost rows on each side of every block (from as many ranks as those
///   rows span, so filters longer than the blocks are exact), the same in both directions, since
///   the adjoint also reads `nh/2` rows around each output row. Along any other axis, none.
///   Buffers are allocated at construction; no metadata collectives per product.
/// * PyLops-MPI: `MPINonStationaryConvolve1D(dims, hs, ih, axis)`, which builds
///   `Halo^H BlockDiag(NonStationaryConvolve1D) Halo` with one neighbour filter per side of
///   every block and needs `dims[axis] % size == 0` and a filter on every rank. Here the result
///   is the serial operator's at every rank count, for any filter length (PyLops-MPI's forward
///   is wrong when a filter reaches further than the neighbour filters a rank sees), any split,
///   any distributed axis and any number of dimensions; and one filter is allowed (PyLops needs
///   two).
///
/// # Execution and arithmetic
///
/// One execution on every engine `E`. Each rank extends its block of the input with the ghost
/// rows along `axis` ([`Halo`]'s exchange, trimmed at the global edges), then computes its own
/// output rows with one [`Banded::band`] whose every row is an explicit row of the interpolated
/// coefficients ([`AxisBand`]), built and uploaded once at construction (a table of at most
/// `2 nh + 3` `f64` per local row along the axis for each direction, shared by the other axes:
/// for a rank whose block is a single line, `4 nh + 6` times the memory of its data). A sum is
/// not fused, and runs over its sources in ascending global index:
///
/// ```text
/// acc = +0;  for j = max(i - nh/2, 0), ..., min(i + nh/2, n - 1):
///     acc = acc + x[j] * c        (c = h_j[i - j + nh/2] rounded to the real type)
/// y[i] = acc
/// ```
///
/// (per component for complex data), and the adjoint likewise over ascending `i`. The sources
/// and their order are the global ones whatever the split, and the band has the same bits on
/// every engine, so results are the same bits at every rank count and on the host and a device.
/// The forward's order is PyLops' (it adds `h_j x[j]` into `y` for `j` ascending), so in `f64`
/// it gives PyLops' values bit for bit; PyLops' adjoint sums with numpy's order instead.
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{DistributedArray, Layout, Threads};
/// use distlops_operators::NonStationaryConvolve1D;
///
/// let out = Threads::run(3, |comm| {
///     // A 3-tap smoother at sample 2 that turns into a shift by one at sample 8.
///     let hs = ndarray::array![[0.25, 0.5, 0.25], [0.0, 0.0, 1.0]];
///     let op = NonStationaryConvolve1D::<f64>::new(&comm, &[11], hs.view(), &[2, 8], 0)?;
///     let mut x = ndarray::Array1::zeros(11).into_dyn();
///     x[[0]] = 4.0; // filter hs[0] (before the first position)
///     x[[9]] = 1.0; // filter hs[1] (after the last position): moves to sample 10
///     let layout = Layout::scatter(&[11], 0, comm.size())?;
///     let y = op.apply(&DistributedArray::to_dist(&comm, x.view(), &layout)?)?.asarray();
///     Ok::<Vec<f64>, distlops_core::Error>(y.iter().copied().collect())
/// });
/// for y in out {
///     assert_eq!(y.unwrap(), [2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
/// }
/// ```
pub struct NonStationaryConvolve1D<T: Scalar, E: Banded = Host> {
    hs: Array2<f64>,
    ih: Vec<usize>,
    axis: usize,
    /// The ghost-row exchange, when the layout is distributed along `axis`.
    halo: Option<Halo<T, E>>,
    execution: Execution<T, E>,
    domain: Space,
    range: Space,
    comm: Communicator,
    fingerprint: Fingerprint,
}

impl<T: Scalar, E: Banded> std::fmt::Debug for NonStationaryConvolve1D<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(WHAT)
            .field("filters", &self.hs.dim())
            .field("ih", &self.ih)
            .field("axis", &self.axis)
            .field("layout", &self.domain.describe())
            .field("engine", &E::NAME)
            .finish()
    }
}

/// What one rank's products run on engine `E`: the two bands and the extended input block.
struct Execution<T: Scalar, E: Banded> {
    forward: UploadedBand<E>,
    adjoint: UploadedBand<E>,
    /// The input block with its ghost rows (empty without a halo).
    extended: Mutex<E::Storage<T>>,
}

impl<T: Scalar, E: Banded> Execution<T, E> {
    /// The bands uploaded to `engine` and the extended block allocated there.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room.
    fn new(engine: &E, (forward, adjoint): (AxisBand, AxisBand), halo: bool) -> Result<Self> {
        let len = if halo { forward.src_len() } else { 0 };
        Ok(Execution {
            extended: Mutex::new(engine.zeros(&[len])?),
            forward: UploadedBand::new(engine, forward)?,
            adjoint: UploadedBand::new(engine, adjoint)?,
        })
    }

    /// The same execution on `engine`.
    fn to_engine<F: Banded>(&self, engine: &F, halo: bool) -> Result<Execution<T, F>> {
        let bands = (self.forward.band.clone(), self.adjoint.band.clone());
        Execution::new(engine, bands, halo)
    }
}

/// The checks of the arguments (the same on every rank that passes the same ones).
fn check_filters(hs: &ArrayView2<'_, f64>, ih: &[usize], n: usize) -> Result<()> {
    let bad = |what: String| Err(Error::InvalidArgument(format!("{WHAT}: {what}")));
    let (nfilts, nh) = hs.dim();
    if nfilts == 0 || ih.is_empty() {
        return bad("no filters (hs needs one row per position of ih)".into());
    }
    if nfilts != ih.len() {
        return bad(format!(
            "{nfilts} filters in hs, {} positions in ih",
            ih.len()
        ));
    }
    if nh % 2 == 0 {
        return bad(format!("filters hs must have odd length, not {nh}"));
    }
    if nh > MAX_BAND_TAPS {
        return bad(format!("filters of {nh} samples (at most {MAX_BAND_TAPS})"));
    }
    if let Some(w) = ih
        .windows(2)
        .find(|w| w[1] <= w[0] || w[1] - w[0] != ih[1] - ih[0])
    {
        return bad(format!(
            "the positions ih must be regularly sampled and increasing ({} then {} in {ih:?})",
            w[0], w[1]
        ));
    }
    if ih[ih.len() - 1] >= n {
        return bad(format!(
            "the positions ih {ih:?} must lie inside 0..dims[axis] = 0..{n}"
        ));
    }
    if let Some(c) = hs.iter().find(|c| !c.is_finite()) {
        return bad(format!("filter coefficient {c} is not finite"));
    }
    Ok(())
}

/// `h_j` written into `out` (see [`NonStationaryConvolve1D`] for the formula).
fn interpolate_into(hs: &Array2<f64>, ih: &[usize], j: usize, out: &mut [f64]) {
    let last = ih.len() - 1;
    if last == 0 {
        out.copy_from_slice(hs.row(0).as_slice().expect("standard layout"));
        return;
    }
    // Positions are below 2^53 (array lengths), so the f64 values are exact.
    let t = (j as f64 - ih[0] as f64) / (ih[1] - ih[0]) as f64;
    let f = t.floor();
    if f < 0.0 {
        out.iter_mut().zip(hs.row(0)).for_each(|(o, &h)| *o = h);
    } else if f >= last as f64 {
        out.iter_mut().zip(hs.row(last)).for_each(|(o, &h)| *o = h);
    } else {
        let (k, w) = (f as usize, t - f);
        let pairs = hs.row(k).into_iter().zip(hs.row(k + 1));
        for (o, (&a, &b)) in out.iter_mut().zip(pairs) {
            *o = (1.0 - w) * a + w * b;
        }
    }
}

/// This rank's forward and adjoint bands: output rows `rows` (global, along the axis) of blocks
/// `(outer, rows.len(), inner)`, read from source blocks `(outer, n_src, inner)` whose first row
/// is global row `first`, on an axis of length `n`.
fn bands(
    (hs, ih): (&Array2<f64>, &[usize]),
    (outer, inner, n): (usize, usize, usize),
    rows: std::ops::Range<usize>,
    (first, n_src): (usize, usize),
) -> Result<(AxisBand, AxisBand)> {
    let nh = hs.ncols();
    let half = nh / 2;
    let mut h = vec![0.0; n_src * nh];
    for (r, hj) in h.chunks_exact_mut(nh).enumerate() {
        interpolate_into(hs, ih, first + r, hj);
    }
    let tap = |j: usize, i: usize| h[(j - first) * nh + i + half - j];
    let reach = |i: usize| i.saturating_sub(half)..(i + half + 1).min(n);
    let forward: Vec<(usize, Vec<(usize, f64)>)> = rows
        .clone()
        .enumerate()
        .map(|(r, i)| (r, reach(i).map(|j| (j - first, tap(j, i))).collect()))
        .collect();
    let adjoint: Vec<(usize, Vec<(usize, f64)>)> = rows
        .clone()
        .enumerate()
        .map(|(r, j)| (r, reach(j).map(|i| (i - first, tap(j, i))).collect()))
        .collect();
    let dims = (outer, rows.len(), n_src, inner);
    Ok((
        AxisBand::new(dims, &[], 0, 0..0, &forward)?,
        AxisBand::new(dims, &[], 0, 0..0, &adjoint)?,
    ))
}

impl<T: Scalar> NonStationaryConvolve1D<T> {
    /// The operator on arrays of global shape `dims` distributed along `axis` with the balanced
    /// split (the layout of PyLops-MPI's operator), on the host. `hs` holds one filter per row,
    /// `ih` their positions along `axis` (negative `axis` counts from the back).
    /// [Collective](distlops_core#collective-calls) as [`with_layout`](Self::with_layout).
    ///
    /// # Errors
    /// As [`with_layout`](Self::with_layout); [`Error::InvalidArgument`] for empty `dims`.
    pub fn new(
        comm: &Communicator,
        dims: &[usize],
        hs: ArrayView2<'_, f64>,
        ih: &[usize],
        axis: impl AxisArg,
    ) -> Result<Self> {
        let axis = resolve_axis(WHAT, axis, dims.len())?;
        let layout = Layout::scatter(dims, axis, comm.size())?;
        Self::with_layout(comm, &layout, hs, ih, axis)
    }

    /// The operator on arrays with the Scatter layout `layout` (distributed along any axis, with
    /// any counts), convolving along `axis`, on the host.
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it with the
    /// same arguments; one small all-reduce agrees on every rank's checks and arguments, and,
    /// when the layout is distributed along `axis`, one more on the allocation of the exchange's
    /// buffers.
    ///
    /// # Errors
    /// On every rank, when any rank's arguments are wrong:
    /// * [`Error::UnsupportedPartition`] for a Broadcast layout; [`Error::CommSizeMismatch`] if
    ///   the layout is for another number of ranks; [`Error::AxisOutOfRange`] if `axis` is not
    ///   an axis of the layout.
    /// * [`Error::InvalidArgument`] if there is no filter, if `hs` does not have one row per
    ///   position of `ih`, if the filters have even length or more than
    ///   [`MAX_BAND_TAPS`] samples, if `ih` is not increasing with a constant step or reaches
    ///   `dims[axis]`, if a coefficient is not finite, or if the ranks passed different
    ///   arguments.
    /// * [`Error::Allocation`] if the tables or buffers cannot be had.
    pub fn with_layout(
        comm: &Communicator,
        layout: &Layout,
        hs: ArrayView2<'_, f64>,
        ih: &[usize],
        axis: impl AxisArg,
    ) -> Result<Self> {
        let local = check_layout(WHAT, comm, layout)
            .and_then(|()| resolve_axis(WHAT, axis, layout.ndim()))
            .and_then(|a| check_filters(&hs, ih, layout.global_shape()[a]).map(|()| a));
        let params = Parameters::default()
            .with("layout", &layout.describe())
            .with("axis", &local.as_ref().ok())
            .with("ih", &ih)
            .with("hs", &(hs.dim(), filters_fingerprint(&hs)));
        let mut encode = || params.encode();
        let verdict = local.as_ref().map(|_| ()).map_err(Clone::clone);
        comm.agree_all(
            verdict,
            &mut [Claim::parameters(WHAT, &params, &mut encode)],
        )?;
        let axis = local?;
        let hs = hs.to_owned();
        let (rank, n) = (comm.rank(), layout.global_shape()[axis]);
        let shape = layout.local_shape(rank);
        let outer: usize = shape[..axis].iter().product();
        let inner: usize = shape[axis + 1..].iter().product();
        let half = hs.ncols() / 2;
        let distributed = layout.axis() == axis && comm.size() > 1;
        let halo = match distributed {
            true => Some(Halo::along_layout(comm, layout, (half, half))?),
            false => None,
        };
        let (rows, source) = match &halo {
            Some(h) => {
                let first = usize::try_from(h.extended_offsets()[axis]).expect("trimmed halo");
                let own = layout.offset(rank)..layout.offset(rank) + layout.count(rank);
                (own, (first, h.extended_shape()[axis]))
            }
            None => (0..n, (0, n)),
        };
        let planned = bands((&hs, ih), (outer, inner, n), rows, source)
            .and_then(|b| Execution::new(&Host, b, distributed));
        let execution = comm.agree_value(planned)?;
        let fingerprint = Fingerprint::default()
            .text(WHAT)
            .words(&[axis, hs.nrows(), hs.ncols()])
            .words(ih)
            .word(filters_fingerprint(&hs.view()));
        Ok(NonStationaryConvolve1D {
            hs,
            ih: ih.to_vec(),
            axis,
            halo,
            execution,
            domain: Space::array(layout.clone()),
            range: Space::array(layout.clone()),
            comm: comm.clone(),
            fingerprint,
        })
    }
}

/// A hash of the bits of every coefficient.
fn filters_fingerprint(hs: &ArrayView2<'_, f64>) -> u64 {
    hs.iter()
        .fold(Fingerprint::default(), |h, c| h.word(c.to_bits()))
        .value()
}

impl<T: Scalar, E: Banded> NonStationaryConvolve1D<T, E> {
    /// The filters, one per row.
    pub fn filters(&self) -> ArrayView2<'_, f64> {
        self.hs.view()
    }

    /// The positions of the filters along the axis.
    pub fn positions(&self) -> &[usize] {
        &self.ih
    }

    /// The convolution axis.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// `out = band(input)`, after extending `input` with its ghost rows when the operator has a
    /// halo (collective then: one exchange).
    fn apply(
        &self,
        band: &UploadedBand<E>,
        input: E::Slice<'_, T>,
        out: E::SliceMut<'_, T>,
    ) -> Result<()> {
        match &self.halo {
            None => band.run(input, out),
            Some(halo) => {
                let mut extended =
                    (self.execution.extended.lock()).unwrap_or_else(|e| e.into_inner());
                halo.extend_into(input, E::slice_mut(&mut extended))?;
                band.run(E::slice(&extended), out);
            }
        }
        Ok(())
    }
}

impl<T: Scalar, E: Banded, F: Banded> ToEngine<F> for NonStationaryConvolve1D<T, E> {
    type Output = NonStationaryConvolve1D<T, F>;

    /// The same operator running on `engine`: its bands' tables uploaded and its buffers
    /// allocated there, once. [Collective](distlops_core#collective-calls): the ranks agree on
    /// the outcome (one small all-reduce, and one more for the exchange's buffers when the
    /// operator has a halo), so a failure on one rank only is an error on every rank. The
    /// products have the same bits as on the host.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room (on that rank;
    /// [`Error::FailedOnOtherRank`] on the others).
    fn to_engine(&self, engine: &F) -> Result<NonStationaryConvolve1D<T, F>> {
        let halo = self
            .halo
            .as_ref()
            .map(|h| h.to_engine(engine))
            .transpose()?;
        let execution = self
            .comm
            .agree_value(self.execution.to_engine(engine, halo.is_some()))?;
        Ok(NonStationaryConvolve1D {
            hs: self.hs.clone(),
            ih: self.ih.clone(),
            axis: self.axis,
            halo,
            execution,
            domain: self.domain.clone(),
            range: self.range.clone(),
            comm: self.comm.clone(),
            fingerprint: self.fingerprint,
        })
    }
}

impl<T: Scalar, E: Banded> LinearOperator<T, E> for NonStationaryConvolve1D<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.apply(&self.execution.forward, plain(x), plain_mut(y))
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.apply(&self.execution.adjoint, plain(y), plain_mut(x))
    }
    fn name(&self) -> String {
        format!(
            "{WHAT}({} filters of {} along axis {})",
            self.hs.nrows(),
            self.hs.ncols(),
            self.axis
        )
    }
    fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }
}
