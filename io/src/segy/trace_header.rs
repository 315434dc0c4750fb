//! The 240-byte trace header.

use super::endian::ByteOrder;
use super::field::HeaderField;

/// Bytes in a trace header.
pub const TRACE_HEADER_BYTES: usize = 240;

/// A trace header: its 240 bytes as stored in the file. Fields are read and written in the
/// file's byte order, which the caller passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceHeader {
    bytes: [u8; TRACE_HEADER_BYTES],
}

impl TraceHeader {
    /// Trace sequence number within the line.
    pub const SEQUENCE_LINE: HeaderField = HeaderField::i32(1);
    /// Trace sequence number within the file.
    pub const SEQUENCE_FILE: HeaderField = HeaderField::i32(5);
    /// Ensemble (CDP) number.
    pub const CDP: HeaderField = HeaderField::i32(21);
    /// Trace identification code (1 = time-domain seismic data).
    pub const TRACE_ID: HeaderField = HeaderField::i16(29);
    /// Delay recording time in milliseconds: the time of the first sample.
    pub const DELAY: HeaderField = HeaderField::i16(109);
    /// Samples in this trace.
    pub const SAMPLE_COUNT: HeaderField = HeaderField::u16(115);
    /// Sample interval of this trace in microseconds.
    pub const SAMPLE_INTERVAL: HeaderField = HeaderField::u16(117);
    /// CDP x coordinate.
    pub const CDP_X: HeaderField = HeaderField::i32(181);
    /// CDP y coordinate.
    pub const CDP_Y: HeaderField = HeaderField::i32(185);
    /// Inline number (the default inline field, as in segyio).
    pub const INLINE: HeaderField = HeaderField::i32(189);
    /// Crossline number (the default crossline field, as in segyio).
    pub const CROSSLINE: HeaderField = HeaderField::i32(193);

    /// A header of zeros.
    pub fn zeroed() -> Self {
        TraceHeader {
            bytes: [0; TRACE_HEADER_BYTES],
        }
    }

    /// The header made of the first 240 bytes of `bytes`.
    ///
    /// # Panics
    /// If `bytes` is shorter than 240 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        TraceHeader {
            bytes: bytes[..TRACE_HEADER_BYTES]
                .try_into()
                .expect("240 bytes of trace header"),
        }
    }

    /// The bytes as stored in the file.
    pub fn bytes(&self) -> &[u8; TRACE_HEADER_BYTES] {
        &self.bytes
    }

    /// The value of a field (bytes 1-240).
    ///
    /// # Panics
    /// If the field is not within the trace header.
    pub fn get(&self, field: HeaderField, order: ByteOrder) -> i64 {
        field.get(&self.bytes, 1, order)
    }

    /// Sets a field.
    ///
    /// # Errors
    /// A message if the field cannot hold `value`.
    ///
    /// # Panics
    /// If the field is not within the trace header.
    pub fn set(&mut self, field: HeaderField, value: i64, order: ByteOrder) -> Result<(), String> {
        field.set(&mut self.bytes, 1, value, order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_crossline_at_189_and_193() {
        let mut h = TraceHeader::zeroed();
        h.set(TraceHeader::INLINE, 1001, ByteOrder::Big).unwrap();
        h.set(TraceHeader::CROSSLINE, -3, ByteOrder::Big).unwrap();
        assert_eq!(
            &h.bytes()[188..196],
            &[0, 0, 0x03, 0xe9, 0xff, 0xff, 0xff, 0xfd]
        );
        let back = TraceHeader::from_bytes(h.bytes());
        assert_eq!(back.get(TraceHeader::INLINE, ByteOrder::Big), 1001);
        assert_eq!(back.get(TraceHeader::CROSSLINE, ByteOrder::Big), -3);
        assert_eq!(
            back.get(TraceHeader::CROSSLINE, ByteOrder::Little),
            -0x0200_0001
        );
    }
}
