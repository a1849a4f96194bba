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
//! * `encode`: the hot events (`Block`, `Mem`) encoded with what translation time could precompute.
//! * `out`: spill buffers (shared file mappings) and the trace file.
//! * `modules`, `loops`: `/proc/self/maps`, ELF symbol tables, demangling; a function's outermost loop.
//!
//! Cost model (QEMU 7.2, API v1): every callback is a helper call out of the translated code, and the
//! callbacks are most of the tracer's cost besides compression. So they find their thread's state by vCPU
//! index (no thread-local lookup), and what can be computed at translation is (`encode`): a block's whole
//! event, a memory event's head but for the access's direction and size.

// Unit tests do not link QEMU's symbols, so the QEMU side is left out of them (and what only it uses is then
// unused).
#![cfg_attr(test, allow(dead_code))]

pub mod encode;
#[cfg(not(test))]
mod ffi;
pub mod loops;
pub mod modules;
pub mod out;
pub mod state;
pub mod statics;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use trace::spill::{SpillHeader, SPILL_HEADER_LEN};
use trace::{ChunkKind, EndRecord, Header, MetaRecord};

use crate::out::{SpillBuf, TraceFile};
use crate::state::end_thread;
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
    /// zstd level of the chunks (1 by default); 0 stores them uncompressed (less CPU, about 20x the bytes:
    /// a win only where writing is cheaper than compressing).
    pub level: i32,
    /// Benchmarking aid: `full` (default), `null` (the same callbacks registered, but empty: QEMU's own cost
    /// of the instrumentation), `blocks` (no memory callbacks).
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
                _ => return Err(format!("unknown plugin argument `{k}` (known: out, spill, header, function, per_iteration, exclude, program, chunk_kib, level, mode)")),
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
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(&cfg.out)
                .map_err(|e| format!("{}: {e}", cfg.out.display()))?;
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

    /// Allocates the next SIMT id and records `make(id)` under one lock, so that `SimtStart` records appear in
    /// id order (the reader requires it) even when threads start segments concurrently.
    pub fn start_simt(&self, make: impl FnOnce(u32) -> MetaRecord) -> u32 {
        let mut st = lock(&self.statics);
        let simt = self.next_simt.fetch_add(1, Relaxed);
        st.record(&make(simt));
        self.maybe_flush_meta(&mut st);
        simt
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
                eprintln!(
                    "lockstep tracer: warning: no function named `{f}` was found in the program or its libraries"
                );
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
