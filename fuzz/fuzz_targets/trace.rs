//! The trace reader on arbitrary bytes: opening, walking every event stream (through the iterator and through
//! bulk decoding, which must agree) and summarizing never panic; damage ends in an error or a shorter valid
//! prefix.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Counts what bulk decoding hands over.
#[derive(Default)]
struct Count(usize);

impl trace::Visitor for Count {
    fn block(&mut self, _: u32, _: u16) {
        self.0 += 1;
    }
    fn mem(&mut self, _: u16, _: bool, _: u8, _: u64) {
        self.0 += 1;
    }
    fn event(&mut self, _: trace::Event) {
        self.0 += 1;
    }
}

const MAX_EVENTS: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("lockstep-fuzz-trace-{}.bin", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(t) = trace::Trace::open(&path) {
        let streams: Vec<u32> = t.os_streams().collect();
        for os in streams {
            let mut events = 0;
            let mut failed = false;
            for event in t.os_events(os).take(MAX_EVENTS) {
                if event.is_err() {
                    failed = true;
                    break;
                }
                events += 1;
            }
            let mut count = Count::default();
            let mut stream = t.os_events(os);
            let mut drive_failed = false;
            while count.0 < MAX_EVENTS {
                match stream.drive(&mut count, 64) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(_) => {
                        drive_failed = true;
                        break;
                    }
                }
            }
            if events < MAX_EVENTS && count.0 < MAX_EVENTS {
                assert_eq!((count.0, drive_failed), (events, failed), "bulk decoding disagrees with the iterator");
            }
        }
        let _ = trace::summarize(&t, 10);
    }
});
