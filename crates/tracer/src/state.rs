//! Per-OS-thread tracing state: the execution hot path.
//!
//! Each guest thread runs on its own host thread in QEMU user mode, with its own vCPU index, so the state is
//! found by that index (which QEMU passes to every callback) in a preallocated table: no lock and no
//! thread-local lookup per block or memory access. The shadow call stack, the SIMT-thread segmentation
//! (`--function`, `--per-iteration`), `--exclude` skipping and lock detection all live here.
//!
//! The common case, recording blocks and accesses inside a SIMT thread with nothing else going on, is a
//! short path of its own ([`ThreadState::on_tb`], [`ThreadState::on_mem`]) guarded by one flag (`hot`);
//! everything else takes the general path.

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use trace::{
    ChunkKind, EventEncoder, Flow, LockKind, MetaRecord, SimtEnd, SimtStart, SkipKind, ThreadEnd, ThreadInfo, NONE,
};

use crate::encode::{MemEncoder, MemSite};
use crate::out::{SpillBuf, HEADROOM};
use crate::statics::{
    TbDesc, LOOP_EXIT, LOOP_HEADER_EXITS, ROLE_EXCLUDED, ROLE_KIND_MASK, ROLE_LOCK, ROLE_PLT, ROLE_REGION, ROLE_RELEASE,
};
use crate::{Slot, Tracer};

/// vCPU indexes the state table covers. QEMU user mode numbers vCPUs from 0 and reuses the numbers of exited
/// threads, so this bounds the threads alive at once.
pub const MAX_VCPUS: usize = 1 << 16;

/// Each vCPU's state (null before its thread's first block and after its end). Only the thread running the
/// vCPU reads or writes its entry and the state it points to.
static STATES: [AtomicPtr<ThreadState>; MAX_VCPUS] = [const { AtomicPtr::new(ptr::null_mut()) }; MAX_VCPUS];

thread_local! {
    /// The vCPU this host thread runs (`u32::MAX` before its state exists), for the paths that QEMU does not
    /// give it to (the process's exit).
    static MY_VCPU: Cell<u32> = const { Cell::new(u32::MAX) };
}

/// States of ended threads, reused by new threads (a state is leaked once, then recycled).
static POOL: std::sync::Mutex<Vec<&'static mut ThreadState>> = std::sync::Mutex::new(Vec::new());

/// The state of the thread running `vcpu`, if it has one. Must be called on that thread, and the reference
/// must not outlive the callback it is used in.
#[inline(always)]
pub fn state(vcpu: u32) -> Option<&'static mut ThreadState> {
    let p = STATES.get(vcpu as usize)?.load(Relaxed);
    // SAFETY: a non-null entry points to a leaked (never freed) `ThreadState`, set by `new_state` on the
    // thread running `vcpu` and cleared by `end_thread` on that same thread before the state is recycled. QEMU
    // runs a vCPU's callbacks on its thread one at a time, and no callback calls another, so this is the only
    // live reference to the state.
    unsafe { p.as_mut() }
}

/// Runs `f` on the state of the thread running `vcpu`, if it has one.
#[inline]
pub fn with_state<R>(vcpu: u32, f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    state(vcpu).map(f)
}

/// Creates the state of the thread running `vcpu` (at its first block); [`state`] then finds it.
#[cold]
pub fn new_state(t: &'static Tracer, vcpu: u32) -> Result<(), String> {
    let entry = STATES.get(vcpu as usize).ok_or_else(|| format!("vCPU index {vcpu}: more than {MAX_VCPUS} threads"))?;
    let fresh = ThreadState::new(t, vcpu)?;
    let recycled = POOL.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let s = match recycled {
        Some(old) => {
            *old = fresh;
            old
        }
        None => Box::leak(Box::new(fresh)),
    };
    entry.store(s, Relaxed);
    MY_VCPU.with(|c| c.set(vcpu));
    Ok(())
}

/// The thread ends: finish its state and recycle it.
pub fn end_thread() {
    let vcpu = MY_VCPU.with(|c| c.replace(u32::MAX));
    let Some(entry) = STATES.get(vcpu as usize) else { return };
    let p = entry.swap(ptr::null_mut(), Relaxed);
    // SAFETY: as in `state`; the entry is cleared, so this is the last reference handed out.
    if let Some(s) = unsafe { p.as_mut() } {
        s.finish();
        POOL.lock().unwrap_or_else(|e| e.into_inner()).push(s);
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    /// Return address pushed by the call (`u64::MAX` for a frame entered by a jump with no call seen).
    ret: u64,
    func: u32,
    /// The frame was entered through a PLT stub.
    plt: bool,
}

#[derive(Debug)]
struct Skip {
    depth: usize,
    count: u64,
    sym: u32,
}

#[derive(Debug)]
struct LockFrame {
    depth: usize,
    kind: LockKind,
    release: bool,
    sym: u32,
    /// What the function's own frame writes (its tail calls included), and what its callees write: only where
    /// the first is empty does the second count (libgomp's first `omp_set_nest_lock` on a thread allocates
    /// the thread's state, taking malloc's lock, before it takes the nest lock).
    target: Option<LockTarget>,
    callee_target: Option<LockTarget>,
    seen: [u32; 8],
    nseen: usize,
    spinning: bool,
    spin: u64,
    /// Inside the lock function proper (not its PLT stub or the dynamic linker's lazy binding).
    armed: bool,
}

/// A lock object's address as its lock function's writes reveal it (the tracer cannot read the argument
/// register): the function's first atomic read-modify-write, else its first store, stack frames aside; then
/// the lowest address it writes within [`LOCK_OBJECT`] bytes of that (glibc's `pthread_mutex_unlock` clears the
/// owner field at +8 before the lock word at +0, and takes a plain store for either when single-threaded).
#[derive(Debug, Clone, Copy)]
struct LockTarget {
    anchor: u64,
    atomic: bool,
    low: u64,
}

/// How far from the anchor a write still belongs to the lock object (glibc's largest, `pthread_rwlock_t`, is
/// 56 bytes).
const LOCK_OBJECT: u64 = 64;

impl LockTarget {
    fn write(t: &mut Option<LockTarget>, addr: u64, atomic: bool) {
        match t {
            None => *t = Some(LockTarget { anchor: addr, atomic, low: addr }),
            Some(t) => {
                let near = |a: u64, b: u64| a.abs_diff(b) < LOCK_OBJECT;
                if atomic && !t.atomic {
                    let low = if near(t.low, addr) { t.low.min(addr) } else { addr };
                    *t = LockTarget { anchor: addr, atomic, low };
                } else if near(t.anchor, addr) {
                    t.low = t.low.min(addr);
                }
            }
        }
    }
}

#[derive(Debug)]
struct Region {
    depth: usize,
    func: u32,
    per_iter: bool,
    iteration: u64,
}

/// A top-tested loop's header block ran: it is an iteration only if control stays in the loop.
#[derive(Debug)]
struct Pending {
    tb: &'static TbDesc,
    from: u16,
    /// Memory accesses of the header block: (site, access bits, address).
    mems: Vec<(MemSite, u64, u64)>,
    func: u32,
    iteration: u64,
}

#[derive(Debug)]
struct Seg {
    simt: u32,
    insns: u64,
}

/// The tracing state of one OS thread.
#[derive(Debug)]
pub struct ThreadState {
    t: &'static Tracer,
    slot: Arc<Slot>,
    os: u32,
    buf: SpillBuf,
    /// Encoder of the rare events (its address table is unused: memory events go through `mem`).
    enc: EventEncoder,
    mem: MemEncoder,
    chunks: trace::ChunkEncoder,
    last: Option<&'static TbDesc>,
    stack: Vec<Frame>,
    seg: Option<Seg>,
    region: Option<Region>,
    pending: Option<Pending>,
    skip: Option<Skip>,
    lock: Option<LockFrame>,
    /// Memory accesses of instructions before this index in the current block are not recorded (the SIMT
    /// thread started inside the block).
    mem_from: u16,
    /// Whether events are being recorded (in a segment, not skipping, not spinning, not pending).
    rec: bool,
    /// `rec`, and nothing that looks at single blocks or accesses: no lock call, no iteration splitting, all
    /// of the current block recorded. Then the short paths of `on_tb` and `on_mem` apply.
    hot: bool,
    /// Buffer length at which it is written out as a chunk.
    flush_at: usize,
    simt_in_os: u32,
    insns: u64,
    outside: u64,
    ticks: u32,
    last_flush: Instant,
    finished: bool,
}

const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

impl ThreadState {
    /// The state of a thread seen for the first time (on vCPU `vcpu`).
    pub fn new(t: &'static Tracer, vcpu: u32) -> Result<ThreadState, String> {
        let os = t.next_os.fetch_add(1, Relaxed);
        let rank = t.take_rank(vcpu);
        // SAFETY: gettid(2) through libc: no arguments, no memory, cannot fail.
        let tid = unsafe { libc::gettid() } as u32;
        let buf = SpillBuf::create(
            &t.cfg.spill_dir,
            &format!("thread-{os}.spill"),
            ChunkKind::Events,
            os,
            t.cfg.chunk_bytes + HEADROOM,
        )
        .map_err(|e| format!("cannot create a spill buffer in {}: {e}", t.cfg.spill_dir.display()))?;
        let slot = Arc::new(Slot::new(os, buf.path.clone()));
        t.slots.lock().unwrap_or_else(|e| e.into_inner()).push(slot.clone());
        t.meta(&MetaRecord::Thread(ThreadInfo { os, tid, rank }));
        let mut st = ThreadState {
            t,
            slot,
            os,
            buf,
            enc: EventEncoder::new(),
            mem: MemEncoder::new(),
            chunks: trace::ChunkEncoder::new(t.cfg.level),
            last: None,
            stack: Vec::with_capacity(64),
            seg: None,
            region: None,
            pending: None,
            skip: None,
            lock: None,
            mem_from: 0,
            rec: false,
            hot: false,
            flush_at: t.cfg.chunk_bytes,
            simt_in_os: 0,
            insns: 0,
            outside: 0,
            ticks: 0,
            last_flush: Instant::now(),
            finished: false,
        };
        if t.cfg.function.is_none() {
            st.start_segment(NONE, u64::MAX);
        }
        Ok(st)
    }

    /// Recomputes `rec` and `hot` after a change of the segment, skip, pending, lock, region or `mem_from`.
    fn update_rec(&mut self) {
        self.rec = self.seg.is_some()
            && self.skip.is_none()
            && self.pending.is_none()
            && !self.lock.as_ref().is_some_and(|l| l.spinning);
        self.hot =
            self.rec && self.lock.is_none() && self.mem_from == 0 && !self.region.as_ref().is_some_and(|r| r.per_iter);
    }

    fn start_segment(&mut self, function: u32, iteration: u64) {
        let (os, index_in_os, chunk_seq, offset) = (self.os, self.simt_in_os, self.buf.seq, self.buf.len() as u32);
        let simt = self.t.start_simt(|simt| {
            MetaRecord::SimtStart(SimtStart { simt, os, index_in_os, function, iteration, chunk_seq, offset })
        });
        self.simt_in_os += 1;
        self.enc.segment_start(&mut self.buf, simt);
        self.mem.reset();
        self.seg = Some(Seg { simt, insns: 0 });
        self.update_rec();
    }

    fn end_segment(&mut self) {
        if let Some(s) = self.skip.take() {
            if self.seg.is_some() {
                self.enc.skip(&mut self.buf, SkipKind::Excluded, s.count, s.sym.into());
            }
        }
        if let Some(l) = self.lock.take() {
            if l.spinning && self.seg.is_some() {
                self.enc.skip(&mut self.buf, SkipKind::LockSpin, l.spin, l.sym.into());
            }
        }
        if let Some(s) = self.seg.take() {
            self.enc.segment_end(&mut self.buf);
            self.t.meta(&MetaRecord::SimtEnd(SimtEnd { simt: s.simt, insns: s.insns }));
        }
        self.update_rec();
    }

    /// A translated block starts executing.
    #[inline(always)]
    pub fn on_tb(&mut self, tb: &'static TbDesc) {
        match self.last {
            Some(prev) if self.hot && !prev.exit_into(tb) => {
                // Recording, and control stays in the function: only the block to write.
                let n = u64::from(tb.n);
                self.insns += n;
                if let Some(s) = self.seg.as_mut() {
                    s.insns += n;
                }
                self.last = Some(tb);
                self.buf.put_words(tb.ev.bytes, 0, usize::from(tb.ev.len));
                self.block_done();
            }
            _ => self.on_tb_general(tb),
        }
    }

    /// After a block's events: publish them, and write the buffer out when due.
    #[inline(always)]
    fn block_done(&mut self) {
        self.buf.publish();
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks & 0xff == 0 || self.buf.len() >= self.flush_at {
            self.periodic();
        }
    }

    #[cold]
    #[inline(never)]
    fn periodic(&mut self) {
        if self.ticks & 0xff == 0 {
            self.buf.set_insns(self.insns);
            if self.ticks & 0xfff == 0 && !self.buf.is_empty() && self.last_flush.elapsed() >= FLUSH_INTERVAL {
                self.flush();
            }
        }
        if self.buf.len() >= self.flush_at {
            self.flush();
        }
    }

    /// [`Self::on_tb`] for everything but the common case.
    #[inline(never)]
    fn on_tb_general(&mut self, tb: &'static TbDesc) {
        let n = u64::from(tb.n);
        self.insns += n;
        if let Some(prev) = self.last {
            if self.pending.is_some() {
                self.resolve_pending(prev, tb);
            }
            if prev.term.is_transfer() {
                self.transition(prev, tb);
            }
        }
        self.last = Some(tb);
        self.mem_from = 0;
        let mut from = 0u16;
        if let Some(r) = &self.region {
            if r.per_iter && self.stack.len() == r.depth {
                from = self.iteration_point(tb);
            }
        }
        if let Some(s) = self.skip.as_mut() {
            s.count += n;
        } else if self.seg.is_some() {
            if let Some(l) = self.lock.as_mut() {
                if l.armed && (l.target.is_some() || l.callee_target.is_some()) && !l.spinning {
                    if l.seen[..l.nseen].contains(&tb.id) {
                        l.spinning = true;
                        self.rec = false;
                    } else if l.nseen < l.seen.len() {
                        l.seen[l.nseen] = tb.id;
                        l.nseen += 1;
                    }
                }
                if l.spinning {
                    l.spin += n;
                }
            }
            if self.rec {
                if from == 0 {
                    self.buf.put_words(tb.ev.bytes, 0, usize::from(tb.ev.len));
                } else {
                    self.enc.partial_block(&mut self.buf, tb.id, from);
                }
                if let Some(s) = self.seg.as_mut() {
                    s.insns += n - u64::from(from);
                }
            }
        } else if self.pending.is_none() {
            self.outside += n;
        }
        self.update_rec();
        self.block_done();
    }

    /// Control moved from `prev`'s last instruction (a transfer) to `tb`.
    #[inline]
    fn transition(&mut self, prev: &'static TbDesc, tb: &'static TbDesc) {
        match prev.term {
            Flow::Call | Flow::IndirectCall => self.on_call(prev.end, tb),
            Flow::Return => self.on_return(tb.addr),
            Flow::Jump | Flow::IndirectJump | Flow::CondBranch => {
                let sym = tb.entry_sym.load(Relaxed);
                if sym != NONE
                    && !(prev.term == Flow::CondBranch && tb.addr == prev.end)
                    && self.stack.last().is_none_or(|f| f.func != sym)
                {
                    self.on_tail_call(tb, sym);
                }
            }
            _ => {}
        }
    }

    fn on_call(&mut self, ret: u64, tb: &'static TbDesc) {
        let mut sym = tb.entry_sym.load(Relaxed);
        if sym == NONE {
            sym = self.t.name_call_target(tb);
        }
        let role = tb.role.load(Relaxed);
        self.stack.push(Frame { ret, func: sym, plt: role & ROLE_PLT != 0 });
        if self.rec {
            self.enc.call(&mut self.buf, sym);
        }
        self.enter_function(role, sym);
    }

    fn on_tail_call(&mut self, tb: &'static TbDesc, sym: u32) {
        let mut role = tb.role.load(Relaxed);
        let depth = self.stack.len();
        match self.stack.last_mut() {
            Some(f) => {
                if f.plt && role & ROLE_PLT == 0 {
                    // From a PLT stub into the function: the stub's name decided the lock role.
                    role &= !(ROLE_LOCK | ROLE_RELEASE | ROLE_KIND_MASK);
                    if let Some(l) = self.lock.as_mut() {
                        if l.depth == depth {
                            l.armed = true;
                        }
                    }
                }
                f.func = sym;
                // A tail call into a PLT stub (`jmp GOMP_critical_name_end@plt`) makes the frame a stub's.
                f.plt = role & ROLE_PLT != 0;
            }
            None => self.stack.push(Frame { ret: u64::MAX, func: sym, plt: role & ROLE_PLT != 0 }),
        }
        if self.rec {
            self.enc.tail_call(&mut self.buf, sym);
        }
        self.enter_function(role, sym);
    }

    fn enter_function(&mut self, role: u8, sym: u32) {
        if role & !ROLE_PLT == 0 {
            return;
        }
        let depth = self.stack.len();
        if self.rec {
            if role & ROLE_EXCLUDED != 0 {
                self.skip = Some(Skip { depth, count: 0, sym });
                self.rec = false;
            } else if role & ROLE_LOCK != 0 && self.lock.is_none() {
                self.lock = Some(LockFrame {
                    depth,
                    kind: TbDesc::lock_kind(role),
                    release: role & ROLE_RELEASE != 0,
                    sym,
                    target: None,
                    callee_target: None,
                    seen: [0; 8],
                    nseen: 0,
                    spinning: false,
                    spin: 0,
                    armed: role & ROLE_PLT == 0,
                });
            }
        } else if role & ROLE_REGION != 0 && self.seg.is_none() && self.region.is_none() && self.skip.is_none() {
            let per_iter = self.t.cfg.per_iteration && self.t.has_loop(sym);
            self.region = Some(Region { depth, func: sym, per_iter, iteration: 0 });
            if !per_iter {
                self.start_segment(sym, u64::MAX);
            }
        }
    }

    fn on_return(&mut self, target: u64) {
        let frames = match self.stack.iter().rposition(|f| f.ret == target) {
            Some(i) => {
                let k = self.stack.len() - i;
                self.stack.truncate(i);
                k as u32
            }
            None => 0,
        };
        let depth = self.stack.len();
        if self.skip.as_ref().is_some_and(|s| s.depth > depth) {
            let s = self.skip.take().expect("checked");
            self.update_rec();
            if self.rec {
                self.enc.skip(&mut self.buf, SkipKind::Excluded, s.count, s.sym.into());
            }
        }
        let mut lock_event = None;
        if self.lock.as_ref().is_some_and(|l| l.depth > depth) {
            let l = self.lock.take().expect("checked");
            self.update_rec();
            if self.rec {
                if l.spinning {
                    self.enc.skip(&mut self.buf, SkipKind::LockSpin, l.spin, l.sym.into());
                }
                lock_event = l.target.or(l.callee_target).map(|t| (l.kind, l.release, t.low));
            }
        }
        if self.region.as_ref().is_some_and(|r| r.depth > depth) {
            // A lock function tail-called at the end of the SIMT thread (`jmp GOMP_critical_name_end`) returns
            // past it: its event still belongs to the thread.
            if let (true, Some((kind, release, addr))) = (self.rec, lock_event) {
                self.enc.lock(&mut self.buf, kind, release, addr);
            }
            if let Some(p) = self.pending.take() {
                self.outside += u64::from(p.tb.n - u32::from(p.from));
            }
            self.end_segment();
            self.region = None;
            self.update_rec();
            return;
        }
        if self.rec {
            self.enc.ret(&mut self.buf, frames);
            if let Some((kind, release, addr)) = lock_event {
                self.enc.lock(&mut self.buf, kind, release, addr);
            }
        }
    }

    /// `--per-iteration`, at the region function's own depth: start or end iterations. Returns the index of
    /// the first instruction of `tb` that belongs to the current SIMT thread.
    fn iteration_point(&mut self, tb: &'static TbDesc) -> u16 {
        let flags = tb.loop_flags.load(Relaxed);
        let header = (flags & 0xffff) as u16;
        if header > 0 {
            let k = header - 1;
            self.end_segment();
            self.outside += u64::from(k);
            let (func, iteration) = match self.region.as_mut() {
                Some(r) => {
                    r.iteration += 1;
                    (r.func, r.iteration - 1)
                }
                None => return 0,
            };
            if flags & LOOP_HEADER_EXITS != 0 {
                self.pending = Some(Pending { tb, from: k, mems: Vec::new(), func, iteration });
                self.update_rec();
            } else {
                self.start_segment(func, iteration);
            }
            self.mem_from = k;
            return k;
        }
        if flags & LOOP_EXIT != 0 && self.seg.is_some() {
            self.end_segment();
        }
        0
    }

    /// Decides what the pending header execution was, now that `tb` follows `prev`.
    fn resolve_pending(&mut self, prev: &'static TbDesc, tb: &'static TbDesc) {
        let Some(depth) = self.region.as_ref().map(|r| r.depth) else {
            self.pending = None;
            return;
        };
        let leaves = !prev.term.is_call()
            && self.stack.len() == depth
            && (tb.loop_flags.load(Relaxed) & LOOP_EXIT != 0 || prev.term == Flow::Return);
        let p = self.pending.take().expect("pending");
        if leaves {
            self.outside += u64::from(p.tb.n - u32::from(p.from));
            // The iteration number was taken; give it back.
            if let Some(r) = self.region.as_mut() {
                r.iteration -= 1;
            }
            self.update_rec();
            return;
        }
        self.start_segment(p.func, p.iteration);
        if p.from == 0 {
            self.enc.block(&mut self.buf, p.tb.id);
        } else {
            self.enc.partial_block(&mut self.buf, p.tb.id, p.from);
        }
        for &(site, access, addr) in &p.mems {
            self.mem.mem(&mut self.buf, site, access, addr);
        }
        if let Some(s) = self.seg.as_mut() {
            s.insns += u64::from(p.tb.n - u32::from(p.from));
        }
    }

    /// A memory access by the instruction `site` of the current block; `access` = [`crate::encode::access_bits`].
    #[inline(always)]
    pub fn on_mem(&mut self, site: MemSite, access: u64, vaddr: u64) {
        if self.hot {
            self.mem.mem(&mut self.buf, site, access, vaddr);
        } else {
            self.on_mem_general(site, access, vaddr);
        }
    }

    #[inline(never)]
    fn on_mem_general(&mut self, site: MemSite, access: u64, vaddr: u64) {
        let store = access & crate::encode::access_bits(true, 0) != 0;
        if let Some(l) = self.lock.as_mut() {
            if l.armed && self.skip.is_none() && (site.atomic() || store) && !site.stack() {
                let target = if self.stack.len() == l.depth { &mut l.target } else { &mut l.callee_target };
                LockTarget::write(target, vaddr, site.atomic());
            }
        }
        if site.insn() < self.mem_from {
            return;
        }
        if self.rec {
            self.mem.mem(&mut self.buf, site, access, vaddr);
        } else if let Some(p) = self.pending.as_mut() {
            if p.mems.len() < 1 << 16 {
                p.mems.push((site, access, vaddr));
            }
        }
    }

    /// A system call is made.
    pub fn on_syscall(&mut self, num: i64) {
        if self.rec {
            self.enc.skip(&mut self.buf, SkipKind::Syscall, 0, num as u64);
        }
        self.buf.publish();
        self.buf.set_insns(self.insns);
    }

    /// Writes the buffer as a chunk (meta first).
    pub fn flush(&mut self) {
        self.last_flush = Instant::now();
        let _g = self.slot.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.t.closed.load(Relaxed) || self.slot.done.load(Relaxed) {
            return;
        }
        self.t.write_events(&mut self.buf, &mut self.chunks);
        self.slot.insns.store(self.insns, Relaxed);
    }

    /// The thread ends (or the process exits on this thread): close the SIMT thread, write what is left.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        if let Some(p) = self.pending.take() {
            self.outside += u64::from(p.tb.n - u32::from(p.from));
        }
        self.end_segment();
        self.t.meta(&MetaRecord::ThreadEnd(ThreadEnd { os: self.os, insns: self.insns, outside: self.outside }));
        let _g = self.slot.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.t.closed.load(Relaxed) || self.slot.done.load(Relaxed) {
            return;
        }
        self.t.write_events(&mut self.buf, &mut self.chunks);
        self.slot.insns.store(self.insns, Relaxed);
        self.slot.done.store(true, Relaxed);
        if self.buf.dropped > 0 {
            self.t.meta(&MetaRecord::Note(format!(
                "thread {}: {} event bytes dropped (buffer full)",
                self.os, self.buf.dropped
            )));
        }
        self.buf.finish(self.insns);
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        if !crate::disabled() {
            self.finish();
        }
    }
}
