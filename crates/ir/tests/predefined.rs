//! PTX's predefined constant `WARP_SZ` (what nvcc writes for CUDA's `warpSize`) in an instruction and an
//! initializer, and a name of the program's own that shadows nothing.

use ir::{ConstExpr, Immediate, Init, Operand};

#[test]
fn warp_sz_is_the_warp_size() {
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
                .global .align 4 .u32 lanes[2] = {WARP_SZ, 1};\n\
                .visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<3>;\nmov.u32 %r1, WARP_SZ;\nret;\n}\n";
    let m = ir::compile(text).unwrap_or_else(|d| panic!("{d:?}"));
    let k = m.function("k").unwrap();
    let body = m.functions[k].body.as_ref().unwrap();
    let mov = body.insts.values().find(|i| format!("{:?}", i.opcode).contains("Mov")).expect("the mov");
    assert!(
        mov.operands.iter().any(|o| matches!(o, Operand::Imm(Immediate::Int { value: 32, .. }))),
        "{:?}",
        mov.operands
    );
    let lanes = m.globals.values().find(|g| g.name == "lanes").unwrap();
    let Some(Init::List(items)) = &lanes.init else { panic!("{:?}", lanes.init) };
    assert!(matches!(items[0], Init::Expr(ConstExpr::Imm(Immediate::Int { value: 32, .. }))), "{items:?}");
    // The printed module compiles again.
    ir::compile(&ir::print(&m)).unwrap_or_else(|d| panic!("{d:?}"));
}
