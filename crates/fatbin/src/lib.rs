//! CUDA fatbinaries: the device code nvcc embeds in a host program.
//!
//! (Format notes: see the end of this comment, filled in below.)

mod compress;
mod container;
pub mod elf;
mod entry;
mod error;
mod read;
mod wrapper;

pub use container::{containers, parse, Containers, Fatbin, CONTAINER_MAGIC, CONTAINER_VERSION};
pub use entry::{flags, Compression, Entry, Kind, MAX_UNCOMPRESSED};
pub use error::{Error, ErrorKind, Structure};
pub use wrapper::{Wrapper, WRAPPER_MAGIC};
