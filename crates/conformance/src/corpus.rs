//! The PTX files of the fixture corpus: which exist for a CUDA source, what variant each one is, and a cache of
//! compiled modules (each file is parsed, lowered and verified once per test process).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The corpus root (`corpus/` of the repository).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
}

/// How a PTX file was produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flavor {
    /// `-O3`
    O3,
    /// `-O3 -lineinfo`
    Lineinfo,
    /// `-G` (device debug: no optimisation, no floating-point contraction)
    G,
    /// `-O3 -use_fast_math`
    Fastmath,
    /// `-O3 -rdc=true`
    Rdc,
    /// clang 14's NVPTX backend at `-O3`
    Clang,
}

impl Flavor {
    pub fn name(self) -> &'static str {
        match self {
            Flavor::O3 => "O3",
            Flavor::Lineinfo => "lineinfo",
            Flavor::G => "G",
            Flavor::Fastmath => "fastmath",
            Flavor::Rdc => "rdc",
            Flavor::Clang => "clang",
        }
    }

    fn parse(s: &str) -> Option<Flavor> {
        Some(match s {
            "O3" => Flavor::O3,
            "lineinfo" => Flavor::Lineinfo,
            "G" => Flavor::G,
            "fastmath" => Flavor::Fastmath,
            "rdc" => Flavor::Rdc,
            _ => return None,
        })
    }
}

/// One PTX file of a CUDA source.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variant {
    /// The CUDA source's base name (`workloads`).
    pub source: String,
    /// The target architecture as a number: 50 for `sm_50`.
    pub arch: u32,
    pub flavor: Flavor,
    pub path: PathBuf,
}

impl Variant {
    /// Whether the compiler fuses `a * b + c` into `fma.rn` (every optimised build; `-G` does not).
    pub fn contracts(&self) -> bool {
        self.flavor != Flavor::G
    }

    /// `a * b + c` the way this variant computes it: one `fma.rn.f32` where the compiler contracts, else a
    /// rounded product then a rounded sum.
    pub fn mad(&self, a: f32, b: f32, c: f32) -> f32 {
        if self.contracts() {
            a.mul_add(b, c)
        } else {
            a * b + c
        }
    }

    /// `-use_fast_math`: single-precision division, square root and libm calls become approximations and
    /// subnormals are flushed.
    pub fn fast_math(&self) -> bool {
        self.flavor == Flavor::Fastmath
    }

    /// The file relative to `corpus/ptx`, for messages.
    pub fn rel(&self) -> String {
        let root = corpus_dir().join("ptx");
        self.path.strip_prefix(&root).unwrap_or(&self.path).display().to_string()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.sm_{}.{}", self.source, self.arch, self.flavor.name())
    }
}

fn arch_of(s: &str) -> Option<u32> {
    s.strip_prefix("sm_")?.parse().ok()
}

/// Every PTX file of `source`: all architectures and variants under `corpus/ptx/<source>/` plus the clang
/// build under `corpus/ptx/clang/<source>.<arch>.ptx` where there is one, sorted by flavor then arch.
pub fn variants(source: &str) -> Vec<Variant> {
    let mut out = Vec::new();
    let dir = corpus_dir().join("ptx").join(source);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let path = e.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            // <source>.<arch>.<variant>.ptx
            let parts: Vec<&str> = name.split('.').collect();
            if parts.len() != 4 || parts[0] != source || parts[3] != "ptx" {
                continue;
            }
            let (Some(arch), Some(flavor)) = (arch_of(parts[1]), Flavor::parse(parts[2])) else { continue };
            out.push(Variant { source: source.to_string(), arch, flavor, path });
        }
    }
    let clang = corpus_dir().join("ptx").join("clang");
    if let Ok(entries) = std::fs::read_dir(&clang) {
        for e in entries.flatten() {
            let path = e.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            let parts: Vec<&str> = name.split('.').collect();
            if parts.len() != 3 || parts[0] != source || parts[2] != "ptx" {
                continue;
            }
            let Some(arch) = arch_of(parts[1]) else { continue };
            out.push(Variant { source: source.to_string(), arch, flavor: Flavor::Clang, path });
        }
    }
    out.sort_by_key(|v| (v.flavor, v.arch));
    out
}

/// Calls `f` for every PTX file of `source` (see [`variants`]).
pub fn for_each_variant(source: &str, mut f: impl FnMut(&Variant)) {
    for v in variants(source) {
        f(&v);
    }
}

/// A compiled PTX file: the verified IR, or the front end's diagnostics rendered as text.
pub type Compiled = Result<Arc<ir::Module>, String>;

/// Parses, lowers and verifies a PTX file once per process.
pub fn compile(path: &Path) -> Compiled {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Compiled>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(hit) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(path) {
        return hit.clone();
    }
    let result = match std::fs::read_to_string(path) {
        Err(e) => Err(format!("{}: {e}", path.display())),
        Ok(text) => ir::compile(&text).map(Arc::new).map_err(|diags| {
            let name = path.display().to_string();
            diags.iter().map(|d| d.render(&name, &text)).collect::<Vec<_>>().join("\n")
        }),
    };
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(path.to_path_buf(), result.clone());
    result
}

/// The number of instructions of a function's body (`None` when it has no body).
pub fn instruction_count(module: &ir::Module, kernel: &str) -> Option<usize> {
    let f = module.function(kernel)?;
    module.functions[f].body.as_ref().map(|b| b.insts.len())
}
