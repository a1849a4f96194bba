//! The warpgroup rendezvous of `wgmma.mma_async` on the emulator: a warp that reaches the instruction waits
//! (`WarpState::Warpgroup`, the pc left on the instruction) until the four warps of its warpgroup (warps
//! `4g .. 4g + 3` of the CTA) all wait at it; then the descriptors are checked to agree and each warp
//! executes its quarter (`program::wgmma`) and moves past it. A warpgroup some of whose warps wait while
//! the others cannot come (the scheduler found no warp to run) is an error at the instruction.

use device::{ErrorKind, ExecError};
use program::wgmma;
use simt::LaneMask;

use super::{pc, split, Cta, Machine, WarpCx, WarpState};

impl Machine<'_> {
    /// Executes every `wgmma.mma_async` whose warpgroup has all arrived; returns whether any did.
    pub(super) fn release_warpgroups(&mut self, cta: &mut Cta) -> Result<bool, ExecError> {
        let mut released = false;
        for first in (0..cta.warps.len()).step_by(4) {
            let group: Vec<usize> = (first..(first + 4).min(cta.warps.len())).collect();
            let at: Vec<_> = group
                .iter()
                .filter_map(|&w| match cta.warps[w].state {
                    WarpState::Warpgroup { at } => Some(at),
                    _ => None,
                })
                .collect();
            if at.len() == 4 && at.iter().all(|&p| p == at[0]) {
                self.execute(cta, &group, false)?;
                released = true;
            }
        }
        Ok(released)
    }

    /// With no warp left to run: the error of a warpgroup that waits at a `wgmma.mma_async` for warps that
    /// cannot come (executing the waiting warps reports a partial warp or a partial warpgroup first).
    pub(super) fn stuck_warpgroup(&mut self, cta: &mut Cta) -> Option<ExecError> {
        let w = (0..cta.warps.len()).find(|&w| matches!(cta.warps[w].state, WarpState::Warpgroup { .. }))?;
        let first = w / 4 * 4;
        let group: Vec<usize> = (first..(first + 4).min(cta.warps.len()))
            .filter(|&v| matches!(cta.warps[v].state, WarpState::Warpgroup { .. }))
            .collect();
        if let Err(e) = self.execute(cta, &group, true) {
            return Some(e);
        }
        let waiting: Vec<u32> = group.iter().map(|&v| (v - first) as u32).collect();
        let WarpState::Warpgroup { at } = cta.warps[w].state else { return None };
        let (f, opi) = split(at);
        let programs = self.programs.clone();
        let op = &programs[f.as_u32() as usize].as_ref().expect("program").ops[opi as usize];
        let kind = ErrorKind::Invalid(wgmma::stuck_message((first / 4) as u32, &waiting, 4));
        Some(self.error(cta, w, 0, f, op, kind))
    }

    /// Runs the `wgmma.mma_async` the warps of `group` wait at, each for the lanes that reached it, and
    /// moves them past it (unless `dry`: only the checks and errors, for `stuck_warpgroup`).
    fn execute(&mut self, cta: &mut Cta, group: &[usize], dry: bool) -> Result<(), ExecError> {
        let programs = self.programs.clone();
        let mut descs = Vec::new();
        for &w in group {
            let WarpState::Warpgroup { at } = cta.warps[w].state else { continue };
            let (f, opi) = split(at);
            let op = &programs[f.as_u32() as usize].as_ref().expect("program").ops[opi as usize];
            let Some(wg) = wgmma::of(op) else { continue };
            let lanes = cta.warps[w].bar_lanes;
            let cx = WarpCx { m: self, cta, w, f, op };
            descs.push(wgmma::descriptors(&cx, wg));
            if let Some(why) = wgmma::check_warpgroup(&descs) {
                return Err(self.error(cta, w, 0, f, op, ErrorKind::Invalid(why)));
            }
            let mut cx = WarpCx { m: self, cta, w, f, op };
            if dry {
                // A partial warp or a warpgroup cut short by the end of the CTA fails here.
                if lanes.count() != program::WARP as u32 {
                    program::tensor::exec(&mut cx, lanes, op)?;
                }
                wgmma::warp_rank(&cx)?;
                continue;
            }
            program::tensor::exec(&mut cx, lanes, op)?;
            let warp = &mut cta.warps[w];
            warp.stack.set_pc(pc(f, opi + 1));
            warp.state = WarpState::Ready;
            warp.bar_lanes = LaneMask::EMPTY;
        }
        Ok(())
    }
}
