//! Random kernels for differential testing: the emulator (reference semantics) and the JIT must produce the
//! same bytes.
//!
//! [`generate`] builds a random PTX kernel (PTX 8.1, `sm_90`, `.address_size 64`) from a seed, or from a
//! fuzzer's bytes ([`Source::from_bytes`]). Every kernel has three parameters (an input buffer, an output
//! buffer, the number of input words `n`); each thread loads its own input words (8 bytes each, also as
//! narrow, sign-extended and `.v2` loads), initialises every register of a fixed pool
//! (`.u32/.s32/.b32/.u64/.s64/.b64/.f32/.f64/.pred`), runs a random program over them, and stores the whole
//! pool into its own output slots (8 bytes a register). Atomics accumulate into counters after the slots,
//! one order-independent operation per counter.
//!
//! The program mixes integer arithmetic and bit operations, comparisons, conversions, IEEE float arithmetic
//! with every rounding mode, `.ftz` and `.sat`, guarded instructions, special registers, a thread-private
//! `.local` array (local and generic addresses), divergent `if`/`else`, loops with uniform and per-thread
//! trip counts, and, at points every thread of the CTA reaches together (also inside CTA-uniform branches
//! and loops), barriers, shared-memory exchanges (shared and generic addresses), warp shuffles and votes.
//! Inputs are drawn so that float special values (NaN, ±inf, ±0, subnormals, huge values) and integer edge
//! values occur. Addresses never reach the outputs (the engines place shared, local and generic memory
//! differently).
//!
//! [`check`] runs a kernel on both engines and compares the outputs bit for bit, except that any NaN equals any
//! NaN in float slots: NaN payloads are not specified by PTX, and the engines differ (the emulator returns the
//! canonical NaN like the hardware, native x86 code propagates payloads). So that payloads never reach
//! integer registers, float-to-integer bit moves (`mov.b32 %r, %f`) and float stores to the local array
//! (which loads of other types may read) make NaN canonical first.
//!
//! [`shrink`] reduces a failing kernel (statements removed, branches and loops flattened, register
//! initialisations replaced by zeros, stores limited to the differing registers, smaller launch shapes) so
//! that the report shows the smallest program that still fails.
//!
//! [`Config::known_good`] leaves out the constructs an engine is known to get wrong (each with a note);
//! `Config::default()` generates everything.

use std::fmt::Write as _;

use device::Backend;

use crate::data::{edge_f32, edge_f64, Rng, EDGE_I32, EDGE_I64, EDGE_U32, EDGE_U64};
use crate::runner::{Arg, Request, Shape};

/// The kernel's name in the generated module.
pub const KERNEL: &str = "random_kernel";

/// Registers of each declared type in the pool.
const POOL: usize = 2;
/// Float and predicate registers in the pool.
const POOL_F: usize = 4;
/// The operation of each 32-bit atomic counter after the thread slots: one operation per counter, so that the
/// final value does not depend on the order the threads arrive in.
const ATOMIC_OPS: [&str; 5] = ["add.u32", "xor.b32", "or.b32", "max.u32", "max.s32"];
const ATOMICS: usize = ATOMIC_OPS.len();
/// The 64-bit counters, after the 32-bit ones (at [`ATOMIC64_AT`]).
const ATOMIC64_OPS: [&str; 3] = ["add.u64", "or.b64", "max.s64"];
const ATOMIC64_AT: usize = (ATOMICS * 4).div_ceil(8) * 8;
/// Bytes of all counters.
const ATOMIC_BYTES: usize = ATOMIC64_AT + ATOMIC64_OPS.len() * 8;
/// Bytes of each thread's local array.
const LOCAL_BYTES: usize = 64;
/// Largest CTA the shared array has room for.
const MAX_CTA: usize = 128;

// ------------------------------------------------------------------------------------------------ choices

/// Where the generator's choices come from: a seeded generator, or a fuzzer's bytes (then the generator
/// seeded with their hash once they run out).
#[derive(Clone, Debug)]
pub struct Source {
    bytes: Vec<u8>,
    pos: usize,
    rng: Rng,
}

impl Source {
    pub fn seeded(seed: u64) -> Source {
        Source { bytes: Vec::new(), pos: 0, rng: Rng::new(seed) }
    }

    /// Choices taken from `data` (one byte each) until it runs out.
    pub fn from_bytes(data: &[u8]) -> Source {
        Source { bytes: data.to_vec(), pos: 0, rng: Rng::new(hash(data)) }
    }

    fn byte(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.pos).copied();
        self.pos += usize::from(b.is_some());
        b
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        match self.byte() {
            Some(b) if n <= 256 => usize::from(b) % n,
            Some(b) => (usize::from(b) << 8 | usize::from(self.byte().unwrap_or(0))) % n,
            None => (self.rng.next_u64() % n as u64) as usize,
        }
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn u64(&mut self) -> u64 {
        if self.pos + 8 <= self.bytes.len() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.bytes[self.pos..self.pos + 8]);
            self.pos += 8;
            u64::from_le_bytes(b)
        } else {
            self.rng.next_u64()
        }
    }
}

/// FNV-1a.
pub fn hash(data: &[u8]) -> u64 {
    let mut h = 0xCBF2_9CE4_8422_2325u64;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    h
}

// ------------------------------------------------------------------------------------------------ kernels

/// A register class of the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    I32,
    I64,
    F32,
    F64,
    Pred,
}

/// A register of the pool: stored into the thread's output slot of its index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reg {
    pub name: String,
    pub class: Class,
    /// The declared type (`u32`, `s64`, `f32`, `pred`, ...).
    pub decl: &'static str,
}

/// What an input word is drawn as (the type its load reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    U32,
    S32,
    U64,
    S64,
    F32,
    F64,
}

/// A statement of the program body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// Lines that belong together (one instruction, or a sequence such as a shared-memory exchange).
    Code(Vec<String>),
    /// `cond` sets `pred`; `@pred bra else; then; bra end; else: els; end:`.
    If { cond: Vec<String>, pred: String, then: Vec<Stmt>, els: Vec<Stmt> },
    /// `init` sets `counter` (>= 1); `loop: body; counter -= 1; @(counter != 0) bra loop`.
    Loop { init: Vec<String>, counter: String, pred: String, body: Vec<Stmt> },
}

/// One register's initialisation: the line, and its zero form (for shrinking).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Init {
    pub line: String,
    pub zero: String,
}

/// What the generator may use. Everything defaults to on; a construct an engine gets wrong is turned off
/// here (with a note) so that the rest keeps being tested.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Features {
    pub branches: bool,
    pub loops: bool,
    /// Loops whose trip count differs between threads, and loops inside branches that do.
    pub divergent_loops: bool,
    /// Early `@p ret` (only in kernels without barriers or warp collectives, which threads that left would
    /// make diverge).
    pub exits: bool,
    pub guards: bool,
    pub barriers: bool,
    pub shared: bool,
    pub shuffles: bool,
    pub votes: bool,
    pub atomics: bool,
    /// The thread-private `.local` array.
    pub local: bool,
    pub floats: bool,
    pub conversions: bool,
    /// `cvt` into a destination register wider than its type (relaxed type checking), as in
    /// `cvt.u32.u16 %rd, %r` with a 64-bit `%rd`.
    pub cvt_wide_destination: bool,
    /// `cvt` to a signed integer type narrower than the destination register from an integer
    /// (`cvt.s16.s32 %r, %r`, `cvt.s32.s64 %rd, %rd`), or to `.s32` from a float into a 64-bit register
    /// (`cvt.rzi.s32.f32 %rd, %f`): the result is sign-extended to the register's width.
    pub cvt_sign_extension: bool,
    /// `shfl.sync.down` with the offset in a register (any 32-bit value, not only 0..31).
    pub shfl_down_register_offset: bool,
    /// Packed-integer instructions: `dp4a`, `dp2a`, `cvt.pack.sat`, SIMD video (`vabsdiff4`, `vadd2`, ...),
    /// `add`/`min`/`max` on `.u16x2`/`.s16x2`.
    pub packed_int: bool,
    /// Mnemonic prefixes never to generate (for example `"cvt.rni.s8"`), matched against each instruction.
    pub exclude: Vec<String>,
}

impl Default for Features {
    fn default() -> Features {
        Features {
            branches: true,
            loops: true,
            divergent_loops: true,
            exits: true,
            guards: true,
            barriers: true,
            shared: true,
            shuffles: true,
            votes: true,
            atomics: true,
            local: true,
            floats: true,
            conversions: true,
            cvt_wide_destination: true,
            cvt_sign_extension: true,
            shfl_down_register_offset: true,
            packed_int: true,
            exclude: Vec::new(),
        }
    }
}

/// Generator settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Statements at the top level on average (half to one and a half times this; nested ones come on top).
    pub statements: usize,
    pub max_depth: usize,
    pub features: Features,
}

impl Default for Config {
    fn default() -> Config {
        Config { statements: 24, max_depth: 3, features: Features::default() }
    }
}

impl Config {
    /// Everything except the constructs an engine is known to get wrong (the test and the fuzz target use
    /// this; `Config::default()` includes them, to check a fix). Add an exclusion, with a note, when a bug is
    /// found and cannot be fixed at once; remove it once fixed. None is open: the two this generator found
    /// (signed `cvt` into wider registers in the JIT, `shfl.sync.down` offsets near `u32::MAX` in both
    /// engines) are fixed.
    pub fn known_good() -> Config {
        Config::default()
    }

    /// Kernels the JIT's vector path can take: no barriers, shared memory, warp collectives, atomics or
    /// local memory (the rest of [`Config::known_good`]).
    pub fn vectorizable() -> Config {
        let mut c = Config::known_good();
        let f = &mut c.features;
        (f.barriers, f.shared, f.shuffles, f.votes, f.atomics, f.local) = (false, false, false, false, false, false);
        c
    }

    /// [`Config::vectorizable`] with global atomics and the thread-private local array (kernels where a group
    /// could diverge after a store stay scalar).
    pub fn vectorizable_with_memory() -> Config {
        let mut c = Config::vectorizable();
        (c.features.atomics, c.features.local) = (true, true);
        c
    }

    /// Kernels the vector path can take with its counted barriers: [`Config::vectorizable`] with `bar.sync 0`
    /// and shared-memory exchanges between barriers.
    pub fn vectorizable_with_barriers() -> Config {
        let mut c = Config::vectorizable();
        (c.features.barriers, c.features.shared) = (true, true);
        c
    }

    /// Kernels the vector path can run whole CTAs at a time: [`Config::vectorizable_with_barriers`] without
    /// divergent loops, so that every branch is uniform across the CTA or one the vector path runs as masks.
    pub fn whole_cta() -> Config {
        let mut c = Config::vectorizable_with_barriers();
        c.features.divergent_loops = false;
        c
    }
}

/// A generated kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Seeds the input data.
    pub seed: u64,
    /// The register pool, in output-slot order.
    pub regs: Vec<Reg>,
    /// One per pool register.
    pub inits: Vec<Init>,
    pub body: Vec<Stmt>,
    /// What each of a thread's input words holds.
    pub loads: Vec<Load>,
    /// Which registers are stored (all, except while shrinking).
    pub stored: Vec<bool>,
    /// Whether the prologue sets up the shared word and the zeroed local array (when the kernel may use them).
    pub shared_and_local: bool,
    /// Whether it sets up the local array there (not when the kernel uses no local memory).
    pub local: bool,
}

impl Kernel {
    /// Output slots (8 bytes each) per thread.
    pub fn slots(&self) -> usize {
        self.regs.len()
    }

    /// Bytes of the output buffer for `threads` threads.
    pub fn out_bytes(&self, threads: u64) -> usize {
        threads as usize * self.slots() * 8 + ATOMIC_BYTES
    }

    /// The PTX module.
    pub fn ptx(&self) -> String {
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(w, "// lockstep random kernel, seed {:#018x}", self.seed);
        let _ = writeln!(w, ".version 8.1\n.target sm_90\n.address_size 64\n");
        let _ = writeln!(
            w,
            ".visible .entry {KERNEL}(\n\t.param .u64 rk_in,\n\t.param .u64 rk_out,\n\t.param .u32 rk_n\n)\n{{"
        );
        let _ = writeln!(w, "\t.shared .align 8 .b8 rk_sh[{}];", MAX_CTA * 8);
        let _ = writeln!(w, "\t.local .align 8 .b8 rk_loc[{LOCAL_BYTES}];");
        for decl in ["u32", "s32", "b32", "u64", "s64", "b64", "f32", "f64", "pred"] {
            let names: Vec<&str> = self.regs.iter().filter(|r| r.decl == decl).map(|r| r.name.as_str()).collect();
            if !names.is_empty() {
                let _ = writeln!(w, "\t.reg .{decl} {};", names.join(", "));
            }
        }
        let _ = writeln!(w, "\t.reg .u64 %in, %out, %sh, %own, %mine, %peer, %atom, %loc, %lq, %gen, %z;");
        let _ = writeln!(w, "\t.reg .u32 %n, %tl, %nt, %gt, %cl, %tx, %ty, %tz, %nx, %ny, %nz, %tc, %tp, %ad;");
        let _ = writeln!(w, "\t.reg .u32 %lc<{}>;", MAX_DEPTH + 1);
        let _ = writeln!(w, "\t.reg .pred %bp<{}>, %lp<{}>, %pn;", MAX_DEPTH + 1, MAX_DEPTH + 1);
        let _ = writeln!(w);
        for line in prologue(self.loads.len(), self.slots(), self.shared_and_local, self.local) {
            let _ = writeln!(w, "\t{line}");
        }
        for init in &self.inits {
            let _ = writeln!(w, "\t{}", init.line);
        }
        let mut labels = 0;
        render(w, &self.body, &mut labels);
        let _ = writeln!(w, "\t// stores");
        for (k, r) in self.regs.iter().enumerate() {
            if !self.stored[k] {
                continue;
            }
            let off = k * 8;
            let _ = match r.class {
                Class::I32 => writeln!(w, "\tst.global.u32 [%own+{off}], {};", r.name),
                Class::I64 => writeln!(w, "\tst.global.u64 [%own+{off}], {};", r.name),
                Class::F32 => writeln!(w, "\tst.global.f32 [%own+{off}], {};", r.name),
                Class::F64 => writeln!(w, "\tst.global.f64 [%own+{off}], {};", r.name),
                Class::Pred => {
                    writeln!(w, "\tselp.u32 %tc, 1, 0, {};\n\tst.global.u32 [%own+{off}], %tc;", r.name)
                }
            };
        }
        let _ = writeln!(w, "\tret;\n}}");
        s
    }

    /// Input bytes for a launch of `threads` threads.
    pub fn input(&self, threads: u64) -> Vec<u8> {
        let mut rng = Rng::new(self.seed ^ 0x1234_5678_9ABC_DEF0);
        let mut out = Vec::with_capacity(threads as usize * self.loads.len() * 8);
        let f32s = edge_f32();
        let f64s = edge_f64();
        for _ in 0..threads {
            for &l in &self.loads {
                let r = rng.next_u64();
                let pick = |n: usize, rng: &mut Rng| (rng.next_u64() % n as u64) as usize;
                let v: u64 = match l {
                    Load::U32 | Load::S32 => {
                        let half = |r: u64, rng: &mut Rng| match r % 4 {
                            0 if l == Load::U32 => u64::from(EDGE_U32[pick(EDGE_U32.len(), rng)]),
                            0 => u64::from(EDGE_I32[pick(EDGE_I32.len(), rng)] as u32),
                            1 => rng.next_u64() % 70,
                            _ => rng.next_u64() & 0xFFFF_FFFF,
                        };
                        let lo = half(r, &mut rng);
                        let hi = half(r >> 8, &mut rng);
                        lo | hi << 32
                    }
                    Load::U64 | Load::S64 => match r % 4 {
                        0 if l == Load::U64 => EDGE_U64[pick(EDGE_U64.len(), &mut rng)],
                        0 => EDGE_I64[pick(EDGE_I64.len(), &mut rng)] as u64,
                        1 => rng.next_u64() % 130,
                        _ => rng.next_u64(),
                    },
                    Load::F32 => {
                        let f = match r % 5 {
                            0 | 1 => f32s[pick(f32s.len(), &mut rng)],
                            2 => rng.f32_in(-8.0, 8.0),
                            3 => f32::from_bits(rng.next_u32()),
                            _ => (rng.next_u64() % 17) as f32 - 8.0,
                        };
                        u64::from(f.to_bits()) | (rng.next_u64() << 32)
                    }
                    Load::F64 => {
                        let f = match r % 5 {
                            0 | 1 => f64s[pick(f64s.len(), &mut rng)],
                            2 => rng.f64_in(-8.0, 8.0),
                            3 => f64::from_bits(rng.next_u64()),
                            _ => (rng.next_u64() % 17) as f64 - 8.0,
                        };
                        f.to_bits()
                    }
                };
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// Number of statements (nested ones included).
    pub fn size(&self) -> usize {
        fn count(b: &[Stmt]) -> usize {
            b.iter()
                .map(|s| match s {
                    Stmt::Code(_) => 1,
                    Stmt::If { then, els, .. } => 1 + count(then) + count(els),
                    Stmt::Loop { body, .. } => 1 + count(body),
                })
                .sum()
        }
        count(&self.body)
    }
}

const MAX_DEPTH: usize = 3;

/// Thread indices, addresses: `%tl` the thread's linear index in its CTA, `%nt` the CTA's size, `%gt` the
/// global linear index, `%own` its output slots, `%mine` its shared word, `%atom` the counters.
fn prologue(loads: usize, slots: usize, shared_and_local: bool, local: bool) -> Vec<String> {
    let mut v: Vec<String> = [
        "ld.param.u64 %in, [rk_in];",
        "ld.param.u64 %out, [rk_out];",
        "ld.param.u32 %n, [rk_n];",
        "cvta.to.global.u64 %in, %in;",
        "cvta.to.global.u64 %out, %out;",
        "mov.u32 %tx, %tid.x;",
        "mov.u32 %ty, %tid.y;",
        "mov.u32 %tz, %tid.z;",
        "mov.u32 %nx, %ntid.x;",
        "mov.u32 %ny, %ntid.y;",
        "mov.u32 %nz, %ntid.z;",
        "mad.lo.u32 %tl, %tz, %ny, %ty;",
        "mad.lo.u32 %tl, %tl, %nx, %tx;",
        "mul.lo.u32 %nt, %nx, %ny;",
        "mul.lo.u32 %nt, %nt, %nz;",
        "mov.u32 %tx, %ctaid.x;",
        "mov.u32 %ty, %ctaid.y;",
        "mov.u32 %tz, %ctaid.z;",
        "mov.u32 %nx, %nctaid.x;",
        "mov.u32 %ny, %nctaid.y;",
        "mad.lo.u32 %cl, %tz, %ny, %ty;",
        "mad.lo.u32 %cl, %cl, %nx, %tx;",
        "mad.lo.u32 %gt, %cl, %nt, %tl;",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(format!("mul.wide.u32 %mine, %gt, {};", loads * 8));
    v.push("add.u64 %in, %in, %mine;".into());
    v.push(format!("mul.wide.u32 %own, %gt, {};", slots * 8));
    v.push("add.u64 %own, %out, %own;".into());
    v.push("mov.u32 %tc, %nctaid.z;".into());
    v.push("mul.lo.u32 %tc, %tc, %nx;".into());
    v.push("mul.lo.u32 %tc, %tc, %ny;".into());
    v.push("mul.lo.u32 %tc, %tc, %nt;".into());
    v.push(format!("mul.wide.u32 %atom, %tc, {};", slots * 8));
    v.push("add.u64 %atom, %out, %atom;".into());
    if shared_and_local {
        v.push("mov.u64 %sh, rk_sh;".into());
        if local {
            v.push("mov.u64 %loc, rk_loc;".into());
            v.push("mov.u64 %z, 0;".into());
            for k in 0..LOCAL_BYTES / 8 {
                v.push(format!("st.local.u64 [%loc+{}], %z;", k * 8));
            }
        }
        v.push("mul.wide.u32 %mine, %tl, 8;".into());
        v.push("add.u64 %mine, %sh, %mine;".into());
    }
    for d in 0..=MAX_DEPTH {
        v.push(format!("mov.u32 %lc{d}, 0;"));
    }
    v
}

fn render(w: &mut String, body: &[Stmt], labels: &mut usize) {
    for s in body {
        match s {
            Stmt::Code(lines) => {
                for l in lines {
                    let _ = writeln!(w, "\t{l}");
                }
            }
            Stmt::If { cond, pred, then, els } => {
                let k = *labels;
                *labels += 1;
                for l in cond {
                    let _ = writeln!(w, "\t{l}");
                }
                let _ = writeln!(w, "\t@{pred} bra $L_else_{k};");
                render(w, then, labels);
                let _ = writeln!(w, "\tbra $L_end_{k};\n$L_else_{k}:");
                render(w, els, labels);
                let _ = writeln!(w, "$L_end_{k}:");
            }
            Stmt::Loop { init, counter, pred, body } => {
                let k = *labels;
                *labels += 1;
                for l in init {
                    let _ = writeln!(w, "\t{l}");
                }
                let _ = writeln!(w, "$L_loop_{k}:");
                render(w, body, labels);
                let _ = writeln!(w, "\tsub.u32 {counter}, {counter}, 1;");
                let _ = writeln!(w, "\tsetp.ne.u32 {pred}, {counter}, 0;");
                let _ = writeln!(w, "\t@{pred} bra $L_loop_{k};");
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------ generator

/// Generates a kernel from a seed.
pub fn generate(seed: u64, config: &Config) -> Kernel {
    generate_from(&mut Source::seeded(seed), seed, config)
}

/// Generates a kernel from a source of choices; `seed` seeds its input data.
pub fn generate_from(src: &mut Source, seed: u64, config: &Config) -> Kernel {
    let mut regs = Vec::new();
    for (class, decls, prefix, n) in [
        (Class::I32, ["u32", "s32", "b32"], ["%ru", "%rs", "%rb"], POOL),
        (Class::I64, ["u64", "s64", "b64"], ["%rdu", "%rds", "%rdb"], POOL),
    ] {
        for (d, p) in decls.iter().zip(prefix) {
            for i in 0..n {
                regs.push(Reg { name: format!("{p}{i}"), class, decl: d });
            }
        }
    }
    for (class, decl, p) in [(Class::F32, "f32", "%f"), (Class::F64, "f64", "%fd"), (Class::Pred, "pred", "%p")] {
        for i in 0..POOL_F {
            regs.push(Reg { name: format!("{p}{i}"), class, decl });
        }
    }
    let mut g = Gen { src, regs: regs.clone(), loads: Vec::new(), config };
    let inits: Vec<Init> = regs.iter().map(|r| g.init(r)).collect();
    let mut body = Vec::new();
    let scope = Scope { depth: 0, convergent: true };
    let n = config.statements / 2 + g.src.below(config.statements + 1);
    for _ in 0..n {
        let s = g.stmt(scope);
        body.push(s);
    }
    let stored = vec![true; regs.len()];
    let f = &config.features;
    let shared_and_local = f.shared || f.local;
    Kernel { seed, regs, inits, body, loads: g.loads, stored, shared_and_local, local: f.local }
}

#[derive(Clone, Copy, Debug)]
struct Scope {
    depth: usize,
    /// Every thread of the CTA executes here together (no divergent branch or per-thread loop around).
    convergent: bool,
}

struct Gen<'a> {
    src: &'a mut Source,
    regs: Vec<Reg>,
    loads: Vec<Load>,
    config: &'a Config,
}

const INT_TYPES: [&str; 4] = ["u32", "s32", "u64", "s64"];

fn class_of(ty: &str) -> Class {
    match ty {
        "f32" => Class::F32,
        "f64" => Class::F64,
        "pred" => Class::Pred,
        t if t.ends_with("64") => Class::I64,
        _ => Class::I32,
    }
}

impl Gen<'_> {
    fn f(&self) -> &Features {
        &self.config.features
    }

    fn reg(&mut self, c: Class) -> String {
        let n = self.regs.iter().filter(|r| r.class == c).count();
        let k = self.src.below(n);
        self.regs.iter().filter(|r| r.class == c).nth(k).map(|r| r.name.clone()).unwrap_or_default()
    }

    fn load(&mut self, l: Load) -> usize {
        self.loads.push(l);
        (self.loads.len() - 1) * 8
    }

    fn init(&mut self, r: &Reg) -> Init {
        let name = &r.name;
        let (line, zero) = match r.class {
            Class::I32 => {
                let zero = format!("mov.{} {name}, 0;", r.decl);
                let line = match self.src.below(10) {
                    0 => {
                        let s = *self.src.pick(&[
                            "%tid.x",
                            "%tid.y",
                            "%ctaid.x",
                            "%ntid.x",
                            "%laneid",
                            "%lanemask_lt",
                            "%lanemask_ge",
                        ]);
                        format!("mov.u32 {name}, {s};")
                    }
                    1 => format!("mov.u32 {name}, %n;"),
                    2 => format!("mov.{} {name}, {};", r.decl, self.imm(Class::I32)),
                    3 | 4 => {
                        let l = if self.src.chance(50) { Load::U32 } else { Load::S32 };
                        let off = self.load(l);
                        self.narrow_load(name, Class::I32, off, "global")
                    }
                    _ => {
                        let (ty, l) = if self.src.chance(50) { ("u32", Load::U32) } else { ("s32", Load::S32) };
                        let off = self.load(l);
                        format!("ld.global.{ty} {name}, [%in+{off}];")
                    }
                };
                (line, zero)
            }
            Class::I64 => {
                let zero = format!("mov.{} {name}, 0;", r.decl);
                let line = match self.src.below(10) {
                    0 => format!("mov.{} {name}, {};", r.decl, self.imm(Class::I64)),
                    1 => format!("cvt.u64.u32 {name}, %gt;"),
                    2 | 3 => {
                        let l = if self.src.chance(50) { Load::U32 } else { Load::S32 };
                        let off = self.load(l);
                        self.narrow_load(name, Class::I64, off, "global")
                    }
                    _ => {
                        let (ty, l) = if self.src.chance(50) { ("u64", Load::U64) } else { ("s64", Load::S64) };
                        let off = self.load(l);
                        format!("ld.global.{ty} {name}, [%in+{off}];")
                    }
                };
                (line, zero)
            }
            Class::F32 => {
                let line = if self.src.chance(15) {
                    format!("mov.f32 {name}, {};", self.imm(Class::F32))
                } else {
                    let off = self.load(Load::F32);
                    format!("ld.global.f32 {name}, [%in+{off}];")
                };
                (line, format!("mov.f32 {name}, 0f00000000;"))
            }
            Class::F64 => {
                let line = if self.src.chance(15) {
                    format!("mov.f64 {name}, {};", self.imm(Class::F64))
                } else {
                    let off = self.load(Load::F64);
                    format!("ld.global.f64 {name}, [%in+{off}];")
                };
                (line, format!("mov.f64 {name}, 0d0000000000000000;"))
            }
            Class::Pred => {
                let line = match self.src.below(3) {
                    0 => format!("mov.u32 %tc, %laneid;\n\tsetp.ne.u32 {name}, %tc, {};", self.src.below(32)),
                    1 => format!("setp.eq.u32 {name}, %tl, {};", self.src.below(8)),
                    _ => {
                        let bit = 1u32 << self.src.below(6);
                        format!("and.b32 %tc, %tl, {bit};\n\tsetp.ne.u32 {name}, %tc, 0;")
                    }
                };
                (line, format!("setp.ne.u32 {name}, %tl, %tl;"))
            }
        };
        Init { line, zero }
    }

    /// A load of part of the 8-byte input word at `off`: 8, 16 or 32 bits, signed or not, into a register of
    /// `class` (wider than the type: sign- or zero-extended), or both halves as a `.v2.u32`.
    fn narrow_load(&mut self, name: &str, class: Class, off: usize, space: &str) -> String {
        let base = if space == "global" { "%in" } else { "%gen" };
        if class == Class::I32 && self.src.chance(25) {
            let v = if self.src.chance(50) { format!("{{{name}, %tc}}") } else { format!("{{%tc, {name}}}") };
            return format!("ld.{space}.v2.u32 {v}, [{base}+{off}];");
        }
        let ty = *self.src.pick(&["u8", "s8", "u16", "s16", "u32", "s32"]);
        let size: usize = ty[1..].parse::<usize>().unwrap_or(8) / 8;
        let at = off + size * self.src.below(8 / size);
        format!("ld.{space}.{ty} {name}, [{base}+{at}];")
    }

    /// An immediate operand of the class.
    fn imm(&mut self, c: Class) -> String {
        match c {
            Class::I32 => match self.src.below(3) {
                0 => format!("{}", self.src.below(40)),
                1 => format!("{:#X}", self.src.pick(EDGE_U32)).replace("0X", "0x"),
                _ => format!("{:#X}", self.src.u64() as u32).replace("0X", "0x"),
            },
            Class::I64 => match self.src.below(3) {
                0 => format!("{}", self.src.below(70)),
                1 => format!("{:#X}", self.src.pick(EDGE_U64)).replace("0X", "0x"),
                _ => format!("{:#X}", self.src.u64()).replace("0X", "0x"),
            },
            Class::F32 => {
                let e = edge_f32();
                let f = if self.src.chance(70) { *self.src.pick(&e) } else { f32::from_bits(self.src.u64() as u32) };
                format!("0f{:08X}", f.to_bits())
            }
            Class::F64 => {
                let e = edge_f64();
                let f = if self.src.chance(70) { *self.src.pick(&e) } else { f64::from_bits(self.src.u64()) };
                format!("0d{:016X}", f.to_bits())
            }
            Class::Pred => String::new(),
        }
    }

    /// A source operand: mostly a register, sometimes an immediate.
    fn opnd(&mut self, c: Class) -> String {
        if c != Class::Pred && self.src.chance(15) {
            self.imm(c)
        } else {
            self.reg(c)
        }
    }

    /// A shift amount or bit position: a register (any value) or a small immediate, past the width too.
    fn amount(&mut self) -> String {
        if self.src.chance(40) {
            self.reg(Class::I32)
        } else {
            format!("{}", self.src.pick(&[0u32, 1, 2, 3, 5, 7, 8, 15, 16, 24, 31, 32, 33, 40, 63, 64, 65, 100, 255]))
        }
    }

    /// Whether no instruction of `line` starts with an excluded prefix.
    fn allowed(&self, line: &str) -> bool {
        line.lines().all(|l| {
            let m = l.split_whitespace().find(|w| !w.starts_with('@')).unwrap_or("");
            !self.f().exclude.iter().any(|x| m.starts_with(x.as_str()))
        })
    }

    fn stmt(&mut self, s: Scope) -> Stmt {
        for _ in 0..50 {
            if let Some(st) = self.try_stmt(s) {
                return st;
            }
        }
        let d = self.reg(Class::I32);
        let a = self.reg(Class::I32);
        Stmt::Code(vec![format!("add.u32 {d}, {a}, 1;")])
    }

    fn try_stmt(&mut self, s: Scope) -> Option<Stmt> {
        let nest = s.depth < self.config.max_depth.min(MAX_DEPTH);
        let f = self.f().clone();
        match self.src.below(100) {
            0..=6 if nest && f.branches => Some(self.if_stmt(s)),
            7..=11 if nest && f.loops && (f.divergent_loops || s.convergent) => Some(self.loop_stmt(s)),
            12..=13 if s.convergent && f.barriers => Some(Stmt::Code(vec!["bar.sync 0;".into()])),
            14..=16 if s.convergent && f.barriers && f.shared => Some(self.exchange()),
            17..=21 if s.convergent && f.shuffles => self.code(Self::shuffle),
            22..=24 if s.convergent && f.votes => self.code(Self::vote),
            25..=27 if f.atomics => {
                let mut line = self.atomic()?;
                if f.guards && self.src.chance(25) {
                    line = format!("@{} {line}", self.reg(Class::Pred));
                }
                self.allowed(&line).then(|| Stmt::Code(vec![line]))
            }
            28 if f.exits && !f.barriers && !f.shuffles && !f.votes && self.src.chance(30) => {
                Some(Stmt::Code(vec![format!("@{} ret;", self.reg(Class::Pred))]))
            }
            28..=29 => Some(self.special()),
            30..=32 => self.reload(),
            33..=36 if f.local => Some(self.local()),
            _ => {
                let mut line = self.inst()?;
                if f.guards && !line.contains('\n') && self.src.chance(20) {
                    let p = self.reg(Class::Pred);
                    let neg = if self.src.chance(50) { "!" } else { "" };
                    line = format!("@{neg}{p} {line}");
                }
                Some(Stmt::Code(vec![line]))
            }
        }
    }

    /// A special register read anywhere (after barriers and collectives too, where the JIT resumes threads).
    fn special(&mut self) -> Stmt {
        let s = *self.src.pick(&[
            "%tid.x",
            "%tid.y",
            "%tid.z",
            "%ntid.x",
            "%ntid.y",
            "%ctaid.x",
            "%ctaid.y",
            "%nctaid.x",
            "%laneid",
            "%lanemask_eq",
            "%lanemask_le",
            "%lanemask_gt",
        ]);
        let d = self.reg(Class::I32);
        Stmt::Code(vec![format!("mov.u32 {d}, {s};")])
    }

    /// Loads one of the thread's input words again, as another type, through a global or a generic address.
    fn reload(&mut self) -> Option<Stmt> {
        if self.loads.is_empty() {
            return None;
        }
        let off = self.src.below(self.loads.len()) * 8;
        let generic = self.src.chance(40);
        let space = if generic { "" } else { "global" };
        let mut lines = Vec::new();
        if generic {
            lines.push("cvta.global.u64 %gen, %in;".to_string());
        }
        let (c, ty) = *self.src.pick(&[
            (Class::I32, ""),
            (Class::I64, ""),
            (Class::I64, "u64"),
            (Class::F32, "f32"),
            (Class::F64, "f64"),
        ]);
        let d = self.reg(c);
        let line = if ty.is_empty() {
            self.narrow_load(&d, c, off, if generic { "" } else { "global" })
        } else {
            format!("ld.{space}.{ty} {d}, [{}+{off}];", if generic { "%gen" } else { "%in" })
        };
        lines.push(line.replace("ld..", "ld."));
        Some(Stmt::Code(lines))
    }

    /// A store to or a load from the thread's local array, at a constant or a data-dependent offset, through
    /// a local or a generic address. Every byte was zeroed first.
    fn local(&mut self) -> Stmt {
        let (ty, c, size) = *self.src.pick(&[
            ("u8", Class::I32, 1),
            ("s8", Class::I32, 1),
            ("u16", Class::I32, 2),
            ("s16", Class::I32, 2),
            ("b32", Class::I32, 4),
            ("s32", Class::I64, 4),
            ("u64", Class::I64, 8),
            ("f32", Class::F32, 4),
            ("f64", Class::F64, 8),
        ]);
        let generic = self.src.chance(30);
        let mut lines = Vec::new();
        let (space, base) = if generic {
            lines.push("cvta.local.u64 %gen, %loc;".to_string());
            ("", "%gen")
        } else {
            (".local", "%loc")
        };
        let addr = if self.src.chance(40) {
            let i = self.reg(Class::I32);
            let words = (LOCAL_BYTES / 8) as u32 - 1;
            lines.push(format!("and.b32 %tc, {i}, {words};"));
            lines.push("mul.wide.u32 %lq, %tc, 8;".to_string());
            lines.push(format!("add.u64 %lq, {base}, %lq;"));
            format!("[%lq+{}]", size * self.src.below(8 / size))
        } else {
            format!("[{base}+{}]", size * self.src.below(LOCAL_BYTES / size))
        };
        let r = self.reg(c);
        if self.src.chance(50) {
            // Loads of other types may read these bytes: NaN is made canonical first (payloads are unspecified).
            let canonical = match c {
                Class::F32 => Some(("f32", "0f7FFFFFFF")),
                Class::F64 => Some(("f64", "0d7FFFFFFFFFFFFFFF")),
                _ => None,
            };
            if let Some((t, nan)) = canonical {
                lines.insert(0, format!("setp.nan.{t} %pn, {r}, {r};"));
                lines.insert(1, format!("@%pn mov.{t} {r}, {nan};"));
            }
            lines.push(format!("st{space}.{ty} {addr}, {r};"));
        } else {
            lines.push(format!("ld{space}.{ty} {r}, {addr};"));
        }
        Stmt::Code(lines)
    }

    fn code(&mut self, f: fn(&mut Self) -> Option<String>) -> Option<Stmt> {
        let l = f(self)?;
        self.allowed(&l).then(|| Stmt::Code(vec![l]))
    }

    fn block(&mut self, s: Scope) -> Vec<Stmt> {
        let n = 1 + self.src.below(4);
        (0..n).map(|_| self.stmt(s)).collect()
    }

    fn if_stmt(&mut self, s: Scope) -> Stmt {
        let pred = format!("%bp{}", s.depth);
        if s.convergent && self.src.chance(25) {
            // A condition every thread of the CTA evaluates alike: the arms stay convergent (barriers and
            // collectives inside them).
            let cond = match self.src.below(3) {
                0 => vec!["mov.u32 %tc, %ctaid.x;".to_string(), format!("setp.eq.u32 {pred}, %tc, 0;")],
                1 => vec![format!("setp.gt.u32 {pred}, %nt, {};", 16 * (1 + self.src.below(6)))],
                _ => vec![format!("setp.lt.u32 {pred}, %n, {};", 64 * (1 + self.src.below(16)))],
            };
            let inner = Scope { depth: s.depth + 1, convergent: true };
            let then = self.block(inner);
            let els = if self.src.chance(60) { self.block(inner) } else { Vec::new() };
            return Stmt::If { cond, pred, then, els };
        }
        let cond = match self.src.below(4) {
            0 | 1 => {
                let bit = 1u32 << self.src.below(6);
                vec![format!("and.b32 %tc, %tl, {bit};"), format!("setp.ne.u32 {pred}, %tc, 0;")]
            }
            2 => {
                let a = self.reg(Class::I32);
                let b = self.reg(Class::I32);
                vec![format!("setp.lt.s32 {pred}, {a}, {b};")]
            }
            _ => {
                let p = self.reg(Class::Pred);
                vec![format!("and.pred {pred}, {p}, {p};")]
            }
        };
        let inner = Scope { depth: s.depth + 1, convergent: false };
        let then = self.block(inner);
        let els = if self.src.chance(60) { self.block(inner) } else { Vec::new() };
        Stmt::If { cond, pred, then, els }
    }

    fn loop_stmt(&mut self, s: Scope) -> Stmt {
        let counter = format!("%lc{}", s.depth);
        let pred = format!("%lp{}", s.depth);
        let uniform = !self.f().divergent_loops || self.src.chance(50);
        let init = if uniform {
            vec![format!("mov.u32 {counter}, {};", 1 + self.src.below(4))]
        } else {
            let base = if self.src.chance(50) { "%tl".to_string() } else { self.reg(Class::I32) };
            vec![format!("and.b32 {counter}, {base}, 3;"), format!("add.u32 {counter}, {counter}, 1;")]
        };
        let inner = Scope { depth: s.depth + 1, convergent: s.convergent && uniform };
        let body = self.block(inner);
        Stmt::Loop { init, counter, pred, body }
    }

    /// Every thread writes its shared word, the CTA meets, each reads another thread's word.
    fn exchange(&mut self) -> Stmt {
        let (ty, c) = *self.src.pick(&[
            ("b32", Class::I32),
            ("u32", Class::I32),
            ("f32", Class::F32),
            ("b64", Class::I64),
            ("s64", Class::I64),
            ("f64", Class::F64),
        ]);
        let a = self.reg(c);
        let d = self.reg(c);
        let k = 1 + self.src.below(40);
        let peer = if self.src.chance(70) {
            vec![format!("add.u32 %tp, %tl, {k};"), "rem.u32 %tp, %tp, %nt;".to_string()]
        } else {
            // The thread mirrored in the CTA.
            vec!["sub.u32 %tp, %nt, %tl;".to_string(), "sub.u32 %tp, %tp, 1;".to_string()]
        };
        let mut lines = vec!["bar.sync 0;".to_string(), format!("st.shared.{ty} [%mine], {a};"), "bar.sync 0;".into()];
        lines.extend(peer);
        lines.push("mul.wide.u32 %peer, %tp, 8;".into());
        lines.push("add.u64 %peer, %sh, %peer;".into());
        if self.src.chance(30) {
            // Through the generic address of the shared word.
            lines.push("cvta.shared.u64 %gen, %peer;".into());
            lines.push(format!("ld.{ty} {d}, [%gen];"));
        } else {
            lines.push(format!("ld.shared.{ty} {d}, [%peer];"));
        }
        Stmt::Code(lines)
    }

    fn shuffle(&mut self) -> Option<String> {
        let mode = *self.src.pick(&["up", "down", "bfly", "idx"]);
        let c = if self.src.chance(75) { Class::I32 } else { Class::F32 };
        let d = self.reg(c);
        let a = self.reg(c);
        let register = self.src.chance(30) && (mode != "down" || self.f().shfl_down_register_offset);
        let b = if register { self.reg(Class::I32) } else { format!("{}", self.src.below(33)) };
        let clamp = if self.src.chance(70) {
            if mode == "up" {
                "0".to_string()
            } else {
                "31".to_string()
            }
        } else {
            let width = *self.src.pick(&[2u32, 4, 8, 16, 32]);
            let seg = (32 - width) << 8;
            format!("{:#x}", if mode == "up" { seg } else { seg | 31 })
        };
        let dp = if self.src.chance(40) { format!("|{}", self.reg(Class::Pred)) } else { String::new() };
        Some(format!("shfl.sync.{mode}.b32 {d}{dp}, {a}, {b}, {clamp}, 0xffffffff;"))
    }

    fn vote(&mut self) -> Option<String> {
        let q = self.reg(Class::Pred);
        let neg = if self.src.chance(30) { "!" } else { "" };
        Some(match self.src.below(3) {
            0 => format!("vote.sync.any.pred {}, {neg}{q}, 0xffffffff;", self.reg(Class::Pred)),
            1 => format!("vote.sync.all.pred {}, {neg}{q}, 0xffffffff;", self.reg(Class::Pred)),
            _ => format!("vote.sync.ballot.b32 {}, {neg}{q}, 0xffffffff;", self.reg(Class::I32)),
        })
    }

    /// Order-independent atomics on the counters (the old value is not kept: it depends on the order).
    fn atomic(&mut self) -> Option<String> {
        if self.src.chance(30) {
            let k = self.src.below(ATOMIC64_OPS.len());
            let a = self.opnd(Class::I64);
            return Some(format!("atom.global.{} %lq, [%atom+{}], {a};", ATOMIC64_OPS[k], ATOMIC64_AT + 8 * k));
        }
        let k = self.src.below(ATOMICS);
        let (op, k) = (ATOMIC_OPS[k], k * 4);
        let a = self.opnd(Class::I32);
        Some(format!("atom.global.{op} %ad, [%atom+{k}], {a};"))
    }

    /// One random instruction (or a short group of them), or `None` when the choice is excluded.
    fn inst(&mut self) -> Option<String> {
        let f = self.f().clone();
        let line = match self.src.below(100) {
            0..=19 => self.int_arith(),
            20..=37 => self.bit_op(),
            38..=47 => self.compare(),
            48..=53 => self.select(),
            54..=65 if f.conversions => self.cvt(),
            66..=91 if f.floats => self.float(),
            92..=95 if f.packed_int => self.packed_int(),
            _ => self.mov(),
        }?;
        self.allowed(&line).then_some(line)
    }

    fn int_arith(&mut self) -> Option<String> {
        let ty = *self.src.pick(&INT_TYPES);
        let c = class_of(ty);
        let signed = ty.starts_with('s');
        let d = self.reg(c);
        Some(match self.src.below(12) {
            0 | 1 => {
                let op = if self.src.chance(50) { "add" } else { "sub" };
                let sat = if ty == "s32" && self.src.chance(30) { ".sat" } else { "" };
                format!("{op}{sat}.{ty} {d}, {}, {};", self.reg(c), self.opnd(c))
            }
            2 => {
                let part = if self.src.chance(50) { "lo" } else { "hi" };
                format!("mul.{part}.{ty} {d}, {}, {};", self.reg(c), self.opnd(c))
            }
            3 => {
                let t = if self.src.chance(50) { "u32" } else { "s32" };
                let d = self.reg(Class::I64);
                format!("mul.wide.{t} {d}, {}, {};", self.reg(Class::I32), self.opnd(Class::I32))
            }
            4 => {
                let part = if self.src.chance(50) { "lo" } else { "hi" };
                format!("mad.{part}.{ty} {d}, {}, {}, {};", self.reg(c), self.opnd(c), self.opnd(c))
            }
            5 => {
                let t = if self.src.chance(50) { "u32" } else { "s32" };
                let d = self.reg(Class::I64);
                format!(
                    "mad.wide.{t} {d}, {}, {}, {};",
                    self.reg(Class::I32),
                    self.opnd(Class::I32),
                    self.opnd(Class::I64)
                )
            }
            6 | 7 => {
                let op = if self.src.chance(50) { "div" } else { "rem" };
                // Divisors: registers (zero occurs in the inputs), small immediates, zero itself.
                let b = match self.src.below(5) {
                    0 => "0".to_string(),
                    1 => format!("{}", 1 + self.src.below(9)),
                    _ => self.reg(c),
                };
                format!("{op}.{ty} {d}, {}, {b};", self.reg(c))
            }
            8 | 9 => {
                let op = if self.src.chance(50) { "min" } else { "max" };
                format!("{op}.{ty} {d}, {}, {};", self.reg(c), self.opnd(c))
            }
            _ => {
                let t = if c == Class::I32 { "s32" } else { "s64" };
                let _ = signed;
                let op = if self.src.chance(50) { "abs" } else { "neg" };
                format!("{op}.{t} {d}, {};", self.reg(c))
            }
        })
    }

    /// `dp4a`/`dp2a`, `cvt.pack.sat`, the SIMD video instructions and `add`/`min`/`max` on packed half-words,
    /// on 32-bit registers.
    fn packed_int(&mut self) -> Option<String> {
        let sign = |me: &mut Self| if me.src.chance(50) { "u32" } else { "s32" };
        let d = self.reg(Class::I32);
        let (a, b, c) = (self.reg(Class::I32), self.opnd(Class::I32), self.reg(Class::I32));
        Some(match self.src.below(4) {
            0 => {
                let (ta, tb) = (sign(self), sign(self));
                if self.src.chance(50) {
                    format!("dp4a.{ta}.{tb} {d}, {a}, {b}, {c};")
                } else {
                    let part = if self.src.chance(50) { "lo" } else { "hi" };
                    format!("dp2a.{part}.{ta}.{tb} {d}, {a}, {b}, {c};")
                }
            }
            1 => {
                let ty = *self.src.pick(&["u16", "s16", "u8", "s8", "u4", "s4", "u2", "s2"]);
                if ty.ends_with("16") {
                    format!("cvt.pack.sat.{ty}.s32 {d}, {a}, {b};")
                } else {
                    format!("cvt.pack.sat.{ty}.s32.b32 {d}, {a}, {b}, {c};")
                }
            }
            2 => {
                let op = *self.src.pick(&["add", "min", "max"]);
                let ty = if self.src.chance(50) { "u16x2" } else { "s16x2" };
                let relu = if op != "add" && ty == "s16x2" && self.src.chance(50) { ".relu" } else { "" };
                format!("{op}{relu}.{ty} {d}, {a}, {b};")
            }
            _ => {
                let op = *self.src.pick(&["vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset"]);
                let lanes = if self.src.chance(50) { 4 } else { 2 };
                let (td, ta, tb) = (sign(self), sign(self), sign(self));
                let tail = match self.src.below(3) {
                    0 if op != "vset" => ".sat",
                    1 => ".add",
                    _ => "",
                };
                // Destination mask and source lane selectors (over the parts of {b, a}), on register
                // operands only, some of the time.
                let (mut dm, mut asel, mut bsel) = (String::new(), String::new(), String::new());
                if self.src.chance(40) {
                    let top = if lanes == 2 { 2 } else { 4 };
                    let mask = 1 + self.src.below((1 << top) - 1);
                    let digits: String = (0..top).rev().filter(|i| mask >> i & 1 == 1).map(|i| i.to_string()).collect();
                    let letter = if lanes == 2 { "h" } else { "b" };
                    dm = match digits.len() {
                        1 if lanes == 2 => format!(".h{digits}"),
                        _ => format!(".{letter}{digits}"),
                    };
                    let sel = |me: &mut Self| -> String {
                        let n = if lanes == 2 { 4 } else { 8 };
                        let ds: String = (0..lanes).map(|_| me.src.below(n).to_string()).collect();
                        format!(".{letter}{ds}")
                    };
                    asel = sel(self);
                    if b.starts_with('%') {
                        bsel = sel(self);
                    }
                }
                let types = if op == "vset" {
                    let cmp = *self.src.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
                    format!("{ta}.{tb}.{cmp}")
                } else {
                    format!("{td}.{ta}.{tb}")
                };
                format!("{op}{lanes}.{types}{tail} {d}{dm}, {a}{asel}, {b}{bsel}, {c};")
            }
        })
    }

    fn bit_op(&mut self) -> Option<String> {
        let wide = self.src.chance(35);
        let (b, c) = if wide { ("b64", Class::I64) } else { ("b32", Class::I32) };
        let d = self.reg(c);
        Some(match self.src.below(14) {
            0..=2 => {
                let op = *self.src.pick(&["and", "or", "xor"]);
                if self.src.chance(15) {
                    let (p, q, r) = (self.reg(Class::Pred), self.reg(Class::Pred), self.reg(Class::Pred));
                    format!("{op}.pred {p}, {q}, {r};")
                } else {
                    format!("{op}.{b} {d}, {}, {};", self.reg(c), self.opnd(c))
                }
            }
            3 => {
                if self.src.chance(15) {
                    let (p, q) = (self.reg(Class::Pred), self.reg(Class::Pred));
                    format!("not.pred {p}, {q};")
                } else {
                    format!("not.{b} {d}, {};", self.reg(c))
                }
            }
            4 => format!("shl.{b} {d}, {}, {};", self.reg(c), self.amount()),
            5 | 6 => {
                let bits = if wide { 64 } else { 32 };
                let t = *self.src.pick(&["u", "s", "b"]);
                format!("shr.{t}{bits} {d}, {}, {};", self.reg(c), self.amount())
            }
            7 => {
                let op = *self.src.pick(&["popc", "clz"]);
                let d = self.reg(Class::I32);
                format!("{op}.{b} {d}, {};", self.reg(c))
            }
            8 => format!("brev.{b} {d}, {};", self.reg(c)),
            9 => {
                let bits = if wide { 64 } else { 32 };
                let t = if self.src.chance(50) { "u" } else { "s" };
                format!("bfe.{t}{bits} {d}, {}, {}, {};", self.reg(c), self.amount(), self.amount())
            }
            10 => format!("bfi.{b} {d}, {}, {}, {}, {};", self.reg(c), self.reg(c), self.amount(), self.amount()),
            11 => {
                let mode = *self.src.pick(&["", "", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"]);
                let (d, a, bb) = (self.reg(Class::I32), self.reg(Class::I32), self.reg(Class::I32));
                let sel = if self.src.chance(50) {
                    self.reg(Class::I32)
                } else {
                    format!("{:#x}", self.src.u64() as u32 & 0xFFFF)
                };
                format!("prmt.b32{mode} {d}, {a}, {bb}, {sel};")
            }
            _ => {
                let (d, a, bb, cc) =
                    (self.reg(Class::I32), self.reg(Class::I32), self.reg(Class::I32), self.reg(Class::I32));
                format!("lop3.b32 {d}, {a}, {bb}, {cc}, {:#x};", self.src.below(256))
            }
        })
    }

    fn compare(&mut self) -> Option<String> {
        let float = self.f().floats && self.src.chance(45);
        let (ty, cmp, ftz) = if float {
            let ty = if self.src.chance(50) { "f32" } else { "f64" };
            let cmp = *self
                .src
                .pick(&["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]);
            let ftz = if ty == "f32" && self.src.chance(30) { ".ftz" } else { "" };
            (ty, cmp, ftz)
        } else {
            let ty = *self.src.pick(&["u32", "s32", "b32", "u64", "s64", "b64"]);
            let cmp = if ty.starts_with('b') {
                *self.src.pick(&["eq", "ne"])
            } else if ty.starts_with('u') {
                *self.src.pick(&["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"])
            } else {
                *self.src.pick(&["eq", "ne", "lt", "le", "gt", "ge"])
            };
            (ty, cmp, "")
        };
        let c = class_of(ty);
        let p = self.reg(Class::Pred);
        let q = if self.src.chance(30) { format!("|{}", self.reg(Class::Pred)) } else { String::new() };
        let (a, b) = (self.reg(c), self.opnd(c));
        Some(if self.src.chance(35) {
            let bop = *self.src.pick(&["and", "or", "xor"]);
            let neg = if self.src.chance(30) { "!" } else { "" };
            let r = self.reg(Class::Pred);
            format!("setp.{cmp}.{bop}{ftz}.{ty} {p}{q}, {a}, {b}, {neg}{r};")
        } else {
            format!("setp.{cmp}{ftz}.{ty} {p}{q}, {a}, {b};")
        })
    }

    fn select(&mut self) -> Option<String> {
        let mut types = vec!["b32", "u32", "s32", "b64", "u64", "s64"];
        if self.f().floats {
            types.extend(["f32", "f64"]);
        }
        let ty = *self.src.pick(&types);
        let c = class_of(ty);
        let d = self.reg(c);
        let p = self.reg(Class::Pred);
        Some(format!("selp.{ty} {d}, {}, {}, {p};", self.opnd(c), self.opnd(c)))
    }

    fn mov(&mut self) -> Option<String> {
        Some(match self.src.below(7) {
            0 => {
                let (d, a) = (self.reg(Class::I32), self.opnd(Class::I32));
                format!("mov.u32 {d}, {a};")
            }
            1 => {
                let (d, a) = (self.reg(Class::I64), self.opnd(Class::I64));
                format!("mov.b64 {d}, {a};")
            }
            2 if self.f().floats => {
                // Bits into a float register (any pattern: signalling NaNs, subnormals).
                if self.src.chance(50) {
                    let (d, a) = (self.reg(Class::F32), self.reg(Class::I32));
                    format!("mov.b32 {d}, {a};")
                } else {
                    let (d, a) = (self.reg(Class::F64), self.reg(Class::I64));
                    format!("mov.b64 {d}, {a};")
                }
            }
            3 if self.f().floats => {
                // Float bits into an integer register, NaN made canonical (payloads are unspecified).
                if self.src.chance(50) {
                    let (d, a) = (self.reg(Class::I32), self.reg(Class::F32));
                    format!("setp.nan.f32 %pn, {a}, {a};\n\tmov.b32 {d}, {a};\n\t@%pn mov.b32 {d}, 0x7FFFFFFF;")
                } else {
                    let (d, a) = (self.reg(Class::I64), self.reg(Class::F64));
                    format!("setp.nan.f64 %pn, {a}, {a};\n\tmov.b64 {d}, {a};\n\t@%pn mov.b64 {d}, 0x7FFFFFFFFFFFFFFF;")
                }
            }
            4 => {
                let (d, a, b) = (self.reg(Class::I64), self.reg(Class::I32), self.reg(Class::I32));
                format!("mov.b64 {d}, {{{a}, {b}}};")
            }
            5 => {
                let (d, a, b) = (self.reg(Class::I64), self.reg(Class::I32), self.reg(Class::I32));
                if a == b {
                    return None;
                }
                format!("mov.b64 {{{a}, {b}}}, {d};")
            }
            _ if self.f().floats => {
                if self.src.chance(50) {
                    let d = self.reg(Class::F32);
                    format!("mov.f32 {d}, {};", self.opnd(Class::F32))
                } else {
                    let d = self.reg(Class::F64);
                    format!("mov.f64 {d}, {};", self.opnd(Class::F64))
                }
            }
            _ => return None,
        })
    }

    fn cvt(&mut self) -> Option<String> {
        const INTS: [&str; 8] = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"];
        let int_reg = |me: &mut Self, t: &str, dst: bool| -> String {
            let c = if t.ends_with("64") {
                Class::I64
            } else if dst && me.f().cvt_wide_destination && me.src.chance(20) {
                // Relaxed type checking: a wider destination register.
                Class::I64
            } else {
                Class::I32
            };
            me.reg(c)
        };
        // Whether the destination's value is sign-extended to a wider register.
        let extends = |me: &Self, t: &str, d: &str| {
            let reg_bits = if me.regs.iter().any(|r| r.name == d && r.class == Class::I64) { 64 } else { 32 };
            let ty_bits: u32 = t[1..].parse().unwrap_or(64);
            t.starts_with('s') && ty_bits < reg_bits
        };
        let irnd = *self.src.pick(&[".rni", ".rzi", ".rmi", ".rpi"]);
        let frnd = *self.src.pick(&[".rn", ".rz", ".rm", ".rp"]);
        let sat = if self.src.chance(25) { ".sat" } else { "" };
        let ftz = if self.src.chance(25) { ".ftz" } else { "" };
        let floats = self.f().floats;
        Some(match self.src.below(if floats { 6 } else { 1 }) {
            0 => {
                let dt = *self.src.pick(&INTS);
                let st = *self.src.pick(&INTS);
                if dt == st {
                    return None;
                }
                let d = int_reg(self, dt, true);
                if extends(self, dt, &d) && !self.f().cvt_sign_extension {
                    return None;
                }
                let a = int_reg(self, st, false);
                format!("cvt{sat}.{dt}.{st} {d}, {a};")
            }
            1 => {
                let dt = if self.src.chance(50) { "f32" } else { "f64" };
                let st = *self.src.pick(&INTS);
                let d = self.reg(class_of(dt));
                let a = int_reg(self, st, false);
                let sat = if self.src.chance(15) { ".sat" } else { "" };
                format!("cvt{frnd}{sat}.{dt}.{st} {d}, {a};")
            }
            2 => {
                let dt = *self.src.pick(&INTS);
                let st = if self.src.chance(50) { "f32" } else { "f64" };
                let ftz = if st == "f32" { ftz } else { "" };
                let d = int_reg(self, dt, true);
                // (`.s8`/`.s16` results from floats are fine: the JIT leaves those to the emulator's code.)
                if extends(self, dt, &d) && dt == "s32" && !self.f().cvt_sign_extension {
                    return None;
                }
                let a = self.reg(class_of(st));
                format!("cvt{irnd}{ftz}{sat}.{dt}.{st} {d}, {a};")
            }
            3 => {
                let (d, a) = (self.reg(Class::F32), self.reg(Class::F64));
                format!("cvt{frnd}{ftz}{sat}.f32.f64 {d}, {a};")
            }
            4 => {
                let (d, a) = (self.reg(Class::F64), self.reg(Class::F32));
                format!("cvt{ftz}{sat}.f64.f32 {d}, {a};")
            }
            _ if self.src.chance(20) => {
                // To tf32 (`.satfinite` with `.rn`/`.rz` is sm_100, past this kernel's target).
                let (d, a) = (self.reg(Class::I32), self.reg(Class::F32));
                match self.src.below(3) {
                    0 => {
                        let satfinite = if self.src.chance(50) { ".satfinite" } else { "" };
                        format!("cvt.rna{satfinite}.tf32.f32 {d}, {a};")
                    }
                    k => {
                        let rnd = if k == 1 { "rn" } else { "rz" };
                        let relu = if self.src.chance(50) { ".relu" } else { "" };
                        format!("cvt.{rnd}{relu}.tf32.f32 {d}, {a};")
                    }
                }
            }
            _ => {
                if self.src.chance(50) {
                    let (d, a) = (self.reg(Class::F32), self.reg(Class::F32));
                    let rnd = if ftz.is_empty() && sat.is_empty() || self.src.chance(60) { irnd } else { "" };
                    format!("cvt{rnd}{ftz}{sat}.f32.f32 {d}, {a};")
                } else {
                    let (d, a) = (self.reg(Class::F64), self.reg(Class::F64));
                    format!("cvt{irnd}{sat}.f64.f64 {d}, {a};")
                }
            }
        })
    }

    fn float(&mut self) -> Option<String> {
        let single = self.src.chance(60);
        let (ty, c) = if single { ("f32", Class::F32) } else { ("f64", Class::F64) };
        let d = self.reg(c);
        let rnd4 = *self.src.pick(&[".rn", ".rz", ".rm", ".rp"]);
        let rnd = if self.src.chance(40) { "" } else { rnd4 };
        let ftz = if single && self.src.chance(30) { ".ftz" } else { "" };
        let sat = if single && self.src.chance(20) { ".sat" } else { "" };
        Some(match self.src.below(11) {
            0..=2 => {
                let op = *self.src.pick(&["add", "sub", "mul"]);
                format!("{op}{rnd}{ftz}{sat}.{ty} {d}, {}, {};", self.reg(c), self.opnd(c))
            }
            3 => format!("fma{rnd4}{ftz}{sat}.{ty} {d}, {}, {}, {};", self.reg(c), self.opnd(c), self.opnd(c)),
            4 => format!("div{rnd4}{ftz}.{ty} {d}, {}, {};", self.reg(c), self.opnd(c)),
            5 => format!("sqrt{rnd4}{ftz}.{ty} {d}, {};", self.reg(c)),
            6 => format!("rcp{rnd4}{ftz}.{ty} {d}, {};", self.reg(c)),
            7 | 8 => {
                let op = if self.src.chance(50) { "min" } else { "max" };
                let nan = if single && self.src.chance(30) { ".NaN" } else { "" };
                format!("{op}{ftz}{nan}.{ty} {d}, {}, {};", self.reg(c), self.opnd(c))
            }
            _ => {
                let op = if self.src.chance(50) { "abs" } else { "neg" };
                format!("{op}{ftz}.{ty} {d}, {};", self.reg(c))
            }
        })
    }
}

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
