//! The generator: random kernels from a source of choices.

use super::*;

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
