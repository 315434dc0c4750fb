//! One rank's mistake: what only one rank can see (its local block, the vector it hands to an
//! operator or a solver, an axis it computed, a part of a stacked vector, a root, or an `Err` of
//! its own code). The culprit's call fails; every other rank must fail with it instead of
//! waiting.

use crate::check::dist;
use crate::fixtures::*;
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{
    Communicator, DistVector, DistributedArray, Layout, NormOrd, StackedDistributedArray, Vector,
};
use distlops::ndarray::{ArrayD, IxDyn};
use distlops::operators::{DerivativeKind, Gradient, GradientParams};
use distlops::solvers::{cg, cgls};

/// Rank `c` wraps a block one row longer than the layout gives it.
pub fn wrong_local_block(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let mut shape = layout.local_shape(comm.rank());
    shape[0] += usize::from(comm.rank() == c);
    let block = ArrayD::from_elem(IxDyn(&shape), 1.0);
    let out = wrap_and_dot(comm, &layout, block);
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, "shape"),
        "from_local_with_layout",
    );
    Ok(())
}

/// Rank `c` hands FirstDerivative (along the split axis: a ghost exchange) a vector split along
/// the other axis.
pub fn wrong_vector_to_derivative_apply(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let d = derivative(comm, &layout, 0)?;
    let good = plain(comm, &layout);
    let bad = plain(comm, &Layout::scatter(&SHAPE, 1, comm.size())?);
    let out = d.apply(pick(comm, c, &bad, &good));
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, LAYOUT),
        "FirstDerivative::apply",
    );
    Ok(())
}

/// Rank `c` hands FirstDerivative's adjoint an output split along the other axis.
pub fn wrong_output_to_derivative_rmatvec(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let d = derivative(comm, &layout, 0)?;
    let y = plain(comm, &layout);
    let other = Layout::scatter(&SHAPE, 1, comm.size())?;
    let mut x = pick(
        comm,
        c,
        DistVector::Array(DistributedArray::zeros(comm, &other)?),
        d.new_domain_vector()?,
    );
    let out = d.rmatvec(y.view(), &mut x);
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, LAYOUT),
        "FirstDerivative::rmatvec",
    );
    Ok(())
}

/// Rank `c` hands BlockDiag (no communication in its product) an output of the domain, not the
/// range: the others would return `Ok` at once.
pub fn wrong_output_to_blockdiag_matvec(comm: &Communicator, c: usize) -> Outcome {
    let op = block_diag(comm, 2)?;
    let x = filled(op.new_domain_vector()?, 1.0);
    let mut y = pick(comm, c, op.new_domain_vector()?, op.new_range_vector()?);
    let out = op.matvec(x.view(), &mut y);
    fails_everywhere(comm, out, Expect::Culprit(c, LAYOUT), "BlockDiag::matvec");
    Ok(())
}

/// Rank `c` hands VStack's adjoint (one all-reduce) a vector of the domain.
pub fn wrong_vector_to_vstack_adjoint(comm: &Communicator, c: usize) -> Outcome {
    let op = vstack(comm)?;
    let (good, bad) = (op.new_range_vector()?, op.new_domain_vector()?);
    let out = op.apply_adjoint(pick(comm, c, &bad, &good));
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, LAYOUT),
        "VStack::apply_adjoint",
    );
    Ok(())
}

/// Rank `c` hands CGLS data `y` of the operator's domain, not its range.
pub fn wrong_data_to_cgls(comm: &Communicator, c: usize) -> Outcome {
    let op = block_diag(comm, 2)?;
    let good = filled(op.new_range_vector()?, 1.0);
    let bad = filled(op.new_domain_vector()?, 1.0);
    let out = cgls(&op, pick(comm, c, &bad, &good), None, cgls_params(), None);
    fails_everywhere(comm, out, Expect::Culprit(c, LAYOUT), "cgls with a wrong y");
    Ok(())
}

/// Rank `c` hands CGLS a starting model `x0` of the operator's range, not its domain.
pub fn wrong_x0_to_cgls(comm: &Communicator, c: usize) -> Outcome {
    let op = block_diag(comm, 2)?;
    let y = filled(op.new_range_vector()?, 1.0);
    let (good, bad) = (op.new_domain_vector()?, op.new_range_vector()?);
    let out = cgls(
        &op,
        &y,
        Some(pick(comm, c, &bad, &good).view()),
        cgls_params(),
        None,
    );
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, LAYOUT),
        "cgls with a wrong x0",
    );
    Ok(())
}

/// Rank `c` hands CG data with the balanced split where the operator's blocks are uneven.
pub fn wrong_data_to_cg(comm: &Communicator, c: usize) -> Outcome {
    let op = block_diag(comm, 0)?;
    let good = filled(op.new_range_vector()?, 1.0);
    let n = op.range().global_len();
    let split = Layout::scatter(&[n], 0, comm.size())?;
    let bad = DistVector::Array(DistributedArray::full(comm, &split, 1.0)?);
    let out = cg(&op, pick(comm, c, &bad, &good), None, cg_params(), None);
    fails_everywhere(comm, out, Expect::Culprit(c, LAYOUT), "cg with a wrong y");
    Ok(())
}

/// Rank `c` asks for the norms along axis 2 of a 2-D array (the others along axis 0).
pub fn norm_axis_out_of_range(comm: &Communicator, c: usize) -> Outcome {
    let x = dist(comm, &data(&SHAPE), &balanced(comm)?);
    let out = x.norm_axis(NormOrd::Two, pick(comm, c, 2, 0));
    fails_everywhere(comm, out, Expect::Culprit(c, "out of range"), "norm_axis");
    Ok(())
}

/// Rank `c` redistributes to axis 2 of a 2-D array (the others to axis 1).
pub fn redistribute_axis_out_of_range(comm: &Communicator, c: usize) -> Outcome {
    let x = dist(comm, &data(&SHAPE), &balanced(comm)?);
    let out = x.redistribute(pick(comm, c, 2, 1));
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, "out of range"),
        "redistribute",
    );
    Ok(())
}

/// Rank `c`'s stacked vector has a second part with other counts than its partner's (and than
/// the other ranks' stacks: a mismatch between ranks as much as one rank's mistake, so a layout
/// mismatch on every rank is as good as the culprit's own error).
pub fn bad_part_of_stacked_vector(comm: &Communicator, c: usize) -> Outcome {
    let p = comm.size();
    let a = dist(comm, &data(&SHAPE), &balanced(comm)?);
    let line = data(&[13]);
    let b = dist(comm, &line, &Layout::scatter(&[13], 0, p)?);
    let b_bad = dist(comm, &line, &rotated(&[13], 0, p)?);
    let s = StackedDistributedArray::from_arrays(vec![a.clone(), pick(comm, c, b_bad, b.clone())])?;
    let t = StackedDistributedArray::from_arrays(vec![a, b])?;
    let out = Vector::dot(&s, &t);
    fails_everywhere(comm, out, Expect::Mismatch, "dot of stacked vectors");
    Ok(())
}

/// Rank `c` hands Gradient's adjoint a stack whose second part is split along the other axis.
pub fn bad_part_into_gradient_adjoint(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let other = Layout::scatter(&SHAPE, 1, comm.size())?;
    let grad = Gradient::<f64>::with_layout(
        comm,
        &layout,
        GradientParams {
            sampling: vec![1.0, 1.0],
            kind: DerivativeKind::Forward,
            ..Default::default()
        },
    )?;
    let second = pick(comm, c, plain(comm, &other), plain(comm, &layout));
    let y = StackedDistributedArray::new(vec![plain(comm, &layout), second])?;
    let out = grad.apply_adjoint(&DistVector::Stacked(y));
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, LAYOUT),
        "Gradient::apply_adjoint",
    );
    Ok(())
}

/// Rank `c` gathers to a root that is not a rank (the others to rank 0).
pub fn gather_root_not_a_rank(comm: &Communicator, c: usize) -> Outcome {
    let x = dist(comm, &data(&SHAPE), &balanced(comm)?);
    let out = x.gather(pick(comm, c, comm.size(), 0));
    fails_everywhere(comm, out, Expect::Culprit(c, "root"), "gather");
    Ok(())
}

/// A user's operator fails in its third forward product on rank `c`, inside CGLS; the error
/// leaves the program with `?`.
pub fn user_op_err_in_cgls(comm: &Communicator, c: usize) -> Outcome {
    flaky_cgls(comm, c, false)
}

/// A user's operator fails in its second adjoint product on rank `c`, inside CGLS.
pub fn user_op_adjoint_err_in_cgls(comm: &Communicator, c: usize) -> Outcome {
    flaky_cgls(comm, c, true)
}

/// CGLS on [`Flaky`] (its forward or adjoint product failing on rank `c`), errors propagated.
fn flaky_cgls(comm: &Communicator, c: usize, adjoint: bool) -> Outcome {
    let op = Flaky::new(comm, c, if adjoint { 1 } else { 2 }, adjoint)?;
    let y = plain(comm, &balanced(comm)?);
    cgls(&op, &y, None, cgls_params(), None)?;
    Ok(())
}

/// The user's own code fails on rank `c` (a file it cannot read) while the others go on to a
/// reduction; the error leaves the program with `?`.
pub fn user_closure_err_before_collective(comm: &Communicator, c: usize) -> Outcome {
    let x = dist(comm, &data(&SHAPE), &balanced(comm)?);
    if comm.rank() == c {
        return Err("cannot read model.npy: no such file or directory".into());
    }
    x.dot(&x)?;
    Ok(())
}

/// Rank `c` builds FirstDerivative along an axis read from rank-local input that is out of range
/// (construction does not communicate); the error leaves with `?` while the others apply theirs.
pub fn derivative_axis_out_of_range(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let d = derivative(comm, &layout, pick(comm, c, 2, 0))?;
    let y = d.apply(&plain(comm, &layout))?;
    y.norm(NormOrd::Two)?;
    Ok(())
}

/// Rank `c` takes the dot product of a plain array with a stack holding that array; the others
/// take it of the array with itself (and wait in its agreement).
pub fn dot_of_array_and_stack(comm: &Communicator, c: usize) -> Outcome {
    let x = plain(comm, &balanced(comm)?);
    let stack = DistVector::Stacked(StackedDistributedArray::new(vec![x.clone()])?);
    let other = pick(comm, c, &stack, &x);
    let out = x.dot(other);
    fails_everywhere(comm, out, Expect::Culprit(c, "stacked"), "DistVector::dot");
    Ok(())
}

/// Rank `c` builds a layout from local shapes with another split axis than the others.
pub fn from_local_shapes_axis_differs(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let local = layout.local_shape(comm.rank());
    let axis = pick(comm, c, 1, 0);
    let out = Layout::from_local_shapes(comm, &local, axis, distlops::core::Partition::Scatter);
    fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, "local shapes"),
        "Layout::from_local_shapes",
    );
    Ok(())
}

/// Rank `c` hands `Halo::gather_global` a vector outside the halo's domain.
pub fn wrong_vector_to_halo_gather(comm: &Communicator, c: usize) -> Outcome {
    let halo = distlops::operators::Halo::new(comm, &SHAPE, 1)?;
    let good = halo.new_domain_vector()?;
    let bad = plain(comm, &Layout::scatter(&SHAPE, 1, comm.size())?);
    let out = halo.gather_global(pick(comm, c, &bad, &good));
    fails_everywhere(comm, out, Expect::Culprit(c, LAYOUT), "Halo::gather_global");
    Ok(())
}
