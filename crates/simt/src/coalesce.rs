//! Memory coalescing: how many memory transactions one warp memory
//! instruction needs.
//!
//! The input is the `(address, size in bytes)` of each active lane's access.
//! Memory is divided into aligned blocks of `granularity` bytes (a power of
//! two): 32-byte **sectors** ([`SECTOR_BYTES`], the unit ThreadFuser and
//! NVIDIA's profilers count) or 128-byte **cache lines**
//! ([`CACHE_LINE_BYTES`]). The warp needs one transaction per distinct block
//! touched by any byte of any access: lanes reading the same block share it,
//! and an access that straddles a block boundary touches two (or more, if it
//! is larger than a block).
//!
//! So 32 lanes reading consecutive 4-byte words touch 128 bytes = 4 sectors
//! (1 cache line); with 8-byte words, 8 sectors; with a stride of 32 bytes or
//! more, 32 sectors; all lanes at one address, 1 sector.
//!
//! Accesses of size 0 touch nothing (they still count in
//! [`Coalesced::accesses`]).
//!
//! The computation works on intervals of block numbers (one per access),
//! sorted and merged: `O(n log n)` for `n` accesses, independent of the
//! access sizes. Up to 64 accesses (a full warp) it allocates nothing; more
//! spill to the heap.

/// Bytes of a sector, the default transaction size.
pub const SECTOR_BYTES: u32 = 32;
/// Bytes of a cache line.
pub const CACHE_LINE_BYTES: u32 = 128;

/// The result of coalescing one warp memory instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Coalesced {
    /// Distinct aligned blocks touched.
    pub transactions: u64,
    /// Number of `(address, size)` accesses (active lanes).
    pub accesses: u64,
    /// Sum of the access sizes: the bytes the lanes asked for.
    pub bytes: u64,
}

/// Counts the transactions of one warp memory instruction at `granularity`
/// bytes.
///
/// # Panics
/// If `granularity` is not a power of two.
pub fn coalesce<I>(accesses: I, granularity: u32) -> Coalesced
where
    I: IntoIterator<Item = (u64, u32)>,
{
    let shift = shift_of(granularity);
    let (mut blocks, mut result) = collect(accesses, shift);
    result.transactions = count(blocks.merged());
    result
}

/// Like [`coalesce`], and also writes the base addresses of the touched
/// blocks, sorted and without duplicates, to `bases` (cleared first).
///
/// # Panics
/// If `granularity` is not a power of two.
pub fn coalesce_into<I>(accesses: I, granularity: u32, bases: &mut Vec<u64>) -> Coalesced
where
    I: IntoIterator<Item = (u64, u32)>,
{
    let shift = shift_of(granularity);
    let (mut blocks, mut result) = collect(accesses, shift);
    let merged = blocks.merged();
    result.transactions = count(merged);
    bases.clear();
    for &(first, last) in merged {
        bases.extend((first..=last).map(|block| block << shift));
    }
    result
}

/// Like [`coalesce`], with the block intervals in a caller-provided buffer: nothing is set up per call, for
/// loops that coalesce many small groups (a trace replayer). `scratch` is cleared first and left holding the
/// merged intervals of block numbers.
///
/// # Panics
/// If `granularity` is not a power of two.
#[inline]
pub fn coalesce_with<I>(accesses: I, granularity: u32, scratch: &mut Vec<(u64, u64)>) -> Coalesced
where
    I: IntoIterator<Item = (u64, u32)>,
{
    let shift = shift_of(granularity);
    let mut result = Coalesced::default();
    scratch.clear();
    for (address, size) in accesses {
        result.accesses += 1;
        result.bytes += u64::from(size);
        if size == 0 {
            continue;
        }
        let last_byte = address.saturating_add(u64::from(size) - 1);
        scratch.push((address >> shift, last_byte >> shift));
    }
    match scratch[..] {
        // One access (one lane, or a group a single lane left): nothing to merge.
        [(first, last)] => {
            result.transactions = (last - first).saturating_add(1);
            return result;
        }
        // Two (two lanes, the commonest group of lanes run together): their union, without sorting.
        [a, b] => {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let span = |(first, last): (u64, u64)| (last - first).saturating_add(1);
            result.transactions =
                if hi.0 <= lo.1 { span((lo.0, lo.1.max(hi.1))) } else { span(lo).saturating_add(span(hi)) };
            return result;
        }
        _ => {}
    }
    let n = merge_sorted(scratch);
    scratch.truncate(n);
    result.transactions = count(scratch);
    result
}

/// Number of distinct aligned `granularity`-byte transactions.
///
/// # Panics
/// If `granularity` is not a power of two.
pub fn transactions<I>(accesses: I, granularity: u32) -> u64
where
    I: IntoIterator<Item = (u64, u32)>,
{
    coalesce(accesses, granularity).transactions
}

/// Number of distinct 32-byte sectors.
pub fn sectors<I>(accesses: I) -> u64
where
    I: IntoIterator<Item = (u64, u32)>,
{
    transactions(accesses, SECTOR_BYTES)
}

/// Number of distinct 128-byte cache lines.
pub fn cache_lines<I>(accesses: I) -> u64
where
    I: IntoIterator<Item = (u64, u32)>,
{
    transactions(accesses, CACHE_LINE_BYTES)
}

#[inline]
fn shift_of(granularity: u32) -> u32 {
    assert!(granularity.is_power_of_two(), "transaction size must be a power of two, got {granularity}");
    granularity.trailing_zeros()
}

fn collect<I>(accesses: I, shift: u32) -> (Intervals, Coalesced)
where
    I: IntoIterator<Item = (u64, u32)>,
{
    let mut blocks = Intervals::new();
    let mut result = Coalesced::default();
    for (address, size) in accesses {
        result.accesses += 1;
        result.bytes += u64::from(size);
        if size == 0 {
            continue;
        }
        let last_byte = address.saturating_add(u64::from(size) - 1);
        blocks.push((address >> shift, last_byte >> shift));
    }
    (blocks, result)
}

fn count(merged: &[(u64, u64)]) -> u64 {
    merged.iter().fold(0u64, |acc, &(first, last)| acc.saturating_add((last - first).saturating_add(1)))
}

/// Sorts `all` and merges overlapping or adjacent intervals into its first `n` elements; returns `n`.
fn merge_sorted(all: &mut [(u64, u64)]) -> usize {
    all.sort_unstable();
    let mut write = 0;
    for read in 0..all.len() {
        let (first, last) = all[read];
        if write > 0 && first <= all[write - 1].1.saturating_add(1) {
            if last > all[write - 1].1 {
                all[write - 1].1 = last;
            }
        } else {
            all[write] = (first, last);
            write += 1;
        }
    }
    write
}

const INLINE: usize = 64;

/// Closed intervals `[first, last]` of block (or word) numbers: inline up to
/// 64, then on the heap.
pub(crate) struct Intervals {
    inline: [(u64, u64); INLINE],
    len: usize,
    heap: Vec<(u64, u64)>,
}

impl Intervals {
    pub(crate) fn new() -> Self {
        Intervals { inline: [(0, 0); INLINE], len: 0, heap: Vec::new() }
    }

    pub(crate) fn push(&mut self, interval: (u64, u64)) {
        debug_assert!(interval.0 <= interval.1);
        if self.heap.is_empty() && self.len < INLINE {
            self.inline[self.len] = interval;
            self.len += 1;
        } else {
            if self.heap.is_empty() {
                self.heap.extend_from_slice(&self.inline[..self.len]);
            }
            self.heap.push(interval);
        }
    }

    /// Sorts and merges overlapping or adjacent intervals in place; returns
    /// disjoint, non-adjacent intervals in increasing order.
    pub(crate) fn merged(&mut self) -> &[(u64, u64)] {
        let all: &mut [(u64, u64)] = if self.heap.is_empty() { &mut self.inline[..self.len] } else { &mut self.heap };
        let n = merge_sorted(all);
        &all[..n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_and_spill() {
        let mut iv = Intervals::new();
        for i in (0..100u64).rev() {
            iv.push((2 * i, 2 * i));
        }
        iv.push((5, 20));
        iv.push((u64::MAX - 1, u64::MAX));
        let m = iv.merged().to_vec();
        assert_eq!(m[0], (0, 0));
        assert_eq!(m[1], (2, 2));
        assert_eq!(m[2], (4, 20));
        assert_eq!(m[3], (22, 22));
        assert_eq!(*m.last().unwrap(), (u64::MAX - 1, u64::MAX));
        assert_eq!(count(&m), 2 + 17 + (100 - 11) + 2);
    }

    #[test]
    fn with_scratch_agrees() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut scratch = Vec::new();
        for k in 0..2000 {
            // Half of the cases with up to three accesses (the shortcuts for one and two).
            let n = if k % 2 == 0 { rng.usize(0..4) } else { rng.usize(0..80) };
            let acc: Vec<(u64, u32)> =
                (0..n).map(|_| (rng.u64(0..4096), [0, 1, 4, 8, 16, 40][rng.usize(0..6)])).collect();
            for g in [1, 32, 128] {
                assert_eq!(coalesce_with(acc.iter().copied(), g, &mut scratch), coalesce(acc.iter().copied(), g));
            }
        }
    }

    #[test]
    fn end_of_address_space() {
        assert_eq!(sectors([(u64::MAX - 3, 8)]), 1);
        assert_eq!(sectors([(u64::MAX - 40, 64)]), 2);
    }
}
