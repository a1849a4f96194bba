//! CTA barriers on the emulator (`bar.sync`, `bar.arrive`, `bar.red`, `barrier.sync` with a thread count): a
//! warp whose live lanes all reach a waiting barrier blocks there; after each round the barriers whose
//! expected threads have all arrived are released (with the reduction of `bar.red`), and a CTA in which no
//! warp can run is a located deadlock.

use device::{ErrorKind, ExecError, Location};
use ir::FuncId;
use program::{AtomOp, Dst, Op, Src, Sub, WARP};
use simt::LaneMask;

use super::{read_src, split, write_dst, Cta, Flow, Machine, Warp, WarpState};

impl Machine<'_> {
    /// Releases every barrier whose expected threads have all arrived. Returns whether any was released.
    pub(super) fn release_barriers(&mut self, cta: &mut Cta) -> Result<bool, ExecError> {
        let mut released = false;
        // `bar.sync` without a thread count waits for every thread of the CTA: threads that exited never
        // arrive, and the CTA then deadlocks (reported by `barrier_deadlock`).
        let total: u32 = cta.warps.iter().map(|w| w.lanes.count()).sum();
        let mut ids: Vec<u32> = cta
            .warps
            .iter()
            .filter_map(|w| match w.state {
                WarpState::Barrier { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let waiting: Vec<usize> = (0..cta.warps.len())
                .filter(|&w| matches!(cta.warps[w].state, WarpState::Barrier { id: b, .. } if b == id))
                .collect();
            let (arrived_only, declared) = cta.arrivals.get(&id).copied().unwrap_or((0, 0));
            let arrived: u32 = waiting.iter().map(|&w| cta.warps[w].bar_lanes.count()).sum::<u32>() + arrived_only;
            let expected = waiting
                .iter()
                .find_map(|&w| match cta.warps[w].state {
                    WarpState::Barrier { expected, .. } if expected > 0 => Some(expected),
                    _ => None,
                })
                .or((declared > 0).then_some(declared))
                .unwrap_or(total);
            if arrived < expected {
                continue;
            }
            cta.arrivals.remove(&id);
            // bar.red: combine the contributions of every arrived thread.
            let red = waiting.iter().find_map(|&w| cta.warps[w].bar_red);
            let mut acc: u64 = match red {
                Some(AtomOp::And) => 1,
                _ => 0,
            };
            if let Some(op) = red {
                for &w in &waiting {
                    let warp = &cta.warps[w];
                    for lane in warp.bar_lanes.iter() {
                        let v = warp.bar_values[lane as usize];
                        acc = match op {
                            AtomOp::Popc => acc + u64::from(v != 0),
                            AtomOp::And => acc & u64::from(v != 0),
                            AtomOp::Or => acc | u64::from(v != 0),
                            _ => acc,
                        };
                    }
                }
            }
            for &w in &waiting {
                let warp = &mut cta.warps[w];
                if red.is_some() {
                    let lanes = warp.bar_lanes;
                    let dst = warp.bar_dst;
                    let frame = warp.frames.last_mut().expect("a frame");
                    let mut vals = [acc; WARP];
                    if matches!(dst, Dst::Pred(_)) {
                        vals = [u64::from(acc != 0); WARP];
                    }
                    write_dst(frame, dst, &vals, lanes);
                }
                warp.state = WarpState::Ready;
                warp.bar_lanes = LaneMask::EMPTY;
                warp.bar_red = None;
            }
            released = true;
        }
        Ok(released)
    }

    pub(super) fn barrier_deadlock(&self, cta: &Cta) -> ExecError {
        let waiting: Vec<&Warp> = cta.warps.iter().filter(|w| matches!(w.state, WarpState::Barrier { .. })).collect();
        let total: u32 = cta.warps.iter().map(|w| w.lanes.count()).sum();
        let exited: u32 = total
            - cta
                .warps
                .iter()
                .filter(|w| w.state != WarpState::Done)
                .map(|w| w.stack.live_lanes().count())
                .sum::<u32>();
        let first = waiting.first();
        let (line, instruction, function) = match first.and_then(|w| w.stack.top()) {
            Some((p, _)) => {
                let (f, op) = split(p);
                let prog = self.program(f);
                let op = op.saturating_sub(1) as usize;
                match prog.ops.get(op) {
                    Some(o) => (Some(self.line(f, o)), Some(self.text(f, o)), Some(prog.name.clone())),
                    None => (None, None, Some(prog.name.clone())),
                }
            }
            None => (None, None, None),
        };
        // One clause per barrier that threads wait at.
        let mut ids: Vec<(u32, u32)> = waiting
            .iter()
            .filter_map(|w| match w.state {
                WarpState::Barrier { id, expected } => Some((id, expected)),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.dedup_by_key(|(id, _)| *id);
        let waits: Vec<String> = ids
            .iter()
            .map(|&(id, expected)| {
                let n: u32 = waiting
                    .iter()
                    .filter(|w| matches!(w.state, WarpState::Barrier { id: b, .. } if b == id))
                    .map(|w| w.bar_lanes.count())
                    .sum::<u32>()
                    + cta.arrivals.get(&id).map_or(0, |a| a.0);
                let expected = if expected == 0 { total } else { expected };
                format!("barrier {id} reached by {n} of the {expected} threads it waits for")
            })
            .collect();
        let detail = format!(
            "{}; {exited} of the CTA's {total} threads exited without reaching it, and no other thread can arrive",
            waits.join(", ")
        );
        ExecError::new(
            ErrorKind::BarrierDivergence(detail),
            Location {
                kernel: self.program(self.kernel).name.clone(),
                function,
                block: Some(cta.id),
                thread: first.map(|w| self.thread_of(w.index, w.bar_lanes.first().unwrap_or(0))),
                line,
                instruction,
            },
        )
    }

    pub(super) fn barrier(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        active: LaneMask,
        exec: LaneMask,
    ) -> Result<Flow, ExecError> {
        let Sub::Bar { wait, red } = op.m.sub else { return Ok(Flow::Continue) };
        if exec.is_empty() {
            return Ok(Flow::Continue);
        }
        let live = cta.warps[w].stack.live_lanes();
        if exec != live || exec != active {
            let lane = (live - exec).first().unwrap_or(0);
            let detail = format!(
                "only {} of the {} live lanes of warp {} reached the barrier together (lane mask {exec}); the others \
                 are on another path of a divergent branch",
                exec.count(),
                live.count(),
                cta.warps[w].index
            );
            return Err(self.error(cta, w, lane, f, op, ErrorKind::BarrierDivergence(detail)));
        }
        let id = self.read_uniform(cta, w, &op.a, exec) as u32;
        let expected = match op.b {
            Src::None => 0,
            ref s => self.read_uniform(cta, w, s, exec) as u32,
        };
        if !wait {
            // `bar.arrive`: these threads count toward the barrier without waiting for it.
            let e = cta.arrivals.entry(id).or_default();
            e.0 += exec.count();
            if expected > 0 {
                e.1 = expected;
            }
            return Ok(Flow::Continue);
        }
        let mut values = [0u64; WARP];
        if red.is_some() {
            values = read_src(self, cta, w, &op.c);
        }
        let warp = &mut cta.warps[w];
        warp.bar_lanes = exec;
        warp.bar_values = values;
        warp.bar_dst = op.dst;
        warp.bar_red = red;
        warp.state = WarpState::Barrier { id, expected };
        Ok(Flow::Blocked)
    }

    pub(super) fn read_uniform(&self, cta: &Cta, w: usize, src: &Src, exec: LaneMask) -> u64 {
        let vals = read_src(self, cta, w, src);
        vals[exec.first().unwrap_or(0) as usize]
    }
}
