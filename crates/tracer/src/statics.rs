//! What the tracer knows about code: modules, symbols, translated blocks and their roles. Updated at
//! translation time (never on the execution hot path, except for naming a call target that has no symbol).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use iced_x86::{Decoder, DecoderOptions, FlowControl, InstructionInfoFactory, Mnemonic, OpAccess, OpKind};
use trace::{
    Access, Block, Flow, Insn, LockKind, MemOperand, MetaRecord, Module, ModuleKind, Symbol, SymbolKind, NONE,
};

use crate::encode::BlockEvent;
use crate::loops::outer_loops;
use crate::modules::{load_elf, object_at, parse_maps, LoadedElf};
use crate::out::SpillBuf;
use crate::Config;

/// Role bits of a function entry.
pub const ROLE_REGION: u8 = 1;
pub const ROLE_EXCLUDED: u8 = 2;
pub const ROLE_LOCK: u8 = 4;
pub const ROLE_RELEASE: u8 = 8;
/// Lock kind in bits 4..7.
pub const ROLE_KIND_SHIFT: u8 = 4;
pub const ROLE_KIND_MASK: u8 = 0x70;
/// The block is a PLT stub: its role comes from the name it was called by, and the function it jumps to
/// does not get a lock role again (glibc aliases, e.g. `pthread_spin_init` = `pthread_spin_unlock`).
pub const ROLE_PLT: u8 = 0x80;

/// `loop_flags`: low 16 bits = index of the loop header instruction + 1; this bit = an exit target.
pub const LOOP_EXIT: u32 = 1 << 31;
/// `loop_flags`: the header block can leave the loop (a top-tested loop).
pub const LOOP_HEADER_EXITS: u32 = 1 << 30;

/// A translated block as the hot path sees it. Leaked: lives as long as the process.
#[derive(Debug)]
pub struct TbDesc {
    pub id: u32,
    pub addr: u64,
    /// One past the last byte.
    pub end: u64,
    pub n: u32,
    pub first_insn: u32,
    pub term: Flow,
    /// What the block's last instruction means for the next block ([`Exit`]), from `term`.
    pub exit: Exit,
    /// The block's `Block` event, encoded.
    pub ev: BlockEvent,
    /// Symbol id when the block starts a function (or a call made it one); `NONE` otherwise.
    pub entry_sym: AtomicU32,
    /// `ROLE_*` bits of the function the block starts.
    pub role: AtomicU8,
    pub loop_flags: AtomicU32,
}

/// Whether the block after a block needs the shadow stack's attention (see `ThreadState::transition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Falls through, system call, ...: nothing.
    None,
    /// A call or a return: always.
    Always,
    /// A jump or branch: only into a function's entry (a tail call).
    IfEntry,
}

impl Exit {
    pub fn of(term: Flow) -> Exit {
        match term {
            Flow::Call | Flow::IndirectCall | Flow::Return => Exit::Always,
            Flow::Jump | Flow::IndirectJump | Flow::CondBranch => Exit::IfEntry,
            _ => Exit::None,
        }
    }
}

impl TbDesc {
    /// Whether control passing from this block to `next` is more than a plain block: a call, a return or
    /// maybe a tail call.
    #[inline(always)]
    pub fn exit_into(&self, next: &TbDesc) -> bool {
        match self.exit {
            Exit::None => false,
            Exit::Always => true,
            Exit::IfEntry => next.entry_sym.load(Ordering::Relaxed) != NONE,
        }
    }

    pub fn lock_kind(role: u8) -> LockKind {
        LockKind::from_u64(u64::from((role & ROLE_KIND_MASK) >> ROLE_KIND_SHIFT)).unwrap_or(LockKind::Mutex)
    }
}

#[derive(Debug)]
struct ModuleInfo {
    start: u64,
    end: u64,
    path: String,
    elf: Option<LoadedElf>,
}

/// Lock functions by name: (name, kind, release).
const LOCK_FUNCTIONS: &[(&str, LockKind, bool)] = &[
    ("pthread_mutex_lock", LockKind::Mutex, false),
    ("pthread_mutex_trylock", LockKind::Mutex, false),
    ("pthread_mutex_timedlock", LockKind::Mutex, false),
    ("pthread_mutex_clocklock", LockKind::Mutex, false),
    ("pthread_mutex_unlock", LockKind::Mutex, true),
    ("pthread_spin_lock", LockKind::Spin, false),
    ("pthread_spin_trylock", LockKind::Spin, false),
    ("pthread_spin_unlock", LockKind::Spin, true),
    ("pthread_rwlock_rdlock", LockKind::RwLock, false),
    ("pthread_rwlock_wrlock", LockKind::RwLock, false),
    ("pthread_rwlock_tryrdlock", LockKind::RwLock, false),
    ("pthread_rwlock_trywrlock", LockKind::RwLock, false),
    ("pthread_rwlock_unlock", LockKind::RwLock, true),
    ("GOMP_critical_start", LockKind::OmpCritical, false),
    ("GOMP_critical_name_start", LockKind::OmpCritical, false),
    ("GOMP_critical_end", LockKind::OmpCritical, true),
    ("GOMP_critical_name_end", LockKind::OmpCritical, true),
    ("omp_set_lock", LockKind::OmpLock, false),
    ("omp_set_nest_lock", LockKind::OmpLock, false),
    ("omp_test_lock", LockKind::OmpLock, false),
    ("omp_unset_lock", LockKind::OmpLock, true),
    ("omp_unset_nest_lock", LockKind::OmpLock, true),
];

/// Whether `want` (from the command line) names a symbol: its demangled name, that name without the
/// parameter list, or any raw alias.
pub fn name_matches(want: &str, name: &str, aliases: &[String]) -> bool {
    if want == name || aliases.iter().any(|a| a == want) {
        return true;
    }
    match name.find('(') {
        Some(p) => &name[..p] == want,
        None => false,
    }
}

/// Static knowledge, behind one lock.
#[derive(Debug)]
pub struct Statics {
    pub buf: SpillBuf,
    modules: Vec<ModuleInfo>,
    next_module: u32,
    entries: HashMap<u64, (u32, u8)>,
    next_sym: u32,
    tbs: HashMap<(u64, u64), &'static TbDesc>,
    next_tb: u32,
    next_insn: u32,
    /// Loop marks of `--per-iteration` functions: address → (header instruction marker or exit).
    loop_headers: HashMap<u64, bool>,
    loop_exits: HashMap<u64, ()>,
    /// Region functions whose loops were looked for.
    analysed: HashSet<u64>,
    loop_syms: HashSet<u32>,
    pub function_found: bool,
    info: InstructionInfoFactory,
    checked_guest_base: bool,
}

impl Statics {
    pub fn new(buf: SpillBuf) -> Statics {
        Statics {
            buf,
            modules: Vec::new(),
            next_module: 0,
            entries: HashMap::new(),
            next_sym: 0,
            tbs: HashMap::new(),
            next_tb: 0,
            next_insn: 0,
            loop_headers: HashMap::new(),
            loop_exits: HashMap::new(),
            analysed: HashSet::new(),
            loop_syms: HashSet::new(),
            function_found: false,
            info: InstructionInfoFactory::new(),
            checked_guest_base: false,
        }
    }

    pub fn record(&mut self, rec: &MetaRecord) {
        let mut v = Vec::new();
        rec.encode(&mut v);
        trace::Sink::put_bytes(&mut self.buf, &v);
        self.buf.publish();
    }

    fn module_of(&self, addr: u64) -> Option<usize> {
        self.modules.iter().position(|m| m.start <= addr && addr < m.end)
    }

    /// Makes sure the object containing `addr` is known, loading its symbols on first sight.
    fn ensure_module(&mut self, cfg: &Config, addr: u64) {
        if self.module_of(addr).is_some() {
            return;
        }
        let maps = std::fs::read_to_string("/proc/self/maps").map(|t| parse_maps(&t)).unwrap_or_default();
        let first = !self.checked_guest_base;
        self.checked_guest_base = true;
        let Some((start, end, base, path)) = object_at(&maps, addr) else {
            if first {
                self.record(&MetaRecord::Note(format!(
                    "code at {addr:#x} is not in any mapping of the QEMU process: guest_base is not 0, so modules \
                     and symbols are unknown"
                )));
            }
            // An unmapped page: remember a one-page anonymous module so we do not read maps again for it.
            let id = self.next_module;
            self.next_module += 1;
            let start = addr & !0xfff;
            self.record(&MetaRecord::Module(Module {
                id,
                path: "[unknown]".into(),
                start,
                end: start + 0x1000,
                bias: 0,
                kind: ModuleKind::Anonymous,
            }));
            self.modules.push(ModuleInfo { start, end: start + 0x1000, path: String::new(), elf: None });
            return;
        };
        let id = self.next_module;
        self.next_module += 1;
        let (elf, note) = if path.is_empty() {
            (None, None)
        } else {
            match load_elf(&path, base) {
                Ok(e) => (Some(e), None),
                Err(e) => (None, Some(format!("no symbols for {path}: {e}"))),
            }
        };
        let kind = if path.is_empty() {
            ModuleKind::Anonymous
        } else if cfg.program_path.as_deref().is_some_and(|p| same_file(p, &path)) {
            ModuleKind::Main
        } else {
            ModuleKind::Library
        };
        self.record(&MetaRecord::Module(Module {
            id,
            path: if path.is_empty() { "[anon]".into() } else { path.clone() },
            start,
            end,
            bias: elf.as_ref().map_or(0, |e| e.bias),
            kind,
        }));
        if let Some(n) = note {
            self.record(&MetaRecord::Note(n));
        }
        if let Some(elf) = &elf {
            let mut recs = Vec::new();
            for s in &elf.symbols {
                if self.entries.contains_key(&s.addr) {
                    continue;
                }
                let sid = self.next_sym;
                self.next_sym += 1;
                let mut role = if s.plt { ROLE_PLT } else { 0 };
                let plain: Vec<String> = s.aliases.iter().map(|a| a.trim_end_matches("@plt").to_string()).collect();
                let plain_name = s.name.trim_end_matches("@plt");
                if let Some(f) = &cfg.function {
                    if name_matches(f, &s.name, &s.aliases) && !s.plt {
                        role |= ROLE_REGION;
                        self.function_found = true;
                    }
                }
                if cfg.exclude.iter().any(|x| name_matches(x, plain_name, &plain)) {
                    role |= ROLE_EXCLUDED;
                }
                for &(n, kind, release) in LOCK_FUNCTIONS {
                    if plain.iter().any(|a| a == n) {
                        role |= ROLE_LOCK | if release { ROLE_RELEASE } else { 0 } | ((kind as u8) << ROLE_KIND_SHIFT);
                        break;
                    }
                }
                self.entries.insert(s.addr, (sid, role));
                recs.push(MetaRecord::Symbol(Symbol {
                    id: sid,
                    module: id,
                    addr: s.addr,
                    size: s.size,
                    kind: if s.plt { SymbolKind::Plt } else { SymbolKind::Function },
                    mangled: if s.mangled != s.name { s.mangled.clone() } else { String::new() },
                    name: s.name.clone(),
                }));
            }
            for r in &recs {
                self.record(r);
            }
        }
        self.modules.push(ModuleInfo { start, end, path, elf });
    }

    /// Names a call target that has no symbol: `module+0xOFFSET`.
    pub fn synth_symbol(&mut self, addr: u64) -> u32 {
        if let Some(&(s, _)) = self.entries.get(&addr) {
            return s;
        }
        let (module, name) = match self.module_of(addr) {
            Some(i) => {
                let m = &self.modules[i];
                let base = m.elf.as_ref().map_or(m.start, |e| e.bias);
                let short = if m.path.is_empty() { "[anon]" } else { module_short_name(&m.path) };
                (i as u32, format!("{short}+{:#x}", addr.wrapping_sub(base)))
            }
            None => (NONE, format!("{addr:#x}")),
        };
        let sid = self.next_sym;
        self.next_sym += 1;
        self.entries.insert(addr, (sid, 0));
        self.record(&MetaRecord::Symbol(Symbol {
            id: sid,
            module,
            addr,
            size: 0,
            kind: SymbolKind::Synthetic,
            name,
            mangled: String::new(),
        }));
        sid
    }

    /// The block for a translation, creating (and recording) it on first sight. `insns` are the instruction
    /// bytes QEMU translated.
    pub fn block_for(&mut self, cfg: &Config, vaddr: u64, insns: &[&[u8]]) -> &'static TbDesc {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for i in insns {
            for &b in i.iter() {
                h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
            h = (h ^ 0xff).wrapping_mul(0x100_0000_01b3);
        }
        if let Some(d) = self.tbs.get(&(vaddr, h)) {
            return d;
        }
        self.ensure_module(cfg, vaddr);
        let mut out = Vec::with_capacity(insns.len());
        let mut at = vaddr;
        for bytes in insns {
            out.push(self.decode(at, bytes));
            at += bytes.len() as u64;
        }
        let id = self.next_tb;
        self.next_tb += 1;
        let first_insn = self.next_insn;
        self.next_insn = self.next_insn.wrapping_add(out.len() as u32);
        let term = out.last().map_or(Flow::Next, |i| i.flow);
        let (entry_sym, role) = self.entries.get(&vaddr).copied().unwrap_or((NONE, 0));
        let desc: &'static TbDesc = Box::leak(Box::new(TbDesc {
            id,
            addr: vaddr,
            end: at,
            n: out.len() as u32,
            first_insn,
            term,
            exit: Exit::of(term),
            ev: BlockEvent::new(id),
            entry_sym: AtomicU32::new(entry_sym),
            role: AtomicU8::new(role),
            loop_flags: AtomicU32::new(0),
        }));
        self.record(&MetaRecord::Block(Block { id, addr: vaddr, first_insn, insns: out }));
        if role & ROLE_REGION != 0 && cfg.per_iteration {
            self.analyse_loop(entry_sym, vaddr);
        }
        self.mark_loop(desc, insns);
        self.tbs.insert((vaddr, h), desc);
        desc
    }

    fn mark_loop(&self, desc: &TbDesc, insns: &[&[u8]]) {
        if self.loop_headers.is_empty() {
            return;
        }
        let mut flags = 0u32;
        let mut at = desc.addr;
        for (k, i) in insns.iter().enumerate() {
            if let Some(&exits) = self.loop_headers.get(&at) {
                flags |= k as u32 + 1;
                if exits {
                    flags |= LOOP_HEADER_EXITS;
                }
                break;
            }
            at += i.len() as u64;
        }
        if self.loop_exits.contains_key(&desc.addr) {
            flags |= LOOP_EXIT;
        }
        desc.loop_flags.store(flags, Ordering::Relaxed);
    }

    fn analyse_loop(&mut self, sym: u32, entry: u64) {
        if self.analysed.contains(&entry) {
            return;
        }
        let found = self
            .module_of(entry)
            .and_then(|i| {
                let elf = self.modules[i].elf.as_ref()?;
                let s = elf.symbols.iter().find(|s| s.addr == entry)?;
                let size = if s.size > 0 { s.size } else { 1 << 16 };
                let code = elf.code_at(entry, size)?;
                Some(outer_loops(code, entry, entry))
            })
            .unwrap_or_default();
        for l in &found {
            self.loop_headers.insert(l.header, l.header_exits);
            if let Some(p) = l.peeled {
                self.loop_headers.insert(p, false);
                self.record(&MetaRecord::Note(format!(
                    "--per-iteration: the first iteration of the loop at {:#x} is peeled off at {p:#x}",
                    l.header
                )));
            }
            for &e in &l.exits {
                self.loop_exits.insert(e, ());
            }
            self.record(&MetaRecord::LoopHeader { function: sym, addr: l.header });
            self.loop_syms.insert(sym);
        }
        if found.is_empty() {
            self.record(&MetaRecord::Note(format!(
                "--per-iteration: no loop found in the function at {entry:#x}; each invocation is one SIMT thread"
            )));
        }
        // Blocks translated before the analysis keep their (possibly stale) marks; the entry is translated
        // first in practice, before any block of its body.
        self.analysed.insert(entry);
    }

    /// Whether `--per-iteration` found a loop in the region function `sym`.
    pub fn has_loop(&self, sym: u32) -> bool {
        self.loop_syms.contains(&sym)
    }

    fn decode(&mut self, addr: u64, bytes: &[u8]) -> Insn {
        let mut d = Decoder::with_ip(64, bytes, addr, DecoderOptions::NONE);
        let i = d.decode();
        if i.is_invalid() {
            return Insn {
                addr,
                bytes: bytes.to_vec(),
                flow: Flow::Other,
                atomic: false,
                mnemonic: "(bad)".into(),
                mem: vec![],
            };
        }
        let flow = match i.mnemonic() {
            Mnemonic::Syscall | Mnemonic::Sysenter => Flow::Syscall,
            _ => match i.flow_control() {
                FlowControl::Next => Flow::Next,
                FlowControl::Call => Flow::Call,
                FlowControl::IndirectCall => Flow::IndirectCall,
                FlowControl::Return => Flow::Return,
                FlowControl::UnconditionalBranch => Flow::Jump,
                FlowControl::IndirectBranch => Flow::IndirectJump,
                FlowControl::ConditionalBranch => Flow::CondBranch,
                FlowControl::Interrupt => Flow::Interrupt,
                _ => Flow::Other,
            },
        };
        let has_mem_op = (0..i.op_count()).any(|k| matches!(i.op_kind(k), OpKind::Memory));
        let atomic = i.has_lock_prefix() || (i.mnemonic() == Mnemonic::Xchg && has_mem_op);
        let info = self.info.info(&i);
        let mem = info
            .used_memory()
            .iter()
            .map(|m| MemOperand {
                size: m.memory_size().size() as u16,
                access: match m.access() {
                    OpAccess::Read | OpAccess::CondRead => Access::Read,
                    OpAccess::Write | OpAccess::CondWrite => Access::Write,
                    OpAccess::ReadWrite | OpAccess::ReadCondWrite => Access::ReadWrite,
                    _ => Access::None,
                },
            })
            .collect();
        Insn { addr, bytes: bytes.to_vec(), flow, atomic, mnemonic: format!("{:?}", i.mnemonic()).to_lowercase(), mem }
    }
}

fn module_short_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn same_file(a: &str, b: &str) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
