//! Memory divergence: which segment each access touches, and how many transactions a warp memory instruction
//! needs (ThreadFuser, Section III, Fig. 4).
//!
//! # Segments
//!
//! The trace has no memory map, so the segment of an access is decided from how the instruction forms its
//! address (decoded from its bytes, see [`crate::program::Hint`]) and from address ranges:
//!
//! 1. `fs`/`gs`-relative (thread-local storage) → **other**;
//! 2. `rsp`-relative and implicit stack accesses (`push`, `pop`, `call`, `ret`) → **stack**;
//! 3. `rip`-relative and absolute addresses → **static**;
//! 4. through any other register: inside an OS thread's stack range (lowest `rsp`-relative address seen minus
//!    the 128-byte red zone, up to 64 KiB above the highest, for the callers' frames) → **stack**; inside a loaded ELF segment of the program or a
//!    library (read from the files' program headers, so `.bss` counts) → **static**; inside code without a
//!    file → **other**; anything else (the `brk` heap, anonymous `mmap`s, which is what `malloc` returns, and
//!    also file mappings, which the trace cannot tell apart) → **heap**.
//!
//! # Coalescing
//!
//! The accesses of the active lanes of one warp memory instruction are grouped by direction (a
//! read-modify-write is a load and a store, as in its RISC lowering) and segment; each group is one warp access,
//! whose transactions are the distinct aligned `transaction_bytes` blocks its bytes touch
//! ([`simt::coalesce`]).
//!
//! # Stack as GPU local memory
//!
//! CPU threads have separate stacks, so the same local variable of different lanes lies megabytes apart and never
//! coalesces. A GPU instead interleaves the lanes' local memory: word `w` of lane `l` is at
//! `(w × warp_size + l) × 4`. [`local_pieces`] maps a stack access to that layout, with the lane's stack offset
//! measured from the first stack address its SIMT thread touched, and the report gives both models.

use crate::program::{Hint, Program, Ranges};

/// Memory segments of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    Stack = 0,
    Heap = 1,
    Static = 2,
    Other = 3,
    /// The stack accesses again, laid out as GPU local memory.
    StackLocal = 4,
}

/// Number of [`Segment`]s.
pub const SEGMENTS: usize = 5;

impl Segment {
    pub const ALL: [Segment; SEGMENTS] =
        [Segment::Stack, Segment::Heap, Segment::Static, Segment::Other, Segment::StackLocal];

    pub fn name(self) -> &'static str {
        match self {
            Segment::Stack => "stack",
            Segment::Heap => "heap",
            Segment::Static => "static",
            Segment::Other => "other",
            Segment::StackLocal => "stack_local",
        }
    }
}

/// Decides segments.
#[derive(Debug, Clone)]
pub struct Classifier {
    stacks: Ranges,
    statics: Ranges,
    anon: Ranges,
}

impl Classifier {
    pub fn new(prog: &Program<'_>, stacks: Ranges) -> Classifier {
        Classifier { stacks, statics: prog.statics.clone(), anon: prog.anon.clone() }
    }

    /// The segment of an access at `addr` whose instruction addresses memory as `hint` says.
    #[inline]
    pub fn classify(&self, hint: Hint, addr: u64) -> Segment {
        match hint {
            Hint::Tls => Segment::Other,
            Hint::Stack => Segment::Stack,
            Hint::Static => Segment::Static,
            Hint::Pointer => {
                if self.stacks.contains(addr) {
                    Segment::Stack
                } else if self.statics.contains(addr) {
                    Segment::Static
                } else if self.anon.contains(addr) {
                    Segment::Other
                } else {
                    Segment::Heap
                }
            }
        }
    }
}

/// How far above its first stack access a lane's stack accesses may go and still get their own local offsets
/// (arguments and the caller's frames of a `--function` segment).
pub const LOCAL_HEADROOM: u64 = 4096;
/// Local memory per lane; offsets wrap around it.
pub const LOCAL_BYTES: u64 = 1 << 24;

/// The local-memory offset of a `size`-byte stack access at `addr` by a lane whose first stack access was at
/// `base`. Deeper (lower) addresses get larger offsets, as a GPU thread's local frame grows upwards from 0; the
/// access covers offsets `[offset, offset + size)`, so aligned accesses stay aligned.
#[inline]
pub fn local_offset(base: u64, addr: u64, size: u16) -> u64 {
    base.wrapping_add(LOCAL_HEADROOM).wrapping_sub(addr).wrapping_sub(u64::from(size)) % LOCAL_BYTES
}

/// The pieces `(address, size)` of a `size`-byte access at local offset `offset` of lane `lane`, with the
/// lanes' 4-byte words interleaved as in GPU local memory.
pub fn local_pieces(offset: u64, size: u16, lane: u32, warp_size: u32, out: &mut Vec<(u64, u32)>) {
    let end = offset + u64::from(size.max(1));
    let ws = u64::from(warp_size);
    let mut o = offset;
    while o < end {
        let word = o / 4;
        let in_word = o % 4;
        let n = (4 - in_word).min(end - o);
        out.push(((word * ws + u64::from(lane)) * 4 + in_word, n as u32));
        o += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_layout_coalesces_same_offsets() {
        // 32 lanes each store 8 bytes at the same depth of their own stacks, megabytes apart.
        let mut native = Vec::new();
        let mut local = Vec::new();
        for lane in 0..32u32 {
            let base = 0x7000_0000 + u64::from(lane) * (8 << 20);
            let addr = base - 24;
            native.push((addr, 8));
            local_pieces(local_offset(base, addr, 8), 8, lane, 32, &mut local);
        }
        assert_eq!(simt::coalesce::sectors(native.iter().copied()), 32);
        // Two words per lane: 2 × 128 bytes = 8 sectors, the ideal for 8-byte accesses.
        assert_eq!(simt::coalesce::sectors(local.iter().copied()), 8);
    }

    #[test]
    fn pieces_split_at_words() {
        let mut v = Vec::new();
        local_pieces(6, 4, 1, 4, &mut v);
        // Offsets 6..10: bytes 2, 3 of word 1 and 0, 1 of word 2.
        assert_eq!(v, vec![((4 + 1) * 4 + 2, 2), ((2 * 4 + 1) * 4, 2)]);
    }
}
