//! The driver API's initialization and contexts (`cuInit`, `cuDevicePrimaryCtx*`, `cuCtx*`).
//!
//! There is one device and one device state: every context, primary or created, shares its memory,
//! modules and streams. What contexts add is what a program can observe of them: which one is current on
//! each thread (a per-thread stack), whether the primary context is retained and active, and a handle that
//! stops working when its context is destroyed. The runtime API (`libcudart`) makes the primary context
//! current on a thread at its first call there, as NVIDIA's runtime does, so that a program mixing both
//! APIs finds a current context.
//!
//! Like NVIDIA's driver, an initialized driver does not survive `fork()`: in the child every call fails
//! with `CUDA_ERROR_NOT_INITIALIZED` (Numba's fork detection relies on it). Nor could it work there: the
//! child has none of the parent's threads (the JIT's workers, the runtime's host-function thread).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use crate::{Cuda, Error, Result};

#[derive(Default)]
pub(crate) struct Contexts {
    /// The id of the process that initialized the driver (`cuInit`, or the runtime's first call); 0
    /// before. Another id is a child forked after initialization.
    initialized_by: AtomicU32,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    /// The primary context's handle (made on first use, never freed).
    primary: u64,
    primary_retains: u32,
    primary_flags: u32,
    /// Created contexts: handle → (flags, id).
    created: HashMap<u64, (u32, u64)>,
    next_id: u64,
}

thread_local! {
    /// The calling thread's context stack; the last is current.
    static STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// `f` of the calling thread's context stack, or `None` once the thread's locals are gone (CUDA calls from
/// exit handlers, such as `__cudaUnregisterFatBinary`, run after them).
fn with_stack<T>(f: impl FnOnce(&mut Vec<u64>) -> T) -> Option<T> {
    STACK.try_with(|s| f(&mut s.borrow_mut())).ok()
}

/// `CUctx_flags` bits a program may pass (scheduling, map host, local memory resize, coredump, ...).
const CONTEXT_FLAGS: u32 = 0x1ff;

impl Table {
    fn primary(&mut self) -> u64 {
        if self.primary == 0 {
            self.primary = Box::into_raw(Box::new(0u64)) as u64;
        }
        self.primary
    }

    fn is_live(&self, ctx: u64) -> bool {
        (ctx != 0 && ctx == self.primary) || self.created.contains_key(&ctx)
    }
}

impl Cuda {
    fn contexts(&self) -> std::sync::MutexGuard<'_, Table> {
        self.contexts.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `cuInit`.
    pub fn driver_init(&self, flags: u32) -> Result<()> {
        if flags != 0 {
            return Err(Error::INVALID_VALUE);
        }
        let pid = std::process::id();
        match self.contexts.initialized_by.compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(()),
            Err(by) if by == pid => Ok(()),
            Err(by) => Err(self.forked(by)),
        }
    }

    /// `CUDA_ERROR_NOT_INITIALIZED` before `cuInit`, and in a child forked after it.
    pub fn driver_initialized(&self) -> Result<()> {
        match self.contexts.initialized_by.load(Ordering::Acquire) {
            0 => Err(Error::INITIALIZATION_ERROR),
            by if by == std::process::id() => Ok(()),
            by => Err(self.forked(by)),
        }
    }

    /// The error of every call in a child forked from process `parent` after it initialized the driver.
    fn forked(&self, parent: u32) -> Error {
        self.warn(
            "forked",
            &format!(
                "error: CUDA was initialized in process {parent} before it forked this process {}; as with \
                 NVIDIA's driver, a forked child cannot use it (CUDA_ERROR_NOT_INITIALIZED)",
                std::process::id()
            ),
        );
        Error::INITIALIZATION_ERROR
    }

    /// The runtime API's implicit initialization on a thread: the driver is initialized and, if the thread
    /// has no current context, the primary context (retained once, for the runtime) becomes current.
    pub fn runtime_enter(&self) {
        if with_stack(|s| !s.is_empty()).unwrap_or(true) {
            return;
        }
        // Only the first process: a forked child stays uninitialized (see the module's docs).
        let _ =
            self.contexts.initialized_by.compare_exchange(0, std::process::id(), Ordering::AcqRel, Ordering::Acquire);
        let primary = {
            let mut t = self.contexts();
            if t.primary_retains == 0 {
                t.primary_retains = 1;
            }
            t.primary()
        };
        with_stack(|s| s.push(primary));
    }

    /// The thread's current context, if it is live (`CUDA_ERROR_INVALID_CONTEXT` when there is none, or
    /// it was destroyed).
    pub fn current_context(&self) -> Result<u64> {
        self.driver_initialized()?;
        let top = with_stack(|s| s.last().copied()).flatten().ok_or(Error::DEVICE_UNINITIALIZED)?;
        if self.contexts().is_live(top) {
            Ok(top)
        } else {
            Err(Error::DEVICE_UNINITIALIZED)
        }
    }

    /// `cuCtxGetCurrent`: the current context or null (0), without an error for none.
    pub fn context_get_current(&self) -> Result<u64> {
        self.driver_initialized()?;
        Ok(with_stack(|s| s.last().copied()).flatten().unwrap_or(0))
    }

    /// `cuDevicePrimaryCtxRetain`.
    pub fn primary_context_retain(&self) -> Result<u64> {
        self.driver_initialized()?;
        let mut t = self.contexts();
        t.primary_retains = t.primary_retains.saturating_add(1);
        Ok(t.primary())
    }

    /// `cuDevicePrimaryCtxRelease`: at zero retains the context stays usable (its state lives on, as the
    /// device's state always does here) but reports itself inactive.
    pub fn primary_context_release(&self) -> Result<()> {
        self.driver_initialized()?;
        let mut t = self.contexts();
        if t.primary_retains == 0 {
            return Err(Error::DEVICE_UNINITIALIZED);
        }
        t.primary_retains -= 1;
        Ok(())
    }

    /// `cuDevicePrimaryCtxGetState`: flags and whether it is active.
    pub fn primary_context_state(&self) -> Result<(u32, bool)> {
        self.driver_initialized()?;
        let t = self.contexts();
        Ok((t.primary_flags, t.primary_retains > 0))
    }

    /// `cuDevicePrimaryCtxSetFlags`.
    pub fn primary_context_set_flags(&self, flags: u32) -> Result<()> {
        self.driver_initialized()?;
        if flags & !CONTEXT_FLAGS != 0 {
            return Err(Error::INVALID_VALUE);
        }
        self.contexts().primary_flags = flags;
        Ok(())
    }

    /// `cuDevicePrimaryCtxReset`: the device state is reset (memory freed, modules unloaded).
    pub fn primary_context_reset(&self) -> Result<()> {
        self.driver_initialized()?;
        self.contexts().primary_retains = 0;
        self.reset()
    }

    /// `cuCtxCreate`: a new context, pushed on the calling thread's stack.
    pub fn context_create(&self, flags: u32) -> Result<u64> {
        self.driver_initialized()?;
        if flags & !CONTEXT_FLAGS != 0 {
            return Err(Error::INVALID_VALUE);
        }
        let handle = Box::into_raw(Box::new(0u64)) as u64;
        {
            let mut t = self.contexts();
            t.next_id += 1;
            let id = t.next_id;
            t.created.insert(handle, (flags, id));
        }
        with_stack(|s| s.push(handle));
        Ok(handle)
    }

    /// `cuCtxDestroy`: the handle stops working; if it is current on this thread it is popped.
    pub fn context_destroy(&self, ctx: u64) -> Result<()> {
        self.driver_initialized()?;
        if self.contexts().created.remove(&ctx).is_none() {
            return Err(if ctx == 0 { Error::INVALID_VALUE } else { Error::DEVICE_UNINITIALIZED });
        }
        with_stack(|s| s.retain(|&c| c != ctx));
        Ok(())
    }

    /// `cuCtxPushCurrent`.
    pub fn context_push(&self, ctx: u64) -> Result<()> {
        self.driver_initialized()?;
        if !self.contexts().is_live(ctx) {
            return Err(Error::DEVICE_UNINITIALIZED);
        }
        with_stack(|s| s.push(ctx));
        Ok(())
    }

    /// `cuCtxPopCurrent`.
    pub fn context_pop(&self) -> Result<u64> {
        self.driver_initialized()?;
        with_stack(|s| s.pop()).flatten().ok_or(Error::DEVICE_UNINITIALIZED)
    }

    /// `cuCtxSetCurrent`: replaces the top of the stack; null pops it.
    pub fn context_set_current(&self, ctx: u64) -> Result<()> {
        self.driver_initialized()?;
        if ctx != 0 && !self.contexts().is_live(ctx) {
            return Err(Error::DEVICE_UNINITIALIZED);
        }
        with_stack(|s| {
            s.pop();
            if ctx != 0 {
                s.push(ctx);
            }
        });
        Ok(())
    }

    /// `cuCtxGetFlags` (of the current context) and `cuCtxGetId` (of any).
    pub fn context_flags(&self) -> Result<u32> {
        let ctx = self.current_context()?;
        let t = self.contexts();
        Ok(t.created.get(&ctx).map_or(t.primary_flags, |c| c.0))
    }

    pub fn context_id(&self, ctx: u64) -> Result<u64> {
        let ctx = if ctx == 0 { self.current_context()? } else { ctx };
        let t = self.contexts();
        if ctx == t.primary && ctx != 0 {
            return Ok(1);
        }
        t.created.get(&ctx).map(|c| c.1 + 1).ok_or(Error::DEVICE_UNINITIALIZED)
    }

    /// Whether `ctx` is a live context handle.
    pub fn is_context(&self, ctx: u64) -> bool {
        self.contexts().is_live(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn cuda() -> Cuda {
        let (config, _) = Config::from_vars(|_| None);
        Cuda::new(config, Box::new(std::io::sink()))
    }

    #[test]
    fn a_child_forked_after_initialization_cannot_use_the_driver() {
        let c = cuda();
        c.driver_init(0).unwrap();
        let primary = c.primary_context_retain().unwrap();
        c.context_set_current(primary).unwrap();
        assert_eq!(c.current_context(), Ok(primary));
        // What a forked child sees: the driver was initialized by another process (its parent).
        c.contexts.initialized_by.store(std::process::id() + 1, Ordering::Release);
        assert_eq!(c.current_context(), Err(Error::INITIALIZATION_ERROR));
        assert_eq!(c.context_get_current(), Err(Error::INITIALIZATION_ERROR));
        assert_eq!(c.driver_init(0), Err(Error::INITIALIZATION_ERROR), "cuInit cannot start it again");
        c.runtime_enter();
        assert_eq!(c.current_context(), Err(Error::INITIALIZATION_ERROR), "nor the runtime's first call");
    }

    #[test]
    fn contexts_follow_the_driver_rules() {
        let c = cuda();
        assert_eq!(c.primary_context_retain(), Err(Error::INITIALIZATION_ERROR), "before cuInit");
        c.driver_init(0).unwrap();
        assert_eq!(c.current_context(), Err(Error::DEVICE_UNINITIALIZED));
        assert_eq!(c.context_get_current(), Ok(0));
        let primary = c.primary_context_retain().unwrap();
        assert_eq!(c.primary_context_state(), Ok((0, true)));
        c.context_set_current(primary).unwrap();
        assert_eq!(c.current_context(), Ok(primary));
        let created = c.context_create(0).unwrap();
        assert_eq!(c.current_context(), Ok(created));
        assert_eq!(c.context_pop(), Ok(created));
        assert_eq!(c.current_context(), Ok(primary));
        c.context_push(created).unwrap();
        c.context_destroy(created).unwrap();
        assert_eq!(c.current_context(), Ok(primary), "destroying pops it");
        assert_eq!(c.context_push(created), Err(Error::DEVICE_UNINITIALIZED));
        c.primary_context_release().unwrap();
        assert_eq!(c.primary_context_state(), Ok((0, false)));
        assert_eq!(c.primary_context_release(), Err(Error::DEVICE_UNINITIALIZED));
        c.context_set_current(0).unwrap();
        assert_eq!(c.context_get_current(), Ok(0));
    }
}
