//! The lockstep trace format: the only contract between the tracer (`crates/tracer`, a QEMU plugin) and the
//! ThreadFuser-style analyzer.
//!
//! A trace is a file header followed by self-delimiting chunks, each with a length, a CRC-32 and a zstd (or
//! raw) payload. Meta chunks carry the static section (modules, symbols, translated blocks with every
//! instruction's bytes, threads, SIMT threads) as the tracer learns it; event chunks carry one OS thread's
//! events (blocks, memory accesses, calls, returns, locks, skipped regions), cut into SIMT-thread segments; an
//! end chunk marks a complete trace. Any prefix of chunks is a valid trace: a reader stops at the first
//! missing, cut-off or corrupted chunk and reports where (see [`Status`]). `FORMAT.md` is the specification.
//!
//! * [`Trace::open`] validates a file and loads its static section; [`Trace::os_events`] and
//!   [`Trace::simt_events`] stream events with one decompressed chunk in memory.
//! * [`TraceWriter`] writes traces; the plugin uses [`encode_chunk`], [`EventEncoder`] and
//!   [`MetaRecord::encode`] directly, and [`spill`] to survive being killed.
//! * [`BasicBlocks`] splits translated blocks into basic blocks; [`summarize`] computes what
//!   `lockstep trace info` prints.

pub mod event;
pub mod format;
pub mod meta;
pub mod normalize;
pub mod reader;
pub mod spill;
pub mod summary;
pub mod varint;
pub mod writer;

pub use event::{BlockShape, Event, EventDecoder, EventEncoder, LockKind, Sink, SkipKind, Visitor, ADDR_SLOTS};
pub use format::{
    encode_chunk, ChunkEncoder, ChunkHeader, ChunkKind, Codec, Header, CHUNK_HEADER_LEN, MAGIC, STORE, VERSION,
};
pub use meta::{
    Access, Block, EndRecord, Flow, Insn, MemOperand, MetaRecord, Module, ModuleKind, SimtEnd, SimtStart, Symbol,
    SymbolKind, ThreadEnd, ThreadInfo,
};
pub use normalize::{BasicBlock, BasicBlocks, BbSpan};
pub use reader::{scan_chunks, EventStream, SimtThread, Status, SymbolIndex, Trace, TraceError};
pub use summary::{summarize, Summary};
pub use writer::TraceWriter;

/// `u32::MAX`: "none" in 32-bit id fields (module of a symbol, function of a SIMT thread).
pub const NONE: u32 = u32::MAX;
