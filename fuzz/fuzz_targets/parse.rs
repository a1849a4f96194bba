//! Fuzz target: `ptx::parse_bytes` must never panic, and a module it returns must round-trip through the
//! printer (print → parse succeeds, gives an equivalent module, and prints identically).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = ptx::parse_bytes(data) else {
        return;
    };
    let printed = module.to_string();
    let reparsed = match ptx::parse(&printed) {
        Ok(m) => m,
        Err(diags) => panic!(
            "printed module does not parse:\n{}\n--- printed:\n{printed}",
            ptx::diagnostic::render_all(&diags, "<printed>", printed.as_bytes())
        ),
    };
    assert!(ptx::normalize::equivalent(&module, &reparsed), "round trip changed the module:\n{printed}");
    assert_eq!(reparsed.to_string(), printed, "printing is not a fixed point");
});
