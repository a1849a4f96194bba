//! A summary of a trace (what `lockstep trace info` prints), computed in one streaming pass.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::event::{Event, LockKind, SkipKind};
use crate::normalize::BasicBlocks;
use crate::reader::{Status, Trace};

#[derive(Debug, Clone, Serialize)]
pub struct FunctionSummary {
    pub name: String,
    pub module: String,
    /// Instructions executed in the function's own code (callees not included).
    pub insns: u64,
    /// Times it was entered by a call or a tail call.
    pub calls: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LockSummary {
    pub kind: LockKind,
    pub addr: u64,
    pub acquires: u64,
    pub releases: u64,
    /// Distinct SIMT threads that acquired it.
    pub threads: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SkipSummary {
    pub kind: SkipKind,
    pub regions: u64,
    pub insns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    pub os: u32,
    pub tid: u32,
    pub rank: u32,
    pub simt_threads: u64,
    /// Instructions recorded in this OS thread's SIMT threads.
    pub insns: u64,
    /// Instructions executed outside SIMT threads (with `--function`), when the thread ended while traced.
    pub outside: Option<u64>,
}

/// Everything `trace info` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub program: String,
    pub args: Vec<String>,
    pub tracer: String,
    pub function: Option<String>,
    pub per_iteration: bool,
    pub exclude: Vec<String>,
    pub status: Status,
    /// How the program ended (`exit`, `signal 11`), when the trace is complete.
    pub end: Option<String>,
    pub exit_code: Option<i64>,
    pub recovered: bool,
    pub os_threads: usize,
    pub simt_threads: usize,
    /// Instructions recorded in the event streams.
    pub insns: u64,
    pub skipped: Vec<SkipSummary>,
    /// Instructions executed outside SIMT threads (sum over ended OS threads).
    pub outside_insns: u64,
    pub translated_blocks: usize,
    pub basic_blocks: usize,
    pub loads: u64,
    pub stores: u64,
    pub calls: u64,
    pub returns: u64,
    pub tail_calls: u64,
    pub modules: Vec<String>,
    pub symbols: usize,
    pub functions_executed: usize,
    pub functions: Vec<FunctionSummary>,
    pub locks: Vec<LockSummary>,
    pub threads: Vec<ThreadSummary>,
    pub file_bytes: u64,
    pub bytes_per_insn: f64,
    /// Problems met while decoding event streams (the streams are read up to them).
    pub stream_errors: Vec<String>,
    pub notes: Vec<String>,
}

/// Reads every event of the valid prefix and summarises. `top` limits the function list.
pub fn summarize(t: &Trace, top: usize) -> Summary {
    let index = t.symbol_index();
    let tb_func: Vec<Option<u32>> = t.blocks.iter().map(|b| index.lookup(b.addr)).collect();
    let mut per_func: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut unknown_insns = 0u64;
    let mut insns = 0u64;
    let (mut loads, mut stores, mut calls, mut returns, mut tails) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut skips: BTreeMap<SkipKind, (u64, u64)> = BTreeMap::new();
    let mut locks: BTreeMap<(LockKind, u64), (u64, u64, std::collections::HashSet<u32>)> = BTreeMap::new();
    let mut per_os: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut errors = Vec::new();
    let os_ids: Vec<u32> = t.os_streams().collect();
    for os in os_ids {
        let mut cur_simt = u32::MAX;
        let entry = per_os.entry(os).or_default();
        for ev in t.os_events(os) {
            let ev = match ev {
                Ok(e) => e,
                Err(e) => {
                    errors.push(format!("thread {os}: {e}"));
                    break;
                }
            };
            match ev {
                Event::Block { tb } | Event::PartialBlock { tb, .. } => {
                    let from = if let Event::PartialBlock { from, .. } = ev { u64::from(from) } else { 0 };
                    let n = t.blocks[tb as usize].insns.len() as u64 - from;
                    insns += n;
                    entry.1 += n;
                    match tb_func[tb as usize] {
                        Some(f) => per_func.entry(f).or_default().0 += n,
                        None => unknown_insns += n,
                    }
                }
                Event::Mem { store, .. } => {
                    if store {
                        stores += 1
                    } else {
                        loads += 1
                    }
                }
                Event::Call { callee } | Event::TailCall { callee } => {
                    if matches!(ev, Event::Call { .. }) {
                        calls += 1
                    } else {
                        tails += 1
                    }
                    per_func.entry(callee).or_default().1 += 1;
                }
                Event::Return { .. } => returns += 1,
                Event::Lock { kind, release, addr } => {
                    let l = locks.entry((kind, addr)).or_default();
                    if release {
                        l.1 += 1
                    } else {
                        l.0 += 1;
                        l.2.insert(cur_simt);
                    }
                }
                Event::Skip { kind, insns: n, .. } => {
                    let s = skips.entry(kind).or_default();
                    s.0 += 1;
                    s.1 += n;
                }
                Event::SegmentStart { simt } => {
                    cur_simt = simt;
                    entry.0 += 1;
                }
                Event::SegmentEnd => {}
            }
        }
    }
    let module_name = |m: u32| -> String {
        t.modules.get(m as usize).map_or_else(String::new, |m| {
            std::path::Path::new(&m.path).file_name().map_or(m.path.clone(), |f| f.to_string_lossy().into_owned())
        })
    };
    let mut functions: Vec<FunctionSummary> = per_func
        .iter()
        .filter(|(_, v)| v.0 > 0 || v.1 > 0)
        .map(|(&id, &(n, c))| {
            let s = &t.symbols[id as usize];
            FunctionSummary { name: s.name.clone(), module: module_name(s.module), insns: n, calls: c }
        })
        .collect();
    if unknown_insns > 0 {
        functions.push(FunctionSummary {
            name: "(no symbol)".into(),
            module: String::new(),
            insns: unknown_insns,
            calls: 0,
        });
    }
    let functions_executed = functions.iter().filter(|f| f.insns > 0).count();
    functions.sort_by(|a, b| b.insns.cmp(&a.insns).then(b.calls.cmp(&a.calls)).then(a.name.cmp(&b.name)));
    functions.truncate(top);
    let ends: HashMap<u32, u64> = t.thread_ends.iter().map(|e| (e.os, e.outside)).collect();
    let mut threads: Vec<ThreadSummary> = t
        .threads
        .iter()
        .map(|th| {
            let (s, n) = per_os.get(&th.os).copied().unwrap_or_default();
            ThreadSummary {
                os: th.os,
                tid: th.tid,
                rank: th.rank,
                simt_threads: s,
                insns: n,
                outside: ends.get(&th.os).copied(),
            }
        })
        .collect();
    threads.sort_by_key(|t| (t.rank, t.os));
    let bbs = BasicBlocks::compute(&t.blocks);
    Summary {
        program: t.header.program.clone(),
        args: t.header.args.clone(),
        tracer: t.header.tracer.clone(),
        function: t.header.function.clone(),
        per_iteration: t.header.per_iteration,
        exclude: t.header.exclude.clone(),
        status: t.status.clone(),
        end: t.end.as_ref().map(|e| e.reason.clone()),
        exit_code: t.end.as_ref().and_then(|e| e.exit_code),
        recovered: t.end.as_ref().is_some_and(|e| e.recovered),
        os_threads: t.threads.len(),
        simt_threads: t.simt.len(),
        insns,
        skipped: skips.into_iter().map(|(kind, (regions, insns))| SkipSummary { kind, regions, insns }).collect(),
        outside_insns: t.thread_ends.iter().map(|e| e.outside).sum(),
        translated_blocks: t.blocks.len(),
        basic_blocks: bbs.blocks.len(),
        loads,
        stores,
        calls,
        returns,
        tail_calls: tails,
        modules: t.modules.iter().map(|m| m.path.clone()).collect(),
        symbols: t.symbols.len(),
        functions_executed,
        functions,
        locks: locks
            .into_iter()
            .map(|((kind, addr), (a, r, th))| LockSummary {
                kind,
                addr,
                acquires: a,
                releases: r,
                threads: th.len() as u64,
            })
            .collect(),
        threads,
        file_bytes: t.file_len,
        bytes_per_insn: if insns > 0 { t.file_len as f64 / insns as f64 } else { 0.0 },
        stream_errors: errors,
        notes: t.notes.clone(),
    }
}
