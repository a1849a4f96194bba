//! The on-disk cache of compiled kernels. Generated code holds no absolute address (everything goes through
//! the context's tables) and no relocation, so the machine code of a kernel can be stored as bytes and mapped
//! again in another process. The key covers everything the bytes depend on: the PTX text, the kernel, the
//! options that change code, this crate's and Cranelift's versions, a hash of the sources of this crate and of
//! those whose output it translates (`build.rs`) and the target CPU's features.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const MAGIC: &[u8; 8] = b"LSJIT03\0";

/// Where compiled kernels are cached by default: `$XDG_CACHE_HOME/lockstep/jit` or `~/.cache/lockstep/jit`.
pub fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("lockstep").join("jit"))
}

/// FNV-1a, 64 bits: stable across Rust versions, unlike `DefaultHasher`.
fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain(&[0xFFu8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Two independent 64-bit digests of a module's PTX text, computed once per text (a Thrust program's
/// kernels share one half-megabyte module: hashing it at every kernel's compilation cost a third of the
/// time to its first launches). Eight bytes at a time, and stable across Rust versions.
pub fn source_digest(source: &Arc<str>) -> [u64; 2] {
    static MEMO: Mutex<Vec<(Arc<str>, [u64; 2])>> = Mutex::new(Vec::new());
    let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, d)) = memo.iter().find(|(s, _)| Arc::ptr_eq(s, source)) {
        return *d;
    }
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    let bytes = source.as_bytes();
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("eight bytes"));
        a = (a ^ w).wrapping_mul(0x0100_0000_01b3);
        b = (b ^ w.rotate_left(29)).wrapping_mul(0x0000_0100_0000_01b3 | 1 << 63);
    }
    for &x in chunks.remainder().iter().chain(&(bytes.len() as u64).to_le_bytes()) {
        a = (a ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
        b = (b ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3 | 1 << 63);
    }
    if memo.len() >= 16 {
        memo.remove(0);
    }
    memo.push((source.clone(), [a, b]));
    [a, b]
}

pub fn key(source: &Arc<str>, kernel: &str, check: bool, vectorize: bool, isa: &str) -> String {
    let version = concat!(env!("CARGO_PKG_VERSION"), "/cranelift-0.135/", env!("JIT_SOURCE_HASH"));
    let mode = [u8::from(check) | u8::from(vectorize) << 1];
    let [da, db] = source_digest(source);
    let a = fnv(&[&da.to_le_bytes(), kernel.as_bytes(), &mode, version.as_bytes(), isa.as_bytes()]);
    let b = fnv(&[isa.as_bytes(), version.as_bytes(), kernel.as_bytes(), &db.to_le_bytes(), &mode]);
    format!("{a:016x}{b:016x}")
}

/// The function offsets, flags and code stored under `key`, if a valid entry exists.
pub fn load(dir: &Path, key: &str) -> Option<(Vec<usize>, u64, Vec<u8>)> {
    let bytes = std::fs::read(dir.join(format!("{key}.bin"))).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let word = |i: usize| -> Option<u64> { Some(u64::from_le_bytes(rest.get(i * 8..i * 8 + 8)?.try_into().ok()?)) };
    let n = usize::try_from(word(0)?).ok()?;
    if n == 0 || n > 1 << 16 {
        return None;
    }
    let offsets: Vec<usize> = (0..n).map(|i| word(1 + i).map(|o| o as usize)).collect::<Option<_>>()?;
    let flags = word(1 + n)?;
    let len = usize::try_from(word(2 + n)?).ok()?;
    let sum = word(3 + n)?;
    let code = rest.get((4 + n) * 8..)?;
    // A damaged entry is ignored (and rewritten), never executed.
    if code.len() != len || offsets.iter().any(|&o| o >= len) || fnv(&[code]) != sum {
        return None;
    }
    Some((offsets, flags, code.to_vec()))
}

/// Stores an entry atomically (a temporary file renamed into place); failures only cost the cache.
pub fn store(dir: &Path, key: &str, offsets: &[usize], flags: u64, code: &[u8]) {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(MAGIC)?;
        tmp.write_all(&(offsets.len() as u64).to_le_bytes())?;
        for &o in offsets {
            tmp.write_all(&(o as u64).to_le_bytes())?;
        }
        tmp.write_all(&flags.to_le_bytes())?;
        tmp.write_all(&(code.len() as u64).to_le_bytes())?;
        tmp.write_all(&fnv(&[code]).to_le_bytes())?;
        tmp.write_all(code)?;
        tmp.persist(dir.join(format!("{key}.bin"))).map_err(|e| e.error)?;
        Ok(())
    };
    let _ = write();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_damage_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let code: Vec<u8> = (0..200u8).collect();
        store(dir.path(), "k", &[0, 64], 5, &code);
        assert_eq!(load(dir.path(), "k"), Some((vec![0, 64], 5, code.clone())));
        let path = dir.path().join("k.bin");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(load(dir.path(), "k"), None, "a flipped code byte");
        std::fs::write(&path, &bytes[..20]).unwrap();
        assert_eq!(load(dir.path(), "k"), None, "a truncated entry");
        assert_eq!(load(dir.path(), "missing"), None);
        let (a, b, a2): (Arc<str>, Arc<str>, Arc<str>) = ("a".into(), "b".into(), "a".into());
        assert_ne!(key(&a, "k", false, true, "x86"), key(&b, "k", false, true, "x86"));
        assert_ne!(key(&a, "k", false, true, "x86"), key(&a, "k", true, true, "x86"));
        assert_ne!(key(&a, "k", false, true, "x86"), key(&a, "k", false, false, "x86"));
        assert_eq!(key(&a, "k", false, true, "x86"), key(&a2, "k", false, true, "x86"), "equal texts, equal keys");
        let long: Arc<str> = "x".repeat(1001).into();
        let longer: Arc<str> = format!("{long}y").into();
        assert_ne!(source_digest(&long), source_digest(&longer), "a byte past the last whole word counts");
    }
}
