//! What a SEG-Y file is made of besides its samples: the file header, the geometry and each
//! rank's trace headers. A template comes from a file that was read (its headers, copied) or
//! from a [`SegySpec`] (new headers), and [`write_segy`](super::write_segy) writes samples
//! with it.

use super::binary::BinaryHeader;
use super::endian::ByteOrder;
use super::field::HeaderField;
use super::file_header::{FileHeader, FILE_HEADER_BYTES};
use super::geometry::{Geometry, Sorting};
use super::local_traces::{check_layout, LocalTraces};
use super::sample_format::SampleFormat;
use super::textual::{TextEncoding, TextualHeader};
use super::trace_header::TraceHeader;
use distlops_core::{Communicator, Error, Layout, Result};

/// The headers of a SEG-Y file and this rank's trace headers for one layout of its cube.
#[derive(Debug, Clone)]
pub struct SegyTemplate {
    pub(crate) header: FileHeader,
    pub(crate) geometry: Geometry,
    pub(crate) layout: Layout,
    pub(crate) trace_headers: Vec<TraceHeader>,
}

impl SegyTemplate {
    /// New headers for a cube described by `spec`, for this rank's traces in `layout` (which
    /// must have the spec's shape, split along axis 0 or 1).
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (small
    /// all-reduces).
    ///
    /// The textual header (EBCDIC) is `spec.text`; the binary header says revision 1, fixed
    /// length traces, no extended headers, the sample interval and count; each trace header
    /// has its inline and crossline numbers at bytes 189 and 193, its sequence numbers in the
    /// line (1-4) and file (5-8) and the CDP number (21-24, as the file's), the trace
    /// identification code 1 (seismic data, 29-30), the delay (109-110), sample count
    /// (115-116) and interval (117-118). Traces are inline-sorted.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the spec does not fit in SEG-Y's fields (more than 65535
    /// samples, an interval that is not a whole number of microseconds up to 65535, a line
    /// number beyond 32 bits, a textual line longer than 80 characters); the errors of a
    /// layout that does not fit (see [`SegyReader::read`](super::SegyReader::read)).
    pub fn new(comm: &Communicator, spec: &SegySpec, layout: &Layout) -> Result<Self> {
        // Every check is agreed on, so a spec that differs between ranks is an error on all.
        let (header, geometry) = comm.agree_value(Self::headers(spec))?;
        check_layout(comm, &geometry, layout, "SegyTemplate::new")?;
        let local = LocalTraces::of(layout, comm.rank());
        let trace_headers = local
            .iter()
            .map(|(il, xl)| Self::trace_header(&geometry, spec, il, xl))
            .collect();
        Ok(SegyTemplate {
            header,
            geometry,
            layout: layout.clone(),
            trace_headers: comm.agree_value(trace_headers)?,
        })
    }

    /// The file header and geometry of a spec.
    fn headers(spec: &SegySpec) -> Result<(FileHeader, Geometry)> {
        let us = spec.sample_interval_us;
        if !(us > 0.0 && us <= 65535.0 && us.fract() == 0.0) {
            return Err(invalid(format!(
                "the sample interval {us} us is not a whole number of microseconds from 1 to \
                 65535"
            )));
        }
        for (what, lines) in [("inline", &spec.ilines), ("crossline", &spec.xlines)] {
            let mut sorted = lines.clone();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(invalid(format!("the {what} numbers are not distinct")));
            }
        }
        let order = ByteOrder::Big;
        let mut binary = BinaryHeader::zeroed(order);
        let fields = [
            (BinaryHeader::SAMPLE_INTERVAL, us as i64),
            (BinaryHeader::SAMPLE_INTERVAL_ORIGINAL, us as i64),
            (BinaryHeader::SAMPLES, spec.samples as i64),
            (BinaryHeader::SAMPLES_ORIGINAL, spec.samples as i64),
            (
                BinaryHeader::FORMAT,
                i64::from(SampleFormat::IeeeFloat32.code()),
            ),
            (BinaryHeader::SORTING_CODE, 4),
            (BinaryHeader::REVISION, 0x0100),
            (BinaryHeader::FIXED_LENGTH, 1),
        ];
        for (field, value) in fields {
            binary.set(field, value).map_err(invalid)?;
        }
        let textual =
            TextualHeader::from_lines(&spec.text, TextEncoding::Ebcdic).map_err(invalid)?;
        let geometry = Geometry {
            ilines: spec.ilines.clone(),
            xlines: spec.xlines.clone(),
            sorting: Sorting::Inline,
            samples: spec.samples,
            sample_interval_us: Some(us),
            delay_ms: f64::from(spec.delay_ms),
            format: SampleFormat::IeeeFloat32,
            byte_order: order,
            data_offset: FILE_HEADER_BYTES as u64,
            iline_field: TraceHeader::INLINE,
            xline_field: TraceHeader::CROSSLINE,
        };
        let header = FileHeader {
            textual,
            binary,
            extended: Vec::new(),
        };
        Ok((header, geometry))
    }

    /// The new header of the trace at inline index `il` and crossline index `xl`.
    fn trace_header(
        geometry: &Geometry,
        spec: &SegySpec,
        il: usize,
        xl: usize,
    ) -> Result<TraceHeader> {
        let k = geometry.trace_index(il, xl) as i64;
        let us = spec.sample_interval_us as i64;
        let fields: [(HeaderField, i64); 9] = [
            (TraceHeader::SEQUENCE_LINE, xl as i64 + 1),
            (TraceHeader::SEQUENCE_FILE, k + 1),
            (TraceHeader::CDP, k + 1),
            (TraceHeader::TRACE_ID, 1),
            (TraceHeader::DELAY, i64::from(spec.delay_ms)),
            (TraceHeader::SAMPLE_COUNT, spec.samples as i64),
            (TraceHeader::SAMPLE_INTERVAL, us),
            (TraceHeader::INLINE, geometry.ilines[il]),
            (TraceHeader::CROSSLINE, geometry.xlines[xl]),
        ];
        let mut h = TraceHeader::zeroed();
        for (field, value) in fields {
            h.set(field, value, geometry.byte_order).map_err(invalid)?;
        }
        Ok(h)
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The layout the trace headers are for.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// This rank's trace headers, in the C order of its block (inline, then crossline).
    pub fn trace_headers(&self) -> &[TraceHeader] {
        &self.trace_headers
    }
}

/// An [`Error::InvalidArgument`] about a [`SegySpec`].
fn invalid(message: String) -> Error {
    Error::InvalidArgument(format!("SegySpec: {message}"))
}

/// A new post-stack cube's description, for [`SegyTemplate::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct SegySpec {
    /// Inline numbers (the cube's first axis).
    pub ilines: Vec<i64>,
    /// Crossline numbers (the second axis).
    pub xlines: Vec<i64>,
    /// Samples per trace (the third axis).
    pub samples: usize,
    /// Sample interval in microseconds (a whole number up to 65535).
    pub sample_interval_us: f64,
    /// Time of the first sample in milliseconds.
    pub delay_ms: i16,
    /// The textual header's lines (up to 40 of up to 80 printable ASCII characters).
    pub text: Vec<String>,
}

impl SegySpec {
    /// A cube of `n_il x n_xl` traces of `samples` samples every `sample_interval_us`
    /// microseconds, inlines and crosslines numbered from 1, with a textual header that says
    /// distlops-io wrote it and where the line numbers are.
    pub fn cube(n_il: usize, n_xl: usize, samples: usize, sample_interval_us: f64) -> Self {
        let text = [
            "C 1 SEG-Y WRITTEN BY DISTLOPS-IO".to_string(),
            format!("C 2 POST-STACK CUBE: {n_il} INLINES X {n_xl} CROSSLINES X {samples} SAMPLES"),
            format!("C 3 SAMPLE INTERVAL {sample_interval_us} US"),
            "C 4 INLINE BYTES 189-192, CROSSLINE BYTES 193-196".to_string(),
        ];
        let mut lines: Vec<String> = text.into_iter().collect();
        lines.extend((5..39).map(|i| format!("C{i:2}")));
        lines.push("C39 SEG-Y REV1".into());
        lines.push("C40 END TEXTUAL HEADER".into());
        SegySpec {
            ilines: (1..=n_il as i64).collect(),
            xlines: (1..=n_xl as i64).collect(),
            samples,
            sample_interval_us,
            delay_ms: 0,
            text: lines,
        }
    }
}
