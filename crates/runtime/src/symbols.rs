//! Symbol specs (`--symbol NAME=@PATH`): fill a module-scope `.global`/`.const` variable (CUDA
//! `__device__`/`__constant__` data) from a file before a launch.

use std::path::PathBuf;

use crate::{ModuleId, Runtime};

/// One `NAME=@PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolSpec {
    pub name: String,
    pub path: PathBuf,
}

impl SymbolSpec {
    pub fn parse(spec: &str) -> Result<SymbolSpec, String> {
        let Some((name, value)) = spec.split_once('=') else {
            return Err(format!("`{spec}`: expected NAME=@PATH, e.g. coeffs=@coeffs.bin"));
        };
        let Some(path) = value.strip_prefix('@') else {
            return Err(format!("`{spec}`: the value must be a file, written @PATH"));
        };
        if name.is_empty() || path.is_empty() {
            return Err(format!("`{spec}`: expected NAME=@PATH, e.g. coeffs=@coeffs.bin"));
        }
        Ok(SymbolSpec { name: name.to_string(), path: PathBuf::from(path) })
    }

    /// Reads the file and writes it to the variable ([`Runtime::write_symbol`]: the file may be shorter
    /// than the variable, filling a prefix, but not longer). Returns the bytes written.
    pub fn apply(&self, runtime: &mut Runtime, module: ModuleId) -> Result<u64, String> {
        let fail = |m: String| format!("--symbol {}=@{}: {m}", self.name, self.path.display());
        // Look the symbol up first, so a wrong name is reported before a missing file.
        runtime.symbol(module, &self.name).map_err(|e| fail(e.to_string()))?;
        let data = std::fs::read(&self.path).map_err(|e| fail(format!("cannot read {}: {e}", self.path.display())))?;
        runtime.write_symbol(module, &self.name, &data).map_err(|e| fail(e.to_string()))?;
        Ok(data.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_name_and_file() {
        assert_eq!(SymbolSpec::parse("c=@c.bin").unwrap(), SymbolSpec { name: "c".into(), path: "c.bin".into() });
        assert!(SymbolSpec::parse("c").unwrap_err().contains("expected NAME=@PATH"));
        assert!(SymbolSpec::parse("c=c.bin").unwrap_err().contains("written @PATH"));
        assert!(SymbolSpec::parse("=@c.bin").unwrap_err().contains("expected NAME=@PATH"));
        assert!(SymbolSpec::parse("c=@").unwrap_err().contains("expected NAME=@PATH"));
    }
}
