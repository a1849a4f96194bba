//! SIMT building blocks shared by lockstep's engines.
//!
//! lockstep runs PTX kernels in a SIMT emulator and replays traces of
//! multithreaded x86 programs as if their threads were fused into warps
//! (ThreadFuser). Both need the same machinery, which lives here and knows
//! nothing about either instruction set: program counters are a generic
//! `Pc: Copy + Eq` (an instruction index, a basic-block id, an address).
//!
//! | module | what |
//! |---|---|
//! | [`mask`] | [`LaneMask`], a set of lanes of a warp of up to 64; [`WarpSize`] |
//! | [`stack`] | [`ReconvergenceStack`], the immediate-post-dominator reconvergence stack |
//! | [`call_stack`] | [`CallStack`], the same with one frame per function invocation |
//! | [`locks`] | [`lock_groups`], which lanes to serialize on contended locks |
//! | [`coalesce`] | transactions (32-byte sectors, 128-byte lines) per warp memory instruction |
//! | [`banks`] | shared-memory bank conflicts (wavefronts) per warp shared access |
//! | [`counters`] | [`Efficiency`], [`Divergence`], [`MemoryStats`], and per-key collections |
//!
//! # How an engine uses them
//!
//! One warp is a stack plus counters. The engine loops on the stack's
//! [`top`](ReconvergenceStack::top), which says which pc to run and for
//! which lanes:
//!
//! 1. **Issue** the instruction at `pc` for the `active` lanes (the PTX
//!    emulator executes it; the trace replayer consumes one record of each
//!    active thread's trace) and count it: [`Efficiency::record`] with
//!    `active.count()`, globally and per function or pc.
//! 2. **Memory**: for loads and stores, gather the active lanes'
//!    `(address, size)` pairs, [`coalesce`](coalesce::coalesce) them
//!    (global memory) and record the result in [`MemoryStats`], or analyze
//!    them with [`BankConfig::analyze`] (shared memory).
//! 3. **Control**: tell the stack where the lanes go next.
//!    * straight-line code, jumps: [`set_pc`](ReconvergenceStack::set_pc);
//!    * conditional branches: [`branch`](ReconvergenceStack::branch) with the
//!      lanes that take it and the branch's immediate post-dominator (from
//!      the `graph` crate; the replayer builds the graph from the traces); a
//!      replayer that sees lanes going to more than two places uses
//!      [`diverge`](ReconvergenceStack::diverge);
//!    * calls and returns: [`CallStack::call`] / [`CallStack::ret`];
//!    * `exit` or the end of a thread: [`exit_lanes`](ReconvergenceStack::exit_lanes);
//!    * contended locks (replayer): [`lock_groups`] then
//!      [`serialize`](ReconvergenceStack::serialize).
//!
//!    Reconvergence is automatic: when the active entry reaches its
//!    reconvergence pc the stack pops it, so the next `top` already has the
//!    merged lanes.
//! 4. Stop when `top` returns `None`: every lane has exited.
//!
//! # Example
//!
//! A 4-lane warp runs an if/else on the lane parity:
//!
//! ```text
//! 0: op
//! 1: if lane is odd goto 4          ; reconverges at 6
//! 2: op                             ; even lanes
//! 3: goto 6
//! 4: op                             ; odd lanes
//! 5: op
//! 6: op                             ; all lanes again
//! 7: exit
//! ```
//!
//! ```
//! use simt::{Efficiency, LaneMask, ReconvergenceStack};
//!
//! let odd = LaneMask(0b1010);
//! let mut stack = ReconvergenceStack::new(0u32, LaneMask::full(4));
//! let mut efficiency = Efficiency::new();
//! let mut trace = Vec::new();
//! while let Some((pc, active)) = stack.top() {
//!     efficiency.record(active.count());
//!     trace.push((pc, active));
//!     match pc {
//!         1 => stack.branch(4, active & odd, 2, 6)?,
//!         3 => stack.set_pc(6),
//!         7 => {
//!             stack.exit_lanes(active);
//!         }
//!         _ => stack.set_pc(pc + 1),
//!     }
//! }
//! let all = LaneMask::full(4);
//! let even = LaneMask(0b0101);
//! // The taken path (odd lanes) runs first, then the even lanes; both
//! // reconverge at 6.
//! assert_eq!(
//!     trace,
//!     [(0, all), (1, all), (4, odd), (5, odd), (2, even), (3, even), (6, all), (7, all)]
//! );
//! assert_eq!(efficiency.thread_instructions, 24);
//! assert_eq!(efficiency.warp_instructions, 8);
//! assert_eq!(efficiency.ratio(4), Some(0.75));
//! # Ok::<(), simt::StackError>(())
//! ```

#![forbid(unsafe_code)]

pub mod banks;
pub mod call_stack;
pub mod coalesce;
pub mod counters;
pub mod locks;
pub mod mask;
pub mod stack;

pub use banks::{bank_conflicts, BankConfig, BankReport};
pub use call_stack::{CallStack, Frame};
pub use coalesce::{cache_lines, coalesce_into, coalesce_with, sectors, transactions, Coalesced};
pub use counters::{
    AccessKind, AccessStats, ByKey, Dense, Divergence, DivergenceBy, Efficiency, EfficiencyBy, MemoryStats,
};
pub use locks::lock_groups;
pub use mask::{InvalidWarpSize, LaneMask, Lanes, WarpSize, MAX_LANES};
pub use stack::{ReconvergenceStack, StackEntry, StackError, DEFAULT_MAX_DEPTH};
