//! Little-endian fields at fixed offsets. Callers check lengths first; a field past the end reads as 0
//! rather than panicking.

pub(crate) fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(array(bytes, at))
}

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(array(bytes, at))
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(array(bytes, at))
}

fn array<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    at.checked_add(N).and_then(|end| bytes.get(at..end)).and_then(|b| b.try_into().ok()).unwrap_or([0; N])
}
