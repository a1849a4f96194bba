//! The lockstep tracer: a QEMU user-mode TCG plugin (plugin API v1, QEMU 7.2) that writes a lockstep trace
//! (`crates/trace`) of an unmodified multithreaded x86-64 program.
//!
//! Load it with `qemu-x86_64 -plugin libtracer.so,out=FILE[,spill=DIR][,function=NAME][,per_iteration=on]
//! [,exclude=NAME]... PROGRAM ARGS` or, better, through `lockstep trace`, which also writes the header, shows
//! progress and recovers the trace's tail when the program is killed.
//!
//! * `statics`: translation time: blocks (decoded with iced-x86), modules and ELF symbols, roles of functions.
//! * `state`: execution time, per host thread: events into crash-safe per-thread buffers, shadow call stack,
//!   SIMT-thread segmentation, `--exclude` skipping, lock addresses.
//! * `out`: spill buffers (shared file mappings) and the trace file.
//! * `modules`, `loops`: `/proc/self/maps`, ELF symbol tables, demangling; a function's outermost loop.

pub mod loops;
pub mod modules;
pub mod out;
pub mod state;
pub mod statics;

use std::collections::HashMap;
use std::ffi::{c_uint, c_void};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::sys::{
    qemu_plugin_cb_flags, qemu_plugin_id_t, qemu_plugin_insn_data, qemu_plugin_insn_size, qemu_plugin_mem_is_store,
    qemu_plugin_mem_rw, qemu_plugin_mem_size_shift, qemu_plugin_meminfo_t, qemu_plugin_register_atexit_cb,
    qemu_plugin_register_vcpu_exit_cb, qemu_plugin_register_vcpu_init_cb, qemu_plugin_register_vcpu_mem_cb, qemu_plugin_register_vcpu_syscall_cb,
    qemu_plugin_register_vcpu_syscall_ret_cb, qemu_plugin_register_vcpu_tb_exec_cb,
    qemu_plugin_register_vcpu_tb_trans_cb, qemu_plugin_tb, qemu_plugin_tb_get_insn, qemu_plugin_tb_n_insns,
    qemu_plugin_tb_vaddr,
};
use qemu_plugin::PluginId;
use trace::spill::{SpillHeader, SPILL_HEADER_LEN};
use trace::{ChunkKind, EndRecord, Header, MetaRecord};

use crate::out::{SpillBuf, TraceFile};
use crate::state::{end_thread, with_state, with_state_or_new};
use crate::statics::{Statics, TbDesc};

/// Name and version written into trace headers.
pub const TRACER_NAME: &str = concat!("lockstep-tracer ", env!("CARGO_PKG_VERSION"), " (qemu plugin api v1)");

/// Plugin arguments.
#[derive(Debug, Clone)]
pub struct Config {
    pub out: PathBuf,
    pub spill_dir: PathBuf,
    /// The spill directory was made by the plugin (removed at exit).
    pub own_spill_dir: bool,
    /// The output already holds a header (written by `lockstep trace`): append to it.
    pub keep_header: bool,
    pub function: Option<String>,
    pub per_iteration: bool,
    pub exclude: Vec<String>,
    pub program_path: Option<String>,
    pub chunk_bytes: usize,
    pub level: i32,
    /// Benchmarking aid: `full` (default), `null` (callbacks registered but empty: QEMU's own cost of
    /// instrumentation), `blocks` (no memory callbacks).
    pub mode: Mode,
}

/// See [`Config::mode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Full,
    Null,
    Blocks,
}

impl Config {
    /// Parses `key=value` plugin arguments.
    pub fn parse(raw: &[String]) -> Result<Config, String> {
        let mut out = None;
        let mut spill = None;
        let mut cfg = Config {
            out: PathBuf::new(),
            spill_dir: PathBuf::new(),
            own_spill_dir: false,
            keep_header: false,
            function: None,
            per_iteration: false,
            exclude: Vec::new(),
            program_path: None,
            chunk_bytes: 256 << 10,
            level: 1,
            mode: Mode::Full,
        };
        let on = |v: &str| matches!(v, "on" | "true" | "yes" | "1");
        for a in raw {
            let (k, v) = a.split_once('=').ok_or_else(|| format!("plugin argument `{a}` is not key=value"))?;
            match k {
                "out" => out = Some(PathBuf::from(v)),
                "spill" => spill = Some(PathBuf::from(v)),
                "header" => cfg.keep_header = v == "keep",
                "function" => cfg.function = Some(v.to_string()),
                "per_iteration" => cfg.per_iteration = on(v),
                "exclude" => cfg.exclude.push(v.to_string()),
                "program" => cfg.program_path = Some(v.to_string()),
                "chunk_kib" => {
                    let n: usize = v.parse().map_err(|_| format!("chunk_kib={v} is not a number"))?;
                    cfg.chunk_bytes = n.clamp(4, 16 << 10) << 10;
                }
                "level" => cfg.level = v.parse().map_err(|_| format!("level={v} is not a number"))?,
                "mode" => {
                    cfg.mode = match v {
                        "full" => Mode::Full,
                        "null" => Mode::Null,
                        "blocks" => Mode::Blocks,
                        _ => return Err(format!("mode={v}: expected full, null or blocks")),
                    }
                }
                _ => return Err(format!("unknown plugin argument `{k}` (known: out, spill, header, function, per_iteration, exclude, program, chunk_kib, level)")),
            }
        }
        cfg.out = out.ok_or("missing plugin argument out=FILE")?;
        match spill {
            Some(d) => cfg.spill_dir = d,
            None => {
                let mut name = cfg.out.file_name().unwrap_or_default().to_os_string();
                name.push(".spill");
                cfg.spill_dir = cfg.out.with_file_name(name);
                cfg.own_spill_dir = true;
            }
        }
        Ok(cfg)
    }
}

/// What the tracer shares between threads about one OS thread.
#[derive(Debug)]
pub struct Slot {
    pub os: u32,
    pub path: PathBuf,
    /// Held while the thread's buffer is written out (by its owner, or by the exit path for a live thread).
    pub lock: Mutex<()>,
    /// The buffer has been written for the last time.
    pub done: AtomicBool,
    pub insns: AtomicU64,
}

impl Slot {
    pub fn new(os: u32, path: PathBuf) -> Slot {
        Slot { os, path, lock: Mutex::new(()), done: AtomicBool::new(false), insns: AtomicU64::new(0) }
    }
}

/// The tracer: configuration and shared state.
#[derive(Debug)]
pub struct Tracer {
    pub cfg: Config,
    statics: Mutex<Statics>,
    file: Mutex<TraceFile>,
    pub slots: Mutex<Vec<Arc<Slot>>>,
    pub next_os: AtomicU32,
    pub next_simt: AtomicU32,
    ranks: Mutex<(u32, HashMap<u32, u32>)>,
    exit_code: AtomicI64,
    pub closed: AtomicBool,
}

static TRACER: OnceLock<Tracer> = OnceLock::new();
static DISABLED: AtomicBool = AtomicBool::new(false);
static NULL_MODE: AtomicBool = AtomicBool::new(false);
/// Size of the meta buffer at which it is written out even without an event chunk.
const META_FLUSH: usize = 1 << 20;

/// Whether tracing is off in this process (a forked child, or a failure).
pub fn disabled() -> bool {
    DISABLED.load(Relaxed)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Tracer {
    fn new(cfg: Config) -> Result<Tracer, String> {
        std::fs::create_dir_all(&cfg.spill_dir).map_err(|e| format!("{}: {e}", cfg.spill_dir.display()))?;
        let file = if cfg.keep_header {
            let f = std::fs::OpenOptions::new().append(true).open(&cfg.out).map_err(|e| format!("{}: {e}", cfg.out.display()))?;
            TraceFile::append(f, cfg.level)
        } else {
            let header = Header {
                tracer: TRACER_NAME.into(),
                program: cfg.program_path.clone().unwrap_or_default(),
                function: cfg.function.clone(),
                per_iteration: cfg.per_iteration,
                exclude: cfg.exclude.clone(),
                created_unix: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
                ..Header::default()
            };
            TraceFile::create(&cfg.out, &header, cfg.level).map_err(|e| format!("{}: {e}", cfg.out.display()))?
        };
        let meta = SpillBuf::create(&cfg.spill_dir, "meta.spill", ChunkKind::Meta, 0, META_FLUSH + out::HEADROOM)
            .map_err(|e| format!("{}: {e}", cfg.spill_dir.display()))?;
        Ok(Tracer {
            cfg,
            statics: Mutex::new(Statics::new(meta)),
            file: Mutex::new(file),
            slots: Mutex::new(Vec::new()),
            next_os: AtomicU32::new(0),
            next_simt: AtomicU32::new(0),
            ranks: Mutex::new((0, HashMap::new())),
            exit_code: AtomicI64::new(i64::MIN),
            closed: AtomicBool::new(false),
        })
    }

    /// Adds a meta record (written before any later event chunk).
    pub fn meta(&self, rec: &MetaRecord) {
        let mut st = lock(&self.statics);
        st.record(rec);
        self.maybe_flush_meta(&mut st);
    }

    fn maybe_flush_meta(&self, st: &mut Statics) {
        if st.buf.len() >= META_FLUSH && !self.closed.load(Relaxed) {
            let mut f = lock(&self.file);
            if let Err(e) = f.write_buf(&mut st.buf) {
                self.fail(&format!("writing {}: {e}", self.cfg.out.display()));
            }
        }
    }

    /// Writes the meta buffer, then `buf` as an event chunk (compressed by the caller's encoder, outside the
    /// locks).
    pub fn write_events(&self, buf: &mut SpillBuf, enc: &mut trace::ChunkEncoder) {
        if buf.is_empty() {
            return;
        }
        buf.publish();
        let chunk = enc.encode(buf.kind, buf.stream, buf.seq, buf.data());
        let mut st = lock(&self.statics);
        let mut f = lock(&self.file);
        if self.closed.load(Relaxed) {
            return;
        }
        if let Err(e) = f.write_buf(&mut st.buf).and_then(|_| f.write_encoded(&chunk, buf)) {
            self.fail(&format!("writing {}: {e}", self.cfg.out.display()));
        }
    }

    fn fail(&self, msg: &str) {
        eprintln!("lockstep tracer: {msg}; tracing stops here");
        DISABLED.store(true, Relaxed);
        self.closed.store(true, Relaxed);
    }

    /// Names (once) a called address that has no symbol.
    pub fn name_call_target(&self, tb: &TbDesc) -> u32 {
        let mut st = lock(&self.statics);
        let sym = st.synth_symbol(tb.addr);
        tb.entry_sym.store(sym, Relaxed);
        self.maybe_flush_meta(&mut st);
        sym
    }

    pub fn has_loop(&self, sym: u32) -> bool {
        lock(&self.statics).has_loop(sym)
    }

    /// Creation rank of the thread running on `vcpu` (assigned when QEMU created that vCPU).
    pub fn take_rank(&self, vcpu: u32) -> u32 {
        let mut r = lock(&self.ranks);
        match r.1.remove(&vcpu) {
            Some(k) => k,
            None => {
                r.0 += 1;
                r.0 - 1
            }
        }
    }

    fn vcpu_created(&self, vcpu: u32) {
        let mut r = lock(&self.ranks);
        let k = r.0;
        r.0 += 1;
        r.1.insert(vcpu, k);
    }

    /// The process exits: write every thread's buffer, then the end record.
    fn finalize(&self) {
        if disabled() || self.closed.load(Relaxed) {
            return;
        }
        end_thread();
        let slots: Vec<Arc<Slot>> = lock(&self.slots).clone();
        let mut total = 0u64;
        for slot in slots {
            let _g = lock(&slot.lock);
            if slot.done.swap(true, Relaxed) {
                total += slot.insns.load(Relaxed);
                continue;
            }
            // A thread still alive: QEMU stopped running plugin callbacks before calling us, so its buffer is
            // no longer written; read it through its file.
            let Ok(data) = std::fs::read(&slot.path) else { continue };
            let Some(h) = SpillHeader::parse(&data) else { continue };
            total += h.insns;
            let Some(body) = data.get(SPILL_HEADER_LEN..SPILL_HEADER_LEN + h.len as usize) else { continue };
            if body.is_empty() {
                continue;
            }
            let mut st = lock(&self.statics);
            let mut f = lock(&self.file);
            let r = f.write_buf(&mut st.buf).and_then(|_| f.write_raw(ChunkKind::Events, h.stream, h.seq, body));
            if let Err(e) = r {
                self.fail(&format!("writing {}: {e}", self.cfg.out.display()));
                return;
            }
        }
        let mut st = lock(&self.statics);
        if let Some(f) = &self.cfg.function {
            if !st.function_found {
                st.record(&MetaRecord::Note(format!("--function {f}: no function of that name was found")));
                eprintln!("lockstep tracer: warning: no function named `{f}` was found in the program or its libraries");
            }
        }
        let mut f = lock(&self.file);
        let code = self.exit_code.load(Relaxed);
        let end = EndRecord {
            reason: "exit".into(),
            exit_code: (code != i64::MIN).then_some(code),
            recovered: false,
            insns: total,
        };
        let r = f.write_buf(&mut st.buf).and_then(|_| f.write_end(&end));
        if let Err(e) = r {
            self.fail(&format!("writing {}: {e}", self.cfg.out.display()));
            return;
        }
        st.buf.finish(0);
        self.closed.store(true, Relaxed);
        if self.cfg.own_spill_dir {
            let _ = std::fs::remove_dir_all(&self.cfg.spill_dir);
        }
    }
}

/// QEMU 7.2 packs a memory access as `MemOpIdx | rw << 16` (MemOp in bits 4.., size in its low 2 bits).
/// [`check_meminfo_layout`] verifies that against the API's accessors at start; if it does not hold, the
/// accessors are called instead.
static INLINE_MEMINFO: AtomicBool = AtomicBool::new(false);

fn check_meminfo_layout() -> bool {
    (0u32..4).all(|size| {
        [1u32, 2].iter().all(|&rw| {
            let info = (size << 4) | (rw << 16);
            // SAFETY: FFI accessors of QEMU's plugin API: pure functions of an integer.
            let (s, w) = unsafe {
                (qemu_plugin_mem_size_shift(info as qemu_plugin_meminfo_t), qemu_plugin_mem_is_store(info as qemu_plugin_meminfo_t))
            };
            s == size && w == (rw == 2)
        })
    })
}

/// Whether a memory access is a store.
#[inline]
pub fn mem_is_store(info: u32) -> bool {
    if INLINE_MEMINFO.load(Relaxed) {
        return (info >> 16) & 2 != 0;
    }
    // SAFETY: FFI accessor of QEMU's plugin API; pure function of the value QEMU passed to the callback.
    unsafe { qemu_plugin_mem_is_store(info as qemu_plugin_meminfo_t) }
}

/// log2 of a memory access's size in bytes.
#[inline]
pub fn mem_size_shift(info: u32) -> u8 {
    if INLINE_MEMINFO.load(Relaxed) {
        return ((info >> 4) & 3) as u8;
    }
    // SAFETY: as above.
    (unsafe { qemu_plugin_mem_size_shift(info as qemu_plugin_meminfo_t) }) as u8
}

/// Packs what a memory callback needs into its user-data pointer.
fn pack_mem(first_insn: u32, idx: u16, atomic: bool) -> usize {
    (first_insn as usize) | ((idx as usize) << 32) | ((atomic as usize) << 48)
}

extern "C" fn on_tb_exec(vcpu: c_uint, udata: *mut c_void) {
    if disabled() {
        return;
    }
    if NULL_MODE.load(Relaxed) {
        return;
    }
    // SAFETY: `udata` is the address of a `TbDesc` leaked at translation (never freed, never moved).
    let tb: &'static TbDesc = unsafe { &*(udata as *const TbDesc) };
    let Some(t) = TRACER.get() else { return };
    if let Err(e) = with_state_or_new(t, vcpu, |st| st.on_tb(tb)) {
        t.fail(&e);
    }
}

extern "C" fn on_mem(_vcpu: c_uint, info: qemu_plugin_meminfo_t, vaddr: u64, udata: *mut c_void) {
    if NULL_MODE.load(Relaxed) {
        return;
    }
    let p = udata as usize;
    let (first, idx, atomic) = (p as u32, (p >> 32) as u16, (p >> 48) & 1 != 0);
    with_state(|st| st.on_mem(first, idx, atomic, info as u32, vaddr));
}

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
    let atomics = atomic_flags(&bytes);
    // SAFETY: registering callbacks on the handles QEMU gave us, during the translation callback as the API
    // requires; the user data are a leaked `TbDesc` and plain integers.
    unsafe {
        qemu_plugin_register_vcpu_tb_exec_cb(
            tb,
            Some(on_tb_exec),
            qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
            desc as *const TbDesc as *mut c_void,
        );
        for (i, (insn, _)) in insns.iter().enumerate() {
            if t.cfg.mode == Mode::Blocks {
                break;
            }
            let udata = pack_mem(desc.first_insn, i as u16, atomics[i]);
            qemu_plugin_register_vcpu_mem_cb(
                *insn,
                Some(on_mem),
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                qemu_plugin_mem_rw::QEMU_PLUGIN_MEM_RW,
                udata as *mut c_void,
            );
        }
    }
}

/// Which instructions are atomic read-modify-writes (`lock` prefix, or `xchg` with memory).
fn atomic_flags(insns: &[&[u8]]) -> Vec<bool> {
    insns
        .iter()
        .map(|b| {
            let mut d = iced_x86::Decoder::new(64, b, iced_x86::DecoderOptions::NONE);
            let i = d.decode();
            i.has_lock_prefix()
                || (i.mnemonic() == iced_x86::Mnemonic::Xchg
                    && (0..i.op_count()).any(|k| i.op_kind(k) == iced_x86::OpKind::Memory))
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
    _vcpu: c_uint,
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
    with_state(|st| st.on_syscall(num));
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
        NULL_MODE.store(tracer.cfg.mode == Mode::Null, Relaxed);
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
