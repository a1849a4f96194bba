//! Functions generated code calls for what is not worth inlining: the emulator's lane arithmetic for rare
//! ops and modifiers (so both engines agree bit for bit), atomics without a native instruction, `printf`,
//! failed assertions, checked-mode bounds checks and the clock.

use std::sync::atomic::Ordering;

use simt::LaneMask;

use crate::abi::{CtaCtx, Helper, HELPER_COUNT};
use crate::exec::WorkerState;
use program::{AtomOp, Op, Space, Sub, WARP};

/// The helper table, in [`Helper`] order.
pub fn table() -> [usize; HELPER_COUNT] {
    let mut t = [0usize; HELPER_COUNT];
    t[Helper::Alu as usize] = alu as *const () as usize;
    t[Helper::AtomicNew as usize] = atomic_new as *const () as usize;
    t[Helper::Printf as usize] = printf as *const () as usize;
    t[Helper::AssertFail as usize] = assert_fail as *const () as usize;
    t[Helper::CheckAccess as usize] = check_access as *const () as usize;
    t[Helper::Clock as usize] = clock as *const () as usize;
    t[Helper::BarArrive as usize] = bar_arrive as *const () as usize;
    t[Helper::IsGlobal as usize] = is_global as *const () as usize;
    t[Helper::Malloc as usize] = malloc as *const () as usize;
    t[Helper::Free as usize] = free as *const () as usize;
    t[Helper::Texture as usize] = texture as *const () as usize;
    t[Helper::CpAsync as usize] = cp_async as *const () as usize;
    t[Helper::Mbarrier as usize] = mbarrier as *const () as usize;
    t[Helper::BulkCopy as usize] = bulk_copy as *const () as usize;
    t[Helper::GridSpin as usize] = grid_spin as *const () as usize;
    t
}

/// A grid barrier's poll (`Helper::GridSpin`): lets the launch's other CTA threads run, and stops this one
/// when it would wait forever (`cooperative::GridState::poll`).
extern "C" fn grid_spin(ctx: *mut CtaCtx, addr: u64, value: u64) -> u32 {
    let (ctx, st) = state(ctx);
    let Some(grid) = st.grid.clone() else { return 0 };
    let [x, y, z] = ctx.ctaid;
    let [nx, ny, _] = ctx.nctaid;
    let cta = u64::from(x) + u64::from(nx) * (u64::from(y) + u64::from(ny) * u64::from(z));
    match grid.poll(cta, &mut st.poll, addr, value) {
        Ok(()) => {
            std::thread::yield_now();
            0
        }
        Err(message) => {
            st.message = Some(message);
            1
        }
    }
}

/// One thread's mbarrier operation (`program::mbarrier` has the semantics) on the object at host address
/// `addr`; the result goes to `out`. A CTA runs on one worker, so the read-modify-write needs no atomics.
extern "C" fn mbarrier(ctx: *mut CtaCtx, op: *const Op, addr: u64, a: u64, out: *mut u64) -> u32 {
    let (ctx, st) = state(ctx);
    // SAFETY: a live op of the compiled kernel, and the caller's result word.
    let (op, out) = unsafe { (&*op, &mut *out) };
    let Sub::Mbar(m) = op.m.sub else { return 0 };
    let result = if m == program::mbarrier::Mbar::PendingCount {
        program::mbarrier::pending_count(a)
    } else {
        // The emulator's order of checks: the space, the alignment, the bounds.
        let shared = ctx.shared as u64;
        let inside = addr >= shared && addr.saturating_add(8) <= shared.saturating_add(ctx.shared_size);
        if !inside && op.m.space != Space::Shared {
            st.message = Some(format!(
                "the mbarrier object's address {addr:#x} is not in the CTA's shared memory (an mbarrier lives in \
                 shared memory)"
            ));
            return 1;
        }
        if !addr.is_multiple_of(8) {
            return 3;
        }
        if !inside {
            return 2;
        }
        // SAFETY: eight aligned bytes inside the CTA's shared memory (checked above).
        let word = unsafe { (addr as *const u64).read() };
        program::mbarrier::apply(m, word, a).map(|step| {
            if step.word != word {
                // SAFETY: as above.
                unsafe { (addr as *mut u64).write(step.word) };
                st.mbar_epoch += 1;
            }
            step.result
        })
    };
    match result {
        Ok(v) => {
            *out = v;
            0
        }
        Err(m) => {
            st.message = Some(m);
            1
        }
    }
}

/// `cp.async` for one thread (`program::copy` has the semantics): `n` bytes from `src` (global memory) and
/// zeros up to `size` into `dst` (shared memory, a host address).
extern "C" fn cp_async(ctx: *mut CtaCtx, dst: u64, src: u64, n: u64, size: u64) -> u32 {
    let (ctx, st) = state(ctx);
    let shared = ctx.shared as u64;
    if !dst.is_multiple_of(size.max(1)) {
        return 3;
    }
    if dst < shared || dst.saturating_add(size) > shared.saturating_add(ctx.shared_size) {
        return 2;
    }
    let n = n.min(size);
    if n > 0 && !st.reachable(ctx, src, n as u32) {
        return 1;
    }
    // SAFETY: the source range is readable device memory and the destination lies in the CTA's shared
    // memory (both checked above); they cannot overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, n as usize);
        std::ptr::write_bytes((dst + n) as *mut u8, 0, (size - n) as usize);
    }
    0
}

/// One thread's bulk copy or reduction (`program::bulk::copy_lane`), or `st.async`/`red.async`
/// (`program::store_async::store_lane`, its values after the four words), through a warp of one lane whose
/// addresses are host addresses.
extern "C" fn bulk_copy(ctx: *mut CtaCtx, op: *const Op, io: *const u64) -> u32 {
    let (ctx, st) = state(ctx);
    let raw = io;
    // SAFETY: a live op of the compiled kernel; the caller's four words and a tensor copy's coordinates.
    let op = unsafe { &*op };
    let Some(program::Extra::Bulk(bulk)) = op.extra.as_deref() else { return 0 };
    let rank = bulk.tensor.as_ref().map_or(0, |t| t.rank);
    // SAFETY: as above.
    let io = unsafe { std::slice::from_raw_parts(io, 4 + rank) };
    let empty = device::Textures::default();
    let mut lane = OneLane { srcs: &[], dsts: &[], io: &mut [], st, ctx, textures: &empty };
    let mbar = (bulk.mbar.is_some()).then_some(io[3]);
    let result = match &bulk.tensor {
        Some(t) => {
            let coords: Vec<i32> = io[4..].iter().map(|&c| c as i32).collect();
            program::tma::copy_lane(
                &mut lane,
                0,
                bulk,
                t,
                io[0],
                io[1],
                &coords,
                mbar,
                (ctx.shared as u64, ctx.shared_size),
            )
        }
        None if bulk.stored > 0 => {
            // SAFETY: st.async / red.async: the caller's slot holds the values after the four words.
            let values = unsafe { std::slice::from_raw_parts(raw.add(4), bulk.stored as usize) };
            program::store_async::store_lane(&mut lane, 0, op, bulk, io[0], values, io[3])
        }
        None => program::bulk::copy_lane(&mut lane, 0, op, bulk, io[0], io[1], io[2] & 0xffff_ffff, mbar),
    };
    match result {
        Ok(changed) => {
            lane.st.mbar_epoch += u64::from(changed);
            0
        }
        Err(e) => {
            lane.st.texture_error = Some(e.kind);
            1
        }
    }
}

/// io = [a, b, c, d, carry, out, out2]; returns 0 when the emulator defines no result for the op.
extern "C" fn alu(op: *const Op, io: *mut u64) -> u32 {
    // SAFETY: generated code passes a live op of the compiled kernel and its thread's scratch words.
    let (op, io) = unsafe { (&*op, std::slice::from_raw_parts_mut(io, 7)) };
    let lane = |v: u64| {
        let mut l = [0u64; WARP];
        l[0] = v;
        l
    };
    let (a, b, c, d) = (lane(io[0]), lane(io[1]), lane(io[2]), lane(io[3]));
    let mut out = [0u64; WARP];
    let mut out2 = [0u64; WARP];
    let mut carry = (io[4] & 1) as u32;
    let ok = program::alu::exec(op, LaneMask(1), &a, &b, &c, &d, &mut out, &mut out2, &mut carry);
    io[4] = u64::from(carry & 1);
    io[5] = out[0];
    io[6] = out2[0];
    u32::from(ok)
}

extern "C" fn atomic_new(op: *const Op, old: u64, a: u64, b: u64) -> u64 {
    // SAFETY: a live op of the compiled kernel.
    let op = unsafe { &*op };
    let Sub::Atom(aop) = op.m.sub else { return old };
    if aop == AtomOp::Cas {
        return if old & op.ty.mask() == a & op.ty.mask() { b } else { old };
    }
    program::alu::atomic(aop, op.ty, old, a, b)
}

fn state<'a>(ctx: *mut CtaCtx) -> (&'a mut CtaCtx, &'a mut WorkerState) {
    // SAFETY: the context and its runtime state live for the CTA's execution, on this thread only.
    unsafe {
        let ctx = &mut *ctx;
        let st = &mut *(ctx.runtime as *mut WorkerState);
        (ctx, st)
    }
}

/// Reads `size` bytes at a generic address, refusing anything outside the memory the launch can reach.
fn load(st: &WorkerState, ctx: &CtaCtx, addr: u64, size: u32) -> Result<u64, ()> {
    if !st.reachable(ctx, addr, size) {
        return Err(());
    }
    let mut buf = [0u8; 8];
    // SAFETY: `reachable` checked that the bytes lie in device, shared, local or parameter memory.
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, buf.as_mut_ptr(), size as usize) };
    Ok(u64::from_le_bytes(buf))
}

extern "C" fn printf(ctx: *mut CtaCtx, t: u32, fmt: u64, args: u64) -> i32 {
    let (ctx, st) = state(ctx);
    match program::printf::format(fmt, args, &mut |a, s| load(st, ctx, a, s)) {
        Ok(text) => {
            st.printf(ctx.phase, t, text);
            // vprintf returns the number of arguments; nvcc ignores it.
            0
        }
        Err(()) => {
            st.message = Some(format!(
                "printf reads memory outside every allocation (format at {fmt:#x}, arguments at {args:#x})"
            ));
            -1
        }
    }
}

extern "C" fn assert_fail(ctx: *mut CtaCtx, _t: u32, msg: u64, file: u64, line: u64, func: u64) {
    let (ctx, st) = state(ctx);
    let string = |a: u64| {
        let mut s = Vec::new();
        for i in 0..4096 {
            match load(st, ctx, a + i, 1) {
                Ok(0) | Err(()) => break,
                Ok(b) => s.push(b as u8),
            }
        }
        String::from_utf8_lossy(&s).into_owned()
    };
    let text =
        format!("device assertion `{}` failed at {}:{} in `{}`", string(msg), string(file), line as u32, string(func));
    st.message = Some(text);
}

extern "C" fn malloc(ctx: *mut CtaCtx, size: u64) -> u64 {
    let (_, st) = state(ctx);
    st.heap.as_ref().map_or(0, |h| h.malloc(size))
}

extern "C" fn free(ctx: *mut CtaCtx, ptr: u64) -> u32 {
    let (_, st) = state(ctx);
    let result = match &st.heap {
        Some(h) => h.free(ptr),
        None => Err("the kernel calls free but the runtime made no device heap".to_string()),
    };
    match result {
        Ok(()) => 0,
        Err(m) => {
            st.message = Some(m);
            1
        }
    }
}

extern "C" fn check_access(ctx: *mut CtaCtx, addr: u64, size: u32, write: u32) -> u32 {
    let (ctx, st) = state(ctx);
    st.check(ctx, addr, size, write != 0)
}

extern "C" fn clock() -> u64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
}

extern "C" fn bar_arrive(ctx: *mut CtaCtx, id: u32, count: u32) {
    let (_, st) = state(ctx);
    let e = st.arrivals.entry(id).or_default();
    e.0 += 1;
    if count > 0 {
        e.1 = count;
    }
}

extern "C" fn is_global(ctx: *mut CtaCtx, addr: u64, only_const: u32) -> u32 {
    let (_, st) = state(ctx);
    u32::from(st.is_global(addr, only_const != 0))
}

/// One thread's texture or surface instruction: the emulator's semantics (`program::texture::exec`) for a
/// warp of one lane, whose operands are the values generated code put in `io` (sources, then the
/// destinations' old values, in `TexOp::operands` order) and whose results go back there.
extern "C" fn texture(ctx: *mut CtaCtx, _t: u32, op: *const Op, io: *mut u64) -> u32 {
    let (ctx, st) = state(ctx);
    // SAFETY: a live op of the compiled kernel.
    let op = unsafe { &*op };
    let Some(program::Extra::Texture(tex)) = op.extra.as_deref() else { return 0 };
    if st.textures == 0 {
        return 1;
    }
    // SAFETY: the launch's objects, alive while its CTAs run.
    let textures = unsafe { &*(st.textures as *const device::Textures) };
    // Fetches, nearly every texture instruction, straight from the words: the handle, the coordinates, then
    // the four values and the predicate.
    if let program::texture::TexOp::Fetch { coords, dsts: values, pred, .. } = tex {
        let (nc, nv) = (coords.len(), values.len());
        // SAFETY: generated code passes one word per source and destination (`TexOp::operands`).
        let io = unsafe { std::slice::from_raw_parts_mut(io, 1 + nc + nv + usize::from(*pred != program::Dst::None)) };
        let mut c = [0u64; 4];
        c[..nc.min(4)].copy_from_slice(&io[1..1 + nc.min(4)]);
        let handle = io[0];
        let mut lane = OneLane { srcs: &[], dsts: &[], io, st, ctx, textures };
        return match program::texture::fetch_lane(&mut lane, 0, tex, handle, &c[..nc.min(4)]) {
            Ok(v) => {
                for (k, d) in values.iter().enumerate().take(4) {
                    lane.io[1 + nc + k] = masked(*d, v[k]);
                }
                if *pred != program::Dst::None {
                    lane.io[1 + nc + nv] = 1;
                }
                0
            }
            Err(e) => {
                lane.st.texture_error = Some(e.kind);
                1
            }
        };
    }
    let mut srcs: smallvec::SmallVec<[*const program::Src; 8]> = smallvec::SmallVec::new();
    let mut dsts: smallvec::SmallVec<[program::Dst; 8]> = smallvec::SmallVec::new();
    tex.operands(|s| srcs.push(s as *const program::Src), |d| dsts.push(*d));
    // SAFETY: as above.
    let io = unsafe { std::slice::from_raw_parts_mut(io, srcs.len() + dsts.len()) };
    let mut lane = OneLane { srcs: &srcs, dsts: &dsts, io, st, ctx, textures };
    match program::texture::exec(&mut lane, LaneMask(1), op) {
        Ok(()) => 0,
        Err(e) => {
            lane.st.texture_error = Some(e.kind);
            1
        }
    }
}

/// `v` as destination `d` holds it: masked to the register's width, a predicate 0 or 1.
fn masked(d: program::Dst, v: u64) -> u64 {
    match d {
        program::Dst::Pred(_) => u64::from(v != 0),
        program::Dst::Reg(_, m) if m != 0 => v & m,
        _ => v,
    }
}

/// A warp of one lane, for [`texture`].
struct OneLane<'a> {
    srcs: &'a [*const program::Src],
    dsts: &'a [program::Dst],
    io: &'a mut [u64],
    st: &'a mut WorkerState,
    ctx: &'a CtaCtx,
    textures: &'a device::Textures,
}

impl program::WarpAccess for OneLane<'_> {
    fn read(&self, src: &program::Src) -> [u64; WARP] {
        // The op's own operands, found by address (the semantics read the fields of the same op).
        let k = self.srcs.iter().position(|&s| std::ptr::eq(s, src));
        [k.map_or(0, |k| self.io[k]); WARP]
    }

    fn write(&mut self, dst: program::Dst, vals: &[u64; WARP], mask: LaneMask) {
        if !mask.contains(0) {
            return;
        }
        if let Some(k) = self.dsts.iter().position(|&d| d == dst) {
            self.put(k, vals[0]);
        }
    }

    fn addresses(&self, _exec: LaneMask) -> [u64; WARP] {
        [0; WARP]
    }

    fn load(&mut self, _lane: u32, space: Space, address: u64, size: u32) -> Result<u64, device::ExecError> {
        if matches!(space, Space::Shared | Space::Global) {
            self.allowed(space, address, size, false)?;
        }
        load(self.st, self.ctx, address, size).map_err(|()| self.oob(space, address, size))
    }

    fn store(
        &mut self,
        _lane: u32,
        space: Space,
        address: u64,
        size: u32,
        value: u64,
    ) -> Result<(), device::ExecError> {
        let shared = self.ctx.shared as u64;
        let in_shared = address >= shared && address.saturating_add(u64::from(size)) <= shared + self.ctx.shared_size;
        if matches!(space, Space::Shared | Space::Global) || !in_shared {
            self.allowed(space, address, size, true)?;
        }
        // SAFETY: inside the CTA's shared memory or a writable allocation of the launch (checked above).
        unsafe { std::ptr::copy_nonoverlapping(value.to_le_bytes().as_ptr(), address as *mut u8, size as usize) };
        Ok(())
    }

    fn update(
        &mut self,
        lane: u32,
        space: Space,
        address: u64,
        size: u32,
        f: &dyn Fn(u64) -> u64,
    ) -> Result<u64, device::ExecError> {
        self.allowed(space, address, size, true)?;
        if !address.is_multiple_of(u64::from(size)) || !matches!(size, 1 | 2 | 4 | 8) {
            return Err(self.misaligned(0, space, address, size));
        }
        if space == Space::Shared {
            // The CTA runs on this worker only: a read and a write are atomic for its shared memory.
            let old = self.load(lane, space, address, size)?;
            self.store(lane, space, address, size, f(old))?;
            return Ok(old);
        }
        // Other workers run other CTAs of the launch: a compare-and-swap loop on the host word.
        if size == 8 {
            // SAFETY: an aligned word inside a writable allocation of the launch.
            let word = unsafe { std::sync::atomic::AtomicU64::from_ptr(address as *mut u64) };
            return Ok(word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(f(old))).unwrap_or_default());
        }
        // A narrower element is swapped inside its aligned 32-bit word. Allocations are padded to a multiple
        // of `device::memory::ALIGN` bytes, so the whole word is the allocation's even where the element ends
        // it.
        let shift = (address % 4) * 8;
        let mask = u32::MAX >> (32 - 8 * size);
        // SAFETY: as above, the aligned word holding the element.
        let word = unsafe { std::sync::atomic::AtomicU32::from_ptr((address & !3) as *mut u32) };
        let update = |w: u32| {
            let old = (w >> shift) & mask;
            let new = f(u64::from(old)) as u32 & mask;
            Some(w & !(mask << shift) | new << shift)
        };
        let w = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, update).unwrap_or_default();
        Ok(u64::from((w >> shift) & mask))
    }

    fn misaligned(&self, _lane: u32, space: Space, address: u64, size: u32) -> device::ExecError {
        device::ExecError::new(
            device::ErrorKind::Misaligned { space: to_space(space), address, size },
            device::Location::default(),
        )
    }

    fn error(&self, _lane: u32, kind: device::ErrorKind) -> device::ExecError {
        device::ExecError::new(kind, device::Location::default())
    }

    fn textures(&self) -> &device::Textures {
        self.textures
    }
}

impl OneLane<'_> {
    /// Destination `k` gets `v`, masked to its width (a predicate to 0 or 1).
    fn put(&mut self, k: usize, v: u64) {
        self.io[self.srcs.len() + k] = masked(self.dsts[k], v);
    }

    /// Checks that `size` bytes at host `address` lie where an access to `space` may go: the CTA's shared
    /// window for shared memory (reported by offset, as the other shared accesses are), an allocation of the
    /// launch (a writable one for `write`) for global memory and anything else, so that a bad address fails
    /// instead of reaching another allocation.
    fn allowed(&self, space: Space, address: u64, size: u32, write: bool) -> Result<(), device::ExecError> {
        if space == Space::Shared {
            let (base, len) = (self.ctx.shared as u64, self.ctx.shared_size);
            let offset = address.wrapping_sub(base);
            if offset.checked_add(u64::from(size)).is_some_and(|end| end <= len) {
                return Ok(());
            }
            let detail = Some(format!("the CTA's shared memory has {len} bytes"));
            let kind = device::ErrorKind::OutOfBounds { space: device::Space::Shared, address: offset, size, detail };
            return Err(device::ExecError::new(kind, device::Location::default()));
        }
        match self.st.region(address, size) {
            Some(&(_, _, true)) if write => Err(device::ExecError::new(
                device::ErrorKind::ReadOnly { space: to_space(space), address },
                device::Location::default(),
            )),
            Some(_) => Ok(()),
            None => Err(self.oob(space, address, size)),
        }
    }

    fn oob(&self, space: Space, address: u64, size: u32) -> device::ExecError {
        device::ExecError::new(
            device::ErrorKind::OutOfBounds { space: to_space(space), address, size, detail: None },
            device::Location::default(),
        )
    }
}

fn to_space(s: Space) -> device::Space {
    crate::exec::to_space(s)
}
