//! Statistics collection during a launch: instruction counts per op (from which per-function efficiency
//! and the instruction mix follow), branch divergence, and memory coalescing and bank conflicts.

use std::collections::BTreeMap;

use device::stats::{BranchStats, FunctionStats, KernelStats};
use ir::FuncId;
use simt::LaneMask;

use crate::mem::resolve_generic;
use program::WARP;
use program::{Op, Program, Space};

/// Transaction (sector) size for coalescing.
pub const SECTOR: u32 = 32;

#[derive(Default)]
pub struct Collector {
    pub ctas: u64,
    pub warps: u64,
    /// `[thread instructions, warp instructions]` per function, per op.
    per_op: Vec<Vec<[u64; 2]>>,
    /// `[executed, diverged, active lanes summed]` per branch op.
    branches: BTreeMap<(u32, u32), [u64; 3]>,
    memory: device::stats::MemoryStats,
}

impl Collector {
    pub fn new(programs: &[Option<Program>]) -> Collector {
        let per_op = programs.iter().map(|p| vec![[0; 2]; p.as_ref().map_or(0, |p| p.ops.len() + 1)]).collect();
        let mut c = Collector { per_op, ..Collector::default() };
        c.memory.transaction_bytes = SECTOR;
        c
    }

    #[inline]
    pub fn instruction(&mut self, f: FuncId, opi: u32, active: u32) {
        if let Some(slot) = self.per_op.get_mut(f.as_u32() as usize).and_then(|v| v.get_mut(opi as usize)) {
            slot[0] += u64::from(active);
            slot[1] += 1;
        }
    }

    pub fn branch(&mut self, f: FuncId, opi: u32, active: LaneMask, taken: LaneMask) {
        let e = self.branches.entry((f.as_u32(), opi)).or_default();
        e[0] += 1;
        if !taken.is_empty() && taken != active {
            e[1] += 1;
        }
        e[2] += u64::from(active.count());
    }

    /// A load or store of `size` bytes per lane.
    #[allow(clippy::too_many_arguments)]
    pub fn memory(
        &mut self,
        _op: &Op,
        space: Space,
        load: bool,
        exec: LaneMask,
        addrs: &[u64; WARP],
        size: u32,
        _shared: &[u8],
    ) {
        let (space, addrs) = resolve_all(space, exec, addrs);
        let m = &mut self.memory;
        match space {
            Space::Global | Space::Const => {
                let c = simt::coalesce::coalesce(exec.iter().map(|l| (addrs[l as usize], size)), SECTOR);
                let target = match (space, load) {
                    (Space::Const, _) => &mut m.const_loads,
                    (_, true) => &mut m.global_loads,
                    (_, false) => &mut m.global_stores,
                };
                target.record(c.transactions, c.bytes);
            }
            Space::Shared => {
                let r = simt::bank_conflicts(exec.iter().map(|l| (addrs[l as usize], size)));
                m.shared.warp_accesses += 1;
                m.shared.wavefronts += r.wavefronts;
            }
            Space::Local => {
                // Local memory is interleaved across the lanes of a warp in 4-byte words, as on NVIDIA GPUs.
                let interleaved = exec.iter().flat_map(|l| {
                    let a = addrs[l as usize];
                    (0..size.div_ceil(4)).map(move |k| {
                        let word = a / 4 + u64::from(k);
                        (word * 4 * WARP as u64 + u64::from(l) * 4, 4u32)
                    })
                });
                let c = simt::coalesce::coalesce(interleaved, SECTOR);
                let target = if load { &mut m.local_loads } else { &mut m.local_stores };
                target.record(c.transactions, c.bytes);
            }
            Space::Param | Space::Generic => {}
        }
    }

    pub fn atomic(&mut self, _op: &Op, space: Space, exec: LaneMask, addrs: &[u64; WARP], size: u32) {
        let (space, addrs) = resolve_all(space, exec, addrs);
        match space {
            Space::Global => {
                let c = simt::coalesce::coalesce(exec.iter().map(|l| (addrs[l as usize], size)), SECTOR);
                self.memory.global_atomics.record(c.transactions, c.bytes);
            }
            Space::Shared => {
                let r = simt::bank_conflicts(exec.iter().map(|l| (addrs[l as usize], size)));
                self.memory.shared.warp_accesses += 1;
                self.memory.shared.wavefronts += r.wavefronts;
            }
            _ => {}
        }
    }

    /// Turns the counters into the report.
    pub fn finish(
        self,
        module: &ir::Module,
        programs: &[Option<Program>],
        kernel: &str,
        threads: u64,
        threads_per_cta: u64,
    ) -> KernelStats {
        let mut stats = KernelStats { kernel: kernel.to_string(), warp_size: WARP as u32, ..KernelStats::default() };
        stats.ctas = self.ctas;
        stats.warps = self.warps;
        stats.threads = threads;
        let mut mix: BTreeMap<String, u64> = BTreeMap::new();
        for (f, counts) in self.per_op.iter().enumerate() {
            let Some(p) = programs.get(f).and_then(Option::as_ref) else { continue };
            let func = &module.functions[FuncId::from_u32(f as u32)];
            let Some(body) = &func.body else { continue };
            let mut fs = FunctionStats { name: p.name.clone(), ..FunctionStats::default() };
            for (opi, c) in counts.iter().enumerate() {
                if c[1] == 0 {
                    continue;
                }
                fs.thread_instructions += c[0];
                fs.warp_instructions += c[1];
                let name = p.ops.get(opi).map_or("ret", |op| body.insts[op.inst].opcode.as_str());
                *mix.entry(name.to_string()).or_default() += c[0];
            }
            stats.thread_instructions += fs.thread_instructions;
            stats.warp_instructions += fs.warp_instructions;
            if fs.warp_instructions > 0 {
                stats.functions.push(fs);
            }
        }
        stats.functions.sort_by_key(|f| std::cmp::Reverse(f.thread_instructions));
        for ((f, opi), [executed, diverged, lanes]) in self.branches {
            let Some(p) = programs.get(f as usize).and_then(Option::as_ref) else { continue };
            let func = &module.functions[FuncId::from_u32(f)];
            let Some(body) = &func.body else { continue };
            let Some(op) = p.ops.get(opi as usize) else { continue };
            let mut text = String::new();
            let _ = ir::print::write_inst(&mut text, module, func, body, &body.insts[op.inst]);
            stats.branches.push(BranchStats {
                function: p.name.clone(),
                line: module.line_of(body.insts[op.inst].span),
                instruction: text,
                executed,
                diverged,
                mean_active_lanes: lanes as f64 / executed.max(1) as f64,
            });
        }
        stats.instruction_mix = mix;
        stats.memory = self.memory;
        stats.transit.resident_threads = threads;
        stats.transit.threads_per_cta = threads_per_cta;
        stats.finish();
        stats
    }
}

/// The space of a generic access (decided by its first lane) and the lanes' addresses within it.
fn resolve_all(space: Space, exec: LaneMask, addrs: &[u64; WARP]) -> (Space, [u64; WARP]) {
    if space != Space::Generic {
        return (space, *addrs);
    }
    let mut out = [0u64; WARP];
    let mut resolved = Space::Global;
    for (k, l) in exec.iter().enumerate() {
        let (s, a) = resolve_generic(addrs[l as usize]);
        if k == 0 {
            resolved = s;
        }
        out[l as usize] = a;
    }
    (resolved, out)
}
