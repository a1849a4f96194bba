//! Warp formation: which SIMT threads run together (ThreadFuser, Section III: "different batching algorithms can
//! be explored").
//!
//! SIMT threads are first put in the analyzer's order ([`trace::Trace::simt_order`]: launch, then OS-thread
//! creation order, then start order within the OS thread), then each launch is cut into warps of `warp_size`
//! lanes by a [`Batch`] policy. The last warp of a launch or group may be partial.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::lane::{Item, Lane};
use crate::program::Program;

/// How SIMT threads are batched into warps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Batch {
    /// Consecutive SIMT-thread numbers: lanes 0..W of warp 0 are SIMT threads 0..W, and so on.
    #[default]
    Consecutive,
    /// One SIMT thread of each OS thread in turn (the first of every OS thread, then the second of every OS
    /// thread, ...), then cut into warps: neighbouring lanes come from different OS threads.
    RoundRobin,
    /// SIMT threads grouped by the function they start in (in order of first appearance); a warp never mixes
    /// functions.
    Function,
}

impl Batch {
    pub const ALL: [Batch; 3] = [Batch::Consecutive, Batch::RoundRobin, Batch::Function];

    pub fn name(self) -> &'static str {
        match self {
            Batch::Consecutive => "consecutive",
            Batch::RoundRobin => "round-robin",
            Batch::Function => "function",
        }
    }
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Batch {
    type Err = String;

    fn from_str(s: &str) -> Result<Batch, String> {
        Batch::ALL.into_iter().find(|b| b.name() == s).ok_or_else(|| {
            format!("unknown batching policy `{s}` (expected {})", Batch::ALL.map(Batch::name).join(", "))
        })
    }
}

/// The warps of a trace: lists of SIMT ids, lane order. A warp never mixes launches
/// ([`trace::Trace::simt_launches`]: the runs of an OpenMP parallel loop, like a GPU's kernel launches).
pub fn form_warps(prog: &Program<'_>, policy: Batch, warp_size: u32) -> Vec<Vec<u32>> {
    let order = prog.trace.simt_order();
    let launch = prog.trace.simt_launches();
    order
        .chunk_by(|&a, &b| launch[a as usize] == launch[b as usize])
        .flat_map(|run| form_launch_warps(prog, run, policy, warp_size))
        .collect()
}

fn form_launch_warps(prog: &Program<'_>, order: &[u32], policy: Batch, warp_size: u32) -> Vec<Vec<u32>> {
    let ws = warp_size.max(1) as usize;
    let chunks = |v: &[u32]| -> Vec<Vec<u32>> { v.chunks(ws).map(<[u32]>::to_vec).collect() };
    match policy {
        Batch::Consecutive => chunks(order),
        Batch::RoundRobin => {
            let mut per_os: Vec<(u32, Vec<u32>)> = Vec::new();
            for &s in order {
                let os = prog.simt_os[s as usize];
                match per_os.iter_mut().find(|g| g.0 == os) {
                    Some(g) => g.1.push(s),
                    None => per_os.push((os, vec![s])),
                }
            }
            let rounds = per_os.iter().map(|g| g.1.len()).max().unwrap_or(0);
            let mut flat = Vec::with_capacity(order.len());
            for r in 0..rounds {
                flat.extend(per_os.iter().filter_map(|g| g.1.get(r).copied()));
            }
            chunks(&flat)
        }
        Batch::Function => {
            let mut groups: Vec<(u32, Vec<u32>)> = Vec::new();
            for &s in order {
                let f = entry_function(prog, s);
                match groups.iter_mut().find(|g| g.0 == f) {
                    Some(g) => g.1.push(s),
                    None => groups.push((f, vec![s])),
                }
            }
            groups.iter().flat_map(|g| chunks(&g.1)).collect()
        }
    }
}

/// The function a SIMT thread starts in.
pub fn entry_function(prog: &Program<'_>, simt: u32) -> u32 {
    let start = &prog.trace.simt[simt as usize].start;
    if start.function != trace::NONE {
        return start.function;
    }
    let mut lane = Lane::blocks_only(prog, simt);
    loop {
        match *lane.peek() {
            Item::Enter { func } => return func,
            Item::End => return crate::program::UNKNOWN_FN,
            _ => {
                lane.pop();
            }
        }
    }
}
