//! distlops-io against segyio, an independent SEG-Y implementation: cubes segyio writes are
//! read by every rank count with every sample, line number, sampling value and header field
//! compared with what segyio reads; cubes distlops-io writes (new, and copies of segyio's) are
//! read back by segyio with the same samples and headers.
//!
//! segyio runs in the Python of `DISTLOPS_SEGYIO_PYTHON` (`scripts/py-segy-env.sh` makes it;
//! `scripts/test.sh` sets the variable, so CI runs these tests). Without the variable each test
//! prints why it is skipped and passes.

mod cases;

use distlops_core::{DistributedArray, Layout, Threads};
use distlops_io::segy::{
    f64_to_ibm, ibm_to_f64, write_segy, HeaderField, SampleFormat, SegyOptions, SegyReader,
    SegySpec, SegyTemplate, Sorting,
};
use ndarray::{Array1, Array2, Array3};
use ndarray_npy::read_npy;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python with segyio, or `None` (and a line saying the test is skipped).
fn python(test: &str) -> Option<PathBuf> {
    match std::env::var_os("DISTLOPS_SEGYIO_PYTHON") {
        Some(p) => Some(p.into()),
        None => {
            println!(
                "{test}: SKIPPED: DISTLOPS_SEGYIO_PYTHON is not set (scripts/test.sh sets it; \
                 by hand: export DISTLOPS_SEGYIO_PYTHON=\"$(scripts/py-segy-env.sh)\")"
            );
            None
        }
    }
}

/// Runs one of the helper scripts of `io/tests/python`.
fn script(py: &Path, name: &str, args: &[&str]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(name);
    let out = Command::new(py)
        .arg(&path)
        .args(args)
        .output()
        .expect("cannot run the segyio Python");
    assert!(
        out.status.success(),
        "{name} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What segyio found in a file (see `segyio_dump.py`).
struct Dump {
    cube: Array3<f64>,
    ilines: Array1<i64>,
    xlines: Array1<i64>,
    samples: Array1<f64>,
    /// sorting (1 crossline, 2 inline), format, extended headers, dt in us
    meta: Array1<i64>,
    trace_fields: Array2<i64>,
    trace_headers: Array2<i64>,
    bin_fields: Array2<i64>,
    bin_header: Array1<i64>,
    text: Array1<u8>,
}

fn dump(py: &Path, file: &Path, dir: &Path) -> Dump {
    script(
        py,
        "segyio_dump.py",
        &[file.to_str().unwrap(), dir.to_str().unwrap()],
    );
    let get = |name: &str| dir.join(format!("{name}.npy"));
    Dump {
        cube: read_npy(get("cube")).unwrap(),
        ilines: read_npy(get("ilines")).unwrap(),
        xlines: read_npy(get("xlines")).unwrap(),
        samples: read_npy(get("samples")).unwrap(),
        meta: read_npy(get("meta")).unwrap(),
        trace_fields: read_npy(get("trace_fields")).unwrap(),
        trace_headers: read_npy(get("trace_headers")).unwrap(),
        bin_fields: read_npy(get("bin_fields")).unwrap(),
        bin_header: read_npy(get("bin_header")).unwrap(),
        text: read_npy(get("text")).unwrap(),
    }
}

/// A big-endian signed field of 1, 2 or 4 bytes at `byte` of `bytes`, whose first byte is
/// numbered `first` (how segyio reads the fields it dumps; 1-byte fields are unsigned).
fn field(bytes: &[u8], first: usize, byte: i64, width: i64) -> i64 {
    match width {
        1 => i64::from(bytes[byte as usize - first]),
        2 => HeaderField::i16(byte as usize).get(bytes, first, Default::default()),
        _ => HeaderField::i32(byte as usize).get(bytes, first, Default::default()),
    }
}

/// The file's textual header as segyio decoded it, line by line without trailing spaces.
fn text_lines(d: &Dump) -> String {
    d.text
        .as_slice()
        .unwrap()
        .chunks(80)
        .map(|l| String::from_utf8_lossy(l).trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A fresh folder for one test.
fn dir(name: &str) -> PathBuf {
    cases::fresh_dir(&format!("segyio-{name}"))
}

#[test]
fn reads_cubes_written_by_segyio() {
    let Some(py) = python("reads_cubes_written_by_segyio") else {
        return;
    };
    let dir = dir("read");
    for (sorting, format, ext) in [("inline", "1", "0"), ("crossline", "5", "2")] {
        let file = dir.join(format!("{sorting}.sgy"));
        let f = file.to_str().unwrap();
        #[rustfmt::skip]
        script(&py, "segyio_write.py", &[f, "--nil", "6", "--nxl", "5", "--nt", "23", "--sorting", sorting, "--format", format, "--ext-headers", ext]);
        let d = dump(&py, &file, &dir.join(format!("dump-{sorting}")));
        for np in 1..=4 {
            Threads::run(np, |comm| {
                let reader = SegyReader::open(&comm, &file, &SegyOptions::default()).unwrap();
                let g = reader.geometry();
                assert_eq!(g.ilines, d.ilines.to_vec());
                assert_eq!(g.xlines, d.xlines.to_vec());
                let want_sorting = if d.meta[0] == 2 {
                    Sorting::Inline
                } else {
                    Sorting::Crossline
                };
                assert_eq!(g.sorting, want_sorting);
                assert_eq!(i64::from(g.format.code()), d.meta[1]);
                assert_eq!(reader.header().extended.len() as i64, d.meta[2]);
                assert_eq!(g.sample_interval_us, Some(d.meta[3] as f64));
                assert_eq!(g.times_ms(), d.samples.to_vec());
                assert_eq!(reader.header().textual.text(), text_lines(&d));
                let bin = reader.header().binary.bytes();
                for (fld, want) in d.bin_fields.outer_iter().zip(&d.bin_header) {
                    assert_eq!(field(bin, 3201, fld[0], fld[1]), *want, "binary {fld}");
                }
                for axis in [0, 1] {
                    let layout = reader.layout(axis).unwrap();
                    let v = reader.read::<f64>(&layout).unwrap();
                    let whole = v.data.asarray();
                    assert_eq!(whole, d.cube.clone().into_dyn(), "{sorting} np={np}");
                    let g = reader.geometry();
                    let ks = cases::local_trace_indices(
                        g.sorting,
                        g.ilines.len(),
                        g.xlines.len(),
                        &layout,
                        comm.rank(),
                    );
                    for (h, k) in v.template.trace_headers().iter().zip(ks) {
                        for (fld, want) in d.trace_fields.outer_iter().zip(d.trace_headers.row(k)) {
                            assert_eq!(
                                field(h.bytes(), 1, fld[0], fld[1]),
                                *want,
                                "trace {k} {fld}"
                            );
                        }
                    }
                }
            });
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn segyio_reads_cubes_we_write() {
    let Some(py) = python("segyio_reads_cubes_we_write") else {
        return;
    };
    let dir = dir("write");
    let (n_il, n_xl, nt) = (5, 4, 17);
    let global = Array3::from_shape_fn((n_il, n_xl, nt), |(i, j, t)| {
        ((i * 7 + j * 3 + t) as f64 * 0.37).cos() * 250.0 + 1e-3
    });
    let mut spec = SegySpec::cube(n_il, n_xl, nt, 4000.0);
    spec.ilines = vec![11, 12, 13, 15, 19];
    spec.xlines = vec![300, 200, 100, 0];
    spec.delay_ms = 24;
    for (np, axis, format) in [
        (3, 0, SampleFormat::IbmFloat32),
        (2, 1, SampleFormat::IeeeFloat32),
    ] {
        let file = dir.join(format!("ours-{np}.sgy"));
        Threads::run(np, |comm| {
            let layout = Layout::scatter(&[n_il, n_xl, nt], axis, np).unwrap();
            let template = SegyTemplate::new(&comm, &spec, &layout).unwrap();
            let data = DistributedArray::to_dist(&comm, global.view().into_dyn(), &layout).unwrap();
            write_segy(&file, &data, &template, format).unwrap();
        });
        let d = dump(&py, &file, &dir.join(format!("dump-{np}")));
        let expected = global.mapv(|v| match format {
            SampleFormat::IbmFloat32 => ibm_to_f64(f64_to_ibm(v).unwrap()),
            _ => v as f32 as f64,
        });
        assert_eq!(d.cube, expected);
        assert_eq!(d.ilines.to_vec(), spec.ilines);
        assert_eq!(d.xlines.to_vec(), spec.xlines);
        assert_eq!(d.meta.to_vec(), vec![2, i64::from(format.code()), 0, 4000]);
        assert_eq!(d.samples[0], 24.0);
        assert_eq!(text_lines(&d), spec.text.join("\n"));
        // The trace header fields we set, in file (inline-sorted) order.
        let col = |byte: i64| {
            d.trace_fields
                .outer_iter()
                .position(|f| f[0] == byte)
                .unwrap()
        };
        for (k, h) in d.trace_headers.outer_iter().enumerate() {
            let (il, xl) = (k / n_xl, k % n_xl);
            assert_eq!(h[col(189)], spec.ilines[il]);
            assert_eq!(h[col(193)], spec.xlines[xl]);
            assert_eq!(h[col(5)], k as i64 + 1);
            assert_eq!(
                (h[col(109)], h[col(115)], h[col(117)]),
                (24, nt as i64, 4000)
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn copies_keep_segyio_headers() {
    let Some(py) = python("copies_keep_segyio_headers") else {
        return;
    };
    let dir = dir("copy");
    let input = dir.join("in.sgy");
    #[rustfmt::skip]
    script(&py, "segyio_write.py", &[input.to_str().unwrap(), "--nil", "7", "--nxl", "3", "--nt", "9", "--format", "1", "--ext-headers", "1", "--sorting", "crossline"]);
    let d_in = dump(&py, &input, &dir.join("dump-in"));
    for np in 1..=4 {
        let output = dir.join(format!("out-{np}.sgy"));
        Threads::run(np, |comm| {
            let reader = SegyReader::open(&comm, &input, &SegyOptions::default()).unwrap();
            let v = reader.read::<f64>(&reader.layout(np % 2).unwrap()).unwrap();
            write_segy(&output, &v.data, &v.template, SampleFormat::IeeeFloat32).unwrap();
        });
        let d = dump(&py, &output, &dir.join(format!("dump-{np}")));
        assert_eq!(d.cube, d_in.cube, "IBM samples are exact in IEEE single");
        assert_eq!(d.trace_headers, d_in.trace_headers);
        assert_eq!(
            (&d.ilines, &d.xlines, &d.samples),
            (&d_in.ilines, &d_in.xlines, &d_in.samples)
        );
        assert_eq!(d.text, d_in.text);
        assert_eq!(d.meta.to_vec(), vec![d_in.meta[0], 5, 1, d_in.meta[3]]);
        for ((fld, a), b) in d
            .bin_fields
            .outer_iter()
            .zip(&d.bin_header)
            .zip(&d_in.bin_header)
        {
            if fld[0] == 3225 {
                assert_eq!((*a, *b), (5, 1), "the format code, changed on purpose");
            } else {
                assert_eq!(a, b, "binary header field {}", fld[0]);
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
