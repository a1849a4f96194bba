//! The contract between generated code and the runtime: the CTA context every compiled function receives, the
//! threads' state words, thread status codes and error codes. Generated code reaches helpers, device
//! functions and module variables only through tables in the context, so the machine code holds no absolute
//! address and can be cached on disk.

/// Per-CTA context, shared by all threads of the CTA (one per worker).
#[repr(C)]
#[derive(Debug)]
pub struct CtaCtx {
    /// Host address of the CTA's shared memory.
    pub shared: *mut u8,
    /// Host address of the kernel's parameter buffer.
    pub params: *const u8,
    /// Per-thread state words, interleaved by groups of [`thread::LANES`] threads (see [`thread`]): the
    /// group of thread `t` starts at `threads + (t / LANES) * group_bytes`.
    pub threads: *mut u8,
    pub group_bytes: u64,
    /// Per-thread local memory: thread `t`'s at `locals + t * local_stride`.
    pub locals: *mut u8,
    pub local_stride: u64,
    pub ntid: [u32; 3],
    pub ctaid: [u32; 3],
    pub nctaid: [u32; 3],
    pub thread_count: u32,
    /// Device address of each module variable the code names, by the compiler's numbering.
    pub globals: *const u64,
    /// Helper functions (see [`Helper`]).
    pub helpers: *const usize,
    /// Compiled device functions, by the compiler's numbering.
    pub funcs: *const usize,
    /// `*const Op` of every op of every compiled function, by global site number.
    pub ops: *const usize,
    /// The runtime's own state (printf output, device memory), opaque to generated code.
    pub runtime: *mut u8,
    pub shared_size: u64,
    pub dynamic_shared: u32,
    /// Set by the first failing thread; generated code then returns at once.
    pub error_code: u32,
    pub error_thread: u32,
    pub error_site: u32,
    pub error_addr: u64,
    pub error_size: u64,
    /// Barrier phase of the CTA (counts releases; orders `printf` output).
    pub phase: u32,
    /// The vector path of a kernel with counted barriers (`vector.rs`): a thread is ready when its status
    /// ANDed with this mask is 0 (all ones; zero in a pass that follows a release, where every thread waits
    /// at the barrier and goes on), and the arrivals at the barrier in the current pass.
    pub status_mask: u32,
    pub arrived: u32,
    /// Threads of the CTA that finished (kernels with yield points), so that the runtime need not scan them.
    pub finished: u32,
    /// A cooperative launch's grid workspace (`%envreg1:%envreg2`, `program::grid`); 0 in other launches.
    pub workspace: u64,
}

/// Byte offsets of [`CtaCtx`] fields, for generated code.
pub mod ctx {
    use super::CtaCtx;
    use std::mem::offset_of;

    pub const SHARED: i32 = offset_of!(CtaCtx, shared) as i32;
    pub const PARAMS: i32 = offset_of!(CtaCtx, params) as i32;
    pub const THREADS: i32 = offset_of!(CtaCtx, threads) as i32;
    pub const GROUP_BYTES: i32 = offset_of!(CtaCtx, group_bytes) as i32;
    pub const LOCALS: i32 = offset_of!(CtaCtx, locals) as i32;
    pub const LOCAL_STRIDE: i32 = offset_of!(CtaCtx, local_stride) as i32;
    pub const NTID: i32 = offset_of!(CtaCtx, ntid) as i32;
    pub const CTAID: i32 = offset_of!(CtaCtx, ctaid) as i32;
    pub const NCTAID: i32 = offset_of!(CtaCtx, nctaid) as i32;
    pub const GLOBALS: i32 = offset_of!(CtaCtx, globals) as i32;
    pub const HELPERS: i32 = offset_of!(CtaCtx, helpers) as i32;
    pub const FUNCS: i32 = offset_of!(CtaCtx, funcs) as i32;
    pub const OPS: i32 = offset_of!(CtaCtx, ops) as i32;
    pub const SHARED_SIZE: i32 = offset_of!(CtaCtx, shared_size) as i32;
    pub const DYNAMIC_SHARED: i32 = offset_of!(CtaCtx, dynamic_shared) as i32;
    pub const ERROR_CODE: i32 = offset_of!(CtaCtx, error_code) as i32;
    pub const ERROR_THREAD: i32 = offset_of!(CtaCtx, error_thread) as i32;
    pub const ERROR_SITE: i32 = offset_of!(CtaCtx, error_site) as i32;
    pub const ERROR_ADDR: i32 = offset_of!(CtaCtx, error_addr) as i32;
    pub const ERROR_SIZE: i32 = offset_of!(CtaCtx, error_size) as i32;
    pub const THREAD_COUNT: i32 = offset_of!(CtaCtx, thread_count) as i32;
    pub const PHASE: i32 = offset_of!(CtaCtx, phase) as i32;
    pub const STATUS_MASK: i32 = offset_of!(CtaCtx, status_mask) as i32;
    pub const ARRIVED: i32 = offset_of!(CtaCtx, arrived) as i32;
    pub const FINISHED: i32 = offset_of!(CtaCtx, finished) as i32;
    pub const WORKSPACE: i32 = offset_of!(CtaCtx, workspace) as i32;
}

/// Layout of the threads' state: 64-bit words (status and resume point, the homes of the registers spilled at
/// yield points, the exchange area: operands a thread posts at a barrier or warp collective and the results
/// it gets back), interleaved by groups of [`thread::LANES`] consecutive threads: word `k` of lane `l` of a group is
/// at `group + k * WORD + l * 8`. A thread's own words are `WORD` bytes apart from its base (`group + l * 8`),
/// and the same word of a group's lanes is one contiguous vector for the vector path. Local memory is
/// elsewhere (`CtaCtx::locals`), contiguous per thread.
pub mod thread {
    /// Threads per group (the vector path's width).
    pub const LANES: i32 = 4;
    /// Bytes from one of a thread's words to its next.
    pub const WORD: i32 = 8 * LANES;
    /// `u32` status ([`super::status`]).
    pub const STATUS: i32 = 0;
    /// `u32` resume point (0 = the kernel's start), the upper half of the status word.
    pub const RESUME: i32 = 4;
    /// Register homes start here, one word each (see `Plan::home`).
    pub const SPILL: i32 = WORD;
    /// `u64` operands posted at a yield, relative to the exchange area (`Plan::exchange_offset`).
    pub const POST_A: i32 = 0;
    pub const POST_B: i32 = WORD;
    pub const POST_C: i32 = 2 * WORD;
    /// `u64` results of a collective, relative to the exchange area.
    pub const OUT: i32 = 3 * WORD;
    pub const OUT2: i32 = 4 * WORD;
    /// The member mask of a `shfl.sync` (the fourth operand; other collectives carry theirs in POST_A/B).
    pub const POST_D: i32 = 5 * WORD;
    pub const EXCHANGE_WORDS: i32 = 6;
}

/// Thread status, at [`thread::STATUS`].
pub mod status {
    pub const READY: u32 = 0;
    pub const DONE: u32 = 1;
    /// Waiting at `bar.sync`/`bar.red` (id in POST_A, expected count in POST_B, reduction input in POST_C).
    pub const BARRIER: u32 = 2;
    /// Waiting at a warp collective (operands in POST_A..D).
    pub const COLLECTIVE: u32 = 3;
    /// An mbarrier wait failed (the object's address in POST_A): the thread goes on after it, with a false
    /// result, in the next pass over the CTA (`exec.rs`), once the others had their turn.
    pub const WAIT: u32 = 4;
}

/// Error codes, at [`CtaCtx::error_code`].
pub mod error {
    pub const NONE: u32 = 0;
    pub const TRAP: u32 = 1;
    /// An operation the lane semantics do not define for these modifiers.
    pub const UNSUPPORTED: u32 = 2;
    pub const STACK_OVERFLOW: u32 = 3;
    /// Checked mode: out of bounds (address and size recorded).
    pub const OUT_OF_BOUNDS: u32 = 4;
    pub const MISALIGNED: u32 = 5;
    /// `__assertfail` (message recorded by the helper).
    pub const ASSERT: u32 = 6;
    /// A helper failed and left its message in the runtime state.
    pub const HELPER: u32 = 7;
    pub const READ_ONLY: u32 = 8;
    /// An indirect call to something that is not a function this kernel can call (address recorded).
    pub const BAD_CALL: u32 = 9;
    /// Compiled code touched unmapped memory (unchecked mode); the address is in `error_addr`.
    pub const FAULT: u32 = 10;
    /// A texture or surface instruction failed; its error is in the worker's state.
    pub const TEXTURE: u32 = 11;
    /// `mapa` to a CTA rank other than 0 (the rank recorded as the address).
    pub const CLUSTER_RANK: u32 = 12;
    /// `alloca` past the end of the thread's dynamic stack (the size recorded as the address, the bytes in
    /// use as the size).
    pub const STACK_ALLOCA: u32 = 13;
    /// `stackrestore` to a pointer outside the thread's dynamic stack (recorded as the address).
    pub const STACK_RESTORE: u32 = 14;
}

/// Return codes of device functions.
pub mod ret {
    pub const OK: u32 = 0;
    /// The thread executed `exit`.
    pub const EXIT: u32 = 1;
    /// An error was recorded in the context.
    pub const ERROR: u32 = 2;
}

/// Helper functions generated code calls through [`CtaCtx::helpers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Helper {
    /// `fn(op: *const Op, io: *mut u64) -> u32`: lane arithmetic; io = [a, b, c, d, carry, out, out2].
    Alu,
    /// `fn(op: *const Op, old: u64, a: u64, b: u64) -> u64`: the new value of an atomic.
    AtomicNew,
    /// `fn(ctx, t: u32, fmt: u64, args: u64) -> u32`: device printf.
    Printf,
    /// `fn(ctx, t: u32, msg: u64, file: u64, line: u64, func: u64)`: a failed device assertion.
    AssertFail,
    /// `fn(ctx, addr: u64, size: u32, write: u32) -> u32` (checked mode): 0 if the access is inside an allocation.
    CheckAccess,
    /// `fn() -> u64`: a clock in nanoseconds.
    Clock,
    /// `fn(ctx, id: u32, count: u32)`: `bar.arrive`.
    BarArrive,
    /// `fn(ctx, addr: u64, only_const: u32) -> u32`: `isspacep.global` / `isspacep.const`.
    IsGlobal,
    /// `fn(ctx, size: u64) -> u64`: device `malloc` (0 when the heap is full).
    Malloc,
    /// `fn(ctx, ptr: u64) -> u32`: device `free`; 0 on success, 1 with the message recorded.
    Free,
    /// `fn(ctx, t: u32, op: *const Op, io: *mut u64) -> u32`: a texture or surface instruction for one
    /// thread (io: its sources, then its destinations); 0 on success, 1 with the error recorded.
    Texture,
    /// `fn(ctx, dst: u64, src: u64, n: u64, size: u64) -> u32`: `cp.async`, `n` bytes from global memory and
    /// zeros up to `size` into shared memory; 0, or 1 (source outside memory), 2 (destination outside shared
    /// memory), 3 (destination misaligned).
    CpAsync,
    /// `fn(ctx, op: *const Op, addr: u64, a: u64, out: *mut u64) -> u32`: an mbarrier operation
    /// (`program::mbarrier`) on the object at `addr` (a host address) with operand `a`, its result in
    /// `out`; 0, or 1 (the message recorded), 2 (outside shared memory), 3 (misaligned).
    Mbarrier,
    /// `fn(ctx, op: *const Op, io: *mut u64) -> u32`: a bulk copy or reduction (`program::bulk`) for one
    /// thread, io = [dst, src, size, mbarrier (0: none)] as host addresses; 0, or 1 with the error recorded
    /// (error code `TEXTURE`, the recorded error's kind).
    BulkCopy,
    /// `fn(ctx, addr: u64, value: u64) -> u32`: after a strong load in a kernel that reads the grid workspace
    /// (a grid barrier's poll, `program::grid`), with its address and the value read: in a cooperative
    /// launch the thread yields its core, and gets 1 (the message recorded) when another CTA of the launch
    /// failed or every CTA still running polls a value that no longer changes (`cooperative.rs`); else 0.
    GridSpin,
}

pub const HELPER_COUNT: usize = 15;
