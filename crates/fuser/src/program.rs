//! What the analyses know about a trace before reading any event: basic blocks, function names, how each
//! instruction addresses memory (decoded from its bytes with `iced-x86`), and the address ranges of static data
//! and anonymous code.

use std::collections::HashMap;
use std::path::Path;

use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, OpAccess, Register};
use trace::{BasicBlocks, ModuleKind, SymbolIndex, Trace};

/// Function id of code without a symbol.
pub const UNKNOWN_FN: u32 = u32::MAX - 1;

/// How an instruction's memory operand forms its address: a first guess at the segment it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hint {
    /// Through a general-purpose register (or `rbp`): decided by the address ranges.
    Pointer = 0,
    /// `rsp`-relative, or an implicit stack access (`push`, `pop`, `call`, `ret`).
    Stack = 1,
    /// `rip`-relative or an absolute address.
    Static = 2,
    /// `fs`/`gs`-relative: thread-local storage.
    Tls = 3,
}

impl Hint {
    fn from_bits(b: u8) -> Hint {
        match b & 3 {
            1 => Hint::Stack,
            2 => Hint::Static,
            3 => Hint::Tls,
            _ => Hint::Pointer,
        }
    }
}

/// One basic block of a translated block ([`trace::BbSpan`] with its addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The basic block ([`trace::BasicBlocks::blocks`] index).
    pub bb: u32,
    /// Index of the span's first instruction in the translated block, and its instruction count.
    pub first: u16,
    pub len: u16,
    pub addr: u64,
    /// One past the last byte.
    pub end: u64,
}

/// Sorted, disjoint address intervals `[start, end)`.
#[derive(Debug, Clone, Default)]
pub struct Ranges(Vec<(u64, u64)>);

impl Ranges {
    pub fn new(mut v: Vec<(u64, u64)>) -> Ranges {
        v.retain(|r| r.0 < r.1);
        v.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
        for (s, e) in v {
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        Ranges(out)
    }

    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        let i = self.0.partition_point(|r| r.0 <= addr);
        i > 0 && addr < self.0[i - 1].1
    }

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.0
    }
}

/// The static side of a trace, shared (read-only) by every analysis thread.
#[derive(Debug)]
pub struct Program<'t> {
    pub trace: &'t Trace,
    pub bbs: BasicBlocks,
    /// The basic blocks of every translated block, ready to hand out ([`Program::spans`]).
    spans: Vec<Span>,
    /// Translated block `tb`'s spans are `spans[span_start[tb]..span_start[tb + 1]]`.
    span_start: Vec<u32>,
    pub symbols: SymbolIndex,
    /// Per global instruction index: read hint in bits 0..2, write hint in bits 4..6.
    hints: Vec<u8>,
    /// Static data: the loaded segments of the program and its libraries.
    pub statics: Ranges,
    /// Code without a file behind it.
    pub anon: Ranges,
    /// SIMT id → OS-thread index.
    pub simt_os: Vec<u32>,
    /// Where the static data ranges came from, for the report.
    pub static_source: String,
}

impl<'t> Program<'t> {
    pub fn new(trace: &'t Trace) -> Program<'t> {
        let bbs = BasicBlocks::compute(&trace.blocks);
        let symbols = trace.symbol_index();
        let total: usize = trace.blocks.iter().map(|b| b.insns.len()).sum();
        let mut hints = vec![0u8; total];
        let mut factory = InstructionInfoFactory::new();
        let frame_pointer = frame_pointer_functions(trace, &symbols);
        for b in &trace.blocks {
            let fp = symbols.lookup(b.addr).is_some_and(|f| frame_pointer.contains(&f));
            for (k, insn) in b.insns.iter().enumerate() {
                if insn.mem.is_empty() && insn.flow == trace::Flow::Next {
                    continue;
                }
                let g = b.first_insn as usize + k;
                if let Some(h) = hints.get_mut(g) {
                    *h = decode_hints(&mut factory, &insn.bytes, insn.addr, fp);
                }
            }
        }
        let (statics, static_source) = static_ranges(trace);
        let anon = Ranges::new(
            trace.modules.iter().filter(|m| m.kind == ModuleKind::Anonymous).map(|m| (m.start, m.end)).collect(),
        );
        let simt_os = trace.simt.iter().map(|s| s.start.os).collect();
        let mut spans = Vec::new();
        let mut span_start = vec![0u32];
        for (tb, block) in trace.blocks.iter().enumerate() {
            for sp in bbs.spans(tb as u32) {
                let (Some(first), Some(last)) =
                    (block.insns.get(usize::from(sp.first)), block.insns.get(usize::from(sp.first + sp.len) - 1))
                else {
                    continue;
                };
                spans.push(Span {
                    bb: sp.bb,
                    first: sp.first,
                    len: sp.len,
                    addr: first.addr,
                    end: last.addr + last.bytes.len() as u64,
                });
            }
            span_start.push(spans.len() as u32);
        }
        Program { trace, bbs, spans, span_start, symbols, hints, statics, anon, simt_os, static_source }
    }

    /// The basic blocks translated block `tb` covers, in order.
    #[inline]
    pub fn spans(&self, tb: u32) -> &[Span] {
        let i = tb as usize;
        match (self.span_start.get(i), self.span_start.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.spans[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The memory hint of the instruction with global index `g` (a block's `first_insn` plus its index).
    #[inline]
    pub fn hint_at(&self, g: u32, store: bool) -> Hint {
        let h = self.hints.get(g as usize).copied().unwrap_or(0);
        Hint::from_bits(if store { h >> 4 } else { h })
    }

    /// The name of function `f` (a symbol id or [`UNKNOWN_FN`]).
    pub fn function_name(&self, f: u32) -> &str {
        self.trace.symbols.get(f as usize).map_or("(no symbol)", |s| s.name.as_str())
    }

    /// The file name of the module function `f` belongs to.
    pub fn function_module(&self, f: u32) -> String {
        let Some(s) = self.trace.symbols.get(f as usize) else { return String::new() };
        self.trace.modules.get(s.module as usize).map_or_else(String::new, |m| {
            Path::new(&m.path).file_name().map_or(m.path.clone(), |n| n.to_string_lossy().into_owned())
        })
    }

    /// The function whose code contains `addr`.
    pub fn function_at(&self, addr: u64) -> u32 {
        self.symbols.lookup(addr).unwrap_or(UNKNOWN_FN)
    }
}

/// Functions that keep a frame pointer (entered by `push rbp; mov rbp, rsp`, after an `endbr64`): their
/// `rbp`-based accesses are stack accesses (gcc -O0's locals). Elsewhere `rbp` may hold any pointer.
fn frame_pointer_functions(trace: &Trace, symbols: &trace::SymbolIndex) -> std::collections::HashSet<u32> {
    const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
    trace
        .blocks
        .iter()
        .filter_map(|b| {
            let f = symbols.lookup(b.addr)?;
            (trace.symbols.get(f as usize)?.addr == b.addr).then_some((f, b))
        })
        .filter(|(_, b)| {
            let mut insns = b.insns.iter().map(|i| i.bytes.as_slice()).skip_while(|i| *i == ENDBR64);
            insns.next() == Some(&[0x55]) && matches!(insns.next(), Some([0x48, 0x89, 0xe5] | [0x48, 0x8b, 0xec]))
        })
        .map(|(f, _)| f)
        .collect()
}

fn decode_hints(factory: &mut InstructionInfoFactory, bytes: &[u8], ip: u64, frame_pointer: bool) -> u8 {
    let mut d = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let i = d.decode();
    if i.is_invalid() {
        return 0;
    }
    let rip_rel = i.is_ip_rel_memory_operand();
    let info = factory.info(&i);
    let (mut read, mut write) = (None, None);
    for m in info.used_memory() {
        let hint = match (m.segment(), m.base(), m.index()) {
            (Register::FS | Register::GS, _, _) => Hint::Tls,
            (_, Register::RSP | Register::ESP, _) => Hint::Stack,
            (_, Register::RBP, _) if frame_pointer => Hint::Stack,
            (_, Register::RIP | Register::EIP, _) => Hint::Static,
            (_, Register::None, Register::None) => Hint::Static,
            _ if rip_rel => Hint::Static,
            _ => Hint::Pointer,
        };
        let (r, w) = match m.access() {
            OpAccess::Read | OpAccess::CondRead => (true, false),
            OpAccess::Write | OpAccess::CondWrite => (false, true),
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => (true, true),
            _ => (false, false),
        };
        if r && read.is_none() {
            read = Some(hint);
        }
        if w && write.is_none() {
            write = Some(hint);
        }
    }
    read.unwrap_or(Hint::Pointer) as u8 | ((write.unwrap_or(Hint::Pointer) as u8) << 4)
}

/// Loaded segments of every mapped ELF object (read from the files when they are still there), else the
/// module ranges the tracer recorded.
fn static_ranges(trace: &Trace) -> (Ranges, String) {
    let mut v = Vec::new();
    let mut from_elf = 0;
    let mut from_maps = 0;
    let mut cache: HashMap<&str, Option<Vec<(u64, u64)>>> = HashMap::new();
    for m in &trace.modules {
        if m.kind == ModuleKind::Anonymous {
            continue;
        }
        let segs = cache.entry(m.path.as_str()).or_insert_with(|| elf_load_segments(Path::new(&m.path)));
        match segs {
            Some(segs) if !segs.is_empty() => {
                from_elf += 1;
                for &(s, e) in segs.iter() {
                    v.push((s.wrapping_add(m.bias), e.wrapping_add(m.bias)));
                }
                // The recorded mapping too (covers what the program headers may not).
                v.push((m.start, m.end));
            }
            _ => {
                from_maps += 1;
                v.push((m.start, m.end));
            }
        }
    }
    let source = format!(
        "{from_elf} module(s) by their ELF program headers (data and bss included), {from_maps} by their mapped range"
    );
    (Ranges::new(v), source)
}

/// `[vaddr, vaddr + memsz)` of every `PT_LOAD` segment of an ELF file.
fn elf_load_segments(path: &Path) -> Option<Vec<(u64, u64)>> {
    use object::read::elf::{ElfFile64, ProgramHeader};
    let data = std::fs::read(path).ok()?;
    let elf = ElfFile64::<object::Endianness>::parse(data.as_slice()).ok()?;
    let endian = elf.endian();
    let mut out = Vec::new();
    for ph in elf.elf_program_headers() {
        if ph.p_type(endian) == object::elf::PT_LOAD {
            let start = ph.p_vaddr(endian);
            out.push((start, start.wrapping_add(ph.p_memsz(endian))));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_lookup() {
        let r = Ranges::new(vec![(10, 20), (15, 30), (40, 50), (5, 5)]);
        assert_eq!(r.as_slice(), &[(10, 30), (40, 50)]);
        assert!(!r.contains(9));
        assert!(r.contains(10));
        assert!(r.contains(29));
        assert!(!r.contains(30));
        assert!(r.contains(45));
        assert!(!r.contains(50));
    }

    #[test]
    fn hints_from_instruction_bytes() {
        let mut f = InstructionInfoFactory::new();
        let mut h = |b: &[u8]| {
            let x = decode_hints(&mut f, b, 0x1000, false);
            (Hint::from_bits(x), Hint::from_bits(x >> 4))
        };
        // push rax: writes the stack.
        assert_eq!(h(&[0x50]).1, Hint::Stack);
        // mov eax, [rip+0x10]
        assert_eq!(h(&[0x8b, 0x05, 0x10, 0, 0, 0]).0, Hint::Static);
        // mov rax, fs:[0x28]
        assert_eq!(h(&[0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0]).0, Hint::Tls);
        // mov rax, [rsp+8]
        assert_eq!(h(&[0x48, 0x8b, 0x44, 0x24, 0x08]).0, Hint::Stack);
        // add [rdi], eax: read and write through a pointer.
        assert_eq!(h(&[0x01, 0x07]), (Hint::Pointer, Hint::Pointer));
        // mov eax, [rbp-0x14]: a local where the function keeps a frame pointer, else any pointer.
        let rbp = [0x8b, 0x45, 0xec];
        assert_eq!(Hint::from_bits(decode_hints(&mut f, &rbp, 0x1000, true)), Hint::Stack);
        assert_eq!(Hint::from_bits(decode_hints(&mut f, &rbp, 0x1000, false)), Hint::Pointer);
    }
}
