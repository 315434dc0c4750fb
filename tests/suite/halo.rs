//! Halo: extended blocks against blocks cut by hand from the global array (block bounds computed
//! here, independently of the library), the true adjoint (every halo copy summed back to its
//! owner, bit for bit in the documented order of the sums), dot tests, errors on every rank, and `Halo^H BlockDiag(D_ext) Halo` /
//! `crop BlockDiag(D_ext) Halo` against the serial FirstDerivative, on process grids P x 1, 1 x P
//! and 2 x 2, in 1-D, 2-D and 3-D, for f64 and Complex64.

use super::check::{alive, expect_err, is_invalid_argument, is_layout_mismatch};
use super::engines::same_bits;
use super::util::{assert_close, global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt, Op, Space};
use distlops::core::signed_axis;
use distlops::core::{Communicator, Complex64, DistVector, DistributedArray, Error, Vector};
use distlops::operators::local::{
    DerivativeKind, FirstDerivativeParams, LocalFirstDerivative, LocalOperator,
};
use distlops::operators::{halo_block_split, BlockDiag, Halo, HaloBoundary, HaloWidths};
use ndarray::{ArrayD, Dimension, IxDyn, Slice};
use std::ops::Range;

/// `n` samples over `p` coordinates, the first `n % p` getting one more.
fn split(n: usize, p: usize) -> Vec<Range<usize>> {
    let mut at = 0;
    (0..p)
        .map(|c| {
            let len = n / p + usize::from(c < n % p);
            at += len;
            at - len..at
        })
        .collect()
}

/// Row-major coordinates of `rank` in `grid`.
fn coords(mut rank: usize, grid: &[usize]) -> Vec<usize> {
    let mut c = vec![0; grid.len()];
    for a in (0..grid.len()).rev() {
        c[a] = rank % grid[a];
        rank /= grid[a];
    }
    c
}

/// The core block of `rank`.
fn core_of(dims: &[usize], grid: &[usize], rank: usize) -> Vec<Range<usize>> {
    coords(rank, grid)
        .iter()
        .enumerate()
        .map(|(a, &c)| split(dims[a], grid[a])[c].clone())
        .collect()
}

/// `(before, after)` per axis, spelled out here.
fn sides(widths: &HaloWidths, nd: usize) -> Vec<(usize, usize)> {
    match widths {
        HaloWidths::Uniform(w) => vec![(*w, *w); nd],
        HaloWidths::PerAxis(v) => v.iter().map(|&w| (w, w)).collect(),
        HaloWidths::PerSide(v) => v.clone(),
    }
}

/// The global box of an extended block: widened, and clipped to the array for `Trim`.
fn ext_of(
    dims: &[usize],
    core: &[Range<usize>],
    widths: &[(usize, usize)],
    boundary: HaloBoundary,
) -> Vec<Range<isize>> {
    (0..dims.len())
        .map(|a| {
            let (lo, hi) = (
                core[a].start as isize - widths[a].0 as isize,
                core[a].end as isize + widths[a].1 as isize,
            );
            match boundary {
                HaloBoundary::Trim => lo.max(0)..hi.min(dims[a] as isize),
                _ => lo..hi,
            }
        })
        .collect()
}

fn shape_of(b: &[Range<isize>]) -> Vec<usize> {
    b.iter().map(|r| (r.end - r.start) as usize).collect()
}

/// The global index of position `idx` of the box starting at `start`, if inside `dims`.
fn global_index(start: &[isize], idx: &[usize], dims: &[usize]) -> Option<Vec<usize>> {
    (0..dims.len())
        .map(|a| {
            let v = start[a] + idx[a] as isize;
            (v >= 0 && (v as usize) < dims[a]).then_some(v as usize)
        })
        .collect()
}

/// The samples of `g` in the box `ext`, zeros outside the array.
fn expected_block<T: TestScalar>(g: &ArrayD<T>, ext: &[Range<isize>]) -> ArrayD<T> {
    let start: Vec<isize> = ext.iter().map(|r| r.start).collect();
    ArrayD::from_shape_fn(IxDyn(&shape_of(ext)), |idx| {
        global_index(&start, idx.slice(), g.shape()).map_or(T::zero(), |gi| g[IxDyn(&gi)])
    })
}

fn flat<T: TestScalar>(v: &DistVector<T>) -> Vec<T> {
    v.as_array().unwrap().local_slice().to_vec()
}

/// Forward values, metadata, true adjoint and dot test of one configuration.
fn check_case<T: TestScalar>(
    comm: &Communicator,
    dims: &[usize],
    grid: &[usize],
    widths: HaloWidths,
    boundary: HaloBoundary,
    seed: u64,
) {
    let (rank, p) = (comm.rank(), comm.size());
    let what = format!("dims {dims:?} grid {grid:?} widths {widths:?} {boundary:?} rank {rank}");
    let per_side = sides(&widths, dims.len());
    let halo = Halo::<T>::builder(dims, widths)
        .grid(grid)
        .boundary(boundary)
        .build(comm)
        .expect(&what);
    let cores: Vec<_> = (0..p).map(|r| core_of(dims, grid, r)).collect();
    let exts: Vec<_> = cores
        .iter()
        .map(|c| ext_of(dims, c, &per_side, boundary))
        .collect();
    let (core, ext) = (&cores[rank], &exts[rank]);

    // Metadata.
    let starts: Vec<usize> = core.iter().map(|r| r.start).collect();
    let lens: Vec<usize> = core.iter().map(|r| r.len()).collect();
    assert_eq!(halo.core_offsets(), &starts[..], "{what}: core offsets");
    assert_eq!(halo.core_shape(), &lens[..], "{what}: core shape");
    assert_eq!(
        halo.extended_shape(),
        &shape_of(ext)[..],
        "{what}: ext shape"
    );
    let ext_starts: Vec<isize> = ext.iter().map(|r| r.start).collect();
    assert_eq!(halo.extended_offsets(), ext_starts, "{what}: ext offsets");
    assert_eq!(
        halo.grid_coords(),
        &coords(rank, grid)[..],
        "{what}: coords"
    );
    assert_eq!(&halo_block_split(dims, grid, rank).unwrap(), core, "{what}");
    for r in 0..p {
        assert_eq!(&halo.core_ranges(r), &cores[r], "{what}: core of {r}");
    }
    let core_lens: Vec<usize> = cores
        .iter()
        .map(|c| c.iter().map(|r| r.len()).product())
        .collect();
    let ext_lens: Vec<usize> = exts.iter().map(|e| shape_of(e).iter().product()).collect();
    let domain = halo.domain().layout().unwrap().clone();
    let range = halo.range().layout().unwrap().clone();
    assert_eq!(domain.counts(), &core_lens[..], "{what}: domain counts");
    assert_eq!(range.counts(), &ext_lens[..], "{what}: range counts");

    // Forward: the hand-cut extended block, exactly (it is a copy).
    let g = global::<T>(dims, seed);
    let x = halo.scatter_global(g.view()).expect(&what);
    let want_core = g
        .slice_each_axis(|ax| Slice::from(core[ax.axis.index()].clone()))
        .iter()
        .copied()
        .collect::<Vec<_>>();
    assert_eq!(flat(&x), want_core, "{what}: scatter_global");
    assert_eq!(halo.gather_global(&x).unwrap(), g, "{what}: gather_global");
    // Outputs full of garbage: every sample must be overwritten (zeros outside the array too).
    let garbage = T::make(7.0, -3.0);
    let mut y = halo.new_range_vector().unwrap();
    y.fill(garbage);
    halo.matvec(x.view(), &mut y).expect(&what);
    let want = expected_block(&g, ext);
    assert_eq!(
        halo.extended_view(&y).unwrap(),
        want.view(),
        "{what}: forward"
    );

    // Adjoint: every rank's extended block summed into the global array, in the documented
    // order: the owner's own value, then the other ranks' copies by ascending rank.
    let total: usize = ext_lens.iter().sum();
    let yg = global::<T>(&[total], seed + 1);
    let v = DistVector::Array(DistributedArray::to_dist(comm, yg.view(), &range).unwrap());
    let mut acc = ArrayD::<T>::from_elem(IxDyn(dims), garbage);
    for owners in [true, false] {
        let mut at = 0;
        for (r, e) in exts.iter().enumerate() {
            let start: Vec<isize> = e.iter().map(|r| r.start).collect();
            let block = ArrayD::from_shape_vec(
                IxDyn(&shape_of(e)),
                yg.as_slice().unwrap()[at..at + ext_lens[r]].to_vec(),
            )
            .unwrap();
            for (idx, &val) in block.indexed_iter() {
                if let Some(gi) = global_index(&start, idx.slice(), dims) {
                    let own = gi.iter().zip(&cores[r]).all(|(i, c)| c.contains(i));
                    match (owners, own) {
                        (true, true) => acc[IxDyn(&gi)] = val,
                        (false, false) => acc[IxDyn(&gi)] += val,
                        _ => {}
                    }
                }
            }
            at += ext_lens[r];
        }
    }
    let mut xa = halo.new_domain_vector().unwrap();
    xa.fill(garbage);
    halo.rmatvec(v.view(), &mut xa).expect(&what);
    assert!(
        same_bits(&halo.gather_global(&xa).unwrap(), &acc),
        "{what}: adjoint (bits of the documented order of sums)"
    );

    let d = dottest(&halo, &x, &v).expect(&what);
    assert!(d.passes(1e-12), "{what}: dot test {d:?}");
}

/// The grids that fit `p` ranks for `nd` axes: all ranks on each axis in turn, and 2 x 2 (with
/// ones elsewhere) at 4 ranks.
pub fn grids(nd: usize, p: usize) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = (0..nd)
        .map(|a| {
            let mut g = vec![1; nd];
            g[a] = p;
            g
        })
        .collect();
    if p == 4 && nd >= 2 {
        for a in 0..nd - 1 {
            let mut g = vec![1; nd];
            g[a] = 2;
            g[a + 1] = 2;
            out.push(g);
        }
        if nd == 3 {
            out.push(vec![2, 1, 2]);
        }
    }
    out.dedup();
    out
}

/// Scalar, per-axis, per-side (asymmetric, some zero) and wide (several blocks) widths.
pub fn width_cases(nd: usize) -> Vec<HaloWidths> {
    let sides = [(1, 2), (0, 3), (2, 0)];
    vec![
        HaloWidths::Uniform(1),
        HaloWidths::Uniform(2),
        HaloWidths::PerAxis((1..=nd).collect()),
        HaloWidths::PerSide(sides[..nd].to_vec()),
        HaloWidths::Uniform(5),
    ]
}

fn values<T: TestScalar>(comm: &Communicator, all_widths: bool) {
    let p = comm.size();
    let mut seed = 100;
    for dims in [UNEVEN_1D, UNEVEN_2D, UNEVEN_3D] {
        for grid in grids(dims.len(), p) {
            let cases = width_cases(dims.len());
            let cases = if all_widths {
                cases
            } else {
                cases[3..].to_vec()
            };
            for widths in cases {
                for boundary in [HaloBoundary::Trim, HaloBoundary::Zeros] {
                    check_case::<T>(comm, dims, &grid, widths.clone(), boundary, seed);
                    seed += 2;
                }
            }
        }
    }
    // The default grid puts every rank on the last axis.
    let h = Halo::<T>::new(comm, UNEVEN_2D, 1).unwrap();
    assert_eq!(h.grid(), &[1, p]);
    check_case::<T>(
        comm,
        UNEVEN_2D,
        &[1, p],
        HaloWidths::Uniform(1),
        HaloBoundary::Trim,
        7,
    );
}

pub fn values_f64(comm: &Communicator) {
    values::<f64>(comm, true);
}

pub fn values_complex(comm: &Communicator) {
    values::<Complex64>(comm, false);
}

/// Fewer samples than ranks (empty blocks at 4 ranks: 3 samples split 1, 1, 1, 0; PyLops-MPI's
/// ceil rule would give 1, 1, 1, 0 here but 2, 2, 1, -1 for 5 over 4) and halos wider than
/// every block.
pub fn small_and_empty_blocks(comm: &Communicator) {
    let p = comm.size();
    for (dims, grid) in [
        (vec![3], vec![p]),
        (vec![5], vec![p]),
        (vec![2, 3], vec![p, 1]),
        (vec![3, 2], vec![1, p]),
    ] {
        for widths in [
            HaloWidths::Uniform(1),
            HaloWidths::Uniform(2),
            HaloWidths::PerSide(vec![(0, 3); dims.len()]),
        ] {
            for boundary in [HaloBoundary::Trim, HaloBoundary::Zeros] {
                check_case::<f64>(comm, &dims, &grid, widths.clone(), boundary, 31);
            }
        }
    }
    // The balanced split of 5 over 4 (PyLops-MPI: 2, 2, 1, -1).
    let blocks: Vec<_> = (0..4)
        .map(|r| halo_block_split(&[5], &[4], r).unwrap())
        .collect();
    assert_eq!(blocks, vec![vec![0..2], vec![2..3], vec![3..4], vec![4..5]]);
}

/// Invalid grids and widths, inconsistent arguments, wrong vectors: an error on every rank, and
/// every rank still responsive afterwards.
pub fn errors_on_every_rank(comm: &Communicator) {
    let (rank, p) = (comm.rank(), comm.size());
    let inv = is_invalid_argument;
    let build = |dims: &[usize], grid: &[usize], w: HaloWidths| {
        Halo::<f64>::builder(dims, w).grid(grid).build(comm)
    };
    expect_err(comm, build(&[13], &[p + 1], 1.into()), inv, "grid of p + 1");
    expect_err(comm, build(&[11, 7], &[p, 2], 1.into()), inv, "grid of 2p");
    expect_err(
        comm,
        build(&[11, 7], &[0, p], 1.into()),
        inv,
        "zero in grid",
    );
    expect_err(comm, build(&[11, 7], &[p], 1.into()), inv, "grid too short");
    expect_err(comm, build(&[13], &[1, p], 1.into()), inv, "grid too long");
    expect_err(comm, build(&[], &[], 1.into()), inv, "no axes");
    expect_err(
        comm,
        build(&[11, 7], &[p, 1], vec![1, 1, 1].into()),
        inv,
        "three widths for two axes",
    );
    expect_err(
        comm,
        build(&[7, 5, 9], &[1, 1, p], vec![(1, 1)].into()),
        inv,
        "one pair for three axes",
    );
    expect_err(
        comm,
        Halo::<f64>::builder(&[13], usize::MAX)
            .boundary(HaloBoundary::Zeros)
            .build(comm),
        inv,
        "widths too large to address",
    );
    if p > 1 {
        // Arguments that differ between ranks: widths, or a grid that only one rank gets wrong.
        expect_err(
            comm,
            build(&[13], &[p], rank.into()),
            inv,
            "widths per rank",
        );
        let grid = if rank == 0 { vec![p + 1] } else { vec![p] };
        expect_err(
            comm,
            build(&[13], &grid, 1.into()),
            inv,
            "grid wrong on rank 0",
        );
    }
    // halo_block_split is local.
    assert!(matches!(
        halo_block_split(&[5, 5], &[2], 0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        halo_block_split(&[5, 5], &[2, 2], 4),
        Err(Error::InvalidArgument(_))
    ));

    // Vectors outside the operator's spaces.
    let halo = Halo::<f64>::builder(&[11, 7], 1)
        .grid(&[p, 1])
        .boundary(HaloBoundary::Zeros)
        .build(comm)
        .unwrap();
    let wrong = Space::scatter_1d(78, p).unwrap().zeros(comm).unwrap();
    expect_err(
        comm,
        halo.apply(&wrong),
        is_layout_mismatch,
        "forward input",
    );
    expect_err(
        comm,
        halo.apply_adjoint(&wrong),
        is_layout_mismatch,
        "adjoint input",
    );
    let y = halo.new_range_vector().unwrap();
    expect_err(
        comm,
        halo.gather_global(&y),
        is_layout_mismatch,
        "gather a range vector",
    );
    expect_err(comm, halo.extended_view(&wrong), is_layout_mismatch, "view");
    let shape: &[usize] = if rank == 0 { &[7, 11] } else { &[11, 7] };
    let g = ArrayD::<f64>::zeros(IxDyn(shape));
    expect_err(
        comm,
        halo.scatter_global(g.view()),
        |e| matches!(e, Error::ShapeMismatch(_) | Error::FailedOnOtherRank { .. }),
        "scatter_global with a wrong shape on rank 0",
    );
    alive(comm);
}

/// `left * BlockDiag(FirstDerivative on the extended block) * H` against the serial
/// FirstDerivative on the global array: forward, adjoint and dot test.
#[allow(clippy::too_many_arguments)]
fn check_stencil<T: TestScalar>(
    comm: &Communicator,
    dims: &[usize],
    grid: &[usize],
    axis: usize,
    kind: DerivativeKind,
    order: usize,
    edge: bool,
    crop: bool,
    seed: u64,
) {
    let nd = dims.len();
    // Halos only where the stencil reads, so that the rows D_ext computes in the halos are its
    // zero rows and H^H adds nothing back; the crop drops those rows whatever they hold.
    let reach = match (kind, order) {
        (DerivativeKind::Forward, _) => (0, 1),
        (DerivativeKind::Backward, _) => (1, 0),
        (DerivativeKind::Centered, 3) => (1, 1),
        _ => (2, 2),
    };
    let widths = if crop {
        HaloWidths::Uniform(reach.0.max(reach.1))
    } else {
        HaloWidths::PerSide(
            (0..nd)
                .map(|a| if a == axis { reach } else { (0, 0) })
                .collect(),
        )
    };
    let what = format!(
        "dims {dims:?} grid {grid:?} axis {axis} {kind:?} order {order} edge {edge} crop {crop} \
         rank {}",
        comm.rank()
    );
    let halo = Halo::<T>::with_grid(comm, dims, grid, widths).expect(&what);
    let d_ext = LocalFirstDerivative::new(
        halo.extended_shape(),
        FirstDerivativeParams {
            axis: signed_axis(axis),
            sampling: 0.5,
            kind,
            edge,
            order,
        },
    )
    .unwrap();
    let bd = Op::new(BlockDiag::new(comm, vec![Box::new(d_ext)]).unwrap());
    let h = Op::new(halo.clone());
    let left = if crop { halo.crop() } else { h.h() };
    let op = (left * bd * h).expect(&what);

    let d = LocalFirstDerivative::new(
        dims,
        FirstDerivativeParams {
            axis: signed_axis(axis),
            sampling: 0.5,
            kind,
            edge,
            order,
        },
    )
    .unwrap();
    let serial = |g: &ArrayD<T>, adjoint: bool| {
        let mut out = vec![T::zero(); g.len()];
        let src = g.as_slice().unwrap();
        if adjoint {
            LocalOperator::<T>::rmatvec(&d, src, &mut out);
        } else {
            LocalOperator::<T>::matvec(&d, src, &mut out);
        }
        ArrayD::from_shape_vec(IxDyn(dims), out).unwrap()
    };
    let g = global::<T>(dims, seed);
    let x = halo.scatter_global(g.view()).unwrap();
    let got = halo.gather_global(&op.apply(&x).unwrap()).unwrap();
    assert_close(&got, &serial(&g, false), &format!("{what}: forward"));
    let g2 = global::<T>(dims, seed + 1);
    let y = halo.scatter_global(g2.view()).unwrap();
    let got = halo.gather_global(&op.apply_adjoint(&y).unwrap()).unwrap();
    assert_close(&got, &serial(&g2, true), &format!("{what}: adjoint"));
    let t = dottest(&op, &x, &y).unwrap();
    assert!(t.passes(1e-12), "{what}: dot test {t:?}");
}

fn stencils<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let schemes = [
        (DerivativeKind::Forward, 3, false),
        (DerivativeKind::Backward, 3, false),
        (DerivativeKind::Centered, 3, false),
        (DerivativeKind::Centered, 5, false),
    ];
    let mut seed = 500;
    let mut cases: Vec<(Vec<usize>, Vec<usize>, usize)> = vec![(UNEVEN_1D.to_vec(), vec![p], 0)];
    for grid in grids(2, p) {
        for axis in 0..2 {
            cases.push((UNEVEN_2D.to_vec(), grid.clone(), axis));
        }
    }
    cases.push((UNEVEN_3D.to_vec(), vec![1, p, 1], 1));
    if p == 4 {
        cases.push((UNEVEN_3D.to_vec(), vec![2, 1, 2], 2));
    }
    for (dims, grid, axis) in &cases {
        for &(kind, order, edge) in &schemes {
            for crop in [false, true] {
                check_stencil::<T>(comm, dims, grid, *axis, kind, order, edge, crop, seed);
                seed += 2;
            }
        }
        // One-sided boundary rows: exact with the crop (the halo rows of D_ext are not zero).
        for order in [3, 5] {
            let c = DerivativeKind::Centered;
            check_stencil::<T>(comm, dims, grid, *axis, c, order, true, true, seed);
            seed += 2;
        }
    }
}

pub fn stencils_f64(comm: &Communicator) {
    stencils::<f64>(comm);
}

pub fn stencils_complex(comm: &Communicator) {
    stencils::<Complex64>(comm);
}
