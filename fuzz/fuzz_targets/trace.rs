//! The trace reader on arbitrary bytes: opening, walking every event stream and summarizing never panic;
//! damage ends in an error or a shorter valid prefix.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("lockstep-fuzz-trace-{}.bin", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(t) = trace::Trace::open(&path) {
        let streams: Vec<u32> = t.os_streams().collect();
        for os in streams {
            for event in t.os_events(os).take(1 << 20) {
                if event.is_err() {
                    break;
                }
            }
        }
        let _ = trace::summarize(&t, 10);
    }
});
