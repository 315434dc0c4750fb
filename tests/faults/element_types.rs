//! Element types that differ between ranks: one rank holds its vector or operator in `f32` (or
//! complex) where the others hold `f64`. The layouts agree, so only the fingerprint's element
//! type can tell: every rank must fail with a layout mismatch naming the types (never reduce an
//! `f32` buffer against an `f64` one, which computes a wrong norm or dies in a bare MPI error).

use crate::fixtures::*;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{
    Communicator, Complex64, DistVector, DistributedArray, NormOrd, Result, Vector,
};
use distlops::ndarray::ArrayD;
use distlops::solvers::cgls;

/// [`data`] in `f32`.
fn data32() -> ArrayD<f32> {
    data(&SHAPE).mapv(|v| v as f32)
}

/// Checks that a mismatch `out` names the element types of both sides.
fn names_types<R: std::fmt::Debug>(comm: &Communicator, out: Result<R>, what: &str) {
    let text = fails_everywhere(comm, out, Expect::Mismatch, what);
    assert!(
        text.contains("f32") && text.contains("f64"),
        "{what}: the element types are not named: {text}"
    );
}

/// Rank `c` takes the dot product of an `f32` array, the others of an `f64` array.
pub fn dot_f32_on_one_rank(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let out = if comm.rank() == c {
        let x = local_dist(comm, &data32(), &layout);
        x.dot(&x).map(f64::from)
    } else {
        let x = local_dist(comm, &data(&SHAPE), &layout);
        x.dot(&x)
    };
    names_types(comm, out, "dot of f32 and f64 arrays");
    Ok(())
}

/// Rank `c` takes the 1-norm of an `f32` array.
pub fn norm_f32_on_one_rank(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let out = if comm.rank() == c {
        local_dist(comm, &data32(), &layout)
            .norm(NormOrd::One)
            .map(f64::from)
    } else {
        local_dist(comm, &data(&SHAPE), &layout).norm(NormOrd::One)
    };
    names_types(comm, out, "norm of f32 and f64 arrays");
    Ok(())
}

/// Rank `c` runs CGLS on an `f32` operator and vectors, the others on `f64` ones: the set-up
/// agreement on the operator's spaces tells them apart.
pub fn cgls_f32_on_one_rank(comm: &Communicator, c: usize) -> Outcome {
    let out = if comm.rank() == c {
        let op = derivative32(comm)?;
        let y = DistVector::Array(DistributedArray::<f32>::full(comm, &balanced(comm)?, 1.0)?);
        cgls(&op, &y, None, cgls_params(), None).map(|s| f64::from(s.r1norm))
    } else {
        let op = derivative(comm, &balanced(comm)?, 0)?;
        let y = DistVector::Array(DistributedArray::<f64>::full(comm, &balanced(comm)?, 1.0)?);
        cgls(&op, &y, None, cgls_params(), None).map(|s| s.r1norm)
    };
    names_types(comm, out, "cgls on f32 and f64 operators");
    Ok(())
}

/// The derivative of [`derivative`] in `f32`.
fn derivative32(comm: &Communicator) -> Result<distlops::operators::FirstDerivative<f32>> {
    distlops::operators::FirstDerivative::with_layout(
        comm,
        &balanced(comm)?,
        distlops::operators::FirstDerivativeParams {
            axis: 0,
            kind: distlops::operators::DerivativeKind::Forward,
            ..Default::default()
        },
    )
}

/// Rank `c` applies a complex operator to a complex vector, the others a real one to a real
/// vector: the checked product's agreement tells them apart.
pub fn apply_complex_on_one_rank(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let out = if comm.rank() == c {
        let d = distlops::operators::FirstDerivative::<Complex64>::with_layout(
            comm,
            &layout,
            distlops::operators::FirstDerivativeParams {
                axis: 0,
                ..Default::default()
            },
        )?;
        let x = DistributedArray::<Complex64>::full(comm, &layout, Complex64::new(1.0, 1.0))?;
        d.apply(&x).map(|y| y.global_len())
    } else {
        let d = derivative(comm, &layout, 0)?;
        d.apply(&plain(comm, &layout)).map(|y| y.global_len())
    };
    let text = fails_everywhere(
        comm,
        out,
        Expect::Mismatch,
        "apply of c64 and f64 operators",
    );
    assert!(
        text.contains("c64") && text.contains("f64"),
        "the element types are not named: {text}"
    );
    Ok(())
}

/// Rank `c` takes `norm2` (which cannot return an error) of an `f32` array: a panic on every
/// rank that names the layouts.
pub fn norm2_f32_on_one_rank(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    if comm.rank() == c {
        local_dist(comm, &data32(), &layout).norm2();
    } else {
        local_dist(comm, &data(&SHAPE), &layout).norm2();
    }
    Ok(())
}
