//! Lane masks and warp sizes.
//!
//! A [`LaneMask`] is a set of lanes of one warp, stored as the bits of a
//! `u64`: bit `i` set means lane `i` is in the set. Warps therefore have at
//! most 64 lanes ([`MAX_LANES`]).
//!
//! A mask does not know the width of its warp. Operations that need one
//! (the full mask, the complement) take it as an argument. That is why
//! `LaneMask` implements `&`, `|`, `^` and `-` (set difference) but *not*
//! `!`: a 64-bit complement would switch on lanes 32..64 of a 32-lane warp,
//! which is never what an emulator wants. Use [`LaneMask::complement`] with
//! the warp width, or `a - b` for "lanes of `a` not in `b`".
//!
//! [`WarpSize`] is a validated warp width: a power of two in `1..=64`.
//! Everything else in this crate takes plain `u32` widths (so that widths
//! read from a configuration file need no conversion) and only requires
//! `1..=64` where it matters; `WarpSize` is for configuration code that wants
//! the power-of-two check done once, up front.

use std::fmt;
use std::iter::FusedIterator;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Sub, SubAssign};

/// The largest number of lanes a warp can have (the bits of a `u64`).
pub const MAX_LANES: u32 = 64;

/// A set of lanes of one warp (bit `i` = lane `i`).
///
/// The field is public: `LaneMask(0b1010)` is lanes 1 and 3.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaneMask(pub u64);

impl LaneMask {
    /// The empty set.
    pub const EMPTY: LaneMask = LaneMask(0);

    /// The empty set.
    #[inline]
    pub const fn empty() -> Self {
        LaneMask(0)
    }

    /// Lanes `0..width`.
    ///
    /// # Panics
    /// If `width > 64`.
    #[inline]
    pub const fn full(width: u32) -> Self {
        assert!(width <= MAX_LANES, "warp width above 64 lanes");
        if width == MAX_LANES {
            LaneMask(u64::MAX)
        } else {
            LaneMask((1u64 << width) - 1)
        }
    }

    /// The set holding only `lane`.
    ///
    /// # Panics
    /// If `lane >= 64`.
    #[inline]
    pub const fn single(lane: u32) -> Self {
        assert!(lane < MAX_LANES, "lane index above 63");
        LaneMask(1u64 << lane)
    }

    /// The mask with the given bits.
    #[inline]
    pub const fn from_bits(bits: u64) -> Self {
        LaneMask(bits)
    }

    /// The bits of the mask.
    #[inline]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Whether `lane` is in the set (`false` for `lane >= 64`).
    #[inline]
    pub const fn contains(self, lane: u32) -> bool {
        lane < MAX_LANES && self.0 & (1u64 << lane) != 0
    }

    /// Adds `lane`.
    ///
    /// # Panics
    /// If `lane >= 64`.
    #[inline]
    pub fn insert(&mut self, lane: u32) {
        *self |= LaneMask::single(lane);
    }

    /// Removes `lane` (no effect if absent or `lane >= 64`).
    #[inline]
    pub fn remove(&mut self, lane: u32) {
        if lane < MAX_LANES {
            self.0 &= !(1u64 << lane);
        }
    }

    /// `self` with `lane` added.
    ///
    /// # Panics
    /// If `lane >= 64`.
    #[inline]
    #[must_use]
    pub const fn with(self, lane: u32) -> Self {
        LaneMask(self.0 | LaneMask::single(lane).0)
    }

    /// Number of lanes in the set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The lowest lane in the set.
    #[inline]
    pub const fn first(self) -> Option<u32> {
        if self.0 == 0 {
            None
        } else {
            Some(self.0.trailing_zeros())
        }
    }

    /// The highest lane in the set.
    #[inline]
    pub const fn last(self) -> Option<u32> {
        if self.0 == 0 {
            None
        } else {
            Some(63 - self.0.leading_zeros())
        }
    }

    /// Lanes of `0..width` that are not in `self`.
    ///
    /// # Panics
    /// If `width > 64`.
    #[inline]
    #[must_use]
    pub const fn complement(self, width: u32) -> Self {
        LaneMask(!self.0 & LaneMask::full(width).0)
    }

    /// Lanes in `self` but not in `other` (same as `self - other`).
    #[inline]
    #[must_use]
    pub const fn difference(self, other: LaneMask) -> Self {
        LaneMask(self.0 & !other.0)
    }

    /// Whether every lane of `self` is in `other`.
    #[inline]
    pub const fn is_subset_of(self, other: LaneMask) -> bool {
        self.0 & !other.0 == 0
    }

    /// Whether `self` and `other` share a lane.
    #[inline]
    pub const fn intersects(self, other: LaneMask) -> bool {
        self.0 & other.0 != 0
    }

    /// The lanes of the set in increasing order.
    #[inline]
    pub const fn iter(self) -> Lanes {
        Lanes(self.0)
    }
}

/// Iterator over the lanes of a [`LaneMask`], lowest first.
///
/// Each step is one `trailing_zeros` and one bit clear, so iterating a mask
/// costs O(set lanes), not O(64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes(u64);

impl Iterator for Lanes {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let lane = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(lane)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }

    #[inline]
    fn count(self) -> usize {
        self.0.count_ones() as usize
    }
}

impl DoubleEndedIterator for Lanes {
    #[inline]
    fn next_back(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let lane = 63 - self.0.leading_zeros();
        self.0 &= !(1u64 << lane);
        Some(lane)
    }
}

impl ExactSizeIterator for Lanes {}
impl FusedIterator for Lanes {}

impl IntoIterator for LaneMask {
    type Item = u32;
    type IntoIter = Lanes;

    #[inline]
    fn into_iter(self) -> Lanes {
        self.iter()
    }
}

impl FromIterator<u32> for LaneMask {
    /// Collects lanes into a mask.
    ///
    /// # Panics
    /// If a lane is `>= 64`.
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut mask = LaneMask::EMPTY;
        mask.extend(iter);
        mask
    }
}

impl Extend<u32> for LaneMask {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        for lane in iter {
            self.insert(lane);
        }
    }
}

macro_rules! bit_op {
    ($Trait:ident, $method:ident, $AssignTrait:ident, $assign:ident, $op:tt) => {
        impl $Trait for LaneMask {
            type Output = LaneMask;
            #[inline]
            fn $method(self, rhs: LaneMask) -> LaneMask {
                LaneMask(self.0 $op rhs.0)
            }
        }
        impl $AssignTrait for LaneMask {
            #[inline]
            fn $assign(&mut self, rhs: LaneMask) {
                self.0 = self.0 $op rhs.0;
            }
        }
    };
}

bit_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bit_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bit_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Sub for LaneMask {
    type Output = LaneMask;
    /// Set difference: lanes of `self` not in `rhs`.
    #[inline]
    fn sub(self, rhs: LaneMask) -> LaneMask {
        self.difference(rhs)
    }
}

impl SubAssign for LaneMask {
    #[inline]
    fn sub_assign(&mut self, rhs: LaneMask) {
        *self = self.difference(rhs);
    }
}

impl fmt::Debug for LaneMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LaneMask({:#x})", self.0)
    }
}

/// Hexadecimal with a `0x` prefix, e.g. `0xff`.
impl fmt::Display for LaneMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl fmt::LowerHex for LaneMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl fmt::UpperHex for LaneMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::UpperHex::fmt(&self.0, f)
    }
}

impl fmt::Binary for LaneMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Binary::fmt(&self.0, f)
    }
}

impl From<u64> for LaneMask {
    #[inline]
    fn from(bits: u64) -> Self {
        LaneMask(bits)
    }
}

impl From<LaneMask> for u64 {
    #[inline]
    fn from(mask: LaneMask) -> u64 {
        mask.0
    }
}

/// A validated warp width: a power of two in `1..=64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WarpSize(u32);

impl WarpSize {
    /// 32 lanes (NVIDIA warps).
    pub const W32: WarpSize = WarpSize(32);
    /// 64 lanes (AMD GCN wavefronts).
    pub const W64: WarpSize = WarpSize(64);

    /// Validates `lanes`.
    pub const fn new(lanes: u32) -> Result<Self, InvalidWarpSize> {
        if lanes == 0 || lanes > MAX_LANES || !lanes.is_power_of_two() {
            Err(InvalidWarpSize(lanes))
        } else {
            Ok(WarpSize(lanes))
        }
    }

    /// The number of lanes.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// All lanes of the warp.
    #[inline]
    pub const fn full_mask(self) -> LaneMask {
        LaneMask::full(self.0)
    }
}

impl TryFrom<u32> for WarpSize {
    type Error = InvalidWarpSize;
    fn try_from(lanes: u32) -> Result<Self, InvalidWarpSize> {
        WarpSize::new(lanes)
    }
}

impl From<WarpSize> for u32 {
    fn from(size: WarpSize) -> u32 {
        size.0
    }
}

impl fmt::Display for WarpSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Error of [`WarpSize::new`]: the rejected width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidWarpSize(pub u32);

impl fmt::Display for InvalidWarpSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid warp size {}: must be a power of two between 1 and 64", self.0)
    }
}

impl std::error::Error for InvalidWarpSize {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basics() {
        assert_eq!(LaneMask::full(0), LaneMask::EMPTY);
        assert_eq!(LaneMask::full(64).0, u64::MAX);
        assert_eq!(LaneMask::full(4).0, 0xf);
        let m: LaneMask = [1, 3, 63].into_iter().collect();
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![1, 3, 63]);
        assert_eq!(m.iter().rev().collect::<Vec<_>>(), vec![63, 3, 1]);
        assert_eq!(m.iter().len(), 3);
        assert_eq!(m.first(), Some(1));
        assert_eq!(m.last(), Some(63));
        assert!(m.contains(3) && !m.contains(2) && !m.contains(64));
        assert_eq!(LaneMask(0b0101).complement(4), LaneMask(0b1010));
        assert_eq!(LaneMask(0b0111) - LaneMask(0b0010), LaneMask(0b0101));
        assert_eq!(format!("{}", LaneMask(255)), "0xff");
        assert_eq!(format!("{:?}", LaneMask(255)), "LaneMask(0xff)");
        assert!(WarpSize::new(48).is_err() && WarpSize::new(0).is_err());
        assert!(WarpSize::new(128).is_err());
        assert_eq!(WarpSize::new(8).unwrap().full_mask(), LaneMask(0xff));
    }
}
