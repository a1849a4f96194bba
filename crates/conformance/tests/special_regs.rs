//! corpus/cuda/special_regs.cu: thread geometry in 3-D, every special register, and device printf.
//!
//! Registers whose values the PTX ISA leaves to the hardware or driver (`%clock*`, `%globaltimer*`,
//! `%pm0*`, `%envreg*`, `%warpid`, `%nwarpid`, `%smid`, `%nsmid`, `%gridid`) are checked only for the
//! properties the ISA guarantees (`%smid < %nsmid`, `%warpid < %nwarpid`, the clock never runs backwards
//! within a thread); everything else is compared exactly. printf output is compared line for line; the
//! order of lines from different blocks is not fixed by CUDA, so lines are compared as a sorted list
//! (each block's lines are also required in program order).

use conformance::prelude::*;
use conformance::Output;

const SRC: &str = "special_regs";

#[test]
fn thread_geometry() {
    let (grid, block) = ((2u32, 3u32, 2u32), (4u32, 2u32, 3u32));
    let (nx, ny, nz) = (grid.0 * block.0, grid.1 * block.1, grid.2 * block.2);
    let total = (nx * ny * nz) as usize;
    let mut out = vec![0u32; 12 * total];
    for bz in 0..grid.2 {
        for by in 0..grid.1 {
            for bx in 0..grid.0 {
                for tz in 0..block.2 {
                    for ty in 0..block.1 {
                        for tx in 0..block.0 {
                            let (gx, gy, gz) = (bx * block.0 + tx, by * block.1 + ty, bz * block.2 + tz);
                            let lin = ((gz * ny + gy) * nx + gx) as usize;
                            out[12 * lin..12 * lin + 12].copy_from_slice(&[
                                tx, ty, tz, bx, by, bz, block.0, block.1, block.2, grid.0, grid.1, grid.2,
                            ]);
                        }
                    }
                }
            }
        }
    }
    let args = vec![Arg::output::<u32>(12 * total)];
    check(
        SRC,
        Case::outputs("thread_geometry", Shape::new(grid, block), args, vec![Check::exact(0, "out", Values::U32(out))]),
    );
}

#[test]
fn special_registers() {
    let (grid, block, dyn_smem) = (2usize, 64usize, 48u32);
    let n = grid * block;
    let case = Case::new(
        "special_registers",
        Shape::linear(grid as u32, block as u32).shared(dyn_smem),
        vec![Arg::output::<u32>(24 * n), Arg::output::<u64>(4 * n)],
        move |ctx| {
            let cluster = ctx.arch() >= 90;
            let mut out = vec![0u32; 24 * n];
            let mut tols = vec![Tol::Exact; 24 * n];
            for i in 0..n {
                let lane = (i % block % 32) as u32;
                let row = &mut out[24 * i..24 * i + 24];
                row[0] = lane;
                row[5] = 1 << lane;
                row[6] = (1u32 << lane) - 1;
                row[7] = ((1u64 << (lane + 1)) - 1) as u32;
                row[8] = !(((1u64 << (lane + 1)) - 1) as u32);
                row[9] = !((1u32 << lane) - 1);
                row[11] = dyn_smem;
                row[17] = 1;
                if cluster {
                    // no cluster launch: every CTA is its own 1x1x1 cluster
                    row[18] = (i / block) as u32 + 1 + grid as u32 + 1;
                }
                let t = &mut tols[24 * i..24 * i + 24];
                for (k, why) in [
                    (1, "%warpid: hardware-dependent (checked against %nwarpid)"),
                    (2, "%nwarpid: hardware-dependent"),
                    (3, "%smid: hardware-dependent (checked against %nsmid)"),
                    (4, "%nsmid: hardware-dependent"),
                    (10, "%clock + %clock_hi"),
                    (12, "%total_smem_size: at least the dynamic size (checked), rounded by the hardware"),
                    (13, "%envreg*: set by the driver"),
                    (14, "%globaltimer"),
                    (15, "%pm0: a performance counter"),
                    (16, "clock()"),
                ] {
                    t[k] = Tol::Ignore(why);
                }
            }
            let props = Check::output("special register properties", move |o: &Output| {
                let out: Vec<u32> = from_bytes(o.buffer(0));
                let out64: Vec<u64> = from_bytes(o.buffer(1));
                for i in 0..n {
                    let r = &out[24 * i..24 * i + 24];
                    if r[1] >= r[2] || r[3] >= r[4] || r[12] < dyn_smem {
                        return Err(format!(
                            "thread {i}: warpid {} / nwarpid {}, smid {} / nsmid {}, total_smem_size {}",
                            r[1], r[2], r[3], r[4], r[12]
                        ));
                    }
                    if out64[4 * i + 3] < out64[4 * i] {
                        return Err(format!(
                            "thread {i}: clock64() went backwards ({} then {})",
                            out64[4 * i],
                            out64[4 * i + 3]
                        ));
                    }
                }
                Ok(())
            });
            Expect::Outputs(vec![Check::new(0, "out", Values::U32(out), Rule::Each(tols)), props])
        },
    );
    check(SRC, case);
}

#[test]
fn kernel_printf() {
    let (grid, block) = (2u32, 32u32);
    let input = [7i32, -3, 0, i32::MAX];
    let d = [1.25f64, -2.5, 1000000.5, 0.1];
    let args = vec![Arg::input(&input), Arg::input(&d)];
    let case = Case::new("kernel_printf", Shape::linear(grid, block), args, move |ctx| {
        let base = ctx.address(0);
        let mut blocks = Vec::new();
        for b in 0..grid {
            let mut lines = Vec::new();
            for i in 0..4 {
                lines.push(format!(
                    "tid={i} block=({b},0,0) v={} d={:.6} p=0x{:x} s=lockstep ll={}\n",
                    input[i],
                    d[i],
                    base + 4 * i as u64,
                    i64::from(input[i]) * 1_000_000_007
                ));
            }
            lines.push("no-arg message\n".to_string());
            blocks.push(lines);
        }
        Expect::Outputs(vec![Check::output("printf", move |o: &Output| {
            let text = String::from_utf8_lossy(&o.stdout).to_string();
            let mut got: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
            // each block's lines appear in program order (as a subsequence of the output)
            for lines in &blocks {
                let mut rest = got.iter();
                if !lines.iter().all(|l| rest.any(|g| g == l)) {
                    return Err(format!("a block's lines are missing or out of order:\n{text}"));
                }
            }
            let mut want: Vec<String> = blocks.concat();
            got.sort();
            want.sort();
            if got != want {
                return Err(format!(
                    "printf output differs:\n--- actual\n{text}--- expected (any block order)\n{}",
                    blocks.concat().concat()
                ));
            }
            Ok(())
        })])
    });
    check(SRC, case);
}
