//! Byte order of the numbers in a SEG-Y file.
//!
//! SEG-Y is big-endian; revision 2 allows little-endian files and marks them with the constant
//! `0x01020304` in binary-header bytes 3297-3300 (see
//! [`BinaryHeader::detect_byte_order`](super::BinaryHeader::detect_byte_order)).

/// The byte order of a SEG-Y file's headers and samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ByteOrder {
    /// Most significant byte first: the SEG-Y standard.
    #[default]
    Big,
    /// Least significant byte first (allowed by revision 2).
    Little,
}

impl ByteOrder {
    /// The `N` bytes of `b` as a big-endian array (reversed for little-endian files).
    fn array<const N: usize>(self, b: &[u8]) -> [u8; N] {
        let mut a: [u8; N] = b[..N].try_into().expect("slice of N bytes");
        if self == ByteOrder::Little {
            a.reverse();
        }
        a
    }

    /// Writes the big-endian bytes `a` into `out` in this order.
    fn put<const N: usize>(self, mut a: [u8; N], out: &mut [u8]) {
        if self == ByteOrder::Little {
            a.reverse();
        }
        out[..N].copy_from_slice(&a);
    }

    /// The unsigned 16-bit number in the first two bytes of `b`.
    pub fn u16(self, b: &[u8]) -> u16 {
        u16::from_be_bytes(self.array(b))
    }

    /// The signed 16-bit number in the first two bytes of `b`.
    pub fn i16(self, b: &[u8]) -> i16 {
        i16::from_be_bytes(self.array(b))
    }

    /// The unsigned 32-bit number in the first four bytes of `b`.
    pub fn u32(self, b: &[u8]) -> u32 {
        u32::from_be_bytes(self.array(b))
    }

    /// The signed 32-bit number in the first four bytes of `b`.
    pub fn i32(self, b: &[u8]) -> i32 {
        i32::from_be_bytes(self.array(b))
    }

    /// The unsigned 64-bit number in the first eight bytes of `b`.
    pub fn u64(self, b: &[u8]) -> u64 {
        u64::from_be_bytes(self.array(b))
    }

    /// The IEEE double in the first eight bytes of `b`.
    pub fn f64(self, b: &[u8]) -> f64 {
        f64::from_be_bytes(self.array(b))
    }

    /// Writes `v` into the first two bytes of `out`.
    pub fn put_u16(self, v: u16, out: &mut [u8]) {
        self.put(v.to_be_bytes(), out)
    }

    /// Writes `v` into the first four bytes of `out`.
    pub fn put_u32(self, v: u32, out: &mut [u8]) {
        self.put(v.to_be_bytes(), out)
    }

    /// Writes `v` into the first eight bytes of `out`.
    pub fn put_u64(self, v: u64, out: &mut [u8]) {
        self.put(v.to_be_bytes(), out)
    }
}

#[cfg(test)]
mod tests {
    use super::ByteOrder::{Big, Little};

    #[test]
    fn both_orders_read_and_write_the_same_numbers() {
        let b = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
        assert_eq!(Big.u16(&b), 0x0102);
        assert_eq!(Little.u16(&b), 0x0201);
        assert_eq!(Big.i32(&[0xff, 0xff, 0xff, 0xfe]), -2);
        assert_eq!(Little.i32(&[0xfe, 0xff, 0xff, 0xff]), -2);
        assert_eq!(Big.u64(&b), 0x0102_0304_0506_0708);
        assert_eq!(Little.u64(&b), 0x0807_0605_0403_0201);
        let mut out = [0u8; 4];
        Little.put_u32(0x0102_0304, &mut out);
        assert_eq!(out, [4, 3, 2, 1]);
        Big.put_u16(0xfffe, &mut out);
        assert_eq!(Big.i16(&out), -2);
        assert_eq!(Big.f64(&1.5f64.to_be_bytes()), 1.5);
        assert_eq!(Little.f64(&(-0.25f64).to_le_bytes()), -0.25);
    }
}
