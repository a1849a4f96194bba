//! corpus/cuda/tensor_core.cu: warp matrix instructions (`wmma`, `mma`, `ldmatrix`), which the emulator does
//! not implement. Where a target compiles them, the kernel must be refused up front with
//! `ErrorKind::Unsupported` naming each family with its PTX line. Below the architectures that have them the
//! kernels are empty: the optimised builds are skipped as empty bodies, the `-G` builds keep a shell that
//! runs and must leave memory untouched.

use conformance::prelude::*;

const SRC: &str = "tensor_core";

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| format!("`{n}` is not implemented")).collect()
}

/// `min_arch`: the first architecture whose build contains `families`.
fn case(
    kernel: &str,
    args: Vec<Arg>,
    min_arch: u32,
    families: &'static [&'static str],
    extra: Option<(u32, &'static [&'static str])>,
) -> Case {
    let initial: Vec<(usize, Vec<u8>)> = args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            Arg::Buffer(b) => Some((i, b.clone())),
            Arg::Zeroed(n) => Some((i, vec![0; *n])),
            _ => None,
        })
        .collect();
    Case::new(kernel, Shape::linear(1, 32), args, move |ctx| {
        if let Some((arch, list)) = extra {
            if ctx.arch() >= arch {
                return Expect::Unsupported(names(list));
            }
        }
        if ctx.arch() >= min_arch {
            return Expect::Unsupported(names(families));
        }
        Expect::Outputs(initial.iter().map(|(i, b)| Check::exact(*i, "untouched", Values::U8(b.clone()))).collect())
    })
}

#[test]
fn wmma_16x16x16_f16_f32() {
    let args = vec![Arg::input(&[0x3c00u16; 256]), Arg::input(&[0x3c00u16; 256]), Arg::output::<f32>(256)];
    check(SRC, case("wmma_16x16x16_f16_f32", args, 70, &["wmma"], None));
}

#[test]
fn wmma_16x16x16_f16_f16() {
    let args = vec![Arg::input(&[0x3c00u16; 256]), Arg::input(&[0x3c00u16; 256]), Arg::input(&[0u16; 256])];
    check(SRC, case("wmma_16x16x16_f16_f16", args, 70, &["wmma"], None));
}

#[test]
fn wmma_bf16() {
    let args = vec![Arg::input(&[0x3f80u16; 256]), Arg::input(&[0x3f80u16; 256]), Arg::output::<f32>(256)];
    check(SRC, case("wmma_bf16", args, 80, &["wmma"], None));
}

#[test]
fn mma_sync_m16n8k16() {
    let args = vec![Arg::input(&[0x3c00_3c00u32; 128]), Arg::input(&[0x3c00_3c00u32; 64]), Arg::output::<f32>(160)];
    // sm_75 has only the ldmatrix part, sm_80+ both
    check(SRC, case("mma_sync_m16n8k16", args, 75, &["ldmatrix"], Some((80, &["mma", "ldmatrix"]))));
}
