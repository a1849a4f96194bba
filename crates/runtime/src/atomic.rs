//! Atomic file writes: a temporary file in the destination's folder, then a rename, so an interrupted run
//! never leaves a half-written file in place of a good one.

use std::io::{self, Write};
use std::path::Path;

/// Writes `contents` to `path` atomically. The error names the path.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let named = |e: io::Error, what: &str| io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot create a temporary file in {}: {e}", dir.display())))?;
    tmp.write_all(contents).and_then(|()| tmp.flush()).map_err(|e| named(e, "write"))?;
    tmp.persist(path).map_err(|e| named(e.error, "write"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn error_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing-dir").join("out.bin");
        let e = write_atomic(&path, b"x").unwrap_err();
        assert!(e.to_string().contains("missing-dir"), "{e}");
    }
}
