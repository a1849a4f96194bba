//! Static and bookkeeping records: modules, symbols, blocks (with their instructions), threads, SIMT threads.
//! They travel in `Meta` chunks, in the order the tracer learned them, and always precede the events that
//! refer to them.

use serde::Serialize;

use crate::varint::{self, Cursor, DecodeError};

/// A mapped ELF object (the program, a shared library, the dynamic linker) or an anonymous code region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Module {
    pub id: u32,
    /// Path of the file, or `[anon]` for code without a file.
    pub path: String,
    /// Lowest and one-past-highest mapped address.
    pub start: u64,
    pub end: u64,
    /// Load bias: runtime address = ELF virtual address + bias.
    pub bias: u64,
    pub kind: ModuleKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModuleKind {
    /// The traced program's executable.
    Main = 0,
    /// A shared library or the dynamic linker.
    Library = 1,
    /// Code with no file behind it (JIT code, vDSO-like pages).
    Anonymous = 2,
}

/// A function name at an address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    pub id: u32,
    /// The module it belongs to (`u32::MAX` when none).
    pub module: u32,
    pub addr: u64,
    /// Size in bytes; 0 when the symbol table does not say.
    pub size: u64,
    pub kind: SymbolKind,
    /// Demangled name (`std::vector<int>::push_back(int const&)`), `foo@plt` for a PLT stub, or
    /// `module+0xOFFSET` for a function found by a call without a symbol.
    pub name: String,
    /// The raw (mangled) name when it differs from `name`.
    pub mangled: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// From an ELF symbol table.
    Function = 0,
    /// A PLT stub, named after the function it jumps to.
    Plt = 1,
    /// Made up by the tracer for a call target without a symbol.
    Synthetic = 2,
}

/// Control-flow class of an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flow {
    Next = 0,
    Call = 1,
    IndirectCall = 2,
    Return = 3,
    Jump = 4,
    IndirectJump = 5,
    CondBranch = 6,
    Syscall = 7,
    Interrupt = 8,
    Other = 9,
}

impl Flow {
    pub fn from_u8(v: u8) -> Option<Flow> {
        Some(match v {
            0 => Flow::Next,
            1 => Flow::Call,
            2 => Flow::IndirectCall,
            3 => Flow::Return,
            4 => Flow::Jump,
            5 => Flow::IndirectJump,
            6 => Flow::CondBranch,
            7 => Flow::Syscall,
            8 => Flow::Interrupt,
            9 => Flow::Other,
            _ => return None,
        })
    }

    /// Whether control may go anywhere but the next instruction.
    pub fn is_transfer(self) -> bool {
        !matches!(self, Flow::Next)
    }

    pub fn is_call(self) -> bool {
        matches!(self, Flow::Call | Flow::IndirectCall)
    }

    pub fn is_jump(self) -> bool {
        matches!(self, Flow::Jump | Flow::IndirectJump | Flow::CondBranch)
    }
}

/// How an instruction's memory operand is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read = 0,
    Write = 1,
    ReadWrite = 2,
    /// Address computation only (`lea`) or a prefetch/hint.
    None = 3,
}

/// A memory operand as the decoder sees it (the dynamic accesses are in the events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MemOperand {
    pub size: u16,
    pub access: Access,
}

/// One instruction of a block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Insn {
    pub addr: u64,
    pub bytes: Vec<u8>,
    pub flow: Flow,
    /// A `lock`-prefixed read-modify-write or an `xchg` with memory.
    pub atomic: bool,
    /// Lower-case mnemonic (`mov`, `addsd`, `lock cmpxchg` is `cmpxchg` with `atomic`).
    pub mnemonic: String,
    pub mem: Vec<MemOperand>,
}

/// A translated block: straight-line code entered at `addr`. Blocks are what the tracer saw QEMU translate;
/// several may overlap (a jump into the middle of a block starts a new one); [`crate::BasicBlocks`] splits them
/// into basic blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    pub id: u32,
    pub addr: u64,
    /// Global index of the first instruction (blocks number their instructions consecutively in id order).
    pub first_insn: u32,
    pub insns: Vec<Insn>,
}

impl Block {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.insns.last().map_or(self.addr, |i| i.addr + i.bytes.len() as u64)
    }

    pub fn terminator(&self) -> Flow {
        self.insns.last().map_or(Flow::Next, |i| i.flow)
    }
}

/// An OS thread, in the order the tracer first saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadInfo {
    /// Index of the OS thread (its event stream number), in order of first execution.
    pub os: u32,
    /// The host/guest thread id (`gettid`).
    pub tid: u32,
    /// Creation order: 0 for the main thread, then in the order `clone` created them.
    pub rank: u32,
}

/// Totals of an OS thread that ended (absent when the program died with the thread alive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadEnd {
    pub os: u32,
    /// Instructions the thread executed while tracing was on (inside and outside SIMT threads).
    pub insns: u64,
    /// Of those, instructions outside any SIMT thread (with `--function`).
    pub outside: u64,
}

/// A SIMT thread: a segment of one OS thread's event stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimtStart {
    /// Global id in start order.
    pub simt: u32,
    pub os: u32,
    /// Start order within the OS thread.
    pub index_in_os: u32,
    /// The `--function` symbol whose invocation this is (`u32::MAX` without `--function`).
    pub function: u32,
    /// With `--per-iteration`: the iteration number within the invocation; otherwise `u64::MAX`.
    pub iteration: u64,
    /// Where the segment starts: sequence number of the OS thread's event chunk and offset in its payload.
    pub chunk_seq: u32,
    pub offset: u32,
}

/// A SIMT thread ended, with its instruction count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimtEnd {
    pub simt: u32,
    pub insns: u64,
}

/// A record of the meta stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaRecord {
    Module(Module),
    Symbol(Symbol),
    Block(Block),
    Thread(ThreadInfo),
    ThreadEnd(ThreadEnd),
    SimtStart(SimtStart),
    SimtEnd(SimtEnd),
    /// With `--per-iteration`: the loop header chosen for a function.
    LoopHeader {
        function: u32,
        addr: u64,
    },
    /// A warning or fact from the tracer.
    Note(String),
}

const T_MODULE: u64 = 1;
const T_SYMBOL: u64 = 2;
const T_BLOCK: u64 = 3;
const T_THREAD: u64 = 4;
const T_THREAD_END: u64 = 5;
const T_SIMT_START: u64 = 6;
const T_SIMT_END: u64 = 7;
const T_LOOP: u64 = 8;
const T_NOTE: u64 = 9;

impl MetaRecord {
    /// Appends the record's encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        use varint::{put, put_str};
        match self {
            MetaRecord::Module(m) => {
                put(out, T_MODULE);
                put(out, m.id.into());
                put_str(out, &m.path);
                put(out, m.start);
                put(out, m.end);
                put(out, m.bias);
                out.push(m.kind as u8);
            }
            MetaRecord::Symbol(s) => {
                put(out, T_SYMBOL);
                put(out, s.id.into());
                put(out, s.module.into());
                put(out, s.addr);
                put(out, s.size);
                out.push(s.kind as u8);
                put_str(out, &s.name);
                put_str(out, &s.mangled);
            }
            MetaRecord::Block(b) => {
                put(out, T_BLOCK);
                put(out, b.id.into());
                put(out, b.addr);
                put(out, b.insns.len() as u64);
                for i in &b.insns {
                    out.push(i.bytes.len() as u8);
                    out.extend_from_slice(&i.bytes);
                    out.push(i.flow as u8 | if i.atomic { 0x80 } else { 0 });
                    put_str(out, &i.mnemonic);
                    put(out, i.mem.len() as u64);
                    for m in &i.mem {
                        put(out, m.size.into());
                        out.push(m.access as u8);
                    }
                }
            }
            MetaRecord::Thread(t) => {
                put(out, T_THREAD);
                put(out, t.os.into());
                put(out, t.tid.into());
                put(out, t.rank.into());
            }
            MetaRecord::ThreadEnd(t) => {
                put(out, T_THREAD_END);
                put(out, t.os.into());
                put(out, t.insns);
                put(out, t.outside);
            }
            MetaRecord::SimtStart(s) => {
                put(out, T_SIMT_START);
                put(out, s.simt.into());
                put(out, s.os.into());
                put(out, s.index_in_os.into());
                put(out, s.function.into());
                put(out, s.iteration);
                put(out, s.chunk_seq.into());
                put(out, s.offset.into());
            }
            MetaRecord::SimtEnd(s) => {
                put(out, T_SIMT_END);
                put(out, s.simt.into());
                put(out, s.insns);
            }
            MetaRecord::LoopHeader { function, addr } => {
                put(out, T_LOOP);
                put(out, (*function).into());
                put(out, *addr);
            }
            MetaRecord::Note(n) => {
                put(out, T_NOTE);
                put_str(out, n);
            }
        }
    }

    /// Decodes one record. `next_insn` is the global index the next block's first instruction gets.
    pub fn decode(c: &mut Cursor<'_>, next_insn: u32) -> Result<MetaRecord, DecodeError> {
        let tag = c.varint()?;
        Ok(match tag {
            T_MODULE => {
                let id = c.varint_u32()?;
                let path = c.string()?;
                let start = c.varint()?;
                let end = c.varint()?;
                let bias = c.varint()?;
                let kind = match c.u8()? {
                    0 => ModuleKind::Main,
                    1 => ModuleKind::Library,
                    2 => ModuleKind::Anonymous,
                    _ => return Err(DecodeError("unknown module kind")),
                };
                MetaRecord::Module(Module { id, path, start, end, bias, kind })
            }
            T_SYMBOL => {
                let id = c.varint_u32()?;
                let module = c.varint_u32()?;
                let addr = c.varint()?;
                let size = c.varint()?;
                let kind = match c.u8()? {
                    0 => SymbolKind::Function,
                    1 => SymbolKind::Plt,
                    2 => SymbolKind::Synthetic,
                    _ => return Err(DecodeError("unknown symbol kind")),
                };
                let name = c.string()?;
                let mangled = c.string()?;
                MetaRecord::Symbol(Symbol { id, module, addr, size, kind, name, mangled })
            }
            T_BLOCK => {
                let id = c.varint_u32()?;
                let addr = c.varint()?;
                let n = c.varint()?;
                if n == 0 || n > 4096 {
                    return Err(DecodeError("a block has an implausible instruction count"));
                }
                let mut insns = Vec::with_capacity(n as usize);
                let mut at = addr;
                for _ in 0..n {
                    let len = c.u8()?;
                    if len == 0 || len > 15 {
                        return Err(DecodeError("an instruction has an impossible length"));
                    }
                    let bytes = c.bytes(len.into())?.to_vec();
                    let fl = c.u8()?;
                    let flow = Flow::from_u8(fl & 0x7f).ok_or(DecodeError("unknown control-flow class"))?;
                    let mnemonic = c.string()?;
                    let nmem = c.varint()?;
                    if nmem > 16 {
                        return Err(DecodeError("an instruction has too many memory operands"));
                    }
                    let mut mem = Vec::new();
                    for _ in 0..nmem {
                        let size = u16::try_from(c.varint()?).map_err(|_| DecodeError("memory operand size"))?;
                        let access = match c.u8()? {
                            0 => Access::Read,
                            1 => Access::Write,
                            2 => Access::ReadWrite,
                            3 => Access::None,
                            _ => return Err(DecodeError("unknown memory access kind")),
                        };
                        mem.push(MemOperand { size, access });
                    }
                    insns.push(Insn { addr: at, bytes, flow, atomic: fl & 0x80 != 0, mnemonic, mem });
                    at = at.wrapping_add(len.into());
                }
                MetaRecord::Block(Block { id, addr, first_insn: next_insn, insns })
            }
            T_THREAD => {
                MetaRecord::Thread(ThreadInfo { os: c.varint_u32()?, tid: c.varint_u32()?, rank: c.varint_u32()? })
            }
            T_THREAD_END => {
                MetaRecord::ThreadEnd(ThreadEnd { os: c.varint_u32()?, insns: c.varint()?, outside: c.varint()? })
            }
            T_SIMT_START => MetaRecord::SimtStart(SimtStart {
                simt: c.varint_u32()?,
                os: c.varint_u32()?,
                index_in_os: c.varint_u32()?,
                function: c.varint_u32()?,
                iteration: c.varint()?,
                chunk_seq: c.varint_u32()?,
                offset: c.varint_u32()?,
            }),
            T_SIMT_END => MetaRecord::SimtEnd(SimtEnd { simt: c.varint_u32()?, insns: c.varint()? }),
            T_LOOP => MetaRecord::LoopHeader { function: c.varint_u32()?, addr: c.varint()? },
            T_NOTE => MetaRecord::Note(c.string()?),
            _ => return Err(DecodeError("unknown meta record")),
        })
    }
}

/// The end record: the tracer finished cleanly (or the trace was completed from spill buffers).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EndRecord {
    /// How the program ended: `exit` (through `exit`/`exit_group`), `signal N`, or `unknown`.
    pub reason: String,
    /// Exit status when known.
    pub exit_code: Option<i64>,
    /// The tail of the trace was recovered from the tracer's spill buffers after the process died.
    pub recovered: bool,
    /// Instructions traced in total (all threads).
    pub insns: u64,
}

impl EndRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        varint::put_str(&mut out, &self.reason);
        match self.exit_code {
            Some(c) => {
                out.push(1);
                varint::put(&mut out, varint::zigzag(c));
            }
            None => out.push(0),
        }
        out.push(u8::from(self.recovered));
        varint::put(&mut out, self.insns);
        out
    }

    pub fn decode(data: &[u8]) -> Result<EndRecord, DecodeError> {
        let mut c = Cursor::new(data);
        let reason = c.string()?;
        let exit_code = if c.u8()? != 0 { Some(varint::unzigzag(c.varint()?)) } else { None };
        let recovered = c.u8()? != 0;
        let insns = c.varint()?;
        Ok(EndRecord { reason, exit_code, recovered, insns })
    }
}
