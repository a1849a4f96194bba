//! A clear error instead of a bare segmentation fault: without `--check`, generated code dereferences device
//! pointers directly, so a wild pointer faults inside JIT code. A SIGSEGV/SIGBUS handler recognizes faults
//! whose program counter lies in compiled code, prints the kernel and the address, and exits with status 1.
//! Faults anywhere else get the default action.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, Once};

/// Code ranges and their kernels. Replaced (never freed) on every registration, so the handler can read it
/// without locks.
static RANGES: AtomicPtr<Vec<(usize, usize, String)>> = AtomicPtr::new(std::ptr::null_mut());
static REGISTER: Mutex<()> = Mutex::new(());
static INSTALL: Once = Once::new();

/// Records that `[start, end)` holds the code of `kernel`, and installs the handler on first use.
pub fn register(start: usize, end: usize, kernel: &str) {
    let _guard = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
    let old = RANGES.load(Ordering::Acquire);
    // SAFETY: published vectors are never freed.
    let mut ranges = if old.is_null() { Vec::new() } else { unsafe { (*old).clone() } };
    ranges.push((start, end, kernel.to_string()));
    RANGES.store(Box::into_raw(Box::new(ranges)), Ordering::Release);
    INSTALL.call_once(install);
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
        (uc.uc_mcontext.gregs[libc::REG_RIP as usize] as usize, (*info).si_addr() as usize)
    };
    let ranges = RANGES.load(Ordering::Acquire);
    // SAFETY: published vectors are never freed.
    let hit = (!ranges.is_null()).then(|| unsafe { &*ranges }).and_then(|r| r.iter().find(|x| pc >= x.0 && pc < x.1));
    match hit {
        Some((_, _, kernel)) => {
            // Generated code holds no lock, so formatting here cannot deadlock on this thread.
            let msg = format!(
                "error: kernel `{kernel}` (JIT) accessed unmapped memory at {addr:#x}\n  \
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
