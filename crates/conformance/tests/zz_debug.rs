use conformance::prelude::*;
use conformance::runner::{run, Request};

#[test]
fn debug() {
    let path = std::env::var("PTX").unwrap();
    let kernel = std::env::var("KERNEL").unwrap();
    let m = conformance::corpus::compile(std::path::Path::new(&path)).unwrap();
    let mut f: Vec<f32> = (0..65).map(|i| i as f32 * 0.5 + 1.0).collect();
    f[3] = 2.0;
    let args = vec![Arg::input(&f), Arg::output::<u16>(64), Arg::output::<u16>(128), Arg::output::<f32>(192)];
    let mut emu = emu::Emulator::new();
    let req = Request { kernel: &kernel, shape: Shape::linear(1, 64), args: &args, symbol_writes: &[], symbol_reads: &[] };
    let out = run(&mut emu, &m, &req).unwrap();
    for (i, b) in out.buffers.iter().enumerate() {
        if let Some(b) = b { println!("arg {i}: {:?}", &b[..b.len().min(64)]); }
    }
}
