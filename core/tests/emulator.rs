//! The `Cuda` engine on the emulated device against the `Host` engine: the same operations give
//! the same bits, on 1 to 4 `Threads` ranks with uneven blocks.
#![cfg(feature = "emulator")]

use distlops_core::ToEngine;
use distlops_core::{
    ApertureLimits, AxisBand, Banded, Complex32, Complex64, Compute, Cuda, Demigration,
    DemigrationWeights, DistributedArray, GroupScale, Host, Layout, Memory, NormOrd, RealScalar,
    Scalar, Shrink, StencilBand, StencilPart, StencilPlan, StencilTerm, Stencils, StridedCopy,
    Threads, TravelTimeGrid, APERTURE_TAPER,
};
use ndarray::{ArrayD, IxDyn};

/// Test values: real and imaginary parts from two incommensurate sequences.
trait Gen: Scalar {
    fn gen(re: f64, im: f64) -> Self;
}
impl Gen for f32 {
    fn gen(re: f64, im: f64) -> Self {
        (3.0 * re + im) as f32
    }
}
impl Gen for f64 {
    fn gen(re: f64, im: f64) -> Self {
        3.0 * re + im
    }
}
impl Gen for Complex64 {
    fn gen(re: f64, im: f64) -> Self {
        Complex64::new(re, im)
    }
}
impl Gen for Complex32 {
    fn gen(re: f64, im: f64) -> Self {
        Complex32::new(re as f32, im as f32)
    }
}

fn values<T: Gen>(n: usize, seed: f64) -> ArrayD<T> {
    ArrayD::from_shape_fn(IxDyn(&[n]), |i| {
        let k = i[0] as f64;
        T::gen((seed + 0.731 * k).sin(), (seed * 1.3 + 0.377 * k).cos())
    })
}

fn check<T: Gen>(n: usize, nranks: usize) {
    let a = values::<T>(n, 0.3);
    let b = values::<T>(n, 1.7);
    Threads::run(nranks, |comm| {
        let cuda = Cuda::emulated();
        let layout = Layout::scatter(&[n], 0, comm.size()).unwrap();
        let x = DistributedArray::to_dist(&comm, a.view(), &layout).unwrap();
        let y = DistributedArray::to_dist(&comm, b.view(), &layout).unwrap();
        let dx = x.to_engine(&cuda).unwrap();
        let mut dy = y.to_engine(&cuda).unwrap();
        assert_eq!(
            dx.dot(&dy).unwrap(),
            x.dot(&y).unwrap(),
            "dot n={n} P={nranks}"
        );
        assert_eq!(dx.vdot(&dy).unwrap(), x.vdot(&y).unwrap(), "vdot");
        assert_eq!(dx.norm2(), x.norm2(), "norm2");
        assert_eq!(
            dx.norm(NormOrd::Inf).unwrap(),
            x.norm(NormOrd::Inf).unwrap(),
            "norm inf"
        );
        let alpha = T::from_f64(0.7);
        let mut hy = y.clone();
        hy.axpy(alpha, &x).unwrap();
        dy.axpy(alpha, &dx).unwrap();
        assert_eq!(dy.asarray(), hy.asarray(), "axpy");
        hy.axpby(alpha, &x, T::from_f64(-1.3)).unwrap();
        dy.axpby(alpha, &dx, T::from_f64(-1.3)).unwrap();
        assert_eq!(dy.asarray(), hy.asarray(), "axpby");
        hy.imul(&x).unwrap();
        dy.imul(&dx).unwrap();
        assert_eq!(dy.asarray(), hy.asarray(), "imul");
        hy.idiv(&x).unwrap();
        dy.idiv(&dx).unwrap();
        assert_eq!(dy.asarray(), hy.asarray(), "idiv");
        hy.scale(T::from_f64(2.5));
        dy.scale(T::from_f64(2.5));
        assert_eq!(dy.conj().asarray(), hy.conj().asarray(), "scale, conj");
        // A diagonal along the block (inner 1) and one value broadcast over it (inner = len),
        // and a strided gather of every other element.
        let (hb, db) = (x.local_block(), dx.local_block());
        let len = hb.len();
        let (hs, ds) = (Host::slice(hb), Cuda::slice(db));
        for (d_len, inner) in [(len, 1), (usize::from(len > 0), len)] {
            let mut hout = Host.zeros::<T>(&[len]).unwrap();
            let mut dout = cuda.zeros::<T>(&[len]).unwrap();
            Host::diag_mul(
                Host::sub(hs, 0..d_len),
                inner,
                hs,
                Host::slice_mut(&mut hout),
            );
            Cuda::diag_mul(
                Cuda::sub(ds, 0..d_len),
                inner,
                ds,
                Cuda::slice_mut(&mut dout),
            );
            assert_eq!(Cuda::download(&dout), hout, "diag_mul {d_len} x {inner}");
        }
        // The proximal maps: every shrink (the soft threshold with weights too) and both group
        // scalings of two parts (a level and zero).
        let r = <T::Real as RealScalar>::real_from_f64;
        let shrinks = [
            Shrink::Soft(r(0.5)),
            Shrink::Hard(r(0.5)),
            Shrink::Clip(r(-0.5), r(0.5)),
            Shrink::Huber(r(0.5), r(1.0)),
        ];
        for (k, op) in shrinks.into_iter().enumerate() {
            for weighted in [false, k == 0] {
                let (mut h, mut d) = (Host::duplicate(hb), Cuda::duplicate(db));
                Host::shrink(op, weighted.then_some(hy.local_block()), &mut h);
                Cuda::shrink(op, weighted.then_some(dy.local_block()), &mut d);
                assert_eq!(Cuda::download(&d), h, "shrink {op:?} (weights: {weighted})");
            }
        }
        for op in [
            GroupScale::Shrink(r(0.5)),
            GroupScale::Project(r(0.5)),
            GroupScale::Shrink(r(0.0)),
        ] {
            let (h0, h1) = (Host::duplicate(hb), Host::duplicate(hy.local_block()));
            let (d0, d1) = (Cuda::duplicate(db), Cuda::duplicate(dy.local_block()));
            let mut hw = Host
                .zeros::<T::Real>(&[Host::group_scale_work(len)])
                .unwrap();
            let mut dw = cuda
                .zeros::<T::Real>(&[Cuda::group_scale_work(len)])
                .unwrap();
            for alpha in [None, Some(T::from_real(r(0.75)))] {
                let (mut h0, mut h1) = (Host::duplicate(&h0), Host::duplicate(&h1));
                let (mut d0, mut d1) = (Cuda::duplicate(&d0), Cuda::duplicate(&d1));
                let (ha, da) = ([hy.local_block(), hb], [dy.local_block(), db]);
                let hadd = alpha.map(|a| (a, &ha[..]));
                let dadd = alpha.map(|a| (a, &da[..]));
                Host::group_scale(op, &mut [&mut h0, &mut h1], hadd, &mut hw);
                Cuda::group_scale(op, &mut [&mut d0, &mut d1], dadd, &mut dw);
                assert_eq!(
                    (Cuda::download(&d0), Cuda::download(&d1)),
                    (h0, h1),
                    "group_scale {op:?} (added: {alpha:?})"
                );
            }
        }
        let copy = StridedCopy::new(&[len / 2], (1, &[2], len), (0, &[1], len)).unwrap();
        let mut hout = Host.zeros::<T>(&[len]).unwrap();
        let mut dout = cuda.zeros::<T>(&[len]).unwrap();
        Host::strided_copy(&copy, hs, Host::slice_mut(&mut hout));
        Cuda::strided_copy(&copy, ds, Cuda::slice_mut(&mut dout));
        assert_eq!(Cuda::download(&dout), hout, "strided copy");
        Host::strided_add(&copy, hs, Host::slice_mut(&mut hout));
        Cuda::strided_add(&copy, ds, Cuda::slice_mut(&mut dout));
        assert_eq!(Cuda::download(&dout), hout, "strided add");
        // A centred difference with one-sided edge rows along the block, fused and not.
        if len >= 2 {
            let rows = [
                (0, vec![(0, -1.0), (1, 1.0)]),
                (len - 1, vec![(len - 2, -1.0), (len - 1, 1.0)]),
            ];
            for fused in [false, true] {
                let band =
                    AxisBand::new((1, len, len, 1), &[(-1, -0.5), (1, 0.5)], 0, 0..len, &rows)
                        .unwrap()
                        .with_fma(fused);
                let table = ndarray::ArrayView1::from(band.table()).into_dyn();
                let (ht, dt) = (
                    Host.upload(table.clone()).unwrap(),
                    cuda.upload(table).unwrap(),
                );
                let mut hout = Host.zeros::<T>(&[len]).unwrap();
                let mut dout = cuda.zeros::<T>(&[len]).unwrap();
                Host::band(
                    &band,
                    Host::slice(&ht),
                    hs,
                    Host::slice_mut(&mut hout),
                    false,
                );
                Cuda::band(
                    &band,
                    Cuda::slice(&dt),
                    ds,
                    Cuda::slice_mut(&mut dout),
                    false,
                );
                assert_eq!(Cuda::download(&dout), hout, "band (fused: {fused})");
            }
        }
        let mut z = dy.zeros_like();
        assert!(z.asarray().iter().all(|v| *v == T::zero()));
        z.fill(alpha);
        assert!(z.asarray().iter().all(|v| *v == alpha));
    });
}

/// A stencil product on one rank (no ghost rows): output 0 = a centred difference with one-sided
/// edge rows along axis 0 of input 0, plus the same along axis 1 of input 1 (two runs of terms,
/// so two launches per part); every part, on both engines from the same plan.
fn check_stencil<R: Gen + RealScalar>(n0: usize, n1: usize) {
    let layout = Layout::scatter(&[n0, n1], 0, 1).unwrap();
    let centred = |n: usize| {
        StencilBand::new(
            n,
            1..n - 1,
            vec![(-1, -0.5), (1, 0.5)],
            vec![vec![(0, -1.0), (1, 1.0)]],
            vec![vec![(n - 2, -1.0), (n - 1, 1.0)]],
        )
        .unwrap()
    };
    let terms = vec![
        StencilTerm {
            out: 0,
            inp: 0,
            axis: 0,
            band: centred(n0),
        },
        StencilTerm {
            out: 0,
            inp: 1,
            axis: 1,
            band: centred(n1),
        },
    ];
    let plan = StencilPlan::new::<R>("emulator test", &layout, 0, (2, 1), terms).unwrap();
    let cuda = Cuda::emulated();
    let table = ndarray::ArrayView1::from(plan.table()).into_dyn();
    let (ht, dt) = (
        Host.upload(table.clone()).unwrap(),
        cuda.upload(table).unwrap(),
    );
    let (a, b) = (values::<R>(n0 * n1, 0.9), values::<R>(n0 * n1, 2.3));
    let (ha, hb) = (
        Host.upload(a.view()).unwrap(),
        Host.upload(b.view()).unwrap(),
    );
    let (da, db) = (
        cuda.upload(a.view()).unwrap(),
        cuda.upload(b.view()).unwrap(),
    );
    // One rank: the ghost buffer has no rows, but the parts that may read it take it.
    let hg = Host.zeros::<R>(&[plan.ghost_len()]).unwrap();
    let dg = cuda.zeros::<R>(&[plan.ghost_len()]).unwrap();
    for parts in [
        &[StencilPart::All][..],
        &[StencilPart::Interior, StencilPart::Rim],
    ] {
        let mut hout = Host.zeros::<R>(&[n0 * n1]).unwrap();
        let mut dout = cuda.zeros::<R>(&[n0 * n1]).unwrap();
        for &part in parts {
            Host::stencil(
                &plan,
                Host::slice(&ht),
                part,
                &[Host::slice(&ha), Host::slice(&hb)],
                Some(Host::slice(&hg)),
                &mut [Host::slice_mut(&mut hout)],
            );
            Cuda::stencil(
                &plan,
                Cuda::slice(&dt),
                part,
                &[Cuda::slice(&da), Cuda::slice(&db)],
                Some(Cuda::slice(&dg)),
                &mut [Cuda::slice_mut(&mut dout)],
            );
        }
        assert_eq!(
            Cuda::download(&dout),
            hout,
            "stencil {n0} x {n1}, parts {parts:?}"
        );
    }
}

/// Kirchhoff's sums along travel-time curves ([`Demigration`]): both directions on both
/// engines from the same tables, some times past the trace's end.
fn check_demigration<T: Gen>() {
    let grid = TravelTimeGrid {
        ns: 2,
        nr: 3,
        ni: 37,
        nt: 17,
        dt: 0.01,
    };
    let table = |n: usize, seed: f64| -> ArrayD<f64> {
        values::<f64>(n * grid.ni, seed).mapv(|v| 0.05 * (v.abs() + 0.1 * v))
    };
    let (src, rec) = (table(grid.ns, 0.2), table(grid.nr, 0.9));
    let x = values::<T>(grid.ni, 0.4);
    let y = values::<T>(grid.ns * grid.nr * grid.nt, 1.1);
    let cuda = Cuda::emulated();
    let up = |a: &ArrayD<f64>| cuda.upload(a.view()).unwrap();
    let (dsrc, drec) = (up(&src), up(&rec));
    let (dx, dy) = (
        cuda.upload(x.view()).unwrap(),
        cuda.upload(y.view()).unwrap(),
    );
    // Dynamic weights of either sign, and an offset aperture on depth columns of 37 points
    // (offsets 0 to 4 against limits 1.5 to 3: all three forms of its factor).
    let w = [
        table(grid.ns, 0.3).mapv(|v| v - 0.02),
        table(grid.ns, 0.5),
        table(grid.nr, 0.7).mapv(|v| 0.03 - v),
        table(grid.nr, 1.3),
    ];
    let off = ArrayD::from_shape_fn(vec![grid.ns * grid.nr], |k| (k[0] % 5) as f64);
    let taper = ArrayD::from_shape_fn(vec![APERTURE_TAPER], |k| 1.0 - k[0] as f64 / 20.0);
    let lim = ApertureLimits {
        nz: 37,
        min: 1.5,
        max: 3.0,
    };
    let dw: Vec<_> = w.iter().map(up).collect();
    let (doff, dtaper) = (up(&off), up(&taper));
    for case in 0..3 {
        let hw = (case > 0).then(|| DemigrationWeights::<Host> {
            src: [Host::slice(&w[0]), Host::slice(&w[1])],
            rec: [Host::slice(&w[2]), Host::slice(&w[3])],
            aperture: (case == 2).then(|| (lim, Host::slice(&off), Host::slice(&taper))),
        });
        let cw = (case > 0).then(|| DemigrationWeights::<Cuda> {
            src: [Cuda::slice(&dw[0]), Cuda::slice(&dw[1])],
            rec: [Cuda::slice(&dw[2]), Cuda::slice(&dw[3])],
            aperture: (case == 2).then(|| (lim, Cuda::slice(&doff), Cuda::slice(&dtaper))),
        });
        let mut hd = Host.zeros::<T>(&[y.len()]).unwrap();
        let mut dd = cuda.zeros::<T>(&[y.len()]).unwrap();
        let (hs, hr) = (Host::slice(&src), Host::slice(&rec));
        let (ds, dr) = (Cuda::slice(&dsrc), Cuda::slice(&drec));
        Host::demigrate(&grid, hs, hr, hw, Host::slice(&x), Host::slice_mut(&mut hd));
        Cuda::demigrate(
            &grid,
            ds,
            dr,
            cw,
            Cuda::slice(&dx),
            Cuda::slice_mut(&mut dd),
        );
        assert_eq!(Cuda::download(&dd), hd, "demigrate, case {case}");
        assert!(
            hd.iter().any(|v| v.abs().to_f64() > 0.0),
            "demigrate: all zero"
        );
        let mut hm = Host.zeros::<T>(&[x.len()]).unwrap();
        let mut dm = cuda.zeros::<T>(&[x.len()]).unwrap();
        Host::migrate(&grid, hs, hr, hw, Host::slice(&y), Host::slice_mut(&mut hm));
        Cuda::migrate(
            &grid,
            ds,
            dr,
            cw,
            Cuda::slice(&dy),
            Cuda::slice_mut(&mut dm),
        );
        assert_eq!(Cuda::download(&dm), hm, "migrate, case {case}");
    }
}

#[test]
fn emulated_engine_gives_the_host_bits() {
    check_demigration::<f64>();
    check_demigration::<f32>();
    check_demigration::<Complex64>();
    check_demigration::<Complex32>();
    for (n0, n1) in [(2, 2), (7, 5), (33, 70)] {
        check_stencil::<f64>(n0, n1);
        check_stencil::<f32>(n0, n1);
    }
    for n in [0, 1, 63, 64, 65, 1000, 4097, 70_001] {
        for p in 1..=4 {
            check::<f64>(n, p);
            check::<f32>(n, p);
            check::<Complex64>(n, p);
            check::<Complex32>(n, p);
        }
    }
    let missed = distlops_core::cuda::kernels_never_launched();
    assert!(missed.is_empty(), "kernels never launched: {missed:?}");
}

/// The emulated NVSHMEM reads a put's source when the stream reaches the barrier, the latest
/// moment NVSHMEM may: a source overwritten before the barrier delivers the new values (a race
/// on a GPU, made visible), and a source freed before it is an error on every rank; the heap
/// stays usable.
#[test]
fn a_put_reads_its_source_at_the_barrier() {
    for p in 1..=3 {
        Threads::run(p, |comm| {
            let cuda = Cuda::emulated();
            let heap = cuda.symmetric_heap(&comm).unwrap();
            let (r, next) = (comm.rank(), (comm.rank() + 1) % comm.size());
            let buf = heap.alloc::<f64>(3).unwrap();
            let mut src = cuda.upload(values::<f64>(3, r as f64).view()).unwrap();
            heap.put(Cuda::slice(&src), &buf, 0, next).unwrap();
            Cuda::fill(&mut src, 7.0);
            heap.barrier().unwrap();
            assert_eq!(
                Cuda::read_slice(buf.as_slice()),
                vec![7.0; 3],
                "rank {r}: the put did not deliver the source as it was at the barrier"
            );
            heap.put(Cuda::slice(&src), &buf, 0, next).unwrap();
            drop(src);
            let err = heap.barrier().unwrap_err().to_string();
            assert!(err.contains("freed before the barrier"), "{err}");
            heap.barrier().unwrap();
            heap.free(buf).unwrap();
        });
    }
}

/// The device-initiated all-reduce (`PeerReducer`) on 1-4 Threads ranks, on every path the
/// emulated heap offers: the peer and multicast paths give the rank-order sum bit for bit (inputs
/// whose sum depends on the order), every path gives the exact sum of one-hot slot vectors (the
/// reproducible sums' buffers), for f64, f32 and Complex64; a length that differs between ranks,
/// and a vector longer than the reducer on one rank only, are errors on every rank, after which
/// the reducer still works. (A path the heap lacks, refused on every rank: the suite's
/// symmetric-heap test under mpirun.)
#[test]
fn device_initiated_all_reduce_on_every_path() {
    use distlops_core::cuda::{PeerReducer, ReducePath};
    fn input<T: Gen>(rank: usize, n: usize, epoch: usize) -> Vec<T> {
        let scale = [1e16, 1.0, -1e16, 3.0][rank % 4];
        (0..n)
            .map(|i| {
                T::gen(
                    scale * (1.0 + 0.125 * (i % 7) as f64) + epoch as f64,
                    rank as f64,
                )
            })
            .collect()
    }
    fn one_hot<T: Gen>(rank: usize, ranks: usize, n: usize) -> Vec<T> {
        (0..n)
            .map(|i| {
                if i % ranks == rank {
                    T::gen(1.0 / (i + 1) as f64, -0.5)
                } else {
                    T::zero()
                }
            })
            .collect()
    }
    fn run<T: Gen>(
        cuda: &Cuda,
        comm: &distlops_core::Communicator,
        red: &mut PeerReducer,
        n: usize,
    ) {
        let (r, p) = (comm.rank(), comm.size());
        for epoch in 0..3 {
            let send = cuda
                .upload(
                    ArrayD::from_shape_vec(IxDyn(&[n]), input::<T>(r, n, epoch))
                        .unwrap()
                        .view(),
                )
                .unwrap();
            let mut recv = cuda
                .upload(ArrayD::from_elem(IxDyn(&[n]), T::zero()).view())
                .unwrap();
            red.all_reduce_sum(Cuda::slice(&send), Cuda::slice_mut(&mut recv))
                .unwrap();
            if red.path() != ReducePath::Collective {
                let mut want = input::<T>(0, n, epoch);
                for q in 1..p {
                    for (w, v) in want.iter_mut().zip(input::<T>(q, n, epoch)) {
                        *w += v;
                    }
                }
                assert_eq!(
                    Cuda::read_slice(Cuda::slice(&recv)),
                    want,
                    "{:?} rank {r} of {p}",
                    red.path()
                );
            }
            let send = cuda
                .upload(
                    ArrayD::from_shape_vec(IxDyn(&[n]), one_hot::<T>(r, p, n))
                        .unwrap()
                        .view(),
                )
                .unwrap();
            red.all_reduce_sum(Cuda::slice(&send), Cuda::slice_mut(&mut recv))
                .unwrap();
            let want: Vec<T> = (0..n).map(|i| one_hot::<T>(i % p, p, n)[i]).collect();
            assert_eq!(
                Cuda::read_slice(Cuda::slice(&recv)),
                want,
                "{:?} slots, rank {r} of {p}",
                red.path()
            );
        }
    }
    for p in 1..=4 {
        Threads::run(p, |comm| {
            let cuda = Cuda::emulated();
            let heap = cuda.symmetric_heap(&comm).unwrap();
            let r = comm.rank();
            for path in [
                ReducePath::Multicast,
                ReducePath::Peer,
                ReducePath::Collective,
            ] {
                let mut red = heap.reducer(300, Some(path)).unwrap();
                assert_eq!(red.path(), path);
                run::<f64>(&cuda, &comm, &mut red, 97 + p);
                run::<f32>(&cuda, &comm, &mut red, 531);
                run::<Complex64>(&cuda, &comm, &mut red, 150);
                if path != ReducePath::Collective {
                    let len = if r + 1 == p && p > 1 { 40 } else { 41 };
                    let send = cuda
                        .upload(ArrayD::from_elem(IxDyn(&[len]), 1.0f64).view())
                        .unwrap();
                    let mut recv = cuda
                        .upload(ArrayD::from_elem(IxDyn(&[len]), 0.0f64).view())
                        .unwrap();
                    let got = red.all_reduce_sum(Cuda::slice(&send), Cuda::slice_mut(&mut recv));
                    if p > 1 {
                        let err = got.unwrap_err().to_string();
                        assert!(err.contains("differ between ranks"), "rank {r}: {err}");
                    }
                    let len = if r == 0 { 301 } else { 41 };
                    let send = cuda
                        .upload(ArrayD::from_elem(IxDyn(&[len]), 1.0f64).view())
                        .unwrap();
                    let mut recv = cuda
                        .upload(ArrayD::from_elem(IxDyn(&[len]), 0.0f64).view())
                        .unwrap();
                    let err = red.all_reduce_sum(Cuda::slice(&send), Cuda::slice_mut(&mut recv));
                    assert!(
                        err.is_err(),
                        "rank {r}: a vector longer than the reducer on rank 0 passed"
                    );
                    run::<f64>(&cuda, &comm, &mut red, 64);
                }
                red.free(&heap).unwrap();
            }
            let best = heap.reducer(8, None).unwrap();
            assert_eq!(best.path(), ReducePath::Multicast);
            best.free(&heap).unwrap();
        });
    }
}
