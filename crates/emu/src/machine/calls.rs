//! Device function calls on the emulator: the callee's register frame and local stack frame, arguments and
//! return values, returns that pop frames once every lane has left; the device functions the CUDA runtime
//! provides (`vprintf`, `malloc`/`free`, `__assertfail`); each lane's dynamic stack (`alloca`,
//! `stacksave`, `stackrestore`).

use device::{ErrorKind, ExecError};
use ir::FuncId;
use program::printf;
use program::{CallArg, Callee, Extra, Kind, Op, Space, Src, WARP};
use simt::LaneMask;

use super::{pc, read_src, write_dst, Cta, Flow, Machine, RegFrame, Warp, MAX_CALL_DEPTH, MAX_LOCAL_BYTES};

impl Machine<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        opi: u32,
        op: &Op,
        active: LaneMask,
        exec: LaneMask,
    ) -> Result<Flow, ExecError> {
        let next = pc(f, opi + 1);
        let Some(Extra::Call { callee, args, rets }) = op.extra.as_deref() else { return Ok(Flow::Continue) };
        if exec.is_empty() {
            cta.warps[w].stack.set_pc(next);
            return Ok(Flow::Continue);
        }
        if exec != active {
            // A predicated call: the lanes whose guard is false skip it.
            let warp = &mut cta.warps[w];
            warp.stack.branch(pc(f, opi), exec, next, Some(next)).map_err(|e| self.stack_error(cta, w, f, op, e))?;
            return Ok(Flow::Continue);
        }
        // Which function each lane calls.
        let (target, lanes) = match *callee {
            Callee::Direct(g) => (g, exec),
            Callee::Indirect(src) => {
                let addrs = read_src(self, cta, w, &src);
                let first = exec.first().unwrap_or(0);
                let mut lanes = LaneMask::EMPTY;
                for lane in exec.iter() {
                    if addrs[lane as usize] == addrs[first as usize] {
                        lanes.insert(lane);
                    }
                }
                match self.module.function_at(addrs[first as usize]) {
                    Some(g) => (g, lanes),
                    None => {
                        let kind = ErrorKind::Invalid(format!(
                            "indirect call to {:#x}, which is not a function",
                            addrs[first as usize]
                        ));
                        return Err(self.error(cta, w, first, f, op, kind));
                    }
                }
            }
        };
        let callee_fn = &self.module.module.functions[target];
        if callee_fn.body.is_none() {
            if callee_fn.name == "__assertfail" {
                return Err(self.assert_fail(cta, w, f, op, args, lanes));
            }
            if callee_fn.name == "vprintf" {
                self.vprintf(cta, w, f, op, args, rets, lanes)?;
                cta.warps[w].stack.set_pc(next);
                return Ok(Flow::Continue);
            }
            if matches!(callee_fn.name.as_str(), "malloc" | "free") {
                self.heap_call(cta, w, f, op, callee_fn.name == "malloc", args, rets, lanes)?;
                cta.warps[w].stack.set_pc(next);
                return Ok(Flow::Continue);
            }
            let kind = ErrorKind::Unsupported(vec![format!("call to `{}`, which has no body", callee_fn.name)]);
            return Err(self.error(cta, w, lanes.first().unwrap_or(0), f, op, kind));
        }
        if cta.warps[w].frames.len() >= MAX_CALL_DEPTH {
            return Err(self.error(
                cta,
                w,
                lanes.first().unwrap_or(0),
                f,
                op,
                ErrorKind::StackOverflow(MAX_CALL_DEPTH as u32),
            ));
        }
        // The callee's frame and register file.
        let programs = self.programs.clone();
        let Some(callee_prog) = programs[target.as_u32() as usize].as_ref() else {
            let kind = ErrorKind::Invalid(format!("call to `{}`, which was not decoded", callee_fn.name));
            return Err(self.error(cta, w, lanes.first().unwrap_or(0), f, op, kind));
        };
        let (slots, preds, frame_size, params) =
            (callee_prog.slots, callee_prog.preds, callee_prog.frame.size, &callee_prog.frame.params);
        let base = cta.warps[w].sp;
        let new_sp = base + frame_size;
        if new_sp > MAX_LOCAL_BYTES {
            return Err(self.error(
                cta,
                w,
                lanes.first().unwrap_or(0),
                f,
                op,
                ErrorKind::StackOverflow(cta.warps[w].frames.len() as u32),
            ));
        }
        let caller_base = cta.warps[w].frames.last().expect("frame").base;
        {
            let warp = &mut cta.warps[w];
            for lane in lanes.iter() {
                let stack = &mut warp.local[lane as usize];
                if (stack.len() as u64) < new_sp {
                    stack.resize(new_sp as usize, 0);
                }
                stack[base as usize..new_sp as usize].fill(0);
            }
        }
        // Copy the arguments into the callee's parameter slots.
        for (k, arg) in args.iter().enumerate() {
            let Some(&(off, size)) = params.get(k) else { break };
            for lane in lanes.iter() {
                let warp = &mut cta.warps[w];
                let value_bytes: Vec<u8> = match *arg {
                    CallArg::Frame(src_off, src_size) => {
                        let start = (caller_base + src_off) as usize;
                        let n = src_size.min(size) as usize;
                        warp.local[lane as usize][start..start + n].to_vec()
                    }
                    CallArg::Reg(slot, bytes) => {
                        let v = warp.frames.last().expect("frame").regs[slot as usize][lane as usize];
                        v.to_le_bytes()[..bytes.min(8) as usize].to_vec()
                    }
                    CallArg::Imm(v) => v.to_le_bytes()[..size.min(8) as usize].to_vec(),
                };
                let dst = (base + off) as usize;
                let n = value_bytes.len().min(size as usize);
                warp.local[lane as usize][dst..dst + n].copy_from_slice(&value_bytes[..n]);
            }
        }
        let warp = &mut cta.warps[w];
        warp.stack.call(pc(target, 0), lanes, next).map_err(|e| self.stack_error(cta, w, f, op, e))?;
        let warp = &mut cta.warps[w];
        warp.sp = new_sp;
        warp.frames.push(RegFrame {
            func: target,
            regs: vec![[0; WARP]; slots as usize],
            preds: vec![0; preds as usize],
            base,
            rets: rets.clone(),
            dyn_sp: warp.dynamic.sp,
        });
        Ok(Flow::Continue)
    }

    /// `stacksave`, `stackrestore`, `alloca` (`program::stack`) on each executing lane's dynamic stack.
    pub(super) fn stack_op(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
    ) -> Result<(), ExecError> {
        let a = read_src(self, cta, w, &op.a);
        let mut out = [0u64; WARP];
        for lane in exec.iter() {
            let l = lane as usize;
            let dynamic = &mut cta.warps[w].dynamic;
            let r = match op.kind {
                Kind::StackSave => Ok(dynamic.sp[l]),
                Kind::StackRestore => dynamic.restore(lane, a[l]).map(|_| 0),
                _ => dynamic.alloca(
                    lane,
                    a[l],
                    match op.b {
                        Src::Imm(align) => align,
                        _ => program::stack::MIN_ALIGN,
                    },
                ),
            };
            out[l] = r.map_err(|e| self.error(cta, w, lane, f, op, ErrorKind::Invalid(e)))?;
        }
        if op.kind != Kind::StackRestore {
            let frame = cta.warps[w].frames.last_mut().expect("frame");
            write_dst(frame, op.dst, &out, exec);
        }
        Ok(())
    }

    pub(super) fn do_return(&mut self, cta: &mut Cta, w: usize, lanes: LaneMask) -> Result<Flow, ExecError> {
        let warp = &mut cta.warps[w];
        if warp.frames.len() == 1 {
            // `ret` in the kernel is `exit`.
            warp.stack.exit_lanes(lanes);
            return Ok(if warp.stack.is_finished() { Flow::Done } else { Flow::Continue });
        }
        warp.stack.ret(lanes);
        self.sync_frames(cta, w);
        Ok(if cta.warps[w].stack.is_finished() { Flow::Done } else { Flow::Continue })
    }

    /// Pops register frames the call stack no longer has, copying return values to the caller.
    pub(super) fn sync_frames(&mut self, cta: &mut Cta, w: usize) {
        let warp = &mut cta.warps[w];
        let depth = warp.stack.call_depth().max(1);
        while warp.frames.len() > depth {
            let frame = warp.frames.pop().expect("frame");
            let returns = self.programs[frame.func.as_u32() as usize]
                .as_ref()
                .map(|p| p.frame.returns.clone())
                .unwrap_or_default();
            let caller = warp.frames.last_mut().expect("caller frame");
            for (k, ret) in frame.rets.iter().enumerate() {
                let Some(&(off, size)) = returns.get(k) else { break };
                for lane in 0..WARP {
                    let stack = &mut warp.local[lane];
                    let start = (frame.base + off) as usize;
                    let Some(src) = stack.get(start..start + size as usize) else { continue };
                    let src = src.to_vec();
                    match *ret {
                        CallArg::Frame(dst_off, dst_size) => {
                            let d = (caller.base + dst_off) as usize;
                            let n = dst_size.min(size) as usize;
                            if let Some(dst) = stack.get_mut(d..d + n) {
                                dst.copy_from_slice(&src[..n]);
                            }
                        }
                        CallArg::Reg(slot, _) => {
                            caller.regs[slot as usize][lane] = crate::mem::load_le(&src[..src.len().min(8)]);
                        }
                        CallArg::Imm(_) => {}
                    }
                }
            }
            warp.sp = frame.base;
            warp.dynamic.sp = frame.dyn_sp;
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn vprintf(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        args: &[CallArg],
        rets: &[CallArg],
        lanes: LaneMask,
    ) -> Result<(), ExecError> {
        let base = cta.warps[w].frames.last().expect("frame").base;
        for lane in lanes.iter() {
            let word = |k: usize, warp: &Warp| -> u64 {
                match args.get(k) {
                    Some(CallArg::Frame(off, _)) => {
                        let start = (base + off) as usize;
                        warp.local[lane as usize].get(start..start + 8).map_or(0, crate::mem::load_le)
                    }
                    Some(CallArg::Reg(slot, _)) => {
                        warp.frames.last().expect("frame").regs[*slot as usize][lane as usize]
                    }
                    Some(CallArg::Imm(v)) => *v,
                    None => 0,
                }
            };
            let (fmt_addr, args_addr) = (word(0, &cta.warps[w]), word(1, &cta.warps[w]));
            let text =
                printf::format(fmt_addr, args_addr, &mut |addr, size| self.load_generic(cta, w, lane, addr, size))
                    .map_err(|e| self.access_error(cta, w, lane, f, op, Space::Generic, e))?;
            let _ = self.out.write_all(&text);
            // vprintf returns the number of arguments; nvcc ignores it, but keep it defined.
            if let Some(CallArg::Frame(off, _)) = rets.first() {
                let start = (base + off) as usize;
                if let Some(dst) = cta.warps[w].local[lane as usize].get_mut(start..start + 4) {
                    dst.copy_from_slice(&(text.len() as u32).to_le_bytes());
                }
            }
        }
        Ok(())
    }

    /// `malloc(size)` / `free(ptr)` on the device heap, lane by lane in lane order.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn heap_call(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        malloc: bool,
        args: &[CallArg],
        rets: &[CallArg],
        lanes: LaneMask,
    ) -> Result<(), ExecError> {
        let Some(heap) = self.heap.clone() else {
            let kind = ErrorKind::Invalid("the kernel calls malloc or free but the runtime made no device heap".into());
            return Err(self.error(cta, w, lanes.first().unwrap_or(0), f, op, kind));
        };
        let base = cta.warps[w].frames.last().expect("frame").base;
        for lane in lanes.iter() {
            let arg = match args.first() {
                Some(CallArg::Frame(off, _)) => {
                    let start = (base + off) as usize;
                    cta.warps[w].local[lane as usize].get(start..start + 8).map_or(0, crate::mem::load_le)
                }
                Some(CallArg::Reg(slot, _)) => {
                    cta.warps[w].frames.last().expect("frame").regs[*slot as usize][lane as usize]
                }
                Some(CallArg::Imm(v)) => *v,
                None => 0,
            };
            if !malloc {
                if let Err(m) = heap.free(arg) {
                    return Err(self.error(cta, w, lane, f, op, ErrorKind::Invalid(m)));
                }
                continue;
            }
            let ptr = heap.malloc(arg);
            match rets.first() {
                Some(CallArg::Frame(off, _)) => {
                    let start = (base + off) as usize;
                    if let Some(dst) = cta.warps[w].local[lane as usize].get_mut(start..start + 8) {
                        dst.copy_from_slice(&ptr.to_le_bytes());
                    }
                }
                Some(CallArg::Reg(slot, _)) => {
                    cta.warps[w].frames.last_mut().expect("frame").regs[*slot as usize][lane as usize] = ptr;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `assert()` failed on the device: `__assertfail(message, file, line, function, char_size)`.
    pub(super) fn assert_fail(
        &mut self,
        cta: &Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        args: &[CallArg],
        lanes: LaneMask,
    ) -> ExecError {
        let lane = lanes.first().unwrap_or(0);
        let base = cta.warps[w].frames.last().expect("frame").base;
        let word = |k: usize, size: usize| -> u64 {
            match args.get(k) {
                Some(CallArg::Frame(off, _)) => {
                    let start = (base + off) as usize;
                    cta.warps[w].local[lane as usize].get(start..start + size).map_or(0, crate::mem::load_le)
                }
                Some(CallArg::Reg(slot, _)) => {
                    cta.warps[w].frames.last().expect("frame").regs[*slot as usize][lane as usize]
                }
                Some(CallArg::Imm(v)) => *v,
                None => 0,
            }
        };
        let (msg, file, line, func) = (word(0, 8), word(1, 8), word(2, 4), word(3, 8));
        let mut string = |addr: u64| -> String {
            let mut bytes = Vec::new();
            for i in 0..1024 {
                match self.load_generic(cta, w, lane, addr + i, 1) {
                    Ok(0) | Err(_) => break,
                    Ok(b) => bytes.push(b as u8),
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let text = format!(
            "device assertion `{}` failed at {}:{} in `{}`",
            string(msg),
            string(file),
            line as u32,
            string(func)
        );
        self.error(cta, w, lane, f, op, ErrorKind::Assert(text))
    }
}
