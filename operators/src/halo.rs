//! [`Halo`]: a Cartesian block decomposition of an N-D array, each block extended with halos
//! (ghost cells) taken from its neighbours (PyLops-MPI's `MPIHalo` and `halo_block_split`).
//!
//! One execution on every engine, in the files of `halo/`: the options ([`HaloWidths`],
//! [`HaloBoundary`], [`HaloBuilder`]), the decomposition (`geometry`), the plan of the messages
//! and their boxes (`plan`), the buffers, exchange and forward product (`execution`), the adjoint
//! and its order of sums (`adjoint`), and the crop.

mod adjoint;
mod crop;
mod execution;
mod geometry;
mod options;
mod plan;

use crate::vector_blocks::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Op, Space};
use distlops_core::ToEngine;
use distlops_core::VectorRef;
use distlops_core::{
    Communicator, Compute, DistVector, Engine, Error, Host, Layout, Result, Scalar, StridedCopy,
};
use execution::Buffers;
pub use geometry::halo_block_split;
use geometry::{lens, signed, start_in, unravel, Geometry};
use ndarray::{ArrayD, ArrayViewD, IxDyn};
pub use options::{HaloBoundary, HaloBuilder, HaloWidths};
use plan::{box_copy, Plan};
use std::ops::Range;

/// `y = H x`: every rank's block of an N-D array, extended with halos copied from the blocks
/// around it (PyLops-MPI's `MPIHalo`).
///
/// The global array of shape `dims` is split into a Cartesian grid of blocks, one per rank
/// (`grid`, see [`halo_block_split`] for the balanced split and the row-major rank placement).
/// Rank `r`'s *core* block `C_r` is widened by `(before, after)` samples along every axis
/// ([`HaloWidths`]) into its *extended* block `E_r` (clipped to the global array with
/// [`HaloBoundary::Trim`], the default; kept whole with [`HaloBoundary::Zeros`]). With `x` the
/// global array and `e_r` the global index of the first sample of `E_r`:
///
/// ```text
/// forward:  y_r[j] = x[e_r + j]   if e_r + j is inside the global array, else 0    (j in E_r)
/// adjoint:  x[i]   = sum over r of y_r[i - e_r]   for every r whose E_r contains i
/// ```
///
/// The adjoint is the true one: every sample gets its own value plus every copy of it that sits
/// in another rank's halo, summed back to its owner (so `H^H H` is diagonal with the number of
/// blocks that contain each sample, and the dot test passes). Halos include the corners, and a
/// width may exceed the neighbouring blocks: samples then come from every rank they live on.
///
/// * Partitions: domain Scatter (1-D; rank `r` holds `C_r` flattened in C order, see
///   [`scatter_global`](Self::scatter_global) and [`gather_global`](Self::gather_global)) ->
///   range Scatter (1-D; rank `r` holds `E_r` flattened in C order, of shape
///   [`extended_shape`](Self::extended_shape)).
/// * Communication per product: one neighbour exchange (every message posted at once), into
///   buffers allocated at construction; no collectives.
/// * Engines: the constructors build it on the [`Host`]; [`to_engine`](distlops_core::ToEngine::to_engine) makes
///   the same operator on any engine (a `Cuda` device). One execution, written once over the
///   engine's parts: the boxes of the messages are packed and placed with
///   [`Compute::strided_copy`] and move in one `Collectives::exchange` (every rank takes part);
///   the adjoint adds each received box into its owner's samples with [`Compute::strided_add`],
///   one message at a time in ascending rank order after the owner's own value (see the order of
///   the sums below), so every engine gives the same bits. [`crop`](Self::crop) runs on the
///   operator's engine too; the global-array helpers
///   ([`scatter_global`](Self::scatter_global), ...) are host-only.
/// * Sums of the adjoint, for a sample `i` of rank `r`'s core and `q1 < q2 < ...` the other ranks
///   whose extended blocks hold it: `x[i] = ((y_r[i] + y_q1[i]) + y_q2[i]) + ...`, one rounded
///   addition each, no fused operation.
/// * Stencils: `H^H BlockDiag(D_ext) H` equals a serial operator `D` when the halo rows of
///   `D_ext`'s output are zero, e.g. `FirstDerivative` along one axis with widths `(0, 1)`
///   (forward), `(1, 0)` (backward), `1` (centred, order 3) or `2` (order 5) on that axis and `0`
///   on the others. [`crop`](Self::crop)`() * BlockDiag(D_ext) * H` keeps only the core rows and
///   equals `D` whenever the halos cover what the core rows read (and, with
///   [`HaloBoundary::Trim`], the rows at the global edges are `D`'s own boundary rows).
/// * PyLops-MPI: `MPIHalo(dims, halo, proc_grid_shape)`. Differences: a true adjoint (PyLops-MPI's
///   adjoint only crops, so its operator fails the dot test; that crop is [`crop`](Self::crop)
///   here); the balanced block split (PyLops-MPI's ceil rule can give negative blocks); one boundary rule
///   for every width form, chosen with [`HaloBoundary`] (PyLops-MPI trims an `int` halo at the
///   global edges but fills tuple halos with zeros); any widths, including wider than a
///   neighbour's block and different before and after (PyLops-MPI exchanges with one neighbour
///   per side and needs `after` of a rank to equal `before` of the next); no per-product
///   all-gather of the local sizes.
///
/// ```
/// use distlops_core::operator::{LinearOperatorExt, Op};
/// use distlops_core::Threads;
/// use distlops_operators::local::{DerivativeKind, LocalFirstDerivative, FirstDerivativeParams, LocalOperator};
/// use distlops_operators::{BlockDiag, Halo};
///
/// let ok = Threads::run(3, |comm| -> distlops_core::Result<bool> {
///     // 20 samples over 3 ranks (7, 7, 6), one sample of halo on each inner side.
///     let halo = Halo::<f64>::new(&comm, &[20], 1)?;
///     let shape = halo.extended_shape(); // [8], [9], [7]
///     let d = LocalFirstDerivative::new(shape, FirstDerivativeParams { axis: 0, ..Default::default() })?;
///     let d = Op::new(BlockDiag::new(&comm, vec![Box::new(d)])?);
///     let h = Op::new(halo.clone());
///     let op = (h.h() * d * &h)?;
///     let x = ndarray::ArrayD::from_shape_fn(vec![20], |i| (i[0] * i[0]) as f64);
///     let y = halo.gather_global(&op.apply(&halo.scatter_global(x.view())?)?)?;
///     // The serial centred derivative of i^2 is 2 i, with zero end rows.
///     Ok((1..19).all(|i| y[[i]] == 2.0 * i as f64) && y[[0]] == 0.0 && y[[19]] == 0.0)
/// });
/// assert!(ok.into_iter().all(|r| r == Ok(true)));
/// ```
pub struct Halo<T: Scalar, E: Engine = Host> {
    geometry: Geometry,
    coords: Vec<usize>,
    core_offsets: Vec<usize>,
    core_shape: Vec<usize>,
    halo_widths: Vec<(usize, usize)>,
    extended_shape: Vec<usize>,
    /// The messages, their boxes and copies (the same on every engine).
    plan: Plan,
    /// The message buffers on the operator's engine.
    buffers: Buffers<T, E>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

/// A copy: cloning allocates the message buffers again and panics if that fails (as a `Vec`
/// does when memory runs out).
impl<T: Scalar, E: Engine> Clone for Halo<T, E> {
    fn clone(&self) -> Self {
        self.with_buffers(self.buffers.again().expect("Halo: message buffers"))
    }
}

impl<T: Scalar, E: Engine> std::fmt::Debug for Halo<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Halo")
            .field("dims", &self.geometry.dims)
            .field("grid", &self.geometry.grid)
            .field("widths", &self.geometry.widths)
            .field("boundary", &self.geometry.boundary)
            .field("rank", &self.comm.rank())
            .field("core_shape", &self.core_shape)
            .field("extended_shape", &self.extended_shape)
            .field("engine", &E::NAME)
            .finish()
    }
}

impl<T: Scalar> Halo<T> {
    /// A halo operator with all ranks on the last axis and [`HaloBoundary::Trim`].
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (see
    /// [`HaloBuilder::build`]).
    ///
    /// # Errors
    /// As [`HaloBuilder::build`].
    pub fn new(comm: &Communicator, dims: &[usize], widths: impl Into<HaloWidths>) -> Result<Self> {
        Self::builder(dims, widths).build(comm)
    }

    /// A halo operator on the process grid `grid` with [`HaloBoundary::Trim`].
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (see
    /// [`HaloBuilder::build`]).
    ///
    /// # Errors
    /// As [`HaloBuilder::build`].
    pub fn with_grid(
        comm: &Communicator,
        dims: &[usize],
        grid: &[usize],
        widths: impl Into<HaloWidths>,
    ) -> Result<Self> {
        Self::builder(dims, widths).grid(grid).build(comm)
    }

    /// Starts building a halo operator for an array of shape `dims`, to set the grid or the
    /// boundary rule (no communication until [`build`](HaloBuilder::build)):
    ///
    /// ```
    /// use distlops_operators::{Halo, HaloBoundary};
    /// let comm = distlops_core::Communicator::serial();
    /// let h = Halo::<f64>::builder(&[4, 5], [(1, 0), (2, 2)])
    ///     .grid(&[1, 1])
    ///     .boundary(HaloBoundary::Zeros)
    ///     .build(&comm)?;
    /// assert_eq!(h.extended_shape(), &[5, 9]);
    /// # Ok::<(), distlops_core::Error>(())
    /// ```
    pub fn builder(dims: &[usize], widths: impl Into<HaloWidths>) -> HaloBuilder<T> {
        HaloBuilder::new(dims, widths.into())
    }

    /// The halo of a Scatter `layout` with any counts (one block per rank along its axis, in
    /// rank order), widened by `widths = (before, after)` along that axis only and trimmed at
    /// the global edges: the ghost rows a distributed operator along the layout's axis reads.
    /// [Collective](distlops_core#collective-calls) as [`from_geometry`](Self::from_geometry);
    /// the caller has checked the layout against `comm`.
    ///
    /// # Errors
    /// As [`from_geometry`](Self::from_geometry).
    pub(crate) fn along_layout(
        comm: &Communicator,
        layout: &Layout,
        widths: (usize, usize),
    ) -> Result<Self> {
        let (dims, axis) = (layout.global_shape(), layout.axis());
        let mut bounds: Vec<Vec<usize>> = dims.iter().map(|&n| vec![0, n]).collect();
        bounds[axis] = layout.offsets().to_vec();
        bounds[axis].push(dims[axis]);
        let (mut grid, mut per_side) = (vec![1; dims.len()], vec![(0, 0); dims.len()]);
        grid[axis] = comm.size();
        per_side[axis] = widths;
        let geometry = Geometry {
            dims: dims.to_vec(),
            grid,
            bounds,
            widths: per_side,
            boundary: HaloBoundary::Trim,
        };
        Self::from_geometry(comm, geometry)
    }

    /// The operator of a validated decomposition, on the host. [Collective](distlops_core#collective-calls):
    /// the ranks agree on the allocation of the buffers (one small all-reduce).
    fn from_geometry(comm: &Communicator, geometry: Geometry) -> Result<Self> {
        let (me, size) = (comm.rank(), comm.size());
        let cores: Vec<Vec<Range<isize>>> = (0..size)
            .map(|r| geometry.core(r).into_iter().map(signed).collect())
            .collect();
        let exts: Vec<Vec<Range<isize>>> = (0..size).map(|r| geometry.extended(r)).collect();
        let volume = |b: &[Range<isize>]| lens(b).iter().product::<usize>();
        let layout = |counts: Vec<usize>| Layout::with_counts(&[counts.iter().sum()], 0, &counts);
        let domain = Space::array(layout(cores.iter().map(|b| volume(b)).collect())?);
        let range = Space::array(layout(exts.iter().map(|b| volume(b)).collect())?);
        let plan = Plan::new(me, &cores, &exts, &geometry.dims);
        let buffers = comm.agree_value(Buffers::new(&Host, plan.buffer_lens))?;
        let (core, ext) = (&cores[me], &exts[me]);
        Ok(Halo {
            coords: unravel(me, &geometry.grid),
            core_offsets: core.iter().map(|r| r.start as usize).collect(),
            core_shape: lens(core),
            halo_widths: start_in(core, ext)
                .into_iter()
                .zip(core.iter().zip(ext))
                .map(|(before, (c, e))| (before, (e.end - c.end) as usize))
                .collect(),
            extended_shape: lens(ext),
            plan,
            buffers,
            geometry,
            domain,
            range,
            comm: comm.clone(),
        })
    }
}

impl<T: Scalar, E: Engine> Halo<T, E> {
    /// The crop `C`: range vectors (extended blocks) to domain vectors (their cores), dropping the
    /// halos; its adjoint pads the cores with zero halos. No communication.
    ///
    /// `C BlockDiag(D_ext) H` is PyLops-MPI's `Halo.H @ BlockDiag(D_ext) @ Halo`: it applies a
    /// local operator to every extended block and keeps the core rows, which equals a serial
    /// operator `D` whenever the core rows of `D_ext` only read samples inside the extended block
    /// (and the global boundary rows agree, as they do with [`HaloBoundary::Trim`]). Unlike
    /// PyLops-MPI's, the product's adjoint `H^H D_ext^H C^H` is exact.
    ///
    /// On the operator's engine: one strided copy each way (and a fill of the halos with zeros
    /// for the adjoint), the same bits on every engine.
    pub fn crop(&self) -> Op<T, E> {
        Op::new(crop::Crop::new(
            (self.plan.ext_to_core.clone(), self.plan.core_to_ext.clone()),
            self.range.clone(),
            self.domain.clone(),
            self.comm.clone(),
        ))
    }

    /// `y = H x` on this rank's blocks, without the checks of a product: `x` is this rank's
    /// core block, `y` its extended block. [Collective](distlops_core#collective-calls): one
    /// neighbour exchange.
    ///
    /// # Errors
    /// What the engine's exchange reports.
    pub(crate) fn extend_into(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) -> Result<()> {
        self.plan.forward(&self.buffers, &self.comm, x, y)
    }

    /// The same operator with other buffers (on another engine, or for a clone).
    fn with_buffers<F: Engine>(&self, buffers: Buffers<T, F>) -> Halo<T, F> {
        Halo {
            geometry: self.geometry.clone(),
            coords: self.coords.clone(),
            core_offsets: self.core_offsets.clone(),
            core_shape: self.core_shape.clone(),
            halo_widths: self.halo_widths.clone(),
            extended_shape: self.extended_shape.clone(),
            plan: self.plan.clone(),
            buffers,
            domain: self.domain.clone(),
            range: self.range.clone(),
            comm: self.comm.clone(),
        }
    }

    /// The global shape.
    pub fn dims(&self) -> &[usize] {
        &self.geometry.dims
    }

    /// The process grid (ranks along each axis).
    pub fn grid(&self) -> &[usize] {
        &self.geometry.grid
    }

    /// This rank's coordinates in the process grid (row-major placement).
    pub fn grid_coords(&self) -> &[usize] {
        &self.coords
    }

    /// The requested `(before, after)` widths of every axis.
    pub fn widths(&self) -> &[(usize, usize)] {
        &self.geometry.widths
    }

    /// The boundary rule.
    pub fn boundary(&self) -> HaloBoundary {
        self.geometry.boundary
    }

    /// Where this rank's core block starts in the global array.
    pub fn core_offsets(&self) -> &[usize] {
        &self.core_offsets
    }

    /// The shape of this rank's core block (what a local operator on the domain acts on).
    pub fn core_shape(&self) -> &[usize] {
        &self.core_shape
    }

    /// The core block of any rank, in global indices (see [`halo_block_split`]).
    ///
    /// # Panics
    /// If `rank` is not a rank of the communicator.
    pub fn core_ranges(&self, rank: usize) -> Vec<Range<usize>> {
        assert!(rank < self.comm.size(), "core_ranges: no rank {rank}");
        self.geometry.core(rank)
    }

    /// The `(before, after)` halo widths this rank actually has along each axis: the requested
    /// widths, clipped at the global edges with [`HaloBoundary::Trim`].
    pub fn halo_widths(&self) -> &[(usize, usize)] {
        &self.halo_widths
    }

    /// The shape of this rank's extended block (what a local operator on the range acts on).
    pub fn extended_shape(&self) -> &[usize] {
        &self.extended_shape
    }

    /// Where this rank's extended block starts in the global array (negative before the start
    /// with [`HaloBoundary::Zeros`]).
    pub fn extended_offsets(&self) -> Vec<isize> {
        self.core_offsets
            .iter()
            .zip(&self.halo_widths)
            .map(|(&o, &(b, _))| o as isize - b as isize)
            .collect()
    }
}

impl<T: Scalar, E: Engine, F: Engine> ToEngine<F> for Halo<T, E> {
    type Output = Halo<T, F>;

    /// The same operator running on `engine`, with its message buffers allocated there, once.
    /// [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one small
    /// all-reduce), so a failure on one rank only is an error on every rank. Products run the
    /// one execution of [`Halo`] on that engine, with the same bits as on the host.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the buffers (on that rank;
    /// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
    fn to_engine(&self, engine: &F) -> Result<Halo<T, F>> {
        let buffers = self
            .comm
            .agree_value(Buffers::new(engine, self.plan.buffer_lens))?;
        Ok(self.with_buffers(buffers))
    }
}

impl<T: Scalar> Halo<T> {
    /// The domain vector of a global array that every rank holds: each rank keeps its core block.
    /// [Collective](distlops_core#collective-calls): every rank of the operator's communicator
    /// calls it (one small all-reduce agrees on the shape check); no array data moves.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on every rank if `global` does not have shape
    /// [`dims`](Self::dims) on some rank.
    pub fn scatter_global(&self, global: ArrayViewD<'_, T>) -> Result<DistVector<T>> {
        let check = if global.shape() == self.dims() {
            Ok(())
        } else {
            Err(Error::ShapeMismatch(format!(
                "Halo::scatter_global: the array has shape {:?}, the operator dims {:?}",
                global.shape(),
                self.dims()
            )))
        };
        self.comm.agree(check)?;
        let global = global.as_standard_layout();
        let src = global.as_slice().expect("standard layout");
        let mut v = self.domain.zeros(&self.comm)?;
        let core_len = self.core_shape.iter().product();
        let gather = self.global_box(self.comm.rank(), (0, core_len), true);
        Host::strided_copy(&gather, src, plain_mut(&mut v));
        Ok(v)
    }

    /// The copy between rank `r`'s core block in the global array and elements `at..` of a flat
    /// buffer of `len` (to the buffer if `gather`).
    fn global_box(&self, r: usize, (at, len): (usize, usize), gather: bool) -> StridedCopy {
        let core = self.geometry.core(r);
        let start: Vec<usize> = core.iter().map(|c| c.start).collect();
        let shape: Vec<usize> = core.iter().map(|c| c.len()).collect();
        box_copy(self.dims(), (&start, &shape), (at, len), gather)
    }

    /// The global N-D array of a domain vector, on every rank.
    /// [Collective](distlops_core#collective-calls): every rank of the operator's communicator
    /// calls it (one small all-reduce of the ranks' checks, then one all-gather).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if `x` is not in the domain, on every rank even when only one
    /// rank's vector is wrong.
    pub fn gather_global<'a>(&self, x: impl Into<VectorRef<'a, T>>) -> Result<ArrayD<T>>
    where
        T: 'a,
    {
        let x = x.into();
        let check = self.domain.check(x, "Halo::gather_global input");
        self.comm.agree_on(
            "Halo::gather_global",
            self.domain.fingerprint(),
            || self.domain.describe(),
            check,
        )?;
        let layout = self.domain.layout().expect("plain space");
        let mut buf = vec![T::zero(); layout.global_len()];
        self.comm
            .all_gather_varcount_into(plain(x), &mut buf, layout.counts());
        let mut out = distlops_core::alloc::array_zeros(self.dims());
        let dst = out.as_slice_mut().expect("standard layout");
        for r in 0..self.comm.size() {
            let (at, n) = (layout.offset(r), layout.count(r));
            let place = self.global_box(r, (0, n), false);
            Host::strided_copy(&place, &buf[at..at + n], &mut *dst);
        }
        Ok(out)
    }

    /// This rank's block of a range vector as an N-D view of shape
    /// [`extended_shape`](Self::extended_shape). No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if `y` is not in the range.
    pub fn extended_view<'a>(&self, y: &'a DistVector<T>) -> Result<ArrayViewD<'a, T>> {
        self.range.check(y, "Halo::extended_view input")?;
        Ok(
            ArrayViewD::from_shape(IxDyn(&self.extended_shape), plain(y))
                .expect("the range holds the extended block"),
        )
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Halo<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.extend_into(plain(x), plain_mut(y))
    }

    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.plan
            .adjoint(&self.buffers, &self.comm, plain(y), plain_mut(x))
    }

    fn name(&self) -> String {
        "Halo".into()
    }
}
