//! Distributed writing: rank 0 writes the file header, every rank writes its own traces.
//!
//! Rank 0 creates the file at its final size and writes the headers; after an agreement (which
//! is also the barrier that makes the file exist for everyone) every rank writes the traces of
//! its block (header from the template, then samples) with positioned writes, in runs of
//! contiguous traces; a last agreement makes every rank return only when the file is whole, or
//! an error on every rank.

use super::binary::BinaryHeader;
use super::geometry::Geometry;
use super::local_traces::LocalTraces;
use super::sample_format::SampleFormat;
use super::template::SegyTemplate;
use super::trace_header::TRACE_HEADER_BYTES;
use crate::file::{write_collectively, IoStats, PositionedFile};
use distlops_core::{DistributedArray, Error, RealScalar, Result};
use std::path::Path;

/// Writes `data`, a cube `(n_il, n_xl, nt)` in the layout of `template`, to a SEG-Y file at
/// `path` with the template's headers, its samples in `format` (1 IBM, 5 IEEE single or 6
/// IEEE double), and returns what this rank wrote. [Collective](distlops_core#collective-calls):
/// every rank of the array's communicator calls it.
///
/// Of the headers only the sample format code (binary header bytes 3225-3226) changes, when
/// `format` differs from the template's; everything else, textual and extended headers,
/// every binary-header field and every trace header, is written as it was read (or made). The
/// byte order is the template's.
///
/// # Errors
/// On every rank (agreed): [`Error::InvalidArgument`] for an integer `format` (floats would be
/// rounded); [`Error::LayoutMismatch`] if `data` is not in the template's layout;
/// [`Error::InvalidArgument`] naming the trace and sample of a value the format cannot hold
/// (a non-finite value in IBM, a value beyond the format's range); [`Error::Io`] if the file
/// cannot be created or written.
pub fn write_segy<T: RealScalar>(
    path: impl AsRef<Path>,
    data: &DistributedArray<T>,
    template: &SegyTemplate,
    format: SampleFormat,
) -> Result<IoStats> {
    let path = path.as_ref();
    let comm = data.comm();
    let layout = &template.layout;
    let check = if !format.is_float() {
        Err(Error::InvalidArgument(format!(
            "write_segy: {format:?} is an integer format; write a float format (IBM, IEEE single \
             or double), which hold the values without rounding them to integers"
        )))
    } else if data.layout() != layout {
        Err(Error::LayoutMismatch(format!(
            "write_segy: the data's layout ({}) is not the template's ({})",
            data.layout().describe(),
            layout.describe()
        )))
    } else {
        Ok(())
    };
    comm.agree_on(
        "write_segy",
        data.layout().fingerprint(),
        || data.layout().describe(),
        check,
    )?;
    let mut geometry = template.geometry.clone();
    geometry.format = format;
    let header = || {
        let mut header = template.header.clone();
        header
            .binary
            .set(BinaryHeader::FORMAT, i64::from(format.code()))
            .map_err(Error::InvalidArgument)?;
        Ok(header.to_bytes())
    };
    let len = geometry.trace_offset(geometry.trace_count());
    write_collectively(comm, path, len, header, |file| {
        let local = LocalTraces::of(layout, comm.rank());
        write_block(file, &geometry, template, &local, data.local_slice())
    })
}

/// Writes this rank's traces: the template's headers and `samples` (the block in C order).
fn write_block<T: RealScalar>(
    file: &PositionedFile,
    geometry: &Geometry,
    template: &SegyTemplate,
    local: &LocalTraces,
    samples: &[T],
) -> Result<()> {
    let nt = geometry.samples;
    let trace_bytes = geometry.trace_bytes() as usize;
    let mut buf = Vec::new();
    for (first, count) in local.runs(geometry) {
        buf.resize(count * trace_bytes, 0);
        for (i, trace) in buf.chunks_exact_mut(trace_bytes).enumerate() {
            let k = first + i;
            let (il, xl) = geometry.line_indices(k);
            let j = local.local_index(il, xl);
            let (head, body) = trace.split_at_mut(TRACE_HEADER_BYTES);
            head.copy_from_slice(template.trace_headers[j].bytes());
            geometry
                .format
                .encode_from(geometry.byte_order, &samples[j * nt..(j + 1) * nt], body)
                .map_err(|(s, v)| {
                    Error::InvalidArgument(format!(
                        "write_segy: sample {s} of the trace at inline {} crossline {} is {v:e}, \
                         which SEG-Y format {:?} cannot hold",
                        geometry.ilines[il], geometry.xlines[xl], geometry.format
                    ))
                })?;
        }
        file.write_all_at(&buf, geometry.trace_offset(first))?;
    }
    Ok(())
}
