//! [`Kirchhoff::image_split`]: the image split along its first axis over the ranks, the data
//! on every rank; and [`TravelTimes::constant_velocity_lines`], the tables of a range of the
//! grid's lines.

use super::{check_params, dynamic, Amplitudes, ImageGrid, Kirchhoff, KirchhoffParams};
use super::{DynamicParams, Side, TravelTimes};
use crate::local::LocalOperator;
use crate::{Broadcasted, HStack};
use distlops_core::operator::{LinearOperator, Op};
use distlops_core::{balanced_counts, Banded, Communicator, Demigration, Error, Result, Scalar};
use std::ops::Range;
use std::sync::Arc;

impl ImageGrid {
    /// The grid of lines `lines` of the first axis (`y` in 3-D, `x` in 2-D), the other axes
    /// whole.
    fn first_axis_lines(&self, lines: Range<usize>) -> ImageGrid {
        match &self.y {
            Some(y) => ImageGrid {
                y: Some(y[lines].to_vec()),
                ..self.clone()
            },
            None => ImageGrid {
                x: self.x[lines].to_vec(),
                ..self.clone()
            },
        }
    }
}

impl TravelTimes {
    /// The columns of lines `lines` of the grid's first axis (`y` in 3-D, `x` in 2-D) of
    /// [`constant_velocity`](Self::constant_velocity) (`eps = None`) or of
    /// [`constant_velocity_dynamic`](Self::constant_velocity_dynamic) (`Some(eps)`) on the
    /// whole `grid`, the same bits, without the other lines' times: the tables of one rank's
    /// part of an [`image_split`](Kirchhoff::image_split). With `eps`, the angles come from
    /// the gradient on the whole grid (the times of the lines on either side of `lines` are
    /// computed for its central differences, then dropped) and the positions' grid indices
    /// from the whole grid's `x` axis.
    ///
    /// # Errors
    /// As [`constant_velocity_dynamic`](Self::constant_velocity_dynamic);
    /// [`Error::InvalidArgument`] if `lines` is empty or past the first axis.
    pub fn constant_velocity_lines(
        grid: &ImageGrid,
        positions: &[Vec<f64>],
        vel: f64,
        eps: Option<f64>,
        lines: Range<usize>,
    ) -> Result<Self> {
        grid.check()?;
        let n0 = grid.dims()[0];
        if lines.is_empty() || lines.end > n0 {
            return Err(Error::InvalidArgument(format!(
                "Kirchhoff: lines {lines:?} of a first axis of {n0}"
            )));
        }
        if let Some(eps) = eps {
            if !(eps.is_finite() && eps >= 0.0) {
                return Err(Error::InvalidArgument(format!(
                    "Kirchhoff: the amplitude's eps must be finite and non-negative, got {eps}"
                )));
            }
        }
        // One more line on either side for the gradient's central differences.
        let halo = usize::from(eps.is_some());
        let (lo, hi) = (lines.start.saturating_sub(halo), (lines.end + halo).min(n0));
        let sub = grid.first_axis_lines(lo..hi);
        let mut tt = Self::constant_velocity(&sub, positions, vel)?;
        if let Some(eps) = eps {
            let three = grid.ndim() == 3;
            let amp = tt
                .table
                .iter()
                .map(|t| {
                    let d = t * vel + eps;
                    1.0 / if three { d } else { d.sqrt() }
                })
                .collect();
            let xs = positions.iter().map(|p| p[p.len() - 2]);
            tt.dynamic = Some(Amplitudes {
                angle: dynamic::angles(&sub.dims(), &dynamic::spacing(grid), &tt.table, tt.n),
                amp,
                ix: dynamic::x_indices(grid, xs),
            });
        }
        let inner = sub.points() / (hi - lo);
        Ok(tt.columns((lines.start - lo) * inner..(lines.end - lo) * inner))
    }

    /// Columns `cols` of every row.
    fn columns(&self, cols: Range<usize>) -> TravelTimes {
        let pick = |v: &[f64]| -> Vec<f64> {
            v.chunks_exact(self.ni.max(1))
                .flat_map(|row| &row[cols.clone()])
                .copied()
                .collect()
        };
        TravelTimes {
            table: pick(&self.table),
            n: self.n,
            ni: cols.len(),
            dynamic: self.dynamic.as_ref().map(|d| Amplitudes {
                amp: pick(&d.amp),
                angle: pick(&d.angle),
                ix: d.ix.clone(),
            }),
        }
    }
}

/// The lines `first..last` of the first image axis (of `n0`) that rank `rank` of `size` holds
/// in a [`Kirchhoff::image_split`] with `lines_per_part` lines per part: the parts (every
/// `lines_per_part` lines, the last one shorter) are split in balanced contiguous blocks over
/// the ranks, rank 0 the first. Empty on a rank without a part.
pub fn image_split_lines(
    n0: usize,
    lines_per_part: usize,
    size: usize,
    rank: usize,
) -> Range<usize> {
    let parts = n0.div_ceil(lines_per_part.max(1));
    let counts = balanced_counts(parts, size);
    let first: usize = counts[..rank].iter().sum();
    let l = lines_per_part.max(1);
    (first * l).min(n0)..((first + counts[rank]) * l).min(n0)
}

impl<T: Scalar + 'static, E: Banded + Demigration + 'static> Kirchhoff<T, E> {
    /// Kirchhoff demigration with the image split over the ranks of `comm` along its first
    /// axis (`y` in 3-D, `x` in 2-D), every source and receiver on every rank: for an image
    /// too large to hold on every rank, where [`distributed`](Self::distributed) replicates it.
    ///
    /// ```text
    /// forward:  d = W sum_p K_p m_p     (K_p: the sums of part p's points; one all-gather)
    /// adjoint:  m_p = K_p^H W^H d       (no communication)
    /// ```
    ///
    /// * The parts: every `lines_per_part` lines of the first axis (the last part shorter),
    ///   in balanced contiguous blocks over the ranks ([`image_split_lines`]). `tables(lines)`
    ///   gives the sources' and the receivers' travel times (every source, every receiver)
    ///   to the points of `lines` only (e.g. [`TravelTimes::constant_velocity_lines`], or rows
    ///   of a table read from `.npy`); it is called for this rank's parts only, so a rank
    ///   holds the tables of its own lines.
    /// * Partitions: domain Scatter (1-D: this rank's lines of the image, in the image's C
    ///   order) -> range Broadcast (the data `(ns, nr, nt)`, whole on every rank).
    /// * The forward sums the parts' traces along [`HStack`]'s fixed tree over the part index,
    ///   then convolves with the wavelet `W` once, on every rank (the kinematic sums, the bulk
    ///   of the work, are split; the convolution is not): the same bits at every rank count for
    ///   a given `lines_per_part`, and within rounding of [`distributed`](Self::distributed)
    ///   and of the serial operator, which sum the same terms in another order. The adjoint
    ///   gives every point the serial operator's own sum: the same bits as
    ///   [`Kirchhoff::new`] of every source, at every rank count.
    /// * Communication: the forward all-gathers each rank's partial sums of the traces (the
    ///   tree's nodes, [`VectorSum`](distlops_core::repro::VectorSum)); memory for a few
    ///   data-sized vectors beside the tables of this rank's lines.
    /// * Dynamic terms: a velocity per point is the whole image's (`ni` values), sliced for
    ///   every part here.
    /// * PyLops-MPI: none (its Kirchhoff benchmark splits the sources only).
    /// * [Collective](distlops_core#collective-calls): every rank of `comm` calls it; a
    ///   mistake on any rank (a table of the wrong shape, an error from `tables`) is an error on
    ///   every rank.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `lines_per_part = 0`, bad [`KirchhoffParams`] or
    /// [`DynamicParams`]; [`Error::ShapeMismatch`] for an empty image or tables without the
    /// points of their lines; errors of `tables`; on every rank.
    pub fn image_split(
        comm: &Communicator,
        engine: &E,
        dims: &[usize],
        lines_per_part: usize,
        mut tables: impl FnMut(Range<usize>) -> Result<(TravelTimes, TravelTimes)>,
        params: &KirchhoffParams,
    ) -> Result<Op<T, E>> {
        let ops = (|| {
            if lines_per_part == 0 {
                return Err(Error::InvalidArgument(
                    "Kirchhoff::image_split: lines_per_part must be at least 1".into(),
                ));
            }
            let Some(&n0) = dims.first().filter(|_| dims.iter().all(|&n| n > 0)) else {
                return Err(Error::ShapeMismatch(format!(
                    "Kirchhoff::image_split: an empty image {dims:?}"
                )));
            };
            check_params(params)?;
            let ni: usize = dims.iter().product();
            if let Some(d) = &params.dynamic {
                d.check(ni, dims.len())?;
            }
            let inner = ni / n0;
            let mine = image_split_lines(n0, lines_per_part, comm.size(), comm.rank());
            let mut ops: Vec<Box<dyn LocalOperator<T, E>>> = Vec::new();
            for start in mine.clone().step_by(lines_per_part) {
                let lines = start..(start + lines_per_part).min(mine.end);
                let cols = lines.start * inner..lines.end * inner;
                let (src, rec) = tables(lines.clone())?;
                let part = KirchhoffParams {
                    dynamic: params.dynamic.as_ref().map(|d| DynamicParams {
                        velocity: match d.velocity.len() {
                            1 => d.velocity.clone(),
                            _ => d.velocity[cols.clone()].to_vec(),
                        },
                        ..d.clone()
                    }),
                    ..params.clone()
                };
                let mut part_dims = dims.to_vec();
                part_dims[0] = lines.len();
                let rec = Arc::new(Side::new(engine, &rec, part.dynamic.as_ref(), true)?);
                let op = Self::with_receivers(engine, &part_dims, &src, rec, &part, false)?;
                ops.push(Box::new(op));
            }
            Ok(ops)
        })();
        let ops = comm.agree_value(ops)?;
        let sums = HStack::new(comm, ops)?;
        let traces = sums.range().global_len() / params.nt;
        let wavelet = Broadcasted::new(comm, Box::new(Self::wavelet_of(engine, traces, params)?))?;
        Op::new(wavelet).try_compose(&Op::new(sums))
    }

    /// [`image_split`](Self::image_split) in a constant velocity `vel` (straight rays): every
    /// rank passes every source and receiver position and computes the tables of its own lines
    /// ([`TravelTimes::constant_velocity_lines`]; with dynamic terms the amplitudes' `eps` of
    /// every position, [`TravelTimes::amplitude_eps`]).
    /// [Collective](distlops_core#collective-calls): a bad position or velocity on any rank is
    /// an error on every rank.
    ///
    /// ```
    /// use distlops_core::operator::LinearOperator;
    /// use distlops_core::{Host, Threads};
    /// use distlops_operators::local::{ImageGrid, Kirchhoff, KirchhoffParams};
    ///
    /// let out = Threads::run(2, |comm| {
    ///     // 5 x 4 points; parts of 2 lines of x: rank 0 holds lines 0..4, rank 1 line 4.
    ///     let grid = ImageGrid::new_2d(vec![0.0, 10.0, 20.0, 30.0, 40.0], vec![0.0, 10.0, 20.0, 30.0]);
    ///     let (srcs, recs) = (vec![vec![0.0, 0.0]], vec![vec![5.0, 0.0], vec![15.0, 0.0]]);
    ///     let params = KirchhoffParams { nt: 50, dt: 0.001, wavelet: vec![1.0], wavcenter: 0, dynamic: None };
    ///     let op = Kirchhoff::<f64>::constant_velocity_image_split(
    ///         &comm, &Host, &grid, (&srcs, &recs), 1000.0, &params, 2,
    ///     )?;
    ///     let points = op.domain().layout()?.local_len(comm.rank());
    ///     let traces = op.range().layout()?.local_len(comm.rank()); // all of them, on every rank
    ///     Ok::<_, distlops_core::Error>((points, traces))
    /// });
    /// assert_eq!(out.into_iter().map(|r| r.unwrap()).collect::<Vec<_>>(), [(16, 100), (4, 100)]);
    /// ```
    ///
    /// # Errors
    /// As [`TravelTimes::constant_velocity`] and [`image_split`](Self::image_split), on every
    /// rank.
    pub fn constant_velocity_image_split(
        comm: &Communicator,
        engine: &E,
        grid: &ImageGrid,
        (srcs, recs): (&[Vec<f64>], &[Vec<f64>]),
        vel: f64,
        params: &KirchhoffParams,
        lines_per_part: usize,
    ) -> Result<Op<T, E>> {
        // Checks the grid, the positions and the velocity on every rank, parts or not.
        let eps = comm.agree_value(TravelTimes::amplitude_eps(grid, (srcs, recs), vel))?;
        let eps = params.dynamic.as_ref().map(|_| eps);
        let tables = |lines: Range<usize>| {
            let t = |p: &[Vec<f64>]| {
                TravelTimes::constant_velocity_lines(grid, p, vel, eps, lines.clone())
            };
            Ok((t(srcs)?, t(recs)?))
        };
        Self::image_split(comm, engine, &grid.dims(), lines_per_part, tables, params)
    }
}
