//! The QEMU side: plugin registration and the `extern "C"` callbacks. Not compiled into unit tests (they
//! would need QEMU's symbols to link).

use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::sys::{
    qemu_plugin_cb_flags, qemu_plugin_id_t, qemu_plugin_insn_data, qemu_plugin_insn_size, qemu_plugin_mem_is_store,
    qemu_plugin_mem_rw, qemu_plugin_mem_size_shift, qemu_plugin_meminfo_t, qemu_plugin_register_atexit_cb,
    qemu_plugin_register_vcpu_exit_cb, qemu_plugin_register_vcpu_init_cb, qemu_plugin_register_vcpu_mem_cb,
    qemu_plugin_register_vcpu_syscall_cb, qemu_plugin_register_vcpu_syscall_ret_cb,
    qemu_plugin_register_vcpu_tb_exec_cb, qemu_plugin_register_vcpu_tb_trans_cb, qemu_plugin_tb,
    qemu_plugin_tb_get_insn, qemu_plugin_tb_n_insns, qemu_plugin_tb_vaddr,
};
use qemu_plugin::PluginId;

type TbCb = extern "C" fn(c_uint, *mut c_void);
type MemCb = extern "C" fn(c_uint, qemu_plugin_meminfo_t, u64, *mut c_void);

/// Whether memory callbacks decode QEMU's access value themselves (see [`check_meminfo_layout`]).
static INLINE_MEMINFO: AtomicBool = AtomicBool::new(false);

use crate::encode::{access_bits, MemSite};
use crate::state::{end_thread, new_state, state, with_state, ThreadState};
use crate::statics::TbDesc;
use crate::{disabled, lock, Config, Mode, Tracer, DISABLED, TRACER};

/// QEMU 7.2 packs a memory access as `MemOpIdx | rw << 16` (MemOp in bits 4.., its size in the low 3 bits
/// of that). [`check_meminfo_layout`] verifies that against the API's accessors at start: if it holds, the
/// memory callback decodes the value itself ([`on_mem::<true>`]), otherwise it calls the accessors.
fn check_meminfo_layout() -> bool {
    (0u32..8).all(|size| {
        [1u32, 2].iter().all(|&rw| {
            let info = (size << 4) | (rw << 16);
            // SAFETY: FFI accessors of QEMU's plugin API: pure functions of an integer.
            let (s, w) = unsafe {
                (
                    qemu_plugin_mem_size_shift(info as qemu_plugin_meminfo_t),
                    qemu_plugin_mem_is_store(info as qemu_plugin_meminfo_t),
                )
            };
            s == size && w == (rw == 2) && access::<true>(info) == access::<false>(info)
        })
    })
}

/// A memory access's [`access_bits`] (store, log2 of the size), from QEMU's packed value.
#[inline(always)]
fn access<const INLINE: bool>(info: qemu_plugin_meminfo_t) -> u64 {
    if INLINE {
        // Store (bit 1 of rw, info bit 17) to bit 6, size (info bits 4..7) to bits 3..6.
        u64::from((info >> 11) & 0x40 | (info >> 1) & 0x38)
    } else {
        // SAFETY: FFI accessors of QEMU's plugin API; pure functions of the value QEMU passed to the callback.
        let (store, size) = unsafe { (qemu_plugin_mem_is_store(info), qemu_plugin_mem_size_shift(info)) };
        access_bits(store, size as u8)
    }
}

extern "C" fn on_tb_exec(vcpu: c_uint, udata: *mut c_void) {
    if disabled() {
        return;
    }
    // SAFETY: `udata` is the address of a `TbDesc` leaked at translation (never freed, never moved).
    let tb: &'static TbDesc = unsafe { &*(udata as *const TbDesc) };
    if let Some(st) = state(vcpu).or_else(|| first_state(vcpu)) {
        st.on_tb(tb);
    }
}

/// A thread's first block: its state is made.
#[cold]
#[inline(never)]
fn first_state(vcpu: u32) -> Option<&'static mut ThreadState> {
    let t = TRACER.get()?;
    match new_state(t, vcpu) {
        Ok(()) => state(vcpu),
        Err(e) => {
            t.fail(&e);
            None
        }
    }
}

/// `udata` is a [`MemSite`]; `INLINE`: see [`check_meminfo_layout`].
extern "C" fn on_mem<const INLINE: bool>(vcpu: c_uint, info: qemu_plugin_meminfo_t, vaddr: u64, udata: *mut c_void) {
    if disabled() {
        return;
    }
    if let Some(st) = state(vcpu) {
        st.on_mem(MemSite(udata as u64), access::<INLINE>(info), vaddr);
    }
}

/// `mode=null`: QEMU's own cost of calling the plugin.
extern "C" fn on_tb_exec_null(_vcpu: c_uint, _udata: *mut c_void) {}

extern "C" fn on_mem_null(_vcpu: c_uint, _info: qemu_plugin_meminfo_t, _vaddr: u64, _udata: *mut c_void) {}

extern "C" fn on_tb_trans(_id: qemu_plugin_id_t, tb: *mut qemu_plugin_tb) {
    if disabled() {
        return;
    }
    let Some(t) = TRACER.get() else { return };
    // SAFETY: QEMU passes a valid translation-block handle that lives for the duration of this callback; the
    // instruction handles and the bytes they point to live as long.
    let (vaddr, insns) = unsafe {
        let n = qemu_plugin_tb_n_insns(tb);
        let mut insns = Vec::with_capacity(n);
        for i in 0..n {
            let insn = qemu_plugin_tb_get_insn(tb, i);
            let size = qemu_plugin_insn_size(insn);
            let data = qemu_plugin_insn_data(insn) as *const u8;
            insns.push((insn, std::slice::from_raw_parts(data, size)));
        }
        (qemu_plugin_tb_vaddr(tb), insns)
    };
    if insns.is_empty() {
        return;
    }
    let bytes: Vec<&[u8]> = insns.iter().map(|i| i.1).collect();
    let desc = {
        let mut st = lock(&t.statics);
        let d = st.block_for(&t.cfg, vaddr, &bytes);
        t.maybe_flush_meta(&mut st);
        d
    };
    let kinds = access_kinds(&bytes);
    let null = t.cfg.mode == Mode::Null;
    let (tb_cb, mem_cb): (TbCb, MemCb) = match (null, INLINE_MEMINFO.load(Relaxed)) {
        (true, _) => (on_tb_exec_null, on_mem_null),
        (false, true) => (on_tb_exec, on_mem::<true>),
        (false, false) => (on_tb_exec, on_mem::<false>),
    };
    // Every block has a callback of its own. Letting the callback of a block's first memory access (where
    // that access is certain) stand in for it saves one helper call per such block, but measured only ~1% fewer
    // instructions and no time beyond noise, and a block whose first access faults would go missing.
    // SAFETY: registering callbacks on the handles QEMU gave us, during the translation callback as the API
    // requires; the user data are a leaked `TbDesc` and plain integers.
    unsafe {
        qemu_plugin_register_vcpu_tb_exec_cb(
            tb,
            Some(tb_cb),
            qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
            desc as *const TbDesc as *mut c_void,
        );
        for (i, (insn, _)) in insns.iter().enumerate() {
            if t.cfg.mode == Mode::Blocks {
                break;
            }
            let (atomic, stack) = kinds[i];
            let site = MemSite::new(desc.first_insn, i as u16, atomic, stack);
            qemu_plugin_register_vcpu_mem_cb(
                *insn,
                Some(mem_cb),
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                qemu_plugin_mem_rw::QEMU_PLUGIN_MEM_RW,
                site.0 as *mut c_void,
            );
        }
    }
}

/// Per instruction: whether it is an atomic read-modify-write (`lock` prefix, or `xchg` with memory), and
/// whether it addresses the stack (push, pop, call, return, or a memory operand based on `rsp`). A lock
/// function's lock is the object it writes that is not its own stack frame.
fn access_kinds(insns: &[&[u8]]) -> Vec<(bool, bool)> {
    use iced_x86::{Mnemonic, OpKind, Register};
    insns
        .iter()
        .map(|b| {
            let mut d = iced_x86::Decoder::new(64, b, iced_x86::DecoderOptions::NONE);
            let i = d.decode();
            let memory = (0..i.op_count()).any(|k| i.op_kind(k) == OpKind::Memory);
            let atomic = i.has_lock_prefix() || (i.mnemonic() == Mnemonic::Xchg && memory);
            let stack = i.is_stack_instruction() || (memory && i.memory_base() == Register::RSP);
            (atomic, stack)
        })
        .collect()
}

extern "C" fn on_vcpu_init(_id: qemu_plugin_id_t, vcpu: c_uint) {
    if let Some(t) = TRACER.get() {
        t.vcpu_created(vcpu);
    }
}

/// In user mode QEMU calls this on the thread whose vCPU goes away, i.e. when a guest thread exits.
extern "C" fn on_vcpu_exit(_id: qemu_plugin_id_t, _vcpu: c_uint) {
    if !disabled() {
        end_thread();
    }
}

#[allow(clippy::too_many_arguments)]
extern "C" fn on_syscall(
    _id: qemu_plugin_id_t,
    vcpu: c_uint,
    num: i64,
    a1: u64,
    _a2: u64,
    _a3: u64,
    _a4: u64,
    _a5: u64,
    _a6: u64,
    _a7: u64,
    _a8: u64,
) {
    if disabled() {
        return;
    }
    let Some(t) = TRACER.get() else { return };
    if num == libc::SYS_exit_group || num == libc::SYS_exit {
        t.exit_code.store(i64::from(a1 as i32), Relaxed);
    }
    with_state(vcpu, |st| st.on_syscall(num));
}

extern "C" fn on_syscall_ret(_id: qemu_plugin_id_t, _vcpu: c_uint, num: i64, ret: i64) {
    // A forked child (not a thread: threads start in the new thread, not by returning from the call) must not
    // write into the parent's trace or buffers.
    if ret == 0 && matches!(num, libc::SYS_clone | libc::SYS_fork | libc::SYS_vfork | libc::SYS_clone3) {
        DISABLED.store(true, Relaxed);
    }
}

extern "C" fn on_exit(_id: qemu_plugin_id_t, _udata: *mut c_void) {
    if let Some(t) = TRACER.get() {
        t.finalize();
    }
}

/// The plugin object the `qemu-plugin` crate installs.
#[derive(Debug, Default)]
pub struct Plugin;

impl HasCallbacks for Plugin {}

impl Register for Plugin {
    fn register_default(&mut self, id: PluginId, args: &Args, info: &Info) -> qemu_plugin::Result<()> {
        if info.system.is_some() {
            eprintln!("lockstep tracer: only QEMU user mode (qemu-x86_64) is supported");
            return Ok(());
        }
        if info.target_name != "x86_64" {
            eprintln!("lockstep tracer: the target is {}, but only x86_64 is supported", info.target_name);
            return Ok(());
        }
        let tracer = match Config::parse(&args.raw).and_then(Tracer::new) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("lockstep tracer: {e}");
                std::process::exit(125);
            }
        };
        INLINE_MEMINFO.store(check_meminfo_layout(), Relaxed);
        let _ = TRACER.set(tracer);
        // SAFETY: registering plain `extern "C"` callbacks with the id QEMU gave to `qemu_plugin_install`.
        unsafe {
            qemu_plugin_register_vcpu_init_cb(id, Some(on_vcpu_init));
            qemu_plugin_register_vcpu_exit_cb(id, Some(on_vcpu_exit));
            qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_tb_trans));
            qemu_plugin_register_vcpu_syscall_cb(id, Some(on_syscall));
            qemu_plugin_register_vcpu_syscall_ret_cb(id, Some(on_syscall_ret));
            qemu_plugin_register_atexit_cb(id, Some(on_exit), std::ptr::null_mut());
        }
        Ok(())
    }
}

qemu_plugin::register!(Plugin);
