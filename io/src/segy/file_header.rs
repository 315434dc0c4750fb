//! The file header: the textual header, the binary header and the extended textual headers
//! (file bytes 1 to 3600 + 3200 n).

use super::binary::{BinaryHeader, BINARY_HEADER_BYTES};
use super::endian::ByteOrder;
use super::sample_format::SampleFormat;
use super::textual::{TextualHeader, TEXTUAL_HEADER_BYTES};
use crate::file::PositionedFile;
use distlops_core::{Error, Result};

/// Bytes before the extended textual headers: the textual and the binary header.
pub const FILE_HEADER_BYTES: usize = TEXTUAL_HEADER_BYTES + BINARY_HEADER_BYTES;

/// What ends a variable number of extended textual headers (in ASCII or EBCDIC).
const END_TEXT: &str = "((SEG: EndText))";

/// The headers before the first trace, kept as the file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    /// The textual header.
    pub textual: TextualHeader,
    /// The binary header.
    pub binary: BinaryHeader,
    /// The extended textual headers (revision 1 and later).
    pub extended: Vec<TextualHeader>,
}

impl FileHeader {
    /// Reads the headers of `file`: 3600 bytes, then the extended textual headers (a variable
    /// number is read up to the one that ends them). `order` overrides the byte order detected
    /// from the binary header.
    ///
    /// # Errors
    /// [`Error::Format`] naming the file "not a SEG-Y file" if it is shorter than the 3600 bytes
    /// of the textual and binary headers or its binary header gives no sample format code of
    /// SEG-Y (a text or other file renamed `.sgy`); [`Error::Io`] if the file is shorter than its
    /// extended headers; [`Error::Format`] if a variable number of extended headers has no end,
    /// or the number is negative (other than -1).
    pub fn read(file: &PositionedFile, order: Option<ByteOrder>) -> Result<Self> {
        let len = file.size()?;
        if len < FILE_HEADER_BYTES as u64 {
            return Err(Error::format(
                file.path(),
                format!(
                    "not a SEG-Y file: {len} bytes, fewer than the {FILE_HEADER_BYTES} bytes of a \
                     SEG-Y file's textual and binary headers"
                ),
            ));
        }
        let mut bytes = vec![0u8; FILE_HEADER_BYTES];
        file.read_exact_at(&mut bytes, 0)?;
        let mut header = Self::from_bytes(&bytes, order);
        let code = header.binary.format_code();
        if SampleFormat::from_code(code).is_none() {
            return Err(Error::format(
                file.path(),
                format!(
                    "not a SEG-Y file, or one of a sample format distlops-io does not read: its \
                     binary header (bytes 3201-3600) gives sample format code {code} (SEG-Y's \
                     are 1, 2, 3, 5, 6, 8, 10, 11, 16)"
                ),
            ));
        }
        let count = header.binary.extended_headers();
        if count < -1 {
            return Err(Error::format(
                file.path(),
                format!("the binary header gives {count} extended textual headers"),
            ));
        }
        let mut offset = FILE_HEADER_BYTES as u64;
        loop {
            let done = match count {
                -1 => header
                    .extended
                    .last()
                    .is_some_and(|h| h.text().contains(END_TEXT)),
                n => header.extended.len() >= n as usize,
            };
            if done {
                break;
            }
            if count == -1 && offset + TEXTUAL_HEADER_BYTES as u64 > len {
                return Err(Error::format(
                    file.path(),
                    format!("a variable number of extended textual headers without {END_TEXT}"),
                ));
            }
            let mut ext = vec![0u8; TEXTUAL_HEADER_BYTES];
            file.read_exact_at(&mut ext, offset)?;
            header.extended.push(TextualHeader::from_bytes(ext));
            offset += TEXTUAL_HEADER_BYTES as u64;
        }
        Ok(header)
    }

    /// The textual and binary headers in the first 3600 of `bytes`, and the extended textual
    /// headers in the rest (whole 3200-byte blocks).
    ///
    /// # Panics
    /// If `bytes` is shorter than 3600 bytes or its rest is not whole blocks.
    pub fn from_bytes(bytes: &[u8], order: Option<ByteOrder>) -> Self {
        let (text, rest) = bytes.split_at(TEXTUAL_HEADER_BYTES);
        let (bin, ext) = rest.split_at(BINARY_HEADER_BYTES);
        let order = order.unwrap_or_else(|| BinaryHeader::detect_byte_order(bin));
        assert_eq!(
            ext.len() % TEXTUAL_HEADER_BYTES,
            0,
            "whole extended headers"
        );
        FileHeader {
            textual: TextualHeader::from_bytes(text.to_vec()),
            binary: BinaryHeader::from_bytes(bin.to_vec(), order),
            extended: ext
                .chunks(TEXTUAL_HEADER_BYTES)
                .map(|c| TextualHeader::from_bytes(c.to_vec()))
                .collect(),
        }
    }

    /// The headers' bytes, as in the file.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.byte_len() as usize);
        out.extend_from_slice(self.textual.bytes());
        out.extend_from_slice(self.binary.bytes());
        for e in &self.extended {
            out.extend_from_slice(e.bytes());
        }
        out
    }

    /// Bytes the headers take in the file.
    pub fn byte_len(&self) -> u64 {
        (FILE_HEADER_BYTES + TEXTUAL_HEADER_BYTES * self.extended.len()) as u64
    }

    /// The byte order of the file's numbers.
    pub fn byte_order(&self) -> ByteOrder {
        self.binary.byte_order()
    }
}
