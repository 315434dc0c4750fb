//! Writing the results: every volume as `.npy` (each rank writes its own part), the inverted
//! impedances also as SEG-Y (with the input's headers, or new ones for the synthetic model and
//! `.npy` input), figures of sections gathered to rank 0, and the comparison with an earlier
//! run's `.npy` files.

use crate::figures::{self, AxisCoords, ColourMap, Cuts, Sections};
use crate::Res;
use distlops::core::{Communicator, DistVector, DistributedArray, Error, ReduceOp, Vector};
use distlops::io::npy::write_npy;
use distlops::io::segy::{write_segy, SampleFormat, SegyTemplate};
use distlops::ndarray::{Array2, ArrayD, Ix3};
use std::path::Path;

/// `|a - b|_2 / |b|_2` of distributed vectors (reproducible norms, one all-reduce each).
pub fn rel_err(a: &DistVector<f64>, b: &DistVector<f64>) -> Res<f64> {
    let mut diff = a.clone();
    diff.axpy(-1.0, b)?;
    Ok(diff.norm(Default::default())? / b.norm(Default::default())?)
}

/// The plain array of a plain distributed vector.
pub fn array(v: &DistVector<f64>) -> &DistributedArray<f64> {
    v.as_array().expect("a plain vector")
}

/// One output volume.
pub struct Volume<'a> {
    /// The file name without extension.
    pub name: &'static str,
    /// The figure's title.
    pub title: &'static str,
    /// The values: `ln(AI)`, or seismic data.
    pub values: &'a DistributedArray<f64>,
    /// Whether `values` is `ln(AI)` (figures and SEG-Y show `AI`) rather than data.
    pub log_impedance: bool,
}

/// How to write the volumes.
pub struct Plan<'a> {
    /// The output folder.
    pub out: &'a Path,
    /// Headers for the SEG-Y files.
    pub template: &'a SegyTemplate,
    /// Line numbers and times, for the figures.
    pub axes: &'a [AxisCoords; 3],
    /// Where the figures cut the volumes.
    pub cuts: Cuts,
    /// Whether to draw figures.
    pub figures: bool,
    /// The volume whose impedance range colours every impedance figure.
    pub colour_reference: &'static str,
    /// The volumes of `compare.png`, their inline sections side by side with that range (none
    /// if fewer than two).
    pub compare: &'a [&'static str],
}

/// Writes every volume as `.npy`, the inversions (`inv_*`) as SEG-Y of impedance `exp(m)` in
/// IEEE floats, and the figures. Collective.
pub fn write(comm: &Communicator, plan: &Plan<'_>, volumes: &[Volume<'_>]) -> Res<()> {
    let made = if comm.rank() == 0 {
        std::fs::create_dir_all(plan.out).map_err(|e| Error::io(plan.out, &e))
    } else {
        Ok(())
    };
    comm.agree(made)?;
    for v in volumes {
        write_npy(plan.out.join(format!("{}.npy", v.name)), v.values)?;
        if v.name.starts_with("inv_") {
            let mut ai = v.values.copy();
            ai.local_slice_mut().iter_mut().for_each(|x| *x = x.exp());
            let path = plan.out.join(format!("{}.sgy", v.name));
            write_segy(path, &ai, plan.template, SampleFormat::IeeeFloat32)?;
        }
    }
    if !plan.figures {
        return Ok(());
    }
    let sections: Vec<Sections> = volumes
        .iter()
        .map(|v| {
            let s = gather_sections(comm, v.values, plan.cuts);
            if v.log_impedance {
                s.map(f64::exp)
            } else {
                s
            }
        })
        .collect();
    if comm.rank() != 0 {
        return Ok(());
    }
    let reference = volumes
        .iter()
        .position(|v| v.name == plan.colour_reference)
        .expect("the colour reference is one of the volumes");
    let (lo, hi) = sections[reference].range();
    for (v, s) in volumes.iter().zip(&sections) {
        let path = plan.out.join(format!("{}.png", v.name));
        let (label, style) = if v.log_impedance {
            ("AI", (ColourMap::Viridis, lo, hi))
        } else {
            let (a, b) = s.range();
            let amax = a.abs().max(b.abs());
            ("amplitude", (ColourMap::Seismic, -amax, amax))
        };
        figures::volume_figure(&path, s, plan.axes, plan.cuts, v.title, label, style)?;
    }
    let chosen: Vec<usize> = plan
        .compare
        .iter()
        .filter_map(|name| volumes.iter().position(|v| v.name == *name))
        .collect();
    if chosen.len() < 2 {
        return Ok(());
    }
    // Inline sections (crossline, time), drawn with time downwards.
    let images: Vec<Array2<f64>> = chosen
        .iter()
        .map(|&i| sections[i].inline.t().to_owned())
        .collect();
    let group = figures::Group {
        images: chosen
            .iter()
            .zip(&images)
            .map(|(&i, img)| figures::Image {
                img,
                caption: volumes[i].title.to_string(),
                x: &plan.axes[1],
                y: &plan.axes[2],
            })
            .collect(),
        label: "AI",
        style: (ColourMap::Viridis, lo, hi),
    };
    let title = format!(
        "Inline {} of each volume, one colour scale",
        plan.axes[0].values[plan.cuts.il]
    );
    let size = (280 * chosen.len() as u32 + 100, 560);
    figures::panels_figure(&plan.out.join("compare.png"), &title, &[group], size)
}

/// The sections of a distributed volume `(n_il, n_xl, nt)`, on every rank: each rank fills in
/// the values it holds and one sum over the ranks (exact: every value comes from one rank, the
/// others add zeros) completes them. Collective.
fn gather_sections(comm: &Communicator, a: &DistributedArray<f64>, cuts: Cuts) -> Sections {
    let layout = a.layout();
    let (shape, axis, first) = (
        layout.global_shape(),
        layout.axis(),
        layout.offset(comm.rank()),
    );
    let mut s = Sections {
        inline: Array2::zeros((shape[1], shape[2])),
        crossline: Array2::zeros((shape[0], shape[2])),
        slice: Array2::zeros((shape[0], shape[1])),
    };
    let local = a
        .local()
        .into_dimensionality::<Ix3>()
        .expect("a 3-D volume");
    for ((i, j, t), &v) in local.indexed_iter() {
        let (il, xl) = if axis == 0 {
            (i + first, j)
        } else {
            (i, j + first)
        };
        if il == cuts.il {
            s.inline[[xl, t]] = v;
        }
        if xl == cuts.xl {
            s.crossline[[il, t]] = v;
        }
        if t == cuts.it {
            s.slice[[il, xl]] = v;
        }
    }
    for part in [&mut s.inline, &mut s.crossline, &mut s.slice] {
        comm.all_reduce_in_place(part.as_slice_mut().expect("contiguous"), ReduceOp::Sum);
    }
    s
}

/// The largest `|a - b| / |b|` between the `.npy` volumes `names` in `out` and in `dir` (rank
/// 0 reads both whole; for checks at small sizes).
pub fn compare(out: &Path, dir: &Path, names: &[&str]) -> Res<f64> {
    let mut worst = 0.0f64;
    for name in names {
        let read = |d: &Path| -> Res<ArrayD<f64>> {
            let path = d.join(format!("{name}.npy"));
            ndarray_npy::read_npy(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()).into())
        };
        let (v, other) = (read(out)?, read(dir)?);
        if other.shape() != v.shape() {
            return Err(
                format!("{}/{name}.npy has shape {:?}", dir.display(), other.shape()).into(),
            );
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
