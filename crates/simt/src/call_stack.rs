//! A reconvergence stack with function frames (ThreadFuser's call stack).
//!
//! # Model
//!
//! Each function invocation (a *frame*) has its own IPDOM reconvergence
//! stack, exactly the one of [`crate::stack`]. The bottom entry of a frame
//! has `reconverge == None`: the function's **virtual exit**. ThreadFuser
//! builds one control-flow graph per function with a virtual exit block
//! after every return, so no reconvergence point of a function lies outside
//! it, and lanes that diverged inside a function reconverge at the latest
//! when the function returns. This also makes reconvergence independent of
//! the call site, which a whole-program graph could not do (a function
//! called from several places has several successors of its `ret`).
//!
//! All frames live on one stack; a frame is a segment of it. Only the top
//! entry of the innermost frame runs.
//!
//! * [`call`](CallStack::call)`(callee, mask, return_pc)`: the active lanes
//!   in `mask` enter `callee`. Their caller entry is parked at `return_pc`
//!   and a new frame is pushed whose single entry is `{ pc: callee,
//!   reconverge: None, mask }`.
//! * [`ret`](CallStack::ret)`(mask)`: the active lanes in `mask` reach the
//!   virtual exit: they leave every entry *of the current frame* (entries
//!   left empty are dropped) and wait. They are still in the caller's entry,
//!   parked at `return_pc`. When the frame has no entry left, every lane
//!   that entered has returned (or exited the program): the frame is popped
//!   and the caller resumes at `return_pc` with all of them. A `ret` in the
//!   outermost frame is an exit.
//! * [`exit_lanes`](CallStack::exit_lanes)`(mask)`: the lanes leave the
//!   program: they are removed from every entry of every frame; frames left
//!   empty are popped (the caller resumes with the lanes that had already
//!   returned, if any).
//!
//! ## Lanes calling different functions
//!
//! Lanes of a warp can be about to enter different functions (an indirect
//! call, or, in trace replay, threads whose traces call different
//! functions). A frame holds one function, so such lanes are serialized at
//! the call site, like the two sides of a branch:
//!
//! `call(callee, mask, return_pc)` with `mask` a strict subset of the active
//! lanes first splits the caller's top entry into two paths **at the current
//! pc** (the call site) reconverging at `return_pc`: the lanes of `mask`
//! (on top, they enter `callee` now) and the others, parked at the call
//! site. When `callee` returns, its lanes reach `return_pc`, their path is
//! popped, and the parked lanes become active *at the call site*: the
//! interpreter executes the call instruction again for them, now with their
//! own callee (and splits again if they still disagree). When every group
//! has returned, the reconvergence entry continues at `return_pc` with all
//! lanes. The driver therefore only ever has to say "these lanes call this
//! function"; it never builds the serialization itself:
//!
//! ```
//! # use simt::{CallStack, LaneMask};
//! // 4 lanes at pc 10 (a call); lanes 0,1 call the function at 100,
//! // lanes 2,3 the one at 200; the call returns to pc 11.
//! let mut s = CallStack::new(10u32, LaneMask::full(4));
//! s.call(100, LaneMask(0b0011), 11)?;
//! assert_eq!(s.top(), Some((100, LaneMask(0b0011))));
//! s.ret(LaneMask(0b0011));                          // back to the call site
//! assert_eq!(s.top(), Some((10, LaneMask(0b1100))));
//! s.call(200, LaneMask(0b1100), 11)?;               // the call, re-executed
//! s.ret(LaneMask(0b1100));
//! assert_eq!(s.top(), Some((11, LaneMask(0b1111)))); // reconverged
//! # Ok::<(), simt::StackError>(())
//! ```
//!
//! A *predicated* call (`@p call f`, where lanes with `!p` skip the call)
//! is a branch around the call: split it with
//! [`branch`](CallStack::branch) first, then call with all active lanes.
//!
//! ## Deferring a blocked path
//!
//! Under independent thread scheduling (Volta and later) a path that spins
//! on a wait for lanes of another path of its own warp lets that path run.
//! [`defer_active_path`](CallStack::defer_active_path) does that in the
//! current frame: a waiting path moves to the top, and the blocked one (with
//! the reconvergence entries above the moved path) stays where it was below
//! it. Reconvergence is unchanged: every path still merges at its point.
//!
//! ## Invariants
//!
//! Those of [`crate::stack`] for all entries of all frames, plus: the lanes
//! of a frame are a subset of the caller's top entry, and no frame except
//! the outermost is ever empty (the outermost is empty once every lane has
//! exited).

use crate::mask::LaneMask;
use crate::stack::{Core, StackEntry, StackError, DEFAULT_MAX_DEPTH};

/// One function invocation on a [`CallStack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame<Pc> {
    /// The entry pc of the function (it identifies the function, e.g. for
    /// per-function efficiency).
    pub function: Pc,
    /// Where the caller resumes; `None` for the outermost frame.
    pub return_pc: Option<Pc>,
    /// Lanes that entered the function and have not exited the program
    /// (those that already returned are included: they wait for the rest).
    pub lanes: LaneMask,
    base: usize,
}

impl<Pc> Frame<Pc> {
    /// Index of the frame's bottom entry in [`CallStack::entries`].
    pub fn base(&self) -> usize {
        self.base
    }
}

/// A reconvergence stack with function frames; see the
/// [module documentation](self).
///
/// Without calls it behaves exactly like [`crate::ReconvergenceStack`]. The
/// maximum depth counts entries of all frames together, so it also bounds
/// recursion.
#[derive(Clone, Debug)]
pub struct CallStack<Pc> {
    core: Core<Pc>,
    frames: Vec<Frame<Pc>>,
}

impl<Pc: Copy + Eq> CallStack<Pc> {
    /// A stack whose lanes `mask` start at `entry_pc` (the outermost
    /// function, e.g. the kernel or the thread's worker function), with the
    /// [default maximum depth](DEFAULT_MAX_DEPTH).
    pub fn new(entry_pc: Pc, mask: LaneMask) -> Self {
        Self::with_max_depth(entry_pc, mask, DEFAULT_MAX_DEPTH)
    }

    /// Like [`new`](Self::new) with a maximum number of entries.
    pub fn with_max_depth(entry_pc: Pc, mask: LaneMask, max_depth: usize) -> Self {
        CallStack {
            core: Core::new(entry_pc, mask, max_depth),
            frames: vec![Frame { function: entry_pc, return_pc: None, lanes: mask, base: 0 }],
        }
    }

    #[inline]
    fn base(&self) -> usize {
        self.frames.last().map_or(0, |f| f.base)
    }

    /// The active entry: the pc to execute and the lanes that execute it.
    /// `None` once every lane has exited.
    #[inline]
    pub fn top(&self) -> Option<(Pc, LaneMask)> {
        self.core.top()
    }

    /// The pc of the active entry.
    #[inline]
    pub fn pc(&self) -> Option<Pc> {
        self.core.entries.last().map(|e| e.pc)
    }

    /// The lanes of the active entry (empty once finished).
    #[inline]
    pub fn active_mask(&self) -> LaneMask {
        self.core.entries.last().map_or(LaneMask::EMPTY, |e| e.mask)
    }

    /// Whether every lane has exited.
    #[inline]
    pub fn is_finished(&self) -> bool {
        self.core.entries.is_empty()
    }

    /// The function (entry pc) of the innermost frame; `None` once finished.
    #[inline]
    pub fn current_function(&self) -> Option<Pc> {
        if self.is_finished() {
            None
        } else {
            self.frames.last().map(|f| f.function)
        }
    }

    /// Number of frames (1 = the outermost function is running).
    #[inline]
    pub fn call_depth(&self) -> usize {
        self.frames.len()
    }

    /// Number of entries of all frames.
    #[inline]
    pub fn depth(&self) -> usize {
        self.core.entries.len()
    }

    /// The maximum number of entries.
    #[inline]
    pub fn max_depth(&self) -> usize {
        self.core.max_depth
    }

    /// All entries, bottom first. Frame `i` owns
    /// `entries()[frames()[i].base()..frames()[i + 1].base()]`.
    #[inline]
    pub fn entries(&self) -> &[StackEntry<Pc>] {
        &self.core.entries
    }

    /// The frames, outermost first.
    #[inline]
    pub fn frames(&self) -> &[Frame<Pc>] {
        &self.frames
    }

    /// The entries of frame `index` (0 = outermost), bottom first.
    ///
    /// # Panics
    /// If `index >= call_depth()`.
    pub fn frame_entries(&self, index: usize) -> &[StackEntry<Pc>] {
        let start = self.frames[index].base;
        let end = self.frames.get(index + 1).map_or(self.core.entries.len(), |f| f.base);
        &self.core.entries[start..end]
    }

    /// Lanes that have not exited (active or waiting, in any frame).
    pub fn live_lanes(&self) -> LaneMask {
        self.core.live_lanes()
    }

    /// Moves the active entry to `pc`, then reconverges (see
    /// [`ReconvergenceStack::set_pc`](crate::ReconvergenceStack::set_pc)).
    ///
    /// # Panics
    /// If the stack is finished.
    #[inline]
    pub fn set_pc(&mut self, pc: Pc) {
        let base = self.base();
        self.core.set_pc(base, pc);
    }

    /// A conditional branch inside the current function; see
    /// [`ReconvergenceStack::branch`](crate::ReconvergenceStack::branch).
    /// `reconverge == None` means the function's virtual exit.
    ///
    /// # Errors
    /// [`StackError::Overflow`] (the stack is unchanged).
    ///
    /// # Panics
    /// If the stack is finished.
    pub fn branch(
        &mut self,
        taken_pc: Pc,
        taken_mask: LaneMask,
        fallthrough_pc: Pc,
        reconverge: impl Into<Option<Pc>>,
    ) -> Result<(), StackError> {
        let base = self.base();
        self.core.branch(base, taken_pc, taken_mask, fallthrough_pc, reconverge.into())
    }

    /// An n-way divergence inside the current function; see
    /// [`ReconvergenceStack::diverge`](crate::ReconvergenceStack::diverge).
    ///
    /// # Errors
    /// [`StackError::InvalidPaths`], [`StackError::Overflow`] (the stack is
    /// unchanged).
    ///
    /// # Panics
    /// If the stack is finished.
    pub fn diverge(&mut self, paths: &[(Pc, LaneMask)], reconverge: impl Into<Option<Pc>>) -> Result<(), StackError> {
        let base = self.base();
        self.core.diverge(base, paths.iter().copied(), reconverge.into())
    }

    /// Serializes groups of active lanes from the current pc to
    /// `reconverge`; see
    /// [`ReconvergenceStack::serialize`](crate::ReconvergenceStack::serialize).
    ///
    /// # Errors
    /// [`StackError::InvalidPaths`], [`StackError::Overflow`] (the stack is
    /// unchanged).
    ///
    /// # Panics
    /// If the stack is finished.
    pub fn serialize(&mut self, groups: &[LaneMask], reconverge: impl Into<Option<Pc>>) -> Result<(), StackError> {
        let base = self.base();
        let pc = self.core.top_entry().pc;
        self.core.diverge(base, groups.iter().map(move |&g| (pc, g)), reconverge.into())
    }

    /// The active lanes in `mask` call the function whose entry is
    /// `callee`; the call returns to `return_pc` in the current function.
    ///
    /// If `mask` holds only some of the active lanes, the others are parked
    /// at the current pc (the call site) and run it again after the callee
    /// returns (see the [module documentation](self)). Bits of `mask` that
    /// are not active are ignored.
    ///
    /// # Errors
    /// [`StackError::NoActiveLanes`] if no active lane is in `mask`;
    /// [`StackError::InvalidPaths`] if lanes must be parked and `return_pc`
    /// is the current pc; [`StackError::Overflow`]. The stack is unchanged
    /// on error.
    ///
    /// # Panics
    /// If the stack is finished.
    pub fn call(&mut self, callee: Pc, mask: LaneMask, return_pc: Pc) -> Result<(), StackError> {
        let top = self.core.top_entry();
        let callers = mask & top.mask;
        if callers.is_empty() {
            return Err(StackError::NoActiveLanes);
        }
        let base = self.base();
        let split = callers != top.mask;
        let paths = [(top.pc, callers), (top.pc, top.mask - callers)];
        if split {
            if top.pc == return_pc {
                return Err(StackError::InvalidPaths);
            }
            let len = self.core.len_after(paths.iter().copied(), Some(return_pc))?;
            if len + 1 > self.core.max_depth {
                return Err(StackError::Overflow { max_depth: self.core.max_depth });
            }
            self.core.diverge(base, paths.iter().copied(), Some(return_pc))?;
        } else if self.core.entries.len() + 1 > self.core.max_depth {
            return Err(StackError::Overflow { max_depth: self.core.max_depth });
        }
        // The top entry now holds exactly `callers`; park it at the return
        // pc. It is settled (popped if `return_pc` is its reconvergence
        // point) only when the callee's frame is gone.
        let len = self.core.entries.len();
        self.core.entries[len - 1].pc = return_pc;
        self.frames.push(Frame { function: callee, return_pc: Some(return_pc), lanes: callers, base: len });
        self.core.entries.push(StackEntry { pc: callee, reconverge: None, mask: callers });
        Ok(())
    }

    /// The active lanes in `mask` execute a return: they reach the current
    /// function's virtual exit and wait there for the other lanes of the
    /// frame. When none is left, the frame is popped and the caller resumes
    /// at the return pc with every lane that returned. In the outermost
    /// frame a return is an [exit](Self::exit_lanes).
    ///
    /// Returns the active lanes that did **not** return: if non-empty, the
    /// same entry is still on top at the same pc, and the caller advances it
    /// (predicated return); if empty, something else (or nothing) is now on
    /// top. Bits of `mask` that are not active are ignored.
    ///
    /// # Panics
    /// If the stack is finished.
    pub fn ret(&mut self, mask: LaneMask) -> LaneMask {
        let top = self.core.top_entry();
        let leaving = mask & top.mask;
        let rest = top.mask - leaving;
        if leaving.is_empty() {
            return rest;
        }
        if self.frames.len() == 1 {
            return self.exit_lanes(leaving);
        }
        let base = self.base();
        self.core.remove_lanes_from(base, base, leaving);
        self.pop_empty_frames();
        rest
    }

    /// Lanes of `mask` leave the program (`exit`, thread end): they are
    /// removed from every entry of every frame. Frames left empty are popped
    /// and their callers resume with the lanes that had already returned.
    /// Lanes need not be active.
    ///
    /// Returns the lanes of the previously active entry that did **not**
    /// leave; see [`ret`](Self::ret) for how to use it.
    pub fn exit_lanes(&mut self, mask: LaneMask) -> LaneMask {
        let before = self.active_mask();
        if mask.is_empty() || self.is_finished() {
            return before - mask;
        }
        let entries = &mut self.core.entries;
        let len = entries.len();
        let mut write = 0;
        for fi in 0..self.frames.len() {
            let start = self.frames[fi].base;
            let end = self.frames.get(fi + 1).map_or(len, |f| f.base);
            self.frames[fi].base = write;
            self.frames[fi].lanes -= mask;
            for read in start..end {
                let mut entry = entries[read];
                entry.mask -= mask;
                if !entry.mask.is_empty() {
                    entries[write] = entry;
                    write += 1;
                }
            }
        }
        entries.truncate(write);
        let base = self.base();
        self.core.settle(base);
        self.pop_empty_frames();
        before - mask
    }

    /// The active path cannot go on until lanes of another path of the warp
    /// act (it spins on a wait they must satisfy): as independent thread
    /// scheduling would, another path of the **current frame** waiting to
    /// run becomes active (the lowest on the stack, so that repeated
    /// deferrals take the waiting paths in turn); the deferred path resumes
    /// where it stopped once that one reconverges, exits or is deferred in
    /// turn. Only the current frame is searched: a path parked in
    /// a caller's frame needs the callee to return first. Returns whether
    /// another path is now active (`false`: the stack is unchanged).
    pub fn defer_active_path(&mut self) -> bool {
        let base = self.base();
        self.core.defer_top(base)
    }

    /// Pops empty frames (except the outermost) and resumes their callers.
    fn pop_empty_frames(&mut self) {
        while self.frames.len() > 1 && self.base() == self.core.entries.len() {
            self.frames.pop();
            let base = self.base();
            self.core.settle(base);
        }
        debug_assert!(
            self.frames.windows(2).all(|w| w[0].base < w[1].base && w[1].base < self.core.entries.len()),
            "an inner frame outlived its caller's lanes"
        );
    }
}
