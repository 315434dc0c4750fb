//! The API as a user meets it: inputs borrowed as `&DistributedArray`, `&StackedDistributedArray`
//! or `&DistVector` alike (the same results, nothing moved), PyLops-like shapes of operators and
//! spaces, and solver errors that convert into the one error type with `?`.

use super::util::global;
use distlops::prelude::*;

/// `apply`, `apply_adjoint`, `dottest` and `cgls` give the same bits whether their inputs are
/// passed as plain arrays, stacks or `DistVector`s, and leave the inputs usable.
pub fn borrowed_inputs(comm: &Communicator) {
    let dims = [13, 6];
    let layout = Layout::scatter(&dims, 0, comm.size()).unwrap();
    let x = DistributedArray::to_dist(comm, global::<f64>(&dims, 7).view(), &layout).unwrap();
    let xv = DistVector::Array(x.clone());
    let d = FirstDerivative::<f64>::new(
        comm,
        &dims,
        FirstDerivativeParams {
            axis: -1,
            ..Default::default()
        },
    )
    .unwrap();
    let from_array = d.apply(&x).unwrap().asarray();
    assert_eq!(from_array, d.apply(&xv).unwrap().asarray());
    assert_eq!(from_array, d.apply(x.view()).unwrap().asarray());
    assert_eq!(
        d.apply_adjoint(&x).unwrap().asarray(),
        d.apply_adjoint(&xv).unwrap().asarray()
    );
    assert!(dottest(&d, &x, &x).unwrap().passes(1e-12));
    assert!(dottest(&d, &xv, &x).unwrap().passes(1e-12));

    // A stack is an input like any other.
    let lap = Laplacian::<f64>::new(comm, &dims, LaplacianParams::default()).unwrap();
    let system = StackedVStack::new(vec![Op::new(d), Op::new(lap)]).unwrap();
    let y = system.apply(&x).unwrap();
    let DistVector::Stacked(stack) = &y else {
        panic!("a StackedVStack returns a stack")
    };
    assert_eq!(
        system.apply_adjoint(stack).unwrap().asarray(),
        system.apply_adjoint(&y).unwrap().asarray()
    );

    // Solvers: the data as a plain array, the initial guess borrowed with `view`.
    let params = CglsParams {
        niter: 5,
        tol: 0.0,
        ..Default::default()
    };
    let local_len = layout.count(comm.rank()) * dims[1];
    let diag = Diagonal::new((0..local_len).map(|i| 1.0 + i as f64).collect::<Vec<f64>>()).unwrap();
    let op = BlockDiag::new(comm, vec![Box::new(diag)])
        .unwrap()
        .with_spaces(&layout, &layout)
        .unwrap();
    let data = op.apply(&x).unwrap();
    let DistVector::Array(data_array) = &data else {
        panic!("BlockDiag maps arrays to arrays")
    };
    let a = cgls(&op, data_array, Some(x.view()), params.clone(), None).unwrap();
    let b = cgls(&op, &data, Some(xv.view()), params, None).unwrap();
    assert_eq!(a.x.asarray(), b.x.asarray());
    assert_eq!(x.asarray(), xv.asarray(), "the inputs are untouched");
}

/// PyLops' `Op.shape` and the lengths and shapes of spaces.
pub fn shapes(comm: &Communicator) {
    let dims = [7, 5, 3];
    let lap = Laplacian::<f64>::new(comm, &dims, LaplacianParams::default()).unwrap();
    assert_eq!(lap.shape(), (105, 105));
    assert_eq!(lap.domain().shape(), dims.to_vec());
    assert_eq!(lap.domain().len(), 105);
    assert!(!lap.domain().is_empty());
    let grad = Gradient::<f64>::new(comm, &dims, GradientParams::default()).unwrap();
    assert_eq!(grad.shape(), (3 * 105, 105));
    assert_eq!(grad.range().shape(), vec![315]);
    assert_eq!(grad.range().parts().len(), 3);
    assert_eq!(grad.range().parts()[2].shape(), dims.to_vec());
    let empty = Space::scatter_1d(0, comm.size()).unwrap();
    assert!(empty.is_empty());
}

/// A solver's failure is a `distlops::Error` like any other: `?` works in a function returning
/// `Result<_, Error>`, and the error names the solver.
pub fn solver_errors_convert(comm: &Communicator) {
    fn solve(comm: &Communicator) -> Result<(), Error> {
        let op = Laplacian::<f64>::new(comm, &[6, 4], LaplacianParams::default())?;
        let y = op.new_range_vector()?;
        let params = CglsParams {
            tol: -1.0,
            ..Default::default()
        };
        cgls(&op, &y, None, params, None)?;
        Ok(())
    }
    match solve(comm) {
        Err(Error::InvalidParameter { solver, .. }) => assert_eq!(solver, "CGLS"),
        other => panic!("expected InvalidParameter, got {other:?}"),
    }
}
