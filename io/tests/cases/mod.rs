//! Test bodies shared by the Threads tests (`threads.rs`, 1-4 ranks) and the MPI test binary
//! (`mpi.rs`, `mpirun -n 1..4`): each runs on every rank with that rank's communicator and a
//! folder that every rank sees.

#![allow(dead_code)]

pub mod fixture;

use distlops_core::{Communicator, DistributedArray, Error, Layout, Partition};
use distlops_io::npy::{read_npy, write_npy, NpyFile};
use distlops_io::segy::{
    f64_to_ibm, ibm_to_f64, write_segy, ByteOrder, HeaderField, SampleFormat, SegyOptions,
    SegyReader, SegySpec, SegyTemplate, Sorting, TraceHeader,
};
use fixture::Fixture;
use std::path::{Path, PathBuf};

/// A test body.
pub type Case = fn(&Communicator, &Path);

/// Every shared test, by name.
pub const CASES: &[(&str, Case)] = &[
    (
        "segy_reads_every_kind_of_cube",
        segy_reads_every_kind_of_cube,
    ),
    (
        "segy_ranks_read_only_their_traces",
        segy_ranks_read_only_their_traces,
    ),
    ("segy_round_trips_new_cubes", segy_round_trips_new_cubes),
    ("segy_copy_keeps_every_header", segy_copy_keeps_every_header),
    ("segy_errors_on_every_rank", segy_errors_on_every_rank),
    (
        "npy_round_trips_and_reads_only_own_rows",
        npy_round_trips_and_reads_only_own_rows,
    ),
    ("npy_errors_on_every_rank", npy_errors_on_every_rank),
];

/// A new empty folder for a test.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("distlops-io-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Rank 0 writes the fixture; every rank waits for it.
fn write_fixture(comm: &Communicator, f: &Fixture, path: &Path) {
    if comm.rank() == 0 {
        f.write(path);
    }
    comm.barrier();
}

/// The file index of each trace of this rank's block of `layout`, in the block's C order.
pub fn local_trace_indices(
    sorting: Sorting,
    n_il: usize,
    n_xl: usize,
    layout: &Layout,
    rank: usize,
) -> Vec<usize> {
    let range = |axis: usize, n: usize| {
        if layout.axis() == axis {
            layout.offset(rank)..layout.offset(rank) + layout.count(rank)
        } else {
            0..n
        }
    };
    let mut out = Vec::new();
    for il in range(0, n_il) {
        for xl in range(1, n_xl) {
            out.push(match sorting {
                Sorting::Inline => il * n_xl + xl,
                Sorting::Crossline => xl * n_il + il,
            });
        }
    }
    out
}

/// Checks a read cube against the fixture: every sample, the line numbers, the sampling and
/// every trace header's line numbers.
fn check_against_fixture(f: &Fixture, reader: &SegyReader, layout: &Layout, rank: usize) {
    let g = reader.geometry();
    assert_eq!(g.shape(), [f.n_il, f.n_xl, f.nt]);
    if f.n_il > 1 && f.n_xl > 1 {
        assert_eq!(g.sorting, f.sorting); // with one line, both sortings are the same file
    }
    assert_eq!(g.format, f.format);
    assert_eq!(g.byte_order, f.order);
    assert_eq!(g.sample_interval_us, Some(f64::from(f.dt_us)));
    assert_eq!(g.delay_ms, f64::from(f.delay_ms));
    assert_eq!(g.data_offset, f.header_bytes());
    assert_eq!(reader.header().extended.len(), f.ext_blocks);
    let il: Vec<i64> = (0..f.n_il).map(|i| f.iline_number(i)).collect();
    let xl: Vec<i64> = (0..f.n_xl).map(|i| f.xline_number(i)).collect();
    assert_eq!((&g.ilines, &g.xlines), (&il, &xl));
    let volume = reader.read::<f64>(layout).unwrap();
    let local = volume.data.local();
    let (o, axis) = (layout.offset(rank), layout.axis());
    for ((i, j, t), &v) in local
        .view()
        .into_dimensionality::<ndarray::Ix3>()
        .unwrap()
        .indexed_iter()
    {
        let (gi, gj) = if axis == 0 { (i + o, j) } else { (i, j + o) };
        assert_eq!(v, f.value(gi, gj, t), "sample ({gi}, {gj}, {t}) of {f:?}");
    }
    let headers = volume.template.trace_headers();
    let ks = local_trace_indices(f.sorting, f.n_il, f.n_xl, layout, rank);
    assert_eq!(headers.len(), ks.len());
    for (h, k) in headers.iter().zip(ks) {
        assert_eq!(h.get(TraceHeader::SEQUENCE_LINE, f.order), k as i64 + 1);
    }
}

/// The fixtures the read tests go through.
fn fixtures() -> Vec<Fixture> {
    let mut out = Vec::new();
    for format in SampleFormat::ALL {
        out.push(Fixture {
            format,
            ..Fixture::new(5, 3, 7)
        });
    }
    out.push(Fixture {
        sorting: Sorting::Crossline,
        format: SampleFormat::IbmFloat32,
        ..Fixture::new(6, 4, 9)
    });
    out.push(Fixture {
        order: ByteOrder::Little,
        ext_blocks: 2,
        ..Fixture::new(4, 5, 6)
    });
    out.push(Fixture {
        sorting: Sorting::Crossline,
        ext_blocks: 3,
        ext_variable: true,
        iline: HeaderField::i32(9),
        xline: HeaderField::i32(21),
        ..Fixture::new(3, 7, 5)
    });
    out.push(Fixture::new(1, 9, 8)); // a 2-D section: one inline
    out.push(Fixture::new(7, 1, 8)); // one crossline
    out.push(Fixture::new(1, 1, 4)); // one trace
    out
}

fn options(f: &Fixture) -> SegyOptions {
    SegyOptions {
        iline: f.iline,
        xline: f.xline,
        ..SegyOptions::default()
    }
}

/// Every sample format, both sortings, both byte orders, extended headers, other line-number
/// fields, sections and single traces, split along inlines and along crosslines.
pub fn segy_reads_every_kind_of_cube(comm: &Communicator, dir: &Path) {
    for (i, f) in fixtures().iter().enumerate() {
        let path = dir.join(format!("read{i}.sgy"));
        write_fixture(comm, f, &path);
        let reader = SegyReader::open(comm, &path, &options(f)).unwrap();
        for axis in [0, 1] {
            let layout = reader.layout(axis).unwrap();
            check_against_fixture(f, &reader, &layout, comm.rank());
        }
        assert_eq!(
            reader.default_layout().axis(),
            usize::from(f.n_il == 1),
            "{f:?}"
        );
    }
}

/// Every rank reads exactly its own traces; rank 0 also the file header and the scanned trace
/// headers (`n_il + n_xl - 1` of them); nothing else.
pub fn segy_ranks_read_only_their_traces(comm: &Communicator, dir: &Path) {
    for (i, f) in fixtures().iter().enumerate() {
        let path = dir.join(format!("bytes{i}.sgy"));
        write_fixture(comm, f, &path);
        for axis in [0, 1] {
            let reader = SegyReader::open(comm, &path, &options(f)).unwrap();
            let opened = reader.stats().bytes_read;
            let scan = if comm.rank() == 0 {
                f.header_bytes() + 240 * f.scan_headers()
            } else {
                0
            };
            assert_eq!(opened, scan, "bytes read by open, {f:?}");
            let layout = reader.layout(axis).unwrap();
            reader.read::<f32>(&layout).unwrap();
            let own = layout.local_len(comm.rank()) as u64 / f.nt as u64 * f.trace_bytes();
            assert_eq!(reader.stats().bytes_read, scan + own, "{f:?} axis {axis}");
            let total = comm.all_reduce(
                reader.stats().bytes_read - scan,
                distlops_core::ReduceOp::Sum,
            );
            assert_eq!(total, (f.n_il * f.n_xl) as u64 * f.trace_bytes());
        }
    }
}

/// New cubes (uneven splits) written in each float format and read back: IEEE double exactly,
/// IEEE single and IBM as rounded by their conversion.
pub fn segy_round_trips_new_cubes(comm: &Communicator, dir: &Path) {
    let (n_il, n_xl, nt) = (5, 7, 13);
    for axis in [0, 1] {
        let layout = Layout::scatter(&[n_il, n_xl, nt], axis, comm.size()).unwrap();
        let mut spec = SegySpec::cube(n_il, n_xl, nt, 4000.0);
        spec.ilines = (0..n_il as i64).map(|i| 1000 + 10 * i).collect();
        spec.delay_ms = -8;
        let template = SegyTemplate::new(comm, &spec, &layout).unwrap();
        let global = ndarray::Array3::from_shape_fn((n_il, n_xl, nt), |(i, j, t)| {
            ((i * 131 + j * 17 + t * 7) as f64).sin() * 1e3 + 0.1
        });
        let data = DistributedArray::to_dist(comm, global.view().into_dyn(), &layout).unwrap();
        for format in [
            SampleFormat::IeeeFloat64,
            SampleFormat::IeeeFloat32,
            SampleFormat::IbmFloat32,
        ] {
            let path = dir.join(format!("new-{axis}-{}.sgy", format.code()));
            write_segy(&path, &data, &template, format).unwrap();
            let reader = SegyReader::open(comm, &path, &SegyOptions::default()).unwrap();
            let g = reader.geometry();
            assert_eq!(g.ilines, spec.ilines);
            assert_eq!(g.xlines, spec.xlines);
            assert_eq!((g.sample_interval_us, g.delay_ms), (Some(4000.0), -8.0));
            assert_eq!(g.format, format);
            assert_eq!(reader.header().textual.text(), spec.text.join("\n"));
            let back = reader.read::<f64>(&layout).unwrap().data;
            for (a, b) in data.local().iter().zip(back.local().iter()) {
                let expected = match format {
                    SampleFormat::IeeeFloat64 => *a,
                    SampleFormat::IeeeFloat32 => *a as f32 as f64,
                    _ => ibm_to_f64(f64_to_ibm(*a).unwrap()),
                };
                assert_eq!(*b, expected, "{format:?}");
            }
        }
    }
}

/// A file read and written back with its own headers: every header byte is the input's except
/// the format code, and the samples are the input's.
pub fn segy_copy_keeps_every_header(comm: &Communicator, dir: &Path) {
    let f = Fixture {
        sorting: Sorting::Crossline,
        format: SampleFormat::IbmFloat32,
        ext_blocks: 1,
        ..Fixture::new(5, 6, 11)
    };
    let input = dir.join("copy-in.sgy");
    write_fixture(comm, &f, &input);
    let reader = SegyReader::open(comm, &input, &SegyOptions::default()).unwrap();
    for (axis, format) in [
        (0, SampleFormat::IbmFloat32),
        (1, SampleFormat::IeeeFloat32),
    ] {
        let layout = reader.layout(axis).unwrap();
        let volume = reader.read::<f64>(&layout).unwrap();
        let output = dir.join(format!("copy-out-{axis}.sgy"));
        write_segy(&output, &volume.data, &volume.template, format).unwrap();
        if comm.rank() == 0 {
            let (a, b) = (
                std::fs::read(&input).unwrap(),
                std::fs::read(&output).unwrap(),
            );
            if format == SampleFormat::IbmFloat32 {
                assert!(a == b, "a copy in the input's format is the same file");
            } else {
                assert_eq!(a.len(), b.len());
                let mut expected = a[..3600 + 3200].to_vec();
                expected[3224..3226].copy_from_slice(&5i16.to_be_bytes());
                assert!(b[..3600 + 3200] == expected[..], "file header");
                let tb = f.trace_bytes() as usize;
                for k in 0..f.n_il * f.n_xl {
                    let o = 6800 + k * tb;
                    assert!(a[o..o + 240] == b[o..o + 240], "trace header {k}");
                }
            }
        }
        let again = SegyReader::open(comm, &output, &SegyOptions::default()).unwrap();
        let back = again.read::<f64>(&layout).unwrap().data;
        assert_eq!(back.local(), volume.data.local());
        comm.barrier();
    }
}

/// Asserts that every rank got an error and that the failing rank's (or every rank's) message
/// contains `needle`.
fn assert_failed_everywhere<T: std::fmt::Debug>(
    comm: &Communicator,
    r: Result<T, Error>,
    needle: &str,
) {
    let message = match r {
        Ok(v) => panic!("rank {}: expected an error, got {v:?}", comm.rank()),
        Err(Error::FailedOnOtherRank { message, .. }) => message,
        Err(e) => e.to_string(),
    };
    assert!(
        message.contains(needle),
        "rank {}: {message:?} does not say {needle:?}",
        comm.rank()
    );
}

/// Bad files are errors on every rank, also when only one rank reads the bad part.
pub fn segy_errors_on_every_rank(comm: &Communicator, dir: &Path) {
    let f = Fixture::new(6, 4, 10);
    let good = f.bytes();
    let path = dir.join("bad.sgy");
    let write = |bytes: &[u8]| {
        if comm.rank() == 0 {
            std::fs::write(&path, bytes).unwrap();
        }
        comm.barrier();
    };
    let open = || SegyReader::open(comm, &path, &SegyOptions::default());
    // Truncated in the last trace.
    write(&good[..good.len() - 5]);
    assert_failed_everywhere(comm, open(), "truncated");
    // Truncated in the headers.
    write(&good[..3000]);
    assert_failed_everywhere(comm, open(), "not a SEG-Y file: 3000 bytes");
    // An unsupported format code (4: fixed point with gain).
    let mut bad = good.clone();
    bad[3224..3226].copy_from_slice(&4i16.to_be_bytes());
    write(&bad);
    assert_failed_everywhere(comm, open(), "gives sample format code 4");
    // A text file renamed .sgy: said to be no SEG-Y file (not "truncated?").
    let text = "a line of text that is not seismic data\n".repeat(200);
    write(text.as_bytes());
    assert_failed_everywhere(comm, open(), "not a SEG-Y file");
    // A file that is not there.
    assert_failed_everywhere(
        comm,
        SegyReader::open(comm, dir.join("missing.sgy"), &SegyOptions::default()),
        "missing.sgy",
    );
    // The last trace's crossline breaks the geometry: only the rank that reads it sees it.
    let mut bad = good.clone();
    let last = (f.header_bytes() + f.trace_bytes() * (f.n_il * f.n_xl - 1) as u64) as usize;
    bad[last + 192..last + 196].copy_from_slice(&7i32.to_be_bytes());
    write(&bad);
    let reader = open().unwrap();
    let layout = reader.layout(0).unwrap();
    let r = reader.read::<f64>(&layout);
    if comm.rank() == comm.size() - 1 {
        assert!(matches!(r, Err(Error::Format { .. })), "{r:?}");
    }
    assert_failed_everywhere(comm, r, "trace 23 (byte");
    // A second inline whose first trace is at another crossline: found by the scan.
    let mut bad = good.clone();
    let second = (f.header_bytes() + f.trace_bytes() * f.n_xl as u64) as usize;
    bad[second + 192..second + 196].copy_from_slice(&999i32.to_be_bytes());
    write(&bad);
    assert_failed_everywhere(comm, open(), "not a regular cube");
    // A layout of another shape.
    write(&good);
    let reader = open().unwrap();
    let wrong = Layout::scatter(&[6, 4, 9], 0, comm.size()).unwrap();
    assert_failed_everywhere(comm, reader.read::<f64>(&wrong), "shape");
    let along_time = Layout::scatter(&[6, 4, 10], 2, comm.size()).unwrap();
    assert_failed_everywhere(comm, reader.read::<f64>(&along_time), "axis 2");
    // Writing values a format cannot hold, held by the last rank only.
    let layout = reader.layout(0).unwrap();
    let mut volume = reader.read::<f64>(&layout).unwrap();
    if comm.rank() == comm.size() - 1 {
        volume.data.local_slice_mut()[3] = f64::INFINITY;
    }
    let out = dir.join("bad-out.sgy");
    let r = write_segy(
        &out,
        &volume.data,
        &volume.template,
        SampleFormat::IbmFloat32,
    );
    assert_failed_everywhere(comm, r, "sample 3 of the trace at inline");
    let r = write_segy(&out, &volume.data, &volume.template, SampleFormat::Int16);
    assert_failed_everywhere(comm, r, "integer format");
    comm.barrier();
}

/// `.npy` files written and read back in every layout, checked against ndarray-npy, with each
/// rank reading only the header and its own rows.
pub fn npy_round_trips_and_reads_only_own_rows(comm: &Communicator, dir: &Path) {
    let shape = [7usize, 5, 3];
    let global =
        ndarray::Array3::from_shape_fn(shape, |(i, j, k)| (i * 100 + j * 10 + k) as f64 + 0.5);
    for (name, layout) in [
        ("axis0", Layout::scatter(&shape, 0, comm.size()).unwrap()),
        ("axis1", Layout::scatter(&shape, 1, comm.size()).unwrap()),
        (
            "broadcast",
            Layout::new(&shape, 0, Partition::Broadcast, comm.size()).unwrap(),
        ),
    ] {
        let x = DistributedArray::to_dist(comm, global.view().into_dyn(), &layout).unwrap();
        let path = dir.join(format!("{name}.npy"));
        write_npy(&path, &x).unwrap();
        if comm.rank() == 0 {
            let theirs: ndarray::ArrayD<f64> = ndarray_npy::read_npy(&path).unwrap();
            assert_eq!(theirs, global.clone().into_dyn(), "{name}");
        }
        let file = NpyFile::open(comm, &path).unwrap();
        let header = file.header().data_offset;
        assert_eq!(file.stats().bytes_read, 12 + header);
        let y = file.read::<f64>(&layout).unwrap();
        assert_eq!(y.local(), x.local(), "{name}");
        if name == "axis0" {
            let own = (layout.local_len(comm.rank()) * 8) as u64;
            assert_eq!(file.stats().bytes_read, 12 + header + own);
        }
        // f32, and f32 read as f64.
        let x32 = DistributedArray::<f32>::to_dist(
            comm,
            global.mapv(|v| v as f32).view().into_dyn(),
            &layout,
        )
        .unwrap();
        write_npy(&path, &x32).unwrap();
        let y32 = read_npy::<f32>(comm, &path).unwrap();
        let y64 = NpyFile::open(comm, &path)
            .unwrap()
            .read::<f64>(&layout)
            .unwrap();
        assert_eq!(y64.local(), x32.local().mapv(f64::from));
        assert_eq!(y32.layout().axis(), 0);
    }
    // A file written by ndarray-npy, read by us.
    let path = dir.join("theirs.npy");
    if comm.rank() == 0 {
        ndarray_npy::write_npy(&path, &global).unwrap();
    }
    comm.barrier();
    let y = read_npy::<f64>(comm, &path).unwrap();
    let layout = Layout::scatter(&shape, 0, comm.size()).unwrap();
    let expected = DistributedArray::to_dist(comm, global.view().into_dyn(), &layout).unwrap();
    assert_eq!(y.local(), expected.local());
    comm.barrier();
}

/// `.npy` files of the wrong shape or dtype, truncated or not `.npy` at all, are errors on
/// every rank.
pub fn npy_errors_on_every_rank(comm: &Communicator, dir: &Path) {
    let path = dir.join("f8.npy");
    if comm.rank() == 0 {
        ndarray_npy::write_npy(&path, &ndarray::Array2::<f64>::zeros((4, 3))).unwrap();
        ndarray_npy::write_npy(dir.join("i8.npy"), &ndarray::Array1::<i64>::zeros(4)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(dir.join("cut.npy"), &bytes[..bytes.len() - 1]).unwrap();
        std::fs::write(dir.join("text.npy"), b"not an npy file at all").unwrap();
    }
    comm.barrier();
    let file = NpyFile::open(comm, &path).unwrap();
    let wrong = Layout::scatter(&[3, 4], 0, comm.size()).unwrap();
    assert_failed_everywhere(comm, file.read::<f64>(&wrong), "shape [4, 3]");
    let right = Layout::scatter(&[4, 3], 0, comm.size()).unwrap();
    assert_failed_everywhere(comm, file.read::<f32>(&right), "read it as f64");
    assert_failed_everywhere(
        comm,
        read_npy::<f64>(comm, dir.join("i8.npy")),
        "'<i8' is not supported",
    );
    assert_failed_everywhere(
        comm,
        read_npy::<f64>(comm, dir.join("cut.npy")),
        "truncated",
    );
    assert_failed_everywhere(
        comm,
        read_npy::<f64>(comm, dir.join("text.npy")),
        "not a .npy file",
    );
    assert_failed_everywhere(
        comm,
        read_npy::<f64>(comm, dir.join("none.npy")),
        "none.npy",
    );
    comm.barrier();
}
