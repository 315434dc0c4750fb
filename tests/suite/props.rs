//! Property tests (proptest), driven in lockstep on every rank: the same deterministic RNG on every
//! rank generates the same cases, every case runs on a sub-communicator of a random size, and the
//! pass/fail outcome is agreed over all ranks before it is returned to proptest, so shrinking
//! takes the same path everywhere. Bodies never panic: they report failures as `Err`.

use super::check::{block, ref_norm};
use super::util::{global, TestScalar};
use distlops::core::{
    Communicator, Complex64, DistributedArray, Layout, NormOrd, Partition, RealScalar, ReduceOp,
};
use ndarray::{ArrayD, Axis, IxDyn, Slice};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// One generated case: a rank count, a global shape, axes, a partition, counts and ghost widths.
#[derive(Debug, Clone)]
struct Case {
    /// Ranks taking part (the first `p` ranks of the communicator).
    p: usize,
    shape: Vec<usize>,
    axis: usize,
    axis2: usize,
    /// 0: balanced Scatter, 1: Scatter with random counts, 2: Broadcast, 3: UnsafeBroadcast.
    part: u8,
    cuts: Vec<u16>,
    cuts2: Vec<u16>,
    front: usize,
    back: usize,
    seed: u64,
}

fn cases(size: usize) -> impl Strategy<Value = Case> {
    (
        (
            1..=size,
            prop::collection::vec(0usize..9, 1..=3),
            0usize..3,
            0usize..3,
            0u8..4,
        ),
        (
            prop::collection::vec(any::<u16>(), 4),
            prop::collection::vec(any::<u16>(), 4),
            0usize..10,
            0usize..10,
            any::<u64>(),
        ),
    )
        .prop_map(
            |((p, shape, a, b, part), (cuts, cuts2, front, back, seed))| {
                let nd = shape.len();
                Case {
                    p,
                    axis: a % nd,
                    axis2: b % nd,
                    shape,
                    part,
                    cuts,
                    cuts2,
                    front,
                    back,
                    seed,
                }
            },
        )
}

/// Counts summing to `n` over `p` ranks from the generated cut points.
fn counts_from(cuts: &[u16], n: usize, p: usize) -> Vec<usize> {
    let mut c: Vec<usize> = cuts[..p - 1]
        .iter()
        .map(|&c| c as usize % (n + 1))
        .collect();
    c.sort_unstable();
    c.push(n);
    let mut prev = 0;
    c.iter()
        .map(|&x| {
            let d = x - prev;
            prev = x;
            d
        })
        .collect()
}

fn runner() -> TestRunner {
    TestRunner::new_with_rng(
        Config {
            cases: 32,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

type Outcome = Result<(), String>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)*) => {
        let ok: bool = $cond;
        if !ok {
            return Err(format!($($fmt)*));
        }
    };
}

/// Runs `body` on the first `case.p` ranks for every generated case, agreeing on the outcome;
/// panics (on every rank) if the property fails.
fn run_property(comm: &Communicator, name: &str, body: impl Fn(&Communicator, &Case) -> Outcome) {
    if let Err(e) = try_property(comm, body) {
        panic!("{name}: {e}");
    }
}

/// As [`run_property`], returning the (shrunk) failure instead of panicking.
fn try_property(comm: &Communicator, body: impl Fn(&Communicator, &Case) -> Outcome) -> Outcome {
    let mut runner = runner();
    let result = runner.run(&cases(comm.size()), |case| {
        let inside = comm.rank() < case.p;
        // Collective over the whole communicator; ranks outside the group only agree on the flag.
        let sub = comm
            .split(usize::from(inside))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let local = if inside {
            body(&sub, &case).map_err(|e| format!("rank {}: {e}", comm.rank()))
        } else {
            Ok(())
        };
        let failed = comm.all_reduce(u8::from(local.is_err()), ReduceOp::Max);
        if failed != 0 {
            return Err(TestCaseError::fail(
                local
                    .err()
                    .unwrap_or_else(|| "failed on another rank".to_string()),
            ));
        }
        Ok(())
    });
    result.map_err(|e| e.to_string())
}

fn layout_of(case: &Case, p: usize) -> Layout {
    let n = case.shape[case.axis];
    match case.part {
        0 => Layout::scatter(&case.shape, case.axis, p).unwrap(),
        1 => Layout::with_counts(&case.shape, case.axis, &counts_from(&case.cuts, n, p)).unwrap(),
        2 => Layout::new(&case.shape, case.axis, Partition::Broadcast, p).unwrap(),
        _ => Layout::new(&case.shape, case.axis, Partition::UnsafeBroadcast, p).unwrap(),
    }
}

/// A Scatter layout along the case's axis with its random counts.
fn scatter_of(case: &Case, p: usize) -> Layout {
    Layout::with_counts(
        &case.shape,
        case.axis,
        &counts_from(&case.cuts, case.shape[case.axis], p),
    )
    .unwrap()
}

fn roundtrip<T: TestScalar>(comm: &Communicator, case: &Case) -> Outcome {
    let (p, rank) = (comm.size(), comm.rank());
    let g = global::<T>(&case.shape, case.seed);
    let l = layout_of(case, p);
    let x = DistributedArray::to_dist(comm, g.view(), &l).map_err(|e| e.to_string())?;
    ensure!(x.asarray() == g, "asarray(to_dist(x)) != x for {l:?}");
    let mine = block(&g, &l, rank);
    ensure!(x.local() == mine.view(), "local block differs for {l:?}");
    let root = case.seed as usize % p;
    let gathered = x.gather(root).map_err(|e| e.to_string())?;
    ensure!(
        gathered == (rank == root).then(|| g.clone()),
        "gather({root}) wrong on rank {rank}"
    );
    let y = DistributedArray::from_local(comm, mine, l.axis(), l.partition())
        .map_err(|e| e.to_string())?;
    ensure!(
        y.layout() == &l,
        "from_local assembled {:?}, expected {l:?}",
        y.layout()
    );
    ensure!(y.asarray() == g, "asarray(from_local) != x");
    Ok(())
}

fn redistribution<T: TestScalar>(comm: &Communicator, case: &Case) -> Outcome {
    let (p, rank) = (comm.size(), comm.rank());
    let g = global::<T>(&case.shape, case.seed);
    let la = scatter_of(case, p);
    let x = DistributedArray::to_dist(comm, g.view(), &la).map_err(|e| e.to_string())?;
    // a -> b -> a
    let y = x.redistribute(case.axis2).map_err(|e| e.to_string())?;
    ensure!(
        y.asarray() == g,
        "redistribute({}) changed the array",
        case.axis2
    );
    ensure!(
        y.local() == block(&g, y.layout(), rank).view(),
        "redistribute block"
    );
    ensure!(
        y.layout() == &Layout::scatter(&case.shape, case.axis2, p).unwrap(),
        "redistribute is not balanced"
    );
    let back = y.redistribute_to(&la).map_err(|e| e.to_string())?;
    ensure!(back.local() == x.local(), "a -> b -> a is not the identity");
    // Random counts on the second axis, and back.
    let lb = Layout::with_counts(
        &case.shape,
        case.axis2,
        &counts_from(&case.cuts2, case.shape[case.axis2], p),
    )
    .unwrap();
    let z = x.redistribute_to(&lb).map_err(|e| e.to_string())?;
    ensure!(
        z.local() == block(&g, &lb, rank).view(),
        "redistribute_to {lb:?}"
    );
    let back = z.redistribute_to(&la).map_err(|e| e.to_string())?;
    ensure!(back.local() == x.local(), "redistribute_to round trip");
    Ok(())
}

fn ghosts<T: TestScalar>(comm: &Communicator, case: &Case) -> Outcome {
    let rank = comm.rank();
    let g = global::<T>(&case.shape, case.seed);
    let l = scatter_of(case, comm.size());
    let x = DistributedArray::to_dist(comm, g.view(), &l).map_err(|e| e.to_string())?;
    let got = x
        .add_ghost_cells(case.front, case.back)
        .map_err(|e| e.to_string())?;
    let (o, c, n) = (l.offset(rank), l.count(rank), case.shape[case.axis]);
    let want = g.slice_axis(
        Axis(case.axis),
        Slice::from(o.saturating_sub(case.front)..(o + c + case.back).min(n)),
    );
    ensure!(
        got == want,
        "ghost cells ({}, {}) with {l:?}",
        case.front,
        case.back
    );
    Ok(())
}

fn reshaping<T: TestScalar>(comm: &Communicator, case: &Case) -> Outcome {
    let g = global::<T>(&case.shape, case.seed);
    let l = layout_of(case, comm.size());
    let x = DistributedArray::to_dist(comm, g.view(), &l).map_err(|e| e.to_string())?;
    let flat = ArrayD::from_shape_vec(IxDyn(&[g.len()]), g.iter().copied().collect()).unwrap();
    let r = x.ravel().map_err(|e| e.to_string())?;
    ensure!(r.asarray() == flat, "ravel is not the C-order flatten");
    ensure!(
        r.local() == block(&flat, r.layout(), comm.rank()).view(),
        "ravel block"
    );
    let to: Vec<usize> = case.shape.iter().rev().copied().collect();
    let want = g.to_shape(IxDyn(&to)).unwrap().to_owned();
    let s = x.reshape(&to, case.axis2).map_err(|e| e.to_string())?;
    ensure!(s.asarray() == want, "reshape to {to:?} axis {}", case.axis2);
    ensure!(
        s.local() == block(&want, s.layout(), comm.rank()).view(),
        "reshape block"
    );
    Ok(())
}

fn reductions<T: TestScalar>(comm: &Communicator, case: &Case) -> Outcome {
    let g = global::<T>(&case.shape, case.seed);
    let h = global::<T>(&case.shape, case.seed ^ 1);
    let l = layout_of(case, comm.size());
    let x = DistributedArray::to_dist(comm, g.view(), &l).map_err(|e| e.to_string())?;
    let y = DistributedArray::to_dist(comm, h.view(), &l).map_err(|e| e.to_string())?;
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-10 * b.abs().max(1.0);
    let vdot: T = g.iter().zip(&h).map(|(&a, &b)| a.conj() * b).sum();
    let got = x.vdot(&y).map_err(|e| e.to_string())?;
    ensure!(
        (got - vdot).abs().to_f64() <= 1e-10 * vdot.abs().to_f64().max(1.0),
        "vdot {got:?} vs {vdot:?}"
    );
    for ord in [
        NormOrd::Zero,
        NormOrd::One,
        NormOrd::Two,
        NormOrd::P(3.0),
        NormOrd::Inf,
    ] {
        let got = x.norm(ord).map_err(|e| e.to_string())?.to_f64();
        let want = ref_norm(g.iter().copied(), ord);
        ensure!(close(got, want), "norm {ord:?}: {got} vs {want}");
    }
    Ok(())
}

fn both(
    comm: &Communicator,
    name: &str,
    f64_body: fn(&Communicator, &Case) -> Outcome,
    c64_body: fn(&Communicator, &Case) -> Outcome,
) {
    run_property(comm, name, |c, case| {
        f64_body(c, case)?;
        c64_body(c, case)
    });
}

pub fn prop_to_dist_asarray_roundtrip(comm: &Communicator) {
    both(
        comm,
        "to_dist/asarray",
        roundtrip::<f64>,
        roundtrip::<Complex64>,
    );
}

pub fn prop_redistribute_roundtrip(comm: &Communicator) {
    both(
        comm,
        "redistribute",
        redistribution::<f64>,
        redistribution::<Complex64>,
    );
}

pub fn prop_ghost_cells(comm: &Communicator) {
    both(comm, "ghost cells", ghosts::<f64>, ghosts::<Complex64>);
}

pub fn prop_ravel_reshape(comm: &Communicator) {
    both(
        comm,
        "ravel/reshape",
        reshaping::<f64>,
        reshaping::<Complex64>,
    );
}

pub fn prop_dot_norm(comm: &Communicator) {
    both(comm, "dot/norm", reductions::<f64>, reductions::<Complex64>);
}

/// The harness itself: a property that fails on one rank only must fail (after shrinking in
/// lockstep) on every rank, rather than hang or pass.
pub fn prop_failure_is_agreed(comm: &Communicator) {
    let outcome = try_property(comm, |c, case| {
        // Fails on the last rank of the group whenever the array has more than 5 elements.
        if c.rank() == c.size() - 1 && case.shape.iter().product::<usize>() > 5 {
            Err("deliberate".into())
        } else {
            Ok(())
        }
    });
    let err = outcome.expect_err("the deliberate failure was not reported");
    // Shrinking converged to the same minimal case on every rank.
    let at = err
        .find("minimal failing input")
        .unwrap_or_else(|| panic!("{err}"));
    let minimal = &err[at..];
    let h = minimal.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    assert_eq!(
        comm.all_reduce(h, ReduceOp::Max),
        comm.all_reduce(h, ReduceOp::Min),
        "ranks shrank to different cases: {minimal}"
    );
    // Every rank reached this point, with a failure.
    assert_eq!(comm.all_reduce(1usize, ReduceOp::Sum), comm.size());
}
