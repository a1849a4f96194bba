//! A pass over the vector path's finished Cranelift IR: a lane moved out of a vector (`extractlane`) that
//! was built from scalars by lane-wise integer ops is computed from those scalars instead.
//!
//! The vector path computes addresses and indices as vectors (`tid`, `sdata + 4 * tid`, `base + 4 * gid`)
//! and then needs lane 0 of them as a scalar for each vector access. Moving a lane out costs a shuffle on
//! the vector ports (and a zero-extension), where the scalar ops are a few cheap ALU ops that often fold
//! into the access's address; the vector itself is then often left unused and removed. The vector builder
//! does this for what it can see while it emits ops (`Vector::lane_of`), but values that reach a use through
//! a Cranelift variable across blocks are block parameters until the blocks are sealed; here, after sealing,
//! the trivial ones are aliases of the values they carry.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::types::{I32, I32X4, I64, I64X2};
use cranelift_codegen::ir::{DataFlowGraph, Function, InstBuilder, InstructionData, Opcode, Type, Value};

/// At most this many ops in the scalar form of one lane (more would cost more than the move it saves).
const MAX_OPS: u32 = 12;

/// Rewrites every `extractlane` of an `i32x4` or `i64x2` vector made, through `iadd`, `isub`, `imul`,
/// `band`, `bor`, `bxor`, shifts by a scalar and integer widening, only of `splat`s and constants.
pub fn scalar_lanes(func: &mut Function) {
    let mut cur = FuncCursor::new(func);
    while cur.next_block().is_some() {
        while let Some(inst) = cur.next_inst() {
            let InstructionData::BinaryImm8 { opcode: Opcode::Extractlane, arg, imm } = cur.func.dfg.insts[inst] else {
                continue;
            };
            let lane = imm;
            let mut budget = MAX_OPS;
            if !from_scalars(&cur.func.dfg, arg, &mut budget) {
                continue;
            }
            // Inserted before the `extractlane`, which becomes an alias of the scalar.
            let x = emit(&mut cur, arg, lane);
            let result = cur.func.dfg.first_result(inst);
            cur.func.dfg.detach_inst_results(inst);
            cur.func.dfg.change_to_alias(result, x);
            cur.remove_inst_and_step_back();
        }
    }
}

/// The lane type of the vectors this pass follows.
fn lane_type(ty: Type) -> Option<Type> {
    match ty {
        I32X4 => Some(I32),
        I64X2 => Some(I64),
        _ => None,
    }
}

/// Whether every lane of `v` is computed from scalars and constants within `budget` ops.
fn from_scalars(dfg: &DataFlowGraph, v: Value, budget: &mut u32) -> bool {
    if *budget == 0 || lane_type(dfg.value_type(v)).is_none() {
        return false;
    }
    *budget -= 1;
    let Some(inst) = dfg.value_def(v).inst() else { return false };
    match dfg.insts[inst] {
        InstructionData::Unary { opcode: Opcode::Splat, .. }
        | InstructionData::UnaryConst { opcode: Opcode::Vconst, .. } => true,
        InstructionData::Unary {
            opcode: Opcode::UwidenLow | Opcode::UwidenHigh | Opcode::SwidenLow | Opcode::SwidenHigh,
            arg,
        } => from_scalars(dfg, arg, budget),
        InstructionData::Binary {
            opcode: Opcode::Iadd | Opcode::Isub | Opcode::Imul | Opcode::Band | Opcode::Bor | Opcode::Bxor,
            args,
        } => from_scalars(dfg, args[0], budget) && from_scalars(dfg, args[1], budget),
        // A vector shift's amount is a scalar.
        InstructionData::Binary { opcode: Opcode::Ishl | Opcode::Ushr | Opcode::Sshr, args } => {
            from_scalars(dfg, args[0], budget)
        }
        _ => false,
    }
}

/// Lane `lane` of `v` (for which [`from_scalars`] holds) as scalar ops inserted at the cursor.
fn emit(cur: &mut FuncCursor, v: Value, lane: u8) -> Value {
    let ty = lane_type(cur.func.dfg.value_type(v)).expect("a vector of 32- or 64-bit lanes");
    let inst = cur.func.dfg.value_def(v).inst().expect("an instruction's result");
    match cur.func.dfg.insts[inst] {
        InstructionData::Unary { opcode: Opcode::Splat, arg } => arg,
        InstructionData::UnaryConst { opcode: Opcode::Vconst, constant_handle } => {
            let bytes = cur.func.dfg.constants.get(constant_handle).as_slice();
            let size = ty.bytes() as usize;
            let at = usize::from(lane) * size;
            let mut le = [0u8; 8];
            le[..size].copy_from_slice(&bytes[at..at + size]);
            cur.ins().iconst(ty, i64::from_le_bytes(le))
        }
        InstructionData::Unary { opcode, arg } => {
            // Widening: lanes 0-1 of the result from lanes 0-1 (low) or 2-3 (high) of the argument.
            let from = if matches!(opcode, Opcode::UwidenLow | Opcode::SwidenLow) { lane } else { lane + 2 };
            let x = emit(cur, arg, from);
            if matches!(opcode, Opcode::UwidenLow | Opcode::UwidenHigh) {
                cur.ins().uextend(ty, x)
            } else {
                cur.ins().sextend(ty, x)
            }
        }
        InstructionData::Binary { opcode: opcode @ (Opcode::Ishl | Opcode::Ushr | Opcode::Sshr), args } => {
            let x = emit(cur, args[0], lane);
            let (inst, dfg) = cur.ins().Binary(opcode, ty, x, args[1]);
            dfg.first_result(inst)
        }
        InstructionData::Binary { opcode, args } => {
            let x = emit(cur, args[0], lane);
            let y = emit(cur, args[1], lane);
            let (inst, dfg) = cur.ins().Binary(opcode, ty, x, y);
            dfg.first_result(inst)
        }
        _ => unreachable!("from_scalars accepted it"),
    }
}
