//! `jit::inline`: every corpus kernel inlines into IR that verifies and prints back to PTX that compiles, with
//! no call left to a function that uses barriers or warp collectives; and `-G` kernels give the same outputs in
//! the emulator before and after inlining.

use std::path::{Path, PathBuf};

mod common;

use common::Arg;
use device::Dim3;
use graph::cranelift_entity::EntityRef;
use ir::{FuncId, Module, Opcode, Operand, Symbol};
use jit::inline::inline_for_kernel;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx")
}

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

/// An independent statement of which functions must be inlined: those containing (or calling, directly or
/// through an alias) a barrier (`bar.warp.sync` included), a warp collective, a warp matrix instruction or a
/// texture/surface instruction.
fn must_inline(module: &Module) -> Vec<bool> {
    let alias = |f: FuncId| {
        module
            .items
            .iter()
            .find_map(|i| match *i {
                ir::Item::Alias { alias, aliasee } if alias == f => Some(aliasee),
                _ => None,
            })
            .unwrap_or(f)
    };
    let direct = |f: &ir::Function| {
        f.body.as_ref().is_some_and(|b| {
            b.insts.values().any(|i| {
                use Opcode::*;
                matches!(
                    i.opcode,
                    Bar | Barrier
                        | Shfl
                        | Vote
                        | Match
                        | Redux
                        | Activemask
                        | Elect
                        | Wmma
                        | Mma
                        | Ldmatrix
                        | Stmatrix
                        | Movmatrix
                        | Wgmma
                        | Tex
                        | Tld4
                        | Txq
                        | Suld
                        | Sust
                        | Suq
                        | Sured
                        | Istypep
                )
            })
        })
    };
    let mut needs: Vec<bool> = module.functions.values().map(direct).collect();
    for _ in 0..module.functions.len() + 1 {
        for (f, func) in module.functions.iter() {
            let calls = func.body.iter().flat_map(|b| b.insts.values()).filter_map(callee).map(alias);
            let n = calls.fold(needs[f.index()], |acc, g| acc || needs[g.index()]);
            needs[f.index()] = n;
        }
    }
    for f in module.functions.keys() {
        needs[f.index()] = needs[alias(f).index()];
    }
    needs
}

fn callee(inst: &ir::Inst) -> Option<FuncId> {
    if inst.opcode != Opcode::Call {
        return None;
    }
    inst.operands.iter().find_map(|o| match o {
        Operand::Symbol(Symbol::Func(f)) => Some(*f),
        _ => None,
    })
}

fn calls_needing(module: &Module, kernel: FuncId, needs: &[bool]) -> Vec<String> {
    let body = module.functions[kernel].body.as_ref().expect("kernel body");
    body.insts
        .values()
        .filter_map(callee)
        .filter(|f| needs[f.index()])
        .map(|f| module.functions[f].name.clone())
        .collect()
}

#[test]
fn corpus_kernels_inline_verify_and_print() {
    let mut files = Vec::new();
    ptx_files(&corpus_dir(), &mut files);
    assert!(files.len() > 100, "corpus not found under {}", corpus_dir().display());
    let (mut kernels, mut inlined, mut refused, mut compiled) = (0, 0, 0, 0);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Ok(module) = ir::compile(&text) else { continue };
        compiled += 1;
        let needs = must_inline(&module);
        let kernel_ids: Vec<FuncId> = module.kernels().map(|(k, _)| k).collect();
        for k in kernel_ids {
            kernels += 1;
            let kname = &module.functions[k].name;
            let what = format!("{} `{kname}`", path.display());
            match inline_for_kernel(&module, k) {
                Ok(None) => {
                    assert!(calls_needing(&module, k, &needs).is_empty(), "{what}: nothing inlined, but calls remain")
                }
                Ok(Some(out)) => {
                    inlined += 1;
                    if let Err(d) = ir::verify(&out) {
                        panic!("{what}: the inlined module does not verify: {:?}", &d[..d.len().min(5)]);
                    }
                    let left = calls_needing(&out, k, &needs);
                    assert!(left.is_empty(), "{what}: calls left after inlining: {left:?}");
                    // Only the kernel changed.
                    for (f, func) in module.functions.iter() {
                        if f != k {
                            assert_eq!(func, &out.functions[f], "{what}: `{}` changed", func.name);
                        }
                    }
                    // Copied instructions keep their source positions: every collective or barrier of the
                    // inlined kernel still points at PTX text with that opcode.
                    let body = out.functions[k].body.as_ref().expect("body");
                    for inst in body.insts.values() {
                        if matches!(inst.opcode, Opcode::Shfl | Opcode::Vote | Opcode::Activemask) {
                            let src = out.source_text(inst.span);
                            assert!(
                                src.starts_with(inst.opcode.as_str()),
                                "{what}: span of `{}` is `{src}`",
                                inst.opcode
                            );
                        }
                    }
                    let printed = ir::print(&out);
                    if let Err(d) = ir::compile(&printed) {
                        let line = d.first().map(|d| out_line(&printed, d.span.start)).unwrap_or_default();
                        panic!("{what}: the printed module does not compile: {:?}\n{line}", &d[..d.len().min(5)]);
                    }
                }
                Err(e) => {
                    refused += 1;
                    assert!(e.contains("recursion") || e.contains("indirect"), "{what}: inlining failed: {e}");
                }
            }
        }
    }
    eprintln!("{compiled} files, {kernels} kernels: {inlined} inlined, {refused} refused (recursion, indirect calls)");
    assert!(inlined >= 20, "expected the -G corpus to need inlining, got {inlined} kernels");
}

fn out_line(text: &str, offset: u32) -> String {
    let start = text[..offset as usize].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset as usize..].find('\n').map_or(text.len(), |i| offset as usize + i);
    text[start..end].to_string()
}

#[test]
fn hand_written_forms() {
    // Guarded calls, register and immediate arguments, a register return, a callee that writes its parameter,
    // a shared variable in the callee (one per CTA), nested calls, and a call of a function that needs no
    // inlining left alone.
    let src = r#"
.version 7.0
.target sm_80
.address_size 64

.func (.param .b32 r) plain(.param .b32 a)
{
    .reg .b32 %x;
    ld.param.b32 %x, [a];
    add.s32 %x, %x, 1;
    st.param.b32 [r], %x;
    ret;
}

.func (.reg .b32 out) sum_warp(.reg .b32 v, .param .b32 k)
{
    .reg .b32 %r<4>;
    .reg .pred %p;
    .shared .b32 cell;
    ld.param.b32 %r1, [v];
    ld.param.b32 %r3, [k];
    st.param.b32 [k], 7;
    shfl.sync.bfly.b32 %r2|%p, %r1, 1, 31, -1;
    add.s32 %r1, %r1, %r2;
    setp.eq.s32 %p, %r3, 0;
    @%p ret;
    st.shared.b32 [cell], %r1;
    bar.sync 0;
    ld.shared.b32 %r1, [cell];
    st.param.b32 [out], %r1;
    ret;
}

.func (.param .b32 r) outer(.param .b32 a)
{
    .reg .b32 %y<3>;
    ld.param.b32 %y1, [a];
    {
    .param .b32 q;
    st.param.b32 [q], 1;
    call (%y2), sum_warp, (%y1, q);
    }
    st.param.b32 [r], %y2;
}

.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p, %r1, 64;
    @%p call (%r2), sum_warp, (%r1, 0);
    @!%p call (%r6), sum_warp, (%r1, 0);
$L_loop:
    {
    .param .b32 a0;
    .param .b32 r0;
    st.param.b32 [a0], %r1;
    call (r0), outer, (a0);
    ld.param.b32 %r3, [r0];
    }
    {
    .param .b32 a1;
    .param .b32 r1;
    st.param.b32 [a1], %r3;
    call (r1), plain, (a1);
    ld.param.b32 %r4, [r1];
    }
    add.s32 %r5, %r3, %r4;
    add.s32 %r5, %r5, %r2;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;
}
"#;
    let module = ir::compile(src).unwrap_or_else(|d| panic!("{d:?}"));
    let k = module.function("k").expect("kernel");
    let out = inline_for_kernel(&module, k).expect("inlines").expect("something to inline");
    ir::verify(&out).unwrap_or_else(|d| panic!("{d:?}"));
    let needs = must_inline(&out);
    assert!(calls_needing(&out, k, &needs).is_empty());
    let body = out.functions[k].body.as_ref().expect("body");
    // `plain` stays a call; `sum_warp` is inlined three times (twice directly, once through `outer`), its `.shared` once.
    let calls: Vec<&str> = body.insts.values().filter_map(callee).map(|f| out.functions[f].name.as_str()).collect();
    assert_eq!(calls, ["plain"]);
    let shared = body.vars.values().filter(|v| v.space == ir::StateSpace::Shared).count();
    assert_eq!(shared, 1);
    assert_eq!(body.insts.values().filter(|i| i.opcode == Opcode::Shfl).count(), 3);
    let printed = ir::print(&out);
    ir::compile(&printed).unwrap_or_else(|d| panic!("{d:?}\n{printed}"));
    // A function without collectives has nothing to inline.
    let plain_only = src
        .replace("@%p call (%r2), sum_warp, (%r1, 0);", "")
        .replace("@!%p call (%r6), sum_warp, (%r1, 0);", "")
        .replace("call (r0), outer, (a0);", "");
    let m2 = ir::compile(&plain_only).unwrap_or_else(|d| panic!("{d:?}"));
    assert!(inline_for_kernel(&m2, m2.function("k").expect("k")).expect("ok").is_none());

    // Behaviour: 32 threads, the emulator before and after.
    let args = [Arg::Buf(vec![0; 32 * 4])];
    let before = run(&module, "k", 1, 32, &args).expect("runs");
    let after = run(&out, "k", 1, 32, &args).expect("runs inlined");
    assert_eq!(before, after);
}

#[test]
fn recursion_is_refused() {
    let src = r#"
.version 7.0
.target sm_80
.address_size 64
.func f(.param .b32 a);
.func g(.param .b32 a)
{
    .param .b32 p;
    st.param.b32 [p], 1;
    call f, (p);
    ret;
}
.func f(.param .b32 a)
{
    .param .b32 p;
    bar.sync 0;
    st.param.b32 [p], 1;
    call g, (p);
    ret;
}
.visible .entry k()
{
    .param .b32 p;
    st.param.b32 [p], 1;
    call f, (p);
    ret;
}
"#;
    let module = ir::compile(src).unwrap_or_else(|d| panic!("{d:?}"));
    let err = inline_for_kernel(&module, module.function("k").expect("k")).expect_err("recursion");
    assert!(err.contains("recursion") && err.contains("f -> g -> f"), "{err}");
}

#[test]
fn indirect_call_to_collective_is_refused() {
    let src = r#"
.version 7.0
.target sm_80
.address_size 64
.func f(.param .b32 a)
{
    .reg .b32 %r;
    activemask.b32 %r;
    ret;
}
.visible .entry k()
{
    .reg .b64 %fp;
    .param .b32 p;
    proto: .callprototype _ (.param .b32 _);
    mov.u64 %fp, f;
    st.param.b32 [p], 1;
    call %fp, (p), proto;
    ret;
}
"#;
    let module = ir::compile(src).unwrap_or_else(|d| panic!("{d:?}"));
    let err = inline_for_kernel(&module, module.function("k").expect("k")).expect_err("indirect");
    assert!(err.contains("indirect"), "{err}");
}

/// Runs `kernel` in the emulator on fresh memory; returns every buffer's final bytes and the printf output.
fn run(module: &Module, kernel: &str, grid: u32, block: u32, args: &[Arg]) -> Result<(Vec<Vec<u8>>, Vec<u8>), String> {
    let (grid, block) = (Dim3::new(grid, 1, 1), Dim3::new(block, 1, 1));
    common::launch(&mut emu::Emulator::new(), module, kernel, grid, block, 0, args)
}

fn f32s(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn i32s(v: impl IntoIterator<Item = i32>) -> Vec<u8> {
    v.into_iter().flat_map(i32::to_le_bytes).collect()
}

/// A small deterministic generator.
fn lcg(seed: u32) -> impl FnMut() -> u32 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        s >> 8
    }
}

/// Small exact values (0, ±0.5, ±1, ±2, 3) as f16 and bf16 bits.
const F16: [u16; 8] = [0x0000, 0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4200];
const BF16: [u16; 8] = [0x0000, 0x3F00, 0xBF00, 0x3F80, 0xBF80, 0x4000, 0xC000, 0x4040];

/// A 16x16 matrix of such values.
fn halves(table: [u16; 8], r: &mut dyn FnMut() -> u32) -> Arg {
    Arg::Buf((0..256).flat_map(|_| table[r() as usize % 8].to_le_bytes()).collect())
}

/// Launches of -G corpus kernels that call functions with barriers or collectives: (file stem, kernel, grid,
/// block, arguments).
fn cases() -> Vec<(&'static str, &'static str, u32, u32, Vec<Arg>)> {
    let mut r = lcg(7);
    let small_f32 = |n: usize, r: &mut dyn FnMut() -> u32| f32s((0..n).map(|_| (r() % 17) as f32 - 8.0));
    let any_i32 = |n: usize, r: &mut dyn FnMut() -> u32| i32s((0..n).map(|_| (r() % 2001) as i32 - 1000));
    let zero = |n: usize| Arg::Buf(vec![0; n]);
    let a = small_f32(3000, &mut r);
    let b = small_f32(3000, &mut r);
    vec![
        (
            "workloads",
            "dot_product",
            3,
            128,
            vec![Arg::Buf(a), Arg::Buf(b), zero(4), Arg::Scalar(3000i32.to_le_bytes().to_vec())],
        ),
        ("warp_ops", "shuffles", 1, 64, vec![Arg::Buf(small_f32(64, &mut r)), zero(64 * 4), zero(64 * 8)]),
        ("warp_ops", "warp_reduce_sum", 2, 128, vec![Arg::Buf(small_f32(256, &mut r)), zero(8 * 4)]),
        ("warp_ops", "votes", 1, 96, vec![Arg::Buf(any_i32(96, &mut r)), zero(4 * 96 * 4)]),
        ("warp_ops", "match_and_redux", 1, 96, vec![Arg::Buf(any_i32(96, &mut r)), zero(8 * 96 * 4)]),
        ("warp_ops", "coop_groups_tiles", 1, 64, vec![Arg::Buf(small_f32(64, &mut r)), zero(64 * 4)]),
        ("warp_ops", "warp_asm_forms", 1, 64, vec![Arg::Buf(any_i32(64, &mut r)), zero(64 * 4)]),
        ("barriers", "sync_variants", 2, 200, vec![Arg::Buf(any_i32(400, &mut r)), zero(400 * 4)]),
        ("barriers", "warp_sync_and_fences", 1, 128, vec![Arg::Buf(i32s(vec![-1; 128])), zero(128 * 4)]),
        ("barriers", "named_barriers", 1, 64, vec![Arg::Buf(small_f32(64, &mut r)), zero(192 * 4)]),
        (
            "barriers",
            "barrier_in_loop",
            3,
            96,
            vec![Arg::Buf(small_f32(288, &mut r)), zero(288 * 4), Arg::Scalar(5i32.to_le_bytes().to_vec())],
        ),
        ("barriers", "barrier_in_uniform_cond", 4, 100, vec![Arg::Buf(small_f32(400, &mut r)), zero(400 * 4)]),
        ("tensor_core", "wmma_16x16x16_f16_f32", 1, 32, vec![halves(F16, &mut r), halves(F16, &mut r), zero(1024)]),
        (
            "tensor_core",
            "wmma_16x16x16_f16_f16",
            1,
            32,
            vec![halves(F16, &mut r), halves(F16, &mut r), halves(F16, &mut r)],
        ),
        ("tensor_core", "wmma_bf16", 1, 32, vec![halves(BF16, &mut r), halves(BF16, &mut r), zero(1024)]),
    ]
}

#[test]
fn debug_builds_run_the_same_after_inlining() {
    let mut compared = 0;
    let mut changed = 0;
    for arch in ["sm_50", "sm_70", "sm_75", "sm_80", "sm_90"] {
        for (stem, kernel, grid, block, args) in cases() {
            let path = corpus_dir().join(stem).join(format!("{stem}.{arch}.G.ptx"));
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let module = ir::compile(&text).unwrap_or_else(|d| panic!("{}: {d:?}", path.display()));
            let Some(k) = module.function(kernel) else { continue };
            if module.functions[k].params.len() != args.len() {
                panic!("{} `{kernel}`: {} parameters", path.display(), module.functions[k].params.len());
            }
            let what = format!("{} `{kernel}`", path.display());
            let inlined = match inline_for_kernel(&module, k).unwrap_or_else(|e| panic!("{what}: {e}")) {
                Some(m) => {
                    changed += 1;
                    m
                }
                None => continue,
            };
            let before = match run(&module, kernel, grid, block, &args) {
                Ok(out) => out,
                Err(e) => {
                    // The original does not run in the emulator (e.g. an instruction it lacks): the inlined
                    // version must fail too.
                    assert!(run(&inlined, kernel, grid, block, &args).is_err(), "{what}: only the inlined one runs");
                    eprintln!("{what}: not run ({e})");
                    continue;
                }
            };
            let initial: Vec<&Vec<u8>> = args
                .iter()
                .filter_map(|a| match a {
                    Arg::Buf(b) => Some(b),
                    Arg::Scalar(_) | Arg::TensorMap(..) => None,
                })
                .collect();
            assert!(before.0.iter().zip(&initial).any(|(o, i)| o != *i), "{what}: the launch wrote nothing");
            let after = run(&inlined, kernel, grid, block, &args).unwrap_or_else(|e| panic!("{what}: inlined: {e}"));
            assert!(before == after, "{what}: outputs differ after inlining");
            compared += 1;
        }
    }
    eprintln!("{compared} launches compared ({changed} kernels changed by inlining)");
    assert!(compared >= 40, "only {compared} launches compared");
}
