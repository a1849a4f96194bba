//! The modifiers of an instruction as the decoder reads them ([`Mods`]): rounding, saturation, comparison
//! and boolean operators, state space, vector width, and each family's sub-operation ([`Sub`]).

use ir::{Modifier, Opcode, StateSpace, Word};

use crate::{AtomOp, BoolOp, Cmp, Mods, Part, Rnd, ShflMode, Space, Sub, VoteMode};

pub(crate) fn mods(inst: &ir::Inst) -> Mods {
    let mut m = Mods::default();
    let is = |w: Word| inst.has(w);
    for md in &inst.modifiers {
        match *md {
            Modifier::Word(w) => match w {
                Word::Rn => m.rnd = Rnd::Rn,
                Word::Rz => m.rnd = Rnd::Rz,
                Word::Rm => m.rnd = Rnd::Rm,
                Word::Rp => m.rnd = Rnd::Rp,
                Word::Rna => m.rnd = Rnd::Rna,
                Word::Rni => m.rnd = Rnd::Rni,
                Word::Rzi => m.rnd = Rnd::Rzi,
                Word::Rmi => m.rnd = Rnd::Rmi,
                Word::Rpi => m.rnd = Rnd::Rpi,
                Word::Ftz => m.ftz = true,
                Word::Sat => m.sat = true,
                Word::Approx => m.approx = true,
                Word::Full => m.full = true,
                Word::NaN => m.nan = true,
                Word::Relu => m.relu = true,
                Word::Abs => m.abs = true,
                Word::Cc => m.cc = true,
                Word::Hi => m.part = Part::Hi,
                Word::Lo => m.part = Part::Lo,
                Word::Wide => m.part = Part::Wide,
                Word::Eq => m.cmp = Some(Cmp::Eq),
                Word::Ne => m.cmp = Some(Cmp::Ne),
                Word::Lt => m.cmp = Some(Cmp::Lt),
                Word::Le => m.cmp = Some(Cmp::Le),
                Word::Gt => m.cmp = Some(Cmp::Gt),
                Word::Ge => m.cmp = Some(Cmp::Ge),
                Word::Ls => m.cmp = Some(Cmp::Ls),
                Word::Hs => m.cmp = Some(Cmp::Hs),
                Word::Equ => m.cmp = Some(Cmp::Equ),
                Word::Neu => m.cmp = Some(Cmp::Neu),
                Word::Ltu => m.cmp = Some(Cmp::Ltu),
                Word::Leu => m.cmp = Some(Cmp::Leu),
                Word::Gtu => m.cmp = Some(Cmp::Gtu),
                Word::Geu => m.cmp = Some(Cmp::Geu),
                Word::Num => m.cmp = Some(Cmp::Num),
                Word::Nan => m.cmp = Some(Cmp::Nan),
                _ => {}
            },
            Modifier::Space(s) => {
                m.space = match s {
                    StateSpace::Global => Space::Global,
                    StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => Space::Shared,
                    StateSpace::Local => Space::Local,
                    StateSpace::Const => Space::Const,
                    StateSpace::Param | StateSpace::ParamEntry | StateSpace::ParamFunc => Space::Param,
                    _ => Space::Generic,
                }
            }
            Modifier::Vector(n) => m.vec = n,
            _ => {}
        }
    }
    // `lo`/`hi` double as comparison operators on setp/set (unsigned <, >).
    if inst.opcode == Opcode::Lop3 {
        m.boolop = if is(Word::And) {
            Some(BoolOp::And)
        } else if is(Word::Or) {
            Some(BoolOp::Or)
        } else {
            None
        };
    }
    if matches!(inst.opcode, Opcode::Setp | Opcode::Set) {
        if is(Word::Lo) {
            m.cmp = Some(Cmp::Lo);
        }
        if is(Word::Hi) {
            m.cmp = Some(Cmp::Hi);
        }
        m.boolop = if is(Word::And) {
            Some(BoolOp::And)
        } else if is(Word::Or) {
            Some(BoolOp::Or)
        } else if is(Word::Xor) {
            Some(BoolOp::Xor)
        } else {
            None
        };
    }
    let atom_op = || {
        Some(if is(Word::Add) {
            AtomOp::Add
        } else if is(Word::Min) {
            AtomOp::Min
        } else if is(Word::Max) {
            AtomOp::Max
        } else if is(Word::Inc) {
            AtomOp::Inc
        } else if is(Word::Dec) {
            AtomOp::Dec
        } else if is(Word::Cas) {
            AtomOp::Cas
        } else if is(Word::Exch) {
            AtomOp::Exch
        } else if is(Word::And) {
            AtomOp::And
        } else if is(Word::Or) {
            AtomOp::Or
        } else if is(Word::Xor) {
            AtomOp::Xor
        } else if is(Word::Popc) {
            AtomOp::Popc
        } else {
            return None;
        })
    };
    m.sub = match inst.opcode {
        Opcode::Atom | Opcode::Red | Opcode::Redux => Sub::Atom(atom_op().unwrap_or_default()),
        Opcode::Bar | Opcode::Barrier => {
            Sub::Bar { wait: !is(Word::Arrive), red: if is(Word::Red) { atom_op() } else { None } }
        }
        Opcode::Shfl => Sub::Shfl(if is(Word::Up) {
            ShflMode::Up
        } else if is(Word::Down) {
            ShflMode::Down
        } else if is(Word::Bfly) {
            ShflMode::Bfly
        } else {
            ShflMode::Idx
        }),
        Opcode::Vote => Sub::Vote(if is(Word::All) {
            VoteMode::All
        } else if is(Word::Any) {
            VoteMode::Any
        } else if is(Word::Uni) {
            VoteMode::Uni
        } else {
            VoteMode::Ballot
        }),
        Opcode::Match => Sub::MatchAll(is(Word::All)),
        Opcode::Shf => Sub::Shf { left: is(Word::L), clamp: is(Word::Clamp) },
        Opcode::Prmt => Sub::Prmt(if is(Word::F4e) {
            1
        } else if is(Word::B4e) {
            2
        } else if is(Word::Rc8) {
            3
        } else if is(Word::Ecl) {
            4
        } else if is(Word::Ecr) {
            5
        } else if is(Word::Rc16) {
            6
        } else {
            0
        }),
        Opcode::Testp => Sub::Testp(
            [Word::Finite, Word::Infinite, Word::Number, Word::Notanumber, Word::Normal, Word::Subnormal]
                .into_iter()
                .find(|w| is(*w))
                .unwrap_or(Word::Finite),
        ),
        Opcode::Bfind if is(Word::Shiftamt) => Sub::Shiftamt,
        Opcode::Cvta => Sub::Cvta { to: is(Word::To) },
        Opcode::Szext | Opcode::Bmsk => Sub::Clamp(is(Word::Clamp)),
        _ => Sub::None,
    };
    m
}
