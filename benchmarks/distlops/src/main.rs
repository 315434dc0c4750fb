//! `distlops-bench`: the distlops side of the side-by-side benchmark against PyLops-MPI.
//!
//! Runs one workload of `benchmarks/WORKLOADS.md` (W1-W14, Complex64 versions of W3 and W7, and
//! the STREAM triad floor) with that document's timing protocol and prints one JSON record per op
//! on rank 0, with the same fields as `benchmarks/pylops/bench.py`:
//!
//! ```text
//! cargo build --release -p distlops-bench --features mpi
//! mpirun -n 2 --bind-to core target/release/distlops-bench --workload W3 [--dtype complex128]
//!        [--reps N] [--out results.jsonl] [--inputs DIR]
//! ```
//!
//! Without the `mpi` feature, `--ranks N` runs the workload on N threads instead (for quick
//! checks; the benchmark runs under `mpirun`). `benchmarks/run.sh` drives both sides.

mod device;
mod ffts;
mod inputs;
mod kirchhoff;
mod matmul;
mod mdc;
mod measure;
mod nonstationary;
mod pcg64;
mod poststack;
mod stencils;
mod summa;
mod triad;
mod vector_ops;

use distlops::core::{Communicator, Complex64};
use measure::Record;
use std::io::Write as _;
use std::path::PathBuf;

/// The error type of the benchmark: anything, with its message.
pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

const USAGE: &str = "\
distlops-bench: one workload of the side-by-side benchmark against PyLops-MPI

options:
  --workload W   W1 .. W14, or triad (required)
  --dtype D      float64 (default) or complex128 (W3, W7, W9, W10 and W11; W9 and W10 are complex only)
  --reps N       timed repetitions (default: the specification's, per workload)
  --out FILE     also append the JSON records to FILE
  --inputs DIR   W8: read G.npy and m.npy from DIR (written by bench.py --write-inputs)
  --ranks N      ranks on the Threads communicator (builds without the `mpi` feature)
  --engine E     host (default); cuda: the workload's operator and vectors on this rank's GPU
                 (feature `cuda`; benchmarks/gpu.sh); generic: the same device code path on main
                 memory (operators moved with to_engine(&Host)); devcopy is the copy bandwidth
";

/// Command-line options.
#[derive(Debug, Clone)]
struct Args {
    workload: String,
    dtype: String,
    reps: Option<usize>,
    out: Option<PathBuf>,
    ranks: usize,
    inputs: Option<PathBuf>,
    engine: String,
}

impl Args {
    fn parse() -> Res<Args> {
        let mut a = Args {
            workload: String::new(),
            dtype: "float64".into(),
            reps: None,
            out: None,
            ranks: 1,
            inputs: None,
            engine: "host".into(),
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--workload" => a.workload = value()?,
                "--dtype" => a.dtype = value()?,
                "--reps" => a.reps = Some(value()?.parse()?),
                "--out" => a.out = Some(value()?.into()),
                "--ranks" => a.ranks = value()?.parse()?,
                "--inputs" => a.inputs = Some(value()?.into()),
                "--engine" => a.engine = value()?,
                "-h" | "--help" => {
                    print!("{USAGE}");
                    std::process::exit(0);
                }
                other => return Err(format!("unknown option {other}\n\n{USAGE}").into()),
            }
        }
        if a.workload.is_empty() {
            return Err(format!("--workload is required\n\n{USAGE}").into());
        }
        Ok(a)
    }
}

/// Runs the workload and returns its records (identical on every rank).
fn run(comm: &Communicator, args: &Args) -> Res<Vec<Record>> {
    // The specification's repetitions.
    let default_reps = match args.workload.as_str() {
        "W2" | "W5" | "W12" => 3,
        "W7" | "W8" => 20,
        "W11" | "W14" => 5,
        _ => 10,
    };
    let reps = args.reps.unwrap_or(default_reps).max(1);
    let complex = match args.dtype.as_str() {
        "float64" => false,
        "complex128" => true,
        other => return Err(format!("unknown dtype {other}").into()),
    };
    match args.engine.as_str() {
        "host" => {}
        // The device code path on main memory (operators moved with `to_engine(&Host)`): checks
        // the benchmark's device workloads without a device.
        "generic" => {
            return device::run::<distlops::core::Host>(
                comm,
                &args.workload,
                complex,
                reps,
                args.inputs.as_deref(),
            )
        }
        #[cfg(any(feature = "cuda", feature = "emulator"))]
        "cuda" => {
            return device::run::<distlops::core::Cuda>(
                comm,
                &args.workload,
                complex,
                reps,
                args.inputs.as_deref(),
            )
        }
        #[cfg(not(any(feature = "cuda", feature = "emulator")))]
        "cuda" => return Err("--engine cuda needs a build with feature `cuda`".into()),
        other => return Err(format!("unknown engine {other} (host, cuda or generic)").into()),
    }
    match (args.workload.as_str(), complex) {
        ("W1", false) => poststack::w1(comm, reps),
        ("W2", false) => poststack::w2(comm, reps),
        ("W3", false) => stencils::w3::<f64>(comm, reps),
        ("W3", true) => stencils::w3::<Complex64>(comm, reps),
        ("W4", false) => stencils::w4(comm, reps),
        ("W5", false) => poststack::w5(comm, reps),
        ("W12", false) => poststack::w12(comm, reps),
        ("W13", false) => kirchhoff::w13(comm, reps),
        ("W14", false) => nonstationary::w14(comm, reps),
        ("W6", false) => vector_ops::w6(comm, reps),
        ("W7", false) => matmul::w7::<f64>(comm, reps),
        ("W7", true) => matmul::w7::<Complex64>(comm, reps),
        ("W8", false) => mdc::w8(comm, reps, args.inputs.as_deref()),
        ("W9", true) => ffts::w9(comm, reps),
        ("W10", true) => ffts::w10(comm, reps),
        ("W11", false) => summa::w11::<f64>(comm, reps),
        ("W11", true) => summa::w11::<Complex64>(comm, reps),
        ("triad", false) => triad::triad(comm, reps),
        (w, _) => Err(format!("no workload {w} in dtype {}", args.dtype).into()),
    }
}

/// Runs the workload, then prints (and appends to `--out`) the records on rank 0.
fn run_and_report(comm: &Communicator, args: &Args) -> Res<()> {
    let records = run(comm, args)?;
    let peak = measure::peak_rss_mb(comm);
    if comm.rank() == 0 {
        let lines: Vec<String> = records
            .iter()
            .map(|r| r.to_json(comm.size(), peak))
            .collect();
        for line in &lines {
            println!("{line}");
        }
        if let Some(path) = &args.out {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            for line in &lines {
                writeln!(f, "{line}")?;
            }
        }
    }
    Ok(())
}

#[cfg(feature = "mpi")]
fn main_inner(args: &Args) -> Res<()> {
    let env = distlops::core::mpi::initialize()?;
    run_and_report(&env.world(), args)
}

#[cfg(not(feature = "mpi"))]
fn main_inner(args: &Args) -> Res<()> {
    let results = distlops::core::Threads::run(args.ranks.max(1), |comm| {
        run_and_report(&comm, args).map_err(|e| e.to_string())
    });
    results.into_iter().collect::<Result<Vec<()>, String>>()?;
    Ok(())
}

fn main() {
    let result = Args::parse().and_then(|args| main_inner(&args));
    if let Err(e) = result {
        eprintln!("distlops-bench: {e}");
        std::process::exit(1);
    }
}
