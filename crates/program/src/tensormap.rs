//! Tensor maps (`CUtensorMap`, PTX ISA 5.5 "tensors"): the 128-byte object `cuTensorMapEncodeTiled` writes
//! on the host and `cp.async.bulk.tensor` reads on the device. The ISA and the driver leave its contents
//! opaque; lockstep's layout (little-endian, unused bytes zero):
//!
//! | bytes   | field |
//! | ------- | ----- |
//! | 0-3     | magic `LSTM` (a map never encoded is an error, not garbage) |
//! | 4       | data type (`CUtensorMapDataType`) |
//! | 5       | rank, 1 to 5 |
//! | 6       | interleave (`CUtensorMapInterleave`) |
//! | 7       | swizzle (`CUtensorMapSwizzle`) |
//! | 8       | L2 promotion (`CUtensorMapL2promotion`, a hint) |
//! | 9       | out-of-bounds fill (`CUtensorMapFloatOOBfill`) |
//! | 16-23   | global address |
//! | 24-43   | global dimensions, 5 × u32 (elements) |
//! | 48-79   | global strides of dimensions 1 to 4, 4 × u64 (bytes) |
//! | 80-89   | box dimensions, 5 × u16 (elements) |
//! | 90-94   | element (traversal) strides, 5 × u8 |
//!
//! Only tiled maps are encoded (im2col maps are refused), without interleave, with the swizzle modes
//! none, 32B, 64B and 128B, and the data types of whole bytes: the encoder answers the rest "not supported"
//! rather than making a map the copies could not honour.

/// The size of a tensor map object.
pub const SIZE: usize = 128;
/// Where the global address lies (`cuTensorMapReplaceAddress` rewrites it).
pub const ADDRESS_OFFSET: usize = 16;
/// The most dimensions a map has.
pub const MAX_RANK: usize = 5;

const MAGIC: [u8; 4] = *b"LSTM";

/// `CU_TENSOR_MAP_DATA_TYPE_*` values.
pub mod dtype {
    pub const UINT8: u8 = 0;
    pub const UINT16: u8 = 1;
    pub const UINT32: u8 = 2;
    pub const INT32: u8 = 3;
    pub const UINT64: u8 = 4;
    pub const INT64: u8 = 5;
    pub const FLOAT16: u8 = 6;
    pub const FLOAT32: u8 = 7;
    pub const FLOAT64: u8 = 8;
    pub const BFLOAT16: u8 = 9;
    pub const FLOAT32_FTZ: u8 = 10;
    pub const TFLOAT32: u8 = 11;
    pub const TFLOAT32_FTZ: u8 = 12;
    /// The last packed sub-byte type (`16U6_ALIGN16B`).
    pub const LAST: u8 = 15;
}

/// A decoded tensor map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub dtype: u8,
    pub rank: usize,
    pub interleave: u8,
    /// 0 none, 1 32B, 2 64B, 3 128B.
    pub swizzle: u8,
    pub l2_promotion: u8,
    /// Out-of-bounds elements of a load are NaN (float types) instead of zero.
    pub nan_fill: bool,
    pub address: u64,
    pub dims: [u64; MAX_RANK],
    /// Byte strides; `strides[0]` is the element size.
    pub strides: [u64; MAX_RANK],
    pub boxes: [u32; MAX_RANK],
    pub element_strides: [u32; MAX_RANK],
}

/// Why an encoding was refused: a value the driver documents as invalid, or one lockstep does not implement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    Invalid(String),
    NotSupported(String),
}

/// The size in bytes of an element of `dtype` (`None` for the packed sub-byte types and unknown values).
pub fn element_size(dtype: u8) -> Option<u64> {
    use dtype::*;
    Some(match dtype {
        UINT8 => 1,
        UINT16 | FLOAT16 | BFLOAT16 => 2,
        UINT32 | INT32 | FLOAT32 | FLOAT32_FTZ | TFLOAT32 | TFLOAT32_FTZ => 4,
        UINT64 | INT64 | FLOAT64 => 8,
        _ => return None,
    })
}

fn is_float(dtype: u8) -> bool {
    use dtype::*;
    matches!(dtype, FLOAT16 | FLOAT32 | FLOAT64 | BFLOAT16 | FLOAT32_FTZ | TFLOAT32 | TFLOAT32_FTZ)
}

/// The parameters of `cuTensorMapEncodeTiled`, as the driver takes them.
#[derive(Clone, Debug, Default)]
pub struct Tiled<'a> {
    pub dtype: u32,
    pub address: u64,
    pub dims: &'a [u64],
    /// `rank - 1` byte strides of dimensions 1 and up.
    pub strides: &'a [u64],
    pub boxes: &'a [u32],
    pub element_strides: &'a [u32],
    pub interleave: u32,
    pub swizzle: u32,
    pub l2_promotion: u32,
    pub oob_fill: u32,
}

/// Validates `t` as the driver documents `cuTensorMapEncodeTiled` and encodes it.
pub fn encode_tiled(t: &Tiled) -> Result<[u8; SIZE], EncodeError> {
    let bad = |m: String| Err(EncodeError::Invalid(m));
    let rank = t.dims.len();
    if rank == 0 || rank > MAX_RANK {
        return bad(format!("the tensor rank {rank} is not 1 to 5"));
    }
    if t.strides.len() != rank - 1 || t.boxes.len() != rank || t.element_strides.len() != rank {
        return bad("the stride, box and element-stride arrays do not match the rank".into());
    }
    if t.dtype > u32::from(dtype::LAST) {
        return bad(format!("{} is not a CUtensorMapDataType", t.dtype));
    }
    if t.interleave > 2 {
        return bad(format!("{} is not a CUtensorMapInterleave", t.interleave));
    }
    if t.swizzle > 6 {
        return bad(format!("{} is not a CUtensorMapSwizzle", t.swizzle));
    }
    if t.l2_promotion > 3 {
        return bad(format!("{} is not a CUtensorMapL2promotion", t.l2_promotion));
    }
    if t.oob_fill > 1 {
        return bad(format!("{} is not a CUtensorMapFloatOOBfill", t.oob_fill));
    }
    let dt = t.dtype as u8;
    if t.interleave != 0 && rank < 3 {
        return bad("an interleaved layout needs a rank of at least 3".into());
    }
    let align = if t.interleave == 2 { 32 } else { 16 };
    if !t.address.is_multiple_of(align) {
        return bad(format!("the global address {:#x} is not {align}-byte aligned", t.address));
    }
    if let Some(d) = t.dims.iter().find(|&&d| d == 0 || d > 1 << 31) {
        return bad(format!("the global dimension {d} is not 1 to 2^31"));
    }
    if let Some(s) = t.strides.iter().find(|&&s| !s.is_multiple_of(align) || s >= 1 << 40) {
        return bad(format!("the global stride {s} is not a multiple of {align} below 2^40"));
    }
    if let Some(b) = t.boxes.iter().find(|&&b| b == 0 || b > 256) {
        return bad(format!("the box dimension {b} is not 1 to 256"));
    }
    if let Some(e) = t.element_strides.iter().find(|&&e| e == 0 || e > 8) {
        return bad(format!("the element stride {e} is not 1 to 8"));
    }
    if t.interleave == 2 && t.swizzle != 1 {
        return bad("a 32-byte interleave needs the 32-byte swizzle".into());
    }
    if t.oob_fill == 1 && !is_float(dt) {
        return bad("NaN fill needs a floating-point data type".into());
    }
    let unsupported = |m: &str| Err(EncodeError::NotSupported(m.into()));
    let Some(elem) = element_size(dt) else {
        return unsupported("packed sub-byte tensor data types are not implemented");
    };
    if t.interleave != 0 {
        return unsupported("interleaved tensor layouts are not implemented");
    }
    if t.swizzle > 3 {
        return unsupported("the 128-byte swizzles with 32- or 64-byte atoms are not implemented");
    }
    let inner = u64::from(t.boxes[0]) * elem;
    if !inner.is_multiple_of(16) {
        return bad(format!("the box's inner dimension is {inner} bytes, not a multiple of 16"));
    }
    if t.swizzle != 0 && inner > 16 << t.swizzle {
        return bad(format!(
            "the box's inner dimension of {inner} bytes exceeds the swizzle span of {}",
            16 << t.swizzle
        ));
    }
    let mut out = [0u8; SIZE];
    out[..4].copy_from_slice(&MAGIC);
    out[4] = dt;
    out[5] = rank as u8;
    out[6] = t.interleave as u8;
    out[7] = t.swizzle as u8;
    out[8] = t.l2_promotion as u8;
    out[9] = t.oob_fill as u8;
    out[16..24].copy_from_slice(&t.address.to_le_bytes());
    for (i, &d) in t.dims.iter().enumerate() {
        out[24 + 4 * i..28 + 4 * i].copy_from_slice(&(d as u32).to_le_bytes());
    }
    for (i, &s) in t.strides.iter().enumerate() {
        out[48 + 8 * i..56 + 8 * i].copy_from_slice(&s.to_le_bytes());
    }
    for (i, &b) in t.boxes.iter().enumerate() {
        out[80 + 2 * i..82 + 2 * i].copy_from_slice(&(b as u16).to_le_bytes());
    }
    for (i, &e) in t.element_strides.iter().enumerate() {
        out[90 + i] = e as u8;
    }
    Ok(out)
}

/// `cuTensorMapReplaceAddress`: the map with another global address (same alignment rule as encoding).
pub fn replace_address(map: &mut [u8; SIZE], address: u64) -> Result<(), EncodeError> {
    decode(map).map_err(EncodeError::Invalid)?;
    if !address.is_multiple_of(16) {
        return Err(EncodeError::Invalid(format!("the global address {address:#x} is not 16-byte aligned")));
    }
    map[ADDRESS_OFFSET..ADDRESS_OFFSET + 8].copy_from_slice(&address.to_le_bytes());
    Ok(())
}

/// Reads a map a kernel names; a map not made by `encode_tiled` is an error.
pub fn decode(b: &[u8; SIZE]) -> Result<TensorMap, String> {
    if b[..4] != MAGIC {
        return Err("the tensor map operand does not point at a tensor map encoded by cuTensorMapEncodeTiled".into());
    }
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    let rank = usize::from(b[5]);
    let elem = element_size(b[4]).ok_or("the tensor map's data type is not one lockstep encodes")?;
    if !(1..=MAX_RANK).contains(&rank) || b[6] != 0 || b[7] > 3 {
        return Err("the tensor map's rank, interleave or swizzle is not one lockstep encodes".into());
    }
    let mut m = TensorMap {
        dtype: b[4],
        rank,
        interleave: b[6],
        swizzle: b[7],
        l2_promotion: b[8],
        nan_fill: b[9] == 1,
        address: u64_at(16),
        dims: [1; MAX_RANK],
        strides: [0; MAX_RANK],
        boxes: [1; MAX_RANK],
        element_strides: [1; MAX_RANK],
    };
    m.strides[0] = elem;
    for i in 0..rank {
        m.dims[i] = u64::from(u32::from_le_bytes(b[24 + 4 * i..28 + 4 * i].try_into().expect("4 bytes")));
        if i > 0 {
            m.strides[i] = u64_at(48 + 8 * (i - 1));
        }
        m.boxes[i] = u32::from(u16::from_le_bytes([b[80 + 2 * i], b[81 + 2 * i]]));
        m.element_strides[i] = u32::from(b[90 + i]);
    }
    // Without interleave, dimension 0 has no traversal stride (the driver ignores the value).
    m.element_strides[0] = 1;
    Ok(m)
}

impl TensorMap {
    pub fn element_size(&self) -> u64 {
        self.strides[0]
    }

    /// Elements the box holds along dimension `i`: ceil(box / element stride).
    pub fn count(&self, i: usize) -> u64 {
        u64::from(self.boxes[i].div_ceil(self.element_strides[i]))
    }

    /// The bytes of one box in shared memory (what a load completes on its mbarrier).
    pub fn box_bytes(&self) -> u64 {
        (0..self.rank).map(|i| self.count(i)).product::<u64>() * self.element_size()
    }

    /// The value of an out-of-bounds element of a load: zero, or with NaN fill the all-ones-mantissa NaN.
    pub fn fill(&self) -> u64 {
        if !self.nan_fill {
            return 0;
        }
        match self.element_size() {
            2 => 0x7fff,
            4 => 0x7fff_ffff,
            _ => 0x7fff_ffff_ffff_ffff,
        }
    }

    /// Where byte `offset` of a box lands in shared memory, for a box placed at shared offset `base`: the
    /// swizzle exchanges the 16-byte chunks of each 32-, 64- or 128-byte span by XOR-ing chunk-index bits
    /// 4.. of the shared address with its bits 7.. (the row within the repeating 256-, 512- or 1024-byte
    /// pattern).
    pub fn swizzled(&self, base: u64, offset: u64) -> u64 {
        let a = base + offset;
        if self.swizzle == 0 {
            return a;
        }
        let mask = (1u64 << self.swizzle) - 1;
        a ^ (((a >> 7) & mask) << 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiled<'a>(dims: &'a [u64], strides: &'a [u64], boxes: &'a [u32], es: &'a [u32]) -> Tiled<'a> {
        Tiled {
            dtype: u32::from(dtype::FLOAT32),
            address: 0x1000,
            dims,
            strides,
            boxes,
            element_strides: es,
            ..Tiled::default()
        }
    }

    #[test]
    fn round_trips_and_rejects_documented_invalid_values() {
        let t = tiled(&[100, 50, 3], &[400, 20000], &[32, 8, 2], &[1, 2, 1]);
        let map = encode_tiled(&t).unwrap();
        let m = decode(&map).unwrap();
        assert_eq!((m.rank, m.address, m.dims[..3].to_vec()), (3, 0x1000, vec![100, 50, 3]));
        assert_eq!(m.strides[..3], [4, 400, 20000]);
        assert_eq!(m.box_bytes(), 32 * 4 * 2 * 4);
        let invalid = |t: Tiled| matches!(encode_tiled(&t), Err(EncodeError::Invalid(_)));
        assert!(invalid(tiled(&[100, 50], &[40], &[32, 8], &[1, 1])), "stride not a multiple of 16");
        assert!(invalid(tiled(&[100, 50], &[400], &[2, 8], &[1, 1])), "8-byte inner box");
        assert!(invalid(tiled(&[100, 50], &[400], &[32, 257], &[1, 1])), "box over 256");
        assert!(invalid(tiled(&[100, 50], &[400], &[32, 8], &[1, 9])), "element stride over 8");
        assert!(invalid(tiled(&[0, 50], &[400], &[32, 8], &[1, 1])), "zero dimension");
        assert!(invalid(Tiled { swizzle: 1, ..tiled(&[100], &[], &[16], &[1]) }), "64-byte row, 32B swizzle");
        assert!(invalid(Tiled { address: 8, ..tiled(&[100], &[], &[16], &[1]) }), "misaligned address");
        let mut map = map;
        replace_address(&mut map, 0x2000).unwrap();
        assert_eq!(decode(&map).unwrap().address, 0x2000);
    }

    #[test]
    fn swizzle_permutes_sixteen_byte_chunks_by_row() {
        let t = Tiled { swizzle: 3, ..tiled(&[64, 64], &[256], &[32, 8], &[1, 1]) };
        let m = decode(&encode_tiled(&t).unwrap()).unwrap();
        // Row 3 (bytes 384..512), chunk 1 goes to chunk 1 ^ 3 = 2.
        assert_eq!(m.swizzled(0, 3 * 128 + 16 + 4), 3 * 128 + 32 + 4);
        assert_eq!(m.swizzled(0, 16), 16, "row 0 is unchanged");
    }
}
