//! The errors of the runtime API. Each names what it is about (a device pointer, a kernel, a parameter by
//! index and name, a module variable) so that the message alone tells a user what to fix.

use std::fmt;

use device::{DevicePtr, ExecError};
use ir::Diagnostic;

use crate::ModuleId;

/// A device-memory operation of the host failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryError {
    /// The bytes `[ptr, ptr + len)` do not all lie in one allocation.
    OutOfBounds {
        ptr: DevicePtr,
        len: u64,
        /// Where `ptr` lies relative to the nearest allocation, when it is near one.
        detail: Option<String>,
    },
    /// `free` of an address where no allocation of this runtime starts.
    NotAnAllocation { ptr: DevicePtr, detail: Option<String> },
    /// `free` of a module variable; it lives as long as its module.
    ModuleVariable { ptr: DevicePtr, label: String },
    /// The allocation would take the runtime past its memory limit.
    OutOfMemory { requested: u64, allocated: u64, limit: u64 },
    /// A texture or surface object could not be created (an invalid description, texels outside the
    /// allocations) or destroyed (no such handle).
    Object { detail: String },
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryError::OutOfBounds { ptr, len, detail } => {
                write!(f, "{len} bytes at device pointer {ptr:#x} are not inside one allocation")?;
                if let Some(d) = detail {
                    write!(f, " ({d})")?;
                }
                Ok(())
            }
            MemoryError::NotAnAllocation { ptr, detail } => {
                write!(f, "cannot free device pointer {ptr:#x}: no allocation starts there")?;
                if let Some(d) = detail {
                    write!(f, " ({d})")?;
                }
                Ok(())
            }
            MemoryError::ModuleVariable { ptr, label } => {
                write!(f, "cannot free device pointer {ptr:#x}: it is the {label}, which lives as long as its module")
            }
            MemoryError::OutOfMemory { requested, allocated, limit } => write!(
                f,
                "cannot allocate {requested} bytes: {allocated} of the runtime's {limit}-byte device-memory limit are in use"
            ),
            MemoryError::Object { detail } => write!(f, "texture or surface object: {detail}"),
        }
    }
}

impl std::error::Error for MemoryError {}

/// PTX text did not load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The text does not parse, lower or verify.
    Compile {
        file_name: String,
        diagnostics: Vec<Diagnostic>,
        /// Every diagnostic rendered as `file:line:column: error: ...` with the source line and carets.
        rendered: String,
    },
    /// The module's variables could not be placed in device memory (e.g. an initializer that cannot be
    /// evaluated).
    Place { file_name: String, message: String },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Compile { file_name, diagnostics, rendered } => {
                write!(f, "{rendered}{file_name}: {} error(s)", diagnostics.len().max(1))
            }
            LoadError::Place { file_name, message } => write!(f, "{file_name}: cannot load the module: {message}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// A kernel could not be chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelError {
    UnknownModule(ModuleId),
    /// No function of that name.
    NotFound {
        name: String,
        kernels: Vec<String>,
    },
    /// The name is a device function (`.func`), not a kernel (`.entry`).
    NotAKernel {
        name: String,
        kernels: Vec<String>,
    },
    /// The kernel is declared in this module but defined elsewhere.
    NotDefined {
        name: String,
        kernels: Vec<String>,
    },
    /// No name was given and the module does not have exactly one kernel.
    Ambiguous {
        kernels: Vec<String>,
    },
}

fn list(kernels: &[String]) -> String {
    if kernels.is_empty() {
        "the module defines no kernel".to_string()
    } else {
        format!("kernels: {}", kernels.join(", "))
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::UnknownModule(m) => write!(f, "no module {m} is loaded"),
            KernelError::NotFound { name, kernels } => write!(f, "no kernel named `{name}`; {}", list(kernels)),
            KernelError::NotAKernel { name, kernels } => {
                write!(f, "`{name}` is a device function (.func), not a kernel (.entry); {}", list(kernels))
            }
            KernelError::NotDefined { name, kernels } => {
                write!(f, "kernel `{name}` is only declared in this module, not defined; {}", list(kernels))
            }
            KernelError::Ambiguous { kernels } if kernels.is_empty() => f.write_str("the module defines no kernel"),
            KernelError::Ambiguous { kernels } => {
                write!(f, "the module defines {} kernels; choose one: {}", kernels.len(), kernels.join(", "))
            }
        }
    }
}

impl std::error::Error for KernelError {}

/// A module-scope variable could not be found or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolError {
    UnknownModule(ModuleId),
    /// No module-scope variable of that name; `available` lists the `.global` and `.const` ones.
    NotFound {
        name: String,
        available: Vec<String>,
    },
    /// The variable exists but is not in device memory (`.shared`, `.local`, ...).
    NotInDeviceMemory {
        name: String,
        space: String,
    },
    /// More bytes than the variable holds.
    TooLarge {
        name: String,
        size: u64,
        given: u64,
    },
}

impl fmt::Display for SymbolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolError::UnknownModule(m) => write!(f, "no module {m} is loaded"),
            SymbolError::NotFound { name, available } if available.is_empty() => {
                write!(f, "no module-scope variable named `{name}`; the module has no .global or .const variables")
            }
            SymbolError::NotFound { name, available } => {
                write!(f, "no module-scope variable named `{name}`; .global/.const variables: {}", available.join(", "))
            }
            SymbolError::NotInDeviceMemory { name, space } => {
                write!(f, "`{name}` is a {space} variable; only .global and .const variables live in device memory")
            }
            SymbolError::TooLarge { name, size, given } => {
                write!(f, "`{name}` has {size} bytes, {given} bytes given")
            }
        }
    }
}

impl std::error::Error for SymbolError {}

/// A launch was refused or the kernel failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    UnknownModule(ModuleId),
    /// The kernel id is not a defined kernel of the module.
    NotAKernel(String),
    /// The grid/block shape or the shared-memory size is invalid.
    InvalidLaunch {
        kernel: String,
        message: String,
    },
    /// The number of arguments differs from the number of `.param`s.
    ArgumentCount {
        kernel: String,
        expected: usize,
        given: usize,
        params: Vec<String>,
    },
    /// One argument does not fit its parameter.
    Argument {
        kernel: String,
        index: usize,
        param: String,
        message: String,
    },
    /// The backend refused the kernel or the kernel failed while running.
    Exec(Box<ExecError>),
}

impl RunError {
    /// Whether the launch was refused for what the caller asked (shape, arguments), as opposed to the
    /// kernel failing (an [`ExecError`]). A command line reports the former as a usage error.
    pub fn is_usage_error(&self) -> bool {
        matches!(self, RunError::InvalidLaunch { .. } | RunError::ArgumentCount { .. } | RunError::Argument { .. })
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::UnknownModule(m) => write!(f, "no module {m} is loaded"),
            RunError::NotAKernel(m) => f.write_str(m),
            RunError::InvalidLaunch { kernel, message } => write!(f, "invalid launch of kernel `{kernel}`: {message}"),
            RunError::ArgumentCount { kernel, expected, given, params } => {
                write!(f, "kernel `{kernel}` takes {expected} argument(s), {given} given")?;
                if !params.is_empty() {
                    write!(f, "; parameters: {}", params.join(", "))?;
                }
                Ok(())
            }
            RunError::Argument { kernel, index, param, message } => {
                write!(f, "argument {index} of kernel `{kernel}` (parameter {param}): {message}")
            }
            RunError::Exec(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<ExecError> for RunError {
    fn from(e: ExecError) -> RunError {
        RunError::Exec(Box::new(e))
    }
}
