//! The whole PTX front end on arbitrary bytes: parse, lower, verify. Never panics; a module that compiles
//! prints to PTX that compiles again to the same IR.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(module) = ir::compile(text) else { return };
    let printed = ir::print(&module);
    let again = match ir::compile(&printed) {
        Ok(m) => m,
        Err(d) => panic!("printed module does not compile: {}\n{printed}", d[0].message),
    };
    assert!(again.without_source_positions() == module.without_source_positions(), "round trip changed the IR");
});
