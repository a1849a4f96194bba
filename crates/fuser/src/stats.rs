//! Counters of the replay: per warp, merged over warps.

use rustc_hash::{FxHashMap, FxHashSet};
use simt::{Efficiency, MemoryStats};
use trace::LockKind;

use crate::memory::SEGMENTS;

/// Counters of one function (its own instructions, callees excluded).
#[derive(Debug, Default, Clone)]
pub struct FnStats {
    pub eff: Efficiency,
    pub mem: [MemoryStats; SEGMENTS],
    /// Thread instructions skipped (system calls, excluded functions, lock spinning) in its frames.
    pub skipped: u64,
}

impl FnStats {
    pub fn merge(&mut self, o: &FnStats) {
        self.eff += o.eff;
        for (a, b) in self.mem.iter_mut().zip(&o.mem) {
            *a += *b;
        }
        self.skipped += o.skipped;
    }
}

/// Counters of one lock site: the block where lanes continue after acquiring.
#[derive(Debug, Clone)]
pub struct LockStats {
    pub kind: LockKind,
    /// Lane acquisitions.
    pub acquisitions: u64,
    /// Times lanes of a warp acquired together and had to be serialized.
    pub contended: u64,
    /// Most groups one acquisition was split into (= most lanes of a warp on one lock).
    pub max_groups: u32,
    /// Warp instructions run by the 2nd, 3rd, ... group: what serialization costs.
    pub serialized_warp_insns: u64,
    /// Warp instructions run by all groups while serialized.
    pub critical_warp_insns: u64,
    /// Distinct lock addresses acquired here (at most [`MAX_LOCK_ADDRS`] kept).
    pub addrs: FxHashSet<u64>,
}

/// How many distinct lock addresses a site remembers.
pub const MAX_LOCK_ADDRS: usize = 4096;

impl LockStats {
    pub fn new(kind: LockKind) -> LockStats {
        LockStats {
            kind,
            acquisitions: 0,
            contended: 0,
            max_groups: 0,
            serialized_warp_insns: 0,
            critical_warp_insns: 0,
            addrs: FxHashSet::default(),
        }
    }

    fn merge(&mut self, o: &LockStats) {
        self.acquisitions += o.acquisitions;
        self.contended += o.contended;
        self.max_groups = self.max_groups.max(o.max_groups);
        self.serialized_warp_insns += o.serialized_warp_insns;
        self.critical_warp_insns += o.critical_warp_insns;
        for &a in &o.addrs {
            if self.addrs.len() >= MAX_LOCK_ADDRS {
                break;
            }
            self.addrs.insert(a);
        }
    }
}

/// One warp's totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpSummary {
    pub index: u32,
    pub lanes: u32,
    pub eff: Efficiency,
}

/// Everything the replay counts.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub eff: Efficiency,
    pub funcs: FxHashMap<u32, FnStats>,
    /// Per basic block (function, start address).
    pub blocks: FxHashMap<(u32, u64), Efficiency>,
    pub mem: [MemoryStats; SEGMENTS],
    /// Thread instructions skipped, by [`trace::SkipKind`].
    pub skipped: [u64; 3],
    /// Skipped regions (system calls, excluded calls, spinning lock calls), by [`trace::SkipKind`].
    pub skip_regions: [u64; 3],
    pub locks: FxHashMap<(u32, u64), LockStats>,
    /// Lock releases seen.
    pub lock_releases: u64,
    /// Times lanes were found somewhere the stack did not expect and were moved there (returns to other places
    /// than the return site, `longjmp`...).
    pub resyncs: u64,
    pub errors: Vec<String>,
    /// Deepest reconvergence stack (entries of all frames).
    pub max_depth: usize,
    pub warps: Vec<WarpSummary>,
}

impl Stats {
    pub fn func(&mut self, f: u32) -> &mut FnStats {
        self.funcs.entry(f).or_default()
    }

    pub fn merge(mut self, o: Stats) -> Stats {
        self.eff += o.eff;
        for (f, s) in &o.funcs {
            self.funcs.entry(*f).or_default().merge(s);
        }
        for (k, e) in &o.blocks {
            *self.blocks.entry(*k).or_default() += *e;
        }
        for (a, b) in self.mem.iter_mut().zip(&o.mem) {
            *a += *b;
        }
        for (a, b) in self.skipped.iter_mut().zip(&o.skipped) {
            *a += *b;
        }
        for (a, b) in self.skip_regions.iter_mut().zip(&o.skip_regions) {
            *a += *b;
        }
        for (k, l) in &o.locks {
            self.locks.entry(*k).or_insert_with(|| LockStats::new(l.kind)).merge(l);
        }
        self.lock_releases += o.lock_releases;
        self.resyncs += o.resyncs;
        self.errors.extend(o.errors);
        self.max_depth = self.max_depth.max(o.max_depth);
        self.warps.extend(o.warps);
        self
    }
}
