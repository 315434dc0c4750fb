//! Denoising a seismic section in overlapping patches with a sparse transform per patch (the
//! patch-wise sparsity of PyLops' `plot_patching` example): the section is modelled as
//! `d = P c`, where [`Patch2D`] places every patch's 2-D inverse DCT of its coefficients `c_uv`
//! (Hanning-tapered, the patches overlapping by half), and the coefficients are found by
//!
//! ```text
//! min_c 1/2 |P c - d|^2 + eps |c|_1       (FISTA with backtracking: ProximalGradient, L2Data, L1)
//! ```
//!
//! Linear and curved events are locally plane waves, compact in a patch's DCT; the noise is not.
//! The rows of patches (traces) are split over the ranks; each product exchanges only the
//! overlapping traces with the neighbours.
//!
//! Fails (non-zero exit) unless the dot test passes and the denoised section `P c` is closer to
//! the clean one than [`TARGET`] times the noisy data's error. The results do not depend on the
//! number of ranks (the operator's sums and the solver's reductions have a fixed order, and
//! each rank draws the noise of its own traces by global index). `--out DIR` writes
//! `clean.npy`, `noisy.npy`, `denoised.npy` (`(nx, nt)`) and `patch_denoise.png`.
//!
//! Threads (no MPI needed):   cargo run --release --example patch_denoise -- 3
//! MPI:                       cargo build --release --features mpi --example patch_denoise
//!                            mpirun -n 3 target/release/examples/patch_denoise
//!
//! [`Patch2D`]: distlops::operators::Patch2D

#[allow(dead_code)]
#[path = "poststack/figures.rs"]
mod figures;
#[path = "common/noise.rs"]
mod noise;

use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, DistVector, NormOrd, Vector};
use distlops::io::npy::write_npy;
use distlops::ndarray::{Array2, ArrayD};
use distlops::operators::local::MatrixMult;
use distlops::operators::wavelets::ricker;
use distlops::operators::{Patch2D, Taper};
use distlops::solvers::{proximal_gradient, Acceleration, L2Data, ProximalGradientParams, L1};
use figures::{AxisCoords, ColourMap, Group, Image};
use std::path::PathBuf;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Traces and time samples (`8 + 4 k` and `16 + 8 k`: the patches cover them).
const SHAPE: [usize; 2] = [44, 120];
/// Patch size and overlap, traces by samples.
const NWIN: [usize; 2] = [8, 16];
const NOVER: [usize; 2] = [4, 8];
/// The time step (s).
const DT: f64 = 0.004;
/// The noise's standard deviation, as a fraction of the clean section's peak.
const NOISE: f64 = 0.2;
/// The weight of the sparsity term, relative to the noise's standard deviation.
const EPS: f64 = 0.7;
/// FISTA's iterations.
const NITER: usize = 80;
/// The denoised section's largest error, as a fraction of the noisy data's.
const TARGET: f64 = 0.6;

/// The orthonormal DCT-II matrix of size `n`: `C[k, j] = s_k cos(pi (j + 1/2) k / n)`.
fn dct(n: usize) -> Array2<f64> {
    Array2::from_shape_fn((n, n), |(k, j)| {
        let s = if k == 0 {
            1.0 / n as f64
        } else {
            2.0 / n as f64
        };
        s.sqrt() * (std::f64::consts::PI * (j as f64 + 0.5) * k as f64 / n as f64).cos()
    })
}

/// The inverse 2-D DCT of a patch, `(k0, k1)` coefficients to `(j0, j1)` samples:
/// `A[(j0, j1), (k0, k1)] = C0[k0, j0] C1[k1, j1]`.
fn inverse_dct_2d() -> Array2<f64> {
    let (c0, c1) = (dct(NWIN[0]), dct(NWIN[1]));
    let (n0, n1) = (NWIN[0], NWIN[1]);
    Array2::from_shape_fn((n0 * n1, n0 * n1), |(j, k)| {
        c0[[k / n1, j / n1]] * c1[[k % n1, j % n1]]
    })
}

/// The clean section at trace `ix`: three linear events and one curved, each a 20 Hz Ricker.
fn clean_trace(ix: usize, wavelet: &[f64], centre: usize) -> Vec<f64> {
    let x = ix as f64;
    let events = [
        (20.0 + 0.9 * x, 1.0),
        (95.0 - 0.8 * x, -0.7),
        (60.0 + 0.25 * x, 0.6),
        (40.0 + (x - 22.0).powi(2) / 12.0, 0.5),
    ];
    let mut trace = vec![0.0; SHAPE[1]];
    for (t0, amp) in events {
        for (k, w) in wavelet.iter().enumerate() {
            let t = t0 + k as f64 - centre as f64;
            let (it, f) = (t.floor(), t - t.floor());
            for (i, weight) in [(it, 1.0 - f), (it + 1.0, f)] {
                if (0.0..SHAPE[1] as f64).contains(&i) {
                    trace[i as usize] += amp * w * weight;
                }
            }
        }
    }
    trace
}

/// `|a - b| / |b|`.
fn rel_err(a: &DistVector<f64>, b: &DistVector<f64>) -> Res<f64> {
    let mut e = a.clone();
    e.axpy(-1.0, b)?;
    Ok(e.norm(NormOrd::Two)? / b.norm(NormOrd::Two)?)
}

/// `[RANKS]` (default 3) and `--out DIR`.
fn args() -> Res<(usize, Option<PathBuf>)> {
    let (mut ranks, mut out) = (3, None);
    let mut it = std::env::args().skip(1);
    while let Some(s) = it.next() {
        match s.as_str() {
            "--out" => out = Some(PathBuf::from(it.next().ok_or("--out needs a folder")?)),
            n => ranks = n.parse().map_err(|_| format!("unknown argument {n}"))?,
        }
    }
    Ok((ranks, out))
}

fn run(comm: &Communicator, out: Option<&PathBuf>) -> Res<()> {
    let t0 = Instant::now();
    let window = MatrixMult::new(inverse_dct_2d())?;
    let op = Patch2D::<f64, _>::new(comm, window, SHAPE, NWIN, NOVER, Taper::Hanning)?;

    // The clean section (this rank's traces, in the operator's data layout) and the noise.
    let t: Vec<f64> = (0..25).map(|k| k as f64 * DT).collect();
    let (wavelet, centre) = ricker(&t, 20.0);
    let layout = op.range().layout()?.clone();
    let (first, count) = (layout.offset(comm.rank()), layout.count(comm.rank()));
    let nt = SHAPE[1];
    let mut clean = op.new_range_vector()?;
    let mut noisy = op.new_range_vector()?;
    if let (DistVector::Array(c), DistVector::Array(n)) = (&mut clean, &mut noisy) {
        let (c, n) = (c.local_slice_mut(), n.local_slice_mut());
        for ix in 0..count {
            let trace = clean_trace(first + ix, &wavelet, centre);
            c[ix * nt..(ix + 1) * nt].copy_from_slice(&trace);
        }
        // The clean peak is 1 (the first event); the noise by global index.
        for (i, (n, c)) in n.iter_mut().zip(c.iter()).enumerate() {
            *n = c + NOISE * noise::normal((first * nt + i) as u64);
        }
    }
    let mut ones = op.new_domain_vector()?;
    ones.fill(1.0);
    let dot = dottest(&op, &ones, &noisy)?;
    if !dot.passes(1e-12) {
        return Err(format!("dot test failed: {dot:?}").into());
    }

    // Sparse coefficients by FISTA, and the denoised section P c.
    let t1 = Instant::now();
    let data_term = L2Data::new(&op, &noisy, 1.0)?;
    let params = ProximalGradientParams {
        niter: NITER,
        acceleration: Acceleration::Fista,
        ..ProximalGradientParams::default()
    };
    let zero = op.new_domain_vector()?;
    let sol = proximal_gradient(&data_term, &L1 { sigma: EPS * NOISE }, &zero, params, None)?;
    let denoised = op.apply(&sol.x)?;
    let time = t1.elapsed().as_secs_f64();
    let (err_noisy, err) = (rel_err(&noisy, &clean)?, rel_err(&denoised, &clean)?);
    let nonzero = sol.x.asarray().iter().filter(|v| **v != 0.0).count();
    let total = op.domain().layout()?.global_len();

    let sections = [&clean, &noisy, &denoised].map(|v| {
        let a: ArrayD<f64> = v.asarray();
        a.into_dimensionality::<distlops::ndarray::Ix2>()
            .expect("a 2-D section")
    });
    if let Some(dir) = out {
        // Collective: every rank writes its traces.
        std::fs::create_dir_all(dir)?;
        for (name, v) in ["clean", "noisy", "denoised"]
            .iter()
            .zip([&clean, &noisy, &denoised])
        {
            if let DistVector::Array(a) = v {
                write_npy(dir.join(format!("{name}.npy")), a)?;
            }
        }
    }
    if comm.rank() == 0 {
        let (np0, np1) = op.patches();
        println!(
            "patch-wise denoising: {} x {} section in {np0} x {np1} patches of {} x {} \
             (overlap {} x {}), noise {NOISE} of the peak, on {} ranks; dot test {:.1e}",
            SHAPE[0],
            SHAPE[1],
            NWIN[0],
            NWIN[1],
            NOVER[0],
            NOVER[1],
            comm.size(),
            dot.rel_err
        );
        println!("{:<48} {:>12}", "section", "rel. error");
        println!("{:<48} {err_noisy:>12.4e}", "noisy data");
        println!(
            "{:<48} {err:>12.4e}   ({nonzero} of {total} coefficients, {time:.2} s)",
            format!("FISTA, {NITER} iterations, eps = {:.2}", EPS * NOISE)
        );
        if let Some(dir) = out {
            let x = AxisCoords {
                name: "trace".into(),
                values: (0..SHAPE[0]).map(|i| i as f64).collect(),
            };
            let tz = AxisCoords {
                name: "time (ms)".into(),
                values: (0..nt).map(|i| i as f64 * DT * 1e3).collect(),
            };
            let images: Vec<Array2<f64>> = sections.iter().map(|s| s.t().to_owned()).collect();
            let captions = ["clean", "noisy", "denoised (patch-wise DCT, L1)"];
            let group = Group {
                images: images
                    .iter()
                    .zip(captions)
                    .map(|(img, caption)| Image {
                        img,
                        caption: caption.to_string(),
                        x: &x,
                        y: &tz,
                    })
                    .collect(),
                label: "amplitude",
                style: (ColourMap::Seismic, -1.0, 1.0),
            };
            let path = dir.join("patch_denoise.png");
            figures::panels_figure(&path, "Patch-wise sparse denoising", &[group], (1200, 420))?;
            println!("wrote {} and the .npy files", path.display());
        }
        println!("total {:.2} s", t0.elapsed().as_secs_f64());
    }
    if err > TARGET * err_noisy {
        return Err(format!(
            "the denoised section's error {err:.3e} misses its target (below {TARGET} of the \
             noisy data's {err_noisy:.3e})"
        )
        .into());
    }
    Ok(())
}

fn main() {
    let (ranks, out) = args().unwrap_or_else(|e| {
        eprintln!("patch_denoise: {e}");
        std::process::exit(2)
    });
    distlops::run_with(ranks, |comm| run(comm, out.as_ref()));
}
