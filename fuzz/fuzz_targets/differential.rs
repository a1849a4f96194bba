//! Differential fuzzing of the execution engines: the fuzzer's bytes choose a launch shape (first byte) and
//! the choices of the random kernel generator (`conformance::random`, the rest), and the emulator and the JIT
//! must write the same outputs (any NaN equal to any NaN in float slots), neither may fail, and the JIT may
//! not refuse the kernel. A failure panics with the difference and the kernel's PTX.
#![no_main]

use std::cell::RefCell;

use conformance::random::{self, Config, Engines, Source};
use libfuzzer_sys::fuzz_target;

/// Inputs run on one pair of engines before they are replaced (the JIT keeps every kernel it compiled).
const REUSE: u32 = 256;

thread_local! {
    /// The engines and how many inputs they ran: the JIT's worker pool is reused across inputs.
    static ENGINES: RefCell<Option<(Engines, u32)>> = const { RefCell::new(None) };
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let config = Config::known_good();
    let mut src = Source::from_bytes(rest);
    let kernel = random::generate_from(&mut src, random::hash(data), &config);
    let shapes = random::shapes();
    let shape = shapes[usize::from(first) % shapes.len()];
    ENGINES.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.as_ref().is_some_and(|(_, runs)| *runs >= REUSE) {
            *cell = None;
        }
        let (engines, runs) = cell.get_or_insert_with(|| (Engines::new().expect("both the emulator and the JIT"), 0));
        *runs += 1;
        if let Err(failure) = random::check(&kernel, shape, engines) {
            panic!(
                "engines disagree (grid {:?}, block {:?}): {}\n{}",
                shape.grid,
                shape.block,
                failure.details(12),
                kernel.ptx()
            );
        }
    });
});
