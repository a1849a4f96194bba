//! Settings read from the environment when the library starts: `lockstep exec` sets them, and a user who
//! loads the library by hand (`LD_LIBRARY_PATH`) may set them too.
//!
//! | variable | meaning |
//! | --- | --- |
//! | `LOCKSTEP_BACKEND` | `jit` (default) or `emu` (the SIMT emulator: reference semantics and statistics) |
//! | `LOCKSTEP_CHECK` | `1`: the JIT checks every memory access against the allocations, as the emulator does |
//! | `LOCKSTEP_THREADS` | JIT worker threads (default: one per core); also the multiprocessor count reported |
//! | `LOCKSTEP_REPORT` | a file to write the JSON report of kernels and launches to at exit (`%p`: the process id) |
//! | `LOCKSTEP_JIT_CACHE` | the JIT's disk cache folder; `off` disables it (default: `~/.cache/lockstep/jit`) |
//! | `LOCKSTEP_QUIET` | `1`: no warnings on stderr (unsupported functions, kernel faults) |

use std::path::PathBuf;

/// Which engine runs kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Jit,
    Emu,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Jit => "jit",
            Backend::Emu => "emu",
        }
    }
}

/// The library's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub backend: Backend,
    /// Bounds-check every access on the JIT too.
    pub check: bool,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    pub report: Option<PathBuf>,
    pub jit_cache: Option<PathBuf>,
    pub quiet: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            backend: Backend::Jit,
            check: false,
            threads: 0,
            report: None,
            jit_cache: jit::default_cache_dir(),
            quiet: false,
        }
    }
}

/// Why a variable's value was not understood (the library then keeps the default and says so).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning(pub String);

impl Config {
    /// The settings from the process environment.
    pub fn from_env() -> (Config, Vec<ConfigWarning>) {
        Config::from_vars(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// The settings from a variable lookup (the environment, or a test's map).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> (Config, Vec<ConfigWarning>) {
        let mut config = Config::default();
        let mut warnings = Vec::new();
        let flag = |v: &str| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on");
        if let Some(b) = var("LOCKSTEP_BACKEND") {
            match b.trim() {
                "jit" | "" => config.backend = Backend::Jit,
                "emu" => config.backend = Backend::Emu,
                other => warnings.push(ConfigWarning(format!(
                    "LOCKSTEP_BACKEND=`{other}` is neither `jit` nor `emu`; using the JIT"
                ))),
            }
        }
        if let Some(v) = var("LOCKSTEP_CHECK") {
            config.check = flag(&v);
        }
        if let Some(v) = var("LOCKSTEP_THREADS") {
            match v.trim().parse::<usize>() {
                Ok(n) if n <= 4096 => config.threads = n,
                _ => warnings
                    .push(ConfigWarning(format!("LOCKSTEP_THREADS=`{v}` is not a thread count; using one per core"))),
            }
        }
        if let Some(v) = var("LOCKSTEP_REPORT").filter(|v| !v.is_empty()) {
            config.report = Some(PathBuf::from(v));
        }
        if let Some(v) = var("LOCKSTEP_JIT_CACHE") {
            config.jit_cache = match v.as_str() {
                "off" | "0" | "" => None,
                dir => Some(PathBuf::from(dir)),
            };
        }
        if let Some(v) = var("LOCKSTEP_QUIET") {
            config.quiet = flag(&v);
        }
        (config, warnings)
    }

    /// Worker threads the JIT will run (the device's multiprocessor count).
    pub fn worker_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> (Config, Vec<ConfigWarning>) {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn variables_set_the_config_and_bad_values_warn() {
        let (c, w) = from(&[
            ("LOCKSTEP_BACKEND", "emu"),
            ("LOCKSTEP_CHECK", "1"),
            ("LOCKSTEP_THREADS", "3"),
            ("LOCKSTEP_REPORT", "/tmp/r.json"),
            ("LOCKSTEP_JIT_CACHE", "off"),
        ]);
        assert!(w.is_empty());
        assert_eq!(c.backend, Backend::Emu);
        assert!(c.check);
        assert_eq!(c.threads, 3);
        assert_eq!(c.worker_threads(), 3);
        assert_eq!(c.report, Some(PathBuf::from("/tmp/r.json")));
        assert_eq!(c.jit_cache, None);
        let (c, w) = from(&[("LOCKSTEP_BACKEND", "gpu"), ("LOCKSTEP_THREADS", "many")]);
        assert_eq!(c.backend, Backend::Jit);
        assert_eq!(c.threads, 0);
        assert_eq!(w.len(), 2, "{w:?}");
    }
}
