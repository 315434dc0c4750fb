//! The execution shared by the windowed operators [`Sliding1D`](crate::Sliding1D),
//! [`Sliding2D`](crate::Sliding2D) and [`Patch2D`](crate::Patch2D): overlapping tapered
//! windows along the first axis (split over the ranks) and, for patches, along the second
//! (local), one local operator per window, and the overlap-add written as two
//! [`Banded::band`] products, so it runs on every engine with the same bits.

use crate::band_table::UploadedBand;
use crate::halo::Halo;
use crate::local::LocalOperator;
use crate::vector_blocks::{plain, plain_mut};
use distlops_core::operator::Space;
use distlops_core::{
    balanced_counts, AxisBand, Banded, Claim, Communicator, DistVector, Error, Fingerprint, Host,
    Layout, Parameters, Result, Scalar, ToEngine, VectorRef,
};
use std::ops::Range;
use std::sync::Mutex;

/// The taper of overlapping windows (PyLops' `tapertype`): the weights of a window's first and
/// last `nover` samples. With `Hanning` and `Cosine` the weights of two windows overlapping by
/// `nover` sum to one (up to rounding), so identity windows reassemble their input;
/// `CosineSquare` and `CosineSqrt` (PyLops' other two) do not.
///
/// With `nover` samples of overlap and `m = 2 nover - 1`, the first `nover` weights are
/// (`pylops.utils.tapers`, numpy's `hanning`):
///
/// ```text
/// Hanning:       0.5 + 0.5 cos(pi k / (m - 1)),          k = 1 - m, 3 - m, ..., -1 (or 1 if m == 1)
/// Cosine:        0.5 (cos(pi (j - (nover - 1)) / (nover - 1)) + 1),   j = 0, ..., nover - 1
/// CosineSquare:  Cosine's squared;   CosineSqrt: Cosine's square root
/// ```
///
/// (`Cosine` and its variants with `nover = 1` taper nothing), the last `nover` the same
/// reversed, the others one. The first window of an axis is not tapered at its start, nor the
/// last at its end, so the weights sum to one up to the edges of the axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Taper {
    /// PyLops' `"hanning"` (the default).
    #[default]
    Hanning,
    /// PyLops' `"cosine"`.
    Cosine,
    /// PyLops' `"cosinesquare"`.
    CosineSquare,
    /// PyLops' `"cosinesqrt"`.
    CosineSqrt,
    /// No taper (PyLops' `tapertype=None`): the windows' outputs simply add up where they
    /// overlap; any overlap below the window length is allowed.
    None,
}

impl Taper {
    /// The `nwin` weights of an interior window with `nover` tapered samples at each end,
    /// computed as PyLops does (in `f64`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a taper other than [`Taper::None`] has `2 nover > nwin`
    /// (PyLops raises too).
    pub fn weights(self, nwin: usize, nover: usize) -> Result<Vec<f64>> {
        if self != Taper::None && 2 * nover > nwin {
            return Err(Error::InvalidArgument(format!(
                "{self:?} taper: an overlap of {nover} samples needs windows of at least {} \
                 (not {nwin}); use Taper::None for longer overlaps",
                2 * nover
            )));
        }
        let pi = std::f64::consts::PI;
        let start: Vec<f64> = match self {
            Taper::None => vec![1.0; nover],
            Taper::Hanning => {
                let m = (2 * nover).saturating_sub(1);
                match m {
                    0 => vec![],
                    1 => vec![1.0],
                    _ => (0..nover)
                        .map(|j| {
                            let k = (1 + 2 * j) as f64 - m as f64;
                            0.5 + 0.5 * (pi * k / (m - 1) as f64).cos()
                        })
                        .collect(),
                }
            }
            Taper::Cosine | Taper::CosineSquare | Taper::CosineSqrt => {
                let ntap = if nover == 1 { 0 } else { nover };
                let half = ntap as f64 - 1.0;
                let cosine = |j: usize| 0.5 * ((((j as f64) - half) * pi / half).cos() + 1.0);
                let shape = |v: f64| match self {
                    Taper::CosineSquare => v * v,
                    Taper::CosineSqrt => v.sqrt(),
                    _ => v,
                };
                let mut w: Vec<f64> = (0..ntap).map(|j| shape(cosine(j))).collect();
                w.resize(nover, 1.0);
                w
            }
        };
        let mut weights = vec![1.0; nwin];
        for (j, &s) in start.iter().enumerate() {
            weights[j] = s;
            weights[nwin - 1 - j] = s;
        }
        Ok(weights)
    }
}

/// Windows of `nwin` samples overlapping by `nover` along an axis of `n` samples, starting at
/// `0, step, 2 step, ...` (`step = nwin - nover`) and covering the axis exactly.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WindowAxis {
    n: usize,
    nwin: usize,
    nover: usize,
    /// An interior window's weights.
    weights: Vec<f64>,
}

impl WindowAxis {
    /// The windows of one axis, checked (`which` names the axis in messages).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty window, a window longer than the axis, an
    /// overlap of a whole window, a taper that does not fit ([`Taper::weights`]), or windows
    /// that do not end at the end of the axis.
    pub(crate) fn new(
        which: &str,
        n: usize,
        (nwin, nover): (usize, usize),
        taper: Taper,
    ) -> Result<Self> {
        let bad = |what: String| Err(Error::InvalidArgument(format!("{which}: {what}")));
        if nwin == 0 {
            return bad("windows of 0 samples".into());
        }
        if nwin > n {
            return bad(format!("windows of {nwin} samples on an axis of {n}"));
        }
        if nover >= nwin {
            return bad(format!(
                "an overlap of {nover} samples in windows of {nwin}"
            ));
        }
        let step = nwin - nover;
        if (n - nwin) % step != 0 {
            let k = (n - nwin) / step;
            let end = nwin + k * step;
            return bad(format!(
                "windows of {nwin} samples every {step} do not cover the {n} samples of the axis \
                 (the last ends at {end}, {} samples would be lost); the axis needs nwin + k * \
                 (nwin - nover) samples, e.g. {end} or {}",
                n - end,
                end + step
            ));
        }
        let weights = match taper.weights(nwin, nover) {
            Err(Error::InvalidArgument(m)) => return bad(m),
            other => other?,
        };
        Ok(WindowAxis {
            n,
            nwin,
            nover,
            weights,
        })
    }

    /// One window of one sample on an axis of one sample (the untouched axis of a sliding
    /// operator, whose lines ride along as the band's inner dimension).
    pub(crate) fn whole() -> Self {
        WindowAxis {
            n: 1,
            nwin: 1,
            nover: 0,
            weights: vec![1.0],
        }
    }

    /// The number of windows.
    pub(crate) fn count(&self) -> usize {
        (self.n - self.nwin) / self.step() + 1
    }

    fn step(&self) -> usize {
        self.nwin - self.nover
    }

    /// The first sample of window `w`.
    pub(crate) fn start(&self, w: usize) -> usize {
        w * self.step()
    }

    /// The samples of every window.
    pub(crate) fn ranges(&self) -> Vec<Range<usize>> {
        (0..self.count())
            .map(|w| self.start(w)..self.start(w) + self.nwin)
            .collect()
    }

    /// The weight of sample `r` of window `w`: one at the start of the first window and at the
    /// end of the last, the taper elsewhere.
    fn weight(&self, w: usize, r: usize) -> f64 {
        let flat_start = w == 0 && r < self.nover;
        let flat_end = w + 1 == self.count() && r >= self.nwin - self.nover;
        if flat_start || flat_end {
            1.0
        } else {
            self.weights[r]
        }
    }

    /// The windows holding sample `i`, ascending.
    fn covering(&self, i: usize) -> Range<usize> {
        let step = self.step();
        let first = (i + 1).saturating_sub(self.nwin).div_ceil(step);
        first..(i / step + 1).min(self.count())
    }

    /// The first sample after the windows before `w` (`n` past the last window): where the
    /// samples a rank owns start when its first window is `w`.
    fn boundary(&self, w: usize) -> usize {
        if w == self.count() {
            self.n
        } else {
            self.start(w)
        }
    }

    /// How many earlier windows reach into the start of a window.
    fn reach_back(&self) -> usize {
        (self.nwin - 1) / self.step()
    }

    fn describe(&self) -> (usize, usize, usize) {
        (self.n, self.nwin, self.nover)
    }
}

/// What a windowed operator is: the windows along both axes, the lines that ride along, and
/// the per-window operator's sizes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WindowGeometry {
    /// Windows along the first (distributed) axis.
    pub(crate) first: WindowAxis,
    /// Windows along the second axis ([`WindowAxis::whole`] when it is not windowed).
    pub(crate) second: WindowAxis,
    /// The samples that ride along with every sample of the two axes (the untouched second axis
    /// of [`Sliding2D`](crate::Sliding2D), one otherwise).
    pub(crate) inner: usize,
    /// Whether the second axis is windowed (the model then has a window axis for each).
    pub(crate) patches: bool,
}

impl WindowGeometry {
    /// The samples of one window, `nwin0 * nwin1 * inner`.
    fn window_len(&self) -> usize {
        self.first.nwin * self.second.nwin * self.inner
    }

    /// A hash of the bits of every taper weight.
    fn weights_bits(&self) -> u64 {
        let all = self.first.weights.iter().chain(&self.second.weights);
        all.fold(Fingerprint::default(), |h, w| h.word(w.to_bits()))
            .value()
    }
}

/// One rank's execution of a windowed operator on engine `E`.
struct Execution<T: Scalar, E: Banded> {
    /// Overlap-add: the data rows from the windows' outputs (with the earlier ranks' ones).
    forward: UploadedBand<E>,
    /// Tapered windows cut from the data rows (with the later ranks' ones).
    adjoint: UploadedBand<E>,
    /// The outputs of this rank's windows, and the same with the earlier windows that reach
    /// into its rows (empty without an exchange).
    outputs: Mutex<(E::Storage<T>, E::Storage<T>)>,
    /// The data rows with the later rows this rank's windows reach (empty without an
    /// exchange), and the tapered windows.
    inputs: Mutex<(E::Storage<T>, E::Storage<T>)>,
    /// The lengths of the first two buffers (the others are the bands').
    lens: ((usize, usize), usize),
}

impl<T: Scalar, E: Banded> Execution<T, E> {
    /// Tables uploaded and buffers allocated on `engine`.
    fn new(
        engine: &E,
        (forward, adjoint): (AxisBand, AxisBand),
        (own, extended): (usize, usize),
        rows: usize,
    ) -> Result<Self> {
        Ok(Execution {
            outputs: Mutex::new((engine.zeros(&[own])?, engine.zeros(&[extended])?)),
            inputs: Mutex::new((engine.zeros(&[rows])?, engine.zeros(&[adjoint.out_len()])?)),
            forward: UploadedBand::new(engine, forward)?,
            adjoint: UploadedBand::new(engine, adjoint)?,
            lens: ((own, extended), rows),
        })
    }

    fn to_engine<F: Banded>(&self, engine: &F) -> Result<Execution<T, F>> {
        let bands = (self.forward.band.clone(), self.adjoint.band.clone());
        Execution::new(engine, bands, self.lens.0, self.lens.1)
    }
}

/// A windowed operator: `y = sum_w P_w T_w A x_w` (see [`Sliding1D`](crate::Sliding1D)), its
/// windows along the first axis split over the ranks.
pub(crate) struct Windows<T: Scalar, L, E: Banded = Host> {
    what: &'static str,
    op: L,
    geometry: WindowGeometry,
    /// This rank's windows along the first axis.
    own: Range<usize>,
    /// The exchange of earlier windows' outputs (forward), when they reach other ranks.
    outputs_halo: Option<Halo<T, E>>,
    /// The exchange of later data rows (adjoint), when windows overlap across ranks.
    rows_halo: Option<Halo<T, E>>,
    execution: Execution<T, E>,
    pub(crate) domain: Space,
    pub(crate) range: Space,
    pub(crate) comm: Communicator,
    fingerprint: Fingerprint,
}

/// The first global index along axis 0 of a halo's extended block.
fn extended_start<T: Scalar, E: Banded>(halo: &Halo<T, E>) -> usize {
    usize::try_from(halo.extended_offsets()[0]).expect("a trimmed halo starts inside the axis")
}

impl<T: Scalar, L: LocalOperator<T>> Windows<T, L> {
    /// The operator of `geometry` on data of shape `dimsd`, with model shape `(nwins0, *op.dims())`
    /// (`(nwins0, nwins1, *op.dims())` for patches), the first axis's windows split evenly over
    /// the ranks, on the host.
    /// [Collective](distlops_core#collective-calls): one small all-reduce agrees on the
    /// arguments and every rank's checks (`geometry` is this rank's verdict on them), and one
    /// more per exchange on its buffers.
    pub(crate) fn new(
        what: &'static str,
        comm: &Communicator,
        op: L,
        dimsd: &[usize],
        geometry: Result<WindowGeometry>,
    ) -> Result<Self> {
        let local = geometry.and_then(|g| {
            let want = g.window_len();
            if op.nrows() != want || op.ncols() == 0 {
                return Err(Error::InvalidArgument(format!(
                    "{what}: the window operator {} maps {:?} to {:?} ({} samples); a window \
                     has {want} samples{}",
                    op.name(),
                    op.dims(),
                    op.dimsd(),
                    op.nrows(),
                    if op.ncols() == 0 {
                        ", and it takes none"
                    } else {
                        ""
                    }
                )));
            }
            Ok(g)
        });
        let params = Parameters::default()
            .with("dimsd", &dimsd)
            .with(
                "windows",
                &local
                    .as_ref()
                    .ok()
                    .map(|g| (g.first.describe(), g.second.describe(), g.weights_bits())),
            )
            .with("op", &(op.dims(), op.dimsd()));
        let mut encode = || params.encode();
        let verdict = local.as_ref().map(|_| ()).map_err(Clone::clone);
        comm.agree_all(
            verdict,
            &mut [Claim::parameters(what, &params, &mut encode)],
        )?;
        let geometry = local?;
        let (first, second) = (&geometry.first, &geometry.second);
        let (nw0, nw1) = (first.count(), second.count());
        let (rank, p) = (comm.rank(), comm.size());
        let counts = balanced_counts(nw0, p);
        let starts: Vec<usize> = counts
            .iter()
            .scan(0, |s, &c| {
                *s += c;
                Some(*s - c)
            })
            .collect();
        let own = starts[rank]..starts[rank] + counts[rank];
        let rows: Vec<usize> = (0..p)
            .map(|r| first.boundary(starts[r] + counts[r]) - first.boundary(starts[r]))
            .collect();
        let mut model: Vec<usize> = match geometry.patches {
            true => vec![nw0, nw1],
            false => vec![nw0],
        };
        model.extend_from_slice(op.dims());
        let domain = Layout::with_counts(&model, 0, &counts)?;
        let range = Layout::with_counts(dimsd, 0, &rows)?;
        let window = geometry.window_len();
        let per_row = nw1 * window;
        let outputs_halo = match (p > 1, first.reach_back()) {
            (true, back) if back > 0 => {
                let layout = Layout::with_counts(&[nw0, per_row], 0, &counts)?;
                Some(Halo::along_layout(comm, &layout, (back, 0))?)
            }
            _ => None,
        };
        let rows_halo = match p > 1 && first.nover > 0 {
            true => Some(Halo::along_layout(comm, &range, (0, first.nover))?),
            false => None,
        };
        let from = outputs_halo.as_ref().map_or(own.start, extended_start);
        let sources = outputs_halo
            .as_ref()
            .map_or(own.len(), |h| h.extended_shape()[0]);
        let row_ext = rows_halo
            .as_ref()
            .map_or(rows[rank], |h| h.extended_shape()[0]);
        let planned = bands(&geometry, own.clone(), (from, sources), row_ext).and_then(|b| {
            let own_len = own.len() * per_row;
            let ext_len = if outputs_halo.is_some() {
                sources * per_row
            } else {
                0
            };
            let line = second.n * geometry.inner;
            let rows_len = if rows_halo.is_some() {
                row_ext * line
            } else {
                0
            };
            Execution::new(&Host, b, (own_len, ext_len), rows_len)
        });
        let execution = comm.agree_value(planned)?;
        let fingerprint = Fingerprint::default()
            .text(what)
            .words(&[first.n, first.nwin, first.nover, second.n, second.nwin])
            .words(&[second.nover, geometry.inner, op.ncols(), op.nrows()])
            .word(geometry.weights_bits());
        Ok(Windows {
            what,
            op,
            geometry,
            own,
            outputs_halo,
            rows_halo,
            execution,
            domain: Space::array(domain),
            range: Space::array(range),
            comm: comm.clone(),
            fingerprint,
        })
    }
}

/// This rank's two bands: the forward reads the outputs of windows `from..from + sources`
/// (first axis; every second-axis window of each) and writes the data rows of windows `own`;
/// the adjoint reads the data rows from the first of `own` (`row_ext` of them) and writes the
/// tapered windows of `own`.
fn bands(
    g: &WindowGeometry,
    own: Range<usize>,
    (from, sources): (usize, usize),
    row_ext: usize,
) -> Result<(AxisBand, AxisBand)> {
    let (a, b) = (&g.first, &g.second);
    let (nw1, n1) = (b.count(), b.n);
    let (wlen0, wlen1) = (a.nwin, b.nwin);
    let row0 = a.boundary(own.start);
    let rows = row0..a.boundary(own.end);
    let weight = |w0: usize, r0: usize, w1: usize, r1: usize| a.weight(w0, r0) * b.weight(w1, r1);
    // Sample (r0, r1) of window (w0, w1) among the sources, window-major.
    let source = |w0: usize, w1: usize, r0: usize, r1: usize| {
        (((w0 - from) * nw1 + w1) * wlen0 + r0) * wlen1 + r1
    };
    let mut forward = Vec::with_capacity(rows.len() * n1);
    for i0 in rows.clone() {
        for i1 in 0..n1 {
            let mut entries = Vec::new();
            for w0 in a.covering(i0) {
                let r0 = i0 - a.start(w0);
                for w1 in b.covering(i1) {
                    let r1 = i1 - b.start(w1);
                    entries.push((source(w0, w1, r0, r1), weight(w0, r0, w1, r1)));
                }
            }
            forward.push(((i0 - row0) * n1 + i1, entries));
        }
    }
    let mut adjoint = Vec::with_capacity(own.len() * nw1 * wlen0 * wlen1);
    for w0 in own.clone() {
        for w1 in 0..nw1 {
            for r0 in 0..wlen0 {
                for r1 in 0..wlen1 {
                    let at = (a.start(w0) + r0 - row0) * n1 + b.start(w1) + r1;
                    let out = source(w0 + from - own.start, w1, r0, r1);
                    adjoint.push((out, vec![(at, weight(w0, r0, w1, r1))]));
                }
            }
        }
    }
    let inner = g.inner;
    let out_len = own.len() * nw1 * wlen0 * wlen1;
    Ok((
        AxisBand::new(
            (1, rows.len() * n1, sources * nw1 * wlen0 * wlen1, inner),
            &[],
            0,
            0..0,
            &forward,
        )?,
        AxisBand::new((1, out_len, row_ext * n1, inner), &[], 0, 0..0, &adjoint)?,
    ))
}

impl<T: Scalar, L, E: Banded> Windows<T, L, E> {
    /// The per-window operator.
    pub(crate) fn op(&self) -> &L {
        &self.op
    }

    /// The windows along the first and the second axis.
    pub(crate) fn geometry(&self) -> &WindowGeometry {
        &self.geometry
    }

    /// This rank's windows along the first axis.
    pub(crate) fn own(&self) -> Range<usize> {
        self.own.clone()
    }

    pub(crate) fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    pub(crate) fn name(&self, op: String) -> String {
        let (a, b) = (&self.geometry.first, &self.geometry.second);
        let windows = match b.n {
            1 => format!("{} windows of {}", a.count(), a.nwin),
            _ => format!(
                "{} x {} windows of {} x {}",
                a.count(),
                b.count(),
                a.nwin,
                b.nwin
            ),
        };
        format!("{}({windows}, {op})", self.what)
    }
}

impl<T: Scalar, L: LocalOperator<T, E>, E: Banded> Windows<T, L, E> {
    /// The number of this rank's windows (both axes) and the sizes of a window's model and
    /// data.
    fn pieces(&self) -> (usize, usize, usize) {
        let n = self.own.len() * self.geometry.second.count();
        (n, self.op.ncols(), self.op.nrows())
    }

    /// `y = sum_w P_w T_w A x_w`: every window's output, then the overlap-add (with the
    /// earlier windows' outputs, exchanged).
    pub(crate) fn forward(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let (n, m, k) = self.pieces();
        let (x, y) = (plain(x), plain_mut(y));
        let mut guard = self
            .execution
            .outputs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (own, extended) = &mut *guard;
        {
            let mut outputs = E::slice_mut(own);
            for w in 0..n {
                let out = E::sub_mut(&mut outputs, w * k..(w + 1) * k);
                self.op.matvec(E::sub(x, w * m..(w + 1) * m), out);
            }
        }
        match &self.outputs_halo {
            None => self.execution.forward.run(E::slice(own), y),
            Some(halo) => {
                halo.extend_into(E::slice(own), E::slice_mut(extended))?;
                self.execution.forward.run(E::slice(extended), y);
            }
        }
        Ok(())
    }

    /// `x_w = A^H T_w P_w^T y`: the tapered windows of the data rows (with the later rows,
    /// exchanged), then every window's adjoint.
    pub(crate) fn adjoint(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let (n, m, k) = self.pieces();
        let (y, mut x) = (plain(y), plain_mut(x));
        let mut guard = self
            .execution
            .inputs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (rows, windows) = &mut *guard;
        match &self.rows_halo {
            None => self.execution.adjoint.run(y, E::slice_mut(windows)),
            Some(halo) => {
                halo.extend_into(y, E::slice_mut(rows))?;
                self.execution
                    .adjoint
                    .run(E::slice(rows), E::slice_mut(windows));
            }
        }
        let windows = E::slice(windows);
        for w in 0..n {
            let out = E::sub_mut(&mut x, w * m..(w + 1) * m);
            self.op.rmatvec(E::sub(windows, w * k..(w + 1) * k), out);
        }
        Ok(())
    }
}

impl<T: Scalar, L, E: Banded, F: Banded> ToEngine<F> for Windows<T, L, E>
where
    L: ToEngine<F>,
{
    type Output = Windows<T, L::Output, F>;

    /// The same operator on `engine`: the window operator moved there, the tables uploaded and
    /// the buffers allocated once. [Collective](distlops_core#collective-calls): the ranks
    /// agree on the outcome, so one rank's failure is an error on every rank.
    fn to_engine(&self, engine: &F) -> Result<Windows<T, L::Output, F>> {
        let op = self.comm.agree_value(self.op.to_engine(engine));
        let outputs_halo = self
            .outputs_halo
            .as_ref()
            .map(|h| h.to_engine(engine))
            .transpose();
        let rows_halo = self
            .rows_halo
            .as_ref()
            .map(|h| h.to_engine(engine))
            .transpose();
        let execution = self.comm.agree_value(self.execution.to_engine(engine));
        Ok(Windows {
            what: self.what,
            op: op?,
            geometry: self.geometry.clone(),
            own: self.own.clone(),
            outputs_halo: outputs_halo?,
            rows_halo: rows_halo?,
            execution: execution?,
            domain: self.domain.clone(),
            range: self.range.clone(),
            comm: self.comm.clone(),
            fingerprint: self.fingerprint,
        })
    }
}

/// The [`LinearOperator`](distlops_core::operator::LinearOperator), `Debug` and
/// [`ToEngine`] implementations of a public windowed operator `$ty(Windows)`.
macro_rules! windowed_operator {
    ($ty:ident) => {
        impl<T: Scalar, L: $crate::local::LocalOperator<T, E>, E: distlops_core::Banded>
            distlops_core::operator::LinearOperator<T, E> for $ty<T, L, E>
        {
            fn domain(&self) -> &distlops_core::operator::Space {
                &self.0.domain
            }
            fn range(&self) -> &distlops_core::operator::Space {
                &self.0.range
            }
            fn comm(&self) -> &distlops_core::Communicator {
                &self.0.comm
            }
            fn matvec_unchecked(
                &self,
                x: distlops_core::VectorRef<'_, T, E>,
                y: &mut distlops_core::DistVector<T, E>,
            ) -> distlops_core::Result<()> {
                self.0.forward(x, y)
            }
            fn rmatvec_unchecked(
                &self,
                y: distlops_core::VectorRef<'_, T, E>,
                x: &mut distlops_core::DistVector<T, E>,
            ) -> distlops_core::Result<()> {
                self.0.adjoint(y, x)
            }
            fn name(&self) -> String {
                self.0.name(self.0.op().name())
            }
            fn fingerprint(&self) -> distlops_core::Fingerprint {
                self.0.fingerprint()
            }
        }

        impl<T: Scalar, L, E: distlops_core::Banded> $ty<T, L, E> {
            /// The windows this rank holds along the first axis (for patches, its rows of
            /// patches).
            pub fn own_windows(&self) -> std::ops::Range<usize> {
                self.0.own()
            }

            /// The operator applied to every window.
            pub fn op(&self) -> &L {
                self.0.op()
            }
        }

        impl<T: Scalar, L, E: distlops_core::Banded> std::fmt::Debug for $ty<T, L, E> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("geometry", self.0.geometry())
                    .field("own_windows", &self.0.own())
                    .field("engine", &E::NAME)
                    .finish()
            }
        }

        impl<T: Scalar, L, E: distlops_core::Banded, F: distlops_core::Banded>
            distlops_core::ToEngine<F> for $ty<T, L, E>
        where
            L: distlops_core::ToEngine<F>,
        {
            type Output = $ty<T, L::Output, F>;

            /// The same operator on `engine`: the window operator moved there (its own
            /// `to_engine`), the tables uploaded and the buffers allocated once.
            /// [Collective](distlops_core#collective-calls): the ranks agree on the outcome,
            /// so one rank's failure is an error on every rank. Products have the host's bits
            /// when the window operator's do.
            ///
            /// # Errors
            /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no
            /// room, or what the window operator's `to_engine` reports (on that rank;
            /// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the
            /// others).
            fn to_engine(&self, engine: &F) -> distlops_core::Result<Self::Output> {
                distlops_core::ToEngine::to_engine(&self.0, engine).map($ty)
            }
        }
    };
}
pub(crate) use windowed_operator;
