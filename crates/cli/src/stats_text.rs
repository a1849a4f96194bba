//! The human summary of [`KernelStats`] that `lockstep run --stats` prints.

use std::fmt::Write;

use device::stats::AccessStats;
use device::{KernelStats, LaunchConfig};

/// Most divergent branches listed; the rest are counted.
const MAX_BRANCHES: usize = 20;
/// Opcodes listed in the instruction mix.
const MIX_TOP: usize = 10;

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The summary, one section per aspect, ending in a newline.
pub fn summary(kernel: &str, backend: &str, config: &LaunchConfig, s: &KernelStats) -> String {
    let mut o = String::new();
    // Writing to a String cannot fail.
    let _ = write_summary(&mut o, kernel, backend, config, s);
    o
}

fn write_summary(
    o: &mut String,
    kernel: &str,
    backend: &str,
    config: &LaunchConfig,
    s: &KernelStats,
) -> std::fmt::Result {
    writeln!(o, "\n== {kernel} on {backend}: grid {} x block {}", config.grid, config.block)?;
    writeln!(o, "{} threads in {} CTAs, {} warps of {}", s.threads, s.ctas, s.warps, s.warp_size)?;
    writeln!(
        o,
        "SIMT efficiency {} ({} thread instructions in {} warp instructions)",
        percent(s.simt_efficiency),
        s.thread_instructions,
        s.warp_instructions
    )?;

    if !s.functions.is_empty() {
        let width = s.functions.iter().map(|f| f.name.len()).max().unwrap_or(8).max(8);
        writeln!(o, "\nFunctions")?;
        writeln!(o, "  {:<width$}  {:>14}  {:>12}  {:>9}", "function", "thread insts", "warp insts", "SIMT eff.")?;
        for f in &s.functions {
            writeln!(
                o,
                "  {:<width$}  {:>14}  {:>12}  {:>9}",
                f.name,
                f.thread_instructions,
                f.warp_instructions,
                percent(f.simt_efficiency)
            )?;
        }
    }

    let mut divergent: Vec<_> = s.branches.iter().filter(|b| b.diverged > 0).collect();
    divergent.sort_by(|a, b| b.diverged.cmp(&a.diverged).then(a.line.cmp(&b.line)));
    if divergent.is_empty() {
        writeln!(o, "\nDivergent branches: none ({} conditional branches executed)", s.branches.len())?;
    } else {
        writeln!(
            o,
            "\nDivergent branches ({} of {} conditional branches diverged)",
            divergent.len(),
            s.branches.len()
        )?;
        let width = divergent.iter().take(MAX_BRANCHES).map(|b| b.instruction.len()).max().unwrap_or(11).clamp(11, 48);
        writeln!(o, "  {:>6}  {:<width$}  {:>10}  {:>14}", "line", "instruction", "executed", "diverged")?;
        for b in divergent.iter().take(MAX_BRANCHES) {
            let mut inst = b.instruction.clone();
            if inst.len() > width {
                inst.truncate(width.saturating_sub(3));
                inst.push_str("...");
            }
            let diverged = format!("{} ({})", b.diverged, percent(share(b.diverged, b.executed)));
            writeln!(o, "  {:>6}  {:<width$}  {:>10}  {:>14}", b.line, inst, b.executed, diverged)?;
        }
        if divergent.len() > MAX_BRANCHES {
            writeln!(o, "  ... and {} more", divergent.len() - MAX_BRANCHES)?;
        }
    }

    let m = &s.memory;
    writeln!(o, "\nMemory ({}-byte transactions)", m.transaction_bytes)?;
    let rows: [(&str, &AccessStats); 6] = [
        ("global loads", &m.global_loads),
        ("global stores", &m.global_stores),
        ("global atomics", &m.global_atomics),
        ("local loads", &m.local_loads),
        ("local stores", &m.local_stores),
        ("const loads", &m.const_loads),
    ];
    let used: Vec<_> = rows.iter().filter(|(_, a)| a.warp_accesses > 0).collect();
    if used.is_empty() {
        writeln!(o, "  no global, local or constant memory accesses")?;
    } else {
        writeln!(
            o,
            "  {:<14}  {:>10}  {:>12}  {:>10}  {:>12}",
            "access", "warp insts", "transactions", "per access", "bytes"
        )?;
        for (name, a) in used {
            writeln!(
                o,
                "  {:<14}  {:>10}  {:>12}  {:>10.2}  {:>12}",
                name, a.warp_accesses, a.transactions, a.transactions_per_access, a.bytes
            )?;
        }
    }
    let sh = &m.shared;
    if sh.warp_accesses == 0 {
        writeln!(o, "  shared memory: no accesses")?;
    } else {
        writeln!(
            o,
            "  shared memory: {} warp accesses, {} wavefronts, {} bank conflicts ({:.2} extra wavefronts per access)",
            sh.warp_accesses,
            sh.wavefronts,
            sh.bank_conflicts,
            share(sh.bank_conflicts, sh.warp_accesses)
        )?;
    }

    let mut mix: Vec<(&String, &u64)> = s.instruction_mix.iter().collect();
    mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let total: u64 = s.instruction_mix.values().sum();
    writeln!(o, "\nInstruction mix (top {} of {} opcodes, thread instructions)", MIX_TOP.min(mix.len()), mix.len())?;
    for (op, n) in mix.iter().take(MIX_TOP) {
        writeln!(o, "  {:<12}  {:>14}  {:>6}", op, n, percent(share(**n, total)))?;
    }

    let t = &s.transit;
    writeln!(o, "\nTransit-model parameters")?;
    writeln!(o, "  Z  warp instructions per global transaction    {:.3}", t.instructions_per_transaction)?;
    writeln!(o, "     thread instructions per global transaction  {:.3}", t.thread_instructions_per_transaction)?;
    writeln!(o, "  n  resident threads                            {}", t.resident_threads)?;
    writeln!(o, "     threads per CTA                             {}", t.threads_per_cta)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use device::stats::{BranchStats, FunctionStats};
    use device::Dim3;

    use super::*;

    #[test]
    fn summary_lists_every_section() {
        let mut s = KernelStats {
            kernel: "k".into(),
            warp_size: 32,
            ctas: 2,
            warps: 4,
            threads: 128,
            thread_instructions: 1000,
            warp_instructions: 40,
            functions: vec![FunctionStats {
                name: "k".into(),
                thread_instructions: 1000,
                warp_instructions: 40,
                simt_efficiency: 0.0,
            }],
            branches: vec![
                BranchStats {
                    function: "k".into(),
                    line: 45,
                    instruction: "@%p1 bra $L__BB0_2;".into(),
                    executed: 4,
                    diverged: 1,
                    mean_active_lanes: 32.0,
                },
                BranchStats {
                    function: "k".into(),
                    line: 50,
                    instruction: "@%p2 bra $L__BB0_3;".into(),
                    executed: 4,
                    diverged: 0,
                    mean_active_lanes: 32.0,
                },
            ],
            ..KernelStats::default()
        };
        s.memory.transaction_bytes = 32;
        s.memory.global_loads.record(4, 128);
        s.memory.shared.warp_accesses = 2;
        s.memory.shared.wavefronts = 5;
        s.instruction_mix.insert("ld".into(), 300);
        s.instruction_mix.insert("add".into(), 700);
        s.finish();
        let config = LaunchConfig { grid: Dim3::new(2, 1, 1), block: Dim3::new(64, 1, 1), dynamic_shared: 0 };
        let text = summary("k", "emu", &config, &s);
        assert!(text.contains("SIMT efficiency 78.1%"), "{text}");
        assert!(text.contains("Divergent branches (1 of 2 conditional branches diverged)"), "{text}");
        assert!(text.contains("@%p1 bra $L__BB0_2;") && text.contains("1 (25.0%)"), "{text}");
        assert!(!text.contains("$L__BB0_3"), "{text}");
        assert!(text.contains("global loads"), "{text}");
        assert!(!text.contains("global stores"), "{text}");
        assert!(text.contains("3 bank conflicts"), "{text}");
        let add = text.find("  add ").unwrap();
        let ld = text.find("  ld ").unwrap();
        assert!(add < ld, "sorted by count: {text}");
        assert!(text.contains("Transit-model parameters"), "{text}");
    }
}
