//! Output specs (`--out INDEX=PATH`): after a launch, the bytes of buffer argument INDEX (counting every
//! argument from 0) are written atomically to PATH.

use std::fmt;
use std::path::PathBuf;

use crate::args::PreparedArgs;
use crate::atomic::write_atomic;
use crate::Runtime;

/// One `INDEX=PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSpec {
    /// The argument, counting every argument (scalars too) from 0.
    pub index: usize,
    pub path: PathBuf,
}

impl OutputSpec {
    pub fn parse(spec: &str) -> Result<OutputSpec, String> {
        let Some((index, path)) = spec.split_once('=') else {
            return Err(format!("`{spec}`: expected INDEX=PATH, e.g. 3=y.bin"));
        };
        let index = index
            .trim()
            .parse()
            .map_err(|_| format!("`{spec}`: `{index}` is not an argument index (0 is the first argument)"))?;
        if path.is_empty() {
            return Err(format!("`{spec}`: missing the file path after `=`"));
        }
        Ok(OutputSpec { index, path: PathBuf::from(path) })
    }

    /// Checks, before the launch, that the spec names a buffer argument.
    pub fn check(&self, args: &PreparedArgs) -> Result<(), String> {
        args.buffer(self.index).map(|_| ()).map_err(|m| format!("--out {}={}: {m}", self.index, self.path.display()))
    }
}

/// An output file written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenOutput {
    pub index: usize,
    pub path: PathBuf,
    pub bytes: u64,
}

/// Reading a buffer back or writing its file failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputError {
    pub index: usize,
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--out {}={}: {}", self.index, self.path.display(), self.message)
    }
}

impl std::error::Error for OutputError {}

/// Reads back each output's buffer and writes it atomically to its path, in order.
pub fn write_outputs(
    runtime: &Runtime,
    args: &PreparedArgs,
    outputs: &[OutputSpec],
) -> Result<Vec<WrittenOutput>, OutputError> {
    let mut written = Vec::with_capacity(outputs.len());
    for out in outputs {
        let fail = |message: String| OutputError { index: out.index, path: out.path.clone(), message };
        let buffer = args.buffer(out.index).map_err(fail)?;
        let bytes = runtime.read(buffer.ptr, buffer.bytes()).map_err(|e| fail(e.to_string()))?;
        write_atomic(&out.path, &bytes).map_err(|e| fail(e.to_string()))?;
        written.push(WrittenOutput { index: out.index, path: out.path.clone(), bytes: bytes.len() as u64 });
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_index_and_path() {
        assert_eq!(OutputSpec::parse("3=y.bin").unwrap(), OutputSpec { index: 3, path: "y.bin".into() });
        assert_eq!(OutputSpec::parse("0=a=b").unwrap(), OutputSpec { index: 0, path: "a=b".into() });
        assert!(OutputSpec::parse("y.bin").unwrap_err().contains("expected INDEX=PATH"));
        assert!(OutputSpec::parse("x=y.bin").unwrap_err().contains("`x` is not an argument index"));
        assert!(OutputSpec::parse("-1=y.bin").unwrap_err().contains("is not an argument index"));
        assert!(OutputSpec::parse("2=").unwrap_err().contains("missing the file path"));
    }
}
