//! Integer fields of the binary and trace headers, named by their byte position as the standard
//! numbers them.

use super::endian::ByteOrder;

/// How a header field is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldWidth {
    /// 2-byte two's complement.
    I16,
    /// 2-byte unsigned.
    U16,
    /// 4-byte two's complement.
    I32,
    /// 4-byte unsigned.
    U32,
    /// 8-byte unsigned (revision 2).
    U64,
}

impl FieldWidth {
    /// Bytes the field takes.
    pub fn bytes(self) -> usize {
        match self {
            FieldWidth::I16 | FieldWidth::U16 => 2,
            FieldWidth::I32 | FieldWidth::U32 => 4,
            FieldWidth::U64 => 8,
        }
    }

    /// The values the field can hold.
    fn range(self) -> (i128, i128) {
        match self {
            FieldWidth::I16 => (i16::MIN.into(), i16::MAX.into()),
            FieldWidth::U16 => (0, u16::MAX.into()),
            FieldWidth::I32 => (i32::MIN.into(), i32::MAX.into()),
            FieldWidth::U32 => (0, u32::MAX.into()),
            FieldWidth::U64 => (0, u64::MAX.into()),
        }
    }
}

/// A header field: its first byte, numbered from 1 at the start of the trace header (1-240)
/// or from the start of the file for the binary header (3201-3600), as in the SEG-Y standard
/// and segyio, and its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HeaderField {
    /// The first byte's number.
    pub byte: usize,
    /// How it is stored.
    pub width: FieldWidth,
}

impl HeaderField {
    /// A 4-byte signed field starting at byte `byte` (segyio's `iline=`/`xline=` fields).
    pub const fn i32(byte: usize) -> Self {
        HeaderField {
            byte,
            width: FieldWidth::I32,
        }
    }

    /// A 2-byte signed field.
    pub const fn i16(byte: usize) -> Self {
        HeaderField {
            byte,
            width: FieldWidth::I16,
        }
    }

    /// A 2-byte unsigned field.
    pub const fn u16(byte: usize) -> Self {
        HeaderField {
            byte,
            width: FieldWidth::U16,
        }
    }

    /// Whether the field lies within a header whose first byte is numbered `first` and that has
    /// `len` bytes.
    pub fn fits(self, first: usize, len: usize) -> bool {
        self.byte >= first && self.byte - first + self.width.bytes() <= len
    }

    /// The field's value in `header`, whose first byte is numbered `first`.
    ///
    /// # Panics
    /// If the field does not [`fit`](Self::fits) in `header`.
    pub fn get(self, header: &[u8], first: usize, order: ByteOrder) -> i64 {
        assert!(
            self.fits(first, header.len()),
            "{self:?} is outside the header"
        );
        let b = &header[self.byte - first..];
        match self.width {
            FieldWidth::I16 => order.i16(b).into(),
            FieldWidth::U16 => order.u16(b).into(),
            FieldWidth::I32 => order.i32(b).into(),
            FieldWidth::U32 => order.u32(b).into(),
            FieldWidth::U64 => order.u64(b) as i64,
        }
    }

    /// Stores `value` in `header`, whose first byte is numbered `first`.
    ///
    /// # Errors
    /// A message if the field cannot hold `value` (it is not cut to fit).
    ///
    /// # Panics
    /// If the field does not [`fit`](Self::fits) in `header`.
    pub fn set(
        self,
        header: &mut [u8],
        first: usize,
        value: i64,
        order: ByteOrder,
    ) -> Result<(), String> {
        assert!(
            self.fits(first, header.len()),
            "{self:?} is outside the header"
        );
        let (lo, hi) = self.width.range();
        if !(lo..=hi).contains(&i128::from(value)) {
            return Err(format!(
                "{value} does not fit in the {:?} header field at byte {}",
                self.width, self.byte
            ));
        }
        let b = &mut header[self.byte - first..];
        match self.width {
            FieldWidth::I16 | FieldWidth::U16 => order.put_u16(value as u16, b),
            FieldWidth::I32 | FieldWidth::U32 => order.put_u32(value as u32, b),
            FieldWidth::U64 => order.put_u64(value as u64, b),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_and_write_at_their_standard_byte_numbers() {
        let mut h = [0u8; 240];
        let il = HeaderField::i32(189);
        il.set(&mut h, 1, -7, ByteOrder::Big).unwrap();
        assert_eq!(&h[188..192], &[0xff, 0xff, 0xff, 0xf9]);
        assert_eq!(il.get(&h, 1, ByteOrder::Big), -7);
        let ns = HeaderField::u16(115);
        ns.set(&mut h, 1, 40000, ByteOrder::Little).unwrap();
        assert_eq!(ns.get(&h, 1, ByteOrder::Little), 40000);
        assert!(ns.set(&mut h, 1, 70000, ByteOrder::Big).is_err());
        assert!(HeaderField::i16(1)
            .set(&mut h, 1, -40000, ByteOrder::Big)
            .is_err());
        assert!(HeaderField::i32(237).fits(1, 240));
        assert!(!HeaderField::i32(238).fits(1, 240));
        assert!(!HeaderField::i32(0).fits(1, 240));
        let mut bin = [0u8; 400];
        HeaderField::i16(3225)
            .set(&mut bin, 3201, 5, ByteOrder::Big)
            .unwrap();
        assert_eq!(bin[25], 5);
    }
}
