//! Lock serialization (ThreadFuser, Section III).
//!
//! When the lanes of a warp call a lock-acquire primitive together, lanes
//! acquiring *different* locks may proceed in lock-step, but lanes competing
//! for the *same* lock must run their critical sections one after another.
//! [`lock_groups`] turns "lane `i` acquires lock `a`" into the groups to
//! serialize, and [`ReconvergenceStack::serialize`] /
//! [`CallStack::serialize`] push them, reconverging at the pc after the
//! unlock (ThreadFuser picks the matching unlock of one of the threads as
//! the reconvergence point).
//!
//! [`ReconvergenceStack::serialize`]: crate::ReconvergenceStack::serialize
//! [`CallStack::serialize`]: crate::CallStack::serialize

use crate::mask::{LaneMask, MAX_LANES};

/// Groups the `active` lanes for serialized execution of a critical section.
///
/// `acquisitions` lists `(lane, lock address)` pairs. Group `k` holds, for
/// every lock, the `k`-th lowest active lane acquiring it; lanes of
/// `active` that acquire nothing join group 0. So the number of groups is
/// the largest number of lanes contending for one lock (1 when there is no
/// contention), no two lanes of a group hold the same lock, and the groups
/// partition `active` (a valid argument for `serialize`). Lanes outside
/// `active` and repeated lanes (after the first pair) are ignored. Returns
/// no group when `active` is empty.
pub fn lock_groups<I>(active: LaneMask, acquisitions: I) -> Vec<LaneMask>
where
    I: IntoIterator<Item = (u32, u64)>,
{
    // (lock, lane) pairs, at most one per lane: a fixed array, no sort
    // allocation.
    let mut pairs = [(0u64, 0u32); MAX_LANES as usize];
    let mut n = 0;
    let mut seen = LaneMask::EMPTY;
    for (lane, lock) in acquisitions {
        if active.contains(lane) && !seen.contains(lane) {
            seen.insert(lane);
            pairs[n] = (lock, lane);
            n += 1;
        }
    }
    let pairs = &mut pairs[..n];
    pairs.sort_unstable();
    let mut groups = vec![active - seen];
    let mut rank = 0;
    let mut previous_lock = None;
    for &(lock, lane) in pairs.iter() {
        rank = if previous_lock == Some(lock) { rank + 1 } else { 0 };
        previous_lock = Some(lock);
        if rank == groups.len() {
            groups.push(LaneMask::EMPTY);
        }
        groups[rank].insert(lane);
    }
    if groups[0].is_empty() {
        // Every active lane acquires a lock, or nothing is active.
        groups.retain(|g| !g.is_empty());
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups() {
        let active = LaneMask::full(6);
        // Lanes 0,1,4 take lock A; lanes 2,3 take lock B; lane 5 takes none.
        let g = lock_groups(active, [(0, 0xA), (1, 0xA), (2, 0xB), (3, 0xB), (4, 0xA)]);
        assert_eq!(g, vec![LaneMask(0b10_0101), LaneMask(0b00_1010), LaneMask(0b01_0000)]);
        assert_eq!(lock_groups(LaneMask(0b11), [(0, 1), (1, 2)]), vec![LaneMask(0b11)]);
        assert!(lock_groups(LaneMask::EMPTY, [(0, 1)]).is_empty());
    }
}
