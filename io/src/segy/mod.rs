//! SEG-Y: distributed reading and writing of post-stack cubes.
//!
//! Revisions 0, 1 and 2; big-endian (little-endian revision 2 files are detected); textual
//! headers in EBCDIC or ASCII; extended textual headers, a fixed or variable number, skipped
//! (and kept when a file is copied); sample formats 1 (IBM float), 2, 3, 8 (signed integers),
//! 5, 6 (IEEE floats), 10, 11, 16 (unsigned integers) read, the float formats written.
//!
//! A cube is a regular inline- or crossline-sorted post-stack file: one trace per (inline,
//! crossline) pair, the line numbers in trace-header bytes 189 and 193 or in fields given by
//! [`SegyOptions`]. It is read as a [`DistributedArray`](distlops_core::DistributedArray) of
//! shape `(n_il, n_xl, nt)` split along inlines or crosslines, every rank reading only its own
//! traces ([`SegyReader`]), and written back with the headers it was read with, or new ones
//! ([`SegyTemplate`], [`write_segy`]).
//!
//! ```
//! use distlops_core::{Communicator, DistributedArray, Layout};
//! use distlops_io::segy::{
//!     write_segy, SampleFormat, SegyOptions, SegyReader, SegySpec, SegyTemplate,
//! };
//!
//! let path = std::env::temp_dir().join(format!("distlops-io-doc-{}.sgy", std::process::id()));
//! let comm = Communicator::serial();
//! // A new 3 x 4 cube of 50 samples every 4 ms, written as IBM floats.
//! let spec = SegySpec::cube(3, 4, 50, 4000.0);
//! let layout = Layout::scatter(&[3, 4, 50], 0, comm.size())?;
//! let template = SegyTemplate::new(&comm, &spec, &layout)?;
//! let mut cube = DistributedArray::<f64>::zeros(&comm, &layout)?;
//! cube.local_slice_mut().iter_mut().enumerate().for_each(|(i, v)| *v = i as f64);
//! write_segy(&path, &cube, &template, SampleFormat::IbmFloat32)?;
//! // Read it back.
//! let reader = SegyReader::open(&comm, &path, &SegyOptions::default())?;
//! assert_eq!(reader.geometry().shape(), [3, 4, 50]);
//! assert_eq!(reader.geometry().sample_interval_us, Some(4000.0));
//! let volume = reader.read::<f64>(&reader.default_layout())?;
//! assert_eq!(volume.data.local(), cube.local());
//! std::fs::remove_file(&path).unwrap();
//! # Ok::<(), distlops_core::Error>(())
//! ```

mod binary;
mod endian;
mod field;
mod file_header;
mod geometry;
mod ibm;
mod local_traces;
mod read;
mod sample_format;
mod template;
mod textual;
mod trace_header;
mod write;

pub use binary::{BinaryHeader, BINARY_HEADER_BYTES};
pub use endian::ByteOrder;
pub use field::{FieldWidth, HeaderField};
pub use file_header::{FileHeader, FILE_HEADER_BYTES};
pub use geometry::{Geometry, Sorting};
pub use ibm::{f64_to_ibm, ibm_to_f64, NotRepresentable};
pub use read::{SegyOptions, SegyReader, SegyVolume};
pub use sample_format::SampleFormat;
pub use template::{SegySpec, SegyTemplate};
pub use textual::{
    ascii_to_ebcdic, ebcdic_to_ascii, TextEncoding, TextualHeader, TEXTUAL_HEADER_BYTES,
};
pub use trace_header::{TraceHeader, TRACE_HEADER_BYTES};
pub use write::write_segy;
