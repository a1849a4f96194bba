//! A straightforward trace writer with per-stream buffers (tests, tools, converters). The QEMU plugin uses the
//! same building blocks (`encode_chunk`, `EventEncoder`, `MetaRecord::encode`) with its own crash-safe buffers.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::event::{Event, EventEncoder};
use crate::format::{encode_chunk, ChunkKind, Header};
use crate::meta::{EndRecord, MetaRecord};

/// Default uncompressed size at which a stream buffer becomes a chunk.
pub const DEFAULT_CHUNK_BYTES: usize = 256 << 10;

#[derive(Debug, Default)]
struct StreamState {
    buf: Vec<u8>,
    seq: u32,
    enc: EventEncoder,
    first_insn: u32,
}

/// Writes a trace: header first, then meta and event chunks as buffers fill, then the end record.
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: W,
    meta: Vec<u8>,
    meta_seq: u32,
    streams: BTreeMap<u32, StreamState>,
    block_first: Vec<u32>,
    next_insn: u32,
    chunk_bytes: usize,
    level: i32,
    insns: u64,
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut out: W, header: &Header) -> io::Result<Self> {
        header.write_to(&mut out)?;
        Ok(TraceWriter {
            out,
            meta: Vec::new(),
            meta_seq: 0,
            streams: BTreeMap::new(),
            block_first: Vec::new(),
            next_insn: 0,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            level: 3,
            insns: 0,
        })
    }

    /// Sets the uncompressed chunk size (small values make many chunks; useful in tests).
    pub fn with_chunk_bytes(mut self, n: usize) -> Self {
        self.chunk_bytes = n.max(1);
        self
    }

    /// Adds a meta record. Block ids must be given in order 0, 1, 2, ...
    pub fn meta(&mut self, rec: &MetaRecord) {
        if let MetaRecord::Block(b) = rec {
            debug_assert_eq!(b.id as usize, self.block_first.len());
            self.block_first.push(self.next_insn);
            self.next_insn += b.insns.len() as u32;
        }
        rec.encode(&mut self.meta);
    }

    /// Where the next event of OS stream `os` will be: (chunk sequence number, offset in its payload). A
    /// `SimtStart` record takes these values before its `SegmentStart` event is written.
    pub fn position(&self, os: u32) -> (u32, u32) {
        self.streams.get(&os).map_or((0, 0), |s| (s.seq, s.buf.len() as u32))
    }

    /// Appends an event to OS stream `os`. `insns` is added to the instruction total for block events.
    pub fn event(&mut self, os: u32, e: &Event) -> io::Result<()> {
        let s = self.streams.entry(os).or_default();
        match *e {
            Event::Block { tb } | Event::PartialBlock { tb, .. } => {
                s.first_insn = self.block_first.get(tb as usize).copied().unwrap_or(0);
            }
            _ => {}
        }
        s.enc.event(&mut s.buf, e, s.first_insn);
        if s.buf.len() >= self.chunk_bytes && !matches!(e, Event::SegmentStart { .. }) {
            self.flush_stream(os)?;
        }
        Ok(())
    }

    /// Counts instructions for the end record.
    pub fn add_insns(&mut self, n: u64) {
        self.insns += n;
    }

    fn flush_meta(&mut self) -> io::Result<()> {
        if !self.meta.is_empty() {
            let c = encode_chunk(ChunkKind::Meta, 0, self.meta_seq, &self.meta, self.level);
            self.out.write_all(&c)?;
            self.meta_seq += 1;
            self.meta.clear();
        }
        Ok(())
    }

    fn flush_stream(&mut self, os: u32) -> io::Result<()> {
        self.flush_meta()?;
        let Some(s) = self.streams.get_mut(&os) else { return Ok(()) };
        if !s.buf.is_empty() {
            let c = encode_chunk(ChunkKind::Events, os, s.seq, &s.buf, self.level);
            self.out.write_all(&c)?;
            s.seq += 1;
            s.buf.clear();
        }
        Ok(())
    }

    /// Writes every buffer out.
    pub fn flush(&mut self) -> io::Result<()> {
        self.flush_meta()?;
        let ids: Vec<u32> = self.streams.keys().copied().collect();
        for os in ids {
            self.flush_stream(os)?;
        }
        self.out.flush()
    }

    /// Flushes everything, writes the end record and returns the output.
    pub fn finish(mut self, mut end: EndRecord) -> io::Result<W> {
        self.flush()?;
        if end.insns == 0 {
            end.insns = self.insns;
        }
        let c = encode_chunk(ChunkKind::End, 0, 0, &end.encode(), self.level);
        self.out.write_all(&c)?;
        self.out.flush()?;
        Ok(self.out)
    }
}
