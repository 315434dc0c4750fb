//! Messages. A space error names the operator and the call, an axis error names the
//! call, CGLS tells a NaN in the data from finite data that overflows, and a message relayed to
//! the other ranks arrives whole (not cut at 255 bytes).

use crate::check::dist;
use crate::fixtures::*;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistVector, DistributedArray, Layout, NormOrd, Vector};
use distlops::ndarray::{ArrayD, IxDyn};
use distlops::solvers::cgls;

/// Rank `c` hands FirstDerivative a vector split along the other axis, forward then adjoint:
/// every rank's message names the operator and the product.
pub fn space_error_names_operator_and_call(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let d = derivative(comm, &layout, 0)?;
    let good = plain(comm, &layout);
    let bad = plain(comm, &Layout::scatter(&SHAPE, 1, comm.size())?);
    let x = pick(comm, c, &bad, &good);
    let expect = Expect::Culprit(c, "FirstDerivative");
    let forward = fails_everywhere(comm, d.apply(x), expect, "FirstDerivative::apply");
    assert!(
        forward.contains("matvec"),
        "the call is not named: {forward}"
    );
    let adjoint = fails_everywhere(
        comm,
        d.apply_adjoint(x),
        expect,
        "FirstDerivative::apply_adjoint",
    );
    assert!(
        adjoint.contains("rmatvec"),
        "the call is not named: {adjoint}"
    );
    Ok(())
}

/// Every rank asks for an axis a 2-D array does not have: the messages name the call.
pub fn axis_error_names_call(comm: &Communicator, _c: usize) -> Outcome {
    let x = dist(comm, &data(&SHAPE), &balanced(comm)?);
    let norms = fails_everywhere(
        comm,
        x.norm_axis(NormOrd::Two, 5),
        Expect::AnyErr,
        "norm_axis",
    );
    assert!(
        norms.contains("norm_axis"),
        "the call is not named: {norms}"
    );
    let moved = fails_everywhere(comm, x.redistribute(5), Expect::AnyErr, "redistribute");
    assert!(
        moved.contains("redistribute"),
        "the call is not named: {moved}"
    );
    Ok(())
}

/// CGLS on data with a NaN in rank `c`'s block says "NaN"; on finite data whose norm overflows
/// it says "overflow" or "infinite" instead.
pub fn cgls_nan_and_overflow(comm: &Communicator, c: usize) -> Outcome {
    let op = block_diag(comm, 2)?;
    let mut y = op.new_range_vector()?;
    y.fill(1.0);
    if let (true, DistVector::Array(a)) = (comm.rank() == c, &mut y) {
        a.local_slice_mut()[0] = f64::NAN;
    }
    let out = cgls(&op, &y, None, cgls_params(), None);
    let nan = fails_everywhere(comm, out, Expect::AnyErr, "cgls on data with a NaN");
    y.fill(1e200);
    let out = cgls(&op, &y, None, cgls_params(), None);
    let big = fails_everywhere(comm, out, Expect::AnyErr, "cgls on data that overflows");
    assert!(nan.contains("NaN"), "a NaN in the data is not named: {nan}");
    assert!(
        (big.contains("overflow") || big.contains("infinite")) && !big.contains("NaN"),
        "an overflow of finite data is not named as such: {big}"
    );
    Ok(())
}

/// Rank `c` wraps a block one row too long in a 50-D layout, so that the message (two shapes)
/// is longer than 255 bytes: every rank gets it whole.
pub fn relayed_message_is_whole(comm: &Communicator, c: usize) -> Outcome {
    let mut shape = vec![1usize; 50];
    shape[0] = SHAPE[0];
    let layout = Layout::scatter(&shape, 0, comm.size())?;
    let expected = layout.local_shape(c);
    let mut wrong = expected.clone();
    wrong[0] += 1;
    let local = pick(comm, c, wrong.clone(), layout.local_shape(comm.rank()));
    let block = ArrayD::from_elem(IxDyn(&local), 0.0);
    let out = DistributedArray::from_local_with_layout(comm, &layout, block);
    let text = fails_everywhere(
        comm,
        out,
        Expect::Culprit(c, "shape"),
        "from_local_with_layout",
    );
    assert!(
        text.len() > 255
            && text.contains(&format!("{wrong:?}"))
            && text.contains(&format!("{expected:?}")),
        "rank {}: the message is cut ({} bytes): {text}",
        comm.rank(),
        text.len()
    );
    Ok(())
}
