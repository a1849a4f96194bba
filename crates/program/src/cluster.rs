//! Thread-block clusters as lockstep launches them: every CTA is a cluster of one (a kernel's cluster
//! dimensions are 1×1×1, `%cluster_nctarank` is 1, `%cluster_ctarank` 0), so a CTA's shared memory is all the
//! distributed shared memory its threads can reach. `mapa` to rank 0 is the address itself and to any other
//! rank an error at run time; `getctarank` of a shared memory address (the only operand the ISA defines it
//! for) is 0. `%is_explicit_cluster` is true for a kernel that declares its cluster (`explicit`).

use ir::{Immediate, Modifier, Opcode, Operand, ScalarType, StateSpace};

use crate::{Decoder, Frame, InstId, Kind, Op, RegMap, Src, Ty};

/// The error of `mapa` to a CTA rank other than 0, the same on both engines.
pub fn rank_error(rank: u64) -> String {
    format!(
        "`mapa` to CTA rank {rank} of a cluster of one CTA: lockstep launches every CTA as a cluster of 1×1×1, \
         whose only rank is 0"
    )
}

/// `%is_explicit_cluster` in a launch of `kernel`: whether the cluster was specified by the user rather than
/// implied (PTX ISA, "%is_explicit_cluster"). A kernel declared `.explicitcluster` must be launched with
/// cluster dimensions, and one declared `.reqnctapercluster` is launched with the cluster it names (nvcc
/// writes both for `__cluster_dims__`); other kernels run in the implicit 1×1×1 clusters. (A launch attribute
/// giving a cluster shape to another kernel does not reach the engines: it reads false there.)
pub fn explicit(kernel: &ir::Function) -> bool {
    kernel.directives.iter().any(|d| matches!(d, ir::Directive::ExplicitCluster | ir::Directive::ReqNctaPerCluster(_)))
}

impl Decoder<'_> {
    /// `mapa{.shared::cluster}.{u32,u64} d, a, b` and `getctarank{.shared::cluster}.{u32,u64} d, a` (PTX ISA,
    /// "mapa", "getctarank"): `a` a register of the type's width, or with `.shared::cluster` a shared variable
    /// (plus an offset); `d` of the type (`mapa`) or 32 bits (`getctarank`); `b` a 32-bit rank.
    pub(crate) fn cluster_address(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let ops = &inst.operands;
        let mapa = inst.opcode == Opcode::Mapa;
        let name = inst.opcode;
        let bits = |o: &Operand| match o {
            Operand::Reg(r) if self.body.regs[*r].ty != ScalarType::Pred => Some(self.body.regs[*r].ty.size() * 8),
            _ => None,
        };
        let width = match inst.types().collect::<Vec<_>>().as_slice() {
            [ScalarType::U32] => 32,
            [ScalarType::U64] => 64,
            _ => 0,
        };
        let mut spaces = inst.spaces();
        let cluster = match (spaces.next(), spaces.next()) {
            (None, _) => Some(false),
            (Some(StateSpace::SharedCluster), None) => Some(true),
            _ => None,
        };
        let words_ok = inst.modifiers.iter().all(|m| matches!(m, Modifier::Space(_) | Modifier::Type(_)));
        let a_ok = |o: Option<&Operand>| match o {
            Some(o @ Operand::Reg(_)) => bits(o) == Some(width),
            Some(Operand::Symbol(_) | Operand::SymbolOffset(..)) => cluster == Some(true),
            _ => false,
        };
        let ok = width != 0
            && cluster.is_some()
            && words_ok
            && ops.first().and_then(bits) == Some(if mapa { width } else { 32 })
            && a_ok(ops.get(1))
            && if mapa {
                ops.len() == 3
                    && matches!(&ops[2], Operand::Imm(Immediate::Int { .. }) | Operand::Reg(_))
                    && (matches!(ops[2], Operand::Imm(_)) || bits(&ops[2]) == Some(32))
            } else {
                ops.len() == 2
            };
        if !ok {
            let form = if mapa { "d, a, b (a 32-bit CTA rank)" } else { "d, a (d 32-bit)" };
            self.unsupported(
                i,
                &format!(
                    "`{name}{{.shared::cluster}}.{{u32,u64}} {form}` takes a shared memory address: a register of the \
                     type's width, or a shared variable with `.shared::cluster`"
                ),
            );
            return;
        }
        op.dst = self.dst(i, &ops[0], regs);
        if mapa {
            op.kind = Kind::Mapa;
            op.a = self.src(i, &ops[1], op.ty, regs, frame);
            op.b = self.src(i, &ops[2], Ty::U32, regs, frame);
        } else {
            op.kind = Kind::Mov;
            op.ty = Ty::U32;
            op.a = Src::Imm(0);
        }
    }
}
