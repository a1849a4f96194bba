//! The container: file header, chunk headers, checksums and compression. See `FORMAT.md`.

use std::io::Write;

use crate::varint::{self, Cursor, DecodeError};

/// The first eight bytes of every trace file.
pub const MAGIC: [u8; 8] = *b"LKSTRACE";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// The first four bytes of every chunk.
pub const CHUNK_MAGIC: [u8; 4] = *b"LKCH";
/// Size of a chunk header in bytes.
pub const CHUNK_HEADER_LEN: usize = 28;
/// Largest uncompressed chunk payload a reader accepts (a writer never produces more).
pub const MAX_CHUNK_RAW: u32 = 64 << 20;
/// Largest file header body a reader accepts.
pub const MAX_HEADER_BODY: u32 = 1 << 20;

/// What a chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkKind {
    /// Static and bookkeeping records (modules, symbols, blocks, threads): stream 0.
    Meta = 1,
    /// Events of one OS thread (stream = OS thread index).
    Events = 2,
    /// The end record: the trace is complete.
    End = 3,
}

impl ChunkKind {
    pub fn from_u8(v: u8) -> Option<ChunkKind> {
        match v {
            1 => Some(ChunkKind::Meta),
            2 => Some(ChunkKind::Events),
            3 => Some(ChunkKind::End),
            _ => None,
        }
    }
}

/// How a chunk payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Raw = 0,
    Zstd = 1,
}

/// A decoded chunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    pub kind: ChunkKind,
    pub codec: Codec,
    pub stream: u32,
    pub seq: u32,
    pub raw_len: u32,
    pub stored_len: u32,
    pub crc: u32,
}

/// Why a chunk header or payload was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkError {
    /// Fewer bytes than a header or its payload remain: the file was cut here.
    Truncated,
    /// The bytes are not a chunk or the checksum does not match.
    Corrupt(String),
}

impl ChunkHeader {
    /// Parses the 28 header bytes (checksum not yet verified).
    pub fn parse(b: &[u8]) -> Result<ChunkHeader, ChunkError> {
        if b.len() < CHUNK_HEADER_LEN {
            return Err(ChunkError::Truncated);
        }
        if b[0..4] != CHUNK_MAGIC {
            return Err(ChunkError::Corrupt("bad chunk magic".into()));
        }
        let kind =
            ChunkKind::from_u8(b[4]).ok_or_else(|| ChunkError::Corrupt(format!("unknown chunk kind {}", b[4])))?;
        let codec = match b[5] {
            0 => Codec::Raw,
            1 => Codec::Zstd,
            c => return Err(ChunkError::Corrupt(format!("unknown chunk codec {c}"))),
        };
        let le = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        if b[6] != 0 || b[7] != 0 {
            return Err(ChunkError::Corrupt("reserved chunk flags are set".into()));
        }
        let h =
            ChunkHeader { kind, codec, stream: le(8), seq: le(12), raw_len: le(16), stored_len: le(20), crc: le(24) };
        if h.raw_len > MAX_CHUNK_RAW || h.stored_len > MAX_CHUNK_RAW + (1 << 16) {
            return Err(ChunkError::Corrupt(format!("implausible chunk length {} / {}", h.raw_len, h.stored_len)));
        }
        if h.codec == Codec::Raw && h.raw_len != h.stored_len {
            return Err(ChunkError::Corrupt("raw chunk with different stored length".into()));
        }
        Ok(h)
    }

    fn prefix(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[0..4].copy_from_slice(&CHUNK_MAGIC);
        b[4] = self.kind as u8;
        b[5] = self.codec as u8;
        b[8..12].copy_from_slice(&self.stream.to_le_bytes());
        b[12..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..20].copy_from_slice(&self.raw_len.to_le_bytes());
        b[20..24].copy_from_slice(&self.stored_len.to_le_bytes());
        b
    }

    /// The checksum of a header prefix and a stored payload.
    pub fn checksum(&self, stored: &[u8]) -> u32 {
        let mut h = crc32fast::Hasher::new();
        h.update(&self.prefix());
        h.update(stored);
        h.finalize()
    }

    /// Verifies the checksum and returns the uncompressed payload.
    pub fn decode_payload(&self, stored: &[u8]) -> Result<Vec<u8>, ChunkError> {
        if stored.len() != self.stored_len as usize {
            return Err(ChunkError::Truncated);
        }
        if self.checksum(stored) != self.crc {
            return Err(ChunkError::Corrupt("checksum mismatch".into()));
        }
        match self.codec {
            Codec::Raw => Ok(stored.to_vec()),
            Codec::Zstd => {
                thread_local! {
                    // One decompression context per thread: making one per chunk (thousands per pass over a
                    // trace) allocated and initialized its tables each time.
                    static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
                        const { std::cell::RefCell::new(None) };
                }
                let out = DCTX
                    .with(|d| {
                        let mut d = d.borrow_mut();
                        if d.is_none() {
                            *d = Some(zstd::bulk::Decompressor::new()?);
                        }
                        d.as_mut().expect("made above").decompress(stored, self.raw_len as usize)
                    })
                    .map_err(|e| ChunkError::Corrupt(format!("zstd: {e}")))?;
                if out.len() != self.raw_len as usize {
                    return Err(ChunkError::Corrupt("decompressed length differs from the header".into()));
                }
                Ok(out)
            }
        }
    }
}

/// The compression level that stores chunks uncompressed (codec 0): the fastest to write.
pub const STORE: i32 = 0;

/// Compresses `raw` (zstd at `level`, or stored raw when that is not smaller or `level` is [`STORE`]) and
/// returns the complete chunk bytes: header followed by the payload.
pub fn encode_chunk(kind: ChunkKind, stream: u32, seq: u32, raw: &[u8], level: i32) -> Vec<u8> {
    assert!(raw.len() <= MAX_CHUNK_RAW as usize, "chunk payload too large");
    let compressed = if raw.len() >= 64 && level != STORE { zstd::bulk::compress(raw, level).ok() } else { None };
    let (codec, stored): (Codec, &[u8]) = match &compressed {
        Some(c) if c.len() < raw.len() => (Codec::Zstd, c),
        _ => (Codec::Raw, raw),
    };
    encode_chunk_stored(kind, stream, seq, raw.len() as u32, codec, stored)
}

/// Encodes chunks with a reusable zstd context (cheaper than [`encode_chunk`] for many chunks).
pub struct ChunkEncoder {
    level: i32,
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

impl std::fmt::Debug for ChunkEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkEncoder").field("level", &self.level).finish()
    }
}

impl ChunkEncoder {
    pub fn new(level: i32) -> ChunkEncoder {
        let zstd = if level == STORE { None } else { zstd::bulk::Compressor::new(level).ok() };
        ChunkEncoder { level, zstd }
    }

    /// Like [`encode_chunk`].
    pub fn encode(&mut self, kind: ChunkKind, stream: u32, seq: u32, raw: &[u8]) -> Vec<u8> {
        assert!(raw.len() <= MAX_CHUNK_RAW as usize, "chunk payload too large");
        let compressed = match &mut self.zstd {
            Some(z) if raw.len() >= 64 => z.compress(raw).ok(),
            Some(_) => None,
            None => return encode_chunk(kind, stream, seq, raw, self.level),
        };
        match compressed {
            Some(c) if c.len() < raw.len() => encode_chunk_stored(kind, stream, seq, raw.len() as u32, Codec::Zstd, &c),
            _ => encode_chunk_stored(kind, stream, seq, raw.len() as u32, Codec::Raw, raw),
        }
    }
}

/// Builds the chunk bytes for an already-compressed payload.
pub fn encode_chunk_stored(
    kind: ChunkKind,
    stream: u32,
    seq: u32,
    raw_len: u32,
    codec: Codec,
    stored: &[u8],
) -> Vec<u8> {
    let mut h = ChunkHeader { kind, codec, stream, seq, raw_len, stored_len: stored.len() as u32, crc: 0 };
    h.crc = h.checksum(stored);
    let mut out = Vec::with_capacity(CHUNK_HEADER_LEN + stored.len());
    out.extend_from_slice(&h.prefix());
    out.extend_from_slice(&h.crc.to_le_bytes());
    out.extend_from_slice(stored);
    out
}

/// How the trace was made: the file header.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Header {
    /// Name and version of the tracer that wrote the file.
    pub tracer: String,
    /// The traced program as given on the command line.
    pub program: String,
    /// Its arguments (argv[1..]).
    pub args: Vec<String>,
    /// `--function NAME`: each invocation of NAME is one SIMT thread.
    pub function: Option<String>,
    /// `--per-iteration`: each iteration of NAME's outermost loop is one SIMT thread.
    pub per_iteration: bool,
    /// `--exclude NAME`: functions whose instructions are skipped.
    pub exclude: Vec<String>,
    /// Seconds since the Unix epoch when tracing started.
    pub created_unix: u64,
    /// Further key/value facts (forward compatible; unknown keys are kept).
    pub extra: Vec<(String, String)>,
}

impl Header {
    /// The complete header bytes: magic, version, flags, body length, body, checksum.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        varint::put_str(&mut body, &self.tracer);
        varint::put_str(&mut body, &self.program);
        varint::put(&mut body, self.args.len() as u64);
        for a in &self.args {
            varint::put_str(&mut body, a);
        }
        match &self.function {
            Some(f) => {
                body.push(1);
                varint::put_str(&mut body, f);
            }
            None => body.push(0),
        }
        body.push(u8::from(self.per_iteration));
        varint::put(&mut body, self.exclude.len() as u64);
        for e in &self.exclude {
            varint::put_str(&mut body, e);
        }
        varint::put(&mut body, self.created_unix);
        varint::put(&mut body, self.extra.len() as u64);
        for (k, v) in &self.extra {
            varint::put_str(&mut body, k);
            varint::put_str(&mut body, v);
        }
        let mut out = Vec::with_capacity(body.len() + 20);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses a header from the start of `data`; returns it and its length in bytes.
    pub fn decode(data: &[u8]) -> Result<(Header, usize), String> {
        if data.len() < 8 || data[..8] != MAGIC {
            if data.len() < 8 && MAGIC.starts_with(data) {
                return Err("the file is too short to be a lockstep trace (was the tracer killed at once?)".into());
            }
            return Err("not a lockstep trace (bad magic bytes)".into());
        }
        if data.len() < 16 {
            return Err("the trace header is truncated".into());
        }
        let version = u16::from_le_bytes([data[8], data[9]]);
        if version != VERSION {
            return Err(format!("unsupported trace format version {version} (this lockstep reads version {VERSION})"));
        }
        let body_len = u32::from_le_bytes([data[12], data[13], data[14], data[15]]);
        if body_len > MAX_HEADER_BODY {
            return Err("the trace header is corrupted (implausible length)".into());
        }
        let end = 16 + body_len as usize;
        if data.len() < end + 4 {
            return Err("the trace header is truncated".into());
        }
        let crc = u32::from_le_bytes([data[end], data[end + 1], data[end + 2], data[end + 3]]);
        if crc32fast::hash(&data[..end]) != crc {
            return Err("the trace header is corrupted (checksum mismatch)".into());
        }
        let h = Self::decode_body(&data[16..end]).map_err(|e| format!("the trace header is corrupted ({})", e.0))?;
        Ok((h, end + 4))
    }

    fn decode_body(body: &[u8]) -> Result<Header, DecodeError> {
        let mut c = Cursor::new(body);
        let tracer = c.string()?;
        let program = c.string()?;
        let nargs = c.varint()?;
        let mut args = Vec::new();
        for _ in 0..nargs {
            args.push(c.string()?);
        }
        let function = if c.u8()? != 0 { Some(c.string()?) } else { None };
        let per_iteration = c.u8()? != 0;
        let nex = c.varint()?;
        let mut exclude = Vec::new();
        for _ in 0..nex {
            exclude.push(c.string()?);
        }
        let created_unix = c.varint()?;
        let nextra = c.varint()?;
        let mut extra = Vec::new();
        for _ in 0..nextra {
            extra.push((c.string()?, c.string()?));
        }
        Ok(Header { tracer, program, args, function, per_iteration, exclude, created_unix, extra })
    }

    /// Writes the header to `w`.
    pub fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(&self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = Header {
            tracer: "t 1".into(),
            program: "/bin/x".into(),
            args: vec!["a".into(), "b c".into()],
            function: Some("f".into()),
            per_iteration: true,
            exclude: vec!["g".into()],
            created_unix: 17,
            extra: vec![("k".into(), "v".into())],
        };
        let bytes = h.encode();
        let (back, n) = Header::decode(&bytes).unwrap();
        assert_eq!(back, h);
        assert_eq!(n, bytes.len());
        for cut in 0..bytes.len() {
            assert!(Header::decode(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn chunk_round_trip() {
        let raw: Vec<u8> = (0..1000u32).map(|i| (i % 7) as u8).collect();
        let bytes = encode_chunk(ChunkKind::Events, 3, 9, &raw, 3);
        let h = ChunkHeader::parse(&bytes).unwrap();
        assert_eq!((h.kind, h.stream, h.seq, h.raw_len), (ChunkKind::Events, 3, 9, 1000));
        assert_eq!(h.decode_payload(&bytes[CHUNK_HEADER_LEN..]).unwrap(), raw);
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(h.decode_payload(&bad[CHUNK_HEADER_LEN..]).is_err());
    }
}
