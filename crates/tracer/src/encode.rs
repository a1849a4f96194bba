//! The two hot events, `Block` and `Mem`, encoded with as little work per event as possible. The bytes are
//! exactly what [`trace::EventEncoder`] writes (the tests compare them); everything that can be is computed at
//! translation time: a block's whole event, and the part of a memory event's head that depends only on the
//! instruction ([`MemSite`], carried in the callback's user data).

use trace::{EventEncoder, Sink, ADDR_SLOTS};

use crate::out::SpillBuf;

/// A block's encoded `Block` event: up to 5 LEB128 bytes (tag 0, id << 3) in a register, and their count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockEvent {
    pub bytes: u64,
    pub len: u8,
}

impl BlockEvent {
    pub fn new(id: u32) -> BlockEvent {
        let mut v = Vec::new();
        EventEncoder::new().block(&mut v, id);
        let mut b = [0u8; 8];
        b[..v.len()].copy_from_slice(&v);
        BlockEvent { bytes: u64::from_le_bytes(b), len: v.len() as u8 }
    }
}

/// What a memory callback knows statically about its instruction, packed into the callback's user-data word:
///
/// | bits | field |
/// | --- | --- |
/// | 0..24 | the event head's LEB128 bytes with store and size bits zero (tag 1, `insn << 7`) |
/// | 24..26 | their count (1..=3) |
/// | 26..38 | address slot: `(first_insn + insn) mod 4096` |
/// | 38 | atomic instruction (`lock` prefix, `xchg` with memory) |
/// | 40..56 | `insn`, the index in the block |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemSite(pub u64);

const _: () = assert!(ADDR_SLOTS == 1 << 12);

impl MemSite {
    /// `insn` < 4096 (blocks have at most 4096 instructions, QEMU's at most 512), so the head takes at most
    /// 2 bytes; up to 16383 fit the 3 the packing allows.
    pub fn new(first_insn: u32, insn: u16, atomic: bool, stack: bool) -> MemSite {
        debug_assert!(insn < 1 << 14);
        // Head = ((insn << 4 | store << 3 | size) << 3) | 1: store and size land in bits 3..7 of the first
        // byte, so the rest is fixed per instruction.
        let (head, n) = leb56(u64::from(insn) << 7 | 1);
        let slot = u64::from(first_insn.wrapping_add(u32::from(insn))) & (ADDR_SLOTS as u64 - 1);
        MemSite(
            head | (n as u64) << 24
                | slot << 26
                | u64::from(atomic) << 38
                | u64::from(stack) << 39
                | u64::from(insn) << 40,
        )
    }

    #[inline(always)]
    fn head(self) -> u64 {
        self.0 & 0xff_ffff
    }

    #[inline(always)]
    fn head_len(self) -> u32 {
        (self.0 >> 24) as u32 & 3
    }

    #[inline(always)]
    fn slot(self) -> usize {
        (self.0 >> 26) as usize & (ADDR_SLOTS - 1)
    }

    #[inline(always)]
    pub fn atomic(self) -> bool {
        self.0 & 1 << 38 != 0
    }

    /// The instruction addresses the stack: a push, pop, call or return, or a memory operand based on `rsp`.
    #[inline(always)]
    pub fn stack(self) -> bool {
        self.0 & 1 << 39 != 0
    }

    #[inline(always)]
    pub fn insn(self) -> u16 {
        (self.0 >> 40) as u16
    }
}

/// The access bits of a memory event head's first byte: `store << 6 | (size_log2 & 7) << 3`.
#[inline(always)]
pub fn access_bits(store: bool, size_log2: u8) -> u64 {
    u64::from(store) << 6 | u64::from(size_log2 & 7) << 3
}

/// `v < 2^56` as LEB128 bytes in a register (little-endian) and their count (1..=8), without branches: the
/// 7-bit groups are spread into bytes by three halving steps, then the continuation bits are set below the
/// last byte.
#[inline(always)]
fn leb56(v: u64) -> (u64, u32) {
    debug_assert!(v < 1 << 56);
    let x = (v & 0x0fff_ffff) | (v & 0x00ff_ffff_f000_0000) << 4;
    let x = (x & 0x0000_3fff_0000_3fff) | (x & 0x0fff_c000_0fff_c000) << 2;
    let x = (x & 0x007f_007f_007f_007f) | (x & 0x3f80_3f80_3f80_3f80) << 1;
    // ceil(bits / 7) for 1..=56 significant bits (bits + 6) / 7, as a multiplication.
    let n = ((70 - (v | 1).leading_zeros()) * 37) >> 8;
    let cont = 0x0080_8080_8080_8080 & ((1u64 << (8 * (n - 1))) - 1);
    (x | cont, n)
}

#[inline(always)]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// One entry of the previous-address table. An entry counts only if its generation is the current one, so
/// that a segment start forgets all addresses in O(1).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(16))]
struct Prev {
    addr: u64,
    gen: u64,
}

/// Encodes memory events, keeping the previous address of every slot.
#[derive(Debug)]
pub struct MemEncoder {
    table: Box<[Prev; ADDR_SLOTS]>,
    gen: u64,
}

impl Default for MemEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl MemEncoder {
    pub fn new() -> MemEncoder {
        let table = vec![Prev::default(); ADDR_SLOTS].into_boxed_slice().try_into().expect("ADDR_SLOTS entries");
        MemEncoder { table, gen: 1 }
    }

    /// Forgets all previous addresses (at every segment start).
    pub fn reset(&mut self) {
        self.gen += 1;
    }

    /// A memory access at `addr` by the instruction `site`; `access` = [`access_bits`].
    #[inline(always)]
    pub fn mem(&mut self, buf: &mut SpillBuf, site: MemSite, access: u64, addr: u64) {
        let e = &mut self.table[site.slot()];
        let prev = if e.gen == self.gen { e.addr } else { 0 };
        *e = Prev { addr, gen: self.gen };
        let delta = zigzag(addr.wrapping_sub(prev) as i64);
        let head = site.head() | access;
        let hn = site.head_len();
        if delta < 0x80 {
            // The common case (an access near the previous one of its instruction): one byte.
            buf.put_words(head | delta << (8 * hn), 0, hn as usize + 1);
        } else if delta < 1 << 56 {
            let (d, dn) = leb56(delta);
            // hn is 1..=3, so both shifts are in range; `hi` holds what spills past the first 8 bytes.
            buf.put_words(head | d << (8 * hn), d >> (64 - 8 * hn), (hn + dn) as usize);
        } else {
            Self::mem_long(buf, head, hn, delta);
        }
    }

    /// A delta of 57 bits or more (an access far from the previous one at its slot): 9 or 10 bytes.
    #[cold]
    #[inline(never)]
    fn mem_long(buf: &mut SpillBuf, head: u64, hn: u32, delta: u64) {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&head.to_le_bytes());
        let mut at = hn as usize;
        let mut v = delta;
        while v >= 0x80 {
            b[at] = v as u8 | 0x80;
            v >>= 7;
            at += 1;
        }
        b[at] = v as u8;
        buf.put_bytes(&b[..at + 1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::EventEncoder;

    fn spill() -> (std::path::PathBuf, SpillBuf) {
        let dir = std::env::temp_dir().join(format!(
            "tracer-encode-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let b = SpillBuf::create(&dir, "t.spill", trace::ChunkKind::Events, 0, 4 << 20).unwrap();
        (dir, b)
    }

    #[test]
    fn leb56_matches_the_varint_encoding() {
        let mut vals: Vec<u64> = (0..56).flat_map(|k| [1u64 << k, (1u64 << k) - 1, (1u64 << k) + 1]).collect();
        vals.extend([0, 127, 128, 300, 16383, 16384, (1 << 56) - 1]);
        for v in vals.into_iter().filter(|&v| v < 1 << 56) {
            let (x, n) = leb56(v);
            let mut want = Vec::new();
            trace::varint::put(&mut want, v);
            assert_eq!(&x.to_le_bytes()[..n as usize], &want[..], "{v:#x}");
            assert_eq!(n as usize, want.len());
            if n < 8 {
                assert_eq!(x >> (8 * n), 0, "{v:#x}: bytes past the encoding");
            }
        }
    }

    #[test]
    fn block_events_match() {
        for id in [0u32, 1, 15, 16, 2047, 2048, 1 << 20, u32::MAX] {
            let b = BlockEvent::new(id);
            let mut want = Vec::new();
            EventEncoder::new().block(&mut want, id);
            assert_eq!(&b.bytes.to_le_bytes()[..b.len as usize], &want[..]);
        }
    }

    #[test]
    fn memory_events_match_the_reference_encoder() {
        let (dir, mut buf) = spill();
        let mut fast = MemEncoder::new();
        let mut reference = EventEncoder::new();
        let mut want = Vec::new();
        // A deterministic pseudo-random mix of instructions, sizes, directions and addresses (near, far,
        // negative deltas, the top of the address space), with segment resets.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..200_000u32 {
            let r = next();
            if r % 5000 == 0 {
                fast.reset();
                reference.reset();
            }
            let first_insn = (r >> 8) as u32 % 10_000;
            let insn = [0u16, 1, 5, 16, 127, 128, 511, 4095, 16383][(r >> 40) as usize % 9];
            let (store, size) = (r & 1 != 0, ((r >> 1) % 8) as u8);
            let addr = match (r >> 4) % 6 {
                0 => next(),
                1 => u64::MAX - (r >> 50),
                2 => 0x7fff_0000_0000 + (r >> 44),
                _ => 0x5555_0000 + u64::from(i % 64) * 8,
            };
            let site = MemSite::new(first_insn, insn, false, false);
            assert_eq!(site.insn(), insn);
            fast.mem(&mut buf, site, access_bits(store, size), addr);
            reference.mem(&mut want, first_insn, insn, store, size, addr);
        }
        assert_eq!(buf.data(), &want[..]);
        let _ = std::fs::remove_dir_all(dir);
    }
}
