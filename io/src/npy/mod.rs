//! `.npy`: distributed reading and writing of [`DistributedArray`]s of `f32` and `f64`.
//!
//! For an array split along axis 0 (Scatter), each rank's block is one contiguous byte range of
//! the file: every rank reads (or writes) only that range, with one positioned read (write).
//! Every rank reads the small header itself; rank 0 alone writes it. Other layouts go through
//! axis 0: reading into a layout split along another axis reads the balanced split along axis 0
//! and redistributes (one all-to-all), writing an array split along another axis redistributes
//! it to axis 0 first; a Broadcast array is read whole by every rank and written by rank 0.
//!
//! Files are NumPy's format 1.0 (2.0 for headers above 64 KiB), C order, little-endian
//! (`<f4`, `<f8`); big-endian files are read too. A `float32` file can be read as `f64`
//! (exactly); a `float64` file is not read as `f32`, which would round it.
//!
//! ```
//! use distlops_core::{Communicator, DistributedArray, Layout, Threads};
//! use distlops_io::npy::{read_npy, write_npy};
//!
//! let path = std::env::temp_dir().join(format!("distlops-io-npy-doc-{}.npy", std::process::id()));
//! Threads::run(3, |comm| {
//!     let layout = Layout::scatter(&[10, 4], 0, comm.size()).unwrap();
//!     let mut x = DistributedArray::<f64>::zeros(&comm, &layout).unwrap();
//!     x.local_mut().fill(comm.rank() as f64);
//!     write_npy(&path, &x).unwrap();          // each rank writes its own rows
//!     let y = read_npy::<f64>(&comm, &path).unwrap(); // each rank reads its own rows
//!     assert_eq!(y.local(), x.local());
//! });
//! std::fs::remove_file(&path).unwrap();
//! ```

mod header;

pub use header::{NpyDtype, NpyHeader};

use crate::file::{write_collectively, IoStats, PositionedFile};
use distlops_core::{Communicator, DistributedArray, Error, Layout, Partition, RealScalar, Result};
use ndarray::ArrayD;
use std::path::Path;

/// The element types `.npy` files are read into and written from: `f32` and `f64`.
pub trait NpyScalar: RealScalar {
    /// Bytes per element.
    const BYTES: usize;
}

impl NpyScalar for f32 {
    const BYTES: usize = 4;
}

impl NpyScalar for f64 {
    const BYTES: usize = 8;
}

/// A `.npy` file opened on every rank of a communicator, with its header.
#[derive(Debug)]
pub struct NpyFile {
    comm: Communicator,
    file: PositionedFile,
    header: NpyHeader,
}

impl NpyFile {
    /// Opens `path` on every rank; every rank reads the header.
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// On every rank (agreed): [`Error::Io`] if a rank cannot open or read the file;
    /// [`Error::Format`] if it is not a `.npy` file of 4- or 8-byte floats in C order, or its
    /// size is not what its header says.
    pub fn open(comm: &Communicator, path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let opened = PositionedFile::open(path).and_then(|file| {
            let header = read_header(&file)?;
            Ok(NpyFile {
                comm: comm.clone(),
                file,
                header,
            })
        });
        comm.agree_value(opened)
    }

    /// The header.
    pub fn header(&self) -> &NpyHeader {
        &self.header
    }

    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        &self.header.shape
    }

    /// The layout [`read_npy`] reads into: the balanced split along axis 0 (Broadcast for a
    /// 0-d array).
    ///
    /// # Errors
    /// As [`Layout::scatter`].
    pub fn default_layout(&self) -> Result<Layout> {
        if self.header.shape.is_empty() {
            Layout::broadcast(&[], self.comm.size())
        } else {
            Layout::scatter(&self.header.shape, 0, self.comm.size())
        }
    }

    /// Reads the array into `layout`, which must have the file's shape.
    /// [Collective](distlops_core#collective-calls): every rank of the file's communicator calls
    /// it.
    ///
    /// # Errors
    /// On every rank (agreed): [`Error::ShapeMismatch`] if the file's shape is not the
    /// layout's; [`Error::Format`] if the file holds `float64` and `T` is `f32`;
    /// [`Error::Io`] if a read fails; the errors of
    /// [`redistribute_to`](DistributedArray::redistribute_to) for layouts split along another
    /// axis than 0.
    pub fn read<T: NpyScalar>(&self, layout: &Layout) -> Result<DistributedArray<T>> {
        let h = &self.header;
        let check = if layout.global_shape() != h.shape.as_slice() {
            Err(Error::ShapeMismatch(format!(
                "{}: the file holds an array of shape {:?}, the layout is for {:?}",
                self.file.path().display(),
                h.shape,
                layout.global_shape()
            )))
        } else if h.dtype.bytes > T::BYTES {
            Err(Error::format(
                self.file.path(),
                format!(
                    "holds {} (float64), which {} would round: read it as f64",
                    h.dtype.descr(),
                    std::any::type_name::<T>()
                ),
            ))
        } else {
            Ok(())
        };
        self.comm.agree_on(
            "NpyFile::read",
            layout.fingerprint(),
            || layout.describe(),
            check,
        )?;
        if layout.partition() == Partition::Scatter && layout.axis() != 0 {
            let along_0 = Layout::scatter(&h.shape, 0, self.comm.size())?;
            return self.read(&along_0)?.redistribute_to(layout);
        }
        let rank = self.comm.rank();
        let local_shape = layout.local_shape(rank);
        let read = self.read_rows(layout, rank).and_then(|values| {
            ArrayD::from_shape_vec(local_shape, values)
                .map_err(|e| Error::format(self.file.path(), e.to_string()))
        });
        let local = self.comm.agree_value(read)?;
        DistributedArray::from_local_with_layout(&self.comm, layout, local)
    }

    /// This rank's rows (all of them for a replicated layout), converted to `T`.
    fn read_rows<T: NpyScalar>(&self, layout: &Layout, rank: usize) -> Result<Vec<T>> {
        let h = &self.header;
        let row: usize = h.shape.iter().skip(1).product();
        let (first, rows) = match layout.partition() {
            Partition::Scatter => (layout.offset(rank), layout.count(rank)),
            _ => (0, h.shape.first().copied().unwrap_or(1)),
        };
        let n = rows * row;
        let size = h.dtype.bytes;
        let mut bytes = vec![0u8; n * size];
        self.file
            .read_exact_at(&mut bytes, h.data_offset + (first * row * size) as u64)?;
        let big = h.dtype.big_endian;
        Ok(bytes
            .chunks_exact(size)
            .map(|b| {
                let v = if size == 4 {
                    let a = b.try_into().expect("4 bytes");
                    f64::from(if big {
                        f32::from_be_bytes(a)
                    } else {
                        f32::from_le_bytes(a)
                    })
                } else {
                    let a = b.try_into().expect("8 bytes");
                    if big {
                        f64::from_be_bytes(a)
                    } else {
                        f64::from_le_bytes(a)
                    }
                };
                T::real_from_f64(v)
            })
            .collect())
    }

    /// What this rank has read from the file so far.
    pub fn stats(&self) -> IoStats {
        self.file.stats()
    }
}

/// Reads and checks the header of `file`: at most a preamble and the header's length.
fn read_header(file: &PositionedFile) -> Result<NpyHeader> {
    let bad = |m: String| Error::format(file.path(), m);
    let size = file.size()?;
    let mut preamble = [0u8; NpyHeader::PREAMBLE];
    if size < preamble.len() as u64 {
        return Err(bad(format!("{size} bytes: not a .npy file")));
    }
    file.read_exact_at(&mut preamble, 0)?;
    let len = NpyHeader::length(&preamble).map_err(bad)?;
    let mut bytes = vec![0u8; len as usize];
    file.read_exact_at(&mut bytes, 0)?;
    let header = NpyHeader::parse(&bytes).map_err(bad)?;
    if header.fortran_order {
        return Err(bad(
            "Fortran-ordered arrays are not supported: save a C-ordered array \
             (numpy.ascontiguousarray)"
                .into(),
        ));
    }
    let expected = header.data_offset + (header.len() * header.dtype.bytes) as u64;
    if size != expected {
        return Err(bad(format!(
            "{size} bytes, but a {} array of shape {:?} takes {expected}: truncated or not a \
             .npy file",
            header.dtype.descr(),
            header.shape
        )));
    }
    Ok(header)
}

/// Reads the array at `path` split along axis 0 with the balanced split (each rank reads only
/// its rows; a 0-d array is read by every rank). [Collective](distlops_core#collective-calls):
/// every rank of `comm` calls it.
///
/// # Errors
/// As [`NpyFile::open`] and [`NpyFile::read`].
pub fn read_npy<T: NpyScalar>(
    comm: &Communicator,
    path: impl AsRef<Path>,
) -> Result<DistributedArray<T>> {
    let file = NpyFile::open(comm, path)?;
    file.read(&file.default_layout()?)
}

/// Writes `array` to `path` as a C-ordered little-endian `.npy` file of `T` and returns what
/// this rank wrote. Rank 0 writes the header; each rank writes its own rows (see the
/// [module docs](self) for layouts split along another axis, which are redistributed first,
/// and Broadcast arrays). [Collective](distlops_core#collective-calls): every rank of the array's
/// communicator calls it.
///
/// # Errors
/// On every rank (agreed): [`Error::Io`] if the file cannot be created or written; the errors
/// of [`redistribute`](DistributedArray::redistribute).
pub fn write_npy<T: NpyScalar>(
    path: impl AsRef<Path>,
    array: &DistributedArray<T>,
) -> Result<IoStats> {
    let layout = array.layout();
    if layout.partition() == Partition::Scatter && layout.axis() != 0 {
        return write_npy(path, &array.redistribute(0)?);
    }
    let comm = array.comm();
    let rank = comm.rank();
    let shape = layout.global_shape();
    let row: usize = shape.iter().skip(1).product();
    let dtype = NpyDtype {
        bytes: T::BYTES,
        big_endian: false,
    };
    let header = NpyHeader::to_bytes(dtype, shape);
    let data_offset = header.len() as u64;
    let len = data_offset + (layout.global_len() * T::BYTES) as u64;
    let (first, mine) = match layout.partition() {
        Partition::Scatter => (layout.offset(rank), true),
        _ => (0, rank == 0),
    };
    write_collectively(
        comm,
        path.as_ref(),
        len,
        || Ok(header),
        |file| {
            if !mine {
                return Ok(());
            }
            let mut bytes = Vec::with_capacity(array.local_slice().len() * T::BYTES);
            for v in array.local_slice() {
                let v = RealScalar::to_f64(*v);
                if T::BYTES == 4 {
                    bytes.extend_from_slice(&(v as f32).to_le_bytes());
                } else {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
            }
            file.write_all_at(&bytes, data_offset + (first * row * T::BYTES) as u64)
        },
    )
}
