//! The 3200-byte textual file header (and the extended textual headers of revision 1 and later):
//! 40 lines of 80 characters, in EBCDIC (the standard) or ASCII (allowed by revision 1 and 2).
//!
//! Headers are kept as the bytes of the file, so copying a file's headers loses nothing;
//! [`TextualHeader::text`] decodes them for display. EBCDIC is IBM code page 037 (as ObsPy's
//! SEG-Y module uses); segyio's table differs from it in five characters (`! [ ] ^ |`), so text
//! written by one and decoded by the other may differ there.

/// Bytes in a textual header.
pub const TEXTUAL_HEADER_BYTES: usize = 3200;

/// The character encoding of a textual header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// EBCDIC (IBM code page 037): the SEG-Y standard.
    Ebcdic,
    /// ASCII.
    Ascii,
}

/// EBCDIC (code page 037) of the printable ASCII characters `0x20..=0x7e`, in order.
const EBCDIC_OF_PRINTABLE: [u8; 95] = [
    0x40, 0x5a, 0x7f, 0x7b, 0x5b, 0x6c, 0x50, 0x7d, 0x4d, 0x5d, 0x5c, 0x4e, 0x6b, 0x60, 0x4b, 0x61,
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0x7a, 0x5e, 0x4c, 0x7e, 0x6e, 0x6f,
    0x7c, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6,
    0xd7, 0xd8, 0xd9, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xba, 0xe0, 0xbb, 0xb0, 0x6d,
    0x79, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96,
    0x97, 0x98, 0x99, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xc0, 0x4f, 0xd0, 0xa1,
];

/// The EBCDIC byte of a printable ASCII character; other characters become an EBCDIC space.
pub fn ascii_to_ebcdic(c: u8) -> u8 {
    match c {
        0x20..=0x7e => EBCDIC_OF_PRINTABLE[(c - 0x20) as usize],
        _ => 0x40,
    }
}

/// The printable ASCII character of an EBCDIC byte, if it has one.
pub fn ebcdic_to_ascii(b: u8) -> Option<u8> {
    EBCDIC_OF_PRINTABLE
        .iter()
        .position(|&e| e == b)
        .map(|i| i as u8 + 0x20)
}

/// A textual header: its 3200 bytes as stored in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextualHeader {
    bytes: Vec<u8>,
}

impl TextualHeader {
    /// The header made of these bytes.
    ///
    /// # Panics
    /// If `bytes` is not 3200 bytes long.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        assert_eq!(bytes.len(), TEXTUAL_HEADER_BYTES, "a textual header");
        TextualHeader { bytes }
    }

    /// A header of up to 40 lines of text (longer lines are refused, not cut), each padded to
    /// 80 characters, in `encoding`.
    ///
    /// # Errors
    /// A message naming the line that has more than 80 characters, is not printable ASCII, or
    /// is past the 40th.
    pub fn from_lines(lines: &[String], encoding: TextEncoding) -> Result<Self, String> {
        if lines.len() > 40 {
            return Err(format!(
                "a textual header has 40 lines, not {}",
                lines.len()
            ));
        }
        let mut bytes = vec![b' '; TEXTUAL_HEADER_BYTES];
        for (i, line) in lines.iter().enumerate() {
            if line.len() > 80 || !line.bytes().all(|c| (0x20..=0x7e).contains(&c)) {
                return Err(format!(
                    "textual header line {} is not at most 80 printable ASCII characters: {line:?}",
                    i + 1
                ));
            }
            bytes[80 * i..80 * i + line.len()].copy_from_slice(line.as_bytes());
        }
        if encoding == TextEncoding::Ebcdic {
            bytes.iter_mut().for_each(|b| *b = ascii_to_ebcdic(*b));
        }
        Ok(TextualHeader { bytes })
    }

    /// The bytes as stored in the file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The encoding, guessed from the bytes: ASCII if more of them are printable ASCII than
    /// printable EBCDIC, EBCDIC otherwise (a header of zeros counts as EBCDIC).
    pub fn encoding(&self) -> TextEncoding {
        let ascii = self
            .bytes
            .iter()
            .filter(|&&b| (0x20..=0x7e).contains(&b))
            .count();
        let ebcdic = self
            .bytes
            .iter()
            .filter(|&&b| ebcdic_to_ascii(b).is_some())
            .count();
        if ascii > ebcdic {
            TextEncoding::Ascii
        } else {
            TextEncoding::Ebcdic
        }
    }

    /// The text: 40 lines of 80 characters joined by newlines, with trailing spaces removed;
    /// characters that are not printable in the header's encoding show as spaces.
    pub fn text(&self) -> String {
        let encoding = self.encoding();
        let chars: Vec<u8> = self
            .bytes
            .iter()
            .map(|&b| match encoding {
                TextEncoding::Ascii if (0x20..=0x7e).contains(&b) => b,
                TextEncoding::Ebcdic => ebcdic_to_ascii(b).unwrap_or(b' '),
                TextEncoding::Ascii => b' ',
            })
            .collect();
        chars
            .chunks(80)
            .map(|line| String::from_utf8_lossy(line).trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_code_page_037_and_one_to_one() {
        assert_eq!(ascii_to_ebcdic(b'C'), 0xc3);
        assert_eq!(ascii_to_ebcdic(b' '), 0x40);
        assert_eq!(ascii_to_ebcdic(b'0'), 0xf0);
        assert_eq!(ascii_to_ebcdic(b'z'), 0xa9);
        for c in 0x20..=0x7eu8 {
            assert_eq!(ebcdic_to_ascii(ascii_to_ebcdic(c)), Some(c));
        }
        assert_eq!(ebcdic_to_ascii(0x00), None);
    }

    #[test]
    fn lines_encode_and_decode_in_both_encodings() {
        let lines = vec!["C 1 CLIENT: distlops".to_string(), "C 2".to_string()];
        for enc in [TextEncoding::Ebcdic, TextEncoding::Ascii] {
            let h = TextualHeader::from_lines(&lines, enc).unwrap();
            assert_eq!(h.bytes().len(), 3200);
            assert_eq!(h.encoding(), enc);
            let text = h.text();
            assert_eq!(text.split('\n').count(), 40);
            assert!(text.starts_with("C 1 CLIENT: distlops\nC 2\n"));
        }
        assert_eq!(
            TextualHeader::from_lines(&lines, TextEncoding::Ebcdic)
                .unwrap()
                .bytes()[0],
            0xc3
        );
    }

    #[test]
    fn long_lines_and_too_many_lines_are_refused() {
        let long = vec!["x".repeat(81)];
        assert!(TextualHeader::from_lines(&long, TextEncoding::Ascii)
            .unwrap_err()
            .contains("line 1"));
        let many = vec![String::new(); 41];
        assert!(TextualHeader::from_lines(&many, TextEncoding::Ascii).is_err());
        let tab = vec!["a\tb".to_string()];
        assert!(TextualHeader::from_lines(&tab, TextEncoding::Ascii).is_err());
    }
}
