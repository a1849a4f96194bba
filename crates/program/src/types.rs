//! Value types as the emulator sees them: every register lane is a `u64` holding the value's bits,
//! zero-extended from the register's width.

use ir::ScalarType;

/// An instruction's data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    B8,
    B16,
    B32,
    B64,
    B128,
    F16,
    Bf16,
    F16x2,
    Bf16x2,
    F32,
    F64,
    Pred,
    /// A type the emulator has no arithmetic for (tf32, fp8, ...): instructions using it are unsupported.
    Other,
}

impl Ty {
    pub fn from_scalar(t: ScalarType) -> Ty {
        use ScalarType as S;
        match t {
            S::U8 => Ty::U8,
            S::U16 => Ty::U16,
            S::U32 => Ty::U32,
            S::U64 => Ty::U64,
            S::S8 => Ty::S8,
            S::S16 => Ty::S16,
            S::S32 => Ty::S32,
            S::S64 => Ty::S64,
            S::B8 => Ty::B8,
            S::B16 => Ty::B16,
            S::B32 => Ty::B32,
            S::B64 => Ty::B64,
            S::B128 => Ty::B128,
            S::F16 => Ty::F16,
            S::Bf16 => Ty::Bf16,
            S::F16x2 => Ty::F16x2,
            S::Bf16x2 => Ty::Bf16x2,
            S::F32 => Ty::F32,
            S::F64 => Ty::F64,
            S::Pred => Ty::Pred,
            _ => Ty::Other,
        }
    }

    /// Size in bits.
    pub fn bits(self) -> u32 {
        match self {
            Ty::U8 | Ty::S8 | Ty::B8 => 8,
            Ty::U16 | Ty::S16 | Ty::B16 | Ty::F16 | Ty::Bf16 => 16,
            Ty::U32 | Ty::S32 | Ty::B32 | Ty::F32 | Ty::F16x2 | Ty::Bf16x2 => 32,
            Ty::U64 | Ty::S64 | Ty::B64 | Ty::F64 => 64,
            Ty::B128 => 128,
            Ty::Pred => 1,
            Ty::Other => 64,
        }
    }

    pub fn bytes(self) -> u32 {
        (self.bits() / 8).max(1)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2 | Ty::F32 | Ty::F64)
    }

    /// Mask of the type's bits within a u64.
    pub fn mask(self) -> u64 {
        mask_bits(self.bits().min(64))
    }

    /// The value's bits extended to 64: sign-extended for signed types, zero-extended otherwise.
    #[inline]
    pub fn extend(self, v: u64) -> u64 {
        match self {
            Ty::S8 => v as i8 as i64 as u64,
            Ty::S16 => v as i16 as i64 as u64,
            Ty::S32 => v as i32 as i64 as u64,
            _ => v & self.mask(),
        }
    }
}

/// A mask of the low `bits` bits.
#[inline]
pub fn mask_bits(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}
