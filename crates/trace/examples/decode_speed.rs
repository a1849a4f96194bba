//! Decoding speed of a trace's event streams, with nothing done per event but counting:
//!
//! ```text
//! cargo run --release -p trace --example decode_speed -- TRACE
//! ```

use std::time::Instant;

#[derive(Default)]
struct Count {
    blocks: u64,
    mem: u64,
    other: u64,
    addr_sum: u64,
}

impl trace::Visitor for Count {
    fn block(&mut self, _tb: u32, _from: u16, _first_insn: u32) {
        self.blocks += 1;
    }
    fn mem(&mut self, _insn: u16, _store: bool, _size_log2: u8, addr: u64) {
        self.mem += 1;
        self.addr_sum = self.addr_sum.wrapping_add(addr);
    }
    fn event(&mut self, _e: trace::Event) {
        self.other += 1;
    }
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: decode_speed TRACE");
    let t = trace::Trace::open(&path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let start = Instant::now();
    let mut c = Count::default();
    for s in 0..t.simt.len() as u32 {
        let mut events = t.simt_events(s).expect("stream");
        while events.drive(&mut c, 1 << 16).expect("decodes") {}
    }
    let s = start.elapsed().as_secs_f64();
    let n = c.blocks + c.mem + c.other;
    println!(
        "{s:.2} s: {} blocks, {} accesses, {} other events ({:.1} ns per event) [{}]",
        c.blocks,
        c.mem,
        c.other,
        s * 1e9 / n as f64,
        c.addr_sum
    );
}
