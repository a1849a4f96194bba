//! Execution statistics of one kernel launch, as both engines report them (`--stats`, and inside `--json`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::launch::Dim3;

/// Statistics of one launch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    pub kernel: String,
    pub grid: Option<Dim3>,
    pub block: Option<Dim3>,
    pub warp_size: u32,
    pub ctas: u64,
    pub warps: u64,
    pub threads: u64,
    /// Instructions executed by single threads (a warp instruction with k active lanes counts k).
    pub thread_instructions: u64,
    /// Instructions issued by warps.
    pub warp_instructions: u64,
    /// thread_instructions / (warp_instructions × warp_size): Eq. 1 of the ThreadFuser paper.
    pub simt_efficiency: f64,
    /// Per function (kernel and device functions), counting each function's own instructions only.
    pub functions: Vec<FunctionStats>,
    /// Every conditional branch that executed, with how often the warp split there.
    pub branches: Vec<BranchStats>,
    pub memory: MemoryStats,
    /// Thread instructions per opcode.
    pub instruction_mix: BTreeMap<String, u64>,
    pub transit: TransitParams,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionStats {
    pub name: String,
    pub thread_instructions: u64,
    pub warp_instructions: u64,
    pub simt_efficiency: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BranchStats {
    pub function: String,
    /// 1-based PTX line of the branch.
    pub line: u32,
    pub instruction: String,
    /// Warp executions of the branch.
    pub executed: u64,
    /// Executions where the active lanes went both ways.
    pub diverged: u64,
    /// Mean number of active lanes when executed.
    pub mean_active_lanes: f64,
}

/// Coalescing of one kind of access: how many transactions a warp memory instruction needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AccessStats {
    /// Warp memory instructions.
    pub warp_accesses: u64,
    /// Aligned transactions (sectors) touched, summed over the warp accesses.
    pub transactions: u64,
    /// Bytes the lanes asked for.
    pub bytes: u64,
    pub transactions_per_access: f64,
}

impl AccessStats {
    pub fn record(&mut self, transactions: u64, bytes: u64) {
        self.warp_accesses += 1;
        self.transactions += transactions;
        self.bytes += bytes;
    }

    pub fn finish(&mut self) {
        self.transactions_per_access =
            if self.warp_accesses == 0 { 0.0 } else { self.transactions as f64 / self.warp_accesses as f64 };
    }
}

/// Shared-memory accesses and their bank conflicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedStats {
    pub warp_accesses: u64,
    /// Serialized bank wavefronts (1 per conflict-free access).
    pub wavefronts: u64,
    /// wavefronts − warp_accesses.
    pub bank_conflicts: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryStats {
    /// Size of a transaction (sector) in bytes.
    pub transaction_bytes: u32,
    pub global_loads: AccessStats,
    pub global_stores: AccessStats,
    pub global_atomics: AccessStats,
    pub local_loads: AccessStats,
    pub local_stores: AccessStats,
    pub const_loads: AccessStats,
    pub shared: SharedStats,
}

/// The transit model's workload parameters, measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TransitParams {
    /// Z: warp instructions issued per global-memory transaction (loads, stores and atomics), the paper's
    /// "instructions issued / memory requests" at warp granularity.
    pub instructions_per_transaction: f64,
    /// Thread instructions per global-memory transaction.
    pub thread_instructions_per_transaction: f64,
    /// n: threads resident at once. The emulator keeps every launched thread resident, so this is the
    /// launch's thread count; a machine profile caps it at the machine's capacity.
    pub resident_threads: u64,
    pub threads_per_cta: u64,
}

impl AccessStats {
    fn add(&mut self, other: &AccessStats) {
        self.warp_accesses += other.warp_accesses;
        self.transactions += other.transactions;
        self.bytes += other.bytes;
    }
}

impl KernelStats {
    /// Adds another launch's counts (of the same kernel) to these, then recomputes the ratios: the statistics
    /// of several launches together. Shapes that differ between launches are dropped (`grid`, `block`);
    /// resident threads and threads per CTA keep the largest launch's.
    pub fn add(&mut self, other: &KernelStats) {
        if self.kernel.is_empty() {
            self.kernel = other.kernel.clone();
        }
        if self.grid != other.grid {
            self.grid = None;
        }
        if self.block != other.block {
            self.block = None;
        }
        self.warp_size = self.warp_size.max(other.warp_size);
        self.ctas += other.ctas;
        self.warps += other.warps;
        self.threads += other.threads;
        self.thread_instructions += other.thread_instructions;
        self.warp_instructions += other.warp_instructions;
        for f in &other.functions {
            match self.functions.iter_mut().find(|g| g.name == f.name) {
                Some(g) => {
                    g.thread_instructions += f.thread_instructions;
                    g.warp_instructions += f.warp_instructions;
                }
                None => self.functions.push(f.clone()),
            }
        }
        for b in &other.branches {
            match self.branches.iter_mut().find(|c| c.function == b.function && c.line == b.line) {
                Some(c) => {
                    let executed = c.executed + b.executed;
                    if executed > 0 {
                        c.mean_active_lanes = (c.mean_active_lanes * c.executed as f64
                            + b.mean_active_lanes * b.executed as f64)
                            / executed as f64;
                    }
                    c.executed = executed;
                    c.diverged += b.diverged;
                }
                None => self.branches.push(b.clone()),
            }
        }
        let (m, o) = (&mut self.memory, &other.memory);
        m.transaction_bytes = m.transaction_bytes.max(o.transaction_bytes);
        m.global_loads.add(&o.global_loads);
        m.global_stores.add(&o.global_stores);
        m.global_atomics.add(&o.global_atomics);
        m.local_loads.add(&o.local_loads);
        m.local_stores.add(&o.local_stores);
        m.const_loads.add(&o.const_loads);
        m.shared.warp_accesses += o.shared.warp_accesses;
        m.shared.wavefronts += o.shared.wavefronts;
        for (op, n) in &other.instruction_mix {
            *self.instruction_mix.entry(op.clone()).or_default() += n;
        }
        self.transit.resident_threads = self.transit.resident_threads.max(other.transit.resident_threads);
        self.transit.threads_per_cta = self.transit.threads_per_cta.max(other.transit.threads_per_cta);
        self.finish();
    }

    /// Fills the derived ratios from the counts.
    pub fn finish(&mut self) {
        let ws = f64::from(self.warp_size.max(1));
        self.simt_efficiency = ratio(self.thread_instructions, self.warp_instructions, ws);
        for f in &mut self.functions {
            f.simt_efficiency = ratio(f.thread_instructions, f.warp_instructions, ws);
        }
        let m = &mut self.memory;
        for a in [
            &mut m.global_loads,
            &mut m.global_stores,
            &mut m.global_atomics,
            &mut m.local_loads,
            &mut m.local_stores,
            &mut m.const_loads,
        ] {
            a.finish();
        }
        m.shared.bank_conflicts = m.shared.wavefronts.saturating_sub(m.shared.warp_accesses);
        let transactions = m.global_loads.transactions + m.global_stores.transactions + m.global_atomics.transactions;
        let per = |x: u64| if transactions == 0 { 0.0 } else { x as f64 / transactions as f64 };
        self.transit.instructions_per_transaction = per(self.warp_instructions);
        self.transit.thread_instructions_per_transaction = per(self.thread_instructions);
    }
}

fn ratio(thread: u64, warp: u64, warp_size: f64) -> f64 {
    if warp == 0 {
        0.0
    } else {
        thread as f64 / (warp as f64 * warp_size)
    }
}
