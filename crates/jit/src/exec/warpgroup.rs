//! The warpgroup rendezvous of `wgmma.mma_async` in the JIT. A kernel with the instruction runs its CTAs
//! four warps at a time (`Worker::run_cta`); a thread that reaches it stops there (a runtime yield point,
//! status `COLLECTIVE`) and the warp collectives resolution (`Worker::resolve_collectives`) leaves it
//! alone; once all 128 threads of the warpgroup stopped at the same one, their descriptors are checked to
//! agree and each warp executes its quarter (`program::wgmma`) through [`RuntimeWarp`]. A warpgroup that
//! waits for warps that cannot come is reported when the CTA can go no further ([`stuck`]).

use device::{Dim3, ErrorKind, ExecError};
use program::{wgmma, WARP};
use simt::LaneMask;

use super::{status, thread, LaunchData, RuntimeWarp, Worker};

/// The `wgmma.mma_async` that a thread stopped at resume point `resume` waits at, if it is one.
pub(super) fn at<'a>(data: &'a LaunchData<'_>, resume: u32) -> Option<&'a program::Op> {
    let c = data.compiled;
    let y = c.plan.yields.get((resume as usize).checked_sub(1)?)?;
    let op = &c.programs[&c.kernel].ops[y.op as usize];
    wgmma::of(op).map(|_| op)
}

impl Worker {
    /// Executes the `wgmma.mma_async` of every warpgroup of threads `lo..hi` whose 128 threads all wait at
    /// it; returns whether any did.
    pub(super) fn resolve_warpgroups(
        &self,
        data: &LaunchData<'_>,
        lo: u32,
        hi: u32,
        cta: Dim3,
        status_of: &dyn Fn(u32) -> u32,
        word: &dyn Fn(u32, i32) -> *mut u64,
    ) -> Result<bool, ExecError> {
        let resume = |t: u32| -> u32 {
            // SAFETY: the resume word of a thread of this CTA.
            unsafe { (word(t, thread::RESUME) as *const u32).read() }
        };
        let mut any = false;
        let group = 4 * WARP as u32;
        for g in (lo..hi).step_by(group as usize) {
            if g + group > hi {
                continue;
            }
            let r = resume(g);
            let waiting = (g..g + group).all(|t| status_of(t) == status::COLLECTIVE && resume(t) == r);
            if !waiting || at(data, r).is_none() {
                continue;
            }
            self.execute(data, g, &[0, 1, 2, 3], r, cta, word, false)?;
            for t in g..g + group {
                // SAFETY: the status word of a thread of this CTA.
                unsafe { (word(t, thread::STATUS) as *mut u32).write(status::READY) };
            }
            any = true;
        }
        Ok(any)
    }

    /// Runs (or with `dry` only checks) the `wgmma.mma_async` at resume point `r` for the warps `warps` of
    /// the warpgroup from thread `g`, each with its lanes stopped there.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        data: &LaunchData<'_>,
        g: u32,
        warps: &[u32],
        r: u32,
        cta: Dim3,
        word: &dyn Fn(u32, i32) -> *mut u64,
        dry: bool,
    ) -> Result<(), ExecError> {
        let c = data.compiled;
        let y = &c.plan.yields[r as usize - 1];
        let Some(op) = at(data, r) else { return Ok(()) };
        let Some(wg) = wgmma::of(op) else { return Ok(()) };
        let (shared, locals) = (self.shared.address(), self.locals.address());
        let n = data.block.count().unwrap_or(0) as u32;
        let mut descs = Vec::new();
        for &w in warps {
            let lo = g + w * WARP as u32;
            let warp = RuntimeWarp { data, lo, cta, y, op, shared, locals, word };
            descs.push(wgmma::descriptors(&warp, wg));
            if let Some(why) = wgmma::check_warpgroup(&descs) {
                return Err(warp.fault(0, ErrorKind::Invalid(why)));
            }
        }
        for &w in warps {
            let lo = g + w * WARP as u32;
            let lanes = (lo..(lo + WARP as u32).min(n)).filter(|&t| {
                // SAFETY: the status and resume words of a thread of this CTA.
                unsafe {
                    (word(t, thread::STATUS) as *const u32).read() == status::COLLECTIVE
                        && (word(t, thread::RESUME) as *const u32).read() == r
                }
            });
            let mask = LaneMask(lanes.fold(0u64, |m, t| m | 1 << (t - lo)));
            let mut warp = RuntimeWarp { data, lo, cta, y, op, shared, locals, word };
            if dry {
                // A partial warp or a warpgroup cut short by the end of the CTA fails here.
                if mask.count() != WARP as u32 {
                    program::tensor::exec(&mut warp, mask, op)?;
                }
                wgmma::warp_rank(&warp)?;
            } else {
                program::tensor::exec(&mut warp, mask, op)?;
            }
        }
        Ok(())
    }

    /// With the CTA stuck: the error of a warpgroup some of whose threads wait at a `wgmma.mma_async`.
    pub(super) fn stuck(
        &self,
        data: &LaunchData<'_>,
        n: u32,
        cta: Dim3,
        status_of: &dyn Fn(u32) -> u32,
        word: &dyn Fn(u32, i32) -> *mut u64,
    ) -> Option<ExecError> {
        let resume = |t: u32| -> u32 {
            // SAFETY: the resume word of a thread of this CTA.
            unsafe { (word(t, thread::RESUME) as *const u32).read() }
        };
        let t = (0..n).find(|&t| status_of(t) == status::COLLECTIVE && at(data, resume(t)).is_some())?;
        let r = resume(t);
        let g = t / 128 * 128;
        let warps: Vec<u32> = (0..4)
            .filter(|w| {
                let lo = g + w * WARP as u32;
                (lo..(lo + WARP as u32).min(n)).any(|u| status_of(u) == status::COLLECTIVE && resume(u) == r)
            })
            .collect();
        if let Err(e) = self.execute(data, g, &warps, r, cta, word, true) {
            return Some(e);
        }
        let c = data.compiled;
        let y = &c.plan.yields[r as usize - 1];
        let op = at(data, r)?;
        let warp =
            RuntimeWarp { data, lo: g, cta, y, op, shared: self.shared.address(), locals: self.locals.address(), word };
        Some(warp.fault(t - g, ErrorKind::Invalid(wgmma::stuck_message(g / 128, &warps, 4))))
    }
}
