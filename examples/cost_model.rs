//! The communication of one CGLS iteration, counted: messages, bytes and global reductions per
//! iteration of the post-stack problem and of the MDC problem, for each CGLS variant, plus this
//! machine's latency and bandwidth. The numbers behind the cost model in `BENCHMARKS.md`.
//!
//! Threads (no MPI needed):   cargo run --release --example cost_model -- --ranks 4
//! MPI:                       cargo build --release --features mpi --example cost_model
//!                            mpirun -n 4 target/release/examples/cost_model
//!
//! Both problems are weak-scaled (the work per rank does not depend on the rank count):
//!
//! * **post-stack**: `[G; 10 L]` of PyLops-MPI's post-stack tutorial with the 3-D Laplacian
//!   (benchmark W5), on a model of `(4 P, 64, 120)` split along its first axis;
//! * **MDC**: the multi-dimensional convolution `Mdc` with `ns = nr = 32`, `nv = 4`, 8 frequencies
//!   per rank and `nt = 2 nf + 1` two-sided time samples.
//!
//! Each problem is solved from zero with `tol = 0` for 2 and for 6 iterations; the counters
//! ([`CommStats`]) of the two runs are subtracted and divided by 4, which leaves exactly one
//! iteration's communication (the set-up's is the same in both runs and cancels). Rank 0 prints
//! one JSON line per problem and variant with the largest per-rank count over the ranks (an
//! interior rank, which talks to two neighbours), and one line of measured latencies.

use distlops::ndarray::{Array3, ArrayD};
use distlops::operators::wavelets::ricker;
use distlops::prelude::*;
use distlops::solvers::CgVariant;
use std::time::Instant;

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A problem: its operator and its data.
type Problem = (Op<f64>, DistVector<f64>);

/// A problem's builder.
type Build = fn(&Communicator) -> Res<Problem>;

/// The iteration counts whose difference is measured.
const SHORT: usize = 2;
const LONG: usize = 6;

/// A deterministic, bounded, non-trivial value for index `i` (no random numbers needed).
fn wave(i: usize) -> f64 {
    ((i as f64) * 0.618_033_988_749_894_9).fract() - 0.5
}

/// The post-stack problem `[G; 10 L] x = [G m; 0]` (W5's operator) on `(4 P, 64, 120)`.
fn poststack(comm: &Communicator) -> Res<Problem> {
    let dims = [4 * comm.size(), 64, 120];
    let layout = Layout::scatter(&dims, 0, comm.size())?;
    let (y0, ny) = (layout.offset(comm.rank()), layout.count(comm.rank()));
    let m = ArrayD::from_shape_fn(vec![ny, dims[1], dims[2]], |ix| {
        let (y, x, z) = ((y0 + ix[0]) as f64, ix[1] as f64, ix[2] as f64);
        (2000.0 + 2.0 * z + 150.0 * (z / 50.0).floor() + 0.5 * x + 2.0 * y).ln()
    });
    let m: DistVector<f64> = DistributedArray::from_local_with_layout(comm, &layout, m)?.into();
    let t: Vec<f64> = (0..21).map(|k| k as f64 * 0.004).collect();
    let (wav, _) = ricker(&t, 15.0);
    let block: Box<dyn LocalOperator<f64>> = Box::new(PoststackLinearModelling::new(
        &[ny, dims[1], dims[2]],
        wav,
        2,
    )?);
    let g = Op::new(BlockDiag::new(comm, vec![block])?.with_spaces(&layout, &layout)?);
    let lap = Op::new(Laplacian::<f64>::with_layout(
        comm,
        &layout,
        LaplacianParams {
            axes: vec![0, 1, 2],
            ..Default::default()
        },
    )?);
    let d = g.apply(&m)?;
    let zero = lap.new_range_vector()?;
    let op = Op::new(StackedVStack::new(vec![g, lap.scale(10.0)])?);
    let data = DistVector::Stacked(StackedDistributedArray::new(vec![d, zero])?);
    Ok((op, data))
}

/// The MDC problem: 8 frequencies per rank, `ns = nr = 32`, `nv = 4`, data `Mdc m`.
fn mdc(comm: &Communicator) -> Res<Problem> {
    let (nf_local, ns, nr, nv) = (8, 32, 32, 4);
    let nt = 2 * nf_local * comm.size() + 1;
    let f0 = nf_local * comm.rank();
    let g = Array3::from_shape_fn((nf_local, ns, nr), |(f, s, r)| {
        let i = ((f0 + f) * ns + s) * nr + r;
        Complex64::new(wave(2 * i), wave(2 * i + 1))
    });
    let op = Op::new(Mdc::<f64>::new(
        comm,
        g.view(),
        nt,
        nv,
        MdcParams::default(),
    )?);
    let mut m = op.new_domain_vector()?;
    m.fill(1.0);
    let d = op.apply(&m)?;
    Ok((op, d))
}

/// The counters of one CGLS solve of `niter` iterations from zero with `tol = 0`.
fn solve_stats(
    comm: &Communicator,
    op: &Op<f64>,
    data: &DistVector<f64>,
    niter: usize,
    variant: CgVariant,
) -> Res<(CommStats, f64)> {
    let params = CglsParams {
        niter,
        tol: 0.0,
        variant,
        ..CglsParams::default()
    };
    comm.barrier();
    comm.reset_stats();
    let start = Instant::now();
    cgls(op, data, None, params, None)?;
    let seconds = start.elapsed().as_secs_f64();
    Ok((comm.stats(), seconds))
}

/// One iteration's counters, as `(name, value)` pairs, the largest over the ranks.
fn per_iteration(
    comm: &Communicator,
    long: &CommStats,
    short: &CommStats,
) -> Vec<(&'static str, u64)> {
    let d = long.since(short);
    let per = |x: u64| x / (LONG - SHORT) as u64;
    let mut fields = vec![
        ("reductions", per(d.reductions())),
        ("blocking_all_reduces", per(d.all_reduce.calls)),
        ("immediate_all_reduces", per(d.immediate_all_reduce.calls)),
        (
            "reduction_bytes",
            per(d.all_reduce.sent_bytes + d.immediate_all_reduce.sent_bytes),
        ),
        ("p2p_messages_sent", per(d.send.calls)),
        ("p2p_bytes_sent", per(d.send.sent_bytes)),
        ("all_to_alls", per(d.all_to_all.calls)),
        ("all_to_all_bytes_sent", per(d.all_to_all.sent_bytes)),
        ("all_gathers", per(d.all_gather.calls)),
        (
            "all_gather_bytes_received",
            per(d.all_gather.received_bytes),
        ),
        ("broadcasts", per(d.broadcast.calls)),
        (
            "other_collectives",
            per(d.gather.calls + d.barrier + d.split),
        ),
    ];
    let mut values: Vec<u64> = fields.iter().map(|f| f.1).collect();
    comm.all_reduce_in_place(&mut values, ReduceOp::Max);
    for (f, v) in fields.iter_mut().zip(values) {
        f.1 = v;
    }
    fields
}

/// Median of `reps` timings of `f` in microseconds, the largest over the ranks.
fn median_us(comm: &Communicator, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    comm.all_reduce(times[reps / 2], ReduceOp::Max)
}

/// Latency and bandwidth of this machine's communicator: a ping-pong of 8 bytes and of 8 MiB
/// between ranks 0 and 1 (half the round trip), and an all-reduce of one `f64` on every rank.
fn machine(comm: &Communicator) -> String {
    let (rank, size) = (comm.rank(), comm.size());
    let ping = |len: usize, reps: usize| {
        let send = vec![1.0f64; len];
        let mut recv = vec![0.0f64; len];
        median_us(comm, reps, || match rank {
            0 => {
                comm.send_receive_into(&send, 1, &mut [], 1);
                comm.send_receive_into(&[], 1, &mut recv, 1);
            }
            1 => {
                comm.send_receive_into(&[], 0, &mut recv, 0);
                comm.send_receive_into(&send, 0, &mut [], 0);
            }
            _ => {}
        }) / 2.0
    };
    let reduce = median_us(comm, 201, || {
        comm.all_reduce(1.0f64, ReduceOp::Sum);
    });
    if size < 2 {
        return format!("{{\"ranks\":{size},\"all_reduce_8B_us\":{reduce:.3}}}");
    }
    let small = ping(1, 201);
    let mib = 8usize;
    let large = ping(mib * (1 << 20) / 8, 21);
    let gbs = (mib * (1 << 20)) as f64 / (large * 1e-6) / 1e9;
    format!(
        "{{\"ranks\":{size},\"all_reduce_8B_us\":{reduce:.3},\"ping_8B_us\":{small:.3},\
         \"ping_{mib}MiB_us\":{large:.1},\"bandwidth_GBs\":{gbs:.2}}}"
    )
}

fn run(comm: &Communicator) -> Res<()> {
    let problems: [(&str, Build); 2] = [("poststack", poststack), ("mdc", mdc)];
    for (name, build) in problems {
        let (op, data) = build(comm)?;
        for variant in [
            CgVariant::Classic,
            CgVariant::SingleReduction,
            CgVariant::Pipelined,
        ] {
            let (short, _) = solve_stats(comm, &op, &data, SHORT, variant)?;
            let (long, seconds) = solve_stats(comm, &op, &data, LONG, variant)?;
            let fields = per_iteration(comm, &long, &short);
            let seconds = comm.all_reduce(seconds, ReduceOp::Max);
            if comm.rank() == 0 {
                let body: Vec<String> =
                    fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                println!(
                    "{{\"problem\":\"{name}\",\"variant\":\"{variant:?}\",\"ranks\":{},\
                     \"seconds_{LONG}_iterations\":{seconds:.4},{}}}",
                    comm.size(),
                    body.join(",")
                );
            }
        }
    }
    let line = machine(comm);
    if comm.rank() == 0 {
        println!("{line}");
    }
    Ok(())
}

/// The number of thread ranks: `--ranks N` (default 4).
fn ranks() -> Res<usize> {
    let args: Vec<String> = std::env::args().collect();
    Ok(match args.iter().position(|a| a == "--ranks") {
        Some(i) => args.get(i + 1).ok_or("--ranks needs a value")?.parse()?,
        None => 4,
    })
}

/// `--ranks N` thread ranks (default 4), or the ranks of `mpirun`.
fn main() -> std::process::ExitCode {
    match ranks() {
        Ok(n) => {
            distlops::run_with(n, run);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cost_model: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
