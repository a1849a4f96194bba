//! Instructions and operands that steer how the hardware caches, schedules or allocates, and never change a
//! result: L2 cache policies (`createpolicy`, the cache-policy operand of `.L2::cache_hint` accesses),
//! programmatic dependent launch (`griddepcontrol`) and register reallocation (`setmaxnreg`). lockstep models
//! no caches, runs launches one after another and has no register file to share, so each is honoured by doing
//! nothing beyond what the ISA says the program can observe, and validated as `ptxas` does: a malformed one is
//! refused rather than ignored.

use ir::{Immediate, Modifier, Opcode, Operand, ScalarType, StateSpace, Word};

use crate::{Decoder, Frame, InstId, Kind, Op, RegMap, Src, Ty};

/// The eviction priorities of a cache policy, in the order of the ISA's `.level::primary_priority`.
const PRIORITIES: [Word; 4] = [Word::L2EvictLast, Word::L2EvictNormal, Word::L2EvictFirst, Word::L2EvictUnchanged];

/// The 64-bit value lockstep's `createpolicy` produces: the ISA makes it opaque (only `.L2::cache_hint`
/// accesses and `createpolicy.cvt` consume it), so it records the form and the priorities, and nothing of
/// the fraction or the range, which only matter to a cache.
pub fn policy_value(range: bool, primary: u8, secondary: u8) -> u64 {
    0x4C53_0000_0000_0000 | u64::from(range) << 16 | u64::from(primary) << 8 | u64::from(secondary)
}

impl Decoder<'_> {
    fn reg_type(&self, o: &Operand) -> Option<ScalarType> {
        match o {
            Operand::Reg(r) => Some(self.body.regs[*r].ty),
            _ => None,
        }
    }

    /// A 64-bit register or an integer immediate: a cache policy or an access property.
    fn is_policy_operand(&self, o: &Operand) -> bool {
        matches!(o, Operand::Imm(Immediate::Int { .. }))
            || self.reg_type(o).is_some_and(|t| t != ScalarType::Pred && t.size() == 8)
    }

    /// `createpolicy` (PTX ISA, "createpolicy"), every form:
    /// `createpolicy.fractional.primary{.secondary}.b64 d{, fraction}` (fraction an `.f32` register or an
    /// immediate in (0, 1]), `createpolicy.range{.global}.primary{.secondary}.b64 d, [a], primary-size,
    /// total-size` (sizes `.b32` registers or immediates, primary ≤ total), `createpolicy.cvt.L2.b64 d,
    /// access-property`. The result is an opaque 64-bit value: [`policy_value`] for the first two (a move of
    /// an immediate), the access property itself for `.cvt` (both are lockstep's opaque encodings).
    pub(crate) fn createpolicy(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let ops = &inst.operands;
        let words: Vec<Word> = inst.words().collect();
        let types: Vec<ScalarType> = inst.types().collect();
        let d_ok = ops.first().and_then(|o| self.reg_type(o)).is_some_and(|t| t != ScalarType::Pred && t.size() == 8);
        if types != [ScalarType::B64] || !d_ok {
            self.unsupported(i, "`createpolicy` writes a `.b64` cache policy to a 64-bit register");
            return;
        }
        let spaces: Vec<StateSpace> = inst.spaces().collect();
        op.kind = Kind::Mov;
        op.ty = Ty::B64;
        op.dst = self.dst(i, &ops[0], regs);
        if words.first() == Some(&Word::Cvt) {
            if words != [Word::Cvt, Word::L2]
                || !spaces.is_empty()
                || ops.len() != 2
                || !self.is_policy_operand(&ops[1])
            {
                self.unsupported(i, "`createpolicy.cvt.L2.b64 d, access-property` takes a 64-bit access property");
                return;
            }
            op.a = self.src(i, &ops[1], Ty::B64, regs, frame);
            return;
        }
        let range = match words.first() {
            Some(Word::Range) => true,
            Some(Word::Fractional) => false,
            _ => {
                self.unsupported(i, "`createpolicy` is `.fractional`, `.range` or `.cvt.L2`");
                return;
            }
        };
        let priority = |w: Option<&Word>| PRIORITIES.iter().position(|p| Some(p) == w);
        let primary = priority(words.get(1));
        let secondary = match words.get(2) {
            None => Some(PRIORITIES.len()),
            Some(Word::L2EvictFirst | Word::L2EvictUnchanged) => priority(words.get(2)),
            Some(_) => None,
        };
        let (Some(primary), Some(secondary)) = (primary, secondary) else {
            self.unsupported(
                i,
                "`createpolicy` takes a primary priority (`.L2::evict_last`, `.L2::evict_normal`, `.L2::evict_first`, \
                 `.L2::evict_unchanged`) and optionally a secondary one (`.L2::evict_first`, `.L2::evict_unchanged`)",
            );
            return;
        };
        if words.len() > 3 {
            self.unsupported(i, "`createpolicy` takes one form and at most two priorities");
            return;
        }
        let operands_ok = if range {
            let size = |o: &Operand| match o {
                Operand::Imm(Immediate::Int { value, .. }) => Some(Some(*value)),
                o => self.reg_type(o).is_some_and(|t| t != ScalarType::Pred && t.size() == 4).then_some(None),
            };
            let sizes = (ops.get(2).and_then(size), ops.get(3).and_then(size));
            let sizes_ok = match sizes {
                (Some(Some(p)), Some(Some(t))) => (0..=i64::from(u32::MAX)).contains(&t) && (0..=t).contains(&p),
                (Some(_), Some(_)) => true,
                _ => false,
            };
            ops.len() == 4
                && matches!(ops[1], Operand::Address(_))
                && sizes_ok
                && spaces.iter().all(|s| *s == StateSpace::Global)
        } else {
            let fraction_ok = match ops.get(1) {
                None => true,
                Some(Operand::Imm(imm)) => {
                    let f = f32::from_bits(crate::immediate(*imm, Ty::F32) as u32);
                    f > 0.0 && f <= 1.0
                }
                Some(o) => self.reg_type(o) == Some(ScalarType::F32),
            };
            ops.len() <= 2 && fraction_ok && spaces.is_empty()
        };
        if !operands_ok {
            self.unsupported(
                i,
                if range {
                    "`createpolicy.range{.global}` takes d, [a], primary-size, total-size (32-bit, primary ≤ total)"
                } else {
                    "`createpolicy.fractional` takes d and optionally a fraction: an `.f32` register or an \
                     immediate in (0, 1]"
                },
            );
            return;
        }
        op.a = Src::Imm(policy_value(range, primary as u8, secondary as u8));
    }

    /// The operands of a memory access without its cache policy: `ld`, `st`, `atom` and `red` with
    /// `.L2::cache_hint` take a last operand, a 64-bit register or an immediate, that only steers the L2
    /// cache (PTX ISA, "ld", "st", "atom", "red"), so the engines never read it. `None` (after refusing) when the
    /// operand is missing or malformed, comes without the qualifier, or the access is not to global memory
    /// (`ptxas` refuses the hint on other spaces, and on `atom.cas`).
    pub(crate) fn without_cache_policy<'o>(&mut self, i: InstId, inst: &'o ir::Inst) -> Option<&'o [Operand]> {
        let ops = &inst.operands[..];
        let plain = match inst.opcode {
            Opcode::Ld | Opcode::St | Opcode::Red => 2,
            Opcode::Atom if inst.has(Word::Cas) => 4,
            Opcode::Atom => 3,
            _ => return Some(ops),
        };
        let hint = inst.has(Word::L2CacheHint);
        if !hint {
            if ops.len() > plain {
                self.unsupported(i, "a cache-policy operand needs the `.L2::cache_hint` qualifier");
                return None;
            }
            return Some(ops);
        }
        let global = inst.modifiers.iter().all(|m| !matches!(m, Modifier::Space(s) if *s != StateSpace::Global));
        if !global || (inst.opcode == Opcode::Atom && inst.has(Word::Cas)) || inst.has(Word::Async) {
            self.unsupported(
                i,
                "`.L2::cache_hint` applies to global (or generic) `ld`, `st`, `atom` and `red`, not `atom.cas`",
            );
            return None;
        }
        match ops.split_last() {
            Some((policy, rest)) if rest.len() == plain && self.is_policy_operand(policy) => Some(rest),
            _ => {
                self.unsupported(i, "`.L2::cache_hint` takes a last operand: the cache policy, a 64-bit register");
                None
            }
        }
    }

    /// The cache-policy operand of `cp.async ... .L2::cache_hint`, checked like the others.
    pub(crate) fn cache_policy_ok(&self, o: Option<&Operand>) -> bool {
        o.is_some_and(|o| self.is_policy_operand(o))
    }
}

impl Decoder<'_> {
    /// `griddepcontrol.launch_dependents` and `griddepcontrol.wait` (programmatic dependent launch): no
    /// effect. lockstep runs the launches of a stream one after another, each to its end before the next
    /// starts, so by the time a dependent grid runs its `wait`, every prerequisite grid has completed and its
    /// memory operations are visible, which is all `wait` guarantees; and `launch_dependents` only allows a
    /// dependent grid to be scheduled early, which lockstep never does.
    pub(crate) fn griddepcontrol(&mut self, op: &mut Op, i: InstId, _: &RegMap, _: &Frame) {
        let inst = &self.body.insts[i];
        let one = matches!(inst.modifiers.as_slice(), [Modifier::Word(Word::LaunchDependents | Word::Wait)]);
        if !one || !inst.operands.is_empty() {
            self.unsupported(i, "`griddepcontrol` is `.launch_dependents` or `.wait`, without operands");
            return;
        }
        op.kind = Kind::Nop;
    }

    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 imm` (PTX ISA, "setmaxnreg"): a hint that moves registers
    /// between the warps of a warpgroup; lockstep's threads keep every register they declare, so it has no
    /// effect. The count is what `ptxas` takes: an immediate from 24 to 256, a multiple of 8.
    pub(crate) fn setmaxnreg(&mut self, op: &mut Op, i: InstId, _: &RegMap, _: &Frame) {
        let inst = &self.body.insts[i];
        let mut words = inst.words();
        let form_ok = matches!(
            (words.next(), words.next(), words.next(), words.next()),
            (Some(Word::Inc | Word::Dec), Some(Word::Sync), Some(Word::Aligned), None)
        ) && inst.types().eq([ScalarType::U32]);
        let count_ok = matches!(inst.operands.as_slice(),
            [Operand::Imm(Immediate::Int { value, .. })] if (24..=256).contains(value) && value % 8 == 0);
        if !form_ok || !count_ok {
            self.unsupported(
                i,
                "`setmaxnreg.{inc,dec}.sync.aligned.u32` takes an immediate register count from 24 to 256, a multiple of 8",
            );
            return;
        }
        op.kind = Kind::Nop;
    }
}
