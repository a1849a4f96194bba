//! The compile pipeline for one kernel: decode every function it can reach, plan thread fusion, translate
//! each function to Cranelift IR, compile, and place the machine code in executable memory.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::{Function, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use device::{LoadedModule, SharedLayout};
use ir::FuncId;
use program::{Callee, Extra, Program, Src, SymAddr};

use crate::abi::thread;
use crate::cache;
use crate::code::Code;
use crate::plan::{yield_kind, Plan, YieldKind};
use crate::translate::{device_signature, kernel_signature, Env, Translator};
use crate::vector;

/// The largest vector path (bytes of machine code for one group) also compiled for several groups at once
/// (`vector::GROUPS_AT_ONCE`), a form that emits every op once per group: the benchmark kernels' are under
/// 2 KiB, and larger ones took most of the corpus's compile time in that form.
const MAX_CODE_FOR_GROUPS_AT_ONCE: usize = 4096;

/// Local memory per thread when device functions recurse (the depth is then unknown).
const RECURSIVE_LOCAL_BYTES: u64 = 16 << 10;

/// A compiled kernel and everything its launches need.
#[derive(Debug)]
pub struct Compiled {
    /// The machine code (kept mapped while the kernel may run).
    _code: Code,
    pub kernel: FuncId,
    /// Entry of the kernel's thread loop.
    pub entry: usize,
    /// Entry of the kernel's vector path (`vector.rs`), or why it has none.
    pub vector: Result<usize, String>,
    /// Whether the vector path runs whole CTAs (`vector.rs`'s whole-CTA mode).
    pub vector_whole_ctas: bool,
    /// The vector path for bundles of `vector::GROUPS_AT_ONCE` groups (kernels without yield points).
    pub vector_bundles: Option<usize>,
    /// Entries of the device functions, by `FuncId` (0 for functions the kernel cannot call).
    pub funcs: Vec<usize>,
    pub programs: HashMap<FuncId, Program>,
    /// `*const Op` by site number, and the function and op index of each site.
    pub ops: Vec<usize>,
    pub sites: Vec<(FuncId, u32)>,
    pub plan: Plan,
    pub has_collectives: bool,
    /// Whether the kernel has `wgmma.mma_async`, whose warpgroups meet (`exec/warpgroup.rs`).
    pub has_warpgroups: bool,
    /// Whether the kernel has `bar.red`.
    pub has_reductions: bool,
    /// For each yield point: the barrier id and expected count when they are immediates (`None` when the
    /// threads post them, or for collectives).
    pub barrier_imms: Vec<(Option<u32>, Option<u32>)>,
    pub shared: SharedLayout,
    /// Whether any function of the kernel can reach shared memory (a shared-space op or a shared symbol,
    /// the only ways to form a shared address): the others skip zeroing it for every CTA.
    pub touches_shared: bool,
    /// Bytes of a group of threads' state words (`abi::thread`), and of a thread's local memory.
    pub group_bytes: u64,
    pub local_stride: u64,
    /// Where each thread's dynamic stack (`alloca`, `translate/stack.rs`) starts in its local memory, when
    /// some function has a stack instruction.
    pub dyn_stack: Option<u64>,
    /// The module with device functions inlined into the kernel, when any were (its ops are what
    /// `programs` decoded; error locations look instructions up here).
    pub inlined: Option<ir::Module>,
    pub compile_time: Duration,
}

pub fn isa() -> Result<OwnedTargetIsa, String> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
    let builder = cranelift_native::builder().map_err(|e| format!("no Cranelift backend for this CPU: {e}"))?;
    builder.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())
}

/// Lists what the JIT cannot run, each with its PTX line (empty when everything is supported).
pub fn unsupported(module: &LoadedModule, programs: &HashMap<FuncId, Program>) -> Vec<String> {
    let mut out = Vec::new();
    for (f, prog) in programs {
        for op in &prog.ops {
            let why = match op.kind {
                        _ if !prog.is_kernel && yield_kind(op).is_some() => Some(
                    "barriers and warp collectives inside device functions are not implemented by the JIT (only in kernels)",
                ),
                _ => None,
            };
            if let Some(why) = why {
                out.push(program::unsupported_entry(&module.module, *f, op.inst, why));
            }
        }
    }
    out.sort();
    out
}

/// Per-thread local memory: the deepest chain of frames from the kernel.
fn local_bytes(programs: &HashMap<FuncId, Program>, kernel: FuncId) -> u64 {
    fn depth(
        f: FuncId,
        programs: &HashMap<FuncId, Program>,
        on_path: &mut Vec<FuncId>,
        memo: &mut HashMap<FuncId, u64>,
    ) -> Option<u64> {
        if let Some(&d) = memo.get(&f) {
            return Some(d);
        }
        if on_path.contains(&f) {
            return None;
        }
        let prog = programs.get(&f)?;
        on_path.push(f);
        let mut deepest = 0;
        for op in &prog.ops {
            let callees: Vec<FuncId> = match op.extra.as_deref() {
                Some(Extra::Call { callee: Callee::Direct(g), .. }) => vec![*g],
                // An indirect call may reach any device function.
                Some(Extra::Call { callee: Callee::Indirect(_), .. }) => {
                    programs.iter().filter(|(_, p)| !p.is_kernel).map(|(&g, _)| g).collect()
                }
                _ => Vec::new(),
            };
            for g in callees.into_iter().filter(|g| programs.contains_key(g)) {
                deepest = deepest.max(depth(g, programs, on_path, memo)?);
            }
        }
        on_path.pop();
        let d = prog.frame.size + deepest;
        memo.insert(f, d);
        Some(d)
    }
    depth(kernel, programs, &mut Vec::new(), &mut HashMap::new()).unwrap_or(RECURSIVE_LOCAL_BYTES)
}

pub fn compile(
    isa: &OwnedTargetIsa,
    module: &LoadedModule,
    kernel: FuncId,
    check: bool,
    vectorize: bool,
    cache_dir: Option<&std::path::Path>,
) -> Result<Compiled, Vec<String>> {
    let start = Instant::now();
    // Device functions with barriers or warp collectives are inlined: a thread can stop only in the kernel.
    let inlined = crate::inline::inline_for_kernel(&module.module, kernel)
        .map_err(|e| vec![format!("`{}`: {e}", module.module.functions[kernel].name)])?
        .map(|m| LoadedModule { module: m, global_addresses: module.global_addresses.clone() });
    let module = inlined.as_ref().unwrap_or(module);
    let shared = SharedLayout::for_kernel(&module.module, kernel);
    let programs = program::decode_all(module, kernel, &shared)?;
    let mut bad = unsupported(module, &programs);
    let cas16 = isa.isa_flags().iter().any(|f| f.name == "has_cmpxchg16b" && f.as_bool() == Some(true));
    for (f, prog) in programs.iter().filter(|_| !cas16) {
        for op in prog.ops.iter().filter(|op| op.kind == program::Kind::Atom128) {
            let why = "128-bit atomics need a 16-byte compare-and-swap instruction (x86-64 `cmpxchg16b`), which this CPU lacks";
            bad.push(program::unsupported_entry(&module.module, *f, op.inst, why));
        }
    }
    if !bad.is_empty() {
        return Err(bad);
    }
    // Kernel first, then device functions in id order.
    // (Other kernels the decoder reached through address-taking cannot be called from this one.)
    let mut order: Vec<FuncId> =
        programs.iter().filter(|(&f, p)| f != kernel && !p.is_kernel).map(|(&f, _)| f).collect();
    order.sort();
    order.insert(0, kernel);
    let mut site_base = HashMap::new();
    let mut sites = Vec::new();
    let mut ops = Vec::new();
    for &f in &order {
        site_base.insert(f, sites.len() as u32);
        for (i, op) in programs[&f].ops.iter().enumerate() {
            sites.push((f, i as u32));
            ops.push(op as *const program::Op as usize);
        }
    }
    let names: HashMap<FuncId, String> =
        module.module.functions.iter().map(|(id, func)| (id, func.name.clone())).collect();
    let globals: Vec<(u64, u64)> = module
        .module
        .globals
        .iter()
        .map(|(id, var)| match module.global_address(id) {
            Some(a) => (a, device::module::variable_size(var)),
            None => (u64::MAX, 0),
        })
        .collect();
    let kernel_plan = Plan::new(&programs[&kernel]);
    let group_bytes = (kernel_plan.state_words() * thread::WORD) as u64;
    let frames = local_bytes(&programs, kernel);
    let dyn_stack = crate::translate::dyn_stack_start(&programs, frames);
    let local_stride = match dyn_stack {
        Some(start) => start + program::stack::ALLOCA_BYTES,
        None => frames.div_ceil(16).max(1) * 16,
    };
    // Only kernels that read the grid workspace poll it: other kernels' strong loads stay plain loads.
    let spin_sites: std::collections::HashSet<u32> = if programs.values().any(program::grid::reads_workspace) {
        order
            .iter()
            .flat_map(|f| {
                let spins = program::grid::spin_loads(&module.module, &programs[f]);
                let base = site_base[f];
                spins.into_iter().enumerate().filter(|&(_, s)| s).map(move |(i, _)| base + i as u32)
            })
            .collect()
    } else {
        Default::default()
    };
    let env = Env {
        spin_sites: &spin_sites,
        programs: &programs,
        site_base: &site_base,
        globals: &globals,
        check,
        dyn_stack,
        call_conv: isa.default_call_conv(),
        names: &names,
        explicit_cluster: program::cluster::explicit(&module.module.functions[kernel]),
    };
    let isa_text = format!("{} {:?}", isa.triple(), isa.isa_flags().iter().map(|f| f.to_string()).collect::<Vec<_>>());
    let kernel_name = &module.module.functions[kernel].name;
    let key = cache::key(&module.module.source, kernel_name, check, vectorize, &isa_text);
    // One offset per function, and one more for the vector path when there is one.
    let cached = cache_dir
        .and_then(|d| cache::load(d, &key))
        .filter(|(o, _, _)| o.len() == order.len() || (vectorize && o.len() <= order.len() + 2));
    // Flags of a cache entry.
    const WHOLE_CTAS: u64 = 1;
    let (buffer, offsets, no_vector, whole_ctas) = match cached {
        Some((offsets, flags, code)) => {
            let why = (offsets.len() == order.len()).then(|| "none in the disk cache entry".to_string());
            (code, offsets, why, flags & WHOLE_CTAS != 0)
        }
        None => {
            let (mut buffer, mut offsets) = generate(isa, &env, &order, &programs, kernel, &kernel_plan)?;
            let (why, whole_ctas) = if vectorize {
                match generate_vector(isa, &env, &programs[&kernel], &kernel_plan) {
                    Ok(VectorCode { code, whole_ctas, bundles }) => {
                        append(&mut buffer, &mut offsets, &code);
                        if let Some(bundles) = bundles {
                            append(&mut buffer, &mut offsets, &bundles);
                        }
                        (None, whole_ctas)
                    }
                    Err(why) => (Some(why), false),
                }
            } else {
                (Some("vectorization is off".to_string()), false)
            };
            if let Some(d) = cache_dir {
                cache::store(d, &key, &offsets, if whole_ctas { WHOLE_CTAS } else { 0 }, &buffer);
            }
            (buffer, offsets, why, whole_ctas)
        }
    };
    let code = Code::new(&buffer).map_err(|e| vec![format!("cannot map executable memory: {e}")])?;
    // Device functions by `FuncId` (0 where this kernel cannot call one); the kernel's loop is `entry`.
    let mut funcs = vec![0usize; module.module.functions.len()];
    for (&f, &o) in order.iter().zip(&offsets) {
        if f != kernel {
            funcs[f.as_u32() as usize] = code.address(o);
        }
    }
    let entry = code.address(offsets[0]);
    let vector = match no_vector {
        None => Ok(code.address(offsets[order.len()])),
        Some(why) => Err(why),
    };
    let vector_bundles = offsets.get(order.len() + 1).map(|&o| code.address(o));
    crate::fault::register(code.address(0), code.address(buffer.len()), kernel_name);
    if std::env::var_os("LOCKSTEP_JIT_PERFMAP").is_some() {
        let mut symbols: Vec<(usize, String)> =
            order.iter().zip(&offsets).map(|(&f, &o)| (o, format!("ptx::{}", names[&f]))).collect();
        if offsets.len() > order.len() {
            symbols.push((offsets[order.len()], format!("ptx::{kernel_name}::vector")));
        }
        if offsets.len() > order.len() + 1 {
            symbols.push((offsets[order.len() + 1], format!("ptx::{kernel_name}::vector_bundles")));
        }
        perf_map(&code, buffer.len(), &mut symbols);
        if let Some(dir) = std::env::var_os("LOCKSTEP_JIT_CODE_DIR") {
            let _ = std::fs::write(std::path::Path::new(&dir).join(format!("{:x}.bin", code.address(0))), &buffer);
        }
    }
    let has_collectives =
        kernel_plan.yields.iter().any(|y| matches!(y.kind, YieldKind::Collective | YieldKind::Runtime));
    let has_warpgroups =
        kernel_plan.yields.iter().any(|y| program::wgmma::of(&programs[&kernel].ops[y.op as usize]).is_some());
    let imm = |s: &program::Src| match *s {
        program::Src::Imm(v) => Some(v as u32),
        program::Src::None => Some(0),
        _ => None,
    };
    let barrier_imms = kernel_plan
        .yields
        .iter()
        .map(|y| {
            let op = &programs[&kernel].ops[y.op as usize];
            if y.kind == YieldKind::Barrier {
                (imm(&op.a), imm(&op.b))
            } else {
                (None, None)
            }
        })
        .collect();
    let has_reductions = kernel_plan
        .yields
        .iter()
        .any(|y| matches!(programs[&kernel].ops[y.op as usize].m.sub, program::Sub::Bar { red: Some(_), .. }));
    let touches_shared = programs.values().any(touches_shared);
    Ok(Compiled {
        touches_shared,
        entry,
        vector,
        vector_whole_ctas: whole_ctas,
        vector_bundles,
        funcs,
        _code: code,
        kernel,
        programs,
        ops,
        sites,
        plan: kernel_plan,
        has_collectives,
        has_warpgroups,
        has_reductions,
        barrier_imms,
        shared,
        group_bytes,
        local_stride,
        dyn_stack,
        inlined: inlined.map(|m| m.module),
        compile_time: start.elapsed(),
    })
}

/// Whether `prog` can reach shared memory: an op in the shared space (accesses, `cvta`, `isspacep`), a
/// shared variable's address, or a matrix op (some read shared memory implicitly).
fn touches_shared(prog: &Program) -> bool {
    prog.ops.iter().any(|op| {
        op.m.space == program::Space::Shared
            || op.kind == program::Kind::Matrix
            || crate::plan::operands(op).any(|s| matches!(s, Src::Sym(SymAddr::Shared(_), _)))
    })
}

/// Translates and compiles every function; returns the machine code and each function's offset in it.
fn generate(
    isa: &OwnedTargetIsa,
    env: &Env<'_>,
    order: &[FuncId],
    programs: &HashMap<FuncId, Program>,
    kernel: FuncId,
    kernel_plan: &Plan,
) -> Result<(Vec<u8>, Vec<usize>), Vec<String>> {
    let mut buffer: Vec<u8> = Vec::new();
    let mut offsets = Vec::new();
    let mut fctx = FunctionBuilderContext::new();
    for (i, &f) in order.iter().enumerate() {
        let prog = &programs[&f];
        let plan = if f == kernel { kernel_plan.clone() } else { Plan::new(prog) };
        let sig = if f == kernel {
            kernel_signature(isa.default_call_conv())
        } else {
            device_signature(isa.default_call_conv())
        };
        let mut func = Function::with_name_signature(UserFuncName::user(0, i as u32), sig);
        let builder = FunctionBuilder::new(&mut func, &mut fctx);
        Translator::new(builder, env, f, prog, &plan).translate(isa.frontend_config());
        let mut ctx = Context::for_function(func);
        ctx.compile(&**isa, &mut ControlPlane::default())
            .map_err(|e| vec![format!("Cranelift rejected `{}`: {:?}", prog.name, e.inner)])?;
        if std::env::var_os("LOCKSTEP_JIT_DUMP").is_some() {
            eprintln!("; {} (optimized Cranelift IR)\n{}", prog.name, ctx.func.display());
        }
        let compiled = ctx.compiled_code().expect("compiled above");
        if !compiled.buffer.relocs().is_empty() {
            return Err(vec![format!(
                "`{}` needs a library call this JIT does not link (relocations: {:?})",
                prog.name,
                compiled.buffer.relocs()
            )]);
        }
        append(&mut buffer, &mut offsets, compiled.code_buffer());
    }
    Ok((buffer, offsets))
}

/// Appends a function's code, 16-byte aligned, and records its offset.
fn append(buffer: &mut Vec<u8>, offsets: &mut Vec<usize>, code: &[u8]) {
    while !buffer.len().is_multiple_of(16) {
        buffer.push(0xCC);
    }
    offsets.push(buffer.len());
    buffer.extend_from_slice(code);
}

/// The kernel's vector path (`vector.rs`) compiled, whether it runs whole CTAs, and (kernels without yield
/// points) its form for bundles of groups; or why it has none. Kernels with counted barriers get the whole-CTA mode
/// where their control flow allows it.
fn generate_vector(isa: &OwnedTargetIsa, env: &Env<'_>, prog: &Program, plan: &Plan) -> Result<VectorCode, String> {
    if let Some(why) = vector::refusal(prog, plan, env.check) {
        return Err(why);
    }
    if plan.counted_barriers {
        if let Ok(code) = generate_vector_mode(isa, env, prog, plan, true, false) {
            return Ok(VectorCode { code, whole_ctas: true, bundles: None });
        }
    }
    let code = generate_vector_mode(isa, env, prog, plan, false, false)?;
    // Its form for several groups at once costs compile time in proportion to the code: not for large paths.
    let bundles = (plan.yields.is_empty() && code.len() <= MAX_CODE_FOR_GROUPS_AT_ONCE)
        .then(|| generate_vector_mode(isa, env, prog, plan, false, true).ok())
        .flatten();
    Ok(VectorCode { code, whole_ctas: false, bundles })
}

/// A kernel's vector path: its code, whether it runs whole CTAs, and its form for bundles of groups.
struct VectorCode {
    code: Vec<u8>,
    whole_ctas: bool,
    bundles: Option<Vec<u8>>,
}

fn generate_vector_mode(
    isa: &OwnedTargetIsa,
    env: &Env<'_>,
    prog: &Program,
    plan: &Plan,
    whole_ctas: bool,
    bundles: bool,
) -> Result<Vec<u8>, String> {
    let mut func =
        Function::with_name_signature(UserFuncName::user(0, u32::MAX), vector::signature(isa.default_call_conv()));
    // A fresh builder context: a refused translation leaves its context unfinished.
    let mut fctx = FunctionBuilderContext::new();
    vector::translate(
        FunctionBuilder::new(&mut func, &mut fctx),
        env,
        prog,
        plan,
        isa.frontend_config(),
        whole_ctas,
        bundles,
    )?;
    let mut ctx = Context::for_function(func);
    if whole_ctas {
        // Block parameters that carry one value on every path are gone before the lanes pass looks
        // through values (the frontend leaves some, where blocks were sealed in the wrong order for it).
        let cranelift = |e| format!("Cranelift rejected it: {e:?}");
        ctx.compute_cfg();
        ctx.compute_domtree();
        ctx.eliminate_unreachable_code(&**isa).map_err(cranelift)?;
        ctx.remove_constant_phis(&**isa).map_err(cranelift)?;
        crate::lanes::scalar_lanes(&mut ctx.func);
    }
    ctx.compile(&**isa, &mut ControlPlane::default()).map_err(|e| format!("Cranelift rejected it: {:?}", e.inner))?;
    if std::env::var_os("LOCKSTEP_JIT_DUMP").is_some() {
        eprintln!("; {} vector path (optimized Cranelift IR)\n{}", prog.name, ctx.func.display());
    }
    let compiled = ctx.compiled_code().ok_or("no code")?;
    if !compiled.buffer.relocs().is_empty() {
        return Err("it needs a library call".into());
    }
    Ok(compiled.code_buffer().to_vec())
}

/// Appends the functions of `code` to `/tmp/perf-<pid>.map`, the file `perf report` reads to name
/// JIT-compiled code (`LOCKSTEP_JIT_PERFMAP=1`). Best effort: profiling aid only.
fn perf_map(code: &Code, len: usize, symbols: &mut [(usize, String)]) {
    use std::io::Write;
    symbols.sort();
    let mut text = String::new();
    for (i, (offset, name)) in symbols.iter().enumerate() {
        let end = symbols.get(i + 1).map_or(len, |s| s.0);
        text.push_str(&format!("{:x} {:x} {name}\n", code.address(*offset), end - offset));
    }
    let path = format!("/tmp/perf-{}.map", std::process::id());
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = f.write_all(text.as_bytes());
    }
}
