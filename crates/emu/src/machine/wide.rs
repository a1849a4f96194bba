//! The emulator's 128-bit register moves and atomics (`program::wide`): a `.b128` register is two slots,
//! low half first. (`ld.b128` and `st.b128` are decoded as two-element accesses and take the general path.)

use device::ExecError;
use ir::FuncId;
use program::{wide, Extra, Op, Sub};
use simt::LaneMask;

use super::{read_src, write_dst, Cta, Machine, WARP};

impl Machine<'_> {
    /// `mov.b128` in every form: the sources' parts make each lane's 128-bit value, which is split into the
    /// destinations' parts. Every source is read before any destination is written.
    pub(super) fn exec_move128(&mut self, cta: &mut Cta, w: usize, op: &Op, exec: LaneMask) {
        let srcs = [op.a, op.b, op.c, op.d].map(|s| read_src(self, cta, w, &s));
        let Some(Extra::Dsts(dsts)) = op.extra.as_deref() else { return };
        let mut values = [0u128; WARP];
        for lane in exec.iter() {
            let l = lane as usize;
            values[l] = wide::gather(op, [srcs[0][l], srcs[1][l], srcs[2][l], srcs[3][l]]);
        }
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        for (k, d) in dsts.iter().enumerate() {
            let mut out = [0u64; WARP];
            for lane in exec.iter() {
                out[lane as usize] = wide::part(op, values[lane as usize], k);
            }
            write_dst(frame, *d, &out, exec);
        }
    }

    /// `atom.cas.b128` / `atom.exch.b128`, lane after lane (the emulator runs one warp at a time, so each
    /// lane's read and write of the 16 bytes is atomic).
    pub(super) fn exec_atomic128(
        &mut self,
        cta: &mut Cta,
        w: usize,
        f: FuncId,
        op: &Op,
        exec: LaneMask,
    ) -> Result<(), ExecError> {
        let Sub::Atom(aop) = op.m.sub else { return Ok(()) };
        let space = op.m.space;
        let addrs = self.addresses(cta, w, op, exec);
        let [a, b, c, d] = [op.a, op.b, op.c, op.d].map(|s| read_src(self, cta, w, &s));
        if let Some(s) = &mut self.stats {
            s.atomic(op, space, exec, &addrs, 16);
        }
        let (mut old_lo, mut old_hi) = ([0u64; WARP], [0u64; WARP]);
        for lane in exec.iter() {
            let l = lane as usize;
            let addr = addrs[l];
            self.check_aligned(cta, w, lane, f, op, space, addr, 16)?;
            let mut old = [0u64; 2];
            for (k, half) in old.iter_mut().enumerate() {
                *half = match self.load(cta, w, lane, space, addr + 8 * k as u64, 8) {
                    Ok(v) => v,
                    Err(e) => return Err(self.access_error(cta, w, lane, f, op, space, e)),
                };
            }
            let value = |x: u64, y: u64| u128::from(x) | u128::from(y) << 64;
            let new = wide::atomic_new(aop, value(old[0], old[1]), value(a[l], b[l]), value(c[l], d[l]));
            for (k, half) in [new as u64, (new >> 64) as u64].into_iter().enumerate() {
                if let Err(e) = self.store(cta, w, lane, space, addr + 8 * k as u64, 8, half) {
                    return Err(self.access_error(cta, w, lane, f, op, space, e));
                }
            }
            [old_lo[l], old_hi[l]] = old;
        }
        let frame = cta.warps[w].frames.last_mut().expect("frame");
        write_dst(frame, op.dst, &old_lo, exec);
        write_dst(frame, op.dst2, &old_hi, exec);
        Ok(())
    }
}
