//! Expected buffer contents and the rules for comparing them with what a kernel wrote.

use std::fmt::Write as _;

use crate::data::{from_bytes, Elem};
use crate::fp;

/// Expected contents of one buffer, typed so that mismatches print readably and floats can be compared with
/// a tolerance.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    /// f16 bit patterns.
    F16(Vec<u16>),
    /// bf16 bit patterns.
    BF16(Vec<u16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// A property of the whole buffer that no fixed expected contents can express (the old values of
    /// contended atomics form a permutation, ...): the callback gets the buffer's bytes.
    Custom(Custom),
}

/// A check written as code over everything a launch produced; `Err` says what is wrong.
pub type CustomFn = dyn Fn(&crate::runner::Output) -> Result<(), String> + Send + Sync;

/// A [`CustomFn`], shareable.
#[derive(Clone)]
pub struct Custom(pub std::sync::Arc<CustomFn>);

impl std::fmt::Debug for Custom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Custom(..)")
    }
}

impl PartialEq for Custom {
    fn eq(&self, other: &Custom) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::I8(v) => v.len(),
            Values::U8(v) => v.len(),
            Values::I16(v) => v.len(),
            Values::U16(v) | Values::F16(v) | Values::BF16(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Custom(_) => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn elem_size(&self) -> usize {
        match self {
            Values::I8(_) | Values::U8(_) | Values::Custom(_) => 1,
            Values::I16(_) | Values::U16(_) | Values::F16(_) | Values::BF16(_) => 2,
            Values::I32(_) | Values::U32(_) | Values::F32(_) => 4,
            Values::I64(_) | Values::U64(_) | Values::F64(_) => 8,
        }
    }
}

/// How one element is compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Tol {
    /// Bit-identical; for floats any NaN matches any NaN (PTX produces the canonical NaN `0x7fffffff`, the
    /// reference whatever Rust produces: payloads are not compared).
    Exact,
    /// Floats: at most this many units in the last place apart (in the buffer's own format); infinities and
    /// NaN must match.
    Ulp(u64),
    /// Floats: `|actual - expected| <= eps * |expected|`.
    Rel(f64),
    /// Floats: `|actual - expected| <= eps`.
    Abs(f64),
    /// Floats: `|actual - expected| <= abs + rel * |expected|`.
    RelAbs { rel: f64, abs: f64 },
    /// Any of these values is right (a read that races with another thread's write, where either order is
    /// allowed); integers compare as `i64` (unsigned values by their bits), floats by value.
    AnyOf(Vec<i64>),
    /// Floats: any of these values is right (as [`Tol::AnyOf`]).
    AnyOfFloat(Vec<f64>),
    /// Not compared; the string says why (e.g. a clock value).
    Ignore(&'static str),
}

/// Which tolerance applies to which element.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// The same for every element.
    All(Tol),
    /// Element `i` uses `tols[i % tols.len()]` (buffers laid out as `out[stride * i + k]`).
    Columns(Vec<Tol>),
    /// One tolerance per element.
    Each(Vec<Tol>),
}

impl Rule {
    fn tol(&self, i: usize) -> &Tol {
        match self {
            Rule::All(t) => t,
            Rule::Columns(ts) => &ts[i % ts.len()],
            Rule::Each(ts) => ts.get(i).unwrap_or(&Tol::Exact),
        }
    }
}

/// One expectation: buffer argument `arg` (or a module variable) must hold `expected` (a prefix of the buffer
/// when `expected` is shorter), compared element-wise by `rule`.
#[derive(Clone, Debug)]
pub struct Check {
    pub target: Target,
    pub label: String,
    pub expected: Values,
    pub rule: Rule,
}

/// What a [`Check`] looks at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The buffer passed as the kernel's parameter with this index.
    Arg(usize),
    /// A module-scope variable, read back after the launch.
    Symbol(String),
    /// The device `printf` output (expected as [`Values::U8`] text).
    Stdout,
}

impl Check {
    pub fn new(arg: usize, label: impl Into<String>, expected: Values, rule: Rule) -> Check {
        Check { target: Target::Arg(arg), label: label.into(), expected, rule }
    }

    pub fn exact(arg: usize, label: impl Into<String>, expected: Values) -> Check {
        Check::new(arg, label, expected, Rule::All(Tol::Exact))
    }

    pub fn symbol(name: &str, expected: Values, rule: Rule) -> Check {
        Check { target: Target::Symbol(name.to_string()), label: name.to_string(), expected, rule }
    }

    /// Buffer argument `arg` must satisfy `f`.
    pub fn custom(
        arg: usize,
        label: impl Into<String>,
        f: impl Fn(&[u8]) -> Result<(), String> + Send + Sync + 'static,
    ) -> Check {
        let f = Custom(std::sync::Arc::new(move |out: &crate::runner::Output| f(out.buffer(arg))));
        Check {
            target: Target::Arg(arg),
            label: label.into(),
            expected: Values::Custom(f),
            rule: Rule::All(Tol::Exact),
        }
    }

    /// The launch's whole output (several buffers together) must satisfy `f`.
    pub fn output(
        label: impl Into<String>,
        f: impl Fn(&crate::runner::Output) -> Result<(), String> + Send + Sync + 'static,
    ) -> Check {
        Check {
            target: Target::Arg(usize::MAX),
            label: label.into(),
            expected: Values::Custom(Custom(std::sync::Arc::new(f))),
            rule: Rule::All(Tol::Exact),
        }
    }

    /// The printf output must be exactly `text`.
    pub fn stdout(text: &str) -> Check {
        Check {
            target: Target::Stdout,
            label: "printf".to_string(),
            expected: Values::U8(text.as_bytes().to_vec()),
            rule: Rule::All(Tol::Exact),
        }
    }
}

fn within(actual: f64, expected: f64, tol: &Tol, ulps: impl Fn() -> u64) -> bool {
    if matches!(tol, Tol::Ignore(_)) {
        return true;
    }
    if actual.is_nan() || expected.is_nan() {
        return actual.is_nan() && expected.is_nan();
    }
    if actual.is_infinite() || expected.is_infinite() {
        return actual == expected;
    }
    match *tol {
        Tol::Exact => actual.to_bits() == expected.to_bits(),
        Tol::Ulp(n) => ulps() <= n,
        Tol::Rel(eps) => (actual - expected).abs() <= eps * expected.abs(),
        Tol::Abs(eps) => (actual - expected).abs() <= eps,
        Tol::RelAbs { rel, abs } => (actual - expected).abs() <= abs + rel * expected.abs(),
        Tol::AnyOfFloat(ref vals) => actual.to_bits() == expected.to_bits() || vals.contains(&actual),
        Tol::AnyOf(ref vals) => actual.to_bits() == expected.to_bits() || vals.iter().any(|&v| v as f64 == actual),
        Tol::Ignore(_) => true,
    }
}

/// Evaluates a check against a launch's output.
pub fn evaluate(check: &Check, out: &crate::runner::Output) -> Result<(), String> {
    if let Values::Custom(f) = &check.expected {
        return (f.0)(out).map_err(|e| format!("{}: {e}", check.label));
    }
    let actual: &[u8] = match &check.target {
        Target::Arg(i) => out.buffer(*i),
        Target::Symbol(name) => {
            out.symbol(name).ok_or_else(|| format!("{}: module variable not read back", check.label))?
        }
        Target::Stdout => {
            return match &check.expected {
                Values::U8(text) if out.stdout == *text => Ok(()),
                Values::U8(text) => Err(format!(
                    "printf output differs:\n--- actual\n{}--- expected\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(text)
                )),
                _ => Err("printf output: expected text must be Values::U8".to_string()),
            };
        }
    };
    compare(check, actual)
}

/// Compares `actual` (raw bytes) with the expectation; `Err` lists the first mismatches.
pub fn compare(check: &Check, actual: &[u8]) -> Result<(), String> {
    let need = check.expected.len() * check.expected.elem_size();
    if actual.len() < need {
        return Err(format!("{}: buffer has {} bytes, expected at least {need}", check.label, actual.len()));
    }
    let mut bad = Vec::new();
    let mut count = 0usize;
    let mut note = |i: usize, a: String, e: String, tol: &Tol| {
        count += 1;
        if bad.len() < 12 {
            bad.push(format!("  [{i}] actual {a}, expected {e} ({tol:?})"));
        }
    };
    macro_rules! ints {
        ($v:expr, $t:ty, $hex:literal) => {{
            let got = from_bytes::<$t>(actual);
            for (i, (&a, &e)) in got.iter().zip($v.iter()).enumerate() {
                let tol = check.rule.tol(i);
                if matches!(tol, Tol::Ignore(_)) {
                    continue;
                }
                let alt = matches!(tol, Tol::AnyOf(vals) if vals.contains(&(a as i64)));
                if a != e && !alt {
                    note(i, format!(concat!("{} (", $hex, ")"), a, a), format!(concat!("{} (", $hex, ")"), e, e), tol);
                }
            }
        }};
    }
    match &check.expected {
        Values::Custom(_) => {
            return Err(format!("{}: a custom check needs the whole output (see case::evaluate)", check.label))
        }
        Values::I8(v) => ints!(v, i8, "{:#04x}"),
        Values::U8(v) => ints!(v, u8, "{:#04x}"),
        Values::I16(v) => ints!(v, i16, "{:#06x}"),
        Values::U16(v) => ints!(v, u16, "{:#06x}"),
        Values::I32(v) => ints!(v, i32, "{:#010x}"),
        Values::U32(v) => ints!(v, u32, "{:#010x}"),
        Values::I64(v) => ints!(v, i64, "{:#018x}"),
        Values::U64(v) => ints!(v, u64, "{:#018x}"),
        Values::F32(v) => {
            let got = from_bytes::<f32>(actual);
            for (i, (&a, &e)) in got.iter().zip(v.iter()).enumerate() {
                let tol = check.rule.tol(i);
                if !within(f64::from(a), f64::from(e), tol, || fp::ulp_diff_f32(a, e)) {
                    note(i, format!("{a:e} ({:#010x})", a.to_bits()), format!("{e:e} ({:#010x})", e.to_bits()), tol);
                }
            }
        }
        Values::F64(v) => {
            let got = from_bytes::<f64>(actual);
            for (i, (&a, &e)) in got.iter().zip(v.iter()).enumerate() {
                let tol = check.rule.tol(i);
                if !within(a, e, tol, || fp::ulp_diff_f64(a, e)) {
                    note(i, format!("{a:e} ({:#018x})", a.to_bits()), format!("{e:e} ({:#018x})", e.to_bits()), tol);
                }
            }
        }
        Values::F16(v) | Values::BF16(v) => {
            let half = matches!(check.expected, Values::F16(_));
            let value: fn(u16) -> f64 = if half { fp::f16_to_f64 } else { fp::bf16_to_f64 };
            let is_nan: fn(u16) -> bool = if half { fp::f16_is_nan } else { fp::bf16_is_nan };
            let got = from_bytes::<u16>(actual);
            for (i, (&a, &e)) in got.iter().zip(v.iter()).enumerate() {
                let tol = check.rule.tol(i);
                let ok = match tol {
                    Tol::Exact => a == e || (is_nan(a) && is_nan(e)),
                    _ => within(value(a), value(e), tol, || fp::ulp_diff_16(a, e, is_nan)),
                };
                if !ok {
                    note(i, format!("{} ({a:#06x})", value(a)), format!("{} ({e:#06x})", value(e)), tol);
                }
            }
        }
    }
    if count == 0 {
        Ok(())
    } else {
        let mut msg = format!("{}: {count} of {} elements differ", check.label, check.expected.len());
        for line in bad {
            let _ = write!(msg, "\n{line}");
        }
        Err(msg)
    }
}

/// Shorthands for building [`Values`].
pub fn i32s(v: Vec<i32>) -> Values {
    Values::I32(v)
}

pub fn u32s(v: Vec<u32>) -> Values {
    Values::U32(v)
}

pub fn f32s(v: Vec<f32>) -> Values {
    Values::F32(v)
}

pub fn f64s(v: Vec<f64>) -> Values {
    Values::F64(v)
}

/// Reads typed elements out of raw bytes (re-exported for tests that look at outputs themselves).
pub fn read<T: Elem>(bytes: &[u8]) -> Vec<T> {
    from_bytes(bytes)
}
