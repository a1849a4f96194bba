//! Synthetic traces: a few functions of real x86 instructions and, per SIMT thread, the events it runs. Written
//! with `trace::TraceWriter`, so the replay can be tested exactly without QEMU.

#![allow(dead_code)]

pub mod accelsim_check;

use std::path::Path;

use trace::{
    Block, EndRecord, Event, Flow, Header, Insn, MemOperand, MetaRecord, Module, ModuleKind, SimtEnd, SimtStart,
    Symbol, SymbolKind, ThreadInfo, TraceWriter, NONE,
};

/// An instruction: bytes, control flow, mnemonic, memory operands.
#[derive(Debug, Clone)]
pub struct I {
    pub bytes: Vec<u8>,
    pub flow: Flow,
    pub mnemonic: &'static str,
    pub mem: Vec<MemOperand>,
    pub atomic: bool,
}

fn i(bytes: &[u8], flow: Flow, mnemonic: &'static str, mem: &[(u16, trace::Access)]) -> I {
    I {
        bytes: bytes.to_vec(),
        flow,
        mnemonic,
        mem: mem.iter().map(|&(size, access)| MemOperand { size, access }).collect(),
        atomic: false,
    }
}

pub fn nop() -> I {
    i(&[0x90], Flow::Next, "nop", &[])
}
/// `add eax, ecx`
pub fn add() -> I {
    i(&[0x01, 0xc8], Flow::Next, "add", &[])
}
/// `mov eax, [rdi]`: a 4-byte load through a pointer.
pub fn load() -> I {
    i(&[0x8b, 0x07], Flow::Next, "mov", &[(4, trace::Access::Read)])
}
/// `mov [rdi], eax`
pub fn store() -> I {
    i(&[0x89, 0x07], Flow::Next, "mov", &[(4, trace::Access::Write)])
}
/// `add [rdi], eax`: a read-modify-write.
pub fn add_mem() -> I {
    i(&[0x01, 0x07], Flow::Next, "add", &[(4, trace::Access::ReadWrite)])
}
/// `mov eax, [rip+0x100]`
pub fn load_static() -> I {
    i(&[0x8b, 0x05, 0x00, 0x01, 0, 0], Flow::Next, "mov", &[(4, trace::Access::Read)])
}
/// `movsd xmm0, [rdi]`: an 8-byte floating-point load.
pub fn movsd_load() -> I {
    i(&[0xf2, 0x0f, 0x10, 0x07], Flow::Next, "movsd", &[(8, trace::Access::Read)])
}
/// `addsd xmm0, xmm1`
pub fn addsd() -> I {
    i(&[0xf2, 0x0f, 0x58, 0xc1], Flow::Next, "addsd", &[])
}
/// `push rax`
pub fn push() -> I {
    i(&[0x50], Flow::Next, "push", &[(8, trace::Access::Write)])
}
/// `lock add [rdi], eax`
pub fn atomic_add() -> I {
    let mut x = i(&[0xf0, 0x01, 0x07], Flow::Next, "add", &[(4, trace::Access::ReadWrite)]);
    x.atomic = true;
    x
}
/// `cmp eax, ecx`
pub fn cmp() -> I {
    i(&[0x39, 0xc8], Flow::Next, "cmp", &[])
}
/// `jne +0`
pub fn jne() -> I {
    i(&[0x75, 0x00], Flow::CondBranch, "jne", &[])
}
/// `jmp +0`
pub fn jmp() -> I {
    i(&[0xe9, 0, 0, 0, 0], Flow::Jump, "jmp", &[])
}
/// `call +0`
pub fn call() -> I {
    i(&[0xe8, 0, 0, 0, 0], Flow::Call, "call", &[(8, trace::Access::Write)])
}
/// `ret`
pub fn ret() -> I {
    i(&[0xc3], Flow::Return, "ret", &[])
}

/// A synthetic trace under construction.
#[derive(Debug, Default)]
pub struct Synth {
    blocks: Vec<Block>,
    symbols: Vec<Symbol>,
    next_insn: u32,
    /// Per SIMT thread: OS thread, index in it, `--function` symbol, events (without segment markers).
    lanes: Vec<(u32, u32, u32, Vec<Event>)>,
}

impl Synth {
    pub fn new() -> Synth {
        Synth::default()
    }

    /// A function symbol.
    pub fn symbol(&mut self, name: &str, addr: u64, size: u64) -> u32 {
        let id = self.symbols.len() as u32;
        self.symbols.push(Symbol {
            id,
            module: 0,
            addr,
            size,
            kind: SymbolKind::Function,
            name: name.into(),
            mangled: String::new(),
        });
        id
    }

    /// A translated block at `addr`; returns its id. The end address is `end(id)`.
    pub fn block(&mut self, addr: u64, insns: Vec<I>) -> u32 {
        let id = self.blocks.len() as u32;
        let mut a = addr;
        let mut out = Vec::new();
        for x in insns {
            let len = x.bytes.len() as u64;
            out.push(Insn {
                addr: a,
                bytes: x.bytes,
                flow: x.flow,
                atomic: x.atomic,
                mnemonic: x.mnemonic.into(),
                mem: x.mem,
            });
            a += len;
        }
        let n = out.len() as u32;
        self.blocks.push(Block { id, addr, first_insn: self.next_insn, insns: out });
        self.next_insn += n;
        id
    }

    /// One past the last byte of block `tb`.
    pub fn end(&self, tb: u32) -> u64 {
        self.blocks[tb as usize].end()
    }

    /// Instructions of block `tb`.
    pub fn len(&self, tb: u32) -> u64 {
        self.blocks[tb as usize].insns.len() as u64
    }

    /// A SIMT thread on OS thread `os` (the `index`-th there), optionally an invocation of `function`.
    pub fn lane(&mut self, os: u32, index: u32, function: Option<u32>, events: Vec<Event>) {
        self.lanes.push((os, index, function.unwrap_or(NONE), events));
    }

    /// Writes the trace. SIMT threads are numbered in the order given.
    pub fn write(&self, path: &Path) {
        let header = Header {
            tracer: "synthetic".into(),
            program: "/nonexistent/synthetic".into(),
            function: None,
            ..Header::default()
        };
        let f = std::fs::File::create(path).unwrap();
        let mut w = TraceWriter::new(std::io::BufWriter::new(f), &header).unwrap().with_chunk_bytes(64);
        w.meta(&MetaRecord::Module(Module {
            id: 0,
            path: "/nonexistent/synthetic".into(),
            start: 0x1000,
            end: 0x10_0000,
            bias: 0,
            kind: ModuleKind::Main,
        }));
        for s in &self.symbols {
            w.meta(&MetaRecord::Symbol(s.clone()));
        }
        for b in &self.blocks {
            w.meta(&MetaRecord::Block(b.clone()));
        }
        let mut oss: Vec<u32> = self.lanes.iter().map(|l| l.0).collect();
        oss.sort_unstable();
        oss.dedup();
        for &os in &oss {
            w.meta(&MetaRecord::Thread(ThreadInfo { os, tid: 1000 + os, rank: os }));
        }
        // Segments are written per OS thread in index order; SIMT ids in the order given.
        let mut order: Vec<usize> = (0..self.lanes.len()).collect();
        order.sort_by_key(|&k| (self.lanes[k].0, self.lanes[k].1));
        for k in order {
            let (os, index, function, events) = &self.lanes[k];
            let (chunk_seq, offset) = w.position(*os);
            w.meta(&MetaRecord::SimtStart(SimtStart {
                simt: k as u32,
                os: *os,
                index_in_os: *index,
                function: *function,
                iteration: u64::MAX,
                chunk_seq,
                offset,
            }));
            w.event(*os, &Event::SegmentStart { simt: k as u32 }).unwrap();
            let mut insns = 0;
            for e in events {
                if let Event::Block { tb } = e {
                    insns += self.len(*tb);
                }
                w.event(*os, e).unwrap();
            }
            w.event(*os, &Event::SegmentEnd).unwrap();
            w.add_insns(insns);
            w.meta(&MetaRecord::SimtEnd(SimtEnd { simt: k as u32, insns }));
        }
        w.finish(EndRecord { reason: "exit".into(), exit_code: Some(0), recovered: false, insns: 0 }).unwrap();
    }
}

/// Analyzes a trace file at `warp` lanes with default settings.
pub fn analyze(path: &Path, warp: u32) -> fuser::Report {
    analyze_with(path, fuser::Config { warp_size: warp, ..fuser::Config::default() })
}

pub fn analyze_with(path: &Path, config: fuser::Config) -> fuser::Report {
    let t = trace::Trace::open(path).unwrap();
    assert!(t.status.is_complete(), "{:?}", t.status);
    let a = fuser::Analysis::new(&t);
    a.run(&config, &|_| {}).unwrap()
}

pub fn function<'r>(r: &'r fuser::Report, name: &str) -> &'r fuser::report::FunctionReport {
    r.functions.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no function {name}: {:#?}", r.functions))
}
