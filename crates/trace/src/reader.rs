//! Reading traces: validation of the container, the static section, and streaming event iterators.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::event::{BlockShape, Event, EventDecoder, Visitor};
use crate::format::{ChunkError, ChunkHeader, ChunkKind, Header, CHUNK_HEADER_LEN, MAX_HEADER_BODY};
use crate::meta::{Block, EndRecord, MetaRecord, Module, SimtEnd, SimtStart, Symbol, ThreadEnd, ThreadInfo};
use crate::varint::Cursor;

/// A trace that cannot be read at all (I/O error, not a trace, corrupted header), or an event stream that
/// cannot be decoded further.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError(pub String);

impl TraceError {
    pub fn io(path: &Path, e: io::Error) -> TraceError {
        TraceError(format!("{}: {e}", path.display()))
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TraceError {}

/// Whether the whole trace could be read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// Every chunk is valid and the end record is present.
    Complete,
    /// The trace is a valid prefix: `valid_chunks` chunks (`valid_bytes` bytes) were read; `reason` says what
    /// follows them.
    Truncated { valid_chunks: usize, valid_bytes: u64, reason: String },
}

impl Status {
    pub fn is_complete(&self) -> bool {
        matches!(self, Status::Complete)
    }
}

/// Where an event chunk lies in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkRef {
    pub header: ChunkHeader,
    /// File offset of the stored payload.
    pub offset: u64,
}

/// A SIMT thread: where its segment starts and, once it ended, its instruction count.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SimtThread {
    pub start: SimtStart,
    pub end: Option<SimtEnd>,
}

/// Result of validating the chunk sequence of a file.
#[derive(Debug, Clone, Default)]
pub struct ChunkScan {
    pub header_len: u64,
    /// Length of the valid prefix (header plus valid chunks).
    pub valid_len: u64,
    pub valid_chunks: usize,
    /// Next expected sequence number per (kind, stream).
    pub next_seq: HashMap<(ChunkKind, u32), u32>,
    pub has_end: bool,
    /// Why reading stopped before the end of the file, if it did.
    pub problem: Option<String>,
}

/// Validates the header and every chunk's framing and checksum, without decoding payloads.
pub fn scan_chunks(path: &Path) -> Result<ChunkScan, TraceError> {
    let mut scan = ChunkScan::default();
    walk(path, &mut scan, |_, _, _| Ok(()))?;
    Ok(scan)
}

fn read_header(r: &mut impl Read, path: &Path) -> Result<(Header, u64), TraceError> {
    let mut first = vec![0u8; 16];
    let n = read_full(r, &mut first).map_err(|e| TraceError::io(path, e))?;
    first.truncate(n);
    if n < 16 {
        let why = Header::decode(&first).err().unwrap_or_else(|| "the trace header is truncated".into());
        return Err(TraceError(format!("{}: {why}", path.display())));
    }
    let body_len = u32::from_le_bytes([first[12], first[13], first[14], first[15]]);
    if body_len > MAX_HEADER_BODY {
        Header::decode(&first).map_err(|e| TraceError(format!("{}: {e}", path.display())))?;
        return Err(TraceError(format!("{}: the trace header is corrupted (implausible length)", path.display())));
    }
    let mut rest = vec![0u8; body_len as usize + 4];
    let m = read_full(r, &mut rest).map_err(|e| TraceError::io(path, e))?;
    first.extend_from_slice(&rest[..m]);
    let (h, len) = Header::decode(&first).map_err(|e| TraceError(format!("{}: {e}", path.display())))?;
    Ok((h, len as u64))
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Walks the chunks of a file, calling `f(index, header, payload-if-meta-or-end)`; `f` may reject a chunk.
fn walk(
    path: &Path,
    scan: &mut ChunkScan,
    mut f: impl FnMut(usize, &ChunkRef, Option<Vec<u8>>) -> Result<(), String>,
) -> Result<Header, TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| TraceError::io(path, e))?.len();
    let mut r = BufReader::with_capacity(1 << 16, file);
    let (header, header_len) = read_header(&mut r, path)?;
    scan.header_len = header_len;
    scan.valid_len = header_len;
    let mut pos = header_len;
    let mut index = 0usize;
    let mut payload = Vec::new();
    loop {
        if pos == file_len {
            break;
        }
        if scan.has_end {
            scan.problem = Some(format!("{} bytes of unexpected data follow the end record", file_len - pos));
            break;
        }
        let mut hb = [0u8; CHUNK_HEADER_LEN];
        let n = read_full(&mut r, &mut hb).map_err(|e| TraceError::io(path, e))?;
        let header = match ChunkHeader::parse(&hb[..n]) {
            Ok(h) => h,
            Err(ChunkError::Truncated) => {
                scan.problem = Some(format!("chunk {index} is cut off in its header"));
                break;
            }
            Err(ChunkError::Corrupt(why)) => {
                scan.problem = Some(format!("chunk {index} at byte {pos} is corrupted ({why})"));
                break;
            }
        };
        let stored = header.stored_len as u64;
        if pos + CHUNK_HEADER_LEN as u64 + stored > file_len {
            scan.problem =
                Some(format!("chunk {index} is cut off ({} of its {stored} bytes present)", file_len - pos - 28));
            break;
        }
        payload.resize(stored as usize, 0);
        r.read_exact(&mut payload).map_err(|e| TraceError::io(path, e))?;
        if header.checksum(&payload) != header.crc {
            scan.problem = Some(format!("chunk {index} at byte {pos} is corrupted (checksum mismatch)"));
            break;
        }
        let key = (header.kind, header.stream);
        let expect = scan.next_seq.get(&key).copied().unwrap_or(0);
        if header.seq != expect {
            scan.problem = Some(format!(
                "chunk {index} at byte {pos} is out of sequence (stream {} chunk {}, expected {expect})",
                header.stream, header.seq
            ));
            break;
        }
        let cref = ChunkRef { header, offset: pos + CHUNK_HEADER_LEN as u64 };
        let decoded = if header.kind != ChunkKind::Events {
            match header.decode_payload(&payload) {
                Ok(d) => Some(d),
                Err(ChunkError::Corrupt(why)) => {
                    scan.problem = Some(format!("chunk {index} at byte {pos} is corrupted ({why})"));
                    break;
                }
                Err(ChunkError::Truncated) => {
                    scan.problem = Some(format!("chunk {index} is cut off"));
                    break;
                }
            }
        } else {
            None
        };
        if header.kind == ChunkKind::End {
            scan.has_end = true;
        }
        if let Err(why) = f(index, &cref, decoded) {
            scan.problem = Some(format!("chunk {index} at byte {pos}: {why}"));
            scan.has_end = false;
            break;
        }
        scan.next_seq.insert(key, expect + 1);
        pos += CHUNK_HEADER_LEN as u64 + stored;
        index += 1;
        scan.valid_len = pos;
        scan.valid_chunks = index;
    }
    Ok(header)
}

/// An opened trace: header, static section, thread tables, and the index of event chunks.
#[derive(Debug)]
pub struct Trace {
    pub path: PathBuf,
    pub header: Header,
    pub modules: Vec<Module>,
    pub symbols: Vec<Symbol>,
    pub blocks: Vec<Block>,
    pub threads: Vec<ThreadInfo>,
    pub thread_ends: Vec<ThreadEnd>,
    pub simt: Vec<SimtThread>,
    /// `--per-iteration` loop headers: (function symbol id, header address).
    pub loops: Vec<(u32, u64)>,
    pub notes: Vec<String>,
    pub end: Option<EndRecord>,
    pub status: Status,
    /// File size in bytes.
    pub file_len: u64,
    /// Bytes of the valid prefix.
    pub valid_len: u64,
    shapes: Vec<BlockShape>,
    /// Event chunks of each OS thread in sequence order.
    streams: BTreeMap<u32, Vec<ChunkRef>>,
    /// Recently decompressed event chunks: a chunk holds many SIMT threads (one per loop iteration with
    /// `--per-iteration`), each read by a stream of its own.
    chunk_cache: Mutex<ChunkCache>,
}

/// The last few decompressed chunks, by file offset, most recently used last.
#[derive(Debug, Default)]
struct ChunkCache {
    entries: Vec<(u64, Arc<Vec<u8>>)>,
}

/// Chunks the cache keeps: enough for the streams of the warps being replayed on every core at once.
const CACHED_CHUNKS: usize = 64;

impl ChunkCache {
    fn get(&mut self, offset: u64) -> Option<Arc<Vec<u8>>> {
        let i = self.entries.iter().rposition(|e| e.0 == offset)?;
        let e = self.entries.remove(i);
        let data = e.1.clone();
        self.entries.push(e);
        Some(data)
    }

    fn put(&mut self, offset: u64, data: Arc<Vec<u8>>) {
        if self.entries.iter().any(|e| e.0 == offset) {
            return;
        }
        if self.entries.len() >= CACHED_CHUNKS {
            self.entries.remove(0);
        }
        self.entries.push((offset, data));
    }
}

impl Trace {
    /// Opens and validates a trace. Fails only when nothing can be read (no file, not a trace, corrupted
    /// header); a damaged or cut-off body yields a trace whose `status` says where reading stopped.
    pub fn open(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
        let path = path.as_ref();
        let file_len = std::fs::metadata(path).map_err(|e| TraceError::io(path, e))?.len();
        let mut t = Trace {
            path: path.to_path_buf(),
            header: Header::default(),
            modules: Vec::new(),
            symbols: Vec::new(),
            blocks: Vec::new(),
            threads: Vec::new(),
            thread_ends: Vec::new(),
            simt: Vec::new(),
            loops: Vec::new(),
            notes: Vec::new(),
            end: None,
            status: Status::Complete,
            file_len,
            valid_len: 0,
            shapes: Vec::new(),
            streams: BTreeMap::new(),
            chunk_cache: Mutex::default(),
        };
        let mut scan = ChunkScan::default();
        let mut next_insn: u32 = 0;
        let header = walk(path, &mut scan, |_, c, payload| match c.header.kind {
            ChunkKind::Events => {
                t.streams.entry(c.header.stream).or_default().push(*c);
                Ok(())
            }
            ChunkKind::End => {
                t.end = Some(EndRecord::decode(payload.as_deref().unwrap_or(&[])).map_err(|e| e.0.to_string())?);
                Ok(())
            }
            ChunkKind::Meta => {
                let data = payload.unwrap_or_default();
                let mut cur = Cursor::new(&data);
                while !cur.is_empty() {
                    let rec =
                        MetaRecord::decode(&mut cur, next_insn).map_err(|e| format!("malformed record: {}", e.0))?;
                    t.add_meta(rec, &mut next_insn)?;
                }
                Ok(())
            }
        })?;
        t.header = header;
        t.valid_len = scan.valid_len;
        t.status = match (&scan.problem, scan.has_end) {
            (None, true) => Status::Complete,
            (Some(p), _) => Status::Truncated {
                valid_chunks: scan.valid_chunks,
                valid_bytes: scan.valid_len,
                reason: format!("{p}; the trace is read up to chunk {}", scan.valid_chunks),
            },
            (None, false) => Status::Truncated {
                valid_chunks: scan.valid_chunks,
                valid_bytes: scan.valid_len,
                reason: format!(
                    "the trace ends after chunk {} without an end record: the traced program or the tracer was \
                     killed before it finished",
                    scan.valid_chunks
                ),
            },
        };
        if !t.status.is_complete() {
            t.end = None;
        }
        Ok(t)
    }

    fn add_meta(&mut self, rec: MetaRecord, next_insn: &mut u32) -> Result<(), String> {
        match rec {
            MetaRecord::Module(m) => {
                if m.id as usize != self.modules.len() {
                    return Err(format!("module id {} out of order", m.id));
                }
                self.modules.push(m);
            }
            MetaRecord::Symbol(s) => {
                if s.id as usize != self.symbols.len() {
                    return Err(format!("symbol id {} out of order", s.id));
                }
                self.symbols.push(s);
            }
            MetaRecord::Block(b) => {
                if b.id as usize != self.blocks.len() {
                    return Err(format!("block id {} out of order", b.id));
                }
                let len = b.insns.len() as u32;
                self.shapes.push(BlockShape { first_insn: b.first_insn, len });
                *next_insn = next_insn.wrapping_add(len);
                self.blocks.push(b);
            }
            MetaRecord::Thread(t) => self.threads.push(t),
            MetaRecord::ThreadEnd(t) => self.thread_ends.push(t),
            MetaRecord::SimtStart(s) => {
                if s.simt as usize != self.simt.len() {
                    return Err(format!("SIMT thread id {} out of order", s.simt));
                }
                self.simt.push(SimtThread { start: s, end: None });
            }
            MetaRecord::SimtEnd(e) => {
                let Some(t) = self.simt.get_mut(e.simt as usize) else {
                    return Err(format!("end of unknown SIMT thread {}", e.simt));
                };
                t.end = Some(e);
            }
            MetaRecord::LoopHeader { function, addr } => self.loops.push((function, addr)),
            MetaRecord::Note(n) => self.notes.push(n),
        }
        Ok(())
    }

    /// OS thread stream numbers that have events.
    pub fn os_streams(&self) -> impl Iterator<Item = u32> + '_ {
        self.streams.keys().copied()
    }

    /// Number of event chunks of an OS thread.
    pub fn chunk_count(&self, os: u32) -> usize {
        self.streams.get(&os).map_or(0, Vec::len)
    }

    /// Shape of block `tb`, if defined.
    pub fn shape(&self, tb: u32) -> Option<BlockShape> {
        self.shapes.get(tb as usize).copied()
    }

    /// All events of OS thread `os`, in order (every SIMT segment of that thread).
    pub fn os_events(&self, os: u32) -> EventStream<'_> {
        EventStream::new(self, self.streams.get(&os).map_or(&[][..], Vec::as_slice), 0, 0, None)
    }

    /// The events of one SIMT thread: from its `SegmentStart` to its `SegmentEnd` (inclusive), or to the end of
    /// the valid prefix.
    pub fn simt_events(&self, simt: u32) -> Result<EventStream<'_>, TraceError> {
        let t = self.simt.get(simt as usize).ok_or_else(|| TraceError(format!("no SIMT thread {simt}")))?;
        let chunks = self.streams.get(&t.start.os).map_or(&[][..], Vec::as_slice);
        Ok(EventStream::new(self, chunks, t.start.chunk_seq as usize, t.start.offset as usize, Some(simt)))
    }

    /// SIMT thread ids ordered as the analyzer numbers them: by launch ([`Trace::simt_launches`]), then by
    /// OS-thread creation order, then by start order within the OS thread.
    pub fn simt_order(&self) -> Vec<u32> {
        let rank: HashMap<u32, u32> = self.threads.iter().map(|t| (t.os, t.rank)).collect();
        let launch = self.simt_launches();
        let mut ids: Vec<u32> = (0..self.simt.len() as u32).collect();
        ids.sort_by_key(|&i| {
            let s = &self.simt[i as usize].start;
            (launch[i as usize], rank.get(&s.os).copied().unwrap_or(u32::MAX), s.os, s.index_in_os)
        });
        ids
    }

    /// Per SIMT thread, the "kernel launch" it belongs to, as a GPU would group the same work; warps do not
    /// mix launches. With `--per-iteration`, the k-th invocation of a loop's function on each OS thread is
    /// launch k (an OpenMP parallel loop run once per host-loop step: each run is one launch, its iterations
    /// spread over the team). Invocations of an OpenMP outlined function (`f._omp_fn.N`, an SPMD-style port
    /// with one OpenMP thread per CUDA thread) are numbered the same way, so that launch k's lanes are the
    /// team's threads in creation order (libgomp's thread numbers; the initial thread is number 0). Any other
    /// SIMT thread is in launch 0.
    pub fn simt_launches(&self) -> Vec<u32> {
        let mut launch = vec![0u32; self.simt.len()];
        let mut by_os: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, s) in self.simt.iter().enumerate() {
            by_os.entry(s.start.os).or_default().push(i as u32);
        }
        let openmp = |f: u32| self.symbols.get(f as usize).is_some_and(|s| s.name.contains("._omp_fn."));
        for ids in by_os.values_mut() {
            ids.sort_by_key(|&i| self.simt[i as usize].start.index_in_os);
            let mut next = 0u32;
            for &i in ids.iter() {
                let s = &self.simt[i as usize].start;
                let per_iteration = s.iteration != u64::MAX;
                if !per_iteration && !openmp(s.function) {
                    continue;
                }
                if per_iteration && s.iteration != 0 {
                    launch[i as usize] = next.saturating_sub(1);
                } else {
                    launch[i as usize] = next;
                    next += 1;
                }
            }
        }
        launch
    }

    /// The symbol whose range contains `addr` (the nearest one below it in the same module when sizes are
    /// unknown). Uses a sorted index built by [`Trace::symbol_index`].
    pub fn symbol_index(&self) -> SymbolIndex {
        SymbolIndex::new(self)
    }
}

/// Address → function lookup over a trace's symbols.
#[derive(Debug, Clone)]
pub struct SymbolIndex {
    /// (addr, end or 0, module, symbol id), sorted by address; aliases keep the first (preferred) name.
    entries: Vec<(u64, u64, u32, u32)>,
    modules: Vec<(u64, u64, u32)>,
}

impl SymbolIndex {
    fn new(t: &Trace) -> SymbolIndex {
        let mut entries: Vec<(u64, u64, u32, u32)> =
            t.symbols.iter().map(|s| (s.addr, if s.size > 0 { s.addr + s.size } else { 0 }, s.module, s.id)).collect();
        entries.sort_by_key(|e| (e.0, e.3));
        entries.dedup_by_key(|e| e.0);
        let modules = t.modules.iter().map(|m| (m.start, m.end, m.id)).collect();
        SymbolIndex { entries, modules }
    }

    /// The symbol id covering `addr`.
    pub fn lookup(&self, addr: u64) -> Option<u32> {
        let i = self.entries.partition_point(|e| e.0 <= addr);
        let &(start, end, module, id) = self.entries.get(i.checked_sub(1)?)?;
        if end != 0 {
            return (addr < end).then_some(id);
        }
        // Unknown size: accept when in the same module as the symbol.
        let m = self.modules.iter().find(|m| m.0 <= addr && addr < m.1)?;
        (m.2 == module && start <= addr).then_some(id)
    }
}

/// A streaming iterator over events of one OS thread (or one SIMT segment of it). Holds one decompressed
/// chunk at a time.
#[derive(Debug)]
pub struct EventStream<'t> {
    trace: &'t Trace,
    chunks: &'t [ChunkRef],
    next_chunk: usize,
    data: Arc<Vec<u8>>,
    pos: usize,
    file: Option<File>,
    dec: EventDecoder,
    only: Option<u32>,
    in_segment: bool,
    done: bool,
    /// Set once the iterator yielded an error; it then yields nothing more.
    failed: bool,
}

impl<'t> EventStream<'t> {
    fn new(trace: &'t Trace, chunks: &'t [ChunkRef], first: usize, offset: usize, only: Option<u32>) -> Self {
        EventStream {
            trace,
            chunks,
            next_chunk: first,
            data: Arc::default(),
            pos: offset,
            file: None,
            dec: EventDecoder::new(),
            only,
            in_segment: false,
            done: false,
            failed: false,
        }
    }

    fn load(&mut self, i: usize) -> Result<(), TraceError> {
        let c = self.chunks[i];
        let cache = &self.trace.chunk_cache;
        if let Some(d) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(c.offset) {
            self.data = d;
            return Ok(());
        }
        let path = &self.trace.path;
        if self.file.is_none() {
            self.file = Some(File::open(path).map_err(|e| TraceError::io(path, e))?);
        }
        let f = self.file.as_mut().expect("opened");
        f.seek(SeekFrom::Start(c.offset)).map_err(|e| TraceError::io(path, e))?;
        let mut stored = vec![0u8; c.header.stored_len as usize];
        f.read_exact(&mut stored).map_err(|e| TraceError::io(path, e))?;
        let data = match c.header.decode_payload(&stored) {
            Ok(d) => Arc::new(d),
            Err(ChunkError::Corrupt(w)) => {
                return Err(TraceError(format!(
                    "event chunk {} of thread {} is corrupted: {w}",
                    c.header.seq, c.header.stream
                )))
            }
            Err(ChunkError::Truncated) => return Err(TraceError("event chunk cut off".into())),
        };
        cache.lock().unwrap_or_else(|e| e.into_inner()).put(c.offset, data.clone());
        self.data = data;
        Ok(())
    }
}

impl EventStream<'_> {
    /// Decodes about `budget` events (fewer at the end of a chunk) into `v`: the iterator's events in bulk,
    /// without an [`Event`] per block and memory access. `Ok(false)` once the stream is over (`v` got its last
    /// event); an error ends the stream as the iterator's does.
    pub fn drive(&mut self, v: &mut impl Visitor, budget: usize) -> Result<bool, TraceError> {
        let mut n = 0;
        while n < budget && !v.satisfied() {
            if self.done || self.failed {
                return Ok(false);
            }
            if self.pos < self.data.len() && (self.in_segment || self.only.is_none()) {
                let shapes = &self.trace.shapes[..];
                let mut c = Cursor::at(&self.data, self.pos);
                while n < budget && !c.is_empty() && !v.satisfied() {
                    match self.dec.next_fast(&mut c, shapes, v) {
                        Ok(true) => n += 1,
                        Ok(false) => break,
                        Err(e) => {
                            self.pos = c.pos();
                            return Err(self.fail(e));
                        }
                    }
                }
                self.pos = c.pos();
                if n >= budget {
                    break;
                }
            }
            // Anything but a block or memory access, a segment's first event, or a new chunk: the general path.
            match self.next() {
                Some(Ok(e)) => {
                    // The decoder's block is the one a block event just named.
                    let first_insn = self.dec.current_block().map_or(0, |s| s.first_insn);
                    match e {
                        Event::Block { tb } => v.block(tb, 0, first_insn),
                        Event::PartialBlock { tb, from } => v.block(tb, from, first_insn),
                        Event::Mem { insn, store, size_log2, addr } => v.mem(insn, store, size_log2, addr),
                        e => v.event(e),
                    }
                    n += 1;
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(false),
            }
        }
        Ok(!(self.done || self.failed))
    }

    fn fail(&mut self, e: crate::varint::DecodeError) -> TraceError {
        self.failed = true;
        let seq = self.next_chunk.saturating_sub(1);
        TraceError(format!("event chunk {seq}: {}", e.0))
    }
}

impl Iterator for EventStream<'_> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.failed {
            return None;
        }
        while self.pos >= self.data.len() {
            if self.next_chunk >= self.chunks.len() {
                self.done = true;
                return None;
            }
            let first_load = self.data.is_empty() && self.pos > 0;
            let keep_pos = if first_load { self.pos } else { 0 };
            if let Err(e) = self.load(self.next_chunk) {
                self.failed = true;
                return Some(Err(e));
            }
            self.next_chunk += 1;
            self.pos = keep_pos;
            if keep_pos > self.data.len() {
                self.failed = true;
                return Some(Err(TraceError("a SIMT thread starts past the end of its chunk".into())));
            }
            if self.data.is_empty() {
                continue;
            }
        }
        let trace = self.trace;
        let shape = |tb: u32| trace.shape(tb);
        let mut c = Cursor::at(&self.data, self.pos);
        let r = self.dec.next(&mut c, &shape);
        self.pos = c.pos();
        match r {
            Ok(e) => {
                if let Some(want) = self.only {
                    match e {
                        Event::SegmentStart { simt } if !self.in_segment => {
                            if simt != want {
                                self.failed = true;
                                return Some(Err(TraceError(format!(
                                    "the index points SIMT thread {want} at the start of thread {simt}"
                                ))));
                            }
                            self.in_segment = true;
                        }
                        Event::SegmentEnd => self.done = true,
                        Event::SegmentStart { .. } => {
                            self.failed = true;
                            return Some(Err(TraceError(format!("SIMT thread {want} has no end before the next one"))));
                        }
                        _ if !self.in_segment => {
                            self.failed = true;
                            return Some(Err(TraceError(format!("the index of SIMT thread {want} is wrong"))));
                        }
                        _ => {}
                    }
                }
                Some(Ok(e))
            }
            Err(e) => {
                self.failed = true;
                let seq = self.next_chunk.saturating_sub(1);
                Some(Err(TraceError(format!("event chunk {seq}: {}", e.0))))
            }
        }
    }
}
