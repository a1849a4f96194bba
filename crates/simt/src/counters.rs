//! SIMT efficiency, divergence and memory accounting.
//!
//! * [`Efficiency`]: thread vs. warp instruction counts, whose ratio is the
//!   SIMT (control) efficiency of ThreadFuser's Eq. 1:
//!   `thread instructions / (warp instructions × warp size)`.
//! * [`Divergence`]: per branch site, how often it ran, how often it split
//!   the warp, and a histogram of active-lane counts.
//! * [`MemoryStats`]: warp memory instructions, transactions and requested
//!   bytes, split into loads and stores, fed from [`crate::coalesce`].
//! * [`ByKey`] and [`Dense`]: collections of any of these per function, per
//!   pc, per branch site... ([`EfficiencyBy`], [`DivergenceBy`]).
//!
//! All counters are plain integers, `Default` is zero, and they merge with
//! `+=` (e.g. to sum warps, or per-thread-pool partial results).

use std::collections::hash_map::{self, HashMap};
use std::hash::Hash;
use std::iter::Sum;
use std::ops::{Add, AddAssign};

use crate::coalesce::Coalesced;
use crate::mask::LaneMask;

/// Thread and warp instruction counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Efficiency {
    /// Instructions executed by individual lanes (sum of active lanes).
    pub thread_instructions: u64,
    /// Instructions issued by the warp (in lock-step).
    pub warp_instructions: u64,
}

impl Efficiency {
    /// Zero counts.
    pub const fn new() -> Self {
        Efficiency { thread_instructions: 0, warp_instructions: 0 }
    }

    /// One warp instruction executed by `active_lanes` lanes.
    #[inline]
    pub fn record(&mut self, active_lanes: u32) {
        self.thread_instructions += u64::from(active_lanes);
        self.warp_instructions += 1;
    }

    /// One warp instruction executed by the lanes of `mask`.
    #[inline]
    pub fn record_mask(&mut self, mask: LaneMask) {
        self.record(mask.count());
    }

    /// `instructions` warp instructions (e.g. a basic block) executed by
    /// `active_lanes` lanes each.
    #[inline]
    pub fn record_many(&mut self, active_lanes: u32, instructions: u64) {
        self.thread_instructions += u64::from(active_lanes) * instructions;
        self.warp_instructions += instructions;
    }

    /// SIMT efficiency, `thread / (warp × warp_size)`, in `0..=1` when every
    /// record had at most `warp_size` lanes. `None` when nothing was
    /// recorded or `warp_size` is 0.
    pub fn ratio(&self, warp_size: u32) -> Option<f64> {
        let slots = self.warp_instructions as f64 * f64::from(warp_size);
        (slots > 0.0).then(|| self.thread_instructions as f64 / slots)
    }

    /// Average active lanes per warp instruction; `None` when nothing was
    /// recorded.
    pub fn average_active_lanes(&self) -> Option<f64> {
        (self.warp_instructions > 0).then(|| self.thread_instructions as f64 / self.warp_instructions as f64)
    }
}

impl AddAssign for Efficiency {
    fn add_assign(&mut self, rhs: Efficiency) {
        self.thread_instructions += rhs.thread_instructions;
        self.warp_instructions += rhs.warp_instructions;
    }
}

impl Add for Efficiency {
    type Output = Efficiency;
    fn add(mut self, rhs: Efficiency) -> Efficiency {
        self += rhs;
        self
    }
}

impl Sum for Efficiency {
    fn sum<I: Iterator<Item = Efficiency>>(iter: I) -> Efficiency {
        iter.fold(Efficiency::new(), Add::add)
    }
}

impl<'a> Sum<&'a Efficiency> for Efficiency {
    fn sum<I: Iterator<Item = &'a Efficiency>>(iter: I) -> Efficiency {
        iter.copied().sum()
    }
}

/// Statistics of one branch site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Divergence {
    /// Times the branch was executed by the warp.
    pub executed: u64,
    /// Times the active lanes disagreed.
    pub diverged: u64,
    /// `active_lanes[n]`: times the branch was executed with `n` active
    /// lanes (counts above 64 land in the last bucket).
    pub active_lanes: [u64; 65],
}

impl Default for Divergence {
    fn default() -> Self {
        Divergence { executed: 0, diverged: 0, active_lanes: [0; 65] }
    }
}

impl Divergence {
    /// Zero counts.
    pub fn new() -> Self {
        Self::default()
    }

    /// One execution with `active_lanes` lanes, divergent or not.
    #[inline]
    pub fn record(&mut self, active_lanes: u32, diverged: bool) {
        self.executed += 1;
        self.diverged += u64::from(diverged);
        self.active_lanes[active_lanes.min(64) as usize] += 1;
    }

    /// One execution of a two-way branch by the lanes of `active`, of which
    /// those in `taken` take it (bits outside `active` are ignored). Returns
    /// whether it diverged.
    #[inline]
    pub fn record_branch(&mut self, active: LaneMask, taken: LaneMask) -> bool {
        let taken = taken & active;
        let diverged = !taken.is_empty() && taken != active;
        self.record(active.count(), diverged);
        diverged
    }

    /// `diverged / executed`; `None` if never executed.
    pub fn divergence_rate(&self) -> Option<f64> {
        (self.executed > 0).then(|| self.diverged as f64 / self.executed as f64)
    }

    /// Mean number of active lanes per execution; `None` if never executed.
    pub fn mean_active_lanes(&self) -> Option<f64> {
        let lanes: u64 = self.active_lanes.iter().enumerate().map(|(n, &times)| n as u64 * times).sum();
        (self.executed > 0).then(|| lanes as f64 / self.executed as f64)
    }
}

impl AddAssign for Divergence {
    fn add_assign(&mut self, rhs: Divergence) {
        self.executed += rhs.executed;
        self.diverged += rhs.diverged;
        for (a, b) in self.active_lanes.iter_mut().zip(rhs.active_lanes) {
            *a += b;
        }
    }
}

impl Add for Divergence {
    type Output = Divergence;
    fn add(mut self, rhs: Divergence) -> Divergence {
        self += rhs;
        self
    }
}

/// Counters of one kind of memory access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AccessStats {
    /// Warp memory instructions.
    pub warp_accesses: u64,
    /// Transactions (sectors, lines...) they needed.
    pub transactions: u64,
    /// Bytes requested by the lanes (sum of access sizes).
    pub bytes: u64,
}

impl AccessStats {
    /// One warp memory instruction, as coalesced by
    /// [`crate::coalesce::coalesce`].
    #[inline]
    pub fn record(&mut self, coalesced: &Coalesced) {
        self.warp_accesses += 1;
        self.transactions += coalesced.transactions;
        self.bytes += coalesced.bytes;
    }

    /// Average transactions per warp memory instruction (the "memory
    /// divergence" of ThreadFuser); `None` if nothing was recorded.
    pub fn transactions_per_access(&self) -> Option<f64> {
        (self.warp_accesses > 0).then(|| self.transactions as f64 / self.warp_accesses as f64)
    }
}

impl AddAssign for AccessStats {
    fn add_assign(&mut self, rhs: AccessStats) {
        self.warp_accesses += rhs.warp_accesses;
        self.transactions += rhs.transactions;
        self.bytes += rhs.bytes;
    }
}

impl Add for AccessStats {
    type Output = AccessStats;
    fn add(mut self, rhs: AccessStats) -> AccessStats {
        self += rhs;
        self
    }
}

/// Load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessKind {
    /// A read.
    Load,
    /// A write (atomics can be counted as stores or kept apart with
    /// [`ByKey`]).
    Store,
}

/// Memory counters split into loads and stores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemoryStats {
    /// Loads.
    pub loads: AccessStats,
    /// Stores.
    pub stores: AccessStats,
}

impl MemoryStats {
    /// One warp memory instruction of `kind`.
    #[inline]
    pub fn record(&mut self, kind: AccessKind, coalesced: &Coalesced) {
        self.get_mut(kind).record(coalesced);
    }

    /// The counters of `kind`.
    pub fn get(&self, kind: AccessKind) -> &AccessStats {
        match kind {
            AccessKind::Load => &self.loads,
            AccessKind::Store => &self.stores,
        }
    }

    /// The counters of `kind`, mutably.
    pub fn get_mut(&mut self, kind: AccessKind) -> &mut AccessStats {
        match kind {
            AccessKind::Load => &mut self.loads,
            AccessKind::Store => &mut self.stores,
        }
    }

    /// Loads and stores together.
    pub fn total(&self) -> AccessStats {
        self.loads + self.stores
    }

    /// Transactions per warp memory instruction over loads and stores.
    pub fn transactions_per_access(&self) -> Option<f64> {
        self.total().transactions_per_access()
    }
}

impl AddAssign for MemoryStats {
    fn add_assign(&mut self, rhs: MemoryStats) {
        self.loads += rhs.loads;
        self.stores += rhs.stores;
    }
}

impl Add for MemoryStats {
    type Output = MemoryStats;
    fn add(mut self, rhs: MemoryStats) -> MemoryStats {
        self += rhs;
        self
    }
}

/// Counters of type `V` per key `K` (function, branch pc, lock...), in a
/// `HashMap`. Absent keys read as zero.
#[derive(Clone, Debug)]
pub struct ByKey<K, V> {
    map: HashMap<K, V>,
}

impl<K: Hash + Eq, V: PartialEq> PartialEq for ByKey<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.map == other.map
    }
}

impl<K: Hash + Eq, V: Eq> Eq for ByKey<K, V> {}

/// [`Efficiency`] per key (e.g. per function, ThreadFuser's per-function
/// report).
pub type EfficiencyBy<K> = ByKey<K, Efficiency>;
/// [`Divergence`] per branch site.
pub type DivergenceBy<K> = ByKey<K, Divergence>;

impl<K, V> Default for ByKey<K, V> {
    fn default() -> Self {
        ByKey { map: HashMap::new() }
    }
}

impl<K: Hash + Eq, V: Default> ByKey<K, V> {
    /// No counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// The counters of `key`, created at zero if absent.
    #[inline]
    pub fn entry(&mut self, key: K) -> &mut V {
        self.map.entry(key).or_default()
    }

    /// The counters of `key`, if any were created.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Keys and counters, in unspecified order.
    pub fn iter(&self) -> hash_map::Iter<'_, K, V> {
        self.map.iter()
    }

    /// Keys and counters sorted by key.
    pub fn sorted(&self) -> Vec<(&K, &V)>
    where
        K: Ord,
    {
        let mut all: Vec<_> = self.map.iter().collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        all
    }

    /// The sum over all keys.
    pub fn total(&self) -> V
    where
        V: Clone + AddAssign,
    {
        let mut total = V::default();
        for v in self.map.values() {
            total += v.clone();
        }
        total
    }

    /// Adds the counters of `other` to those of `self`, key by key.
    pub fn merge(&mut self, other: &Self)
    where
        K: Clone,
        V: Clone + AddAssign,
    {
        for (k, v) in &other.map {
            *self.entry(k.clone()) += v.clone();
        }
    }
}

impl<K: Hash + Eq> ByKey<K, Efficiency> {
    /// One warp instruction of `key` executed by `active_lanes` lanes.
    #[inline]
    pub fn record(&mut self, key: K, active_lanes: u32) {
        self.entry(key).record(active_lanes);
    }

    /// `(key, efficiency ratio)` sorted by decreasing warp instructions, the
    /// order of a "where does the time go" report.
    pub fn report(&self, warp_size: u32) -> Vec<(&K, Efficiency, Option<f64>)> {
        let mut rows: Vec<_> = self.map.iter().map(|(k, e)| (k, *e, e.ratio(warp_size))).collect();
        rows.sort_by_key(|row| std::cmp::Reverse(row.1.warp_instructions));
        rows
    }
}

impl<K: Hash + Eq> ByKey<K, Divergence> {
    /// One execution of branch `key`; see [`Divergence::record_branch`].
    #[inline]
    pub fn record_branch(&mut self, key: K, active: LaneMask, taken: LaneMask) -> bool {
        self.entry(key).record_branch(active, taken)
    }
}

impl<K: Hash + Eq, V: Default + AddAssign> AddAssign for ByKey<K, V> {
    fn add_assign(&mut self, rhs: Self) {
        for (k, v) in rhs.map {
            *self.entry(k) += v;
        }
    }
}

impl<K: Hash + Eq, V: Default> Extend<(K, V)> for ByKey<K, V>
where
    V: AddAssign,
{
    /// Adds each `(key, counters)` to the counters of `key`.
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            *self.entry(k) += v;
        }
    }
}

impl<'a, K, V> IntoIterator for &'a ByKey<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = hash_map::Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.iter()
    }
}

/// Counters of type `V` per dense index (e.g. per instruction index in a
/// kernel), in a `Vec` that grows on demand: faster than [`ByKey`] in an
/// interpreter's inner loop.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dense<V> {
    values: Vec<V>,
}

impl<V: Default> Dense<V> {
    /// No counters.
    pub fn new() -> Self {
        Dense { values: Vec::new() }
    }

    /// Counters for indices `0..len`, preallocated.
    pub fn with_len(len: usize) -> Self {
        let mut values = Vec::with_capacity(len);
        values.resize_with(len, V::default);
        Dense { values }
    }

    /// The counters of `index`, growing the table if needed.
    #[inline]
    pub fn entry(&mut self, index: usize) -> &mut V {
        if index >= self.values.len() {
            self.values.resize_with(index + 1, V::default);
        }
        &mut self.values[index]
    }

    /// The counters of `index`, if the table reaches it.
    pub fn get(&self, index: usize) -> Option<&V> {
        self.values.get(index)
    }

    /// All counters, by index.
    pub fn as_slice(&self) -> &[V] {
        &self.values
    }

    /// The sum over all indices.
    pub fn total(&self) -> V
    where
        V: Clone + AddAssign,
    {
        let mut total = V::default();
        for v in &self.values {
            total += v.clone();
        }
        total
    }
}

impl Dense<Efficiency> {
    /// One warp instruction at `index` executed by `active_lanes` lanes.
    #[inline]
    pub fn record(&mut self, index: usize, active_lanes: u32) {
        self.entry(index).record(active_lanes);
    }
}

impl<V: Default + AddAssign> AddAssign for Dense<V> {
    fn add_assign(&mut self, rhs: Self) {
        for (i, v) in rhs.values.into_iter().enumerate() {
            *self.entry(i) += v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_and_merge() {
        let mut e = Efficiency::new();
        assert_eq!(e.ratio(32), None);
        e.record(32);
        e.record(16);
        assert_eq!(e.ratio(32), Some(0.75));
        assert_eq!(e.average_active_lanes(), Some(24.0));
        let mut by: EfficiencyBy<&str> = ByKey::new();
        by.record("f", 4);
        by.record("g", 2);
        by.record("f", 2);
        let mut other = EfficiencyBy::new();
        other.record("g", 4);
        by.merge(&other);
        assert_eq!(by.get(&"f").unwrap().thread_instructions, 6);
        assert_eq!(by.get(&"g").unwrap().warp_instructions, 2);
        assert_eq!(by.total().thread_instructions, 12);
        assert_eq!(by.report(4)[0].1.warp_instructions, 2);
    }

    #[test]
    fn divergence() {
        let mut d = Divergence::new();
        assert!(!d.record_branch(LaneMask(0b1111), LaneMask(0b1111)));
        assert!(d.record_branch(LaneMask(0b1111), LaneMask(0b0101)));
        assert!(!d.record_branch(LaneMask(0b0011), LaneMask(0b1100)));
        assert_eq!((d.executed, d.diverged), (3, 1));
        assert_eq!(d.active_lanes[4], 2);
        assert_eq!(d.active_lanes[2], 1);
        assert_eq!(d.mean_active_lanes(), Some(10.0 / 3.0));
    }

    #[test]
    fn memory() {
        let mut m = MemoryStats::default();
        m.record(AccessKind::Load, &crate::coalesce::coalesce((0..32).map(|i| (4 * i, 4)), 32));
        m.record(AccessKind::Store, &crate::coalesce::coalesce((0..32).map(|i| (32 * i, 4)), 32));
        assert_eq!(m.loads.transactions, 4);
        assert_eq!(m.stores.transactions, 32);
        assert_eq!(m.loads.bytes, 128);
        assert_eq!(m.transactions_per_access(), Some(18.0));
        let mut dense = Dense::new();
        dense.record(3, 7);
        assert_eq!(dense.as_slice().len(), 4);
        assert_eq!(dense.total().thread_instructions, 7);
    }
}
