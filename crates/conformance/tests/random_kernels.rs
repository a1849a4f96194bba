//! Differential testing on random kernels (`conformance::random`): the emulator and the JIT must write the
//! same bytes, except that any NaN equals any NaN in a float slot (payloads are unspecified by PTX and differ
//! between the engines).
//!
//! `LOCKSTEP_RANDOM_SEED` (decimal or `0x` hex) sets the first seed, `LOCKSTEP_RANDOM_KERNELS` the number of
//! kernels (seeds `seed, seed+1, ...`). A failing kernel is printed with its seed and written, with its shrunk
//! form, to `lockstep-random-<seed>.ptx` and `lockstep-random-<seed>-min.ptx` in the temporary directory;
//! `LOCKSTEP_RANDOM_SEED=<seed> LOCKSTEP_RANDOM_KERNELS=1` reruns it alone. The generator leaves out the
//! constructs an engine is known to get wrong (`Config::known_good`); `LOCKSTEP_RANDOM_ALL=1` includes them.
//! A JIT refusal (`Unsupported`) fails the test: the generator only uses what both engines support.

use conformance::random::{self, Config, Engines, Failure, Kernel};
use conformance::Shape;

/// Default first seed and number of kernels.
const SEED: u64 = 0x10C5_7E9D_0000_0000;
const KERNELS: u64 = 200;
/// Kernels of the vectorizable test.
const VECTOR_KERNELS: u64 = 150;
/// Candidate runs the shrinker may spend on one failure.
const SHRINK_BUDGET: usize = 400;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim().replace('_', "");
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// What the generator uses: [`Config::known_good`] (constructs an engine is known to get wrong are left out,
/// each with a note there), or everything with `LOCKSTEP_RANDOM_ALL=1` (to check a fix).
fn config() -> Config {
    if std::env::var_os("LOCKSTEP_RANDOM_ALL").is_some() {
        Config::default()
    } else {
        Config::known_good()
    }
}

fn describe(shape: Shape) -> String {
    let (g, b) = (shape.grid, shape.block);
    format!("grid ({}, {}, {}), block ({}, {}, {})", g.x, g.y, g.z, b.x, b.y, b.z)
}

/// Shapes a kernel runs with: two of [`random::shapes`], varying with the seed.
fn shapes_for(seed: u64) -> Vec<Shape> {
    let all = random::shapes();
    let k = (seed % all.len() as u64) as usize;
    vec![all[k], all[(k + 2) % all.len()]]
}

#[test]
fn random_kernels_agree() {
    let Some(mut engines) = Engines::new() else {
        eprintln!("skipped: the differential test needs both `emu` and `jit` (LOCKSTEP_BACKENDS)");
        return;
    };
    let first = env_u64("LOCKSTEP_RANDOM_SEED").unwrap_or(SEED);
    let count = env_u64("LOCKSTEP_RANDOM_KERNELS").unwrap_or(KERNELS);
    let config = config();
    let start = std::time::Instant::now();
    let mut failures = Vec::new();
    for i in 0..count {
        let seed = first.wrapping_add(i);
        let kernel = random::generate(seed, &config);
        for shape in shapes_for(seed) {
            let Err(failure) = random::check(&kernel, shape, &mut engines) else { continue };
            failures.push(report(&kernel, shape, failure, &mut engines));
            break;
        }
    }
    eprintln!(
        "{count} random kernels from seed {first:#x}: {} failed, {:.1} s",
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{} of {count} random kernels failed:\n{}", failures.len(), failures.join("\n"));
}

/// Kernels the JIT's vector path can take (`Config::vectorizable`): most of them must take it, and all agree
/// with the emulator (groups that diverge at `if`s and per-thread loops run on the scalar loop).
#[test]
fn vectorizable_random_kernels_agree() {
    vectorizable(&Config::vectorizable(), SEED ^ 0x5EC7, 7);
}

/// The same with `bar.sync 0` and shared-memory exchanges (`Config::vectorizable_with_barriers`): groups
/// cross barriers on the vector path, diverged ones resume on the scalar loop. Branches after a store to
/// shared memory keep some kernels scalar.
#[test]
fn vectorizable_random_kernels_with_barriers_agree() {
    vectorizable(&Config::vectorizable_with_barriers(), SEED ^ 0xBA55, 5);
}

/// With global atomics and local memory (`Config::vectorizable_with_memory`): lanes run atomics one after
/// the other, and reach their own local memory.
#[test]
fn vectorizable_random_kernels_with_memory_agree() {
    vectorizable(&Config::vectorizable_with_memory(), SEED ^ 0xA70, 2);
}

/// Kernels without divergent loops (`Config::whole_cta`): most run whole CTAs on the vector path, barriers
/// included, deciding uniform branches once for all lanes.
#[test]
fn whole_cta_random_kernels_agree() {
    let whole = vectorizable(&Config::whole_cta(), SEED ^ 0xC7A0, 5);
    assert!(whole * 10 >= VECTOR_KERNELS * 4, "only {whole} of {VECTOR_KERNELS} kernels run whole CTAs");
}

/// Runs the kernels of `config`; at least `tenths` tenths of them must take the vector path. Returns how many
/// run whole CTAs at a time there.
fn vectorizable(config: &Config, seed: u64, tenths: u64) -> u64 {
    let Some(mut engines) = Engines::new() else {
        eprintln!("skipped: the differential test needs both `emu` and `jit` (LOCKSTEP_BACKENDS)");
        return 0;
    };
    let first = env_u64("LOCKSTEP_RANDOM_SEED").unwrap_or(seed);
    let count = env_u64("LOCKSTEP_RANDOM_KERNELS").unwrap_or(VECTOR_KERNELS);
    let jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
    let start = std::time::Instant::now();
    let (mut failures, mut vectorized, mut whole_ctas, mut why_not) = (Vec::new(), 0, 0, Vec::new());
    for i in 0..count {
        let seed = first.wrapping_add(i);
        let kernel = random::generate(seed, config);
        let mut memory = device::DeviceMemory::new();
        let module =
            device::LoadedModule::load(ir::compile(&kernel.ptx()).expect("generated PTX compiles"), &mut memory)
                .expect("loads");
        let k = module.module.function(random::KERNEL).expect("the kernel");
        match jit.vectorized(&module, k).expect("the JIT compiles it") {
            Ok(path) => {
                vectorized += 1;
                whole_ctas += u64::from(path == jit::VectorPath::WholeCtas);
            }
            Err(why) => why_not.push(format!("  seed {seed:#x}: {why}")),
        }
        for shape in shapes_for(seed) {
            let Err(failure) = random::check(&kernel, shape, &mut engines) else { continue };
            failures.push(report(&kernel, shape, failure, &mut engines));
            break;
        }
    }
    eprintln!(
        "{count} vectorizable random kernels from seed {first:#x}: {vectorized} vectorized ({whole_ctas} whole CTAs \
         at a time), {} failed, {:.1} s",
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    if std::env::var_os("LOCKSTEP_RANDOM_WHY").is_some() {
        eprintln!("{}", why_not.join("\n"));
    }
    assert!(failures.is_empty(), "{} of {count} random kernels failed:\n{}", failures.len(), failures.join("\n"));
    assert!(
        vectorized * 10 >= count * tenths,
        "only {vectorized} of {count} kernels take the vector path:\n{}",
        why_not.join("\n")
    );
    whole_ctas
}

/// Prints a failure in full, shrinks it, writes both kernels to the temporary directory; returns a one-line
/// summary.
fn report(kernel: &Kernel, shape: Shape, failure: Failure, engines: &mut Engines) -> String {
    let seed = kernel.seed;
    let ptx = kernel.ptx();
    let dir = std::env::temp_dir();
    let full_path = dir.join(format!("lockstep-random-{seed:#x}.ptx"));
    let _ = std::fs::write(&full_path, &ptx);
    eprintln!("=== random kernel seed {seed:#x} ({}) FAILED: {}\n{ptx}", describe(shape), failure.details(12));
    let (min, min_shape, min_failure) = if matches!(failure, Failure::Invalid(_)) {
        (kernel.clone(), shape, failure.clone())
    } else {
        let same_kind = |f: &Failure| std::mem::discriminant(f) == std::mem::discriminant(&failure);
        random::shrink(kernel, shape, SHRINK_BUDGET, |k, s| random::check(k, s, engines).err().filter(same_kind))
    };
    let min_ptx = min.ptx();
    let min_path = dir.join(format!("lockstep-random-{seed:#x}-min.ptx"));
    let _ = std::fs::write(&min_path, &min_ptx);
    eprintln!(
        "=== shrunk ({} statements, {}): {}\n{min_ptx}\n=== written to {} and {}",
        min.size(),
        describe(min_shape),
        min_failure.details(12),
        full_path.display(),
        min_path.display()
    );
    format!("  seed {seed:#x} ({}): {}", describe(shape), failure.summary())
}

/// The generator is deterministic, its kernels compile, and over the default run they use every construct
/// the differential test is meant to cover.
#[test]
fn generator_covers_the_constructs() {
    let config = config();
    let mut all = String::new();
    for i in 0..KERNELS {
        let k = random::generate(SEED.wrapping_add(i), &config);
        let ptx = k.ptx();
        assert_eq!(ptx, random::generate(SEED.wrapping_add(i), &config).ptx(), "generation is not deterministic");
        if let Err(e) = ir::compile(&ptx) {
            panic!("seed {:#x}: {}\n{ptx}", k.seed, e[0].message);
        }
        all.push_str(&ptx);
    }
    let excluded = &config.features.exclude;
    let wanted = [
        "dp4a.",
        "dp2a.",
        "cvt.pack.sat.",
        "vabsdiff4.",
        "vadd2.",
        ".u16x2 ",
        "max.relu.s16x2 ",
        "cvt.rna.tf32.f32 ",
        "cvt.rz.relu.tf32.f32 ",
        "add.u32",
        "add.sat.s32",
        "sub.s64",
        "mul.lo.",
        "mul.hi.",
        "mul.wide.",
        "mad.lo.",
        "mad.hi.",
        "mad.wide.",
        "div.u32",
        "div.s64",
        "rem.s32",
        "rem.u64",
        "and.b32",
        "or.b64",
        "xor.pred",
        "not.b32",
        "shl.b64",
        "shr.s32",
        "shr.u64",
        "shr.b32",
        "min.u64",
        "max.s32",
        "abs.s32",
        "neg.s64",
        "popc.b64",
        "clz.b32",
        "brev.b64",
        "bfe.s32",
        "bfe.u64",
        "bfi.b32",
        "prmt.b32",
        "prmt.b32.f4e",
        "lop3.b32",
        "selp.f32",
        "selp.s64",
        "setp.lo.",
        "setp.ls.",
        "setp.hi.",
        "setp.hs.",
        "setp.equ.",
        "setp.neu.",
        "setp.ltu.",
        "setp.num.",
        "setp.nan.",
        ".and.",
        ".or.",
        ".xor.",
        "cvt.u8.",
        "cvt.s64.",
        "cvt.rn.f32.",
        "cvt.rz.f64.",
        "cvt.rm.",
        "cvt.rp.",
        "cvt.rni.",
        "cvt.rzi.",
        "cvt.rmi.",
        "cvt.rpi.",
        ".sat.",
        "add.rz.f32",
        "add.ftz.",
        "mul.rm.f64",
        "fma.rp.",
        "div.rn.f32",
        "div.rn.f64",
        "sqrt.rn.",
        "rcp.rn.",
        "min.ftz.",
        "max.NaN.f32",
        "abs.ftz.f32",
        "neg.f64",
        "@%p",
        "@!%p",
        "bar.sync 0",
        "st.shared.",
        "ld.shared.",
        "shfl.sync.up.b32",
        "shfl.sync.down.b32",
        "shfl.sync.bfly.b32",
        "shfl.sync.idx.b32",
        "vote.sync.any.pred",
        "vote.sync.all.pred",
        "vote.sync.ballot.b32",
        "atom.global.add.u32",
        "atom.global.add.u64",
        "ld.local.",
        "st.local.",
        "cvta.local",
        "cvta.shared",
        "ld.global.v2.u32",
        "ld.global.s8",
        "ld.u16",
        "$L_loop_",
        "$L_else_",
        "ld.global.f32",
        "ld.global.f64",
        "mov.b64 {",
    ];
    let missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|w| !all.contains(w) && !excluded.iter().any(|x| w.starts_with(x.as_str())))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

/// The shrinker keeps what the failure needs and drops the rest.
#[test]
fn shrinking_keeps_the_failing_instruction() {
    let config = config();
    let kernel = (0..100)
        .map(|i| random::generate(SEED.wrapping_add(i), &config))
        .find(|k| k.ptx().contains("popc.b64"))
        .expect("a kernel with popc.b64");
    let fails = |k: &Kernel, _: Shape| k.ptx().contains("popc.b64").then(|| Failure::Mismatch(Vec::new()));
    let (min, shape, _) = random::shrink(&kernel, random::shapes()[1], 10_000, fails);
    assert!(min.ptx().contains("popc.b64"));
    assert!(min.size() <= 3, "shrunk to {} statements:\n{}", min.size(), min.ptx());
    assert_eq!(shape.threads(), 32, "the smallest shape still fails");
}
