//! Memory instructions on the emulator: addresses of memory operands, checked loads and stores in every
//! space (global, shared, local and the dynamic stack, parameters, generic through the windows), `ld`, `st`,
//! atomics (vector atomics one element at a time), `cvta` and `isspacep`; and the faults an access can end
//! in, before they get a location.

use device::ExecError;
use ir::FuncId;
use program::alu;
use program::{Dst, Extra, Kind, MemRef, Op, Space, Src, Sub, SymAddr, WARP};
use simt::LaneMask;

use super::{read_src, write_dst, Cta, Machine, RegFrame};
use crate::dynstack::DynStack;
use crate::mem::{read_flat, resolve_generic, window, write_flat};

impl Machine<'_> {
    /// A generic load for one lane (used by printf).
    pub(super) fn load_generic(
        &mut self,
        cta: &Cta,
        w: usize,
        lane: u32,
        address: u64,
        size: u32,
    ) -> Result<u64, MemFault> {
        let (space, addr) = resolve_generic(address);
        self.load(cta, w, lane, space, addr, size)
    }

    pub(super) fn load(
        &mut self,
        cta: &Cta,
        w: usize,
        lane: u32,
        space: Space,
        address: u64,
        size: u32,
    ) -> Result<u64, MemFault> {
        match space {
            Space::Global | Space::Const => self.global.read(address, size).map_err(MemFault::from),
            Space::Shared => read_flat(&cta.shared, address, size)
                .ok_or_else(|| MemFault::bounds(address, size, cta.shared.len(), "the CTA's shared memory")),
            Space::Local if DynStack::contains(address) => cta.warps[w].dynamic.read(lane, address, size),
            Space::Local => {
                let stack = &cta.warps[w].local[lane as usize];
                let limit = cta.warps[w].sp.min(stack.len() as u64) as usize;
                read_flat(&stack[..limit], address, size)
                    .ok_or_else(|| MemFault::bounds(address, size, limit, "the thread's local memory"))
            }
            Space::Param => {
                if cta.warps[w].frames.len() == 1 {
                    read_flat(self.params, address, size)
                        .ok_or_else(|| MemFault::bounds(address, size, self.params.len(), "the kernel parameters"))
                } else {
                    let stack = &cta.warps[w].local[lane as usize];
                    read_flat(stack, address, size)
                        .ok_or_else(|| MemFault::bounds(address, size, stack.len(), "the function parameters"))
                }
            }
            Space::Generic => {
                let (s, a) = resolve_generic(address);
                self.load(cta, w, lane, s, a, size)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn store(
        &mut self,
        cta: &mut Cta,
        w: usize,
        lane: u32,
        space: Space,
        address: u64,
        size: u32,
        value: u64,
    ) -> Result<(), MemFault> {
        match space {
            Space::Global => self.global.write(address, size, value).map_err(MemFault::from),
            Space::Const => Err(MemFault::ReadOnly { address }),
            Space::Shared => {
                let len = cta.shared.len();
                write_flat(&mut cta.shared, address, size, value)
                    .ok_or_else(|| MemFault::bounds(address, size, len, "the CTA's shared memory"))
            }
            Space::Local if DynStack::contains(address) => cta.warps[w].dynamic.write(lane, address, size, value),
            Space::Local => {
                let sp = cta.warps[w].sp;
                let stack = &mut cta.warps[w].local[lane as usize];
                let limit = sp.min(stack.len() as u64) as usize;
                write_flat(&mut stack[..limit], address, size, value)
                    .ok_or_else(|| MemFault::bounds(address, size, limit, "the thread's local memory"))
            }
            Space::Param => {
                if cta.warps[w].frames.len() == 1 {
                    Err(MemFault::ReadOnly { address })
                } else {
                    let stack = &mut cta.warps[w].local[lane as usize];
                    let len = stack.len();
                    write_flat(stack, address, size, value)
                        .ok_or_else(|| MemFault::bounds(address, size, len, "the function parameters"))
                }
            }
            Space::Generic => {
                let (s, a) = resolve_generic(address);
                self.store(cta, w, lane, s, a, size, value)
            }
        }
    }

    /// Address of `[base + offset]` for every lane, in the instruction's space (frame-relative symbols
    /// resolved to the local stack, generic symbols to their window).
    pub(super) fn addresses(&self, cta: &Cta, w: usize, op: &Op, exec: LaneMask) -> [u64; WARP] {
        self.addresses_of(cta, w, &op.mem, op.m.space, exec)
    }

    /// [`Self::addresses`] of any memory operand, in `space`.
    pub(super) fn addresses_of(&self, cta: &Cta, w: usize, mem: &MemRef, space: Space, exec: LaneMask) -> [u64; WARP] {
        let mut out = [0u64; WARP];
        let frame = cta.warps[w].frames.last().expect("frame");
        match mem.base {
            Src::Reg(r) => {
                let regs = &frame.regs[r as usize];
                for lane in exec.iter() {
                    out[lane as usize] = regs[lane as usize].wrapping_add(mem.offset as u64);
                }
            }
            Src::Sym(sym, extra) => {
                let a = self.symbol_value(frame, sym, space).wrapping_add(extra as u64).wrapping_add(mem.offset as u64);
                out = [a; WARP];
            }
            Src::Imm(v) => out = [v.wrapping_add(mem.offset as u64); WARP],
            _ => {}
        }
        out
    }

    /// The value of a symbol operand: its address in `space` (generic addresses use the windows).
    pub(super) fn symbol_value(&self, frame: &RegFrame, sym: SymAddr, space: Space) -> u64 {
        let (addr, own) = match sym {
            SymAddr::Global(a) => (a, Space::Global),
            SymAddr::Shared(o) => (o, Space::Shared),
            SymAddr::Frame(o) => (frame.base + o, Space::Local),
            SymAddr::KernelParam(o) => (o, Space::Param),
            SymAddr::Func(a) => (a, Space::Global),
        };
        if space == Space::Generic {
            addr.wrapping_add(window(own))
        } else {
            addr
        }
    }

    /// PTX requires every access (a whole vector access included) to be naturally aligned.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_aligned(
        &self,
        cta: &Cta,
        w: usize,
        lane: u32,
        f: FuncId,
        op: &Op,
        space: Space,
        address: u64,
        size: u32,
    ) -> Result<(), ExecError> {
        if address.is_multiple_of(u64::from(size)) {
            Ok(())
        } else {
            Err(self.access_error(cta, w, lane, f, op, space, MemFault::Misaligned { address, size }))
        }
    }

    pub(super) fn exec_load(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
    ) -> Result<(), ExecError> {
        let space = op.m.space;
        let elem = op.ty.bytes();
        let n = u32::from(op.m.vec.max(1));
        let addrs = self.addresses(cta, w, op, exec);
        let mut vals = vec![[0u64; WARP]; n as usize];
        for lane in exec.iter() {
            let base = addrs[lane as usize];
            self.check_aligned(cta, w, lane, f, op, space, base, elem * n)?;
            for (k, v) in vals.iter_mut().enumerate() {
                let addr = base + u64::from(elem) * k as u64;
                let raw = self
                    .load(cta, w, lane, space, addr, elem)
                    .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
                v[lane as usize] = op.ty.extend(raw);
            }
        }
        if let Some(s) = &mut self.stats {
            s.memory(op, space, true, exec, &addrs, elem * n, &cta.shared);
        }
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        match op.extra.as_deref() {
            Some(Extra::Dsts(dsts)) => {
                for (d, v) in dsts.iter().zip(&vals) {
                    write_dst(frame, *d, v, exec);
                }
            }
            _ => write_dst(frame, op.dst, &vals[0], exec),
        }
        Ok(())
    }

    pub(super) fn exec_store(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
    ) -> Result<(), ExecError> {
        if let Some(g) = &mut self.grid {
            g.writes += 1;
        }
        let space = op.m.space;
        let elem = op.ty.bytes();
        let addrs = self.addresses(cta, w, op, exec);
        let vals: Vec<[u64; WARP]> = match op.extra.as_deref() {
            Some(Extra::Srcs(srcs)) => srcs.iter().map(|s| read_src(self, cta, w, s)).collect(),
            _ => vec![read_src(self, cta, w, &op.a)],
        };
        let n = vals.len() as u32;
        if let Some(s) = &mut self.stats {
            s.memory(op, space, false, exec, &addrs, elem * n, &cta.shared);
        }
        for lane in exec.iter() {
            let base = addrs[lane as usize];
            self.check_aligned(cta, w, lane, f, op, space, base, elem * n)?;
            for (k, v) in vals.iter().enumerate() {
                let addr = base + u64::from(elem) * k as u64;
                self.store(cta, w, lane, space, addr, elem, v[lane as usize])
                    .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
            }
        }
        Ok(())
    }

    pub(super) fn exec_atomic(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
    ) -> Result<(), ExecError> {
        if let Some(g) = &mut self.grid {
            g.writes += 1;
        }
        let space = op.m.space;
        let elem = op.ty.bytes();
        let addrs = self.addresses(cta, w, op, exec);
        let vector = match op.extra.as_deref() {
            Some(Extra::AtomVec(v)) => Some(v),
            _ => None,
        };
        let n = vector.map_or(1, |v| v.len() as u32);
        if let Some(s) = &mut self.stats {
            s.atomic(op, space, exec, &addrs, elem * n);
        }
        let Some(v) = vector else {
            let a = read_src(self, cta, w, &op.a);
            let b = read_src(self, cta, w, &op.b);
            let dst = if op.kind == Kind::Atom { op.dst } else { Dst::None };
            return self.atomic_elements(cta, w, f, op, exec, &addrs, [&a, &b], dst);
        };
        // A vector atomic is aligned as a whole, then runs one atomic per element (PTX ISA 9.7.13.5).
        for lane in exec.iter() {
            let addr = addrs[lane as usize];
            if !addr.is_multiple_of(u64::from(elem * n)) {
                let fault = MemFault::Misaligned { address: addr, size: elem * n };
                return Err(self.access_error(cta, w, lane, f, op, space, fault));
            }
        }
        let zero = [0u64; WARP];
        // Every source is read before any destination is written (they may name the same registers).
        let srcs: Vec<_> = v.srcs.iter().map(|s| read_src(self, cta, w, s)).collect();
        for (k, a) in srcs.iter().enumerate() {
            let at = addrs.map(|x| x + u64::from(elem) * k as u64);
            let dst = v.dsts.get(k).copied().unwrap_or(Dst::None);
            self.atomic_elements(cta, w, f, op, exec, &at, [a, &zero], dst)?;
        }
        Ok(())
    }

    /// One scalar atomic per active lane at `addrs`, with operands `a` and `b`; the old values go to `dst`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic_elements(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
        addrs: &[u64; WARP],
        [a, b]: [&[u64; WARP]; 2],
        dst: Dst,
    ) -> Result<(), ExecError> {
        let space = op.m.space;
        let elem = op.ty.bytes();
        let Sub::Atom(aop) = op.m.sub else { return Ok(()) };
        let mut old_vals = [0u64; WARP];
        for lane in exec.iter() {
            let addr = addrs[lane as usize];
            if !addr.is_multiple_of(u64::from(elem)) {
                return Err(self.access_error(
                    cta,
                    w,
                    lane,
                    f,
                    op,
                    space,
                    MemFault::Misaligned { address: addr, size: elem },
                ));
            }
            let old = self
                .load(cta, w, lane, space, addr, elem)
                .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
            let new = alu::atomic(aop, op.ty, old, a[lane as usize], b[lane as usize]);
            self.store(cta, w, lane, space, addr, elem, new)
                .map_err(|e| self.access_error(cta, w, lane, f, op, space, e))?;
            old_vals[lane as usize] = op.ty.extend(old);
        }
        if dst != Dst::None {
            let frame = cta.warps[w].frames.last_mut().expect("frame");
            write_dst(frame, dst, &old_vals, exec);
        }
        Ok(())
    }

    pub(super) fn exec_space(&mut self, cta: &mut Cta, w: usize, op: &Op, exec: LaneMask) {
        let a = read_src(self, cta, w, &op.a);
        let mut out = [0u64; WARP];
        let space = op.m.space;
        for lane in exec.iter() {
            let v = a[lane as usize];
            out[lane as usize] = match op.kind {
                Kind::Cvta => match op.m.sub {
                    Sub::Cvta { to: true } => v.wrapping_sub(window(space)),
                    _ => v.wrapping_add(window(space)),
                },
                _ => {
                    let (s, _) = resolve_generic(v);
                    let is = match space {
                        Space::Global => s == Space::Global && self.global.contains(v),
                        Space::Const => s == Space::Global && self.global.is_const(v),
                        other => s == other,
                    };
                    u64::from(is)
                }
            };
            if op.kind == Kind::Cvta {
                out[lane as usize] &= op.ty.mask();
            }
        }
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        write_dst(frame, op.dst, &out, exec);
    }
}

/// A memory access that failed, before it is given a location.
#[derive(Debug)]
pub enum MemFault {
    Bounds { address: u64, size: u32, detail: Option<String> },
    Misaligned { address: u64, size: u32 },
    ReadOnly { address: u64 },
}

impl MemFault {
    pub(super) fn bounds(address: u64, size: u32, len: usize, what: &str) -> MemFault {
        MemFault::Bounds { address, size, detail: Some(format!("{what} has {len} bytes")) }
    }
}

impl From<device::AccessError> for MemFault {
    fn from(e: device::AccessError) -> MemFault {
        match e {
            device::AccessError::OutOfBounds { address, size, nearest } => {
                MemFault::Bounds { address, size, detail: nearest }
            }
            device::AccessError::Misaligned { address, size } => MemFault::Misaligned { address, size },
            device::AccessError::ReadOnly { address, .. } => MemFault::ReadOnly { address },
        }
    }
}
