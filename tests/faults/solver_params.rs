//! Solver parameters that differ between ranks: one rank asks for another variant, iteration
//! count, tolerance, damping or threshold than the others. Each rank's call is valid on its own,
//! but the ranks would make different collective calls (one stops earlier, one reduces once per
//! step where the others reduce twice) and hang or compute different answers. The solver's
//! set-up agreement carries the parameters: every rank must fail with `InvalidArgument` naming
//! the parameter. A parameter that is invalid on one rank only is that rank's error.

use crate::fixtures::*;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::Communicator;
use distlops::solvers::{
    cg, cgls, fista, ista, lsqr, power_iteration, CgVariant, IstaParams, LsqrParams,
    PowerIterationParams, Threshold,
};

/// Rank `c` runs CGLS with the pipelined recurrences, the others with the classic ones.
pub fn cgls_variant_differs(comm: &Communicator, c: usize) -> Outcome {
    let mut params = cgls_params();
    params.variant = pick(comm, c, CgVariant::Pipelined, CgVariant::Classic);
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = cgls(&op, &y, None, params, None);
    fails_everywhere(comm, out, Expect::Parameter("variant"), "cgls variant");
    Ok(())
}

/// Rank `c` asks CGLS for one step more.
pub fn cgls_niter_differs(comm: &Communicator, c: usize) -> Outcome {
    let mut params = cgls_params();
    params.niter = pick(comm, c, 5, 4);
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = cgls(&op, &y, None, params, None);
    fails_everywhere(comm, out, Expect::Parameter("niter"), "cgls niter");
    Ok(())
}

/// Rank `c` gives CGLS a tolerance that stops it at once; the others iterate.
pub fn cgls_tol_differs(comm: &Communicator, c: usize) -> Outcome {
    let mut params = cgls_params();
    params.tol = pick(comm, c, 1e3, 0.0);
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = cgls(&op, &y, None, params, None);
    fails_everywhere(comm, out, Expect::Parameter("tol"), "cgls tol");
    Ok(())
}

/// Rank `c` damps (one more reduction per step on that rank), the others do not.
pub fn cgls_damp_differs(comm: &Communicator, c: usize) -> Outcome {
    let mut params = cgls_params();
    params.damp = pick(comm, c, 0.5, 0.0);
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = cgls(&op, &y, None, params, None);
    fails_everywhere(comm, out, Expect::Parameter("damp"), "cgls damp");
    Ok(())
}

/// Rank `c` passes a NaN tolerance: its own error, relayed to the others.
pub fn cgls_tol_nan_on_one_rank(comm: &Communicator, c: usize) -> Outcome {
    let mut params = cgls_params();
    params.tol = pick(comm, c, f64::NAN, 0.0);
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = cgls(&op, &y, None, params, None);
    fails_everywhere(comm, out, Expect::Culprit(c, "tol"), "cgls with a NaN tol");
    Ok(())
}

/// Rank `c` runs CG with the single-reduction recurrences.
pub fn cg_variant_differs(comm: &Communicator, c: usize) -> Outcome {
    let mut params = cg_params();
    params.variant = pick(comm, c, CgVariant::SingleReduction, CgVariant::Classic);
    let op = block_diag(comm, 0)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = cg(&op, &y, None, params, None);
    fails_everywhere(comm, out, Expect::Parameter("variant"), "cg variant");
    Ok(())
}

/// Rank `c` gives CG another tolerance.
pub fn cg_tol_differs(comm: &Communicator, c: usize) -> Outcome {
    let mut params = cg_params();
    params.tol = pick(comm, c, 1e-3, 0.0);
    let op = block_diag(comm, 0)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = cg(&op, &y, None, params, None);
    fails_everywhere(comm, out, Expect::Parameter("tol"), "cg tol");
    Ok(())
}

/// Rank `c` gives LSQR another iteration limit and condition limit.
pub fn lsqr_niter_and_conlim_differ(comm: &Communicator, c: usize) -> Outcome {
    let params = LsqrParams {
        niter: Some(pick(comm, c, 3, 4)),
        conlim: pick(comm, c, 10.0, 1e8),
        ..LsqrParams::default()
    };
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = lsqr(&op, &y, None, params, None);
    let text = fails_everywhere(comm, out, Expect::Parameter("niter"), "lsqr niter");
    assert!(text.contains("conlim"), "conlim is not named: {text}");
    Ok(())
}

/// ISTA parameters for the cases: a few steps with a given step size.
fn ista_params() -> IstaParams {
    IstaParams {
        niter: 4,
        alpha: Some(0.01),
        tol: 0.0,
        ..IstaParams::default()
    }
}

/// Rank `c` runs ISTA with another sparsity weight and thresholding.
pub fn ista_eps_and_threshold_differ(comm: &Communicator, c: usize) -> Outcome {
    let mut params = ista_params();
    params.eps = pick(comm, c, 0.5, 0.1);
    params.threshkind = pick(comm, c, Threshold::Hard, Threshold::Soft);
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = ista(&op, &y, None, params, None);
    let text = fails_everywhere(comm, out, Expect::Parameter("eps"), "ista eps");
    assert!(
        text.contains("threshkind"),
        "threshkind is not named: {text}"
    );
    Ok(())
}

/// Rank `c` runs FISTA with another decay, and estimates the step size with another power
/// iteration (the others' `eigs` differ from its own).
pub fn fista_decay_and_eigs_differ(comm: &Communicator, c: usize) -> Outcome {
    let mut params = ista_params();
    params.alpha = None;
    params.decay = Some(vec![pick(comm, c, 0.5, 1.0); 4]);
    params.eigs.niter = pick(comm, c, 3, 10);
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let out = fista(&op, &y, None, params, None);
    let text = fails_everywhere(comm, out, Expect::Parameter("decay"), "fista decay");
    assert!(text.contains("eigs"), "eigs is not named: {text}");
    Ok(())
}

/// Rank `c` starts the power iteration from another seed.
pub fn power_iteration_seed_differs(comm: &Communicator, c: usize) -> Outcome {
    let params = PowerIterationParams {
        seed: pick(comm, c, 7, 0),
        ..PowerIterationParams::default()
    };
    let op = block_diag(comm, 0)?;
    let out = power_iteration(&op, params).map(|r| r.maxeig);
    fails_everywhere(comm, out, Expect::Parameter("seed"), "power_iteration seed");
    Ok(())
}

/// Rank `c` asks for no power iterations at all: its own error.
pub fn power_iteration_niter_zero_on_one_rank(comm: &Communicator, c: usize) -> Outcome {
    let params = PowerIterationParams {
        niter: pick(comm, c, 0, 10),
        ..PowerIterationParams::default()
    };
    let op = block_diag(comm, 0)?;
    let out = power_iteration(&op, params).map(|r| r.maxeig);
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, "niter"),
        "power_iteration niter 0",
    );
    Ok(())
}
