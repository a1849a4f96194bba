//! mbarrier operations and the bulk copies that complete transactions on them, on the emulator
//! (`program::mbarrier` and `program::bulk` have their meaning): lane by lane in lane order,
//! on the 64-bit object in the CTA's shared memory. A wait that fails in some lane ends the warp's turn, so
//! that the other warps can arrive, and when the warp has diverged its waiting path steps aside for another
//! path of the warp (`simt::CallStack::defer_active_path`, in `Machine::exec`), whose lanes may be the ones
//! to arrive, as under independent thread scheduling; the scheduler (`Machine::run_cta`) reports a CTA whose
//! live warps all wait with nothing changing as a deadlock.

use device::{ErrorKind, ExecError};
use ir::FuncId;
use program::mbarrier::{self, Mbar};
use program::{Extra, Op, Space, Sub, WARP};
use simt::LaneMask;

use super::{read_src, write_dst, Cta, Flow, Machine, MemFault, WaitSite, WarpCx};
use crate::mem::{read_flat, resolve_generic, write_flat};

impl Machine<'_> {
    /// Runs an mbarrier op for the lanes of `exec`; `Flow::Yield` after a wait that failed in some lane.
    pub(super) fn mbarrier(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        opi: u32,
        op: &Op,
        exec: LaneMask,
    ) -> Result<Flow, ExecError> {
        let Sub::Mbar(mbar) = op.m.sub else { return Ok(Flow::Continue) };
        if exec.is_empty() {
            return Ok(Flow::Continue);
        }
        let a = read_src(self, cta, w, &op.a);
        let mut out = [0u64; WARP];
        let mut failed = false;
        if mbar == Mbar::PendingCount {
            for lane in exec.iter() {
                out[lane as usize] = mbarrier::pending_count(a[lane as usize])
                    .map_err(|m| self.error(cta, w, lane, f, op, ErrorKind::Invalid(m)))?;
            }
        } else {
            let addrs = self.addresses(cta, w, op, exec);
            for lane in exec.iter() {
                let l = lane as usize;
                let offset = self.mbarrier_offset(cta, w, lane, f, op, addrs[l])?;
                let word = read_flat(&cta.shared, offset, 8).ok_or_else(|| {
                    let e = MemFault::bounds(offset, 8, cta.shared.len(), "the CTA's shared memory");
                    self.access_error(cta, w, lane, f, op, Space::Shared, e)
                })?;
                let step = mbarrier::apply(mbar, word, a[l])
                    .map_err(|m| self.error(cta, w, lane, f, op, ErrorKind::Invalid(m)))?;
                if step.word != word {
                    write_flat(&mut cta.shared, offset, 8, step.word);
                    cta.mbar_epoch += 1;
                }
                out[l] = step.result;
                if mbar.is_wait() {
                    let site = (step.result == 0).then_some(WaitSite { func: f, op: opi, offset });
                    cta.warps[w].waits[l] = site;
                    failed |= site.is_some();
                }
            }
        }
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        write_dst(frame, op.dst, &out, exec);
        Ok(if failed { Flow::Yield } else { Flow::Continue })
    }

    /// A bulk copy or reduction (`program::bulk`) for the lanes of `exec`, in lane order.
    pub(super) fn bulk_copy(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
    ) -> Result<(), ExecError> {
        let Some(Extra::Bulk(bulk)) = op.extra.as_deref() else { return Ok(()) };
        let dst = self.addresses(cta, w, op, exec);
        if bulk.stored > 0 {
            // st.async / red.async: the values are the op's a..d.
            let values: Vec<[u64; WARP]> = [&op.a, &op.b, &op.c, &op.d]
                .into_iter()
                .take(bulk.stored as usize)
                .map(|s| read_src(self, cta, w, s))
                .collect();
            let mbar =
                bulk.mbar.as_ref().map(|m| self.addresses_of(cta, w, m, Space::Shared, exec)).unwrap_or([0; WARP]);
            for lane in exec.iter() {
                let l = lane as usize;
                let v: Vec<u64> = values.iter().map(|v| v[l]).collect();
                let mut cx = WarpCx { m: self, cta, w, f, op };
                if program::store_async::store_lane(&mut cx, lane, op, bulk, dst[l], &v, mbar[l])? {
                    cta.mbar_epoch += 1;
                }
            }
            return Ok(());
        }
        let src = self.addresses_of(cta, w, &bulk.src, bulk.src_space, exec);
        let mbar = bulk.mbar.as_ref().map(|m| self.addresses_of(cta, w, m, Space::Shared, exec));
        if let Some(t) = &bulk.tensor {
            let coords: Vec<[u64; WARP]> = t.coords.iter().map(|c| read_src(self, cta, w, c)).collect();
            for lane in exec.iter() {
                let l = lane as usize;
                let at: Vec<i32> = coords.iter().map(|c| c[l] as i32).collect();
                let mut cx = WarpCx { m: self, cta, w, f, op };
                // Shared addresses are offsets here.
                let shared = (0, cx.cta.shared.len() as u64);
                let changed =
                    program::tma::copy_lane(&mut cx, lane, bulk, t, dst[l], src[l], &at, mbar.map(|m| m[l]), shared)?;
                if changed {
                    cta.mbar_epoch += 1;
                }
            }
            return Ok(());
        }
        let size = read_src(self, cta, w, &op.a);
        for lane in exec.iter() {
            let l = lane as usize;
            let mut cx = WarpCx { m: self, cta, w, f, op };
            let changed =
                program::bulk::copy_lane(&mut cx, lane, op, bulk, dst[l], src[l], size[l], mbar.map(|m| m[l]))?;
            if changed {
                cta.mbar_epoch += 1;
            }
        }
        Ok(())
    }

    /// The shared-memory offset of the object a lane names, checked: in shared memory, 8-byte aligned.
    fn mbarrier_offset(
        &self,
        cta: &Cta,
        w: usize,
        lane: u32,
        f: FuncId,
        op: &Op,
        address: u64,
    ) -> Result<u64, ExecError> {
        let (space, offset) = match op.m.space {
            Space::Generic => resolve_generic(address),
            s => (s, address),
        };
        if space != Space::Shared {
            let kind = ErrorKind::Invalid(format!(
                "the mbarrier object's address {address:#x} is not in the shared window (an mbarrier lives in shared \
                 memory)"
            ));
            return Err(self.error(cta, w, lane, f, op, kind));
        }
        if !offset.is_multiple_of(8) {
            let e = MemFault::Misaligned { address: offset, size: 8 };
            return Err(self.access_error(cta, w, lane, f, op, Space::Shared, e));
        }
        Ok(offset)
    }

    /// The error of a CTA whose live warps have all waited at mbarriers (or barriers) for
    /// `program::mbarrier::IDLE_ROUNDS` rounds in which no mbarrier changed: located at the first thread that
    /// spins, with the state of every object a live thread spins on.
    pub(super) fn mbarrier_deadlock(&self, cta: &Cta) -> ExecError {
        // (warp, lane, site) of every live lane whose last wait failed, in thread order.
        let spinning: Vec<(usize, u32, WaitSite)> = cta
            .warps
            .iter()
            .enumerate()
            .filter(|(_, w)| w.state == super::WarpState::Ready)
            .flat_map(|(i, w)| {
                let live = w.stack.live_lanes();
                live.iter().filter_map(move |l| w.waits[l as usize].map(|s| (i, l, s)))
            })
            .collect();
        let total: u32 = cta.warps.iter().map(|w| w.lanes.count()).sum();
        let at_barrier: u32 = cta
            .warps
            .iter()
            .filter(|w| matches!(w.state, super::WarpState::Barrier { .. }))
            .map(|w| w.bar_lanes.count())
            .sum();
        let mut objects: Vec<u64> = spinning.iter().map(|(_, _, s)| s.offset).collect();
        objects.sort_unstable();
        objects.dedup();
        let states: Vec<String> = objects
            .iter()
            .map(|&o| {
                let word = read_flat(&cta.shared, o, 8).unwrap_or(0);
                format!("the mbarrier at shared offset {o:#x} ({})", mbarrier::describe(word))
            })
            .collect();
        let detail = format!(
            "every live thread waits and none can arrive: {} threads spin on {}; {at_barrier} threads wait at a \
             barrier; {} of the CTA's {total} threads exited",
            spinning.len(),
            states.join(", "),
            total.saturating_sub(cta.warps.iter().map(|w| w.stack.live_lanes().count()).sum())
        );
        let kind = ErrorKind::BarrierDivergence(detail);
        match spinning.first() {
            Some(&(w, lane, s)) => {
                let prog = self.program(s.func);
                let op = &prog.ops[s.op as usize];
                self.error(cta, w, lane, s.func, op, kind)
            }
            None => ExecError::new(kind, device::Location::default()),
        }
    }
}
