//! Writing results: atomically to files, or to standard output.

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` atomically (a temporary file in the same folder, then a rename), so an
/// interrupted run never leaves a half-written file in place of a good one. `None` writes to stdout.
pub fn write_output(path: Option<&Path>, contents: &str) -> anyhow::Result<()> {
    let Some(path) = path else {
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`| head`) is not an error worth reporting.
        let _ = stdout.write_all(contents.as_bytes()).and_then(|_| stdout.flush());
        return Ok(());
    };
    runtime::write_atomic(path, contents.as_bytes())?;
    Ok(())
}
