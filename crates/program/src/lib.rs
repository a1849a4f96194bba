//! Kernels decoded for execution, shared by both engines (the emulator interprets the ops, the JIT translates
//! them), so that both read every modifier and operand the same way.
//!
//! Decoding: an IR function becomes a [`Program`], a flat list of [`Op`]s whose operands are resolved to
//! register-file slots, immediates, and addresses of the launch (module variables have device addresses,
//! shared variables CTA offsets, local and `.param` variables per-thread frame offsets). Branch targets are
//! op indices, and each branch knows its reconvergence point (the immediate post-dominator).
//!
//! Decoding happens once per launch; everything the interpreter loop would otherwise recompute per warp
//! instruction (types, modes, layouts) is settled here, and every instruction the emulator cannot execute is
//! collected up front.

use std::collections::HashMap;

use device::{LoadedModule, SharedLayout, SharedVar};
use graph::{PostDom, PostDominatorTree};
use ir::{
    AddressBase, Body, Cfg, Component, FuncId, Function, Immediate, InstId, Module, Opcode, Operand, ScalarType,
    StateSpace, Symbol, TableTargets, Word,
};
use smallvec::SmallVec;

pub use crate::calls::is_builtin;
use crate::modifiers::mods;
pub use crate::op::{
    AtomOp, CallArg, Callee, Dst, Extra, Frame, Kind, MemRef, Mods, Op, Part, Program, Rnd, ShflMode, Space, Src, Sub,
    SymAddr, VideoArith, VideoOp, VoteMode,
};
pub use crate::types::{mask_bits, Ty};

/// Lanes per warp.
pub const WARP: usize = 32;

mod address32;
pub mod alu;
pub mod atom_vec;
pub mod bulk;
mod calls;
pub mod cluster;
pub mod convert;
pub mod copy;
pub mod float;
pub mod formatted;
mod forms;
pub mod grid;
pub mod hints;
pub mod mbarrier;
mod modifiers;
mod op;
pub mod printf;
pub mod stack;
pub mod store_async;
pub mod sured;
pub mod tensor;
pub mod tensormap;
pub mod texture;
pub mod tma;
mod types;
pub mod video;
pub mod warp;
pub mod wgmma;
pub mod wide;

/// What executing a warp instruction outside the decoder's simple cases (matrix, texture and surface
/// instructions) needs from an engine: every lane's registers, checked memory accesses, errors at the
/// instruction, and the launch's texture objects. The emulator implements it over its warps; the JIT over the
/// registers its threads spilled at the instruction.
pub trait WarpAccess {
    /// A source operand's value in every lane.
    fn read(&self, src: &Src) -> [u64; WARP];
    /// Writes `vals` to `dst` in the lanes of `mask`.
    fn write(&mut self, dst: Dst, vals: &[u64; WARP], mask: simt::LaneMask);
    /// The address `[base + offset]` of the instruction's memory operand in each lane of `exec`.
    fn addresses(&self, exec: simt::LaneMask) -> [u64; WARP];
    /// Reads `size` bytes for `lane`, with the same checks (and errors) as `ld`.
    fn load(&mut self, lane: u32, space: Space, address: u64, size: u32) -> Result<u64, device::ExecError>;
    /// Writes `size` bytes for `lane`, with the same checks (and errors) as `st`.
    fn store(&mut self, lane: u32, space: Space, address: u64, size: u32, value: u64) -> Result<(), device::ExecError>;
    /// Replaces the `size` bytes at `address` with `f` of their value, atomically with respect to every other
    /// thread of the launch (`sured`, the bulk, tensor and async reductions); returns the old value. The
    /// emulator runs one thread at a time, so a load and a store do; the JIT's CTAs run on several workers at
    /// once.
    fn update(
        &mut self,
        lane: u32,
        space: Space,
        address: u64,
        size: u32,
        f: &dyn Fn(u64) -> u64,
    ) -> Result<u64, device::ExecError> {
        let old = self.load(lane, space, address, size)?;
        self.store(lane, space, address, size, f(old))?;
        Ok(old)
    }
    /// A misaligned-access error for `lane`.
    fn misaligned(&self, lane: u32, space: Space, address: u64, size: u32) -> device::ExecError;
    /// An error of `lane` at this instruction.
    fn error(&self, lane: u32, kind: device::ErrorKind) -> device::ExecError;
    /// The texture and surface objects of the launch.
    fn textures(&self) -> &device::Textures;
}

/// Comparison of `setp`/`set` and their boolean combination: the `scalar` crate's.
pub use scalar::compare::{BoolOp, CmpOp as Cmp};

/// The 1-based PTX line of an instruction of `func`.
pub fn inst_line(module: &Module, func: FuncId, inst: InstId) -> u32 {
    let body = module.functions[func].body.as_ref().expect("instructions belong to defined functions");
    module.line_of(body.insts[inst].span)
}

/// An instruction as the user wrote it, on one line (or as the printer spells it, for a module built without
/// text): what error messages quote.
pub fn inst_text(module: &Module, func: FuncId, inst: InstId) -> String {
    let function = &module.functions[func];
    let body = function.body.as_ref().expect("instructions belong to defined functions");
    let written = module.source_text(body.insts[inst].span);
    if !written.is_empty() {
        return written.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    let mut s = String::new();
    let _ = ir::print::write_inst(&mut s, module, function, body, &body.insts[inst]);
    s
}

/// One entry of an engine's list of unsupported instructions: "PTX line N in `f`: `text` (why)".
pub fn unsupported_entry(module: &Module, func: FuncId, inst: InstId, why: &str) -> String {
    let (line, text) = (inst_line(module, func, inst), inst_text(module, func, inst));
    format!("PTX line {line} in `{}`: `{text}` ({why})", module.functions[func].name)
}

/// The address windows the emulator gives non-global spaces in generic addressing. No host pointer (and so
/// no device pointer) lies in them.
pub const SHARED_WINDOW: u64 = 0xFF00_0000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0xFE00_0000_0000_0000;
pub const PARAM_WINDOW: u64 = 0xFD00_0000_0000_0000;
pub const WINDOW_SIZE: u64 = 1 << 40;

/// Decodes every function a kernel can reach. Returns the programs (indexed by `FuncId`) or the list of
/// unsupported instructions, each with its PTX line.
pub fn decode_all(
    loaded: &LoadedModule,
    kernel: FuncId,
    shared: &SharedLayout,
) -> Result<HashMap<FuncId, Program>, Vec<String>> {
    let module = &loaded.module;
    let mut programs = HashMap::new();
    let mut unsupported = Vec::new();
    for f in device::module::reachable_functions(module, kernel) {
        let func = &module.functions[f];
        let Some(body) = &func.body else { continue };
        let mut d = Decoder { loaded, module, func, fid: f, body, shared, unsupported: &mut unsupported };
        programs.insert(f, d.program());
    }
    if unsupported.is_empty() {
        Ok(programs)
    } else {
        Err(unsupported)
    }
}

/// What the decoders of instruction families kept in their own files (`tensor.rs`, `texture.rs`) may use:
/// the instruction and its operands resolved to register slots, immediates and addresses.
#[allow(missing_debug_implementations)]
pub struct OperandCx<'d, 'a> {
    d: &'d mut Decoder<'a>,
    i: InstId,
    regs: &'d RegMap,
    frame: &'d Frame,
}

impl<'a> OperandCx<'_, 'a> {
    pub fn inst(&self) -> &'a ir::Inst {
        &self.d.body.insts[self.i]
    }

    pub fn src(&mut self, o: &Operand, ty: Ty) -> Src {
        self.d.src(self.i, o, ty, self.regs, self.frame)
    }

    pub fn dst(&mut self, o: &Operand) -> Dst {
        self.d.dst(self.i, o, self.regs)
    }

    pub fn mem(&mut self, o: Option<&Operand>) -> MemRef {
        self.d.mem(self.i, o, self.regs, self.frame)
    }

    /// Records the instruction as unsupported, with the reason.
    pub fn unsupported(&mut self, why: &str) {
        self.d.unsupported(self.i, why);
    }
}

/// A decoder of one instruction family kept in a file of its own: fills the op or records why it is refused.
type Decode<'a> = fn(&mut Decoder<'a>, &mut Op, InstId, &RegMap, &Frame);

struct Decoder<'a> {
    loaded: &'a LoadedModule,
    module: &'a Module,
    func: &'a Function,
    fid: FuncId,
    body: &'a Body,
    shared: &'a SharedLayout,
    unsupported: &'a mut Vec<String>,
}

/// Register-file placement: vector registers take one slot per element, `.b128` registers two (low half
/// first), predicates live apart.
struct RegMap {
    slot: Vec<u32>,
    is_pred: Vec<bool>,
    width: Vec<u32>,
    slots: u32,
    preds: u32,
    /// The declared type of each slot's register (the element type for a vector register).
    slot_types: Vec<Ty>,
}

impl RegMap {
    fn new(body: &Body) -> RegMap {
        let mut m = RegMap { slot: vec![], is_pred: vec![], width: vec![], slots: 0, preds: 0, slot_types: vec![] };
        for r in body.regs.values() {
            if r.ty == ScalarType::Pred {
                m.slot.push(m.preds);
                m.preds += 1;
                m.is_pred.push(true);
                m.width.push(1);
            } else {
                // A slot holds 64 bits: a `.b128` register is two, each typed `B128` (the JIT's vector path
                // refuses kernels with such slots).
                let per = if r.ty == ScalarType::B128 { 2 } else { 1 };
                let n = per * r.vector.unwrap_or(1);
                m.slot.push(m.slots);
                m.slots += u32::from(n);
                m.slot_types.extend(std::iter::repeat_n(Ty::from_scalar(r.ty), usize::from(n)));
                m.is_pred.push(false);
                m.width.push(r.ty.size() * 8);
            }
        }
        m
    }
}

impl Decoder<'_> {
    fn program(&mut self) -> Program {
        let regs = RegMap::new(self.body);
        let frame = self.frame_layout();
        let cfg = Cfg::compute(self.body);
        let pdom = PostDominatorTree::compute(&cfg);
        let mut block_pc = Vec::with_capacity(self.body.blocks.len() + 1);
        let mut pc = 0u32;
        for b in self.body.blocks.values() {
            block_pc.push(pc);
            pc += b.insts.len() as u32;
        }
        let end_pc = pc;
        let mut ops = Vec::with_capacity(self.body.insts.len());
        for (block, data) in self.body.blocks.iter() {
            let reconverge = match pdom.ipdom(block) {
                // An empty block has the pc of the next one; the end of the function means "exit".
                PostDom::Node(n) => Some(block_pc[n.as_u32() as usize]),
                _ => None,
            };
            for &i in &data.insts {
                let mut op = self.op(i, &regs, &frame, &block_pc);
                if matches!(op.kind, Kind::Bra | Kind::Brx) {
                    op.reconverge = reconverge.filter(|&r| r < end_pc);
                }
                ops.push(op);
            }
        }
        Program {
            func: self.fid,
            name: self.func.name.clone(),
            ops,
            slots: regs.slots,
            preds: regs.preds,
            slot_types: regs.slot_types,
            frame,
            is_kernel: self.func.is_kernel(),
        }
    }

    fn frame_layout(&self) -> Frame {
        let mut frame = Frame::default();
        let mut offset = 0u64;
        let mut place = |size: u64, align: u64| {
            let align = align.max(1);
            offset = offset.div_ceil(align) * align;
            let at = offset;
            offset += size;
            (at, size)
        };
        if !self.func.is_kernel() {
            for p in &self.func.params {
                frame.params.push(place(p.size(), p.alignment()));
            }
        }
        for p in &self.func.returns {
            frame.returns.push(place(p.size(), p.alignment()));
        }
        for (v, var) in self.body.vars.iter() {
            if matches!(var.space, StateSpace::Local | StateSpace::Param) {
                let at = place(device::module::variable_size(var), var.alignment()).0;
                frame.vars.insert(v, at);
            }
        }
        frame.size = offset.div_ceil(16) * 16;
        frame
    }

    fn unsupported(&mut self, inst: InstId, why: &str) {
        self.unsupported.push(unsupported_entry(self.module, self.fid, inst, why));
    }

    fn symbol_addr(&self, s: Symbol, frame: &Frame) -> Option<SymAddr> {
        Some(match s {
            Symbol::Global(g) => {
                let var = &self.module.globals[g];
                match var.space {
                    StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => {
                        SymAddr::Shared(*self.shared.offsets.get(&SharedVar::Global(g))?)
                    }
                    _ => SymAddr::Global(self.loaded.global_address(g)?),
                }
            }
            Symbol::Local(v) => {
                let var = &self.body.vars[v];
                match var.space {
                    StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => {
                        SymAddr::Shared(*self.shared.offsets.get(&SharedVar::Local(self.fid, v))?)
                    }
                    StateSpace::Local | StateSpace::Param => SymAddr::Frame(*frame.vars.get(&v)?),
                    _ => return None,
                }
            }
            Symbol::Param(i) => {
                if self.func.is_kernel() {
                    let (slots, _) = device::launch::param_layout(&self.func.params);
                    SymAddr::KernelParam(slots.get(i as usize)?.offset)
                } else {
                    SymAddr::Frame(frame.params.get(i as usize)?.0)
                }
            }
            Symbol::Return(i) => SymAddr::Frame(frame.returns.get(i as usize)?.0),
            Symbol::Func(f) => SymAddr::Func(LoadedModule::function_address(f)),
        })
    }

    fn src(&mut self, inst: InstId, op: &Operand, ty: Ty, regs: &RegMap, frame: &Frame) -> Src {
        match op {
            Operand::Reg(r) => {
                let i = r.as_u32() as usize;
                if regs.is_pred[i] {
                    Src::Pred(regs.slot[i], false)
                } else {
                    Src::Reg(regs.slot[i])
                }
            }
            Operand::RegElement(r, c) => Src::Reg(regs.slot[r.as_u32() as usize] + component(*c)),
            Operand::Not(r) => Src::Pred(regs.slot[r.as_u32() as usize], true),
            Operand::Imm(imm) => Src::Imm(immediate(*imm, ty)),
            Operand::Special(s, c) => Src::Special(*s, c.map_or(0, component) as u8),
            Operand::Symbol(s) => match self.symbol_addr(*s, frame) {
                Some(a) => Src::Sym(a, 0),
                None => {
                    self.unsupported(inst, "operand has no address in the emulator");
                    Src::None
                }
            },
            Operand::SymbolOffset(s, off) => match self.symbol_addr(*s, frame) {
                Some(a) => Src::Sym(a, *off),
                None => {
                    self.unsupported(inst, "operand has no address in the emulator");
                    Src::None
                }
            },
            Operand::Sink => Src::None,
            _ => {
                self.unsupported(inst, "operand form not supported");
                Src::None
            }
        }
    }

    fn dst(&mut self, inst: InstId, op: &Operand, regs: &RegMap) -> Dst {
        match op {
            Operand::Reg(r) => {
                let i = r.as_u32() as usize;
                if regs.is_pred[i] {
                    Dst::Pred(regs.slot[i])
                } else {
                    Dst::Reg(regs.slot[i], mask_bits(regs.width[i]))
                }
            }
            Operand::RegElement(r, c) => {
                let i = r.as_u32() as usize;
                Dst::Reg(regs.slot[i] + component(*c), mask_bits(regs.width[i]))
            }
            Operand::Sink => Dst::Sink,
            _ => {
                self.unsupported(inst, "destination form not supported");
                Dst::None
            }
        }
    }

    fn mem(&mut self, inst: InstId, op: Option<&Operand>, regs: &RegMap, frame: &Frame) -> MemRef {
        match op {
            Some(Operand::Address(a)) => {
                let base = match a.base {
                    AddressBase::Reg(r) => Src::Reg(regs.slot[r.as_u32() as usize]),
                    AddressBase::Symbol(s) => match self.symbol_addr(s, frame) {
                        Some(sa) => Src::Sym(sa, 0),
                        None => {
                            self.unsupported(inst, "address has no location in the emulator");
                            Src::None
                        }
                    },
                    AddressBase::Absolute(x) => Src::Imm(x as u64),
                };
                MemRef { base, offset: a.offset }
            }
            _ => {
                self.unsupported(inst, "expected an address operand");
                MemRef::default()
            }
        }
    }

    fn op(&mut self, i: InstId, regs: &RegMap, frame: &Frame, block_pc: &[u32]) -> Op {
        let inst = &self.body.insts[i];
        let types: SmallVec<[Ty; 3]> = inst.types().map(Ty::from_scalar).collect();
        let ty = types.first().copied().unwrap_or(Ty::B32);
        let ty2 = types.get(1).copied().unwrap_or(ty);
        let m = mods(inst);
        let mut op = Op {
            kind: Kind::Nop,
            ty,
            ty2,
            m,
            guard: inst.guard.map(|g| (regs.slot[g.reg.as_u32() as usize], g.negated)),
            dst: Dst::None,
            dst2: Dst::None,
            a: Src::None,
            b: Src::None,
            c: Src::None,
            d: Src::None,
            mem: MemRef::default(),
            target: 0,
            reconverge: None,
            extra: None,
            inst: i,
        };
        if self.wide(&mut op, i, regs, frame) {
            param_frame_space(&mut op);
            return op;
        }
        if let Some(why) = self.narrow_local_address(i, frame) {
            self.unsupported(i, &why);
            return op;
        }
        if inst.opcode == Opcode::Cvt && inst.has(Word::Pack) {
            self.cvt_pack(&mut op, i, regs, frame);
            return op;
        }
        if inst.opcode == Opcode::Cvt
            && inst.types().any(|t| matches!(t, ir::ScalarType::E4m3x2 | ir::ScalarType::E5m2x2))
        {
            self.cvt_fp8(&mut op, i, regs, frame);
            return op;
        }
        if inst.opcode == Opcode::Cvt && inst.types().next() == Some(ir::ScalarType::Tf32) {
            self.cvt_tf32(&mut op, i, regs, frame);
            return op;
        }
        if inst.types().any(|t| matches!(t, ir::ScalarType::U16x2 | ir::ScalarType::S16x2)) {
            self.packed16(&mut op, i, regs, frame);
            return op;
        }
        if matches!(inst.opcode, Opcode::St | Opcode::Red)
            && inst.has(Word::Async)
            && inst.has(Word::MbarrierCompleteTxBytes)
        {
            self.store_async(&mut op, i, regs, frame);
            return op;
        }
        if let Some(why) = forms::refused(inst) {
            self.unsupported(i, why);
            return op;
        }
        if let Some(video) = forms::simd_video(inst.opcode) {
            self.simd_video(&mut op, i, video, regs, frame);
            return op;
        }
        if video::is_scalar_video(inst.opcode) {
            self.scalar_video(&mut op, i, regs, frame);
            return op;
        }
        if inst.opcode == Opcode::Cp && inst.has(Word::Async) && inst.has(Word::Mbarrier) {
            self.cp_async_mbarrier_arrive(&mut op, i, regs, frame);
            return op;
        }
        // Instructions decoded in files of their own (`forms.rs`, `hints.rs`, `cluster.rs`, `stack.rs`, `tma.rs`).
        let own: Option<Decode<'_>> = match inst.opcode {
            Opcode::Elect => Some(Self::elect),
            Opcode::Createpolicy => Some(Self::createpolicy),
            Opcode::Griddepcontrol => Some(Self::griddepcontrol),
            Opcode::Setmaxnreg => Some(Self::setmaxnreg),
            Opcode::Mapa | Opcode::Getctarank => Some(Self::cluster_address),
            Opcode::Stacksave | Opcode::Stackrestore | Opcode::Alloca => Some(Self::stack_op),
            Opcode::Tensormap => Some(Self::tensormap),
            _ => None,
        };
        if let Some(decode) = own {
            decode(self, &mut op, i, regs, frame);
            return op;
        }
        if inst.opcode == Opcode::Cp && inst.has(Word::Async) {
            self.cp_async(&mut op, i, regs, frame);
            return op;
        }
        if inst.opcode == Opcode::Mbarrier {
            self.mbarrier(&mut op, i, regs, frame);
            return op;
        }
        if types.contains(&Ty::Other)
            && !matches!(inst.opcode, Opcode::Mma | Opcode::Wmma | Opcode::Wgmma | Opcode::Istypep)
        {
            self.unsupported(i, "type not supported by the emulator");
            return op;
        }
        let Some(ops) = self.without_cache_policy(i, inst) else { return op };
        use Opcode as O;
        let kind = match inst.opcode {
            O::Add => Kind::Add,
            O::Sub => Kind::Sub,
            O::Mul => Kind::Mul,
            O::Mad => Kind::Mad,
            O::Mul24 => Kind::Mul24,
            O::Mad24 => Kind::Mad24,
            O::Sad => Kind::Sad,
            O::Div => Kind::Div,
            O::Rem => Kind::Rem,
            O::Abs => Kind::Abs,
            O::Neg => Kind::Neg,
            O::Min => Kind::Min,
            O::Max => Kind::Max,
            O::Fma => Kind::Fma,
            O::Rcp => Kind::Rcp,
            O::Sqrt => Kind::Sqrt,
            O::Rsqrt => Kind::Rsqrt,
            O::Sin => Kind::Sin,
            O::Cos => Kind::Cos,
            O::Lg2 => Kind::Lg2,
            O::Ex2 => Kind::Ex2,
            O::Tanh => Kind::Tanh,
            O::Copysign => Kind::Copysign,
            O::Testp => Kind::Testp,
            O::Addc => Kind::Addc,
            O::Subc => Kind::Subc,
            O::Madc => Kind::Madc,
            O::And => Kind::And,
            O::Or => Kind::Or,
            O::Xor => Kind::Xor,
            O::Not => Kind::Not,
            O::Cnot => Kind::Cnot,
            O::Shl => Kind::Shl,
            O::Shr => Kind::Shr,
            O::Lop3 => Kind::Lop3,
            O::Shf => Kind::Shf,
            O::Prmt => Kind::Prmt,
            O::Bfe => Kind::Bfe,
            O::Bfi => Kind::Bfi,
            O::Brev => Kind::Brev,
            O::Popc => Kind::Popc,
            O::Clz => Kind::Clz,
            O::Bfind => Kind::Bfind,
            O::Fns => Kind::Fns,
            O::Bmsk => Kind::Bmsk,
            O::Szext => Kind::Szext,
            O::Dp4a => Kind::Dp4a,
            O::Dp2a => Kind::Dp2a,
            O::Setp => Kind::Setp,
            O::Set => Kind::Set,
            O::Selp => Kind::Selp,
            O::Slct => Kind::Slct,
            O::Mov => Kind::Mov,
            O::Cvt => Kind::Cvt,
            O::Cvta => Kind::Cvta,
            O::Isspacep => Kind::Isspacep,
            O::Ld | O::Ldu => Kind::Ld,
            O::St => Kind::St,
            O::Atom => Kind::Atom,
            O::Red => Kind::Red,
            O::Bra => Kind::Bra,
            O::Brx => Kind::Brx,
            O::Call => Kind::Call,
            O::Ret => Kind::Ret,
            O::Exit => Kind::Exit,
            O::Trap => Kind::Trap,
            O::Bar | O::Barrier => {
                if inst.has(Word::Warp) {
                    Kind::WarpSync
                } else {
                    Kind::Bar
                }
            }
            O::Shfl => Kind::Shfl,
            O::Vote => Kind::Vote,
            O::Match => Kind::Match,
            O::Redux => Kind::Redux,
            O::Activemask => Kind::Activemask,
            O::Wmma | O::Mma | O::Ldmatrix | O::Stmatrix | O::Movmatrix => Kind::Matrix,
            // `wgmma.fence`, `commit_group` and `wait_group` order and await asynchronous `wgmma.mma_async`
            // operations; lockstep completes each when it is issued (`wgmma.rs`), so they have nothing to do.
            O::Wgmma if [Word::Fence, Word::CommitGroup, Word::WaitGroup].into_iter().any(|w| inst.has(w)) => Kind::Nop,
            O::Wgmma => Kind::Matrix,
            O::Tex | O::Tld4 | O::Txq | O::Suld | O::Sust | O::Suq | O::Sured | O::Istypep => Kind::Texture,
            // A breakpoint with no debugger attached stops the kernel like `trap`.
            O::Brkpt => Kind::Trap,
            O::Fence if !inst.operands.is_empty() => {
                // A tensor map is read when a copy is issued, and memory is sequentially consistent: the
                // tensormap proxy's acquire fence has nothing to order.
                let ok = inst.has(Word::TensormapGeneric)
                    && inst.has(Word::Acquire)
                    && matches!(
                        inst.operands.as_slice(),
                        [Operand::Address(_), Operand::Imm(ir::Immediate::Int { value: 128, .. })]
                    );
                if !ok {
                    self.unsupported(
                        i,
                        "only `fence.proxy.tensormap::generic.acquire.scope [addr], 128` takes operands",
                    );
                    return op;
                }
                Kind::Nop
            }
            O::Membar
            | O::Fence
            | O::Prefetch
            | O::Prefetchu
            | O::Nanosleep
            | O::Pmevent
            | O::Applypriority
            | O::Discard => Kind::Nop,
            other => {
                self.unsupported(i, &format!("`{other}` is not implemented by lockstep (neither engine runs it)"));
                return op;
            }
        };
        op.kind = kind;
        if inst.operands.iter().any(|o| wide::names_wide(o, regs)) {
            self.unsupported(i, "`.b128` registers are operands of `mov`, `ld`, `st` and `atom` only");
            return op;
        }
        match kind {
            Kind::Ld => {
                op.mem = self.mem(i, ops.get(1), regs, frame);
                self.data_dst(&mut op, i, ops.first(), regs);
            }
            Kind::St => {
                op.mem = self.mem(i, ops.first(), regs, frame);
                match ops.get(1) {
                    Some(Operand::Vector(items)) => {
                        let srcs = items.iter().map(|o| self.src(i, o, ty, regs, frame)).collect();
                        op.extra = Some(Box::new(Extra::Srcs(srcs)));
                    }
                    Some(o) => op.a = self.src(i, o, ty, regs, frame),
                    None => {}
                }
            }
            Kind::Atom | Kind::Red => {
                let (mem_index, first_src) = if kind == Kind::Atom { (1, 2) } else { (0, 1) };
                if op.m.vec > 0 {
                    op.mem = self.mem(i, ops.get(mem_index), regs, frame);
                    op.extra =
                        crate::atom_vec::decode(self, i, &op, ops, regs, frame).map(|v| Box::new(Extra::AtomVec(v)));
                    return op;
                }
                if kind == Kind::Atom {
                    op.dst = ops.first().map_or(Dst::None, |o| self.dst(i, o, regs));
                }
                op.mem = self.mem(i, ops.get(mem_index), regs, frame);
                op.a = ops.get(first_src).map_or(Src::None, |o| self.src(i, o, ty, regs, frame));
                op.b = ops.get(first_src + 1).map_or(Src::None, |o| self.src(i, o, ty, regs, frame));
            }
            Kind::Bra => match ops.first() {
                Some(Operand::Label(b)) => op.target = block_pc[b.as_u32() as usize],
                _ => self.unsupported(i, "branch without label"),
            },
            Kind::Brx => {
                op.a = ops.first().map_or(Src::None, |o| self.src(i, o, Ty::U32, regs, frame));
                let targets = match ops.get(1) {
                    Some(Operand::Table(t)) => match &self.body.tables[*t].targets {
                        TableTargets::Branch(blocks) => blocks.iter().map(|b| block_pc[b.as_u32() as usize]).collect(),
                        TableTargets::Call(_) => vec![],
                    },
                    _ => vec![],
                };
                op.extra = Some(Box::new(Extra::Targets(targets)));
            }
            Kind::Call => self.call(&mut op, i, regs, frame),
            Kind::Matrix => {
                let mut cx = OperandCx { d: self, i, regs, frame };
                op.extra = crate::tensor::decode(&mut cx, &mut op).map(|m| Box::new(Extra::Matrix(m)));
            }
            Kind::Texture => {
                let mut cx = OperandCx { d: self, i, regs, frame };
                op.extra = crate::texture::decode(&mut cx).map(|t| Box::new(Extra::Texture(t)));
            }
            Kind::Ret | Kind::Exit | Kind::Trap | Kind::Nop | Kind::WarpSync => {}
            Kind::Bar => {
                let srcs: SmallVec<[Src; 4]> = ops.iter().map(|o| self.src(i, o, Ty::U32, regs, frame)).collect();
                if let Sub::Bar { red: Some(_), .. } = op.m.sub {
                    // bar.red.op.type d, a{, b}, {!}c
                    op.dst = ops.first().map_or(Dst::None, |o| self.dst(i, o, regs));
                    op.a = srcs.get(1).copied().unwrap_or_default();
                    if srcs.len() == 4 {
                        op.b = srcs[2];
                        op.c = srcs[3];
                    } else {
                        op.c = srcs.get(2).copied().unwrap_or_default();
                    }
                } else {
                    op.a = srcs.first().copied().unwrap_or(Src::Imm(0));
                    op.b = srcs.get(1).copied().unwrap_or_default();
                }
            }
            Kind::Mov => self.mov(&mut op, i, regs, frame),
            Kind::Setp | Kind::Shfl | Kind::Match => {
                match ops.first() {
                    Some(Operand::Pair(a, b)) => {
                        op.dst = self.dst(i, &Operand::Reg(*a), regs);
                        op.dst2 = self.dst(i, &Operand::Reg(*b), regs);
                    }
                    Some(o) => op.dst = self.dst(i, o, regs),
                    None => {}
                }
                self.sources(&mut op, i, &ops[1.min(ops.len())..], regs, frame);
            }
            Kind::Lop3 if op.m.boolop.is_some() => self.lop3_predicate(&mut op, i, ops, regs, frame),
            Kind::Cvt => {
                let pair = matches!(ty, Ty::F16x2 | Ty::Bf16x2) && ops.len() == 3;
                if ops.len() > 2 && !pair {
                    self.unsupported(i, "packing conversions (`cvt.pack`) are not implemented");
                }
                op.dst = ops.first().map_or(Dst::None, |o| self.dst(i, o, regs));
                op.a = ops.get(1).map_or(Src::None, |o| self.src(i, o, ty2, regs, frame));
                op.b = ops.get(2).map_or(Src::None, |o| self.src(i, o, ty2, regs, frame));
            }
            _ => {
                if let Some(o) = ops.first() {
                    op.dst = self.dst(i, o, regs);
                }
                let src_ty = match kind {
                    Kind::Set | Kind::Slct => ty2,
                    _ => ty,
                };
                let rest = &ops[1.min(ops.len())..];
                let mut srcs = [Src::None; 4];
                for (k, o) in rest.iter().enumerate().take(4) {
                    // Shift amounts and bit positions are u32; selp/slct controls have their own types.
                    let t = match (kind, k) {
                        (Kind::Shl | Kind::Shr, 1) | (Kind::Bfe, 1 | 2) | (Kind::Bfi, 2 | 3) => Ty::U32,
                        (Kind::Slct, 2) => ty2,
                        _ => src_ty,
                    };
                    srcs[k] = self.src(i, o, t, regs, frame);
                }
                [op.a, op.b, op.c, op.d] = srcs;
            }
        }
        param_frame_space(&mut op);
        op
    }

    fn sources(&mut self, op: &mut Op, i: InstId, rest: &[Operand], regs: &RegMap, frame: &Frame) {
        let ty = op.ty;
        let mut srcs = [Src::None; 4];
        for (k, o) in rest.iter().enumerate().take(4) {
            let t = match op.kind {
                Kind::Shfl if k > 0 => Ty::U32,
                Kind::Match if k > 0 => Ty::U32,
                _ => ty,
            };
            srcs[k] = self.src(i, o, t, regs, frame);
        }
        [op.a, op.b, op.c, op.d] = srcs;
    }

    /// The destination of a load: a register, or a vector of registers.
    /// `lop3.BoolOp.b32 d|p, a, b, c, immLut, q` (PTX ISA 9.7.8.6): d as `lop3`, and `p = (d != 0) BoolOp q`
    /// (`alu::exec`); the table goes to `Sub::Lut`, q to operand `d`. `_` may stand for d.
    fn lop3_predicate(&mut self, op: &mut Op, i: InstId, ops: &[Operand], regs: &RegMap, frame: &Frame) {
        let (d, p) = match ops.first() {
            Some(Operand::Pair(d, p)) => (self.dst(i, &Operand::Reg(*d), regs), self.dst(i, &Operand::Reg(*p), regs)),
            Some(Operand::VectorPair(items, p)) if matches!(items.as_slice(), [Operand::Sink]) => {
                (Dst::Sink, self.dst(i, &Operand::Reg(*p), regs))
            }
            _ => {
                self.unsupported(i, "`lop3.and`/`lop3.or` write `d|p`");
                return;
            }
        };
        let Some(Operand::Imm(lut)) = ops.get(4) else {
            self.unsupported(i, "`lop3`'s look-up table must be an immediate");
            return;
        };
        let q = ops.get(5).map_or(Src::None, |o| self.src(i, o, Ty::Pred, regs, frame));
        if !matches!(q, Src::Pred(..)) || ops.len() != 6 {
            self.unsupported(i, "`lop3.and`/`lop3.or` take a predicate q last");
            return;
        }
        op.dst = d;
        op.dst2 = p;
        op.a = self.src(i, &ops[1], op.ty, regs, frame);
        op.b = self.src(i, &ops[2], op.ty, regs, frame);
        op.c = self.src(i, &ops[3], op.ty, regs, frame);
        op.m.sub = Sub::Lut(immediate(*lut, Ty::B32) as u8);
        op.d = q;
    }

    fn data_dst(&mut self, op: &mut Op, i: InstId, o: Option<&Operand>, regs: &RegMap) {
        match o {
            Some(Operand::Vector(items)) => {
                let dsts = items.iter().map(|o| self.dst(i, o, regs)).collect();
                op.extra = Some(Box::new(Extra::Dsts(dsts)));
            }
            Some(o) => op.dst = self.dst(i, o, regs),
            None => {}
        }
    }

    fn mov(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let ops = &self.body.insts[i].operands;
        let ty = op.ty;
        match (ops.first(), ops.get(1)) {
            (Some(d), Some(Operand::Vector(items))) => {
                op.kind = Kind::Pack;
                op.dst = self.dst(i, d, regs);
                let part = ty_for_part(ty, items.len());
                let srcs = items.iter().map(|o| self.src(i, o, part, regs, frame)).collect();
                op.extra = Some(Box::new(Extra::Srcs(srcs)));
            }
            (Some(Operand::Vector(items)), Some(s)) => {
                op.kind = Kind::Unpack;
                op.a = self.src(i, s, ty, regs, frame);
                let dsts = items.iter().map(|o| self.dst(i, o, regs)).collect();
                op.extra = Some(Box::new(Extra::Dsts(dsts)));
            }
            (Some(d), Some(s)) => {
                op.dst = self.dst(i, d, regs);
                op.a = self.src(i, s, ty, regs, frame);
            }
            _ => self.unsupported(i, "`mov` needs two operands"),
        }
    }
}

/// `.param` variables of a body and the parameters of a device function live in the thread's frame, which is
/// local memory; only the kernel's own parameters are in the parameter buffer.
fn param_frame_space(op: &mut Op) {
    if op.m.space == Space::Param && matches!(op.mem.base, Src::Sym(SymAddr::Frame(_), _)) {
        op.m.space = Space::Local;
    }
}

fn component(c: Component) -> u32 {
    match c {
        Component::X => 0,
        Component::Y => 1,
        Component::Z => 2,
        Component::W => 3,
        // Selectors are operands of their own (`Operand::Select`), read by the video decoder only.
        _ => 0,
    }
}

/// The type of each element when a `.bN` value is packed from or unpacked into `n` parts.
fn ty_for_part(ty: Ty, n: usize) -> Ty {
    match ty.bits() / (n.max(1) as u32) {
        8 => Ty::B8,
        16 => Ty::B16,
        32 => Ty::B32,
        _ => Ty::B64,
    }
}

/// The bits of an immediate as an operand of type `ty`: integers as two's complement, float literals
/// converted to the operand's float type.
pub fn immediate(imm: Immediate, ty: Ty) -> u64 {
    let as_f64 = |x: f64| match ty {
        Ty::F32 => u64::from((x as f32).to_bits()),
        Ty::F64 => x.to_bits(),
        _ => x as i64 as u64,
    };
    match imm {
        Immediate::Int { value, .. } => value as u64,
        Immediate::F32Bits(b) => match ty {
            Ty::F64 => f64::from(f32::from_bits(b)).to_bits(),
            _ => u64::from(b),
        },
        Immediate::F64Bits(b) => match ty {
            Ty::F64 => b,
            Ty::F32 => u64::from((f64::from_bits(b) as f32).to_bits()),
            _ => as_f64(f64::from_bits(b)),
        },
        Immediate::Float(x) => as_f64(x),
    }
}
