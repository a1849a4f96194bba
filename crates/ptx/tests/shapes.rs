//! The AST shapes the IR relies on, for the constructs where the mapping from text is a decision.

use ptx::ast::*;
use ptx::keywords::{Modifier, Opcode, ScalarType, Shape, Word};

const HEADER: &str = ".version 8.5\n.target sm_80\n.address_size 64\n";

/// Parses `body` as the body of a kernel and returns its statements (spans included).
fn body(body: &str) -> Vec<Statement<'static>> {
    let text: &'static str =
        Box::leak(format!("{HEADER}.visible .entry k(.param .u64 p)\n{{\n{body}\n}}\n").into_boxed_str());
    let module =
        ptx::parse(text).unwrap_or_else(|d| panic!("{}", ptx::diagnostic::render_all(&d, "t", text.as_bytes())));
    match module.items.into_iter().next() {
        Some(Item::Function(Function { body: Some(b), .. })) => b,
        other => panic!("expected a kernel, got {other:?}"),
    }
}

fn instruction(text: &str) -> Instruction<'static> {
    match body(text).into_iter().next() {
        Some(Statement::Instruction(i)) => i,
        other => panic!("expected an instruction, got {other:?}"),
    }
}

fn operands(text: &str) -> Vec<Operand<'static>> {
    let mut ops: Vec<_> = instruction(text).operands.into_iter().collect();
    ops.iter_mut().for_each(strip);
    ops
}

/// Zeroes the spans of an operand, for comparisons.
fn strip(o: &mut Operand<'_>) {
    match o {
        Operand::Name(_, _, s)
        | Operand::Not(_, s)
        | Operand::Neg(_, _, s)
        | Operand::Imm(_, s)
        | Operand::Pair(_, _, s)
        | Operand::Sink(s)
        | Operand::SymbolOffset(_, _, s) => *s = Span::default(),
        Operand::Address(a) => a.span = Span::default(),
        Operand::Vector(items, s)
        | Operand::Bracket(items, s)
        | Operand::List(items, s)
        | Operand::VectorPair(items, _, s) => {
            *s = Span::default();
            items.iter_mut().for_each(strip);
        }
    }
}

const Z: Span = Span { start: 0, end: 0 };

fn int(value: i64) -> Operand<'static> {
    Operand::Imm(Immediate::Int { value, unsigned: false }, Z)
}

#[test]
fn opcodes_modifiers_and_guards() {
    let i = instruction("@!%p1 cvt.rn.f32.s32 %f1, %r1;");
    assert_eq!(i.opcode, Opcode::Cvt);
    assert_eq!(
        i.modifiers.as_slice(),
        &[Modifier::Word(Word::Rn), Modifier::Type(ScalarType::F32), Modifier::Type(ScalarType::S32)]
    );
    let g = i.guard.expect("guard");
    assert!(g.negated);
    assert_eq!(g.reg, "%p1");
    let i = instruction("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r2}, {%f2};");
    assert!(i.modifiers.contains(&Modifier::Shape(Shape { m: 16, n: 8, k: Some(16) })));
    let i = instruction("ld.global.L2::cache_hint.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1], %rd2;");
    assert!(i.modifiers.contains(&Modifier::Word(Word::L2CacheHint)));
    assert!(i.modifiers.contains(&Modifier::Vector(4)));
}

#[test]
fn operand_forms() {
    assert_eq!(operands("mov.u32 %r1, %tid.x;")[1], Operand::Name("%tid", Some(Component::X), Z));
    assert_eq!(operands("selp.b32 %r1, 1, -1, !%p;")[1..], [int(1), int(-1), Operand::Not("%p", Z)]);
    assert_eq!(operands("setp.eq.s32 %p|%q, %r1, 0;")[0], Operand::Pair("%p", "%q", Z));
    assert_eq!(operands("mbarrier.arrive.shared.b64 _, [bar];")[0], Operand::Sink(Z));
    assert_eq!(
        operands("ld.shared.f32 %f1, [%r1+-4];")[1],
        Operand::Address(Address { base: AddressBase::Reg("%r1"), offset: -4, span: Z })
    );
    assert_eq!(
        operands("ld.param.u64 %rd1, [p+8];")[1],
        Operand::Address(Address { base: AddressBase::Symbol("p"), offset: 8, span: Z })
    );
    assert_eq!(
        operands("ld.global.u32 %r1, [0x100];")[1],
        Operand::Address(Address { base: AddressBase::Absolute(256), offset: 0, span: Z })
    );
    assert_eq!(operands("mov.u64 %rd1, arr+8;")[1], Operand::SymbolOffset("arr", 8, Z));
    assert_eq!(
        operands("tex.2d.v4.f32.f32 {%f1, _, %f2, %f3}, [%rd1, {%f4, %f5}];")[1],
        Operand::Bracket(
            vec![
                Operand::Name("%rd1", None, Z),
                Operand::Vector(vec![Operand::Name("%f4", None, Z), Operand::Name("%f5", None, Z)], Z)
            ],
            Z
        )
    );
    assert!(
        matches!(&operands("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}|%p, [%rd1, {%f4, %f5}];")[0], Operand::VectorPair(v, "%p", _) if v.len() == 4)
    );
    // Floats keep their spelling; constant expressions fold.
    assert_eq!(operands("mov.f32 %f1, 0fBF800000;")[1], Operand::Imm(Immediate::F32Bits(0xBF80_0000), Z));
    assert_eq!(operands("mov.f32 %f1, -0f3F800000;")[1], Operand::Imm(Immediate::F32Bits(0xBF80_0000), Z));
    assert_eq!(operands("mov.f64 %fd1, 1.5;")[1], Operand::Imm(Immediate::Float(1.5), Z));
    assert_eq!(operands("mov.u32 %r1, (1 << 4) + 3;")[1], int(19));
    assert_eq!(operands("mov.u32 %r1, 7 > 3 ? 10 : 20;")[1], int(10));
    assert_eq!(operands("mov.u64 %r1, 0xFFFFFFFFFFFFFFFF;")[1], int(-1));
    assert_eq!(operands("mov.u64 %r1, 5U;")[1], Operand::Imm(Immediate::Int { value: 5, unsigned: true }, Z));
    // Video operands: SIMD lane selectors and masks (digits as written), negated registers (vmad).
    let lanes = |half, digits: &[u8]| {
        let mut d = [0; 4];
        d[..digits.len()].copy_from_slice(digits);
        Some(Component::Lanes(ptx::ast::Lanes { half, len: digits.len() as u8, digits: d }))
    };
    let ops = operands("vadd4.u32.u32.u32 %r1.b320, %r2.b7654, %r3.b0123, %r4;");
    assert_eq!(ops[0], Operand::Name("%r1", lanes(false, &[3, 2, 0]), Z));
    assert_eq!(ops[1], Operand::Name("%r2", lanes(false, &[7, 6, 5, 4]), Z));
    assert_eq!(
        operands("vadd2.u32.u32.u32 %r1.h10, %r2, %r3.h32, %r4;")[2],
        Operand::Name("%r3", lanes(true, &[3, 2]), Z)
    );
    let ops = operands("vmad.s32.s32.s32 %r1, -%r2.h1, %r3, -%r4;");
    assert_eq!(ops[1], Operand::Neg("%r2", Some(Component::H1), Z));
    assert_eq!(ops[3], Operand::Neg("%r4", None, Z));
    assert_eq!(operands("vmad.s32.s32.s32 %r1, %r2, %r3, -4;")[3], int(-4));
    // Lane digits past the part count do not parse: .h4 (half-words 0-3), .b8 (bytes 0-7), five bytes.
    for bad in ["%r2.h14", "%r2.b8765", "%r2.b76543"] {
        let text = format!("{HEADER}.visible .entry k() {{ vadd2.u32.u32.u32 %r1, {bad}, %r3, %r4; }}\n");
        assert!(ptx::parse(&text).is_err(), "{bad}");
    }
}

#[test]
fn calls() {
    let ops = operands("call.uni (retval0), vprintf, (param0, param1);");
    assert_eq!(ops.len(), 3);
    assert_eq!(ops[0], Operand::List(vec![Operand::Name("retval0", None, Z)], Z));
    assert_eq!(ops[1], Operand::Name("vprintf", None, Z));
    assert!(matches!(&ops[2], Operand::List(v, _) if v.len() == 2));
    let ops = operands("call (r), %rd1, (p), prototype_0;");
    assert_eq!(ops.len(), 4);
    assert_eq!(ops[3], Operand::Name("prototype_0", None, Z));
}

#[test]
fn statements() {
    let b = body(
        "$L1: .branchtargets $L2, $L3;\n\
         proto: .callprototype (.param .b32 _) _ (.param .b64 _);\n\
         .loc 1 2 3, function_name $L__info_string0, inlined_at 1 5 6\n\
         $L2:\n{\n.reg .b32 %r<4>;\n}\n$L3:\nret;",
    );
    assert!(matches!(&b[0], Statement::BranchTargets { label: "$L1", targets, .. } if targets == &["$L2", "$L3"]));
    assert!(
        matches!(&b[1], Statement::CallPrototype(p) if p.label == "proto" && p.returns.len() == 1 && p.params[0].name.is_none())
    );
    assert!(
        matches!(&b[2], Statement::Loc(l) if l.function_name == Some("$L__info_string0") && l.inlined_at == Some((1, 5, 6)))
    );
    assert!(matches!(&b[3], Statement::Label("$L2", _)));
    assert!(
        matches!(&b[4], Statement::Block(inner, _) if matches!(&inner[0], Statement::Variable(v) if v.declarators[0].range == Some(4)))
    );
}

#[test]
fn declarations_and_initializers() {
    let text = format!(
        "{HEADER}.global .align 8 .u64 p[2] = {{generic(a) + 8, -1}};\n\
         .global .u32 m[2][3] = {{{{1, 2, 3}}, {{4, 5, 6}}}};\n\
         .global .samplerref s = {{ filter_mode = nearest }};\n\
         .visible .entry k(.param .u64 .ptr .global .align 16 a, .param .align 8 .b8 b[24])\n.maxntid 128, 1, 1\n{{ ret; }}\n"
    );
    let m = ptx::parse(&text).expect("parses");
    let Item::Variable(p) = &m.items[0] else { panic!() };
    let Some(Initializer::List(items, _)) = &p.declarators[0].init else { panic!() };
    assert!(
        matches!(&items[0], Initializer::Expr(Expr::Binary(BinaryOp::Add, a, _, _)) if matches!(**a, Expr::Generic("a", _)))
    );
    assert!(matches!(&items[1], Initializer::Expr(Expr::Imm(Immediate::Int { value: -1, .. }, _))));
    let Item::Variable(mat) = &m.items[1] else { panic!() };
    assert_eq!(mat.declarators[0].dims.as_slice(), &[Some(2), Some(3)]);
    let Item::Variable(s) = &m.items[2] else { panic!() };
    assert!(
        matches!(&s.declarators[0].init, Some(Initializer::List(v, _)) if matches!(&v[0], Initializer::Named { name: "filter_mode", value: Expr::Symbol("nearest", _), .. }))
    );
    let Item::Function(k) = &m.items[3] else { panic!() };
    assert_eq!(k.params[0].ptr, Some(PtrAttr { space: Some(StateSpace::Global), align: Some(16) }));
    assert_eq!(k.params[1].dims.as_slice(), &[Some(24)]);
    assert!(matches!(&k.directives[0], FunctionDirective::MaxNtid(v, _) if v.as_slice() == [128, 1, 1]));
}

#[test]
fn sections_with_and_without_entries() {
    let text = format!("{HEADER}.section .debug_str\n{{\n$L__s0:\n.b8 1, 2, 3\n.b32 $L__a-$L__b\n}}\n");
    let m = ptx::parse(&text).expect("parses");
    let Item::Section(s) = &m.items[0] else { panic!() };
    assert_eq!(s.name, ".debug_str");
    assert_eq!(s.body, "\n$L__s0:\n.b8 1, 2, 3\n.b32 $L__a-$L__b\n");
    assert_eq!(s.entries.len(), 3);
    assert!(
        matches!(&s.entries[2], SectionEntry::Data { ty: ScalarType::B32, values, .. } if matches!(values[0], Expr::Binary(BinaryOp::Sub, ..)))
    );
    let options = ptx::ParseOptions { section_entries: false };
    let m2 = ptx::parse_with(&text, options).expect("parses");
    let Item::Section(s2) = &m2.items[0] else { panic!() };
    assert!(s2.entries.is_empty());
    assert_eq!(s2.body, s.body);
    assert_eq!(m2.to_string(), m.to_string());
    // Malformed sections are still diagnosed without entries.
    let bad = format!("{HEADER}.section .debug_str {{ .b8 1, }}\n");
    assert!(ptx::parse_with(&bad, options).is_err());
}

#[test]
fn diagnostics_are_owned_and_thread_safe() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    assert_traits::<ptx::Diagnostic>();
    let diags = {
        let text = String::from(".version 8.5\n.target sm_80\n\tbogus;\n");
        ptx::parse(&text).expect_err("fails")
    };
    // The source is gone; the diagnostics still stand on their own.
    assert_eq!(diags[0].span, Span { start: 28, end: 33 });
    let rendered = diags[0].render("x.ptx", ".version 8.5\n.target sm_80\n\tbogus;\n");
    assert!(rendered.starts_with("x.ptx:3:2: error: "), "{rendered}");
    // Invalid UTF-8 is located by line and column, and other errors are still found.
    let bytes = b".version 8.5\n.target sm_80\n.visible .entry k() {\n\tret\xff;\n\tfoo;\n}\n";
    let diags = ptx::parse_bytes(bytes).expect_err("fails");
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert_eq!(diags[0].line_col(bytes), (4, 5));
    assert!(diags[0].message.contains("0xFF"));
    assert!(diags[1].message.contains("unknown opcode `foo`"));
}
