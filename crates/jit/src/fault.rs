//! A clear error instead of a bare segmentation fault: without `--check`, generated code dereferences device
//! pointers directly, so a wild pointer faults inside JIT code. A SIGSEGV/SIGBUS handler recognizes faults
//! whose program counter lies in compiled code. Workers enter compiled code through [`guarded`], and such a
//! fault jumps back there (`guard.c`): the launch fails with an error naming the address, and the process
//! lives on (a CUDA program sees `cudaErrorIllegalAddress`). A fault in compiled code outside a guarded
//! call prints the kernel and the address and exits with status 1. Faults anywhere else get the default
//! action.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

/// The most recent code ranges and their kernels' names (a ring: the oldest entry is reused). Entries are
/// written before the count that publishes them, so the handler reads them without locks.
const SLOTS: usize = 1024;
static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Each entry's kernel name (its first `NAME` bytes) and length: no allocation, so nothing to free or leak.
const NAME: usize = 96;
static NAMES: [[AtomicU8; NAME]; SLOTS] = [const { [const { AtomicU8::new(0) }; NAME] }; SLOTS];
static NAME_LENS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static COUNT: AtomicUsize = AtomicUsize::new(0);
static REGISTER: Mutex<()> = Mutex::new(());
static INSTALL: Once = Once::new();
/// Set by the first fault the handler reports.
static REPORTING: AtomicBool = AtomicBool::new(false);

/// The workers' guarded memory (shared and local): a fault in a window's guard is reported as an access
/// past that memory. A slot is free when its base is 0.
const WINDOWS: usize = 256;
static WINDOW_BASE: [AtomicUsize; WINDOWS] = [const { AtomicUsize::new(0) }; WINDOWS];
static WINDOW_LEN: [AtomicUsize; WINDOWS] = [const { AtomicUsize::new(0) }; WINDOWS];
static WINDOW_BELOW: [AtomicUsize; WINDOWS] = [const { AtomicUsize::new(0) }; WINDOWS];
static WINDOW_ABOVE: [AtomicUsize; WINDOWS] = [const { AtomicUsize::new(0) }; WINDOWS];
static WINDOW_SHARED: [AtomicU8; WINDOWS] = [const { AtomicU8::new(0) }; WINDOWS];

/// Which memory a window holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Shared,
    Local,
}

/// Records `[base, base + len)` as a worker's `kind` memory with `below`/`above` guard bytes around it, until
/// [`unwatch`] (with the same base). Silently unrecorded when every slot is taken: the handler then gives
/// its general message.
pub fn watch(base: usize, len: usize, below: usize, above: usize, kind: Window) {
    if base == 0 {
        return;
    }
    let _guard = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = (0..WINDOWS).find(|&i| WINDOW_BASE[i].load(Ordering::Acquire) == 0) {
        WINDOW_LEN[i].store(len, Ordering::Relaxed);
        WINDOW_BELOW[i].store(below, Ordering::Relaxed);
        WINDOW_ABOVE[i].store(above, Ordering::Relaxed);
        WINDOW_SHARED[i].store(u8::from(kind == Window::Shared), Ordering::Relaxed);
        WINDOW_BASE[i].store(base, Ordering::Release);
    }
}

/// Forgets the window at `base` (before its memory is unmapped).
pub fn unwatch(base: usize) {
    let _guard = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
    for b in &WINDOW_BASE {
        if b.load(Ordering::Acquire) == base {
            b.store(0, Ordering::Release);
        }
    }
}

/// The watched window whose guards hold `addr`: which memory, the offset from its start, its length.
fn window_of(addr: usize) -> Option<(Window, i128, usize)> {
    (0..WINDOWS).find_map(|i| {
        let base = WINDOW_BASE[i].load(Ordering::Acquire);
        let len = WINDOW_LEN[i].load(Ordering::Relaxed);
        let (below, above) = (WINDOW_BELOW[i].load(Ordering::Relaxed), WINDOW_ABOVE[i].load(Ordering::Relaxed));
        if base == 0 || addr < base.saturating_sub(below) || addr >= base + len + above {
            return None;
        }
        let kind = if WINDOW_SHARED[i].load(Ordering::Relaxed) == 1 { Window::Shared } else { Window::Local };
        Some((kind, addr as i128 - base as i128, len))
    })
}

fn offset_text(off: i128) -> String {
    if off < 0 {
        format!("-{:#x}", -off)
    } else {
        format!("{off:#x}")
    }
}

/// What the kernel did, when a fault at `addr` lies in a watched window's guard.
fn window_message(addr: usize) -> Option<String> {
    let (kind, off, len) = window_of(addr)?;
    let off = offset_text(off);
    Some(match kind {
        Window::Shared => format!(
            "made an out-of-bounds shared access at {off} (the CTA's shared memory has {len} bytes; dynamic shared \
             memory, `extern .shared`, is sized at launch)"
        ),
        Window::Local => {
            format!("made an out-of-bounds local access at {off} from the CTA's local memory ({len} bytes for all its threads)")
        }
    })
}

/// Where a fault in compiled code landed, for the launch's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultSite {
    pub space: device::Space,
    /// The address in that space (an offset into shared or local memory); `u64::MAX` when unknown.
    pub address: u64,
    pub detail: String,
}

/// Classifies a fault at `addr`: past a worker's shared or local memory, or in unmapped global memory.
pub fn locate(addr: usize) -> FaultSite {
    if addr == UNKNOWN_ADDRESS {
        return FaultSite {
            space: device::Space::Global,
            address: u64::MAX,
            detail: "an address outside the process's address space (a general-protection fault)".into(),
        };
    }
    match window_of(addr) {
        Some((Window::Shared, off, len)) => FaultSite {
            space: device::Space::Shared,
            address: u64::try_from(off).unwrap_or(u64::MAX),
            detail: format!(
                "{} into the CTA's shared memory of {len} bytes; dynamic shared memory, `extern .shared`, is sized at \
                 launch",
                offset_text(off)
            ),
        },
        Some((Window::Local, off, len)) => FaultSite {
            space: device::Space::Local,
            address: u64::try_from(off).unwrap_or(u64::MAX),
            detail: format!("{} into the CTA's local memory ({len} bytes for all its threads)", offset_text(off)),
        },
        None => FaultSite { space: device::Space::Global, address: addr as u64, detail: "unmapped memory".into() },
    }
}

extern "C" {
    fn lockstep_jit_guarded_call(
        f: extern "C" fn(*mut libc::c_void),
        data: *mut libc::c_void,
        fault_addr: *mut u64,
    ) -> i32;
    fn lockstep_jit_recover(addr: u64);
}

/// Runs `f`, which calls into compiled code; `Err(address)` when that code touched unmapped memory (its
/// state is then wherever the fault left it).
///
/// `f` must hold nothing that needs dropping across the call into compiled code: a fault jumps over its
/// frame.
pub fn guarded(f: &mut dyn FnMut()) -> Result<(), u64> {
    extern "C" fn call(data: *mut libc::c_void) {
        // SAFETY: `data` is the `&mut dyn FnMut()` passed below, alive for the call.
        let f = unsafe { &mut *(data as *mut &mut dyn FnMut()) };
        f();
    }
    let mut f = f;
    let mut addr = 0u64;
    // SAFETY: `call` receives a pointer to `f`, valid during the call; the C side only stores a jump buffer.
    let faulted =
        unsafe { lockstep_jit_guarded_call(call, &mut f as *mut &mut dyn FnMut() as *mut libc::c_void, &mut addr) };
    if faulted != 0 {
        Err(addr)
    } else {
        Ok(())
    }
}

/// The address of a fault the kernel did not report one for (a general-protection fault).
pub const UNKNOWN_ADDRESS: usize = usize::MAX;

/// What a fault at `addr` hit, in words: a worker's shared or local memory past its end, or unmapped memory.
pub fn describe_fault(addr: usize) -> String {
    if addr == UNKNOWN_ADDRESS {
        return "accessed an address outside the process's address space (a general-protection fault)".to_string();
    }
    window_message(addr).unwrap_or_else(|| format!("accessed unmapped memory at {addr:#x}"))
}

/// Records that `[start, end)` holds the code of `kernel`, and installs the handler on first use.
pub fn register(start: usize, end: usize, kernel: &str) {
    let _guard = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
    let n = COUNT.load(Ordering::Relaxed);
    let slot = n % SLOTS;
    ENDS[slot].store(0, Ordering::Release);
    STARTS[slot].store(start, Ordering::Release);
    let bytes = &kernel.as_bytes()[..kernel.len().min(NAME)];
    for (cell, &b) in NAMES[slot].iter().zip(bytes) {
        cell.store(b, Ordering::Relaxed);
    }
    NAME_LENS[slot].store(bytes.len(), Ordering::Release);
    ENDS[slot].store(end, Ordering::Release);
    COUNT.store(n + 1, Ordering::Release);
    INSTALL.call_once(install);
}

/// The name of the kernel whose code holds `pc` (at most `NAME` bytes).
fn kernel_at(pc: usize) -> Option<String> {
    let n = COUNT.load(Ordering::Acquire).min(SLOTS);
    (0..n).find_map(|i| {
        let (s, e) = (STARTS[i].load(Ordering::Acquire), ENDS[i].load(Ordering::Acquire));
        if pc < s || pc >= e {
            return None;
        }
        let len = NAME_LENS[i].load(Ordering::Acquire);
        let bytes: Vec<u8> = NAMES[i][..len].iter().map(|c| c.load(Ordering::Relaxed)).collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    })
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn install() {
    for sig in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: installing a handler with a zeroed, then filled, sigaction.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn install() {}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler.
    let (pc, addr) = unsafe {
        let uc = &*(uctx as *const libc::ucontext_t);
        // A general-protection fault (an address outside the canonical address space) carries no address.
        let addr = if (*info).si_code == libc::SI_KERNEL { UNKNOWN_ADDRESS } else { (*info).si_addr() as usize };
        (uc.uc_mcontext.gregs[libc::REG_RIP as usize] as usize, addr)
    };
    match kernel_at(pc) {
        Some(kernel) => {
            // Inside a guarded call, this does not return: the worker reports the fault as an error.
            // SAFETY: jumps back to a `lockstep_jit_guarded_call` frame of this thread, whose frames above
            // are generated code and the trampoline (nothing to drop).
            unsafe { lockstep_jit_recover(addr as u64) };
            // One report: a second worker that faults meanwhile waits for the first to end the process.
            if REPORTING.swap(true, Ordering::AcqRel) {
                loop {
                    // SAFETY: pause(2) is async-signal-safe.
                    unsafe { libc::pause() };
                }
            }
            // Generated code holds no lock, so formatting here cannot deadlock on this thread.
            let what = describe_fault(addr);
            let msg = format!(
                "error: kernel `{kernel}` (JIT) {what}\n  \
                 the JIT does not check memory accesses by default; rerun with --check (or --backend emu) to find \
                 the block, thread and PTX line\n"
            );
            // SAFETY: write(2) and _exit(2) are async-signal-safe.
            unsafe {
                libc::write(2, msg.as_ptr() as *const libc::c_void, msg.len());
                libc::_exit(1);
            }
        }
        None => {
            // Not ours: restore the default action; returning re-executes the access, which then kills the
            // process as usual.
            // SAFETY: resetting the signal's disposition.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
    }
}
