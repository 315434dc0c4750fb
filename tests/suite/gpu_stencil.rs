//! The distributed finite-difference operators (FirstDerivative, SecondDerivative, Laplacian,
//! Gradient) on engine `E` (`to_engine`): forward and adjoint bit for bit against the same
//! operator on the host (whose values the `derivatives` suite checks against PyLops' serial
//! operators; the stencil kernels compute the same operations on every engine), and dot tests
//! on the engine; f32, f64, Complex32 and Complex64; 1-D to 3-D shapes that no rank count
//! divides; every kind, order, edge flag and axis; layouts distributed along the first and the
//! last axis with balanced counts and with thin and empty ranks (ghost slabs from several ranks),
//! and along a middle axis with ranks thinner than the stencil's reach. Outputs start as NaN, so
//! an element left unwritten fails. The Host instantiation runs the operators moved to the host;
//! the `Cuda` one on the (emulated) device. (`Halo`: `gpu_halo`.)

use super::derivatives::{
    describe, first_derivative_cases, gradient_cases, laplacian_cases, second_derivative_cases,
    thin_counts, thin_middle_layout, vector, Case,
};
use super::engines::{same_bits, TestEngine};
use super::util::{global, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    Communicator, Complex32, Complex64, DistVector, FullEngine, Host, Layout, RealScalar,
    StackedDistributedArray, Vector,
};
use distlops::operators::local::DerivativeKind;
use distlops::operators::{
    FirstDerivative, FirstDerivativeParams, Gradient, GradientParams, Laplacian, LaplacianParams,
    SecondDerivative, SecondDerivativeParams,
};
use ndarray::ArrayD;

/// A host vector on `engine` (the same structure).
fn on<T: TestScalar, E: FullEngine>(v: &DistVector<T>, engine: &E) -> DistVector<T, E> {
    match v {
        DistVector::Array(a) => DistVector::Array(a.to_engine(engine).unwrap()),
        DistVector::Stacked(s) => DistVector::Stacked(
            StackedDistributedArray::new(s.parts().iter().map(|p| on(p, engine)).collect())
                .unwrap(),
        ),
    }
}

/// `y = A x` (or `A^H x`) into a vector of the output space on `engine` filled with NaN first,
/// flattened (collective).
fn product<T: TestScalar, E: FullEngine>(
    engine: &E,
    op: &dyn LinearOperator<T, E>,
    adjoint: bool,
    x: &DistVector<T, E>,
) -> ArrayD<T> {
    let mut y = if adjoint {
        op.new_domain_vector_on(engine)
    } else {
        op.new_range_vector_on(engine)
    }
    .unwrap();
    y.fill(T::from_f64(f64::NAN));
    if adjoint {
        op.rmatvec(x.view(), &mut y).unwrap();
    } else {
        op.matvec(x.view(), &mut y).unwrap();
    }
    y.asarray()
}

/// The engine operator `dev` against its host twin `host` (domain: arrays of `dims`; range:
/// `nout` of them), forward and adjoint bit for bit, and a dot test on the engine.
fn compare<T: TestScalar, E: FullEngine>(
    comm: &Communicator,
    engine: &E,
    host: &dyn LinearOperator<T>,
    dev: &dyn LinearOperator<T, E>,
    (dims, nout): (&[usize], usize),
    what: &str,
) {
    let what = format!("{what} on {} ({})", E::NAME, T::SUFFIX);
    assert_eq!(dev.domain(), host.domain(), "{what}: domain");
    assert_eq!(dev.range(), host.range(), "{what}: range");
    let xg = global::<T>(dims, 7);
    let yg: Vec<ArrayD<T>> = (0..nout)
        .map(|k| global::<T>(dims, 11 + k as u64))
        .collect();
    let x = vector(comm, host.domain(), std::slice::from_ref(&xg));
    let y = vector(comm, host.range(), &yg);
    let (xd, yd) = (on(&x, engine), on(&y, engine));
    for (adjoint, input, dinput) in [(false, &x, &xd), (true, &y, &yd)] {
        let want = product::<T, Host>(&Host, host, adjoint, input);
        let got = product(engine, dev, adjoint, dinput);
        let dir = if adjoint { "adjoint" } else { "forward" };
        assert!(
            got.iter().all(|v| v.re().to_f64().is_finite()),
            "{what}: {dir} left an element unwritten"
        );
        assert!(
            same_bits(&got, &want),
            "{what}: {dir} differs from the host"
        );
    }
    let d = dottest(dev, &xd, &yd).unwrap();
    assert!(d.passes(T::TOL), "{what}: dot test {d:?}");
}

/// Every case of `cases`, built on the host by `build` and moved to engine `E`, against the host
/// operator (range: `nout(dims)` arrays).
fn each_case<
    P: Clone,
    T: TestScalar,
    E: TestEngine,
    O: LinearOperator<T>,
    D: LinearOperator<T, E>,
>(
    comm: &Communicator,
    cases: Vec<Case<P>>,
    build: impl Fn(&Layout, P) -> O,
    to_engine: impl Fn(&O, &E) -> D,
    nout: impl Fn(&[usize]) -> usize,
) {
    let engine = E::for_rank(comm);
    for (dims, layout, params, what) in cases {
        let host = build(&layout, params);
        let dev = to_engine(&host, &engine);
        compare(comm, &engine, &host, &dev, (dims, nout(dims)), &what);
    }
}

fn first_derivative_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    each_case::<_, T, E, _, _>(
        comm,
        first_derivative_cases(comm.size()),
        |l, p| FirstDerivative::<T>::with_layout(comm, l, p).unwrap(),
        |op, e| op.to_engine(e).unwrap(),
        |_| 1,
    );
}

fn second_derivative_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    each_case::<_, T, E, _, _>(
        comm,
        second_derivative_cases(comm.size()),
        |l, p| SecondDerivative::<T>::with_layout(comm, l, p).unwrap(),
        |op, e| op.to_engine(e).unwrap(),
        |_| 1,
    );
}

fn laplacian_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    each_case::<_, T, E, _, _>(
        comm,
        laplacian_cases(comm.size()),
        |l, p| Laplacian::<T>::with_layout(comm, l, p).unwrap(),
        |op, e| op.to_engine(e).unwrap(),
        |_| 1,
    );
}

fn gradient_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    each_case::<_, T, E, _, _>(
        comm,
        gradient_cases(comm.size()),
        |l, p| Gradient::<T>::with_layout(comm, l, p).unwrap(),
        |op, e| op.to_engine(e).unwrap(),
        <[usize]>::len,
    );
}

/// Ranks thinner than the stencil along a middle axis (most of them empty, ghost slabs of
/// width 2 from two ranks past an empty one), the same engine operator applied repeatedly (its
/// buffers are reused), an operator moved from one engine to another, and bad input an error on
/// every rank.
fn thin_ranks_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let p = comm.size();
    let (dims, layout) = thin_middle_layout(p);
    let what = format!("thin ranks {}", describe(&layout));
    for (kind, order) in [(DerivativeKind::Centered, 5), (DerivativeKind::Forward, 3)] {
        let params = FirstDerivativeParams {
            axis: 1,
            kind,
            edge: true,
            order,
            ..Default::default()
        };
        let host = FirstDerivative::<T>::with_layout(comm, &layout, params).unwrap();
        let dev = host.to_engine(&engine).unwrap();
        for _ in 0..3 {
            let what = format!("FirstDerivative {kind:?} {order}, {what}");
            compare(comm, &engine, &host, &dev, (&dims, 1), &what);
        }
        // Moved on: from the engine back to the host's engine execution, and to the engine again.
        let back = dev.to_engine(&Host).unwrap();
        compare(
            comm,
            &Host,
            &host,
            &back,
            (&dims, 1),
            "FirstDerivative moved to the host",
        );
        let again = back.to_engine(&engine).unwrap();
        compare(
            comm,
            &engine,
            &host,
            &again,
            (&dims, 1),
            "FirstDerivative moved back",
        );
    }
    for edge in [false, true] {
        let params = LaplacianParams {
            axes: vec![0, 1, 2],
            weights: vec![1.0, 2.0, 3.0],
            edge,
            ..Default::default()
        };
        let host = Laplacian::<T>::with_layout(comm, &layout, params).unwrap();
        let dev = host.to_engine(&engine).unwrap();
        let what = format!("Laplacian edge {edge}, {what}");
        compare(comm, &engine, &host, &dev, (&dims, 1), &what);
        let params = GradientParams {
            edge,
            kind: DerivativeKind::Backward,
            ..Default::default()
        };
        let host = Gradient::<T>::with_layout(comm, &layout, params).unwrap();
        let dev = host.to_engine(&engine).unwrap();
        compare(
            comm,
            &engine,
            &host,
            &dev,
            (&dims, 3),
            &format!("Gradient, {what}"),
        );
    }
    // Ranks thin along the first axis too: 1, 0, 1, ... rows.
    let layout = Layout::with_counts(&dims, 0, &thin_counts(dims[0], p, true)).unwrap();
    let params = SecondDerivativeParams {
        axis: 0,
        edge: true,
        ..Default::default()
    };
    let host = SecondDerivative::<T>::with_layout(comm, &layout, params).unwrap();
    let dev = host.to_engine(&engine).unwrap();
    let what = format!("SecondDerivative, {}", describe(&layout));
    compare(comm, &engine, &host, &dev, (&dims, 1), &what);
    // A vector of another layout is an error on every rank, also on the engine.
    let other = Layout::scatter(&dims, 2, p).unwrap();
    let x = vector(
        comm,
        &distlops::core::Space::array(other),
        &[global::<T>(&dims, 3)],
    );
    assert!(
        dev.apply(&on(&x, &engine)).is_err(),
        "{what}: a wrong input"
    );
}

/// Every test of this suite for one engine, in the four dtypes.
macro_rules! all_dtypes {
    ($($name:ident => $body:ident),* $(,)?) => {$(
        pub fn $name<E: TestEngine>(comm: &Communicator) {
            $body::<f32, E>(comm);
            $body::<f64, E>(comm);
            $body::<Complex32, E>(comm);
            $body::<Complex64, E>(comm);
        }
    )*};
}

all_dtypes!(
    first_derivative_all_dtypes => first_derivative_on,
    second_derivative_all_dtypes => second_derivative_on,
    laplacian_all_dtypes => laplacian_on,
    gradient_all_dtypes => gradient_on,
    thin_ranks_all_dtypes => thin_ranks_on,
);
