//! Sample formats (binary-header bytes 3225-3226) and the conversion of samples to and from
//! numbers.

use super::endian::ByteOrder;
use super::ibm::{f64_to_ibm, ibm_to_f64};
use distlops_core::RealScalar;

/// A SEG-Y data sample format that distlops-io reads. Writing takes the float formats only
/// ([`is_float`](Self::is_float)): writing floats as integers would round them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleFormat {
    /// Code 1: 4-byte IBM floating point.
    IbmFloat32,
    /// Code 2: 4-byte two's complement integer.
    Int32,
    /// Code 3: 2-byte two's complement integer.
    Int16,
    /// Code 5: 4-byte IEEE floating point.
    IeeeFloat32,
    /// Code 6: 8-byte IEEE floating point (revision 2).
    IeeeFloat64,
    /// Code 8: 1-byte two's complement integer.
    Int8,
    /// Code 10: 4-byte unsigned integer (revision 2).
    UInt32,
    /// Code 11: 2-byte unsigned integer (revision 2).
    UInt16,
    /// Code 16: 1-byte unsigned integer (revision 2).
    UInt8,
}

impl SampleFormat {
    /// Every format, in code order.
    pub const ALL: [SampleFormat; 9] = [
        SampleFormat::IbmFloat32,
        SampleFormat::Int32,
        SampleFormat::Int16,
        SampleFormat::IeeeFloat32,
        SampleFormat::IeeeFloat64,
        SampleFormat::Int8,
        SampleFormat::UInt32,
        SampleFormat::UInt16,
        SampleFormat::UInt8,
    ];

    /// The format with this binary-header code, if distlops-io reads it.
    pub fn from_code(code: i16) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.code() == code)
    }

    /// The binary-header code.
    pub fn code(self) -> i16 {
        match self {
            SampleFormat::IbmFloat32 => 1,
            SampleFormat::Int32 => 2,
            SampleFormat::Int16 => 3,
            SampleFormat::IeeeFloat32 => 5,
            SampleFormat::IeeeFloat64 => 6,
            SampleFormat::Int8 => 8,
            SampleFormat::UInt32 => 10,
            SampleFormat::UInt16 => 11,
            SampleFormat::UInt8 => 16,
        }
    }

    /// Bytes per sample.
    pub fn bytes(self) -> usize {
        match self {
            SampleFormat::IeeeFloat64 => 8,
            SampleFormat::IbmFloat32
            | SampleFormat::Int32
            | SampleFormat::IeeeFloat32
            | SampleFormat::UInt32 => 4,
            SampleFormat::Int16 | SampleFormat::UInt16 => 2,
            SampleFormat::Int8 | SampleFormat::UInt8 => 1,
        }
    }

    /// Whether it is a floating-point format (1, 5 or 6), the formats distlops-io writes.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            SampleFormat::IbmFloat32 | SampleFormat::IeeeFloat32 | SampleFormat::IeeeFloat64
        )
    }

    /// The value of the sample in the first [`bytes`](Self::bytes) bytes of `b` (exact: every
    /// format's values are `f64` values).
    pub fn decode(self, order: ByteOrder, b: &[u8]) -> f64 {
        match self {
            SampleFormat::IbmFloat32 => ibm_to_f64(order.u32(b)),
            SampleFormat::Int32 => order.i32(b) as f64,
            SampleFormat::Int16 => order.i16(b) as f64,
            SampleFormat::IeeeFloat32 => f32::from_bits(order.u32(b)) as f64,
            SampleFormat::IeeeFloat64 => order.f64(b),
            SampleFormat::Int8 => b[0] as i8 as f64,
            SampleFormat::UInt32 => order.u32(b) as f64,
            SampleFormat::UInt16 => order.u16(b) as f64,
            SampleFormat::UInt8 => b[0] as f64,
        }
    }

    /// Decodes the samples in `bytes` into `out` (`out.len()` samples).
    ///
    /// # Errors
    /// The index of the first sample whose value does not fit in `T` (an IBM value above
    /// `f32::MAX` read as `f32`), which would otherwise become infinite.
    pub fn decode_into<T: RealScalar>(
        self,
        order: ByteOrder,
        bytes: &[u8],
        out: &mut [T],
    ) -> Result<(), usize> {
        let n = self.bytes();
        for (i, (o, b)) in out.iter_mut().zip(bytes.chunks_exact(n)).enumerate() {
            let v = self.decode(order, b);
            *o = T::real_from_f64(v);
            if v.is_finite() && !o.is_finite() {
                return Err(i);
            }
        }
        Ok(())
    }

    /// Encodes `values` into `out` (`values.len() * bytes()` bytes) in a float format.
    ///
    /// # Errors
    /// The index and value of the first sample this format cannot hold: for IBM, a non-finite
    /// value or one above the largest IBM value; for 4-byte IEEE, a finite value that overflows
    /// `f32`. (Rounding to the format's precision is not an error.)
    ///
    /// # Panics
    /// If the format is not a float format.
    pub fn encode_from<T: RealScalar>(
        self,
        order: ByteOrder,
        values: &[T],
        out: &mut [u8],
    ) -> Result<(), (usize, f64)> {
        let n = self.bytes();
        for (i, (v, o)) in values.iter().zip(out.chunks_exact_mut(n)).enumerate() {
            let v = RealScalar::to_f64(*v);
            match self {
                SampleFormat::IbmFloat32 => {
                    order.put_u32(f64_to_ibm(v).map_err(|_| (i, v))?, o);
                }
                SampleFormat::IeeeFloat32 => {
                    let f = v as f32;
                    if v.is_finite() && !f.is_finite() {
                        return Err((i, v));
                    }
                    order.put_u32(f.to_bits(), o);
                }
                SampleFormat::IeeeFloat64 => order.put_u64(v.to_bits(), o),
                _ => panic!("encode_from: {self:?} is not a float format"),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_are_refused() {
        for f in SampleFormat::ALL {
            assert_eq!(SampleFormat::from_code(f.code()), Some(f));
        }
        for code in [0, 4, 7, 9, 12, 15, 17, -1] {
            assert_eq!(SampleFormat::from_code(code), None, "{code}");
        }
    }

    #[test]
    fn every_format_decodes_known_bytes() {
        use ByteOrder::{Big, Little};
        let cases: [(SampleFormat, &[u8], f64); 10] = [
            (
                SampleFormat::IbmFloat32,
                &[0xc2, 0x76, 0xa0, 0x00],
                -118.625,
            ),
            (SampleFormat::Int32, &[0xff, 0xff, 0xff, 0xfe], -2.0),
            (SampleFormat::Int16, &[0x80, 0x00], -32768.0),
            (SampleFormat::IeeeFloat32, &[0x3f, 0xc0, 0x00, 0x00], 1.5),
            (
                SampleFormat::IeeeFloat64,
                &[0xbf, 0xf8, 0, 0, 0, 0, 0, 0],
                -1.5,
            ),
            (SampleFormat::Int8, &[0xff], -1.0),
            (
                SampleFormat::UInt32,
                &[0xff, 0xff, 0xff, 0xff],
                4_294_967_295.0,
            ),
            (SampleFormat::UInt16, &[0xff, 0xfe], 65534.0),
            (SampleFormat::UInt8, &[0xff], 255.0),
            (SampleFormat::Int16, &[0x01, 0x00], 256.0),
        ];
        for (f, bytes, v) in cases {
            assert_eq!(f.decode(Big, bytes), v, "{f:?}");
            let swapped: Vec<u8> = bytes.iter().rev().copied().collect();
            assert_eq!(f.decode(Little, &swapped), v, "{f:?} little-endian");
        }
    }

    #[test]
    fn float_formats_encode_and_decode_back() {
        let values = [0.0, -1.5, 118.625, 1e-3, 3.0e7];
        for f in [
            SampleFormat::IbmFloat32,
            SampleFormat::IeeeFloat32,
            SampleFormat::IeeeFloat64,
        ] {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let mut bytes = vec![0u8; values.len() * f.bytes()];
                f.encode_from(order, &values, &mut bytes).unwrap();
                let mut back = [0.0f64; 5];
                f.decode_into(order, &bytes, &mut back).unwrap();
                for (a, b) in values.iter().zip(back) {
                    assert!((a - b).abs() <= a.abs() * 1e-6, "{f:?}: {a} -> {b}");
                }
            }
        }
    }

    #[test]
    fn values_a_format_cannot_hold_are_errors_not_infinities() {
        let mut bytes = [0u8; 8];
        let e = SampleFormat::IeeeFloat32.encode_from(ByteOrder::Big, &[1.0, 1e39], &mut bytes);
        assert_eq!(e, Err((1, 1e39)));
        let e = SampleFormat::IbmFloat32.encode_from(ByteOrder::Big, &[f64::NAN], &mut bytes);
        assert!(matches!(e, Err((0, v)) if v.is_nan()));
        // An IBM value above f32::MAX read as f32.
        let big = [0x60, 0x10, 0x00, 0x00]; // 16^31 ~ 2.1e37 fits; 0x7f.. does not
        let mut out = [0.0f32; 1];
        assert!(SampleFormat::IbmFloat32
            .decode_into(ByteOrder::Big, &big, &mut out)
            .is_ok());
        let huge = [0x7f, 0x10, 0x00, 0x00];
        assert_eq!(
            SampleFormat::IbmFloat32.decode_into(ByteOrder::Big, &huge, &mut out),
            Err(0)
        );
        let mut out64 = [0.0f64; 1];
        assert!(SampleFormat::IbmFloat32
            .decode_into(ByteOrder::Big, &huge, &mut out64)
            .is_ok());
    }
}
