//! W1 `poststack_matvec`, W2 `poststack_cgls`, W5 `stacked_reg_cgls` and W12 `poststack_tv`:
//! PyLops-MPI's post-stack tutorial operator on a `(20, 267, 550)` model split along `y`.

use crate::device::{time_on, upload, BenchEngine};
use crate::measure::{time_op, vector_checks, Record};
use crate::Res;
use distlops::core::operator::{LinearOperatorExt, Op};
use distlops::core::ToEngine;
use distlops::core::{
    Communicator, DistVector, DistributedArray, FullEngine, Host, Layout, StackedDistributedArray,
};
use distlops::ndarray::ArrayD;
use distlops::operators::local::{LocalOperator, PoststackLinearModelling};
use distlops::operators::wavelets::ricker;
use distlops::operators::{
    BlockDiag, DerivativeKind, Gradient, GradientParams, Laplacian, StackedVStack,
};
use distlops::solvers::{
    cgls, primal_dual, CgParams, CglsParams, L2Data, PrimalDualParams, Steps, L21,
};

/// The model's `(ny, nx, nz)`.
const DIMS: [usize; 3] = [20, 267, 550];

/// The operator `BDiag`, its layout and the model `m[y,x,z] = ln(2000 + 2z + 150 floor(z/50) +
/// 0.5x + 2y)` (this rank's slab only), on engine `E`.
struct Setup<E: FullEngine = Host> {
    g: Op<f64, E>,
    layout: Layout,
    m: DistVector<f64, E>,
}

/// The layout, this rank's model slab and its post-stack block, on the host.
fn parts(comm: &Communicator) -> Res<(Layout, DistVector<f64>, PoststackLinearModelling<f64>)> {
    let layout = Layout::scatter(&DIMS, 0, comm.size())?;
    let (y0, ny) = (layout.offset(comm.rank()), layout.count(comm.rank()));
    let [_, nx, nz] = DIMS;
    let m = ArrayD::from_shape_fn(vec![ny, nx, nz], |ix| {
        let (y, x, z) = ((y0 + ix[0]) as f64, ix[1] as f64, ix[2] as f64);
        (2000.0 + 2.0 * z + 150.0 * (z / 50.0).floor() + 0.5 * x + 2.0 * y).ln()
    });
    let m = DistributedArray::from_local_with_layout(comm, &layout, m)?.into();
    let t: Vec<f64> = (0..21).map(|k| k as f64 * 0.004).collect();
    let (wav, _) = ricker(&t, 15.0);
    let block = PoststackLinearModelling::new(&[ny, nx, nz], wav, 2)?;
    Ok((layout, m, block))
}

/// `BDiag` of one block per rank over `layout`.
fn bdiag<E: FullEngine>(
    comm: &Communicator,
    layout: &Layout,
    block: Box<dyn LocalOperator<f64, E>>,
) -> Res<Op<f64, E>> {
    Ok(Op::new(
        BlockDiag::new(comm, vec![block])?.with_spaces(layout, layout)?,
    ))
}

fn setup(comm: &Communicator) -> Res<Setup> {
    let (layout, m, block) = parts(comm)?;
    let g = bdiag(comm, &layout, Box::new(block))?;
    Ok(Setup { g, layout, m })
}

/// [`setup`] on engine `E`: the block moved with `to_engine`, the model uploaded.
fn setup_on<E: BenchEngine>(comm: &Communicator, engine: &E) -> Res<Setup<E>> {
    let (layout, m, block) = parts(comm)?;
    let g = bdiag(comm, &layout, Box::new(block.to_engine(engine)?))?;
    Ok(Setup {
        g,
        layout,
        m: upload(&m, engine)?,
    })
}

fn base(op: &'static str) -> Record {
    let n = DIMS.iter().product();
    Record {
        workload: "W1",
        name: "poststack_matvec",
        op,
        dtype: "float64",
        global_size: n,
        shape: [n, n],
        ..Record::default()
    }
}

/// W1: `d = G m` and `a = G^H d`.
pub fn w1(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let s = setup(comm)?;
    let (times, d) = time_op(comm, reps, || s.g.apply(&s.m))?;
    let (check, check_w) = vector_checks(&d);
    let fwd = Record {
        times,
        check,
        check_w: Some(check_w),
        ..base("matvec")
    };
    let (times, a) = time_op(comm, reps, || s.g.apply_adjoint(&d))?;
    let (check, check_w) = vector_checks(&a);
    let adj = Record {
        times,
        check,
        check_w: Some(check_w),
        ..base("rmatvec")
    };
    Ok(vec![fwd, adj])
}

/// CGLS from `x0 = 0` with `tol = 0` (every iteration runs), timed as one call (to the end of
/// the engine's work).
fn cgls_record<E: BenchEngine>(
    comm: &Communicator,
    engine: &E,
    op: &Op<f64, E>,
    data: &DistVector<f64, E>,
    niter: usize,
    reps: usize,
    record: Record,
) -> Res<Record> {
    let params = CglsParams {
        niter,
        tol: 0.0,
        ..CglsParams::default()
    };
    let (times, sol) = time_op(comm, reps, || -> Res<_> {
        let sol = cgls(op, data, None, params.clone(), None)?;
        engine.sync()?;
        Ok(sol)
    })?;
    let (check, check_w) = vector_checks(&sol.x.to_engine(&Host)?);
    Ok(Record {
        times,
        check,
        check_w: Some(check_w),
        cost: sol.info.cost.last().copied(),
        iterations: Some(niter),
        ..record
    })
}

/// W1 on engine `E` (the blocks moved with `PoststackLinearModelling::to_engine`).
pub fn w1_on<E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    let s = setup_on(comm, &engine)?;
    let record = |op, (times, (check, check_w)): (Vec<f64>, (f64, f64))| Record {
        times,
        check,
        check_w: Some(check_w),
        ..base(op)
    };
    let fwd = time_on(comm, &engine, reps, &s.g, &s.m, false)?;
    let d = s.g.apply(&s.m)?;
    let adj = time_on(comm, &engine, reps, &s.g, &d, true)?;
    Ok(vec![record("matvec", fwd), record("rmatvec", adj)])
}

/// W2 on engine `E`.
pub fn w2_on<E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    w2_run(comm, &engine, setup_on(comm, &engine)?, reps)
}

/// W2: 30 iterations of CGLS on `G x = G m`.
pub fn w2(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    w2_run(comm, &Host, setup(comm)?, reps)
}

/// W2's CGLS on the operator and model of `s`.
fn w2_run<E: BenchEngine>(
    comm: &Communicator,
    engine: &E,
    s: Setup<E>,
    reps: usize,
) -> Res<Vec<Record>> {
    let d = s.g.apply(&s.m)?;
    let record = Record {
        workload: "W2",
        name: "poststack_cgls",
        ..base("cgls")
    };
    Ok(vec![cgls_record(comm, engine, &s.g, &d, 30, reps, record)?])
}

/// W5's stack `[G; 10 L]` with the 3-D Laplacian, its data `[G m; 0]` and record.
#[allow(clippy::type_complexity)]
fn w5_problem<E: BenchEngine>(
    s: &Setup<E>,
    lap: Op<f64, E>,
) -> Res<(Op<f64, E>, DistVector<f64, E>, Record)> {
    let d = s.g.apply(&s.m)?;
    let stack = Op::new(StackedVStack::new(vec![s.g.clone(), lap.scale(10.0)])?);
    let zero = lap.new_range_vector_on(&s.m.engine())?;
    let data = DistVector::Stacked(StackedDistributedArray::new(vec![d, zero])?);
    let n = s.layout.global_len();
    let record = Record {
        workload: "W5",
        name: "stacked_reg_cgls",
        shape: [2 * n, n],
        ..base("cgls")
    };
    Ok((stack, data, record))
}

/// W5's Laplacian over the model's layout (W3's parameters).
fn w5_laplacian(comm: &Communicator, layout: &Layout) -> Res<Laplacian<f64>> {
    Ok(Laplacian::<f64>::with_layout(
        comm,
        layout,
        crate::stencils::w3_params(),
    )?)
}

/// W5: 20 iterations of CGLS on `[G; 10 L] x = [G m; 0]` with the 3-D Laplacian.
pub fn w5(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let s = setup(comm)?;
    let lap = Op::new(w5_laplacian(comm, &s.layout)?);
    let (stack, data, record) = w5_problem(&s, lap)?;
    Ok(vec![cgls_record(
        comm, &Host, &stack, &data, 20, reps, record,
    )?])
}

/// W5 on engine `E` (the blocks and the Laplacian moved with `to_engine`).
pub fn w5_on<E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    let s = setup_on(comm, &engine)?;
    let lap = Op::new(w5_laplacian(comm, &s.layout)?.to_engine(&engine)?);
    let (stack, data, record) = w5_problem(&s, lap)?;
    Ok(vec![cgls_record(
        comm, &engine, &stack, &data, 20, reps, record,
    )?])
}

/// W12's TV weight, iterations and inner CG steps.
const W12: (f64, usize, usize) = (0.01, 10, 3);

/// W12: `PrimalDual` TV inversion of `d = G m`: `f = 1/2 |G x - d|^2` (`L2Data`, its prox 3
/// warm-started CG steps from `x0 = 0`), `g = 0.01 |grad x|_{2,1}` on the 3-D forward gradient,
/// `tau = mu = 0.95 / sqrt(12)`, 10 steps, the dual variable first. Timed: `L2Data`'s
/// construction (`G^H d`) and the solve.
pub fn w12(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let s = setup(comm)?;
    let d = s.g.apply(&s.m)?;
    let forward = GradientParams {
        kind: DerivativeKind::Forward,
        ..GradientParams::default()
    };
    let grad = Gradient::<f64>::with_layout(comm, &s.layout, forward)?;
    let x0 = s.g.new_domain_vector()?;
    let (eps, niter, inner) = W12;
    let step = Steps::Fixed(0.95 / 12f64.sqrt());
    let params = PrimalDualParams {
        niter,
        tau: Some(step.clone()),
        mu: Some(step),
        gfirst: true,
        ..PrimalDualParams::default()
    };
    let (times, sol) = time_op(comm, reps, || -> Res<_> {
        let mut f = L2Data::new(&s.g, &d, 1.0)?.with_x0(&x0)?;
        f.inner = CgParams {
            niter: inner,
            tol: 0.0,
            ..CgParams::default()
        };
        Ok(primal_dual(
            &f,
            &L21 { sigma: eps },
            &grad,
            &x0,
            params.clone(),
            None,
        )?)
    })?;
    let (check, check_w) = vector_checks(&sol.x);
    Ok(vec![Record {
        workload: "W12",
        name: "poststack_tv",
        times,
        check,
        check_w: Some(check_w),
        iterations: Some(niter),
        ..base("primaldual")
    }])
}
