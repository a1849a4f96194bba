//! `elect.sync d|p, membermask` (PTX ISA 9.7.13: one leader among the executing threads the member mask
//! names, the same for the same mask every time; `d` its lane id, `p` true in the leader only) on the
//! emulator and the JIT, against a model of the ISA's rule: the leader is the lowest executing lane of the mask.

mod common;

use common::{launch, Arg};
use device::Dim3;

/// The model: for each thread of `threads` (a CTA of one dimension), whether it executes the `elect` and its
/// member mask; returns each executing thread's (d, p), `None` for the others.
fn model(threads: usize, executes: impl Fn(usize) -> bool, mask: impl Fn(usize) -> u32) -> Vec<Option<(u32, bool)>> {
    (0..threads)
        .map(|t| {
            if !executes(t) {
                return None;
            }
            let warp = t / 32 * 32;
            let lanes = (0..32).filter(|&l| warp + l < threads && executes(warp + l) && mask(t) >> l & 1 == 1);
            let leader = lanes.min().expect("a thread's mask names itself") as u32;
            Some((leader, leader as usize == t % 32))
        })
        .collect()
}

/// Each thread: `%r2` its member mask (`masks[tid]`), lanes whose `skip[tid]` is non-zero exit first; the
/// others run `elect.sync %r3|%p2, %r2` and `elect.sync _|%p3, %r2` and write d, p, and the sink form's p
/// (or leave the words at 0xEEEEEEEE).
const KERNEL: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 masks, .param .u64 skip, .param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [masks];
    ld.param.u64 %rd2, [skip];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r4, [%rd5];
    setp.ne.u32 %p1, %r4, 0;
    @%p1 exit;
    add.s64 %rd6, %rd1, %rd4;
    ld.global.u32 %r2, [%rd6];
    elect.sync %r3|%p2, %r2;
    elect.sync _|%p3, %r2;
    selp.u32 %r5, 1, 0, %p2;
    selp.u32 %r6, 1, 0, %p3;
    mul.wide.u32 %rd7, %r1, 12;
    add.s64 %rd8, %rd3, %rd7;
    st.global.u32 [%rd8], %r3;
    st.global.u32 [%rd8+4], %r5;
    st.global.u32 [%rd8+8], %r6;
    ret;
}
"#;

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn check(threads: usize, skip: impl Fn(usize) -> bool, mask: impl Fn(usize) -> u32, what: &str) {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let want = model(threads, |t| !skip(t), &mask);
    let masks: Vec<u8> = (0..threads).flat_map(|t| mask(t).to_le_bytes()).collect();
    let skips: Vec<u8> = (0..threads).flat_map(|t| u32::from(skip(t)).to_le_bytes()).collect();
    let args = [Arg::Buf(masks), Arg::Buf(skips), Arg::Buf(vec![0xEE; 12 * threads])];
    let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(threads as u32, 1, 1));
    let mut engines: Vec<(&str, Box<dyn device::Backend>)> = vec![("emulator", Box::new(emu::Emulator::new()))];
    for vectorize in [true, false] {
        let jit = jit::Jit::new(jit::Options { threads: 1, vectorize, ..jit::Options::default() });
        engines.push((if vectorize { "JIT" } else { "JIT (no vector path)" }, Box::new(jit)));
    }
    for (name, mut engine) in engines {
        let (out, _) = launch(engine.as_mut(), &module, "k", grid, block, 0, &args).unwrap();
        let got = words(&out[2]);
        for (t, w) in want.iter().enumerate() {
            let g = &got[3 * t..3 * t + 3];
            match w {
                None => assert_eq!(g, [0xEEEE_EEEE; 3], "{what}: thread {t} exited, on the {name}"),
                Some((d, p)) => {
                    assert_eq!(
                        g,
                        [*d, u32::from(*p), u32::from(*p)],
                        "{what}: thread {t} (d, p, p of `_|p`) on the {name}"
                    )
                }
            }
        }
    }
}

#[test]
fn the_whole_warp_elects_lane_zero() {
    check(64, |_| false, |_| u32::MAX, "full warps, full mask");
}

#[test]
fn each_tile_elects_its_lowest_lane() {
    // Tiles of 8 lanes, each naming its own tile.
    check(96, |_| false, |t| 0xFF << (t % 32 / 8 * 8), "8-lane tiles");
    // Masks of odd and even lanes.
    check(32, |_| false, |t| if t % 2 == 1 { 0xAAAA_AAAA } else { 0x5555_5555 }, "odd and even lanes");
}

#[test]
fn exited_lanes_are_not_elected() {
    // Lanes 0-4 of each warp exit; the rest elect under the full mask: lane 5 leads.
    check(64, |t| t % 32 < 5, |_| u32::MAX, "lanes 0-4 exited");
    // A partial last warp (40 threads): its 8 lanes elect among themselves, lane 3 first after exits.
    check(40, |t| t == 32 || t == 33 || t == 34, |_| u32::MAX, "partial warp with exits");
}

/// nvcc's own `elect.sync` (cooperative groups' `invoke_one`, `cuda::ptx::elect_sync` of `__activemask()`
/// in a branch, with the `_|p` form): once per warp, and the lowest active lane of the branch leads.
#[test]
fn nvcc_elect_kernel() {
    let ptx = include_str!("fixtures/elect.sm_90.ptx");
    let module = ir::compile(ptx).unwrap_or_else(|d| panic!("{d:?}"));
    let threads = 80usize;
    let flags: Vec<u32> = (0..threads).map(|t| u32::from(t % 7 == 3 || t == 70)).collect();
    let warps = threads.div_ceil(32);
    let want_leaders: Vec<u32> = (0..warps)
        .map(|w| (w * 32..(w * 32 + 32).min(threads)).find(|&t| flags[t] != 0).map_or(u32::MAX, |t| t as u32))
        .collect();
    let args = [
        Arg::Buf(vec![0; 4]),
        Arg::Buf(vec![0xFF; 4 * warps]),
        Arg::Buf(flags.iter().flat_map(|f| f.to_le_bytes()).collect()),
    ];
    let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(threads as u32, 1, 1));
    let kernel = "_Z12elect_kernelPiS_PKi";
    let mut engines: Vec<(&str, Box<dyn device::Backend>)> = vec![("emulator", Box::new(emu::Emulator::new()))];
    engines.push(("JIT", Box::new(jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() }))));
    for (name, mut engine) in engines {
        let (out, _) = launch(engine.as_mut(), &module, kernel, grid, block, 0, &args).unwrap();
        assert_eq!(words(&out[0]), [warps as u32], "invoke_one runs once per warp on the {name}");
        assert_eq!(words(&out[1]), want_leaders, "leaders on the {name}");
    }
}

/// What `elect.sync` does not take is refused before the launch, naming the line.
#[test]
fn malformed_elect_is_refused() {
    for (form, why) in [("elect.sync %rd1|%p1, -1;", "32-bit `d`"), ("elect.sync %r1|%p1, %rd1;", "32-bit member mask")]
    {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n.reg .pred %p<2>;\n\
             .reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n{form}\nret;\n}}\n"
        );
        let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}"));
        let e = launch(&mut emu::Emulator::new(), &module, "k", Dim3::new(1, 1, 1), Dim3::new(32, 1, 1), 0, &[])
            .expect_err(form);
        assert!(e.contains("PTX line 9") && e.contains(why), "{form}: {e}");
    }
}

/// The sink form prints as PTX spells it (`ptxas` takes no `{_}|p`), so printed kernels stay valid.
#[test]
fn the_sink_form_prints_as_written() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let printed = ir::print(&module);
    assert!(printed.contains("elect.sync _|%p3, %r2;"), "{printed}");
}
