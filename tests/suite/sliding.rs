//! `Sliding1D`, `Sliding2D`, `Patch2D`: forward and adjoint against a serial oracle on the
//! gathered arrays (PyLops' loops: every window's product, tapered by the outer product of the
//! two axes' weights, added into the data window after window, `u` outer), bit for bit, since
//! the operators sum in that order. The per-window operator is a dense `MatrixMult` (its
//! products computed by the same `MatrixMult` in the oracle), with fewer and more model
//! samples than window samples. f32, f64, Complex32 and Complex64; every taper; overlaps of
//! none, at most half a window, and more (up to six earlier windows reaching into a rank's
//! rows); a single window; fewer windows than ranks (empty ranks); sizes no rank count
//! divides. Every rank count gives the oracle's bits, so the same bits at every rank count.
//! Dot tests; errors on every rank; the operators on engine `E` against the host, bit for bit
//! (the emulated device in the `Cuda` instantiation).

use super::check::{dist, expect_err, is_invalid_argument, is_layout_mismatch};
use super::engines::{same_bits, TestEngine};
use super::gpu_halo::nan_filled;
use super::util::{global, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    Communicator, Complex32, Complex64, Error, FullEngine, Host, RealScalar, Result, ToEngine,
    Vector,
};
use distlops::operators::local::{Identity, LocalOperator, MatrixMult};
use distlops::operators::{Patch2D, Sliding1D, Sliding2D, Taper};
use ndarray::ArrayD;

/// Which operator.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    One,
    Two,
    Patch,
}

/// One tested geometry: the data shape (`[n]` or `[n0, n1]`), windows and overlaps per axis
/// (the second ignored but for patches), taper, and how many model samples per window differ
/// from the window's samples.
#[derive(Debug, Clone)]
struct Case {
    kind: Kind,
    dimsd: Vec<usize>,
    nwin: [usize; 2],
    nover: [usize; 2],
    taper: Taper,
    extra: isize,
}

fn case(kind: Kind, dimsd: &[usize], nwin: [usize; 2], nover: [usize; 2], taper: Taper) -> Case {
    let extra = (dimsd.iter().sum::<usize>() % 3) as isize - 1;
    Case {
        kind,
        dimsd: dimsd.to_vec(),
        nwin,
        nover,
        taper,
        extra,
    }
}

fn cases() -> Vec<Case> {
    use Kind::*;
    vec![
        case(One, &[35], [7, 0], [3, 0], Taper::Hanning),
        case(One, &[35], [7, 0], [3, 0], Taper::Cosine),
        case(One, &[29], [9, 0], [4, 0], Taper::CosineSqrt),
        // Three windows hold some samples.
        case(One, &[35], [7, 0], [5, 0], Taper::None),
        // No overlap, one window, fewer windows than ranks.
        case(One, &[35], [7, 0], [0, 0], Taper::Hanning),
        case(One, &[7], [7, 0], [2, 0], Taper::Hanning),
        case(One, &[15], [7, 0], [3, 0], Taper::CosineSquare),
        case(Two, &[35, 5], [7, 0], [3, 0], Taper::Hanning),
        // Seven windows per sample: outputs from windows six back, across several ranks.
        case(Two, &[19, 3], [7, 0], [6, 0], Taper::None),
        case(Patch, &[23, 14], [7, 6], [3, 2], Taper::Hanning),
        case(Patch, &[11, 9], [5, 3], [3, 2], Taper::None),
        case(Patch, &[15, 10], [7, 4], [3, 2], Taper::Cosine),
        case(Patch, &[7, 10], [7, 4], [2, 2], Taper::CosineSquare),
    ]
}

impl Case {
    /// The samples of one window.
    fn window_len(&self) -> usize {
        match self.kind {
            Kind::One => self.nwin[0],
            Kind::Two => self.nwin[0] * self.dimsd[1],
            Kind::Patch => self.nwin[0] * self.nwin[1],
        }
    }

    /// The model samples of one window.
    fn nop(&self) -> usize {
        (self.window_len() as isize + self.extra) as usize
    }

    /// The data as `(n0, n1)` and the windows of both axes as `(n, nwin, nover)`, the second
    /// one window of every column but for patches.
    fn axes(&self) -> ([usize; 2], [(usize, usize, usize); 2]) {
        let n1 = self.dimsd.get(1).copied().unwrap_or(1);
        let first = (self.dimsd[0], self.nwin[0], self.nover[0]);
        let second = match self.kind {
            Kind::Patch => (n1, self.nwin[1], self.nover[1]),
            _ => (n1, n1, 0),
        };
        ([self.dimsd[0], n1], [first, second])
    }
}

/// The window operator of a case: a dense matrix from `nop` model samples to one window.
fn window_op<T: TestScalar>(c: &Case, seed: u64) -> MatrixMult<T> {
    let a = global::<T>(&[c.window_len(), c.nop()], seed);
    MatrixMult::new(a.into_dimensionality().unwrap()).unwrap()
}

/// One of the three operators, built on the host.
enum Built<T: TestScalar, L> {
    One(Sliding1D<T, L>),
    Two(Sliding2D<T, L>),
    Patch(Patch2D<T, L>),
}

fn build<T: TestScalar, L: LocalOperator<T>>(
    comm: &Communicator,
    c: &Case,
    op: L,
) -> Result<Built<T, L>> {
    let d = &c.dimsd;
    Ok(match c.kind {
        Kind::One => Built::One(Sliding1D::new(
            comm,
            op,
            d[0],
            (c.nwin[0], c.nover[0]),
            c.taper,
        )?),
        Kind::Two => Built::Two(Sliding2D::new(
            comm,
            op,
            [d[0], d[1]],
            (c.nwin[0], c.nover[0]),
            c.taper,
        )?),
        Kind::Patch => Built::Patch(Patch2D::new(
            comm,
            op,
            [d[0], d[1]],
            c.nwin,
            c.nover,
            c.taper,
        )?),
    })
}

impl<T: TestScalar, L: LocalOperator<T>> Built<T, L> {
    fn op(&self) -> &dyn LinearOperator<T> {
        match self {
            Built::One(o) => o,
            Built::Two(o) => o,
            Built::Patch(o) => o,
        }
    }
}

impl<T: TestScalar, L: LocalOperator<T>> Built<T, L> {
    /// The operator on `engine`.
    fn on<E: FullEngine>(&self, engine: &E) -> Box<dyn LinearOperator<T, E>>
    where
        L: ToEngine<E>,
        L::Output: LocalOperator<T, E> + 'static,
    {
        match self {
            Built::One(o) => Box::new(o.to_engine(engine).unwrap()),
            Built::Two(o) => Box::new(o.to_engine(engine).unwrap()),
            Built::Patch(o) => Box::new(o.to_engine(engine).unwrap()),
        }
    }
}

/// The weights of window `w` of an axis `(n, nwin, nover)`: the taper, flat at the start of
/// the first window and at the end of the last.
fn weights(taper: Taper, (n, nwin, nover): (usize, usize, usize), w: usize) -> Vec<f64> {
    let mut t = taper.weights(nwin, nover).unwrap();
    let last = (n - nwin) / (nwin - nover);
    if w == 0 {
        t[..nover].iter_mut().for_each(|v| *v = 1.0);
    }
    if w == last {
        t[nwin - nover..].iter_mut().for_each(|v| *v = 1.0);
    }
    t
}

/// The serial operator on the gathered arrays: `y = sum_uv P_uv T_uv A x_uv` (forward, the
/// windows in order, `u` outer) or `x_uv = A^H T_uv P_uv^T y`.
fn oracle<T: TestScalar>(c: &Case, a: &MatrixMult<T>, input: &ArrayD<T>, adjoint: bool) -> Vec<T> {
    let ([n0, n1], axes) = c.axes();
    let counts = axes.map(|(n, nwin, nover)| (n - nwin) / (nwin - nover) + 1);
    let (wlen, nop) = (c.window_len(), c.nop());
    let flat: Vec<T> = input.iter().copied().collect();
    let mut out = vec![
        T::zero();
        if adjoint {
            counts[0] * counts[1] * nop
        } else {
            n0 * n1
        }
    ];
    let (nwin0, nwin1) = (axes[0].1, axes[1].1);
    let step = |k: usize| axes[k].1 - axes[k].2;
    for u in 0..counts[0] {
        let tu = weights(c.taper, axes[0], u);
        for v in 0..counts[1] {
            let tv = weights(c.taper, axes[1], v);
            let k = u * counts[1] + v;
            let at = |r0: usize, r1: usize| (u * step(0) + r0) * n1 + v * step(1) + r1;
            let wt = |r0: usize, r1: usize| T::Real::real_from_f64(tu[r0] * tv[r1]);
            // Window samples in C order (r0, then r1 across the window's columns).
            let index = |r: usize| (r / nwin1, r % nwin1);
            if adjoint {
                let win: Vec<T> = (0..wlen)
                    .map(|r| {
                        let (r0, r1) = index(r);
                        flat[at(r0, r1)].scale_real(wt(r0, r1))
                    })
                    .collect();
                a.rmatvec(&win, &mut out[k * nop..(k + 1) * nop]);
            } else {
                let mut z = vec![T::zero(); wlen];
                a.matvec(&flat[k * nop..(k + 1) * nop], &mut z);
                for (r, zr) in z.iter().enumerate() {
                    let (r0, r1) = index(r);
                    out[at(r0, r1)] += zr.scale_real(wt(r0, r1));
                }
            }
        }
    }
    assert_eq!(nwin0 * nwin1, wlen);
    out
}

fn flat<T: TestScalar>(a: &ArrayD<T>) -> Vec<T> {
    a.iter().copied().collect()
}

/// Every case in dtype `T`: both products the oracle's bits, and (in double precision) a dot
/// test.
fn against_oracle<T: TestScalar>(comm: &Communicator) {
    for (i, c) in cases().into_iter().enumerate() {
        let seed = 1000 + 10 * i as u64;
        let a = window_op::<T>(&c, seed);
        let built = build(comm, &c, window_op::<T>(&c, seed)).unwrap();
        let op = built.op();
        let what = format!("{c:?} ({}) at {} ranks", T::SUFFIX, comm.size());
        let (dl, rl) = (op.domain().layout().unwrap(), op.range().layout().unwrap());
        assert_eq!(rl.global_shape(), c.dimsd.as_slice(), "{what}");
        let x = global::<T>(dl.global_shape(), seed + 1);
        let y = global::<T>(rl.global_shape(), seed + 2);
        let (dx, dy) = (dist(comm, &x, dl), dist(comm, &y, rl));
        let forward = op.apply(&dx).unwrap().asarray();
        assert!(
            same_bits(
                &forward,
                &ArrayD::from_shape_vec(forward.raw_dim(), oracle(&c, &a, &x, false)).unwrap()
            ),
            "{what}: forward"
        );
        let adjoint = op.apply_adjoint(&dy).unwrap().asarray();
        let want = oracle(&c, &a, &y, true);
        assert!(
            same_bits(
                &adjoint,
                &ArrayD::from_shape_vec(adjoint.raw_dim(), want).unwrap()
            ),
            "{what}: adjoint"
        );
        if T::TOL < 1e-9 {
            let d = dottest(op, &dx, &dy).unwrap();
            assert!(d.passes(T::TOL), "{what}: dot test {d:?}");
        }
    }
}

pub fn values_f64(comm: &Communicator) {
    against_oracle::<f64>(comm);
}

pub fn values_complex(comm: &Communicator) {
    against_oracle::<Complex64>(comm);
}

pub fn values_single(comm: &Communicator) {
    against_oracle::<f32>(comm);
    against_oracle::<Complex32>(comm);
}

/// The tapers' weights against their closed forms, and the partition of unity they give:
/// `Sliding1D` of identities reassembles a constant (Hanning, Cosine), `Patch2D` too.
pub fn tapers_and_unity(comm: &Communicator) {
    let w = Taper::Hanning.weights(8, 3).unwrap();
    assert_eq!(w, [0.0, 0.5, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0]);
    let w = Taper::Cosine.weights(6, 3).unwrap();
    assert_eq!(w, [0.0, 0.5, 1.0, 1.0, 0.5, 0.0]);
    let w = Taper::CosineSquare.weights(6, 3).unwrap();
    assert_eq!(w, [0.0, 0.25, 1.0, 1.0, 0.25, 0.0]);
    let w = Taper::CosineSqrt.weights(6, 3).unwrap();
    assert_eq!(w[1], 0.5f64.sqrt());
    assert_eq!(Taper::Hanning.weights(5, 1).unwrap(), [1.0; 5]);
    assert_eq!(Taper::Cosine.weights(5, 1).unwrap(), [1.0; 5]);
    assert_eq!(Taper::None.weights(5, 4).unwrap(), [1.0; 5]);
    assert!(Taper::Hanning.weights(5, 3).is_err());
    for taper in [Taper::Hanning, Taper::Cosine] {
        let op = Sliding1D::<f64, _>::new(comm, Identity::new(9, 9).unwrap(), 39, (9, 4), taper)
            .unwrap();
        let mut x = op.new_domain_vector().unwrap();
        x.fill(3.0);
        let y = flat(&op.apply(&x).unwrap().asarray());
        assert!(
            y.iter().all(|v| (v - 3.0).abs() < 1e-14),
            "{taper:?}: {y:?}"
        );
    }
    let patch = Identity::with_shapes(&[6, 5], &[6, 5]).unwrap();
    let op = Patch2D::<f64, _>::new(comm, patch, [18, 11], [6, 5], [3, 2], Taper::Hanning).unwrap();
    assert_eq!(op.patches(), (5, 3));
    let mut x = op.new_domain_vector().unwrap();
    x.fill(1.0);
    let y = flat(&op.apply(&x).unwrap().asarray());
    assert!(y.iter().all(|v| (v - 1.0).abs() < 1e-14));
}

/// Bad arguments, one rank's operator of another shape, and a vector of another layout:
/// errors on every rank.
pub fn errors_on_every_rank(comm: &Communicator) {
    let (rank, p) = (comm.rank(), comm.size());
    let inv = is_invalid_argument;
    let id = |n: usize| Identity::new(n, n).unwrap();
    let one = |n: usize, nwin: usize, nover: usize, taper: Taper| {
        Sliding1D::<f64, _>::new(comm, id(nwin), n, (nwin, nover), taper)
    };
    expect_err(
        comm,
        one(36, 7, 3, Taper::Hanning),
        inv,
        "windows not covering 36",
    );
    expect_err(
        comm,
        one(6, 7, 3, Taper::None),
        inv,
        "a window longer than the axis",
    );
    expect_err(
        comm,
        one(35, 7, 7, Taper::None),
        inv,
        "an overlap of a whole window",
    );
    expect_err(comm, one(35, 0, 0, Taper::None), inv, "empty windows");
    expect_err(
        comm,
        one(35, 7, 5, Taper::Hanning),
        inv,
        "a Hanning overlap over half",
    );
    expect_err(
        comm,
        Sliding1D::<f64, _>::new(comm, id(8), 35, (7, 3), Taper::Hanning),
        inv,
        "a window operator of 8 samples",
    );
    expect_err(
        comm,
        Sliding2D::<f64, _>::new(comm, id(7), [35, 2], (7, 3), Taper::Hanning),
        inv,
        "a 2-D window operator of one column",
    );
    let patch = Identity::with_shapes(&[4, 4], &[4, 4]).unwrap();
    expect_err(
        comm,
        Patch2D::<f64, _>::new(comm, patch, [10, 9], [4, 4], [2, 2], Taper::Hanning),
        inv,
        "patches not covering 9 columns",
    );
    if p > 1 {
        // The last rank alone passes a window operator of another shape (or bad windows).
        let nwin = if rank == p - 1 { 9 } else { 7 };
        let a = Identity::with_shapes(&[7], &[nwin]).unwrap();
        let r = Sliding1D::<f64, _>::new(comm, a, 35, (7, 3), Taper::Hanning);
        expect_err(comm, r, inv, "another model size on the last rank");
        let n = if rank == p - 1 { 36 } else { 35 };
        let own_or_other = |e: &Error| match rank == p - 1 {
            true => is_invalid_argument(e),
            false => matches!(e, Error::FailedOnOtherRank { rank, .. } if *rank == p - 1),
        };
        expect_err(
            comm,
            one(n, 7, 3, Taper::Hanning),
            own_or_other,
            "bad windows on the last rank",
        );
    }
    let op = one(35, 7, 3, Taper::Hanning).unwrap();
    let other = distlops::core::Layout::scatter(&[35], 0, p).unwrap();
    let x = dist(comm, &global::<f64>(&[35], 3), &other);
    if op.range().layout().unwrap() != &other {
        expect_err(
            comm,
            op.apply_adjoint(&x),
            is_layout_mismatch,
            "a vector of another layout",
        );
    }
}

/// The operators on engine `E` (`to_engine`) against the host, bit for bit, forward and
/// adjoint, outputs filled with NaN first, with `Identity` windows that crop or pad; a dot test
/// on the engine in double precision.
fn on_engine<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    for (i, c) in cases().into_iter().enumerate() {
        let seed = 5000 + 10 * i as u64;
        // A window operator whose device products are the host's bits (cuBLAS's sums in a
        // `MatrixMult` are only the host's to rounding): cropping or zero-padding.
        let window = Identity::new(c.window_len(), c.nop()).unwrap();
        let built = build(comm, &c, window).unwrap();
        let host = built.op();
        let dev = built.on(&engine);
        let what = format!("{c:?} on {} ({})", E::NAME, T::SUFFIX);
        let (xd, x) =
            super::engine_operators::vectors::<T, E>(comm, &engine, host.domain(), seed + 1);
        let (yd, y) =
            super::engine_operators::vectors::<T, E>(comm, &engine, host.range(), seed + 2);
        let want = nan_filled::<T, Host>(&Host, host, false, &x);
        assert!(
            same_bits(&nan_filled(&engine, dev.as_ref(), false, &xd), &want),
            "{what}: forward"
        );
        let want = nan_filled::<T, Host>(&Host, host, true, &y);
        assert!(
            same_bits(&nan_filled(&engine, dev.as_ref(), true, &yd), &want),
            "{what}: adjoint"
        );
        if T::TOL < 1e-9 {
            // These vectors' inner products cancel more (one is 1.1e-3 in the first patch
            // case), so the bound is 1e-10 here; the oracle's test holds 1e-12.
            let d = dottest(dev.as_ref(), &xd, &yd).unwrap();
            assert!(d.passes(1e-10), "{what}: dot test {d:?}");
        }
    }
}

/// [`on_engine`] in the four dtypes.
pub fn engine_all_dtypes<E: TestEngine>(comm: &Communicator) {
    on_engine::<f32, E>(comm);
    on_engine::<f64, E>(comm);
    on_engine::<Complex32, E>(comm);
    on_engine::<Complex64, E>(comm);
}
