//! Links the library as NVIDIA's JIT linker: soname `libnvJitLink.so.13`, with the version node of
//! `exports.map`.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=exports.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/exports.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libnvJitLink.so.13");
    // The library's own calls bind to its own functions: NVIDIA's libraries of the same names may be
    // loaded into the same process (Python packages load them from their wheels).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic");
}
