//! The immediate-post-dominator (IPDOM) reconvergence stack.
//!
//! # Why IPDOM reconvergence
//!
//! The lanes of a warp share one program counter. When they disagree at a
//! branch, the warp runs one side with the lanes that went that way, then the
//! other side with the rest, and merges them again at a *reconvergence
//! point*. The point used here (as in GPGPU-Sim, ThreadFuser and the
//! stack-based reconvergence of pre-Volta GPUs) is the branch's **immediate
//! post-dominator**: the first instruction that every path from the branch
//! must reach before leaving the function. It is the earliest point where
//! waiting is always safe: no lane can reach the function exit without
//! passing it, so a lane that waits there is never left behind, and no
//! earlier point has that guarantee. (Computing post-dominators is the job of
//! the `graph` crate; this crate only consumes the answer.)
//!
//! # The stack
//!
//! The warp's state is a stack of [`StackEntry`] `{ pc, reconverge, mask }`.
//! Only the **top** entry runs: the warp issues the instruction at its `pc`
//! for the lanes of its `mask`. Every other entry is waiting. Its `pc` is
//! where it will resume; `reconverge` says where it stops: when the entry's
//! `pc` reaches `reconverge` the entry is popped, because its lanes are also
//! in an entry further down that waits at exactly that pc. `reconverge ==
//! None` means "the function (or kernel) exit": such an entry is never popped
//! by reaching a pc; it disappears only when its lanes leave through
//! `ret`/`exit` ([`ReconvergenceStack::exit_lanes`]).
//!
//! ## Divergence
//!
//! [`branch`](ReconvergenceStack::branch) (two-way) and
//! [`diverge`](ReconvergenceStack::diverge) (n-way: indirect branches, lanes
//! whose traces go to different blocks, lock serialization) take the
//! successor pcs with their lane masks and the reconvergence pc `r` (the
//! branch's IPDOM, or `None` when the IPDOM is the function exit).
//!
//! * If only one successor has lanes, the branch is *uniform*: the top
//!   entry's pc just moves there. Nothing is pushed.
//! * Otherwise the top entry (mask `M`) turns into the **reconvergence
//!   entry**: its pc becomes `r` and its mask stays `M`; it will resume, with
//!   all of `M` that is still alive, once every path has reached `r`. Then one
//!   entry per non-empty path is pushed with `reconverge = r`. **The paths run
//!   in the order given: the first path is pushed last, so it is on top.** For
//!   [`branch`](ReconvergenceStack::branch) the taken path runs first and the
//!   fall-through path second. (Which side runs first is an implementation
//!   choice; the ThreadFuser paper pushes the two "in arbitrary order". This
//!   crate fixes taken-first so that schedules are deterministic.)
//! * A path whose pc already *is* `r` is not pushed: its lanes have arrived
//!   and simply wait in the reconvergence entry. (If-without-else: the lanes
//!   that skip the `then` block are not pushed at all.)
//! * If the top entry already reconverges at `r` (typically: the back edge
//!   of a loop, executed again by the lanes still iterating), no new
//!   reconvergence entry is needed: the top entry is *replaced* by the paths,
//!   which keep the same `reconverge`. The same happens when `r` is `None`
//!   (the branch's IPDOM is the function exit): the paths inherit the top
//!   entry's reconvergence point, which is the nearest enclosing point every
//!   lane that stays in the function must reach. This keeps the depth bounded
//!   by the nesting of distinct reconvergence points instead of growing with
//!   loop trip counts.
//!
//! ## Automatic reconvergence
//!
//! Every operation that moves a pc ([`set_pc`](ReconvergenceStack::set_pc),
//! [`branch`](ReconvergenceStack::branch), ...) finishes by popping the top
//! entry for as long as its `pc` equals its `reconverge`. The interpreter
//! therefore never calls a separate "reconverge" step and cannot forget it:
//! after any call, [`top`](ReconvergenceStack::top) is the next thing to run.
//!
//! ## Loops
//!
//! A loop's exit branch reconverges at the loop's IPDOM (normally the block
//! after the loop). On the first divergent iteration the top entry becomes
//! the reconvergence entry at the loop exit and the lanes that keep looping
//! are pushed; lanes that leave are not pushed (their path pc is the exit):
//! they wait in the reconvergence entry. Every later divergent back edge
//! reconverges at the same pc, so the looping entry is replaced, not nested.
//! When the last lanes leave, the looping entry reaches the exit pc, is
//! popped, and the reconvergence entry continues with every lane. A loop with
//! lane-dependent trip counts thus costs `max(trips)` iterations, with the
//! lanes that finished early idle: that is exactly the SIMT inefficiency the
//! counters in [`crate::counters`] measure.
//!
//! ## Exit
//!
//! Lanes that execute `exit` (or `ret` from the kernel) leave the warp:
//! [`exit_lanes`](ReconvergenceStack::exit_lanes) removes them from every
//! entry and drops entries left empty. Entries are never empty otherwise:
//! divergence never pushes an empty path. When the last lane exits the stack
//! is empty and [`top`](ReconvergenceStack::top) returns `None`.
//!
//! ## Invariants
//!
//! * No entry has an empty mask.
//! * For two entries, the upper one's mask is either a subset of the lower
//!   one's (it will reconverge into it) or disjoint from it (a sibling path
//!   still waiting to run).
//! * The union of all masks is the set of live lanes (active + waiting).
//!
//! ## Depth guard
//!
//! A stack has a maximum depth ([`DEFAULT_MAX_DEPTH`] unless given). An
//! operation that would exceed it returns [`StackError::Overflow`] and leaves
//! the stack unchanged, instead of growing without bound on bad
//! reconvergence information or runaway recursion.
//!
//! Function calls, where each invocation has its own reconvergence stack,
//! are handled by [`crate::CallStack`], which shares this implementation.

use std::fmt;

use crate::mask::LaneMask;

/// Default maximum number of entries of a stack.
pub const DEFAULT_MAX_DEPTH: usize = 1024;

/// One entry of a reconvergence stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StackEntry<Pc> {
    /// Where the entry's lanes execute next (for the top entry) or resume
    /// (for a waiting entry).
    pub pc: Pc,
    /// Where the entry reconverges with the entry that holds its lanes
    /// further down; `None` is the function (or kernel) exit.
    pub reconverge: Option<Pc>,
    /// The lanes of the entry. Never empty.
    pub mask: LaneMask,
}

/// `pc=<pc> reconverge=<pc or exit> mask=<hex>`, for debugging dumps.
impl<Pc: fmt::Display> fmt::Display for StackEntry<Pc> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pc={} reconverge=", self.pc)?;
        match &self.reconverge {
            Some(r) => write!(f, "{r}")?,
            None => f.write_str("exit")?,
        }
        write!(f, " mask={}", self.mask)
    }
}

/// Errors of stack operations. A failed operation leaves the stack unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackError {
    /// The operation would make the stack deeper than its maximum depth.
    Overflow {
        /// The maximum depth of the stack.
        max_depth: usize,
    },
    /// The paths given to a divergence do not partition the active mask
    /// (a path has a lane that is not active, two paths share a lane, or an
    /// active lane is in no path), or a call returns to its own call site.
    InvalidPaths,
    /// A call names no active lane.
    NoActiveLanes,
}

impl fmt::Display for StackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StackError::Overflow { max_depth } => {
                write!(f, "reconvergence stack deeper than {max_depth} entries")
            }
            StackError::InvalidPaths => f.write_str("divergent paths do not partition the active lanes"),
            StackError::NoActiveLanes => f.write_str("call names no active lane"),
        }
    }
}

impl std::error::Error for StackError {}

/// Shape of a divergence: whether the top entry is replaced (`inherit`),
/// the reconvergence pc of the pushed paths, and how many are pushed.
struct Plan<Pc> {
    inherit: bool,
    reconverge: Option<Pc>,
    pushes: usize,
}

/// The stack storage and algorithms, shared by [`ReconvergenceStack`] and
/// [`crate::CallStack`]. Methods taking `base` act on the segment
/// `entries[base..]` (one function invocation); nothing ever pops below it.
#[derive(Clone, Debug)]
pub(crate) struct Core<Pc> {
    pub(crate) entries: Vec<StackEntry<Pc>>,
    pub(crate) max_depth: usize,
}

impl<Pc: Copy + Eq> Core<Pc> {
    pub(crate) fn new(entry_pc: Pc, mask: LaneMask, max_depth: usize) -> Self {
        let mut entries = Vec::with_capacity(8.min(max_depth.max(1)));
        if !mask.is_empty() {
            entries.push(StackEntry { pc: entry_pc, reconverge: None, mask });
        }
        Core { entries, max_depth }
    }

    #[inline]
    pub(crate) fn top(&self) -> Option<(Pc, LaneMask)> {
        self.entries.last().map(|e| (e.pc, e.mask))
    }

    #[inline]
    pub(crate) fn top_entry(&self) -> StackEntry<Pc> {
        *self.entries.last().expect("operation on a finished SIMT stack (no live lanes)")
    }

    /// Pops the top entry while it has reached its reconvergence pc.
    #[inline]
    pub(crate) fn settle(&mut self, base: usize) {
        while self.entries.len() > base {
            let top = self.entries[self.entries.len() - 1];
            if top.reconverge == Some(top.pc) {
                self.entries.pop();
            } else {
                break;
            }
        }
    }

    #[inline]
    pub(crate) fn set_pc(&mut self, base: usize, pc: Pc) {
        let len = self.entries.len();
        assert!(len > base, "set_pc on a finished SIMT stack (no live lanes)");
        self.entries[len - 1].pc = pc;
        self.settle(base);
    }

    /// Checks that `paths` partition `active`; returns the number of
    /// non-empty paths and the first of them.
    fn validate<I>(active: LaneMask, paths: I) -> Result<(usize, Option<Pc>), StackError>
    where
        I: Iterator<Item = (Pc, LaneMask)>,
    {
        let mut union = LaneMask::EMPTY;
        let mut nonempty = 0;
        let mut first = None;
        for (pc, mask) in paths {
            if !mask.is_subset_of(active) || union.intersects(mask) {
                return Err(StackError::InvalidPaths);
            }
            union |= mask;
            if !mask.is_empty() {
                nonempty += 1;
                first.get_or_insert(pc);
            }
        }
        if union != active {
            return Err(StackError::InvalidPaths);
        }
        Ok((nonempty, first))
    }

    fn plan<I>(top: &StackEntry<Pc>, paths: I, reconverge: Option<Pc>) -> Plan<Pc>
    where
        I: Iterator<Item = (Pc, LaneMask)>,
    {
        let inherit = reconverge.is_none() || reconverge == top.reconverge;
        let r = if inherit { top.reconverge } else { reconverge };
        let pushes = paths.filter(|&(pc, mask)| !mask.is_empty() && Some(pc) != r).count();
        Plan { inherit, reconverge: r, pushes }
    }

    /// The depth the stack would have after `diverge(paths, reconverge)`.
    pub(crate) fn len_after<I>(&self, paths: I, reconverge: Option<Pc>) -> Result<usize, StackError>
    where
        I: Iterator<Item = (Pc, LaneMask)> + Clone,
    {
        let top = self.top_entry();
        let (nonempty, _) = Self::validate(top.mask, paths.clone())?;
        if nonempty <= 1 {
            return Ok(self.entries.len());
        }
        let plan = Self::plan(&top, paths, reconverge);
        // `entries.len() >= 1 >= inherit`, so this does not underflow.
        Ok(self.entries.len() - usize::from(plan.inherit) + plan.pushes)
    }

    /// Splits the top entry into `paths` reconverging at `reconverge`; the
    /// first path ends up on top. See the module documentation.
    pub(crate) fn diverge<I>(&mut self, base: usize, paths: I, reconverge: Option<Pc>) -> Result<(), StackError>
    where
        I: Iterator<Item = (Pc, LaneMask)> + Clone + DoubleEndedIterator,
    {
        assert!(self.entries.len() > base, "divergence on a finished SIMT stack (no live lanes)");
        let top = self.top_entry();
        let (nonempty, first) = Self::validate(top.mask, paths.clone())?;
        if nonempty <= 1 {
            // Uniform (`nonempty == 0` cannot happen: the active mask is
            // never empty and the paths cover it).
            if let Some(pc) = first {
                self.set_pc(base, pc);
            }
            return Ok(());
        }
        let plan = Self::plan(&top, paths.clone(), reconverge);
        // `entries.len() >= 1 >= inherit`, so this does not underflow.
        if self.entries.len() - usize::from(plan.inherit) + plan.pushes > self.max_depth {
            return Err(StackError::Overflow { max_depth: self.max_depth });
        }
        if plan.inherit {
            self.entries.pop();
        } else if let (Some(r), Some(top)) = (plan.reconverge, self.entries.last_mut()) {
            top.pc = r;
        }
        for (pc, mask) in paths.rev() {
            if !mask.is_empty() && Some(pc) != plan.reconverge {
                self.entries.push(StackEntry { pc, reconverge: plan.reconverge, mask });
            }
        }
        self.settle(base);
        Ok(())
    }

    pub(crate) fn branch(
        &mut self,
        base: usize,
        taken_pc: Pc,
        taken_mask: LaneMask,
        fallthrough_pc: Pc,
        reconverge: Option<Pc>,
    ) -> Result<(), StackError> {
        let active = self.top_entry().mask;
        if taken_pc == fallthrough_pc {
            self.set_pc(base, taken_pc);
            return Ok(());
        }
        let taken = taken_mask & active;
        let paths = [(taken_pc, taken), (fallthrough_pc, active - taken)];
        self.diverge(base, paths.iter().copied(), reconverge)
    }

    /// Removes `mask` from the entries of `entries[from..]`, dropping
    /// entries left empty, and settles the segment starting at `base`.
    pub(crate) fn remove_lanes_from(&mut self, from: usize, base: usize, mask: LaneMask) {
        let mut write = from;
        for read in from..self.entries.len() {
            let mut entry = self.entries[read];
            entry.mask -= mask;
            if !entry.mask.is_empty() {
                self.entries[write] = entry;
                write += 1;
            }
        }
        self.entries.truncate(write);
        self.settle(base);
    }

    /// Lets another path of the segment `entries[base..]` run ahead of the
    /// active one: the lowest *leaf* below the top (an entry no entry above
    /// it shares a lane with: a path waiting to run, not a reconvergence
    /// entry) moves to the top; the entries above it keep their order. They
    /// share no lane with it, so every entry stays above the entries its
    /// lanes reconverge into and the invariants hold. Taking the lowest leaf
    /// each time runs the waiting paths in turn (round robin). Returns
    /// `false`, with the stack unchanged, when the top is the segment's only
    /// leaf.
    pub(crate) fn defer_top(&mut self, base: usize) -> bool {
        let len = self.entries.len();
        let mut above = LaneMask::EMPTY;
        let mut lowest = None;
        for i in (base..len).rev() {
            let mask = self.entries[i].mask;
            if i + 1 < len && !mask.intersects(above) {
                lowest = Some(i);
            }
            above |= mask;
        }
        let Some(leaf) = lowest else { return false };
        self.entries[leaf..].rotate_left(1);
        true
    }

    pub(crate) fn live_lanes(&self) -> LaneMask {
        self.entries.iter().fold(LaneMask::EMPTY, |acc, e| acc | e.mask)
    }
}

/// An IPDOM reconvergence stack for one warp running one function (or a
/// kernel without calls). See the [module documentation](self) for the
/// algorithm.
///
/// `Pc` is whatever identifies a point of the program: an instruction index,
/// a basic-block id, an x86 address.
///
/// Typical interpreter loop:
///
/// ```
/// # use simt::{LaneMask, ReconvergenceStack};
/// # let mut stack = ReconvergenceStack::new(0u32, LaneMask::full(4));
/// while let Some((pc, active)) = stack.top() {
///     // issue the instruction at `pc` for the lanes in `active`, then:
///     if pc == 3 {
///         stack.exit_lanes(active);
///     } else {
///         stack.set_pc(pc + 1);
///     }
/// }
/// ```
#[derive(Clone, Debug)]
pub struct ReconvergenceStack<Pc> {
    core: Core<Pc>,
}

impl<Pc: Copy + Eq> ReconvergenceStack<Pc> {
    /// A stack whose lanes `mask` start at `entry_pc`, with the
    /// [default maximum depth](DEFAULT_MAX_DEPTH). With an empty `mask` the
    /// stack starts finished.
    pub fn new(entry_pc: Pc, mask: LaneMask) -> Self {
        Self::with_max_depth(entry_pc, mask, DEFAULT_MAX_DEPTH)
    }

    /// Like [`new`](Self::new) with a maximum depth (at least 1 is useful).
    pub fn with_max_depth(entry_pc: Pc, mask: LaneMask, max_depth: usize) -> Self {
        ReconvergenceStack { core: Core::new(entry_pc, mask, max_depth) }
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

    /// Number of entries.
    #[inline]
    pub fn depth(&self) -> usize {
        self.core.entries.len()
    }

    /// The maximum number of entries.
    #[inline]
    pub fn max_depth(&self) -> usize {
        self.core.max_depth
    }

    /// The entries, bottom first (the last one is the active entry).
    #[inline]
    pub fn entries(&self) -> &[StackEntry<Pc>] {
        &self.core.entries
    }

    /// Iterates over the entries, bottom first.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, StackEntry<Pc>> {
        self.core.entries.iter()
    }

    /// Lanes that have not exited (active or waiting).
    pub fn live_lanes(&self) -> LaneMask {
        self.core.live_lanes()
    }

    /// Moves the active entry to `pc` (straight-line advance, unconditional
    /// or uniform jump), then reconverges: if `pc` is the entry's
    /// reconvergence point it is popped and the entry below runs.
    ///
    /// # Panics
    /// If the stack is finished.
    #[inline]
    pub fn set_pc(&mut self, pc: Pc) {
        self.core.set_pc(0, pc);
    }

    /// A conditional branch executed by the active lanes: the lanes of
    /// `taken_mask` (intersected with the active mask; other bits are
    /// ignored) go to `taken_pc`, the other active lanes to `fallthrough_pc`,
    /// and the two groups reconverge at `reconverge` (the branch's immediate
    /// post-dominator; `None` = the function exit). Pass a `Pc` or `None`.
    ///
    /// Uniform outcomes just move the pc. Divergent ones run the **taken
    /// path first**, then the fall-through path, then continue at
    /// `reconverge` with all lanes.
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
        self.core.branch(0, taken_pc, taken_mask, fallthrough_pc, reconverge.into())
    }

    /// An n-way divergence: each `(pc, mask)` path sends its lanes to `pc`;
    /// all reconverge at `reconverge` (`None` = function exit). The paths
    /// must partition the active mask (empty paths are allowed and ignored)
    /// and run **in the order given**. Two paths may share a pc (that is how
    /// lock serialization is expressed, see [`serialize`](Self::serialize)).
    ///
    /// # Errors
    /// [`StackError::InvalidPaths`], [`StackError::Overflow`] (the stack is
    /// unchanged).
    ///
    /// # Panics
    /// If the stack is finished.
    pub fn diverge(&mut self, paths: &[(Pc, LaneMask)], reconverge: impl Into<Option<Pc>>) -> Result<(), StackError> {
        self.core.diverge(0, paths.iter().copied(), reconverge.into())
    }

    /// Serializes the active lanes: each group runs, one after the other
    /// (in the order given), from the current pc until `reconverge`, where
    /// all groups merge again. ThreadFuser uses this for lanes contending
    /// for the same lock: the groups are built so that no two lanes of a
    /// group hold the same lock (see [`crate::lock_groups`]) and
    /// `reconverge` is the pc after the matching unlock. The groups must
    /// partition the active mask.
    ///
    /// # Errors
    /// [`StackError::InvalidPaths`], [`StackError::Overflow`] (the stack is
    /// unchanged).
    ///
    /// # Panics
    /// If the stack is finished.
    pub fn serialize(&mut self, groups: &[LaneMask], reconverge: impl Into<Option<Pc>>) -> Result<(), StackError> {
        let pc = self.core.top_entry().pc;
        self.core.diverge(0, groups.iter().map(move |&g| (pc, g)), reconverge.into())
    }

    /// Lanes of `mask` leave the warp (`exit`, or `ret` from the kernel):
    /// they are removed from every entry, and entries left empty are
    /// dropped. Lanes need not be active (a replayer may retire a waiting
    /// thread).
    ///
    /// Returns the lanes of the previously active entry that did **not**
    /// leave. If that set is non-empty, the same entry is still on top at
    /// the same pc and the caller advances it (e.g. `set_pc(pc + 1)` after a
    /// predicated `exit`); if it is empty, another entry (or nothing) is now
    /// on top and must not be advanced.
    pub fn exit_lanes(&mut self, mask: LaneMask) -> LaneMask {
        let before = self.active_mask();
        if !mask.is_empty() {
            self.core.remove_lanes_from(0, 0, mask);
        }
        before - mask
    }
}

impl<'a, Pc> IntoIterator for &'a ReconvergenceStack<Pc> {
    type Item = &'a StackEntry<Pc>;
    type IntoIter = std::slice::Iter<'a, StackEntry<Pc>>;

    fn into_iter(self) -> Self::IntoIter {
        self.core.entries.iter()
    }
}
