//! What the end-to-end CUDA tests share.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Builds lockstep's CUDA libraries (`cudart`, which holds the driver API too, and `nvjitlink`) next to the
/// lockstep binary under test (cargo does not build a cdylib for a test of another package), once per test
/// process; panics with cargo's message when that fails.
pub fn cuda_libraries_built() {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let r = BUILT.get_or_init(|| {
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_lockstep"));
        let profile_dir = exe.parent().ok_or("no target dir")?;
        let target_dir = profile_dir.parent().ok_or("no target dir")?;
        let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cmd.args(["build", "-q", "-p", "cudart", "-p", "nvjitlink", "--lib", "--target-dir"]).arg(target_dir);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let out = cmd.current_dir(env!("CARGO_MANIFEST_DIR")).output().map_err(|e| format!("cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "building lockstep's CUDA libraries failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}
