//! Execution errors, with the location a user needs: kernel, block, thread, PTX line and address.

use std::fmt;

use crate::launch::Dim3;

/// Where in the kernel something went wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub kernel: String,
    /// The function executing (the kernel or a device function it called).
    pub function: Option<String>,
    pub block: Option<Dim3>,
    pub thread: Option<Dim3>,
    /// 1-based line in the PTX text.
    pub line: Option<u32>,
    /// The instruction as PTX text.
    pub instruction: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}`", self.kernel)?;
        if let Some(func) = &self.function {
            if func != &self.kernel {
                write!(f, " in function `{func}`")?;
            }
        }
        if let Some(b) = self.block {
            write!(f, ", block {b}")?;
        }
        if let Some(t) = self.thread {
            write!(f, ", thread {t}")?;
        }
        if let Some(l) = self.line {
            write!(f, ", PTX line {l}")?;
        }
        if let Some(i) = &self.instruction {
            write!(f, " (`{i}`)")?;
        }
        Ok(())
    }
}

/// Which memory space an access was to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
    Param,
    Generic,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
            Space::Generic => "generic",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// An access outside the memory that space has.
    OutOfBounds {
        space: Space,
        address: u64,
        size: u32,
        detail: Option<String>,
    },
    Misaligned {
        space: Space,
        address: u64,
        size: u32,
    },
    ReadOnly {
        space: Space,
        address: u64,
    },
    /// `bar.sync` reached by only part of a CTA or of a warp.
    BarrierDivergence(String),
    /// `trap` or `brkpt` executed.
    Trap,
    /// A device-side `assert()` failed (`__assertfail`); the message names the expression, file, line and
    /// function.
    Assert(String),
    /// The kernel uses instructions this backend cannot execute (listed before it starts).
    Unsupported(Vec<String>),
    /// The launch itself is invalid (shape, arguments, shared memory size).
    InvalidLaunch(String),
    /// Too deep device-function recursion.
    StackOverflow(u32),
    /// An instruction a GPU refuses as it runs (`cudaErrorIllegalInstruction`), such as a tensor copy's box
    /// that the hardware cannot move.
    IllegalInstruction(String),
    /// Anything else the kernel did that has no defined meaning.
    Invalid(String),
}

/// A kernel failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecError {
    pub kind: ErrorKind,
    pub location: Box<Location>,
}

impl ExecError {
    pub fn new(kind: ErrorKind, location: Location) -> ExecError {
        ExecError { kind, location: Box::new(location) }
    }

    pub fn launch(kernel: &str, message: impl Into<String>) -> ExecError {
        ExecError {
            kind: ErrorKind::InvalidLaunch(message.into()),
            location: Box::new(Location { kernel: kernel.to_string(), ..Location::default() }),
        }
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::OutOfBounds { space, address, size, detail } => {
                // Size 0: an unchecked engine saw the fault, not the access (and maybe no address: u64::MAX).
                match size {
                    0 if *address == u64::MAX => write!(f, "out-of-bounds {space} access")?,
                    0 => write!(f, "out-of-bounds {space} access at {address:#x}")?,
                    _ => write!(f, "out-of-bounds {space} access of {size} bytes at {address:#x}")?,
                }
                if let Some(d) = detail {
                    write!(f, " ({d})")?;
                }
            }
            ErrorKind::Misaligned { space, address, size } => {
                write!(f, "misaligned {space} access of {size} bytes at {address:#x}")?
            }
            ErrorKind::ReadOnly { space, address } => write!(f, "store to read-only {space} memory at {address:#x}")?,
            ErrorKind::BarrierDivergence(d) => write!(f, "barrier divergence: {d}")?,
            ErrorKind::Trap => write!(f, "the kernel stopped at a `trap` or `brkpt` instruction")?,
            ErrorKind::Assert(m) => write!(f, "{m}")?,
            ErrorKind::Unsupported(list) => write_unsupported(f, list)?,
            ErrorKind::InvalidLaunch(m) => write!(f, "invalid launch: {m}")?,
            ErrorKind::StackOverflow(depth) => write!(f, "device-function calls nested deeper than {depth}")?,
            ErrorKind::IllegalInstruction(m) => write!(f, "illegal instruction: {m}")?,
            ErrorKind::Invalid(m) => write!(f, "{m}")?,
        }
        write!(f, "\n  at {}", self.location)
    }
}

impl std::error::Error for ExecError {}

/// At most this many kinds of unsupported instruction are spelled out; a tensor-core kernel has thousands.
const SHOWN_KINDS: usize = 8;

/// Lists unsupported instructions one kind at a time: the first of each kind (same opcode) in
/// full, with how many more there are, so that a kernel with thousands of them still reads in one screen.
fn write_unsupported(f: &mut fmt::Formatter<'_>, list: &[String]) -> fmt::Result {
    let mut kinds: Vec<(&str, &String, usize)> = Vec::new();
    for entry in list {
        let key = unsupported_kind(entry);
        match kinds.iter_mut().find(|(k, ..)| *k == key) {
            Some((.., n)) => *n += 1,
            None => kinds.push((key, entry, 1)),
        }
    }
    f.write_str("unsupported instructions: ")?;
    for (i, (_, first, n)) in kinds.iter().take(SHOWN_KINDS).enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        f.write_str(first)?;
        if *n > 1 {
            write!(f, " and {} more like it", n - 1)?;
        }
    }
    if kinds.len() > SHOWN_KINDS {
        let rest: usize = kinds[SHOWN_KINDS..].iter().map(|(.., n)| n).sum();
        write!(f, "; and {rest} more of {} other kinds", kinds.len() - SHOWN_KINDS)?;
    }
    Ok(())
}

/// The kind of an entry "PTX line N in `f`: `opcode operands` (why)": its opcode with all modifiers.
/// Entries of another shape are their own kind.
fn unsupported_kind(entry: &str) -> &str {
    let Some(start) = entry.find(": `").map(|i| i + 3) else { return entry };
    let text = &entry[start..];
    let text = text.strip_prefix('@').map_or(text, |t| t.split_once(' ').map_or(t, |(_, rest)| rest));
    text.split([' ', '`', ';']).next().unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsupported(list: Vec<String>) -> String {
        let e = ExecError::new(ErrorKind::Unsupported(list), Location { kernel: "k".into(), ..Default::default() });
        e.to_string()
    }

    #[test]
    fn unsupported_lists_each_kind_once_with_a_count() {
        let mut list = Vec::new();
        for line in 0..1000 {
            list.push(format!("PTX line {line} in `k`: `cp.async.cg.shared.global [%r1], [%rd1], 16;` (no)"));
            list.push(format!("PTX line {line} in `k`: `@%p1 cp.async.commit_group;` (no)"));
        }
        list.push("call to `f`, which has no body".into());
        let text = unsupported(list);
        assert_eq!(
            text,
            "unsupported instructions: PTX line 0 in `k`: `cp.async.cg.shared.global [%r1], [%rd1], 16;` (no) and \
             999 more like it; PTX line 0 in `k`: `@%p1 cp.async.commit_group;` (no) and 999 more like it; call to \
             `f`, which has no body\n  at kernel `k`"
        );
    }

    #[test]
    fn unsupported_names_at_most_eight_kinds() {
        let list: Vec<String> = (0..20).map(|i| format!("PTX line {i} in `k`: `op{i} %r1;` (no)")).collect();
        let text = unsupported(list);
        assert!(text.contains("`op7 %r1;`") && !text.contains("`op8"), "{text}");
        assert!(text.contains("and 12 more of 12 other kinds"), "{text}");
    }
}
