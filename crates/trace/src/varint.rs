//! LEB128 variable-length integers and zigzag signed encoding.

/// The longest LEB128 encoding of a `u64`.
pub const MAX_LEN: usize = 10;

/// Appends `v` as LEB128 (7 bits per byte, least significant group first, high bit = more follows).
#[inline]
pub fn put(out: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; MAX_LEN];
    let n = encode(&mut tmp, v);
    out.extend_from_slice(&tmp[..n]);
}

/// Encodes `v` into `buf` and returns the number of bytes used (1..=10).
#[inline]
pub fn encode(buf: &mut [u8; MAX_LEN], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        buf[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    buf[i] = v as u8;
    i + 1
}

/// Maps signed to unsigned so that small magnitudes of either sign encode short: 0, -1, 1, -2, ... → 0, 1, 2, 3.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A cursor over a byte slice that decodes varints and fixed fields without panicking.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

/// Decoding ran past the end of the data or met a malformed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data, pos: 0 }
    }

    pub fn at(data: &'a [u8], pos: usize) -> Self {
        Cursor { data, pos: pos.min(data.len()) }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Moves back to (or forward to) `pos`, at most the end of the data.
    pub fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.data.len());
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        // Away from the end of the data, one bounds check for all ten possible bytes.
        if let Some(b) = self.data.get(self.pos..self.pos + MAX_LEN) {
            let mut v: u64 = 0;
            for (i, &x) in b.iter().enumerate() {
                v |= u64::from(x & 0x7f) << (7 * i);
                if x < 0x80 {
                    if i == MAX_LEN - 1 && x > 1 {
                        break;
                    }
                    self.pos += i + 1;
                    return Ok(v);
                }
            }
        }
        self.varint_slow()
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&b) = self.data.get(self.pos) else {
                return Err(DecodeError("a varint runs past the end of its chunk"));
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(DecodeError("a varint overflows 64 bits"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
            if shift > 63 {
                return Err(DecodeError("a varint is longer than 10 bytes"));
            }
        }
    }

    pub fn varint_u32(&mut self) -> Result<u32, DecodeError> {
        u32::try_from(self.varint()?).map_err(|_| DecodeError("a 32-bit field is out of range"))
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        let b = *self.data.get(self.pos).ok_or(DecodeError("a byte field runs past the end of its chunk"))?;
        self.pos += 1;
        Ok(b)
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError("a byte string runs past the end of its chunk"));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A length-prefixed UTF-8 string (invalid UTF-8 is replaced, never rejected).
    pub fn string(&mut self) -> Result<String, DecodeError> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| DecodeError("a string length is out of range"))?;
        Ok(String::from_utf8_lossy(self.bytes(n)?).into_owned())
    }
}

/// Appends a length-prefixed string.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let values = [0u64, 1, 127, 128, 300, 16383, 16384, u32::MAX as u64, u64::MAX - 1, u64::MAX];
        let mut buf = Vec::new();
        for &v in &values {
            put(&mut buf, v);
        }
        let mut c = Cursor::new(&buf);
        for &v in &values {
            assert_eq!(c.varint().unwrap(), v);
        }
        assert!(c.is_empty());
        assert!(c.varint().is_err());
    }

    #[test]
    fn every_length_decodes_in_both_paths() {
        let mut values = vec![0u64, 1, 127, 128, u64::MAX];
        for bits in 1..64 {
            values.extend([(1u64 << bits) - 1, 1u64 << bits, (1u64 << bits) | 0x55]);
        }
        for &v in &values {
            let mut buf = Vec::new();
            put(&mut buf, v);
            let n = buf.len();
            // Followed by enough bytes for the unchecked path, and alone for the checked one.
            let mut padded = buf.clone();
            padded.extend([0xffu8; 10]);
            let mut c = Cursor::new(&padded);
            assert_eq!(c.varint(), Ok(v), "{v:#x} padded");
            assert_eq!(c.pos(), n);
            let mut c = Cursor::new(&buf);
            assert_eq!(c.varint(), Ok(v), "{v:#x}");
            assert!(c.is_empty());
        }
    }

    #[test]
    fn zigzag_round_trip() {
        for v in [0i64, -1, 1, -2, 2, i64::MIN, i64::MAX, 123456789, -987654321] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn overlong_is_rejected() {
        let bad = [0xffu8; 11];
        assert!(Cursor::new(&bad).varint().is_err());
        let overflow = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(Cursor::new(&overflow).varint().is_err());
    }
}
