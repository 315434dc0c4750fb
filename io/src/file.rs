//! Positioned file access that counts what it moves.
//!
//! Every read and write of distlops-io goes through [`PositionedFile`]: `read_at`/`write_at` at an
//! explicit byte offset (`std::os::unix::fs::FileExt`), so ranks that share a file never share a
//! cursor, and every byte is counted in [`IoStats`], which is how the tests check that a rank
//! reads only its own part of a file.

use distlops_core::{Communicator, Error, Result};
use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What one rank read and wrote through a [`PositionedFile`] (or a reader built on one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Bytes read.
    pub bytes_read: u64,
    /// Positioned read calls (each may be served by several system calls).
    pub reads: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Positioned write calls.
    pub writes: u64,
}

/// An open file read and written at explicit offsets, with byte counters and errors that name
/// the file.
#[derive(Debug)]
pub struct PositionedFile {
    file: File,
    path: PathBuf,
    stats: Cell<IoStats>,
}

impl PositionedFile {
    /// Opens an existing file for reading.
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be opened.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, &e))?;
        Ok(Self::wrap(file, path))
    }

    /// Creates (or truncates) a file of `len` bytes for writing; the bytes not written later read
    /// as zeros.
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be created or sized.
    pub fn create(path: &Path, len: u64) -> Result<Self> {
        let file = File::create(path).map_err(|e| Error::io(path, &e))?;
        file.set_len(len).map_err(|e| Error::io(path, &e))?;
        Ok(Self::wrap(file, path))
    }

    /// Opens an existing file for writing in place (not truncated).
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be opened.
    pub fn open_for_writing(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, &e))?;
        Ok(Self::wrap(file, path))
    }

    fn wrap(file: File, path: &Path) -> Self {
        PositionedFile {
            file,
            path: path.to_path_buf(),
            stats: Cell::new(IoStats::default()),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length in bytes.
    ///
    /// # Errors
    /// [`Error::Io`] if its metadata cannot be read.
    pub fn size(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| Error::io(&self.path, &e))
    }

    /// Fills `buf` from the bytes at `offset`.
    ///
    /// # Errors
    /// [`Error::Io`] if the file ends before `offset + buf.len()` (it says where) or the read
    /// fails.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                let len = self.size().map_or("?".to_string(), |l| l.to_string());
                Error::Io {
                    path: self.path.display().to_string(),
                    message: format!(
                        "the file ends before byte {} ({len} bytes): truncated?",
                        offset + buf.len() as u64
                    ),
                }
            } else {
                Error::io(&self.path, &e)
            }
        })?;
        let mut s = self.stats.get();
        s.bytes_read += buf.len() as u64;
        s.reads += 1;
        self.stats.set(s);
        Ok(())
    }

    /// Writes all of `buf` at `offset`.
    ///
    /// # Errors
    /// [`Error::Io`] if the write fails (the disk is full, ...).
    pub fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        self.file
            .write_all_at(buf, offset)
            .map_err(|e| Error::io(&self.path, &e))?;
        let mut s = self.stats.get();
        s.bytes_written += buf.len() as u64;
        s.writes += 1;
        self.stats.set(s);
        Ok(())
    }

    /// What went through this file so far.
    pub fn stats(&self) -> IoStats {
        self.stats.get()
    }
}

/// The collective write both file formats use: rank 0 creates the file at `path` with `len`
/// bytes and writes `header()` at its start; after an agreement (the barrier that makes the file
/// exist for every rank) every rank opens it and calls `body`, which writes this rank's part;
/// a last agreement returns when every rank is done, with this rank's counts, or an error on
/// every rank.
pub(crate) fn write_collectively(
    comm: &Communicator,
    path: &Path,
    len: u64,
    header: impl FnOnce() -> Result<Vec<u8>>,
    body: impl FnOnce(&PositionedFile) -> Result<()>,
) -> Result<IoStats> {
    let created = if comm.rank() == 0 {
        header().and_then(|bytes| {
            let file = PositionedFile::create(path, len)?;
            file.write_all_at(&bytes, 0)?;
            Ok(Some(file))
        })
    } else {
        Ok(None)
    };
    let written = comm
        .agree_value(created)?
        .map_or_else(|| PositionedFile::open_for_writing(path), Ok)
        .and_then(|file| {
            body(&file)?;
            Ok(file.stats())
        });
    comm.agree_value(written)
}
