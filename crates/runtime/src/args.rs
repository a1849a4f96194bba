//! Argument specs: the text form of kernel arguments (`lockstep run --arg SPEC`), parsed here so that tests
//! and other tools share one grammar.
//!
//! ```text
//! TYPE:VALUE        a scalar                     s32:1024  f32:2.5  u64:0x10  s8:-3  f64:-0.0  f32:inf  f32:nan
//! TYPE[N]:VALUE     a device buffer of N elements, every one VALUE              f32[1024]:1  u8[64]:0xff
//! TYPE[N]:iota      a device buffer holding 0, 1, 2, ... in TYPE (wrapping in narrow integer types)
//! TYPE[N]:@PATH     a device buffer with the raw little-endian bytes of PATH (exactly N × size bytes)
//! TYPE[]:@PATH      the same, N taken from the file (its length must be a multiple of the element size)
//! bytes:HEX         raw bytes for a by-value parameter (a struct): bytes:0100000002000000
//! bytes:@PATH       raw bytes from a file
//! ```
//!
//! TYPE is one of `u8 u16 u32 u64 s8 s16 s32 s64 f32 f64`. Integers are decimal, or hexadecimal (`0x`),
//! octal (`0o`) or binary (`0b`), optionally with a sign and `_` separators, and must fit the type; a
//! non-negative hexadecimal, octal or binary literal for a signed type is a bit pattern (`s8:0xff` is -1).
//! Floats are decimal (`2.5`, `1e-3`, `-0.0`), `inf`, `-inf`, `nan`, or exact bits as PTX writes them
//! (`f32:0f3F800000`, `f64:0d3FF0000000000000`); a finite literal too large for the type is an error.
//!
//! A buffer argument is passed to the kernel as a device pointer, so its parameter must be 8 bytes
//! (`.u64`/`.b64`). Parsing ([`ArgSpec::parse`]) does no I/O; [`ArgList::materialize`] reads files and
//! allocates buffers in a [`Runtime`].

use std::fmt;
use std::path::PathBuf;

use device::DevicePtr;

use crate::arg::Arg;
use crate::Runtime;

/// The element or scalar type of a spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F32,
    F64,
}

const TYPE_NAMES: &str = "u8 u16 u32 u64 s8 s16 s32 s64 f32 f64";

impl ElemType {
    pub const ALL: [ElemType; 10] = [
        ElemType::U8,
        ElemType::U16,
        ElemType::U32,
        ElemType::U64,
        ElemType::S8,
        ElemType::S16,
        ElemType::S32,
        ElemType::S64,
        ElemType::F32,
        ElemType::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::U16 => "u16",
            ElemType::U32 => "u32",
            ElemType::U64 => "u64",
            ElemType::S8 => "s8",
            ElemType::S16 => "s16",
            ElemType::S32 => "s32",
            ElemType::S64 => "s64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    pub fn from_name(name: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Bytes of one element.
    pub fn size(self) -> u64 {
        match self {
            ElemType::U8 | ElemType::S8 => 1,
            ElemType::U16 | ElemType::S16 => 2,
            ElemType::U32 | ElemType::S32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::S64 | ElemType::F64 => 8,
        }
    }

    fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    fn is_signed(self) -> bool {
        matches!(self, ElemType::S8 | ElemType::S16 | ElemType::S32 | ElemType::S64)
    }

    /// Parses a value of this type (see the module documentation for the accepted forms).
    pub fn parse_value(self, text: &str) -> Result<Arg, String> {
        match self {
            ElemType::F32 => parse_f32(text).map(Arg::F32),
            ElemType::F64 => parse_f64(text).map(Arg::F64),
            _ => {
                let v = parse_int(self, text)?;
                // `parse_int` has range-checked `v` for the type, so the casts below are exact.
                Ok(match self {
                    ElemType::U8 => Arg::U8(v as u8),
                    ElemType::U16 => Arg::U16(v as u16),
                    ElemType::U32 => Arg::U32(v as u32),
                    ElemType::U64 => Arg::U64(v as u64),
                    ElemType::S8 => Arg::S8(v as i8),
                    ElemType::S16 => Arg::S16(v as i16),
                    ElemType::S32 => Arg::S32(v as i32),
                    _ => Arg::S64(v as i64),
                })
            }
        }
    }

    /// The little-endian bytes of `0, 1, ..., n-1` in this type (wrapping in narrow integer types).
    pub fn iota(self, n: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity((n * self.size()) as usize);
        for i in 0..n {
            match self {
                ElemType::F32 => out.extend_from_slice(&(i as f32).to_le_bytes()),
                ElemType::F64 => out.extend_from_slice(&(i as f64).to_le_bytes()),
                _ => out.extend_from_slice(&i.to_le_bytes()[..self.size() as usize]),
            }
        }
        out
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses an integer literal of type `ty` into an `i128` that fits it (for a signed type, a radix literal
/// is first read as a bit pattern).
fn parse_int(ty: ElemType, text: &str) -> Result<i128, String> {
    let bad = || {
        format!("`{text}` is not a {ty} number (decimal, or 0x hexadecimal, 0o octal or 0b binary, optionally signed)")
    };
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    let (negative, rest) = match cleaned.as_bytes().first() {
        Some(b'-') => (true, &cleaned[1..]),
        Some(b'+') => (false, &cleaned[1..]),
        _ => (false, cleaned.as_str()),
    };
    let lower = rest.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(bad());
    }
    let out_of_range = || format!("{text} is out of range for {ty}");
    let magnitude = u128::from_str_radix(digits, radix).map_err(|_| out_of_range())?;
    let bits = ty.bits();
    if !ty.is_signed() {
        if negative && magnitude != 0 {
            return Err(format!("{text} is negative; {ty} is unsigned"));
        }
        if magnitude >> bits != 0 {
            return Err(out_of_range());
        }
        return Ok(magnitude as i128);
    }
    let max = (1u128 << (bits - 1)) - 1;
    if negative {
        if magnitude > max + 1 {
            return Err(out_of_range());
        }
        return Ok(-(magnitude as i128));
    }
    if magnitude <= max {
        return Ok(magnitude as i128);
    }
    if radix != 10 && magnitude >> bits == 0 {
        // A bit pattern: reinterpret as two's complement.
        return Ok(magnitude as i128 - (1i128 << bits));
    }
    Err(out_of_range())
}

fn float_error(ty: &str, text: &str, bits_example: &str) -> String {
    format!("`{text}` is not a {ty} number (decimal like 2.5, 1e-3 or -0.0, inf, nan, or bits as {bits_example})")
}

fn is_infinity_literal(text: &str) -> bool {
    let t = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    t == "inf" || t == "infinity"
}

fn parse_f32(text: &str) -> Result<f32, String> {
    let lower = text.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0f") {
        if hex.len() == 8 {
            if let Ok(bits) = u32::from_str_radix(hex, 16) {
                return Ok(f32::from_bits(bits));
            }
        }
        return Err(float_error("f32", text, "0f3F800000"));
    }
    let v: f32 = text.parse().map_err(|_| float_error("f32", text, "0f3F800000"))?;
    if v.is_infinite() && !is_infinity_literal(text) {
        return Err(format!("{text} is out of range for f32"));
    }
    Ok(v)
}

fn parse_f64(text: &str) -> Result<f64, String> {
    let lower = text.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0d") {
        if hex.len() == 16 {
            if let Ok(bits) = u64::from_str_radix(hex, 16) {
                return Ok(f64::from_bits(bits));
            }
        }
        return Err(float_error("f64", text, "0d3FF0000000000000"));
    }
    let v: f64 = text.parse().map_err(|_| float_error("f64", text, "0d3FF0000000000000"))?;
    if v.is_infinite() && !is_infinity_literal(text) {
        return Err(format!("{text} is out of range for f64"));
    }
    Ok(v)
}

/// How a device buffer is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum BufferInit {
    /// Every element this value (of the buffer's type).
    Fill(Arg),
    /// 0, 1, 2, ... in the buffer's type.
    Iota,
    /// The raw bytes of a file.
    File(PathBuf),
}

/// A device buffer argument.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferSpec {
    pub elem: ElemType,
    /// Number of elements; `None` (`TYPE[]`) takes it from the file.
    pub len: Option<u64>,
    pub init: BufferInit,
}

/// Where the bytes of a `bytes:` argument come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BytesSource {
    Literal(Vec<u8>),
    File(PathBuf),
}

/// One parsed argument spec.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    Scalar(Arg),
    Bytes(BytesSource),
    Buffer(BufferSpec),
}

impl ArgSpec {
    /// Parses one spec (no I/O: files named by `@PATH` are read by [`ArgList::materialize`]).
    pub fn parse(spec: &str) -> Result<ArgSpec, String> {
        let Some((head, value)) = spec.split_once(':') else {
            return Err(format!(
                "expected TYPE:VALUE, TYPE[N]:INIT or bytes:HEX (TYPE is one of {TYPE_NAMES}), e.g. s32:1024 or \
                 f32[256]:iota"
            ));
        };
        let head = head.trim();
        if head == "bytes" {
            return parse_bytes_spec(value).map(ArgSpec::Bytes);
        }
        let (name, dims) = match head.split_once('[') {
            Some((name, rest)) => {
                let Some(dims) = rest.strip_suffix(']') else {
                    return Err(format!("`{head}` is missing its closing `]`"));
                };
                (name, Some(dims))
            }
            None => (head, None),
        };
        let elem = ElemType::from_name(name).ok_or_else(|| {
            if name.is_empty() {
                format!("missing type before `:`; types: {TYPE_NAMES}")
            } else {
                format!("unknown type `{name}`; types: {TYPE_NAMES} (or bytes)")
            }
        })?;
        let Some(dims) = dims else {
            if value.starts_with('@') {
                return Err(format!("a file gives a buffer; write {elem}[N]:{value} or {elem}[]:{value}"));
            }
            return elem.parse_value(value).map(ArgSpec::Scalar);
        };
        let len = match dims.trim() {
            "" => None,
            n => Some(parse_int(ElemType::U64, n).map_err(|_| format!("`{n}` is not an element count"))? as u64),
        };
        let init = if let Some(path) = value.strip_prefix('@') {
            if path.is_empty() {
                return Err("`@` must be followed by a file path".to_string());
            }
            BufferInit::File(PathBuf::from(path))
        } else if len.is_none() {
            return Err(format!("`{elem}[]` takes its length from a file (`{elem}[]:@PATH`); give N for `{value}`"));
        } else if value == "iota" {
            BufferInit::Iota
        } else if value.is_empty() {
            return Err(format!("missing initial value; e.g. {elem}[{}]:0 or :iota or :@PATH", len.unwrap_or(0)));
        } else {
            BufferInit::Fill(elem.parse_value(value)?)
        };
        if let Some(n) = len {
            if n.checked_mul(elem.size()).is_none_or(|b| b > isize::MAX as u64) {
                return Err(format!("{n} elements of {elem} are too many bytes"));
            }
        }
        Ok(ArgSpec::Buffer(BufferSpec { elem, len, init }))
    }
}

fn parse_bytes_spec(value: &str) -> Result<BytesSource, String> {
    if let Some(path) = value.strip_prefix('@') {
        if path.is_empty() {
            return Err("`@` must be followed by a file path".to_string());
        }
        return Ok(BytesSource::File(PathBuf::from(path)));
    }
    let hex: String = value.chars().filter(|&c| c != '_').collect();
    let hex = hex.strip_prefix("0x").unwrap_or(&hex);
    if hex.is_empty() || hex.len() % 2 == 1 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "`{value}` is not an even number of hexadecimal digits (bytes in memory order, e.g. bytes:01000000)"
        ));
    }
    let bytes = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0)).collect();
    Ok(BytesSource::Literal(bytes))
}

/// A spec failed to parse or to materialize; names the argument by index and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgError {
    /// Position of the argument, counting from 0.
    pub index: usize,
    /// The spec as written.
    pub spec: String,
    pub message: String,
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--arg {} (`{}`): {}", self.index, self.spec, self.message)
    }
}

impl std::error::Error for ArgError {}

/// A device buffer made for an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub ptr: DevicePtr,
    pub elem: ElemType,
    /// Number of elements.
    pub len: u64,
}

impl Buffer {
    pub fn bytes(&self) -> u64 {
        self.len * self.elem.size()
    }
}

/// Parsed specs, in order, with the text each came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArgList {
    pub specs: Vec<(String, ArgSpec)>,
}

/// Specs turned into kernel arguments: scalars as they are, buffers allocated and filled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PreparedArgs {
    pub args: Vec<Arg>,
    /// For each argument, its buffer if it is one.
    pub buffers: Vec<Option<Buffer>>,
    /// Each argument's spec as written.
    pub specs: Vec<String>,
}

impl PreparedArgs {
    /// The buffer of argument `index`, or why there is none.
    pub fn buffer(&self, index: usize) -> Result<Buffer, String> {
        match self.buffers.get(index) {
            Some(Some(b)) => Ok(*b),
            Some(None) => Err(format!("argument {index} (`{}`) is not a device buffer", self.specs[index])),
            None => Err(format!("there is no argument {index} ({} given)", self.args.len())),
        }
    }
}

impl ArgList {
    /// Parses every spec; the first error names its argument.
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<ArgList, ArgError> {
        let mut out = Vec::with_capacity(specs.len());
        for (index, spec) in specs.iter().enumerate() {
            let spec = spec.as_ref();
            let parsed = ArgSpec::parse(spec).map_err(|message| ArgError { index, spec: spec.to_string(), message })?;
            out.push((spec.to_string(), parsed));
        }
        Ok(ArgList { specs: out })
    }

    /// Reads the files the specs name and allocates and fills their buffers in `runtime`. Each buffer is
    /// labelled with its argument (`--arg 2 (f32[1024])`), so out-of-bounds errors name it.
    pub fn materialize(&self, runtime: &mut Runtime) -> Result<PreparedArgs, ArgError> {
        let mut prepared = PreparedArgs::default();
        for (index, (text, spec)) in self.specs.iter().enumerate() {
            let fail = |message: String| ArgError { index, spec: text.clone(), message };
            let (arg, buffer) = match spec {
                ArgSpec::Scalar(a) => (a.clone(), None),
                ArgSpec::Bytes(BytesSource::Literal(b)) => (Arg::Bytes(b.clone()), None),
                ArgSpec::Bytes(BytesSource::File(path)) => (Arg::Bytes(read_file(path).map_err(fail)?), None),
                ArgSpec::Buffer(b) => {
                    if let Some(n) = b.len {
                        runtime.check_allocation(n * b.elem.size()).map_err(|e| fail(e.to_string()))?;
                    }
                    let data = buffer_bytes(b).map_err(fail)?;
                    let label = format!("--arg {index} ({})", text.split(':').next().unwrap_or(text));
                    let ptr = runtime.alloc_from_labeled(&data, label).map_err(|e| fail(e.to_string()))?;
                    let len = data.len() as u64 / b.elem.size();
                    (Arg::Ptr(ptr), Some(Buffer { ptr, elem: b.elem, len }))
                }
            };
            prepared.args.push(arg);
            prepared.buffers.push(buffer);
            prepared.specs.push(text.clone());
        }
        Ok(prepared)
    }
}

fn read_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The initial bytes of a buffer.
fn buffer_bytes(spec: &BufferSpec) -> Result<Vec<u8>, String> {
    let size = spec.elem.size();
    match (&spec.init, spec.len) {
        (BufferInit::File(path), len) => {
            let data = read_file(path)?;
            let got = data.len() as u64;
            match len {
                Some(n) if got != n * size => Err(format!("file has {got} bytes, expected {}", n * size)),
                None if got / size * size != got => {
                    Err(format!("file has {got} bytes, not a multiple of the {size}-byte size of {}", spec.elem))
                }
                _ => Ok(data),
            }
        }
        (BufferInit::Iota, Some(n)) => Ok(spec.elem.iota(n)),
        (BufferInit::Fill(value), Some(n)) => Ok(value.to_bytes().repeat(n as usize)),
        (_, None) => Err("a buffer without a length needs a file".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(spec: &str) -> Arg {
        match ArgSpec::parse(spec) {
            Ok(ArgSpec::Scalar(a)) => a,
            other => panic!("{spec}: {other:?}"),
        }
    }

    fn err(spec: &str) -> String {
        ArgSpec::parse(spec).expect_err(spec)
    }

    #[test]
    fn every_integer_type_and_its_bounds() {
        assert_eq!(scalar("u8:0"), Arg::U8(0));
        assert_eq!(scalar("u8:255"), Arg::U8(255));
        assert_eq!(scalar("u16:65535"), Arg::U16(65535));
        assert_eq!(scalar("u32:4294967295"), Arg::U32(u32::MAX));
        assert_eq!(scalar("u64:18446744073709551615"), Arg::U64(u64::MAX));
        assert_eq!(scalar("s8:-128"), Arg::S8(-128));
        assert_eq!(scalar("s8:127"), Arg::S8(127));
        assert_eq!(scalar("s16:-32768"), Arg::S16(i16::MIN));
        assert_eq!(scalar("s32:1024"), Arg::S32(1024));
        assert_eq!(scalar("s32:-2147483648"), Arg::S32(i32::MIN));
        assert_eq!(scalar("s64:-9223372036854775808"), Arg::S64(i64::MIN));
        assert_eq!(scalar("s64:9223372036854775807"), Arg::S64(i64::MAX));
        assert_eq!(scalar("u32:+7"), Arg::U32(7));
        assert_eq!(scalar("u32:1_000_000"), Arg::U32(1_000_000));
        assert_eq!(scalar("u8:-0"), Arg::U8(0));
    }

    #[test]
    fn radix_literals() {
        assert_eq!(scalar("u64:0x10"), Arg::U64(16));
        assert_eq!(scalar("u32:0XfF"), Arg::U32(255));
        assert_eq!(scalar("u16:0o17"), Arg::U16(15));
        assert_eq!(scalar("u8:0b1010"), Arg::U8(10));
        assert_eq!(scalar("s32:-0x10"), Arg::S32(-16));
        // Non-negative radix literals for signed types are bit patterns.
        assert_eq!(scalar("s8:0xff"), Arg::S8(-1));
        assert_eq!(scalar("s8:0x80"), Arg::S8(-128));
        assert_eq!(scalar("s32:0xffffffff"), Arg::S32(-1));
        assert_eq!(scalar("s64:0x8000000000000000"), Arg::S64(i64::MIN));
    }

    #[test]
    fn integers_out_of_range_or_malformed() {
        assert_eq!(err("u8:300"), "300 is out of range for u8");
        assert_eq!(err("u8:256"), "256 is out of range for u8");
        assert_eq!(err("u16:0x10000"), "0x10000 is out of range for u16");
        assert_eq!(err("u32:-1"), "-1 is negative; u32 is unsigned");
        assert_eq!(err("s8:128"), "128 is out of range for s8");
        assert_eq!(err("s8:-129"), "-129 is out of range for s8");
        assert_eq!(err("s8:0x100"), "0x100 is out of range for s8");
        assert_eq!(err("s8:-0xff"), "-0xff is out of range for s8");
        assert_eq!(err("u64:18446744073709551616"), "18446744073709551616 is out of range for u64");
        assert_eq!(
            err("u64:999999999999999999999999999999999999999999"),
            "999999999999999999999999999999999999999999 is out of range for u64"
        );
        for bad in ["s32:", "s32:abc", "s32:1.5", "s32:0x", "s32:--1", "u8:0b2", "s32: 1"] {
            assert!(
                err(bad).contains("is not a s32 number") || err(bad).contains("is not a u8 number"),
                "{bad}: {}",
                err(bad)
            );
        }
    }

    #[test]
    fn floats() {
        assert_eq!(scalar("f32:2.5"), Arg::F32(2.5));
        assert_eq!(scalar("f32:1"), Arg::F32(1.0));
        assert_eq!(scalar("f32:-1e-3"), Arg::F32(-1e-3));
        assert_eq!(scalar("f64:2.5"), Arg::F64(2.5));
        let Arg::F32(z) = scalar("f32:-0.0") else { panic!() };
        assert!(z == 0.0 && z.is_sign_negative());
        let Arg::F64(z) = scalar("f64:-0.0") else { panic!() };
        assert!(z == 0.0 && z.is_sign_negative());
        assert_eq!(scalar("f32:inf"), Arg::F32(f32::INFINITY));
        assert_eq!(scalar("f32:-inf"), Arg::F32(f32::NEG_INFINITY));
        assert_eq!(scalar("f64:infinity"), Arg::F64(f64::INFINITY));
        assert!(matches!(scalar("f32:nan"), Arg::F32(x) if x.is_nan()));
        assert!(matches!(scalar("f64:NaN"), Arg::F64(x) if x.is_nan()));
        assert_eq!(scalar("f32:0f3F800000"), Arg::F32(1.0));
        assert_eq!(scalar("f64:0d4000000000000000"), Arg::F64(2.0));
        // Subnormals are fine; only overflow is refused.
        assert!(matches!(scalar("f32:1e-40"), Arg::F32(x) if x > 0.0));
    }

    #[test]
    fn floats_out_of_range_or_malformed() {
        assert_eq!(err("f32:1e39"), "1e39 is out of range for f32");
        assert_eq!(err("f64:1e309"), "1e309 is out of range for f64");
        assert!(err("f32:abc").starts_with("`abc` is not a f32 number"));
        assert!(err("f32:0x10").starts_with("`0x10` is not a f32 number"));
        assert!(err("f32:0f3F80").contains("0f3F800000"));
        assert!(err("f64:").starts_with("`` is not a f64 number"));
    }

    #[test]
    fn spec_shape_errors() {
        assert!(err("1024").starts_with("expected TYPE:VALUE"));
        assert!(err("i32:5").starts_with("unknown type `i32`"));
        assert!(err(":5").starts_with("missing type"));
        assert!(err("f32[10:1").contains("missing its closing `]`"));
        assert!(err("f32[x]:1").contains("`x` is not an element count"));
        assert!(err("f32[]:1").contains("takes its length from a file"));
        assert!(err("f32[4]:").contains("missing initial value"));
        assert!(err("f32[4]:@").contains("must be followed by a file path"));
        assert!(err("f32:@x.bin").contains("f32[N]:@x.bin"));
        assert_eq!(err("u8[4]:300"), "300 is out of range for u8");
        assert!(err("u64[0x2000000000000000]:0").contains("too many bytes"));
    }

    #[test]
    fn buffers() {
        let spec = ArgSpec::parse("f32[1024]:iota").unwrap();
        assert_eq!(spec, ArgSpec::Buffer(BufferSpec { elem: ElemType::F32, len: Some(1024), init: BufferInit::Iota }));
        let spec = ArgSpec::parse("s16[3]:-2").unwrap();
        assert_eq!(
            spec,
            ArgSpec::Buffer(BufferSpec { elem: ElemType::S16, len: Some(3), init: BufferInit::Fill(Arg::S16(-2)) })
        );
        let spec = ArgSpec::parse("u8[]:@data/x.bin").unwrap();
        assert_eq!(
            spec,
            ArgSpec::Buffer(BufferSpec { elem: ElemType::U8, len: None, init: BufferInit::File("data/x.bin".into()) })
        );
        assert_eq!(
            ArgSpec::parse("f64[0x10]:@x").unwrap(),
            ArgSpec::Buffer(BufferSpec { elem: ElemType::F64, len: Some(16), init: BufferInit::File("x".into()) })
        );
    }

    #[test]
    fn iota_in_every_type() {
        assert_eq!(ElemType::U8.iota(3), vec![0, 1, 2]);
        assert_eq!(ElemType::U8.iota(258)[256..], [0, 1]);
        assert_eq!(ElemType::S16.iota(2), vec![0, 0, 1, 0]);
        assert_eq!(ElemType::U32.iota(2), vec![0, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(ElemType::U64.iota(2)[8..], 1u64.to_le_bytes());
        assert_eq!(ElemType::F32.iota(3)[8..], 2.0f32.to_le_bytes());
        assert_eq!(ElemType::F64.iota(2)[8..], 1.0f64.to_le_bytes());
        for t in ElemType::ALL {
            assert_eq!(t.iota(5).len() as u64, 5 * t.size(), "{t}");
            assert_eq!(ElemType::from_name(t.name()), Some(t));
        }
    }

    #[test]
    fn raw_bytes() {
        assert_eq!(ArgSpec::parse("bytes:0100ff").unwrap(), ArgSpec::Bytes(BytesSource::Literal(vec![1, 0, 255])));
        assert_eq!(ArgSpec::parse("bytes:0x01_02").unwrap(), ArgSpec::Bytes(BytesSource::Literal(vec![1, 2])));
        assert_eq!(ArgSpec::parse("bytes:@s.bin").unwrap(), ArgSpec::Bytes(BytesSource::File("s.bin".into())));
        assert!(err("bytes:123").contains("even number of hexadecimal digits"));
        assert!(err("bytes:zz").contains("even number of hexadecimal digits"));
    }

    #[test]
    fn arg_list_errors_name_the_argument() {
        let e = ArgList::parse(&["s32:1", "f32:2", "u8:300"]).unwrap_err();
        assert_eq!(e.index, 2);
        assert_eq!(e.to_string(), "--arg 2 (`u8:300`): 300 is out of range for u8");
    }

    #[test]
    fn fill_and_file_bytes() {
        let fill = BufferSpec { elem: ElemType::U16, len: Some(3), init: BufferInit::Fill(Arg::U16(0x0102)) };
        assert_eq!(buffer_bytes(&fill).unwrap(), vec![2, 1, 2, 1, 2, 1]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        std::fs::write(&path, [0u8; 12]).unwrap();
        let exact = BufferSpec { elem: ElemType::F32, len: Some(3), init: BufferInit::File(path.clone()) };
        assert_eq!(buffer_bytes(&exact).unwrap().len(), 12);
        let wrong = BufferSpec { elem: ElemType::F32, len: Some(10), init: BufferInit::File(path.clone()) };
        assert_eq!(buffer_bytes(&wrong).unwrap_err(), "file has 12 bytes, expected 40");
        let open = BufferSpec { elem: ElemType::U32, len: None, init: BufferInit::File(path.clone()) };
        assert_eq!(buffer_bytes(&open).unwrap().len(), 12);
        let odd = BufferSpec { elem: ElemType::F64, len: None, init: BufferInit::File(path.clone()) };
        assert_eq!(buffer_bytes(&odd).unwrap_err(), "file has 12 bytes, not a multiple of the 8-byte size of f64");
        let missing = BufferSpec { elem: ElemType::F64, len: None, init: BufferInit::File(dir.path().join("none")) };
        assert!(buffer_bytes(&missing).unwrap_err().starts_with("cannot read "));
    }
}
