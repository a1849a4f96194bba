//! lockstep's kernel conformance suite.
//!
//! Every kernel of the fixture corpus (`corpus/cuda/*.cu`) runs with deterministic inputs on every PTX file
//! made from its source (all architectures, `O3`/`lineinfo`/`G`, plus `fastmath`, `rdc` and clang builds),
//! on every execution engine ([`runner::backends`]), and its outputs are compared with a CPU reference
//! written for it: exactly for integers, within a documented tolerance for floating point.
//!
//! - [`corpus`]: which PTX files a source has ([`corpus::variants`], [`corpus::for_each_variant`]) and a
//!   per-process cache of compiled modules.
//! - [`runner`]: the backend-agnostic runner ([`runner::run`]): load, allocate, fill parameters, launch, read
//!   back buffers, module variables and printf output.
//! - [`case`]: a [`case::Case`] (kernel, shape, arguments, reference) and the driver ([`case::check`]) that
//!   runs it on every variant and backend, recording skipped variants with their reason.
//! - [`compare`]: expected values and comparison rules ([`compare::Tol`]: exact, ulp, relative, absolute).
//! - [`fp`]: correctly rounded reference arithmetic in every rounding mode, f16/bf16 conversions.
//! - [`data`]: a seeded generator, edge values and little-endian encoding.
//! - [`math`]: reference implementations of functions the Rust standard library lacks (erf, lgamma).
//! - [`isa`]: the PTX ISA coverage table (`lockstep ptx isa`, `docs/ptx-isa.md`).
//! - [`random`]: random PTX kernels and the differential check between the emulator and the JIT
//!   (`tests/random_kernels.rs`, `fuzz/fuzz_targets/differential.rs`).

pub mod case;
pub mod compare;
pub mod corpus;
pub mod data;
pub mod fp;
pub mod isa;
pub mod math;
pub mod random;
pub mod runner;

pub use case::{check, check_all, run_case, Case, Ctx, Expect, Report, Status};
pub use compare::{Check, Rule, Target, Tol, Values};
pub use corpus::{for_each_variant, variants, Flavor, Variant};
pub use data::{from_bytes, to_bytes, Elem, Rng};
pub use device::{Dim3, ErrorKind, ExecError};
pub use runner::{backends, Arg, Output, Request, RunError, Shape};

/// Everything a test file needs.
pub mod prelude {
    pub use crate::case::{check, check_all, Case, Ctx, Expect};
    pub use crate::compare::{Check, Rule, Tol, Values};
    pub use crate::corpus::{Flavor, Variant};
    pub use crate::data::{edge_f32, edge_f64, from_bytes, to_bytes, Rng, EDGE_I32, EDGE_I64, EDGE_U32, EDGE_U64};
    pub use crate::fp::{self, Round};
    pub use crate::math::{self, Approx};
    pub use crate::runner::{Arg, Shape};
    pub use device::{Dim3, ErrorKind, ExecError};
}
