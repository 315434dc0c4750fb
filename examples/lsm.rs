//! Least-squares Kirchhoff migration (PyLops-MPI's `lsm.py` tutorial, smaller): a layered
//! reflectivity with a fault, 12 sources and 11 receivers at the surface of a constant-velocity
//! medium, the sources split over the ranks ([`Kirchhoff::distributed`]: one Kirchhoff
//! demigration operator per source in a `VStack` over the replicated image).
//!
//! * modelling: `d = W K m` (travel times from every source and receiver to every image point,
//!   the image spread along them, the 20 Hz Ricker wavelet);
//! * migration: `m_mig = K^H W^H d`, the adjoint (a smeared, unscaled image);
//! * least-squares migration: CGLS on `W K m = d` from zero (the image sharpened towards the
//!   true reflectivity).
//!
//! Writes `reflectivity.npy`, `data.npy`, `migrated.npy`, `lsm.npy` (the images `(nx, nz)`, the
//! data `(ns, nr, nt)`) and `lsm.png` (the three images with their axes in metres) into `--out`
//! (default `lsm-out/`). Fails (non-zero exit) unless the dot test passes, the least-squares
//! image's error is below [`TARGET`] of the true reflectivity's norm, and its data residual below
//! [`RESIDUAL`]. The images have the same bits at every rank count (`scripts/lsm-ranks.sh`
//! checks 1-4 ranks on threads and under `mpirun`).
//!
//! Threads (no MPI needed):   cargo run --release --example lsm -- 3
//! MPI:                       cargo build --release --features mpi --example lsm
//!                            mpirun -n 3 target/release/examples/lsm
//! Options: `[RANKS]`, `--out DIR`, `--niter N` (default 60), `--no-figures`, `--dynamic`
//! (PyLops' `dynamic=True` with its defaults, [`DynamicParams::new`]: amplitudes, the
//! obliquity factor and the angle taper), `--wavfilter` (PyLops' `wavfilter=True`, the wavelet
//! through [`filtered_wavelet`]), `--image-split LINES` (the image split over the ranks in
//! parts of `LINES` lines of x, every source on every rank: [`Kirchhoff::image_split`]
//! instead of the sources split).
//!
//! [`Kirchhoff::image_split`]: distlops::operators::local::Kirchhoff::image_split
//!
//! [`DynamicParams::new`]: distlops::operators::local::DynamicParams::new
//! [`filtered_wavelet`]: distlops::operators::local::filtered_wavelet
//!
//! [`Kirchhoff::distributed`]: distlops::operators::local::Kirchhoff::distributed

// The post-stack example's figures (`panels_figure`, its colour maps and bars).
#[allow(dead_code)]
#[path = "poststack/figures.rs"]
mod figures;

use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt, Op, Space};
use distlops::core::{Communicator, DistVector, DistributedArray, Host, NormOrd, Partition};
use distlops::core::{Vector, VectorRef};
use distlops::io::npy::write_npy;
use distlops::ndarray::{Array2, ArrayD, IxDyn};
use distlops::operators::local::{
    filtered_wavelet, DynamicParams, ImageGrid, Kirchhoff, KirchhoffParams,
};
use distlops::operators::wavelets::ricker;
use distlops::solvers::{cgls, CglsParams};
use figures::{AxisCoords, ColourMap, Group, Image};
use std::error::Error;
use std::path::PathBuf;

type Res<T> = Result<T, Box<dyn Error>>;

/// The image: `NX x NZ` points `D` metres apart.
const NX: usize = 41;
const NZ: usize = 30;
const D: f64 = 8.0;
/// The velocity (m/s).
const VEL: f64 = 1000.0;
/// Sources and receivers.
const NS: usize = 12;
const NR: usize = 11;
/// Time samples and step (s).
const NT: usize = 201;
const DT: f64 = 0.004;
/// The least-squares image's largest error, relative to the true reflectivity's norm.
const TARGET: f64 = 0.15;
/// The least-squares image's largest data residual, relative to the data's norm.
const RESIDUAL: f64 = 0.01;

/// The true reflectivity at `(ix, iz)`: a flat reflector at depth index 10, and one at 19 that a
/// fault at the middle of the section drops by 4 samples.
fn reflectivity(ix: usize, iz: usize) -> f64 {
    let deep = if ix < NX / 2 { 19 } else { 23 };
    match iz {
        10 => -1.0,
        z if z == deep => 0.6,
        _ => 0.0,
    }
}

/// `n` points from `a` to `b` at depth `z`.
fn line(n: usize, a: f64, b: f64, z: f64) -> Vec<Vec<f64>> {
    (0..n)
        .map(|k| vec![a + (b - a) * k as f64 / (n - 1) as f64, z])
        .collect()
}

/// The options.
struct Args {
    ranks: usize,
    out: PathBuf,
    niter: usize,
    figures: bool,
    dynamic: bool,
    wavfilter: bool,
    /// Lines of x per part of an image split; `None`: the sources split.
    image_split: Option<usize>,
}

fn args() -> Res<Args> {
    let mut a = Args {
        ranks: 3,
        out: PathBuf::from("lsm-out"),
        niter: 60,
        figures: true,
        dynamic: false,
        wavfilter: false,
        image_split: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(s) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{s} needs a value"));
        match s.as_str() {
            "--out" => a.out = PathBuf::from(value()?),
            "--niter" => a.niter = value()?.parse()?,
            "--no-figures" => a.figures = false,
            "--dynamic" => a.dynamic = true,
            "--wavfilter" => a.wavfilter = true,
            "--image-split" => a.image_split = Some(value()?.parse()?),
            n => a.ranks = n.parse().map_err(|_| format!("unknown argument {n}"))?,
        }
    }
    Ok(a)
}

/// `|a - b| / |b|`.
fn rel_err(a: &DistVector<f64>, b: VectorRef<'_, f64>) -> Res<f64> {
    let mut e = a.clone();
    e.axpy(-1.0, &b.to_owned())?;
    Ok(e.norm(NormOrd::Two)? / b.to_owned().norm(NormOrd::Two)?)
}

/// The vector of `space` whose value at global index `i` is `f(i)`, each rank making its own
/// part (all of it when the space is Broadcast).
fn by_index(comm: &Communicator, space: &Space, f: impl Fn(usize) -> f64) -> Res<DistVector<f64>> {
    let layout = space.layout()?;
    let first = match layout.partition() {
        Partition::Scatter => layout.offset(comm.rank()),
        _ => 0,
    };
    let local = ArrayD::from_shape_fn(IxDyn(&[layout.local_len(comm.rank())]), |i| f(first + i[0]));
    Ok(DistributedArray::from_local_with_layout(comm, layout, local)?.into())
}

/// The image `(NX, NZ)` of a vector as rows of depth, columns of x.
/// [Collective](distlops::core#collective-calls) for a Scatter vector (an image split).
fn section(v: &DistVector<f64>) -> Array2<f64> {
    let a = v.asarray();
    Array2::from_shape_fn((NZ, NX), |(iz, ix)| a[ix * NZ + iz])
}

fn run(comm: &Communicator, args: &Args) -> Res<()> {
    let t0 = std::time::Instant::now();
    let axis = |n: usize| (0..n).map(|i| i as f64 * D).collect::<Vec<f64>>();
    let grid = ImageGrid::new_2d(axis(NX), axis(NZ));
    let width = D * (NX - 1) as f64;
    let srcs = line(NS, 0.05 * width, 0.95 * width, 10.0);
    let recs = line(NR, 0.05 * width, 0.95 * width, 20.0);
    let t: Vec<f64> = (0..21).map(|k| k as f64 * DT).collect();
    let (mut wavelet, wavcenter) = ricker(&t, 20.0);
    if args.wavfilter {
        wavelet = filtered_wavelet(&wavelet, DT, 2)?;
    }
    let params = KirchhoffParams {
        nt: NT,
        dt: DT,
        wavelet,
        wavcenter,
        dynamic: args.dynamic.then(|| DynamicParams::new(VEL)),
    };
    let split = (&srcs[..], &recs[..]);
    let op: Op<f64> = match args.image_split {
        // Each rank models a balanced block of the sources, in order (the image on every rank).
        None => Op::new(Kirchhoff::<f64>::constant_velocity_split(
            comm, &Host, &grid, split, VEL, &params,
        )?),
        // Each rank holds a block of the image's lines of x (the data on every rank).
        Some(lines) => Kirchhoff::<f64>::constant_velocity_image_split(
            comm, &Host, &grid, split, VEL, &params, lines,
        )?,
    };

    // The true reflectivity and the data; the dot test on a model and data of other patterns.
    // Each rank makes its own part from the global index: the same vectors on every rank
    // count and for either split.
    let m = by_index(comm, op.domain(), |i| reflectivity(i / NZ, i % NZ))?;
    let d = op.apply(&m)?;
    let y = by_index(comm, op.range(), |i| (i * 7919 % 1000) as f64 / 500.0 - 1.0)?;
    let x = by_index(comm, op.domain(), |i| (i % 13) as f64 / 6.0 - 1.0)?;
    let dot = dottest(&op, &x, &y)?;
    if !dot.passes(1e-12) {
        return Err(format!("dot test failed: {dot:?}").into());
    }

    let migrated = op.apply_adjoint(&d)?;
    let params = CglsParams {
        niter: args.niter,
        tol: 0.0,
        ..CglsParams::default()
    };
    let t1 = std::time::Instant::now();
    let sol = cgls(&op, &d, None, params, None)?;
    let time_lsm = t1.elapsed().as_secs_f64();
    let lsm = sol.x;
    let err = rel_err(&lsm, m.view())?;
    let mut r = op.apply(&lsm)?;
    r.axpy(-1.0, &d)?;
    let residual = r.norm(NormOrd::Two)? / d.norm(NormOrd::Two)?;
    // The migrated image scaled to the true one by least squares, for a fair comparison.
    let scale = migrated.vdot(&m)? / migrated.vdot(&migrated)?;
    let mut scaled = migrated.clone();
    scaled.scale(scale);
    let err_mig = rel_err(&scaled, m.view())?;

    if comm.rank() == 0 {
        std::fs::create_dir_all(&args.out)?;
    }
    comm.barrier();
    for (name, v) in [
        ("reflectivity", &m),
        ("data", &d),
        ("migrated", &migrated),
        ("lsm", &lsm),
    ] {
        let DistVector::Array(a) = v else {
            unreachable!("plain vectors")
        };
        write_npy(args.out.join(format!("{name}.npy")), a)?;
    }
    // Gathered on every rank (a collective call for an image split).
    let sections = [section(&m), section(&migrated), section(&lsm)];
    if comm.rank() == 0 {
        println!(
            "least-squares Kirchhoff migration{}{}{}: {NX} x {NZ} image, {NS} sources x {NR} \
             receivers x {NT} samples on {} ranks; dot test {:.1e}",
            match args.image_split {
                Some(l) => format!(", the image split in parts of {l} lines"),
                None => String::new(),
            },
            if args.dynamic { ", dynamic" } else { "" },
            if args.wavfilter {
                ", filtered wavelet"
            } else {
                ""
            },
            comm.size(),
            dot.rel_err
        );
        println!("{:<44} {:>12}", "image", "rel. error");
        println!(
            "{:<44} {err_mig:>12.4e}",
            "migration (adjoint), best scaled"
        );
        println!(
            "{:<44} {err:>12.4e}   (data residual {residual:.2e}, {time_lsm:.2} s)",
            format!("least squares, CGLS {} iterations", args.niter)
        );
        if args.figures {
            let x = AxisCoords {
                name: "x (m)".into(),
                values: axis(NX),
            };
            let z = AxisCoords {
                name: "depth (m)".into(),
                values: axis(NZ),
            };
            let captions = [
                "true reflectivity".to_string(),
                "migration (adjoint)".to_string(),
                format!("least squares ({} CGLS iterations)", args.niter),
            ];
            let groups: Vec<Group<'_>> = sections
                .iter()
                .zip(captions)
                .map(|(img, caption)| {
                    let amax = img.iter().fold(1e-30f64, |a, v| a.max(v.abs()));
                    Group {
                        images: vec![Image {
                            img,
                            caption,
                            x: &x,
                            y: &z,
                        }],
                        label: "amplitude",
                        style: (ColourMap::Seismic, -amax, amax),
                    }
                })
                .collect();
            let path = args.out.join("lsm.png");
            figures::panels_figure(
                &path,
                "Least-squares Kirchhoff migration",
                &groups,
                (1500, 420),
            )?;
            println!("wrote {} and the .npy files", path.display());
        }
        println!("total {:.2} s", t0.elapsed().as_secs_f64());
    }
    if err > TARGET || residual > RESIDUAL {
        return Err(format!(
            "the least-squares image misses its targets: error {err:.3e} (at most {TARGET}), data \
             residual {residual:.3e} (at most {RESIDUAL})"
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = args().unwrap_or_else(|e| {
        eprintln!("lsm: {e}");
        std::process::exit(2)
    });
    distlops::run_with(args.ranks, |comm| run(comm, &args));
}
