//! The element-wise and group-wise proximal operators on engine `E` against the same operators on
//! the host, whose values the proximal suite checks against formulas: bit for bit (their maps are
//! the engines' `shrink` and `group_scale` kernels, `Shrink`'s and `GroupScale`'s expressions on
//! every engine), on a plain vector split so that
//! the ranks' blocks differ in length and on a stack of a Scatter and a Broadcast part, all four
//! dtypes: `L1` (soft threshold), `WeightedL1` (per-element thresholds), `L0` (hard threshold),
//! `Bounds`, `Huber` and `L21` (the group scaling of isotropic TV, on a stack and on a plain
//! vector, `sigma` zero and not), `SeparableSum` of `L21`, `L1` and `Bounds` on a nested stack, their `prox` and `proxdual` (a closed form, or Moreau's identity
//! over the engine's own vector updates); values with exact zeros, values exactly at a threshold, and a NaN that must stay a
//! NaN. Then a `WeightedL1` whose weights have another structure: an error on every rank.

use super::check::{dist, expect_err, is_layout_mismatch};
use super::engines::{same_bits, TestEngine};
use super::util::{global, TestScalar};
use distlops::core::{
    Communicator, Complex32, Complex64, DistVector, Engine, Host, Layout, RealScalar,
    StackedDistributedArray, ToEngine,
};
use distlops::solvers::{Bounds, Huber, Proximal, SeparableSum, WeightedL1, L0, L1, L21};
use ndarray::ArrayD;

/// Elements of the plain vector: not divisible by 2, 3 or 4.
const N: usize = 37;

/// `N` values with exact zeros, values exactly at the thresholds below (`0.4`, `sqrt(2 0.4 0.5)`
/// for `L0` at `tau = 0.5`: not exactly representable, so its neighbours), and a NaN.
fn values<T: TestScalar>(seed: u64) -> ArrayD<T> {
    let mut x = global::<T>(&[N], seed);
    x[[0]] = T::zero();
    x[[5]] = T::make(0.2, 0.0); // soft at sigma tau = 0.2: exactly at the threshold
    x[[9]] = T::make(-0.2, 0.0);
    x[[13]] = T::make(0.75, 0.0); // the box's upper bound
    x[[17]] = T::make(f64::NAN, 0.0);
    x[[21]] = T::make(-0.0, 0.0);
    x
}

/// The vectors the operators run on: plain (split along its only axis) and a stack of a Scatter
/// and a Broadcast part, of [`values`] (or, with `weights`, of non-negative values with zeros
/// and no NaN).
fn vectors<T: TestScalar>(comm: &Communicator, seed: u64, weights: bool) -> Vec<DistVector<T>> {
    let p = comm.size();
    let make = |seed: u64| {
        if weights {
            let mut w = global::<T>(&[N], seed).mapv(|v| T::from_real(v.abs()));
            w[[2]] = T::zero();
            w
        } else {
            values::<T>(seed)
        }
    };
    let scatter = Layout::scatter(&[N], 0, p).unwrap();
    let plain = dist(comm, &make(seed), &scatter);
    let a = dist(comm, &make(seed + 1), &scatter);
    let b = dist(comm, &make(seed + 2), &Layout::broadcast(&[N], p).unwrap());
    let stack = StackedDistributedArray::new(vec![a.into(), b.into()]).unwrap();
    vec![plain.into(), DistVector::Stacked(stack)]
}

/// `f`'s prox and proxdual of `x` on `engine` against the host's, bit for bit.
fn compare<T: TestScalar, E: Engine>(
    engine: &E,
    what: &str,
    host_f: &dyn Proximal<T, Host>,
    dev_f: &dyn Proximal<T, E>,
    x: &DistVector<T>,
) {
    let what = format!("{what} on {} ({})", E::NAME, T::SUFFIX);
    let dev_x = x.to_engine(engine).unwrap();
    for dual in [false, true] {
        let want = if dual {
            host_f.proxdual(x.view(), 0.5)
        } else {
            host_f.prox(x.view(), 0.5)
        }
        .unwrap()
        .asarray();
        let got = if dual {
            dev_f.proxdual(dev_x.view(), 0.5)
        } else {
            dev_f.prox(dev_x.view(), 0.5)
        }
        .unwrap()
        .to_engine(&Host)
        .unwrap()
        .asarray();
        assert!(
            same_bits(&got, &want),
            "{what} (dual {dual}): not the host's bits\n got {got:?}\nwant {want:?}"
        );
        // The NaN stays a NaN (in the plain vector's block and in both parts of the stack).
        assert!(got[[17]].re().to_f64().is_nan(), "{what}: the NaN was lost");
    }
}

fn separable<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    for (k, x) in vectors::<T>(comm, 3, false).iter().enumerate() {
        let what = |name: &str| format!("{name}, vector {k}");
        let l1 = L1 { sigma: 0.4 };
        compare::<T, E>(&engine, &what("L1"), &l1, &l1, x);
        let l0 = L0 { sigma: 0.4 };
        compare::<T, E>(&engine, &what("L0"), &l0, &l0, x);
        let bounds = Bounds {
            lower: -0.3,
            upper: 0.75,
        };
        compare::<T, E>(&engine, &what("Bounds"), &bounds, &bounds, x);
        let huber = Huber { alpha: 0.3 };
        compare::<T, E>(&engine, &what("Huber"), &huber, &huber, x);

        // Weights: the magnitudes of other values, with zeros among them.
        let w = vectors::<T>(comm, 11, true).swap_remove(k);
        let host_w = WeightedL1::new(0.4, w.clone()).unwrap();
        let dev_w = WeightedL1::new(0.4, w.to_engine(&engine).unwrap()).unwrap();
        compare::<T, E>(&engine, &what("WeightedL1"), &host_w, &dev_w, x);
    }
    // L21 on a stack of three parts of one layout (isotropic TV's gradient), and on a plain
    // vector (one part).
    let p = comm.size();
    let scatter = Layout::scatter(&[N], 0, p).unwrap();
    let parts: Vec<DistVector<T>> = (0..3)
        .map(|k| dist(comm, &values::<T>(40 + k), &scatter).into())
        .collect();
    let stack = DistVector::Stacked(StackedDistributedArray::new(parts).unwrap());
    let plain: DistVector<T> = dist(comm, &values::<T>(43), &scatter).into();
    for (name, x) in [("L21, stack", &stack), ("L21, plain", &plain)] {
        for sigma in [0.0, 0.3] {
            let l21 = L21 { sigma };
            compare::<T, E>(&engine, &format!("{name}, sigma {sigma}"), &l21, &l21, x);
        }
    }
    // A separable sum on a nested stack: L21 on the stack of three parts, L1 and Bounds on
    // plain parts.
    let third: DistVector<T> = dist(comm, &values::<T>(44), &scatter).into();
    let parts = vec![stack, plain, third];
    let nested = DistVector::Stacked(StackedDistributedArray::new(parts).unwrap());
    let (host_sum, dev_sum) = (separable_sum::<T, Host>(), separable_sum::<T, E>());
    compare::<T, E>(&engine, "SeparableSum", &host_sum, &dev_sum, &nested);
    // Weights of another structure than x (a stack for a plain vector): an error on every rank,
    // on the engine too.
    let w = vectors::<T>(comm, 11, true).swap_remove(1);
    let dev_w = WeightedL1::new(0.4, w.to_engine(&engine).unwrap()).unwrap();
    let x = vectors::<T>(comm, 3, false)
        .swap_remove(0)
        .to_engine(&engine)
        .unwrap();
    expect_err(
        comm,
        dev_w.prox(x.view(), 0.5),
        is_layout_mismatch,
        "weights of another structure",
    );
}

/// `L21 + L1 + Bounds`, each on its part of a stack.
fn separable_sum<T: TestScalar, E: Engine>() -> SeparableSum<'static, T, E> {
    let bounds = Bounds {
        lower: -0.3,
        upper: 0.75,
    };
    SeparableSum::new(vec![
        Box::new(L21 { sigma: 0.3 }),
        Box::new(L1 { sigma: 0.4 }),
        Box::new(bounds),
    ])
    .unwrap()
}

/// Every dtype.
pub fn separable_all_dtypes<E: TestEngine>(comm: &Communicator) {
    separable::<f64, E>(comm);
    separable::<Complex64, E>(comm);
    separable::<f32, E>(comm);
    separable::<Complex32, E>(comm);
}
