//! Crash-safe buffers and the trace file.
//!
//! Every buffer (one per OS thread, one for the meta stream) lives in a shared mapping of a spill file, so
//! what was recorded but not yet written as a chunk survives a killed process; `trace::spill::recover` (run by
//! `lockstep trace` after QEMU died) appends it. Writing a chunk happens under the file lock, meta first.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use memmap2::MmapMut;
use trace::spill::{SpillHeader, SPILL_HEADER_LEN};
use trace::{ChunkEncoder, ChunkKind, Sink};

/// Extra room past the flush threshold: a block's events are always appended whole before the owner checks
/// whether to flush.
pub const HEADROOM: usize = 128 << 10;

/// Mapped bytes past a buffer's capacity, so that a write of up to 16 bytes at any length up to the capacity
/// stays inside the mapping ([`SpillBuf::put_words`]).
const SLACK: usize = 20;

/// A buffer in a shared file mapping: a 64-byte [`SpillHeader`], then the bytes.
#[derive(Debug)]
pub struct SpillBuf {
    map: MmapMut,
    pub path: PathBuf,
    len: usize,
    cap: usize,
    pub seq: u32,
    pub kind: ChunkKind,
    pub stream: u32,
    /// Bytes that did not fit (never expected; counted rather than crashing the traced program).
    pub dropped: u64,
}

impl SpillBuf {
    pub fn create(dir: &Path, name: &str, kind: ChunkKind, stream: u32, cap: usize) -> io::Result<SpillBuf> {
        let path = dir.join(name);
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path)?;
        file.set_len((SPILL_HEADER_LEN + cap + SLACK) as u64)?;
        // SAFETY: mmap is FFI. The file was just created by this process and is only ever resized here;
        // nothing else truncates it while the mapping lives (the supervisor reads it after we are gone).
        let map = unsafe { MmapMut::map_mut(&file)? };
        let mut b = SpillBuf { map, path, len: 0, cap, seq: 0, kind, stream, dropped: 0 };
        b.write_header(0, false);
        Ok(b)
    }

    fn write_header(&mut self, insns: u64, finished: bool) {
        let h =
            SpillHeader { kind: self.kind, stream: self.stream, seq: self.seq, len: self.len as u32, insns, finished };
        h.write(&mut self.map[..SPILL_HEADER_LEN]);
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn data(&self) -> &[u8] {
        &self.map[SPILL_HEADER_LEN..SPILL_HEADER_LEN + self.len]
    }

    /// Publishes the progress counter (instructions executed by the owning thread).
    #[inline]
    pub fn set_insns(&mut self, insns: u64) {
        if let Some(h) = self.map.get_mut(24..32) {
            h.copy_from_slice(&insns.to_le_bytes());
        }
    }

    /// The buffered bytes became chunk `seq`: start the next one.
    pub fn consumed(&mut self) {
        self.len = 0;
        self.seq += 1;
        self.map[16..20].copy_from_slice(&self.seq.to_le_bytes());
        self.map[20..24].copy_from_slice(&0u32.to_le_bytes());
    }

    /// Nothing is left to recover from this buffer.
    pub fn finish(&mut self, insns: u64) {
        self.write_header(insns, true);
    }
}

impl SpillBuf {
    /// Publishes the length of the valid bytes, for a supervisor reading the file after a crash (done once
    /// per block and at system calls: a crash loses at most the current block's events).
    #[inline(always)]
    pub fn publish(&mut self) {
        // SAFETY: the mapping is at least SPILL_HEADER_LEN (64) bytes long; bytes 20..24 are the header's
        // length field. An unaligned store: the map's start is page-aligned, so it is aligned anyway.
        unsafe { (self.map.as_mut_ptr().add(20) as *mut u32).write_unaligned((self.len as u32).to_le()) }
    }

    /// Appends the low `n` bytes (`n <= 16`) of `lo` then `hi`, little-endian: two unconditional 8-byte stores
    /// (the mapping has slack past `cap`), then the length advances by `n`.
    #[inline(always)]
    pub fn put_words(&mut self, lo: u64, hi: u64, n: usize) {
        debug_assert!(n <= 16);
        if self.len + n > self.cap {
            self.dropped += n as u64;
            return;
        }
        // SAFETY: `len + n <= cap` and the mapping is SPILL_HEADER_LEN + cap + SLACK bytes long, so the 16
        // bytes from SPILL_HEADER_LEN + len are inside it (len <= cap). Only this thread writes the buffer.
        unsafe {
            let p = self.map.as_mut_ptr().add(SPILL_HEADER_LEN + self.len);
            (p as *mut u64).write_unaligned(lo.to_le());
            (p.add(8) as *mut u64).write_unaligned(hi.to_le());
        }
        self.len += n;
    }
}

impl Sink for SpillBuf {
    fn put_bytes(&mut self, b: &[u8]) {
        let at = SPILL_HEADER_LEN + self.len;
        if self.len + b.len() > self.cap {
            self.dropped += b.len() as u64;
            return;
        }
        self.map[at..at + b.len()].copy_from_slice(b);
        self.len += b.len();
    }

    #[inline]
    fn put_u128(&mut self, v: u128, n: usize) {
        self.put_words(v as u64, (v >> 64) as u64, n);
    }
}

/// The trace file, appended to under a lock.
#[derive(Debug)]
pub struct TraceFile {
    file: File,
    enc: ChunkEncoder,
    /// Bytes written so far.
    pub written: u64,
}

impl TraceFile {
    pub fn create(path: &Path, header: &trace::Header, level: i32) -> io::Result<TraceFile> {
        let mut file = OpenOptions::new().write(true).create(true).truncate(true).open(path)?;
        let h = header.encode();
        file.write_all(&h)?;
        Ok(TraceFile { file, enc: ChunkEncoder::new(level), written: h.len() as u64 })
    }

    /// Appends to a file that already holds a header.
    pub fn append(file: File, level: i32) -> TraceFile {
        let written = file.metadata().map_or(0, |m| m.len());
        TraceFile { file, enc: ChunkEncoder::new(level), written }
    }

    /// Writes `buf`'s bytes as its next chunk and empties it.
    pub fn write_buf(&mut self, buf: &mut SpillBuf) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        buf.publish();
        let chunk = self.enc.encode(buf.kind, buf.stream, buf.seq, buf.data());
        self.file.write_all(&chunk)?;
        self.written += chunk.len() as u64;
        buf.consumed();
        Ok(())
    }

    /// Writes a chunk encoded by the caller (outside the lock) from `buf`, and empties `buf`.
    pub fn write_encoded(&mut self, chunk: &[u8], buf: &mut SpillBuf) -> io::Result<()> {
        self.file.write_all(chunk)?;
        self.written += chunk.len() as u64;
        buf.consumed();
        Ok(())
    }

    /// Writes an already-encoded chunk payload read back from a spill file.
    pub fn write_raw(&mut self, kind: ChunkKind, stream: u32, seq: u32, data: &[u8]) -> io::Result<()> {
        let chunk = self.enc.encode(kind, stream, seq, data);
        self.file.write_all(&chunk)?;
        self.written += chunk.len() as u64;
        Ok(())
    }

    pub fn write_end(&mut self, end: &trace::EndRecord) -> io::Result<()> {
        self.write_raw(ChunkKind::End, 0, 0, &end.encode())?;
        self.file.sync_all()
    }
}
