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

mod generate;
mod run;

pub use generate::*;
pub use run::*;
