//! The geometry of a post-stack cube: which inline and crossline each trace is, found from a few
//! trace headers.
//!
//! A regular cube has one trace per (inline, crossline) pair, sorted by inline (the crosslines
//! of the first inline, then those of the second, ...) or by crossline. As segyio does, the
//! sorting is read from the first two traces, the length of the first line from the run of
//! traces that share its line number, and the other lines' numbers from their first traces:
//! `n_fast + n_slow - 1` trace headers in all (one for a one-trace file), where `fast` is the
//! direction that changes from trace to trace. The reader then checks every trace's numbers
//! as it reads it, so a file that only looked regular from these headers is an error, not a
//! wrong cube.

use super::endian::ByteOrder;
use super::field::HeaderField;
use super::file_header::FileHeader;
use super::sample_format::SampleFormat;
use super::trace_header::{TraceHeader, TRACE_HEADER_BYTES};
use crate::file::PositionedFile;
use distlops_core::{Error, Result};

/// How the traces of a cube are ordered in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sorting {
    /// All crosslines of the first inline, then of the second, ...: the inline number changes
    /// slowest (segyio's `INLINE_SORTING`).
    Inline,
    /// All inlines of the first crossline, then of the second, ... (segyio's
    /// `CROSSLINE_SORTING`).
    Crossline,
}

/// Where the traces of a regular post-stack cube are and what they hold.
///
/// The cube is always `(n_il, n_xl, nt)` in C order (inline, crossline, time), whatever the
/// sorting of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    /// Inline numbers, in the order of the cube's first axis (their order in the file).
    pub ilines: Vec<i64>,
    /// Crossline numbers, in the order of the cube's second axis.
    pub xlines: Vec<i64>,
    /// The order of the traces in the file.
    pub sorting: Sorting,
    /// Samples per trace.
    pub samples: usize,
    /// The sample interval in microseconds, if the headers give one.
    pub sample_interval_us: Option<f64>,
    /// The time of the first sample in milliseconds (the first trace's delay recording time).
    pub delay_ms: f64,
    /// The format of the samples.
    pub format: SampleFormat,
    /// The byte order of headers and samples.
    pub byte_order: ByteOrder,
    /// The byte offset of the first trace.
    pub data_offset: u64,
    /// The trace-header field with the inline number.
    pub iline_field: HeaderField,
    /// The trace-header field with the crossline number.
    pub xline_field: HeaderField,
}

impl Geometry {
    /// The cube's shape: `[n_il, n_xl, nt]`.
    pub fn shape(&self) -> [usize; 3] {
        [self.ilines.len(), self.xlines.len(), self.samples]
    }

    /// The number of traces.
    pub fn trace_count(&self) -> usize {
        self.ilines.len() * self.xlines.len()
    }

    /// Bytes per trace, header included.
    pub fn trace_bytes(&self) -> u64 {
        (TRACE_HEADER_BYTES + self.samples * self.format.bytes()) as u64
    }

    /// The byte offset of trace `k` (in file order, from 0).
    pub fn trace_offset(&self, k: usize) -> u64 {
        self.data_offset + k as u64 * self.trace_bytes()
    }

    /// The file index of the trace at inline index `il` and crossline index `xl`.
    pub fn trace_index(&self, il: usize, xl: usize) -> usize {
        match self.sorting {
            Sorting::Inline => il * self.xlines.len() + xl,
            Sorting::Crossline => xl * self.ilines.len() + il,
        }
    }

    /// The (inline index, crossline index) of trace `k`.
    pub fn line_indices(&self, k: usize) -> (usize, usize) {
        match self.sorting {
            Sorting::Inline => (k / self.xlines.len(), k % self.xlines.len()),
            Sorting::Crossline => (k % self.ilines.len(), k / self.ilines.len()),
        }
    }

    /// The times of the samples in milliseconds (sample indices if the interval is unknown).
    pub fn times_ms(&self) -> Vec<f64> {
        let dt = self.sample_interval_us.map_or(1.0, |us| us / 1000.0);
        (0..self.samples)
            .map(|i| self.delay_ms + dt * i as f64)
            .collect()
    }

    /// Checks a trace header read at file index `k` against the geometry: its inline and
    /// crossline numbers, and its sample count (when it gives one).
    ///
    /// # Errors
    /// A message that says what differs.
    pub fn check_trace(&self, k: usize, header: &TraceHeader) -> Result<(), String> {
        let (il, xl) = self.line_indices(k);
        let got = (
            header.get(self.iline_field, self.byte_order),
            header.get(self.xline_field, self.byte_order),
        );
        let want = (self.ilines[il], self.xlines[xl]);
        if got != want {
            return Err(format!(
                "trace {k} (byte {}) has inline/crossline {got:?} where a regular {} cube of \
                 {} x {} traces has {want:?}: the file is not a regular post-stack cube",
                self.trace_offset(k),
                match self.sorting {
                    Sorting::Inline => "inline-sorted",
                    Sorting::Crossline => "crossline-sorted",
                },
                self.ilines.len(),
                self.xlines.len(),
            ));
        }
        let ns = header.get(TraceHeader::SAMPLE_COUNT, self.byte_order) as usize;
        if ns != 0 && ns != self.samples {
            return Err(format!(
                "trace {k} has {ns} samples, the file's traces {}: traces of different \
                 lengths are not supported",
                self.samples
            ));
        }
        Ok(())
    }

    /// Finds the geometry of `file`, whose headers are `header`, from `n_fast + n_slow - 1`
    /// trace headers (one for a one-trace file), where `fast` is the direction that changes from
    /// trace to trace: as segyio does, the sorting is read from the first two traces, the length
    /// of the first line from the run of traces that share its line number, and the other
    /// lines' numbers from their first traces. The reader checks every trace as it reads it
    /// ([`check_trace`](Self::check_trace)), so a file that only looked regular from these
    /// headers is an error, not a wrong cube.
    ///
    /// # Errors
    /// [`Error::Format`] if the file has no traces, a size that is not a whole number of
    /// traces, an unsupported sample format or revision 2 layout, or traces that are not a
    /// regular inline- or crossline-sorted cube; [`Error::Io`] if a read fails.
    pub fn scan(
        file: &PositionedFile,
        header: &FileHeader,
        iline_field: HeaderField,
        xline_field: HeaderField,
    ) -> Result<Geometry> {
        let path = file.path();
        let bad = |msg: String| Error::format(path, msg);
        for (name, f) in [("inline", iline_field), ("crossline", xline_field)] {
            if !f.fits(1, TRACE_HEADER_BYTES) {
                return Err(Error::InvalidArgument(format!(
                    "the {name} field {f:?} is not within the 240-byte trace header"
                )));
            }
        }
        let bin = &header.binary;
        let code = bin.format_code();
        let format = SampleFormat::from_code(code).ok_or_else(|| {
            bad(format!(
                "sample format code {code} is not supported (supported: 1 IBM float, 2, 3 and \
                 8 signed integers, 5 and 6 IEEE floats, 10, 11 and 16 unsigned integers)"
            ))
        })?;
        let (additional, count, first, trailers) = bin.revision2_layout();
        if additional != 0 || trailers != 0 {
            return Err(bad(format!(
                "revision 2 additional trace headers ({additional}) and data trailers \
                 ({trailers}) are not supported"
            )));
        }
        let data_offset = if first > 0 {
            first as u64
        } else {
            header.byte_len()
        };
        let order = header.byte_order();
        let len = file.size()?;
        let read_header = |k: usize, trace_bytes: u64| -> Result<TraceHeader> {
            let mut b = [0u8; TRACE_HEADER_BYTES];
            file.read_exact_at(&mut b, data_offset + k as u64 * trace_bytes)?;
            Ok(TraceHeader::from_bytes(&b))
        };
        if len < data_offset + TRACE_HEADER_BYTES as u64 {
            return Err(bad(format!(
                "no traces: the file has {len} bytes, its headers end at byte {data_offset}"
            )));
        }
        let first_header = read_header(0, 0)?;
        let samples = match bin.samples() {
            0 => first_header.get(TraceHeader::SAMPLE_COUNT, order) as usize,
            n => n,
        };
        if samples == 0 {
            return Err(bad(
                "neither the binary header nor the first trace header gives the number of \
                 samples"
                    .into(),
            ));
        }
        let interval = match bin.sample_interval_us() {
            0.0 => first_header.get(TraceHeader::SAMPLE_INTERVAL, order) as f64,
            us => us,
        };
        let mut geometry = Geometry {
            ilines: Vec::new(),
            xlines: Vec::new(),
            sorting: Sorting::Inline,
            samples,
            sample_interval_us: (interval > 0.0).then_some(interval),
            delay_ms: first_header.get(TraceHeader::DELAY, order) as f64,
            format,
            byte_order: order,
            data_offset,
            iline_field,
            xline_field,
        };
        let trace_bytes = geometry.trace_bytes();
        let body = len - data_offset;
        if body % trace_bytes != 0 {
            return Err(bad(format!(
                "the traces take {body} bytes, not a whole number of {trace_bytes}-byte traces \
                 ({samples} samples of {} bytes): the file is truncated or its traces differ \
                 in length",
                format.bytes()
            )));
        }
        let n = (body / trace_bytes) as usize;
        if count > 0 && count as usize != n {
            return Err(bad(format!(
                "the binary header says {count} traces, the file holds {n}"
            )));
        }
        let key = |h: &TraceHeader| (h.get(iline_field, order), h.get(xline_field, order));
        let (il0, xl0) = key(&first_header);
        // The sorting: the line number that stays the same from trace 0 to trace 1 is the slow
        // one; `split` orders an (inline, crossline) pair as (slow, fast).
        let second = if n > 1 {
            Some(key(&read_header(1, trace_bytes)?))
        } else {
            None
        };
        geometry.sorting = match second {
            None => Sorting::Inline,
            Some((il, xl)) if il == il0 && xl != xl0 => Sorting::Inline,
            Some((il, xl)) if xl == xl0 && il != il0 => Sorting::Crossline,
            Some((il, xl)) => {
                return Err(bad(format!(
                    "the first two traces have inline/crossline ({il0}, {xl0}) and ({il}, {xl}): \
                     not an inline- or crossline-sorted post-stack cube"
                )))
            }
        };
        let split = |p: (i64, i64)| match geometry.sorting {
            Sorting::Inline => p,
            Sorting::Crossline => (p.1, p.0),
        };
        let (slow0, fast0) = split((il0, xl0));
        let mut fast = vec![fast0];
        let mut next_line = None;
        if let Some(p) = second {
            fast.push(split(p).1);
            for k in 2..n {
                let (s, f) = split(key(&read_header(k, trace_bytes)?));
                if s != slow0 {
                    next_line = Some((s, f));
                    break;
                }
                fast.push(f);
            }
        }
        let n_fast = fast.len();
        if n % n_fast != 0 {
            return Err(bad(format!(
                "{n} traces are not whole lines of {n_fast} traces (the length of the first \
                 line): not a regular cube"
            )));
        }
        let mut slow = vec![slow0];
        for line in 1..n / n_fast {
            let (s, f) = match next_line.take() {
                Some(sf) => sf,
                None => split(key(&read_header(line * n_fast, trace_bytes)?)),
            };
            if f != fast0 {
                return Err(bad(format!(
                    "trace {} starts a line at {} {f}, the first line starts at {fast0}: not a \
                     regular cube",
                    line * n_fast,
                    if geometry.sorting == Sorting::Inline {
                        "crossline"
                    } else {
                        "inline"
                    }
                )));
            }
            slow.push(s);
        }
        for (what, numbers) in [("line", &slow), ("trace", &fast)] {
            let mut sorted = numbers.clone();
            sorted.sort_unstable();
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return Err(bad(format!(
                    "the {what} number {} occurs twice where a regular cube has distinct ones",
                    w[0]
                )));
            }
        }
        let (ilines, xlines) = match geometry.sorting {
            Sorting::Inline => (slow, fast),
            Sorting::Crossline => (fast, slow),
        };
        geometry.ilines = ilines;
        geometry.xlines = xlines;
        Ok(geometry)
    }
}
