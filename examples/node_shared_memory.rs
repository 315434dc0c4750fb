//! How much memory a large Broadcast matrix costs a node: one copy per rank (the ordinary
//! Broadcast path, `MatrixMult::new` on every rank) against one copy per node
//! (`NodeShared::from_root` + `MatrixMult::from_node_shared`), and whether the two give the same
//! bits for `y = A x`.
//!
//! ```text
//! . scripts/mpi-env.sh
//! cargo build --release --features mpi --example node_shared_memory
//! mpirun -n 4 --oversubscribe target/release/examples/node_shared_memory [GIB]   # default 1
//! ```
//!
//! Two measures of the node's memory, printed after each stage:
//!
//! * the sum over ranks of `Pss` from `/proc/self/smaps_rollup` (proportional set size: a page
//!   mapped by k processes counts 1/k in each, so the sum is the memory the ranks use together,
//!   shared pages once);
//! * the machine's used memory, `MemTotal - MemAvailable` from `/proc/meminfo` (read on rank 0;
//!   other programs on the machine move it too), and its `Shmem` (shared-memory pages).
//!
//! All ranks must run on one node (the program checks it).

use distlops::core::{Communicator, Error, NodeShared, ReduceOp};
use distlops::operators::local::{LocalOperator, MatrixMult};
use ndarray::Array2;
use std::process::ExitCode;

const GIB: f64 = (1u64 << 30) as f64;

/// A field of a `/proc` file in kB (`Name:   1234 kB`), as bytes.
fn proc_field(path: &str, name: &str) -> Result<u64, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.into(),
        message: e.to_string(),
    })?;
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
        .map(|kib| kib * 1024)
        .ok_or_else(|| Error::Io {
            path: path.into(),
            message: format!("no field {name}"),
        })
}

/// One line of the table: the node's summed Pss and the machine's used memory and Shmem.
struct Stage {
    pss: u64,
    used: u64,
    shmem: u64,
}

fn measure(world: &Communicator, name: &str) -> Result<Stage, Error> {
    world.barrier();
    let pss = world.all_reduce(proc_field("/proc/self/smaps_rollup", "Pss")?, ReduceOp::Sum);
    let total = proc_field("/proc/meminfo", "MemTotal")?;
    let available = proc_field("/proc/meminfo", "MemAvailable")?;
    let stage = Stage {
        pss,
        used: total - available,
        shmem: proc_field("/proc/meminfo", "Shmem")?,
    };
    if world.rank() == 0 {
        println!(
            "{name:<44} {:>10.3} {:>12.3} {:>10.3}",
            stage.pss as f64 / GIB,
            stage.used as f64 / GIB,
            stage.shmem as f64 / GIB
        );
    }
    world.barrier();
    Ok(stage)
}

/// The matrix's values (any deterministic pattern).
fn value(i: usize) -> f64 {
    ((i.wrapping_mul(2_654_435_761) % 1_000_003) as f64) * 1e-6 - 0.5
}

fn body(world: &Communicator) -> Result<(), Error> {
    let gib: f64 = match std::env::args().nth(1) {
        Some(s) => s
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("size in GiB: {s:?}")))?,
        None => 1.0,
    };
    let (node_rank, node_size) = world.node_rank();
    world.agree(if node_size == world.size() {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "run every rank on one node (rank {} is rank {node_rank} of {node_size} on its node)",
            world.rank()
        )))
    })?;
    let cols = 8192;
    let rows = ((gib * GIB) as usize / 8 / cols).max(1);
    let n = rows * cols;
    let root = 0;
    let x: Vec<f64> = (0..cols).map(|j| value(7 * j + 3)).collect();
    let root_data = || (0..n).map(value).collect::<Vec<f64>>();
    if world.rank() == 0 {
        println!(
            "{} ranks on one node, a {rows} x {cols} f64 Broadcast matrix ({:.3} GiB)",
            world.size(),
            (n * 8) as f64 / GIB
        );
        println!(
            "{:<44} {:>10} {:>12} {:>10}",
            "stage", "sum Pss", "machine used", "Shmem"
        );
        println!("{:<44} {:>10} {:>12} {:>10}", "", "GiB", "GiB", "GiB");
    }
    let base = measure(world, "baseline")?;

    // The ordinary Broadcast path: every rank receives its own copy and its MatrixMult keeps it.
    // The operators are built one rank at a time, so the copy each makes is not held four times
    // at once.
    let mut a = if world.rank() == root {
        root_data()
    } else {
        vec![0.0; n]
    };
    world.broadcast_into(&mut a, root);
    let mut op = None;
    for r in 0..world.size() {
        if r == world.rank() {
            let owned = Array2::from_shape_vec((rows, cols), std::mem::take(&mut a))
                .map_err(|e| Error::ShapeMismatch(e.to_string()))?;
            op = Some(MatrixMult::new(owned)?);
            distlops::core::alloc::release_pool();
        }
        world.barrier();
    }
    let op = op.expect("built above");
    let mut y_ordinary = vec![0.0; rows];
    op.matvec(&x, &mut y_ordinary);
    let ordinary = measure(world, "ordinary Broadcast: MatrixMult::new per rank")?;
    drop(op);
    distlops::core::alloc::release_pool();
    measure(world, "after dropping it")?;

    // Node-shared: the root's data copied once into the node's window; every rank maps it.
    let shared = {
        let data = (world.rank() == root).then(root_data);
        NodeShared::from_root(world, &[rows, cols], data.as_deref(), root)?
    };
    let op = MatrixMult::from_node_shared(shared)?;
    let mut y_shared = vec![0.0; rows];
    op.matvec(&x, &mut y_shared);
    let node = measure(world, "node-shared: MatrixMult::from_node_shared")?;
    drop(op);
    measure(world, "after dropping it (collective free)")?;

    let same = y_ordinary
        .iter()
        .zip(&y_shared)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    let all_same = world.all_reduce(u8::from(same), ReduceOp::Min) == 1;
    if world.rank() == 0 {
        let delta = |s: &Stage, b: &Stage| (s.pss as f64 - b.pss as f64) / GIB;
        let used = |s: &Stage, b: &Stage| (s.used as f64 - b.used as f64) / GIB;
        let shmem = |s: &Stage, b: &Stage| (s.shmem as f64 - b.shmem as f64) / GIB;
        for (name, s) in [("ordinary", &ordinary), ("node-shared", &node)] {
            println!(
                "added by the {name} matrix: {:.3} GiB sum Pss, {:.3} GiB machine used, \
                 {:.3} GiB Shmem",
                delta(s, &base),
                used(s, &base),
                shmem(s, &base)
            );
        }
        println!("y = A x bitwise identical on every rank: {all_same}");
    }
    if all_same {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "node-shared and ordinary products differ".into(),
        ))
    }
}

/// The ranks of `mpirun` (or `DISTLOPS_RANKS` thread ranks, where every rank shares one copy).
fn main() -> ExitCode {
    distlops::run(body);
    ExitCode::SUCCESS
}
