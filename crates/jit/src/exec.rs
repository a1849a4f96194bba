//! Running a compiled kernel's CTAs: per-worker buffers, the barrier and warp-collective rendezvous between
//! calls of the thread loop, `printf` ordering, and errors with their locations.

use std::collections::HashMap;

use device::guarded::Guarded;
use device::{Dim3, ErrorKind, ExecError, Location, Space};
use program::{AtomOp, Kind, Sub, WARP};
use simt::LaneMask;

use crate::abi::{error, status, thread, CtaCtx};
use crate::compile::Compiled;
use crate::fault::{self, Window};
use crate::plan::YieldKind;
use crate::vector::WIDTH;

mod warpgroup;

/// Everything the launch shares with every worker (read-only during the launch).
#[derive(Debug)]
pub struct LaunchData<'a> {
    pub compiled: &'a Compiled,
    pub module: &'a ir::Module,
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared: u32,
    pub shared_size: u64,
    pub params: &'a [u8],
    pub globals: &'a [u64],
    pub helpers: &'a [usize],
    /// Device allocations: (base, size, read-only, label), sorted by base.
    pub regions: &'a [(u64, u64, bool, String)],
    pub textures: &'a device::Textures,
    /// The device heap (`malloc`/`free` in kernels), when the runtime made one.
    pub heap: Option<std::sync::Arc<device::DeviceHeap>>,
    /// A number no other launch of this process has: workers outlive launches, and what they copy from a
    /// launch (its allocations) is copied again when it changes.
    pub launch: u64,
    /// A cooperative launch's shared state (`cooperative.rs`), with its grid workspace.
    pub cooperative: Option<std::sync::Arc<crate::cooperative::GridState>>,
}

/// One worker's state during a CTA: what helpers record, and the CTA's `printf` output.
#[derive(Debug, Default)]
pub struct WorkerState {
    pub message: Option<String>,
    /// `bar.arrive` arrivals per barrier id: (threads, declared count).
    pub arrivals: HashMap<u32, (u32, u32)>,
    /// (barrier phase, thread, printf number within the thread, text).
    log: Vec<(u32, u32, u32, Vec<u8>)>,
    seq: Vec<u32>,
    regions: Vec<(u64, u64, bool)>,
    params: (u64, u64),
    /// The threads' local memory (host address, bytes).
    locals: (u64, u64),
    /// The device heap, for `malloc` and `free`.
    pub heap: Option<std::sync::Arc<device::DeviceHeap>>,
    /// The launch `regions` and `heap` were copied from.
    launch: u64,
    /// The address of the launch's texture and surface objects (the `Texture` helper reads them; 0: none).
    pub textures: usize,
    /// Why the last texture or surface instruction failed (error code `TEXTURE`).
    pub texture_error: Option<ErrorKind>,
    /// Changes of the CTA's mbarrier objects so far: a pass of failed waits that changes none made no progress.
    pub mbar_epoch: u64,
    /// The cooperative launch the CTA belongs to (`Helper::GridSpin` reads it), and the CTA's last polls.
    pub grid: Option<std::sync::Arc<crate::cooperative::GridState>>,
    pub poll: crate::cooperative::Poll,
}

impl WorkerState {
    pub fn printf(&mut self, phase: u32, t: u32, text: Vec<u8>) {
        if self.seq.len() <= t as usize {
            self.seq.resize(t as usize + 1, 0);
        }
        let s = self.seq[t as usize];
        self.seq[t as usize] += 1;
        self.log.push((phase, t, s, text));
    }

    /// Whether `[addr, addr+size)` lies in memory the launch can reach.
    pub fn reachable(&self, ctx: &CtaCtx, addr: u64, size: u32) -> bool {
        in_range(addr, size, ctx.shared as u64, ctx.shared_size)
            || in_range(addr, size, self.locals.0, self.locals.1)
            || in_range(addr, size, self.params.0, self.params.1)
            || self.region(addr, size).is_some()
    }

    /// The allocation holding `[addr, addr+size)`: (base, size, read-only).
    pub fn region(&self, addr: u64, size: u32) -> Option<&(u64, u64, bool)> {
        let i = self.regions.partition_point(|r| r.0 <= addr);
        let r = self.regions.get(i.checked_sub(1)?)?;
        in_range(addr, size, r.0, r.1).then_some(r)
    }

    /// `isspacep.global` (any allocation) and `isspacep.const` (a read-only one).
    pub fn is_global(&self, addr: u64, only_const: bool) -> bool {
        self.region(addr, 1).is_some_and(|r| !only_const || r.2)
    }

    /// Checked mode: 0 when the access is allowed, else an error code.
    pub fn check(&self, ctx: &CtaCtx, addr: u64, size: u32, write: bool) -> u32 {
        if in_range(addr, size, ctx.shared as u64, ctx.shared_size)
            || in_range(addr, size, self.locals.0, self.locals.1)
        {
            return error::NONE;
        }
        if in_range(addr, size, self.params.0, self.params.1) {
            return if write { error::READ_ONLY } else { error::NONE };
        }
        match self.region(addr, size) {
            Some(&(_, _, ro)) if write && ro => error::READ_ONLY,
            Some(_) if !addr.is_multiple_of(u64::from(size.max(1))) => error::MISALIGNED,
            Some(_) => error::NONE,
            None => error::OUT_OF_BOUNDS,
        }
    }
}

/// Whether `[addr, addr+size)` lies inside `[base, base+len)`.
fn in_range(addr: u64, size: u32, base: u64, len: u64) -> bool {
    addr >= base && addr.checked_add(u64::from(size)).is_some_and(|end| end <= base + len)
}

/// Buffers a worker reuses from CTA to CTA.
#[derive(Debug, Default)]
pub struct Worker {
    /// The CTA's shared memory. Between guard pages, as device allocations are: unchecked code that runs
    /// past it faults and is reported (`fault.rs`) instead of corrupting the host's heap.
    shared: Buffers,
    /// The threads' state words (`abi::thread`).
    threads: Vec<u128>,
    /// The threads' local memory, one frame after another, guarded as shared memory is.
    locals: Buffers,
    state: WorkerState,
}

/// Guard bytes below and above shared memory. Generated code forms a shared address as the window's base
/// plus a register (a 32-bit one zero-extended) plus a signed 32-bit immediate, so every address a 32-bit
/// register can produce lands in the window or a guard.
const SHARED_BELOW: usize = (1 << 31) + (1 << 16);
const SHARED_ABOVE: usize = (1 << 32) + (1 << 31) + (1 << 16);
/// Guard bytes around the threads' local memory.
const LOCAL_GUARD: usize = 1 << 20;

/// A worker's guarded buffer, known to the fault handler while it lives.
#[derive(Debug)]
struct Watched(Guarded);

impl Drop for Watched {
    fn drop(&mut self) {
        fault::unwatch(self.0.as_ptr() as usize);
    }
}

/// A worker's guarded buffer of the current launch, and a few of earlier launches' sizes kept mapped: a
/// program alternating kernels does not map and unmap memory at every launch (which cost more than the
/// launch itself), and each buffer is still exactly as long as its launch needs (its end is a guard).
#[derive(Debug, Default)]
struct Buffers {
    current: Option<Watched>,
    spare: Vec<Watched>,
}

/// Spare buffers kept per worker and kind.
const SPARE_BUFFERS: usize = 3;

impl Buffers {
    /// The buffer of `len` bytes starting at a multiple of `align` (zeroed when newly mapped).
    fn sized(&mut self, len: usize, align: usize, below: usize, above: usize, kind: Window) -> &mut Guarded {
        let fits = |w: &Watched| w.0.len() == len && (w.0.as_ptr() as usize).is_multiple_of(align);
        if !self.current.as_ref().is_some_and(fits) {
            if let Some(old) = self.current.take() {
                if self.spare.len() == SPARE_BUFFERS {
                    self.spare.remove(0);
                }
                self.spare.push(old);
            }
            self.current = match self.spare.iter().position(fits) {
                Some(i) => Some(self.spare.remove(i)),
                None => {
                    let g = Guarded::new(len, align, below, above);
                    fault::watch(g.as_ptr() as usize, len, below, above, kind);
                    Some(Watched(g))
                }
            };
        }
        &mut self.current.as_mut().expect("just mapped").0
    }

    /// The current buffer's address (0 when there is none).
    fn address(&self) -> u64 {
        self.current.as_ref().map_or(0, |w| w.0.as_ptr() as u64)
    }
}

/// The compiled vector path's signature: `fn(ctx, lo, hi) -> first thread not run`.
type VectorFn = extern "C" fn(*mut CtaCtx, u32, u32) -> u32;
/// The compiled thread loop's: `fn(ctx, lo, hi)`.
type EntryFn = extern "C" fn(*mut CtaCtx, u32, u32);

/// Runs `f` on the context, which calls compiled code; a fault in that code (an access to unmapped memory,
/// unchecked) becomes the context's error instead of the process's end (`fault::guarded`).
fn guarded(ctx: &mut CtaCtx, f: &mut dyn FnMut(*mut CtaCtx)) {
    let p: *mut CtaCtx = ctx;
    if let Err(addr) = crate::fault::guarded(&mut || f(p)) {
        ctx.error_code = error::FAULT;
        ctx.error_addr = addr;
    }
}

/// `entry(ctx, lo, hi)`, guarded.
fn run_entry(entry: EntryFn, ctx: &mut CtaCtx, lo: u32, hi: u32) {
    guarded(ctx, &mut |p| entry(p, lo, hi));
}

/// `vector(ctx, lo, hi)`, guarded; after a fault, `hi` (the error stops the caller).
fn run_vector(vector: VectorFn, ctx: &mut CtaCtx, lo: u32, hi: u32) -> u32 {
    let mut end = hi;
    guarded(ctx, &mut |p| end = vector(p, lo, hi));
    end
}

/// The kernel's vector path where this launch can take it: groups of four consecutive threads share tid.y
/// and tid.z when ntid.x is a multiple of 4.
fn vector_of(data: &LaunchData<'_>) -> Option<VectorFn> {
    match data.compiled.vector {
        // SAFETY: `vector` is the compiled vector path, `fn(ctx, lo, hi) -> first thread not run`.
        Ok(v) if data.block.x.is_multiple_of(WIDTH) => Some(unsafe { std::mem::transmute::<usize, VectorFn>(v) }),
        _ => None,
    }
}

/// The vector path for bundles of groups, where the kernel has one.
fn bundles_of(c: &Compiled) -> Option<VectorFn> {
    // SAFETY: `vector_bundles` is compiled code with the vector path's signature.
    c.vector_bundles.map(|p| unsafe { std::mem::transmute::<usize, VectorFn>(p) })
}

/// Runs threads `0..n` of a kernel without yield points: bundles of groups on the vector path while a whole
/// bundle remains (where it has them), single groups for the next eight groups after a bundle stops and for
/// the last few, and the scalar loop for a group the vector path leaves (its lanes disagree at a branch) or
/// a partial one.
///
/// It calls compiled code directly: the caller guards the whole run (its frame holds nothing to drop).
fn run_groups(ctx: *mut CtaCtx, vector: VectorFn, bundles: Option<VectorFn>, entry: EntryFn, n: u32) {
    // SAFETY: the caller's live context, used only through this pointer during the run.
    let ctx = unsafe { &mut *ctx };
    let mut t = 0;
    while t < n && ctx.error_code == 0 {
        match bundles {
            Some(bundles) => {
                t = bundles(ctx, t, n);
                if t >= n || ctx.error_code != 0 {
                    break;
                }
                // A bundle stopped (its groups disagree at a branch, or one of them does) or no whole bundle
                // remains: single groups for a while, so that a kernel whose groups often disagree with each
                // other does not redo a bundle's work at every one.
                let end = (t + 8 * WIDTH).min(n);
                while t < end && ctx.error_code == 0 {
                    t = vector(ctx, t, end);
                    if t < end && ctx.error_code == 0 {
                        let next = (t + WIDTH).min(n);
                        entry(ctx, t, next);
                        t = next;
                    }
                }
            }
            None => {
                t = vector(ctx, t, n);
                if t < n && ctx.error_code == 0 {
                    let end = (t + WIDTH).min(n);
                    entry(ctx, t, end);
                    t = end;
                }
            }
        }
    }
}

/// Byte offset of thread `t`'s state words (lane `t % LANES` of its group).
pub fn thread_offset(t: u32, group_bytes: u64) -> usize {
    let lanes = thread::LANES as u32;
    (u64::from(t / lanes) * group_bytes) as usize + (t % lanes) as usize * 8
}

/// What a CTA printed (also when it failed: what it printed before).
pub type CtaOutput = Vec<u8>;

impl Worker {
    /// Runs CTAs `ctas` (flat indices) in order. `stop(cta)` says to stop before that CTA (a lower one
    /// failed); `report` gets each CTA that printed or failed, with its output and error.
    ///
    /// Kernels the vector path runs without the scalar loop's passes (no yield points, or the whole-CTA mode)
    /// keep one context for the whole run: a CTA then costs a few stores and a call.
    pub fn run_ctas(
        &mut self,
        data: &LaunchData<'_>,
        ctas: std::ops::Range<u64>,
        stop: &dyn Fn(u64) -> bool,
        report: &mut dyn FnMut(u64, CtaOutput, Option<ExecError>),
    ) {
        let c = data.compiled;
        let n = data.block.count().unwrap_or(0) as u32;
        let vector = vector_of(data);
        let whole_ctas = vector.is_some() && c.vector_whole_ctas;
        if !whole_ctas && !c.plan.yields.is_empty() {
            // Passes over the CTA driven from here, with thread statuses.
            for cta in ctas {
                if stop(cta) {
                    return;
                }
                let (out, err) = self.run_cta(data, cta);
                if err.is_some() || !out.is_empty() {
                    report(cta, out, err);
                }
            }
            return;
        }
        // SAFETY: `entry` is the compiled kernel's thread loop with the signature `fn(ctx, lo, hi)`.
        let entry: EntryFn = unsafe { std::mem::transmute(c.entry) };
        let bundles = bundles_of(c);
        let mut state = std::mem::take(&mut self.state);
        let mut id = data.grid.unflatten(ctas.start);
        let mut ctx = self.context(data, id, &mut state);
        for cta in ctas {
            if stop(cta) {
                break;
            }
            if c.touches_shared {
                // SAFETY: `ctx.shared` is this worker's shared memory of `shared_size` bytes.
                unsafe { std::ptr::write_bytes(ctx.shared, 0, data.shared_size as usize) };
            }
            ctx.ctaid = [id.x, id.y, id.z];
            match vector {
                Some(vector) if whole_ctas => {
                    // The whole CTA, barriers included, in one call (every group reaches every barrier).
                    let end = run_vector(vector, &mut ctx, 0, n);
                    // (It stops early only at an error, which it records.)
                    debug_assert!(end == n || ctx.error_code != 0, "the whole-CTA vector path runs every group");
                }
                Some(vector) => guarded(&mut ctx, &mut |p| run_groups(p, vector, bundles, entry, n)),
                None => run_entry(entry, &mut ctx, 0, n),
            }
            if ctx.error_code != 0 || !state.log.is_empty() {
                let err = (ctx.error_code != 0).then(|| self::error(data, &ctx, &mut state, id));
                report(cta, printed(&mut state), err);
                state.message = None;
                ctx.error_code = 0;
            }
            (ctx.phase, ctx.arrived, ctx.finished) = (0, 0, 0);
            // The next CTA in row-major order.
            id.x += 1;
            if id.x == data.grid.x {
                id.x = 0;
                id.y += 1;
                if id.y == data.grid.y {
                    id.y = 0;
                    id.z += 1;
                }
            }
        }
        self.state = state;
    }

    /// The context for CTA `id`: this worker's buffers sized for the launch (shared memory zeroed where the
    /// kernel can see it), `state` reset for a new CTA.
    fn context(&mut self, data: &LaunchData<'_>, id: Dim3, state: &mut WorkerState) -> CtaCtx {
        let c = data.compiled;
        let n = data.block.count().unwrap_or(0) as u32;
        // Shared memory starts zeroed, as in the emulator (where the kernel can see it).
        // Shared memory starts at a multiple of the largest `.align` of its variables (their generic addresses
        // are then aligned as on a GPU, where the window is aligned far beyond any of them).
        let align = (c.shared.align as usize).clamp(16, 4096).next_power_of_two();
        let shared = self.shared.sized(data.shared_size as usize, align, SHARED_BELOW, SHARED_ABOVE, Window::Shared);
        if c.touches_shared {
            shared.zero();
        }
        let shared = shared.as_mut_ptr();
        let groups = n.div_ceil(thread::LANES as u32) as usize;
        let words = (groups * c.group_bytes as usize).div_ceil(16);
        if self.threads.len() != words {
            self.threads.clear();
            self.threads.resize(words, 0);
        }
        let local_stride = c.local_stride as usize;
        // A dynamic stack's area must be aligned alike in every thread (`translate/stack.rs`).
        let align = if c.dyn_stack.is_some() { program::stack::AREA_ALIGN as usize } else { 16 };
        let locals =
            self.locals.sized(local_stride * n as usize, align, LOCAL_GUARD, LOCAL_GUARD, Window::Local).as_mut_ptr();
        if let Some(start) = c.dyn_stack {
            // Every thread's dynamic stack pointer starts at its area's start.
            for t in 0..n as usize {
                let area = locals as u64 + (t * local_stride) as u64 + start;
                // SAFETY: the pointer's 8 bytes lie inside thread t's local memory (`start` >= 8).
                unsafe { std::ptr::write_unaligned((area - 8) as *mut u64, area) };
            }
        }
        state.message = None;
        state.arrivals.clear();
        state.mbar_epoch = 0;
        state.log.clear();
        state.seq.clear();
        if state.launch != data.launch {
            // A new launch: its allocations (one free and one cudaMalloc later, the same number of others).
            state.regions.clear();
            state.regions.extend(data.regions.iter().map(|r| (r.0, r.1, r.2)));
            state.heap = data.heap.clone();
            state.textures = data.textures as *const device::Textures as usize;
            state.launch = data.launch;
        }
        state.grid = data.cooperative.clone();
        state.poll = Default::default();
        state.params = (data.params.as_ptr() as u64, data.params.len() as u64);
        state.locals = (locals as u64, (local_stride * n as usize) as u64);
        CtaCtx {
            shared,
            params: data.params.as_ptr(),
            threads: self.threads.as_mut_ptr() as *mut u8,
            group_bytes: c.group_bytes,
            locals,
            local_stride: c.local_stride,
            ntid: [data.block.x, data.block.y, data.block.z],
            ctaid: [id.x, id.y, id.z],
            nctaid: [data.grid.x, data.grid.y, data.grid.z],
            thread_count: n,
            globals: data.globals.as_ptr(),
            helpers: data.helpers.as_ptr(),
            funcs: c.funcs.as_ptr(),
            ops: c.ops.as_ptr(),
            runtime: state as *mut WorkerState as *mut u8,
            shared_size: data.shared_size,
            dynamic_shared: data.dynamic_shared,
            error_code: 0,
            error_thread: 0,
            error_site: 0,
            error_addr: 0,
            error_size: 0,
            phase: 0,
            status_mask: u32::MAX,
            arrived: 0,
            finished: 0,
            workspace: data.cooperative.as_ref().map_or(0, |g| g.workspace),
        }
    }

    /// One CTA of a kernel with yield points that the whole-CTA mode does not run: passes of the thread loop
    /// (and of the vector path, with counted barriers) between barrier releases and collectives.
    fn run_cta(&mut self, data: &LaunchData<'_>, cta_index: u64) -> (CtaOutput, Option<ExecError>) {
        let c = data.compiled;
        let n = data.block.count().unwrap_or(0) as u32;
        let id = data.grid.unflatten(cta_index);
        let mut state = std::mem::take(&mut self.state);
        let mut ctx = self.context(data, id, &mut state);
        let base = self.threads.as_mut_ptr() as *mut u8;
        // Status and resume point start at 0 (ready, at the kernel's start).
        for t in 0..n {
            // SAFETY: each thread's status word is inside the buffer.
            unsafe { (base.add(thread_offset(t, c.group_bytes)) as *mut u64).write(0) };
        }
        // SAFETY: `entry` is the compiled kernel's thread loop with the signature `fn(ctx, lo, hi)`.
        let entry: EntryFn = unsafe { std::mem::transmute(c.entry) };
        let threads = self.threads.as_mut_ptr() as *mut u8;
        let status_of = |t: u32| -> u32 {
            // SAFETY: `t < n`: its status word is inside the buffer.
            unsafe { (threads.add(thread_offset(t, c.group_bytes) + thread::STATUS as usize) as *const u32).read() }
        };
        let word = |t: u32, off: i32| -> *mut u64 {
            // SAFETY: as above; the offsets are of the thread's state words.
            unsafe { threads.add(thread_offset(t, c.group_bytes) + off as usize) as *mut u64 }
        };
        let fail = |ctx: &CtaCtx, state: &mut WorkerState| -> ExecError { self::error(data, ctx, state, id) };
        let vector = vector_of(data);
        // mbarrier waits: the last pass's progress signature, and passes in a row without progress.
        let mut last = None;
        let mut idle = 0;
        loop {
            let epoch = state.mbar_epoch;
            // Run every thread until it finishes or stops; with warp collectives, warp by warp, resolving
            // the collectives of each warp before moving on.
            if c.has_collectives {
                // With `wgmma`, a warpgroup at a time, so that its four warps meet (`exec/warpgroup.rs`).
                let span = if c.has_warpgroups { 4 * WARP as u32 } else { WARP as u32 };
                let mut lo = 0;
                while lo < n {
                    let hi = (lo + span).min(n);
                    loop {
                        run_entry(entry, &mut ctx, lo, hi);
                        if ctx.error_code != 0 {
                            {
                                let e = fail(&ctx, &mut state);
                                return (self.finish(state), Some(e));
                            }
                        }
                        let mut any = false;
                        for w in (lo..hi).step_by(WARP) {
                            match self.resolve_collectives(data, w, (w + WARP as u32).min(hi), id, &status_of, &word) {
                                Ok(r) => any |= r,
                                Err(e) => return (self.finish(state), Some(e)),
                            }
                        }
                        if c.has_warpgroups {
                            match self.resolve_warpgroups(data, lo, hi, id, &status_of, &word) {
                                Ok(r) => any |= r,
                                Err(e) => return (self.finish(state), Some(e)),
                            }
                        }
                        if !any {
                            break;
                        }
                    }
                    lo = hi;
                }
            } else if let (Some(vector), true) = (vector, c.plan.counted_barriers) {
                // Passes over the CTA as in the scalar loop with counted barriers: groups on the vector path,
                // the groups it leaves on the scalar loop, each visited once; a pass where every thread
                // arrived at the barrier releases them all (status mask 0) and another pass follows.
                loop {
                    ctx.arrived = 0;
                    let mut t = 0;
                    while t < n {
                        t = run_vector(vector, &mut ctx, t, n);
                        if ctx.error_code != 0 {
                            let e = fail(&ctx, &mut state);
                            return (self.finish(state), Some(e));
                        }
                        if t < n {
                            let end = (t + WIDTH).min(n);
                            if ctx.status_mask == 0 {
                                // The scalar loop starts a call with the full mask: released threads are made
                                // ready first.
                                for u in t..end {
                                    if status_of(u) == status::BARRIER {
                                        // SAFETY: the status word of a thread of this CTA.
                                        unsafe { (word(u, thread::STATUS) as *mut u32).write(status::READY) };
                                    }
                                }
                            }
                            run_entry(entry, &mut ctx, t, end);
                            if ctx.error_code != 0 {
                                let e = fail(&ctx, &mut state);
                                return (self.finish(state), Some(e));
                            }
                            ctx.arrived += (t..end).filter(|&u| status_of(u) == status::BARRIER).count() as u32;
                            t = end;
                        }
                    }
                    if ctx.arrived != n {
                        break;
                    }
                    ctx.status_mask = 0;
                    ctx.phase += 1;
                }
                // Every thread was visited in the last pass: statuses are exact again (done, or waiting in a
                // CTA that cannot release: a deadlock below).
                ctx.status_mask = u32::MAX;
            } else {
                run_entry(entry, &mut ctx, 0, n);
                if ctx.error_code != 0 {
                    {
                        let e = fail(&ctx, &mut state);
                        return (self.finish(state), Some(e));
                    }
                }
            }
            if ctx.finished == n {
                return (self.finish(state), None);
            }
            let waiting: Vec<u32> = (0..n).filter(|&t| status_of(t) == status::WAIT).collect();
            if release_barriers(data, n, &mut state, &status_of, &word) {
                ctx.phase += 1;
                idle = 0;
            } else if waiting.is_empty() {
                let stuck = if c.has_warpgroups { self.stuck(data, n, id, &status_of, &word) } else { None };
                let e = stuck.unwrap_or_else(|| deadlock(data, n, id, &state, &status_of, &word));
                return (self.finish(state), Some(e));
            } else {
                // Threads whose wait failed go on in the next pass. A pass that changed no mbarrier, finished no
                // thread and brought none to a barrier or collective made no progress.
                let stopped = (0..n).filter(|&t| matches!(status_of(t), status::BARRIER | status::COLLECTIVE)).count();
                let now = (state.mbar_epoch != epoch, ctx.finished, stopped);
                idle = if !now.0 && last == Some(now) { idle + 1 } else { 0 };
                last = Some(now);
                if idle >= program::mbarrier::IDLE_ROUNDS {
                    let e = wait_deadlock(data, n, id, ctx.shared as u64, &waiting, &status_of, &word);
                    return (self.finish(state), Some(e));
                }
            }
            for &t in &waiting {
                // SAFETY: the status word of a thread of this CTA.
                unsafe { (word(t, thread::STATUS) as *mut u32).write(status::READY) };
            }
        }
    }

    /// Resolves every warp collective the lanes `lo..hi` wait at; returns whether any was.
    fn resolve_collectives(
        &self,
        data: &LaunchData<'_>,
        lo: u32,
        hi: u32,
        cta: Dim3,
        status_of: &dyn Fn(u32) -> u32,
        word: &dyn Fn(u32, i32) -> *mut u64,
    ) -> Result<bool, ExecError> {
        let c = data.compiled;
        let x = c.plan.exchange_offset();
        let kernel = &c.programs[&c.kernel];
        let mut groups: HashMap<u32, LaneMask> = HashMap::new();
        for t in lo..hi {
            if status_of(t) == status::COLLECTIVE {
                // SAFETY: reading the thread's resume word.
                let r = unsafe { (word(t, thread::RESUME) as *const u32).read() };
                if c.has_warpgroups && warpgroup::at(data, r).is_some() {
                    // The warpgroup meets there (`exec/warpgroup.rs`).
                    continue;
                }
                let g = groups.entry(r).or_insert(LaneMask::EMPTY);
                *g = LaneMask(g.0 | 1 << (t - lo));
            }
        }
        if groups.is_empty() {
            return Ok(false);
        }
        let mut groups: Vec<(u32, LaneMask)> = groups.into_iter().collect();
        groups.sort_unstable_by_key(|g| g.0);
        // A `.sync` collective waits for every lane its member masks name (those that have not exited):
        // lanes that diverged before it may still be on their way (a branch's lanes at an `activemask`
        // while the others already wait at the `shfl.sync` after the join). Such a group waits while
        // other lanes can move; when none can, every group is resolved with the lanes it has.
        let live = LaneMask((lo..hi).filter(|&t| status_of(t) != status::DONE).fold(0u64, |m, t| m | 1 << (t - lo)));
        let complete = |&(resume, lanes): &(u32, LaneMask)| -> bool {
            let op = &kernel.ops[c.plan.yields[resume as usize - 1].op as usize];
            let (src, post) = match op.kind {
                Kind::Shfl => (&op.d, thread::POST_D),
                Kind::Vote | Kind::Match | Kind::Redux | Kind::Elect => (&op.b, thread::POST_B),
                Kind::WarpSync => (&op.a, thread::POST_A),
                _ => return true,
            };
            if *src == program::Src::None {
                return true;
            }
            lanes.iter().all(|l| {
                // SAFETY: the posted operand word of a thread of this CTA.
                let posted = unsafe { word(lo + l, x + post).read() };
                let members = program::warp::member_mask(src, posted) & live.0;
                members & !lanes.0 == 0
            })
        };
        if groups.iter().any(complete) {
            groups.retain(complete);
        } else if (lo..hi).any(|t| status_of(t) == status::WAIT) {
            // Lanes that failed an mbarrier wait run again in the next pass: they may still come.
            return Ok(false);
        }
        for (resume, lanes) in groups {
            let y = &c.plan.yields[resume as usize - 1];
            let op = &kernel.ops[y.op as usize];
            if y.kind == YieldKind::Runtime {
                let shared = self.shared.address();
                let locals = self.locals.address();
                let mut warp = RuntimeWarp { data, lo, cta, y, op, shared, locals, word };
                let r = match op.kind {
                    Kind::Matrix => program::tensor::exec(&mut warp, lanes, op),
                    _ => program::texture::exec(&mut warp, lanes, op),
                };
                r?;
                for l in lanes.iter() {
                    // SAFETY: the status word of a thread of this CTA.
                    unsafe { (word(lo + l, thread::STATUS) as *mut u32).write(status::READY) };
                }
                continue;
            }
            let mut a = [0u64; WARP];
            let mut b = [0u64; WARP];
            let mut cc = [0u64; WARP];
            for l in lanes.iter() {
                let t = lo + l;
                // SAFETY: the posted operand words of a thread of this CTA.
                unsafe {
                    a[l as usize] = word(t, x + thread::POST_A).read();
                    b[l as usize] = word(t, x + thread::POST_B).read();
                    cc[l as usize] = word(t, x + thread::POST_C).read();
                }
            }
            let mut out = [0u64; WARP];
            let mut out2 = [0u64; WARP];
            program::warp::exec(op, lanes, lanes, [&a, &b, &cc], &mut out, &mut out2);
            for l in lanes.iter() {
                let t = lo + l;
                // SAFETY: writing this thread's result words and status.
                unsafe {
                    word(t, x + thread::OUT).write(out[l as usize]);
                    word(t, x + thread::OUT2).write(out2[l as usize]);
                    (word(t, thread::STATUS) as *mut u32).write(status::READY);
                }
            }
        }
        Ok(true)
    }
}

/// A warp stopped at a matrix, texture or surface instruction, seen through [`program::WarpAccess`]: registers are
/// the words its threads spilled at the instruction (the plan puts every register the op reads or writes
/// there), addresses are host addresses as everywhere in the JIT.
struct RuntimeWarp<'r, 'a> {
    data: &'r LaunchData<'a>,
    lo: u32,
    cta: Dim3,
    y: &'r crate::plan::YieldPoint,
    op: &'r program::Op,
    /// Host addresses of the CTA's shared memory and of its threads' local memory.
    shared: u64,
    locals: u64,
    word: &'r dyn Fn(u32, i32) -> *mut u64,
}

impl RuntimeWarp<'_, '_> {
    fn lanes(&self) -> u32 {
        let n = self.data.block.count().unwrap_or(0) as u32;
        n.saturating_sub(self.lo).min(WARP as u32)
    }

    /// Offset of a register slot (or predicate) in the spill area.
    fn slot_offset(&self, slot: Option<u32>, pred: Option<u32>) -> Option<i32> {
        let var = match (slot, pred) {
            (Some(s), _) => s as usize,
            (_, Some(p)) => self.data.compiled.programs[&self.data.compiled.kernel].slots as usize + p as usize,
            _ => return None,
        };
        self.y.live.contains(&var).then(|| self.data.compiled.plan.home_offset(var)).flatten()
    }

    fn fault(&self, lane: u32, kind: ErrorKind) -> ExecError {
        let c = self.data.compiled;
        let site = c.sites.iter().position(|&(f, i)| f == c.kernel && i == self.y.op).unwrap_or(0) as u32;
        let mut e = ExecError::new(kind, location(self.data, site, self.cta, Some(self.lo + lane)));
        e.location.thread = Some(self.data.block.unflatten(u64::from(self.lo + lane)));
        e
    }

    fn reachable(&self, addr: u64, size: u32) -> bool {
        let locals = u64::from(self.data.block.count().unwrap_or(0) as u32) * self.data.compiled.local_stride;
        in_range(addr, size, self.shared, self.data.shared_size)
            || in_range(addr, size, self.locals, locals)
            || in_range(addr, size, self.data.params.as_ptr() as u64, self.data.params.len() as u64)
            || self.data.regions.iter().any(|r| in_range(addr, size, r.0, r.1))
    }

    fn out_of_bounds(&self, lane: u32, space: program::Space, address: u64, size: u32) -> ExecError {
        let detail = describe(self.data, self.host(space, address), size);
        self.fault(lane, ErrorKind::OutOfBounds { space: to_space(space), address, size, detail })
    }

    fn host(&self, space: program::Space, address: u64) -> u64 {
        match space {
            program::Space::Shared => self.shared.wrapping_add(address),
            _ => address,
        }
    }
}

impl program::WarpAccess for RuntimeWarp<'_, '_> {
    fn read(&self, src: &program::Src) -> [u64; WARP] {
        use program::{Src, SymAddr};
        let mut out = [0u64; WARP];
        for l in 0..self.lanes() {
            let t = self.lo + l;
            out[l as usize] = match *src {
                Src::Reg(r) => self
                    .slot_offset(Some(r), None)
                    // SAFETY: a spill word of a thread of this CTA.
                    .map_or(0, |off| unsafe { (self.word)(t, off).read() }),
                Src::Pred(p, neg) => {
                    // SAFETY: as above.
                    let v = self.slot_offset(None, Some(p)).map_or(0, |off| unsafe { (self.word)(t, off).read() } & 1);
                    v ^ u64::from(neg)
                }
                Src::Imm(v) => v,
                Src::Special(s, c) => {
                    let pick = |d: Dim3| u64::from([d.x, d.y, d.z].get(c as usize).copied().unwrap_or(0));
                    match s {
                        ir::SpecialReg::Tid => pick(self.data.block.unflatten(u64::from(t))),
                        ir::SpecialReg::Ntid => pick(self.data.block),
                        ir::SpecialReg::Ctaid => pick(self.cta),
                        ir::SpecialReg::Nctaid => pick(self.data.grid),
                        ir::SpecialReg::Laneid => u64::from(l),
                        _ => 0,
                    }
                }
                Src::Sym(sym, off) => {
                    let base = match sym {
                        SymAddr::Global(a) | SymAddr::Func(a) => a,
                        SymAddr::Shared(o) => o,
                        // The kernel's frame: the thread's local memory.
                        SymAddr::Frame(o) => self.locals + u64::from(t) * self.data.compiled.local_stride + o,
                        SymAddr::KernelParam(o) => self.data.params.as_ptr() as u64 + o,
                    };
                    base.wrapping_add(off as u64)
                }
                Src::None => 0,
            };
        }
        out
    }

    fn write(&mut self, dst: program::Dst, vals: &[u64; WARP], mask: LaneMask) {
        let (off, m) = match dst {
            program::Dst::Reg(r, m) => (self.slot_offset(Some(r), None), m),
            program::Dst::Pred(p) => (self.slot_offset(None, Some(p)), 1),
            _ => (None, 0),
        };
        let Some(off) = off else { return };
        for l in mask.iter().filter(|&l| l < self.lanes()) {
            let v = if m == 1 { u64::from(vals[l as usize] != 0) } else { vals[l as usize] & m };
            // SAFETY: a spill word of a thread of this CTA.
            unsafe { (self.word)(self.lo + l, off).write(v) };
        }
    }

    fn addresses(&self, exec: LaneMask) -> [u64; WARP] {
        use program::{Src, SymAddr};
        let mut out = [0u64; WARP];
        let m = &self.op.mem;
        let vals = match m.base {
            Src::Sym(SymAddr::Shared(o), extra) if self.op.m.space != program::Space::Shared => {
                [self.shared.wrapping_add(o).wrapping_add(extra as u64); WARP]
            }
            ref b => self.read(b),
        };
        for l in exec.iter() {
            out[l as usize] = vals[l as usize].wrapping_add(m.offset as u64);
        }
        out
    }

    fn load(&mut self, lane: u32, space: program::Space, address: u64, size: u32) -> Result<u64, ExecError> {
        let host = self.host(space, address);
        if !self.reachable(host, size) {
            return Err(self.out_of_bounds(lane, space, address, size));
        }
        let mut buf = [0u8; 8];
        // SAFETY: checked to lie in memory the launch owns.
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, buf.as_mut_ptr(), size.min(8) as usize) };
        Ok(u64::from_le_bytes(buf))
    }

    fn store(
        &mut self,
        lane: u32,
        space: program::Space,
        address: u64,
        size: u32,
        value: u64,
    ) -> Result<(), ExecError> {
        let host = self.host(space, address);
        let read_only = self.data.regions.iter().any(|r| host >= r.0 && host < r.0 + r.1 && r.2);
        if !self.reachable(host, size) || read_only {
            return Err(self.out_of_bounds(lane, space, address, size));
        }
        let bytes = value.to_le_bytes();
        // SAFETY: checked to lie in writable memory the launch owns.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), host as *mut u8, size.min(8) as usize) };
        Ok(())
    }

    fn misaligned(&self, lane: u32, space: program::Space, address: u64, size: u32) -> ExecError {
        self.fault(lane, ErrorKind::Misaligned { space: to_space(space), address, size })
    }

    fn error(&self, lane: u32, kind: ErrorKind) -> ExecError {
        self.fault(lane, kind)
    }

    fn textures(&self) -> &device::Textures {
        self.data.textures
    }
}

pub(crate) fn to_space(s: program::Space) -> Space {
    match s {
        program::Space::Global => Space::Global,
        program::Space::Shared => Space::Shared,
        program::Space::Local => Space::Local,
        program::Space::Const => Space::Const,
        program::Space::Param => Space::Param,
        program::Space::Generic => Space::Generic,
    }
}

impl Worker {
    /// The CTA's printf output, and the state back to the worker for the next CTA.
    fn finish(&mut self, mut state: WorkerState) -> CtaOutput {
        let out = printed(&mut state);
        self.state = state;
        out
    }
}

/// What the CTA printed, in the order a GPU (and the emulator) prints in: by barrier phase, warp, the thread's
/// k-th printf, lane. Leaves the log empty for the next CTA.
fn printed(state: &mut WorkerState) -> CtaOutput {
    state.log.sort_by_key(|&(phase, t, seq, _)| (phase, t / WARP as u32, seq, t % WARP as u32));
    state.seq.clear();
    state.log.drain(..).flat_map(|(.., text)| text).collect()
}

/// Releases every barrier all its expected threads have reached (the emulator's rule: `bar.sync` without a
/// count waits for every thread of the CTA, so threads that exited make it wait forever).
fn release_barriers(
    data: &LaunchData<'_>,
    n: u32,
    state: &mut WorkerState,
    status_of: &dyn Fn(u32) -> u32,
    word: &dyn Fn(u32, i32) -> *mut u64,
) -> bool {
    let c = data.compiled;
    let x = c.plan.exchange_offset();
    let kernel = &c.programs[&c.kernel];
    // The common case: every thread waits at `bar.sync 0` (no count, no reduction, nobody arrived early).
    if state.arrivals.is_empty() && !c.has_reductions {
        let all = (0..n).all(|t| {
            status_of(t) == status::BARRIER
                && barrier_operand(data, t, word, true) == 0
                && barrier_operand(data, t, word, false) == 0
        });
        if all {
            for t in 0..n {
                // SAFETY: the status word of a thread of this CTA.
                unsafe { (word(t, thread::STATUS) as *mut u32).write(status::READY) };
            }
            return true;
        }
    }
    let mut waiting: HashMap<u32, Vec<u32>> = HashMap::new();
    for t in 0..n {
        if status_of(t) == status::BARRIER {
            let id = barrier_operand(data, t, word, true);
            waiting.entry(id).or_default().push(t);
        }
    }
    let mut released = false;
    let mut ids: Vec<u32> = waiting.keys().copied().collect();
    ids.sort_unstable();
    for id in ids {
        let threads = &waiting[&id];
        let (arrived_only, declared) = state.arrivals.get(&id).copied().unwrap_or((0, 0));
        let expected = threads
            .iter()
            .map(|&t| barrier_operand(data, t, word, false))
            .find(|&e| e > 0)
            .or((declared > 0).then_some(declared))
            .unwrap_or(n);
        if (threads.len() as u32) + arrived_only < expected {
            continue;
        }
        state.arrivals.remove(&id);
        // bar.red: combine the contributions of the waiting threads.
        // SAFETY: the resume word of a waiting thread.
        let resume = unsafe { (word(threads[0], thread::RESUME) as *const u32).read() };
        let op = &kernel.ops[c.plan.yields[resume as usize - 1].op as usize];
        let red = match op.m.sub {
            Sub::Bar { red, .. } => red,
            _ => None,
        };
        let mut acc: u64 = u64::from(red == Some(AtomOp::And));
        if let Some(r) = red {
            for &t in threads {
                // SAFETY: the posted reduction input.
                let v = unsafe { word(t, x + thread::POST_C).read() } != 0;
                acc = match r {
                    AtomOp::Popc => acc + u64::from(v),
                    AtomOp::And => acc & u64::from(v),
                    AtomOp::Or => acc | u64::from(v),
                    _ => acc,
                };
            }
        }
        for &t in threads {
            // SAFETY: result word and status of a waiting thread.
            unsafe {
                word(t, x + thread::OUT).write(acc);
                (word(t, thread::STATUS) as *mut u32).write(status::READY);
            }
        }
        released = true;
    }
    released
}

/// The barrier id (`id`) or expected thread count of the barrier thread `t` waits at: the immediate of the
/// op, or the value the thread posted.
fn barrier_operand(data: &LaunchData<'_>, t: u32, word: &dyn Fn(u32, i32) -> *mut u64, id: bool) -> u32 {
    let x = data.compiled.plan.exchange_offset();
    // SAFETY: the resume word of a waiting thread.
    let resume = unsafe { (word(t, thread::RESUME) as *const u32).read() };
    let (a, b) = data.compiled.barrier_imms[resume as usize - 1];
    match if id { a } else { b } {
        Some(v) => v,
        // SAFETY: the posted operand of a waiting thread.
        None => (unsafe { word(t, x + if id { thread::POST_A } else { thread::POST_B }).read() }) as u32,
    }
}

fn location(data: &LaunchData<'_>, site: u32, cta: Dim3, t: Option<u32>) -> Location {
    let c = data.compiled;
    let kernel = &c.programs[&c.kernel];
    let mut loc = Location { kernel: kernel.name.clone(), block: Some(cta), ..Location::default() };
    if let Some(t) = t {
        loc.thread = Some(data.block.unflatten(u64::from(t)));
    }
    if let Some(&(f, i)) = c.sites.get(site as usize) {
        let prog = &c.programs[&f];
        loc.function = Some(prog.name.clone());
        if let Some(op) = prog.ops.get(i as usize) {
            loc.line = Some(program::inst_line(data.module, f, op.inst));
            loc.instruction = Some(program::inst_text(data.module, f, op.inst));
        }
    }
    loc
}

fn error(data: &LaunchData<'_>, ctx: &CtaCtx, state: &mut WorkerState, cta: Dim3) -> ExecError {
    let loc = if ctx.error_code == error::FAULT {
        // A fault interrupts the code wherever it is: the CTA is known, the thread and instruction are not.
        Location {
            kernel: data.compiled.programs[&data.compiled.kernel].name.clone(),
            block: Some(cta),
            ..Default::default()
        }
    } else {
        location(data, ctx.error_site, cta, Some(ctx.error_thread))
    };
    let space = space_of(data, ctx.error_site);
    let kind = match ctx.error_code {
        error::TRAP => ErrorKind::Trap,
        error::FAULT => {
            let mut site = crate::fault::locate(ctx.error_addr as usize);
            if site.space == Space::Global && site.address != u64::MAX {
                // Past which allocation, where one is near (guard pages surround each).
                if let Some(near) = describe(data, site.address, 1) {
                    site.detail = format!("unmapped memory, {near}");
                }
            }
            ErrorKind::OutOfBounds {
                space: site.space,
                address: site.address,
                size: 0,
                detail: Some(format!(
                    "{}; the JIT does not check memory accesses by default: --check (or the emulator) finds the \
                     thread and PTX line",
                    site.detail
                )),
            }
        }
        error::STACK_OVERFLOW => ErrorKind::StackOverflow(0),
        error::OUT_OF_BOUNDS => {
            let detail = match space {
                Space::Shared => Some(format!("the CTA's shared memory has {} bytes", data.shared_size)),
                Space::Local => {
                    Some(format!("the thread's local memory has {} bytes", frame_size(data, ctx.error_site)))
                }
                _ => describe(data, ctx.error_addr, ctx.error_size as u32),
            };
            ErrorKind::OutOfBounds { space, address: ctx.error_addr, size: ctx.error_size as u32, detail }
        }
        error::MISALIGNED => ErrorKind::Misaligned { space, address: ctx.error_addr, size: ctx.error_size as u32 },
        error::READ_ONLY => ErrorKind::ReadOnly { space, address: ctx.error_addr },
        error::BAD_CALL => {
            ErrorKind::Invalid(format!("indirect call to {:#x}, which is not a device function", ctx.error_addr))
        }
        error::TEXTURE => state
            .texture_error
            .take()
            .unwrap_or_else(|| ErrorKind::Invalid("a texture, surface or bulk copy instruction failed".into())),
        error::ASSERT => ErrorKind::Assert(state.message.take().unwrap_or_else(|| "a device assertion failed".into())),
        error::CLUSTER_RANK => ErrorKind::Invalid(program::cluster::rank_error(ctx.error_addr)),
        error::STACK_ALLOCA => {
            let c = data.compiled;
            let align = match c.sites.get(ctx.error_site as usize).map(|&(f, i)| c.programs[&f].ops[i as usize].b) {
                Some(program::Src::Imm(a)) => a,
                _ => program::stack::MIN_ALIGN,
            };
            ErrorKind::Invalid(program::stack::exhausted_error(ctx.error_addr, align, ctx.error_size))
        }
        error::STACK_RESTORE => ErrorKind::Invalid(program::stack::restore_error(ctx.error_addr)),
        error::HELPER => ErrorKind::Invalid(state.message.take().unwrap_or_else(|| "a runtime helper failed".into())),
        _ => ErrorKind::Invalid(format!(
            "`{}` has no defined result for these operands and modifiers",
            loc.instruction.clone().unwrap_or_default()
        )),
    };
    ExecError::new(kind, loc)
}

/// The frame size of the function an op belongs to.
fn frame_size(data: &LaunchData<'_>, site: u32) -> u64 {
    let c = data.compiled;
    c.sites.get(site as usize).map_or(0, |&(f, _)| c.programs[&f].frame.size)
}

fn space_of(data: &LaunchData<'_>, site: u32) -> Space {
    let c = data.compiled;
    let Some(&(f, i)) = c.sites.get(site as usize) else { return Space::Generic };
    to_space(c.programs[&f].ops[i as usize].m.space)
}

/// Where an out-of-bounds address lies relative to the allocations around it (the emulator's wording).
fn describe(data: &LaunchData<'_>, addr: u64, size: u32) -> Option<String> {
    let i = data.regions.partition_point(|r| r.0 <= addr);
    let below = i.checked_sub(1).and_then(|k| data.regions.get(k)).map(|r| (r.0, r.1, r.3.as_str()));
    let above = data.regions.get(i).map(|r| (r.0, r.1, r.3.as_str()));
    device::memory::describe_position(addr, size, below, above)
}

/// A CTA whose live threads have all failed mbarrier waits (or wait at barriers) for
/// `program::mbarrier::IDLE_ROUNDS` passes in which no mbarrier changed: located at the first waiting
/// thread's wait, with the state of the objects waited on.
fn wait_deadlock(
    data: &LaunchData<'_>,
    n: u32,
    cta: Dim3,
    shared: u64,
    waiting: &[u32],
    status_of: &dyn Fn(u32) -> u32,
    word: &dyn Fn(u32, i32) -> *mut u64,
) -> ExecError {
    let c = data.compiled;
    let x = c.plan.exchange_offset();
    // SAFETY: the resume and posted address words of waiting threads.
    let resume = |t: u32| unsafe { (word(t, thread::RESUME) as *const u32).read() };
    let object = |t: u32| unsafe { word(t, x + thread::POST_A).read() };
    let first = waiting[0];
    let y = &c.plan.yields[resume(first) as usize - 1];
    let site = c.sites.iter().position(|&(f, i)| f == c.kernel && i == y.op).unwrap_or(0) as u32;
    let mut objects: Vec<u64> = waiting.iter().map(|&t| object(t)).collect();
    objects.sort_unstable();
    objects.dedup();
    let states: Vec<String> = objects
        .iter()
        .map(|&a| {
            // SAFETY: the helper checked that the object lies in this CTA's shared memory.
            let w = unsafe { (a as *const u64).read() };
            format!("the mbarrier at shared offset {:#x} ({})", a - shared, program::mbarrier::describe(w))
        })
        .collect();
    let at_barrier = (0..n).filter(|&t| status_of(t) == status::BARRIER).count();
    let exited = (0..n).filter(|&t| status_of(t) == status::DONE).count();
    let detail = format!(
        "every live thread waits and none can arrive: {} threads spin on {}; {at_barrier} threads wait at a \
         barrier; {exited} of the CTA's {n} threads exited",
        waiting.len(),
        states.join(", ")
    );
    ExecError::new(ErrorKind::BarrierDivergence(detail), location(data, site, cta, Some(first)))
}

fn deadlock(
    data: &LaunchData<'_>,
    n: u32,
    cta: Dim3,
    state: &WorkerState,
    status_of: &dyn Fn(u32) -> u32,
    word: &dyn Fn(u32, i32) -> *mut u64,
) -> ExecError {
    let c = data.compiled;
    let waiting: Vec<u32> = (0..n).filter(|&t| status_of(t) == status::BARRIER).collect();
    let stuck: Vec<u32> = (0..n).filter(|&t| status_of(t) == status::COLLECTIVE).collect();
    let exited = (0..n).filter(|&t| status_of(t) == status::DONE).count();
    let first = waiting.first().or(stuck.first()).copied();
    let site = first.map(|t| {
        // SAFETY: the resume word of a stopped thread.
        let r = unsafe { (word(t, thread::RESUME) as *const u32).read() };
        let y = &c.plan.yields[r as usize - 1];
        c.sites.iter().position(|&(f, i)| f == c.kernel && i == y.op).unwrap_or(0) as u32
    });
    let mut loc = match site {
        Some(s) => location(data, s, cta, first),
        None => Location { kernel: c.programs[&c.kernel].name.clone(), block: Some(cta), ..Location::default() },
    };
    if loc.thread.is_none() {
        loc.thread = first.map(|t| data.block.unflatten(u64::from(t)));
    }
    // A warp some of whose lanes wait while others finished: the lanes took different paths of a branch.
    for w in 0..n.div_ceil(WARP as u32) {
        let lanes: Vec<u32> = (w * WARP as u32..((w + 1) * WARP as u32).min(n)).collect();
        let at: Vec<u32> = lanes.iter().copied().filter(|&t| status_of(t) == status::BARRIER).collect();
        if !at.is_empty() && at.len() < lanes.len() {
            let other = lanes.iter().copied().find(|t| !at.contains(t)).unwrap_or(0);
            let mask = LaneMask(at.iter().fold(0, |m, &t| m | 1 << (t % WARP as u32)));
            loc.thread = Some(data.block.unflatten(u64::from(other)));
            let detail = format!(
                "only {} of the {} live lanes of warp {w} reached the barrier together (lane mask {mask}); the \
                 others are on another path of a divergent branch",
                at.len(),
                lanes.len()
            );
            return ExecError::new(ErrorKind::BarrierDivergence(detail), loc);
        }
    }
    let mut ids: Vec<u32> = waiting.iter().map(|&t| barrier_operand(data, t, word, true)).collect();
    ids.sort_unstable();
    ids.dedup();
    let waits: Vec<String> = ids
        .iter()
        .map(|&id| {
            let k = waiting.iter().filter(|&&t| barrier_operand(data, t, word, true) == id).count() as u32
                + state.arrivals.get(&id).map_or(0, |a| a.0);
            format!("barrier {id} reached by {k} of the {n} threads it waits for")
        })
        .collect();
    let detail = if waits.is_empty() {
        format!(
            "{} threads wait at a warp collective whose other lanes cannot arrive; {exited} of the CTA's {n} threads exited",
            stuck.len()
        )
    } else {
        format!(
            "{}; {exited} of the CTA's {n} threads exited without reaching it, and no other thread can arrive",
            waits.join(", ")
        )
    };
    ExecError::new(ErrorKind::BarrierDivergence(detail), loc)
}
