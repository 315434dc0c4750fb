//! Post-stack data from a file (`--data`): a SEG-Y cube or a `.npy` volume, read so that every
//! rank reads only its own traces; the wavelet (`--wavelet`) and the background model
//! (`--background`, `--smooth`, `--ai0`) that go with it.
//!
//! A cube `(n_il, n_xl, nt)` is split over the ranks along inlines; a 2-D section (one inline,
//! or a 2-D `.npy` of shape `(n_xl, nt)`) along crosslines.

use crate::figures::AxisCoords;
use crate::{Args, Res, WaveletArg};
use distlops::core::{Communicator, DistributedArray, Error, Layout};
use distlops::io::npy::NpyFile;
use distlops::io::segy::{SegyOptions, SegyReader, SegySpec, SegyTemplate};
use distlops::ndarray::{ArrayD, Axis, Ix3};
use distlops::operators::wavelets::ricker;
use std::path::Path;

/// Post-stack data read from a file, with what writing results like it needs.
pub struct Input {
    /// The data `(n_il, n_xl, nt)`.
    pub data: DistributedArray<f64>,
    /// Headers for SEG-Y outputs: the input's (SEG-Y input) or new ones (`.npy` input).
    pub template: SegyTemplate,
    /// Inline numbers, crossline numbers and times in ms.
    pub axes: [AxisCoords; 3],
    /// The sample interval in ms.
    pub dt_ms: f64,
}

/// Whether `path` names a SEG-Y file (`.sgy`, `.segy`) rather than a `.npy` file.
fn is_segy(path: &Path) -> Res<bool> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("sgy" | "segy") => Ok(true),
        Some("npy") => Ok(false),
        _ => Err(format!("{}: expected a .sgy, .segy or .npy file", path.display()).into()),
    }
}

/// The axes of a cube: line numbers and times.
fn axes(ilines: &[i64], xlines: &[i64], times_ms: Vec<f64>) -> [AxisCoords; 3] {
    let numbers = |v: &[i64]| v.iter().map(|&n| n as f64).collect();
    [
        AxisCoords {
            name: "inline".into(),
            values: numbers(ilines),
        },
        AxisCoords {
            name: "crossline".into(),
            values: numbers(xlines),
        },
        AxisCoords {
            name: "time (ms)".into(),
            values: times_ms,
        },
    ]
}

/// Reads `--data`. Collective.
pub fn read(comm: &Communicator, path: &Path, args: &Args) -> Res<Input> {
    if is_segy(path)? {
        let reader = SegyReader::open(comm, path, &SegyOptions::default())?;
        let g = reader.geometry();
        let dt_ms = match (args.dt_ms, g.sample_interval_us) {
            (Some(dt), _) => dt,
            (None, Some(us)) => us / 1000.0,
            (None, None) => {
                return Err(format!(
                    "{}: no sample interval in the headers: give --dt",
                    path.display()
                )
                .into())
            }
        };
        let times = (0..g.samples)
            .map(|i| g.delay_ms + dt_ms * i as f64)
            .collect();
        let axes = axes(&g.ilines, &g.xlines, times);
        let volume = reader.read::<f64>(&reader.default_layout())?;
        report_bytes(comm, path, reader.stats().bytes_read)?;
        return Ok(Input {
            data: volume.data,
            template: volume.template,
            axes,
            dt_ms,
        });
    }
    let file = NpyFile::open(comm, path)?;
    let shape = match *file.shape() {
        [n_il, n_xl, nt] => [n_il, n_xl, nt],
        [n_xl, nt] => [1, n_xl, nt],
        ref s => {
            return Err(format!(
                "{}: shape {s:?} is not (inline, crossline, time) or (crossline, time)",
                path.display()
            )
            .into())
        }
    };
    let dt_ms = args.dt_ms.unwrap_or(4.0);
    let layout = cube_layout(comm, shape)?;
    let data = read_npy_cube(comm, &file, &layout)?;
    let spec = SegySpec::cube(shape[0], shape[1], shape[2], dt_ms * 1000.0);
    let template = SegyTemplate::new(comm, &spec, &layout)?;
    let times = (0..shape[2]).map(|i| dt_ms * i as f64).collect();
    Ok(Input {
        data,
        template,
        axes: axes(&spec.ilines, &spec.xlines, times),
        dt_ms,
    })
}

/// Prints on rank 0 how many bytes each rank read from `path` (one all-gather).
fn report_bytes(comm: &Communicator, path: &Path, mine: u64) -> Res<()> {
    let mut all = vec![0u64; comm.size()];
    comm.all_gather_into(&[mine], &mut all);
    if comm.rank() == 0 {
        let size = std::fs::metadata(path)?.len();
        let list: Vec<String> = all.iter().map(u64::to_string).collect();
        println!(
            "read {}: {size} bytes; bytes read by rank {} (rank 0 also read the file header and \
             the trace headers of the geometry scan)",
            path.display(),
            list.join(", ")
        );
    }
    Ok(())
}

/// The layout of a cube: split along inlines, or crosslines for a single inline.
fn cube_layout(comm: &Communicator, shape: [usize; 3]) -> Result<Layout, Error> {
    Layout::scatter(&shape, usize::from(shape[0] == 1), comm.size())
}

/// Reads a `.npy` volume of the cube's shape into `layout`: a 3-D file directly, a 2-D
/// `(n_xl, nt)` one split along its first axis and seen as the single inline of the cube.
fn read_npy_cube(
    comm: &Communicator,
    file: &NpyFile,
    layout: &Layout,
) -> Res<DistributedArray<f64>> {
    let shape = layout.global_shape();
    if file.shape().len() == 3 {
        return Ok(file.read(layout)?);
    }
    let flat = Layout::scatter(&shape[1..], 0, comm.size())?;
    let local = file.read::<f64>(&flat)?.into_local().insert_axis(Axis(0));
    Ok(DistributedArray::from_local_with_layout(
        comm, layout, local,
    )?)
}

/// The wavelet: a Ricker of peak frequency `f0` Hz sampled at `dt_ms` (half-length `1.2 / f0`
/// seconds, PyLops-MPI's tutorial wavelet at 15 Hz and 4 ms) times `scale`, or a `.npy` file (an odd number
/// of samples, centred). It must be shorter than the traces.
pub fn wavelet(arg: &WaveletArg, dt_ms: f64, nt: usize) -> Res<Vec<f64>> {
    let w = match arg {
        WaveletArg::Ricker { f0, scale } => {
            let n = (1.2 / f0 / (dt_ms / 1000.0)).round() as usize + 1;
            let t: Vec<f64> = (0..n).map(|i| dt_ms / 1000.0 * i as f64).collect();
            ricker(&t, *f0).0.into_iter().map(|v| v * scale).collect()
        }
        WaveletArg::File(path) => {
            let w: ArrayD<f64> =
                ndarray_npy::read_npy(path).map_err(|e| format!("{}: {e}", path.display()))?;
            if w.ndim() != 1 || w.len() % 2 == 0 {
                return Err(format!(
                    "{}: a wavelet is a 1-D array of odd length, not {:?}",
                    path.display(),
                    w.shape()
                )
                .into());
            }
            w.into_raw_vec_and_offset().0
        }
    };
    if w.len() > nt {
        return Err(format!(
            "the wavelet has {} samples, the traces {nt}: use a higher peak frequency or longer traces",
            w.len()
        )
        .into());
    }
    Ok(w)
}

/// The starting model `ln(AI)` in the data's layout: the logarithm of the impedance in
/// `--background` (a SEG-Y or `.npy` volume of the data's shape, positive values), else the
/// constant `ln(--ai0)`; box-smoothed along time when asked (`--smooth N[:P]`: `P` passes,
/// default 2, of a moving average of `N` samples, see [`crate::model::smooth`]).
/// Collective.
pub fn background(comm: &Communicator, input: &Input, args: &Args) -> Res<DistributedArray<f64>> {
    let layout = input.data.layout();
    let mut m = match &args.background {
        None => {
            let ai0 = args
                .ai0
                .expect("Args::parse requires --ai0 or --background with --data");
            DistributedArray::full(comm, layout, ai0.ln())?
        }
        Some(path) => {
            let ai = if is_segy(path)? {
                let reader = SegyReader::open(comm, path, &SegyOptions::default())?;
                if reader.geometry().shape() != layout.global_shape() {
                    return Err(format!(
                        "{}: the background has shape {:?}, the data {:?}",
                        path.display(),
                        reader.geometry().shape(),
                        layout.global_shape()
                    )
                    .into());
                }
                reader.read::<f64>(layout)?.data
            } else {
                read_npy_cube(comm, &NpyFile::open(comm, path)?, layout)?
            };
            let positive = match ai.local().iter().position(|&v| !v.is_finite() || v <= 0.0) {
                None => Ok(()),
                Some(i) => Err(Error::InvalidArgument(format!(
                    "{}: impedance {} is not positive and finite (the background holds acoustic impedance)",
                    path.display(),
                    ai.local_slice()[i]
                ))),
            };
            comm.agree(positive)?;
            let mut m = ai;
            m.local_slice_mut().iter_mut().for_each(|v| *v = v.ln());
            m
        }
    };
    if let Some((len, passes)) = args.smooth {
        // Along time only: every rank holds whole traces.
        let local = m.local().into_dimensionality::<Ix3>()?.to_owned();
        let smoothed = crate::model::smooth(&local, [1, 1, len], passes);
        m.local_mut().assign(&smoothed);
    }
    Ok(m)
}
