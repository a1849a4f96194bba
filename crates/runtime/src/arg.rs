//! Kernel arguments as a host passes them, and how each is checked against its `.param` and stored in the
//! parameter buffer.

use std::fmt;

use device::DevicePtr;
use ir::{Param, ScalarType};

/// One kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    S8(i8),
    S16(i16),
    S32(i32),
    S64(i64),
    F32(f32),
    F64(f64),
    /// Raw little-endian bytes (a struct passed by value, or any value whose type the caller chose); only
    /// the size is checked.
    Bytes(Vec<u8>),
    /// A device pointer; the parameter must be an 8-byte integer (`.u64`, `.s64` or `.b64`).
    Ptr(DevicePtr),
}

/// What kind of value an [`Arg`] holds, for checking it against a parameter's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Int,
    Float,
    Raw,
    Pointer,
}

impl Arg {
    /// The little-endian bytes stored in the parameter buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Arg::U8(v) => v.to_le_bytes().to_vec(),
            Arg::U16(v) => v.to_le_bytes().to_vec(),
            Arg::U32(v) => v.to_le_bytes().to_vec(),
            Arg::U64(v) => v.to_le_bytes().to_vec(),
            Arg::S8(v) => v.to_le_bytes().to_vec(),
            Arg::S16(v) => v.to_le_bytes().to_vec(),
            Arg::S32(v) => v.to_le_bytes().to_vec(),
            Arg::S64(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
            Arg::Bytes(b) => b.clone(),
            Arg::Ptr(p) => p.to_le_bytes().to_vec(),
        }
    }

    /// The PTX-style name of the value's type (`u32`, `f64`, `pointer`, `bytes`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Arg::U8(_) => "u8",
            Arg::U16(_) => "u16",
            Arg::U32(_) => "u32",
            Arg::U64(_) => "u64",
            Arg::S8(_) => "s8",
            Arg::S16(_) => "s16",
            Arg::S32(_) => "s32",
            Arg::S64(_) => "s64",
            Arg::F32(_) => "f32",
            Arg::F64(_) => "f64",
            Arg::Bytes(_) => "bytes",
            Arg::Ptr(_) => "pointer",
        }
    }

    fn class(&self) -> Class {
        match self {
            Arg::F32(_) | Arg::F64(_) => Class::Float,
            Arg::Bytes(_) => Class::Raw,
            Arg::Ptr(_) => Class::Pointer,
            _ => Class::Int,
        }
    }

    /// Checks that the argument fits `param` and returns its bytes.
    ///
    /// The size must equal the parameter's. Beyond that: a pointer needs an 8-byte integer parameter, a
    /// float value a float parameter (`.f32`/`.f64`/`.b32`/`.b64`), an integer value an integer or untyped
    /// parameter. Signedness is not checked. [`Arg::Bytes`] only has to have the right size.
    pub fn encode_for(&self, param: &Param) -> Result<Vec<u8>, String> {
        let bytes = self.to_bytes();
        let size = param.size();
        let is_array = !param.dims.is_empty() || param.vector.is_some();
        let untyped = matches!(param.ty, ScalarType::B8 | ScalarType::B16 | ScalarType::B32 | ScalarType::B64);
        let fits = match self.class() {
            Class::Raw => true,
            Class::Pointer => !is_array && size == 8 && !param.ty.is_float(),
            Class::Float => !is_array && (param.ty.is_float() || untyped),
            Class::Int => !is_array && !param.ty.is_float(),
        };
        if !fits {
            return Err(match self.class() {
                Class::Pointer => format!(
                    "a device pointer needs an 8-byte integer parameter (.u64 or .b64), not {}",
                    describe(param)
                ),
                _ => format!("a {} value cannot be passed to {}", self.type_name(), describe(param)),
            });
        }
        if bytes.len() as u64 != size {
            return Err(format!(
                "{} is {size} bytes, the {} value has {}",
                describe(param),
                self.type_name(),
                bytes.len()
            ));
        }
        Ok(bytes)
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::U8(v) => write!(f, "u8:{v}"),
            Arg::U16(v) => write!(f, "u16:{v}"),
            Arg::U32(v) => write!(f, "u32:{v}"),
            Arg::U64(v) => write!(f, "u64:{v}"),
            Arg::S8(v) => write!(f, "s8:{v}"),
            Arg::S16(v) => write!(f, "s16:{v}"),
            Arg::S32(v) => write!(f, "s32:{v}"),
            Arg::S64(v) => write!(f, "s64:{v}"),
            Arg::F32(v) => write!(f, "f32:{v:?}"),
            Arg::F64(v) => write!(f, "f64:{v:?}"),
            Arg::Bytes(b) => write!(f, "bytes[{}]", b.len()),
            Arg::Ptr(p) => write!(f, "pointer {p:#x}"),
        }
    }
}

/// A parameter's type as PTX writes it, e.g. `.u64` or `.b8[16]`, and its size.
pub fn describe(param: &Param) -> String {
    let mut s = String::from(".");
    if let Some(n) = param.vector {
        s.push_str(&format!("v{n}."));
    }
    s.push_str(&param.ty.to_string());
    for d in &param.dims {
        match d {
            Some(n) => s.push_str(&format!("[{n}]")),
            None => s.push_str("[]"),
        }
    }
    format!("a {s} parameter")
}

/// `index `name` (.type)` for messages.
pub fn param_label(index: usize, param: &Param) -> String {
    match &param.name {
        Some(name) => format!("{index} `{name}`"),
        None => index.to_string(),
    }
}
