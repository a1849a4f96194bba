//! Functions generated code calls for what is not worth inlining: the emulator's lane arithmetic for rare
//! ops and modifiers (so both engines agree bit for bit), atomics without a native instruction, `printf`,
//! failed assertions, checked-mode bounds checks and the clock.

use simt::LaneMask;

use crate::abi::{CtaCtx, Helper, HELPER_COUNT};
use crate::exec::WorkerState;
use program::{AtomOp, Op, Sub, WARP};

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
    t
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
