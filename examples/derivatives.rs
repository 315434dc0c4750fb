//! Derivatives of an impulse (PyLops-MPI's `plot_derivative` example): a model of shape (11, 21)
//! and one of shape (12, 21), zero but for a 1 in the middle, distributed along axis 0. The
//! first and second derivatives (along axis 0), the Laplacian with weights (1, 1) and (3, 1) and
//! the gradient are applied forward and adjoint, checked against the serial operators on the
//! gathered model (and with dot tests), and the impulse responses are drawn, one PNG per shape, in
//! the output folder (`figures/` unless `--out DIR`).
//!
//! Threads (no MPI needed):   cargo run --release --example derivatives -- 3 [--out DIR]
//! MPI:                       cargo build --release --features mpi --example derivatives
//!                            mpirun -n 3 target/release/examples/derivatives [--out DIR]

use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{signed_axis, Communicator, DistVector, DistributedArray, Layout};
use distlops::ndarray::{Array2, ArrayD, Ix2, IxDyn};
use distlops::operators::local::{self, LocalOperator};
use distlops::operators::{
    DerivativeKind, FirstDerivative, FirstDerivativeParams, Gradient, GradientParams, Laplacian,
    LaplacianParams, SecondDerivative, SecondDerivativeParams,
};
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};

type Res<T> = Result<T, Box<dyn Error>>;

/// One operator's impulse response: titled panels (model, forward, adjoint, ...).
struct Response {
    name: String,
    panels: Vec<(String, Array2<f64>)>,
}

/// `op` on the flat C-ordered global array `x`.
fn serial(op: &dyn LocalOperator<f64>, x: &ArrayD<f64>, adjoint: bool) -> ArrayD<f64> {
    let mut y = ArrayD::zeros(x.raw_dim());
    let (xs, ys) = (
        x.as_slice().expect("C order"),
        y.as_slice_mut().expect("C order"),
    );
    if adjoint {
        op.rmatvec(xs, ys);
    } else {
        op.matvec(xs, ys);
    }
    y
}

/// The global arrays of a plain or stacked vector, as 2-D arrays.
fn gathered(v: &DistVector<f64>) -> Vec<Array2<f64>> {
    match v {
        DistVector::Array(a) => vec![a.asarray().into_dimensionality::<Ix2>().expect("2-D")],
        DistVector::Stacked(s) => s.parts().iter().flat_map(gathered).collect(),
    }
}

/// The largest relative difference between computed and expected arrays.
fn rel_err(got: &[Array2<f64>], expected: &[ArrayD<f64>]) -> f64 {
    got.iter()
        .zip(expected)
        .map(|(g, e)| {
            let num: f64 = g.iter().zip(e).map(|(a, b)| (a - b) * (a - b)).sum();
            let den: f64 = e.iter().map(|b| b * b).sum();
            (num / den.max(1e-300)).sqrt()
        })
        .fold(0.0, f64::max)
}

/// Applies `op` to the impulse `x` forward and adjoint, checks both against the serial
/// references and the dot test, and returns the panels.
fn respond(
    comm: &Communicator,
    name: &str,
    op: &dyn LinearOperator<f64>,
    x: &DistVector<f64>,
    forward: &[ArrayD<f64>],
    adjoint: impl Fn(&[ArrayD<f64>]) -> ArrayD<f64>,
) -> Res<Response> {
    let y = op.apply(x)?;
    let xadj = op.apply_adjoint(&y)?;
    let (ys, xa) = (gathered(&y), gathered(&xadj));
    let e_fwd = rel_err(&ys, forward);
    let e_adj = rel_err(&xa, &[adjoint(forward)]);
    let dot = dottest(op, x, &y)?;
    if comm.rank() == 0 {
        println!(
            "{name:<34} forward rel. err {e_fwd:.1e}, adjoint {e_adj:.1e}, dot test {:.1e}",
            dot.rel_err
        );
    }
    if e_fwd > 1e-12 || e_adj > 1e-12 || !dot.passes(1e-12) {
        return Err(format!("{name}: does not match the serial operator").into());
    }
    let mut panels = vec![("x".to_string(), gathered(x).remove(0))];
    let what = if ys.len() == 1 {
        vec!["y = Op x".to_string()]
    } else {
        (0..ys.len()).map(|k| format!("y{k} = D{k} x")).collect()
    };
    panels.extend(what.into_iter().zip(ys));
    panels.push((
        "xadj = Op^H y".to_string(),
        xa.into_iter().next().expect("one"),
    ));
    Ok(Response {
        name: name.to_string(),
        panels,
    })
}

/// Every operator on the impulse model of shape `dims`.
fn responses(comm: &Communicator, dims: [usize; 2]) -> Res<Vec<Response>> {
    let mut g = ArrayD::zeros(IxDyn(&dims));
    g[[dims[0] / 2, dims[1] / 2]] = 1.0;
    let layout = Layout::scatter(&dims, 0, comm.size())?;
    let x = DistVector::Array(DistributedArray::to_dist(comm, g.view(), &layout)?);
    let centered = DerivativeKind::Centered;
    let mut out = Vec::new();

    let d1 = FirstDerivative::<f64>::new(
        comm,
        &dims,
        FirstDerivativeParams {
            axis: 0,
            kind: centered,
            ..Default::default()
        },
    )?;
    let s1 = local::LocalFirstDerivative::new(
        &dims,
        FirstDerivativeParams {
            axis: 0,
            kind: centered,
            ..Default::default()
        },
    )?;
    out.push(respond(
        comm,
        "FirstDerivative (axis 0)",
        &d1,
        &x,
        &[serial(&s1, &g, false)],
        |y| serial(&s1, &y[0], true),
    )?);

    let d2 = SecondDerivative::<f64>::new(
        comm,
        &dims,
        SecondDerivativeParams {
            axis: 0,
            kind: centered,
            ..Default::default()
        },
    )?;
    let s2 = local::LocalSecondDerivative::new(
        &dims,
        SecondDerivativeParams {
            axis: 0,
            kind: centered,
            ..Default::default()
        },
    )?;
    out.push(respond(
        comm,
        "SecondDerivative (axis 0)",
        &d2,
        &x,
        &[serial(&s2, &g, false)],
        |y| serial(&s2, &y[0], true),
    )?);

    for w in [[1.0, 1.0], [3.0, 1.0]] {
        let lap = Laplacian::<f64>::new(
            comm,
            &dims,
            LaplacianParams {
                axes: vec![0, 1],
                weights: w.to_vec(),
                sampling: vec![1.0, 1.0],
                kind: centered,
                ..Default::default()
            },
        )?;
        let parts: Vec<(f64, local::LocalSecondDerivative)> = (0..2)
            .map(|a| {
                Ok((
                    w[a],
                    local::LocalSecondDerivative::new(
                        &dims,
                        SecondDerivativeParams {
                            axis: signed_axis(a),
                            kind: centered,
                            ..Default::default()
                        },
                    )?,
                ))
            })
            .collect::<Result<_, distlops::core::Error>>()?;
        let sum = |v: &ArrayD<f64>, adjoint: bool| {
            parts
                .iter()
                .fold(ArrayD::zeros(v.raw_dim()), |acc, (w, d)| {
                    acc + serial(d, v, adjoint) * *w
                })
        };
        out.push(respond(
            comm,
            &format!("Laplacian (weights {}, {})", w[0], w[1]),
            &lap,
            &x,
            &[sum(&g, false)],
            |y| sum(&y[0], true),
        )?);
    }

    let grad = Gradient::<f64>::new(
        comm,
        &dims,
        GradientParams {
            sampling: vec![1.0],
            kind: centered,
            ..Default::default()
        },
    )?;
    let ds: Vec<local::LocalFirstDerivative> = (0..2)
        .map(|a| {
            local::LocalFirstDerivative::new(
                &dims,
                FirstDerivativeParams {
                    axis: signed_axis(a),
                    kind: centered,
                    ..Default::default()
                },
            )
        })
        .collect::<Result<_, _>>()?;
    let forward: Vec<ArrayD<f64>> = ds.iter().map(|d| serial(d, &g, false)).collect();
    out.push(respond(comm, "Gradient", &grad, &x, &forward, |y| {
        ds.iter()
            .zip(y)
            .fold(ArrayD::zeros(IxDyn(&dims)), |acc, (d, yk)| {
                acc + serial(d, yk, true)
            })
    })?);
    Ok(out)
}

/// A diverging colour (blue, white, red) for `v` in `[-m, m]`.
fn diverging(v: f64, m: f64) -> RGBColor {
    let s = if m > 0.0 {
        (v / m).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let fade = |t: f64| (255.0 * (1.0 - t)).round() as u8;
    if s >= 0.0 {
        RGBColor(255, fade(s), fade(s))
    } else {
        RGBColor(fade(-s), fade(-s), 255)
    }
}

/// Draws the responses as a grid (one row per operator) into `path`.
fn figure(path: &Path, dims: [usize; 2], rows: &[Response]) -> Res<()> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded DejaVu Sans font is invalid")?;
    let cols = rows.iter().map(|r| r.panels.len()).max().unwrap_or(1);
    let cell = 12u32; // pixels per sample
    let (pw, ph) = (dims[1] as u32 * cell + 20, dims[0] as u32 * cell + 46);
    let (width, height) = (cols as u32 * pw + 200, rows.len() as u32 * ph + 50);
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "Impulse responses on a {} x {} model (distributed along axis 0)",
        dims[0], dims[1]
    );
    let root = root.titled(&title, ("sans-serif", 22))?;
    let (labels, grid) = root.split_horizontally(200);
    for (r, row) in rows.iter().enumerate() {
        let y0 = r as i32 * ph as i32 + ph as i32 / 2;
        labels.draw(&Text::new(
            row.name.clone(),
            (8, y0),
            ("sans-serif", 15).into_font(),
        ))?;
        for (c, (caption, img)) in row.panels.iter().enumerate() {
            let m = img.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let (ox, oy) = (c as i32 * pw as i32 + 10, r as i32 * ph as i32 + 6);
            grid.draw(&Text::new(
                format!("{caption}  (|max| {m:.2})"),
                (ox, oy),
                ("sans-serif", 13).into_font(),
            ))?;
            let top = oy + 22;
            for ((i, j), &v) in img.indexed_iter() {
                let (px, py) = (
                    ox + (j as u32 * cell) as i32,
                    top + (i as u32 * cell) as i32,
                );
                grid.draw(&Rectangle::new(
                    [(px, py), (px + cell as i32, py + cell as i32)],
                    diverging(v, m).filled(),
                ))?;
            }
            grid.draw(&Rectangle::new(
                [
                    (ox, top),
                    (
                        ox + (dims[1] as u32 * cell) as i32,
                        top + (dims[0] as u32 * cell) as i32,
                    ),
                ],
                BLACK.stroke_width(1),
            ))?;
        }
    }
    root.present()?;
    Ok(())
}

fn run(comm: &Communicator, out: &Path) -> Res<()> {
    if comm.rank() == 0 {
        std::fs::create_dir_all(out)?;
    }
    for dims in [[11, 21], [12, 21]] {
        if comm.rank() == 0 {
            println!("model {dims:?} on {} rank(s):", comm.size());
        }
        let rows = responses(comm, dims)?;
        if comm.rank() == 0 {
            let path = out.join(format!("derivatives_{}x{}.png", dims[0], dims[1]));
            figure(&path, dims, &rows)?;
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// The output folder (`--out DIR`, default `figures`) and the first number (thread ranks).
fn args() -> (PathBuf, Option<usize>) {
    let mut out = PathBuf::from("figures");
    let mut ranks = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = it.next().map(PathBuf::from).unwrap_or(out),
            s => ranks = ranks.or_else(|| s.parse().ok()),
        }
    }
    (out, ranks)
}

/// `[RANKS]` thread ranks (default 3), or the ranks of `mpirun`.
fn main() {
    let (out, ranks) = args();
    distlops::run_with(ranks.unwrap_or(3), |comm| run(comm, &out));
}
