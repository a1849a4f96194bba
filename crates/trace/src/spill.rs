//! Spill files: the tracer's unflushed buffers, kept in shared file mappings so that they survive the traced
//! process when it is killed. After the process died, [`recover`] appends what they hold to the trace.
//!
//! Layout of a spill file: a 64-byte header, then the buffer.
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `LKSPILL1` |
//! | 8 | 4 | chunk kind of the buffered bytes (1 meta, 2 events) |
//! | 12 | 4 | stream |
//! | 16 | 4 | sequence number the buffered bytes will get as a chunk |
//! | 20 | 4 | number of valid buffered bytes |
//! | 24 | 8 | instructions this OS thread executed so far (progress) |
//! | 32 | 8 | flags: bit 0 = finished (nothing left to recover) |

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::format::{encode_chunk, ChunkKind};
use crate::meta::EndRecord;
use crate::reader::{scan_chunks, TraceError};

pub const SPILL_MAGIC: [u8; 8] = *b"LKSPILL1";
pub const SPILL_HEADER_LEN: usize = 64;

/// The header fields of a spill file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpillHeader {
    pub kind: ChunkKind,
    pub stream: u32,
    pub seq: u32,
    pub len: u32,
    pub insns: u64,
    pub finished: bool,
}

impl SpillHeader {
    pub fn write(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&SPILL_MAGIC);
        b[8..12].copy_from_slice(&(self.kind as u32).to_le_bytes());
        b[12..16].copy_from_slice(&self.stream.to_le_bytes());
        b[16..20].copy_from_slice(&self.seq.to_le_bytes());
        b[20..24].copy_from_slice(&self.len.to_le_bytes());
        b[24..32].copy_from_slice(&self.insns.to_le_bytes());
        b[32..40].copy_from_slice(&u64::from(self.finished).to_le_bytes());
    }

    pub fn parse(b: &[u8]) -> Option<SpillHeader> {
        if b.len() < SPILL_HEADER_LEN || b[0..8] != SPILL_MAGIC {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some(SpillHeader {
            kind: ChunkKind::from_u8(u32_at(8) as u8)?,
            stream: u32_at(12),
            seq: u32_at(16),
            len: u32_at(20),
            insns: u64_at(24),
            finished: u64_at(32) & 1 != 0,
        })
    }
}

/// Sum of the instruction counters of all spill files in `dir` (progress while tracing).
pub fn progress(dir: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    let mut total = 0;
    for e in rd.flatten() {
        let mut h = [0u8; SPILL_HEADER_LEN];
        if let Ok(mut f) = File::open(e.path()) {
            if f.read_exact(&mut h).is_ok() {
                if let Some(h) = SpillHeader::parse(&h) {
                    total += h.insns;
                }
            }
        }
    }
    total
}

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Chunks appended from spill buffers.
    pub chunks: usize,
    /// Bytes cut from the end of the trace (a chunk the tracer was writing when it died).
    pub cut_bytes: u64,
    /// The trace already had an end record: nothing was done.
    pub already_complete: bool,
}

/// Completes the trace at `trace` after the tracer's process died: cuts a partly written last chunk, appends
/// the buffered bytes of every spill file in `spill_dir` (meta first, then each OS thread's events) and an end
/// record. Spill buffers whose chunk is already in the file are skipped.
pub fn recover(trace: &Path, spill_dir: &Path, mut end: EndRecord) -> Result<Recovery, TraceError> {
    let scan = scan_chunks(trace)?;
    let mut rec = Recovery::default();
    if scan.has_end {
        rec.already_complete = true;
        return Ok(rec);
    }
    let mut f = OpenOptions::new().read(true).write(true).open(trace).map_err(|e| TraceError::io(trace, e))?;
    let len = f.seek(SeekFrom::End(0)).map_err(|e| TraceError::io(trace, e))?;
    if scan.valid_len < len {
        rec.cut_bytes = len - scan.valid_len;
        f.set_len(scan.valid_len).map_err(|e| TraceError::io(trace, e))?;
    }
    f.seek(SeekFrom::Start(scan.valid_len)).map_err(|e| TraceError::io(trace, e))?;
    let mut spills = Vec::new();
    if let Ok(rd) = fs::read_dir(spill_dir) {
        for e in rd.flatten() {
            let Ok(data) = fs::read(e.path()) else { continue };
            let Some(h) = SpillHeader::parse(&data) else { continue };
            spills.push((h, data));
        }
    }
    spills.sort_by_key(|(h, _)| (h.kind, h.stream));
    for (h, data) in &spills {
        if h.finished || h.len == 0 || h.kind == ChunkKind::End {
            continue;
        }
        let next = scan.next_seq.get(&(h.kind, h.stream)).copied().unwrap_or(0);
        if h.seq != next {
            continue; // already written (the tracer died between writing the chunk and clearing its buffer)
        }
        let end_pos = SPILL_HEADER_LEN + h.len as usize;
        let Some(body) = data.get(SPILL_HEADER_LEN..end_pos) else { continue };
        let chunk = encode_chunk(h.kind, h.stream, h.seq, body, 3);
        f.write_all(&chunk).map_err(|e| TraceError::io(trace, e))?;
        rec.chunks += 1;
    }
    end.recovered = true;
    if end.insns == 0 {
        end.insns = spills.iter().filter(|(h, _)| h.kind == ChunkKind::Events).map(|(h, _)| h.insns).sum();
    }
    let chunk = encode_chunk(ChunkKind::End, 0, 0, &end.encode(), 3);
    f.write_all(&chunk).map_err(|e| TraceError::io(trace, e))?;
    f.sync_all().map_err(|e| TraceError::io(trace, e))?;
    Ok(rec)
}
