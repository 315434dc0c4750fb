//! The 400-byte binary file header (file bytes 3201-3600).

use super::endian::ByteOrder;
use super::field::{FieldWidth, HeaderField};
use super::sample_format::SampleFormat;

/// Bytes in the binary header.
pub const BINARY_HEADER_BYTES: usize = 400;

/// The number of the binary header's first byte in the file.
pub const BINARY_HEADER_FIRST_BYTE: usize = 3201;

/// The binary file header: its 400 bytes as stored in the file, and their byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryHeader {
    bytes: Vec<u8>,
    order: ByteOrder,
}

impl BinaryHeader {
    /// Number of data traces per ensemble.
    pub const TRACES_PER_ENSEMBLE: HeaderField = HeaderField::i16(3213);
    /// Sample interval in microseconds.
    pub const SAMPLE_INTERVAL: HeaderField = HeaderField::u16(3217);
    /// Sample interval of the original recording.
    pub const SAMPLE_INTERVAL_ORIGINAL: HeaderField = HeaderField::u16(3219);
    /// Samples per data trace.
    pub const SAMPLES: HeaderField = HeaderField::u16(3221);
    /// Samples per data trace of the original recording.
    pub const SAMPLES_ORIGINAL: HeaderField = HeaderField::u16(3223);
    /// Data sample format code ([`SampleFormat`]).
    pub const FORMAT: HeaderField = HeaderField::i16(3225);
    /// Trace sorting code (4 = horizontally stacked).
    pub const SORTING_CODE: HeaderField = HeaderField::i16(3229);
    /// Measurement system (1 = metres, 2 = feet).
    pub const MEASUREMENT_SYSTEM: HeaderField = HeaderField::i16(3255);
    /// Extended samples per data trace (revision 2; overrides [`Self::SAMPLES`] when not 0).
    pub const EXT_SAMPLES: HeaderField = HeaderField::i32(3269);
    /// The constant 16909060 (`0x01020304`) that shows the byte order (revision 2).
    pub const BYTE_ORDER_CONSTANT: HeaderField = HeaderField {
        byte: 3297,
        width: FieldWidth::U32,
    };
    /// Revision, major (one byte) and minor (the next) as one 16-bit field: `0x0100` is 1.0.
    pub const REVISION: HeaderField = HeaderField::u16(3501);
    /// Fixed length trace flag (1 = every trace has the same number of samples).
    pub const FIXED_LENGTH: HeaderField = HeaderField::i16(3503);
    /// Number of 3200-byte extended textual headers (-1: variable, ended by `((SEG: EndText))`).
    pub const EXTENDED_HEADERS: HeaderField = HeaderField::i16(3505);
    /// Maximum number of additional 240-byte trace headers (revision 2).
    pub const ADDITIONAL_TRACE_HEADERS: HeaderField = HeaderField {
        byte: 3507,
        width: FieldWidth::U32,
    };
    /// Number of traces in the file (revision 2; 0 = not given).
    pub const TRACE_COUNT: HeaderField = HeaderField {
        byte: 3513,
        width: FieldWidth::U64,
    };
    /// Byte offset of the first trace (revision 2; 0 = after the headers).
    pub const FIRST_TRACE_OFFSET: HeaderField = HeaderField {
        byte: 3521,
        width: FieldWidth::U64,
    };
    /// Number of 3200-byte data trailer stanzas (revision 2).
    pub const TRAILER_STANZAS: HeaderField = HeaderField::i32(3529);

    /// The header made of these 400 bytes, read in `order`.
    ///
    /// # Panics
    /// If `bytes` is not 400 bytes long.
    pub fn from_bytes(bytes: Vec<u8>, order: ByteOrder) -> Self {
        assert_eq!(bytes.len(), BINARY_HEADER_BYTES, "a binary header");
        BinaryHeader { bytes, order }
    }

    /// A header of zeros except for the fields set later.
    pub fn zeroed(order: ByteOrder) -> Self {
        Self::from_bytes(vec![0; BINARY_HEADER_BYTES], order)
    }

    /// The byte order of a file from its binary header: the revision 2 constant if it is there,
    /// else the order in which the sample format code is one distlops-io reads, else big-endian.
    pub fn detect_byte_order(bytes: &[u8]) -> ByteOrder {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let probe = BinaryHeader::from_bytes(bytes.to_vec(), order);
            if probe.get(Self::BYTE_ORDER_CONSTANT) == 0x0102_0304 {
                return order;
            }
        }
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let code = BinaryHeader::from_bytes(bytes.to_vec(), order).get(Self::FORMAT);
            if SampleFormat::from_code(code as i16).is_some() {
                return order;
            }
        }
        ByteOrder::Big
    }

    /// The bytes as stored in the file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The byte order its numbers are read in.
    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }

    /// The value of a field (bytes 3201-3600).
    ///
    /// # Panics
    /// If the field is not within the binary header.
    pub fn get(&self, field: HeaderField) -> i64 {
        field.get(&self.bytes, BINARY_HEADER_FIRST_BYTE, self.order)
    }

    /// Sets a field.
    ///
    /// # Errors
    /// A message if the field cannot hold `value`.
    ///
    /// # Panics
    /// If the field is not within the binary header.
    pub fn set(&mut self, field: HeaderField, value: i64) -> Result<(), String> {
        field.set(&mut self.bytes, BINARY_HEADER_FIRST_BYTE, value, self.order)
    }

    /// The major revision (0, 1 or 2).
    pub fn revision(&self) -> u8 {
        (self.get(Self::REVISION) >> 8) as u8
    }

    /// The sample format code.
    pub fn format_code(&self) -> i16 {
        self.get(Self::FORMAT) as i16
    }

    /// Samples per trace (the extended field of revision 2 when it is set; 0 if not given).
    pub fn samples(&self) -> usize {
        let ext = self.get(Self::EXT_SAMPLES);
        if self.revision() >= 2 && ext > 0 {
            ext as usize
        } else {
            self.get(Self::SAMPLES) as usize
        }
    }

    /// The sample interval in microseconds (the extended IEEE double of revision 2, bytes
    /// 3273-3280, when it is set; 0 if not given).
    pub fn sample_interval_us(&self) -> f64 {
        let ext = self
            .order
            .f64(&self.bytes[3273 - BINARY_HEADER_FIRST_BYTE..]);
        if self.revision() >= 2 && ext > 0.0 && ext.is_finite() {
            ext
        } else {
            self.get(Self::SAMPLE_INTERVAL) as f64
        }
    }

    /// The number of extended textual headers, -1 for a variable number. Read in every
    /// revision: the field is unassigned in revision 0, but segyio writes it there too.
    pub fn extended_headers(&self) -> i16 {
        self.get(Self::EXTENDED_HEADERS) as i16
    }

    /// The revision 2 fields that change where traces are, when set: (additional trace headers,
    /// trace count, first trace offset, trailer stanzas); zeros before revision 2.
    pub fn revision2_layout(&self) -> (i64, i64, i64, i64) {
        if self.revision() < 2 {
            return (0, 0, 0, 0);
        }
        (
            self.get(Self::ADDITIONAL_TRACE_HEADERS),
            self.get(Self::TRACE_COUNT),
            self.get(Self::FIRST_TRACE_OFFSET),
            self.get(Self::TRAILER_STANZAS),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_byte_order_detection() {
        let mut h = BinaryHeader::zeroed(ByteOrder::Big);
        h.set(BinaryHeader::SAMPLE_INTERVAL, 4000).unwrap();
        h.set(BinaryHeader::SAMPLES, 251).unwrap();
        h.set(BinaryHeader::FORMAT, 1).unwrap();
        assert_eq!(&h.bytes()[16..18], &[0x0f, 0xa0]);
        assert_eq!(h.samples(), 251);
        assert_eq!(h.sample_interval_us(), 4000.0);
        assert_eq!(h.revision(), 0);
        assert_eq!(BinaryHeader::detect_byte_order(h.bytes()), ByteOrder::Big);
        h.set(BinaryHeader::EXTENDED_HEADERS, 2).unwrap();
        assert_eq!(h.extended_headers(), 2);
        h.set(BinaryHeader::REVISION, 0x0100).unwrap();
        assert_eq!((h.revision(), h.extended_headers()), (1, 2));
        assert_eq!(h.revision2_layout(), (0, 0, 0, 0));

        let mut le = BinaryHeader::zeroed(ByteOrder::Little);
        le.set(BinaryHeader::FORMAT, 5).unwrap();
        assert_eq!(
            BinaryHeader::detect_byte_order(le.bytes()),
            ByteOrder::Little
        );
        // The revision 2 constant wins over the format code.
        le.set(BinaryHeader::BYTE_ORDER_CONSTANT, 0x0102_0304)
            .unwrap();
        le.set(BinaryHeader::FORMAT, 0x0100).unwrap();
        assert_eq!(
            BinaryHeader::detect_byte_order(le.bytes()),
            ByteOrder::Little
        );
    }

    #[test]
    fn revision_2_extended_fields_override() {
        let mut h = BinaryHeader::zeroed(ByteOrder::Big);
        h.set(BinaryHeader::REVISION, 0x0200).unwrap();
        h.set(BinaryHeader::SAMPLES, 100).unwrap();
        h.set(BinaryHeader::EXT_SAMPLES, 70000).unwrap();
        h.set(BinaryHeader::SAMPLE_INTERVAL, 4000).unwrap();
        let mut bytes = h.bytes().to_vec();
        bytes[72..80].copy_from_slice(&250.5f64.to_be_bytes());
        let h = BinaryHeader::from_bytes(bytes, ByteOrder::Big);
        assert_eq!(h.samples(), 70000);
        assert_eq!(h.sample_interval_us(), 250.5);
    }
}
