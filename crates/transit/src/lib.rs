//! The transit model of multithreaded throughput.
//!
//! A machine is a computation system (CS) and a memory system (MS) with `n` threads circulating between
//! them: each computes `Z` instructions, then waits for one memory request. The MS supplies `f(k)` requests
//! per unit of time with `k` threads in it (a roofline: slope `1/L`, ceiling `R`, knee δ); the CS demands
//! `g(x)` with `x = n − k` threads in it (slope `1/Z`, ceiling `M/Z`, knee π). Where supply meets demand is
//! the machine state: its height is the MS throughput, times `Z` the CS throughput, and which parts of the
//! curves cross names the bound (thread, memory, computation or capacity) and the directions that help.
//!
//! - [`model`]: the normalized model, its closed-form equilibrium, bounds and directions.
//! - [`sim`]: a cycle-by-cycle simulation of the same closed network, the reference for the tests.
//! - [`profile`]: machine profiles (TOML, documented in `PROFILES.md`), four built in from the paper.
//! - [`probe`]: measures this CPU for a profile.
//! - [`workload`]: Z and n from `lockstep run --json`, `lockstep analyze --json` or by hand.
//! - [`analysis`]: one machine and one workload in the profile's units, with what-if scenarios.
//! - [`svg`]: the transit figure.

pub mod analysis;
pub mod model;
pub mod probe;
pub mod profile;
pub mod sim;
pub mod svg;
pub mod workload;

pub use analysis::{Analysis, Scenario, WhatIf};
pub use model::{Bound, Direction, Equilibrium, Model, Param};
pub use profile::{InstructionKind, Profile, ProfileError};
pub use workload::{Resolved, Workload, WorkloadError};
