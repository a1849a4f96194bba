//! Running generated kernels on both engines, comparing them, and shrinking a kernel they disagree on.

use super::*;

// ------------------------------------------------------------------------------------------------ running

/// The launch shapes kernels run with: one warp; two CTAs of three warps; two CTAs with a partial warp; 2-D
/// blocks (with a partial warp) and a 3-D one; a 2-D grid of six CTAs (spread over the JIT's workers).
///
/// Shuffles name all 32 lanes in their member mask, in partial warps too, where the PTX ISA leaves reading a
/// lane that does not exist undefined: both engines read zero there.
pub fn shapes() -> Vec<Shape> {
    vec![
        Shape::linear(1, 32),
        Shape::linear(2, 96),
        Shape::linear(2, 80),
        Shape::new((2, 1, 1), (8, 6, 1)),
        Shape::new((1, 2, 1), (4, 4, 2)),
        Shape::new((3, 2, 1), (16, 2, 1)),
    ]
}

/// The two engines, created once and reused (the JIT caches compiled kernels).
pub struct Engines {
    pub emu: Box<dyn Backend>,
    pub jit: Box<dyn Backend>,
}

impl std::fmt::Debug for Engines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Engines { emu, jit }")
    }
}

impl Engines {
    /// The emulator and the JIT of [`crate::runner::backends`] (`None` when `LOCKSTEP_BACKENDS` leaves one
    /// out).
    pub fn new() -> Option<Engines> {
        let all = crate::runner::backends();
        let get = |name: &str| all.iter().find(|(n, _)| *n == name).map(|(_, f)| f());
        Some(Engines { emu: get("emu")?, jit: get("jit")? })
    }
}

/// One differing output slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// Global linear thread index (`None`: an atomic counter).
    pub thread: Option<u64>,
    /// The register (or `atomic counter k`).
    pub what: String,
    pub emu: u64,
    pub jit: u64,
}

/// Why a kernel failed the differential check.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The generated PTX does not compile (a generator bug).
    Invalid(String),
    /// The JIT refused the kernel (`check_supported`).
    Refused(String),
    /// An engine failed: (engine, error); both are listed when both failed.
    Error(Vec<(&'static str, String)>),
    /// The outputs differ.
    Mismatch(Vec<Diff>),
}

impl Failure {
    /// A short description: what kind of failure, and the first registers involved.
    pub fn summary(&self) -> String {
        match self {
            Failure::Invalid(m) => format!("the generated PTX does not compile: {m}"),
            Failure::Refused(m) => format!("the JIT refuses the kernel: {m}"),
            Failure::Error(list) => list.iter().map(|(e, m)| format!("{e} failed: {m}")).collect::<Vec<_>>().join("; "),
            Failure::Mismatch(d) => {
                let mut regs: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
                regs.sort_unstable();
                regs.dedup();
                format!("{} slots differ (registers {})", d.len(), regs.join(", "))
            }
        }
    }

    /// Every detail, with up to `max` differing slots.
    pub fn details(&self, max: usize) -> String {
        let mut s = self.summary();
        if let Failure::Mismatch(d) = self {
            for x in d.iter().take(max) {
                let who = x.thread.map_or("atomics".to_string(), |t| format!("thread {t}"));
                let _ = write!(s, "\n  {who} {}: emu {:#x}, jit {:#x}", x.what, x.emu, x.jit);
            }
            if d.len() > max {
                let _ = write!(s, "\n  ... {} more", d.len() - max);
            }
        }
        s
    }
}

fn run_one(backend: &mut dyn Backend, module: &ir::Module, kernel: &Kernel, shape: Shape) -> Result<Vec<u8>, String> {
    let threads = shape.threads();
    let n = (threads as usize * kernel.loads.len()) as u32;
    let args = vec![
        Arg::Buffer(kernel.input(threads)),
        Arg::Zeroed(kernel.out_bytes(threads)),
        Arg::Scalar(n.to_le_bytes().to_vec()),
    ];
    let req = Request { kernel: KERNEL, shape, args: &args, symbol_writes: &[], symbol_reads: &[], extra: &[] };
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::runner::run(backend, module, &req)));
    let Ok(run) = run else { return Err("panicked".into()) };
    match run {
        Ok(out) => Ok(out.buffer(1).to_vec()),
        Err(crate::runner::RunError::Exec(e, _)) if matches!(e.kind, device::ErrorKind::Unsupported(_)) => {
            Err(format!("UNSUPPORTED {e}"))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `kernel` on both engines with `shape` and compares the outputs.
pub fn check(kernel: &Kernel, shape: Shape, engines: &mut Engines) -> Result<(), Failure> {
    let ptx = kernel.ptx();
    let module = ir::compile(&ptx).map_err(|d| Failure::Invalid(diagnostics(&ptx, &d)))?;
    let emu = run_one(engines.emu.as_mut(), &module, kernel, shape);
    let jit = run_one(engines.jit.as_mut(), &module, kernel, shape);
    let (emu, jit) = match (emu, jit) {
        (Ok(e), Ok(j)) => (e, j),
        (e, Err(j)) if j.starts_with("UNSUPPORTED ") && e.is_ok() => {
            return Err(Failure::Refused(j["UNSUPPORTED ".len()..].to_string()))
        }
        (e, j) => {
            let mut list = Vec::new();
            if let Err(m) = e {
                list.push(("emu", m));
            }
            if let Err(m) = j {
                list.push(("jit", m));
            }
            return Err(Failure::Error(list));
        }
    };
    let diffs = compare(kernel, shape.threads(), &emu, &jit);
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(Failure::Mismatch(diffs))
    }
}

/// The differing slots of two output buffers: exact, except that two NaNs of a float slot are equal.
pub fn compare(kernel: &Kernel, threads: u64, emu: &[u8], jit: &[u8]) -> Vec<Diff> {
    let word = |b: &[u8], at: usize, len: usize| -> u64 {
        let mut w = [0u8; 8];
        w[..len].copy_from_slice(&b[at..at + len]);
        u64::from_le_bytes(w)
    };
    let mut diffs = Vec::new();
    if emu.len() != jit.len() {
        diffs.push(Diff { thread: None, what: "output size".into(), emu: emu.len() as u64, jit: jit.len() as u64 });
        return diffs;
    }
    let slots = kernel.slots();
    for t in 0..threads as usize {
        for (k, r) in kernel.regs.iter().enumerate() {
            let at = (t * slots + k) * 8;
            let (e, j) = (word(emu, at, 8), word(jit, at, 8));
            let same = e == j
                || match r.class {
                    Class::F32 => {
                        f32::from_bits(e as u32).is_nan() && f32::from_bits(j as u32).is_nan() && e >> 32 == j >> 32
                    }
                    Class::F64 => f64::from_bits(e).is_nan() && f64::from_bits(j).is_nan(),
                    _ => false,
                };
            if !same {
                diffs.push(Diff { thread: Some(t as u64), what: r.name.clone(), emu: e, jit: j });
            }
        }
    }
    let base = threads as usize * slots * 8;
    let counters = (0..ATOMICS).map(|k| (4 * k, 4)).chain((0..ATOMIC64_OPS.len()).map(|k| (ATOMIC64_AT + 8 * k, 8)));
    for (k, (at, len)) in counters.enumerate() {
        let (e, j) = (word(emu, base + at, len), word(jit, base + at, len));
        if e != j {
            diffs.push(Diff { thread: None, what: format!("atomic counter {k}"), emu: e, jit: j });
        }
    }
    diffs
}

// ------------------------------------------------------------------------------------------------ shrinking

/// Every way to make `body` one step smaller: drop a statement, replace a branch by one side, a loop by its
/// body (recursively).
fn smaller(body: &[Stmt]) -> Vec<Vec<Stmt>> {
    let mut out = Vec::new();
    for i in 0..body.len() {
        let mut v = body.to_vec();
        v.remove(i);
        out.push(v);
        let splice = |with: &[Stmt]| {
            let mut v = body.to_vec();
            v.splice(i..=i, with.iter().cloned());
            v
        };
        // The lines of a group stay together: they depend on each other (addresses, barriers).
        match &body[i] {
            Stmt::Code(_) => {}
            Stmt::If { cond, pred, then, els } => {
                out.push(splice(then));
                out.push(splice(els));
                for t in smaller(then) {
                    let mut v = body.to_vec();
                    v[i] = Stmt::If { cond: cond.clone(), pred: pred.clone(), then: t, els: els.clone() };
                    out.push(v);
                }
                for e in smaller(els) {
                    let mut v = body.to_vec();
                    v[i] = Stmt::If { cond: cond.clone(), pred: pred.clone(), then: then.clone(), els: e };
                    out.push(v);
                }
            }
            Stmt::Loop { init, counter, pred, body: inner } => {
                out.push(splice(inner));
                for b in smaller(inner) {
                    let mut v = body.to_vec();
                    v[i] = Stmt::Loop { init: init.clone(), counter: counter.clone(), pred: pred.clone(), body: b };
                    out.push(v);
                }
            }
        }
    }
    out
}

/// Shrinks a failing kernel while `fails` holds: statements, register initialisations, stores, then the
/// launch shape (to the smallest of [`shapes`] that still fails). At most `budget` candidate runs.
pub fn shrink(
    kernel: &Kernel,
    shape: Shape,
    budget: usize,
    mut fails: impl FnMut(&Kernel, Shape) -> Option<Failure>,
) -> (Kernel, Shape, Failure) {
    let mut best = kernel.clone();
    let mut shape = shape;
    let Some(mut failure) = fails(&best, shape) else { return (best, shape, Failure::Mismatch(Vec::new())) };
    let mut runs = 0usize;
    // Smaller shapes first: everything else then runs faster.
    let mut by_size = shapes();
    by_size.sort_by_key(|s| s.threads());
    for s in by_size {
        if s.threads() < shape.threads() {
            runs += 1;
            if let Some(f) = fails(&best, s) {
                shape = s;
                failure = f;
                break;
            }
        }
    }
    let mut progress = true;
    while progress && runs < budget {
        progress = false;
        for cand in smaller(&best.body) {
            if runs >= budget {
                break;
            }
            let k = Kernel { body: cand, ..best.clone() };
            runs += 1;
            if let Some(f) = fails(&k, shape) {
                best = k;
                failure = f;
                progress = true;
                break;
            }
        }
        if progress {
            continue;
        }
        for i in 0..best.inits.len() {
            if runs >= budget || best.inits[i].line == best.inits[i].zero {
                continue;
            }
            let mut k = best.clone();
            k.inits[i].line = k.inits[i].zero.clone();
            runs += 1;
            if let Some(f) = fails(&k, shape) {
                best = k;
                failure = f;
                progress = true;
            }
        }
    }
    // Store only the registers that differ.
    if let Failure::Mismatch(d) = &failure {
        let mut k = best.clone();
        for (i, r) in k.regs.iter().enumerate() {
            k.stored[i] = d.iter().any(|x| x.what == r.name);
        }
        if let Some(f) = fails(&k, shape) {
            best = k;
            failure = f;
        }
    }
    (best, shape, failure)
}

/// Compile errors with their line numbers.
fn diagnostics(ptx: &str, list: &[ir::Diagnostic]) -> String {
    list.iter()
        .map(|d| {
            let at = (d.span.start as usize).min(ptx.len());
            let line = ptx[..at].matches('\n').count() + 1;
            let text = ptx.lines().nth(line - 1).unwrap_or("").trim();
            format!("line {line} `{text}`: {}", d.message)
        })
        .collect::<Vec<_>>()
        .join("; ")
}
