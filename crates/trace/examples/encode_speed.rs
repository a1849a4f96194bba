//! Measures the event encoder and chunk compression on a synthetic loop-shaped stream.
use std::time::Instant;

use trace::{ChunkEncoder, ChunkKind, EventEncoder};

fn main() {
    let iters = 8_000_000u64;
    let mut enc = EventEncoder::new();
    let mut buf = Vec::with_capacity(1 << 20);
    let mut chunks = ChunkEncoder::new(1);
    let mut raw_total = 0usize;
    let mut out_total = 0usize;
    let mut t_comp = 0f64;
    let t0 = Instant::now();
    let mut h: u32 = 2166136261;
    for i in 0..iters {
        h = (h ^ i as u32).wrapping_mul(16777619);
        let a = 0x4000_0000 + (i % 65536) * 4;
        enc.block(&mut buf, 17);
        enc.mem(&mut buf, 100, 4, false, 2, a);
        enc.mem(&mut buf, 100, 5, true, 2, a);
        if h & 1 != 0 {
            let b = 0x4000_0000 + ((i * 7) % 65536) * 4;
            enc.block(&mut buf, 18);
            enc.mem(&mut buf, 107, 1, false, 2, b);
            enc.mem(&mut buf, 107, 1, true, 2, b);
        } else {
            enc.block(&mut buf, 19);
        }
        if buf.len() >= 256 << 10 {
            let c0 = Instant::now();
            let c = chunks.encode(ChunkKind::Events, 1, 0, &buf);
            t_comp += c0.elapsed().as_secs_f64();
            raw_total += buf.len();
            out_total += c.len();
            buf.clear();
        }
    }
    let total = t0.elapsed().as_secs_f64();
    println!(
        "{} events: encode {:.3} s ({:.1} ns/event), compress {:.3} s, raw {} MB -> {} MB",
        iters * 5,
        total - t_comp,
        (total - t_comp) * 1e9 / (iters * 5) as f64,
        t_comp,
        raw_total >> 20,
        out_total >> 20
    );
}
