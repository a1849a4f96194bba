//! What ran: per kernel, its launches, their time and (on the emulator) their statistics summed, the kernel
//! faults and the unsupported functions called. `lockstep exec` asks for it through `LOCKSTEP_REPORT` and
//! prints a summary; `--report FILE` keeps the JSON.

use std::io::Write;
use std::time::Duration;

use device::KernelStats;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::Cuda;

/// The report written at exit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The program's path.
    pub program: String,
    /// The device the program saw (`cudaGetDeviceProperties`' name: engine, CPU, worker threads).
    pub device: String,
    pub backend: String,
    pub check: bool,
    /// Kernels in order of their first launch.
    pub kernels: Vec<KernelReport>,
    /// Kernel faults, as lockstep located them.
    pub faults: Vec<String>,
    /// CUDA functions the program called that lockstep does not implement.
    pub unsupported: Vec<String>,
    /// Seconds from the runtime's start (the program's first CUDA call, usually its registration before
    /// `main`) to the end of its first kernel launch: what a user waits before any kernel has run.
    #[serde(default)]
    pub first_launch_seconds: Option<f64>,
    /// Seconds spent reading, parsing and loading device code (PTX) from the program's fatbinaries.
    #[serde(default)]
    pub load_seconds: f64,
}

/// One kernel's launches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelReport {
    /// The PTX (mangled) name.
    pub name: String,
    /// The C++ name, where the PTX name is a mangled one.
    pub demangled: Option<String>,
    pub launches: u64,
    /// Wall-clock time of the launches on the engine, summed.
    pub seconds: f64,
    /// Preparing the kernel at its first launch: the JIT's compilation (or its disk cache's load), the
    /// emulator's decoding.
    #[serde(default)]
    pub compile_seconds: f64,
    /// With the emulator: `lockstep run --json`'s `stats`, summed over the launches.
    pub stats: Option<KernelStats>,
}

#[derive(Debug, Default)]
pub(crate) struct Recorder {
    kernels: Vec<KernelReport>,
    faults: Vec<String>,
    unsupported: Vec<String>,
    first_launch: Option<Duration>,
    load: Duration,
}

impl Recorder {
    /// A launch ended `since_start` after the runtime started; `prepare` is the time before the kernel ran
    /// (compilation at a first launch).
    pub(crate) fn timed(&mut self, name: &str, since_start: Duration, prepare: Duration) {
        self.first_launch.get_or_insert(since_start);
        if let Some(k) = self.kernels.iter_mut().find(|k| k.name == name) {
            if k.launches == 1 {
                k.compile_seconds = prepare.as_secs_f64();
            }
        }
    }

    /// Device code was loaded (read, decompressed, parsed, linked, placed).
    pub(crate) fn loaded(&mut self, took: Duration) {
        self.load += took;
    }

    pub(crate) fn launched(&mut self, name: &str, elapsed: Duration, stats: Option<&KernelStats>) {
        let k = match self.kernels.iter().position(|k| k.name == name) {
            Some(i) => &mut self.kernels[i],
            None => {
                self.kernels.push(KernelReport {
                    name: name.to_string(),
                    demangled: demangle(name),
                    ..Default::default()
                });
                self.kernels.last_mut().expect("just pushed")
            }
        };
        k.launches += 1;
        k.seconds += elapsed.as_secs_f64();
        if let Some(s) = stats {
            match &mut k.stats {
                Some(sum) => sum.add(s),
                None => k.stats = Some(s.clone()),
            }
        }
    }

    pub(crate) fn faulted(&mut self, name: &str, message: &str) {
        if self.faults.len() < 100 {
            self.faults.push(message.to_string());
        }
        self.launched(name, Duration::ZERO, None);
    }

    pub(crate) fn unsupported(&mut self, function: &str) {
        if !self.unsupported.iter().any(|f| f == function) {
            self.unsupported.push(function.to_string());
        }
    }

    pub(crate) fn report(&self, config: &Config, device: &str) -> Report {
        Report {
            program: crate::image::program_path(),
            device: device.to_string(),
            backend: config.backend.name().to_string(),
            check: config.check,
            kernels: self.kernels.clone(),
            faults: self.faults.clone(),
            unsupported: self.unsupported.clone(),
            first_launch_seconds: self.first_launch.map(|d| d.as_secs_f64()),
            load_seconds: self.load.as_secs_f64(),
        }
    }
}

/// The C++ name of a mangled kernel name.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    symbol.demangle(&cpp_demangle::DemangleOptions::default()).ok()
}

/// Registers the exit handler: device `printf` output still buffered is printed, and the report written
/// where `LOCKSTEP_REPORT` says.
pub(crate) fn at_exit() {
    extern "C" fn on_exit() {
        let cuda = Cuda::get();
        cuda.flush_printf();
        if let Some(path) = &cuda.config.report {
            // `%p` in the name is the process id: a script running several CUDA programs gets a report each.
            let path = std::path::PathBuf::from(path.to_string_lossy().replace("%p", &std::process::id().to_string()));
            let report = cuda.report();
            if let Err(e) = write_report(&path, &report) {
                eprintln!("lockstep: error: cannot write the report to {}: {e}", path.display());
            }
        }
    }
    // SAFETY: registering a plain function with no preconditions.
    unsafe { libc::atexit(on_exit) };
}

/// Writes the report as JSON, atomically (a temporary file renamed into place).
pub fn write_report(path: &std::path::Path, report: &Report) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer_pretty(&mut tmp, report)?;
    tmp.write_all(b"\n")?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_of_a_kernel_are_summed() {
        let mut r = Recorder::default();
        let mut s = KernelStats {
            kernel: "k".into(),
            warp_size: 32,
            thread_instructions: 64,
            warp_instructions: 4,
            ..Default::default()
        };
        s.finish();
        r.launched("_Z3addiPKfPf", Duration::from_millis(2), Some(&s));
        r.launched("_Z3addiPKfPf", Duration::from_millis(3), Some(&s));
        r.launched("plain", Duration::from_millis(1), None);
        let report = r.report(&Config::default(), "test");
        assert_eq!(report.kernels.len(), 2);
        let k = &report.kernels[0];
        assert_eq!(k.launches, 2);
        assert!((k.seconds - 0.005).abs() < 1e-9);
        assert_eq!(k.demangled.as_deref(), Some("add(int, float const*, float*)"));
        let stats = k.stats.as_ref().unwrap();
        assert_eq!(stats.thread_instructions, 128);
        assert_eq!(stats.warp_instructions, 8);
        assert!((stats.simt_efficiency - 0.5).abs() < 1e-12);
        assert_eq!(report.kernels[1].demangled, None);
        assert_eq!(report.kernels[1].stats, None);
    }
}
