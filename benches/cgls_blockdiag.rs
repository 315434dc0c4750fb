//! Where a CGLS iteration spends its time: BlockDiag of one dense 2000 x 2000 MatrixMult per rank.
//!
//! The MatrixMult is wrapped in a timer that adds up the time spent in its forward and adjoint
//! products; the rest of each iteration (vector updates, dot products, all-reduces) is the
//! solver's overhead. Runs on 1 rank (serial) and on 2 thread ranks.
//!
//! cargo bench --bench cgls_blockdiag

use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, Threads, Vector};
use distlops::ndarray::Array2;
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::BlockDiag;
use distlops::solvers::{cgls, CglsParams};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Adds the wall time of every product to a counter.
struct Timed<L> {
    op: L,
    nanos: AtomicU64,
}

impl<L: LocalOperator<f64>> LocalOperator<f64> for Timed<L> {
    fn dims(&self) -> &[usize] {
        self.op.dims()
    }
    fn dimsd(&self) -> &[usize] {
        self.op.dimsd()
    }
    fn matvec(&self, x: &[f64], y: &mut [f64]) {
        let t = Instant::now();
        self.op.matvec(x, y);
        self.nanos
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    fn rmatvec(&self, y: &[f64], x: &mut [f64]) {
        let t = Instant::now();
        self.op.rmatvec(y, x);
        self.nanos
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// (seconds per iteration, fraction of it in the two products)
fn measure(comm: &Communicator, n: usize, niter: usize) -> (f64, f64) {
    let a = Array2::from_shape_fn((n, n), |(i, j)| {
        ((i * 7 + j * 13 + comm.rank()) % 101) as f64 / 101.0 - 0.5
    });
    let timed = std::sync::Arc::new(Timed {
        op: MatrixMult::new(a).expect("square matrix"),
        nanos: AtomicU64::new(0),
    });
    let ops: Vec<Box<dyn LocalOperator<f64>>> = vec![Box::new(timed.clone())];
    let op = BlockDiag::new(comm, ops).expect("BlockDiag");
    let mut x = op.new_domain_vector().expect("vector");
    x.fill(1.0);
    let y = op.apply(&x).expect("data");
    let params = CglsParams {
        niter,
        tol: 0.0,
        ..CglsParams::default()
    };
    // Warm-up, then time.
    cgls(&op, &y, None, CglsParams { niter: 2, ..params }, None).expect("cgls");
    timed.nanos.store(0, Ordering::Relaxed);
    comm.barrier();
    let t = Instant::now();
    let sol = cgls(&op, &y, None, params, None).expect("cgls");
    comm.barrier();
    let total = t.elapsed().as_secs_f64();
    let products = timed.nanos.load(Ordering::Relaxed) as f64 * 1e-9;
    let iters = sol.info.iterations as f64;
    (total / iters, products / total)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (n, niter) = (2000, 30);
    println!("CGLS on BlockDiag(MatrixMult {n} x {n} per rank), {niter} iterations");
    let (t, f) = measure(&Communicator::serial(), n, niter);
    println!(
        "1 rank (serial):   {:8.3} ms per iteration, {:5.1}% in the two matrix products",
        t * 1e3,
        f * 100.0
    );
    let per_rank = Threads::run(2, |comm| measure(&comm, n, niter));
    for (r, (t, f)) in per_rank.iter().enumerate() {
        println!(
            "2 thread ranks, rank {r}: {:8.3} ms per iteration, {:5.1}% in the two matrix products",
            t * 1e3,
            f * 100.0
        );
    }
}
