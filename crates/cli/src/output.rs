//! Writing results: atomically to files, or to standard output.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Writes `contents` to `path` atomically (a temporary file in the same folder, then a rename), so an
/// interrupted run never leaves a half-written file in place of a good one. `None` writes to stdout.
pub fn write_output(path: Option<&Path>, contents: &str) -> anyhow::Result<()> {
    let Some(path) = path else {
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`| head`) is not an error worth reporting.
        let _ = stdout.write_all(contents.as_bytes()).and_then(|_| stdout.flush());
        return Ok(());
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(contents.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
