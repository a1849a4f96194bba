//! Calls and indirect branches: `brx.idx` through a jump table, calls of device functions with their
//! arguments copied into and out of the callee's frame, and the runtime's built-in functions (`vprintf`,
//! `__assertfail`, `malloc`, `free`).

use ::ir::FuncId;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, JumpTableData, Value};
use program::{CallArg, Callee, Extra, Op, Program, Ty};

use super::{device_signature, flags, ro, Translator, I32, I64};
use crate::abi::{ctx as cx, error, ret, Helper};

impl Translator<'_, '_> {
    pub(super) fn brx(&mut self, op: &Op) {
        let Some(Extra::Targets(targets)) = op.extra.as_deref() else { return };
        let idx = self.read(&op.a);
        let idx = self.b.ins().ireduce(I32, idx);
        let bad = self.b.create_block();
        let blocks: Vec<Block> = targets.iter().map(|&t| self.blocks[&(t as usize)]).collect();
        let calls: Vec<_> = blocks.into_iter().map(|b| self.b.func.dfg.block_call(b, &[])).collect();
        let default = self.b.func.dfg.block_call(bad, &[]);
        let jt = self.b.create_jump_table(JumpTableData::new(default, &calls));
        self.b.ins().br_table(idx, jt);
        self.b.switch_to_block(bad);
        self.fail(error::UNSUPPORTED, None, 0);
    }

    pub(super) fn call(&mut self, op: &Op) {
        let Some(Extra::Call { callee, args, rets }) = op.extra.as_deref() else { return };
        let frame = self.b.use_var(self.frame);
        // The function whose frame layout the call uses: the callee, or for an indirect call any defined
        // function with the prototype's parameters (all possible targets share it).
        let layout = match *callee {
            Callee::Direct(f) => match self.env.programs.get(&f) {
                Some(p) => p,
                None => {
                    self.builtin_call(f, args, rets);
                    return;
                }
            },
            Callee::Indirect(_) => {
                let sizes = |p: &&Program| {
                    !p.is_kernel
                        && p.frame.params.len() == args.len()
                        && p.frame.returns.len() == rets.len()
                        && args.iter().zip(&p.frame.params).all(|(a, &(_, size))| match *a {
                            CallArg::Frame(_, s) | CallArg::Reg(_, s) => s == size,
                            CallArg::Imm(_) => true,
                        })
                };
                let mut candidates: Vec<&Program> = self.env.programs.values().filter(sizes).collect();
                candidates.sort_by_key(|p| std::cmp::Reverse(p.frame.size));
                match candidates.first().copied() {
                    Some(p) => p,
                    None => {
                        self.fail_and_continue(error::UNSUPPORTED, None, 0);
                        return;
                    }
                }
            }
        };
        let callee_frame = self.b.ins().iadd_imm_s(frame, self.prog.frame.size as i64);
        // The callee's frame must fit in the thread's local memory.
        let limit = self.frames_end();
        let end = self.b.ins().iadd_imm_s(callee_frame, layout.frame.size as i64);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, limit);
        self.fail_if(over, error::STACK_OVERFLOW, None, 0);
        for (k, arg) in args.iter().enumerate() {
            let Some(&(off, size)) = layout.frame.params.get(k) else { continue };
            self.copy_in(arg, callee_frame, off as i32, size);
        }
        let sig = self.b.import_signature(device_signature(self.env.call_conv));
        let table = self.ctx_i64(cx::FUNCS);
        let fp = match *callee {
            Callee::Direct(f) => self.b.ins().load(I64, ro(), table, (f.as_u32() * 8) as i32),
            Callee::Indirect(src) => {
                // A function address is FUNCTION_WINDOW + 16 * id; anything else, or a function this kernel
                // cannot reach, is an error.
                let token = self.read(&src);
                let off = self.b.ins().iadd_imm_s(token, device::module::FUNCTION_WINDOW.wrapping_neg() as i64);
                let idx = self.b.ins().ushr_imm_s(off, 4);
                let low = self.b.ins().band_imm_s(off, 15);
                let n = self.env.names.len() as i64;
                let out = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, idx, n);
                let odd = self.b.ins().icmp_imm_s(IntCC::NotEqual, low, 0);
                let bad = self.b.ins().bor(out, odd);
                self.fail_if(bad, error::BAD_CALL, Some(token), 0);
                let byte = self.b.ins().ishl_imm_s(idx, 3);
                let at = self.b.ins().iadd(table, byte);
                let fp = self.b.ins().load(I64, ro(), at, 0);
                let none = self.b.ins().icmp_imm_s(IntCC::Equal, fp, 0);
                self.fail_if(none, error::BAD_CALL, Some(token), 0);
                fp
            }
        };
        let t = self.b.use_var(self.t);
        let tb = self.b.use_var(self.tb);
        let call = self.b.ins().call_indirect(sig, fp, &[self.ctx, tb, callee_frame, t]);
        let r = self.b.inst_results(call)[0];
        let ok = self.b.create_block();
        let not_ok = self.b.create_block();
        self.b.ins().brif(r, not_ok, &[], ok, &[]);
        self.b.switch_to_block(not_ok);
        let is_exit = self.b.ins().icmp_imm_s(IntCC::Equal, r, i64::from(ret::EXIT));
        let exit = self.b.create_block();
        let err = self.b.create_block();
        self.b.ins().brif(is_exit, exit, &[], err, &[]);
        self.b.switch_to_block(exit);
        self.thread_exit();
        self.b.switch_to_block(err);
        self.stop_on_error();
        self.b.switch_to_block(ok);
        self.filled = false;
        for (k, r) in rets.iter().enumerate() {
            let Some(&(off, size)) = layout.frame.returns.get(k) else { continue };
            self.copy_out(r, callee_frame, off as i32, size);
        }
    }

    /// Copies a call argument into the callee's frame.
    fn copy_in(&mut self, arg: &CallArg, dst: Value, off: i32, size: u64) {
        match *arg {
            CallArg::Frame(src_off, sz) => {
                let frame = self.b.use_var(self.frame);
                self.copy_bytes(frame, src_off as i32, dst, off, sz.min(size));
            }
            CallArg::Reg(slot, sz) => {
                let v = self.b.use_var(self.regs[slot as usize]);
                self.store_value(v, dst, off, sz.min(size).min(8) as u32);
            }
            CallArg::Imm(v) => {
                let v = self.b.ins().iconst(I64, v as i64);
                self.store_value(v, dst, off, size.min(8) as u32);
            }
        }
    }

    fn copy_out(&mut self, r: &CallArg, src: Value, off: i32, size: u64) {
        match *r {
            CallArg::Frame(dst_off, sz) => {
                let frame = self.b.use_var(self.frame);
                self.copy_bytes(src, off, frame, dst_off as i32, sz.min(size));
            }
            CallArg::Reg(slot, sz) => {
                let ty = match sz.min(size) {
                    1 => Ty::U8,
                    2 => Ty::U16,
                    4 => Ty::U32,
                    _ => Ty::U64,
                };
                let v = self.load_value(src, off, ty);
                self.b.def_var(self.regs[slot as usize], v);
            }
            CallArg::Imm(_) => {}
        }
    }

    fn copy_bytes(&mut self, src: Value, so: i32, dst: Value, d_o: i32, len: u64) {
        let mut k = 0u64;
        while k < len {
            let chunk = match len - k {
                8.. => 8,
                4..=7 => 4,
                2..=3 => 2,
                _ => 1,
            };
            let ty = match chunk {
                8 => Ty::U64,
                4 => Ty::U32,
                2 => Ty::U16,
                _ => Ty::U8,
            };
            let v = self.load_value(src, so + k as i32, ty);
            self.store_value(v, dst, d_o + k as i32, chunk as u32);
            k += chunk;
        }
    }

    /// Calls of functions declared but not defined: `vprintf`, `__assertfail`, `malloc` and `free`.
    fn builtin_call(&mut self, f: FuncId, args: &[CallArg], rets: &[CallArg]) {
        let arg = |me: &mut Self, k: usize| -> Value {
            match args.get(k) {
                Some(CallArg::Frame(off, _)) => {
                    let frame = me.b.use_var(me.frame);
                    me.b.ins().load(I64, flags(), frame, *off as i32)
                }
                Some(CallArg::Reg(slot, _)) => me.b.use_var(me.regs[*slot as usize]),
                Some(CallArg::Imm(v)) => me.b.ins().iconst(I64, *v as i64),
                None => me.b.ins().iconst(I64, 0),
            }
        };
        let name = self.env.func_name(f);
        if name == "vprintf" {
            let fmt = arg(self, 0);
            let a = arg(self, 1);
            let t = self.b.use_var(self.t);
            let n = self.helper(Helper::Printf, &[self.ctx, t, fmt, a]).expect("printf");
            let bad = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
            self.fail_if(bad, error::HELPER, None, 0);
            if let Some(r) = rets.first() {
                let v = self.b.ins().uextend(I64, n);
                match *r {
                    CallArg::Frame(off, _) => {
                        let frame = self.b.use_var(self.frame);
                        self.store_value(v, frame, off as i32, 4);
                    }
                    CallArg::Reg(slot, _) => self.b.def_var(self.regs[slot as usize], v),
                    CallArg::Imm(_) => {}
                }
            }
        } else if name == "malloc" || name == "free" {
            let a = arg(self, 0);
            if name == "malloc" {
                let ptr = self.helper(Helper::Malloc, &[self.ctx, a]).expect("malloc");
                if let Some(r) = rets.first() {
                    match *r {
                        CallArg::Frame(off, _) => {
                            let frame = self.b.use_var(self.frame);
                            self.store_value(ptr, frame, off as i32, 8);
                        }
                        CallArg::Reg(slot, _) => self.b.def_var(self.regs[slot as usize], ptr),
                        CallArg::Imm(_) => {}
                    }
                }
            } else {
                let bad = self.helper(Helper::Free, &[self.ctx, a]).expect("free");
                let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, bad, 0);
                self.fail_if(bad, error::HELPER, None, 0);
            }
        } else {
            // `__assertfail(message, file, line, function, char_size)`.
            let vals: Vec<Value> = (0..4).map(|k| arg(self, k)).collect();
            let t = self.b.use_var(self.t);
            self.helper(Helper::AssertFail, &[self.ctx, t, vals[0], vals[1], vals[2], vals[3]]);
            self.fail_and_continue(error::ASSERT, None, 0);
        }
    }
}
