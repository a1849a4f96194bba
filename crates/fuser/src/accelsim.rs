//! Accel-Sim traces of the replay (ThreadFuser, Section III, "Generating warp-based instruction traces").
//!
//! The replay at warp size 32 drives a [`WarpWriter`] per warp ([`crate::replay::Sink`]): every executed x86
//! instruction becomes the lines of its lowering ([`crate::lower`]) with the warp's active mask:
//!
//! * each value the lanes load becomes its own load, each value they store its own store (the `k`-th access of
//!   each lane forms the `k`-th operation); accesses to the stack become `LDL`/`STL` with per-thread local
//!   offsets (4-byte aligned, as [`crate::memory::local_offset`] computes them), all others `LDG`/`STG` with
//!   the lanes' addresses; the width modifier gives the access size (`.U8`, `.U16`, none for 4, `.64`, `.128`;
//!   wider accesses are split);
//! * a `lock`-prefixed read-modify-write is one `ATOMG`;
//! * the ALU operation, then the branch, call or return;
//! * lanes leave with one `EXIT` each, when their SIMT thread ends.
//!
//! PCs are remapped to 32 bits: the `i`-th distinct x86 instruction address (in address order) gets
//! `128 × i + 16 × k` for its `k`-th operation. Warps are grouped four to a thread block of 128 threads;
//! lanes without a SIMT thread (the last warp's padding, the last block's missing warps) execute only an
//! `EXIT`. Each warp's lines go to a temporary file while warps replay in parallel; the kernel file is then
//! assembled in order and renamed into place, with `kernelslist.g` beside it. The format is that of
//! Accel-Sim's trace parser (text `.traceg`, tracer version 3).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use iced_x86::InstructionInfoFactory;
use rayon::prelude::*;
use simt::LaneMask;

use crate::lane::BlockItem;
use crate::lower::{self, Template, NREGS, TMP};
use crate::memory::Segment;
use crate::program::Program;
use crate::replay::{LaneAccess, ReplayConfig, Sink, Warp};
use crate::Analysis;

/// Accel-Sim's warp size.
pub const WARP: u32 = 32;
/// Warps per thread block.
pub const WARPS_PER_BLOCK: usize = 4;
/// Operations one x86 instruction may lower to (PC slots).
const SLOTS: u64 = 8;

/// Lowerings of every instruction of the trace and the PC map.
#[derive(Debug)]
pub struct Lowering {
    /// Per global instruction index.
    templates: Vec<Template>,
    /// Distinct instruction addresses, sorted.
    addrs: Vec<u64>,
}

impl Lowering {
    pub fn new(prog: &Program<'_>) -> Lowering {
        let blocks = &prog.trace.blocks;
        let templates: Vec<Template> = blocks
            .par_iter()
            .map_init(InstructionInfoFactory::new, |f, b| {
                b.insns.iter().map(|i| lower::template(f, i)).collect::<Vec<_>>()
            })
            .flatten()
            .collect();
        let mut addrs: Vec<u64> = blocks.iter().flat_map(|b| b.insns.iter().map(|i| i.addr)).collect();
        addrs.sort_unstable();
        addrs.dedup();
        Lowering { templates, addrs }
    }

    /// The 32-bit PC of operation `k` of the instruction at `addr`.
    pub fn pc(&self, addr: u64, k: u64) -> u32 {
        let i = self.addrs.partition_point(|&a| a < addr) as u64;
        ((i * SLOTS + k.min(SLOTS - 1)) * 16) as u32
    }

    /// The PC of `EXIT`: after every instruction's slots.
    pub fn exit_pc(&self) -> u32 {
        u32::try_from(self.addrs.len() as u64 * SLOTS * 16).unwrap_or(0xffff_fff0)
    }
}

/// One lane's piece of a memory operation: lane, global address, local offset, on the stack, size.
type Piece = (u32, u64, u64, bool, u16);

/// Per warp: lines, x86 instructions, replay problems.
type WarpResult = Result<(u64, u64, Vec<String>), String>;

/// One memory operation: an address per active lane, in lane order.
struct MemOp {
    mask: LaneMask,
    size: u16,
    local: bool,
    addrs: Vec<u64>,
}

/// Writes one warp's lines.
pub struct WarpWriter<'a, W: Write> {
    out: W,
    low: &'a Lowering,
    prog: &'a Program<'a>,
    /// Lines written.
    pub lines: u64,
    /// x86 instructions lowered.
    pub insns: u64,
    exited: LaneMask,
    error: Option<io::Error>,
    line: String,
}

impl<W: Write> std::fmt::Debug for WarpWriter<'_, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarpWriter").field("lines", &self.lines).field("exited", &self.exited).finish()
    }
}

impl<'a, W: Write> WarpWriter<'a, W> {
    /// A writer for a warp of `lanes` SIMT threads (the other lanes of the 32 exit at once).
    pub fn new(out: W, low: &'a Lowering, prog: &'a Program<'a>, lanes: u32) -> WarpWriter<'a, W> {
        let mut w = WarpWriter {
            out,
            low,
            prog,
            lines: 0,
            insns: 0,
            exited: LaneMask::EMPTY,
            error: None,
            line: String::new(),
        };
        let padding = LaneMask::full(WARP) - LaneMask::full(lanes);
        if !padding.is_empty() {
            w.exit(padding);
        }
        w
    }

    fn emit(&mut self, pc: u32, mask: LaneMask, dst: Option<u8>, op: &str, srcs: &[u8], mem: Option<&MemOp>) {
        use std::fmt::Write as _;
        let l = &mut self.line;
        l.clear();
        let _ = write!(l, "{pc:04x} {:08x} ", mask.bits() as u32);
        match dst {
            Some(d) => {
                let _ = write!(l, "1 R{d} ");
            }
            None => l.push_str("0 "),
        }
        let _ = write!(l, "{op} {}", srcs.len().min(lower::MAX_SRCS));
        for s in srcs.iter().take(lower::MAX_SRCS) {
            let _ = write!(l, " R{s}");
        }
        match mem {
            None => l.push_str(" 0"),
            Some(m) => {
                let _ = write!(l, " {}", m.size);
                let addrs = &m.addrs;
                let contiguous = m.mask.bits() >> m.mask.first().unwrap_or(0) == (1u64 << m.mask.count()) - 1;
                let stride = if addrs.len() >= 2 { addrs[1].wrapping_sub(addrs[0]) as i64 } else { 0 };
                let strided =
                    addrs.windows(2).all(|p| p[1].wrapping_sub(p[0]) as i64 == stride) && i32::try_from(stride).is_ok();
                if contiguous && strided && !addrs.is_empty() {
                    let _ = write!(l, " 1 {:#x} {stride}", addrs[0]);
                } else {
                    l.push_str(" 0");
                    for a in addrs {
                        let _ = write!(l, " {a:#x}");
                    }
                }
            }
        }
        l.push_str(" 0\n");
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(l.as_bytes()) {
                self.error = Some(e);
            }
        }
        self.lines += 1;
    }

    /// Lanes not yet exited leave (a warp whose replay stopped early); returns the output.
    pub fn finish(mut self) -> io::Result<(W, u64, u64)> {
        let rest = LaneMask::full(WARP) - self.exited;
        if !rest.is_empty() || self.lines == 0 {
            self.exit(if rest.is_empty() { LaneMask::full(WARP) } else { rest });
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        self.out.flush()?;
        Ok((self.out, self.lines, self.insns))
    }

    /// The memory operations of one direction of an instruction: the `k`-th access of every lane forms
    /// operation `k`; accesses wider than 16 bytes are split into 16-byte pieces. An operation whose lanes all
    /// touch the stack is local (4-byte aligned local offsets), otherwise global (the lanes' addresses).
    fn mem_ops(accesses: &[LaneAccess]) -> Vec<MemOp> {
        // Per operation: (lane, global address, local offset, on the stack, size).
        let mut groups: Vec<Vec<Piece>> = Vec::new();
        let mut ordinal = [0usize; 64];
        for a in accesses {
            let k = ordinal[a.lane as usize % 64];
            ordinal[a.lane as usize % 64] += 1;
            let size = a.size.max(1);
            let pieces = size.div_ceil(16).clamp(1, 8);
            for p in 0..pieces {
                let idx = k * 8 + usize::from(p);
                if groups.len() <= idx {
                    groups.resize_with(idx + 1, Vec::new);
                }
                let off = u64::from(p) * 16;
                let piece = (size - p * 16).min(16);
                groups[idx].push((a.lane, a.addr + off, a.local + off, a.seg == Segment::Stack, piece));
            }
        }
        groups
            .into_iter()
            .filter(|g| !g.is_empty())
            .map(|mut g| {
                g.sort_by_key(|x| x.0);
                let local = g.iter().all(|x| x.3);
                let size = g.iter().map(|x| x.4).max().unwrap_or(4).next_power_of_two().min(16);
                MemOp {
                    mask: g.iter().map(|x| x.0).collect(),
                    size,
                    local,
                    addrs: g.iter().map(|x| if local { x.2 & !3 } else { x.1 }).collect(),
                }
            })
            .collect()
    }
}

impl<W: Write> Sink for WarpWriter<'_, W> {
    fn block(&mut self, block: &BlockItem, active: LaneMask, accesses: &[LaneAccess]) {
        let low = self.low;
        let tb = &self.prog.trace.blocks[block.tb as usize];
        let mut at = 0usize;
        for idx in block.first..block.first + block.insns {
            let Some(insn) = tb.insns.get(idx as usize) else { break };
            let g = tb.first_insn as usize + idx as usize;
            let default = Template { alu: Some("NOP"), ..Template::default() };
            let t = low.templates.get(g).unwrap_or(&default);
            // This instruction's accesses (sorted by instruction, direction, segment, lane).
            while at < accesses.len() && accesses[at].insn < idx {
                at += 1;
            }
            let start = at;
            while at < accesses.len() && accesses[at].insn == idx {
                at += 1;
            }
            let mine = &accesses[start..at];
            let split = mine.partition_point(|a| !a.store);
            let (loads, stores) = (Self::mem_ops(&mine[..split]), Self::mem_ops(&mine[split..]));

            self.insns += 1;
            let mut k = 0u64;
            let pc = |k: &mut u64| {
                let p = low.pc(insn.addr, *k);
                *k += 1;
                p
            };
            if t.atomic && (!loads.is_empty() || !stores.is_empty()) {
                let m = loads.first().or(stores.first()).expect("an access");
                let mut srcs = t.addr_read.clone();
                for &r in &t.srcs {
                    if !srcs.contains(&r) {
                        srcs.push(r);
                    }
                }
                let op = format!("ATOMG.E.ADD{}", lower::width_suffix(m.size));
                let p = pc(&mut k);
                self.emit(p, m.mask, t.dst, &op, &srcs, Some(m));
            } else {
                let mut loaded = Vec::new();
                for (j, m) in loads.iter().enumerate() {
                    let dst = if t.alu.is_none() && stores.is_empty() && t.ctrl.is_none() {
                        t.dst
                    } else {
                        Some(TMP + (j as u8).min(3))
                    };
                    if let Some(d) = dst {
                        loaded.push(d);
                    }
                    let op = if m.local {
                        format!("LDL{}", lower::width_suffix(m.size))
                    } else {
                        format!("LDG.E{}", lower::width_suffix(m.size))
                    };
                    let p = pc(&mut k);
                    self.emit(p, m.mask, dst, &op, &t.addr_read, Some(m));
                }
                if let Some(alu) = t.alu {
                    let mut srcs = t.srcs.clone();
                    for &l in &loaded {
                        if !srcs.contains(&l) {
                            srcs.push(l);
                        }
                    }
                    let p = pc(&mut k);
                    self.emit(p, active, t.dst, alu, &srcs, None);
                }
                for m in &stores {
                    let mut srcs = t.addr_write.clone();
                    let data =
                        if t.alu.is_some() { t.dst } else { t.srcs.first().copied().or(loaded.first().copied()) };
                    if let Some(d) = data {
                        if !srcs.contains(&d) {
                            srcs.push(d);
                        }
                    }
                    let op = if m.local {
                        format!("STL{}", lower::width_suffix(m.size))
                    } else {
                        format!("STG.E{}", lower::width_suffix(m.size))
                    };
                    let p = pc(&mut k);
                    self.emit(p, m.mask, None, &op, &srcs, Some(m));
                }
                if t.alu.is_none() && t.ctrl.is_none() && loads.is_empty() && stores.is_empty() {
                    // A move between registers (or an instruction with no visible effect).
                    let p = pc(&mut k);
                    let op = if t.dst.is_some() { "MOV" } else { "NOP" };
                    self.emit(p, active, t.dst, op, &t.srcs, None);
                }
            }
            if let Some(c) = t.ctrl {
                let mut srcs = t.srcs.clone();
                if c != "BRA" {
                    for &r in &t.addr_read {
                        if !srcs.contains(&r) {
                            srcs.push(r);
                        }
                    }
                }
                let p = pc(&mut k);
                self.emit(p, active, None, c, &srcs, None);
            }
        }
    }

    fn exit(&mut self, lanes: LaneMask) {
        let lanes = lanes - self.exited;
        if lanes.is_empty() {
            return;
        }
        self.exited |= lanes;
        let pc = self.low.exit_pc();
        self.emit(pc, lanes, None, "EXIT", &[], None);
    }
}

/// What [`write`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccelSimOutput {
    pub kernel_list: PathBuf,
    pub kernel: PathBuf,
    pub warps: usize,
    pub thread_blocks: usize,
    pub lines: u64,
    /// Warp x86 instructions lowered.
    pub x86_instructions: u64,
    pub errors: Vec<String>,
}

fn io_err(p: &Path, e: io::Error) -> String {
    format!("{}: {e}", p.display())
}

/// Replays every warp (of 32 SIMT threads, batched by `batch`) and writes `dir/kernelslist.g` and
/// `dir/kernel-1.traceg`.
pub fn write(analysis: &Analysis<'_>, dir: &Path, batch: crate::Batch) -> Result<AccelSimOutput, String> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let prog = &analysis.prog;
    let low = Lowering::new(prog);
    let warps = crate::form_warps(prog, batch, WARP);
    let conf = ReplayConfig { warp_size: WARP, transaction_bytes: 32, fast_paths: true };
    let tmp = |i: usize| dir.join(format!(".kernel-1.warp-{i}.tmp"));
    let results: Vec<WarpResult> = warps
        .par_iter()
        .enumerate()
        .map(|(i, lanes)| {
            let path = tmp(i);
            let f = File::create(&path).map_err(|e| io_err(&path, e))?;
            let mut w = WarpWriter::new(BufWriter::new(f), &low, prog, lanes.len() as u32);
            let stats = {
                let warp = Warp::new(prog, &analysis.dcfg, &analysis.classifier, conf, lanes, Some(&mut w));
                warp.run(i as u32)
            };
            let (_, lines, insns) = w.finish().map_err(|e| io_err(&path, e))?;
            Ok((lines, insns, stats.errors))
        })
        .collect();
    let mut out = AccelSimOutput {
        kernel_list: dir.join("kernelslist.g"),
        kernel: dir.join("kernel-1.traceg"),
        warps: warps.len(),
        thread_blocks: warps.len().div_ceil(WARPS_PER_BLOCK).max(1),
        lines: 0,
        x86_instructions: 0,
        errors: Vec::new(),
    };
    let mut counts = Vec::new();
    for r in results {
        let (lines, insns, errors) = r?;
        counts.push(lines);
        out.lines += lines;
        out.x86_instructions += insns;
        out.errors.extend(errors);
    }
    let partial = dir.join("kernel-1.traceg.partial");
    let assemble = || -> io::Result<()> {
        let mut f = BufWriter::new(File::create(&partial)?);
        let name = Path::new(&prog.trace.header.program)
            .file_name()
            .map_or_else(|| "program".to_string(), |n| n.to_string_lossy().replace(' ', "_"));
        write!(
            f,
            "-kernel name = lockstep_{name}\n-kernel id = 1\n-grid dim = ({},1,1)\n-block dim = ({},1,1)\n-shmem = 0\n\
             -nregs = {NREGS}\n-binary version = 86\n-cuda stream id = 0\n-shmem base_addr = 0x00007f0000000000\n\
             -local mem base_addr = 0x00007e0000000000\n-nvbit version = lockstep\n-accelsim tracer version = 3\n\
             -enable lineinfo = 0\n\n#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num \
             [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate\n\n",
            out.thread_blocks,
            WARP as usize * WARPS_PER_BLOCK
        )?;
        let exit_pc = low.exit_pc();
        for b in 0..out.thread_blocks {
            writeln!(f, "#BEGIN_TB\n\nthread block = {b},0,0\n")?;
            for w in 0..WARPS_PER_BLOCK {
                let i = b * WARPS_PER_BLOCK + w;
                writeln!(f, "warp = {w}")?;
                match counts.get(i) {
                    Some(&n) => {
                        writeln!(f, "insts = {n}")?;
                        let mut t = File::open(tmp(i))?;
                        io::copy(&mut t, &mut f)?;
                    }
                    None => writeln!(f, "insts = 1\n{exit_pc:04x} ffffffff 0 EXIT 0 0 0")?,
                }
                writeln!(f)?;
            }
            writeln!(f, "#END_TB\n")?;
        }
        f.flush()?;
        Ok(())
    };
    let r = assemble();
    for i in 0..warps.len() {
        let _ = std::fs::remove_file(tmp(i));
    }
    r.map_err(|e| io_err(&partial, e))?;
    std::fs::rename(&partial, &out.kernel).map_err(|e| io_err(&out.kernel, e))?;
    let list_tmp = dir.join("kernelslist.g.partial");
    std::fs::write(&list_tmp, "kernel-1.traceg\n").map_err(|e| io_err(&list_tmp, e))?;
    std::fs::rename(&list_tmp, &out.kernel_list).map_err(|e| io_err(&out.kernel_list, e))?;
    Ok(out)
}
