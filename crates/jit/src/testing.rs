//! Helpers for the unit tests of the planning and translation passes.

use program::Program;

/// Decodes kernel `k(.param .u64 p, .param .u32 n)` whose body is `body` (declarations and instructions).
pub fn kernel(body: &str) -> Program {
    let src = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}\n"
    );
    let module = ir::compile(&src).unwrap_or_else(|d| panic!("{d:?}"));
    let f = module.function("k").expect("kernel");
    let shared = device::SharedLayout::for_kernel(&module, f);
    let loaded = device::LoadedModule { global_addresses: vec![None; module.globals.len()], module };
    program::decode_all(&loaded, f, &shared).expect("decodes").remove(&f).expect("kernel program")
}
