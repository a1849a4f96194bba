//! One SIMT thread's events as the replay consumes them: basic blocks (with their memory accesses), calls,
//! returns, locks, skipped regions and the end.
//!
//! The trace records translated blocks; a [`Lane`] splits each into the basic blocks it covers
//! ([`trace::BasicBlocks`]) and hands out one [`Item::Block`] per basic block, carrying the memory accesses of
//! its instructions. It also keeps the thread's own call stack, so that every block knows the function whose
//! frame runs it, and turns the tracer's frame bookkeeping into one [`Item::Ret`] per frame left:
//!
//! * a `TailCall` is modelled as a call whose callee returns straight to the caller's exit: the callee gets a
//!   frame of its own (so per-function counts stay per function), and when the tracer later pops the frame the
//!   lane leaves both;
//! * `Return { frames: k }` pops `k` of the tracer's frames (after `longjmp` or an exception `k > 1`), each with
//!   the tail-called frames above it; `k == 0` (a `ret` the tracer could not match) changes nothing;
//! * leaving the outermost frame (the segment's first function returned) ends with an [`Item::Ret`] for it and an
//!   [`Item::Enter`] of the function the lane continues in.

use std::sync::mpsc::{sync_channel, Receiver};

use trace::{Event, EventStream, LockKind, SkipKind, Visitor, NONE};

use crate::dcfg::{Dcfgs, NO_NODE};
use crate::memory::{Classifier, ClassifyCache, Segment};
use crate::program::{Hint, Program, Span};

/// A memory access of one instruction of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemAccess {
    /// Instruction index within the translated block.
    pub insn: u16,
    pub store: bool,
    /// The segment it touches (looked up by the lane: [`Lookups`]).
    pub seg: Segment,
    /// Size in bytes.
    pub size: u16,
    pub addr: u64,
}

/// [`BlockItem::bb`] of a block the lane started inside of.
pub const NO_BB: u32 = u32::MAX;

/// One basic block executed by the lane (or the executed tail of one, when a segment starts inside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockItem {
    /// The function whose frame runs the block.
    pub func: u32,
    /// Address of the first executed instruction (the block's identity in its function's graph).
    pub addr: u64,
    /// One past the last byte.
    pub end: u64,
    /// Translated block and the index of the first executed instruction in it.
    pub tb: u32,
    /// The index of its function's graph ([`Dcfgs::slot`]), or [`NO_NODE`] (as for [`BlockItem::node`]).
    pub slot: u32,
    pub first: u16,
    /// Instructions executed.
    pub insns: u16,
    /// The basic block ([`trace::BasicBlocks::blocks`] index), or [`NO_BB`] for the tail of one.
    pub bb: u32,
    /// The block's node in its function's dynamic CFG, or [`NO_NODE`] (not in the graph, or a lane that looks
    /// up none: [`Lane::blocks_only`], [`for_each_item`]).
    pub node: u32,
    /// The block's memory accesses: `mem_start..mem_end` in the lane's running count of accesses.
    pub mem_start: u64,
    /// Number of accesses (`mem_start..mem_start + mem_len`).
    pub mem_len: u32,
    /// No two of the accesses share an instruction, direction and segment, and they come in that order: each
    /// is a warp access of its own when the lane runs alone (checked as they are decoded).
    pub distinct: bool,
}

impl BlockItem {
    /// One past the number of its last access ([`BlockItem::mem_start`] + [`BlockItem::mem_len`]).
    #[inline]
    pub fn mem_end(&self) -> u64 {
        self.mem_start + u64::from(self.mem_len)
    }
}

/// What a lane does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// The lane starts running function `func` in a new outermost frame (the segment's first function, or the
    /// one it continues in after leaving its outermost frame).
    Enter {
        func: u32,
    },
    Block(BlockItem),
    /// A call; `tail` when a jump entered another function (a PLT stub reaching its target, a tail call).
    Call {
        callee: u32,
        tail: bool,
    },
    /// The lane leaves the current frame.
    Ret,
    Lock {
        kind: LockKind,
        release: bool,
        addr: u64,
    },
    Skip {
        kind: SkipKind,
        insns: u64,
    },
    /// The SIMT thread ended (or its events stop: a cut trace, a decoding error).
    End,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    func: u32,
    /// The index of `func`'s graph ([`Dcfgs::slot`]; [`NO_NODE`] for none, or a lane without look-ups), looked
    /// up once per frame rather than per block.
    slot: u32,
    tail: bool,
}

/// A cursor over one SIMT thread.
#[derive(Debug)]
pub struct Lane<'p> {
    events: Option<EventStream<'p>>,
    pub simt: u32,
    pub os: u32,
    q: Queue<'p>,
    /// Items decoded and not yet consumed.
    items: ItemQueue,
    /// A problem met while reading the stream (the lane ends there).
    pub error: Option<String>,
    /// Items decoded by another thread ([`Lane::piped`]), when this lane does not decode its own.
    feed: Option<Receiver<Batch>>,
}

/// Where a lane's items go as its events are read.
pub trait ItemSink {
    fn push_back(&mut self, it: Item);

    /// A basic block and its accesses: queued ([`ItemSink::push_back`]), or, returning true, taken as it comes,
    /// which says that no access up to its last is needed any more (nothing is queued).
    #[inline]
    fn block(&mut self, b: BlockItem, _mem: &[MemAccess]) -> bool {
        self.push_back(Item::Block(b));
        false
    }

    /// Offered, before its items are made, a translated block `tb` run whole in the current frame, cut into
    /// `spans`: a sink that can account for it without them (a transition it has recorded before) does so and
    /// returns true, and the block's items are never made. Only blocks-only lanes ([`for_each_item`]) offer.
    #[inline]
    fn whole_block(&mut self, _tb: u32, _spans: &[Span]) -> bool {
        false
    }

    /// The items of whole block `tb` (declined by [`ItemSink::whole_block`]) were all pushed.
    #[inline]
    fn whole_block_done(&mut self, _tb: u32) {}

    /// Whether reading events can stop here ([`Visitor::satisfied`]).
    #[inline]
    fn satisfied(&self) -> bool {
        false
    }
}

/// What a replay lane looks up as it decodes, so that the replay does not: each block's node in its function's
/// graph and each access's segment (for a piped lane, on its decoding thread).
#[derive(Debug, Clone, Copy)]
pub struct Lookups<'p> {
    pub cfg: &'p Dcfgs,
    pub classifier: &'p Classifier,
}

/// The state that turns a SIMT thread's events into items, handed to an [`ItemSink`]: a lane's queue of items
/// decoded and not yet consumed, a consumer that needs no look-ahead ([`for_each_item`]), or one that takes
/// blocks as they come ([`Lane::fill_intercepted`]). With its sink it is the event stream's [`Visitor`]
/// ([`Feed`]).
#[derive(Debug)]
struct Queue<'p> {
    prog: &'p Program<'p>,
    /// Accesses of queued blocks (and of the pending one); `mem[0]` is access number `mem_base` of the lane.
    mem: Vec<MemAccess>,
    mem_base: u64,
    /// Translated block whose memory events are being collected: tb, first instruction, number of its first
    /// access, global index of its first instruction.
    pending: Option<(u32, u16, u64, u32)>,
    /// The graphs and the segments, for a replay lane ([`Lane::new`]), which keeps its accesses for the items; a
    /// lane without ([`Lane::blocks_only`], [`for_each_item`]) keeps only the bounds of its stack accesses.
    lookups: Option<(&'p Dcfgs, ClassifyCache<'p>)>,
    /// Lowest and one-past-highest address of the lane's stack accesses (a blocks-only lane's).
    stack: (u64, u64),
    frames: Vec<Frame>,
    /// The function of the segment (`--function`), used for its first frame.
    start_function: Option<u32>,
    need_enter: bool,
    /// After lock spinning was skipped: the lock function (symbol) whose return ends it. Frames entered before
    /// the spinning started and left during it have no `Return` of their own; the lock function's return
    /// leaves them all.
    spin_unwind: Option<u32>,
    ended: bool,
}

/// A FIFO of items: a vector and the index of its front, emptied when all are consumed and compacted before
/// a refill (cheaper than a ring buffer's wrapped indexing on the path run per block).
#[derive(Debug, Default)]
struct ItemQueue {
    items: Vec<Item>,
    head: usize,
}

impl ItemSink for ItemQueue {
    #[inline]
    fn push_back(&mut self, it: Item) {
        self.items.push(it);
    }
}

impl ItemQueue {
    #[inline]
    fn len(&self) -> usize {
        self.items.len() - self.head
    }

    #[inline]
    fn get(&self, k: usize) -> &Item {
        &self.items[self.head + k]
    }

    #[inline]
    fn pop_front(&mut self) -> Option<Item> {
        let it = *self.items.get(self.head)?;
        self.head += 1;
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        }
        Some(it)
    }

    fn extend(&mut self, items: Vec<Item>) {
        if self.len() == 0 {
            // Nothing left to consume: take the vector as it is instead of copying it.
            self.items = items;
            self.head = 0;
        } else {
            self.items.extend(items);
        }
    }

    /// The unconsumed items.
    #[inline]
    fn front(&self) -> &[Item] {
        &self.items[self.head..]
    }

    /// Drops the first `n` unconsumed items.
    #[inline]
    fn advance(&mut self, n: usize) {
        self.head += n;
        debug_assert!(self.head <= self.items.len());
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        }
    }

    /// Moves the unconsumed items to the front.
    fn compact(&mut self) {
        if self.head > 0 {
            self.items.drain(..self.head);
            self.head = 0;
        }
    }

    /// All unconsumed items; the queue goes on in a new vector of `capacity`.
    fn take(&mut self, capacity: usize) -> Vec<Item> {
        self.compact();
        std::mem::replace(&mut self.items, Vec::with_capacity(capacity))
    }
}

/// Items a decoding thread hands over, with the accesses of their blocks (access numbers from `mem_base`).
struct Batch {
    items: Vec<Item>,
    mem: Vec<MemAccess>,
    error: Option<String>,
}

/// Batches a decoding thread may run ahead.
const BATCHES_AHEAD: usize = 2;
/// Items per batch of a piped lane: large batches make the hand-over cheap (on the pigz trace of
/// `scripts/bench-analyze`, batches of 8192 items instead of 2048 cut the decoding threads' CPU time by about
/// a sixth), and [`batch_items`] keeps the items queued by all lanes together within [`QUEUED_BYTES`].
const MAX_BATCH_ITEMS: usize = 8192;
const MIN_BATCH_ITEMS: usize = 1024;
/// About how many bytes of items all piped lanes may hold queued or in hand-over.
const QUEUED_BYTES: usize = 256 << 20;

/// Items per batch when `lanes` lanes are piped at once.
pub fn batch_items(lanes: usize) -> usize {
    let per_lane = QUEUED_BYTES / lanes.max(1) / ((BATCHES_AHEAD + 2) * std::mem::size_of::<Item>());
    per_lane.clamp(MIN_BATCH_ITEMS, MAX_BATCH_ITEMS)
}
/// Events decoded per refill of a lane's queue.
const DRIVE_EVENTS: usize = 256;
/// Events decoded per [`Lane::fill_intercepted`] (whose blocks are mostly taken, not queued).
const INTERCEPT_EVENTS: usize = 1024;

impl<'p> Lane<'p> {
    /// A lane for the replay: its blocks know their nodes, their accesses their segments.
    pub fn new(prog: &'p Program<'p>, lookups: Lookups<'p>, simt: u32) -> Lane<'p> {
        // With the look-ups it also keeps its accesses.
        let mut lane = Lane::blocks_only(prog, simt);
        lane.q.lookups = Some((lookups.cfg, ClassifyCache::new(lookups.classifier)));
        lane
    }

    /// A lane whose blocks carry no memory accesses ([`Lane::mem`] is empty) and no nodes, for what needs only
    /// its control flow.
    pub fn blocks_only(prog: &'p Program<'p>, simt: u32) -> Lane<'p> {
        match prog.trace.simt_events(simt) {
            Ok(s) => Lane::reading(prog, simt, Some(s), None, None),
            Err(e) => Lane::reading(prog, simt, None, Some(e.to_string()), None),
        }
    }

    /// A lane reading `events` itself, or the items another thread decodes from `feed`.
    fn reading(
        prog: &'p Program<'p>,
        simt: u32,
        events: Option<EventStream<'p>>,
        error: Option<String>,
        feed: Option<Receiver<Batch>>,
    ) -> Lane<'p> {
        let start = &prog.trace.simt[simt as usize].start;
        Lane { events, simt, os: start.os, q: Queue::new(prog, simt), items: ItemQueue::default(), error, feed }
    }

    /// A lane whose events another thread of `scope` decodes, ahead of the replay, in batches of `batch`
    /// items ([`batch_items`]): with fewer warps than cores, decoding and replay then run side by side.
    pub fn piped<'s>(
        scope: &'s std::thread::Scope<'s, '_>,
        prog: &'p Program<'p>,
        lookups: Lookups<'p>,
        simt: u32,
        batch: usize,
    ) -> Lane<'p>
    where
        'p: 's,
    {
        let (tx, rx) = sync_channel::<Batch>(BATCHES_AHEAD);
        let mut source = Lane::new(prog, lookups, simt);
        let lane = Lane::reading(prog, simt, None, None, Some(rx));
        // Each batch's vectors are handed over whole; the next ones start at about the size they will need
        // (growing them from nothing copied each batch about twice).
        let items_cap = batch + 2 * DRIVE_EVENTS;
        let mut mem_cap = batch;
        // Named, so that profiles and debuggers tell the decoding threads from the replay's.
        let decoder = std::thread::Builder::new().name(format!("lane {simt}"));
        let spawned = decoder.spawn_scoped(scope, move || loop {
            while source.items.len() < batch && !source.q.ended {
                source.fill();
            }
            // Accesses of a block still pending stay with the source.
            let q = &mut source.q;
            let keep = q.pending.map_or(q.mem.len(), |p| (p.2 - q.mem_base) as usize);
            mem_cap = mem_cap.max(keep + keep / 4);
            let mut rest = Vec::with_capacity(mem_cap);
            rest.extend_from_slice(&q.mem[keep..]);
            q.mem.truncate(keep);
            let mem = std::mem::replace(&mut q.mem, rest);
            q.mem_base += mem.len() as u64;
            let batch = Batch { items: source.items.take(items_cap), mem, error: source.error.take() };
            let last = source.q.ended;
            if tx.send(batch).is_err() || last {
                return;
            }
        });
        match spawned {
            Ok(_) => lane,
            // No thread to spare: the lane decodes its own events.
            Err(_) => Lane::new(prog, lookups, simt),
        }
    }

    /// The memory accesses of a block item.
    #[inline]
    pub fn mem(&self, b: &BlockItem) -> &[MemAccess] {
        let q = &self.q;
        let start = (b.mem_start - q.mem_base) as usize;
        &q.mem[start..start + b.mem_len as usize]
    }

    /// Where the accesses of block `b` start among the lane's accesses ([`Lane::mem_at`]).
    #[inline]
    pub fn mem_index(&self, b: &BlockItem) -> usize {
        (b.mem_start - self.q.mem_base) as usize
    }

    /// Access number `i` ([`Lane::mem_index`]) of the lane's queued blocks.
    #[inline]
    pub fn mem_at(&self, i: usize) -> &MemAccess {
        &self.q.mem[i]
    }

    /// The next item when it is a block that is already queued ([`Lane::peek`] reads more), without copying it.
    #[inline]
    pub fn front_block(&self) -> Option<&BlockItem> {
        match self.items.front().first() {
            Some(Item::Block(b)) => Some(b),
            _ => None,
        }
    }

    /// The `k`-th next item (0 = the next one).
    #[inline]
    pub fn peek_nth(&mut self, k: usize) -> &Item {
        while self.items.len() <= k {
            self.fill();
        }
        self.items.get(k)
    }

    /// The next item.
    #[inline]
    pub fn peek(&mut self) -> &Item {
        self.peek_nth(0)
    }

    /// Removes the next item (peek first). The accesses of a popped block are dropped: use them before.
    #[inline]
    pub fn pop(&mut self) -> Item {
        let it = self.items.pop_front().unwrap_or(Item::End);
        if let Item::Block(b) = it {
            self.q.consumed_through(b.mem_end());
        }
        it
    }

    /// The items queued, in order (empty when none is: [`Lane::peek`] reads more), for a consumer that goes
    /// through several before it removes them ([`Lane::consume`]).
    #[inline]
    pub fn queued(&self) -> &[Item] {
        self.items.front()
    }

    /// Removes the first `n` queued items, as `n` pops would.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        let end = self.items.front()[..n].iter().rev().find_map(|it| match it {
            Item::Block(b) => Some(b.mem_end()),
            _ => None,
        });
        self.items.advance(n);
        if let Some(end) = end {
            self.q.consumed_through(end);
        }
    }

    /// Whether [`Lane::fill_intercepted`] may be used now: the lane decodes its own events and nothing is queued.
    #[inline]
    pub fn can_intercept(&self) -> bool {
        self.feed.is_none() && self.items.len() == 0
    }

    /// Reads events (at least one, unless the stream ended) and hands the blocks to `x` as they are decoded, in
    /// order, until it declines one or another item comes: that item and all after it are queued. The caller
    /// checks [`Lane::can_intercept`] first.
    pub fn fill_intercepted(&mut self, x: &mut impl Intercept) {
        debug_assert!(self.can_intercept());
        let mut sink = Intercepting { queue: &mut self.items, x, declined: false };
        decode(&mut self.events, &mut self.q, &mut self.error, &mut sink, INTERCEPT_EVENTS);
    }

    /// Depth of the lane's own call stack (frames entered and not left).
    pub fn depth(&self) -> usize {
        self.q.frames.len()
    }

    /// Reads events until at least one more item is queued.
    fn fill(&mut self) {
        if let Some(feed) = &self.feed {
            let q = &mut self.q;
            match feed.recv() {
                Ok(b) => {
                    self.items.extend(b.items);
                    if q.mem.is_empty() {
                        // Every access handed over before was consumed: take the batch's vector as it is.
                        q.mem = b.mem;
                    } else {
                        q.mem.extend(b.mem);
                    }
                    if b.error.is_some() {
                        self.error = b.error;
                    }
                }
                // The decoding thread ended after its last batch (which ended with `End`).
                Err(_) => self.items.push_back(Item::End),
            }
            return;
        }
        self.items.compact();
        let before = self.items.len();
        while self.items.len() == before {
            decode(&mut self.events, &mut self.q, &mut self.error, &mut self.items, DRIVE_EVENTS);
        }
    }
}

/// Decodes up to `budget` events of a lane's stream into `items`. At the stream's end, or at a problem (kept in
/// `error`), the queue finishes with [`Item::End`]; after it, every call queues another `End`.
fn decode(
    events: &mut Option<EventStream<'_>>,
    q: &mut Queue<'_>,
    error: &mut Option<String>,
    items: &mut impl ItemSink,
    budget: usize,
) {
    if q.ended {
        items.push_back(Item::End);
        return;
    }
    match events.as_mut().map(|e| e.drive(&mut Feed { q: &mut *q, items: &mut *items }, budget)) {
        Some(Ok(true)) => {}
        Some(Ok(false)) | None => q.finish(items),
        Some(Err(e)) => {
            *error = Some(e.to_string());
            q.finish(items);
        }
    }
}

/// Takes a lane's blocks as they are decoded, before they are queued ([`Lane::fill_intercepted`]).
pub trait Intercept {
    /// Block `b` with its accesses comes next: true when it was accounted for (it is never queued).
    fn block(&mut self, b: &BlockItem, mem: &[MemAccess]) -> bool;
}

/// The queue of a lane that an [`Intercept`] takes blocks from until it declines one or another item comes.
struct Intercepting<'a, X> {
    queue: &'a mut ItemQueue,
    x: &'a mut X,
    declined: bool,
}

impl<X: Intercept> ItemSink for Intercepting<'_, X> {
    #[inline]
    fn push_back(&mut self, it: Item) {
        self.declined = true;
        self.queue.push_back(it);
    }

    #[inline(always)]
    fn block(&mut self, b: BlockItem, mem: &[MemAccess]) -> bool {
        if !self.declined && self.x.block(&b, mem) {
            return true;
        }
        self.push_back(Item::Block(b));
        false
    }

    /// The consumer has what it needs once it has queued an item.
    #[inline]
    fn satisfied(&self) -> bool {
        self.declined
    }
}

/// Whether no two accesses share an instruction, direction and segment, in that order ([`BlockItem::distinct`]).
#[inline]
fn distinct(mem: &[MemAccess]) -> bool {
    mem.windows(2).all(|w| (w[0].insn, w[0].store, w[0].seg) < (w[1].insn, w[1].store, w[1].seg))
}

/// What [`for_each_item`] read besides the items.
#[derive(Debug, Default)]
pub struct Walked {
    /// A problem met reading the stream (the items end there).
    pub error: Option<String>,
    /// The lowest and one-past-highest address of the thread's stack accesses (`None`: it made none).
    pub stack: Option<(u64, u64)>,
}

/// Hands SIMT thread `simt`'s items to `sink` in order, ending with [`Item::End`], as the events are decoded:
/// no queue, for a consumer that needs no look-ahead (the dynamic CFGs). The blocks carry no memory accesses;
/// [`Walked::stack`] keeps what the dynamic CFGs need of them.
pub fn for_each_item<S: ItemSink>(prog: &Program<'_>, simt: u32, mut sink: S) -> (S, Walked) {
    let mut q = Queue::new(prog, simt);
    let mut walked = Walked::default();
    match prog.trace.simt_events(simt) {
        Ok(mut events) => loop {
            match events.drive(&mut Feed { q: &mut q, items: &mut sink }, 1 << 16) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    walked.error = Some(e.to_string());
                    break;
                }
            }
        },
        Err(e) => walked.error = Some(e.to_string()),
    }
    q.finish(&mut sink);
    let (lo, hi) = q.stack;
    walked.stack = (lo < hi).then_some((lo, hi));
    (sink, walked)
}

impl<'p> Queue<'p> {
    fn new(prog: &'p Program<'p>, simt: u32) -> Queue<'p> {
        let start = &prog.trace.simt[simt as usize].start;
        Queue {
            prog,
            mem: Vec::new(),
            mem_base: 0,
            pending: None,
            lookups: None,
            stack: (u64::MAX, 0),
            frames: Vec::new(),
            start_function: (start.function != NONE).then_some(start.function),
            need_enter: true,
            spin_unwind: None,
            ended: false,
        }
    }
}

/// A [`Queue`] and where its items go: the [`Visitor`] an event stream is driven with.
struct Feed<'a, 'p, S> {
    q: &'a mut Queue<'p>,
    items: &'a mut S,
}

impl<S: ItemSink> Visitor for Feed<'_, '_, S> {
    #[inline(always)]
    fn block(&mut self, tb: u32, from: u16, first_insn: u32) {
        let q = &mut *self.q;
        q.flush(self.items);
        q.pending = Some((tb, from, q.mem_base + q.mem.len() as u64, first_insn));
    }

    #[inline(always)]
    fn mem(&mut self, insn: u16, store: bool, size_log2: u8, addr: u64) {
        self.q.mem(insn, store, size_log2, addr);
    }

    fn event(&mut self, ev: Event) {
        match ev {
            Event::SegmentStart { .. } => {}
            Event::SegmentEnd => self.q.finish(self.items),
            other => {
                self.q.flush(self.items);
                self.q.other(other, self.items);
            }
        }
    }

    #[inline]
    fn satisfied(&self) -> bool {
        self.items.satisfied()
    }
}

impl Queue<'_> {
    #[inline(always)]
    fn mem(&mut self, insn: u16, store: bool, size_log2: u8, addr: u64) {
        let Some((_, from, _, first_global)) = self.pending else { return };
        let size = 1u16 << size_log2.min(15);
        let hint = self.prog.hint_at(first_global + u32::from(insn), store);
        if let Some((_, classify)) = &mut self.lookups {
            let seg = classify.classify(hint, addr);
            self.mem.push(MemAccess { insn, store, seg, size, addr });
        } else if insn >= from && hint == Hint::Stack {
            self.stack.0 = self.stack.0.min(addr);
            self.stack.1 = self.stack.1.max(addr.saturating_add(u64::from(size)));
        }
    }

    /// A block whose accesses end at access number `end` was consumed: blocks are consumed in order, so no queued
    /// item needs the accesses before it.
    #[inline]
    fn consumed_through(&mut self, end: u64) {
        let done = (end - self.mem_base) as usize;
        if done == self.mem.len() {
            self.mem.clear();
            self.mem_base = end;
        } else if done >= 4096 {
            self.mem.drain(..done);
            self.mem_base = end;
        }
    }

    /// The function of the current frame and the index of its graph.
    fn current(&self) -> (u32, u32) {
        match self.frames.last() {
            Some(f) => (f.func, f.slot),
            None => (crate::program::UNKNOWN_FN, self.slot_of(crate::program::UNKNOWN_FN)),
        }
    }

    fn slot_of(&self, func: u32) -> u32 {
        self.lookups.as_ref().and_then(|l| l.0.slot(func)).unwrap_or(NO_NODE)
    }

    fn finish(&mut self, items: &mut impl ItemSink) {
        self.flush(items);
        if !self.ended {
            self.ended = true;
            items.push_back(Item::End);
        }
    }

    fn other(&mut self, ev: Event, items: &mut impl ItemSink) {
        match ev {
            Event::Call { callee } => {
                self.frames.push(Frame { func: callee, slot: self.slot_of(callee), tail: false });
                items.push_back(Item::Call { callee, tail: false });
            }
            Event::TailCall { callee } => {
                self.frames.push(Frame { func: callee, slot: self.slot_of(callee), tail: true });
                items.push_back(Item::Call { callee, tail: true });
            }
            Event::Return { frames } => {
                if let Some(sym) = self.spin_unwind.take() {
                    if frames > 0 && self.frames.iter().any(|f| f.func == sym) {
                        // Leave every frame down to and including the lock function's (and its tail calls').
                        while let Some(f) = self.frames.pop() {
                            items.push_back(Item::Ret);
                            if f.func == sym && !f.tail {
                                break;
                            }
                            if f.func == sym {
                                // A tail-called lock function: also leave the frame it replaced.
                                while let Some(g) = self.frames.pop() {
                                    items.push_back(Item::Ret);
                                    if !g.tail {
                                        break;
                                    }
                                }
                                break;
                            }
                        }
                        if self.frames.is_empty() {
                            self.need_enter = true;
                        }
                        return;
                    }
                }
                for _ in 0..frames {
                    // One of the tracer's frames: the tail-called frames on top, then the frame they replaced.
                    while let Some(f) = self.frames.pop() {
                        items.push_back(Item::Ret);
                        if !f.tail {
                            break;
                        }
                    }
                    if self.frames.is_empty() {
                        self.need_enter = true;
                        break;
                    }
                }
            }
            Event::Lock { kind, release, addr } => items.push_back(Item::Lock { kind, release, addr }),
            Event::Skip { kind, insns, arg } => {
                if kind == SkipKind::LockSpin {
                    self.spin_unwind = u32::try_from(arg).ok();
                }
                items.push_back(Item::Skip { kind, insns })
            }
            Event::Block { .. }
            | Event::PartialBlock { .. }
            | Event::Mem { .. }
            | Event::SegmentStart { .. }
            | Event::SegmentEnd => {}
        }
    }

    /// Turns the pending translated block and its accesses into basic-block items.
    #[inline(always)]
    fn flush(&mut self, items: &mut impl ItemSink) {
        let Some((tb, from, start, _)) = self.pending.take() else { return };
        let prog = self.prog;
        let spans = prog.spans(tb);
        let mut k = (start - self.mem_base) as usize;
        if spans.is_empty() {
            self.mem.truncate(k);
            return;
        }
        if from > 0 {
            // Started inside the block: accesses before the first executed instruction cannot belong to it.
            let mut i = 0;
            self.mem.retain(|m| {
                let keep = i < k || m.insn >= from;
                i += 1;
                keep
            });
        }
        if self.need_enter {
            self.need_enter = false;
            let func = match self.start_function.take() {
                Some(f) => f,
                None => {
                    let block = &prog.trace.blocks[tb as usize];
                    prog.function_at(block.insns.get(usize::from(from)).map_or(block.addr, |i| i.addr))
                }
            };
            self.frames.push(Frame { func, slot: self.slot_of(func), tail: false });
            items.push_back(Item::Enter { func });
        }
        let offer = from == 0 && self.lookups.is_none();
        if offer && items.whole_block(tb, spans) {
            return;
        }
        let (func, slot) = self.current();
        let node = |bb: u32, addr: u64| match &self.lookups {
            Some((cfg, _)) => cfg.bb_node(func, bb).or_else(|| cfg.node(func, addr)).unwrap_or(NO_NODE),
            None => NO_NODE,
        };
        if let ([span], 0) = (spans, from) {
            // One basic block, run whole: all the pending accesses are its own.
            let b = BlockItem {
                func,
                addr: span.addr,
                end: span.end,
                tb,
                slot,
                first: 0,
                insns: span.len,
                bb: span.bb,
                node: node(span.bb, span.addr),
                mem_start: start,
                mem_len: (self.mem.len() - k) as u32,
                distinct: distinct(&self.mem[k..]),
            };
            if items.block(b, &self.mem[k..]) {
                self.consumed_through(b.mem_end());
            }
            if offer {
                items.whole_block_done(tb);
            }
            return;
        }
        // Accesses up to here belong to blocks the sink took (and to none queued).
        let mut taken_through = None;
        for span in spans {
            let span_end = span.first + span.len;
            if span_end <= from {
                continue;
            }
            let (first, addr, bb) = if span.first >= from {
                (span.first, span.addr, span.bb)
            } else {
                match prog.trace.blocks[tb as usize].insns.get(usize::from(from)) {
                    Some(i) => (from, i.addr, NO_BB),
                    None => break,
                }
            };
            let mem_start = self.mem_base + k as u64;
            while k < self.mem.len() && self.mem[k].insn < span_end {
                k += 1;
            }
            let b = BlockItem {
                func,
                addr,
                end: span.end,
                tb,
                slot,
                first,
                insns: span_end - first,
                bb,
                node: node(bb, addr),
                mem_start,
                mem_len: (self.mem_base + k as u64 - mem_start) as u32,
                distinct: distinct(&self.mem[(mem_start - self.mem_base) as usize..k]),
            };
            if items.block(b, &self.mem[(mem_start - self.mem_base) as usize..k]) {
                taken_through = Some(b.mem_end());
            }
        }
        if offer {
            items.whole_block_done(tb);
        }
        self.mem.truncate(k);
        if let Some(end) = taken_through {
            self.consumed_through(end);
        }
    }
}
