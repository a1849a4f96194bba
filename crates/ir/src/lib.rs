//! The kernel IR of lockstep.
//!
//! A [`Module`] holds module-scope variables and functions in typed arenas; a function [`Body`] holds
//! registers, variables, basic blocks and instructions, all addressed by `u32` ids. The pipeline is
//! [`compile`]: parse (the `ptx` crate) → [`lower()`] → [`verify()`]. [`Cfg`] gives a body's control-flow
//! graph to the generic analyses of the `graph` crate; [`print`] turns a module back into PTX text that
//! lowers to the same IR.

pub mod cfg;
pub mod dot;
pub mod liveness;
pub mod lower;
pub mod module;
pub mod operands;
pub mod print;
pub mod verify;

pub use cfg::Cfg;
pub use lower::lower;
pub use module::*;
pub use print::print;
pub use ptx::Diagnostic;
pub use verify::verify;

/// Parses, lowers and verifies PTX text: the front end in one call.
pub fn compile(source: &str) -> Result<Module, Vec<Diagnostic>> {
    // The IR keeps sections as text, so the parser only checks their entries without building them.
    let ast = ptx::parse_with(source, ptx::ParseOptions { section_entries: false })?;
    let module = lower(&ast, source)?;
    verify(&module)?;
    Ok(module)
}
