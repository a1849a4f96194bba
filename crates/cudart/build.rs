//! Links the library as CUDA's runtime: soname `libcudart.so.13`, with the version nodes of `exports.map`.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=exports.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/exports.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.13");
}
