//! Kernel conformance suite (being written).
