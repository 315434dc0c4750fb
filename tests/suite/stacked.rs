//! Stacked vectors (flat and nested, parts with different layouts) and the `Vector` trait,
//! against the serial concatenation of the parts.

use super::check::*;
use super::util::{assert_close, assert_close_scalar, global, Rng, TestScalar};
use distlops::core::{
    Communicator, Complex64, DistVector, DistributedArray, Layout, Partition, RealScalar,
    StackedDistributedArray, Vector,
};
use ndarray::{Array1, ArrayD, IxDyn};

/// Three parts with different layouts: a balanced 1-D Scatter, a 2-D array scattered along axis 1
/// with uneven counts, and a small Broadcast array. `seed` varies the values.
fn parts<T: TestScalar>(
    comm: &Communicator,
    seed: u64,
) -> (Vec<DistributedArray<T>>, Vec<ArrayD<T>>) {
    let p = comm.size();
    let ga = with_zeros(global::<T>(&[13], seed), 5);
    let gb = with_zeros(global::<T>(&[11, 7], seed + 1), 6);
    let gc = global::<T>(&[5, 3], seed + 2);
    let la = Layout::scatter(&[13], 0, p).unwrap();
    let lb = Layout::with_counts(&[11, 7], 1, &random_counts(7, p, 5)).unwrap();
    let lc = Layout::broadcast(&[5, 3], p).unwrap();
    let arrays = vec![
        dist(comm, &ga, &la),
        dist(comm, &gb, &lb),
        dist(comm, &gc, &lc),
    ];
    (arrays, vec![ga, gb, gc])
}

fn concat<T: Clone>(globals: &[&ArrayD<T>]) -> Array1<T> {
    Array1::from(
        globals
            .iter()
            .flat_map(|g| g.iter().cloned())
            .collect::<Vec<_>>(),
    )
}

/// `[a, b]` and `[a, [b, c]]`, with their serial vectors.
#[allow(clippy::type_complexity)]
fn stacks<T: TestScalar>(
    comm: &Communicator,
    seed: u64,
) -> (
    StackedDistributedArray<T>,
    Array1<T>,
    StackedDistributedArray<T>,
    Array1<T>,
) {
    let (arrays, g) = parts::<T>(comm, seed);
    let [a, b, c]: [DistributedArray<T>; 3] = arrays.try_into().unwrap();
    let flat = StackedDistributedArray::from_arrays(vec![a.clone(), b.clone()]).unwrap();
    let inner = StackedDistributedArray::from_arrays(vec![b, c]).unwrap();
    let nested =
        StackedDistributedArray::new(vec![DistVector::Array(a), DistVector::Stacked(inner)])
            .unwrap();
    (
        flat,
        concat(&[&g[0], &g[1]]),
        nested,
        concat(&[&g[0], &g[1], &g[2]]),
    )
}

fn reductions<T: TestScalar>(comm: &Communicator) {
    let (fx, fgx, nx, ngx) = stacks::<T>(comm, 500);
    let (fy, fgy, ny, ngy) = stacks::<T>(comm, 510);
    assert_eq!((fx.len(), nx.len(), fx.is_empty()), (2, 2, false));
    assert!(nx.parts()[1].as_stacked().is_some() && nx.parts()[0].as_array().is_some());
    for (what, x, gx, y, gy) in [
        ("flat", &fx, &fgx, &fy, &fgy),
        ("nested", &nx, &ngx, &ny, &ngy),
    ] {
        assert_eq!(x.asarray(), *gx, "{what} asarray");
        assert_eq!(Vector::global_len(x), gx.len(), "{what} global_len");
        let dot: T = gx.iter().zip(gy).map(|(&a, &b)| a * b).sum();
        let vdot: T = gx.iter().zip(gy).map(|(&a, &b)| a.conj() * b).sum();
        assert_close_scalar(Vector::dot(x, y).unwrap(), dot, &format!("{what} dot"));
        assert_close_scalar(Vector::vdot(x, y).unwrap(), vdot, &format!("{what} vdot"));
        for &ord in ORDS {
            let got = Vector::norm(x, ord).unwrap().to_f64();
            let expected = ref_norm(gx.iter().copied(), ord);
            assert_real_close(
                got,
                expected,
                T::TOL * 100.0,
                &format!("{what} norm {ord:?}"),
            );
        }
        // The same through DistVector.
        let dx = DistVector::Stacked(x.clone());
        let dy = DistVector::Stacked(y.clone());
        assert_close_scalar(
            dx.vdot(&dy).unwrap(),
            vdot,
            &format!("{what} DistVector vdot"),
        );
        assert_eq!(dx.asarray(), gx.clone().into_dyn());
        assert_eq!(dx.global_len(), gx.len());
        for &ord in ORDS {
            let got = dx.norm(ord).unwrap().to_f64();
            assert_real_close(
                got,
                ref_norm(gx.iter().copied(), ord),
                T::TOL * 100.0,
                &format!("{what} DistVector norm {ord:?}"),
            );
        }
    }
}

pub fn stacked_dot_vdot_norm(comm: &Communicator) {
    reductions::<f64>(comm);
    reductions::<Complex64>(comm);
}

/// Runs every `Vector` operation on `x` and `y` and compares with the serial vectors.
fn vector_ops<T: TestScalar, V: Vector<T>>(
    x: &V,
    y: &V,
    gx: &ArrayD<T>,
    gy: &ArrayD<T>,
    flat: impl Fn(&V) -> ArrayD<T>,
    what: &str,
) {
    let (alpha, beta) = (T::make(0.5, -1.5), T::make(-2.0, 0.25));
    assert_eq!(&flat(x), gx, "{what}: setup");
    let mut z = y.clone();
    z.axpy(alpha, x).unwrap();
    assert_close(
        &flat(&z),
        &(gy + &gx.mapv(|v| alpha * v)),
        &format!("{what} axpy"),
    );
    let mut z = y.clone();
    z.axpby(alpha, x, beta).unwrap();
    assert_close(
        &flat(&z),
        &(&gx.mapv(|v| alpha * v) + &gy.mapv(|v| beta * v)),
        &format!("{what} axpby"),
    );
    let mut z = x.clone();
    z.scale(beta);
    assert_close(&flat(&z), &gx.mapv(|v| beta * v), &format!("{what} scale"));
    let mut z = y.zeros_like();
    assert_eq!(
        flat(&z),
        ArrayD::zeros(IxDyn(gx.shape())),
        "{what} zeros_like"
    );
    z.copy_from(x).unwrap();
    assert_eq!(&flat(&z), gx, "{what} copy_from");
    assert_eq!(flat(&x.conj()), gx.mapv(|v| v.conj()), "{what} conj");
    let mut z = x.clone();
    z.fill(alpha);
    assert_eq!(
        flat(&z),
        ArrayD::from_elem(IxDyn(gx.shape()), alpha),
        "{what} fill"
    );
    assert_eq!(x.global_len(), gx.len(), "{what} global_len");
    // The operands were not touched.
    assert_eq!(&flat(x), gx, "{what}: x changed");
    assert_eq!(&flat(y), gy, "{what}: y changed");
}

fn vector_trait<T: TestScalar>(comm: &Communicator) {
    let (fx, fgx, nx, ngx) = stacks::<T>(comm, 520);
    let (fy, fgy, ny, ngy) = stacks::<T>(comm, 530);
    let (fgx, fgy, ngx, ngy) = (
        fgx.into_dyn(),
        fgy.into_dyn(),
        ngx.into_dyn(),
        ngy.into_dyn(),
    );
    let sflat = |s: &StackedDistributedArray<T>| s.asarray().into_dyn();
    vector_ops(&fx, &fy, &fgx, &fgy, sflat, "flat stack");
    vector_ops(&nx, &ny, &ngx, &ngy, sflat, "nested stack");
    let dflat = |d: &DistVector<T>| {
        d.asarray()
            .into_shape_with_order(IxDyn(&[d.global_len()]))
            .unwrap()
    };
    vector_ops(
        &DistVector::Stacked(nx.clone()),
        &DistVector::Stacked(ny.clone()),
        &ngx,
        &ngy,
        dflat,
        "DistVector::Stacked",
    );
    // DistVector::Array dispatches to the plain array.
    let (ax, gax) = parts::<T>(comm, 540);
    let (ay, gay) = parts::<T>(comm, 550);
    for i in 0..3 {
        let flatten = |g: &ArrayD<T>| {
            ArrayD::from_shape_vec(IxDyn(&[g.len()]), g.iter().copied().collect()).unwrap()
        };
        let (gx, gy) = (flatten(&gax[i]), flatten(&gay[i]));
        vector_ops(
            &DistVector::Array(ax[i].clone()),
            &DistVector::Array(ay[i].clone()),
            &gx,
            &gy,
            dflat,
            &format!("DistVector::Array part {i}"),
        );
        let aflat = |a: &DistributedArray<T>| flatten(&a.asarray());
        vector_ops(
            &ax[i],
            &ay[i],
            &gx,
            &gy,
            aflat,
            &format!("DistributedArray part {i}"),
        );
        let d = DistVector::from(ax[i].clone());
        assert_close_scalar(
            d.dot(&DistVector::from(ay[i].clone())).unwrap(),
            gx.iter().zip(&gy).map(|(&a, &b)| a * b).sum(),
            "DistVector::Array dot",
        );
        // The zeros_like of a DistVector keeps the part's layout.
        match Vector::zeros_like(&d) {
            DistVector::Array(z) => assert_eq!(z.layout(), ax[i].layout()),
            DistVector::Stacked(_) => panic!("zeros_like changed the kind of vector"),
        }
    }
    // Nested zeros_like keeps the structure and the part layouts.
    let z = Vector::zeros_like(&nx);
    let inner = z.parts()[1].as_stacked().expect("nested part");
    assert_eq!(
        inner.parts()[0].as_array().unwrap().layout(),
        ny.parts()[1].as_stacked().unwrap().parts()[0]
            .as_array()
            .unwrap()
            .layout()
    );
    assert_eq!(
        inner.parts()[1].as_array().unwrap().partition(),
        Partition::Broadcast
    );
    // parts_mut writes through.
    let mut w = fx.clone();
    if let DistVector::Array(a) = &mut w.parts_mut()[0] {
        a.fill(T::make(1.0, 0.0));
    }
    let mut expected = fgx.clone();
    expected
        .iter_mut()
        .take(13)
        .for_each(|v| *v = T::make(1.0, 0.0));
    assert_eq!(w.asarray().into_dyn(), expected);
}

pub fn stacked_vector_trait(comm: &Communicator) {
    vector_trait::<f64>(comm);
    vector_trait::<Complex64>(comm);
}

/// `dot`, `axpy` and `copy_from` between `x` and `other`, of different structures, all fail with
/// a layout mismatch (`what` names the pair).
fn expect_incompatible<V: Vector<f64>>(comm: &Communicator, x: &V, other: &V, what: &str) {
    expect_err(
        comm,
        x.dot(other),
        is_layout_mismatch,
        &format!("dot {what}"),
    );
    let mut z = x.clone();
    expect_err(
        comm,
        z.axpy(1.0, other),
        is_layout_mismatch,
        &format!("axpy {what}"),
    );
    expect_err(
        comm,
        z.copy_from(other),
        is_layout_mismatch,
        &format!("copy_from {what}"),
    );
}

pub fn stacked_structure_mismatch(comm: &Communicator) {
    let (fx, _, nx, _) = stacks::<f64>(comm, 560);
    let (arrays, _) = parts::<f64>(comm, 570);
    let three = StackedDistributedArray::from_arrays(arrays.clone()).unwrap();
    // Different numbers of parts.
    expect_incompatible(comm, &fx, &three, "2 vs 3 parts");
    let mut z = fx.clone();
    // Same number of parts, different layouts.
    let swapped =
        StackedDistributedArray::from_arrays(vec![arrays[1].clone(), arrays[0].clone()]).unwrap();
    expect_err(
        comm,
        Vector::vdot(&fx, &swapped),
        is_layout_mismatch,
        "vdot with swapped parts",
    );
    expect_err(
        comm,
        z.axpby(1.0, &swapped, 2.0),
        is_layout_mismatch,
        "axpby with swapped parts",
    );
    // Flat vs nested with the same number of parts.
    expect_err(
        comm,
        Vector::dot(&fx, &nx),
        is_layout_mismatch,
        "flat vs nested",
    );
    // A plain array against a stack.
    let a = DistVector::Array(arrays[0].clone());
    let s = DistVector::Stacked(fx.clone());
    expect_incompatible(comm, &a, &s, "array vs stack");
    // Two plain arrays with different layouts.
    let b = DistVector::Array(arrays[1].clone());
    expect_err(comm, a.vdot(&b), is_layout_mismatch, "array vs array");
    // An empty stack.
    expect_err(
        comm,
        StackedDistributedArray::<f64>::new(vec![]),
        is_invalid_argument,
        "empty stack",
    );
    // A random mix of valid operations afterwards still agrees across ranks.
    let mut rng = Rng::new(1);
    let alpha = rng.uniform();
    let mut y = fx.clone();
    y.scale(alpha);
    let d = Vector::dot(&fx, &y).unwrap();
    assert_same_everywhere(comm, &[d], "dot after errors");
}
