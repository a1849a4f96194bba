//! CTA-uniform values: registers and predicates that hold the same value in every thread of a CTA at every
//! point of the kernel, and so branches that every thread takes the same way.
//!
//! A flow-insensitive fixpoint, optimistic (everything uniform until a write shows otherwise): a write is
//! uniform when its op is a pure function of uniform operands (or a load of kernel parameters or constant
//! memory at a uniform address), unguarded or guarded by a uniform predicate, and not under varying control.
//! The caller names the ops under varying control it knows of (`vector.rs`: the ranges of branches it runs
//! as masks). The result holds only where the rest of the control flow is uniform too: every conditional
//! branch, guarded `ret`/`exit` and indirect branch outside those ranges decides on a uniform value
//! ([`Uniform::control_is_uniform`]). Then, by induction over the steps of a run, every thread of the CTA
//! passes the same ops outside the ranges in the same order with the same uniform values: a loop counter
//! written by uniform ops is uniform only because no thread leaves the loop earlier than another.

use ir::SpecialReg;
use program::{Kind, Op, Program, Space, Src, SymAddr};

/// Whether a special register reads the same in every thread of a CTA (components of `%tid` do not; `%warpid`
/// is the same only within a warp).
pub fn cta_uniform(sr: SpecialReg) -> bool {
    matches!(
        sr,
        SpecialReg::Ntid
            | SpecialReg::Ctaid
            | SpecialReg::Nctaid
            | SpecialReg::Clusterid
            | SpecialReg::Nclusterid
            | SpecialReg::Nwarpid
            | SpecialReg::Nsmid
            | SpecialReg::Gridid
            | SpecialReg::ClusterNctarank
            | SpecialReg::IsExplicitCluster
            | SpecialReg::DynamicSmemSize
            | SpecialReg::TotalSmemSize
    )
}

/// Uniformity of the liveness variables (register slots, then predicates, as `plan.rs` numbers them).
#[derive(Clone, Debug)]
pub struct Uniform {
    slots: usize,
    vars: Vec<bool>,
}

impl Uniform {
    /// The fixpoint, with `varying_control(i)` true for the ops that run under a varying condition.
    pub fn new(prog: &Program, varying_control: impl Fn(usize) -> bool) -> Uniform {
        let slots = prog.slots as usize;
        let mut u = Uniform { slots, vars: vec![true; slots + prog.preds as usize] };
        let mut changed = true;
        while changed {
            changed = false;
            for (i, op) in prog.ops.iter().enumerate() {
                if varying_control(i) || !u.uniform_write(op) {
                    crate::plan::for_each_def(prog, op, |v| {
                        if u.vars[v] {
                            u.vars[v] = false;
                            changed = true;
                        }
                    });
                }
            }
        }
        u
    }

    /// Whether an operand is the same in every thread.
    pub fn src(&self, s: &Src) -> bool {
        match *s {
            Src::None | Src::Imm(_) => true,
            Src::Reg(r) => self.vars[r as usize],
            Src::Pred(p, _) => self.vars[self.slots + p as usize],
            // Local variables are per thread; every other symbol is one address for the CTA.
            Src::Sym(sym, _) => !matches!(sym, SymAddr::Frame(_)),
            Src::Special(sr, _) => cta_uniform(sr),
        }
    }

    /// Whether liveness variable `v` (register slots, then predicates) is the same in every thread.
    pub fn var(&self, v: usize) -> bool {
        self.vars[v]
    }

    /// Whether predicate `p` is the same in every thread.
    pub fn pred(&self, p: u32) -> bool {
        self.vars[self.slots + p as usize]
    }

    /// Whether every thread of a CTA takes the same path through the kernel outside the ops under
    /// `varying_control` (the condition under which [`Uniform`]'s answers hold).
    pub fn control_is_uniform(&self, prog: &Program, varying_control: impl Fn(usize) -> bool) -> bool {
        prog.ops.iter().enumerate().all(|(i, op)| {
            varying_control(i)
                || match op.kind {
                    Kind::Bra | Kind::Ret | Kind::Exit | Kind::Trap => op.guard.is_none_or(|(p, _)| self.pred(p)),
                    Kind::Brx => op.guard.is_none_or(|(p, _)| self.pred(p)) && self.src(&op.a),
                    _ => true,
                }
        })
    }

    /// Whether `op`'s writes are the same in every thread, given uniform control.
    fn uniform_write(&self, op: &Op) -> bool {
        if op.guard.is_some_and(|(p, _)| !self.pred(p)) {
            return false;
        }
        // Multi-register operands (`Extra`) and the carry flag are not followed.
        if op.extra.is_some() || op.m.cc {
            return false;
        }
        let sources = [&op.a, &op.b, &op.c, &op.d].into_iter().all(|s| self.src(s));
        match op.kind {
            // Memory that no thread writes during the kernel, at one address.
            Kind::Ld => {
                let fixed = matches!(op.m.space, Space::Const | Space::Param)
                    || matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _));
                fixed && self.src(&op.mem.base) && sources
            }
            Kind::Add
            | Kind::Sub
            | Kind::Mul
            | Kind::Mad
            | Kind::Mul24
            | Kind::Mad24
            | Kind::Sad
            | Kind::Div
            | Kind::Rem
            | Kind::Abs
            | Kind::Neg
            | Kind::Min
            | Kind::Max
            | Kind::Fma
            | Kind::Rcp
            | Kind::Sqrt
            | Kind::Rsqrt
            | Kind::Sin
            | Kind::Cos
            | Kind::Lg2
            | Kind::Ex2
            | Kind::Tanh
            | Kind::Copysign
            | Kind::Testp
            | Kind::And
            | Kind::Or
            | Kind::Xor
            | Kind::Not
            | Kind::Cnot
            | Kind::Shl
            | Kind::Shr
            | Kind::Lop3
            | Kind::Shf
            | Kind::Prmt
            | Kind::Bfe
            | Kind::Bfi
            | Kind::Brev
            | Kind::Popc
            | Kind::Clz
            | Kind::Bfind
            | Kind::Fns
            | Kind::Bmsk
            | Kind::Szext
            | Kind::Dp4a
            | Kind::Dp2a
            | Kind::Setp
            | Kind::Set
            | Kind::Selp
            | Kind::Slct
            | Kind::Mov
            | Kind::Cvt
            | Kind::Cvta => sources,
            // Writes that depend on the thread or on memory others write; ops without writes.
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kernel;

    fn branch_uniform(prog: &Program, u: &Uniform) -> Vec<bool> {
        prog.ops
            .iter()
            .filter(|o| o.kind == Kind::Bra && o.guard.is_some())
            .map(|o| u.pred(o.guard.expect("guarded").0))
            .collect()
    }

    #[test]
    fn loop_over_block_size_is_uniform_and_tid_test_is_not() {
        let prog = kernel(
            ".reg .b32 %r<6>;\n.reg .pred %p<3>;\n\
             mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ntid.x;\n shr.u32 %r3, %r2, 1;\n\
             L: setp.ge.u32 %p1, %r1, %r3;\n @%p1 bra S;\n add.u32 %r4, %r1, 1;\n\
             S: bar.sync 0;\n shr.u32 %r3, %r3, 1;\n setp.ne.u32 %p2, %r3, 0;\n @%p2 bra L;\n ret;",
        );
        let u = Uniform::new(&prog, |_| false);
        // The first branch tests tid.x (varying), the loop's back edge the halved block size (uniform).
        assert_eq!(branch_uniform(&prog, &u), vec![false, true]);
        assert!(!u.control_is_uniform(&prog, |_| false));
        // With the tid.x branch's range run under a mask, the rest of the control flow is uniform.
        let first = prog.ops.iter().position(|o| o.kind == Kind::Bra).expect("branch");
        let target = prog.ops[first].target as usize;
        let masked = |i: usize| i > first && i < target;
        let u = Uniform::new(&prog, masked);
        let varying = |i: usize| i == first || masked(i);
        assert!(u.control_is_uniform(&prog, varying));
    }

    #[test]
    fn loads_of_parameters_are_uniform_and_of_global_memory_are_not() {
        let prog = kernel(
            ".reg .b32 %r<4>;\n.reg .b64 %rd<3>;\n.reg .pred %p<3>;\n\
             ld.param.u32 %r1, [n];\n ld.param.u64 %rd1, [p];\n ld.global.u32 %r2, [%rd1];\n\
             setp.eq.u32 %p1, %r1, 0;\n @%p1 bra A;\n A: setp.eq.u32 %p2, %r2, 0;\n @%p2 bra B;\n B: ret;",
        );
        let u = Uniform::new(&prog, |_| false);
        assert_eq!(branch_uniform(&prog, &u), vec![true, false]);
    }

    #[test]
    fn a_write_under_a_varying_guard_is_varying() {
        let prog = kernel(
            ".reg .b32 %r<4>;\n.reg .pred %p<3>;\n\
             mov.u32 %r1, %tid.x;\n setp.eq.u32 %p1, %r1, 0;\n mov.u32 %r2, 0;\n @%p1 mov.u32 %r2, 7;\n\
             setp.eq.u32 %p2, %r2, 0;\n @%p2 bra B;\n B: ret;",
        );
        let u = Uniform::new(&prog, |_| false);
        assert_eq!(branch_uniform(&prog, &u), vec![false]);
    }
}
