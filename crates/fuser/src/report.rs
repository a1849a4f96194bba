//! The analysis results as plain data (serialized as JSON by `lockstep analyze --json`).

use serde::Serialize;
use simt::{AccessStats, Efficiency, MemoryStats};

use crate::memory::{Segment, SEGMENTS};
use crate::program::Program;
use crate::stats::Stats;

/// Counters of one memory segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SegmentReport {
    /// Warp memory instructions (per direction: a read-modify-write counts a load and a store).
    pub warp_accesses: u64,
    /// Transactions they needed.
    pub transactions: u64,
    /// `transactions / warp_accesses`: the memory divergence (1 is perfect for small accesses, 32 the worst at
    /// warp 32 with 32-byte transactions).
    pub transactions_per_access: Option<f64>,
    /// Bytes the lanes asked for.
    pub bytes: u64,
    pub loads: AccessReport,
    pub stores: AccessReport,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AccessReport {
    pub warp_accesses: u64,
    pub transactions: u64,
}

impl From<&AccessStats> for AccessReport {
    fn from(a: &AccessStats) -> AccessReport {
        AccessReport { warp_accesses: a.warp_accesses, transactions: a.transactions }
    }
}

impl From<&MemoryStats> for SegmentReport {
    fn from(m: &MemoryStats) -> SegmentReport {
        let t = m.total();
        SegmentReport {
            warp_accesses: t.warp_accesses,
            transactions: t.transactions,
            transactions_per_access: t.transactions_per_access(),
            bytes: t.bytes,
            loads: (&m.loads).into(),
            stores: (&m.stores).into(),
        }
    }
}

/// Memory counters per segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MemoryReport {
    /// Stack accesses with the CPU's addresses (every OS thread has its own stack).
    pub stack: SegmentReport,
    /// `malloc`ed and other dynamically mapped memory.
    pub heap: SegmentReport,
    /// Data and bss of the program and its libraries.
    #[serde(rename = "static")]
    pub static_data: SegmentReport,
    /// Thread-local storage and code without a file.
    pub other: SegmentReport,
    /// The stack accesses again, each SIMT thread's stack laid out as GPU local memory (lanes' words
    /// interleaved).
    pub stack_local: SegmentReport,
    /// All segments but `stack_local`.
    pub total: SegmentReport,
}

impl MemoryReport {
    fn new(m: &[MemoryStats; SEGMENTS]) -> MemoryReport {
        let mut total = MemoryStats::default();
        for s in [Segment::Stack, Segment::Heap, Segment::Static, Segment::Other] {
            total += m[s as usize];
        }
        MemoryReport {
            stack: (&m[Segment::Stack as usize]).into(),
            heap: (&m[Segment::Heap as usize]).into(),
            static_data: (&m[Segment::Static as usize]).into(),
            other: (&m[Segment::Other as usize]).into(),
            stack_local: (&m[Segment::StackLocal as usize]).into(),
            total: (&total).into(),
        }
    }

    /// The segment report of `s`.
    pub fn get(&self, s: Segment) -> &SegmentReport {
        match s {
            Segment::Stack => &self.stack,
            Segment::Heap => &self.heap,
            Segment::Static => &self.static_data,
            Segment::Other => &self.other,
            Segment::StackLocal => &self.stack_local,
        }
    }
}

/// One function's own instructions (callees excluded).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionReport {
    pub name: String,
    pub module: String,
    pub thread_instructions: u64,
    pub warp_instructions: u64,
    /// `thread_instructions / (warp_instructions × warp_size)`.
    pub simt_efficiency: Option<f64>,
    /// Share of the program's warp instructions.
    pub warp_share: f64,
    pub memory: MemoryReport,
    /// Thread instructions skipped in its frames.
    pub skipped_instructions: u64,
}

/// One basic block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockReport {
    pub function: String,
    /// Start address, hex.
    pub address: String,
    pub thread_instructions: u64,
    pub warp_instructions: u64,
    pub simt_efficiency: Option<f64>,
}

/// One lock site: where lanes continue after acquiring.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockReport {
    pub function: String,
    /// Address of the block after the acquisition, hex.
    pub site: String,
    pub kind: trace::LockKind,
    /// Distinct lock addresses acquired there.
    pub locks: usize,
    pub acquisitions: u64,
    /// Times lanes of one warp competed for a lock there and were serialized.
    pub contended: u64,
    /// Most lanes of one warp serialized on one lock.
    pub max_serialized_lanes: u32,
    /// Warp instructions the 2nd, 3rd, ... group ran: the cost of serialization.
    pub serialized_warp_instructions: u64,
    /// Warp instructions of all groups while serialized.
    pub critical_warp_instructions: u64,
}

/// Instructions executed but not replayed (thread instructions), and the regions they were in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SkippedReport {
    /// In system calls (the kernel's instructions are not traced: 0 unless the tracer counts them).
    pub syscall: u64,
    /// In `--exclude`d functions.
    pub excluded: u64,
    /// Spinning in lock functions after the first attempt.
    pub lock_spin: u64,
    pub total: u64,
    pub syscall_regions: u64,
    pub excluded_regions: u64,
    pub lock_spin_regions: u64,
    /// `total / (total + thread_instructions)`.
    pub fraction: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WarpReport {
    pub index: u32,
    pub lanes: u32,
    pub thread_instructions: u64,
    pub warp_instructions: u64,
    pub simt_efficiency: Option<f64>,
}

/// The dynamic CFGs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DcfgReport {
    pub functions: usize,
    pub blocks: usize,
    pub edges: usize,
}

/// Everything one analysis (one warp size) found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub program: String,
    pub args: Vec<String>,
    /// `complete`, or why only a prefix of the trace could be read.
    pub trace_status: String,
    pub warp_size: u32,
    pub batch: crate::batch::Batch,
    pub transaction_bytes: u32,
    pub simt_threads: usize,
    pub warps: usize,
    pub thread_instructions: u64,
    pub warp_instructions: u64,
    /// ThreadFuser's Eq. 1: `thread_instructions / (warp_instructions × warp_size)` over all warps.
    pub simt_efficiency: Option<f64>,
    /// Average active lanes per warp instruction.
    pub active_lanes: Option<f64>,
    /// Functions by decreasing thread instructions.
    pub functions: Vec<FunctionReport>,
    /// The basic blocks with the most thread instructions.
    pub blocks: Vec<BlockReport>,
    pub memory: MemoryReport,
    /// Lock sites by decreasing serialized warp instructions.
    pub locks: Vec<LockReport>,
    pub lock_releases: u64,
    pub skipped: SkippedReport,
    /// Instructions the traced program executed outside SIMT threads (with `--function`: outside the traced
    /// function), summed over the OS threads that ended while traced. Not replayed.
    pub outside_simt_instructions: u64,
    pub per_warp: Vec<WarpReport>,
    pub dcfg: DcfgReport,
    /// Lanes moved to where their trace went because the stack expected them elsewhere.
    pub resyncs: u64,
    pub max_stack_depth: usize,
    /// How segments were decided.
    pub segments_note: String,
    /// Problems met (unreadable streams, warps that could not be replayed).
    pub errors: Vec<String>,
}

fn ratio(e: &Efficiency, ws: u32) -> Option<f64> {
    e.ratio(ws)
}

/// Options of [`Report::new`].
#[derive(Debug, Clone, Copy)]
pub struct ReportShape {
    pub warp_size: u32,
    pub batch: crate::batch::Batch,
    pub transaction_bytes: u32,
    pub top_blocks: usize,
}

impl Report {
    /// Builds the report from merged counters.
    pub fn new(prog: &Program<'_>, dcfg: &crate::dcfg::Dcfgs, stats: Stats, shape: ReportShape) -> Report {
        let ws = shape.warp_size;
        let t = prog.trace;
        let total_warp = stats.eff.warp_instructions.max(1) as f64;
        let name_of = |f: u32| -> String {
            if f == crate::replay::ROOT_FN {
                "(outside any function)".into()
            } else {
                prog.function_name(f).to_string()
            }
        };
        let mut functions: Vec<FunctionReport> = stats
            .funcs
            .iter()
            .filter(|(_, s)| s.eff.warp_instructions > 0 || s.skipped > 0)
            .map(|(&f, s)| FunctionReport {
                name: name_of(f),
                module: prog.function_module(f),
                thread_instructions: s.eff.thread_instructions,
                warp_instructions: s.eff.warp_instructions,
                simt_efficiency: ratio(&s.eff, ws),
                warp_share: s.eff.warp_instructions as f64 / total_warp,
                memory: MemoryReport::new(&s.mem),
                skipped_instructions: s.skipped,
            })
            .collect();
        functions.sort_by(|a, b| {
            b.thread_instructions
                .cmp(&a.thread_instructions)
                .then(b.warp_instructions.cmp(&a.warp_instructions))
                .then(a.name.cmp(&b.name))
        });
        let mut blocks: Vec<BlockReport> = stats
            .blocks
            .iter()
            .map(|(&(f, addr), e)| BlockReport {
                function: name_of(f),
                address: format!("{addr:#x}"),
                thread_instructions: e.thread_instructions,
                warp_instructions: e.warp_instructions,
                simt_efficiency: ratio(e, ws),
            })
            .collect();
        blocks.sort_by(|a, b| {
            b.thread_instructions.cmp(&a.thread_instructions).then(a.function.cmp(&b.function)).then_with(|| {
                let pa = u64::from_str_radix(a.address.trim_start_matches("0x"), 16).unwrap_or(0);
                let pb = u64::from_str_radix(b.address.trim_start_matches("0x"), 16).unwrap_or(0);
                pa.cmp(&pb)
            })
        });
        blocks.truncate(shape.top_blocks);
        let mut locks: Vec<LockReport> = stats
            .locks
            .iter()
            .map(|(&(f, addr), l)| LockReport {
                function: name_of(f),
                site: format!("{addr:#x}"),
                kind: l.kind,
                locks: l.addrs.len(),
                acquisitions: l.acquisitions,
                contended: l.contended,
                max_serialized_lanes: l.max_groups,
                serialized_warp_instructions: l.serialized_warp_insns,
                critical_warp_instructions: l.critical_warp_insns,
            })
            .collect();
        locks.sort_by(|a, b| {
            b.serialized_warp_instructions
                .cmp(&a.serialized_warp_instructions)
                .then(b.acquisitions.cmp(&a.acquisitions))
                .then(a.function.cmp(&b.function))
                .then(a.site.cmp(&b.site))
        });
        let sk = stats.skipped;
        let total_skipped: u64 = sk.iter().sum();
        let denom = (total_skipped + stats.eff.thread_instructions) as f64;
        let skipped = SkippedReport {
            syscall: sk[trace::SkipKind::Syscall as usize],
            excluded: sk[trace::SkipKind::Excluded as usize],
            lock_spin: sk[trace::SkipKind::LockSpin as usize],
            total: total_skipped,
            syscall_regions: stats.skip_regions[trace::SkipKind::Syscall as usize],
            excluded_regions: stats.skip_regions[trace::SkipKind::Excluded as usize],
            lock_spin_regions: stats.skip_regions[trace::SkipKind::LockSpin as usize],
            fraction: if denom > 0.0 { total_skipped as f64 / denom } else { 0.0 },
        };
        let mut per_warp: Vec<WarpReport> = stats
            .warps
            .iter()
            .map(|w| WarpReport {
                index: w.index,
                lanes: w.lanes,
                thread_instructions: w.eff.thread_instructions,
                warp_instructions: w.eff.warp_instructions,
                simt_efficiency: ratio(&w.eff, ws),
            })
            .collect();
        per_warp.sort_by_key(|w| w.index);
        let mut errors = dcfg.errors.clone();
        errors.extend(stats.errors.iter().cloned());
        Report {
            program: t.header.program.clone(),
            args: t.header.args.clone(),
            trace_status: match &t.status {
                trace::Status::Complete => "complete".into(),
                trace::Status::Truncated { reason, .. } => format!("prefix only: {reason}"),
            },
            warp_size: ws,
            batch: shape.batch,
            transaction_bytes: shape.transaction_bytes,
            simt_threads: t.simt.len(),
            warps: per_warp.len(),
            thread_instructions: stats.eff.thread_instructions,
            warp_instructions: stats.eff.warp_instructions,
            simt_efficiency: ratio(&stats.eff, ws),
            active_lanes: stats.eff.average_active_lanes(),
            functions,
            blocks,
            memory: MemoryReport::new(&stats.mem),
            locks,
            lock_releases: stats.lock_releases,
            skipped,
            outside_simt_instructions: t.thread_ends.iter().map(|e| e.outside).sum(),
            per_warp,
            dcfg: DcfgReport {
                functions: dcfg.funcs.len(),
                blocks: dcfg.blocks(),
                edges: dcfg.funcs.iter().map(|f| f.edges).sum(),
            },
            resyncs: stats.resyncs,
            max_stack_depth: stats.max_depth,
            segments_note: format!(
                "stack: rsp-relative accesses and the {} OS-thread stack range(s) they span; static: rip-relative \
                 accesses and {}; other: fs/gs-relative (TLS) and anonymous code; heap: everything else",
                dcfg.stack_of.len(),
                prog.static_source
            ),
            errors,
        }
    }
}
