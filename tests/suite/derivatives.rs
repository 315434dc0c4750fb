//! Distributed derivatives (FirstDerivative, SecondDerivative, Laplacian, Gradient): forward and
//! adjoint against PyLops' serial operators (the library's local operators, which match PyLops
//! exactly) applied to the gathered global array, and dot tests, for f64 and Complex64, 1-D to 3-D,
//! along every axis, on layouts distributed along the first and the last axis with balanced
//! counts and with thin and empty ranks (ghost slabs from several ranks). Each operator is checked
//! with streaming stores forced (the path of large outputs) and must give the same bits with
//! ordinary stores; every split gives exactly the values of one rank.

use super::util::{assert_close, global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt, Space};
use distlops::core::signed_axis;
use distlops::core::{
    balanced_counts, Communicator, Complex64, DistVector, DistributedArray, Error, Layout, Scalar,
    StackedDistributedArray,
};
use distlops::operators::local::{self, DerivativeKind, LocalOperator};
use distlops::operators::{
    FirstDerivative, Gradient, Laplacian, SecondDerivative, DEFAULT_STREAM_MIN_BYTES,
};
use distlops::operators::{
    FirstDerivativeParams, GradientParams, LaplacianParams, SecondDerivativeParams,
};
use ndarray::{ArrayD, IxDyn};

pub const KINDS: [DerivativeKind; 3] = [
    DerivativeKind::Forward,
    DerivativeKind::Backward,
    DerivativeKind::Centered,
];

/// Counts with thin and empty ranks: 1, 0, 1, ... and the rest on the last rank (or reversed).
pub fn thin_counts(n: usize, p: usize, reversed: bool) -> Vec<usize> {
    if p == 1 {
        return vec![n];
    }
    let mut c: Vec<usize> = (0..p).map(|r| usize::from(r % 2 == 0)).collect();
    c[p - 1] = 0;
    let rest = n - c.iter().sum::<usize>();
    c[p - 1] = rest;
    if reversed {
        c.reverse();
    }
    c
}

/// The layouts every operator is tested on for `dims` at `p` ranks.
pub fn layouts(dims: &[usize], p: usize) -> Vec<Layout> {
    let last = dims.len() - 1;
    let mut out = vec![Layout::scatter(dims, 0, p).unwrap()];
    out.push(Layout::with_counts(dims, 0, &thin_counts(dims[0], p, false)).unwrap());
    if last > 0 {
        out.push(Layout::with_counts(dims, last, &balanced_counts(dims[last], p)).unwrap());
        out.push(Layout::with_counts(dims, last, &thin_counts(dims[last], p, true)).unwrap());
    }
    out
}

/// `op` applied to a global array (flat C order).
fn local_apply<T: TestScalar>(
    op: &dyn LocalOperator<T>,
    x: &ArrayD<T>,
    adjoint: bool,
) -> ArrayD<T> {
    let mut y = ArrayD::zeros(x.raw_dim());
    let (xs, ys) = (x.as_slice().unwrap(), y.as_slice_mut().unwrap());
    if adjoint {
        op.rmatvec(xs, ys);
    } else {
        op.matvec(xs, ys);
    }
    y
}

/// A vector of `space` (plain, or a stack of plain parts) holding the global arrays `parts`.
pub fn vector<T: TestScalar>(
    comm: &Communicator,
    space: &Space,
    parts: &[ArrayD<T>],
) -> DistVector<T> {
    match space {
        Space::Array { layout, .. } => {
            DistVector::Array(DistributedArray::to_dist(comm, parts[0].view(), layout).unwrap())
        }
        Space::Stacked(spaces) => DistVector::Stacked(
            StackedDistributedArray::new(
                spaces
                    .iter()
                    .zip(parts)
                    .map(|(s, p)| vector(comm, s, std::slice::from_ref(p)))
                    .collect(),
            )
            .unwrap(),
        ),
    }
}

/// The global arrays of a (plain or stacked) vector.
fn gathered<T: TestScalar>(v: &DistVector<T>) -> Vec<ArrayD<T>> {
    match v {
        DistVector::Array(a) => vec![a.asarray()],
        DistVector::Stacked(s) => s.parts().iter().flat_map(gathered).collect(),
    }
}

/// The stencil operators, whose stream threshold [`both_paths`] sets.
trait StreamOption: Sized {
    fn with_stream_min_bytes(self, bytes: usize) -> Self;
}

macro_rules! stream_option {
    ($($ty:ident),*) => {$(
        impl<T: Scalar> StreamOption for $ty<T> {
            fn with_stream_min_bytes(self, bytes: usize) -> Self {
                $ty::with_stream_min_bytes(self, bytes)
            }
        }
    )*};
}
stream_option!(FirstDerivative, SecondDerivative, Laplacian, Gradient);

/// `build()` twice: as built (the default threshold, [`DEFAULT_STREAM_MIN_BYTES`], is far above
/// the tests' arrays, so with ordinary stores) and with streaming stores forced (threshold 0).
fn both_paths<O: StreamOption>(build: impl Fn() -> O) -> [O; 2] {
    [build(), build().with_stream_min_bytes(0)]
}
const _: () = assert!(DEFAULT_STREAM_MIN_BYTES > 1 << 20);

/// Forward, adjoint and dot test of the operator `build()` makes, see [`check_ops`].
fn check<T: TestScalar, O: LinearOperator<T> + StreamOption>(
    comm: &Communicator,
    build: impl Fn() -> O,
    dims: &[usize],
    nout: usize,
    fwd: impl Fn(&ArrayD<T>) -> Vec<ArrayD<T>>,
    adj: impl Fn(&[ArrayD<T>]) -> ArrayD<T>,
    what: &str,
) {
    let [ordinary, streamed] = both_paths(build);
    check_ops(comm, [&ordinary, &streamed], dims, nout, fwd, adj, what);
}

/// Forward, adjoint and dot test of an operator (domain: arrays of `dims`; range: `nout` of
/// them) built with streaming stores forced, against the serial references `fwd` and `adj`; the
/// same operator built with ordinary stores must give the same bits.
fn check_ops<T: TestScalar>(
    comm: &Communicator,
    [ordinary, op]: [&dyn LinearOperator<T>; 2],
    dims: &[usize],
    nout: usize,
    fwd: impl Fn(&ArrayD<T>) -> Vec<ArrayD<T>>,
    adj: impl Fn(&[ArrayD<T>]) -> ArrayD<T>,
    what: &str,
) {
    let xg = global::<T>(dims, 7);
    let yg: Vec<ArrayD<T>> = (0..nout)
        .map(|k| global::<T>(dims, 11 + k as u64))
        .collect();
    let x = vector(comm, op.domain(), std::slice::from_ref(&xg));
    let y = vector(comm, op.range(), &yg);
    let ax = gathered(&op.apply(&x).unwrap());
    let expected = fwd(&xg);
    assert_eq!(ax.len(), expected.len(), "{what}: components");
    for (k, (a, e)) in ax.iter().zip(&expected).enumerate() {
        assert_close(a, e, &format!("{what}: forward component {k}"));
    }
    let ahy = gathered(&op.apply_adjoint(&y).unwrap());
    assert_close(&ahy[0], &adj(&yg), &format!("{what}: adjoint"));
    let d = dottest(op, &x, &y).unwrap();
    assert!(d.passes(T::TOL), "{what}: dot test {d:?}");
    let ax_ordinary = gathered(&ordinary.apply(&x).unwrap());
    assert!(
        ax_ordinary == ax,
        "{what}: ordinary and streaming stores differ (forward)"
    );
    let ahy_ordinary = gathered(&ordinary.apply_adjoint(&y).unwrap());
    assert!(
        ahy_ordinary == ahy,
        "{what}: ordinary and streaming stores differ (adjoint)"
    );
}

/// A label for a layout.
pub fn describe(l: &Layout) -> String {
    format!("axis {} counts {:?}", l.axis(), l.counts())
}

/// A test case: the global shape, the layout, the operator's parameters, and a label.
pub type Case<P> = (&'static [usize], Layout, P, String);

/// Every FirstDerivative case at `p` ranks: every shape, layout, axis, scheme and edge flag.
pub fn first_derivative_cases(p: usize) -> Vec<Case<FirstDerivativeParams>> {
    let schemes = [
        (DerivativeKind::Forward, 3),
        (DerivativeKind::Backward, 3),
        (DerivativeKind::Centered, 3),
        (DerivativeKind::Centered, 5),
    ];
    let mut out = Vec::new();
    for dims in [UNEVEN_1D, UNEVEN_2D, UNEVEN_3D] {
        for layout in layouts(dims, p) {
            for axis in 0..dims.len() {
                for (kind, order) in schemes {
                    for edge in [false, true] {
                        let what = format!(
                            "FirstDerivative {dims:?} along {axis}, {kind:?} order {order} edge \
                             {edge}, {}",
                            describe(&layout)
                        );
                        let params = FirstDerivativeParams {
                            axis: signed_axis(axis),
                            sampling: 0.5 + axis as f64,
                            kind,
                            edge,
                            order,
                        };
                        out.push((dims, layout.clone(), params, what));
                    }
                }
            }
        }
    }
    out
}

fn first_derivative<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    for (dims, layout, params, what) in first_derivative_cases(p) {
        let build = || FirstDerivative::<T>::with_layout(comm, &layout, params).unwrap();
        let serial = local::LocalFirstDerivative::new(dims, params).unwrap();
        check(
            comm,
            build,
            dims,
            1,
            |x| vec![local_apply(&serial, x, false)],
            |y| local_apply(&serial, &y[0], true),
            &what,
        );
    }
    // `new` distributes along axis 0 with the balanced split.
    let op = FirstDerivative::<T>::new(
        comm,
        UNEVEN_2D,
        FirstDerivativeParams {
            axis: 1,
            edge: true,
            order: 5,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        op.domain().layout().unwrap(),
        &Layout::scatter(UNEVEN_2D, 0, p).unwrap()
    );
    assert_eq!(op.range(), op.domain());
}

/// Every SecondDerivative case at `p` ranks: every shape, layout, axis, kind and edge flag.
pub fn second_derivative_cases(p: usize) -> Vec<Case<SecondDerivativeParams>> {
    let mut out = Vec::new();
    for dims in [UNEVEN_1D, UNEVEN_2D, UNEVEN_3D] {
        for layout in layouts(dims, p) {
            for axis in 0..dims.len() {
                for kind in KINDS {
                    for edge in [false, true] {
                        let what = format!(
                            "SecondDerivative {dims:?} along {axis}, {kind:?} edge {edge}, {}",
                            describe(&layout)
                        );
                        let params = SecondDerivativeParams {
                            axis: signed_axis(axis),
                            sampling: 2.0 - 0.5 * axis as f64,
                            kind,
                            edge,
                        };
                        out.push((dims, layout.clone(), params, what));
                    }
                }
            }
        }
    }
    out
}

fn second_derivative<T: TestScalar>(comm: &Communicator) {
    for (dims, layout, params, what) in second_derivative_cases(comm.size()) {
        let build = || SecondDerivative::<T>::with_layout(comm, &layout, params).unwrap();
        let serial = local::LocalSecondDerivative::new(dims, params).unwrap();
        check(
            comm,
            build,
            dims,
            1,
            |x| vec![local_apply(&serial, x, false)],
            |y| local_apply(&serial, &y[0], true),
            &what,
        );
    }
}

/// A Laplacian test case: dims, axes, weights, sampling.
type LaplacianCase = (
    &'static [usize],
    &'static [usize],
    &'static [f64],
    &'static [f64],
);

/// Every Laplacian case at `p` ranks: shapes with one to three axes (repeated too), weights and
/// steps, every layout, kind and edge flag.
pub fn laplacian_cases(p: usize) -> Vec<Case<LaplacianParams>> {
    let cases: [LaplacianCase; 6] = [
        (UNEVEN_1D, &[0], &[2.0], &[0.5]),
        (UNEVEN_2D, &[0, 1], &[1.0, 1.0], &[1.0, 1.0]),
        (UNEVEN_2D, &[1, 0], &[3.0, 1.0], &[0.5, 2.0]),
        (UNEVEN_2D, &[1], &[1.5], &[1.0]),
        (UNEVEN_3D, &[0, 1, 2], &[1.0, 2.0, 0.5], &[1.0, 0.5, 2.0]),
        (UNEVEN_3D, &[2, 0, 2], &[1.0, -1.0, 0.25], &[2.0, 1.0, 1.0]),
    ];
    let mut out = Vec::new();
    for (dims, axes, weights, sampling) in cases {
        for layout in layouts(dims, p) {
            for kind in KINDS {
                for edge in [false, true] {
                    let what = format!(
                        "Laplacian {dims:?} axes {axes:?} weights {weights:?} sampling \
                         {sampling:?}, {kind:?} edge {edge}, {}",
                        describe(&layout)
                    );
                    let params = LaplacianParams {
                        axes: axes.iter().map(|&a| signed_axis(a)).collect(),
                        weights: weights.to_vec(),
                        sampling: sampling.to_vec(),
                        kind,
                        edge,
                    };
                    out.push((dims, layout.clone(), params, what));
                }
            }
        }
    }
    out
}

fn laplacian<T: TestScalar>(comm: &Communicator) {
    for (dims, layout, params, what) in laplacian_cases(comm.size()) {
        let build = || Laplacian::<T>::with_layout(comm, &layout, params.clone()).unwrap();
        // PyLops: the weighted sum of serial second derivatives.
        let terms: Vec<(f64, local::LocalSecondDerivative)> = params
            .axes
            .iter()
            .zip(params.weights.iter().zip(&params.sampling))
            .map(|(&axis, (&w, &sampling))| {
                let d2 = SecondDerivativeParams {
                    axis,
                    sampling,
                    kind: params.kind,
                    edge: params.edge,
                };
                (w, local::LocalSecondDerivative::new(dims, d2).unwrap())
            })
            .collect();
        let sum = |x: &ArrayD<T>, adjoint: bool| {
            terms
                .iter()
                .fold(ArrayD::zeros(x.raw_dim()), |acc, (w, d)| {
                    acc + local_apply(d, x, adjoint).mapv(|v| v * T::make(*w, 0.0))
                })
        };
        check(
            comm,
            build,
            dims,
            1,
            |x| vec![sum(x, false)],
            |y| sum(&y[0], true),
            &what,
        );
    }
}

/// Every Gradient case at `p` ranks: every shape, layout, kind and edge flag, with one step for
/// every axis and one step per axis.
pub fn gradient_cases(p: usize) -> Vec<Case<GradientParams>> {
    let mut out = Vec::new();
    for dims in [UNEVEN_1D, UNEVEN_2D, UNEVEN_3D] {
        let per_axis: Vec<f64> = (0..dims.len()).map(|k| 1.0 + 0.5 * k as f64).collect();
        for layout in layouts(dims, p) {
            for kind in KINDS {
                for edge in [false, true] {
                    for sampling in [&[2.0][..], &per_axis[..]] {
                        let what = format!(
                            "Gradient {dims:?} sampling {sampling:?}, {kind:?} edge {edge}, {}",
                            describe(&layout)
                        );
                        let params = GradientParams {
                            sampling: sampling.to_vec(),
                            kind,
                            edge,
                        };
                        out.push((dims, layout.clone(), params, what));
                    }
                }
            }
        }
    }
    out
}

fn gradient<T: TestScalar>(comm: &Communicator) {
    for (dims, layout, params, what) in gradient_cases(comm.size()) {
        let build = || Gradient::<T>::with_layout(comm, &layout, params.clone()).unwrap();
        let sampling = &params.sampling;
        let dx = |k: usize| sampling[k.min(sampling.len() - 1)];
        let ds: Vec<local::LocalFirstDerivative> = (0..dims.len())
            .map(|k| {
                local::LocalFirstDerivative::new(
                    dims,
                    FirstDerivativeParams {
                        axis: signed_axis(k),
                        sampling: dx(k),
                        kind: params.kind,
                        edge: params.edge,
                        ..Default::default()
                    },
                )
                .unwrap()
            })
            .collect();
        check(
            comm,
            build,
            dims,
            dims.len(),
            |x| ds.iter().map(|d| local_apply(d, x, false)).collect(),
            |y| {
                ds.iter()
                    .zip(y)
                    .fold(ArrayD::zeros(IxDyn(dims)), |acc, (d, yk)| {
                        acc + local_apply(d, yk, true)
                    })
            },
            &what,
        );
    }
}

pub fn first_derivative_f64(comm: &Communicator) {
    first_derivative::<f64>(comm);
}

pub fn first_derivative_complex(comm: &Communicator) {
    first_derivative::<Complex64>(comm);
}

pub fn second_derivative_f64(comm: &Communicator) {
    second_derivative::<f64>(comm);
}

pub fn second_derivative_complex(comm: &Communicator) {
    second_derivative::<Complex64>(comm);
}

pub fn laplacian_f64(comm: &Communicator) {
    laplacian::<f64>(comm);
}

pub fn laplacian_complex(comm: &Communicator) {
    laplacian::<Complex64>(comm);
}

pub fn gradient_f64(comm: &Communicator) {
    gradient::<f64>(comm);
}

pub fn gradient_complex(comm: &Communicator) {
    gradient::<Complex64>(comm);
}

/// Every split gives exactly the values of one rank: each operator on each layout (along the
/// first and the last axis, balanced and with thin and empty ranks) against the same operator on
/// this rank alone, forward and adjoint.
fn same_values_on_every_split<T: TestScalar>(comm: &Communicator) {
    let (p, serial) = (comm.size(), Communicator::serial());
    let compare =
        |op: &dyn LinearOperator<T>, one: &dyn LinearOperator<T>, dims: &[usize], what: &str| {
            let xg = global::<T>(dims, 5);
            let nout = gathered(&one.new_range_vector().unwrap()).len();
            let yg: Vec<ArrayD<T>> = (0..nout).map(|k| global::<T>(dims, 9 + k as u64)).collect();
            let ax = gathered(
                &op.apply(&vector(comm, op.domain(), std::slice::from_ref(&xg)))
                    .unwrap(),
            );
            let ax1 = gathered(
                &one.apply(&vector(&serial, one.domain(), std::slice::from_ref(&xg)))
                    .unwrap(),
            );
            assert!(ax == ax1, "{what}: forward differs from one rank's");
            let ahy = gathered(&op.apply_adjoint(&vector(comm, op.range(), &yg)).unwrap());
            let ahy1 = gathered(
                &one.apply_adjoint(&vector(&serial, one.range(), &yg))
                    .unwrap(),
            );
            assert!(ahy == ahy1, "{what}: adjoint differs from one rank's");
        };
    for dims in [UNEVEN_1D, UNEVEN_2D, UNEVEN_3D] {
        let axes: Vec<usize> = (0..dims.len()).collect();
        let weights: Vec<f64> = axes.iter().map(|&a| 1.0 + 0.5 * a as f64).collect();
        let whole = Layout::scatter(dims, 0, 1).unwrap();
        for layout in layouts(dims, p) {
            for kind in KINDS {
                for edge in [false, true] {
                    let what = format!("{dims:?} {kind:?} edge {edge}, {}", describe(&layout));
                    let lap = |c, l| {
                        Laplacian::<T>::with_layout(
                            c,
                            l,
                            LaplacianParams {
                                axes: axes.iter().map(|&a| signed_axis(a)).collect(),
                                weights: weights.to_vec(),
                                sampling: weights.to_vec(),
                                kind,
                                edge,
                            },
                        )
                        .unwrap()
                    };
                    compare(
                        &lap(comm, &layout),
                        &lap(&serial, &whole),
                        dims,
                        &format!("Laplacian {what}"),
                    );
                    let grad = |c, l| {
                        Gradient::<T>::with_layout(
                            c,
                            l,
                            GradientParams {
                                sampling: weights.to_vec(),
                                kind,
                                edge,
                            },
                        )
                        .unwrap()
                    };
                    compare(
                        &grad(comm, &layout),
                        &grad(&serial, &whole),
                        dims,
                        &format!("Gradient {what}"),
                    );
                    for &axis in &axes {
                        let d2 = |c, l| {
                            SecondDerivative::<T>::with_layout(
                                c,
                                l,
                                SecondDerivativeParams {
                                    axis: signed_axis(axis),
                                    sampling: 0.5,
                                    kind,
                                    edge,
                                },
                            )
                            .unwrap()
                        };
                        let what = format!("SecondDerivative along {axis}, {what}");
                        compare(&d2(comm, &layout), &d2(&serial, &whole), dims, &what);
                    }
                }
            }
            for (kind, order) in [(DerivativeKind::Centered, 5), (DerivativeKind::Forward, 3)] {
                for &axis in &axes {
                    let d1 = |c, l| {
                        FirstDerivative::<T>::with_layout(
                            c,
                            l,
                            FirstDerivativeParams {
                                axis: signed_axis(axis),
                                sampling: 2.0,
                                kind,
                                edge: true,
                                order,
                            },
                        )
                        .unwrap()
                    };
                    let what = format!(
                        "FirstDerivative {dims:?} along {axis}, {kind:?} {order}, {}",
                        describe(&layout)
                    );
                    compare(&d1(comm, &layout), &d1(&serial, &whole), dims, &what);
                }
            }
        }
    }
}

pub fn same_values_on_every_split_f64(comm: &Communicator) {
    same_values_on_every_split::<f64>(comm);
}

pub fn same_values_on_every_split_complex(comm: &Communicator) {
    same_values_on_every_split::<Complex64>(comm);
}

/// Arrays of shape `[3, 6, 4]` split along the middle axis at `p` ranks into very thin blocks:
/// ghost slabs of width 2 come from two ranks past an empty one.
pub fn thin_middle_layout(p: usize) -> ([usize; 3], Layout) {
    let dims = [3, 6, 4];
    let counts: &[usize] = match p {
        1 => &[6],
        2 => &[5, 1],
        3 => &[1, 0, 5],
        _ => &[0, 1, 0, 5],
    };
    let counts = [counts, &vec![0; p.saturating_sub(4)][..]].concat();
    (dims, Layout::with_counts(&dims, 1, &counts).unwrap())
}

/// Very thin ranks: most ranks empty, the stencil reaching over several of them, along a middle
/// axis; short axes whose boundary rows overlap; the same operator applied repeatedly (buffers
/// are reused).
pub fn thin_ranks_and_short_axes(comm: &Communicator) {
    let p = comm.size();
    let (dims, layout) = thin_middle_layout(p);
    let counts = layout.counts().to_vec();
    for (kind, order) in [(DerivativeKind::Centered, 5), (DerivativeKind::Forward, 3)] {
        let [ordinary, streamed] = both_paths(|| {
            FirstDerivative::<Complex64>::with_layout(
                comm,
                &layout,
                FirstDerivativeParams {
                    axis: 1,
                    kind,
                    edge: true,
                    order,
                    ..Default::default()
                },
            )
            .unwrap()
        });
        let serial = local::LocalFirstDerivative::new(
            &dims,
            FirstDerivativeParams {
                axis: 1,
                kind,
                edge: true,
                order,
                ..Default::default()
            },
        )
        .unwrap();
        for _ in 0..3 {
            check_ops(
                comm,
                [&ordinary, &streamed],
                &dims,
                1,
                |x| vec![local_apply(&serial, x, false)],
                |y| local_apply(&serial, &y[0], true),
                &format!("FirstDerivative {kind:?} {order} on counts {counts:?}"),
            );
        }
    }
    let build = || {
        Laplacian::<f64>::with_layout(
            comm,
            &layout,
            LaplacianParams {
                axes: vec![0, 1, 2],
                weights: vec![1.0, 2.0, 3.0],
                sampling: vec![1.0, 1.0, 1.0],
                edge: true,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let ds: Vec<(f64, local::LocalSecondDerivative)> = (0..3)
        .map(|a| {
            let d = local::LocalSecondDerivative::new(
                &dims,
                SecondDerivativeParams {
                    axis: signed_axis(a),
                    edge: true,
                    ..Default::default()
                },
            );
            (1.0 + a as f64, d.unwrap())
        })
        .collect();
    let sum = |x: &ArrayD<f64>, adjoint: bool| {
        ds.iter().fold(ArrayD::zeros(x.raw_dim()), |acc, (w, d)| {
            acc + local_apply(d, x, adjoint) * *w
        })
    };
    check(
        comm,
        build,
        &dims,
        1,
        |x| vec![sum(x, false)],
        |y| sum(&y[0], true),
        &format!("Laplacian on counts {counts:?}"),
    );
    // Axes shorter than the interior stencil: only boundary rows (or none).
    for n in [1, 2, 3, 4] {
        let dims = [n, 5];
        let layout = Layout::scatter(&dims, 0, p).unwrap();
        let make = |edge| {
            FirstDerivative::<f64>::with_layout(
                comm,
                &layout,
                FirstDerivativeParams {
                    axis: 0,
                    edge,
                    order: 5,
                    ..Default::default()
                },
            )
        };
        for edge in [false, true] {
            if edge && n < 3 {
                assert!(matches!(make(edge), Err(Error::InvalidArgument(_))));
                continue;
            }
            let build = || make(edge).unwrap();
            let serial = local::LocalFirstDerivative::new(
                &dims,
                FirstDerivativeParams {
                    axis: 0,
                    edge,
                    order: 5,
                    ..Default::default()
                },
            )
            .unwrap();
            check(
                comm,
                build,
                &dims,
                1,
                |x| vec![local_apply(&serial, x, false)],
                |y| local_apply(&serial, &y[0], true),
                &format!("FirstDerivative order 5 edge {edge} on {dims:?}"),
            );
        }
    }
}

/// Bad arguments are the same error on every rank.
pub fn derivative_errors(comm: &Communicator) {
    let p = comm.size();
    use DerivativeKind::*;
    let dims = [6, 5];
    let broadcast = Layout::broadcast(&dims, p).unwrap();
    assert!(matches!(
        FirstDerivative::<f64>::with_layout(
            comm,
            &broadcast,
            FirstDerivativeParams {
                axis: 0,
                ..Default::default()
            }
        ),
        Err(Error::UnsupportedPartition(_))
    ));
    assert!(matches!(
        Laplacian::<f64>::with_layout(
            comm,
            &broadcast,
            LaplacianParams {
                axes: vec![0],
                weights: vec![1.0],
                sampling: vec![1.0],
                ..Default::default()
            }
        ),
        Err(Error::UnsupportedPartition(_))
    ));
    let other = Layout::scatter(&dims, 0, p + 1).unwrap();
    assert!(matches!(
        SecondDerivative::<f64>::with_layout(
            comm,
            &other,
            SecondDerivativeParams {
                axis: 0,
                ..Default::default()
            }
        ),
        Err(Error::CommSizeMismatch { .. })
    ));
    assert!(matches!(
        FirstDerivative::<f64>::new(
            comm,
            &dims,
            FirstDerivativeParams {
                axis: 0,
                order: 4,
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        FirstDerivative::<f64>::new(comm, &dims, FirstDerivativeParams { axis: 2, ..Default::default() }),
        Err(Error::AxisOutOfRange { axis: 2, ndim: 2, ref call }) if call == "FirstDerivative"
    ));
    assert!(matches!(
        SecondDerivative::<f64>::new(
            comm,
            &dims,
            SecondDerivativeParams {
                axis: 0,
                sampling: 0.0,
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        SecondDerivative::<f64>::new(
            comm,
            &[6, 2],
            SecondDerivativeParams {
                axis: 1,
                edge: true,
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Laplacian::<f64>::new(
            comm,
            &dims,
            LaplacianParams {
                axes: vec![0, 1, -1],
                weights: vec![1.0, 2.0],
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    // PyLops' defaults and negative axes: axes (-2, -1) are (0, 1), one weight or step serves
    // every axis, an empty list means ones.
    let x = distlops::core::DistributedArray::to_dist(
        comm,
        global::<f64>(&dims, 3).view(),
        &Layout::scatter(&dims, 0, p).unwrap(),
    )
    .unwrap();
    let explicit = LaplacianParams {
        axes: vec![0, 1],
        weights: vec![2.0, 2.0],
        sampling: vec![0.5, 0.5],
        ..Default::default()
    };
    let short = LaplacianParams {
        weights: vec![2.0],
        sampling: vec![0.5],
        ..Default::default()
    };
    let apply = |params| {
        Laplacian::<f64>::new(comm, &dims, params)
            .unwrap()
            .apply(&x)
            .unwrap()
            .asarray()
    };
    assert_eq!(apply(explicit), apply(short));
    let last = |axis| {
        FirstDerivative::<f64>::new(
            comm,
            &dims,
            FirstDerivativeParams {
                axis,
                ..Default::default()
            },
        )
        .unwrap()
        .apply(&x)
        .unwrap()
        .asarray()
    };
    assert_eq!(last(-1), last(1));
    assert!(matches!(
        FirstDerivative::<f64>::new(
            comm,
            &dims,
            FirstDerivativeParams {
                axis: -3,
                ..Default::default()
            }
        ),
        Err(Error::AxisOutOfRange {
            axis: -3,
            ndim: 2,
            ..
        })
    ));
    assert!(matches!(
        Laplacian::<f64>::new(
            comm,
            &dims,
            LaplacianParams {
                axes: vec![],
                weights: vec![],
                sampling: vec![],
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Laplacian::<f64>::new(comm, &dims, LaplacianParams { axes: vec![0, 3], weights: vec![1.0; 2], sampling: vec![1.0; 2], ..Default::default() }),
        Err(Error::AxisOutOfRange { axis: 3, ndim: 2, ref call }) if call == "Laplacian"
    ));
    assert!(matches!(
        Gradient::<f64>::new(
            comm,
            &dims,
            GradientParams {
                sampling: vec![1.0, 1.0, 1.0],
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Gradient::<f64>::new(
            comm,
            &[],
            GradientParams {
                sampling: vec![1.0],
                ..Default::default()
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    // A vector of another layout.
    let op = FirstDerivative::<f64>::new(
        comm,
        &dims,
        FirstDerivativeParams {
            axis: 1,
            kind: Forward,
            ..Default::default()
        },
    )
    .unwrap();
    let wrong = Layout::scatter(&dims, 1, p).unwrap();
    let x = DistVector::Array(DistributedArray::zeros(comm, &wrong).unwrap());
    let mut y = op.new_range_vector().unwrap();
    assert!(matches!(
        op.matvec(x.view(), &mut y),
        Err(Error::LayoutMismatch(_))
    ));
    let g = Gradient::<f64>::new(
        comm,
        &dims,
        GradientParams {
            sampling: vec![1.0],
            kind: Forward,
            ..Default::default()
        },
    )
    .unwrap();
    let mut gx = g.new_domain_vector().unwrap();
    assert!(matches!(
        g.rmatvec(y.view(), &mut gx),
        Err(Error::LayoutMismatch(_))
    ));
    // Every rank got here.
    assert_eq!(
        comm.all_reduce(1usize, distlops::core::ReduceOp::Sum),
        comm.size()
    );
}
