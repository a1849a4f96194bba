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
    /// The address space cut into intervals of one segment each (for accesses through a pointer): interval `i`
    /// is `[starts[i], starts[i + 1])`, of segment `segs[i]`; `starts[0]` is 0.
    starts: Vec<u64>,
    segs: Vec<Segment>,
}

/// An interval of one segment: `[start, end)` (`end` 0 for the top of the address space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub start: u64,
    pub end: u64,
    pub seg: Segment,
}

impl Interval {
    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.start && (addr < self.end || self.end == 0)
    }
}

impl Classifier {
    pub fn new(prog: &Program<'_>, stacks: Ranges) -> Classifier {
        Classifier::from_ranges(&stacks, &prog.statics, &prog.anon)
    }

    /// Stack ranges first, then static data, then anonymous code; everything else is heap.
    pub fn from_ranges(stacks: &Ranges, statics: &Ranges, anon: &Ranges) -> Classifier {
        let slow = |addr: u64| {
            if stacks.contains(addr) {
                Segment::Stack
            } else if statics.contains(addr) {
                Segment::Static
            } else if anon.contains(addr) {
                Segment::Other
            } else {
                Segment::Heap
            }
        };
        let mut cuts: Vec<u64> = [stacks, statics, anon]
            .iter()
            .flat_map(|r| r.as_slice().iter().flat_map(|&(s, e)| [s, e]))
            .chain([0])
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut starts: Vec<u64> = Vec::with_capacity(cuts.len());
        let mut segs: Vec<Segment> = Vec::with_capacity(cuts.len());
        for c in cuts {
            let seg = slow(c);
            if segs.last() != Some(&seg) {
                starts.push(c);
                segs.push(seg);
            }
        }
        Classifier { starts, segs }
    }

    /// The interval of one segment that holds `addr` (for accesses through a pointer).
    #[inline]
    pub fn interval(&self, addr: u64) -> Interval {
        let i = self.starts.partition_point(|&s| s <= addr) - 1;
        Interval { start: self.starts[i], end: self.starts.get(i + 1).copied().unwrap_or(0), seg: self.segs[i] }
    }

    /// The segment of an access at `addr` whose instruction addresses memory as `hint` says.
    #[inline]
    pub fn classify(&self, hint: Hint, addr: u64) -> Segment {
        match hint {
            Hint::Tls => Segment::Other,
            Hint::Stack => Segment::Stack,
            Hint::Static => Segment::Static,
            Hint::Pointer => self.interval(addr).seg,
        }
    }
}

/// [`Classifier::classify`] remembering the last two intervals it looked up: a warp's pointer accesses go to
/// few places.
#[derive(Debug, Clone)]
pub struct ClassifyCache<'c> {
    classifier: &'c Classifier,
    recent: [Interval; 2],
}

impl<'c> ClassifyCache<'c> {
    pub fn new(classifier: &'c Classifier) -> ClassifyCache<'c> {
        let i = classifier.interval(0);
        ClassifyCache { classifier, recent: [i, i] }
    }

    #[inline(always)]
    pub fn classify(&mut self, hint: Hint, addr: u64) -> Segment {
        if hint != Hint::Pointer {
            return self.classifier.classify(hint, addr);
        }
        if self.recent[0].contains(addr) {
            return self.recent[0].seg;
        }
        self.classify_pointer(addr)
    }

    /// An access through a pointer outside the last interval looked up.
    #[inline(never)]
    fn classify_pointer(&mut self, addr: u64) -> Segment {
        if self.recent[1].contains(addr) {
            self.recent.swap(0, 1);
            return self.recent[0].seg;
        }
        let i = self.classifier.interval(addr);
        self.recent = [i, self.recent[0]];
        i.seg
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
    fn one_table_agrees_with_the_ranges() {
        let stacks = Ranges::new(vec![(0x7000, 0x8000), (0x9000, 0xa000)]);
        let statics = Ranges::new(vec![(0x1000, 0x2000), (0x7800, 0x9800)]);
        let anon = Ranges::new(vec![(0x1800, 0x3000), (u64::MAX - 16, u64::MAX)]);
        let c = Classifier::from_ranges(&stacks, &statics, &anon);
        let mut cache = ClassifyCache::new(&c);
        for addr in (0..0xb000).step_by(0x80).chain([0x6fff, 0x7fff, 0x9fff, u64::MAX - 17, u64::MAX - 1, u64::MAX]) {
            let want = if stacks.contains(addr) {
                Segment::Stack
            } else if statics.contains(addr) {
                Segment::Static
            } else if anon.contains(addr) {
                Segment::Other
            } else {
                Segment::Heap
            };
            assert_eq!(c.classify(Hint::Pointer, addr), want, "{addr:#x}");
            assert_eq!(cache.classify(Hint::Pointer, addr), want, "{addr:#x} (cached)");
            assert_eq!(cache.classify(Hint::Pointer, 0x7100), Segment::Stack);
        }
        assert_eq!(c.classify(Hint::Tls, 0x7100), Segment::Other);
    }

    #[test]
    fn pieces_split_at_words() {
        let mut v = Vec::new();
        local_pieces(6, 4, 1, 4, &mut v);
        // Offsets 6..10: bytes 2, 3 of word 1 and 0, 1 of word 2.
        assert_eq!(v, vec![((4 + 1) * 4 + 2, 2), ((2 * 4 + 1) * 4, 2)]);
    }
}
