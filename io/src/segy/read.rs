//! Distributed reading: every rank reads only its own traces.
//!
//! [`SegyReader::open`] reads the file header and scans the geometry on rank 0 (the textual,
//! binary and extended headers, and `n_fast + n_slow - 1` trace headers, see
//! [`Geometry::scan`]) and broadcasts them; [`SegyReader::read`] then has every rank read the
//! traces of its block, at byte offsets `data_offset + k * (240 + nt * bytes)`, in runs of
//! contiguous traces (one positioned read per run, at most 16 MiB each), checking each trace's
//! inline, crossline and sample count. No rank reads another's traces, and no rank holds more
//! than its block.

use super::endian::ByteOrder;
use super::field::HeaderField;
use super::file_header::FileHeader;
use super::geometry::{Geometry, Sorting};
use super::local_traces::{check_layout, LocalTraces};
use super::sample_format::SampleFormat;
use super::template::SegyTemplate;
use super::trace_header::{TraceHeader, TRACE_HEADER_BYTES};
use crate::file::{IoStats, PositionedFile};
use distlops_core::{
    Communicator, DistributedArray, Error, Fingerprint, Layout, RealScalar, Result,
};
use ndarray::ArrayD;
use std::path::Path;

/// How to read a SEG-Y file: where the line numbers are and, if the file does not say it right,
/// its byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegyOptions {
    /// The trace-header field with the inline number (segyio's `iline`; default bytes
    /// 189-192).
    pub iline: HeaderField,
    /// The trace-header field with the crossline number (segyio's `xline`; default bytes
    /// 193-196).
    pub xline: HeaderField,
    /// The byte order; `None` detects it from the binary header (see
    /// [`BinaryHeader::detect_byte_order`](super::BinaryHeader::detect_byte_order)).
    pub byte_order: Option<ByteOrder>,
}

impl Default for SegyOptions {
    fn default() -> Self {
        SegyOptions {
            iline: TraceHeader::INLINE,
            xline: TraceHeader::CROSSLINE,
            byte_order: None,
        }
    }
}

/// A SEG-Y file opened on every rank of a communicator, with its headers and geometry.
#[derive(Debug)]
pub struct SegyReader {
    comm: Communicator,
    file: PositionedFile,
    header: FileHeader,
    geometry: Geometry,
}

/// A cube read from a SEG-Y file: this rank's block of samples, and a template with the file's
/// headers and this block's trace headers, to write a cube of the same shape and layout with
/// the same headers.
#[derive(Debug, Clone)]
pub struct SegyVolume<T: RealScalar> {
    /// The samples, `(n_il, n_xl, nt)`.
    pub data: DistributedArray<T>,
    /// The headers.
    pub template: SegyTemplate,
}

impl SegyReader {
    /// Opens `path` on every rank; rank 0 reads the headers and scans the geometry, which are
    /// broadcast. [Collective](distlops_core#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// On every rank (agreed): [`Error::Io`] if a rank cannot open the file or a read fails;
    /// [`Error::Format`] if the file is not a regular post-stack cube distlops-io reads (see
    /// [`Geometry::scan`]); [`Error::InvalidArgument`] for line-number fields outside the trace
    /// header.
    pub fn open(
        comm: &Communicator,
        path: impl AsRef<Path>,
        options: &SegyOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        // Every rank opens the file, and uses rank 0's options (checked equal).
        let file = PositionedFile::open(path);
        let opened = file.as_ref().map(|_| ()).map_err(Clone::clone);
        let fingerprint = [options.iline, options.xline]
            .iter()
            .fold(Fingerprint::default(), |h, f| {
                h.word(f.byte as u64).word(f.width as u64)
            })
            .word(options.byte_order.map_or(0, |o| 1 + o as u64));
        comm.agree_on(
            "SegyReader::open",
            fingerprint,
            || format!("{options:?}"),
            opened,
        )?;
        let file = file?;
        let scanned = if comm.rank() == 0 {
            FileHeader::read(&file, options.byte_order).and_then(|header| {
                let geometry = Geometry::scan(&file, &header, options.iline, options.xline)?;
                Ok(Some((header, geometry)))
            })
        } else {
            Ok(None)
        };
        let scanned = comm.agree_value(scanned)?;
        let (header, geometry) = broadcast_scan(comm, scanned, options);
        Ok(SegyReader {
            comm: comm.clone(),
            file,
            header,
            geometry,
        })
    }

    /// The file's headers.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The cube's geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The layout of the cube split along `axis`: 0 (inlines) or 1 (crosslines), balanced.
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`] for another axis.
    pub fn layout(&self, axis: usize) -> Result<Layout> {
        if axis > 1 {
            return Err(Error::AxisOutOfRange {
                call: "SegyReader::layout".into(),
                axis: axis as isize,
                ndim: 2,
            });
        }
        Layout::scatter(&self.geometry.shape(), axis, self.comm.size())
    }

    /// The layout to read into when nothing else is wanted: split along inlines, or along
    /// crosslines for a 2-D section (a single inline).
    pub fn default_layout(&self) -> Layout {
        let axis = usize::from(self.geometry.ilines.len() == 1);
        self.layout(axis).expect("axis 0 or 1")
    }

    /// Reads this rank's traces of the cube into `layout` (the cube's shape, Scatter along axis
    /// 0 or 1). [Collective](distlops_core#collective-calls): every rank of the reader's
    /// communicator calls it.
    ///
    /// # Errors
    /// On every rank (agreed): [`Error::ShapeMismatch`], [`Error::UnsupportedPartition`],
    /// [`Error::LayoutMismatch`] for a layout that does not fit; [`Error::Format`] if a trace's
    /// inline, crossline or sample count breaks the regular geometry, or a sample does not fit
    /// in `T`; [`Error::Io`] if a read fails (a file truncated since it was opened).
    pub fn read<T: RealScalar>(&self, layout: &Layout) -> Result<SegyVolume<T>> {
        check_layout(&self.comm, &self.geometry, layout, "SegyReader::read")?;
        let local = LocalTraces::of(layout, self.comm.rank());
        let blocks = self.comm.agree_value(self.read_block::<T>(&local))?;
        let (samples, trace_headers) = blocks;
        let data = DistributedArray::from_local_with_layout(
            &self.comm,
            layout,
            ArrayD::from_shape_vec(layout.local_shape(self.comm.rank()), samples)
                .expect("a block of the local shape"),
        )?;
        Ok(SegyVolume {
            data,
            template: SegyTemplate {
                header: self.header.clone(),
                geometry: self.geometry.clone(),
                layout: layout.clone(),
                trace_headers,
            },
        })
    }

    /// This rank's samples and trace headers, in the block's C order.
    fn read_block<T: RealScalar>(&self, local: &LocalTraces) -> Result<(Vec<T>, Vec<TraceHeader>)> {
        let g = &self.geometry;
        let nt = g.samples;
        let trace_bytes = g.trace_bytes() as usize;
        let mut samples = vec![T::zero(); local.len() * nt];
        let mut headers = vec![TraceHeader::zeroed(); local.len()];
        let mut buf = Vec::new();
        let bad = |m: String| Error::format(self.file.path(), m);
        for (first, count) in local.runs(g) {
            buf.resize(count * trace_bytes, 0);
            self.file.read_exact_at(&mut buf, g.trace_offset(first))?;
            for (i, trace) in buf.chunks_exact(trace_bytes).enumerate() {
                let k = first + i;
                let header = TraceHeader::from_bytes(trace);
                g.check_trace(k, &header).map_err(bad)?;
                let (il, xl) = g.line_indices(k);
                let j = local.local_index(il, xl);
                g.format
                    .decode_into(
                        g.byte_order,
                        &trace[TRACE_HEADER_BYTES..],
                        &mut samples[j * nt..(j + 1) * nt],
                    )
                    .map_err(|s| {
                        bad(format!(
                            "sample {s} of trace {k} does not fit in {}: read the file as f64",
                            std::any::type_name::<T>()
                        ))
                    })?;
                headers[j] = header;
            }
        }
        Ok((samples, headers))
    }

    /// What this rank has read from the file so far.
    pub fn stats(&self) -> IoStats {
        self.file.stats()
    }
}

/// Rank 0's headers and geometry on every rank: the header bytes, then the geometry as words
/// (its line numbers and the numbers that are not in the header). `scanned` is `Some` on rank 0.
fn broadcast_scan(
    comm: &Communicator,
    scanned: Option<(FileHeader, Geometry)>,
    options: &SegyOptions,
) -> (FileHeader, Geometry) {
    let (mut bytes, mut words) = match &scanned {
        Some((h, g)) => (
            h.to_bytes(),
            [
                vec![
                    i64::from(h.byte_order() == ByteOrder::Little),
                    i64::from(g.sorting == Sorting::Crossline),
                    g.samples as i64,
                    g.sample_interval_us.unwrap_or(0.0).to_bits() as i64,
                    g.delay_ms.to_bits() as i64,
                    i64::from(g.format.code()),
                    g.data_offset as i64,
                    g.ilines.len() as i64,
                ],
                g.ilines.clone(),
                g.xlines.clone(),
            ]
            .concat(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    if comm.size() > 1 {
        let mut lens = [bytes.len() as u64, words.len() as u64];
        comm.broadcast_into(&mut lens, 0);
        bytes.resize(lens[0] as usize, 0);
        words.resize(lens[1] as usize, 0);
        comm.broadcast_into(&mut bytes, 0);
        comm.broadcast_into(&mut words, 0);
    }
    if let Some(s) = scanned {
        return s;
    }
    let order = if words[0] == 1 {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
    let header = FileHeader::from_bytes(&bytes, Some(order));
    let n_il = words[7] as usize;
    let interval = f64::from_bits(words[3] as u64);
    let geometry = Geometry {
        ilines: words[8..8 + n_il].to_vec(),
        xlines: words[8 + n_il..].to_vec(),
        sorting: if words[1] == 1 {
            Sorting::Crossline
        } else {
            Sorting::Inline
        },
        samples: words[2] as usize,
        sample_interval_us: (interval > 0.0).then_some(interval),
        delay_ms: f64::from_bits(words[4] as u64),
        format: SampleFormat::from_code(words[5] as i16).expect("rank 0 checked the format"),
        byte_order: order,
        data_offset: words[6] as u64,
        iline_field: options.iline,
        xline_field: options.xline,
    };
    (header, geometry)
}
