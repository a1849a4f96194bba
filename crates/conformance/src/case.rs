//! A conformance case — kernel, launch shape, arguments and CPU reference — and the driver that runs it on
//! every PTX variant of its source and every backend.

use std::fmt::Write as _;

use device::{ErrorKind, ExecError};

use crate::compare::{self, Check};
use crate::corpus::{self, Variant};
use crate::runner::{self, Arg, Output, Request, RunError, Shape};

/// Checks a launch error and the printf output produced before it.
pub type ErrorCheck = Box<dyn Fn(&ExecError, &[u8]) -> Result<(), String>>;

/// What the reference says a run must produce.
pub enum Expect {
    /// The launch succeeds and every check holds.
    Outputs(Vec<Check>),
    /// The launch fails; the callback checks the error (kind, location) and the printf output produced
    /// before it.
    Fails(ErrorCheck),
    /// The backend refuses the kernel up front with `ErrorKind::Unsupported`, and every listed string occurs
    /// in one of the reported items (an opcode such as `tex`, a function name).
    Unsupported(Vec<String>),
}

impl std::fmt::Debug for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Outputs(checks) => f.debug_tuple("Outputs").field(checks).finish(),
            Expect::Fails(_) => f.write_str("Fails(..)"),
            Expect::Unsupported(names) => f.debug_tuple("Unsupported").field(names).finish(),
        }
    }
}

impl Expect {
    /// The kernel stops with `ErrorKind::Trap` (a `trap` or `brkpt`) in `thread` of `block`, and the error's
    /// location names a PTX line of `variant`'s file whose text contains `needle` (the instruction), as does
    /// the instruction text it quotes. `stdout`, when given, is the printf output expected before the trap.
    pub fn trap_at(
        variant: &Variant,
        block: device::Dim3,
        thread: device::Dim3,
        needle: &str,
        stdout: Option<String>,
    ) -> Expect {
        let text = std::fs::read_to_string(&variant.path).unwrap_or_default();
        let needle = needle.to_string();
        Expect::Fails(Box::new(move |e, out| {
            if e.kind != ErrorKind::Trap {
                return Err(format!("expected ErrorKind::Trap, got {:?}", e.kind));
            }
            let loc = &e.location;
            if loc.block != Some(block) || loc.thread != Some(thread) {
                return Err(format!(
                    "expected the trap in block {block} thread {thread}, got {:?} {:?}",
                    loc.block, loc.thread
                ));
            }
            let line = loc.line.ok_or("the error has no PTX line")?;
            let src = text.lines().nth(line as usize - 1).unwrap_or("");
            if !src.contains(&needle) {
                return Err(format!("PTX line {line} is `{}`, not a `{needle}`", src.trim()));
            }
            if !loc.instruction.as_deref().unwrap_or("").contains(&needle) {
                return Err(format!("the error quotes {:?}, not a `{needle}`", loc.instruction));
            }
            if let Some(want) = &stdout {
                if out != want.as_bytes() {
                    return Err(format!(
                        "printf before the trap: got {:?}, expected {want:?}",
                        String::from_utf8_lossy(out)
                    ));
                }
            }
            Ok(())
        }))
    }
}

/// What the reference sees: the variant (architecture and flavor decide some results) and, after a
/// successful launch, the addresses the buffers had (for printf `%p`). References must compute expected
/// values from the case's inputs only.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub variant: &'a Variant,
    pub output: Option<&'a Output>,
}

impl Ctx<'_> {
    pub fn arch(&self) -> u32 {
        self.variant.arch
    }

    pub fn address(&self, arg: usize) -> u64 {
        self.output.and_then(|o| o.addresses.get(arg).copied().flatten()).unwrap_or(0)
    }
}

type Reference = Box<dyn Fn(&Ctx<'_>) -> Expect>;
type SkipRule = Box<dyn Fn(&Variant) -> Option<String>>;

/// One kernel with its inputs and reference.
pub struct Case {
    pub kernel: String,
    pub shape: Shape,
    pub args: Vec<Arg>,
    pub symbol_writes: Vec<(String, Vec<u8>)>,
    pub symbol_reads: Vec<String>,
    /// Buffers reached only through pointers inside by-value parameters.
    pub extra: Vec<Vec<u8>>,
    pub reference: Reference,
    /// Variants this case does not apply to, with the reason (recorded as skipped).
    pub skip: Option<SkipRule>,
    /// A label that distinguishes several cases of one kernel in reports.
    pub label: Option<String>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("kernel", &self.kernel)
            .field("shape", &self.shape)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl Case {
    pub fn new(kernel: &str, shape: Shape, args: Vec<Arg>, reference: impl Fn(&Ctx<'_>) -> Expect + 'static) -> Case {
        Case {
            kernel: kernel.to_string(),
            shape,
            args,
            symbol_writes: Vec::new(),
            symbol_reads: Vec::new(),
            extra: Vec::new(),
            reference: Box::new(reference),
            skip: None,
            label: None,
        }
    }

    /// Expected outputs that do not depend on the variant.
    pub fn outputs(kernel: &str, shape: Shape, args: Vec<Arg>, checks: Vec<Check>) -> Case {
        Case::new(kernel, shape, args, move |_| Expect::Outputs(checks.clone()))
    }

    pub fn skip_if(mut self, rule: impl Fn(&Variant) -> Option<String> + 'static) -> Case {
        self.skip = Some(Box::new(rule));
        self
    }

    pub fn label(mut self, label: &str) -> Case {
        self.label = Some(label.to_string());
        self
    }

    pub fn write_symbol(mut self, name: &str, bytes: Vec<u8>) -> Case {
        self.symbol_writes.push((name.to_string(), bytes));
        self
    }

    /// Adds a buffer that is no parameter (see [`Arg::Deferred`]); its index in `Output::extra` is the
    /// number of extra buffers added before it.
    pub fn extra_buffer(mut self, bytes: Vec<u8>) -> Case {
        self.extra.push(bytes);
        self
    }

    pub fn read_symbol(mut self, name: &str) -> Case {
        self.symbol_reads.push(name.to_string());
        self
    }

    pub fn name(&self) -> String {
        match &self.label {
            Some(l) => format!("{} [{l}]", self.kernel),
            None => self.kernel.clone(),
        }
    }
}

/// How one (variant, backend) pair went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Passed,
    /// Outputs not compared because the kernel is not in the file or its body is empty there.
    Skipped(String),
    /// Refused up front as expected.
    Unsupported(String),
    /// Failed as the reference expects (trap, assertion).
    FailedAsExpected(String),
    Failed(String),
}

/// The results of one case over all variants.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub case: String,
    pub rows: Vec<(String, Status)>,
}

impl Report {
    pub fn count(&self, f: impl Fn(&Status) -> bool) -> usize {
        self.rows.iter().filter(|(_, s)| f(s)).count()
    }

    pub fn failures(&self) -> Vec<&(String, Status)> {
        self.rows.iter().filter(|(_, s)| matches!(s, Status::Failed(_))).collect()
    }

    /// One line: passed / expected failures / unsupported / skipped / failed counts.
    pub fn summary(&self) -> String {
        let passed = self.count(|s| *s == Status::Passed);
        let expected = self.count(|s| matches!(s, Status::FailedAsExpected(_)));
        let unsupported = self.count(|s| matches!(s, Status::Unsupported(_)));
        let skipped = self.count(|s| matches!(s, Status::Skipped(_)));
        let failed = self.count(|s| matches!(s, Status::Failed(_)));
        let mut line = format!("{}: {passed} passed", self.case);
        if expected > 0 {
            let _ = write!(line, ", {expected} failed as expected");
        }
        if unsupported > 0 {
            let _ = write!(line, ", {unsupported} unsupported as expected");
        }
        if skipped > 0 {
            let _ = write!(line, ", {skipped} skipped");
            let mut reasons: Vec<String> = self
                .rows
                .iter()
                .filter_map(|(v, s)| match s {
                    Status::Skipped(r) => Some(format!("{v}: {r}")),
                    _ => None,
                })
                .collect();
            reasons.dedup();
            let _ = write!(line, " ({})", reasons.join("; "));
        }
        if failed > 0 {
            let _ = write!(line, ", {failed} FAILED");
        }
        line
    }
}

/// Whether a kernel body is empty: nothing but `ret` (arch-guarded kernels on old targets).
fn is_empty_body(module: &ir::Module, kernel: &str) -> bool {
    let Some(f) = module.function(kernel) else { return false };
    let Some(body) = &module.functions[f].body else { return false };
    body.insts.values().all(|i| matches!(i.opcode, ir::Opcode::Ret | ir::Opcode::Exit))
}

fn evaluate(expect: Expect, result: &Result<Output, RunError>) -> Status {
    match (expect, result) {
        (Expect::Outputs(checks), Ok(out)) => {
            let errors: Vec<String> = checks.iter().filter_map(|c| compare::evaluate(c, out).err()).collect();
            if errors.is_empty() {
                Status::Passed
            } else {
                Status::Failed(errors.join("\n"))
            }
        }
        (Expect::Outputs(_), Err(e)) => Status::Failed(format!("the launch failed: {e}")),
        (Expect::Fails(check), Err(RunError::Exec(e, stdout))) => match check(e, stdout) {
            Ok(()) => Status::FailedAsExpected(first_line(&e.to_string())),
            Err(m) => Status::Failed(format!("failed differently than expected: {m}\n  error: {e}")),
        },
        (Expect::Fails(_), Err(e)) => Status::Failed(format!("expected a kernel failure, got: {e}")),
        (Expect::Fails(_), Ok(_)) => Status::Failed("expected the kernel to fail, but it completed".to_string()),
        (Expect::Unsupported(names), Err(RunError::Exec(e, _))) => match &e.kind {
            ErrorKind::Unsupported(items) => {
                let missing: Vec<&String> =
                    names.iter().filter(|n| !items.iter().any(|i| i.contains(n.as_str()))).collect();
                // the Backend contract: every item names its PTX line
                let unlocated: Vec<&String> = items.iter().filter(|i| !i.contains("PTX line")).collect();
                if !unlocated.is_empty() {
                    Status::Failed(format!("unsupported items without a PTX line: {unlocated:?}"))
                } else if missing.is_empty() {
                    Status::Unsupported(format!("{} item(s)", items.len()))
                } else {
                    Status::Failed(format!("unsupported, but {missing:?} not named among:\n  {}", items.join("\n  ")))
                }
            }
            _ => Status::Failed(format!("expected ErrorKind::Unsupported, got: {e}")),
        },
        (Expect::Unsupported(_), Err(e)) => Status::Failed(format!("expected ErrorKind::Unsupported, got: {e}")),
        (Expect::Unsupported(names), Ok(_)) => {
            Status::Failed(format!("expected the backend to refuse the kernel ({names:?}), but it ran"))
        }
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Runs `case` on every variant of `source` (see [`corpus::variants`]) and every backend.
pub fn run_case(source: &str, case: &Case) -> Report {
    let mut report = Report { case: format!("{source}::{}", case.name()), rows: Vec::new() };
    let backends = runner::backends();
    for variant in corpus::variants(source) {
        let label = variant.to_string();
        if let Some(reason) = case.skip.as_ref().and_then(|rule| rule(&variant)) {
            report.rows.push((label, Status::Skipped(reason)));
            continue;
        }
        let module = match corpus::compile(&variant.path) {
            Ok(m) => m,
            Err(e) => {
                report.rows.push((label, Status::Failed(format!("the PTX does not compile: {e}"))));
                continue;
            }
        };
        if !module.kernels().any(|(_, f)| f.name == case.kernel) {
            report.rows.push((label, Status::Skipped("kernel not in this file".to_string())));
            continue;
        }
        if is_empty_body(&module, &case.kernel) {
            report.rows.push((label, Status::Skipped("empty body (arch-guarded)".to_string())));
            continue;
        }
        for (name, factory) in &backends {
            let mut backend = factory();
            let req = Request {
                kernel: &case.kernel,
                shape: case.shape,
                args: &case.args,
                symbol_writes: &case.symbol_writes,
                symbol_reads: &case.symbol_reads,
                extra: &case.extra,
            };
            let row = if backends.len() > 1 { format!("{label} on {name}") } else { label.clone() };
            // A backend must report errors, never panic; a panic is recorded as this variant's failure.
            let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                runner::run(backend.as_mut(), &module, &req)
            })) {
                Ok(r) => r,
                Err(p) => {
                    report.rows.push((row, Status::Failed(format!("the backend panicked: {}", panic_text(&p)))));
                    continue;
                }
            };
            let ctx = Ctx { variant: &variant, output: result.as_ref().ok() };
            let expect = (case.reference)(&ctx);
            report.rows.push((row, evaluate(expect, &result)));
        }
    }
    report
}

/// Runs `case` everywhere and panics with every failure if any variant fails, or if no variant ran at all.
pub fn check(source: &str, case: Case) {
    let report = run_case(source, &case);
    println!("{}", report.summary());
    let failures = report.failures();
    let mut msg = String::new();
    for (variant, status) in &failures {
        if let Status::Failed(m) = status {
            let _ = writeln!(msg, "{variant}: {m}");
        }
    }
    let ran = report.count(|s| !matches!(s, Status::Skipped(_)));
    if ran == 0 {
        let _ = writeln!(msg, "no variant ran: {}", report.summary());
    }
    assert!(msg.is_empty(), "{}\n{msg}", report.summary());
}

/// Checks several cases of one source; all run even if an early one fails.
pub fn check_all(source: &str, cases: Vec<Case>) {
    let mut msg = String::new();
    for case in cases {
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(source, case))) {
            let _ = writeln!(msg, "{}", panic_text(&p));
        }
    }
    assert!(msg.is_empty(), "{msg}");
}
