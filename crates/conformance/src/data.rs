//! Test data: little-endian encoding of element types, a seeded generator and edge values.

/// An element type of a kernel buffer, stored little-endian as on the device.
pub trait Elem: Copy + std::fmt::Debug + PartialEq + 'static {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(&bytes[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}
elem!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

/// The bytes of a slice of elements.
pub fn to_bytes<T: Elem>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::SIZE);
    for &v in values {
        v.put(&mut out);
    }
    out
}

/// The elements in a byte buffer (a trailing partial element is ignored).
pub fn from_bytes<T: Elem>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::get).collect()
}

/// A small deterministic generator (SplitMix64): the same seed gives the same data on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6A09_E667_F3BC_C908)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[lo, hi]` (inclusive).
    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (u128::from(self.next_u64()) % span) as i128) as i64
    }

    pub fn range_i32(&mut self, lo: i32, hi: i32) -> i32 {
        self.range_i64(i64::from(lo), i64::from(hi)) as i32
    }

    /// Uniform in `[lo, hi)`.
    pub fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        self.f64_in(f64::from(lo), f64::from(hi)) as f32
    }

    /// `n` values of `gen`, with `edges` placed first (so small launches still see them).
    pub fn fill<T>(&mut self, n: usize, edges: &[T], mut gen: impl FnMut(&mut Rng) -> T) -> Vec<T>
    where
        T: Copy,
    {
        let mut out: Vec<T> = edges.iter().copied().take(n).collect();
        while out.len() < n {
            out.push(gen(self));
        }
        out
    }

    pub fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.next_u32()).collect()
    }

    pub fn vec_u64(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.next_u64()).collect()
    }

    pub fn vec_f32(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32_in(lo, hi)).collect()
    }
}

/// Edge values of 32-bit signed integers.
pub const EDGE_I32: &[i32] =
    &[0, 1, -1, 2, -2, 7, -7, i32::MAX, i32::MIN, i32::MAX - 1, i32::MIN + 1, 0x7FFF, -0x8000, 0x10000, 255, -256];
/// Edge values of 32-bit unsigned integers.
pub const EDGE_U32: &[u32] = &[
    0,
    1,
    2,
    3,
    u32::MAX,
    u32::MAX - 1,
    0x8000_0000,
    0x7FFF_FFFF,
    0xFFFF,
    0x1_0000,
    0xFF,
    0x100,
    0xDEAD_BEEF,
    0x0F0F_0F0F,
    5,
    7,
];
/// Edge values of 64-bit signed integers.
pub const EDGE_I64: &[i64] = &[
    0,
    1,
    -1,
    2,
    -2,
    i64::MAX,
    i64::MIN,
    i64::MAX - 1,
    i64::MIN + 1,
    0xFFFF_FFFF,
    -0x1_0000_0000,
    i32::MAX as i64,
    i32::MIN as i64,
    1 << 40,
    -(1 << 40),
    3,
];
/// Edge values of 64-bit unsigned integers.
pub const EDGE_U64: &[u64] = &[
    0,
    1,
    2,
    3,
    u64::MAX,
    u64::MAX - 1,
    1 << 63,
    (1 << 63) - 1,
    0xFFFF_FFFF,
    0x1_0000_0000,
    0xFF,
    0xDEAD_BEEF_CAFE_F00D,
    5,
    7,
    1 << 32,
    1 << 40,
];

/// Edge values of `f32`: zeros, ones, halves (ties of integer rounding), integer-range limits, extremes,
/// subnormals, infinities and NaN.
pub fn edge_f32() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999997,
        -0.49999997,
        3.7,
        -3.7,
        1e10,
        -1e10,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        4294967040.0,
        4294967296.0,
        9.223372e18,
        -9.223373e18,
        1.8446743e19,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1.0e-40,
        -1.0e-40,
        f32::from_bits(1),
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        65504.0,
        65520.0,
        -65520.0,
        6.0e-8,
        1.0e-5,
        3.0e38,
        1.0000001,
        16777217.0,
        0.1,
        -0.1,
        100.25,
        -100.75,
    ]
}

/// Edge values of `f64` (as [`edge_f32`], at double precision).
pub fn edge_f64() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999999999999994,
        3.7,
        -3.7,
        1e10,
        -1e10,
        2147483647.0,
        2147483647.5,
        2147483648.0,
        -2147483648.0,
        -2147483649.0,
        4294967295.5,
        4294967296.0,
        9.223372036854775e18,
        -9.223372036854775e18,
        1.8446744073709552e19,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        5e-324,
        1e-310,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        3.4028235677973366e38,
        3.4028234663852886e38,
        1e39,
        -1e39,
        1.401298464324817e-45,
        1.0e-46,
        0.1,
        1.0000000000000002,
        100.25,
    ]
}
