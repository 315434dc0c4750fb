//! # distlops-io
//!
//! Distributed file I/O for distlops: SEG-Y post-stack cubes ([`segy`]) and NumPy `.npy` arrays
//! ([`npy`]) read into and written from [`DistributedArray`](distlops_core::DistributedArray)s,
//! every rank reading and writing only its own part of the file with positioned I/O.
//!
//! | module | what |
//! |---|---|
//! | [`segy`] | SEG-Y rev 0/1/2: headers, IBM floats, geometry scan, distributed read and write |
//! | [`npy`] | `.npy` of `f32`/`f64`: distributed read and write along axis 0 |
//! | [`file`](mod@file) | positioned file access that counts the bytes each rank reads and writes |
//!
//! Errors are [`distlops_core::Error`]: [`Error::Io`](distlops_core::Error::Io) when the
//! operating system fails, [`Error::Format`](distlops_core::Error::Format) when a file is not
//! what it must be; every reader and writer agrees on its outcome, so a failure that one rank
//! sees (its read of a truncated or irregular part of the file) is an error on every rank.
//!
//! ## Why a SEG-Y reader of our own
//!
//! The maintained Rust SEG-Y crates are giga-segy-in and giga-segy-out (0.4). giga-segy-in maps
//! the whole file into memory and parses every trace header when a file is opened, so every rank
//! would touch every header of the file (and the page cache would hold what each rank maps);
//! there is no read of a chosen range of traces at computed offsets. giga-segy-out writes traces
//! one after the other to a new file (`create_new`, appended `write_all`), so ranks cannot each
//! write their own traces in place, and it rebuilds headers from parsed structs rather than
//! copying the input's bytes (fields it does not model are lost). Distributed reading (each
//! rank reads only its traces at offsets `3600 + 3200 n_ext + k (240 + nt bytes)`) and writing
//! (rank 0 the file header, every rank its traces) need neither a memory map nor a sequential
//! writer, and the format is small: headers kept as bytes with typed field access, IBM float
//! conversion, and the geometry scan are a few hundred lines here, with no dependency beyond
//! distlops-core and ndarray.

pub mod file;
pub mod npy;
pub mod segy;
