//! 3-D post-stack seismic inversion (PyLops-MPI's `tutorials/poststack.py`) on a synthetic
//! impedance model generated in code (`model.rs`): dipping layers, a normal fault, a sinuous
//! channel and a wedge.
//!
//! The model `m = ln(AI)` has shape `(ny, nx, nt)` and is split over the ranks along the crossline
//! axis `y`. Every rank models its own traces with the local
//! [`PoststackLinearModelling`](distlops::operators::local::PoststackLinearModelling)
//! (`d = w * D m` along time, Ricker wavelet of 15 Hz, 4 ms sampling), so the distributed modelling
//! operator is a `BlockDiag` with one block per rank, on the same N-D space as the 3-D
//! `Laplacian` used as regulariser. Starting from a smoothed model, three inversions run:
//!
//! * (a) CGLS on `G m = d`, no regularisation;
//! * (b) CGLS on the stacked system `[G; sqrt(eps) L] m = [d; 0]`;
//! * (c) CG on the normal equations `(G^H G + eps L^H L) m = G^H d`.
//!
//! Rank 0 prints the solver tables, the relative model errors and timings, and writes the
//! volumes as `.npy` files and PNG figures into the output folder. The program fails (non-zero
//! exit) if an inversion does not improve on the starting model by the margin the defaults reach.
//!
//! Threads (no MPI needed):   cargo run --release --example poststack -- --ranks 4
//! MPI:                       cargo build --release --features mpi --example poststack
//!                            mpirun -n 4 target/release/examples/poststack
//! Options: --help.

mod figures;
mod model;

use distlops::core::operator::{dottest, LinearOperatorExt, Op};
use distlops::core::{
    Communicator, DistVector, DistributedArray, Layout, StackedDistributedArray, Vector,
};
use distlops::ndarray::{Array3, ArrayD, Ix3};
use distlops::operators::local::{LocalOperator, PoststackLinearModelling};
use distlops::operators::wavelets::ricker;
use distlops::operators::{BlockDiag, Laplacian, LaplacianParams, StackedVStack};
use distlops::solvers::{cg, cgls, CgParams, CglsParams};
use figures::{ColourMap, Cuts};
use model::ModelParams;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

type Res<T> = Result<T, Box<dyn Error>>;

/// Command-line options.
#[derive(Debug, Clone)]
struct Args {
    ny: usize,
    nx: usize,
    nt: usize,
    niter: usize,
    eps: f64,
    noise: f64,
    seed: u64,
    out: PathBuf,
    ranks: usize,
    figures: bool,
    check: bool,
    compare: Option<PathBuf>,
    quiet: bool,
}

const USAGE: &str = "\
poststack: 3-D post-stack seismic inversion (PyLops-MPI's post-stack tutorial)

options:
  --ny N         crosslines, the distributed axis (default 40)
  --nx N         inlines (default 80)
  --nt N         time samples, at least 41 (default 120)
  --niter N      iterations of each solver (default 100)
  --eps F        regularisation weight of the Laplacian (default 0.1)
  --noise F      Gaussian noise, as a fraction of the data's RMS (default 0.02)
  --seed N       noise seed (default 42)
  --out DIR      output folder for .npy files and figures (default poststack-out)
  --ranks N      ranks on the Threads communicator (default 4; ignored under mpirun)
  --no-figures   write the .npy files only
  --no-check     do not fail when an inversion misses the error targets
  --compare DIR  compare the .npy volumes with those in DIR (fails above 1e-10 relative)
  --quiet        no solver tables
";

impl Args {
    fn parse() -> Res<Args> {
        let mut a = Args {
            ny: 40,
            nx: 80,
            nt: 120,
            niter: 100,
            eps: 0.1,
            noise: 0.02,
            seed: 42,
            out: PathBuf::from("poststack-out"),
            ranks: 4,
            figures: true,
            check: true,
            compare: None,
            quiet: false,
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--ny" => a.ny = value()?.parse()?,
                "--nx" => a.nx = value()?.parse()?,
                "--nt" => a.nt = value()?.parse()?,
                "--niter" => a.niter = value()?.parse()?,
                "--eps" => a.eps = value()?.parse()?,
                "--noise" => a.noise = value()?.parse()?,
                "--seed" => a.seed = value()?.parse()?,
                "--out" => a.out = value()?.into(),
                "--ranks" => a.ranks = value()?.parse()?,
                "--compare" => a.compare = Some(value()?.into()),
                "--no-figures" => a.figures = false,
                "--no-check" => a.check = false,
                "--quiet" => a.quiet = true,
                "-h" | "--help" => {
                    print!("{USAGE}");
                    std::process::exit(0);
                }
                other => return Err(format!("unknown option {other}\n\n{USAGE}").into()),
            }
        }
        if a.nt < 41 || a.nx < 2 || a.ny < 1 || a.ranks < 1 {
            return Err(
                "need nt >= 41 (the wavelet's length), nx >= 2, ny >= 1, ranks >= 1".into(),
            );
        }
        Ok(a)
    }
}

/// The relative model errors must be at most these multiples of the starting model's error.
/// The defaults reach 0.88-0.94 for (a), which starts fitting the noise (the exact value depends
/// on the number of ranks, see the README), so (a) must only improve on the starting model; they
/// reach 0.436 for (b) and (c), and smaller models 0.5-0.56.
const TARGETS: [(&str, f64); 3] = [("a", 1.0), ("b", 0.6), ("c", 0.6)];

/// An odd box length of about `n / div`, at least 1.
fn box_len(n: usize, div: usize) -> usize {
    (n / div) | 1
}

/// `|a - b|_2 / |b|_2` of distributed vectors (one all-reduce each).
fn rel_err(a: &DistVector<f64>, b: &DistVector<f64>) -> Res<f64> {
    let mut diff = a.clone();
    diff.axpy(-1.0, b)?;
    Ok(diff.norm(Default::default())? / b.norm(Default::default())?)
}

/// The plain array of a plain distributed vector.
fn array(v: &DistVector<f64>) -> &DistributedArray<f64> {
    v.as_array().expect("a plain vector")
}

fn run(comm: &Communicator, args: &Args) -> Res<()> {
    let root = comm.rank() == 0;
    let say = |s: String| {
        if root {
            println!("{s}");
        }
    };
    let p = ModelParams {
        ny: args.ny,
        nx: args.nx,
        nt: args.nt,
    };
    let dims = [p.ny, p.nx, p.nt];
    let t0 = Instant::now();

    // The model and the starting model, built on every rank (each keeps its slab).
    let ai = model::impedance(p);
    let m_true = ai.mapv(f64::ln);
    let m_back = model::smooth(
        &m_true,
        [box_len(p.ny, 8), box_len(p.nx, 6), box_len(p.nt, 6)],
    );
    let layout = Layout::scatter(&dims, 0, comm.size())?;
    let dist = |a: &Array3<f64>| -> Res<DistVector<f64>> {
        Ok(DistributedArray::to_dist(comm, a.view().into_dyn(), &layout)?.into())
    };
    let m = dist(&m_true)?;
    let mback = dist(&m_back)?;

    // The modelling operator: one PoststackLinearModelling on this rank's (ny_local, nx, nt)
    // traces, on the Laplacian's N-D space.
    let t: Vec<f64> = (0..21).map(|i| 0.004 * i as f64).collect();
    let (wav, _) = ricker(&t, 15.0);
    let local_dims = [layout.count(comm.rank()), p.nx, p.nt];
    let block: Box<dyn LocalOperator<f64>> =
        Box::new(PoststackLinearModelling::new(&local_dims, wav, 2)?);
    let g = Op::new(BlockDiag::new(comm, vec![block])?.with_spaces(&layout, &layout)?);
    let lap = Op::new(Laplacian::<f64>::with_layout(
        comm,
        &layout,
        LaplacianParams {
            axes: vec![0, 1, 2],
            ..Default::default()
        },
    )?);

    // The data, with optional noise that depends only on the global sample index.
    let mut d = g.apply(&m)?;
    if args.noise > 0.0 {
        let rms = d.norm(Default::default())? / (d.global_len() as f64).sqrt();
        let first = (layout.offset(comm.rank()) * p.nx * p.nt) as u64;
        let DistVector::Array(da) = &mut d else {
            unreachable!("plain data")
        };
        for (i, v) in da.local_slice_mut().iter_mut().enumerate() {
            *v += args.noise * rms * model::gaussian(args.seed, first + i as u64);
        }
    }
    let dot_g = dottest(&g, &mback, &d)?;
    let dot_l = dottest(&lap, &mback, &m)?;
    say(format!(
        "post-stack inversion: model (ny, nx, nt) = {dims:?} on {} ranks, {} iterations, eps = {}, \
         noise = {}; dot tests: G {:.1e}, L {:.1e}; setup {:.2} s",
        comm.size(),
        args.niter,
        args.eps,
        args.noise,
        dot_g.rel_err,
        dot_l.rel_err,
        t0.elapsed().as_secs_f64()
    ));
    if !(dot_g.passes(1e-10) && dot_l.passes(1e-10)) {
        return Err(format!("dot test failed: {dot_g:?} {dot_l:?}").into());
    }
    let show = !args.quiet;

    // (a) CGLS without regularisation.
    let t1 = Instant::now();
    let params = CglsParams {
        niter: args.niter,
        tol: 0.0,
        show,
        ..CglsParams::default()
    };
    let inv_a = cgls(&g, &d, Some(mback.view()), params.clone(), None)?.x;
    let time_a = t1.elapsed().as_secs_f64();

    // (b) CGLS on the stacked system [G; sqrt(eps) L] m = [d; 0].
    let t2 = Instant::now();
    let stack = StackedVStack::new(vec![g.clone(), lap.scale(args.eps.sqrt())])?;
    let zero = lap.new_range_vector()?;
    let dstack = DistVector::Stacked(StackedDistributedArray::new(vec![d.clone(), zero])?);
    let inv_b = cgls(&stack, &dstack, Some(mback.view()), params, None)?.x;
    let time_b = t2.elapsed().as_secs_f64();

    // (c) CG on the normal equations (G^H G + eps L^H L) m = G^H d.
    let t3 = Instant::now();
    let normal = ((g.h() * &g) + args.eps * (lap.h() * &lap)?)?;
    let rhs = g.apply_adjoint(&d)?;
    let cg_params = CgParams {
        niter: args.niter,
        tol: 0.0,
        show,
        ..CgParams::default()
    };
    let inv_c = cg(&normal, &rhs, Some(mback.view()), cg_params, None)?.x;
    let time_c = t3.elapsed().as_secs_f64();

    // Errors, in ln(AI), relative to the true model and to the starting model's error.
    let err_back = rel_err(&mback, &m)?;
    let mut failed = Vec::new();
    say(format!(
        "\n{:<44} {:>12} {:>14} {:>9}",
        "model", "rel. error", "vs starting", "time [s]"
    ));
    say(format!(
        "{:<44} {:>12.4e} {:>14.3} {:>9}",
        "starting model (smoothed)", err_back, 1.0, "-"
    ));
    let results = [
        ("(a) CGLS, G m = d", &inv_a, time_a),
        ("(b) CGLS, [G; sqrt(eps) L] m = [d; 0]", &inv_b, time_b),
        ("(c) CG, (G^H G + eps L^H L) m = G^H d", &inv_c, time_c),
    ];
    for ((name, inv, time), (key, target)) in results.iter().zip(TARGETS) {
        let err = rel_err(inv, &m)?;
        say(format!(
            "{name:<44} {err:>12.4e} {:>14.3} {time:>9.2}",
            err / err_back
        ));
        if err / err_back > target {
            failed.push(format!(
                "({key}): error ratio {:.3} above the target {target}",
                err / err_back
            ));
        }
    }

    // Gather the volumes on rank 0 and write them.
    let volumes = [
        ("model", &m),
        ("background", &mback),
        ("data", &d),
        ("inv_cgls", &inv_a),
        ("inv_cgls_reg", &inv_b),
        ("inv_cg_normal", &inv_c),
    ];
    let mut gathered = Vec::new();
    for (name, v) in volumes {
        if let Some(a) = array(v).gather(0)? {
            gathered.push((name, a.into_dimensionality::<Ix3>()?));
        }
    }
    if root {
        write_outputs(args, &gathered)?;
        say(format!(
            "\nwrote {} volumes (.npy){} to {}; total {:.2} s",
            gathered.len(),
            if args.figures {
                " and figures (.png)"
            } else {
                ""
            },
            args.out.display(),
            t0.elapsed().as_secs_f64()
        ));
        if let Some(dir) = &args.compare {
            let worst = compare(dir, &gathered)?;
            println!(
                "largest relative difference from {}: {worst:.2e}",
                dir.display()
            );
            if worst > 1e-10 {
                failed.push(format!(
                    "outputs differ from {} by {worst:.2e}",
                    dir.display()
                ));
            }
        }
    }
    if args.check && !failed.is_empty() {
        return Err(format!("post-stack inversion failed: {}", failed.join("; ")).into());
    }
    Ok(())
}

/// Writes the `.npy` volumes and, if asked, the figures (rank 0).
fn write_outputs(args: &Args, volumes: &[(&str, Array3<f64>)]) -> Res<()> {
    std::fs::create_dir_all(&args.out)?;
    for (name, v) in volumes {
        ndarray_npy::write_npy(args.out.join(format!("{name}.npy")), v)?;
    }
    if !args.figures {
        return Ok(());
    }
    let (ny, nx, nt) = volumes[0].1.dim();
    let cuts = Cuts {
        iy: ny / 2,
        ix: nx / 4,
        it: ((model::CHANNEL_T * nt as f64) as usize).min(nt - 1),
    };
    let ai_true = volumes[0].1.mapv(f64::exp);
    let (lo, hi) = ai_true
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let titles = [
        ("model", "True acoustic impedance"),
        ("background", "Starting model (smoothed)"),
        ("inv_cgls", "(a) CGLS, no regularisation"),
        (
            "inv_cgls_reg",
            "(b) CGLS on [G; sqrt(eps) L] (3-D Laplacian)",
        ),
        ("inv_cg_normal", "(c) CG on G^H G + eps L^H L"),
    ];
    for (name, v) in volumes {
        let path = args.out.join(format!("{name}.png"));
        if *name == "data" {
            let amax = v.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
            figures::volume_figure(
                &path,
                v.view(),
                cuts,
                "Post-stack data d = w * D ln(AI)",
                "amplitude",
                (ColourMap::Seismic, -amax, amax),
            )?;
        } else if let Some((_, title)) = titles.iter().find(|(n, _)| n == name) {
            figures::volume_figure(
                &path,
                v.mapv(f64::exp).view(),
                cuts,
                title,
                "AI",
                (ColourMap::Viridis, lo, hi),
            )?;
        }
    }
    Ok(())
}

/// The largest `|a - b| / |b|` between these volumes and the `.npy` files of the same names in
/// `dir`.
fn compare(dir: &Path, volumes: &[(&str, Array3<f64>)]) -> Res<f64> {
    let mut worst = 0.0f64;
    for (name, v) in volumes {
        let path = dir.join(format!("{name}.npy"));
        let other: ArrayD<f64> = ndarray_npy::read_npy(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if other.shape() != v.shape() {
            return Err(format!("{} has shape {:?}", path.display(), other.shape()).into());
        }
        let diff: f64 = v
            .iter()
            .zip(other.iter())
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            .sqrt();
        let norm = other.iter().map(|b| b * b).sum::<f64>().sqrt();
        let rel = diff / norm.max(f64::MIN_POSITIVE);
        println!("  {name:<14} relative difference {rel:.2e}");
        worst = worst.max(rel);
    }
    Ok(worst)
}

#[cfg(feature = "mpi")]
fn main() -> Res<()> {
    let args = Args::parse()?;
    let env = distlops::core::mpi::initialize()?;
    run(&env.world(), &args)
}

#[cfg(not(feature = "mpi"))]
fn main() -> Res<()> {
    let args = Args::parse()?;
    let results = distlops::core::Threads::run(args.ranks, |comm| {
        run(&comm, &args).map_err(|e| e.to_string())
    });
    results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(())
}
