//! PNG figures of 3-D volumes `(inline, crossline, time)`: an inline section, a crossline section
//! and a time slice side by side (only the inline section for a 2-D section of one inline), with
//! axes in the volume's units (line numbers, time in ms), a colour bar and titles. Text is drawn
//! with the DejaVu Sans font embedded by the `dejavu` crate, so no system fonts are needed.

use ndarray::Array2;
use plotters::prelude::*;
use std::error::Error;
use std::path::Path;
use std::sync::Once;

/// A colour map: control points from the low to the high end.
#[derive(Debug, Clone, Copy)]
pub enum ColourMap {
    /// Dark blue, green, yellow (like matplotlib's `viridis`): impedance.
    Viridis,
    /// Blue, white, red (like matplotlib's `seismic`): seismic data.
    Seismic,
}

impl ColourMap {
    fn points(self) -> &'static [(f64, f64, f64)] {
        match self {
            ColourMap::Viridis => &[
                (68.0, 1.0, 84.0),
                (59.0, 82.0, 139.0),
                (33.0, 145.0, 140.0),
                (94.0, 201.0, 98.0),
                (253.0, 231.0, 37.0),
            ],
            ColourMap::Seismic => &[
                (0.0, 0.0, 77.0),
                (0.0, 0.0, 255.0),
                (255.0, 255.0, 255.0),
                (255.0, 0.0, 0.0),
                (128.0, 0.0, 0.0),
            ],
        }
    }

    /// The colour of `v` in `[lo, hi]` (clamped).
    fn colour(self, v: f64, lo: f64, hi: f64) -> RGBColor {
        let pts = self.points();
        let s = if hi > lo {
            ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else {
            0.5
        };
        let pos = s * (pts.len() - 1) as f64;
        let i = (pos.floor() as usize).min(pts.len() - 2);
        let f = pos - i as f64;
        let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
        let (a, b) = (pts[i], pts[i + 1]);
        RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
    }
}

/// Where to cut the volume: indices along the inline, crossline and time axes.
#[derive(Debug, Clone, Copy)]
pub struct Cuts {
    /// The inline index of the inline section.
    pub il: usize,
    /// The crossline index of the crossline section.
    pub xl: usize,
    /// The time index of the time slice.
    pub it: usize,
}

/// One axis of a volume: its name with unit, and the coordinate of every index.
#[derive(Debug, Clone)]
pub struct AxisCoords {
    /// What the axis shows, e.g. `"inline"` or `"time (ms)"`.
    pub name: String,
    /// The coordinate of each index (line numbers, times).
    pub values: Vec<f64>,
}

impl AxisCoords {
    /// The coordinate at (fractional) index `v`, for tick labels.
    fn at(&self, v: f64) -> f64 {
        let i = (v.max(0.0).floor() as usize).min(self.values.len().saturating_sub(1));
        self.values.get(i).copied().unwrap_or(v)
    }
}

/// The three sections a figure shows, cut from a volume `v[il, xl, t]`.
#[derive(Debug, Clone)]
pub struct Sections {
    /// `v[cuts.il, :, :]`: (crossline, time).
    pub inline: Array2<f64>,
    /// `v[:, cuts.xl, :]`: (inline, time).
    pub crossline: Array2<f64>,
    /// `v[:, :, cuts.it]`: (inline, crossline).
    pub slice: Array2<f64>,
}

impl Sections {
    /// `f` applied to every value.
    pub fn map(&self, f: impl Fn(f64) -> f64) -> Self {
        Sections {
            inline: self.inline.mapv(&f),
            crossline: self.crossline.mapv(&f),
            slice: self.slice.mapv(&f),
        }
    }

    /// The smallest and largest value.
    pub fn range(&self) -> (f64, f64) {
        [&self.inline, &self.crossline, &self.slice]
            .iter()
            .flat_map(|a| a.iter())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            })
    }
}

fn register_font() {
    static FONT: Once = Once::new();
    FONT.call_once(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans font is valid"));
    });
}

/// One image panel: `img[row, col]` with rows drawn downwards (row 0 at the top), columns along
/// `x` and rows along `y`.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    img: &Array2<f64>,
    caption: &str,
    (x, y): (&AxisCoords, &AxisCoords),
    (map, lo, hi): (ColourMap, f64, f64),
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let (nr, nc) = img.dim();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 17))
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(44)
        .build_cartesian_2d(0.0..nc as f64, 0.0..nr as f64)?;
    let flip = |v: &f64| format!("{:.0}", y.at(nr as f64 - v));
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(x.name.as_str())
        .y_desc(y.name.as_str())
        .y_label_formatter(&flip)
        .x_label_formatter(&|v: &f64| format!("{:.0}", x.at(*v)))
        .x_labels(6)
        .y_labels(6)
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(img.indexed_iter().map(|((r, c), &v)| {
            let top = (nr - r) as f64;
            Rectangle::new(
                [(c as f64, top), (c as f64 + 1.0, top - 1.0)],
                map.colour(v, lo, hi).filled(),
            )
        }))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// A vertical colour bar from `lo` to `hi`.
fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    label: &str,
    (map, lo, hi): (ColourMap, f64, f64),
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let mut chart = ChartBuilder::on(area)
        .margin_top(40)
        .margin_bottom(42)
        .margin_right(6)
        .y_label_area_size(58)
        .build_cartesian_2d(0.0..1.0, lo..hi)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc(label)
        .y_label_formatter(&|v: &f64| {
            if (hi - lo).abs() >= 100.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .y_labels(6)
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())?;
    let n = 128;
    chart
        .draw_series((0..n).map(|k| {
            let (a, b) = (
                lo + (hi - lo) * k as f64 / n as f64,
                lo + (hi - lo) * (k + 1) as f64 / n as f64,
            );
            Rectangle::new(
                [(0.0, a), (1.0, b)],
                map.colour(0.5 * (a + b), lo, hi).filled(),
            )
        }))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Writes `path`: the inline section, the crossline section (time downwards in both) and the
/// time slice of `s` (only the inline section if the volume has one inline), with the
/// coordinates `axes` (inline, crossline, time), coloured with `map` between `range.0` and
/// `range.1`, under `title`, with a colour bar labelled `label`.
pub fn volume_figure(
    path: &Path,
    s: &Sections,
    axes: &[AxisCoords; 3],
    cuts: Cuts,
    title: &str,
    label: &str,
    (map, lo, hi): (ColourMap, f64, f64),
) -> Result<(), Box<dyn Error>> {
    register_font();
    let [il, xl, t] = axes;
    let (ny, nx) = (il.values.len(), xl.values.len());
    let (width, height) = (1500u32, 540u32);
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 22))
        .map_err(|e| e.to_string())?;
    // Panel widths proportional to the horizontal sizes (at least a fifth each), then the bar.
    let bar = 100;
    let avail = (width - bar) as f64;
    let sizes: Vec<f64> = if ny == 1 {
        vec![nx as f64]
    } else {
        vec![nx as f64, ny as f64, nx as f64]
    };
    let total: f64 = sizes
        .iter()
        .map(|s| s.max(0.2 * sizes.iter().sum::<f64>()))
        .sum();
    let mut breaks = Vec::new();
    let mut x = 0.0;
    for s in &sizes[..] {
        x += avail * s.max(0.2 * sizes.iter().sum::<f64>()) / total;
        breaks.push(x.round() as i32);
    }
    let areas = root.split_by_breakpoints(breaks, Vec::<i32>::new());
    let style = (map, lo, hi);
    panel(
        &areas[0],
        &s.inline.t().to_owned(),
        &format!("inline section ({} {:.0})", il.name, il.values[cuts.il]),
        (xl, t),
        style,
    )?;
    if ny > 1 {
        panel(
            &areas[1],
            &s.crossline.t().to_owned(),
            &format!("crossline section ({} {:.0})", xl.name, xl.values[cuts.xl]),
            (il, t),
            style,
        )?;
        // The time slice: rows are inlines (downwards), columns crosslines.
        panel(
            &areas[2],
            &s.slice,
            &format!("time slice ({:.0} ms)", t.values[cuts.it]),
            (xl, il),
            style,
        )?;
    }
    colour_bar(&areas[areas.len() - 1], label, style)?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

/// One image of a [`panels_figure`]: `img[row, col]` with rows drawn downwards (row 0 at the
/// top) along `y` and columns along `x`, under `caption`.
#[derive(Clone)]
pub struct Image<'a> {
    /// The values.
    pub img: &'a Array2<f64>,
    /// The title above the image.
    pub caption: String,
    /// The coordinates of the columns.
    pub x: &'a AxisCoords,
    /// The coordinates of the rows.
    pub y: &'a AxisCoords,
}

/// Images drawn with one colour map and range, followed by one colour bar labelled `label`.
pub struct Group<'a> {
    /// The images, left to right.
    pub images: Vec<Image<'a>>,
    /// The colour bar's label.
    pub label: &'a str,
    /// The colour map and the values at its ends.
    pub style: (ColourMap, f64, f64),
}

/// Writes `path`, `size` pixels: the groups side by side under `title`, each group its images
/// (all images of the figure equally wide) and then its colour bar.
pub fn panels_figure(
    path: &Path,
    title: &str,
    groups: &[Group<'_>],
    (width, height): (u32, u32),
) -> Result<(), Box<dyn Error>> {
    register_font();
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 22))
        .map_err(|e| e.to_string())?;
    let bar = 100.0;
    let n_images: usize = groups.iter().map(|g| g.images.len()).sum();
    let image_width = (width as f64 - bar * groups.len() as f64) / n_images.max(1) as f64;
    let mut breaks = Vec::new();
    let mut x = 0.0;
    for g in groups {
        for _ in &g.images {
            x += image_width;
            breaks.push(x.round() as i32);
        }
        x += bar;
        breaks.push(x.round() as i32);
    }
    breaks.pop();
    let areas = root.split_by_breakpoints(breaks, Vec::<i32>::new());
    let mut area = areas.iter();
    for g in groups {
        for im in &g.images {
            let a = area.next().expect("one area per image");
            panel(a, im.img, &im.caption, (im.x, im.y), g.style)?;
        }
        colour_bar(area.next().expect("one area per bar"), g.label, g.style)?;
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
