//! The paired corpus's manifest (`corpus/pairs/pairs.toml`): one `[[pair]]` per algorithm written both ways.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One algorithm as a CUDA program (`bin/NAME`, committed) and a CPU program (`src/CPU`, compiled here).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    pub name: String,
    /// The CPU side's source under `src/` (`.c` with gcc, `.cpp` with g++).
    pub cpu: String,
    /// Compiler flags besides the optimization level.
    #[serde(default)]
    pub cflags: Vec<String>,
    /// The traced function (`lockstep trace --function`).
    pub function: String,
    /// One SIMT thread per iteration of the function's loop (OpenMP), rather than per call (pthreads).
    #[serde(default)]
    pub per_iteration: bool,
    /// Arguments of both programs.
    #[serde(default)]
    pub args: Vec<String>,
    /// CUDA kernels that count (names or substrings of their mangled or demangled names); empty: all.
    #[serde(default)]
    pub kernels: Vec<String>,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub what: String,
    /// Environment of the CPU side; `OMP_NUM_THREADS` is 1 unless set here (SIMT threads are iterations or
    /// calls, whichever OS thread runs them).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Why the pair is left out of the summary statistics (it is still run and shown).
    #[serde(default)]
    pub exclude: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Manifest {
    /// The folder holding the manifest, `bin/` and `src/`.
    pub dir: PathBuf,
    pub pairs: Vec<Pair>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    pair: Vec<Pair>,
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file: File = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut seen = std::collections::HashSet::new();
        for p in &file.pair {
            if !seen.insert(&p.name) {
                return Err(format!("{}: pair `{}` is listed twice", path.display(), p.name));
            }
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Manifest { dir, pairs: file.pair })
    }

    pub fn cuda_binary(&self, p: &Pair) -> PathBuf {
        self.dir.join("bin").join(&p.name)
    }

    pub fn cpu_source(&self, p: &Pair) -> PathBuf {
        self.dir.join("src").join(&p.cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pairs.toml");
        std::fs::write(
            &f,
            "[[pair]]\nname = \"vecadd\"\ncpu = \"vecadd.c\"\nfunction = \"f._omp_fn.0\"\nper_iteration = true\n\
             args = [\"64\"]\n",
        )
        .unwrap();
        let m = Manifest::load(&f).unwrap();
        assert_eq!(m.pairs.len(), 1);
        assert!(m.pairs[0].per_iteration && m.pairs[0].kernels.is_empty());
        assert_eq!(m.cuda_binary(&m.pairs[0]), dir.path().join("bin/vecadd"));
        std::fs::write(&f, "[[pair]]\nname = \"a\"\ncpu = \"a.c\"\nfunction = \"f\"\ntypo = 1\n").unwrap();
        assert!(Manifest::load(&f).unwrap_err().contains("typo"));
    }
}
